/* serveh5.c - `dcsim serve -o FILE.h5` (serveh5.h). Object timestamps are
 * off: the same run gives the same bytes. */
#include "serveh5.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>

#include "h5util.h"
#include "servekv.h"

#define SERVE_FORMAT_VERSION 1 /* the root attributes of every dcsim file */
#define SERVE_LAYOUT_VERSION "1"

typedef struct request_row {
    uint64_t seq;
    double arrival_s, first_token_s, finish_s;
    uint32_t prompt, output, replica, prefill_replica;
    int32_t prefix_hit, prefix_levels_hit, dropped;
} request_row;

/* sessions add their columns to every row (a run without has the table
 * it had) */
typedef struct request_session_row {
    request_row base;
    uint64_t session;
    uint32_t turn, context_tokens, truncated_tokens, hit_tokens;
    int32_t context_hit, refused;
} request_session_row;

typedef struct series_row {
    double t_s;
    uint64_t arrivals, finished, dropped, preemptions;
    double running, queued, transferring, kv_util;
} series_row;

/* swap preemption adds two counts to every bin (a recompute run's table is
 * what it was) */
typedef struct series_swap_row {
    series_row base;
    uint64_t swaps_out, swaps_in;
} series_swap_row;

static const char *const request_units[] = {"1", "s", "s", "s", "1", "1", "-", "-", "-", "1", "-",
                                            "-", "1", "1", "1", "1", "-", "-"};
static const char *const series_units[] = {"s", "1", "1", "1", "1", "1", "1", "1", "1", "1",
                                           "1"};

void serve_h5_rows_init(serve_h5_rows *rows, const serve_config *c)
{
    memset(rows, 0, sizeof *rows);
    double n = serve_expected_requests(c);
    rows->every = n <= (double)SERVE_H5_MAX_ROWS ? 1 : (uint64_t)ceil(n / SERVE_H5_MAX_ROWS);
}

void serve_h5_rows_free(serve_h5_rows *rows)
{
    free(rows->v);
    memset(rows, 0, sizeof *rows);
}

int serve_h5_on_request(void *ctx, const serve_request_info *info)
{
    serve_h5_rows *rows = ctx;
    if (info->seq % rows->every)
        return 0;
    if (rows->n == rows->cap) {
        uint64_t cap = rows->cap ? 2 * rows->cap : 1024;
        serve_request_info *v = realloc(rows->v, cap * sizeof *v);
        if (!v)
            return -1;
        rows->v = v;
        rows->cap = cap;
    }
    rows->v[rows->n++] = *info;
    return 0;
}

static int by_seq(const void *a, const void *b)
{
    uint64_t x = ((const serve_request_info *)a)->seq, y = ((const serve_request_info *)b)->seq;
    return (x > y) - (x < y);
}

