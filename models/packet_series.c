/* packet_series.c - per-link time series of a packet-tier net (see
 * packet_series.h for the bins and why sampling leaves the run unchanged).
 *
 * State: the closed bins' columns ([bins][links], grown by doubling up to
 * max_bins rows), and per link the counters at the last close (deltas are
 * differences of whole numbers below 2^53: exact). The open bin's maxima
 * live in the net's links (win_queued, win_held): a close reads them and
 * resets them to the current value, the open bin's first value.
 */
#include "packet_series.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "packet_internal.h"

typedef struct link_mark {
    double bytes;             /* bytes_sent at the last close */
    uint64_t counts[PKS_COUNTS];
} link_mark;

struct pkt_series {
    pkt_net *net;             /* NULL once finished */
    uint32_t n_links, max_bins, n_bins, rows_cap, merges;
    int has_failed;           /* out of memory while sampling */
    double t0, dt, edge;      /* edge: the open bin's end, t0 + (n_bins + 1) dt */
    double *values[PKS_VALUES];
    uint64_t *counts[PKS_COUNTS];
    link_mark *mark;
    pkt_link_stats *end;      /* at finish */
};

double pkt_series_bytes(uint32_t n_links, uint32_t max_bins)
{
    double per_bin = PKS_VALUES * sizeof(double) + PKS_COUNTS * sizeof(uint64_t);
    return (double)n_links * ((double)max_bins * per_bin + sizeof(link_mark) +
                              sizeof(pkt_link_stats));
}

static int grow_rows(pkt_series *s, uint32_t rows)
{
    if (rows <= s->rows_cap)
        return 0;
    size_t n = (size_t)rows * s->n_links;
    for (int v = 0; v < PKS_VALUES; v++) {
        double *p = realloc(s->values[v], (n ? n : 1) * sizeof *p);
        if (!p)
            return -1;
        s->values[v] = p;
    }
    for (int c = 0; c < PKS_COUNTS; c++) {
        uint64_t *p = realloc(s->counts[c], (n ? n : 1) * sizeof *p);
        if (!p)
            return -1;
        s->counts[c] = p;
    }
    s->rows_cap = rows;
    return 0;
}

pkt_series *pkt_series_create(pkt_net *net, double dt_s, uint32_t max_bins, char *why,
                              size_t why_size)
{
    if (!net || net->series || net->use_engine) {
        pkt_say(why, why_size, "packet series: needs a net without a series, on the tier's queue");
        return NULL;
    }
    if (!(dt_s > 0) || !isfinite(dt_s) || max_bins < 2 || max_bins % 2) {
        pkt_say(why, why_size, "packet series: dt must be positive and finite, max_bins even "
                           "and >= 2");
        return NULL;
    }
    pkt_series *s = calloc(1, sizeof *s);
    uint32_t nl = net->g->n_links;
    if (s) {
        s->n_links = nl;
        s->mark = calloc((size_t)nl + 1, sizeof *s->mark);
    }
    if (!s || !s->mark || grow_rows(s, max_bins < 16 ? max_bins : 16)) {
        pkt_series_destroy(s);
        pkt_say(why, why_size, "packet series: out of memory");
        return NULL;
    }
    s->net = net;
    s->max_bins = max_bins;
    s->dt = dt_s;
    s->t0 = sim_now(net->eng);
    s->edge = s->t0 + dt_s;
    for (uint32_t l = 0; l < nl; l++) { /* the open bin starts at the values now */
        pkt_link *k = &net->links[l];
        k->win_queued = k->queued;
        k->win_held = k->held;
        s->mark[l].bytes = k->bytes_sent;
        s->mark[l].counts[PKS_PACKETS] = k->sent;
        s->mark[l].counts[PKS_PAUSES] = k->pauses;
        s->mark[l].counts[PKS_MARKS] = k->marks;
    }
    net->series = s;
    net->series_edge = s->edge;
    return s;
}

/* Bins 2j and 2j+1 into j; dt doubles. n_bins is even (== max_bins). */
static void merge_pairs(pkt_series *s)
{
    uint32_t nl = s->n_links, half = s->n_bins / 2;
    for (uint32_t j = 0; j < half; j++) {
        size_t to = (size_t)j * nl, a = (size_t)2 * j * nl, b = a + nl;
        for (uint32_t l = 0; l < nl; l++) {
            double *v;
            v = s->values[PKS_SENT_BYTES];
            v[to + l] = v[a + l] + v[b + l];
            v = s->values[PKS_QUEUE_MAX];
            v[to + l] = fmax(v[a + l], v[b + l]);
            v = s->values[PKS_HELD_MAX];
            v[to + l] = fmax(v[a + l], v[b + l]);
            v = s->values[PKS_QUEUE_END];
            v[to + l] = v[b + l];
            v = s->values[PKS_HELD_END];
            v[to + l] = v[b + l];
            for (int c = 0; c < PKS_COUNTS; c++)
                s->counts[c][to + l] = s->counts[c][a + l] + s->counts[c][b + l];
        }
    }
    s->n_bins = half;
    s->dt *= 2;
    s->merges++;
}

