/* step_comm.c - the step tier's communication: TP, CP and EP collectives of
 * one stage with their exposure, PP sends between stages, DP buckets of
 * every group at once (see step.h for the rules).
 *
 * TP exposure by fw.tp_overlap_mode, per collective instance of time c:
 *   FRACTION   exposed = (1 - tp_overlap) c (step_options.tp_overlap)
 *   NONE       exposed = c
 *   PIPELINED  Megatron --tp-comm-overlap: the collective is cut into tp
 *              chunks and overlapped with the GEMM it feeds (time g):
 *              exposed = min(c, max(0, c - g) + c / tp) (the first chunk
 *              cannot overlap). g is the phase's layer GEMM time over its
 *              TP instances (pairs get the mean GEMM, not each their own).
 * While hidden, the collective's kernels hold k SMs of the GPU's S, so the
 * GEMM under it takes S / (S - k) as long: compute grows by
 * hidden x k / (S - k) (k from step_comm_sms).
 */
#include "step_internal.h"
#include "pages.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "netcoll.h"

int step_no_memory(sim_error *err)
{
    return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory in the step tier");
}

int step_link_tier(const topo_graph *g, uint32_t l)
{
    uint32_t a = g->link_src[l], b = g->link_dst[l];
    int ka = g->node_kind[a], kb = g->node_kind[b];
    if (ka == TOPO_SCALEUP || kb == TOPO_SCALEUP)
        return 0;
    /* a shared NIC (TOPO_NIC) is the server's end of the host cable: both
     * its GPU links and its cable to the leaf are host-leaf */
    if (ka == TOPO_HOST || kb == TOPO_HOST || ka == TOPO_NIC || kb == TOPO_NIC)
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
    /* the bytes first: their per-link scratch is given back (sim_zero_release)
     * before the plan's simulation grows its flow net, so the two do not
     * add up in the peak */
    size_t n_touched = 0;
    if (per_iteration > 0)
        rc = nc_link_bytes(&plan, &cx->f->nc, per_iteration, cx->scratch, cx->touched,
                           &n_touched, cx->err);
    const topo_graph *g = &cx->f->g;
    for (size_t i = 0; i < n_touched; i++) {
        uint32_t l = cx->touched[i];
        cx->link_bytes[l] += cx->scratch[l];
        cx->tier_copies[step_link_tier(g, l)] += cx->scratch[l] * (groups - 1);
        cx->scratch[l] = 0;
    }
    if (n_touched * 64 >= g->n_links) /* the zeros written over most pages */
        sim_zero_release(cx->scratch, ((size_t)g->n_links + 1) * sizeof *cx->scratch);
    if (!rc)
        rc = run_plan(cx, &plan, t);
    nc_plan_free(&plan);
    return rc;
}

enum nc_collective step_coll_of(int kind)
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

/* 1 when the ranks span more than one scale-up domain (every rank is its
 * own where the fabric has none) */
static int spans_domains(const fabric *f, const uint32_t *ranks, unsigned n)
{
    unsigned dom = f->nc.domain_size;
    if (!dom)
        return 1;
    for (unsigned i = 1; i < n; i++)
        if (ranks[i] / dom != ranks[0] / dom)
            return 1;
    return 0;
}

double step_comm_sms(const fabric *f, enum nc_collective coll, const uint32_t *ranks,
                     unsigned n)
{
    int network = spans_domains(f, ranks, n);
    /* components.md 4.4, Megatron distributed_data_parallel_config.py nccl_ub
     * docstring (V, "just a reference number"): SMs of AllGather /
     * ReduceScatter, NVLink only 4 / 5, NVLink + IB without SHARP 16 / 16.
     * An all-reduce is a reduce-scatter then an all-gather: the larger (D). */
    switch (coll) {
    case NC_ALLGATHER:
        return network ? 16 : 4;
    case NC_REDUCESCATTER:
    case NC_ALLREDUCE:
        return network ? 16 : 5;
    default:
        return 0;
    }
}

int step_sc_kind(int comm_kind)
{
    switch (comm_kind) {
    case COMM_TP_ALLREDUCE:
    case COMM_TP_ALLGATHER:
    case COMM_TP_REDUCE_SCATTER:
        return STEP_SC_TP;
    case COMM_CP_SENDRECV:
        return STEP_SC_CP;
    case COMM_EP_ALLTOALL:
        return STEP_SC_EP;
    default:
        return -1;
    }
}

int step_sc_on_net(const fabric *f, const workload *w, const step_options *o, unsigned s,
                   int sc)
{
    const parallel_config *p = &w->par;
    if (!o->concurrent || o->analytic)
        return 0;
    unsigned n = 0;
    uint32_t ranks[4096];
    switch (sc) {
    case STEP_SC_TP:
        for (n = 0; n < p->tp && n < 4096; n++)
            ranks[n] = step_gpu(p, s, 0, 0, n);
        break;
    case STEP_SC_CP:
        if (p->cp > 1) {
            ranks[n++] = step_gpu(p, s, 0, 0, 0);
            ranks[n++] = step_gpu(p, s, 0, 1, 0);
        }
        break;
    default: /* expert groups of whole replicas only (ep divides dp) */
        if (p->ep > 1 && p->dp % p->ep == 0)
            for (n = 0; n < p->ep && n < 4096; n++)
                ranks[n] = step_gpu(p, s, n, 0, 0);
        break;
    }
    return n >= 2 && spans_domains(f, ranks, n);
}

