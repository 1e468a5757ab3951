/* campaign.h - the campaign tier: the whole training run, to the last token.
 *
 * Work (DESIGN.md section 1): 6 N FLOPs per token (dense transformer, fwd +
 *   bwd) at G peak MFU, so t_it = 6 N T / (G peak MFU); n_it = ceil(D / T),
 *   the last iteration carries the remaining tokens. A checkpoint every
 *   k = max(1, round(tau / t_it)) iterations (or a fixed k) and at the last
 *   token: a blocking write of w seconds, or async (a snapshot stall, then a
 *   background persist that slows compute and is durable only when done).
 * Failures (campaign_failures.c): named causes of GPUs, nodes, racks (all
 *   their nodes at once), switches and cables (parts counted by the caller,
 *   e.g. from the topology), plus an unnamed per-GPU rate. Exponential causes
 *   share one random stream per unit, the cause drawn in proportion to the
 *   rates; Weibull causes renew per unit on their own streams, the first
 *   failure a residual life (a cluster in steady state). A failure rolls
 *   the job back to the last durable checkpoint (progress since, and any
 *   half-written checkpoint, lost) and restarts it after u0 plus a drawn
 *   detection delay (health check, collective timeout); a failure during a
 *   restart starts it over. Silent causes (data corruption) are found after
 *   Exp(detection_s) and roll back to the last checkpoint from before them.
 * Operations: a limited spare pool (swap, Exp repair, waits for a repaired
 *   node), elastic continuation on fewer data-parallel replicas, stragglers
 *   slowing the synchronous job until drained at a checkpoint, and planned
 *   maintenance windows.
 * Bounds (campaign_outlook.c): a closed-form outlook (expected ETTR and
 *   engine events) refuses runs that cannot finish before simulating; the
 *   run itself stops with an error past an event cap or the give-up horizon
 *   (CAMPAIGN_GIVE_UP_FACTOR x its compute time). Replicas and their
 *   statistics: campaign_mc.c.
 * Degraded fabric (campaign_fabric.c): switch and cable causes with a
 *   repair time leave their part down (or slow) until repaired; the job's
 *   speed on what is left comes from the caller (the step tier re-simulated
 *   on the degraded fabric), the restart follows a policy (re-place, restart
 *   on the fabric left, wait for the repair).
 * Conservation: elapsed = productive compute + rework + checkpoint writes
 *   + aborted writes + restart time (waits for spares and repairs included)
 *   + the persist, elastic, degraded, throttle and straggler stretches
 *   + maintenance (asserted by the tests).
 * First-order check (tests): ETTR ~ (1 - L (u0 + tau/2)) / (1 + w/tau), L the
 *   cluster failure rate; optimal intervals: Young 1974, Daly 2006 eq. 37.
 */
#ifndef DCSIM_MODELS_CAMPAIGN_H
#define DCSIM_MODELS_CAMPAIGN_H

#include <stdint.h>

#include "error.h"

/* A cause of failure: every unit (GPU, or node of gpus_per_node GPUs) of
 * the job fails from it after a time drawn from its failure process
 * (failure_process.h) of mean 1/rate. Exponential (memoryless) causes share
 * the unit's own random stream (one stream per unit carries all of them:
 * the next failure after Exp(sum of rates), its cause drawn in proportion
 * to the rates). A Weibull cause instead renews on its own stream per unit:
 * time to failure Weibull(shape k, scale = mean / Gamma(1 + 1/k)), a fresh
 * part after each failure (shape < 1: infant mortality; > 1: wear-out). The
 * job starts on a cluster in steady state: each unit's first failure is its
 * residual life (a part of random age), so the rate is 1/mean from the
 * start, not only in the long run. */
/* A rack (or PDU) cause takes out all its nodes at once: one interruption,
 * but nodes_per_rack nodes to replace from the spare pool and to repair. */
/* What fails independently. GPU, node and rack causes take those out (a
 * rack: all its nodes at once); SWITCH, CABLE and NIC causes are network
 * parts counted by the caller (cause.parts, from the topology): a switch
 * takes out all its links at once, a NIC its fabric cables (its GPUs lose the
 * fabric), so each is one interruption; the part is replaced or routed
 * around within the restart, so it needs no spare node. */
