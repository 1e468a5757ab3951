/* main.c - the dcsim command: its table of commands (dispatch, help, man pages,
 * completions), and run, validate, default, version, help.
 *
 * The only place that chooses exit codes and prints errors:
 *   0 success, 1 internal error or out of memory, 2 bad input (scenario,
 *   option, unreadable scenario, unwritable trace), 130 interrupted.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <gsl/gsl_errno.h>
#include <libxml/parser.h>

#include "calibrate.h"
#include "campaign.h"
#include "cli.h"
#include "compare.h"
#include "energyrun.h"
#include "error.h"
#include "goodput.h"
#include "jsonout.h"
#include "manpage.h"
#include "netcmd.h"
#include "progress.h"
#include "report.h"
#include "resources.h"
#include "scenario.h"
#include "serve.h"
#include "clustercmd.h"
#include "hubscmd.h"
#include "sizing.h"
#include "run.h"
#include "stepcmd.h"
#include "summary.h"
#include "sweep.h"
#include "trace.h"
#include "version.h"

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

static const char usage_main[] =
    "usage: dcsim COMMAND [ARGS]\n"
    "\n"
    "dcsim simulates AI training runs on datacenter clusters: one iteration in\n"
    "detail on the real fabric, and the whole run with failures, checkpoints\n"
    "and restarts.\n"
    "\n"
    "commands:\n"
    "  run [SCENARIO.xml]     simulate a scenario (the built-in default if none)\n"
    "  validate SCENARIO.xml  check a scenario without running it\n"
    "  fit [SCENARIO.xml]     training memory per GPU and pipeline stage: does it fit?\n"
    "  size MODEL GPU         inference sizing: GPUs and sequences per replica\n"
    "  serve SCENARIO.xml     an inference fleet request by request: TTFT, TPOT, P99\n"
    "  cluster SCENARIO.xml   a job stream on the cluster: scheduler, placement, waits\n"
    "  hubs SCENARIO.xml      demand placed across the hubs: cost, CO2, water, latency\n"
    "  calibrate              fit the timing models to this machine's CPU\n"
    "  goodput [SCENARIO.xml] goodput over the checkpoint interval, and its optimum\n"
    "  step [SCENARIO.xml]    one iteration in detail: where the time goes\n"
    "  topo [SCENARIO.xml]    the fabric: switches, cables, bisection, diameter\n"
    "  netbench [SCENARIO.xml] an nccl-tests-style collective sweep on the fabric\n"
    "  compare [SCENARIO.xml ...] --vary site=a,b  energy, cost and CO2 side by side\n"
    "  report TRACE.h5 [MORE.h5 ...]  an HTML report with figures; runs compared\n"
    "  sweep [SCENARIO.xml] --grid PATH=V1,V2 -o SWEEP.h5  many points x replicas,\n"
    "                         OpenMP and MPI, resumable (docs/scaling.md)\n"
    "  default                print the built-in default scenario\n"
    "  version                print the version (also dcsim --version, dcsim -V)\n"
    "  help [COMMAND]         show help for a command (also dcsim COMMAND --help)\n"
    "\n"
    "options: -h, --help, -V, --version. A command's options: --name VALUE or\n"
    "--name=VALUE, anywhere on the line; -- ends them (dcsim run -- -odd.xml).\n"
    "Counts take K M G T P as powers of 1000 (8K = 8000), sizes KB MB GB as\n"
    "powers of 1000 and KiB MiB GiB as powers of 1024 (docs/scenario.md).\n"
    "docs: man dcsim-COMMAND; README.md and docs/*.md (installed under\n"
    "share/doc/dcsim), example scenarios (installed under share/dcsim/examples)\n";

static const char usage_run[] =
    "usage: dcsim run [SCENARIO.xml] [-o TRACE.h5] [--seed N] [--replicas N]\n"
    "                 [--set PATH=VALUE]... [--json | --csv] [--quiet] [--flow-log N]\n"
    "\n"
    "Simulate the scenario (the built-in default when none is given) and print\n"
    "a summary table on stdout.\n"
    "\n"
    "  -o, --output TRACE.h5  write an HDF5 trace (docs/trace-format.md); it is\n"
    "                         written under a temporary name and renamed when\n"
    "                         complete, so an interrupted run leaves nothing;\n"
    "                         never over the scenario or a non-regular file\n"
    "  --seed N               master random seed (overrides <dcsim seed>)\n"
    "  --replicas N           Monte Carlo: N independent runs on their own random\n"
    "                         streams, in parallel (OMP_NUM_THREADS); the summary\n"
    "                         adds mean and 95 % confidence intervals, the trace\n"
    "                         /replicas (replica 0 is the plain run)\n"
    "  --set PATH=VALUE       override an attribute, e.g.\n"
    "                         --set checkpoint/@interval=20min\n"
    "                         --set cluster/gpu/@count=8192\n"
    "                         (repeatable; validated like the file)\n"
    "  --json                 print the summary as one JSON object instead\n"
    "                         (docs/json.md)\n"
    "  --csv                  print the summary as CSV instead: a header of the\n"
    "                         metrics' names and one row of their values\n"
    "  -q, --quiet            no progress on stderr (it is shown only on a\n"
    "                         terminal, for runs longer than a second)\n"
    "  --flow-log N           with <step network=\"concurrent\">: the trace's\n"
    "                         /step/flows, the iteration's first N flows\n"
    "                         (dcsim step --flow-log; docs/step.md)\n"
    "\n"
    "exit status: 0 ok, 1 internal error, 2 bad input, 130 interrupted\n";

static const char usage_validate[] =
    "usage: dcsim validate SCENARIO.xml [--set PATH=VALUE]... [--json]\n"
    "\n"
    "Parse, resolve XIncludes, apply --set, check against the schema and the\n"
    "semantic rules, and report the first problem as FILE:LINE: error: ...\n"
    "Exit status 0 when the scenario is valid, 2 otherwise.\n"
    "\n"
    "  --json  the verdict as one JSON object on stdout (docs/json.md): valid\n"
    "          true or false and, when false, the error's file, line and\n"
    "          message (also printed on stderr)\n";

static const char usage_default[] =
    "usage: dcsim default\n"
    "\n"
    "Print the built-in default scenario (scenarios/examples/default.xml), a\n"
    "starting point for your own: dcsim default > my.xml\n";

/* cmd_help and the command table are at the end of the file */
static int cmd_help(const char *topic);

