/* test_packet_sharp.c - SHARP aggregation at switches on the packet tier
 * (models/packet_sharp.h).
 *
 * Closed form. One rank per host, every link at B, hop latency d, P packets
 * of one MTU m each (tau = m / B), a tree of H links from a rank up to the
 * root (so H down). Every child of a switch sends packet i at the same
 * instant (the tree is symmetric), so a switch never waits for a sibling:
 * the stream is a pipeline of 2H store-and-forward stages, each tau + d,
 * with the host link busy P tau:
 *     T = (P + 2H - 1) tau + 2H d                                   (1)
 * (credits do not throttle: the buffer below holds 2 BDP + 5 MTU and more).
 * With a reduction rate R = B / 2 a switch emits packet i no sooner than
 * m / R = 2 tau after packet i - 1; the first aggregating switch sets the
 * pace, the ones above see packets 2 tau apart already:
 *     T_R = tau + d + 2 (P - 1) tau + (2H - 1)(tau + d)
 *         = (2P + 2H - 2) tau + 2H d                                (2)
 * Flow tier (nc_simulate on the same in-network plan, latencies 0): the
 * coupled phase runs at min(B, R): T_flow = P m / min(B, R), so
 *     T - T_flow = (2H - 1) tau + 2H d        (R = B)
 *     T_R - T_flow = (2H - 2) tau + 2H d      (R = B / 2)
 * exactly; the relative gap is E / T_flow, asserted <= 5 % at 4 MiB on
 * both fabrics (H <= 3: E <= 5 tau + 6 d = 3.41 us against 83.9 us).
 * Conservation: every rank receives P packets, S bytes; switches see
 * P x (tree edges) packets from children; every port ends empty.
 * SHARP vs ring (same packet tier, 16 ranks): the ring moves 2 (n-1)/n S
 * per rank, so T_ring >= 2 (n-1)/n S / B (the flow tier's bound, which the
 * packet tier never beats: test_packet_coll.c), and by (1)
 *     T_sharp / T_ring <= n / (2 (n - 1)) x (1 + E B / S).
 * Numbers as test_packet_coll.c: MTU 4096 B (components.md 5.7), 50e9 B/s
 * (hardware.md 3.1), 500 ns a hop (hardware.md 3.5).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "engine.h"
#include "fattree.h"
#include "netcoll.h"
#include "packet.h"
#include "packet_coll.h"
#include "packet_sharp.h"
#include "routing.h"

#define MTU 4096.0
#define B 50e9
#define D 500e-9
#define TAU (MTU / B)
#define BDP (B * D)
#define XON (2 * BDP + 2 * MTU)
#define XOFF (XON + 3072)
#define BUFFER (XOFF + MTU + 2 * BDP + 2 * MTU)
#define MIB 1048576.0

typedef struct rig {
    topo_graph g;
    topo_router *r;
    nc_fabric f;
    sim_engine *eng;
    pkt_net *net;
    int n_done;
    double done_s;
} rig;

static pkt_config config(enum pkt_technology t)
{
    pkt_config c = {.mtu_bytes = MTU, .technology = t, .buffer_bytes = BUFFER, .xoff_bytes = XOFF,
                    .xon_bytes = XON, .hop_latency_s = D};
    return c;
}

/* kind 0: k = 4 fat-tree (16 hosts, 4 pods); 1: leaf-spine, 4 leaves of 4
 * hosts, 4 spines */
static int rig_open(rig *x, int kind, enum pkt_technology tech)
{
    char why[256];
    memset(x, 0, sizeof *x);
    int rc = kind == 0 ? topo_fattree_kary(4, B, &x->g, why, sizeof why)
                       : topo_leafspine(8, 4, 4, B, &x->g, why, sizeof why);
    if (rc) {
        fprintf(stderr, "topology: %s\n", why);
        return -1;
    }
    topo_route_config rc_cfg = {TOPO_BALANCE_ECMP, TOPO_PATH_MINIMAL, 1, 7};
    x->r = topo_router_create(&x->g, &rc_cfg, why, sizeof why);
    nc_fabric_defaults(&x->f);
    x->f.g = &x->g;
    x->f.router = x->r;
    x->f.base_latency_s = x->f.intra_step_latency_s = x->f.inter_step_latency_s = 0;
    x->f.fabric_reduction_bytes_per_s = B;
    pkt_config c = config(tech);
    x->eng = sim_engine_create();
    x->net = x->r ? pkt_net_create(x->eng, &x->g, x->r, &c, why, sizeof why) : NULL;
    if (!x->net)
        fprintf(stderr, "pkt_net_create: %s\n", why);
    return x->net ? 0 : -1;
}

