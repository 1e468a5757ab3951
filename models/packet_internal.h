/* packet_internal.h - the packet tier's records, shared by packet.c (links,
 * packets, messages, flow control) and packet_dcqcn.c (ECN marking, CNPs,
 * DCQCN pacing and rate machine). Not a public header.
 */
#ifndef DCSIM_MODELS_PACKET_INTERNAL_H
#define DCSIM_MODELS_PACKET_INTERNAL_H

#include <stddef.h>
#include <stdio.h>

#include "packet.h"

#define PKT_NONE UINT32_MAX
#define PKT_CE 0x80000000u      /* pkt_packet.index: the ECN congestion-experienced bit */
#define PKT_MAX_PACKETS 0x7fffffffu /* per message: the index keeps 31 bits */
#define PKT_SHARP 0x80000000u   /* pkt_packet.msg: a SHARP packet of op (msg & ~PKT_SHARP) */

/* At equal times: flow-control news first (a link that finishes a packet at
 * the instant a PAUSE or credit arrives must see it), then arrivals, then
 * finishes. Any fixed order is deterministic; this one is also causal. */
enum { PRIO_CONTROL = 0, PRIO_ARRIVE = 1, PRIO_TX_DONE = 2 };

typedef struct pkt_packet {
    const uint32_t *path; /* its message's path (stable while the message is live):
                             a hop reads no message record */
    uint32_t msg;   /* message record */
    uint32_t next;  /* next packet in the same FIFO (or pacing list), or in the free list;
                       on the wire (between finish and arrival): the link it crosses */
    uint32_t size;  /* bytes */
    uint32_t hop;   /* index in the message's path of the link it is queued on / crossing */
    uint32_t index; /* low 31 bits: index in the message; PKT_CE: ECN-marked */
    uint32_t in_link; /* the link it came in over at its switch (PKT_NONE at the source);
                         a Dragonfly's per-packet routing: its VC (packet_df.c) */
    uint32_t next_size; /* in a link's FIFO with a packet behind it: that packet's size,
                           set wherever next is (a finish reads no second packet) */
} pkt_packet;

/* A directed link's record: 128 bytes on a 64-byte boundary (pkt_links_alloc),
 * the first cache line what a hop reads and writes (counts, FIFO, flags),
 * the second the counters and maxima (written when a packet leaves, read
 * by the statistics): a hop that only passes through a link's port or
 * checks its transmitter touches one line. */
typedef struct pkt_link {
    _Alignas(64) double credit_used; /* PKT_IB: bytes reserved downstream, not yet credited back */
    double held;          /* bytes held now at the ingress port this link feeds */
    double queued;        /* bytes in the egress FIFO, the one in service included */
    double win_queued, win_held; /* maxima since the open series bin began (packet_series.c;
                                    without a series they equal max_queued, max_held) */
    uint32_t head, tail;  /* egress FIFO at link_src */
    uint32_t head_size;   /* the head packet's size (head != PKT_NONE): a start that
                             waits for credits reads no packet */
    uint8_t is_busy, is_paused, has_paused; /* has_paused: downstream sent PAUSE, no RESUME */
    uint8_t feeds_switch; /* link_dst is a switch, or a host with a NIC buffer (packet_rx.c):
                             buffered, flow-controlled */
    uint8_t feeds_host;   /* link_dst is a host: an arrival there is at its destination */
    uint8_t is_choice;    /* Dragonfly per-packet routing: the link into a source router
                             (packet_df.c); 0 otherwise */
    uint8_t is_global;    /* Dragonfly per-packet routing: a link between two groups */
    /* the second line */
    _Alignas(64) double max_held;
    double max_queued;
    double bytes_sent;    /* bytes of the packets sent */
    double p_sum, p_var;  /* ECN: sum of p(q) and of p(q)(1 - p(q)) over the draws */
    uint64_t sent, pauses, marks;
} pkt_link;
_Static_assert(sizeof(pkt_link) == 128 && offsetof(pkt_link, max_held) == 64,
               "a link record is two cache lines, the hop's fields in the first");

