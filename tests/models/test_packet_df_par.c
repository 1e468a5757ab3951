/* test_packet_df_par.c - progressive adaptive routing (PAR) on a Dragonfly
 * in the packet tier (pkt_config.is_adaptive 5, models/packet_df.c):
 * UGAL-L at the source router, and again at the gateway router of the
 * source group for a packet that stayed minimal (docs/fabric.md
 * "Progressive adaptive routing").
 *
 * packet_df_fixture.h's p = 2, a = 4, h = 2 Dragonfly (9 groups of 8
 * hosts, 50 GB/s, d = 500 ns), messages of M = 64 MTU, under IB credits and
 * RoCE PFC:
 *  - the group shift (adversarial: every host of group i to the same host
 *    of group i + 1): PAR against test_packet_df's bounds - at least the
 *    best mix's (the Valiant bound 16 M / 7 B, x 7/9), under half of
 *    minimal's time (>= 8 M / B), and within 5 % of UGAL-L's (the stated
 *    tolerance: PAR sees the congested global link at the gateway, where
 *    UGAL-L at the source router sees it only through back-pressure);
 *    some packets turn at the gateway (par_packets > 0);
 *  - a random permutation (uniform): within 10 % of minimal on the same
 *    virtual channels (mode 3), as UGAL-L must be;
 *  - a lone message: PAR on an idle net is minimal, bit for bit;
 *  - determinism: the shift twice, the same digest.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "packet_df_fixture.h"

static const char *tech_name(enum pkt_technology t) { return t == PKT_IB ? "IB  " : "RoCE"; }

static void test_shift(enum pkt_technology t)
{
    uint32_t src[HOSTS], dst[HOSTS];
    shift(src, dst);
    run_out o[6];
    const int modes[4] = {1, 2, 3, 5};
    const char *names[6] = {"", "UGAL-L", "Valiant", "minimal", "", "PAR"};
    for (int i = 0; i < 4; i++) {
        int m = modes[i];
        CHECK_INT_EQ(run(t, m, 0, src, dst, HOSTS, &o[m]), 0);
        CHECK(o[m].consistent && o[m].done == HOSTS);
        printf("%s group shift, %-8s: %.3f us, %llu Valiant packets (%llu at the gateway)\n",
               tech_name(t), names[m], o[m].t_end * 1e6, (unsigned long long)o[m].valiant,
               (unsigned long long)o[m].par);
    }
    double min_bound = PER_GROUP * M / B, val_bound = 2.0 * PER_GROUP * M / (7 * B);
    printf("%s bounds: minimal %.3f us (8 M / B), Valiant %.3f us (16 M / 7 B); PAR / UGAL-L "
           "%.4f\n", tech_name(t), min_bound * 1e6, val_bound * 1e6, o[5].t_end / o[1].t_end);
    CHECK(o[3].t_end >= min_bound);
    CHECK(o[5].t_end >= val_bound * 7.0 / 9.0); /* the best mix's bound (test_packet_df) */
    CHECK(o[5].t_end < 0.5 * o[3].t_end);
    CHECK(o[5].t_end <= 1.05 * o[1].t_end);
    CHECK(o[5].par > 0 && o[5].par <= o[5].valiant);
    CHECK(o[1].par == 0);
    run_out again;
    CHECK_INT_EQ(run(t, 5, 0, src, dst, HOSTS, &again), 0);
    CHECK(again.digest == o[5].digest && again.t_end == o[5].t_end);
    CHECK(o[5].digest != o[1].digest);
}

static void test_uniform(enum pkt_technology t)
{
    uint32_t src[HOSTS], dst[HOSTS];
    permutation(src, dst);
    run_out par, mn;
    CHECK_INT_EQ(run(t, 5, 0, src, dst, HOSTS, &par), 0);
    CHECK_INT_EQ(run(t, 3, 0, src, dst, HOSTS, &mn), 0);
    printf("%s uniform (random permutation): PAR %.3f us, minimal %.3f us (x%.4f), %llu Valiant "
           "packets (%llu at the gateway)\n", tech_name(t), par.t_end * 1e6, mn.t_end * 1e6,
           par.t_end / mn.t_end, (unsigned long long)par.valiant, (unsigned long long)par.par);
    CHECK(par.consistent && mn.consistent && par.done == HOSTS);
    CHECK(par.t_end <= 1.10 * mn.t_end);
}

static void test_lone(enum pkt_technology t)
{
    const uint32_t src[1] = {0}, dst[1] = {36}; /* group 0 -> group 4 */
    run_out par, mn;
    CHECK_INT_EQ(run(t, 5, 0, src, dst, 1, &par), 0);
    CHECK_INT_EQ(run(t, 3, 0, src, dst, 1, &mn), 0);
    CHECK(par.t_end == mn.t_end && par.valiant == 0 && par.hops == mn.hops);
}

int main(void)
{
    for (int i = 0; i < 2; i++) {
        enum pkt_technology t = i ? PKT_ROCE : PKT_IB;
        test_shift(t);
        test_uniform(t);
        test_lone(t);
    }
    return check_report();
}
