/* run.c - a scenario turned into results (see run.h): the step tier's
 * coupling to the campaign (the iteration through the MFU it implies, the
 * speeds of elastic and straggling jobs) and the campaign with its energy
 * account. */
#include "run.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "power.h"
#include "resources.h"
#include "rng.h"
#include "degraded.h"
#include "steptier.h"

/* <step straggler-spread> and <straggler>: each GPU's speed is
 * 1 - |N(0, spread)|, from its own stream, so the draws depend on neither
 * the GPU count nor the thread count; then the named stragglers in file
 * order (a later one for the same GPU wins). The loader bounds the GPU
 * count (MAX_SPEED_GPUS). */
static int draw_gpu_speeds(const scn_scenario *s, run_plan *p, sim_error *err)
{
    if (!(s->straggler_spread > 0) && !s->n_stragglers)
        return 0;
    uint64_t gpus = s->campaign.gpu_count;
    double *speed = malloc(gpus * sizeof *speed);
    if (!speed)
        return sim_error_set(err, SIM_ERR_NOMEM, s->source, 0, "out of memory for %llu GPU speeds",
                             (unsigned long long)gpus);
    for (uint64_t g = 0; g < gpus; g++) {
        speed[g] = 1;
        if (s->straggler_spread > 0) {
            gsl_rng *r = sim_rng_stream_create(s->seed, SIM_ENTITY_GPU, g, SIM_PURPOSE_SPEED);
            if (!r) {
                free(speed);
                return sim_error_set(err, SIM_ERR_NOMEM, s->source, 0,
                                     "out of memory for random streams");
            }
            speed[g] = 1 - fabs(gsl_ran_gaussian(r, s->straggler_spread));
            gsl_rng_free(r);
        }
    }
    for (size_t i = 0; i < s->n_stragglers; i++)
        speed[s->stragglers[i].gpu] = s->stragglers[i].speed;
    p->gpu_speed = speed;
    p->n_gpu_speed = (unsigned)gpus;
    return 0;
}

/* <spares elastic="true"> on the step tier: the job's speed with k of its
 * dp replicas missing, from the profile of the smaller job (same
 * micro-batches per replica, so a global batch (dp - k) / dp as large):
 * tokens per second relative to the whole job. The profiles are simulated
 * at k = 1, 2, 4, 8 ... and at the most missing; the iteration time between
 * them is interpolated linearly in k (it changes smoothly with dp: only
 * the data-parallel collectives see the replica count). */
static int elastic_speeds(const scn_scenario *s, run_plan *p, double full_iteration_s,
                          sim_error *err)
{
    unsigned dp = s->par.dp, most = p->campaign.elastic_max_missing;
    double *speed = calloc((size_t)most + 1, sizeof *speed);
    double *iteration = calloc((size_t)most + 1, sizeof *iteration);
    step_cache *cache = step_cache_create(1, p->gpu_speed, p->n_gpu_speed);
    int rc = 0;
    if (!speed || !iteration || !cache)
        rc = sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
    unsigned prev = 0;
    if (!rc)
        iteration[0] = full_iteration_s;
    for (unsigned k = 1; !rc && prev < most; k *= 2) {
        unsigned at = k < most ? k : most;
        const step_profile *q = step_cache_get(cache, s, dp - at, 0, err);
        if (!q) {
            rc = err->code;
            break;
        }
        iteration[at] = q->iteration_s;
        for (unsigned j = prev + 1; j < at; j++)
            iteration[j] = iteration[prev] +
                           (iteration[at] - iteration[prev]) * (double)(j - prev) / (at - prev);
        prev = at;
    }
    for (unsigned k = 1; !rc && k <= most; k++) /* at most 1: fewer GPUs are not faster */
        speed[k] = fmin(1.0, (double)(dp - k) / dp * full_iteration_s / iteration[k]);
    free(iteration);
    step_cache_free(cache);
    if (rc) {
        free(speed);
        return rc;
    }
    speed[0] = 1;
    p->step.elastic_speed = speed;
    p->campaign.elastic_speed = speed;
    return 0;
}

/* No MFU in the scenario: one iteration on the step tier sets the
 * campaign's iteration time (through the MFU that gives it), and the speeds
 * of elastic and straggling jobs. */
