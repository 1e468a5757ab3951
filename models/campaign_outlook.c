/* campaign_outlook.c - what the campaign decides before it simulates: the
 * configuration's checks, the iteration count and checkpoint cadence, the
 * closed-form outlook (expected ETTR and engine events, docs/design.md)
 * with the refusal of runs it says cannot finish, and Daly's interval.
 * Pure functions of the configuration: no engine, no random numbers.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "campaign.h"
#include "campaign_internal.h"
#include "failure_process.h"

double campaign_iteration_time_s(const campaign_config *cfg)
{
    double tokens = fmin(cfg->tokens_per_iteration, cfg->train_tokens);
    return 6.0 * cfg->model_params * tokens /
           ((double)cfg->gpu_count * cfg->gpu_peak_flops_per_s * cfg->mfu_frac);
}

/* A cause the campaign can run: a rate, parameters its failure process
 * accepts, and a unit; racks, switches and cables on one shared stream, so
 * memoryless; switches and cables with a part count and never silent. */
static int cause_ok(const campaign_config *cfg, const campaign_cause *x)
{
    const failure_process *fp = failure_process_get(x->process);
    int memoryless = failure_process_is_memoryless(x->process);
    if (!(x->rate_per_s >= 0 && isfinite(x->rate_per_s)) || !fp || fp->check(x))
        return 0;
    switch (x->unit) {
    case CAMPAIGN_UNIT_GPU:
    case CAMPAIGN_UNIT_NODE:
        return 1;
    case CAMPAIGN_UNIT_RACK:
        return cfg->nodes_per_rack > 0 && memoryless;
    case CAMPAIGN_UNIT_SWITCH:
    case CAMPAIGN_UNIT_CABLE:
    case CAMPAIGN_UNIT_NIC:
    case CAMPAIGN_UNIT_TRANSCEIVER:
        return x->parts > 0 && memoryless && x->detection_s == 0;
    default:
        return 0;
    }
}

