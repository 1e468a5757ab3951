/* netcoll_internal.h - what the netcoll files share: the plan's building
 * blocks (phases, connections), the ranks' scale-up domains, routing one
 * connection, and the algorithm registry's entries. Not for callers outside
 * models/netcoll*.c: they use netcoll.h.
 *
 * An algorithm is one file defining a const nc_algorithm_type (netcoll.h)
 * plus one line in NC_ALGORITHM_REGISTRY (netcoll.c). Its check refuses, with
 * a SIM_ERR_INPUT message, the ranks it cannot arrange; its build then only
 * appends phases and connections and fails only when out of memory.
 */
#ifndef DCSIM_MODELS_NETCOLL_INTERNAL_H
#define DCSIM_MODELS_NETCOLL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "netcoll.h"

/* ---- the plan (netcoll_plan.c) ---- */

/* A new phase depending on deps[0..nd) (UINT32_MAX entries are skipped);
 * returns its index, or UINT32_MAX and sets plan->failed when out of memory.
 * Connections are added next with nc_add_conn. */
uint32_t nc_add_phase(nc_plan *p, double bytes, double latency_s, double rate_cap, int coupled,
                      const uint32_t *deps, uint32_t nd);

/* Append a connection to the last phase (plan->failed when out of memory). */
void nc_add_conn(nc_plan *p, uint32_t src, uint32_t dst, double weight);

/* Make the last phase's connections the all-to-all rule of nc_phase: rank
 * `sender` of r[0..n) to every other (n - 1 connections; plan->failed when
 * out of memory). rank_first: from an earlier call for the same ranks, or
 * NC_LISTED to copy r into the plan; returns the offset used. */
uint32_t nc_set_alltoall_conns(nc_plan *p, uint32_t rank_first, const uint32_t *r, uint32_t n,
                               uint32_t sender);

/* Connection k of phase ph, listed or by rule. */
static inline nc_conn nc_phase_conn(const nc_plan *p, const nc_phase *ph, uint32_t k)
{
    if (ph->rank_first == NC_LISTED)
        return p->conn[ph->conn_first + k];
    uint32_t n = ph->n_conn + 1, d = ph->sender + 1 + k;
    const uint32_t *r = p->rank + ph->rank_first;
    return (nc_conn){r[ph->sender], r[d >= n ? d - n : d], 1.0};
}

/* The result of a plan that took t seconds: algbw and busbw (netcoll.c). */
void nc_fill_result(const nc_plan *p, double t, nc_result *out);

/* ---- scale-up domains of the ranks (netcoll_plan.c) ---- */

/* The host's scale-up domain; a host without one is a domain of its own. */
uint32_t nc_domain_of(const topo_graph *g, uint32_t host);

/* Ranks in consecutive blocks of k >= 2 that share a scale-up domain, each
 * block in another domain than the one before (whole nodes, or the k GPUs a
 * data-parallel group has in every node): returns the number of blocks
 * (>= 2) and sets *k, else 0. */
unsigned nc_domain_blocks(const nc_fabric *f, const uint32_t *r, unsigned n, unsigned *k);

/* Ranks fill whole scale-up domains of f->domain_size GPUs, consecutively:
 * returns the number of domains (1 for one whole domain), else 0. */
unsigned nc_whole_domains(const nc_fabric *f, const uint32_t *r, unsigned n);

/* Distinct scale-up domains among the ranks; sorts a copy: O(n log n).
 * 0 when out of memory. */
unsigned nc_count_domains(const nc_fabric *f, const uint32_t *r, unsigned n);

/* The host's link into a node of the given kind (TOPO_SCALEUP, TOPO_SWITCH),
 * or UINT32_MAX. */
uint32_t nc_host_link(const topo_graph *g, uint32_t host, enum topo_node_kind kind);

/* The host's cable into the fabric's first switch: its own, or its shared
 * NIC's (TOPO_NIC, topologies/nic.h), then *nic_link is the host's link to
 * that NIC and *sharing the GPUs under it (UINT32_MAX and 1 without a shared
 * NIC). UINT32_MAX when the host has neither. */
uint32_t nc_host_fabric_link(const topo_graph *g, uint32_t host, uint32_t *nic_link,
                             unsigned *sharing);

/* ---- routing one connection (netcoll_plan.c) ---- */

typedef struct nc_route_buf {
    topo_usage *one;    /* one route, n_links entries */
    topo_usage *all;    /* a coupled phase's usages merged per link, n_links entries
                           (the flow path only) */
    size_t n_all;
} nc_route_buf;

/* The routing key of connection k of phase i: the same on every path, so
 * the flow and analytic paths route a plan alike. */
static inline uint64_t nc_route_key(uint32_t phase, uint32_t k)
{
    return ((uint64_t)phase << 32) ^ k;
}

/* Route connection c into b->one (a fixed link is its own route); returns
 * the usage count, -1 for no path or -2 when out of memory (topo_route). */
long nc_route_conn(const nc_fabric *f, const nc_conn *c, uint64_t key, const double *load,
                   nc_route_buf *b);

/* Record why routing c failed (rc from nc_route_conn) in err: no memory for
 * the hop tables (SIM_ERR_NOMEM) or no path (SIM_ERR_INPUT). */
int nc_route_failure(sim_error *err, long rc, const nc_conn *c);

#endif
