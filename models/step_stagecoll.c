/* step_stagecoll.c - the concurrent iteration's TP, CP and EP collectives as
 * flows on its shared net (step_des.c), where their groups span scale-up
 * domains (step_sc_on_net): an expert all-to-all between nodes, a context-
 * parallel ring or a tensor-parallel group wider than a node then meets the
 * PP sends and DP buckets on the same links.
 *
 * A task (one forward or backward of a chunk) of such a stage runs as K
 * segments: K is the task's instances of its most frequent kind on the net
 * (at most STEP_SC_MAX_SEGMENTS, so the events per task stay bounded), each
 * kind's instances spread evenly over the segments, their bytes merged.
 * Segment i lasts len / K, len the task's isolated time (its compute and
 * the communication left exposed as priced alone, step_comm.c). Each kind's
 * plan of the segment -- every group of that kind in the replica's stage
 * (EP: in the stages of its expert group's ep replicas) -- starts `alone`
 * before the segment's end, alone the time the representative group's plan
 * takes on an idle fabric (nc_simulate; at the segment's start if longer).
 * A segment ends when its time is up and its flows are done. So on an idle
 * fabric the flows end as the segment does and the iteration is the
 * isolated one; what contention adds to a kind's flows delays the task, all
 * of it exposed (the rule: compute that hid part of a collective alone hides
 * no more of it), and is counted in that kind's part of the stage's
 * breakdown (the kind whose flows ended last). An EP plan starts when every
 * replica of the expert group is at it: the all-to-all synchronises them.
 */
#include "step_des_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "event_kinds.h"

#define STEP_SC_MAX_SEGMENTS 16u
#define SC_TIME_UP 0x80u

static int no_memory(des *z)
{
    return step_no_memory(z->err);
}

static size_t shape_at(const des *z, unsigned s, int dir, unsigned ch)
{
    return ((size_t)s * 2 + (unsigned)dir) * z->v + ch;
}

static size_t plan_at(const des *z, int k, unsigned owner, unsigned s, int dir, unsigned ch)
{
    return ((((size_t)k * z->D_all + owner) * z->P + s) * 2 + (unsigned)dir) * z->v + ch;
}

static const sched_task *running(const des *z, size_t ds)
{
    return &z->order[(ds % z->P) * z->per_stage + z->next[ds]];
}

/* kind k's instances per micro-batch in stage s's forwards (dir 0) or
 * backwards (1) */
static double instances(const des *z, unsigned s, int dir, int k)
{
    const stage_workload *st = &z->w->stages[s];
    double n = 0;
    for (size_t i = 0; i < st->n_comm; i++) {
        const comm_op *op = &st->comm[i];
        if (step_sc_kind(op->kind) == k && (op->phase != PHASE_FORWARD) == dir &&
            op->bytes > 0)
            n += op->count;
    }
    return n;
}

/* kind k's plan of one segment of (s, dir, ch) for owner (the replica; EP:
 * the expert group), or with rep the representative group alone (replica
 * 0, the first tensor and context rank: the group step_comm.c prices) */