typedef struct options {
    const char *scenario;
    const char *output;
    cli_sets sets;
    char seed_set[64];
    int json;
    int csv;
    int quiet;
    int help;
    unsigned replicas;  /* --replicas N; 0 = 1 */
    size_t flow_log;    /* --flow-log N (has_flow_log) */
    int has_flow_log;
} options;

static int opt_flow_log(void *ctx, const char *v)
{
    options *o = ctx;
    o->has_flow_log = 1;
    return step_parse_flow_log("run", v, &o->flow_log);
}

static int opt_seed(void *ctx, const char *v)
{
    options *o = ctx;
    char *end = NULL;
    errno = 0;
    unsigned long long seed = strtoull(v, &end, 10);
    if (!*v || *end || errno == ERANGE || v[0] == '-' || v[0] == '+' || v[0] == ' ')
        return cli_usage_error("run", "--seed %s: expected a whole number from 0 to 18446744073709551615", v);
    snprintf(o->seed_set, sizeof o->seed_set, "@seed=%llu", seed);
    return 0;
}

static int opt_replicas(void *ctx, const char *v)
{
    options *o = ctx;
    char *end = NULL;
    unsigned long n = strtoul(v, &end, 10);
    if (!*v || *end || v[0] == '-' || n < 1 || n > 1000000)
        return cli_usage_error("run", "--replicas %s: expected a whole number from 1 to 1000000", v);
    o->replicas = (unsigned)n;
    return 0;
}

