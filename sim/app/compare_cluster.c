/* compare_cluster.c - `dcsim compare` over job-stream scenarios
 * (compare_cluster.h). Each variant is loaded as dcsim cluster loads it
 * (SCN_LOAD_CLUSTER, its --set and --vary values), put at its --vary site,
 * and run through cluster_run_execute, the function dcsim cluster calls:
 * a variant's figures are the numbers `dcsim cluster --set ...` prints.
 * Variants run one after another (a run is fast next to loading, and the
 * interference tier's cache is per run); the table is their figures and
 * each one's difference against the first variant.
 */
#include "compare_cluster.h"
#include "compare_table.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <libxml/tree.h>

#include "cli.h"
#include "clusterrun.h"
#include "jsonout.h"
#include "summary.h"
#include "trace.h"

/* The columns, in the SI unit (or count) their name ends with. Those from
 * SITE_COL on exist only at a <site> (facility energy, cost, CO2). */
enum { C_JOBS, C_END, C_UTIL, C_QUEUE, C_W50, C_W90, C_W99, C_SLOW, C_SLOW99, C_INTERF, C_BUSY,
       C_OVER_LEAVES, C_IT, C_FAC, C_COST, C_CO2, C_PER_GPU_H, N_COLS };
#define SITE_COL C_FAC
static const char *const col_names[N_COLS] = {
    "jobs", "end_s", "utilisation_frac", "queue_mean", "wait_p50_s", "wait_p90_s", "wait_p99_s",
    "slowdown_mean", "slowdown_p99", "interference_gpu_h", "busy_gpu_h", "jobs_over_leaves",
    "it_energy_j", "facility_energy_j", "energy_cost_cny", "co2_kg",
    "energy_cost_per_gpu_h_cny"};
static const char *const col_units[N_COLS] = {
    "1", "s", "1", "1", "s", "s", "s", "1", "1", "GPU-h", "GPU-h", "1", "J", "J", "CNY", "kg",
    "CNY/GPU-h"};

typedef struct cvariant {
    const compare_case *c;
    scn_scenario scn;
    cluster_run run;
    int loaded;
    sim_error err;
    double v[N_COLS];
} cvariant;

unsigned compare_top_elements(const char *path, const char *const *names, unsigned n)
{
    if (!path)
        return 0; /* the built-in default: a <job> */
    sim_error err;
    sim_error_clear(&err);
    xmlDoc *doc = scn_read_xml(path, NULL, 0, path, &err);
    xmlNode *root = doc ? xmlDocGetRootElement(doc) : NULL;
    unsigned found = 0;
    for (xmlNode *e = root ? root->children : NULL; e; e = e->next)
        for (unsigned k = 0; e->type == XML_ELEMENT_NODE && k < n && k < 32; k++)
            if (xmlStrEqual(e->name, (const xmlChar *)names[k]))
                found |= 1u << k;
    xmlFreeDoc(doc);
    return found;
}

int compare_is_cluster(const char *path)
{
    static const char *const names[] = {"cluster-jobs", "job"};
    return compare_top_elements(path, names, 2) == 1u; /* <cluster-jobs> and no <job> */
}

/* The figures of a finished run, the same expressions as dcsim cluster's
 * --json (clustercmd.c), so that they compare exactly. */
static void row_of(const cluster_run *run, double *v)
{
    const cluster_result *r = &run->r;
    const cluster_energy *ce = &run->x.ce;
    v[C_JOBS] = r->n_jobs;
    v[C_END] = r->end_s;
    v[C_UTIL] = r->utilisation;
    v[C_QUEUE] = r->queue_mean;
    v[C_W50] = r->wait_s.q[0];
    v[C_W90] = r->wait_s.q[1];
    v[C_W99] = r->wait_s.q[2];
    v[C_SLOW] = r->slowdown.mean;
    v[C_SLOW99] = r->slowdown.q[2];
    v[C_INTERF] = r->interference_gpu_s / 3600; /* 0 without a fabric */
    v[C_BUSY] = ce->busy_gpu_h;
    v[C_OVER_LEAVES] = r->jobs_over_leaves;
    v[C_IT] = ce->it_energy_j;
    v[C_FAC] = ce->has_site ? ce->e.facility_energy_j : NAN;
    v[C_COST] = ce->has_site ? ce->e.cost : NAN;
    v[C_CO2] = ce->has_site ? ce->e.co2_kg : NAN;
    v[C_PER_GPU_H] = ce->has_site ? ce->energy_cost_per_gpu_h : NAN;
}

