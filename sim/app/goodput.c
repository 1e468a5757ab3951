/* goodput.c - `dcsim goodput`: the goodput curve over the checkpoint
 * interval, with Monte Carlo replicas on common random numbers (every
 * interval sees the same failure times, so the curve is smooth and its
 * optimum meaningful), beside Young's and Daly's intervals (see goodput.h). */
#include "goodput.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "campaign.h"
#include "cli.h"
#include "summary.h"
#include "resources.h"
#include "scenario.h"
#include "run.h"
#include "units.h"

#define MAX_SETS 256

const char usage_goodput[] =
    "usage: dcsim goodput [SCENARIO.xml] [--from T] [--to T] [--steps N] [--replicas N]\n"
    "                     [--json] [--set PATH=VALUE]...\n"
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
    "  --json         the curve as one JSON object\n";

static int parse_time(const char *text, double *out)
{
    char why[128];
    return sim_units_parse(text, SIM_DIM_TIME, out, why, sizeof why) || !(*out > 0) ? -1 : 0;
}

int cmd_goodput(int argc, char **argv)
{
    const char *path = NULL, *sets[MAX_SETS + 1], *from = NULL, *to = NULL;
    size_t n_sets = 0;
    unsigned steps = 17, replicas = 32;
    int json = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage_goodput, stdout);
            return 0;
        } else if (cli_is_option(a, "--set")) {
            if (!(v = cli_option_value(argc, argv, &i, "--set")) || !strchr(v, '='))
                return cli_usage_error("goodput", "--set needs PATH=VALUE%s", "");
            if (n_sets == MAX_SETS)
                return cli_usage_error("goodput", "more than 256 --set options%s", "");
            sets[n_sets++] = v;
        } else if (cli_is_option(a, "--from") || cli_is_option(a, "--to")) {
            int is_from = cli_is_option(a, "--from");
            if (!(v = cli_option_value(argc, argv, &i, is_from ? "--from" : "--to")))
                return cli_usage_error("goodput", "%s needs a duration", a);
            *(is_from ? &from : &to) = v;
        } else if (cli_is_option(a, "--steps") || cli_is_option(a, "--replicas")) {
            int is_steps = cli_is_option(a, "--steps");
            if (!(v = cli_option_value(argc, argv, &i, is_steps ? "--steps" : "--replicas")))
                return cli_usage_error("goodput", "%s needs a number", a);
            char *end;
            unsigned long n = strtoul(v, &end, 10);
            if (*end || end == v || n < (is_steps ? 2u : 1u) || n > 100000)
                return cli_usage_error("goodput", is_steps
                                           ? "--steps %s: expected a whole number from 2 to 100000"
                                           : "--replicas %s: expected a whole number from 1 to 100000",
                                       v);
            *(is_steps ? &steps : &replicas) = (unsigned)n;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error("goodput", "unknown option '%s'", a);
        } else if (!path) {
            path = a;
        } else {
            return cli_usage_error("goodput", "more than one scenario given ('%s')", a);
        }
    }
    sim_error err;
    sim_error_clear(&err);
    scn_scenario s;
    if (scn_load(path, sets, n_sets, &s, &err))
        return cli_print_error(&err);
    run_plan plan; /* the iteration from the step tier when no MFU, as dcsim run */
    int rc = run_plan_prepare(&s, res_parallel_campaigns(replicas), 0, &plan, &err);
    campaign_config base = plan.campaign; /* may point into plan (elastic speeds): kept to the end */
    if (rc) {
        run_plan_free(&plan);
        scn_scenario_free(&s);
        return cli_print_error(&err);
    }
    campaign_result probe;
    if ((rc = campaign_run(&base, NULL, NULL, NULL, &probe, &err))) {
        if (err.code == SIM_ERR_INPUT && !err.file[0]) /* the campaign's: name the scenario */
            snprintf(err.file, sizeof err.file, "%s", s.source);
        run_plan_free(&plan);
        scn_scenario_free(&s);
        return cli_print_error(&err);
    }
    if (!(probe.daly_interval_s > 0) && (!from || !to)) {
        fprintf(stderr, "%s: error: no failures, so no optimum: give --from and --to, or a "
                        "<reliability><failure>\n", s.source);
        run_plan_free(&plan);
        scn_scenario_free(&s);
        return CLI_EXIT_INPUT;
    }
    double lo = probe.daly_interval_s / 4, hi = probe.daly_interval_s * 4;
    if ((from && parse_time(from, &lo)) || (to && parse_time(to, &hi)) || !(hi > lo)) {
        run_plan_free(&plan);
        scn_scenario_free(&s);
        return cli_usage_error("goodput", "--from and --to need durations with units, "
                               "from below to, e.g. --from 5min --to 2h%s", "");
    }
    if (hi > probe.compute_time_s) { /* longer: only the final checkpoint, the same row */
        char why[160];
        snprintf(why, sizeof why, "%%s: intervals go up to the failure-free compute time, "
                 "%.6g s (a longer one checkpoints only at the end)", probe.compute_time_s);
        run_plan_free(&plan);
        scn_scenario_free(&s);
        return cli_usage_error("goodput", why, to ? "--to" : "Daly's optimum x 4");
    }
    campaign_result *r = malloc((size_t)replicas * sizeof *r);
    double *interval = malloc(steps * sizeof *interval);
    campaign_mc *mc = malloc(steps * sizeof *mc);
    if (!r || !interval || !mc) {
        free(r);
        free(interval);
        free(mc);
        run_plan_free(&plan);
        scn_scenario_free(&s);
        fprintf(stderr, "dcsim goodput: error: out of memory\n");
        return 1;
    }
    unsigned best = 0;
    for (unsigned k = 0; k < steps && !rc; k++) {
        campaign_config c = base;
        c.checkpoint_interval_s = lo * pow(hi / lo, (double)k / (steps - 1));
        rc = campaign_run(&c, NULL, NULL, NULL, &r[0], &err);
        if (!rc)
            rc = campaign_run_replicas(&c, replicas, r, NULL, NULL, &err);
        if (!rc) {
            interval[k] = r[0].checkpoint_interval_s; /* the effective, whole iterations */
            campaign_mc_summarize(r, replicas, &mc[k]);
            rc = summary_check_mc(&mc[k], &err); /* the output invariant, as dcsim run's */
        }
        if (!rc) {
            if (mc[k].ettr_frac.mean > mc[best].ettr_frac.mean)
                best = k;
        }
    }
    if (rc) {
        if (err.code == SIM_ERR_INPUT && !err.file[0]) /* the campaign's: name the scenario */
            snprintf(err.file, sizeof err.file, "%s", s.source);
        rc = cli_print_error(&err);
    } else if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "replicas", replicas);
        cJSON_AddNumberToObject(o, "young_interval_s", probe.young_interval_s);
        cJSON_AddNumberToObject(o, "daly_interval_s", probe.daly_interval_s);
        cJSON_AddNumberToObject(o, "best_interval_s", interval[best]);
        cJSON *rows = cJSON_AddArrayToObject(o, "curve");
        for (unsigned k = 0; k < steps; k++) {
            cJSON *row = cJSON_CreateObject();
            cJSON_AddNumberToObject(row, "interval_s", interval[k]);
            cJSON_AddNumberToObject(row, "ettr_mean", mc[k].ettr_frac.mean);
            cJSON_AddNumberToObject(row, "ettr_ci95", mc[k].ettr_frac.ci95);
            cJSON_AddNumberToObject(row, "time_to_train_mean_s", mc[k].time_to_train_s.mean);
            cJSON_AddItemToArray(rows, row);
        }
        char *text = cJSON_Print(o);
        if (text)
            puts(text);
        free(text);
        cJSON_Delete(o);
    } else {
        printf("# goodput over the checkpoint interval: %s, %u replicas per interval\n",
               s.source, replicas);
        printf("#%13s %12s %12s %16s\n", "interval (s)", "ETTR", "95% CI (+-)",
               "time to train (d)");
        for (unsigned k = 0; k < steps; k++)
            printf("%14.1f %12.5f %12.5f %16.3f%s\n", interval[k], mc[k].ettr_frac.mean,
                   mc[k].ettr_frac.ci95, mc[k].time_to_train_s.mean / 86400,
                   k == best ? "  <- best" : "");
        printf("best %.1f s (%.2f min); Young %.1f s, Daly %.1f s\n", interval[best],
               interval[best] / 60, probe.young_interval_s, probe.daly_interval_s);
    }
    free(r);
    free(interval);
    free(mc);
    run_plan_free(&plan);
    scn_scenario_free(&s);
    return rc;
}
