/* step.c - one training iteration: compute, communication on the fabric,
 * the pipeline schedule and data-parallel reduction (see step.h). */
#include "step.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "netcoll.h"
#include "schedule.h"

#define FAIL(...) return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, __VA_ARGS__)

static const char *const part_names[STEP_PART_COUNT] = {"compute", "tp", "pp", "dp",
                                                        "cp", "ep", "bubble", "optimizer"};

/* out of memory anywhere in the step tier; returns SIM_ERR_NOMEM */
static int no_memory(sim_error *err)
{
    return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory in the step tier");
}

const char *step_part_name(int part)
{
    return part >= 0 && part < STEP_PART_COUNT ? part_names[part] : "?";
}

void step_options_defaults(step_options *o)
{
    memset(o, 0, sizeof *o);
    o->tp_overlap = 0;
    o->overlap_grad_reduce = 1;
    o->overlap_param_gather = 1;
    /* Megatron-LM's DDP bucket: 40M parameters (distributed_data_parallel_
     * config.py, recalled: U); overridable in the scenario */
    o->bucket_params = 40e6;
    o->sustained_efficiency = 1;
}

uint32_t step_gpu(const parallel_config *p, unsigned stage, unsigned d, unsigned c, unsigned t)
{
    static const unsigned char megatron[4] = {DIM_TP, DIM_CP, DIM_DP, DIM_PP};
    const unsigned char *o =
        p->order[0] | p->order[1] | p->order[2] | p->order[3] ? p->order : megatron;
    unsigned index[4] = {t, c, d, stage}, size[4] = {p->tp, p->cp, p->dp, p->pp};
    uint32_t id = 0, stride = 1;
    for (int k = 0; k < 4; k++) { /* mixed radix, innermost dimension first */
        id += index[o[k]] * stride;
        stride *= size[o[k]];
    }
    return id;
}

void step_profile_free(step_profile *p)
{
    if (!p)
        return;
    free(p->stage);
    free(p->link_bytes);
    free(p->link_tier);
    free(p->link_utilisation);
    free(p->tasks);
    memset(p, 0, sizeof *p);
}

/* ------------------------------------------------------------ communication */

typedef struct comm_ctx {
    fabric *f;
    int analytic;
    double *link_bytes;   /* per link, per iteration */
    double *scratch;      /* one representative group's bytes, per link */
    uint32_t *touched;    /* the links scratch holds bytes for */
    double tier_copies[STEP_TIERS]; /* bytes of the groups not routed link by link */
    sim_error *err;       /* the step tier's errors, the collectives' included */
} comm_ctx;

/* 0 scale-up, 1 host-leaf, 2 leaf-spine, 3 spine-core or router-router */
static int link_tier(const topo_graph *g, uint32_t l)
{
    uint32_t a = g->link_src[l], b = g->link_dst[l];
    if (g->node_kind[a] == TOPO_SCALEUP || g->node_kind[b] == TOPO_SCALEUP)
        return 0;
    if (g->node_kind[a] == TOPO_HOST || g->node_kind[b] == TOPO_HOST)
        return 1;
    if (g->node_tier[a] == g->node_tier[b] || g->node_tier[a] + g->node_tier[b] >= 5)
        return 3;
    return 2;
}

static int run_plan(comm_ctx *cx, const nc_plan *plan, double *t)
{
    nc_result r;
    int rc = cx->analytic ? nc_analytic(plan, &cx->f->nc, &r, cx->err)
                          : nc_simulate(plan, &cx->f->nc, &r, cx->err);
    *t = r.time_s;
    return rc;
}

/* Time of one collective over ranks (one representative group of `groups`
 * identical ones placed alike); adds `per_iteration` instances' bytes of the
 * representative to the links and of the other groups to the tier totals. */