static int put_requests(hid_t g, serve_h5_rows *rows, int sessions)
{
    qsort(rows->v, rows->n, sizeof *rows->v, by_seq); /* arrival order */
    size_t size = sessions ? sizeof(request_session_row) : sizeof(request_row);
    char *out = calloc(rows->n ? rows->n : 1, size);
    if (!out)
        return -1;
    for (uint64_t i = 0; i < rows->n; i++) {
        const serve_request_info *q = &rows->v[i];
        request_row *row = (request_row *)(out + i * size);
        *row = (request_row){q->seq, q->arrival_s, q->first_token_s, q->end_s, q->prompt,
                             q->output, q->replica, q->prefill_replica, q->prefix_hit,
                             q->prefix_levels_hit, q->dropped};
        if (sessions) {
            request_session_row *sr = (request_session_row *)row;
            sr->session = q->session;
            sr->turn = q->turn;
            sr->context_tokens = q->context_tokens;
            sr->truncated_tokens = q->truncated_tokens;
            sr->hit_tokens = q->hit_tokens;
            sr->context_hit = q->context_hit;
            sr->refused = q->refused;
        }
    }
    hid_t t = H5Tcreate(H5T_COMPOUND, size);
    H5Tinsert(t, "seq", HOFFSET(request_row, seq), H5T_NATIVE_UINT64);
    H5Tinsert(t, "arrival_s", HOFFSET(request_row, arrival_s), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "first_token_s", HOFFSET(request_row, first_token_s), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "finish_s", HOFFSET(request_row, finish_s), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "prompt", HOFFSET(request_row, prompt), H5T_NATIVE_UINT32);
    H5Tinsert(t, "output", HOFFSET(request_row, output), H5T_NATIVE_UINT32);
    H5Tinsert(t, "replica", HOFFSET(request_row, replica), H5T_NATIVE_UINT32);
    H5Tinsert(t, "prefill_replica", HOFFSET(request_row, prefill_replica), H5T_NATIVE_UINT32);
    H5Tinsert(t, "prefix_hit", HOFFSET(request_row, prefix_hit), H5T_NATIVE_INT32);
    H5Tinsert(t, "prefix_levels_hit", HOFFSET(request_row, prefix_levels_hit),
              H5T_NATIVE_INT32);
    H5Tinsert(t, "dropped", HOFFSET(request_row, dropped), H5T_NATIVE_INT32);
    if (sessions) {
        H5Tinsert(t, "session", HOFFSET(request_session_row, session), H5T_NATIVE_UINT64);
        H5Tinsert(t, "turn", HOFFSET(request_session_row, turn), H5T_NATIVE_UINT32);
        H5Tinsert(t, "context_tokens", HOFFSET(request_session_row, context_tokens),
                  H5T_NATIVE_UINT32);
        H5Tinsert(t, "truncated_tokens", HOFFSET(request_session_row, truncated_tokens),
                  H5T_NATIVE_UINT32);
        H5Tinsert(t, "hit_tokens", HOFFSET(request_session_row, hit_tokens), H5T_NATIVE_UINT32);
        H5Tinsert(t, "context_hit", HOFFSET(request_session_row, context_hit),
                  H5T_NATIVE_INT32);
        H5Tinsert(t, "refused", HOFFSET(request_session_row, refused), H5T_NATIVE_INT32);
    }
    int rc = h5_put_table(g, "requests", t, rows->n, out, request_units,
                       sessions ? 18 : 11,
                       sessions ? "one row per request (a turn of a session) in arrival order "
                                  "(every `sample_every`-th when the run expects more than "
                                  "`max_rows`): arrival, first token, finish (NaN when "
                                  "dropped), prompt tokens (prefix and kept context "
                                  "included), output tokens, the (decode) replica and the "
                                  "prefill replica (UINT32_MAX when dropped), whether its "
                                  "prefix was cached at its first admission, the levels of "
                                  "its prefix chain cached then, dropped; its session (0, 1, "
                                  "... in start order) and turn (1, 2, ...), the previous "
                                  "turns' tokens its prompt carries and those truncated to "
                                  "the context window, the prompt tokens not prefilled at its "
                                  "first admission, whether it found its session's context "
                                  "cached then, refused for the context window"
                                : "one row per request in arrival order (every "
                                  "`sample_every`-th when the run expects more than "
                                  "`max_rows`): arrival, first token, finish (NaN when "
                                  "dropped), prompt tokens (prefix included), output tokens, "
                                  "the (decode) replica and the prefill replica (UINT32_MAX "
                                  "when dropped), whether its prefix was cached at its first "
                                  "admission, the levels of its prefix chain cached then, "
                                  "dropped");
    H5Tclose(t);
    free(out);
    return rc;
}

