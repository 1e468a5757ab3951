/* step_des.c - the iteration as a discrete-event simulation (step.h,
 * network="concurrent"): every data-parallel replica's pipeline runs on the
 * engine, and every PP send and every DP gradient bucket and parameter
 * gather of the iteration is a plan on one shared flow net (netcoll_exec.h),
 * so sends of all replicas and reductions of all stages contend for the
 * same links at the moments they really overlap. network="packet": the
 * same plans as packets on the packet tier (step_net.c has both backends).
 *
 * Each replica d's stage s runs its tasks in the schedule's order
 * (schedule.h; the order does not depend on the times): a task starts when
 * the stage is free and its input has arrived, and lasts the chunk's
 * compute plus the TP, CP and EP it cannot hide (priced per stage, as in
 * the isolated iteration: those groups run inside one stage). A forward's
 * end sends the activations to the next model position, a backward's end
 * the gradients to the previous one: a permutation of the replica's cp x tp
 * GPU pairs, started at that instant. Chunk j's gradient buckets become
 * ready evenly over its last backward (overlap_grad_reduce; else at its
 * end); bucket i of every DP group starts when every replica has it ready
 * and bucket i - 1 is done. When a stage's tasks and reductions are done
 * its optimizer runs, then the parameter all-gather of each chunk, bucket
 * by bucket (timed here; its exposure and the SM cost of overlapped DP are
 * step_stage_finish's rules, as in the isolated iteration).
 *
 * Outputs: each stage's end and breakdown (the replica whose last task on
 * it ends last is "the slowest"), the Gantt chart of the replica whose
 * pipeline ends last, the mean time of each kind of send and bucket, and
 * the PP and DP bytes of every link (the flow net's, every replica), and
 * the log of the net's flows (step_flows.c), to o->flow_log of them.
 */
#include "step_des_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "event_kinds.h"
#include "netcoll_exec.h"
#include "routing.h"


static void bucket_start(sim_engine *eng, void *ctx, uint64_t data);
static void optimizer_end(sim_engine *eng, void *ctx, uint64_t data);


static int no_memory(des *z)
{
    return step_no_memory(z->err);
}

static size_t arrival(const des *z, unsigned d, unsigned j, unsigned mb, int dir)
{
    return (((size_t)d * z->n_pos + j) * z->m + mb) * 2 + (unsigned)dir;
}

/* ------------------------------------------------------------ PP sends */

/* the plan of replica d's send over boundary b (positions b and b + 1),
 * dir 0 forward (b -> b + 1), 1 backward; built on first use. The stages
 * must differ (pp_send hands over in place otherwise). */
int step_des_pp_plan(des *z, unsigned d, unsigned b, int dir)
{
    const parallel_config *p = &z->w->par;
    unsigned s = b % z->P, next = (b + 1) % z->P;
    nc_plan *plan = &z->pp[((size_t)d * (z->n_pos - 1) + b) * 2 + (unsigned)dir];
    if (!plan->n_phases) {
        unsigned pairs = p->cp * p->tp, k = 0;
        uint32_t *src = malloc(2 * (size_t)pairs * sizeof *src);
        if (!src)
            return no_memory(z);
        uint32_t *dst = src + pairs;
        for (unsigned cc = 0; cc < p->cp; cc++)
            for (unsigned t = 0; t < p->tp; t++, k++) {
                uint32_t a = step_gpu(p, s, d, cc, t), c = step_gpu(p, next, d, cc, t);
                src[k] = dir ? c : a;
                dst[k] = dir ? a : c;
            }
        int rc = nc_plan_permutation(plan, &z->f->nc, src, dst, pairs, z->pp_bytes[s], z->err);
        free(src);
        if (rc)
            return rc;
        /* one coupled flow: the pairs start together and the receiving
         * stage needs every one, so the most loaded pair sets the pace */
        plan->phase[0].coupled = 1;
    }
    return 0;
}

/* the send over boundary b (positions b and b + 1) of replica d, dir 0
 * forward (b -> b + 1), 1 backward (b + 1 -> b), for micro-batch mb */