static int build(des *z, nc_plan *plan, int k, unsigned owner, unsigned s, int dir, unsigned ch,
                 int rep)
{
    const parallel_config *p = &z->w->par;
    const stage_workload *st = &z->w->stages[s];
    const nc_fabric *nc = &z->f->nc;
    /* each op's instances of one segment, merged as one collective of the
     * algorithm and protocol one instance gets */
    double share = step_chunk_share(z->w, s, ch) / z->sc_shape[shape_at(z, s, dir, ch)].segments;
    unsigned width = p->tp > p->ep ? p->tp : p->ep;
    uint32_t *ranks = malloc((width > 2 ? width : 2) * sizeof *ranks);
    if (!ranks)
        return no_memory(z);
    memset(plan, 0, sizeof *plan);
    int rc = 0;
    for (size_t i = 0; i < st->n_comm && !rc; i++) {
        const comm_op *op = &st->comm[i];
        double each = op->bytes, merged = op->count * share;
        if (step_sc_kind(op->kind) != k || (op->phase != PHASE_FORWARD) != dir ||
            !(each * merged > 0))
            continue;
        unsigned positions = rep ? 1 : p->cp * p->tp;
        if (k == STEP_SC_TP) {
            for (unsigned cc = 0; cc < (rep ? 1 : p->cp) && !rc; cc++) {
                for (unsigned t = 0; t < p->tp; t++)
                    ranks[t] = step_gpu(p, s, owner, cc, t);
                rc = nc_plan_append_merged(plan, nc, step_coll_of(op->kind), NC_ALGO_AUTO, ranks,
                                           p->tp, each, merged, z->err);
            }
        } else if (k == STEP_SC_CP) { /* the ring: context rank c sends to c + 1 */
            for (unsigned q = 0; q < positions && !rc; q++) {
                unsigned cc = q / p->tp, t = q % p->tp;
                ranks[0] = step_gpu(p, s, owner, cc, t);
                ranks[1] = step_gpu(p, s, owner, (cc + 1) % p->cp, t);
                rc = nc_plan_append_merged(plan, nc, NC_SENDRECV, NC_ALGO_AUTO, ranks, 2, each,
                                           merged, z->err);
            }
        } else {
            for (unsigned q = 0; q < positions && !rc; q++) {
                for (unsigned n = 0; n < p->ep; n++)
                    ranks[n] = step_gpu(p, s, owner * p->ep + n, q / p->tp, q % p->tp);
                rc = nc_plan_append_merged(plan, nc, NC_ALLTOALL, NC_ALGO_AUTO, ranks, p->ep,
                                           each, merged, z->err);
            }
        }
    }
    free(ranks);
    return rc;
}

/* which kinds of which stages run on the net; the task shapes */
static int shapes(des *z)
{
    for (unsigned s = 0; s < z->P; s++)
        for (int dir = 0; dir < 2; dir++)
            for (unsigned ch = 0; ch < z->v; ch++) {
                sc_shape *sh = &z->sc_shape[shape_at(z, s, dir, ch)];
                double share = step_chunk_share(z->w, s, ch), most = 0;
                for (int k = 0; k < STEP_SC_KINDS; k++)
                    if (z->sc_kinds[s] >> k & 1)
                        most = fmax(most, instances(z, s, dir, k) * share);
                /* a partial instance still needs a segment of its own */
                double K = ceil(most - 1e-9);
                sh->segments = K < 1 ? 1 : K > STEP_SC_MAX_SEGMENTS ? STEP_SC_MAX_SEGMENTS
                                                                     : (unsigned)K;
                if (sh->segments > z->out->coll_segments)
                    z->out->coll_segments = sh->segments;
                for (int k = 0; k < STEP_SC_KINDS; k++) {
                    if (!(z->sc_kinds[s] >> k & 1))
                        continue;
                    nc_plan plan;
                    nc_result r = {0};
                    int rc = build(z, &plan, k, 0, s, dir, ch, 1);
                    if (!rc && plan.n_phases)
                        rc = nc_simulate(&plan, &z->f->nc, &r, z->err);
                    nc_plan_free(&plan);
                    if (rc)
                        return rc;
                    sh->alone[k] = r.time_s;
                }
            }
    return 0;
}

