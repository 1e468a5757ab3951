/* sweep.c - `dcsim sweep`: one scenario over many points (the cartesian
 * product of --grid lists, or the lines of a --points file), each point run
 * as `dcsim run --set ... --replicas N` would, into one HDF5 file
 * (docs/scaling.md, layout in docs/trace-format.md). This file is the
 * command: its options, the order of the steps, and the table it prints;
 * sweep_grid.c builds the points, sweep_store.c writes and reads the file,
 * sweep_run.c runs the points on the threads, sweep_mpi.c across processes.
 *
 * Invariant: a point's numbers depend only on (scenario, its overrides,
 * seed, replicas). Replica r of every point runs with
 * campaign_replica_seed(seed, r) (common random numbers across points) into
 * its own slot, whatever thread, rank or run computed it; tables are
 * written in point order. The file under its final name is always a
 * complete HDF5 file: it is rewritten whole as NAME.tmp.<pid>, fsync'd and
 * renamed over NAME, at the start, every second or so, and at the end; a
 * rerun of the same sweep keeps its finished points and runs the others.
 * Under MPI, point i belongs to rank i % size; ranks send finished points to
 * rank 0, the only writer.
 */
#include "sweep.h"

#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "campaign.h"
#include "cli.h"
#include "jsonout.h"
#include "outpath.h"
#include "resources.h"
#include "scenario.h"
#include "compare_cluster.h"
#include "compare_hubs.h"
#include "compare_serve.h"
#include "sweep_internal.h"
#include "units.h"

const char usage_sweep[] =
    "usage: dcsim sweep [SCENARIO.xml] --grid PATH=V1,V2,... [--grid ...]... -o SWEEP.h5\n"
    "                   [--replicas N] [--seed N] [--set PATH=VALUE]... [--write-every T]\n"
    "                   [--force] [--quiet] [--json | --csv]\n"
    "       dcsim sweep [SCENARIO.xml] --points FILE -o SWEEP.h5 [...]\n"
    "\n"
    "Run the scenario at every point of a sweep, each point with N Monte Carlo\n"
    "replicas, and write one HDF5 file: /sweep/points (a row per point: its\n"
    "values, mean and 95 % confidence half-width of time to train, ETTR,\n"
    "failures, rework, ...) and /sweep/replicas (a row per replica).\n"
    "A scenario with <cluster-jobs> and no <job> (a job stream, docs/cluster.md)\n"
    "runs once per point as dcsim cluster runs it; FILE then holds one table,\n"
    "/cluster_sweep (utilisation, waits, slowdown, energy, cost, CO2 per point).\n"
    "A scenario with <serving> and no <job> runs once per point as dcsim serve\n"
    "runs it; FILE then holds /serve_sweep (latencies, throughput, goodput, KV\n"
    "use, cost per million tokens per point; docs/serving.md).\n"
    "A scenario with <hubs> runs once per point as dcsim hubs runs it; FILE then\n"
    "holds /hubs_sweep (the run's totals, the saving against nearest and the\n"
    "jobs at each hub per point; docs/hubs.md).\n"
    "\n"
    "  --grid PATH=V1,V2,...  a --set path and its values; several --grid give\n"
    "                         their cartesian product, the first varying slowest\n"
    "  --points FILE          instead: one point per line, PATH=VALUE PATH=VALUE ...\n"
    "                         ('#' starts a comment)\n"
    "  --set PATH=VALUE       fixed overrides for every point (a point's own win)\n"
    "  --replicas N           replicas per point (default 1); replica r of every\n"
    "                         point uses the same random streams (common random\n"
    "                         numbers), so points differ by their values, not noise\n"
    "  --seed N               master random seed (overrides <dcsim seed>)\n"
    "  -o, --output FILE      the result file (required). Rewritten whole under a\n"
    "                         temporary name and renamed about every second, so it\n"
    "                         is always complete; run the same command again after\n"
    "                         an interruption and only unfinished points run\n"
    "  --write-every T        rewrite the file at most this often (default 1s; more\n"
    "                         when a write takes long)\n"
    "  --force                start over when FILE holds a different sweep\n"
    "  -q, --quiet            no progress on stderr (shown only on a terminal)\n"
    "  --json                 the table on stdout as one JSON object (docs/json.md)\n"
    "  --csv                  the table on stdout as CSV (RFC 4180): a header row,\n"
    "                         a row per point, every value in the SI unit its\n"
    "                         column name ends with\n"
    "\n"
    "Threads: OMP_NUM_THREADS. Processes: the same command under mpirun or srun\n"
    "(docs/scaling.md); the results are the same either way. "
