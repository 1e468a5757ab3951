/* test_dragonfly.c - exact counts, router radix and path lengths of balanced
 * Dragonflies (a = 2p = 2h) against hardware.md 6.3: h = 4 gives 33 groups,
 * 1,056 hosts, 528 global links; h = 8: 129 groups, 16,512 hosts, 8,256
 * global links; radix 4h - 1; in each global-link arrangement (absolute,
 * relative, circulant: Hastings et al. 2015), whose port-to-group maps are
 * checked by hand on a small case. Dragonfly+ (Shpiner et al. 2017): counts,
 * radix, paths 2/4/5 and refusals. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dragonfly.h"
#include "graph.h"
#include "routing.h"

static unsigned global_cables(const topo_graph *g, unsigned a)
{
    unsigned n = 0;
    uint32_t router0 = g->n_hosts;
    for (uint32_t l = 0; l < g->n_links; l += 2) {
        uint32_t s = g->link_src[l], d = g->link_dst[l];
        if (s >= router0 && d >= router0 && (s - router0) / a != (d - router0) / a)
            n++;
    }
    return n;
}

/* 1 when u[0..n) (weight 1 each) is a path of links from src to dst */
static int is_path(const topo_graph *g, const topo_usage *u, long n, uint32_t src, uint32_t dst)
{
    uint32_t at = src;
    for (long step = 0; step < n; step++) {
        long k = 0;
        while (k < n && (g->link_src[u[k].link] != at || u[k].weight != 1.0))
            k++;
        if (k == n)
            return 0;
        at = g->link_dst[u[k].link];
    }
    return at == dst;
}

/* A Dragonfly's hop tables hold only the destination router's group, by
 * position in it (routing_build_group_positions): routes from host 0 to
 * every host, by every path class, are paths to the host; the 36 routers'
 * tables (a = 4 per group, all-to-all inside it) are kept as a = 4 tables
 * of 4 bytes, one per position, where whole-fabric tables took 36 x 36. */
static void test_group_local_tables(void)
{
    topo_dragonfly_config c = {2, 4, 2, 0, 50e9, 50e9, 50e9, (enum topo_dragonfly_arrangement)0};
    topo_graph g;
    char why[200];
    CHECK_INT_EQ(topo_dragonfly(&c, &g, why, sizeof why), 0);
    topo_usage *u = malloc(g.n_links * sizeof *u);
    for (int pc = 0; pc < TOPO_PATH_COUNT; pc++) {
        topo_route_config cfg = {.balance = TOPO_BALANCE_ECMP, .path_class = (enum topo_path_class)pc,
                                 .qps = 1, .seed = 3};
        topo_router *r = topo_router_create(&g, &cfg, why, sizeof why);
        CHECK(r != NULL);
        unsigned bad = 0;
        for (uint32_t d = 1; r && d < g.n_hosts; d++) {
            long n = topo_route(r, 0, d, d, NULL, u, g.n_links);
            bad += !is_path(&g, u, n, 0, d);
        }
        CHECK_INT_EQ(bad, 0);
        CHECK_INT_EQ(r ? topo_router_tables(r) : 0, g.n_switches);
        CHECK_INT_EQ(g.n_switches, 36);
        CHECK_INT_EQ(r ? topo_router_tables_kept(r) : 0, c.a);
        CHECK_INT_EQ(r ? topo_router_table_bytes(r) : 0, c.a * c.a);
        topo_router_destroy(r);
    }
    free(u);
    topo_graph_fini(&g);
}

