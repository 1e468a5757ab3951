/* clustercmd.c - `dcsim cluster`: a stream of jobs on the cluster's GPUs
 * under one scheduler (models/cluster.h; docs/cluster.md). Parses, runs the
 * simulation and prints (or --json) waits, slowdown, utilisation, queue
 * and fragmentation.
 */
#include "clustercmd.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "cluster.h"
#include "scenario.h"

const char usage_cluster[] =
    "usage: dcsim cluster SCENARIO.xml [--json] [--quiet] [--set PATH=VALUE]...\n"
    "\n"
    "Simulate a stream of jobs on the cluster's GPUs (the scenario's\n"
    "<cluster-jobs>, docs/cluster.md): Poisson arrivals with the scenario's\n"
    "size and duration distributions, or a CSV trace; a scheduler (fifo,\n"
    "easy-backfill) and a placement (first-fit, topology); gang starts. Prints\n"
    "each job's wait and slowdown at P50/P90/P99, utilisation, the mean queue\n"
    "and how many jobs span more leaves than they need. Every job runs its\n"
    "stated duration: interference is not modelled yet.\n"
    "\n"
    "  --json       the results as one JSON object\n"
    "  -q, --quiet  no progress on stderr (the run prints none yet)\n"
    "  --set PATH=VALUE  override a scenario value, e.g.\n"
    "               --set cluster-jobs/scheduler/@policy=fifo\n"
    "\n"
    "exit status: 0 ok, 1 internal error, 2 bad input\n";

typedef struct cluster_args {
    const char *path;
    cli_sets sets;
    int json, quiet;
} cluster_args;

static const cli_option cluster_options[] = {
    {"--json", 0, CLI_FLAG, offsetof(cluster_args, json), NULL, NULL},
    {"--quiet", 'q', CLI_FLAG, offsetof(cluster_args, quiet), NULL, NULL},
    {"--set", 0, CLI_SETS, offsetof(cluster_args, sets), .missing = "%s needs PATH=VALUE"},
    {"--help", 'h', CLI_HELP, 0, NULL, NULL},
    {0}};

static void describe_duration(const cluster_duration *d, char *buf, size_t size)
{
    int n;
    if (d->dist == CLUSTER_DUR_FIXED)
        n = snprintf(buf, size, "%.4g h", d->a_s / 3600);
    else if (d->dist == CLUSTER_DUR_UNIFORM)
        n = snprintf(buf, size, "uniform %.4g-%.4g h", d->a_s / 3600, d->b / 3600);
    else
        n = snprintf(buf, size, "lognormal, median %.4g h, sigma %.3g", d->a_s / 3600, d->b);
    if (d->max_s > 0 && n >= 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, " (at most %.4g h)", d->max_s / 3600);
}

static void describe_jobs(const scn_scenario *s, char *buf, size_t size)
{
    const cluster_config *c = &s->cluster_jobs;
    if (c->jobs) {
        snprintf(buf, size, "trace %s, %u jobs", s->cluster_trace_path, c->n_jobs);
        return;
    }
    const cluster_stream *st = &c->stream;
    char dur[128], sizes[512] = "";
    describe_duration(&st->dur, dur, sizeof dur);
    double total = 0;
    for (unsigned i = 0; i < st->n_sizes; i++)
        total += st->size_weight[i];
    size_t used = 0;
    for (unsigned i = 0; i < st->n_sizes && used < sizeof sizes; i++) {
        int n = snprintf(sizes + used, sizeof sizes - used, "%s%u (%.3g%%)", i ? ", " : "",
                         st->size_gpus[i], 100 * st->size_weight[i] / total);
        used += n > 0 ? (size_t)n : 0;
    }
    char cap[48] = "";
    if (st->max_jobs)
        snprintf(cap, sizeof cap, " or %u jobs", st->max_jobs);
    snprintf(buf, size, "poisson, %.4g jobs/h for %.4g days%s; GPUs %s; duration %s",
             st->rate_per_s * 3600, st->window_s / 86400, cap, sizes, dur);
}

static void print_stat(const char *name, const cluster_stat *q, double scale)
{
    printf("  %-12s %10.4g %10.4g %10.4g %10.4g %10.4g\n", name, q->mean / scale,
           q->q[0] / scale, q->q[1] / scale, q->q[2] / scale, q->max / scale);
}

