/* sweep_run.c - running the points of `dcsim sweep` on this process's
 * threads: loading (validating) them, every (point, replica) as one OpenMP
 * work item, recording results, the progress line and the periodic rewrite
 * of the file; SIGINT, SIGTERM and SIGHUP stop it cleanly.
 *
 * Invariant: replica r of every point runs with campaign_replica_seed(seed,
 * r) into its own slot, whatever thread computed it; results are recorded,
 * and the file written, inside one critical section.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <omp.h>

#include "campaign.h"
#include "energyrun.h"
#include "power.h"
#include "run.h"
#include "sweep_internal.h"

static volatile sig_atomic_t sweep_interrupted;

static void sweep_on_signal(int sig)
{
    (void)sig;
    sweep_interrupted = 1;
}

/* ------------------------------------------------------- the results */

static void rep_of(const campaign_result *r, uint64_t gpus, const energy_result *energy,
                   sweep_rep *out)
{
    double *m = out->m;
    m[M_IT_ENERGY] = energy ? energy->it_energy_j : NAN;
    m[M_FACILITY_ENERGY] = energy ? energy->facility_energy_j : NAN;
    m[M_PUE] = energy ? energy->pue : NAN;
    m[M_ENERGY_COST] = energy ? energy->cost : NAN;
    m[M_CO2] = energy ? energy->co2_kg : NAN;
    m[M_TTT] = r->time_to_train_s;
    m[M_ETTR] = r->ettr_frac;
    m[M_FAILURES] = (double)r->failures;
    m[M_RESTARTS] = (double)r->restarts;
    m[M_REWORK] = r->rework_s;
    m[M_REWORK_GPU_H] = r->rework_s * (double)gpus / 3600.0;
    m[M_RESTART_T] = r->restart_time_s;
    m[M_CKPT_T] = r->checkpoint_time_s;
    m[M_CKPT_ABORTED] = r->checkpoint_aborted_s;
    m[M_CHECKPOINTS] = (double)r->checkpoints;
    m[M_SPARE_WAIT] = r->spare_wait_s;
    m[M_SLOW] = r->persist_slowdown_s + r->elastic_slowdown_s + r->straggler_slowdown_s;
    out->event_digest = r->event_digest;
}

