/* hubs.h - work placed across the East-Data-West-Computing hubs (docs/hubs.md).
 *
 * Several datacenters, each a cluster (models/cluster.h) at a hub; demand
 * from demand centres (origins); a backbone between them. Every job is
 * placed at submission (its arrival) by a policy (hubs_policy.c, one line
 * per policy) among the hubs whose estimated wait is within max_wait:
 *
 *   backlog_h(t) = max(0, backlog_h(t_prev) - G_h (t - t_prev))   GPU-seconds
 *   wait_h(t)    = backlog_h(t) / G_h                              the fluid estimate
 *   placing job j at h: backlog_h += n_j d_j
 *
 * The policy's key is minimised over the eligible hubs with wait <= max_wait
 * and, for a hub with a water limit, the year's estimated water with the job
 * within the limit (not strict policies: fixed and nearest place regardless
 * and the caller reports the overrun); ties: the lower hub index; none
 * within both: the least estimated wait.
 * Then the job's dataset moves origin -> hub on the hub's inbound link, a
 * FIFO fluid queue in order of readiness (arrival + deferral):
 *
 *   start = max(ready, free_in_h)   free_in_h = start + 8 B / bw
 *   submit at the hub = start + 8 B / bw + RTT(origin, hub)   (B > 0; else ready)
 *
 * Each hub is then simulated exactly by cluster_simulate with its jobs as a
 * trace (submit order), and each job's result moves back on the hub's
 * outbound link, FIFO in order of job end: done = max(end, free_out_h) +
 * 8 B / bw + RTT. Data cost = TB moved x cost per TB.
 *
 * Serving jobs have an RTT bound to their users (the origin): a job placed
 * at a hub whose RTT to its origin exceeds the bound counts as an SLO
 * violation (jobs and job-hours); only latency-bounded refuses such hubs.
 */
#ifndef DCSIM_MODELS_HUBS_H
#define DCSIM_MODELS_HUBS_H

#include <stddef.h>
#include <stdint.h>

#include "cluster.h"
#include "hubs_backbone.h"
#include "error.h"

#define HUBS_MAX 32u
#define HUBS_MAX_ORIGINS 8u
#define HUBS_NONE UINT32_MAX

enum hubs_kind { HUBS_TRAINING = 0, HUBS_SERVING = 1 };

/* one job of demand */
typedef struct hubs_job_spec {
    double arrival_s;
    uint32_t gpus;
    double duration_s;
    int32_t priority;
    uint32_t origin;       /* index into the origins */
    int kind;              /* enum hubs_kind */
    double dataset_tb;     /* moved origin -> hub before the job starts */
    double result_tb;      /* moved hub -> origin after it ends */
    double rtt_bound_s;    /* serving: the bound to its users (0: none) */
    double slack_s;        /* training: how long it may be deferred (0: not deferrable) */
} hubs_job_spec;

