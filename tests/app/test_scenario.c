/* test_scenario.c - the scenario loader: the built-in default, --set,
 * XInclude'd catalogs, and where errors point. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "scenario.h"

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        *len = (size_t)n;
    }
    return buf;
}

static int load(const char *path, const char *const *sets, size_t n, scn_scenario *s,
                sim_error *err)
{
    sim_error_clear(err);
    return scn_load(path, sets, n, s, err);
}

static void test_default_matches_file(void)
{
    size_t file_len = 0, builtin_len = 0;
    char *file = read_file(DCSIM_SOURCE_DIR "/scenarios/examples/default.xml", &file_len);
    const char *builtin = scn_default_xml(&builtin_len);
    CHECK(file != NULL);
    CHECK_INT_EQ(builtin_len, file_len);
    CHECK(file && builtin_len == file_len && memcmp(file, builtin, file_len) == 0);
    free(file);
}

static void test_default_values(void)
{
    scn_scenario s;
    sim_error err;
    CHECK_INT_EQ(load(NULL, NULL, 0, &s, &err), 0);
    CHECK_STR_EQ(s.source, "default.xml");
    CHECK_INT_EQ(s.seed, 42);
    CHECK_STR_EQ(s.gpu.name, "H100-SXM");
    CHECK_INT_EQ(s.campaign.gpu_count, 16384);
    CHECK_INT_EQ(s.precision, PREC_BF16);
    CHECK_REL(s.campaign.gpu_peak_flops_per_s, 989.4e12, 1e-15);
    /* the architecture from the model catalog, and N of 6ND from it */
    CHECK(s.has_arch);
    CHECK_STR_EQ(s.arch.name, "llama3-405b");
    CHECK(s.arch.layers == 126 && s.arch.hidden == 16384 && s.arch.heads == 128 &&
          s.arch.kv_heads == 8 && s.arch.head_dim == 128 && s.arch.ffn_hidden == 53248 &&
          s.arch.vocab == 128256 && s.arch.seq_len == 8192 && s.arch.activation == ACT_SWIGLU);
    CHECK_REL(s.campaign.model_params, model_params_active(&s.arch), 1e-15);
    CHECK_NEAR(s.campaign.model_params / 1e9, 405, 1.0); /* "405B" */
    CHECK_REL(s.campaign.train_tokens, 15.6e12, 1e-15);
    /* tokens per iteration = global batch x sequence length */
    CHECK(s.has_parallelism);
    CHECK(s.par.tp == 8 && s.par.pp == 16 && s.par.dp == 128 && s.par.cp == 1);
    CHECK(s.par.first_stage_layers == 7 && s.par.last_stage_layers == 7);
    CHECK(s.par.sequence_parallel && s.par.zero_stage == 2);
    CHECK_REL(s.campaign.tokens_per_iteration, 2048.0 * 8192, 1e-15);
    /* no MFU: the step tier times the iteration on Meta's RoCE Clos */
    CHECK(s.campaign.mfu_frac == 0);
    CHECK(s.step_computes_iteration);
    CHECK(s.par.schedule == SCHEDULE_INTERLEAVED && s.par.vpp == 8);
    CHECK_REL(s.campaign.gpu_failure_rate_per_s, 1.973e-5 / 3600, 1e-15);
    CHECK_REL(s.campaign.restart_s, 600, 1e-15);
    CHECK_REL(s.campaign.checkpoint_interval_s, 900, 1e-15);
    CHECK_REL(s.campaign.checkpoint_write_s, 33, 1e-15);
    CHECK_REL(s.gpu.hbm_bytes, 80e9, 1e-15);
    CHECK_REL(s.gpu.tdp_w, 700, 1e-15);
    CHECK(s.resolved_xml && strstr(s.resolved_xml, "<checkpoint interval=\"15min\""));
    /* 6ND of the default equals the Llama 3 paper's 3.8e25 FLOPs to its two
     * printed digits (calibration.md 2b) */
    double flops = 6 * s.campaign.model_params * s.campaign.train_tokens;
    CHECK_NEAR(flops / 1e25, 3.8, 0.05);
    scn_scenario_free(&s);
}

