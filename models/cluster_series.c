/* cluster_series.c - IT power, energy, bins and CDF points of a cluster run
 * (equations in cluster_series.h). O(steps) for the energy, O(steps + bins)
 * for the bins, O(jobs log jobs) for the CDF points.
 */
#include "cluster_series.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int cluster_power_levels(const pwr_config *c, const pwr_cluster *k, uint32_t gpus,
                         double compute_frac, cluster_power *out, sim_error *err)
{
    int rc = pwr_config_check(c, err);
    if (rc)
        return rc;
    if (!(compute_frac >= 0 && compute_frac <= 1))
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "cluster power: compute fraction %g "
                             "must be in [0, 1]", compute_frac);
    if (gpus < 1 || gpus % c->gpus_per_node)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "cluster power: %u GPUs are not a "
                             "whole number of nodes of %u", gpus, c->gpus_per_node);
    cluster_power p;
    memset(&p, 0, sizeof p);
    p.gpu_busy_w = pwr_gpu_w(c, compute_frac);
    /* the power tier's stopped GPU: a node's idle GPU draw over its GPUs */
    p.gpu_idle_w = (pwr_node_state_w(c, PWR_STATE_IDLE, 0) - c->node_idle_w) / c->gpus_per_node;
    p.node_busy_w = c->node_busy_w;
    p.node_idle_w = c->node_idle_w;
    p.fixed_w = pwr_network_w(c, k) + c->storage_w;
    p.gpus = gpus;
    p.nodes = gpus / c->gpus_per_node;
    p.compute_frac = compute_frac;
    *out = p;
    return 0;
}

double cluster_it_power_w(const cluster_power *p, uint32_t busy_gpus, uint32_t busy_nodes)
{
    return (double)busy_gpus * p->gpu_busy_w + (double)(p->gpus - busy_gpus) * p->gpu_idle_w +
           (double)busy_nodes * p->node_busy_w + (double)(p->nodes - busy_nodes) * p->node_idle_w +
           p->fixed_w;
}

double cluster_step_end_s(const cluster_result *r, uint32_t i)
{
    return i + 1 < r->n_steps ? r->steps[i + 1].t_s : r->end_s;
}

double cluster_it_energy_j(const cluster_power *p, const cluster_result *r)
{
    double e = 0;
    for (uint32_t i = 0; i < r->n_steps; i++) {
        const cluster_step *s = &r->steps[i];
        double dt = cluster_step_end_s(r, i) - s->t_s;
        if (dt > 0)
            e += cluster_it_power_w(p, s->busy_gpus, s->busy_nodes) * dt;
    }
    return e;
}

double cluster_bin_width_s(double end_s)
{
    double hours = ceil(end_s / 3600 / CLUSTER_MAX_BINS);
    if (hours < 1)
        hours = 1;
    while (ceil(end_s / (3600 * hours)) > CLUSTER_MAX_BINS) /* rounding at a whole number */
        hours++;
    return 3600 * hours;
}

uint32_t cluster_bin_count(double end_s, double width_s)
{
    double n = ceil(end_s / width_s);
    return n < 1 ? 1 : (uint32_t)n;
}

void cluster_bin_series(const cluster_result *r, double width_s, uint32_t n, double *busy_gpus,
                        double *queue)
{
    memset(busy_gpus, 0, (size_t)n * sizeof *busy_gpus);
    memset(queue, 0, (size_t)n * sizeof *queue);
    for (uint32_t i = 0; i < r->n_steps; i++) { /* each step's area into the bins it covers */
        const cluster_step *s = &r->steps[i];
        double lo = s->t_s, hi = cluster_step_end_s(r, i);
        for (uint32_t k = (uint32_t)(lo / width_s); k < n && lo < hi; k++) {
            double top = fmin(hi, width_s * (k + 1));
            if (top > lo) {
                busy_gpus[k] += s->busy_gpus * (top - lo);
                queue[k] += s->queue * (top - lo);
            }
            lo = fmax(lo, top);
        }
    }
    for (uint32_t k = 0; k < n; k++) { /* the bin's length inside [0, T] */
        double len = fmin(r->end_s, width_s * (k + 1)) - width_s * k;
        busy_gpus[k] = len > 0 ? busy_gpus[k] / len : 0;
        queue[k] = len > 0 ? queue[k] / len : 0;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int cluster_cdf_points(const cluster_result *r, uint32_t n, double *out_wait,
                       double *out_slowdown, sim_error *err)
{
    uint32_t m = r->n_jobs;
    double *v = malloc(((size_t)m * 2 + 1) * sizeof *v);
    if (!v)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "cluster: out of memory");
    for (uint32_t i = 0; i < m; i++) {
        const cluster_job *j = &r->jobs[i];
        double run = j->end_s - j->start_s, wait = j->start_s - j->spec.submit_s;
        v[i] = wait;
        v[m + i] = (wait + run) / run;
    }
    qsort(v, m, sizeof *v, cmp_double);
    qsort(v + m, m, sizeof *v, cmp_double);
    for (uint32_t k = 1; k <= n; k++) { /* nearest rank, as cluster.c's P50/P90/P99 */
        double rank = ceil((double)k / n * m);
        uint32_t at = m ? (uint32_t)(rank < 1 ? 1 : rank > m ? m : rank) - 1 : 0;
        out_wait[k - 1] = m ? v[at] : 0;
        out_slowdown[k - 1] = m ? v[m + at] : 0;
    }
    free(v);
    return 0;
}
