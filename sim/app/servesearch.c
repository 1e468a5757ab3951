/* servesearch.c - `dcsim serve --size --search tp=1,2,4,8 [--search
 * gpu=H100-SXM,H200-SXM]`: the replica count each tensor-parallel width
 * (on each GPU type) needs to meet the <slo> at the scenario's traffic,
 * its GPUs and its cost per million output tokens, the cheapest first
 * within each GPU type (docs/serving.md "A sizing search over
 * configurations"). GPU types are not ranked against each other: GPU
 * counts of different types are not comparable, and shared/reference has
 * no price per GPU type; each type gets its own answer. Unless the
 * scenario states a rent for every type that has a sized row (<costs><rent
 * gpu per-gpu-hour>, its own prices): then all rows are ranked together by
 * the fleet's rent per hour (GPUs x the type's rent), and one answer.
 *
 * Each configuration is the scenario loaded again with the --set values
 * and serving/replica/@tp=T, prepared and sized as `dcsim serve --size
 * --set serving/replica/@tp=T` does (serve_prepare, serve_size_run), so
 * its row is that command's answer. A configuration whose weights leave
 * no room for the KV cache (serve_memory) is refused in its row, named,
 * with the reason; so is one whose search fails on its input (e.g. no
 * replica count up to the bound meets the SLO). Ranking: fewest GPUs
 * (the fleet bought or rented scales with them), then the lower cost per
 * million output tokens (energy at the <site> when there is one, else
 * GPU-hours), then the order given.
 */
#include "servesearch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonout.h"
#include "progress.h"
#include "serve.h"
#include "servecost.h"
#include "servesize.h"
#include "units.h"

#define SEARCH_MAX 16     /* values in one --search list */

typedef struct search_row {
    unsigned tp;
    int gpu;           /* index into the gpu list; -1: the scenario's GPU */
    int refused;
    char why[400];
    unsigned replicas;
    double gpus, ttft_p99_s, tpot_p99_s, gpu_hours_per_mtok;
    int has_cost;
    double cost_per_mtok; /* energy, CNY, at the site */
    int has_rent;         /* its GPU type has a <costs><rent> */
    double rent_per_hour, rent_per_mtok; /* the fleet's, CNY */
    int steps;
} search_row;

/* "tp=1,2,4,8" into tps: the count, or -1 with the reason in why */
static int parse_tps(const char *text, unsigned *tps, char *why, size_t size)
{
    int n = 0;
    const char *p = text + 3;
    for (int guard = 0; guard <= SEARCH_MAX; guard++) {
        char *end;
        unsigned long v = strtoul(p, &end, 10);
        if (end == p || v < 1 || v > 64 || (*end && *end != ',')) {
            snprintf(why, size, "--search %s: each tp must be a whole number from 1 to 64, "
                     "comma-separated", text);
            return -1;
        }
        if (n == SEARCH_MAX) {
            snprintf(why, size, "--search %s: at most %d configurations", text, SEARCH_MAX);
            return -1;
        }
        for (int i = 0; i < n; i++)
            if (tps[i] == v) {
                snprintf(why, size, "--search %s: tp %lu given twice", text, v);
                return -1;
            }
        tps[n++] = (unsigned)v;
        if (!*end)
            return n;
        p = end + 1;
    }
    return n;
}

/* "gpu=H100-SXM,H200-SXM" into gpus (names as given; the catalog checks
 * them when each configuration loads): the count, or -1 with why */
static int parse_gpus(const char *text, char (*gpus)[32], char *why, size_t size)
{
    int n = 0;
    const char *p = text + 4;
    for (int guard = 0; guard <= SEARCH_MAX; guard++) {
        size_t len = strcspn(p, ",");
        if (!len || len >= 32) {
            snprintf(why, size, "--search %s: each gpu must be a catalog GPU type name (1 to "
                     "31 characters), comma-separated", text);
            return -1;
        }
        if (n == SEARCH_MAX) {
            snprintf(why, size, "--search %s: at most %d GPU types", text, SEARCH_MAX);
            return -1;
        }
        memcpy(gpus[n], p, len);
        gpus[n][len] = 0;
        for (int i = 0; i < n; i++)
            if (!strcmp(gpus[i], gpus[n])) {
                snprintf(why, size, "--search %s: gpu %s given twice", text, gpus[n]);
                return -1;
            }
        n++;
        if (!p[len])
            return n;
        p += len + 1;
    }
    return n;
}