enum campaign_unit {
    CAMPAIGN_UNIT_GPU = 0,
    CAMPAIGN_UNIT_NODE = 1,
    CAMPAIGN_UNIT_RACK = 2,
    CAMPAIGN_UNIT_SWITCH = 3,
    CAMPAIGN_UNIT_CABLE = 4,
    CAMPAIGN_UNIT_NIC = 5,
    CAMPAIGN_UNIT_TRANSCEIVER = 6 /* a switch's transceiver cage: its cables (fabric_fault.h) */
};

/* A network part of the built fabric (switch, cable, NIC): counted from the
 * topology, exponential on one stream per cause, repairable on a degraded
 * fabric. */
static inline int campaign_unit_is_fabric_part(int unit)
{
    return unit == CAMPAIGN_UNIT_SWITCH || unit == CAMPAIGN_UNIT_CABLE ||
           unit == CAMPAIGN_UNIT_NIC || unit == CAMPAIGN_UNIT_TRANSCEIVER;
}
#define CAMPAIGN_MAX_CAUSES 32

typedef struct campaign_cause {
    char name[48];       /* "Faulty GPU" */
    char category[32];   /* "GPU", "Host", "Network", "Dependency", ... */
    int unit;            /* enum campaign_unit */
    double rate_per_s;   /* per unit: 1 / mean time to failure */
    uint64_t parts;      /* SWITCH, CABLE and NIC units: how many (exponential only: one stream
                            per cause at parts x rate, the failing part drawn uniformly) */
    double detection_s;  /* > 0: silent (data corruption): found after Exp(detection_s), the
                            job rolls back to the last checkpoint from before it */
    unsigned process;    /* its failure process: index in failure_processes
                            (failure_process.h); 0, exponential, superposed on the unit's
                            stream; FAILURE_WEIBULL: of this shape and mean 1/rate,
                            renewed at each replacement, on its own stream per unit */
    double shape;        /* the process's shape (Weibull k); 0 for the exponential */
    /* SWITCH, CABLE and NIC causes on a degraded fabric (campaign_config.fabric_speed;
     * docs/failures.md "The campaign on a degraded fabric"): repair_s > 0 keeps
     * the failed part out for Exp(repair_s) (0: replaced within the restart,
     * as before); slow_speed in (0, 1) makes the cause fail-slow: the part
     * runs at that fraction of its rate until repaired, with no interruption
     * (0: the part goes down and the job is interrupted). */
    double repair_s;
    double slow_speed;
    /* CABLE causes that flap (flaps > 0; docs/failures.md "Flapping links"):
     * a failure starts an episode in which the cable goes down for
     * flap_down_s and comes back up for flap_up_s, flaps times, or until its
     * repair (Exp(repair_s) after the episode began) if that comes first. A
     * down is a degraded state (rerouted around), an interruption only when
     * the job cannot run on it (GPUs cut off, no route). flaps 0: no flapping,
     * the cause as above. */
    double flap_down_s, flap_up_s;
    unsigned flaps;
    /* the law of each flap's down and up durations: FIXED, exactly
     * flap_down_s and flap_up_s; EXPONENTIAL, drawn Exp with those means on
     * the cause's own flap stream (its repairs keep theirs) */
    int flap_law;
} campaign_cause;

enum campaign_flap_law { CAMPAIGN_FLAP_FIXED = 0, CAMPAIGN_FLAP_EXPONENTIAL = 1 };

/* What a restart does about network parts that are down (policies compare
 * with each other; slow parts always slow the job while they last):
 *   REPLACE  re-place the job off the failed part: the iteration as built
 *            (the spare capacity assumed; what every run did before)
 *   RESTART  restart at once on the fabric left, at its iteration time; when
 *            the job cannot run there (GPUs cut off, no route), wait for
 *            repairs until it can
 *   WAIT     wait until every down part is repaired, then restart
 *   SHRINK   as RESTART, but when down parts cut GPUs off the job restarts
 *            on the data-parallel replicas left whole, at the same global
 *            batch (the callback's speed of that shape); the parts that cut
 *            its dropped replicas off stay counted down until the next
 *            restart point, and a checkpoint after one of them was repaired
 *            is one: the job grows back there (a restart, nothing lost).
 *            A shape that cannot run waits as RESTART does. */
enum campaign_fabric_policy {
    CAMPAIGN_FABRIC_REPLACE = 0,
    CAMPAIGN_FABRIC_RESTART = 1,
    CAMPAIGN_FABRIC_WAIT = 2,
    CAMPAIGN_FABRIC_SHRINK = 3
};

