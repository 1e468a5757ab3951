/* clustertrace.c - `dcsim cluster -o` (clustertrace.h). Object timestamps
 * are off: the same run gives the same bytes.
 */
#include "clustertrace.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>

#include "h5util.h"

#define CLUSTER_FORMAT_VERSION 1 /* the run trace's format_version: same root attributes */
#define CLUSTER_LAYOUT_VERSION "5" /* 2: isolated_run_s and run_s; 3: disruption; 4: elastic;
                                      5: interference_s and run_over_isolated */

typedef struct job_row {
    uint32_t id, gpus;
    double submit_s, start_s, end_s, wait_s, slowdown;
    uint32_t nodes, leaves, min_leaves;
    int32_t priority;
    double isolated_run_s, run_s;
    uint32_t preemptions, interruptions;
    double held_s, rework_s, checkpoint_s, restart_s, goodput;
    uint32_t min_gpus, resizes;
    double gpus_mean;
    double interference_s, run_over_isolated;
} job_row;

static const char *const job_units[] = {"-", "1", "s", "s", "s", "s", "1", "1",
                                        "1", "1", "-", "s", "s", "1", "1",
                                        "s", "s", "s", "s", "1", "1", "1", "1",
                                        "s", "1"};
static const char *const series_units[] = {"s", "1", "1", "W", "W"};

static int put_jobs(hid_t g, const cluster_result *r)
{
    job_row *rows = calloc(r->n_jobs ? r->n_jobs : 1, sizeof *rows);
    if (!rows)
        return -1;
    for (uint32_t i = 0; i < r->n_jobs; i++) {
        const cluster_job *j = &r->jobs[i];
        double run = j->end_s - j->start_s, wait = j->start_s - j->spec.submit_s;
        int is_disrupted = j->preemptions || j->interruptions;
        double held = j->held_s > 0 ? j->held_s : run; /* 0 without disruption */
        rows[i] = (job_row){i, j->spec.gpus, j->spec.submit_s, j->start_s, j->end_s, wait,
                            is_disrupted ? (j->end_s - j->spec.submit_s) / j->spec.duration_s
                                         : (wait + run) / run,
                            j->nodes, j->leaves, j->min_leaves, j->spec.priority,
                            j->spec.duration_s, run, j->preemptions, j->interruptions, held,
                            j->rework_s, j->ckpt_s, j->restart_s,
                            j->gpus_mean == j->spec.gpus
                                ? j->spec.duration_s / held
                                : j->spec.duration_s * j->spec.gpus / (held * j->gpus_mean),
                            j->min_gpus, j->resizes, j->gpus_mean, j->interf_s,
                            j->stretch};
    }
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(job_row));
    H5Tinsert(t, "id", HOFFSET(job_row, id), H5T_NATIVE_UINT32);
    H5Tinsert(t, "gpus", HOFFSET(job_row, gpus), H5T_NATIVE_UINT32);
    H5Tinsert(t, "submit_s", HOFFSET(job_row, submit_s), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "start_s", HOFFSET(job_row, start_s), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "end_s", HOFFSET(job_row, end_s), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "wait_s", HOFFSET(job_row, wait_s), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "slowdown", HOFFSET(job_row, slowdown), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "nodes", HOFFSET(job_row, nodes), H5T_NATIVE_UINT32);
    H5Tinsert(t, "leaves", HOFFSET(job_row, leaves), H5T_NATIVE_UINT32);
    H5Tinsert(t, "min_leaves", HOFFSET(job_row, min_leaves), H5T_NATIVE_UINT32);
    H5Tinsert(t, "priority", HOFFSET(job_row, priority), H5T_NATIVE_INT32);
    H5Tinsert(t, "isolated_run_s", HOFFSET(job_row, isolated_run_s), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "run_s", HOFFSET(job_row, run_s), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "preemptions", HOFFSET(job_row, preemptions), H5T_NATIVE_UINT32);
    H5Tinsert(t, "interruptions", HOFFSET(job_row, interruptions), H5T_NATIVE_UINT32);
    H5Tinsert(t, "held_s", HOFFSET(job_row, held_s), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "rework_s", HOFFSET(job_row, rework_s), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "checkpoint_s", HOFFSET(job_row, checkpoint_s), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "restart_s", HOFFSET(job_row, restart_s), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "goodput", HOFFSET(job_row, goodput), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "min_gpus", HOFFSET(job_row, min_gpus), H5T_NATIVE_UINT32);
    H5Tinsert(t, "resizes", HOFFSET(job_row, resizes), H5T_NATIVE_UINT32);
    H5Tinsert(t, "gpus_mean", HOFFSET(job_row, gpus_mean), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "interference_s", HOFFSET(job_row, interference_s), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "run_over_isolated", HOFFSET(job_row, run_over_isolated), H5T_NATIVE_DOUBLE);
    int rc = h5_put_table(g, "jobs", t, r->n_jobs, rows, job_units,
                       sizeof job_units / sizeof *job_units,
                       "one row per job in arrival order: GPUs, submit, start and end times, "
                       "wait = start - submit, slowdown = (wait + run) / run, the nodes and "
                       "leaves it spans and the fewest leaves that hold it, its priority, its "
                       "isolated run time (the stated duration) and its run time (end - start; "
                       "longer with interference on a <fabric>); its evictions and "
                       "interruptions, the time it held its GPUs and of that the lost work, "
                       "checkpoint writes and restarts, and its goodput = duration x gpus / "
                       "GPU-s held; elastic jobs (docs/cluster.md): its min GPUs (0: rigid), "
                       "its resizes and the time-weighted mean of the GPUs it held; with a "
                       "<fabric> the time it lost to interference and its run / isolated run "
                       "(docs/cluster.md \"Interference with disruption\")");
    H5Tclose(t);
    free(rows);
    return rc;
}

