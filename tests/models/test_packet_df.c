/* test_packet_df.c - per-packet routing on a Dragonfly in the packet tier
 * (pkt_config.is_adaptive 1: UGAL-L at the source router, 2: Valiant per
 * packet; models/packet_df.c, docs/fabric.md "Per-packet UGAL on a
 * Dragonfly").
 *
 * The flow tier's case (test_netcoll's test_dragonfly_adversarial): a
 * balanced Dragonfly p = 2, a = 4, h = 2 (9 groups, 72 hosts), every link
 * 50e9 B/s; every host of group i sends M to the same host of group i + 1.
 * Minimal routing puts a group's 8 messages on its one global link to the
 * next group: >= 8 M / B. Valiant per packet spreads each group over the 7
 * other groups: each detour global link carries 2 x 8 M / 7, so
 * >= 16 M / (7 B). Also: a random permutation (uniform traffic), a lone
 * message (UGAL-L on an idle net is minimal, bit for bit), conservation,
 * out-of-order arrivals, determinism, refusals.
 *
 * MTU 4096 B (components.md 5.7), 500 ns per hop (hardware.md 3.5), IB
 * buffer 16 MTU per port (test_packet_ar's), RoCE PFC as test_packet's.
 * M = 4 MiB by default; `test_packet_df BYTES` runs the group shift alone
 * at another size (the flow tier's 100 MB: test_packet_df 100000000).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "dragonfly.h"
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
#define PER_GROUP 8u /* hosts per group: p a */

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
    pkt_net_stats st;
    int consistent;
} run_out;

static int is_plus; /* 1: the Dragonfly+ of test_plus instead */

static int dragonfly(topo_graph *g)
{
    char why[256];
    topo_dragonfly_config c = {.p = 2, .a = 4, .h = 2, .host_bytes_per_s = B,
                               .local_bytes_per_s = B, .global_bytes_per_s = B};
    topo_dragonfly_plus_config cp = {.p = 2, .leaves = 2, .spines = 2, .h = 2,
                                     .host_bytes_per_s = B, .local_bytes_per_s = B,
                                     .global_bytes_per_s = B};
    if (is_plus ? topo_dragonfly_plus(&cp, g, why, sizeof why)
                : topo_dragonfly(&c, g, why, sizeof why)) {
        fprintf(stderr, "dragonfly: %s\n", why);
        return -1;
    }
    return 0;
}

static pkt_config config(enum pkt_technology t, int mode)
{
    pkt_config c = {.mtu_bytes = MTU, .technology = t,
                    .buffer_bytes = t == PKT_IB ? BUFFER : RBUFFER, .xoff_bytes = XOFF,
                    .xon_bytes = XON, .hop_latency_s = D, .is_adaptive = mode};
    return c;
}

/* n messages src[i] -> dst[i] of `bytes` each, all at t = 0, on the
 * Dragonfly, routed minimally (ECMP, seed 5) or per packet (mode 1, 2). */
static int run(enum pkt_technology t, int mode, const uint32_t *src, const uint32_t *dst,
               unsigned n, double bytes, run_out *o)
{
    char why[256];
    topo_graph g;
    if (dragonfly(&g))
        return -1;
    topo_route_config rc = {TOPO_BALANCE_ECMP, TOPO_PATH_MINIMAL, 1, 5};
    topo_router *r = topo_router_create(&g, &rc, why, sizeof why);
    sim_engine *eng = sim_engine_create();
    pkt_config c = config(t, mode);
    pkt_net *net = r && eng ? pkt_net_create(eng, &g, r, &c, why, sizeof why) : NULL;
    int rc_out = -1;
    if (!net) {
        fprintf(stderr, "pkt_net_create: %s\n", why);
        goto out;
    }
    done_log log = {eng, 0, 0};
    for (unsigned i = 0; i < n; i++)
        if (pkt_send(net, src[i], dst[i], bytes, i, on_done, &log, i)) {
            fprintf(stderr, "pkt_send: %s\n", pkt_net_error(net));
            goto out;
        }
    sim_run(eng, INFINITY);
    o->t_end = log.last;
    o->done = log.n;
    o->digest = sim_digest(eng);
    o->st = *pkt_net_get_stats(net);
    o->consistent = pkt_net_check(net, why, sizeof why) == 0 &&
                    o->st.bytes_delivered == (double)n * bytes &&
                    o->st.bytes_sent == (double)n * bytes &&
                    o->st.packets_delivered == o->st.packets_injected &&
                    o->st.messages_delivered == n;
    if (!o->consistent)
        fprintf(stderr, "pkt_net_check: %s\n", why);
    if (t == PKT_IB && o->st.max_held_bytes > BUFFER)
        o->consistent = 0;
    rc_out = 0;
out:
    pkt_net_destroy(net);
    sim_engine_destroy(eng);
    topo_router_destroy(r);
    topo_graph_fini(&g);
    return rc_out;
}

