/* test_packet_series.c - the packet tier's time series (models/packet_series.h):
 * a closed form (one message over an idle path: the source link's queue at
 * every bin end and the packets it sent in every bin), exact conservation
 * (per-bin deltas sum to the end-of-run counters, per-bin maxima to the
 * run's maxima) under PFC incast, DCQCN marking and a host stall, merging
 * (a run that merged its bins equals a run with the coarser dt, bit for
 * bit), a run unchanged by sampling (digest, events, counters),
 * determinism, sparse storage (only links that moved are stored, in link
 * order; every other link is zeros in every bin and counter), and bad
 * input. The checks read the series as dense [bins][links] arrays built
 * from the per-link columns (dense_values, dense_counts).
 *
 * Numbers as in test_packet.c: MTU 4096 B (components.md 5.7), 50e9 B/s
 * links (hardware.md 3.1), 500 ns per hop (hardware.md 3.5), PFC thresholds
 * and buffer from components.md 5.2's headroom rule; DCQCN by
 * pkp_dcqcn_rule (components.md 5.1).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "engine.h"
#include "fattree.h"
#include "packet.h"
#include "packet_internal.h" /* pkt_net_use_engine_queue: refused */
#include "packet_phenomena.h"
#include "packet_series.h"
#include "routing.h"
#include "packet_rig.h"

/* Dense [bins][links] copies of a series' columns, freed by release(). */
static void *kept[256];
static int n_kept;

static void *keep(void *p)
{
    if (p && n_kept < 256)
        kept[n_kept++] = p;
    return p;
}

static void release(void)
{
    while (n_kept)
        free(kept[--n_kept]);
}

static const double *dense_values(const pkt_series *s, int v)
{
    uint32_t nb = pkt_series_bins(s), nl = pkt_series_links(s);
    if (!pkt_series_link_values(s, v, 0))
        return NULL;
    double *d = keep(malloc(((size_t)nb * nl + 1) * sizeof *d));
    for (uint32_t l = 0; d && l < nl; l++)
        for (uint32_t k = 0; k < nb; k++)
            d[(size_t)k * nl + l] = pkt_series_link_values(s, v, l)[k];
    return d;
}

static const uint64_t *dense_counts(const pkt_series *s, int c)
{
    uint32_t nb = pkt_series_bins(s), nl = pkt_series_links(s);
    uint64_t *d = keep(malloc(((size_t)nb * nl + 1) * sizeof *d));
    for (uint32_t l = 0; d && l < nl; l++)
        for (uint32_t k = 0; k < nb; k++)
            d[(size_t)k * nl + l] = pkt_series_link_counts(s, c, l)[k];
    return d;
}

#define MTU 4096.0
#define SQRT2 1.41421356237309504880
#define B 50e9
#define D 500e-9
#define BDP (B * D)
#define XON (2 * BDP + 2 * MTU)
#define XOFF (XON + 3072)
#define BUFFER (XOFF + MTU + 2 * BDP + 2 * MTU)

static pkt_config config(enum pkt_technology t)
{
    pkt_config c = {.mtu_bytes = MTU, .technology = t, .buffer_bytes = BUFFER,
                    .xoff_bytes = XOFF, .xon_bytes = XON, .hop_latency_s = D};
    return c;
}

/* Sparse storage: the stored links are ascending, exactly those whose
 * end counters moved (the rig's net starts idle), and fewer than all. */
static void check_sparse(const pkt_series *ser, uint32_t nl)
{
    uint32_t n = pkt_series_stored(ser), moved = 0, bad = 0;
    for (uint32_t l = 0; l < nl; l++)
        moved += pkt_series_link_end(ser, l).packets_sent > 0;
    CHECK_INT_EQ(n, moved);
    CHECK(n > 0 && n < nl);
    for (uint32_t j = 0; j < n; j++) {
        uint32_t l = pkt_series_stored_link(ser, j);
        bad += l >= nl || (j && l <= pkt_series_stored_link(ser, j - 1));
        bad += pkt_series_link_end(ser, l).packets_sent == 0;
    }
    CHECK_INT_EQ(bad, 0);
    CHECK(pkt_series_stored_link(ser, n) == UINT32_MAX);
    CHECK(pkt_series_link_values(ser, PKS_SENT_BYTES, nl) == NULL);
}

/* The one link out of host h. */
static uint32_t host_link(const topo_graph *g, uint32_t h)
{
    return g->out_links[g->out_offset[h]];
}

