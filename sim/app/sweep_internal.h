/* sweep_internal.h - what the files of `dcsim sweep` share (sweep.c the
 * command, sweep_grid.c the points, sweep_store.c the HDF5 file, sweep_run.c
 * the threads, sweep_mpi.c the processes); not for other commands.
 *
 * Invariant: one struct sweep per command; results land in per-point and
 * per-(point, replica) slots, so whoever computed them, the file is the same.
 */
#ifndef DCSIM_APP_SWEEP_INTERNAL_H
#define DCSIM_APP_SWEEP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>
#ifdef DCSIM_HAVE_MPI
#include <mpi.h>
#endif

#include "cli.h"
#include "error.h"
#include "outpath.h"
#include "run.h"
#include "scenario.h"

#define MAX_GRIDS 16
#define MAX_PARAMS 64
#define MAX_POINTS 10000000u

/* ------------------------------------------------------------ the metrics */

/* per replica, in /sweep/replicas; per point, mean and ci95 in /sweep/points */
enum { M_TTT, M_ETTR, M_FAILURES, M_RESTARTS, M_REWORK, M_REWORK_GPU_H, M_RESTART_T,
       M_CKPT_T, M_CKPT_ABORTED, M_CHECKPOINTS, M_SPARE_WAIT, M_SLOW,
       /* at a <site> (NaN without one): docs/energy.md */
       M_IT_ENERGY, M_FACILITY_ENERGY, M_PUE, M_ENERGY_COST, M_CO2, N_METRICS };

/* per point, the same in every replica (from replica 0) */
enum { C_ITERATION, C_INTERVAL, C_MTBF, C_YOUNG, C_DALY, N_CONSTS };

typedef struct sweep_rep {
    uint32_t point, replica;
    double m[N_METRICS];
    uint64_t event_digest;
} sweep_rep;

enum { ST_PENDING = 0, ST_DONE = 1, ST_FAILED = 2 };

/* ------------------------------------------------------------- the points */

typedef struct grid {
    char *given;           /* PATH=V1,V2 as given (owned) */
    char *spec;            /* the same, cut at the commas (owned) */
    char path[256];
    char **sets;           /* "PATH=Vj", one per value (owned) */
    const char **values;   /* into spec */
    size_t n;
} grid;

typedef struct point {
    const char **sets;     /* fixed --set, then the point's, then --seed (owned array) */
    size_t n_sets;
    size_t first_own, n_own; /* the point's own sets: sets[first_own ..] */
    const char *values[MAX_PARAMS]; /* text per parameter column, "" when not set */
    unsigned line;         /* --points: the file's line */
    scn_scenario scn;
    int loaded;
    run_plan plan;         /* prepared (step tier, finished campaign) before its replicas run */
    int planned;
} point;

typedef struct sweep {
    /* options */
    const char *scenario, *output, *points_file;
    cli_sets fixed;        /* --set */
    char seed_set[64];
    grid grids[MAX_GRIDS];
    size_t n_grids;
    unsigned replicas;
    double write_every_s;  /* --write-every, default 1 s */
    int quiet, force, help, csv, json;
    /* the points */
    char *points_text;     /* --points: the file, tokenised in place */
    char **owned_sets;     /* --points: per point set arrays own nothing else */
    const char *params[MAX_PARAMS];
    size_t n_params;
    point *pts;
    size_t n_points;
    char id[19];           /* sweep identity: "0x" + 16 hex digits */
    /* results (rank 0: all points; others: their own) */
    signed char *status;
    unsigned *reps_done;
    int *fail_rep;         /* lowest failing replica, or -1 */
    char **errtext;
    sweep_rep *reps;       /* n_points x replicas */
    double *consts;        /* n_points x N_CONSTS */
    size_t n_done, n_done_at_start;
    /* processes */
    int rank, size;
    int use_mpi;           /* MPI started (under a launcher, in an MPI build) */
    size_t *send_queue, n_queued, n_sent;
    void **send_bufs;
#ifdef DCSIM_HAVE_MPI
    MPI_Request *send_reqs;
#endif
    int ranks_finished;
    /* writing and progress */
    struct timespec start;
    double last_write_s, write_cost_s, last_progress_s;
    size_t written_done;
    int shown, stop, write_failed;
    sim_error write_err;
    outpath out;           /* rank 0: the file's temporary name and lock */
} sweep;

/* Point i belongs to rank i % size (with one process: every point). */
static inline int sweep_owns(const sweep *sw, size_t i)
{
    return (int)(i % (size_t)sw->size) == sw->rank;
}

/* ---- sweep.c: the command */

/* A usage error, printed by rank 0 only (every rank parses the same line);
 * returns CLI_EXIT_INPUT. fmt has one %s, for arg. */
int sweep_usage_error(const sweep *sw, const char *fmt, const char *arg);

/* ---- sweep_cluster.c: a job stream's points (compare_cluster.c runs them);
 * returns the exit status */
