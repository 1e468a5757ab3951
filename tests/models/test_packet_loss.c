/* test_packet_loss.c - lossy RoCE on the packet tier (models/packet_loss.c):
 * with room for everything the lossy modes give the lossless times bit for
 * bit; one forced drop on a 2 -> 1 incast whose go-back-N resends and time
 * and selective's follow closed forms; a tail loss recovered only by the
 * RTO; go-back-N never resends fewer than selective; conservation and
 * determinism under heavy loss; bad configurations refused.
 *
 * Numbers as in test_packet.c: MTU 4096 B (components.md 5.7), 50e9 B/s
 * links (hardware.md 3.1), 500 ns per hop (hardware.md 3.5). The RTO is
 * the test's own (a GAP in the references): 100 us, far above every
 * round trip here, so only a real tail loss times out.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "engine.h"
#include "event_kinds.h"
#include "fattree.h"
#include "packet.h"
#include "routing.h"
#include "packet_rig.h"

#define MTU 4096.0
#define B 50e9
#define D 500e-9
#define TAU (MTU / B)
#define RTO 100e-6

static pkt_config config(enum pkt_loss_mode loss, double buffer)
{
    pkt_config c = {.mtu_bytes = MTU, .technology = PKT_ROCE, .buffer_bytes = buffer,
                    .xoff_bytes = buffer, .xon_bytes = buffer / 2, .hop_latency_s = D,
                    .loss = loss, .rto_s = loss == PKT_LOSSLESS ? 0 : RTO};
    return c;
}

static void check_consistent(const pkt_net *net)
{
    char why[256] = "";
    int rc = pkt_net_check(net, why, sizeof why);
    CHECK_INT_EQ(rc, 0);
    if (rc)
        fprintf(stderr, "%s\n", why);
}

/* ---- no drop: bit-identical to lossless ---- */

/* Hosts 4..11 (leaves 1, 2) send 37.5 MTU each to host 0, host 12 sends
 * to host 1: buffers of 1000 MTU never fill, so nothing drops and PFC
 * (xoff = buffer) never pauses; every lossy mode must give the lossless
 * completion times exactly (ACKs and timers move no packet). */
static void test_no_drop_identical(void)
{
    double t[3][RIG_MAX_DONE];
    for (int mode = 0; mode < 3; mode++) {
        pkt_config c = config((enum pkt_loss_mode)mode, 1000 * MTU);
        rig x;
        if (rig_open(&x, &c, B)) {
            CHECK(0);
            return;
        }
        for (uint32_t s = 4; s < 12; s++)
            CHECK_INT_EQ(pkt_send(x.net, s, 0, 37 * MTU + MTU / 2, s, on_done, &x, s), 0);
        CHECK_INT_EQ(pkt_send(x.net, 12, 1, 20 * MTU, 3, on_done, &x, 12), 0);
        sim_run(x.eng, INFINITY);
        CHECK_INT_EQ(x.n_done, 9);
        const pkt_net_stats *st = pkt_net_get_stats(x.net);
        CHECK_INT_EQ(st->drops, 0);
        CHECK_INT_EQ(st->resent_packets, 0);
        CHECK_INT_EQ(st->nacks, 0);
        CHECK_INT_EQ(st->timeouts, 0);
        CHECK_INT_EQ(st->pauses, 0);
        CHECK(st->bytes_delivered == st->bytes_sent);
        CHECK_INT_EQ(st->acks, mode ? st->packets_delivered : 0);
        check_consistent(x.net);
        for (int i = 0; i < RIG_MAX_DONE; i++)
            t[mode][i] = x.done_s[i];
        rig_close(&x);
    }
    int same = 1;
    for (int i = 0; i < RIG_MAX_DONE; i++)
        same &= t[0][i] == t[1][i] && t[0][i] == t[2][i];
    CHECK(same);
}

/* ---- one forced drop ---- */

typedef struct later {
    rig *x;
    uint32_t src, dst;
    double bytes;
} later;

static void on_later(sim_engine *eng, void *ctx, uint64_t tag)
{
    (void)eng;
    later *w = ctx;
    CHECK_INT_EQ(pkt_send(w->x->net, w->src, w->dst, w->bytes, 5, on_done, w->x, tag), 0);
}

