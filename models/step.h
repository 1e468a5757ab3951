/* step.h - the step tier: one training iteration of the whole cluster, from
 * the workload's operations, the compute model and the fabric.
 *
 * Placement (Megatron-LM's default order, TP innermost; parallel_config
 * order gives another): GPU id = t + tp (c + cp (d + dp s)) for tensor
 * rank t, context rank c, data rank d and pipeline stage s, so a TP group is consecutive GPUs (inside a node
 * when tp divides the scale-up domain), a DP group for (s, c, t) strides
 * over nodes on one rail, and stage s + 1 of the same replica is dp cp tp
 * GPUs further on. Expert-parallel groups are ep consecutive data ranks.
 *
 * What one micro-batch costs a stage (per GPU; every GPU of a stage does
 * the same work):
 *   compute   sum of the op times (compute.h), x 1/speed of the stage's
 *             slowest GPU (a straggler slows its whole TP group, which
 *             synchronises every layer)
 *   TP        each collective timed on the fabric (the stage's first TP
 *             group; TP groups share no links). A fraction tp_overlap of it
 *             hides behind GEMMs (Megatron --tp-comm-overlap); the rest is
 *             exposed. Hidden communication costs compute nothing (rule 1,
 *             tested: overlap never makes a step slower).
 *   CP        the K/V ring exchange overlaps the attention it feeds: exposed
 *             = max(0, exchange - attention) (rule 2).
 *   EP        all-to-all dispatch and combine, fully exposed (rule 3: the
 *             experts need the tokens).
 *   PP        activation and gradient sends between neighbouring stages,
 *             all replicas' sends of one boundary at once on the fabric;
 *             they occupy no stage (own stream) but delay the receiver.
 * The pipeline schedule (schedule.h) places the tasks. Data-parallel
 * gradient reduction (all-reduce, or reduce-scatter with a sharded
 * optimizer) runs in buckets of bucket_params parameters that become ready
 * evenly during each chunk's last backward (Megatron --overlap-grad-reduce)
 * and go one after another on the group's communicator; a bucket's time is
 * that of the collective with every DP group of the cluster reducing at once
 * (contention on shared links, a conservative bound). Then the optimizer step
 * (its ops) and, with a sharded optimizer, the parameter all-gather, which
 * hides behind the next iteration's first forward when overlap_param_gather
 * is set (Megatron --overlap-param-gather; exposed = the excess).
 * Iteration time = the slowest stage's end over every replica.
 */
#ifndef DCSIM_MODELS_STEP_H
#define DCSIM_MODELS_STEP_H

#include <stddef.h>
#include <stdint.h>

#include "compute.h"
#include "error.h"
#include "fabric.h"
#include "packet.h"
#include "packet_series.h"
#include "schedule.h"
#include "workload.h"

enum step_part { STEP_COMPUTE = 0, STEP_TP, STEP_PP, STEP_DP, STEP_CP, STEP_EP, STEP_BUBBLE,
                 STEP_OPTIMIZER, STEP_PART_COUNT };

