/* cluster_preempt.c - a job's run in segments (cluster.h, disruption): the
 * per-job state, checkpoint-then-preempt and the interruption every cause
 * shares. A segment holds the job's GPUs from seg_s: restart overhead
 * seg_over_s (restart_s on every segment after the first), then its work
 * left left_s; it ends at seg_s + seg_over_s + left_s. Interrupted at t:
 *   done  = min(left, max(0, t - seg_s - seg_over))     work done this segment
 *   saved = floor(done / I) I   (I the checkpoint interval; 0: nothing saved)
 *   left -= saved; rework += done - saved; restart += min(t - seg_s, seg_over)
 * Preemption: the queue's head (the highest-priority queued job) that does
 * not fit the free GPUs plus those of checkpoints being written evicts
 * running jobs of a strictly lower priority, in the order: lowest priority,
 * then latest segment start, then least work lost, then lowest id, until
 * enough GPUs would be free (none when all of them would not do). An evicted
 * job writes a checkpoint for write_s on its GPUs, then gives them back and
 * is queued again. O(R log R) per pass whose head is blocked by a lower
 * priority (R running).
 */
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_rng.h>

#include "cluster_internal.h"
#include "event_kinds.h"

/* a victim's sort keys */
typedef struct victim {
    int32_t priority;
    uint32_t id;
    double seg_s, lost_s;
} victim;

#define MAX_SPAN_S 3.2e8 /* ten years */
#define MAX_RESV 1000000u
/* a run whose interruptions pass this many per job makes no progress */
#define MAX_INTERRUPTS_PER_JOB 1000u

static int bad(sim_error *err, const char *what, double value, const char *allowed)
{
    return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "cluster: %s %g: %s", what, value, allowed);
}

int cluster_disrupt_check(const cluster_config *c, sim_error *err)
{
    const cluster_ckpt *k = &c->ckpt;
    const cluster_failures *f = &c->fail;
    int is_disrupt = c->preempt || c->n_resv || f->rate_per_node_s > 0;
    if (!is_disrupt)
        return 0;
    const double ck[3] = {k->interval_s, k->write_s, k->restart_s};
    static const char *const ck_name[3] = {"checkpoint interval", "checkpoint write time",
                                           "restart time"};
    for (int i = 0; i < 3; i++)
        if (!(ck[i] >= 0 && ck[i] <= MAX_SPAN_S))
            return bad(err, ck_name[i], ck[i], "must be from 0 to 10 years");
    if (c->n_resv > MAX_RESV || (c->n_resv && !c->resv))
        return bad(err, "maintenance windows", c->n_resv, "at most 1e6");
    for (uint32_t i = 0; i < c->n_resv; i++) {
        const cluster_reservation *r = &c->resv[i];
        if (!(r->start_s >= 0 && r->start_s <= MAX_SPAN_S))
            return bad(err, "window start", r->start_s, "must be from 0 to 10 years");
        if (!(r->duration_s > 0 && r->duration_s <= MAX_SPAN_S))
            return bad(err, "window duration", r->duration_s, "must be in (0, 10 years]");
        if (r->gpus < 1 || r->gpu0 >= c->gpus || r->gpus > c->gpus - r->gpu0)
            return bad(err, "window GPUs", r->gpus, "must be 1 or more GPUs of the cluster");
    }
    if (!(f->rate_per_node_s >= 0 && f->rate_per_node_s <= 1))
        return bad(err, "failure rate", f->rate_per_node_s, "must be from 0 to 1 per node-second");
    if (f->rate_per_node_s > 0 && !(f->repair_s > 0 && f->repair_s <= MAX_SPAN_S))
        return bad(err, "repair time", f->repair_s, "must be in (0, 10 years]");
    if (f->spares > CLUSTER_MAX_GPUS)
        return bad(err, "spare nodes", f->spares, "at most 16,777,216");
    return 0;
}

int cluster_disrupt_init(cluster_sim *s)
{
    uint32_t n = s->n_job;
    s->state = calloc(n, sizeof *s->state);
    s->left_s = malloc((size_t)n * sizeof *s->left_s);
    s->seg_s = calloc(n, sizeof *s->seg_s);
    s->seg_over_s = calloc(n, sizeof *s->seg_over_s);
    s->ev = calloc(n, sizeof *s->ev);
    s->node_failed = calloc(s->n_nodes, sizeof *s->node_failed);
    if (s->c->fail.swap_down) { /* every slot's list empty */
        s->rep_head = malloc((size_t)s->n_nodes * sizeof *s->rep_head);
        s->rep_tail = malloc((size_t)s->n_nodes * sizeof *s->rep_tail);
        for (uint32_t k = 0; s->rep_head && k < s->n_nodes; k++)
            s->rep_head[k] = UINT32_MAX;
        s->rep_free = UINT32_MAX;
    }
    s->victims = malloc((size_t)n * sizeof(victim));
    if (s->c->n_resv) {
        s->resv_n = calloc(s->c->gpus, sizeof *s->resv_n);
        s->hid = malloc((size_t)s->c->gpus * sizeof *s->hid);
    }
    s->spares_free = s->c->fail.spares;
    return s->state && s->left_s && s->seg_s && s->seg_over_s && s->ev && s->node_failed &&
                   (!s->c->fail.swap_down || (s->rep_head && s->rep_tail)) && s->victims && (!s->c->n_resv || (s->resv_n && s->hid))
               ? 0
               : -1;
}

