/* flow.c - max-min fair flow model with incremental recomputation (see
 * flow.h).
 *
 * Data layout: flows and links are dense ids with per-id arrays (STYLE.md).
 * A link keeps the list of (flow, usage index) on it; a usage keeps its
 * position in that list, so removing a flow is O(its usages). Recomputation
 * collects the component of the changed links (breadth-first over link ->
 * flows -> links, marked by an epoch counter so nothing needs clearing) and
 * runs progressive filling on it with a binary heap of links keyed by fair
 * share = capacity left / unfrozen weight.
 */
#include "flow.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event_kinds.h"

#define RECOMPUTE_PRIORITY 255 /* after every other event of the instant */
#define FINISHED_FRACTION 1e-12 /* bytes left below this share of the flow: finished */

typedef struct flow_use {
    uint32_t link;
    uint32_t pos;   /* index in the link's list */
    double weight;
} flow_use;

typedef struct link_entry {
    uint32_t flow;
    uint32_t use;   /* index in the flow's usage array */
} link_entry;

typedef struct link_list {
    link_entry *e;
    uint32_t n, cap;
} link_list;

struct flow_net {
    sim_engine *eng;
    flow_done_fn done;
    void *ctx;
    uint32_t n_links;
    double *capacity, *load, *link_bytes;
    double *incast;        /* per link, or NULL: capacity factor under incast */
    link_list *on_link;
    /* per flow */
    uint32_t n_flows, cap_flows;
    flow_use **use;
    uint32_t *n_use;
    double *bytes, *left, *rate, *since, *rate_cap, *latency;
    uint64_t *tag;
    sim_event_id *event;
    uint8_t *active;
    uint32_t *free_ids, n_free;
    uint32_t n_active;
    /* recomputation scratch */
    uint32_t *dirty, n_dirty, cap_dirty;
    uint32_t *link_mark, *flow_mark, epoch;
    uint32_t *comp_links, *comp_flows, *capped;
    double *cap_left, *w_unfrozen, *new_rate;
    uint32_t *n_unfrozen, *heap, *heap_pos;
    uint32_t heap_n;
    int recompute_pending;
    int failed;
    flow_stats stats;
};

static int grow_array(void **p, size_t n, size_t elem)
{
    void *q = realloc(*p, n * elem);
    if (!q)
        return -1;
    *p = q;
    return 0;
}

flow_net *flow_net_create(sim_engine *eng, uint32_t n_links, const double *capacity,
                          flow_done_fn done, void *ctx)
{
    for (uint32_t l = 0; l < n_links; l++)
        if (!(capacity[l] > 0) || !isfinite(capacity[l]))
            return NULL;
    flow_net *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    n->eng = eng;
    n->done = done;
    n->ctx = ctx;
    n->n_links = n_links;
    size_t L = (size_t)n_links + 1;
    n->capacity = malloc(L * sizeof *n->capacity);
    n->load = calloc(L, sizeof *n->load);
    n->link_bytes = calloc(L, sizeof *n->link_bytes);
    n->on_link = calloc(L, sizeof *n->on_link);
    n->link_mark = calloc(L, sizeof *n->link_mark);
    n->comp_links = malloc(L * sizeof *n->comp_links);
    n->cap_left = malloc(L * sizeof *n->cap_left);
    n->w_unfrozen = malloc(L * sizeof *n->w_unfrozen);
    n->n_unfrozen = malloc(L * sizeof *n->n_unfrozen);
    n->heap = malloc(L * sizeof *n->heap);
    n->heap_pos = malloc(L * sizeof *n->heap_pos);
    if (!n->capacity || !n->load || !n->link_bytes || !n->on_link || !n->link_mark ||
        !n->comp_links || !n->cap_left || !n->w_unfrozen || !n->n_unfrozen || !n->heap ||
        !n->heap_pos) {
        flow_net_destroy(n);
        return NULL;
    }
    memcpy(n->capacity, capacity, (size_t)n_links * sizeof *capacity);
    return n;
}

void flow_net_destroy(flow_net *n)
{
    if (!n)
        return;
    for (uint32_t l = 0; n->on_link && l < n->n_links; l++)
        free(n->on_link[l].e);
    for (uint32_t f = 0; n->use && f < n->n_flows; f++)
        free(n->use[f]);
    free(n->incast);
    void *arrays[] = {n->capacity, n->load, n->link_bytes, n->on_link, n->link_mark,
                      n->comp_links, n->cap_left, n->w_unfrozen, n->n_unfrozen, n->heap,
                      n->heap_pos, n->use, n->n_use, n->bytes, n->left, n->rate, n->since,
                      n->rate_cap, n->latency, n->tag, n->event, n->active, n->free_ids,
                      n->dirty, n->flow_mark, n->comp_flows, n->capped, n->new_rate};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        free(arrays[i]);
    free(n);
}

