/* allreduce_fit.h - dcsim's all-reduce model, coll_allreduce_tiered_time_s
 * (models/collective.h), and its fit to measured all-reduce times: alpha
 * and one bandwidth per tier of the bytes per rank.
 */
#ifndef DCSIM_CALIB_ALLREDUCE_FIT_H
#define DCSIM_CALIB_ALLREDUCE_FIT_H

#include <stddef.h>

#include "collective.h"
#include "error.h"
#include "fit_tiers.h"

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

#endif
