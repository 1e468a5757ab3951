/* calibrate.c - `dcsim calibrate` (contract in calibrate.h): options, the
 * GEMM and all-reduce sweeps run through the calibration library
 * (sim/calib: kernels, timing, cache tiers, fits, catalog writer), and the
 * tables and 'calibrate FAMILY key=value' lines printed from the fits.
 * Invariant: the all-reduce sweep runs before the GEMM sweep (OpenBLAS
 * worker threads spin after a call and would steal the OpenMP team's cores).
 */
#include "calibrate.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>
#include <omp.h>

#include "calib.h"
#include "cli.h"
#include "jsonout.h"

#define EXIT_INPUT 2
#define FLOAT_BYTES 4.0

typedef struct gemm_shape {
    unsigned m, n, k;
    int in_quick;   /* part of the --quick sweep */
} gemm_shape;

/* Tiny (launch-bound) to large (compute-bound) squares, skinny and
 * rectangular shapes that are cut into few tiles (quantisation), and
 * matrix-vector / outer products that are memory-bound. Shapes above the
 * backend's FLOP limit are skipped (run_gemm_sweep). */
static const gemm_shape gemm_shapes[] = {
    {1, 1, 1, 1},          {8, 8, 8, 1},          {16, 16, 16, 0},
    {32, 32, 32, 1},       {48, 48, 48, 0},       {64, 64, 64, 1},
    {96, 96, 96, 0},       {128, 128, 128, 1},    {192, 192, 192, 0},
    {256, 256, 256, 1},    {384, 384, 384, 0},    {512, 512, 512, 1},
    {768, 768, 768, 0},    {1024, 1024, 1024, 0}, {1536, 1536, 1536, 0},
    {2048, 2048, 2048, 0},
    /* rectangular and skinny */
    {1024, 1024, 64, 0},   {64, 1024, 1024, 0},   {1024, 64, 1024, 0},
    {2048, 32, 2048, 0},   {32, 2048, 2048, 0},   {512, 512, 16, 1},
    {256, 2048, 512, 0},   {2048, 256, 512, 0},   {128, 128, 4096, 0},
    {96, 160, 288, 1},     {1000, 1000, 1000, 0}, {520, 520, 520, 0},
    /* memory-bound: matrix-vector and outer products; the last two put a
     * second and third matrix-vector product above a 32 MiB L3 (the DRAM
     * tier, calib_gemm_tiers), so its bandwidth does not rest on one point */
    {2048, 1, 2048, 0},    {1, 2048, 2048, 0},    {512, 1, 512, 1},
    {4096, 1, 4096, 0},    {2048, 2048, 1, 0},    {512, 512, 1, 1},
    {3072, 1, 3072, 0},    {2048, 1, 8192, 0},
};
#define N_GEMM_SHAPES (sizeof gemm_shapes / sizeof gemm_shapes[0])

/* ================================================================ command */

const char calibrate_usage[] =
    "usage: dcsim calibrate [--quick] [--threads N] [--gemm=cblas|own] [--tile=MxN|none]\n"
    "                       [--write FILE.xml] [--json | --csv]\n"
    "\n"
    "Time real kernels on this machine's CPU and fit dcsim's timing models to\n"
    "them: a sweep of FP32 GEMM shapes (tiny to 2048) fitted to the GPU GEMM\n"
    "model (models/compute.h: launch + max(tile/wave-quantised compute,\n"
    "memory)), and an OpenMP shared-memory all-reduce across threads (ring and\n"
    "binomial tree, 1 KB to 64 MB per thread) fitted to the alpha-beta model\n"
    "(models/collective.h). Both models take one memory bandwidth per size tier,\n"
    "the tier thresholds from this CPU's cache sizes (L1d, L2, L3). Prints\n"
    "measured vs predicted time and the error per point, the fitted parameters,\n"
    "and lines 'calibrate FAMILY key=value'.\n"
    "Takes 10-20 s on 2 cores; times on a shared machine vary by 10-20 %, and\n"
    "each point is the median of interleaved rounds to damp that.\n"
    "\n"
    "  --quick          a smaller, faster sweep (under 2 s)\n"
    "  --threads N      threads to use (default: all cores); the CPU is read\n"
    "                   as a device with N SMs\n"
    "  --gemm=cblas     GEMM through CBLAS (OpenBLAS; the default when built in)\n"
    "  --gemm=own       dcsim's own cache-blocked OpenMP GEMM (32x32 tiles)\n"
    "  --tile=MxN       output tile of the model (default: 32x32, the own\n"
    "                   kernel's tile; 4x16 for cblas, OpenBLAS's Haswell/Zen\n"
    "                   SGEMM register tile); --tile=none: no quantisation\n"
    "  --write FILE.xml save the fit as a GPU catalog entry 'cpu-calibrated'\n"
    "                   (fp32 peak, memory bandwidth and efficiency-by-size,\n"
    "                   launch overhead) for a scenario <catalog>\n"
    "  --json           the caches, every point and the fits as one JSON object\n"
    "                   on stdout instead of the text (docs/json.md)\n"
    "  --csv            every measured point as CSV instead: family (gemm,\n"
    "                   allreduce_ring, allreduce_tree), m, n, k, bytes, tier,\n"
    "                   measured_s, predicted_s, error_pct, bound (GEMM only)\n"
    "\n"
    "exit status: 0 ok, 1 internal error, 2 bad usage or unwritable file\n";

