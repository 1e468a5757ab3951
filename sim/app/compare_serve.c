/* compare_serve.c - `dcsim compare` and `dcsim sweep` over serving
 * scenarios (compare_serve.h). Each variant is loaded as dcsim serve loads
 * it (SCN_LOAD_SERVING, its --set and --vary values), put at its --vary
 * site, readied by serve_prepare and run by serve_simulate, priced by
 * serve_cost_at_site: the functions dcsim serve calls, so a variant's
 * figures are the numbers `dcsim serve --set ... --json` prints. Loading
 * is sequential (the loader is not shared between threads); the
 * simulations run in parallel, each into its own slot; the table is their
 * figures and each one's difference against the first variant.
 */
#include "compare_serve.h"
#include "compare_table.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <libxml/tree.h>

#include "cli.h"
#include "jsonout.h"
#include "outpath.h"
#include "resources.h"
#include "serve.h"
#include "servecost.h"
#include "servesessions.h"
#include "summary.h"
#include "trace.h"

/* The columns, in the SI unit (or count) their name ends with, named as
 * dcsim serve --csv names them. Those from SITE_COL on exist only at a
 * <site> (serve's "cost" object). */
enum { C_ARRIVED, C_FINISHED, C_DROPPED, C_PREEMPT, C_END, C_TTFT50, C_TTFT90, C_TTFT99,
       C_TPOT50, C_TPOT90, C_TPOT99, C_E2E50, C_E2E90, C_E2E99, C_REQ, C_TOK, C_GOOD, C_SLO,
       C_KV, C_KV_MAX, C_BUSY, C_GPUS, C_SWAP_OUT, C_SWAP_IN, C_SWAP_FALLBACK, C_SWAP_OUT_B,
       C_SWAP_IN_B, C_SWAP_TIME, C_HOST_MAX, C_FAC, C_COST, C_CO2, C_KWH_MTOK, C_COST_MTOK,
       C_CO2_MTOK, N_COLS };
#define SITE_COL C_FAC
static const char *const col_names[N_COLS] = {
    "arrived", "finished", "dropped", "preemptions", "end_s", "ttft_p50_s", "ttft_p90_s",
    "ttft_p99_s", "tpot_p50_s", "tpot_p90_s", "tpot_p99_s", "e2e_p50_s", "e2e_p90_s",
    "e2e_p99_s", "requests_per_s", "output_tokens_per_s", "goodput_requests_per_s",
    "slo_met_fraction", "kv_util_mean", "kv_util_max", "busy_fraction", "gpus",
    "swap_swaps_out", "swap_swaps_in", "swap_fallbacks", "swap_out_bytes", "swap_in_bytes",
    "swap_time_s", "swap_host_util_max", "facility_energy_j", "energy_cost_cny", "co2_kg", "kwh_per_mtok", "energy_cost_per_mtok_cny",
    "co2_kg_per_mtok"};
static const char *const col_units[N_COLS] = {
    "1", "1", "1", "1", "s", "s", "s", "s", "s", "s", "s", "s", "s", "s", "1/s", "1/s", "1/s",
    "1", "1", "1", "1", "1", "1", "1", "1", "B", "B", "s", "1", "J", "CNY", "kg", "kWh/Mtok",
    "CNY/Mtok", "kg/Mtok"};

/* the table's columns: N_COLS's before SITE_COL, then the sessions' when
 * some variant has sessions (serve's "sessions" object, 0 for a variant
 * without), then the site's: a table without sessions is what it was */
#define ALL_COLS (N_COLS + SERVE_SESSION_COLS)
typedef struct table_cols {
    const char *names[ALL_COLS], *units[ALL_COLS];
    char session_names[SERVE_SESSION_COLS][48];
    int n, site_col;
} table_cols;

typedef struct svariant {
    const compare_case *c;
    scn_scenario scn;
    serve_config cfg;
    serve_result r;
    serve_cost k;
    int loaded;
    sim_error err;
    double v[N_COLS];
    double t[ALL_COLS];  /* the row in the table's columns (table_cols) */
} svariant;

static int has_sessions(const svariant *x)
{
    return serve_has_sessions(&x->cfg);
}

