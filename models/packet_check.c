/* packet_check.c - pkt_net_check (packet.h): the packet tier's invariants
 * checked on a live net: every link FIFO's cached sizes and tail, the packet
 * free list, byte conservation (sent = delivered + in packets) and each
 * port's count against its flow control. Off the hot path (moved out of
 * packet.c, which keeps the handlers).
 */
#include "packet_internal.h"

#include <stdlib.h>

/* Every port's count against its flow control (lossless). */
static int ports_check(const pkt_net *n, char *why, size_t why_size)
{
    for (uint32_t l = 0; l < pkt_link_records(n); l++) {
        const pkt_link *k = &n->links[l];
        if (k->held < 0 || (!k->feeds_switch && k->held != 0))
            return pkt_say(why, why_size, "pkt_net_check: a port holds a negative byte count");
        if (n->cfg.technology == PKT_IB &&
            (k->max_held > n->cfg.buffer_bytes || k->credit_used > n->cfg.buffer_bytes ||
             k->held > k->credit_used))
            return pkt_say(why, why_size, "pkt_net_check: an IB port went over its credits");
    }
    return 0;
}

/* Every link FIFO's sizes: the head's in head_size, each packet's next's
 * in its next_size (what a finish reads instead of the packet behind). */
static int fifos_check(const pkt_net *n, char *why, size_t why_size)
{
    for (uint32_t l = 0; l < pkt_link_records(n); l++) {
        const pkt_link *k = &n->links[l];
        uint32_t steps = 0, last = PKT_NONE;
        if (k->head != PKT_NONE && k->head_size != n->pkts[k->head].size)
            return pkt_say(why, why_size, "pkt_net_check: a FIFO's head size is stale");
        for (uint32_t id = k->head; id != PKT_NONE; last = id, id = n->pkts[id].next) {
            uint32_t next = n->pkts[id].next;
            if (++steps > n->n_pkts || (next != PKT_NONE && n->pkts[id].next_size !=
                                                            n->pkts[next].size))
                return pkt_say(why, why_size, "pkt_net_check: a FIFO's next size is stale");
        }
        if (last != k->tail)
            return pkt_say(why, why_size, "pkt_net_check: a FIFO's tail is not its last packet");
    }
    return 0;
}

int pkt_net_check(const pkt_net *n, char *why, size_t why_size)
{
    if (fifos_check(n, why, why_size))
        return -1;
    if (pkt_has_rc(n)) { /* in-order receiver: its accounting, lossless ports */
        if (pkt_loss_net_check(n, why, why_size))
            return -1;
        return n->cfg.loss ? 0 : ports_check(n, why, why_size);
    }
    double in_packets = 0;
    uint32_t live = 0;
    /* live packets: every packet not on the free list (bounded by n_pkts) */
    uint8_t *is_free = calloc((size_t)n->n_pkts + 1, 1);
    if (!is_free)
        return pkt_say(why, why_size, "pkt_net_check: out of memory");
    uint32_t steps = 0;
    for (uint32_t id = n->free_pkt; id != PKT_NONE && steps <= n->n_pkts; id = n->pkts[id].next)
        is_free[id] = 1, steps++;
    for (uint32_t id = 0; id < n->n_pkts; id++)
        if (!is_free[id]) /* SHARP packets are summed and copied: not in the message bytes */
            in_packets += n->pkts[id].msg & PKT_SHARP ? 0 : n->pkts[id].size, live++;
    free(is_free);
    if (steps != n->n_free_pkts || live + n->n_free_pkts != n->n_pkts)
        return pkt_say(why, why_size, "pkt_net_check: the packet free list is broken");
    if (n->stats.bytes_delivered + in_packets != n->stats.bytes_sent)
        return pkt_say(why, why_size, "pkt_net_check: bytes sent != delivered + in flight");
    return ports_check(n, why, why_size);
}