/* TP of one phase: total time tot over n instances of SMs k each; sets the
 * exposed time (returned) and the compute the hidden part costs (*smx). */
static double tp_exposed(const compute_device *dev, const workload *w, const step_options *o,
                         double tot, double n, double gemm, double k, double *smx)
{
    double exposed = tot;
    int mode = w->par.fw.tp_overlap_mode;
    if (mode == TP_OVERLAP_FRACTION) {
        exposed = (1 - o->tp_overlap) * tot;
    } else if (mode == TP_OVERLAP_PIPELINED && n > 0) {
        double c = tot / n, g = gemm / n;
        exposed = n * fmin(c, fmax(0, c - g) + c / w->par.tp);
    }
    /* the GEMM beside the k SMs of the hidden part: the measured
     * beside-slowdown where the device has one (a GEMM given the SMs as a
     * margin lost as much, docs/gpu-calibration.md), else rule 1 */
    *smx = (tot - exposed) * compute_beside_share(dev, k);
    return exposed;
}

/* the TP collectives of stage s: totals per kind, exposure and SM cost */
static int stage_tp(comm_ctx *cx, const workload *w, const compute_device *dev, unsigned s,
                    const step_options *o, stage_costs *c)
{
    const parallel_config *p = &w->par;
    const stage_workload *st = &w->stages[s];
    uint32_t ranks[4096];
    unsigned n = 0;
    for (n = 0; n < p->tp; n++)
        ranks[n] = step_gpu(p, s, 0, 0, n);
    double tot[2] = {0, 0}, inst[2] = {0, 0}, sms[2] = {0, 0};
    double by_kind[2][COMM_KIND_COUNT] = {{0}};
    int net = step_sc_on_net(cx->f, w, o, s, STEP_SC_TP);
    for (size_t i = 0; i < st->n_comm; i++) {
        const comm_op *op = &st->comm[i];
        if (op->kind != COMM_TP_ALLREDUCE && op->kind != COMM_TP_ALLGATHER &&
            op->kind != COMM_TP_REDUCE_SCATTER)
            continue;
        int b = op->phase != PHASE_FORWARD;
        double t;
        /* on the concurrent iteration's net its flows put every group's bytes on the links */
        double per_iteration = net ? 0 : op->count * w->microbatches;
        int rc = collective_time(cx, step_coll_of(op->kind), ranks, n, op->bytes, per_iteration,
                                 (double)p->dp * p->cp, &t);
        if (rc)
            return rc;
        tot[b] += t * op->count;
        inst[b] += op->count;
        by_kind[b][op->kind] += t * op->count;
        sms[b] = fmax(sms[b], step_comm_sms(cx->f, step_coll_of(op->kind), ranks, n));
    }
    double gemm[2] = {c->gemm_f, c->gemm_b}, exposed[2], smx[2];
    for (int b = 0; b < 2; b++) {
        exposed[b] = tp_exposed(dev, w, o, tot[b], inst[b], gemm[b], sms[b], &smx[b]);
        for (int k = 0; k < COMM_KIND_COUNT; k++) {
            c->coll_total[k] += by_kind[b][k];
            c->coll_exposed[k] += tot[b] > 0 ? by_kind[b][k] * exposed[b] / tot[b] : 0;
        }
    }
    c->tp_f = exposed[0];
    c->tp_b = exposed[1];
    c->smx_f = smx[0];
    c->smx_b = smx[1];
    return 0;
}

