/* calibrate.c - `dcsim calibrate` (contract in calibrate.h).
 *
 * Timing: every point of a sweep gets a pilot (an untimed call, then calls
 * until they last min_sample_s / 8), then one sample per round, rounds
 * interleaved over the points; a sample is enough back-to-back calls to last
 * min_sample_s, and the point's time is the median over rounds.
 * GEMM model: compute_gemm_time_s (models/compute.h) with the CPU as a device,
 *   t = launch_s + max(W 2 tile_m tile_n k / (R / sms), bytes / B(bytes)),
 *   W = ceil(ceil(m/tile_m) ceil(n/tile_n) / sms), sms = threads,
 *   bytes = 4 (m k + k n + m n) (FP32 A, B read, C written: as workload.c),
 *   B(bytes) a step function with tiers from 0, threads x L1d, threads x L2
 *   and L3 (the family of hardware.md 2.2; thresholds read from the caches),
 * R, launch_s and one B per tier fitted to minimise sum |log(predicted/
 * measured)| (or its square, whichever gives the smaller median error).
 * All-reduce model: coll_allreduce_tiered_time_s (models/collective.h),
 * alpha and one B per tier of the bytes per thread S (from 0, L1d, L2,
 * L3 / threads) fitted to minimise sum |predicted/measured - 1|. Both fits
 * use GSL.
 */
#ifdef DCSIM_HAVE_CBLAS
#define _GNU_SOURCE /* dladdr, to check which library cblas_sgemm binds to */
#include <dlfcn.h>
#endif

#include "calibrate.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_cblas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>
#include <omp.h>

#include "cli.h"
#include "hardware.h"
#include "precision.h"

#ifdef DCSIM_HAVE_CBLAS
/* cblas_sgemm is declared by gsl_cblas.h (the standard CBLAS prototypes, the
 * same ABI as OpenBLAS's). OpenBLAS's own cblas.h cannot be included with
 * GSL's headers (both define the CBLAS enums), so its extras are declared here. */
void openblas_set_num_threads(int num_threads);
char *openblas_get_config(void);

/* 0 when cblas_sgemm is OpenBLAS's (it lives in the same object as
 * openblas_get_config), else -1 with the object it comes from in where: GSL's
 * libgslcblas exports the same name and wins if it is linked first. */
static void *code_address(void (*fn)(void))
{
    void *p; /* POSIX: function and object pointers have one size (dlsym relies on it) */
    memcpy(&p, &fn, sizeof p);
    return p;
}

static int cblas_check_openblas(char *where, size_t size)
{
    Dl_info gemm, config;
    if (!dladdr(code_address((void (*)(void))cblas_sgemm), &gemm) ||
        !dladdr(code_address((void (*)(void))openblas_get_config), &config))
        return 0; /* cannot tell (a static build): trust the link */
    if (gemm.dli_fbase == config.dli_fbase)
        return 0;
    snprintf(where, size, "%s", gemm.dli_fname ? gemm.dli_fname : "?");
    return -1;
}
#endif

#define EXIT_INPUT 2
#define FLOAT_BYTES 4.0

/* ================================================================ kernels */

void calib_gemm_naive(size_t m, size_t n, size_t k, const float *a, const float *b, float *c)
{
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            float sum = 0.0f;
            for (size_t p = 0; p < k; p++)
                sum += a[i * k + p] * b[p * n + j];
            c[i * n + j] = sum;
        }
}

/* k is walked in blocks; each block of B (CALIB_BLOCK_K x tile columns,
 * 32 KiB) is copied to a contiguous buffer and the tile of C is summed in a
 * contiguous buffer (4 KiB), so power-of-two strides of B and C cannot
 * thrash a cache set. Rows of the tile go 4 at a time so each vector of B is
 * loaded once for 4 rows. */
#define CALIB_BLOCK_K 256

/* ct[r][0..w) += sum over p of a[r][p] * bp[p][0..w) for the rows r of a 1-4 row strip */
static void gemm_strip(size_t rows, size_t w, size_t kb, const float *a, size_t lda,
                       const float *bp, float *ct)
{
    const size_t tn = CALIB_OWN_TILE_N;
    if (rows == 4) {
        float *c0 = ct, *c1 = ct + tn, *c2 = ct + 2 * tn, *c3 = ct + 3 * tn;
        for (size_t p = 0; p < kb; p++) {
            const float a0 = a[p], a1 = a[lda + p], a2 = a[2 * lda + p], a3 = a[3 * lda + p];
            const float *b = bp + p * tn;
#pragma omp simd
            for (size_t j = 0; j < w; j++) {
                c0[j] += a0 * b[j];
                c1[j] += a1 * b[j];
                c2[j] += a2 * b[j];
                c3[j] += a3 * b[j];
            }
        }
        return;
    }
    for (size_t r = 0; r < rows; r++)
        for (size_t p = 0; p < kb; p++) {
            const float ar = a[r * lda + p];
            const float *b = bp + p * tn;
            float *c = ct + r * tn;
#pragma omp simd
            for (size_t j = 0; j < w; j++)
                c[j] += ar * b[j];
        }
}

void calib_gemm_own(size_t m, size_t n, size_t k, const float *a, const float *b, float *c,
                    unsigned n_threads)
{
    const size_t tm = CALIB_OWN_TILE_M, tn = CALIB_OWN_TILE_N;
    size_t tiles_m = (m + tm - 1) / tm, tiles_n = (n + tn - 1) / tn;
    size_t tiles = tiles_m * tiles_n;
    int threads = n_threads ? (int)n_threads : omp_get_max_threads();
#pragma omp parallel num_threads(threads)
    {
        /* per-thread scratch on the thread's stack: 36 KiB */
        _Alignas(64) float bp[CALIB_BLOCK_K * CALIB_OWN_TILE_N];
        _Alignas(64) float ct[CALIB_OWN_TILE_M * CALIB_OWN_TILE_N];
#pragma omp for schedule(static)
        for (size_t t = 0; t < tiles; t++) {
            size_t i0 = t / tiles_n * tm, j0 = t % tiles_n * tn;
            size_t h = i0 + tm < m ? tm : m - i0, w = j0 + tn < n ? tn : n - j0;
            memset(ct, 0, sizeof ct);
            for (size_t p0 = 0; p0 < k; p0 += CALIB_BLOCK_K) {
                size_t kb = p0 + CALIB_BLOCK_K < k ? CALIB_BLOCK_K : k - p0;
                for (size_t p = 0; p < kb; p++)
                    memcpy(bp + p * tn, b + (p0 + p) * n + j0, w * sizeof *bp);
                for (size_t i = 0; i < h; i += 4)
                    gemm_strip(h - i < 4 ? h - i : 4, w, kb, a + (i0 + i) * k + p0, k, bp,
                               ct + i * tn);
            }
            for (size_t i = 0; i < h; i++)
                memcpy(c + (i0 + i) * n + j0, ct + i * tn, w * sizeof *c);
        }
    }
}

/* first element of chunk c when count elements are cut into n chunks */
static size_t chunk_lo(size_t count, unsigned n, unsigned c)
{
    return (size_t)((unsigned long long)count * c / n);
}

/* One rank's part of the all-reduce; called by every thread of a team of
 * exactly n. Ends with a barrier, so all ranks are done when it returns.
 * Within a step no rank writes what another reads (see the chunk indices). */
static void allreduce_rank(enum coll_algorithm alg, float *const *bufs, size_t count,
                           unsigned n, unsigned r)
{
    float *own = bufs[r];
    if (alg == COLL_RING) {
        const float *left = bufs[(r + n - 1) % n];
        /* reduce-scatter: at step s rank r adds its left neighbour's chunk
         * r-1-s, which that neighbour completed at step s-1; after n-1 steps
         * rank r holds the full sum of chunk r+1 */
        for (unsigned s = 0; s + 1 < n; s++) {
            unsigned c = (r + 2 * n - 1 - s) % n;
            size_t lo = chunk_lo(count, n, c), hi = chunk_lo(count, n, c + 1);
#pragma omp simd
            for (size_t i = lo; i < hi; i++)
                own[i] += left[i];
#pragma omp barrier
        }
        /* all-gather: at step s rank r copies chunk r-s, complete at its
         * left neighbour since step s-1 (its own chunk r+1 at s = 0) */
        for (unsigned s = 0; s + 1 < n; s++) {
            unsigned c = (r + n - s) % n;
            size_t lo = chunk_lo(count, n, c), hi = chunk_lo(count, n, c + 1);
            memcpy(own + lo, left + lo, (hi - lo) * sizeof *own);
#pragma omp barrier
        }
    } else {
        /* binomial reduce: at distance d, rank r (a multiple of 2d) adds rank r+d */
        unsigned top = 1;
        for (unsigned d = 1; d < n; d *= 2) {
            if (r % (2 * d) == 0 && r + d < n) {
                const float *src = bufs[r + d];
#pragma omp simd
                for (size_t i = 0; i < count; i++)
                    own[i] += src[i];
            }
            top = d;
#pragma omp barrier
        }
        /* binomial broadcast, the same tree backwards: rank r+d copies rank r */
        for (unsigned d = top; d >= 1 && n > 1; d /= 2) {
            if (r % (2 * d) == d)
                memcpy(own, bufs[r - d], count * sizeof *own);
#pragma omp barrier
        }
    }
}

