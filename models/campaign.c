/* campaign.c - the campaign tier's state machine and campaign_run (model
 * and invariants in campaign.h).
 *
 * Compute between two checkpoints is one event, not one per iteration, so a
 * run of millions of iterations costs a few events per checkpoint and per
 * failure. The job is in one state at a time (compute, checkpoint, restart,
 * maintenance, done); every second of the run is accounted to one of them.
 * The failure processes that interrupt it live in campaign_failures.c.
 */
#include "campaign.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "campaign_internal.h"
#include "engine.h"
#include "rng.h"

#define POLL_EVERY 4096

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
    /* the degraded fabric's part: at the elastic and fabric speeds, beyond */
    double at_degraded = c->speed_fabric < 1
                             ? time_at(c, work, c->speed_elastic * c->speed_fabric)
                             : at_elastic;
    /* each part is >= 0 by definition; rounding in the inverses leaves
     * residues of either sign (-5e-11 s): clamp them at zero */
    c->res.persist_slowdown_s += fmax(0, at_full - work);
    c->res.elastic_slowdown_s += fmax(0, at_elastic - at_full);
    if (c->speed_fabric < 1)
        c->res.degraded_slowdown_s += fmax(0, at_degraded - at_elastic);
    /* thermal throttling's part: at the elastic, fabric and thermal speeds */
    double at_thermal = c->speed_thermal < 1
                            ? time_at(c, work, c->speed_elastic * c->speed_fabric *
                                                   c->speed_thermal)
                            : at_degraded;
    if (c->speed_thermal < 1)
        c->res.throttle_slowdown_s += fmax(0, at_thermal - at_degraded);
    if (c->speed_slow < 1) /* else none: elapsed - at_thermal is a rounding residue */
        c->res.straggler_slowdown_s += fmax(0, elapsed - at_thermal);
    if (c->kept_epoch < 1) { /* SHRINK: on fewer replicas, the others' GPUs idle */
        c->res.shrunk_s += elapsed;
        c->res.shrunk_idle_gpu_h +=
            elapsed * (1 - c->kept_epoch) * (double)c->cfg->gpu_count / 3600;
    }
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
static void on_drain_due(sim_engine *eng, void *ctx, uint64_t node);
static void drain(campaign *c);
static void begin_restart(campaign *c);

/* Elastic: the most replicas the job goes on without, and its speed (work
 * per second) with `missing` of them gone: from the caller's table (the
 * step profiles of the smaller jobs), or the compute share (dp - k) / dp. */
unsigned campaign_elastic_most_missing(const campaign_config *cfg)
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
    c->target = c->snap + campaign_adapt_every(c, sim_now(c->eng));
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
    c->speed_slow = !c->n_slow                 ? 1.0
                    : c->slow_combined_now > 0 ? c->slow_combined_now
                                               : c->cfg->straggler_speed;
    c->speed_fabric = c->fabric_now > 0 ? c->fabric_now : 1.0;
    c->speed_thermal = !c->throttle_is_hot      ? 1.0
                       : c->fabric_hot_now > 0 ? c->fabric_hot_now
                                               : c->cfg->throttle_speed;
    c->speed = c->speed_elastic * c->speed_fabric * c->speed_slow * c->speed_thermal;
    c->kept_epoch = c->kept_now;
}

/* A node turned slow, or the last slow one left, or a network part went
 * slow or was repaired: a computing job changes speed now, the rest of its
 * segment at the new speed. */
void campaign_speed_changed(campaign *c)
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
    campaign_throttle_finish(c);
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
        if (campaign_fabric_grow_due(c)) { /* grow back once the snapshot is durable */
            c->hold_s = c->persist_end_s - sim_now(eng);
            c->res.grow_restarts++;
            begin_restart(c);
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
        finish_job(c);
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
    if (campaign_fabric_grow_due(c)) { /* SHRINK: grow back here, nothing to lose */
        c->res.grow_restarts++;
        begin_restart(c);
        return;
    }
    start_compute(c);
}

/* A node turns slow: the job slows while any is; its drain comes due
 * straggler_drain_s later. The node's next slow spell follows its own
 * exponential time (a replaced node can turn slow again). */
