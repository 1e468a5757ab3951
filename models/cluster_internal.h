/* cluster_internal.h - the cluster simulation's state, shared by cluster.c
 * (events, results), cluster_sched.c (the policy table) and
 * cluster_place.c (the placement table). Invariant: owner[g] is the job on
 * GPU g or CLUSTER_NONE, and node_free, leaf_free, su_free and free_gpus
 * count exactly the GPUs whose owner is CLUSTER_NONE.
 */
#ifndef DCSIM_MODELS_CLUSTER_INTERNAL_H
#define DCSIM_MODELS_CLUSTER_INTERNAL_H

#include <math.h>

#include "cluster.h"
#include "engine.h"

typedef struct cluster_end {
    double end_s;
    uint32_t gpus, id;
} cluster_end;

typedef struct cluster_sim {
    const cluster_config *c;
    sim_engine *eng;
    cluster_job *job;          /* every job, arrival order */
    uint32_t n_job, arrived;
    uint32_t *queue;           /* queued job ids, in queue order */
    uint32_t queue_n;
    uint32_t *running;         /* running job ids (any order) */
    uint32_t running_n;
    uint32_t *run_pos;         /* per job: its index in running */
    uint32_t *owner;           /* per GPU */
    uint32_t *node_free, *leaf_free, *su_free;
    uint32_t n_nodes, n_leaves, n_sus;
    uint32_t free_gpus;
    uint32_t *alloc;           /* per job: its GPUs, job j at alloc[alloc_at[j]] */
    uint64_t *alloc_at;
    uint64_t alloc_used;
    /* scratch */
    uint32_t *pick;            /* the GPUs of the job being placed */
    uint32_t *order;           /* leaves or nodes, sorted */
    cluster_end *ends;         /* the running jobs by end (the shadow time), leaves by
                                  free GPUs (placement); max(jobs, nodes) */
    int pass_due;              /* a scheduling pass is scheduled for now */
    int failed;
    /* time integrals */
    double last_t, area_free, area_queue;
    uint32_t queue_max, backfilled;
    /* interference (c->pacer; cluster_pace.c): per job its remaining
     * isolated work as of upd_s, its pace since then and its end event */
    double *work_s, *pace, *upd_s;
    sim_event_id *end_ev;
    uint32_t *pace_ids;        /* scratch: the running ids handed to the pacer */
    double *pace_new;
    int retime_due;
    uint32_t retimes;
    int pacer_rc;              /* the pacer's error code (the run stopped) */
    double interf_gpu_s;       /* with disruption: GPU-s lost to a pace below 1 */
    sim_error *err;            /* where the pacer says why */
    /* disruption (cluster_preempt.c, cluster_fail.c; is_disrupt 0: none):
     * per job its state, its isolated work left at its segment's start, the
     * segment's start and restart overhead, its pending event (end or
     * checkpoint write); per node the owned GPUs; down GPUs */
    int is_disrupt;
    uint8_t *state;            /* CLUSTER_ST_* */
    double *left_s, *seg_s, *seg_over_s;
    sim_event_id *ev;
    uint32_t *node_busy;
    uint8_t *node_failed;      /* NODE_DOWN: down until one of its machines is repaired */
    /* swap_down: per node the repair ends of its own machines in repair (those
     * that failed in its slot with no spare free; a slot a spare took over
     * may fail again, so it may have several), oldest first: rep_head,
     * rep_tail into rep_end / rep_next, a pool with a free list (rep_free) */
    uint32_t *rep_head, *rep_tail, *rep_next, rep_free, rep_n, rep_cap;
    double *rep_end;
    uint16_t *resv_n;          /* per GPU: maintenance windows on it now */
    uint32_t down_gpus, pending_gpus, spares_free, ended;
    double area_down;
    uint32_t preemptions, interruptions, failures, spare_swaps, spare_takeovers, spare_refails;
    void *fail_rng;            /* gsl_rng of the failures */
    void *victims;             /* scratch: the victims' sort keys (cluster_preempt.c) */
    uint32_t *hid, hid_n;      /* scratch: the GPUs hidden from a start */
    /* elastic (cluster_elastic.c; held NULL: none): per job the GPUs it
     * holds, the count at its first start, the GPU-s it held; totals of the
     * GPU-s lost (rework, checkpoint writes, restarts) at the GPUs held */
    uint32_t *held, *g0;
    double *gpu_s;
    double *lost_job_gpu_s;    /* per job the GPU-s it lost (the three kinds) */
    uint32_t resizes;
    double grown_gpu_s, lost_el_gpu_s[3];
    /* the step series (cluster_step) */
    uint32_t busy_nodes;
    cluster_step *steps;
    uint32_t n_steps, cap_steps;
} cluster_sim;

struct cluster_sched {
    const char *name;
    const char *doc;
    /* start what the policy allows now (cluster_start_queued for each) */
    void (*pass)(cluster_sim *s);
};

struct cluster_placer {
    const char *name;
    const char *doc;
    /* pick n free GPUs into s->pick through cluster_take_node (the caller
     * checked free_gpus >= n) */
    uint32_t (*place)(cluster_sim *s, uint32_t n); /* returns how many it took */
};