static int pp_send(des *z, unsigned d, unsigned b, int dir, unsigned mb)
{
    unsigned s = b % z->P, next = (b + 1) % z->P;
    if (s == next) { /* one stage: the chunks hand over in place */
        unsigned j = dir ? b : b + 1;
        z->arrived[arrival(z, d, j, mb, dir)] = 1;
        return 0;
    }
    size_t slot = ((size_t)d * (z->n_pos - 1) + b) * 2 + (unsigned)dir;
    nc_plan *plan = &z->pp[slot];
    int rc = step_des_pp_plan(z, d, b, dir);
    if (rc)
        return rc;
    /* summed times: minus each start here, plus each end in plan_done */
    z->pp_time[2 * s + (unsigned)dir] -= sim_now(z->eng);
    z->pp_count[2 * s + (unsigned)dir] += 1;
    uint64_t tag = ((((uint64_t)d * z->n_pos + b) * 2 + (unsigned)dir) * z->m + mb) << 2 | TAG_PP;
    return step_des_start(z, plan, z->folded ? z->pp_first[slot] : UINT32_MAX, CLASS_PP, tag);
}

/* ------------------------------------------------------------ tasks */

static const sched_task *task(const des *z, unsigned s, size_t k)
{
    return &z->order[(size_t)s * z->per_stage + k];
}

static void chain_report(des *z, unsigned j, unsigned d, double start, double len);
static void chain_resume(des *z, unsigned j);

static void try_start(des *z, unsigned d, unsigned s)
{
    size_t ds = (size_t)d * z->P + s;
    if (z->busy[ds] || z->next[ds] == z->per_stage)
        return;
    const sched_task *t = task(z, s, z->next[ds]);
    unsigned j = t->chunk * z->P + s;
    if (!t->backward && j > 0 && !z->arrived[arrival(z, d, j, t->microbatch, 0)])
        return;
    if (t->backward && j + 1 < z->n_pos && !z->arrived[arrival(z, d, j, t->microbatch, 1)])
        return;
    double now = sim_now(z->eng);
    double len = step_chunk_time(z->w, z->sr->c, s, t->chunk, 1 / z->speed[ds], t->backward);
    z->busy[ds] = 1;
    z->t_start[ds * z->per_stage + z->next[ds]] = now;
    if (t->backward && ++z->bwd_started[(size_t)d * z->n_pos + j] == z->m)
        chain_report(z, j, d, now, len);
    if (z->sc_kinds && z->sc_kinds[s]) { /* TP, CP or EP flows: in segments */
        int rc = step_sc_task(z, d, s, len);
        if (rc)
            step_des_fail(z, rc);
    } else {
        int rc = step_sm_arm(z, ds, len, KIND_STEP_TASK_END, step_des_task_end);
        if (rc)
            step_des_fail(z, rc);
    }
}

static void stage_check(des *z, unsigned s);

/* stage s's tasks may end after their isolated length: in segments (TP,
 * CP or EP flows) or slowed by the SMs of DP in flight (step_sm.c) */
static int may_outlast(const des *z, unsigned s)
{
    return (z->sc_kinds && z->sc_kinds[s]) || (z->sm_q && z->sm_q[s] > 0);
}

void step_des_task_end(sim_engine *eng, void *ctx, uint64_t data)
{
    des *z = ctx;
    unsigned d = (unsigned)(data / z->P), s = (unsigned)(data % z->P);
    size_t k = z->next[data]++;
    z->busy[data] = 0;
    z->t_end[data * z->per_stage + k] = sim_now(eng);
    const sched_task *t = task(z, s, k);
    unsigned j = t->chunk * z->P + s;
    int rc = 0;
    /* a task may end after its isolated length: the chain learns its last
     * backward's real end */
    if (t->backward && may_outlast(z, s) &&
        z->bwd_started[(size_t)d * z->n_pos + j] == z->m) {
        z->last_len[(size_t)j * z->D + d] = sim_now(eng) - z->last_start[(size_t)j * z->D + d];
        if (++z->last_ended[j] == z->D && z->chain_waits[j]) {
            z->chain_waits[j] = 0;
            chain_resume(z, j);
        }
    }
    if (!t->backward && j + 1 < z->n_pos)
        rc = pp_send(z, d, j, 0, t->microbatch);
    else if (t->backward && j > 0)
        rc = pp_send(z, d, j - 1, 1, t->microbatch);
    if (rc) {
        step_des_fail(z, rc);
        return;
    }
    /* a send with nothing to move arrives at once: the receiver may start */
    if (!t->backward && j + 1 < z->n_pos)
        try_start(z, d, (j + 1) % z->P);
    else if (t->backward && j > 0)
        try_start(z, d, (j - 1) % z->P);
    if (--z->tasks_left[s] == 0)
        stage_check(z, s);
    try_start(z, d, s);
}

