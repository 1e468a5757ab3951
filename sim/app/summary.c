/* summary.c - build and print the run summary (see summary.h). */
#include "summary.h"

#include "degraded.h"
#include "energyrun.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "jsonout.h"
#include "version.h"

static void add(run_summary *s, const char *name, const char *unit, const char *label,
                const char *description, double value, int is_count)
{
    if (s->n_metrics >= SUMMARY_MAX_METRICS)
        return;
    s->metrics[s->n_metrics++] =
        (summary_metric){name, unit, label, description, value, is_count};
}

/* Where the time went: training, rework, checkpoints and restarts. */
static void add_time_rows(run_summary *out, const scn_scenario *scn, const campaign_config *c,
                          const campaign_result *r)
{
    add(out, "time_to_train_s", "s", "time to train",
        "wall-clock time from job start to the final checkpoint of the last token",
        r->time_to_train_s, 0);
    add(out, "ettr_frac", "1", "ETTR (productive / elapsed)",
        "effective training time ratio: productive compute time / time to train",
        r->ettr_frac, 0);
    add(out, "ettr_first_order_frac", "1", "ETTR, first-order model",
        "(1 - L (u0 + tau/2)) / (1 + w/tau) with L = GPUs x failure rate",
        r->ettr_first_order_frac, 0);
    add(out, "iteration_time_s", "s", "iteration time",
        "6 N T / (GPUs x peak x MFU), MFU given as an input", r->iteration_time_s, 0);
    add(out, "iterations", "1", "iterations", "ceil(training tokens / tokens per iteration)",
        (double)r->iterations, 1);
    add(out, "total_flops", "FLOP", "training compute (6ND)", "6 x parameters x tokens",
        r->total_flops, 0);
    add(out, "compute_time_s", "s", "productive compute",
        "failure-free compute time: 6ND / (GPUs x peak x MFU)", r->compute_time_s, 0);
    add(out, "rework_s", "s", "lost to rework",
        "compute time rolled back by failures and trained again", r->rework_s, 0);
    add(out, "rework_gpu_hours", "GPU h", "lost to rework, GPU-hours",
        "rework time x GPUs / 3600", r->rework_s * (double)c->gpu_count / 3600.0, 0);
    add(out, "checkpoint_time_s", "s", "checkpoint writes", "time spent in completed writes",
        r->checkpoint_time_s, 0);
    add(out, "checkpoint_aborted_s", "s", "aborted checkpoint writes",
        "time spent in writes a failure cut short", r->checkpoint_aborted_s, 0);
    add(out, "restart_time_s", "s", "restarts", "time spent restarting, including restarts cut short",
        r->restart_time_s, 0);
    add(out, "checkpoint_write_s", "s", "checkpoint write time",
        "one blocking write (async: the persist), given or size / the storage's and nodes' "
        "bandwidth", c->checkpoint_write_s, 0);
    if (scn->checkpoint_bytes > 0)
        add(out, "checkpoint_size_bytes", "B", "checkpoint size",
            "bytes per checkpoint (size=auto: weights + fp32 master + Adam moments)",
            scn->checkpoint_bytes, 0);
}

/* The rows of the mechanisms the scenario has: silent corruption,
 * maintenance, async checkpoints, limited spares, stragglers, elastic
 * continuation. */
