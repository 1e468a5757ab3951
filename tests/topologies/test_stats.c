/* test_stats.c - topology statistics against closed forms: counts per tier
 * and plane, cables and transceivers (2 per fabric cable, stats.h), bisection
 * by max-flow (k-ary fat-tree: hosts/2 x link rate, Al-Fares et al. 2008;
 * 2:1 and 3:1 leaf-spines: 1/2 and 1/3 of it; Dragonflies checked by hand),
 * diameter (6 for 3 tiers, 4 for 2, 5 for Dragonflies). Prints the time to
 * build and measure the 65,536-host fat-tree and 16,384-GPU rail-optimised
 * fabric as "bench:" lines (informative; nothing asserts a time). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "dragonfly.h"
#include "fattree.h"
#include "graph.h"
#include "scaleup.h"
#include "stats.h"

#define RATE 50e9

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static topo_stats stats_of(const topo_graph *g)
{
    topo_stats s;
    char why[200];
    memset(&s, 0xff, sizeof s);
    CHECK_INT_EQ(topo_stats_compute(g, &s, why, sizeof why), 0);
    return s;
}

static void test_kary(void)
{
    topo_graph g;
    char why[200];
    CHECK_INT_EQ(topo_fattree_kary(4, RATE, &g, why, sizeof why), 0);
    topo_stats s = stats_of(&g);
    CHECK_INT_EQ(s.n_hosts, 16);
    CHECK_INT_EQ(s.n_switches, 20);
    CHECK_INT_EQ(s.switches_per_tier[0], 0);
    CHECK_INT_EQ(s.switches_per_tier[1], 8);
    CHECK_INT_EQ(s.switches_per_tier[2], 8);
    CHECK_INT_EQ(s.switches_per_tier[3], 4);
    CHECK_INT_EQ(s.switches_per_tier[4], 0);
    CHECK_INT_EQ(s.n_planes, 1);
    CHECK_INT_EQ(s.switches_per_plane[0], 20);
    CHECK_INT_EQ(s.n_links, 96);
    CHECK_INT_EQ(s.n_fabric_cables, 48); /* 3k^3/4 */
    CHECK_INT_EQ(s.cables_per_tier[0], 16); /* k^3/4 hosts, one cable each */
    CHECK_INT_EQ(s.cables_per_tier[1], 16); /* edge-aggregation: k/2 x k/2 per pod, k pods */
    CHECK_INT_EQ(s.cables_per_tier[2], 16); /* aggregation-core: (k/2)^2 cores x k */
    CHECK_INT_EQ(s.cables_per_tier[3], 0);
    CHECK_INT_EQ(s.n_scaleup_cables, 0);
    CHECK_INT_EQ(s.n_optical_cables, 48);
    CHECK_INT_EQ(s.n_transceivers, 96);
    CHECK_REL(s.bisection_bytes_per_s, 8 * RATE, 1e-12);
    CHECK_INT_EQ(s.diameter_links, 6);
    CHECK_INT_EQ(s.max_switch_radix, 4);
    CHECK_INT_EQ(s.n_scaleup_domains, 0);
    topo_graph_fini(&g);
}

/* 2:1 (radix 12: 8 down, 4 up) and 3:1 (radix 64: 48 down, 16 up): the
 * leaves' up links are the cut, leaves/2 x up x rate = 1/2 and 1/3 of
 * hosts/2 x rate. 3-tier radix 16, 3:1 at the leaf: 384 hosts, 64 x rate. */
static void test_oversubscribed(void)
{
    struct { unsigned radix, leaves, down; double full_frac; unsigned diameter; } t[] = {
        {12, 12, 8, 0.5, 4}, {64, 64, 48, 1.0 / 3, 4}, {8, 8, 4, 1, 4}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        topo_graph g;
        char why[200];
        CHECK_INT_EQ(topo_leafspine(t[i].radix, t[i].leaves, t[i].down, RATE, &g, why,
                                    sizeof why), 0);
        topo_stats s = stats_of(&g);
        CHECK_REL(s.bisection_bytes_per_s, g.n_hosts / 2 * RATE * t[i].full_frac, 1e-12);
        CHECK_INT_EQ(s.diameter_links, t[i].diameter);
        CHECK_INT_EQ(s.max_switch_radix, t[i].radix);
        topo_graph_fini(&g);
    }
    topo_graph g;
    char why[200];
    CHECK_INT_EQ(topo_leafspine3(16, 4, 8, 12, RATE, &g, why, sizeof why), 0);
    topo_stats s = stats_of(&g);
    CHECK_REL(s.bisection_bytes_per_s, 64 * RATE, 1e-12);
    CHECK_INT_EQ(s.diameter_links, 6);
    CHECK_INT_EQ(s.switches_per_tier[3], 8); /* core sized to 4 pods (fattree.h) */
    topo_graph_fini(&g);
}

