/* test_clos3.c - 3-tier leaf-spine and multi-plane fabrics: exact counts
 * against the closed forms in fattree.h (hardware.md 6.1's 3-tier column at
 * full size: radix 40 16,000 hosts / 2,000 switches, radix 64 65,536 /
 * 5,120), path lengths 2/4/6, oversubscription, and refusals. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fattree.h"
#include "graph.h"
#include "routing.h"
#include "stats.h"

static unsigned count_tier(const topo_graph *g, unsigned tier)
{
    unsigned n = 0;
    for (uint32_t v = 0; v < g->n_nodes; v++)
        n += g->node_kind[v] == TOPO_SWITCH && g->node_tier[v] == tier;
    return n;
}

static uint32_t degree(const topo_graph *g, uint32_t v)
{
    return g->out_offset[v + 1] - g->out_offset[v];
}

/* hop counts from host src to every other host, tallied (index 7: > 6) */
static void tally_hops(const topo_graph *g, uint32_t src, unsigned tally[8])
{
    uint32_t *dist = malloc(g->n_nodes * sizeof *dist);
    CHECK(topo_graph_hops_from(g, src, dist) == 0);
    memset(tally, 0, 8 * sizeof *tally);
    for (uint32_t v = 0; v < g->n_hosts; v++)
        if (v != src)
            tally[dist[v] < 7 ? dist[v] : 7]++;
    free(dist);
}

/* 2 links to the other down - 1 hosts of the leaf, 4 to the rest of the pod,
 * 6 to the other pods; nothing else */
static int clos3_paths(const topo_graph *g, uint32_t src, unsigned down, unsigned per_pod)
{
    unsigned t[8];
    tally_hops(g, src, t);
    return t[2] == down - 1 && t[4] == per_pod - down && t[6] == g->n_hosts - per_pod &&
           t[0] + t[1] + t[3] + t[5] + t[7] == 0;
}

static void test_full_size(void)
{
    struct { unsigned radix, hosts, switches; } table[] = {
        {8, 128, 80}, {40, 16000, 2000}, {64, 65536, 5120}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        unsigned r = table[i].radix, half = r / 2;
        topo_graph g;
        char why[200];
        CHECK_INT_EQ(topo_leafspine3(r, r, half, half, 50e9, &g, why, sizeof why), 0);
        CHECK_INT_EQ(g.n_hosts, table[i].hosts);
        CHECK_INT_EQ(g.n_switches, table[i].switches);
        CHECK_INT_EQ(count_tier(&g, 1), r * half);
        CHECK_INT_EQ(count_tier(&g, 2), r * half);
        CHECK_INT_EQ(count_tier(&g, 3), half * half);
        CHECK_INT_EQ(g.n_links, 2 * (3 * r * r * r / 4));
        int full = 1;
        for (uint32_t v = g.n_hosts; v < g.n_nodes; v++)
            full &= degree(&g, v) == r;
        CHECK(full);
        uint32_t sources[] = {0, g.n_hosts / 2 + 3, g.n_hosts - 1};
        for (size_t s = 0; s < 3; s++)
            CHECK(clos3_paths(&g, sources[s], half, half * half));
        /* pods: leaf and spine groups; cores span them */
        CHECK_INT_EQ(g.node_group[g.n_hosts + r * half - 1], r - 1);
        CHECK_INT_EQ(g.node_group[g.n_hosts + 2 * r * half - 1], r - 1);
        CHECK_INT_EQ(g.node_group[g.n_nodes - 1], TOPO_NO_GROUP);
        CHECK(g.updown);
        topo_graph_fini(&g);
    }
}

/* the k-ary builder is the full-size leaf-spine: the same graph, id for id */
static void test_same_as_kary(void)
{
    topo_graph a, b;
    char why[200];
    CHECK_INT_EQ(topo_fattree_kary(16, 50e9, &a, why, sizeof why), 0);
    CHECK_INT_EQ(topo_leafspine3(16, 16, 8, 8, 50e9, &b, why, sizeof why), 0);
    CHECK_INT_EQ(a.n_nodes, b.n_nodes);
    CHECK_INT_EQ(a.n_links, b.n_links);
    CHECK(!memcmp(a.link_src, b.link_src, a.n_links * sizeof *a.link_src));
    CHECK(!memcmp(a.link_dst, b.link_dst, a.n_links * sizeof *a.link_dst));
    CHECK(!memcmp(a.node_group, b.node_group, a.n_nodes * sizeof *a.node_group));
    topo_graph_fini(&a);
    topo_graph_fini(&b);
}