static const char *mode_name(int mode)
{
    return mode == 0 ? "minimal, one VC" : mode == 1 ? "UGAL-L" : mode == 2 ? "Valiant"
                                                                            : "minimal, VCs";
}

/* The group shift: minimal, Valiant and UGAL-L against their bounds. */
static void test_group_shift(enum pkt_technology t, double m, int is_quick)
{
    uint32_t src[72], dst[72];
    unsigned n = 72;
    for (unsigned i = 0; i < n; i++) {
        src[i] = i;
        dst[i] = (i + PER_GROUP) % n;
    }
    run_out o[4], again;
    for (int mode = 0; mode < 4; mode++)
        if (run(t, mode, src, dst, n, m, &o[mode])) {
            CHECK(0);
            return;
        }
    double min_bound = PER_GROUP * m / B, val_bound = 2.0 * PER_GROUP * m / (7 * B);
    double packets = ceil(m / MTU) * n;
    for (int mode = 0; mode < 4; mode++) {
        printf("%s group shift, %.0f B each, %-15s: %.3f ms (x%.3f of the Valiant bound), "
               "%llu of %.0f packets Valiant, %llu out of order, %llu packet-hops\n",
               t == PKT_IB ? "IB  " : "RoCE", m, mode_name(mode), o[mode].t_end * 1e3,
               o[mode].t_end / val_bound, (unsigned long long)o[mode].st.valiant_packets,
               packets, (unsigned long long)o[mode].st.out_of_order,
               (unsigned long long)o[mode].st.packet_hops);
        CHECK_INT_EQ(o[mode].done, n);
        CHECK(o[mode].consistent);
        CHECK(o[mode].st.packets_injected == (uint64_t)packets);
    }
    printf("bounds: minimal %.3f ms (8 M / B), Valiant %.3f ms (16 M / 7 B)\n", min_bound * 1e3,
           val_bound * 1e3);
    CHECK(o[0].t_end >= min_bound);
    CHECK(o[3].t_end >= min_bound);
    CHECK(o[3].t_end < 1.1 * min_bound); /* on VCs no head-of-line blocking between groups */
    CHECK(o[2].t_end >= val_bound);
    CHECK(o[1].t_end >= val_bound * 7.0 / 9.0); /* the best mix: 2/9 minimal, 8 M x 2/9 */
    CHECK_INT_EQ(o[0].st.valiant_packets, 0);
    CHECK_INT_EQ(o[0].st.out_of_order, 0);
    CHECK_INT_EQ(o[3].st.valiant_packets, 0);
    CHECK_INT_EQ(o[3].st.out_of_order, 0);
    CHECK_INT_EQ(o[3].st.packet_hops, o[0].st.packet_hops);
    CHECK(o[2].st.valiant_packets == (uint64_t)packets); /* every pair crosses groups */
    CHECK(o[1].st.valiant_packets > 0 && o[1].st.valiant_packets < (uint64_t)packets);
    CHECK(o[1].st.out_of_order > 0);
    /* adaptive beats minimal (on the same VCs), and is within x1.2 of per-packet Valiant */
    CHECK(o[1].t_end < 0.5 * o[3].t_end);
    CHECK(o[1].t_end < 1.2 * o[2].t_end);
    CHECK(o[2].t_end < 1.15 * val_bound);
    if (is_quick)
        return;
    if (run(t, 1, src, dst, n, m, &again)) {
        CHECK(0);
        return;
    }
    CHECK(again.digest == o[1].digest && again.t_end == o[1].t_end &&
          again.st.valiant_packets == o[1].st.valiant_packets);
    CHECK(o[1].digest != o[3].digest && o[1].digest != o[2].digest);
}

/* Uniform traffic: a random permutation (a fixed LCG), 1 MiB each. UGAL-L
 * must be within 10 % of minimal on the same VCs (mode 3); per-packet
 * Valiant, with twice the global hops, and minimal on one VC are printed. */