static int collective_time(comm_ctx *cx, enum nc_collective coll, const uint32_t *ranks,
                           unsigned n, double bytes, double per_iteration, double groups,
                           double *t)
{
    *t = 0;
    if (n < 2 || bytes <= 0)
        return 0;
    nc_plan plan;
    int rc = nc_plan_build(&plan, &cx->f->nc, coll, NC_ALGO_AUTO, ranks, n, bytes, cx->err);
    if (rc) {
        nc_plan_free(&plan);
        return rc;
    }
    rc = run_plan(cx, &plan, t);
    size_t n_touched = 0;
    if (!rc && per_iteration > 0)
        rc = nc_link_bytes(&plan, &cx->f->nc, per_iteration, cx->scratch, cx->touched,
                           &n_touched, cx->err);
    nc_plan_free(&plan);
    const topo_graph *g = &cx->f->g;
    for (size_t i = 0; i < n_touched; i++) {
        uint32_t l = cx->touched[i];
        cx->link_bytes[l] += cx->scratch[l];
        cx->tier_copies[link_tier(g, l)] += cx->scratch[l] * (groups - 1);
        cx->scratch[l] = 0;
    }
    return rc;
}

static enum nc_collective coll_of(int kind)
{
    switch (kind) {
    case COMM_TP_ALLGATHER:
    case COMM_DP_ALLGATHER:
        return NC_ALLGATHER;
    case COMM_TP_REDUCE_SCATTER:
    case COMM_DP_REDUCE_SCATTER:
        return NC_REDUCESCATTER;
    case COMM_EP_ALLTOALL:
        return NC_ALLTOALL;
    case COMM_PP_SEND:
    case COMM_CP_SENDRECV:
        return NC_SENDRECV;
    default:
        return NC_ALLREDUCE;
    }
}

/* ------------------------------------------------------------ per stage */

typedef struct stage_costs {
    double compute_f, compute_b;     /* per micro-batch, nominal speed */
    double tp_f, tp_b;               /* exposed TP per micro-batch */
    double cp_f, cp_b, ep_f, ep_b;   /* exposed CP, EP per micro-batch */
    double optimizer;                /* per iteration */
    double send_f, send_b;           /* PP transfer to the next / from the next stage */
    double dp_bytes, ag_bytes;       /* DP reduction and parameter gather, per GPU */
    int dp_kind;                     /* COMM_DP_ALLREDUCE or COMM_DP_REDUCE_SCATTER */
    double attention_f, attention_b; /* for the CP overlap rule */
} stage_costs;

static double ops_time(const compute_device *dev, const op *ops, size_t n, double *attention)
{
    double t = 0;
    for (size_t i = 0; i < n; i++) {
        double x = compute_op_time_s(dev, &ops[i]);
        if (x < 0)
            return -1;
        t += x * ops[i].count;
        if (attention && ops[i].kind == OP_ATTENTION)
            *attention += x * ops[i].count;
    }
    return t;
}

/* TP, CP and EP exposure and the volumes of PP and DP, for stage s. */
static int stage_comm(comm_ctx *cx, const workload *w, unsigned s, const step_options *o,
                      stage_costs *c)
{
    const parallel_config *p = &w->par;
    const stage_workload *st = &w->stages[s];
    uint32_t ranks[4096];
    double mb = w->microbatches;
    int rc;
    for (size_t i = 0; i < st->n_comm; i++) {
        const comm_op *op = &st->comm[i];
        double t = 0;
        unsigned n = 0;
        int fwd = op->phase == PHASE_FORWARD;
        switch (op->kind) {
        case COMM_TP_ALLREDUCE:
        case COMM_TP_ALLGATHER:
        case COMM_TP_REDUCE_SCATTER:
            for (n = 0; n < p->tp; n++)
                ranks[n] = step_gpu(p, s, 0, 0, n);
            if ((rc = collective_time(cx, coll_of(op->kind), ranks, n, op->bytes, op->count * mb,
                                      (double)p->dp * p->cp, &t)))
                return rc;
            *(fwd ? &c->tp_f : &c->tp_b) += (1 - o->tp_overlap) * t * op->count;
            break;
        case COMM_CP_SENDRECV:
            ranks[0] = step_gpu(p, s, 0, 0, 0);
            ranks[1] = step_gpu(p, s, 0, 1, 0);
            if ((rc = collective_time(cx, NC_SENDRECV, ranks, 2, op->bytes, op->count * mb,
                                      (double)p->dp * p->tp * p->cp, &t)))
                return rc;
            *(fwd ? &c->cp_f : &c->cp_b) += t * op->count;
            break;
        case COMM_EP_ALLTOALL:
            for (n = 0; n < p->ep && n < 4096; n++)
                ranks[n] = step_gpu(p, s, n, 0, 0);
            if ((rc = collective_time(cx, NC_ALLTOALL, ranks, n, op->bytes, op->count * mb,
                                      (double)p->dp * p->cp * p->tp / n, &t)))
                return rc;
            *(fwd ? &c->ep_f : &c->ep_b) += t * op->count;
            break;
        case COMM_PP_SEND:
            break; /* timed per boundary with every replica (pp_sends) */
        case COMM_DP_ALLREDUCE:
        case COMM_DP_REDUCE_SCATTER:
            c->dp_bytes += op->bytes;
            c->dp_kind = op->kind;
            break;
        case COMM_DP_ALLGATHER:
            c->ag_bytes += op->bytes;
            break;
        default:
            break;
        }
    }
    /* rule 2: the K/V exchange overlaps the attention it feeds */
    c->cp_f = fmax(0, c->cp_f - c->attention_f);
    c->cp_b = fmax(0, c->cp_b - c->attention_b);
    return 0;
}

