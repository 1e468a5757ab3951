/* packet_loss.c - lossy RoCE on the packet tier (pkt_config.loss, packet.h):
 * tail drop at switch ingress ports, go-back-N or selective (IRN-style)
 * retransmission, ACKs, NACKs and a retransmission timeout (components.md
 * 5.2: IRN, Mittal et al. SIGCOMM'18; docs/fabric.md "Lossy RoCE"); and the
 * in-order receiver (PKT_RX_IN_ORDER): go-back-N on the lossless fabric,
 * where only reordering makes sequence errors (docs/fabric.md "Reordering").
 *
 * Off the lossless hot path: packet.c calls in here only when cfg.loss is
 * set or the receiver is in-order, once per packet (leaving its NIC,
 * reaching its host, being dropped), never per hop. Per message the state lives in a side array indexed by
 * the message record. Invariant: a record stays allocated while `pending`
 * > 0 (its live packets, its ACK and NACK events in flight, its armed
 * timer), so every event and packet of it names a live record; the
 * completion callback runs when the receiver has accepted every packet.
 *
 * Rules (P packets, indices 0 .. P-1, sizes as pkt_send cuts them):
 *  receiver, go-back-N: accepts i == e (e++, ACK(e)); i > e: discarded,
 *    NACK(e) if none was sent for this e; i < e: discarded (duplicate);
 *  receiver, selective: accepts any i not yet held (ACK(i)); when i is
 *    above every index held before (hi), NACKs hi .. i-1 once each;
 *    discards duplicates;
 *  sender: ACKs advance `una` (first unacknowledged; selective: SACK bits);
 *    go-back-N on NACK(e >= una): removes its packets queued in the NIC
 *    FIFO (the one on the wire goes on) and queues e .. P-1 at the FIFO's
 *    tail; selective on NACK(j): queues j unless acknowledged or queued,
 *    at the FIFO's front behind the packet on the wire (IRN sends
 *    retransmissions before new packets);
 *  timer: due rto_s after the last packet out of the NIC or ACK/NACK heard;
 *    at due with una < P and none of the message's packets queued: timeout,
 *    go-back-N queues una .. P-1 again, selective every unacknowledged one.
 * A packet leaving the NIC with an index below the highest that left before
 * is a retransmission (first sends leave in index order: FIFO).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event_kinds.h"
#include "packet_internal.h"

enum { HAS_GOT = 1, HAS_ACK = 2, IS_QUEUED = 4 }; /* selective: flags per packet */
#define ACK_IS_NACK (1ull << 63)

typedef struct loss_msg {
    uint32_t n_packets;
    uint32_t expected;  /* receiver: go-back-N's next expected; selective: first missing */
    uint32_t rcv_hi;    /* selective receiver: highest index held + 1 */
    uint32_t nacked;    /* go-back-N receiver: 1 + the e last NACKed (0: none) */
    uint32_t una;       /* sender: first packet not acknowledged */
    uint32_t sent_hi;   /* sender: packets 0 .. sent_hi-1 have left the NIC */
    uint32_t queued;    /* sender: its packets in the NIC FIFO, not on the wire */
    uint32_t pending;   /* live packets + ACK/NACK events + armed timer */
    uint32_t flags_cap;
    uint8_t *flags;     /* selective: HAS_GOT | HAS_ACK | IS_QUEUED per packet */
    double last_s;      /* sender: last packet out or ACK/NACK heard */
    uint8_t is_done;    /* receiver has every packet (callback made) */
} loss_msg;

struct pkt_loss {
    loss_msg *m;
    uint32_t cap;
    uint64_t *link_drops; /* per link */
    uint64_t made, removed; /* packets created (sends and resends); taken off a FIFO by go-back-N */
};

