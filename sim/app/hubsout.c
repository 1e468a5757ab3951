/* hubsout.c - `dcsim hubs`' machine outputs (hubscmd.h): the dcsim/1
 * document (docs/json.md) and the HDF5 tables /hubs/hubs, /hubs/jobs and
 * /hubs/series with the baseline's totals (docs/trace-format.md "Hubs
 * tables"). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric.h"
#include "h5util.h"
#include "hubscmd.h"
#include "hubs_keys_size.h"
#include "jsonout.h"

#define HUBS_FORMAT_VERSION 1

static void json_stat(cJSON *o, const char *name, const cluster_stat *q)
{
    cJSON *w = cJSON_AddObjectToObject(o, name);
    cJSON_AddNumberToObject(w, "mean", q->mean);
    cJSON_AddNumberToObject(w, "p50", q->q[0]);
    cJSON_AddNumberToObject(w, "p90", q->q[1]);
    cJSON_AddNumberToObject(w, "p99", q->q[2]);
    cJSON_AddNumberToObject(w, "max", q->max);
}

static cJSON *json_hub(const char *name, uint32_t gpus, const hubs_hub_result *o)
{
    cJSON *h = cJSON_CreateObject();
    cJSON_AddStringToObject(h, "name", name);
    const struct { const char *name; double value; } v[] = {
        {"gpus", gpus}, {"jobs", o->jobs}, {"serving_jobs", o->serving_jobs},
        {"gpu_h", o->gpu_s / 3600}, {"ref_gpu_h", o->ref_gpu_s / 3600},
        {"capacity_gpu_h", o->capacity_gpu_s / 3600},
        {"utilisation", o->utilisation}, {"end_s", o->end_s},
        {"it_energy_j", o->it_energy_j}, {"facility_energy_j", o->facility_energy_j},
        {"energy_cost", o->energy_cost}, {"co2_kg", o->co2_kg}, {"water_l", o->water_l},
        {"tb_in", o->tb_in}, {"tb_out", o->tb_out}, {"data_cost", o->data_cost},
        {"cost", o->energy_cost + o->data_cost}, {"transfer_s", o->transfer_s},
        {"link_wait_s", o->link_wait_s},
        {"serving_rtt_mean_s", o->serving_jobs ? o->serving_rtt_s_sum / o->serving_jobs : 0},
        {"slo_violation_jobs", o->slo_jobs}, {"slo_violation_job_h", o->slo_job_h},
        {"deferred_s", o->deferred_s}, {"events", (double)o->events}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        cJSON_AddNumberToObject(h, v[i].name, v[i].value);
    json_stat(h, "wait_s", &o->wait_s);
    char digest[24];
    snprintf(digest, sizeof digest, "%016" PRIx64, o->digest);
    cJSON_AddStringToObject(h, "digest", digest);
    return h;
}

typedef struct bin_row {
    uint32_t bin, hub, jobs_started;
    double t_start_s, t_end_s, busy_gpu_h, it_energy_j, facility_energy_j, energy_cost, data_cost,
        cost, co2_kg, water_l, tb_moved, queue_mean;
} bin_row;

/* bin k of hub h of run's series (the rows of /hubs/series and run.series) */
static bin_row bin_at(const hubs_run *run, unsigned h, uint32_t k)
{
    uint32_t n = run->n_bins;
    double bin_s = hubs_series_bin_s(run->r.horizon_s);
    const hubs_bin *b = &run->series[(size_t)h * n + k];
    double lo = bin_s * k, hi = k == n - 1 ? run->r.horizon_s : bin_s * (k + 1);
    return (bin_row){k, h, b->jobs_started, lo, hi, b->busy_gpu_s / 3600, b->it_energy_j,
                     b->facility_energy_j, b->energy_cost, b->data_cost,
                     b->energy_cost + b->data_cost, b->co2_kg, b->water_l, b->tb_moved,
                     hi > lo ? b->queue_job_s / (hi - lo) : 0};
}

