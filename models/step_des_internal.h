/* step_des_internal.h - the concurrent iteration's state (step_des.c),
 * shared with its symmetry folding (step_fold.c). Private to models/. */
#ifndef DCSIM_MODELS_STEP_DES_INTERNAL_H
#define DCSIM_MODELS_STEP_DES_INTERNAL_H

#include "step_internal.h"

#include "engine.h"
#include "flow_fold.h"
#include "netcoll_exec.h"

enum { TAG_PP = 0, TAG_DP = 1, TAG_GATHER = 2 };

typedef struct des {
    const workload *w;
    step_run *sr;
    const step_options *o;
    const compute_device *dev;
    step_profile *out;
    fabric *f;
    sim_engine *eng;
    nc_exec *x;
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
} des;

/* the plan of replica d's send over boundary b, dir 0 forward (b -> b + 1)
 * or 1 backward, built on first use; 0 or an error code */
int step_des_pp_plan(des *z, unsigned d, unsigned b, int dir);

/* Fold the data-parallel replicas into replica 0 where that is exact
 * (step_fold.c): z->folded, z->D and the profile's fold fields say whether
 * it did and why not. After the plans are built, before the executor. 0
 * or an error code. */
int step_des_fold(des *z);

/* the flow net's link for fabric link l (its cell when folded) */
static inline uint32_t step_des_net_link(const des *z, uint32_t l)
{
    return z->folded ? z->fold.link_cell[l] : l;
}

#endif
