/* campaign.c - the campaign tier (model and invariants in campaign.h).
 *
 * Compute between two checkpoints is one event, not one per iteration, so a
 * run of millions of iterations costs a few events per checkpoint and per
 * failure. Each GPU has a pending failure event on its own random stream;
 * the streams and first draws are made in parallel (OpenMP, one output slot
 * per GPU) and scheduled serially in GPU order, so any thread count gives the
 * same events.
 */
#include "campaign.h"

#include <gsl/gsl_cdf.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_sf_gamma.h>

#include "engine.h"
#include "rng.h"

/* engine event kinds (enter the digest); append only */
enum { KIND_SEGMENT_END = 1, KIND_CHECKPOINT_END = 2, KIND_FAILURE = 3, KIND_RESTART_END = 4,
       KIND_REPAIR = 5, KIND_PERSIST_END = 6, KIND_MAINTENANCE = 7, KIND_SDC_FOUND = 8,
       KIND_STRAGGLER = 9, KIND_DRAIN_DUE = 10 };
/* a failure at the same instant as anything else is handled first */
enum { PRIO_FAILURE = 0, PRIO_JOB = 1 };

#define POLL_EVERY 4096

typedef struct campaign {
    const campaign_config *cfg;
    const campaign_sink *sink;
    campaign_poll_fn poll;
    void *poll_ctx;
    sim_engine *eng;
    sim_error *err;
    gsl_rng **gpu_rng;           /* failure stream per GPU */
    gsl_rng **node_rng;          /* failure stream per node (node-unit causes) */
    gsl_rng **weibull_rng[CAMPAIGN_MAX_CAUSES]; /* per Weibull cause, one stream per unit */
    gsl_rng **rack_rng;          /* failure stream per rack (rack-unit causes) */
    gsl_rng *part_rng[CAMPAIGN_MAX_CAUSES]; /* per switch or cable cause: one stream */
    int64_t failing_part;        /* the switch or cable failing now, for its event; else -1 */
    uint64_t n_racks;
    double rack_rate;
    unsigned spares_needed;      /* nodes the current restart must swap in */
    unsigned missing;            /* elastic: nodes the job runs without */
    uint64_t in_repair;          /* nodes away being repaired */
    double speed;                /* this segment's speed: (dp - missing) / dp */
    uint64_t n_nodes;
    double gpu_rate, node_rate;  /* per unit: sum of the causes of that unit */
    gsl_rng *repair_rng;         /* repair times (limited spare pool) */
    gsl_rng *detect_rng;         /* detection delays (health check) */
    double detect_s;             /* the next restart's detection delay */
    int silent_found;            /* interrupting for a corruption found: detected already */
    uint64_t spares;             /* in the pool now */
    int waiting;                 /* the restart waits for a repaired node */
    double wait_since;

    double seconds_per_token;    /* 6N / (G peak MFU) */
    uint64_t n_iterations;
    uint64_t every;              /* iterations per checkpoint */

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
    unsigned char *slow;         /* per node: 0 fine, 1 slow, 2 slow and due to be drained */
    uint64_t n_slow, n_drain_due;
    gsl_rng **straggler_rng;     /* per node: when it turns slow */
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

    campaign_result res;
    int sink_failed;
} campaign;

static const char *const state_names[] = {"compute", "checkpoint", "restart", "done",
                                          "maintenance"};
static const char *const event_names[] = {"job_start", "checkpoint_done", "failure",
                                          "restart_done", "job_done", "straggler", "drain"};

const char *campaign_state_name(int state)
{
    return state >= 0 && state < 5 ? state_names[state] : "?";
}

const char *campaign_event_kind_name(int kind)
{
    return kind >= 0 && kind < 7 ? event_names[kind] : "?";
}

double campaign_iteration_time_s(const campaign_config *cfg)
{
    double tokens = fmin(cfg->tokens_per_iteration, cfg->train_tokens);
    return 6.0 * cfg->model_params * tokens /
           ((double)cfg->gpu_count * cfg->gpu_peak_flops_per_s * cfg->mfu_frac);
}

int campaign_config_check(const campaign_config *cfg, sim_error *err)
{
#define REQUIRE(cond, ...) \
    if (!(cond))           \
    return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, __VA_ARGS__)
    REQUIRE(cfg->gpu_count >= 1, "campaign: gpu count must be at least 1");
    REQUIRE(cfg->gpu_peak_flops_per_s > 0 && isfinite(cfg->gpu_peak_flops_per_s),
            "campaign: GPU peak FLOP/s must be positive");
    REQUIRE(cfg->mfu_frac > 0 && cfg->mfu_frac <= 1, "campaign: MFU must be in (0, 1]");
    REQUIRE(cfg->model_params > 0 && isfinite(cfg->model_params),
            "campaign: parameter count must be positive");
    REQUIRE(cfg->train_tokens > 0 && isfinite(cfg->train_tokens),
            "campaign: training tokens must be positive");
    REQUIRE(cfg->tokens_per_iteration > 0 && isfinite(cfg->tokens_per_iteration),
            "campaign: tokens per iteration must be positive");
    REQUIRE(cfg->train_tokens / cfg->tokens_per_iteration < 9e15,
            "campaign: more than 9e15 iterations");
    REQUIRE(cfg->n_causes <= CAMPAIGN_MAX_CAUSES, "campaign: at most %d failure causes",
            CAMPAIGN_MAX_CAUSES);
    for (unsigned i = 0; i < cfg->n_causes; i++)
        REQUIRE(cfg->causes[i].rate_per_s >= 0 && isfinite(cfg->causes[i].rate_per_s) &&
                    (cfg->causes[i].weibull_shape == 0 ||
                     (cfg->causes[i].weibull_shape >= CAMPAIGN_WEIBULL_SHAPE_MIN &&
                      cfg->causes[i].weibull_shape <= CAMPAIGN_WEIBULL_SHAPE_MAX)) &&
                    (cfg->causes[i].unit == CAMPAIGN_UNIT_GPU ||
                     cfg->causes[i].unit == CAMPAIGN_UNIT_NODE ||
                     (cfg->causes[i].unit == CAMPAIGN_UNIT_RACK && cfg->nodes_per_rack > 0 &&
                      cfg->causes[i].weibull_shape == 0) ||
                     ((cfg->causes[i].unit == CAMPAIGN_UNIT_SWITCH ||
                       cfg->causes[i].unit == CAMPAIGN_UNIT_CABLE) &&
                      cfg->causes[i].parts > 0 && cfg->causes[i].weibull_shape == 0 &&
                      cfg->causes[i].detection_s == 0)),
                "campaign: failure cause %u needs a rate >= 0, a Weibull shape of 0 "
                "(exponential) or from 1/170 to 100, and a GPU, node, rack, switch "
                "or cable unit (racks: nodes per rack set; racks, switches and cables: "
                "exponential; switches and cables: a part count, not silent)", i);
    REQUIRE(cfg->gpu_failure_rate_per_s >= 0 && isfinite(cfg->gpu_failure_rate_per_s),
            "campaign: failure rate must be zero or positive");
    REQUIRE(cfg->restart_s >= 0 && isfinite(cfg->restart_s),
            "campaign: restart time must be zero or positive");
    REQUIRE(cfg->straggler_rate_per_s >= 0 && isfinite(cfg->straggler_rate_per_s) &&
                (cfg->straggler_rate_per_s == 0 ||
                 (cfg->straggler_speed > 0 && cfg->straggler_speed <= 1 &&
                  cfg->straggler_drain_s >= 0 && isfinite(cfg->straggler_drain_s))),
            "campaign: stragglers need a rate >= 0, a speed in (0, 1] and a drain delay >= 0");
    REQUIRE(cfg->health_check_s >= 0 && isfinite(cfg->health_check_s) &&
                cfg->collective_timeout_s >= 0 && isfinite(cfg->collective_timeout_s),
            "campaign: health-check period and collective timeout must be zero or positive");
    REQUIRE(cfg->checkpoint_every > 0 ||
                (cfg->checkpoint_interval_s > 0 && isfinite(cfg->checkpoint_interval_s)),
            "campaign: checkpoint interval must be positive");
    REQUIRE(!cfg->elastic_replicas || cfg->spares_limited,
            "campaign: elastic continuation needs a limited spare pool");
    REQUIRE(!cfg->elastic_speed || (cfg->elastic_replicas && cfg->elastic_max_missing &&
                                    cfg->elastic_max_missing < cfg->elastic_replicas),
            "campaign: an elastic speed table needs fewer missing replicas than replicas");
    for (unsigned k = 1; cfg->elastic_speed && k <= cfg->elastic_max_missing; k++)
        REQUIRE(cfg->elastic_speed[k] > 0 && cfg->elastic_speed[k] <= 1 &&
                    isfinite(cfg->elastic_speed[k]),
                "campaign: elastic speeds must lie in (0, 1]");
    REQUIRE(!cfg->spares_limited || (cfg->swap_s >= 0 && isfinite(cfg->swap_s) &&
                                     cfg->repair_mean_s >= 0 && isfinite(cfg->repair_mean_s)),
            "campaign: swap and repair times must be zero or positive");
    REQUIRE(!cfg->checkpoint_async ||
                (cfg->checkpoint_snapshot_s >= 0 && isfinite(cfg->checkpoint_snapshot_s) &&
                 cfg->persist_slowdown >= 0 && cfg->persist_slowdown < 1),
            "campaign: async checkpoints need a snapshot time >= 0 and a slowdown in [0, 1)");
    REQUIRE(!(cfg->maintenance_every_s > 0) ||
                (isfinite(cfg->maintenance_every_s) && cfg->maintenance_s >= 0 &&
                 cfg->maintenance_s < cfg->maintenance_every_s && !cfg->checkpoint_async),
            "campaign: maintenance windows need a duration shorter than their period, and "
            "blocking checkpoints");
    REQUIRE(cfg->checkpoint_write_s >= 0 && isfinite(cfg->checkpoint_write_s),
            "campaign: checkpoint write time must be zero or positive");
