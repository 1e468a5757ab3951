/* compare_hubs.c - `dcsim compare` and `dcsim sweep` over hubs scenarios
 * (compare_hubs.h). Each variant is loaded as dcsim hubs loads it
 * (SCN_LOAD_CLUSTER, its --set and --vary values) and run by
 * hubs_execute, the function dcsim hubs calls: a variant's figures are the
 * members of `dcsim hubs --set ... --json`'s run.total, run.fallbacks and
 * saving, the same fields of the same result struct (hubsout.c). Loading is
 * sequential, then the runs one after another (each already places and
 * simulates ten hubs; its memory is freed before the next); the table is
 * their figures and each one's difference against the first variant.
 */
#include "compare_hubs.h"
#include "compare_table.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "hubscmd.h"
#include "jsonout.h"
#include "outpath.h"
#include "summary.h"

/* The columns: dcsim hubs --json's run.total members of the same name
 * (wait_p*_s: its wait_s.p*; horizon_s: the document's; fallbacks: run's;
 * saving_*: saving's), in the SI unit (or count) the name ends with. */
enum { C_JOBS, C_GPU_H, C_REF_GPU_H, C_UTIL, C_HORIZON, C_W50, C_W90, C_W99, C_IT, C_FAC,
       C_PUE, C_ENERGY_COST, C_DATA_COST, C_COST, C_CO2, C_WATER, C_TB_IN, C_TB_OUT,
       C_TRANSFER, C_LINK_WAIT, C_RTT, C_SLO, C_SLO_H, C_DEFERRED, C_FALLBACKS, C_INTERF,
       C_SAVE_COST, C_SAVE_CO2, C_SAVE_WATER, N_COLS,
       /* with a shared backbone (docs/hubs.md "A shared backbone"), only where a
        * variant has one: run.backbone's sharing_wait_s, busiest_utilisation
        * and link_tb */
       C_BB_WAIT = N_COLS, C_BB_BUSIEST, C_BB_TB, N_ALL };
#define N_BB (N_ALL - N_COLS)
static const char *const col_names[N_ALL] = {
    "jobs", "gpu_h", "ref_gpu_h", "utilisation", "horizon_s", "wait_p50_s", "wait_p90_s",
    "wait_p99_s", "it_energy_j", "facility_energy_j", "pue", "energy_cost", "data_cost",
    "cost", "co2_kg", "water_l", "tb_in", "tb_out", "transfer_s", "link_wait_s",
    "serving_rtt_mean_s", "slo_violation_jobs", "slo_violation_job_h", "deferred_s",
    "fallbacks", "interference_gpu_h", "saving_cost", "saving_co2_kg", "saving_water_l",
    "backbone_wait_s", "backbone_busiest_utilisation", "backbone_link_tb"};
static const char *const col_units[N_ALL] = {
    "1", "GPU-h", "GPU-h", "1", "s", "s", "s", "s", "J", "J", "1", "CNY", "CNY", "CNY", "kg",
    "l", "TB", "TB", "s", "s", "s", "1", "job-h", "s", "1", "GPU-h", "CNY", "kg", "l", "s", "1",
    "TB"};

typedef struct hvariant {
    const compare_case *c;
    scn_scenario scn;
    int loaded;
    char policy[32];
    unsigned n_hubs;
    char hub[HUBS_MAX][32];
    double hub_jobs[HUBS_MAX]; /* the run's jobs placed at each hub */
    int interf;                /* a fabric at each hub (<cluster><fabric>) */
    double hub_interf[HUBS_MAX]; /* the GPU-hours interference added at each hub (0 without) */
    int backbone;              /* a shared backbone: v[C_BB_*] hold its figures */
    char digest[24];
    sim_error err;
    double v[N_ALL];
} hvariant;

int compare_is_hubs(const char *path)
{
    static const char *const names[] = {"hubs", "job"};
    return compare_top_elements(path, names, 2) == 1u; /* <hubs> and no <job> */
}

static double mean_rtt_s(const hubs_hub_result *o)
{
    return o->serving_jobs ? o->serving_rtt_s_sum / o->serving_jobs : 0;
}

/* The figures of a finished run: hubsout.c's expressions for run.total and
 * saving, so that they compare exactly. */
