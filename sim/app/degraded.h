/* degraded.h - the campaign on a degraded fabric: the job's speed with
 * network parts down or slow, from the step tier re-simulated on what is
 * left, kept by the failure state's digest (docs/failures.md "The campaign
 * on a degraded fabric").
 *
 * The campaign draws a failing switch or cable as an index among its
 * cause's parts (campaign.h); this layer maps the index to the built
 * fabric's node or cable id (the k-th switch of the cause's tier, or the
 * k-th fabric cable of it, in id order: the order topo_stats counts them),
 * makes the failure state (fabric_fault.h), and looks its digest up in a
 * least-recently-used cache of iteration times; a miss runs
 * step_simulate_failed. The iteration for a state depends on the state
 * alone, so the speeds, and every campaign result, are the same whatever
 * the cache holds and whichever replica asks first.
 */
#ifndef DCSIM_APP_DEGRADED_H
#define DCSIM_APP_DEGRADED_H

#include <stddef.h>
#include <stdint.h>

#include "campaign.h"
#include "compute.h"
#include "fabric.h"
#include "fabric_fault.h"
#include "scenario.h"
#include "step.h"
#include "workload.h"

typedef struct degraded_entry {
    uint64_t digest;
    double iteration_s;  /* 0: the job cannot run on this state */
    double kept;         /* shrink: the share of the job's GPUs its shape runs on (1: all) */
    uint64_t last_use;
    int used;
} degraded_entry;

typedef struct run_degraded {
    workload w;
    compute_device dev;
    fabric f;                       /* as built */
    step_options o;
    double built_iteration_s;       /* the plan's iteration on the fabric as built */
    enum ff_class cls[CAMPAIGN_MAX_CAUSES];
    uint32_t *ids[CAMPAIGN_MAX_CAUSES]; /* per switch or cable cause with a repair time: the
                                           part ids by index (owned) */
    uint64_t n_ids[CAMPAIGN_MAX_CAUSES];
    uint8_t *tier[CAMPAIGN_MAX_CAUSES]; /* by index: the part's tier (0: host cables) */
    unsigned cage_ports;            /* transceiver parts: ports per cage (0: the catalog's) */
    int by_tier;                    /* states="by-tier": the k parts of a cause out stand
                                       for its parts 0 .. k-1 (degraded.c) */
    int shrink;                     /* <degraded policy="shrink">: GPUs cut off shrink the
                                       job (degraded_shrink.c) instead of refusing it */
    int reshard;                    /* <degraded reshard="true">: no whole replica left,
                                       the pipeline over fewer stages (degraded_shrink.c) */
    double hbm_bytes, reserved_bytes; /* per GPU, for the shrunk shape's memory check */
    signed char *cuts[CAMPAIGN_MAX_CAUSES]; /* shrink: per part, whether it cuts GPUs off
                                               down alone (2: not known yet; owned) */
    degraded_entry *cache;
    size_t capacity;
    uint64_t clock;
    /* statistics over every lookup (sums over replicas; with evictions their
     * split depends on the order replicas ask in, the speeds do not) */
    uint64_t lookups, hits, simulations, evictions, unrunnable_states;
    uint64_t shrunk_states;         /* of the simulations: on a shrunk shape */
    uint64_t resharded_states;      /* of those: re-sharded to fewer pipeline stages */
    double simulate_s;              /* wall seconds spent simulating misses */
    char first_refusal[256];        /* why the first state the job cannot run on was refused */
    /* thermal throttling on the degraded fabric (run_degraded_set_hot): the
     * per-GPU speeds with the throttled GPUs slow (owned; NULL: none), the
     * throttled iteration as built, and the lookups and simulations of the
     * combined states (also counted in the totals above) */
    double *hot_speed;
    unsigned n_hot_speed;
    double hot_iteration_s;
    uint64_t hot_lookups, hot_simulations;
    /* a slow node (a straggler) on the degraded fabric (run_degraded_set_slow):
     * the per-GPU speeds with the straggler's GPUs slow, cool and hot (owned;
     * NULL: none), their iterations as built, the slow set's hash (mixed into
     * the key) and the lookups and simulations of those states, hot or not
     * (also counted in the totals above, not in the hot ones) */
    double *slow_speed, *hot_slow_speed;
    unsigned n_slow_speed;
    double slow_iteration_s, hot_slow_iteration_s;
    uint64_t slow_set;
    uint64_t slow_lookups, slow_simulations;
} run_degraded;