int pkt_loss_check(const pkt_config *c, char *why, size_t why_size)
{
    if (c->loss != PKT_LOSSLESS && c->loss != PKT_GO_BACK_N && c->loss != PKT_SELECTIVE)
        return pkt_say(why, why_size, "packet tier: loss must be PKT_LOSSLESS, PKT_GO_BACK_N or "
                                  "PKT_SELECTIVE");
    if (c->loss == PKT_LOSSLESS)
        return pkt_say(why, why_size, "packet tier: rto_s is for a lossy mode only");
    if (c->technology != PKT_ROCE)
        return pkt_say(why, why_size, "packet tier: a lossy mode needs technology PKT_ROCE "
                                  "(InfiniBand credits never drop)");
    if (c->dcqcn.is_enabled)
        return pkt_say(why, why_size, "packet tier: a lossy mode with DCQCN is not modelled "
                                  "(resends would bypass the pacer)");
    if (!(c->rto_s > 0) || !isfinite(c->rto_s))
        return pkt_say(why, why_size, "packet tier: a lossy mode needs rto_s, the retransmission "
                                  "timeout, positive and finite (a GAP in the references)");
    return 0;
}

int pkt_reorder_check(const pkt_config *c, char *why, size_t why_size)
{
    if (c->loss != PKT_LOSSLESS)
        return pkt_say(why, why_size, "packet tier: PKT_RX_IN_ORDER is for the lossless fabric "
                                  "(a lossy mode's receiver is the mode's: go-back-N in order, "
                                  "selective out of order)");
    if (c->dcqcn.is_enabled || c->ibcc.is_enabled)
        return pkt_say(why, why_size, "packet tier: PKT_RX_IN_ORDER with DCQCN or IB CC is not "
                                  "modelled (resends would bypass the pacer)");
    if (!(c->rto_s > 0) || !isfinite(c->rto_s))
        return pkt_say(why, why_size, "packet tier: PKT_RX_IN_ORDER needs rto_s, the "
                                  "retransmission timeout, positive and finite (a GAP in the "
                                  "references)");
    return 0;
}

void pkt_loss_free(struct pkt_loss *x)
{
    if (!x)
        return;
    for (uint32_t i = 0; i < x->cap; i++)
        free(x->m[i].flags);
    free(x->m);
    free(x->link_drops);
    free(x);
}

uint64_t pkt_loss_link_drops(const pkt_net *n, uint32_t l)
{
    return n->loss && l < n->g->n_links ? n->loss->link_drops[l] : 0;
}

int pkt_loss_reserve(pkt_net *n, uint32_t m, uint32_t np)
{
    if (!n->loss) {
        struct pkt_loss *x = calloc(1, sizeof *x);
        if (!x || !(x->link_drops = calloc((size_t)n->g->n_links + 1, sizeof *x->link_drops))) {
            free(x);
            return -1;
        }
        n->loss = x;
    }
    struct pkt_loss *x = n->loss;
    if (x->cap < n->n_msgs) {
        loss_msg *q = realloc(x->m, (size_t)n->n_msgs * sizeof *q);
        if (!q)
            return -1;
        memset(q + x->cap, 0, (size_t)(n->n_msgs - x->cap) * sizeof *q);
        x->m = q;
        x->cap = n->n_msgs;
    }
    loss_msg *s = &x->m[m];
    if (n->cfg.loss == PKT_SELECTIVE && s->flags_cap < np) {
        uint8_t *f = realloc(s->flags, np);
        if (!f)
            return -1;
        s->flags = f;
        s->flags_cap = np;
    }
    return 0;
}

static void on_timer(sim_engine *eng, void *ctx, uint64_t m);
static void on_control(sim_engine *eng, void *ctx, uint64_t data);

static void arm_timer(pkt_net *n, uint32_t m, double due_s)
{
    pkt_schedule_at(n, due_s, PRIO_CONTROL, KIND_PKT_RTO, on_timer, m);
}

void pkt_loss_start(pkt_net *n, uint32_t m, uint32_t np)
{
    loss_msg *s = &n->loss->m[m];
    uint8_t *flags = s->flags;
    uint32_t cap = s->flags_cap;
    memset(s, 0, sizeof *s);
    s->flags = flags;
    s->flags_cap = cap;
    if (flags)
        memset(flags, IS_QUEUED, np);
    s->n_packets = s->queued = np;
    s->pending = np + 1; /* its packets and the timer */
    s->last_s = sim_now(n->eng);
    n->loss->made += np;
    arm_timer(n, m, s->last_s + n->cfg.rto_s);
}