#define SET_OPTION                                                                          \
    {"--set", 0, CLI_SETS, offsetof(options, sets),                                        \
     .missing = "%s needs PATH=VALUE, e.g. --set checkpoint/@interval=20min"}
#define HELP_OPTION {"--help", 'h', CLI_FLAG, offsetof(options, help), NULL, NULL}

static const cli_option run_options[] = {
    SET_OPTION,
    {"--output", 'o', CLI_TEXT, offsetof(options, output), .missing = "%s needs a file name"},
    {"--seed", 0, CLI_CALL, .fn = opt_seed, .missing = "%s needs a number"},
    {"--replicas", 0, CLI_CALL, .fn = opt_replicas, .missing = "%s needs a number"},
    {"--flow-log", 0, CLI_CALL, .fn = opt_flow_log,
     .missing = "%s needs a whole number from 0 to 10000000"},
    {"--json", 0, CLI_FLAG, offsetof(options, json), NULL, NULL},
    {"--csv", 0, CLI_FLAG, offsetof(options, csv), NULL, NULL},
    {"--quiet", 'q', CLI_FLAG, offsetof(options, quiet), NULL, NULL},
    HELP_OPTION,
    {0}};

static const cli_option validate_options[] = {
    SET_OPTION, {"--json", 0, CLI_FLAG, offsetof(options, json), NULL, NULL}, HELP_OPTION, {0}};

static const cli_command run_command = {"run", usage_run, run_options, 1,
                                        .too_many = "more than one scenario given ('%s')"};
static const cli_command validate_command = {"validate", usage_validate, validate_options, 1,
                                             .too_many = "more than one scenario given ('%s')"};

/* run's or validate's options; 0, or the exit status of a usage error */
static int parse_options(const cli_command *cmd, int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    size_t n_args;
    int rc = cli_parse(cmd, argc, argv, o, &o->scenario, &n_args);
    if (!rc && o->seed_set[0]) /* --seed wins over any --set @seed */
        o->sets.v[o->sets.n++] = o->seed_set;
    return rc;
}

/* ---------------------------------------------------------------- progress */

static int on_poll(void *ctx, double progress_frac, double sim_time_s)
{
    progress *p = ctx;
    double wall;
    if (interrupted)
        return 1;
    if (progress_due(p, 0.25, &wall)) {
        fprintf(stderr, "\r  simulating: %5.1f%% of tokens trained, day %.1f of the run, %.0f s   ",
                100.0 * progress_frac, sim_time_s / 86400.0, wall);
        fflush(stderr);
    }
    return 0;
}

/* ---------------------------------------------------------------- commands */

/* Replica progress: on a terminal, after a second, never with --quiet;
 * called one at a time by the replica loop. Stops the rest on SIGINT. */
typedef struct replica_progress {
    progress *prog;
    int unused;
} replica_progress;

static int on_replica(void *ctx, unsigned done, unsigned total)
{
    replica_progress *rp = ctx;
    double wall;
    if (progress_due(rp->prog, 0.2, &wall))
        fprintf(stderr, "\r\033[Kreplicas %u of %u  (%.0f s)", done, total, wall);
    return interrupted != 0;
}

/* The trace file, never over the scenario or a file it includes. */
static int open_trace(const options *o, const scn_scenario *scn, trace_writer **tw,
                      sim_error *err)
{
    *tw = NULL;
    if (!o->output)
        return 0;
    size_t n;
    const char **inputs = scn_input_paths(scn, o->scenario, NULL, &n);
    if (!inputs)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
    int rc = trace_open(o->output, inputs, n, tw, err);
    free(inputs);
    return rc;
}

static void catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL); /* a closed terminal: stop as for SIGTERM, leave no temporary */
}

/* Replicas 2..n (the first is the run already done, first): their
 * statistics in *mc; reps (n entries) is the caller's. */