/* The default model tile for CBLAS: OpenBLAS's SGEMM register tile on
 * Haswell and Zen (16x4 column-major, so 4 rows x 16 columns of our
 * row-major C). OpenBLAS splits a GEMM between threads in multiples of it, so
 * only GEMMs too small to split lose threads; with tiles this small the
 * quantisation is otherwise negligible, as it is on a CPU. */
#define CBLAS_TILE_M 4
#define CBLAS_TILE_N 16

typedef struct calib_options {
    int is_quick;
    unsigned threads;
    enum calib_gemm_backend backend;
    int has_tile;           /* --tile given */
    unsigned tile_m, tile_n; /* 0 = no quantisation */
    const char *write_path;
    int json, csv;
} calib_options;

static int parse_unsigned(const char *s, unsigned max, unsigned *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (!s[0] || s[0] < '0' || s[0] > '9' || *end || errno == ERANGE || v > max)
        return -1;
    *out = (unsigned)v;
    return 0;
}

/* 0 when a file can be created in path's folder */
static int folder_is_writable(const char *path)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!slash)
        return access(".", W_OK);
    size_t len = slash == path ? 1 : (size_t)(slash - path);
    if (len >= sizeof dir)
        return -1;
    memcpy(dir, path, len);
    dir[len] = '\0';
    return access(dir, W_OK);
}

static int opt_threads(void *ctx, const char *v)
{
    calib_options *o = ctx;
    if (parse_unsigned(v, 1024, &o->threads) || o->threads == 0)
        return cli_usage_error("calibrate", "--threads needs a whole number from 1 to 1024%s", "");
    return 0;
}

static int opt_gemm(void *ctx, const char *v)
{
    calib_options *o = ctx;
    if (strcmp(v, "own") == 0) {
        o->backend = CALIB_GEMM_OWN;
    } else if (strcmp(v, "cblas") == 0) {
        if (!calib_has_cblas())
            return cli_usage_error("calibrate", "--gemm=cblas: this dcsim was built without CBLAS "
                               "(install libopenblas-dev and rebuild); use --gemm=own%s", "");
        o->backend = CALIB_GEMM_CBLAS;
    } else {
        return cli_usage_error("calibrate", "--gemm %s: expected cblas or own", v);
    }
    return 0;
}

static int opt_tile(void *ctx, const char *v)
{
    calib_options *o = ctx;
    o->has_tile = 1;
    if (strcmp(v, "none") == 0) {
        o->tile_m = o->tile_n = 0;
        return 0;
    }
    char m_text[16];
    const char *x = strchr(v, 'x');
    size_t len = x ? (size_t)(x - v) : 0;
    if (!x || len == 0 || len >= sizeof m_text)
        return cli_usage_error("calibrate", "--tile %s: expected MxN (e.g. 64x64) or none", v);
    memcpy(m_text, v, len);
    m_text[len] = '\0';
    if (parse_unsigned(m_text, 65536, &o->tile_m) || parse_unsigned(x + 1, 65536, &o->tile_n) ||
        !o->tile_m || !o->tile_n)
        return cli_usage_error("calibrate", "--tile %s: expected MxN with M, N from 1 to 65536, or none",
                           v);
    return 0;
}

static int opt_write(void *ctx, const char *v)
{
    calib_options *o = ctx;
    if (!v[0])
        return cli_usage_error("calibrate", "--write needs a file name%s", "");
    o->write_path = v;
    if (folder_is_writable(v) != 0) /* say so now, not after the sweep */
        return cli_usage_error("calibrate", "--write %s: cannot create a file in its folder", v);
    return 0;
}

static const cli_option calib_option_table[] = {
    {"--quick", 0, CLI_FLAG, offsetof(calib_options, is_quick), NULL, NULL},
    {"--threads", 0, CLI_CALL, 0, opt_threads, .missing = "%s needs a whole number from 1 to 1024"},
    {"--gemm", 0, CLI_CALL, 0, opt_gemm, .missing = "%s needs cblas or own"},
    {"--tile", 0, CLI_CALL, 0, opt_tile, .missing = "%s needs MxN (e.g. 64x64) or none"},
    {"--write", 0, CLI_CALL, 0, opt_write, .missing = "%s needs a file name"},
    {"--json", 0, CLI_FLAG, offsetof(calib_options, json), NULL, NULL},
    {"--csv", 0, CLI_FLAG, offsetof(calib_options, csv), NULL, NULL},
    {"--help", 'h', CLI_HELP, 0, NULL, NULL},
    {0}};

/* Returns 0, CLI_DONE (usage printed) or the exit status of a usage error. */
static int parse_calib_options(int argc, char **argv, calib_options *o)
{
    static const cli_command cmd = {"calibrate", calibrate_usage, calib_option_table, 0,
                                    .too_many = "unexpected argument '%s'"};
    memset(o, 0, sizeof *o);
    o->backend = calib_has_cblas() ? CALIB_GEMM_CBLAS : CALIB_GEMM_OWN;
    int procs = omp_get_num_procs();
    o->threads = procs > 0 ? (unsigned)procs : 1;
    size_t n_args;
    int rc = cli_parse(&cmd, argc, argv, o, NULL, &n_args);
    if (rc)
        return rc;
    if (o->json && o->csv)
        return jsonout_one_format("calibrate");
    if (!o->has_tile) {
        o->tile_m = o->backend == CALIB_GEMM_OWN ? CALIB_OWN_TILE_M : CBLAS_TILE_M;
        o->tile_n = o->backend == CALIB_GEMM_OWN ? CALIB_OWN_TILE_N : CBLAS_TILE_N;
    }
    return 0;
}

