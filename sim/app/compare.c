/* compare.c - `dcsim compare`: one job at several sites, on several
 * networks, or several scenario files, side by side: time to train, MFU,
 * ETTR, energy, peak power, PUE, cost and CO2 (docs/energy.md). Variants
 * are loaded and set up one after another (the loader and the step tier
 * are not shared between threads), then their campaigns run in parallel
 * with OpenMP; each result lands in its own slot, so the table is the same
 * for any thread count. */
#include "compare.h"
#include "compare_why.h"
#include "compare_cluster.h"
#include "compare_hubs.h"
#include "compare_mc.h"
#include "compare_serve.h"
#include "compare_vary.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "jsonout.h"
#include "energyrun.h"
#include "outpath.h"
#include "resources.h"
#include "scenario.h"
#include "run.h"
#include "summary.h"
#include "trace.h"

#define MAX_VARY 8
#define MAX_VARIANTS 1024
#define MAX_PATHS 64

const char usage_compare[] =
    "usage: dcsim compare [SCENARIO ...] [--vary KEY=V1,V2,...]... [--set PATH=VALUE]...\n"
    "                     [--start-month M] [--replicas N] [--json | --csv] [-o TABLE.h5]\n"
    "       dcsim compare --sites\n"
    "\n"
    "Runs one job in several variants and prints one table: time to train,\n"
    "MFU, ETTR, IT and facility energy, peak facility power, PUE, energy cost,\n"
    "CO2 and cost per million tokens. Variants are the scenario files given\n"
    "(the built-in default when none), times every combination of the --vary\n"
    "lists. Campaigns run in parallel (OMP_NUM_THREADS); results do not depend\n"
    "on the thread count. Every variant needs a site: a <site> in the scenario\n"
    "or --vary site=... (docs/energy.md).\n"
    "A scenario with <cluster-jobs> and no <job> compares job streams instead\n"
    "(docs/cluster.md): each variant runs as dcsim cluster runs it, and the\n"
    "table holds utilisation, waits, slowdown, interference, energy, cost and\n"
    "CO2 with the differences against the first variant, e.g.\n"
    "  --vary cluster-jobs/scheduler/@policy=fifo,easy-backfill\n"
    "A scenario with <serving> and no <job> compares serving fleets as dcsim\n"
    "serve runs them (docs/serving.md): latencies, throughput, goodput, KV use\n"
    "and cost per million tokens, e.g. --vary serving/arrivals/@rate=10/s,30/s\n"
    "A scenario with <hubs> compares placements across hubs as dcsim hubs runs\n"
    "them (docs/hubs.md), e.g. --vary hubs/@policy=cheapest,lowest-carbon\n"
    "\n"
    "  --vary site=zhongwei,wuhu,horinger   sites from the catalog (dcsim compare\n"
    "                                       --sites lists them)\n"
    "  --vary network=ib-ndr,roce-400g      the fabric's link technology, or\n"
    "                                       files with a <fabric> element whose\n"
    "                                       attributes replace the scenario's\n"
    "  --vary PATH=V1,V2                    any --set path, e.g.\n"
    "                                       cluster/fabric/@oversubscription=1:1,3:1\n"
    "  --start-month M   the runs start on the 1st of month M (1-12; default\n"
    "                    the scenario's <site start-month>, else January)\n"
    "  --replicas N      run each variant's campaign N times (1-10000) on its own\n"
    "                    random streams: the table gains the mean and 95 % half-width\n"
    "                    of time to train, ETTR and failures (replica 0 is the\n"
    "                    plain run; energy, cost and CO2 are its)\n"
    "  --sites   list the catalog's sites\n"
    "  --json    the table as JSON\n"
    "  --csv     the table as CSV (RFC 4180): a header row, then a row per\n"
    "            variant; every column in the SI unit its name ends with\n"
    "  -o, --output FILE  the table as HDF5 (/compare, one row per variant)\n";

typedef struct variant {
    char label[256];
    const char *path;
    const char *sets[CLI_MAX_SETS + MAX_VARY + 1];
    size_t n_sets;
    const char *site;  /* --vary site=..., or NULL */
    unsigned start_month; /* --start-month, or 0 */
    scn_scenario scn;
    run_plan plan;     /* prepared once set up */
    run_outcome out;   /* the campaign and its energy account */
    campaign_mc mc;    /* --replicas N > 1: the replicas' statistics (replicas 0: none) */
    int loaded, set_up;
    sim_error err;
} variant;