/* A network part down (speed 0) or slow: its cause (index in
 * campaign_config.causes) and its index among the cause's parts. */
typedef struct campaign_part_state {
    int32_t cause;
    uint64_t part;
    double speed;
} campaign_part_state;

/* The job's work per second on the fabric with these parts down or slow,
 * relative to the fabric as built: t_built / t_degraded, taken at most 1
 * by the campaign; 0 when the job cannot run on what is left; negative on an
 * error (err filled). n = 0 must give 1. Called from replicas running in
 * parallel (campaign_run_replicas): the callee serialises what it shares,
 * and must give the same speed for the same parts whatever the order. */
typedef double (*campaign_fabric_speed_fn)(void *ctx, const campaign_part_state *parts,
                                           unsigned n, sim_error *err);

/* At most this many network parts down or slow at once (the run stops with
 * an error beyond). */
#define CAMPAIGN_MAX_FABRIC_PARTS 1024

/* A campaign still running after this many times its failure-free
 * compute time (ETTR below 0.1 %) stops with an error instead of running
 * on for ever. */
#define CAMPAIGN_GIVE_UP_FACTOR 1000.0

/* Bounds decided before simulating (campaign_outlook_of; docs/design.md):
 * the failure-free compute time, so that event times up to the give-up
 * horizon (CAMPAIGN_GIVE_UP_FACTOR x it) stay exact to the second in a
 * double (2^52 s); and the engine events a run may be expected to need.
 * The run itself stops with an error after CAMPAIGN_EVENT_CAP_FACTOR x
 * its expected events + CAMPAIGN_EVENT_CAP_SLACK, so no loop runs for
 * hours whatever the model's estimate missed. */
#define CAMPAIGN_MAX_COMPUTE_S (4503599627370496.0 / CAMPAIGN_GIVE_UP_FACTOR)
#define CAMPAIGN_MAX_EVENTS 1e8
#define CAMPAIGN_EVENT_CAP_FACTOR 10.0
#define CAMPAIGN_EVENT_CAP_SLACK 1e6

/* The smallest Weibull shape: the scale is mean / Gamma(1 + 1/k), and
 * Gamma(x) is finite in a double only up to x = 171.6 (GSL_SF_GAMMA_XMAX =
 * 171), so 1 + 1/k <= 171, k >= 1/170 = 0.00588. */
#define CAMPAIGN_WEIBULL_SHAPE_MIN (1.0 / 170.0)
#define CAMPAIGN_WEIBULL_SHAPE_MAX 100.0

