/* test_packet_ibcc.c - InfiniBand congestion control in the packet tier
 * (models/packet_ibcc.c; packet.h pkt_ibcc_config; docs/fabric.md "IB
 * congestion control"): a lone flow under one switch against an
 * independent recurrence of the FECN -> BECN -> CCTI -> pacing loop (every
 * time, mark, BECN and the final CCTI), a threshold nothing reaches leaves
 * every time as without CC, a 2 -> 1 incast whose switch queues CC keeps
 * shorter, determinism and bad configurations.
 *
 * Numbers: B = 50 GB/s (NDR 400 Gb/s, hardware.md 3.x), MTU 4096 B
 * (components.md 5.7), d = 500 ns per hop (hardware.md 3.5), port buffer
 * 1 MB. The IB CC values (threshold, marking rate, CCTI increase, limit,
 * timer, table step) are a GAP in the references (components.md 5.4 names
 * the knobs only): the ones here are test inputs chosen to exercise the
 * rules, not defaults.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "engine.h"
#include "fattree.h"
#include "packet.h"
#include "routing.h"
#include "packet_rig.h"

#define MTU 4096.0
#define B 50e9
#define D 500e-9
#define BUFFER 1e6

static pkt_ibcc_config ibcc(double threshold, uint32_t rate, uint32_t increase, uint32_t limit,
                            double timer_s, double step_s)
{
    pkt_ibcc_config c = {1, threshold, rate, 0, increase, limit, 0, timer_s, step_s};
    return c;
}

static pkt_config config(const pkt_ibcc_config *cc)
{
    pkt_config c = {.mtu_bytes = MTU, .technology = PKT_IB, .buffer_bytes = BUFFER,
                    .hop_latency_s = D};
    if (cc)
        c.ibcc = *cc;
    return c;
}

/* ---- the reaction loop against a recurrence ----
 * Host 0 sends b bytes to host 1 (same leaf): two links, one switch egress
 * (leaf -> host 1), which never waits for credits (it feeds a host). With
 * threshold 0 every packet is eligible there, so packets 0, R + 1,
 * 2 (R + 1), ... are FECN-marked (R the marking rate). The pacer's gaps are
 * at least s / B, so no packet ever queues behind another: packet i,
 * released at r_i, is delivered at r_i + s_i/B + d + s_i/B + d, and its
 * BECN reaches the sender 2 d later. The sender's CCTI rises by the
 * increase (to the limit) at each BECN; a timer started by a BECN when none
 * runs takes one off every T while above the floor (0). r_{i+1} = r_i +
 * s_i / B + CCTI(r_i) x step, CCTI(r_i) after every event at or before r_i
 * (control events precede the pacer at equal times). The recurrence is
 * written independently of the tier, with the same float operations. */
typedef struct ref_state {
    double *becn;        /* BECN arrival times, increasing */
    size_t n_becn, next_becn;
    double timer_due;    /* INFINITY: no timer */
    uint32_t ccti, increase, limit;
    double timer_s;
    uint64_t becns_seen;
} ref_state;

static void ref_advance(ref_state *s, double t)
{
    for (;;) {
        double tb = s->next_becn < s->n_becn ? s->becn[s->next_becn] : INFINITY;
        double tt = s->timer_due;
        if (tb > t && tt > t)
            return;
        if (tb <= tt) { /* a BECN (at a tie the earlier-scheduled one is not decidable here;
                           the inputs below avoid ties) */
            s->next_becn++;
            s->becns_seen++;
            s->ccti = s->limit - s->ccti < s->increase ? s->limit : s->ccti + s->increase;
            if (s->timer_due == INFINITY && s->ccti > 0)
                s->timer_due = tb + s->timer_s;
        } else {
            if (s->ccti > 0)
                s->ccti--;
            s->timer_due = s->ccti > 0 ? tt + s->timer_s : INFINITY;
        }
    }
}

typedef struct ref_result {
    double done_s;
    uint64_t marks, becns_seen;
} ref_result;

static ref_result reference(double bytes, const pkt_ibcc_config *c)
{
    uint32_t np = (uint32_t)ceil(bytes / MTU);
    ref_state s = {calloc(np + 1, sizeof(double)), 0, 0, INFINITY, 0, c->ccti_increase,
                   c->ccti_limit, c->ccti_timer_s, 0};
    ref_result out = {0, 0, 0};
    double r = 0, done = 0;
    for (uint32_t i = 0; i < np; i++) {
        double size = i + 1 < np ? MTU : bytes - (double)(np - 1) * MTU;
        ref_advance(&s, r);
        double t = r;
        t += size / B;
        t += D;
        t += size / B;
        t += D;
        done = t;
        if (i % (c->marking_rate + 1) == 0) {
            s.becn[s.n_becn++] = t + 2.0 * D;
            out.marks++;
        }
        r = r + (size / B + s.ccti * c->cct_step_s);
    }
    ref_advance(&s, done); /* BECNs after the last delivery reach a finished message */
    out.done_s = done;
    out.becns_seen = s.becns_seen;
    free(s.becn);
    return out;
}

