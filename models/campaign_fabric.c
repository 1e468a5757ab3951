/* campaign_fabric.c - the campaign on a degraded fabric (issue 20;
 * docs/failures.md "The campaign on a degraded fabric").
 *
 * A switch, cable or NIC cause with a repair time leaves its part down (or, for
 * a fail-slow cause, slow) for Exp(repair_s), drawn on the cause's own
 * repair stream. The parts down or slow now are a list in the workspace;
 * every change asks the caller's fabric_speed for the job's speed on them
 * (the step tier re-simulated on the degraded fabric, cached by the state's
 * digest), and the job computes at that speed until the next change. A down
 * part interrupts the job; the restart then follows the policy (campaign.h
 * enum campaign_fabric_policy). A repair that ends a wait schedules the
 * restart; one during compute speeds the job up at once.
 *
 * A cable cause with flaps > 0 flaps instead (docs/failures.md "Flapping
 * links"): its failure starts an episode, the cable down for flap_down_s
 * then up for flap_up_s, flaps times or until the episode's repair
 * (Exp(repair_s) from its start) if sooner. A down is in the parts list
 * (with no repair event of its own: fab_serial 0) and counts under every
 * policy; it interrupts the job only when the job cannot run on the state
 * (GPUs cut off, no route), else the job runs rerouted at the state's speed.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "campaign.h"
#include "campaign_internal.h"
#include "engine.h"
#include "rng.h"

static const campaign_cause *cause_of(const campaign *c, int32_t cause)
{
    return &c->cfg->causes[cause];
}

/* The job's speed on the parts now, the policy applied (REPLACE: the job
 * was re-placed off the down parts, so only slow ones count): 0 or -1 with
 * the run stopped (the callback's error in c->err). */
static int out_now(const campaign *c, const campaign_part_state *p)
{
    for (unsigned i = 0; i < c->fab_n; i++)
        if (c->ws->fab[i].cause == p->cause && c->ws->fab[i].part == p->part)
            return 1;
    return 0;
}

static int failed_model(campaign *c, const char *what, double v)
{
    if (c->err && !c->err->code)
        sim_error_set(c->err, SIM_ERR_INTERNAL, NULL, 0, "the degraded fabric's %s is %g", what,
                      v);
    c->model_failed = 1;
    sim_stop(c->eng);
    return -1;
}

static int evaluate(campaign *c)
{
    campaign_workspace *ws = c->ws;
    unsigned m = 0;
    int shrink = c->cfg->fabric_policy == CAMPAIGN_FABRIC_SHRINK;
    for (unsigned i = 0; i < c->fab_n; i++) /* a flap down (serial 0) is never re-placed */
        if (c->cfg->fabric_policy != CAMPAIGN_FABRIC_REPLACE || ws->fab[i].speed > 0 ||
            !ws->fab_serial[i])
            ws->fab_view[m++] = ws->fab[i];
    for (unsigned i = 0; shrink && i < c->held_n; i++) /* repaired, still counted down */
        if (!out_now(c, &ws->held[i]))
            ws->fab_view[m++] = (campaign_part_state){ws->held[i].cause, ws->held[i].part, 0};
    double v = m ? c->cfg->fabric_speed(c->cfg->fabric_ctx, ws->fab_view, m, c->err) : 1.0;
    if (!(v >= 0) || !isfinite(v)) /* negative: the callback's error; NaN: a bug there */
        return failed_model(c, "speed (not a number >= 0)", v);
    c->kept_now = 1;
    if (shrink && m && v > 0) {
        c->kept_now = c->cfg->fabric_kept(c->cfg->fabric_ctx, ws->fab_view, m);
        if (!(c->kept_now > 0 && c->kept_now <= 1))
            return failed_model(c, "share of GPUs kept (not in (0, 1])", c->kept_now);
    }
    int down = 0;
    for (unsigned i = 0; i < m; i++)
        down |= ws->fab_view[i].speed == 0;
    if (v == 0 && !down) /* slow parts only, yet no measurable speed (an iteration that
                            overflowed): the job stalls until a repair, it does not run */
        v = DBL_MIN;
    if (v > 1) { /* never credit a failure: ECMP rehash luck is taken as built */
        c->res.fabric_faster++;
        v = 1;
    }
    c->fabric_now = v;
    c->fab_view_n = m;
    return campaign_fabric_hot(c);
}

