/* clustercmd.c - `dcsim cluster`: a stream of jobs on the cluster's GPUs
 * under one scheduler (models/cluster.h; docs/cluster.md). Parses, runs the
 * scenario (clusterrun.h, which dcsim compare runs too) and prints (or
 * --json) waits, slowdown, utilisation, queue, fragmentation, power, energy,
 * cost and CO2 at the site (clusterenergy.h), utilisation and queue per time
 * bin and CDF points of wait and slowdown; -o writes the HDF5 tables
 * (clustertrace.h).
 */
#include "clustercmd.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "jsonout.h"
#include "cluster.h"
#include "cluster_interf.h"
#include "cluster_series.h"
#include "clusterenergy.h"
#include "clusterrun.h"
#include "clustertrace.h"
#include "scenario.h"

#define CDF_POINTS CLUSTER_CDF_POINTS

const char usage_cluster[] =
    "usage: dcsim cluster SCENARIO.xml [--json | --csv] [-o FILE.h5] [--quiet]\n"
    "                     [--set PATH=VALUE]...\n"
    "\n"
    "Simulate a stream of jobs on the cluster's GPUs (the scenario's\n"
    "<cluster-jobs>, docs/cluster.md): Poisson arrivals with the scenario's\n"
    "size and duration distributions, or a CSV trace; a scheduler (fifo,\n"
    "easy-backfill) and a placement (first-fit, topology); gang starts. Prints\n"
    "each job's wait and slowdown at P50/P90/P99, utilisation, the mean queue\n"
    "and how many jobs span more leaves than they need; the IT power of the\n"
    "busy and idle GPUs over time and its energy, and at the scenario's <site>\n"
    "the facility energy at the hourly PUE, cost and CO2 (without a <site>: IT\n"
    "energy only); utilisation and queue per time bin; CDF points of wait and\n"
    "slowdown. With a <cluster><fabric>, interference: every running job's\n"
    "collective (a ring all-reduce, or <traffic collective>: all-gather,\n"
    "reduce-scatter, all-to-all) is timed with its neighbours' on the flow\n"
    "model and the part its compute does not hide (<traffic overlap>) slows\n"
    "its iterations (<cluster-jobs><traffic>); without one,\n"
    "every job runs its stated duration. Optional: checkpoint-then-preempt by\n"
    "higher priorities (<scheduler preempt>), maintenance windows\n"
    "(<maintenance>), node failures with hot spares (<failures>): preemptions,\n"
    "lost and down GPU-hours, goodput; with a <fabric> too, the paces re-timed\n"
    "at every start, end, eviction, failure and restart (docs/cluster.md).\n"
    "\n"
    "  --json       the results as one JSON object (docs/json.md)\n"
    "  --csv        the results as CSV: a header and one row (wait_s_p99,\n"
    "               power_..., energy_...; the bins and CDF points are in\n"
    "               --json only)\n"
    "  -o, --output FILE.h5  the tables /cluster/jobs and /cluster/series\n"
    "               (docs/trace-format.md), written under a temporary name and\n"
    "               renamed at the end\n"
    "  -q, --quiet  no progress on stderr (the run prints none yet)\n"
    "  --set PATH=VALUE  override a scenario value, e.g.\n"
    "               --set cluster-jobs/scheduler/@policy=fifo\n"
    "\n"
    "exit status: 0 ok, 1 internal error, 2 bad input\n";

typedef struct cluster_args {
    const char *path, *output;
    cli_sets sets;
    int json, csv, quiet;
} cluster_args;