typedef struct step_options {
    int analytic;               /* network: 0 flow model, 1 analytic path */
    int concurrent;             /* 1: the iteration as a discrete-event simulation, every
                                   PP send and DP bucket of every replica on one shared
                                   flow net (needs the flow model); 0: each timed alone */
    double tp_overlap;          /* fraction of TP communication hidden, [0, 1] */
    int overlap_grad_reduce;    /* DP buckets start during the last backward */
    int overlap_param_gather;   /* parameter all-gather behind the next forward */
    double bucket_params;       /* parameters per DP bucket; 0 = the framework's rule
                                   (parallel_config.fw.bucket_rule) */
    double sustained_efficiency; /* (0, 1]: compute times are the kernel models' / this;
                                    a user override, 1 = off (the default) */
    const double *gpu_speed;    /* per GPU, > 0, 1 = nominal (stragglers < 1); NULL = all 1 */
    unsigned n_gpu_speed;
    int sm_stage_end;           /* concurrent: 1 adds the SMs DP's kernels take from
                                   overlapped compute at the stage's end (the isolated
                                   rule); 0 (default) feeds them into the schedule
                                   (step_sm.c). The isolated iteration always adds them */
    int no_fold;                /* concurrent: 1 never folds identical replicas into one
                                   (the default 0 folds where it is exact: step_des.c) */
    size_t flow_log;            /* the concurrent iteration records at most this many flows
                                   (step_profile.flows); 0 none. Default
                                   STEP_FLOW_LOG_DEFAULT */
    /* concurrent: the caller's progress hook, called every STEP_POLL_EVENTS
     * events with the simulated time and the events so far; non-zero stops
     * the iteration (SIM_ERR_INTERRUPTED). NULL: none. Not a scenario value. */
    int (*poll)(void *ctx, double sim_time_s, uint64_t events);
    void *poll_ctx;
    /* concurrent: 1 runs every plan of the shared net on the packet tier
     * (packet_exec.h) instead of the flow net (network="packet"; step_des.c
     * "packet network"). packet_cfg: the tier's parameters, the caller's
     * (not a scenario value; required with packet). packet_admit: called
     * once the iteration's plans are built with the packets and packet-hops
     * it will take at least (every PP, DP and gather message, 2 links each;
     * TP/CP/EP flows not counted), before any moves; non-zero refuses the
     * job with the reason in err. NULL: no check besides
     * STEP_PACKET_MAX_HOPS. */
    int packet;
    const pkt_config *packet_cfg;
    int (*packet_admit)(void *ctx, double packets, double packet_hops, sim_error *err);
    void *packet_admit_ctx;
    /* packet only: > 0 keeps the iteration's per-link time series
     * (packet_series.h: bins of packet_series_dt_s from the iteration's
     * start, at most packet_series_bins, even) in step_profile.packet_series.
     * Not a scenario value (the front ends' --bin, --bins and rule). */
    double packet_series_dt_s;
    uint32_t packet_series_bins;
} step_options;

/* The packet network refuses an iteration of more packet-hops than this
 * (its estimate; about 140 s at the tier's measured 7 M packet-hops per
 * CPU second, PKB_PACKET_HOPS_PER_S: the budget of netbench --tier packet,
 * PKB_MAX_PACKET_HOPS), and
 * stops one whose packet-hops pass it while it runs. */
#define STEP_PACKET_MAX_HOPS 1e9

#define STEP_POLL_EVENTS 16384u

/* What the concurrent iteration's flow log holds by default: enough for
 * every flow of a few hundred GPUs' iteration, a bounded cost (under 10 MB)
 * for a superpod's, whose log is then truncated (step_profile.flows_truncated). */
#define STEP_FLOW_LOG_DEFAULT 100000u
#define STEP_FLOW_LOG_MAX 10000000u /* the most a scenario may ask for (about 1 GB) */

typedef struct step_stage {
    double part_s[STEP_PART_COUNT]; /* per iteration, the slowest replica's stage */
    double end_s;                   /* when the stage is done (incl. DP and optimizer) */
    double dp_start_s;              /* when its first DP bucket starts (overlapping its last
                                       backwards); without DP traffic, end_s - part_s[DP] -
                                       part_s[OPTIMIZER]. The DP part then runs to end_s -
                                       part_s[OPTIMIZER], the optimizer to end_s */
    double compute_fraction;        /* busy computing / iteration (power: full load) */
    double comm_fraction;           /* exposed communication only / iteration */
} step_stage;

#define STEP_TIERS 4 /* 0 scale-up, 1 host-leaf, 2 leaf-spine, 3 spine-core / global */

/* A link where the concurrent iteration's PP sends and DP traffic met. */
#define STEP_HOT_LINKS 8
typedef struct step_hot_link {
    uint32_t link, src, dst;  /* the directed link and its end nodes (topo_graph ids) */
    int tier;                 /* step_link_tier: 0 scale-up .. 3 spine-core / global */
    double pp_s;              /* seconds with a PP send on it */
    double dp_s;              /* seconds with a DP reduction or parameter gather on it */
    double coll_s;            /* seconds with a TP, CP or EP flow on it (step_stagecoll.c) */
    double both_s;            /* seconds with both at once */
    double utilisation;       /* bytes / (capacity x iteration) */
} step_hot_link;

