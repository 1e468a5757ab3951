/* test_packet_df_ugalg.c - UGAL-G on a Dragonfly in the packet tier
 * (pkt_config.is_adaptive 4; models/packet_df.c, docs/fabric.md "UGAL-G"):
 * at the source router a packet takes the minimal path unless the Valiant
 * path of its drawn group has the smaller sum of (queued bytes + size) /
 * rate over its links from there on (every queue on both paths read:
 * global knowledge).
 *
 * The Dragonfly of test_packet_df (p = 2, a = 4, h = 2: 9 groups, 72 hosts,
 * every link 50e9 B/s, MTU 4096 B, components.md 5.7; 500 ns per hop,
 * hardware.md 3.5; IB buffer 16 MTU per port, RoCE PFC by components.md
 * 5.2's headroom rule), messages of M = 64 MTU:
 *  - a lone message on an idle net: every queue empty, so UGAL-G is
 *    minimal, bit for bit the minimal mode on the same VCs (3);
 *  - the group shift (host h of group i to the same host of group i + 1):
 *    UGAL-G between the bounds of test_packet_df, (16/9) M / B (the best
 *    mix of minimal and Valiant) <= T < 8 M / B (minimal's), under IB and
 *    RoCE, every byte delivered, deterministic, some packets Valiant and
 *    some not;
 *  - a random permutation: conserved, deterministic;
 *  - is_adaptive 4 refused on a folded Clos, 5 refused by the config check.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dragonfly.h"
#include "fattree.h"
#include "engine.h"
#include "packet.h"
#include "routing.h"

#include "packet_df_fixture.h"

static void test_lone(enum pkt_technology t)
{
    uint32_t src[1] = {0}, dst[1] = {3 * PER_GROUP + 5};
    run_out g, m;
    CHECK_INT_EQ(run(t, 4, 0, src, dst, 1, &g), 0);
    CHECK_INT_EQ(run(t, 3, 0, src, dst, 1, &m), 0);
    CHECK(g.consistent && g.done == 1);
    CHECK(memcmp(&g.t_end, &m.t_end, sizeof g.t_end) == 0);
    CHECK(g.valiant == 0 && g.hops == m.hops);
    printf("%s lone message: UGAL-G %a s, minimal %a s, %llu hops\n",
           t == PKT_IB ? "IB  " : "RoCE", g.t_end, m.t_end, (unsigned long long)g.hops);
}

static void test_shift(enum pkt_technology t)
{
    uint32_t src[HOSTS], dst[HOSTS];
    shift(src, dst);
    double min_bound = 8 * M / B, mix_bound = 16 * M / (9 * B);
    run_out g, g2, l;
    CHECK_INT_EQ(run(t, 4, 0, src, dst, HOSTS, &g), 0);
    CHECK_INT_EQ(run(t, 4, 0, src, dst, HOSTS, &g2), 0);
    CHECK_INT_EQ(run(t, 1, 0, src, dst, HOSTS, &l), 0);
    printf("%s group shift, %.0f B each: UGAL-G %.3f us (%llu Valiant packets), UGAL-L %.3f us "
           "(%llu); bounds %.3f us (best mix), %.3f us (minimal)\n",
           t == PKT_IB ? "IB  " : "RoCE", M, g.t_end * 1e6, (unsigned long long)g.valiant,
           l.t_end * 1e6, (unsigned long long)l.valiant, mix_bound * 1e6, min_bound * 1e6);
    CHECK(g.consistent && g.done == HOSTS);
    CHECK(g.digest == g2.digest && g.t_end == g2.t_end);
    CHECK(g.t_end >= mix_bound && g.t_end < min_bound);
    CHECK(g.valiant > 0 && g.valiant < HOSTS * 64);
    CHECK(g.digest != l.digest); /* not UGAL-L's choices */
}

static void test_permutation(void)
{
    uint32_t src[HOSTS], dst[HOSTS];
    permutation(src, dst);
    run_out g, g2;
    CHECK_INT_EQ(run(PKT_IB, 4, 0, src, dst, HOSTS, &g), 0);
    CHECK_INT_EQ(run(PKT_IB, 4, 0, src, dst, HOSTS, &g2), 0);
    printf("IB   random permutation: UGAL-G %.3f us, %llu Valiant packets\n", g.t_end * 1e6,
           (unsigned long long)g.valiant);
    CHECK(g.consistent && g.done == HOSTS);
    CHECK(g.digest == g2.digest && g.t_end == g2.t_end);
}

static void test_refusals(void)
{
    char why[256];
    topo_graph g;
    CHECK(topo_fattree_kary(4, B, &g, why, sizeof why) == 0);
    topo_route_config rc = {TOPO_BALANCE_ECMP, TOPO_PATH_MINIMAL, 1, 5};
    topo_router *r = topo_router_create(&g, &rc, why, sizeof why);
    sim_engine *eng = sim_engine_create();
    pkt_config c = {.mtu_bytes = MTU, .technology = PKT_IB, .buffer_bytes = BUFFER,
                    .hop_latency_s = D, .is_adaptive = 4};
    CHECK_INT_EQ(pkt_config_check(&c, why, sizeof why), 0);
    CHECK(pkt_net_create(eng, &g, r, &c, why, sizeof why) == NULL);
    printf("refused: %s\n", why);
    c.is_adaptive = 5; /* PAR: a Dragonfly's too */
    CHECK(pkt_net_create(eng, &g, r, &c, why, sizeof why) == NULL);
    c.is_adaptive = 6;
    CHECK(pkt_config_check(&c, why, sizeof why) == -1);
    sim_engine_destroy(eng);
    topo_router_destroy(r);
    topo_graph_fini(&g);
}

int main(void)
{
    test_lone(PKT_IB);
    test_lone(PKT_ROCE);
    test_shift(PKT_IB);
    test_shift(PKT_ROCE);
    test_permutation();
    test_refusals();
    return check_report();
}