static int put_series(hid_t g, const cluster_energy *ce)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(cluster_row));
    H5Tinsert(t, "t_s", HOFFSET(cluster_row, t_s), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "busy_gpus", HOFFSET(cluster_row, busy_gpus), H5T_NATIVE_UINT32);
    H5Tinsert(t, "queue", HOFFSET(cluster_row, queue), H5T_NATIVE_UINT32);
    H5Tinsert(t, "it_power_w", HOFFSET(cluster_row, it_w), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "facility_power_w", HOFFSET(cluster_row, facility_w), H5T_NATIVE_DOUBLE);
    int rc = h5_put_table(g, "series", t, ce->n_rows, ce->rows, series_units,
                       sizeof series_units / sizeof *series_units,
                       "a step function: each row holds from its t_s to the next row's (the "
                       "last: to /cluster end_s); busy GPUs, queued jobs, IT power and facility "
                       "power (IT x the hour's PUE; 0 without a <site>); with a site the rows "
                       "split at whole hours. The sum of it_power_w x duration is it_energy_j");
    H5Tclose(t);
    return rc;
}

static int put_attrs(hid_t g, const scn_scenario *s, const cluster_result *r,
                     const cluster_energy *ce)
{
    const cluster_config *c = &s->cluster_jobs;
    int has_site = ce->has_site;
    int rc = h5_attr_text(g, "scheduler", cluster_sched_name(c->sched)) ||
             h5_attr_text(g, "placement", cluster_placer_name(c->placer)) ||
             h5_attr_scalar(g, "gpus", H5T_NATIVE_UINT32, &c->gpus) ||
             h5_attr_scalar(g, "gpus_per_node", H5T_NATIVE_UINT32, &c->node_gpus) ||
             h5_attr_scalar(g, "gpus_per_leaf", H5T_NATIVE_UINT32, &c->leaf_gpus) ||
             h5_attr_scalar(g, "end_s", H5T_NATIVE_DOUBLE, &r->end_s) ||
             h5_attr_scalar(g, "busy_gpu_s", H5T_NATIVE_DOUBLE, &r->busy_gpu_s) ||
             h5_attr_scalar(g, "utilisation", H5T_NATIVE_DOUBLE, &r->utilisation) ||
             h5_attr_scalar(g, "it_energy_j", H5T_NATIVE_DOUBLE, &ce->it_energy_j) ||
             h5_attr_scalar(g, "compute_fraction", H5T_NATIVE_DOUBLE,
                            &ce->power.compute_frac) ||
             h5_attr_scalar(g, "has_site", H5T_NATIVE_INT32, &has_site) ||
             h5_attr_text(g, "power_basis", ce->basis) ||
             h5_attr_text(g, "layout_version", CLUSTER_LAYOUT_VERSION);
    if (!rc && has_site)
        rc = h5_attr_text(g, "site", s->site.info.name) ||
             h5_attr_scalar(g, "facility_energy_j", H5T_NATIVE_DOUBLE,
                            &ce->e.facility_energy_j) ||
             h5_attr_scalar(g, "pue", H5T_NATIVE_DOUBLE, &ce->e.pue) ||
             h5_attr_scalar(g, "cost", H5T_NATIVE_DOUBLE, &ce->e.cost) ||
             h5_attr_scalar(g, "co2_kg", H5T_NATIVE_DOUBLE, &ce->e.co2_kg);
    return rc;
}

static int put_root(hid_t f, const scn_scenario *s, const cluster_result *r, const char *command)
{
    int32_t format = CLUSTER_FORMAT_VERSION;
    char digest[24];
    snprintf(digest, sizeof digest, "0x%016" PRIx64, r->digest);
    h5_root root = {format, s->seed, digest, r->events, s->name, s->source};
    return h5_put_root(f, &root) || h5_attr_text(f, "command", command) ||
           h5_attr_text(f, "kind", "cluster");
}

int cluster_trace_write(outpath *op, const scn_scenario *s, const cluster_result *r,
                        const cluster_energy *ce, const char *command, sim_error *err)
{
    hid_t f = h5_create_file(op, err);
    if (f < 0)
        return SIM_ERR_IO;
    const char *failed = NULL;
    hid_t g = h5_create_group(f, "cluster");
    if (g < 0)
        failed = "creating /cluster";
    else if (put_attrs(g, s, r, ce))
        failed = "writing /cluster's attributes";
    else if (put_jobs(g, r))
        failed = "writing /cluster/jobs";
    else if (put_series(g, ce))
        failed = "writing /cluster/series";
    if (g >= 0)
        H5Gclose(g);
    if (!failed && put_root(f, s, r, command))
        failed = "writing the root attributes";
    return h5_finish_file(op, f, failed, err);
}
