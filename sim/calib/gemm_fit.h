/* gemm_fit.h - dcsim's GEMM model with the CPU read as a device, and its fit
 * to measured GEMM times: compute_gemm_time_s (models/compute.h) with
 * sms = threads, ctas_per_sm = 1, a fixed tile, peak x gemm_efficiency, one
 * bandwidth per memory tier (tiers from the cache sizes) and launch_s fitted.
 */
#ifndef DCSIM_CALIB_GEMM_FIT_H
#define DCSIM_CALIB_GEMM_FIT_H

#include <stddef.h>

#include "compute.h"
#include "error.h"
#include "fit_tiers.h"

typedef struct calib_gemm_point {
    double m, n, k;   /* shape */
    double bytes;     /* 4 (m k + k n + m n): A and B read, C written once */
    double time_s;    /* measured (median) time of one call */
} calib_gemm_point;

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

/* The compute and the memory term of p on g in seconds, launch left out */
void calib_gemm_terms(const calib_gemm_model *g, const calib_gemm_point *p, double *compute_s,
                      double *memory_s);

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
 * than parameters, a time or shape <= 0, bad tiers, no fit converged).
 * GSL's error handler should be off (gsl_set_error_handler_off), as the
 * command and the tests have it. */
int calib_fit_gemm(const calib_gemm_point *pts, size_t n_pts, enum calib_fit_method method,
                   calib_gemm_model *g, sim_error *err);

#endif