int compare_put_site(scn_scenario *s, const char *site, unsigned start_month, sim_error *err)
{
    if (site) {
        char why[600];
        site_info info; /* a <site> in the scenario keeps its cooling, month and green share */
        if (site_lookup(site, &info, why, sizeof why))
            return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "--vary site: %s", why);
        if (!s->site.given) {
            s->site.design = fac_design_default(FAC_COOLING_AIR_ECONOMISER);
            s->site.start_month = 1;
        }
        s->site.info = info;
        s->site.given = 1;
    }
    if (start_month)
        s->site.start_month = start_month;
    return 0;
}

/* Load the variant, put it at its site, set up its energy account. */
static int set_up(variant *x)
{
    sim_error_clear(&x->err);
    if (scn_load(x->path, x->sets, x->n_sets, &x->scn, &x->err))
        return -1;
    x->loaded = 1;
    if (compare_put_site(&x->scn, x->site, x->start_month, &x->err))
        return -1;
    if (!x->scn.site.given)
        return sim_error_set(&x->err, SIM_ERR_INPUT, x->scn.source, 0,
                             "no site: add <site name=\"...\"/> to the scenario or "
                             "--vary site=NAME,...");
    /* variants run in parallel, one campaign per thread */
    int rc = run_plan_prepare(&x->scn, res_parallel_campaigns(UINT32_MAX), RUN_PLAN_ENERGY,
                              &x->plan, &x->err);
    if (!rc)
        x->set_up = 1;
    return rc;
}

/* A variant's error, one line: "LABEL: FILE:LINE: error: ..." names the
 * variant (site=guian) before the error, unless the error's location is
 * already the label (a scenario without --vary). */
static int print_variant_error(const variant *x)
{
    if (strcmp(x->err.file, x->label) != 0)
        fprintf(stderr, "%s: ", x->label);
    return cli_print_error(&x->err);
}

static int run(variant *x)
{
    return run_execute(&x->plan, NULL, NULL, NULL, NULL, &x->out, &x->err);
}

enum { COLS = 14 };
static const char *const col_names[COLS] = {
    "time_to_train_s", "mfu_frac",          "ettr_frac",     "it_energy_j",
    "facility_energy_j", "peak_facility_power_w", "pue_frac", "energy_cost_cny",
    "co2_kg",          "energy_cost_per_mtok_cny", "price_cny_per_kwh", "emission_kg_per_kwh",
    "pue_annual_frac", "capex_cny"};
static const char *const col_units[COLS] = {"s", "1", "1", "J", "J", "W", "1", "CNY",
                                            "kg", "CNY", "CNY/kWh", "kgCO2/kWh", "1", "CNY"};

/* the columns of x's row: COLS, then COMPARE_MC_COLS with --replicas */
static int cols_of(const variant *x)
{
    return COLS + (x->mc.replicas > 1 ? COMPARE_MC_COLS : 0);
}

static const char *col_name(int k)
{
    return k < COLS ? col_names[k] : compare_mc_names[k - COLS];
}

static const char *col_unit(int k)
{
    return k < COLS ? col_units[k] : compare_mc_units[k - COLS];
}

/* cols_of(x) values */
static void row_of(const variant *x, double *v)
{
    if (x->mc.replicas > 1)
        compare_mc_row(&x->mc, v + COLS);
    const energy_result *e = &x->out.energy.result;
    v[0] = x->out.result.time_to_train_s;
    v[1] = x->plan.step.used ? x->plan.step.mfu_frac : x->plan.campaign.mfu_frac;
    v[2] = x->out.result.ettr_frac;
    v[3] = e->it_energy_j;
    v[4] = e->facility_energy_j;
    v[5] = e->peak_facility_w;
    v[6] = e->pue;
    v[7] = e->cost;
    v[8] = e->co2_kg;
    v[9] = e->cost / (x->scn.campaign.train_tokens / 1e6);
    v[10] = x->scn.site.info.price_per_kwh;
    v[11] = x->scn.site.info.emission_kg_per_kwh;
    v[12] = e->pue_annual;
    energy_capex k = {0};
    if (x->scn.costs.given)
        energy_run_capex(&x->out.energy, &x->scn.costs, x->out.result.time_to_train_s, &k);
    v[13] = k.capex; /* 0 without <costs> */
}