#undef REQUIRE
    return 0;
}

/* compute seconds to train iterations [from, to) */
static double compute_s(const campaign *c, uint64_t from, uint64_t to)
{
    double t = c->cfg->tokens_per_iteration, d = c->cfg->train_tokens;
    double tokens = fmin((double)to * t, d) - fmin((double)from * t, d);
    return tokens * c->seconds_per_token;
}

static void emit_failure_event(campaign *c, int kind, int64_t gpu, int64_t node, int32_t cause,
                               double lost_s, double duration_s)
{
    if (c->sink_failed || !c->sink || !c->sink->event)
        return;
    campaign_event ev;
    memset(&ev, 0, sizeof ev); /* padding too: the trace stores the bytes */
    ev.time_s = sim_now(c->eng);
    ev.kind = kind;
    ev.state = c->state;
    ev.gpu = gpu;
    ev.node = node;
    ev.part = kind == CAMPAIGN_EVENT_FAILURE ? c->failing_part : -1;
    ev.cause = cause;
    ev.iteration = (int64_t)c->committed;
    ev.lost_work_s = lost_s;
    ev.duration_s = duration_s;
    if (c->sink->event(c->sink->ctx, &ev, c->err)) {
        c->sink_failed = 1;
        sim_stop(c->eng);
    }
}

static void emit_event(campaign *c, int kind, int64_t gpu, double lost_s, double duration_s)
{
    emit_failure_event(c, kind, gpu, -1, -1, lost_s, duration_s);
}

static void emit_segment(campaign *c, int was_interrupted, uint64_t iteration_end)
{
    if (c->sink_failed || !c->sink || !c->sink->segment)
        return;
    campaign_segment seg = {c->state_start_s, sim_now(c->eng), c->state, was_interrupted,
                            (int64_t)c->committed, (int64_t)iteration_end};
    if (c->sink->segment(c->sink->ctx, &seg, c->err)) {
        c->sink_failed = 1;
        sim_stop(c->eng);
    }
}

static void on_segment_end(sim_engine *eng, void *ctx, uint64_t data);
static void on_checkpoint_end(sim_engine *eng, void *ctx, uint64_t data);
static void on_restart_end(sim_engine *eng, void *ctx, uint64_t data);
static void interrupt(campaign *c, int32_t cause, int64_t gpu, int64_t node, uint64_t good,
                      unsigned lost_nodes);
static void on_corruption_found(sim_engine *eng, void *ctx, uint64_t data);
static void on_maintenance_end(sim_engine *eng, void *ctx, uint64_t data);
static void start_maintenance(campaign *c);

static void enter(campaign *c, int state)
{
    c->state = state;
    c->state_start_s = sim_now(c->eng);
}

/* Work done after elapsed seconds of a segment that runs its first
 * seg_overlap_s beside a persist at 1 - slowdown speed, and the inverse. */
static double work_at(const campaign *c, double elapsed, double v)
{
    double p = v * (1 - c->cfg->persist_slowdown), r = c->seg_overlap_s;
    return elapsed <= r ? elapsed * p : r * p + (elapsed - r) * v;
}

static double time_at(const campaign *c, double work, double v)
{
    double p = v * (1 - c->cfg->persist_slowdown), r = c->seg_overlap_s;
    return work <= r * p ? work / p : r + (work - r * p) / v;
}

/* work done after elapsed seconds of the speed epoch, and the inverse, at
 * its speed (elastic x stragglers) with its persist overlap (async) */
static double work_after(const campaign *c, double elapsed)
{
    return work_at(c, elapsed, c->speed);
}

static double time_for_work(const campaign *c, double work)
{
    return time_at(c, work, c->speed);
}

/* The stretch of `elapsed` seconds of the epoch that did `work`: the
 * persist's part (the time at full speed beyond the work), the elastic part
 * (at the elastic speed alone, beyond that) and the stragglers' (the rest) */
static void account_stretch(campaign *c, double elapsed, double work)
{
    double at_full = time_at(c, work, 1.0), at_elastic = time_at(c, work, c->speed_elastic);
    /* each part is >= 0 by definition; rounding in the inverses leaves
     * residues of either sign (-5e-11 s): clamp them at zero */
    c->res.persist_slowdown_s += fmax(0, at_full - work);
    c->res.elastic_slowdown_s += fmax(0, at_elastic - at_full);
    if (c->speed_slow < 1) /* else none: elapsed - at_elastic is a rounding residue */
        c->res.straggler_slowdown_s += fmax(0, elapsed - at_elastic);
}

/* Close the speed epoch now: account its stretch, bank its work, start
 * another (the persist overlap left shrinks). Returns the segment's work. */
static double close_epoch(campaign *c)
{
    double elapsed = sim_now(c->eng) - c->epoch_start_s;
    double work = fmin(work_after(c, elapsed), c->seg_work_s - c->seg_done_s);
    account_stretch(c, elapsed, work);
    c->seg_done_s += work;
    c->seg_overlap_s = fmax(0, c->seg_overlap_s - elapsed);
    c->epoch_start_s = sim_now(c->eng);
    return c->seg_done_s;
}

static void set_speed(campaign *c);
static void on_straggler(sim_engine *eng, void *ctx, uint64_t node);
static void on_drain_due(sim_engine *eng, void *ctx, uint64_t node);
static void on_repair(sim_engine *eng, void *ctx, uint64_t data);
static void drain(campaign *c);
static void begin_restart(campaign *c);

/* Elastic: the most replicas the job goes on without, and its speed (work
 * per second) with `missing` of them gone: from the caller's table (the
 * step profiles of the smaller jobs), or the compute share (dp - k) / dp. */
static unsigned elastic_most_missing(const campaign_config *cfg)
{
    if (cfg->elastic_speed)
        return cfg->elastic_max_missing;
    unsigned most = cfg->elastic_replicas - 1;
    return cfg->elastic_max_missing && cfg->elastic_max_missing < most ? cfg->elastic_max_missing
                                                                       : most;
}

static double elastic_speed(const campaign_config *cfg, unsigned missing)
{
    if (!missing)
        return 1.0;
    if (cfg->elastic_speed)
        return cfg->elastic_speed[missing];
    return (double)(cfg->elastic_replicas - missing) / cfg->elastic_replicas;
}

static void start_compute(campaign *c)
{
    enter(c, CAMPAIGN_STATE_COMPUTE);
    c->target = c->snap + c->every;
    if (c->target > c->n_iterations)
        c->target = c->n_iterations;
    c->seg_work_s = compute_s(c, c->snap, c->target);
    c->seg_done_s = 0;
    c->epoch_start_s = sim_now(c->eng);
    c->seg_overlap_s = c->persisting ? fmax(0, c->persist_end_s - sim_now(c->eng)) : 0;
    set_speed(c);
    c->pending = sim_schedule_in(c->eng, time_for_work(c, c->seg_work_s), PRIO_JOB,
                                 KIND_SEGMENT_END, on_segment_end, c, c->target);
}

static void set_speed(campaign *c)
{
    c->speed_elastic = elastic_speed(c->cfg, c->missing);
    c->speed_slow = c->n_slow ? c->cfg->straggler_speed : 1.0;
    c->speed = c->speed_elastic * c->speed_slow;
}

