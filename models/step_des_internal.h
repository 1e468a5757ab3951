/* step_des_internal.h - the concurrent iteration's state (step_des.c),
 * shared with its symmetry folding (step_fold.c). Private to models/. */
#ifndef DCSIM_MODELS_STEP_DES_INTERNAL_H
#define DCSIM_MODELS_STEP_DES_INTERNAL_H

#include "step_internal.h"

#include "engine.h"
#include "flow_fold.h"
#include "netcoll_exec.h"
#include "packet_exec.h"

/* a plan's tag's low two bits; TAG_STAGE: a TP, CP or EP plan (step_stagecoll.c) */
enum { TAG_PP = 0, TAG_DP = 1, TAG_GATHER = 2, TAG_STAGE = 3 };
/* the executor's classes of traffic (nc_exec_track_links) */
enum { CLASS_PP = 0, CLASS_DP = 1, CLASS_STAGE = 2 };

/* one task shape of the stage collectives on the net: per ((s, dir), ch) */
typedef struct sc_shape {
    unsigned segments;          /* the task runs as this many segments */
    double alone[STEP_SC_KINDS]; /* one segment's plan of the representative group, alone
                                    (0: none of this kind on the net) */
} sc_shape;

/* replica d's stage s's compute timer (step_sm.c): work in seconds at
 * every SM, re-timed when the stage's rate changes */
typedef struct step_sm_timer {
    sim_handler_fn fn;          /* what runs when the work is done */
    unsigned kind;              /* its event kind */
    sim_event_id event;         /* 0: not armed */
    double nominal_end;         /* when it would fire at every SM (armed + work) */
    double mark, work;          /* work left at time mark */
} step_sm_timer;

typedef struct des {
    const workload *w;
    step_run *sr;
    const step_options *o;
    const compute_device *dev;
    step_profile *out;
    fabric *f;
    sim_engine *eng;
    nc_exec *x;                 /* the flow net's executor (NULL on the packet network) */
    pkt_net *pnet;              /* the packet network (o->packet): its net and executor */
    pkx *px;
    pkt_series *pser;           /* o->packet_series_bins: the series, until record */
    sim_error *err;
    int code;
    unsigned P, v, m, D, n_pos; /* D: the replicas simulated (1 when folded) */
    unsigned D_all;             /* the data-parallel replicas */
    size_t per_stage;           /* tasks per stage per replica: 2 m v */
    const sched_task *order;    /* stage by stage, each stage's tasks in run order */
    double *speed;              /* per (d, s): the slowest GPU of the replica's stage */
    uint8_t *nominal;           /* per d: every GPU at speed 1 */
    uint32_t *next;             /* per (d, s): the next task */
    uint8_t *busy;              /* per (d, s) */
    uint8_t *arrived;           /* per ((d, j, mb), dir): input of position j arrived */
    uint32_t *bwd_started;      /* per (d, j) */
    double *t_start, *t_end;    /* per (d, s, k): the k-th task of the stage */
    nc_plan *pp;                /* per ((d, boundary), dir), built on first use */
    double *pp_bytes;           /* per stage: one send, per GPU */
    double *pp_time, *pp_count; /* per (stage below the boundary, dir): summed times */
    /* DP chains, per position j */
    nc_plan *dp_plan, *ag_plan;
    double *last_start, *last_len; /* per (j, d): the chunk's last backward */
    uint32_t *reported;         /* replicas whose last backward of j started */
    uint32_t *bucket_next;      /* the next bucket to start */
    size_t *bucket_first;       /* j's buckets' offset in b_start / b_end */
    double *b_start, *b_end;
    double *chain_end;
    uint32_t *last_ended;       /* per j: replicas whose last backward in segments ended */
    uint8_t *chain_waits;       /* per j: its next bucket waits for those ends */
    /* per stage */
    uint32_t *tasks_left, *chains_left;
    uint8_t *stage_state;       /* 0 running, 1 optimizer and gather, 2 done */
    unsigned *gather_chunk, *gather_bucket;
    double *gather_t0, *gather_s, *gather_sum, *gather_n;
    double iteration;
    /* exact symmetry folding (step_fold.c): replicas 1.. ride with replica 0 */
    flow_fold fold;
    int folded;
    uint32_t *pp_first;         /* per PP plan: its first flow in the fold */
    uint32_t *dp_first, *ag_first; /* per position j */
    /* link utilisation over time (KIND_STEP_SAMPLE every bin_s) */
    double bin_s;
    double *prev_bytes;         /* per link: its bytes at the last sample */
    uint8_t *tier;              /* per link: step_link_tier */
    unsigned tier_links[STEP_TIERS];
    unsigned n_bins, cap_bins;
    double *peak, *mean;        /* per (bin, tier) */
    unsigned stages_done;
    step_flow_log log;          /* every flow of the net, to o->flow_log (step_flows.c) */
    /* TP, CP and EP as flows (step_stagecoll.c); NULL sc_kinds: none on the net */
    uint8_t *sc_kinds;          /* per stage: bit k, kind k's flows on the net */
    sc_shape *sc_shape;         /* per ((s, dir), ch) */
    nc_plan *sc_plan;           /* per (((kind, owner), s, dir), ch), built on first use;
                                   owner the replica (TP, CP) or expert group (EP) */
    uint32_t *sc_seg;           /* per (d, s): the running task's segment */
    double *sc_due, *sc_len;    /* per (d, s): when the segment's time is (was) up, its
                                   length */
    uint8_t *sc_wait;           /* per (d, s): bit k, kind k's flows running; bit 7, the
                                   segment's time not up */
    uint8_t *sc_last;           /* per (d, s): the kind whose flows ended last */
    double *sc_added;           /* per ((d, s), kind): what contention added */
    uint32_t *sc_arrived;       /* per (expert group, s): replicas at the EP plan's start */
    /* SM sharing in the schedule (step_sm.c); NULL sm_q: off */
    double *sm_q;               /* per stage: k / (S - k) of its DP group's kernels */
    unsigned *sm_running;       /* per stage: DP buckets in flight */
    step_sm_timer *sm_timer;    /* per (d, s) */
    double *sm_task;            /* per (d, s, k): what slower SMs added to the k-th task
                                   (the running one is next[d, s]) */
} des;

