/* test_cluster_expert.c - the experts' gradients and the context-parallel
 * exchange of a class given by a model (docs/cluster.md "Traffic from the
 * step tier"), closed forms:
 *  - workload_kind_bytes_split on a 4-layer MoE of 4 experts at ep 2, dp 4:
 *    the experts' part of the DP all-reduce is L x (E / ep) x the expert's
 *    parameters x r (the reduction precision's bytes), the rest the dense
 *    parameters x r, and the total what workload_kind_bytes gives (`dcsim
 *    step --json` comm_bytes); with ZeRO 1 the reduce-scatter and the
 *    all-gather split the same way; ep 1 and ep = dp (no expert group of
 *    two) have no experts' part;
 *  - on one leaf of 4 hosts (one GPU each, no scale-up, latencies 0, so a
 *    ring all-reduce of n ranks takes 2 (n - 1) / n S / B): a 4-GPU job of
 *    ep 2 reduces S in its edp-groups {0, 2} and {1, 3} in S / B, where the
 *    whole dp-group's ring takes 1.5 S / B (the form before the fix);
 *  - cp 2 on 4 GPUs (dp 2): the cp-groups {0, 1} and {2, 3} exchange S each
 *    way in S / B; the dp-group holds dp x cp = 4 ranks (1.5 S / B); 6 GPUs
 *    of cp 4 are refused naming tp x cp x pp;
 *  - pp 2 sends S between the stages in S / B; at vpp 2 the last stage also
 *    sends (vpp - 1) / vpp S to the first on the same pairs: 1.5 S / B.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "cluster.h"
#include "cluster_interf.h"
#include "fabric.h"
#include "leaf_fabric.h"
#include "model.h"
#include "workload.h"

#define B_LINK 50e9 /* the test's own link, bytes/s, efficiency 1 */
#define S_BYTES 1e9

static model_arch tiny_moe(void)
{
    model_arch m = {.name = "tiny-moe", .layers = 4, .hidden = 64, .heads = 4, .kv_heads = 4,
                    .head_dim = 16, .ffn_hidden = 256, .vocab = 1000, .seq_len = 32,
                    .activation = ACT_GELU, .experts = 4, .top_k = 1, .moe_ffn_hidden = 128};
    return m;
}

static parallel_config layout(unsigned ep, unsigned dp, int zero)
{
    parallel_config p = {.tp = 1, .pp = 1, .vpp = 1, .cp = 1, .ep = ep, .dp = dp,
                         .micro_batch = 1, .global_batch = 8, .precision = PREC_BF16,
                         .zero_stage = zero};
    return p;
}

/* build, split; the stage's dense and expert parameters. 0 or -1 */
static int split(unsigned ep, unsigned dp, int zero, double out[COMM_KIND_COUNT],
                 double expert[COMM_KIND_COUNT], double whole[COMM_KIND_COUNT], double *dense,
                 double *experts)
{
    model_arch m = tiny_moe();
    parallel_config p = layout(ep, dp, zero);
    workload w;
    sim_error e;
    sim_error_clear(&e);
    if (workload_build(&m, &p, dp, &w, &e)) {
        fprintf(stderr, "workload: %s\n", e.msg);
        return -1;
    }
    workload_kind_bytes_split(&w, out, expert);
    workload_kind_bytes(&w, whole);
    *dense = w.stages[0].params - w.stages[0].expert_params;
    *experts = w.stages[0].expert_params;
    workload_free(&w);
    return 0;
}

static void test_split(void)
{
    model_arch m = tiny_moe();
    parallel_config p = layout(2, 4, 0);
    double r = workload_grad_reduce_bytes(&p), c = workload_comm_bytes(&p);
    double out[COMM_KIND_COUNT], expert[COMM_KIND_COUNT], whole[COMM_KIND_COUNT], dense, ex;
    CHECK(split(2, 4, 0, out, expert, whole, &dense, &ex) == 0);
    double closed = 4.0 * (4 / 2) * model_params_mlp_expert(&m) * r; /* L E/ep P_e r */
    CHECK(ex > 0 && expert[COMM_DP_ALLREDUCE] == ex * r);
    CHECK_REL(expert[COMM_DP_ALLREDUCE], closed, 1e-12);
    CHECK(out[COMM_DP_ALLREDUCE] == dense * r + ex * r);
    CHECK(memcmp(out, whole, sizeof out) == 0);
    for (int k = 0; k < COMM_KIND_COUNT; k++)
        CHECK(k == COMM_DP_ALLREDUCE || expert[k] == 0);
    /* ZeRO 1: gradients reduce-scattered, parameters all-gathered, each split */
    CHECK(split(2, 4, 1, out, expert, whole, &dense, &ex) == 0);
    CHECK(out[COMM_DP_ALLREDUCE] == 0 && expert[COMM_DP_ALLREDUCE] == 0);
    CHECK_REL(expert[COMM_DP_REDUCE_SCATTER], closed, 1e-12);
    CHECK(expert[COMM_DP_ALLGATHER] == ex * c);
    CHECK(out[COMM_DP_REDUCE_SCATTER] == dense * r + ex * r);
    CHECK(memcmp(out, whole, sizeof out) == 0);
    /* ep 1: the experts reduce with the rest, over the dp-group */
    CHECK(split(1, 4, 0, out, expert, whole, &dense, &ex) == 0);
    CHECK(expert[COMM_DP_ALLREDUCE] == 0 && out[COMM_DP_ALLREDUCE] == (dense + ex) * r);
    /* ep = dp = 4: each GPU holds experts no other does; nothing to reduce */
    CHECK(split(4, 4, 0, out, expert, whole, &dense, &ex) == 0);
    CHECK(expert[COMM_DP_ALLREDUCE] == 0 && out[COMM_DP_ALLREDUCE] == dense * r);
}