int calib_allreduce(enum coll_algorithm alg, float *const *bufs, size_t count,
                    unsigned n_threads)
{
    if ((alg != COLL_RING && alg != COLL_TREE) || n_threads == 0)
        return -1;
    int is_short = 0;
#pragma omp parallel num_threads((int)n_threads)
    {
        /* every thread sees the same team size, so all take the same branch */
        if ((unsigned)omp_get_num_threads() != n_threads) {
#pragma omp single
            is_short = 1;
        } else {
            allreduce_rank(alg, bufs, count, n_threads, (unsigned)omp_get_thread_num());
        }
    }
    return is_short ? -1 : 0;
}

/* ================================================================ timing */

/* Every point of a sweep is timed once per round, the rounds interleaved
 * over the points, and its time is the median over rounds: a burst of load
 * from another process then spoils one round of many points rather than all
 * rounds of a few. */
#define CALIB_MAX_ROUNDS 31

typedef struct calib_budget {
    unsigned rounds;       /* samples per point, <= CALIB_MAX_ROUNDS */
    double min_sample_s;   /* a sample is enough back-to-back calls to last this long */
    double warm_below_s;   /* calls shorter than this get an untimed call before each sample */
} calib_budget;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* median of x[0..n-1]; sorts x */
static double median_sort(double *x, size_t n)
{
    if (n == 0)
        return 0.0;
    qsort(x, n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

double calib_median_abs_error_pct(const double *measured_s, const double *predicted_s, size_t n)
{
    if (n == 0)
        return 0.0;
    double *e = malloc(n * sizeof *e);
    if (!e)
        return NAN;
    for (size_t i = 0; i < n; i++)
        e[i] = 100.0 * fabs(predicted_s[i] - measured_s[i]) / measured_s[i];
    double med = median_sort(e, n);
    free(e);
    return med;
}

/* calls per sample from a pilot estimate of one call */
static unsigned long calls_per_sample(const calib_budget *bud, double call_s)
{
    double calls = ceil(bud->min_sample_s / fmax(call_s, 1e-9));
    return calls < 1 ? 1 : calls > 1e7 ? 10000000ul : (unsigned long)calls;
}

/* ---------------------------------------------------------------- GEMM */

enum gemm_backend { GEMM_CBLAS, GEMM_OWN };

static const char *backend_name(enum gemm_backend be)
{
    return be == GEMM_CBLAS ? "cblas" : "own";
}

static void gemm_run(enum gemm_backend be, size_t m, size_t n, size_t k, const float *a,
                     const float *b, float *c, unsigned threads)
{
#ifdef DCSIM_HAVE_CBLAS
    if (be == GEMM_CBLAS) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0f, a,
                    (int)k, b, (int)n, 0.0f, c, (int)n);
        return;
    }
#else
    (void)be;
#endif
    calib_gemm_own(m, n, k, a, b, c, threads);
}

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

/* deterministic fill in [-1, 1] */
static void fill_floats(float *x, size_t n, unsigned seed)
{
    unsigned long long s = 0x9E3779B97F4A7C15ull * (seed + 1);
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (float)((double)(s >> 40) / (double)(1ull << 23) - 1.0);
    }
}

typedef struct gemm_job {
    size_t m, n, k;
    unsigned long inner;       /* calls per sample */
    int needs_warmup;
    double sample[CALIB_MAX_ROUNDS];
} gemm_job;

/* Time jobs[0..n_jobs-1] on one set of A, B, C buffers big enough for all
 * (each shape uses a prefix). Writes time_s[j], the median seconds per call.
 * Returns 0, or -1 when out of memory. */
static int time_gemms(enum gemm_backend be, gemm_job *jobs, size_t n_jobs, unsigned threads,
                      const calib_budget *bud, double *time_s)
{
    size_t max_a = 1, max_b = 1, max_c = 1;
    for (size_t j = 0; j < n_jobs; j++) {
        max_a = jobs[j].m * jobs[j].k > max_a ? jobs[j].m * jobs[j].k : max_a;
        max_b = jobs[j].k * jobs[j].n > max_b ? jobs[j].k * jobs[j].n : max_b;
        max_c = jobs[j].m * jobs[j].n > max_c ? jobs[j].m * jobs[j].n : max_c;
    }
    float *a = malloc(max_a * sizeof *a), *b = malloc(max_b * sizeof *b),
          *c = malloc(max_c * sizeof *c);
    if (!a || !b || !c) {
        free(a);
        free(b);
        free(c);
        return -1;
    }
    fill_floats(a, max_a, 1);
    fill_floats(b, max_b, 2);
    memset(c, 0, max_c * sizeof *c);
    /* pilot: one untimed call (page faults, thread start), then calls
     * quadrupling until they last an eighth of a sample */
    for (size_t j = 0; j < n_jobs; j++) {
        gemm_job *g = &jobs[j];
        gemm_run(be, g->m, g->n, g->k, a, b, c, threads);
        double call_s;
        for (unsigned long calls = 1;; calls *= 4) {
            double t0 = now_s();
            for (unsigned long i = 0; i < calls; i++)
                gemm_run(be, g->m, g->n, g->k, a, b, c, threads);
            call_s = (now_s() - t0) / (double)calls;
            if (call_s * (double)calls >= bud->min_sample_s / 8 || calls >= 1000000)
                break;
        }
        g->inner = calls_per_sample(bud, call_s);
        g->needs_warmup = call_s < bud->warm_below_s;
    }
    for (unsigned r = 0; r < bud->rounds; r++)
        for (size_t j = 0; j < n_jobs; j++) {
            gemm_job *g = &jobs[j];
            if (g->needs_warmup)
                gemm_run(be, g->m, g->n, g->k, a, b, c, threads);
            double t0 = now_s();
            for (unsigned long i = 0; i < g->inner; i++)
                gemm_run(be, g->m, g->n, g->k, a, b, c, threads);
            g->sample[r] = (now_s() - t0) / (double)g->inner;
        }
    for (size_t j = 0; j < n_jobs; j++)
        time_s[j] = median_sort(jobs[j].sample, bud->rounds);
    free(a);
    free(b);
    free(c);
    return 0;
}

/* ---------------------------------------------------------------- all-reduce */

/* check after an all-reduce of bufs[r][i] = r + 1 + i % 13: exact in FP32 */
static int allreduce_is_exact(float *const *bufs, size_t count, unsigned n)
{
    for (unsigned r = 0; r < n; r++)
        for (size_t i = 0; i < count; i++) {
            float want = (float)(n * (i % 13) + n * (n + 1) / 2);
            if (bufs[r][i] != want)
                return 0;
        }
    return 1;
}

/* One sample in one parallel region: `warm` untimed all-reduces, then
 * `inner` back to back, timed by thread 0 from a barrier to the end of the
 * last one (allreduce_rank ends in a barrier). Returns seconds per
 * all-reduce, or -1 when OpenMP granted fewer threads. */
static double time_allreduce_sample(enum coll_algorithm alg, float *const *bufs, size_t count,
                                    unsigned n, unsigned warm, unsigned long inner)
{
    double dt = -1.0;
#pragma omp parallel num_threads((int)n)
    if ((unsigned)omp_get_num_threads() == n) {
        unsigned r = (unsigned)omp_get_thread_num();
        for (unsigned i = 0; i < warm; i++)
            allreduce_rank(alg, bufs, count, n, r);
        double t0 = 0.0;
#pragma omp barrier
        if (r == 0)
            t0 = now_s();
        for (unsigned long i = 0; i < inner; i++)
            allreduce_rank(alg, bufs, count, n, r);
        if (r == 0)
            dt = (now_s() - t0) / (double)inner;
    }
    return dt;
}

