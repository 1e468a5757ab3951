/* fabric.h - a cluster's network from its description: the topology graph
 * (fabric plus scale-up domains), the router and the collective parameters.
 *
 * Hosts are GPU NIC ports, one per GPU; GPU (rank) r is host r, so a node's
 * GPUs are consecutive hosts and share a scale-up domain of gpus_per_node.
 * The fabric may have more host ports than GPUs (a leaf-spine rounds up to
 * whole leaves, a k-ary fat-tree has k^3/4): the extra ports stay idle.
 *
 * Link capacities in the graph are effective: line rate x the technology's
 * efficiency (links.xml; 1 when no efficiency was measured), so a flow alone
 * on a path reaches what nccl-tests measure for a large transfer, and busbw
 * can never exceed the line rate.
 *
 * Sizing (every number checked, the arithmetic shown on refusal):
 *  - fat-tree: k-ary (Al-Fares), k required: k^3/4 >= GPUs.
 *  - leaf-spine: radix required; oversubscription d:u splits a leaf's ports
 *    (down = radix d / (d + u)); leaves = ceil(GPUs / down); 2 tiers while
 *    leaves <= radix, 3 tiers (pods of radix/2 leaves) when asked or needed.
 *  - rail-optimised: rails = gpus_per_node, nodes_per_su nodes per scalable
 *    unit (SuperPOD: 32), SUs = nodes / nodes_per_su rounded up to the
 *    first count the builder can cable evenly (e.g. 3 -> 4, 9 -> 16);
 *    radix required.
 *  - Dragonfly: p, a, h required, groups default a h + 1.
 *  - Dragonfly+: p, leaves, spines, h required, groups default spines h + 1.
 *  - planes > 1: that many copies of the switch fabric, each host with one
 *    port into each (each port at the link rate).
 */
#ifndef DCSIM_MODELS_FABRIC_H
#define DCSIM_MODELS_FABRIC_H

#include <stddef.h>

#include "graph.h"
#include "hardware.h"
#include "netcoll.h"
#include "routing.h"

enum fabric_topology { FABRIC_FAT_TREE = 0, FABRIC_LEAF_SPINE, FABRIC_RAIL_OPTIMIZED,
                       FABRIC_DRAGONFLY, FABRIC_DRAGONFLY_PLUS, FABRIC_TOPOLOGY_COUNT };

typedef struct fabric_config {
    enum fabric_topology topology;
    unsigned gpus;            /* GPUs, one fabric port each */
    unsigned gpus_per_node;   /* scale-up domain size; <= 1: none */
    hw_link link;             /* the fabric's technology */
    hw_link scaleup;          /* the scale-up technology (used when gpus_per_node > 1) */
    double scaleup_bytes_per_s; /* per GPU and direction, before efficiency */
    unsigned radix, tiers, k, nodes_per_su, planes;
    unsigned over_down, over_up;  /* leaf oversubscription down:up; 0:0 = 1:1 */
    unsigned p, a, h, groups, leaves, spines;  /* Dragonfly, Dragonfly+ */
    int arrangement;          /* enum topo_dragonfly_arrangement */
    topo_route_config routing;
    unsigned channels, chunks; /* collective channels (0: auto) and pipeline chunks */
} fabric_config;

typedef struct fabric {
    topo_graph g;
    topo_router *router;
    nc_fabric nc;
    unsigned gpus;
    double link_bytes_per_s;     /* effective fabric link capacity */
    double scaleup_link_bytes_per_s; /* effective, per GPU and direction; 0 = none */
    double *scratch;             /* n_links zeros lent to the analytic path (nc.scratch) */
    double *incast_efficiency;   /* per link: the fabric technology's incast efficiency on
                                    switch-to-host links, 1 elsewhere; NULL when not given */
    double inter_wire_latency_s; /* 2 x nic-latency + switch hops of the longest
                                    cross-domain path x switch-latency: a floor under
                                    nc.inter_step_latency_s */
    double intra_wire_latency_s; /* 2 x nic-latency + one crossbar hop of the scale-up
                                    technology (0 without a domain): floor of the intra step */
} fabric;

const char *fabric_topology_name(int t); /* "fat-tree", "leaf-spine", "rail-optimized",
                                            "dragonfly", "dragonfly-plus"; "?" */
int fabric_topology_parse(const char *name, enum fabric_topology *out);

/* Build the fabric. Returns 0, or -1 with a one-line reason (sizes that do
 * not fit or divide, with the arithmetic; no memory). */
int fabric_build(const fabric_config *c, fabric *out, char *why, size_t why_size);
void fabric_free(fabric *f); /* NULL-safe */

#endif
