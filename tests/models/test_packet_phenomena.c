/* test_packet_phenomena.c - the packet tier's phenomena (docs/fabric.md
 * "Phenomena"; models/packet_phenomena.h), each against its closed form:
 *  (a) N -> 1 incast, N = 2 .. 32, IB and RoCE: the receiver's goodput at
 *      most its link rate and at least N b / (N b + 4 MTU + 4 d B) of it
 *      (the bottleneck drains without a gap; only the last packet's
 *      pipeline is added), held bytes within the buffer (IB) and within
 *      xoff + headroom (RoCE: the rule makes that the buffer), pauses none
 *      under IB and not fewer as N grows under RoCE;
 *  (b) a victim flow sharing only its leaf's uplink with `shared` incast
 *      senders: sharing a FIFO with them costs at most (shared + 1) x; PFC
 *      pause spreading makes it worse than that; DCQCN recovers part of it
 *      (monotone: PFC > PFC + DCQCN >= alone); IB credits also spread;
 *  (c) a stuck receiver (pkt_host_stall): PAUSE reaches links that do not
 *      lead to it (the spine's link to its leaf, another leaf's uplink),
 *      flows to other receivers stop, a control flow is untouched, every
 *      message completes after the stall, nothing is lost;
 *  (d) the same under IB credits: no PAUSE, held bytes within the buffer,
 *      the same stop of the other flows;
 *  (e) ring neighbours across leaves, two flows forced onto one uplink:
 *      ECMP takes L b/B plus the pipeline (L = flows on the busiest link),
 *      per-packet adaptive routing within 2 % of the ideal b/B.
 * Figures: MTU 4096 B (components.md 5.7), 50e9 B/s links (NDR / 400GbE,
 * hardware.md 3.1), d = 500 ns (hardware.md 3.5), 1 MB port buffer
 * (roce-400g's even share of Spectrum-4's 128 MB, hardware.md 3.3), PFC by
 * the headroom rule (components.md 5.2), DCQCN by pkp_dcqcn_rule (5.1).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "engine.h"
#include "fattree.h"
#include "packet_phenomena.h"
#include "routing.h"

#define MTU 4096.0
#define B 50e9
#define D 500e-9
#define BUFFER 1e6

static pkt_config base(enum pkt_technology t)
{
    pkt_config c = {MTU, t, BUFFER, 0, 0, D, {0}, 0, PKT_LOSSLESS, 0};
    if (t == PKT_ROCE)
        pkb_pfc_rule(BUFFER, MTU, B, D, &c.xoff_bytes, &c.xon_bytes, NULL, 0);
    return c;
}

/* (a) */
static void test_incast_sweep(enum pkt_technology t)
{
    char why[256];
    topo_graph g;
    CHECK_INT_EQ(topo_leafspine(12, 5, 8, B, &g, why, sizeof why), 0);
    topo_route_config rc = {TOPO_BALANCE_ECMP, TOPO_PATH_MINIMAL, 1, 7};
    topo_router *r = topo_router_create(&g, &rc, why, sizeof why);
    static const unsigned fanins[] = {2, 4, 8, 16, 32};
    pkp_incast_row rows[5];
    pkt_config c = base(t);
    double b = 256 * MTU;
    int rc_run = pkp_incast_sweep(&g, r, &c, 1, b, fanins, 5, rows, why, sizeof why);
    CHECK_INT_EQ(rc_run, 0);
    if (rc_run)
        fprintf(stderr, "incast sweep: %s\n", why);
    for (unsigned i = 0; !rc_run && i < 5; i++) {
        const pkp_incast_row *w = &rows[i];
        double nb = w->fanin * b;
        printf("incast %s N=%2u: %.3f us, goodput %.4g GB/s (eff %.4f, floor %.4f), held %.0f, "
               "pauses %llu\n", t == PKT_IB ? "IB  " : "RoCE", w->fanin, w->time_s * 1e6,
               w->goodput_bytes_per_s / 1e9, w->efficiency, nb / (nb + 4 * MTU + 4 * D * B),
               w->max_held_bytes, (unsigned long long)w->pauses);
        CHECK(w->efficiency <= 1 + 1e-12);
        CHECK(w->efficiency >= nb / (nb + 4 * MTU + 4 * D * B));
        if (t == PKT_IB) {
            CHECK(w->max_held_bytes <= BUFFER);
            CHECK_INT_EQ(w->pauses, 0);
        } else {
            CHECK(w->max_held_bytes <= c.xoff_bytes + 2 * B * D + 2 * MTU);
            if (i > 0)
                CHECK(w->pauses >= rows[i - 1].pauses);
        }
    }
    if (t == PKT_ROCE && !rc_run)
        CHECK(rows[4].pauses > rows[0].pauses);
    topo_router_destroy(r);
    topo_graph_fini(&g);
}