typedef struct coll_job {
    enum coll_algorithm alg;
    size_t bytes;              /* per rank */
    unsigned long inner;
    int needs_warmup;
    double sample[CALIB_MAX_ROUNDS];
} coll_job;

/* Verify, then time jobs[0..n_jobs-1] on one buffer per thread, big enough
 * for the largest (each size uses a prefix). Writes time_s[j]. Returns 0,
 * -1 when out of memory or OpenMP granted fewer threads, or -2 with *bad the
 * job whose sum came out wrong. */
static int time_allreduces(coll_job *jobs, size_t n_jobs, unsigned n, const calib_budget *bud,
                           double *time_s, size_t *bad)
{
    size_t max_count = 1;
    for (size_t j = 0; j < n_jobs; j++)
        max_count = jobs[j].bytes / sizeof(float) > max_count ? jobs[j].bytes / sizeof(float)
                                                              : max_count;
    float **bufs = calloc(n, sizeof *bufs);
    int rc = bufs ? 0 : -1;
    for (unsigned r = 0; rc == 0 && r < n; r++)
        if (!(bufs[r] = malloc(max_count * sizeof(float))))
            rc = -1;
    /* each thread touches its own buffer first (NUMA placement) */
#pragma omp parallel num_threads((int)n) if (rc == 0)
    if (rc == 0 && (unsigned)omp_get_thread_num() < n)
        memset(bufs[omp_get_thread_num()], 0, max_count * sizeof(float));
    for (size_t j = 0; rc == 0 && j < n_jobs; j++) {
        coll_job *c = &jobs[j];
        size_t count = c->bytes / sizeof(float);
        for (unsigned r = 0; r < n; r++)
            for (size_t i = 0; i < count; i++)
                bufs[r][i] = (float)(r + 1 + i % 13);
        if (calib_allreduce(c->alg, bufs, count, n) != 0) {
            rc = -1;
            break;
        }
        if (!allreduce_is_exact(bufs, count, n)) {
            *bad = j;
            rc = -2;
            break;
        }
        /* zeros from here on: repeated sums of the check values would overflow */
        for (unsigned r = 0; r < n; r++)
            memset(bufs[r], 0, count * sizeof(float));
        double call_s = 0.0;
        for (unsigned long calls = 1;; calls *= 4) {
            call_s = time_allreduce_sample(c->alg, bufs, count, n, 1, calls);
            if (call_s < 0 || call_s * (double)calls >= bud->min_sample_s / 8 || calls >= 1000000)
                break;
        }
        if (call_s < 0)
            rc = -1;
        c->inner = calls_per_sample(bud, call_s);
        c->needs_warmup = call_s < bud->warm_below_s;
    }
    for (unsigned r = 0; rc == 0 && r < bud->rounds; r++)
        for (size_t j = 0; rc == 0 && j < n_jobs; j++) {
            coll_job *c = &jobs[j];
            c->sample[r] = time_allreduce_sample(c->alg, bufs, c->bytes / sizeof(float), n,
                                                 c->needs_warmup ? 1 : 0, c->inner);
            if (c->sample[r] < 0)
                rc = -1;
        }
    for (size_t j = 0; rc == 0 && j < n_jobs; j++)
        time_s[j] = median_sort(jobs[j].sample, bud->rounds);
    for (unsigned r = 0; bufs && r < n; r++)
        free(bufs[r]);
    free(bufs);
    return rc;
}

/* ================================================================ caches */

/* the first line of a small file, without its newline; 0 or -1 */
static int read_first_line(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int rc = fgets(buf, (int)size, f) ? 0 : -1;
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
    return rc;
}

/* "32K", "512K", "32768K", "1M" (a sysfs cache size) in bytes, or 0 */
static double parse_cache_size(const char *s)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno == ERANGE)
        return 0.0;
    double scale = *end == 'K'    ? 1024.0
                 : *end == 'M'    ? 1024.0 * 1024
                 : *end == 'G'    ? 1024.0 * 1024 * 1024
                 : *end == '\0' ? 1.0
                                  : 0.0;
    return (double)v * scale;
}

void calib_read_caches(calib_caches *out)
{
    double size[3] = {0.0, 0.0, 0.0};
    memset(out, 0, sizeof *out);
    for (int idx = 0; idx < 16; idx++) {
        char path[128], level[16], type[32], text[32];
        const char *dir = "/sys/devices/system/cpu/cpu0/cache";
        snprintf(path, sizeof path, "%s/index%d/level", dir, idx);
        if (read_first_line(path, level, sizeof level))
            continue;
        snprintf(path, sizeof path, "%s/index%d/type", dir, idx);
        if (read_first_line(path, type, sizeof type) || strcmp(type, "Instruction") == 0)
            continue;
        snprintf(path, sizeof path, "%s/index%d/size", dir, idx);
        if (read_first_line(path, text, sizeof text))
            continue;
        int lv = atoi(level);
        if (lv >= 1 && lv <= 3 && size[lv - 1] == 0.0)
            size[lv - 1] = parse_cache_size(text);
    }
    for (int i = 0; i < 3; i++)
        snprintf(out->source[i], sizeof out->source[i], "%s", size[i] > 0 ? "sysfs" : "");
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE) && \
    defined(_SC_LEVEL3_CACHE_SIZE)
    static const int names[3] = {_SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL2_CACHE_SIZE,
                                 _SC_LEVEL3_CACHE_SIZE};
    for (int i = 0; i < 3; i++) {
        long v = size[i] > 0 ? 0 : sysconf(names[i]);
        if (v > 0) {
            size[i] = (double)v;
            snprintf(out->source[i], sizeof out->source[i], "sysconf");
        }
    }
#endif
    static const double defaults[3] = {CALIB_DEFAULT_L1D_BYTES, CALIB_DEFAULT_L2_BYTES,
                                       CALIB_DEFAULT_L3_BYTES};
    for (int i = 0; i < 3; i++)
        if (!(size[i] > 0)) {
            size[i] = defaults[i];
            snprintf(out->source[i], sizeof out->source[i], "default");
        }
    out->l1d_bytes = size[0];
    out->l2_bytes = size[1];
    out->l3_bytes = size[2];
}

unsigned calib_tiers_from(const double *candidates, size_t n_candidates, double min_bytes[4])
{
    unsigned n = 1;
    min_bytes[0] = 0.0;
    for (size_t i = 0; i < n_candidates && n < CALIB_TIERS; i++)
        if (candidates[i] > min_bytes[n - 1] && !isinf(candidates[i]))
            min_bytes[n++] = candidates[i];
    return n;
}

/* GEMM tiers by the op's bytes, 4 (m k + k n + m n). Every call of a sweep
 * point reuses the same A, B and C, so they stay in the smallest cache level
 * that holds them all; the operands are split between the threads, so the
 * private levels hold threads x their size, the shared L3 its own size. */
void calib_gemm_tiers(const calib_caches *c, unsigned threads, calib_gemm_model *g)
{
    const double cand[3] = {threads * c->l1d_bytes, threads * c->l2_bytes, c->l3_bytes};
    g->n_tiers = calib_tiers_from(cand, 3, g->tier_min_bytes);
}

/* All-reduce tiers by the bytes per thread, S: from 0, L1d, L2, L3 / threads.
 * The working set that decides the tier is S per thread, not 2S: a thread
 * reuses only its own buffer across calls. What it reads from a peer (as many
 * bytes again) the peer has rewritten since, so every such read is a
 * coherence miss at any size; the size decides only where the peer's lines
 * are found. While S fits the peer's private L2 they are still there, dirty,
 * and each read is a cross-core transfer (on Zen 3 slower per byte than the
 * L3); above the L2 they have been evicted to the shared L3, which holds all
 * n buffers while n S fits it; above that they come from DRAM. (Measured on
 * 2 Zen 3 threads: the slow-to-fast step lies between S = 256 and 512 KiB,
 * i.e. at the L2 size and not at half of it.) */
void calib_coll_tiers(const calib_caches *c, unsigned threads, coll_bandwidth *bw)
{
    const double cand[3] = {c->l1d_bytes, c->l2_bytes, c->l3_bytes / threads};
    bw->n_tiers = calib_tiers_from(cand, 3, bw->min_bytes);
}