static void test_uniform(enum pkt_technology t)
{
    uint32_t src[72], dst[72];
    unsigned n = 72;
    uint64_t x = 12345;
    for (unsigned i = 0; i < n; i++)
        src[i] = i, dst[i] = i;
    for (unsigned i = n - 1; i > 0; i--) { /* Fisher-Yates */
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        unsigned j = (unsigned)((x >> 33) % (i + 1));
        uint32_t s = dst[i];
        dst[i] = dst[j];
        dst[j] = s;
    }
    for (unsigned i = 0; i < n; i++) /* no fixed point: to the next host instead */
        if (dst[i] == i)
            dst[i] = (i + 1) % n;
    run_out o[4];
    double m = 256 * MTU;
    for (int mode = 0; mode < 4; mode++) {
        if (run(t, mode, src, dst, n, m, &o[mode])) {
            CHECK(0);
            return;
        }
        printf("%s uniform (random permutation), %.0f B each, %-15s: %.3f us, %llu Valiant "
               "packets, %llu packet-hops\n", t == PKT_IB ? "IB  " : "RoCE", m, mode_name(mode),
               o[mode].t_end * 1e6, (unsigned long long)o[mode].st.valiant_packets,
               (unsigned long long)o[mode].st.packet_hops);
        CHECK_INT_EQ(o[mode].done, n);
        CHECK(o[mode].consistent);
    }
    CHECK(o[1].t_end <= 1.10 * o[3].t_end);
    CHECK(o[2].st.packet_hops > o[1].st.packet_hops);
    CHECK(o[1].st.packet_hops >= o[3].st.packet_hops);
}

/* A lone message across groups on an idle net: UGAL-L's queues are empty,
 * the minimal path has fewer links left, so every packet stays minimal:
 * the same time and digest as minimal routing. */
static void test_lone(enum pkt_technology t)
{
    uint32_t src[1] = {0}, dst[1] = {3 * PER_GROUP + 5};
    run_out o0, o1, o2, o3;
    double m = 100 * MTU + 123;
    if (run(t, 0, src, dst, 1, m, &o0) || run(t, 1, src, dst, 1, m, &o1) ||
        run(t, 2, src, dst, 1, m, &o2) || run(t, 3, src, dst, 1, m, &o3)) {
        CHECK(0);
        return;
    }
    CHECK(o1.t_end == o0.t_end);
    CHECK(o3.t_end == o0.t_end);
    CHECK_INT_EQ(o1.st.valiant_packets, 0);
    CHECK_INT_EQ(o1.st.packet_hops, o0.st.packet_hops);
    /* minimal: host, local, global, local, host = 5 links: the pipeline */
    double P = 101, h = 5, s = MTU / B;
    CHECK_REL(o0.t_end, (P + h - 2) * s + 123 / B + h * D, 1e-12);
    CHECK(o2.t_end > o0.t_end); /* Valiant: more links */
    CHECK_INT_EQ(o2.st.valiant_packets, 101);
    CHECK(o2.consistent && o1.consistent && o0.consistent);
}

/* The in-order receiving NIC (PKT_RX_IN_ORDER, go-back-N on the lossless
 * fabric): UGAL-L's reorderings become discards and spurious resends, and
 * every message still completes, the accounting consistent. RTO 100 us: a
 * test input (a GAP in the references). */
static void test_in_order(void)
{
    uint32_t src[72], dst[72];
    unsigned n = 72;
    for (unsigned i = 0; i < n; i++) {
        src[i] = i;
        dst[i] = (i + PER_GROUP) % n;
    }
    char why[256];
    topo_graph g;
    if (dragonfly(&g)) {
        CHECK(0);
        return;
    }
    topo_route_config rc = {TOPO_BALANCE_ECMP, TOPO_PATH_MINIMAL, 1, 5};
    topo_router *r = topo_router_create(&g, &rc, why, sizeof why);
    sim_engine *eng = sim_engine_create();
    pkt_config c = config(PKT_IB, 1);
    c.reorder = PKT_RX_IN_ORDER;
    c.rto_s = 100e-6;
    pkt_net *net = pkt_net_create(eng, &g, r, &c, why, sizeof why);
    CHECK(net != NULL);
    done_log log = {eng, 0, 0};
    for (unsigned i = 0; net && i < n; i++)
        CHECK_INT_EQ(pkt_send(net, src[i], dst[i], 64 * MTU, i, on_done, &log, i), 0);
    sim_run(eng, INFINITY);
    if (net) {
        const pkt_net_stats *st = pkt_net_get_stats(net);
        printf("IB   group shift, in-order NIC, UGAL-L, 64 MTU each: %.3f us, %llu discarded, "
               "%llu resent, %llu NACKs, %llu timeouts\n", log.last * 1e6,
               (unsigned long long)st->discarded, (unsigned long long)st->resent_packets,
               (unsigned long long)st->nacks, (unsigned long long)st->timeouts);
        CHECK_INT_EQ(log.n, n);
        CHECK(st->discarded > 0 && st->resent_packets > 0);
        CHECK(st->bytes_delivered == n * 64 * MTU);
        CHECK(pkt_net_check(net, why, sizeof why) == 0);
    }
    pkt_net_destroy(net);
    sim_engine_destroy(eng);
    topo_router_destroy(r);
    topo_graph_fini(&g);
}

