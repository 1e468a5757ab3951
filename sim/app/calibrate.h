/* calibrate.h - `dcsim calibrate`: time real kernels on this machine's CPU,
 * fit dcsim's timing models to them, and print measured vs predicted.
 *
 * GEMM: FP32 C = A.B (row-major, beta 0) through CBLAS (OpenBLAS) or our own
 * blocked OpenMP kernel, fitted to compute_gemm_time_s (models/compute.h) with
 * the CPU read as a device: sms = threads, ctas_per_sm = 1, a fixed tile,
 * peak x gemm_efficiency, one bandwidth per memory tier (tiers from the cache
 * sizes) and launch_s fitted.
 * All-reduce: an OpenMP shared-memory ring or binomial tree across threads,
 * fitted to coll_allreduce_tiered_time_s (models/collective.h).
 * The pieces below are exposed for tests/app/test_calibrate.c.
 */
#ifndef DCSIM_APP_CALIBRATE_H
#define DCSIM_APP_CALIBRATE_H

#include <stddef.h>

#include "collective.h"
#include "compute.h"
#include "error.h"

/* The command: argv holds the arguments after the word "calibrate". Prints
 * tables on stdout, errors on stderr; returns the exit status (0 ok, 1
 * internal error or out of memory, 2 bad usage or an unwritable --write file). */
int cmd_calibrate(int argc, char **argv);

/* `dcsim calibrate --help` text, for `dcsim help calibrate` */
extern const char calibrate_usage[];

/* ---- kernels ---- */

/* Output tile of calib_gemm_own: the unit of work one OpenMP thread takes
 * (schedule(static) over tiles in row-major order). */
#define CALIB_OWN_TILE_M 32
#define CALIB_OWN_TILE_N 32

/* c[m x n] = a[m x k] . b[k x n], row-major FP32, one loop nest, one thread:
 * the reference the blocked kernel is tested against. */
void calib_gemm_naive(size_t m, size_t n, size_t k, const float *a, const float *b, float *c);

/* The same product, cache-blocked, on n_threads OpenMP threads (0 = the
 * OpenMP default). Each element of c is summed by one thread in the same
 * order (p = 0..k-1) for any thread count, so results are bit-identical
 * across thread counts. */
void calib_gemm_own(size_t m, size_t n, size_t k, const float *a, const float *b, float *c,
                    unsigned n_threads);

/* All-reduce (sum) of n_threads buffers of count floats in place, one OpenMP
 * thread per buffer: afterwards every bufs[r][i] = sum over ranks of the old
 * bufs[r][i]. Ring: reduce-scatter then all-gather, n-1 barrier-separated
 * steps each; tree: binomial reduce to rank 0 then binomial broadcast,
 * ceil(log2 n) steps each (collective.h). Returns 0, or -1 when alg is
 * unknown, n_threads is 0 or OpenMP granted fewer threads (nothing changed). */
int calib_allreduce(enum coll_algorithm alg, float *const *bufs, size_t count,
                    unsigned n_threads);

/* ---- cache tiers ---- */

/* This machine's caches, for the tier thresholds of the fits. */
typedef struct calib_caches {
    double l1d_bytes;   /* level 1 data cache, per core */
    double l2_bytes;    /* level 2, per core */
    double l3_bytes;    /* level 3, shared (one L3 assumed for all threads) */
    char source[3][16]; /* where each came from: "sysfs", "sysconf" or "default" */
} calib_caches;

/* Defaults when a size cannot be read: a Zen 3 core (L1d 32 KiB, L2 512 KiB,
 * L3 32 MiB per CCX), the CPU dcsim's calibration was developed on. */
#define CALIB_DEFAULT_L1D_BYTES (32.0 * 1024)
#define CALIB_DEFAULT_L2_BYTES (512.0 * 1024)
#define CALIB_DEFAULT_L3_BYTES (32.0 * 1024 * 1024)

/* Read the cache sizes of cpu0: /sys/devices/system/cpu/cpu0/cache/index*
 * first (sysconf's _SC_LEVEL3_CACHE_SIZE can report a whole package under a
 * hypervisor), then sysconf, then the defaults above. Never fails. */