#ifdef DCSIM_HAVE_MPI
    "MPI: built in.\n"
#else
    "MPI: not in this build.\n"
#endif
    "exit status: 0 ok, 1 internal error, 2 bad input or a failed point, 130 interrupted\n";

/* Usage errors are printed by rank 0 only: every rank parses the same line. */
int sweep_usage_error(const sweep *sw, const char *fmt, const char *arg)
{
    if (sw->rank == 0)
        return cli_usage_error("sweep", fmt, arg);
    return CLI_EXIT_INPUT;
}


static int opt_grid(void *ctx, const char *v)
{
    sweep *sw = ctx;
    if (sw->n_grids == MAX_GRIDS || sweep_grid_parse(v, &sw->grids[sw->n_grids++]))
        return sweep_usage_error(sw, "--grid needs PATH=V1,V2,... with no empty value "
                                 "(at most 16 of them), e.g. --grid "
                                 "checkpoint/@interval=10min,20min%s", "");
    for (size_t k = 0; k + 1 < sw->n_grids; k++)
        if (!strcmp(sw->grids[k].path, sw->grids[sw->n_grids - 1].path))
            return sweep_usage_error(sw, "--grid %s given twice: list all its values "
                                     "in one", sw->grids[k].path);
    return 0;
}

static int opt_replicas(void *ctx, const char *v)
{
    sweep *sw = ctx;
    char *end = NULL;
    unsigned long n = strtoul(v, &end, 10);
    if (!*v || *end || v[0] == '-' || n < 1 || n > 1000000)
        return sweep_usage_error(sw, "--replicas %s: expected a whole number from 1 "
                                 "to 1000000", v);
    sw->replicas = (unsigned)n;
    return 0;
}

static int opt_seed(void *ctx, const char *v)
{
    sweep *sw = ctx;
    char *end = NULL;
    errno = 0;
    unsigned long long seed = strtoull(v, &end, 10);
    if (!*v || *end || errno == ERANGE || v[0] == '-' || v[0] == '+' || v[0] == ' ')
        return sweep_usage_error(sw, "--seed %s: expected a whole number from 0 to "
                                 "18446744073709551615", v);
    snprintf(sw->seed_set, sizeof sw->seed_set, "@seed=%llu", seed);
    return 0;
}

static int opt_write_every(void *ctx, const char *v)
{
    sweep *sw = ctx;
    char why[128];
    if (sim_units_parse(v, SIM_DIM_TIME, &sw->write_every_s, why, sizeof why) ||
        !(sw->write_every_s >= 0))
        return sweep_usage_error(sw, "--write-every %s: expected a duration, e.g. "
                                 "30s or 0s", v);
    return 0;
}

static const cli_option sweep_options[] = {
    {"--grid", 0, CLI_CALL_EACH, 0, opt_grid,
     .missing = "%s needs PATH=V1,V2,... with no empty value (at most 16 of them), e.g. "
                "--grid checkpoint/@interval=10min,20min"},
    {"--points", 0, CLI_TEXT, offsetof(sweep, points_file), .missing = "%s needs a file name"},
    {"--set", 0, CLI_SETS_EQ, offsetof(sweep, fixed), .missing = "%s needs PATH=VALUE"},
    {"--output", 'o', CLI_TEXT, offsetof(sweep, output), .missing = "%s needs a file name"},
    {"--replicas", 0, CLI_CALL, 0, opt_replicas,
     .missing = "%s : expected a whole number from 1 to 1000000"},
    {"--seed", 0, CLI_CALL, 0, opt_seed,
     .missing = "%s : expected a whole number from 0 to 18446744073709551615"},
    {"--write-every", 0, CLI_CALL, 0, opt_write_every,
     .missing = "%s : expected a duration, e.g. 30s or 0s"},
    {"--force", 0, CLI_FLAG, offsetof(sweep, force), NULL, NULL},
    {"--quiet", 'q', CLI_FLAG, offsetof(sweep, quiet), NULL, NULL},
    {"--json", 0, CLI_FLAG, offsetof(sweep, json), NULL, NULL},
    {"--csv", 0, CLI_FLAG, offsetof(sweep, csv), NULL, NULL},
    {"--help", 'h', CLI_FLAG, offsetof(sweep, help), NULL, NULL},
    {0}};

