/* cluster.h - the datacenter as a cluster: a stream of jobs, one scheduler,
 * gang placement on a shared pool of GPUs, on the event engine.
 *
 * Jobs arrive (Poisson with sizes and durations drawn from the scenario's
 * distributions, or a trace of submit time, GPUs, duration, priority). Each
 * job asks for n GPUs for d seconds (its run time alone on the cluster: the
 * stated duration). A job starts only with all its n GPUs (gang); it holds
 * them for exactly d; nothing preempts it.
 *
 * The queue is ordered by priority (higher first), then submit time, then
 * arrival order. A scheduling pass runs after every instant at which a job
 * arrives or ends (after all the events of that instant). The policy
 * (cluster_sched.c, one line per policy) picks which queued jobs start:
 *   fifo           the head starts while it fits; nothing passes it;
 *   easy-backfill  as fifo, then the head's reservation (shadow time T_s:
 *                  the earliest time enough GPUs are free if running jobs
 *                  end at start + d) and the extra GPUs free then beyond the
 *                  head's; a later job j starts now if n_j <= free and
 *                  (now + d_j <= T_s or n_j <= extra), extra -= n_j when it
 *                  ends after T_s (Lifka 1995; Mu'alem & Feitelson 2001).
 *                  With exact durations the head never starts after T_s
 *                  (unless a job of higher priority arrives ahead of it).
 * Placement (cluster_place.c, one line per policy) picks which free GPUs:
 *   first-fit      the lowest-numbered free GPUs;
 *   topology       packing: a job of at most a node's GPUs goes to the
 *                  node with the fewest free GPUs that holds it; a larger
 *                  one to the fullest leaf that holds it, else the fullest
 *                  SU, else the cluster; inside that unit whole free nodes
 *                  first, from the leaves with the most free GPUs, then the
 *                  rest best-fit.
 * GPU g sits in node g / node_gpus, leaf g / leaf_gpus, SU g / su_gpus.
 *
 * Fragmentation: per job the leaves (and nodes, SUs) it spans against the
 * least possible, ceil(n / leaf_gpus). Without a pacer a job runs exactly its
 * stated duration. With one (cluster_pacer; cluster_interf.h times the
 * running jobs' collectives together on a fabric) a job's stated duration is
 * its isolated run time: its remaining isolated work w falls at pace p =
 * isolated iteration time / iteration time now (0 < p <= 1), re-timed at the
 * end of every instant at which a job started or ended:
 *   run = integral of dt such that integral of p(t) dt = d
 * (piecewise constant p; a job whose pace does not change keeps its end).
 *
 * Outputs: per-job wait (start - submit), run, slowdown (wait + run) / run;
 * utilisation busy GPU-s / (GPUs x T), T the last job's end; the time-average
 * queue length; wait and slowdown at P50/P90/P99 (nearest rank). busy + idle
 * = GPUs x T, idle integrated separately from the free-GPU count.
 *
 * Elastic jobs (cluster_elastic.c; docs/cluster.md "Elastic jobs"): with
 * config elastic, a job with a min below its n starts on min(free, n) >= min
 * GPUs, works at g / n of its rate on g, grows after a pass within the
 * head's reservation, shrinks before evictions and off failed GPUs; each
 * resize costs the checkpoint restart time.
 *
 * Random streams: GSL mt19937 from the scenario seed, one for arrival gaps,
 * one for sizes, one for durations (a fourth for the elastic draw); the
 * simulation is sequential.
 */
#ifndef DCSIM_MODELS_CLUSTER_H
#define DCSIM_MODELS_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define CLUSTER_NONE UINT32_MAX
#define CLUSTER_MAX_SIZES 64
#define CLUSTER_MAX_JOBS 10000000u
#define CLUSTER_MAX_GPUS (1u << 24)
/* The shortest job: 1 s. A drawn duration below it (a lognormal's far tail)
 * is taken as 1 s, a stated one is refused: shorter, end - start would round
 * to nothing at a month's simulated times and the slowdown (wait + run) /
 * run would not be a number (docs/cluster.md). */
