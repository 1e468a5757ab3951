/* bench_packet.c - speed of the packet tier (models/packet.h) on one core.
 *
 * Many-to-many on a k-ary fat-tree (k = 8: 128 hosts; k = 16: 1,024): every
 * host h sends one message of M bytes to each of the hosts h + 1 + j H / F
 * (mod H) for j < F (F = 8 destinations, spread over the pods so most paths
 * take 6 links), all at t = 0, ECMP routing; once under InfiniBand credits
 * and once under RoCE PFC. Link and flow-control numbers as in
 * tests/models/test_packet.c: MTU 4096 B (components.md 5.7), 50e9 B/s
 * links (hardware.md 3.1), 500 ns per hop (hardware.md 3.5), PFC
 * thresholds and buffer from components.md 5.2's headroom rule.
 * Prints one line per run: "bench_packet many2many k=.. tech=.. hosts=..
 * messages=.. packet_hops=.. events=.. pauses=.. sim_s=.. wall_s=..
 * packet_hops_per_s=.. target_packet_hops_per_s=1e7 meets_target=0|1"
 * (the target, >= 10 M packet-hops/s per core; nothing fails on it).
 * cpu_s and packet_hops_per_cpu_s: the same over the process's CPU time
 * (steadier on a shared machine). --engine: every event scheduled on the
 * engine one by one (the reference path, pkt_net_use_engine_queue), for
 * before/after figures in one binary. --case ib8|ib16|roce8|roce16: that
 * case alone (for a profiler).
 * Exit status non-zero only when something is functionally wrong (a build,
 * send or consistency check fails). --smoke: k = 4, small messages (for
 * ctest; the figures mean nothing).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "fattree.h"
#include "packet.h"
#include "packet_internal.h" /* pkt_net_use_engine_queue: --engine */
#include "routing.h"

#define MTU 4096.0
#define B 50e9
#define D 500e-9
#define BDP (B * D)
#define XON (2 * BDP + 2 * MTU)
#define XOFF (XON + 3072)
#define BUFFER (XOFF + MTU + 2 * BDP + 2 * MTU)
#define FANOUT 8u
#define TARGET_HOPS_PER_S 1e7

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int use_engine; /* --engine: every event on the engine (the reference path) */

static int run(unsigned k, double msg_bytes, enum pkt_technology tech)
{
    char why[256];
    topo_graph g;
    if (topo_fattree_kary(k, B, &g, why, sizeof why)) {
        fprintf(stderr, "bench_packet: %s\n", why);
        return 1;
    }
    topo_route_config rc = {TOPO_BALANCE_ECMP, TOPO_PATH_MINIMAL, 1, 3};
    topo_router *r = topo_router_create(&g, &rc, why, sizeof why);
    sim_engine *eng = sim_engine_create();
    pkt_config c = {.mtu_bytes = MTU, .technology = tech, .buffer_bytes = BUFFER,
                    .xoff_bytes = XOFF, .xon_bytes = XON, .hop_latency_s = D};
    pkt_net *net = r && eng ? pkt_net_create(eng, &g, r, &c, why, sizeof why) : NULL;
    int rc_out = 1;
    if (!net) {
        fprintf(stderr, "bench_packet: %s\n", why);
        goto out;
    }
    pkt_net_use_engine_queue(net, use_engine);
    uint32_t H = g.n_hosts;
    double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    for (uint32_t h = 0; h < H; h++)
        for (uint32_t j = 0; j < FANOUT; j++) {
            uint32_t dst = (h + 1 + j * (H / FANOUT)) % H;
            if (pkt_send(net, h, dst, msg_bytes, (uint64_t)h * FANOUT + j, NULL, NULL, 0)) {
                fprintf(stderr, "bench_packet: %s\n", pkt_net_error(net));
                goto out;
            }
        }
    if (sim_run(eng, INFINITY) != SIM_RUN_EMPTY) {
        fprintf(stderr, "bench_packet: %s\n", sim_engine_failure(eng));
        goto out;
    }
    double wall = clock_s(CLOCK_MONOTONIC) - t0;
    double cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    const pkt_net_stats *st = pkt_net_get_stats(net);
    if (pkt_net_check(net, why, sizeof why) || st->messages_delivered != st->messages_sent) {
        fprintf(stderr, "bench_packet: %s\n", why);
        goto out;
    }
    double rate = st->packet_hops / wall;
    printf("bench_packet many2many queue=%s k=%u tech=%s hosts=%u messages=%llu msg_bytes=%.0f "
           "packet_hops=%llu events=%llu pauses=%llu max_held_bytes=%.0f sim_s=%.6g wall_s=%.4f "
           "cpu_s=%.4f packet_hops_per_s=%.4g packet_hops_per_cpu_s=%.4g target_packet_hops_per_s=%.0e meets_target=%d\n",
           use_engine ? "engine" : "lanes", k, tech == PKT_IB ? "ib" : "roce", H, (unsigned long long)st->messages_sent, msg_bytes,
           (unsigned long long)st->packet_hops, (unsigned long long)st->events,
           (unsigned long long)st->pauses, st->max_held_bytes, sim_now(eng), wall, cpu, rate, st->packet_hops / cpu,
           TARGET_HOPS_PER_S, rate >= TARGET_HOPS_PER_S);
    rc_out = 0;
out:
    pkt_net_destroy(net);
    sim_engine_destroy(eng);
    topo_router_destroy(r);
    topo_graph_fini(&g);
    return rc_out;
}

int main(int argc, char **argv)
{
    int smoke = 0;
    const char *only = NULL; /* --case: one of "ib8", "ib16", "roce8", "roce16" */
    for (int i = 1; i < argc; i++) {
        smoke |= strcmp(argv[i], "--smoke") == 0;
        use_engine |= strcmp(argv[i], "--engine") == 0;
        if (strcmp(argv[i], "--case") == 0 && i + 1 < argc)
            only = argv[++i];
    }
    int bad = 0;
    for (int t = 0; t < 2; t++) {
        enum pkt_technology tech = t ? PKT_ROCE : PKT_IB;
        for (unsigned k = 8; k <= 16 && !smoke; k += 8) {
            char name[16];
            snprintf(name, sizeof name, "%s%u", t ? "roce" : "ib", k);
            if (!only || strcmp(only, name) == 0)
                bad |= run(k, (k == 8 ? 256 : 64) * MTU, tech);
        }
        if (smoke)
            bad |= run(4, 16 * MTU, tech);
    }
    return bad;
}
