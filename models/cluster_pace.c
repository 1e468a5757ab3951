/* cluster_pace.c - a job's run at a pace set by its neighbours (cluster.h,
 * cluster_pacer). A running job holds its remaining isolated work w (s) as
 * of upd_s and its pace p since then; its end is upd_s + w / p. At the end
 * of every instant at which a job started or ended (a re-time event after
 * the scheduling pass), the pacer gives every running job its pace; a job
 * whose pace changed has w -= (now - upd_s) p_old, upd_s = now, p = p_new
 * and its end event moved to now + w / p_new. A job whose pace is the same
 * keeps its end event untouched (an isolated job ends at exactly start + d).
 * With disruption (segments, cluster_preempt.c) the same holds per segment:
 * w is the segment's work left (left_s at its start), upd_s starts at the
 * end of its restart, and an elastic job on g of its G GPUs works at p g / G;
 * the pacer sees only jobs working (not restarting, not writing a
 * checkpoint), so a segment's start, close, restart end, a resize and an end
 * all re-time. Time worked at p < 1 loses dt (1 - p) to interference.
 * O(running jobs) per re-time plus the pacer's own cost.
 */
#include <stdlib.h>

#include "cluster_internal.h"
#include "event_kinds.h"

int cluster_pace_init(cluster_sim *s)
{
    uint32_t n = s->n_job;
    s->work_s = malloc((size_t)n * sizeof *s->work_s);
    s->pace = malloc((size_t)n * sizeof *s->pace);
    s->upd_s = malloc((size_t)n * sizeof *s->upd_s);
    s->end_ev = malloc((size_t)n * sizeof *s->end_ev);
    s->pace_ids = malloc((size_t)n * sizeof *s->pace_ids);
    s->pace_new = malloc((size_t)n * sizeof *s->pace_new);
    return s->work_s && s->pace && s->upd_s && s->end_ev && s->pace_ids && s->pace_new ? 0 : -1;
}

void cluster_pace_free(cluster_sim *s)
{
    free(s->work_s);
    free(s->pace);
    free(s->upd_s);
    free(s->end_ev);
    free(s->pace_ids);
    free(s->pace_new);
    s->work_s = s->pace = s->upd_s = s->pace_new = NULL;
    s->end_ev = NULL;
    s->pace_ids = NULL;
}

static void stop(cluster_sim *s, int rc)
{
    if (!s->pacer_rc)
        s->pacer_rc = rc;
    s->failed = 1;
    sim_stop(s->eng);
}

/* the seconds work w takes at job id's rate now (pace x held / GPUs) */
static double time_for(const cluster_sim *s, uint32_t id, double w)
{
    if (s->held)
        return cluster_el_time(s, id, w, s->held[id]) / s->pace[id];
    return w / s->pace[id];
}

/* the isolated work job id does in dt at its rate now */
static double work_in(const cluster_sim *s, uint32_t id, double dt)
{
    double w = dt * s->pace[id];
    return s->held ? cluster_el_work(s, id, w, s->held[id]) : w;
}

void cluster_pace_settle(cluster_sim *s, uint32_t id)
{
    double dt = sim_now(s->eng) - s->upd_s[id];
    if (!(dt > 0))
        return; /* still restarting, or settled this instant */
    double w = s->work_s[id] - work_in(s, id, dt), lost = dt * (1 - s->pace[id]);
    s->work_s[id] = w > 0 ? w : 0;
    s->upd_s[id] = sim_now(s->eng);
    s->job[id].interf_s += lost;
    s->interf_gpu_s += lost * cluster_held(s, id);
}

double cluster_pace_done(const cluster_sim *s, uint32_t id)
{
    double dt = sim_now(s->eng) - s->upd_s[id], w = s->work_s[id];
    if (dt > 0)
        w -= work_in(s, id, dt);
    double done = s->left_s[id] - (w > 0 ? w : 0);
    return done > 0 ? done : 0;
}

/* a working segment's new pace p from now: its end event moved */
static void repace(cluster_sim *s, uint32_t id, double p)
{
    cluster_pace_settle(s, id);
    s->pace[id] = p;
    s->job[id].end_s = s->upd_s[id] + time_for(s, id, s->work_s[id]);
    sim_cancel(s->eng, s->ev[id]);
    s->ev[id] = sim_schedule_at(s->eng, s->job[id].end_s, 0, KIND_CLUSTER_JOB_END,
                                cluster_on_end, s, id);
    if (!s->ev[id])
        s->failed = 1;
}