int sweep_cluster(sweep *sw);

/* ---- sweep_serve.c: a serving fleet's points (compare_serve.c runs them);
 * returns the exit status */
int sweep_serve(sweep *sw);

/* ---- sweep_hubs.c: a hubs scenario's points (compare_hubs.c runs them);
 * returns the exit status */
int sweep_hubs(sweep *sw);

/* ---- sweep_tier.c: what the tiers swept through compare's tables share */

/* The points as compare's cases (compare_cluster.h): point i labelled with
 * its PATH=VALUE sets ("point i" without), the scenario, its sets; the
 * labels in *labels (owned by the caller, as the cases). NULL when out of
 * memory (the error printed). */
struct compare_case;
struct compare_case *sweep_tier_cases(const sweep *sw, char **labels);

/* ---- sweep_grid.c: the points and their --set strings */

/* Parse one --grid PATH=V1,V2,... into g (its strings owned by g, freed by
 * the caller whatever happens); -1 when malformed or out of memory. */
int sweep_grid_parse(const char *arg, grid *g);

/* Build sw->pts, sw->params and sw->n_points from the --grid lists (their
 * cartesian product, the last varying fastest) or from the --points file.
 * Returns 0, CLI_EXIT_INPUT after printing why (rank 0), or EXIT_FAILURE
 * when out of memory. */
int sweep_points_from_grids(sweep *sw);
int sweep_points_from_file(sweep *sw);

/* Point i's own PATH=VALUE sets, blank-separated, into buf (truncated to size). */
void sweep_point_label(const sweep *sw, size_t i, char *buf, size_t size);

/* One line on stderr naming where point i's bad value came from: the --grid
 * and its value, or the --points file's line; else the loader's own line
 * and the point. */
void sweep_print_point_error(const sweep *sw, size_t i, const sim_error *e);

/* ---- sweep_store.c: the HDF5 sweep file (docs/trace-format.md) */

/* Fill sw->id from the dcsim version, the built-in schema and catalogs,
 * point 0's resolved scenario, every point's sets and the replicas. */
void sweep_identity(sweep *sw);

/* Rank 0: rewrite the whole file (sw->out's temporary, renamed over the
 * output). 0, or SIM_ERR_IO in *err with the temporary removed. */
int sweep_store_write(sweep *sw, sim_error *err);

/* Rank 0: take in the finished points of an existing file of the same
 * sweep (none without one, or with --force). 0, CLI_EXIT_INPUT after
 * printing why the file is not this sweep's, or EXIT_FAILURE. */
int sweep_store_load(sweep *sw);

/* ---- sweep_run.c: running the points on the threads */

/* Load (validate) this rank's unfinished points, and time the iteration on
 * the step tier where a point needs it. Returns the lowest failing point, or
 * n_points; its error in *bad_err. */
size_t sweep_load_points(sweep *sw, sim_error *bad_err);

/* Run every unfinished point of this rank under SIGINT/SIGTERM/SIGHUP
 * handlers (an interrupted point stays pending), gather the other ranks'
 * (rank 0) and write the file at the start, as points finish and at the end. */
void sweep_run(sweep *sw);

/* Rank 0: rewrite the file when points finished since the last write, at
 * most every --write-every (or ten times what a write costs), or now when
 * final; a failed write stops the sweep (sw->write_failed, sw->write_err). */
void sweep_maybe_write(sweep *sw, int final);

/* Rank 0 on a terminal without --quiet: the progress line on stderr
 * (cleared when final). */
void sweep_progress_show(sweep *sw, int final);

/* ---- sweep_mpi.c: processes (no-ops, or refusals, without DCSIM_HAVE_MPI) */

/* Before anything else: start MPI under a launcher (mpirun, srun) and set
 * sw->rank, sw->size, sw->use_mpi. Returns 0, or CLI_EXIT_INPUT after
 * printing why the processes would all write the same file. */
int sweep_mpi_start(sweep *sw);

/* At the end: every rank takes rank 0's *rc; MPI is finalized. */
void sweep_mpi_end(sweep *sw, int *rc);

/* Collective: rank 0's verdict on the file into *rc, and on success its
 * finished points into every rank's sw->status and sw->n_done. */
void sweep_mpi_share_start(sweep *sw, int *rc);

/* Collective: 1 when another rank holds the lowest bad point of all (it
 * reports it), 0 when none is bad or it is this rank's bad. */
int sweep_mpi_bad_elsewhere(const sweep *sw, size_t bad);

/* On the main thread only (MPI_THREAD_FUNNELED): ranks above 0 send the
 * points they finished, rank 0 takes in what arrived. */
void sweep_mpi_poll(sweep *sw);

/* After the loop: ranks above 0 send the rest and say so; rank 0 takes
 * everything in until every rank has. */
void sweep_mpi_finish(sweep *sw);

#endif
