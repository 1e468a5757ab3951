/* campaign_internal.h - what the campaign's files share: the run's state
 * (one struct campaign per campaign_run, owned by it), the engine event
 * priorities (the kinds are in event_kinds.h) and the private functions each
 * file lends the others. Not for callers outside models/campaign*.c: they
 * use campaign.h.
 */
#ifndef DCSIM_MODELS_CAMPAIGN_INTERNAL_H
#define DCSIM_MODELS_CAMPAIGN_INTERNAL_H

#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "campaign.h"
#include "engine.h"
#include "event_kinds.h" /* the engine event kinds (KIND_*), which enter the digest */
#include "rng.h"

/* a failure at the same instant as anything else is handled first */
enum { PRIO_FAILURE = 0, PRIO_JOB = 1 };

typedef struct campaign {
    const campaign_config *cfg;
    const campaign_sink *sink;
    campaign_poll_fn poll;
    void *poll_ctx;
    campaign_workspace *ws;      /* the memory below lives there (reused run to run) */
    sim_engine *eng;             /* ws->eng, reset for this run */
    sim_error *err;
    /* The streams are slots of the workspace's blocks, reseeded for this
     * run's keys (rng.h): arrays indexed by unit, NULL where unused. */
    gsl_rng *gpu_rng;            /* failure stream per GPU */
    gsl_rng *node_rng;           /* failure stream per node (node-unit causes) */
    gsl_rng *renewal_rng[CAMPAIGN_MAX_CAUSES]; /* per renewing (Weibull) cause, one stream
                                                  per unit */
    gsl_rng *rack_rng;           /* failure stream per rack (rack-unit causes) */
    gsl_rng *part_rng[CAMPAIGN_MAX_CAUSES]; /* per switch or cable cause: one stream */
    int64_t failing_part;        /* the switch or cable failing now, for its event; else -1 */
    uint64_t n_racks;
    double rack_rate;
    uint64_t n_groups;           /* spare pools: 1, or one per spare_group_nodes nodes */
    uint64_t *pool;              /* per group: spares in its pool now (ws->pool) */
    uint64_t *need;              /* per group: nodes the current restart must swap in */
    unsigned missing;            /* elastic: nodes the job runs without */
    uint64_t in_repair;          /* nodes away being repaired */
    double speed;                /* this segment's speed: (dp - missing) / dp */
    uint64_t n_nodes;
    double gpu_rate, node_rate;  /* per unit: sum of the causes of that unit */
    gsl_rng *repair_rng;         /* repair times (limited spare pool) */
    gsl_rng *detect_rng;         /* detection delays (health check) */
    double detect_s;             /* the next restart's detection delay */
    int silent_found;            /* interrupting for a corruption found: detected already */
    int waiting;                 /* the restart waits for a repaired node */
    double wait_since;

    double seconds_per_token;    /* 6N / (G peak MFU) */
    uint64_t n_iterations;
    uint64_t every;              /* iterations per checkpoint (adaptive: the last segment's) */
    double adapt_sum;            /* adaptive: sum of e^(-(t_last - t_i)/W) over interruptions */
    double adapt_last_s;         /* adaptive: t_last, when adapt_sum was last brought up to date */

    int state;
    double state_start_s;
    uint64_t committed;          /* iterations durably checkpointed */
    uint64_t snap;               /* iterations in the last snapshot (= committed unless async) */
    int persisting;              /* async: a snapshot is being persisted */
    sim_event_id persist_event;
    double persist_end_s;
    double seg_overlap_s;        /* async: how long the segment runs beside a persist */
    double seg_work_s;           /* compute seconds the current segment does */
    double seg_done_s;           /* of which done before the current speed epoch */
    double epoch_start_s;        /* when the segment's speed last changed */
    double speed_elastic;        /* (0, 1]: fewer replicas */
    double speed_slow;           /* (0, 1]: a slow node */
    unsigned char *slow;         /* per node: 0 fine, 1 slow, 2 slow and due to be drained;
                                    NULL without stragglers */
    uint64_t n_slow, n_drain_due;
    gsl_rng *straggler_rng;      /* per node: when it turns slow */
    double *slow_since;          /* per node: when it turned slow */
    double event_cap;            /* stop with an error after this many engine events */
    int over_cap;
    double hold_s;               /* the next restart first waits this long (an async persist) */
    int maintenance_next;        /* a window is due once the current write ends */
    int corrupt_pending;         /* a silent corruption not found yet */
    uint64_t good_committed;     /* the last durable checkpoint from before it */
    uint64_t target;             /* iteration the current segment ends at */
    sim_event_id pending;        /* the job's own pending event (segment/ckpt/restart end) */
    double restart_began_s;

    /* degraded fabric (campaign_fabric.c): the parts down or slow now
     * (ws->fab, in the order they failed) and the job's speed on them */
    unsigned fab_n;
    uint64_t fab_serial_next;     /* the serial the next part's repair event carries */
    double fabric_now;            /* the state's speed (policy applied): (0, 1], 0 cannot run */
    double speed_fabric;          /* (0, 1]: the speed epoch's, fabric_now when it began */
    int fabric_waiting;           /* the restart waits for network repairs */
    double fabric_wait_since;
    double restart_swap_s;        /* the swap the scheduled restart includes */
    int model_failed;             /* the fabric_speed callback failed: err set */
    /* SHRINK (campaign_fabric.c): the parts down at the last restart that cut
     * GPUs off (ws->held), counted down until the next restart point; the
     * share of the job's GPUs the shape runs on, now and in this epoch */
    unsigned held_n;
    double kept_now, kept_epoch;
    /* flapping cables (campaign_fabric.c): the episodes under way (ws->flap)
     * and the serial the next one's events carry */
    unsigned flap_n;
    uint64_t flap_serial_next;
    /* thermal throttling (campaign_throttle.c): whether this hour is hot,
     * since when, and the job's speed factor in this speed epoch */
    int throttle_is_hot;
    double throttle_since_s;
    double speed_thermal;        /* (0, 1]: throttle_speed in hot hours, else 1 */
    /* a hot hour on a degraded fabric (fabric_hot_speed): the throttle's
     * factor of the speed on the parts out now (0: none, throttle_speed),
     * and how many parts the last fabric_speed call priced (ws->fab_view) */
    double fabric_hot_now;
    unsigned fab_view_n;
    /* a slow node in a hot hour or on parts out (campaign_straggler.c): the
     * straggler's factor of the speed (0: none, straggler_speed) */
    double slow_combined_now;

    campaign_result res;
    int sink_failed;
} campaign;

