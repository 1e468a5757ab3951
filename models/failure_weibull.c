/* failure_weibull.c - the Weibull failure process: time to failure
 * Weibull(shape k, scale a = mean / Gamma(1 + 1/k)), mean 1 / rate (shape
 * < 1: infant mortality; > 1: wear-out), renewed with a fresh part after
 * each failure. The first failure of a unit of random age is its residual
 * life U x L, L length-biased: (L/a)^k ~ Gamma(1 + 1/k, 1). k from 1/170
 * (Gamma(1 + 1/k) finite in a double) to 100 (campaign.h). */
#include <math.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_sf_gamma.h>

#include "failure_process.h"

static int check(const campaign_cause *x)
{
    return x->shape >= CAMPAIGN_WEIBULL_SHAPE_MIN && x->shape <= CAMPAIGN_WEIBULL_SHAPE_MAX ? 0
                                                                                            : -1;
}

static double draw(gsl_rng *r, double rate_per_s, double k)
{
    double mean = 1 / rate_per_s;
    return gsl_ran_weibull(r, mean / gsl_sf_gamma(1 + 1 / k), k);
}

static double residual(gsl_rng *r, double rate_per_s, double k)
{
    double a = 1 / rate_per_s / gsl_sf_gamma(1 + 1 / k);
    /* G^(1/k) alone can overflow for small k (a is tiny then): multiply in logs */
    double length = exp(log(a) + log(gsl_ran_gamma(r, 1 + 1 / k, 1)) / k);
    return gsl_rng_uniform(r) * length;
}

const failure_process failure_weibull = {
    .name = "weibull",
    .doc = "Weibull(shape, mean 1/rate) per unit, renewed at each replacement; the first "
           "failure a residual life (the cluster in steady state)",
    .check = check,
    .draw = draw,
    .residual = residual,
};
