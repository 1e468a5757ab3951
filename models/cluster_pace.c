/* cluster_pace.c - a job's run at a pace set by its neighbours (cluster.h,
 * cluster_pacer). A running job holds its remaining isolated work w (s) as
 * of upd_s and its pace p since then; its end is upd_s + w / p. At the end
 * of every instant at which a job started or ended (a re-time event after
 * the scheduling pass), the pacer gives every running job its pace; a job
 * whose pace changed has w -= (now - upd_s) p_old, upd_s = now, p = p_new
 * and its end event moved to now + w / p_new. A job whose pace is the same
 * keeps its end event untouched (an isolated job ends at exactly start + d).
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

static void on_retime(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)data;
    cluster_sim *s = ctx;
    s->retime_due = 0;
    if (s->failed)
        return;
    s->retimes++;
    const cluster_pacer *pc = s->c->pacer;
    uint32_t n = s->running_n;
    for (uint32_t k = 0; k < n; k++)
        s->pace_ids[k] = s->running[k];
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
static void want_retime(cluster_sim *s)
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
    want_retime(s);
}

void cluster_pace_end(cluster_sim *s, uint32_t id)
{
    const cluster_pacer *pc = s->c->pacer;
    pc->end(pc->ctx, id);
    s->pace[id] = 0;
    want_retime(s); /* also when none runs: the pacer closes its link accounts */
}
