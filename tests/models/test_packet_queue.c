/* test_packet_queue.c - the packet tier's own event queue (models/packet_queue.c)
 * against the engine's: the same scenarios run once with the tier's events
 * in its delay lanes (the default) and once with every event scheduled on
 * the engine one by one (the implementation before the lanes, kept as the
 * reference path: pkt_net_use_engine_queue). Every message's completion
 * time must be bit-identical, and so must packet-hops, pauses, ECN marks,
 * CNPs, the most bytes held and the tier's event count, and so must the
 * engine's digest and fired count (the pump fires the tier's events inline,
 * sim_fire_inline, when nothing else is due first).
 *
 * Mixed runs: the tier shares the engine with a foreign event stream (ticks
 * at times no packet event takes, some of them rescheduling, a priority of
 * their own), a poll function every 7 fired events, and a run stopped at a
 * horizon and resumed: the same times, digest, fired count, ticks and polls
 * as on the engine path (inlining must stop at every foreign event, poll
 * point and horizon). At the horizon pkt_net_check passes and catches a
 * stale FIFO head size or next size (pkt_packet.next_size).
 *
 * Scenarios (k = 4 fat-tree, 16 hosts, ECMP): many-to-many with uneven
 * message sizes (short last packets), under IB with the bench's buffer and
 * with a 2-MTU buffer (credit-bound), under RoCE with low PFC thresholds
 * (pauses), RoCE with DCQCN, per-packet adaptive routing, a zero hop
 * latency, and messages sent from completion callbacks. Numbers as in
 * test_packet.c (MTU 4096 B, components.md 5.7; 50e9 B/s, hardware.md 3.1;
 * 500 ns per hop, hardware.md 3.5) and test_packet_dcqcn.c (DCQCN).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "engine.h"
#include "fattree.h"
#include "packet_internal.h"
#include "routing.h"

#define MTU 4096.0
#define B 50e9
#define D 500e-9
#define BDP (B * D)
#define XON (2 * BDP + 2 * MTU)
#define XOFF (XON + 3072)
#define BUFFER (XOFF + MTU + 2 * BDP + 2 * MTU)
#define FANOUT 4u
#define MAX_MSGS 64u

typedef struct result {
    double done_s[MAX_MSGS]; /* by tag */
    uint32_t n_done;
    uint64_t hops, pauses, marks, cnps, events;
    double max_held, end_s;
    uint64_t digest, fired, ticks, polls;
} result;

typedef struct rig {
    pkt_net *net;
    sim_engine *eng;
    result *out;
    int is_chained;
    uint32_t n_hosts;
} rig;

/* mixed runs: a foreign event every TICK_S from TICK0_S (dyadic-free
 * times, no packet event's), half of them scheduling a second one */
#define TICK0_S 1.234567e-7
#define TICK_S 3.3333331e-7
#define N_TICKS 40u
#define KIND_TICK 900u

static void on_tick(sim_engine *eng, void *ctx, uint64_t data)
{
    result *out = ctx;
    out->ticks++;
    if (data % 2 == 0 && data < 1000)
        sim_schedule_in(eng, TICK_S / 3, 7, KIND_TICK, on_tick, out, data + 1001);
}

static int on_poll(sim_engine *eng, void *ctx)
{
    (void)eng;
    ((result *)ctx)->polls++;
    return 0;
}

static void on_done(void *ctx, uint64_t tag)
{
    rig *x = ctx;
    if (tag < MAX_MSGS)
        x->out->done_s[tag] = sim_now(x->eng);
    x->out->n_done++;
    /* chained: the first half of the tags answer with a message back */
    if (x->is_chained && tag < MAX_MSGS / 2) {
        uint32_t src = (uint32_t)(tag / FANOUT), j = (uint32_t)(tag % FANOUT);
        uint32_t dst = (src + 1 + j * (x->n_hosts / FANOUT)) % x->n_hosts;
        CHECK_INT_EQ(pkt_send(x->net, dst, src, 3 * MTU + 17, tag ^ 0x55, on_done, x,
                              tag + MAX_MSGS / 2),
                     0);
    }
}

/* Mid-run, some FIFO holds two packets: pkt_net_check passes, and fails on
 * a stale head size or next size (what a finish reads instead of the
 * packet behind the one it sends), then passes again once restored. */