void calib_read_caches(calib_caches *out);

/* Up to 4 tier thresholds from candidates: 0, then each candidate that is
 * finite and above the previous kept one; the rest are dropped. Returns the
 * number of tiers (1 + kept candidates) and fills min_bytes[0..n-1]. */
unsigned calib_tiers_from(const double *candidates, size_t n_candidates, double min_bytes[4]);

/* ---- fits ---- */

typedef struct calib_gemm_point {
    double m, n, k;   /* shape */
    double bytes;     /* 4 (m k + k n + m n): A and B read, C written once */
    double time_s;    /* measured (median) time of one call */
} calib_gemm_point;

#define CALIB_TIERS 4 /* = COMPUTE_MEM_TIERS = COLL_BW_TIERS */

/* The CPU as a compute_device: sms, tile_m, tile_n and the tier thresholds
 * are fixed by the caller (sms = 0: no tile or wave quantisation); the rest
 * is fitted. The memory term of a GEMM of `bytes` is bytes / B(bytes), B the
 * bandwidth of the last tier whose min_bytes <= bytes. */
typedef struct calib_gemm_model {
    unsigned sms;          /* threads */
    unsigned tile_m, tile_n;
    unsigned n_tiers;                      /* 1..CALIB_TIERS (0 is read as 1) */
    double tier_min_bytes[CALIB_TIERS];    /* ascending, the first 0 */
    double flops_per_s;    /* FP32 peak x gemm_efficiency (efficiency read as 1) */
    double tier_bytes_per_s[CALIB_TIERS];  /* bandwidth x efficiency of each tier */
    double launch_s;       /* fixed cost per call */
    unsigned tier_from[CALIB_TIERS]; /* written by the fit: the tier whose bandwidth tier i
                                      * takes (i, or a neighbour when tier i has no
                                      * memory-bound points) */
} calib_gemm_model;

/* The compute_device for g: FP32 peak only, gemm and attention efficiency 1,
 * ctas_per_sm 1, mem_bytes_per_s = the largest tier bandwidth and
 * mem_tier_efficiency[i] = tier_bytes_per_s[i] / that, so that
 * compute_gemm_time_s on it is the fitted model. */
void calib_gemm_device(const calib_gemm_model *g, compute_device *out);

/* compute_gemm_time_s of the point's shape and bytes on g's device */
double calib_gemm_predict_s(const calib_gemm_model *g, const calib_gemm_point *p);

/* The tier of a transfer of bytes in g (as compute_mem_efficiency picks it) */
unsigned calib_gemm_tier(const calib_gemm_model *g, double bytes);

/* Whether the memory term decides p's time on g (memory >= compute) */
int calib_gemm_is_memory_bound(const calib_gemm_model *g, const calib_gemm_point *p);

enum calib_fit_method {
    CALIB_FIT_LAD = 0, /* least sum of |log(predicted/measured)| (IRLS) */
    CALIB_FIT_LSQ,     /* least sum of log(predicted/measured)^2 */
};

/* Fit flops_per_s, launch_s and one bandwidth per tier of *g to n_pts
 * measured points in log space: least absolute deviations (CALIB_FIT_LAD,
 * by iteratively reweighted nonlinear least squares, gsl_multifit_nlinear;
 * a 1 us and a 1 s point count alike and a point the model cannot describe
 * does not drag the rest) or plain least squares (CALIB_FIT_LSQ), from
 * several starts, the best kept. A tier with no points, or none that the fit
 * makes memory-bound, has no say in its bandwidth: it takes its nearest such
 * neighbour's (the faster one when two are equally near) and the fit is
 * redone; tier_from records it.
 * Reads g->sms, tile_m, tile_n, n_tiers, tier_min_bytes; writes flops_per_s,
 * tier_bytes_per_s, launch_s and tier_from (and n_tiers 1 for 0) only on
 * success. Returns 0, or SIM_ERR_INPUT with err set (fewer than 3 points or
 * than parameters, a time or shape <= 0, bad tiers, no fit converged). */