/* ------------------------------------------------------------ DP buckets */

/* when bucket i of chain j is ready on every replica */
static double bucket_ready(const des *z, unsigned j, unsigned i)
{
    double ready = 0, buckets = z->sr->dc[j].buckets;
    for (unsigned d = 0; d < z->D; d++) {
        double s = z->last_start[(size_t)j * z->D + d], len = z->last_len[(size_t)j * z->D + d];
        ready = fmax(ready, z->o->overlap_grad_reduce ? s + len * (i + 1) / buckets : s + len);
    }
    return ready;
}

static void chain_done(des *z, unsigned j, double end)
{
    z->chain_end[j] = end;
    unsigned s = j % z->P;
    if (--z->chains_left[s] == 0)
        stage_check(z, s);
}

static void chain_report(des *z, unsigned j, unsigned d, double start, double len)
{
    z->last_start[(size_t)j * z->D + d] = start;
    z->last_len[(size_t)j * z->D + d] = len;
    if (++z->reported[j] == z->D)
        chain_resume(z, j);
}

/* the chain's next bucket, once every replica has reported its last
 * backward; a bucket that needs the backwards' ends (the last, or every
 * one without overlap-grad-reduce) waits for them where a task may
 * outlast its isolated length (the others become ready on the backward's
 * isolated clock) */
static void chain_resume(des *z, unsigned j)
{
    unsigned i = z->bucket_next[j], buckets = z->sr->dc[j].buckets;
    if (may_outlast(z, j % z->P) && z->last_ended[j] < z->D &&
        (!z->o->overlap_grad_reduce || i + 1 >= buckets)) {
        z->chain_waits[j] = 1;
        return;
    }
    if (!buckets) { /* no DP traffic: "reduced" once the gradients are */
        double end = 0;
        for (unsigned r = 0; r < z->D; r++)
            end = fmax(end, z->last_start[(size_t)j * z->D + r] + z->last_len[(size_t)j * z->D + r]);
        chain_done(z, j, end);
        return;
    }
    if (!sim_schedule_at(z->eng, fmax(sim_now(z->eng), bucket_ready(z, j, i)), 0,
                         KIND_STEP_BUCKET_START, bucket_start, z, j))
        step_des_fail(z, no_memory(z));
}

static void bucket_start(sim_engine *eng, void *ctx, uint64_t data)
{
    des *z = ctx;
    unsigned j = (unsigned)data;
    z->b_start[z->bucket_first[j] + z->bucket_next[j]] = sim_now(eng);
    step_sm_dp(z, j % z->P, +1);
    uint64_t tag = (uint64_t)j << 2 | TAG_DP;
    int rc = step_des_start(z, &z->dp_plan[j], z->folded ? z->dp_first[j] : UINT32_MAX,
                            CLASS_DP, tag);
    if (rc)
        step_des_fail(z, rc);
}

static void bucket_done(des *z, unsigned j)
{
    double now = sim_now(z->eng);
    z->b_end[z->bucket_first[j] + z->bucket_next[j]] = now;
    step_sm_dp(z, j % z->P, -1);
    unsigned i = ++z->bucket_next[j];
    if (i == z->sr->dc[j].buckets)
        chain_done(z, j, now);
    else
        chain_resume(z, j);
}

/* ------------------------------------------------------------ stage ends */

static void finish_stage(des *z, unsigned s);

/* stage s's tasks and reductions are done: its optimizer runs */
static void stage_check(des *z, unsigned s)
{
    if (z->tasks_left[s] || z->chains_left[s] || z->stage_state[s])
        return;
    z->stage_state[s] = 1;
    double end = 0;
    for (unsigned ch = 0; ch < z->v; ch++)
        end = fmax(end, z->chain_end[ch * z->P + s]);
    double t = fmax(end, sim_now(z->eng)) + z->sr->c[s].optimizer;
    if (!sim_schedule_at(z->eng, t, 0, KIND_STEP_OPTIMIZER_END, optimizer_end, z, s))
        step_des_fail(z, no_memory(z));
}