/* run.series: one object per hub per bin, hub-major, the columns of /hubs/series */
static cJSON *json_series(const hubs_run *run)
{
    cJSON *a = cJSON_CreateArray();
    for (unsigned h = 0; a && h < run->cfg.n_hubs; h++)
        for (uint32_t k = 0; k < run->n_bins; k++) {
            bin_row r = bin_at(run, h, k);
            cJSON *o = cJSON_CreateObject();
            const struct { const char *name; double value; } v[] = {
                {"bin", r.bin}, {"hub", r.hub}, {"t_start_s", r.t_start_s},
                {"t_end_s", r.t_end_s}, {"jobs_started", r.jobs_started},
                {"busy_gpu_h", r.busy_gpu_h}, {"it_energy_j", r.it_energy_j},
                {"facility_energy_j", r.facility_energy_j}, {"energy_cost", r.energy_cost},
                {"data_cost", r.data_cost}, {"cost", r.cost}, {"co2_kg", r.co2_kg},
                {"water_l", r.water_l}, {"tb_moved", r.tb_moved}, {"queue_mean", r.queue_mean}};
            for (size_t i = 0; o && i < sizeof v / sizeof v[0]; i++)
                cJSON_AddNumberToObject(o, v[i].name, v[i].value);
            cJSON_AddItemToArray(a, o);
        }
    return a;
}

/* with moves (docs/hubs.md "Moving running jobs"): the moves that arrived
 * at the hub (or in all), their bytes, their time from checkpoint to
 * arrival and the restarts' GPU-hours (of gpu_h) */
static void json_moves(cJSON *x, const hubs_hub_result *o)
{
    cJSON_AddNumberToObject(x, "moves_in", o->moves_in);
    cJSON_AddNumberToObject(x, "move_tb", o->move_tb);
    cJSON_AddNumberToObject(x, "move_s", o->move_s);
    cJSON_AddNumberToObject(x, "restart_gpu_h", o->restart_gpu_s / 3600);
}

static cJSON *json_run(const hubs_run *run, const char *const *gpu_names,
                       const char *const *fabric_names)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "policy", hubs_policy_name(run->cfg.policy));
    cJSON_AddStringToObject(o, "rule", hubs_policy_rule(run->cfg.policy));
    cJSON_AddNumberToObject(o, "fallbacks", run->r.fallbacks);
    cJSON_AddBoolToObject(o, "shifts_nothing", run->r.shifts_nothing);
    cJSON *a = cJSON_AddArrayToObject(o, "hubs");
    uint32_t gpus = 0;
    for (unsigned h = 0; h < run->cfg.n_hubs; h++) {
        const hubs_hub *hub = &run->cfg.hubs[h];
        gpus += hub->gpus;
        cJSON *x = json_hub(hub->name, hub->gpus, &run->r.hub[h]);
        cJSON_AddNumberToObject(x, "pue", run->pue[h]);
        cJSON_AddStringToObject(x, "gpu", gpu_names[h]);
        cJSON_AddNumberToObject(x, "time_scale", hub->time_scale > 0 ? hub->time_scale : 1);
        cJSON_AddNumberToObject(x, "energy_scale", hub->energy_scale > 0 ? hub->energy_scale : 1);
        cJSON_AddNumberToObject(x, "serving_scale",
                                hub->serving_scale > 0 ? hub->serving_scale : 1);
        cJSON_AddNumberToObject(x, "serving_energy_scale",
                                hub->serving_energy_scale > 0 ? hub->serving_energy_scale : 1);
        if (run->interf) { /* a fabric at each hub */
            const cluster_interf_stats *st = &run->interf_stats[h];
            cJSON_AddNumberToObject(x, "interference_gpu_h", run->r.hub[h].interf_gpu_s / 3600);
            cJSON_AddNumberToObject(x, "interference_simulations", (double)st->simulations);
            cJSON_AddNumberToObject(x, "interference_flows", (double)st->flows);
            cJSON_AddStringToObject(x, "fabric", fabric_names[h]);
        }
        if (hub->interf_scale > 0) /* keys="interfered": what the keys read */
            cJSON_AddNumberToObject(x, "interference_key_scale", hub->interf_scale);
        if (run->key_table) /* keys="interfered-size-load" */
            cJSON_AddItemToObject(x, "interference_key_table",
                                  hubs_key_table_json(&run->key_table[h]));
        if (hub->water_limit_l > 0) { /* the text's water line */
            cJSON_AddNumberToObject(x, "water_limit_l", hub->water_limit_l);
            cJSON_AddNumberToObject(x, "water_bound_l", run->r.water_est_l[h]);
            cJSON_AddNumberToObject(x, "water_year_max_l", run->water_year_l[h]);
        }
        if (run->cfg.max_moves)
            json_moves(x, &run->r.hub[h]);
        cJSON_AddItemToArray(a, x);
    }
    const hubs_hub_result *t = &run->r.total;
    cJSON *x = json_hub("total", gpus, t);
    cJSON_AddNumberToObject(x, "pue", t->it_energy_j > 0 ? t->facility_energy_j / t->it_energy_j
                                                         : 0);
    if (run->interf)
        cJSON_AddNumberToObject(x, "interference_gpu_h", t->interf_gpu_s / 3600);
    if (run->cfg.max_moves)
        json_moves(x, t);
    cJSON_AddItemToObject(o, "total", x);
    cJSON *mv = run->cfg.max_moves ? cJSON_AddArrayToObject(o, "moves") : NULL;
    for (uint32_t m = 0; mv && m < run->r.n_moves; m++) { /* each move, as decided */
        const hubs_move *y = &run->r.moves[m];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "job", y->job);
        cJSON_AddStringToObject(e, "from", run->cfg.hubs[y->from].name);
        cJSON_AddStringToObject(e, "to", run->cfg.hubs[y->to].name);
        const struct { const char *name; double value; } v[] = {
            {"checkpoint_s", y->ckpt_s}, {"arrive_s", y->arrive_s}, {"start_s", y->start_s},
            {"end_s", y->end_s}, {"done_fraction", y->frac}, {"tb", y->tb}};
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
            cJSON_AddNumberToObject(e, v[i].name, v[i].value);
        cJSON_AddItemToArray(mv, e);
    }
    if (run->cfg.backbone) /* a shared backbone */
        cJSON_AddItemToObject(o, "backbone", hubs_backbone_json(run));
    if (run->series) {
        cJSON_AddNumberToObject(o, "series_bin_s", hubs_series_bin_s(run->r.horizon_s));
        cJSON_AddItemToObject(o, "series", json_series(run));
    }
    return o;
}