/* The transfer between model positions j and j + 1 (stage s to its
 * successor, every replica, context and tensor rank at once). */
static int pp_sends(comm_ctx *cx, const workload *w, stage_costs *c)
{
    const parallel_config *p = &w->par;
    if (p->pp < 2)
        return 0;
    unsigned pairs = p->dp * p->cp * p->tp;
    uint32_t *src = malloc(pairs * sizeof *src), *dst = malloc(pairs * sizeof *dst);
    if (!src || !dst) {
        free(src);
        free(dst);
        return sim_error_set(cx->err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
    }
    int rc = 0;
    for (unsigned s = 0; s < p->pp && !rc; s++) {
        const stage_workload *st = &w->stages[s];
        double bytes = 0, count_f = 0, count_b = 0;
        for (size_t i = 0; i < st->n_comm; i++)
            if (st->comm[i].kind == COMM_PP_SEND) {
                bytes = st->comm[i].bytes;
                if (st->comm[i].phase == PHASE_FORWARD)
                    count_f = st->comm[i].count;
                else
                    count_b = st->comm[i].count;
            }
        unsigned next = (s + 1) % p->pp;
        for (int dir = 0; dir < 2 && !rc; dir++) {
            unsigned k = 0;
            for (unsigned d = 0; d < p->dp; d++)
                for (unsigned cc = 0; cc < p->cp; cc++)
                    for (unsigned t = 0; t < p->tp; t++, k++) {
                        uint32_t a = step_gpu(p, s, d, cc, t), b = step_gpu(p, next, d, cc, t);
                        src[k] = dir ? b : a;
                        dst[k] = dir ? a : b;
                    }
            nc_plan plan;
            double t = 0;
            rc = nc_plan_permutation(&plan, &cx->f->nc, src, dst, pairs, bytes, cx->err);
            if (!rc)
                rc = run_plan(cx, &plan, &t);
            /* forward sends leave stage s (count_f of them), backward sends
             * leave stage next towards s (that stage's count_b) */
            double per_iter = w->microbatches * (dir ? count_b : count_f);
            if (!rc && per_iter > 0)
                rc = nc_link_bytes(&plan, &cx->f->nc, per_iter, cx->link_bytes, NULL, NULL,
                                   cx->err);
            nc_plan_free(&plan);
            *(dir ? &c[s].send_b : &c[s].send_f) = t;
        }
    }
    free(src);
    free(dst);
    return rc;
}

/* One DP bucket of every DP group at once: the time of the slowest (t
 * non-NULL), or the bytes the given volumes put on every link (t NULL). */
static int dp_bucket_time(comm_ctx *cx, const workload *w, const stage_costs *c,
                          const double *bucket_bytes, int gather, double *t)
{
    const parallel_config *p = &w->par;
    unsigned n = p->dp * p->cp;
    if (t)
        *t = 0;
    if (n < 2)
        return 0;
    uint32_t *ranks = malloc(n * sizeof *ranks);
    if (!ranks)
        return no_memory(cx->err);
    nc_plan plan;
    memset(&plan, 0, sizeof plan);
    int rc = 0;
    for (unsigned s = 0; s < p->pp && !rc; s++) {
        double bytes = bucket_bytes[s];
        if (bytes <= 0)
            continue;
        enum nc_collective coll = gather ? NC_ALLGATHER
                                  : c[s].dp_kind == COMM_DP_ALLREDUCE ? NC_ALLREDUCE
                                                                      : NC_REDUCESCATTER;
        for (unsigned t0 = 0; t0 < p->tp && !rc; t0++) {
            unsigned k = 0;
            for (unsigned d = 0; d < p->dp; d++)
                for (unsigned cc = 0; cc < p->cp; cc++)
                    ranks[k++] = step_gpu(p, s, d, cc, t0);
            rc = nc_plan_append(&plan, &cx->f->nc, coll, NC_ALGO_RING, ranks, n, bytes, cx->err);
        }
    }
    if (!rc && plan.n_phases)
        rc = t ? run_plan(cx, &plan, t)
               : nc_link_bytes(&plan, &cx->f->nc, 1.0, cx->link_bytes, NULL, NULL, cx->err);
    nc_plan_free(&plan);
    free(ranks);
    return rc;
}

/* ------------------------------------------------------------ schedule */

typedef struct replica_run {
    double *speed;        /* per stage: the slowest GPU's speed in this replica */
    sched_result sched;   /* with transfers */
    sched_result ideal;   /* free transfers, for the bubble / PP split */
} replica_run;

static int run_replica(const workload *w, const stage_costs *c, replica_run *rr, sim_error *err)
{
    const parallel_config *p = &w->par;
    unsigned v = p->vpp ? p->vpp : 1, P = p->pp, n = v * P;
    double *tf = malloc(n * sizeof *tf), *tb = malloc(n * sizeof *tb);
    double *sf = malloc(n * sizeof *sf), *sb = malloc(n * sizeof *sb);
    int rc = SIM_ERR_NOMEM;
    if (!tf || !tb || !sf || !sb) {
        no_memory(err);
        goto done;
    }
    for (unsigned ch = 0; ch < v; ch++)
        for (unsigned s = 0; s < P; s++) {
            const stage_costs *x = &c[s];
            double slow = 1 / rr->speed[s];
            unsigned j = ch * P + s;
            tf[j] = (x->compute_f * slow + x->tp_f + x->cp_f + x->ep_f) / v;
            tb[j] = (x->compute_b * slow + x->tp_b + x->cp_b + x->ep_b) / v;
            sf[j] = x->send_f;
            sb[j] = c[(s + 1) % P].send_b;
        }
    sched_input in = {.kind = p->schedule, .pp = P, .vpp = v, .microbatches = w->microbatches,
                      .t_forward = tf, .t_backward = tb, .t_send_forward = sf,
                      .t_send_backward = sb};
    if (v == 1 && in.kind == SCHEDULE_INTERLEAVED)
        in.kind = SCHEDULE_1F1B;
    if (in.kind != SCHEDULE_INTERLEAVED && v != 1) {
        rc = sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                           "virtual pipeline chunks (vpp %u) need the interleaved schedule", v);
        goto done;
    }
    rc = sched_run(&in, &rr->sched, err);
    if (!rc) {
        in.t_send_forward = in.t_send_backward = NULL;
        rc = sched_run(&in, &rr->ideal, err);
    }
done:
    free(tf);
    free(tb);
    free(sf);
    free(sb);
    return rc;
}