int step_sc_set_up(des *z)
{
    const workload *w = z->w;
    unsigned any = 0;
    z->sc_kinds = calloc(z->P, 1);
    if (!z->sc_kinds)
        return no_memory(z);
    for (unsigned s = 0; s < z->P; s++)
        for (int k = 0; k < STEP_SC_KINDS; k++)
            if ((instances(z, s, 0, k) > 0 || instances(z, s, 1, k) > 0) &&
                step_sc_on_net(z->f, w, z->o, s, k)) {
                z->sc_kinds[s] |= (uint8_t)(1u << k);
                z->out->coll_on_net |= 1u << k;
                any = 1;
            }
    if (!any) {
        free(z->sc_kinds);
        z->sc_kinds = NULL;
        return 0;
    }
    size_t ds = (size_t)z->D_all * z->P, n_shapes = (size_t)z->P * 2 * z->v;
    unsigned groups = w->par.ep > 1 ? z->D_all / w->par.ep : 1;
    z->sc_shape = calloc(n_shapes, sizeof *z->sc_shape);
    z->sc_plan = calloc(STEP_SC_KINDS * ds * 2 * z->v, sizeof *z->sc_plan);
    z->sc_seg = calloc(ds, sizeof *z->sc_seg);
    z->sc_due = calloc(ds, sizeof *z->sc_due);
    z->sc_len = calloc(ds, sizeof *z->sc_len);
    z->sc_wait = calloc(ds, 1);
    z->sc_last = calloc(ds, 1);
    z->sc_added = calloc(ds * STEP_SC_KINDS, sizeof *z->sc_added);
    z->sc_arrived = calloc((size_t)(groups ? groups : 1) * z->P, sizeof *z->sc_arrived);
    if (!z->sc_shape || !z->sc_plan || !z->sc_seg || !z->sc_due || !z->sc_len || !z->sc_wait ||
        !z->sc_last || !z->sc_added || !z->sc_arrived)
        return no_memory(z);
    return shapes(z);
}

/* ------------------------------------------------------------ segments */

static int segment_begin(des *z, size_t ds);

static void segment_end(des *z, size_t ds)
{
    double now = sim_now(z->eng), due = z->sc_due[ds];
    if (now > due) /* a kind's flows ended after the segment's time: contention */
        z->sc_added[ds * STEP_SC_KINDS + z->sc_last[ds]] += now - due;
    const sched_task *t = running(z, ds);
    unsigned s = (unsigned)(ds % z->P);
    if (++z->sc_seg[ds] < z->sc_shape[shape_at(z, s, t->backward, t->chunk)].segments) {
        int rc = segment_begin(z, ds);
        if (rc)
            step_des_fail(z, rc);
        return;
    }
    step_des_task_end(z->eng, z, ds);
}

static void kind_done(des *z, size_t ds, int k)
{
    z->sc_wait[ds] &= (uint8_t)~(1u << k);
    z->sc_last[ds] = (uint8_t)k;
    if (!z->sc_wait[ds])
        segment_end(z, ds);
}

static void time_up(sim_engine *eng, void *ctx, uint64_t data)
{
    des *z = ctx;
    z->sc_due[data] = sim_now(eng); /* later than planned where SMs were slower */
    z->sc_wait[data] &= (uint8_t)~SC_TIME_UP;
    if (!z->sc_wait[data])
        segment_end(z, data);
}

/* replica d's stage s (ds) starts kind k's plan of its segment; an EP plan
 * waits for every replica of the expert group */
static int start_kind(des *z, size_t ds, int k)
{
    unsigned s = (unsigned)(ds % z->P), owner = (unsigned)(ds / z->P);
    const sched_task *t = running(z, ds);
    if (k == STEP_SC_EP) {
        unsigned ep = z->w->par.ep;
        owner /= ep;
        if (++z->sc_arrived[(size_t)owner * z->P + s] < ep)
            return 0;
        z->sc_arrived[(size_t)owner * z->P + s] = 0;
    }
    nc_plan *plan = &z->sc_plan[plan_at(z, k, owner, s, t->backward, t->chunk)];
    if (!plan->n_phases) {
        int rc = build(z, plan, k, owner, s, t->backward, t->chunk, 0);
        if (rc)
            return rc;
        if (!plan->n_phases) { /* nothing to move (not reached: alone > 0) */
            step_sc_done(z, ((uint64_t)owner * z->P + s) * STEP_SC_KINDS + (unsigned)k);
            return 0;
        }
    }
    uint64_t tag = (((uint64_t)owner * z->P + s) * STEP_SC_KINDS + (unsigned)k) << 2 | TAG_STAGE;
    return step_des_start(z, plan, UINT32_MAX, CLASS_STAGE, tag);
}