/* 2 -> 1 under one leaf, buffer k MTU per ingress port: C (host 2) sends
 * c = k packets at t = 0, A (host 1) P packets from tau/2 (tau = MTU/B),
 * both to H (host 0). The leaf's link to H serves C0, A0, C1, A1, ... with
 * no idle slot from tau + d on, the n-th packet (from 1) finishing at
 * (n + 1) tau + d: A_i (i < c) at (2i + 3) tau + d, A_i (i >= c) at
 * (i + c + 2) tau + d. A_i arrives at (i + 1.5) tau + d (no ties with the
 * finishes) and finds held(i) = #{i' < i: A_i' not finished} packets of
 * A's port: held = c first at i = 2c - 1 (the A_i' with i' = c-1 and
 * c .. 2c-2), so A_j, j = 2k - 1, is dropped; after it the port holds
 * c - 1 and nothing more drops. The NACK(j) leaves H when A_{j+1} arrives,
 * at (j + c + 2) tau + 2d, and reaches A 2d later, while A's NIC sends
 * packet i_s = floor(3k + 1/2 + 4d/tau). Go-back-N resends j .. i_s:
 * R = i_s + 1 - j packets; selective resends A_j only (R = 1). Either way
 * the link to H never idles and carries c + P + R - 1 packets, A's last
 * arriving at (k + P + R) tau + 2d. */
static void run_forced(enum pkt_loss_mode mode, double P, unsigned k, rig *x)
{
    pkt_config c = config(mode, k * MTU);
    if (rig_open(x, &c, B)) {
        CHECK(0);
        return;
    }
    later w = {x, 1, 0, P * MTU};
    CHECK_INT_EQ(pkt_send(x->net, 2, 0, k * MTU, 9, on_done, x, 1), 0);
    CHECK(sim_schedule_at(x->eng, TAU / 2, 3, KIND_PKT_BENCH_SEND, on_later, &w, 0) != 0);
    sim_run(x->eng, INFINITY);
    CHECK_INT_EQ(x->n_done, 2);
    check_consistent(x->net);
}

static uint32_t link_from(const topo_graph *g, uint32_t host)
{
    return g->out_links[g->out_offset[host]];
}

static void test_forced_drop(void)
{
    const unsigned k = 4;
    const double P = 64;
    const double j = 2 * k - 1, is = floor(3 * k + 0.5 + 4 * D / TAU);
    CHECK(is < P - 1); /* the NACK comes while A still has packets to send */
    uint64_t resent[2];
    for (int sel = 0; sel < 2; sel++) {
        rig x;
        run_forced(sel ? PKT_SELECTIVE : PKT_GO_BACK_N, P, k, &x);
        if (!x.net)
            continue;
        const pkt_net_stats *st = pkt_net_get_stats(x.net);
        double R = sel ? 1 : is + 1 - j;
        CHECK_INT_EQ(st->drops, 1);
        CHECK_INT_EQ(pkt_net_link_stats(x.net, link_from(&x.g, 1)).drops, 1);
        CHECK_INT_EQ(st->nacks, 1);
        CHECK_INT_EQ(st->timeouts, 0);
        CHECK_INT_EQ(st->resent_packets, (uint64_t)R);
        CHECK(st->resent_bytes == R * MTU);
        CHECK_REL(x.done_s[0], (k + P + R) * TAU + 2 * D, 1e-12);
        CHECK(st->bytes_delivered == st->bytes_sent);
        CHECK_INT_EQ(st->packets_delivered, P + k);
        CHECK_INT_EQ(st->discarded, sel ? 0 : (uint64_t)(is - j)); /* A_{j+1} .. A_{i_s} */
        CHECK(pkt_net_link_stats(x.net, link_from(&x.g, 1)).max_held_bytes <= k * MTU);
        resent[sel] = st->resent_packets;
        rig_close(&x);
    }
    CHECK(resent[0] >= resent[1]);
}

/* Tail loss: P = 2k, so the dropped A_j is A's last packet and no later
 * arrival can NACK it. A's last ACK (for A_{P-2}, finishing on the link to
 * H at 3k tau + d) reaches A at 3k tau + 4d; nothing happens for RTO, A
 * times out and resends A_{P-1} alone into an idle fabric: it arrives at
 * 3k tau + 4d + RTO + 2 tau + 2d. */
static void test_tail_loss(void)
{
    const unsigned k = 4;
    for (int sel = 0; sel < 2; sel++) {
        rig x;
        run_forced(sel ? PKT_SELECTIVE : PKT_GO_BACK_N, 2 * k, k, &x);
        if (!x.net)
            continue;
        const pkt_net_stats *st = pkt_net_get_stats(x.net);
        CHECK_INT_EQ(st->drops, 1);
        CHECK_INT_EQ(st->nacks, 0);
        CHECK_INT_EQ(st->timeouts, 1);
        CHECK_INT_EQ(st->resent_packets, 1);
        CHECK(x.done_s[0] >= RTO);
        CHECK_REL(x.done_s[0], 3 * k * TAU + 4 * D + RTO + 2 * TAU + 2 * D, 1e-12);
        CHECK(st->bytes_delivered == st->bytes_sent);
        rig_close(&x);
    }
}

/* ---- heavy loss: 12 -> 1 across leaves ---- */

typedef struct heavy {
    double time[RIG_MAX_DONE];
    uint64_t digest, drops, resent, nacks, timeouts, events;
    double bytes_delivered, bytes_sent;
} heavy;