static void on_retime(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)data;
    cluster_sim *s = ctx;
    s->retime_due = 0;
    if (s->failed)
        return;
    s->retimes++;
    const cluster_pacer *pc = s->c->pacer;
    uint32_t n = 0;
    for (uint32_t k = 0; k < s->running_n; k++) { /* with segments: those working */
        uint32_t id = s->running[k];
        if (!s->is_disrupt ||
            (s->state[id] == CLUSTER_ST_RUN && sim_now(eng) >= s->upd_s[id]))
            s->pace_ids[n++] = id;
    }
    int rc = pc->pace(pc->ctx, sim_now(eng), s->pace_ids, n, s->pace_new, s->err);
    if (rc) {
        stop(s, rc);
        return;
    }
    double now = sim_now(eng);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t id = s->pace_ids[k];
        double p = s->pace_new[k];
        if (!(p > 0 && p <= 1)) {
            stop(s, sim_error_set(s->err, SIM_ERR_INTERNAL, NULL, 0, "cluster: job %u's "
                                  "pace %g is outside (0, 1]", id, p));
            return;
        }
        if (p == s->pace[id])
            continue;
        if (s->is_disrupt) {
            repace(s, id, p);
            continue;
        }
        double w = s->work_s[id] - (now - s->upd_s[id]) * s->pace[id];
        if (w < 0)
            w = 0;
        s->work_s[id] = w;
        s->upd_s[id] = now;
        s->pace[id] = p;
        sim_cancel(eng, s->end_ev[id]);
        s->job[id].end_s = now + w / p;
        s->end_ev[id] = sim_schedule_at(eng, s->job[id].end_s, 0, KIND_CLUSTER_JOB_END,
                                        cluster_on_end, s, id);
        if (!s->end_ev[id])
            s->failed = 1;
    }
}

/* one re-time at the end of this instant (after the scheduling pass, 2) */
void cluster_want_retime(cluster_sim *s)
{
    if (s->retime_due)
        return;
    s->retime_due = 1;
    if (!sim_schedule_in(s->eng, 0, 3, KIND_CLUSTER_RETIME, on_retime, s, 0))
        s->failed = 1;
}

void cluster_pace_start(cluster_sim *s, uint32_t id, const uint32_t *gpus)
{
    cluster_job *j = &s->job[id];
    const cluster_pacer *pc = s->c->pacer;
    int rc = pc->start(pc->ctx, id, &j->spec, gpus, j->spec.gpus, s->err);
    if (rc) {
        stop(s, rc);
        return;
    }
    s->work_s[id] = j->spec.duration_s;
    s->pace[id] = 1;
    s->upd_s[id] = j->start_s;
    s->end_ev[id] = sim_schedule_at(s->eng, j->end_s, 0, KIND_CLUSTER_JOB_END, cluster_on_end,
                                    s, id);
    if (!s->end_ev[id])
        s->failed = 1;
    cluster_want_retime(s);
}

void cluster_pace_end(cluster_sim *s, uint32_t id)
{
    const cluster_pacer *pc = s->c->pacer;
    pc->end(pc->ctx, id);
    s->pace[id] = 0;
    cluster_want_retime(s); /* also when none runs: the pacer closes its link accounts */
}

int cluster_pace_join(cluster_sim *s, uint32_t id, const uint32_t *g, uint32_t n)
{
    const cluster_pacer *pc = s->c->pacer;
    int rc = pc->start(pc->ctx, id, &s->job[id].spec, g, n, s->err);
    if (rc) {
        stop(s, rc);
        return rc;
    }
    cluster_want_retime(s);
    return 0;
}

void cluster_pace_leave(cluster_sim *s, uint32_t id)
{
    const cluster_pacer *pc = s->c->pacer;
    pc->end(pc->ctx, id);
    cluster_want_retime(s);
}

/* a segment's restart is over: it works from now, so re-time */
static void on_work_start(sim_engine *eng, void *ctx, uint64_t data)
{
    cluster_sim *s = ctx;
    uint32_t id = (uint32_t)data;
    if (s->state[id] == CLUSTER_ST_RUN && s->upd_s[id] == sim_now(eng))
        cluster_want_retime(s); /* else the segment closed before */
}

void cluster_pace_segment(cluster_sim *s, uint32_t id)
{
    double over = s->seg_over_s[id];
    s->work_s[id] = s->left_s[id];
    s->upd_s[id] = s->seg_s[id] + over;
    s->pace[id] = 1; /* until the re-time of the instant it starts working */
    if (!(over > 0))
        cluster_want_retime(s);
    else if (!sim_schedule_at(s->eng, s->upd_s[id], 0, KIND_CLUSTER_RETIME, on_work_start, s,
                              id))
        s->failed = 1;
}
