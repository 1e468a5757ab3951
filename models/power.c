/* power.c - cluster IT power per campaign state and the energy of a state
 * timeline (equations in power.h; sources and reasoning in docs/power.md). */
#include "power.h"

#include <math.h>
#include <string.h>

#include "campaign.h"
#include "step.h"

/* Defaults: an 8 x H100 SXM HGX node (V verified, S secondary, U unverified,
 * D derived, A assumption; shared/reference/ hardware.md and calibration.md). */
#define H100_TDP_W 700.0   /* hardware.md 1.2 (S); Llama 3 3.3.1 "at 700W TDP" (S) */
#define HGX_GPUS 8u        /* DGX H100: 8 x H100 SXM5, hardware.md 4 (V) */
/* A: GEMMs hold the GPU near its power cap, the rest of the compute phase
 * (attention, norms, element-wise, optimizer) draws less. */
#define GPU_COMPUTE_FRAC 0.90
/* A: NCCL kernels keep clocks and HBM busy but the tensor cores idle; below
 * half of TDP. The MLPerf node averages (calibration.md 6, S) need the
 * all-waiting node below 5.847 kW: with these defaults it is 5.42 kW. */
#define GPU_COMM_FRAC 0.45
/* A: no vendor idle figure for any GPU (hardware.md 1.2, 8); the only one
 * found, H200 80.3 W (U), is 0.115 of its 700 W. A stopped job keeps its
 * CUDA contexts and clocks, so a little above that. */
#define GPU_IDLE_FRAC 0.15
/* D/A: fitted so that the node computing draws 8 x 0.90 x 700 + 2900 =
 * 7940 W, between 0.76 x 10.2 kW = 7752 W (Newkirk et al., arXiv
 * 2506.14551, V abstract) and the 8.4 kW maximum measured (Latif et al.,
 * arXiv 2412.08602, V abstract). How it splits between CPUs, memory, fans,
 * NICs, NVSwitches, drives and power supplies is not published. */
#define NODE_BUSY_W 2900.0
/* A: CPUs idle and fans slow; memory, NVSwitches, NICs, drives stay on;
 * about half of the busy figure. */
#define NODE_IDLE_W 1500.0
/* A, flagged: no system power found for QM9700, SN5600 or Tomahawk 5
 * switches (hardware.md 3.3, 8); their 51.2 Tb/s ASICs draw about 450 to
 * 500 W (S). Half as much again for the management CPU, fans and power
 * supplies; optics counted separately. */
#define SWITCH_W 750.0
/* NVIDIA MMS4X00-NS twin-port 800G (2 x 400G) OSFP, max 17 W (hardware.md
 * 3.4, V); a single-port 400G module is 9 W (V). */
#define TRANSCEIVER_W 17.0

static const char *const state_names[PWR_STATE_COUNT] = {"compute", "checkpoint", "restart",
                                                         "idle"};

const char *pwr_state_name(int state)
{
    return state >= 0 && state < PWR_STATE_COUNT ? state_names[state] : "?";
}

void pwr_config_default(pwr_config *c)
{
    memset(c, 0, sizeof *c);
    c->gpu_tdp_w = H100_TDP_W;
    c->gpu_compute_tdp_frac = GPU_COMPUTE_FRAC;
    c->gpu_comm_tdp_frac = GPU_COMM_FRAC;
    c->gpu_idle_tdp_frac = GPU_IDLE_FRAC;
    c->gpus_per_node = HGX_GPUS;
    c->node_busy_w = NODE_BUSY_W;
    c->node_idle_w = NODE_IDLE_W;
    for (int t = 0; t < PWR_SWITCH_TIERS; t++)
        c->switch_w[t] = SWITCH_W;
    c->transceiver_w = TRANSCEIVER_W;
    c->storage_w = 0.0;
}

void pwr_config_for(pwr_config *c, double tdp_w, unsigned gpus_per_node)
{
    pwr_config_default(c);
    if (tdp_w > 0)
        c->gpu_tdp_w = tdp_w;
    if (gpus_per_node)
        c->gpus_per_node = gpus_per_node;
}

static int bad_watts(const char *field, double w, sim_error *err)
{
    return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                         "power: %s = %g W must be a finite power >= 0", field, w);
}

