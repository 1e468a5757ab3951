/* hubscmd.c - `dcsim hubs`: work placed across the East-Data-West-Computing
 * hubs (models/hubs.h; docs/hubs.md). Runs the scenario's policy and the
 * baseline (nearest) on the same demand, accounts every hub's energy, cost,
 * CO2 and water at its own site over the same horizon (clusterenergy.h), and
 * prints both and the saving; --json the dcsim/1 document, -o the HDF5
 * tables (hubsout.c).
 */
#include "hubscmd.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "clusterenergy.h"
#include "fabric.h"
#include "hubs_fabric.h"
#include "hubs_keys_size.h"
#include "jsonout.h"

const char usage_hubs[] =
    "usage: dcsim hubs SCENARIO.xml [--json | --csv] [-o FILE.h5] [--quiet]\n"
    "                  [--set PATH=VALUE]...\n"
    "\n"
    "Place a year of training and serving demand from the demand centres\n"
    "(beijing, shanghai, guangzhou) across datacenters at the hubs (the\n"
    "scenario's <hubs>, docs/hubs.md): a policy (fixed, nearest, cheapest,\n"
    "lowest-carbon, lowest-water, latency-bounded, follow-the-renewables) picks\n"
    "each job's hub at submission among those whose estimated wait is within\n"
    "max-wait; datasets move on the backbone before the job, results after;\n"
    "each hub is simulated as a cluster (docs/cluster.md) and accounted at its\n"
    "own site. Prints per hub and in total: jobs, GPU-hours, utilisation, wait\n"
    "P50/P90/P99, energy, cost, CO2, water, data moved, serving RTT and SLO\n"
    "violations; and the same for the baseline (nearest) with the saving.\n"
    "\n"
    "  --json       the results as one JSON object (docs/json.md), with the\n"
    "               policy's run over time (run.series: the bins of /hubs/series)\n"
    "  --csv        the text's tables as CSV: a row per hub and a total row for\n"
    "               the run and the baseline (column table: run, baseline), then\n"
    "               the saving (table saving); the series are in --json only\n"
    "  -o, --output FILE.h5  the tables /hubs/hubs and /hubs/jobs of the\n"
    "               policy's run (docs/trace-format.md)\n"
    "  -q, --quiet  no progress on stderr (the run prints none yet)\n"
    "  --set PATH=VALUE  override a scenario value, e.g. --set hubs/@policy=cheapest\n"
    "\n"
    "exit status: 0 ok, 1 internal error, 2 bad input\n";

typedef struct hubs_args {
    const char *path, *output;
    cli_sets sets;
    int json, csv, quiet;
} hubs_args;

static const cli_option hubs_options[] = {
    {"--json", 0, CLI_FLAG, offsetof(hubs_args, json), NULL, NULL},
    {"--csv", 0, CLI_FLAG, offsetof(hubs_args, csv), NULL, NULL},
    {"--quiet", 'q', CLI_FLAG, offsetof(hubs_args, quiet), NULL, NULL},
    {"--output", 'o', CLI_TEXT, offsetof(hubs_args, output), .missing = "%s needs a file name"},
    {"--set", 0, CLI_SETS, offsetof(hubs_args, sets), .missing = "%s needs PATH=VALUE"},
    {"--help", 'h', CLI_HELP, 0, NULL, NULL},
    {0}};

void hubs_run_free(hubs_run *run)
{
    for (unsigned h = 0; h < HUBS_MAX; h++) {
        cluster_result_free(&run->cr[h]);
        free(run->water_table[h]);
        run->water_table[h] = NULL;
    }
    hubs_result_free(&run->r);
    free(run->series);
    run->series = NULL;
    free(run->key_table);
    free(run->interf_job);
    run->key_table = NULL;
    run->interf_job = NULL;
}

/* the scenario as hub h's own cluster at its own site */
static scn_scenario hub_scenario(const scn_scenario *s, const hubs_config *c, unsigned h)
{
    scn_scenario one = *s; /* shallow: only the fields below change */
    one.cluster_jobs.gpus = c->hubs[h].gpus;
    if (one.cluster_jobs.su_gpus > one.cluster_jobs.gpus)
        one.cluster_jobs.su_gpus = one.cluster_jobs.gpus;
    one.site = s->hubs->site[h];
    one.gpu = s->hubs->gpu[h]; /* its power per GPU (the catalog's) */
    one.costs.given = 0;
    return one;
}

