/* test_fattree.c - exact counts and path lengths of k-ary fat-trees,
 * leaf-spines and rail-optimised fat-trees against the formulas of
 * hardware.md 6.1 (Al-Fares et al. 2008 for the k-ary tree; the 2-tier table
 * for radix 40, 64, 128 and 144) and the B200 RA rows of 6.2 (2 and 3 tiers). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fattree.h"
#include "graph.h"

static unsigned count_tier(const topo_graph *g, unsigned tier)
{
    unsigned n = 0;
    for (uint32_t v = 0; v < g->n_nodes; v++)
        n += g->node_kind[v] == TOPO_SWITCH && g->node_tier[v] == tier;
    return n;
}

/* every switch has `ports` links out, every host one */
static int degrees_are(const topo_graph *g, unsigned ports)
{
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        uint32_t deg = g->out_offset[v + 1] - g->out_offset[v];
        if (deg != (g->node_kind[v] == TOPO_HOST ? 1u : ports))
            return 0;
    }
    return 1;
}

/* hop counts from one host to every host, tallied by length */
static void host_hops(const topo_graph *g, uint32_t src, unsigned *tally, unsigned max_hops)
{
    uint32_t *dist = malloc(g->n_nodes * sizeof *dist);
    CHECK(topo_graph_hops_from(g, src, dist) == 0);
    memset(tally, 0, (max_hops + 2) * sizeof *tally);
    for (uint32_t v = 0; v < g->n_nodes; v++)
        if (g->node_kind[v] == TOPO_HOST && v != src)
            tally[dist[v] <= max_hops ? dist[v] : max_hops + 1]++;
    free(dist);
}

static void test_kary(void)
{
    unsigned ks[] = {4, 8, 16, 64};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        unsigned k = ks[i], half = k / 2;
        topo_graph g;
        char why[200];
        CHECK_INT_EQ(topo_fattree_kary(k, 50e9, &g, why, sizeof why), 0);
        CHECK_INT_EQ(g.n_hosts, k * k * k / 4);
        CHECK_INT_EQ(g.n_switches, 5 * k * k / 4);
        CHECK_INT_EQ(count_tier(&g, 1), k * half);  /* edge */
        CHECK_INT_EQ(count_tier(&g, 2), k * half);  /* aggregation */
        CHECK_INT_EQ(count_tier(&g, 3), half * half); /* core */
        CHECK_INT_EQ(g.n_links, 2 * 3 * k * k * k / 4); /* 3k^3/4 cables, both ways */
        CHECK(degrees_are(&g, k));
        for (uint32_t l = 0; l < g.n_links; l++)
            if (g.link_bytes_per_s[l] != 50e9 || g.link_src[l ^ 1] != g.link_dst[l]) {
                CHECK(0);
                break;
            }
        /* path lengths: 2 under one edge, 4 within a pod, 6 across pods; all
         * reachable. Every source for small k, one for k = 64. */
        unsigned tally[8];
        uint32_t sources = k <= 16 ? g.n_hosts : 1;
        int ok = 1;
        for (uint32_t h = 0; h < sources && ok; h++) {
            host_hops(&g, h, tally, 6);
            ok = tally[2] == half - 1 && tally[4] == half * half - half &&
                 tally[6] == g.n_hosts - half * half && tally[7] == 0 && tally[1] == 0 &&
                 tally[3] == 0 && tally[5] == 0;
        }
        CHECK(ok);
        topo_graph_fini(&g);
    }
}