/* the columns of x[0..n) and each row in them */
static void table_of(svariant *x, size_t n, table_cols *tc)
{
    int any = 0;
    for (size_t i = 0; i < n; i++)
        any |= has_sessions(&x[i]);
    tc->n = 0;
    for (int k = 0; k < SITE_COL; k++, tc->n++)
        tc->names[tc->n] = col_names[k], tc->units[tc->n] = col_units[k];
    for (int k = 0; any && k < SERVE_SESSION_COLS; k++, tc->n++) {
        snprintf(tc->session_names[k], sizeof tc->session_names[k], "sessions_%s",
                 serve_session_names[k]);
        tc->names[tc->n] = tc->session_names[k];
        tc->units[tc->n] = serve_session_units[k];
    }
    tc->site_col = tc->n;
    for (int k = SITE_COL; k < N_COLS; k++, tc->n++)
        tc->names[tc->n] = col_names[k], tc->units[tc->n] = col_units[k];
    for (size_t i = 0; i < n; i++) {
        double s[SERVE_SESSION_COLS];
        serve_session_values(&x[i].r, s);
        int j = 0;
        for (int k = 0; k < SITE_COL; k++)
            x[i].t[j++] = x[i].v[k];
        for (int k = 0; any && k < SERVE_SESSION_COLS; k++)
            x[i].t[j++] = s[k];
        for (int k = SITE_COL; k < N_COLS; k++)
            x[i].t[j++] = x[i].v[k];
    }
}

int compare_is_serve(const char *path)
{
    static const char *const names[] = {"serving", "job", "cluster-jobs"};
    return compare_top_elements(path, names, 3) == 1u; /* <serving>, no <job> or stream */
}

static int has_site(const svariant *x)
{
    return x->scn.site.given;
}

/* The figures of a finished run: the very fields dcsim serve's --json
 * prints (serve.c print_json, json_latency, json_cost). */
static void row_of(const svariant *x, double *v)
{
    const serve_result *r = &x->r;
    const serve_cost *k = &x->k;
    v[C_ARRIVED] = (double)r->arrived;
    v[C_FINISHED] = (double)r->finished;
    v[C_DROPPED] = (double)r->dropped;
    v[C_PREEMPT] = (double)r->preemptions;
    v[C_END] = r->end_s;
    const serve_latency *l[3] = {&r->ttft, &r->tpot, &r->e2e};
    for (int m = 0; m < 3; m++)
        for (int q = 0; q < 3; q++)
            v[C_TTFT50 + 3 * m + q] = l[m]->q_s[q];
    v[C_REQ] = r->requests_per_s;
    v[C_TOK] = r->output_tokens_per_s;
    v[C_GOOD] = r->goodput_requests_per_s;
    v[C_SLO] = r->slo_met_fraction;
    v[C_KV] = r->kv_util_mean;
    v[C_KV_MAX] = r->kv_util_max;
    v[C_BUSY] = r->busy_fraction;
    v[C_GPUS] = serve_gpus(&x->cfg);
    /* swap preemption's (serve's "swap" object; 0 under recompute, which has none) */
    v[C_SWAP_OUT] = (double)r->swaps_out;
    v[C_SWAP_IN] = (double)r->swaps_in;
    v[C_SWAP_FALLBACK] = (double)r->swap_fallbacks;
    v[C_SWAP_OUT_B] = r->swap_out_bytes;
    v[C_SWAP_IN_B] = r->swap_in_bytes;
    v[C_SWAP_TIME] = r->swap_time_s;
    v[C_HOST_MAX] = r->host_util_max;
    int site = has_site(x);
    v[C_FAC] = site ? k->e.facility_energy_j : NAN;
    v[C_COST] = site ? k->e.cost : NAN;
    v[C_CO2] = site ? k->e.co2_kg : NAN;
    v[C_KWH_MTOK] = site ? k->kwh_per_mtok : NAN;
    v[C_COST_MTOK] = site ? k->cost_per_mtok : NAN;
    v[C_CO2_MTOK] = site ? k->co2_kg_per_mtok : NAN;
}

static int print_error(const svariant *x)
{
    return compare_case_error(x->c, &x->err);
}

/* load variant x, put it at its site and ready its fleet (runs: the
 * simulations held at once, for the memory guard) */
static int load_one(svariant *x, unsigned runs)
{
    const compare_case *c = x->c;
    sim_error_clear(&x->err);
    if (scn_load_flags(c->path, c->sets, c->n_sets, SCN_LOAD_SERVING, &x->scn, &x->err))
        return -1;
    x->loaded = 1;
    if (!x->scn.has_serving || x->scn.has_job || x->scn.has_cluster_jobs)
        return sim_error_set(&x->err, SIM_ERR_INPUT, x->scn.source, 0,
                             "%s: dcsim compare compares serving fleets (<serving>, no <job> "
                             "or <cluster-jobs>), job streams or training runs, not one with "
                             "another", x->scn.has_serving ? "not a serving fleet alone"
                                                           : "no <serving>");
    if (compare_put_site(&x->scn, c->site, c->start_month, &x->err))
        return -1;
    x->cfg = x->scn.serving;
    return serve_prepare(&x->scn, &x->cfg, runs, &x->err);
}