/* ================================================================ fits */

unsigned calib_gemm_tier(const calib_gemm_model *g, double bytes)
{
    unsigned i = 0;
    while (i + 1 < g->n_tiers && i + 1 < CALIB_TIERS && bytes >= g->tier_min_bytes[i + 1])
        i++;
    return i;
}

void calib_gemm_device(const calib_gemm_model *g, compute_device *out)
{
    memset(out, 0, sizeof *out);
    unsigned n_tiers = g->n_tiers < 1 ? 1 : g->n_tiers > CALIB_TIERS ? CALIB_TIERS : g->n_tiers;
    double top = 0.0;
    for (unsigned i = 0; i < n_tiers; i++)
        top = fmax(top, g->tier_bytes_per_s[i]);
    out->peak_flops_per_s[PREC_FP32] = g->flops_per_s;
    out->gemm_efficiency = 1.0;
    out->attention_efficiency = 1.0;
    out->mem_bytes_per_s = top;
    out->mem_efficiency = 1.0;
    out->n_mem_tiers = n_tiers;
    for (unsigned i = 0; i < n_tiers; i++) {
        out->mem_tier_min_bytes[i] = i == 0 ? 0.0 : g->tier_min_bytes[i];
        out->mem_tier_efficiency[i] = g->tier_bytes_per_s[i] / top;
    }
    out->sms = g->sms;
    out->ctas_per_sm = 1;
    out->tile_m = g->tile_m;
    out->tile_n = g->tile_n;
    out->launch_s = g->launch_s;
}

double calib_gemm_predict_s(const calib_gemm_model *g, const calib_gemm_point *p)
{
    compute_device d;
    calib_gemm_device(g, &d);
    return compute_gemm_time_s(&d, PREC_FP32, p->m, p->n, p->k, p->bytes);
}

/* the compute and the memory term of p on g, launch left out */
static void gemm_terms(const calib_gemm_model *g, const calib_gemm_point *p, double *compute_s,
                       double *memory_s)
{
    calib_gemm_model no_launch = *g;
    no_launch.launch_s = 0.0;
    calib_gemm_point no_bytes = *p;
    no_bytes.bytes = 0.0;
    *compute_s = calib_gemm_predict_s(&no_launch, &no_bytes);
    compute_device d;
    calib_gemm_device(g, &d);
    *memory_s = p->bytes / (d.mem_bytes_per_s * compute_mem_efficiency(&d, p->bytes));
}

int calib_gemm_is_memory_bound(const calib_gemm_model *g, const calib_gemm_point *p)
{
    double compute_s, memory_s;
    gemm_terms(g, p, &compute_s, &memory_s);
    return memory_s >= compute_s;
}

/* 0 when n_tiers (0 read as 1) and min_bytes describe valid tiers */
static int tiers_are_valid(unsigned n_tiers, const double *min_bytes)
{
    if (n_tiers > CALIB_TIERS || (n_tiers > 0 && min_bytes[0] != 0))
        return -1;
    for (unsigned i = 1; i < n_tiers; i++)
        if (!(min_bytes[i] > min_bytes[i - 1]) || isinf(min_bytes[i]))
            return -1;
    return 0;
}

/* Tiers without points of their own take the nearest tier's with points (the
 * lower one when two are equally near); rep[i] := the tier whose parameter
 * tier i uses. Returns the number of tiers with points. */
static unsigned tie_empty_tiers(const size_t *count, unsigned n_tiers, unsigned *rep)
{
    unsigned n_own = 0;
    for (unsigned i = 0; i < n_tiers; i++)
        n_own += count[i] > 0;
    for (unsigned i = 0; i < n_tiers; i++) {
        rep[i] = i;
        for (unsigned d = 1; count[i] == 0 && n_own > 0 && d < n_tiers; d++) {
            if (i >= d && count[i - d] > 0) {
                rep[i] = i - d;
                break;
            }
            if (i + d < n_tiers && count[i + d] > 0) {
                rep[i] = i + d;
                break;
            }
        }
    }
    return n_own;
}

/* Tie tier t (a tier that is its own representative) to the nearest other
 * such tier in is_ok, the one with the larger bandwidth bw when two are
 * equally near; the tiers tied to t follow. Returns 0, or -1 when none is ok. */
static int retie(unsigned t, const int *is_ok, const double *bw, unsigned n_tiers, unsigned *rep)
{
    for (unsigned d = 1; d < n_tiers; d++) {
        int lo = t >= d && rep[t - d] == t - d && is_ok[t - d];
        int hi = t + d < n_tiers && rep[t + d] == t + d && is_ok[t + d];
        if (!lo && !hi)
            continue;
        unsigned to = lo && hi ? (bw[t + d] > bw[t - d] ? t + d : t - d) : lo ? t - d : t + d;
        for (unsigned i = 0; i < n_tiers; i++)
            if (rep[i] == t)
                rep[i] = to;
        return 0;
    }
    return -1;
}

typedef struct gemm_fit_data {
    const calib_gemm_point *pts;
    size_t n_pts;
    calib_gemm_model g;          /* fixed fields; the fitted ones are overwritten */
    unsigned rep[CALIB_TIERS];   /* tier whose bandwidth tier i takes */
    size_t param[CALIB_TIERS];   /* index in x of tier i's log bandwidth */
    size_t n_par;                /* 2 + the number of distinct representatives */
} gemm_fit_data;

/* parameters are logs (so they stay positive), clamped so exp() stays finite:
 * x = {log launch_s, log flops_per_s, log bandwidth of each representative} */
static void gemm_model_from_x(const gemm_fit_data *d, const gsl_vector *x, calib_gemm_model *g)
{
    double v[2 + CALIB_TIERS];
    for (size_t i = 0; i < d->n_par; i++) {
        v[i] = gsl_vector_get(x, i);
        v[i] = v[i] < -200 ? -200 : v[i] > 200 ? 200 : v[i];
    }
    g->launch_s = exp(v[0]);
    g->flops_per_s = exp(v[1]);
    for (unsigned i = 0; i < g->n_tiers; i++)
        g->tier_bytes_per_s[i] = exp(v[d->param[i]]);
}

static int gemm_fit_f(const gsl_vector *x, void *params, gsl_vector *f)
{
    gemm_fit_data *d = params;
    calib_gemm_model g = d->g;
    gemm_model_from_x(d, x, &g);
    for (size_t i = 0; i < d->n_pts; i++) {
        double t = calib_gemm_predict_s(&g, &d->pts[i]);
        if (!(t > 0) || isinf(t))
            return GSL_EDOM;
        gsl_vector_set(f, i, log(t / d->pts[i].time_s));
    }
    return GSL_SUCCESS;
}

/* sum of |r_i| (LAD) or r_i^2 (LSQ) of the log residuals r at x, or inf
 * where the model fails */
static double gemm_cost(gemm_fit_data *d, enum calib_fit_method method, const gsl_vector *x,
                        gsl_vector *r)
{
    if (gemm_fit_f(x, d, r) != GSL_SUCCESS)
        return INFINITY;
    double cost = 0.0;
    for (size_t i = 0; i < r->size; i++) {
        double ri = gsl_vector_get(r, i);
        cost += method == CALIB_FIT_LSQ ? ri * ri : fabs(ri);
    }
    return isfinite(cost) ? cost : INFINITY;
}

/* One fit from x0: a Levenberg-Marquardt fit (GSL trust region,
 * finite-difference Jacobian) of the log residuals; for LAD then iteratively
 * reweighted, each pass with weights 1/max(|r_i|, 1e-8) from the previous
 * one. Minimising sum |r| rather than sum r^2 lets a point the model cannot
 * describe (a cache or threading effect, a noisy sample) stay off the curve
 * instead of dragging every other point. Returns the cost (inf on failure);
 * x0 := solution. */
