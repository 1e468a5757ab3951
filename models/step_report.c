/* step_report.c - the step profile once the iteration is known: bubbles,
 * fractions, the critical stage, rates, the per-tier link totals and the
 * attribution (compute by op kind, each collective's total, exposed and
 * hidden time). Invariants, tested: the parts sum to the iteration; the
 * kernel classes plus SM contention sum to compute + optimizer; exposed +
 * hidden = total per collective. */
#include "step_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *step_kernel_name(int kind)
{
    static const char *const names[OP_KIND_COUNT] = {
        [OP_GEMM] = "gemm", [OP_ATTENTION] = "attention", [OP_MEMORY] = "memory-bound"};
    return kind >= 0 && kind < OP_KIND_COUNT && names[kind] ? names[kind] : "other";
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
        int tier = step_link_tier(g, l);
        /* bytes cross the host cable once: a GPU's link to its shared NIC
         * carries the same bytes again, inside the server */
        int inside_server = (g->node_kind[g->link_src[l]] == TOPO_HOST &&
                             g->node_kind[g->link_dst[l]] == TOPO_NIC) ||
                            (g->node_kind[g->link_src[l]] == TOPO_NIC &&
                             g->node_kind[g->link_dst[l]] == TOPO_HOST);
        if (!inside_server)
            out->tier_bytes[tier] += out->link_bytes[l];
        double u = out->link_bytes[l] / (g->link_bytes_per_s[l] * out->iteration_s);
        out->link_tier[l] = (uint8_t)tier;
        out->link_utilisation[l] = u;
        if (u > out->tier_peak_utilisation[tier])
            out->tier_peak_utilisation[tier] = u;
    }
    return 0;
}

/* the critical stage's attribution (its parts already in out->part_s) */
static void attribute(const step_run *sr, const workload *w, const compute_device *dev,
                      step_profile *out)
{
    unsigned s = out->critical_stage, P = w->par.pp, v = w->par.vpp ? w->par.vpp : 1;
    const stage_costs *c = &sr->c[s];
    double slowest = 1, m = w->microbatches;
    for (unsigned r = 0; r < sr->n_runs; r++)
        slowest = fmin(slowest, sr->runs[r].speed[s]);
    for (int k = 0; k < OP_KIND_COUNT; k++)
        out->kernel_s[k] = m * (c->kind_f[k] + c->kind_b[k]) / slowest + c->kind_opt[k];
    out->sm_contention_s = m * (c->smx_f + c->smx_b);
    out->dp_sm_contention_s = fmin(sr->dp_smx[s], out->part_s[STEP_DP]);
    for (int k = 0; k < COMM_KIND_COUNT; k++) {
        out->coll_total_s[k] = m * c->coll_total[k];
        out->coll_exposed_s[k] = m * c->coll_exposed[k];
    }
    /* what contention added to the stage's TP, CP and EP flows (concurrent
     * iteration): exposed, and part of their time; TP's over its kinds as
     * their exposed times (all-reduce where none is exposed) */
    const double *added = &sr->coll_added[(size_t)s * STEP_SC_KINDS];
    out->coll_exposed_s[COMM_CP_SENDRECV] += added[STEP_SC_CP];
    out->coll_total_s[COMM_CP_SENDRECV] += added[STEP_SC_CP];
    out->coll_exposed_s[COMM_EP_ALLTOALL] += added[STEP_SC_EP];
    out->coll_total_s[COMM_EP_ALLTOALL] += added[STEP_SC_EP];
    static const int tp_kinds[3] = {COMM_TP_ALLREDUCE, COMM_TP_ALLGATHER,
                                    COMM_TP_REDUCE_SCATTER};
    double tp_exposed = 0;
    for (int i = 0; i < 3; i++)
        tp_exposed += out->coll_exposed_s[tp_kinds[i]];
    for (int i = 0; i < 3 && added[STEP_SC_TP] > 0; i++) {
        int k = tp_kinds[i];
        double a = tp_exposed > 0 ? added[STEP_SC_TP] * out->coll_exposed_s[k] / tp_exposed
                   : i == 0       ? added[STEP_SC_TP]
                                  : 0;
        out->coll_exposed_s[k] += a;
        out->coll_total_s[k] += a;
    }
    /* hidden TP with no SM count to price it: say so */
    out->sm_contention_unpriced |= !dev->sms && out->part_s[STEP_TP] <
        out->coll_total_s[COMM_TP_ALLREDUCE] + out->coll_total_s[COMM_TP_ALLGATHER] +
        out->coll_total_s[COMM_TP_REDUCE_SCATTER] - 1e-12;
    /* PP: the stage's own sends; exposed is what the transfers add to the
     * schedule (which may be another boundary's, so total >= exposed) */
    double pp = m * (c->sends_f * c->send_f + c->sends_b * sr->c[(s + P - 1) % P].send_b);
    out->coll_exposed_s[COMM_PP_SEND] = out->part_s[STEP_PP];
    out->coll_total_s[COMM_PP_SEND] = fmax(pp, out->part_s[STEP_PP]);
    /* DP: the gradient buckets of every chunk and the parameter gather */
    double grads = 0, gather = 0;
    for (unsigned ch = 0; ch < v; ch++) {
        const dp_chain *dc = &sr->dc[ch * P + s];
        grads += dc->buckets * dc->bucket_s;
        gather += dc->buckets * dc->gather_bucket_s;
    }
    int kind = c->dp_kind == COMM_DP_ALLREDUCE ? COMM_DP_ALLREDUCE : COMM_DP_REDUCE_SCATTER;
    double dp_left = out->part_s[STEP_DP] - out->dp_sm_contention_s;
    double ag_exposed = fmin(sr->gather_exposed[s], dp_left);
    out->coll_exposed_s[COMM_DP_ALLGATHER] = ag_exposed;
    out->coll_total_s[COMM_DP_ALLGATHER] = fmax(gather, ag_exposed);
    out->coll_exposed_s[kind] = dp_left - ag_exposed;
    out->coll_total_s[kind] = fmax(grads, out->coll_exposed_s[kind]);
    for (int k = 0; k < COMM_KIND_COUNT; k++)
        out->coll_hidden_s[k] = out->coll_total_s[k] - out->coll_exposed_s[k];
}

int step_finish_profile(const step_run *sr, const workload *w, const compute_device *dev,
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
    const sched_task *tasks = sr->gantt ? sr->gantt : slowest->sched.tasks;
    size_t n_tasks = sr->gantt ? sr->n_gantt : slowest->sched.n_tasks;
    out->tasks = malloc((n_tasks ? n_tasks : 1) * sizeof *out->tasks);
    if (!out->tasks)
        return step_no_memory(sr->cx.err);
    memcpy(out->tasks, tasks, n_tasks * sizeof *out->tasks);
    out->n_tasks = n_tasks;
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
    attribute(sr, w, dev, out);
    out->tokens_per_s = w->tokens_per_iteration / iteration;
    out->model_flops_per_gpu_s = w->model_flops_iteration / (iteration * gpus);
    double peak = dev->peak_flops_per_s[p->precision];
    out->mfu = out->model_flops_per_gpu_s / peak;
    out->hfu = w->hardware_flops_iteration / (iteration * gpus) / peak;
    if (out->slowest_speed >= 1)
        out->slowest_gpu = UINT32_MAX;
    if (tier_totals(f, &sr->cx, out))
        return step_no_memory(sr->cx.err);
    return 0;
}