static int grow_flows(flow_net *n)
{
    size_t cap = n->cap_flows ? 2 * (size_t)n->cap_flows : 256;
    if (cap > UINT32_MAX - 1)
        return -1;
    if (grow_array((void **)&n->use, cap, sizeof *n->use) ||
        grow_array((void **)&n->n_use, cap, sizeof *n->n_use) ||
        grow_array((void **)&n->bytes, cap, sizeof *n->bytes) ||
        grow_array((void **)&n->left, cap, sizeof *n->left) ||
        grow_array((void **)&n->rate, cap, sizeof *n->rate) ||
        grow_array((void **)&n->since, cap, sizeof *n->since) ||
        grow_array((void **)&n->rate_cap, cap, sizeof *n->rate_cap) ||
        grow_array((void **)&n->latency, cap, sizeof *n->latency) ||
        grow_array((void **)&n->tag, cap, sizeof *n->tag) ||
        grow_array((void **)&n->event, cap, sizeof *n->event) ||
        grow_array((void **)&n->active, cap, sizeof *n->active) ||
        grow_array((void **)&n->free_ids, cap, sizeof *n->free_ids) ||
        grow_array((void **)&n->flow_mark, cap, sizeof *n->flow_mark) ||
        grow_array((void **)&n->comp_flows, cap, sizeof *n->comp_flows) ||
        grow_array((void **)&n->capped, cap, sizeof *n->capped) ||
        grow_array((void **)&n->new_rate, cap, sizeof *n->new_rate))
        return -1;
    for (size_t f = n->cap_flows; f < cap; f++) {
        n->use[f] = NULL;
        n->flow_mark[f] = 0;
        n->active[f] = 0;
    }
    n->cap_flows = (uint32_t)cap;
    return 0;
}

static void mark_dirty(flow_net *n, uint32_t link)
{
    if (n->n_dirty == n->cap_dirty) {
        size_t cap = n->cap_dirty ? 2 * (size_t)n->cap_dirty : 1024;
        if (grow_array((void **)&n->dirty, cap, sizeof *n->dirty)) {
            n->failed = 1;
            return;
        }
        n->cap_dirty = (uint32_t)cap;
    }
    n->dirty[n->n_dirty++] = link;
}

static void on_recompute(sim_engine *eng, void *ctx, uint64_t data);
static double link_capacity(const flow_net *n, uint32_t l);
static void on_done(sim_engine *eng, void *ctx, uint64_t data);
static void on_deliver(sim_engine *eng, void *ctx, uint64_t data);

static void want_recompute(flow_net *n)
{
    if (n->recompute_pending)
        return;
    n->recompute_pending = 1;
    sim_schedule_in(n->eng, 0.0, RECOMPUTE_PRIORITY, KIND_FLOW_RECOMPUTE, on_recompute, n, 0);
}

/* Put the flow on its links; merges repeated links into one usage. */
static int attach(flow_net *n, uint32_t f, const topo_usage *u, size_t k)
{
    flow_use *use = malloc((k ? k : 1) * sizeof *use);
    if (!use)
        return -1;
    uint32_t m = 0;
    for (size_t i = 0; i < k; i++) {
        uint32_t l = u[i].link;
        /* repeated links are rare and usage lists short per link: the
         * link's own list, whose last entry is this flow if seen, finds them */
        link_list *ll = &n->on_link[l];
        if (ll->n && ll->e[ll->n - 1].flow == f) {
            use[ll->e[ll->n - 1].use].weight += u[i].weight;
            n->load[l] += u[i].weight;
            continue;
        }
        if (ll->n == ll->cap) {
            uint32_t cap = ll->cap ? 2 * ll->cap : 4;
            if (grow_array((void **)&ll->e, cap, sizeof *ll->e)) {
                free(use);
                return -1;
            }
            ll->cap = cap;
        }
        ll->e[ll->n] = (link_entry){f, m};
        use[m] = (flow_use){l, ll->n, u[i].weight};
        ll->n++;
        m++;
        n->load[l] += u[i].weight;
        mark_dirty(n, l);
    }
    n->use[f] = use;
    n->n_use[f] = m;
    return 0;
}