/* B200 RA rows: non-blocking at every tier, so hosts/2 x rate; 2 tiers
 * give diameter 4, 3 tiers 6; cables = hosts + leaves x 32 (+ spines x 32) */
static void test_railopt(void)
{
    struct { unsigned sus, tiers, leaves, spines; } t[] = {
        {2, 2, 16, 8}, {8, 2, 64, 32}, {16, 3, 128, 128}, {32, 3, 256, 256}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        topo_graph g;
        char why[300];
        CHECK_INT_EQ(topo_railopt(t[i].sus, 32, 8, 64, RATE, &g, why, sizeof why), 0);
        topo_stats s = stats_of(&g);
        unsigned cables = g.n_hosts + 32 * t[i].leaves + (t[i].tiers == 3 ? 32 * t[i].spines : 0);
        CHECK_INT_EQ(s.n_fabric_cables, cables);
        CHECK_INT_EQ(s.n_transceivers, 2 * cables);
        CHECK_REL(s.bisection_bytes_per_s, g.n_hosts / 2 * RATE, 1e-12);
        CHECK_INT_EQ(s.diameter_links, 2 * t[i].tiers);
        CHECK_INT_EQ(s.switches_per_tier[3], t[i].tiers == 3 ? t[i].spines / 2 : 0);
        topo_graph_fini(&g);
    }
}

/* Dragonflies, hosts split at a group boundary (even g): the only fabric
 * links between the halves are the global links joining the g/2 left groups
 * to the g/2 right ones, one per pair, so the min cut is at most
 * (g/2)^2 x global rate; every such link has a router with p >= 1 hosts and
 * a - 1 local links behind it at each end, so that much flow fits:
 * bisection = (g/2)^2 x global rate. By hand for a = 2, h = 2, p = 2, g = 4:
 * hosts 0-7 are groups 0 and 1, and the cables 0-2, 0-3, 1-2, 1-3 cross: 4. */
static void test_dragonfly(void)
{
    struct { unsigned p, a, h, groups; } t[] = {{2, 2, 2, 4}, {2, 4, 2, 8}};
    for (size_t i = 0; i < 2; i++)
        for (int arr = 0; arr < 3; arr++) {
            topo_dragonfly_config c = {t[i].p, t[i].a, t[i].h, t[i].groups, RATE, RATE,
                                       RATE / 2, (enum topo_dragonfly_arrangement)arr};
            topo_graph g;
            char why[200];
            CHECK_INT_EQ(topo_dragonfly(&c, &g, why, sizeof why), 0);
            topo_stats s = stats_of(&g);
            double half = t[i].groups / 2.0;
            CHECK_REL(s.bisection_bytes_per_s, half * half * RATE / 2, 1e-12);
            CHECK_INT_EQ(s.diameter_links, 5);
            CHECK_INT_EQ(s.switches_per_tier[1], t[i].a * t[i].groups);
            topo_graph_fini(&g);
        }
    /* Dragonfly+ p = 2, L = 2, S = 2, h = 2, g = 4: the same cut, 4 globals */
    topo_dragonfly_plus_config c = {2, 2, 2, 2, 4, 0, RATE, RATE, RATE, TOPO_DF_ABSOLUTE};
    topo_graph g;
    char why[200];
    CHECK_INT_EQ(topo_dragonfly_plus(&c, &g, why, sizeof why), 0);
    topo_stats s = stats_of(&g);
    CHECK_REL(s.bisection_bytes_per_s, 4 * RATE, 1e-12);
    CHECK_INT_EQ(s.diameter_links, 5);
    CHECK_INT_EQ(s.switches_per_tier[2], 8);
    topo_graph_fini(&g);
}

/* Two planes of the 2:1 leaf-spine: twice the bisection, the same diameter;
 * then NVLink domains of 8: counted apart, bisection and diameter unchanged */
