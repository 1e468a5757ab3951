/* netcoll_exec.c - plans on a shared engine and flow net (netcoll_exec.h).
 * Each running plan is a run record holding its phases' counters and the
 * dependents of each phase (CSR); flows and phase events carry
 * (run << 32) | phase, so one flow net serves every plan at once. */
#include "netcoll_exec.h"
#include "netcoll_routes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "event_kinds.h"
#include "netcoll_internal.h"

typedef struct exec_run {
    const nc_plan *p;
    nc_exec_done_fn done;
    void *ctx;
    uint64_t tag;
    unsigned cls;
    uint32_t *block;        /* one allocation: the five arrays below */
    uint32_t *deps_left, *flows_left; /* per phase */
    uint32_t *flow_first;   /* per phase: its first flow's number in the plan */
    uint32_t first;         /* folded: the plan's first flow in the fold; else UINT32_MAX */
    uint32_t *next_offset, *next;     /* dependents of each phase (CSR) */
    uint32_t phases_left;
    uint32_t next_free;     /* free list (UINT32_MAX: end) */
} exec_run;

struct nc_exec {
    sim_engine *eng;
    const nc_fabric *f;
    flow_net *net;
    exec_run *run;
    uint32_t n_runs, cap_runs, free_head;
    uint32_t n_links;       /* the net's: the fabric's, or the fold's link cells */
    flow_fold *fd;          /* folded (nc_exec_create_folded), else NULL */
    topo_usage *quotient;   /* folded: a flow's quotient usages, fabric links + 1 */
    nc_route_buf buf;       /* all: n_links entries, a coupled phase's merged usages */
    uint32_t *slot;         /* link -> its entry in buf.all, or UINT32_MAX */
    uint64_t started, finished;
    int code;
    sim_error *err;
    /* link activity (nc_exec_track_links), NULL when off */
    uint32_t *n_on;         /* per (link, class): flows on it now */
    double *busy;           /* per (class, link): seconds with a flow of the class */
    double *overlap;        /* per link: seconds with two classes or more */
    double *since;          /* per link: the last change */
    uint32_t **flow_links;  /* per flow id: its links, [0] the count; kept for the id's
                               next flow (no allocation per flow) */
    uint32_t *flow_links_cap; /* per flow id: room in flow_links[id] */
    uint8_t *flow_class;    /* per flow id: its class; UNTRACKED when none is on links */
    uint32_t n_flow_slots;
    /* the flow observer (nc_exec_observe), NULL when none */
    nc_exec_flow_start_fn on_start;
    nc_exec_flow_end_fn on_end;
    void *observer;
    nc_route_cache *routes; /* coupled phases' merged routes (nc_exec_keep_routes), or NULL */
};

static void phase_done(sim_engine *eng, void *ctx, uint64_t data);

static uint64_t key(uint32_t run, uint32_t phase)
{
    return (uint64_t)run << 32 | phase;
}

/* Add route u[0..k) x w to a coupled phase's merged usages b->all (one
 * entry per link, in first-use order, weights summed in route order: what
 * flow_start would merge itself, without holding every connection's route);
 * slot[link] is its entry or UINT32_MAX. */
static void merge_into(nc_route_buf *b, uint32_t *slot, const topo_usage *u, size_t k, double w)
{
    for (size_t i = 0; i < k; i++) {
        topo_usage one = {u[i].link, u[i].weight * w};
        if (slot[one.link] == UINT32_MAX) {
            slot[one.link] = (uint32_t)b->n_all;
            b->all[b->n_all++] = one;
        } else {
            b->all[slot[one.link]].weight += one.weight;
        }
    }
}

/* merge_into, and reserve the route in the load so that the next adaptive
 * choice sees it (folded routes do not look at the load) */
static void merge_route(nc_exec *x, const topo_usage *u, size_t k, double w)
{
    merge_into(&x->buf, x->slot, u, k, w);
    for (size_t i = 0; i < k && !x->fd; i++) {
        topo_usage one = {u[i].link, u[i].weight * w};
        flow_net_bias_load(x->net, &one, 1, +1);
    }
}