static int run_replicas(const run_plan *plan, const campaign_result *first, unsigned n,
                        campaign_result *reps, progress *prog, campaign_mc *mc, sim_error *err)
{
    reps[0] = *first;
    replica_progress rp = {prog, 0};
    int rc = campaign_run_replicas(&plan->campaign, n, reps, on_replica, &rp, err);
    progress_clear(prog);
    if (!rc)
        campaign_mc_summarize(reps, n, mc);
    mc->throttled |= plan->scn->throttle_given; /* the row, even with no hour hot */
    return rc;
}

/* The results on stdout: JSON or the tables. Returns 0 or 1 (no memory). */
static int print_results(const options *o, const run_plan *plan, const run_outcome *out,
                         const run_summary *sum, const campaign_mc *mc)
{
    const scn_scenario *scn = plan->scn;
    if (o->csv) /* the summary's metrics, one row */
        return jsonout_emit(summary_json_doc(scn, sum, mc), JSONOUT_CSV, "summary", NULL);
    if (o->json) {
        char *json = mc ? summary_json_replicas(scn, sum, mc) : summary_json(scn, sum);
        if (!json) {
            fprintf(stderr, "error: out of memory\n");
            return EXIT_FAILURE;
        }
        fputs(json, stdout);
        free(json);
        return 0;
    }
    summary_print_table(stdout, plan, &out->result, sum);
    if (out->has_energy)
        summary_print_site(stdout, scn, &out->energy);
    summary_print_causes(stdout, scn, &out->result, mc);
    if (mc)
        summary_print_replicas(stdout, mc);
    if (o->output)
        printf("  trace written to %s\n", o->output);
    return 0;
}

static int cmd_run(int argc, char **argv)
{
    options o;
    int rc = parse_options(&run_command, argc, argv, &o);
    if (rc)
        return rc;
    if (o.help)
        return cmd_help("run");
    if (o.json && o.csv)
        return jsonout_one_format("run");

    sim_error err;
    sim_error_clear(&err);
    scn_scenario scn;
    if (scn_load(o.scenario, o.sets.v, o.sets.n, &scn, &err))
        return cli_print_error(&err);
    if (o.has_flow_log) {
        scn.step.flow_log = o.flow_log;
        scn.flow_log_given = 1;
    }
    run_plan plan;
    trace_writer *tw = NULL;
    rc = run_plan_prepare(&scn, res_parallel_campaigns(o.replicas), RUN_PLAN_ENERGY, &plan, &err);
    if (!rc)
        rc = open_trace(&o, &scn, &tw, &err);
    if (rc) {
        run_plan_free(&plan);
        scn_scenario_free(&scn);
        return cli_print_error(&err);
    }
    catch_signals();

    progress prog;
    progress_start(&prog, o.quiet);
    campaign_sink trace_sink = tw ? trace_campaign_sink(tw) : (campaign_sink){0};
    run_outcome out;
    rc = run_execute(&plan, NULL, &trace_sink, on_poll, &prog, &out, &err);
    progress_clear(&prog);

    run_summary sum;
    if (!rc)
        summary_build(&plan, &out.result, &sum);
    if (!rc && out.has_energy)
        summary_add_energy(&sum, &scn, &out.result, &out.energy);
    if (!rc && out.has_energy && tw)
        rc = trace_write_energy(tw, &out.energy, &err);
    if (!rc && interrupted)
        rc = sim_error_set(&err, SIM_ERR_INTERRUPTED, NULL, 0, "interrupted");
    unsigned n_rep = o.replicas > 1 ? o.replicas : 1;
    campaign_result *reps = NULL;
    campaign_mc mc;
    memset(&mc, 0, sizeof mc);
    if (!rc && n_rep > 1) {
        reps = malloc(n_rep * sizeof *reps);
        rc = reps ? run_replicas(&plan, &out.result, n_rep, reps, &prog, &mc, &err)
                  : sim_error_set(&err, SIM_ERR_NOMEM, NULL, 0, "out of memory for %u replicas",
                                  n_rep);
    }
    if (!rc) /* nothing out of range is printed or stored */
        rc = summary_check(&sum, n_rep > 1 ? &mc : NULL, &err);
    if (!rc && tw && n_rep > 1)
        rc = trace_write_replicas(tw, reps, n_rep, &err);
    if (!rc && tw && plan.step.used)
        rc = trace_write_step(tw, &plan.step.profile, &err);
    if (!rc && tw && plan.step.used && plan.step.profile.packet_series)
        rc = trace_write_packet(tw, &scn, &plan.step.profile, &plan.step.packet.cfg, &err);
    if (!rc && tw && plan.step.used && scn.flow_log_given && plan.step.profile.flows_total) {
        const step_profile *sp = &plan.step.profile;
        rc = trace_write_step_flows(tw, sp, &err);
        if (!rc && sp->flows_truncated) /* never silently */
            fprintf(stderr, "dcsim run: note: flow log truncated at %zu flows (of %llu; "
                    "--flow-log N raises the cap)\n", sp->n_flows,
                    (unsigned long long)sp->flows_total);
    }
    if (!rc && tw) {
        rc = trace_commit(tw, &scn, &out.result, &sum, &err);
        tw = NULL;
    }
    if (rc && err.code == SIM_ERR_INPUT && !err.file[0]) /* the campaign's: name the scenario */
        snprintf(err.file, sizeof err.file, "%s", scn.source);
    if (!rc)
        rc = print_results(&o, &plan, &out, &sum, n_rep > 1 ? &mc : NULL);
    else
        trace_abort(tw);
    run_outcome_free(&out);
    run_plan_free(&plan);
    scn_scenario_free(&scn);
    free(reps);
    if (rc && err.code == SIM_ERR_INTERRUPTED) {
        fprintf(stderr, "dcsim: interrupted; %s\n", o.output ? "no trace written" : "no results");
        return CLI_EXIT_INTERRUPTED;
    }
    return rc && err.code ? cli_print_error(&err) : rc;
}

