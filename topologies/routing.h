/* routing.h - the paths a connection takes through a topo_graph.
 *
 * A route is a list of weighted link usages: weight w on link l means the
 * connection puts the fraction w of its bytes on l. A single path has weight
 * 1 on every link; packet spraying splits evenly at every hop; ECMP with q
 * queue pairs (QPs) hashes each QP on its own path and gives each 1/q.
 *
 * Two choices make a route:
 *  - the path class: minimal (shortest paths only), Valiant (minimal to a
 *    random router of a random third group, then minimal to the destination;
 *    Dragonfly family only) or UGAL (per connection, minimal unless the
 *    Valiant path's load x hops is smaller: Kim et al., ISCA 2008; the
 *    global variant, which sees every link's load, hardware.md 6.3);
 *  - the balancing among equal-cost next hops: ECMP (hash of the connection
 *    key, QP and switch), adaptive (the next hop whose link has the least
 *    load per byte of capacity, at the moment the connection starts: the
 *    switch-local least-loaded choice of InfiniBand adaptive routing,
 *    hardware.md 3.6; ties broken by the hash), or spray (even split).
 *
 * Traffic between two hosts of one scale-up domain (TOPO_SCALEUP crossbar)
 * stays in it: host -> crossbar -> host. All other traffic uses the fabric
 * and never enters a crossbar. A host under a shared NIC (TOPO_NIC, nic.h)
 * reaches the fabric through it: host -> NIC -> the NIC's uplink ... -> the
 * destination's NIC -> destination, so the GPUs of one NIC share its fabric
 * link (two GPUs of one NIC and no crossbar: host -> NIC -> host). A host
 * (or shared NIC) with several fabric uplinks (one per
 * plane) picks its plane by the balancing rule and stays in it.
 *
 * Shortest paths come from hop tables keyed by the destination's attachment
 * switch, built on first use and cached. In a folded Clos (g->updown) a
 * table is built by climbing from the destination switch over up links only
 * (a few hundred links, not the whole fabric); the route then climbs from
 * the source until it meets a switch in the table and descends along it.
 *
 * A degraded graph (graph.h link_is_down, models/fabric_fault.h) has its
 * down links out of the adjacency, so no route takes them: a folded Clos
 * then builds full tables (a search over every remaining switch link, each
 * switch's true distance) and steps only one hop nearer each time, so ECMP,
 * adaptive and spray choose among the remaining shortest paths; a host picks
 * among the planes where the destination still has a port; a Dragonfly
 * family leaves down global links out of its group pairs. A graph without
 * link_is_down routes exactly as before.
 */
#ifndef DCSIM_TOPO_ROUTING_H
#define DCSIM_TOPO_ROUTING_H

#include <stddef.h>
#include <stdint.h>

#include "graph.h"

enum topo_balance { TOPO_BALANCE_ECMP = 0, TOPO_BALANCE_ADAPTIVE, TOPO_BALANCE_SPRAY,
                    TOPO_BALANCE_COUNT };
enum topo_path_class { TOPO_PATH_MINIMAL = 0, TOPO_PATH_VALIANT, TOPO_PATH_UGAL,
                       TOPO_PATH_COUNT };

typedef struct topo_route_config {
    enum topo_balance balance;
    enum topo_path_class path_class;
    unsigned qps;    /* ECMP entropy: hashed sub-flows per connection (>= 1) */
    uint64_t seed;   /* salts the ECMP hash and the Valiant choice */
} topo_route_config;

typedef struct topo_usage {
    uint32_t link;
    double weight;
} topo_usage;

typedef struct topo_router topo_router;

/* The registries, by enum value, then {NULL, NULL}: balancing "ecmp",
 * "adaptive", "spray"; path classes "minimal", "valiant", "ugal" (each with
 * one line of doc). Scenarios name them by these words. */
extern const topo_choice topo_balances[];
extern const topo_choice topo_path_classes[];

/* the name of an enum value; "?" if out of range */
const char *topo_balance_name(int b);
const char *topo_path_class_name(int c);
int topo_balance_parse(const char *name, enum topo_balance *out);       /* 0 or -1 */
int topo_path_class_parse(const char *name, enum topo_path_class *out); /* 0 or -1 */

/* The rules a configuration must meet on a topology (graph.h updown; groups:
 * 1 + the highest node_group of a fabric switch, 0 if none): qps at least 1;
 * Valiant and UGAL need a topology that is no folded Clos and has 3 switch
 * groups or more. Returns 0, or -1 with the reason topo_router_create gives.
 * For checking a topology before it is built (topologies/topology.h);
 * why must be a buffer of why_size bytes (or NULL with why_size 0). */
int topo_router_check(const topo_route_config *cfg, int updown, uint32_t groups, char *why,
                      size_t why_size);

/* The graph must be finished and outlive the router. Returns NULL with a
 * reason (topo_router_check's, no memory). */
topo_router *topo_router_create(const topo_graph *g, const topo_route_config *cfg, char *why,
                                size_t why_size);
void topo_router_destroy(topo_router *r); /* NULL-safe */

/* Route the connection src -> dst (hosts, src != dst). key identifies the
 * connection for hashing. link_load[l] is the load already on link l (any
 * unit, compared per byte/s of capacity) for adaptive and UGAL; NULL means
 * an idle network. Writes at most cap usages to out, each link once, and
 * returns their number; returns 0 when src == dst, -1 when a host is not
 * connected or cap is too small (topo_route_max_usages bounds it), and -2
 * when there is no memory for the hop tables (one per destination switch,
 * 1 byte per fabric switch each). */
long topo_route(topo_router *r, uint32_t src, uint32_t dst, uint64_t key, const double *link_load,
                topo_usage *out, size_t cap);

/* The equal-cost next links from node `at` towards host dst: the
 * candidates topo_route's walk considers there (minimal paths). At a source
 * host its fabric uplinks (one per plane), its shared NIC link or its
 * scale-up link when dst is in its domain; at a shared NIC its uplinks, or
 * the link to dst when dst is under it; at a fabric switch the links one hop
 * nearer dst's attachment switch, or at that switch the last hop into dst
 * (or its NIC); at dst's crossbar the link into dst. Writes at most cap of
 * them to out and returns how many there are (0: none, at == dst, a switch
 * in another Dragonfly group than dst's, whose route picks a global link
 * first, or no memory for a hop table). The per-packet adaptive routing of
 * the packet tier walks by it. */
uint32_t topo_next_hops(topo_router *r, uint32_t at, uint32_t dst, uint32_t *out, uint32_t cap);

/* An upper bound on the usages one route can return. */
size_t topo_route_max_usages(const topo_router *r);

/* 1 when a route depends on the links' load (adaptive balancing, UGAL):
 * then routes are decided as connections start, not known beforehand. */
int topo_router_uses_load(const topo_router *r);

/* Hop tables built so far, one per destination switch, and how many of
 * them are kept: destinations whose tables are alike but for their own
 * entry share one (a folded Clos pod's leaves, a Dragonfly group's routers).
 * For tests and benchmarks. */
size_t topo_router_tables(const topo_router *r);
size_t topo_router_tables_kept(const topo_router *r);
size_t topo_router_table_bytes(const topo_router *r); /* the kept ones' */

/* The most a router keeps besides its hop tables on a fabric of n_switches
 * switches: its next-hop answers per switch pair (2 B a pair, only up to
 * 2,048 switches, and the distinct lists' places); for memory estimates. */
double topo_router_kept_bytes_bound(double n_switches);

#endif