static int run_heavy(enum pkt_loss_mode mode, heavy *h)
{
    pkt_config c = config(mode, 6 * MTU);
    rig x;
    if (rig_open(&x, &c, B))
        return -1;
    for (uint32_t s = 4; s < 16; s++)
        CHECK_INT_EQ(pkt_send(x.net, s, 0, 40 * MTU + 100, s, on_done, &x, s), 0);
    sim_run(x.eng, INFINITY);
    CHECK_INT_EQ(x.n_done, 12);
    check_consistent(x.net);
    const pkt_net_stats *st = pkt_net_get_stats(x.net);
    for (int i = 0; i < RIG_MAX_DONE; i++)
        h->time[i] = x.done_s[i];
    h->digest = sim_digest(x.eng);
    h->drops = st->drops;
    h->resent = st->resent_packets;
    h->nacks = st->nacks;
    h->timeouts = st->timeouts;
    h->events = st->events;
    h->bytes_delivered = st->bytes_delivered;
    h->bytes_sent = st->bytes_sent;
    uint64_t link_drops = 0;
    for (uint32_t l = 0; l < x.g.n_links; l++) {
        pkt_link_stats ls = pkt_net_link_stats(x.net, l);
        link_drops += ls.drops;
        CHECK(ls.max_held_bytes <= 6 * MTU);
    }
    CHECK_INT_EQ(link_drops, st->drops);
    rig_close(&x);
    return 0;
}

static void test_heavy_loss(void)
{
    heavy g1, g2, s1;
    if (run_heavy(PKT_GO_BACK_N, &g1) || run_heavy(PKT_GO_BACK_N, &g2) ||
        run_heavy(PKT_SELECTIVE, &s1)) {
        CHECK(0);
        return;
    }
    CHECK(g1.drops > 0 && s1.drops > 0);
    CHECK(g1.bytes_delivered == g1.bytes_sent && s1.bytes_delivered == s1.bytes_sent);
    CHECK(g1.resent >= s1.resent);
    CHECK(s1.resent >= s1.drops); /* every dropped packet sent again at least once */
    CHECK(g1.resent >= g1.drops);
    /* determinism: the same run twice */
    CHECK(g1.digest == g2.digest && g1.digest != 0);
    CHECK_INT_EQ(g1.events, g2.events);
    int same = 1;
    for (int i = 0; i < RIG_MAX_DONE; i++)
        same &= g1.time[i] == g2.time[i];
    CHECK(same);
}

/* ---- bad configurations ---- */

static void test_bad_config(void)
{
    char why[256];
    pkt_config c = config(PKT_GO_BACK_N, 64 * MTU);
    CHECK_INT_EQ(pkt_config_check(&c, why, sizeof why), 0);
    c.technology = PKT_IB;
    CHECK_INT_EQ(pkt_config_check(&c, why, sizeof why), -1);
    CHECK_CONTAINS(why, "PKT_ROCE");
    const double bad_rto[] = {0, -1e-6, NAN, INFINITY};
    for (int i = 0; i < 4; i++) {
        c = config(PKT_SELECTIVE, 64 * MTU);
        c.rto_s = bad_rto[i];
        CHECK_INT_EQ(pkt_config_check(&c, why, sizeof why), -1);
        CHECK_CONTAINS(why, "rto_s");
    }
    c = config(PKT_LOSSLESS, 64 * MTU);
    c.rto_s = RTO; /* an RTO without a lossy mode: a mistake */
    CHECK_INT_EQ(pkt_config_check(&c, why, sizeof why), -1);
    c = config(PKT_GO_BACK_N, 64 * MTU);
    c.loss = (enum pkt_loss_mode)3;
    CHECK_INT_EQ(pkt_config_check(&c, why, sizeof why), -1);
    c = config(PKT_GO_BACK_N, 64 * MTU);
    c.dcqcn.is_enabled = 1;
    CHECK_INT_EQ(pkt_config_check(&c, why, sizeof why), -1);
    CHECK_CONTAINS(why, "DCQCN");
    /* PFC thresholds are ignored in a lossy mode */
    c = config(PKT_GO_BACK_N, 64 * MTU);
    c.xoff_bytes = c.xon_bytes = 0;
    CHECK_INT_EQ(pkt_config_check(&c, why, sizeof why), 0);
    /* a stalled NIC is not modelled in a lossy mode */
    rig x;
    if (rig_open(&x, &c, B) == 0) {
        CHECK_INT_EQ(pkt_host_stall(x.net, 0, 0, 1e-6), -1);
        rig_close(&x);
    }
}

int main(void)
{
    test_no_drop_identical();
    test_forced_drop();
    test_tail_loss();
    test_heavy_loss();
    test_bad_config();
    return check_report();
}
