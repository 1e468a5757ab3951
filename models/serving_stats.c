/* serving_stats.c - the finished requests' latencies and their summaries
 * (serving.h: mean, P50/P90/P99 by nearest rank, max).
 *
 * Exact (serve_expected_requests <= exact_max_requests): every value kept
 * by arrival order, sorted at the end; 32 bytes per request. Otherwise a
 * histogram per metric, 1.4 MB whatever the run's length: bin 0 holds
 * [0, 2^-24 s), bin k >= 1 the doubles whose exponent and top 10 mantissa
 * bits are the k-th pattern from 2^-24 s up (relative width 2^-10), the last
 * bin everything from 2^20 s. A quantile is the upper edge of the bin that
 * holds the nearest-rank value, capped at the exact max: never below the
 * exact quantile and at most 2^-10 (0.098 %) above it (below 2^-24 s: at
 * most 60 ns above). Means (compensated sums) and maxima stay exact.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "serving_internal.h"

#define HIST_MIN_EXP (-24)
#define HIST_MAX_EXP 20
#define HIST_SHIFT (52 - SERVE_HIST_BITS)
#define HIST_BINS (1 + ((uint64_t)(HIST_MAX_EXP - HIST_MIN_EXP) << SERVE_HIST_BITS))

static uint64_t bits_of(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

static double double_of(uint64_t u)
{
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
}

static uint64_t hist_base(void) { return bits_of(ldexp(1, HIST_MIN_EXP)) >> HIST_SHIFT; }

static uint64_t bin_of(double v)
{
    if (!(v >= ldexp(1, HIST_MIN_EXP)))
        return 0;
    uint64_t k = (bits_of(v) >> HIST_SHIFT) - hist_base() + 1;
    return k < HIST_BINS ? k : HIST_BINS - 1;
}

/* the upper edge of bin k (the last bin: none; the caller caps at the max) */
static double bin_upper(uint64_t k)
{
    if (k == 0)
        return ldexp(1, HIST_MIN_EXP);
    if (k >= HIST_BINS - 1)
        return INFINITY;
    return double_of((k + hist_base()) << HIST_SHIFT);
}

int serve_stats_init(serve_stats *st, const serve_config *c)
{
    memset(st, 0, sizeof *st);
    uint64_t limit = c->exact_max_requests ? c->exact_max_requests : SERVE_EXACT_MAX_DEFAULT;
    st->exact = serve_expected_requests(c) <= (double)limit;
    st->n_metrics = serve_has_sessions(c) ? SERVE_METRICS_SPLIT : SERVE_METRICS;
    for (int m = 0; !st->exact && m < st->n_metrics; m++)
        if (!(st->bins[m] = calloc(HIST_BINS, sizeof *st->bins[m])))
            return -1;
    return 0;
}

void serve_stats_free(serve_stats *st)
{
    for (int m = 0; m < SERVE_METRICS_SPLIT; m++) {
        free(st->v[m]);
        free(st->bins[m]);
    }
    memset(st, 0, sizeof *st);
}

static int exact_reserve(serve_stats *st, uint64_t seq)
{
    if (seq < st->cap)
        return 0;
    uint64_t cap = st->cap ? 2 * st->cap : 1024;
    while (cap <= seq)
        cap *= 2;
    for (int m = 0; m < st->n_metrics; m++) {
        double *v = realloc(st->v[m], cap * sizeof *v);
        if (!v)
            return -1;
        for (uint64_t i = st->cap; i < cap; i++)
            v[i] = NAN;
        st->v[m] = v;
    }
    st->cap = cap;
    return 0;
}

static void hist_add(serve_stats *st, int m, double v)
{
    st->bins[m][bin_of(v)]++;
    st->n[m]++;
    double y = v - st->comp[m], t = st->sum[m] + y; /* Kahan */
    st->comp[m] = (t - st->sum[m]) - y;
    st->sum[m] = t;
    if (v > st->max[m])
        st->max[m] = v;
}

