/* campaign_failures.c - the campaign's failure streams: the causes'
 * rates per unit, their random streams, and the draws (cause, renewal and
 * residual life through the cause's failure process (failure_process.h),
 * detection delays, silent corruption found).
 *
 * Each unit has a pending failure event on its own random stream; the
 * streams (slots of the run's workspace, reseeded from their keys: no
 * allocation once the workspace has grown) and first draws are made in
 * parallel (OpenMP, one output slot per unit) and scheduled serially in unit
 * order, so any thread count gives the same events.
 */
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "campaign.h"
#include "campaign_internal.h"
#include "engine.h"
#include "failure_process.h"
#include "rng.h"

#define NODE_FLAG (1ULL << 63) /* event payload: a node's failure, not a GPU's */
#define RACK_FLAG (1ULL << 62) /* event payload: a rack's failure */
#define PART_FLAG (1ULL << 61) /* event payload: a switch or cable cause (index in the low bits) */
#define RENEWAL_SHIFT 40        /* payload bits 40..47: renewing cause index + 1 */
#define UNIT_MASK ((1ULL << RENEWAL_SHIFT) - 1)
/* Fewer units are seeded on one thread: a reseed and a first draw take
 * ~40 ns, less than waking a second thread (and far less than waiting for
 * one on a busy machine) */
#define PARALLEL_MIN_UNITS 4096

/* How long until this failure is noticed: U(0, period) of a health check,
 * capped by a collective timeout. */
double campaign_draw_detection(campaign *c)
{
    double p = c->cfg->health_check_s, t = c->cfg->collective_timeout_s;
    if (p > 0) {
        double u = gsl_rng_uniform(c->detect_rng) * p;
        return t > 0 && t < u ? t : u;
    }
    return t;
}

double campaign_mean_detection_s(const campaign_config *cfg)
{
    double p = cfg->health_check_s, t = cfg->collective_timeout_s;
    if (p > 0 && t > 0 && t < p)
        return t - t * t / (2 * p);
    return p > 0 ? p / 2 : t;
}

static int is_part(int unit) { return campaign_unit_is_fabric_part(unit); }

/* The cause of a failure of a unit: drawn on the unit's stream in
 * proportion to the rates (-1: the unnamed GPU rate). */
static int32_t draw_cause(campaign *c, gsl_rng *r, int unit, double total)
{
    if (!c->cfg->n_causes)
        return -1;
    double u = gsl_rng_uniform(r) * total, acc = 0;
    if (unit == CAMPAIGN_UNIT_GPU) {
        acc = c->cfg->gpu_failure_rate_per_s;
        if (u < acc)
            return -1;
    }
    int32_t last = -1;
    for (unsigned i = 0; i < c->cfg->n_causes; i++) {
        const campaign_cause *x = &c->cfg->causes[i];
        if (x->unit != unit || !failure_process_is_memoryless(x->process))
            continue;
        acc += c->cfg->causes[i].rate_per_s;
        last = (int32_t)i;
        if (u < acc)
            return (int32_t)i;
    }
    return last; /* rounding at the top end */
}

/* A renewing cause's next failure: a fresh part's time to failure. */
static double renewal_time(const campaign_cause *x, gsl_rng *r)
{
    return failure_process_get(x->process)->draw(r, x->rate_per_s, x->shape);
}

/* The first failure of a unit on a cluster in steady state (parts of every
 * age): a renewing cause's residual life, or for a memoryless stream (x
 * NULL) its exponential time at the summed rate. */
static double first_time(const campaign_cause *x, gsl_rng *r, double rate)
{
    if (!x)
        return gsl_ran_exponential(r, 1.0 / rate);
    return failure_process_get(x->process)->residual(r, x->rate_per_s, x->shape);
}

/* A silent corruption is found: roll back to the last checkpoint from
 * before it. */