/* start the stage's next gather bucket, or finish the stage */
static void gather_next(des *z, unsigned s)
{
    while (z->gather_chunk[s] < z->v) {
        unsigned j = z->gather_chunk[s] * z->P + s;
        const dp_chain *dc = &z->sr->dc[j];
        /* an empty plan (one rank per group) has nothing to gather: skipped,
         * so the chain never recurses through done-at-once plans */
        if (z->gather_bucket[s] < dc->buckets && dc->gather_bytes > 0 &&
            z->ag_plan[j].n_phases) {
            z->gather_t0[s] = sim_now(z->eng);
            uint64_t tag = (uint64_t)s << 2 | TAG_GATHER;
            int rc = step_des_start(z, &z->ag_plan[j],
                                    z->folded ? z->ag_first[j] : UINT32_MAX, CLASS_DP, tag);
            if (rc)
                step_des_fail(z, rc);
            return;
        }
        z->gather_chunk[s]++;
        z->gather_bucket[s] = 0;
    }
    finish_stage(z, s);
}

static void optimizer_end(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)eng;
    gather_next(ctx, (unsigned)data);
}

static void gather_done(des *z, unsigned s)
{
    double t = sim_now(z->eng) - z->gather_t0[s];
    z->gather_s[s] += t;
    unsigned j = z->gather_chunk[s] * z->P + s;
    z->gather_sum[j] += t;
    z->gather_n[j] += 1;
    z->gather_bucket[s]++;
    gather_next(z, s);
}

void step_des_plan_done(void *ctx, uint64_t tag)
{
    des *z = ctx;
    uint64_t v = tag >> 2;
    switch ((int)(tag & 3)) {
    case TAG_PP: {
        unsigned mb = (unsigned)(v % z->m);
        v /= z->m;
        int dir = (int)(v % 2);
        v /= 2;
        unsigned b = (unsigned)(v % z->n_pos), d = (unsigned)(v / z->n_pos);
        unsigned j = dir ? b : b + 1;
        z->pp_time[2 * (b % z->P) + (unsigned)dir] += sim_now(z->eng);
        z->arrived[arrival(z, d, j, mb, dir)] = 1;
        try_start(z, d, j % z->P);
        break;
    }
    case TAG_DP:
        bucket_done(z, (unsigned)v);
        break;
    case TAG_STAGE:
        step_sc_done(z, v);
        break;
    default:
        gather_done(z, (unsigned)v);
        break;
    }
}

/* the flow log: what a starting flow belongs to, from its plan's tag (a
 * chain runs one bucket at a time: the one bucket_next or gather_bucket
 * names) */
static void flow_started(void *ctx, uint32_t id, const nc_exec_flow *f)
{
    des *z = ctx;
    uint64_t v = f->tag >> 2;
    step_flow who = {.replica = UINT32_MAX, .kind = STEP_FLOW_DP};
    unsigned j = (unsigned)v;
    if ((f->tag & 3) == TAG_PP) {
        who.kind = STEP_FLOW_PP;
        who.index = (uint32_t)(v % z->m);
        v /= z->m;
        who.backward = (uint8_t)(v % 2);
        v /= 2;
        j = (unsigned)(v % z->n_pos) + who.backward; /* the sender's position */
        who.replica = (uint32_t)(v / z->n_pos);
    } else if ((f->tag & 3) == TAG_STAGE) {
        step_sc_who(z, v, &who);
        j = who.chunk * z->P + who.stage;
    } else if ((f->tag & 3) == TAG_DP) {
        who.index = z->bucket_next[j];
    } else {
        who.kind = STEP_FLOW_GATHER;
        j = z->gather_chunk[v] * z->P + (unsigned)v;
        who.index = z->gather_bucket[v];
    }
    who.stage = j % z->P;
    who.chunk = j / z->P;
    if (step_flow_log_start(&z->log, id, sim_now(z->eng), &who, f))
        step_des_fail(z, no_memory(z));
}

static void flow_ended(void *ctx, uint32_t id)
{
    des *z = ctx;
    step_flow_log_end(&z->log, id, sim_now(z->eng));
}

/* when replica d's last task on stage s ends */
static double stage_last_end(const des *z, unsigned d, unsigned s)
{
    return z->t_end[((size_t)d * z->P + s) * z->per_stage + z->per_stage - 1];
}