static void row_of(const hubs_run *run, const hubs_run *base, double *v)
{
    const hubs_hub_result *t = &run->r.total, *b = &base->r.total;
    v[C_JOBS] = t->jobs;
    v[C_GPU_H] = t->gpu_s / 3600;
    v[C_REF_GPU_H] = t->ref_gpu_s / 3600;
    v[C_UTIL] = t->utilisation;
    v[C_HORIZON] = run->r.horizon_s;
    v[C_W50] = t->wait_s.q[0];
    v[C_W90] = t->wait_s.q[1];
    v[C_W99] = t->wait_s.q[2];
    v[C_IT] = t->it_energy_j;
    v[C_FAC] = t->facility_energy_j;
    v[C_PUE] = t->it_energy_j > 0 ? t->facility_energy_j / t->it_energy_j : 0;
    v[C_ENERGY_COST] = t->energy_cost;
    v[C_DATA_COST] = t->data_cost;
    v[C_COST] = t->energy_cost + t->data_cost;
    v[C_CO2] = t->co2_kg;
    v[C_WATER] = t->water_l;
    v[C_TB_IN] = t->tb_in;
    v[C_TB_OUT] = t->tb_out;
    v[C_TRANSFER] = t->transfer_s;
    v[C_LINK_WAIT] = t->link_wait_s;
    v[C_RTT] = mean_rtt_s(t);
    v[C_SLO] = t->slo_jobs;
    v[C_SLO_H] = t->slo_job_h;
    v[C_DEFERRED] = t->deferred_s;
    v[C_FALLBACKS] = run->r.fallbacks;
    v[C_INTERF] = t->interf_gpu_s / 3600; /* 0 without a fabric: each job its run time */
    v[C_SAVE_COST] = b->energy_cost + b->data_cost - t->energy_cost - t->data_cost;
    v[C_SAVE_CO2] = b->co2_kg - t->co2_kg;
    v[C_SAVE_WATER] = b->water_l - t->water_l;
    if (run->cfg.backbone) {
        v[C_BB_WAIT] = hubs_backbone_wait_s(run);
        v[C_BB_BUSIEST] = hubs_backbone_busiest(run);
        v[C_BB_TB] = hubs_backbone_link_tb(run);
    }
}

static int print_error(const hvariant *x)
{
    return compare_case_error(x->c, &x->err);
}

/* load variant x as dcsim hubs loads it */
static int load_one(hvariant *x)
{
    const compare_case *c = x->c;
    sim_error_clear(&x->err);
    if (scn_load_flags(c->path, c->sets, c->n_sets, SCN_LOAD_CLUSTER, &x->scn, &x->err))
        return -1;
    x->loaded = 1;
    if (!x->scn.hubs)
        return sim_error_set(&x->err, SIM_ERR_INPUT, x->scn.source, 0,
                             "no <hubs> section: dcsim compare compares hubs scenarios, job "
                             "streams, serving fleets or training runs, not one with another");
    return 0;
}

/* x's policy and baseline, as cmd_hubs runs them; its figures kept, the
 * runs freed */
