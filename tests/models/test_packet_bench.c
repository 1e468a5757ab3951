/* test_packet_bench.c - models/packet_bench.h against closed forms: one
 * send over 2 and 4 links takes (P + h - 1) MTU/B + h d on the packet tier
 * and b/B + h d on the flow tier; an incast of N - 1 senders of b bytes
 * into one host takes (N - 1) b / B + 2 d on the flow tier (one bottleneck,
 * 2 links under one leaf) and no less on the packet tier; all-to-all
 * delivers N(N - 1) messages with bytes conserved; the PFC rule; bad input.
 * Link numbers as test_packet.c: 50e9 B/s, 500 ns, MTU 4096 B.
 */
#include <math.h>
#include <stdio.h>

#include "check.h"
#include "fattree.h"
#include "packet_bench.h"
#include "routing.h"

#define B 50e9
#define D 500e-9
#define MTU 4096.0

static int rig(topo_graph *g, topo_router **r)
{
    char why[256];
    if (topo_leafspine(8, 4, 4, B, g, why, sizeof why)) { /* 4 leaves of 4 hosts */
        fprintf(stderr, "leafspine: %s\n", why);
        return -1;
    }
    topo_route_config rc = {TOPO_BALANCE_ECMP, TOPO_PATH_MINIMAL, 1, 7};
    *r = topo_router_create(g, &rc, why, sizeof why);
    return *r ? 0 : -1;
}

int main(void)
{
    topo_graph g;
    topo_router *r = NULL;
    CHECK(rig(&g, &r) == 0);
    if (!r)
        return check_report();
    double xoff, xon;
    char why[256];
    CHECK(pkb_pfc_rule(1e6, MTU, B, D, &xoff, &xon, why, sizeof why) == 0);
    CHECK_REL(xoff, 1e6 - (2 * B * D + 2 * MTU), 1e-15);
    CHECK_REL(xon, xoff - 3072, 1e-15);
    CHECK(pkb_pfc_rule(20000, MTU, B, D, &xoff, &xon, why, sizeof why) == -1);
    pkt_config c = {.mtu_bytes = MTU, .technology = PKT_ROCE, .buffer_bytes = 1e6,
                    .hop_latency_s = D};
    pkb_pfc_rule(c.buffer_bytes, MTU, B, D, &c.xoff_bytes, &c.xon_bytes, NULL, 0);
    pkt_config ib = c;
    ib.technology = PKT_IB;

    /* send: ranks 2 with stride 1 (same leaf, h = 2) and stride 4 (next leaf, h = 4) */
    const double P = 64, bytes = P * MTU;
    for (int t = 0; t < 2; t++)
        for (unsigned stride = 1; stride <= 4; stride += 3) {
            double h = stride == 1 ? 2 : 4;
            pkb_result res;
            CHECK(pkb_run(&g, r, t ? &ib : &c, PKB_SEND, 2, stride, bytes, &res, why,
                          sizeof why) == 0);
            CHECK_REL(res.packet_time_s, (P + h - 1) * MTU / B + h * D, 1e-12);
            CHECK_REL(res.flow_time_s, bytes / B + h * D, 1e-12);
            CHECK(res.packet_time_s >= res.flow_time_s);
            CHECK(res.messages == 1 && res.receivers == 1);
            CHECK(res.stats.packet_hops == (uint64_t)(P * h));
        }

    /* incast under one leaf: 3 senders into host 0 */
    pkb_result in;
    CHECK(pkb_run(&g, r, &c, PKB_INCAST, 4, 1, bytes, &in, why, sizeof why) == 0);
    CHECK_REL(in.flow_time_s, 3 * bytes / B + 2 * D, 1e-12);
    CHECK(in.packet_time_s >= 3 * bytes / B);
    CHECK(in.stats.max_held_bytes <= c.buffer_bytes);
    CHECK_REL(in.goodput_min_bytes_per_s, 3 * bytes / in.packet_time_s, 1e-12);

    /* all-to-all over 8 hosts (two per leaf): every message, every byte */
    pkb_result a;
    CHECK(pkb_run(&g, r, &c, PKB_ALLTOALL, 8, 2, 10000, &a, why, sizeof why) == 0);
    CHECK(a.messages == 56 && a.receivers == 8);
    CHECK(a.stats.bytes_delivered == 56 * 10000.0);
    CHECK(a.packet_time_s > 0 && isfinite(a.packet_time_s) && a.flow_time_s > 0);

    /* bad input: -1, never a crash */
    CHECK(pkb_run(&g, r, &c, PKB_SEND, 1, 1, bytes, &a, why, sizeof why) == -1);
    CHECK(pkb_run(&g, r, &c, PKB_SEND, 5, 4, bytes, &a, why, sizeof why) == -1); /* host 16 */
    CHECK(pkb_run(&g, r, &c, PKB_SEND, 2, 1, 0, &a, why, sizeof why) == -1);
    CHECK(pkb_run(&g, r, &c, PKB_SEND, 2, 1, 1.5, &a, why, sizeof why) == -1);
    CHECK(pkb_run(&g, r, &c, (enum pkb_op)7, 2, 1, 8, &a, why, sizeof why) == -1);
    enum pkb_op op;
    CHECK(pkb_op_parse("incast", &op) == 0 && op == PKB_INCAST);
    CHECK(pkb_op_parse("allreduce", &op) == -1);
    topo_router_destroy(r);
    topo_graph_fini(&g);
    return check_report();
}
