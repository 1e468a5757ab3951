/* throttle_run.c - thermal throttling on the step tier (run.h
 * run_throttle_init; docs/failures.md "Thermal throttling").
 *
 * The hours: the site's outdoor dry-bulb temperature hour by hour for a
 * year from the first hour of the start month (fac_temperature_profile, the
 * hours the energy account prices; a run longer than a year repeats them),
 * or its wet bulb (temperature="wet-bulb", the evaporative design's
 * default: fac_wetbulb_profile, as the energy account's evaporative stage).
 * An hour is hot when its temperature is strictly above the <throttle>'s.
 * The speed: one step-tier iteration with the throttled GPUs (GPUs 0 .. N-1,
 * or all) at the throttle speed times their own (a <straggler> or spread),
 * as `dcsim step --fail gpu=ID:S` prices a slow GPU; the job's speed in a hot
 * hour is the full iteration over that one. Simulated once per plan, only
 * when some hour is hot: a threshold above every hour leaves the campaign
 * exactly as without throttling.
 */
#include "run.h"

#include <math.h>
#include <stdlib.h>

#include "facility.h"
#include "steptier.h"

static int throttled_speed(const scn_scenario *s, run_plan *p, double full_iteration_s,
                           sim_error *err)
{
    size_t n = (size_t)s->campaign.gpu_count;
    size_t slow = s->throttle_gpus ? s->throttle_gpus : n;
    double *speed = malloc((n ? n : 1) * sizeof *speed);
    if (!speed)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
    for (size_t i = 0; i < n; i++)
        speed[i] = (p->gpu_speed && i < p->n_gpu_speed ? p->gpu_speed[i] : 1.0) *
                   (i < slow ? s->throttle_gpu_speed : 1.0);
    step_profile q;
    int rc = app_step_profile(s, speed, (unsigned)n, &q, err);
    p->throttle_gpu_speed = speed; /* kept for the degraded fabric's hot states */
    if (rc)
        return rc;
    p->throttle_iteration_s = q.iteration_s;
    step_profile_free(&q);
    if (!(p->throttle_iteration_s > 0 && isfinite(p->throttle_iteration_s)))
        return sim_error_set(err, SIM_ERR_INTERNAL, NULL, 0,
                             "the throttled iteration is %g s", p->throttle_iteration_s);
    p->campaign.throttle_speed = fmin(1.0, full_iteration_s / p->throttle_iteration_s);
    return 0;
}

int run_throttle_init(const scn_scenario *s, run_plan *p, double full_iteration_s,
                      sim_error *err)
{
    double *temp = malloc(FAC_HOURS_PER_YEAR * sizeof *temp);
    p->throttle_hot = malloc(FAC_HOURS_PER_YEAR);
    if (!temp || !p->throttle_hot) {
        free(temp);
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
    }
    uint64_t start = fac_month_start_hour((int)s->site.start_month - 1);
    int rc = fac_temperature_profile(&s->site.info.climate, start, FAC_HOURS_PER_YEAR, temp, err);
    if (!rc && s->throttle_wetbulb) { /* the wet bulb of each hour, in place */
        fac_wetbulb_profile(&s->site.info.climate, start, FAC_HOURS_PER_YEAR, temp, temp);
        for (unsigned h = 0; !rc && h < FAC_HOURS_PER_YEAR; h++)
            if (!isfinite(temp[h])) /* the loader refuses a site without humidity */
                rc = sim_error_set(err, SIM_ERR_INTERNAL, NULL, 0,
                                   "no wet-bulb temperature at hour %u", h);
    }
    p->throttle_hot_hours = 0;
    for (unsigned h = 0; !rc && h < FAC_HOURS_PER_YEAR; h++) {
        p->throttle_hot[h] = temp[h] > s->throttle_above_c;
        p->throttle_hot_hours += p->throttle_hot[h];
    }
    free(temp);
    if (rc || !p->throttle_hot_hours)
        return rc; /* never hot: the campaign as without throttling */
    rc = throttled_speed(s, p, full_iteration_s, err);
    if (!rc) {
        p->campaign.throttle_hot = p->throttle_hot;
        p->campaign.throttle_hours = FAC_HOURS_PER_YEAR;
    }
    return rc;
}
