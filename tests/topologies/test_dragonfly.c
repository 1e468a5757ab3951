/* test_dragonfly.c - exact counts, router radix and path lengths of balanced
 * Dragonflies (a = 2p = 2h) against hardware.md 6.3: h = 4 gives 33 groups,
 * 1,056 hosts, 528 global links; h = 8: 129 groups, 16,512 hosts, 8,256
 * global links; radix 4h - 1. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dragonfly.h"

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

static void test_balanced(void)
{
    struct { unsigned h, groups, hosts, global; } table[] = {{4, 33, 1056, 528},
                                                          {8, 129, 16512, 8256}};
    for (size_t i = 0; i < 2; i++) {
        unsigned h = table[i].h, a = 2 * h, p = h;
        topo_dragonfly_config c = {p, a, h, 0, 50e9, 50e9, 50e9};
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
    topo_dragonfly_config c = {2, 4, 2, 5, 50e9, 50e9, 25e9};
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
    topo_dragonfly_config zero = {0, 4, 2, 0, 50e9, 50e9, 50e9};
    CHECK(topo_dragonfly(&zero, &g, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "got p 0, a 4, h 2");
    topo_dragonfly_config huge = {255, 512, 256, 0, 50e9, 50e9, 50e9};
    CHECK(topo_dragonfly(&huge, &g, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "more than 2^31");
}

int main(void)
{
    test_balanced();
    test_fewer_groups_and_errors();
    return check_report();
}