static double gemm_fit_once(gemm_fit_data *d, enum calib_fit_method method, gsl_vector *x0)
{
    gsl_multifit_nlinear_fdf fdf = {
        .f = gemm_fit_f, .df = NULL, .fvv = NULL, .n = d->n_pts, .p = d->n_par, .params = d};
    gsl_multifit_nlinear_parameters par = gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_workspace *w =
        gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &par, d->n_pts, d->n_par);
    gsl_vector *wts = gsl_vector_alloc(d->n_pts), *r = gsl_vector_alloc(d->n_pts);
    double cost = INFINITY;
    int max_passes = method == CALIB_FIT_LSQ ? 1 : 30;
    if (w && wts && r) {
        gsl_vector_set_all(wts, 1.0);
        cost = gemm_cost(d, method, x0, r);
        for (int pass = 0; pass < max_passes && isfinite(cost); pass++) {
            int info;
            if (gsl_multifit_nlinear_winit(x0, wts, &fdf, w) != GSL_SUCCESS)
                break;
            int status = gsl_multifit_nlinear_driver(200, 1e-12, 1e-12, 0.0, NULL, NULL, &info, w);
            /* out of iterations or no further progress still leaves a usable point */
            if (status != GSL_SUCCESS && status != GSL_EMAXITER && status != GSL_ENOPROG)
                break;
            double next = gemm_cost(d, method, gsl_multifit_nlinear_position(w), r);
            if (!(next <= cost) && pass > 0)
                break;
            double gain = cost - next;
            cost = next;
            gsl_vector_memcpy(x0, gsl_multifit_nlinear_position(w));
            if (pass > 0 && gain <= 1e-10 * cost)
                break;
            for (size_t i = 0; i < d->n_pts; i++)
                gsl_vector_set(wts, i, 1.0 / fmax(fabs(gsl_vector_get(r, i)), 1e-8));
        }
    }
    gsl_vector_free(wts);
    gsl_vector_free(r);
    gsl_multifit_nlinear_free(w);
    return cost;
}

/* The fit for d->rep from several starts, the best kept in *out. Starting
 * values from the data: the fastest call bounds the launch cost, the best
 * achieved rates (over all points, over each tier's) bound the throughputs.
 * Returns the cost, inf when no start converged. */
static double gemm_fit_starts(gemm_fit_data *d, enum calib_fit_method method,
                              calib_gemm_model *out)
{
    double t_min = INFINITY, rate_max = 0.0, bw_max[CALIB_TIERS] = {0}, bw_all = 0.0;
    for (size_t i = 0; i < d->n_pts; i++) {
        const calib_gemm_point *p = &d->pts[i];
        unsigned t = d->rep[calib_gemm_tier(&d->g, p->bytes)];
        t_min = fmin(t_min, p->time_s);
        rate_max = fmax(rate_max, 2.0 * p->m * p->n * p->k / p->time_s);
        bw_max[t] = fmax(bw_max[t], p->bytes / p->time_s);
        bw_all = fmax(bw_all, p->bytes / p->time_s);
    }
    if (!(bw_all > 0))
        bw_all = rate_max;
    gsl_vector *x = gsl_vector_alloc(d->n_par), *best = gsl_vector_alloc(d->n_par);
    double best_cost = INFINITY;
    static const double launch_scale[] = {0.1, 0.5};
    static const double rate_scale[] = {0.5, 1.0, 2.0};
    for (size_t il = 0; x && best && il < 2; il++)
        for (size_t ir = 0; ir < 3; ir++)
            for (size_t ib = 0; ib < 3; ib++) {
                gsl_vector_set(x, 0, log(launch_scale[il] * t_min));
                gsl_vector_set(x, 1, log(rate_scale[ir] * rate_max));
                for (unsigned t = 0; t < d->g.n_tiers; t++)
                    if (d->rep[t] == t)
                        gsl_vector_set(x, d->param[t],
                                       log(rate_scale[ib] * (bw_max[t] > 0 ? bw_max[t] : bw_all)));
                double cost = gemm_fit_once(d, method, x);
                if (cost < best_cost) {
                    best_cost = cost;
                    gsl_vector_memcpy(best, x);
                }
            }
    if (isfinite(best_cost)) {
        *out = d->g;
        gemm_model_from_x(d, best, out);
    }
    gsl_vector_free(x);
    gsl_vector_free(best);
    return best_cost;
}

int calib_fit_gemm(const calib_gemm_point *pts, size_t n_pts, enum calib_fit_method method,
                   calib_gemm_model *g, sim_error *err)
{
    if (n_pts < 3)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "GEMM fit: %zu points, need at least 3 for 3 parameters", n_pts);
    if (tiers_are_valid(g->n_tiers, g->tier_min_bytes))
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "GEMM fit: %u tiers: need at most %d, ascending from 0 bytes",
                             g->n_tiers, CALIB_TIERS);
    gemm_fit_data d = {.pts = pts, .n_pts = n_pts, .g = *g};
    if (d.g.n_tiers == 0) {
        d.g.n_tiers = 1;
        d.g.tier_min_bytes[0] = 0.0;
    }
    size_t count[CALIB_TIERS] = {0};
    for (size_t i = 0; i < n_pts; i++) {
        const calib_gemm_point *p = &pts[i];
        if (!(p->time_s > 0) || !(p->m > 0) || !(p->n > 0) || !(p->k > 0) || !(p->bytes >= 0))
            return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                                 "GEMM fit: point %zu (%gx%gx%g, %g s) is not positive", i,
                                 p->m, p->n, p->k, p->time_s);
        count[calib_gemm_tier(&d.g, p->bytes)]++;
    }
    unsigned n_own = tie_empty_tiers(count, d.g.n_tiers, d.rep);
    if (n_pts < 2 + (size_t)n_own)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "GEMM fit: %zu points, need at least %u for the rate, the launch "
                             "cost and %u tier bandwidths", n_pts, 2 + n_own, n_own);
    /* Fit; then a tier none of whose points is memory-bound had no say in its
     * bandwidth: tie it to a neighbour that has and fit again. Ties are only
     * ever added, so this ends within n_tiers rounds. */
    calib_gemm_model fit = d.g;
    double cost = INFINITY;
    for (unsigned round = 0; round <= d.g.n_tiers; round++) {
        d.n_par = 2;
        for (unsigned t = 0; t < d.g.n_tiers; t++)
            if (d.rep[t] == t)
                d.param[t] = d.n_par++;
        for (unsigned t = 0; t < d.g.n_tiers; t++)
            d.param[t] = d.param[d.rep[t]];
        cost = gemm_fit_starts(&d, method, &fit);
        if (!isfinite(cost))
            break;
        int has_mem[CALIB_TIERS] = {0}, is_changed = 0;
        for (size_t i = 0; i < n_pts; i++)
            if (calib_gemm_is_memory_bound(&fit, &pts[i]))
                has_mem[d.rep[calib_gemm_tier(&fit, pts[i].bytes)]] = 1;
        for (unsigned t = 0; t < d.g.n_tiers; t++)
            if (d.rep[t] == t && !has_mem[t] && retie(t, has_mem, fit.tier_bytes_per_s,
                                                      d.g.n_tiers, d.rep) == 0) {
                is_changed = 1;
                break; /* one at a time: the refit may change the others */
            }
        if (!is_changed)
            break;
    }
    if (!isfinite(cost))
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "GEMM fit: no start converged");
    for (unsigned t = 0; t < fit.n_tiers; t++)
        fit.tier_from[t] = d.rep[t];
    *g = fit;
    return 0;
}

double calib_coll_predict_s(const calib_coll_model *c, double bytes)
{
    coll_bandwidth bw = c->bw;
    if (bw.n_tiers == 0)
        bw.n_tiers = 1;
    return coll_allreduce_tiered_time_s(c->alg, c->ranks, bytes, c->alpha_s, &bw);
}

/* One all-reduce fit problem: the points, their tiers, the model's two
 * coefficients. */
typedef struct coll_fit_data {
    const calib_coll_point *pts;
    size_t n_pts;
    unsigned *tier;          /* of each point */
    unsigned n_tiers;
    double steps, factor;
} coll_fit_data;

/* Weighted least squares t_i ~ steps alpha + factor S_i x_rep(tier i) with
 * weights wt[i], x = 1/B; without alpha when has_alpha is 0 (alpha = 0).
 * x[t] is written for every tier (from its representative). Returns 0 or -1. */
