/* power.h - the IT power of a training cluster: GPUs, the rest of each node,
 * the fabric and storage, in each state of the campaign, and the energy of a
 * state timeline. Pure arithmetic on config structs (no XML, no GSL).
 *
 * Model (every default, its source and confidence in docs/power.md):
 *   GPU   P_gpu(f) = TDP (f k_c + (1 - f) k_m) during an iteration whose GPUs
 *         compute for a fraction f of it and communicate or wait (exposed
 *         communication, pipeline bubble, stragglers) for the rest;
 *         TDP k_i when the job is stopped. 0 <= k_i <= k_m <= k_c <= 1.
 *   node  P_node(f) = g P_gpu(f) + H_busy (g GPUs per node; H = everything
 *         else in the chassis: CPUs, memory, fans, NICs with their optics,
 *         NVSwitches, drives, power-supply losses), measured at the node input.
 *   net   P_net = sum over tiers t of S_t W_t + X W_x (S_t switches, W_t W
 *         each without optics; X transceivers outside the nodes, W_x each).
 *   IT    P_it(state) = N P_node(state) + P_net + P_storage, where
 *           compute     GPUs at P_gpu(f), hosts busy
 *           checkpoint  GPUs idle, hosts busy (they move the state to storage)
 *           restart     GPUs idle, hosts busy (relaunch, checkpoint load)
 *           idle        GPUs idle, hosts idle (waits for spares, maintenance)
 *         network and storage draw the same in every state.
 *   swing P_it(compute, f = 1) - P_it(compute, f = 0) = N g TDP (k_c - k_m):
 *         every GPU in phase, the hosts steady; its period is the iteration.
 *   E     = sum over intervals of P_it(state) x duration, exactly (per-state
 *         durations are summed with compensation, then weighted).
 * Limits: two power levels inside an iteration (no per-kernel power, no
 * clock/voltage model); host, network and storage power do not follow the
 * load inside a state; per-stage phase offsets are not modelled, so the
 * swing is the in-phase bound.
 */
#ifndef DCSIM_MODELS_POWER_H
#define DCSIM_MODELS_POWER_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define PWR_SWITCH_TIERS 3 /* 0 leaf (host-facing), 1 spine, 2 core / Dragonfly global */

/* Power states of the cluster. Values index tables: append only. */
enum pwr_state {
    PWR_STATE_COMPUTE = 0,
    PWR_STATE_CHECKPOINT = 1,
    PWR_STATE_RESTART = 2,
    PWR_STATE_IDLE = 3,
    PWR_STATE_COUNT
};

/* Per-unit power figures. pwr_config_default gives the sourced defaults
 * (an 8 x H100 SXM HGX node); a scenario overrides any field. */
typedef struct pwr_config {
    double gpu_tdp_w;               /* TDP, > 0 */
    double gpu_compute_tdp_frac;    /* k_c: computing, (0, 1] */
    double gpu_comm_tdp_frac;       /* k_m: exposed communication, bubble, waits */
    double gpu_idle_tdp_frac;       /* k_i: job stopped (checkpoint, restart, waits) */
    unsigned gpus_per_node;         /* g >= 1 */
    double node_busy_w;             /* H_busy: the node less its GPUs, job running */
    double node_idle_w;             /* H_idle <= H_busy: the node less its GPUs, idle */
    double switch_w[PWR_SWITCH_TIERS]; /* W_t per switch of tier t, without optics */
    double transceiver_w;           /* W_x per optical module */
    double storage_w;               /* the storage system, constant; 0 = not modelled */
} pwr_config;

/* What the cluster has. n_transceivers counts the optical modules outside
 * the nodes: both ends of every switch-to-switch cable and the switch end
 * of every node cable. The node end is in node_*_w: the node figure was
 * calibrated on whole-node measurements, which include it. */
typedef struct pwr_cluster {
    uint64_t n_nodes;                        /* N >= 1 */
    uint64_t n_switches[PWR_SWITCH_TIERS];   /* S_t */
    uint64_t n_transceivers;                 /* X */
} pwr_cluster;

/* Fill c with the defaults (docs/power.md). */
void pwr_config_default(pwr_config *c);

/* The defaults for a node of gpus_per_node GPUs of TDP tdp_w (either 0:
 * the default's): how every run's energy account builds its power tier. */
void pwr_config_for(pwr_config *c, double tdp_w, unsigned gpus_per_node);

/* 0, or SIM_ERR_INPUT naming the field and what is allowed (TDP <= 0,
 * a fraction outside [0, 1] or k_c = 0, the fractions out of order
 * idle <= communicating <= computing, a negative or non-finite wattage,
 * node idle above node busy, no GPUs per node). */