/* A flapping cable's episode: its part, the downs still to come, whether it
 * is down now (since when), and the serial its events carry. */
typedef struct campaign_flap {
    int32_t cause;
    uint64_t part;
    unsigned downs_left;
    int is_down;
    double down_since;
    uint64_t serial;
} campaign_flap;

/* What one run needs that can outlive it (campaign_workspace.c): the
 * engine (its event pool), the streams of every kind of unit, the per-node
 * straggler arrays and the first failure times. Sized to the largest run so
 * far; a run resets and reseeds what it uses, so its results never depend
 * on the runs before (the replicas' bit-identity rests on that). */
enum { WS_SLOT_REPAIR = 0, WS_SLOT_DETECT = 1, WS_SLOT_PART = 2, /* in ws->job */
       WS_SLOT_FABRIC_REPAIR = WS_SLOT_PART + CAMPAIGN_MAX_CAUSES,
       WS_SLOT_FLAP = WS_SLOT_FABRIC_REPAIR + CAMPAIGN_MAX_CAUSES, /* drawn flap durations */
       WS_SLOTS = WS_SLOT_FLAP + CAMPAIGN_MAX_CAUSES };

struct campaign_workspace {
    sim_engine *eng;
    sim_rng_block gpu, node, rack, straggler;
    sim_rng_block renewal[CAMPAIGN_MAX_CAUSES];
    sim_rng_block job;        /* WS_SLOT_*: repair, detection, one per switch or cable cause,
                                 one per such cause for its repairs */
    campaign_part_state fab[CAMPAIGN_MAX_FABRIC_PARTS];      /* the parts down or slow */
    uint64_t fab_serial[CAMPAIGN_MAX_FABRIC_PARTS];          /* their repair events' */
    campaign_part_state fab_view[2 * CAMPAIGN_MAX_FABRIC_PARTS]; /* what the policy lets
                                                                  count (SHRINK: + held) */
    campaign_part_state held[CAMPAIGN_MAX_FABRIC_PARTS];    /* SHRINK: campaign.held_n */
    campaign_flap flap[CAMPAIGN_MAX_FABRIC_PARTS];          /* campaign.flap_n episodes */
    unsigned char *slow;      /* per node, cleared by the run that uses it */
    double *slow_since;
    uint64_t nodes_cap;
    double *first;            /* per unit of the kind being made: its first failure */
    uint64_t first_cap;
    uint64_t *pool, *need;    /* per spare group (campaign_spares.c) */
    uint64_t groups_cap;
};

