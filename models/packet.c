/* packet.c - the packet-level tier (see packet.h for the model).
 *
 * State lives in dense arrays (STYLE.md): one record per directed link (its
 * egress FIFO as a singly linked list of packet ids, flow-control counters
 * and stats), a pool of 16-byte packets with a free list, and a pool of
 * message records (path, packets still to arrive, completion callback) with
 * a free list. Handlers index these arrays by id and never keep a pointer
 * across a call that may send (a completion callback may call pkt_send,
 * which can grow the pools).
 *
 * Invariants: a link is busy with at most one packet, its FIFO's head; a
 * packet is in exactly one FIFO or on exactly one wire (between its finish
 * and arrive events) until consumed; under PKT_IB, credit_used of a link
 * feeding a switch is >= the bytes held at that port and <= the buffer.
 * ECN marking, CNPs and DCQCN are in packet_dcqcn.c (records in
 * packet_internal.h).
 */
#include "packet_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event_kinds.h"

int pkt_config_check(const pkt_config *c, char *why, size_t why_size)
{
    if (!c)
        return pkt_say(why, why_size, "packet tier: no configuration");
    if (!(c->mtu_bytes > 0) || !isfinite(c->mtu_bytes) || c->mtu_bytes != floor(c->mtu_bytes) ||
        c->mtu_bytes >= 4294967296.0)
        return pkt_say(why, why_size, "packet tier: mtu_bytes must be a whole number of bytes, "
                                  "positive and below 2^32");
    if (c->technology != PKT_IB && c->technology != PKT_ROCE)
        return pkt_say(why, why_size, "packet tier: technology must be PKT_IB or PKT_ROCE");
    if (!(c->buffer_bytes > 0) || !isfinite(c->buffer_bytes))
        return pkt_say(why, why_size, "packet tier: buffer_bytes must be positive and finite");
    if (c->mtu_bytes > c->buffer_bytes)
        return pkt_say(why, why_size, "packet tier: mtu_bytes must be <= buffer_bytes "
                                  "(a packet must fit in a port's buffer)");
    if (!(c->hop_latency_s >= 0) || !isfinite(c->hop_latency_s))
        return pkt_say(why, why_size, "packet tier: hop_latency_s must be >= 0 and finite");
    if (c->is_adaptive < 0 || c->is_adaptive > 5)
        return pkt_say(why, why_size, "packet tier: is_adaptive must be 0, 1, 2, 3, 4 or 5");
    if (c->reorder != PKT_RX_OUT_OF_ORDER && c->reorder != PKT_RX_IN_ORDER)
        return pkt_say(why, why_size, "packet tier: reorder must be PKT_RX_OUT_OF_ORDER or "
                                  "PKT_RX_IN_ORDER");
    if (c->reorder == PKT_RX_IN_ORDER) {
        if (pkt_reorder_check(c, why, why_size)) /* lossless: the checks below apply */
            return -1;
    } else if (c->loss != PKT_LOSSLESS || c->rto_s != 0) {
        return pkt_loss_check(c, why, why_size); /* PFC off: xoff and xon ignored */
    }
    if (c->technology == PKT_ROCE) {
        if (!(c->xon_bytes >= 0) || !isfinite(c->xon_bytes) || !(c->xoff_bytes > 0) ||
            !isfinite(c->xoff_bytes))
            return pkt_say(why, why_size, "packet tier: xon_bytes >= 0 and xoff_bytes > 0, finite");
        if (!(c->xon_bytes < c->xoff_bytes) || !(c->xoff_bytes <= c->buffer_bytes))
            return pkt_say(why, why_size, "packet tier: PFC needs xon_bytes < xoff_bytes <= "
                                      "buffer_bytes");
    }
    if (pkt_dcqcn_check(c, why, why_size))
        return -1;
    return pkt_ibcc_check(c, why, why_size);
}