static void test_balanced(void)
{
    struct { unsigned h, groups, hosts, global; } table[] = {{4, 33, 1056, 528},
                                                          {8, 129, 16512, 8256}};
    for (size_t k = 0; k < 6; k++) {
        size_t i = k / 3;
        unsigned h = table[i].h, a = 2 * h, p = h;
        topo_dragonfly_config c = {p, a, h, 0, 50e9, 50e9, 50e9,
                                   (enum topo_dragonfly_arrangement)(k % 3)};
        topo_graph g;
        char why[200];
        CHECK_INT_EQ(topo_dragonfly(&c, &g, why, sizeof why), 0);
        CHECK_INT_EQ(g.n_hosts, table[i].hosts);
        CHECK_INT_EQ(g.n_hosts, 4 * h * h * h * h + 2 * h * h);
        CHECK_INT_EQ(g.n_switches, table[i].groups * a);
        CHECK_INT_EQ(global_cables(&g, a), table[i].global);
        /* every router uses all k = 4h - 1 ports: p hosts, a - 1 local, h global */
        int radix_ok = 1;
        for (uint32_t v = g.n_hosts; v < g.n_nodes; v++)
            radix_ok &= g.out_offset[v + 1] - g.out_offset[v] == 4 * h - 1;
        CHECK(radix_ok);
        /* minimal paths: 2 under one router; 3 to the rest of the group and to
         * the h routers the source router reaches over its own global links;
         * 4 or 5 to everything else */
        uint32_t *dist = malloc(g.n_nodes * sizeof *dist);
        uint32_t sources[] = {0, g.n_hosts / 2, g.n_hosts - 1};
        for (size_t s = 0; s < 3; s++) {
            CHECK(topo_graph_hops_from(&g, sources[s], dist) == 0);
            unsigned tally[8] = {0};
            for (uint32_t v = 0; v < g.n_hosts; v++)
                if (v != sources[s])
                    tally[dist[v] < 7 ? dist[v] : 7]++;
            CHECK_INT_EQ(tally[2], p - 1);
            CHECK_INT_EQ(tally[3], (a - 1) * p + h * p);
            CHECK_INT_EQ(tally[4] + tally[5], g.n_hosts - a * p - h * p);
            CHECK_INT_EQ(tally[6] + tally[7] + tally[0] + tally[1], 0);
        }
        free(dist);
        topo_graph_fini(&g);
    }
}