cJSON *hubs_json(const scn_scenario *s, const hubs_run *run, const hubs_run *base)
{
    cJSON *root = jsonout_begin("hubs");
    if (!root)
        return NULL;
    const hubs_config *c = &run->cfg;
    cJSON_AddStringToObject(root, "scenario", s->name);
    cJSON_AddStringToObject(root, "gpu", s->gpu.name);
    cJSON_AddStringToObject(root, "backlog", c->gang_backlog ? "gang" : "fluid");
    cJSON_AddStringToObject(root, "keys", s->hubs->keys_size_load    ? "interfered-size-load"
                                          : s->hubs->keys_interfered ? "interfered"
                                                                     : "isolated");
    if (run->interf) { /* a fabric at each hub: how its jobs' iterations line up */
        const char *phase = cluster_phase_name(s->cluster_traffic.phase);
        cJSON_AddStringToObject(root, "phase", phase ? phase : "?");
    }
    const struct { const char *name; double value; } v[] = {
        {"jobs", c->n_jobs}, {"hubs", c->n_hubs}, {"bandwidth_bps", c->bandwidth_bps},
        {"cost_per_tb", c->cost_per_tb}, {"max_wait_s", c->max_wait_s},
        {"horizon_s", run->r.horizon_s}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        cJSON_AddNumberToObject(root, v[i].name, v[i].value);
    if (c->max_moves) { /* <hubs move="checkpoint"> */
        cJSON_AddNumberToObject(root, "max_moves", c->max_moves);
        cJSON_AddNumberToObject(root, "restart_s", c->restart_s);
    }
    cJSON *o = cJSON_AddArrayToObject(root, "origins");
    for (unsigned k = 0; k < c->n_origins; k++)
        cJSON_AddItemToArray(o, cJSON_CreateString(c->origin[k]));
    const char *gpu_names[HUBS_MAX];
    for (unsigned h = 0; h < c->n_hubs; h++)
        gpu_names[h] = s->hubs->gpu[h].name;
    const char *fabric_names[HUBS_MAX]; /* each hub's topology (with interference) */
    for (unsigned h = 0; h < c->n_hubs; h++)
        fabric_names[h] = s->hubs->fabric[h].topology
                              ? fabric_topology_name(s->hubs->fabric[h].topology) : "";
    cJSON_AddItemToObject(root, "run", json_run(run, gpu_names, fabric_names));
    cJSON_AddItemToObject(root, "baseline", json_run(base, gpu_names, fabric_names));
    const hubs_hub_result *t = &run->r.total, *b = &base->r.total;
    cJSON *sv = cJSON_AddObjectToObject(root, "saving");
    const struct { const char *name; double value; } w[] = {
        {"cost", b->energy_cost + b->data_cost - t->energy_cost - t->data_cost},
        {"energy_cost", b->energy_cost - t->energy_cost},
        {"data_cost", b->data_cost - t->data_cost}, {"co2_kg", b->co2_kg - t->co2_kg},
        {"water_l", b->water_l - t->water_l},
        {"facility_energy_j", b->facility_energy_j - t->facility_energy_j},
        {"serving_rtt_mean_s_added",
         (t->serving_jobs ? t->serving_rtt_s_sum / t->serving_jobs : 0) -
             (b->serving_jobs ? b->serving_rtt_s_sum / b->serving_jobs : 0)},
        {"tb_moved_added", t->tb_in + t->tb_out - b->tb_in - b->tb_out}};
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
        cJSON_AddNumberToObject(sv, w[i].name, w[i].value);
    return root;
}

/* a copy of item's members after "table" and "policy" */
cJSON *hubs_csv_row(const char *table, const char *policy, const cJSON *item)
{
    cJSON *r = cJSON_CreateObject();
    if (!r)
        return NULL;
    cJSON_AddStringToObject(r, "table", table);
    cJSON_AddStringToObject(r, "policy", policy);
    for (const cJSON *m = item ? item->child : NULL; m; m = m->next)
        cJSON_AddItemToObject(r, m->string, cJSON_Duplicate(m, 1));
    return r;
}

cJSON *hubs_csv(const scn_scenario *s, const hubs_run *run, const hubs_run *base)
{
    cJSON *root = hubs_json(s, run, base);
    cJSON *rows = root ? cJSON_AddArrayToObject(root, "rows") : NULL;
    if (!rows) {
        cJSON_Delete(root);
        return NULL;
    }
    static const char *const tables[] = {"run", "baseline"};
    for (size_t t = 0; t < 2; t++) {
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(root, tables[t]);
        const char *policy = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "policy"));
        const cJSON *hubs = cJSON_GetObjectItemCaseSensitive(r, "hubs");
        for (const cJSON *h = hubs ? hubs->child : NULL; h; h = h->next)
            cJSON_AddItemToArray(rows, hubs_csv_row(tables[t], policy, h));
        cJSON_AddItemToArray(rows, hubs_csv_row(tables[t], policy,
                                           cJSON_GetObjectItemCaseSensitive(r, "total")));
    }
    cJSON_AddItemToArray(rows, hubs_csv_row("saving", hubs_policy_name(run->cfg.policy),
                                       cJSON_GetObjectItemCaseSensitive(root, "saving")));
    for (size_t t = 0; run->cfg.backbone && t < 2; t++) { /* after the saving: without a
                                                              backbone nothing changes */
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(root, tables[t]);
        hubs_backbone_csv(rows, tables[t],
                          cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "policy")),
                          cJSON_GetObjectItemCaseSensitive(r, "backbone"));
    }
    return root;
}