#define CLUSTER_MIN_DURATION_S 1.0

enum cluster_dur_dist { CLUSTER_DUR_FIXED = 0, CLUSTER_DUR_UNIFORM, CLUSTER_DUR_LOGNORMAL,
                        CLUSTER_DUR_COUNT };

/* one job as submitted */
typedef struct cluster_job_spec {
    double submit_s;
    uint32_t gpus;
    double duration_s;  /* run time alone (> 0) */
    int32_t priority;   /* higher first; 0 when not given */
} cluster_job_spec;

/* a duration distribution: fixed a; uniform on [a, b]; lognormal with
 * median a and shape sigma b; clamped to at most max (0: no cap) */
typedef struct cluster_duration {
    int dist; /* enum cluster_dur_dist */
    double a_s, b, max_s;
} cluster_duration;

/* the generated stream: Poisson arrivals at rate_per_s until window_s or
 * max_jobs (whichever first; max_jobs 0: no count cap), sizes from a
 * discrete table with weights, durations from dur */
typedef struct cluster_stream {
    double rate_per_s;
    double window_s;
    uint32_t max_jobs;
    unsigned n_sizes;
    uint32_t size_gpus[CLUSTER_MAX_SIZES];
    double size_weight[CLUSTER_MAX_SIZES];
    cluster_duration dur;
    /* elastic jobs: each drawn job is elastic with probability elastic_share
     * (its own stream; 0: none, no draw), its min GPUs ceil(elastic_min_frac x
     * gpus), at least 1; a job of 1 GPU stays rigid */
    double elastic_share, elastic_min_frac;
} cluster_stream;

typedef struct cluster_sched cluster_sched;  /* cluster_sched.c: the policy table */
typedef struct cluster_placer cluster_placer; /* cluster_place.c: the placement table */
const cluster_sched *cluster_sched_find(const char *name);
const char *cluster_sched_name(const cluster_sched *p);
const char *cluster_sched_names(void);  /* "fifo, easy-backfill" */
const cluster_placer *cluster_placer_find(const char *name);
const char *cluster_placer_name(const cluster_placer *p);
const char *cluster_placer_names(void); /* "first-fit, topology" */

/* Called at every job start with the GPUs it was given (ids < gpus, n of
 * them) and at every end (gpus NULL); for checks. */
typedef void (*cluster_watch_fn)(void *ctx, uint32_t job, double now_s, const uint32_t *gpus,
                                 uint32_t n);

/* Interference (docs/cluster.md "Interference"): told of every start (the
 * job's GPUs, sorted) and end; asked, once per instant at which the running
 * set changed (now_s), for the running jobs' paces (n may be 0: nothing
 * runs from now on). pace fills p[k] in (0, 1] for
 * ids[k] (k < n): isolated iteration time / iteration time now. start and
 * pace return 0, or a sim_error code with err filled (the run stops and
 * cluster_simulate returns it). */
typedef struct cluster_pacer {
    void *ctx;
    int (*start)(void *ctx, uint32_t id, const cluster_job_spec *spec, const uint32_t *gpus,
                 uint32_t n, sim_error *err);
    void (*end)(void *ctx, uint32_t id);
    int (*pace)(void *ctx, double now_s, const uint32_t *ids, uint32_t n, double *p,
                sim_error *err);
} cluster_pacer;

/* Checkpoints (docs/cluster.md "Preemption, maintenance and failures"): a
 * running job's work is saved every interval_s of progress (work done is
 * rounded down to whole intervals when it is interrupted); an evicted job
 * first writes a checkpoint for write_s on its GPUs; a job that starts
 * again pays restart_s on its GPUs before it works. */
typedef struct cluster_ckpt {
    double interval_s, write_s, restart_s;
} cluster_ckpt;