/* validate --json: the verdict; scn NULL when invalid (err). 0, or 1 (the
 * error printed). */
static int validate_json(const char *path, const scn_scenario *scn, const sim_error *err)
{
    cJSON *o = jsonout_begin("validate");
    if (o) {
        cJSON_AddStringToObject(o, "scenario_file", path);
        cJSON_AddBoolToObject(o, "valid", scn != NULL);
    }
    if (o && scn) {
        cJSON_AddStringToObject(o, "scenario", scn->name);
        cJSON_AddNumberToObject(o, "gpus", (double)scn->campaign.gpu_count);
        cJSON_AddStringToObject(o, "gpu_type", scn->gpu.name);
    } else if (o) {
        cJSON *e = cJSON_AddObjectToObject(o, "error");
        cJSON_AddStringToObject(e, "file", err->file);
        cJSON_AddNumberToObject(e, "line", err->line);
        cJSON_AddStringToObject(e, "message", err->msg);
    }
    return jsonout_emit(o, JSONOUT_JSON, NULL, NULL);
}

static int cmd_validate(int argc, char **argv)
{
    options o;
    int rc = parse_options(&validate_command, argc, argv, &o);
    if (rc)
        return rc;
    if (o.help)
        return cmd_help("validate");
    if (!o.scenario)
        return cli_usage_error("validate", "no scenario given%s", "");
    sim_error err;
    sim_error_clear(&err);
    scn_scenario scn;
    int bad = scn_load_flags(o.scenario, o.sets.v, o.sets.n, SCN_LOAD_SERVING, &scn, &err);
    if (o.json && validate_json(o.scenario, bad ? NULL : &scn, &err)) {
        if (!bad)
            scn_scenario_free(&scn);
        return EXIT_FAILURE;
    }
    if (bad)
        return cli_print_error(&err);
    if (!o.json)
        printf("%s: ok (%" PRIu64 " x %s, %s)\n", o.scenario, scn.campaign.gpu_count,
               scn.gpu.name, scn.name[0] ? scn.name : "unnamed");
    scn_scenario_free(&scn);
    return 0;
}

