/* test_packet_ar.c - per-packet adaptive routing in the packet tier
 * (pkt_config.is_adaptive; docs/fabric.md "Packet tier (first slice)"):
 * a leaf-to-leaf permutation on a 2-tier leaf-spine, ECMP (one path per
 * message, hash collisions) against adaptive (least-queued next link per
 * packet); a lone message's time unchanged; determinism; conservation and
 * IB buffer bounds. topo_next_hops' candidates against the route.
 *
 * Numbers as test_packet.c: MTU 4096 B, links 50e9 B/s, 500 ns per hop.
 * IB buffer 16 MTU per port (above the credit round trip 2 B d + MTU, so
 * credits do not throttle a lone link).
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
#define BUFFER (16 * MTU)
#define XON (2 * B * D + 2 * MTU)
#define XOFF (XON + 3072)
#define RBUFFER (XOFF + MTU + 2 * B * D + 2 * MTU)

/* the permutation: RADIX 12, DOWN 8 -> S = 4 spines, H = 8 senders */
#define RADIX 12
#define DOWN 8
#define S (RADIX - DOWN)
#define H DOWN
#define M (256 * MTU)
#define KEY0 11 /* route keys KEY0 + h: seed 7 puts 3 of them on one spine */




typedef struct done_log {
    sim_engine *eng;
    size_t n;
    double last;
} done_log;

static void on_done(void *ctx, uint64_t tag)
{
    (void)tag;
    done_log *d = ctx;
    d->n++;
    d->last = sim_now(d->eng);
}

typedef struct run_out {
    double t_end;
    uint64_t digest;
    size_t done;
    double max_held;
    int consistent;
    int spine_flows[S];
} run_out;

static pkt_config config(enum pkt_technology t, int is_adaptive)
{
    pkt_config c = {MTU, t, t == PKT_IB ? BUFFER : RBUFFER, XOFF, XON, D, {0}, is_adaptive, PKT_LOSSLESS, 0};
    return c;
}

/* Host h of leaf 0 sends M to host DOWN + (3 h + 1) % H of leaf 1 (route
 * key KEY0 + h); spine_flows counts the ECMP routes through each spine. */
static int run_permutation(enum pkt_technology t, int is_adaptive, run_out *o)
{
    char why[256];
    topo_graph g;
    if (topo_leafspine(RADIX, 2, DOWN, B, &g, why, sizeof why)) {
        fprintf(stderr, "leafspine: %s\n", why);
        return -1;
    }
    topo_route_config rc = {TOPO_BALANCE_ECMP, TOPO_PATH_MINIMAL, 1, 7};
    topo_router *r = topo_router_create(&g, &rc, why, sizeof why);
    sim_engine *eng = sim_engine_create();
    pkt_config c = config(t, is_adaptive);
    pkt_net *net = r && eng ? pkt_net_create(eng, &g, r, &c, why, sizeof why) : NULL;
    int rc_out = -1;
    if (!net) {
        fprintf(stderr, "pkt_net_create: %s\n", why);
        goto out;
    }
    done_log log = {eng, 0, 0};
    size_t cap = topo_route_max_usages(r);
    topo_usage *u = calloc(cap, sizeof *u);
    if (!u)
        goto out;
    for (int s = 0; s < S; s++)
        o->spine_flows[s] = 0;
    for (uint32_t h = 0; h < H; h++) {
        uint32_t dst = DOWN + (3 * h + 1) % H;
        long n = topo_route(r, h, dst, KEY0 + h, NULL, u, cap);
        for (long i = 0; i < n; i++) { /* the leaf -> spine link */
            uint32_t a = g.link_src[u[i].link], b = g.link_dst[u[i].link];
            if (g.node_kind[a] == TOPO_SWITCH && g.node_kind[b] == TOPO_SWITCH &&
                g.node_tier[b] > g.node_tier[a]) {
                uint32_t k = 0; /* the spine's rank among the spines */
                for (uint32_t v = 0; v < b; v++)
                    k += g.node_kind[v] == TOPO_SWITCH && g.node_tier[v] == g.node_tier[b];
                if (k < S)
                    o->spine_flows[k]++;
            }
        }
        CHECK_INT_EQ(pkt_send(net, h, dst, M, KEY0 + h, on_done, &log, h), 0);
    }
    free(u);
    sim_run(eng, INFINITY);
    o->t_end = log.last;
    o->done = log.n;
    o->digest = sim_digest(eng);
    o->max_held = pkt_net_get_stats(net)->max_held_bytes;
    o->consistent = pkt_net_check(net, why, sizeof why) == 0 &&
                    pkt_net_get_stats(net)->bytes_delivered == (double)H * M;
    if (!o->consistent)
        fprintf(stderr, "pkt_net_check: %s\n", why);
    rc_out = 0;
out:
    pkt_net_destroy(net);
    sim_engine_destroy(eng);
    topo_router_destroy(r);
    topo_graph_fini(&g);
    return rc_out;
}

