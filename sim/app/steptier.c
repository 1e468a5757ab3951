/* steptier.c - the step tier from a scenario: one iteration's profile and
 * the cache of profiles by cluster state (see steptier.h). */
#include "steptier.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compute.h"
#include "fabric.h"
#include "hardware.h"
#include "packet_trace.h"
#include "packetcfg.h"
#include "resources.h"
#include "step_fault.h"
#include "workload.h"

int app_step_profile(const scn_scenario *s, const double *gpu_speed, unsigned n_gpu_speed,
                     step_profile *out, sim_error *err)
{
    return app_step_profile_polled(s, gpu_speed, n_gpu_speed, NULL, NULL, out, err);
}

int app_step_profile_polled(const scn_scenario *s, const double *gpu_speed, unsigned n_gpu_speed,
                            int (*poll)(void *ctx, double sim_time_s, uint64_t events),
                            void *poll_ctx, step_profile *out, sim_error *err)
{
    return app_step_profile_packet(s, gpu_speed, n_gpu_speed, poll, poll_ctx, NULL, out, err);
}

/* The step options of s with the caller's speeds, hook and packet tier. */
static step_options options_of(const scn_scenario *s, const double *gpu_speed,
                               unsigned n_gpu_speed,
                               int (*poll)(void *ctx, double sim_time_s, uint64_t events),
                               void *poll_ctx, const app_step_packet *pk)
{
    step_options o = s->step;
    o.gpu_speed = gpu_speed;
    o.n_gpu_speed = gpu_speed ? n_gpu_speed : 0;
    o.poll = poll;
    o.poll_ctx = poll_ctx;
    if (pk) {
        o.packet_cfg = pk->cfg;
        o.packet_admit = pk->admit;
        o.packet_admit_ctx = pk->admit_ctx;
        o.packet_series_dt_s = pk->series_dt_s;
        o.packet_series_bins = pk->series_bins;
    }
    if (o.sustained_efficiency == 0) /* not in <step>: the GPU catalog's, else 1 */
        o.sustained_efficiency = s->gpu.sustained_efficiency > 0 ? s->gpu.sustained_efficiency : 1;
    return o;
}

/* The workload, device and fabric of s; 0 or an error code (nothing held). */
static int inputs_of(const scn_scenario *s, workload *w, compute_device *dev, fabric *f,
                     sim_error *err)
{
    if (!s->has_fabric || !s->has_parallelism)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "the step tier needs <cluster><fabric> and <job><parallelism>");
    unsigned long long gpus = (unsigned long long)s->par.tp * s->par.cp * s->par.dp * s->par.pp;
    int rc = workload_build(&s->arch, &s->par, gpus, w, err);
    if (rc)
        return rc;
    rc = hw_compute_device_fw(&s->gpu, s->precision, &s->par.fw, dev, err);
    if (!rc)
        rc = fabric_build(&s->fabric, f, err);
    if (rc)
        workload_free(w);
    return rc;
}

int app_step_inputs(const scn_scenario *s, const double *gpu_speed, unsigned n_gpu_speed,
                    workload *w, compute_device *dev, fabric *f, step_options *o,
                    sim_error *err)
{
    int rc = inputs_of(s, w, dev, f, err);
    if (!rc)
        *o = options_of(s, gpu_speed, n_gpu_speed, NULL, NULL, NULL);
    return rc;
}

int app_step_profile_packet(const scn_scenario *s, const double *gpu_speed,
                            unsigned n_gpu_speed,
                            int (*poll)(void *ctx, double sim_time_s, uint64_t events),
                            void *poll_ctx, const app_step_packet *pk, step_profile *out,
                            sim_error *err)
{
    if (s->has_fabric && s->has_parallelism && s->step.packet && !(pk && pk->cfg))
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "<step network=\"packet\">: the packet network times one "
                             "iteration (dcsim step, dcsim run), not the iterations elastic "
                             "spares and reliability stragglers ask for (docs/step.md \"Packet "
                             "network\"); use network=\"concurrent\" here");
    workload w;
    compute_device dev;
    fabric f;
    int rc = inputs_of(s, &w, &dev, &f, err);
    if (rc)
        return rc;
    step_options o = options_of(s, gpu_speed, n_gpu_speed, poll, poll_ctx, pk);
    rc = step_simulate(&w, &dev, &f, &o, out, err);
    fabric_free(&f);
    workload_free(&w);
    return rc;
}

