/* test_packet_reorder.c - what the receiving NIC does with reordering
 * (pkt_config.reorder; docs/fabric.md "Reordering"): under ECMP (each
 * message on one path, FIFO links: in order) the in-order receiver gives
 * the out-of-order one's times bit for bit, with nothing out of order and
 * nothing resent; a forced reorder under adaptive routing on a 2-spine
 * leaf-spine (a short last packet overtakes the one before) gives the
 * NACKs, spurious resends and times of the closed forms below; on a
 * permutation the in-order NIC is never faster, every packet that left a
 * NIC arrives once and is accepted once or discarded; determinism; bad
 * configurations refused.
 *
 * Numbers as test_packet.c: MTU 4096 B (components.md 5.7), links 50e9 B/s
 * (hardware.md 3.1), 500 ns per hop (hardware.md 3.5). The RTO is the
 * test's own (a GAP in the references): 1 s, far above every round trip
 * here, so no run times out.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "engine.h"
#include "fattree.h"
#include "packet.h"
#include "routing.h"

#define MTU 4096.0
#define B 50e9
#define D 500e-9
#define TAU (MTU / B)
#define RTO 1.0
#define BUFFER (16 * MTU) /* IB: above the credit round trip 2 B d + MTU */
#define XON (2 * B * D + 2 * MTU)
#define XOFF (XON + 3072)
#define RBUFFER (XOFF + MTU + 2 * B * D + 2 * MTU)

static pkt_config config(enum pkt_technology t, int is_adaptive, enum pkt_reorder rx)
{
    pkt_config c = {.mtu_bytes = MTU, .technology = t,
                    .buffer_bytes = t == PKT_IB ? BUFFER : RBUFFER, .xoff_bytes = XOFF,
                    .xon_bytes = XON, .hop_latency_s = D, .is_adaptive = is_adaptive,
                    .rto_s = rx == PKT_RX_IN_ORDER ? RTO : 0, .reorder = rx};
    return c;
}

#define MAX_MSG 16

typedef struct run_out {
    double done_s[MAX_MSG];
    double t_end;
    size_t n_done;
    uint64_t digest;
    pkt_net_stats st;
    int is_consistent;
} run_out;

typedef struct run_ctx {
    sim_engine *eng;
    run_out *o;
} run_ctx;

static void on_done(void *ctx, uint64_t tag)
{
    run_ctx *x = ctx;
    double t = sim_now(x->eng);
    x->o->n_done++;
    if (tag < MAX_MSG)
        x->o->done_s[tag] = t;
    if (t > x->o->t_end)
        x->o->t_end = t;
}

typedef struct flow {
    uint32_t src, dst;
    double bytes;
    uint64_t key;
} flow;

/* Run flows (all at t = 0) on topo_leafspine(radix, leaves, down). 0 or -1. */
static int run(unsigned radix, unsigned leaves, unsigned down, const pkt_config *c,
               const flow *f, unsigned n, run_out *o)
{
    char why[256];
    topo_graph g;
    topo_graph_init(&g);
    *o = (run_out){0};
    for (unsigned i = 0; i < MAX_MSG; i++)
        o->done_s[i] = -1;
    if (topo_leafspine(radix, leaves, down, B, &g, why, sizeof why)) {
        fprintf(stderr, "leafspine: %s\n", why);
        return -1;
    }
    topo_route_config rc = {TOPO_BALANCE_ECMP, TOPO_PATH_MINIMAL, 1, 7};
    topo_router *r = topo_router_create(&g, &rc, why, sizeof why);
    sim_engine *eng = sim_engine_create();
    pkt_net *net = r && eng ? pkt_net_create(eng, &g, r, c, why, sizeof why) : NULL;
    int rc_out = -1;
    if (!net) {
        fprintf(stderr, "pkt_net_create: %s\n", why);
        goto out;
    }
    run_ctx x = {eng, o};
    double bytes = 0;
    for (unsigned i = 0; i < n; i++) {
        CHECK_INT_EQ(pkt_send(net, f[i].src, f[i].dst, f[i].bytes, f[i].key, on_done, &x, i),
                     0);
        bytes += f[i].bytes;
    }
    sim_run(eng, INFINITY);
    o->digest = sim_digest(eng);
    o->st = *pkt_net_get_stats(net);
    o->is_consistent = pkt_net_check(net, why, sizeof why) == 0 &&
                       o->st.bytes_delivered == bytes && o->n_done == n;
    if (!o->is_consistent)
        fprintf(stderr, "pkt_net_check: %s\n", why);
    rc_out = 0;
out:
    pkt_net_destroy(net);
    sim_engine_destroy(eng);
    topo_router_destroy(r);
    topo_graph_fini(&g);
    return rc_out;
}