/* 3:1 at the leaf (12 down, 4 up), 1:1 at the spine (8 leaves, 8 up):
 * radix 16, 4 pods -> 384 hosts, 32 leaves, 16 spines; the core is sized to
 * the 4 pods: spine j's 4 x 8 cables fill m = 2 cores of 16 ports (4 cables
 * from each pod), so 4 x 2 = 8 cores, every port used (a core of one port
 * per pod would be 4 x 8 = 32 cores with 12 ports idle each). */
static void test_oversubscribed(void)
{
    topo_graph g;
    char why[200];
    CHECK_INT_EQ(topo_leafspine3(16, 4, 8, 12, 50e9, &g, why, sizeof why), 0);
    CHECK_INT_EQ(g.n_hosts, 4 * 8 * 12);
    CHECK_INT_EQ(count_tier(&g, 1), 32);
    CHECK_INT_EQ(count_tier(&g, 2), 16);
    CHECK_INT_EQ(count_tier(&g, 3), 8);
    CHECK_INT_EQ(g.n_links / 2, 384 + 32 * 4 + 16 * 8);
    CHECK_INT_EQ(degree(&g, g.n_hosts), 16);       /* a leaf: full */
    CHECK_INT_EQ(degree(&g, g.n_hosts + 32), 16);  /* a spine: full */
    CHECK_INT_EQ(degree(&g, g.n_nodes - 1), 16);   /* a core: 4 cables from each pod */
    CHECK(clos3_paths(&g, 0, 12, 96));
    CHECK(clos3_paths(&g, 383, 12, 96));
    topo_graph_fini(&g);
}

/* The core sized to the pods (fattree.h): radix 64, full bisection, 32
 * leaves of 32 hosts per pod. 4,096 hosts = 4 pods: 128 leaves, 128
 * spines, m = 2 -> 64 cores, 320 switches (a full core: 1,024 cores, 1,280
 * switches, the issue-17 report). 16,384 = 16 pods: m = 8, 256 cores, 1,280
 * switches (not 2,048). 64 pods: the k = 64 fat-tree, 1,024 cores. Every
 * switch port is used and paths stay 2/4/6 links. */
static void test_core_sized_to_pods(void)
{
    struct { unsigned pods, cores, switches; } t[] = {
        {1, 32, 96}, {2, 32, 160}, {4, 64, 320}, {16, 256, 1280}, {64, 1024, 5120}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        topo_graph g;
        char why[200];
        CHECK_INT_EQ(topo_leafspine3(64, t[i].pods, 32, 32, 50e9, &g, why, sizeof why), 0);
        CHECK_INT_EQ(g.n_hosts, t[i].pods * 1024);
        CHECK_INT_EQ(count_tier(&g, 3), t[i].cores);
        CHECK_INT_EQ(g.n_switches, t[i].switches);
        CHECK_INT_EQ(g.n_links / 2, 3 * t[i].pods * 1024);
        int spines_full = 1, cores_even = 1;
        uint32_t core0 = g.n_nodes - t[i].cores;
        for (uint32_t v = g.n_hosts; v < core0; v++)
            spines_full &= degree(&g, v) == 64;
        for (uint32_t v = core0; v < g.n_nodes; v++) /* pods x 32 / m cables each */
            cores_even &= degree(&g, v) == t[i].pods * 32 * 32 / t[i].cores;
        CHECK(spines_full);
        CHECK(cores_even);
        CHECK(clos3_paths(&g, 0, 32, 1024));
        CHECK(clos3_paths(&g, g.n_hosts - 1, 32, 1024));
        double bisection;
        CHECK_INT_EQ(topo_bisection_bytes_per_s(&g, &bisection), 0);
        CHECK_NEAR(bisection, g.n_hosts / 2 * 50e9, 1.0); /* full bisection */
        topo_graph_fini(&g);
    }
}

/* Oversubscription above the pods: radix 16, 4 pods of 8 leaves of 8 hosts
 * (1:1 at the leaf), spines with 8 leaves and U = 2 up cables (4:1): 256
 * hosts, 32 leaves, 32 spines, m = 1 (4 pods x 2 cables fit a core) -> 8
 * cores of 8 ports. Bisection (halves = pods 0-1 and 2-3): 2 pods x 8
 * spines x 2 cables = 32 links, a quarter of the 128 a full core gives. */