static void add_mechanism_rows(run_summary *out, const campaign_config *c,
                               const campaign_result *r)
{
    int silent = 0;
    for (unsigned i = 0; i < c->n_causes; i++)
        silent |= c->causes[i].detection_s > 0;
    if (silent)
        add(out, "silent_failures", "1", "silent corruptions",
            "corruptions found late (each rolls back to a checkpoint from before it; several "
            "before one finding share its rollback)", (double)r->silent_failures, 1);
    if (c->maintenance_every_s > 0) {
        add(out, "maintenance_time_s", "s", "planned maintenance",
            "time inside planned maintenance windows", r->maintenance_time_s, 0);
        add(out, "maintenance_windows", "1", "maintenance windows", "windows the run crossed",
            (double)r->maintenance_windows, 1);
    }
    if (c->checkpoint_async)
        add(out, "persist_slowdown_s", "s", "slowed by async persists",
            "compute stretched while snapshots persisted in the background",
            r->persist_slowdown_s, 0);
    if (c->spares_limited) {
        add(out, "spare_wait_s", "s", "waiting for spares",
            "restart time spent waiting for a repaired node (part of restarts)",
            r->spare_wait_s, 0);
        add(out, "repairs", "1", "nodes repaired", "nodes back in the spare pool",
            (double)r->repairs, 1);
        add(out, "spares_lowest", "1", "fewest spares", "the lowest level of the spare pool",
            (double)r->spares_lowest, 1);
    }
    if (c->straggler_rate_per_s > 0) {
        add(out, "straggler_slowdown_s", "s", "slowed by stragglers",
            "compute stretched while a node was slow (until drained)", r->straggler_slowdown_s, 0);
        add(out, "straggler_speed_frac", "1", "job speed with a slow node",
            "work per second while a node is slow (step tier: from its profile)",
            c->straggler_speed, 0);
        add(out, "stragglers", "1", "nodes turned slow", "slow spells that began",
            (double)r->stragglers, 1);
        add(out, "drains", "1", "nodes drained", "slow nodes taken out at a checkpoint",
            (double)r->drains, 1);
    }
    if (r->fabric_causes) {
        add(out, "degraded_slowdown_s", "s", "slowed by the degraded fabric",
            "compute stretched while network parts were down or slow (the step tier's "
            "iteration on the fabric left)", r->degraded_slowdown_s, 0);
        add(out, "fabric_wait_s", "s", "waiting for network repairs",
            "restart time spent waiting for a network part's repair (part of restarts)",
            r->fabric_wait_s, 0);
        add(out, "parts_down", "1", "network parts down", "switches and cables that went down "
            "until repaired", (double)r->parts_down, 1);
        add(out, "parts_slow", "1", "network parts slow", "switches and cables that turned "
            "slow until repaired", (double)r->parts_slow, 1);
        add(out, "parts_repaired", "1", "network parts repaired", "repairs done",
            (double)r->parts_repaired, 1);
        add(out, "fabric_unrunnable", "1", "restarts on an unusable fabric",
            "restarts that found GPUs cut off or no route, and waited for a repair",
            (double)r->fabric_unrunnable, 1);
        add(out, "fabric_faster", "1", "faster states taken as built",
            "failure states the step tier found faster than as built (ECMP rehash), "
            "taken at the as-built speed", (double)r->fabric_faster, 1);
    }
    if (r->flapping) {
        add(out, "flap_episodes", "1", "flapping episodes", "cable failures that flapped "
            "(docs/failures.md \"Flapping links\")", (double)r->flap_episodes, 1);
        add(out, "flaps", "1", "flaps", "times a flapping cable went down", (double)r->flaps, 1);
        add(out, "flap_down_s", "s", "degraded by flaps", "cable-seconds down by flaps "
            "(summed over cables)", r->flap_down_s, 0);
        add(out, "flap_interruptions", "1", "flaps that interrupted",
            "flap downs the job could not run on (GPUs cut off, no route)",
            (double)r->flap_interruptions, 1);
    }
    if (r->shrink) {
        add(out, "shrunk_s", "s", "run shrunk", "compute time on fewer data-parallel "
            "replicas while parts down cut the others' GPUs off (policy shrink)", r->shrunk_s, 0);
        add(out, "shrunk_idle_gpu_h", "GPU h", "GPU-hours idle while shrunk",
            "the dropped replicas' GPUs x the time run shrunk", r->shrunk_idle_gpu_h, 0);
        add(out, "shrink_restarts", "1", "restarts onto a smaller shape",
            "restarts on the replicas left whole (policy shrink)", (double)r->shrink_restarts, 1);
        add(out, "grow_restarts", "1", "restarts growing back",
            "restarts at a checkpoint after a repair gave GPUs back (policy shrink)",
            (double)r->grow_restarts, 1);
    }
    if (c->elastic_replicas) {
        add(out, "elastic_slowdown_s", "s", "slowed by missing replicas",
            "compute stretched while the job ran on fewer data-parallel replicas",
            r->elastic_slowdown_s, 0);
        add(out, "elastic_restarts", "1", "elastic restarts",
            "restarts that went on without the nodes the pool could not supply",
            (double)r->elastic_restarts, 1);
    }
}

/* <reliability><throttle>: the hot hours and what they cost (docs/failures.md
 * "Thermal throttling"), apart from the other stretches */
static void add_throttle_rows(run_summary *out, const run_plan *plan, const campaign_result *r)
{
    if (!plan->scn->throttle_given)
        return;
    add(out, "throttle_slowdown_s", "s", "slowed by thermal throttling",
        "compute stretched in the site's hours above the <throttle> temperature",
        r->throttle_slowdown_s, 0);
    add(out, "throttle_hot_hours", "1", "hot hours a year",
        "hours of the site's year (from the start month) above the <throttle> temperature",
        (double)plan->throttle_hot_hours, 1);
    add(out, "throttle_hot_s", "s", "time in hot hours", "wall time of the run in hot hours",
        r->throttle_hot_s, 0);
    add(out, "throttle_changes", "1", "throttling changes",
        "hour boundaries where throttling began or ended", (double)r->throttle_changes, 1);
    if (plan->throttle_iteration_s > 0)
        add(out, "throttle_speed_frac", "1", "job speed in a hot hour",
            "the iteration as built / with the throttled GPUs slow (step tier)",
            plan->campaign.throttle_speed, 0);
}