static int no_memory(nc_exec *x)
{
    return sim_error_set(x->err, SIM_ERR_NOMEM, NULL, 0, "out of memory in the flow model");
}

/* a flow of class c enters (+1) or leaves (-1) link l now */
static void link_change(nc_exec *x, uint32_t l, unsigned c, int delta)
{
    double now = sim_now(x->eng), dt = now - x->since[l];
    uint32_t *on = &x->n_on[(size_t)l * NC_EXEC_CLASSES];
    if (dt > 0) {
        unsigned classes = 0;
        for (unsigned k = 0; k < NC_EXEC_CLASSES; k++)
            if (on[k]) {
                classes++;
                x->busy[(size_t)k * x->n_links + l] += dt;
            }
        if (classes >= 2)
            x->overlap[l] += dt;
    }
    x->since[l] = now;
    on[c] = delta > 0 ? on[c] + 1 : on[c] - 1;
}

#define UNTRACKED 0xff /* flow_class of an id with no flow on links */

/* room for flow ids below id + 1; 0 or -1 (no memory) */
static int track_slots(nc_exec *x, uint32_t id)
{
    if (id < x->n_flow_slots)
        return 0;
    uint32_t cap = x->n_flow_slots ? 2 * x->n_flow_slots : 1024;
    while (cap <= id)
        cap *= 2;
    uint32_t **q = realloc(x->flow_links, cap * sizeof *q);
    if (!q)
        return -1;
    x->flow_links = q;
    uint32_t *room = realloc(x->flow_links_cap, cap * sizeof *room);
    if (!room)
        return -1;
    x->flow_links_cap = room;
    uint8_t *k = realloc(x->flow_class, cap);
    if (!k)
        return -1;
    x->flow_class = k;
    memset(q + x->n_flow_slots, 0, (cap - x->n_flow_slots) * sizeof *q);
    memset(room + x->n_flow_slots, 0, (cap - x->n_flow_slots) * sizeof *room);
    memset(k + x->n_flow_slots, UNTRACKED, cap - x->n_flow_slots);
    x->n_flow_slots = cap;
    return 0;
}

/* remember flow id's links and count it on them; 0 or -1 (no memory) */
static int track_start(nc_exec *x, uint32_t id, unsigned c, const topo_usage *u, size_t n)
{
    if (!x->n_on)
        return 0;
    if (track_slots(x, id))
        return -1;
    if (n + 1 > x->flow_links_cap[id]) {
        size_t room = n + 1 > 8 ? n + 1 : 8;
        uint32_t *links = realloc(x->flow_links[id], room * sizeof *links);
        if (!links || room > UINT32_MAX)
            return -1;
        x->flow_links[id] = links;
        x->flow_links_cap[id] = (uint32_t)room;
    }
    uint32_t *links = x->flow_links[id];
    links[0] = (uint32_t)n;
    for (size_t i = 0; i < n; i++) {
        links[i + 1] = u[i].link;
        link_change(x, u[i].link, c, +1);
    }
    x->flow_class[id] = (uint8_t)c;
    return 0;
}

static void track_finish(nc_exec *x, uint32_t id)
{
    if (!x->n_on || id >= x->n_flow_slots || x->flow_class[id] == UNTRACKED)
        return;
    const uint32_t *links = x->flow_links[id];
    for (uint32_t i = 0; i < links[0]; i++)
        link_change(x, links[i + 1], x->flow_class[id], -1);
    x->flow_class[id] = UNTRACKED;
}

/* start one flow of run r's phase i (folded: flow number sid of the fold,
 * on its quotient usages), track it and tell the observer (its own route):
 * it carries n_conn connections, the first c, weighing w together */
