/* flow_internal.h - the flow net's record, shared by flow.c (flows, events,
 * the component refill), flow_fill.c (progressive filling and the local
 * repair) and flow_store.c (the usage pool, the flow classes, the link
 * lists). Not part of the model's interface: use flow.h.
 *
 * Layout (docs/fabric.md, "Flow records"): per flow, struct-of-arrays of
 * 4 doubles (bytes, left, rate, since), 2 uint64 (tag, event) and 5 uint32
 * (use_off, cls, bneck, flow_mark, comp_flows): 68 bytes. What most flows
 * share - latency, rate cap, usage count and a single weight - is one
 * interned flow_class record. A flow's links are a block of the usage pool
 * (uint32 link slots, see "Slots" below; a flow with unequal weights adds
 * a code per usage, 1 byte up to 256 distinct weights (2 or 4 beyond), and
 * its distinct weights once each, 8 bytes:
 * a coupled all-to-all flow has ~10,000 usages and a few dozen weights).
 * A link's list holds flow ids (4 bytes); once a flow with unequal weights
 * has been on the link, also each entry's weight code in its flow's block
 * (1 byte, or 2 once a flow with over 255 weights has been there), so that a scan of the link reads its flows' weights in O(1)
 * from the flow's table of distinct weights (each weight held once: about
 * 10 bytes per weighted usage, pool and list together; a 4,096-rank
 * all-to-all has 42.5 M of them). A list grows by a quarter at a start, or,
 * in a burst of starts, once to its final length at the burst's end.
 * A 6-hop single-path flow: 68 + 6 x 4 + 6 x 4 = 116 bytes plus growth slack.
 * A flow's new rate after a filling is not stored: it is the fill level of
 * its bottleneck link (slot[bneck].level) or its cap (bneck == NO_LINK).
 */
#ifndef DCSIM_MODELS_FLOW_INTERNAL_H
#define DCSIM_MODELS_FLOW_INTERNAL_H

#include <math.h>
#include <string.h>

#include "flow.h"

#define RECOMPUTE_PRIORITY 255 /* after every other event of the instant */
#define FINISHED_FRACTION 1e-12 /* bytes left below this share of the flow: finished */
#define NO_LINK UINT32_MAX
#define NO_FLOW UINT32_MAX
#define NO_CLASS UINT32_MAX /* cls of a flow not active */
/* Nets with up to this many active flows refill the changed component
 * whole; larger ones repair locally (flow_fill.c). */
#define COMPONENT_MAX_FLOWS 64

/* A cap in a repair's filling: a flow's rate cap, or the fair share of a
 * link no other flow of the filling uses (fixed while it fills). */
struct flow_cap {
    double value;
    uint32_t flow, link, pos; /* link NO_LINK: the rate cap; pos: the flow's place in D */
};

/* What flows share: interned by (latency, cap, weight, n_use, n_weights),
 * counted. */
typedef struct flow_class {
    double latency_s, rate_cap, weight; /* weight: NAN when per usage (in the pool) */
    uint32_t n_use, refs;
    uint32_t n_weights;    /* per usage: the block's distinct weights (0 when uniform) */
} flow_class;

/* A link's flows: ids (a flow at most once) in the list itself while they
 * fit LIST_INLINE, else in an array of their own (most links of a large
 * collective carry one or two flows: 32 bytes of allocation saved on each;
 * flow_list_ids reads either). */
#define LIST_INLINE 2
typedef struct link_list {
    union {
        uint32_t *heap;              /* cap > LIST_INLINE */
        uint32_t inl[LIST_INLINE];   /* cap <= LIST_INLINE */
    } ids;
    void *code;            /* NULL, or code[i]: entry i's weight code on the link in its
                            * flow's block (every entry; 0 for a uniform flow), from the
                            * first flow with unequal weights on it on: its weight is one
                            * load away. uint8 each (FLOW_LIST_FAR8 the escape), or uint16
                            * (FLOW_LIST_FAR) once a flow with more than 255 and fewer than
                            * FLOW_LIST_FAR distinct weights has been on the link: then the
                            * pointer's low bit is set (the record has no room for a flag).
                            * The escape for a flow with FLOW_LIST_FAR distinct weights or
                            * more: found in its block (flow_far_weight) */
    uint32_t n, cap;
} link_list;
#define FLOW_LIST_FAR 0xffffu
#define FLOW_LIST_FAR8 0xffu