static int run_one(hvariant *x)
{
    hubs_run *run = calloc(2, sizeof *run);
    if (!run)
        return sim_error_set(&x->err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
    int rc = hubs_execute(&x->scn, 0, run, &x->err);
    if (!rc) {
        row_of(&run[0], &run[1], x->v);
        snprintf(x->policy, sizeof x->policy, "%s", hubs_policy_name(run[0].cfg.policy));
        x->n_hubs = run[0].cfg.n_hubs;
        for (unsigned h = 0; h < x->n_hubs; h++) {
            snprintf(x->hub[h], sizeof x->hub[h], "%s", run[0].cfg.hubs[h].name);
            x->hub_jobs[h] = run[0].r.hub[h].jobs;
            x->hub_interf[h] = run[0].r.hub[h].interf_gpu_s / 3600;
        }
        x->interf = run[0].interf;
        x->backbone = run[0].cfg.backbone != NULL;
        snprintf(x->digest, sizeof x->digest, "%016" PRIx64, run[0].r.total.digest);
    } else if (!x->err.file[0]) {
        snprintf(x->err.file, sizeof x->err.file, "%s", x->scn.source);
    }
    hubs_run_free(&run[0]);
    hubs_run_free(&run[1]);
    free(run);
    for (int k = 0; !rc && k < C_SAVE_COST; k++) /* the output invariant, as dcsim run's */
        rc = summary_check_value("compare column", col_names[k], x->v[k], &x->err);
    for (int k = N_COLS; x->backbone && !rc && k < N_ALL; k++)
        rc = summary_check_value("compare column", col_names[k], x->v[k], &x->err);
    for (int k = C_SAVE_COST; !rc && k < N_COLS; k++) /* a saving may be negative */
        if (!isfinite(x->v[k]))
            rc = sim_error_set(&x->err, SIM_ERR_INTERNAL, NULL, 0,
                               "compare column %s = %g is not finite (docs/trace-format.md): "
                               "an internal error, please report it with the scenario",
                               col_names[k], x->v[k]);
    return rc;
}

/* does any variant time its jobs on fabrics? (the per-hub interference) */
static int any_interf(const hvariant *x, size_t n)
{
    int any = 0;
    for (size_t i = 0; i < n; i++)
        any |= x[i].interf;
    return any;
}

/* does any variant have a shared backbone? (its columns) */
static int any_backbone(const hvariant *x, size_t n)
{
    int any = 0;
    for (size_t i = 0; i < n; i++)
        any |= x[i].backbone;
    return any;
}

static cJSON *table_json(const hvariant *x, size_t n, const char *command)
{
    int interf = any_interf(x, n), cols = any_backbone(x, n) ? N_ALL : N_COLS;
    cJSON *rows;
    cJSON *root = compare_json_begin(command, "hubs", col_names, col_units, cols, &rows);
    for (size_t i = 0; rows && i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "variant", x[i].c->label);
        cJSON_AddStringToObject(o, "policy", x[i].policy);
        cJSON_AddStringToObject(o, "digest", x[i].digest);
        cJSON *per = cJSON_AddObjectToObject(o, "jobs_per_hub");
        for (unsigned h = 0; per && h < x[i].n_hubs; h++)
            cJSON_AddNumberToObject(per, x[i].hub[h], x[i].hub_jobs[h]);
        cJSON *pi = interf ? cJSON_AddObjectToObject(o, "interference_gpu_h_per_hub") : NULL;
        for (unsigned h = 0; pi && h < x[i].n_hubs; h++)
            cJSON_AddNumberToObject(pi, x[i].hub[h], x[i].hub_interf[h]);
        compare_json_values(o, col_names, cols, N_COLS, x[i].v, x[i].backbone, x[0].v,
                            x[0].backbone);
        cJSON_AddItemToArray(rows, o);
    }
    return root;
}

/* one text row: the values (diff 0) or the differences against x0 (diff 1) */
static void print_row(const hvariant *x, const hvariant *x0, int diff, int width, int pw)
{
    double v[N_COLS];
    for (int k = 0; k < N_COLS; k++)
        v[k] = diff ? x->v[k] - x0->v[k] : x->v[k];
    printf("%-*.*s %-*s %7.4g %7.3f %7.4g %7.4g %9.5g %9.5g %8.5g %9.5g %8.5g %7.4g %7.4g "
           "%6.0f %6.0f %9.5g %8.5g\n",
           width, width, x->c->label, pw, diff ? "" : x->policy, v[C_GPU_H] / 1e6, 100 * v[C_UTIL],
           v[C_W50] / 3600, v[C_W90] / 3600, v[C_FAC] / 3.6e9, v[C_COST] / 1e6, v[C_CO2] / 1e3,
           v[C_WATER] / 1e3, v[C_TB_IN] + v[C_TB_OUT], 1e3 * v[C_RTT], v[C_SLO_H] / 1e3,
           v[C_SLO], v[C_FALLBACKS], v[C_SAVE_COST] / 1e6, v[C_SAVE_CO2] / 1e3);
}

static void print_head(int w, int pw)
{
    static const char head[] = "%-*s %-*s %7s %7s %7s %7s %9s %9s %8s %9s %8s %7s %7s %6s "
                               "%6s %9s %8s\n";
    printf(head, w, "variant", pw, "policy", "GPU-h", "util %", "wait50", "wait90", "fac. MWh",
           "cost", "CO2 t", "water m3", "TB moved", "RTT ms", "SLO", "SLO", "fall-", "saving",
           "saving");
    printf(head, w, "", pw, "", "M", "", "h", "h", "", "M CNY", "", "", "", "", "kjob-h", "jobs",
           "backs", "M CNY", "CO2 t");
}

/* the jobs each hub took (interf: the GPU-hours interference added there,
 * and in all): one table when every variant has the same hubs, else a line
 * per variant */