static void test_spine_oversubscribed(void)
{
    topo_clos3 c = {16, 4, 8, 8, 8, 2};
    topo_graph g;
    char why[200];
    unsigned m = 0;
    CHECK_INT_EQ(topo_clos3_check(&c, &m, why, sizeof why), 0);
    CHECK_INT_EQ(m, 1);
    CHECK_INT_EQ(topo_clos3_build(&c, 50e9, &g, why, sizeof why), 0);
    CHECK_INT_EQ(g.n_hosts, 256);
    CHECK_INT_EQ(count_tier(&g, 1), 32);
    CHECK_INT_EQ(count_tier(&g, 2), 32);
    CHECK_INT_EQ(count_tier(&g, 3), 8);
    CHECK_INT_EQ(g.n_links / 2, 256 + 32 * 8 + 32 * 2);
    CHECK_INT_EQ(degree(&g, g.n_hosts + 32), 10);  /* a spine: 8 leaves + 2 up */
    CHECK_INT_EQ(degree(&g, g.n_nodes - 1), 8);    /* a core: 2 cables from each pod */
    CHECK(clos3_paths(&g, 0, 8, 64));
    double bisection;
    CHECK_INT_EQ(topo_bisection_bytes_per_s(&g, &bisection), 0);
    CHECK_NEAR(bisection, 32 * 50e9, 1.0);
    topo_graph_fini(&g);
    /* a leaf with fewer up ports than the radix leaves free (1:1 on 32 ports
     * of a radix-64 switch) */
    topo_clos3 half = {64, 2, 4, 16, 16, 2};
    CHECK_INT_EQ(topo_clos3_build(&half, 50e9, &g, why, sizeof why), 0);
    CHECK_INT_EQ(count_tier(&g, 2), 2 * 16);
    CHECK_INT_EQ(count_tier(&g, 3), 16); /* 2 pods x 2 cables fit one core per set */
    CHECK_INT_EQ(degree(&g, g.n_hosts), 32);
    topo_graph_fini(&g);
    topo_clos3 over = {16, 4, 8, 8, 9, 0};
    CHECK(topo_clos3_check(&over, &m, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "a leaf of radix 16 cannot take 8 host ports and 9 up ports");
    topo_clos3 spine = {16, 4, 8, 8, 8, 9};
    CHECK(topo_clos3_check(&spine, &m, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "a spine of radix 16 cannot take 8 leaves of its pod and 9 up ports");
}

static void test_refusals(void)
{
    topo_graph g;
    char why[200];
    CHECK(topo_leafspine3(64, 65, 32, 32, 50e9, &g, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "a core switch of radix 64 has one port per pod: 1 to 64 pods, got 65");
    CHECK(topo_leafspine3(64, 4, 64, 32, 50e9, &g, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "1 to 63 leaves per pod, got 64");
    CHECK(topo_leafspine3(64, 4, 32, 64, 50e9, &g, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "at least one host port and one up port, got 64 host ports");
    CHECK(topo_leafspine3(4096, 4096, 4095, 4000, 50e9, &g, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "more than 2^31 ids");
    CHECK(topo_leafspine3(8, 8, 4, 4, -1, &g, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "positive");
    CHECK(topo_fattree_kary(7, 50e9, &g, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "got 7");
}

/* 2 planes of a radix-8 leaf-spine (8 leaves of 4 hosts, 4 spines): hosts
 * shared, switches and cables doubled, one uplink per plane per host, the
 * same path lengths as one plane. */
static void test_multiplane_leafspine(void)
{
    topo_graph plane, g;
    char why[200];
    CHECK_INT_EQ(topo_leafspine(8, 8, 4, 25e9, &plane, why, sizeof why), 0);
    CHECK_INT_EQ(topo_multiplane(&plane, 2, &g, why, sizeof why), 0);
    CHECK_INT_EQ(g.n_hosts, 32);
    CHECK_INT_EQ(g.n_switches, 2 * 12);
    CHECK_INT_EQ(g.n_links, 2 * plane.n_links);
    CHECK_INT_EQ(g.updown, 1);
    unsigned per_plane[2] = {0, 0}, host_deg_ok = 1;
    for (uint32_t v = 0; v < g.n_nodes; v++) {
        if (g.node_kind[v] == TOPO_SWITCH)
            per_plane[g.node_plane[v]]++;
        else
            host_deg_ok &= degree(&g, v) == 2;
    }
    CHECK_INT_EQ(per_plane[0], 12);
    CHECK_INT_EQ(per_plane[1], 12);
    CHECK(host_deg_ok);
    /* host 5's uplinks: leaf 1 of plane 0 (id 33), leaf 1 of plane 1 (45) */
    CHECK_INT_EQ(g.link_dst[g.out_links[g.out_offset[5]]], 33);
    CHECK_INT_EQ(g.link_dst[g.out_links[g.out_offset[5] + 1]], 45);
    CHECK_INT_EQ(g.node_tier[45], 1);
    CHECK_INT_EQ(g.link_bytes_per_s[g.n_links - 1], 25e9);
    unsigned t[8];
    tally_hops(&g, 5, t);
    CHECK_INT_EQ(t[2], 3);
    CHECK_INT_EQ(t[4], 28);
    topo_graph_fini(&g);
    CHECK(topo_multiplane(&plane, 0, &g, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "between 1 and 256");
    CHECK(topo_multiplane(&plane, 257, &g, why, sizeof why) != 0);
    topo_graph_fini(&plane);
}

/* 4 planes of a 2-SU rail-optimised fabric (512 GPUs, 16 leaves, 8
 * spines per plane), and a multi-plane fabric is not a plane */
static void test_multiplane_railopt(void)
{
    topo_graph plane, g, again;
    char why[200];
    CHECK_INT_EQ(topo_railopt(2, 32, 8, 64, 50e9, &plane, why, sizeof why), 0);
    CHECK_INT_EQ(topo_multiplane(&plane, 4, &g, why, sizeof why), 0);
    CHECK_INT_EQ(g.n_hosts, 512);
    CHECK_INT_EQ(g.n_switches, 4 * 24);
    CHECK_INT_EQ(count_tier(&g, 1), 4 * 16);
    CHECK_INT_EQ(count_tier(&g, 2), 4 * 8);
    CHECK_INT_EQ(g.node_plane[g.n_nodes - 1], 3);
    CHECK_INT_EQ(g.node_group[g.n_hosts + 3 * 24 + 15], 1); /* plane 3's last leaf: SU 1 */
    unsigned t[8];
    tally_hops(&g, 0, t);
    CHECK_INT_EQ(t[2], 31);
    CHECK_INT_EQ(t[4], 480);
    CHECK(topo_multiplane(&g, 2, &again, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "already in plane 1");
    topo_graph_fini(&g);
    topo_graph_fini(&plane);
}

/* Hop tables kept once (routing_build.c): the 16 leaves of a 4-pod
 * leaf-spine share their pod's table, 4 kept for 16 destinations, and every
 * route still takes a shortest path: as many links as the graph's hop
 * count, for each balancing rule (the last hop reads the destination's own
 * entry, which the kept table leaves out). */
static void test_shared_hop_tables(void)
{
    topo_graph g;
    char why[128];
    CHECK_INT_EQ(topo_leafspine3(8, 4, 4, 4, 50e9, &g, why, sizeof why), 0);
    uint32_t *dist = malloc(g.n_nodes * sizeof *dist);
    topo_usage *u = malloc(g.n_links * sizeof *u);
    CHECK(topo_graph_hops_from(&g, 0, dist) == 0);
    for (int b = 0; b < TOPO_BALANCE_COUNT; b++) {
        topo_route_config cfg = {.balance = (enum topo_balance)b, .qps = 1, .seed = 7};
        topo_router *r = topo_router_create(&g, &cfg, why, sizeof why);
        CHECK(r != NULL);
        unsigned wrong = 0;
        for (uint32_t d = 1; r && d < g.n_hosts; d++) {
            long n = topo_route(r, 0, d, d, NULL, u, g.n_links);
            double links = 0; /* weighted: a sprayed route's links add to its hops */
            for (long k = 0; k < n; k++)
                links += u[k].weight;
            wrong += n <= 0 || fabs(links - dist[d]) > 1e-9;
        }
        CHECK_INT_EQ(wrong, 0);
        CHECK_INT_EQ(r ? topo_router_tables(r) : 0, 16);
        CHECK_INT_EQ(r ? topo_router_tables_kept(r) : 0, 4);
        topo_router_destroy(r);
    }
    free(u);
    free(dist);
    topo_graph_fini(&g);
}

int main(void)
{
    test_shared_hop_tables();
    test_full_size();
    test_same_as_kary();
    test_oversubscribed();
    test_core_sized_to_pods();
    test_spine_oversubscribed();
    test_refusals();
    test_multiplane_leafspine();
    test_multiplane_railopt();
    return check_report();
}
