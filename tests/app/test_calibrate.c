/* test_calibrate.c - the pieces of `dcsim calibrate`: the blocked GEMM
 * equals a naive one, the shared-memory all-reduces sum exactly, the
 * all-reduce model's closed forms, the fits recover the parameters of data
 * the models generated, the written catalog passes the schema and reads back,
 * and a --quick run end to end. Values are integers so FP32 sums are exact.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>
#include <libxml/parser.h>
#include <libxml/xmlschemas.h>

#include "calibrate.h"
#include "check.h"
#include "collective.h"
#include "compute.h"
#include "hardware.h"
#include "scenario.h"
#include "units.h"

/* the schema compiled into dcsim (sim/app/embedded.c) */
extern const unsigned char dcsim_xsd[];
extern const size_t dcsim_xsd_len;

static char tmpdir[256];

/* ---------------------------------------------------------------- kernels */

static void check_gemm(size_t m, size_t n, size_t k)
{
    float *a = malloc(m * k * sizeof *a), *b = malloc(k * n * sizeof *b);
    float *want = malloc(m * n * sizeof *want), *got = malloc(m * n * sizeof *got);
    CHECK(a && b && want && got);
    if (!(a && b && want && got))
        return;
    for (size_t i = 0; i < m * k; i++)
        a[i] = (float)((int)(i * 7 % 11) - 5);
    for (size_t i = 0; i < k * n; i++)
        b[i] = (float)((int)(i * 5 % 9) - 4);
    calib_gemm_naive(m, n, k, a, b, want);
    for (unsigned threads = 1; threads <= 2; threads++) {
        memset(got, 0xff, m * n * sizeof *got); /* NaNs: every element must be written */
        calib_gemm_own(m, n, k, a, b, got, threads);
        size_t bad = 0;
        for (size_t i = 0; i < m * n; i++)
            bad += got[i] != want[i];
        if (bad)
            fprintf(stderr, "gemm %zux%zux%zu on %u threads: %zu elements differ\n", m, n, k,
                    threads, bad);
        CHECK_INT_EQ(bad, 0);
    }
    free(a);
    free(b);
    free(want);
    free(got);
}

/* non-integer data: 1 and 2 threads give the same bits (one thread sums each element) */
static void check_gemm_thread_invariance(void)
{
    size_t m = 70, n = 45, k = 300;
    float *a = malloc(m * k * sizeof *a), *b = malloc(k * n * sizeof *b);
    float *c1 = malloc(m * n * sizeof *c1), *c2 = malloc(m * n * sizeof *c2);
    CHECK(a && b && c1 && c2);
    if (!(a && b && c1 && c2))
        return;
    for (size_t i = 0; i < m * k; i++)
        a[i] = 1.0f / (float)(i % 17 + 1);
    for (size_t i = 0; i < k * n; i++)
        b[i] = 0.1f * (float)(i % 13) - 0.55f;
    calib_gemm_own(m, n, k, a, b, c1, 1);
    calib_gemm_own(m, n, k, a, b, c2, 2);
    CHECK(memcmp(c1, c2, m * n * sizeof *c1) == 0);
    free(a);
    free(b);
    free(c1);
    free(c2);
}

static void check_allreduce(enum coll_algorithm alg, unsigned n, size_t count)
{
    float *bufs[8];
    for (unsigned r = 0; r < n; r++) {
        bufs[r] = malloc((count ? count : 1) * sizeof(float));
        for (size_t i = 0; i < count; i++)
            bufs[r][i] = (float)((r + 1) * 1000 + i % 97);
    }
    CHECK_INT_EQ(calib_allreduce(alg, bufs, count, n), 0);
    size_t bad = 0;
    for (unsigned r = 0; r < n; r++)
        for (size_t i = 0; i < count; i++) {
            float want = (float)(1000 * n * (n + 1) / 2 + n * (i % 97));
            bad += bufs[r][i] != want;
        }
    if (bad)
        fprintf(stderr, "all-reduce %s, %u threads, %zu floats: %zu wrong\n",
                coll_algorithm_name(alg), n, count, bad);
    CHECK_INT_EQ(bad, 0);
    for (unsigned r = 0; r < n; r++)
        free(bufs[r]);
}

/* ---------------------------------------------------------------- model */

