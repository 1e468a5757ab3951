/* cluster_interf.h - interference on the shared fabric: a cluster_pacer
 * (cluster.h) that times every running job's data-parallel all-reduce with
 * its neighbours' on the max-min flow model (flow.h, netcoll_exec.h).
 *
 * Each job has an iteration profile (its size class): compute c seconds and
 * one collective of S bytes per GPU over its n GPUs, or with a parallel
 * layout several collectives each in its groups (below), all at once and m
 * the last one's end (nc_plan_build): a ring
 * all-reduce by default (NC_ALGO_RING: intra-node over the scale-up links,
 * inter-node over the fabric, rail-aware when the job fills whole nodes;
 * NCCL's latencies), or a ring all-gather or reduce-scatter, or a direct
 * all-to-all (an expert-parallel exchange: S/n to every other GPU). The
 * communication can hide under a share o of the compute (a DDP reduction
 * under the backward pass; o = 0, wholly exposed, unless given):
 *   iteration = c + max(0, m - o c),   m the collective's time
 *   pace      = iteration(m_alone) / iteration(m_now)
 * m_alone: the job's all-reduce alone on the idle fabric (at its start);
 * m_now: every running job whose all-reduce shares a link with it (the
 * connected component of "shares a link" over the running jobs, links as
 * routed on the idle fabric) starts its all-reduce at the same instant on
 * one flow net, and m_now is when the job's finishes (max-min sharing; a
 * job that finishes first frees its share for the others). With a
 * comm-share f instead of c: c = m_alone (1 - f) / f.
 *
 * Cache: by the component's sorted job digests (a digest hashes the job's
 * sorted GPUs and its profile), an LRU of at most cache_entries components;
 * a hit returns the times the miss computed (the simulation depends only on
 * the key: members in digest order on a fresh engine). A job alone is the
 * key of one digest, so m_now = m_alone exactly when nothing shares its links.
 * Cost per re-time: O(links of the running jobs) to find the components,
 * plus a flow simulation per missed component (ring channels as coupled
 * flows: C flows per job, C the ring channels).
 */
#ifndef DCSIM_MODELS_CLUSTER_INTERF_H
#define DCSIM_MODELS_CLUSTER_INTERF_H

#include <stddef.h>
#include <stdint.h>

#include "cluster.h"
#include "error.h"
#include "fabric.h"
#include "netcoll.h"

#define CLUSTER_MAX_TRAFFIC 16

/* A job's parallel groups (docs/cluster.md "Parallel layout"): rank r of
 * the job is its r-th GPU, in the step tier's order (step_gpu, Megatron-LM's
 * default: r = t + tp (c + cp (d + dp s)), tensor rank t fastest, then
 * context rank c, data rank d, stage s; an expert group is ep consecutive
 * data ranks). A dp-group holds the dp x cp ranks of one (s, t). Two groups
 * only a class given by a model has (no <collective group> names them):
 * cp, the cp ranks of one (s, d, t), and edp, the expert-data-parallel
 * group of the ranks holding the same experts, dp / ep x cp of one (s, t)
 * with d = k mod ep. */
enum cluster_group { CLUSTER_GROUP_DP = 0, CLUSTER_GROUP_TP, CLUSTER_GROUP_PP, CLUSTER_GROUP_EP,
                     CLUSTER_GROUP_CP, CLUSTER_GROUP_EDP, CLUSTER_GROUP_COUNT };
#define CLUSTER_GROUP_BY_HAND CLUSTER_GROUP_CP /* the groups <collective> rows name: below */

#define CLUSTER_MAX_COLLS 12 /* the schema lets a class give 8 rows; a derived one has up to 12 */
#define CLUSTER_FROM_MODEL_CLASS 1
#define CLUSTER_FROM_MODEL_SIZE 2

/* one collective of the iteration, run once in every group of its kind:
 * NC_ALLREDUCE, NC_ALLGATHER, NC_REDUCESCATTER (rings), NC_ALLTOALL
 * (direct) or NC_SENDRECV (group pp only: each GPU sends bytes to its
 * counterpart on each neighbouring stage, both ways) */
typedef struct cluster_coll {
    int collective;           /* enum nc_collective */
    int group;                /* enum cluster_group */
    double bytes;             /* per GPU (nccl-tests' S) */
} cluster_coll;