int pwr_config_check(const pwr_config *c, sim_error *err);

/* 0, or SIM_ERR_INPUT when the cluster has no nodes. */
int pwr_cluster_check(const pwr_cluster *k, sim_error *err);

/* The functions below take a config that passed pwr_config_check. */

/* One GPU's and one node's average power, W, over an iteration whose GPUs
 * compute for compute_frac of it and communicate or wait for the rest
 * (hosts busy). NaN when compute_frac is outside [0, 1] or not finite. */
double pwr_gpu_w(const pwr_config *c, double compute_frac);
double pwr_node_w(const pwr_config *c, double compute_frac);

/* The IT power, W, that one GPU adds when it goes from idle to busy at
 * compute_frac: its draw then less its idle draw, plus its share of its
 * node's host rise (node busy less node idle, over the node's GPUs). What a
 * job's GPU-second adds to a site's bill; the hubs' energy keys compare it
 * across GPU types. NaN for a bad fraction. */
double pwr_gpu_busy_rise_w(const pwr_config *c, double compute_frac);

/* One node's power, W, in a state (compute_frac is used in
 * PWR_STATE_COMPUTE only). NaN for an unknown state or a bad fraction. */
double pwr_node_state_w(const pwr_config *c, int state, double compute_frac);

/* Switches and transceivers, W: sum_t n_switches[t] switch_w[t] +
 * n_transceivers transceiver_w, in that order. */
double pwr_network_w(const pwr_config *c, const pwr_cluster *k);

/* The cluster's IT power in every state, and its parts. */
typedef struct pwr_levels {
    double compute_frac;                /* the iteration split used for COMPUTE */
    double state_w[PWR_STATE_COUNT];    /* IT power: the sum of the parts below */
    double gpu_w[PWR_STATE_COUNT];      /* of which all GPUs */
    double host_w[PWR_STATE_COUNT];     /* of which the nodes less their GPUs */
    double network_w;                   /* of which the fabric (every state) */
    double storage_w;                   /* of which storage (every state) */
} pwr_levels;

/* Levels for a campaign whose iterations compute for compute_frac of the
 * time on every GPU: pwr_compute_frac_of_step of a step profile, or a
 * single busy fraction when there is none. Returns 0 and fills *out, or
 * SIM_ERR_INPUT (bad config or cluster, compute_frac outside [0, 1]) with
 * *out untouched. */
int pwr_cluster_levels(const pwr_config *c, const pwr_cluster *k, double compute_frac,
                       pwr_levels *out, sim_error *err);

/* The iteration's compute fraction, averaged over the GPUs: the mean of
 * the stages' compute_fraction (every stage has dp cp tp GPUs). Exposed
 * communication and the bubble make up the rest, at the communicating
 * level. NaN for a profile without stages. */
struct step_profile;
double pwr_compute_frac_of_step(const struct step_profile *p);

/* The per-iteration swing the grid sees: the cluster computing on every
 * GPU (high_w) and communicating or waiting on every GPU (low_w), hosts
 * busy; amplitude_w = high_w - low_w = N g TDP (k_c - k_m); period_s = the
 * iteration time. Returns 0, or SIM_ERR_INPUT (bad config or cluster,
 * iteration_s not > 0) with *out untouched. */
typedef struct pwr_swing {
    double high_w, low_w, amplitude_w, period_s;
} pwr_swing;
int pwr_cluster_swing(const pwr_config *c, const pwr_cluster *k, double iteration_s,
                      pwr_swing *out, sim_error *err);

/* One interval of a state timeline. */
typedef struct pwr_interval {
    int state;          /* enum pwr_state */
    double duration_s;  /* >= 0 */
} pwr_interval;

typedef struct pwr_energy {
    double energy_j;                     /* sum over states of state_j */
    double state_j[PWR_STATE_COUNT];     /* state_w x state_s */
    double state_s[PWR_STATE_COUNT];     /* time in each state */
} pwr_energy;

/* Energy of n intervals at the levels lv. Returns 0 and fills *out, or
 * SIM_ERR_INPUT naming the first bad interval (unknown state, negative or
 * non-finite duration) with *out untouched. n = 0 gives 0 J. */
int pwr_energy_of(const pwr_levels *lv, const pwr_interval *iv, size_t n, pwr_energy *out,
                  sim_error *err);

/* The power state of a campaign state (campaign.h): compute, checkpoint and
 * restart map to theirs, maintenance to idle; -1 for done or unknown (the
 * run is over: its power is not the job's). */
int pwr_state_of_campaign(int campaign_state);

const char *pwr_state_name(int state); /* "compute", "checkpoint", "restart", "idle"; "?" */

#endif
