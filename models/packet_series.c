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

/* one stored link's columns, rows_cap rows each */
typedef struct stored_col {
    double *v[PKS_VALUES];
    uint64_t *c[PKS_COUNTS];
} stored_col;

#define NOT_STORED UINT32_MAX

struct pkt_series {
    pkt_net *net;             /* NULL once finished */
    uint32_t n_links, max_bins, n_bins, rows_cap, merges;
    uint32_t n_stored, stored_cap;
    int has_failed;           /* out of memory while sampling */
    double t0, dt, edge;      /* edge: the open bin's end, t0 + (n_bins + 1) dt */
    uint32_t *slot;           /* per link: its column, or NOT_STORED */
    uint32_t *stored;         /* per column: its link (ascending once finished) */
    stored_col *col;
    double *zero_v;           /* rows_cap zeros: an idle link's columns */
    uint64_t *zero_c;
    link_mark *mark;
    pkt_link_stats *end;      /* at finish */
};

double pkt_series_bytes(uint32_t n_links, uint32_t max_bins)
{
    double per_bin = PKS_VALUES * sizeof(double) + PKS_COUNTS * sizeof(uint64_t);
    return (double)n_links * ((double)max_bins * per_bin + sizeof(link_mark) +
                              sizeof(pkt_link_stats) + sizeof(stored_col) +
                              2 * sizeof(uint32_t)) + 2.0 * max_bins * sizeof(double);
}

static int grow_col(stored_col *k, uint32_t rows)
{
    for (int v = 0; v < PKS_VALUES; v++) {
        double *p = realloc(k->v[v], rows * sizeof *p);
        if (!p)
            return -1;
        k->v[v] = p;
    }
    for (int c = 0; c < PKS_COUNTS; c++) {
        uint64_t *p = realloc(k->c[c], rows * sizeof *p);
        if (!p)
            return -1;
        k->c[c] = p;
    }
    return 0;
}

static void free_col(stored_col *k)
{
    for (int v = 0; v < PKS_VALUES; v++)
        free(k->v[v]);
    for (int c = 0; c < PKS_COUNTS; c++)
        free(k->c[c]);
}

/* Every column (and the zero columns) to rows rows: O(stored) reallocs. */
static int grow_rows(pkt_series *s, uint32_t rows)
{
    if (rows <= s->rows_cap)
        return 0;
    double *zv = calloc(rows, sizeof *zv);
    uint64_t *zc = calloc(rows, sizeof *zc);
    if (!zv || !zc) {
        free(zv);
        free(zc);
        return -1;
    }
    free(s->zero_v);
    free(s->zero_c);
    s->zero_v = zv;
    s->zero_c = zc;
    for (uint32_t j = 0; j < s->n_stored; j++)
        if (grow_col(&s->col[j], rows))
            return -1;
    s->rows_cap = rows;
    return 0;
}

/* Store link l from now: a column of rows_cap rows, zeros in the n_bins
 * closed ones (it was idle in them). 0 or -1 (out of memory). */
static int store_link(pkt_series *s, uint32_t l)
{
    if (s->n_stored == s->stored_cap) {
        uint32_t cap = s->stored_cap ? 2 * s->stored_cap : 16;
        stored_col *c = realloc(s->col, cap * sizeof *c);
        if (c)
            s->col = c;
        uint32_t *id = c ? realloc(s->stored, cap * sizeof *id) : NULL;
        if (!id)
            return -1;
        s->stored = id;
        s->stored_cap = cap;
    }
    stored_col *k = &s->col[s->n_stored];
    memset(k, 0, sizeof *k);
    if (grow_col(k, s->rows_cap)) {
        free_col(k);
        return -1;
    }
    for (int v = 0; v < PKS_VALUES; v++)
        memset(k->v[v], 0, (size_t)s->n_bins * sizeof(double));
    for (int c = 0; c < PKS_COUNTS; c++)
        memset(k->c[c], 0, (size_t)s->n_bins * sizeof(uint64_t));
    s->stored[s->n_stored] = l;
    s->slot[l] = s->n_stored++;
    return 0;
}