/* Closed form: P full packets from host 0 to host 1 on an idle net. The
 * source link's FIFO gets all P at t = 0 and finishes packet i (from 1) at
 * i s, s = MTU / B; with bins of dt = sqrt(2) s no bin end falls on a
 * finish (k sqrt 2 is never a whole number), so at the end of bin k the
 * queue holds (P - min(P, floor((k + 1) sqrt 2))) MTU, and bin k sent
 * min(P, floor((k+1) sqrt 2)) - min(P, floor(k sqrt 2)) packets. The
 * maximum of bin 0 is P MTU (the send at t0), of bin k > 0 the end of bin
 * k - 1 (the queue only drains). */
static void test_closed_form(void)
{
    const double P = 29, s = MTU / B, dt = SQRT2 * s;
    pkt_config c = config(PKT_IB);
    rig x;
    if (rig_open(&x, &c, B)) {
        CHECK(0);
        return;
    }
    char why[256];
    pkt_series *ser = pkt_series_create(x.net, dt, 1024, why, sizeof why);
    CHECK(ser != NULL);
    CHECK_INT_EQ(pkt_send(x.net, 0, 1, P * MTU, 1, NULL, NULL, 0), 0);
    sim_run(x.eng, INFINITY);
    double end = sim_now(x.eng);
    CHECK_REL(end, (P + 1) * s + 2 * D, 1e-12); /* test_packet.c's pipeline form, h = 2 */
    CHECK_INT_EQ(pkt_series_finish(ser, end), 0);
    uint32_t nl = pkt_series_links(ser), l0 = host_link(&x.g, 0);
    CHECK_INT_EQ(pkt_series_bins(ser), (uint32_t)ceil(end / dt));
    CHECK_INT_EQ(pkt_series_merges(ser), 0);
    const double *qe = dense_values(ser, PKS_QUEUE_END);
    const double *qm = dense_values(ser, PKS_QUEUE_MAX);
    const uint64_t *pk = dense_counts(ser, PKS_PACKETS);
    const double *sb = dense_values(ser, PKS_SENT_BYTES);
    double sent_sum = 0;
    for (uint32_t k = 0; k < pkt_series_bins(ser); k++) {
        double done = fmin(P, floor((k + 1) * SQRT2)), before = fmin(P, floor(k * SQRT2));
        CHECK(qe[(size_t)k * nl + l0] == (P - done) * MTU);
        CHECK(qm[(size_t)k * nl + l0] == (k == 0 ? P * MTU : (P - before) * MTU));
        CHECK_INT_EQ(pk[(size_t)k * nl + l0], (uint64_t)(done - before));
        CHECK(sb[(size_t)k * nl + l0] == (done - before) * MTU);
        sent_sum += sb[(size_t)k * nl + l0];
        for (uint32_t l = 0; l < nl; l++) /* nothing else queues but the path's two links */
            if (l != l0 && x.g.link_src[l] != x.g.link_dst[l0])
                CHECK(qm[(size_t)k * nl + l] == 0);
    }
    CHECK(sent_sum == P * MTU);
    CHECK_INT_EQ(pkt_series_stored(ser), 2); /* host 0 -> leaf -> host 1 */
    CHECK_INT_EQ(pkt_series_stored_link(ser, 0) == l0 || pkt_series_stored_link(ser, 1) == l0, 1);
    check_sparse(ser, nl);
    release();
    pkt_series_destroy(ser);
    rig_close(&x);
}

/* Sums of per-bin deltas == end counters; maxima of per-bin maxima == the
 * run's maxima; end values of the last bin == the net's now. */
static void check_conservation(const rig *x, const pkt_series *ser)
{
    uint32_t nl = pkt_series_links(ser), nb = pkt_series_bins(ser);
    const double *sb = dense_values(ser, PKS_SENT_BYTES);
    const double *qm = dense_values(ser, PKS_QUEUE_MAX);
    const double *hm = dense_values(ser, PKS_HELD_MAX);
    const double *qe = dense_values(ser, PKS_QUEUE_END);
    const double *he = dense_values(ser, PKS_HELD_END);
    const uint64_t *cnt[PKS_COUNTS];
    for (int c = 0; c < PKS_COUNTS; c++)
        cnt[c] = dense_counts(ser, c);
    int bad = 0;
    for (uint32_t l = 0; l < nl; l++) {
        pkt_link_stats e = pkt_series_link_end(ser, l), n = pkt_net_link_stats(x->net, l);
        uint64_t sum[PKS_COUNTS] = {0, 0, 0};
        double bytes = 0, qmax = 0, hmax = 0;
        for (uint32_t k = 0; k < nb; k++) {
            size_t i = (size_t)k * nl + l;
            for (int c = 0; c < PKS_COUNTS; c++)
                sum[c] += cnt[c][i];
            bytes += sb[i];
            qmax = fmax(qmax, qm[i]);
            hmax = fmax(hmax, hm[i]);
            bad += qe[i] > qm[i] || he[i] > hm[i];
        }
        bad += sum[PKS_PACKETS] != e.packets_sent || sum[PKS_PAUSES] != e.pauses ||
               sum[PKS_MARKS] != e.ecn_marks || bytes != e.bytes_sent ||
               qmax != e.max_queued_bytes || hmax != e.max_held_bytes;
        bad += e.packets_sent != n.packets_sent || e.bytes_sent != n.bytes_sent;
        bad += qe[(size_t)(nb - 1) * nl + l] != pkt_net_link_queued(x->net, l) ||
               he[(size_t)(nb - 1) * nl + l] != pkt_net_link_held(x->net, l);
    }
    CHECK_INT_EQ(bad, 0);
    check_sparse(ser, nl);
    release();
}