/* the --search lists: tps (0: none given) and gpus (0: none given); 0, or
 * -1 with the reason in why */
static int parse_search(const cli_sets *search, unsigned *tps, int *n_tps, char (*gpus)[32],
                        int *n_gpus, char *why, size_t size)
{
    *n_tps = *n_gpus = 0;
    for (size_t i = 0; i < search->n; i++) {
        const char *text = search->v[i];
        int is_tp = !strncmp(text, "tp=", 3), is_gpu = !strncmp(text, "gpu=", 4);
        if (!is_tp && !is_gpu) {
            snprintf(why, size, "--search %s: expected tp=LIST (e.g. tp=1,2,4,8) or gpu=LIST "
                     "(e.g. gpu=H100-SXM,H200-SXM)", text);
            return -1;
        }
        if (is_tp ? *n_tps : *n_gpus) {
            snprintf(why, size, "--search %s: %s given twice", text, is_tp ? "tp=" : "gpu=");
            return -1;
        }
        int n = is_tp ? parse_tps(text, tps, why, size) : parse_gpus(text, gpus, why, size);
        if (n < 0)
            return -1;
        *(is_tp ? n_tps : n_gpus) = n;
    }
    return 0;
}

/* size one configuration into row: 0 (row filled, maybe refused), or an
 * error code with err set (out of memory, interrupted: the search stops) */
static int size_one(const serve_search_args *a, const char *gpu, search_row *row,
                    sim_error *err)
{
    const char *sets[CLI_MAX_SETS + 3];
    char tp_set[64], gpu_set[64];
    size_t n = 0;
    for (size_t i = 0; i < a->sets->n && n < CLI_MAX_SETS; i++)
        sets[n++] = a->sets->v[i];
    snprintf(tp_set, sizeof tp_set, "serving/replica/@tp=%u", row->tp);
    sets[n++] = tp_set;
    if (gpu) {
        snprintf(gpu_set, sizeof gpu_set, "cluster/gpu/@type=%s", gpu);
        sets[n++] = gpu_set;
    }
    sets[n] = NULL;
    scn_scenario s;
    sim_error e;
    sim_error_clear(&e);
    int rc = scn_load_flags(a->path, sets, n, SCN_LOAD_SERVING, &s, &e), loaded = !rc;
    if (!rc && !s.has_serving)
        rc = sim_error_set(&e, SIM_ERR_INPUT, NULL, 0, "no <serving> section");
    serve_config c;
    memset(&c, 0, sizeof c);
    if (loaded)
        c = s.serving;
    if (!rc && c.prefill_replicas)
        rc = sim_error_set(&e, SIM_ERR_INPUT, NULL, 0, "--search sets <replica tp>; "
                           "disaggregated pools give their own tp");
    if (!rc)
        rc = serve_memory(&c, NULL, NULL, NULL, &e);
    if (!rc)
        rc = serve_prepare(&s, &c, 1, &e);
    serve_result r;
    memset(&r, 0, sizeof r);
    serve_size_steps st = {.json = 1}; /* gathered, not printed */
    cJSON *steps = NULL;
    if (!rc && !(steps = cJSON_CreateObject()))
        rc = sim_error_set(&e, SIM_ERR_NOMEM, NULL, 0, "out of memory");
    if (!rc)
        rc = serve_size_run(&c, &st, steps, &r, &e);
    cJSON_Delete(steps);
    serve_cost k;
    if (!rc && s.site.given)
        rc = serve_cost_at_site(&s, &c, &r, &k, &e);
    if (rc && rc != SIM_ERR_INPUT) { /* not the configuration's fault: stop */
        *err = e;
        if (!err->file[0] && rc != SIM_ERR_INTERRUPTED)
            snprintf(err->file, sizeof err->file, "%s", a->path);
        serve_result_free(&r);
        if (loaded)
            scn_scenario_free(&s);
        return rc;
    }
    row->steps = st.n;
    if (rc) {
        row->refused = 1;
        if (e.file[0] && e.line)
            snprintf(row->why, sizeof row->why, "%s:%d: %s", e.file, e.line, e.msg);
        else
            snprintf(row->why, sizeof row->why, "%s", e.msg);
    } else {
        double mtok = (double)r.output_tokens / 1e6;
        row->replicas = c.replicas;
        row->gpus = serve_gpus(&c);
        row->ttft_p99_s = r.ttft.q_s[2];
        row->tpot_p99_s = r.tpot.q_s[2];
        row->gpu_hours_per_mtok = mtok > 0 ? row->gpus * r.end_s / 3600 / mtok : 0;
        row->has_cost = s.site.given;
        if (row->has_cost)
            row->cost_per_mtok = k.cost_per_mtok;
        double rent = gpu ? scn_costs_rent_of(&s.costs, gpu) : 0;
        row->has_rent = rent > 0;
        if (row->has_rent) {
            row->rent_per_hour = row->gpus * rent;
            row->rent_per_mtok = mtok > 0 ? row->rent_per_hour * r.end_s / 3600 / mtok : 0;
        }
    }
    serve_result_free(&r);
    if (loaded)
        scn_scenario_free(&s);
    return 0;
}

