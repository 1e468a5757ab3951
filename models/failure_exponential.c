/* failure_exponential.c - the exponential failure process: time to failure
 * Exp(rate), mean 1 / rate; memoryless, so a unit's exponential causes
 * superpose on one stream at their summed rate, the cause of each failure
 * drawn in proportion to the rates (campaign_failures.c). No shape. */
#include <gsl/gsl_randist.h>

#include "failure_process.h"

static int check(const campaign_cause *x)
{
    return x->shape == 0 ? 0 : -1;
}

static double draw(gsl_rng *r, double rate_per_s, double shape)
{
    (void)shape;
    return gsl_ran_exponential(r, 1.0 / rate_per_s);
}

const failure_process failure_exponential = {
    .name = "exponential",
    .doc = "constant hazard: time to failure Exp(rate), memoryless (causes of a unit share "
           "one stream)",
    .check = check,
    .draw = draw,
};