/* "12.3 us" with a unit that keeps 3-4 significant digits readable */
static const char *format_time(double s, char *buf, size_t size)
{
    if (s < 1e-6)
        snprintf(buf, size, "%7.1f ns", s * 1e9);
    else if (s < 1e-3)
        snprintf(buf, size, "%7.2f us", s * 1e6);
    else if (s < 1.0)
        snprintf(buf, size, "%7.2f ms", s * 1e3);
    else
        snprintf(buf, size, "%7.3f s ", s);
    return buf;
}

static const char *format_bytes(double b, char *buf, size_t size)
{
    if (b >= 1 << 20)
        snprintf(buf, size, "%g MiB", b / (1 << 20));
    else if (b >= 1 << 10)
        snprintf(buf, size, "%g KiB", b / (1 << 10));
    else
        snprintf(buf, size, "%g B", b);
    return buf;
}

/* which term of the model decides the predicted time of p */
static const char *gemm_bound(const calib_gemm_model *g, const calib_gemm_point *p)
{
    double compute_s, memory_s;
    calib_gemm_terms(g, p, &compute_s, &memory_s);
    if (g->launch_s >= compute_s && g->launch_s >= memory_s)
        return "launch";
    return compute_s > memory_s ? "compute" : "memory";
}

/* all-reduce sizes per thread: 1 KiB to 64 MiB by 2 (to 4 MiB by 4 with --quick) */
#define N_COLL_SIZES 17

typedef struct coll_sweep {
    calib_coll_point pts[N_COLL_SIZES];
    size_t n_pts;
    calib_coll_model model;
    double median_pct;
} coll_sweep;

static int run_allreduce_sweep(const calib_options *o, const calib_budget *bud,
                               const calib_caches *caches, coll_sweep *sw, sim_error *err)
{
    size_t max_bytes = o->is_quick ? (size_t)4 << 20 : (size_t)64 << 20;
    size_t step = o->is_quick ? 4 : 2;
    /* all threads' buffers together stay under 1 GiB */
    while (max_bytes > 1024 && (double)max_bytes * o->threads > (double)(1u << 30))
        max_bytes /= step;
    calib_coll_job jobs[COLL_ALGORITHM_COUNT * N_COLL_SIZES];
    double time_s[COLL_ALGORITHM_COUNT * N_COLL_SIZES];
    size_t n_jobs = 0;
    for (int alg = 0; alg < COLL_ALGORITHM_COUNT; alg++)
        for (size_t bytes = 1024, i = 0; bytes <= max_bytes && i < N_COLL_SIZES;
             bytes *= step, i++)
            jobs[n_jobs++] = (calib_coll_job){.alg = (enum coll_algorithm)alg, .bytes = bytes};
    size_t bad = 0;
    int rc = calib_time_allreduces(jobs, n_jobs, o->threads, bud, time_s, &bad);
    if (rc == -2)
        return sim_error_set(err, SIM_ERR_INTERNAL, NULL, 0,
                             "all-reduce %s of %zu bytes over %u threads: wrong sum",
                             coll_algorithm_name(jobs[bad].alg), jobs[bad].bytes, o->threads);
    if (rc)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0,
                             "all-reduce over %u threads: out of memory or fewer OpenMP threads "
                             "granted", o->threads);
    for (int alg = 0; alg < COLL_ALGORITHM_COUNT; alg++) {
        coll_sweep *s = &sw[alg];
        s->n_pts = 0;
        s->model = (calib_coll_model){.alg = (enum coll_algorithm)alg, .ranks = o->threads};
        calib_coll_tiers(caches, o->threads, &s->model.bw);
        for (size_t j = 0; j < n_jobs; j++)
            if (jobs[j].alg == (enum coll_algorithm)alg)
                s->pts[s->n_pts++] =
                    (calib_coll_point){.bytes = (double)jobs[j].bytes, .time_s = time_s[j]};
        if (calib_fit_allreduce(s->pts, s->n_pts, &s->model, err))
            return err->code;
        double meas[N_COLL_SIZES], pred[N_COLL_SIZES];
        for (size_t i = 0; i < s->n_pts; i++) {
            meas[i] = s->pts[i].time_s;
            pred[i] = calib_coll_predict_s(&s->model, s->pts[i].bytes);
        }
        s->median_pct = calib_median_abs_error_pct(meas, pred, s->n_pts);
    }
    return 0;
}