static int print_error(const cvariant *x)
{
    return compare_case_error(x->c, &x->err);
}

static int run_one(cvariant *x)
{
    const compare_case *c = x->c;
    sim_error_clear(&x->err);
    if (scn_load_flags(c->path, c->sets, c->n_sets, SCN_LOAD_CLUSTER, &x->scn, &x->err))
        return -1;
    x->loaded = 1;
    if (!x->scn.has_cluster_jobs || x->scn.has_job)
        return sim_error_set(&x->err, SIM_ERR_INPUT, x->scn.source, 0,
                             "%s: dcsim compare compares job streams (<cluster-jobs>, no "
                             "<job>) or training runs, not one with the other",
                             x->scn.has_job ? "a training <job>" : "no <cluster-jobs>");
    if (compare_put_site(&x->scn, c->site, c->start_month, &x->err))
        return -1;
    int rc = cluster_run_execute(&x->scn, &x->run, &x->err);
    if (rc) {
        if (!x->err.file[0])
            snprintf(x->err.file, sizeof x->err.file, "%s", x->scn.source);
        return rc;
    }
    row_of(&x->run, x->v);
    for (int k = 0; k < N_COLS; k++)
        if (!(k >= SITE_COL && !x->run.x.ce.has_site) &&
            summary_check_value("compare column", col_names[k], x->v[k], &x->err))
            return -1;
    return 0;
}

static cJSON *table_json(const cvariant *x, size_t n, const char *command)
{
    cJSON *rows;
    cJSON *root = compare_json_begin(command, "cluster", col_names, col_units, N_COLS, &rows);
    for (size_t i = 0; rows && i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        const scn_scenario *s = &x[i].scn;
        cJSON_AddStringToObject(o, "variant", x[i].c->label);
        cJSON_AddStringToObject(o, "site", x[i].run.x.ce.has_site ? s->site.info.name : "");
        cJSON_AddStringToObject(o, "scheduler", cluster_sched_name(s->cluster_jobs.sched));
        cJSON_AddStringToObject(o, "placement", cluster_placer_name(s->cluster_jobs.placer));
        cJSON_AddStringToObject(o, "defaults_used", s->cluster_defaults);
        compare_json_values(o, col_names, N_COLS, SITE_COL, x[i].v, x[i].run.x.ce.has_site,
                            x[0].v, x[0].run.x.ce.has_site);
        cJSON_AddItemToArray(rows, o);
    }
    return root;
}

/* one text row: the values (diff 0) or the differences against x0 (diff 1) */
static void print_row(const cvariant *x, const cvariant *x0, int diff, int width)
{
    double v[N_COLS];
    for (int k = 0; k < N_COLS; k++)
        v[k] = diff ? x->v[k] - x0->v[k] : x->v[k];
    printf("%-*.*s %8.3f %9.4g %9.4g %9.4g %8.4g %9.4g %9.4g %9.4g", width, width, x->c->label,
           100 * v[C_UTIL], v[C_W50] / 3600, v[C_W90] / 3600, v[C_W99] / 3600, v[C_SLOW],
           v[C_INTERF], v[C_BUSY], v[C_IT] / 3.6e9);
    if (x->run.x.ce.has_site && (!diff || x0->run.x.ce.has_site))
        printf(" %9.4g %9.4g %8.4g %8.4g\n", v[C_FAC] / 3.6e9, v[C_COST] / 1e3, v[C_CO2] / 1e3,
               v[C_PER_GPU_H]);
    else
        printf(" %9s %9s %8s %8s\n", "-", "-", "-", "-");
}