void campaign_on_straggler(sim_engine *eng, void *ctx, uint64_t node)
{
    campaign *c = ctx;
    sim_schedule_in(eng, gsl_ran_exponential(&c->straggler_rng[node], 1 / c->cfg->straggler_rate_per_s),
                    PRIO_FAILURE, KIND_STRAGGLER, campaign_on_straggler, c, node);
    if (c->slow[node] || c->state == CAMPAIGN_STATE_DONE)
        return;
    c->slow[node] = 1;
    c->slow_since[node] = sim_now(eng);
    c->res.stragglers++;
    emit_failure_event(c, CAMPAIGN_EVENT_STRAGGLER, -1, (int64_t)node, -1, 0, 0);
    sim_schedule_in(eng, c->cfg->straggler_drain_s, PRIO_FAILURE, KIND_DRAIN_DUE, on_drain_due, c,
                    node);
    if (c->n_slow++ == 0 && !campaign_straggler_combined(c))
        campaign_speed_changed(c);
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
    campaign_spares_clear(c);
    for (uint64_t i = 0; i < c->n_nodes; i++)
        if (c->slow[i] == 2) {
            first = first < 0 ? (int64_t)i : first;
            count++;
            campaign_spares_need_node(c, i);
            c->slow[i] = 0;
            c->n_slow--;
        }
    c->n_drain_due = 0;
    c->res.drains += count;
    emit_failure_event(c, CAMPAIGN_EVENT_DRAIN, -1, first, -1, 0, 0);
    campaign_spares_send_needed(c);
    c->detect_s = 0; /* planned */
    begin_restart(c);
}

/* A restart: with a limited pool, swap in spares first, or wait for them
 * (campaign_spares.c). */
static void begin_restart(campaign *c)
{
    enter(c, CAMPAIGN_STATE_RESTART);
    c->waiting = 0;
    c->pending = 0;
    if (!campaign_spares_take(c)) {
        campaign_fabric_must_wait(c); /* it may wait for repairs as well */
        return;
    }
    if (!campaign_fabric_must_wait(c))
        campaign_schedule_restart(c);
}

void campaign_schedule_restart(campaign *c)
{
    c->pending = sim_schedule_in(c->eng,
                                 c->hold_s + c->restart_swap_s + c->detect_s + c->cfg->restart_s,
                                 PRIO_JOB, KIND_RESTART_END, on_restart_end, c, 0);
    c->detect_s = c->hold_s = 0;
}

/* A restart cut short (a failure, a window): what its waits took. */
static void end_waits(campaign *c, double now)
{
    if (c->waiting)
        c->res.spare_wait_s += now - c->wait_since;
    c->waiting = 0;
    if (c->fabric_waiting)
        c->res.fabric_wait_s += now - c->fabric_wait_since;
    c->fabric_waiting = 0;
}

static void start_maintenance(campaign *c)
{
    enter(c, CAMPAIGN_STATE_MAINTENANCE);
    c->detect_s = 0; /* planned: nothing to detect */
    campaign_spares_clear(c); /* parts are replaced in the window: the restart swaps nothing */
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
        end_waits(c, now);
        if (c->pending)
            sim_cancel(eng, c->pending);
        emit_segment(c, 1, c->committed);
        start_maintenance(c);
        return;
    default: /* in a window already, or done */
        return;
    }
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

void campaign_interrupt(campaign *c, int32_t cause, int64_t gpu, int64_t node, uint64_t good,
                        unsigned lost_nodes)
{
    sim_engine *eng = c->eng;
    double now = sim_now(eng);
    double lost = 0, elapsed = now - c->state_start_s;
    uint64_t reached = c->committed;
    int was_waiting = c->state == CAMPAIGN_STATE_RESTART && c->waiting;
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
        end_waits(c, now);
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
    /* the failed nodes go to repair; the restart swaps them in (added to
     * what a restart that was waiting for spares needs) */
    campaign_spares_lost(c, node >= 0 ? node : gpu >= 0 ? gpu / per_node : -1, lost_nodes,
                         was_waiting);
    c->detect_s = c->silent_found ? 0 : campaign_draw_detection(c); /* a corruption found is known */
    c->res.failures++;
    c->res.failures_by_cause[cause + 1]++;
    campaign_adapt_observe(c, sim_now(eng));
    c->res.rework_s += lost;
    emit_failure_event(c, CAMPAIGN_EVENT_FAILURE, gpu, node, cause, lost, 0);
    if (window_due)
        start_maintenance(c); /* the window replaces the part; the restart follows it */
    else
        begin_restart(c);
}

/* every POLL_EVERY events: the event cap, then the caller's poll */
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

/* The run's timing: iteration time and count, checkpoint cadence, the
 * closed-form outlook (refusing a run it says cannot finish) and the event
 * cap from it, and the result's fixed fields. 0 or SIM_ERR_INPUT. */