static int make_fabric(fabric *f, unsigned gpus)
{
    if (make_leaf_fabric(f, gpus, 8, 4, B_LINK))
        return -1;
    f->nc.base_latency_s = f->nc.intra_step_latency_s = f->nc.inter_step_latency_s = 0;
    f->nc.intra_wire_latency_s = f->nc.inter_wire_latency_s = 0;
    return 0;
}

/* one job of all 4 GPUs with one row of S in group g; its isolated
 * communication seconds (-1 on an error) */
static double alone_pp(const fabric *f, uint32_t pp, uint32_t vpp, uint32_t ep, uint32_t cp,
                       int collective, int group)
{
    cluster_traffic_table t;
    memset(&t, 0, sizeof t);
    t.n = 1;
    t.from_gpus[0] = 1;
    t.t[0] = (cluster_traffic){.compute_s = 0.01, .pp = pp, .vpp = vpp, .ep = ep, .cp = cp,
                               .n_colls = 1};
    t.t[0].coll[0] = (cluster_coll){collective, group, S_BYTES};
    cluster_job_spec j[] = {{0, 4, 3600, 0}};
    cluster_config c;
    memset(&c, 0, sizeof c);
    c.gpus = c.leaf_gpus = c.su_gpus = 4;
    c.node_gpus = 1;
    c.sched = cluster_sched_find("fifo");
    c.placer = cluster_placer_find("first-fit");
    c.jobs = j;
    c.n_jobs = 1;
    c.seed = 1;
    sim_error err;
    sim_error_clear(&err);
    cluster_interf *x = cluster_interf_create(f, 4, &t, 16, &err);
    if (!x)
        return -1;
    c.pacer = cluster_interf_pacer(x);
    cluster_result r;
    double comp = 0, comm = -1;
    if (!cluster_simulate(&c, &r, &err)) {
        cluster_interf_job(x, 0, &comp, &comm);
        cluster_result_free(&r);
    } else {
        fprintf(stderr, "cluster: %s\n", err.msg);
    }
    cluster_interf_destroy(x);
    return comm;
}

static double alone(const fabric *f, uint32_t ep, uint32_t cp, int collective, int group)
{
    return alone_pp(f, 0, 0, ep, cp, collective, group);
}

static void test_groups(void)
{
    fabric f;
    CHECK(make_fabric(&f, 4) == 0);
    double one = S_BYTES / B_LINK;
    CHECK_REL(alone(&f, 2, 0, NC_ALLREDUCE, CLUSTER_GROUP_EDP), one, 1e-12);
    CHECK_REL(alone(&f, 2, 0, NC_ALLREDUCE, CLUSTER_GROUP_DP), 1.5 * one, 1e-12);
    CHECK(alone(&f, 4, 0, NC_ALLREDUCE, CLUSTER_GROUP_EDP) == 0); /* groups of 1 */
    CHECK_REL(alone(&f, 0, 2, NC_SENDRECV, CLUSTER_GROUP_CP), one, 1e-12);
    CHECK_REL(alone(&f, 0, 2, NC_ALLREDUCE, CLUSTER_GROUP_DP), 1.5 * one, 1e-12);
    /* pp 2: sends 0 <-> 2 and 1 <-> 3 of S, S / B; vpp 2 adds the wrap from
     * the last stage to the first, S / 2 on the same pairs: 1.5 S / B */
    CHECK_REL(alone_pp(&f, 2, 0, 0, 0, NC_SENDRECV, CLUSTER_GROUP_PP), one, 1e-12);
    CHECK_REL(alone_pp(&f, 2, 2, 0, 0, NC_SENDRECV, CLUSTER_GROUP_PP), 1.5 * one, 1e-12);
    fabric_free(&f);
    cluster_traffic t;
    memset(&t, 0, sizeof t);
    t.cp = 4;
    char why[160];
    CHECK(cluster_layout_check(&t, 8, why, sizeof why) == 0);
    CHECK(cluster_layout_check(&t, 6, why, sizeof why) == -1);
    CHECK(strstr(why, "6 GPUs are not a whole number of tp x cp x pp = 1 x 4 x 1") != NULL);
    CHECK(strcmp(cluster_group_name(CLUSTER_GROUP_EDP), "edp") == 0);
    CHECK(strcmp(cluster_group_name(CLUSTER_GROUP_CP), "cp") == 0);
}

int main(void)
{
    test_split();
    test_groups();
    return check_report();
}