/* Thermal throttling on the degraded fabric: the step tier's iteration with
 * both applied (fabric_hot_speed), not the product of the two speeds. The
 * job computes at fabric_now x this factor, so the degraded stretch stays
 * the fabric's alone and the throttle's is what the combined state adds. */
int campaign_fabric_hot(campaign *c)
{
    c->fabric_hot_now = 0;
    if (c->throttle_is_hot && c->cfg->fabric_hot_speed && c->fab_view_n &&
        c->fabric_now > DBL_MIN) { /* else not hot, nothing out, or the job cannot run */
        double v = c->cfg->fabric_hot_speed(c->cfg->fabric_ctx, c->ws->fab_view,
                                            c->fab_view_n, c->err);
        if (!(v > 0) || !isfinite(v)) /* the fabric alone runs: throttling cannot stop it */
            return failed_model(c, "speed with throttling (not a number > 0)", v);
        c->fabric_hot_now = fmin(1.0, v / c->fabric_now);
    }
    return campaign_straggler_combined(c); /* a slow node on top of both */
}

static void on_fabric_repair(sim_engine *eng, void *ctx, uint64_t serial);

/* The change to the sink's parts table (after evaluate: job_speed is the
 * state's). 0, or -1 with the run stopped (the sink's error). */
static int emit_part(campaign *c, int action, int32_t cause, uint64_t part, double speed)
{
    if (c->sink_failed || !c->sink || !c->sink->part)
        return 0;
    campaign_part_event ev;
    memset(&ev, 0, sizeof ev); /* padding too: the trace stores the bytes */
    ev.time_s = sim_now(c->eng);
    ev.action = action;
    ev.cause = cause;
    ev.part = (int64_t)part;
    ev.fabric_id = c->cfg->fabric_part_id
                       ? c->cfg->fabric_part_id(c->cfg->fabric_ctx, cause, part)
                       : -1;
    ev.speed = speed;
    ev.job_speed = c->fabric_now;
    ev.parts_out = c->fab_n;
    if (c->sink->part(c->sink->ctx, &ev, c->err)) {
        c->sink_failed = 1;
        sim_stop(c->eng);
        return -1;
    }
    return 0;
}

/* Add the failing part (or make a part already out worse: the lower speed,
 * the later repair); its repair event carries a fresh serial, so an earlier
 * one for the same part finds nothing. 0, or -1 with the run stopped. */
static int add_part(campaign *c, int32_t cause, uint64_t part, double speed)
{
    campaign_workspace *ws = c->ws;
    unsigned i = 0;
    while (i < c->fab_n && !(ws->fab[i].cause == cause && ws->fab[i].part == part))
        i++;
    if (i == c->fab_n) {
        if (c->fab_n == CAMPAIGN_MAX_FABRIC_PARTS) {
            sim_error_set(c->err, SIM_ERR_INPUT, NULL, 0,
                          "more than %d network parts down or slow at once at %.6g s: "
                          "repairs far slower than failures",
                          CAMPAIGN_MAX_FABRIC_PARTS, sim_now(c->eng));
            c->model_failed = 1;
            sim_stop(c->eng);
            return -1;
        }
        ws->fab[c->fab_n++] = (campaign_part_state){cause, part, speed};
    } else if (speed < ws->fab[i].speed) {
        ws->fab[i].speed = speed;
    }
    ws->fab_serial[i] = ++c->fab_serial_next;
    gsl_rng *r = &ws->job.rngs[WS_SLOT_FABRIC_REPAIR + cause];
    sim_schedule_in(c->eng, gsl_ran_exponential(r, cause_of(c, cause)->repair_s), PRIO_FAILURE,
                    KIND_FABRIC_REPAIR, on_fabric_repair, c, ws->fab_serial[i]);
    return 0;
}

/* The speed of a part out now (the lower of its failures). */
static double part_speed(const campaign *c, int32_t cause, uint64_t part)
{
    for (unsigned i = 0; i < c->fab_n; i++)
        if (c->ws->fab[i].cause == cause && c->ws->fab[i].part == part)
            return c->ws->fab[i].speed;
    return 1;
}

static void flap_begin(campaign *c, int32_t cause, uint64_t part);