/* when replica d's pipeline ends: its stages' last tasks */
static double pipeline_end(const des *z, unsigned d)
{
    double end = 0;
    for (unsigned s = 0; s < z->P; s++)
        end = fmax(end, stage_last_end(z, d, s));
    return end;
}

/* the replica whose last task on stage s ends last (the lowest on ties) */
static unsigned slowest_replica(const des *z, unsigned s, double *last)
{
    unsigned slow = 0;
    *last = -1;
    for (unsigned d = 0; d < z->D; d++)
        if (stage_last_end(z, d, s) > *last) {
            *last = stage_last_end(z, d, s);
            slow = d;
        }
    return slow;
}

/* the free-transfer schedule of a replica with replica d's speeds */
static double ideal_iteration(const des *z, unsigned d)
{
    const step_run *sr = z->sr;
    for (unsigned r = 0; r < sr->n_runs; r++)
        if (!memcmp(sr->runs[r].speed, &z->speed[(size_t)d * z->P], z->P * sizeof(double)))
            return sr->runs[r].ideal.iteration_s;
    return sr->runs[sr->n_runs - 1].ideal.iteration_s; /* not reached: every replica has a run */
}

static void finish_stage(des *z, unsigned s)
{
    stage_timing tm = {.dp_start = INFINITY, .gather = z->gather_s[s]};
    unsigned P = z->P;
    for (unsigned ch = 0; ch < z->v; ch++) {
        unsigned j = ch * P + s;
        tm.dp_end = fmax(tm.dp_end, z->chain_end[j]);
        for (unsigned d = 0; d < z->D; d++) {
            double e = z->last_start[(size_t)j * z->D + d] + z->last_len[(size_t)j * z->D + d];
            tm.all_ready = fmax(tm.all_ready, e);
            if (z->nominal[d])
                tm.nominal_ready = fmax(tm.nominal_ready, e);
        }
    }
    if (tm.nominal_ready == 0)
        tm.nominal_ready = tm.all_ready;
    tm.bwd_end = tm.all_ready;
    for (unsigned ch = 0; ch < z->v; ch++) {
        unsigned j = ch * P + s;
        for (unsigned i = 0; i < z->sr->dc[j].buckets; i++) {
            double a = z->b_start[z->bucket_first[j] + i], e = z->b_end[z->bucket_first[j] + i];
            tm.dp_start = fmin(tm.dp_start, a);
            tm.window += fmax(0, fmin(e, tm.bwd_end) - a);
        }
    }
    unsigned slow = slowest_replica(z, s, &tm.last_task);
    tm.slow_speed = z->speed[(size_t)slow * P + s];
    tm.pp_added = pipeline_end(z, slow) - ideal_iteration(z, slow);
    for (int k = 0; z->sc_added && k < STEP_SC_KINDS; k++)
        tm.coll_added[k] = z->sc_added[((size_t)slow * P + s) * STEP_SC_KINDS + (unsigned)k];
    if (z->sm_q) { /* the SMs of DP in flight are in the tasks' ends (step_sm.c) */
        tm.window = 0;
        /* what they added to the replica's pipeline: the stretches of the
         * tasks on its critical path, no more than the pipeline grew
         * beyond the free-transfer schedule less what TP, CP and EP
         * contention added */
        double room = tm.pp_added;
        for (int k = 0; k < STEP_SC_KINDS; k++)
            room -= tm.coll_added[k];
        tm.sm_fed = fmin(step_sm_on_path(z, slow), fmax(0, room));
    }
    double end = step_stage_finish(z->sr, z->w, z->dev, z->o, s, &tm, z->out);
    z->iteration = fmax(z->iteration, end);
    z->stage_state[s] = 2;
    z->stages_done++;
}

/* ------------------------------------------------------------ set-up */

static void *zalloc(size_t n, size_t size)
{
    return calloc(n > 0 ? n : 1, size);
}

