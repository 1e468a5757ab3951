/* netcoll_sim.c - a plan run on the max-min flow model (flow.h) from an
 * idle network: a phase starts when the phases it depends on are done,
 * routes its connections on the load of that moment and starts one flow
 * (coupled) or one per connection; it is done its latency after its last
 * flow. The collective's time is the last phase's end. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "event_kinds.h"
#include "netcoll_internal.h"

typedef struct executor {
    const nc_plan *p;
    const nc_fabric *f;
    sim_engine *eng;
    flow_net *net;
    uint32_t *deps_left, *flows_left;
    uint32_t *next_offset, *next;   /* dependents of each phase (CSR) */
    nc_route_buf buf;               /* all: n_links entries, a coupled phase's merged usages */
    uint32_t *slot;                 /* link -> its entry in buf.all, or UINT32_MAX */
    double end;
    int failed;
    int code;                       /* a route failure's sim_error code, else 0 */
    sim_error *err;
} executor;

static void phase_done(sim_engine *eng, void *ctx, uint64_t data);

/* Add route u[0..k) x w to the phase's merged usages b->all (one entry per
 * link, in first-use order, weights summed in route order: the usages
 * flow_start would merge itself, without holding every connection's route),
 * and reserve it in the load so that the next adaptive choice sees it. */
static void merge_route(executor *x, const topo_usage *u, size_t k, double w)
{
    nc_route_buf *b = &x->buf;
    for (size_t i = 0; i < k; i++) {
        topo_usage one = {u[i].link, u[i].weight * w};
        flow_net_bias_load(x->net, &one, 1, +1);
        uint32_t s = x->slot[one.link];
        if (s == UINT32_MAX) {
            x->slot[one.link] = (uint32_t)b->n_all;
            b->all[b->n_all++] = one;
        } else {
            b->all[s].weight += one.weight;
        }
    }
}

static void fail(executor *x)
{
    x->failed = 1;
    sim_stop(x->eng);
}

static void start_phase(executor *x, uint32_t i)
{
    const nc_phase *ph = &x->p->phase[i];
    const double *load = flow_net_link_load(x->net);
    x->buf.n_all = 0;
    x->flows_left[i] = ph->coupled ? 1 : ph->n_conn;
    if (ph->n_conn == 0) {
        sim_schedule_in(x->eng, ph->latency_s, 0, KIND_NC_PHASE_DONE, phase_done, x, i);
        return;
    }
    for (uint32_t k = 0; k < ph->n_conn; k++) {
        nc_conn c = nc_phase_conn(x->p, ph, k);
        long nu = nc_route_conn(x->f, &c, nc_route_key(i, k), load, &x->buf);
        if (nu < 0) {
            x->code = nc_route_failure(x->err, nu, &c);
            fail(x);
            break;
        }
        if (ph->coupled)
            merge_route(x, x->buf.one, (size_t)nu, c.weight);
        else if (flow_start(x->net, x->buf.one, (size_t)nu, ph->bytes * c.weight, ph->rate_cap,
                            0, i) == UINT32_MAX) {
            fail(x);
            break;
        }
    }
    if (ph->coupled && !x->failed) {
        if (flow_start(x->net, x->buf.all, x->buf.n_all, ph->bytes, ph->rate_cap, 0, i) ==
            UINT32_MAX)
            fail(x);
        flow_net_bias_load(x->net, x->buf.all, x->buf.n_all, -1);
    }
    for (size_t u = 0; u < x->buf.n_all; u++)
        x->slot[x->buf.all[u].link] = UINT32_MAX;
}

static void phase_done(sim_engine *eng, void *ctx, uint64_t data)
{
    executor *x = ctx;
    uint32_t i = (uint32_t)data;
    double now = sim_now(eng);
    if (now > x->end)
        x->end = now;
    for (uint32_t k = x->next_offset[i]; k < x->next_offset[i + 1]; k++)
        if (--x->deps_left[x->next[k]] == 0)
            start_phase(x, x->next[k]);
}