enum run_kind { RUN_PFC, RUN_DCQCN, RUN_STALL, RUN_IB };

/* 12 -> 1 incast of 256 KiB (hosts 4..15 to host 0) under `kind`; a series
 * of dt / max_bins when max_bins > 0. Fills digest, events, totals. */
typedef struct outcome {
    uint64_t digest, events, pauses, marks, hops;
    double end_s;
} outcome;

static pkt_series *incast(rig *x, enum run_kind kind, double dt, uint32_t max_bins,
                          outcome *o)
{
    pkt_config c = config(kind == RUN_IB ? PKT_IB : PKT_ROCE);
    if (kind == RUN_DCQCN)
        pkp_dcqcn_rule(B, 11, &c.dcqcn);
    if (rig_open(x, &c, B))
        return NULL;
    char why[256];
    pkt_series *ser = max_bins ? pkt_series_create(x->net, dt, max_bins, why, sizeof why) : NULL;
    if (max_bins && !ser)
        fprintf(stderr, "pkt_series_create: %s\n", why);
    if (kind == RUN_STALL)
        CHECK_INT_EQ(pkt_host_stall(x->net, 0, 2e-6, 30e-6), 0);
    for (uint32_t h = 4; h < 16; h++)
        CHECK_INT_EQ(pkt_send(x->net, h, 0, 262144, h, NULL, NULL, h), 0);
    sim_run(x->eng, INFINITY);
    const pkt_net_stats *st = pkt_net_get_stats(x->net);
    o->digest = sim_digest(x->eng);
    o->events = sim_events_fired(x->eng);
    o->pauses = st->pauses;
    o->marks = st->ecn_marks;
    o->hops = st->packet_hops;
    o->end_s = sim_now(x->eng);
    CHECK(st->messages_delivered == 12);
    if (ser)
        CHECK_INT_EQ(pkt_series_finish(ser, o->end_s), 0);
    return ser;
}

static void test_conservation(void)
{
    const enum run_kind kinds[4] = {RUN_PFC, RUN_DCQCN, RUN_STALL, RUN_IB};
    for (int i = 0; i < 4; i++) {
        rig x;
        outcome o;
        pkt_series *ser = incast(&x, kinds[i], 0.25e-6, 64, &o);
        CHECK(ser != NULL);
        if (ser) {
            check_conservation(&x, ser);
            CHECK(pkt_series_merges(ser) > 0); /* the cap was reached: merged sums too */
            CHECK(pkt_series_bins(ser) <= 64);
        }
        if (kinds[i] == RUN_PFC || kinds[i] == RUN_STALL)
            CHECK(o.pauses > 0); /* the case exercises the pause column */
        if (kinds[i] == RUN_DCQCN)
            CHECK(o.marks > 0);
        pkt_series_destroy(ser);
        rig_close(&x);
    }
}

/* The series changes nothing (digest, events, counters); two runs give the
 * same columns; a merged run equals a run with the coarser dt. */