pkt_net *pkt_net_create(sim_engine *eng, const topo_graph *g, topo_router *r,
                        const pkt_config *cfg, char *why, size_t why_size)
{
    if (!eng || !g || !r || !g->out_offset) {
        pkt_say(why, why_size, "packet tier: needs an engine, a finished graph and a router");
        return NULL;
    }
    if (pkt_config_check(cfg, why, why_size))
        return NULL;
    for (uint32_t l = 0; l < g->n_links; l++)
        if (!(g->link_bytes_per_s[l] > 0) || !isfinite(g->link_bytes_per_s[l])) {
            if (why && why_size)
                snprintf(why, why_size, "packet tier: link %u has rate %g B/s (must be "
                         "positive and finite)", l, g->link_bytes_per_s[l]);
            return NULL;
        }
    if (cfg->dcqcn.is_enabled)
        for (uint32_t l = 0; l < g->n_links; l++)
            if (g->node_kind[g->link_src[l]] == TOPO_HOST &&
                cfg->dcqcn.min_rate_bytes_per_s > g->link_bytes_per_s[l]) {
                if (why && why_size)
                    snprintf(why, why_size, "packet tier: DCQCN min rate %g B/s is above host "
                             "link %u's rate %g B/s", cfg->dcqcn.min_rate_bytes_per_s, l,
                             g->link_bytes_per_s[l]);
                return NULL;
            }
    if (cfg->is_adaptive >= 2 && g->updown) {
        pkt_say(why, why_size, "packet tier: per-packet Valiant, minimal, UGAL-G or progressive "
                           "routing on virtual channels (is_adaptive 2, 3, 4, 5) needs a "
                           "Dragonfly family");
        return NULL;
    }
    pkt_net *n = calloc(1, sizeof *n);
    if (!n) {
        pkt_say(why, why_size, "packet tier: out of memory");
        return NULL;
    }
    n->eng = eng;
    n->g = g;
    n->router = r;
    n->cfg = *cfg;
    if (cfg->loss != PKT_LOSSLESS) /* no PFC: a port never crosses xoff */
        n->cfg.xoff_bytes = n->cfg.xon_bytes = INFINITY;
    n->free_pkt = n->free_msg = PKT_NONE;
    n->series_edge = INFINITY;
    pkt_queue_init(n);
    n->usage_cap = topo_route_max_usages(r);
    n->links = pkt_links_alloc((size_t)g->n_links + 1);
    n->usage = calloc(n->usage_cap + 1, sizeof *n->usage);
    for (uint32_t v = 0; v < g->n_nodes; v++) /* next links <= out-degree */
        if (g->out_offset[v + 1] - g->out_offset[v] > n->cand_cap)
            n->cand_cap = g->out_offset[v + 1] - g->out_offset[v];
    n->cand = calloc((size_t)n->cand_cap + 1, sizeof *n->cand);
    n->tied = calloc((size_t)n->cand_cap + 1, sizeof *n->tied);
    if (cfg->ibcc.is_enabled)
        n->ibcc_seen = calloc((size_t)g->n_links + 1, sizeof *n->ibcc_seen);
    if (!n->links || !n->usage || !n->cand || !n->tied ||
        (cfg->ibcc.is_enabled && !n->ibcc_seen)) {
        pkt_net_destroy(n);
        pkt_say(why, why_size, "packet tier: out of memory");
        return NULL;
    }
    for (uint32_t l = 0; l < g->n_links; l++) {
        n->links[l].head = n->links[l].tail = PKT_NONE;
        n->links[l].feeds_switch = g->node_kind[g->link_dst[l]] != TOPO_HOST;
        n->links[l].feeds_host = !n->links[l].feeds_switch; /* a stall leaves it set */
    }
    n->walk = cfg->is_adaptive && g->updown; /* a Dragonfly's choice is packet_df.c's */
    if (cfg->is_adaptive && !g->updown && pkt_df_create(n, why, why_size)) {
        pkt_net_destroy(n);
        return NULL;
    }
    return n;
}

void pkt_net_destroy(pkt_net *n)
{
    if (!n)
        return;
    for (uint32_t m = 0; m < n->n_msgs; m++)
        free(n->msgs[m].path);
    free(n->msgs);
    free(n->pkts);
    free(n->links);
    free(n->usage);
    free(n->cand);
    free(n->tied);
    free(n->ibcc_seen);
    pkt_queue_fini(n);
    pkt_rx_free(n->rx);
    if (n->series) /* it outlives the net only finished: detach it */
        pkt_series_detach_net(n->series);
    pkt_loss_free(n->loss);
    pkt_sharp_free(n->sharp);
    pkt_df_free(n->df);
    free(n);
}