/* A node turned slow, or the last slow one left: a computing job changes
 * speed now, the rest of its segment at the new speed. */
static void speed_changed(campaign *c)
{
    if (c->state != CAMPAIGN_STATE_COMPUTE) {
        set_speed(c); /* for the record; the next segment sets it again */
        return;
    }
    close_epoch(c);
    sim_cancel(c->eng, c->pending);
    set_speed(c);
    c->pending = sim_schedule_in(c->eng, time_for_work(c, c->seg_work_s - c->seg_done_s),
                                 PRIO_JOB, KIND_SEGMENT_END, on_segment_end, c, c->target);
}

static void on_segment_end(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)data;
    campaign *c = ctx;
    account_stretch(c, sim_now(eng) - c->epoch_start_s, c->seg_work_s - c->seg_done_s);
    emit_segment(c, 0, c->target);
    enter(c, CAMPAIGN_STATE_CHECKPOINT);
    /* async: a snapshot, after the previous persist has freed host memory */
    double stall = c->cfg->checkpoint_async
                       ? fmax(0, (c->persisting ? c->persist_end_s : 0) - sim_now(eng)) +
                             c->cfg->checkpoint_snapshot_s
                       : c->cfg->checkpoint_write_s;
    c->pending = sim_schedule_in(eng, stall, PRIO_JOB, KIND_CHECKPOINT_END, on_checkpoint_end, c,
                                 c->target);
}

static void finish_job(campaign *c)
{
    enter(c, CAMPAIGN_STATE_DONE);
    c->pending = 0;
    emit_event(c, CAMPAIGN_EVENT_JOB_DONE, -1, 0, 0);
    sim_stop(c->eng);
}

/* async: the snapshot of persist_target is durable */
static void on_persist_end(sim_engine *eng, void *ctx, uint64_t data)
{
    campaign *c = ctx;
    c->persisting = 0;
    c->persist_event = 0;
    c->committed = data;
    c->res.checkpoints++;
    emit_event(c, CAMPAIGN_EVENT_CHECKPOINT_DONE, -1, 0, c->cfg->checkpoint_write_s);
    if (c->committed == c->n_iterations) { /* the job waited for its last persist */
        c->res.checkpoint_time_s += sim_now(eng) - c->state_start_s;
        emit_segment(c, 0, c->target);
        finish_job(c);
    }
}

static void on_checkpoint_end(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)data;
    campaign *c = ctx;
    if (c->cfg->checkpoint_async) { /* snapshot taken: persist it in the background */
        c->res.checkpoint_time_s += sim_now(eng) - c->state_start_s;
        c->snap = c->target;
        c->persisting = 1;
        c->persist_end_s = sim_now(eng) + c->cfg->checkpoint_write_s;
        c->persist_event = sim_schedule_at(eng, c->persist_end_s, PRIO_JOB, KIND_PERSIST_END,
                                           on_persist_end, c, c->snap);
        if (c->snap == c->n_iterations) { /* the last one: wait for it, still checkpointing */
            emit_segment(c, 0, c->target);
            enter(c, CAMPAIGN_STATE_CHECKPOINT);
            c->pending = 0;
            return;
        }
        emit_segment(c, 0, c->target);
        if (c->n_drain_due) { /* restart once the snapshot is durable */
            c->hold_s = c->persist_end_s - sim_now(eng);
            drain(c);
            return;
        }
        start_compute(c);
        return;
    }
    emit_segment(c, 0, c->target);
    c->committed = c->snap = c->target;
    c->res.checkpoints++;
    c->res.checkpoint_time_s += sim_now(eng) - c->state_start_s;
    emit_event(c, CAMPAIGN_EVENT_CHECKPOINT_DONE, -1, 0, sim_now(eng) - c->state_start_s);
    if (c->committed == c->n_iterations) {
        enter(c, CAMPAIGN_STATE_DONE);
        c->pending = 0;
        emit_event(c, CAMPAIGN_EVENT_JOB_DONE, -1, 0, 0);
        sim_stop(eng);
        return;
    }
    if (c->maintenance_next) {
        c->maintenance_next = 0;
        start_maintenance(c);
        return;
    }
    if (c->n_drain_due) {
        drain(c);
        return;
    }
    start_compute(c);
}

/* A node turns slow: the job slows while any is; its drain comes due
 * straggler_drain_s later. The node's next slow spell follows its own
 * exponential time (a replaced node can turn slow again). */
static void on_straggler(sim_engine *eng, void *ctx, uint64_t node)
{
    campaign *c = ctx;
    sim_schedule_in(eng, gsl_ran_exponential(c->straggler_rng[node], 1 / c->cfg->straggler_rate_per_s),
                    PRIO_FAILURE, KIND_STRAGGLER, on_straggler, c, node);
    if (c->slow[node] || c->state == CAMPAIGN_STATE_DONE)
        return;
    c->slow[node] = 1;
    c->slow_since[node] = sim_now(eng);
    c->res.stragglers++;
    emit_failure_event(c, CAMPAIGN_EVENT_STRAGGLER, -1, (int64_t)node, -1, 0, 0);
    sim_schedule_in(eng, c->cfg->straggler_drain_s, PRIO_FAILURE, KIND_DRAIN_DUE, on_drain_due, c,
                    node);
    if (c->n_slow++ == 0)
        speed_changed(c);
}

static void on_drain_due(sim_engine *eng, void *ctx, uint64_t node)
{
    campaign *c = ctx;
    /* still the same slow spell (not replaced by a failure since) */
    if (c->slow[node] == 1 && c->slow_since[node] + c->cfg->straggler_drain_s <= sim_now(eng)) {
        c->slow[node] = 2;
        c->n_drain_due++;
    }
}

/* A node replaced (it failed): no longer slow */
static void clear_slow(campaign *c, int64_t node, unsigned count)
{
    for (unsigned k = 0; c->slow && node >= 0 && k < count && (uint64_t)node + k < c->n_nodes;
         k++) {
        unsigned char *x = &c->slow[node + k];
        if (!*x)
            continue;
        c->n_drain_due -= *x == 2;
        c->n_slow--;
        *x = 0;
    }
}

/* At a checkpoint: stop, take the nodes due out (to repair, spares in)
 * and restart on healthy ones. Nothing is lost. */
static void drain(campaign *c)
{
    int64_t first = -1;
    unsigned count = 0;
    for (uint64_t i = 0; i < c->n_nodes; i++)
        if (c->slow[i] == 2) {
            first = first < 0 ? (int64_t)i : first;
            count++;
            c->slow[i] = 0;
            c->n_slow--;
        }
    c->n_drain_due = 0;
    c->res.drains += count;
    emit_failure_event(c, CAMPAIGN_EVENT_DRAIN, -1, first, -1, 0, 0);
    c->spares_needed = count;
    if (c->cfg->spares_limited) {
        double repair = c->cfg->repair_mean_s > 0
                            ? gsl_ran_exponential(c->repair_rng, c->cfg->repair_mean_s)
                            : 0;
        c->in_repair += count;
        sim_schedule_in(c->eng, repair, PRIO_FAILURE, KIND_REPAIR, on_repair, c, count);
    }
    c->detect_s = 0; /* planned */
    begin_restart(c);
}

/* A restart: with a limited pool, swap in a spare first, or wait for one. */
static void begin_restart(campaign *c)
{
    enter(c, CAMPAIGN_STATE_RESTART);
    c->waiting = 0;
    double swap = 0;
    if (c->cfg->spares_limited && c->spares_needed) {
        unsigned short_by = c->spares_needed - (unsigned)(c->spares < c->spares_needed
                                                              ? c->spares : c->spares_needed);
        if (short_by && c->cfg->elastic_replicas &&
            c->missing + short_by <= elastic_most_missing(c->cfg)) {
            /* go on without them: fewer replicas, same global batch */
            c->missing += short_by;
            c->spares_needed -= short_by;
            c->res.elastic_restarts++;
        }
        if (c->spares < c->spares_needed) {
            c->waiting = 1;
            c->wait_since = sim_now(c->eng);
            c->pending = 0;
            return;
        }
        c->spares -= c->spares_needed;
        if (c->spares < c->res.spares_lowest)
            c->res.spares_lowest = c->spares;
        swap = c->cfg->swap_s;
    }
    c->pending = sim_schedule_in(c->eng, c->hold_s + swap + c->detect_s + c->cfg->restart_s,
                                 PRIO_JOB, KIND_RESTART_END, on_restart_end, c, 0);
    c->detect_s = c->hold_s = 0;
}