enum { MAX_COLS = COLS + COMPARE_MC_COLS };

static int same_default(const hw_default *a, const hw_default *b)
{
    return !strcmp(a->part, b->part) && !strcmp(a->what, b->what) && !strcmp(a->value, b->value);
}

/* is d among the n defaults of list */
static int has_default(const hw_default *list, size_t n, const hw_default *d)
{
    for (size_t i = 0; i < n; i++)
        if (same_default(&list[i], d))
            return 1;
    return 0;
}

/* what the catalogs lacked (docs/scenario.md): the fills every variant shares
 * once, then each variant's own (one line per variant, per variant, in a
 * ten-site comparison was the same two lines ten times) */
static void print_defaults(const variant *v, size_t n)
{
    hw_default *d = malloc(n * SCN_MAX_DEFAULTS_USED * sizeof *d);
    size_t *count = malloc(n * sizeof *count);
    if (!d || !count) { /* fall back to the plain per-variant lists */
        for (size_t i = 0; i < n; i++) {
            char prefix[96];
            snprintf(prefix, sizeof prefix, "  %.70s: defaults used: ", v[i].label);
            summary_print_defaults(stdout, prefix, &v[i].scn);
        }
        free(d);
        free(count);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        count[i] = scn_defaults_used(&v[i].scn, d + i * SCN_MAX_DEFAULTS_USED,
                                     SCN_MAX_DEFAULTS_USED);
        if (count[i] > SCN_MAX_DEFAULTS_USED)
            count[i] = SCN_MAX_DEFAULTS_USED;
    }
    size_t total = 0;
    for (int pass = 0; pass < 2; pass++) { /* 0: shared by all variants, 1: each one's own */
        for (size_t i = 0; i < (pass ? n : 1); i++) {
            char prefix[96];
            if (pass)
                snprintf(prefix, sizeof prefix, "  %.70s: defaults used: ", v[i].label);
            else
                snprintf(prefix, sizeof prefix, "  every variant: defaults used: ");
            const hw_default *mine = d + i * SCN_MAX_DEFAULTS_USED;
            size_t shown = 0;
            for (size_t k = 0; k < count[i]; k++) {
                int shared = 1;
                for (size_t j = 0; j < n && shared; j++)
                    shared = has_default(d + j * SCN_MAX_DEFAULTS_USED, count[j], &mine[k]);
                if (shared == pass)
                    continue;
                printf("%*s%s %s = %s (%s)\n", shown ? (int)strlen(prefix) : 0,
                       shown ? "" : prefix, mine[k].part, mine[k].what, mine[k].value,
                       mine[k].rule);
                shown++;
            }
            total += shown;
        }
    }
    if (total == 0)
        printf("  defaults used: none: every value is the catalogs' own\n");
    free(d);
    free(count);
}

static void print_table(const variant *v, size_t n)
{
    printf("%-32s %9s %6s %6s %9s %9s %8s %6s %6s %10s %9s %8s\n", "variant", "train d", "MFU",
           "ETTR", "IT GWh", "fac. GWh", "peak MW", "PUE", "PUE yr", "cost MCNY", "CO2 kt",
           "CNY/Mtok");
    for (size_t i = 0; i < n; i++) {
        double r[MAX_COLS];
        row_of(&v[i], r);
        printf("%-32s %9.2f %6.3f %6.4f %9.3f %9.3f %8.2f %6.4f %6.4f %10.3f %9.2f %8.4f\n",
               v[i].label, r[0] / 86400, r[1], r[2], r[3] / 3.6e12, r[4] / 3.6e12, r[5] / 1e6,
               r[6], r[12], r[7] / 1e6, r[8] / 1e6, r[9]);
    }
    int capex = 0;
    for (size_t i = 0; i < n; i++)
        capex |= v[i].scn.costs.given;
    for (size_t i = 0; capex && i < n; i++) {
        double r[MAX_COLS];
        row_of(&v[i], r);
        printf("%s%-32s capital cost %.4g M CNY\n", i ? "" : "\n", v[i].label, r[13] / 1e6);
    }
    if (n && v[0].mc.replicas > 1) {
        const char **labels = malloc(n * sizeof *labels);
        const campaign_mc **mc = malloc(n * sizeof *mc);
        for (size_t i = 0; labels && mc && i < n; i++) {
            labels[i] = v[i].label;
            mc[i] = &v[i].mc;
        }
        if (labels && mc)
            compare_mc_print(labels, mc, n);
        free(labels);
        free(mc);
    }
    print_defaults(v, n);
}