pkt_link *pkt_links_alloc(size_t count)
{
    if (count > SIZE_MAX / sizeof(pkt_link))
        return NULL;
    pkt_link *k = aligned_alloc(_Alignof(pkt_link), count * sizeof *k);
    if (k)
        memset(k, 0, count * sizeof *k);
    return k;
}

const char *pkt_net_error(const pkt_net *n) { return n->error; }
const topo_graph *pkt_net_graph(const pkt_net *n) { return n->g; }
const pkt_net_stats *pkt_net_get_stats(const pkt_net *n) { return &n->stats; }

pkt_link_stats pkt_net_link_stats(const pkt_net *n, uint32_t l)
{
    pkt_link_stats s = {0};
    if (l < n->g->n_links && n->df)
        return pkt_df_link_stats(n, l);
    if (l < n->g->n_links) {
        s.bytes_sent = n->links[l].bytes_sent;
        s.max_held_bytes = n->links[l].max_held;
        s.packets_sent = n->links[l].sent;
        s.pauses = n->links[l].pauses;
        s.ecn_marks = n->links[l].marks;
        s.max_queued_bytes = n->links[l].max_queued;
        s.ecn_p_sum = n->links[l].p_sum;
        s.ecn_p_var = n->links[l].p_var;
        s.drops = pkt_loss_link_drops(n, l);
    }
    return s;
}

double pkt_net_link_held(const pkt_net *n, uint32_t l)
{
    return l < n->g->n_links ? (n->df ? pkt_df_sum(n, l, 1) : n->links[l].held) : 0;
}

double pkt_net_link_queued(const pkt_net *n, uint32_t l)
{
    return l < n->g->n_links ? (n->df ? pkt_df_sum(n, l, 0) : n->links[l].queued) : 0;
}

/* ---- the link: FIFO, transmitter, flow control ---- */

static void on_tx_done(sim_engine *eng, void *ctx, uint64_t data);
static void on_arrive(sim_engine *eng, void *ctx, uint64_t data);

void pkt_fifo_push(pkt_net *n, uint32_t l, uint32_t id)
{
    pkt_link *k = &n->links[l];
    n->pkts[id].next = PKT_NONE;
    k->queued += n->pkts[id].size;
    if (k->queued > k->win_queued) { /* the series bin's maximum, then the run's */
        k->win_queued = k->queued;
        if (k->queued > k->max_queued)
            k->max_queued = k->queued;
    }
    if (k->tail == PKT_NONE) {
        k->head = id;
        k->head_size = n->pkts[id].size;
    } else {
        n->pkts[k->tail].next = id;
        n->pkts[k->tail].next_size = n->pkts[id].size;
    }
    k->tail = id;
}

size_t pkt_packet_record_bytes(void) { return sizeof(pkt_packet); }

/* Start the head packet of l's FIFO if the transmitter is idle, not paused,
 * and (PKT_IB) the downstream port has credits for the whole packet. */
static inline void try_start(pkt_net *n, uint32_t l)
{
    if (n->df) { /* virtual channels share the physical link (packet_df.c) */
        pkt_df_try_start(n, l);
        return;
    }
    pkt_link *k = &n->links[l];
    if (k->is_busy || k->is_paused || k->head == PKT_NONE)
        return;
    double size = k->head_size;
    if (n->cfg.technology == PKT_IB && k->feeds_switch) {
        if (k->credit_used + size > n->cfg.buffer_bytes)
            return; /* a returning credit retries */
        k->credit_used += size;
    }
    k->is_busy = 1;
    pkt_schedule_lane(n, size / n->g->link_bytes_per_s[l], PRIO_TX_DONE, KIND_PKT_TX_DONE,
                      on_tx_done, l, k->head);
}

void pkt_link_try_start(pkt_net *n, uint32_t l) { try_start(n, l); }

