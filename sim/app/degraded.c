/* degraded.c - the job's speed on a degraded fabric, cached by failure
 * state (see degraded.h). */
#include "degraded.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "step_fault.h"
#include "steptier.h"

/* The part ids of cause i by index: its tier's switches (or every fabric
 * switch), its tier's fabric cables (as directed link 2C), the NICs
 * (shared NIC nodes, else the hosts: fabric_fault.h nic=ID), in id order:
 * the order the loader counted them in (topo_stats); or the transceiver
 * cages of its tier's switches, each by its first port (ff_transceivers,
 * as the loader counted them). */
static int map_cause(run_degraded *d, const campaign_cause *x, int tier, unsigned i,
                     sim_error *err)
{
    const topo_graph *g = &d->f.g;
    int sw = x->unit == CAMPAIGN_UNIT_SWITCH, nic = x->unit == CAMPAIGN_UNIT_NIC;
    int cage = x->unit == CAMPAIGN_UNIT_TRANSCEIVER;
    uint64_t n = 0, cap = sw || nic ? g->n_nodes : cage ? g->n_links : g->n_links / 2;
    uint32_t *ids = malloc((cap ? cap : 1) * sizeof *ids);
    uint8_t *tiers = malloc(cap ? cap : 1);
    d->ids[i] = ids;
    d->tier[i] = tiers;
    if (!ids || !tiers)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory for part ids");
    if (cage) {
        int rc = ff_transceivers(&d->f, d->cage_ports, tier, ids, &n, err);
        if (rc)
            return rc;
        for (uint64_t k = 0; k < n; k++)
            tiers[k] = g->node_tier[g->link_src[ids[k]]];
    } else if (nic) {
        int kind = g->n_nics ? TOPO_NIC : TOPO_HOST; /* the loader's count */
        for (uint32_t v = 0; v < g->n_nodes; v++)
            if (g->node_kind[v] == kind && (kind == TOPO_NIC || v < d->f.gpus)) {
                tiers[n] = 0;
                ids[n++] = v;
            }
    } else if (sw) {
        for (uint32_t v = 0; v < g->n_nodes; v++)
            if (g->node_kind[v] == TOPO_SWITCH && (tier < 0 || g->node_tier[v] == tier)) {
                tiers[n] = g->node_tier[v];
                ids[n++] = v;
            }
    } else {
        for (uint32_t l = 0; l + 1 < g->n_links; l += 2) {
            uint32_t a = g->link_src[l], b = g->link_dst[l];
            int ka = g->node_kind[a], kb = g->node_kind[b];
            if (ka == TOPO_SCALEUP || kb == TOPO_SCALEUP || (ka == TOPO_NIC && kb == TOPO_HOST) ||
                (ka == TOPO_HOST && kb == TOPO_NIC))
                continue; /* not a fabric cable */
            int t = ka != TOPO_SWITCH || kb != TOPO_SWITCH
                        ? 0
                        : (g->node_tier[a] < g->node_tier[b] ? g->node_tier[a] : g->node_tier[b]);
            if (tier < 0 || t == tier) {
                tiers[n] = (uint8_t)t;
                ids[n++] = l;
            }
        }
    }
    d->cls[i] = sw ? FF_SWITCH : nic ? FF_NIC : cage ? FF_TRANSCEIVER : FF_LINK;
    d->n_ids[i] = n;
    if (n != x->parts) /* the loader counted them on the same builder */
        return sim_error_set(err, SIM_ERR_INTERNAL, NULL, 0,
                             "failure cause \"%s\": %llu parts counted, %llu built", x->name,
                             (unsigned long long)x->parts, (unsigned long long)n);
    return 0;
}