static void check_collective_model(void)
{
    const double a = 2e-6, S = 1e6, B = 1e9;
    /* ring: 2(n-1) alpha + 2(n-1)/n S/B */
    CHECK_NEAR(coll_allreduce_time_s(COLL_RING, 1, S, a, B), 0.0, 0.0);
    CHECK_REL(coll_allreduce_time_s(COLL_RING, 2, S, a, B), 2 * a + S / B, 1e-15);
    CHECK_REL(coll_allreduce_time_s(COLL_RING, 4, S, a, B), 6 * a + 1.5 * S / B, 1e-15);
    CHECK_REL(coll_allreduce_time_s(COLL_RING, 8, S, a, B), 14 * a + 1.75 * S / B, 1e-15);
    /* binomial tree: 2 ceil(log2 n) (alpha + S/B) */
    CHECK_NEAR(coll_allreduce_time_s(COLL_TREE, 1, S, a, B), 0.0, 0.0);
    CHECK_REL(coll_allreduce_time_s(COLL_TREE, 2, S, a, B), 2 * (a + S / B), 1e-15);
    CHECK_REL(coll_allreduce_time_s(COLL_TREE, 3, S, a, B), 4 * (a + S / B), 1e-15);
    CHECK_REL(coll_allreduce_time_s(COLL_TREE, 4, S, a, B), 4 * (a + S / B), 1e-15);
    CHECK_REL(coll_allreduce_time_s(COLL_TREE, 5, S, a, B), 6 * (a + S / B), 1e-15);
    CHECK_REL(coll_allreduce_time_s(COLL_TREE, 1024, S, a, B), 20 * (a + S / B), 1e-15);
    /* nccl-tests bus bandwidth: S/t -> B n / (2(n-1)) for large S on a ring */
    CHECK_REL(1e12 / coll_allreduce_time_s(COLL_RING, 8, 1e12, 0.0, B), B * 8 / 14, 1e-15);
    /* zero bytes leave the latency, and more bandwidth is never slower */
    CHECK_REL(coll_allreduce_time_s(COLL_RING, 4, 0, a, B), 6 * a, 1e-15);
    for (unsigned n = 2; n <= 9; n++)
        for (int alg = 0; alg < COLL_ALGORITHM_COUNT; alg++)
            CHECK(coll_allreduce_time_s((enum coll_algorithm)alg, n, S, a, 2 * B) <
                  coll_allreduce_time_s((enum coll_algorithm)alg, n, S, a, B));
    /* bad input */
    CHECK(coll_allreduce_time_s(COLL_RING, 0, S, a, B) < 0);
    CHECK(coll_allreduce_time_s(COLL_RING, 2, -1, a, B) < 0);
    CHECK(coll_allreduce_time_s(COLL_RING, 2, S, -a, B) < 0);
    CHECK(coll_allreduce_time_s(COLL_RING, 2, S, a, 0) < 0);
    CHECK(coll_allreduce_time_s(COLL_RING, 2, NAN, a, B) < 0);
    CHECK(coll_allreduce_time_s((enum coll_algorithm)7, 2, S, a, B) < 0);
    enum coll_algorithm alg;
    CHECK(coll_algorithm_parse("tree", &alg) == 0 && alg == COLL_TREE);
    CHECK(coll_algorithm_parse("ring", &alg) == 0 && alg == COLL_RING);
    CHECK(coll_algorithm_parse("butterfly", &alg) == -1);
    CHECK_STR_EQ(coll_algorithm_name(COLL_TREE), "tree");
    CHECK_STR_EQ(coll_algorithm_name(-1), "?");
}

/* ---------------------------------------------------------------- fits */

static const double gemm_shapes[][3] = {
    {1, 1, 1},       {8, 8, 8},          {32, 32, 32},    {64, 64, 64},     {128, 128, 128},
    {256, 256, 256}, {512, 512, 512},    {1024, 1024, 1024}, {2048, 2048, 2048},
    {1024, 1024, 64}, {64, 1024, 1024},  {96, 160, 288},  {1000, 1000, 1000},
    {2048, 1, 2048}, {1, 2048, 2048},    {2048, 2048, 1}, {512, 512, 1},
};
#define N_SHAPES (sizeof gemm_shapes / sizeof gemm_shapes[0])