/* a maintenance window: GPUs [gpu0, gpu0 + gpus) out of service over
 * [start_s, start_s + duration_s) */
typedef struct cluster_reservation {
    double start_s, duration_s;
    uint32_t gpu0, gpus;
} cluster_reservation;

/* node failures shared by every job: Poisson at rate_per_node_s per node in
 * service, each down repair_s (fixed); spares hot-spare nodes outside the
 * pool replace a failed node at once when one is free; with swap_down, a
 * spare that becomes free (a repaired machine) also takes over the node
 * down longest to come (the last to fail) at once */
typedef struct cluster_failures {
    double rate_per_node_s;   /* 0: no failures */
    double repair_s;
    uint32_t spares;
    int swap_down;
} cluster_failures;

typedef struct cluster_config {
    uint32_t gpus;            /* the pool; a multiple of leaf_gpus */
    uint32_t node_gpus;       /* >= 1, divides leaf_gpus */
    uint32_t leaf_gpus;       /* a multiple of node_gpus, divides su_gpus */
    uint32_t su_gpus;         /* a multiple of leaf_gpus; may leave a last partial SU */
    const cluster_sched *sched;
    const cluster_placer *placer;
    /* the jobs: a trace (jobs, n_jobs; submit times non-decreasing), or when
     * jobs is NULL the stream */
    const cluster_job_spec *jobs;
    uint32_t n_jobs;
    /* per trace job its min GPUs (docs/cluster.md "Elastic jobs": the fewest
     * it runs on, 1 <= min < its GPUs elastic; 0 or its GPUs: rigid); NULL:
     * every job rigid. The stream's come from elastic_share. */
    const uint32_t *min_gpus;
    cluster_stream stream;
    uint64_t seed;
    cluster_watch_fn watch;   /* NULL: none */
    void *watch_ctx;
    const cluster_pacer *pacer; /* NULL: every job runs its stated duration */
    /* disruption (cluster_preempt.c, cluster_fail.c); all zero: none, the
     * run is exactly the one without these fields. With a pacer a segment's
     * work advances at its pace (cluster_pace.c). */
    int preempt;              /* 1: a blocked head evicts lower priorities */
    cluster_ckpt ckpt;        /* needed (interval > 0) with preempt or failures */
    const cluster_reservation *resv; /* n_resv maintenance windows */
    uint32_t n_resv;
    cluster_failures fail;
    /* 1: elastic jobs (spec.min_gpus) start on at least their min, grow
     * toward their GPUs, shrink before anyone is evicted and on failures
     * (cluster_elastic.c); 0: every job runs rigidly at its GPUs. With a
     * pacer on g GPUs it progresses at p g / GPUs, its ring over those g. */
    int elastic;
    /* sub-linear scaling (docs/cluster.md "Elastic jobs", rule 1): on g of
     * its G GPUs an elastic job progresses at (g / G)^e of its rate at G, so
     * at twice the GPUs it runs 2^e times as fast; in (0, 1]. 0 or 1:
     * linear, g / G (the rule before, bit for bit). */
    double elastic_exponent;
} cluster_config;

#define CLUSTER_QUANTILES 3 /* P50, P90, P99 */
extern const double cluster_quantile_p[CLUSTER_QUANTILES];

typedef struct cluster_stat {
    double mean, max;
    double q[CLUSTER_QUANTILES];
} cluster_stat;

/* The cluster's state from t_s until the next step's t_s (the last one's:
 * until the result's end_s). busy_nodes counts the nodes with at least one
 * busy GPU. Every change of a count is a step; one instant is one step (the
 * state after every event of that instant). */
typedef struct cluster_step {
    double t_s;
    uint32_t busy_gpus, busy_nodes, queue;
} cluster_step;