static void start_maintenance(campaign *c)
{
    enter(c, CAMPAIGN_STATE_MAINTENANCE);
    c->detect_s = 0; /* planned: nothing to detect */
    c->spares_needed = 0; /* parts are replaced in the window: the restart swaps nothing */
    c->res.maintenance_windows++;
    c->pending = sim_schedule_in(c->eng, c->cfg->maintenance_s, PRIO_JOB, KIND_MAINTENANCE,
                                 on_maintenance_end, c, 0);
}

static void on_maintenance_end(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)data;
    campaign *c = ctx;
    c->res.maintenance_time_s += sim_now(eng) - c->state_start_s;
    emit_segment(c, 0, c->committed);
    begin_restart(c);
}

/* A window opens: stop at the last whole iteration and checkpoint it, or
 * stop a restart; a write in progress finishes first. */
static void on_maintenance_start(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)data;
    campaign *c = ctx;
    double now = sim_now(eng);
    sim_schedule_in(eng, c->cfg->maintenance_every_s, PRIO_JOB, KIND_MAINTENANCE,
                    on_maintenance_start, c, 0);
    double elapsed = now - c->state_start_s;
    switch (c->state) {
    case CAMPAIGN_STATE_COMPUTE: {
        double work = close_epoch(c);
        uint64_t reached = c->snap + (uint64_t)fmin(floor(work / c->res.iteration_time_s),
                                             (double)(c->target - c->snap));
        if (reached > c->target)
            reached = c->target;
        c->res.rework_s += work - compute_s(c, c->snap, reached); /* the partial iteration */
        sim_cancel(eng, c->pending);
        c->target = reached;
        emit_segment(c, 0, reached);
        if (reached == c->committed) {
            start_maintenance(c);
            return;
        }
        enter(c, CAMPAIGN_STATE_CHECKPOINT);
        c->maintenance_next = 1;
        c->pending = sim_schedule_in(eng, c->cfg->checkpoint_write_s, PRIO_JOB,
                                     KIND_CHECKPOINT_END, on_checkpoint_end, c, c->target);
        return;
    }
    case CAMPAIGN_STATE_CHECKPOINT:
        c->maintenance_next = 1;
        return;
    case CAMPAIGN_STATE_RESTART:
        c->res.restart_time_s += elapsed;
        if (c->waiting)
            c->res.spare_wait_s += now - c->wait_since;
        c->waiting = 0;
        if (c->pending)
            sim_cancel(eng, c->pending);
        emit_segment(c, 1, c->committed);
        start_maintenance(c);
        return;
    default: /* in a window already, or done */
        return;
    }
}

/* A repaired node returns to the pool; a waiting restart takes it. */
static void on_repair(sim_engine *eng, void *ctx, uint64_t data)
{
    campaign *c = ctx;
    c->res.repairs += data; /* data: nodes repaired together (a rack's at once) */
    c->in_repair -= data;
    c->spares += data;
    unsigned rejoin = c->missing < c->spares ? c->missing : (unsigned)c->spares;
    c->missing -= rejoin; /* back at the next checkpoint boundary */
    c->spares -= rejoin;
    if (c->state != CAMPAIGN_STATE_RESTART || !c->waiting || c->spares < c->spares_needed)
        return;
    c->waiting = 0;
    c->res.spare_wait_s += sim_now(eng) - c->wait_since;
    c->spares -= c->spares_needed;
    c->pending = sim_schedule_in(eng, c->hold_s + c->cfg->swap_s + c->detect_s + c->cfg->restart_s,
                                 PRIO_JOB, KIND_RESTART_END, on_restart_end, c, 0);
    c->detect_s = c->hold_s = 0;
}

static void on_restart_end(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)data;
    campaign *c = ctx;
    double took = sim_now(eng) - c->state_start_s;
    emit_segment(c, 0, c->committed);
    c->res.restart_time_s += took;
    c->res.restarts++;
    emit_event(c, CAMPAIGN_EVENT_RESTART_DONE, -1, 0, took);
    start_compute(c);
}

#define NODE_FLAG (1ULL << 63) /* event payload: a node's failure, not a GPU's */
#define RACK_FLAG (1ULL << 62) /* event payload: a rack's failure */
#define PART_FLAG (1ULL << 61) /* event payload: a switch or cable cause (index in the low bits) */
#define WEIBULL_SHIFT 40        /* payload bits 40..47: Weibull cause index + 1 */
#define UNIT_MASK ((1ULL << WEIBULL_SHIFT) - 1)

/* How long until this failure is noticed: U(0, period) of a health check,
 * capped by a collective timeout. */
static double draw_detection(campaign *c)
{
    double p = c->cfg->health_check_s, t = c->cfg->collective_timeout_s;
    if (p > 0) {
        double u = gsl_rng_uniform(c->detect_rng) * p;
        return t > 0 && t < u ? t : u;
    }
    return t;
}

double campaign_mean_detection_s(const campaign_config *cfg)
{
    double p = cfg->health_check_s, t = cfg->collective_timeout_s;
    if (p > 0 && t > 0 && t < p)
        return t - t * t / (2 * p);
    return p > 0 ? p / 2 : t;
}

static int is_part(int unit) { return unit == CAMPAIGN_UNIT_SWITCH || unit == CAMPAIGN_UNIT_CABLE; }

/* The cause of a failure of a unit: drawn on the unit's stream in
 * proportion to the rates (-1: the unnamed GPU rate). */
static int32_t draw_cause(campaign *c, gsl_rng *r, int unit, double total)
{
    if (!c->cfg->n_causes)
        return -1;
    double u = gsl_rng_uniform(r) * total, acc = 0;
    if (unit == CAMPAIGN_UNIT_GPU) {
        acc = c->cfg->gpu_failure_rate_per_s;
        if (u < acc)
            return -1;
    }
    int32_t last = -1;
    for (unsigned i = 0; i < c->cfg->n_causes; i++) {
        if (c->cfg->causes[i].unit != unit || c->cfg->causes[i].weibull_shape > 0)
            continue;
        acc += c->cfg->causes[i].rate_per_s;
        last = (int32_t)i;
        if (u < acc)
            return (int32_t)i;
    }
    return last; /* rounding at the top end */
}

static double weibull_time(const campaign_cause *x, gsl_rng *r)
{
    double k = x->weibull_shape, mean = 1 / x->rate_per_s;
    return gsl_ran_weibull(r, mean / gsl_sf_gamma(1 + 1 / k), k);
}

/* The first failure of a unit on a cluster in steady state (parts of every
 * age): its residual life, U x L with L length-biased. For Weibull(k,
 * scale a), (L/a)^k of the length-biased law is Gamma(1 + 1/k, 1). */
static double weibull_residual(const campaign_cause *x, gsl_rng *r)
{
    double k = x->weibull_shape, a = 1 / x->rate_per_s / gsl_sf_gamma(1 + 1 / k);
    /* G^(1/k) alone can overflow for small k (a is tiny then): multiply in logs */
    double length = exp(log(a) + log(gsl_ran_gamma(r, 1 + 1 / k, 1)) / k);
    return gsl_rng_uniform(r) * length;
}