static int step_decides(const scn_scenario *s, run_plan *p, sim_error *err)
{
    run_step *st = &p->step;
    sim_error e; /* the step tier's error, reported with the scenario and what failed */
    sim_error_clear(&e);
    if (s->step.packet ? app_step_profile_run_packet(s, p->gpu_speed, p->n_gpu_speed,
                                                     &st->packet, &st->profile, &e)
                       : app_step_profile(s, p->gpu_speed, p->n_gpu_speed, &st->profile, &e))
        return sim_error_set(err, e.code, s->source, 0, "step tier: %s", e.msg);
    const step_profile *prof = &st->profile;
    campaign_config *c = &p->campaign;
    double tokens = fmin(c->tokens_per_iteration, c->train_tokens);
    c->mfu_frac = 6.0 * c->model_params * tokens /
                  (prof->iteration_s * (double)c->gpu_count * c->gpu_peak_flops_per_s);
    st->used = 1;
    st->iteration_s = prof->iteration_s;
    st->mfu_frac = prof->mfu;
    st->bubble_s = prof->part_s[STEP_BUBBLE];
    st->exposed_comm_s = prof->part_s[STEP_TP] + prof->part_s[STEP_PP] + prof->part_s[STEP_DP] +
                         prof->part_s[STEP_CP] + prof->part_s[STEP_EP];
    st->compute_frac = pwr_compute_frac_of_step(prof);
    if (!(c->mfu_frac > 0 && c->mfu_frac <= 1))
        return sim_error_set(err, SIM_ERR_INPUT, s->source, 0,
                             "step tier: the iteration (%.6g s) implies a 6ND utilisation of %.4g, "
                             "outside (0, 1]", st->iteration_s, c->mfu_frac);
    if (c->elastic_replicas && elastic_speeds(s, p, prof->iteration_s, &e))
        return sim_error_set(err, e.code, s->source, 0, "elastic continuation: %s", e.msg);
    if (c->straggler_rate_per_s > 0 && run_straggler_init(s, p, prof->iteration_s, &e))
        return sim_error_set(err, e.code, s->source, 0, "stragglers: %s", e.msg);
    if (s->throttle_given && run_throttle_init(s, p, prof->iteration_s, &e))
        return sim_error_set(err, e.code, s->source, 0, "thermal throttling: %s", e.msg);
    if (s->has_degraded) { /* the job's speed on the fabric left, state by state */
        p->degraded = calloc(1, sizeof *p->degraded);
        if (!p->degraded)
            return sim_error_set(err, SIM_ERR_NOMEM, s->source, 0, "out of memory");
        if (run_degraded_init(s, p->gpu_speed, p->n_gpu_speed, prof->iteration_s, p->degraded,
                              &e)) {
            free(p->degraded);
            p->degraded = NULL;
            return sim_error_set(err, e.code, s->source, 0, "degraded fabric: %s", e.msg);
        }
        c->fabric_speed = run_degraded_speed;
        c->fabric_ctx = p->degraded;
        c->fabric_part_id = run_degraded_part_id;
        c->fabric_cuts = run_degraded_cuts;
        c->fabric_kept = run_degraded_kept;
        if (p->throttle_iteration_s > 0) { /* hot hours: throttling on the fabric left too */
            if (run_degraded_set_hot(p->degraded, p->throttle_gpu_speed,
                                     (unsigned)c->gpu_count, p->throttle_iteration_s, &e))
                return sim_error_set(err, e.code, s->source, 0, "degraded fabric: %s", e.msg);
            c->fabric_hot_speed = run_degraded_hot_speed;
        }
    }
    if (c->straggler_rate_per_s > 0 && run_straggler_combine(s, p, &e))
        return sim_error_set(err, e.code, s->source, 0, "stragglers: %s", e.msg);
    return 0;
}

/* Told the answer: with <training mfu> the fabric cannot change the time
 * to train, so a network what-if would silently print the same figure.
 * Once per process (a sweep or compare prepares many plans). */
static void warn_mfu_with_fabric(const scn_scenario *s)
{
    static int warned;
    if (warned || s->step_computes_iteration || !s->has_fabric || !s->mfu_line)
        return;
    warned = 1;
    fprintf(stderr, "%s:%ld: warning: <training mfu=\"%g%%\"> fixes the iteration time, so the "
            "<fabric> (its links, routing and topology) does not affect time to train; remove "
            "mfu to time the iteration with the step tier\n",
            s->source, s->mfu_line, 100 * s->campaign.mfu_frac);
}

int run_plan_prepare(const scn_scenario *s, unsigned parallel_campaigns, unsigned flags,
                     run_plan *p, sim_error *err)
{
    memset(p, 0, sizeof *p);
    p->scn = s;
    p->campaign = s->campaign;
    p->step.compute_frac = 1; /* without a profile every GPU computes all of it */
    p->with_energy = (flags & RUN_PLAN_ENERGY) && s->site.given;
    if (flags & RUN_PLAN_STEP_INPUTS)
        return draw_gpu_speeds(s, p, err);
    warn_mfu_with_fabric(s);
    int rc = flags & RUN_PLAN_GUARD_DONE
                 ? 0
                 : res_check(s, s->step_computes_iteration ? RES_STEP : 0, parallel_campaigns, err);
    if (!rc && s->step_computes_iteration)
        rc = draw_gpu_speeds(s, p, err);
    if (!rc && s->step_computes_iteration)
        rc = step_decides(s, p, err);
    return rc;
}

void run_plan_free(run_plan *p)
{
    if (!p)
        return;
    step_profile_free(&p->step.profile);
    free(p->step.elastic_speed);
    run_degraded_free(p->degraded);
    free(p->degraded);
    free(p->gpu_speed);
    free(p->throttle_hot);
    free(p->throttle_gpu_speed);
    free(p->straggler_gpu_speed);
    memset(p, 0, sizeof *p);
}

int run_execute(const run_plan *p, const campaign_config *config, const campaign_sink *inner,
                campaign_poll_fn poll, void *poll_ctx, run_outcome *out, sim_error *err)
{
    memset(out, 0, sizeof *out);
    const scn_scenario *s = p->scn;
    const campaign_config *c = config ? config : &p->campaign;
    campaign_sink sink = inner ? *inner : (campaign_sink){0};
    int rc = 0;
    if (p->with_energy) { /* at a <site>: energy, cost and carbon of this timeline */
        out->has_energy = 1;
        rc = energy_run_setup(s, campaign_iteration_time_s(c), p->step.compute_frac,
                              &out->energy, err);
        sink = energy_run_sink(&out->energy, &sink);
    }
    if (!rc)
        rc = campaign_run(c, &sink, poll, poll_ctx, &out->result, err);
    if (!rc && out->has_energy)
        rc = energy_run_finish(&out->energy, err);
    return rc;
}

void run_outcome_free(run_outcome *o)
{
    if (!o)
        return;
    if (o->has_energy)
        energy_run_free(&o->energy);
    o->has_energy = 0;
}