/* ---- ECMP: in order, so the two receivers agree ---- */

/* An 8 -> 1 incast (hosts 4..11 to host 0) and a flow 12 -> 1 on the
 * radix-8 leaf-spine of 4 leaves of 4 hosts, RoCE PFC with a small buffer
 * (pauses) and IB credits: the in-order receiver's completion times equal
 * the out-of-order one's bit for bit, nothing is out of order or resent. */
static void test_ecmp_identical(enum pkt_technology t)
{
    flow f[9];
    for (unsigned i = 0; i < 8; i++)
        f[i] = (flow){4 + i, 0, 37.5 * MTU, 3 + i};
    f[8] = (flow){12, 1, 64 * MTU, 5};
    run_out a, b;
    pkt_config ca = config(t, 0, PKT_RX_OUT_OF_ORDER), cb = config(t, 0, PKT_RX_IN_ORDER);
    if (run(8, 4, 4, &ca, f, 9, &a) || run(8, 4, 4, &cb, f, 9, &b)) {
        CHECK(0);
        return;
    }
    CHECK(a.is_consistent && b.is_consistent);
    for (unsigned i = 0; i < 9; i++)
        CHECK(a.done_s[i] == b.done_s[i] && a.done_s[i] > 0);
    CHECK_INT_EQ(a.st.out_of_order, 0);
    CHECK_INT_EQ(b.st.out_of_order, 0);
    CHECK_INT_EQ(b.st.resent_packets, 0);
    CHECK_INT_EQ(b.st.nacks, 0);
    CHECK_INT_EQ(b.st.discarded, 0);
    CHECK_INT_EQ(b.st.timeouts, 0);
    CHECK_INT_EQ(b.st.acks, b.st.packets_delivered); /* one ACK per accepted packet */
    CHECK_INT_EQ(a.st.packets_delivered, b.st.packets_delivered);
    CHECK(a.st.pauses == b.st.pauses);
    if (t == PKT_ROCE)
        CHECK(a.st.pauses > 0); /* the incast did push back: FIFO order survives PFC */
}

/* ---- a forced reorder: closed forms ---- */

/* Host 0 (leaf 0) sends P = 8 packets, 7 MTU and a last one of s = MTU/4,
 * to host 2 (leaf 1) on the radix-4 leaf-spine of 2 leaves of 2 hosts (2
 * spines), adaptive. tau = MTU/B, tau_s = s/B. Packet k reaches leaf 0 at
 * (k+1) tau + d while k-1 is still on its uplink (an arrival goes before
 * a finish at the same instant), so the packets alternate spines on equal
 * paths: in order. The short last one, P-1, takes the idle uplink, waits
 * at its spine behind P-3 (2 tau_s < tau) and reaches leaf 1 at
 * P tau + tau_s + 3d, before P-2 ((P+1) tau + 3d): P-1 overtakes P-2.
 *  out-of-order NIC: done when P-2 arrives: T = (P+2) tau + tau_s + 4d; one
 *    arrival out of order;
 *  in-order NIC: P-1 is a sequence error: discarded, NACK(P-2), which
 *    reaches the sender 4d after P-1 reached host 2, at t0 = (P+1) tau +
 *    tau_s + 8d; the sender goes back to P-2 and resends P-2, P-1 (2
 *    spurious resends, MTU + s bytes); P-1' overtakes P-2' again
 *    (3 tau_s < 2 tau) but now it is the one expected: done at t0 + tau +
 *    4 tau_s + 4d = (P+2) tau + 5 tau_s + 12d; P-2' is a duplicate
 *    (discarded). Discarded 2; out of order (overtaken arrivals) 2: P-2
 *    after P-1, P-2' after P-1'. */
