/* test_catalog_defaults.c - no silent defaults in the catalogs: every link
 * has an efficiency (measured, or a sibling's by a stated rule, recorded),
 * every GPU a memory curve and a launch overhead (its own or a recorded
 * rule's), no GPU a fitted end-to-end "sustained efficiency"; the measured
 * values match the tables they come from; and what a scenario uses that the
 * catalogs lacked appears under "defaults used" in its outputs (none when
 * everything is given). */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "hardware.h"
#include "scenario.h"
#include "summary.h"

static scn_catalog *cat;

static const hw_default *find_default(const hw_default *d, unsigned n, const char *what)
{
    for (unsigned i = 0; i < n; i++)
        if (!strcmp(d[i].what, what))
            return &d[i];
    return NULL;
}

/* link efficiencies: measured busbw / rate (calibration.md 3, components.md
 * 4.1), and the sibling rule for the unmeasured ones */
static void test_links(void)
{
    const char *names[] = {"ib-hdr", "ib-hdr100", "ib-ndr", "ib-xdr", "roce-100g", "roce-200g",
                           "roce-400g", "eth-800g", "nvlink3", "nvlink4", "nvlink5"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const hw_link *l = scn_catalog_link(cat, names[i]);
        CHECK(l && l->efficiency > 0 && l->efficiency <= 1);
    }
    /* calibration.md 3: 8x A100 AllReduce busbw 231.58 GB/s at 8 GB over 300 GB/s */
    CHECK_NEAR(scn_catalog_link(cat, "nvlink3")->efficiency, 231.58 / 300, 0.001);
    CHECK(scn_catalog_link(cat, "nvlink3")->n_defaults == 0);
    /* components.md 4.1: GB200 ring AllReduce busbw 679.61 GB/s at 8 GB over 900 */
    CHECK_NEAR(scn_catalog_link(cat, "nvlink5")->efficiency, 679.61 / 900, 0.001);
    /* HDR 24 of 25 GB/s, NDR 47 of 50 (calibration.md 3): measured, no default */
    const hw_link *hdr = scn_catalog_link(cat, "ib-hdr"), *ndr = scn_catalog_link(cat, "ib-ndr");
    CHECK(!find_default(hdr->defaults, hdr->n_defaults, "efficiency") &&
          !find_default(ndr->defaults, ndr->n_defaults, "efficiency"));
    /* switch power: the 51.2 Tb/s Ethernet links carry their ASIC's figure
     * (hardware.md 3.3, S) and half again; every other fabric link gets the
     * same 750 W by the recorded rule (no switch system power published, a
     * GAP); NVLink none (inside the node) */
    const char *sourced[] = {"roce-400g", "eth-800g"};
    for (size_t i = 0; i < 2; i++) {
        const hw_link *l = scn_catalog_link(cat, sourced[i]);
        CHECK(l->switch_power_w == 750 && !find_default(l->defaults, l->n_defaults, "switch-power"));
    }
    const char *ruled[] = {"ib-hdr", "ib-hdr100", "ib-ndr", "ib-xdr", "roce-100g", "roce-200g"};
    for (size_t i = 0; i < 6; i++) {
        const hw_link *l = scn_catalog_link(cat, ruled[i]);
        const hw_default *d = find_default(l->defaults, l->n_defaults, "switch-power");
        CHECK(l->switch_power_w == HW_SWITCH_POWER_RULE_W && d && !strcmp(d->value, "750W"));
    }
    CHECK(scn_catalog_link(cat, "nvlink4")->switch_power_w == 0);
    /* RoCE takes the IB link of its line rate and NIC, and says so */
    struct { const char *link, *from; double bytes_per_s; } sib[] = {
        {"roce-400g", "ib-ndr", 50e9}, {"roce-200g", "ib-hdr", 25e9},
        {"roce-100g", "ib-hdr", 12.5e9}, {"ib-hdr100", "ib-hdr", 12.5e9},
        {"ib-xdr", "ib-ndr", 100e9}, {"eth-800g", "ib-ndr", 100e9}};
    for (size_t i = 0; i < sizeof sib / sizeof sib[0]; i++) {
        const hw_link *l = scn_catalog_link(cat, sib[i].link);
        const hw_link *from = scn_catalog_link(cat, sib[i].from);
        CHECK(l->bytes_per_s == sib[i].bytes_per_s);
        CHECK(l->efficiency == from->efficiency);
        const hw_default *d = find_default(l->defaults, l->n_defaults, "efficiency");
        /* and the switch-power rule, except the two links that carry one */
        unsigned others = strcmp(sib[i].link, "roce-400g") && strcmp(sib[i].link, "eth-800g");
        CHECK(d && l->n_defaults == 1 + others);
        if (d) {
            CHECK_STR_EQ(d->part, sib[i].link);
            char as[80];
            snprintf(as, sizeof as, "as %s: ", sib[i].from);
            CHECK(strncmp(d->rule, as, strlen(as)) == 0);
        }
    }
    CHECK(scn_catalog_link(cat, "roce-100g")->kind == HW_LINK_ETHERNET);
    CHECK(scn_catalog_link(cat, "ib-hdr100")->kind == HW_LINK_INFINIBAND);
}