typedef struct hub_row {
    uint32_t id, gpus, jobs;
    double gpu_h, utilisation, wait_p50_s, wait_p90_s, wait_p99_s, it_energy_j,
        facility_energy_j, cost, co2_kg, water_l, tb_moved, data_cost, slo_job_h;
    uint32_t slo_jobs;
    double water_limit_l, water_year_max_l;
} hub_row;

typedef struct job_row {
    uint32_t id, hub, origin, gpus;
    int32_t kind, slo_violation;
    double arrival_s, defer_s, submit_s, start_s, end_s, back_done_s, duration_s, dataset_tb,
        result_tb, rtt_s;
    uint32_t hub_gpus; /* the GPUs it took at its hub (a serving job's scaled by the speed) */
} job_row;

static const char *const hub_units[] = {"", "GPUs", "jobs", "GPU-h", "1", "s", "s", "s", "J",
                                        "J", "CNY", "kg", "L", "TB", "CNY", "job-h", "jobs",
                                        "L", "L"};
static const char *const job_units[] = {"", "", "", "GPUs", "", "", "s", "s", "s", "s", "s",
                                        "s", "s", "TB", "TB", "s", "GPUs"};

#define F(T, name, type) H5Tinsert(t, #name, HOFFSET(T, name), type)

static int put_hubs(hid_t g, const hubs_run *run)
{
    hub_row *rows = calloc(run->cfg.n_hubs, sizeof *rows);
    if (!rows)
        return -1;
    for (unsigned h = 0; h < run->cfg.n_hubs; h++) {
        const hubs_hub_result *o = &run->r.hub[h];
        rows[h] = (hub_row){h, run->cfg.hubs[h].gpus, o->jobs, o->gpu_s / 3600, o->utilisation,
                            o->wait_s.q[0], o->wait_s.q[1], o->wait_s.q[2], o->it_energy_j,
                            o->facility_energy_j, o->energy_cost + o->data_cost, o->co2_kg,
                            o->water_l, o->tb_in + o->tb_out, o->data_cost, o->slo_job_h,
                            o->slo_jobs, run->cfg.hubs[h].water_limit_l, run->water_year_l[h]};
    }
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(hub_row));
    F(hub_row, id, H5T_NATIVE_UINT32); F(hub_row, gpus, H5T_NATIVE_UINT32);
    F(hub_row, jobs, H5T_NATIVE_UINT32); F(hub_row, gpu_h, H5T_NATIVE_DOUBLE);
    F(hub_row, utilisation, H5T_NATIVE_DOUBLE); F(hub_row, wait_p50_s, H5T_NATIVE_DOUBLE);
    F(hub_row, wait_p90_s, H5T_NATIVE_DOUBLE); F(hub_row, wait_p99_s, H5T_NATIVE_DOUBLE);
    F(hub_row, it_energy_j, H5T_NATIVE_DOUBLE); F(hub_row, facility_energy_j, H5T_NATIVE_DOUBLE);
    F(hub_row, cost, H5T_NATIVE_DOUBLE); F(hub_row, co2_kg, H5T_NATIVE_DOUBLE);
    F(hub_row, water_l, H5T_NATIVE_DOUBLE); F(hub_row, tb_moved, H5T_NATIVE_DOUBLE);
    F(hub_row, data_cost, H5T_NATIVE_DOUBLE); F(hub_row, slo_job_h, H5T_NATIVE_DOUBLE);
    F(hub_row, slo_jobs, H5T_NATIVE_UINT32); F(hub_row, water_limit_l, H5T_NATIVE_DOUBLE);
    F(hub_row, water_year_max_l, H5T_NATIVE_DOUBLE);
    int rc = h5_put_table(g, "hubs", t, run->cfg.n_hubs, rows, hub_units,
                          sizeof hub_units / sizeof *hub_units,
                          "one row per hub (id: the order of the <hub> elements, names in the "
                          "group's hub_names attribute): GPUs, jobs, busy GPU-hours, "
                          "utilisation over the horizon, queue wait quantiles, IT and facility "
                          "energy, cost (energy + data), CO2, water, data moved and its cost, "
                          "serving jobs beyond their RTT bound and their job-hours, the water "
                          "limit a year (0: none) and the water of the fullest year (8,760 h) "
                          "of the run");
    H5Tclose(t);
    free(rows);
    return rc;
}