#define CLUSTER_PICKED (UINT32_MAX - 1) /* owner of a GPU being placed */
#define CLUSTER_DOWN (UINT32_MAX - 2)   /* owner of a GPU out of service */
#define CLUSTER_HIDDEN (UINT32_MAX - 3) /* a free GPU a coming window keeps from a job */
#define NODE_DOWN 1u     /* node_failed bits: the node is out of service */

enum { CLUSTER_ST_WAIT = 0, CLUSTER_ST_RUN, CLUSTER_ST_WRITE, CLUSTER_ST_DONE };

/* cluster.c: take up to max free GPUs of node (owner CLUSTER_PICKED, the
 * free counts lowered, appended to s->pick at *k); returns how many */
uint32_t cluster_take_node(cluster_sim *s, uint32_t node, uint32_t max, uint32_t *k);

/* cluster.c: qsort order of cluster_end by end_s, then id */
int cluster_cmp_end(const void *a, const void *b);

/* cluster.c: start the job at queue position qi (it fits: free_gpus >= its
 * gpus); removes it from the queue. 0, or -1 when a maintenance window
 * keeps it from starting now (nothing changed) */
int cluster_start_queued(cluster_sim *s, uint32_t qi);
/* its run left if it started now: its stated duration, or with disruption
 * restart overhead + work left */
double cluster_run_left_s(const cluster_sim *s, uint32_t id);
/* cluster.c: give back the job's GPUs (free, or down where out of service),
 * take it off the running list, tell the watcher */
void cluster_release(cluster_sim *s, uint32_t id);
/* cluster.c: put a job into the queue: priority (higher first), then id */
void cluster_enqueue(cluster_sim *s, uint32_t id);
/* cluster.c: a scheduling pass at the end of this instant */
void cluster_want_pass(cluster_sim *s);
/* advance the time integrals to now */
void cluster_account(cluster_sim *s);
/* record the state now as a step (after a change; replaces a step of the
 * same instant); sets s->failed when out of memory */
void cluster_record(cluster_sim *s);

/* cluster.c: a job's end event (the handler cluster_pace.c reschedules) */
void cluster_on_end(sim_engine *eng, void *ctx, uint64_t data);

/* cluster_pace.c: with a pacer, the per-job arrays (0 or -1 out of memory);
 * a start (its end event scheduled at start + its remaining work) and an
 * end; a re-time at the end of this instant */
int cluster_pace_init(cluster_sim *s);
void cluster_pace_free(cluster_sim *s);
void cluster_pace_start(cluster_sim *s, uint32_t id, const uint32_t *gpus);
void cluster_pace_end(cluster_sim *s, uint32_t id);
/* cluster_pace.c, a pacer with disruption (segments): job id's all-reduce
 * on its n GPUs g joins the pacer (a start or a resize; leave it first with
 * cluster_pace_leave); a segment opening now (its paced work from the end
 * of its restart; the restart's end re-times); its work advanced to now
 * (interference counted); the work done in the running segment by now */
int cluster_pace_join(cluster_sim *s, uint32_t id, const uint32_t *g, uint32_t n);
void cluster_pace_leave(cluster_sim *s, uint32_t id);
void cluster_pace_segment(cluster_sim *s, uint32_t id);
void cluster_pace_settle(cluster_sim *s, uint32_t id);
double cluster_pace_done(const cluster_sim *s, uint32_t id);
/* a re-time at the end of this instant */
void cluster_want_retime(cluster_sim *s);

/* cluster_preempt.c: the per-job arrays and events of disruption (0, or -1
 * out of memory); a blocked head evicting lower priorities; a running job
 * interrupted now (rework counted, work saved; requeue 1: its GPUs given
 * back and the job queued again, 0: it restarts in place); a segment start;
 * GPUs freed or taken down */
int cluster_disrupt_check(const cluster_config *c, sim_error *err);
int cluster_disrupt_init(cluster_sim *s);
void cluster_disrupt_free(cluster_sim *s);
void cluster_preempt_head(cluster_sim *s);
void cluster_interrupt(cluster_sim *s, uint32_t id, int requeue);
void cluster_segment_start(cluster_sim *s, uint32_t id);
int cluster_gpu_is_down(const cluster_sim *s, uint32_t g);
void cluster_gpu_down(cluster_sim *s, uint32_t g);
void cluster_gpu_up(cluster_sim *s, uint32_t g);
/* cluster_fail.c: schedule the windows and the first failure (0, or -1);
 * hide the free GPUs of windows a job starting now would overlap (returns
 * how many) and show them again */
int cluster_fail_begin(cluster_sim *s);
uint32_t cluster_resv_hide(cluster_sim *s, double end_s);
void cluster_resv_show(cluster_sim *s);
/* cluster_fail.c: the latest end of the windows not over that start before
 * to_s (0: none) */