static void on_corruption_found(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)eng;
    campaign *c = ctx;
    int is_node = (data & NODE_FLAG) != 0, is_rack = (data & RACK_FLAG) != 0;
    int32_t cause = (int32_t)(data & 0xff) - 1;
    int64_t id = (int64_t)((data & ~(NODE_FLAG | RACK_FLAG)) >> 8);
    c->corrupt_pending = 0;
    if (c->state == CAMPAIGN_STATE_DONE)
        return;
    unsigned lost_nodes = (data & RACK_FLAG) ? c->cfg->nodes_per_rack : 1;
    c->silent_found = 1;
    campaign_interrupt(c, cause, is_node || is_rack ? -1 : id,
                       is_rack ? id * (int64_t)c->cfg->nodes_per_rack : is_node ? id : -1,
                       c->good_committed, lost_nodes);
    c->silent_found = 0;
}

static void on_failure(sim_engine *eng, void *ctx, uint64_t data)
{
    campaign *c = ctx;
    if (data & PART_FLAG) { /* a switch or cable: one interruption, no node to swap */
        int32_t cause = (int32_t)(data & UNIT_MASK);
        const campaign_cause *x = &c->cfg->causes[cause];
        gsl_rng *r = c->part_rng[cause];
        c->failing_part = (int64_t)gsl_rng_uniform_int(r, x->parts);
        sim_schedule_in(eng, gsl_ran_exponential(r, 1.0 / ((double)x->parts * x->rate_per_s)),
                        PRIO_FAILURE, KIND_FAILURE, on_failure, c, data);
        if (x->repair_s > 0) { /* out until repaired: the degraded fabric */
            campaign_fabric_part_fails(c, cause);
            c->failing_part = -1;
            return;
        }
        campaign_interrupt(c, cause, -1, -1, c->committed, 0);
        c->failing_part = -1;
        return;
    }
    int is_node = (data & NODE_FLAG) != 0, is_rack = (data & RACK_FLAG) != 0;
    unsigned renewing = (unsigned)((data >> RENEWAL_SHIFT) & 0xff);
    uint64_t id = data & UNIT_MASK;
    int32_t cause;
    if (renewing) { /* a cause of its own stream: its part is replaced and renews */
        cause = (int32_t)renewing - 1;
        gsl_rng *r = &c->renewal_rng[cause][id];
        sim_schedule_in(eng, renewal_time(&c->cfg->causes[cause], r), PRIO_FAILURE, KIND_FAILURE,
                        on_failure, c, data);
    } else {
        gsl_rng *r = is_rack ? &c->rack_rng[id] : is_node ? &c->node_rng[id] : &c->gpu_rng[id];
        double total = is_rack ? c->rack_rate : is_node ? c->node_rate : c->gpu_rate;
        cause = draw_cause(c, r,
                           is_rack ? CAMPAIGN_UNIT_RACK
                           : is_node ? CAMPAIGN_UNIT_NODE
                                     : CAMPAIGN_UNIT_GPU,
                           total);
        /* the replacement unit in this slot fails after its own exponential time */
        sim_schedule_in(eng, gsl_ran_exponential(r, 1.0 / total), PRIO_FAILURE, KIND_FAILURE,
                        on_failure, c, data);
    }
    int64_t gpu = is_node || is_rack ? -1 : (int64_t)id;
    int64_t node = is_rack ? (int64_t)(id * c->cfg->nodes_per_rack) : is_node ? (int64_t)id : -1;
    unsigned lost_nodes = is_rack ? c->cfg->nodes_per_rack : 1;
    const campaign_cause *x = cause >= 0 ? &c->cfg->causes[cause] : NULL;
    if (x && x->detection_s > 0) { /* silent: found later, rolling back to before it */
        c->res.silent_failures++;
        if (c->state == CAMPAIGN_STATE_DONE || c->corrupt_pending)
            return; /* one rollback covers every corruption since the good checkpoint */
        c->corrupt_pending = 1;
        c->good_committed = c->committed;
        gsl_rng *r = is_rack ? &c->rack_rng[id] : is_node ? &c->node_rng[id] : &c->gpu_rng[id];
        double delay = gsl_ran_exponential(r, x->detection_s);
        sim_schedule_in(eng, delay, PRIO_FAILURE, KIND_SDC_FOUND, on_corruption_found, c,
                        (uint64_t)(cause + 1) | ((uint64_t)id << 8) | (is_node ? NODE_FLAG : 0) |
                            (is_rack ? RACK_FLAG : 0));
        return;
    }
    campaign_interrupt(c, cause, gpu, node, c->committed, lost_nodes);
}

