/* step_internal.h - what step.c, step_comm.c and step_report.c share: the
 * communication context and one stage's costs. Not a public interface. */
#ifndef DCSIM_MODELS_STEP_INTERNAL_H
#define DCSIM_MODELS_STEP_INTERNAL_H

#include "step.h"

/* TP, CP and EP: the stage collectives that may run as flows on the
 * concurrent iteration's net (step_stagecoll.c) */
enum { STEP_SC_TP = 0, STEP_SC_CP, STEP_SC_EP, STEP_SC_KINDS };

typedef struct comm_ctx {
    fabric *f;
    int analytic;
    double *link_bytes;   /* per link, per iteration */
    double *scratch;      /* one representative group's bytes, per link */
    uint32_t *touched;    /* the links scratch holds bytes for */
    double tier_copies[STEP_TIERS]; /* bytes of the groups not routed link by link */
    sim_error *err;       /* the step tier's errors, the collectives' included */
} comm_ctx;

/* One stage, per micro-batch unless said otherwise (every chunk together;
 * step.c splits it over the chunks). */
typedef struct stage_costs {
    double compute_f, compute_b;     /* nominal speed: layers + edges */
    double layer_f, layer_b;         /* the transformer layers' ops */
    double embed_f, embed_b;         /* stage 0's embedding (its chunk 0) */
    double head_f, head_b;           /* the last stage's norm, logits, loss (its last chunk) */
    double gemm_f, gemm_b;           /* the layers' GEMMs (TP overlap pairs) */
    double kind_f[OP_KIND_COUNT], kind_b[OP_KIND_COUNT]; /* compute by op kind */
    double kind_opt[OP_KIND_COUNT];  /* optimizer step by op kind, per iteration */
    double tp_f, tp_b;               /* exposed TP */
    double smx_f, smx_b;             /* compute lost to SMs the overlapped TP takes */
    double cp_f, cp_b, ep_f, ep_b;   /* exposed CP, EP */
    double coll_total[COMM_KIND_COUNT], coll_exposed[COMM_KIND_COUNT]; /* TP, CP, EP */
    double optimizer;                /* per iteration */
    double send_f, send_b;           /* PP transfer to the next / from the next stage */
    double sends_f, sends_b;         /* PP sends leaving the stage forward / backward */
    double dp_bytes, ag_bytes;       /* DP reduction and parameter gather, per GPU */
    double dp_expert_bytes, ag_expert_bytes; /* of which the experts' (workload.c dp_comm:
                                      * their expert-data-parallel groups, dp cp / ep ranks) */
    int dp_kind;                     /* COMM_DP_ALLREDUCE or COMM_DP_REDUCE_SCATTER */
    double attention_f, attention_b; /* for the CP overlap rule */
} stage_costs;

typedef struct replica_run {
    double *speed;        /* per stage: the slowest GPU's speed in this replica */
    sched_result sched;   /* with transfers */
    sched_result ideal;   /* free transfers, for the bubble / PP split */
} replica_run;

/* the DP reduction of one (chunk, stage), at c x pp + s */
typedef struct dp_chain {
    double bucket_s, gather_bucket_s; /* one bucket, every DP group at once */
    double bucket_bytes, gather_bytes; /* one bucket, per GPU */
    unsigned buckets;
} dp_chain;

/* What step_simulate works with between its phases; owns everything but
 * cx.f, cx.link_bytes (out->link_bytes) and cx.err. Its functions return 0
 * or a sim_error code recorded in cx.err. */
typedef struct step_run {
    comm_ctx cx;
    stage_costs *c;       /* per stage */
    dp_chain *dc;         /* per (chunk, stage) */
    replica_run *runs;    /* the replicas simulated, the nominal one last */
    unsigned n_runs;
    double *gather_exposed; /* per stage: the parameter all-gather left exposed */
    double *dp_smx;         /* per stage: compute lost to the SMs of overlapped DP */
    double *coll_added;     /* per (stage, STEP_SC_*): what contention added to the slowest
                               replica's TP, CP and EP there (concurrent iteration) */
    sched_task *gantt;      /* the concurrent iteration's slowest replica (step_des.c), owned;
                               NULL: the slowest run's schedule */
    size_t n_gantt;
} step_run;

/* When one stage's work ends, what step_stage_finish turns into its end and
 * breakdown. */
typedef struct stage_timing {
    double dp_end;        /* its last gradient bucket is reduced */
    double bwd_end;       /* its last backward, every replica */
    double window;        /* how long DP buckets ran before bwd_end (SM contention) */
    double dp_start;      /* its first bucket starts (INFINITY: none) */
    double gather;        /* its parameter all-gather, every chunk, one after another */
    double nominal_ready, all_ready; /* nominal replicas' / every replica's last backward */
    double last_task;     /* the slowest replica's last task on the stage ends */
    double pp_added;      /* what the transfers add to that replica's pipeline */
    double slow_speed;    /* that replica's stage speed (1 nominal) */
    double coll_added[STEP_SC_KINDS]; /* what contention added to that replica's tasks
                                         on the stage through its TP, CP and EP flows */
    double sm_fed;        /* what the SMs of DP in flight added to that replica's tasks on
                             the stage (step_sm.c; then window is 0) */
} stage_timing;