static void test_reaction_loop(void)
{
    /* timers long (no decrease) and short (several), rate 0 and 7, limit reached or not */
    const pkt_ibcc_config cases[4] = {
        ibcc(0, 0, 1, 1000, 1.0, 10e-9),  ibcc(0, 7, 3, 1000, 1.0, 25e-9),
        ibcc(0, 0, 2, 20, 1.0, 40e-9),    ibcc(0, 3, 4, 1000, 3.3e-6, 50e-9)};
    const double bytes = 1000 * MTU + 123;
    for (int k = 0; k < 4; k++) {
        pkt_config c = config(&cases[k]);
        rig x;
        if (rig_open(&x, &c, B)) {
            CHECK(0);
            return;
        }
        CHECK_INT_EQ(pkt_send(x.net, 0, 1, bytes, 1, on_done, &x, 0), 0);
        sim_run(x.eng, INFINITY);
        ref_result want = reference(bytes, &cases[k]);
        const pkt_net_stats *st = pkt_net_get_stats(x.net);
        printf("loop %d: done %.9g us (recurrence %.9g, no CC %.9g), FECN %llu (%llu), "
               "BECNs seen %llu (%llu)\n", k, x.done_s[0] * 1e6, want.done_s * 1e6,
               (1000 * MTU + 123) / B * 1e6, (unsigned long long)st->ecn_marks,
               (unsigned long long)want.marks, (unsigned long long)st->rate_cuts,
               (unsigned long long)want.becns_seen);
        CHECK_REL(x.done_s[0], want.done_s, 1e-12);
        CHECK_INT_EQ(st->ecn_marks, want.marks);
        CHECK_INT_EQ(st->cnps, want.marks);
        CHECK_INT_EQ(st->rate_cuts, want.becns_seen);
        CHECK(x.done_s[0] > 2 * (bytes / B)); /* the delays cost something */
        char why[256] = "";
        CHECK_INT_EQ(pkt_net_check(x.net, why, sizeof why), 0);
        rig_close(&x);
    }
}

/* A threshold above the buffer: no packet is ever marked, every message
 * paced at line rate, so every completion time equals the run without CC
 * (the pacer releases at r_i + s/B exactly when the NIC FIFO would start
 * it). Four flows, two of them into one host. */
static void test_never_marked(void)
{
    pkt_ibcc_config cc = ibcc(2 * BUFFER, 0, 1, 100, 1e-6, 1e-6);
    double t[2][4];
    for (int on = 0; on < 2; on++) {
        pkt_config c = config(on ? &cc : NULL);
        rig x;
        if (rig_open(&x, &c, B)) {
            CHECK(0);
            return;
        }
        const uint32_t src[4] = {0, 4, 5, 12}, dst[4] = {8, 8, 13, 1};
        for (int f = 0; f < 4; f++)
            CHECK_INT_EQ(pkt_send(x.net, src[f], dst[f], 3e6 + 1000 * f, 10 + f, on_done, &x,
                                  (uint64_t)f), 0);
        sim_run(x.eng, INFINITY);
        for (int f = 0; f < 4; f++)
            t[on][f] = x.done_s[f];
        CHECK_INT_EQ(pkt_net_get_stats(x.net)->ecn_marks, 0);
        rig_close(&x);
    }
    for (int f = 0; f < 4; f++)
        CHECK(t[0][f] == t[1][f]);
    printf("never marked: %.6f %.6f %.6f %.6f us, as without CC\n", t[1][0] * 1e6,
           t[1][1] * 1e6, t[1][2] * 1e6, t[1][3] * 1e6);
}

typedef struct incast {
    double done_s[2], max_queue;
    uint64_t marks, becns, digest;
} incast;