int campaign_config_check(const campaign_config *cfg, sim_error *err)
{
#define REQUIRE(cond, ...) \
    if (!(cond))           \
    return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, __VA_ARGS__)
    REQUIRE(cfg->gpu_count >= 1, "campaign: gpu count must be at least 1");
    REQUIRE(cfg->gpu_peak_flops_per_s > 0 && isfinite(cfg->gpu_peak_flops_per_s),
            "campaign: GPU peak FLOP/s must be positive");
    REQUIRE(cfg->mfu_frac > 0 && cfg->mfu_frac <= 1, "campaign: MFU must be in (0, 1]");
    REQUIRE(cfg->model_params > 0 && isfinite(cfg->model_params),
            "campaign: parameter count must be positive");
    REQUIRE(cfg->train_tokens > 0 && isfinite(cfg->train_tokens),
            "campaign: training tokens must be positive");
    REQUIRE(cfg->tokens_per_iteration > 0 && isfinite(cfg->tokens_per_iteration),
            "campaign: tokens per iteration must be positive");
    REQUIRE(cfg->train_tokens / cfg->tokens_per_iteration < 9e15,
            "campaign: more than 9e15 iterations");
    REQUIRE(cfg->n_causes <= CAMPAIGN_MAX_CAUSES, "campaign: at most %d failure causes",
            CAMPAIGN_MAX_CAUSES);
    for (unsigned i = 0; i < cfg->n_causes; i++)
        REQUIRE(cause_ok(cfg, &cfg->causes[i]),
                "campaign: failure cause %u needs a rate >= 0, a Weibull shape of 0 "
                "(exponential) or from 1/170 to 100, and a GPU, node, rack, switch, "
                "cable, NIC or transceiver unit (racks: nodes per rack set; racks and network parts: "
                "exponential; network parts: a part count, not silent)", i);
    for (unsigned i = 0; i < cfg->n_causes; i++) {
        const campaign_cause *x = &cfg->causes[i];
        REQUIRE(x->repair_s >= 0 && isfinite(x->repair_s) && x->slow_speed >= 0 &&
                    x->slow_speed < 1 && (x->slow_speed == 0 || x->repair_s > 0),
                "campaign: failure cause %u needs a repair time >= 0 and a slow speed in "
                "[0, 1) (above 0 only with a repair time)", i);
        REQUIRE(x->repair_s == 0 || (campaign_unit_is_fabric_part(x->unit) && cfg->fabric_speed),
                "campaign: failure cause %u: a repair time is for switches, cables, NICs and "
                "transceivers on a degraded fabric (fabric_speed set)", i);
        REQUIRE(!x->flaps || (x->unit == CAMPAIGN_UNIT_CABLE && x->repair_s > 0 &&
                              x->slow_speed == 0 && x->flap_down_s > 0 && x->flap_up_s > 0 &&
                              isfinite(x->flap_down_s) && isfinite(x->flap_up_s)),
                "campaign: failure cause %u flaps: a cable with a repair time, down, not "
                "slow, with flap down and up times above 0", i);
        REQUIRE(x->flap_law == CAMPAIGN_FLAP_FIXED || x->flap_law == CAMPAIGN_FLAP_EXPONENTIAL,
                "campaign: failure cause %u: flap law %d (fixed 0 or exponential 1)", i,
                x->flap_law);
    }
    REQUIRE(cfg->fabric_policy >= CAMPAIGN_FABRIC_REPLACE &&
                cfg->fabric_policy <= CAMPAIGN_FABRIC_SHRINK,
            "campaign: the degraded-fabric policy must be replace, restart, wait or shrink");
    REQUIRE(cfg->fabric_policy != CAMPAIGN_FABRIC_SHRINK ||
                (cfg->fabric_speed && cfg->fabric_cuts && cfg->fabric_kept),
            "campaign: the shrink policy needs fabric_speed, fabric_cuts and fabric_kept");
    REQUIRE(cfg->gpu_failure_rate_per_s >= 0 && isfinite(cfg->gpu_failure_rate_per_s),
            "campaign: failure rate must be zero or positive");
    REQUIRE(cfg->restart_s >= 0 && isfinite(cfg->restart_s),
            "campaign: restart time must be zero or positive");
    REQUIRE(cfg->straggler_rate_per_s >= 0 && isfinite(cfg->straggler_rate_per_s) &&
                (cfg->straggler_rate_per_s == 0 ||
                 (cfg->straggler_speed > 0 && cfg->straggler_speed <= 1 &&
                  cfg->straggler_drain_s >= 0 && isfinite(cfg->straggler_drain_s))),
            "campaign: stragglers need a rate >= 0, a speed in (0, 1] and a drain delay >= 0");
    REQUIRE(!cfg->throttle_hours ||
                (cfg->throttle_hot && cfg->throttle_speed > 0 && cfg->throttle_speed <= 1),
            "campaign: thermal throttling needs its hours and a speed in (0, 1]");
    REQUIRE(cfg->health_check_s >= 0 && isfinite(cfg->health_check_s) &&
                cfg->collective_timeout_s >= 0 && isfinite(cfg->collective_timeout_s),
            "campaign: health-check period and collective timeout must be zero or positive");
    REQUIRE(cfg->checkpoint_every > 0 ||
                (cfg->checkpoint_interval_s > 0 && isfinite(cfg->checkpoint_interval_s)),
            "campaign: checkpoint interval must be positive");
    REQUIRE(!cfg->elastic_replicas || cfg->spares_limited,
            "campaign: elastic continuation needs a limited spare pool");
    REQUIRE(!cfg->spare_group_nodes || (cfg->spares_limited && !cfg->elastic_replicas),
            "campaign: spare pools per group need a limited pool, and no elastic continuation");
    REQUIRE(!cfg->elastic_speed || (cfg->elastic_replicas && cfg->elastic_max_missing &&
                                    cfg->elastic_max_missing < cfg->elastic_replicas),
            "campaign: an elastic speed table needs fewer missing replicas than replicas");
    for (unsigned k = 1; cfg->elastic_speed && k <= cfg->elastic_max_missing; k++)
        REQUIRE(cfg->elastic_speed[k] > 0 && cfg->elastic_speed[k] <= 1 &&
                    isfinite(cfg->elastic_speed[k]),
                "campaign: elastic speeds must lie in (0, 1]");
    REQUIRE(!cfg->spares_limited || (cfg->swap_s >= 0 && isfinite(cfg->swap_s) &&
                                     cfg->repair_mean_s >= 0 && isfinite(cfg->repair_mean_s)),
            "campaign: swap and repair times must be zero or positive");
    REQUIRE(!cfg->checkpoint_async ||
                (cfg->checkpoint_snapshot_s >= 0 && isfinite(cfg->checkpoint_snapshot_s) &&
                 cfg->persist_slowdown >= 0 && cfg->persist_slowdown < 1),
            "campaign: async checkpoints need a snapshot time >= 0 and a slowdown in [0, 1)");
    REQUIRE(!(cfg->maintenance_every_s > 0) ||
                (isfinite(cfg->maintenance_every_s) && cfg->maintenance_s >= 0 &&
                 cfg->maintenance_s < cfg->maintenance_every_s && !cfg->checkpoint_async),
            "campaign: maintenance windows need a duration shorter than their period, and "
            "blocking checkpoints");
    REQUIRE(cfg->checkpoint_write_s >= 0 && isfinite(cfg->checkpoint_write_s),
            "campaign: checkpoint write time must be zero or positive");
    REQUIRE(cfg->checkpoint_adapt_window_s >= 0 &&
                (cfg->checkpoint_adapt_window_s == 0 ||
                 (cfg->checkpoint_adapt_window_s < INFINITY && !cfg->checkpoint_every &&
                  cfg->checkpoint_write_s > 0 && cfg->checkpoint_adapt_prior_rate_per_s >= 0 &&
                  isfinite(cfg->checkpoint_adapt_prior_rate_per_s))),
            "campaign: an adaptive checkpoint interval needs a finite memory, an interval "
            "(not every), a write time above 0 and a prior failure rate >= 0");