static void on_failure(sim_engine *eng, void *ctx, uint64_t data)
{
    campaign *c = ctx;
    if (data & PART_FLAG) { /* a switch or cable: one interruption, no node to swap */
        int32_t cause = (int32_t)(data & UNIT_MASK);
        const campaign_cause *x = &c->cfg->causes[cause];
        gsl_rng *r = c->part_rng[cause];
        c->failing_part = (int64_t)gsl_rng_uniform_int(r, x->parts);
        sim_schedule_in(eng, gsl_ran_exponential(r, 1.0 / ((double)x->parts * x->rate_per_s)),
                        PRIO_FAILURE, KIND_FAILURE, on_failure, c, data);
        if (!(c->state == CAMPAIGN_STATE_RESTART && c->waiting))
            c->spares_needed = 0;
        interrupt(c, cause, -1, -1, c->committed, 0);
        c->failing_part = -1;
        return;
    }
    int is_node = (data & NODE_FLAG) != 0, is_rack = (data & RACK_FLAG) != 0;
    unsigned weibull = (unsigned)((data >> WEIBULL_SHIFT) & 0xff);
    uint64_t id = data & UNIT_MASK;
    int32_t cause;
    if (weibull) { /* a Weibull cause: its part is replaced and renews */
        cause = (int32_t)weibull - 1;
        gsl_rng *r = c->weibull_rng[cause][id];
        sim_schedule_in(eng, weibull_time(&c->cfg->causes[cause], r), PRIO_FAILURE, KIND_FAILURE,
                        on_failure, c, data);
    } else {
        gsl_rng *r = is_rack ? c->rack_rng[id] : is_node ? c->node_rng[id] : c->gpu_rng[id];
        double total = is_rack ? c->rack_rate : is_node ? c->node_rate : c->gpu_rate;
        cause = draw_cause(c, r,
                           is_rack ? CAMPAIGN_UNIT_RACK
                           : is_node ? CAMPAIGN_UNIT_NODE
                                     : CAMPAIGN_UNIT_GPU,
                           total);
        /* the replacement unit in this slot fails after its own exponential time */
        sim_schedule_in(eng, gsl_ran_exponential(r, 1.0 / total), PRIO_FAILURE, KIND_FAILURE,
                        on_failure, c, data);
    }
    int64_t gpu = is_node || is_rack ? -1 : (int64_t)id;
    int64_t node = is_rack ? (int64_t)(id * c->cfg->nodes_per_rack) : is_node ? (int64_t)id : -1;
    /* nodes to swap in: a failure while the restart still waits for spares
     * adds to what it needs */
    unsigned lost_nodes = is_rack ? c->cfg->nodes_per_rack : 1;
    c->spares_needed = c->state == CAMPAIGN_STATE_RESTART && c->waiting
                           ? c->spares_needed + lost_nodes
                           : lost_nodes;
    const campaign_cause *x = cause >= 0 ? &c->cfg->causes[cause] : NULL;
    if (x && x->detection_s > 0) { /* silent: found later, rolling back to before it */
        c->res.silent_failures++;
        if (c->state == CAMPAIGN_STATE_DONE || c->corrupt_pending)
            return; /* one rollback covers every corruption since the good checkpoint */
        c->corrupt_pending = 1;
        c->good_committed = c->committed;
        gsl_rng *r = is_rack ? c->rack_rng[id] : is_node ? c->node_rng[id] : c->gpu_rng[id];
        double delay = gsl_ran_exponential(r, x->detection_s);
        sim_schedule_in(eng, delay, PRIO_FAILURE, KIND_SDC_FOUND, on_corruption_found, c,
                        (uint64_t)(cause + 1) | ((uint64_t)id << 8) | (is_node ? NODE_FLAG : 0) |
                            (is_rack ? RACK_FLAG : 0));
        return;
    }
    interrupt(c, cause, gpu, node, c->committed, lost_nodes);
}

/* A failure, or a corruption found: roll back to `good` (the last durable
 * checkpoint, or an earlier one a corruption predates) and restart. */
static void interrupt(campaign *c, int32_t cause, int64_t gpu, int64_t node, uint64_t good,
                      unsigned lost_nodes)
{
    sim_engine *eng = c->eng;
    double now = sim_now(eng);
    double lost = 0, elapsed = now - c->state_start_s;
    uint64_t reached = c->committed;
    switch (c->state) {
    case CAMPAIGN_STATE_COMPUTE: {
        /* the segment's work so far, and any snapshot not yet durable */
        double work = close_epoch(c);
        lost = work + compute_s(c, c->committed, c->snap);
        reached = c->snap + (uint64_t)fmin(floor(work / c->res.iteration_time_s),
                                             (double)(c->target - c->snap));
        if (reached > c->target)
            reached = c->target;
        break;
    }
    case CAMPAIGN_STATE_CHECKPOINT:
        /* the half-written checkpoint is useless: roll back past its segment */
        lost = compute_s(c, c->committed, c->target);
        reached = c->target;
        c->res.checkpoints_aborted++;
        c->res.checkpoint_aborted_s += elapsed;
        break;
    case CAMPAIGN_STATE_RESTART:
        c->res.restart_time_s += elapsed;
        if (c->waiting)
            c->res.spare_wait_s += now - c->wait_since;
        lost = compute_s(c, c->committed, c->snap); /* a drain's snapshot not yet persisted */
        c->hold_s = 0;
        break;
    default: /* MAINTENANCE (parts are replaced there) or DONE */
        if (good < c->committed && c->state == CAMPAIGN_STATE_MAINTENANCE) {
            /* a corruption found in a window: the restart after it resumes earlier */
            c->res.rework_s += compute_s(c, good, c->committed);
            c->committed = c->snap = good;
        }
        return;
    }
    lost += compute_s(c, good, c->committed); /* checkpoints written since a corruption */
    if (c->pending)
        sim_cancel(eng, c->pending);
    int window_due = c->maintenance_next; /* the write it waited for is lost: go now */
    c->maintenance_next = 0;
    if (c->persisting) { /* the snapshot in flight is lost with the node */
        sim_cancel(eng, c->persist_event);
        c->persisting = 0;
        c->persist_event = 0;
    }
    c->committed = good;
    c->snap = c->committed;
    unsigned per_node = c->cfg->gpus_per_node ? c->cfg->gpus_per_node : 8;
    clear_slow(c, node >= 0 ? node : gpu >= 0 ? gpu / per_node : -1, lost_nodes);
    emit_segment(c, 1, reached);
    if (c->cfg->spares_limited && lost_nodes) { /* the failed nodes go to repair */
        double repair = c->cfg->repair_mean_s > 0
                            ? gsl_ran_exponential(c->repair_rng, c->cfg->repair_mean_s)
                            : 0;
        c->in_repair += lost_nodes;
        sim_schedule_in(eng, repair, PRIO_FAILURE, KIND_REPAIR, on_repair, c, lost_nodes);
    }
    c->detect_s = c->silent_found ? 0 : draw_detection(c); /* a corruption found is known */
    c->res.failures++;
    c->res.failures_by_cause[cause + 1]++;
    c->res.rework_s += lost;
    emit_failure_event(c, CAMPAIGN_EVENT_FAILURE, gpu, node, cause, lost, 0);
    if (window_due)
        start_maintenance(c); /* the window replaces the part; the restart follows it */
    else
        begin_restart(c);
}

static void on_corruption_found(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)eng;
    campaign *c = ctx;
    int is_node = (data & NODE_FLAG) != 0, is_rack = (data & RACK_FLAG) != 0;
    int32_t cause = (int32_t)(data & 0xff) - 1;
    int64_t id = (int64_t)((data & ~(NODE_FLAG | RACK_FLAG)) >> 8);
    c->corrupt_pending = 0;
    if (c->state == CAMPAIGN_STATE_DONE)
        return;
    unsigned lost_nodes = (data & RACK_FLAG) ? c->cfg->nodes_per_rack : 1;
    c->spares_needed = c->state == CAMPAIGN_STATE_RESTART && c->waiting
                           ? c->spares_needed + lost_nodes
                           : lost_nodes;
    c->silent_found = 1;
    interrupt(c, cause, is_node || is_rack ? -1 : id,
              is_rack ? id * (int64_t)c->cfg->nodes_per_rack : is_node ? id : -1, c->good_committed,
              lost_nodes);
    c->silent_found = 0;
}

static int on_poll(sim_engine *eng, void *ctx)
{
    campaign *c = ctx;
    if ((double)sim_events_fired(eng) > c->event_cap) {
        c->over_cap = 1;
        return 1;
    }
    if (c->poll && c->poll(c->poll_ctx, (double)c->committed / (double)c->n_iterations,
                           sim_now(eng)))
        return 1;
    return 0;
}

/* One stream per unit of a kind, its first failure drawn: pure per-unit
 * work into per-index slots, so the thread count cannot change results. */
static int make_streams(campaign *c, uint32_t entity, uint64_t n, double rate, gsl_rng ***out,
                        uint64_t flag, uint32_t purpose, const campaign_cause *weibull,
                        unsigned kind, sim_handler_fn handler);

static int make_unit_streams(campaign *c, uint32_t entity, uint64_t n, double rate,
                             gsl_rng ***out, uint64_t flag, uint32_t purpose,
                             const campaign_cause *weibull)
{
    return make_streams(c, entity, n, rate, out, flag, purpose, weibull, KIND_FAILURE, on_failure);
}

static int make_streams(campaign *c, uint32_t entity, uint64_t n, double rate, gsl_rng ***out,
                        uint64_t flag, uint32_t purpose, const campaign_cause *weibull,
                        unsigned kind, sim_handler_fn handler)
{
    gsl_rng **rng = calloc(n ? n : 1, sizeof *rng);
    double *first = malloc((n ? n : 1) * sizeof *first);
    *out = rng;
    if (!rng || !first) {
        free(first);
        return sim_error_set(c->err, SIM_ERR_NOMEM, NULL, 0,
                             "out of memory for %llu failure streams", (unsigned long long)n);
    }
    int failed = 0;
#pragma omp parallel for schedule(static) reduction(| : failed)
    for (long long i = 0; i < (long long)n; i++) {
        rng[i] = sim_rng_stream_create(c->cfg->seed, entity, (uint64_t)i, purpose);
        if (!rng[i]) {
            failed = 1;
            continue;
        }
        first[i] = weibull ? weibull_residual(weibull, rng[i])
                           : gsl_ran_exponential(rng[i], 1.0 / rate);
    }
    if (failed) {
        free(first);
        return sim_error_set(c->err, SIM_ERR_NOMEM, NULL, 0, "out of memory for failure streams");
    }
    for (uint64_t i = 0; i < n; i++)
        sim_schedule_at(c->eng, first[i], PRIO_FAILURE, kind, handler, c, i | flag);
    free(first);
    return 0;
}