static int alloc_all(des *z)
{
    size_t D = z->D, P = z->P, n = z->n_pos, m = z->m, tasks = D * P * z->per_stage;
    size_t buckets = 0;
    z->bucket_first = malloc((n + 1) * sizeof *z->bucket_first);
    if (!z->bucket_first)
        return -1;
    for (size_t j = 0; j < n; j++) {
        z->bucket_first[j] = buckets;
        buckets += z->sr->dc[j].buckets;
    }
#define ALLOC(ptr, count) ((ptr) = zalloc((count), sizeof *(ptr))) == NULL
    if (ALLOC(z->speed, D * P) || ALLOC(z->nominal, D) || ALLOC(z->next, D * P) ||
        ALLOC(z->busy, D * P) || ALLOC(z->arrived, D * n * m * 2) ||
        ALLOC(z->bwd_started, D * n) || ALLOC(z->t_start, tasks) || ALLOC(z->t_end, tasks) ||
        ALLOC(z->pp, D * (n - 1) * 2 + 1) || ALLOC(z->pp_bytes, P) || ALLOC(z->pp_time, 2 * P) ||
        ALLOC(z->pp_count, 2 * P) || ALLOC(z->dp_plan, n) || ALLOC(z->ag_plan, n) ||
        ALLOC(z->last_start, n * D) || ALLOC(z->last_len, n * D) || ALLOC(z->reported, n) ||
        ALLOC(z->bucket_next, n) || ALLOC(z->b_start, buckets) || ALLOC(z->b_end, buckets) ||
        ALLOC(z->chain_end, n) || ALLOC(z->last_ended, n) || ALLOC(z->chain_waits, n) || ALLOC(z->tasks_left, P) || ALLOC(z->chains_left, P) ||
        ALLOC(z->stage_state, P) || ALLOC(z->gather_chunk, P) || ALLOC(z->gather_bucket, P) ||
        ALLOC(z->gather_t0, P) || ALLOC(z->gather_s, P) || ALLOC(z->gather_sum, n) ||
        ALLOC(z->gather_n, n))
        return -1;
#undef ALLOC
    return 0;
}

/* per (d, s): the slowest GPU of the replica's stage; per d: nominal */
static void replica_speeds(des *z)
{
    const parallel_config *p = &z->w->par;
    const step_options *o = z->o;
    for (unsigned d = 0; d < z->D; d++) {
        z->nominal[d] = 1;
        for (unsigned s = 0; s < z->P; s++) {
            double x = 1;
            for (unsigned cc = 0; cc < p->cp; cc++)
                for (unsigned t = 0; t < p->tp; t++) {
                    uint32_t id = step_gpu(p, s, d, cc, t);
                    if (o->gpu_speed && id < o->n_gpu_speed && o->gpu_speed[id] < x)
                        x = o->gpu_speed[id];
                }
            z->speed[(size_t)d * z->P + s] = x;
            z->nominal[d] &= x >= 1;
        }
    }
}

/* one bucket of chain j for every DP group (every tensor rank of the stage) */
static int dp_plan(des *z, nc_plan *plan, unsigned j, int gather, double bytes, uint32_t *ranks)
{
    const parallel_config *p = &z->w->par;
    unsigned s = j % z->P, n = p->dp * p->cp;
    enum nc_collective coll = gather ? NC_ALLGATHER
                              : z->sr->c[s].dp_kind == COMM_DP_ALLREDUCE ? NC_ALLREDUCE
                                                                         : NC_REDUCESCATTER;
    memset(plan, 0, sizeof *plan);
    if (n < 2 || !(bytes > 0))
        return 0;
    const stage_costs *c = &z->sr->c[s];
    double whole = gather ? c->ag_bytes : c->dp_bytes;
    double experts = gather ? c->ag_expert_bytes : c->dp_expert_bytes;
    return step_dp_append(plan, &z->f->nc, p, s, coll, bytes, whole > 0 ? experts / whole : 0,
                          ranks, z->err);
}