/* one job's outcome */
typedef struct cluster_job {
    cluster_job_spec spec;
    uint32_t min_gpus;        /* its min GPUs (0: rigid; cluster_config min_gpus) */
    double start_s, end_s;
    double reserve_s;         /* easy-backfill: its first reservation as the blocked
                                 head (-1: never the blocked head) */
    uint32_t nodes, leaves, sus; /* spanned */
    uint32_t min_nodes, min_leaves, min_sus;
    /* disruption (0 without): evictions and interruptions (failures,
     * maintenance), the time it held GPUs (every segment, checkpoint writes
     * and restarts included) and of that the lost work, the checkpoint
     * writes and the restarts; the lowest priority that evicted it */
    uint32_t preemptions, interruptions;
    double held_s, rework_s, ckpt_s, restart_s;
    int32_t evictor_priority_min;
    /* with a pacer: the time lost to interference (with disruption the sum
     * of dt (1 - p) over its working time; without, run - stated duration)
     * and its run / isolated run (result.stretch's per-job values) */
    double interf_s, stretch;
    /* elastic (config elastic with elastic jobs; else 0 and spec.gpus):
     * resizes, the time-weighted mean of the GPUs it held */
    uint32_t resizes;
    double gpus_mean;
} cluster_job;

typedef struct cluster_result {
    uint32_t n_jobs;
    cluster_job *jobs;        /* n_jobs, in arrival order; owned (cluster_result_free) */
    double end_s;             /* T: the last job's end */
    double busy_gpu_s;        /* sum of gpus x run */
    double idle_gpu_s;        /* the free-GPU count integrated over [0, T] */
    double capacity_gpu_s;    /* gpus x T */
    double utilisation;       /* busy / capacity */
    double queue_mean;        /* time-average queued jobs over [0, T] */
    uint32_t queue_max;
    cluster_stat wait_s, slowdown;
    uint32_t backfilled;      /* jobs started ahead of an earlier queued job */
    /* fragmentation */
    uint32_t jobs_over_leaves;   /* jobs on more leaves than the least */
    double excess_leaves_mean;   /* mean of leaves - min_leaves */
    double leaf_ratio_gpu_mean;  /* GPU-weighted mean of leaves / min_leaves */
    uint32_t jobs_over_nodes;
    /* interference (0 without a pacer): run / stated duration per job, and
     * sum of GPUs x (run - stated duration) */
    cluster_stat stretch;
    double interference_gpu_s;
    uint32_t retimes;         /* instants re-timed (pacer calls) */
    /* disruption (0 without): busy + idle + down = capacity; goodput = sum
     * of GPUs x stated duration / busy; job_goodput per job d / held */
    uint32_t preemptions, interruptions, failures, spare_swaps;
    uint32_t spare_takeovers; /* swap_down: spares that took over a node already down */
    uint32_t spare_refails;   /* swap_down: failures of a node running on a spare while
                                 one of its own machines was still in repair */
    double down_gpu_s, lost_gpu_s, rework_gpu_s, ckpt_gpu_s, restart_gpu_s;
    double goodput;
    cluster_stat job_goodput;
    /* elastic: jobs with a min below their GPUs, resizes, the GPU-s elastic
     * jobs held above their count at their first start */
    uint32_t elastic_jobs, resizes;
    double grown_gpu_s;
    uint64_t events;
    uint64_t digest;          /* the engine's event digest */
    cluster_step *steps;      /* n_steps, by time, the first at 0; owned */
    uint32_t n_steps;
} cluster_result;

/* Mean, maximum and the CLUSTER_QUANTILES nearest-rank quantiles (the
 * smallest value with at least p of the values at or below it) of v[n],
 * which it sorts; all 0 when n is 0. */
void cluster_stat_of(double *v, uint32_t n, cluster_stat *out);

/* Split one CSV line (len bytes, no newline) at commas outside double
 * quotes ("" inside quotes is one quote) into at most max fields, each
 * trimmed of blanks and unquoted, written into buf (at least len + 1
 * bytes); returns the count, or max + 1 when the line has more. */
