/* dragonfly.h - the Dragonfly of Kim, Dally, Scott and Abts (ISCA 2008) and
 * the Dragonfly+ of Shpiner et al. (shared/reference/hardware.md 6.3).
 *
 * Dragonfly: p hosts per router, a routers per group joined all-to-all by
 * local links, h global links per router; g <= a h + 1 groups. Router radix
 * k = p + (a - 1) + h; hosts N = a p g; with g = a h + 1, g(g-1)/2 global
 * links. Balanced ("canonic"): a = 2p = 2h, N = 4h^4 + 2h^2, k = 4h - 1.
 * A minimal host-to-host path has at most 5 links (host, local, global,
 * local, host). Host ids come first, then routers group by group; routers are
 * tier 1 and node_group = group.
 *
 * Dragonfly+ (Shpiner, Haramaty, Eliad, Zdornov, Gafni, Zahavi, "Dragonfly+:
 * Low cost topology for scaling datacenters", HiPINeRA 2017; hardware.md 6.3):
 * each group is a 2-level leaf/spine, complete bipartite: L leaves with p
 * hosts each and one cable to each of S spines; every spine has h global
 * links; g <= S h + 1 groups, one global link between each pair. Leaf radix
 * p + S, spine radix L + h; hosts = L p g; global links = g(g-1)/2 at
 * g = S h + 1. Paths: 2 links under a leaf, 4 inside a group, 5 between
 * groups (host, leaf-spine, global, spine-leaf, host). Host ids first, then
 * per group its L leaves (tier 1) and S spines (tier 2); node_group = group.
 *
 * Global-link arrangements (Hastings, Rincon-Cruz, Spehlmann, Meyers, Xu,
 * Bunde, Leung, "Comparing global link arrangements for Dragonfly networks",
 * IEEE Cluster 2015, who compare these three). A group's global ports are
 * numbered c = 0 .. (routers with global links) x h - 1; port c sits on that
 * router c / h. With g groups, ports c < g - 1 are used and the rest stay
 * unconnected (g < a h + 1). Each pair of groups is joined exactly once:
 *  - absolute: port c of group i leads to group c if c < i, else c + 1
 *    (the ports list the other groups in absolute order);
 *  - relative: port c of group i leads to group (i + c + 1) mod g (the
 *    ports list the other groups by offset); this is the arrangement that
 *    dcsim's first Dragonfly builder used under the name "absolute";
 *  - circulant: ports come in pairs, port 2m leads to offset +(m + 1) and
 *    port 2m + 1 to offset -(m + 1) mod g (the circulant-graph arrangement
 *    that Hastings et al. take from Camarero, Vallejo, Beivide, ACM TOPC
 *    2014); with g even, offset g/2 uses a single port at each end.
 */
#ifndef DCSIM_TOPO_DRAGONFLY_H
#define DCSIM_TOPO_DRAGONFLY_H

#include <stddef.h>

#include "graph.h"

enum topo_dragonfly_arrangement {
    TOPO_DF_ABSOLUTE = 0,
    TOPO_DF_RELATIVE = 1,
    TOPO_DF_CIRCULANT = 2,
};

/* The arrangements by enum value, for scenarios: "absolute", "relative",
 * "circulant"; then {NULL, NULL}. */
extern const topo_choice topo_dragonfly_arrangements[];
int topo_dragonfly_arrangement_parse(const char *name,
                                     enum topo_dragonfly_arrangement *out); /* 0 or -1 */

typedef struct topo_dragonfly_config {
    unsigned p;       /* hosts per router */
    unsigned a;       /* routers per group */
    unsigned h;       /* global links per router */
    unsigned groups;  /* g, 2 .. a h + 1; 0 = a h + 1 */
    double host_bytes_per_s, local_bytes_per_s, global_bytes_per_s;
    enum topo_dragonfly_arrangement arrangement; /* 0 = absolute */
} topo_dragonfly_config;

/* Build the Dragonfly. Returns 0, or -1 with a one-line reason (a zero
 * parameter, too many groups for a h global ports, unknown arrangement,
 * more than 2^31 nodes, no memory). */
int topo_dragonfly(const topo_dragonfly_config *c, topo_graph *out, char *why, size_t why_size);

typedef struct topo_dragonfly_plus_config {
    unsigned p;       /* hosts per leaf */
    unsigned leaves;  /* L, leaves per group */
    unsigned spines;  /* S, spines per group */
    unsigned h;       /* global links per spine */
    unsigned groups;  /* g, 2 .. S h + 1; 0 = S h + 1 */
    unsigned radix;   /* switch ports; 0 = no limit, else p + S and L + h must fit */
    double host_bytes_per_s, local_bytes_per_s, global_bytes_per_s;
    enum topo_dragonfly_arrangement arrangement; /* over the group's S h spine ports */
} topo_dragonfly_plus_config;

/* Build the Dragonfly+. Returns 0, or -1 with a one-line reason (a zero
 * parameter, more groups than S x h + 1, a leaf or spine over the radix,
 * unknown arrangement, more than 2^31 nodes, no memory). */
int topo_dragonfly_plus(const topo_dragonfly_plus_config *c, topo_graph *out, char *why,
                        size_t why_size);

#endif