static void on_credit(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)eng;
    pkt_net *n = ctx;
    uint32_t l = (uint32_t)(data >> 32);
    n->stats.events++;
    n->links[l].credit_used -= (double)(uint32_t)data;
    try_start(n, l);
}

static void on_pause(sim_engine *eng, void *ctx, uint64_t l)
{
    (void)eng;
    pkt_net *n = ctx;
    n->stats.events++;
    n->stats.pauses++;
    n->links[l].pauses++;
    n->links[l].is_paused = 1;
}

static void on_resume(sim_engine *eng, void *ctx, uint64_t l)
{
    (void)eng;
    pkt_net *n = ctx;
    n->stats.events++;
    n->links[l].is_paused = 0;
    try_start(n, (uint32_t)l);
}

/* A packet of `size` bytes that came in over link `up` has left the switch
 * (or a stalled host's NIC, packet_rx.c): free its bytes at that ingress
 * port and tell the upstream transmitter (credit, or RESUME once below
 * xon), d later. */
void pkt_port_release(pkt_net *n, uint32_t up, uint32_t size)
{
    pkt_link *u = &n->links[up];
    u->held -= size;
    double d = n->cfg.hop_latency_s;
    if (n->cfg.technology == PKT_IB) {
        pkt_schedule_in(n, d, PRIO_CONTROL, KIND_PKT_CREDIT, on_credit,
                        ((uint64_t)up << 32) | size, 1);
    } else if (u->has_paused && u->held < n->cfg.xon_bytes) {
        u->has_paused = 0;
        pkt_schedule_in(n, d, PRIO_CONTROL, KIND_PKT_RESUME, on_resume, up, 1);
    }
}

static void on_tx_done(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)eng;
    pkt_net *n = ctx;
    uint32_t l = (uint32_t)data;
    uint32_t id = pkt_link_pop_sent(n, &n->links[l]);
    pkt_packet *p = &n->pkts[id];
    if (p->msg & PKT_SHARP)
        pkt_sharp_sent(n, id); /* packet_sharp.c: what it summed or copied is freed */
    else if (p->hop > 0)
        pkt_port_release(n, p->in_link, p->size); /* = path[hop - 1] unless adaptive */
    else if (pkt_has_rc(n))
        pkt_loss_sent(n, id); /* once per packet: it has left its NIC */
    /* on the wire the packet is in no FIFO: its next names the link it
     * crosses (on_arrive reads it there, not from its path); adaptive: the
     * arrival carries it too (the packet keeps no path) */
    n->pkts[id].next = l;
    uint64_t arrival = n->walk ? ((uint64_t)l << 32) | id : id;
    pkt_schedule_lane(n, n->cfg.hop_latency_s, PRIO_ARRIVE, KIND_PKT_ARRIVE, on_arrive, arrival,
                      l);
    try_start(n, l);
}

void pkt_msg_free(pkt_net *n, uint32_t m)
{
    pkt_msg *r = &n->msgs[m];
    r->is_live = 0;
    r->next_free = n->free_msg;
    n->free_msg = m;
}

/* The record may already be back on the free list (msg_finish): it is
 * read before the callback only. */
static void msg_callback(pkt_net *n, pkt_done_fn done, void *ctx, uint64_t tag)
{
    if (done) { /* last: it may send, growing the pools */
        pkt_pump_arm(n); /* what it schedules goes after the tier's events due now */
        done(ctx, tag);
    }
}

void pkt_msg_done(pkt_net *n, uint32_t m)
{
    pkt_msg *r = &n->msgs[m];
    pkt_done_fn done = r->done;
    n->stats.messages_delivered++;
    r->done = NULL;
    msg_callback(n, done, r->ctx, r->tag);
}

static void msg_finish(pkt_net *n, uint32_t m)
{
    pkt_msg *r = &n->msgs[m];
    pkt_done_fn done = r->done;
    n->stats.messages_delivered++;
    r->done = NULL;
    pkt_msg_free(n, m);
    msg_callback(n, done, r->ctx, r->tag);
}