/* One flow of the concurrent iteration's shared flow net (step_des.c): a
 * PP send (one coupled flow for the replica's cp x tp GPU pairs), a flow
 * of one step (phase) of a DP bucket's reduction or a parameter gather's
 * bucket, the plan of every DP group of the stage at once, or a flow of a
 * task segment's TP, CP or EP collective that crosses scale-up domains
 * (step_stagecoll.c: every group of the replica's stage; EP: of the expert
 * group's ep replicas, replica its first). */
enum step_flow_kind { STEP_FLOW_PP = 0, STEP_FLOW_DP, STEP_FLOW_GATHER, STEP_FLOW_TP,
                      STEP_FLOW_CP, STEP_FLOW_EP, STEP_FLOW_KINDS };
typedef struct step_flow {
    double start_s, end_s;          /* it enters the net; its last byte is through */
    double bytes;                   /* what it moves (a coupled flow: every pair together) */
    double tier_bytes[STEP_TIERS];  /* bytes it puts on each tier's links (bytes x hops) */
    uint32_t src, dst;              /* GPUs: its first connection (dst UINT32_MAX: src is
                                       a link, an in-network reduction's) */
    uint32_t n_conn;                /* connections it carries (PP: cp x tp; else 1) */
    uint32_t replica;               /* PP, TP, CP, EP: the replica; DP and gather:
                                       UINT32_MAX (all) */
    uint32_t stage, chunk;          /* PP: the sender's; DP and gather: the chain's; TP,
                                       CP, EP: the task's */
    uint32_t index;                 /* PP, TP, CP, EP: the micro-batch; DP and gather: the
                                       bucket */
    uint32_t phase;                 /* the plan's phase (step of the collective) */
    uint8_t kind;                   /* enum step_flow_kind */
    uint8_t backward;               /* PP: 1 a gradient send (to the previous stage); TP,
                                       CP, EP: 1 in a backward */
} step_flow;

