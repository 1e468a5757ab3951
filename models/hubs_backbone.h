/* hubs_backbone.h - a shared backbone between the hubs and the demand
 * centres (docs/hubs.md "A shared backbone"): named nodes (the hubs, the
 * demand centres, transit points) joined by full-duplex links of a
 * bandwidth each way and an RTT. Every transfer is a flow on the
 * shortest-RTT path between its origin and its hub (a dataset origin -> hub,
 * a result back on the same links the other way); flows that overlap share
 * each link's capacity max-min fairly, by exact progressive filling
 * recomputed at every flow's arrival and completion (hubs_flows_run). A flow
 * is done when its last bit has left (bits at the rates it got) plus the
 * path's RTT, as a lone transfer is bytes / bandwidth + RTT.
 */
#ifndef DCSIM_MODELS_HUBS_BACKBONE_H
#define DCSIM_MODELS_HUBS_BACKBONE_H

#include <stdint.h>

#include "error.h"

#define HUBS_BB_MAX_NODES 64u
#define HUBS_BB_MAX_LINKS 128u
#define HUBS_BB_NAME 32u

typedef struct hubs_link {
    unsigned a, b;             /* node indices */
    double bandwidth_bps;      /* each way (> 0) */
    double rtt_s;              /* >= 0 */
    double cost_per_tb;        /* CNY per TB that crosses it, either way, on top of the
                                  scenario's per TB moved (>= 0; 0: none) */
} hubs_link;

/* a path: directed links, 2 l (a -> b) or 2 l + 1 (b -> a) */
typedef struct hubs_path {
    unsigned n;
    uint16_t hop[HUBS_BB_MAX_NODES];
    double rtt_s;              /* the sum of its links' */
    double bottleneck_bps;     /* its least bandwidth: a lone transfer's rate */
    double cost_per_tb;        /* the sum of its links' */
} hubs_path;

typedef struct hubs_backbone {
    unsigned n_nodes, n_links;
    char node[HUBS_BB_MAX_NODES][HUBS_BB_NAME];
    hubs_link link[HUBS_BB_MAX_LINKS];
} hubs_backbone;

/* the backbone with every (origin, hub) route: what hubs_config points to */
typedef struct hubs_routes {
    hubs_backbone bb;
    hubs_path path[8][32];     /* [origin][hub]: origin -> hub (HUBS_MAX_ORIGINS, HUBS_MAX) */
    int has[8][32];            /* 1 where a route exists */
} hubs_routes;

/* the node of that name, or UINT32_MAX */
unsigned hubs_bb_node(const hubs_backbone *b, const char *name);

/* the shortest-RTT path from node from to node to (Dijkstra; ties: the
 * lower node index first reached); 0, or -1 when none joins them */
int hubs_bb_route(const hubs_backbone *b, unsigned from, unsigned to, hubs_path *p);

/* one flow: from start_s, bits over its path (directed links) */
typedef struct hubs_flow {
    double start_s, bits;
    const hubs_path *path;
    int reverse;               /* 1: the path walked backwards (its links the other way) */
    double done_s;             /* out: the last bit's time (without the RTT) */
    int slowed;                /* out: 1 when it ever ran below its path's least bandwidth
                                  (shared a link); 0: it took exactly bits / that */
} hubs_flow;

/* what the flows did on each directed link 2 l + d (d 0: a -> b, 1: b -> a) */
typedef struct hubs_link_use {
    double bits[2 * HUBS_BB_MAX_LINKS];     /* += the bits that crossed it (each flow's
                                               whole bits at its completion) */
    double busy_s[2 * HUBS_BB_MAX_LINKS];   /* += the time at least one flow was on it */
    double peak_bps[2 * HUBS_BB_MAX_LINKS]; /* the most the flows on it got together
                                               over an interval of positive length */
} hubs_link_use;

/* Run the flows (any order of start_s) on the backbone's links, max-min
 * fair among those active; each flow's done_s; use (may be NULL) gets what
 * each directed link carried. A flow's rate changes only at an arrival or
 * a completion that changes its share: its remaining bits are taken at
 * those changes alone, so flows that never meet are timed exactly as if
 * each ran without the others. Flows of zero bits are done at their start.
 * 0, or SIM_ERR_NOMEM. */
int hubs_flows_use(const hubs_backbone *b, hubs_flow *f, uint32_t n, hubs_link_use *use,
                   sim_error *err);

/* hubs_flows_use with link_bits[2 l + d] (may be NULL) += use->bits */
int hubs_flows_run(const hubs_backbone *b, hubs_flow *f, uint32_t n, double *link_bits,
                   sim_error *err);

#endif