static void print_text(const cvariant *x, size_t n, const char *command)
{
    int w = compare_label_width(x[0].c, n);
    static const char head[] = "%-*s %8s %9s %9s %9s %8s %9s %9s %9s %9s %9s %8s %8s\n";
    printf("dcsim %s: %zu %s of a job stream (dcsim cluster's figures; docs/cluster.md)\n",
           command, n, strcmp(command, "sweep") ? "variants" : "points");
    printf(head, w, "variant", "util %", "wait P50", "P90 h", "P99 h", "slowdn", "interf.",
           "busy", "IT MWh", "fac. MWh", "cost", "CO2 t", "CNY per");
    printf(head, w, "", "", "h", "", "", "mean", "GPU-h", "GPU-h", "", "", "kCNY", "", "GPU-h");
    for (size_t i = 0; i < n; i++)
        print_row(&x[i], &x[0], 0, w);
    if (n > 1) {
        printf("\ndifference against %s (the first %s)\n", x[0].c->label,
               strcmp(command, "sweep") ? "variant" : "point");
        for (size_t i = 1; i < n; i++)
            print_row(&x[i], &x[0], 1, w);
    }
    for (size_t i = 0; i < n; i++)
        printf("%s%-*.*s scheduler %s, placement %s, %s; %u jobs over %.4g days\n",
               i ? "" : "\n", w, w, x[i].c->label,
               cluster_sched_name(x[i].scn.cluster_jobs.sched),
               cluster_placer_name(x[i].scn.cluster_jobs.placer),
               x[i].run.x.ce.has_site ? x[i].scn.site.info.name : "no <site>: IT energy only",
               x[i].run.r.n_jobs, x[i].run.r.end_s / 86400);
    int same = 1; /* the defaults once when every variant has the same */
    for (size_t i = 1; i < n; i++)
        same &= !strcmp(x[i].scn.cluster_defaults, x[0].scn.cluster_defaults);
    for (size_t i = 0; i < (same ? 1 : n); i++)
        if (x[i].scn.cluster_defaults[0])
            printf("  %.72s: defaults used: %s\n", same ? "every variant" : x[i].c->label,
                   x[i].scn.cluster_defaults);
}

/* o->table_path: the table as HDF5, a row per variant (NaN in the site
 * columns without a <site>) */
static int write_table(const cvariant *x, size_t n, const compare_cluster_out *o)
{
    return compare_write_rows(o, "one row per point of a job stream (dcsim cluster's figures; "
                              "NaN: no <site>)", col_names, col_units, N_COLS, x[0].c, n,
                              x[0].v, sizeof *x, NULL, o->inputs, o->n_inputs);
}

int compare_cluster(const compare_case *cases, size_t n, const compare_cluster_out *o)
{
    cvariant *x = calloc(n ? n : 1, sizeof *x);
    if (!x) {
        fprintf(stderr, "dcsim %s: out of memory\n", o->command);
        return 1;
    }
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        x[i].c = &cases[i];
        if (run_one(&x[i]))
            rc = print_error(&x[i]);
    }
    if (!rc && (o->json || o->csv))
        rc = jsonout_emit(table_json(x, n, o->command), o->csv ? JSONOUT_CSV : JSONOUT_JSON,
                          o->csv ? "variants" : NULL, NULL);
    else if (!rc)
        print_text(x, n, o->command);
    if (!rc && o->table_path)
        rc = write_table(x, n, o);
    for (size_t i = 0; i < n; i++) {
        cluster_run_free(&x[i].run);
        if (x[i].loaded)
            scn_scenario_free(&x[i].scn);
    }
    free(x);
    return rc;
}