static void test_unchanged_and_merging(void)
{
    const enum run_kind kinds[3] = {RUN_PFC, RUN_DCQCN, RUN_STALL};
    for (int i = 0; i < 3; i++) {
        rig a, b, c;
        outcome oa, ob, oc;
        pkt_series *none = incast(&a, kinds[i], 0, 0, &oa);
        (void)none;
        pkt_series *fine = incast(&b, kinds[i], 0.1e-6, 16, &ob); /* merges several times */
        CHECK(fine != NULL);
        CHECK(oa.digest == ob.digest);
        CHECK(oa.events == ob.events);
        CHECK(oa.pauses == ob.pauses && oa.marks == ob.marks && oa.hops == ob.hops);
        CHECK(oa.end_s == ob.end_s);
        uint32_t m = fine ? pkt_series_merges(fine) : 0;
        CHECK(m >= 3);
        pkt_series *coarse = incast(&c, kinds[i], 0.1e-6 * ldexp(1, (int)m), 4096, &oc);
        CHECK(coarse != NULL);
        CHECK(oc.digest == oa.digest);
        if (fine && coarse) {
            CHECK_INT_EQ(pkt_series_merges(coarse), 0);
            CHECK(pkt_series_dt(coarse) == pkt_series_dt(fine));
            CHECK_INT_EQ(pkt_series_bins(coarse), pkt_series_bins(fine));
            size_t n = (size_t)pkt_series_bins(fine) * pkt_series_links(fine);
            int same = pkt_series_bins(coarse) == pkt_series_bins(fine);
            for (int v = 0; same && v < PKS_VALUES; v++)
                same = !memcmp(dense_values(fine, v), dense_values(coarse, v),
                               n * sizeof(double));
            for (int k = 0; same && k < PKS_COUNTS; k++)
                same = !memcmp(dense_counts(fine, k), dense_counts(coarse, k),
                               n * sizeof(uint64_t));
            same = pkt_series_stored(coarse) == pkt_series_stored(fine);
            for (uint32_t j = 0; same && j < pkt_series_stored(fine); j++)
                same = pkt_series_stored_link(fine, j) == pkt_series_stored_link(coarse, j);
            CHECK(same);
            release();
        }
        /* determinism: the fine run again, column for column */
        rig d;
        outcome od;
        pkt_series *again = incast(&d, kinds[i], 0.1e-6, 16, &od);
        if (fine && again) {
            size_t n = (size_t)pkt_series_bins(fine) * pkt_series_links(fine);
            CHECK_INT_EQ(pkt_series_bins(again), pkt_series_bins(fine));
            int same = 1;
            for (int v = 0; v < PKS_VALUES; v++)
                same &= !memcmp(dense_values(fine, v), dense_values(again, v),
                                n * sizeof(double));
            for (int k = 0; k < PKS_COUNTS; k++)
                same &= !memcmp(dense_counts(fine, k), dense_counts(again, k),
                                n * sizeof(uint64_t));
            CHECK(same);
            release();
        }
        pkt_series_destroy(fine);
        pkt_series_destroy(coarse);
        pkt_series_destroy(again);
        rig_close(&a);
        rig_close(&b);
        rig_close(&c);
        rig_close(&d);
    }
}

static void test_bad_input(void)
{
    pkt_config c = config(PKT_IB);
    rig x;
    if (rig_open(&x, &c, B)) {
        CHECK(0);
        return;
    }
    char why[256] = "";
    CHECK(pkt_series_create(x.net, 0, 16, why, sizeof why) == NULL);
    CHECK_CONTAINS(why, "dt");
    CHECK(pkt_series_create(x.net, NAN, 16, why, sizeof why) == NULL);
    CHECK(pkt_series_create(x.net, 1e-6, 7, why, sizeof why) == NULL);
    CHECK(pkt_series_create(x.net, 1e-6, 0, why, sizeof why) == NULL);
    pkt_series *s = pkt_series_create(x.net, 1e-6, 16, why, sizeof why);
    CHECK(s != NULL);
    CHECK(pkt_series_create(x.net, 1e-6, 16, why, sizeof why) == NULL); /* a second */
    CHECK_INT_EQ(pkt_series_finish(s, -1), -1);
    CHECK_INT_EQ(pkt_series_finish(s, 0), 0); /* an empty run: one bin of zeros */
    CHECK_INT_EQ(pkt_series_bins(s), 1);
    CHECK_INT_EQ(pkt_series_finish(s, 5), 0); /* idempotent */
    CHECK_INT_EQ(pkt_series_bins(s), 1);
    CHECK(pkt_series_link_values(s, PKS_VALUES, 0) == NULL);
    CHECK(pkt_series_link_counts(s, PKS_COUNTS, 0) == NULL);
    CHECK_INT_EQ(pkt_series_stored(s), 0); /* nothing moved: nothing stored */
    CHECK(pkt_series_link_values(s, PKS_QUEUE_MAX, 0)[0] == 0);
    pkt_series_destroy(s);
    pkt_net_use_engine_queue(x.net, 1);
    CHECK(pkt_series_create(x.net, 1e-6, 16, why, sizeof why) == NULL);
    pkt_series_destroy(NULL);
    /* the bound: 64 B per link and bin plus the per-link records */
    CHECK(pkt_series_bytes(100, 10) >= 100.0 * 10 * 64);
    rig_close(&x);
}

int main(void)
{
    test_closed_form();
    test_conservation();
    test_unchanged_and_merging();
    test_bad_input();
    return check_report();
}