static int run_gemm_sweep(const calib_options *o, const calib_budget *bud, calib_gemm_point *pts,
                          size_t *n_pts, sim_error *err)
{
    /* the own kernel is some 5x slower than OpenBLAS: stop it at 1024^3 */
    double max_flops = o->is_quick ? 2.0 * 512 * 512 * 512
                     : o->backend == CALIB_GEMM_OWN ? 2.0 * 1024 * 1024 * 1024 : 2.0 * 2048 * 2048 * 2048;
    calib_gemm_job jobs[N_GEMM_SHAPES];
    double time_s[N_GEMM_SHAPES];
    size_t n_jobs = 0;
    for (size_t i = 0; i < N_GEMM_SHAPES; i++) {
        const gemm_shape *sh = &gemm_shapes[i];
        if ((o->is_quick && !sh->in_quick) || 2.0 * sh->m * sh->n * sh->k > max_flops)
            continue;
        jobs[n_jobs++] = (calib_gemm_job){.m = sh->m, .n = sh->n, .k = sh->k};
    }
    if (calib_time_gemms(o->backend, jobs, n_jobs, o->threads, bud, time_s))
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "GEMM sweep: out of memory");
    for (size_t j = 0; j < n_jobs; j++) {
        double m = (double)jobs[j].m, n = (double)jobs[j].n, k = (double)jobs[j].k;
        pts[j] = (calib_gemm_point){
            .m = m, .n = n, .k = k, .bytes = FLOAT_BYTES * (m * k + k * n + m * n),
            .time_s = time_s[j]};
    }
    *n_pts = n_jobs;
    return 0;
}

/* |error| median and max of g over pts, in percent */
static void gemm_errors(const calib_gemm_model *g, const calib_gemm_point *pts, size_t n_pts,
                        double *median_pct, double *max_pct)
{
    double meas[N_GEMM_SHAPES], pred[N_GEMM_SHAPES];
    *max_pct = 0.0;
    for (size_t i = 0; i < n_pts; i++) {
        meas[i] = pts[i].time_s;
        pred[i] = calib_gemm_predict_s(g, &pts[i]);
        *max_pct = fmax(*max_pct, 100.0 * fabs(pred[i] - meas[i]) / meas[i]);
    }
    *median_pct = calib_median_abs_error_pct(meas, pred, n_pts);
}

/* the number of tiers with a bandwidth of their own */
static unsigned n_own_tiers(const unsigned *tier_from, unsigned n_tiers)
{
    unsigned n = 0;
    for (unsigned t = 0; t < n_tiers; t++)
        n += tier_from[t] == t;
    return n;
}

static void print_caches(const calib_caches *c)
{
    char b1[32], b2[32], b3[32];
    printf("caches of cpu0: L1d %s (%s), L2 %s (%s) per core, L3 %s (%s)\n",
           format_bytes(c->l1d_bytes, b1, sizeof b1), c->source[0],
           format_bytes(c->l2_bytes, b2, sizeof b2), c->source[1],
           format_bytes(c->l3_bytes, b3, sizeof b3), c->source[2]);
    printf("calibrate caches l1d_bytes=%.0f l2_bytes=%.0f l3_bytes=%.0f source=%s,%s,%s\n\n",
           c->l1d_bytes, c->l2_bytes, c->l3_bytes, c->source[0], c->source[1], c->source[2]);
}

/* a kept GEMM fit and the other method's, for the report */
typedef struct gemm_result {
    calib_gemm_model g;
    enum calib_fit_method method;
    double median_pct, max_pct;
    double other_median_pct, other_max_pct;
} gemm_result;

static const char *method_name(enum calib_fit_method m)
{
    return m == CALIB_FIT_LSQ ? "lsq" : "lad";
}

