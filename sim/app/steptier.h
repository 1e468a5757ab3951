/* steptier.h - the step tier from a scenario: one iteration simulated on
 * the scenario's cluster (models/step.h), and profiles cached by cluster
 * state for the campaign's what-ifs (elastic replicas, stragglers). */
#ifndef DCSIM_APP_STEPTIER_H
#define DCSIM_APP_STEPTIER_H

#include <stddef.h>
#include <stdint.h>

#include "scenario.h"
#include "step.h"
#include "step_fault.h"

struct app_packet_cfg;

/* Simulate one iteration of the scenario's job on its cluster, GPU g at
 * gpu_speed[g] of nominal speed (g < n_gpu_speed; the others, or all when
 * gpu_speed is NULL, at 1: the run plan's speeds, run.h). Needs
 * <cluster><fabric> and <job><parallelism>. Returns 0, or the error's code
 * with a one-line reason in err (no file: the caller names the scenario;
 * SIM_ERR_NOMEM when out of memory, else SIM_ERR_INPUT). Free the profile
 * with step_profile_free. */
int app_step_profile(const scn_scenario *s, const double *gpu_speed, unsigned n_gpu_speed,
                     step_profile *out, sim_error *err);
/* What app_step_profile simulates with: the scenario's workload, device,
 * fabric (built) and step options with the given speeds. 0, or an error
 * with nothing held; else free w and f (workload_free, fabric_free). */
int app_step_inputs(const scn_scenario *s, const double *gpu_speed, unsigned n_gpu_speed,
                    workload *w, compute_device *dev, fabric *f, step_options *o,
                    sim_error *err);
/* The same, with a progress hook for the concurrent iteration
 * (step_options.poll; poll may be NULL). */
int app_step_profile_polled(const scn_scenario *s, const double *gpu_speed, unsigned n_gpu_speed,
                            int (*poll)(void *ctx, double sim_time_s, uint64_t events),
                            void *poll_ctx, step_profile *out, sim_error *err);
/* The same on the packet network (network="packet", `dcsim step` only):
 * the tier's parameters pc (packetcfg.h) and the admission hook
 * (step_options.packet_admit; may be NULL). Without pc a scenario with
 * network="packet" is refused. */
typedef struct app_step_packet {
    const pkt_config *cfg;
    int (*admit)(void *ctx, double packets, double packet_hops, sim_error *err);
    void *admit_ctx;
    double series_dt_s;        /* > 0 with series_bins: keep the time series */
    uint32_t series_bins;      /* (step_options.packet_series_*) */
} app_step_packet;
int app_step_profile_packet(const scn_scenario *s, const double *gpu_speed,
                            unsigned n_gpu_speed,
                            int (*poll)(void *ctx, double sim_time_s, uint64_t events),
                            void *poll_ctx, const app_step_packet *pk, step_profile *out,
                            sim_error *err);

/* One iteration before and under a failure state (models/step_fault.h;
 * dcsim step --fail): the scenario's fabric as built, then degraded by st,
 * and the links whose bytes per iteration changed most. Returns 0, or an
 * error code with a one-line reason in err (as app_step_profile; the
 * state's refusals: ids, GPUs cut off, routes). Free with
 * app_step_failure_free. */
#define APP_STEP_CHANGES 8
typedef struct app_step_failure {
    step_profile before, after;
    uint64_t digest;                 /* ff_state_digest */
    uint32_t links_down, links_slow; /* directed links */
    unsigned n_changes;
    step_link_change changes[APP_STEP_CHANGES];
} app_step_failure;
int app_step_failed(const scn_scenario *s, const double *gpu_speed, unsigned n_gpu_speed,
                    int (*poll)(void *ctx, double sim_time_s, uint64_t events), void *poll_ctx,
                    const ff_state *st, app_step_failure *out, sim_error *err);
void app_step_failure_free(app_step_failure *x); /* NULL-safe */

/* <step network="packet"/> in dcsim run: the tier's parameters from the
 * scenario alone (packetcfg.h without options; written into pc) and the
 * iteration's time series by dcsim netbench's default bins (one MTU on the
 * fabric link, at most TRACE_DEFAULT_BINS: packet_trace.h) in
 * out->packet_series. As app_step_profile otherwise. */
int app_step_profile_run_packet(const scn_scenario *s, const double *gpu_speed,
                                unsigned n_gpu_speed, struct app_packet_cfg *pc,
                                step_profile *out, sim_error *err);

/* Profiles cached by cluster state, so the campaign can ask again cheaply
 * when the state changes back and forth (fewer data-parallel replicas after
 * a failure, a degraded link, a straggler): the key is the replica count
 * plus a caller's 64-bit digest of everything else it changed in the
 * scenario copy it passes. Least recently used profiles go first. */
typedef struct step_cache step_cache;
/* Every profile with the per-GPU speeds gpu_speed[0 .. n_gpu_speed) (as
 * app_step_profile's; NULL: nominal), which must outlive the cache. */
step_cache *step_cache_create(size_t capacity, const double *gpu_speed, unsigned n_gpu_speed);
void step_cache_free(step_cache *c); /* NULL-safe */
/* The profile of s with dp data-parallel replicas (the GPUs in use shrink
 * to tp cp pp dp; the global batch shrinks with them at the same
 * micro-batches per replica); NULL with err filled (as app_step_profile) on
 * failure. Owned by the cache, valid until the next call. */
const step_profile *step_cache_get(step_cache *c, const scn_scenario *s, unsigned dp,
                                   uint64_t state, sim_error *err);
size_t step_cache_simulations(const step_cache *c); /* misses so far */

#endif