static int parse_args(sweep *sw, int argc, char **argv)
{
    const cli_command cmd = {"sweep", usage_sweep, sweep_options, 1,
                             .too_many = "more than one scenario given ('%s')",
                             .quiet = sw->rank != 0};
    size_t n_args;
    int rc = cli_parse(&cmd, argc, argv, sw, &sw->scenario, &n_args);
    if (rc || sw->help)
        return rc;
    if (sw->json && sw->csv)
        return sweep_usage_error(sw, "--json and --csv: choose one%s", "");
    if (!sw->output)
        return sweep_usage_error(sw, "no result file: give -o SWEEP.h5%s", "");
    if (!sw->n_grids == !sw->points_file)
        return sweep_usage_error(sw, "give --grid PATH=V1,V2,... (one or more) or --points "
                                 "FILE, not both%s", "");
    if (!sw->replicas)
        sw->replicas = 1;
    return 0;
}

/* ------------------------------------------------------- the table */

/* The table's statistics of point i over its replicas: time to train,
 * ETTR and failures (x: sw->replicas of scratch) */
static void point_stats(const sweep *sw, size_t i, double *x, campaign_stat s[3])
{
    const int which[3] = {M_TTT, M_ETTR, M_FAILURES};
    for (int k = 0; k < 3; k++) {
        for (unsigned r = 0; r < sw->replicas; r++)
            x[r] = sw->reps[i * sw->replicas + r].m[which[k]];
        s[k] = campaign_stat_of(x, sw->replicas);
    }
}

static void print_table(const sweep *sw)
{
    size_t w[MAX_PARAMS];
    printf("# dcsim sweep %s: %zu points x %u replicas, seed %" PRIu64 ", %s\n", sw->id,
           sw->n_points, sw->replicas, sw->pts[0].scn.seed, sw->pts[0].scn.source);
    printf("%7s", "point");
    for (size_t k = 0; k < sw->n_params; k++) {
        w[k] = strlen(sw->params[k]);
        for (size_t i = 0; i < sw->n_points; i++)
            if (sw->pts[i].values[k] && strlen(sw->pts[i].values[k]) > w[k])
                w[k] = strlen(sw->pts[i].values[k]);
        printf("  %-*s", (int)w[k], sw->params[k]);
    }
    printf("  %-7s %12s %9s %9s %8s %10s\n", "status", "train (d)", "+-95%", "ETTR", "+-95%",
           "failures");
    double *x = malloc(sw->replicas * sizeof *x);
    for (size_t i = 0; x && i < sw->n_points; i++) {
        printf("%7zu", i);
        for (size_t k = 0; k < sw->n_params; k++)
            printf("  %-*s", (int)w[k], sw->pts[i].values[k] ? sw->pts[i].values[k] : "");
        if (sw->status[i] != ST_DONE) {
            printf("  %s\n", sw->status[i] == ST_FAILED ? "failed" : "pending");
            continue;
        }
        campaign_stat s[3];
        point_stats(sw, i, x, s);
        printf("  %-7s %12.3f %9.3f %9.5f %8.5f %10.1f\n", "done", s[0].mean / 86400,
               s[0].ci95 / 86400, s[1].mean, s[1].ci95, s[2].mean);
    }
    free(x);
}

