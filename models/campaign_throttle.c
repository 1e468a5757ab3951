/* campaign_throttle.c - thermal throttling by the hour (campaign_config
 * throttle_*; docs/failures.md "Thermal throttling").
 *
 * The caller gives a cycle of hours from the run's start (a year of the
 * site's weather: hour h is hot when the outdoor temperature exceeds the
 * cooling design's threshold) and the job's speed in a hot hour (the step
 * tier's iteration with the throttled GPUs slow). The campaign runs at that
 * speed, as one more factor of its speed epoch, from the first hot hour's
 * start to the next cool hour's; one engine event per change (KIND_THROTTLE),
 * scheduled only when some hour is hot and some is not, so a run with no hot
 * hour schedules nothing and is the run without throttling, bit for bit, and
 * a run hot in every hour is the whole run at throttle_speed.
 */
#include "campaign_internal.h"

#include <math.h>

#define SECONDS_PER_HOUR 3600.0

static int hot_at(const campaign_config *cfg, uint64_t hour)
{
    return cfg->throttle_hot[hour % cfg->throttle_hours] != 0;
}

static void on_throttle(sim_engine *eng, void *ctx, uint64_t hour);

/* The next hour after `hour` (within one cycle) whose state differs from
 * the current one, scheduled; none when the cycle has no other state. */
static void schedule_next(campaign *c, uint64_t hour)
{
    const campaign_config *cfg = c->cfg;
    for (uint64_t k = 1; k <= cfg->throttle_hours; k++)
        if (hot_at(cfg, hour + k) != c->throttle_is_hot) {
            double at = (double)(hour + k) * SECONDS_PER_HOUR;
            sim_schedule_in(c->eng, fmax(0, at - sim_now(c->eng)), PRIO_FAILURE, KIND_THROTTLE,
                            on_throttle, c, hour + k);
            return;
        }
}

static void on_throttle(sim_engine *eng, void *ctx, uint64_t hour)
{
    campaign *c = ctx;
    if (c->state == CAMPAIGN_STATE_DONE)
        return;
    int hot = hot_at(c->cfg, hour);
    if (c->throttle_is_hot && !hot)
        c->res.throttle_hot_s += sim_now(eng) - c->throttle_since_s;
    c->throttle_is_hot = hot;
    c->throttle_since_s = sim_now(eng);
    c->res.throttle_changes++;
    if (campaign_fabric_hot(c))
        return; /* the run stopped */
    campaign_speed_changed(c);
    schedule_next(c, hour);
}

void campaign_throttle_reset(campaign *c)
{
    const campaign_config *cfg = c->cfg;
    c->throttle_is_hot = 0;
    c->throttle_since_s = 0;
    c->speed_thermal = 1;
    c->res.throttled = 0;
    if (!cfg->throttle_hours || !cfg->throttle_hot)
        return;
    unsigned any = 0;
    for (unsigned h = 0; h < cfg->throttle_hours && !any; h++)
        any = cfg->throttle_hot[h] != 0;
    if (!any)
        return; /* never hot: nothing scheduled, the run without throttling */
    c->res.throttled = 1;
    c->throttle_is_hot = hot_at(cfg, 0);
    schedule_next(c, 0);
}

void campaign_throttle_finish(campaign *c)
{
    if (c->throttle_is_hot)
        c->res.throttle_hot_s += sim_now(c->eng) - c->throttle_since_s;
}