static void rig_close(rig *x)
{
    pkt_net_destroy(x->net);
    sim_engine_destroy(x->eng);
    topo_router_destroy(x->r);
    topo_graph_fini(&x->g);
}

static void on_done(void *ctx, uint64_t tag)
{
    rig *x = ctx;
    x->n_done++;
    x->done_s = sim_now(x->eng);
    CHECK_INT_EQ(tag, 42);
}

/* one all-reduce of `bytes` over r[0..n) at rate R on a fresh rig: its
 * time, with conservation checked; -1 on failure */
static double run_one(int kind, enum pkt_technology tech, const uint32_t *r, unsigned n,
                      double bytes, double rate, uint64_t *digest, pkt_sharp_tree_info *info)
{
    rig x;
    char why[256] = "";
    if (rig_open(&x, kind, tech)) {
        CHECK(0);
        rig_close(&x);
        return -1;
    }
    CHECK_INT_EQ(pkt_sharp_tree(&x.g, r, n, info, why, sizeof why), 0);
    int rc = pkt_sharp_allreduce(x.net, r, n, bytes, rate, on_done, &x, 42);
    CHECK_INT_EQ(rc, 0);
    if (rc)
        fprintf(stderr, "pkt_sharp_allreduce: %s\n", pkt_net_error(x.net));
    sim_run(x.eng, INFINITY);
    CHECK_INT_EQ(x.n_done, 1);
    const pkt_net_stats *st = pkt_net_get_stats(x.net);
    uint64_t np = (uint64_t)ceil(bytes / MTU);
    CHECK_INT_EQ(st->sharp_ops, 1);
    CHECK(st->sharp_bytes_sent == n * bytes);
    CHECK(st->sharp_bytes_delivered == n * bytes);
    CHECK_INT_EQ(st->sharp_packets_delivered, n * np);
    CHECK_INT_EQ(st->sharp_aggregations, np * info->children);
    CHECK_INT_EQ(st->messages_sent, 0);
    CHECK_INT_EQ(pkt_net_check(x.net, why, sizeof why), 0);
    for (uint32_t l = 0; l < x.g.n_links; l++) { /* every port empty, every FIFO drained */
        CHECK(pkt_net_link_held(x.net, l) == 0);
        CHECK(pkt_net_link_queued(x.net, l) == 0);
        CHECK(pkt_net_link_stats(x.net, l).max_held_bytes <= BUFFER);
    }
    if (digest)
        *digest = sim_digest(x.eng);
    double t = x.done_s;
    rig_close(&x);
    return t;
}

static void test_closed_form(void)
{
    static const struct {
        int kind;
        unsigned n;
        uint32_t r[4];
        unsigned hops;
        unsigned switches;
    } cases[] = {
        {1, 4, {0, 1, 2, 3}, 1, 1},  /* one leaf: it is the root */
        {1, 2, {0, 4}, 2, 3},        /* two leaves, the lowest spine */
        {1, 4, {0, 5, 10, 15}, 2, 5},/* four leaves */
        {0, 2, {0, 1}, 1, 1},        /* fat-tree, one edge switch */
        {0, 2, {0, 2}, 2, 3},        /* one pod, two edges: an aggregation switch */
        {0, 4, {0, 4, 8, 12}, 3, 9}, /* four pods: a core switch */
    };
    const double packets[3] = {1, 2, 64};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int tech = 0; tech < 2; tech++)
            for (int k = 0; k < 3; k++) {
                pkt_sharp_tree_info info;
                double t = run_one(cases[c].kind, tech, cases[c].r, cases[c].n,
                                   packets[k] * MTU, INFINITY, NULL, &info);
                double h = cases[c].hops;
                CHECK_INT_EQ(info.hops_up, cases[c].hops);
                CHECK_INT_EQ(info.switches, cases[c].switches);
                CHECK_INT_EQ(info.children, cases[c].n + cases[c].switches - 1);
                CHECK_REL(t, (packets[k] + 2 * h - 1) * TAU + 2 * h * D, 1e-12);
                /* (2): at half the line rate */
                t = run_one(cases[c].kind, tech, cases[c].r, cases[c].n, packets[k] * MTU,
                            B / 2, NULL, &info);
                CHECK_REL(t, (2 * packets[k] + 2 * h - 2) * TAU + 2 * h * D, 1e-12);
                /* a rate at the line rate never binds */
                t = run_one(cases[c].kind, tech, cases[c].r, cases[c].n, packets[k] * MTU, B,
                            NULL, &info);
                CHECK_REL(t, (packets[k] + 2 * h - 1) * TAU + 2 * h * D, 1e-12);
            }
    /* a last packet shorter than the MTU: conservation still exact (checked
     * in run_one); time between those of P - 1 and P whole packets */
    pkt_sharp_tree_info info;
    uint32_t r[4] = {0, 4, 8, 12};
    double t = run_one(0, PKT_IB, r, 4, 10 * MTU + 100, INFINITY, NULL, &info);
    CHECK(t > (10 + 5) * TAU + 6 * D && t < (11 + 5) * TAU + 6 * D);
    /* determinism: the same digest twice */
    uint64_t d1 = 0, d2 = 0;
    run_one(0, PKT_IB, r, 4, 64 * MTU, B / 2, &d1, &info);
    run_one(0, PKT_IB, r, 4, 64 * MTU, B / 2, &d2, &info);
    CHECK(d1 == d2 && d1 != 0);
}