static void test_leafspine(void)
{
    /* hardware.md 6.1, 2-tier non-blocking: hosts / switches */
    struct { unsigned radix, hosts, switches; } table[] = {
        {40, 800, 60}, {64, 2048, 96}, {128, 8192, 192}, {144, 10368, 216}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        unsigned r = table[i].radix;
        topo_graph g;
        char why[200];
        CHECK_INT_EQ(topo_leafspine(r, r, r / 2, 50e9, &g, why, sizeof why), 0);
        CHECK_INT_EQ(g.n_hosts, table[i].hosts);
        CHECK_INT_EQ(g.n_switches, table[i].switches);
        CHECK(degrees_are(&g, r));
        unsigned tally[6];
        host_hops(&g, 0, tally, 4);
        CHECK_INT_EQ(tally[2], r / 2 - 1);
        CHECK_INT_EQ(tally[4], g.n_hosts - r / 2);
        CHECK_INT_EQ(tally[5], 0);
        topo_graph_fini(&g);
    }
    /* 3:1 oversubscribed radix 64: 48 down, 16 up ports per leaf */
    topo_graph g;
    char why[200];
    CHECK_INT_EQ(topo_leafspine(64, 64, 48, 50e9, &g, why, sizeof why), 0);
    CHECK_INT_EQ(g.n_hosts, 64 * 48);
    CHECK_INT_EQ(count_tier(&g, 1), 64);
    CHECK_INT_EQ(count_tier(&g, 2), 16);
    CHECK_INT_EQ(g.n_links, 2 * (64 * 48 + 64 * 16));
    topo_graph_fini(&g);
    /* 3-tier counts of the same radixes (hardware.md 6.1): k^3/4 and 5k^2/4 */
    struct { unsigned k, hosts, switches; } three[] = {{40, 16000, 2000}, {64, 65536, 5120}};
    for (size_t i = 0; i < 2; i++) {
        CHECK_INT_EQ(topo_fattree_kary(three[i].k, 50e9, &g, why, sizeof why), 0);
        CHECK_INT_EQ(g.n_hosts, three[i].hosts);
        CHECK_INT_EQ(g.n_switches, three[i].switches);
        topo_graph_fini(&g);
    }
}

/* DGX SuperPOD B200 RA (hardware.md 6.2, V): SUs of 32 nodes x 8 GPUs on
 * 64-port switches: 2 SUs 512 GPUs, 16 leaves, 8 spines; 4 SUs 1,024, 32, 16;
 * 8 SUs 2,048, 64, 32. And the H100 RA's 1-SU shape: 8 leaves, 4 spines,
 * 256 leaf-to-spine cables. */