int serve_stats_add(serve_stats *st, const serve_config *c, const serve_req *q, int group)
{
    double ttft = q->first_token_s - q->arrival_s, e2e = q->end_s - q->arrival_s;
    double queue = q->first_sched_s - q->arrival_s;
    double tpot = q->output >= 2 ? (q->end_s - q->first_token_s) / (q->output - 1) : NAN;
    st->met += (!(c->slo_ttft_s > 0) || ttft <= c->slo_ttft_s) &&
               (!(c->slo_tpot_s > 0) || q->output < 2 || tpot <= c->slo_tpot_s);
    double v[SERVE_METRICS_SPLIT] = {ttft, tpot, e2e, queue, group == 0 ? ttft : NAN,
                                     group == 1 ? ttft : NAN};
    if (st->exact) {
        if (exact_reserve(st, q->seq))
            return -1;
        for (int m = 0; m < st->n_metrics; m++)
            st->v[m][q->seq] = v[m];
        return 0;
    }
    for (int m = 0; m < st->n_metrics; m++)
        if (!isnan(v[m]))
            hist_add(st, m, v[m]);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static uint64_t nearest_rank(double p, uint64_t n)
{
    double rank = ceil(p * n);
    return (uint64_t)(rank < 1 ? 1 : rank);
}

/* nearest rank: the smallest value with at least p of the values at or below it */
static void summarise_exact(double *v, uint64_t n, serve_latency *out)
{
    memset(out, 0, sizeof *out);
    if (!n)
        return;
    qsort(v, n, sizeof *v, cmp_double);
    double sum = 0;
    for (uint64_t i = 0; i < n; i++)
        sum += v[i];
    out->mean_s = sum / n;
    out->max_s = v[n - 1];
    for (unsigned k = 0; k < SERVE_QUANTILES; k++)
        out->q_s[k] = v[nearest_rank(serve_quantile_p[k], n) - 1];
}

static void summarise_hist(const serve_stats *st, int m, serve_latency *out)
{
    memset(out, 0, sizeof *out);
    uint64_t n = st->n[m];
    if (!n)
        return;
    out->mean_s = st->sum[m] / n;
    out->max_s = st->max[m];
    uint64_t seen = 0, k = 0;
    for (unsigned q = 0; q < SERVE_QUANTILES; q++) {
        uint64_t rank = nearest_rank(serve_quantile_p[q], n);
        while (seen + st->bins[m][k] < rank)
            seen += st->bins[m][k++];
        double up = bin_upper(k);
        out->q_s[q] = up < st->max[m] ? up : st->max[m];
    }
}

int serve_stats_summarise(serve_stats *st, uint64_t n_arrived, serve_result *o)
{
    serve_latency *lat[SERVE_METRICS_SPLIT] = {&o->ttft, &o->tpot, &o->e2e, &o->queue,
                                               &o->ttft_first, &o->ttft_followup};
    o->quantiles_exact = st->exact;
    if (!st->exact) {
        for (int m = 0; m < st->n_metrics; m++)
            summarise_hist(st, m, lat[m]);
        o->tpot_count = st->n[1];
        o->little_w = o->e2e.mean_s;
        o->quantile_rel_error = ldexp(1, -SERVE_HIST_BITS);
        return 0;
    }
    if (exact_reserve(st, n_arrived)) /* every arrival has its slot (NaN if none) */
        return -1;
    uint64_t n[SERVE_METRICS_SPLIT] = {0};
    double w_sum = 0; /* Little's W: by arrival order, before sorting */
    for (int m = 0; m < st->n_metrics; m++)
        for (uint64_t i = 0; i < n_arrived; i++)
            if (!isnan(st->v[m][i])) {
                if (m == 2)
                    w_sum += st->v[m][i];
                st->v[m][n[m]++] = st->v[m][i];
            }
    for (int m = 0; m < st->n_metrics; m++)
        summarise_exact(st->v[m], n[m], lat[m]);
    o->tpot_count = n[1];
    o->little_w = n[2] ? w_sum / n[2] : 0;
    o->quantile_rel_error = 0;
    return 0;
}

double serve_records_bytes(const serve_config *c)
{
    uint64_t limit = c->exact_max_requests ? c->exact_max_requests : SERVE_EXACT_MAX_DEFAULT;
    double n = serve_expected_requests(c);
    int metrics = serve_has_sessions(c) ? SERVE_METRICS_SPLIT : SERVE_METRICS;
    /* worst case, an overloaded fleet: every request waiting at once */
    double slots = n * (sizeof(serve_req) + sizeof(uint32_t) + (c->prefill_replicas ? 8 : 0));
    if (n <= (double)limit)
        return slots + n * metrics * sizeof(double);
    return slots + (double)metrics * HIST_BINS * sizeof(uint64_t);
}
