/* test_packet_ack.c - the ACK's delay on the packet tier (packet_loss.c):
 * an ACK (or NACK) reaches the sender n_min x d after the receiver sends
 * it, n_min the hop count of the message's minimal path, whatever route
 * its packets took (docs/fabric.md "The ACK's delay").
 *
 * Closed form: one message of one packet of S bytes, alone on the p = 2,
 * a = 4, h = 2 Dragonfly (links of B = 50 GB/s, d = 500 ns), IB credits,
 * the in-order receiver (go-back-N on the lossless fabric: it ACKs every
 * packet it accepts). The packet crosses L links store and forward and is
 * delivered at t_rx = L (S / B + d); its ACK is one event at
 * t_rx + n_min d:
 *  - minimal routing (is_adaptive 3): L = n_min (the minimal run's
 *    packet-hops);
 *  - Valiant routing (is_adaptive 2) to another group: L > n_min, the ACK
 *    still at t_rx + n_min d, and no event at t_rx + L d (where an ACK
 *    following the Valiant path back would be);
 * for a pair in another group (n_min = 5) and a pair on one router
 * (n_min = 2, no detour). Windows of +-1e-9 relative around each time
 * count the tier's events (sim_run to a horizon and on).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dragonfly.h"
#include "engine.h"
#include "packet.h"
#include "routing.h"
#include "check.h"

#define MTU 4096.0
#define B 50e9
#define D 500e-9
#define RTO 1.0
#define S 1000.0

typedef struct ack_out {
    double t_rx;
    uint64_t hops, acks, valiant;
    uint64_t in_window[2]; /* events within (t - dt, t + dt] of the probe times */
} ack_out;

typedef struct rx_log {
    sim_engine *eng;
    double t;
} rx_log;

static void on_rx(void *ctx, uint64_t tag)
{
    (void)tag;
    rx_log *x = ctx;
    x->t = sim_now(x->eng);
}

/* one message src -> dst of S bytes at t = 0 under routing mode `mode`;
 * counts the tier's events in a window of +-1e-9 relative around each
 * probe time (ascending; 0: none) */
static int run(int mode, uint32_t src, uint32_t dst, const double probe[2], ack_out *o)
{
    char why[256];
    topo_graph g;
    topo_dragonfly_config dc = {.p = 2, .a = 4, .h = 2, .host_bytes_per_s = B,
                                .local_bytes_per_s = B, .global_bytes_per_s = B};
    if (topo_dragonfly(&dc, &g, why, sizeof why))
        return -1;
    topo_route_config rc = {TOPO_BALANCE_ECMP, TOPO_PATH_MINIMAL, 1, 5};
    topo_router *r = topo_router_create(&g, &rc, why, sizeof why);
    sim_engine *eng = sim_engine_create();
    pkt_config c = {.mtu_bytes = MTU, .technology = PKT_IB, .buffer_bytes = 16 * MTU,
                    .hop_latency_s = D, .is_adaptive = mode, .reorder = PKT_RX_IN_ORDER,
                    .rto_s = RTO};
    pkt_net *net = r && eng ? pkt_net_create(eng, &g, r, &c, why, sizeof why) : NULL;
    int rc_out = -1;
    memset(o, 0, sizeof *o);
    rx_log x = {eng, -1};
    if (!net) {
        fprintf(stderr, "pkt_net_create: %s\n", why);
        goto out;
    }
    if (pkt_send(net, src, dst, S, 1, on_rx, &x, 0)) {
        fprintf(stderr, "pkt_send: %s\n", pkt_net_error(net));
        goto out;
    }
    const pkt_net_stats *st = pkt_net_get_stats(net);
    for (int i = 0; i < 2; i++)
        if (probe[i] > 0) {
            sim_run(eng, probe[i] * (1 - 1e-9));
            uint64_t e0 = st->events;
            sim_run(eng, probe[i] * (1 + 1e-9));
            o->in_window[i] = st->events - e0;
        }
    sim_run(eng, INFINITY);
    o->t_rx = x.t;
    o->hops = st->packet_hops;
    o->acks = st->acks;
    o->valiant = st->valiant_packets;
    rc_out = pkt_net_check(net, why, sizeof why) || st->messages_delivered != 1 ? -1 : 0;
out:
    pkt_net_destroy(net);
    sim_engine_destroy(eng);
    topo_router_destroy(r);
    topo_graph_fini(&g);
    return rc_out;
}

static int close_to(double a, double b) { return fabs(a - b) <= 1e-12 * fabs(b); }

int main(void)
{
    /* host 0 (group 0) -> host 36 (group 4); host 0 -> host 1 (one router) */
    const uint32_t pairs[2][2] = {{0, 36}, {0, 1}};
    const double none[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        uint32_t src = pairs[k][0], dst = pairs[k][1];
        ack_out mn, va;
        CHECK(run(3, src, dst, none, &mn) == 0);
        CHECK(run(2, src, dst, none, &va) == 0);
        /* minimal routing: the packet takes the minimal path, n_min links */
        double n_min = (double)mn.hops, L = (double)va.hops, hop = S / B + D;
        CHECK(n_min >= 2 && n_min <= 5);
        CHECK(mn.acks == 1 && mn.valiant == 0 && va.acks == 1);
        CHECK(close_to(mn.t_rx, n_min * hop));
        CHECK(close_to(va.t_rx, L * hop));
        /* the ACK: one event n_min d after delivery; none L d after (Valiant) */
        const double p_min[2] = {n_min * hop + n_min * D, 0};
        const double p_va[2] = {L * hop + n_min * D, L * hop + L * D};
        ack_out mw, vw;
        CHECK(run(3, src, dst, p_min, &mw) == 0);
        CHECK(run(2, src, dst, p_va, &vw) == 0);
        printf("%u -> %u: n_min %.0f, Valiant path %.0f links (%llu Valiant packets); ACK "
               "heard at t_rx + n_min d: minimal %llu event, Valiant %llu event, at t_rx + L d "
               "%llu\n", src, dst, n_min, L, (unsigned long long)va.valiant,
               (unsigned long long)mw.in_window[0], (unsigned long long)vw.in_window[0],
               (unsigned long long)vw.in_window[1]);
        CHECK(mw.in_window[0] == 1 && vw.in_window[0] == 1);
        if (k == 0) { /* another group: the detour is longer, and the ACK does not take it */
            CHECK(va.valiant == 1 && va.hops > mn.hops);
            CHECK(vw.in_window[1] == 0);
        } else { /* one router: no detour */
            CHECK(va.hops == mn.hops);
        }
    }
    return check_report();
}