/* one hub's figures that the policies read */
typedef struct hubs_hub {
    char name[32];
    uint32_t gpus;
    double rtt_s[HUBS_MAX_ORIGINS]; /* to each origin */
    double price_per_kwh;           /* CNY per facility kWh */
    double pue;                     /* the PUE the cheapest key uses */
    double emission_kg_per_kwh, green_share;
    double wue_l_per_kwh;           /* water per IT kWh */
    const double *carbon_hourly;    /* kg/kWh by hour, cyclic with period n_carbon_hours; NULL: flat */
    size_t n_carbon_hours;
    /* a water limit per year of the run (year k: [k, k + 1) x 8,760 h); 0:
     * none. The placement's bound of the hub's water in a year (docs/hubs.md
     * "Water limits", hubs_water.c): with water_hour_l, the water the
     * account would charge the hub's committed load: every job placed there
     * runs n GPUs over [ready + estimated wait, + its run time] (the fluid
     * estimate), each hour's water read from the table at the hour's
     * committed GPUs (capped at the hub's), linear between its levels; the
     * year's bound is the sum over its hours. Without a table (NULL): the
     * idle year, water_idle_year_l, plus n x run time x water_l_per_gpu_s
     * per job in the year of its ready time. Never above water_full_year_l
     * (0: no cap). The caller fills them */
    double water_limit_l, water_idle_year_l, water_l_per_gpu_s;
    const double *water_hour_l;     /* 8,760 x water_levels: hour k of the year (from the run's
                                       start), level q at [k * water_levels + q]; or NULL */
    const double *water_level_gpus; /* the busy GPUs of each level, rising from 0 to gpus */
    unsigned water_levels;
    double water_full_year_l;
    /* the time a job takes at the hub per second of its duration (the
     * duration is on the scenario's GPU; a hub with another GPU type runs
     * it time_scale times as long, docs/hubs.md "Per-hub GPU types"); 0 is
     * read as 1 (exactly the duration) */
    double time_scale;
    /* the same for a serving job: the GPUs it holds at the hub per GPU it
     * asks for (hubs_job_gpus). Decode, the most of serving, is bound by
     * HBM bandwidth, not by the GEMM rate of time_scale's rule (docs/hubs.md
     * "Per-hub GPU types"); 0 is read as 1 */
    double serving_scale;
    /* the IT energy a job adds at the hub per joule it would add on the
     * scenario's GPU: time_scale x what a busy GPU adds to the IT power over
     * an idle one there (the power tier's GPU draw and its node's host share,
     * power.h pwr_gpu_busy_rise_w) over the scenario GPU's; 0 is read as 1.
     * The energy keys
     * (cheapest, lowest-carbon, lowest-water, follow-the-renewables) are
     * per kWh times this: what the job's energy costs there */
    double energy_scale;
    double serving_energy_scale; /* the same for a serving job, with serving_scale */
    /* interference in the keys (docs/hubs.md "Interference in the keys"):
     * the run time a job is expected to take at the hub per second of its
     * isolated run there, the hub's busy GPU-seconds over those without what
     * its fabric's interference added, measured by the cluster tier on a
     * run placed with the isolated keys (sim/app/hubscmd.c); the energy keys
     * and the backlog estimates (fluid, gang, water) read the isolated run
     * time x this. 0 is read as 1 (the keys of the isolated run, bit for bit) */
    double interf_scale;
    /* keys="interfered-size-load" (docs/hubs.md "Interference by job size
     * and load"): each job's own expected slowdown at the hub, indexed by
     * the job's place in interf_jobs (the config's jobs), read instead of
     * interf_scale; NULL: interf_scale */
    const double *interf_job;
    const hubs_job_spec *interf_jobs;
} hubs_hub;

/* the slowdown the placement expects of job j at hub h: its own
 * (interf_job), or the hub's interf_scale; 1 when neither is set */
double hubs_interf_scale(const hubs_hub *h, const hubs_job_spec *j);

/* job j's run time at hub h: a training job's duration x the hub's time
 * scale (its work takes longer on slower GPUs); a serving job's duration
 * (it serves its users for that long, on more GPUs: hubs_job_gpus) */
double hubs_run_time_s(const hubs_hub *h, const hubs_job_spec *j);

/* job j's GPUs at hub h: a training job's own; a serving job's scaled by
 * the hub's time scale, ceil(gpus x scale) (at least 1), the GPUs that
 * serve its load at the hub's speed (UINT32_MAX past any cluster) */
uint32_t hubs_job_gpus(const hubs_hub *h, const hubs_job_spec *j);

/* job j's expected run time at hub h for the placement: hubs_run_time_s x
 * the hub's interf_scale (exactly the run time when it is 0 or 1) */
double hubs_expected_run_s(const hubs_hub *h, const hubs_job_spec *j);

#define HUBS_WATER_YEARS 11u /* the years a ten-year trace's arrivals and slack reach */

typedef struct hubs_policy hubs_policy; /* hubs_policy.c: the table */
const hubs_policy *hubs_policy_find(const char *name);
const char *hubs_policy_name(const hubs_policy *p);
const char *hubs_policy_names(void);
/* what the policy keys on, one line (for the output) */
const char *hubs_policy_rule(const hubs_policy *p);

/* Interference at the hubs (hubs_config.pacers; docs/hubs.md "A fabric at
 * each hub"): make gives the pacer for one simulation of hub h, timing its
 * jobs on a fabric of the hub's own (NULL: none there; NULL with err set:
 * failed), done takes it back after that simulation. */
typedef struct hubs_pacers {
    void *ctx;
    const cluster_pacer *(*make)(void *ctx, unsigned hub, sim_error *err);
    void (*done)(void *ctx, unsigned hub);
} hubs_pacers;