void cluster_disrupt_free(cluster_sim *s)
{
    free(s->state);
    free(s->left_s);
    free(s->seg_s);
    free(s->seg_over_s);
    free(s->ev);
    free(s->node_failed);
    free(s->rep_head);
    free(s->rep_tail);
    free(s->rep_next);
    free(s->rep_end);
    free(s->victims);
    free(s->resv_n);
    free(s->hid);
    if (s->fail_rng)
        gsl_rng_free(s->fail_rng);
    s->fail_rng = NULL;
}

int cluster_gpu_is_down(const cluster_sim *s, uint32_t g)
{
    return (s->node_failed[g / s->c->node_gpus] & NODE_DOWN) || (s->resv_n && s->resv_n[g]);
}

void cluster_gpu_down(cluster_sim *s, uint32_t g)
{
    s->owner[g] = CLUSTER_DOWN;
    s->down_gpus++;
}

void cluster_gpu_up(cluster_sim *s, uint32_t g)
{
    const cluster_config *c = s->c;
    s->owner[g] = CLUSTER_NONE;
    s->down_gpus--;
    s->node_free[g / c->node_gpus]++;
    s->leaf_free[g / c->leaf_gpus]++;
    s->su_free[g / c->su_gpus]++;
    s->free_gpus++;
}

void cluster_segment_start(cluster_sim *s, uint32_t id)
{
    cluster_job *j = &s->job[id];
    double now = sim_now(s->eng);
    s->seg_s[id] = now;
    s->seg_over_s[id] = j->preemptions || j->interruptions || j->resizes ? s->c->ckpt.restart_s
                                                                         : 0;
    if (s->held) /* elastic: work at the rate held / GPUs */
        j->end_s = now + s->seg_over_s[id] + cluster_el_time(s, id, s->left_s[id], s->held[id]);
    else
        j->end_s = now + s->seg_over_s[id] + s->left_s[id];
    s->state[id] = CLUSTER_ST_RUN;
    s->ev[id] = sim_schedule_at(s->eng, j->end_s, 0, KIND_CLUSTER_JOB_END, cluster_on_end, s, id);
    if (!s->ev[id])
        s->failed = 1;
    if (s->c->pacer)
        cluster_pace_segment(s, id); /* its work at its pace from its restart's end */
}

/* the work a running job would lose if interrupted now */
static double lost_now(const cluster_sim *s, uint32_t id, double *done_out)
{
    double el = sim_now(s->eng) - s->seg_s[id], done = el - s->seg_over_s[id];
    if (done < 0)
        done = 0;
    if (s->c->pacer)
        done = cluster_pace_done(s, id); /* the integral of its rate */
    else if (s->held)
        done = cluster_el_work(s, id, done, s->held[id]);
    if (done > s->left_s[id])
        done = s->left_s[id];
    double I = s->c->ckpt.interval_s;
    double saved = I > 0 ? floor(done / I) * I : 0;
    if (done_out)
        *done_out = done;
    return done - saved;
}

/* close the running segment: work saved, rework and restart counted */
void cluster_segment_close(cluster_sim *s, uint32_t id, int keep)
{
    cluster_job *j = &s->job[id];
    if (s->c->pacer) { /* interference to now; it stops working: re-time */
        cluster_pace_settle(s, id);
        cluster_want_retime(s);
    }
    double el = sim_now(s->eng) - s->seg_s[id], done = 0;
    double lost = lost_now(s, id, &done);
    double over = el < s->seg_over_s[id] ? el : s->seg_over_s[id];
    if (keep)
        lost = 0; /* a resize: the framework saves its state first */
    j->restart_s += over;
    j->rework_s += lost;
    j->held_s += el;
    if (s->held) {
        cluster_elastic_hold(s, id, el);
        cluster_el_lose(s, id, 0, cluster_el_gpu_s(s, id, lost, s->held[id])); /* redone */
        cluster_el_lose(s, id, 2, over * s->held[id]);
    }
    s->left_s[id] -= done - lost;
    sim_cancel(s->eng, s->ev[id]);
    s->ev[id] = 0;
}

static void requeue(cluster_sim *s, uint32_t id)
{
    s->state[id] = CLUSTER_ST_WAIT;
    s->job[id].end_s = -1;
    cluster_release(s, id);
    cluster_enqueue(s, id);
    cluster_record(s);
    cluster_want_pass(s);
}