/* --csv: the JSON's columns, a row per variant (cli_csv_field) */
static void print_csv(const variant *v, size_t n)
{
    int cols = n ? cols_of(&v[0]) : COLS;
    fputs("variant,site", stdout);
    for (int c = 0; c < cols; c++)
        printf(",%s", col_name(c));
    putchar('\n');
    for (size_t i = 0; i < n; i++) {
        double r[MAX_COLS];
        row_of(&v[i], r);
        cli_csv_field(stdout, v[i].label);
        putchar(',');
        cli_csv_field(stdout, v[i].scn.site.info.name);
        for (int c = 0; c < cols; c++) {
            putchar(',');
            cli_csv_number(stdout, r[c]);
        }
        putchar('\n');
    }
}

/* the dcsim/1 document (docs/json.md "compare"); NULL when out of memory */
static cJSON *table_json(const variant *v, size_t n, cJSON *why)
{
    cJSON *root = jsonout_begin("compare"), *rows = cJSON_AddArrayToObject(root, "variants");
    cJSON *units = cJSON_AddObjectToObject(root, "units");
    int cols = n ? cols_of(&v[0]) : COLS;
    for (int c = 0; c < cols; c++)
        cJSON_AddStringToObject(units, col_name(c), col_unit(c));
    for (size_t i = 0; i < n; i++) {
        double r[MAX_COLS];
        row_of(&v[i], r);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "variant", v[i].label);
        cJSON_AddStringToObject(o, "site", v[i].scn.site.info.name);
        summary_defaults_json(o, &v[i].scn);
        for (int c = 0; c < cols; c++)
            cJSON_AddNumberToObject(o, col_name(c), r[c]);
        cJSON_AddItemToArray(rows, o);
    }
    if (why)
        cJSON_AddItemToObject(root, "why_networks", why);
    return root;
}

/* ------------------------------------------------------------ the command */

typedef struct compare {
    /* options */
    const char *paths[MAX_PATHS];
    size_t n_paths;
    cli_sets sets;
    vary vs[MAX_VARY];
    size_t n_vary;
    const char *output;
    int json;
    int csv;
    unsigned start_month;
    unsigned replicas;     /* --replicas N; 0 or 1: the plain runs only */
    /* the variants: every scenario times every combination of the --vary values */
    variant *x;
    size_t n;
    char **owned;          /* the sets made for --vary values */
    size_t n_owned;
    const char **inputs;   /* -o: never overwritten */
    size_t n_in;
    why_result *why;       /* per variant: why its network differs from the baseline's */
    size_t *why_base;      /* per variant: its baseline's index, or SIZE_MAX: not explained */
    int cluster;           /* job streams (<cluster-jobs>): compare_cluster.c */
    int serve;             /* serving fleets (<serving>): compare_serve.c */
    int hubs;              /* hubs scenarios (<hubs>): compare_hubs.c */
} compare;

static int opt_sites(void *ctx, const char *value)
{
    (void)ctx;
    (void)value;
    char names[1024];
    site_names(names, sizeof names);
    printf("%s\n", names);
    return CLI_DONE;
}

static int opt_vary(void *ctx, const char *v)
{
    compare *c = ctx;
    if (c->n_vary == MAX_VARY || compare_parse_vary(v, &c->vs[c->n_vary++]))
        return cli_usage_error("compare", "--vary needs KEY=V1,V2,... (at most 8 of them, "
                               "64 values each)%s", "");
    return 0;
}

static int opt_start_month(void *ctx, const char *v)
{
    compare *c = ctx;
    char *end = NULL;
    unsigned long m = strtoul(v, &end, 10);
    if (*end || m < 1 || m > 12)
        return cli_usage_error("compare", "--start-month needs a month from 1 to 12%s", "");
    c->start_month = (unsigned)m;
    return 0;
}