static void kind_start(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)eng;
    des *z = ctx;
    int rc = start_kind(z, data / STEP_SC_KINDS, (int)(data % STEP_SC_KINDS));
    if (rc)
        step_des_fail(z, rc);
}

static int segment_begin(des *z, size_t ds)
{
    unsigned s = (unsigned)(ds % z->P);
    const sched_task *t = running(z, ds);
    const sc_shape *sh = &z->sc_shape[shape_at(z, s, t->backward, t->chunk)];
    double len = z->sc_len[ds];
    z->sc_due[ds] = sim_now(z->eng) + len;
    z->sc_wait[ds] = SC_TIME_UP;
    int rc = step_sm_arm(z, ds, len, KIND_STEP_SEGMENT_TIME, time_up);
    if (rc)
        return rc;
    for (int k = 0; k < STEP_SC_KINDS; k++)
        if (z->sc_kinds[s] >> k & 1 && sh->alone[k] > 0)
            z->sc_wait[ds] |= (uint8_t)(1u << k);
    for (int k = 0; k < STEP_SC_KINDS; k++) {
        if (!(z->sc_wait[ds] >> k & 1))
            continue;
        double lead = len - sh->alone[k];
        if (!(lead > 0)) {
            int rc = start_kind(z, ds, k);
            if (rc)
                return rc;
        } else if (!sim_schedule_in(z->eng, lead, 0, KIND_STEP_COLL_START, kind_start, z,
                                    ds * STEP_SC_KINDS + (unsigned)k)) {
            return no_memory(z);
        }
    }
    return 0;
}

int step_sc_task(des *z, unsigned d, unsigned s, double len)
{
    size_t ds = (size_t)d * z->P + s;
    const sched_task *t = running(z, ds);
    z->sc_seg[ds] = 0;
    z->sc_len[ds] = len / z->sc_shape[shape_at(z, s, t->backward, t->chunk)].segments;
    return segment_begin(z, ds);
}

void step_sc_done(des *z, uint64_t v)
{
    int k = (int)(v % STEP_SC_KINDS);
    v /= STEP_SC_KINDS;
    unsigned s = (unsigned)(v % z->P), owner = (unsigned)(v / z->P);
    if (k != STEP_SC_EP) {
        kind_done(z, (size_t)owner * z->P + s, k);
        return;
    }
    unsigned ep = z->w->par.ep;
    for (unsigned d = owner * ep; d < (owner + 1) * ep; d++)
        kind_done(z, (size_t)d * z->P + s, k);
}

void step_sc_who(const des *z, uint64_t v, step_flow *who)
{
    int k = (int)(v % STEP_SC_KINDS);
    v /= STEP_SC_KINDS;
    unsigned s = (unsigned)(v % z->P), owner = (unsigned)(v / z->P);
    unsigned d = k == STEP_SC_EP ? owner * z->w->par.ep : owner;
    const sched_task *t = running(z, (size_t)d * z->P + s);
    who->kind = (uint8_t)(STEP_FLOW_TP + k);
    who->replica = d;
    who->stage = s;
    who->chunk = t->chunk;
    who->index = t->microbatch;
    who->backward = (uint8_t)t->backward;
}

void step_sc_free(des *z)
{
    if (z->sc_plan)
        for (size_t i = 0; i < STEP_SC_KINDS * (size_t)z->D_all * z->P * 2 * z->v; i++)
            nc_plan_free(&z->sc_plan[i]);
    void *ptrs[] = {z->sc_kinds, z->sc_shape, z->sc_plan, z->sc_seg,  z->sc_due,
                    z->sc_len,   z->sc_wait,  z->sc_last, z->sc_added, z->sc_arrived};
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++)
        free(ptrs[i]);
}
