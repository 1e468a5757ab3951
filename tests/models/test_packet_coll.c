/* test_packet_coll.c - collectives on the packet tier (models/packet_coll.h)
 * against the flow tier (nc_simulate) on the same plan, graph and routes.
 *
 * Agreement bound. Take a one-phase ring plan without latency: every
 * connection moves b bytes; on the flow tier the coupled phase runs at
 * min_l B / W_l (W_l: the connections routed over link l, all links at B),
 * so T_flow = W b / B with W = max_l W_l, exactly. On the packet tier the
 * fullest link must carry W b bytes at B, so T_pkt >= T_flow. Above: the
 * last packet of a message on h links needs (h - 1) more serialisations of
 * s = MTU / B and h hop latencies d after the bottleneck sent it, and at a
 * shared link W messages interleave packet by packet, so the last message
 * can wait up to W - 1 further packets there:
 *     T_flow <= T_pkt <= T_flow + (h + W - 1) s + h d          (bound E)
 * with h the most links of any connection. E does not grow with b, so
 * T_pkt / T_flow -> 1 as b grows: 1 + E / T_flow. Without a shared link
 * (W = 1) the excess is one message's pipeline, (h - 1) s + h d, exactly,
 * and no PFC pause fires (asserted). Scattered ranks (every hop through a
 * spine, ECMP puts W = 4 connections on a link) pause under PFC; the
 * bound still holds (the paused links' queues keep the bottleneck busy).
 *
 * Numbers as tests/models/test_packet.c: MTU 4096 B (components.md 5.7),
 * 50e9 B/s links (hardware.md 3.1), 500 ns a hop (hardware.md 3.5), PFC
 * xon = 2 BDP + 2 MTU, xoff = xon + 3 KiB, buffer = xoff + MTU + 2 BDP + 2
 * MTU (components.md 5.2). Also: conservation (the bytes the plan says,
 * whole), pkt_net_check, determinism (the digest twice), dependency and
 * latency semantics (a chained halving-doubling plan: each phase starts at
 * its predecessor's end; a phase latency adds exactly), refusals.
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
#include "routing.h"

#define MTU 4096.0
#define B 50e9
#define D 500e-9
#define BDP (B * D)
#define XON (2 * BDP + 2 * MTU)
#define XOFF (XON + 3072)
#define BUFFER (XOFF + MTU + 2 * BDP + 2 * MTU)
#define MIB 1048576.0

typedef struct rig {
    topo_graph g;
    topo_router *r;
    nc_fabric f;
} rig;

/* kind 0: k = 4 fat-tree (16 hosts); 1: leaf-spine, 4 leaves of 4 hosts,
 * 4 spines (radix 8) */
static int rig_open(rig *x, int kind)
{
    char why[256];
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
    return x->r ? 0 : -1;
}

static void rig_close(rig *x)
{
    topo_router_destroy(x->r);
    topo_graph_fini(&x->g);
}

static pkt_config config(enum pkt_technology t)
{
    pkt_config c = {.mtu_bytes = MTU, .technology = t, .buffer_bytes = BUFFER, .xoff_bytes = XOFF,
                    .xon_bytes = XON, .hop_latency_s = D};
    return c;
}

/* the most links of a connection (h) and of connections on a link (W) of
 * a one-phase plan, routed as both tiers route it */
static void route_shape(const rig *x, const nc_plan *p, unsigned *h, unsigned *w)
{
    size_t cap = topo_route_max_usages(x->r);
    topo_usage *u = malloc((cap + 1) * sizeof *u);
    unsigned *on = calloc(x->g.n_links, sizeof *on);
    *h = *w = 0;
    for (uint32_t k = 0; u && on && k < p->phase[0].n_conn; k++) {
        const nc_conn *c = &p->conn[p->phase[0].conn_first + k];
        long n = topo_route(x->r, c->src, c->dst, ((uint64_t)0 << 32) ^ k, NULL, u, cap);
        CHECK(n > 0);
        *h = (unsigned)n > *h ? (unsigned)n : *h;
        for (long i = 0; i < n; i++)
            if (++on[u[i].link] > *w)
                *w = on[u[i].link];
    }
    free(u);
    free(on);
}

static const char *const fabric_names[2] = {"fat-tree k=4", "leaf-spine 4x4"};

/* ranks 0..15, in order or scattered one per leaf in turn (every hop
 * crosses the spine: ECMP collisions) */
