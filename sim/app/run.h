/* run.h - one scenario turned into results: the pipeline every command that
 * runs a scenario shares (run, compare, goodput, sweep).
 *
 *   scn_scenario (inputs, never changed)
 *     -> run_plan_prepare: resource check, the per-GPU speeds of <step>
 *        stragglers (drawn here, not at load), the step tier when the
 *        scenario gives no MFU (iteration, elastic and straggler speeds),
 *        the finished campaign configuration
 *     -> run_execute (once, or once per replica / variant): the campaign,
 *        and at a <site> the energy account fed by its timeline
 *     -> run_outcome: the campaign's result and the energy account.
 *
 * A plan is read-only after run_plan_prepare, so run_execute may run on
 * several threads at once on one plan (replicas of a sweep point).
 */
#ifndef DCSIM_APP_RUN_H
#define DCSIM_APP_RUN_H

#include "campaign.h"
#include "energyrun.h"
#include "error.h"
#include "scenario.h"
#include "packetcfg.h"
#include "step.h"

/* What the step tier decided for the campaign; used is 0 when the scenario
 * gives an MFU (nothing else is then set). */
typedef struct run_step {
    int used;
    step_profile profile;     /* the iteration's profile (owned) */
    double iteration_s;
    double mfu_frac;          /* Megatron-Core MFU of the profile */
    double exposed_comm_s;    /* TP + PP + DP + CP + EP not hidden, critical stage */
    double bubble_s;
    double compute_frac;      /* GPU compute share of the iteration (power model); 1 unused */
    double *elastic_speed;    /* <spares elastic>: speed with k replicas missing; owned */
    app_packet_cfg packet;    /* network="packet": the tier's parameters (profile's series) */
} run_step;

typedef struct run_plan {
    const scn_scenario *scn;  /* the inputs; must outlive the plan */
    campaign_config campaign; /* scn's campaign, finished: the MFU and speeds of the step
                                 tier (its elastic_speed points into step) */
    run_step step;
    double *gpu_speed;        /* per GPU, from <step straggler-spread> and <straggler>:
                                 what the step tier runs with; NULL = all nominal; owned */
    unsigned n_gpu_speed;
    int with_energy;          /* run_execute keeps an energy account (a <site>, and asked) */
    /* a degraded fabric (scn->has_degraded): the campaign's fabric_speed
     * context, the one part of the plan that changes while replicas run
     * (its cache, serialised: degraded.h); owned, NULL without */
    struct run_degraded *degraded;
    /* thermal throttling (scn->throttle_given; throttle_run.c): the site's
     * hot hours, a year from the run's start (campaign.throttle_hot points
     * here when one is hot; owned, NULL without), how many are hot, and the
     * step tier's iteration with the throttled GPUs slow (0: not simulated,
     * no hour hot) */
    unsigned char *throttle_hot;
    unsigned throttle_hot_hours;
    double throttle_iteration_s;
    double *throttle_gpu_speed; /* the GPUs' speeds it ran with (campaign.gpu_count;
                                   owned, NULL: not simulated) */
    /* stragglers on the step tier (straggler_run.c): the GPUs' speeds with
     * the straggler's node slow and that iteration (owned; NULL, 0: none) */
    double *straggler_gpu_speed;
    double straggler_iteration_s;
} run_plan;

/* The site's hours above the <throttle>'s temperature (fac_temperature_profile
 * of its climate from the start month: the energy account's hours) and,
 * when one is hot, the job's speed in them: the step tier's iteration with
 * the throttled GPUs at the throttle speed (times their own), t_full /
 * t_throttled, at most 1. 0 or an error (the step tier's, out of memory). */
int run_throttle_init(const scn_scenario *s, run_plan *p, double full_iteration_s,
                      sim_error *err);

/* <reliability><stragglers> on the step tier: the job's speed while a node
 * is slow (campaign.straggler_speed), from the iteration with the middle
 * node's GPUs slow. 0 or an error (the step tier's, out of memory). */
int run_straggler_init(const scn_scenario *s, run_plan *p, double full_iteration_s,
                       sim_error *err);

/* A slow node in a hot hour and/or on a degraded fabric: one step-tier
 * iteration with everything applied (campaign.straggler_hot_speed, the
 * degraded cache's slow states: campaign.fabric_slow_speed). After
 * run_straggler_init, run_throttle_init and the degraded context. 0 or an
 * error. */
int run_straggler_combine(const scn_scenario *s, run_plan *p, sim_error *err);

enum {
    RUN_PLAN_ENERGY = 1,      /* at a <site>, account energy, cost and carbon */
    RUN_PLAN_GUARD_DONE = 2,  /* the caller ran the resource guard (a sweep, once for all
                                 its points) */
    RUN_PLAN_STEP_INPUTS = 4, /* only what the step tier reads (the per-GPU speeds): no
                                 guard, no step tier (`dcsim step` times one iteration) */
};

/* Prepare the plan of s for `parallel_campaigns` campaigns in memory at once
 * (res_parallel_campaigns; the resource guard's estimate). flags:
 * RUN_PLAN_*. The per-GPU speeds are drawn when the step tier runs (or
 * with RUN_PLAN_STEP_INPUTS): GPU g's is 1 - |N(0, spread)| from its own
 * stream (seed, GPU g, speed), then the named <straggler>s in order.
 * Returns 0, or an error (the guard's refusal, out of memory, the step
 * tier's, an MFU the iteration implies outside (0, 1]); free the plan with
 * run_plan_free either way. */
int run_plan_prepare(const scn_scenario *s, unsigned parallel_campaigns, unsigned flags,
                     run_plan *p, sim_error *err);
void run_plan_free(run_plan *p); /* NULL-safe */

/* What one execution produced. */
typedef struct run_outcome {
    campaign_result result;
    int has_energy;
    energy_run energy;        /* result.energy and the cluster's counts when has_energy */
} run_outcome;

/* Run the plan's campaign once: with config (NULL: the plan's; a replica's
 * copy with its own seed, a goodput interval), inner (may be NULL) sees
 * every event and segment (the trace), poll as campaign_run's. Returns 0
 * or an error (the campaign's have no location: the caller names what ran); free
 * the outcome with run_outcome_free either way. */
int run_execute(const run_plan *p, const campaign_config *config, const campaign_sink *inner,
                campaign_poll_fn poll, void *poll_ctx, run_outcome *out, sim_error *err);
void run_outcome_free(run_outcome *o); /* NULL-safe */

#endif
