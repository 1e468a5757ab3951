/* test_packet.c - the packet tier (models/packet.h): store-and-forward
 * pipeline closed forms, the IB credit loop's closed form, N->1 incast
 * against the bottleneck's drain time, byte conservation, buffer bounds
 * under IB and RoCE, PFC pause spreading onto a victim flow, determinism
 * and bad input.
 *
 * Numbers: MTU 4096 B (the top of the IB/RoCE path MTU set, components.md
 * 5.7); links at 50e9 B/s (NDR / 400GbE, hardware.md 3.1); 500 ns per hop
 * (the link delay ASTRA-sim's ns-3 topologies and SimAI use, hardware.md
 * 3.5). PFC: xon covers one resume round trip at line rate, 2 BDP + 2 MTU
 * (the headroom formula of components.md 5.2, BDP = rate x one-way delay);
 * xoff = xon + 3 KiB (the HPCC switch MMU's resume offset, components.md
 * 5.2); buffer = xoff + 1 MTU (the packet that crosses xoff) + 2 BDP + 2
 * MTU of headroom (components.md 5.2).
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
#define BDP (B * D)
#define XON (2 * BDP + 2 * MTU)
#define XOFF (XON + 3072)
#define BUFFER (XOFF + MTU + 2 * BDP + 2 * MTU)

#define MAX_DONE 64
typedef struct done_log {
    sim_engine *eng;
    size_t n;
    double time[MAX_DONE]; /* by tag */
} done_log;

static void on_done(void *ctx, uint64_t tag)
{
    done_log *d = ctx;
    d->n++;
    if (tag < MAX_DONE)
        d->time[tag] = sim_now(d->eng);
}

typedef struct rig {
    topo_graph g;
    topo_router *r;
    sim_engine *eng;
    pkt_net *net;
    done_log log;
} rig;

static pkt_config config(enum pkt_technology t, double buffer, double xoff, double xon)
{
    pkt_config c = {MTU, t, buffer, xoff, xon, D, {0}, 0, PKT_LOSSLESS, 0};
    return c;
}

/* A 2-tier leaf-spine of radix-`radix` switches, `leaves` leaves with
 * `down` hosts each (host h under leaf h / down), and a net on it. */