/* (a) ECMP vs adaptive, (c) determinism, (d) conservation and buffers. */
static void test_permutation(enum pkt_technology t)
{
    run_out e, a, a2;
    if (run_permutation(t, 0, &e) || run_permutation(t, 1, &a) || run_permutation(t, 1, &a2)) {
        CHECK(0);
        return;
    }
    /* a bound plus the pipeline of the last packet behind it: 3 more
     * serialisations (spine, leaf, host link) and 4 hop latencies */
    double s = MTU / B, pipe = 3 * s + 4 * D, slack = 2 * s;
    double ideal = (double)H * M / (S * B); /* H >= S: the leaf's S uplinks bind */
    int most = 0;
    for (int k = 0; k < S; k++)
        most = e.spine_flows[k] > most ? e.spine_flows[k] : most;
    double ecmp_form = most * M / B; /* the busiest spine's uplink carries `most` messages */
    printf("%s: ideal %.3f us, adaptive %.3f us, ECMP %.3f us (flows per spine:",
           t == PKT_IB ? "IB" : "RoCE", ideal * 1e6, a.t_end * 1e6, e.t_end * 1e6);
    for (int k = 0; k < S; k++)
        printf(" %d", e.spine_flows[k]);
    printf("; closed form %.3f us)\n", ecmp_form * 1e6);
    CHECK_INT_EQ(e.done, H);
    CHECK_INT_EQ(a.done, H);
    CHECK(a.t_end >= ideal + 4 * D);
    CHECK_NEAR(a.t_end, ideal + pipe, slack);
    CHECK(e.t_end >= a.t_end);
    CHECK(e.t_end >= ecmp_form + 4 * D);
    CHECK_NEAR(e.t_end, ecmp_form + pipe, slack);
    CHECK(most > H / S); /* the seed gives a collision: the test shows the gap */
    CHECK(a.digest == a2.digest && a.t_end == a2.t_end);
    CHECK(a.digest != e.digest);
    CHECK(e.consistent && a.consistent);
    if (t == PKT_IB) {
        CHECK(e.max_held <= BUFFER);
        CHECK(a.max_held <= BUFFER);
    }
}

/* (b) one message across the leaves (4 hops) on an idle net: P full
 * packets arrive at (P + h - 1) s + h d with or without adaptive routing
 * (a packet never waits: the next one reaches a switch as its predecessor
 * leaves, and takes another spine or the same free link). */
static void test_lone_message(enum pkt_technology t)
{
    const double P = 37, h = 4, s = MTU / B;
    double want = (P + h - 1) * s + h * D;
    for (int is_adaptive = 0; is_adaptive < 2; is_adaptive++) {
        char why[256];
        topo_graph g;
        if (topo_leafspine(8, 4, 4, B, &g, why, sizeof why)) {
            CHECK(0);
            continue;
        }
        topo_route_config rc = {TOPO_BALANCE_ECMP, TOPO_PATH_MINIMAL, 1, 7};
        topo_router *r = topo_router_create(&g, &rc, why, sizeof why);
        sim_engine *eng = sim_engine_create();
        pkt_config c = config(t, is_adaptive);
        c.buffer_bytes = 64 * MTU;
        c.xoff_bytes = 48 * MTU;
        c.xon_bytes = 40 * MTU;
        pkt_net *net = r && eng ? pkt_net_create(eng, &g, r, &c, why, sizeof why) : NULL;
        done_log log = {eng, 0, 0};
        CHECK(net != NULL);
        if (net) {
            CHECK_INT_EQ(pkt_send(net, 0, 4, P * MTU, 1, on_done, &log, 0), 0);
            sim_run(eng, INFINITY);
            CHECK_INT_EQ(log.n, 1);
            CHECK_NEAR(log.last, want, 1e-12 * want);
            CHECK_INT_EQ(pkt_net_check(net, why, sizeof why), 0);
        }
        pkt_net_destroy(net);
        sim_engine_destroy(eng);
        topo_router_destroy(r);
        topo_graph_fini(&g);
    }
}

/* topo_next_hops: at every node of an ECMP route the route's link is one of
 * the candidates; at the source's leaf all S uplinks are (a cross-leaf
 * destination); the last hop is the link into the host. */
static void test_next_hops(void)
{
    char why[256];
    topo_graph g;
    if (topo_leafspine(RADIX, 2, DOWN, B, &g, why, sizeof why)) {
        CHECK(0);
        return;
    }
    topo_route_config rc = {TOPO_BALANCE_ECMP, TOPO_PATH_MINIMAL, 1, 7};
    topo_router *r = topo_router_create(&g, &rc, why, sizeof why);
    size_t cap = r ? topo_route_max_usages(r) : 0;
    topo_usage *u = calloc(cap + 1, sizeof *u);
    uint32_t cand[RADIX];
    if (!r || !u) {
        CHECK(0);
        goto out;
    }
    for (uint32_t key = 1; key <= 16; key++) {
        long n = topo_route(r, 0, DOWN + 3, key, NULL, u, cap);
        CHECK_INT_EQ(n, 4);
        for (long i = 0; i < n; i++) {
            uint32_t l = u[i].link, at = g.link_src[l];
            uint32_t nc = topo_next_hops(r, at, DOWN + 3, cand, RADIX);
            int is_in = 0;
            for (uint32_t k = 0; k < nc && k < RADIX; k++)
                is_in |= cand[k] == l;
            CHECK(is_in);
            if (g.node_kind[at] == TOPO_SWITCH && g.node_tier[at] == 1 &&
                g.link_dst[l] != DOWN + 3 && g.node_kind[g.link_dst[l]] == TOPO_SWITCH)
                CHECK_INT_EQ(nc, S);
            if (g.link_dst[l] == DOWN + 3)
                CHECK_INT_EQ(nc, 1);
        }
    }
    CHECK_INT_EQ(topo_next_hops(r, 3, 3, cand, RADIX), 0);
out:
    free(u);
    topo_router_destroy(r);
    topo_graph_fini(&g);
}

int main(void)
{
    test_next_hops();
    test_lone_message(PKT_IB);
    test_lone_message(PKT_ROCE);
    test_permutation(PKT_IB);
    test_permutation(PKT_ROCE);
    return check_report();
}
