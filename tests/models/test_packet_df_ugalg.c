/* test_packet_df_ugalg.c - UGAL-G on a Dragonfly in the packet tier
 * (pkt_config.is_adaptive 4; models/packet_df.c, docs/fabric.md "UGAL-G"):
 * at the source router a packet takes the minimal path unless the Valiant
 * path of its drawn group has the smaller sum of (queued bytes + size) /
 * rate over its links from there on (every queue on both paths read:
 * global knowledge).
 *
 * The Dragonfly of test_packet_df (p = 2, a = 4, h = 2: 9 groups, 72 hosts,
 * every link 50e9 B/s, MTU 4096 B, components.md 5.7; 500 ns per hop,
 * hardware.md 3.5; IB buffer 16 MTU per port, RoCE PFC by components.md
 * 5.2's headroom rule), messages of M = 64 MTU:
 *  - a lone message on an idle net: every queue empty, so UGAL-G is
 *    minimal, bit for bit the minimal mode on the same VCs (3);
 *  - the group shift (host h of group i to the same host of group i + 1):
 *    UGAL-G between the bounds of test_packet_df, (16/9) M / B (the best
 *    mix of minimal and Valiant) <= T < 8 M / B (minimal's), under IB and
 *    RoCE, every byte delivered, deterministic, some packets Valiant and
 *    some not;
 *  - a random permutation: conserved, deterministic;
 *  - is_adaptive 4 refused on a folded Clos, 5 refused by the config check.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dragonfly.h"
#include "fattree.h"
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
    uint64_t digest, valiant, hops;
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
    c.valiant_candidates = cand;
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


static void test_lone(enum pkt_technology t)
{
    uint32_t src[1] = {0}, dst[1] = {3 * PER_GROUP + 5};
    run_out g, m;
    CHECK_INT_EQ(run(t, 4, 0, src, dst, 1, &g), 0);
    CHECK_INT_EQ(run(t, 3, 0, src, dst, 1, &m), 0);
    CHECK(g.consistent && g.done == 1);
    CHECK(memcmp(&g.t_end, &m.t_end, sizeof g.t_end) == 0);
    CHECK(g.valiant == 0 && g.hops == m.hops);
    printf("%s lone message: UGAL-G %a s, minimal %a s, %llu hops\n",
           t == PKT_IB ? "IB  " : "RoCE", g.t_end, m.t_end, (unsigned long long)g.hops);
}

static void test_shift(enum pkt_technology t)
{
    uint32_t src[HOSTS], dst[HOSTS];
    shift(src, dst);
    double min_bound = 8 * M / B, mix_bound = 16 * M / (9 * B);
    run_out g, g2, l;
    CHECK_INT_EQ(run(t, 4, 0, src, dst, HOSTS, &g), 0);
    CHECK_INT_EQ(run(t, 4, 0, src, dst, HOSTS, &g2), 0);
    CHECK_INT_EQ(run(t, 1, 0, src, dst, HOSTS, &l), 0);
    printf("%s group shift, %.0f B each: UGAL-G %.3f us (%llu Valiant packets), UGAL-L %.3f us "
           "(%llu); bounds %.3f us (best mix), %.3f us (minimal)\n",
           t == PKT_IB ? "IB  " : "RoCE", M, g.t_end * 1e6, (unsigned long long)g.valiant,
           l.t_end * 1e6, (unsigned long long)l.valiant, mix_bound * 1e6, min_bound * 1e6);
    CHECK(g.consistent && g.done == HOSTS);
    CHECK(g.digest == g2.digest && g.t_end == g2.t_end);
    CHECK(g.t_end >= mix_bound && g.t_end < min_bound);
    CHECK(g.valiant > 0 && g.valiant < HOSTS * 64);
    CHECK(g.digest != l.digest); /* not UGAL-L's choices */
}

static void test_permutation(void)
{
    uint32_t src[HOSTS], dst[HOSTS];
    permutation(src, dst);
    run_out g, g2;
    CHECK_INT_EQ(run(PKT_IB, 4, 0, src, dst, HOSTS, &g), 0);
    CHECK_INT_EQ(run(PKT_IB, 4, 0, src, dst, HOSTS, &g2), 0);
    printf("IB   random permutation: UGAL-G %.3f us, %llu Valiant packets\n", g.t_end * 1e6,
           (unsigned long long)g.valiant);
    CHECK(g.consistent && g.done == HOSTS);
    CHECK(g.digest == g2.digest && g.t_end == g2.t_end);
}

static void test_refusals(void)
{
    char why[256];
    topo_graph g;
    CHECK(topo_fattree_kary(4, B, &g, why, sizeof why) == 0);
    topo_route_config rc = {TOPO_BALANCE_ECMP, TOPO_PATH_MINIMAL, 1, 5};
    topo_router *r = topo_router_create(&g, &rc, why, sizeof why);
    sim_engine *eng = sim_engine_create();
    pkt_config c = {.mtu_bytes = MTU, .technology = PKT_IB, .buffer_bytes = BUFFER,
                    .hop_latency_s = D, .is_adaptive = 4};
    CHECK_INT_EQ(pkt_config_check(&c, why, sizeof why), 0);
    CHECK(pkt_net_create(eng, &g, r, &c, why, sizeof why) == NULL);
    printf("refused: %s\n", why);
    c.is_adaptive = 5;
    CHECK(pkt_config_check(&c, why, sizeof why) == -1);
    sim_engine_destroy(eng);
    topo_router_destroy(r);
    topo_graph_fini(&g);
}

int main(void)
{
    test_lone(PKT_IB);
    test_lone(PKT_ROCE);
    test_shift(PKT_IB);
    test_shift(PKT_ROCE);
    test_permutation();
    test_refusals();
    return check_report();
}