static void print_gemm(const calib_options *o, const calib_gemm_point *pts, size_t n_pts,
                       const gemm_result *res)
{
    const calib_gemm_model *g = &res->g;
    char t1[32], t2[32], b1[32], b2[32];
    char impl_buf[256];
    const char *impl = "dcsim's blocked OpenMP kernel";
    if (o->backend == CALIB_GEMM_CBLAS) {
        snprintf(impl_buf, sizeof impl_buf, "cblas_sgemm (%s)", calib_blas_config());
        impl = impl_buf;
    }
    printf("GEMM: FP32 C = A.B (row-major, beta 0) via %s, %u threads\n", impl, o->threads);
    printf("  %6s %6s %6s  %10s  %4s  %11s  %11s  %7s  %s\n", "m", "n", "k", "bytes", "tier",
           "measured", "predicted", "error", "bound");
    for (size_t i = 0; i < n_pts; i++) {
        const calib_gemm_point *p = &pts[i];
        double pred = calib_gemm_predict_s(g, p);
        printf("  %6.0f %6.0f %6.0f  %10s  %4u  %s  %s  %+6.1f%%  %s\n", p->m, p->n, p->k,
               format_bytes(p->bytes, b1, sizeof b1), calib_gemm_tier(g, p->bytes),
               format_time(p->time_s, t1, sizeof t1), format_time(pred, t2, sizeof t2),
               100.0 * (pred - p->time_s) / p->time_s, gemm_bound(g, p));
    }
    if (g->tile_m)
        printf("fitted GEMM model (compute_gemm_time_s; sms = %u threads, ctas_per_sm = 1, "
               "tile %ux%u;\n", g->sms, g->tile_m, g->tile_n);
    else
        printf("fitted GEMM model (compute_gemm_time_s; sms = 0: no tile or wave quantisation;\n");
    printf("  %s):\n", res->method == CALIB_FIT_LSQ ? "least sum of log(predicted/measured)^2"
                                                    : "least sum of |log(predicted/measured)|");
    printf("  FP32 rate (peak x gemm_efficiency)       %10.2f GFLOP/s\n", g->flops_per_s / 1e9);
    printf("  launch overhead per call                 %10.3f us\n", g->launch_s * 1e6);
    printf("  memory bandwidth (bw x mem_efficiency) by the GEMM's bytes 4 (m k + k n + m n),\n"
           "  tiers at 0, %u x L1d, %u x L2, L3:\n", o->threads, o->threads);
    printf("    %4s  %10s  %10s  %6s  %12s\n", "tier", "from", "GB/s", "points", "memory-bound");
    for (unsigned t = 0; t < g->n_tiers; t++) {
        size_t n = 0, n_mem = 0;
        for (size_t i = 0; i < n_pts; i++)
            if (calib_gemm_tier(g, pts[i].bytes) == t) {
                n++;
                n_mem += calib_gemm_is_memory_bound(g, &pts[i]);
            }
        printf("    %4u  %10s  %10.2f  %6zu  %12zu", t,
               format_bytes(g->tier_min_bytes[t], b2, sizeof b2), g->tier_bytes_per_s[t] / 1e9,
               n, n_mem);
        if (g->tier_from[t] != t)
            printf("  tier %u's value: no memory-bound point of its own", g->tier_from[t]);
        printf("\n");
    }
    printf("  |error| median %.1f %%, max %.1f %% over %zu shapes, %u parameters fitted;\n"
           "  median by bound:", res->median_pct, res->max_pct, n_pts,
           2 + n_own_tiers(g->tier_from, g->n_tiers));
    static const char *const bounds[] = {"launch", "compute", "memory"};
    for (size_t b = 0; b < 3; b++) {
        double meas[N_GEMM_SHAPES], pred[N_GEMM_SHAPES];
        size_t n = 0;
        for (size_t i = 0; i < n_pts; i++)
            if (strcmp(gemm_bound(g, &pts[i]), bounds[b]) == 0) {
                meas[n] = pts[i].time_s;
                pred[n++] = calib_gemm_predict_s(g, &pts[i]);
            }
        if (n)
            printf(" %s %.1f %% (%zu)", bounds[b], calib_median_abs_error_pct(meas, pred, n), n);
    }
    printf("\n");
    if (res->other_median_pct >= 0)
        printf("  the %s fit instead: |error| median %.1f %%, max %.1f %% (not kept)\n",
               res->method == CALIB_FIT_LSQ ? "least-absolute (log)" : "least-squares (log)",
               res->other_median_pct, res->other_max_pct);
    compute_device d;
    calib_gemm_device(g, &d);
    printf("calibrate gemm backend=%s threads=%u tile_m=%u tile_n=%u points=%zu\n",
           calib_backend_name(o->backend), o->threads, g->tile_m, g->tile_n, n_pts);
    /* bytes_per_s: the device's mem_bytes_per_s, the largest tier bandwidth */
    printf("calibrate gemm flops_per_s=%.6g bytes_per_s=%.6g launch_s=%.6g\n", g->flops_per_s,
           d.mem_bytes_per_s, g->launch_s);
    for (unsigned t = 0; t < g->n_tiers; t++)
        printf("calibrate gemm tier=%u min_bytes=%.0f bytes_per_s=%.6g efficiency=%.6g "
               "from_tier=%u\n", t, g->tier_min_bytes[t], g->tier_bytes_per_s[t],
               d.mem_tier_efficiency[t], g->tier_from[t]);
    printf("calibrate gemm fit=%s median_abs_error_pct=%.1f max_abs_error_pct=%.1f\n",
           method_name(res->method), res->median_pct, res->max_pct);
    if (res->other_median_pct >= 0)
        printf("calibrate gemm other_fit=%s other_median_abs_error_pct=%.1f\n",
               method_name(res->method == CALIB_FIT_LSQ ? CALIB_FIT_LAD : CALIB_FIT_LSQ),
               res->other_median_pct);
}