static void test_set_overrides(void)
{
    /* 32,768 GPUs: DP 256, and a global batch of 4,096 keeps 16 micro-batches
     * per pipeline, a multiple of pp as the interleaved schedule needs (8,192
     * GPUs do not fit: DP 64 doubles the micro-batches stage 1 holds) */
    const char *sets[] = {"checkpoint/@interval=20min", "/dcsim/cluster/gpu/@count=32768",
                          "job/parallelism/@global-batch=4096",
                          "@seed=7", "checkpoint/@interval=25min",
                          "reliability/failure/@rate=0/h"};
    scn_scenario s;
    sim_error err;
    CHECK_INT_EQ(load(NULL, sets, 6, &s, &err), 0);
    CHECK_REL(s.campaign.checkpoint_interval_s, 1500, 1e-15); /* the last --set wins */
    CHECK_INT_EQ(s.campaign.gpu_count, 32768);
    CHECK_INT_EQ(s.par.dp, 256); /* derived: 32768 / (tp 8 x pp 16) */
    CHECK_INT_EQ(s.seed, 7);
    CHECK_INT_EQ(s.campaign.seed, 7);
    CHECK(s.campaign.gpu_failure_rate_per_s == 0);
    CHECK(s.resolved_xml && strstr(s.resolved_xml, "interval=\"25min\"") != NULL);
    CHECK(s.resolved_xml && strstr(s.resolved_xml, "seed=\"7\"") != NULL);
    scn_scenario_free(&s);

    /* setting mtbf where the scenario has a rate gives both: the error about
     * the element names the --set that caused it */
    const char *bad[] = {"reliability/failure/@mtbf=50000h"};
    CHECK_INT_EQ(load(NULL, bad, 1, &s, &err), SIM_ERR_INPUT);
    CHECK_CONTAINS(err.msg, "exactly one of rate");
    CHECK_STR_EQ(err.file, "--set reliability/failure/@mtbf=50000h");
}

static void test_xinclude_catalog(void)
{
    const char *main_xml = DCSIM_SOURCE_DIR "/tests/scenarios/xinclude/main.xml";
    scn_scenario s;
    sim_error err;
    CHECK_INT_EQ(load(main_xml, NULL, 0, &s, &err), 0);
    CHECK_STR_EQ(s.gpu.name, "LAB-GPU");
    CHECK_REL(s.campaign.gpu_peak_flops_per_s, 100e12, 1e-15);
    CHECK(s.campaign.gpu_failure_rate_per_s == 0); /* no <reliability>: no failures */
    CHECK(strstr(s.resolved_xml, "xi:include") == NULL);
    CHECK(strstr(s.resolved_xml, "LAB-GPU") != NULL);
    scn_scenario_free(&s);

    /* the included catalog replaces the built-in H100-SXM entry */
    const char *sets[] = {"cluster/gpu/@type=H100-SXM"};
    CHECK_INT_EQ(load(main_xml, sets, 1, &s, &err), 0);
    CHECK_REL(s.campaign.gpu_peak_flops_per_s, 900e12, 1e-15);
    scn_scenario_free(&s);

    /* an error inside the included file names that file and its line */
    CHECK_INT_EQ(load(DCSIM_SOURCE_DIR "/tests/scenarios/xinclude/bad-include.xml", NULL, 0, &s,
                      &err),
                 SIM_ERR_INPUT);
    CHECK_STR_EQ(err.file, DCSIM_SOURCE_DIR "/tests/scenarios/xinclude/bad-gpus.xml");
    CHECK_INT_EQ(err.line, 4);
    CHECK_CONTAINS(err.msg, "<peak rate=\"100\">: number without unit");
}

static void test_catalog_complete(void)
{
    /* every built-in GPU type loads and has a positive bf16 peak (a model
     * without parallelism: nothing to fit in memory) */
    const char *types[] = {"A100-SXM-40GB", "A100-SXM-80GB", "A800-SXM-80GB", "H100-SXM",
                           "H100-PCIe",     "H800-SXM",      "H200-SXM",      "H20",
                           "B200",          "MI300X",        "Ascend-910B",   "TPU-v5p"};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        char set[128];
        snprintf(set, sizeof set, "cluster/gpu/@type=%s", types[i]);
        const char *sets[] = {set};
        scn_scenario s;
        sim_error err;
        CHECK_INT_EQ(load(DCSIM_SOURCE_DIR "/tests/scenarios/params-only.xml", sets, 1, &s, &err),
                     0);
        CHECK_STR_EQ(s.gpu.name, types[i]);
        CHECK(s.gpu.peak_flops_per_s[PREC_BF16] > 0);
        CHECK(s.gpu.tdp_w > 0 || strcmp(types[i], "TPU-v5p") == 0); /* not published */
        scn_scenario_free(&s);
    }
    /* dense, not sparse: H100 fp8 is twice bf16, bf16 twice tf32 */
    const char *sets[] = {"cluster/gpu/@type=H100-SXM"};
    scn_scenario s;
    sim_error err;
    CHECK_INT_EQ(load(NULL, sets, 1, &s, &err), 0);
    CHECK_REL(s.gpu.peak_flops_per_s[PREC_FP8], 2 * s.gpu.peak_flops_per_s[PREC_BF16],
              1e-3);
    CHECK_REL(s.gpu.peak_flops_per_s[PREC_BF16], 2 * s.gpu.peak_flops_per_s[PREC_TF32],
              1e-3);
    scn_scenario_free(&s);
}