typedef struct campaign_config {
    uint64_t gpu_count;
    double gpu_peak_flops_per_s;     /* dense peak at the training precision */
    double mfu_frac;                 /* model FLOPs utilisation, (0, 1] */
    double model_params;             /* N */
    double train_tokens;             /* D */
    double tokens_per_iteration;     /* T (global batch in tokens) */
    double gpu_failure_rate_per_s;   /* lambda per GPU, no named cause; 0 = none */
    unsigned n_causes;               /* named causes, in addition */
    campaign_cause causes[CAMPAIGN_MAX_CAUSES];
    unsigned gpus_per_node;          /* node units for CAMPAIGN_UNIT_NODE causes; 0 = 8 */
    unsigned cage_ports;             /* TRANSCEIVER causes: ports per cage (<failure
                                        cage-ports>); 0 = the catalog's (fabric_fault.h) */
    int cage_ports_set;              /* a transceiver <failure> gave (or left out) cage-ports */
    unsigned nodes_per_rack;         /* rack units for CAMPAIGN_UNIT_RACK causes (>= 1 if any) */
    double restart_s;                /* u0: detection + relaunch + checkpoint load */
    /* Detection drawn per failure and added to its restart (0: none): a
     * health check every health_check_s finds a failure after U(0, period);
     * a collective timeout finds it after collective_timeout_s at the
     * latest; with both, whichever comes first. */
    double health_check_s, collective_timeout_s;
    /* Spare pool (spares_limited set): a failure takes its node out for a
     * repair of Exp(repair_mean_s) (on the job's repair stream), after which
     * it returns to the pool; the restart first swaps in a spare (swap_s), or
     * waits for a repaired node when the pool is empty. Unset: an unlimited
     * pool with free swaps (the failed part is replaced at once). */
    int spares_limited;
    uint64_t spare_nodes;            /* in the pool; per group with spare_group_nodes */
    /* Hot spares per scalable unit (> 0; campaign_spares.c): one pool of
     * spare_nodes per group of this many consecutive nodes (the last group
     * takes the remainder), a failed node replaced only from its own group's
     * pool. 0: one pool for the job. Not with elastic continuation. */
    uint64_t spare_group_nodes;
    double swap_s, repair_mean_s;
    /* Elastic continuation (elastic_replicas = the job's data-parallel
     * replicas, each losing node taking one out): with the pool empty the
     * restart goes on without the missing nodes instead of waiting, at the
     * same global batch, so iterations take dp / (dp - missing) as long;
     * repaired nodes rejoin at the next checkpoint boundary. A failed node
     * takes one replica out. elastic_max_missing (0: all but one) bounds
     * the replicas it goes on without; beyond, it waits. elastic_speed
     * (optional, elastic_max_missing + 1 entries, [0] unused) is the work
     * per second with k replicas missing, e.g. from the step profiles of
     * the smaller jobs; without it, (dp - k) / dp. */
    /* Stragglers (straggler_rate_per_s > 0): a node turns slow at this
     * rate (per node) and the whole synchronous job runs at
     * straggler_speed (work per second, (0, 1]; e.g. from the step profile
     * with that node slow) while any node is slow. straggler_drain_s after
     * it turned slow, the node is drained at the next checkpoint: the job
     * stops there (nothing lost) and restarts without it (a spare swapped
     * in when the pool is limited). */
    double straggler_rate_per_s, straggler_speed, straggler_drain_s;
    unsigned elastic_replicas;
    unsigned elastic_max_missing;
    const double *elastic_speed;
    double checkpoint_interval_s;    /* tau, requested (rounded to whole iterations; longer
                                        than the run: only the final checkpoint) */
    uint64_t checkpoint_every;       /* > 0: every this many iterations instead of tau */
    /* Adaptive interval (checkpoint_adapt_window_s > 0; campaign_adapt.c):
     * at the start of every compute segment the interval becomes Daly's
     * optimum (write time checkpoint_write_s) for the failure rate estimated
     * so far: an exponentially weighted rate of the interruptions the job
     * has seen, memory W = checkpoint_adapt_window_s, started at
     * checkpoint_adapt_prior_rate_per_s as if the cluster had failed at that
     * rate before the job began:
     *   rate(t) = prior e^(-t/W) + (1/W) sum over interruptions t_i <= t of e^(-(t - t_i)/W).
     * checkpoint_interval_s is then the first segment's interval (Daly's
     * for the prior). Not with checkpoint_every. */
    double checkpoint_adapt_window_s;
    double checkpoint_adapt_prior_rate_per_s;
    /* Planned maintenance (maintenance_every_s > 0): a window of
     * maintenance_s every maintenance_every_s of wall time from the start.
     * The job stops at the last whole iteration, writes a checkpoint of it
     * (blocking), waits out the window and restarts; a window during a write
     * waits for it, during a restart postpones it. Failures inside a window
     * interrupt nothing (the part is replaced then). Blocking checkpoints
     * only. */
    double maintenance_every_s, maintenance_s;
    double checkpoint_write_s;       /* w: blocking, or the background persist when async */
    /* Asynchronous checkpoints (checkpoint_async set): the job stalls only
     * for a snapshot to host memory (checkpoint_snapshot_s), then computes on
     * while the snapshot persists in the background (checkpoint_write_s) at
     * 1 - persist_slowdown of its speed; the checkpoint is durable only when
     * persisted (a failure before that rolls back to the one before), and a
     * snapshot waits for the previous persist (one in host memory). */
    int checkpoint_async;
    double checkpoint_snapshot_s;
    double persist_slowdown;         /* [0, 1) */
    /* Degraded fabric (causes with repair_s > 0): the speed of the job on
     * the parts down or slow, and the policy for down parts. NULL: no cause
     * may have a repair_s. */
    campaign_fabric_speed_fn fabric_speed;
    void *fabric_ctx;
    /* Optional (NULL: -1): the built fabric's id of a cause's part, for the
     * trace (campaign_part_event.fabric_id), on fabric_ctx. */
    int64_t (*fabric_part_id)(void *ctx, int32_t cause, uint64_t part);
    int fabric_policy;               /* enum campaign_fabric_policy */
    /* Thermal throttling (throttle_hours > 0; campaign_throttle.c,
     * docs/failures.md "Thermal throttling"): hour h of the run is hot when
     * throttle_hot[h mod throttle_hours] is non-zero (the site's hours above
     * the cooling design's threshold, from the run's start), and the job
     * runs at throttle_speed, (0, 1], during hot hours (the step tier's
     * iteration with the throttled GPUs slow). 0 hours or no hot hour: none. */
    const unsigned char *throttle_hot;
    unsigned throttle_hours;
    double throttle_speed;
    /* Optional, with throttle_hours and fabric_speed (NULL: the throttle
     * speed multiplies the fabric's): the job's speed on these parts with
     * the throttled GPUs slow too, relative to the fabric as built
     * (t_built / t_both: the step tier's one iteration of the combined
     * state), otherwise as fabric_speed, on fabric_ctx, and called after
     * fabric_speed (and fabric_kept) for the same parts. In a hot hour with
     * parts down or slow the throttle's factor of the job's speed is it over
     * fabric_speed's, at most 1 (campaign_fabric.c campaign_fabric_hot). */
    campaign_fabric_speed_fn fabric_hot_speed;
    /* Optional, with stragglers (0 / NULL: the straggler speed multiplies
     * the others'; campaign_straggler.c, docs/failures.md "A slow node in a
     * hot hour or on a degraded fabric"): a node slow in a hot hour and/or
     * with network parts out is one step-tier iteration with everything
     * applied. straggler_hot_speed, (0, 1]: the job's speed on the fabric as
     * built in a hot hour with a node slow (t_built / t_hot_slow);
     * fabric_slow_speed: on these parts with a node slow, and the throttled
     * GPUs slow too when hot, relative to the fabric as built, on fabric_ctx,
     * called after fabric_hot_speed for the same parts. The straggler's
     * factor of the job's speed is then it over the speed without the slow
     * node, at most 1. */
    double straggler_hot_speed;
    double (*fabric_slow_speed)(void *ctx, const campaign_part_state *parts, unsigned n,
                                int hot, sim_error *err);
    /* SHRINK (required with it): whether this part, down alone, cuts GPUs
     * off the job (1) or not (0); and the share of the job's GPUs the shape
     * the parts leave runs on, (0, 1] (1: no GPU cut off; the shape whose
     * speed fabric_speed gave). On fabric_ctx; called after fabric_speed for
     * the same parts. */
    int (*fabric_cuts)(void *ctx, const campaign_part_state *part);
    double (*fabric_kept)(void *ctx, const campaign_part_state *parts, unsigned n);
    uint64_t seed;
    /* > 0: stop with an error after this many engine events; 0: after
     * CAMPAIGN_EVENT_CAP_FACTOR x the expected events + CAMPAIGN_EVENT_CAP_SLACK */
    uint64_t max_events;
} campaign_config;