static int put_series(hid_t g, const serve_config *c, const serve_result *r)
{
    int swap = c->preemption == SERVE_PREEMPT_SWAP;
    size_t size = swap ? sizeof(series_swap_row) : sizeof(series_row);
    char *rows = calloc(r->n_series ? r->n_series : 1, size);
    if (!rows)
        return -1;
    for (uint64_t i = 0; i < r->n_series; i++) {
        const serve_bin *b = &r->series[i];
        series_row *row = (series_row *)(rows + i * size);
        *row = (series_row){b->t_s, b->arrivals, b->finished, b->dropped, b->preemptions,
                            b->running, b->queued, b->transferring, b->kv_util};
        if (swap) {
            ((series_swap_row *)row)->swaps_out = b->swaps_out;
            ((series_swap_row *)row)->swaps_in = b->swaps_in;
        }
    }
    hid_t t = H5Tcreate(H5T_COMPOUND, size);
    H5Tinsert(t, "t_s", HOFFSET(series_row, t_s), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "arrivals", HOFFSET(series_row, arrivals), H5T_NATIVE_UINT64);
    H5Tinsert(t, "finished", HOFFSET(series_row, finished), H5T_NATIVE_UINT64);
    H5Tinsert(t, "dropped", HOFFSET(series_row, dropped), H5T_NATIVE_UINT64);
    H5Tinsert(t, "preemptions", HOFFSET(series_row, preemptions), H5T_NATIVE_UINT64);
    H5Tinsert(t, "running", HOFFSET(series_row, running), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "queued", HOFFSET(series_row, queued), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "transferring", HOFFSET(series_row, transferring), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "kv_util", HOFFSET(series_row, kv_util), H5T_NATIVE_DOUBLE);
    if (swap) {
        H5Tinsert(t, "swaps_out", HOFFSET(series_swap_row, swaps_out), H5T_NATIVE_UINT64);
        H5Tinsert(t, "swaps_in", HOFFSET(series_swap_row, swaps_in), H5T_NATIVE_UINT64);
    }
    int rc = h5_put_table(g, "series", t, r->n_series, rows, series_units,
                       swap ? 11 : 9,
                       swap ? "bins of `bin_s` from t = 0: requests arrived, finished, dropped "
                              "and preemptions in the bin; time-average requests running, "
                              "queued (swapped out included) and in KV transfer, the fleet's "
                              "used KV blocks / its blocks; requests swapped out and back in "
                              "in the bin"
                            : "bins of `bin_s` from t = 0: requests arrived, finished, dropped "
                              "and preemptions in the bin; time-average requests running, "
                              "queued and in KV transfer, and the fleet's used KV blocks / its "
                              "blocks");
    H5Tclose(t);
    free(rows);
    return rc;
}

/* swap preemption's totals (only under it) */
static int put_swap_attrs(hid_t g, const serve_result *r)
{
    return h5_attr_text(g, "preemption", "swap") ||
           h5_attr_scalar(g, "swaps_out", H5T_NATIVE_UINT64, &r->swaps_out) ||
           h5_attr_scalar(g, "swaps_in", H5T_NATIVE_UINT64, &r->swaps_in) ||
           h5_attr_scalar(g, "swap_fallbacks", H5T_NATIVE_UINT64, &r->swap_fallbacks) ||
           h5_attr_scalar(g, "swap_out_bytes", H5T_NATIVE_DOUBLE, &r->swap_out_bytes) ||
           h5_attr_scalar(g, "swap_in_bytes", H5T_NATIVE_DOUBLE, &r->swap_in_bytes) ||
           h5_attr_scalar(g, "swap_time_s", H5T_NATIVE_DOUBLE, &r->swap_time_s);
}

/* multi-turn sessions' totals (only with sessions of more than one turn) */
static int put_session_attrs(hid_t g, const serve_result *r)
{
    return h5_attr_scalar(g, "sessions", H5T_NATIVE_UINT64, &r->sessions) ||
           h5_attr_scalar(g, "followups", H5T_NATIVE_UINT64, &r->followups) ||
           h5_attr_scalar(g, "followups_admitted", H5T_NATIVE_UINT64, &r->followups_admitted) ||
           h5_attr_scalar(g, "followup_hits", H5T_NATIVE_UINT64, &r->followup_hits) ||
           h5_attr_scalar(g, "followup_context_tokens", H5T_NATIVE_DOUBLE,
                          &r->followup_context_tokens) ||
           h5_attr_scalar(g, "followup_hit_tokens", H5T_NATIVE_DOUBLE, &r->followup_hit_tokens) ||
           h5_attr_scalar(g, "sessions_finished", H5T_NATIVE_UINT64, &r->sessions_finished) ||
           h5_attr_scalar(g, "sessions_cut", H5T_NATIVE_UINT64, &r->sessions_cut) ||
           h5_attr_scalar(g, "turns_truncated", H5T_NATIVE_UINT64, &r->turns_truncated) ||
           h5_attr_scalar(g, "turns_refused", H5T_NATIVE_UINT64, &r->turns_refused) ||
           h5_attr_scalar(g, "truncated_tokens", H5T_NATIVE_DOUBLE, &r->truncated_tokens);
}

/* the disaggregated pools' KV transfers (a colocated run's attributes are
 * what they were): the medium and the figures of --json "disaggregated" */