/* campaign_workspace.c: at least n per-node slots (slow, slow_since;
 * cleared) or first-failure slots. 0 or -1 when out of memory. */
int campaign_workspace_nodes(campaign_workspace *ws, uint64_t n);
int campaign_workspace_firsts(campaign_workspace *ws, uint64_t n);
int campaign_workspace_groups(campaign_workspace *ws, uint64_t n);

/* The failure rates per kind of unit (exponential causes, per unit). */
typedef struct campaign_rate_split {
    uint64_t n_nodes, n_racks;
    double gpu_rate, node_rate, rack_rate; /* per unit, exponential causes */
} campaign_rate_split;

/* campaign.c: the state machine */

/* A failure, or a corruption found: roll back to `good` (the last durable
 * checkpoint, or an earlier one a corruption predates) and restart,
 * lost_nodes nodes to swap in. */
void campaign_interrupt(campaign *c, int32_t cause, int64_t gpu, int64_t node, uint64_t good,
                        unsigned lost_nodes);

/* Engine handler: node `node` turns slow (and draws its next slow spell). */
void campaign_on_straggler(sim_engine *eng, void *ctx, uint64_t node);

/* The speed of the job changed (a node turned slow or recovered, a network
 * part went slow or was repaired): a computing job goes on at the new speed. */
void campaign_speed_changed(campaign *c);

/* Schedule the end of a restart whose waits are over: hold, swap,
 * detection and the restart itself. */
void campaign_schedule_restart(campaign *c);

/* campaign_fabric.c: the degraded fabric */

/* A switch or cable of a cause with a repair time fails (c->failing_part):
 * it goes down (the job is interrupted) or slow (the job slows) until its
 * repair. */
void campaign_fabric_part_fails(campaign *c, int32_t cause);

/* At a restart: 1 when it must wait for network repairs (the policy, or a
 * fabric the job cannot run on), the wait begun; else 0. */
int campaign_fabric_must_wait(campaign *c);

/* The seeding of the repair streams, the empty state. */
void campaign_fabric_reset(campaign *c);

/* SHRINK: 1 when a part that cut the job's dropped replicas off has been
 * repaired since the last restart, so the checkpoint just written is the
 * point to grow back at (a restart, nothing lost); else 0. */
int campaign_fabric_grow_due(const campaign *c);

/* The throttle's factor of the speed in a hot hour on the parts out now
 * (c->fabric_hot_now; 0 when not hot, no part is out, or fabric_hot_speed
 * is NULL). 0, or -1 with the run stopped (the callback's error). */
int campaign_fabric_hot(campaign *c);