/* a before b in the ranking; across: every GPU type together, by the
 * fleet's rent per hour first */
static int before(const search_row *a, const search_row *b, int across)
{
    if (!across && a->gpu != b->gpu) /* the GPU types in the order given, each on its own */
        return a->gpu < b->gpu;
    if (a->refused != b->refused)
        return !a->refused;
    if (a->refused) /* both refused: the order given */
        return 0;
    if (across && a->rent_per_hour != b->rent_per_hour)
        return a->rent_per_hour < b->rent_per_hour;
    if (a->gpus != b->gpus)
        return a->gpus < b->gpus;
    if (a->has_cost && b->has_cost && a->cost_per_mtok != b->cost_per_mtok)
        return a->cost_per_mtok < b->cost_per_mtok;
    return a->gpu_hours_per_mtok < b->gpu_hours_per_mtok;
}

/* rank of rows[i] within its GPU type, or among all rows across types (1
 * for the first sized row) */
static int rank_of(const search_row *rows, int i, int across)
{
    int r = 1;
    for (int k = i - 1; k >= 0 && (across || rows[k].gpu == rows[i].gpu); k--)
        r += !rows[k].refused;
    return r;
}

/* is rows[i] its GPU type's answer (the first row of the type, sized), or
 * across types the answer (the first row, sized) */
static int is_answer(const search_row *rows, int i, int across)
{
    return !rows[i].refused && (i == 0 || (!across && rows[i - 1].gpu != rows[i].gpu));
}

/* rank every type together: more than one GPU type searched, and a rent
 * for each type that has a sized row */
static int ranks_across(const search_row *rows, int n, int n_gpus)
{
    int sized = 0;
    for (int i = 0; i < n; i++) {
        if (rows[i].refused)
            continue;
        if (!rows[i].has_rent)
            return 0;
        sized++;
    }
    return n_gpus > 1 && sized > 0;
}

