/* test_nic.c - shared NICs (topologies/nic.h): a radix-4 2-tier leaf-spine
 * of 8 NIC ports (4 leaves of 2, 2 spines) under 16 GPUs, 2 per NIC.
 * Exact counts (GPUs, NICs, switches, cables of each kind), ids, routes
 * that put both GPUs of a NIC on its one fabric link, bisection halved at
 * the NIC links, and the flow model giving two GPUs of one NIC half the
 * NIC each (max-min, flow.h) where GPUs with a port each get all of it.
 * There is no published server with fewer NICs than GPUs in
 * shared/reference (hardware.md 4 lists 8 NICs per 8 GPUs); these are
 * closed forms, not a table. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "engine.h"
#include "fattree.h"
#include "flow.h"
#include "netcoll.h"
#include "netcoll_internal.h"
#include "nic.h"
#include "routing.h"
#include "stats.h"
#include "step_internal.h"

#define RATE 50e9

static topo_graph shared(void)
{
    topo_graph ports, g;
    char why[200];
    CHECK_INT_EQ(topo_leafspine(4, 4, 2, RATE, &ports, why, sizeof why), 0);
    CHECK_INT_EQ(topo_nic_expand(&ports, 2, RATE, &g, why, sizeof why), 0);
    topo_graph_fini(&ports);
    return g;
}

static void test_counts(void)
{
    topo_graph g = shared();
    CHECK_INT_EQ(g.n_hosts, 16);
    CHECK_INT_EQ(g.n_nics, 8);
    CHECK_INT_EQ(g.n_switches, 6);
    CHECK_INT_EQ(g.n_nodes, 16 + 6 + 8);
    CHECK_INT_EQ(g.n_links, 2 * (8 + 4 * 2 + 16)); /* NIC-leaf, leaf-spine, GPU-NIC */
    CHECK(g.updown);
    uint32_t nic0 = 16 + 6;
    CHECK_INT_EQ(g.node_kind[nic0], TOPO_NIC);
    CHECK_INT_EQ(g.node_tier[nic0], 0);
    CHECK_INT_EQ(g.node_kind[16], TOPO_SWITCH);
    CHECK_INT_EQ(g.node_tier[16], 1);
    /* GPU 5 under NIC 2, whose fabric cable goes to leaf 1 */
    CHECK_INT_EQ(g.link_dst[g.out_links[g.out_offset[5]]], nic0 + 2);
    int nic2_leaf1 = 0;
    for (uint32_t i = g.out_offset[nic0 + 2]; i < g.out_offset[nic0 + 3]; i++)
        nic2_leaf1 += g.link_dst[g.out_links[i]] == 16 + 1;
    CHECK_INT_EQ(nic2_leaf1, 1);
    topo_stats st;
    char why[200];
    CHECK_INT_EQ(topo_stats_compute(&g, &st, why, sizeof why), 0);
    CHECK_INT_EQ(st.n_hosts, 16);
    CHECK_INT_EQ(st.n_nics, 8);
    CHECK_INT_EQ(st.n_nic_cables, 16);
    CHECK_INT_EQ(st.cables_per_tier[0], 8); /* one fabric cable per NIC port */
    CHECK_INT_EQ(st.cables_per_tier[1], 8);
    CHECK_INT_EQ(st.n_fabric_cables, 16);
    CHECK_INT_EQ(st.diameter_links, 4); /* fabric links; the NIC hops are in the server */
    /* halves: GPUs 0-7 (NICs 0-3, leaves 0-1) and 8-15; each half's 4 NIC
     * links carry it: 4 x RATE, half the 8 x RATE of a port per GPU */
    CHECK_NEAR(st.bisection_bytes_per_s, 4 * RATE, 1.0);
    topo_graph_fini(&g);
}

/* does the route use link l */
static int uses(const topo_usage *u, long n, uint32_t l)
{
    for (long i = 0; i < n; i++)
        if (u[i].link == l)
            return 1;
    return 0;
}

static uint32_t link_between(const topo_graph *g, uint32_t a, uint32_t b)
{
    for (uint32_t i = g->out_offset[a]; i < g->out_offset[a + 1]; i++)
        if (g->link_dst[g->out_links[i]] == b)
            return g->out_links[i];
    return UINT32_MAX;
}