/* the placement's water figures of the hubs with a water limit */
static int water_rates(const scn_scenario *s, hubs_run *run, sim_error *err)
{
    hubs_config *c = &run->cfg;
    for (unsigned h = 0; h < c->n_hubs; h++) {
        hubs_hub *hub = &c->hubs[h];
        if (!(hub->water_limit_l > 0))
            continue;
        scn_scenario one = hub_scenario(s, c, h);
        run->water_table[h] = malloc(8760 * HUBS_WATER_LEVELS * sizeof *run->water_table[h]);
        if (!run->water_table[h])
            return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "hubs: out of memory");
        int rc = hubs_hub_water(&one, hub, run->water_table[h], run->water_levels[h], err);
        if (rc)
            return rc;
    }
    return 0;
}

/* per_job (keys="interfered-size-load"): each job's slowdown at each hub,
 * hub-major; run then owns it and its tables */
static int run_policy(const scn_scenario *s, const hubs_policy *p, hubs_fabric *hf,
                      const double *interf_scale, hubs_key_table *tables, double *per_job,
                      hubs_run *run, sim_error *err)
{
    memset(run, 0, sizeof *run);
    run->cfg = s->hubs->cfg;
    run->cfg.policy = p;
    for (unsigned h = 0; interf_scale && h < run->cfg.n_hubs; h++)
        run->cfg.hubs[h].interf_scale = interf_scale[h];
    run->key_table = tables;
    run->interf_job = per_job;
    for (unsigned h = 0; per_job && h < run->cfg.n_hubs; h++) {
        run->cfg.hubs[h].interf_job = per_job + (size_t)h * run->cfg.n_jobs;
        run->cfg.hubs[h].interf_jobs = run->cfg.jobs;
    }
    hubs_fabric_attach(hf, run);
    int wrc = water_rates(s, run, err);
    if (wrc)
        return wrc;
    int rc = hubs_place(&run->cfg, &run->r, err);
    if (!rc)
        rc = hubs_simulate(&run->cfg, &s->cluster_jobs, &run->r, run->cr, err);
    return rc;
}

/* hub h's hours: CO2 at its hourly profile (where it has one) and its bins */
static int hub_hours(const scn_scenario *one, hubs_run *run, unsigned h, sim_error *err)
{
    const hubs_hub *hub = &run->cfg.hubs[h];
    hubs_hours hh;
    int rc = hubs_hub_hours(one, &run->cr[h], &hh, err);
    if (rc)
        return rc;
    if (hub->carbon_hourly && hub->n_carbon_hours) {
        double co2 = 0;
        for (size_t k = 0; k < hh.n; k++)
            co2 += hubs_hours_co2_kg(hub, &hh, k);
        run->r.hub[h].co2_kg = co2;
        run->co2_hourly[h] = 1;
    }
    if (run->series)
        hubs_series_fill(run, h, &hh, run->series + (size_t)h * run->n_bins);
    double year = 0;
    run->water_year_l[h] = 0;
    for (size_t k = 0; k < hh.n; k++) { /* the fullest year of 8,760 h */
        year += hh.water_l[k];
        if ((k + 1) % 8760 == 0 || k + 1 == hh.n) {
            run->water_year_l[h] = fmax(run->water_year_l[h], year);
            year = 0;
        }
    }
    hubs_hours_free(&hh);
    return 0;
}

/* every hub over [0, horizon] at its own site (idle GPUs draw too); with
 * series, its bins over time */
static int account(const scn_scenario *s, hubs_run *run, double horizon, int series,
                   sim_error *err)
{
    hubs_set_horizon(&run->cfg, &run->r, horizon);
    if (series) {
        run->n_bins = hubs_series_bins(horizon);
        run->series = calloc((size_t)run->n_bins * run->cfg.n_hubs, sizeof *run->series);
        if (!run->series)
            return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "hubs: out of memory");
    }
    for (unsigned h = 0; h < run->cfg.n_hubs; h++) {
        cluster_result *cr = &run->cr[h];
        if (cr->end_s < horizon)
            cr->end_s = horizon;
        scn_scenario one = hub_scenario(s, &run->cfg, h);
        cluster_energy ce;
        int rc = cluster_energy_at_site(&one, cr, &ce, err);
        if (rc)
            return rc;
        hubs_hub_result *o = &run->r.hub[h];
        o->it_energy_j = ce.it_energy_j;
        o->facility_energy_j = ce.e.facility_energy_j;
        o->energy_cost = ce.e.cost;
        o->co2_kg = ce.e.co2_kg;
        o->water_l = ce.e.water_l;
        run->pue[h] = ce.e.pue;
        cluster_energy_free(&ce);
        const hubs_hub *hub = &run->cfg.hubs[h];
        if (series || (hub->carbon_hourly && hub->n_carbon_hours) || hub->water_limit_l > 0)
            rc = hub_hours(&one, run, h, err);
        if (rc)
            return rc;
    }
    hubs_total_energy(&run->r);
    return 0;
}