static int start_flow(nc_exec *x, uint32_t r, uint32_t i, uint32_t sid, const topo_usage *u,
                      size_t n, double bytes, const nc_conn *c, uint32_t n_conn, double w)
{
    const nc_phase *ph = &x->run[r].p->phase[i];
    const topo_usage *route = u, *on_net = u;
    size_t n_route = n, n_net = n;
    if (x->fd) {
        n_net = flow_fold_quotient(x->fd, sid, u, n, x->quotient);
        on_net = x->quotient;
    }
    uint32_t id = flow_start(x->net, on_net, n_net, bytes, ph->rate_cap, 0, key(r, i));
    if (id == UINT32_MAX || track_start(x, id, x->run[r].cls, on_net, n_net))
        return no_memory(x);
    if (x->on_start) {
        nc_exec_flow f = {.tag = x->run[r].tag, .phase = i, .n_conn = n_conn, .src = c->src,
                          .dst = c->dst, .bytes = bytes * w, .flow_bytes = bytes, .u = route,
                          .n_u = n_route};
        x->on_start(x->observer, id, &f);
    }
    return 0;
}

/* folded: whether flow k of run r's phase i moves (it represents its cell) */
static int moves(const nc_exec *x, const exec_run *run, uint32_t i, uint32_t k)
{
    if (!x->fd)
        return 1;
    uint32_t sid = run->first + run->flow_first[i] + k;
    return x->fd->flow_cell_rep[x->fd->flow_cell[sid]] == sid;
}

/* route and start phase i of run r; 0 or an error code */
static int start_phase(nc_exec *x, uint32_t r, uint32_t i)
{
    const nc_plan *p = x->run[r].p;
    const nc_phase *ph = &p->phase[i];
    const double *load = x->fd ? NULL : flow_net_link_load(x->net);
    const exec_run *run = &x->run[r];
    uint32_t sid = run->first + run->flow_first[i], moving = 0;
    for (uint32_t k = 0; k < (ph->coupled ? (ph->n_conn > 0) : ph->n_conn); k++)
        moving += (uint32_t)moves(x, run, i, k);
    x->buf.n_all = 0;
    x->run[r].flows_left[i] = moving;
    if (moving == 0) {
        if (!sim_schedule_in(x->eng, ph->latency_s, 0, KIND_NC_PHASE_DONE, phase_done, x,
                             key(r, i)))
            return no_memory(x);
        return 0;
    }
    int rc = 0;
    nc_conn first = nc_phase_conn(p, ph, 0);
    double weight = 0; /* a coupled phase's connections together */
    if (ph->coupled && x->routes) {
        size_t nu = nc_route_cache_find(x->routes, p, i, x->buf.all, &weight);
        if (nu) /* routed at an earlier start: the same usages (no load to bias) */
            return start_flow(x, r, i, sid, x->buf.all, nu, ph->bytes, &first, ph->n_conn,
                              weight);
    }
    for (uint32_t k = 0; k < ph->n_conn && !rc; k++) {
        if (!ph->coupled && !moves(x, run, i, k))
            continue;
        nc_conn c = nc_phase_conn(p, ph, k);
        long nu = nc_route_conn(x->f, &c, nc_route_key(i, k), load, &x->buf);
        if (nu < 0)
            rc = nc_route_failure(x->err, nu, &c);
        else if (ph->coupled)
            merge_route(x, x->buf.one, (size_t)nu, c.weight);
        else
            rc = start_flow(x, r, i, sid + k, x->buf.one, (size_t)nu, ph->bytes * c.weight, &c,
                            1, 1);
        weight += c.weight;
    }
    if (ph->coupled && !rc) {
        if (x->routes) /* full: routed again next time */
            (void)nc_route_cache_put(x->routes, p, i, x->buf.all, x->buf.n_all, weight);
        rc = start_flow(x, r, i, sid, x->buf.all, x->buf.n_all, ph->bytes, &first, ph->n_conn,
                        weight);
        if (!x->fd)
            flow_net_bias_load(x->net, x->buf.all, x->buf.n_all, -1);
    }
    for (size_t u = 0; u < x->buf.n_all; u++)
        x->slot[x->buf.all[u].link] = UINT32_MAX;
    return rc;
}

static void fail(nc_exec *x, int code)
{
    if (!x->code)
        x->code = code;
    sim_stop(x->eng);
}

