/* fabric.h - a cluster's network from its description: the topology graph
 * (fabric plus scale-up domains), the router and the collective parameters.
 *
 * Hosts are GPU NIC ports, one per GPU; GPU (rank) r is host r, so a node's
 * GPUs are consecutive hosts and share a scale-up domain of gpus_per_node.
 * With shape.nics_per_node below gpus_per_node the GPUs of a node share its
 * NICs (topologies/nic.h): host r hangs under a TOPO_NIC node that holds the
 * fabric link, so the flows of the GPUs of one NIC share that link.
 * The fabric may have more host ports than GPUs (a leaf-spine rounds up to
 * whole leaves, a k-ary fat-tree has k^3/4): the extra ports stay idle.
 *
 * Link capacities in the graph are effective: line rate x the technology's
 * efficiency (links.xml; 1 when no efficiency was measured), so a flow alone
 * on a path reaches what nccl-tests measure for a large transfer, and busbw
 * can never exceed the line rate.
 *
 * The topology comes from the registry (topologies/topology.h: fat-tree,
 * leaf-spine, rail-optimized, dragonfly, dragonfly-plus, torus); each kind
 * checks its numbers, shows the arithmetic on refusal and counts its parts
 * in closed form (docs/fabric.md lists the rules). planes > 1: that many
 * copies of the switch fabric, each host with one port into each (each port
 * at the link rate).
 */
#ifndef DCSIM_MODELS_FABRIC_H
#define DCSIM_MODELS_FABRIC_H

#include <stddef.h>

#include "error.h"
#include "graph.h"
#include "hardware.h"
#include "netcoll.h"
#include "routing.h"
#include "topology.h"

typedef struct fabric_config {
    const topo_kind *topology; /* from the registry: fabric_topology_parse */
    unsigned gpus;            /* GPUs, one fabric port each */
    unsigned gpus_per_node;   /* scale-up domain size; <= 1: none */
    hw_link link;             /* the fabric's technology */
    hw_link scaleup;          /* the scale-up technology (used when gpus_per_node > 1) */
    double scaleup_bytes_per_s; /* per GPU and direction, before efficiency */
    topo_shape shape;         /* the topology's numbers (radix, k, dims, planes, ...) */
    topo_route_config routing;
    unsigned channels, chunks; /* collective channels (0: auto) and pipeline chunks */
    /* Multi-fidelity tables (<fabric><fidelity>, docs/fabric.md): capacity
     * fraction of a link into a host (incast) and of a link between switches
     * (sharing) against the flows on it; n_points 0: none. link.incast_efficiency
     * is the one-point incast curve when no table gives one. */
    flow_curve incast_curve, sharing_curve;
    /* The table's <in-network> row: SHARP's capacity fraction (0: none) and
     * added latency, measured with sharp_ranks ranks (nc_fabric's). */
    double sharp_efficiency, sharp_latency_s;
    unsigned sharp_ranks;
} fabric_config;

typedef struct fabric {
    topo_graph g;
    topo_router *router;
    topo_route_config routing;   /* the router's configuration (fabric_fault.h rebuilds it) */
    nc_fabric nc;
    unsigned gpus;
    double link_bytes_per_s;     /* effective fabric link capacity */
    char link_name[64];          /* its technology's catalog name (fabric_fault.h: the
                                    switches' port form) */
    double scaleup_link_bytes_per_s; /* effective, per GPU and direction; 0 = none */
    double *scratch;             /* n_links zeros lent to the analytic path (nc.scratch) */
    flow_curve incast_curve;     /* switch-to-host links (n_points 0: none) */
    flow_curve sharing_curve;    /* switch-to-switch links (n_points 0: none) */
    const flow_curve **link_curve; /* per link: one of the two, or NULL; NULL when neither */
    uint8_t *link_injects;       /* per link with link_curve: 1 out of a host or NIC */
    double inter_wire_latency_s; /* 2 x nic-latency + switch hops of the longest
                                    cross-domain path x switch-latency: a floor under
                                    nc.inter_step_latency_s */
    double intra_wire_latency_s; /* 2 x nic-latency + one crossbar hop of the scale-up
                                    technology (0 without a domain): floor of the intra step */
} fabric;

/* The registry's name of a kind ("fat-tree", "leaf-spine", ...); "?" for NULL. */
const char *fabric_topology_name(const topo_kind *t);
/* The kind named name: 0, or -1 when the registry has none. */
int fabric_topology_parse(const char *name, const topo_kind **out);

/* The parts the fabric would have, without building it: hosts, switches and
 * cables per tier over all planes, scale-up domains and cables, switch
 * groups. Refuses exactly what fabric_build refuses for its numbers, with
 * the same message (sizes that do not fit or divide, with the arithmetic;
 * routing the topology cannot do): returns 0 and fills *out, or
 * SIM_ERR_INPUT with err filled (no file or line: the caller adds them). */
int fabric_count(const fabric_config *c, topo_counts *out, sim_error *err);

/* Build the fabric. Returns 0, or fills err and returns its code:
 * SIM_ERR_INPUT for what fabric_count refuses, SIM_ERR_NOMEM when memory
 * runs out. */
int fabric_build(const fabric_config *c, fabric *out, sim_error *err);
void fabric_free(fabric *f); /* NULL-safe */

#endif
