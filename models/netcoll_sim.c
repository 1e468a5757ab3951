/* netcoll_sim.c - a plan run on the max-min flow model (flow.h) from an
 * idle network: the plan alone on a fresh engine and executor
 * (netcoll_exec.h: a phase starts when the phases it depends on are done,
 * routes its connections on the load of that moment and starts one flow
 * (coupled) or one per connection; it is done its latency after its last
 * flow). The collective's time is the last phase's end. A fabric's
 * sim_cache keeps the engine and executor between runs, reset to the state
 * of new ones (sim_engine_reset, nc_exec_reset). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "netcoll_exec.h"
#include "netcoll_internal.h"

struct nc_sim_cache {
    sim_engine *eng;
    nc_exec *x;
};

nc_sim_cache *nc_sim_cache_create(void)
{
    return calloc(1, sizeof(nc_sim_cache));
}

void nc_sim_cache_trim(nc_sim_cache *c)
{
    if (!c)
        return;
    nc_exec_destroy(c->x);
    sim_engine_destroy(c->eng);
    c->x = NULL;
    c->eng = NULL;
}

void nc_sim_cache_destroy(nc_sim_cache *c)
{
    nc_sim_cache_trim(c);
    free(c);
}

typedef struct alone {
    sim_engine *eng;
    double end;
} alone;

static void plan_done(void *ctx, uint64_t tag)
{
    (void)tag;
    alone *a = ctx;
    a->end = sim_now(a->eng);
}

int nc_simulate(const nc_plan *p, const nc_fabric *f, nc_result *out, sim_error *err)
{
    memset(out, 0, sizeof *out);
    nc_sim_cache own = {0}, *c = f->sim_cache ? f->sim_cache : &own;
    if (c->x && nc_exec_reset(c->x, f)) { /* a failed run's, or another fabric's */
        nc_exec_destroy(c->x);
        c->x = NULL;
    }
    if (c->eng)
        sim_engine_reset(c->eng);
    else
        c->eng = sim_engine_create();
    if (c->eng && !c->x)
        c->x = nc_exec_create_sparse(c->eng, f); /* one collective: its links */
    alone a = {.eng = c->eng};
    nc_exec *x = c->x;
    int rc = x ? nc_exec_start(x, p, 0, plan_done, &a, 0, err)
               : sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory in the flow model");
    if (!rc) {
        sim_run(a.eng, INFINITY);
        rc = nc_exec_error(x);
    }
    if (!rc) {
        nc_fill_result(p, a.end, out);
        const flow_stats *st = flow_net_stats(nc_exec_net(x));
        out->flows = st->flows_started;
        out->recomputes = st->recomputes;
        out->events = sim_events_fired(a.eng);
        out->max_active_flows = st->max_active;
    }
    if (c == &own) {
        nc_exec_destroy(own.x);
        sim_engine_destroy(own.eng);
    }
    return rc;
}