pkt_series *pkt_series_create(pkt_net *net, double dt_s, uint32_t max_bins, char *why,
                              size_t why_size)
{
    if (!net || net->series || net->use_engine) {
        pkt_say(why, why_size, "packet series: needs a net without a series, on the tier's queue");
        return NULL;
    }
    if (net->df) { /* its links' records are per virtual channel */
        pkt_say(why, why_size, "packet series: not with per-packet routing on a Dragonfly");
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
        s->slot = malloc(((size_t)nl + 1) * sizeof *s->slot);
    }
    if (!s || !s->mark || !s->slot || grow_rows(s, max_bins < 16 ? max_bins : 16)) {
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
        s->slot[l] = NOT_STORED;
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
    uint32_t half = s->n_bins / 2;
    for (uint32_t i = 0; i < s->n_stored; i++) {
        stored_col *k = &s->col[i];
        for (uint32_t j = 0; j < half; j++) {
            uint32_t a = 2 * j, b = a + 1;
            k->v[PKS_SENT_BYTES][j] = k->v[PKS_SENT_BYTES][a] + k->v[PKS_SENT_BYTES][b];
            k->v[PKS_QUEUE_MAX][j] = fmax(k->v[PKS_QUEUE_MAX][a], k->v[PKS_QUEUE_MAX][b]);
            k->v[PKS_HELD_MAX][j] = fmax(k->v[PKS_HELD_MAX][a], k->v[PKS_HELD_MAX][b]);
            k->v[PKS_QUEUE_END][j] = k->v[PKS_QUEUE_END][b];
            k->v[PKS_HELD_END][j] = k->v[PKS_HELD_END][b];
            for (int c = 0; c < PKS_COUNTS; c++)
                k->c[c][j] = k->c[c][a] + k->c[c][b];
        }
    }
    s->n_bins = half;
    s->dt *= 2;
    s->merges++;
}

/* Close the open bin into row n_bins (the caller made room). A link not
 * stored yet whose counters did not move and that held nothing in the bin
 * has a row of zeros: it stays unstored. -1 when out of memory. */
static int close_bin(pkt_series *s)
{
    pkt_net *net = s->net;
    uint32_t row = s->n_bins;
    for (uint32_t l = 0; l < s->n_links; l++) {
        pkt_link *k = &net->links[l];
        link_mark *m = &s->mark[l];
        if (s->slot[l] == NOT_STORED) {
            int is_idle = k->bytes_sent == m->bytes && k->sent == m->counts[PKS_PACKETS] &&
                          k->pauses == m->counts[PKS_PAUSES] &&
                          k->marks == m->counts[PKS_MARKS] && k->queued == 0 && k->held == 0 &&
                          k->win_queued == 0 && k->win_held == 0;
            if (is_idle)
                continue;
            if (store_link(s, l))
                return -1;
        }
        stored_col *c = &s->col[s->slot[l]];
        c->v[PKS_SENT_BYTES][row] = k->bytes_sent - m->bytes;
        c->v[PKS_QUEUE_END][row] = k->queued;
        c->v[PKS_QUEUE_MAX][row] = k->win_queued;
        c->v[PKS_HELD_END][row] = k->held;
        c->v[PKS_HELD_MAX][row] = k->win_held;
        c->c[PKS_PACKETS][row] = k->sent - m->counts[PKS_PACKETS];
        c->c[PKS_PAUSES][row] = k->pauses - m->counts[PKS_PAUSES];
        c->c[PKS_MARKS][row] = k->marks - m->counts[PKS_MARKS];
        m->bytes = k->bytes_sent;
        m->counts[PKS_PACKETS] = k->sent;
        m->counts[PKS_PAUSES] = k->pauses;
        m->counts[PKS_MARKS] = k->marks;
        k->win_queued = k->queued;
        k->win_held = k->held;
    }
    s->n_bins++;
    return 0;
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
        if (make_room(s) || close_bin(s)) { /* out of memory: sampling stops, finish fails */
            s->has_failed = 1;
            s->net->series_edge = INFINITY;
            return;
        }
        if (s->n_bins == s->max_bins)
            merge_pairs(s);
        s->edge = s->t0 + (double)(s->n_bins + 1) * s->dt;
    }
    s->net->series_edge = s->edge;
}