/* the in-network plan on both tiers (pkc_compare_run), then vs the ring */
static void test_plans(int kind)
{
    rig x;
    if (rig_open(&x, kind, PKT_IB)) {
        CHECK(0);
        rig_close(&x);
        return;
    }
    pkt_config cfg = config(PKT_IB);
    uint32_t ranks[16];
    for (uint32_t i = 0; i < 16; i++)
        ranks[i] = i;
    const double rates[2] = {B, B / 2};
    for (int q = 0; q < 2; q++) {
        x.f.fabric_reduction_bytes_per_s = rates[q];
        nc_plan p;
        sim_error err = {0};
        CHECK_INT_EQ(nc_plan_build(&p, &x.f, NC_ALLREDUCE, NC_ALGO_IN_NETWORK, ranks, 16,
                                   4 * MIB, &err), 0);
        char why[256] = "";
        CHECK_INT_EQ(pkc_plan_check(&p, why, sizeof why), 0);
        pkc_compare a, b;
        int rc = pkc_compare_run(&x.f, &cfg, &p, &a, why, sizeof why);
        CHECK_INT_EQ(rc, 0);
        if (rc) {
            fprintf(stderr, "pkc_compare_run: %s\n", why);
            nc_plan_free(&p);
            continue;
        }
        pkt_sharp_tree_info info;
        CHECK_INT_EQ(pkt_sharp_tree(&x.g, ranks, 16, &info, why, sizeof why), 0);
        double h = info.hops_up, np = 4 * MIB / MTU;
        double e = q == 0 ? (2 * h - 1) * TAU + 2 * h * D : (2 * h - 2) * TAU + 2 * h * D;
        CHECK_REL(a.flow.time_s, 4 * MIB / rates[q], 1e-9);
        CHECK_REL(a.packet.time_s, a.flow.time_s + e, 1e-9);
        CHECK(a.packet.time_s / a.flow.time_s - 1 <= 0.05);
        CHECK_INT_EQ(a.packet.messages, 16);
        CHECK(a.packet.sent_bytes == 16 * 4 * MIB);
        CHECK(a.packet.stats.sharp_bytes_delivered == 16 * 4 * MIB);
        CHECK_INT_EQ(a.packet.stats.sharp_aggregations, (uint64_t)np * info.children);
        CHECK_INT_EQ(a.check_rc, 0);
        rc = pkc_compare_run(&x.f, &cfg, &p, &b, why, sizeof why);
        CHECK(rc == 0 && b.digest == a.digest && b.packet.time_s == a.packet.time_s);
        printf("%s SHARP R = %.0f GB/s, 16 ranks, 4 MiB: H=%u flow %.4f us packet %.4f us "
               "ratio %.5f\n", kind == 0 ? "fat-tree k=4" : "leaf-spine 4x4", rates[q] / 1e9,
               info.hops_up, a.flow.time_s * 1e6, a.packet.time_s * 1e6,
               a.packet.time_s / a.flow.time_s);
        nc_plan_free(&p);
    }
    /* SHARP vs ring on the packet tier, 16 MiB */
    x.f.fabric_reduction_bytes_per_s = B;
    double s = 16 * MIB, t[2] = {0, 0};
    for (int a = 0; a < 2; a++) {
        nc_plan p;
        sim_error err = {0};
        char why[256] = "";
        CHECK_INT_EQ(nc_plan_build(&p, &x.f, NC_ALLREDUCE, a ? NC_ALGO_RING : NC_ALGO_IN_NETWORK,
                                   ranks, 16, s, &err), 0);
        pkc_compare c;
        CHECK_INT_EQ(pkc_compare_run(&x.f, &cfg, &p, &c, why, sizeof why), 0);
        t[a] = c.packet.time_s;
        nc_plan_free(&p);
    }
    pkt_sharp_tree_info info;
    char why[256];
    CHECK_INT_EQ(pkt_sharp_tree(&x.g, ranks, 16, &info, why, sizeof why), 0);
    double e = (2.0 * info.hops_up - 1) * TAU + 2.0 * info.hops_up * D;
    CHECK(t[1] >= 2.0 * 15 / 16 * s / B * (1 - 1e-12));
    CHECK(t[0] / t[1] <= 16.0 / 30 * (1 + e * B / s));
    printf("%s 16 MiB: SHARP %.4f us, ring %.4f us, ratio %.4f (bound %.4f)\n",
           kind == 0 ? "fat-tree k=4" : "leaf-spine 4x4", t[0] * 1e6, t[1] * 1e6, t[0] / t[1],
           16.0 / 30 * (1 + e * B / s));
    rig_close(&x);
}

