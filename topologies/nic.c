/* nic.c - shared NICs under a built fabric (see nic.h): the fabric's host
 * ports become TOPO_NIC nodes with gpus_per_nic GPU hosts each. */
#include "nic.h"

#include <stdio.h>

#define FAIL(...) return (why && why_size ? snprintf(why, why_size, __VA_ARGS__) : 0), -1

int topo_nic_check(double ports, unsigned gpus_per_nic, double switches, double links,
                   char *why, size_t why_size)
{
    if (gpus_per_nic < 1)
        FAIL("a NIC needs at least one GPU");
    double gpus = ports * gpus_per_nic;
    if (gpus + switches + ports > 2147483647.0 || links + 2 * gpus > 2147483647.0)
        FAIL("%.0f NIC ports x %u GPUs each: more than 2^31 ids", ports, gpus_per_nic);
    return 0;
}

static int ports_check(const topo_graph *p, unsigned gpus_per_nic, double bytes_per_s,
                       char *why, size_t why_size)
{
    if (topo_nic_check(p->n_hosts, gpus_per_nic, p->n_switches, p->n_links, why, why_size))
        return -1;
    if (!(bytes_per_s > 0))
        FAIL("the GPU-to-NIC rate must be positive");
    if (p->n_scaleup || p->n_nics)
        FAIL("the fabric already has scale-up crossbars or NICs: expand the NICs first");
    for (uint32_t v = 0; v < p->n_nodes; v++)
        if ((p->node_kind[v] == TOPO_HOST) != (v < p->n_hosts))
            FAIL("node %u: the fabric's hosts must come first (ids 0 .. %u)", v, p->n_hosts - 1);
    return 0;
}

int topo_nic_expand(const topo_graph *ports, unsigned gpus_per_nic, double bytes_per_s,
                    topo_graph *out, char *why, size_t why_size)
{
    topo_graph_init(out);
    if (ports_check(ports, gpus_per_nic, bytes_per_s, why, why_size))
        return -1;
    const topo_graph *p = ports;
    topo_graph *g = out;
    uint32_t gpus = p->n_hosts * gpus_per_nic, shift = gpus - p->n_hosts;
    topo_graph_add_nodes(g, gpus, TOPO_HOST, 0);
    for (uint32_t v = p->n_hosts; v < p->n_nodes && !g->failed; v++) {
        uint32_t id = topo_graph_add_node(g, (enum topo_node_kind)p->node_kind[v],
                                          p->node_tier[v]);
        g->node_plane[id] = p->node_plane[v];
        g->node_group[id] = p->node_group[v];
    }
    uint32_t nic0 = topo_graph_add_nodes(g, p->n_hosts, TOPO_NIC, 0);
    for (uint32_t l = 0; l + 1 < p->n_links && !g->failed; l += 2) {
        uint32_t a = p->link_src[l], b = p->link_dst[l];
        a = a < p->n_hosts ? nic0 + a : a + shift;
        b = b < p->n_hosts ? nic0 + b : b + shift;
        topo_graph_add_cable(g, a, b, p->link_bytes_per_s[l]);
        if (!g->failed) /* keep the reverse rate even if it differs */
            g->link_bytes_per_s[g->n_links - 1] = p->link_bytes_per_s[l + 1];
    }
    for (uint32_t h = 0; h < gpus; h++)
        topo_graph_add_cable(g, h, nic0 + h / gpus_per_nic, bytes_per_s);
    g->updown = p->updown;
    if (topo_graph_finish(g)) {
        topo_graph_fini(g);
        FAIL("out of memory for the topology");
    }
    return 0;
}
