/* test_packet_df_cand.c - the Valiant candidates of per-packet routing on a
 * Dragonfly (pkt_config.valiant_candidates; models/packet_df.c,
 * docs/fabric.md "Per-packet UGAL on a Dragonfly").
 *
 * The Dragonfly of test_packet_df (p = 2, a = 4, h = 2: 9 groups, 72 hosts,
 * every link 50e9 B/s, MTU 4096 B, components.md 5.7; 500 ns per hop,
 * hardware.md 3.5; IB buffer 16 MTU per port, RoCE PFC by components.md
 * 5.2's headroom rule).
 *  - The full scan (valiant_candidates 0, every third group) gives, bit for
 *    bit, what the code gave before the parameter existed: engine digest,
 *    last arrival, Valiant packets and packet-hops equal the fingerprints
 *    printed by that code (commit 335498b) for the group shift under IB and
 *    RoCE (UGAL-L and Valiant) and a random permutation (UGAL-L); any count
 *    of at least the 7 third groups is the full scan too.
 *  - Sampled (1, 2, 4 candidates per message): every packet delivered,
 *    bytes conserved, deterministic; Valiant mode still sends every
 *    inter-group packet through a third group; the group shift's time
 *    stays within the bounds of test_packet_df (Valiant >= 16 M / (7 B),
 *    the full spread's; UGAL-L >= (16/9) M / B, the best mix of minimal and
 *    Valiant, and below minimal's 8 M / B);
 *    fewer candidates spread the shift over fewer groups: with 1 candidate
 *    (each message's packets through one group) Valiant is no faster than
 *    with the full scan.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
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

typedef struct fingerprint {
    const char *name;
    enum pkt_technology t;
    int mode, is_perm;
    uint64_t digest, valiant, hops;
    double t_end;
} fingerprint;

/* printed by the code before valiant_candidates (commit 335498b) */
static const fingerprint before[] = {
    {"IB shift UGAL-L", PKT_IB, 1, 0, 0x4bb81254ea4a4eb1ull, 3192, 26140, 0x1.1823a55b1fb41p-16},
    {"IB shift Valiant", PKT_IB, 2, 0, 0x9fe72dca86ff79ffull, 4608, 27637, 0x1.1c432d556676ep-16},
    {"RoCE shift UGAL-L", PKT_ROCE, 1, 0, 0xed3f499c4550df7cull, 3159, 26021,
     0x1.0b335dfd15a73p-16},
    {"RoCE shift Valiant", PKT_ROCE, 2, 0, 0x0b8fcee3b792554eull, 4608, 27637,
     0x1.2062b54fad39cp-16},
    {"IB perm UGAL-L", PKT_IB, 1, 1, 0xfee1da17705bebf7ull, 1501, 23011, 0x1.b0fb243ef4bfbp-17},
};

static void test_full_scan(void)
{
    uint32_t src[HOSTS], dst[HOSTS];
    for (size_t i = 0; i < sizeof before / sizeof before[0]; i++) {
        const fingerprint *f = &before[i];
        f->is_perm ? permutation(src, dst) : shift(src, dst);
        run_out o;
        CHECK_INT_EQ(run(f->t, f->mode, 0, src, dst, HOSTS, &o), 0);
        printf("{\"%s\", %s, %d, %d, 0x%016llxull, %llu, %llu, %a},\n", f->name,
               f->t == PKT_IB ? "PKT_IB" : "PKT_ROCE", f->mode, f->is_perm,
               (unsigned long long)o.digest, (unsigned long long)o.valiant,
               (unsigned long long)o.hops, o.t_end);
        CHECK(o.consistent && o.done == HOSTS);
        CHECK(o.digest == f->digest && o.valiant == f->valiant && o.hops == f->hops);
        CHECK(memcmp(&o.t_end, &f->t_end, sizeof o.t_end) == 0);
#ifndef OLD_FINGERPRINTS
        for (uint32_t k = 7; k <= 9; k += 2) { /* 7 third groups: every count >= 7 is all */
            run_out a;
            CHECK_INT_EQ(run(f->t, f->mode, k, src, dst, HOSTS, &a), 0);
            CHECK(a.digest == o.digest && a.valiant == o.valiant && a.hops == o.hops);
            CHECK(memcmp(&a.t_end, &o.t_end, sizeof a.t_end) == 0);
        }
#endif
    }
}

#ifndef OLD_FINGERPRINTS
static void test_sampled(void)
{
    uint32_t src[HOSTS], dst[HOSTS];
    shift(src, dst);
    double valiant_bound = 16 * M / (7 * B), min_bound = 8 * M / B, mix_bound = 16 * M / (9 * B);
    run_out full[3];
    for (int mode = 1; mode <= 2; mode++)
        CHECK_INT_EQ(run(PKT_IB, mode, 0, src, dst, HOSTS, &full[mode]), 0);
    const uint32_t ks[] = {1, 2, 4};
    for (size_t i = 0; i < 3; i++)
        for (int mode = 1; mode <= 2; mode++) {
            run_out o, o2;
            CHECK_INT_EQ(run(PKT_IB, mode, ks[i], src, dst, HOSTS, &o), 0);
            CHECK_INT_EQ(run(PKT_IB, mode, ks[i], src, dst, HOSTS, &o2), 0);
            printf("IB shift, %s, %u candidate%s per message: %.3f us (full scan %.3f us; "
                   "bound %.3f us, minimal's %.3f), %llu Valiant packets, %llu hops\n",
                   mode == 1 ? "UGAL-L " : "Valiant", ks[i], ks[i] > 1 ? "s" : " ",
                   o.t_end * 1e6, full[mode].t_end * 1e6,
                   (mode == 1 ? mix_bound : valiant_bound) * 1e6, min_bound * 1e6,
                   (unsigned long long)o.valiant, (unsigned long long)o.hops);
            CHECK(o.consistent && o.done == HOSTS);
            CHECK(o.digest == o2.digest && o.t_end == o2.t_end); /* deterministic */
            if (mode == 1) { /* the best mix of minimal and Valiant; beats minimal */
                CHECK(o.t_end >= mix_bound);
                CHECK(o.t_end < min_bound);
            } else { /* every packet leaves its group: all Valiant */
                CHECK(o.t_end >= valiant_bound);
                CHECK_INT_EQ(o.valiant, HOSTS * 64);
            }
            if (mode == 2 && ks[i] == 1)
                CHECK(o.t_end >= full[2].t_end);
            CHECK(o.digest != full[mode].digest); /* a sample is not the full scan */
        }
}
#endif

int main(void)
{
    test_full_scan();
#ifndef OLD_FINGERPRINTS
    test_sampled();
#endif
    return check_report();
}