static int set_up_timing(campaign *c, campaign_outlook *look)
{
    const campaign_config *cfg = c->cfg;
    double rate = (double)cfg->gpu_count * cfg->gpu_peak_flops_per_s * cfg->mfu_frac;
    c->seconds_per_token = 6.0 * cfg->model_params / rate;
    c->n_iterations = campaign_iteration_count(cfg);
    campaign_result *r = &c->res;
    r->iteration_time_s = campaign_iteration_time_s(cfg);
    c->every = campaign_cadence(cfg, r->iteration_time_s, c->n_iterations);
    campaign_outlook_of(cfg, look);
    int rc = campaign_check_outlook(cfg, look, c->err);
    if (rc)
        return rc;
    c->event_cap = cfg->max_events ? (double)cfg->max_events
                                   : CAMPAIGN_EVENT_CAP_FACTOR * look->expected_events +
                                         CAMPAIGN_EVENT_CAP_SLACK;
    r->iterations = c->n_iterations;
    r->checkpoint_every_iterations = c->every;
    r->checkpoint_interval_s = (double)c->every * r->iteration_time_s;
    r->checkpoint_interval_min_s = r->checkpoint_interval_max_s = r->checkpoint_interval_s;
    r->total_flops = 6.0 * cfg->model_params * cfg->train_tokens;
    r->compute_time_s = cfg->train_tokens * c->seconds_per_token;
    return 0;
}

/* The failure side: rates per unit, the first-order ETTR and the optimal
 * intervals, the spare pool, and every random stream (in c->ws) with its
 * first draw. 0 or SIM_ERR_NOMEM. */
static int set_up_failures(campaign *c)
{
    const campaign_config *cfg = c->cfg;
    campaign_result *r = &c->res;
    int rc = 0;
    campaign_rate_split rs;
    double cluster_rate = campaign_split_rates(cfg, &rs);
    c->n_nodes = rs.n_nodes;
    c->n_racks = rs.n_racks;
    c->gpu_rate = rs.gpu_rate;
    c->node_rate = rs.node_rate;
    c->rack_rate = rs.rack_rate;
    double tau = r->checkpoint_interval_s, w = cfg->checkpoint_write_s;
    double u0 = cfg->restart_s + campaign_mean_detection_s(cfg);
    r->ettr_first_order_frac = fmax(0, (1.0 - cluster_rate * (u0 + tau / 2)) / (1.0 + w / tau));
    if (cfg->spares_limited) {
        c->repair_rng = &c->ws->job.rngs[WS_SLOT_REPAIR];
        sim_rng_stream_reseed(c->repair_rng, cfg->seed, SIM_ENTITY_JOB, 0, SIM_PURPOSE_REPAIR);
    }
    if (cfg->health_check_s > 0) {
        c->detect_rng = &c->ws->job.rngs[WS_SLOT_DETECT];
        sim_rng_stream_reseed(c->detect_rng, cfg->seed, SIM_ENTITY_JOB, 0, SIM_PURPOSE_DETECTION);
    }
    int fail_slow = 0; /* parts that slow the job without interrupting it */
    for (unsigned i = 0; i < cfg->n_causes; i++)
        fail_slow |= cfg->causes[i].slow_speed > 0 && cfg->causes[i].rate_per_s > 0;
    if (cluster_rate > 0) {
        r->cluster_mtbf_s = 1.0 / cluster_rate;
        r->young_interval_s = sqrt(2.0 * w * r->cluster_mtbf_s);
        r->daly_interval_s = campaign_daly_interval_s(w, r->cluster_mtbf_s);
    }
    rc = campaign_spares_reset(c);
    if (!rc && (cluster_rate > 0 || fail_slow))
        rc = campaign_make_failure_streams(c);
    if (!rc && cfg->straggler_rate_per_s > 0)
        rc = campaign_make_straggler_streams(c);
    campaign_fabric_reset(c);
    campaign_throttle_reset(c);
    return rc;
}

/* Why sim_run stopped, as the run's return code (0: the last token was
 * trained); err set for anything else. */