/* keys="interfered" (docs/hubs.md "Interference in the keys"): the policy
 * placed with the isolated keys and its hubs simulated on their fabrics;
 * each hub's scale = its busy GPU-seconds over those without what
 * interference added (1 at a hub without jobs or without any added) */
static int interference_scales(const scn_scenario *s, hubs_fabric *hf, double *scale,
                               hubs_key_table *tables, double *per_job, sim_error *err)
{
    hubs_run *cal = calloc(1, sizeof *cal);
    if (!cal)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "hubs: out of memory");
    int rc = run_policy(s, s->hubs->cfg.policy, hf, NULL, NULL, NULL, cal, err);
    for (unsigned h = 0; !rc && h < s->hubs->cfg.n_hubs; h++) {
        const hubs_hub_result *o = &cal->r.hub[h];
        double alone = o->gpu_s - o->interf_gpu_s;
        scale[h] = alone > 0 && o->interf_gpu_s > 0 ? o->gpu_s / alone : 1;
    }
    if (!rc && tables) /* by job size and load (hubs_keys_size.c) */
        rc = hubs_keys_size_load(&s->hubs->cfg, cal, tables, per_job, err);
    hubs_run_free(cal);
    free(cal);
    return rc;
}

int hubs_execute(const scn_scenario *s, int series, hubs_run run[2], sim_error *err)
{
    int fail = 0;
    hubs_fabric *hf = hubs_fabric_create(s, &fail); /* NULL: no interference */
    if (fail)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "hubs: out of memory");
    double scale[HUBS_MAX];
    int rc = 0;
    hubs_key_table *tables = NULL; /* keys="interfered-size-load" */
    double *per_job = NULL;
    int size_load = s->hubs->keys_size_load && hf;
    if (size_load) {
        tables = calloc(s->hubs->cfg.n_hubs, sizeof *tables);
        per_job = malloc((size_t)s->hubs->cfg.n_hubs * s->hubs->cfg.n_jobs * sizeof *per_job);
        if (!tables || !per_job)
            rc = sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "hubs: out of memory");
    }
    if (!rc && s->hubs->keys_interfered && hf) /* the keys' interference, measured */
        rc = interference_scales(s, hf, scale, tables, per_job, err);
    if (!rc) {
        rc = run_policy(s, s->hubs->cfg.policy, hf,
                        s->hubs->keys_interfered && hf && !size_load ? scale : NULL, tables,
                        per_job, &run[0], err);
        tables = NULL; /* run[0]'s */
        per_job = NULL;
    }
    free(tables);
    free(per_job);
    if (!rc)
        rc = run_policy(s, hubs_policy_find("nearest"), hf, NULL, NULL, NULL, &run[1], err);
    hubs_fabric_destroy(hf);
    double horizon = rc ? 0 : fmax(run[0].r.total.end_s, run[1].r.total.end_s);
    if (!rc)
        rc = account(s, &run[0], horizon, series, err);
    if (!rc)
        rc = account(s, &run[1], horizon, 0, err);
    return rc;
}

static double mean_rtt_ms(const hubs_hub_result *o)
{
    return o->serving_jobs ? 1e3 * o->serving_rtt_s_sum / o->serving_jobs : 0;
}