/* ------------------------------------------------------------ main */

typedef struct dp_chain {
    double bucket_s, gather_bucket_s;
    unsigned buckets;      /* per (chunk, stage) */
} dp_chain;

/* When the reduction of (chunk, stage) ends, its buckets ready evenly over
 * the chunk's last backward (or all at its end) and run one after another. */
static double reduce_end(const step_options *o, double last_end, double last_len,
                         const dp_chain *dc)
{
    double end = 0;
    for (unsigned i = 0; i < dc->buckets; i++) {
        double ready = o->overlap_grad_reduce
                           ? last_end - last_len + last_len * (i + 1) / dc->buckets
                           : last_end;
        end = fmax(end, ready) + dc->bucket_s;
    }
    return dc->buckets ? end : last_end;
}

static int tier_totals(const fabric *f, const comm_ctx *cx, step_profile *out)
{
    const topo_graph *g = &f->g;
    out->link_tier = malloc(((size_t)g->n_links + 1) * sizeof *out->link_tier);
    out->link_utilisation = malloc(((size_t)g->n_links + 1) * sizeof *out->link_utilisation);
    if (!out->link_tier || !out->link_utilisation)
        return -1;
    for (int t = 0; t < STEP_TIERS; t++)
        out->tier_bytes[t] = cx->tier_copies[t];
    for (uint32_t l = 0; l < g->n_links; l++) {
        int tier = link_tier(g, l);
        out->tier_bytes[tier] += out->link_bytes[l];
        double u = out->link_bytes[l] / (g->link_bytes_per_s[l] * out->iteration_s);
        out->link_tier[l] = (uint8_t)tier;
        out->link_utilisation[l] = u;
        if (u > out->tier_peak_utilisation[tier])
            out->tier_peak_utilisation[tier] = u;
    }
    return 0;
}