static void release(nc_exec *x, uint32_t r)
{
    free(x->run[r].block);
    memset(&x->run[r], 0, sizeof x->run[r]);
    x->run[r].next_free = x->free_head;
    x->free_head = r;
}

static void phase_done(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)eng;
    nc_exec *x = ctx;
    uint32_t r = (uint32_t)(data >> 32), i = (uint32_t)data;
    exec_run *run = &x->run[r];
    for (uint32_t k = run->next_offset[i]; k < run->next_offset[i + 1] && !x->code; k++)
        if (--run->deps_left[run->next[k]] == 0) {
            int rc = start_phase(x, r, run->next[k]);
            if (rc)
                fail(x, rc);
        }
    if (--x->run[r].phases_left == 0) {
        exec_run done = x->run[r];
        release(x, r);
        x->finished++;
        if (done.done)
            done.done(done.ctx, done.tag);
    }
}

static void flow_finished(void *ctx, uint32_t flow, uint64_t tag)
{
    nc_exec *x = ctx;
    track_finish(x, flow);
    if (x->on_end)
        x->on_end(x->observer, flow);
    uint32_t r = (uint32_t)(tag >> 32), i = (uint32_t)tag;
    if (--x->run[r].flows_left[i] == 0 &&
        !sim_schedule_in(x->eng, x->run[r].p->phase[i].latency_s, 0, KIND_NC_PHASE_DONE,
                         phase_done, x, tag))
        fail(x, no_memory(x));
}

/* an executor on a net of n_links links of the given capacities */
static nc_exec *create(sim_engine *eng, const nc_fabric *f, uint32_t n_links_net,
                       const double *capacity, flow_fold *fd)
{
    nc_exec *x = calloc(1, sizeof *x);
    if (!x)
        return NULL;
    x->eng = eng;
    x->f = f;
    x->fd = fd;
    x->n_links = n_links_net;
    x->free_head = UINT32_MAX;
    size_t n_links = (size_t)f->g->n_links + 1;
    x->buf.one = malloc(n_links * sizeof *x->buf.one);
    x->buf.all = malloc(n_links * sizeof *x->buf.all);
    x->slot = malloc(n_links * sizeof *x->slot);
    if (x->slot)
        for (size_t l = 0; l < n_links; l++)
            x->slot[l] = UINT32_MAX;
    x->quotient = fd ? malloc(n_links * sizeof *x->quotient) : NULL;
    x->net = flow_net_create(eng, n_links_net, capacity, flow_finished, x);
    if (!x->buf.one || !x->buf.all || !x->slot || !x->net || (fd && !x->quotient) ||
        (f->link_curve && flow_net_set_incast(x->net, f->link_curve, f->link_injects))) {
        nc_exec_destroy(x);
        return NULL;
    }
    return x;
}

nc_exec *nc_exec_create_sparse(sim_engine *eng, const nc_fabric *f)
{
    return create(eng, f, f->g->n_links, f->g->link_bytes_per_s, NULL);
}

nc_exec *nc_exec_create(sim_engine *eng, const nc_fabric *f)
{
    nc_exec *x = nc_exec_create_sparse(eng, f);
    if (x && flow_net_reserve(x->net, f->g->n_links)) {
        nc_exec_destroy(x);
        return NULL;
    }
    return x;
}

nc_exec *nc_exec_create_folded(sim_engine *eng, const nc_fabric *f, flow_fold *fd)
{
    if (f->link_curve || topo_router_uses_load(f->router) ||
        fd->n_links != f->g->n_links)
        return NULL;
    nc_exec *x = create(eng, f, fd->n_link_cells, fd->link_cell_capacity, fd);
    if (x && flow_net_reserve(x->net, fd->n_link_cells)) {
        nc_exec_destroy(x);
        return NULL;
    }
    return x;
}