static void test_fewer_groups_and_errors(void)
{
    /* 5 groups of a 4-router, h = 2 Dragonfly: every pair joined once (10),
     * routers keep idle global ports */
    topo_dragonfly_config c = {2, 4, 2, 5, 50e9, 50e9, 25e9, TOPO_DF_ABSOLUTE};
    topo_graph g;
    char why[200];
    CHECK_INT_EQ(topo_dragonfly(&c, &g, why, sizeof why), 0);
    CHECK_INT_EQ(g.n_hosts, 5 * 4 * 2);
    CHECK_INT_EQ(global_cables(&g, 4), 10);
    uint32_t *dist = malloc(g.n_nodes * sizeof *dist);
    CHECK(topo_graph_hops_from(&g, 0, dist) == 0);
    int all = 1;
    for (uint32_t v = 0; v < g.n_hosts; v++)
        all &= dist[v] <= 5;
    CHECK(all);
    free(dist);
    topo_graph_fini(&g);

    c.groups = 10; /* a h + 1 = 9 */
    CHECK(topo_dragonfly(&c, &g, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "groups must be between 2 and a x h + 1 = 4 x 2 + 1 = 9");
    topo_dragonfly_config zero = {0, 4, 2, 0, 50e9, 50e9, 50e9, TOPO_DF_ABSOLUTE};
    CHECK(topo_dragonfly(&zero, &g, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "got p 0, a 4, h 2");
    topo_dragonfly_config huge = {255, 512, 256, 0, 50e9, 50e9, 50e9, TOPO_DF_ABSOLUTE};
    CHECK(topo_dragonfly(&huge, &g, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "more than 2^31");
}

/* Bit j of the result: router v has a global link to group j (j < 32). */
static unsigned global_groups(const topo_graph *g, uint32_t v)
{
    unsigned set = 0;
    for (uint32_t i = g->out_offset[v]; i < g->out_offset[v + 1]; i++) {
        uint32_t w = g->link_dst[g->out_links[i]];
        if (g->node_kind[w] == TOPO_SWITCH && g->node_group[w] != g->node_group[v])
            set |= 1u << g->node_group[w];
    }
    return set;
}

static unsigned bits(unsigned x)
{
    unsigned n = 0;
    for (; x; x &= x - 1)
        n++;
    return n;
}

/* Every pair of the g groups joined by exactly one global cable, no router
 * with more than `h` of them, node_group the group of each router. */
static int pairs_once(const topo_graph *g, unsigned groups, unsigned h)
{
    unsigned *count = calloc(groups * groups, sizeof *count);
    int ok = 1;
    for (uint32_t l = 0; l < g->n_links; l += 2) {
        uint32_t s = g->link_src[l], d = g->link_dst[l];
        if (g->node_kind[s] == TOPO_SWITCH && g->node_kind[d] == TOPO_SWITCH &&
            g->node_group[s] != g->node_group[d]) {
            count[g->node_group[s] * groups + g->node_group[d]]++;
            count[g->node_group[d] * groups + g->node_group[s]]++;
        }
    }
    for (unsigned i = 0; i < groups; i++)
        for (unsigned j = 0; j < groups; j++)
            ok &= count[i * groups + j] == (i != j);
    for (uint32_t v = g->n_hosts; v < g->n_nodes; v++)
        ok &= bits(global_groups(g, v)) <= h;
    free(count);
    return ok;
}

/* a = 4, h = 2 (up to 9 groups), p = 1: each arrangement and every group
 * count joins every pair once, and minimal paths stay within 5 links. */
static void test_arrangements_all_sizes(void)
{
    for (int arr = 0; arr < 3; arr++)
        for (unsigned groups = 2; groups <= 9; groups++) {
            topo_dragonfly_config c = {1, 4, 2, groups, 50e9, 50e9, 50e9,
                                       (enum topo_dragonfly_arrangement)arr};
            topo_graph g;
            char why[200];
            CHECK_INT_EQ(topo_dragonfly(&c, &g, why, sizeof why), 0);
            CHECK_INT_EQ(global_cables(&g, 4), groups * (groups - 1) / 2);
            CHECK(pairs_once(&g, groups, 2));
            uint32_t *dist = malloc(g.n_nodes * sizeof *dist);
            CHECK(topo_graph_hops_from(&g, g.n_hosts - 1, dist) == 0);
            int within = 1;
            for (uint32_t v = 0; v < g.n_hosts; v++)
                within &= dist[v] <= 5;
            CHECK(within);
            free(dist);
            topo_graph_fini(&g);
        }
}

/* a = 2, h = 2, g = 5: group 2's ports 0, 1 sit on its router 0 and ports
 * 2, 3 on its router 1. Absolute: ports list groups 0, 1, 3, 4. Relative:
 * offsets 1, 2, 3, 4 -> groups 3, 4, 0, 1. Circulant: offsets +1, -1, +2,
 * -2 -> groups 3, 1, 4, 0. */
static void test_arrangement_ports(void)
{
    unsigned want[3][2] = {{1u << 0 | 1u << 1, 1u << 3 | 1u << 4},
                           {1u << 3 | 1u << 4, 1u << 0 | 1u << 1},
                           {1u << 3 | 1u << 1, 1u << 4 | 1u << 0}};
    for (int arr = 0; arr < 3; arr++) {
        topo_dragonfly_config c = {1, 2, 2, 5, 50e9, 50e9, 50e9,
                                   (enum topo_dragonfly_arrangement)arr};
        topo_graph g;
        char why[200];
        CHECK_INT_EQ(topo_dragonfly(&c, &g, why, sizeof why), 0);
        uint32_t r0 = g.n_hosts + 2 * 2; /* group 2, router 0 */
        CHECK_INT_EQ(g.node_group[r0], 2);
        CHECK_INT_EQ(global_groups(&g, r0), want[arr][0]);
        CHECK_INT_EQ(global_groups(&g, r0 + 1), want[arr][1]);
        topo_graph_fini(&g);
    }
    topo_dragonfly_config bad = {1, 2, 2, 5, 50e9, 50e9, 50e9,
                                 (enum topo_dragonfly_arrangement)7};
    topo_graph g;
    char why[200];
    CHECK(topo_dragonfly(&bad, &g, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "unknown global-link arrangement 7");
}

/* Dragonfly+ of radix-8 switches, balanced: p = 4 hosts and S = 4 spines per
 * leaf, L = 4 leaves and h = 4 global links per spine: g = S h + 1 = 17
 * groups, L p g = 272 hosts, g(g-1)/2 = 136 global links; every switch uses
 * 8 ports; from a host: 3 hosts at 2 links (its leaf), (L-1)p = 12 at 4 (its
 * group), (g-1) L p = 256 at 5. */
static void test_dragonfly_plus(void)
{
    for (int arr = 0; arr < 3; arr++) {
        topo_dragonfly_plus_config c = {4, 4, 4, 4, 0, 8, 50e9, 50e9, 50e9,
                                        (enum topo_dragonfly_arrangement)arr};
        topo_graph g;
        char why[200];
        CHECK_INT_EQ(topo_dragonfly_plus(&c, &g, why, sizeof why), 0);
        CHECK_INT_EQ(g.n_hosts, 272);
        CHECK_INT_EQ(g.n_switches, 17 * 8);
        CHECK_INT_EQ(g.n_links / 2, 272 + 17 * 16 + 136);
        CHECK(pairs_once(&g, 17, 4));
        CHECK(!g.updown);
        int full = 1;
        for (uint32_t v = g.n_hosts; v < g.n_nodes; v++)
            full &= g.out_offset[v + 1] - g.out_offset[v] == 8 &&
                    g.node_group[v] == (v - g.n_hosts) / 8 &&
                    g.node_tier[v] == ((v - g.n_hosts) % 8 < 4 ? 1 : 2);
        CHECK(full);
        uint32_t *dist = malloc(g.n_nodes * sizeof *dist);
        uint32_t sources[] = {0, 150, 271};
        for (size_t s = 0; s < 3; s++) {
            CHECK(topo_graph_hops_from(&g, sources[s], dist) == 0);
            unsigned t[8] = {0};
            for (uint32_t v = 0; v < g.n_hosts; v++)
                if (v != sources[s])
                    t[dist[v] < 7 ? dist[v] : 7]++;
            CHECK(t[2] == 3 && t[4] == 12 && t[5] == 256 && t[3] + t[6] + t[7] == 0);
        }
        free(dist);
        topo_graph_fini(&g);
    }
}

static void test_dragonfly_plus_refusals(void)
{
    topo_graph g;
    char why[200];
    topo_dragonfly_plus_config c = {4, 4, 4, 4, 18, 8, 50e9, 50e9, 50e9, TOPO_DF_ABSOLUTE};
    CHECK(topo_dragonfly_plus(&c, &g, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "between 2 and spines x h + 1 = 4 x 4 + 1 = 17");
    c.groups = 0, c.radix = 7;
    CHECK(topo_dragonfly_plus(&c, &g, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "a leaf needs p + spines = 4 + 4 = 8 ports, more than the radix 7");
    c.p = 3, c.spines = 4, c.leaves = 5;
    CHECK(topo_dragonfly_plus(&c, &g, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "a spine needs leaves + h = 5 + 4 = 9 ports, more than the radix 7");
    c.leaves = 0;
    CHECK(topo_dragonfly_plus(&c, &g, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "got p 3, leaves 0, spines 4, h 4");
    /* fewer groups than the maximum: 5 groups of a 2-spine, h = 2 group */
    topo_dragonfly_plus_config small = {2, 3, 2, 2, 5, 0, 50e9, 50e9, 25e9, TOPO_DF_RELATIVE};
    CHECK_INT_EQ(topo_dragonfly_plus(&small, &g, why, sizeof why), 0);
    CHECK_INT_EQ(g.n_hosts, 5 * 3 * 2);
    CHECK(pairs_once(&g, 5, 2));
    topo_graph_fini(&g);
}

int main(void)
{
    test_group_local_tables();
    test_balanced();
    test_fewer_groups_and_errors();
    test_arrangements_all_sizes();
    test_arrangement_ports();
    test_dragonfly_plus();
    test_dragonfly_plus_refusals();
    return check_report();
}