/* Refusals before anything is allocated. */
static int check_inputs(const workload *w, const fabric *f, const step_options *o,
                        sim_error *err)
{
    const parallel_config *p = &w->par;
    unsigned long long gpus = (unsigned long long)p->tp * p->cp * p->dp * p->pp;
    if (gpus > f->gpus)
        FAIL("the job needs tp x cp x dp x pp = %llu GPUs, the fabric has %u", gpus, f->gpus);
    if (p->tp > 4096 || p->ep > 4096)
        FAIL("tp and ep above 4096 are not supported");
    if (!(o->bucket_params > 0) || !(o->tp_overlap >= 0 && o->tp_overlap <= 1))
        FAIL("bucket size must be positive and tp overlap in [0, 1]");
    if (!(o->sustained_efficiency > 0 && o->sustained_efficiency <= 1))
        FAIL("sustained efficiency must be in (0, 1], got %g", o->sustained_efficiency);
    return 0;
}

/* What step_simulate works with between its phases; owns everything but
 * cx.f, cx.link_bytes (out->link_bytes) and cx.err. Its functions return 0
 * or a sim_error code recorded in cx.err. */
typedef struct step_run {
    comm_ctx cx;
    stage_costs *c;       /* per stage */
    dp_chain *dc;         /* per stage */
    replica_run *runs;    /* the replicas simulated, the nominal one last */
    unsigned n_runs;
} step_run;

/* compute and the communication a stage cannot hide, every stage; then the
 * PP transfers between them */
static int price_stages(step_run *sr, const workload *w, const compute_device *dev,
                        const step_options *o)
{
    stage_costs *c = sr->c;
    for (unsigned s = 0; s < w->par.pp; s++) {
        const stage_workload *st = &w->stages[s];
        c[s].compute_f = ops_time(dev, st->forward, st->n_forward, &c[s].attention_f);
        c[s].compute_b = ops_time(dev, st->backward, st->n_backward, &c[s].attention_b);
        c[s].optimizer = ops_time(dev, st->step, st->n_step, NULL);
        if (c[s].compute_f < 0 || c[s].compute_b < 0 || c[s].optimizer < 0)
            return sim_error_set(sr->cx.err, SIM_ERR_INPUT, NULL, 0, "stage %u: an operation the "
                                 "GPU cannot time (no peak for its precision?)", s);
        /* what training kernels sustain of the roofline (GEMM, attention and
         * memory-bound alike): clocks under power capping, shapes off the
         * best one, SMs shared with communication kernels */
        double eta = o->sustained_efficiency;
        c[s].compute_f /= eta;
        c[s].compute_b /= eta;
        c[s].optimizer /= eta;
        c[s].attention_f /= eta;
        c[s].attention_b /= eta;
        int rc = stage_comm(&sr->cx, w, s, o, &c[s]);
        if (rc)
            return rc;
    }
    return pp_sends(&sr->cx, w, c);
}