/* One of message m's pending things is gone: free the record after the last. */
static void unpend(pkt_net *n, uint32_t m)
{
    loss_msg *s = &n->loss->m[m];
    if (--s->pending == 0)
        pkt_msg_free(n, m);
}

static void free_packet(pkt_net *n, uint32_t id)
{
    n->pkts[id].next = n->free_pkt;
    n->free_pkt = id;
    n->n_free_pkts++;
}

static uint32_t packet_size(const pkt_net *n, uint32_t m, uint32_t i)
{
    double mtu = n->cfg.mtu_bytes, np = n->loss->m[m].n_packets;
    return (uint32_t)(i + 1 < np ? mtu : n->msgs[m].bytes - (np - 1) * mtu);
}

void pkt_loss_drop(pkt_net *n, uint32_t l, uint32_t id)
{
    uint32_t m = n->pkts[id].msg;
    n->stats.drops++;
    n->loss->link_drops[l]++;
    free_packet(n, id);
    unpend(n, m);
}

void pkt_loss_sent(pkt_net *n, uint32_t id)
{
    const pkt_packet *p = &n->pkts[id];
    loss_msg *s = &n->loss->m[p->msg];
    uint32_t i = p->index & ~PKT_CE;
    s->queued--;
    if (s->flags)
        s->flags[i] &= (uint8_t)~IS_QUEUED;
    if (i < s->sent_hi) {
        n->stats.resent_packets++;
        n->stats.resent_bytes += p->size;
    } else {
        s->sent_hi = i + 1;
    }
    s->last_s = sim_now(n->eng);
}

/* An ACK (cumulative e, or selective i) or a NACK to message m's sender,
 * hops x d later: n_hops of the message's path, which on a Dragonfly with
 * per-packet routing is its minimal path, whatever route the packet took
 * (packet_df.c; the ACK is a packet of its own, routed back on its own,
 * and a 64-B control packet's adaptive choice is the minimal path unless
 * that is congested; docs/fabric.md "The ACK's delay", test_packet_ack). */
static void send_control(pkt_net *n, uint32_t m, uint32_t seq, int is_nack)
{
    n->loss->m[m].pending++;
    if (is_nack)
        n->stats.nacks++;
    else
        n->stats.acks++;
    uint64_t data = ((uint64_t)seq << 32) | m | (is_nack ? ACK_IS_NACK : 0);
    pkt_schedule_in(n, n->msgs[m].n_hops * n->cfg.hop_latency_s, PRIO_CONTROL,
                    is_nack ? KIND_PKT_NACK : KIND_PKT_ACK, on_control, data, 1);
}

void pkt_loss_deliver(pkt_net *n, uint32_t id)
{
    pkt_packet *p = &n->pkts[id];
    uint32_t m = p->msg, i = p->index & ~PKT_CE, size = p->size;
    loss_msg *s = &n->loss->m[m];
    int is_accepted = 0;
    pkt_count_order(n, &n->msgs[m], i);
    free_packet(n, id);
    if (n->cfg.loss != PKT_SELECTIVE) {
        if (i == s->expected) {
            is_accepted = 1;
            s->expected++;
            send_control(n, m, s->expected, 0);
        } else if (i > s->expected && s->nacked != s->expected + 1) {
            s->nacked = s->expected + 1;
            send_control(n, m, s->expected, 1);
        }
    } else if (!(s->flags[i] & HAS_GOT)) {
        is_accepted = 1;
        s->flags[i] |= HAS_GOT;
        for (uint32_t j = s->rcv_hi; j < i; j++) /* a gap revealed: NACK each once */
            send_control(n, m, j, 1);
        if (i + 1 > s->rcv_hi)
            s->rcv_hi = i + 1;
        while (s->expected < s->n_packets && (s->flags[s->expected] & HAS_GOT))
            s->expected++;
        send_control(n, m, i, 0);
    }
    s = &n->loss->m[m];
    if (!is_accepted) {
        n->stats.discarded++;
    } else {
        n->msgs[m].delivered += size;
        n->stats.packets_delivered++;
        n->stats.bytes_delivered += size;
    }
    int is_complete = is_accepted && s->expected == s->n_packets;
    if (is_complete)
        s->is_done = 1;
    unpend(n, m); /* the timer keeps the record: una < P until the last ACK arrives */
    if (is_complete)
        pkt_msg_done(n, m); /* last: the callback may send */
}