static int opt_replicas(void *ctx, const char *v)
{
    compare *c = ctx;
    char *end = NULL;
    unsigned long n = strtoul(v, &end, 10);
    if (*v < '0' || *v > '9' || *end || n < 1 || n > 10000)
        return cli_usage_error("compare", "--replicas %s: expected a whole number from 1 to "
                               "10000", v);
    c->replicas = (unsigned)n;
    return 0;
}

static const cli_option compare_options[] = {
    {"--vary", 0, CLI_CALL_EACH, 0, opt_vary,
     .missing = "%s needs KEY=V1,V2,... (at most 8 of them, 64 values each)"},
    {"--set", 0, CLI_SETS_EQ, offsetof(compare, sets), .missing = "%s needs PATH=VALUE"},
    {"--start-month", 0, CLI_CALL, 0, opt_start_month,
     .missing = "%s needs a month from 1 to 12"},
    {"--replicas", 0, CLI_CALL, 0, opt_replicas, .missing = "%s needs a number"},
    {"--output", 'o', CLI_TEXT, offsetof(compare, output), .missing = "%s needs a file name"},
    {"--json", 0, CLI_FLAG, offsetof(compare, json), NULL, NULL},
    {"--csv", 0, CLI_FLAG, offsetof(compare, csv), NULL, NULL},
    {"--sites", 0, CLI_DO, 0, opt_sites, NULL},
    {"--help", 'h', CLI_HELP, 0, NULL, NULL},
    {0}};

/* The options and the number of variants. Returns 0, CLI_DONE or an exit status. */
static int compare_parse(int argc, char **argv, compare *c)
{
    static const cli_command cmd = {"compare", usage_compare, compare_options, MAX_PATHS,
                                    .too_many = "more than 64 scenarios given ('%s')"};
    int rc = cli_parse(&cmd, argc, argv, c, c->paths, &c->n_paths);
    if (rc)
        return rc;
    if (c->json && c->csv)
        return jsonout_one_format("compare");
    c->n = c->n_paths ? c->n_paths : 1;
    for (size_t k = 0; k < c->n_vary; k++)
        c->n *= c->vs[k].n;
    if (c->n > MAX_VARIANTS)
        return cli_usage_error("compare", "more than 1024 variants%s", "");
    return 0;
}

/* Variant i's sets for its --vary values (a network file gives its
 * <fabric>'s attributes), the last --vary varying fastest. Returns 0 or the
 * exit status of the error printed. */
static int variant_sets(compare *c, size_t i, variant *v)
{
    size_t idx = i;
    for (size_t k = c->n_vary; k-- > 0;) {
        const vary *vs = &c->vs[k];
        const char *value = vs->values[idx % vs->n];
        idx /= vs->n;
        if (!strcmp(vs->key, "site")) {
            v->site = value;
        } else if (!strcmp(vs->key, "network") && strstr(value, ".xml")) {
            sim_error err;
            sim_error_clear(&err);
            int got = compare_fabric_file_sets(value, c->owned + c->n_owned, MAX_VARY, &err);
            if (got == -2)
                return cli_print_error(&err);
            if (got < 0) {
                fprintf(stderr, "dcsim compare: error: --vary network=%s: no <fabric> "
                                "element in that file\n", value);
                return CLI_EXIT_INPUT;
            }
            for (int j = 0; j < got && v->n_sets < CLI_MAX_SETS + MAX_VARY; j++)
                v->sets[v->n_sets++] = c->owned[c->n_owned + (size_t)j];
            c->n_owned += (size_t)got;
        } else {
            char *set = compare_vary_set(vs, value);
            if (!set)
                return 1;
            c->owned[c->n_owned++] = set;
            v->sets[v->n_sets++] = set;
        }
    }
    return 0;
}

/* "a.xml site=guian network=ib-ndr": the scenario when there are several,
 * then the --vary values in the order given; or the scenario alone. */
static void variant_label(const compare *c, size_t i, variant *v)
{
    size_t per = c->n / (c->n_paths ? c->n_paths : 1), divisor = per;
    size_t used = (size_t)snprintf(v->label, sizeof v->label, "%s",
                                   c->n_paths > 1 ? v->path : "");
    for (size_t k = 0; k < c->n_vary; k++) {
        divisor /= c->vs[k].n;
        const char *value = c->vs[k].values[(i / divisor) % c->vs[k].n];
        if (used < sizeof v->label)
            used += (size_t)snprintf(v->label + used, sizeof v->label - used, "%s%s=%s",
                                     used ? " " : "", c->vs[k].key, value);
    }
    if (!v->label[0])
        snprintf(v->label, sizeof v->label, "%s", v->path ? v->path : "default");
}