static int make_failure_streams(campaign *c)
{
    int rc = 0;
    if (c->gpu_rate > 0)
        rc = make_unit_streams(c, SIM_ENTITY_GPU, c->cfg->gpu_count, c->gpu_rate, &c->gpu_rng, 0,
                               SIM_PURPOSE_FAILURE, NULL);
    if (!rc && c->node_rate > 0)
        rc = make_unit_streams(c, SIM_ENTITY_NODE, c->n_nodes, c->node_rate, &c->node_rng,
                               NODE_FLAG, SIM_PURPOSE_FAILURE, NULL);
    if (!rc && c->rack_rate > 0)
        rc = make_unit_streams(c, SIM_ENTITY_RACK, c->n_racks, c->rack_rate, &c->rack_rng,
                               RACK_FLAG, SIM_PURPOSE_FAILURE, NULL);
    for (unsigned i = 0; !rc && i < c->cfg->n_causes; i++) {
        const campaign_cause *x = &c->cfg->causes[i];
        if (!(x->weibull_shape > 0) || !(x->rate_per_s > 0) || x->unit == CAMPAIGN_UNIT_RACK)
            continue;
        int node = x->unit == CAMPAIGN_UNIT_NODE;
        /* purposes above the fixed ones: one per cause, so causes draw apart */
        rc = make_unit_streams(c, node ? SIM_ENTITY_NODE : SIM_ENTITY_GPU,
                               node ? c->n_nodes : c->cfg->gpu_count, x->rate_per_s,
                               &c->weibull_rng[i],
                               (node ? NODE_FLAG : 0) | ((uint64_t)(i + 1) << WEIBULL_SHIFT),
                               SIM_PURPOSE_FAILURE + 256 + i, x);
    }
    /* switches and cables: identical exponential parts, so one stream per
     * cause at the summed rate is exact (and costs nothing per part) */
    for (unsigned i = 0; !rc && i < c->cfg->n_causes; i++) {
        const campaign_cause *x = &c->cfg->causes[i];
        if (!is_part(x->unit) || !(x->rate_per_s > 0))
            continue;
        c->part_rng[i] = sim_rng_stream_create(
            c->cfg->seed, x->unit == CAMPAIGN_UNIT_SWITCH ? SIM_ENTITY_SWITCH : SIM_ENTITY_LINK, i,
            SIM_PURPOSE_FAILURE);
        if (!c->part_rng[i])
            return sim_error_set(c->err, SIM_ERR_NOMEM, NULL, 0, "out of memory for a stream");
        sim_schedule_at(c->eng,
                        gsl_ran_exponential(c->part_rng[i], 1.0 / ((double)x->parts * x->rate_per_s)),
                        PRIO_FAILURE, KIND_FAILURE, on_failure, c, PART_FLAG | i);
    }
    return rc;
}

/* Stragglers: a stream per node for when it turns slow. */
static int make_straggler_streams(campaign *c)
{
    c->slow = calloc(c->n_nodes ? c->n_nodes : 1, 1);
    c->slow_since = calloc(c->n_nodes ? c->n_nodes : 1, sizeof *c->slow_since);
    if (!c->slow || !c->slow_since)
        return sim_error_set(c->err, SIM_ERR_NOMEM, NULL, 0, "out of memory for stragglers");
    return make_streams(c, SIM_ENTITY_NODE, c->n_nodes, c->cfg->straggler_rate_per_s,
                        &c->straggler_rng, 0, SIM_PURPOSE_SPEED, NULL, KIND_STRAGGLER,
                        on_straggler);
}

static void free_streams(campaign *c)
{
    for (uint64_t i = 0; c->gpu_rng && i < c->cfg->gpu_count; i++)
        gsl_rng_free(c->gpu_rng[i]);
    for (uint64_t i = 0; c->node_rng && i < c->n_nodes; i++)
        gsl_rng_free(c->node_rng[i]);
    for (uint64_t i = 0; c->rack_rng && i < c->n_racks; i++)
        gsl_rng_free(c->rack_rng[i]);
    for (uint64_t i = 0; c->straggler_rng && i < c->n_nodes; i++)
        gsl_rng_free(c->straggler_rng[i]);
    free(c->straggler_rng);
    free(c->slow);
    free(c->slow_since);
    c->straggler_rng = NULL;
    c->slow = NULL;
    c->slow_since = NULL;
    free(c->rack_rng);
    c->rack_rng = NULL;
    free(c->gpu_rng);
    free(c->node_rng);
    c->gpu_rng = c->node_rng = NULL;
    for (unsigned k = 0; k < c->cfg->n_causes; k++) {
        if (c->part_rng[k])
            gsl_rng_free(c->part_rng[k]);
        c->part_rng[k] = NULL;
        uint64_t n = c->cfg->causes[k].unit == CAMPAIGN_UNIT_NODE ? c->n_nodes : c->cfg->gpu_count;
        for (uint64_t i = 0; c->weibull_rng[k] && i < n; i++)
            gsl_rng_free(c->weibull_rng[k][i]);
        free(c->weibull_rng[k]);
        c->weibull_rng[k] = NULL;
    }
}

static uint64_t iteration_count(const campaign_config *cfg)
{
    uint64_t n = (uint64_t)ceil(cfg->train_tokens / cfg->tokens_per_iteration); /* < 9e15: checked */
    return n ? n : 1;
}

/* Iterations per checkpoint: round(tau / t_it) in [1, n_it]. The ratio is
 * compared before it is rounded, so an interval longer than the run (or an
 * infinite ratio) is "only the final checkpoint", never an overflowed cast. */
static uint64_t cadence(const campaign_config *cfg, double t_it, uint64_t n_it)
{
    if (cfg->checkpoint_every)
        return cfg->checkpoint_every < n_it ? cfg->checkpoint_every : n_it;
    double ratio = cfg->checkpoint_interval_s / t_it;
    if (!(ratio < (double)n_it)) /* also NaN */
        return n_it;
    long long k = llround(ratio); /* ratio < n_it < 9e15: representable */
    return k < 1 ? 1 : (uint64_t)k;
}

typedef struct rate_split {
    uint64_t n_nodes, n_racks;
    double gpu_rate, node_rate, rack_rate; /* per unit, exponential causes */
} rate_split;

/* The failure rates per kind of unit, and the cluster's total (every
 * cause; Weibull causes by their mean rate, 1 / mean, per unit). */
static double split_rates(const campaign_config *cfg, rate_split *rs)
{
    memset(rs, 0, sizeof *rs);
    unsigned per_node = cfg->gpus_per_node ? cfg->gpus_per_node : 8;
    rs->n_nodes = (cfg->gpu_count + per_node - 1) / per_node;
    rs->gpu_rate = cfg->gpu_failure_rate_per_s;
    double weibull_rate = 0; /* long-run rate of the renewing Weibull causes: 1 / mean */
    double part_rate = 0;    /* switches and cables */
    for (unsigned i = 0; i < cfg->n_causes && i < CAMPAIGN_MAX_CAUSES; i++) {
        const campaign_cause *x = &cfg->causes[i];
        double units = x->unit == CAMPAIGN_UNIT_NODE ? (double)rs->n_nodes : (double)cfg->gpu_count;
        if (is_part(x->unit))
            part_rate += (double)x->parts * x->rate_per_s;
        else if (x->unit == CAMPAIGN_UNIT_RACK)
            rs->rack_rate += x->rate_per_s;
        else if (x->weibull_shape > 0)
            weibull_rate += units * x->rate_per_s;
        else if (x->unit == CAMPAIGN_UNIT_NODE)
            rs->node_rate += x->rate_per_s;
        else
            rs->gpu_rate += x->rate_per_s;
    }
    if (cfg->nodes_per_rack)
        rs->n_racks = (rs->n_nodes + cfg->nodes_per_rack - 1) / cfg->nodes_per_rack;
    return (double)cfg->gpu_count * rs->gpu_rate + (double)rs->n_nodes * rs->node_rate +
           (double)rs->n_racks * rs->rack_rate + weibull_rate + part_rate;
}

