/* cluster_series.h - what a cluster run (cluster.h) draws and how it looks
 * over time: the IT power of its step series, the exact energy, binned
 * utilisation and queue, and CDF points of wait and slowdown. Pure
 * arithmetic on the result (no XML, no HDF5).
 *
 * IT power with b busy GPUs on m busy nodes (a node is busy when any of its
 * GPUs is), of G GPUs on M nodes (power.h's terms, docs/power.md):
 *   P(b, m) = b P_busy + (G - b) P_idle + m H_busy + (M - m) H_idle + P_fixed
 *   P_busy  = pwr_gpu_w(f) = TDP (f k_c + (1 - f) k_m), f the compute fraction
 *   P_idle  = TDP k_i (the power tier's stopped GPU)
 *   P_fixed = pwr_network_w + storage (the fabric draws the same at any load)
 * b and m change only at job starts and ends, so over the run
 *   E_IT = sum over steps i of P(b_i, m_i) (t_{i+1} - t_i),  t_n = T (exact).
 * Bins: width w, bin k = [k w, (k+1) w) clipped to [0, T]; its values are the
 * time averages of the step function over it (exact integrals).
 * CDF points: the nearest-rank quantile at p = k / n, k = 1..n (p = 1: max).
 */
#ifndef DCSIM_MODELS_CLUSTER_SERIES_H
#define DCSIM_MODELS_CLUSTER_SERIES_H

#include <stddef.h>
#include <stdint.h>

#include "cluster.h"
#include "error.h"
#include "power.h"

typedef struct cluster_power {
    double gpu_busy_w, gpu_idle_w;   /* per GPU */
    double node_busy_w, node_idle_w; /* per node, less its GPUs */
    double fixed_w;                  /* network and storage */
    uint32_t gpus, nodes;
    double compute_frac;             /* f of a busy GPU */
} cluster_power;

/* The levels of a cluster of gpus GPUs in nodes of c->gpus_per_node from
 * the power tier (c passed pwr_config_check; k: the fabric's switches and
 * optics, k->n_nodes ignored). 0, or SIM_ERR_INPUT (bad config, f outside
 * [0, 1], gpus not whole nodes) with *out untouched. */
int cluster_power_levels(const pwr_config *c, const pwr_cluster *k, uint32_t gpus,
                         double compute_frac, cluster_power *out, sim_error *err);

/* P(b, m), W. */
double cluster_it_power_w(const cluster_power *p, uint32_t busy_gpus, uint32_t busy_nodes);

/* The end of step i: the next step's time, or end_s for the last. */
double cluster_step_end_s(const cluster_result *r, uint32_t i);

/* E_IT over [0, r->end_s], J. */
double cluster_it_energy_j(const cluster_power *p, const cluster_result *r);

/* The bin width for a run of end_s seconds: whole hours, the fewest that
 * give at most CLUSTER_MAX_BINS bins (1 h for runs up to 100 h). */
#define CLUSTER_MAX_BINS 100u
double cluster_bin_width_s(double end_s);
uint32_t cluster_bin_count(double end_s, double width_s);

/* Time-average busy GPUs and queued jobs in each of n bins of width_s
 * (caller-owned arrays of n; a bin past T is 0). */
void cluster_bin_series(const cluster_result *r, double width_s, uint32_t n, double *busy_gpus,
                        double *queue);

/* CDF points of the jobs' wait (s) and slowdown: out_wait[k - 1] and
 * out_slowdown[k - 1] the quantiles at k / n, k = 1..n. 0, or SIM_ERR_NOMEM. */
int cluster_cdf_points(const cluster_result *r, uint32_t n, double *out_wait,
                       double *out_slowdown, sim_error *err);

#endif