/* Build the context of s (has_degraded) for a plan whose iteration as
 * built took built_iteration_s with the GPU speeds given. 0, or an error
 * (nothing held). */
int run_degraded_init(const scn_scenario *s, const double *gpu_speed, unsigned n_gpu_speed,
                      double built_iteration_s, run_degraded *d, sim_error *err);
void run_degraded_free(run_degraded *d); /* NULL-safe */

/* campaign_fabric_speed_fn: built / degraded iteration (0: cannot run),
 * serialised across threads. */
/* The built fabric's id of cause's part-th part (campaign_config.
 * fabric_part_id): a switch or NIC node id, or a cable's directed link 2C;
 * -1 outside the cause's parts. */
int64_t run_degraded_part_id(void *ctx, int32_t cause, uint64_t part);

double run_degraded_speed(void *ctx, const campaign_part_state *parts, unsigned n,
                          sim_error *err);

/* Thermal throttling (throttle_run.c): the GPUs' speeds in a hot hour
 * (copied) and the iteration with them on the fabric as built. 0, or an
 * error (out of memory). */
int run_degraded_set_hot(run_degraded *d, const double *speed, unsigned n,
                         double hot_iteration_s, sim_error *err);

/* campaign_config.fabric_hot_speed: built / the iteration of the state with
 * the throttled GPUs slow too (the same cache, the state's digest mixed with
 * a hot mark as the key), serialised across threads. */
double run_degraded_hot_speed(void *ctx, const campaign_part_state *parts, unsigned n,
                              sim_error *err);

/* Shrink (degraded_shrink.c). campaign_config.fabric_cuts: whether the part,
 * down alone, cuts GPUs off (memoised per part). campaign_config.fabric_kept:
 * the share of GPUs of the shape whose speed run_degraded_speed just gave on
 * this thread. */
int run_degraded_cuts(void *ctx, const campaign_part_state *part);
double run_degraded_kept(void *ctx, const campaign_part_state *parts, unsigned n);
void degraded_shrink_note_kept(double kept);
/* The iteration of the largest shape without the GPUs cut[] (e's), on the
 * fabric e leaves: > 0 with *kept set, 0 when no shape runs (counted, the
 * first reason kept), < 0 on an error (err). */
double degraded_simulate_shrunk(run_degraded *d, const ff_state *st, const ff_effect *e,
                                const unsigned char *cut, double *kept, sim_error *err);

/* Stragglers (straggler_run.c): the GPUs' speeds with the straggler's node
 * slow, cool and (hot_speed, NULL without throttling) hot, and their
 * iterations on the fabric as built; n GPUs each (copied). The slow set (the
 * GPUs whose speed differs from the plan's, with their speeds) is hashed into
 * the key. 0, or an error (out of memory). */
int run_degraded_set_slow(run_degraded *d, const double *speed, double slow_iteration_s,
                          const double *hot_speed, double hot_slow_iteration_s, unsigned n,
                          sim_error *err);

/* campaign_config.fabric_slow_speed: built / the iteration of the state with
 * the straggler's GPUs slow (and the throttled GPUs when hot) too: the same
 * cache, the state's digest mixed with the slow set (and the hot mark) as the
 * key, serialised across threads. */
double run_degraded_slow_speed(void *ctx, const campaign_part_state *parts, unsigned n,
                               int hot, sim_error *err);

/* The iteration of the state the parts make, 0 when the job cannot run on
 * it, negative on an error; and the state's digest (may be NULL). */
double run_degraded_iteration(run_degraded *d, const campaign_part_state *parts, unsigned n,
                              uint64_t *digest, sim_error *err);
/* The same with the throttled GPUs slow (mode RUN_DEGRADED_HOT:
 * run_degraded_set_hot given), the straggler's GPUs slow (RUN_DEGRADED_SLOW:
 * run_degraded_set_slow given), or both. */
enum { RUN_DEGRADED_HOT = 1, RUN_DEGRADED_SLOW = 2 };
double run_degraded_iteration_hot(run_degraded *d, const campaign_part_state *parts,
                                  unsigned n, int mode, uint64_t *digest, sim_error *err);

#endif