static void fifo_sizes_checked(pkt_net *net)
{
    char why[256];
    CHECK_INT_EQ(pkt_net_check(net, why, sizeof why), 0);
    uint32_t l = 0, nl = pkt_net_graph(net)->n_links;
    while (l < nl && (net->links[l].head == PKT_NONE ||
                      net->pkts[net->links[l].head].next == PKT_NONE))
        l++;
    CHECK(l < nl);
    if (l == nl)
        return;
    pkt_link *k = &net->links[l];
    pkt_packet *p = &net->pkts[k->head];
    CHECK(p->next_size == net->pkts[p->next].size);
    p->next_size ^= 1;
    CHECK_INT_EQ(pkt_net_check(net, why, sizeof why), -1);
    CHECK(strstr(why, "next size") != NULL);
    p->next_size ^= 1;
    k->head_size ^= 1;
    CHECK_INT_EQ(pkt_net_check(net, why, sizeof why), -1);
    CHECK(strstr(why, "head size") != NULL);
    k->head_size ^= 1;
    CHECK_INT_EQ(pkt_net_check(net, why, sizeof why), 0);
}

static int run(const pkt_config *c, int is_chained, int use_engine, int is_mixed, result *out)
{
    char why[256];
    topo_graph g;
    memset(out, 0, sizeof *out);
    if (topo_fattree_kary(4, B, &g, why, sizeof why))
        return -1;
    topo_route_config rc = {TOPO_BALANCE_ECMP, TOPO_PATH_MINIMAL, 1, 3};
    topo_router *r = topo_router_create(&g, &rc, why, sizeof why);
    sim_engine *eng = sim_engine_create();
    pkt_net *net = r && eng ? pkt_net_create(eng, &g, r, c, why, sizeof why) : NULL;
    if (!net) {
        fprintf(stderr, "test_packet_queue: %s\n", why);
        return -1;
    }
    pkt_net_use_engine_queue(net, use_engine);
    rig x = {net, eng, out, is_chained, g.n_hosts};
    for (uint32_t h = 0; h < g.n_hosts; h++)
        for (uint32_t j = 0; j < FANOUT; j++) {
            uint32_t dst = (h + 1 + j * (g.n_hosts / FANOUT)) % g.n_hosts;
            uint64_t tag = (uint64_t)h * FANOUT + j;
            if (is_chained && tag >= MAX_MSGS / 2)
                continue;
            /* 5 to 24 MTU, most with a short last packet */
            double bytes = (5 + (h * 7 + j * 3) % 20) * MTU + (h * 131 + j * 977) % 4096;
            CHECK_INT_EQ(pkt_send(net, h, dst, bytes, tag, on_done, &x, tag), 0);
        }
    if (is_mixed) {
        for (uint32_t i = 0; i < N_TICKS; i++)
            CHECK(sim_schedule_at(eng, TICK0_S + i * TICK_S, 7, KIND_TICK, on_tick, out, i) != 0);
        sim_engine_set_poll(eng, on_poll, out, 7);
        CHECK_INT_EQ(sim_run(eng, 2.5e-6), SIM_RUN_UNTIL); /* a horizon mid-run */
        CHECK(sim_now(eng) <= 2.5e-6);
        fifo_sizes_checked(net);
    }
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_EMPTY);
    out->digest = sim_digest(eng);
    out->fired = sim_events_fired(eng);
    const pkt_net_stats *st = pkt_net_get_stats(net);
    CHECK_INT_EQ(pkt_net_check(net, why, sizeof why), 0);
    CHECK(st->messages_delivered == st->messages_sent);
    out->hops = st->packet_hops;
    out->pauses = st->pauses;
    out->marks = st->ecn_marks;
    out->cnps = st->cnps;
    out->events = st->events;
    out->max_held = st->max_held_bytes;
    out->end_s = sim_now(eng);
    pkt_net_destroy(net);
    sim_engine_destroy(eng);
    topo_router_destroy(r);
    topo_graph_fini(&g);
    return 0;
}

/* FNV-1a over the completion times' bits, in tag order */
static uint64_t times_hash(const result *a)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint32_t i = 0; i < MAX_MSGS; i++) {
        uint64_t bits;
        memcpy(&bits, &a->done_s[i], sizeof bits);
        h = (h ^ bits) * 0x100000001b3ull;
    }
    return h;
}