static const cli_option cluster_options[] = {
    {"--json", 0, CLI_FLAG, offsetof(cluster_args, json), NULL, NULL},
    {"--csv", 0, CLI_FLAG, offsetof(cluster_args, csv), NULL, NULL},
    {"--quiet", 'q', CLI_FLAG, offsetof(cluster_args, quiet), NULL, NULL},
    {"--output", 'o', CLI_TEXT, offsetof(cluster_args, output), .missing = "%s needs a file name"},
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

static void describe_stream(const scn_scenario *s, char *buf, size_t size);

/* the stream (or trace), and the training runs when there are any */
static void describe_jobs(const scn_scenario *s, char *buf, size_t size)
{
    describe_stream(s, buf, size);
    size_t used = strlen(buf);
    if (s->n_cluster_training && used < size)
        snprintf(buf + used, size - used, "; and %u training run%s of the <job>",
                 s->n_cluster_training, s->n_cluster_training > 1 ? "s" : "");
}

static void describe_stream(const scn_scenario *s, char *buf, size_t size)
{
    const cluster_config *c = &s->cluster_jobs;
    if (c->jobs) {
        snprintf(buf, size, "trace %s, %u jobs", s->cluster_trace_path, c->n_jobs);
        return;
    }
    const cluster_stream *st = &c->stream;
    if (!(st->rate_per_s > 0)) {
        snprintf(buf, size, "no stream");
        return;
    }
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

static void describe_traffic(const scn_scenario *s, char *buf, size_t size)
{
    const cluster_traffic_table *tt = &s->cluster_traffic;
    size_t used = 0;
    for (unsigned i = 0; i < tt->n && used < size; i++) {
        const cluster_traffic *t = &tt->t[i];
        if (t->from_model) {
            const struct scn_cluster_model *m = &s->cluster_model[i];
            char opts[96];
            cluster_model_layout_text(s, i, opts, sizeof opts);
            int k = snprintf(buf + used, size - used, "%sfrom %u GPUs: model %s (micro-batch "
                             "%u, global-batch %u), tp %u pp %u ep %u%s, from the step tier",
                             i ? "; " : "", tt->from_gpus[i], m->arch.name, m->micro_batch,
                             m->global_batch, t->tp ? t->tp : 1, t->pp ? t->pp : 1,
                             t->ep ? t->ep : 1, opts);
            used += k > 0 ? (size_t)k : 0;
            continue;
        }
        char c[64];
        if (t->comm_share > 0)
            snprintf(c, sizeof c, "communication %.4g%% of compute + communication",
                     100 * t->comm_share);
        else
            snprintf(c, sizeof c, "compute %.4g s", t->compute_s);
        char o[48] = "";
        if (t->overlap > 0)
            snprintf(o, sizeof o, ", hidden under %.4g%% of the compute", 100 * t->overlap);
        const char *name = cluster_traffic_collective_name(t->collective);
        char what[320] = "";
        if (!t->n_colls)
            snprintf(what, sizeof what, "%s %.4g GB per GPU", name ? name : "collective",
                     t->bytes / 1e9);
        else { /* a layout: its rows, all at once in their groups */
            size_t w = (size_t)snprintf(what, sizeof what, "tp %u pp %u ep %u:",
                                        t->tp ? t->tp : 1, t->pp ? t->pp : 1,
                                        t->ep ? t->ep : 1);
            for (unsigned r = 0; r < t->n_colls && w < sizeof what; r++) {
                const char *cn = cluster_traffic_collective_name(t->coll[r].collective);
                int k = snprintf(what + w, sizeof what - w, "%s %s %s %.4g GB", r ? " +" : "",
                                 cn ? cn : "collective", cluster_group_name(t->coll[r].group),
                                 t->coll[r].bytes / 1e9);
                w += k > 0 ? (size_t)k : 0;
            }
            if (w < sizeof what)
                snprintf(what + w, sizeof what - w, " per GPU");
        }
        int k = snprintf(buf + used, size - used, "%sfrom %u GPUs: %s, %s%s", i ? "; " : "",
                         tt->from_gpus[i], c, what, o);
        used += k > 0 ? (size_t)k : 0;
    }
}

static void print_interference(const scn_scenario *s, const cluster_result *r,
                               const cluster_net *n)
{
    if (!n->has) {
        printf("note       no <fabric>: every job runs its stated duration (no interference)\n");
        return;
    }
    char t[4096];
    describe_traffic(s, t, sizeof t);
    printf("\ninterference on the %s fabric; per iteration %s; the communication not hidden "
           "is exposed\n",
           fabric_topology_name(s->fabric.topology), t);
    if (s->cluster_traffic.phase == CLUSTER_PHASE_UNIFORM)
        printf("phase      uniform offsets: a job's collectives meet a neighbour's only in its "
               "communication window (expected times, docs/cluster.md \"Iteration phases\")\n");
    cluster_model_print(s, n->sizes, n->n_sizes);
    printf("  %-12s %10s %10s %10s %10s %10s\n", "", "mean", "P50", "P90", "P99", "max");
    print_stat("run/isolated", &r->stretch, 1);
    uint64_t looks = n->st.hits + n->st.misses;
    printf("cost       %.6g GPU-h (%.4g%% of the busy GPU-h) over the isolated run times\n",
           r->interference_gpu_s / 3600,
           r->busy_gpu_s > 0 ? 100 * r->interference_gpu_s / r->busy_gpu_s : 0);
    printf("cache      %" PRIu64 " hits of %" PRIu64 " look-ups (%.4g%%), %" PRIu64
           " flow simulations (%" PRIu64 " flows), %" PRIu64 " evicted; largest component %u "
           "jobs; %u re-timed instants\n",
           n->st.hits, looks, looks ? 100.0 * n->st.hits / looks : 0, n->st.simulations,
           n->st.flows, n->st.evictions, n->st.max_component, r->retimes);
    printf("shared     links two jobs' collectives or more were routed on at once (tier 0: "
           "hosts and scale-up, 1: leaves, 2: spines, ...):\n");
    for (unsigned a = 0; a < CLUSTER_TIERS; a++)
        for (unsigned b = 0; b < CLUSTER_TIERS; b++)
            if (n->st.links[a][b] && (a || b))
                printf("  tier %u -> %u  %6u of %6u links, %.6g link-h\n", a, b,
                       n->st.shared_links[a][b], n->st.links[a][b],
                       n->st.shared_link_s[a][b] / 3600);
}

static void print_energy(const scn_scenario *s, const cluster_result *r, const cluster_extra *x)
{
    const cluster_energy *ce = &x->ce;
    const cluster_power *p = &ce->power;
    printf("\npower      IT %.4g kW on average: %.4g kW all idle, %.4g kW all busy\n",
           r->end_s > 0 ? ce->it_energy_j / r->end_s / 1e3 : 0,
           cluster_it_power_w(p, 0, 0) / 1e3, cluster_it_power_w(p, p->gpus, p->nodes) / 1e3);
    printf("           %s\n", ce->basis);
    if (!ce->has_site) {
        printf("energy     IT %.6g MWh; no <site>: IT energy only (no PUE, price or CO2 "
               "applied)\n", ce->it_energy_j / 3.6e9);
        return;
    }
    const energy_result *e = &ce->e;
    printf("energy     IT %.6g MWh; facility %.6g MWh at PUE %.4f (hourly %.4f-%.4f) at %s, "
           "%s cooling, from month %u; peak facility %.4g kW\n",
           ce->it_energy_j / 3.6e9, e->facility_energy_j / 3.6e9, e->pue, e->pue_min,
           e->pue_max, s->site.info.name, fac_cooling_name(s->site.design.cooling),
           s->site.start_month, e->peak_facility_w / 1e3);
    printf("cost       %.6g CNY of energy: %.4g CNY per delivered GPU-hour (%.6g busy GPU-h); "
           "CO2 %.6g t\n", e->cost, ce->energy_cost_per_gpu_h, ce->busy_gpu_h, e->co2_kg / 1e3);
    if (ce->has_costs)
        printf("           with <costs>: %.4g CNY per delivered GPU-hour built (capital "
               "amortised + energy)%s", ce->build_per_gpu_h, ce->has_rent ? "" : "\n");
    if (ce->has_rent)
        printf("%s%.4g CNY rented (every GPU for the whole run)\n",
               ce->has_costs ? "; " : "           with <costs>: ", ce->rent_per_gpu_h);
    if (!ce->has_costs && !ce->has_rent)
        printf("           capital left out: the GPU catalog has no capital or rental price "
               "per GPU-hour (a <costs> section adds them)\n");
}

static void print_series(const cluster_config *c, const cluster_extra *x)
{
    printf("\nover time  bins of %.4g h (the run's length / %u, rounded up to whole hours)\n",
           x->bin_s / 3600, CLUSTER_MAX_BINS);
    printf("  %10s %12s %10s\n", "from (d)", "utilisation", "queue");
    for (uint32_t k = 0; k < x->n_bins; k++)
        printf("  %10.4f %11.2f%% %10.4g\n", k * x->bin_s / 86400, 100 * x->busy[k] / c->gpus,
               x->queue[k]);
    printf("\ncdf        nearest-rank quantiles of the jobs\n");
    printf("  %10s %12s %10s\n", "P", "wait (h)", "slowdown");
    for (uint32_t k = 0; k < CDF_POINTS; k++)
        printf("  %9.4g%% %12.4g %10.4g\n", 100.0 * (k + 1) / CDF_POINTS, x->wait_s[k] / 3600,
               x->slowdown[k]);
}

static int is_disrupt(const cluster_config *c)
{
    return c->preempt || c->n_resv || c->fail.rate_per_node_s > 0;
}

/* preemption, maintenance and failures (docs/cluster.md) */
static void print_disruption(const cluster_config *c, const cluster_result *r)
{
    if (!is_disrupt(c))
        return;
    const cluster_ckpt *k = &c->ckpt;
    printf("\ndisruption checkpoint every %.4g min of work, written in %.4g min on eviction, "
           "restart %.4g min\n", k->interval_s / 60, k->write_s / 60, k->restart_s / 60);
    if (c->n_resv)
        printf("maintenance %u windows\n", c->n_resv);
    if (c->fail.rate_per_node_s > 0)
        printf("failures   %.4g per node-hour, repair %.4g h, %u hot-spare nodes%s\n",
               c->fail.rate_per_node_s * 3600, c->fail.repair_s / 3600, c->fail.spares,
               c->fail.swap_down ? "; a spare freed takes over a node down (swap-down)" : "");
    printf("events     %u preemptions, %u interruptions; %u node failures, %u spare swaps",
           r->preemptions, r->interruptions, r->failures, r->spare_swaps);
    if (c->fail.swap_down)
        printf(", %u spares took over a node down, %u failed with its machine in repair",
               r->spare_takeovers, r->spare_refails);
    printf("\n");
    printf("lost       %.6g GPU-h (%.4g%% of busy): rework %.6g + checkpoint writes %.6g + "
           "restarts %.6g GPU-h; down %.6g GPU-h\n", r->lost_gpu_s / 3600,
           r->busy_gpu_s > 0 ? 100 * r->lost_gpu_s / r->busy_gpu_s : 0, r->rework_gpu_s / 3600,
           r->ckpt_gpu_s / 3600, r->restart_gpu_s / 3600, r->down_gpu_s / 3600);
    printf("goodput    %.4f of the busy GPU-h (stated GPU-h / held GPU-h); per job:\n",
           r->goodput);
    printf("  %-12s %10s %10s %10s %10s %10s\n", "", "mean", "P50", "P90", "P99", "max");
    print_stat("goodput", &r->job_goodput, 1);
}

static void json_disruption(cJSON *root, const cluster_config *c, const cluster_result *r)
{
    cJSON *o = cJSON_AddObjectToObject(root, "disruption");
    cJSON_AddBoolToObject(o, "preempt", c->preempt);
    const struct { const char *name; double value; } v[] = {
        {"checkpoint_interval_s", c->ckpt.interval_s}, {"checkpoint_write_s", c->ckpt.write_s},
        {"restart_s", c->ckpt.restart_s}, {"windows", c->n_resv},
        {"failure_rate_per_node_h", c->fail.rate_per_node_s * 3600},
        {"repair_s", c->fail.repair_s}, {"spares", c->fail.spares},
        {"preemptions", r->preemptions}, {"interruptions", r->interruptions},
        {"failures", r->failures}, {"spare_swaps", r->spare_swaps},
        {"spare_takeovers", r->spare_takeovers}, {"spare_refails", r->spare_refails},
        {"down_gpu_s", r->down_gpu_s}, {"lost_gpu_s", r->lost_gpu_s},
        {"rework_gpu_s", r->rework_gpu_s}, {"checkpoint_gpu_s", r->ckpt_gpu_s},
        {"restart_gpu_s", r->restart_gpu_s}, {"goodput", r->goodput}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        cJSON_AddNumberToObject(o, v[i].name, v[i].value);
}

/* elastic jobs (docs/cluster.md "Elastic jobs"): only when the scenario has any */
static void print_elastic(const cluster_config *c, const cluster_result *r)
{
    if (!r->elastic_jobs)
        return;
    double gpus_mean = 0, n_el = 0;
    for (uint32_t i = 0; i < r->n_jobs; i++)
        if (r->jobs[i].min_gpus && r->jobs[i].min_gpus < r->jobs[i].spec.gpus) {
            gpus_mean += r->jobs[i].gpus_mean / r->jobs[i].spec.gpus;
            n_el++;
        }
    printf("\nelastic    %u jobs (%s); %u resizes; %.6g GPU-h gained by growing; "
           "elastic jobs held %.4g%% of their GPUs on average\n", r->elastic_jobs,
           c->elastic ? "resized: start on their min, grow, shrink" : "run rigidly at their GPUs",
           r->resizes, r->grown_gpu_s / 3600, 100 * gpus_mean / n_el);
}

static void json_elastic(cJSON *root, const cluster_config *c, const cluster_result *r)
{
    if (!r->elastic_jobs)
        return;
    double share = 0, n_el = 0;
    for (uint32_t i = 0; i < r->n_jobs; i++)
        if (r->jobs[i].min_gpus && r->jobs[i].min_gpus < r->jobs[i].spec.gpus) {
            share += r->jobs[i].gpus_mean / r->jobs[i].spec.gpus;
            n_el++;
        }
    cJSON *o = cJSON_AddObjectToObject(root, "elastic");
    cJSON_AddBoolToObject(o, "resized", c->elastic);
    cJSON_AddNumberToObject(o, "jobs", r->elastic_jobs);
    cJSON_AddNumberToObject(o, "resizes", r->resizes);
    cJSON_AddNumberToObject(o, "grown_gpu_s", r->grown_gpu_s);
    cJSON_AddNumberToObject(o, "held_share_mean", share / n_el);
}

static void print_text(const scn_scenario *s, const cluster_config *c, const cluster_result *r,
                       const cluster_extra *x, const cluster_net *n)
{
    char jobs[1024];
    describe_jobs(s, jobs, sizeof jobs);
    printf("dcsim cluster: %s%s%u x %s; nodes of %u, leaves of %u, SUs of %u GPUs\n", s->name,
           s->name[0] ? " on " : "", c->gpus, s->gpu.name, c->node_gpus, c->leaf_gpus,
           c->su_gpus);
    printf("jobs       %s\n", jobs);
    if (c->preempt)
        printf("policy     scheduler %s, placement %s; gang starts, checkpoint-then-preempt "
               "by higher priorities\n", cluster_sched_name(c->sched),
               cluster_placer_name(c->placer));
    else
        printf("policy     scheduler %s, placement %s; gang starts, no preemption\n",
               cluster_sched_name(c->sched), cluster_placer_name(c->placer));
    if (s->cluster_defaults[0])
        printf("defaults used: %s\n", s->cluster_defaults);
    printf("\nran        %u jobs over %.6g days (the last end); %u started ahead of an earlier "
           "job (backfill)\n",
           r->n_jobs, r->end_s / 86400, r->backfilled);
    if (is_disrupt(c))
        printf("utilisation %.2f%%: busy %.6g GPU-h + idle %.6g GPU-h + down %.6g GPU-h = "
               "%.6g GPU-h capacity\n", 100 * r->utilisation, r->busy_gpu_s / 3600,
               r->idle_gpu_s / 3600, r->down_gpu_s / 3600, r->capacity_gpu_s / 3600);
    else
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
    print_disruption(c, r);
    print_elastic(c, r);
    print_interference(s, r, n);
    print_energy(s, r, x);
    print_series(c, x);
    printf("\ndigest     %016" PRIx64 " (%" PRIu64 " events)\n", r->digest, r->events);
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

/* the size classes' iterations: compute (or comm share), overlap, layout and
 * collectives (group "job": the one collective over all a job's GPUs) */
static void json_traffic(cJSON *o, const scn_scenario *s, const cluster_traffic_table *tt)
{
    cJSON *a = cJSON_AddArrayToObject(o, "traffic");
    for (unsigned i = 0; a && i < tt->n; i++) {
        const cluster_traffic *t = &tt->t[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "from_gpus", tt->from_gpus[i]);
        if (t->from_model) { /* its compute and collectives per size: "from_step_tier" */
            const struct scn_cluster_model *m = &s->cluster_model[i];
            cJSON_AddStringToObject(e, "model", m->arch.name);
            cJSON_AddNumberToObject(e, "micro_batch", m->micro_batch);
            cJSON_AddNumberToObject(e, "global_batch", m->global_batch);
        } else if (t->comm_share > 0)
            cJSON_AddNumberToObject(e, "comm_share", t->comm_share);
        else
            cJSON_AddNumberToObject(e, "compute_s", t->compute_s);
        cJSON_AddNumberToObject(e, "overlap", t->overlap);
        cJSON_AddNumberToObject(e, "tp", t->tp ? t->tp : 1);
        cJSON_AddNumberToObject(e, "pp", t->pp ? t->pp : 1);
        cJSON_AddNumberToObject(e, "ep", t->ep ? t->ep : 1);
        cJSON *c = cJSON_AddArrayToObject(e, "collectives");
        cluster_coll one = {t->collective, -1, t->bytes};
        for (unsigned k = 0; c && !t->from_model && k < (t->n_colls ? t->n_colls : 1); k++) {
            const cluster_coll *r = t->n_colls ? &t->coll[k] : &one;
            const char *kind = cluster_traffic_collective_name(r->collective);
            const char *group = cluster_group_name(r->group);
            cJSON *x = cJSON_CreateObject();
            cJSON_AddStringToObject(x, "kind", kind ? kind : "?");
            cJSON_AddStringToObject(x, "group", group ? group : "job");
            cJSON_AddNumberToObject(x, "bytes", r->bytes);
            cJSON_AddItemToArray(c, x);
        }
        cJSON_AddItemToArray(a, e);
    }
}

static void json_interference(cJSON *root, const scn_scenario *s,
                              const cluster_traffic_table *tt, const cluster_result *r,
                              const cluster_net *n)
{
    cJSON *o = cJSON_AddObjectToObject(root, "interference");
    json_traffic(o, s, tt);
    const char *phase = cluster_phase_name(tt->phase);
    cJSON_AddStringToObject(o, "phase", phase ? phase : "?");
    if (n->n_sizes)
        cluster_model_json(o, n->sizes, n->n_sizes);
    json_stat(o, "run_over_isolated", &r->stretch);
    uint64_t looks = n->st.hits + n->st.misses;
    const struct { const char *name; double value; } v[] = {
        {"cost_gpu_s", r->interference_gpu_s}, {"cost_gpu_h", r->interference_gpu_s / 3600},
        {"cache_hits", (double)n->st.hits}, {"cache_misses", (double)n->st.misses},
        {"cache_hit_rate", looks ? (double)n->st.hits / looks : 0},
        {"simulations", (double)n->st.simulations}, {"flows", (double)n->st.flows},
        {"evictions", (double)n->st.evictions}, {"max_component", n->st.max_component},
        {"retimes", r->retimes}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        cJSON_AddNumberToObject(o, v[i].name, v[i].value);
    cJSON *a = cJSON_AddArrayToObject(o, "shared_links");
    for (unsigned t = 0; a && t < CLUSTER_TIERS; t++)
        for (unsigned u = 0; u < CLUSTER_TIERS; u++) {
            if (!n->st.links[t][u])
                continue;
            cJSON *e = cJSON_CreateObject();
            cJSON_AddNumberToObject(e, "from_tier", t);
            cJSON_AddNumberToObject(e, "to_tier", u);
            cJSON_AddNumberToObject(e, "links", n->st.links[t][u]);
            cJSON_AddNumberToObject(e, "shared", n->st.shared_links[t][u]);
            cJSON_AddNumberToObject(e, "shared_link_s", n->st.shared_link_s[t][u]);
            cJSON_AddItemToArray(a, e);
        }
}

static void json_array(cJSON *o, const char *name, const double *v, uint32_t n, double scale)
{
    cJSON *a = cJSON_AddArrayToObject(o, name);
    for (uint32_t k = 0; a && k < n; k++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(v[k] * scale));
}

static void json_extra(cJSON *root, const scn_scenario *s, const cluster_config *c,
                       const cluster_result *r, const cluster_extra *x)
{
    const cluster_energy *ce = &x->ce;
    const cluster_power *p = &ce->power;
    cJSON *o = cJSON_AddObjectToObject(root, "power");
    const struct { const char *name; double value; } pw[] = {
        {"gpu_busy_w", p->gpu_busy_w}, {"gpu_idle_w", p->gpu_idle_w},
        {"node_busy_w", p->node_busy_w}, {"node_idle_w", p->node_idle_w},
        {"fixed_w", p->fixed_w}, {"compute_fraction", p->compute_frac},
        {"idle_w", cluster_it_power_w(p, 0, 0)},
        {"busy_w", cluster_it_power_w(p, p->gpus, p->nodes)},
        {"it_mean_w", r->end_s > 0 ? ce->it_energy_j / r->end_s : 0}};
    for (size_t i = 0; i < sizeof pw / sizeof pw[0]; i++)
        cJSON_AddNumberToObject(o, pw[i].name, pw[i].value);
    cJSON_AddStringToObject(o, "basis", ce->basis);
    o = cJSON_AddObjectToObject(root, "energy");
    cJSON_AddBoolToObject(o, "has_site", ce->has_site);
    cJSON_AddNumberToObject(o, "it_energy_j", ce->it_energy_j);
    cJSON_AddNumberToObject(o, "busy_gpu_h", ce->busy_gpu_h);
    if (ce->has_site) {
        const energy_result *e = &ce->e;
        cJSON_AddStringToObject(o, "site", s->site.info.name);
        const struct { const char *name; double value; } en[] = {
            {"facility_energy_j", e->facility_energy_j}, {"pue", e->pue},
            {"pue_min", e->pue_min}, {"pue_max", e->pue_max},
            {"peak_facility_w", e->peak_facility_w}, {"cost", e->cost},
            {"price_per_kwh", s->site.info.price_per_kwh}, {"co2_kg", e->co2_kg},
            {"energy_cost_per_gpu_h", ce->energy_cost_per_gpu_h}};
        for (size_t i = 0; i < sizeof en / sizeof en[0]; i++)
            cJSON_AddNumberToObject(o, en[i].name, en[i].value);
    }
    if (ce->has_costs)
        cJSON_AddNumberToObject(o, "build_per_gpu_h", ce->build_per_gpu_h);
    if (ce->has_rent)
        cJSON_AddNumberToObject(o, "rent_per_gpu_h", ce->rent_per_gpu_h);
    o = cJSON_AddObjectToObject(root, "bins");
    cJSON_AddNumberToObject(o, "width_s", x->bin_s);
    cJSON_AddNumberToObject(o, "count", x->n_bins);
    json_array(o, "utilisation", x->busy, x->n_bins, 1.0 / c->gpus);
    json_array(o, "busy_gpus", x->busy, x->n_bins, 1);
    json_array(o, "queue", x->queue, x->n_bins, 1);
    o = cJSON_AddObjectToObject(root, "cdf");
    double pv[CDF_POINTS];
    for (uint32_t k = 0; k < CDF_POINTS; k++)
        pv[k] = (double)(k + 1) / CDF_POINTS;
    json_array(o, "p", pv, CDF_POINTS, 1);
    json_array(o, "wait_s", x->wait_s, CDF_POINTS, 1);
    json_array(o, "slowdown", x->slowdown, CDF_POINTS, 1);
}

/* 0, or 1 (the error printed); csv: one CSV row instead */
/* <training-runs>: the <job> alone, then each run in the stream */
static void print_training(const cluster_training *t, const cluster_result *r)
{
    if (!t->runs)
        return;
    printf("\ntraining runs of the <job>: %u x %u GPUs; alone it trains in %.6g days (dcsim "
           "run, digest %016" PRIx64 ")\n", t->runs, t->gpus, t->time_to_train_s / 86400,
           t->digest);
    for (unsigned i = 0; i < t->runs; i++) {
        const cluster_job *j = &r->jobs[t->job[i]];
        printf("  run %u: submitted at %.6g h, waited %.6g h, done after %.6g days (%.4g x "
               "alone)\n", i + 1, j->spec.submit_s / 3600, (j->start_s - j->spec.submit_s) / 3600,
               (j->end_s - j->spec.submit_s) / 86400,
               (j->end_s - j->spec.submit_s) / t->time_to_train_s);
    }
}

static void json_training(cJSON *root, const cluster_training *t, const cluster_result *r)
{
    cJSON *o = cJSON_AddObjectToObject(root, "training_runs");
    if (!o)
        return;
    cJSON_AddNumberToObject(o, "gpus", t->gpus);
    cJSON_AddNumberToObject(o, "time_to_train_s", t->time_to_train_s);
    char digest[24];
    snprintf(digest, sizeof digest, "%016" PRIx64, t->digest);
    cJSON_AddStringToObject(o, "run_digest", digest);
    cJSON *runs = cJSON_AddArrayToObject(o, "runs");
    for (unsigned i = 0; runs && i < t->runs; i++) {
        const cluster_job *j = &r->jobs[t->job[i]];
        cJSON *e = cJSON_CreateObject();
        if (!e)
            return;
        cJSON_AddNumberToObject(e, "job", t->job[i]);
        cJSON_AddNumberToObject(e, "submit_s", j->spec.submit_s);
        cJSON_AddNumberToObject(e, "start_s", j->start_s);
        cJSON_AddNumberToObject(e, "end_s", j->end_s);
        cJSON_AddItemToArray(runs, e);
    }
}

static int print_json(const scn_scenario *s, const cluster_config *c, const cluster_result *r,
                      const cluster_extra *x, const cluster_net *n, const cluster_training *t,
                      int csv)
{
    cJSON *root = jsonout_begin("cluster");
    if (!root)
        return jsonout_emit(NULL, JSONOUT_JSON, NULL, NULL);
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
    json_extra(root, s, c, r, x);
    if (n->has)
        json_interference(root, s, &s->cluster_traffic, r, n);
    if (is_disrupt(c)) {
        json_disruption(root, c, r);
        json_stat(cJSON_GetObjectItem(root, "disruption"), "job_goodput", &r->job_goodput);
    }
    json_elastic(root, c, r);
    if (t->runs && !csv)
        json_training(root, t, r);
    return jsonout_emit(root, csv ? JSONOUT_CSV : JSONOUT_JSON_LINE, NULL, NULL);
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
    if (o.json && o.csv)
        return jsonout_one_format("cluster");
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
    outpath out;
    int has_out = 0;
    if (o.output) { /* the target checked before the run */
        size_t n_in;
        const char **inputs = scn_input_paths(&s, o.path, s.cluster_trace_path[0]
                                                             ? s.cluster_trace_path : NULL, &n_in);
        rc = inputs ? outpath_init(&out, o.output, "the trace", inputs, n_in, &err)
                    : sim_error_set(&err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
        free(inputs);
        if (rc) {
            scn_scenario_free(&s);
            return cli_print_error(&err);
        }
        has_out = 1;
    }
    cluster_run run;
    rc = cluster_run_execute(&s, &run, &err);
    const cluster_result *r = &run.r;
    if (!rc && has_out) {
        char command[4096];
        size_t used = (size_t)snprintf(command, sizeof command, "dcsim cluster");
        for (int i = 0; i < argc && used < sizeof command; i++)
            used += (size_t)snprintf(command + used, sizeof command - used, " %s", argv[i]);
        rc = cluster_trace_write(&out, &s, r, &run.x.ce, command, &err);
    }
    if (rc) {
        if (!err.file[0])
            snprintf(err.file, sizeof err.file, "%s", s.source);
        cluster_run_free(&run);
        scn_scenario_free(&s);
        return cli_print_error(&err);
    }
    if (o.json || o.csv)
        rc = print_json(&s, &s.cluster_jobs, r, &run.x, &run.net, &run.training, o.csv);
    else {
        print_text(&s, &s.cluster_jobs, r, &run.x, &run.net);
        print_training(&run.training, r);
    }
    cluster_run_free(&run);
    scn_scenario_free(&s);
    return rc;
}
