/* packet_rx.c - host NIC ingress buffers and stalled receivers for the
 * packet tier (pkt_host_stall, packet.h): a host that stops draining holds
 * what arrives in its NIC buffer, which back-pressures the leaf like a
 * switch port (credits under IB, PAUSE/RESUME under RoCE PFC).
 *
 * Off the hot path: packet.c calls pkt_rx_arrive only when net->rx is set
 * (some host was given a stall), and only for packets at their destination.
 * Invariant: a host's held packets form one FIFO (ids linked by next, the
 * link each came in over in in_link); its bytes are counted in `held` of
 * that link, so pkt_net_check and the IB credit bound cover them.
 */
#include "packet_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "event_kinds.h"

struct pkt_rx {
    double *start_s, *end_s; /* per node: the stall window; end_s <= start_s: none */
    uint32_t *head, *tail;   /* per node: packets held, in arrival order */
};

void pkt_rx_free(struct pkt_rx *x)
{
    if (!x)
        return;
    free(x->start_s);
    free(x->end_s);
    free(x->head);
    free(x->tail);
    free(x);
}

static int fail(pkt_net *n, const char *msg)
{
    snprintf(n->error, sizeof n->error, "%s", msg);
    return -1;
}

/* The stall of host h is over: hand every held packet to the host, in
 * arrival order, and free its bytes at the port (credit or RESUME d later).
 * A delivery may finish a message whose callback sends: ids only. */
static void on_stall_end(sim_engine *eng, void *ctx, uint64_t h)
{
    pkt_net *n = ctx;
    n->stats.events++;
    if (sim_now(eng) > n->series_edge) /* on the engine, not the tier's queue */
        pkt_series_advance(n->series, sim_now(eng));
    while (n->rx->head[h] != PKT_NONE) {
        uint32_t id = n->rx->head[h];
        uint32_t l = n->pkts[id].in_link, size = n->pkts[id].size;
        n->rx->head[h] = n->pkts[id].next;
        pkt_port_release(n, l, size);
        pkt_deliver(n, id);
    }
    n->rx->tail[h] = PKT_NONE;
}

int pkt_host_stall(pkt_net *n, uint32_t host, double start_s, double end_s)
{
    const topo_graph *g = n->g;
    if (host >= g->n_nodes || g->node_kind[host] != TOPO_HOST)
        return fail(n, "pkt_host_stall: not a host");
    if (!isfinite(start_s) || !isfinite(end_s) || !(start_s >= sim_now(n->eng)) ||
        !(end_s > start_s))
        return fail(n, "pkt_host_stall: the window needs now <= start_s < end_s, finite");
    if (n->stats.messages_sent)
        return fail(n, "pkt_host_stall: call it before the first pkt_send");
    if (n->cfg.loss)
        return fail(n, "pkt_host_stall: a stalled NIC is not modelled in a lossy mode");
    if (n->df)
        return fail(n, "pkt_host_stall: not modelled with per-packet routing on a Dragonfly");
    if (n->cfg.reorder == PKT_RX_IN_ORDER)
        return fail(n, "pkt_host_stall: a stalled NIC is not modelled with an in-order receiver");
    if (!n->rx) {
        struct pkt_rx *x = calloc(1, sizeof *x);
        size_t nn = g->n_nodes;
        if (!x || !(x->start_s = calloc(nn, sizeof *x->start_s)) ||
            !(x->end_s = calloc(nn, sizeof *x->end_s)) ||
            !(x->head = malloc(nn * sizeof *x->head)) ||
            !(x->tail = malloc(nn * sizeof *x->tail))) {
            pkt_rx_free(x);
            return fail(n, "pkt_host_stall: out of memory");
        }
        for (size_t v = 0; v < nn; v++)
            x->head[v] = x->tail[v] = PKT_NONE;
        n->rx = x;
    }
    if (n->rx->end_s[host] > n->rx->start_s[host])
        return fail(n, "pkt_host_stall: the host has a stall window already");
    if (!sim_schedule_at(n->eng, end_s, PRIO_CONTROL, KIND_PKT_STALL_END, on_stall_end, n, host))
        return fail(n, "pkt_host_stall: out of memory");
    n->rx->start_s[host] = start_s;
    n->rx->end_s[host] = end_s;
    for (uint32_t l = 0; l < g->n_links; l++) /* the NIC's ports: buffered, flow-controlled */
        if (g->link_dst[l] == host)
            n->links[l].feeds_switch = 1;
    return 0;
}

int pkt_rx_arrive(pkt_net *n, uint32_t l, uint32_t id)
{
    if (!n->links[l].feeds_switch)
        return 0; /* a host with no stall: consumed at once */
    struct pkt_rx *x = n->rx;
    uint32_t h = n->g->link_dst[l], size = n->pkts[id].size;
    double now = sim_now(n->eng);
    pkt_port_hold(n, l, size);
    if (x->head[h] == PKT_NONE && !(now >= x->start_s[h] && now < x->end_s[h])) {
        pkt_port_release(n, l, size); /* passed on at once: credit back d later */
        return 0;
    }
    n->pkts[id].in_link = l;
    n->pkts[id].next = PKT_NONE;
    if (x->tail[h] == PKT_NONE)
        x->head[h] = id;
    else
        n->pkts[x->tail[h]].next = id;
    x->tail[h] = id;
    return 1;
}
