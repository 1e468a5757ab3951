/* netcoll_exec.c - plans on a shared engine and flow net (netcoll_exec.h).
 * Each running plan is a run record holding its phases' counters and the
 * dependents of each phase (CSR); flows and phase events carry
 * (run << 32) | phase, so one flow net serves every plan at once. */
#include "netcoll_exec.h"

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
    uint32_t *block;        /* one allocation: the four arrays below */
    uint32_t *deps_left, *flows_left; /* per phase */
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
    uint32_t **flow_links;  /* per flow id: its links, [0] the count */
    uint8_t *flow_class;
    uint32_t n_flow_slots;
    /* the flow observer (nc_exec_observe), NULL when none */
    nc_exec_flow_start_fn on_start;
    nc_exec_flow_end_fn on_end;
    void *observer;
};

static void phase_done(sim_engine *eng, void *ctx, uint64_t data);

static uint64_t key(uint32_t run, uint32_t phase)
{
    return (uint64_t)run << 32 | phase;
}

/* Add route u[0..k) x w to a coupled phase's merged usages (one entry per
 * link, in first-use order, weights summed in route order: what flow_start
 * would merge itself, without holding every connection's route), and
 * reserve it in the load so that the next adaptive choice sees it. */
static void merge_route(nc_exec *x, const topo_usage *u, size_t k, double w)
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
                x->busy[(size_t)k * x->f->g->n_links + l] += dt;
            }
        if (classes >= 2)
            x->overlap[l] += dt;
    }
    x->since[l] = now;
    on[c] = delta > 0 ? on[c] + 1 : on[c] - 1;
}

/* remember flow id's links and count it on them; 0 or -1 (no memory) */
static int track_start(nc_exec *x, uint32_t id, unsigned c, const topo_usage *u, size_t n)
{
    if (!x->n_on)
        return 0;
    if (id >= x->n_flow_slots) {
        uint32_t cap = x->n_flow_slots ? 2 * x->n_flow_slots : 1024;
        while (cap <= id)
            cap *= 2;
        uint32_t **q = realloc(x->flow_links, cap * sizeof *q);
        if (!q)
            return -1;
        x->flow_links = q;
        uint8_t *k = realloc(x->flow_class, cap);
        if (!k)
            return -1;
        x->flow_class = k;
        memset(q + x->n_flow_slots, 0, (cap - x->n_flow_slots) * sizeof *q);
        x->n_flow_slots = cap;
    }
    uint32_t *links = malloc((n + 1) * sizeof *links);
    if (!links)
        return -1;
    links[0] = (uint32_t)n;
    for (size_t i = 0; i < n; i++) {
        links[i + 1] = u[i].link;
        link_change(x, u[i].link, c, +1);
    }
    free(x->flow_links[id]);
    x->flow_links[id] = links;
    x->flow_class[id] = (uint8_t)c;
    return 0;
}

static void track_finish(nc_exec *x, uint32_t id)
{
    if (!x->n_on || id >= x->n_flow_slots || !x->flow_links[id])
        return;
    uint32_t *links = x->flow_links[id];
    for (uint32_t i = 0; i < links[0]; i++)
        link_change(x, links[i + 1], x->flow_class[id], -1);
    free(links);
    x->flow_links[id] = NULL;
}

/* start one flow of run r's phase i, track it and tell the observer: it
 * carries n_conn connections, the first c, weighing w together */
static int start_flow(nc_exec *x, uint32_t r, uint32_t i, const topo_usage *u, size_t n,
                      double bytes, const nc_conn *c, uint32_t n_conn, double w)
{
    const nc_phase *ph = &x->run[r].p->phase[i];
    uint32_t id = flow_start(x->net, u, n, bytes, ph->rate_cap, 0, key(r, i));
    if (id == UINT32_MAX || track_start(x, id, x->run[r].cls, u, n))
        return no_memory(x);
    if (x->on_start) {
        nc_exec_flow f = {.tag = x->run[r].tag, .phase = i, .n_conn = n_conn, .src = c->src,
                          .dst = c->dst, .bytes = bytes * w, .flow_bytes = bytes, .u = u,
                          .n_u = n};
        x->on_start(x->observer, id, &f);
    }
    return 0;
}