static void print_row(const char *name, uint32_t gpus, const hubs_hub_result *o, double pue)
{
    char pue_text[16] = "";
    if (pue > 0)
        snprintf(pue_text, sizeof pue_text, "%.4f", pue);
    printf("%-14s %7u %7u %10.6g %6.2f%% %7.3g %7.3g %7.3g %10.6g %10.6g %7s %11.6g %9.6g "
           "%9.6g %9.6g %9.6g %7.4g %6u %8.4g\n",
           name, gpus, o->jobs, o->gpu_s / 3600, 100 * o->utilisation, o->wait_s.q[0] / 3600,
           o->wait_s.q[1] / 3600, o->wait_s.q[2] / 3600, o->it_energy_j / 3.6e9,
           o->facility_energy_j / 3.6e9, pue_text, o->energy_cost + o->data_cost,
           o->co2_kg / 1e3, o->water_l / 1e3, o->tb_in + o->tb_out, o->data_cost,
           mean_rtt_ms(o), o->slo_jobs, o->slo_job_h);
}

static void print_table(const hubs_run *run, int with_hubs)
{
    printf("%-14s %7s %7s %10s %7s %7s %7s %7s %10s %10s %7s %11s %9s %9s %9s %9s %7s %6s %8s\n",
           "hub", "GPUs", "jobs", "GPU-h", "util", "wait50", "wait90", "wait99", "IT MWh",
           "fac MWh", "PUE", "cost CNY", "CO2 t", "water m3", "TB moved", "data CNY",
           "RTT ms", "SLO", "SLO job-h");
    uint32_t gpus = 0;
    for (unsigned h = 0; h < run->cfg.n_hubs; h++) {
        gpus += run->cfg.hubs[h].gpus;
        if (with_hubs)
            print_row(run->cfg.hubs[h].name, run->cfg.hubs[h].gpus, &run->r.hub[h],
                      run->pue[h]);
    }
    const hubs_hub_result *t = &run->r.total;
    print_row("total", gpus, t, t->it_energy_j > 0 ? t->facility_energy_j / t->it_energy_j : 0);
}

/* hubs whose GPU is not the scenario's, or with a speed given: their GPU,
 * time scale and how it was found (under "defaults used"), and what their
 * GPU's catalog entry lacked at bf16 and was filled by a rule */
static void print_gpus(const scn_scenario *s, const hubs_config *c)
{
    const scn_hubs *H = s->hubs;
    unsigned n = 0;
    for (unsigned h = 0; h < c->n_hubs; h++)
        n += H->speed_rule[h][0] || H->serving_rule[h][0];
    if (!n)
        return;
    printf("gpus      ");
    for (unsigned h = 0; h < c->n_hubs; h++)
        if (H->gpu[h].tdp_w > 0)
            printf(" %s %s (%.4g W)%s", c->hubs[h].name, H->gpu[h].name, H->gpu[h].tdp_w,
                   h + 1 < c->n_hubs ? "," : "\n");
        else /* energyrun.c: the power tier's default TDP */
            printf(" %s %s (no TDP in the catalog: the power tier's default)%s",
                   c->hubs[h].name, H->gpu[h].name, h + 1 < c->n_hubs ? "," : "\n");
    printf("defaults used  hub speed: a job's duration (on %s) x the hub's time scale, the "
           "ratio of the catalog's bf16 peak x gemm-efficiency (%s's over the hub GPU's; "
           "none assumed where missing: <hub speed=\"S\"> overrides, scale 1 / S); busy "
           "GPU-h and energy grow with it, the work in %s GPU-h does not; a serving job holds "
           "its GPUs x the hub's serving scale for its duration, the ratio of the catalog's "
           "HBM bandwidths (decode is memory-bound; <hub serving-speed=\"S\"> overrides, and "
           "<hub speed> covers serving too); the placement keys charge a job's energy there: "
           "its scale x the IT power a busy GPU adds over an idle one there (the power tier's: "
           "GPU and its node's host share) over %s's\n",
           s->gpu.name, s->gpu.name, s->gpu.name, s->gpu.name);
    for (unsigned h = 0; h < c->n_hubs; h++) {
        if (!H->speed_rule[h][0] && !H->serving_rule[h][0])
            continue;
        if (H->speed_rule[h][0])
            printf("defaults used  %s\n", H->speed_rule[h]);
        if (H->serving_rule[h][0])
            printf("defaults used  %s\n", H->serving_rule[h]);
        printf("defaults used  %s: energy x %.6g a training job, x %.6g a serving job\n",
               c->hubs[h].name, c->hubs[h].energy_scale > 0 ? c->hubs[h].energy_scale : 1,
               c->hubs[h].serving_energy_scale > 0 ? c->hubs[h].serving_energy_scale : 1);
        const hw_gpu *g = &H->gpu[h];
        for (unsigned k = 0; !H->speed_given[h] && k < g->n_defaults; k++)
            if ((g->defaults[k].precision < 0 || g->defaults[k].precision == PREC_BF16) &&
                !strncmp(g->defaults[k].what, "gemm-efficiency", 15))
                printf("defaults used  %s %s = %s (%s)\n", g->defaults[k].part,
                       g->defaults[k].what, g->defaults[k].value, g->defaults[k].rule);
    }
}