double campaign_cluster_failure_rate_per_s(const campaign_config *cfg)
{
    rate_split rs;
    return split_rates(cfg, &rs);
}

void campaign_outlook_of(const campaign_config *cfg, campaign_outlook *o)
{
    memset(o, 0, sizeof *o);
    rate_split rs;
    double lambda = split_rates(cfg, &rs);
    double t_it = campaign_iteration_time_s(cfg);
    uint64_t n_it = iteration_count(cfg);
    double every = (double)cadence(cfg, t_it, n_it);
    double compute = cfg->train_tokens * 6.0 * cfg->model_params /
                     ((double)cfg->gpu_count * cfg->gpu_peak_flops_per_s * cfg->mfu_frac);
    double x = fmin(every * t_it, compute); /* one checkpoint interval of compute */
    double d = x + (cfg->checkpoint_async ? cfg->checkpoint_snapshot_s : 0) +
               cfg->checkpoint_write_s; /* until it is durable */
    double u = cfg->restart_s + campaign_mean_detection_s(cfg) +
               (cfg->spares_limited ? cfg->swap_s : 0);
    o->interruption_rate_per_s = lambda;
    o->segment_s = d;
    o->restart_s = u;
    o->compute_time_s = compute;
    /* ln of elapsed / compute: (e^{L d} - 1) e^{L u} / (L x), the mean time
     * to get d seconds without a failure when each failure costs a restart
     * (itself restarted by a failure), per x of compute */
    double ld = lambda * d, log_ratio;
    if (!(lambda < INFINITY)) /* the rates' sum overflowed: no progress at all */
        log_ratio = INFINITY;
    else if (!(lambda > 0))
        log_ratio = log(d / x);
    else if (ld > 30)
        log_ratio = ld + log1p(-exp(-ld)) + lambda * u - log(lambda * x);
    else
        log_ratio = log(expm1(ld)) + lambda * u - log(lambda * x);
    /* maintenance: every P a window of m, preceded by a write and followed
     * by a restart; what is left of P computes, in whole iterations */
    double maint_frac = 1;
    if (cfg->maintenance_every_s > 0) {
        double P = cfg->maintenance_every_s;
        double left = P - cfg->maintenance_s - cfg->checkpoint_write_s - cfg->restart_s;
        maint_frac = left >= t_it ? floor(fmin(left / t_it, 9e15)) * t_it / P : 0;
    }
    o->log_elapsed_per_compute = log_ratio - log(maint_frac); /* +inf when no progress */
    o->expected_ettr_frac = exp(-o->log_elapsed_per_compute);
    /* engine events over the expected duration (up to the give-up horizon):
     * ~3 per checkpoint interval (segment, write, persist), ~5 per failure
     * (failure, detection, repair, restart, the segment again), 2 per
     * straggler spell (it, its drain), ~4 per window; a limited pool may
     * wait up to a repair per failure */
    double t = compute * fmin(exp(fmin(o->log_elapsed_per_compute, 700)),
                              2 * CAMPAIGN_GIVE_UP_FACTOR);
    if (cfg->spares_limited)
        t += lambda * t * cfg->repair_mean_s;
    if (cfg->straggler_rate_per_s > 0)
        t /= cfg->straggler_speed;
    double events = 16 + 3 * compute / x + 5 * lambda * t +
                    2 * (double)rs.n_nodes * cfg->straggler_rate_per_s * t +
                    (cfg->maintenance_every_s > 0 ? 4 * t / cfg->maintenance_every_s : 0);
    o->expected_events = isfinite(events) ? events : INFINITY;
}

/* Refuse, before simulating, a run that cannot finish: a horizon a double
 * cannot time to the second, an expected ETTR below 1 / CAMPAIGN_GIVE_UP_FACTOR,
 * or more than CAMPAIGN_MAX_EVENTS expected engine events. */
static int check_outlook(const campaign_config *cfg, const campaign_outlook *o, sim_error *err)
{
    if (!(o->compute_time_s <= CAMPAIGN_MAX_COMPUTE_S))
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "the failure-free compute time is %.3g s (%.3g years): at most "
                             "%.3g s (event times must stay exact to the second up to %g times "
                             "it); check the GPU's peak, the MFU and the model and token counts",
                             o->compute_time_s, o->compute_time_s / (365.25 * 86400),
                             CAMPAIGN_MAX_COMPUTE_S, CAMPAIGN_GIVE_UP_FACTOR);
    if (cfg->maintenance_every_s > 0 && !(o->log_elapsed_per_compute < INFINITY)) {
        double t_it = campaign_iteration_time_s(cfg);
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "the job can make no progress: a maintenance window every %.4g s "
                             "leaves %.4g s after the window (%.4g s), the write (%.4g s) and "
                             "the restart (%.4g s), less than one iteration (%.4g s); allowed: "
                             "a period longer than their sum",
                             cfg->maintenance_every_s,
                             cfg->maintenance_every_s - cfg->maintenance_s -
                                 cfg->checkpoint_write_s - cfg->restart_s,
                             cfg->maintenance_s, cfg->checkpoint_write_s, cfg->restart_s, t_it);
    }
    if (!(o->log_elapsed_per_compute <= log(CAMPAIGN_GIVE_UP_FACTOR))) {
        char ettr[32], maint[96] = "";
        if (o->expected_ettr_frac >= 1e-300 || !(o->log_elapsed_per_compute < INFINITY))
            snprintf(ettr, sizeof ettr, "%.3g", o->expected_ettr_frac);
        else
            snprintf(ettr, sizeof ettr, "e^-%.4g", o->log_elapsed_per_compute);
        if (cfg->maintenance_every_s > 0)
            snprintf(maint, sizeof maint, "; a %.4g s maintenance window every %.4g s",
                     cfg->maintenance_s, cfg->maintenance_every_s);
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "the job can make almost no progress: expected ETTR %s with a "
                             "failure every %.4g s on average (all causes), %.4g s of work per "
                             "checkpoint interval and its write, %.4g s per restart%s; allowed: "
                             "an expected ETTR of at least %g",
                             ettr,
                             o->interruption_rate_per_s > 0 ? 1 / o->interruption_rate_per_s
                                                            : INFINITY,
                             o->segment_s, o->restart_s, maint, 1 / CAMPAIGN_GIVE_UP_FACTOR);
    }
    if (!(o->expected_events <= CAMPAIGN_MAX_EVENTS))
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "the run would take about %.3g engine events (failures, stragglers, "
                             "maintenance windows and checkpoints over %.4g s of expected "
                             "time to train): at most %.3g",
                             o->expected_events,
                             o->compute_time_s / fmax(o->expected_ettr_frac, 1e-300),
                             CAMPAIGN_MAX_EVENTS);
    return 0;
}