/* Links whose end counters are not zero (they moved before the series
 * began) are stored too; then the columns go in ascending link order. */
static int store_in_order(pkt_series *s)
{
    for (uint32_t l = 0; l < s->n_links; l++) {
        pkt_link_stats e = s->end[l];
        if (s->slot[l] == NOT_STORED && (e.packets_sent || e.bytes_sent != 0 || e.pauses ||
                                         e.ecn_marks || e.max_queued_bytes != 0 ||
                                         e.max_held_bytes != 0) && store_link(s, l))
            return -1;
    }
    stored_col *col = malloc(((size_t)s->n_stored + 1) * sizeof *col);
    if (!col)
        return -1;
    for (uint32_t l = 0, j = 0; l < s->n_links; l++)
        if (s->slot[l] != NOT_STORED) {
            col[j] = s->col[s->slot[l]];
            s->stored[j] = l;
            s->slot[l] = j++;
        }
    free(s->col);
    s->col = col;
    s->stored_cap = s->n_stored;
    return 0;
}

int pkt_series_finish(pkt_series *s, double end_s)
{
    if (!s->net)
        return 0;
    if (!(end_s >= s->t0) || !isfinite(end_s))
        return -1;
    pkt_series_advance(s, end_s);
    if (s->has_failed || make_room(s) || close_bin(s)) /* the bin holding end_s */
        return -1;
    pkt_net *net = s->net;
    s->end = calloc((size_t)s->n_links + 1, sizeof *s->end);
    if (!s->end)
        return -1;
    for (uint32_t l = 0; l < s->n_links; l++)
        s->end[l] = pkt_net_link_stats(net, l);
    if (store_in_order(s))
        return -1;
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
    for (uint32_t j = 0; j < s->n_stored; j++)
        free_col(&s->col[j]);
    free(s->col);
    free(s->stored);
    free(s->slot);
    free(s->zero_v);
    free(s->zero_c);
    free(s->mark);
    free(s->end);
    free(s);
}

uint32_t pkt_series_links(const pkt_series *s) { return s->n_links; }
uint32_t pkt_series_bins(const pkt_series *s) { return s->n_bins; }
double pkt_series_dt(const pkt_series *s) { return s->dt; }
double pkt_series_t0(const pkt_series *s) { return s->t0; }
uint32_t pkt_series_merges(const pkt_series *s) { return s->merges; }
uint32_t pkt_series_stored(const pkt_series *s) { return s->n_stored; }

uint32_t pkt_series_stored_link(const pkt_series *s, uint32_t j)
{
    return j < s->n_stored ? s->stored[j] : UINT32_MAX;
}

const double *pkt_series_link_values(const pkt_series *s, enum pkt_series_value v, uint32_t l)
{
    if ((unsigned)v >= PKS_VALUES || l >= s->n_links)
        return NULL;
    return s->slot[l] == NOT_STORED ? s->zero_v : s->col[s->slot[l]].v[v];
}

const uint64_t *pkt_series_link_counts(const pkt_series *s, enum pkt_series_count c, uint32_t l)
{
    if ((unsigned)c >= PKS_COUNTS || l >= s->n_links)
        return NULL;
    return s->slot[l] == NOT_STORED ? s->zero_c : s->col[s->slot[l]].c[c];
}

pkt_link_stats pkt_series_link_end(const pkt_series *s, uint32_t l)
{
    pkt_link_stats z;
    memset(&z, 0, sizeof z);
    return s->end && l < s->n_links ? s->end[l] : z;
}
