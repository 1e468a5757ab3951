/* test_step_stagecoll.c - TP, CP and EP collectives as flows on the
 * concurrent iteration's shared net (models/step_stagecoll.c): equal to the
 * isolated iteration where nothing contends, exact flow counts and bytes,
 * contention charged to the collective's own part, an expert group held
 * together by its all-to-alls, determinism, and no folding. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "step.h"

#include "step_fixture.h"

/* the fixture's GPT with 8 experts of the dense FFN's width, 2 per token,
 * in every layer */
static model_arch moe(void)
{
    model_arch m = model();
    m.experts = 8;
    m.top_k = 2;
    m.moe_ffn_hidden = m.ffn_hidden;
    return m;
}

static step_options concurrent(int on)
{
    step_options o;
    step_options_defaults(&o);
    o.concurrent = on;
    o.overlap_grad_reduce = 0; /* the DP buckets after the backwards: nothing meets them */
    return o;
}

static void check_same(const step_profile *a, const step_profile *b, double tol)
{
    CHECK_REL(b->iteration_s, a->iteration_s, tol);
    for (int k = 0; k < STEP_PART_COUNT; k++)
        CHECK_NEAR(b->part_s[k], a->part_s[k], tol * a->iteration_s);
    for (int t = 0; t < STEP_TIERS; t++) /* every group's bytes, from the net or the pricing */
        CHECK_REL(b->tier_bytes[t] + 1, a->tier_bytes[t] + 1, 1e-9);
}

/* bytes and count of the logged flows of one kind */
static double kind_bytes(const step_profile *q, int kind, size_t *n)
{
    double bytes = 0;
    *n = 0;
    for (size_t i = 0; i < q->n_flows; i++)
        if (q->flows[i].kind == kind) {
            bytes += q->flows[i].bytes;
            ++*n;
            CHECK(q->flows[i].end_s >= q->flows[i].start_s);
        }
    return bytes;
}

/* EP 4 over four nodes (TP 8 fills a node), one stage, the DP buckets after
 * the backwards: each tensor rank's all-to-all rides its own rail, so
 * nothing contends and the concurrent iteration is the isolated one. The
 * all-to-alls are flows: 64 instances a micro-batch in each direction (two
 * per layer), 16 segments of 4 each a task, every one a coupled flow per
 * rank (netcoll_direct.c) for each of the 8 tensor ranks: 2 x m x 16 x 8 x
 * 4 flows, (ep - 1) / ep of the all-to-all's bytes each rank. */
static void test_ep_alone(void)
{
    model_arch m = moe();
    parallel_config p = par(8, 1, 4, 16);
    p.ep = 4;
    step_options iso = concurrent(0), con = concurrent(1);
    con.flow_log = 1000000;
    step_profile a, b;
    CHECK(run(&m, p, rail_ndr(0), 0, &iso, &a) == 0);
    CHECK(run(&m, p, rail_ndr(0), 0, &con, &b) == 0);
    printf("EP alone: isolated %.9f s, concurrent %.9f s, EP %.6f s\n", a.iteration_s,
           b.iteration_s, b.part_s[STEP_EP]);
    CHECK(a.part_s[STEP_EP] > 0);
    check_same(&a, &b, 1e-9);
    check_conservation(&b);
    size_t n;
    double bytes = kind_bytes(&b, STEP_FLOW_EP, &n);
    unsigned mb = 16 / 4;
    CHECK_INT_EQ(n, 2 * (size_t)mb * 16 * 8 * 4);
    CHECK(!b.flows_truncated);
    /* one all-to-all: the micro-batch's tokens x top-k x hidden x 2 B (BF16) */
    double a2a = (double)m.seq_len * m.top_k * m.hidden * 2;
    CHECK_REL(bytes, 2.0 * mb * 2 * m.layers * 8 * a2a * (4 - 1), 1e-9);
    CHECK(b.fold_note && strstr(b.fold_note, "EP"));
    step_profile_free(&a);
    step_profile_free(&b);
}

/* CP 2 over two nodes (its K/V ring) and TP 16 over two nodes: flows, and
 * on a fabric where nothing else runs, the isolated iteration */