/* the plan of replica d's send over boundary b, dir 0 forward (b -> b + 1)
 * or 1 backward, built on first use; 0 or an error code */
int step_des_pp_plan(des *z, unsigned d, unsigned b, int dir);

/* Fold the data-parallel replicas into replica 0 where that is exact
 * (step_fold.c): z->folded, z->D and the profile's fold fields say whether
 * it did and why not. After the plans are built, before the executor. 0
 * or an error code. */
int step_des_fold(des *z);

/* the first failure stops the run (its code kept in z->code) */
static inline void step_des_fail(des *z, int code)
{
    if (!z->code)
        z->code = code;
    sim_stop(z->eng);
}

/* Bins of link utilisation: the free-transfer iteration / STEP_BINS_PER_IDEAL
 * wide, at most STEP_MAX_BINS (then sampling stops: 32 x the ideal). */
#define STEP_BINS_PER_IDEAL 128.0
#define STEP_MAX_BINS 4096u

/* step_des_out.c: one bin of link utilisation (KIND_STEP_SAMPLE's handler,
 * data unused), and after the run the links where kinds of traffic
 * overlapped longest (out->hot) */
void step_des_sample(sim_engine *eng, void *ctx, uint64_t data);
void step_des_hot_links(des *z);

/* the engine's handlers step_stagecoll.c shares: a task ends (data d P + s),
 * a plan is done (nc_exec_done_fn) */
void step_des_task_end(sim_engine *eng, void *ctx, uint64_t data);
void step_des_plan_done(void *ctx, uint64_t tag);

/* The stage collectives on the net (step_stagecoll.c). set_up: which kinds
 * of which stages run as flows, their task shapes and state (before the
 * folding, which they turn off); 0 or an error code. task: replica d's
 * stage s starts its next task, of isolated length len, as segments (only
 * where sc_kinds[s]). done: a TAG_STAGE plan (tag >> 2) is done. who: what
 * a starting flow of such a plan belongs to. */
int step_sc_set_up(des *z);
int step_sc_task(des *z, unsigned d, unsigned s, double len);
void step_sc_done(des *z, uint64_t v);
void step_sc_who(const des *z, uint64_t v, step_flow *who);
void step_sc_free(des *z);

/* SM sharing in the schedule (step_sm.c). set_up: each stage's q (none
 * without the concurrent iteration, with sm-sharing="stage-end" or where
 * no stage's DP takes SMs); 0 or an error code. arm: after `work` seconds
 * of compute at every SM, fn(z, ds) runs (an event of kind `kind`); 0 or
 * an error code. dp: delta DP buckets of stage s start (+1) or end (-1).
 * added: what slower SMs added to replica d's stage s. */
int step_sm_set_up(des *z);
int step_sm_arm(des *z, size_t ds, double work, unsigned kind, sim_handler_fn fn);
void step_sm_dp(des *z, unsigned s, int delta);
/* what slower SMs added to the tasks on the critical path of replica d's
 * pipeline, walked back from its last task: each task's predecessor is the
 * stage's task before it where that one's end started it, else the task
 * that sent its input */
double step_sm_on_path(const des *z, unsigned d);
void step_sm_free(des *z);

/* The shared net, one interface for its two backends (step_des.c): the
 * flow net (nc_exec, folded when z->folded) or the packet network (pkx).
 * start: plan p now, done to step_des_plan_done with tag (first: its first
 * flow in the fold, UINT32_MAX unfolded); 0 or an error code (in z->err).
 * link_bytes: bytes fabric link l carried so far (its cell's when folded;
 * the packets that finished crossing it on the packet network). error:
 * the code of a failure inside a running plan (reason in z->err), or 0. */
int step_des_start(des *z, const nc_plan *p, uint32_t first, unsigned cls, uint64_t tag);
/* create: the net once the plans are built and folded (the packet network
 * counts the iteration's packets first and may refuse it); 0 or an error
 * code. free: NULL-safe, either backend. */
int step_des_net_create(des *z);
void step_des_net_free(des *z);
/* the packet network's counters, engine figures and finished series into
 * z->out at the iteration's end; 0, or -1 out of memory */
int step_des_net_record(des *z);
double step_des_link_bytes(des *z, uint32_t l);
int step_des_net_error(des *z);

/* the flow net's link for fabric link l (its cell when folded) */
static inline uint32_t step_des_net_link(const des *z, uint32_t l)
{
    return z->folded ? z->fold.link_cell[l] : l;
}

#endif