/* an evicted job's checkpoint written (at its event), or cut short now */
static void write_done(cluster_sim *s, uint32_t id)
{
    cluster_job *j = &s->job[id];
    double t = sim_now(s->eng) - s->seg_s[id]; /* seg_s: the eviction */
    j->held_s += t;
    j->ckpt_s += t;
    if (s->held) {
        cluster_elastic_hold(s, id, t);
        cluster_el_lose(s, id, 1, t * s->held[id]);
    }
    s->pending_gpus -= cluster_held(s, id);
    requeue(s, id);
}

static void on_write_end(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)eng;
    cluster_sim *s = ctx;
    cluster_account(s);
    s->ev[(uint32_t)data] = 0;
    write_done(s, (uint32_t)data);
}

static void too_many(cluster_sim *s)
{
    if (s->interruptions + s->preemptions <= MAX_INTERRUPTS_PER_JOB * (uint64_t)s->n_job ||
        s->pacer_rc)
        return;
    s->pacer_rc = sim_error_set(s->err, SIM_ERR_INPUT, NULL, 0, "cluster: more than %u "
                                "interruptions per job: the jobs make no progress (failures "
                                "too frequent for the checkpoint interval?)",
                                MAX_INTERRUPTS_PER_JOB);
    s->failed = 1;
    sim_stop(s->eng);
}

void cluster_interrupt(cluster_sim *s, uint32_t id, int is_requeue)
{
    cluster_job *j = &s->job[id];
    if (s->state[id] == CLUSTER_ST_WRITE) { /* leaving anyway: the write stops here */
        sim_cancel(s->eng, s->ev[id]);
        s->ev[id] = 0;
        if (is_requeue)
            write_done(s, id);
        return;
    }
    cluster_segment_close(s, id, 0);
    j->interruptions++;
    s->interruptions++;
    too_many(s);
    if (is_requeue)
        requeue(s, id);
    else
        cluster_segment_start(s, id); /* on a spare node: the same GPU ids */
}

static void evict(cluster_sim *s, uint32_t id, int32_t by_priority)
{
    cluster_job *j = &s->job[id];
    cluster_segment_close(s, id, 0);
    j->preemptions++;
    s->preemptions++;
    if (by_priority < j->evictor_priority_min)
        j->evictor_priority_min = by_priority;
    too_many(s);
    s->state[id] = CLUSTER_ST_WRITE;
    s->seg_s[id] = sim_now(s->eng);
    s->pending_gpus += cluster_held(s, id);
    j->end_s = s->seg_s[id] + s->c->ckpt.write_s; /* EASY's shadow reads it */
    s->ev[id] = sim_schedule_at(s->eng, j->end_s, 0, KIND_CLUSTER_CKPT_END, on_write_end, s, id);
    if (!s->ev[id])
        s->failed = 1;
}

static int cmp_victim(const void *a, const void *b)
{
    const victim *x = a, *y = b;
    if (x->priority != y->priority)
        return x->priority < y->priority ? -1 : 1;
    if (x->seg_s != y->seg_s)
        return x->seg_s > y->seg_s ? -1 : 1;
    if (x->lost_s != y->lost_s)
        return x->lost_s < y->lost_s ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

void cluster_preempt_head(cluster_sim *s)
{
    if (!s->queue_n || s->failed)
        return;
    const cluster_job *h = &s->job[s->queue[0]];
    uint64_t need = cluster_need(s, s->queue[0]), have = (uint64_t)s->free_gpus + s->pending_gpus;
    if (need <= have)
        return; /* it fits now, or once the checkpoints being written are done */
    victim *v = s->victims;
    uint32_t m = 0;
    uint64_t could = have;
    for (uint32_t i = 0; i < s->running_n; i++) {
        uint32_t id = s->running[i];
        const cluster_job *j = &s->job[id];
        if (s->state[id] != CLUSTER_ST_RUN || j->spec.priority >= h->spec.priority)
            continue;
        v[m++] = (victim){j->spec.priority, id, s->seg_s[id], lost_now(s, id, NULL)};
        could += cluster_held(s, id);
    }
    if (could < need)
        return; /* evicting every lower priority would not do: evict none */
    qsort(v, m, sizeof *v, cmp_victim);
    cluster_account(s);
    if (s->held) { /* elastic victims shrink toward their min first, when that frees enough */
        uint64_t spare = have;
        for (uint32_t k = 0; k < m; k++)
            if (cluster_is_elastic(s, v[k].id))
                spare += s->held[v[k].id] - s->job[v[k].id].min_gpus;
        for (uint32_t k = 0; spare >= need && k < m && have < need && !s->failed; k++) {
            uint32_t id = v[k].id, give = 0;
            if (cluster_is_elastic(s, id))
                give = s->held[id] - s->job[id].min_gpus;
            give = give < need - have ? give : (uint32_t)(need - have);
            if (give) {
                cluster_elastic_resize(s, id, s->held[id] - give, 1);
                have += give;
            }
        }
        if (spare >= need)
            return;
    }
    for (uint32_t k = 0; k < m && have < need; k++) {
        have += cluster_held(s, v[k].id);
        evict(s, v[k].id, h->spec.priority);
    }
}