int cluster_csv_split(const char *line, size_t len, char *buf, char **field, int max);

/* Check a configuration: 0, or SIM_ERR_INPUT with a one-line reason. */
int cluster_config_check(const cluster_config *c, sim_error *err);

/* The jobs the stream gives (or a copy of the trace) into a malloc'd array
 * (*out, *n); 0, or an error (bad configuration, out of memory). */
int cluster_jobs_make(const cluster_config *c, cluster_job_spec **out, uint32_t *n,
                      sim_error *err);

/* The min GPUs of the stream's n jobs spec (cluster_stream elastic_share:
 * its own stream, seed x 3 + 4, one draw per job) into min (n of them; all
 * 0 without a share). */
void cluster_jobs_min(const cluster_config *c, const cluster_job_spec *spec, uint32_t n,
                      uint32_t *min);

/* Simulate until every job has ended. 0, or an error code with err filled;
 * out->jobs is then NULL. */
int cluster_simulate(const cluster_config *c, cluster_result *out, sim_error *err);
void cluster_result_free(cluster_result *r);

/* Parse a job trace in CSV: a header naming the columns, then one job per
 * line; '#' lines and blank lines are skipped. Columns (any order, by
 * header name): submit_s, gpus, duration_s, and optionally priority.
 * text is len bytes named name in errors (file:line). Rows must have
 * non-decreasing submit times from 0 to ten years (3.2e8 s), 1 <= gpus <=
 * max_gpus, duration > 0.
 * 0 with *out (malloc'd) and *n, or SIM_ERR_INPUT / SIM_ERR_NOMEM. */
int cluster_trace_parse(const char *text, size_t len, const char *name, uint32_t max_gpus,
                        cluster_job_spec **out, uint32_t *n, sim_error *err);
/* the same with an optional min_gpus column (elastic jobs: 1 to the job's
 * gpus; empty: rigid): *min malloc'd (n of them, 0 rigid), NULL when the
 * header has no such column. Only here may a job ask for more GPUs than
 * max_gpus (an elastic one whose min_gpus fits); cluster_trace_parse, whose
 * caller never sees min_gpus, refuses such a row. */
int cluster_trace_parse_min(const char *text, size_t len, const char *name, uint32_t max_gpus,
                            cluster_job_spec **out, uint32_t **min, uint32_t *n,
                            sim_error *err);

/* Importing traces (cluster_import.c; docs/cluster.md "Importing published
 * traces"). A layout names, per role, the column that holds it ("" none):
 * the submit time, the GPUs (times an optional multiplier column, times
 * gpu_scale, rounded up: a share of a GPU holds a whole one), the duration
 * or else end - start, the priority, and the job a row belongs to (rows of
 * one job, e.g. its tasks, are merged: GPUs added, the earliest submit and
 * start, the latest end). Times are seconds or "YYYY-MM-DD HH:MM:SS"; the
 * jobs are sorted by submit time and shifted so that the first is at 0; a
 * trace spanning more than ten years (3.2e8 s) is refused at the line of
 * its last job.
 * Rows that cannot run are skipped and counted (stats): no GPUs, not
 * finished (no end and no duration), a duration under
 * CLUSTER_MIN_DURATION_S or over ten years, more GPUs than the cluster. A
 * field that is present but not a number (or a time) is an error at its
 * line. fixed_header: the column names of a file without a header line. */
enum cluster_trace_format { CLUSTER_TRACE_DCSIM = 0, CLUSTER_TRACE_HELIOS, CLUSTER_TRACE_PAI,
                            CLUSTER_TRACE_PHILLY, CLUSTER_TRACE_COLUMNS, CLUSTER_TRACE_FORMATS };
