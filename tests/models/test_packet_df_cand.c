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

#include "packet_df_fixture.h"

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