/* The counts, the checkpoint interval and the optimal intervals. */
static void add_count_rows(run_summary *out, const campaign_config *c, const campaign_result *r)
{
    add(out, "failures", "1", "failures", "failures that interrupted the job",
        (double)r->failures, 1);
    add(out, "restarts", "1", "restarts completed", "restarts that completed",
        (double)r->restarts, 1);
    add(out, "checkpoints", "1", "checkpoints written",
        "completed checkpoint writes, the final one included", (double)r->checkpoints, 1);
    add(out, "checkpoints_aborted", "1", "checkpoints aborted", "writes cut short by a failure",
        (double)r->checkpoints_aborted, 1);
    add(out, "checkpoint_interval_s", "s", "checkpoint interval (effective)",
        "whole iterations between checkpoints x iteration time", r->checkpoint_interval_s, 0);
    add(out, "checkpoint_every_iterations", "1", "checkpoint every",
        "iterations between checkpoints", (double)r->checkpoint_every_iterations, 1);
    if (c->checkpoint_adapt_window_s > 0) {
        add(out, "checkpoint_interval_min_s", "s", "shortest adapted interval",
            "interval=\"adaptive\": the shortest interval a segment used (Daly's for the "
            "failure rate seen so far)", r->checkpoint_interval_min_s, 0);
        add(out, "checkpoint_interval_max_s", "s", "longest adapted interval",
            "interval=\"adaptive\": the longest interval a segment used",
            r->checkpoint_interval_max_s, 0);
        add(out, "checkpoint_adaptations", "1", "interval changes",
            "interval=\"adaptive\": compute segments that began with another interval than "
            "the one before", (double)r->checkpoint_adaptations, 1);
    }
    add(out, "cluster_mtbf_s", "s", "cluster MTBF", "1 / (GPUs x per-GPU failure rate); 0 = no failures",
        r->cluster_mtbf_s, 0);
    add(out, "young_interval_s", "s", "Young's optimal interval",
        "sqrt(2 x write time x cluster MTBF) (Young 1974); 0 = no failures", r->young_interval_s,
        0);
    add(out, "daly_interval_s", "s", "Daly's optimal interval",
        "Daly 2006 eq. 37 from write time and cluster MTBF; 0 = no failures; the interval used "
        "when <checkpoint interval=\"auto\">", r->daly_interval_s, 0);
}

/* The GPUs, the MFU (given, or the step tier's) and the engine's events. */
static void add_gpu_rows(run_summary *out, const run_plan *plan, const campaign_config *c,
                         const campaign_result *r)
{
    add(out, "gpu_count", "1", "GPUs", "GPUs in the job", (double)c->gpu_count, 1);
    add(out, "gpu_peak_flops_per_s", "FLOP/s", "GPU peak", "dense peak at the training precision",
        c->gpu_peak_flops_per_s, 0);
    if (plan->step.used) {
        add(out, "step_mfu_frac", "1", "MFU (step tier)",
            "model FLOPs utilisation of the simulated iteration, Megatron-Core counting",
            plan->step.mfu_frac, 0);
        add(out, "step_exposed_comm_s", "s", "exposed communication / iteration",
            "TP, PP, DP, CP and EP time not hidden behind compute, critical stage",
            plan->step.exposed_comm_s, 0);
        add(out, "step_bubble_s", "s", "pipeline bubble / iteration",
            "idle time of the critical stage in the schedule", plan->step.bubble_s, 0);
    } else {
        add(out, "mfu_frac", "1", "MFU (input)", "model FLOPs utilisation, a scenario input",
            c->mfu_frac, 0);
    }
    add(out, "events_fired", "1", "simulation events", "events the engine processed",
        (double)r->events_fired, 1);
}

void summary_build(const run_plan *plan, const campaign_result *r, run_summary *out)
{
    memset(out, 0, sizeof *out);
    const campaign_config *c = &plan->campaign;
    snprintf(out->event_digest, sizeof out->event_digest, "0x%016" PRIx64, r->event_digest);
    memcpy(out->failures_by_cause, r->failures_by_cause, sizeof out->failures_by_cause);
    add_time_rows(out, plan->scn, c, r);
    add_mechanism_rows(out, c, r);
    add_throttle_rows(out, plan, r);
    add_count_rows(out, c, r);
    add_gpu_rows(out, plan, c, r);
}