static void test_catalog_api(void)
{
    scn_catalog *cat = NULL;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(scn_catalog_load(NULL, &cat, &err), 0);
    CHECK_INT_EQ(scn_catalog_server_count(cat), 6);
    const hw_server *dgx = scn_catalog_server(cat, "DGX-H100");
    CHECK(dgx && dgx->gpus == 8 && dgx->nics == 8);
    CHECK(dgx && dgx->nic_bytes_per_s == 50e9); /* 400 Gb/s */
    CHECK(dgx && dgx->system_power_w == 10200);
    CHECK(dgx && strcmp(dgx->gpu, "H100-SXM") == 0);
    /* link technologies: rates per direction, NCCL-derived efficiencies */
    const hw_link *ndr = scn_catalog_link(cat, "ib-ndr");
    CHECK(ndr && ndr->bytes_per_s == 50e9 && ndr->kind == HW_LINK_INFINIBAND);
    CHECK(ndr && ndr->routing == HW_ROUTING_ADAPTIVE && ndr->has_in_network_reduction);
    CHECK(ndr && fabs(ndr->bytes_per_s * ndr->efficiency - 47e9) < 1); /* 46-48 GB/s busbw */
    const hw_link *roce = scn_catalog_link(cat, "roce-400g");
    CHECK(roce && roce->routing == HW_ROUTING_ECMP && !roce->has_in_network_reduction);
    /* not measured: the IB link of its line rate and NIC, recorded as a default */
    CHECK(roce && roce->efficiency == ndr->efficiency && roce->n_defaults == 1);
    CHECK(roce && roce->switch_latency_s > ndr->switch_latency_s);
    const hw_link *nvl4 = scn_catalog_link(cat, "nvlink4");
    CHECK(nvl4 && nvl4->bytes_per_s == 450e9 && fabs(nvl4->bytes_per_s * nvl4->efficiency - 369e9) < 1e9);
    CHECK(scn_catalog_link(cat, "ib-hdr") && scn_catalog_link(cat, "ib-xdr") &&
          scn_catalog_link(cat, "roce-200g") && scn_catalog_link(cat, "eth-800g") &&
          scn_catalog_link(cat, "nvlink3") && scn_catalog_link(cat, "nvlink5"));
    const hw_server *nvl = scn_catalog_server(cat, "GB200-NVL72");
    CHECK(nvl && nvl->gpus == 72);
    CHECK(scn_catalog_gpu(cat, "H100-SXM") && scn_catalog_model(cat, "llama3-405b"));
    CHECK(scn_catalog_gpu(cat, "H900") == NULL && scn_catalog_model(cat, "x") == NULL);
    /* the H100 GEMM ceiling: measured 794.5 / 989.4 over the 128/132 wave */
    const hw_gpu *h100 = scn_catalog_gpu(cat, "H100-SXM");
    CHECK_NEAR(h100->gemm_efficiency[PREC_BF16], 0.828, 1e-12);
    CHECK_NEAR(h100->gemm_efficiency[PREC_BF16] * (128.0 / 132), 794.5 / 989.4, 0.002);
    CHECK(h100->sms == 132 && h100->scaleup_domain == 8 && h100->scaleup_bytes_per_s == 450e9);
    char names[2048];
    scn_catalog_model_names(cat, names, sizeof names);
    CHECK_CONTAINS(names, "mixtral-8x7b");
    scn_catalog_free(cat);
    /* an extra catalog file adds entries; a scenario is not a catalog */
    CHECK_INT_EQ(scn_catalog_load(DCSIM_SOURCE_DIR "/tests/scenarios/xinclude/lab-gpus.xml", &cat,
                                  &err), 0);
    CHECK(scn_catalog_gpu(cat, "LAB-GPU") != NULL);
    /* memory efficiency by transfer size reaches the timing device */
    const hw_gpu *tiered = scn_catalog_gpu(cat, "TIERED-GPU");
    CHECK(tiered && tiered->n_mem_tiers == 3);
    compute_device dev;
    CHECK(tiered && hw_compute_device(tiered, PREC_BF16, &dev, &err) == 0);
    CHECK(compute_mem_efficiency(&dev, 4 * 1048576.0 - 1) == 0.25);
    CHECK(compute_mem_efficiency(&dev, 4 * 1048576.0) == 0.5);
    CHECK(compute_mem_efficiency(&dev, 1e9) == 1.0);
    /* without the attribute: calculon's table, unless the GPU has measured
     * kernels (models/kernel_table.c, issue 17): then the flat 0.90 its GEMM
     * fit assumed, and memory-bound ops from its measured kernel times */
    CHECK(hw_compute_device(scn_catalog_gpu(cat, "MI300X"), PREC_BF16, &dev, &err) == 0);
    CHECK(dev.n_mem_tiers == 4 && compute_mem_efficiency(&dev, 0.5e6) == 0.30 &&
          compute_mem_efficiency(&dev, 2e8) == 0.90);
    CHECK(hw_compute_device(scn_catalog_gpu(cat, "H200-SXM"), PREC_BF16, &dev, &err) == 0);
    CHECK(dev.n_mem_tiers == 0 && compute_mem_efficiency(&dev, 0.5e6) == 0.90 &&
          dev.mem_fused_efficiency > 0.8 && dev.mem_fused_efficiency < 0.9);
    CHECK_NEAR(scn_catalog_gpu(cat, "H100-SXM")->peak_flops_per_s[PREC_BF16], 900e12, 1);
    scn_catalog_free(cat);
    sim_error_clear(&err);
    CHECK(scn_catalog_load(DCSIM_SOURCE_DIR "/scenarios/examples/default.xml", &cat, &err) != 0);
    CHECK_CONTAINS(err.msg, "expected a catalog");
}