static void test_forced_reorder(enum pkt_technology t)
{
    const double s = MTU / 4, P = 8, ts = s / B;
    flow f = {0, 2, (P - 1) * MTU + s, 1};
    run_out o, i, i2;
    pkt_config co = config(t, 1, PKT_RX_OUT_OF_ORDER), ci = config(t, 1, PKT_RX_IN_ORDER);
    if (run(4, 2, 2, &co, &f, 1, &o) || run(4, 2, 2, &ci, &f, 1, &i) ||
        run(4, 2, 2, &ci, &f, 1, &i2)) {
        CHECK(0);
        return;
    }
    double t_out = (P + 2) * TAU + ts + 4 * D, t_in = (P + 2) * TAU + 5 * ts + 12 * D;
    printf("forced reorder (%s): out-of-order NIC %.4f us (closed form %.4f), in-order %.4f us "
           "(%.4f), resent %llu\n", t == PKT_IB ? "IB" : "RoCE", o.done_s[0] * 1e6, t_out * 1e6,
           i.done_s[0] * 1e6, t_in * 1e6, (unsigned long long)i.st.resent_packets);
    CHECK(o.is_consistent && i.is_consistent);
    CHECK_NEAR(o.done_s[0], t_out, 1e-15);
    CHECK_NEAR(i.done_s[0], t_in, 1e-15);
    CHECK_INT_EQ(o.st.out_of_order, 1);
    CHECK_INT_EQ(o.st.resent_packets, 0);
    CHECK_INT_EQ(o.st.nacks, 0);
    CHECK_INT_EQ(i.st.nacks, 1);
    CHECK_INT_EQ(i.st.resent_packets, 2);
    CHECK(i.st.resent_bytes == MTU + s);
    CHECK_INT_EQ(i.st.discarded, 2);
    CHECK_INT_EQ(i.st.out_of_order, 2);
    CHECK_INT_EQ(i.st.timeouts, 0);
    CHECK_INT_EQ(i.st.packets_delivered, P); /* each packet accepted once */
    CHECK(i.st.bytes_delivered == f.bytes);
    CHECK(i.digest == i2.digest && i.done_s[0] == i2.done_s[0]); /* determinism */
}

/* ---- a permutation: monotone, conservation ---- */

/* Host h of leaf 0 sends (32 + 8h) MTU + 1000 + 100h B to host 8 + h mod 4
 * of leaf 1 (two senders per receiver: the leaf's downlinks queue) on the
 * radix-12 leaf-spine of 2 leaves of 8 hosts (4 spines), adaptive. */
static void test_permutation(enum pkt_technology t)
{
    flow f[8];
    for (uint32_t h = 0; h < 8; h++)
        f[h] = (flow){h, 8 + h % 4, (32 + 8 * h) * MTU + 1000 + 100 * h, 11 + h};
    run_out o, i, i2;
    pkt_config co = config(t, 1, PKT_RX_OUT_OF_ORDER), ci = config(t, 1, PKT_RX_IN_ORDER);
    if (run(12, 2, 8, &co, f, 8, &o) || run(12, 2, 8, &ci, f, 8, &i) ||
        run(12, 2, 8, &ci, f, 8, &i2)) {
        CHECK(0);
        return;
    }
    printf("permutation (%s): out-of-order NIC %.3f us (%llu out of order), in-order NIC %.3f "
           "us (%llu out of order, %llu NACKs, %llu resent)\n", t == PKT_IB ? "IB" : "RoCE",
           o.t_end * 1e6, (unsigned long long)o.st.out_of_order, i.t_end * 1e6,
           (unsigned long long)i.st.out_of_order, (unsigned long long)i.st.nacks,
           (unsigned long long)i.st.resent_packets);
    CHECK(o.is_consistent && i.is_consistent);
    CHECK(o.st.out_of_order > 0); /* adaptive routing did reorder */
    CHECK_INT_EQ(o.st.resent_packets, 0);
    for (unsigned m = 0; m < 8; m++) /* monotone: the in-order NIC is never faster */
        CHECK(i.done_s[m] >= o.done_s[m]);
    CHECK(i.t_end > o.t_end);
    CHECK(i.st.nacks > 0 && i.st.resent_packets >= i.st.nacks);
    CHECK_INT_EQ(i.st.timeouts, 0);
    /* lossless: every packet that left a NIC arrived once, accepted once or discarded */
    CHECK_INT_EQ(i.st.packets_injected + i.st.resent_packets,
                 i.st.packets_delivered + i.st.discarded);
    CHECK_INT_EQ(i.st.packets_delivered, i.st.packets_injected);
    CHECK(i.st.bytes_delivered == i.st.bytes_sent);
    CHECK(i.digest == i2.digest && i.t_end == i2.t_end);
}