/* count zeroed link records on a 64-byte boundary (free() frees them); NULL
 * when out of memory */
pkt_link *pkt_links_alloc(size_t count);

typedef struct pkt_msg {
    pkt_done_fn done;
    void *ctx;
    uint64_t tag;
    uint64_t serial;      /* send order, from 0: keys the ECN draws */
    double bytes;
    uint32_t *path;       /* n_hops links in path order; kept when the record is reused */
    uint32_t n_hops, path_cap;
    uint32_t left;        /* packets not yet arrived */
    uint32_t dst;         /* destination host (adaptive routing walks towards it) */
    uint32_t rcv_top;     /* 1 + the highest packet index arrived (0: none): out_of_order */
    uint32_t next_free;
    uint32_t gen;         /* bumped at every reuse: timer and CNP events of a finished message are stale */
    uint8_t is_live;
    /* DCQCN (zero when off) */
    uint8_t has_cnp_sent, has_cnp_seen, is_alpha_armed, is_inc_armed;
    uint32_t pace_head, pace_tail; /* packets the pacer has not released yet */
    uint32_t t_count, bc_count;    /* rate-increase timer and byte-counter steps since the last cut */
    double rc, rt, alpha, line;    /* bytes/s, bytes/s, -, bytes/s (the first link's rate) */
    double bc_bytes;               /* bytes released since the last byte-counter step */
    double alpha_due_s, inc_due_s, last_cnp_s;
    double released, delivered;
    uint64_t cnps;
    /* IB congestion control (zero when off) */
    uint32_t ccti;                 /* congestion control table index */
    uint8_t is_ccti_armed;         /* a CCTI timer event is pending */
} pkt_msg;

/* A tier event in its own queue (packet_queue.c). key: the priority in
 * the top 8 bits, the scheduling number (the engine's insertion order) in
 * the low 56, so (t, key) orders events as the engine does: by time, then
 * priority, then insertion order (2^56 events: centuries at 1e7 a second). */
#define PKT_KEY_SEQ_BITS 56
typedef struct pkt_ev {
    double t;
    uint64_t key;
    uint64_t data;
    sim_handler_fn fn;
    uint16_t kind;
    uint32_t hint;        /* for the prefetch only (pkt_prefetch_lane), never read by a
                             handler: a finish's packet, an arrival's link */
} pkt_ev;

/* A lane's or the heap's head, (t, key), kept beside the others so the
 * next event is found without reading the rings; (INFINITY, UINT64_MAX)
 * when empty. */
typedef struct pkt_head {
    double t;
    uint64_t key;
} pkt_head;

/* Events of one (delay, priority): scheduled in time order, a FIFO ring. */
typedef struct pkt_lane {
    double delay_s;
    double last_t;         /* the time of its last event pushed */
    pkt_ev *ring;
    uint32_t head, n, cap; /* cap a power of two (or 0) */
    uint8_t prio;
} pkt_lane;

#define PKT_LANES_MAX 8u

struct pkt_net {
    sim_engine *eng;
    const topo_graph *g;
    topo_router *router;
    pkt_config cfg;
    pkt_link *links;
    pkt_packet *pkts;
    uint32_t n_pkts, free_pkt, n_free_pkts;
    pkt_msg *msgs;
    uint32_t n_msgs, free_msg;
    uint64_t n_serial;    /* messages sent so far */
    topo_usage *usage;    /* topo_route scratch, topo_route_max_usages entries */
    uint32_t *cand, *tied;/* adaptive routing scratch: cand_cap next links each */
    uint32_t cand_cap;
    size_t usage_cap;
    pkt_net_stats stats;
    /* the tier's event queue (packet_queue.c) */
    pkt_lane lanes[PKT_LANES_MAX];
    pkt_head heads[PKT_LANES_MAX + 1]; /* each lane's head; [PKT_LANES_MAX]: the heap's top */
    uint32_t n_lanes;
    uint8_t lane_hint[4];  /* per priority (low 2 bits): the lane it took last */
    pkt_ev *heap;
    uint32_t n_heap, heap_cap;
    uint64_t n_seq;
    sim_event_id pump_id; /* the pending pump event, 0 if none */
    double pump_t;
    uint8_t pump_prio, in_pump, use_engine;
    uint8_t walk;         /* per-packet adaptive routing in a folded Clos (adaptive_next) */
    struct pkt_df *df;    /* per-packet routing in a Dragonfly (packet_df.c); NULL: none */
    struct pkt_rx *rx;    /* host NIC buffers and stalls (packet_rx.c); NULL: hosts always accept */
    uint32_t *ibcc_seen;  /* IB CC: per link, eligible packets since its last FECN mark; NULL: off */
    struct pkt_series *series; /* time series (packet_series.c); NULL: none */
    double series_edge;   /* the open bin's end: a later event closes bins (INFINITY: none) */
    struct pkt_loss *loss;/* lossy modes' per-message state (packet_loss.c); NULL when lossless */
    struct pkt_sharp *sharp; /* SHARP all-reduces (packet_sharp.c); NULL until the first */
    char error[160];
};

