/* calib_timing.h - the timing harness of dcsim calibrate: a sweep's GEMM
 * shapes or all-reduce sizes are timed as interleaved rounds of samples and
 * each point's time is the median over rounds, so a burst of load from
 * another process spoils one round of many points rather than all rounds of
 * a few. Also the median |error| the command reports.
 */
#ifndef DCSIM_CALIB_TIMING_H
#define DCSIM_CALIB_TIMING_H

#include <stddef.h>

#include "blas_backend.h"
#include "collective.h"

#define CALIB_MAX_ROUNDS 31

/* How long each point is timed. */
typedef struct calib_budget {
    unsigned rounds;       /* samples per point, <= CALIB_MAX_ROUNDS */
    double min_sample_s;   /* a sample is enough back-to-back calls to last this long */
    double warm_below_s;   /* calls shorter than this get an untimed call before each sample */
} calib_budget;

/* One GEMM shape of a sweep; the caller sets m, n, k, the rest is scratch. */
typedef struct calib_gemm_job {
    size_t m, n, k;
    unsigned long inner;       /* calls per sample */
    int needs_warmup;
    double sample[CALIB_MAX_ROUNDS];
} calib_gemm_job;

/* Time jobs[0..n_jobs-1] through be on one set of A, B, C buffers (a fixed
 * pseudo-random fill in [-1, 1]) big enough for all (each shape uses a
 * prefix): a pilot per job (one untimed call, then calls quadrupling until
 * they last min_sample_s / 8), then bud->rounds rounds over all jobs.
 * Writes time_s[j], the median seconds per call. Returns 0, or -1 when out
 * of memory. */
int calib_time_gemms(enum calib_gemm_backend be, calib_gemm_job *jobs, size_t n_jobs,
                     unsigned threads, const calib_budget *bud, double *time_s);

/* One all-reduce of a sweep; the caller sets alg and bytes, the rest is scratch. */
typedef struct calib_coll_job {
    enum coll_algorithm alg;
    size_t bytes;              /* per rank */
    unsigned long inner;
    int needs_warmup;
    double sample[CALIB_MAX_ROUNDS];
} calib_coll_job;

/* Verify, then time jobs[0..n_jobs-1] on n threads with one buffer per
 * thread, big enough for the largest (each size uses a prefix): each job is
 * first run once on values whose sum is exact in FP32 and checked, then
 * piloted and timed in rounds as calib_time_gemms. Writes time_s[j].
 * Returns 0, -1 when out of memory or OpenMP granted fewer threads, or -2
 * with *bad the job whose sum came out wrong. */
int calib_time_allreduces(calib_coll_job *jobs, size_t n_jobs, unsigned n,
                          const calib_budget *bud, double *time_s, size_t *bad);

/* Median of |predicted - measured| / measured over n points, in percent
 * (0 when n == 0, NaN when out of memory). */
double calib_median_abs_error_pct(const double *measured_s, const double *predicted_s, size_t n);

#endif