/* points made by the model itself; an optional outlier multiplies point 5 */
static void synth_gemm(const calib_gemm_model *truth, calib_gemm_point *pts, double outlier)
{
    for (size_t i = 0; i < N_SHAPES; i++) {
        double m = gemm_shapes[i][0], n = gemm_shapes[i][1], k = gemm_shapes[i][2];
        pts[i] = (calib_gemm_point){.m = m, .n = n, .k = k, .bytes = 4 * (m * k + k * n + m * n)};
        pts[i].time_s = calib_gemm_predict_s(truth, &pts[i]) * (i == 5 ? outlier : 1.0);
    }
}

static void check_gemm_fit(unsigned sms, unsigned tile_m, unsigned tile_n, double outlier)
{
    const calib_gemm_model truth = {.sms = sms, .tile_m = tile_m, .tile_n = tile_n,
                                    .flops_per_s = 1.3e11, .bytes_per_s = 8e9, .launch_s = 2e-6};
    calib_gemm_point pts[N_SHAPES];
    synth_gemm(&truth, pts, outlier);
    /* the synthetic set exercises all three terms of the model */
    int has_launch = 0, has_memory = 0, has_compute = 0;
    for (size_t i = 0; i < N_SHAPES; i++) {
        calib_gemm_model no_launch = truth;
        no_launch.launch_s = 0;
        calib_gemm_point no_bytes = pts[i];
        no_bytes.bytes = 0;
        double compute_s = calib_gemm_predict_s(&no_launch, &no_bytes);
        double memory_s = pts[i].bytes / truth.bytes_per_s;
        has_launch |= truth.launch_s > compute_s && truth.launch_s > memory_s;
        has_memory |= memory_s > compute_s;
        has_compute |= compute_s > memory_s;
    }
    CHECK(has_launch && has_memory && has_compute);

    calib_gemm_model fit = {.sms = sms, .tile_m = tile_m, .tile_n = tile_n};
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(calib_fit_gemm(pts, N_SHAPES, &fit, &err), 0);
    CHECK_REL(fit.flops_per_s, truth.flops_per_s, 1e-6);
    CHECK_REL(fit.bytes_per_s, truth.bytes_per_s, 1e-6);
    CHECK_REL(fit.launch_s, truth.launch_s, 1e-6);
    CHECK_INT_EQ(fit.sms, sms);
    CHECK_INT_EQ(fit.tile_m, tile_m);
    /* the device the fit describes is a valid compute_device */
    compute_device d;
    calib_gemm_device(&fit, &d);
    char why[256];
    CHECK_INT_EQ(compute_device_check(&d, why, sizeof why), 0);
}

static void check_gemm_fit_errors(void)
{
    calib_gemm_point pts[3] = {{1, 1, 1, 12, 1e-7}, {2, 2, 2, 48, 2e-7}, {4, 4, 4, 192, 0}};
    calib_gemm_model g = {.sms = 2, .tile_m = 4, .tile_n = 16};
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(calib_fit_gemm(pts, 2, &g, &err), SIM_ERR_INPUT);
    CHECK_CONTAINS(err.msg, "need at least 3");
    sim_error_clear(&err);
    CHECK_INT_EQ(calib_fit_gemm(pts, 3, &g, &err), SIM_ERR_INPUT); /* a zero time */
    CHECK_CONTAINS(err.msg, "not positive");
    CHECK(g.flops_per_s == 0 && g.launch_s == 0); /* untouched on failure */
}

static void check_allreduce_fit(enum coll_algorithm alg, unsigned ranks, double outlier)
{
    const double alpha = 3e-7, B = 1.1e10;
    calib_coll_point pts[9];
    size_t n = 0;
    for (double S = 1024; S <= 64.0 * 1024 * 1024; S *= 4, n++) {
        pts[n].bytes = S;
        pts[n].time_s = coll_allreduce_time_s(alg, ranks, S, alpha, B) * (n == 7 ? outlier : 1);
    }
    calib_coll_model c = {.alg = alg, .ranks = ranks};
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(calib_fit_allreduce(pts, n, &c, &err), 0);
    CHECK_REL(c.alpha_s, alpha, 1e-6);
    CHECK_REL(c.bytes_per_s, B, 1e-6);
    double meas[9], pred[9];
    for (size_t i = 0; i < n; i++) {
        meas[i] = pts[i].time_s;
        pred[i] = calib_coll_predict_s(&c, pts[i].bytes);
    }
    CHECK(calib_median_abs_error_pct(meas, pred, n) < 1e-4);
}

