/* test_step_packet.c - the concurrent iteration on the packet network
 * (step.h network="packet", models/step_net.c, packet_exec.h).
 *
 * Agreement bound where nothing contends (one replica, two stages, no DP,
 * rail-optimised NDR: every PP pair on its own NIC and rail). A send of b
 * bytes per pair is one coupled flow of the pairs on the flow net: b / B
 * after its plan latency. On the packet tier each pair's P = ceil(b / MTU)
 * packets cross h links store and forward: b / B + (h - 1) MTU / B + h d
 * (test_packet_coll's bound E with W = 1), so every send is slower by
 * delta = (h - 1) MTU / B + h d at most and never faster. Sends only delay
 * the tasks that wait for them, and a path through the schedule holds at
 * most the iteration's 2 m (P - 1) sends, so
 *     T_flow <= T_pkt <= T_flow + 2 m (P - 1) delta              (bound A)
 * with h = 4 (the longest route of a two-level tree), B the fabric link's
 * effective rate and d the hop latency.
 * Also: the packets the step counts before the run (packet_admit) are the
 * closed form 2 m (P - 1) x tp x ceil(b / MTU); every packet sent is
 * delivered; the same bytes per tier as the flow net (routes are minimal on
 * both); on a 3:1 leaf-spine with DP contention the packet iteration is
 * within 5 % of the flow iteration (measured 0.x %: docs/step.md); the same
 * output twice; refusals (the hop budget, the admission hook, a missing
 * configuration).
 *
 * Tier parameters as tests/models/test_packet_coll.c: MTU 4096 B
 * (components.md 5.7), 500 ns a hop (hardware.md 3.5, upper), PFC xon =
 * 2 BDP + 2 MTU, xoff = xon + 3 KiB, buffer = xoff + MTU + 2 BDP + 2 MTU
 * (components.md 5.2) with BDP at 50e9 B/s (hardware.md 3.1).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "step.h"

#include "step_fixture.h"

#define MTU 4096.0
#define D 500e-9
#define BDP (50e9 * D)
#define XON (2 * BDP + 2 * MTU)
#define XOFF (XON + 3072)
#define BUFFER (XOFF + MTU + 2 * BDP + 2 * MTU)

static pkt_config tier(enum pkt_technology t)
{
    pkt_config c;
    memset(&c, 0, sizeof c);
    c.mtu_bytes = MTU;
    c.technology = t;
    c.buffer_bytes = BUFFER;
    c.xoff_bytes = XOFF;
    c.xon_bytes = XON;
    c.hop_latency_s = D;
    return c;
}

static step_options options(int network, const pkt_config *c)
{
    step_options o;
    step_options_defaults(&o);
    o.concurrent = network > 0;
    o.packet = network == 2;
    o.packet_cfg = o.packet ? c : NULL;
    return o;
}

typedef struct admit_seen {
    double packets, hops;
    int calls, refuse;
} admit_seen;

static int admit(void *ctx, double packets, double hops, sim_error *err)
{
    admit_seen *a = ctx;
    a->packets = packets;
    a->hops = hops;
    a->calls++;
    return a->refuse ? sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "refused by the test") : 0;
}

/* the fabric's effective link rate for p's GPUs */
static double link_rate(fabric_config fc, const parallel_config *p)
{
    fc.gpus = p->tp * p->pp * p->dp * p->cp;
    fabric f;
    sim_error err;
    sim_error_clear(&err);
    CHECK(fabric_build(&fc, &f, &err) == 0);
    double b = f.link_bytes_per_s;
    fabric_free(&f);
    return b;
}

/* per-pair bytes of stage 0's PP send */
static double pp_bytes(const model_arch *m, const parallel_config *p)
{
    workload w;
    sim_error err;
    sim_error_clear(&err);
    CHECK(workload_build(m, p, p->tp * p->pp * p->dp * p->cp, &w, &err) == 0);
    double b = 0;
    for (size_t i = 0; i < w.stages[0].n_comm; i++)
        if (w.stages[0].comm[i].kind == COMM_PP_SEND)
            b = w.stages[0].comm[i].bytes;
    workload_free(&w);
    return b;
}

static void check_same_bytes(const step_profile *a, const step_profile *b)
{
    for (int t = 0; t < STEP_TIERS; t++)
        CHECK_REL(b->tier_bytes[t] + 1, a->tier_bytes[t] + 1, 1e-6);
}