/* (b) */
static void test_victim(void)
{
    char why[256];
    pkt_config c = base(PKT_ROCE);
    pkp_victim_result v, v2;
    int rc = pkp_victim(&c, B, 9, 1024 * MTU, &v, why, sizeof why);
    CHECK_INT_EQ(rc, 0);
    if (rc) {
        fprintf(stderr, "victim: %s\n", why);
        return;
    }
    static const char *names[] = {"PFC", "PFC+DCQCN", "IB credits"};
    for (int k = 0; k < PKP_VARIANTS; k++)
        printf("victim %-10s: %.3f us (x%.3f alone %.3f us), incast %.3f us, pauses %llu, "
               "marks %llu, held %.0f\n", names[k], v.v[k].victim_s * 1e6,
               v.v[k].victim_s / v.solo_s, v.solo_s * 1e6, v.v[k].incast_s * 1e6,
               (unsigned long long)v.v[k].pauses, (unsigned long long)v.v[k].ecn_marks,
               v.v[k].max_held_bytes);
    CHECK_REL(v.solo_s, v.solo_closed_s, 1e-12);
    CHECK_INT_EQ(v.shared, 3);
    for (int k = 0; k < PKP_VARIANTS; k++)
        CHECK(v.v[k].is_consistent);
    CHECK(v.v[PKP_PFC].victim_s > v.fifo_bound * v.solo_s);
    CHECK(v.v[PKP_PFC].victim_s > v.v[PKP_PFC_DCQCN].victim_s);
    CHECK(v.v[PKP_PFC_DCQCN].victim_s >= v.solo_s);
    CHECK(v.v[PKP_PFC].pauses > v.v[PKP_PFC_DCQCN].pauses);
    CHECK(v.v[PKP_CREDITS].victim_s > v.solo_s);
    CHECK_INT_EQ(v.v[PKP_CREDITS].pauses, 0);
    CHECK(v.v[PKP_CREDITS].max_held_bytes <= BUFFER);
    CHECK_INT_EQ(pkp_victim(&c, B, 9, 1024 * MTU, &v2, why, sizeof why), 0);
    for (int k = 0; k < PKP_VARIANTS; k++)
        CHECK(v2.v[k].victim_s == v.v[k].victim_s && v2.v[k].pauses == v.v[k].pauses);
    CHECK_INT_EQ(pkp_victim(&c, B, 0, 1024 * MTU, &v2, why, sizeof why), -1);
    CHECK_INT_EQ(pkp_victim(&c, B, PKP_MAX_FANIN + 1, 1024 * MTU, &v2, why, sizeof why), -1);
}

/* (c), (d) */
static void test_stall(void)
{
    char why[256];
    pkt_config c = base(PKT_ROCE);
    pkp_stall_result s;
    int rc = pkp_stall(&c, B, 1024 * MTU, &s, why, sizeof why);
    CHECK_INT_EQ(rc, 0);
    if (rc) {
        fprintf(stderr, "stall: %s\n", why);
        return;
    }
    printf("stall [%.3f, %.3f] us, lone %.3f us\n", s.start_s * 1e6, s.end_s * 1e6,
           s.solo_s * 1e6);
    for (int k = 0; k < 2; k++) {
        const pkp_variant *v = &s.v[k];
        printf("%s: to stuck %.3f us, others %.3f us, control %.3f us, pauses %llu, held %.0f, "
               "links paused (not to the stuck host) %u\n", k ? "IB  " : "RoCE",
               v->incast_s * 1e6, v->victim_s * 1e6, v->control_s * 1e6,
               (unsigned long long)v->pauses, v->max_held_bytes, s.other_links_paused[k]);
        for (unsigned b = 0; b < s.n_bins && s.bins[k][b].end_s <= v->victim_s + s.start_s; b++)
            printf("  %8.3f us: pauses to stuck %3llu, other %3llu (%u links); bytes stuck "
                   "%8.0f others %8.0f control %8.0f\n", s.bins[k][b].end_s * 1e6,
                   (unsigned long long)s.bins[k][b].pauses_to_stuck,
                   (unsigned long long)s.bins[k][b].pauses_other,
                   s.bins[k][b].links_paused_other, s.bins[k][b].to_stuck_bytes,
                   s.bins[k][b].to_others_bytes, s.bins[k][b].control_bytes);
        CHECK(v->is_consistent);
        CHECK(v->incast_s > s.end_s);
        CHECK(v->victim_s > s.end_s);
        CHECK_REL(v->control_s, s.solo_s, 1e-12);
        /* bins of b/(4B), the window [1, 17] bins; bin 16 ends at end_s (the drain) */
        CHECK_REL(s.bins[k][16].end_s, s.end_s, 1e-12);
        CHECK(s.bins[k][16].to_stuck_bytes > 0);
        for (unsigned b = 12; b < 16; b++) /* the storm: nothing moves to any receiver */
            CHECK(s.bins[k][b].to_stuck_bytes == 0 && s.bins[k][b].to_others_bytes == 0);
    }
    CHECK(s.other_links_paused[0] > 0);
    CHECK(s.spine_to_leaf0_paused);
    CHECK(s.leaf1_uplink_paused);
    CHECK_INT_EQ(s.v[1].pauses, 0);
    CHECK(s.v[1].max_held_bytes <= BUFFER);
}