/* one iteration of a job: compute_s, or (comm_share > 0) the compute that
 * makes the isolated collective that share of compute + collective (before
 * any overlap). With n_colls 0 (no layout given) its one collective runs
 * over all its GPUs (the form before layouts, its digests unchanged); else
 * coll[0..n_colls) all start at once in their groups of the tp x cp x pp
 * x ep layout (dp = GPUs / (tp cp pp)) and the iteration's communication ends with
 * the last. */
typedef struct cluster_traffic {
    double compute_s;
    double comm_share;        /* in (0, 1); 0: compute_s is given */
    double bytes;             /* per GPU (nccl-tests' S); 0: no communication */
    int collective;           /* enum nc_collective: NC_ALLREDUCE (0), NC_ALLGATHER,
                                 NC_REDUCESCATTER (ring) or NC_ALLTOALL (direct) */
    double overlap;           /* the share of compute_s the collective can hide
                                 under, [0, 1); 0: wholly exposed */
    uint32_t tp, pp, ep;      /* the layout; 0: not given (1) */
    uint32_t cp;              /* context parallel, a class given by a model only; 0: 1 */
    uint32_t vpp;             /* interleaved chunks per stage, a model's size only; 0: 1 */
    unsigned n_colls;
    cluster_coll coll[CLUSTER_MAX_COLLS];
    /* a class given by a catalog model (docs/cluster.md "Traffic from the
     * step tier"): its profile per job size is derived (the table's sized
     * rows); a derived profile has from_model 1 and hides under the compute
     * what of its collectives' isolated time passes exposed_s, the step
     * tier's exposed communication: hidden = max(0, m_alone - exposed_s),
     * and overlap is not read. from_model: 0 given by hand,
     * CLUSTER_FROM_MODEL_CLASS a class (never run itself),
     * CLUSTER_FROM_MODEL_SIZE a derived profile */
    int from_model;
    double exposed_s;
} cluster_traffic;

/* <collective group> in the scenario's words ("dp", "tp", "pp", "ep") and
 * back: NULL / -1 for none */
const char *cluster_group_name(int group);
int cluster_group_parse(const char *name);

/* The GPU counts a class's layout takes: 0, or -1 with why (one line, no
 * file) when n GPUs are not a whole number of tp x cp x pp, or their dp not
 * of ep. */
int cluster_layout_check(const cluster_traffic *t, uint32_t n, char *why, size_t size);

/* Build into plan (zeroed on entry; free with nc_plan_free) every
 * collective of t in every group of the job on gpus[0..n) (host ids, rank
 * order), all starting at once; n_colls must be > 0. A plan of no phases
 * when no group has two GPUs. 0, or an error (the layout does not fit n, a
 * route, memory). */
int cluster_layout_plan(nc_plan *plan, const nc_fabric *f, const cluster_traffic *t,
                        const uint32_t *gpus, uint32_t n, sim_error *err);

/* <traffic collective> in the scenario's words, "all-reduce", "all-gather",
 * "reduce-scatter", "all-to-all", and back (the one table both use):
 * the name of an enum nc_collective (NULL for one a job cannot have); the
 * value of a name, or -1 */
const char *cluster_traffic_collective_name(int collective);
int cluster_traffic_collective_parse(const char *name);

/* Profiles by size: a job of n GPUs takes the class with the largest
 * from_gpus <= n (class 0 has from_gpus 1). */
#define CLUSTER_MAX_SIZED 64 /* job sizes of classes given by a model (CLUSTER_MAX_SIZES) */
typedef struct cluster_traffic_table {
    unsigned n;
    uint32_t from_gpus[CLUSTER_MAX_TRAFFIC];
    cluster_traffic t[CLUSTER_MAX_TRAFFIC];
    /* profiles derived per job size for classes given by a model: a job of
     * exactly sized_gpus[k] GPUs takes sized[k] before any class */
    unsigned n_sized;
    uint32_t sized_gpus[CLUSTER_MAX_SIZED];
    cluster_traffic sized[CLUSTER_MAX_SIZED];
    int phase;                /* enum cluster_phase; 0 aligned (the model before phases) */
} cluster_traffic_table;