static void detach(flow_net *n, uint32_t f)
{
    for (uint32_t i = 0; i < n->n_use[f]; i++) {
        flow_use *u = &n->use[f][i];
        link_list *ll = &n->on_link[u->link];
        link_entry last = ll->e[--ll->n];
        if (u->pos != ll->n) { /* move the last entry into the hole */
            ll->e[u->pos] = last;
            n->use[last.flow][last.use].pos = u->pos;
        }
        n->load[u->link] -= u->weight;
        if (ll->n == 0)
            n->load[u->link] = 0; /* no rounding residue on an idle link */
        mark_dirty(n, u->link);
    }
    free(n->use[f]);
    n->use[f] = NULL;
    n->n_use[f] = 0;
}

uint32_t flow_start(flow_net *n, const topo_usage *usage, size_t n_usage, double bytes,
                    double rate_cap, double latency_s, uint64_t tag)
{
    if (n->failed || !(bytes >= 0) || !isfinite(bytes) || !(rate_cap > 0) ||
        !(latency_s >= 0) || !isfinite(latency_s))
        return UINT32_MAX;
    for (size_t i = 0; i < n_usage; i++)
        if (usage[i].link >= n->n_links || !(usage[i].weight > 0) || !isfinite(usage[i].weight))
            return UINT32_MAX;
    uint32_t f;
    if (n->n_free)
        f = n->free_ids[--n->n_free];
    else {
        if (n->n_flows == n->cap_flows && grow_flows(n))
            return UINT32_MAX;
        f = n->n_flows++;
    }
    n->bytes[f] = bytes;
    n->left[f] = bytes;
    n->rate[f] = 0;
    n->since[f] = sim_now(n->eng);
    n->rate_cap[f] = rate_cap;
    n->latency[f] = latency_s;
    n->tag[f] = tag;
    n->event[f] = 0;
    n->active[f] = 1;
    if (attach(n, f, usage, n_usage)) {
        n->active[f] = 0;
        n->free_ids[n->n_free++] = f;
        return UINT32_MAX;
    }
    n->n_active++;
    n->stats.flows_started++;
    n->stats.bytes_started += bytes;
    if (n->n_active > n->stats.max_active)
        n->stats.max_active = n->n_active;
    if (bytes == 0 || (n->n_use[f] == 0 && !isfinite(rate_cap))) {
        n->event[f] = sim_schedule_in(n->eng, 0.0, 0, KIND_FLOW_DONE, on_done, n, f);
        return f;
    }
    want_recompute(n);
    return f;
}

/* Bytes moved since the last update, onto the flow's links. */
static void advance(flow_net *n, uint32_t f, double now)
{
    double moved = n->rate[f] * (now - n->since[f]);
    if (moved > n->left[f])
        moved = n->left[f];
    if (moved > 0) {
        n->left[f] -= moved;
        for (uint32_t i = 0; i < n->n_use[f]; i++)
            n->link_bytes[n->use[f][i].link] += moved * n->use[f][i].weight;
    }
    n->since[f] = now;
}

static void finish_flow(flow_net *n, uint32_t f, int recompute)
{
    n->stats.bytes_delivered += n->bytes[f];
    n->left[f] = 0;
    detach(n, f);
    n->active[f] = 0;
    n->n_active--;
    n->stats.flows_finished++;
    if (recompute)
        want_recompute(n);
    /* reported by an event even without latency: the callback may start
     * flows, which must not join a filling already under way */
    sim_schedule_in(n->eng, n->latency[f], 0, KIND_FLOW_DELIVER, on_deliver, n, f);
}

static void on_done(sim_engine *eng, void *ctx, uint64_t data)
{
    flow_net *n = ctx;
    uint32_t f = (uint32_t)data;
    n->event[f] = 0;
    advance(n, f, sim_now(eng));
    finish_flow(n, f, 1);
}

/* The id is free for reuse only once the delivery is reported, so the
 * callback can still read the tag and a new flow cannot take the id first. */
static void on_deliver(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)eng;
    flow_net *n = ctx;
    uint32_t f = (uint32_t)data;
    uint64_t tag = n->tag[f];
    n->free_ids[n->n_free++] = f;
    if (n->done)
        n->done(n->ctx, f, tag);
}

/* ---- binary min-heap of links keyed by fair share ---- */

static double share(const flow_net *n, uint32_t l)
{
    double c = n->cap_left[l] > 0 ? n->cap_left[l] : 0;
    return c / n->w_unfrozen[l];
}