static int put_jobs(hid_t g, const hubs_run *run)
{
    const hubs_config *c = &run->cfg;
    job_row *rows = malloc((size_t)c->n_jobs * sizeof *rows);
    if (!rows)
        return -1;
    for (uint32_t i = 0; i < c->n_jobs; i++) {
        const hubs_job_spec *j = &c->jobs[i];
        const hubs_job *x = &run->r.jobs[i];
        rows[i] = (job_row){i, x->hub, j->origin, j->gpus, j->kind, x->slo_violation,
                            j->arrival_s, x->defer_s, x->submit_s, x->start_s, x->end_s,
                            x->back_done_s, j->duration_s, j->dataset_tb, j->result_tb,
                            x->rtt_s, hubs_job_gpus(&c->hubs[x->hub], j)};
    }
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(job_row));
    F(job_row, id, H5T_NATIVE_UINT32); F(job_row, hub, H5T_NATIVE_UINT32);
    F(job_row, origin, H5T_NATIVE_UINT32); F(job_row, gpus, H5T_NATIVE_UINT32);
    F(job_row, kind, H5T_NATIVE_INT32); F(job_row, slo_violation, H5T_NATIVE_INT32);
    F(job_row, arrival_s, H5T_NATIVE_DOUBLE); F(job_row, defer_s, H5T_NATIVE_DOUBLE);
    F(job_row, submit_s, H5T_NATIVE_DOUBLE); F(job_row, start_s, H5T_NATIVE_DOUBLE);
    F(job_row, end_s, H5T_NATIVE_DOUBLE); F(job_row, back_done_s, H5T_NATIVE_DOUBLE);
    F(job_row, duration_s, H5T_NATIVE_DOUBLE); F(job_row, dataset_tb, H5T_NATIVE_DOUBLE);
    F(job_row, result_tb, H5T_NATIVE_DOUBLE); F(job_row, rtt_s, H5T_NATIVE_DOUBLE);
    F(job_row, hub_gpus, H5T_NATIVE_UINT32);
    int rc = h5_put_table(g, "jobs", t, c->n_jobs, rows, job_units,
                          sizeof job_units / sizeof *job_units,
                          "one row per job in arrival order: its hub, origin (the group's "
                          "origin_names), GPUs, kind (0 training, 1 serving), beyond its RTT "
                          "bound (1), arrival, deferral, at the hub (dataset moved), start, "
                          "end, result back, duration, dataset and result sizes, RTT, the GPUs "
                          "it took at its hub (a serving job's scaled by the hub's speed)");
    H5Tclose(t);
    free(rows);
    return rc;
}

