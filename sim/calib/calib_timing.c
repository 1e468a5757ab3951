/* calib_timing.c - the timing harness of dcsim calibrate (contract in
 * calib_timing.h). Every point of a sweep gets a pilot (an untimed call, then
 * calls until they last min_sample_s / 8), then one sample per round, rounds
 * interleaved over the points; a sample is enough back-to-back calls to last
 * min_sample_s, and the point's time is the median over rounds.
 */
#include "calib_timing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <omp.h>

#include "allreduce_kernel.h"

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

/* deterministic fill in [-1, 1] */
static void fill_floats(float *x, size_t n, unsigned seed)
{
    unsigned long long s = 0x9E3779B97F4A7C15ull * (seed + 1);
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (float)((double)(s >> 40) / (double)(1ull << 23) - 1.0);
    }
}

int calib_time_gemms(enum calib_gemm_backend be, calib_gemm_job *jobs, size_t n_jobs,
                     unsigned threads, const calib_budget *bud, double *time_s)
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
        calib_gemm_job *g = &jobs[j];
        calib_gemm_run(be, g->m, g->n, g->k, a, b, c, threads);
        double call_s;
        for (unsigned long calls = 1;; calls *= 4) {
            double t0 = now_s();
            for (unsigned long i = 0; i < calls; i++)
                calib_gemm_run(be, g->m, g->n, g->k, a, b, c, threads);
            call_s = (now_s() - t0) / (double)calls;
            if (call_s * (double)calls >= bud->min_sample_s / 8 || calls >= 1000000)
                break;
        }
        g->inner = calls_per_sample(bud, call_s);
        g->needs_warmup = call_s < bud->warm_below_s;
    }
    for (unsigned r = 0; r < bud->rounds; r++)
        for (size_t j = 0; j < n_jobs; j++) {
            calib_gemm_job *g = &jobs[j];
            if (g->needs_warmup)
                calib_gemm_run(be, g->m, g->n, g->k, a, b, c, threads);
            double t0 = now_s();
            for (unsigned long i = 0; i < g->inner; i++)
                calib_gemm_run(be, g->m, g->n, g->k, a, b, c, threads);
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
 * last one (calib_allreduce_rank ends in a barrier). Returns seconds per
 * all-reduce, or -1 when OpenMP granted fewer threads. */
static double time_allreduce_sample(enum coll_algorithm alg, float *const *bufs, size_t count,
                                    unsigned n, unsigned warm, unsigned long inner)
{
    double dt = -1.0;
#pragma omp parallel num_threads((int)n)
    if ((unsigned)omp_get_num_threads() == n) {
        unsigned r = (unsigned)omp_get_thread_num();
        for (unsigned i = 0; i < warm; i++)
            calib_allreduce_rank(alg, bufs, count, n, r);
        double t0 = 0.0;
#pragma omp barrier
        if (r == 0)
            t0 = now_s();
        for (unsigned long i = 0; i < inner; i++)
            calib_allreduce_rank(alg, bufs, count, n, r);
        if (r == 0)
            dt = (now_s() - t0) / (double)inner;
    }
    return dt;
}

int calib_time_allreduces(calib_coll_job *jobs, size_t n_jobs, unsigned n,
                          const calib_budget *bud, double *time_s, size_t *bad)
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
        calib_coll_job *c = &jobs[j];
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
            calib_coll_job *c = &jobs[j];
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