static void flow_finished(void *ctx, uint32_t flow, uint64_t tag)
{
    (void)flow;
    executor *x = ctx;
    uint32_t i = (uint32_t)tag;
    if (--x->flows_left[i] == 0)
        sim_schedule_in(x->eng, x->p->phase[i].latency_s, 0, KIND_NC_PHASE_DONE, phase_done, x,
                        i);
}

static int build_dependents(const nc_plan *p, uint32_t **offset, uint32_t **next)
{
    *offset = calloc((size_t)p->n_phases + 2, sizeof **offset);
    *next = malloc(((size_t)p->n_deps + 1) * sizeof **next);
    if (!*offset || !*next)
        return -1;
    for (uint32_t i = 0; i < p->n_phases; i++)
        for (uint32_t k = 0; k < p->phase[i].n_deps; k++)
            (*offset)[p->deps[p->phase[i].dep_first + k] + 1]++;
    for (uint32_t i = 0; i < p->n_phases; i++)
        (*offset)[i + 1] += (*offset)[i];
    uint32_t *fill = calloc((size_t)p->n_phases + 1, sizeof *fill);
    if (!fill)
        return -1;
    for (uint32_t i = 0; i < p->n_phases; i++)
        for (uint32_t k = 0; k < p->phase[i].n_deps; k++) {
            uint32_t d = p->deps[p->phase[i].dep_first + k];
            (*next)[(*offset)[d] + fill[d]++] = i;
        }
    free(fill);
    return 0;
}

int nc_simulate(const nc_plan *p, const nc_fabric *f, nc_result *out, sim_error *err)
{
    memset(out, 0, sizeof *out);
    executor x = {.p = p, .f = f, .err = err};
    int rc = -1;
    x.eng = sim_engine_create();
    x.deps_left = malloc(((size_t)p->n_phases + 1) * sizeof *x.deps_left);
    x.flows_left = calloc((size_t)p->n_phases + 1, sizeof *x.flows_left);
    x.buf.one = malloc(((size_t)f->g->n_links + 1) * sizeof *x.buf.one);
    x.buf.all = malloc(((size_t)f->g->n_links + 1) * sizeof *x.buf.all);
    x.slot = malloc(((size_t)f->g->n_links + 1) * sizeof *x.slot);
    if (x.slot)
        for (uint32_t l = 0; l < f->g->n_links; l++)
            x.slot[l] = UINT32_MAX;
    if (!x.eng || !x.deps_left || !x.flows_left || !x.buf.one || !x.buf.all || !x.slot ||
        build_dependents(p, &x.next_offset, &x.next))
        goto done;
    x.net = flow_net_create(x.eng, f->g->n_links, f->g->link_bytes_per_s, flow_finished, &x);
    if (!x.net || (f->incast_efficiency && flow_net_set_incast(x.net, f->incast_efficiency)))
        goto done;
    for (uint32_t i = 0; i < p->n_phases; i++)
        x.deps_left[i] = p->phase[i].n_deps;
    for (uint32_t i = 0; i < p->n_phases && !x.failed; i++)
        if (x.deps_left[i] == 0)
            start_phase(&x, i);
    if (!x.failed)
        sim_run(x.eng, INFINITY);
    if (x.failed)
        goto done;
    nc_fill_result(p, x.end, out);
    const flow_stats *st = flow_net_stats(x.net);
    out->flows = st->flows_started;
    out->recomputes = st->recomputes;
    out->events = sim_events_fired(x.eng);
    out->max_active_flows = st->max_active;
    rc = 0;
done:
    if (rc)
        rc = x.code ? x.code
                    : sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory in the flow model");
    flow_net_destroy(x.net);
    sim_engine_destroy(x.eng);
    free(x.deps_left);
    free(x.flows_left);
    free(x.next_offset);
    free(x.next);
    free(x.buf.one);
    free(x.buf.all);
    free(x.slot);
    return rc;
}