/* GPUs: measured values where the sheets have them, recorded rules elsewhere */
static void test_gpus(void)
{
    const char *names[] = {"A100-SXM-40GB", "A100-SXM-80GB", "A800-SXM-80GB", "H100-SXM",
                           "H100-PCIe",     "H800-SXM",      "H200-SXM",      "H20",
                           "B200",          "MI300X",        "Ascend-910B",   "TPU-v5p"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const hw_gpu *g = scn_catalog_gpu(cat, names[i]);
        CHECK(g && g->sustained_efficiency == 0); /* no end-to-end knob */
        CHECK(g && g->n_mem_tiers > 0 && g->launch_overhead_s > 0);
        /* the launch overhead is nobody's own: the recorded 3 us rule */
        const hw_default *d = g ? find_default(g->defaults, g->n_defaults, "launch-overhead")
                                : NULL;
        CHECK(d && g->launch_overhead_s == 3e-6);
    }
    /* components.md 3.1: BabelStream triad over the HBM peak, >= 100 MB */
    struct { const char *gpu; double triad; } hbm[] = {
        {"A100-SXM-80GB", 1.70e12}, {"H100-SXM", 2.97e12}, {"H200-SXM", 4.15e12}};
    for (size_t i = 0; i < 3; i++) {
        const hw_gpu *g = scn_catalog_gpu(cat, hbm[i].gpu);
        CHECK(g->n_mem_tiers == 4 && g->mem_tier_min_bytes[3] == 100e6);
        CHECK_NEAR(g->mem_tier_efficiency[3], hbm[i].triad / g->hbm_bytes_per_s, 0.001);
        CHECK(!find_default(g->defaults, g->n_defaults, "memory efficiency-by-size"));
    }
    /* components.md 3.2 as a check: Liger LayerNorm forward, FP32, 4096 x
     * 16384, 536.9 MB read + written: A100 0.3223 ms, H100 0.1848 ms; the
     * tier above predicts both within 3 % */
    const double ln_bytes = 4096.0 * 16384 * 4 * 2;
    struct { const char *gpu; double ms; } ln[] = {{"A100-SXM-80GB", 0.3223}, {"H100-SXM", 0.1848}};
    for (size_t i = 0; i < 2; i++) {
        const hw_gpu *g = scn_catalog_gpu(cat, ln[i].gpu);
        double t_ms = 1e3 * ln_bytes / (g->hbm_bytes_per_s * g->mem_tier_efficiency[3]);
        printf("LayerNorm 537 MB on %s: %.4f ms, measured %.4f (%+.1f %%)\n", ln[i].gpu, t_ms,
               ln[i].ms, 100 * (t_ms / ln[i].ms - 1));
        CHECK_REL(t_ms, ln[i].ms, 0.03);
    }
    /* components.md 1.1: H200 FP8 MAMF 1453.4 of 1979 (not corrected) */
    const hw_gpu *h200 = scn_catalog_gpu(cat, "H200-SXM");
    CHECK_NEAR(h200->gemm_efficiency[PREC_FP8], 1453.4 / 1979, 0.001);
    /* A800 from A100 80 GB (same die): GEMM and memory curve, recorded */
    const hw_gpu *a800 = scn_catalog_gpu(cat, "A800-SXM-80GB");
    const hw_gpu *a100 = scn_catalog_gpu(cat, "A100-SXM-80GB");
    CHECK(a800->gemm_efficiency[PREC_BF16] == a100->gemm_efficiency[PREC_BF16]);
    CHECK(a800->mem_tier_efficiency[3] == a100->mem_tier_efficiency[3]);
    const hw_default *d = find_default(a800->defaults, a800->n_defaults, "gemm-efficiency bf16");
    CHECK(d && d->precision == PREC_BF16 && strstr(d->rule, "as A100-SXM-80GB: ") == d->rule);
    CHECK(find_default(a800->defaults, a800->n_defaults, "memory efficiency-by-size"));
    /* a GPU without a measured curve gets calculon's table, recorded */
    const hw_gpu *mi = scn_catalog_gpu(cat, "MI300X");
    CHECK(mi->mem_tier_efficiency[0] == 0.30 && mi->mem_tier_efficiency[3] == 0.90);
    CHECK(find_default(mi->defaults, mi->n_defaults, "memory efficiency-by-size"));
    /* no rule for H100 PCIe: the step tier refuses it, naming what to add */
    compute_device dev;
    sim_error err;
    sim_error_clear(&err);
    CHECK(hw_compute_device(scn_catalog_gpu(cat, "H100-PCIe"), PREC_BF16, &dev, &err) != 0);
    CHECK_CONTAINS(err.msg, "gemm-efficiency");
}