/* (e) */
static void test_collision(enum pkt_technology t)
{
    char why[256];
    pkt_config c = base(t);
    pkp_collision_result o;
    int rc = pkp_collision(&c, B, 2, 2048 * MTU, &o, why, sizeof why);
    CHECK_INT_EQ(rc, 0);
    if (rc) {
        fprintf(stderr, "collision: %s\n", why);
        return;
    }
    printf("collision %s: ideal %.3f us, ECMP %.3f us (busiest link %u flows, bound %.3f..%.3f), "
           "adaptive %.3f us (x%.4f ideal)\n", t == PKT_IB ? "IB" : "RoCE", o.ideal_s * 1e6,
           o.ecmp_s * 1e6, o.max_flows_per_link, o.ecmp_bound_lo_s * 1e6,
           o.ecmp_bound_hi_s * 1e6, o.adaptive_s * 1e6, o.adaptive_s / o.ideal_s);
    CHECK(o.is_consistent);
    CHECK_INT_EQ(o.max_flows_per_link, 2);
    CHECK(o.ecmp_s >= o.ecmp_bound_lo_s && o.ecmp_s <= o.ecmp_bound_hi_s);
    CHECK(o.adaptive_s >= o.ideal_s && o.adaptive_s <= o.ideal_s + o.pipeline_s + MTU / B);
    CHECK(o.adaptive_s <= 1.02 * o.ideal_s);
}

/* pkt_host_stall refuses what it cannot take, and a net with a stall that
 * never holds anything (window after every arrival) delivers as without */
static void test_stall_api(void)
{
    char why[256];
    topo_graph g;
    CHECK_INT_EQ(topo_leafspine(9, 2, 8, B, &g, why, sizeof why), 0);
    topo_route_config rc = {TOPO_BALANCE_ECMP, TOPO_PATH_MINIMAL, 1, 7};
    topo_router *r = topo_router_create(&g, &rc, why, sizeof why);
    double t[2];
    for (int k = 0; k < 2; k++) {
        sim_engine *eng = sim_engine_create();
        pkt_config c = base(PKT_IB);
        pkt_net *net = pkt_net_create(eng, &g, r, &c, why, sizeof why);
        uint32_t sw = g.n_nodes - 1; /* a switch */
        CHECK_INT_EQ(pkt_host_stall(net, sw, 0, 1), -1);
        CHECK_INT_EQ(pkt_host_stall(net, 0, 1, 1), -1);
        CHECK_INT_EQ(pkt_host_stall(net, 0, 0, INFINITY), -1);
        if (k) {
            CHECK_INT_EQ(pkt_host_stall(net, 9, 1, 2), 0);
            CHECK_INT_EQ(pkt_host_stall(net, 9, 3, 4), -1); /* one window a host */
        }
        CHECK_INT_EQ(pkt_send(net, 0, 9, 64 * MTU, 0, NULL, NULL, 0), 0);
        CHECK_INT_EQ(pkt_host_stall(net, 1, 5, 6), -1); /* after a send */
        sim_run(eng, INFINITY);
        t[k] = sim_now(eng);
        CHECK_INT_EQ(pkt_net_check(net, why, sizeof why), 0);
        CHECK(pkt_net_get_stats(net)->bytes_delivered == 64 * MTU);
        pkt_net_destroy(net);
        sim_engine_destroy(eng);
    }
    /* the stall at 1 s holds nothing: the same arrival, the run ends at the drain event */
    CHECK(t[0] < 1e-3 && t[1] == 2);
    topo_router_destroy(r);
    topo_graph_fini(&g);
}

int main(void)
{
    test_stall_api();
    test_incast_sweep(PKT_IB);
    test_incast_sweep(PKT_ROCE);
    test_victim();
    test_stall();
    test_collision(PKT_IB);
    test_collision(PKT_ROCE);
    return check_report();
}