static void test_parallelism_and_fit(void)
{
    scn_scenario s;
    sim_error err;
    /* dp cannot be derived: the arithmetic is in the message */
    const char *odd[] = {"cluster/gpu/@count=8000"};
    CHECK_INT_EQ(load(NULL, odd, 1, &s, &err), SIM_ERR_INPUT);
    CHECK_CONTAINS(err.msg, "GPUs (8000) are not a multiple of tp x cp x pp = 8 x 1 x 16 = 128");
    /* heads not divisible by tp */
    const char *tp[] = {"job/parallelism/@tp=3", "cluster/gpu/@count=768"};
    CHECK_INT_EQ(load(NULL, tp, 2, &s, &err), SIM_ERR_INPUT);
    CHECK_CONTAINS(err.msg, "heads (128) must be a multiple of tp (3)");
    CHECK_STR_EQ(err.file, "--set job/parallelism/@tp=3"); /* the --set on that element */
    /* does not fit: ZeRO 1 leaves the fp32 main-gradient buffer unsharded
     * (12.75 GB on stage 1, where ZeRO 2 has 0.1) */
    const char *big[] = {"job/parallelism/@zero=1"};
    CHECK_INT_EQ(load(NULL, big, 1, &s, &err), SIM_ERR_INPUT);
    CHECK_CONTAINS(err.msg, "<parallelism>: does not fit: pipeline stage 1 needs");
    CHECK_CONTAINS(err.msg, "H100-SXM has 80.0 GB");
    /* ... unless the fit check is off (dcsim fit), and with full recompute it fits */
    CHECK_INT_EQ(scn_load_flags(NULL, big, 1, SCN_LOAD_NO_FIT_CHECK, &s, &err), 0);
    scn_scenario_free(&s);
    const char *recompute[] = {"job/parallelism/@zero=1", "job/parallelism/@recompute=full"};
    CHECK_INT_EQ(load(NULL, recompute, 2, &s, &err), 0);
    scn_scenario_free(&s);
    /* an unknown model lists the known ones */
    const char *model[] = {"job/model/@ref=llama9"};
    CHECK_INT_EQ(load(NULL, model, 1, &s, &err), SIM_ERR_INPUT);
    CHECK_CONTAINS(err.msg, "unknown model; known models: megatron-gpt-1.7b,");
    CHECK_CONTAINS(err.msg, "llama3-405b");
    /* a catalog model's attribute can be overridden in the scenario */
    const char *seq[] = {"job/model/@seq-len=4096", "job/parallelism/@global-batch=4096"};
    CHECK_INT_EQ(load(NULL, seq, 2, &s, &err), 0);
    CHECK_INT_EQ(s.arch.seq_len, 4096);
    CHECK_REL(s.campaign.tokens_per_iteration, 4096.0 * 4096, 1e-15);
    scn_scenario_free(&s);
}