/* One stream per unit of a kind, reseeded in block b, its first failure
 * drawn: pure per-unit work into per-index slots, so the thread count
 * cannot change results. *out: the streams, indexed by unit. renewing: the
 * cause of a stream of its own (its residual life first), or NULL for a
 * memoryless stream at rate. */
static int make_streams(campaign *c, sim_rng_block *b, uint32_t entity, uint64_t n, double rate,
                        gsl_rng **out, uint64_t flag, uint32_t purpose,
                        const campaign_cause *renewing, unsigned kind, sim_handler_fn handler)
{
    if (sim_rng_block_reserve(b, n) || campaign_workspace_firsts(c->ws, n))
        return sim_error_set(c->err, SIM_ERR_NOMEM, NULL, 0,
                             "out of memory for %llu failure streams", (unsigned long long)n);
    gsl_rng *rng = b->rngs;
    double *first = c->ws->first;
    *out = rng;
#pragma omp parallel for schedule(static) if (n >= PARALLEL_MIN_UNITS)
    for (long long i = 0; i < (long long)n; i++) {
        sim_rng_stream_reseed(&rng[i], c->cfg->seed, entity, (uint64_t)i, purpose);
        first[i] = first_time(renewing, &rng[i], rate);
    }
    for (uint64_t i = 0; i < n; i++)
        sim_schedule_at(c->eng, first[i], PRIO_FAILURE, kind, handler, c, i | flag);
    return 0;
}

static int make_unit_streams(campaign *c, sim_rng_block *b, uint32_t entity, uint64_t n,
                             double rate, gsl_rng **out, uint64_t flag, uint32_t purpose,
                             const campaign_cause *renewing)
{
    return make_streams(c, b, entity, n, rate, out, flag, purpose, renewing, KIND_FAILURE,
                        on_failure);
}

int campaign_make_failure_streams(campaign *c)
{
    int rc = 0;
    if (c->gpu_rate > 0)
        rc = make_unit_streams(c, &c->ws->gpu, SIM_ENTITY_GPU, c->cfg->gpu_count, c->gpu_rate,
                               &c->gpu_rng, 0, SIM_PURPOSE_FAILURE, NULL);
    if (!rc && c->node_rate > 0)
        rc = make_unit_streams(c, &c->ws->node, SIM_ENTITY_NODE, c->n_nodes, c->node_rate,
                               &c->node_rng, NODE_FLAG, SIM_PURPOSE_FAILURE, NULL);
    if (!rc && c->rack_rate > 0)
        rc = make_unit_streams(c, &c->ws->rack, SIM_ENTITY_RACK, c->n_racks, c->rack_rate,
                               &c->rack_rng, RACK_FLAG, SIM_PURPOSE_FAILURE, NULL);
    for (unsigned i = 0; !rc && i < c->cfg->n_causes; i++) {
        const campaign_cause *x = &c->cfg->causes[i];
        if (failure_process_is_memoryless(x->process) || !(x->rate_per_s > 0) ||
            x->unit == CAMPAIGN_UNIT_RACK)
            continue;
        int node = x->unit == CAMPAIGN_UNIT_NODE;
        /* purposes above the fixed ones: one per cause, so causes draw apart */
        rc = make_unit_streams(c, &c->ws->renewal[i], node ? SIM_ENTITY_NODE : SIM_ENTITY_GPU,
                               node ? c->n_nodes : c->cfg->gpu_count, x->rate_per_s,
                               &c->renewal_rng[i],
                               (node ? NODE_FLAG : 0) | ((uint64_t)(i + 1) << RENEWAL_SHIFT),
                               SIM_PURPOSE_FAILURE + 256 + i, x);
    }
    /* switches and cables: identical exponential parts, so one stream per
     * cause at the summed rate is exact (and costs nothing per part) */
    for (unsigned i = 0; !rc && i < c->cfg->n_causes; i++) {
        const campaign_cause *x = &c->cfg->causes[i];
        if (!is_part(x->unit) || !(x->rate_per_s > 0))
            continue;
        c->part_rng[i] = &c->ws->job.rngs[WS_SLOT_PART + i];
        sim_rng_stream_reseed(c->part_rng[i], c->cfg->seed, campaign_part_entity(x->unit), i,
                              SIM_PURPOSE_FAILURE);
        sim_schedule_at(c->eng,
                        gsl_ran_exponential(c->part_rng[i], 1.0 / ((double)x->parts * x->rate_per_s)),
                        PRIO_FAILURE, KIND_FAILURE, on_failure, c, PART_FLAG | i);
    }
    return rc;
}