static void heap_swap(flow_net *n, uint32_t i, uint32_t j)
{
    uint32_t a = n->heap[i], b = n->heap[j];
    n->heap[i] = b;
    n->heap[j] = a;
    n->heap_pos[b] = i;
    n->heap_pos[a] = j;
}

static void sift_down(flow_net *n, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n->heap_n && share(n, n->heap[l]) < share(n, n->heap[m]))
            m = l;
        if (r < n->heap_n && share(n, n->heap[r]) < share(n, n->heap[m]))
            m = r;
        if (m == i)
            return;
        heap_swap(n, i, m);
        i = m;
    }
}

static void heap_fix(flow_net *n, uint32_t i)
{
    while (i > 0 && share(n, n->heap[i]) < share(n, n->heap[(i - 1) / 2])) {
        heap_swap(n, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
    sift_down(n, i);
}

static void heap_remove(flow_net *n, uint32_t link)
{
    uint32_t i = n->heap_pos[link];
    n->heap_n--;
    if (i != n->heap_n) {
        heap_swap(n, i, n->heap_n);
        heap_fix(n, i);
    }
}

static void freeze(flow_net *n, uint32_t f, double rate)
{
    n->new_rate[f] = rate;
    n->flow_mark[f] = n->epoch + 1; /* frozen in this filling */
    for (uint32_t i = 0; i < n->n_use[f]; i++) {
        const flow_use *u = &n->use[f][i];
        n->cap_left[u->link] -= rate * u->weight;
        n->w_unfrozen[u->link] -= u->weight;
        if (--n->n_unfrozen[u->link] == 0)
            heap_remove(n, u->link);
        else
            heap_fix(n, n->heap_pos[u->link]);
    }
}

static int cmp_cap(const void *a, const void *b, void *ctx);

/* Progressive filling over comp_flows[0..nf) whose links are
 * comp_links[0..nl); writes new_rate. Flow marks: epoch = in the component,
 * epoch + 1 = frozen. */
static void fill(flow_net *n, uint32_t nf, uint32_t nl)
{
    n->heap_n = 0;
    for (uint32_t i = 0; i < nl; i++) {
        uint32_t l = n->comp_links[i];
        n->cap_left[l] = link_capacity(n, l);
        n->w_unfrozen[l] = 0;
        n->n_unfrozen[l] = 0;
    }
    uint32_t n_capped = 0;
    for (uint32_t i = 0; i < nf; i++) {
        uint32_t f = n->comp_flows[i];
        for (uint32_t k = 0; k < n->n_use[f]; k++) {
            n->w_unfrozen[n->use[f][k].link] += n->use[f][k].weight;
            n->n_unfrozen[n->use[f][k].link]++;
        }
        if (isfinite(n->rate_cap[f]) || n->n_use[f] == 0)
            n->capped[n_capped++] = f;
        n->stats.usages_refilled += n->n_use[f];
    }
    for (uint32_t i = 0; i < nl; i++) {
        uint32_t l = n->comp_links[i];
        if (n->n_unfrozen[l]) {
            n->heap[n->heap_n] = l;
            n->heap_pos[l] = n->heap_n++;
        }
    }
    for (uint32_t i = n->heap_n / 2 + 1; i-- > 0;)
        if (i < n->heap_n)
            sift_down(n, i);
    /* flows with a cap, by cap (insertion sort: few flows carry caps) */
    for (uint32_t i = 1; i < n_capped; i++)
        for (uint32_t j = i; j > 0 && cmp_cap(&n->capped[j - 1], &n->capped[j], n) > 0; j--) {
            uint32_t t = n->capped[j];
            n->capped[j] = n->capped[j - 1];
            n->capped[j - 1] = t;
        }
    uint32_t next_cap = 0, left = nf;
    while (left) {
        while (next_cap < n_capped && n->flow_mark[n->capped[next_cap]] != n->epoch)
            next_cap++;
        double by_link = n->heap_n ? share(n, n->heap[0]) : INFINITY;
        double by_cap = next_cap < n_capped ? n->rate_cap[n->capped[next_cap]] : INFINITY;
        if (by_cap <= by_link) {
            freeze(n, n->capped[next_cap++], by_cap);
            left--;
            continue;
        }
        if (!n->heap_n)
            break; /* unreachable: every uncapped flow has a link */
        uint32_t l = n->heap[0];
        const link_list *ll = &n->on_link[l];
        for (uint32_t i = 0; i < ll->n; i++) {
            uint32_t f = ll->e[i].flow;
            if (n->flow_mark[f] == n->epoch) {
                freeze(n, f, by_link);
                left--;
            }
        }
    }
}

static int cmp_cap(const void *a, const void *b, void *ctx)
{
    const flow_net *n = ctx;
    double x = n->rate_cap[*(const uint32_t *)a], y = n->rate_cap[*(const uint32_t *)b];
    return (x > y) - (x < y);
}

/* The flows and links connected to the dirty links; returns the flow count
 * and sets *nl. */
static uint32_t collect_component(flow_net *n, uint32_t *nl_out)
{
    n->epoch += 2;
    uint32_t nl = 0, nf = 0;
    for (uint32_t i = 0; i < n->n_dirty; i++) {
        uint32_t l = n->dirty[i];
        if (n->link_mark[l] != n->epoch) {
            n->link_mark[l] = n->epoch;
            n->comp_links[nl++] = l;
        }
    }
    n->n_dirty = 0;
    for (uint32_t head = 0; head < nl; head++) {
        const link_list *ll = &n->on_link[n->comp_links[head]];
        for (uint32_t i = 0; i < ll->n; i++) {
            uint32_t f = ll->e[i].flow;
            if (n->flow_mark[f] == n->epoch)
                continue;
            n->flow_mark[f] = n->epoch;
            n->comp_flows[nf++] = f;
            for (uint32_t k = 0; k < n->n_use[f]; k++) {
                uint32_t m = n->use[f][k].link;
                if (n->link_mark[m] != n->epoch) {
                    n->link_mark[m] = n->epoch;
                    n->comp_links[nl++] = m;
                }
            }
        }
    }
    *nl_out = nl;
    return nf;
}

#ifndef NDEBUG
static void check_capacity(const flow_net *n, uint32_t nl);
#endif

static void on_recompute(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)data;
    flow_net *n = ctx;
    double now = sim_now(eng);
    n->recompute_pending = 0;
    uint32_t nl, nf = collect_component(n, &nl);
    /* flows done but for rounding are finished now, in this batch */
    uint32_t kept = 0;
    for (uint32_t i = 0; i < nf; i++) {
        uint32_t f = n->comp_flows[i];
        advance(n, f, now);
        if (n->rate[f] > 0 && n->left[f] <= FINISHED_FRACTION * n->bytes[f]) {
            sim_cancel(eng, n->event[f]);
            n->event[f] = 0;
            n->flow_mark[f] = 0;
            finish_flow(n, f, 0); /* its links are in this component already */
            continue;
        }
        n->comp_flows[kept++] = f;
    }
    nf = kept;
    n->n_dirty = 0; /* the links the finishes above marked are in the component */
    n->stats.recomputes++;
    n->stats.flows_refilled += nf;
    n->stats.links_refilled += nl;
    fill(n, nf, nl);
    for (uint32_t i = 0; i < nf; i++) {
        uint32_t f = n->comp_flows[i];
        double r = n->new_rate[f];
        if (r == n->rate[f] && n->event[f])
            continue; /* same rate: the completion event stands */
        n->rate[f] = r;
        if (n->event[f])
            sim_cancel(eng, n->event[f]);
        n->stats.reschedules++;
        double dt = isfinite(r) ? n->left[f] / r : 0.0;
        n->event[f] = sim_schedule_in(eng, dt, 0, KIND_FLOW_DONE, on_done, n, f);
    }
#ifndef NDEBUG
    check_capacity(n, nl);
#endif
}

const double *flow_net_link_load(const flow_net *n) { return n->load; }

int flow_net_set_incast(flow_net *n, const double *eff)
{
    if (!eff) {
        free(n->incast);
        n->incast = NULL;
        return 0;
    }
    for (uint32_t l = 0; l < n->n_links; l++)
        if (!(eff[l] > 0 && eff[l] <= 1))
            return -1;
    double *copy = malloc(((size_t)n->n_links + 1) * sizeof *copy);
    if (!copy)
        return -1;
    memcpy(copy, eff, (size_t)n->n_links * sizeof *copy);
    free(n->incast);
    n->incast = copy;
    return 0;
}

/* Link l's capacity now: reduced by the incast factor while two or more
 * flows converge on it. */
static double link_capacity(const flow_net *n, uint32_t l)
{
    if (n->incast && n->on_link[l].n >= 2)
        return n->capacity[l] * n->incast[l];
    return n->capacity[l];
}

void flow_net_bias_load(flow_net *n, const topo_usage *u, size_t k, double sign)
{
    for (size_t i = 0; i < k; i++)
        if (u[i].link < n->n_links) {
            n->load[u[i].link] += sign * u[i].weight;
            if (n->on_link[u[i].link].n == 0 && sign < 0)
                n->load[u[i].link] = 0; /* no rounding residue on an idle link */
        }
}
double flow_rate(const flow_net *n, uint32_t f) { return f < n->n_flows ? n->rate[f] : 0; }
uint32_t flow_active_count(const flow_net *n) { return n->n_active; }
const flow_stats *flow_net_stats(const flow_net *n) { return &n->stats; }
const double *flow_net_link_bytes(const flow_net *n) { return n->link_bytes; }

size_t flow_net_memory_bytes(const flow_net *n)
{
    size_t L = (size_t)n->n_links + 1, F = n->cap_flows, b = sizeof *n;
    b += L * (4 * sizeof(double) + sizeof(link_list) + 5 * sizeof(uint32_t));
    b += F * (sizeof(flow_use *) + 2 * sizeof(uint32_t) + 7 * sizeof(double) + sizeof(uint64_t) +
              sizeof(sim_event_id) + 1 + 4 * sizeof(uint32_t));
    b += (size_t)n->cap_dirty * sizeof(uint32_t);
    for (uint32_t l = 0; l < n->n_links; l++)
        b += (size_t)n->on_link[l].cap * sizeof(link_entry);
    for (uint32_t f = 0; f < n->n_flows; f++)
        if (n->use[f])
            b += (n->n_use[f] ? n->n_use[f] : 1) * sizeof(flow_use);
    return b + (n->incast ? L * sizeof(double) : 0);
}

int flow_net_full_rates(flow_net *n, double *rates, size_t n_rates)
{
    n->epoch += 2;
    uint32_t nf = 0, nl = 0;
    for (uint32_t f = 0; f < n->n_flows; f++)
        if (n->active[f] && n->bytes[f] > 0) {
            n->flow_mark[f] = n->epoch;
            n->comp_flows[nf++] = f;
        }
    for (uint32_t l = 0; l < n->n_links; l++)
        if (n->on_link[l].n)
            n->comp_links[nl++] = l;
    fill(n, nf, nl);
    for (uint32_t i = 0; i < nf; i++)
        if (n->comp_flows[i] < n_rates)
            rates[n->comp_flows[i]] = n->new_rate[n->comp_flows[i]];
    return 0;
}

/* Checks links[0..nl), or every link when links is NULL. */
static int capacity_violation(const flow_net *n, const uint32_t *links, uint32_t nl,
                              uint32_t *link, double *used)
{
    for (uint32_t i = 0; i < nl; i++) {
        uint32_t l = links ? links[i] : i;
        double sum = 0;
        for (uint32_t i = 0; i < n->on_link[l].n; i++) {
            const link_entry *e = &n->on_link[l].e[i];
            sum += n->rate[e->flow] * n->use[e->flow][e->use].weight;
        }
        if (sum > link_capacity(n, l) * (1 + 1e-9)) {
            *link = l;
            *used = sum;
            return 1;
        }
    }
    return 0;
}

#ifndef NDEBUG
static void check_capacity(const flow_net *n, uint32_t nl)
{
    uint32_t l;
    double used;
    if (capacity_violation(n, n->comp_links, nl, &l, &used)) {
        fprintf(stderr, "flow model invariant broken: link %u carries %.17g B/s > capacity %.17g\n",
                l, used, link_capacity(n, l));
        abort();
    }
}
#endif

int flow_net_check(const flow_net *n, sim_error *err)
{
    uint32_t l;
    double used;
    if (capacity_violation(n, NULL, n->n_links, &l, &used))
        return sim_error_set(err, SIM_ERR_INTERNAL, NULL, 0,
                             "link %u carries %.17g B/s, capacity %.17g", l, used,
                             link_capacity(n, l));
    double in_flight = 0;
    for (uint32_t f = 0; f < n->n_flows; f++)
        if (n->active[f])
            in_flight += n->bytes[f];
    double lhs = n->stats.bytes_started, rhs = n->stats.bytes_delivered + in_flight;
    if (fabs(lhs - rhs) > 1e-9 * (lhs > 1 ? lhs : 1))
        return sim_error_set(err, SIM_ERR_INTERNAL, NULL, 0,
                             "bytes started %.17g != delivered %.17g + in flight %.17g", lhs,
                             n->stats.bytes_delivered, in_flight);
    return 0;
}
