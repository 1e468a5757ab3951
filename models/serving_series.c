/* serving_series.c - what a serving run hands out besides its summary
 * (serving.h): the time series in bins of series_bin_s and every request's
 * record at its end (on_request).
 *
 * Bin k covers [k b, (k + 1) b): arrivals, finished, dropped and
 * preemptions are counted in the bin of their time; running, queued and
 * in-transfer requests and the fleet's KV use are integrated over time
 * (serve_series_note at every change, its own clock: the summary's
 * integrals are not touched, so a run gives the same results with or
 * without a series) and divided by the bin's width (the last bin's part
 * before the end).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "serving_internal.h"

static int reserve_bins(serve_sim *s, uint64_t k)
{
    if (k < s->n_bins)
        return 0;
    if (k >= s->cap_bins) {
        uint64_t cap = s->cap_bins ? 2 * s->cap_bins : 256;
        while (cap <= k)
            cap *= 2;
        serve_bin *b = realloc(s->bins, cap * sizeof *b);
        if (!b)
            return -1;
        s->bins = b;
        s->cap_bins = cap;
    }
    for (uint64_t i = s->n_bins; i <= k; i++) {
        memset(&s->bins[i], 0, sizeof s->bins[i]);
        s->bins[i].t_s = (double)i * s->c->series_bin_s;
    }
    s->n_bins = k + 1;
    return 0;
}

static uint64_t bin_of(const serve_sim *s, double t)
{
    double k = floor(t / s->c->series_bin_s);
    return k > 0 ? (uint64_t)k : 0;
}

void serve_series_note_on(serve_sim *s)
{
    double b = s->c->series_bin_s;
    if (!(b > 0) || s->failed)
        return;
    double now = sim_now(s->eng), t = s->series_last_t;
    if (!(now > t))
        return;
    if (reserve_bins(s, bin_of(s, now))) {
        s->failed = 1;
        sim_stop(s->eng);
        return;
    }
    double kv = s->blocks_used_fleet / s->blocks_fleet_total;
    while (t < now) {
        uint64_t k = bin_of(s, t);
        double end = (double)(k + 1) * b, dt = (end < now ? end : now) - t;
        serve_bin *bn = &s->bins[k];
        bn->running += (double)s->n_running * dt;
        bn->queued += (double)s->n_queued * dt;
        bn->transferring += (double)s->n_transferring * dt;
        bn->kv_util += kv * dt;
        t = end < now ? end : now;
    }
    s->series_last_t = now;
}

int serve_series_count_on(serve_sim *s, int what)
{
    if (!(s->c->series_bin_s > 0))
        return 0;
    uint64_t k = bin_of(s, sim_now(s->eng));
    if (reserve_bins(s, k))
        return -1;
    serve_bin *b = &s->bins[k];
    uint64_t *count[] = {&b->arrivals, &b->finished, &b->dropped, &b->preemptions,
                         &b->swaps_out, &b->swaps_in};
    (*count[what])++;
    return 0;
}

int serve_series_finish(serve_sim *s, serve_result *o)
{
    if (!(s->c->series_bin_s > 0))
        return 0;
    serve_series_note(s);
    if (s->failed || reserve_bins(s, bin_of(s, s->series_last_t)))
        return -1;
    double b = s->c->series_bin_s, end = s->series_last_t;
    for (uint64_t k = 0; k < s->n_bins; k++) {
        serve_bin *bn = &s->bins[k];
        double w = end - bn->t_s < b ? end - bn->t_s : b;
        if (w > 0) {
            bn->running /= w;
            bn->queued /= w;
            bn->transferring /= w;
            bn->kv_util /= w;
        }
    }
    o->series = s->bins;
    o->n_series = s->n_bins;
    s->bins = NULL;
    s->n_bins = s->cap_bins = 0;
    return 0;
}

int serve_report_request_on(serve_sim *s, const serve_req *q)
{
    const serve_config *c = s->c;
    int dropped = q->state == REQ_DROPPED;
    serve_request_info info = {
        .seq = q->seq, .arrival_s = q->arrival_s,
        .first_token_s = dropped ? NAN : q->first_token_s, .end_s = dropped ? NAN : q->end_s,
        .prompt = q->orig_prompt, .output = q->output,
        .replica = dropped ? SERVE_NONE : q->replica,
        .prefill_replica = dropped ? SERVE_NONE : s->ext ? serve_ext(s, q)->prefill_replica
                                                         : q->replica,
        .prefix_hit = q->prefix_hit > 0,
        .prefix_levels_hit = q->prefix_hit, .dropped = dropped};
    if (s->sessions_on) {
        const serve_req_ext *x = serve_ext(s, q);
        info.session = x->session_id;
        info.turn = x->turn;
        info.context_tokens = x->context;
        info.truncated_tokens = x->truncated;
        info.hit_tokens = x->hit_tokens;
        info.context_hit = x->context_hit;
        info.refused = x->refused;
    }
    return c->on_request(c->request_ctx, &info) ? -1 : 0;
}

void serve_result_free(serve_result *r)
{
    if (!r)
        return;
    free(r->series);
    r->series = NULL;
    r->n_series = 0;
}