static void ranks_of(int scattered, uint32_t *r)
{
    for (uint32_t i = 0; i < 16; i++)
        r[i] = scattered ? (i % 4) * 4 + i / 4 : i;
}

static void test_agreement(int kind, int scattered, enum pkt_technology tech,
                           enum nc_collective coll)
{
    rig x;
    if (rig_open(&x, kind)) {
        CHECK(0);
        return;
    }
    uint32_t ranks[16];
    ranks_of(scattered, ranks);
    pkt_config cfg = config(tech);
    const double sizes[2] = {1 * MIB, 16 * MIB};
    double ratio[2] = {0, 0};
    for (int s = 0; s < 2; s++) {
        nc_plan p;
        sim_error err = {0};
        int rc = nc_plan_build(&p, &x.f, coll, NC_ALGO_RING, ranks, 16, sizes[s], &err);
        CHECK_INT_EQ(rc, 0);
        if (rc)
            break;
        CHECK_INT_EQ(p.n_phases, 1);
        pkc_compare a, b;
        char why[256] = "";
        rc = pkc_compare_run(&x.f, &cfg, &p, &a, why, sizeof why);
        CHECK_INT_EQ(rc, 0);
        if (rc) {
            fprintf(stderr, "pkc_compare_run: %s\n", why);
            nc_plan_free(&p);
            break;
        }
        unsigned h, w;
        route_shape(&x, &p, &h, &w);
        double bytes = p.phase[0].bytes, sl = MTU / B;
        double e = (h + w - 1) * sl + h * D;
        /* the flow tier's closed form, then the bound */
        CHECK_REL(a.flow.time_s, w * bytes / B, 1e-9);
        CHECK(a.packet.time_s >= a.flow.time_s * (1 - 1e-12));
        CHECK(a.packet.time_s <= a.flow.time_s + e);
        ratio[s] = a.packet.time_s / a.flow.time_s;
        /* conservation: the plan's bytes, whole, all delivered */
        CHECK_INT_EQ(a.packet.messages, 16);
        CHECK(a.packet.plan_bytes == 16 * bytes && bytes == floor(bytes));
        CHECK(a.packet.sent_bytes == a.packet.plan_bytes);
        CHECK(a.packet.stats.bytes_delivered == a.packet.plan_bytes);
        CHECK_INT_EQ(a.packet.stats.packets_delivered, 16 * (uint64_t)ceil(bytes / MTU));
        CHECK_INT_EQ(a.check_rc, 0);
        if (w == 1) /* no link shared: one message's pipeline exactly, and no pause */
            CHECK_REL(a.packet.time_s, a.flow.time_s + (h - 1) * sl + h * D, 1e-9);
        if (w == 1)
            CHECK_INT_EQ(a.packet.stats.pauses, 0);
        CHECK(a.packet.max_queued_bytes >= MTU && a.packet.max_queued_link != UINT32_MAX);
        /* determinism */
        rc = pkc_compare_run(&x.f, &cfg, &p, &b, why, sizeof why);
        CHECK(rc == 0 && b.digest == a.digest && a.digest != 0);
        CHECK(b.packet.time_s == a.packet.time_s);
        printf("%s %s %s %s S=%.0f MiB: h=%u W=%u flow %.4f us packet %.4f us ratio %.5f "
               "bound 1 + %.5f\n", fabric_names[kind], scattered ? "scattered" : "in order",
               tech == PKT_IB ? "ib" : "roce", nc_collective_name(coll), sizes[s] / MIB, h, w,
               a.flow.time_s * 1e6, a.packet.time_s * 1e6, ratio[s], e / a.flow.time_s);
        nc_plan_free(&p);
    }
    /* towards 1 as the size grows */
    CHECK(ratio[1] >= 1 && ratio[1] < ratio[0]);
    rig_close(&x);
}

/* a chained plan: every phase starts at its predecessor's end; adding a
 * phase latency L to every phase moves the end by exactly phases x L */