static int coll_wlinear(const coll_fit_data *d, const unsigned *rep, int has_alpha,
                        const double *wt, double *alpha, double *x)
{
    size_t col[CALIB_TIERS], n_cols = has_alpha ? 1 : 0;
    for (unsigned t = 0; t < d->n_tiers; t++)
        if (rep[t] == t)
            col[t] = n_cols++;
    if (n_cols == 0 || n_cols > d->n_pts)
        return -1;
    gsl_matrix *X = gsl_matrix_calloc(d->n_pts, n_cols), *cov = gsl_matrix_alloc(n_cols, n_cols);
    gsl_vector *y = gsl_vector_alloc(d->n_pts), *w = gsl_vector_alloc(d->n_pts),
               *c = gsl_vector_alloc(n_cols);
    gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc(d->n_pts, n_cols);
    int rc = -1;
    if (X && cov && y && w && c && ws) {
        for (size_t i = 0; i < d->n_pts; i++) {
            if (has_alpha)
                gsl_matrix_set(X, i, 0, d->steps);
            gsl_matrix_set(X, i, col[rep[d->tier[i]]], d->factor * d->pts[i].bytes);
            gsl_vector_set(y, i, d->pts[i].time_s);
            gsl_vector_set(w, i, wt[i]);
        }
        double chisq;
        if (gsl_multifit_wlinear(X, w, y, c, cov, &chisq, ws) == GSL_SUCCESS) {
            *alpha = has_alpha ? gsl_vector_get(c, 0) : 0.0;
            for (unsigned t = 0; t < d->n_tiers; t++)
                x[t] = gsl_vector_get(c, col[rep[t]]);
            rc = 0;
        }
    }
    gsl_multifit_linear_free(ws);
    gsl_matrix_free(X);
    gsl_matrix_free(cov);
    gsl_vector_free(y);
    gsl_vector_free(w);
    gsl_vector_free(c);
    return rc;
}

/* coll_wlinear with alpha >= 0 and every x > 0, by an active set: a negative
 * alpha is dropped (0); then the tier with the most negative x is tied to its
 * nearest tier with x > 0 (to its nearest tier at all when none has) and the
 * fit redone. rep is read and updated. Returns 0, -1 when the least squares
 * fail, -2 when even one bandwidth for all tiers comes out <= 0. */
static int coll_wlinear_constrained(const coll_fit_data *d, unsigned *rep, const double *wt,
                                    double *alpha, double *x)
{
    int has_alpha = 1;
    for (;;) {
        if (coll_wlinear(d, rep, has_alpha, wt, alpha, x) != 0)
            return -1;
        if (has_alpha && *alpha < 0) {
            has_alpha = 0;
            continue;
        }
        int is_ok[CALIB_TIERS] = {0}, has_bad = 0;
        unsigned worst = 0;
        double bw[CALIB_TIERS];
        for (unsigned t = 0; t < d->n_tiers; t++) {
            is_ok[t] = x[t] > 0;
            bw[t] = is_ok[t] ? 1.0 / x[t] : 0.0;
            if (rep[t] == t && !is_ok[t] && (!has_bad || x[t] < x[worst])) {
                worst = t;
                has_bad = 1;
            }
        }
        if (!has_bad)
            return 0;
        if (retie(worst, is_ok, bw, d->n_tiers, rep) == 0)
            continue;
        /* no tier is fine on its own (noisy small sets): merge with the
         * nearest other group, down to one, which is the untiered model */
        int is_group[CALIB_TIERS];
        for (unsigned t = 0; t < d->n_tiers; t++)
            is_group[t] = 1;
        if (retie(worst, is_group, bw, d->n_tiers, rep) != 0)
            return -2;
    }
}

/* sum of |relative residual|; r[i] := residual i */
static double coll_l1_cost(const coll_fit_data *d, double alpha, const double *x, double *r)
{
    double cost = 0.0;
    for (size_t i = 0; i < d->n_pts; i++) {
        double t = d->steps * alpha + d->factor * d->pts[i].bytes * x[d->tier[i]];
        r[i] = (t - d->pts[i].time_s) / d->pts[i].time_s;
        cost += fabs(r[i]);
    }
    return cost;
}

int calib_fit_allreduce(const calib_coll_point *pts, size_t n_pts, calib_coll_model *c,
                        sim_error *err)
{
    const char *name = coll_algorithm_name(c->alg);
    coll_fit_data d = {.pts = pts, .n_pts = n_pts, .n_tiers = c->bw.n_tiers ? c->bw.n_tiers : 1,
                       .steps = coll_allreduce_steps(c->alg, c->ranks),
                       .factor = coll_allreduce_bytes_factor(c->alg, c->ranks)};
    if (!(d.steps > 0) || !(d.factor > 0))
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "all-reduce %s fit: needs at least 2 ranks, got %u", name, c->ranks);
    if (n_pts < 2)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "all-reduce %s fit: %zu points, need at least 2", name, n_pts);
    if (tiers_are_valid(c->bw.n_tiers, c->bw.min_bytes))
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "all-reduce %s fit: %u tiers: need at most %d, ascending from 0 "
                             "bytes", name, c->bw.n_tiers, COLL_BW_TIERS);
    coll_bandwidth bw = c->bw;
    bw.n_tiers = d.n_tiers;
    bw.min_bytes[0] = 0.0;
    size_t count[CALIB_TIERS] = {0};
    for (size_t i = 0; i < n_pts; i++) {
        if (!(pts[i].time_s > 0) || !(pts[i].bytes >= 0))
            return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                                 "all-reduce %s fit: point %zu (%g B, %g s) is not positive",
                                 name, i, pts[i].bytes, pts[i].time_s);
        count[coll_bandwidth_tier(&bw, pts[i].bytes)]++;
    }
    unsigned base_rep[CALIB_TIERS], rep[CALIB_TIERS], next_rep[CALIB_TIERS];
    unsigned n_own = tie_empty_tiers(count, d.n_tiers, base_rep);
    if (n_pts < 1 + (size_t)n_own)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "all-reduce %s fit: %zu points, need at least %u for alpha and %u "
                             "tier bandwidths", name, n_pts, 1 + n_own, n_own);
    double *wt = malloc(2 * n_pts * sizeof *wt);
    d.tier = malloc(n_pts * sizeof *d.tier);
    if (!wt || !d.tier) {
        free(wt);
        free(d.tier);
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "all-reduce fit: out of memory");
    }
    double *r = wt + n_pts;
    for (size_t i = 0; i < n_pts; i++)
        d.tier[i] = coll_bandwidth_tier(&bw, pts[i].bytes);
    /* relative least squares (weights 1/t^2) to start, then least absolute
     * relative deviations by reweighting (IRLS), as for the GEMM fit; each
     * pass starts its active set afresh from the tiers that have points */
    for (size_t i = 0; i < n_pts; i++)
        wt[i] = 1.0 / (pts[i].time_s * pts[i].time_s);
    double alpha = 0.0, x[CALIB_TIERS] = {0}, next_alpha, next_x[CALIB_TIERS];
    memcpy(rep, base_rep, sizeof rep);
    int rc = coll_wlinear_constrained(&d, rep, wt, &alpha, x);
    double cost = rc ? INFINITY : coll_l1_cost(&d, alpha, x, r);
    for (int pass = 0; rc == 0 && pass < 100; pass++) {
        for (size_t i = 0; i < n_pts; i++)
            wt[i] = 1.0 / (pts[i].time_s * pts[i].time_s * fmax(fabs(r[i]), 1e-6));
        memcpy(next_rep, base_rep, sizeof next_rep);
        if (coll_wlinear_constrained(&d, next_rep, wt, &next_alpha, next_x) != 0)
            break;
        double next_cost = coll_l1_cost(&d, next_alpha, next_x, r);
        if (!(next_cost <= cost))
            break;
        double gain = cost - next_cost;
        cost = next_cost;
        alpha = next_alpha;
        memcpy(x, next_x, sizeof x);
        memcpy(rep, next_rep, sizeof rep);
        if (gain <= 1e-12 * cost)
            break;
    }
    free(wt);
    free(d.tier);
    if (rc == -1)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "all-reduce %s fit: least squares failed (sizes all equal?)", name);
    if (rc == -2)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "all-reduce %s fit: times do not grow with size", name);
    c->alpha_s = alpha;
    c->bw = bw;
    for (unsigned t = 0; t < d.n_tiers; t++) {
        c->bw.bytes_per_s[t] = 1.0 / x[t];
        c->tier_from[t] = rep[t];
    }
    return 0;
}

/* ================================================================ catalog */

/* host names go into attributes and a comment: keep [A-Za-z0-9._-], no "--" */
static void safe_name(const char *in, char *out, size_t size)
{
    size_t j = 0;
    for (size_t i = 0; in[i] && j + 1 < size; i++) {
        char ch = in[i];
        int is_ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-';
        if (!is_ok || (ch == '-' && j > 0 && out[j - 1] == '-'))
            ch = '_';
        out[j++] = ch;
    }
    out[j] = '\0';
    if (j == 0)
        snprintf(out, size, "unknown");
}