typedef struct step_profile {
    double iteration_s;
    double tokens_per_s;
    double model_flops_per_gpu_s;    /* Megatron-Core's model FLOPs / s / GPU */
    double mfu, hfu;
    unsigned n_stages;
    step_stage *stage;
    double part_s[STEP_PART_COUNT];  /* the critical stage's breakdown */
    unsigned critical_stage;
    /* stragglers: the slowest GPU and what it cost */
    uint32_t slowest_gpu;
    double slowest_speed;
    double wait_s;                   /* how long the nominal replicas waited for it */
    /* fabric: bytes per iteration and peak link utilisation per tier */
    double tier_bytes[STEP_TIERS];
    double tier_peak_utilisation[STEP_TIERS];
    uint32_t n_links;
    double *link_bytes;              /* per link per iteration (n_links), owned */
    uint8_t *link_tier;              /* per link: its tier, 0 .. STEP_TIERS - 1; owned */
    double *link_utilisation;        /* per link: bytes / (capacity x iteration); owned */
    /* the pipeline schedule of the slowest replica (the nominal one without
     * stragglers): every forward and backward of every micro-batch on every
     * stage, stage by stage in the order each runs them; owned */
    size_t n_tasks;
    sched_task *tasks;
    /* attribution, the critical stage's, per iteration (the slowest replica's):
     * kernel_s[k] compute by op kind (GEMM, attention, memory-bound, ...), the
     * optimizer step's included; sm_contention_s the compute that SMs taken by
     * overlapped TP takes cost. They sum to part_s[COMPUTE] +
     * part_s[OPTIMIZER]. dp_sm_contention_s: the compute that SMs of the
     * overlapped DP reduction and gather cost, which delays the stage's end
     * and is counted in part_s[DP]. Per collective kind (enum comm_kind):
     * the time it runs, what of it the stage waits for (exposed; summed per
     * group these are part_s[TP], [PP], [CP], [EP], and [DP] less
     * dp_sm_contention_s) and hidden = total - exposed. */
    double kernel_s[OP_KIND_COUNT];
    double sm_contention_s;
    double dp_sm_contention_s;
    int dp_sm_in_schedule;           /* 1: the concurrent iteration fed the SMs of DP in
                                        flight into its tasks (step_sm.c); 0: added at the
                                        stage's end */
    int sm_contention_unpriced;      /* 1: overlap hid communication but the GPU gives no SM
                                        count, so its SM cost is not priced */
    double coll_total_s[COMM_KIND_COUNT];
    double coll_exposed_s[COMM_KIND_COUNT];
    double coll_hidden_s[COMM_KIND_COUNT];
    /* bytes per GPU per iteration by kind: workload_kind_bytes of the job */
    double comm_bytes[COMM_KIND_COUNT];
    /* the concurrent iteration only (else n_hot 0): the links where PP and DP
     * traffic overlapped longest, longest first */
    unsigned n_hot;
    step_hot_link hot[STEP_HOT_LINKS];
    /* the concurrent iteration only (else n_bins 0, NULL): the utilisation of
     * the links by the traffic of the shared net (PP and DP) over time, in
     * n_bins bins of bin_s seconds from 0 (they cover the iteration): per
     * bin and tier (bin x STEP_TIERS + tier) the busiest link's and the mean
     * over the tier's links; owned */
    unsigned n_bins;
    double bin_s;
    double *bin_peak, *bin_mean;
    /* the concurrent iteration only: exact symmetry folding. fold_replicas
     * data-parallel replicas ran as one (0: not folded, fold_note says why),
     * fold_flows distinct flows of the iteration moved as fold_cells */
    unsigned fold_replicas;
    uint32_t fold_flows, fold_cells;
    const char *fold_note;          /* static text */
    /* the concurrent iteration only: bit k (0 TP, 1 CP, 2 EP) set when some
     * stage's collectives of kind k crossed scale-up domains and ran as
     * flows in its tasks (step_stagecoll.c); the most segments of a task */
    unsigned coll_on_net, coll_segments;
    /* the concurrent iteration only (else 0, NULL): its flows in the order
     * they started, at most step_options.flow_log of them; flows_total
     * counts every one, and flows_truncated is 1 when the log stopped at
     * its cap (n_flows < flows_total); owned */
    size_t n_flows;
    uint64_t flows_total;
    int flows_truncated;
    step_flow *flows;
    /* network="packet" only (else is_packet 0): the packet net's counters
     * at the iteration's end, the wall time of the iteration's simulation,
     * and the packet-hops estimated before the run (packet_admit's) */
    int is_packet;
    pkt_net_stats packet_stats;
    uint64_t packet_plans;
    double packet_wall_s;
    double packet_hops_estimate;
    /* with step_options.packet_series_bins: the finished series (owned,
     * freed by step_profile_free); the packet engine's events, digest and
     * last event's time */
    pkt_series *packet_series;
    uint64_t packet_events, packet_digest;
    double packet_end_s;
} step_profile;

void step_options_defaults(step_options *o);

/* GPU id of (stage, data rank, context rank, tensor rank). */
uint32_t step_gpu(const parallel_config *p, unsigned stage, unsigned d, unsigned c, unsigned t);

/* Simulate one iteration. The fabric must hold tp cp dp pp GPUs. Returns 0,
 * or the error's code with a one-line reason in err (err may be NULL) and
 * *out zeroed: SIM_ERR_NOMEM when out of memory, SIM_ERR_INPUT for what the
 * job, options, device or fabric cannot do. Free with step_profile_free. */
int step_simulate(const workload *w, const compute_device *dev, fabric *f,
                  const step_options *o, step_profile *out, sim_error *err);
void step_profile_free(step_profile *p);

const char *step_part_name(int part); /* "compute", "tp", ..., "optimizer" */
const char *step_tier_name(int tier); /* "scale-up", ..., "spine-core/global" */
const char *step_kernel_name(int kind); /* op kind: "gemm", "attention", "memory", ...; "other" */
const char *step_flow_kind_name(int kind); /* "pp", "dp", "gather", "tp", "cp", "ep" */

#endif