/* The variants, loaded and set up one after another. */
static int make_variants(compare *c)
{
    c->x = calloc(c->n, sizeof *c->x);
    c->owned = calloc(c->n * (MAX_VARY + 1) * MAX_VARY, sizeof *c->owned);
    if (!c->x || !c->owned) {
        fprintf(stderr, "dcsim compare: out of memory\n");
        return 1;
    }
    size_t per = c->n / (c->n_paths ? c->n_paths : 1);
    int rc = 0;
    for (size_t i = 0; !rc && i < c->n; i++) {
        variant *v = &c->x[i];
        v->path = c->n_paths ? c->paths[i / per] : NULL;
        v->start_month = c->start_month;
        memcpy(v->sets, c->sets.v, c->sets.n * sizeof *c->sets.v);
        v->n_sets = c->sets.n;
        rc = variant_sets(c, i, v);
        variant_label(c, i, v);
    }
    c->hubs = !rc && compare_is_hubs(c->x[0].path); /* compare_hubs.c (a <cluster-jobs> too) */
    c->cluster = !rc && !c->hubs && compare_is_cluster(c->x[0].path); /* compare_cluster.c */
    c->serve = !rc && !c->hubs && !c->cluster && compare_is_serve(c->x[0].path); /* _serve.c */
    for (size_t i = 0; !rc && !c->cluster && !c->serve && !c->hubs && i < c->n; i++)
        if (set_up(&c->x[i]))
            rc = print_variant_error(&c->x[i]);
    return rc;
}

/* -o: the inputs, never overwritten (scenarios, their XIncludes, network
 * files), and a check that the table can be written there, now rather
 * than after the runs. */
static int check_output(compare *c)
{
    size_t cap = c->n_paths;
    for (size_t i = 0; i < c->n; i++)
        cap += c->x[i].loaded ? c->x[i].scn.n_included : 0;
    for (size_t k = 0; k < c->n_vary; k++)
        cap += c->vs[k].n;
    if (!(c->inputs = malloc((cap ? cap : 1) * sizeof *c->inputs)))
        return 1;
    memcpy(c->inputs, c->paths, c->n_paths * sizeof *c->inputs);
    c->n_in = c->n_paths;
    for (size_t i = 0; i < c->n; i++)
        for (size_t j = 0; c->x[i].loaded && j < c->x[i].scn.n_included; j++)
            c->inputs[c->n_in++] = c->x[i].scn.included[j];
    for (size_t k = 0; k < c->n_vary; k++)
        for (size_t j = 0; !strcmp(c->vs[k].key, "network") && j < c->vs[k].n; j++)
            c->inputs[c->n_in++] = c->vs[k].values[j];
    outpath probe;
    sim_error err;
    sim_error_clear(&err);
    if (outpath_init(&probe, c->output, "the table", c->inputs, c->n_in, &err))
        return cli_print_error(&err);
    return 0;
}

/* The campaigns in parallel, then the output invariant on every row. */
static int run_variants(compare *c)
{
    int failed = 0, rc = 0;
#pragma omp parallel for schedule(dynamic) reduction(| : failed)
    for (long long i = 0; i < (long long)c->n; i++)
        failed |= run(&c->x[i]) != 0;
    for (size_t i = 0; failed && i < c->n; i++)
        if (c->x[i].err.code)
            return print_variant_error(&c->x[i]);
    /* the replicas, a variant at a time (each variant's run in parallel) */
    for (size_t i = 0; c->replicas > 1 && i < c->n; i++)
        if (compare_mc_run(&c->x[i].plan, &c->x[i].out.result, c->replicas, &c->x[i].mc,
                           &c->x[i].err))
            return print_variant_error(&c->x[i]);
    for (size_t i = 0; !rc && i < c->n; i++) { /* the output invariant, as dcsim run's */
        double r[MAX_COLS];
        row_of(&c->x[i], r);
        for (int k = 0; !rc && k < cols_of(&c->x[i]); k++)
            rc = summary_check_value("compare column", col_name(k), r[k], &c->x[i].err);
        if (rc)
            rc = print_variant_error(&c->x[i]);
    }
    return rc;
}

