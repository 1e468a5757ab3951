/* workload_bytes.c - a workload's communication per GPU per iteration by
 * collective kind (workload.h workload_kind_bytes): each comm op's bytes x
 * count x micro-batches, as step_comm.c sums them onto the links; and the
 * experts' share of the DP kinds (workload_kind_bytes_split), the ops
 * workload.c's dp_comm gives the expert-data-parallel group. */
#include "workload.h"

void workload_kind_bytes_split(const workload *w, double out[COMM_KIND_COUNT],
                               double expert[COMM_KIND_COUNT])
{
    for (int k = 0; k < COMM_KIND_COUNT; k++)
        out[k] = expert[k] = 0;
    unsigned dp_group = w->par.dp * w->par.cp;
    for (unsigned s = 0; s < w->n_stages; s++) {
        double sum[COMM_KIND_COUNT] = {0}, part[COMM_KIND_COUNT] = {0};
        const stage_workload *st = &w->stages[s];
        for (size_t i = 0; i < st->n_comm; i++) {
            const comm_op *op = &st->comm[i];
            if (op->kind < 0 || op->kind >= COMM_KIND_COUNT)
                continue;
            /* a PP send: the forward ones only (the gradients go back as many) */
            if (op->kind == COMM_PP_SEND && op->phase != PHASE_FORWARD)
                continue;
            double per = op->phase == PHASE_STEP ? 1.0 : (double)w->microbatches;
            sum[op->kind] += op->bytes * op->count * per;
            int dp_kind = op->kind == COMM_DP_ALLREDUCE || op->kind == COMM_DP_REDUCE_SCATTER ||
                          op->kind == COMM_DP_ALLGATHER;
            if (dp_kind && op->group != dp_group) /* dp_comm's expert_group = dp cp / ep */
                part[op->kind] += op->bytes * op->count * per;
        }
        for (int k = 0; k < COMM_KIND_COUNT; k++)
            if (sum[k] > out[k]) {
                out[k] = sum[k];
                expert[k] = part[k];
            }
    }
}

void workload_kind_bytes(const workload *w, double out[COMM_KIND_COUNT])
{
    double expert[COMM_KIND_COUNT];
    workload_kind_bytes_split(w, out, expert);
}
