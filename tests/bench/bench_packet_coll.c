/* bench_packet_coll.c - a collective on the packet tier at scale
 * (models/packet_coll.h): ring all-reduce over every host of a k-ary
 * fat-tree (k = 16: 1,024 hosts), ranks in host order, one channel, the
 * plan's NCCL latencies (nc_fabric_defaults), ECMP; InfiniBand credits by
 * default, --roce for RoCE PFC. Link and flow-control numbers as
 * bench_packet.c: MTU 4096 B (components.md 5.7), 50e9 B/s links
 * (hardware.md 3.1), 500 ns a hop (hardware.md 3.5), PFC thresholds and
 * buffer by components.md 5.2's headroom rule.
 * Prints one line: "bench_packet_coll allreduce k=.. tech=.. hosts=..
 * bytes=.. messages=.. packet_hops=.. events=.. pauses=.. sim_s=..
 * flow_sim_s=.. ratio=.. wall_s=.. cpu_s=.. packet_hops_per_s=..
 * max_rss_kib=.." (wall_s: the packet run; cpu_s and max_rss_kib:
 * getrusage, the whole process, the flow run included; on a shared machine
 * cpu_s is the figure to compare). Usage: bench_packet_coll [--smoke] [--k K] [--bytes B]
 * [--roce]; default k = 16, 64 MiB (the benchmark). Exit status
 * non-zero only when something is functionally wrong. --smoke: k = 4,
 * 1 MiB (for ctest; the figures mean nothing).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "fattree.h"
#include "netcoll.h"
#include "packet.h"
#include "packet_coll.h"
#include "routing.h"

#define MTU 4096.0
#define B 50e9
#define D 500e-9
#define BDP (B * D)
#define XON (2 * BDP + 2 * MTU)
#define XOFF (XON + 3072)
#define BUFFER (XOFF + MTU + 2 * BDP + 2 * MTU)

static int run(unsigned k, double bytes, enum pkt_technology tech)
{
    char why[256];
    topo_graph g;
    if (topo_fattree_kary(k, B, &g, why, sizeof why)) {
        fprintf(stderr, "bench_packet_coll: %s\n", why);
        return 1;
    }
    topo_route_config rc = {TOPO_BALANCE_ECMP, TOPO_PATH_MINIMAL, 1, 3};
    topo_router *r = topo_router_create(&g, &rc, why, sizeof why);
    uint32_t *ranks = malloc((size_t)g.n_hosts * sizeof *ranks);
    int out = 1;
    nc_plan plan = {0};
    if (!r || !ranks) {
        fprintf(stderr, "bench_packet_coll: %s\n", r ? "out of memory" : why);
        goto done;
    }
    for (uint32_t h = 0; h < g.n_hosts; h++)
        ranks[h] = h;
    nc_fabric f;
    nc_fabric_defaults(&f);
    f.g = &g;
    f.router = r;
    sim_error err = {0};
    if (nc_plan_build(&plan, &f, NC_ALLREDUCE, NC_ALGO_RING, ranks, g.n_hosts, bytes, &err)) {
        fprintf(stderr, "bench_packet_coll: %s\n", err.msg);
        goto done;
    }
    pkt_config c = {MTU, tech, BUFFER, XOFF, XON, D, {0}, 0, PKT_LOSSLESS, 0};
    pkc_compare cmp;
    if (pkc_compare_run(&f, &c, &plan, &cmp, why, sizeof why)) {
        fprintf(stderr, "bench_packet_coll: %s\n", why);
        goto done;
    }
    const pkt_net_stats *st = &cmp.packet.stats;
    if (st->bytes_delivered != cmp.packet.sent_bytes) {
        fprintf(stderr, "bench_packet_coll: bytes delivered differ from bytes sent\n");
        goto done;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("bench_packet_coll allreduce k=%u tech=%s hosts=%u bytes=%.0f messages=%llu "
           "packet_hops=%llu events=%llu pauses=%llu sim_s=%.6g flow_sim_s=%.6g ratio=%.6f "
           "wall_s=%.3f cpu_s=%.3f packet_hops_per_s=%.4g max_rss_kib=%ld\n",
           k, tech == PKT_IB ? "ib" : "roce", g.n_hosts, bytes,
           (unsigned long long)cmp.packet.messages, (unsigned long long)st->packet_hops,
           (unsigned long long)st->events, (unsigned long long)st->pauses, cmp.packet.time_s,
           cmp.flow.time_s, cmp.packet.time_s / cmp.flow.time_s, cmp.packet.wall_s,
           ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
               ru.ru_stime.tv_usec * 1e-6,
           cmp.packet.wall_s > 0 ? st->packet_hops / cmp.packet.wall_s : 0.0,
           (long)ru.ru_maxrss);
    out = 0;
done:
    nc_plan_free(&plan);
    free(ranks);
    topo_router_destroy(r);
    topo_graph_fini(&g);
    return out;
}

int main(int argc, char **argv)
{
    unsigned k = 16;
    double bytes = 64 * 1048576.0;
    enum pkt_technology tech = PKT_IB;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--smoke")) {
            k = 4;
            bytes = 1048576.0;
        } else if (!strcmp(argv[i], "--roce")) {
            tech = PKT_ROCE;
        } else if (!strcmp(argv[i], "--k") && i + 1 < argc) {
            k = (unsigned)strtoul(argv[++i], NULL, 10);
        } else if (!strcmp(argv[i], "--bytes") && i + 1 < argc) {
            bytes = strtod(argv[++i], NULL);
        } else {
            fprintf(stderr, "usage: bench_packet_coll [--smoke] [--k K] [--bytes B] [--roce]\n");
            return 2;
        }
    }
    if (!(bytes >= 1) || !isfinite(bytes)) {
        fprintf(stderr, "bench_packet_coll: --bytes: expected a positive size\n");
        return 2;
    }
    return run(k, bytes, tech);
}