/* "87.1234567GFLOP/s": a unit dcsim's parser knows, 9 significant digits (the
 * round trip through a catalog keeps times to ~1e-8), and never an exponent */
static void format_flops(double x, char *buf, size_t size)
{
    if (x >= 1e15)
        snprintf(buf, size, "%.9gPFLOP/s", x / 1e15);
    else if (x >= 1e12)
        snprintf(buf, size, "%.9gTFLOP/s", x / 1e12);
    else if (x >= 1e9)
        snprintf(buf, size, "%.9gGFLOP/s", x / 1e9);
    else
        snprintf(buf, size, "%.0fFLOP/s", x);
}

static void format_bandwidth(double x, char *buf, size_t size)
{
    if (x >= 1e12)
        snprintf(buf, size, "%.9gTB/s", x / 1e12);
    else if (x >= 1e9)
        snprintf(buf, size, "%.9gGB/s", x / 1e9);
    else if (x >= 1e6)
        snprintf(buf, size, "%.9gMB/s", x / 1e6);
    else
        snprintf(buf, size, "%.0fB/s", x);
}

/* "72.0237123ns": the unit that keeps the number in [1, 1000) where it can */
static void format_duration(double x, char *buf, size_t size)
{
    if (!(x >= 1e-12))
        snprintf(buf, size, "0ns");
    else if (x < 1e-6)
        snprintf(buf, size, "%.9gns", x * 1e9);
    else if (x < 1e-3)
        snprintf(buf, size, "%.9gus", x * 1e6);
    else if (x < 1.0)
        snprintf(buf, size, "%.9gms", x * 1e3);
    else
        snprintf(buf, size, "%.9gs", x);
}

/* "512KiB": a data size dcsim's parser reads back exactly (the thresholds
 * are whole bytes) */
static void format_size(double x, char *buf, size_t size)
{
    const double kib = 1024.0, mib = 1024.0 * 1024.0;
    if (x >= mib && fmod(x, mib) == 0)
        snprintf(buf, size, "%.0fMiB", x / mib);
    else if (x >= kib && fmod(x, kib) == 0)
        snprintf(buf, size, "%.0fKiB", x / kib);
    else if (fmod(x, 1.0) == 0)
        snprintf(buf, size, "%.0fB", x);
    else
        snprintf(buf, size, "%.17gB", x);
}

/* the largest tier bandwidth of g, or 0 when g has no valid one */
static double gemm_top_bandwidth(const calib_gemm_model *g)
{
    unsigned n_tiers = g->n_tiers ? g->n_tiers : 1;
    double top = 0.0;
    for (unsigned i = 0; i < n_tiers && n_tiers <= CALIB_TIERS; i++) {
        if (!(g->tier_bytes_per_s[i] > 0) || isinf(g->tier_bytes_per_s[i]))
            return 0.0;
        top = fmax(top, g->tier_bytes_per_s[i]);
    }
    return top;
}

int calib_write_catalog(const char *path, const calib_gemm_model *g, unsigned threads,
                        double memory_bytes, const char *backend, const calib_coll_model *colls,
                        size_t n_colls, const char *host, const char *date, sim_error *err)
{
    char tmp[4096], safe_host[128], safe_date[64], safe_backend[32], rate[64], bw[64], launch[64];
    char capacity[96] = "", tiers[256] = "", tier_sizes[CALIB_TIERS][32];
    double top = gemm_top_bandwidth(g);
    if (!(g->flops_per_s > 0) || !(top > 0) || !(g->launch_s >= 0) ||
        tiers_are_valid(g->n_tiers, g->tier_min_bytes))
        return sim_error_set(err, SIM_ERR_INTERNAL, path, 0, "no fitted model to write");
    if (snprintf(tmp, sizeof tmp, "%s.tmpXXXXXX", path) >= (int)sizeof tmp)
        return sim_error_set(err, SIM_ERR_IO, path, 0, "path too long");
    safe_name(host ? host : "", safe_host, sizeof safe_host);
    safe_name(date ? date : "", safe_date, sizeof safe_date);
    safe_name(backend ? backend : "", safe_backend, sizeof safe_backend);
    format_flops(g->flops_per_s, rate, sizeof rate);
    format_bandwidth(top, bw, sizeof bw);
    format_duration(g->launch_s, launch, sizeof launch);
    /* efficiency-by-size: B_i / top, the top tier exactly 100 % */
    unsigned n_tiers = g->n_tiers ? g->n_tiers : 1;
    for (size_t i = 0, used = 0; i < n_tiers; i++) {
        format_size(i == 0 ? 0.0 : g->tier_min_bytes[i], tier_sizes[i], sizeof tier_sizes[i]);
        int n = snprintf(tiers + used, sizeof tiers - used, "%s%s:%.9g%%", i ? " " : "",
                         tier_sizes[i], 100.0 * g->tier_bytes_per_s[i] / top);
        if (n < 0 || (size_t)n >= sizeof tiers - used)
            return sim_error_set(err, SIM_ERR_INTERNAL, path, 0, "tier list too long");
        used += (size_t)n;
    }
    if (memory_bytes > 0)
        snprintf(capacity, sizeof capacity, "capacity=\"%.6gGB\" ", memory_bytes / 1e9);

    int fd = mkstemp(tmp);
    if (fd < 0)
        return sim_error_set(err, SIM_ERR_IO, path, 0, "cannot create a file next to it: %s",
                             strerror(errno));
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask); /* mkstemp makes 0600; a catalog is ordinary data */
    FILE *f = fdopen(fd, "w");
    if (!f) {
        int e = errno;
        close(fd);
        unlink(tmp);
        return sim_error_set(err, SIM_ERR_IO, path, 0, "cannot write: %s", strerror(e));
    }
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<!--\n"
            "  Written by dcsim calibrate on %s, %s: this machine's CPU (%u threads,\n"
            "  FP32 GEMM via %s) fitted to dcsim's GEMM model (models/compute.h).\n"
            "  rate: the fitted effective FP32 rate, so gemm-efficiency is 100 %%.\n"
            "  bandwidth: the largest fitted tier bandwidth, and efficiency-by-size\n"
            "    each tier's fitted bandwidth as a fraction of it (tiers by the GEMM's\n"
            "    bytes, from this CPU's caches), so no default efficiency applies:\n",
            safe_host, safe_date, threads, safe_backend);
    for (unsigned i = 0; i < n_tiers; i++)
        fprintf(f, "    from %s: %.9g B/s%s\n", tier_sizes[i], g->tier_bytes_per_s[i],
                g->tier_from[i] != i && g->tier_from[i] < n_tiers
                    ? " (no memory-bound point: a neighbour's value)" : "");
    fprintf(f,
            "  launch-overhead: the fitted fixed cost per call.\n"
            "  capacity (when present): the machine's memory as the OS reports it.\n"
            "  Not written, no place in the catalog: the fit's tile %ux%u with sms = %u\n"
            "    (0: no quantisation). dcsim pairs <compute sms> with its GPU tile\n"
            "    %ux%u, far too coarse for a CPU, so sms is left out and dcsim\n"
            "    quantises nothing.\n",
            g->tile_m, g->tile_n, g->sms, HW_TILE_M, HW_TILE_N);
    for (size_t i = 0; colls && i < n_colls; i++) {
        const calib_coll_model *c = &colls[i];
        unsigned n = c->bw.n_tiers ? c->bw.n_tiers : 1;
        fprintf(f, "  All-reduce %s across %u threads (models/collective.h): alpha = %.6g s,\n"
                   "    B by bytes per thread:\n",
                coll_algorithm_name(c->alg), c->ranks, c->alpha_s);
        for (unsigned t = 0; t < n && t < COLL_BW_TIERS; t++) {
            char size_text[32];
            format_size(t == 0 ? 0.0 : c->bw.min_bytes[t], size_text, sizeof size_text);
            fprintf(f, "    from %s: %.6g B/s\n", size_text, c->bw.bytes_per_s[t]);
        }
    }
    const char *src_fmt = "confidence=\"D\" source=\"dcsim calibrate on %s, %s\"";
    char src[256];
    snprintf(src, sizeof src, src_fmt, safe_host, safe_date);
    fprintf(f,
            "-->\n"
            "<gpus>\n"
            "  <gpu name=\"cpu-calibrated\" description=\"CPU of %s, %u threads, FP32 GEMM via %s\">\n"
            "    <peak precision=\"fp32\" rate=\"%s\" gemm-efficiency=\"100%%\" %s/>\n"
            "    <memory %sbandwidth=\"%s\" efficiency-by-size=\"%s\" %s/>\n"
            "    <compute launch-overhead=\"%s\" %s/>\n"
            "  </gpu>\n"
            "</gpus>\n",
            safe_host, threads, safe_backend, rate, src, capacity, bw, tiers, src, launch, src);
    int is_bad = ferror(f);
    is_bad |= fflush(f) != 0;
    int e = errno;
    is_bad |= fclose(f) != 0;
    if (is_bad) {
        unlink(tmp);
        return sim_error_set(err, SIM_ERR_IO, path, 0, "cannot write: %s", strerror(e));
    }
    if (rename(tmp, path) != 0) {
        e = errno;
        unlink(tmp);
        return sim_error_set(err, SIM_ERR_IO, path, 0, "cannot rename %s into place: %s", tmp,
                             strerror(e));
    }
    return 0;
}