static int rig_open(rig *x, unsigned radix, unsigned leaves, unsigned down, const pkt_config *c)
{
    char why[256];
    x->log.n = 0;
    if (topo_leafspine(radix, leaves, down, B, &x->g, why, sizeof why)) {
        fprintf(stderr, "leafspine: %s\n", why);
        return -1;
    }
    topo_route_config rc = {TOPO_BALANCE_ECMP, TOPO_PATH_MINIMAL, 1, 7};
    x->r = topo_router_create(&x->g, &rc, why, sizeof why);
    x->eng = sim_engine_create();
    x->log.eng = x->eng;
    x->net = x->r ? pkt_net_create(x->eng, &x->g, x->r, c, why, sizeof why) : NULL;
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

static void check_consistent(const pkt_net *net)
{
    char why[256] = "";
    int rc = pkt_net_check(net, why, sizeof why);
    CHECK_INT_EQ(rc, 0);
    if (rc)
        fprintf(stderr, "%s\n", why);
}

/* One message alone over h hops (2: under one leaf, 4: across leaves):
 * packet i leaves link k at (i + k) s + (k - 1) d, s = mtu / B, so the last
 * of P full packets arrives at (P + h - 1) s + h d. With a short last packet
 * of r bytes, it queues behind packet P-2 at every hop but the first, and
 * arrives at (P + h - 2) s + r / B + h d. The buffer is the whole message,
 * so credits never bind. */
static void test_pipeline(enum pkt_technology t)
{
    const unsigned hops[2] = {2, 4};
    const uint32_t dst[2] = {1, 4}; /* host 0 -> host 1 (same leaf), host 4 (leaf 1) */
    const double P = 37, r = 1000;
    for (int i = 0; i < 2; i++) {
        pkt_config c = config(t, 64 * MTU, 48 * MTU, 40 * MTU);
        rig x;
        if (rig_open(&x, 8, 4, 4, &c)) {
            CHECK(0);
            continue;
        }
        double h = hops[i], s = MTU / B;
        CHECK_INT_EQ(pkt_send(x.net, 0, dst[i], P * MTU, 1, on_done, &x.log, 0), 0);
        CHECK_INT_EQ(pkt_send(x.net, 8, dst[i] + 8, (P - 1) * MTU + r, 2, on_done, &x.log, 1),
                     0); /* the same shape two leaves over: a disjoint path */
        sim_run(x.eng, INFINITY);
        CHECK_INT_EQ(x.log.n, 2);
        CHECK_REL(x.log.time[0], (P + h - 1) * s + h * D, 1e-12);
        CHECK_REL(x.log.time[1], (P + h - 2) * s + r / B + h * D, 1e-12);
        const pkt_net_stats *st = pkt_net_get_stats(x.net);
        CHECK_INT_EQ(st->packet_hops, 2 * P * h);
        CHECK_INT_EQ(st->pauses, 0);
        CHECK(st->bytes_delivered == st->bytes_sent);
        check_consistent(x.net);
        rig_close(&x);
    }
}

/* IB with one MTU of buffer per port: a packet may leave only after the
 * previous one's credit is back. Over host -> leaf -> host the cycle is s
 * (first link) + d + s (second link) + d (credit back), so the last of P
 * packets arrives at P (2 s + 2 d). */
static void test_credit_loop(void)
{
    pkt_config c = config(PKT_IB, MTU, 0, 0);
    rig x;
    if (rig_open(&x, 8, 4, 4, &c)) {
        CHECK(0);
        return;
    }
    const double P = 20, s = MTU / B;
    CHECK_INT_EQ(pkt_send(x.net, 0, 1, P * MTU, 1, on_done, &x.log, 0), 0);
    sim_run(x.eng, INFINITY);
    CHECK_INT_EQ(x.log.n, 1);
    CHECK_REL(x.log.time[0], P * (2 * s + 2 * D), 1e-12);
    CHECK(pkt_net_get_stats(x.net)->max_held_bytes == MTU);
    check_consistent(x.net);
    rig_close(&x);
}

typedef struct incast_result {
    double last_s, bound_s, s_per_mtu;
    double max_held, bytes_sent, bytes_delivered;
    uint64_t pauses, digest, packet_hops;
} incast_result;

/* N senders, hosts 4, 8, ..., 4N (leaves 1..N of a radix-12 leaf-spine with
 * 4 hosts per leaf, 8 spines), each send S bytes to host 0 (leaf 0). The
 * first packets reach leaf 0 at 3 (s + d); from then on the leaf's link to
 * host 0 is the bottleneck and, if it never idles, the last byte arrives at
 * N S / B + 3 s + 4 d: bound_s. */
static int incast(unsigned N, double S, const pkt_config *c, incast_result *out)
{
    rig x;
    if (rig_open(&x, 12, N + 1, 4, c))
        return -1;
    for (unsigned i = 1; i <= N; i++)
        if (pkt_send(x.net, 4 * i, 0, S, i, on_done, &x.log, i))
            return -1;
    sim_run(x.eng, INFINITY);
    double s = MTU / B, last = 0;
    for (unsigned i = 1; i <= N; i++)
        last = x.log.time[i] > last ? x.log.time[i] : last;
    const pkt_net_stats *st = pkt_net_get_stats(x.net);
    *out = (incast_result){last, N * S / B + 3 * s + 4 * D, s, st->max_held_bytes,
                           st->bytes_sent, st->bytes_delivered, st->pauses,
                           sim_digest(x.eng), st->packet_hops};
    CHECK_INT_EQ(x.log.n, N);
    check_consistent(x.net);
    rig_close(&x);
    return 0;
}

static void test_incast(void)
{
    const unsigned Ns[3] = {2, 4, 8};
    const double S = 64 * MTU;
    for (int t = 0; t < 2; t++) {
        enum pkt_technology tech = t ? PKT_ROCE : PKT_IB;
        for (int i = 0; i < 3; i++) {
            pkt_config c = config(tech, BUFFER, XOFF, XON);
            incast_result res;
            if (incast(Ns[i], S, &c, &res)) {
                CHECK(0);
                continue;
            }
            /* the drain bound holds exactly below, within one MTU above */
            CHECK(res.last_s >= res.bound_s * (1 - 1e-12));
            CHECK(res.last_s <= res.bound_s + res.s_per_mtu);
            CHECK(res.bytes_delivered == Ns[i] * S && res.bytes_sent == Ns[i] * S);
            CHECK(res.max_held <= BUFFER);
            if (tech == PKT_ROCE) {
                /* a leaf-0 port fed at B drains at B / N (N >= 2), so it
                 * gathers about S (1 - 1/N) >= 128 KiB > xoff: it pauses */
                CHECK(res.pauses > 0);
                printf("incast roce N=%u: last %.6g s (bound %.6g), pauses %llu, max held %.0f "
                       "B of %.0f (xoff %.0f)\n", Ns[i], res.last_s, res.bound_s,
                       (unsigned long long)res.pauses, res.max_held, BUFFER, XOFF);
            } else {
                CHECK_INT_EQ(res.pauses, 0);
                printf("incast ib N=%u: last %.6g s (bound %.6g), max held %.0f B of %.0f\n",
                       Ns[i], res.last_s, res.bound_s, res.max_held, BUFFER);
            }
        }
    }
    /* control: with xoff above anything a port can gather (all N S bytes)
     * RoCE sends no PAUSE */
    pkt_config big = config(PKT_ROCE, 16 * S, 8 * S, 7 * S);
    incast_result res;
    CHECK_INT_EQ(incast(8, S, &big, &res), 0);
    CHECK_INT_EQ(res.pauses, 0);
    CHECK(res.last_s <= res.bound_s + res.s_per_mtu);
}

/* Head-of-line blocking by PFC. Radix-4 leaf-spine, 4 leaves of 3 hosts,
 * one spine. Incast: hosts 3, 6, 9 (leaves 1-3) send S each to host 0; the
 * spine's link to leaf 0 drains the three at B / 3 each, so the spine's
 * ingress ports from leaves 1-3 fill and pause the leaves' uplinks. Victim:
 * host 4 (leaf 1) sends S/4 to host 7 (leaf 2): it shares leaf 1's uplink
 * with host 3 but not the congested egress. Alone it takes its pipeline
 * time T. Without flow control a FIFO link shared by two backlogged senders
 * gives each at least half its rate, so sharing alone costs at most 2 T
 * (the control run, xoff above what any port gathers, checks that); with
 * PFC the paused uplink carries host 3's packets only as fast as leaf 0
 * drains them (B / 3) and the victim's, interleaved with them, about as
 * fast: up to 3 T once the ports are full (measured x2.42: the victim's
 * first packets pass before the pauses start; the control gives x1.70).
 * So the test asserts T_pfc > 2 T, and T_control <= 2 T. */
static double victim_time(const pkt_config *c, int with_incast, uint64_t *pauses)
{
    rig x;
    const double S = 256 * MTU;
    if (rig_open(&x, 4, 4, 3, c))
        return -1;
    if (with_incast)
        for (unsigned i = 1; i <= 3; i++)
            if (pkt_send(x.net, 3 * i, 0, S, i, on_done, &x.log, i))
                return -1;
    if (pkt_send(x.net, 4, 7, S / 4, 99, on_done, &x.log, 0))
        return -1;
    sim_run(x.eng, INFINITY);
    double t = x.log.time[0];
    *pauses = pkt_net_get_stats(x.net)->pauses;
    CHECK(pkt_net_get_stats(x.net)->max_held_bytes <= c->buffer_bytes);
    check_consistent(x.net);
    rig_close(&x);
    return t;
}

static void test_pause_spreading(void)
{
    pkt_config c = config(PKT_ROCE, BUFFER, XOFF, XON);
    uint64_t p_alone, p_pfc, p_ctl, p_ib;
    double alone = victim_time(&c, 0, &p_alone);
    double pfc = victim_time(&c, 1, &p_pfc);
    pkt_config nopause = config(PKT_ROCE, 4096 * MTU, 2048 * MTU, 2047 * MTU);
    double ctl = victim_time(&nopause, 1, &p_ctl);
    pkt_config ib = config(PKT_IB, BUFFER, XOFF, XON);
    double ibt = victim_time(&ib, 1, &p_ib);
    double P = 64, s = MTU / B;
    CHECK_REL(alone, (P + 3) * s + 4 * D, 1e-12); /* 4 hops, idle */
    CHECK_INT_EQ(p_alone, 0);
    CHECK(p_pfc > 0);
    CHECK_INT_EQ(p_ctl, 0);
    CHECK(ctl <= 2 * alone);
    CHECK(pfc > 2 * alone);
    printf("victim: alone %.6g s, shared FIFO without pauses %.6g s (x%.2f), RoCE PFC %.6g s "
           "(x%.2f, %llu pauses), IB credits %.6g s (x%.2f)\n", alone, ctl, ctl / alone, pfc,
           pfc / alone, (unsigned long long)p_pfc, ibt, ibt / alone);
}

static void test_determinism(void)
{
    pkt_config c = config(PKT_ROCE, BUFFER, XOFF, XON);
    incast_result a, b;
    CHECK_INT_EQ(incast(8, 48 * MTU + 123, &c, &a), 0);
    CHECK_INT_EQ(incast(8, 48 * MTU + 123, &c, &b), 0);
    CHECK(a.digest == b.digest && a.digest != 0);
    CHECK(a.last_s == b.last_s && a.packet_hops == b.packet_hops && a.pauses == b.pauses);
    c.technology = PKT_IB;
    CHECK_INT_EQ(incast(8, 48 * MTU + 123, &c, &b), 0);
    CHECK(a.digest != b.digest); /* the credit events enter the digest */
}

static void test_bad_input(void)
{
    char why[256];
    pkt_config c = config(PKT_ROCE, BUFFER, XOFF, XON);
    CHECK_INT_EQ(pkt_config_check(&c, why, sizeof why), 0);
    pkt_config bad = c;
    bad.xon_bytes = XOFF;
    CHECK_INT_EQ(pkt_config_check(&bad, why, sizeof why), -1);
    CHECK_CONTAINS(why, "xon_bytes < xoff_bytes");
    bad = c;
    bad.xoff_bytes = BUFFER + 1;
    CHECK_INT_EQ(pkt_config_check(&bad, why, sizeof why), -1);
    bad = c;
    bad.mtu_bytes = 4096.5;
    CHECK_INT_EQ(pkt_config_check(&bad, why, sizeof why), -1);
    bad = c;
    bad.mtu_bytes = BUFFER * 2;
    CHECK_INT_EQ(pkt_config_check(&bad, why, sizeof why), -1);
    bad = c;
    bad.hop_latency_s = NAN;
    CHECK_INT_EQ(pkt_config_check(&bad, why, sizeof why), -1);
    bad = c;
    bad.buffer_bytes = INFINITY;
    CHECK_INT_EQ(pkt_config_check(&bad, why, sizeof why), -1);
    bad = c;
    bad.technology = (enum pkt_technology)7;
    CHECK_INT_EQ(pkt_config_check(&bad, why, sizeof why), -1);
    bad = config(PKT_IB, BUFFER, 0, 0); /* thresholds unused under IB */
    CHECK_INT_EQ(pkt_config_check(&bad, why, sizeof why), 0);

    rig x;
    if (rig_open(&x, 8, 4, 4, &c)) {
        CHECK(0);
        return;
    }
    CHECK(pkt_net_create(x.eng, &x.g, x.r, &(pkt_config){0}, why, sizeof why) == NULL);
    CHECK_INT_EQ(pkt_send(x.net, 0, 0, MTU, 1, NULL, NULL, 0), -1);
    CHECK_INT_EQ(pkt_send(x.net, 0, x.g.n_nodes - 1, MTU, 1, NULL, NULL, 0), -1); /* a switch */
    CHECK_INT_EQ(pkt_send(x.net, 0, 99999, MTU, 1, NULL, NULL, 0), -1);
    CHECK_INT_EQ(pkt_send(x.net, 0, 1, 0, 1, NULL, NULL, 0), -1);
    CHECK_INT_EQ(pkt_send(x.net, 0, 1, 10.5, 1, NULL, NULL, 0), -1);
    CHECK_INT_EQ(pkt_send(x.net, 0, 1, NAN, 1, NULL, NULL, 0), -1);
    CHECK_CONTAINS(pkt_net_error(x.net), "whole number");
    CHECK_INT_EQ(pkt_net_get_stats(x.net)->messages_sent, 0);
    CHECK_INT_EQ(pkt_send(x.net, 0, 1, 1, 1, NULL, NULL, 0), 0); /* one byte, no callback */
    sim_run(x.eng, INFINITY);
    CHECK_INT_EQ(pkt_net_get_stats(x.net)->messages_delivered, 1);
    check_consistent(x.net);
    pkt_net_destroy(NULL);
    rig_close(&x);
}

int main(void)
{
    test_pipeline(PKT_IB);
    test_pipeline(PKT_ROCE);
    test_credit_loop();
    test_incast();
    test_pause_spreading();
    test_determinism();
    test_bad_input();
    return check_report();
}