/* A slot's state that the filling and the repair read on every visit, in
 * one 64-byte record (one cache line: the slots are allocated 64-aligned),
 * instead of seven arrays whose entries a visit would each miss. */
typedef struct flow_slot {
    link_list list;        /* the flows on it */
    double cap;            /* its link's capacity (link_capacity[link_of]) */
    double cap_left;       /* a filling's: capacity left */
    union {                /* one field, two uses that never overlap: */
        double w_unfrozen; /* while the link is in a filling's heap: its unfrozen weight */
        double level;      /* once it froze (or stood as a flow's cap) in the last filling
                            * it was in: the share it froze at, which flow_new_rate reads
                            * for the flows of that filling; the link has left the heap,
                            * so nothing writes the weight again before the next filling
                            * of its flows (which sets both anew) */
    };
    union {                /* one field, two uses that never overlap: */
        uint32_t n_unfrozen; /* inside a filling: its unfrozen flows on the link */
        uint32_t waiting;    /* outside one: the list's last entries whose flow ids wait
                              * for flow_store_place (counted in list.n, room reserved;
                              * every filling starts after a place, when it is 0, and
                              * leaves it 0); the top bit marks a link of the flow being
                              * attached (flow_store_attach) */
    };
    uint32_t heap_pos;     /* a filling's: place in the heap */
    uint32_t mark;         /* epoch stamp of the recomputations' link sets */
    uint32_t n_bneck;      /* the active flows whose bneck it is (the local repair
                            * checks a link only when some flow's bottleneck is
                            * there: elsewhere nothing can fail) */
} flow_slot;
#define FLOW_SLOT_ALIGN 64
_Static_assert(sizeof(flow_slot) == FLOW_SLOT_ALIGN, "a slot record is one cache line");

static inline uint32_t *flow_list_ids(link_list *ll)
{
    return ll->cap <= LIST_INLINE ? ll->ids.inl : ll->ids.heap;
}
static inline const uint32_t *flow_list_ids_c(const link_list *ll)
{
    return ll->cap <= LIST_INLINE ? ll->ids.inl : ll->ids.heap;
}