int run_degraded_init(const scn_scenario *s, const double *gpu_speed, unsigned n_gpu_speed,
                      double built_iteration_s, run_degraded *d, sim_error *err)
{
    memset(d, 0, sizeof *d);
    int rc = app_step_inputs(s, gpu_speed, n_gpu_speed, &d->w, &d->dev, &d->f, &d->o, err);
    if (rc)
        return rc;
    d->built_iteration_s = built_iteration_s;
    d->by_tier = s->degraded_by_tier;
    d->shrink = s->campaign.fabric_policy == CAMPAIGN_FABRIC_SHRINK;
    d->reshard = d->shrink && s->degraded_reshard;
    d->hbm_bytes = s->gpu.hbm_bytes;
    d->reserved_bytes = s->reserved_bytes;
    d->capacity = s->degraded_cache ? s->degraded_cache : 1;
    d->cage_ports = s->campaign.cage_ports;
    d->cache = calloc(d->capacity, sizeof *d->cache);
    if (!d->cache)
        rc = sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory for the state cache");
    const campaign_config *c = &s->campaign;
    for (unsigned i = 0; !rc && i < c->n_causes; i++)
        if (c->causes[i].repair_s > 0)
            rc = map_cause(d, &c->causes[i], s->cause_tier[i], i, err);
    if (rc) {
        run_degraded_free(d);
        memset(d, 0, sizeof *d);
    }
    return rc;
}

void run_degraded_free(run_degraded *d)
{
    if (!d)
        return;
    for (unsigned i = 0; i < CAMPAIGN_MAX_CAUSES; i++) {
        free(d->ids[i]);
        free(d->tier[i]);
        free(d->cuts[i]);
    }
    free(d->cache);
    free(d->hot_speed);
    free(d->slow_speed);
    free(d->hot_slow_speed);
    fabric_free(&d->f);
    workload_free(&d->w);
    memset(d, 0, sizeof *d);
}

/* states="by-tier": the part a state counts x as. Its rank among the parts
 * out of its cause and tier (by index; equal indices by speed) picks that
 * many-th part of the tier in the cause's list: the k parts of a cause and
 * tier out stand for the tier's first k, so every state with one leaf
 * uplink down is the state with the tier's first uplink down. An
 * approximation, exact where every part of a tier carries the same traffic
 * (a symmetric job on a symmetric fabric, balanced routing), and documented
 * as such (docs/failures.md). */
static uint64_t representative(const run_degraded *d, const campaign_part_state *parts,
                               unsigned n, unsigned k)
{
    uint64_t rank = 0;
    const campaign_part_state *x = &parts[k];
    const uint8_t *tier = d->tier[x->cause];
    for (unsigned j = 0; j < n; j++) {
        const campaign_part_state *y = &parts[j];
        if (j != k && y->cause == x->cause && tier[y->part] == tier[x->part] &&
            (y->part < x->part || (y->part == x->part && (y->speed < x->speed ||
                                                          (y->speed == x->speed && j < k)))))
            rank++;
    }
    for (uint64_t i = 0; i < d->n_ids[x->cause]; i++) /* the rank-th of the tier */
        if (tier[i] == tier[x->part] && rank-- == 0)
            return i;
    return x->part; /* not reached: x itself is of its tier */
}

/* The failure state of the parts: each at the lowest speed any cause gives
 * it (two causes may name one cable). 0 or -1 (out of memory). */
static int state_of(const run_degraded *d, const campaign_part_state *parts, unsigned n,
                    ff_state *st)
{
    for (unsigned k = 0; k < n; k++) {
        const campaign_part_state *x = &parts[k];
        if (x->cause < 0 || x->cause >= CAMPAIGN_MAX_CAUSES || x->part >= d->n_ids[x->cause])
            return -2;
        uint64_t index = d->by_tier ? representative(d, parts, n, k) : x->part;
        ff_part p = {d->cls[x->cause], d->ids[x->cause][index], x->speed};
        int lower = 1;
        for (size_t j = 0; j < st->n; j++)
            if (st->part[j].cls == p.cls && st->part[j].id == p.id)
                lower = p.speed < st->part[j].speed;
        if (lower && ff_state_add(st, &p))
            return -1;
    }
    return 0;
}

/* A miss: the iteration on the state (0: the job cannot run on it), and
 * the share of GPUs its shape keeps (shrink; else 1). */