static void test_error_locations(void)
{
    scn_scenario s;
    sim_error err;
    const char *sets[] = {"job/training/@tokens=-5T"};
    CHECK_INT_EQ(load(NULL, sets, 1, &s, &err), SIM_ERR_INPUT);
    CHECK_STR_EQ(err.file, "--set job/training/@tokens=-5T");
    CHECK_INT_EQ(err.line, 0);
    CHECK_STR_EQ(err.msg, "<training tokens=\"-5T\">: tokens must be positive");

    CHECK_INT_EQ(load(DCSIM_SOURCE_DIR "/tests/bad/negative_tokens.xml", NULL, 0, &s, &err),
                 SIM_ERR_INPUT);
    CHECK_INT_EQ(err.line, 9);
    CHECK_STR_EQ(err.msg, "<training tokens=\"-5T\">: tokens must be positive");
    char line[2048];
    CHECK_STR_EQ(sim_error_format(&err, line, sizeof line),
                 DCSIM_SOURCE_DIR "/tests/bad/negative_tokens.xml:9: error: <training "
                                  "tokens=\"-5T\">: tokens must be positive");

    CHECK_INT_EQ(load("/nonexistent/x.xml", NULL, 0, &s, &err), SIM_ERR_IO);
    CHECK_STR_EQ(err.file, "/nonexistent/x.xml");
    CHECK_CONTAINS(err.msg, "No such file");
}

/* <checkpoint size="auto" storage-write storage-read node-write
 * node-read>: the default job with its write-time replaced. Llama 3 405B
 * writes 405.9e9 x (2 + 12) bytes (5.68 TB); every one of the 2,048 nodes writes its
 * shard, so the nodes' bandwidth caps the storage's when it is lower. */
static void test_checkpoint_storage(void)
{
    size_t len = 0;
    const char *xml = scn_default_xml(&len);
    const char *from = strstr(xml, "write-time=\"33s\"");
    CHECK(from != NULL);
    if (!from)
        return;
    const char *storage[] = {"size=\"auto\" storage-write=\"2TB/s\" storage-read=\"7TB/s\"",
                             "size=\"auto\" storage-write=\"2TB/s\" storage-read=\"7TB/s\" "
                             "node-write=\"0.5GB/s\" node-read=\"10GB/s\""};
    for (int k = 0; k < 2; k++) {
        char path[] = "/tmp/dcsim-test-storage-XXXXXX";
        int fd = mkstemp(path);
        CHECK(fd >= 0);
        FILE *f = fdopen(fd, "w");
        fwrite(xml, 1, (size_t)(from - xml), f);
        fputs(storage[k], f);
        fputs(from + strlen("write-time=\"33s\""), f);
        fclose(f);
        scn_scenario s;
        sim_error err;
        CHECK_INT_EQ(load(path, NULL, 0, &s, &err), 0);
        remove(path);
        double bytes = s.campaign.model_params * 14;
        CHECK_REL(s.checkpoint_bytes, bytes, 1e-15);
        CHECK_NEAR(bytes / 1e12, 5.68, 0.01); /* docs/scenario.md */
        double write_bw = k ? 2048 * 0.5e9 : 2e12; /* 1.024 TB/s of nodes < 2 TB/s */
        CHECK_REL(s.campaign.checkpoint_write_s, bytes / write_bw, 1e-12);
        CHECK_REL(s.campaign.restart_s, 600 + bytes / 7e12, 1e-12); /* 20.5 TB/s of nodes > 7 */
        scn_scenario_free(&s);
    }
}

int main(void)
{
    test_default_matches_file();
    test_default_values();
    test_set_overrides();
    test_xinclude_catalog();
    test_catalog_complete();
    test_catalog_api();
    test_parallelism_and_fit();
    test_error_locations();
    test_checkpoint_storage();
    return check_report();
}