int pwr_config_check(const pwr_config *c, sim_error *err)
{
    if (!isfinite(c->gpu_tdp_w) || c->gpu_tdp_w <= 0)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "power: gpu TDP %g W must be > 0", c->gpu_tdp_w);
    const struct {
        const char *name;
        double value;
    } frac[] = {{"GPU computing fraction of TDP", c->gpu_compute_tdp_frac},
                {"GPU communicating fraction of TDP", c->gpu_comm_tdp_frac},
                {"GPU idle fraction of TDP", c->gpu_idle_tdp_frac}};
    for (size_t i = 0; i < sizeof frac / sizeof frac[0]; i++)
        if (!(frac[i].value >= 0 && frac[i].value <= 1))
            return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                                 "power: %s %g must be in [0, 1]", frac[i].name, frac[i].value);
    if (c->gpu_compute_tdp_frac <= 0)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "power: GPU computing fraction of TDP must be > 0");
    /* the swing and the state ordering rest on this */
    if (!(c->gpu_idle_tdp_frac <= c->gpu_comm_tdp_frac &&
          c->gpu_comm_tdp_frac <= c->gpu_compute_tdp_frac))
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "power: GPU fractions of TDP must satisfy idle (%g) <= "
                             "communicating (%g) <= computing (%g)",
                             c->gpu_idle_tdp_frac, c->gpu_comm_tdp_frac,
                             c->gpu_compute_tdp_frac);
    if (c->gpus_per_node < 1)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "power: GPUs per node must be >= 1");
    if (!isfinite(c->node_busy_w) || c->node_busy_w < 0)
        return bad_watts("node busy power", c->node_busy_w, err);
    if (!isfinite(c->node_idle_w) || c->node_idle_w < 0)
        return bad_watts("node idle power", c->node_idle_w, err);
    if (c->node_idle_w > c->node_busy_w)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "power: node idle power %g W must be <= node busy power %g W",
                             c->node_idle_w, c->node_busy_w);
    for (int t = 0; t < PWR_SWITCH_TIERS; t++)
        if (!isfinite(c->switch_w[t]) || c->switch_w[t] < 0)
            return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                                 "power: switch power of tier %d = %g W must be a finite "
                                 "power >= 0", t, c->switch_w[t]);
    if (!isfinite(c->transceiver_w) || c->transceiver_w < 0)
        return bad_watts("transceiver power", c->transceiver_w, err);
    if (!isfinite(c->storage_w) || c->storage_w < 0)
        return bad_watts("storage power", c->storage_w, err);
    return 0;
}

int pwr_cluster_check(const pwr_cluster *k, sim_error *err)
{
    if (k->n_nodes < 1)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "power: the cluster has no nodes");
    return 0;
}

static int is_frac(double f) { return f >= 0 && f <= 1; } /* false for NaN */

double pwr_gpu_w(const pwr_config *c, double compute_frac)
{
    if (!is_frac(compute_frac))
        return NAN;
    return c->gpu_tdp_w * (compute_frac * c->gpu_compute_tdp_frac +
                           (1.0 - compute_frac) * c->gpu_comm_tdp_frac);
}

double pwr_gpu_busy_rise_w(const pwr_config *c, double compute_frac)
{
    return pwr_gpu_w(c, compute_frac) - c->gpu_tdp_w * c->gpu_idle_tdp_frac +
           (c->node_busy_w - c->node_idle_w) / c->gpus_per_node;
}

double pwr_node_w(const pwr_config *c, double compute_frac)
{
    return c->gpus_per_node * pwr_gpu_w(c, compute_frac) + c->node_busy_w;
}

/* GPU and host power of one node in a state; 0, or -1 for a bad state. */
static int node_parts(const pwr_config *c, int state, double compute_frac, double *gpu_w,
                      double *host_w)
{
    double idle_gpu_w = c->gpus_per_node * c->gpu_tdp_w * c->gpu_idle_tdp_frac;
    switch (state) {
    case PWR_STATE_COMPUTE:
        *gpu_w = c->gpus_per_node * pwr_gpu_w(c, compute_frac);
        *host_w = c->node_busy_w;
        return 0;
    case PWR_STATE_CHECKPOINT:
    case PWR_STATE_RESTART:
        *gpu_w = idle_gpu_w;
        *host_w = c->node_busy_w;
        return 0;
    case PWR_STATE_IDLE:
        *gpu_w = idle_gpu_w;
        *host_w = c->node_idle_w;
        return 0;
    default:
        return -1;
    }
}

double pwr_node_state_w(const pwr_config *c, int state, double compute_frac)
{
    double gpu_w, host_w;
    if (node_parts(c, state, compute_frac, &gpu_w, &host_w))
        return NAN;
    return gpu_w + host_w;
}

