/* goodput.c - `dcsim goodput`: the goodput curve over the checkpoint
 * interval, with Monte Carlo replicas on common random numbers (every
 * interval sees the same failure times, so the curve is smooth and its
 * optimum meaningful), beside Young's and Daly's intervals (see goodput.h). */
#include "goodput.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "campaign.h"
#include "cli.h"
#include "jsonout.h"
#include "summary.h"
#include "resources.h"
#include "scenario.h"
#include "run.h"
#include "units.h"

const char usage_goodput[] =
    "usage: dcsim goodput [SCENARIO.xml] [--from T] [--to T] [--steps N] [--replicas N]\n"
    "                     [--json | --csv] [--set PATH=VALUE]...\n"
    "\n"
    "Sweep the checkpoint interval and print the goodput (ETTR: productive\n"
    "compute / elapsed) at each, mean and 95 % confidence interval over the\n"
    "replicas, with the best interval found and Young's and Daly's. Every\n"
    "interval runs the same replicas (the same failure times), so the curve is\n"
    "smooth and its optimum is meaningful.\n"
    "\n"
    "  --from, --to   interval range (default: Daly's optimum / 4 to x 4)\n"
    "  --steps N      intervals, spaced geometrically (default 17)\n"
    "  --replicas N   runs per interval (default 32)\n"
    "  --json         the curve as one JSON object (docs/json.md)\n"
    "  --csv          the curve as CSV: a row per interval\n";

static int parse_time(const char *text, double *out)
{
    char why[128];
    return sim_units_parse(text, SIM_DIM_TIME, out, why, sizeof why) || !(*out > 0) ? -1 : 0;
}

typedef struct goodput_args {
    const char *path, *from, *to;
    cli_sets sets;
    unsigned steps, replicas;
    int json, csv;
} goodput_args;

/* "%s: expected a whole number from LO to 100000" for --steps (from 2) and --replicas (1) */
static int parse_count(const char *v, unsigned lo, unsigned *out)
{
    char *end;
    unsigned long n = strtoul(v, &end, 10);
    if (*end || end == v || n < lo || n > 100000)
        return -1;
    *out = (unsigned)n;
    return 0;
}

static int opt_steps(void *ctx, const char *v)
{
    goodput_args *o = ctx;
    if (parse_count(v, 2, &o->steps))
        return cli_usage_error("goodput", "--steps %s: expected a whole number from 2 to 100000", v);
    return 0;
}

static int opt_replicas(void *ctx, const char *v)
{
    goodput_args *o = ctx;
    if (parse_count(v, 1, &o->replicas))
        return cli_usage_error("goodput", "--replicas %s: expected a whole number from 1 to 100000",
                               v);
    return 0;
}

static const cli_option goodput_options[] = {
    {"--set", 0, CLI_SETS_EQ, offsetof(goodput_args, sets), .missing = "%s needs PATH=VALUE"},
    {"--from", 0, CLI_TEXT, offsetof(goodput_args, from), .missing = "%s needs a duration"},
    {"--to", 0, CLI_TEXT, offsetof(goodput_args, to), .missing = "%s needs a duration"},
    {"--steps", 0, CLI_CALL, 0, opt_steps, .missing = "%s needs a number"},
    {"--replicas", 0, CLI_CALL, 0, opt_replicas, .missing = "%s needs a number"},
    {"--json", 0, CLI_FLAG, offsetof(goodput_args, json), NULL, NULL},
    {"--csv", 0, CLI_FLAG, offsetof(goodput_args, csv), NULL, NULL},
    {"--help", 'h', CLI_HELP, 0, NULL, NULL},
    {0}};

static int parse_args(int argc, char **argv, goodput_args *o)
{
    static const cli_command cmd = {"goodput", usage_goodput, goodput_options, 1,
                                    .too_many = "more than one scenario given ('%s')"};
    *o = (goodput_args){.steps = 17, .replicas = 32};
    size_t n_args;
    return cli_parse(&cmd, argc, argv, o, &o->path, &n_args);
}