/* x's simulation and cost, as cmd_serve runs them (no progress line, no
 * request sink) */
static int run_one(svariant *x)
{
    if (serve_simulate(&x->cfg, &x->r, &x->err))
        return -1;
    if (has_site(x) && serve_cost_at_site(&x->scn, &x->cfg, &x->r, &x->k, &x->err))
        return -1;
    return 0;
}

static cJSON *table_json(const svariant *x, size_t n, const table_cols *tc,
                         const char *command)
{
    cJSON *rows;
    cJSON *root = compare_json_begin(command, "serve", tc->names, tc->units, tc->n, &rows);
    for (size_t i = 0; rows && i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        const scn_scenario *s = &x[i].scn;
        cJSON_AddStringToObject(o, "variant", x[i].c->label);
        cJSON_AddStringToObject(o, "model", x[i].cfg.arch.name);
        cJSON_AddStringToObject(o, "gpu", s->gpu.name);
        cJSON_AddNumberToObject(o, "replicas", x[i].cfg.replicas);
        cJSON_AddNumberToObject(o, "tp", x[i].cfg.tp);
        cJSON_AddStringToObject(o, "site", has_site(&x[i]) ? s->site.info.name : "");
        cJSON_AddStringToObject(o, "defaults_used", s->serving_defaults);
        if (!x[i].r.quantiles_exact)
            cJSON_AddNumberToObject(o, "quantile_rel_error", x[i].r.quantile_rel_error);
        compare_json_values(o, tc->names, tc->n, tc->site_col, x[i].t, has_site(&x[i]), x[0].t,
                            has_site(&x[0]));
        cJSON_AddItemToArray(rows, o);
    }
    return root;
}

/* one text row of each block: the values (diff 0) or the differences
 * against x0 (diff 1); block 0 the latencies (ms; E2E in s), block 1 the
 * rest */
static void print_row(const svariant *x, const svariant *x0, int diff, int block, int width)
{
    double v[N_COLS];
    for (int k = 0; k < N_COLS; k++)
        v[k] = diff ? x->v[k] - x0->v[k] : x->v[k];
    printf("%-*.*s", width, width, x->c->label);
    if (block == 0) {
        for (int k = C_TTFT50; k <= C_TPOT99; k++)
            printf(" %9.4g", v[k] * 1e3);
        for (int k = C_E2E50; k <= C_E2E99; k++)
            printf(" %8.4g", v[k]);
        printf("\n");
        return;
    }
    printf(" %8.4g %9.5g %8.4g %7.2f %7.0f %7.0f %6.1f %6.0f", v[C_REQ], v[C_TOK], v[C_GOOD],
           100 * v[C_SLO], v[C_DROPPED], v[C_PREEMPT], 100 * v[C_KV], v[C_GPUS]);
    if (has_site(x) && (!diff || has_site(x0)))
        printf(" %9.4g %9.4g\n", v[C_KWH_MTOK], v[C_COST_MTOK]);
    else
        printf(" %9s %9s\n", "-", "-");
}

static int swaps(const svariant *x)
{
    return x->cfg.preemption == SERVE_PREEMPT_SWAP;
}

/* the swap block: a row per variant (its values, or its differences
 * against x0) */
static void print_swap_block(const svariant *x, size_t n, int diff, int w)
{
    static const char head[] = "%-*s %9s %9s %9s %9s %9s %9s %7s\n";
    printf("\n");
    printf(head, w, "variant", "swaps out", "in", "fallback", "GB out", "GB in", "copy s",
           "host %");
    printf(head, w, "", "", "", "", "", "", "", "peak");
    for (size_t i = diff; i < n; i++) {
        double v[N_COLS];
        for (int k = 0; k < N_COLS; k++)
            v[k] = diff ? x[i].v[k] - x[0].v[k] : x[i].v[k];
        printf("%-*.*s %9.0f %9.0f %9.0f %9.4g %9.4g %9.4g %7.3g%s\n", w, w, x[i].c->label,
               v[C_SWAP_OUT], v[C_SWAP_IN], v[C_SWAP_FALLBACK], v[C_SWAP_OUT_B] / 1e9,
               v[C_SWAP_IN_B] / 1e9, v[C_SWAP_TIME], 100 * v[C_HOST_MAX],
               swaps(&x[i]) ? "" : "  (recompute)");
    }
}