static int cmd_default(int argc, char **argv)
{
    static const cli_option options[] = {{"--help", 'h', CLI_HELP, 0, NULL, NULL}, {0}};
    static const cli_command cmd = {"default", usage_default, options, 0,
                                    .too_many = "unexpected argument '%s'"};
    size_t n_args;
    int rc = cli_parse(&cmd, argc, argv, NULL, NULL, &n_args);
    if (rc)
        return rc == CLI_DONE ? 0 : rc;
    size_t len;
    const char *text = scn_default_xml(&len);
    return fwrite(text, 1, len, stdout) == len ? 0 : EXIT_FAILURE;
}

/* ---------------------------------------------------------------- the commands */

static const char usage_version[] =
    "usage: dcsim version\n"
    "\n"
    "Print the version line, \"dcsim VERSION\" (dcsim --version and dcsim -V\n"
    "print the same).\n";

static const char usage_help[] =
    "usage: dcsim help [COMMAND] [--man] [--commands]\n"
    "\n"
    "Print COMMAND's help (the same as dcsim COMMAND --help), or dcsim's.\n"
    "\n"
    "  --man       the help as a man page (roff) on stdout: dcsim(1) without\n"
    "              COMMAND, dcsim-COMMAND(1) with one (man -l - renders it)\n"
    "  --commands  the commands, one per line: the name, a tab, what it does\n";

static int cmd_version(int argc, char **argv);
static int cmd_help_command(int argc, char **argv);

/* Every command: dispatch, help, the man pages and the shell completions
 * (cmake/gen-docs.sh reads `dcsim help --commands`). */
typedef struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *usage;   /* its --help text */
    const char *summary; /* one line: what it does */
} command;

static const command commands[] = {
    {"run", cmd_run, usage_run, "simulate a scenario (the built-in default if none)"},
    {"validate", cmd_validate, usage_validate, "check a scenario without running it"},
    {"fit", cmd_fit, usage_fit, "training memory per GPU and pipeline stage: does it fit?"},
    {"size", cmd_size, usage_size, "inference sizing: GPUs and sequences per replica"},
    {"serve", cmd_serve, usage_serve, "an inference fleet request by request: TTFT, TPOT, P99"},
    {"cluster", cmd_cluster, usage_cluster, "a job stream on the cluster: scheduler, placement, waits"},
    {"hubs", cmd_hubs, usage_hubs, "demand placed across the hubs: cost, CO2, water, latency"},
    {"calibrate", cmd_calibrate, calibrate_usage, "fit the timing models to this machine's CPU"},
    {"goodput", cmd_goodput, usage_goodput, "goodput over the checkpoint interval, and its optimum"},
    {"step", cmd_step, usage_step, "one iteration in detail: where the time goes"},
    {"topo", cmd_topo, usage_topo, "the fabric: switches, cables, bisection, diameter"},
    {"netbench", cmd_netbench, usage_netbench, "an nccl-tests-style collective sweep on the fabric"},
    {"compare", cmd_compare, usage_compare, "energy, cost and CO2 of variants side by side"},
    {"report", cmd_report, usage_report, "an HTML report with figures; runs compared"},
    {"sweep", cmd_sweep, usage_sweep, "many points x replicas, OpenMP and MPI, resumable"},
    {"default", cmd_default, usage_default, "print the built-in default scenario"},
    {"version", cmd_version, usage_version, "print the version"},
    {"help", cmd_help_command, usage_help, "show help for a command"},
    {NULL, NULL, NULL, NULL}};