typedef struct mc_row {
    const char *name, *unit, *label;
    const campaign_stat *stat;
} mc_row;
static size_t mc_rows(const campaign_mc *mc, mc_row *rows);

/* [lo, hi] of a row, by its name's unit suffix */
static void row_range(const char *name, double *lo, double *hi)
{
    size_t n = strlen(name);
    *lo = 0;
    *hi = INFINITY;
    if (n > 5 && !strcmp(name + n - 5, "_frac")) {
        if (!strncmp(name, "pue", 3))
            *lo = 1;
        else
            *hi = 1;
    }
}

static int out_of_range(const char *what, const char *name, double x, double lo, double hi,
                        sim_error *err)
{
    if (isfinite(x) && x >= lo && x <= hi)
        return 0;
    char range[48];
    if (isinf(hi))
        snprintf(range, sizeof range, ">= %g", lo);
    else
        snprintf(range, sizeof range, "[%g, %g]", lo, hi);
    return sim_error_set(err, SIM_ERR_INTERNAL, NULL, 0,
                         "%s %s = %g is outside its range %s (docs/trace-format.md): "
                         "an internal error, please report it with the scenario",
                         what, name, x, range);
}

int summary_check_value(const char *what, const char *name, double x, sim_error *err)
{
    double lo, hi;
    row_range(name, &lo, &hi);
    return out_of_range(what, name, x, lo, hi, err);
}

int summary_check(const run_summary *sum, const campaign_mc *mc, sim_error *err)
{
    for (size_t i = 0; i < sum->n_metrics; i++) {
        const summary_metric *m = &sum->metrics[i];
        int rc = summary_check_value("summary row", m->name, m->value, err);
        if (rc)
            return rc;
    }
    return mc ? summary_check_mc(mc, err) : 0;
}

int summary_check_mc(const campaign_mc *mc, sim_error *err)
{
    mc_row rows[16];
    size_t n = mc_rows(mc, rows);
    for (size_t i = 0; i < n; i++) {
        double lo, hi;
        row_range(rows[i].name, &lo, &hi);
        int rc = out_of_range("replicas' mean", rows[i].name, rows[i].stat->mean, lo, hi, err);
        if (!rc)
            rc = out_of_range("replicas' sd", rows[i].name, rows[i].stat->sd, 0, INFINITY, err);
        if (!rc)
            rc = out_of_range("replicas' 95% CI", rows[i].name, rows[i].stat->ci95, 0, INFINITY,
                              err);
        if (rc)
            return rc;
    }
    return 0;
}

void summary_add_energy(run_summary *out, const scn_scenario *scn, const campaign_result *r,
                        const energy_run *er)
{
    const energy_result *e = &er->result;
    double mtok = scn->campaign.train_tokens / 1e6;
    add(out, "it_energy_j", "J", "IT energy", "the integral of IT power over the run's timeline",
        e->it_energy_j, 0);
    add(out, "facility_energy_j", "J", "facility energy",
        "sum over hours of IT energy x the hour's PUE", e->facility_energy_j, 0);
    add(out, "pue_frac", "1", "PUE (energy-weighted)", "facility energy / IT energy", e->pue, 0);
    add(out, "pue_annual_frac", "1", "PUE over the site's year",
        "a whole year of the site's hours at the computing load", e->pue_annual, 0);
    add(out, "pue_min_frac", "1", "PUE, best hour", "lowest hourly PUE of the run", e->pue_min, 0);
    add(out, "pue_max_frac", "1", "PUE, worst hour", "highest hourly PUE of the run", e->pue_max,
        0);
    add(out, "it_power_compute_w", "W", "IT power computing",
        "GPUs at the iteration's compute/communication split, hosts, network",
        er->levels.state_w[PWR_STATE_COMPUTE], 0);
    add(out, "it_power_idle_w", "W", "IT power idle", "job stopped, waiting",
        er->levels.state_w[PWR_STATE_IDLE], 0);
    add(out, "network_power_w", "W", "network power",
        "switches and their optics (0 without a <fabric>)", er->levels.network_w, 0);
    add(out, "peak_facility_power_w", "W", "peak facility power", "highest hourly mean",
        e->peak_facility_w, 0);
    add(out, "power_swing_w", "W", "power swing per iteration",
        "all GPUs computing minus all communicating (in phase: an upper bound)",
        er->swing.amplitude_w, 0);
    if (e->water_l > 0)
        add(out, "water_l", "L", "water", "evaporated and bled off (evaporative cooling)",
            e->water_l, 0);
    add(out, "energy_cost_cny", "CNY", "energy cost", "facility kWh x the site's price", e->cost,
        0);
    add(out, "energy_cost_per_mtok_cny", "CNY", "energy cost per million tokens",
        "energy cost / training tokens x 1e6", e->cost / mtok, 0);
    add(out, "co2_kg", "kg", "CO2", "facility kWh x emission factor x (1 - green share)",
        e->co2_kg, 0);
    add(out, "co2_per_mtok_kg", "kg", "CO2 per million tokens", "CO2 / training tokens x 1e6",
        e->co2_kg / mtok, 0);
    if (!scn->costs.given)
        return;
    energy_capex k;
    energy_run_capex(er, &scn->costs, r->time_to_train_s, &k);
    add(out, "capex_cny", "CNY", "capital cost",
        "servers, switches, NICs, optics and cables x the scenario's unit prices", k.capex, 0);
    add(out, "capex_amortised_cny", "CNY", "capital cost of the run",
        "capital cost x time to train / life", k.amortised, 0);
    add(out, "build_cost_cny", "CNY", "built: cost of the run", "amortised capital + energy",
        k.build, 0);
    add(out, "build_cost_per_mtok_cny", "CNY", "built: per million tokens",
        "built cost / training tokens x 1e6", k.build / mtok, 0);
    if (scn->costs.rent_per_gpu_hour > 0) {
        add(out, "rent_cost_cny", "CNY", "rented: cost of the run",
            "GPUs x hours x rent per GPU-hour", k.rent, 0);
        add(out, "rent_cost_per_mtok_cny", "CNY", "rented: per million tokens",
            "rent cost / training tokens x 1e6", k.rent / mtok, 0);
    }
}