/* Whether list ll's codes are uint16 (else uint8), and where they are. */
static inline int flow_list_is_wide(const link_list *ll)
{
    return (int)((uintptr_t)ll->code & 1);
}
static inline void *flow_list_codes(const link_list *ll)
{
    return (void *)((uintptr_t)ll->code & ~(uintptr_t)1);
}
/* Entry i's code on list ll (which has codes); FLOW_LIST_FAR for the escape. */
static inline uint32_t flow_list_code(const link_list *ll, uint32_t i)
{
    if (flow_list_is_wide(ll))
        return ((const uint16_t *)flow_list_codes(ll))[i];
    uint32_t c = ((const uint8_t *)ll->code)[i];
    return c == FLOW_LIST_FAR8 ? FLOW_LIST_FAR : c;
}
struct flow_net {
    sim_engine *eng;
    flow_done_fn done;
    void *ctx;
    uint32_t n_links;      /* the network's links (ids the caller uses) */
    const double *link_capacity; /* the creator's, per link (flow_net_create) */
    const flow_curve *const *incast; /* the creator's, per link, or NULL: capacity against
                              the flows on a link (flow_net_set_incast) */
    const uint8_t *injects; /* the creator's, per link, or NULL: a link a sender injects on
                              (flow_net_set_incast: the demand-weighted fan-in) */
    double *offer;         /* per flow while injects is set: the rate it offers, as of the
                              last filling it was in (flow_offer); cap_flows entries */
    double *load;          /* per link */
    uint64_t *busy;        /* bit g set: link g carries a flow (its list is not empty) */
    /* Slots: a link gets a slot the first time a flow uses it, and every
     * other per-link array below is per slot, so a net costs 20 B per link
     * of the network and the rest per link its flows touched (the DP
     * buckets of 6,272 GPUs touch 36K of the 100K fat-tree's 878K links).
     * The pool and the lists hold slots; busy keeps the network's ids, so a
     * scan lists links in the same order whatever slots they got. */
    uint32_t *slot_of;     /* per link: its slot + 1, 0 for none yet */
    uint32_t *link_of;     /* per slot: its link */
    uint32_t n_slots, cap_slots;
    double *link_bytes;    /* per slot: bytes carried */
    flow_slot *slot;       /* per slot, FLOW_SLOT_ALIGN-aligned */
    uint32_t *live;        /* per slot: its list's entries of active flows (n less the
                            * finished flows whose removal waits for flow_store_flush) */
    uint32_t place_next;   /* the first fresh flow whose entries wait, or NO_FLOW */
    /* per flow (struct of arrays, cap_flows entries) */
    uint32_t n_flows, cap_flows;
    double *bytes, *left, *rate, *since;
    uint64_t *tag;
    sim_event_id *event;
    uint32_t *use_off;     /* block in the pool; next free id while the id is free */
    uint32_t *cls;         /* flow_class index, NO_CLASS when not active */
    uint32_t *bneck;       /* the link that froze the flow in its last filling, or NO_LINK
                            * (cap); before its first recomputation: the next fresh flow */
    uint32_t *flow_mark, *comp_flows;
    uint32_t free_head, n_free;          /* free ids, last freed first */
    uint32_t fresh_head, fresh_tail;     /* started since the last recomputation, on links */
    uint32_t bare_head, bare_tail;       /* ... on no link */
    uint32_t n_active;
    /* finished flows still on their links' lists (flow_store_detach_later),
     * in finishing order, with their classes; each pending[i]'s
     * removal is replayed at the next flush as if done then (see flow_store.c) */
    uint32_t *pending, *pending_cls, *pending_pos, n_pending, cap_pending;
    uint64_t *flush_pairs; /* flush scratch: (order << 32 | position) of one link */
    uint32_t cap_flush_pairs;
    /* usage pool: per flow n_use link ids; unequal weights add n_use doubles
     * (as 2 uint32 each) */
    uint32_t *pool;
    size_t pool_n, pool_cap, pool_garbage;
    /* flow classes, interned through an open-addressing table of indices */
    flow_class *classes;
    uint32_t n_classes, cap_classes, free_class;
    uint32_t *class_hash, hash_cap; /* hash_cap a power of two, >= 2 x live classes */
    uint32_t n_live_classes;
    /* attach scratch: merged weights of the flow being started */
    double *attach_w;
    uint32_t *attach_link, attach_cap;
    uint32_t *attach_code;  /* each usage's weight code */
    uint32_t *attach_hash, hash_cap_attach; /* distinct weights by bits (a power of two) */
    uint32_t *attach_slot;  /* the slots of the usages being attached */
    /* recomputation scratch */
    uint32_t *dirty, n_dirty; /* links changed since the last recomputation, each once */
    uint8_t *is_dirty;
    uint32_t epoch;        /* stamps of flow_mark and flow_slot.mark */
    uint32_t *comp_links, *touched;
    uint32_t *capped, n_capped_active, cap_capped; /* flows with a cap or no link */
    uint32_t *heap;
    double *heap_share;    /* heap_share[i]: the fair share of link heap[i], kept with it */
    struct flow_cap *caps; /* a repair's filling: its flows' caps, from rates and from links
                            * only one of them uses (flow_fill.c) */
    uint32_t cap_caps;
    uint32_t heap_n;
    int recompute_pending;
    int in_burst;          /* between flow_net_burst_begin and _end */
    int no_repair;         /* flow_net_set_local_repair(net, 0) */
    flow_stats stats;
};

/* ---- flow.c ---- */
/* Room for need slots in every per-slot array; 0 or -1 (nothing lost). */
int flow_grow_slots(flow_net *n, size_t need);

/* n_bneck less (sign -1) or plus (+1) each flow of comp_flows[0..nf) with
 * a bottleneck: around every filling, which moves them. */
static inline void flow_count_bnecks(flow_net *n, uint32_t nf, int sign)
{
    for (uint32_t i = 0; i < nf; i++) {
        uint32_t b = n->bneck[n->comp_flows[i]];
        if (b != NO_LINK)
            n->slot[b].n_bneck += (uint32_t)sign;
    }
}

/* ---- flow_store.c ---- */
/* Grow the per-flow arrays (by an eighth); 0 or -1. */
int flow_store_grow_flows(flow_net *n);
/* Put flow f on its links (merging repeated links) and give it its class.
 * Each link's list gets f's entry reserved (counted in n, room made) but
 * not written: flow_store_place writes every waiting flow's entries, in
 * start order, before anything reads or removes list entries (a burst of
 * starts writes its 10,000-link flows' entries in one pass instead of
 * reading each list's tail at every start). Nothing changes on failure;
 * 0 or -1. */