/* What the job was doing. Values are stored in traces: append only. */
enum campaign_state {
    CAMPAIGN_STATE_COMPUTE = 0,
    CAMPAIGN_STATE_CHECKPOINT = 1,
    CAMPAIGN_STATE_RESTART = 2,
    CAMPAIGN_STATE_DONE = 3,
    CAMPAIGN_STATE_MAINTENANCE = 4,
};

/* Values are stored in traces: append only. */
enum campaign_event_kind {
    CAMPAIGN_EVENT_JOB_START = 0,
    CAMPAIGN_EVENT_CHECKPOINT_DONE = 1,
    CAMPAIGN_EVENT_FAILURE = 2,
    CAMPAIGN_EVENT_RESTART_DONE = 3,
    CAMPAIGN_EVENT_JOB_DONE = 4,
    CAMPAIGN_EVENT_STRAGGLER = 5, /* a node turned slow (node: which) */
    CAMPAIGN_EVENT_DRAIN = 6,     /* slow nodes taken out at a checkpoint (node: the first) */
};

typedef struct campaign_event {
    double time_s;
    int32_t kind;          /* enum campaign_event_kind */
    int32_t state;         /* enum campaign_state the job was in when it happened */
    int64_t gpu;           /* failing GPU, or -1 (a node's cause, or no failure) */
    int64_t node;          /* failing node (CAMPAIGN_UNIT_NODE causes), or -1 */
    int64_t part;          /* failing switch or cable (its index among the cause's parts), or -1 */
    int32_t cause;         /* index in cfg->causes, -1 for the unnamed GPU rate or no failure */
    int64_t iteration;     /* iterations durably completed (at the last checkpoint) */
    double lost_work_s;    /* FAILURE: compute time rolled back */
    double duration_s;     /* CHECKPOINT_DONE: write time; RESTART_DONE: restart time */
} campaign_event;