static void check_allreduce_fit_errors(void)
{
    calib_coll_point pts[3] = {{1024, 1e-6}, {4096, 2e-6}, {16384, 5e-6}};
    calib_coll_model c = {.alg = COLL_RING, .ranks = 1};
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(calib_fit_allreduce(pts, 3, &c, &err), SIM_ERR_INPUT);
    CHECK_CONTAINS(err.msg, "at least 2 ranks");
    /* pure latency: the bandwidth term cannot be fitted */
    calib_coll_point flat[3] = {{1024, 1e-6}, {4096, 1e-6}, {16384, 1e-6}};
    c.ranks = 2;
    sim_error_clear(&err);
    CHECK_INT_EQ(calib_fit_allreduce(flat, 3, &c, &err), SIM_ERR_INPUT);
    CHECK_CONTAINS(err.msg, "do not grow");
    /* a latency that would come out negative is clamped to 0 */
    calib_coll_point lin[3] = {{1e6, 0.9e-4}, {2e6, 1.9e-4}, {4e6, 3.9e-4}};
    sim_error_clear(&err);
    CHECK_INT_EQ(calib_fit_allreduce(lin, 3, &c, &err), 0);
    CHECK(c.alpha_s == 0.0 && c.bytes_per_s > 0);
}

static void check_median(void)
{
    double meas[4] = {1, 2, 4, 10}, pred[4] = {1.1, 2, 3, 10};
    /* |errors| 10, 0, 25, 0 -> median of {0, 0, 10, 25} = 5 */
    CHECK_NEAR(calib_median_abs_error_pct(meas, pred, 4), 5.0, 1e-12);
    CHECK_NEAR(calib_median_abs_error_pct(meas, pred, 3), 10.0, 1e-12);
    CHECK_NEAR(calib_median_abs_error_pct(meas, pred, 0), 0.0, 0.0);
}

/* ---------------------------------------------------------------- catalog */

static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        if (e->d_name[0] != '.')
            n++;
    if (d)
        closedir(d);
    return n;
}

/* validate path against the compiled-in schema; 0 when valid */
static int schema_validate(const char *path)
{
    xmlSchemaParserCtxtPtr pc = xmlSchemaNewMemParserCtxt((const char *)dcsim_xsd, (int)dcsim_xsd_len);
    xmlSchemaPtr schema = pc ? xmlSchemaParse(pc) : NULL;
    xmlSchemaValidCtxtPtr vc = schema ? xmlSchemaNewValidCtxt(schema) : NULL;
    int rc = vc ? xmlSchemaValidateFile(vc, path, 0) : -1;
    xmlSchemaFreeValidCtxt(vc);
    xmlSchemaFree(schema);
    xmlSchemaFreeParserCtxt(pc);
    return rc;
}

/* the attribute of the first element called name, parsed as a quantity */
static double read_quantity(xmlDocPtr doc, const char *name, const char *attr, enum sim_dim dim)
{
    for (xmlNodePtr gpu = xmlDocGetRootElement(doc)->children; gpu; gpu = gpu->next)
        for (xmlNodePtr c = gpu->children; c; c = c->next)
            if (c->type == XML_ELEMENT_NODE && xmlStrEqual(c->name, (const xmlChar *)name)) {
                xmlChar *v = xmlGetProp(c, (const xmlChar *)attr);
                double x = -1;
                char why[256];
                if (!v || sim_units_parse((const char *)v, dim, &x, why, sizeof why))
                    x = -1;
                xmlFree(v);
                return x;
            }
    return -1;
}

/* A scenario that takes the GPU type from the written catalog loads, and
 * the device dcsim builds from the entry times a GEMM as the fitted model
 * does without its tile (the catalog has no place for the tile). */