/* campaign_straggler.c: the straggler's factor of the speed with a node
 * slow in a hot hour and/or on the parts out now (c->slow_combined_now; 0
 * when no node is slow, or neither applies, or no callback). 0, or -1 with
 * the run stopped (the callback's error). */
int campaign_straggler_combined(campaign *c);

/* The most replicas an elastic job goes on without. */
unsigned campaign_elastic_most_missing(const campaign_config *cfg);

/* campaign_throttle.c: thermal throttling by the hour */

/* The first hour's state and the event at the first change (nothing when
 * no hour is hot, or every hour is). */
void campaign_throttle_reset(campaign *c);

/* The job ended: a hot spell still on is counted. */
void campaign_throttle_finish(campaign *c);

/* campaign_spares.c: the spare pools */

/* The pools full, nothing needed; SIM_ERR_NOMEM with c->err set when the
 * per-group arrays cannot grow. */
int campaign_spares_reset(campaign *c);

/* Nothing for the next restart to swap in. */
void campaign_spares_clear(campaign *c);

/* A failure took nodes [first, first + count) (first -1: count is 0): they
 * go to repair and the restart must swap them in, added to what it needed
 * when `add` (a restart waiting for spares), else instead. */
void campaign_spares_lost(campaign *c, int64_t first, unsigned count, int add);

/* A drain: node `node` must be swapped in; then send them all to repair. */
void campaign_spares_need_node(campaign *c, uint64_t node);
void campaign_spares_send_needed(campaign *c);

/* At a restart: 1 when it may go on (spares swapped in: restart_swap_s set,
 * or elastic, or none needed), 0 when it waits for repaired nodes. */
int campaign_spares_take(campaign *c);

/* campaign_adapt.c: the adaptive checkpoint interval */

/* An interruption at `now` enters the estimated failure rate. */
void campaign_adapt_observe(campaign *c, double now);

/* Iterations to the next checkpoint for a segment starting at `now`: the
 * fixed cadence, or (adaptive) Daly's optimum for the rate estimated now. */
uint64_t campaign_adapt_every(campaign *c, double now);

/* The rate the adaptive interval uses at `now` (per second). */
double campaign_adapt_rate_per_s(const campaign *c, double now);

/* campaign_failures.c: the failure processes */

/* The failure rates per kind of unit into *rs, and the cluster's total
 * (every cause; Weibull causes by their mean rate, 1 / mean, per unit). */
double campaign_split_rates(const campaign_config *cfg, campaign_rate_split *rs);

/* A failure's detection delay, drawn on c's detection stream. */
double campaign_draw_detection(campaign *c);

/* Seed the failure streams of every unit and cause in c->ws's blocks and
 * schedule their first failures (c's rates and unit counts set); the
 * straggler streams (and the per-node slow flags) and their first slow
 * spells. 0 or SIM_ERR_NOMEM with c->err set (a block could not grow). */
int campaign_make_failure_streams(campaign *c);
int campaign_make_straggler_streams(campaign *c);

/* campaign_outlook.c: counts and the up-front refusal */

/* Iterations in the run: ceil(D / T), at least 1. */
uint64_t campaign_iteration_count(const campaign_config *cfg);

/* Iterations per checkpoint: round(tau / t_it) in [1, n_it]. */
uint64_t campaign_cadence(const campaign_config *cfg, double t_it, uint64_t n_it);

/* 0, or SIM_ERR_INPUT with err set for a run the outlook says cannot
 * finish (horizon, expected ETTR, expected events). */
int campaign_check_outlook(const campaign_config *cfg, const campaign_outlook *o, sim_error *err);

/* The stream entity of a network part cause (its failures and repairs). */
static inline int campaign_part_entity(int unit)
{
    return unit == CAMPAIGN_UNIT_SWITCH ? SIM_ENTITY_SWITCH
           : unit == CAMPAIGN_UNIT_NIC  ? SIM_ENTITY_NIC
                                        : SIM_ENTITY_LINK;
}

#endif