static void print_allreduce(const calib_options *o, const coll_sweep *sw)
{
    char t1[32], t2[32], b[32];
    printf("\nall-reduce (sum of FP32 buffers) across %u OpenMP threads in shared memory\n",
           o->threads);
    for (int alg = 0; alg < COLL_ALGORITHM_COUNT; alg++) {
        const coll_sweep *s = &sw[alg];
        const coll_bandwidth *bw = &s->model.bw;
        const char *name = coll_algorithm_name(alg);
        printf("%s (t = %g alpha + %g S/B(S)):\n", name,
               coll_allreduce_steps(s->model.alg, s->model.ranks),
               coll_allreduce_bytes_factor(s->model.alg, s->model.ranks));
        printf("  %10s  %4s  %11s  %11s  %7s\n", "S/thread", "tier", "measured", "predicted",
               "error");
        double max_pct = 0.0;
        for (size_t i = 0; i < s->n_pts; i++) {
            double pred = calib_coll_predict_s(&s->model, s->pts[i].bytes);
            double pct = 100.0 * (pred - s->pts[i].time_s) / s->pts[i].time_s;
            max_pct = fmax(max_pct, fabs(pct));
            printf("  %10s  %4u  %s  %s  %+6.1f%%\n", format_bytes(s->pts[i].bytes, b, sizeof b),
                   coll_bandwidth_tier(bw, s->pts[i].bytes),
                   format_time(s->pts[i].time_s, t1, sizeof t1), format_time(pred, t2, sizeof t2),
                   pct);
        }
        printf("  fitted (least sum of |relative error|): alpha %.3f us per step; B per thread\n"
               "  by S, tiers at 0, L1d, L2, L3/%u:\n", s->model.alpha_s * 1e6, o->threads);
        double top = 0.0;
        for (unsigned t = 0; t < bw->n_tiers; t++) {
            size_t n = 0;
            for (size_t i = 0; i < s->n_pts; i++)
                n += coll_bandwidth_tier(bw, s->pts[i].bytes) == t;
            top = fmax(top, bw->bytes_per_s[t]);
            printf("    tier %u from %10s  %8.2f GB/s  %2zu points", t,
                   format_bytes(bw->min_bytes[t], b, sizeof b), bw->bytes_per_s[t] / 1e9, n);
            if (s->model.tier_from[t] != t)
                printf("  tier %u's value: %s", s->model.tier_from[t],
                       n ? "its own would be <= 0" : "no points of its own");
            printf("\n");
        }
        printf("  |error| median %.1f %%, max %.1f %% over %zu sizes, %u parameters fitted\n",
               s->median_pct, max_pct, s->n_pts, 1 + n_own_tiers(s->model.tier_from, bw->n_tiers));
        /* bytes_per_s: the largest tier bandwidth, as for the GEMM */
        printf("calibrate allreduce_%s ranks=%u alpha_s=%.6g bytes_per_s=%.6g points=%zu\n", name,
               s->model.ranks, s->model.alpha_s, top, s->n_pts);
        for (unsigned t = 0; t < bw->n_tiers; t++)
            printf("calibrate allreduce_%s tier=%u min_bytes=%.0f bytes_per_s=%.6g "
                   "from_tier=%u\n", name, t, bw->min_bytes[t], bw->bytes_per_s[t],
                   s->model.tier_from[t]);
        printf("calibrate allreduce_%s median_abs_error_pct=%.1f max_abs_error_pct=%.1f\n", name,
               s->median_pct, max_pct);
    }
}

/* --json (docs/json.md "calibrate"): what the text prints, unrounded */
static cJSON *calib_json(const calib_options *o, const calib_caches *c,
                         const calib_gemm_point *pts, size_t n_pts, const gemm_result *res,
                         const coll_sweep *sw, int has_coll)
{
    cJSON *root = jsonout_begin("calibrate");
    if (!root)
        return NULL;
    const calib_gemm_model *g = &res->g;
    cJSON_AddStringToObject(root, "backend", calib_backend_name(o->backend));
    cJSON_AddNumberToObject(root, "threads", o->threads);
    cJSON_AddNumberToObject(root, "tile_m", g->tile_m);
    cJSON_AddNumberToObject(root, "tile_n", g->tile_n);
    cJSON *x = cJSON_AddObjectToObject(root, "caches");
    cJSON_AddNumberToObject(x, "l1d_bytes", c->l1d_bytes);
    cJSON_AddNumberToObject(x, "l2_bytes", c->l2_bytes);
    cJSON_AddNumberToObject(x, "l3_bytes", c->l3_bytes);
    cJSON_AddStringToObject(x, "source", c->source[0]); /* L1d's; the text has all three */
    compute_device d;
    calib_gemm_device(g, &d);
    x = cJSON_AddObjectToObject(root, "gemm");
    cJSON_AddStringToObject(x, "fit", method_name(res->method));
    cJSON_AddNumberToObject(x, "flops_per_s", g->flops_per_s);
    cJSON_AddNumberToObject(x, "bytes_per_s", d.mem_bytes_per_s);
    cJSON_AddNumberToObject(x, "launch_s", g->launch_s);
    cJSON_AddNumberToObject(x, "median_abs_error_pct", res->median_pct);
    cJSON_AddNumberToObject(x, "max_abs_error_pct", res->max_pct);
    cJSON *a = cJSON_AddArrayToObject(x, "tiers");
    for (unsigned t = 0; t < g->n_tiers; t++) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddItemToArray(a, r);
        cJSON_AddNumberToObject(r, "tier", t);
        cJSON_AddNumberToObject(r, "min_bytes", g->tier_min_bytes[t]);
        cJSON_AddNumberToObject(r, "bytes_per_s", g->tier_bytes_per_s[t]);
        cJSON_AddNumberToObject(r, "from_tier", g->tier_from[t]);
    }
    a = cJSON_AddArrayToObject(x, "points");
    for (size_t i = 0; i < n_pts; i++) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddItemToArray(a, r);
        const double v[6] = {pts[i].m, pts[i].n, pts[i].k, pts[i].bytes, pts[i].time_s,
                             calib_gemm_predict_s(g, &pts[i])};
        static const char *const names[6] = {"m", "n", "k", "bytes", "measured_s",
                                             "predicted_s"};
        for (int k = 0; k < 6; k++)
            cJSON_AddNumberToObject(r, names[k], v[k]);
        cJSON_AddNumberToObject(r, "tier", calib_gemm_tier(g, pts[i].bytes));
        cJSON_AddStringToObject(r, "bound", gemm_bound(g, &pts[i]));
    }
    a = cJSON_AddArrayToObject(root, "allreduce"); /* empty with one thread */
    for (int alg = 0; has_coll && alg < COLL_ALGORITHM_COUNT; alg++) {
        const coll_sweep *s = &sw[alg];
        cJSON *r = cJSON_CreateObject();
        cJSON_AddItemToArray(a, r);
        cJSON_AddStringToObject(r, "algorithm", coll_algorithm_name(alg));
        cJSON_AddNumberToObject(r, "ranks", s->model.ranks);
        cJSON_AddNumberToObject(r, "alpha_s", s->model.alpha_s);
        cJSON_AddNumberToObject(r, "median_abs_error_pct", s->median_pct);
        cJSON *t = cJSON_AddArrayToObject(r, "tiers");
        for (unsigned k = 0; k < s->model.bw.n_tiers; k++) {
            cJSON *y = cJSON_CreateObject();
            cJSON_AddItemToArray(t, y);
            cJSON_AddNumberToObject(y, "tier", k);
            cJSON_AddNumberToObject(y, "min_bytes", s->model.bw.min_bytes[k]);
            cJSON_AddNumberToObject(y, "bytes_per_s", s->model.bw.bytes_per_s[k]);
            cJSON_AddNumberToObject(y, "from_tier", s->model.tier_from[k]);
        }
        cJSON *q = cJSON_AddArrayToObject(r, "points");
        for (size_t i = 0; i < s->n_pts; i++) {
            cJSON *y = cJSON_CreateObject();
            cJSON_AddItemToArray(q, y);
            cJSON_AddNumberToObject(y, "bytes", s->pts[i].bytes);
            cJSON_AddNumberToObject(y, "tier", coll_bandwidth_tier(&s->model.bw, s->pts[i].bytes));
            cJSON_AddNumberToObject(y, "measured_s", s->pts[i].time_s);
            cJSON_AddNumberToObject(y, "predicted_s", calib_coll_predict_s(&s->model,
                                                                           s->pts[i].bytes));
        }
    }
    if (o->write_path)
        cJSON_AddStringToObject(root, "written", o->write_path);
    return root;
}

