/* gemm_fit.c - the CPU as a compute_device and the fit of its GEMM times
 * (contract in gemm_fit.h). Model: compute_gemm_time_s (models/compute.h),
 *   t = launch_s + max(W 2 tile_m tile_n k / (R / sms), bytes / B(bytes)),
 *   W = ceil(ceil(m/tile_m) ceil(n/tile_n) / sms), B(bytes) a step function
 *   of size tiers; R, launch_s and one B per tier fitted in log space (GSL).
 */
#include "gemm_fit.h"

#include <math.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>

#include "precision.h"

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

void calib_gemm_terms(const calib_gemm_model *g, const calib_gemm_point *p, double *compute_s,
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
    calib_gemm_terms(g, p, &compute_s, &memory_s);
    return memory_s >= compute_s;
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
    if (calib_tiers_are_valid(g->n_tiers, g->tier_min_bytes))
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
    unsigned n_own = calib_tie_empty_tiers(count, d.g.n_tiers, d.rep);
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
            if (d.rep[t] == t && !has_mem[t] &&
                calib_retie(t, has_mem, fit.tier_bytes_per_s, d.g.n_tiers, d.rep) == 0) {
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