static void test_planes_and_scaleup(void)
{
    topo_graph plane, g;
    char why[200];
    CHECK_INT_EQ(topo_leafspine(12, 12, 8, RATE, &plane, why, sizeof why), 0);
    CHECK_INT_EQ(topo_multiplane(&plane, 2, &g, why, sizeof why), 0);
    topo_stats s = stats_of(&g);
    CHECK_INT_EQ(s.n_planes, 2);
    CHECK_INT_EQ(s.switches_per_plane[0], 16);
    CHECK_INT_EQ(s.switches_per_plane[1], 16);
    CHECK_REL(s.bisection_bytes_per_s, 2 * 24 * RATE, 1e-12);
    CHECK_INT_EQ(s.diameter_links, 4);
    CHECK_INT_EQ(topo_scaleup_add(&g, 8, 450e9, why, sizeof why), 0);
    topo_stats u = stats_of(&g);
    CHECK_INT_EQ(u.n_scaleup_domains, 12);
    CHECK_INT_EQ(u.n_scaleup_cables, 96);
    CHECK_INT_EQ(u.n_fabric_cables, s.n_fabric_cables);
    CHECK_INT_EQ(u.n_transceivers, s.n_transceivers);
    CHECK_INT_EQ(u.max_scaleup_radix, 8);
    CHECK_INT_EQ(u.n_links, s.n_links + 2 * 96);
    CHECK_REL(u.bisection_bytes_per_s, s.bisection_bytes_per_s, 1e-12);
    CHECK_INT_EQ(u.diameter_links, 4);
    topo_graph_fini(&g);
    topo_graph_fini(&plane);
}

/* Hand-made graphs: the flow follows each direction's own capacity; two
 * islands are disconnected (diameter UINT32_MAX, bisection 0) */
static void test_small_cases(void)
{
    topo_graph g;
    char why[200];
    topo_graph_init(&g);
    topo_graph_add_nodes(&g, 2, TOPO_HOST, 0);
    uint32_t s0 = topo_graph_add_node(&g, TOPO_SWITCH, 1);
    topo_graph_add_cable(&g, 0, s0, 50);
    topo_graph_add_cable(&g, s0, 1, 50);
    g.link_bytes_per_s[2] = 10; /* s0 -> host 1 */
    CHECK_INT_EQ(topo_graph_finish(&g), 0);
    topo_stats s = stats_of(&g);
    CHECK_REL(s.bisection_bytes_per_s, 10, 1e-12);
    CHECK_INT_EQ(s.diameter_links, 2);
    uint32_t s1 = topo_graph_add_node(&g, TOPO_SWITCH, 1);
    topo_graph_add_nodes(&g, 2, TOPO_HOST, 0); /* hosts 4, 5 on their own switch */
    topo_graph_add_cable(&g, 4, s1, 50);
    topo_graph_add_cable(&g, 5, s1, 50);
    CHECK_INT_EQ(topo_graph_finish(&g), 0);
    s = stats_of(&g);
    CHECK_INT_EQ(s.n_hosts, 4);
    CHECK_INT_EQ(s.diameter_links, UINT32_MAX);
    CHECK_INT_EQ(s.bisection_bytes_per_s, 0); /* halves: hosts 0, 1 | 4, 5: islands */
    g.node_tier[s1] = 5;
    CHECK(topo_stats_compute(&g, &s, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "tier 5");
    topo_graph_fini(&g);
    topo_graph_init(&g);
    CHECK(topo_stats_compute(&g, &s, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "not finished");
}

/* The biggest fabrics: exact answers, and the time each step takes */
static void test_big(void)
{
    topo_graph g;
    char why[300];
    double t0 = now_s();
    CHECK_INT_EQ(topo_fattree_kary(64, RATE, &g, why, sizeof why), 0);
    double t1 = now_s();
    topo_stats s = stats_of(&g);
    double t2 = now_s();
    CHECK_INT_EQ(s.n_hosts, 65536);
    CHECK_INT_EQ(s.n_switches, 5120);
    CHECK_REL(s.bisection_bytes_per_s, 32768 * RATE, 1e-12);
    CHECK_INT_EQ(s.diameter_links, 6);
    printf("bench: fattree_k64_build_s %.4f\nbench: fattree_k64_stats_s %.4f\n", t1 - t0,
           t2 - t1);
    topo_graph_fini(&g);
    t0 = now_s();
    CHECK_INT_EQ(topo_railopt(64, 32, 8, 64, RATE, &g, why, sizeof why), 0);
    t1 = now_s();
    s = stats_of(&g);
    t2 = now_s();
    CHECK_INT_EQ(s.n_hosts, 16384);
    CHECK_INT_EQ(s.switches_per_tier[3], 256);
    CHECK_REL(s.bisection_bytes_per_s, 8192 * RATE, 1e-12);
    CHECK_INT_EQ(s.diameter_links, 6);
    printf("bench: railopt_64su_build_s %.4f\nbench: railopt_64su_stats_s %.4f\n", t1 - t0,
           t2 - t1);
    topo_graph_fini(&g);
}

int main(void)
{
    test_kary();
    test_oversubscribed();
    test_railopt();
    test_dragonfly();
    test_planes_and_scaleup();
    test_small_cases();
    test_big();
    return check_report();
}
