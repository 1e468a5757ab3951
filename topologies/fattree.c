/* fattree.c - k-ary fat-tree and 2-tier leaf-spine builders (see fattree.h). */
#include "fattree.h"

#include <stdio.h>
#include <stdlib.h>

#define FAIL(...) return (why && why_size ? snprintf(why, why_size, __VA_ARGS__) : 0), -1

static int finish(topo_graph *g, char *why, size_t why_size)
{
    g->updown = 1; /* every builder here makes a folded Clos */
    if (topo_graph_finish(g)) {
        topo_graph_fini(g);
        FAIL("out of memory for the topology");
    }
    return 0;
}

int topo_fattree_kary(unsigned k, double bytes_per_s, topo_graph *out, char *why,
                      size_t why_size)
{
    topo_graph_init(out);
    if (k < 2 || k % 2)
        FAIL("a k-ary fat-tree needs an even k of at least 2 (k/2 ports down, k/2 up), got %u", k);
    if (k > 256)
        FAIL("k = %u: at most 256 (%.4g hosts)", k, (double)k * k * k / 4);
    if (!(bytes_per_s > 0))
        FAIL("link bandwidth must be positive");
    unsigned half = k / 2;
    unsigned hosts = k * k * k / 4, per_pod = half * half;
    topo_graph *g = out;
    topo_graph_add_nodes(g, hosts, TOPO_HOST, 0);
    uint32_t edge0 = topo_graph_add_nodes(g, k * half, TOPO_SWITCH, 1);
    uint32_t agg0 = topo_graph_add_nodes(g, k * half, TOPO_SWITCH, 2);
    uint32_t core0 = topo_graph_add_nodes(g, half * half, TOPO_SWITCH, 3);
    for (unsigned h = 0; h < hosts; h++) {
        unsigned pod = h / per_pod, edge = (h % per_pod) / half;
        topo_graph_add_cable(g, h, edge0 + pod * half + edge, bytes_per_s);
    }
    for (unsigned pod = 0; pod < k; pod++)
        for (unsigned e = 0; e < half; e++)
            for (unsigned a = 0; a < half; a++)
                topo_graph_add_cable(g, edge0 + pod * half + e, agg0 + pod * half + a,
                                     bytes_per_s);
    for (unsigned pod = 0; pod < k; pod++)
        for (unsigned a = 0; a < half; a++)
            for (unsigned j = 0; j < half; j++)
                topo_graph_add_cable(g, agg0 + pod * half + a, core0 + a * half + j,
                                     bytes_per_s);
    return finish(g, why, why_size);
}

int topo_leafspine(unsigned radix, unsigned leaves, unsigned down, double bytes_per_s,
                   topo_graph *out, char *why, size_t why_size)
{
    topo_graph_init(out);
    if (radix < 2 || radix > 4096)
        FAIL("switch radix must be between 2 and 4096, got %u", radix);
    if (down < 1 || down >= radix)
        FAIL("a leaf of radix %u needs at least one host port and one up port, got %u host "
             "ports", radix, down);
    if (leaves < 1 || leaves > radix)
        FAIL("a leaf-spine of radix %u has at most %u leaves (one port on every spine each), "
             "got %u", radix, radix, leaves);
    if (!(bytes_per_s > 0))
        FAIL("link bandwidth must be positive");
    unsigned spines = radix - down;
    topo_graph *g = out;
    topo_graph_add_nodes(g, leaves * down, TOPO_HOST, 0);
    uint32_t leaf0 = topo_graph_add_nodes(g, leaves, TOPO_SWITCH, 1);
    uint32_t spine0 = topo_graph_add_nodes(g, spines, TOPO_SWITCH, 2);
    for (unsigned h = 0; h < leaves * down; h++)
        topo_graph_add_cable(g, h, leaf0 + h / down, bytes_per_s);
    for (unsigned l = 0; l < leaves; l++)
        for (unsigned s = 0; s < spines; s++)
            topo_graph_add_cable(g, leaf0 + l, spine0 + s, bytes_per_s);
    return finish(g, why, why_size);
}

int topo_railopt(unsigned sus, unsigned nodes_per_su, unsigned rails, unsigned radix,
                 double bytes_per_s, topo_graph *out, char *why, size_t why_size)
{
    topo_graph_init(out);
    if (!sus || !nodes_per_su || !rails)
        FAIL("a rail-optimised fabric needs at least one SU, node and rail");
    if (radix < 2 || radix > 4096)
        FAIL("switch radix must be between 2 and 4096, got %u", radix);
    if (nodes_per_su >= radix)
        FAIL("a leaf of radix %u cannot take %u nodes and keep an up port", radix, nodes_per_su);
    if (!(bytes_per_s > 0))
        FAIL("link bandwidth must be positive");
    unsigned leaves = sus * rails, up = radix - nodes_per_su;
    unsigned long long up_ports = (unsigned long long)leaves * up;
    if (up_ports % radix)
        FAIL("leaves x up ports = %u x %u = %llu is not a multiple of the radix %u: the spines "
             "would not be full", leaves, up, up_ports, radix);
    unsigned spines = (unsigned)(up_ports / radix);
    if (spines > up)
        FAIL("%u SUs need %u spines, more than a leaf's %u up ports can reach: a third tier is "
             "needed (not built yet)", sus, spines, up);
    if (up % spines)
        FAIL("a leaf's %u up ports do not spread evenly over %u spines", up, spines);
    topo_graph *g = out;
    unsigned hosts = sus * nodes_per_su * rails;
    topo_graph_add_nodes(g, hosts, TOPO_HOST, 0);
    uint32_t leaf0 = topo_graph_add_nodes(g, leaves, TOPO_SWITCH, 1);
    uint32_t spine0 = topo_graph_add_nodes(g, spines, TOPO_SWITCH, 2);
    for (unsigned h = 0; h < hosts; h++) {
        unsigned rail = h % rails, su = h / (rails * nodes_per_su);
        topo_graph_add_cable(g, h, leaf0 + su * rails + rail, bytes_per_s);
    }
    for (unsigned l = 0; l < leaves; l++)
        for (unsigned s = 0; s < spines; s++)
            for (unsigned c = 0; c < up / spines; c++)
                topo_graph_add_cable(g, leaf0 + l, spine0 + s, bytes_per_s);
    return finish(g, why, why_size);
}