void campaign_fabric_part_fails(campaign *c, int32_t cause)
{
    /* done, or in a maintenance window (the part is replaced there) */
    if (c->state == CAMPAIGN_STATE_DONE || c->state == CAMPAIGN_STATE_MAINTENANCE)
        return;
    const campaign_cause *x = cause_of(c, cause);
    uint64_t part = (uint64_t)c->failing_part;
    if (x->flaps) {
        flap_begin(c, cause, part);
        return;
    }
    if (add_part(c, cause, part, x->slow_speed) || evaluate(c) ||
        emit_part(c, x->slow_speed > 0 ? CAMPAIGN_PART_SLOW : CAMPAIGN_PART_DOWN, cause, part,
                  part_speed(c, cause, part)))
        return;
    if (x->slow_speed > 0) { /* fail-slow: no interruption, the job slows */
        c->res.parts_slow++;
        campaign_speed_changed(c);
        return;
    }
    c->res.parts_down++;
    campaign_interrupt(c, cause, -1, -1, c->committed, 0);
}

/* Whether the restart must wait now: WAIT while any part is down, RESTART
 * while the job cannot run on what is left. */
static int wait_needed(const campaign *c)
{
    if (c->cfg->fabric_policy == CAMPAIGN_FABRIC_WAIT) {
        for (unsigned i = 0; i < c->fab_n; i++)
            if (c->ws->fab[i].speed == 0)
                return 1;
        return 0;
    }
    return c->fabric_now == 0;
}

/* SHRINK at a restart point: the parts down now that cut GPUs off are the
 * ones the job's shape leaves out until the next; the speed on them (other
 * policies: the speed). 0, or -1 with the run stopped. */
static int refresh_held(campaign *c)
{
    if (c->cfg->fabric_policy != CAMPAIGN_FABRIC_SHRINK)
        return evaluate(c);
    c->held_n = 0;
    for (unsigned i = 0; i < c->fab_n; i++)
        if (c->ws->fab[i].speed == 0 && c->cfg->fabric_cuts(c->cfg->fabric_ctx, &c->ws->fab[i]))
            c->ws->held[c->held_n++] = c->ws->fab[i];
    return evaluate(c);
}

int campaign_fabric_grow_due(const campaign *c)
{
    if (c->cfg->fabric_policy != CAMPAIGN_FABRIC_SHRINK)
        return 0;
    for (unsigned i = 0; i < c->held_n; i++)
        if (!out_now(c, &c->ws->held[i]))
            return 1;
    return 0;
}

int campaign_fabric_must_wait(campaign *c)
{
    c->fabric_waiting = 0;
    if (c->cfg->fabric_policy == CAMPAIGN_FABRIC_SHRINK && refresh_held(c))
        return 1; /* stopped */
    if (!c->fab_n || !wait_needed(c)) {
        c->res.shrink_restarts += c->kept_now < 1;
        return 0;
    }
    c->res.fabric_unrunnable += c->fabric_now == 0;
    c->fabric_waiting = 1;
    c->fabric_wait_since = sim_now(c->eng);
    return 1;
}

static void part_back(campaign *c, const campaign_part_state *gone, int action);

static void on_fabric_repair(sim_engine *eng, void *ctx, uint64_t serial)
{
    (void)eng;
    campaign *c = ctx;
    campaign_workspace *ws = c->ws;
    unsigned i = 0;
    while (i < c->fab_n && ws->fab_serial[i] != serial)
        i++;
    if (i == c->fab_n || c->state == CAMPAIGN_STATE_DONE)
        return; /* superseded by a later failure of the same part */
    campaign_part_state gone = ws->fab[i];
    for (unsigned j = i + 1; j < c->fab_n; j++) { /* keep the failure order */
        ws->fab[j - 1] = ws->fab[j];
        ws->fab_serial[j - 1] = ws->fab_serial[j];
    }
    c->fab_n--;
    c->res.parts_repaired++;
    part_back(c, &gone, CAMPAIGN_PART_REPAIRED);
}

/* After a part left the list: the speed on what is left, the change to
 * the sink, and the job sped up, or a restart waiting for it scheduled. */