typedef struct hubs_config {
    unsigned n_hubs, n_origins;
    hubs_hub hubs[HUBS_MAX];
    char origin[HUBS_MAX_ORIGINS][32];
    const hubs_policy *policy;
    uint32_t fixed_hub;        /* the fixed policy's hub */
    double max_wait_s;         /* the estimated wait beyond which a hub is passed over */
    int gang_backlog;          /* 0: the fluid backlog estimate; 1: the gang-aware one (the
                                  earliest time the job's GPUs are free together for its run
                                  time in a profile of the committed jobs, hubs_gang.c) */
    double bandwidth_bps;      /* per hub link, each direction (> 0) */
    /* a shared backbone (docs/hubs.md "A shared backbone"; NULL: each hub
     * its own FIFO link in and out at bandwidth_bps): datasets and results
     * are flows on the routes, max-min fair on each link while they overlap
     * (hubs_backbone.h); every job's origin must have a route to every hub */
    const hubs_routes *backbone;
    int backbone_two_pass;     /* with a backbone, 0 (what dcsim runs): datasets and results
                                  share the links in one filling over time, settled with the
                                  hubs' simulations (hubs.c backbone_settle); 1: the datasets
                                  alone, then the results alone (a result never meets a
                                  dataset: the former answer, for the tests) */
    double cost_per_tb;        /* CNY per TB moved */
    const hubs_job_spec *jobs; /* by arrival (non-decreasing) */
    uint32_t n_jobs;
    hubs_pacers pacers;        /* make NULL: no interference (every job its run time) */
    /* moving running jobs (docs/hubs.md "Moving running jobs", hubs_moves.c):
     * a running deferrable training job checkpoints and moves to a hub of a
     * better key, at most max_moves times (0: never; the runs of before bit
     * for bit); restart_s at the new hub before it works again; the move's
     * time = (its dataset + its result, the checkpoint) x 8 / bandwidth_bps
     * + hub_rtt_s[from][to] + restart_s. Not with a backbone or a pacer */
    uint32_t max_moves;
    double restart_s;
    double hub_rtt_s[HUBS_MAX][HUBS_MAX];
} hubs_config;

#define HUBS_MAX_MOVES 16u /* the most moves per job a scenario may allow */

/* one job's placement and transfers (before the hub simulations: start,
 * end, back_done are filled by hubs_simulate) */
typedef struct hubs_job {
    uint32_t hub;
    uint32_t end_hub;          /* the hub it ends at, whose link takes its result back: hub,
                                  or its last move's `to` (hubs_moves.c) */
    double defer_s;            /* follow-the-renewables: whole hours */
    double est_wait_s;         /* the hub's fluid estimate at placement */
    double in_start_s, submit_s; /* dataset on the link from in_start_s; at the hub at submit_s */
    double rtt_s;              /* origin <-> hub */
    int slo_violation;         /* serving beyond its bound */
    double start_s, end_s, back_done_s;
    double interf_s;           /* with a pacer: its run time lost to interference */
    double in_share_s;         /* with a backbone: the dataset's time beyond bits / its path's
                                  least bandwidth (the wait sharing caused); 0 without */
    double back_wait_s;        /* the result's wait: queued on the hub's link (FIFO), or with a
                                  backbone the time sharing added */
    double seg_s;              /* moved (hubs_moves.c): its run at this hub until its first
                                  checkpoint; 0: never moved (its whole run here). end_s is
                                  then its end at the last hub it moved to */
} hubs_job;

/* one move of a running job (hubs_moves.c): the job checkpoints at from at
 * ckpt_s, its checkpoint and dataset cross to `to`, it is submitted there at
 * arrive_s and runs seg_s (restart_s, then its work until the next move or
 * its end) */
typedef struct hubs_move {
    uint32_t job, from, to;
    uint32_t prev;             /* the job's previous move (its segment before this one), or
                                  HUBS_NONE: the segment at its placement hub */
    double ckpt_s, arrive_s;
    double frac;               /* the fraction of the job's work done at the checkpoint */
    double seg_s, start_s, end_s; /* its segment at `to` */
    double tb;                 /* dataset + result: the bytes moved */
} hubs_move;

typedef struct hubs_hub_result {
    uint32_t jobs, serving_jobs;
    double gpu_s;              /* busy GPU-seconds at the hubs (n x the run time there, and
                                  the time interference added) */
    double interf_gpu_s;       /* of which added by interference (0 without a pacer) */
    double ref_gpu_s;          /* the work: n x the duration (on the scenario's GPU);
                                  the same whatever the placement */
    double capacity_gpu_s, utilisation, end_s;
    cluster_stat wait_s;       /* the hub's queue wait (start - submit) */
    double tb_in, tb_out, data_cost;
    double transfer_s;         /* sum over jobs of time from ready to at the hub, and back */
    double link_wait_s;        /* of which queued behind other transfers */
    double serving_rtt_s_sum;  /* for the mean */
    uint32_t slo_jobs;
    double slo_job_h;
    double deferred_s;         /* sum of deferrals */
    uint32_t moves_in;         /* moves that arrived at the hub (hubs_moves.c) */
    double move_tb, move_s;    /* their bytes (not in tb_in, tb_out; in data_cost) and their
                                  time from checkpoint to arrival */
    double restart_gpu_s;      /* of gpu_s: the restarts of the jobs moved in */
    uint64_t digest, events;
    /* filled by the caller (the energy tier, sim/app): */
    double it_energy_j, facility_energy_j, energy_cost, co2_kg, water_l;
} hubs_hub_result;