static const char *const bin_units[] = {"", "", "jobs", "s", "s", "GPU-h", "J", "J", "CNY",
                                        "CNY", "CNY", "kg", "L", "TB", "jobs"};

static int put_series(hid_t g, const hubs_run *run)
{
    uint32_t n = run->n_bins;
    size_t rows_n = (size_t)n * run->cfg.n_hubs;
    bin_row *rows = calloc(rows_n, sizeof *rows);
    if (!rows || !run->series) {
        free(rows);
        return -1;
    }
    for (unsigned h = 0; h < run->cfg.n_hubs; h++)
        for (uint32_t k = 0; k < n; k++)
            rows[(size_t)h * n + k] = bin_at(run, h, k);
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(bin_row));
    F(bin_row, bin, H5T_NATIVE_UINT32); F(bin_row, hub, H5T_NATIVE_UINT32);
    F(bin_row, jobs_started, H5T_NATIVE_UINT32); F(bin_row, t_start_s, H5T_NATIVE_DOUBLE);
    F(bin_row, t_end_s, H5T_NATIVE_DOUBLE); F(bin_row, busy_gpu_h, H5T_NATIVE_DOUBLE);
    F(bin_row, it_energy_j, H5T_NATIVE_DOUBLE); F(bin_row, facility_energy_j, H5T_NATIVE_DOUBLE);
    F(bin_row, energy_cost, H5T_NATIVE_DOUBLE); F(bin_row, data_cost, H5T_NATIVE_DOUBLE);
    F(bin_row, cost, H5T_NATIVE_DOUBLE); F(bin_row, co2_kg, H5T_NATIVE_DOUBLE);
    F(bin_row, water_l, H5T_NATIVE_DOUBLE); F(bin_row, tb_moved, H5T_NATIVE_DOUBLE);
    F(bin_row, queue_mean, H5T_NATIVE_DOUBLE);
    int rc = h5_put_table(g, "series", t, rows_n, rows, bin_units,
                          sizeof bin_units / sizeof *bin_units,
                          "per hub (hub-major) per bin of the horizon (730 h, a twelfth of "
                          "8,760 h, for a horizon of 60 days or more, else 24 h; the last bin "
                          "ends at the horizon): jobs started, bin start and end, busy GPU-h, IT "
                          "and facility energy, energy cost, data cost (datasets at their "
                          "transfer's start, results at the job's end), cost, CO2, water, TB "
                          "moved, the time-average number of waiting jobs; summed over the bins "
                          "each equals the hub's row of /hubs/hubs");
    H5Tclose(t);
    free(rows);
    return rc;
}

static double rtt_mean(const hubs_hub_result *o)
{
    return o->serving_jobs ? o->serving_rtt_s_sum / o->serving_jobs : 0;
}