static void check_catalog_in_scenario(const char *catalog, const calib_gemm_model *g)
{
    char path[512];
    snprintf(path, sizeof path, "%s/scenario.xml", tmpdir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<dcsim version=\"1\" seed=\"1\" xmlns:xi=\"http://www.w3.org/2001/XInclude\">\n"
               "  <catalog><xi:include href=\"%s\"/></catalog>\n"
               "  <cluster><gpu type=\"cpu-calibrated\" count=\"8\"/></cluster>\n"
               "  <job>\n"
               "    <model name=\"small\" parameters=\"125M\"/>\n"
               "    <training tokens=\"1B\" tokens-per-iteration=\"1M\" precision=\"fp32\" mfu=\"50%%\"/>\n"
               "  </job>\n"
               "  <checkpoint interval=\"10min\" write-time=\"5s\"/>\n"
               "</dcsim>\n",
            catalog);
    fclose(f);
    scn_scenario scn;
    sim_error err;
    sim_error_clear(&err);
    int rc = scn_load(path, NULL, 0, &scn, &err);
    if (rc)
        fprintf(stderr, "scn_load: %s: %s\n", err.file, err.msg);
    CHECK_INT_EQ(rc, 0);
    if (rc == 0) {
        CHECK_STR_EQ(scn.gpu.name, "cpu-calibrated");
        CHECK_REL(scn.gpu.peak_flops_per_s[PREC_FP32], g->flops_per_s, 1e-5);
        compute_device d;
        char why[256];
        CHECK_INT_EQ(hw_compute_device(&scn.gpu, PREC_FP32, &d, why, sizeof why), 0);
        calib_gemm_model flat = *g;
        flat.sms = flat.tile_m = flat.tile_n = 0;
        for (size_t i = 0; i < N_SHAPES; i++) {
            double m = gemm_shapes[i][0], n = gemm_shapes[i][1], k = gemm_shapes[i][2];
            calib_gemm_point p = {.m = m, .n = n, .k = k, .bytes = 4 * (m * k + k * n + m * n)};
            CHECK_REL(compute_gemm_time_s(&d, PREC_FP32, m, n, k, p.bytes),
                      calib_gemm_predict_s(&flat, &p), 1e-5);
        }
        scn_scenario_free(&scn);
    }
    unlink(path);
}

static void check_catalog(void)
{
    char path[512], xsd[512], cmd[2048];
    snprintf(path, sizeof path, "%s/cpu.xml", tmpdir);
    const calib_gemm_model g = {.sms = 2, .tile_m = 4, .tile_n = 16, .flops_per_s = 1.2942e11,
                                .bytes_per_s = 7.8827e9, .launch_s = 7.2e-8};
    const calib_coll_model colls[2] = {{COLL_RING, 2, 3.4e-7, 1.1e10}, {COLL_TREE, 2, 3e-7, 1.3e10}};
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(calib_write_catalog(path, &g, 2, 16e9, "cblas", colls, 2, "host<&\"-->",
                                     "2025-01-02", &err), 0);
    CHECK_INT_EQ(count_files(tmpdir), 1); /* no temporary left behind */
    CHECK_INT_EQ(schema_validate(path), 0);

    /* the same check with xmllint where it is installed (Debian: libxml2-utils) */
    snprintf(xsd, sizeof xsd, "%s/dcsim.xsd", tmpdir);
    FILE *f = fopen(xsd, "w");
    CHECK(f && fwrite(dcsim_xsd, 1, dcsim_xsd_len, f) == dcsim_xsd_len);
    if (f)
        fclose(f);
    if (system("command -v xmllint >/dev/null 2>&1") == 0) {
        snprintf(cmd, sizeof cmd, "xmllint --noout --schema '%s' '%s' 2>/dev/null", xsd, path);
        CHECK_INT_EQ(system(cmd), 0);
    } else {
        printf("xmllint not installed: schema checked through libxml2 only\n");
    }
    unlink(xsd);

    /* values read back the way the scenario loader reads them */
    xmlDocPtr doc = xmlReadFile(path, NULL, XML_PARSE_NONET);
    CHECK(doc != NULL);
    if (doc) {
        CHECK_REL(read_quantity(doc, "peak", "rate", SIM_DIM_FLOP_RATE), g.flops_per_s, 1e-5);
        CHECK_REL(read_quantity(doc, "peak", "gemm-efficiency", SIM_DIM_FRACTION), 1.0, 1e-12);
        CHECK_REL(read_quantity(doc, "memory", "bandwidth", SIM_DIM_BANDWIDTH) * HW_MEM_EFFICIENCY,
                  g.bytes_per_s, 1e-5);
        CHECK_REL(read_quantity(doc, "compute", "launch-overhead", SIM_DIM_TIME), g.launch_s, 1e-5);
        CHECK_REL(read_quantity(doc, "memory", "capacity", SIM_DIM_DATA), 16e9, 1e-12);
        xmlNodePtr gpu = xmlDocGetRootElement(doc)->children;
        while (gpu && gpu->type != XML_ELEMENT_NODE)
            gpu = gpu->next;
        xmlChar *name = gpu ? xmlGetProp(gpu, (const xmlChar *)"name") : NULL;
        CHECK_STR_EQ((const char *)name, "cpu-calibrated");
        xmlFree(name);
        xmlFreeDoc(doc);
    }
    check_catalog_in_scenario(path, &g);
    unlink(path);

    /* an unwritable place: an error naming it, and nothing written */
    char bad[512];
    snprintf(bad, sizeof bad, "%s/no/such/dir/cpu.xml", tmpdir);
    sim_error_clear(&err);
    CHECK_INT_EQ(calib_write_catalog(bad, &g, 2, 0, "cblas", NULL, 0, "h", "d", &err), SIM_ERR_IO);
    CHECK_CONTAINS(err.file, "no/such/dir/cpu.xml");
    CHECK_INT_EQ(count_files(tmpdir), 0);
}