enum cluster_trace_role { CLUSTER_TCOL_SUBMIT = 0, CLUSTER_TCOL_GPUS, CLUSTER_TCOL_DURATION,
                          CLUSTER_TCOL_PRIORITY, CLUSTER_TCOL_START, CLUSTER_TCOL_END,
                          CLUSTER_TCOL_JOB, CLUSTER_TCOL_GPU_MULT, CLUSTER_TCOL_MIN_GPUS,
                          CLUSTER_TCOL_COUNT };

typedef struct cluster_trace_layout {
    int format;                          /* enum cluster_trace_format */
    char col[CLUSTER_TCOL_COUNT][48];    /* column name per role; "" none */
    double gpu_scale;                    /* > 0 */
    const char *const *fixed_header;     /* NULL-terminated, or NULL: the file's first line */
} cluster_trace_layout;

/* one job as read, before the skip rules (NAN: not given) */
typedef struct cluster_trace_row {
    double submit_s, start_s, end_s, duration_s;
    double gpus;
    int32_t priority;
    double min_gpus;   /* elastic: its min GPUs (NAN or 0: rigid) */
    int line;          /* of the file, for messages */
    int unfinished;    /* a task of the job has no end */
    size_t key;        /* the job key's offset (merging) */
} cluster_trace_row;

typedef struct cluster_trace_stats {
    uint32_t rows;         /* jobs read (after merging rows of one job) */
    uint32_t kept;
    uint32_t no_gpus, unfinished, bad_duration, too_large;
    double origin_s;       /* the first kept job's submit time, subtracted */
} cluster_trace_stats;

/* The layout of a named format (cluster_trace_format_names); 0, or -1 for
 * an unknown name. "philly" is JSON: the caller reads it into rows and calls
 * cluster_trace_finish; "columns" names nothing: the caller fills col. */
int cluster_trace_layout_init(cluster_trace_layout *l, const char *format);
const char *cluster_trace_format_name(int f);
const char *cluster_trace_format_names(void);

/* A time field: seconds, or a date-time "YYYY-MM-DD[ |T]HH:MM:SS[.frac]"
 * (proleptic Gregorian, years 1900-2200) as seconds since 1970-01-01; 0, or
 * -1 when it is neither. */
int cluster_trace_time(const char *text, double *out);

/* Read a CSV trace in a layout (the skip rules above) into *out (malloc'd,
 * submit order, first at 0) and *n; stats filled. 0, or SIM_ERR_INPUT (a bad
 * field at its line, a header without a needed column, no job left) /
 * SIM_ERR_NOMEM. */
int cluster_trace_import(const char *text, size_t len, const char *name,
                         const cluster_trace_layout *lay, uint32_t max_gpus,
                         cluster_job_spec **out, uint32_t *n, cluster_trace_stats *stats,
                         sim_error *err);

/* The skip rules, the sort and the shift on rows already read (rows is
 * reordered); for importers of other file formats. */
int cluster_trace_finish(cluster_trace_row *rows, uint32_t n, const char *name,
                         uint32_t max_gpus, cluster_job_spec **out, uint32_t *n_out,
                         cluster_trace_stats *stats, sim_error *err);
/* import and finish with the jobs' min GPUs (the min-GPUs column, times
 * gpu_scale rounded up; at most the job's GPUs) into *min (malloc'd; NULL
 * when no row gives one) */
int cluster_trace_import_min(const char *text, size_t len, const char *name,
                             const cluster_trace_layout *lay, uint32_t max_gpus,
                             cluster_job_spec **out, uint32_t **min, uint32_t *n,
                             cluster_trace_stats *stats, sim_error *err);
int cluster_trace_finish_min(cluster_trace_row *rows, uint32_t n, const char *name,
                             uint32_t max_gpus, cluster_job_spec **out, uint32_t **min,
                             uint32_t *n_out, cluster_trace_stats *stats, sim_error *err);

const char *cluster_dur_dist_name(int d);
int cluster_dur_dist_parse(const char *name, int *out);

#endif