int campaign_run(const campaign_config *cfg, const campaign_sink *sink, campaign_poll_fn poll,
                 void *poll_ctx, campaign_result *out, sim_error *err)
{
    int rc = campaign_config_check(cfg, err);
    if (rc)
        return rc;
    campaign c = {.cfg = cfg, .sink = sink, .poll = poll, .poll_ctx = poll_ctx, .err = err,
                  .failing_part = -1};
    c.eng = sim_engine_create();
    if (!c.eng)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory for the engine");

    double rate = (double)cfg->gpu_count * cfg->gpu_peak_flops_per_s * cfg->mfu_frac;
    c.seconds_per_token = 6.0 * cfg->model_params / rate;
    c.n_iterations = iteration_count(cfg);
    campaign_result *r = &c.res;
    r->iteration_time_s = campaign_iteration_time_s(cfg);
    c.every = cadence(cfg, r->iteration_time_s, c.n_iterations);
    campaign_outlook look;
    campaign_outlook_of(cfg, &look);
    rc = check_outlook(cfg, &look, err);
    if (rc) {
        sim_engine_destroy(c.eng);
        return rc;
    }
    c.event_cap = cfg->max_events ? (double)cfg->max_events
                                  : CAMPAIGN_EVENT_CAP_FACTOR * look.expected_events +
                                        CAMPAIGN_EVENT_CAP_SLACK;
    r->iterations = c.n_iterations;
    r->checkpoint_every_iterations = c.every;
    r->checkpoint_interval_s = (double)c.every * r->iteration_time_s;
    r->total_flops = 6.0 * cfg->model_params * cfg->train_tokens;
    r->compute_time_s = cfg->train_tokens * c.seconds_per_token;

    rate_split rs;
    double cluster_rate = split_rates(cfg, &rs);
    c.n_nodes = rs.n_nodes;
    c.n_racks = rs.n_racks;
    c.gpu_rate = rs.gpu_rate;
    c.node_rate = rs.node_rate;
    c.rack_rate = rs.rack_rate;
    double tau = r->checkpoint_interval_s, w = cfg->checkpoint_write_s;
    double u0 = cfg->restart_s + campaign_mean_detection_s(cfg);
    r->ettr_first_order_frac = fmax(0, (1.0 - cluster_rate * (u0 + tau / 2)) / (1.0 + w / tau));
    if (cfg->spares_limited) {
        c.spares = cfg->spare_nodes;
        r->spares_lowest = cfg->spare_nodes;
        c.repair_rng = sim_rng_stream_create(cfg->seed, SIM_ENTITY_JOB, 0, SIM_PURPOSE_REPAIR);
        if (!c.repair_rng)
            rc = sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory for the repair stream");
    }
    if (!rc && cfg->health_check_s > 0) {
        c.detect_rng = sim_rng_stream_create(cfg->seed, SIM_ENTITY_JOB, 0, SIM_PURPOSE_DETECTION);
        if (!c.detect_rng)
            rc = sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory for a stream");
    }
    if (!rc && cluster_rate > 0) {
        r->cluster_mtbf_s = 1.0 / cluster_rate;
        r->young_interval_s = sqrt(2.0 * w * r->cluster_mtbf_s);
        r->daly_interval_s = campaign_daly_interval_s(w, r->cluster_mtbf_s);
        rc = make_failure_streams(&c);
    }
    if (!rc && cfg->straggler_rate_per_s > 0)
        rc = make_straggler_streams(&c);
    if (!rc) {
        sim_engine_set_poll(c.eng, on_poll, &c, POLL_EVERY);
        if (cfg->maintenance_every_s > 0)
            sim_schedule_at(c.eng, cfg->maintenance_every_s, PRIO_JOB, KIND_MAINTENANCE,
                            on_maintenance_start, &c, 0);
        enter(&c, CAMPAIGN_STATE_COMPUTE);
        emit_event(&c, CAMPAIGN_EVENT_JOB_START, -1, 0, 0);
        start_compute(&c);
        /* a run that would take longer than this makes almost no progress
         * (ETTR under 0.1 %): say so rather than simulate for ever */
        double horizon = CAMPAIGN_GIVE_UP_FACTOR * r->compute_time_s +
                         (cfg->maintenance_every_s > 0 ? CAMPAIGN_GIVE_UP_FACTOR * r->compute_time_s *
                                                             cfg->maintenance_s /
                                                             cfg->maintenance_every_s
                                                       : 0);
        enum sim_run_status st = sim_run(c.eng, horizon);
        if (c.sink_failed)
            rc = err && err->code ? err->code : SIM_ERR_IO;
        else if (st == SIM_RUN_POLLED_STOP && c.over_cap)
            rc = sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                               "the run stopped after %llu engine events (at most %.0f: %.3g "
                               "expected), at %.4g s with %.3g%% trained (%s now): failures, "
                               "stragglers or maintenance far outpace the closed-form estimate",
                               (unsigned long long)sim_events_fired(c.eng), c.event_cap,
                               look.expected_events, sim_now(c.eng),
                               100.0 * (double)c.committed / (double)c.n_iterations,
                               campaign_state_name(c.state));
        else if (st == SIM_RUN_POLLED_STOP)
            rc = sim_error_set(err, SIM_ERR_INTERRUPTED, NULL, 0, "interrupted");
        else if (st == SIM_RUN_FAILED)
            rc = sim_error_set(err, SIM_ERR_INTERNAL, NULL, 0, "campaign engine failure: %s",
                               sim_engine_failure(c.eng));
        else if (st == SIM_RUN_UNTIL && c.state != CAMPAIGN_STATE_DONE)
            rc = sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                               "the job makes almost no progress: %.3g%% trained after %g times "
                               "its compute time (%s now; failures, waits for spares or "
                               "maintenance outpace the work)",
                               100.0 * (double)c.committed / (double)c.n_iterations,
                               CAMPAIGN_GIVE_UP_FACTOR, campaign_state_name(c.state));
        else if (c.state != CAMPAIGN_STATE_DONE)
            rc = sim_error_set(err, SIM_ERR_INTERNAL, NULL, 0,
                               "campaign ended before the last token (state %s)",
                               campaign_state_name(c.state));
    }
    if (!rc) {
        r->time_to_train_s = sim_now(c.eng);
        r->ettr_frac = r->compute_time_s / r->time_to_train_s;
        r->events_fired = sim_events_fired(c.eng);
        r->event_digest = sim_digest(c.eng);
        *out = *r;
    }
    free_streams(&c);
    if (c.repair_rng)
        gsl_rng_free(c.repair_rng);
    if (c.detect_rng)
        gsl_rng_free(c.detect_rng);
    sim_engine_destroy(c.eng);
    return rc;
}

double campaign_daly_interval_s(double w, double m)
{
    if (w >= 2 * m)
        return m;
    double x = w / (2 * m);
    return sqrt(2 * w * m) * (1 + sqrt(x) / 3 + x / 9) - w;
}

uint64_t campaign_replica_seed(uint64_t seed, unsigned replica)
{
    if (replica == 0)
        return seed;
    uint64_t x = seed ^ (0x9e3779b97f4a7c15ULL * (replica + 1));
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

int campaign_run_replicas(const campaign_config *cfg, unsigned n, campaign_result *results,
                          campaign_replica_fn progress, void *progress_ctx, sim_error *err)
{
    if (n < 2)
        return 0;
    sim_error *errs = calloc(n, sizeof *errs);
    int *rcs = calloc(n, sizeof *rcs);
    if (!errs || !rcs) {
        free(errs);
        free(rcs);
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory for %u replicas", n);
    }
    unsigned done = 1;
    int stop = 0;
#pragma omp parallel for schedule(dynamic, 1)
    for (unsigned i = 1; i < n; i++) {
        int halt;
#pragma omp atomic read
        halt = stop;
        if (halt) {
            rcs[i] = SIM_ERR_INTERRUPTED;
            sim_error_set(&errs[i], SIM_ERR_INTERRUPTED, NULL, 0, "interrupted");
            continue;
        }
        campaign_config c = *cfg;
        c.seed = campaign_replica_seed(cfg->seed, i);
        sim_error_clear(&errs[i]);
        rcs[i] = campaign_run(&c, NULL, NULL, NULL, &results[i], &errs[i]);
#pragma omp critical(campaign_replica_progress)
        {
            done++;
            if (progress && progress(progress_ctx, done, n))
#pragma omp atomic write
                stop = 1;
        }
    }
    int rc = 0;
    for (unsigned i = 1; i < n && !rc; i++)
        if (rcs[i]) {
            rc = rcs[i];
            if (err)
                *err = errs[i];
        }
    free(errs);
    free(rcs);
    return rc;
}

campaign_stat campaign_stat_of(const double *x, unsigned n)
{
    campaign_stat s = {0, 0, 0};
    if (!n)
        return s;
    double sum = 0;
    for (unsigned i = 0; i < n; i++)
        sum += x[i];
    s.mean = sum / n;
    if (n < 2)
        return s;
    double ss = 0;
    for (unsigned i = 0; i < n; i++)
        ss += (x[i] - s.mean) * (x[i] - s.mean);
    s.sd = sqrt(ss / (n - 1));
    s.ci95 = gsl_cdf_tdist_Pinv(0.975, n - 1.0) * s.sd / sqrt((double)n);
    return s;
}

void campaign_mc_summarize(const campaign_result *r, unsigned n, campaign_mc *out)
{
    memset(out, 0, sizeof *out);
    out->replicas = n;
    double *x = malloc((n ? n : 1) * sizeof *x);
    if (!x)
        return;
#define STAT(field, expr)                      \
    do {                                       \
        for (unsigned i = 0; i < n; i++)       \
            x[i] = (expr);                     \
        out->field = campaign_stat_of(x, n);   \
    } while (0)
    STAT(time_to_train_s, r[i].time_to_train_s);
    STAT(ettr_frac, r[i].ettr_frac);
    STAT(failures, (double)r[i].failures);
    STAT(rework_s, r[i].rework_s);
    STAT(restart_time_s, r[i].restart_time_s);
    STAT(checkpoint_time_s, r[i].checkpoint_time_s);
    for (unsigned k = 0; k <= CAMPAIGN_MAX_CAUSES; k++)
        STAT(failures_by_cause[k], (double)r[i].failures_by_cause[k]);
#undef STAT
    free(x);
}