#undef REQUIRE
    return 0;
}

uint64_t campaign_iteration_count(const campaign_config *cfg)
{
    uint64_t n = (uint64_t)ceil(cfg->train_tokens / cfg->tokens_per_iteration); /* < 9e15: checked */
    return n ? n : 1;
}

/* Iterations per checkpoint: round(tau / t_it) in [1, n_it]. The ratio is
 * compared before it is rounded, so an interval longer than the run (or an
 * infinite ratio) is "only the final checkpoint", never an overflowed cast. */
uint64_t campaign_cadence(const campaign_config *cfg, double t_it, uint64_t n_it)
{
    if (cfg->checkpoint_every)
        return cfg->checkpoint_every < n_it ? cfg->checkpoint_every : n_it;
    double ratio = cfg->checkpoint_interval_s / t_it;
    if (!(ratio < (double)n_it)) /* also NaN */
        return n_it;
    long long k = llround(ratio); /* ratio < n_it < 9e15: representable */
    return k < 1 ? 1 : (uint64_t)k;
}
void campaign_outlook_of(const campaign_config *cfg, campaign_outlook *o)
{
    memset(o, 0, sizeof *o);
    campaign_rate_split rs;
    double lambda = campaign_split_rates(cfg, &rs);
    double t_it = campaign_iteration_time_s(cfg);
    uint64_t n_it = campaign_iteration_count(cfg);
    double every = (double)campaign_cadence(cfg, t_it, n_it);
    double compute = cfg->train_tokens * 6.0 * cfg->model_params /
                     ((double)cfg->gpu_count * cfg->gpu_peak_flops_per_s * cfg->mfu_frac);
    double x = fmin(every * t_it, compute); /* one checkpoint interval of compute */
    double d = x + (cfg->checkpoint_async ? cfg->checkpoint_snapshot_s : 0) +
               cfg->checkpoint_write_s; /* until it is durable */
    double u = cfg->restart_s + campaign_mean_detection_s(cfg) +
               (cfg->spares_limited ? cfg->swap_s : 0);
    o->interruption_rate_per_s = lambda;
    o->segment_s = d;
    o->restart_s = u;
    o->compute_time_s = compute;
    /* ln of elapsed / compute: (e^{L d} - 1) e^{L u} / (L x), the mean time
     * to get d seconds without a failure when each failure costs a restart
     * (itself restarted by a failure), per x of compute */
    double ld = lambda * d, log_ratio;
    if (!(lambda < INFINITY)) /* the rates' sum overflowed: no progress at all */
        log_ratio = INFINITY;
    else if (!(lambda > 0))
        log_ratio = log(d / x);
    else if (ld > 30)
        log_ratio = ld + log1p(-exp(-ld)) + lambda * u - log(lambda * x);
    else
        log_ratio = log(expm1(ld)) + lambda * u - log(lambda * x);
    /* maintenance: every P a window of m, preceded by a write and followed
     * by a restart; what is left of P computes, in whole iterations */
    double maint_frac = 1;
    if (cfg->maintenance_every_s > 0) {
        double P = cfg->maintenance_every_s;
        double left = P - cfg->maintenance_s - cfg->checkpoint_write_s - cfg->restart_s;
        maint_frac = left >= t_it ? floor(fmin(left / t_it, 9e15)) * t_it / P : 0;
    }
    o->log_elapsed_per_compute = log_ratio - log(maint_frac); /* +inf when no progress */
    o->expected_ettr_frac = exp(-o->log_elapsed_per_compute);
    /* engine events over the expected duration (up to the give-up horizon):
     * ~3 per checkpoint interval (segment, write, persist), ~5 per failure
     * (failure, detection, repair, restart, the segment again), 2 per
     * straggler spell (it, its drain), ~4 per window; a limited pool may
     * wait up to a repair per failure */
    double t = compute * fmin(exp(fmin(o->log_elapsed_per_compute, 700)),
                              2 * CAMPAIGN_GIVE_UP_FACTOR);
    if (cfg->spares_limited)
        t += lambda * t * cfg->repair_mean_s;
    if (cfg->straggler_rate_per_s > 0)
        t /= cfg->straggler_speed;
    if (cfg->throttle_hours) /* every hour hot at worst; a change per hour at most */
        t /= cfg->throttle_speed;
    double fabric = 0; /* parts down or slow until repaired: a failure and a repair each */
    for (unsigned i = 0; i < cfg->n_causes && i < CAMPAIGN_MAX_CAUSES; i++)
        if (cfg->causes[i].repair_s > 0)
            fabric += (double)cfg->causes[i].parts * cfg->causes[i].rate_per_s;
    double events = 16 + 3 * compute / x + 5 * lambda * t + 2 * fabric * t +
                    2 * (double)rs.n_nodes * cfg->straggler_rate_per_s * t +
                    (cfg->maintenance_every_s > 0 ? 4 * t / cfg->maintenance_every_s : 0) +
                    (cfg->throttle_hours ? t / 3600.0 : 0);
    o->expected_events = isfinite(events) ? events : INFINITY;
}