typedef struct hubs_result {
    uint32_t n_jobs;
    hubs_job *jobs;            /* n_jobs, in the config's order; owned */
    unsigned n_hubs;
    hubs_hub_result hub[HUBS_MAX];
    hubs_hub_result total;     /* sums (waits: over all jobs; digest: hash of the hubs') */
    double horizon_s;          /* the common end of the accounting (hubs_set_horizon) */
    uint32_t fallbacks;        /* placed by least wait: no eligible hub within max_wait
                                  (and its water limit) */
    uint32_t water_passes;     /* jobs that passed over a hub for its water limit */
    double water_est_l[HUBS_MAX]; /* the placement's estimate, the hub's fullest year */
    /* with a backbone: the bits that crossed each directed link (2 l: a -> b,
     * 2 l + 1: b -> a) and the waits sharing caused, datasets and results */
    double link_bits[2 * HUBS_BB_MAX_LINKS];
    double link_busy_s[2 * HUBS_BB_MAX_LINKS]; /* the time a flow was on it */
    double link_peak_bps[2 * HUBS_BB_MAX_LINKS]; /* the most its flows got together */
    double share_in_s, share_out_s;
    uint32_t backbone_rounds;  /* the one filling's rounds until no submission moved (1:
                                  the first held; 0: two passes or no backbone) */
    int shifts_nothing;        /* follow-the-renewables without any hourly profile */
    hubs_move *moves;          /* n_moves, in the order decided (ckpt_s non-decreasing); owned */
    uint32_t n_moves;
} hubs_result;

int hubs_config_check(const hubs_config *c, sim_error *err);

/* what tb TB of job j cost on its route to hub h beyond the scenario's
 * cost per TB: tb x the route's links' cost per TB (0 without a backbone) */
double hubs_link_cost(const hubs_config *c, const hubs_job_spec *j, uint32_t h, double tb);

/* Place every job (policy, backlog, inbound backbone). out->jobs malloc'd.
 * 0, or an error. */
int hubs_place(const hubs_config *c, hubs_result *out, sim_error *err);

/* Simulate each hub with cluster_simulate: tmpl gives the scheduler,
 * placement and node/leaf/SU sizes (gpus and jobs are each hub's; su_gpus
 * is capped at the hub's GPUs); then the results' return transfers and the
 * per-hub and total figures (not the energy ones). per_hub (may be NULL)
 * receives each hub's cluster_result (caller frees each). */
int hubs_simulate(const hubs_config *c, const cluster_config *tmpl, hubs_result *r,
                  cluster_result *per_hub, sim_error *err);

/* Account every hub over [0, horizon_s] (capacity and utilisation; the
 * energy of idle GPUs too): the run's last end by default, the later of two
 * runs' when they are compared. */
void hubs_set_horizon(const hubs_config *c, hubs_result *r, double horizon_s);

/* the energy fields of total as sums of the hubs' (after the caller filled them) */
void hubs_total_energy(hubs_result *r);
void hubs_result_free(hubs_result *r);

/* the hub's carbon intensity (kg/kWh, before green share) at time t_s */
double hubs_carbon_at(const hubs_hub *h, double t_s);

/* Parse a demand trace in CSV: a header naming the columns (any order):
 * arrival_s, gpus, duration_s, origin (a name in origins), kind (training |
 * serving), dataset_tb, result_tb; optional rtt_bound_ms, slack_h,
 * priority. Rows by non-decreasing arrival. 0 with *out (malloc'd), *n; or
 * SIM_ERR_INPUT naming name:line. */
int hubs_trace_parse(const char *text, size_t len, const char *name, char (*origins)[32],
                     unsigned n_origins, uint32_t max_gpus, hubs_job_spec **out, uint32_t *n,
                     sim_error *err);

/* Parse an hourly carbon profile "hour,kg_per_kwh" (header, hours 0..n-1 in
 * order). 0 with *out malloc'd, or SIM_ERR_INPUT naming name:line. */
int hubs_carbon_parse(const char *text, size_t len, const char *name, double **out, size_t *n,
                      sim_error *err);

#endif