/* --csv: the table's columns unrounded, in SI units */
static void print_csv(const sweep *sw)
{
    fputs("point", stdout);
    for (size_t k = 0; k < sw->n_params; k++) {
        putchar(',');
        cli_csv_field(stdout, sw->params[k]);
    }
    puts(",status,time_to_train_s,time_to_train_ci95_s,ettr_frac,ettr_ci95_frac,failures");
    double *x = malloc(sw->replicas * sizeof *x);
    for (size_t i = 0; x && i < sw->n_points; i++) {
        printf("%zu", i);
        for (size_t k = 0; k < sw->n_params; k++) {
            putchar(',');
            cli_csv_field(stdout, sw->pts[i].values[k] ? sw->pts[i].values[k] : "");
        }
        if (sw->status[i] != ST_DONE) {
            printf(",%s,,,,,\n", sw->status[i] == ST_FAILED ? "failed" : "pending");
            continue;
        }
        campaign_stat s[3];
        point_stats(sw, i, x, s);
        fputs(",done", stdout);
        const double v[5] = {s[0].mean, s[0].ci95, s[1].mean, s[1].ci95, s[2].mean};
        for (int k = 0; k < 5; k++) {
            putchar(',');
            cli_csv_number(stdout, v[k]);
        }
        putchar('\n');
    }
    free(x);
}

/* --json: the table as the dcsim/1 document (docs/json.md "sweep"), the
 * same numbers as --csv; 0 or 1 (the error printed) */
static int print_json(const sweep *sw)
{
    cJSON *o = jsonout_begin("sweep");
    double *x = malloc(sw->replicas * sizeof *x);
    if (!o || !x) {
        free(x);
        cJSON_Delete(o);
        return jsonout_emit(NULL, JSONOUT_JSON, NULL, NULL);
    }
    char seed[24];
    snprintf(seed, sizeof seed, "%" PRIu64, sw->pts[0].scn.seed);
    cJSON_AddStringToObject(o, "sweep_id", sw->id);
    cJSON_AddStringToObject(o, "source", sw->pts[0].scn.source);
    cJSON_AddStringToObject(o, "seed", seed);
    cJSON_AddNumberToObject(o, "replicas", sw->replicas);
    cJSON_AddStringToObject(o, "output", sw->output);
    cJSON *params = cJSON_AddArrayToObject(o, "parameters");
    for (size_t k = 0; k < sw->n_params; k++)
        cJSON_AddItemToArray(params, cJSON_CreateString(sw->params[k]));
    cJSON *rows = cJSON_AddArrayToObject(o, "points");
    static const char *const names[5] = {"time_to_train_s", "time_to_train_ci95_s", "ettr_frac",
                                         "ettr_ci95_frac", "failures"};
    for (size_t i = 0; i < sw->n_points; i++) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddItemToArray(rows, r);
        cJSON_AddNumberToObject(r, "point", (double)i);
        cJSON *v = cJSON_AddObjectToObject(r, "values");
        for (size_t k = 0; k < sw->n_params; k++)
            cJSON_AddStringToObject(v, sw->params[k],
                                    sw->pts[i].values[k] ? sw->pts[i].values[k] : "");
        cJSON_AddStringToObject(r, "status", sw->status[i] == ST_DONE     ? "done"
                                             : sw->status[i] == ST_FAILED ? "failed"
                                                                          : "pending");
        if (sw->status[i] != ST_DONE)
            continue;
        campaign_stat s[3];
        point_stats(sw, i, x, s);
        const double val[5] = {s[0].mean, s[0].ci95, s[1].mean, s[1].ci95, s[2].mean};
        for (int k = 0; k < 5; k++)
            cJSON_AddNumberToObject(r, names[k], val[k]);
    }
    free(x);
    return jsonout_emit(o, JSONOUT_JSON, NULL, NULL);
}

/* ------------------------------------------------------- the command */