int app_step_failed(const scn_scenario *s, const double *gpu_speed, unsigned n_gpu_speed,
                    int (*poll)(void *ctx, double sim_time_s, uint64_t events), void *poll_ctx,
                    const ff_state *st, app_step_failure *out, sim_error *err)
{
    memset(out, 0, sizeof *out);
    workload w;
    compute_device dev;
    fabric f;
    int rc = inputs_of(s, &w, &dev, &f, err);
    if (rc)
        return rc;
    step_options o = options_of(s, gpu_speed, n_gpu_speed, poll, poll_ctx, NULL);
    ff_effect e = {0};
    rc = ff_effect_compute(&f, st, &e, err);
    if (!rc) /* refused before the iteration as built is spent */
        rc = ff_effect_check_gpus(&f, st, &e, err);
    if (!rc)
        rc = step_simulate(&w, &dev, &f, &o, &out->before, err);
    if (!rc) {
        rc = step_simulate_failed(&w, &dev, &f, st, &o, &out->after, err);
        if (rc)
            step_profile_free(&out->before);
    }
    if (!rc) {
        out->n_changes = step_link_changes(&f.g, e.link_speed, &out->before, &out->after,
                                           out->changes, APP_STEP_CHANGES);
        out->links_down = e.links_down;
        out->links_slow = e.links_slow;
        out->digest = ff_state_digest(st);
    }
    ff_effect_fini(&e);
    fabric_free(&f);
    workload_free(&w);
    return rc;
}

void app_step_failure_free(app_step_failure *x)
{
    if (!x)
        return;
    step_profile_free(&x->before);
    step_profile_free(&x->after);
}

/* every packet of the iteration may be queued at once: they must fit what
 * this process may use (as dcsim step's) */
static int run_packet_admit(void *ctx, double packets, double packet_hops, sim_error *err)
{
    (void)packet_hops;
    return res_check_more(ctx, RES_STEP, packets * (double)pkt_packet_record_bytes(),
                          "packets queued at once", err);
}

int app_step_profile_run_packet(const scn_scenario *s, const double *gpu_speed,
                                unsigned n_gpu_speed, app_packet_cfg *pc, step_profile *out,
                                sim_error *err)
{
    if (!s->has_fabric)
        return app_step_profile(s, gpu_speed, n_gpu_speed, out, err); /* its error */
    fabric f;
    int rc = fabric_build(&s->fabric, &f, err);
    if (rc)
        return rc;
    app_packet_opts po = {0};
    rc = app_packet_config("run", "network=\"packet\"", s, &f, &po, 0, pc);
    double dt_s = pc->cfg.mtu_bytes / f.link_bytes_per_s;
    fabric_free(&f);
    if (rc) /* printed: the catalog lacks a value */
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "the packet network's parameters "
                             "(above)");
    app_step_packet pk = {.cfg = &pc->cfg, .admit = run_packet_admit, .admit_ctx = (void *)s,
                          .series_dt_s = dt_s, .series_bins = TRACE_DEFAULT_BINS};
    return app_step_profile_packet(s, gpu_speed, n_gpu_speed, NULL, NULL, &pk, out, err);
}

typedef struct cache_entry {
    unsigned dp;
    uint64_t state;
    uint64_t last_use;
    int used;
    step_profile profile;
} cache_entry;

struct step_cache {
    cache_entry *e;
    size_t capacity;
    const double *gpu_speed; /* not owned */
    unsigned n_gpu_speed;
    uint64_t clock;
    size_t simulations;
};

step_cache *step_cache_create(size_t capacity, const double *gpu_speed, unsigned n_gpu_speed)
{
    step_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->capacity = capacity ? capacity : 1;
    c->gpu_speed = gpu_speed;
    c->n_gpu_speed = n_gpu_speed;
    c->e = calloc(c->capacity, sizeof *c->e);
    if (!c->e) {
        free(c);
        return NULL;
    }
    return c;
}

void step_cache_free(step_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->capacity; i++)
        if (c->e[i].used)
            step_profile_free(&c->e[i].profile);
    free(c->e);
    free(c);
}

size_t step_cache_simulations(const step_cache *c) { return c->simulations; }

const step_profile *step_cache_get(step_cache *c, const scn_scenario *s, unsigned dp,
                                   uint64_t state, sim_error *err)
{
    size_t victim = 0;
    for (size_t i = 0; i < c->capacity; i++) {
        cache_entry *x = &c->e[i];
        if (x->used && x->dp == dp && x->state == state) {
            x->last_use = ++c->clock;
            return &x->profile;
        }
        if (!x->used || (c->e[victim].used && x->last_use < c->e[victim].last_use))
            victim = i;
    }
    if (!dp || !s->has_parallelism || s->par.global_batch % s->par.dp) {
        sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "no parallelism to shrink, or dp 0");
        return NULL;
    }
    scn_scenario copy = *s; /* shallow: only par changes */
    copy.par.global_batch = s->par.global_batch / s->par.dp * dp;
    copy.par.dp = dp;
    step_profile p;
    if (app_step_profile(&copy, c->gpu_speed, c->n_gpu_speed, &p, err))
        return NULL;
    c->simulations++;
    cache_entry *x = &c->e[victim];
    if (x->used)
        step_profile_free(&x->profile);
    *x = (cache_entry){dp, state, ++c->clock, 1, p};
    return &x->profile;
}