/* One interval of the job's state timeline. */
typedef struct campaign_segment {
    double start_s;
    double end_s;
    int32_t state;           /* enum campaign_state */
    int32_t was_interrupted; /* 1 when a failure cut it short */
    int64_t iteration_start; /* durable iterations when it started */
    int64_t iteration_end;   /* iterations reached when it ended (compute: progress) */
} campaign_segment;

/* Values are stored in traces: append only. */
enum campaign_part_action {
    CAMPAIGN_PART_DOWN = 0,     /* went down (or down again: the later repair) */
    CAMPAIGN_PART_SLOW = 1,     /* turned slow (fail-slow), or slower */
    CAMPAIGN_PART_REPAIRED = 2, /* back as built */
    CAMPAIGN_PART_FLAP_DOWN = 3, /* a flapping cable went down (campaign_cause.flaps) */
    CAMPAIGN_PART_FLAP_UP = 4,   /* a flapping cable came back up */
};

/* A network part of a degraded fabric that changed (docs/failures.md "The
 * parts out, in the trace"). A failure inside a maintenance window changes
 * nothing and writes none. */
typedef struct campaign_part_event {
    double time_s;
    int32_t action;     /* enum campaign_part_action */
    int32_t cause;      /* index in cfg->causes */
    int64_t part;       /* its index among the cause's parts */
    int64_t fabric_id;  /* the built fabric's id (campaign_config.fabric_part_id), or -1 */
    double speed;       /* the part's after the change: 0 down, (0, 1) slow, 1 repaired */
    double job_speed;   /* the job's on the parts out after it, the policy applied: 1 as
                           built, 0 cannot run (campaign_fabric_speed_fn) */
    int64_t parts_out;  /* parts down or slow after it */
} campaign_part_event;

/* Where the campaign writes its records. Any function may be NULL. A
 * non-zero return aborts the run with SIM_ERR_IO; the callback fills err. */
typedef struct campaign_sink {
    void *ctx;
    int (*event)(void *ctx, const campaign_event *ev, sim_error *err);
    int (*segment)(void *ctx, const campaign_segment *seg, sim_error *err);
    int (*part)(void *ctx, const campaign_part_event *ev, sim_error *err);
} campaign_sink;

/* Called every few thousand events with the fraction of tokens durably
 * trained and the simulated time; return non-zero to interrupt the run. */
typedef int (*campaign_poll_fn)(void *ctx, double progress_frac, double sim_time_s);