/* A campaign's error names the scenario; returns the exit status. */
static int campaign_error(const scn_scenario *s, sim_error *err)
{
    if (err->code == SIM_ERR_INPUT && !err->file[0])
        snprintf(err->file, sizeof err->file, "%s", s->source);
    return cli_print_error(err);
}

/* The intervals swept: Daly's optimum / 4 to x 4, or --from and --to, up
 * to the failure-free compute time (a longer one checkpoints only at the
 * end: the same row). Returns 0 or the exit status of the error printed. */
static int interval_range(const goodput_args *o, const scn_scenario *s,
                          const campaign_result *probe, double *lo, double *hi)
{
    if (!(probe->daly_interval_s > 0) && (!o->from || !o->to)) {
        fprintf(stderr, "%s: error: no failures, so no optimum: give --from and --to, or a "
                        "<reliability><failure>\n", s->source);
        return CLI_EXIT_INPUT;
    }
    *lo = probe->daly_interval_s / 4;
    *hi = probe->daly_interval_s * 4;
    if ((o->from && parse_time(o->from, lo)) || (o->to && parse_time(o->to, hi)) || !(*hi > *lo))
        return cli_usage_error("goodput", "--from and --to need durations with units, "
                               "from below to, e.g. --from 5min --to 2h%s", "");
    if (*hi > probe->compute_time_s) {
        char why[160];
        snprintf(why, sizeof why, "%%s: intervals go up to the failure-free compute time, "
                 "%.6g s (a longer one checkpoints only at the end)", probe->compute_time_s);
        return cli_usage_error("goodput", why, o->to ? "--to" : "Daly's optimum x 4");
    }
    return 0;
}

/* The curve: per step, the effective interval (whole iterations) and the
 * replicas' statistics; best is the step of the highest mean ETTR. */
typedef struct goodput_curve {
    unsigned steps, replicas;
    double *interval;
    campaign_mc *mc;
    unsigned best;
} goodput_curve;

/* Run every interval on the same replicas. Returns 0, -1 out of memory, or
 * the error in err. */
static int run_curve(const campaign_config *base, double lo, double hi, goodput_curve *cv,
                     sim_error *err)
{
    campaign_result *r = malloc((size_t)cv->replicas * sizeof *r);
    cv->interval = malloc(cv->steps * sizeof *cv->interval);
    cv->mc = malloc(cv->steps * sizeof *cv->mc);
    cv->best = 0;
    int rc = !r || !cv->interval || !cv->mc ? -1 : 0;
    for (unsigned k = 0; k < cv->steps && !rc; k++) {
        campaign_config c = *base;
        c.checkpoint_interval_s = lo * pow(hi / lo, (double)k / (cv->steps - 1));
        rc = campaign_run(&c, NULL, NULL, NULL, &r[0], err);
        if (!rc)
            rc = campaign_run_replicas(&c, cv->replicas, r, NULL, NULL, err);
        if (!rc) {
            cv->interval[k] = r[0].checkpoint_interval_s; /* the effective, whole iterations */
            campaign_mc_summarize(r, cv->replicas, &cv->mc[k]);
            rc = summary_check_mc(&cv->mc[k], err); /* the output invariant, as dcsim run's */
        }
        if (!rc && cv->mc[k].ettr_frac.mean > cv->mc[cv->best].ettr_frac.mean)
            cv->best = k;
    }
    free(r);
    return rc;
}

