/* cluster_internal.h - the cluster simulation's state, shared by cluster.c
 * (events, results), cluster_sched.c (the policy table) and
 * cluster_place.c (the placement table). Invariant: owner[g] is the job on
 * GPU g or CLUSTER_NONE, and node_free, leaf_free, su_free and free_gpus
 * count exactly the GPUs whose owner is CLUSTER_NONE.
 */
#ifndef DCSIM_MODELS_CLUSTER_INTERNAL_H
#define DCSIM_MODELS_CLUSTER_INTERNAL_H

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
    sim_error *err;            /* where the pacer says why */
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

/* cluster.c: take up to max free GPUs of node (owner CLUSTER_PICKED, the
 * free counts lowered, appended to s->pick at *k); returns how many */
uint32_t cluster_take_node(cluster_sim *s, uint32_t node, uint32_t max, uint32_t *k);

/* cluster.c: qsort order of cluster_end by end_s, then id */
int cluster_cmp_end(const void *a, const void *b);

/* cluster.c: start the job at queue position qi (it fits: free_gpus >= its
 * gpus); removes it from the queue */
void cluster_start_queued(cluster_sim *s, uint32_t qi);
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

#endif