/* the sessions block: a row per variant (its values, or its differences
 * against x0): sessions, turns a session, the TTFT of first turns and of
 * follow-ups (P50, P99), the context tokens not prefilled, follow-ups
 * truncated and refused for the context window */
static void print_session_block(const svariant *x, size_t n, int diff, int w)
{
    static const char head[] = "%-*s %8s %6s %9s %9s %9s %9s %7s %7s %7s\n";
    printf("\n");
    printf(head, w, "variant", "sessions", "turns", "TTFT 1st", "P99 ms", "TTFT fup", "P99 ms",
           "hit %", "trunc", "refused");
    for (size_t i = diff; i < n; i++) {
        double v[SERVE_SESSION_COLS], v0[SERVE_SESSION_COLS];
        serve_session_values(&x[i].r, v);
        serve_session_values(&x[0].r, v0);
        for (int k = 0; diff && k < SERVE_SESSION_COLS; k++)
            v[k] -= v0[k];
        /* the table's order: serve_session_names */
        printf("%-*.*s %8.0f %6.3g %9.4g %9.4g %9.4g %9.4g %7.2f %7.0f %7.0f%s\n", w, w,
               x[i].c->label, v[0], v[8], v[14] * 1e3, v[16] * 1e3, v[18] * 1e3, v[20] * 1e3,
               100 * v[9], v[10], v[12], has_sessions(&x[i]) ? "" : "  (no sessions)");
    }
}

static void print_blocks(const svariant *x, size_t n, int diff, int w)
{
    static const char lat[] = "%-*s %9s %9s %9s %9s %9s %9s %8s %8s %8s\n";
    static const char thr[] = "%-*s %8s %9s %8s %7s %7s %7s %6s %6s %9s %9s\n";
    printf(lat, w, "variant", "TTFT P50", "P90", "P99 ms", "TPOT P50", "P90", "P99 ms",
           "E2E P50", "P90", "P99 s");
    for (size_t i = diff; i < n; i++)
        print_row(&x[i], &x[0], diff, 0, w);
    printf("\n");
    printf(thr, w, "variant", "req/s", "tokens/s", "goodput", "SLO %", "dropped", "preempt",
           "KV %", "GPUs", "kWh per", "CNY per");
    printf(thr, w, "", "", "", "req/s", "", "", "", "mean", "", "Mtok", "Mtok");
    for (size_t i = diff; i < n; i++)
        print_row(&x[i], &x[0], diff, 1, w);
    int any = 0;
    for (size_t i = 0; i < n; i++)
        any |= swaps(&x[i]);
    if (any)
        print_swap_block(x, n, diff, w);
    int sess = 0;
    for (size_t i = 0; i < n; i++)
        sess |= has_sessions(&x[i]);
    if (sess)
        print_session_block(x, n, diff, w);
}

static void print_text(const svariant *x, size_t n, const char *command)
{
    int w = compare_label_width(x[0].c, n);
    int sweep = !strcmp(command, "sweep");
    printf("dcsim %s: %zu %s of a serving fleet (dcsim serve's figures; docs/serving.md)\n\n",
           command, n, sweep ? "points" : "variants");
    print_blocks(x, n, 0, w);
    if (n > 1) {
        printf("\ndifference against %s (the first %s)\n", x[0].c->label,
               sweep ? "point" : "variant");
        print_blocks(x, n, 1, w);
    }
    for (size_t i = 0; i < n; i++)
        printf("%s%-*.*s %s on %.0f x %s (%u replicas of tp %u), %s; %llu requests over %.4g "
               "s%s\n", i ? "" : "\n", w, w, x[i].c->label, x[i].cfg.arch.name, x[i].v[C_GPUS],
               x[i].scn.gpu.name, x[i].cfg.replicas, x[i].cfg.tp,
               has_site(&x[i]) ? x[i].scn.site.info.name : "no <site>: no energy or cost",
               (unsigned long long)x[i].r.arrived, x[i].r.end_s,
               x[i].r.quantiles_exact ? "" : "; quantiles from histograms");
    int same = 1; /* the defaults once when every variant has the same */
    for (size_t i = 1; i < n; i++)
        same &= !strcmp(x[i].scn.serving_defaults, x[0].scn.serving_defaults);
    for (size_t i = 0; i < (same ? 1 : n); i++)
        if (x[i].scn.serving_defaults[0])
            printf("  %.72s: defaults used: %s\n", same ? "every variant" : x[i].c->label,
                   x[i].scn.serving_defaults);
}