static void sweep_free(sweep *sw)
{
    for (size_t i = 0; sw->pts && i < sw->n_points; i++) {
        run_plan_free(&sw->pts[i].plan);
        if (sw->pts[i].loaded)
            scn_scenario_free(&sw->pts[i].scn);
        free(sw->pts[i].sets);
    }
    for (size_t k = 0; k < sw->n_grids; k++) {
        for (size_t j = 0; j < sw->grids[k].n; j++)
            free(sw->grids[k].sets[j]);
        free(sw->grids[k].sets);
        free(sw->grids[k].values);
        free(sw->grids[k].spec);
        free(sw->grids[k].given);
    }
    for (size_t k = 0; sw->owned_sets && k < sw->n_params; k++)
        free(sw->owned_sets[k]);
    free(sw->owned_sets);
    for (size_t i = 0; sw->errtext && i < sw->n_points; i++)
        free(sw->errtext[i]);
    for (size_t i = 0; sw->send_bufs && i < sw->n_sent; i++)
        free(sw->send_bufs[i]);
    free(sw->errtext);
    free(sw->points_text);
    free(sw->pts);
    free(sw->status);
    free(sw->reps_done);
    free(sw->fail_rep);
    free(sw->reps);
    free(sw->consts);
    free(sw->send_queue);
    free(sw->send_bufs);
#ifdef DCSIM_HAVE_MPI
    free(sw->send_reqs);
#endif
}

static int alloc_results(sweep *sw)
{
    size_t n = sw->n_points;
    sw->status = calloc(n, 1);
    sw->reps_done = calloc(n, sizeof *sw->reps_done);
    sw->fail_rep = malloc(n * sizeof *sw->fail_rep);
    sw->errtext = calloc(n, sizeof *sw->errtext);
    sw->reps = calloc(n * sw->replicas, sizeof *sw->reps);
    sw->consts = calloc(n * N_CONSTS, sizeof *sw->consts);
    sw->send_queue = malloc(n * sizeof *sw->send_queue);
    sw->send_bufs = calloc(n, sizeof *sw->send_bufs);
    int bad = !sw->status || !sw->reps_done || !sw->fail_rep || !sw->errtext || !sw->reps ||
              !sw->consts || !sw->send_queue || !sw->send_bufs;
#ifdef DCSIM_HAVE_MPI
    sw->send_reqs = malloc(n * sizeof *sw->send_reqs);
    bad |= !sw->send_reqs;
#endif
    for (size_t i = 0; !bad && i < n; i++)
        sw->fail_rep[i] = -1;
    if (bad)
        fprintf(stderr, "dcsim sweep: error: out of memory for %zu points x %u replicas\n", n,
                sw->replicas);
    return bad ? EXIT_FAILURE : 0;
}

/* Options, the points and their result slots. */
static int sweep_prepare(sweep *sw, int argc, char **argv)
{
    int rc = parse_args(sw, argc, argv);
    if (rc || sw->help) {
        if (sw->help && sw->rank == 0)
            fputs(usage_sweep, stdout);
        return rc;
    }
    rc = sw->points_file ? sweep_points_from_file(sw) : sweep_points_from_grids(sw);
    if (!rc)
        rc = alloc_results(sw);
    return rc;
}

static int point_exit_status(const sim_error *err)
{
    return err->code == SIM_ERR_INPUT || err->code == SIM_ERR_IO ? CLI_EXIT_INPUT : EXIT_FAILURE;
}

/* Point 0 first, on every rank: the sweep's identity needs its scenario;
 * then the resource guard on it (points run in parallel, one campaign per
 * thread) and the identity. */
static int load_point0(sweep *sw)
{
    sim_error err;
    sim_error_clear(&err);
    if (scn_load(sw->scenario, sw->pts[0].sets, sw->pts[0].n_sets, &sw->pts[0].scn, &err)) {
        if (sw->rank == 0)
            sweep_print_point_error(sw, 0, &err);
        return point_exit_status(&err);
    }
    sw->pts[0].loaded = 1;
    if (res_check(&sw->pts[0].scn, sw->pts[0].scn.step_computes_iteration ? RES_STEP : 0,
                  res_parallel_campaigns(UINT32_MAX), &err)) {
        if (sw->rank == 0)
            cli_print_error(&err);
        return CLI_EXIT_INPUT;
    }
    sweep_identity(sw);
    return 0;
}

/* Rank 0: lock the output (an unwritable place fails now, not after the
 * work; never over the scenario, a file it includes or the points file) and
 * take in the finished points of an earlier run of the same sweep. */
