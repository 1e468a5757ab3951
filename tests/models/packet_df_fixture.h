/* packet_df_fixture.h - what test_packet_df_cand.c and
 * test_packet_df_ugalg.c share: the p = 2, a = 4, h = 2 Dragonfly (9
 * groups of 8 hosts), links of B = 50 GB/s and D = 500 ns, IB credit and
 * RoCE PFC buffers (components.md 5.2's headroom rule), messages of
 * M = 64 MTU; run() sends n messages at t = 0 in a routing mode and
 * returns the last arrival, engine digest, Valiant packets, packet-hops and
 * a consistency check; shift() and permutation() the two traffic patterns.
 * Included by one test file each (static functions). */
#ifndef DCSIM_TEST_PACKET_DF_FIXTURE_H
#define DCSIM_TEST_PACKET_DF_FIXTURE_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dragonfly.h"
#include "engine.h"
#include "packet.h"
#include "routing.h"

#define MTU 4096.0
#define B 50e9
#define D 500e-9
#define BUFFER (16 * MTU)
#define XON (2 * B * D + 2 * MTU)
#define XOFF (XON + 3072)
#define RBUFFER (XOFF + MTU + 2 * B * D + 2 * MTU)
#define PER_GROUP 8u /* hosts per group: p a */
#define HOSTS 72u
#define M (64 * MTU)

typedef struct run_out {
    double t_end;
    uint64_t digest, valiant, hops, par; /* par: mode 5's turns at the gateway */
    size_t done;
    int consistent;
} run_out;

typedef struct done_log {
    sim_engine *eng;
    size_t n;
    double last;
} done_log;

static void on_done(void *ctx, uint64_t tag)
{
    (void)tag;
    done_log *d = ctx;
    d->n++;
    d->last = sim_now(d->eng);
}

/* n messages src[i] -> dst[i] of M bytes, all at t = 0 */
static int run(enum pkt_technology t, int mode, uint32_t cand, const uint32_t *src,
               const uint32_t *dst, unsigned n, run_out *o)
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
    pkt_config c = {.mtu_bytes = MTU, .technology = t,
                    .buffer_bytes = t == PKT_IB ? BUFFER : RBUFFER, .xoff_bytes = XOFF,
                    .xon_bytes = XON, .hop_latency_s = D, .is_adaptive = mode};
#ifndef OLD_FINGERPRINTS
    c.valiant_candidates = cand;
#else
    (void)cand;
#endif
    pkt_net *net = r && eng ? pkt_net_create(eng, &g, r, &c, why, sizeof why) : NULL;
    int rc_out = -1;
    memset(o, 0, sizeof *o);
    if (!net) {
        fprintf(stderr, "pkt_net_create: %s\n", why);
        goto out;
    }
    done_log log = {eng, 0, 0};
    for (unsigned i = 0; i < n; i++)
        if (pkt_send(net, src[i], dst[i], M, i, on_done, &log, i)) {
            fprintf(stderr, "pkt_send: %s\n", pkt_net_error(net));
            goto out;
        }
    sim_run(eng, INFINITY);
    const pkt_net_stats *st = pkt_net_get_stats(net);
    o->t_end = log.last;
    o->done = log.n;
    o->digest = sim_digest(eng);
    o->valiant = st->valiant_packets;
    o->par = st->par_packets;
    o->hops = st->packet_hops;
    o->consistent = pkt_net_check(net, why, sizeof why) == 0 &&
                    st->bytes_delivered == (double)n * M && st->messages_delivered == n &&
                    st->packets_delivered == st->packets_injected;
    rc_out = 0;
out:
    pkt_net_destroy(net);
    sim_engine_destroy(eng);
    topo_router_destroy(r);
    topo_graph_fini(&g);
    return rc_out;
}

/* the group shift: host h of group i -> the same host of group i + 1 */
static void shift(uint32_t *src, uint32_t *dst)
{
    for (unsigned i = 0; i < HOSTS; i++) {
        src[i] = i;
        dst[i] = (i + PER_GROUP) % HOSTS;
    }
}

/* a random permutation without fixed points (fixed LCG: reproducible) */
static void permutation(uint32_t *src, uint32_t *dst)
{
    uint64_t x = 12345;
    for (unsigned i = 0; i < HOSTS; i++)
        dst[i] = i;
    for (unsigned i = HOSTS - 1; i > 0; i--) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        unsigned j = (unsigned)((x >> 33) % (i + 1));
        uint32_t t = dst[i];
        dst[i] = dst[j];
        dst[j] = t;
    }
    for (unsigned i = 0; i < HOSTS; i++) {
        src[i] = i;
        if (dst[i] == i) /* a fixed point: swap with the next */
        {
            uint32_t t = dst[i];
            dst[i] = dst[(i + 1) % HOSTS];
            dst[(i + 1) % HOSTS] = t;
        }
    }
}

#endif