static void test_routes_and_flows(void)
{
    topo_graph g = shared();
    char why[200];
    topo_route_config cfg = {TOPO_BALANCE_ADAPTIVE, TOPO_PATH_MINIMAL, 1, 1};
    topo_router *r = topo_router_create(&g, &cfg, why, sizeof why);
    CHECK(r != NULL);
    uint32_t nic0 = 22, leaf0 = 16, shared_link = link_between(&g, nic0, leaf0);
    CHECK(shared_link != UINT32_MAX);
    topo_usage a[64], b[64], c[64];
    long na = topo_route(r, 0, 9, 1, NULL, a, 64), nb = topo_route(r, 1, 14, 2, NULL, b, 64);
    CHECK_INT_EQ(na, 6); /* GPU-NIC, NIC-leaf, leaf-spine, spine-leaf, leaf-NIC, NIC-GPU */
    CHECK_INT_EQ(nb, 6);
    CHECK(uses(a, na, shared_link) && uses(b, nb, shared_link));
    CHECK_INT_EQ(a[0].link, link_between(&g, 0, nic0));
    CHECK(uses(a, na, link_between(&g, nic0 + 4, 9)));
    long nc = topo_route(r, 0, 1, 3, NULL, c, 64); /* one NIC, no crossbar: via the NIC */
    CHECK_INT_EQ(nc, 2);
    CHECK(!uses(c, nc, shared_link));
    CHECK_INT_EQ(topo_route(r, 0, 2, 4, NULL, c, 64), 4); /* NIC 0 -> leaf 0 -> NIC 1 */

    /* flows: two GPUs of NIC 0 to other leaves share the NIC's link */
    sim_engine *eng = sim_engine_create();
    flow_net *net = flow_net_create(eng, g.n_links, g.link_bytes_per_s, NULL, NULL);
    CHECK(net != NULL);
    CHECK(flow_start(net, a, (size_t)na, 1e9, INFINITY, 0, 1) != UINT32_MAX);
    CHECK(flow_start(net, b, (size_t)nb, 1e9, INFINITY, 0, 2) != UINT32_MAX);
    double rates[4] = {0};
    CHECK_INT_EQ(flow_net_full_rates(net, rates, 4), 0);
    CHECK_NEAR(rates[0], RATE / 2, 1.0);
    CHECK_NEAR(rates[1], RATE / 2, 1.0);
    flow_net_destroy(net);
    sim_engine_destroy(eng);
    topo_router_destroy(r);
    topo_graph_fini(&g);

    /* the same two flows with a port per GPU: a full link each */
    topo_graph p;
    CHECK_INT_EQ(topo_leafspine(8, 4, 4, RATE, &p, why, sizeof why), 0); /* 16 ports */
    r = topo_router_create(&p, &cfg, why, sizeof why);
    na = topo_route(r, 0, 9, 1, NULL, a, 64), nb = topo_route(r, 1, 14, 2, NULL, b, 64);
    eng = sim_engine_create();
    net = flow_net_create(eng, p.n_links, p.link_bytes_per_s, NULL, NULL);
    CHECK(flow_start(net, a, (size_t)na, 1e9, INFINITY, 0, 1) != UINT32_MAX);
    CHECK(flow_start(net, b, (size_t)nb, 1e9, INFINITY, 0, 2) != UINT32_MAX);
    CHECK_INT_EQ(flow_net_full_rates(net, rates, 4), 0);
    CHECK_NEAR(rates[0], RATE, 1.0);
    CHECK_NEAR(rates[1], RATE, 1.0);
    flow_net_destroy(net);
    sim_engine_destroy(eng);
    topo_router_destroy(r);
    topo_graph_fini(&p);
}

/* the step tier's link tiers: a GPU's link to its NIC and the NIC's cable
 * to the leaf are host-leaf (1), leaf to spine is 2 */