/* o->inputs and every variant's own input files (scenario, XIncludes,
 * trace): never the table. NULL when out of memory. */
static const char **inputs_of(const svariant *x, size_t n, const compare_cluster_out *o,
                              size_t *n_in)
{
    size_t cap = o->n_inputs + 1;
    for (size_t i = 0; i < n; i++)
        cap += 2 + x[i].scn.n_included;
    const char **in = malloc(cap * sizeof *in);
    if (!in)
        return NULL;
    *n_in = 0;
    for (size_t j = 0; j < o->n_inputs; j++)
        in[(*n_in)++] = o->inputs[j];
    for (size_t i = 0; i < n; i++) {
        in[(*n_in)++] = x[i].c->path;
        for (size_t j = 0; j < x[i].scn.n_included; j++)
            in[(*n_in)++] = x[i].scn.included[j];
        in[(*n_in)++] = x[i].scn.serving_trace_file[0] ? x[i].scn.serving_trace_file : NULL;
    }
    return in;
}

/* o->table_path: the table as HDF5, a row per variant (NaN in the site
 * columns without a <site>) */
static int write_table(const svariant *x, size_t n, const table_cols *tc,
                       const compare_cluster_out *o, const char *const *inputs, size_t n_in)
{
    return compare_write_rows(o, "one row per variant of a serving fleet (dcsim serve's "
                              "figures; NaN: no <site>)", tc->names, tc->units, tc->n, x[0].c,
                              n, x[0].t, sizeof *x, NULL, inputs, n_in);
}

/* the simulations, in parallel; the first failed variant's error */
static int run_all(svariant *x, size_t n, table_cols *tc)
{
    int failed = 0;
#pragma omp parallel for schedule(dynamic) reduction(| : failed)
    for (long long i = 0; i < (long long)n; i++)
        failed |= run_one(&x[i]) != 0;
    for (size_t i = 0; failed && i < n; i++)
        if (x[i].err.code)
            return print_error(&x[i]);
    for (size_t i = 0; i < n; i++)
        row_of(&x[i], x[i].v);
    table_of(x, n, tc);
    for (size_t i = 0; i < n; i++) /* the output invariant: every value finite */
        for (int k = 0; k < tc->n; k++)
            if ((k < tc->site_col || has_site(&x[i])) &&
                summary_check_value("compare column", tc->names[k], x[i].t[k], &x[i].err))
                return print_error(&x[i]);
    return 0;
}

int compare_serve(const compare_case *cases, size_t n, const compare_cluster_out *o)
{
    svariant *x = calloc(n ? n : 1, sizeof *x);
    if (!x) {
        fprintf(stderr, "dcsim %s: out of memory\n", o->command);
        return 1;
    }
    unsigned runs = res_parallel_campaigns(n > UINT32_MAX ? UINT32_MAX : (unsigned)n);
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        x[i].c = &cases[i];
        if (load_one(&x[i], runs))
            rc = print_error(&x[i]);
    }
    size_t n_in = 0;
    const char **inputs = NULL;
    if (!rc && o->table_path) { /* the target checked before the runs */
        sim_error err;
        sim_error_clear(&err);
        outpath probe;
        if (!(inputs = inputs_of(x, n, o, &n_in))) {
            fprintf(stderr, "dcsim %s: out of memory\n", o->command);
            rc = 1;
        } else if (outpath_init(&probe, o->table_path, "the table", inputs, n_in, &err)) {
            rc = cli_print_error(&err);
        }
    }
    table_cols tc;
    if (!rc)
        rc = run_all(x, n, &tc);
    if (!rc && (o->json || o->csv))
        rc = jsonout_emit(table_json(x, n, &tc, o->command), o->csv ? JSONOUT_CSV : JSONOUT_JSON,
                          o->csv ? "variants" : NULL, NULL);
    else if (!rc)
        print_text(x, n, o->command);
    if (!rc && o->table_path)
        rc = write_table(x, n, &tc, o, inputs, n_in);
    free(inputs);
    for (size_t i = 0; i < n; i++) {
        serve_result_free(&x[i].r); /* zeroed when it did not run */
        if (x[i].loaded)
            scn_scenario_free(&x[i].scn);
    }
    free(x);
    return rc;
}