static int open_output(sweep *sw)
{
    sim_error err;
    sim_error_clear(&err);
    const scn_scenario *s0 = &sw->pts[0].scn;
    size_t n_in;
    const char **inputs = scn_input_paths(s0, sw->scenario, sw->points_file, &n_in);
    if (!inputs)
        return EXIT_FAILURE;
    int rc;
    if (outpath_init(&sw->out, sw->output, "the sweep file", inputs, n_in, &err) ||
        outpath_lock(&sw->out, &err)) {
        rc = cli_print_error(&err);
    } else {
        outpath_remove_stale(&sw->out); /* after the lock: no live sweep's */
        rc = sweep_store_load(sw);
    }
    free(inputs);
    return rc;
}

/* Rank 0, at the end: the failed points (the first ten), an interruption,
 * or the table; the command's exit status. */
static int report(const sweep *sw)
{
    if (sw->write_failed)
        return cli_print_error(&sw->write_err);
    size_t failed = 0;
    for (size_t i = 0; i < sw->n_points; i++)
        if (sw->status[i] == ST_FAILED) {
            if (failed++ < 10) {
                char label[1024];
                sweep_point_label(sw, i, label, sizeof label);
                fprintf(stderr, "dcsim sweep: point %zu (%s) failed: %s\n", i, label,
                        sw->errtext[i] ? sw->errtext[i] : "");
            }
        }
    if (sw->n_done < sw->n_points) {
        fprintf(stderr, "dcsim sweep: interrupted; %zu of %zu points finished, in %s; run the "
                "same command again to do the rest\n", sw->n_done, sw->n_points, sw->output);
        return CLI_EXIT_INTERRUPTED;
    }
    if (sw->csv) {
        print_csv(sw);
    } else if (sw->json) {
        if (print_json(sw))
            return EXIT_FAILURE;
    } else {
        print_table(sw);
        printf("# %zu points (%zu run now, %zu from the file), written to %s\n", sw->n_points,
               sw->n_points - sw->n_done_at_start, sw->n_done_at_start, sw->output);
    }
    if (failed) {
        fprintf(stderr, "dcsim sweep: error: %zu of %zu points failed (status \"failed\" in %s, "
                "why in /sweep/errors)\n", failed, sw->n_points, sw->output);
        return CLI_EXIT_INPUT;
    }
    return 0;
}

/* Every rank goes through the same steps; the collective ones are marked. */
static int sweep_main(sweep *sw, int argc, char **argv)
{
    int rc = sweep_prepare(sw, argc, argv);
    if (rc || sw->help)
        return rc;
    if (compare_is_hubs(sw->scenario)) /* hubs (a <cluster-jobs> too): sweep_hubs.c */
        return sweep_hubs(sw);
    if (compare_is_cluster(sw->scenario)) /* a job stream: sweep_cluster.c */
        return sweep_cluster(sw);
    if (compare_is_serve(sw->scenario)) /* a serving fleet: sweep_serve.c */
        return sweep_serve(sw);
    if ((rc = load_point0(sw)))
        return rc;
    if (sw->rank == 0)
        rc = open_output(sw);
    sweep_mpi_share_start(sw, &rc); /* collective */
    if (rc)
        return rc;
    sw->n_done_at_start = sw->n_done;
    sim_error err;
    sim_error_clear(&err);
    size_t bad = sweep_load_points(sw, &err);
    if (sweep_mpi_bad_elsewhere(sw, bad)) /* collective */
        return CLI_EXIT_INPUT;
    if (bad < sw->n_points) {
        sweep_print_point_error(sw, bad, &err);
        return point_exit_status(&err);
    }
    sweep_run(sw);
    if (sw->rank != 0)
        return 0;
    return report(sw);
}

int cmd_sweep(int argc, char **argv)
{
    sweep *sw = calloc(1, sizeof *sw);
    if (!sw) {
        fprintf(stderr, "dcsim sweep: error: out of memory\n");
        return EXIT_FAILURE;
    }
    sw->size = 1;
    sw->write_every_s = 1.0;
    sw->out.lock_fd = -1;
    if (sweep_mpi_start(sw)) {
        free(sw);
        return CLI_EXIT_INPUT;
    }
    int rc = sweep_main(sw, argc, argv);
    sweep_mpi_end(sw, &rc);
    outpath_fini(&sw->out);
    sweep_free(sw);
    free(sw);
    fflush(stdout);
    return rc;
}
