/* allreduce_fit.c - the fit of measured all-reduce times to
 * coll_allreduce_tiered_time_s (contract in allreduce_fit.h):
 *   t = steps alpha + factor S / B(S), S the bytes per rank,
 * linear in (alpha, 1/B per tier); alpha >= 0 and B > 0 kept by an active
 * set, least absolute relative deviations by IRLS (GSL).
 */
#include "allreduce_fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_multifit.h>

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
        if (calib_retie(worst, is_ok, bw, d->n_tiers, rep) == 0)
            continue;
        /* no tier is fine on its own (noisy small sets): merge with the
         * nearest other group, down to one, which is the untiered model */
        int is_group[CALIB_TIERS];
        for (unsigned t = 0; t < d->n_tiers; t++)
            is_group[t] = 1;
        if (calib_retie(worst, is_group, bw, d->n_tiers, rep) != 0)
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
    if (calib_tiers_are_valid(c->bw.n_tiers, c->bw.min_bytes))
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
    /* times that never grow with size leave no bandwidth term to fit: said
     * from the points, since the least-squares slope of flat times is zero
     * only up to the BLAS kernel's rounding (OpenBLAS's AVX-512 kernels give
     * it a tiny positive value) */
    int grows = 0;
    for (size_t i = 0; i < n_pts && !grows; i++)
        for (size_t j = 0; j < n_pts && !grows; j++)
            grows = pts[j].bytes > pts[i].bytes && pts[j].time_s > pts[i].time_s;
    if (!grows)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "all-reduce %s fit: times do not grow with size", name);
    unsigned base_rep[CALIB_TIERS], rep[CALIB_TIERS], next_rep[CALIB_TIERS];
    unsigned n_own = calib_tie_empty_tiers(count, d.n_tiers, base_rep);
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