void summary_print_site(FILE *f, const scn_scenario *scn, const energy_run *er)
{
    const scn_site *s = &scn->site;
    fprintf(f, "site       %s (%s), %s cooling, from month %u\n", s->info.name, s->info.display,
            fac_cooling_name(s->design.cooling), s->start_month);
    fprintf(f, "           climate: %s\n", s->info.climate_basis);
    /* the hub's policy cap (sites.md 3.1) against this design's simulated year */
    if (s->info.pue_target > 0 && er->result.pue_annual > 0)
        fprintf(f, "           PUE target %.2f (the hub's policy cap, sites.xml): the %s design's "
                "year at the computing load gives %.3f, %s\n", s->info.pue_target,
                fac_cooling_name(s->design.cooling), er->result.pue_annual,
                er->result.pue_annual <= s->info.pue_target ? "within it" : "above it");
    fprintf(f, "           price %.4g CNY/kWh (%s); grid %.4g kgCO2/kWh (%s)%s%.0f%% green\n",
            s->info.price_per_kwh, s->info.price_basis, s->info.emission_kg_per_kwh,
            s->info.emission_basis, "; ", 100 * s->green_share);
    if (s->overrides[0])
        fprintf(f, "           given by the scenario: %s\n", s->overrides);
    if (!er->network_counted)
        fprintf(f, "           network power not counted: the scenario has no <fabric>\n");
}

void summary_print_defaults(FILE *f, const char *prefix, const scn_scenario *scn)
{
    hw_default d[SCN_MAX_DEFAULTS_USED];
    size_t n = scn_defaults_used(scn, d, SCN_MAX_DEFAULTS_USED);
    if (n == 0)
        fprintf(f, "%snone: every value is the catalogs' own\n", prefix);
    for (size_t i = 0; i < n && i < SCN_MAX_DEFAULTS_USED; i++)
        fprintf(f, "%*s%s %s = %s (%s)\n", i ? (int)strlen(prefix) : 0, i ? "" : prefix,
                d[i].part, d[i].what, d[i].value, d[i].rule);
    if (n > SCN_MAX_DEFAULTS_USED)
        fprintf(f, "%*s... and %zu more\n", (int)strlen(prefix), "", n - SCN_MAX_DEFAULTS_USED);
}

void summary_defaults_json(cJSON *obj, const scn_scenario *scn)
{
    hw_default d[SCN_MAX_DEFAULTS_USED];
    size_t n = scn_defaults_used(scn, d, SCN_MAX_DEFAULTS_USED);
    cJSON *list = cJSON_AddArrayToObject(obj, "defaults_used");
    for (size_t i = 0; list && i < n && i < SCN_MAX_DEFAULTS_USED; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "part", d[i].part);
        cJSON_AddStringToObject(o, "what", d[i].what);
        cJSON_AddStringToObject(o, "value", d[i].value);
        cJSON_AddStringToObject(o, "rule", d[i].rule);
        cJSON_AddItemToArray(list, o);
    }
}

