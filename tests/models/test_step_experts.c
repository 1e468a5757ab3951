/* test_step_experts.c - the step tier reduces the experts' gradients in
 * their expert-data-parallel groups (models/step_comm.c step_dp_append, as
 * workload.c's dp_comm sizes them): one DP bucket's plan on 8 GPUs of one
 * leaf, TP 1 / 2, CP 1 / 2, EP 2 / 4:
 *  - is exactly the plan of these collectives appended by hand, per tensor
 *    rank: the dense part (1 - f) x S over the dp x cp ranks in the order
 *    d, then c; then for each expert shard n the experts' part f x S over
 *    the replicas d = n, n + ep, ... (every context rank of each): the same
 *    phases, connections (bytes, routes' ends) and dependencies;
 *  - with f = 0, or ep 1, or ep = dp x cp (one replica per expert group:
 *    nothing to reduce apart) and with dp not a multiple of ep, is the
 *    single whole-group collective of S (today's plan, bit for bit).
 * It fails when the experts' part is left in the whole group, when the
 * groups are consecutive replicas instead of strided ones, or when the
 * dense bytes are not reduced by the experts' share. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "fabric.h"
#include "leaf_fabric.h"
#include "netcoll.h"
#include "step.h"
#include "step_internal.h"

#define S_BYTES 1e9

static int same_plan(const nc_plan *a, const nc_plan *b)
{
    if (a->n_phases != b->n_phases || a->n_conns != b->n_conns || a->n_deps != b->n_deps ||
        a->n_rank != b->n_rank)
        return 0;
    for (uint32_t i = 0; i < a->n_phases; i++)
        if (a->phase[i].n_conn != b->phase[i].n_conn || a->phase[i].bytes != b->phase[i].bytes)
            return 0;
    return (!a->n_conns || !memcmp(a->conn, b->conn, a->n_conns * sizeof *a->conn)) &&
           (!a->n_deps || !memcmp(a->deps, b->deps, a->n_deps * sizeof *a->deps)) &&
           (!a->n_rank || !memcmp(a->rank, b->rank, a->n_rank * sizeof *a->rank));
}

/* the plan built by hand: dense over all (d, c), experts over strided groups */
static int by_hand(const fabric *f, const parallel_config *p, double frac, int split,
                   nc_plan *out, sim_error *err)
{
    uint32_t ranks[64];
    memset(out, 0, sizeof *out);
    for (unsigned t = 0; t < p->tp; t++) {
        unsigned k = 0;
        for (unsigned d = 0; d < p->dp; d++)
            for (unsigned c = 0; c < p->cp; c++)
                ranks[k++] = step_gpu(p, 0, d, c, t);
        if (nc_plan_append(out, &f->nc, NC_ALLREDUCE, NC_ALGO_AUTO, ranks, k,
                           split ? S_BYTES * (1 - frac) : S_BYTES, err))
            return -1;
        for (unsigned n = 0; split && n < p->ep; n++) {
            k = 0;
            for (unsigned d = n; d < p->dp; d += p->ep)
                for (unsigned c = 0; c < p->cp; c++)
                    ranks[k++] = step_gpu(p, 0, d, c, t);
            if (nc_plan_append(out, &f->nc, NC_ALLREDUCE, NC_ALGO_AUTO, ranks, k, S_BYTES * frac,
                               err))
                return -1;
        }
    }
    return 0;
}

static void check_layout(const fabric *f, unsigned tp, unsigned cp, unsigned ep, unsigned dp,
                         double frac, int split)
{
    parallel_config p = {.tp = tp, .pp = 1, .vpp = 1, .cp = cp, .ep = ep, .dp = dp,
                         .micro_batch = 1, .global_batch = 8, .precision = PREC_BF16};
    sim_error err;
    sim_error_clear(&err);
    uint32_t ranks[64];
    nc_plan got, want;
    memset(&got, 0, sizeof got);
    CHECK(step_dp_append(&got, &f->nc, &p, 0, NC_ALLREDUCE, S_BYTES, frac, ranks, &err) == 0);
    CHECK(by_hand(f, &p, frac, split, &want, &err) == 0);
    int same = same_plan(&got, &want);
    if (!same)
        fprintf(stderr, "tp %u cp %u ep %u dp %u frac %g split %d: plans differ (%u/%u phases)\n",
                tp, cp, ep, dp, frac, split, got.n_phases, want.n_phases);
    CHECK(same);
    if (split) { /* and not the whole-group plan */
        nc_plan whole;
        CHECK(by_hand(f, &p, frac, 0, &whole, &err) == 0);
        CHECK(!same_plan(&got, &whole));
        nc_plan_free(&whole);
    }
    nc_plan_free(&got);
    nc_plan_free(&want);
}

int main(void)
{
    fabric f;
    if (make_leaf_fabric(&f, 8, 16, 8, 50e9)) {
        CHECK(0);
        return check_report();
    }
    check_layout(&f, 1, 1, 2, 8, 0.25, 1); /* groups {0,2,4,6}, {1,3,5,7} */
    check_layout(&f, 1, 1, 4, 8, 0.6, 1);  /* groups of 2 */
    check_layout(&f, 2, 1, 2, 4, 0.25, 1); /* per tensor rank */
    check_layout(&f, 1, 2, 2, 4, 0.5, 1);  /* every context rank of a replica */
    check_layout(&f, 1, 1, 2, 8, 0, 0);    /* no experts' part: today's plan */
    check_layout(&f, 1, 1, 1, 8, 0.25, 0); /* ep 1 */
    check_layout(&f, 1, 1, 8, 8, 0.25, 0); /* one replica per expert group */
    check_layout(&f, 1, 1, 3, 8, 0.25, 0); /* ep does not divide dp */
    fabric_free(&f);
    return check_report();
}
