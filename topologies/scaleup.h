/* scaleup.h - scale-up domains (NVLink/NVSwitch) on top of a built fabric.
 *
 * Hosts 0 .. n-1 are cut, in id order, into consecutive blocks of
 * hosts_per_domain (8 for an HGX/DGX node, 72 for an NVL72 rack); each block
 * gets one TOPO_SCALEUP crossbar (tier 0, node_group = domain) and one cable
 * host <-> crossbar per host. The crossbar is non-blocking and joins only its
 * own hosts, so it never carries traffic between domains (graph.h). Builders
 * number a node's GPUs consecutively (rail-optimised host id = node x rails +
 * rail), so a block is a node or a run of whole nodes when hosts_per_domain
 * is a multiple of the GPUs per node.
 */
#ifndef DCSIM_TOPO_SCALEUP_H
#define DCSIM_TOPO_SCALEUP_H

#include <stddef.h>
#include <stdint.h>

#include "graph.h"

/* Add n_hosts / hosts_per_domain crossbars to the finished graph g (ids after
 * every existing node), a cable of bytes_per_s each way per host (the
 * per-direction NVLink bandwidth of a GPU, e.g. 450e9 for H100's 900 GB/s
 * bidirectional; hardware.md 0), set node_group[host] = host /
 * hosts_per_domain, then rebuild the adjacency with topo_graph_finish.
 * Returns 0, or -1 with a one-line reason and g unchanged: g not finished,
 * already has crossbars, hosts not first in id order, hosts_per_domain 0 or
 * not dividing n_hosts (the arithmetic is shown), bandwidth not positive.
 * Out of memory while adding: -1, g->failed set; the caller frees g. */
int topo_scaleup_add(topo_graph *g, unsigned hosts_per_domain, double bytes_per_s, char *why,
                     size_t why_size);

/* The checks of topo_scaleup_add that depend on the numbers only, for a
 * fabric of n_hosts host ports not yet built: hosts_per_domain at least 1
 * and dividing n_hosts, bandwidth positive. Returns 0, or -1 with the reason
 * topo_scaleup_add would give. Then there are n_hosts / hosts_per_domain
 * crossbars and n_hosts scale-up cables. */
int topo_scaleup_check(uint32_t n_hosts, unsigned hosts_per_domain, double bytes_per_s,
                       char *why, size_t why_size);

#endif