static double pct(double saved, double of) { return of > 0 ? 100 * saved / of : 0; }

/* a fabric at each hub (hubs_fabric.h): what interference cost each hub,
 * and how often its pacer simulated */
static void print_interference(const scn_scenario *s, const hubs_run *run, const hubs_run *base)
{
    const scn_hubs *H = s->hubs;
    const char *phase = cluster_phase_name(s->cluster_traffic.phase);
    printf("fabric     each hub's jobs timed on the <cluster><fabric> sized to its GPUs, every "
           "job's collective with its neighbours' (docs/hubs.md \"A fabric at each hub\"; "
           "iteration phases %s, docs/cluster.md \"Iteration phases\"); "
           "busy GPU-h added by interference (policy / nearest):",
           phase ? phase : "?");
    for (unsigned h = 0; h < run->cfg.n_hubs; h++)
        printf(" %s %.6g / %.6g%s", run->cfg.hubs[h].name, run->r.hub[h].interf_gpu_s / 3600,
               base->r.hub[h].interf_gpu_s / 3600, h + 1 < run->cfg.n_hubs ? "," : "");
    uint64_t sims = 0, flows = 0;
    for (unsigned h = 0; h < run->cfg.n_hubs; h++) {
        sims += run->interf_stats[h].simulations;
        flows += run->interf_stats[h].flows;
    }
    printf("; total %.6g / %.6g (the policy's run: %" PRIu64 " flow simulations, %" PRIu64
           " flows)\n", run->r.total.interf_gpu_s / 3600, base->r.total.interf_gpu_s / 3600,
           sims, flows);
    unsigned own = 0;
    for (unsigned h = 0; h < run->cfg.n_hubs; h++)
        own += (unsigned)H->own_fabric[h];
    if (!own)
        return;
    printf("fabrics   "); /* a hub with its own <fabric>: each hub's kind */
    for (unsigned h = 0; h < run->cfg.n_hubs; h++)
        printf(" %s %s (%s)%s", run->cfg.hubs[h].name,
               fabric_topology_name(H->fabric[h].topology),
               H->own_fabric[h] ? "its own <fabric>" : "the <cluster><fabric>",
               h + 1 < run->cfg.n_hubs ? "," : "\n");
}

/* the jobs that moved at least once (their first moves) */
static uint32_t moved_jobs(const hubs_result *r)
{
    uint32_t n = 0;
    for (uint32_t m = 0; m < r->n_moves; m++)
        n += r->moves[m].prev == HUBS_NONE;
    return n;
}