int campaign_check_outlook(const campaign_config *cfg, const campaign_outlook *o, sim_error *err)
{
    if (!(o->compute_time_s <= CAMPAIGN_MAX_COMPUTE_S))
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "the failure-free compute time is %.3g s (%.3g years): at most "
                             "%.3g s (event times must stay exact to the second up to %g times "
                             "it); check the GPU's peak, the MFU and the model and token counts",
                             o->compute_time_s, o->compute_time_s / (365.25 * 86400),
                             CAMPAIGN_MAX_COMPUTE_S, CAMPAIGN_GIVE_UP_FACTOR);
    if (cfg->maintenance_every_s > 0 && !(o->log_elapsed_per_compute < INFINITY)) {
        double t_it = campaign_iteration_time_s(cfg);
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "the job can make no progress: a maintenance window every %.4g s "
                             "leaves %.4g s after the window (%.4g s), the write (%.4g s) and "
                             "the restart (%.4g s), less than one iteration (%.4g s); allowed: "
                             "a period longer than their sum",
                             cfg->maintenance_every_s,
                             cfg->maintenance_every_s - cfg->maintenance_s -
                                 cfg->checkpoint_write_s - cfg->restart_s,
                             cfg->maintenance_s, cfg->checkpoint_write_s, cfg->restart_s, t_it);
    }
    if (!(o->log_elapsed_per_compute <= log(CAMPAIGN_GIVE_UP_FACTOR))) {
        char ettr[32], maint[96] = "";
        if (o->expected_ettr_frac >= 1e-300 || !(o->log_elapsed_per_compute < INFINITY))
            snprintf(ettr, sizeof ettr, "%.3g", o->expected_ettr_frac);
        else
            snprintf(ettr, sizeof ettr, "e^-%.4g", o->log_elapsed_per_compute);
        if (cfg->maintenance_every_s > 0)
            snprintf(maint, sizeof maint, "; a %.4g s maintenance window every %.4g s",
                     cfg->maintenance_s, cfg->maintenance_every_s);
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "the job can make almost no progress: expected ETTR %s with a "
                             "failure every %.4g s on average (all causes), %.4g s of work per "
                             "checkpoint interval and its write, %.4g s per restart%s; allowed: "
                             "an expected ETTR of at least %g",
                             ettr,
                             o->interruption_rate_per_s > 0 ? 1 / o->interruption_rate_per_s
                                                            : INFINITY,
                             o->segment_s, o->restart_s, maint, 1 / CAMPAIGN_GIVE_UP_FACTOR);
    }
    if (!(o->expected_events <= CAMPAIGN_MAX_EVENTS))
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "the run would take about %.3g engine events (failures, stragglers, "
                             "maintenance windows and checkpoints over %.4g s of expected "
                             "time to train): at most %.3g",
                             o->expected_events,
                             o->compute_time_s / fmax(o->expected_ettr_frac, 1e-300),
                             CAMPAIGN_MAX_EVENTS);
    return 0;
}

double campaign_daly_interval_s(double w, double m)
{
    if (w >= 2 * m)
        return m;
    double x = w / (2 * m);
    return sqrt(2 * w * m) * (1 + sqrt(x) / 3 + x / 9) - w;
}