/* Queue packet i of message m again at its NIC (the pool has room): at the
 * FIFO's tail (after == NULL), or after *after (PKT_NONE: at the front, but
 * behind the packet on the wire), which then names it. */
static void requeue(pkt_net *n, uint32_t m, uint32_t i, uint32_t *after)
{
    loss_msg *s = &n->loss->m[m];
    pkt_msg *r = &n->msgs[m];
    uint32_t id = n->free_pkt;
    pkt_packet *p = &n->pkts[id];
    n->free_pkt = p->next;
    n->n_free_pkts--;
    p->msg = m;
    p->path = r->path;
    p->hop = 0;
    p->size = packet_size(n, m, i);
    p->index = i;
    p->in_link = n->df ? 0 : PKT_NONE; /* a Dragonfly's VC 0 (packet_df.c) */
    if (!after) {
        pkt_fifo_push(n, r->path[0], id);
    } else {
        pkt_link *k = &n->links[r->path[0]];
        uint32_t at = *after != PKT_NONE ? *after : k->is_busy ? k->head : PKT_NONE;
        p->next = at == PKT_NONE ? k->head : n->pkts[at].next;
        if (p->next != PKT_NONE)
            p->next_size = n->pkts[p->next].size;
        if (at == PKT_NONE) {
            k->head = id;
            k->head_size = p->size;
        } else {
            n->pkts[at].next = id;
            n->pkts[at].next_size = p->size;
        }
        if (p->next == PKT_NONE)
            k->tail = id;
        k->queued += p->size;
        if (k->queued > k->max_queued)
            k->max_queued = k->queued;
        *after = id;
    }
    s->queued++;
    s->pending++;
    if (s->flags)
        s->flags[i] |= IS_QUEUED;
    n->loss->made++;
}

/* Go-back-N: drop message m's packets queued at its NIC (not the one on
 * the wire), then queue from .. P-1. */
static void go_back(pkt_net *n, uint32_t m, uint32_t from)
{
    pkt_link *k = &n->links[n->msgs[m].path[0]];
    uint32_t prev = k->is_busy ? k->head : PKT_NONE;
    uint32_t id = prev == PKT_NONE ? k->head : n->pkts[prev].next;
    while (id != PKT_NONE) {
        uint32_t next = n->pkts[id].next;
        if (n->pkts[id].msg != m) {
            prev = id;
        } else {
            if (prev == PKT_NONE) {
                k->head = next;
                if (next != PKT_NONE)
                    k->head_size = n->pkts[next].size;
            } else {
                n->pkts[prev].next = next;
                if (next != PKT_NONE)
                    n->pkts[prev].next_size = n->pkts[next].size;
            }
            if (k->tail == id)
                k->tail = prev;
            k->queued -= n->pkts[id].size;
            n->loss->m[m].queued--;
            n->loss->removed++;
            free_packet(n, id);
            unpend(n, m); /* the timer keeps the record */
        }
        id = next;
    }
    uint32_t np = n->loss->m[m].n_packets;
    if (from >= np || pkt_reserve_packets(n, np - from)) {
        if (from < np)
            snprintf(n->error, sizeof n->error, "packet tier: out of memory for a resend "
                     "(the timer retries)");
        return;
    }
    for (uint32_t i = from; i < np; i++)
        requeue(n, m, i, NULL);
    pkt_link_try_start(n, n->msgs[m].path[0]);
}

/* Selective: queue packet i again unless acknowledged or still queued,
 * ahead of new packets (IRN sends retransmissions first), after *after. */
static void resend_one(pkt_net *n, uint32_t m, uint32_t i, uint32_t *after)
{
    if (n->loss->m[m].flags[i] & (HAS_ACK | IS_QUEUED))
        return;
    if (pkt_reserve_packets(n, 1)) {
        snprintf(n->error, sizeof n->error, "packet tier: out of memory for a resend "
                 "(the timer retries)");
        return;
    }
    requeue(n, m, i, after);
    pkt_link_try_start(n, n->msgs[m].path[0]);
}