/* Packet id is at its destination host: consumed; its message may finish. */
void pkt_deliver(pkt_net *n, uint32_t id)
{
    if (pkt_has_rc(n)) {
        pkt_loss_deliver(n, id); /* accepted or discarded (packet_loss.c) */
        return;
    }
    pkt_packet *p = &n->pkts[id];
    uint32_t msg = p->msg;
    pkt_msg *m = &n->msgs[msg];
    pkt_count_order(n, m, p->index & ~PKT_CE);
    if (n->cfg.dcqcn.is_enabled)
        pkt_dcqcn_deliver(n, msg, id);
    else if (n->cfg.ibcc.is_enabled)
        pkt_ibcc_deliver(n, msg, id);
    m->delivered += p->size;
    n->stats.packets_delivered++;
    n->stats.bytes_delivered += p->size;
    p->next = n->free_pkt;
    n->free_pkt = id;
    n->n_free_pkts++;
    if (--m->left == 0)
        msg_finish(n, msg);
}

/* `size` bytes arrive at the ingress port link l feeds: count them, and
 * under PKT_ROCE send PAUSE upstream (d later) once above xoff. */
void pkt_port_hold(pkt_net *n, uint32_t l, uint32_t size)
{
    pkt_link *k = &n->links[l];
    k->held += size;
    if (k->held > k->win_held) { /* the series bin's maximum, then the run's */
        k->win_held = k->held;
        if (k->held > k->max_held) {
            k->max_held = k->held;
            if (k->held > n->stats.max_held_bytes)
                n->stats.max_held_bytes = k->held;
        }
    }
    if (n->cfg.technology == PKT_ROCE && !k->has_paused && k->held > n->cfg.xoff_bytes) {
        k->has_paused = 1;
        pkt_schedule_in(n, n->cfg.hop_latency_s, PRIO_CONTROL, KIND_PKT_PAUSE, on_pause, l, 1);
    }
}

/* Adaptive routing: packet id, at switch v, takes the next link towards
 * its destination whose FIFO drains soonest with it, ties by the hash.
 * O(out-degree of v). */
static uint32_t adaptive_next(pkt_net *n, uint32_t id, uint32_t v)
{
    const pkt_packet *p = &n->pkts[id];
    const pkt_msg *m = &n->msgs[p->msg];
    uint32_t nc = topo_next_hops(n->router, v, m->dst, n->cand, n->cand_cap);
    if (nc == 0 || nc > n->cand_cap) /* not in a folded Clos whose table pkt_send built: */
        return m->path[p->hop + 1 < m->n_hops ? p->hop + 1 : m->n_hops - 1]; /* the route's */
    if (nc == 1)
        return n->cand[0];
    const double *rate = n->g->link_bytes_per_s;
    double best = INFINITY;
    uint32_t ties = 0;
    for (uint32_t i = 0; i < nc; i++) {
        uint32_t c = n->cand[i];
        double t = (n->links[c].queued + p->size) / rate[c];
        if (t < best) {
            best = t;
            ties = 0;
        }
        if (t == best)
            n->tied[ties++] = c;
    }
    if (ties == 1)
        return n->tied[0];
    uint64_t h = pkt_mix64(m->serial ^ pkt_mix64(((uint64_t)(p->index & ~PKT_CE) << 32) | v));
    return n->tied[h % ties];
}

static void on_arrive(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)eng;
    pkt_net *n = ctx;
    uint32_t id = (uint32_t)data;
    pkt_packet *p = &n->pkts[id];
    int is_adaptive = n->walk;
    uint32_t l = p->next; /* the link it crossed (on_tx_done) */
    pkt_link *k = &n->links[l];
    n->stats.events++;
    if (p->msg & PKT_SHARP) {
        pkt_sharp_arrive(n, l, id); /* summed, passed up or down, or at its rank */
        return;
    }
    if (k->feeds_host) {
        /* at the destination host (paths and adaptive walks never pass
         * through a host): consumed, unless a stalled host's NIC holds it */
        if (n->rx && pkt_rx_arrive(n, l, id))
            return; /* packet_rx.c */
        pkt_deliver(n, id);
        return;
    }
    if (n->cfg.loss && k->held + p->size > n->cfg.buffer_bytes) {
        pkt_loss_drop(n, l, id); /* tail drop: no room at this ingress port */
        return;
    }
    pkt_port_hold(n, l, p->size);
    uint32_t next = is_adaptive ? adaptive_next(n, id, n->g->link_dst[l]) : p->path[p->hop + 1];
    p->hop++;
    p->in_link = l;
    if (n->cfg.dcqcn.is_enabled)
        pkt_dcqcn_enqueue(n, id, next);
    else if (n->cfg.ibcc.is_enabled)
        pkt_ibcc_enqueue(n, id, next);
    pkt_fifo_push(n, next, id);
    try_start(n, next);
}