double pwr_network_w(const pwr_config *c, const pwr_cluster *k)
{
    double w = 0;
    for (int t = 0; t < PWR_SWITCH_TIERS; t++)
        w += (double)k->n_switches[t] * c->switch_w[t];
    return w + (double)k->n_transceivers * c->transceiver_w;
}

int pwr_cluster_levels(const pwr_config *c, const pwr_cluster *k, double compute_frac,
                       pwr_levels *out, sim_error *err)
{
    int rc = pwr_config_check(c, err);
    if (!rc)
        rc = pwr_cluster_check(k, err);
    if (rc)
        return rc;
    if (!is_frac(compute_frac))
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "power: compute fraction %g of the iteration must be in [0, 1]",
                             compute_frac);
    pwr_levels lv;
    memset(&lv, 0, sizeof lv);
    lv.compute_frac = compute_frac;
    lv.network_w = pwr_network_w(c, k);
    lv.storage_w = c->storage_w;
    double n = (double)k->n_nodes;
    for (int s = 0; s < PWR_STATE_COUNT; s++) {
        double gpu_w, host_w;
        node_parts(c, s, compute_frac, &gpu_w, &host_w);
        lv.gpu_w[s] = n * gpu_w;
        lv.host_w[s] = n * host_w;
        lv.state_w[s] = lv.gpu_w[s] + lv.host_w[s] + lv.network_w + lv.storage_w;
    }
    *out = lv;
    return 0;
}

double pwr_compute_frac_of_step(const struct step_profile *p)
{
    if (!p || p->n_stages == 0 || !p->stage)
        return NAN;
    double sum = 0;
    for (unsigned s = 0; s < p->n_stages; s++)
        sum += p->stage[s].compute_fraction;
    return sum / p->n_stages;
}

int pwr_cluster_swing(const pwr_config *c, const pwr_cluster *k, double iteration_s,
                      pwr_swing *out, sim_error *err)
{
    pwr_levels high, low;
    int rc = pwr_cluster_levels(c, k, 1.0, &high, err);
    if (!rc)
        rc = pwr_cluster_levels(c, k, 0.0, &low, err);
    if (rc)
        return rc;
    if (!(isfinite(iteration_s) && iteration_s > 0))
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "power: iteration time %g s must be > 0", iteration_s);
    out->high_w = high.state_w[PWR_STATE_COMPUTE];
    out->low_w = low.state_w[PWR_STATE_COMPUTE];
    /* from the definition, not high - low: no cancellation against the
     * megawatts of steady load */
    out->amplitude_w = (double)k->n_nodes * c->gpus_per_node * c->gpu_tdp_w *
                       (c->gpu_compute_tdp_frac - c->gpu_comm_tdp_frac);
    out->period_s = iteration_s;
    return 0;
}

int pwr_energy_of(const pwr_levels *lv, const pwr_interval *iv, size_t n, pwr_energy *out,
                  sim_error *err)
{
    /* Neumaier-compensated time per state: a long campaign has hundreds of
     * thousands of intervals, and E = sum_s P_s T_s then has one rounding
     * per state instead of one per interval. */
    double sum[PWR_STATE_COUNT] = {0}, comp[PWR_STATE_COUNT] = {0};
    for (size_t i = 0; i < n; i++) {
        int s = iv[i].state;
        double d = iv[i].duration_s;
        if (s < 0 || s >= PWR_STATE_COUNT)
            return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                                 "power: interval %zu has unknown state %d", i, s);
        if (!(isfinite(d) && d >= 0))
            return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                                 "power: interval %zu (%s) has duration %g s; must be >= 0",
                                 i, pwr_state_name(s), d);
        double t = sum[s] + d;
        comp[s] += fabs(sum[s]) >= d ? (sum[s] - t) + d : (d - t) + sum[s];
        sum[s] = t;
    }
    pwr_energy e;
    memset(&e, 0, sizeof e);
    for (int s = 0; s < PWR_STATE_COUNT; s++) {
        e.state_s[s] = sum[s] + comp[s];
        e.state_j[s] = lv->state_w[s] * e.state_s[s];
        e.energy_j += e.state_j[s];
    }
    *out = e;
    return 0;
}

int pwr_state_of_campaign(int campaign_state)
{
    switch (campaign_state) {
    case CAMPAIGN_STATE_COMPUTE: return PWR_STATE_COMPUTE;
    case CAMPAIGN_STATE_CHECKPOINT: return PWR_STATE_CHECKPOINT;
    case CAMPAIGN_STATE_RESTART: return PWR_STATE_RESTART;
    case CAMPAIGN_STATE_MAINTENANCE: return PWR_STATE_IDLE;
    default: return -1;
    }
}