typedef struct campaign_result {
    double time_to_train_s;
    double ettr_frac;                 /* productive compute / elapsed */
    double iteration_time_s;
    double total_flops;               /* 6 N D */
    double compute_time_s;            /* productive: 6 N D / (G peak MFU) */
    double rework_s;                  /* compute time lost to rollbacks */
    double checkpoint_time_s;         /* completed writes */
    double checkpoint_aborted_s;      /* writes cut short by a failure */
    double restart_time_s;            /* including restarts cut short and waits for spares */
    double spare_wait_s;              /* of which: waiting for a repaired node */
    double persist_slowdown_s;        /* async: compute stretched by background persists */
    double elastic_slowdown_s;        /* compute stretched by running on fewer replicas */
    double straggler_slowdown_s;      /* compute stretched by slow nodes */
    double degraded_slowdown_s;       /* compute stretched by network parts down or slow */
    double throttle_slowdown_s;       /* compute stretched by thermal throttling (hot hours) */
    double throttle_hot_s;            /* wall time in hot hours until the job ended */
    uint64_t throttle_changes;        /* hour boundaries where throttling began or ended */
    int throttled;                    /* the run had a hot hour to throttle in */
    double fabric_wait_s;             /* of restart_time_s: waiting for network repairs */
    uint64_t parts_down, parts_slow;  /* network parts that went down or slow (repair_s > 0) */
    uint64_t parts_repaired;
    /* flapping cables (a cause with flaps > 0; flapping set): episodes begun,
     * downs (flaps), the part-seconds down by flaps, and the downs the job
     * could not run on (each an interruption) */
    uint64_t flap_episodes, flaps, flap_interruptions;
    double flap_down_s;
    int flapping;
    uint64_t fabric_unrunnable;       /* restarts that found the job unable to run on what
                                         was left (RESTART policy: they waited for repairs) */
    uint64_t fabric_faster;           /* states the fabric_speed callback found faster than
                                         as built (ECMP rehash luck), taken at speed 1 */
    unsigned fabric_causes;           /* causes with a repair time (0: no degraded fabric) */
    /* SHRINK: compute time run on fewer data-parallel replicas (parts down
     * cut the others off), the GPU-hours of the job left idle meanwhile
     * (the dropped replicas' GPUs x that time), restarts onto a smaller
     * shape and restarts that grew the job back at a checkpoint */
    double shrunk_s, shrunk_idle_gpu_h;
    uint64_t shrink_restarts, grow_restarts;
    int shrink;                       /* the run's policy was SHRINK */
    uint64_t stragglers;              /* nodes that turned slow */
    uint64_t drains;                  /* nodes drained */
    uint64_t elastic_restarts;        /* restarts that went on without waiting for spares */
    double maintenance_time_s;        /* inside planned maintenance windows */
    uint64_t maintenance_windows;
    uint64_t silent_failures;         /* silent causes' events (each interrupts when found) */
    uint64_t repairs;                 /* nodes repaired and returned to the pool */
    uint64_t spares_lowest;           /* the fewest spares in the pool (any one group's
                                         with spare_group_nodes) at any time */
    double checkpoint_interval_s;     /* effective: k t_it (adaptive: the first segment's) */
    double checkpoint_interval_min_s; /* adaptive: the shortest and longest interval used */
    double checkpoint_interval_max_s; /*   (k t_it); otherwise both checkpoint_interval_s */
    uint64_t checkpoint_adaptations;  /* adaptive: segments that changed the interval */
    double cluster_mtbf_s;            /* 1 / (total failure rate); 0 when failures are off */
    double ettr_first_order_frac;     /* (1 - L(u0 + tau/2)) / (1 + w/tau), 0 where that is
                                         negative (the model's validity ends, L(u0 + tau/2) >= 1) */
    double young_interval_s;          /* sqrt(2 w M), Young 1974; 0 without failures */
    double daly_interval_s;           /* Daly 2006 eq. 37; 0 without failures */
    uint64_t iterations;
    uint64_t checkpoint_every_iterations;
    uint64_t checkpoints;
    uint64_t checkpoints_aborted;
    uint64_t failures;
    uint64_t failures_by_cause[CAMPAIGN_MAX_CAUSES + 1]; /* [0]: unnamed GPU rate; [1 + i]: cause i */
    uint64_t restarts;                /* restarts that completed */
    uint64_t events_fired;
    uint64_t event_digest;
} campaign_result;

/* Check a configuration; returns 0 or SIM_ERR_INPUT with a message naming the
 * field (the scenario loader checks first, with file:line; this guards API use). */
int campaign_config_check(const campaign_config *cfg, sim_error *err);

/* The cluster's total failure rate: every cause of every unit (GPUs,
 * nodes, racks, switches, cables; silent ones too), Weibull causes at their
 * mean rate (1 / mean per unit). The summary's cluster MTBF is 1 / it, and
 * interval="auto" takes Daly's optimum of it. 0 without failures.
 * Fail-slow causes (slow_speed > 0) interrupt nothing and are left out. */
double campaign_cluster_failure_rate_per_s(const campaign_config *cfg);

/* What a run can be expected to cost, in closed form (campaign_run checks
 * it first): with L the total failure rate, d the compute of one checkpoint
 * interval x plus its write, u a restart (with mean detection and swap),
 * elapsed / compute = (e^{L d} - 1) e^{L u} / (L x) (d / x without
 * failures), divided by the share of each maintenance period left to
 * compute in whole iterations. */
typedef struct campaign_outlook {
    double interruption_rate_per_s;  /* L */
    double segment_s;                /* d */
    double restart_s;                /* u */
    double compute_time_s;
    double log_elapsed_per_compute;  /* ln(elapsed / compute); +inf: no progress at all */
    double expected_ettr_frac;       /* its inverse (0 when it underflows) */
    double expected_events;          /* engine events over the expected run */
} campaign_outlook;

void campaign_outlook_of(const campaign_config *cfg, campaign_outlook *out);

/* Iteration time from the 6ND rule, in seconds. */
double campaign_iteration_time_s(const campaign_config *cfg);