/* data-parallel buckets: sizes per stage, then one bucket of every group at
 * once for its time */
static int dp_buckets(step_run *sr, const workload *w, const step_options *o)
{
    const stage_costs *c = sr->c;
    dp_chain *dc = sr->dc;
    unsigned P = w->par.pp, v = w->par.vpp ? w->par.vpp : 1;
    double *bucket = calloc(P, sizeof *bucket), *gbucket = calloc(P, sizeof *gbucket);
    int rc = 0;
    if (!bucket || !gbucket) {
        rc = no_memory(sr->cx.err);
        goto done;
    }
    for (unsigned s = 0; s < P; s++) {
        double params = w->stages[s].params / v;
        dc[s].buckets = c[s].dp_bytes > 0 ? (unsigned)ceil(params / o->bucket_params) : 0;
        if (dc[s].buckets < 1 && c[s].dp_bytes > 0)
            dc[s].buckets = 1;
    }
    double tb_dp = 0, tb_ag = 0;
    for (unsigned s = 0; s < P; s++) { /* whole volumes, for the link bytes */
        bucket[s] = c[s].dp_bytes;
        gbucket[s] = c[s].ag_bytes;
    }
    rc = dp_bucket_time(&sr->cx, w, c, bucket, 0, NULL);
    if (!rc)
        rc = dp_bucket_time(&sr->cx, w, c, gbucket, 1, NULL);
    if (rc)
        goto done;
    for (unsigned s = 0; s < P; s++) {
        bucket[s] = dc[s].buckets ? c[s].dp_bytes / v / dc[s].buckets : 0;
        gbucket[s] = dc[s].buckets ? c[s].ag_bytes / v / dc[s].buckets : 0;
    }
    rc = dp_bucket_time(&sr->cx, w, c, bucket, 0, &tb_dp);
    if (!rc)
        rc = dp_bucket_time(&sr->cx, w, c, gbucket, 1, &tb_ag);
    if (rc)
        goto done;
    for (unsigned s = 0; s < P; s++) {
        dc[s].bucket_s = tb_dp;
        dc[s].gather_bucket_s = tb_ag;
    }
done:
    free(bucket);
    free(gbucket);
    return rc;
}

/* replicas: the nominal one and every one holding a slower GPU; records the
 * slowest GPU in out */
static int run_replicas(step_run *sr, const workload *w, const step_options *o,
                        step_profile *out)
{
    const parallel_config *p = &w->par;
    unsigned P = p->pp;
    sr->runs = calloc(p->dp + 1, sizeof *sr->runs);
    if (!sr->runs)
        return no_memory(sr->cx.err);
    out->slowest_speed = 1;
    out->slowest_gpu = UINT32_MAX;
    for (unsigned d = 0; d <= p->dp; d++) {
        double *speed = malloc(P * sizeof *speed);
        if (!speed)
            return no_memory(sr->cx.err);
        int slower = 0;
        for (unsigned s = 0; s < P; s++) {
            speed[s] = 1;
            for (unsigned cc = 0; d < p->dp && cc < p->cp; cc++)
                for (unsigned t = 0; t < p->tp; t++) {
                    uint32_t id = step_gpu(p, s, d, cc, t);
                    double x = o->gpu_speed && id < o->n_gpu_speed ? o->gpu_speed[id] : 1;
                    if (x < speed[s])
                        speed[s] = x;
                    if (x < out->slowest_speed) {
                        out->slowest_speed = x;
                        out->slowest_gpu = id;
                    }
                }
            slower |= speed[s] < 1;
        }
        if (d < p->dp && !slower) { /* nominal: simulated once, as the last run */
            free(speed);
            continue;
        }
        replica_run *rr = &sr->runs[sr->n_runs++];
        rr->speed = speed;
        int rc = run_replica(w, sr->c, rr, sr->cx.err);
        if (rc)
            return rc;
    }
    return 0;
}