/* -o: the table as HDF5, one row per variant. */
static int write_table(const compare *c)
{
    int cols = c->n ? cols_of(&c->x[0]) : COLS;
    const char *names[MAX_COLS], *units[MAX_COLS];
    for (int k = 0; k < cols; k++) {
        names[k] = col_name(k);
        units[k] = col_unit(k);
    }
    double *values = malloc(c->n * MAX_COLS * sizeof *values);
    const char **rows = malloc(c->n * sizeof *rows);
    sim_error err;
    sim_error_clear(&err);
    int rc = 0;
    if (!values || !rows) {
        rc = 1;
    } else {
        for (size_t i = 0; i < c->n; i++) {
            row_of(&c->x[i], values + i * cols);
            rows[i] = c->x[i].label;
        }
        if (trace_write_table(c->output, "compare", "one row per variant of dcsim compare",
                              names, units, (size_t)cols, rows, c->n, values, NULL, c->inputs, c->n_in,
                              &err))
            rc = cli_print_error(&err);
        else if (!c->json && !c->csv) /* machine output stays one document */
            printf("  table written to %s\n", c->output);
    }
    free(values);
    free(rows);
    return rc;
}

/* --vary network: each variant on another network than the first value
 * (the site left at its first value: the iteration does not depend on it),
 * against the variant that differs only by taking the first (compare_why.h).
 * At most WHY_PAIRS pairs, each a few reruns. Returns 0 or an exit status. */
#define WHY_PAIRS 16
static int explain_networks(compare *c)
{
    if (c->csv) /* the table alone */
        return 0;
    size_t net = c->n_vary, site = c->n_vary;
    for (size_t k = 0; k < c->n_vary; k++) {
        if (!strcmp(c->vs[k].key, "network") && c->vs[k].n > 1)
            net = k;
        if (!strcmp(c->vs[k].key, "site"))
            site = k;
    }
    if (net == c->n_vary)
        return 0;
    size_t stride_net = 1, stride_site = 1, per = c->n / (c->n_paths ? c->n_paths : 1);
    for (size_t k = c->n_vary; k-- > 0;) {
        if (k == net)
            break;
        stride_net *= c->vs[k].n;
    }
    for (size_t k = c->n_vary; site < c->n_vary && k-- > site + 1;)
        stride_site *= c->vs[k].n;
    size_t pairs = 0;
    for (size_t i = 0; i < c->n; i++) {
        size_t within = i % per, coord = (within / stride_net) % c->vs[net].n;
        int site_first = site == c->n_vary || (within / stride_site) % c->vs[site].n == 0;
        pairs += coord != 0 && site_first;
    }
    if (pairs > WHY_PAIRS) {
        if (!c->json)
            printf("\nwhy the networks differ: not run for %zu pairs of variants (at most %d; "
                   "vary fewer values together with network=)\n", pairs, WHY_PAIRS);
        return 0;
    }
    c->why = calloc(c->n, sizeof *c->why);
    c->why_base = malloc(c->n * sizeof *c->why_base);
    if (!c->why || !c->why_base)
        return 1;
    for (size_t i = 0; i < c->n; i++)
        c->why_base[i] = SIZE_MAX;
    for (size_t i = 0; i < c->n; i++) {
        size_t within = i % per, coord = (within / stride_net) % c->vs[net].n;
        int site_first = site == c->n_vary || (within / stride_site) % c->vs[site].n == 0;
        variant *x = &c->x[i], *b = &c->x[i - coord * stride_net];
        if (!coord || !site_first || !x->plan.step.used || !b->plan.step.used ||
            !x->scn.has_fabric || !b->scn.has_fabric)
            continue;
        if (compare_why(x->path, x->sets, x->n_sets, &x->scn, &b->scn, x->plan.step.iteration_s,
                        x->out.result.time_to_train_s, b->plan.step.iteration_s,
                        b->out.result.time_to_train_s, &c->why[i], &x->err))
            return print_variant_error(x);
        c->why_base[i] = i - coord * stride_net;
    }
    return 0;
}