static void print_hubs(const hvariant *x, size_t n, int w, int interf)
{
    int same = 1;
    for (size_t i = 1; i < n && same; i++) {
        same = x[i].n_hubs == x[0].n_hubs;
        for (unsigned h = 0; same && h < x[0].n_hubs; h++)
            same = !strcmp(x[i].hub[h], x[0].hub[h]);
    }
    if (interf)
        printf("\nGPU-hours interference added (the hubs' fabrics), in all and at each hub\n");
    else
        printf("\njobs placed at each hub\n");
    if (same) {
        printf("%-*s", w, "variant");
        if (interf)
            printf(" %11s", "all");
        for (unsigned h = 0; h < x[0].n_hubs; h++)
            printf(" %11.11s", x[0].hub[h]);
        printf("\n");
    }
    for (size_t i = 0; i < n; i++) {
        printf("%-*.*s", w, w, x[i].c->label);
        if (interf)
            printf(same ? " %11.6g" : " all %.6g,", x[i].v[C_INTERF]);
        for (unsigned h = 0; h < x[i].n_hubs; h++) {
            double v = interf ? x[i].hub_interf[h] : x[i].hub_jobs[h];
            if (same)
                printf(interf ? " %11.6g" : " %11.0f", v);
            else
                printf(interf ? " %s %.6g%s" : " %s %.0f%s", x[i].hub[h], v,
                       h + 1 < x[i].n_hubs ? "," : "");
        }
        printf("\n");
    }
}

/* the shared backbone's figures of each variant that has one */
static void print_backbone(const hvariant *x, size_t n, int w)
{
    printf("\nshared backbone: the waits sharing added (datasets and results), the busiest "
           "link's utilisation, TB over the links (a route of k links counts k times)\n");
    printf("%-*s %11s %9s %11s\n", w, "variant", "wait h", "busiest %", "link TB");
    for (size_t i = 0; i < n; i++) {
        if (!x[i].backbone) {
            printf("%-*.*s %11s\n", w, w, x[i].c->label, "no backbone");
            continue;
        }
        printf("%-*.*s %11.6g %9.4g %11.6g\n", w, w, x[i].c->label, x[i].v[C_BB_WAIT] / 3600,
               100 * x[i].v[C_BB_BUSIEST], x[i].v[C_BB_TB]);
    }
}

static void print_text(const hvariant *x, size_t n, const char *command)
{
    int w = compare_label_width(x[0].c, n);
    int sweep = !strcmp(command, "sweep"), pw = 6; /* the policies' width */
    for (size_t i = 0; i < n; i++)
        pw = strlen(x[i].policy) > (size_t)pw ? (int)strlen(x[i].policy) : pw;
    printf("dcsim %s: %zu %s of a hubs scenario (dcsim hubs' figures, the policy's run; the "
           "saving against nearest; docs/hubs.md)\n", command, n, sweep ? "points" : "variants");
    print_head(w, pw);
    for (size_t i = 0; i < n; i++)
        print_row(&x[i], &x[0], 0, w, pw);
    if (n > 1) {
        printf("\ndifference against %s (the first %s)\n", x[0].c->label,
               sweep ? "point" : "variant");
        print_head(w, pw);
        for (size_t i = 1; i < n; i++)
            print_row(&x[i], &x[0], 1, w, pw);
    }
    print_hubs(x, n, w, 0);
    if (any_interf(x, n))
        print_hubs(x, n, w, 1);
    if (any_backbone(x, n))
        print_backbone(x, n, w);
    for (size_t i = 0; i < n; i++)
        printf("%s%-*.*s %.0f jobs on %u hubs over %.6g days; digest %s\n", i ? "" : "\n", w, w,
               x[i].c->label, x[i].v[C_JOBS], x[i].n_hubs, x[i].v[C_HORIZON] / 86400,
               x[i].digest);
}

/* o->inputs and every variant's own input files (scenario, XIncludes,
 * demand trace): never the table. NULL when out of memory. */
static const char **inputs_of(const hvariant *x, size_t n, const compare_cluster_out *o,
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
        in[(*n_in)++] = x[i].scn.hubs->trace_path[0] ? x[i].scn.hubs->trace_path : NULL;
    }
    return in;
}

/* The hubs' names for the table's attribute hub_names: the K-th of the
 * variant with the most hubs, when every variant's hubs are the first of
 * those by name (a --vary of the same scenario); 0 names (no attribute)
 * when two variants name their K-th hub differently. */
static size_t common_hub_names(const hvariant *x, size_t n, const char **names)
{
    size_t most = 0;
    for (size_t i = 1; i < n; i++)
        most = x[i].n_hubs > x[most].n_hubs ? i : most;
    for (size_t i = 0; i < n; i++)
        for (unsigned h = 0; h < x[i].n_hubs; h++)
            if (strcmp(x[i].hub[h], x[most].hub[h]) != 0)
                return 0;
    for (unsigned h = 0; n && h < x[most].n_hubs; h++)
        names[h] = x[most].hub[h];
    return n ? x[most].n_hubs : 0;
}

/* o->table_path: a row per variant, the N_COLS columns then jobs_hub_K,
 * the jobs at the K-th <hub> (NaN past a variant's last hub), and the
 * attribute hub_names where the variants agree on them */