/* Close the open bin into row n_bins (the caller made room). */
static void close_bin(pkt_series *s)
{
    pkt_net *net = s->net;
    size_t row = (size_t)s->n_bins * s->n_links;
    for (uint32_t l = 0; l < s->n_links; l++) {
        pkt_link *k = &net->links[l];
        link_mark *m = &s->mark[l];
        s->values[PKS_SENT_BYTES][row + l] = k->bytes_sent - m->bytes;
        s->values[PKS_QUEUE_END][row + l] = k->queued;
        s->values[PKS_QUEUE_MAX][row + l] = k->win_queued;
        s->values[PKS_HELD_END][row + l] = k->held;
        s->values[PKS_HELD_MAX][row + l] = k->win_held;
        s->counts[PKS_PACKETS][row + l] = k->sent - m->counts[PKS_PACKETS];
        s->counts[PKS_PAUSES][row + l] = k->pauses - m->counts[PKS_PAUSES];
        s->counts[PKS_MARKS][row + l] = k->marks - m->counts[PKS_MARKS];
        m->bytes = k->bytes_sent;
        m->counts[PKS_PACKETS] = k->sent;
        m->counts[PKS_PAUSES] = k->pauses;
        m->counts[PKS_MARKS] = k->marks;
        k->win_queued = k->queued;
        k->win_held = k->held;
    }
    s->n_bins++;
}

/* Room for row n_bins (< max_bins); -1 when out of memory. */
static int make_room(pkt_series *s)
{
    if (s->n_bins < s->rows_cap)
        return 0;
    return grow_rows(s, s->rows_cap * 2 < s->max_bins ? s->rows_cap * 2 : s->max_bins);
}

void pkt_series_advance(pkt_series *s, double t_s)
{
    if (!s->net)
        return;
    while (t_s > s->edge) {
        if (make_room(s)) { /* out of memory: sampling stops, finish fails */
            s->has_failed = 1;
            s->net->series_edge = INFINITY;
            return;
        }
        close_bin(s);
        if (s->n_bins == s->max_bins)
            merge_pairs(s);
        s->edge = s->t0 + (double)(s->n_bins + 1) * s->dt;
    }
    s->net->series_edge = s->edge;
}

int pkt_series_finish(pkt_series *s, double end_s)
{
    if (!s->net)
        return 0;
    if (!(end_s >= s->t0) || !isfinite(end_s))
        return -1;
    pkt_series_advance(s, end_s);
    if (s->has_failed || make_room(s))
        return -1;
    close_bin(s); /* the bin holding end_s: at most max_bins rows */
    pkt_net *net = s->net;
    s->end = calloc((size_t)s->n_links + 1, sizeof *s->end);
    if (!s->end)
        return -1;
    for (uint32_t l = 0; l < s->n_links; l++)
        s->end[l] = pkt_net_link_stats(net, l);
    net->series = NULL;
    net->series_edge = INFINITY;
    s->net = NULL;
    return 0;
}

void pkt_series_detach_net(pkt_series *s)
{
    s->net = NULL;
    s->has_failed = 1;
}

void pkt_series_destroy(pkt_series *s)
{
    if (!s)
        return;
    if (s->net) {
        s->net->series = NULL;
        s->net->series_edge = INFINITY;
    }
    for (int v = 0; v < PKS_VALUES; v++)
        free(s->values[v]);
    for (int c = 0; c < PKS_COUNTS; c++)
        free(s->counts[c]);
    free(s->mark);
    free(s->end);
    free(s);
}

uint32_t pkt_series_links(const pkt_series *s) { return s->n_links; }
uint32_t pkt_series_bins(const pkt_series *s) { return s->n_bins; }
double pkt_series_dt(const pkt_series *s) { return s->dt; }
double pkt_series_t0(const pkt_series *s) { return s->t0; }
uint32_t pkt_series_merges(const pkt_series *s) { return s->merges; }

const double *pkt_series_values(const pkt_series *s, enum pkt_series_value v)
{
    return (unsigned)v < PKS_VALUES ? s->values[v] : NULL;
}

const uint64_t *pkt_series_counts(const pkt_series *s, enum pkt_series_count c)
{
    return (unsigned)c < PKS_COUNTS ? s->counts[c] : NULL;
}

pkt_link_stats pkt_series_link_end(const pkt_series *s, uint32_t l)
{
    pkt_link_stats z;
    memset(&z, 0, sizeof z);
    return s->end && l < s->n_links ? s->end[l] : z;
}