static double now_s(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

/* ------------------------------------------------------- loading */

/* Load (validate) this rank's unfinished points in parallel, then time the
 * iteration on the step tier where a point needs it (one after another: the
 * step tier is not shared between threads). Returns the lowest failing
 * point, or n_points; its error in *bad_err. */
size_t sweep_load_points(sweep *sw, sim_error *bad_err)
{
    size_t bad = sw->n_points;
    long long n = (long long)sw->n_points;
#pragma omp parallel for schedule(dynamic, 1)
    for (long long k = 0; k < n; k++) {
        size_t i = (size_t)k;
        point *p = &sw->pts[i];
        if (p->loaded || !sweep_owns(sw, i) || sw->status[i] != ST_PENDING)
            continue;
        sim_error e;
        sim_error_clear(&e);
        if (scn_load(sw->scenario, p->sets, p->n_sets, &p->scn, &e) == 0) {
            p->loaded = 1;
            free(p->scn.resolved_xml); /* only point 0's is kept (identity, /sweep/scenario) */
            p->scn.resolved_xml = NULL;
            continue;
        }
#pragma omp critical(sweep_load)
        if (i < bad) {
            bad = i;
            *bad_err = e;
        }
    }
    for (size_t i = 0; i < bad; i++) {
        point *p = &sw->pts[i];
        if (!p->loaded || !sweep_owns(sw, i) || sw->status[i] != ST_PENDING || p->planned)
            continue;
        sim_error e;
        sim_error_clear(&e);
        /* the resource guard ran once, on point 0 (sweep.c) */
        int rc = run_plan_prepare(&p->scn, 0, RUN_PLAN_ENERGY | RUN_PLAN_GUARD_DONE, &p->plan, &e);
        p->planned = 1;
        if (rc) {
            bad = i;
            *bad_err = e;
        }
    }
    return bad;
}

/* ------------------------------------------------------- progress and writing */

void sweep_progress_show(sweep *sw, int final)
{
    if (sw->rank != 0 || sw->quiet || !isatty(STDERR_FILENO))
        return;
    double t = now_s(&sw->start);
    if (final) {
        if (sw->shown)
            fprintf(stderr, "\r\033[K");
        sw->shown = 0;
        return;
    }
    if (t < 0.5 || t - sw->last_progress_s < 0.2)
        return;
    sw->last_progress_s = t;
    size_t now = sw->n_done - sw->n_done_at_start, left = sw->n_points - sw->n_done;
    if (now)
        fprintf(stderr, "\r\033[Kpoints %zu/%zu  (%.1f s, ETA %.0f s)", sw->n_done,
                sw->n_points, t, t / (double)now * (double)left);
    else
        fprintf(stderr, "\r\033[Kpoints %zu/%zu  (%.1f s)", sw->n_done, sw->n_points, t);
    sw->shown = 1;
}

/* Rank 0: rewrite the file when points finished since the last write, at
 * most every --write-every (or ten times what a write costs, for huge
 * files), or now when final. */
void sweep_maybe_write(sweep *sw, int final)
{
    if (sw->rank != 0 || sw->write_failed)
        return;
    double t = now_s(&sw->start);
    double every = sw->write_cost_s * 10 > sw->write_every_s ? sw->write_cost_s * 10
                                                             : sw->write_every_s;
    if (!final && (sw->n_done == sw->written_done || t - sw->last_write_s < every))
        return;
    sim_error_clear(&sw->write_err);
    size_t done = sw->n_done;
    if (sweep_store_write(sw, &sw->write_err)) {
        sw->write_failed = 1;
#pragma omp atomic write
        sw->stop = 1;
        return;
    }
    sw->written_done = done;
    sw->last_write_s = now_s(&sw->start);
    sw->write_cost_s = sw->last_write_s - t;
}

/* ------------------------------------------------------- running */

static void finish_point(sweep *sw, size_t i)
{
    sw->status[i] = sw->fail_rep[i] >= 0 ? ST_FAILED : ST_DONE;
    sw->n_done++;
    if (sw->rank > 0)
        sw->send_queue[sw->n_queued++] = i;
}

static void record(sweep *sw, size_t i, unsigned r, int rc, const campaign_result *res,
                   const energy_result *energy, const sim_error *e)
{
    if (rc == SIM_ERR_INTERRUPTED)
        return; /* the point stays pending: a rerun does it again */
    if (rc && (sw->fail_rep[i] < 0 || (int)r < sw->fail_rep[i])) {
        char line[2048];
        char *text = malloc(2100);
        if (text)
            snprintf(text, 2100, "replica %u: %s", r, sim_error_format(e, line, sizeof line));
        free(sw->errtext[i]);
        sw->errtext[i] = text;
        sw->fail_rep[i] = (int)r;
    } else if (!rc) {
        sweep_rep *x = &sw->reps[i * sw->replicas + r];
        rep_of(res, sw->pts[i].scn.campaign.gpu_count, energy, x);
        x->point = (uint32_t)i;
        x->replica = r;
        if (r == 0) {
            double *c = sw->consts + i * N_CONSTS;
            c[C_ITERATION] = res->iteration_time_s;
            c[C_INTERVAL] = res->checkpoint_interval_s;
            c[C_MTBF] = res->cluster_mtbf_s;
            c[C_YOUNG] = res->young_interval_s;
            c[C_DALY] = res->daly_interval_s;
        }
    }
    if (++sw->reps_done[i] == sw->replicas)
        finish_point(sw, i);
}

static int poll_interrupt(void *ctx, double frac, double sim_s)
{
    (void)ctx;
    (void)frac;
    (void)sim_s;
    return sweep_interrupted != 0;
}

/* Every (point, replica) of this rank's unfinished points, dynamically
 * over the threads; each result lands in its own slot. */
static void run_points(sweep *sw)
{
    size_t n_mine = 0;
    for (size_t i = 0; i < sw->n_points; i++)
        n_mine += sweep_owns(sw, i) && sw->status[i] == ST_PENDING;
    size_t *mine = malloc((n_mine ? n_mine : 1) * sizeof *mine);
    if (!mine) {
        sw->stop = 1;
        return;
    }
    n_mine = 0;
    for (size_t i = 0; i < sw->n_points; i++)
        if (sweep_owns(sw, i) && sw->status[i] == ST_PENDING)
            mine[n_mine++] = i;
    long long n_items = (long long)n_mine * sw->replicas;
#pragma omp parallel for schedule(dynamic, 1)
    for (long long it = 0; it < n_items; it++) {
        int halt;
#pragma omp atomic read
        halt = sw->stop;
        if (halt || sweep_interrupted)
            continue;
        size_t i = mine[it / sw->replicas];
        unsigned r = (unsigned)(it % sw->replicas);
        campaign_config c = sw->pts[i].plan.campaign;
        c.seed = campaign_replica_seed(c.seed, r);
        sim_error e;
        sim_error_clear(&e);
        /* at a <site>: energy, cost and CO2 of this replica's timeline */
        run_outcome out;
        int rc = run_execute(&sw->pts[i].plan, &c, NULL, poll_interrupt, NULL, &out, &e);
#pragma omp critical(sweep_results)
        {
            record(sw, i, r, rc, &out.result, out.has_energy ? &out.energy.result : NULL, &e);
            if (omp_get_thread_num() == 0)
                sweep_mpi_poll(sw);
            sweep_maybe_write(sw, 0);
            sweep_progress_show(sw, 0);
        }
        run_outcome_free(&out);
    }
    free(mine);
}

void sweep_run(sweep *sw)
{
    struct sigaction sa, old_int, old_term, old_hup;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = sweep_on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sigaction(SIGHUP, &sa, &old_hup); /* a closed terminal: stop as for SIGTERM */
    clock_gettime(CLOCK_MONOTONIC, &sw->start);
    sweep_maybe_write(sw, 1); /* the file exists, complete, from the start */
    if (sw->n_done < sw->n_points)
        run_points(sw);
    sweep_mpi_finish(sw);
    sweep_mpi_poll(sw);
    sweep_maybe_write(sw, 1);
    sweep_progress_show(sw, 1);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
}