/* Simulate the run. sink and poll may be NULL. Returns 0 and fills *out, or
 * an error code (SIM_ERR_INTERRUPTED when poll asked to stop) with err set. */
/* Daly's optimum checkpoint interval (FGCS 22(3), 2006, eq. 37;
 * calibration.md 4): for w < 2M, sqrt(2 w M) [1 + sqrt(w/2M)/3 + (w/2M)/9] - w,
 * else M; w the write time, M the MTBF. */
double campaign_daly_interval_s(double write_s, double mtbf_s);

/* The mean detection delay of cfg's health check and collective timeout
 * (0 without either): P/2, T, or with both T - T^2 / (2P) when T < P. */
double campaign_mean_detection_s(const campaign_config *cfg);

/* Monte Carlo. Replica i runs the configuration with seed
 * campaign_replica_seed(seed, i): replica 0 keeps the seed (so one replica
 * is the plain run), the others hash it with the index, so every replica
 * has its own random streams and adding replicas changes none of them. */
uint64_t campaign_replica_seed(uint64_t seed, unsigned replica);

/* Called, one call at a time, as replicas finish; non-zero stops the rest. */
typedef int (*campaign_replica_fn)(void *ctx, unsigned done, unsigned total);

/* Run replicas 1 .. n-1 (replica 0 is the caller's campaign_run, with its
 * sink) into results[1 .. n-1], in parallel with OpenMP, each thread in one
 * campaign_workspace for all its replicas; each result depends only on its
 * index, so any thread count gives the same numbers. Returns 0,
 * or the error of the lowest failing replica (SIM_ERR_INTERRUPTED when
 * progress asked to stop). */
int campaign_run_replicas(const campaign_config *cfg, unsigned n, campaign_result *results,
                          campaign_replica_fn progress, void *progress_ctx, sim_error *err);

/* Mean, sample standard deviation and the half-width of the 95 % confidence
 * interval of the mean (Student t, n - 1 degrees of freedom; 0 for n = 1). */
typedef struct campaign_stat {
    double mean, sd, ci95;
} campaign_stat;

typedef struct campaign_mc {
    unsigned replicas;
    campaign_stat time_to_train_s, ettr_frac, failures, rework_s, restart_time_s,
        checkpoint_time_s;
    /* time lost to interruptions (rework + restarts, waits included, +
     * aborted writes) and to degradation (the degraded stretch), and the
     * waits for network repairs (part of the restarts) */
    campaign_stat interruption_s, degraded_slowdown_s, fabric_wait_s;
    campaign_stat throttle_slowdown_s; /* shown when throttled */
    int throttled;
    campaign_stat flaps, flap_down_s; /* flapping cables: as the results' (shown when flapping) */
    int flapping;
    campaign_stat shrunk_s, shrunk_idle_gpu_h; /* SHRINK: as the results' */
    int shrink;                       /* SHRINK: the two above are shown */
    unsigned fabric_causes;           /* as the results' (0: the three above are not shown) */
    campaign_stat failures_by_cause[CAMPAIGN_MAX_CAUSES + 1]; /* as campaign_result's */
} campaign_mc;

void campaign_mc_summarize(const campaign_result *results, unsigned n, campaign_mc *out);
campaign_stat campaign_stat_of(const double *x, unsigned n);

int campaign_run(const campaign_config *cfg, const campaign_sink *sink, campaign_poll_fn poll,
                 void *poll_ctx, campaign_result *out, sim_error *err);

/* Memory that runs one after another can share: the event pool, a random
 * stream per unit (GPU, node, rack, ...) and the per-node arrays, kept at
 * the largest run's size. A run in a workspace reseeds its streams in place
 * from their keys instead of allocating them, and reuses the pool instead of
 * growing it, so it gives exactly the numbers of campaign_run (which makes
 * and frees a workspace of its own) whatever ran in the workspace before.
 * One run at a time per workspace: one workspace per thread. */
typedef struct campaign_workspace campaign_workspace;

campaign_workspace *campaign_workspace_create(void); /* NULL when out of memory */
void campaign_workspace_destroy(campaign_workspace *ws); /* NULL is a no-op */

/* campaign_run, in ws's memory. */
int campaign_run_in(campaign_workspace *ws, const campaign_config *cfg, const campaign_sink *sink,
                    campaign_poll_fn poll, void *poll_ctx, campaign_result *out, sim_error *err);

const char *campaign_state_name(int state);
const char *campaign_event_kind_name(int kind);

#endif