static int set_up(des *z)
{
    const workload *w = z->w;
    const parallel_config *p = &w->par;
    const replica_run *nominal = &z->sr->runs[z->sr->n_runs - 1];
    if (alloc_all(z))
        return no_memory(z);
    replica_speeds(z);
    for (unsigned s = 0; s < z->P; s++) {
        if (nominal->sched.tasks[(size_t)s * z->per_stage].stage != s)
            return sim_error_set(z->err, SIM_ERR_INTERNAL, NULL, 0,
                                 "the schedule's tasks are not stage by stage");
        z->chains_left[s] = z->v;
        for (size_t i = 0; i < w->stages[s].n_comm; i++)
            if (w->stages[s].comm[i].kind == COMM_PP_SEND)
                z->pp_bytes[s] = w->stages[s].comm[i].bytes;
    }
    uint32_t *ranks = malloc(((size_t)p->dp * p->cp + 1) * sizeof *ranks);
    if (!ranks)
        return no_memory(z);
    int rc = 0;
    for (unsigned j = 0; j < z->n_pos && !rc; j++) {
        const dp_chain *dc = &z->sr->dc[j];
        rc = dp_plan(z, &z->dp_plan[j], j, 0, dc->buckets ? dc->bucket_bytes : 0, ranks);
        if (!rc)
            rc = dp_plan(z, &z->ag_plan[j], j, 1, dc->buckets ? dc->gather_bytes : 0, ranks);
    }
    free(ranks);
    if (!rc)
        rc = step_sc_set_up(z);
    if (rc || (rc = step_des_fold(z)) != 0 || (rc = step_sm_set_up(z)) != 0)
        return rc;
    for (unsigned s = 0; s < z->P; s++)
        z->tasks_left[s] = (uint32_t)(z->D * z->per_stage);
    const topo_graph *g = &z->f->g;
    z->prev_bytes = zalloc(g->n_links, sizeof *z->prev_bytes);
    z->tier = zalloc(g->n_links, sizeof *z->tier);
    if (!z->prev_bytes || !z->tier)
        return no_memory(z);
    for (uint32_t l = 0; l < g->n_links; l++) {
        z->tier[l] = (uint8_t)step_link_tier(g, l);
        z->tier_links[z->tier[l]]++;
    }
    double ideal = z->sr->runs[z->sr->n_runs - 1].ideal.iteration_s;
    z->bin_s = ideal > 0 ? ideal / STEP_BINS_PER_IDEAL : 1;
    if ((rc = step_des_net_create(z)) != 0)
        return rc;
    z->log.tier = z->tier;
    if (z->x) { /* the flow log and link tracking: the flow net's (step_net.c) */
        z->log.cap = z->o->flow_log;
        nc_exec_observe(z->x, flow_started, flow_ended, z);
    }
    return sim_schedule_in(z->eng, z->bin_s, 0, KIND_STEP_SAMPLE, step_des_sample, z, 0) ? 0
                                                                                : no_memory(z);
}

static void free_all(des *z)
{
    for (size_t i = 0; z->pp && i < (size_t)z->D_all * (z->n_pos - 1) * 2; i++)
        nc_plan_free(&z->pp[i]);
    for (unsigned j = 0; j < z->n_pos; j++) {
        if (z->dp_plan)
            nc_plan_free(&z->dp_plan[j]);
        if (z->ag_plan)
            nc_plan_free(&z->ag_plan[j]);
    }
    void *ptrs[] = {z->speed, z->nominal, z->next, z->busy, z->arrived, z->bwd_started,
                    z->t_start, z->t_end, z->pp, z->pp_bytes, z->pp_time, z->pp_count,
                    z->dp_plan, z->ag_plan, z->last_start, z->last_len, z->reported,
                    z->bucket_next, z->bucket_first, z->b_start, z->b_end, z->chain_end,
                    z->tasks_left, z->chains_left, z->stage_state, z->gather_chunk,
                    z->gather_bucket, z->gather_t0, z->gather_s, z->gather_sum, z->gather_n,
                    z->prev_bytes, z->tier, z->peak, z->mean, z->pp_first, z->dp_first,
                    z->ag_first, z->last_ended, z->chain_waits};
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++)
        free(ptrs[i]);
    step_sc_free(z);
    step_sm_free(z);
    step_des_net_free(z);
    flow_fold_free(&z->fold);
    sim_engine_destroy(z->eng);
    step_flow_log_free(&z->log);
}

/* what the iteration measured, where the profile's attribution reads it:
 * mean send and bucket times, the Gantt chart, the links' bytes */
