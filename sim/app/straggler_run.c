/* straggler_run.c - stragglers on the step tier (run.h run_straggler_init,
 * run_straggler_combine; docs/failures.md "A slow node in a hot hour or on a
 * degraded fabric").
 *
 * The job's speed while a node is slow: one iteration with that node's GPUs
 * at the straggler speed (times their own: a <straggler> or spread), as
 * `dcsim step --fail node=ID:S` prices it; the iteration waits for the slow
 * node only as long as its compute share makes it. The node is the one in
 * the middle of the GPU numbering: in Megatron's order a middle pipeline
 * stage, where most nodes are (the first and last stages often carry fewer
 * layers, and so have slack to absorb a slow node). The campaign's model has
 * the job at this speed while any node is slow, so the middle node stands for
 * the slow set whichever nodes are slow.
 *
 * In a hot hour and/or with network parts out the slow node is not one more
 * factor of the speed but part of one iteration with everything applied: the
 * throttled GPUs and the slow node's on the fabric as built (once per plan,
 * only when some hour is hot), or on the fabric the parts leave (the degraded
 * states' cache, keyed by the state's digest mixed with the slow set).
 */
#include "run.h"

#include <math.h>
#include <stdlib.h>

#include "degraded.h"
#include "steptier.h"

/* The first GPU of the straggler's node. */
static size_t slow_first(const scn_scenario *s, unsigned *per_node)
{
    size_t n = (size_t)s->campaign.gpu_count;
    *per_node = s->campaign.gpus_per_node ? s->campaign.gpus_per_node : 8;
    return n / 2 / *per_node * *per_node;
}

int run_straggler_init(const scn_scenario *s, run_plan *p, double full_iteration_s,
                       sim_error *err)
{
    size_t n = (size_t)s->campaign.gpu_count;
    unsigned per_node;
    size_t middle = slow_first(s, &per_node);
    double *speed = malloc((n ? n : 1) * sizeof *speed);
    if (!speed)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
    for (size_t i = 0; i < n; i++)
        speed[i] = (p->gpu_speed && i < p->n_gpu_speed ? p->gpu_speed[i] : 1.0) *
                   (i >= middle && i < middle + per_node ? s->straggler_gpu_speed : 1.0);
    step_profile q;
    int rc = app_step_profile(s, speed, (unsigned)n, &q, err);
    p->straggler_gpu_speed = speed; /* kept for the combined states */
    if (rc)
        return rc;
    p->straggler_iteration_s = q.iteration_s;
    p->campaign.straggler_speed = fmin(1.0, full_iteration_s / q.iteration_s);
    step_profile_free(&q);
    return 0;
}

int run_straggler_combine(const scn_scenario *s, run_plan *p, sim_error *err)
{
    campaign_config *c = &p->campaign;
    size_t n = (size_t)c->gpu_count;
    if (!p->straggler_gpu_speed || !(p->straggler_iteration_s > 0))
        return 0;
    double *both = NULL, t_both = 0;
    if (p->throttle_iteration_s > 0 && p->throttle_gpu_speed) { /* hot hours and a slow node */
        unsigned per_node;
        size_t middle = slow_first(s, &per_node);
        both = malloc((n ? n : 1) * sizeof *both);
        if (!both)
            return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
        for (size_t i = 0; i < n; i++)
            both[i] = p->throttle_gpu_speed[i] *
                      (i >= middle && i < middle + per_node ? s->straggler_gpu_speed : 1.0);
        step_profile q;
        int rc = app_step_profile(s, both, (unsigned)n, &q, err);
        if (rc) {
            free(both);
            return rc;
        }
        t_both = q.iteration_s;
        step_profile_free(&q);
        if (!(t_both > 0 && isfinite(t_both))) {
            free(both);
            return sim_error_set(err, SIM_ERR_INTERNAL, NULL, 0,
                                 "the iteration with a node slow in a hot hour is %g s", t_both);
        }
        c->straggler_hot_speed = fmin(1.0, p->step.iteration_s / t_both);
    }
    int rc = 0;
    if (p->degraded) { /* a slow node on the fabric the parts leave */
        rc = run_degraded_set_slow(p->degraded, p->straggler_gpu_speed, p->straggler_iteration_s,
                                   both, t_both, (unsigned)n, err);
        if (!rc)
            c->fabric_slow_speed = run_degraded_slow_speed;
    }
    free(both);
    return rc;
}