static void print_rows(const search_row *rows, int n, const char *arrivals,
                       char (*gpus)[32], int n_gpus, int across)
{
    printf("search     the fewest replicas meeting the SLO for each %s, at %s; the cheapest "
           "first (%sfewest GPUs, then cost per million output tokens)%s\n",
           n_gpus ? "GPU type and tp" : "tp", arrivals,
           across ? "the fleet's rent per hour, then " : "",
           across ? "; every GPU type ranked together by the scenario's <costs><rent> (its "
                    "prices, none sourced)"
           : n_gpus > 1 ? "; each GPU type ranked on its own (no sourced price per GPU type "
                          "compares them; <costs><rent gpu per-gpu-hour> for every type would)"
                        : "");
    int has_rent = 0;
    for (int i = 0; i < n; i++)
        has_rent |= rows[i].has_rent;
    int gw = n_gpus ? 16 : 0; /* the gpu column, when GPU types are searched */
    printf("  %-5s %-*s%4s %9s %6s %14s %14s %16s %16s%s\n", "rank", gw, n_gpus ? "gpu" : "",
           "tp", "replicas", "GPUs", "P99 TTFT (ms)", "P99 TPOT (ms)", "GPU-h per Mtok",
           "CNY per Mtok", has_rent ? "    rent CNY/h" : "");
    for (int i = 0; i < n; i++) {
        const search_row *w = &rows[i];
        const char *g = w->gpu >= 0 ? gpus[w->gpu] : "";
        if (w->refused) {
            printf("  %-5s %-*s%4u refused: %s\n", "-", gw, g, w->tp, w->why);
            continue;
        }
        char cost[32] = "-";
        if (w->has_cost)
            snprintf(cost, sizeof cost, "%.6g", w->cost_per_mtok);
        char rent[32] = "";
        if (has_rent && w->has_rent)
            snprintf(rent, sizeof rent, " %14.6g", w->rent_per_hour);
        else if (has_rent)
            snprintf(rent, sizeof rent, " %14s", "-");
        printf("  %-5d %-*s%4u %9u %6.0f %14.6g %14.6g %16.6g %16s%s\n",
               rank_of(rows, i, across), gw, g, w->tp, w->replicas, w->gpus, w->ttft_p99_s * 1e3,
               w->tpot_p99_s * 1e3, w->gpu_hours_per_mtok, cost, rent);
    }
    for (int i = 0; i < n; i++)
        if (is_answer(rows, i, across) && across)
            printf("answer     %s, tp %u: %u replicas, %.0f GPUs, %.6g CNY an hour in rent\n",
                   gpus[rows[i].gpu], rows[i].tp, rows[i].replicas, rows[i].gpus,
                   rows[i].rent_per_hour);
        else if (is_answer(rows, i, across) && n_gpus)
            printf("answer     %s: tp %u, %u replicas, %.0f GPUs\n", gpus[rows[i].gpu],
                   rows[i].tp, rows[i].replicas, rows[i].gpus);
        else if (is_answer(rows, i, across))
            printf("answer     tp %u: %u replicas, %.0f GPUs\n", rows[i].tp, rows[i].replicas,
                   rows[i].gpus);
}

static cJSON *answer_json(const search_row *w, const char *gpu)
{
    cJSON *o = cJSON_CreateObject();
    if (o && gpu)
        cJSON_AddStringToObject(o, "gpu", gpu);
    if (o) {
        cJSON_AddNumberToObject(o, "tp", w->tp);
        cJSON_AddNumberToObject(o, "replicas", w->replicas);
        cJSON_AddNumberToObject(o, "gpus", w->gpus);
    }
    return o;
}

static int emit_json(const search_row *rows, int n, char (*gpus)[32], int n_gpus, int across)
{
    cJSON *root = jsonout_begin("serve_search");
    cJSON *search = root ? cJSON_AddObjectToObject(root, "search") : NULL;
    cJSON *arr = search ? cJSON_AddArrayToObject(search, "rows") : NULL;
    for (int i = 0; arr && i < n; i++) {
        const search_row *w = &rows[i];
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o)) {
            cJSON_Delete(o);
            arr = NULL;
            break;
        }
        if (w->gpu >= 0)
            cJSON_AddStringToObject(o, "gpu", gpus[w->gpu]);
        cJSON_AddNumberToObject(o, "tp", w->tp);
        if (w->refused) {
            cJSON_AddStringToObject(o, "refused", w->why);
            continue;
        }
        cJSON_AddNumberToObject(o, "rank", rank_of(rows, i, across));
        cJSON_AddNumberToObject(o, "replicas", w->replicas);
        cJSON_AddNumberToObject(o, "gpus", w->gpus);
        cJSON_AddNumberToObject(o, "ttft_p99_s", w->ttft_p99_s);
        cJSON_AddNumberToObject(o, "tpot_p99_s", w->tpot_p99_s);
        cJSON_AddNumberToObject(o, "gpu_hours_per_mtok", w->gpu_hours_per_mtok);
        if (w->has_cost)
            cJSON_AddNumberToObject(o, "energy_cost_per_mtok_cny", w->cost_per_mtok);
        if (w->has_rent) {
            cJSON_AddNumberToObject(o, "rent_per_hour_cny", w->rent_per_hour);
            cJSON_AddNumberToObject(o, "rent_cost_per_mtok_cny", w->rent_per_mtok);
        }
        cJSON_AddNumberToObject(o, "steps", w->steps);
    }
    if (arr && across)
        cJSON_AddBoolToObject(search, "ranked_across_gpu_types", 1);
    cJSON *answers = arr && n_gpus && !across ? cJSON_AddArrayToObject(search, "answers") : NULL;
    for (int i = 0; arr && i < n; i++) {
        if (!is_answer(rows, i, across))
            continue;
        if (across)
            cJSON_AddItemToObject(search, "answer", answer_json(&rows[i], gpus[rows[i].gpu]));
        else if (n_gpus)
            cJSON_AddItemToArray(answers, answer_json(&rows[i], gpus[rows[i].gpu]));
        else
            cJSON_AddItemToObject(search, "answer", answer_json(&rows[i], NULL));
    }
    if (!arr) {
        cJSON_Delete(root);
        return jsonout_emit(NULL, JSONOUT_JSON, NULL, NULL);
    }
    return jsonout_emit(root, JSONOUT_JSON_LINE, NULL, NULL);
}