static void print_text(const scn_scenario *s, const cluster_config *c, const cluster_result *r)
{
    char jobs[1024];
    describe_jobs(s, jobs, sizeof jobs);
    printf("dcsim cluster: %s%s%u x %s; nodes of %u, leaves of %u, SUs of %u GPUs\n", s->name,
           s->name[0] ? " on " : "", c->gpus, s->gpu.name, c->node_gpus, c->leaf_gpus,
           c->su_gpus);
    printf("jobs       %s\n", jobs);
    printf("policy     scheduler %s, placement %s; gang starts, no preemption\n",
           cluster_sched_name(c->sched), cluster_placer_name(c->placer));
    if (s->cluster_defaults[0])
        printf("defaults used: %s\n", s->cluster_defaults);
    printf("\nran        %u jobs over %.6g days (the last end); %u started ahead of an earlier "
           "job (backfill)\n",
           r->n_jobs, r->end_s / 86400, r->backfilled);
    printf("utilisation %.2f%%: busy %.6g GPU-h + idle %.6g GPU-h = %.6g GPU-h capacity\n",
           100 * r->utilisation, r->busy_gpu_s / 3600, r->idle_gpu_s / 3600,
           r->capacity_gpu_s / 3600);
    printf("queue      %.4g jobs on average, at most %u\n", r->queue_mean, r->queue_max);
    printf("\n  %-12s %10s %10s %10s %10s %10s\n", "", "mean", "P50", "P90", "P99", "max");
    print_stat("wait (h)", &r->wait_s, 3600);
    print_stat("slowdown", &r->slowdown, 1);
    printf("\nfragmentation %u jobs (%.2f%%) on more leaves than the least, %.4g extra leaves "
           "per job, GPU-weighted leaves / least %.4f; %u jobs on more nodes than the least\n",
           r->jobs_over_leaves, 100.0 * r->jobs_over_leaves / r->n_jobs, r->excess_leaves_mean,
           r->leaf_ratio_gpu_mean, r->jobs_over_nodes);
    printf("note       run time = the stated duration: fragmentation is counted, not yet "
           "slowed (docs/cluster.md)\n");
    printf("digest     %016" PRIx64 " (%" PRIu64 " events)\n", r->digest, r->events);
}

static void json_stat(cJSON *root, const char *name, const cluster_stat *q)
{
    cJSON *o = cJSON_AddObjectToObject(root, name);
    cJSON_AddNumberToObject(o, "mean", q->mean);
    cJSON_AddNumberToObject(o, "p50", q->q[0]);
    cJSON_AddNumberToObject(o, "p90", q->q[1]);
    cJSON_AddNumberToObject(o, "p99", q->q[2]);
    cJSON_AddNumberToObject(o, "max", q->max);
}

/* 0, or 1 when out of memory */
static int print_json(const scn_scenario *s, const cluster_config *c, const cluster_result *r)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return 1;
    cJSON_AddStringToObject(root, "scenario", s->name);
    cJSON_AddStringToObject(root, "gpu", s->gpu.name);
    cJSON_AddStringToObject(root, "scheduler", cluster_sched_name(c->sched));
    cJSON_AddStringToObject(root, "placement", cluster_placer_name(c->placer));
    const struct { const char *name; double value; } numbers[] = {
        {"gpus", c->gpus}, {"gpus_per_node", c->node_gpus}, {"gpus_per_leaf", c->leaf_gpus},
        {"gpus_per_su", c->su_gpus}, {"jobs", r->n_jobs}, {"end_s", r->end_s},
        {"busy_gpu_s", r->busy_gpu_s}, {"idle_gpu_s", r->idle_gpu_s},
        {"capacity_gpu_s", r->capacity_gpu_s}, {"utilisation", r->utilisation},
        {"queue_mean", r->queue_mean}, {"queue_max", r->queue_max},
        {"backfilled", r->backfilled}, {"jobs_over_leaves", r->jobs_over_leaves},
        {"excess_leaves_mean", r->excess_leaves_mean},
        {"leaf_ratio_gpu_mean", r->leaf_ratio_gpu_mean},
        {"jobs_over_nodes", r->jobs_over_nodes}, {"events", (double)r->events}};
    for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++)
        cJSON_AddNumberToObject(root, numbers[i].name, numbers[i].value);
    json_stat(root, "wait_s", &r->wait_s);
    json_stat(root, "slowdown", &r->slowdown);
    char digest[24];
    snprintf(digest, sizeof digest, "%016" PRIx64, r->digest);
    cJSON_AddStringToObject(root, "digest", digest);
    cJSON_AddStringToObject(root, "defaults_used", s->cluster_defaults);
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!text)
        return 1;
    puts(text);
    cJSON_free(text);
    return 0;
}

int cmd_cluster(int argc, char **argv)
{
    static const cli_command cmd = {"cluster", usage_cluster, cluster_options, 1,
                                    .too_many = "more than one scenario given ('%s')"};
    cluster_args o = {0};
    size_t n_args;
    int rc = cli_parse(&cmd, argc, argv, &o, &o.path, &n_args);
    if (rc)
        return rc == CLI_DONE ? 0 : rc;
    if (!o.path)
        return cli_usage_error("cluster", "a scenario with <cluster-jobs> is needed%s", "");
    scn_scenario s;
    sim_error err;
    sim_error_clear(&err);
    if (scn_load_flags(o.path, o.sets.v, o.sets.n, SCN_LOAD_CLUSTER, &s, &err))
        return cli_print_error(&err);
    if (!s.has_cluster_jobs) {
        sim_error_set(&err, SIM_ERR_INPUT, s.source, 0,
                      "no <cluster-jobs> section: dcsim cluster simulates a job stream "
                      "(docs/cluster.md)");
        scn_scenario_free(&s);
        return cli_print_error(&err);
    }
    cluster_result r;
    rc = cluster_simulate(&s.cluster_jobs, &r, &err);
    if (rc) {
        if (!err.file[0])
            snprintf(err.file, sizeof err.file, "%s", s.source);
        scn_scenario_free(&s);
        return cli_print_error(&err);
    }
    if (o.json)
        rc = print_json(&s, &s.cluster_jobs, &r);
    else
        print_text(&s, &s.cluster_jobs, &r);
    cluster_result_free(&r);
    scn_scenario_free(&s);
    if (rc)
        fprintf(stderr, "dcsim cluster: error: out of memory\n");
    return rc;
}
