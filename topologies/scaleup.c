/* scaleup.c - one crossbar per block of consecutive hosts (see scaleup.h). */
#include "scaleup.h"

#include <stdio.h>

#define FAIL(...) return (why && why_size ? snprintf(why, why_size, __VA_ARGS__) : 0), -1

int topo_scaleup_check(uint32_t n_hosts, unsigned per, double bytes_per_s, char *why,
                       size_t why_size)
{
    if (per < 1)
        FAIL("a scale-up domain needs at least one host, got 0");
    if (n_hosts % per)
        FAIL("%u hosts do not split into domains of %u: %u = %u x %u + %u", n_hosts, per,
             n_hosts, n_hosts / per, per, n_hosts % per);
    if (!(bytes_per_s > 0))
        FAIL("scale-up bandwidth must be positive");
    return 0;
}

static int scaleup_check(const topo_graph *g, unsigned per, double bytes_per_s, char *why,
                         size_t why_size)
{
    if (!g->out_offset)
        FAIL("build the fabric (topo_graph_finish) before adding scale-up domains");
    if (g->n_scaleup)
        FAIL("the graph already has %u scale-up crossbars", g->n_scaleup);
    if (topo_scaleup_check(g->n_hosts, per, bytes_per_s, why, why_size))
        return -1;
    for (uint32_t v = 0; v < g->n_hosts; v++)
        if (g->node_kind[v] != TOPO_HOST)
            FAIL("node %u is not a host: hosts must be ids 0 .. %u", v, g->n_hosts - 1);
    return 0;
}

int topo_scaleup_add(topo_graph *g, unsigned hosts_per_domain, double bytes_per_s, char *why,
                     size_t why_size)
{
    if (scaleup_check(g, hosts_per_domain, bytes_per_s, why, why_size))
        return -1;
    uint32_t domains = g->n_hosts / hosts_per_domain;
    uint32_t xbar0 = topo_graph_add_nodes(g, domains, TOPO_SCALEUP, 0);
    for (uint32_t d = 0; d < domains && !g->failed; d++)
        g->node_group[xbar0 + d] = d;
    for (uint32_t h = 0; h < g->n_hosts && !g->failed; h++) {
        g->node_group[h] = h / hosts_per_domain;
        topo_graph_add_cable(g, h, xbar0 + h / hosts_per_domain, bytes_per_s);
    }
    if (topo_graph_finish(g))
        FAIL("out of memory adding scale-up domains");
    return 0;
}