static void part_back(campaign *c, const campaign_part_state *gone, int action)
{
    sim_engine *eng = c->eng;
    /* a restart waiting for repairs takes its shape when it goes: the
     * parts that cut GPUs off then */
    int waits = c->state == CAMPAIGN_STATE_RESTART && c->fabric_waiting;
    if ((waits ? refresh_held(c) : evaluate(c)) ||
        emit_part(c, action, gone->cause, gone->part, 1))
        return;
    if (c->state == CAMPAIGN_STATE_COMPUTE) {
        campaign_speed_changed(c);
        return;
    }
    if (c->state != CAMPAIGN_STATE_RESTART || !c->fabric_waiting || wait_needed(c))
        return;
    c->fabric_waiting = 0;
    c->res.fabric_wait_s += sim_now(eng) - c->fabric_wait_since;
    c->res.shrink_restarts += c->kept_now < 1;
    if (!c->waiting) /* not still waiting for a spare node */
        campaign_schedule_restart(c);
}

/* ---- flapping cables */

#define FLAP_END (1ULL << 63) /* the event ends the episode (its repair) */

static void on_flap(sim_engine *eng, void *ctx, uint64_t data);

static unsigned flap_index(const campaign *c, uint64_t serial)
{
    unsigned i = 0;
    while (i < c->flap_n && c->ws->flap[i].serial != serial)
        i++;
    return i;
}

static void flap_remove(campaign *c, unsigned i)
{
    for (unsigned j = i + 1; j < c->flap_n; j++)
        c->ws->flap[j - 1] = c->ws->flap[j];
    c->flap_n--;
}

static int too_many(campaign *c)
{
    sim_error_set(c->err, SIM_ERR_INPUT, NULL, 0,
                  "more than %d network parts down, slow or flapping at once at %.6g s: "
                  "repairs far slower than failures", CAMPAIGN_MAX_FABRIC_PARTS,
                  sim_now(c->eng));
    c->model_failed = 1;
    sim_stop(c->eng);
    return -1;
}

/* A flap's down or up time of mean `mean`: itself (fixed), or drawn on the
 * cause's flap stream (exponential) */
static double flap_time(campaign *c, int32_t cause, double mean)
{
    if (cause_of(c, cause)->flap_law != CAMPAIGN_FLAP_EXPONENTIAL)
        return mean;
    return gsl_ran_exponential(&c->ws->job.rngs[WS_SLOT_FLAP + cause], mean);
}

/* Episode i's cable goes down: in the parts list, the job rerouted at the
 * state's speed, or interrupted when it cannot run there (SHRINK: when the
 * cable cuts GPUs off, as a restart must shrink the job). */
static void flap_down(campaign *c, unsigned i)
{
    campaign_workspace *ws = c->ws;
    campaign_flap *f = &ws->flap[i];
    if (c->fab_n == CAMPAIGN_MAX_FABRIC_PARTS) {
        too_many(c);
        return;
    }
    campaign_part_state p = {f->cause, f->part, 0};
    ws->fab[c->fab_n] = p;
    ws->fab_serial[c->fab_n++] = 0; /* a flap's: no repair event */
    f->is_down = 1;
    f->down_since = sim_now(c->eng);
    f->downs_left--;
    c->res.flaps++;
    sim_schedule_in(c->eng, flap_time(c, f->cause, cause_of(c, f->cause)->flap_down_s),
                    PRIO_FAILURE, KIND_FLAP, on_flap, c, f->serial);
    if (evaluate(c) || emit_part(c, CAMPAIGN_PART_FLAP_DOWN, p.cause, p.part, 0))
        return;
    if (c->state == CAMPAIGN_STATE_MAINTENANCE)
        return; /* the job is not running: its restart checks the state */
    int cut = c->fabric_now == 0 ||
              (c->cfg->fabric_policy == CAMPAIGN_FABRIC_SHRINK && c->cfg->fabric_cuts &&
               c->cfg->fabric_cuts(c->cfg->fabric_ctx, &p));
    if (!cut) {
        campaign_speed_changed(c);
        return;
    }
    c->res.flap_interruptions++;
    campaign_interrupt(c, p.cause, -1, -1, c->committed, 0);
}

/* Episode i's cable comes back up; the next down after flap_up_s unless
 * the episode ends (its last down, or its repair: ended). */