/* bound A, the closed-form packet count, conservation */
static void test_no_contention(void)
{
    model_arch m = model();
    parallel_config p = par(8, 2, 1, 16);
    pkt_config c = tier(PKT_IB);
    admit_seen seen = {0};
    step_options con = options(1, NULL), pk = options(2, &c);
    pk.packet_admit = admit;
    pk.packet_admit_ctx = &seen;
    step_profile a, b;
    CHECK(run(&m, p, rail_ndr(0), 0, &con, &a) == 0);
    CHECK(run(&m, p, rail_ndr(0), 0, &pk, &b) == 0);
    double B = link_rate(rail_ndr(0), &p), bytes = pp_bytes(&m, &p);
    unsigned mb = 16, sends = 2 * mb * (p.pp - 1);
    double delta = 3 * MTU / B + 4 * D;
    printf("no contention: flow %.9f s, packet %.9f s (+%.3g s; bound %u x %.3g s = %.3g s); "
           "%.0f B a pair\n", a.iteration_s, b.iteration_s, b.iteration_s - a.iteration_s,
           sends, delta, sends * delta, bytes);
    CHECK(bytes > MTU);
    CHECK(b.iteration_s >= a.iteration_s * (1 - 1e-12));
    CHECK(b.iteration_s <= a.iteration_s + sends * delta);
    CHECK(b.part_s[STEP_PP] > 0);
    CHECK_INT_EQ(seen.calls, 1);
    double packets = (double)sends * p.tp * ceil(bytes / MTU);
    CHECK(seen.packets == packets);
    CHECK(seen.hops == 2 * packets);
    CHECK(b.is_packet && !a.is_packet);
    CHECK(b.packet_stats.packets_delivered == (uint64_t)packets);
    CHECK(b.packet_stats.packets_injected == b.packet_stats.packets_delivered);
    CHECK(b.packet_stats.bytes_delivered == b.packet_stats.bytes_sent);
    CHECK(b.packet_stats.packet_hops >= 2 * (uint64_t)packets);
    CHECK(b.packet_plans == sends);
    CHECK(b.n_hot == 0 && b.n_flows == 0 && b.fold_replicas == 0);
    check_same_bytes(&a, &b);
    check_conservation(&b);
    step_profile_free(&a);
    step_profile_free(&b);
}

/* a small model: 8 layers of 1,024, sequence 1,024, so DP moves a few
 * million packet-hops */
static model_arch small_model(void)
{
    model_arch m = model();
    m.layers = 8;
    m.hidden = 1024;
    m.heads = 8;
    m.kv_heads = 8;
    m.ffn_hidden = 4096;
    m.seq_len = 1024;
    return m;
}

/* DP reductions and PP sends contend on a 3:1 RoCE leaf-spine (ECMP):
 * within 5 % of the flow net, the same bytes per tier, the same output
 * twice (iteration, every link's bytes, every task, the events) */
static void test_contention(void)
{
    model_arch m = small_model();
    parallel_config p = par(8, 2, 4, 32);
    pkt_config c = tier(PKT_ROCE);
    step_options con = options(1, NULL), pk = options(2, &c);
    step_profile a, b, b2;
    CHECK(run(&m, p, roce_leafspine(), 0, &con, &a) == 0);
    CHECK(run(&m, p, roce_leafspine(), 0, &pk, &b) == 0);
    CHECK(run(&m, p, roce_leafspine(), 0, &pk, &b2) == 0);
    printf("leaf-spine 3:1, TP8 PP2 DP4: flow %.9f s (dp %.6f), packet %.9f s (dp %.6f): "
           "packet / flow %.5f; %llu packet-hops, %llu pauses, %.3f s wall\n", a.iteration_s,
           a.part_s[STEP_DP], b.iteration_s, b.part_s[STEP_DP], b.iteration_s / a.iteration_s,
           (unsigned long long)b.packet_stats.packet_hops,
           (unsigned long long)b.packet_stats.pauses, b.packet_wall_s);
    CHECK(a.part_s[STEP_DP] > 0 && b.part_s[STEP_DP] > 0);
    CHECK(fabs(b.iteration_s / a.iteration_s - 1) < 0.05);
    check_same_bytes(&a, &b);
    check_conservation(&b);
    CHECK(b.n_bins > 0);
    CHECK(b.packet_stats.packets_delivered == b.packet_stats.packets_injected);
    CHECK(b.iteration_s == b2.iteration_s);
    CHECK(!memcmp(b.link_bytes, b2.link_bytes, b.n_links * sizeof *b.link_bytes));
    CHECK(!memcmp(b.tasks, b2.tasks, b.n_tasks * sizeof *b.tasks));
    CHECK(b.packet_stats.events == b2.packet_stats.events);
    step_profile_free(&a);
    step_profile_free(&b);
    step_profile_free(&b2);
}

/* refused: the admission hook says no; the hop budget; the packet network
 * without its configuration or outside the concurrent iteration */
static void test_refusal(void)
{
    model_arch m = model();
    parallel_config p = par(8, 2, 1, 16);
    pkt_config c = tier(PKT_IB);
    admit_seen seen = {.refuse = 1};
    step_options o = options(2, &c);
    o.packet_admit = admit;
    o.packet_admit_ctx = &seen;
    step_profile q;
    fprintf(stderr, "expected refusals follow:\n");
    CHECK(run(&m, p, rail_ndr(0), 0, &o, &q) != 0);
    CHECK_INT_EQ(seen.calls, 1);
    o = options(2, NULL);
    o.packet = 1;
    CHECK(run(&m, p, rail_ndr(0), 0, &o, &q) != 0);
    o = options(0, &c);
    o.packet = 1;
    o.packet_cfg = &c;
    CHECK(run(&m, p, rail_ndr(0), 0, &o, &q) != 0);
    /* 70B-like over 16 replicas: DP alone is some 2e9 packet-hops */
    model_arch big = *scn_catalog_model(cat, "megatron-gpt-70b");
    o = options(2, &c);
    CHECK(run(&big, par(8, 2, 16, 256), roce_leafspine(), 0, &o, &q) != 0);
}

int main(void)
{
    if (fixture_init())
        return 1;
    test_no_contention();
    test_contention();
    test_refusal();
    scn_catalog_free(cat);
    return check_report();
}