static void print_text(const scn_scenario *s, const hubs_run *run, const hubs_run *base)
{
    const scn_hubs *H = s->hubs;
    const hubs_config *c = &run->cfg;
    printf("dcsim hubs: %s%s%u jobs from %u demand centres on %u hubs of %s; scheduler %s, "
           "placement %s at every hub\n", s->name, s->name[0] ? ": " : "", c->n_jobs,
           c->n_origins, c->n_hubs, s->gpu.name, cluster_sched_name(s->cluster_jobs.sched),
           cluster_placer_name(s->cluster_jobs.placer));
    print_gpus(s, c);
    if (H->trace_path[0])
        printf("demand     trace %s\n", H->trace_path);
    for (unsigned k = 0; k < H->n_classes; k++)
        printf("demand     %s\n", H->classes[k]);
    if (c->backbone)
        hubs_backbone_describe(c);
    else
        printf("backbone   %.4g Gb/s per hub link each way, %.4g CNY per TB moved (the scenario's: "
               "no sourced figure exists); RTTs from sites.xml (D: great circle x 1.5 x 4.9 "
               "us/km x 2, sites.md 8.2)\n", c->bandwidth_bps / 1e9, c->cost_per_tb);
    printf("policy     %s: %s; max-wait %.4g h (%s); PUE key %s\n",
           hubs_policy_name(c->policy), hubs_policy_rule(c->policy), c->max_wait_s / 3600,
           c->gang_backlog ? "gang backlog estimate: when the job's GPUs are free together"
                           : "fluid backlog estimate",
           H->pue_simulated ? "simulated (annual mean at design load)"
                            : "the catalog's target (simulated where none)");
    if (c->max_moves) {
        printf("moves      a running deferrable training job checkpoints and moves to a hub of "
               "a better key when GPUs free up there and the key over its remaining work pays "
               "for the move (its dataset + result over the link, the hubs' RTT, restart %.6g "
               "s); at most %u a job\n", c->restart_s, c->max_moves);
        if (H->moves_default)
            printf("defaults used  max-moves 1 (<hubs max-moves>)\n");
    }
    if (run->key_table)
        hubs_key_table_print(run);
    else if (H->keys_interfered) {
        printf("keys       interfered (docs/hubs.md \"Interference in the keys\"): each job's "
               "energy key and its run time in the backlog x the hub's expected slowdown, its "
               "busy GPU-h over those without interference on the run placed by the isolated "
               "keys:");
        for (unsigned h = 0; h < c->n_hubs; h++)
            printf(" %s %.6g%s", c->hubs[h].name, c->hubs[h].interf_scale,
                   h + 1 < c->n_hubs ? "," : "\n");
    }
    if (run->r.shifts_nothing)
        printf("note       follow-the-renewables shifts nothing: no hub has an hourly carbon "
               "profile (carbon-profile), so every hour's intensity is the flat factor; none "
               "is invented\n");
    if (run->r.fallbacks)
        printf("note       %u jobs found no eligible hub within max-wait: placed at the least "
               "estimated wait\n", run->r.fallbacks);
    unsigned hourly = 0;
    for (unsigned h = 0; h < c->n_hubs; h++)
        hourly += (unsigned)run->co2_hourly[h];
    if (!hourly)
        printf("carbon     CO2 = facility kWh x each hub's flat grid factor x (1 - green share) "
               "(no hub has an hourly carbon profile; none is sourced)\n");
    else {
        printf("carbon     CO2 hour by hour (each hour's facility kWh x that hour's profile "
               "intensity x (1 - green share)) at");
        for (unsigned h = 0; h < c->n_hubs; h++)
            if (run->co2_hourly[h])
                printf(" %s", c->hubs[h].name);
        printf("; the flat grid factor at the other %u hubs\n", c->n_hubs - hourly);
    }
    for (unsigned h = 0; h < c->n_hubs; h++) {
        double limit = c->hubs[h].water_limit_l;
        if (!(limit > 0))
            continue;
        printf("water      %s: limit %.6g m3 a year; the placement's estimate %.6g m3, measured "
               "%.6g m3 in its fullest year", c->hubs[h].name, limit / 1e3,
               run->r.water_est_l[h] / 1e3, run->water_year_l[h] / 1e3);
        if (run->water_year_l[h] > limit)
            printf(": over its limit by %.6g m3", (run->water_year_l[h] - limit) / 1e3);
        printf("\n");
    }
    if (run->r.water_passes)
        printf("note       %u jobs passed over a hub for its water limit\n",
               run->r.water_passes);
    if (run->interf)
        print_interference(s, run, base);
    printf("horizon    %.6g days (the later last end of the two runs): every hub accounted over "
           "it, idle GPUs included\n\n", run->r.horizon_s / 86400);
    printf("policy %s\n", hubs_policy_name(c->policy));
    print_table(run, 1);
    printf("\nbaseline nearest\n");
    print_table(base, 1);
    const hubs_hub_result *t = &run->r.total, *b = &base->r.total;
    double cost = t->energy_cost + t->data_cost, bcost = b->energy_cost + b->data_cost;
    printf("\nsaving     vs nearest: cost %.6g CNY (%.4g%%; energy %.6g, data %.6g), CO2 %.6g t "
           "(%.4g%%), water %.6g m3 (%.4g%%), facility energy %.6g MWh (%.4g%%)\n",
           bcost - cost, pct(bcost - cost, bcost), b->energy_cost - t->energy_cost,
           b->data_cost - t->data_cost, (b->co2_kg - t->co2_kg) / 1e3,
           pct(b->co2_kg - t->co2_kg, b->co2_kg), (b->water_l - t->water_l) / 1e3,
           pct(b->water_l - t->water_l, b->water_l),
           (b->facility_energy_j - t->facility_energy_j) / 3.6e9,
           pct(b->facility_energy_j - t->facility_energy_j, b->facility_energy_j));
    printf("latency    mean serving RTT %.4g ms against %.4g ms; SLO violations %u jobs "
           "(%.6g job-h) against %u; wait P90 %.4g h against %.4g h\n", mean_rtt_ms(t),
           mean_rtt_ms(b), t->slo_jobs, t->slo_job_h, b->slo_jobs, t->wait_s.q[1] / 3600,
           b->wait_s.q[1] / 3600);
    printf("data       %.6g TB moved (%.6g in, %.6g out) against %.6g TB; transfers %.6g h in "
           "all (%.6g h queued on the links); deferred %.6g job-h\n", t->tb_in + t->tb_out,
           t->tb_in, t->tb_out, b->tb_in + b->tb_out, t->transfer_s / 3600,
           t->link_wait_s / 3600, t->deferred_s / 3600);
    if (c->max_moves)
        printf("moves      %u moves (%u jobs); %.6g TB moved with them, %.6g h from checkpoint "
               "to arrival, %.6g GPU-h restarting\n", run->r.n_moves, moved_jobs(&run->r),
               t->move_tb, t->move_s / 3600, t->restart_gpu_s / 3600);
    hubs_backbone_print(run, base);
    printf("\ndigest     %016" PRIx64 " (%" PRIu64 " events; baseline %016" PRIx64 ")\n",
           t->digest, t->events, b->digest);
}