static void test_step_tiers(void)
{
    topo_graph g = shared();
    unsigned count[STEP_TIERS] = {0};
    for (uint32_t l = 0; l < g.n_links; l++) {
        int t = step_link_tier(&g, l);
        CHECK(t >= 0 && t < STEP_TIERS);
        if (t >= 0 && t < STEP_TIERS)
            count[t]++;
        int a = g.node_kind[g.link_src[l]], b = g.node_kind[g.link_dst[l]];
        if (a == TOPO_NIC || b == TOPO_NIC)
            CHECK_INT_EQ(t, 1);
    }
    CHECK_INT_EQ(count[0], 0);
    CHECK_INT_EQ(count[1], 2 * (16 + 8)); /* GPU-NIC and NIC-leaf, both directions */
    CHECK_INT_EQ(count[2], 2 * 4 * 2);    /* leaf-spine */
    CHECK_INT_EQ(count[3], 0);
    topo_graph_fini(&g);
}

/* Collectives see the shared NIC: a GPU's cable into the fabric is its
 * NIC's, shared by 2; SHARP (in-network) all-reduce of S on one GPU per NIC
 * takes S / RATE, on both GPUs of two NICs twice that (the NIC's cable
 * carries two GPUs' S). Latencies set to 0 for the closed form. */
static void test_collectives_through_the_nic(void)
{
    topo_graph g = shared();
    char why[200];
    uint32_t nic_link;
    unsigned sharing = 0;
    uint32_t up = nc_host_fabric_link(&g, 0, &nic_link, &sharing);
    CHECK(up != UINT32_MAX && nic_link != UINT32_MAX);
    CHECK_INT_EQ(sharing, 2);
    CHECK_INT_EQ(g.node_kind[g.link_src[up]], TOPO_NIC);
    CHECK_INT_EQ(g.node_kind[g.link_dst[up]], TOPO_SWITCH);
    CHECK_INT_EQ(g.link_src[nic_link], 0);

    topo_route_config cfg = {TOPO_BALANCE_ADAPTIVE, TOPO_PATH_MINIMAL, 1, 1};
    topo_router *r = topo_router_create(&g, &cfg, why, sizeof why);
    nc_fabric f;
    nc_fabric_defaults(&f);
    f.g = &g;
    f.router = r;
    f.base_latency_s = f.intra_step_latency_s = f.inter_step_latency_s = 0;
    f.fabric_reduction_bytes_per_s = 10 * RATE; /* the NIC's cable, not the switch, limits */
    const double S = 1e9;
    double t[2];
    const uint32_t one_per_nic[4] = {0, 2, 4, 6}, two_per_nic[4] = {0, 1, 2, 3};
    for (int k = 0; k < 2; k++) {
        nc_plan p;
        nc_result res;
        sim_error err = {0};
        int rc = nc_plan_build(&p, &f, NC_ALLREDUCE, NC_ALGO_IN_NETWORK,
                               k ? two_per_nic : one_per_nic, 4, S, &err);
        CHECK_INT_EQ(rc, 0);
        t[k] = rc ? -1 : nc_simulate(&p, &f, &res, &err) ? -1 : res.time_s;
        if (!rc)
            nc_plan_free(&p);
    }
    CHECK_REL(t[0], S / RATE, 1e-9);
    CHECK_REL(t[1], 2 * S / RATE, 1e-9);
    topo_router_destroy(r);
    topo_graph_fini(&g);
}

static void test_refusals(void)
{
    topo_graph ports, g;
    char why[200];
    CHECK_INT_EQ(topo_leafspine(4, 4, 2, RATE, &ports, why, sizeof why), 0);
    CHECK(topo_nic_expand(&ports, 0, RATE, &g, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "at least one GPU");
    CHECK(topo_nic_expand(&ports, 2, 0, &g, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "positive");
    CHECK(topo_nic_check(1e9, 4, 0, 0, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "more than 2^31 ids");
    CHECK_INT_EQ(topo_nic_expand(&ports, 1, RATE, &g, why, sizeof why), 0);
    topo_graph again;
    CHECK(topo_nic_expand(&g, 2, RATE, &again, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "already has");
    topo_graph_fini(&g);
    topo_graph_fini(&ports);
}

int main(void)
{
    test_step_tiers();
    test_collectives_through_the_nic();
    test_counts();
    test_routes_and_flows();
    test_refusals();
    return check_report();
}
