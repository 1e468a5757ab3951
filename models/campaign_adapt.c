/* campaign_adapt.c - the checkpoint interval adapted to the failure rate
 * the job has seen (campaign_config.checkpoint_adapt_window_s; docs/failures.md
 * "An adaptive checkpoint interval").
 *
 * The estimate is an exponentially weighted count of interruptions with
 * memory W, started at the prior rate as if the cluster had failed at it
 * before the job began:
 *   rate(t) = prior e^(-t/W) + (1/W) sum_{t_i <= t} e^(-(t - t_i)/W).
 * For a Poisson process of rate L it is unbiased once the prior has decayed
 * (E[(1/W) sum] = L (1 - e^(-t/W))), and with W -> infinity it stays at the
 * prior, so the run equals interval="auto" (the tests check both). Kept as
 * one running sum, brought forward at each interruption: O(1) memory
 * however many failures.
 */
#include "campaign_internal.h"

#include <math.h>

/* the sum brought forward to `now` */
static double decayed_sum(const campaign *c, double now)
{
    double w = c->cfg->checkpoint_adapt_window_s;
    return c->adapt_sum * exp(-(now - c->adapt_last_s) / w);
}

void campaign_adapt_observe(campaign *c, double now)
{
    if (!(c->cfg->checkpoint_adapt_window_s > 0))
        return;
    c->adapt_sum = decayed_sum(c, now) + 1.0;
    c->adapt_last_s = now;
}

double campaign_adapt_rate_per_s(const campaign *c, double now)
{
    const campaign_config *cfg = c->cfg;
    double w = cfg->checkpoint_adapt_window_s;
    return cfg->checkpoint_adapt_prior_rate_per_s * exp(-now / w) + decayed_sum(c, now) / w;
}

uint64_t campaign_adapt_every(campaign *c, double now)
{
    const campaign_config *cfg = c->cfg;
    if (!(cfg->checkpoint_adapt_window_s > 0))
        return c->every;
    double rate = campaign_adapt_rate_per_s(c, now);
    /* no failure expected: only the final checkpoint (cadence caps at n_it) */
    campaign_config tau = {.checkpoint_interval_s = rate > 0 ? campaign_daly_interval_s(
                                                                   cfg->checkpoint_write_s, 1 / rate)
                                                             : INFINITY};
    uint64_t every = campaign_cadence(&tau, c->res.iteration_time_s, c->n_iterations);
    double interval = (double)every * c->res.iteration_time_s;
    campaign_result *r = &c->res;
    r->checkpoint_adaptations += every != c->every;
    r->checkpoint_interval_min_s = fmin(r->checkpoint_interval_min_s, interval);
    r->checkpoint_interval_max_s = fmax(r->checkpoint_interval_max_s, interval);
    c->every = every;
    return every;
}