void nc_exec_destroy(nc_exec *x)
{
    if (!x)
        return;
    for (uint32_t r = 0; r < x->n_runs; r++)
        free(x->run[r].block);
    free(x->run);
    flow_net_destroy(x->net);
    free(x->buf.one);
    free(x->buf.all);
    free(x->slot);
    free(x->quotient);
    for (uint32_t i = 0; i < x->n_flow_slots; i++)
        free(x->flow_links[i]);
    free(x->flow_links);
    free(x->flow_links_cap);
    free(x->flow_class);
    free(x->n_on);
    free(x->busy);
    free(x->overlap);
    free(x->since);
    nc_route_cache_free(x->routes);
    free(x);
}

size_t nc_exec_kept_route_bytes(const nc_exec *x) { return nc_route_cache_bytes(x->routes); }

int nc_exec_keep_routes(nc_exec *x, size_t max_usages)
{
    if (x->routes || x->f->link_curve || topo_router_uses_load(x->f->router))
        return 0;
    x->routes = nc_route_cache_create(max_usages);
    return x->routes ? 0 : -1;
}

int nc_exec_reset(nc_exec *x, const nc_fabric *f)
{
    if (x->fd || x->routes || x->n_on || x->on_start || x->on_end || x->code || x->started != x->finished ||
        f->g != x->f->g || f->router != x->f->router ||
        f->link_curve != x->f->link_curve || flow_net_reset(x->net, x->eng))
        return -1;
    x->f = f;
    x->n_runs = 0; /* every record released: its block freed */
    x->free_head = UINT32_MAX;
    x->started = x->finished = 0;
    x->err = NULL;
    return 0;
}

/* a free run record; UINT32_MAX when out of memory */
static uint32_t new_run(nc_exec *x)
{
    if (x->free_head != UINT32_MAX) {
        uint32_t r = x->free_head;
        x->free_head = x->run[r].next_free;
        return r;
    }
    if (x->n_runs == x->cap_runs) {
        uint32_t cap = x->cap_runs ? 2 * x->cap_runs : 64;
        exec_run *q = cap > x->cap_runs ? realloc(x->run, cap * sizeof *q) : NULL;
        if (!q)
            return UINT32_MAX;
        x->run = q;
        x->cap_runs = cap;
    }
    memset(&x->run[x->n_runs], 0, sizeof x->run[0]);
    return x->n_runs++;
}

/* the per-phase counters and the dependents of every phase */
static int build_run(exec_run *run, const nc_plan *p)
{
    size_t n = p->n_phases;
    run->block = malloc((4 * n + 2 + (size_t)p->n_deps + 1) * sizeof *run->block);
    if (!run->block)
        return -1;
    run->deps_left = run->block;
    run->flows_left = run->deps_left + n;
    run->flow_first = run->flows_left + n;
    run->next_offset = run->flow_first + n;
    run->next = run->next_offset + n + 2;
    memset(run->next_offset, 0, (n + 2) * sizeof *run->next_offset);
    uint32_t flows = 0;
    for (uint32_t i = 0; i < p->n_phases; i++) {
        run->flow_first[i] = flows;
        flows += p->phase[i].coupled ? (p->phase[i].n_conn > 0) : p->phase[i].n_conn;
        run->deps_left[i] = p->phase[i].n_deps;
        for (uint32_t k = 0; k < p->phase[i].n_deps; k++)
            run->next_offset[p->deps[p->phase[i].dep_first + k] + 2]++;
    }
    /* counts at d + 2, prefix sums into d + 1: then filling at d + 1 leaves
     * next_offset[d] the start of d's dependents */
    for (uint32_t i = 0; i < p->n_phases; i++)
        run->next_offset[i + 2] += run->next_offset[i + 1];
    for (uint32_t i = 0; i < p->n_phases; i++)
        for (uint32_t k = 0; k < p->phase[i].n_deps; k++) {
            uint32_t d = p->deps[p->phase[i].dep_first + k];
            run->next[run->next_offset[d + 1]++] = i;
        }
    run->phases_left = p->n_phases;
    run->p = p;
    return 0;
}