static int record(des *z)
{
    step_run *sr = z->sr;
    for (unsigned s = 0; s < z->P; s++) {
        sr->c[s].send_f = z->pp_count[2 * s] ? z->pp_time[2 * s] / z->pp_count[2 * s] : 0;
        sr->c[s].send_b =
            z->pp_count[2 * s + 1] ? z->pp_time[2 * s + 1] / z->pp_count[2 * s + 1] : 0;
    }
    for (unsigned j = 0; j < z->n_pos; j++) {
        dp_chain *dc = &sr->dc[j];
        double sum = 0;
        for (unsigned i = 0; i < dc->buckets; i++)
            sum += z->b_end[z->bucket_first[j] + i] - z->b_start[z->bucket_first[j] + i];
        dc->bucket_s = dc->buckets ? sum / dc->buckets : 0;
        dc->gather_bucket_s = z->gather_n[j] ? z->gather_sum[j] / z->gather_n[j] : 0;
    }
    /* the Gantt chart: the replica whose pipeline ends last */
    unsigned slow = 0;
    double last = -1;
    for (unsigned d = 0; d < z->D; d++)
        if (pipeline_end(z, d) > last) {
            last = pipeline_end(z, d);
            slow = d;
        }
    size_t n = (size_t)z->P * z->per_stage;
    sr->gantt = malloc(n * sizeof *sr->gantt);
    if (!sr->gantt)
        return no_memory(z);
    sr->n_gantt = n;
    for (size_t i = 0; i < n; i++) {
        sr->gantt[i] = z->order[i];
        sr->gantt[i].start_s = z->t_start[(size_t)slow * n + i];
        sr->gantt[i].end_s = z->t_end[(size_t)slow * n + i];
    }
    for (uint32_t l = 0; l < z->f->g.n_links; l++)
        z->out->link_bytes[l] += step_des_link_bytes(z, l);
    if (z->x)
        step_des_hot_links(z);
    else if (step_des_net_record(z)) /* the series' last bins: out of memory */
        return step_no_memory(z->err);
    z->out->n_bins = z->n_bins;
    z->out->bin_s = z->bin_s;
    z->out->bin_peak = z->peak;
    z->out->bin_mean = z->mean;
    z->peak = z->mean = NULL; /* the profile owns them now */
    step_flow_log_give(&z->log, z->out);
    for (unsigned k = 0; k < z->out->n_hot; k++) {
        uint32_t l = z->out->hot[k].link;
        z->out->hot[k].utilisation =
            z->out->link_bytes[l] / (z->f->g.link_bytes_per_s[l] * z->iteration);
    }
    return 0;
}

/* the caller's progress hook (step_options.poll) */
static int des_poll(sim_engine *eng, void *ctx)
{
    const des *z = ctx;
    return z->o->poll(z->o->poll_ctx, sim_now(eng), sim_events_fired(eng));
}

int step_des_run(step_run *sr, const workload *w, const compute_device *dev,
                 const step_options *o, step_profile *out, double *iteration)
{
    const parallel_config *p = &w->par;
    des z = {.w = w, .sr = sr, .o = o, .dev = dev, .out = out, .f = sr->cx.f,
             .err = sr->cx.err, .P = p->pp, .v = p->vpp ? p->vpp : 1,
             .m = w->microbatches, .D = p->dp, .D_all = p->dp};
    z.n_pos = z.v * z.P;
    z.per_stage = 2 * (size_t)z.m * z.v;
    z.order = sr->runs[sr->n_runs - 1].sched.tasks;
    z.eng = sim_engine_create();
    int rc = z.eng ? set_up(&z) : no_memory(&z);
    for (unsigned d = 0; !rc && d < z.D; d++)
        for (unsigned s = 0; s < z.P; s++)
            try_start(&z, d, s);
    if (!rc && o->poll)
        sim_engine_set_poll(z.eng, des_poll, &z, STEP_POLL_EVENTS);
    struct timespec w0, w1; /* the packet network reports its wall time */
    clock_gettime(CLOCK_MONOTONIC, &w0);
    if (!rc && !z.code && sim_run(z.eng, INFINITY) == SIM_RUN_POLLED_STOP)
        rc = sim_error_set(z.err, SIM_ERR_INTERRUPTED, NULL, 0,
                           "the concurrent iteration was interrupted at %.6g s", sim_now(z.eng));
    rc = rc ? rc : z.code ? z.code : step_des_net_error(&z);
    for (unsigned s = 0; !rc && s < z.P; s++)
        if (z.stage_state[s] != 2)
            rc = sim_error_set(z.err, SIM_ERR_INTERNAL, NULL, 0,
                               "the concurrent iteration stopped with stage %u unfinished", s);
    clock_gettime(CLOCK_MONOTONIC, &w1);
    if (z.px)
        out->packet_wall_s = (double)(w1.tv_sec - w0.tv_sec) + (w1.tv_nsec - w0.tv_nsec) * 1e-9;
    if (!rc)
        rc = record(&z);
    *iteration = z.iteration;
    free_all(&z);
    return rc;
}