/* The pairs' blocks (text), or their JSON array (NULL when none). */
static cJSON *print_why(const compare *c)
{
    cJSON *list = NULL;
    for (size_t i = 0; c->why_base && i < c->n; i++) {
        if (c->why_base[i] == SIZE_MAX)
            continue;
        const char *base = c->x[c->why_base[i]].label;
        if (!c->json) {
            compare_why_print(c->x[i].label, base, &c->why[i]);
            continue;
        }
        if (!list)
            list = cJSON_CreateArray();
        cJSON *o = list ? compare_why_json(c->x[i].label, base, &c->why[i]) : NULL;
        if (o)
            cJSON_AddItemToArray(list, o);
    }
    return list;
}

static void compare_free(compare *c)
{
    free(c->why);
    free(c->why_base);
    free(c->inputs);
    for (size_t i = 0; c->x && i < c->n; i++) {
        run_outcome_free(&c->x[i].out);
        run_plan_free(&c->x[i].plan);
        if (c->x[i].loaded)
            scn_scenario_free(&c->x[i].scn);
    }
    for (size_t i = 0; i < c->n_owned; i++)
        free(c->owned[i]);
    for (size_t k = 0; k < c->n_vary; k++)
        free(c->vs[k].buf);
    free(c->owned);
    free(c->x);
}

/* job streams: the variants as compare_cluster.c takes them (no -o table);
 * serving fleets and hubs: as compare_serve.c and compare_hubs.c take them
 * (-o: /compare) */
static int compare_cluster_cases(const compare *c)
{
    if (c->output && !c->serve && !c->hubs)
        return cli_usage_error("compare", "-o writes the table of training variants; for job "
                               "streams (<cluster-jobs>) use --json or --csv%s", "");
    if (c->replicas > 1) /* neither a stream nor a fleet is a Monte Carlo campaign */
        return cli_usage_error("compare", "--replicas runs training campaigns again on new "
                               "random streams; %s", c->serve
                               ? "a serving fleet (<serving>) is run once per variant; "
                                 "another <dcsim seed> gives another draw of its arrivals "
                                 "(docs/serving.md)"
                               : c->hubs
                               ? "a hubs scenario (<hubs>) is run once per variant; --vary "
                                 "@seed=1,2,3 gives other draws of its demand (docs/hubs.md)"
                               : "a job stream (<cluster-jobs>) is run once per variant "
                                 "(docs/cluster.md)");
    if (c->hubs && (c->start_month || c->x[0].site))
        return cli_usage_error("compare", "%s: a hubs scenario puts each hub at its own <hub "
                               "name> and month (vary hubs/hub[K]/@name or "
                               "hubs/hub[K]/@start-month)",
                               c->start_month ? "--start-month" : "--vary site");
    compare_case *cases = calloc(c->n, sizeof *cases);
    if (!cases)
        return 1;
    for (size_t i = 0; i < c->n; i++)
        cases[i] = (compare_case){c->x[i].label, c->x[i].path, c->x[i].sets, c->x[i].n_sets,
                                  c->x[i].site, c->x[i].start_month};
    compare_cluster_out out = {"compare", c->json, c->csv, c->output, "compare",
                               c->paths, c->n_paths};
    int rc = c->hubs    ? compare_hubs(cases, c->n, &out)
             : c->serve ? compare_serve(cases, c->n, &out)
                        : compare_cluster(cases, c->n, &out);
    free(cases);
    return rc;
}

int cmd_compare(int argc, char **argv)
{
    compare *c = calloc(1, sizeof *c);
    if (!c) {
        fprintf(stderr, "dcsim compare: out of memory\n");
        return 1;
    }
    int rc = compare_parse(argc, argv, c);
    if (!rc)
        rc = make_variants(c);
    if (!rc && (c->cluster || c->serve || c->hubs)) {
        rc = compare_cluster_cases(c);
        compare_free(c);
        free(c);
        return rc;
    }
    if (!rc && c->output)
        rc = check_output(c);
    if (!rc)
        rc = run_variants(c);
    if (!rc)
        rc = explain_networks(c);
    if (!rc && c->json) {
        rc = jsonout_emit(table_json(c->x, c->n, print_why(c)), JSONOUT_JSON, NULL, NULL);
    } else if (!rc && c->csv) {
        print_csv(c->x, c->n);
    } else if (!rc) {
        print_table(c->x, c->n);
        print_why(c);
    }
    if (!rc && c->output)
        rc = write_table(c);
    compare_free(c);
    free(c);
    return rc == CLI_DONE ? 0 : rc;
}