#if defined(__GNUC__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif
/* a link record's first cache line (a hop's counts, FIFO and flags), and
 * both (a finish also counts the packet sent) */
#define PREFETCH_LINK(k) PREFETCH(k)
#define PREFETCH_LINK_ALL(k) (PREFETCH(k), PREFETCH(&(k)->max_held))

/* An arrival's lines: stage 2 its packet and the link crossed (hint: no
 * load); stage 1 what the packet names: its next path entry, or at its
 * destination its message record; stage 0 the next link. A SHARP packet
 * (pkt_sharp_arrive's) gets stage 2 only: it has no message record (a net
 * of SHARP operations alone has none) and no path of its own. */
static inline void prefetch_arrive(const pkt_net *n, const pkt_ev *e, uint32_t stage)
{
    const pkt_packet *p = &n->pkts[(uint32_t)e->data];
    const pkt_link *k = &n->links[e->hint];
    if (stage == 2) {
        PREFETCH(p);
        PREFETCH_LINK(k);
        return;
    }
    if (p->msg & PKT_SHARP)
        return;
    if (stage == 1) {
        if (k->feeds_host) { /* delivered: the lines of its message's record a
                                 delivery updates (200 bytes a record, the
                                 counts at 56 and 176) */
            const pkt_msg *m = &n->msgs[p->msg];
            PREFETCH(&m->left);
            PREFETCH(&m->delivered);
        } else if (!n->walk)
            PREFETCH(&p->path[p->hop + 1]);
    } else if (!k->feeds_host && !n->walk) {
        PREFETCH_LINK(&n->links[p->path[p->hop + 1]]);
    }
}

/* A finish's lines: stage 2 its link (both lines: it counts the packet
 * sent) and head packet (hint); stage 1 the link the packet came in on (at
 * its source: its own link again) */
static inline void prefetch_tx_done(const pkt_net *n, const pkt_ev *e, uint32_t stage)
{
    const pkt_packet *p = &n->pkts[e->hint];
    if (stage == 2) {
        PREFETCH_LINK_ALL(&n->links[(uint32_t)e->data]);
        PREFETCH(p);
    } else if (stage == 1) {
        if (p->hop > 0 && !(p->msg & PKT_SHARP))
            PREFETCH_LINK(&n->links[p->in_link]);
    }
}

/* Lane event `ahead` events after the head, if the lane has one, and it
 * is fn's; NULL otherwise */
static inline const pkt_ev *lane_ev(const pkt_ev *ring, uint32_t head, uint32_t mask,
                                    uint32_t count, uint32_t ahead, sim_handler_fn fn)
{
    const pkt_ev *e = &ring[(head + ahead) & mask];
    return count > ahead && e->fn == fn ? e : NULL;
}