static void compare(const char *name, const pkt_config *c, int is_chained, int is_mixed)
{
    result *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    CHECK(a && b);
    CHECK_INT_EQ(run(c, is_chained, 0, is_mixed, a), 0);
    CHECK_INT_EQ(run(c, is_chained, 1, is_mixed, b), 0);
    uint32_t n_same = 0;
    for (uint32_t i = 0; i < MAX_MSGS; i++)
        n_same += memcmp(&a->done_s[i], &b->done_s[i], sizeof a->done_s[i]) == 0;
    printf("%-10s done %u, end %a s, times hash %016llx, hops %llu, pauses %llu, marks %llu, "
           "cnps %llu, events %llu, max held %.0f B; engine path: %u of %u times equal\n",
           name, a->n_done, a->end_s, (unsigned long long)times_hash(a),
           (unsigned long long)a->hops, (unsigned long long)a->pauses,
           (unsigned long long)a->marks, (unsigned long long)a->cnps,
           (unsigned long long)a->events, a->max_held, n_same, MAX_MSGS);
    CHECK(a->n_done == MAX_MSGS && b->n_done == MAX_MSGS);
    CHECK(n_same == MAX_MSGS);
    CHECK(memcmp(&a->end_s, &b->end_s, sizeof a->end_s) == 0);
    CHECK(a->hops == b->hops && a->pauses == b->pauses && a->marks == b->marks);
    CHECK(a->cnps == b->cnps && a->events == b->events && a->max_held == b->max_held);
    printf("%-10s engine digest %016llx, %llu fired, %llu ticks, %llu polls; engine path: "
           "%s\n", "", (unsigned long long)a->digest, (unsigned long long)a->fired,
           (unsigned long long)a->ticks, (unsigned long long)a->polls,
           a->digest == b->digest && a->fired == b->fired ? "equal" : "DIFFERENT");
    CHECK(a->digest == b->digest && a->fired == b->fired);
    CHECK(a->ticks == b->ticks && a->polls == b->polls);
    CHECK(!is_mixed || a->fired / 7 == a->polls); /* a poll at every 7th event: none skipped */
    CHECK(!is_mixed || a->ticks == N_TICKS + N_TICKS / 2);
    free(a);
    free(b);
}

int main(void)
{
    pkt_config ib = {.mtu_bytes = MTU, .technology = PKT_IB, .buffer_bytes = BUFFER,
                     .xoff_bytes = XOFF, .xon_bytes = XON, .hop_latency_s = D};
    compare("ib", &ib, 0, 0);
    pkt_config ib2 = ib;
    ib2.buffer_bytes = 2 * MTU;
    compare("ib-2mtu", &ib2, 0, 0);
    pkt_config roce = {.mtu_bytes = MTU, .technology = PKT_ROCE, .buffer_bytes = BUFFER,
                       .xoff_bytes = 4 * MTU + 3072, .xon_bytes = 4 * MTU, .hop_latency_s = D};
    compare("roce", &roce, 0, 0);
    CHECK(roce.xoff_bytes < BUFFER);
    pkt_config dcqcn = roce;
    dcqcn.dcqcn = (pkt_dcqcn_config){1,   2 * MTU, 8 * MTU, 0.2, 7,  5e-6, 1.0 / 256, 1.0,
                                     5e-6, 5.5e-6, 1e5,     1,   1e8, 1e9, 1.25e8};
    compare("dcqcn", &dcqcn, 0, 0);
    pkt_config ar = ib;
    ar.is_adaptive = 1;
    compare("ib-ar", &ar, 0, 0);
    pkt_config ar_roce = roce;
    ar_roce.is_adaptive = 1;
    compare("roce-ar", &ar_roce, 0, 0);
    pkt_config d0 = ib2;
    d0.hop_latency_s = 0;
    compare("ib-d0", &d0, 0, 0);
    pkt_config r0 = roce;
    r0.hop_latency_s = 0;
    compare("roce-d0", &r0, 0, 0);
    compare("ib-chain", &ib, 1, 0);
    compare("roce-chain", &roce, 1, 0);
    compare("dcqcn-chain", &dcqcn, 1, 0);
    compare("ib-mixed", &ib, 0, 1);
    compare("roce-mixed", &roce, 1, 1);
    compare("dcqcn-mixed", &dcqcn, 1, 1);
    return check_report();
}