double cluster_resv_clear_s(const cluster_sim *s, double to_s);
/* cluster_fail.c: the failure counts into the result */
void cluster_fail_result(const cluster_sim *s, cluster_result *o);

/* GPUs job id holds (or would take): held, else its GPUs */
static inline uint32_t cluster_held(const cluster_sim *s, uint32_t id)
{
    return s->held ? s->held[id] : s->job[id].spec.gpus;
}

/* elastic scaling (cluster_config elastic_exponent e): 1 when linear, g / G
 * (the arithmetic before e, bit for bit) */
static inline int cluster_el_linear(const cluster_sim *s)
{
    double e = s->c->elastic_exponent;
    return !(e > 0) || e == 1;
}

/* the seconds that w seconds of job id's work (at its G GPUs' rate) take on
 * g GPUs: w G / g linear, w / (g / G)^e sub-linear; exactly w at g = G */
static inline double cluster_el_time(const cluster_sim *s, uint32_t id, double w, uint32_t g)
{
    uint32_t G = s->job[id].spec.gpus;
    if (cluster_el_linear(s))
        return w * G / g;
    return g == G ? w : w / pow((double)g / G, s->c->elastic_exponent);
}

/* the work (seconds at its G GPUs' rate) job id does in dt seconds on g */
static inline double cluster_el_work(const cluster_sim *s, uint32_t id, double dt, uint32_t g)
{
    uint32_t G = s->job[id].spec.gpus;
    if (cluster_el_linear(s))
        return dt * g / G;
    return g == G ? dt : dt * pow((double)g / G, s->c->elastic_exponent);
}

/* the GPU-seconds w seconds of job id's work take on g GPUs (w G linear) */
static inline double cluster_el_gpu_s(const cluster_sim *s, uint32_t id, double w, uint32_t g)
{
    if (cluster_el_linear(s))
        return w * s->job[id].spec.gpus;
    return cluster_el_time(s, id, w, g) * g;
}

/* elastic: job id lost x GPU-s of kind k (0 rework, 1 checkpoint writes, 2
 * restarts) at the GPUs it held */
static inline void cluster_el_lose(cluster_sim *s, uint32_t id, int k, double x)
{
    s->lost_el_gpu_s[k] += x;
    s->lost_job_gpu_s[id] += x;
}

/* sub-linear: the GPU-s job id's work took, the GPU-s it held less those it
 * lost (its goodput's numerator; linear: its GPUs x duration) */
static inline double cluster_el_work_gpu_s(const cluster_sim *s, uint32_t id)
{
    return s->gpu_s[id] - s->lost_job_gpu_s[id];
}

/* 1: an elastic job in an elastic run */
static inline int cluster_is_elastic(const cluster_sim *s, uint32_t id)
{
    const cluster_job *j = &s->job[id];
    return s->held && j->min_gpus && j->min_gpus < j->spec.gpus;
}

/* the fewest GPUs it can start on */
static inline uint32_t cluster_need(const cluster_sim *s, uint32_t id)
{
    return cluster_is_elastic(s, id) ? s->job[id].min_gpus : s->job[id].spec.gpus;
}

/* cluster_preempt.c: close the running segment now; keep 1: every bit of
 * work done is kept (a resize), 0: rounded down to checkpoints (rework) */
void cluster_segment_close(cluster_sim *s, uint32_t id, int keep);

/* cluster_elastic.c: the arrays (0, or -1 out of memory); the run left on g
 * GPUs if it started now; start job qi of the queue on up to max GPUs (at
 * least its need; 0, or -1 when no count fits); after a pass, grow running
 * elastic jobs without delaying the head; a failure or window under an
 * elastic job (1: it shrank off the down GPUs, 0: interrupt it) */
int cluster_elastic_init(cluster_sim *s);
void cluster_elastic_free(cluster_sim *s);
double cluster_run_left_on(const cluster_sim *s, uint32_t id, uint32_t g);
int cluster_start_queued_n(cluster_sim *s, uint32_t qi, uint32_t max);
void cluster_elastic_grow(cluster_sim *s);
int cluster_elastic_lose(cluster_sim *s, uint32_t id);
/* cluster_elastic.c: a running elastic job onto g GPUs now (fewer: its
 * highest GPUs given back; more: the placement's); keep as in
 * cluster_segment_close; a resize, restart time before it works again */
void cluster_elastic_resize(cluster_sim *s, uint32_t id, uint32_t g, int keep);
/* cluster.c: give back n GPUs (free, or down where out of service) */
void cluster_free_gpus(cluster_sim *s, const uint32_t *g, uint32_t n);
/* cluster_elastic.c: job id held its GPUs for dt (GPU-s, grown GPU-s) */
void cluster_elastic_hold(cluster_sim *s, uint32_t id, double dt);
/* cluster_sched.c: the shadow time and extra GPUs of a head needing need */
void cluster_shadow(cluster_sim *s, uint32_t need, double *shadow_s, uint32_t *extra);
/* cluster.c: per job sorted GPU ids into spans and minima */
void cluster_spans_set(cluster_sim *s, uint32_t id, const uint32_t *g, uint32_t n);

#endif