static int print_json(const goodput_curve *cv, const campaign_result *probe, int csv)
{
    cJSON *o = jsonout_begin("goodput");
    if (!o)
        return jsonout_emit(NULL, JSONOUT_JSON, NULL, NULL);
    cJSON_AddNumberToObject(o, "replicas", cv->replicas);
    cJSON_AddNumberToObject(o, "young_interval_s", probe->young_interval_s);
    cJSON_AddNumberToObject(o, "daly_interval_s", probe->daly_interval_s);
    cJSON_AddNumberToObject(o, "best_interval_s", cv->interval[cv->best]);
    cJSON *rows = cJSON_AddArrayToObject(o, "curve");
    for (unsigned k = 0; k < cv->steps; k++) {
        cJSON *row = cJSON_CreateObject();
        cJSON_AddNumberToObject(row, "interval_s", cv->interval[k]);
        cJSON_AddNumberToObject(row, "ettr_mean", cv->mc[k].ettr_frac.mean);
        cJSON_AddNumberToObject(row, "ettr_ci95", cv->mc[k].ettr_frac.ci95);
        cJSON_AddNumberToObject(row, "time_to_train_mean_s", cv->mc[k].time_to_train_s.mean);
        cJSON_AddItemToArray(rows, row);
    }
    return jsonout_emit(o, csv ? JSONOUT_CSV : JSONOUT_JSON, "curve", NULL);
}

static void print_text(const scn_scenario *s, const goodput_curve *cv,
                       const campaign_result *probe)
{
    printf("# goodput over the checkpoint interval: %s, %u replicas per interval\n", s->source,
           cv->replicas);
    printf("#%13s %12s %12s %16s\n", "interval (s)", "ETTR", "95% CI (+-)",
           "time to train (d)");
    for (unsigned k = 0; k < cv->steps; k++)
        printf("%14.1f %12.5f %12.5f %16.3f%s\n", cv->interval[k], cv->mc[k].ettr_frac.mean,
               cv->mc[k].ettr_frac.ci95, cv->mc[k].time_to_train_s.mean / 86400,
               k == cv->best ? "  <- best" : "");
    printf("best %.1f s (%.2f min); Young %.1f s, Daly %.1f s\n", cv->interval[cv->best],
           cv->interval[cv->best] / 60, probe->young_interval_s, probe->daly_interval_s);
}

/* The scenario's campaign, run once as a probe (Young's and Daly's
 * intervals, the compute time), and the curve around them. */
static int goodput(const goodput_args *o, const scn_scenario *s, sim_error *err)
{
    run_plan plan; /* the iteration from the step tier when no MFU, as dcsim run */
    int rc = run_plan_prepare(s, res_parallel_campaigns(o->replicas), 0, &plan, err);
    campaign_config base = plan.campaign; /* may point into plan (elastic speeds): kept to the end */
    if (rc) {
        run_plan_free(&plan);
        return cli_print_error(err);
    }
    campaign_result probe;
    double lo, hi;
    goodput_curve cv = {.steps = o->steps, .replicas = o->replicas};
    if ((rc = campaign_run(&base, NULL, NULL, NULL, &probe, err))) {
        rc = campaign_error(s, err);
    } else if (!(rc = interval_range(o, s, &probe, &lo, &hi)) &&
               (rc = run_curve(&base, lo, hi, &cv, err)) < 0) {
        fprintf(stderr, "dcsim goodput: error: out of memory\n");
        rc = 1;
    } else if (rc > 0 && err->code) {
        rc = campaign_error(s, err);
    }
    if (!rc && (o->json || o->csv))
        rc = print_json(&cv, &probe, o->csv);
    else if (!rc)
        print_text(s, &cv, &probe);
    free(cv.interval);
    free(cv.mc);
    run_plan_free(&plan);
    return rc;
}

int cmd_goodput(int argc, char **argv)
{
    goodput_args o;
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc == CLI_DONE ? 0 : rc;
    if (o.json && o.csv)
        return jsonout_one_format("goodput");
    sim_error err;
    sim_error_clear(&err);
    scn_scenario s;
    if (scn_load(o.path, o.sets.v, o.sets.n, &s, &err))
        return cli_print_error(&err);
    rc = goodput(&o, &s, &err);
    scn_scenario_free(&s);
    return rc;
}