/* Hosts 0 (leaf 0) and 4 (leaf 1) each send 8 MB to host 8 (leaf 2). */
static int run_incast(const pkt_ibcc_config *cc, incast *out)
{
    pkt_config c = config(cc);
    rig x;
    if (rig_open(&x, &c, B))
        return -1;
    CHECK_INT_EQ(pkt_send(x.net, 0, 8, 8e6, 100, on_done, &x, 0), 0);
    CHECK_INT_EQ(pkt_send(x.net, 4, 8, 8e6, 101, on_done, &x, 1), 0);
    sim_run(x.eng, INFINITY);
    out->done_s[0] = x.done_s[0];
    out->done_s[1] = x.done_s[1];
    out->max_queue = 0;
    for (uint32_t l = 0; l < x.g.n_links; l++)
        if (x.g.node_kind[x.g.link_src[l]] != TOPO_HOST) {
            pkt_link_stats ls = pkt_net_link_stats(x.net, l);
            if (ls.max_queued_bytes > out->max_queue)
                out->max_queue = ls.max_queued_bytes;
        }
    out->marks = pkt_net_get_stats(x.net)->ecn_marks;
    out->becns = pkt_net_get_stats(x.net)->rate_cuts;
    out->digest = sim_digest(x.eng);
    char why[256] = "";
    CHECK_INT_EQ(pkt_net_check(x.net, why, sizeof why), 0);
    rig_close(&x);
    return 0;
}

static void test_incast(void)
{
    /* marking above 10 packets queued, every 4th eligible packet; a CCTI
     * step of one packet time at line rate, 40 us timer */
    pkt_ibcc_config cc = ibcc(10 * MTU, 3, 1, 127, 40e-6, MTU / B);
    incast off, on, again;
    if (run_incast(NULL, &off) || run_incast(&cc, &on) || run_incast(&cc, &again)) {
        CHECK(0);
        return;
    }
    double ideal = 2 * 8e6 / B;
    printf("incast 2->1: no CC done %.3f / %.3f us, max switch queue %.0f B; IB CC done %.3f "
           "/ %.3f us (ideal %.3f), max queue %.0f B, FECN %llu, BECNs seen %llu\n",
           off.done_s[0] * 1e6, off.done_s[1] * 1e6, off.max_queue, on.done_s[0] * 1e6,
           on.done_s[1] * 1e6, ideal * 1e6, on.max_queue, (unsigned long long)on.marks,
           (unsigned long long)on.becns);
    CHECK_INT_EQ(off.marks, 0);
    CHECK(on.marks > 0 && on.becns > 0);
    CHECK(on.max_queue < off.max_queue); /* CC keeps the switch queues shorter */
    for (int f = 0; f < 2; f++) /* nobody beats the bottleneck */
        CHECK(on.done_s[f] >= 8e6 / B && off.done_s[f] >= 8e6 / B);
    CHECK(fmax(on.done_s[0], on.done_s[1]) >= ideal);
    CHECK(on.digest == again.digest);
    CHECK(on.done_s[0] == again.done_s[0] && on.done_s[1] == again.done_s[1]);
}

static void test_bad_configs(void)
{
    char why[256];
    pkt_ibcc_config good = ibcc(0, 0, 1, 10, 1e-6, 1e-9);
    pkt_config c = config(&good);
    CHECK_INT_EQ(pkt_config_check(&c, why, sizeof why), 0);
    c.technology = PKT_ROCE;
    c.xoff_bytes = 2 * MTU;
    c.xon_bytes = MTU;
    CHECK_INT_EQ(pkt_config_check(&c, why, sizeof why), -1);
    printf("refused: %s\n", why);
    struct {
        const char *name;
        pkt_ibcc_config v;
    } bad[] = {
        {"threshold -1", ibcc(-1, 0, 1, 10, 1e-6, 1e-9)},
        {"threshold nan", ibcc(NAN, 0, 1, 10, 1e-6, 1e-9)},
        {"increase 0", ibcc(0, 0, 0, 10, 1e-6, 1e-9)},
        {"timer 0", ibcc(0, 0, 1, 10, 0, 1e-9)},
        {"timer inf", ibcc(0, 0, 1, 10, INFINITY, 1e-9)},
        {"step 0", ibcc(0, 0, 1, 10, 1e-6, 0)},
        {"step nan", ibcc(0, 0, 1, 10, 1e-6, NAN)},
        {"rate 2^31", ibcc(0, 0x80000000u, 1, 10, 1e-6, 1e-9)},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        c = config(&bad[i].v);
        why[0] = 0;
        CHECK_INT_EQ(pkt_config_check(&c, why, sizeof why), -1);
        printf("refused %s: %s\n", bad[i].name, why);
    }
    c = config(&good);
    c.ibcc.ccti_min = 11; /* above the limit */
    CHECK_INT_EQ(pkt_config_check(&c, why, sizeof why), -1);
    c = config(&good);
    c.ibcc.is_victim_marking = 2;
    CHECK_INT_EQ(pkt_config_check(&c, why, sizeof why), -1);
}

int main(void)
{
    test_reaction_loop();
    test_never_marked();
    test_incast();
    test_bad_configs();
    return check_report();
}