/* 93.4 d, 5.2 h, 12.0 min: a reading aid beside values in seconds */
static void human_duration(double s, char *buf, size_t size)
{
    if (s >= 2 * 86400)
        snprintf(buf, size, "(%.2f d)", s / 86400);
    else if (s >= 2 * 3600)
        snprintf(buf, size, "(%.2f h)", s / 3600);
    else if (s >= 120)
        snprintf(buf, size, "(%.2f min)", s / 60);
    else
        buf[0] = '\0';
}

void summary_iteration_rule(const run_plan *plan, const campaign_result *r, char *buf,
                            size_t size)
{
    const campaign_config *c = &plan->campaign;
    if (plan->step.used) {
        snprintf(buf, size, "the step tier (dcsim step): %.6g s, MFU %.4g (Megatron-Core "
                 "counting)", r->iteration_time_s, plan->step.mfu_frac);
        return;
    }
    snprintf(buf, size,
             "6*N*T / (GPUs * peak * MFU) = 6 * %.6g * %.6g / (%" PRIu64
             " * %.6g FLOP/s * %.4g) = %.6g s",
             c->model_params, fmin(c->tokens_per_iteration, c->train_tokens), c->gpu_count,
             c->gpu_peak_flops_per_s, c->mfu_frac, r->iteration_time_s);
}

void summary_print_table(FILE *f, const run_plan *plan, const campaign_result *r,
                         const run_summary *sum)
{
    const scn_scenario *scn = plan->scn;
    const campaign_config *c = &plan->campaign;
    char rule[400];
    summary_iteration_rule(plan, r, rule, sizeof rule);
    fprintf(f, "dcsim %s  scenario %s (%s)  seed %" PRIu64 "\n", DCSIM_VERSION,
            scn->name[0] ? scn->name : "unnamed", scn->source, scn->seed);
    fprintf(f, "cluster    %" PRIu64 " x %s, %s peak %.6g TFLOP/s per GPU\n", c->gpu_count,
            scn->gpu.name, precision_name(scn->precision), c->gpu_peak_flops_per_s / 1e12);
    fprintf(f, "job        %s: %.6g parameters, %.6g tokens, %.6g tokens per iteration\n",
            scn->model_name[0] ? scn->model_name : "model", c->model_params, c->train_tokens,
            c->tokens_per_iteration);
    fprintf(f, "iteration  %s\n", rule);
    summary_print_defaults(f, "defaults   ", scn);
    fputc('\n', f);
    fprintf(f, "  %-34s %16s  %s\n", "metric", "value", "unit");
    for (size_t i = 0; i < sum->n_metrics; i++) {
        const summary_metric *m = &sum->metrics[i];
        char value[32], human[32] = "", line[160];
        if (m->is_count)
            snprintf(value, sizeof value, "%.0f", m->value);
        else
            snprintf(value, sizeof value, "%.6g", m->value);
        if (strcmp(m->unit, "s") == 0)
            human_duration(m->value, human, sizeof human);
        else if (strcmp(m->unit, "J") == 0) /* a reading aid: MWh or GWh */
            snprintf(human, sizeof human, m->value >= 3.6e12 ? "(%.4g GWh)" : "(%.4g MWh)",
                     m->value / (m->value >= 3.6e12 ? 3.6e12 : 3.6e9));
        else if (strcmp(m->unit, "W") == 0)
            snprintf(human, sizeof human, "(%.4g MW)", m->value / 1e6);
        int n = snprintf(line, sizeof line, "  %-34s %16s  %-7s %s", m->label, value, m->unit,
                         human);
        if (n >= (int)sizeof line)
            n = (int)sizeof line - 1;
        while (n > 0 && line[n - 1] == ' ') /* no trailing blanks */
            line[--n] = '\0';
        fprintf(f, "%s\n", line);
    }
    const run_degraded *d = plan->degraded;
    if (d && d->shrink) /* what the shapes were, over every replica's states */
        fprintf(f, "\n  shrink: %" PRIu64 " of %" PRIu64 " failure states simulated ran on a "
                "smaller shape; %" PRIu64 " left none that runs (the job waited for repairs "
                "there)%s%s\n", d->shrunk_states, d->simulations, d->unrunnable_states,
                d->first_refusal[0] ? ": " : "", d->first_refusal);
    if (d && d->shrink && d->reshard) /* reshard="true": how many ran on fewer stages */
        fprintf(f, "  reshard: %" PRIu64 " of those states had no whole replica left and ran "
                "with the pipeline over fewer stages\n", d->resharded_states);
    if (d && d->hot_lookups) /* hot hours with network parts out, over every replica */
        fprintf(f, "\n  throttling on a degraded fabric: %" PRIu64 " lookups of hot states, %" PRIu64
                " simulated (one step-tier iteration with both applied)\n", d->hot_lookups,
                d->hot_simulations);
    if (d && d->slow_lookups) /* a slow node with network parts out, over every replica */
        fprintf(f, "%s  a slow node on a degraded fabric: %" PRIu64 " lookups, %" PRIu64
                " simulated (one step-tier iteration with the slow node%s and the parts "
                "applied)\n", d->hot_lookups ? "" : "\n", d->slow_lookups, d->slow_simulations,
                plan->throttle_iteration_s > 0 ? ", the throttled GPUs in hot hours" : "");
    fprintf(f, "\n  event digest %s\n", sum->event_digest);
}