/* the baseline's totals (and the run's mean serving RTT) as /hubs' attributes */
static int put_baseline(hid_t g, const hubs_run *run, const hubs_run *base)
{
    const hubs_hub_result *b = &base->r.total;
    double bin_s = hubs_series_bin_s(run->r.horizon_s);
    const struct { const char *name; double value; } v[] = {
        {"series_bin_s", bin_s}, {"serving_rtt_mean_s", rtt_mean(&run->r.total)},
        {"baseline_cost", b->energy_cost + b->data_cost}, {"baseline_energy_cost", b->energy_cost},
        {"baseline_data_cost", b->data_cost}, {"baseline_co2_kg", b->co2_kg},
        {"baseline_water_l", b->water_l}, {"baseline_it_energy_j", b->it_energy_j},
        {"baseline_facility_energy_j", b->facility_energy_j},
        {"baseline_serving_rtt_mean_s", rtt_mean(b)}, {"baseline_tb_moved", b->tb_in + b->tb_out},
        {"baseline_wait_p90_s", b->wait_s.q[1]}, {"baseline_gpu_h", b->gpu_s / 3600}};
    int rc = h5_attr_text(g, "baseline_policy", hubs_policy_name(base->cfg.policy));
    for (size_t i = 0; !rc && i < sizeof v / sizeof v[0]; i++)
        rc = h5_attr_scalar(g, v[i].name, H5T_NATIVE_DOUBLE, &v[i].value);
    char basis[HUBS_MAX * 34 + 64] = "";
    size_t used = 0;
    for (unsigned h = 0; h < run->cfg.n_hubs && used < sizeof basis; h++)
        if (run->co2_hourly[h])
            used += (size_t)snprintf(basis + used, sizeof basis - used, "%s%s",
                                     used ? ", " : "hourly carbon profile at ",
                                     run->cfg.hubs[h].name);
    if (!rc)
        rc = h5_attr_text(g, "co2_basis", used ? basis : "the flat grid factor at every hub "
                                                        "(no hourly carbon profile)");
    return rc;
}

int hubs_h5_write(outpath *op, const scn_scenario *s, const hubs_run *run, const hubs_run *base,
                  const char *command, sim_error *err)
{
    hid_t f = h5_create_file(op, err);
    if (f < 0)
        return SIM_ERR_IO;
    const char *failed = NULL, *names[HUBS_MAX], *origins[HUBS_MAX_ORIGINS];
    for (unsigned h = 0; h < run->cfg.n_hubs; h++)
        names[h] = run->cfg.hubs[h].name;
    for (unsigned k = 0; k < run->cfg.n_origins; k++)
        origins[k] = run->cfg.origin[k];
    hid_t g = h5_create_group(f, "hubs");
    if (g < 0)
        failed = "creating /hubs";
    else if (h5_attr_text(g, "policy", hubs_policy_name(run->cfg.policy)) ||
             h5_attr_texts(g, "hub_names", names, run->cfg.n_hubs) ||
             h5_attr_texts(g, "origin_names", origins, run->cfg.n_origins) ||
             h5_attr_scalar(g, "horizon_s", H5T_NATIVE_DOUBLE, &run->r.horizon_s))
        failed = "writing /hubs' attributes";
    else if (put_hubs(g, run))
        failed = "writing /hubs/hubs";
    else if (put_jobs(g, run))
        failed = "writing /hubs/jobs";
    else if (put_series(g, run))
        failed = "writing /hubs/series";
    else if (put_baseline(g, run, base))
        failed = "writing the baseline's attributes";
    else if (run->cfg.backbone && hubs_backbone_h5(g, run, base))
        failed = "writing /hubs/links and /hubs/transfers";
    if (g >= 0)
        H5Gclose(g);
    char digest[24];
    snprintf(digest, sizeof digest, "0x%016" PRIx64, run->r.total.digest);
    h5_root root = {HUBS_FORMAT_VERSION, s->seed, digest, run->r.total.events, s->name,
                    s->source};
    if (!failed && (h5_put_root(f, &root) || h5_attr_text(f, "command", command) ||
                    h5_attr_text(f, "kind", "hubs")))
        failed = "writing the root attributes";
    return h5_finish_file(op, f, failed, err);
}