/* --csv: every measured point, a row each (jsonout_csv over a flat array) */
static cJSON *calib_csv_doc(const calib_gemm_point *pts, size_t n_pts, const gemm_result *res,
                            const coll_sweep *sw, int has_coll)
{
    cJSON *root = jsonout_begin("calibrate");
    cJSON *a = root ? cJSON_AddArrayToObject(root, "points") : NULL;
    if (!a) {
        cJSON_Delete(root);
        return NULL;
    }
    for (size_t i = 0; i < n_pts; i++) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddItemToArray(a, r);
        double predicted = calib_gemm_predict_s(&res->g, &pts[i]);
        cJSON_AddStringToObject(r, "family", "gemm");
        cJSON_AddNumberToObject(r, "m", pts[i].m);
        cJSON_AddNumberToObject(r, "n", pts[i].n);
        cJSON_AddNumberToObject(r, "k", pts[i].k);
        cJSON_AddNumberToObject(r, "bytes", pts[i].bytes);
        cJSON_AddNumberToObject(r, "tier", calib_gemm_tier(&res->g, pts[i].bytes));
        cJSON_AddNumberToObject(r, "measured_s", pts[i].time_s);
        cJSON_AddNumberToObject(r, "predicted_s", predicted);
        cJSON_AddNumberToObject(r, "error_pct", 100.0 * (predicted - pts[i].time_s) /
                                                    pts[i].time_s);
        cJSON_AddStringToObject(r, "bound", gemm_bound(&res->g, &pts[i]));
    }
    for (int alg = 0; has_coll && alg < COLL_ALGORITHM_COUNT; alg++) {
        char family[64];
        snprintf(family, sizeof family, "allreduce_%s", coll_algorithm_name(alg));
        for (size_t i = 0; i < sw[alg].n_pts; i++) {
            const calib_coll_point *q = &sw[alg].pts[i];
            double predicted = calib_coll_predict_s(&sw[alg].model, q->bytes);
            cJSON *r = cJSON_CreateObject();
            cJSON_AddItemToArray(a, r);
            cJSON_AddStringToObject(r, "family", family);
            cJSON_AddNumberToObject(r, "bytes", q->bytes);
            cJSON_AddNumberToObject(r, "tier", coll_bandwidth_tier(&sw[alg].model.bw, q->bytes));
            cJSON_AddNumberToObject(r, "measured_s", q->time_s);
            cJSON_AddNumberToObject(r, "predicted_s", predicted);
            cJSON_AddNumberToObject(r, "error_pct", 100.0 * (predicted - q->time_s) / q->time_s);
        }
    }
    return root;
}

static int report_error(const sim_error *err)
{
    char line[2048];
    fprintf(stderr, "dcsim calibrate: %s\n", sim_error_format(err, line, sizeof line));
    return err->code == SIM_ERR_IO || err->code == SIM_ERR_INPUT ? EXIT_INPUT : EXIT_FAILURE;
}

/* Both GEMM fits; the one with the smaller median |error| is kept (the
 * least-absolute one on a tie), the other's errors reported */