/* The shortest decimal that reads back as exactly the same double. cJSON's
 * own number printer accepts a one-ulp difference, and a summary must match
 * the trace bit for bit. JSON has no inf or NaN: those print as null. */
void summary_number_text(double x, char *buf, size_t size)
{
    if (!isfinite(x)) {
        snprintf(buf, size, "null");
        return;
    }
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, size, "%.*g", digits, x);
        if (strtod(buf, NULL) == x)
            return;
    }
}

static char *summary_json_with(const scn_scenario *scn, const run_summary *sum,
                               const campaign_mc *mc);

char *summary_json(const scn_scenario *scn, const run_summary *sum)
{
    return summary_json_with(scn, sum, NULL);
}

char *summary_json_replicas(const scn_scenario *scn, const run_summary *sum,
                            const campaign_mc *mc)
{
    return summary_json_with(scn, sum, mc);
}

/* the Monte Carlo statistics, in one list for the table and the JSON */

static size_t mc_rows(const campaign_mc *mc, mc_row *rows)
{
    size_t n = 0;
    rows[n++] = (mc_row){"time_to_train_s", "s", "time to train", &mc->time_to_train_s};
    rows[n++] = (mc_row){"ettr_frac", "1", "ETTR", &mc->ettr_frac};
    rows[n++] = (mc_row){"failures", "1", "failures", &mc->failures};
    rows[n++] = (mc_row){"rework_s", "s", "lost to rework", &mc->rework_s};
    rows[n++] = (mc_row){"restart_time_s", "s", "restarts", &mc->restart_time_s};
    rows[n++] = (mc_row){"checkpoint_time_s", "s", "checkpoint writes", &mc->checkpoint_time_s};
    if (mc->fabric_causes) {
        rows[n++] = (mc_row){"interruption_s", "s", "lost to interruptions", &mc->interruption_s};
        rows[n++] = (mc_row){"degraded_slowdown_s", "s", "lost to degradation",
                             &mc->degraded_slowdown_s};
        rows[n++] = (mc_row){"fabric_wait_s", "s", "waiting for repairs", &mc->fabric_wait_s};
    }
    if (mc->flapping) {
        rows[n++] = (mc_row){"flaps", "1", "flaps", &mc->flaps};
        rows[n++] = (mc_row){"flap_down_s", "s", "down by flaps", &mc->flap_down_s};
    }
    if (mc->throttled)
        rows[n++] = (mc_row){"throttle_slowdown_s", "s", "lost to throttling",
                             &mc->throttle_slowdown_s};
    if (mc->shrink) {
        rows[n++] = (mc_row){"shrunk_s", "s", "run shrunk", &mc->shrunk_s};
        rows[n++] = (mc_row){"shrunk_idle_gpu_h", "GPU h", "GPU-hours idle while shrunk",
                             &mc->shrunk_idle_gpu_h};
    }
    return n;
}

static const char *unit_name(int unit)
{
    switch (unit) {
    case CAMPAIGN_UNIT_RACK: return "rack";
    case CAMPAIGN_UNIT_NODE: return "node";
    case CAMPAIGN_UNIT_SWITCH: return "switch";
    case CAMPAIGN_UNIT_CABLE: return "cable";
    case CAMPAIGN_UNIT_NIC: return "NIC";
    case CAMPAIGN_UNIT_TRANSCEIVER: return "transceiver";
    default: return "GPU";
    }
}

void summary_print_causes(FILE *f, const scn_scenario *scn, const campaign_result *res,
                          const campaign_mc *mc)
{
    const campaign_config *c = &scn->campaign;
    if (!c->n_causes)
        return;
    double days = res->time_to_train_s / 86400;
    fprintf(f, "\n  failures by cause%s          count  per day  unit    category\n",
            mc ? " (mean of replicas)" : "");
    for (unsigned i = 0; i <= c->n_causes; i++) {
        if (i == 0 && !(c->gpu_failure_rate_per_s > 0))
            continue;
        double n = mc ? mc->failures_by_cause[i].mean : (double)res->failures_by_cause[i];
        const char *name = i ? c->causes[i - 1].name : "GPU (unnamed rate)";
        const char *unit = !i ? "GPU" : unit_name(c->causes[i - 1].unit);
        fprintf(f, "  %-34s %8.2f %8.3f  %-6s  %s\n", name, n,
                mc ? mc->failures_by_cause[i].mean / (mc->time_to_train_s.mean / 86400) : n / days,
                unit, i ? c->causes[i - 1].category : "GPU");
    }
}