/* each stage: the reduction waits for every replica's gradients; its end,
 * the slowest replica's breakdown (all but the bubble) and the nominal
 * replicas' wait. Returns the iteration time. */
static double stage_ends(const step_run *sr, const workload *w, const step_options *o,
                         step_profile *out)
{
    const stage_costs *c = sr->c;
    const replica_run *runs = sr->runs, *nominal = &runs[sr->n_runs - 1];
    unsigned P = w->par.pp, v = w->par.vpp ? w->par.vpp : 1, n_runs = sr->n_runs;
    double iteration = 0;
    for (unsigned s = 0; s < P; s++) {
        double dp_end = 0, bwd_end = 0, nominal_ready = 0, all_ready = 0;
        for (unsigned ch = 0; ch < v; ch++) {
            unsigned j = ch * P + s;
            double last_end = 0, last_len = 0, nominal_end = 0;
            for (unsigned r = 0; r < n_runs; r++) {
                double e = runs[r].sched.chunk_backward_end_s[j];
                if (e > last_end) {
                    last_end = e;
                    last_len = (c[s].compute_b / runs[r].speed[s] + c[s].tp_b + c[s].cp_b +
                                c[s].ep_b) / v;
                }
            }
            nominal_end = nominal->sched.chunk_backward_end_s[j];
            dp_end = fmax(dp_end, reduce_end(o, last_end, last_len, &sr->dc[s]));
            bwd_end = fmax(bwd_end, last_end);
            nominal_ready = fmax(nominal_ready, nominal_end);
            all_ready = fmax(all_ready, last_end);
        }
        double gather = sr->dc[s].buckets * v * sr->dc[s].gather_bucket_s;
        /* the all-gather of every chunk hides behind the first micro-batch's
         * forward through all of the stage's chunks */
        double gather_exposed = o->overlap_param_gather
                                    ? fmax(0, gather - (c[s].compute_f + c[s].tp_f))
                                    : gather;
        double end = fmax(dp_end, bwd_end) + c[s].optimizer + gather_exposed;
        step_stage *ss = &out->stage[s];
        ss->end_s = end;
        /* the breakdown of the slowest replica's stage */
        const replica_run *slow = nominal;
        for (unsigned r = 0; r < n_runs; r++)
            if (runs[r].speed[s] < slow->speed[s])
                slow = &runs[r];
        double m = w->microbatches, sl = 1 / slow->speed[s];
        ss->part_s[STEP_COMPUTE] = m * (c[s].compute_f + c[s].compute_b) * sl;
        ss->part_s[STEP_TP] = m * (c[s].tp_f + c[s].tp_b);
        ss->part_s[STEP_CP] = m * (c[s].cp_f + c[s].cp_b);
        ss->part_s[STEP_EP] = m * (c[s].ep_f + c[s].ep_b);
        double last_task = 0;
        for (unsigned ch = 0; ch < v; ch++)
            last_task = fmax(last_task, slow->sched.chunk_backward_end_s[ch * P + s]);
        ss->part_s[STEP_DP] = fmax(0, end - c[s].optimizer - last_task);
        ss->part_s[STEP_OPTIMIZER] = c[s].optimizer;
        /* PP: what the transfers add to the schedule; bubble: the rest of
         * the stage's idle time up to the iteration's end (filled in below,
         * once the iteration is known) */
        ss->part_s[STEP_PP] = fmax(0, slow->sched.iteration_s - slow->ideal.iteration_s);
        iteration = fmax(iteration, end);
        if (all_ready - nominal_ready > out->wait_s)
            out->wait_s = all_ready - nominal_ready;
    }
    return iteration;
}

/* The profile once the iteration is known: the Gantt chart's tasks, each
 * stage's bubble and fractions, the critical stage, rates, MFU and HFU, and
 * the per-tier link totals. */