/* How co-located jobs' iterations line up (docs/cluster.md "Iteration
 * phases"; cluster_phase.c). ALIGNED: every member of a component starts its
 * collectives at the same instant in every iteration (the model before
 * phases: the worst case, what the flow simulation times). UNIFORM: each
 * job's iterations run at an offset uniform over its neighbours' (no
 * phase-locking), so a job's collective meets a neighbour's only while that
 * one is in its communication window, a share b of its iteration: to first
 * order its collective takes
 *   m = m_alone + q (m_aligned - m_alone),  q = 1 - prod over the other
 *       members j of its component of (1 - b_j),
 * b_j = min(1, m_alone_j / iteration_alone_j); with one neighbour q = b,
 * the expected overlap of two windows of shares a and b under a uniform
 * offset, a b of the iteration (cluster_phase_overlap), divided by a. */
enum cluster_phase { CLUSTER_PHASE_ALIGNED = 0, CLUSTER_PHASE_UNIFORM, CLUSTER_PHASE_COUNT };

/* "aligned", "uniform" and back (NULL / -1 for none) */
const char *cluster_phase_name(int phase);
int cluster_phase_parse(const char *name);

/* The expected time, as a share of a common iteration, that two
 * communication windows of shares a and b (each in [0, 1]) of it overlap
 * when their offset is uniform over the iteration: exactly a b (by Fubini:
 * the integral over the offset of the overlap is the product of the
 * lengths). */
double cluster_phase_overlap(double a, double b);

/* q[k] for every member k of busy[0..n) (each a share in [0, 1]): the
 * chance that at least one other member is in its communication window at a
 * uniformly random instant, 1 - prod_{j != k} (1 - busy[j]), by prefix and
 * suffix products (no division: exact when some busy[j] is 1). O(n). */
void cluster_phase_busy(const double *busy, uint32_t n, double *q);

/* the collective's expected time: alone + q (aligned - alone) */
double cluster_phase_comm_s(double alone_s, double aligned_s, double q);

#define CLUSTER_TIERS 5 /* link classes by (from tier, to tier), tiers 0-4 (graph.h) */

typedef struct cluster_interf_stats {
    uint64_t hits, misses;    /* component look-ups */
    uint64_t simulations;     /* flow simulations run (= misses) */
    uint64_t evictions;
    uint64_t flows;           /* flows those simulations started */
    uint32_t max_component;   /* most jobs in one component */
    /* per link class [from tier][to tier] (0 hosts and scale-up, 1 leaves,
     * 2 spines, ...): the fabric's links, those two running jobs' all-reduces
     * or more were routed on at once (ever), and the link-seconds they were */
    uint32_t links[CLUSTER_TIERS][CLUSTER_TIERS];
    uint32_t shared_links[CLUSTER_TIERS][CLUSTER_TIERS];
    double shared_link_s[CLUSTER_TIERS][CLUSTER_TIERS];
} cluster_interf_stats;

typedef struct cluster_interf cluster_interf;

/* On a built fabric f (its hosts: GPU g is host g; at least `gpus` of them)
 * with the profiles (copied). cache_entries 0: no cache (every look-up
 * simulates). NULL with err when the fabric is too small or out of memory. */
cluster_interf *cluster_interf_create(const fabric *f, uint32_t gpus,
                                      const cluster_traffic_table *tt, uint32_t cache_entries,
                                      sim_error *err);
void cluster_interf_destroy(cluster_interf *x); /* NULL-safe */

/* The pacer to put in cluster_config.pacer (lives as long as x). */
const cluster_pacer *cluster_interf_pacer(cluster_interf *x);

void cluster_interf_get_stats(const cluster_interf *x, cluster_interf_stats *out);

/* Job id's isolated iteration: compute and all-reduce seconds (after its
 * start; 0, 0 before). */
void cluster_interf_job(const cluster_interf *x, uint32_t id, double *compute_s,
                        double *comm_s);

/* Job id's isolated iteration in seconds: compute + the communication it
 * does not hide (0 before its start). */
double cluster_interf_job_iteration(const cluster_interf *x, uint32_t id);

/* The profile a job of n GPUs takes: its derived one (sized rows), else its
 * class's. */
const cluster_traffic *cluster_traffic_of(const cluster_traffic_table *tt, uint32_t n);

#endif