static void flap_up(campaign *c, unsigned i, int ended)
{
    campaign_workspace *ws = c->ws;
    campaign_flap *f = &ws->flap[i];
    campaign_part_state gone = {f->cause, f->part, 0};
    unsigned k = 0;
    while (k < c->fab_n &&
           !(ws->fab[k].cause == f->cause && ws->fab[k].part == f->part && !ws->fab_serial[k]))
        k++;
    for (unsigned j = k + 1; j < c->fab_n; j++) {
        ws->fab[j - 1] = ws->fab[j];
        ws->fab_serial[j - 1] = ws->fab_serial[j];
    }
    c->fab_n -= k < c->fab_n;
    f->is_down = 0;
    c->res.flap_down_s += sim_now(c->eng) - f->down_since;
    if (ended || !f->downs_left)
        flap_remove(c, i);
    else
        sim_schedule_in(c->eng, flap_time(c, f->cause, cause_of(c, f->cause)->flap_up_s),
                        PRIO_FAILURE, KIND_FLAP, on_flap, c, f->serial);
    part_back(c, &gone, CAMPAIGN_PART_FLAP_UP);
}

static void flap_begin(campaign *c, int32_t cause, uint64_t part)
{
    campaign_workspace *ws = c->ws;
    for (unsigned i = 0; i < c->flap_n; i++)
        if (ws->flap[i].cause == cause && ws->flap[i].part == part)
            return; /* flapping already: the episode goes on */
    if (c->flap_n == CAMPAIGN_MAX_FABRIC_PARTS) {
        too_many(c);
        return;
    }
    const campaign_cause *x = cause_of(c, cause);
    uint64_t serial = ++c->flap_serial_next;
    ws->flap[c->flap_n++] = (campaign_flap){cause, part, x->flaps, 0, 0, serial};
    c->res.flap_episodes++;
    gsl_rng *r = &ws->job.rngs[WS_SLOT_FABRIC_REPAIR + cause];
    sim_schedule_in(c->eng, gsl_ran_exponential(r, x->repair_s), PRIO_FAILURE, KIND_FLAP,
                    on_flap, c, serial | FLAP_END);
    flap_down(c, c->flap_n - 1);
}

static void on_flap(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)eng;
    campaign *c = ctx;
    unsigned i = flap_index(c, data & ~FLAP_END);
    if (i == c->flap_n || c->state == CAMPAIGN_STATE_DONE)
        return; /* the episode is over */
    if (data & FLAP_END) { /* repaired: the flapping stops */
        c->res.parts_repaired++;
        if (c->ws->flap[i].is_down)
            flap_up(c, i, 1);
        else
            flap_remove(c, i);
    } else if (c->ws->flap[i].is_down) {
        flap_up(c, i, 0);
    } else {
        flap_down(c, i);
    }
}

void campaign_fabric_reset(campaign *c)
{
    c->flap_n = 0;
    c->flap_serial_next = 0;
    c->res.flapping = 0;
    for (unsigned i = 0; i < c->cfg->n_causes; i++)
        c->res.flapping |= c->cfg->causes[i].repair_s > 0 && c->cfg->causes[i].flaps > 0;
    c->fab_n = 0;
    c->fab_serial_next = 0;
    c->fabric_now = 1;
    c->fabric_hot_now = 0;
    c->slow_combined_now = 0;
    c->fab_view_n = 0;
    c->speed_fabric = 1;
    c->fabric_waiting = 0;
    c->held_n = 0;
    c->kept_now = c->kept_epoch = 1;
    c->res.shrink = c->cfg->fabric_policy == CAMPAIGN_FABRIC_SHRINK;
    c->res.fabric_causes = 0;
    for (unsigned i = 0; i < c->cfg->n_causes; i++) {
        const campaign_cause *x = &c->cfg->causes[i];
        if (x->repair_s > 0 && ++c->res.fabric_causes)
            sim_rng_stream_reseed(&c->ws->job.rngs[WS_SLOT_FABRIC_REPAIR + i], c->cfg->seed,
                                  campaign_part_entity(x->unit), i, SIM_PURPOSE_REPAIR);
        if (x->flaps && x->flap_law == CAMPAIGN_FLAP_EXPONENTIAL)
            sim_rng_stream_reseed(&c->ws->job.rngs[WS_SLOT_FLAP + i], c->cfg->seed,
                                  campaign_part_entity(x->unit), i, SIM_PURPOSE_FLAP);
    }
}