static int finish_profile(const step_run *sr, const workload *w, const compute_device *dev,
                          const fabric *f, double iteration, step_profile *out)
{
    const parallel_config *p = &w->par;
    double gpus = (double)((unsigned long long)p->tp * p->cp * p->dp * p->pp);
    out->iteration_s = iteration;
    /* the schedule a Gantt chart shows: the replica whose pipeline ends last */
    const replica_run *slowest = &sr->runs[sr->n_runs - 1];
    for (unsigned r = 0; r < sr->n_runs; r++)
        if (sr->runs[r].sched.iteration_s > slowest->sched.iteration_s)
            slowest = &sr->runs[r];
    out->tasks = malloc((slowest->sched.n_tasks ? slowest->sched.n_tasks : 1) *
                        sizeof *out->tasks);
    if (!out->tasks)
        return no_memory(sr->cx.err);
    memcpy(out->tasks, slowest->sched.tasks, slowest->sched.n_tasks * sizeof *out->tasks);
    out->n_tasks = slowest->sched.n_tasks;
    for (unsigned s = 0; s < p->pp; s++) {
        step_stage *ss = &out->stage[s];
        double accounted = 0;
        for (int k = 0; k < STEP_PART_COUNT; k++)
            if (k != STEP_BUBBLE)
                accounted += ss->part_s[k];
        ss->part_s[STEP_BUBBLE] = fmax(0, iteration - accounted);
        ss->compute_fraction = ss->part_s[STEP_COMPUTE] / iteration;
        ss->comm_fraction = (ss->part_s[STEP_TP] + ss->part_s[STEP_PP] + ss->part_s[STEP_DP] +
                             ss->part_s[STEP_CP] + ss->part_s[STEP_EP]) / iteration;
        if (ss->end_s >= out->stage[out->critical_stage].end_s)
            out->critical_stage = s;
    }
    /* the critical stage's parts, its idle tail counted as bubble */
    memcpy(out->part_s, out->stage[out->critical_stage].part_s, sizeof out->part_s);
    out->tokens_per_s = w->tokens_per_iteration / iteration;
    out->model_flops_per_gpu_s = w->model_flops_iteration / (iteration * gpus);
    double peak = dev->peak_flops_per_s[p->precision];
    out->mfu = out->model_flops_per_gpu_s / peak;
    out->hfu = w->hardware_flops_iteration / (iteration * gpus) / peak;
    if (out->slowest_speed >= 1)
        out->slowest_gpu = UINT32_MAX;
    if (tier_totals(f, &sr->cx, out))
        return no_memory(sr->cx.err);
    return 0;
}

static void step_run_free(step_run *sr)
{
    for (unsigned r = 0; sr->runs && r < sr->n_runs; r++) {
        free(sr->runs[r].speed);
        sched_result_free(&sr->runs[r].sched);
        sched_result_free(&sr->runs[r].ideal);
    }
    free(sr->runs);
    free(sr->cx.scratch);
    free(sr->cx.touched);
    free(sr->c);
    free(sr->dc);
}

int step_simulate(const workload *w, const compute_device *dev, fabric *f,
                  const step_options *o, step_profile *out, sim_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = check_inputs(w, f, o, err);
    if (rc)
        return rc;
    unsigned P = w->par.pp;
    size_t n_links = (size_t)f->g.n_links + 1;
    out->n_links = f->g.n_links;
    out->n_stages = P;
    out->link_bytes = calloc(n_links, sizeof *out->link_bytes);
    out->stage = calloc(P, sizeof *out->stage);
    step_run sr = {.cx = {.f = f, .analytic = o->analytic, .link_bytes = out->link_bytes,
                          .scratch = calloc(n_links, sizeof(double)),
                          .touched = malloc(n_links * sizeof(uint32_t)), .err = err},
                   .c = calloc(P, sizeof(stage_costs)), .dc = calloc(P, sizeof(dp_chain))};
    if (!out->link_bytes || !out->stage || !sr.cx.scratch || !sr.cx.touched || !sr.c || !sr.dc)
        rc = no_memory(err);
    if (!rc)
        rc = price_stages(&sr, w, dev, o);
    if (!rc)
        rc = dp_buckets(&sr, w, o);
    if (!rc)
        rc = run_replicas(&sr, w, o, out);
    if (!rc)
        rc = finish_profile(&sr, w, dev, f, stage_ends(&sr, w, o, out), out);
    if (rc)
        step_profile_free(out);
    step_run_free(&sr);
    return rc;
}
