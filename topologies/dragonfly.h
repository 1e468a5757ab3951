/* dragonfly.h - the Dragonfly of Kim, Dally, Scott and Abts (ISCA 2008;
 * shared/reference/hardware.md 6.3).
 *
 * p hosts per router, a routers per group joined all-to-all by local links,
 * h global links per router; g <= a h + 1 groups. Router radix
 * k = p + (a - 1) + h; hosts N = a p g; with g = a h + 1, g(g-1)/2 global
 * links. Balanced ("canonic"): a = 2p = 2h, N = 4h^4 + 2h^2, k = 4h - 1.
 *
 * Global links, "absolute" arrangement: group i's global channel c (router
 * c / h, 0 <= c < a h) leads to group (i + c + 1) mod g; channels with
 * c >= g - 1 stay unconnected when g < a h + 1. Every pair of groups has
 * exactly one global link. A minimal host-to-host path has at most 5 links
 * (host, local, global, local, host).
 * Host ids come first, then routers group by group.
 */
#ifndef DCSIM_TOPO_DRAGONFLY_H
#define DCSIM_TOPO_DRAGONFLY_H

#include <stddef.h>

#include "graph.h"

typedef struct topo_dragonfly_config {
    unsigned p;       /* hosts per router */
    unsigned a;       /* routers per group */
    unsigned h;       /* global links per router */
    unsigned groups;  /* g, 2 .. a h + 1; 0 = a h + 1 */
    double host_bytes_per_s, local_bytes_per_s, global_bytes_per_s;
} topo_dragonfly_config;

/* Build the Dragonfly. Returns 0, or -1 with a one-line reason (a zero
 * parameter, too many groups for a h global ports, more than 2^31 nodes, no
 * memory). */
int topo_dragonfly(const topo_dragonfly_config *c, topo_graph *out, char *why, size_t why_size);

#endif