/* packet.c */
/* Order the route's count usages in n->usage into a path src -> dst: 0, or
 * -1 with n->error set (not one path, not ending at dst). */
int pkt_order_path(pkt_net *n, long count, uint32_t src, uint32_t dst);
void pkt_fifo_push(pkt_net *n, uint32_t l, uint32_t id);
/* The packet at the head of link k has left it (its transmit-done event):
 * off the queue, counted sent; returns its id. Both transmit paths
 * (packet.c and the Dragonfly's virtual channels, packet_df.c) take it. */
static inline uint32_t pkt_link_pop_sent(pkt_net *n, pkt_link *k)
{
    uint32_t id = k->head;
    const pkt_packet *p = &n->pkts[id];
    n->stats.events++;
    n->stats.packet_hops++;
    k->head = p->next;
    if (k->head == PKT_NONE)
        k->tail = PKT_NONE;
    else
        k->head_size = p->next_size;
    k->is_busy = 0;
    k->sent++;
    k->bytes_sent += p->size;
    k->queued -= p->size;
    return id;
}
void pkt_link_try_start(pkt_net *n, uint32_t l);
/* 1: schedule every event on the engine (the reference path); 0: lanes */
void pkt_net_use_engine_queue(pkt_net *n, int on);

/* packet_queue.c: schedule fn(eng, n, data) delay_s from now / at t_s, by
 * the engine's rules (priority, kind as sim_schedule_*). is_lane: the delay
 * is one of few values (a lane's); else the event goes to the heap. */
void pkt_schedule_in(pkt_net *n, double delay_s, unsigned prio, unsigned kind,
                     sim_handler_fn fn, uint64_t data, int is_lane);
/* pkt_schedule_in on a lane, with a hint for the prefetch (pkt_ev.hint) */
void pkt_schedule_lane(pkt_net *n, double delay_s, unsigned prio, unsigned kind,
                       sim_handler_fn fn, uint64_t data, uint32_t hint);
void pkt_schedule_at(pkt_net *n, double t_s, unsigned prio, unsigned kind, sim_handler_fn fn,
                     uint64_t data);
/* Arm the engine's pump for the tier's next event (before a callback runs). */
void pkt_pump_arm(pkt_net *n);
void pkt_queue_init(pkt_net *n); /* empty heads (pkt_net_create) */
void pkt_queue_fini(pkt_net *n);
/* packet.c: prefetch what the handlers of a lane's next events will read
 * (the lane of priority prio: ring, head index, mask = cap - 1, count
 * events); stage 0 is the nearest event (its last dependent line), higher
 * stages further ahead (stage s: (s + 1) PKT_PREFETCH_STEP events ahead) */
#define PKT_PREFETCH_STAGES 3u
#define PKT_PREFETCH_STEP 4u
void pkt_prefetch_lane(const pkt_net *n, const pkt_ev *ring, uint32_t head, uint32_t mask,
                       uint32_t count, unsigned prio);

/* packet.c: delivery, and a switch (or stalled NIC) ingress port's count */
void pkt_deliver(pkt_net *n, uint32_t id);
void pkt_port_hold(pkt_net *n, uint32_t l, uint32_t size);
void pkt_port_release(pkt_net *n, uint32_t up, uint32_t size);