static int put_transfer_attrs(hid_t g, const scn_scenario *s, const serve_config *c,
                              const serve_result *r)
{
    char medium[512];
    serve_kv_medium(s, c, medium, sizeof medium);
    const struct { const char *name; const double *v; } d[] = {
        {"transfer_bytes", &r->transfer_bytes}, {"transfer_mean_s", &r->transfer_mean_s},
        {"transfer_p50_s", &r->transfer_p50_s}, {"transfer_p99_s", &r->transfer_p99_s},
        {"transfer_max_s", &r->transfer_max_s}, {"transfer_route_s", &r->transfer_route_s},
        {"transfer_shared_s", &r->transfer_shared_s}};
    int rc = h5_attr_text(g, "transfer_medium_kind", serve_kv_medium_kind(c)) ||
             h5_attr_text(g, "transfer_medium", medium) ||
             h5_attr_scalar(g, "transfers", H5T_NATIVE_UINT64, &r->transfers) ||
             h5_attr_scalar(g, "transfers_in_flight_max", H5T_NATIVE_UINT64,
                            &r->transfers_in_flight_max);
    for (size_t i = 0; !rc && i < sizeof d / sizeof d[0]; i++)
        rc = h5_attr_scalar(g, d[i].name, H5T_NATIVE_DOUBLE, d[i].v);
    return rc;
}

static int put_attrs(hid_t g, const scn_scenario *s, const serve_config *c,
                     const serve_result *r, const serve_h5_rows *rows)
{
    uint64_t max_rows = SERVE_H5_MAX_ROWS;
    double gpus = serve_gpus(c);
    return h5_attr_text(g, "model", c->arch.name) ||
           h5_attr_text(g, "router", serve_router_name(c->router)) ||
           h5_attr_scalar(g, "replicas", H5T_NATIVE_UINT32, &c->replicas) ||
           h5_attr_scalar(g, "tp", H5T_NATIVE_UINT32, &c->tp) ||
           h5_attr_scalar(g, "prefill_replicas", H5T_NATIVE_UINT32, &c->prefill_replicas) ||
           h5_attr_scalar(g, "prefill_tp", H5T_NATIVE_UINT32, &c->prefill_tp) ||
           h5_attr_scalar(g, "gpus", H5T_NATIVE_DOUBLE, &gpus) ||
           h5_attr_scalar(g, "arrived", H5T_NATIVE_UINT64, &r->arrived) ||
           h5_attr_scalar(g, "finished", H5T_NATIVE_UINT64, &r->finished) ||
           h5_attr_scalar(g, "dropped", H5T_NATIVE_UINT64, &r->dropped) ||
           h5_attr_scalar(g, "end_s", H5T_NATIVE_DOUBLE, &r->end_s) ||
           h5_attr_scalar(g, "bin_s", H5T_NATIVE_DOUBLE, &c->series_bin_s) ||
           h5_attr_scalar(g, "max_rows", H5T_NATIVE_UINT64, &max_rows) ||
           h5_attr_scalar(g, "sample_every", H5T_NATIVE_UINT64, &rows->every) ||
           h5_attr_text(g, "layout_version", SERVE_LAYOUT_VERSION) ||
           (c->preemption == SERVE_PREEMPT_SWAP && put_swap_attrs(g, r)) ||
           (serve_has_sessions(c) && put_session_attrs(g, r)) ||
           (c->prefill_replicas && put_transfer_attrs(g, s, c, r));
}

int serve_h5_write(outpath *op, const scn_scenario *s, const serve_config *c,
                   const serve_result *r, serve_h5_rows *rows, const char *command,
                   sim_error *err)
{
    hid_t f = h5_create_file(op, err);
    if (f < 0)
        return SIM_ERR_IO;
    const char *failed = NULL;
    hid_t g = h5_create_group(f, "serve");
    if (g < 0)
        failed = "creating /serve";
    else if (put_attrs(g, s, c, r, rows))
        failed = "writing /serve's attributes";
    else if (put_requests(g, rows, serve_has_sessions(c)))
        failed = "writing /serve/requests";
    else if (put_series(g, c, r))
        failed = "writing /serve/series";
    if (g >= 0)
        H5Gclose(g);
    /* no event digest: the serving tier keeps none (the summary is the check) */
    h5_root root = {SERVE_FORMAT_VERSION, s->seed, "", 0, s->name, s->source};
    if (!failed && (h5_put_root(f, &root) || h5_attr_text(f, "command", command) ||
                    h5_attr_text(f, "kind", "serve")))
        failed = "writing the root attributes";
    return h5_finish_file(op, f, failed, err);
}