/* "defaults used" in the JSON of a run (summary.h), as a list of records */
static int json_defaults(const scn_scenario *s)
{
    cJSON *o = cJSON_CreateObject();
    summary_defaults_json(o, s);
    cJSON *list = cJSON_GetObjectItem(o, "defaults_used");
    int n = cJSON_IsArray(list) ? cJSON_GetArraySize(list) : -1;
    cJSON_Delete(o);
    return n;
}

static void text_defaults(const scn_scenario *s, char *buf, size_t size)
{
    FILE *f = tmpfile();
    CHECK(f != NULL);
    if (!f)
        return;
    summary_print_defaults(f, "defaults   ", s);
    rewind(f);
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
}

static void test_scenarios(void)
{
    scn_scenario s;
    sim_error err;
    sim_error_clear(&err);
    char text[8192], line[4096];
    /* everything given: no defaults in any output */
    CHECK_INT_EQ(scn_load(DCSIM_SOURCE_DIR "/tests/scenarios/all-given.xml", NULL, 0, &s, &err), 0);
    hw_default d[SCN_MAX_DEFAULTS_USED];
    CHECK(scn_defaults_used(&s, d, SCN_MAX_DEFAULTS_USED) == 0);
    CHECK(json_defaults(&s) == 0);
    text_defaults(&s, text, sizeof text);
    CHECK_STR_EQ(text, "defaults   none: every value is the catalogs' own\n");
    scn_defaults_text(&s, line, sizeof line);
    CHECK_STR_EQ(line, "");
    scn_scenario_free(&s);
    /* an H800 on RoCE: the GPU's values at its precision and the link's */
    const char *sets[] = {"cluster/gpu/@type=H800-SXM", "cluster/fabric/@link=roce-400g"};
    CHECK_INT_EQ(scn_load(DCSIM_SOURCE_DIR "/tests/scenarios/all-given.xml", sets, 2, &s, &err),
                 0);
    size_t n = scn_defaults_used(&s, d, SCN_MAX_DEFAULTS_USED);
    /* gemm-efficiency bf16 (not fp16, fp8: other precisions), memory curve,
     * launch overhead, the RoCE efficiency */
    CHECK(n == 4);
    CHECK(json_defaults(&s) == (int)n);
    text_defaults(&s, text, sizeof text);
    CHECK_CONTAINS(text, "defaults   H800-SXM gemm-efficiency bf16 = 0.828 (as H100-SXM: ");
    CHECK_CONTAINS(text, "\n           roce-400g efficiency = 94% (as ib-ndr: ");
    CHECK(!strstr(text, "fp8"));
    scn_defaults_text(&s, line, sizeof line);
    CHECK_CONTAINS(line, "H800-SXM launch-overhead = 3us (");
    CHECK_CONTAINS(line, "; roce-400g efficiency = 94% (");
    scn_scenario_free(&s);
}

int main(void)
{
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(scn_catalog_load(NULL, &cat, &err), 0);
    if (cat) {
        test_links();
        test_gpus();
        scn_catalog_free(cat);
    }
    test_scenarios();
    return check_report();
}