/* the flows run's plan starts, all phases together */
static uint64_t plan_flows(const exec_run *run)
{
    const nc_plan *p = run->p;
    if (!p->n_phases)
        return 0;
    const nc_phase *last = &p->phase[p->n_phases - 1];
    return (uint64_t)run->flow_first[p->n_phases - 1] +
           (last->coupled ? (last->n_conn > 0) : last->n_conn);
}

int nc_exec_start(nc_exec *x, const nc_plan *p, unsigned cls, nc_exec_done_fn done, void *ctx,
                  uint64_t tag, sim_error *err)
{
    return nc_exec_start_folded(x, p, UINT32_MAX, cls, done, ctx, tag, err);
}

int nc_exec_start_folded(nc_exec *x, const nc_plan *p, uint32_t first, unsigned cls,
                         nc_exec_done_fn done, void *ctx, uint64_t tag, sim_error *err)
{
    x->err = err;
    if (!x->fd != (first == UINT32_MAX))
        return sim_error_set(err, SIM_ERR_INTERNAL, NULL, 0,
                             "a plan started %s on %s executor", x->fd ? "unfolded" : "folded",
                             x->fd ? "a folded" : "an unfolded");
    uint32_t r = new_run(x);
    if (r == UINT32_MAX)
        return no_memory(x);
    if (build_run(&x->run[r], p)) {
        release(x, r);
        return no_memory(x);
    }
    x->run[r].first = first;
    if (x->fd && (uint64_t)first + plan_flows(&x->run[r]) > x->fd->n_flows) {
        release(x, r);
        return sim_error_set(err, SIM_ERR_INTERNAL, NULL, 0,
                             "a folded plan's flows lie outside the fold");
    }
    x->run[r].done = done;
    x->run[r].ctx = ctx;
    x->run[r].tag = tag;
    x->run[r].cls = cls < NC_EXEC_CLASSES ? cls : NC_EXEC_CLASSES - 1;
    x->started++;
    if (p->n_phases == 0) { /* nothing to move: done at once */
        release(x, r);
        x->finished++;
        if (done)
            done(ctx, tag);
        return 0;
    }
    /* the first phases' flows start as one burst: each link list is
     * allocated once, at its final length (flow_net_burst_begin) */
    flow_net_burst_begin(x->net);
    int rc = 0;
    for (uint32_t i = 0; i < p->n_phases && !rc; i++)
        if (x->run[r].deps_left[i] == 0)
            rc = start_phase(x, r, i);
    if (flow_net_burst_end(x->net) && !rc)
        rc = no_memory(x);
    return rc;
}

void nc_exec_observe(nc_exec *x, nc_exec_flow_start_fn started, nc_exec_flow_end_fn finished,
                     void *ctx)
{
    x->on_start = started;
    x->on_end = finished;
    x->observer = ctx;
}

int nc_exec_error(const nc_exec *x)
{
    return x->code;
}

flow_net *nc_exec_net(nc_exec *x)
{
    return x->net;
}

uint64_t nc_exec_started(const nc_exec *x)
{
    return x->started;
}

uint64_t nc_exec_finished(const nc_exec *x)
{
    return x->finished;
}

int nc_exec_track_links(nc_exec *x)
{
    size_t n = (size_t)x->n_links + 1;
    if (x->n_on)
        return 0;
    x->n_on = calloc(n * NC_EXEC_CLASSES, sizeof *x->n_on);
    x->busy = calloc(n * NC_EXEC_CLASSES, sizeof *x->busy);
    x->overlap = calloc(n, sizeof *x->overlap);
    x->since = calloc(n, sizeof *x->since);
    if (!x->n_on || !x->busy || !x->overlap || !x->since) {
        free(x->n_on);
        x->n_on = NULL;
        return -1;
    }
    return 0;
}

const double *nc_exec_link_busy(const nc_exec *x, unsigned cls)
{
    return x->n_on && cls < NC_EXEC_CLASSES ? x->busy + (size_t)cls * x->n_links : NULL;
}

const double *nc_exec_link_overlap(const nc_exec *x)
{
    return x->n_on ? x->overlap : NULL;
}