static int write_table(const hvariant *x, size_t n, const compare_cluster_out *o,
                       const char *const *inputs, size_t n_in)
{
    unsigned most = 0;
    for (size_t i = 0; i < n; i++)
        most = x[i].n_hubs > most ? x[i].n_hubs : most;
    unsigned per = any_interf(x, n) ? 2 : 1; /* jobs_hub_K, and interference_gpu_h_hub_K */
    int nb = any_backbone(x, n) ? N_BB : 0;  /* the backbone's columns before them */
    int base = N_COLS + nb, cols = base + (int)(per * most);
    char (*hub_names)[32] = calloc(most ? per * most : 1, sizeof *hub_names);
    const char **names = malloc((size_t)cols * sizeof *names);
    const char **units = malloc((size_t)cols * sizeof *units);
    double *v = malloc((n ? n : 1) * (size_t)cols * sizeof *v);
    const char *hub_labels[HUBS_MAX];
    int rc = 0;
    if (!hub_names || !names || !units || !v) {
        fprintf(stderr, "dcsim %s: out of memory\n", o->command);
        rc = 1;
    } else {
        for (int k = 0; k < base; k++) {
            names[k] = col_names[k];
            units[k] = col_units[k];
        }
        for (unsigned h = 0; h < most; h++) {
            snprintf(hub_names[h], sizeof hub_names[h], "jobs_hub_%u", h + 1);
            names[base + h] = hub_names[h];
            units[base + h] = "1";
            if (per < 2)
                continue;
            snprintf(hub_names[most + h], sizeof hub_names[0], "interference_gpu_h_hub_%u", h + 1);
            names[base + most + h] = hub_names[most + h];
            units[base + most + h] = "GPU-h";
        }
        for (size_t i = 0; i < n; i++) {
            double *row = v + i * (size_t)cols;
            memcpy(row, x[i].v, N_COLS * sizeof *row);
            for (int k = N_COLS; k < base; k++) /* NaN: no backbone */
                row[k] = x[i].backbone ? x[i].v[k] : NAN;
            for (unsigned h = 0; h < most; h++)
                row[base + h] = h < x[i].n_hubs ? x[i].hub_jobs[h] : NAN;
            for (unsigned h = 0; per > 1 && h < most; h++)
                row[base + most + h] = h < x[i].n_hubs ? x[i].hub_interf[h] : NAN;
        }
        trace_texts labels = {"hub_names", hub_labels, common_hub_names(x, n, hub_labels)};
        static const char *const what[2] = {
            "one row per variant of a hubs scenario (dcsim hubs' figures of the policy's run, "
            "the saving against nearest; jobs_hub_K: the jobs at the K-th <hub>, NaN past the "
            "last; with fabrics, interference_gpu_h_hub_K: the GPU-hours interference added "
            "there)",
            "one row per variant of a hubs scenario (dcsim hubs' figures of the policy's run, "
            "the saving against nearest; jobs_hub_K: the jobs at the K-th <hub>, NaN past the "
            "last; with fabrics, interference_gpu_h_hub_K: the GPU-hours interference added "
            "there; before them the shared backbone's backbone_wait_s, "
            "backbone_busiest_utilisation and backbone_link_tb, NaN for a variant without "
            "one)"};
        rc = compare_write_rows(o, what[nb > 0], names, units, cols, x[0].c, n, v, (size_t)cols * sizeof *v,
                                &labels, inputs, n_in);
    }
    free(hub_names);
    free(names);
    free(units);
    free(v);
    return rc;
}

int compare_hubs(const compare_case *cases, size_t n, const compare_cluster_out *o)
{
    hvariant *x = calloc(n ? n : 1, sizeof *x);
    if (!x) {
        fprintf(stderr, "dcsim %s: out of memory\n", o->command);
        return 1;
    }
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        x[i].c = &cases[i];
        if (load_one(&x[i]))
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
    for (size_t i = 0; !rc && i < n; i++)
        if (run_one(&x[i]))
            rc = print_error(&x[i]);
    if (!rc && (o->json || o->csv))
        rc = jsonout_emit(table_json(x, n, o->command), o->csv ? JSONOUT_CSV : JSONOUT_JSON,
                          o->csv ? "variants" : NULL, NULL);
    else if (!rc)
        print_text(x, n, o->command);
    if (!rc && o->table_path)
        rc = write_table(x, n, o, inputs, n_in);
    free(inputs);
    for (size_t i = 0; i < n; i++)
        if (x[i].loaded)
            scn_scenario_free(&x[i].scn);
    free(x);
    return rc;
}