int cmd_hubs(int argc, char **argv)
{
    static const cli_command cmd = {"hubs", usage_hubs, hubs_options, 1,
                                    .too_many = "more than one scenario given ('%s')"};
    hubs_args o = {0};
    size_t n_args;
    int rc = cli_parse(&cmd, argc, argv, &o, &o.path, &n_args);
    if (rc)
        return rc == CLI_DONE ? 0 : rc;
    if (o.json && o.csv)
        return jsonout_one_format("hubs");
    if (!o.path)
        return cli_usage_error("hubs", "a scenario with <hubs> is needed%s", "");
    scn_scenario s;
    sim_error err;
    sim_error_clear(&err);
    if (scn_load_flags(o.path, o.sets.v, o.sets.n, SCN_LOAD_CLUSTER, &s, &err))
        return cli_print_error(&err);
    if (!s.hubs) {
        sim_error_set(&err, SIM_ERR_INPUT, s.source, 0, "no <hubs> section: dcsim hubs places "
                      "demand across hubs (docs/hubs.md)");
        scn_scenario_free(&s);
        return cli_print_error(&err);
    }
    outpath out;
    int has_out = 0;
    if (o.output) {
        size_t n_in;
        const char **inputs = scn_input_paths(&s, o.path, s.hubs->trace_path[0]
                                                             ? s.hubs->trace_path : NULL, &n_in);
        rc = inputs ? outpath_init(&out, o.output, "the trace", inputs, n_in, &err)
                    : sim_error_set(&err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
        free(inputs);
        if (rc) {
            scn_scenario_free(&s);
            return cli_print_error(&err);
        }
        has_out = 1;
    }
    hubs_run *run = calloc(2, sizeof *run);
    if (!run)
        rc = sim_error_set(&err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
    if (!rc)
        rc = hubs_execute(&s, has_out || o.json, run, &err);
    if (!rc && has_out) {
        char command[4096];
        size_t used = (size_t)snprintf(command, sizeof command, "dcsim hubs");
        for (int i = 0; i < argc && used < sizeof command; i++)
            used += (size_t)snprintf(command + used, sizeof command - used, " %s", argv[i]);
        rc = hubs_h5_write(&out, &s, &run[0], &run[1], command, &err);
    }
    if (!rc && o.json)
        rc = jsonout_emit(hubs_json(&s, &run[0], &run[1]), JSONOUT_JSON_LINE, NULL, NULL);
    else if (!rc && o.csv)
        rc = jsonout_emit(hubs_csv(&s, &run[0], &run[1]), JSONOUT_CSV, "rows", NULL);
    else if (!rc)
        print_text(&s, &run[0], &run[1]);
    else {
        if (!err.file[0])
            snprintf(err.file, sizeof err.file, "%s", s.source);
        rc = cli_print_error(&err);
    }
    if (run) {
        hubs_run_free(&run[0]);
        hubs_run_free(&run[1]);
    }
    free(run);
    scn_scenario_free(&s);
    return rc;
}