static int run_outcome(campaign *c, enum sim_run_status st, const campaign_outlook *look)
{
    sim_error *err = c->err;
    if (c->sink_failed)
        return err && err->code ? err->code : SIM_ERR_IO;
    if (c->model_failed)
        return err && err->code ? err->code : SIM_ERR_INTERNAL;
    if (st == SIM_RUN_POLLED_STOP && c->over_cap)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "the run stopped after %llu engine events (at most %.0f: %.3g "
                             "expected), at %.4g s with %.3g%% trained (%s now): failures, "
                             "stragglers or maintenance far outpace the closed-form estimate",
                             (unsigned long long)sim_events_fired(c->eng), c->event_cap,
                             look->expected_events, sim_now(c->eng),
                             100.0 * (double)c->committed / (double)c->n_iterations,
                             campaign_state_name(c->state));
    if (st == SIM_RUN_POLLED_STOP)
        return sim_error_set(err, SIM_ERR_INTERRUPTED, NULL, 0, "interrupted");
    if (st == SIM_RUN_FAILED)
        return sim_error_set(err, SIM_ERR_INTERNAL, NULL, 0, "campaign engine failure: %s",
                             sim_engine_failure(c->eng));
    if (st == SIM_RUN_UNTIL && c->state != CAMPAIGN_STATE_DONE)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "the job makes almost no progress: %.3g%% trained after %g times "
                             "its compute time (%s now; failures, waits for spares or "
                             "maintenance outpace the work)",
                             100.0 * (double)c->committed / (double)c->n_iterations,
                             CAMPAIGN_GIVE_UP_FACTOR, campaign_state_name(c->state));
    if (c->state != CAMPAIGN_STATE_DONE)
        return sim_error_set(err, SIM_ERR_INTERNAL, NULL, 0,
                             "campaign ended before the last token (state %s)",
                             campaign_state_name(c->state));
    return 0;
}

/* Start the job and run the engine up to the give-up horizon. */
static int simulate(campaign *c, const campaign_outlook *look)
{
    const campaign_config *cfg = c->cfg;
    campaign_result *r = &c->res;
    sim_engine_set_poll(c->eng, on_poll, c, POLL_EVERY);
    if (cfg->maintenance_every_s > 0)
        sim_schedule_at(c->eng, cfg->maintenance_every_s, PRIO_JOB, KIND_MAINTENANCE,
                        on_maintenance_start, c, 0);
    enter(c, CAMPAIGN_STATE_COMPUTE);
    emit_event(c, CAMPAIGN_EVENT_JOB_START, -1, 0, 0);
    start_compute(c);
    /* a run that would take longer than this makes almost no progress
     * (ETTR under 0.1 %): say so rather than simulate for ever */
    double horizon = CAMPAIGN_GIVE_UP_FACTOR * r->compute_time_s +
                     (cfg->maintenance_every_s > 0 ? CAMPAIGN_GIVE_UP_FACTOR * r->compute_time_s *
                                                         cfg->maintenance_s /
                                                         cfg->maintenance_every_s
                                                   : 0);
    enum sim_run_status st = sim_run(c->eng, horizon);
    return run_outcome(c, st, look);
}

int campaign_run(const campaign_config *cfg, const campaign_sink *sink, campaign_poll_fn poll,
                 void *poll_ctx, campaign_result *out, sim_error *err)
{
    int rc = campaign_config_check(cfg, err);
    if (rc)
        return rc;
    campaign_workspace *ws = campaign_workspace_create();
    if (!ws)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory for the engine");
    rc = campaign_run_in(ws, cfg, sink, poll, poll_ctx, out, err);
    campaign_workspace_destroy(ws);
    return rc;
}

int campaign_run_in(campaign_workspace *ws, const campaign_config *cfg, const campaign_sink *sink,
                    campaign_poll_fn poll, void *poll_ctx, campaign_result *out, sim_error *err)
{
    int rc = campaign_config_check(cfg, err);
    if (rc)
        return rc;
    /* everything the run reads from ws is reset or reseeded below */
    sim_engine_reset(ws->eng);
    campaign c = {.cfg = cfg, .sink = sink, .poll = poll, .poll_ctx = poll_ctx, .err = err,
                  .failing_part = -1, .ws = ws, .eng = ws->eng,
                  .kept_now = 1, .kept_epoch = 1};
    campaign_outlook look;
    rc = set_up_timing(&c, &look);
    if (!rc)
        rc = set_up_failures(&c);
    if (!rc)
        rc = simulate(&c, &look);
    if (!rc) {
        campaign_result *r = &c.res;
        r->time_to_train_s = sim_now(c.eng);
        r->ettr_frac = r->compute_time_s / r->time_to_train_s;
        /* a run with nothing but compute: the elapsed time is a sum of
         * segments, the compute time one product, and they may differ in the
         * last bits either way (the MoE example without checkpoint costs
         * gave 1 - 1e-14); beyond rounding the summary's range check still
         * fires */
        if (fabs(r->ettr_frac - 1) < 1e-12)
            r->ettr_frac = 1;
        r->events_fired = sim_events_fired(c.eng);
        r->event_digest = sim_digest(c.eng);
        *out = *r;
    }
    return rc;
}