static double simulate(run_degraded *d, const ff_state *st, double *kept, sim_error *err)
{
    sim_error why;
    sim_error_clear(&why);
    ff_effect e = {0};
    *kept = 1;
    int rc = ff_effect_compute(&d->f, st, &e, &why);
    unsigned char *cut = NULL;
    if (!rc && d->shrink) { /* GPUs cut off: the largest shape without them */
        cut = malloc((size_t)d->f.gpus + 1);
        if (!cut)
            rc = sim_error_set(&why, SIM_ERR_NOMEM, NULL, 0, "out of memory for a failure state");
        else if (ff_effect_cut_gpus(&d->f, &e, cut)) {
            double t = degraded_simulate_shrunk(d, st, &e, cut, kept, err);
            free(cut);
            ff_effect_fini(&e);
            return t;
        }
    }
    free(cut);
    if (!rc)
        rc = ff_effect_check_gpus(&d->f, st, &e, &why);
    ff_effect_fini(&e);
    step_profile p;
    if (!rc)
        rc = step_simulate_failed(&d->w, &d->dev, &d->f, st, &d->o, &p, &why);
    if (rc == SIM_ERR_INPUT) { /* GPUs cut off, no route left: the job cannot run here */
        d->unrunnable_states++;
        if (!d->first_refusal[0])
            snprintf(d->first_refusal, sizeof d->first_refusal, "%s", why.msg);
        return 0;
    }
    if (rc) {
        if (err)
            *err = why;
        return -1;
    }
    double t = p.iteration_s;
    step_profile_free(&p);
    return t;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int run_degraded_set_hot(run_degraded *d, const double *speed, unsigned n,
                         double hot_iteration_s, sim_error *err)
{
    free(d->hot_speed);
    d->hot_speed = malloc((n ? n : 1) * sizeof *d->hot_speed);
    if (!d->hot_speed)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
    if (n)
        memcpy(d->hot_speed, speed, n * sizeof *speed);
    d->n_hot_speed = n;
    d->hot_iteration_s = hot_iteration_s;
    return 0;
}

int run_degraded_set_slow(run_degraded *d, const double *speed, double slow_iteration_s,
                          const double *hot_speed, double hot_slow_iteration_s, unsigned n,
                          sim_error *err)
{
    free(d->slow_speed);
    free(d->hot_slow_speed);
    d->slow_speed = malloc((n ? n : 1) * sizeof *d->slow_speed);
    d->hot_slow_speed = hot_speed ? malloc((n ? n : 1) * sizeof *d->hot_slow_speed) : NULL;
    if (!d->slow_speed || (hot_speed && !d->hot_slow_speed))
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
    d->slow_set = 0x243f6a8885a308d3ULL; /* the slow set's hash: every GPU slowed, its speed */
    for (unsigned i = 0; i < n; i++) {
        d->slow_speed[i] = speed[i];
        if (hot_speed)
            d->hot_slow_speed[i] = hot_speed[i];
        double base = d->o.gpu_speed && i < d->o.n_gpu_speed ? d->o.gpu_speed[i] : 1.0;
        if (speed[i] != base) {
            uint64_t bits;
            memcpy(&bits, &speed[i], sizeof bits);
            d->slow_set = (d->slow_set ^ i) * 0x100000001b3ULL ^ bits;
        }
    }
    d->n_slow_speed = n;
    d->slow_iteration_s = slow_iteration_s;
    d->hot_slow_iteration_s = hot_slow_iteration_s;
    return 0;
}

/* The key of a hot state: its digest mixed (splitmix64's finaliser
 * constants, a hash, not a model figure) so that it differs from the cool
 * state's; a clash is as unlikely as two states' digests clashing. A state
 * with a node slow mixes the slow set's hash in first. */
static uint64_t hot_key(uint64_t key)
{
    key ^= 0x9e3779b97f4a7c15ULL;
    key = (key ^ (key >> 30)) * 0xbf58476d1ce4e5b9ULL;
    key = (key ^ (key >> 27)) * 0x94d049bb133111ebULL;
    return key ^ (key >> 31);
}

double run_degraded_iteration(run_degraded *d, const campaign_part_state *parts, unsigned n,
                              uint64_t *digest, sim_error *err)
{
    return run_degraded_iteration_hot(d, parts, n, 0, digest, err);
}

double run_degraded_iteration_hot(run_degraded *d, const campaign_part_state *parts,
                                  unsigned n, int mode, uint64_t *digest, sim_error *err)
{
    int hot = mode & RUN_DEGRADED_HOT, slow = mode & RUN_DEGRADED_SLOW;
    if ((hot && !d->hot_speed) || (slow && !d->slow_speed) ||
        (hot && slow && !d->hot_slow_speed)) {
        sim_error_set(err, SIM_ERR_INTERNAL, NULL, 0, "a %s state without its GPU speeds",
                      slow ? "slow-node" : "hot");
        return -1;
    }
    ff_state st;
    ff_state_init(&st);
    st.cage_ports = d->cage_ports;
    int bad = state_of(d, parts, n, &st);
    if (bad) {
        ff_state_fini(&st);
        sim_error_set(err, bad == -1 ? SIM_ERR_NOMEM : SIM_ERR_INTERNAL, NULL, 0, "%s",
                      bad == -1 ? "out of memory for a failure state"
                                : "a failed part outside its cause's parts");
        return -1;
    }
    uint64_t key = ff_state_digest(&st);
    if (slow)
        key = hot_key(hot_key(key ^ d->slow_set));
    if (hot)
        key = hot_key(key);
    if (digest)
        *digest = key;
    d->lookups++;
    d->hot_lookups += hot && !slow; /* a slow node's states are counted apart */
    d->slow_lookups += slow != 0;
    size_t victim = 0;
    for (size_t i = 0; i < d->capacity; i++) {
        degraded_entry *x = &d->cache[i];
        if (x->used && x->digest == key) {
            x->last_use = ++d->clock;
            d->hits++;
            degraded_shrink_note_kept(x->kept);
            ff_state_fini(&st);
            return x->iteration_s;
        }
        if (!x->used || (d->cache[victim].used && x->last_use < d->cache[victim].last_use))
            victim = i;
    }
    double t0 = now_s(), kept = 1, t;
    if (hot || slow) { /* the throttled and/or slow GPUs on the degraded fabric: one
                          iteration of everything */
        const double *speed = d->o.gpu_speed;
        unsigned n_speed = d->o.n_gpu_speed;
        d->o.gpu_speed = !slow ? d->hot_speed : hot ? d->hot_slow_speed : d->slow_speed;
        d->o.n_gpu_speed = slow ? d->n_slow_speed : d->n_hot_speed;
        t = st.n ? simulate(d, &st, &kept, err)
                 : !slow ? d->hot_iteration_s
                 : hot   ? d->hot_slow_iteration_s
                         : d->slow_iteration_s;
        d->o.gpu_speed = speed;
        d->o.n_gpu_speed = n_speed;
    } else {
        t = st.n ? simulate(d, &st, &kept, err) : d->built_iteration_s;
    }
    d->simulate_s += now_s() - t0;
    ff_state_fini(&st);
    if (t < 0)
        return t;
    d->simulations++;
    d->hot_simulations += hot && !slow;
    d->slow_simulations += slow != 0;
    d->evictions += d->cache[victim].used;
    d->cache[victim] = (degraded_entry){key, t, kept, ++d->clock, 1};
    degraded_shrink_note_kept(kept);
    return t;
}

double run_degraded_speed(void *ctx, const campaign_part_state *parts, unsigned n,
                          sim_error *err)
{
    run_degraded *d = ctx;
    double t;
#pragma omp critical(dcsim_degraded_fabric)
    t = run_degraded_iteration(d, parts, n, NULL, err);
    return t > 0 ? d->built_iteration_s / t : t; /* 0: cannot run; < 0: the error */
}

double run_degraded_hot_speed(void *ctx, const campaign_part_state *parts, unsigned n,
                              sim_error *err)
{
    run_degraded *d = ctx;
    double t;
#pragma omp critical(dcsim_degraded_fabric)
    t = run_degraded_iteration_hot(d, parts, n, RUN_DEGRADED_HOT, NULL, err);
    return t > 0 ? d->built_iteration_s / t : t; /* 0: cannot run; < 0: the error */
}

double run_degraded_slow_speed(void *ctx, const campaign_part_state *parts, unsigned n,
                               int hot, sim_error *err)
{
    run_degraded *d = ctx;
    double t;
#pragma omp critical(dcsim_degraded_fabric)
    t = run_degraded_iteration_hot(d, parts, n, RUN_DEGRADED_SLOW | (hot ? RUN_DEGRADED_HOT : 0),
                                   NULL, err);
    return t > 0 ? d->built_iteration_s / t : t; /* 0: cannot run; < 0: the error */
}

int64_t run_degraded_part_id(void *ctx, int32_t cause, uint64_t part)
{
    const run_degraded *d = ctx;
    if (cause < 0 || cause >= CAMPAIGN_MAX_CAUSES || part >= d->n_ids[cause])
        return -1;
    return d->ids[cause][part];
}