/* A Dragonfly+ (2 leaves and 2 spines per group, 2 global links per spine:
 * 5 groups of 4 hosts): the Valiant detour enters the third group at a
 * spine and turns at a leaf (the first switch there with hosts). The
 * group shift completes in every mode, bytes conserved, every packet
 * Valiant in mode 2, none in mode 3, Valiant paths longer. */
static void test_plus(void)
{
    uint32_t src[20], dst[20];
    unsigned n = 20;
    for (unsigned i = 0; i < n; i++) {
        src[i] = i;
        dst[i] = (i + 4) % n;
    }
    is_plus = 1;
    run_out o[4];
    double m = 64 * MTU;
    for (int mode = 1; mode < 4; mode++) {
        if (run(PKT_IB, mode, src, dst, n, m, &o[mode])) {
            CHECK(0);
            break;
        }
        printf("IB   Dragonfly+ group shift, %.0f B each, %-15s: %.3f us, %llu Valiant packets, "
               "%llu packet-hops\n", m, mode_name(mode), o[mode].t_end * 1e6,
               (unsigned long long)o[mode].st.valiant_packets,
               (unsigned long long)o[mode].st.packet_hops);
        CHECK_INT_EQ(o[mode].done, n);
        CHECK(o[mode].consistent);
    }
    is_plus = 0;
    CHECK_INT_EQ(o[2].st.valiant_packets, 64 * n);
    CHECK_INT_EQ(o[3].st.valiant_packets, 0);
    CHECK(o[2].st.packet_hops > o[3].st.packet_hops);
}

static void test_refusals(void)
{
    char why[256];
    topo_graph g;
    CHECK(topo_fattree_kary(4, B, &g, why, sizeof why) == 0);
    topo_route_config rc = {TOPO_BALANCE_ECMP, TOPO_PATH_MINIMAL, 1, 5};
    topo_router *r = topo_router_create(&g, &rc, why, sizeof why);
    sim_engine *eng = sim_engine_create();
    pkt_config c = config(PKT_IB, 2);
    CHECK(pkt_net_create(eng, &g, r, &c, why, sizeof why) == NULL);
    printf("refused: %s\n", why);
    c.is_adaptive = 3;
    CHECK(pkt_net_create(eng, &g, r, &c, why, sizeof why) == NULL);
    c.is_adaptive = 4; /* UGAL-G (test_packet_df_ugalg): a Dragonfly's too */
    CHECK(pkt_net_create(eng, &g, r, &c, why, sizeof why) == NULL);
    c.is_adaptive = 5; /* PAR (test_packet_df_par): a Dragonfly's too */
    CHECK(pkt_net_create(eng, &g, r, &c, why, sizeof why) == NULL);
    c.is_adaptive = 6;
    CHECK(pkt_config_check(&c, why, sizeof why) == -1);
    c.is_adaptive = -1;
    CHECK(pkt_config_check(&c, why, sizeof why) == -1);
    sim_engine_destroy(eng);
    topo_router_destroy(r);
    topo_graph_fini(&g);
}

int main(int argc, char **argv)
{
    if (argc > 1) { /* the group shift alone, at the size given */
        double m = atof(argv[1]);
        if (!(m >= 1) || m != floor(m) || m > 1e12) {
            fprintf(stderr, "usage: test_packet_df [BYTES per message, a whole number]\n");
            return 2;
        }
        test_group_shift(PKT_IB, m, 1);
        return check_report();
    }
    test_refusals();
    test_lone(PKT_IB);
    test_lone(PKT_ROCE);
    test_group_shift(PKT_IB, 1024 * MTU, 0);
    test_group_shift(PKT_ROCE, 1024 * MTU, 0);
    test_uniform(PKT_IB);
    test_uniform(PKT_ROCE);
    test_in_order();
    test_plus();
    return check_report();
}