/* q = k / (S - k) for stage s's DP reduction (gather 0) or parameter
 * gather (1): k its kernels' SMs (step_comm_sms), S the GPU's; compute
 * beside it takes 1 + q as long (rule 1). 0 with fewer than two ranks;
 * 0 and *unpriced = 1 when the GPU has no SM count. */
double step_dp_sm_share(const step_run *sr, const workload *w, const compute_device *dev,
                        unsigned s, int gather, int *unpriced);

double step_stage_finish(step_run *sr, const workload *w, const compute_device *dev,
                         const step_options *o, unsigned s, const stage_timing *tm,
                         step_profile *out);

/* one micro-batch of (chunk ch, stage s) at speed 1 / slow */
double step_chunk_time(const workload *w, const stage_costs *c, unsigned s, unsigned ch,
                       double slow, int backward);

/* The iteration as a discrete-event simulation (step_des.c): every replica's
 * pipeline on the engine, every PP send and DP bucket a plan on one shared
 * flow net. Needs price_stages, the bucket counts and the replicas' task
 * order; fills the stages' ends and breakdowns and returns 0 with the
 * iteration in *iteration, or an error code. */
int step_des_run(step_run *sr, const workload *w, const compute_device *dev,
                 const step_options *o, step_profile *out, double *iteration);

/* Fraction of stage s's layer work in its chunk ch (1/v without layers). */
double step_chunk_share(const workload *w, unsigned s, unsigned ch);

/* The profile once the iteration is known (step_report.c): the Gantt
 * chart's tasks, bubbles, fractions, critical stage, rates, attribution and
 * per-tier link totals. */
int step_finish_profile(const step_run *sr, const workload *w, const compute_device *dev,
                        const fabric *f, double iteration, step_profile *out);

/* 0 scale-up, 1 host-leaf, 2 leaf-spine, 3 spine-core or router-router */
int step_link_tier(const topo_graph *g, uint32_t l);

/* TP, CP and EP: time, exposure (o's TP overlap rule, fw.tp_overlap_mode)
 * and SM contention, and the volumes of PP and DP, for stage s (its compute
 * already priced in c). */
int step_stage_comm(comm_ctx *cx, const workload *w, const compute_device *dev, unsigned s,
                    const step_options *o, stage_costs *c);

/* PP transfers of every stage boundary, every replica at once. */
int step_pp_sends(comm_ctx *cx, const workload *w, stage_costs *c);

/* One DP bucket of every DP group at once: the time of the slowest (t
 * non-NULL), or the bytes the given volumes put on every link (t NULL). */
int step_dp_bucket_time(comm_ctx *cx, const workload *w, const stage_costs *c,
                        const double *bucket_bytes, int gather, double *t);

/* One bucket of stage s's DP collective coll (bytes per GPU, expert_frac of
 * them the experts') for every DP group of the stage, appended to plan: the
 * dense part over each tensor rank's dp x cp ranks, the experts' part over
 * each expert-data-parallel group, the replicas that hold the same experts
 * (d = n, n + ep, ...: an expert group is ep consecutive replicas) and
 * every context rank of them. ranks holds dp x cp entries. */
int step_dp_append(nc_plan *plan, const nc_fabric *nc, const parallel_config *p, unsigned s,
                   enum nc_collective coll, double bytes, double expert_frac, uint32_t *ranks,
                   sim_error *err);

/* SMs an overlapped collective's kernels take (components.md 4.4): 0 for
 * collectives that never overlap compute here. */
double step_comm_sms(const fabric *f, enum nc_collective coll, const uint32_t *ranks,
                     unsigned n);

int step_no_memory(sim_error *err);

/* the collective a comm_op kind runs */
enum nc_collective step_coll_of(int kind);

int step_sc_kind(int comm_kind); /* STEP_SC_*, or -1 for PP and DP */
/* 1 when stage s's collectives of kind sc run as flows: a concurrent flow
 * iteration whose representative group spans scale-up domains (EP: its
 * groups are whole replicas, ep divides dp). Their bytes then reach the
 * links from the net, not from the pricing (step_stage_comm). */
int step_sc_on_net(const fabric *f, const workload *w, const step_options *o, unsigned s,
                   int sc);

/* The concurrent iteration's flow log (step_flows.c): the records of the
 * flows the executor starts (netcoll_exec.h's observer), at most cap of
 * them, with each flow's bytes per tier from tier (per link). */
struct nc_exec_flow;
typedef struct step_flow_log {
    size_t cap, n, alloc;
    uint64_t total;         /* every flow started, recorded or not */
    step_flow *flows;
    size_t *slot;           /* per flow net id: its record while it runs, or SIZE_MAX */
    uint32_t n_slots;
    const uint8_t *tier;    /* per link: step_link_tier */
} step_flow_log;

/* a flow starts now: who is its kind, place and phase (the rest is
 * filled here); 0, or -1 when out of memory */
int step_flow_log_start(step_flow_log *l, uint32_t id, double now, const step_flow *who,
                        const struct nc_exec_flow *f);
void step_flow_log_end(step_flow_log *l, uint32_t id, double now);
/* the log into out (which owns it then); l is left empty */
void step_flow_log_give(step_flow_log *l, step_profile *out);
void step_flow_log_free(step_flow_log *l);

#endif