/* Stragglers: a stream per node for when it turns slow. */
int campaign_make_straggler_streams(campaign *c)
{
    if (campaign_workspace_nodes(c->ws, c->n_nodes))
        return sim_error_set(c->err, SIM_ERR_NOMEM, NULL, 0, "out of memory for stragglers");
    c->slow = c->ws->slow;
    c->slow_since = c->ws->slow_since;
    return make_streams(c, &c->ws->straggler, SIM_ENTITY_NODE, c->n_nodes,
                        c->cfg->straggler_rate_per_s, &c->straggler_rng, 0, SIM_PURPOSE_SPEED,
                        NULL, KIND_STRAGGLER, campaign_on_straggler);
}

double campaign_split_rates(const campaign_config *cfg, campaign_rate_split *rs)
{
    memset(rs, 0, sizeof *rs);
    unsigned per_node = cfg->gpus_per_node ? cfg->gpus_per_node : 8;
    rs->n_nodes = (cfg->gpu_count + per_node - 1) / per_node;
    rs->gpu_rate = cfg->gpu_failure_rate_per_s;
    double renewal_rate = 0; /* long-run rate of the renewing (Weibull) causes: 1 / mean */
    double part_rate = 0;    /* switches and cables */
    for (unsigned i = 0; i < cfg->n_causes && i < CAMPAIGN_MAX_CAUSES; i++) {
        const campaign_cause *x = &cfg->causes[i];
        double units = x->unit == CAMPAIGN_UNIT_NODE ? (double)rs->n_nodes : (double)cfg->gpu_count;
        if (is_part(x->unit) && x->slow_speed > 0)
            continue; /* fail-slow: slows the job, interrupts nothing */
        if (is_part(x->unit))
            part_rate += (double)x->parts * x->rate_per_s;
        else if (x->unit == CAMPAIGN_UNIT_RACK)
            rs->rack_rate += x->rate_per_s;
        else if (!failure_process_is_memoryless(x->process))
            renewal_rate += units * x->rate_per_s;
        else if (x->unit == CAMPAIGN_UNIT_NODE)
            rs->node_rate += x->rate_per_s;
        else
            rs->gpu_rate += x->rate_per_s;
    }
    if (cfg->nodes_per_rack)
        rs->n_racks = (rs->n_nodes + cfg->nodes_per_rack - 1) / cfg->nodes_per_rack;
    return (double)cfg->gpu_count * rs->gpu_rate + (double)rs->n_nodes * rs->node_rate +
           (double)rs->n_racks * rs->rack_rate + renewal_rate + part_rate;
}

double campaign_cluster_failure_rate_per_s(const campaign_config *cfg)
{
    campaign_rate_split rs;
    return campaign_split_rates(cfg, &rs);
}