/* ------------------------------------------------------------ folding */

static int list_reserve(nc_flow_list *l, size_t flows, size_t usages)
{
    if (l->n + flows + 1 > l->cap) {
        size_t cap = (l->n + flows + 1) * 2;
        size_t *o = realloc(l->offset, (cap + 1) * sizeof *o);
        if (o)
            l->offset = o;
        double *b = o ? realloc(l->bytes, cap * sizeof *b) : NULL;
        if (b)
            l->bytes = b;
        uint32_t *ph = b ? realloc(l->phase, cap * sizeof *ph) : NULL;
        if (!ph)
            return -1;
        l->phase = ph;
        if (l->cap == 0)
            l->offset[0] = 0;
        l->cap = cap;
    }
    size_t used = l->offset[l->n];
    if (used + usages > l->cap_usage) {
        size_t cap = (used + usages) * 2;
        topo_usage *u = realloc(l->usage, cap * sizeof *u);
        if (!u)
            return -1;
        l->usage = u;
        l->cap_usage = cap;
    }
    return 0;
}

static int list_add(nc_flow_list *l, const topo_usage *u, size_t k, double bytes, uint32_t phase)
{
    if (list_reserve(l, 1, k))
        return -1;
    size_t at = l->offset[l->n];
    memcpy(l->usage + at, u, k * sizeof *u);
    l->bytes[l->n] = bytes;
    l->phase[l->n] = phase;
    l->offset[++l->n] = at + k;
    return 0;
}

/* Room for a fabric of n_links links in l's routing scratch; 0 or -1. */
static int route_scratch(nc_flow_list *l, size_t n_links)
{
    if (l->route_links >= n_links)
        return 0;
    free(l->route_one);
    free(l->route_all);
    free(l->route_slot);
    l->route_one = malloc(n_links * sizeof *l->route_one);
    l->route_all = malloc(n_links * sizeof *l->route_all);
    l->route_slot = malloc(n_links * sizeof *l->route_slot);
    if (!l->route_one || !l->route_all || !l->route_slot) {
        l->route_links = 0;
        return -1;
    }
    for (size_t i = 0; i < n_links; i++)
        l->route_slot[i] = UINT32_MAX;
    l->route_links = n_links;
    return 0;
}

int nc_exec_plan_flows(const nc_fabric *f, const nc_plan *p, nc_flow_list *l, sim_error *err)
{
    size_t n_links = (size_t)f->g->n_links + 1;
    int rc = route_scratch(l, n_links) || list_reserve(l, 0, 0) ? -1 : 0;
    nc_route_buf buf = {l->route_one, l->route_all, 0};
    uint32_t *slot = l->route_slot;
    for (uint32_t i = 0; i < p->n_phases && rc == 0; i++) {
        const nc_phase *ph = &p->phase[i];
        buf.n_all = 0;
        for (uint32_t k = 0; k < ph->n_conn && rc == 0; k++) {
            nc_conn c = nc_phase_conn(p, ph, k);
            long nu = nc_route_conn(f, &c, nc_route_key(i, k), NULL, &buf);
            if (nu < 0) {
                rc = nc_route_failure(err, nu, &c);
            } else if (!ph->coupled) {
                rc = list_add(l, buf.one, (size_t)nu, ph->bytes * c.weight, i);
            } else {
                merge_into(&buf, slot, buf.one, (size_t)nu, c.weight);
            }
        }
        if (ph->coupled && ph->n_conn > 0 && rc == 0)
            rc = list_add(l, buf.all, buf.n_all, ph->bytes, i);
        for (size_t u = 0; u < buf.n_all; u++)
            slot[buf.all[u].link] = UINT32_MAX;
    }
    if (rc == -1)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory in the flow model");
    return rc;
}

void nc_flow_list_free(nc_flow_list *l)
{
    if (!l)
        return;
    free(l->offset);
    free(l->usage);
    free(l->bytes);
    free(l->phase);
    free(l->route_one);
    free(l->route_all);
    free(l->route_slot);
    memset(l, 0, sizeof *l);
}