int calib_fit_gemm(const calib_gemm_point *pts, size_t n_pts, enum calib_fit_method method,
                   calib_gemm_model *g, sim_error *err);

typedef struct calib_coll_point {
    double bytes;    /* per rank */
    double time_s;   /* measured (median) time of one all-reduce */
} calib_coll_point;

typedef struct calib_coll_model {
    enum coll_algorithm alg;
    unsigned ranks;
    coll_bandwidth bw;   /* n_tiers (0 is read as 1) and min_bytes fixed by the caller,
                          * bytes_per_s fitted */
    double alpha_s;      /* fitted per-step latency */
    unsigned tier_from[COLL_BW_TIERS]; /* written by the fit, as in calib_gemm_model */
} calib_coll_model;

/* coll_allreduce_tiered_time_s on c for bytes per rank */
double calib_coll_predict_s(const calib_coll_model *c, double bytes);

/* Fit alpha_s and the tier bandwidths of *c (alg, ranks, bw.n_tiers and
 * bw.min_bytes read) to t = steps alpha + factor S x_tier(S), x = 1/B, which
 * is linear in (alpha, x): least absolute relative deviations by iteratively
 * reweighted linear least squares (gsl_multifit_wlinear, weights
 * 1/(t^2 |r|)), started from relative least squares (weights 1/t^2). The
 * constraints alpha >= 0 and B > 0 are kept by an active set: a negative
 * alpha is refitted as 0, and a tier whose 1/B comes out <= 0 (or that has
 * no points) takes its nearest neighbour's bandwidth; tier_from records it.
 * Writes bw (n_tiers 1 for 0), alpha_s and tier_from only on success.
 * Returns 0, SIM_ERR_NOMEM, or SIM_ERR_INPUT with err set (ranks < 2, fewer
 * than 2 points or than parameters, bad tiers, times that do not grow with
 * size). */
int calib_fit_allreduce(const calib_coll_point *pts, size_t n_pts, calib_coll_model *c,
                        sim_error *err);

/* The tier thresholds of the two fits from c for `threads` threads (at most
 * 4 tiers, repeated or non-ascending thresholds dropped; reasons in
 * calibrate.c): GEMM by the op's bytes from 0, threads x L1d, threads x L2,
 * L3 (sets g->n_tiers, tier_min_bytes); all-reduce by the bytes per thread
 * from 0, L1d, L2, L3 / threads (sets bw->n_tiers, min_bytes). */
void calib_gemm_tiers(const calib_caches *c, unsigned threads, calib_gemm_model *g);
void calib_coll_tiers(const calib_caches *c, unsigned threads, coll_bandwidth *bw);

/* Median of |predicted - measured| / measured over n points, in percent
 * (0 when n == 0). */
double calib_median_abs_error_pct(const double *measured_s, const double *predicted_s, size_t n);

/* ---- output ---- */

/* Write g as a one-GPU catalog that scenarios can use (scenarios/dcsim.xsd):
 * <gpus><gpu name="cpu-calibrated"> with an fp32 <peak rate> of g->flops_per_s
 * and gemm-efficiency 100 %, a <memory bandwidth> of the largest tier
 * bandwidth and efficiency-by-size="0B:E0 SIZE1:E1 ..." with Ei = B_i / that
 * (so no default memory efficiency applies, and dcsim's device times a GEMM
 * as the fit does, without the tile), a capacity of memory_bytes (left out
 * when 0), and a <compute launch-overhead> of g->launch_s, each with source
 * "dcsim calibrate on HOST, DATE" and confidence D; threads and backend go
 * into the description. Numbers carry 9 significant digits, so times read
 * back agree to about 1e-8. What the catalog has no place for (the tile, the
 * all-reduce fits in colls, which may be NULL) goes in a comment.
 * Written to a temporary file in the same folder, then renamed: path is
 * complete or untouched. Returns 0, or SIM_ERR_IO with err set. */
int calib_write_catalog(const char *path, const calib_gemm_model *g, unsigned threads,
                        double memory_bytes, const char *backend, const calib_coll_model *colls,
                        size_t n_colls, const char *host, const char *date, sim_error *err);

#endif