void pkt_prefetch_lane(const pkt_net *n, const pkt_ev *ring, uint32_t head, uint32_t mask,
                       uint32_t count, unsigned prio)
{
    /* one sequence per kind of lane: the branches on the handler are then
     * taken the same way every time within it (a lane of priority p holds
     * the handlers scheduled at p: finishes (and DCQCN's pacing, the
     * Dragonfly's finishes), arrivals (the Dragonfly's), control). Written
     * out, not as a loop over the stages: GCC deletes a loop whose body
     * only prefetches. */
    const uint32_t step = PKT_PREFETCH_STEP;
    const pkt_ev *e;
    _Static_assert(PKT_PREFETCH_STAGES == 3, "three stages, written out below");
    if (prio == PRIO_ARRIVE) {
        if ((e = lane_ev(ring, head, mask, count, step, on_arrive)))
            prefetch_arrive(n, e, 0);
        if ((e = lane_ev(ring, head, mask, count, 2 * step, on_arrive)))
            prefetch_arrive(n, e, 1);
        if ((e = lane_ev(ring, head, mask, count, 3 * step, on_arrive)))
            prefetch_arrive(n, e, 2);
    } else if (prio == PRIO_TX_DONE) {
        if ((e = lane_ev(ring, head, mask, count, 2 * step, on_tx_done)))
            prefetch_tx_done(n, e, 1);
        if ((e = lane_ev(ring, head, mask, count, 3 * step, on_tx_done)))
            prefetch_tx_done(n, e, 2);
    } else if ((e = lane_ev(ring, head, mask, count, 3 * step, on_credit))) {
        PREFETCH_LINK(&n->links[(uint32_t)(e->data >> 32)]); /* a credit's link */
    }
}

/* ---- sending ---- */

static int fail(pkt_net *n, const char *msg)
{
    snprintf(n->error, sizeof n->error, "%s", msg);
    return -1;
}

/* Order the route's usages into a path from src to dst: topo_route returns
 * the links of a single path, but not in path order. O(h^2), h = hops. */
int pkt_order_path(pkt_net *n, long count, uint32_t src, uint32_t dst)
{
    const topo_graph *g = n->g;
    uint32_t at = src;
    for (long i = 0; i < count; i++) {
        if (n->usage[i].weight != 1.0)
            return fail(n, "pkt_send: the route is not a single path (the packet tier needs "
                           "ECMP or adaptive balancing with one QP)");
        long j = i;
        while (j < count && g->link_src[n->usage[j].link] != at)
            j++;
        if (j == count)
            return fail(n, "pkt_send: the route's links do not form one path");
        topo_usage t = n->usage[i];
        n->usage[i] = n->usage[j];
        n->usage[j] = t;
        at = g->link_dst[n->usage[i].link];
    }
    if (at != dst)
        return fail(n, "pkt_send: the route does not end at the destination");
    return 0;
}

int pkt_reserve_packets(pkt_net *n, uint64_t need)
{
    if (n->n_free_pkts >= need)
        return 0;
    uint64_t grow = need - n->n_free_pkts;
    uint64_t cap = (uint64_t)n->n_pkts + (grow > n->n_pkts ? grow : n->n_pkts);
    if (cap >= PKT_NONE)
        cap = (uint64_t)n->n_pkts + grow;
    if (cap >= PKT_NONE)
        return -1;
    pkt_packet *q = realloc(n->pkts, (size_t)cap * sizeof *q);
    if (!q)
        return -1;
    n->pkts = q;
    for (uint64_t i = cap; i-- > n->n_pkts;) { /* ascending ids off the free list */
        q[i].next = n->free_pkt;
        n->free_pkt = (uint32_t)i;
    }
    n->n_free_pkts += (uint32_t)(cap - n->n_pkts);
    n->n_pkts = (uint32_t)cap;
    return 0;
}

/* A message record with room for a path of `hops` links; PKT_NONE when out
 * of memory. Not taken off the free list until the send succeeds. */
static uint32_t msg_record(pkt_net *n, uint32_t hops)
{
    if (n->free_msg == PKT_NONE) {
        if (n->n_msgs == PKT_NONE - 1)
            return PKT_NONE;
        uint32_t cap = n->n_msgs ? n->n_msgs * 2 : 16;
        if (cap < n->n_msgs || cap >= PKT_NONE)
            cap = PKT_NONE - 1;
        pkt_msg *q = realloc(n->msgs, (size_t)cap * sizeof *q);
        if (!q)
            return PKT_NONE;
        n->msgs = q;
        memset(q + n->n_msgs, 0, (size_t)(cap - n->n_msgs) * sizeof *q);
        for (uint32_t i = cap; i-- > n->n_msgs;) {
            q[i].next_free = n->free_msg;
            n->free_msg = i;
        }
        n->n_msgs = cap;
    }
    pkt_msg *r = &n->msgs[n->free_msg];
    if (r->path_cap < hops) {
        uint32_t *p = realloc(r->path, (size_t)hops * sizeof *p);
        if (!p)
            return PKT_NONE;
        r->path = p;
        r->path_cap = hops;
    }
    return n->free_msg;
}