/* ---- refusals ---- */

static void test_bad_config(void)
{
    char why[256];
    pkt_config c = config(PKT_ROCE, 1, PKT_RX_IN_ORDER);
    CHECK_INT_EQ(pkt_config_check(&c, why, sizeof why), 0);
    c.rto_s = 0;
    CHECK_INT_EQ(pkt_config_check(&c, why, sizeof why), -1);
    CHECK_CONTAINS(why, "rto_s");
    c = config(PKT_ROCE, 1, PKT_RX_IN_ORDER);
    c.loss = PKT_GO_BACK_N;
    CHECK_INT_EQ(pkt_config_check(&c, why, sizeof why), -1);
    CHECK_CONTAINS(why, "lossless");
    c.loss = PKT_SELECTIVE;
    CHECK_INT_EQ(pkt_config_check(&c, why, sizeof why), -1);
    c = config(PKT_IB, 1, PKT_RX_IN_ORDER);
    c.ibcc.is_enabled = 1;
    CHECK_INT_EQ(pkt_config_check(&c, why, sizeof why), -1);
    CHECK_CONTAINS(why, "pacer");
    c = config(PKT_ROCE, 1, PKT_RX_IN_ORDER);
    c.dcqcn.is_enabled = 1;
    CHECK_INT_EQ(pkt_config_check(&c, why, sizeof why), -1);
    CHECK_CONTAINS(why, "pacer");
    c = config(PKT_ROCE, 1, PKT_RX_OUT_OF_ORDER);
    c.reorder = (enum pkt_reorder)7;
    CHECK_INT_EQ(pkt_config_check(&c, why, sizeof why), -1);
    CHECK_CONTAINS(why, "reorder");
    /* PFC stays on with the in-order receiver: its thresholds are checked */
    c = config(PKT_ROCE, 1, PKT_RX_IN_ORDER);
    c.xoff_bytes = c.xon_bytes = 0;
    CHECK_INT_EQ(pkt_config_check(&c, why, sizeof why), -1);
    /* a stalled NIC is not modelled with the in-order receiver */
    topo_graph g;
    topo_graph_init(&g);
    if (topo_leafspine(4, 2, 2, B, &g, why, sizeof why) == 0) {
        topo_route_config rc = {TOPO_BALANCE_ECMP, TOPO_PATH_MINIMAL, 1, 7};
        topo_router *r = topo_router_create(&g, &rc, why, sizeof why);
        sim_engine *eng = sim_engine_create();
        c = config(PKT_ROCE, 1, PKT_RX_IN_ORDER);
        pkt_net *net = r && eng ? pkt_net_create(eng, &g, r, &c, why, sizeof why) : NULL;
        CHECK(net != NULL);
        if (net) {
            CHECK_INT_EQ(pkt_host_stall(net, 0, 0, 1e-6), -1);
            CHECK_CONTAINS(pkt_net_error(net), "in-order");
        }
        pkt_net_destroy(net);
        sim_engine_destroy(eng);
        topo_router_destroy(r);
    }
    topo_graph_fini(&g);
}

int main(void)
{
    test_ecmp_identical(PKT_ROCE);
    test_ecmp_identical(PKT_IB);
    test_forced_reorder(PKT_ROCE);
    test_forced_reorder(PKT_IB);
    test_permutation(PKT_ROCE);
    test_permutation(PKT_IB);
    test_bad_config();
    return check_report();
}