static void test_cp_tp_alone(void)
{
    model_arch m = model();
    step_options iso = concurrent(0), con = concurrent(1);
    step_profile a, b;
    parallel_config p = par(8, 1, 2, 4);
    p.cp = 2;
    CHECK(run(&m, p, rail_ndr(0), 0, &iso, &a) == 0);
    CHECK(run(&m, p, rail_ndr(0), 0, &con, &b) == 0);
    printf("CP alone: isolated %.9f s, concurrent %.9f s\n", a.iteration_s, b.iteration_s);
    CHECK(a.coll_total_s[COMM_CP_SENDRECV] > 0);
    check_same(&a, &b, 1e-9);
    check_conservation(&b);
    size_t n;
    CHECK(kind_bytes(&b, STEP_FLOW_CP, &n) > 0 && n > 0);
    step_profile_free(&a);
    step_profile_free(&b);
    p = par(16, 1, 1, 2);
    CHECK(run(&m, p, rail_ndr(0), 0, &iso, &a) == 0);
    CHECK(run(&m, p, rail_ndr(0), 0, &con, &b) == 0);
    printf("TP 16 alone: isolated %.9f s, concurrent %.9f s\n", a.iteration_s, b.iteration_s);
    CHECK(a.part_s[STEP_TP] > 0);
    check_same(&a, &b, 1e-9);
    check_conservation(&b);
    CHECK(kind_bytes(&b, STEP_FLOW_TP, &n) > 0 && n > 0);
    step_profile_free(&a);
    step_profile_free(&b);
    /* TP 8 inside a node: no TP flows on the net (and folding may run) */
    p = par(8, 2, 2, 4);
    CHECK(run(&m, p, rail_ndr(0), 0, &con, &b) == 0);
    CHECK(kind_bytes(&b, STEP_FLOW_TP, &n) == 0 && n == 0);
    CHECK(b.fold_note && !strstr(b.fold_note, "EP"));
    step_profile_free(&b);
}

/* EP 8 and DP buckets during the backwards, two stages, on a 3:1
 * oversubscribed RoCE leaf-spine with ECMP: the all-to-alls meet the
 * reductions and the sends. The concurrent iteration is never faster than
 * the isolated one, what contention adds to the all-to-alls is EP's (the
 * parts still add up), the links show EP flows overlapping other traffic,
 * and two runs agree bit for bit. */
static void test_ep_contention(void)
{
    model_arch m = moe();
    parallel_config p = par(8, 2, 8, 64);
    p.ep = 8;
    fabric_config roce = roce_leafspine();
    step_options iso = concurrent(0), con = concurrent(1);
    iso.overlap_grad_reduce = con.overlap_grad_reduce = 1;
    step_profile a, b, c;
    CHECK(run(&m, p, roce, 0, &iso, &a) == 0);
    CHECK(run(&m, p, roce, 0, &con, &b) == 0);
    CHECK(run(&m, p, roce, 0, &con, &c) == 0);
    printf("EP with DP on a 3:1 leaf-spine: isolated %.9f s (EP %.6f), concurrent %.9f s "
           "(EP %.6f)\n", a.iteration_s, a.part_s[STEP_EP], b.iteration_s, b.part_s[STEP_EP]);
    CHECK(b.iteration_s >= a.iteration_s * (1 - 1e-12));
    CHECK(b.part_s[STEP_EP] > a.part_s[STEP_EP] * (1 + 1e-6));
    check_conservation(&b);
    CHECK(memcmp(&b.iteration_s, &c.iteration_s, sizeof b.iteration_s) == 0);
    CHECK(memcmp(b.part_s, c.part_s, sizeof b.part_s) == 0);
    int met = 0;
    for (unsigned k = 0; k < b.n_hot; k++)
        met |= b.hot[k].coll_s > 0 && b.hot[k].both_s > 0;
    CHECK(met);
    step_profile_free(&a);
    step_profile_free(&b);
    step_profile_free(&c);
}

/* One slow GPU in replica 0: alone, the other replicas finish their
 * backwards early and wait for it at the gradient reduction; with the
 * all-to-alls synchronising the expert group (ep = dp), they keep its pace
 * and hardly wait there. */
static void test_ep_lockstep(void)
{
    model_arch m = moe();
    parallel_config p = par(8, 1, 4, 16);
    p.ep = 4;
    double *speed = malloc(32 * sizeof *speed);
    CHECK(speed != NULL);
    if (!speed)
        return;
    for (int i = 0; i < 32; i++)
        speed[i] = 1;
    speed[3] = 0.5;
    step_options iso = concurrent(0), con = concurrent(1);
    iso.gpu_speed = con.gpu_speed = speed;
    iso.n_gpu_speed = con.n_gpu_speed = 32;
    step_profile a, b;
    CHECK(run(&m, p, rail_ndr(0), 0, &iso, &a) == 0);
    CHECK(run(&m, p, rail_ndr(0), 0, &con, &b) == 0);
    printf("EP lock-step: wait at the reduction isolated %.6f s, concurrent %.6f s\n", a.wait_s,
           b.wait_s);
    CHECK(a.wait_s > 0);
    CHECK(b.wait_s < 0.05 * a.wait_s);
    CHECK(b.iteration_s >= a.iteration_s * (1 - 1e-9));
    step_profile_free(&a);
    step_profile_free(&b);
    free(speed);
}

int main(void)
{
    if (fixture_init())
        return 1;
    test_ep_alone();
    test_cp_tp_alone();
    test_ep_contention();
    test_ep_lockstep();
    scn_catalog_free(cat);
    return check_report();
}