static const command *find_command(const char *name)
{
    for (const command *c = commands; c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

/* The error for an unknown command name, with the list of commands;
 * returns its exit status. who: "dcsim" or "dcsim help". */
static int unknown_command(const char *who, const char *name)
{
    char names[256] = "";
    size_t used = 0;
    for (const command *c = commands; c->name && used < sizeof names; c++)
        used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", used ? " " : "",
                                 c->name);
    fprintf(stderr, "%s: error: unknown command '%s'; commands: %s\n", who, name, names);
    return CLI_EXIT_INPUT;
}

static int cmd_help(const char *topic)
{
    if (!topic) {
        fputs(usage_main, stdout);
        return 0;
    }
    const command *c = find_command(topic);
    if (!c) {
        return unknown_command("dcsim help", topic);
    }
    fputs(c->usage, stdout);
    return 0;
}

static int cmd_version(int argc, char **argv)
{
    static const cli_option options[] = {{"--help", 'h', CLI_HELP, 0, NULL, NULL}, {0}};
    static const cli_command cmd = {"version", usage_version, options, 0,
                                    .too_many = "unexpected argument '%s'"};
    size_t n_args;
    int rc = cli_parse(&cmd, argc, argv, NULL, NULL, &n_args);
    if (rc)
        return rc;
    printf("dcsim %s\n", DCSIM_VERSION);
    return 0;
}

typedef struct help_args {
    int man;
    int commands;
} help_args;

/* dcsim(1): the main usage, and every command's page under SEE ALSO */
static int man_main(void)
{
    const char *names[sizeof commands / sizeof commands[0]];
    size_t n = 0;
    for (const command *c = commands; c->name; c++)
        names[n++] = c->name;
    return man_write(stdout, NULL, "a discrete-event simulator for AI datacenters", usage_main,
                     names, n);
}

static int cmd_help_command(int argc, char **argv)
{
    static const cli_option options[] = {
        {"--man", 0, CLI_FLAG, offsetof(help_args, man), NULL, NULL},
        {"--commands", 0, CLI_FLAG, offsetof(help_args, commands), NULL, NULL},
        {"--help", 'h', CLI_HELP, 0, NULL, NULL},
        {0}};
    static const cli_command cmd = {"help", usage_help, options, 1,
                                    .too_many = "more than one command given ('%s')"};
    help_args h = {0};
    const char *topic = NULL;
    size_t n_args;
    int rc = cli_parse(&cmd, argc, argv, &h, &topic, &n_args);
    if (rc)
        return rc;
    if (h.commands) {
        for (const command *c = commands; c->name; c++)
            printf("%s\t%s\n", c->name, c->summary);
        return 0;
    }
    if (!h.man)
        return cmd_help(topic);
    if (!topic)
        return man_main() ? EXIT_FAILURE : 0;
    const command *c = find_command(topic);
    if (!c) {
        return unknown_command("dcsim help", topic);
    }
    return man_write(stdout, c->name, c->summary, c->usage, NULL, 0) ? EXIT_FAILURE : 0;
}

int main(int argc, char **argv)
{
    /* dcsim reports library errors itself, once, in its own format */
    gsl_set_error_handler_off();
    trace_hdf5_startup();
    LIBXML_TEST_VERSION
    cli_cap_threads();
    /* over `ulimit -f` a write fails with EFBIG and is reported, instead of
     * the signal killing dcsim without a word (and leaving its temporary) */
    signal(SIGXFSZ, SIG_IGN);

    int rc;
    const command *c;
    if (argc < 2) {
        fputs(usage_main, stderr);
        rc = CLI_EXIT_INPUT;
    } else if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        rc = cmd_help(NULL);
    } else if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
        rc = cmd_version(argc - 2, argv + 2);
    } else if ((c = find_command(argv[1]))) {
        rc = c->fn(argc - 2, argv + 2);
    } else {
        rc = unknown_command("dcsim", argv[1]);
    }
    if (rc == CLI_DONE) /* an option finished the command: --help, --list-options */
        rc = 0;
    xmlCleanupParser();
    return rc;
}