void summary_print_replicas(FILE *f, const campaign_mc *mc)
{
    mc_row rows[16];
    size_t n = mc_rows(mc, rows);
    fprintf(f, "\n  over %u replicas            mean       95%% CI (+-)          sd  unit\n",
            mc->replicas);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "  %-22s %12.6g %12.4g %12.4g  %s\n", rows[i].label, rows[i].stat->mean,
                rows[i].stat->ci95, rows[i].stat->sd, rows[i].unit);
}

cJSON *summary_json_doc(const scn_scenario *scn, const run_summary *sum, const campaign_mc *mc)
{
    cJSON *root = jsonout_begin("run"); /* its dcsim_version, as before the envelope */
    cJSON *metrics = cJSON_CreateObject();
    cJSON *units = cJSON_CreateObject();
    if (!root || !metrics || !units) {
        cJSON_Delete(root);
        cJSON_Delete(metrics);
        cJSON_Delete(units);
        return NULL;
    }
    cJSON_AddStringToObject(root, "scenario", scn->name);
    cJSON_AddStringToObject(root, "source", scn->source);
    /* a JSON number is a double: seeds above 2^53 would lose digits */
    char seed[24];
    snprintf(seed, sizeof seed, "%" PRIu64, scn->seed);
    cJSON_AddStringToObject(root, "seed", seed);
    cJSON_AddStringToObject(root, "event_digest", sum->event_digest);
    cJSON_AddStringToObject(root, "gpu_type", scn->gpu.name);
    cJSON_AddStringToObject(root, "precision", precision_name(scn->precision));
    cJSON_AddStringToObject(root, "iteration_time_rule", "6*N*T/(GPUs*peak*MFU)");
    summary_defaults_json(root, scn);
    for (size_t i = 0; i < sum->n_metrics; i++) {
        char number[32];
        summary_number_text(sum->metrics[i].value, number, sizeof number);
        cJSON_AddRawToObject(metrics, sum->metrics[i].name, number);
        cJSON_AddStringToObject(units, sum->metrics[i].name, sum->metrics[i].unit);
    }
    cJSON_AddItemToObject(root, "summary", metrics);
    cJSON_AddItemToObject(root, "units", units);
    if (scn->campaign.n_causes) {
        cJSON *causes = cJSON_AddArrayToObject(root, "causes");
        for (unsigned i = 0; i < scn->campaign.n_causes; i++) {
            const campaign_cause *x = &scn->campaign.causes[i];
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "name", x->name);
            cJSON_AddStringToObject(o, "category", x->category);
            cJSON_AddStringToObject(o, "unit", unit_name(x->unit));
            cJSON_AddNumberToObject(o, "rate_per_unit_per_s", x->rate_per_s);
            cJSON_AddNumberToObject(o, "failures", (double)sum->failures_by_cause[i + 1]);
            if (mc)
                cJSON_AddNumberToObject(o, "failures_mean", mc->failures_by_cause[i + 1].mean);
            cJSON_AddItemToArray(causes, o);
        }
    }
    if (mc) {
        cJSON *rep = cJSON_AddObjectToObject(root, "replicas");
        cJSON_AddNumberToObject(rep, "count", mc->replicas);
        mc_row rows[16];
        size_t n = mc_rows(mc, rows);
        for (size_t i = 0; i < n; i++) {
            cJSON *o = cJSON_AddObjectToObject(rep, rows[i].name);
            char number[32];
            summary_number_text(rows[i].stat->mean, number, sizeof number);
            cJSON_AddRawToObject(o, "mean", number);
            summary_number_text(rows[i].stat->ci95, number, sizeof number);
            cJSON_AddRawToObject(o, "ci95", number);
            summary_number_text(rows[i].stat->sd, number, sizeof number);
            cJSON_AddRawToObject(o, "sd", number);
        }
    }
    return root;
}

static char *summary_json_with(const scn_scenario *scn, const run_summary *sum,
                               const campaign_mc *mc)
{
    cJSON *root = summary_json_doc(scn, sum, mc);
    char *text = NULL;
    if (!root)
        return NULL;
    char *json = cJSON_Print(root);
    if (json) {
        size_t n = strlen(json);
        text = malloc(n + 2);
        if (text) {
            memcpy(text, json, n);
            text[n] = '\n';
            text[n + 1] = '\0';
        }
        cJSON_free(json);
    }
    cJSON_Delete(root);
    return text;
}