/* packet_rx.c: a packet id arriving over link l at its destination host:
 * 1 when the host's NIC buffer keeps it (the host is stalled, or holds
 * earlier packets), 0 when the caller delivers it now. */
int pkt_rx_arrive(pkt_net *n, uint32_t l, uint32_t id);
void pkt_rx_free(struct pkt_rx *rx); /* NULL-safe */

/* Write msg into why (why_size bytes; why may be NULL) and return -1: the
 * tier's one-line refusals. */
static inline int pkt_say(char *why, size_t why_size, const char *msg)
{
    if (why && why_size)
        snprintf(why, why_size, "%s", msg);
    return -1;
}

/* The data of a message's timer or control event: its record and generation. */
static inline uint64_t pkt_msg_key(const pkt_net *n, uint32_t m)
{
    return (uint64_t)n->msgs[m].gen << 32 | m;
}

/* The message of such an event, or PKT_NONE when it has finished since. */
static inline uint32_t pkt_msg_of(const pkt_net *n, uint64_t data)
{
    uint32_t m = (uint32_t)data;
    if (m >= n->n_msgs || !n->msgs[m].is_live || n->msgs[m].gen != (uint32_t)(data >> 32))
        return PKT_NONE;
    return m;
}
/* packet_series.c: the net's time reached t_s > series_edge */
void pkt_series_advance(struct pkt_series *s, double t_s);
/* packet_series.c: the net goes first: the series stops, unfinished */
void pkt_series_detach_net(struct pkt_series *s);

/* packet.c: a message record back on the free list; a message's completion
 * callback (stats, then done(ctx, tag) last: it may send) */
void pkt_msg_free(pkt_net *n, uint32_t m);
void pkt_msg_done(pkt_net *n, uint32_t m);
/* packet.c: room for `need` more free packets; 0 or -1 */
int pkt_reserve_packets(pkt_net *n, uint64_t need);

/* 1 when the receiver and sender run packet_loss.c's machinery: a lossy
 * mode, or an in-order receiver (go-back-N on the lossless fabric). */
static inline int pkt_has_rc(const pkt_net *n)
{
    return n->cfg.loss != PKT_LOSSLESS || n->cfg.reorder == PKT_RX_IN_ORDER;
}

/* Packet index i of message r has arrived at its destination (any copy):
 * count it out of order when a higher index of r arrived before it. */
static inline void pkt_count_order(pkt_net *n, pkt_msg *r, uint32_t i)
{
    if (i + 1 < r->rcv_top)
        n->stats.out_of_order++;
    else
        r->rcv_top = i + 1;
}

/* packet_loss.c (packet.c calls these when pkt_has_rc) */
int pkt_loss_check(const pkt_config *c, char *why, size_t why_size);
/* PKT_RX_IN_ORDER's combinations and rto_s: 0 or -1 with the reason. */
int pkt_reorder_check(const pkt_config *c, char *why, size_t why_size);
/* Room for message m's state of np packets before pkt_send takes packets: 0 or -1. */
int pkt_loss_reserve(pkt_net *n, uint32_t m, uint32_t np);
/* Message m's np packets are in its NIC FIFO: set up sender and receiver, arm the RTO. */
void pkt_loss_start(pkt_net *n, uint32_t m, uint32_t np);
/* Packet id arrives over link l at a switch port with no room: dropped. */
void pkt_loss_drop(pkt_net *n, uint32_t l, uint32_t id);
/* Packet id has left its source NIC (finished on its first link). */
void pkt_loss_sent(pkt_net *n, uint32_t id);
/* Packet id is at its destination host: accepted or discarded. */
void pkt_loss_deliver(pkt_net *n, uint32_t id);
uint64_t pkt_loss_link_drops(const pkt_net *n, uint32_t l);
int pkt_loss_net_check(const pkt_net *n, char *why, size_t why_size);
void pkt_loss_free(struct pkt_loss *x); /* NULL-safe */