static void test_dependencies(enum pkt_technology tech)
{
    rig x;
    if (rig_open(&x, 0)) {
        CHECK(0);
        return;
    }
    uint32_t ranks[16];
    ranks_of(0, ranks);
    pkt_config cfg = config(tech);
    double end[2] = {0, 0};
    for (int lat = 0; lat < 2; lat++) {
        nc_fabric f = x.f;
        if (lat)
            nc_fabric_defaults(&f), f.g = &x.g, f.router = x.r; /* NCCL's latencies */
        nc_plan p;
        sim_error err = {0};
        CHECK_INT_EQ(nc_plan_build(&p, &f, NC_ALLREDUCE, NC_ALGO_HALVING_DOUBLING, ranks, 16,
                                   4 * MIB, &err), 0);
        CHECK_INT_EQ(p.n_phases, 8); /* 2 log2 16 */
        sim_engine *eng = sim_engine_create();
        char why[256] = "";
        pkt_net *net = pkt_net_create(eng, &x.g, x.r, &cfg, why, sizeof why);
        double st[8], en[8];
        pkc_result r;
        CHECK_INT_EQ(pkc_run(eng, net, &p, st, en, &r, why, sizeof why), 0);
        CHECK(st[0] == 0);
        double lat_sum = 0;
        for (int i = 0; i < 8; i++) {
            lat_sum += p.phase[i].latency_s;
            if (i)
                CHECK(st[i] == en[i - 1]);
            CHECK(en[i] > st[i] + p.phase[i].latency_s);
        }
        CHECK(r.time_s == en[7]);
        CHECK_INT_EQ(r.messages, 8 * 16);
        CHECK(r.stats.bytes_delivered == r.plan_bytes && r.sent_bytes == r.plan_bytes);
        CHECK_INT_EQ(pkt_net_check(net, why, sizeof why), 0);
        end[lat] = r.time_s;
        if (lat) /* the messages do not see the latencies: they shift phases whole */
            CHECK_REL(end[1] - end[0], lat_sum, 1e-9);
        /* the flow tier on the same plan: the packet tier never faster */
        nc_result fr;
        CHECK_INT_EQ(nc_simulate(&p, &f, &fr, &err), 0);
        CHECK(r.time_s >= fr.time_s * (1 - 1e-12));
        printf("halving-doubling %s %s: flow %.4f us packet %.4f us\n",
               tech == PKT_IB ? "ib" : "roce", lat ? "NCCL latencies" : "no latency",
               fr.time_s * 1e6, r.time_s * 1e6);
        pkt_net_destroy(net);
        sim_engine_destroy(eng);
        nc_plan_free(&p);
    }
    rig_close(&x);
}

static void test_refusals(void)
{
    nc_phase ph = {.conn_first = 0, .n_conn = 1, .rank_first = NC_LISTED, .bytes = 4096,
                   .latency_s = 0, .rate_cap = INFINITY, .coupled = 1};
    nc_conn c = {0, NC_FIXED_LINK, 1.0};
    nc_plan p = {.phase = &ph, .n_phases = 1, .conn = &c, .n_conns = 1};
    char why[256] = "";
    /* a fixed link: an in-network phase (SHARP, test_packet_sharp.c), with
     * or without a rate cap, but never a cap of 0 */
    CHECK_INT_EQ(pkc_plan_check(&p, why, sizeof why), 0);
    ph.rate_cap = 1e9;
    CHECK_INT_EQ(pkc_plan_check(&p, why, sizeof why), 0);
    ph.rate_cap = 0;
    CHECK_INT_EQ(pkc_plan_check(&p, why, sizeof why), -1);
    CHECK(strstr(why, "in-network") != NULL);
    ph.rate_cap = INFINITY;
    c.dst = 1;
    CHECK_INT_EQ(pkc_plan_check(&p, why, sizeof why), 0);
    ph.rate_cap = 1e9;
    CHECK_INT_EQ(pkc_plan_check(&p, why, sizeof why), -1);
    CHECK(strstr(why, "rate cap") != NULL);
    ph.rate_cap = INFINITY;
    ph.bytes = NAN;
    CHECK_INT_EQ(pkc_plan_check(&p, why, sizeof why), -1);
    p.failed = 1;
    CHECK_INT_EQ(pkc_plan_check(&p, why, sizeof why), -1);
    CHECK_INT_EQ(pkc_plan_check(NULL, why, sizeof why), -1);
}

int main(void)
{
    for (int t = 0; t < 2; t++) {
        enum pkt_technology tech = t ? PKT_ROCE : PKT_IB;
        test_agreement(0, 0, tech, NC_ALLREDUCE);
        test_agreement(0, 0, tech, NC_ALLGATHER);
        test_agreement(1, 0, tech, NC_ALLREDUCE);
        test_agreement(1, 1, tech, NC_ALLREDUCE);
        test_agreement(1, 1, tech, NC_REDUCESCATTER);
        test_dependencies(tech);
    }
    test_refusals();
    return check_report();
}