/* ---------------------------------------------------------------- command */

static int run_cmd(int argc, const char *const *args)
{
    char *argv[16];
    for (int i = 0; i < argc; i++)
        argv[i] = (char *)args[i];
    return cmd_calibrate(argc, argv);
}

static void check_command(void)
{
    CHECK_INT_EQ(run_cmd(1, (const char *const[]){"--help"}), 0);
    CHECK_INT_EQ(run_cmd(1, (const char *const[]){"--frobnicate"}), 2);
    CHECK_INT_EQ(run_cmd(2, (const char *const[]){"--threads", "0"}), 2);
    CHECK_INT_EQ(run_cmd(1, (const char *const[]){"--threads=x"}), 2);
    CHECK_INT_EQ(run_cmd(1, (const char *const[]){"--gemm=magic"}), 2);
    CHECK_INT_EQ(run_cmd(1, (const char *const[]){"--tile=64"}), 2);
    CHECK_INT_EQ(run_cmd(1, (const char *const[]){"--write=/no/such/dir/x.xml"}), 2);

    /* a short real run: own kernel, 2 threads (oversubscribed on 1 core is fine) */
    char path[512], opt[600];
    snprintf(path, sizeof path, "%s/quick.xml", tmpdir);
    snprintf(opt, sizeof opt, "--write=%s", path);
    fflush(stdout);
    CHECK_INT_EQ(run_cmd(4, (const char *const[]){"--quick", "--threads=2", "--gemm=own", opt}), 0);
    CHECK_INT_EQ(schema_validate(path), 0);
    unlink(path);
}

int main(void)
{
    gsl_set_error_handler_off();
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dcsim-test-calibrate-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }

    check_gemm(1, 1, 1);
    check_gemm(17, 33, 5);
    check_gemm(129, 65, 257);
    check_gemm(32, 32, 600); /* three k blocks, one tile */
    check_gemm_thread_invariance();

    for (int alg = 0; alg < COLL_ALGORITHM_COUNT; alg++)
        for (unsigned n = 1; n <= 5; n++) {
            check_allreduce((enum coll_algorithm)alg, n, 1001); /* not a multiple of n */
            check_allreduce((enum coll_algorithm)alg, n, 2);    /* fewer floats than ranks */
            check_allreduce((enum coll_algorithm)alg, n, 0);
        }
    float *none[1] = {NULL};
    CHECK_INT_EQ(calib_allreduce(COLL_RING, none, 0, 0), -1);
    CHECK_INT_EQ(calib_allreduce((enum coll_algorithm)9, none, 0, 1), -1);

    check_collective_model();

    check_gemm_fit(2, 4, 16, 1.0);
    check_gemm_fit(2, 32, 32, 1.0);
    check_gemm_fit(16, 64, 64, 1.0);
    check_gemm_fit(0, 0, 0, 1.0);
    check_gemm_fit(2, 4, 16, 3.0); /* one point 3x off: a least-absolute fit ignores it */
    check_gemm_fit_errors();
    for (int alg = 0; alg < COLL_ALGORITHM_COUNT; alg++) {
        check_allreduce_fit((enum coll_algorithm)alg, 2, 1.0);
        check_allreduce_fit((enum coll_algorithm)alg, 8, 1.0);
        check_allreduce_fit((enum coll_algorithm)alg, 2, 0.25);
    }
    check_allreduce_fit_errors();
    check_median();

    check_catalog();
    check_command();

    rmdir(tmpdir);
    return check_report();
}