int pkt_send(pkt_net *n, uint32_t src, uint32_t dst, double bytes, uint64_t route_key,
             pkt_done_fn done, void *ctx, uint64_t tag)
{
    const topo_graph *g = n->g;
    if (sim_now(n->eng) > n->series_edge) /* a time series' bins end before now */
        pkt_series_advance(n->series, sim_now(n->eng));
    if (src >= g->n_nodes || dst >= g->n_nodes || g->node_kind[src] != TOPO_HOST ||
        g->node_kind[dst] != TOPO_HOST || src == dst)
        return fail(n, "pkt_send: src and dst must be two different hosts");
    if (!(bytes > 0) || !isfinite(bytes) || bytes != floor(bytes))
        return fail(n, "pkt_send: bytes must be a positive whole number");
    double mtu = n->cfg.mtu_bytes;
    double packets = ceil(bytes / mtu);
    if (packets > (double)PKT_MAX_PACKETS)
        return fail(n, "pkt_send: too many packets in one message");
    uint32_t np = (uint32_t)packets;
    long count = 1;
    if (!n->df) {
        count = topo_route(n->router, src, dst, route_key, NULL, n->usage, n->usage_cap);
        if (count == -2)
            return fail(n, "pkt_send: out of memory for the routing tables");
        if (count <= 0)
            return fail(n, "pkt_send: no route between the hosts");
        if (pkt_order_path(n, count, src, dst))
            return -1;
    }
    uint32_t m = msg_record(n, (uint32_t)count);
    if (m == PKT_NONE)
        return fail(n, "pkt_send: out of memory");
    if (n->df && (count = pkt_df_route(n, src, dst, route_key, m)) < 0)
        return -1; /* the minimal path and its Valiant candidates (packet_df.c) */
    if (pkt_reserve_packets(n, np) || (pkt_has_rc(n) && pkt_loss_reserve(n, m, np)))
        return fail(n, "pkt_send: out of memory");
    pkt_msg *r = &n->msgs[m];
    n->free_msg = r->next_free;
    if (!n->df)
        for (long i = 0; i < count; i++)
            r->path[i] = n->usage[i].link;
    r->n_hops = (uint32_t)count;
    r->done = done;
    r->ctx = ctx;
    r->tag = tag;
    r->bytes = bytes;
    r->left = np;
    r->dst = dst;
    r->rcv_top = 0;
    r->serial = n->n_serial++;
    r->gen++;
    r->is_live = 1;
    r->delivered = 0;
    uint32_t first = r->path[0];
    int is_paced = pkt_is_paced(n);
    uint32_t in_link = n->df ? 0 : PKT_NONE; /* a Dragonfly's packets start on VC 0 */
    r->pace_head = r->pace_tail = PKT_NONE;
    for (uint32_t i = 0; i < np; i++) {
        uint32_t id = n->free_pkt;
        pkt_packet *p = &n->pkts[id];
        n->free_pkt = p->next;
        p->msg = m;
        p->path = r->path;
        p->hop = 0;
        /* every packet an MTU but the last, which carries the rest */
        p->size = (uint32_t)(i + 1 < np ? mtu : bytes - (double)(np - 1) * mtu);
        p->index = i;
        p->in_link = in_link;
        if (!is_paced) {
            pkt_fifo_push(n, first, id);
            continue;
        }
        p->next = PKT_NONE; /* onto the pacer's list, released at the rate Rc */
        if (r->pace_tail == PKT_NONE)
            r->pace_head = id;
        else
            n->pkts[r->pace_tail].next = id;
        r->pace_tail = id;
    }
    n->n_free_pkts -= np;
    n->stats.messages_sent++;
    n->stats.packets_injected += np;
    n->stats.bytes_sent += bytes;
    if (pkt_has_rc(n))
        pkt_loss_start(n, m, np);
    if (is_paced)
        pkt_dcqcn_start(n, m);
    else
        pkt_link_try_start(n, first);
    return 0;
}