/* A message's timer or control event fires: counted; its message, or
 * PKT_NONE when that has finished since (the event is then stale). */
static inline uint32_t pkt_msg_event(pkt_net *n, uint64_t data)
{
    n->stats.events++;
    return pkt_msg_of(n, data);
}

/* packet_sharp.c: SHARP packet id arrives over link l (at a switch or a
 * rank); it has finished serialising on its link (frees what it summed or
 * copied); the ops' records (NULL-safe) */
void pkt_sharp_arrive(pkt_net *n, uint32_t l, uint32_t id);
void pkt_sharp_sent(pkt_net *n, uint32_t id);
void pkt_sharp_free(struct pkt_sharp *s);

/* splitmix64's finaliser: the tier's tie-break and draw hash */
static inline uint64_t pkt_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* packet_df.c: per-packet routing on a Dragonfly family (is_adaptive 1:
 * UGAL-L, 2: Valiant, 3: minimal, 4: UGAL-G), over PKT_DF_VCS virtual
 * channels */
int pkt_df_create(pkt_net *n, char *why, size_t why_size); /* 0 or -1 (n->df may be set) */
void pkt_df_free(struct pkt_df *d);                       /* NULL-safe */
/* The minimal path src -> dst and every Valiant candidate into message m's
 * path buffer: the minimal path's length, or -1 with n->error set. */
long pkt_df_route(pkt_net *n, uint32_t src, uint32_t dst, uint64_t key, uint32_t m);
/* Packet id has arrived at its source router: its next link (minimal or
 * Valiant; its path pointer moves to the Valiant path it takes). */
uint32_t pkt_df_choose(pkt_net *n, uint32_t id);
/* Virtual channels (VC v of link l is record l + v n_links, VC 0 the link
 * itself): start the head packet of record vl when the physical link is
 * idle (the credit or PAUSE check on vl). */
#define PKT_DF_VCS 3u
void pkt_df_try_start(pkt_net *n, uint32_t vl);
/* Link l's figures over its VCs; the sum of held (is_held) or queued bytes. */
pkt_link_stats pkt_df_link_stats(const pkt_net *n, uint32_t l);
double pkt_df_sum(const pkt_net *n, uint32_t l, int is_held);
/* The link records: n_links, times PKT_DF_VCS with Dragonfly per-packet routing. */
static inline uint32_t pkt_link_records(const pkt_net *n)
{
    return n->g->n_links * (n->df ? PKT_DF_VCS : 1u);
}

/* packet_dcqcn.c */
int pkt_dcqcn_check(const pkt_config *c, char *why, size_t why_size);
/* Packet id, at a switch, is about to join link l's FIFO: mark it or not. */
void pkt_dcqcn_enqueue(pkt_net *n, uint32_t id, uint32_t l);
/* Packet id of message m arrived at the destination (before m may finish). */
void pkt_dcqcn_deliver(pkt_net *n, uint32_t m, uint32_t id);
/* Message m's packets are on its pacing list: set up the RP (DCQCN's or IB
 * CC's) and release the first. */
void pkt_dcqcn_start(pkt_net *n, uint32_t m);
/* 1 when messages are paced (DCQCN or IB CC on) */
static inline int pkt_is_paced(const pkt_net *n)
{
    return n->cfg.dcqcn.is_enabled || n->cfg.ibcc.is_enabled;
}

/* packet_ibcc.c: InfiniBand congestion control (pkt_ibcc_config) */
int pkt_ibcc_check(const pkt_config *c, char *why, size_t why_size);
/* Packet id, at a switch, is about to join link l's FIFO: FECN-mark it or not. */
void pkt_ibcc_enqueue(pkt_net *n, uint32_t id, uint32_t l);
/* Packet id of message m arrived at its destination: a FECN returns a BECN. */
void pkt_ibcc_deliver(pkt_net *n, uint32_t m, uint32_t id);
/* The pacing gap after a packet of `size` bytes of message r. */
static inline double pkt_ibcc_gap(const pkt_net *n, const pkt_msg *r, double size)
{
    return size / r->line + r->ccti * n->cfg.ibcc.cct_step_s;
}

#endif