int serve_search(const serve_search_args *a)
{
    unsigned tps[SEARCH_MAX];
    char gpus[SEARCH_MAX][32], why[256];
    int n_tps, n_gpus;
    if (parse_search(a->search, tps, &n_tps, gpus, &n_gpus, why, sizeof why))
        return cli_usage_error("serve", "%s", why);
    scn_scenario s; /* the scenario as given: its tp when none is searched, its traffic */
    char arrivals[160] = "the scenario's traffic";
    sim_error err;
    sim_error_clear(&err);
    if (scn_load_flags(a->path, a->sets->v, a->sets->n, SCN_LOAD_SERVING, &s, &err))
        return cli_print_error(&err);
    unsigned base_tp = s.has_serving ? s.serving.tp : 1;
    if (s.has_serving)
        serve_describe_arrivals(&s.serving, arrivals, sizeof arrivals);
    scn_scenario_free(&s);
    if (!n_tps)
        tps[n_tps++] = base_tp ? base_tp : 1;
    int n = (n_gpus ? n_gpus : 1) * n_tps; /* at most SEARCH_MAX^2 = 256 */
    search_row *rows = calloc((size_t)n, sizeof *rows);
    if (!rows) {
        sim_error_set(&err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
        return cli_print_error(&err);
    }
    progress prog;
    progress_start(&prog, a->quiet || a->json);
    for (int i = 0; i < n; i++) {
        double wall;
        rows[i].tp = tps[i % n_tps];
        rows[i].gpu = n_gpus ? i / n_tps : -1;
        const char *gpu = n_gpus ? gpus[rows[i].gpu] : NULL;
        if (progress_due(&prog, 0.25, &wall)) {
            fprintf(stderr, "\r\033[K  search: %s%stp %u (%d of %d), %.0f s", gpu ? gpu : "",
                    gpu ? " " : "", rows[i].tp, i + 1, n, wall);
            fflush(stderr);
        }
        int rc = size_one(a, gpu, &rows[i], &err);
        if (rc) {
            progress_clear(&prog);
            free(rows);
            return cli_print_error(&err);
        }
    }
    progress_clear(&prog);
    int across = ranks_across(rows, n, n_gpus);
    /* insertion sort: stable, n <= 256 */
    for (int i = 1; i < n; i++) {
        search_row w = rows[i];
        int j = i;
        for (; j > 0 && before(&w, &rows[j - 1], across); j--)
            rows[j] = rows[j - 1];
        rows[j] = w;
    }
    int rc = a->json ? emit_json(rows, n, gpus, n_gpus, across) : 0, sized = 0;
    if (!a->json)
        print_rows(rows, n, arrivals, gpus, n_gpus, across);
    for (int i = 0; i < n; i++)
        sized |= !rows[i].refused;
    free(rows);
    if (!rc && !sized) { /* every configuration refused */
        sim_error_set(&err, SIM_ERR_INPUT, a->path, 0, "--search: every configuration was "
                      "refused (see the rows)");
        return cli_print_error(&err);
    }
    return rc;
}