/* route and start phase i of run r; 0 or an error code */
static int start_phase(nc_exec *x, uint32_t r, uint32_t i)
{
    const nc_plan *p = x->run[r].p;
    const nc_phase *ph = &p->phase[i];
    const double *load = flow_net_link_load(x->net);
    x->buf.n_all = 0;
    x->run[r].flows_left[i] = ph->coupled ? 1 : ph->n_conn;
    if (ph->n_conn == 0) {
        if (!sim_schedule_in(x->eng, ph->latency_s, 0, KIND_NC_PHASE_DONE, phase_done, x,
                             key(r, i)))
            return no_memory(x);
        return 0;
    }
    int rc = 0;
    nc_conn first = nc_phase_conn(p, ph, 0);
    double weight = 0; /* a coupled phase's connections together */
    for (uint32_t k = 0; k < ph->n_conn && !rc; k++) {
        nc_conn c = nc_phase_conn(p, ph, k);
        long nu = nc_route_conn(x->f, &c, nc_route_key(i, k), load, &x->buf);
        if (nu < 0)
            rc = nc_route_failure(x->err, nu, &c);
        else if (ph->coupled)
            merge_route(x, x->buf.one, (size_t)nu, c.weight);
        else
            rc = start_flow(x, r, i, x->buf.one, (size_t)nu, ph->bytes * c.weight, &c, 1, 1);
        weight += c.weight;
    }
    if (ph->coupled && !rc) {
        rc = start_flow(x, r, i, x->buf.all, x->buf.n_all, ph->bytes, &first, ph->n_conn,
                        weight);
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

nc_exec *nc_exec_create(sim_engine *eng, const nc_fabric *f)
{
    nc_exec *x = calloc(1, sizeof *x);
    if (!x)
        return NULL;
    x->eng = eng;
    x->f = f;
    x->free_head = UINT32_MAX;
    size_t n_links = (size_t)f->g->n_links + 1;
    x->buf.one = malloc(n_links * sizeof *x->buf.one);
    x->buf.all = malloc(n_links * sizeof *x->buf.all);
    x->slot = malloc(n_links * sizeof *x->slot);
    if (x->slot)
        for (size_t l = 0; l < n_links; l++)
            x->slot[l] = UINT32_MAX;
    x->net = flow_net_create(eng, f->g->n_links, f->g->link_bytes_per_s, flow_finished, x);
    if (!x->buf.one || !x->buf.all || !x->slot || !x->net ||
        (f->incast_efficiency && flow_net_set_incast(x->net, f->incast_efficiency))) {
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
    for (uint32_t i = 0; i < x->n_flow_slots; i++)
        free(x->flow_links[i]);
    free(x->flow_links);
    free(x->flow_class);
    free(x->n_on);
    free(x->busy);
    free(x->overlap);
    free(x->since);
    free(x);
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
    run->block = malloc((3 * n + 2 + (size_t)p->n_deps + 1) * sizeof *run->block);
    if (!run->block)
        return -1;
    run->deps_left = run->block;
    run->flows_left = run->deps_left + n;
    run->next_offset = run->flows_left + n;
    run->next = run->next_offset + n + 2;
    memset(run->next_offset, 0, (n + 2) * sizeof *run->next_offset);
    for (uint32_t i = 0; i < p->n_phases; i++) {
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

int nc_exec_start(nc_exec *x, const nc_plan *p, unsigned cls, nc_exec_done_fn done, void *ctx,
                  uint64_t tag, sim_error *err)
{
    x->err = err;
    uint32_t r = new_run(x);
    if (r == UINT32_MAX)
        return no_memory(x);
    if (build_run(&x->run[r], p)) {
        release(x, r);
        return no_memory(x);
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
    for (uint32_t i = 0; i < p->n_phases; i++)
        if (x->run[r].deps_left[i] == 0) {
            int rc = start_phase(x, r, i);
            if (rc)
                return rc;
        }
    return 0;
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
    size_t n = (size_t)x->f->g->n_links + 1;
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
    return x->n_on && cls < NC_EXEC_CLASSES ? x->busy + (size_t)cls * x->f->g->n_links : NULL;
}

const double *nc_exec_link_overlap(const nc_exec *x)
{
    return x->n_on ? x->overlap : NULL;
}