int step_stage_comm(comm_ctx *cx, const workload *w, const compute_device *dev, unsigned s,
                    const step_options *o, stage_costs *c)
{
    const parallel_config *p = &w->par;
    const stage_workload *st = &w->stages[s];
    uint32_t ranks[4096];
    double mb = w->microbatches;
    int rc = p->tp > 1 ? stage_tp(cx, w, dev, s, o, c) : 0;
    if (rc)
        return rc;
    for (size_t i = 0; i < st->n_comm; i++) {
        const comm_op *op = &st->comm[i];
        double t = 0;
        unsigned n = 0;
        int fwd = op->phase == PHASE_FORWARD;
        switch (op->kind) {
        case COMM_CP_SENDRECV:
            ranks[0] = step_gpu(p, s, 0, 0, 0);
            ranks[1] = step_gpu(p, s, 0, 1, 0);
            if ((rc = collective_time(cx, NC_SENDRECV, ranks, 2, op->bytes,
                                      step_sc_on_net(cx->f, w, o, s, STEP_SC_CP) ? 0
                                                                                 : op->count * mb,
                                      (double)p->dp * p->tp * p->cp, &t)))
                return rc;
            *(fwd ? &c->cp_f : &c->cp_b) += t * op->count;
            c->coll_total[COMM_CP_SENDRECV] += t * op->count;
            break;
        case COMM_EP_ALLTOALL:
            for (n = 0; n < p->ep && n < 4096; n++)
                ranks[n] = step_gpu(p, s, n, 0, 0);
            if ((rc = collective_time(cx, NC_ALLTOALL, ranks, n, op->bytes,
                                      step_sc_on_net(cx->f, w, o, s, STEP_SC_EP) ? 0
                                                                                 : op->count * mb,
                                      (double)p->dp * p->cp * p->tp / n, &t)))
                return rc;
            *(fwd ? &c->ep_f : &c->ep_b) += t * op->count;
            c->coll_total[COMM_EP_ALLTOALL] += t * op->count;
            c->coll_exposed[COMM_EP_ALLTOALL] += t * op->count;
            break;
        case COMM_PP_SEND: /* timed per boundary with every replica (step_pp_sends) */
            *(fwd ? &c->sends_f : &c->sends_b) = op->count;
            break;
        case COMM_DP_ALLREDUCE:
        case COMM_DP_REDUCE_SCATTER:
            c->dp_bytes += op->bytes;
            if (op->group != p->dp * p->cp) /* the experts' (workload.c dp_comm) */
                c->dp_expert_bytes += op->bytes;
            c->dp_kind = op->kind;
            break;
        case COMM_DP_ALLGATHER:
            c->ag_bytes += op->bytes;
            if (op->group != p->dp * p->cp)
                c->ag_expert_bytes += op->bytes;
            break;
        default:
            break;
        }
    }
    /* rule 2: the K/V exchange overlaps the attention it feeds */
    c->cp_f = fmax(0, c->cp_f - c->attention_f);
    c->cp_b = fmax(0, c->cp_b - c->attention_b);
    c->coll_exposed[COMM_CP_SENDRECV] = c->cp_f + c->cp_b;
    return 0;
}

int step_pp_sends(comm_ctx *cx, const workload *w, stage_costs *c)
{
    const parallel_config *p = &w->par;
    if (p->pp < 2)
        return 0;
    unsigned pairs = p->dp * p->cp * p->tp;
    uint32_t *src = malloc(pairs * sizeof *src), *dst = malloc(pairs * sizeof *dst);
    if (!src || !dst) {
        free(src);
        free(dst);
        return step_no_memory(cx->err);
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

int step_dp_append(nc_plan *plan, const nc_fabric *nc, const parallel_config *p, unsigned s,
                   enum nc_collective coll, double bytes, double expert_frac, uint32_t *ranks,
                   sim_error *err)
{
    unsigned n = p->dp * p->cp, ep = p->ep ? p->ep : 1;
    /* experts in groups of whole replicas (ep divides dp) and more than one
     * replica of each: else they reduce with the rest, as before */
    int split = expert_frac > 0 && ep > 1 && p->dp % ep == 0 && p->dp / ep * p->cp >= 2;
    double dense = split ? bytes * (1 - expert_frac) : bytes;
    int rc = 0;
    for (unsigned t0 = 0; t0 < p->tp && !rc; t0++) {
        unsigned k = 0;
        for (unsigned d = 0; d < p->dp; d++)
            for (unsigned cc = 0; cc < p->cp; cc++)
                ranks[k++] = step_gpu(p, s, d, cc, t0);
        /* NCCL's own choice of algorithm (netcoll_auto), not a forced
         * ring: tree / NVLS avoid the ring's (n-1) step latencies */
        if (dense > 0)
            rc = nc_plan_append(plan, nc, coll, NC_ALGO_AUTO, ranks, n, dense, err);
        for (unsigned shard = 0; split && shard < ep && !rc; shard++) {
            k = 0;
            for (unsigned d = shard; d < p->dp; d += ep)
                for (unsigned cc = 0; cc < p->cp; cc++)
                    ranks[k++] = step_gpu(p, s, d, cc, t0);
            rc = nc_plan_append(plan, nc, coll, NC_ALGO_AUTO, ranks, k, bytes * expert_frac, err);
        }
    }
    return rc;
}

int step_dp_bucket_time(comm_ctx *cx, const workload *w, const stage_costs *c,
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
        return step_no_memory(cx->err);
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
        double whole = gather ? c[s].ag_bytes : c[s].dp_bytes;
        double experts = gather ? c[s].ag_expert_bytes : c[s].dp_expert_bytes;
        rc = step_dp_append(&plan, &cx->f->nc, p, s, coll, bytes,
                            whole > 0 ? experts / whole : 0, ranks, cx->err);
    }
    if (!rc && plan.n_phases)
        rc = t ? run_plan(cx, &plan, t)
               : nc_link_bytes(&plan, &cx->f->nc, 1.0, cx->link_bytes, NULL, NULL, cx->err);
    nc_plan_free(&plan);
    free(ranks);
    return rc;
}
