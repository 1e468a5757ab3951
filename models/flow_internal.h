/* flow_internal.h - the flow net's record, shared by flow.c (flows, events,
 * the component refill) and flow_fill.c (progressive filling and the local
 * repair). Not part of the model's interface: use flow.h.
 */
#ifndef DCSIM_MODELS_FLOW_INTERNAL_H
#define DCSIM_MODELS_FLOW_INTERNAL_H

#include "flow.h"

#define RECOMPUTE_PRIORITY 255 /* after every other event of the instant */
#define FINISHED_FRACTION 1e-12 /* bytes left below this share of the flow: finished */
#define NO_LINK UINT32_MAX
/* Nets with up to this many active flows refill the changed component
 * whole; larger ones repair locally (flow_fill.c). */
#define COMPONENT_MAX_FLOWS 64

typedef struct flow_use {
    uint32_t link;
    uint32_t pos;   /* index in the link's list */
    double weight;
} flow_use;

typedef struct link_entry {
    uint32_t flow;
    uint32_t use;   /* index in the flow's usage array */
} link_entry;

typedef struct link_list {
    link_entry *e;
    uint32_t n, cap;
} link_list;

struct flow_net {
    sim_engine *eng;
    flow_done_fn done;
    void *ctx;
    uint32_t n_links;
    double *capacity, *load, *link_bytes;
    double *incast;        /* per link, or NULL: capacity factor under incast */
    link_list *on_link;
    /* per flow */
    uint32_t n_flows, cap_flows;
    flow_use **use;
    uint32_t *n_use;
    double *bytes, *left, *rate, *since, *rate_cap, *latency;
    uint64_t *tag;
    sim_event_id *event;
    uint8_t *active;
    uint32_t *bneck;       /* the link that froze the flow in its last filling, or NO_LINK (cap) */
    uint32_t *free_ids, n_free;
    uint32_t *fresh, n_fresh; /* started since the last recomputation */
    uint32_t n_active;
    /* recomputation scratch */
    uint32_t *dirty, n_dirty, cap_dirty;
    uint32_t *link_mark, *flow_mark, epoch;
    uint32_t *comp_links, *comp_flows, *capped, *touched;
    double *cap_left, *w_unfrozen, *new_rate;
    uint32_t *n_unfrozen, *heap, *heap_pos;
    uint32_t heap_n;
    int recompute_pending;
    int no_repair;         /* flow_net_set_local_repair(net, 0) */
    int failed;
    flow_stats stats;
};

double flow_link_capacity(const flow_net *n, uint32_t l);
void flow_advance(flow_net *n, uint32_t f, double now);
void flow_finish(flow_net *n, uint32_t f, int recompute);
/* Give flow f rate r from now on (moves its completion event if needed). */
void flow_set_rate(flow_net *n, uint32_t f, double r);

/* Progressive filling over comp_flows[0..nf) on comp_links[0..nl) (every
 * link of those flows); writes new_rate and bneck. Flows must be marked
 * flow_mark == epoch (epoch + 1 once frozen). residual: a link's capacity
 * is reduced by the current rates of the flows on it that are not in the
 * filling. */
void flow_fill(flow_net *n, uint32_t nf, uint32_t nl, int residual);

/* The local repair (flow_fill.c): rates after the changes on the dirty links,
 * re-solving only the flows whose max-min condition the change can break.
 * Returns the count of links in comp_links (those of the re-solved flows). */
uint32_t flow_repair(flow_net *n, double now);

#endif