static void test_refusals(void)
{
    rig x;
    if (rig_open(&x, 1, PKT_IB)) {
        CHECK(0);
        rig_close(&x);
        return;
    }
    char why[256] = "";
    pkt_sharp_tree_info info;
    uint32_t twice[2] = {3, 3}, one[1] = {0}, sw[2] = {0, 16};
    CHECK(pkt_sharp_tree(&x.g, twice, 2, &info, why, sizeof why) == -1 &&
          strstr(why, "twice"));
    CHECK(pkt_sharp_tree(&x.g, one, 1, &info, why, sizeof why) == -1 && strstr(why, "2 ranks"));
    CHECK(pkt_sharp_tree(&x.g, sw, 2, &info, why, sizeof why) == -1 && strstr(why, "not a host"));
    CHECK(pkt_sharp_allreduce(x.net, twice, 2, 4096, INFINITY, NULL, NULL, 0) == -1);
    CHECK(pkt_sharp_allreduce(x.net, sw, 1, 0.5, INFINITY, NULL, NULL, 0) == -1);
    /* a plan phase mixing fixed links and routed connections */
    nc_plan p;
    sim_error err = {0};
    uint32_t ranks[4] = {0, 1, 2, 3};
    CHECK_INT_EQ(nc_plan_build(&p, &x.f, NC_ALLREDUCE, NC_ALGO_IN_NETWORK, ranks, 4, MIB, &err),
                 0);
    p.conn[p.phase[0].conn_first].dst = 1;
    CHECK(pkc_plan_check(&p, why, sizeof why) == -1 && strstr(why, "mixes"));
    nc_plan_free(&p);
    rig_close(&x);
    /* lossy RoCE: refused */
    topo_graph g;
    topo_graph_init(&g);
    CHECK_INT_EQ(topo_leafspine(8, 4, 4, B, &g, why, sizeof why), 0);
    topo_route_config rc_cfg = {TOPO_BALANCE_ECMP, TOPO_PATH_MINIMAL, 1, 7};
    topo_router *r = topo_router_create(&g, &rc_cfg, why, sizeof why);
    sim_engine *eng = sim_engine_create();
    pkt_config c = config(PKT_ROCE);
    c.loss = PKT_GO_BACK_N;
    c.rto_s = 1e-3;
    pkt_net *net = pkt_net_create(eng, &g, r, &c, why, sizeof why);
    CHECK(net != NULL);
    if (net)
        CHECK(pkt_sharp_allreduce(net, ranks, 4, 4096, INFINITY, NULL, NULL, 0) == -1 &&
              strstr(pkt_net_error(net), "lossy"));
    pkt_net_destroy(net);
    sim_engine_destroy(eng);
    topo_router_destroy(r);
    topo_graph_fini(&g);
}

int main(void)
{
    test_closed_form();
    test_plans(0);
    test_plans(1);
    test_refusals();
    return check_report();
}