static void test_railopt(void)
{
    struct { unsigned sus, gpus, leaves, spines; } table[] = {
        {2, 512, 16, 8}, {4, 1024, 32, 16}, {8, 2048, 64, 32}, {1, 256, 8, 4}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        topo_graph g;
        char why[200];
        CHECK_INT_EQ(topo_railopt(table[i].sus, 32, 8, 64, 50e9, &g, why, sizeof why), 0);
        CHECK_INT_EQ(g.n_hosts, table[i].gpus);
        CHECK_INT_EQ(count_tier(&g, 1), table[i].leaves);
        CHECK_INT_EQ(count_tier(&g, 2), table[i].spines);
        CHECK_INT_EQ(g.n_links / 2 - g.n_hosts, table[i].leaves * 32); /* leaf-to-spine */
        CHECK(degrees_are(&g, 64));
        /* GPU 0 (node 0, rail 0): its rail in its SU is one switch away */
        uint32_t *dist = malloc(g.n_nodes * sizeof *dist);
        CHECK(topo_graph_hops_from(&g, 0, dist) == 0);
        int ok = 1;
        for (uint32_t h = 1; h < g.n_hosts; h++) {
            int same_leaf = h % 8 == 0 && h / 256 == 0;
            ok &= dist[h] == (same_leaf ? 2u : 4u);
        }
        CHECK(ok);
        free(dist);
        topo_graph_fini(&g);
    }
    topo_graph g;
    char why[200];
    CHECK(topo_railopt(1, 64, 8, 64, 50e9, &g, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "cannot take 64 nodes");
    CHECK(topo_railopt(3, 32, 8, 64, 50e9, &g, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "spread evenly");
}

/* Does every core switch have a cable to every spine group? */
static int cores_reach_all_groups(const topo_graph *g, unsigned groups)
{
    unsigned char *seen = malloc(groups);
    int ok = 1;
    for (uint32_t v = 0; v < g->n_nodes && ok; v++) {
        if (g->node_kind[v] != TOPO_SWITCH || g->node_tier[v] != 3)
            continue;
        memset(seen, 0, groups);
        unsigned n = 0;
        for (uint32_t i = g->out_offset[v]; i < g->out_offset[v + 1]; i++) {
            uint32_t grp = g->node_group[g->link_dst[g->out_links[i]]];
            if (grp < groups && !seen[grp])
                seen[grp] = 1, n++;
        }
        ok = n == groups;
    }
    free(seen);
    return ok;
}

/* From GPU src of a 3-tier rail-optimised fabric (32 nodes x 8 rails per
 * SU): 2 links to its rail in its SU, 4 to its rail in the SUs of its spine
 * block, 6 to everything else. */
static int railopt3_paths(const topo_graph *g, uint32_t src, unsigned block)
{
    uint32_t *dist = malloc(g->n_nodes * sizeof *dist);
    CHECK(topo_graph_hops_from(g, src, dist) == 0);
    int ok = 1;
    for (uint32_t h = 0; h < g->n_hosts && ok; h++) {
        unsigned su = h / 256, src_su = src / 256, rail = h % 8;
        uint32_t want = h == src ? 0
                        : rail != src % 8       ? 6
                        : su == src_su          ? 2
                        : su / block == src_su / block ? 4
                                                : 6;
        ok = dist[h] == want;
    }
    free(dist);
    return ok;
}

/* B200 RA (hardware.md 6.2, V, A16) three-tier rows: 16 SUs 4,096 GPUs,
 * 128 leaf / 128 spine / 64 core; 32 SUs 8,192, 256/256/128; 64 SUs 16,384,
 * 512/512/256. Every switch uses all 64 ports; every core reaches every
 * spine group (rail x block of SUs: 8 groups of 16 or 32 SUs, or 16 groups
 * of 32 SUs at 64 SUs). */
static void test_railopt3(void)
{
    struct { unsigned sus, leaves, spines, cores, groups, block; } table[] = {
        {16, 128, 128, 64, 8, 16}, {32, 256, 256, 128, 8, 32}, {64, 512, 512, 256, 16, 32}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        topo_graph g;
        char why[300];
        CHECK_INT_EQ(topo_railopt(table[i].sus, 32, 8, 64, 50e9, &g, why, sizeof why), 0);
        CHECK_INT_EQ(g.n_hosts, table[i].sus * 256);
        CHECK_INT_EQ(count_tier(&g, 1), table[i].leaves);
        CHECK_INT_EQ(count_tier(&g, 2), table[i].spines);
        CHECK_INT_EQ(count_tier(&g, 3), table[i].cores);
        CHECK_INT_EQ(g.n_links / 2, g.n_hosts + 32 * (table[i].leaves + table[i].spines));
        CHECK(degrees_are(&g, 64));
        CHECK(g.updown);
        CHECK(cores_reach_all_groups(&g, table[i].groups));
        CHECK_INT_EQ(g.node_group[g.n_hosts + table[i].leaves - 1], table[i].sus - 1); /* SU */
        CHECK_INT_EQ(g.node_group[g.n_hosts + table[i].leaves + table[i].spines - 1],
                     table[i].groups - 1); /* spine group */
        uint32_t sources[] = {0, 8 * 37 + 5, g.n_hosts - 1};
        for (size_t s = 0; s < 3; s++)
            CHECK(railopt3_paths(&g, sources[s], table[i].block));
        topo_graph_fini(&g);
    }
    topo_graph g;
    char why[300];
    /* 12 SUs: b = 12 or 6 or 3 gives S_g = b spines, not dividing 32 up
     * ports; b = 4 (2) gives 24 (48) groups, so a spine's 32 up ports would
     * split over 12 (24) cores; b = 1 gives 96 groups, more than 64 ports */
    CHECK(topo_railopt(12, 32, 8, 64, 50e9, &g, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "12 SUs x 8 rails = 96 leaves need a third tier");
    CHECK(topo_railopt(16, 31, 8, 63, 50e9, &g, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "the radix 63 must be even");
    /* radix 8, 4 nodes x 8 rails: 16 SUs make at least 32 spine groups, more
     * than a core's 8 ports (a fourth tier) */
    CHECK(topo_railopt(16, 4, 8, 8, 50e9, &g, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "8 rails x 4 blocks of up to 4 SUs = 32 spine groups, more than a "
                        "core switch's 8 ports");
}

static void test_impossible(void)
{
    topo_graph g;
    char why[200];
    CHECK(topo_fattree_kary(7, 50e9, &g, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "needs an even k of at least 2");
    CHECK_CONTAINS(why, "got 7");
    CHECK(topo_fattree_kary(0, 50e9, &g, why, sizeof why) != 0);
    CHECK(topo_fattree_kary(258, 50e9, &g, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "at most 256");
    CHECK(topo_fattree_kary(4, 0, &g, why, sizeof why) != 0);
    CHECK(topo_leafspine(64, 65, 32, 50e9, &g, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "at most 64 leaves");
    CHECK(topo_leafspine(64, 8, 64, 50e9, &g, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "at least one host port and one up port");
    CHECK(topo_leafspine(1, 1, 1, 50e9, &g, why, sizeof why) != 0);
    topo_graph_fini(&g);
    topo_graph_fini(NULL);
}

int main(void)
{
    test_kary();
    test_leafspine();
    test_railopt();
    test_railopt3();
    test_impossible();
    return check_report();
}