int flow_store_attach(flow_net *n, uint32_t f, const topo_usage *u, size_t k,
                      double rate_cap, double latency_s, int defer_room);
/* defer_room (inside a burst, flow_net_burst_begin): the lists' room for
 * f's entries is not made at the attach but by flow_store_room, which gives
 * every list shorter than its entries exactly their count, allocated once
 * (0 or -1: the lists grown so far keep their room). flow_store_place makes
 * it first inside a burst. */
int flow_store_room(flow_net *n);
/* Write the entries of the flows waiting since place_next (the fresh
 * list from there, in start order) into their links' lists, then those of
 * flow also (a flow on links but on no fresh list, or NO_FLOW): each list
 * ends as if every flow had been appended at its start. */
void flow_store_place(flow_net *n, uint32_t also);
/* Take flow f off its links and release its block and class. */
void flow_store_detach(flow_net *n, uint32_t f);
/* The same, but f's entries leave its links' lists only at the next
 * flow_store_flush (one pass per link for every flow finishing at an
 * instant, instead of one search per flow and link): the loads, busy bits,
 * dirty links and live counts change now, and f is no longer active.
 * Falls back to flow_store_detach when out of memory. */
void flow_store_detach_later(flow_net *n, uint32_t f);
/* The pending removals, replayed link by link in finishing order: every
 * list ends as flow_store_detach one flow after another would leave it
 * (the last entry fills each hole). Before anything that adds to or reads
 * the lists: flow_start, a recomputation, a reset, a full filling. */
void flow_store_flush(flow_net *n);
/* No flow, no class, an empty pool, keeping their memory (flow_net_reset:
 * every flow delivered, so every link list is empty). */
void flow_store_reset(flow_net *n);
size_t flow_store_memory_bytes(const flow_net *n);
void flow_store_free(flow_net *n);

/* A block with unequal weights: its n_use links, then each usage's code
 * (uint8 while the distinct weights fit, else uint16 while they fit, else
 * uint32), then the distinct weights (doubles, first-use order): code k is
 * weight k. uint32 words of the codes: */
#define FLOW_BYTE_CODES 256u
#define FLOW_SHORT_CODES 65536u
static inline size_t flow_code_words(uint32_t n_use, uint32_t n_weights)
{
    return n_weights <= FLOW_BYTE_CODES    ? ((size_t)n_use + 3) / 4
           : n_weights <= FLOW_SHORT_CODES ? ((size_t)n_use + 1) / 2
                                           : n_use;
}

static inline const flow_class *flow_cls(const flow_net *n, uint32_t f)
{
    return &n->classes[n->cls[f]];
}
static inline uint32_t flow_n_use(const flow_net *n, uint32_t f)
{
    return n->classes[n->cls[f]].n_use;
}
static inline const uint32_t *flow_links(const flow_net *n, uint32_t f)
{
    return n->pool + n->use_off[f];
}
/* The code of flow f's k-th usage (f of class c, with per-usage weights). */
static inline uint32_t flow_use_code(const flow_net *n, uint32_t f, const flow_class *c,
                                     uint32_t k)
{
    const uint32_t *codes = n->pool + n->use_off[f] + c->n_use;
    if (c->n_weights <= FLOW_BYTE_CODES)
        return ((const uint8_t *)codes)[k];
    if (c->n_weights > FLOW_SHORT_CODES)
        return codes[k];
    uint16_t h;
    memcpy(&h, (const char *)codes + 2 * (size_t)k, sizeof h);
    return h;
}
/* Weight number code of flow f (of class c, with per-usage weights). */
static inline double flow_code_weight(const flow_net *n, uint32_t f, const flow_class *c,
                                      uint32_t code)
{
    const uint32_t *table = n->pool + n->use_off[f] + c->n_use +
                            flow_code_words(c->n_use, c->n_weights);
    double w;
    memcpy(&w, table + 2 * (size_t)code, sizeof w);
    return w;
}
/* Weight of flow f's k-th usage. */
static inline double flow_use_weight(const flow_net *n, uint32_t f, uint32_t k)
{
    const flow_class *c = flow_cls(n, f);
    return isnan(c->weight) ? flow_code_weight(n, f, c, flow_use_code(n, f, c, k)) : c->weight;
}
/* The weight on link list ll's link of flow f, a flow with FLOW_LIST_FAR
 * distinct weights or more (a search of its block: flow_store.c). */