static void on_control(sim_engine *eng, void *ctx, uint64_t data)
{
    pkt_net *n = ctx;
    uint32_t m = (uint32_t)data, seq = (uint32_t)(data >> 32) & 0x7fffffffu;
    loss_msg *s = &n->loss->m[m];
    n->stats.events++;
    s->last_s = sim_now(eng);
    if (!(data & ACK_IS_NACK)) {
        if (n->cfg.loss != PKT_SELECTIVE) {
            if (seq > s->una)
                s->una = seq;
        } else {
            s->flags[seq] |= HAS_ACK;
            while (s->una < s->n_packets && (s->flags[s->una] & HAS_ACK))
                s->una++;
        }
    } else if (n->cfg.loss != PKT_SELECTIVE) {
        if (seq >= s->una)
            go_back(n, m, seq);
    } else {
        uint32_t after = PKT_NONE;
        resend_one(n, m, seq, &after);
    }
    unpend(n, m);
}

static void on_timer(sim_engine *eng, void *ctx, uint64_t data)
{
    pkt_net *n = ctx;
    uint32_t m = (uint32_t)data;
    loss_msg *s = &n->loss->m[m];
    double now = sim_now(eng), rto = n->cfg.rto_s;
    n->stats.events++;
    if (s->una == s->n_packets) { /* every packet acknowledged: the timer stops */
        unpend(n, m);
        return;
    }
    if (now < s->last_s + rto) { /* something happened since: due later */
        arm_timer(n, m, s->last_s + rto);
        return;
    }
    if (s->queued) { /* still waiting at its NIC: not a loss */
        arm_timer(n, m, now + rto);
        return;
    }
    n->stats.timeouts++;
    s->last_s = now;
    if (n->cfg.loss != PKT_SELECTIVE) {
        go_back(n, m, s->una);
    } else {
        uint32_t after = PKT_NONE;
        for (uint32_t i = s->una; i < n->loss->m[m].n_packets; i++)
            resend_one(n, m, i, &after);
    }
    arm_timer(n, m, now + rto);
}

int pkt_loss_net_check(const pkt_net *n, char *why, size_t why_size)
{
    const pkt_net_stats *st = &n->stats;
    const struct pkt_loss *x = n->loss;
    uint64_t live = (uint64_t)n->n_pkts - n->n_free_pkts;
    uint64_t made = x ? x->made : 0, removed = x ? x->removed : 0;
    if (made != st->packets_delivered + st->discarded + st->drops + removed + live)
        return pkt_say(why, why_size, "pkt_net_check: packets made != delivered + discarded + "
                                  "dropped + removed + live");
    double waiting = 0; /* bytes of messages not yet accepted */
    for (uint32_t m = 0; x && m < n->n_msgs && m < x->cap; m++) {
        const pkt_msg *r = &n->msgs[m];
        const loss_msg *s = &x->m[m];
        if (!r->is_live)
            continue;
        double held = 0; /* what the receiver holds, from its own state */
        for (uint32_t i = 0; i < s->n_packets; i++)
            if (n->cfg.loss != PKT_SELECTIVE ? i < s->expected : (s->flags[i] & HAS_GOT) != 0)
                held += packet_size(n, m, i);
        if (held != r->delivered || r->delivered > r->bytes || (s->is_done && held != r->bytes))
            return pkt_say(why, why_size, "pkt_net_check: a message's accepted bytes are not what "
                                      "its receiver holds");
        if (!s->is_done)
            waiting += r->bytes - r->delivered;
    }
    if (st->bytes_delivered + waiting != st->bytes_sent)
        return pkt_say(why, why_size, "pkt_net_check: bytes sent != delivered + not yet accepted");
    for (uint32_t l = 0; n->cfg.loss && l < n->g->n_links; l++) { /* lossless: packet.c */
        const pkt_link *k = &n->links[l];
        if (k->held < 0 || (!k->feeds_switch && k->held != 0))
            return pkt_say(why, why_size, "pkt_net_check: a port holds a negative byte count");
        if (k->max_held > n->cfg.buffer_bytes)
            return pkt_say(why, why_size, "pkt_net_check: a port held more than its buffer");
    }
    return 0;
}
