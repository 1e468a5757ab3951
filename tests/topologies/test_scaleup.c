/* test_scaleup.c - scale-up domains on a built fabric: one crossbar per
 * block of consecutive hosts (an 8-GPU HGX node on a rail-optimised fabric,
 * an NVL72 rack on a leaf-spine), host groups, path lengths through the
 * crossbar, and refusals with the arithmetic. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fattree.h"
#include "graph.h"
#include "scaleup.h"

/* 2 SUs of 32 nodes x 8 GPUs (512 GPUs), NVLink 450 GB/s per direction per
 * GPU (H100's 900 GB/s bidirectional, hardware.md 0): 64 crossbars of 8
 * ports; a GPU reaches its node's other 7 GPUs in 2 links over NVLink, its
 * rail in its SU in 2 over the leaf, everything else in 4. */
static void test_hgx_nodes(void)
{
    topo_graph g;
    char why[200];
    CHECK_INT_EQ(topo_railopt(2, 32, 8, 64, 50e9, &g, why, sizeof why), 0);
    uint32_t nodes = g.n_nodes, links = g.n_links;
    CHECK_INT_EQ(topo_scaleup_add(&g, 8, 450e9, why, sizeof why), 0);
    CHECK_INT_EQ(g.n_scaleup, 64);
    CHECK_INT_EQ(g.n_nodes, nodes + 64);
    CHECK_INT_EQ(g.n_links, links + 2 * 512);
    CHECK_INT_EQ(g.n_hosts, 512);
    int ok = 1;
    for (uint32_t x = nodes; x < g.n_nodes; x++) {
        ok &= g.node_kind[x] == TOPO_SCALEUP && g.node_tier[x] == 0 &&
              g.node_group[x] == x - nodes && g.out_offset[x + 1] - g.out_offset[x] == 8;
        for (uint32_t i = g.out_offset[x]; i < g.out_offset[x + 1]; i++) {
            uint32_t l = g.out_links[i], h = g.link_dst[l];
            ok &= h / 8 == x - nodes && g.link_bytes_per_s[l] == 450e9 &&
                  g.link_src[l ^ 1] == h;
        }
    }
    CHECK(ok);
    for (uint32_t h = 0; h < g.n_hosts; h++)
        ok &= g.node_group[h] == h / 8;
    CHECK(ok);
    uint32_t *dist = malloc(g.n_nodes * sizeof *dist);
    uint32_t src = 8 * 40 + 3; /* SU 1, node 8, rail 3 */
    CHECK(topo_graph_hops_from(&g, src, dist) == 0);
    for (uint32_t h = 0; h < g.n_hosts; h++) {
        int same_node = h / 8 == src / 8, same_leaf = h % 8 == 3 && h / 256 == 1;
        ok &= dist[h] == (h == src ? 0u : same_node || same_leaf ? 2u : 4u);
    }
    CHECK(ok);
    free(dist);
    topo_graph_fini(&g);
}

/* NVL72 racks on a leaf-spine of 36 leaves x 32 hosts = 1,152 GPUs = 16
 * racks of 72: 16 crossbars of 72 ports */
static void test_nvl72(void)
{
    topo_graph g;
    char why[200];
    CHECK_INT_EQ(topo_leafspine(64, 36, 32, 50e9, &g, why, sizeof why), 0);
    CHECK_INT_EQ(topo_scaleup_add(&g, 72, 900e9, why, sizeof why), 0);
    CHECK_INT_EQ(g.n_scaleup, 16);
    uint32_t last = g.n_nodes - 1;
    CHECK_INT_EQ(g.out_offset[last + 1] - g.out_offset[last], 72);
    CHECK_INT_EQ(g.node_group[1151], 15);
    CHECK_INT_EQ(g.node_group[71], 0);
    CHECK_INT_EQ(g.node_group[72], 1);
    topo_graph_fini(&g);
}

static void test_refusals(void)
{
    topo_graph g;
    char why[200];
    CHECK_INT_EQ(topo_railopt(2, 32, 8, 64, 50e9, &g, why, sizeof why), 0);
    uint32_t nodes = g.n_nodes, links = g.n_links;
    CHECK(topo_scaleup_add(&g, 72, 900e9, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "512 hosts do not split into domains of 72: 512 = 7 x 72 + 8");
    CHECK(topo_scaleup_add(&g, 0, 900e9, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "at least one host, got 0");
    CHECK(topo_scaleup_add(&g, 8, 0, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "positive");
    CHECK_INT_EQ(g.n_nodes, nodes); /* refused: unchanged */
    CHECK_INT_EQ(g.n_links, links);
    CHECK_INT_EQ(g.node_group[0], TOPO_NO_GROUP);
    CHECK_INT_EQ(topo_scaleup_add(&g, 8, 450e9, why, sizeof why), 0);
    CHECK(topo_scaleup_add(&g, 8, 450e9, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "already has 64 scale-up crossbars");
    topo_graph_fini(&g);
    topo_graph_init(&g);
    topo_graph_add_nodes(&g, 8, TOPO_HOST, 0);
    CHECK(topo_scaleup_add(&g, 8, 450e9, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "before adding scale-up domains");
    topo_graph_fini(&g);
}

int main(void)
{
    test_hgx_nodes();
    test_nvl72();
    test_refusals();
    return check_report();
}