/* ================================================================ command */

const char calibrate_usage[] =
    "usage: dcsim calibrate [--quick] [--threads N] [--gemm=cblas|own] [--tile=MxN|none]\n"
    "                       [--write FILE.xml]\n"
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
    enum gemm_backend backend;
    int has_tile;           /* --tile given */
    unsigned tile_m, tile_n; /* 0 = no quantisation */
    const char *write_path;
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

/* returns 0, 1 for --help (usage printed), or EXIT_INPUT */
static int parse_calib_options(int argc, char **argv, calib_options *o)
{
    memset(o, 0, sizeof *o);
#ifdef DCSIM_HAVE_CBLAS
    o->backend = GEMM_CBLAS;
#else
    o->backend = GEMM_OWN;
#endif
    int procs = omp_get_num_procs();
    o->threads = procs > 0 ? (unsigned)procs : 1;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(calibrate_usage, stdout);
            return 1;
        } else if (strcmp(a, "--quick") == 0) {
            o->is_quick = 1;
        } else if (cli_is_option(a, "--threads")) {
            if (!(v = cli_option_value(argc, argv, &i, "--threads")) ||
                parse_unsigned(v, 1024, &o->threads) || o->threads == 0)
                return cli_usage_error("calibrate", "--threads needs a whole number from 1 to 1024%s", "");
        } else if (cli_is_option(a, "--gemm")) {
            if (!(v = cli_option_value(argc, argv, &i, "--gemm")))
                return cli_usage_error("calibrate", "--gemm needs cblas or own%s", "");
            if (strcmp(v, "own") == 0) {
                o->backend = GEMM_OWN;
            } else if (strcmp(v, "cblas") == 0) {
#ifdef DCSIM_HAVE_CBLAS
                o->backend = GEMM_CBLAS;
#else
                return cli_usage_error("calibrate", "--gemm=cblas: this dcsim was built without CBLAS "
                                   "(install libopenblas-dev and rebuild); use --gemm=own%s", "");
#endif
            } else {
                return cli_usage_error("calibrate", "--gemm %s: expected cblas or own", v);
            }
        } else if (cli_is_option(a, "--tile")) {
            if (!(v = cli_option_value(argc, argv, &i, "--tile")))
                return cli_usage_error("calibrate", "--tile needs MxN (e.g. 64x64) or none%s", "");
            o->has_tile = 1;
            if (strcmp(v, "none") == 0) {
                o->tile_m = o->tile_n = 0;
            } else {
                char m_text[16];
                const char *x = strchr(v, 'x');
                size_t len = x ? (size_t)(x - v) : 0;
                if (!x || len == 0 || len >= sizeof m_text)
                    return cli_usage_error("calibrate", "--tile %s: expected MxN (e.g. 64x64) or none", v);
                memcpy(m_text, v, len);
                m_text[len] = '\0';
                if (parse_unsigned(m_text, 65536, &o->tile_m) ||
                    parse_unsigned(x + 1, 65536, &o->tile_n) || !o->tile_m || !o->tile_n)
                    return cli_usage_error("calibrate", "--tile %s: expected MxN with M, N from 1 to 65536, or none",
                                       v);
            }
        } else if (cli_is_option(a, "--write")) {
            if (!(v = cli_option_value(argc, argv, &i, "--write")) || !v[0])
                return cli_usage_error("calibrate", "--write needs a file name%s", "");
            o->write_path = v;
            if (folder_is_writable(v) != 0) /* say so now, not after the sweep */
                return cli_usage_error("calibrate", "--write %s: cannot create a file in its folder", v);
        } else if (a[0] == '-') {
            return cli_usage_error("calibrate", "unknown option '%s'", a);
        } else {
            return cli_usage_error("calibrate", "unexpected argument '%s'", a);
        }
    }
    if (!o->has_tile) {
        o->tile_m = o->backend == GEMM_OWN ? CALIB_OWN_TILE_M : CBLAS_TILE_M;
        o->tile_n = o->backend == GEMM_OWN ? CALIB_OWN_TILE_N : CBLAS_TILE_N;
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
    gemm_terms(g, p, &compute_s, &memory_s);
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
    coll_job jobs[COLL_ALGORITHM_COUNT * N_COLL_SIZES];
    double time_s[COLL_ALGORITHM_COUNT * N_COLL_SIZES];
    size_t n_jobs = 0;
    for (int alg = 0; alg < COLL_ALGORITHM_COUNT; alg++)
        for (size_t bytes = 1024, i = 0; bytes <= max_bytes && i < N_COLL_SIZES;
             bytes *= step, i++)
            jobs[n_jobs++] = (coll_job){.alg = (enum coll_algorithm)alg, .bytes = bytes};
    size_t bad = 0;
    int rc = time_allreduces(jobs, n_jobs, o->threads, bud, time_s, &bad);
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
                     : o->backend == GEMM_OWN ? 2.0 * 1024 * 1024 * 1024 : 2.0 * 2048 * 2048 * 2048;
    gemm_job jobs[N_GEMM_SHAPES];
    double time_s[N_GEMM_SHAPES];
    size_t n_jobs = 0;
    for (size_t i = 0; i < N_GEMM_SHAPES; i++) {
        const gemm_shape *sh = &gemm_shapes[i];
        if ((o->is_quick && !sh->in_quick) || 2.0 * sh->m * sh->n * sh->k > max_flops)
            continue;
        jobs[n_jobs++] = (gemm_job){.m = sh->m, .n = sh->n, .k = sh->k};
    }
    if (time_gemms(o->backend, jobs, n_jobs, o->threads, bud, time_s))
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
#ifdef DCSIM_HAVE_CBLAS
    char impl_buf[256];
    snprintf(impl_buf, sizeof impl_buf, "cblas_sgemm (%s)", openblas_get_config());
    const char *impl = o->backend == GEMM_CBLAS ? impl_buf : "dcsim's blocked OpenMP kernel";
#else
    const char *impl = "dcsim's blocked OpenMP kernel";
#endif
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
           backend_name(o->backend), o->threads, g->tile_m, g->tile_n, n_pts);
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
        return rc == 1 ? 0 : rc;
    gsl_set_error_handler_off();
#ifdef DCSIM_HAVE_CBLAS
    char where[512];
    if (o.backend == GEMM_CBLAS && cblas_check_openblas(where, sizeof where)) {
        fprintf(stderr, "dcsim calibrate: error: cblas_sgemm comes from %s, not OpenBLAS (link "
                "order: OpenBLAS must come before GSL's libgslcblas); use --gemm=own\n", where);
        return EXIT_FAILURE;
    }
    openblas_set_num_threads((int)o.threads);
#endif
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
    print_caches(&caches);
    print_gemm(&o, pts, n_pts, &res);
    if (has_coll)
        print_allreduce(&o, sw);
    else
        printf("\nall-reduce: skipped, it needs at least 2 threads (--threads %u)\n", o.threads);

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
                                backend_name(o.backend), colls,
                                has_coll ? COLL_ALGORITHM_COUNT : 0, host, date, &err))
            return report_error(&err);
        printf("\nwrote %s (GPU catalog entry 'cpu-calibrated')\n", o.write_path);
    }
    fflush(stdout);
    return 0;
}