double flow_far_weight(const flow_net *n, const link_list *ll, uint32_t f);
/* Weight of the i-th flow on link list ll on that link. A list without
 * codes has carried only flows of one weight each (their class's). */
static inline double flow_entry_weight(const flow_net *n, const link_list *ll, uint32_t i)
{
    uint32_t f = flow_list_ids_c(ll)[i];
    const flow_class *c = flow_cls(n, f);
    if (!isnan(c->weight))
        return c->weight;
    uint32_t code = flow_list_code(ll, i);
    return code == FLOW_LIST_FAR ? flow_far_weight(n, ll, f) : flow_code_weight(n, f, c, code);
}
static inline int flow_is_active(const flow_net *n, uint32_t f)
{
    return n->cls[f] != NO_CLASS;
}
/* The rate flow f got in the last filling it was in. */
static inline double flow_new_rate(const flow_net *n, uint32_t f)
{
    return n->bneck[f] == NO_LINK ? flow_cls(n, f)->rate_cap : n->slot[n->bneck[f]].level;
}

/* slot l carries a flow (is_busy) or none */
static inline void flow_set_busy(flow_net *n, uint32_t l, int is_busy)
{
    uint32_t g = n->link_of[l];
    uint64_t bit = (uint64_t)1 << (g & 63);
    n->busy[g >> 6] = is_busy ? n->busy[g >> 6] | bit : n->busy[g >> 6] & ~bit;
}

/* ---- flow.c ---- */
/* Write the slots of the links that carry a flow to out, in increasing link
 * id order (a scan of the busy bitmap: L / 64 words); returns their count. */
uint32_t flow_busy_links(const flow_net *n, uint32_t *out);
/* Slot l's capacity now (with incast: scaled by its link's curve at its
 * effective fan-in while two or more flows share it). */
double flow_link_capacity_incast(const flow_net *n, uint32_t l);
static inline double flow_link_capacity(const flow_net *n, uint32_t l)
{
    return n->incast ? flow_link_capacity_incast(n, l) : n->slot[l].cap;
}
/* The rate flow f offers now (flow_net_set_incast; needs injects). */
double flow_offer(const flow_net *n, uint32_t f);
void flow_advance(flow_net *n, uint32_t f, double now);
/* f's bytes are through. recompute: called from f's completion event: a
 * recomputation follows at this instant and f leaves the link lists there
 * (flow_store_detach_later); 0: inside a recomputation, f leaves them now. */
void flow_finish(flow_net *n, uint32_t f, int recompute);
/* Give flow f rate r from now on (moves its completion event if needed). */
void flow_set_rate(flow_net *n, uint32_t f, double r);
void flow_mark_dirty(flow_net *n, uint32_t link);
/* Append to out[count..] the dirty links not yet marked link_mark == epoch,
 * each once, marking them; empties the dirty list. Returns the new count. */
uint32_t flow_take_dirty(flow_net *n, uint32_t *out, uint32_t count);

/* ---- flow_fill.c ---- */
/* Progressive filling over comp_flows[0..nf) on comp_links[0..nl) (every
 * link of those flows); writes bneck and the level of the links that
 * freeze (flow_new_rate). Flows must be marked flow_mark == epoch (epoch + 1
 * once frozen). residual: a link's capacity is reduced by the current rates
 * of the flows on it that are not in the filling. */
void flow_fill(flow_net *n, uint32_t nf, uint32_t nl, int residual);

/* A whole component (comp_flows[0..nf), comp_links[0..nl), marked as for
 * flow_fill) re-solved from scratch: counted in the stats, filled, and
 * every flow given its new rate. Returns nl. */
uint32_t flow_refill_component(flow_net *n, uint32_t nf, uint32_t nl);

/* The local repair (flow_fill.c): rates after the changes on the dirty links,
 * re-solving only the flows whose max-min condition the change can break.
 * Returns the count of links in comp_links (those of the re-solved flows). */
uint32_t flow_repair(flow_net *n, double now);

#endif