static int fit_gemm_both(const calib_options *o, const calib_caches *caches,
                         const calib_gemm_point *pts, size_t n_pts, gemm_result *res,
                         sim_error *err)
{
    calib_gemm_model base = {.sms = o->tile_m ? o->threads : 0, .tile_m = o->tile_m,
                             .tile_n = o->tile_n};
    calib_gemm_tiers(caches, o->threads, &base);
    calib_gemm_model lad = base, lsq = base;
    if (calib_fit_gemm(pts, n_pts, CALIB_FIT_LAD, &lad, err))
        return err->code;
    double lad_med, lad_max, lsq_med = -1.0, lsq_max = -1.0;
    gemm_errors(&lad, pts, n_pts, &lad_med, &lad_max);
    sim_error lsq_err;
    sim_error_clear(&lsq_err);
    int has_lsq = calib_fit_gemm(pts, n_pts, CALIB_FIT_LSQ, &lsq, &lsq_err) == 0;
    if (has_lsq)
        gemm_errors(&lsq, pts, n_pts, &lsq_med, &lsq_max);
    int is_lsq = has_lsq && lsq_med < lad_med;
    *res = (gemm_result){.g = is_lsq ? lsq : lad,
                         .method = is_lsq ? CALIB_FIT_LSQ : CALIB_FIT_LAD,
                         .median_pct = is_lsq ? lsq_med : lad_med,
                         .max_pct = is_lsq ? lsq_max : lad_max,
                         .other_median_pct = is_lsq ? lad_med : lsq_med,
                         .other_max_pct = is_lsq ? lad_max : lsq_max};
    return 0;
}

int cmd_calibrate(int argc, char **argv)
{
    calib_options o;
    int rc = parse_calib_options(argc, argv, &o);
    if (rc)
        return rc == CLI_DONE ? 0 : rc;
    gsl_set_error_handler_off();
    char where[512];
    if (o.backend == CALIB_GEMM_CBLAS && calib_blas_check_openblas(where, sizeof where)) {
        fprintf(stderr, "dcsim calibrate: error: cblas_sgemm comes from %s, not OpenBLAS (link "
                "order: OpenBLAS must come before GSL's libgslcblas); use --gemm=own\n", where);
        return EXIT_FAILURE;
    }
    calib_blas_set_threads(o.threads);
    /* default 14-16 s in all on 2 cores, --quick under 1 s. 21 rounds, not
     * 15: with a bandwidth per tier, fewer points decide each parameter, and
     * a point's median then survives load bursts over up to 10 rounds */
    calib_budget bud = o.is_quick
        ? (calib_budget){.rounds = 5, .min_sample_s = 1e-3, .warm_below_s = 0.02}
        : (calib_budget){.rounds = 21, .min_sample_s = 4e-3, .warm_below_s = 0.02};
    calib_caches caches;
    calib_read_caches(&caches);

    sim_error err;
    sim_error_clear(&err);
    /* all-reduce first: OpenBLAS worker threads spin for a while after a
     * call and would steal the cores from the OpenMP team */
    coll_sweep sw[COLL_ALGORITHM_COUNT];
    int has_coll = o.threads >= 2;
    if (has_coll && run_allreduce_sweep(&o, &bud, &caches, sw, &err))
        return report_error(&err);

    calib_gemm_point pts[N_GEMM_SHAPES];
    size_t n_pts = 0;
    if (run_gemm_sweep(&o, &bud, pts, &n_pts, &err))
        return report_error(&err);
    gemm_result res;
    if (fit_gemm_both(&o, &caches, pts, n_pts, &res, &err))
        return report_error(&err);
    if (!o.json && !o.csv) {
        print_caches(&caches);
        print_gemm(&o, pts, n_pts, &res);
        if (has_coll)
            print_allreduce(&o, sw);
        else
            printf("\nall-reduce: skipped, it needs at least 2 threads (--threads %u)\n",
                   o.threads);
    }

    if (o.write_path) {
        char host[256] = "unknown", date[32] = "unknown";
        if (gethostname(host, sizeof host) != 0)
            snprintf(host, sizeof host, "unknown");
        host[sizeof host - 1] = '\0';
        time_t now = time(NULL);
        struct tm utc;
        if (gmtime_r(&now, &utc))
            strftime(date, sizeof date, "%Y-%m-%d", &utc);
        calib_coll_model colls[COLL_ALGORITHM_COUNT];
        for (int alg = 0; has_coll && alg < COLL_ALGORITHM_COUNT; alg++)
            colls[alg] = sw[alg].model;
        double memory_bytes = 0.0;
#ifdef _SC_PHYS_PAGES
        long pages = sysconf(_SC_PHYS_PAGES), page_bytes = sysconf(_SC_PAGESIZE);
        if (pages > 0 && page_bytes > 0)
            memory_bytes = (double)pages * (double)page_bytes;
#endif
        if (calib_write_catalog(o.write_path, &res.g, o.threads, memory_bytes,
                                calib_backend_name(o.backend), colls,
                                has_coll ? COLL_ALGORITHM_COUNT : 0, host, date, &err))
            return report_error(&err);
        if (!o.json && !o.csv)
            printf("\nwrote %s (GPU catalog entry 'cpu-calibrated')\n", o.write_path);
    }
    if (o.json)
        rc = jsonout_emit(calib_json(&o, &caches, pts, n_pts, &res, sw, has_coll), JSONOUT_JSON,
                          NULL, NULL);
    else if (o.csv)
        rc = jsonout_emit(calib_csv_doc(pts, n_pts, &res, sw, has_coll), JSONOUT_CSV, "points",
                          NULL);
    fflush(stdout);
    return rc;
}
