/* netcoll_routes.h - a coupled phase's merged route, kept by (plan, phase)
 * for an executor whose routes do not depend on the load: the concurrent
 * iteration starts each PP send and DP bucket plan once per micro-batch or
 * bucket, and on a static router (ECMP, deterministic) every start routes
 * its connections to the same links. The executor (netcoll_exec.c) routes
 * a phase once, merges it (weights summed in route order) and starts later
 * runs from the kept copy: the same usages in the same order, so the same
 * flows, rates and digests.
 */
#ifndef DCSIM_MODELS_NETCOLL_ROUTES_H
#define DCSIM_MODELS_NETCOLL_ROUTES_H

#include <stddef.h>
#include <stdint.h>

#include "routing.h"

typedef struct nc_route_cache nc_route_cache;

/* Keeps at most max_usages usages in all (5 bytes each, and each route's
 * distinct weights); past that, new
 * phases are not kept (they are routed at every start, as without a cache).
 * NULL when out of memory. */
nc_route_cache *nc_route_cache_create(size_t max_usages);
void nc_route_cache_free(nc_route_cache *c); /* NULL-safe */

/* Phase `phase` of the plan at `plan`: its merged usages written to out
 * (room for the fabric's links), the phase's summed connection weight to
 * *weight; returns their count, 0 when not kept. */
size_t nc_route_cache_find(const nc_route_cache *c, const void *plan, uint32_t phase,
                           topo_usage *out, double *weight);

/* Keep a copy of u[0..n) (n > 0) for (plan, phase); 0, or -1 when full or
 * out of memory (nothing kept: the caller routes again next time). */
int nc_route_cache_put(nc_route_cache *c, const void *plan, uint32_t phase, const topo_usage *u,
                       size_t n, double weight);

size_t nc_route_cache_bytes(const nc_route_cache *c); /* allocated; 0 for NULL */

#endif
