/* graph.h - the network graph: hosts (GPU NIC ports) and switches as dense
 * node ids, directed links as dense link ids, and a CSR adjacency.
 *
 * A cable is two directed links, one each way, added together by
 * topo_graph_add_cable (ids 2c and 2c+1). Bulk data lives in arrays indexed
 * by id (STYLE.md), cheap to free and directly writable to HDF5.
 * Invariant after topo_graph_finish: for every node v, its outgoing links are
 * out_links[out_offset[v] .. out_offset[v+1]) and each has link_src == v.
 */
#ifndef DCSIM_TOPO_GRAPH_H
#define DCSIM_TOPO_GRAPH_H

#include <stddef.h>
#include <stdint.h>

/* TOPO_SCALEUP: the non-blocking crossbar of one scale-up domain (NVSwitch
 * of a node, or of an NVL72 rack); only hosts of the domain attach to it, so
 * it never carries traffic between domains. */
/* TOPO_NIC: a network card that several GPUs (hosts) of one server share
 * (topologies/nic.h): each of its GPUs has a cable to it, and it has the
 * fabric uplink(s); tier 0, not a fabric switch. */
enum topo_node_kind { TOPO_HOST = 0, TOPO_SWITCH = 1, TOPO_SCALEUP = 2, TOPO_NIC = 3 };

#define TOPO_NO_GROUP UINT32_MAX

/* One entry of a table of named choices (routing balance and path classes,
 * Dragonfly global-link arrangements): the word a scenario uses and one line
 * of doc. Tables are indexed by their enum and end with {NULL, NULL}. */
typedef struct topo_choice {
    const char *name;
    const char *doc;
} topo_choice;

/* The index of name in table, or -1. */
int topo_choice_find(const topo_choice *table, const char *name);

typedef struct topo_graph {
    uint32_t n_nodes, n_hosts, n_switches; /* n_switches: fabric switches only */
    uint32_t n_scaleup;                   /* scale-up crossbars */
    uint32_t n_nics;                      /* shared NICs (TOPO_NIC); 0 = one port per GPU */
    uint8_t *node_kind;        /* enum topo_node_kind */
    uint8_t *node_tier;        /* 0 host, 1 first switch tier (edge/leaf), 2, 3 ...;
                                  scale-up crossbars are tier 0 */
    uint8_t *node_plane;       /* fabric plane of a switch (multi-plane fabrics), else 0 */
    uint32_t *node_group;      /* pod / scalable unit / Dragonfly group of a switch,
                                  scale-up domain of a host; TOPO_NO_GROUP if none */
    int updown;                /* every shortest host-to-host path goes up the tiers and
                                  then down (folded Clos): routing may use up-only
                                  distance tables (topologies/routing.h) */
    uint32_t n_links;
    uint32_t *link_src, *link_dst;
    double *link_bytes_per_s;  /* capacity of the directed link */
    uint32_t *out_offset;      /* n_nodes + 1 entries, after finish */
    uint32_t *out_links;       /* n_links entries, after finish; a degraded copy
                                  (topo_graph_degrade) leaves its down links out */
    uint8_t *link_is_down;     /* NULL: every link up (every built fabric); a degraded
                                  copy with a link down: 1 per down link, which no
                                  adjacency lists and no route takes */
    size_t cap_nodes, cap_links;
    int failed;                /* an allocation failed: finish reports it */
} topo_graph;

void topo_graph_init(topo_graph *g);
void topo_graph_fini(topo_graph *g);  /* NULL-safe */

/* Returns the new node's id (ids are dense, in the order added). */
uint32_t topo_graph_add_node(topo_graph *g, enum topo_node_kind kind, unsigned tier);
/* Add count nodes of one kind and tier; returns the first one's id (they are
 * consecutive), or UINT32_MAX once an allocation has failed. */
uint32_t topo_graph_add_nodes(topo_graph *g, uint32_t count, enum topo_node_kind kind,
                              unsigned tier);
/* A cable between a and b: directed links a->b then b->a. */
void topo_graph_add_cable(topo_graph *g, uint32_t a, uint32_t b, double bytes_per_s);

/* Build the adjacency. Returns 0, or -1 when an allocation failed. */
int topo_graph_finish(topo_graph *g);

/* A copy of the finished graph src with the same node and link ids, for a
 * failure state (models/fabric_fault.h): link l's capacity times
 * link_speed[l] when 0 < speed < 1 (a link that retrained slower), out of
 * the adjacency when speed is 0 (down; its capacity kept, link_is_down[l]
 * set; link_is_down stays NULL when no link is down). Speeds of 1 copy the
 * link as it is. Returns 0, or -1 when out of memory (out then empty). */
int topo_graph_degrade(const topo_graph *src, const double *link_speed, topo_graph *out);

/* Hop counts (links) from node src to every node by breadth-first search
 * into dist[n_nodes] (UINT32_MAX = unreachable). Switches forward; hosts are
 * endpoints only (a path never passes through a host). Returns 0 or -1 on
 * allocation failure. */
int topo_graph_hops_from(const topo_graph *g, uint32_t src, uint32_t *dist);

#endif
