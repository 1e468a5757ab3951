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
#include "flow_internal.h"

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
    n->touched = malloc(L * sizeof *n->touched);
    if (!n->capacity || !n->load || !n->link_bytes || !n->on_link || !n->link_mark ||
        !n->comp_links || !n->cap_left || !n->w_unfrozen || !n->n_unfrozen || !n->heap ||
        !n->heap_pos || !n->touched) {
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
                      n->dirty, n->flow_mark, n->comp_flows, n->capped, n->new_rate, n->touched,
                      n->bneck, n->fresh};
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
        grow_array((void **)&n->new_rate, cap, sizeof *n->new_rate) ||
        grow_array((void **)&n->bneck, cap, sizeof *n->bneck) ||
        grow_array((void **)&n->fresh, cap, sizeof *n->fresh))
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
    n->bneck[f] = NO_LINK;
    n->fresh[n->n_fresh++] = f;
    want_recompute(n);
    return f;
}

/* Bytes moved since the last update, onto the flow's links. */
void flow_advance(flow_net *n, uint32_t f, double now)
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

void flow_finish(flow_net *n, uint32_t f, int recompute)
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
    flow_advance(n, f, sim_now(eng));
    flow_finish(n, f, 1);
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

/* The whole component of the dirty links, refilled: what every net did
 * before the local repair, kept for small nets (no bookkeeping, and the
 * same arithmetic, so their results stay bit for bit) and with incast (a
 * link's capacity changes with its flow count). Returns the link count. */
static uint32_t refill_component(flow_net *n, double now)
{
    uint32_t nl, nf = collect_component(n, &nl);
    /* flows done but for rounding are finished now, in this batch */
    uint32_t kept = 0;
    for (uint32_t i = 0; i < nf; i++) {
        uint32_t f = n->comp_flows[i];
        flow_advance(n, f, now);
        if (n->rate[f] > 0 && n->left[f] <= FINISHED_FRACTION * n->bytes[f]) {
            sim_cancel(n->eng, n->event[f]);
            n->event[f] = 0;
            n->flow_mark[f] = 0;
            flow_finish(n, f, 0); /* its links are in this component already */
            continue;
        }
        n->comp_flows[kept++] = f;
    }
    nf = kept;
    n->n_dirty = 0; /* the links the finishes above marked are in the component */
    n->stats.recomputes++;
    n->stats.flows_refilled += nf;
    n->stats.links_refilled += nl;
    flow_fill(n, nf, nl, 0);
    for (uint32_t i = 0; i < nf; i++)
        flow_set_rate(n, n->comp_flows[i], n->new_rate[n->comp_flows[i]]);
    return nl;
}

void flow_set_rate(flow_net *n, uint32_t f, double r)
{
    if (r == n->rate[f] && n->event[f])
        return; /* same rate: the completion event stands */
    flow_advance(n, f, sim_now(n->eng)); /* bytes moved at the old rate */
    n->rate[f] = r;
    if (n->event[f])
        sim_cancel(n->eng, n->event[f]);
    n->stats.reschedules++;
    double dt = isfinite(r) ? n->left[f] / r : 0.0;
    n->event[f] = sim_schedule_in(n->eng, dt, 0, KIND_FLOW_DONE, on_done, n, f);
}

static void on_recompute(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)data;
    flow_net *n = ctx;
    double now = sim_now(eng);
    n->recompute_pending = 0;
    uint32_t nl;
    if (n->n_active <= COMPONENT_MAX_FLOWS || n->incast || n->no_repair)
        nl = refill_component(n, now);
    else
        nl = flow_repair(n, now);
    for (uint32_t i = 0; i < n->n_fresh; i++) { /* capped flows on no link */
        uint32_t f = n->fresh[i];
        if (n->active[f] && !n->n_use[f] && !n->event[f])
            flow_set_rate(n, f, n->rate_cap[f]);
    }
    n->n_fresh = 0;
#ifndef NDEBUG
    check_capacity(n, nl);
#else
    (void)nl;
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
double flow_link_capacity(const flow_net *n, uint32_t l)
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
    b += L * sizeof(uint32_t); /* touched */
    b += F * (sizeof(flow_use *) + 2 * sizeof(uint32_t) + 7 * sizeof(double) + sizeof(uint64_t) +
              sizeof(sim_event_id) + 1 + 6 * sizeof(uint32_t));
    b += (size_t)n->cap_dirty * sizeof(uint32_t);
    for (uint32_t l = 0; l < n->n_links; l++)
        b += (size_t)n->on_link[l].cap * sizeof(link_entry);
    for (uint32_t f = 0; f < n->n_flows; f++)
        if (n->use[f])
            b += (n->n_use[f] ? n->n_use[f] : 1) * sizeof(flow_use);
    return b + (n->incast ? L * sizeof(double) : 0);
}

void flow_net_set_local_repair(flow_net *n, int is_on) { n->no_repair = !is_on; }

int flow_net_full_rates(flow_net *n, double *rates, size_t n_rates)
{
    /* the filling writes bottlenecks: keep the net's own for its repairs */
    uint32_t *kept = malloc(((size_t)n->n_flows + 1) * sizeof *kept);
    if (!kept)
        return -1;
    if (n->n_flows)
        memcpy(kept, n->bneck, (size_t)n->n_flows * sizeof *kept);
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
    flow_fill(n, nf, nl, 0);
    for (uint32_t i = 0; i < nf; i++)
        if (n->comp_flows[i] < n_rates)
            rates[n->comp_flows[i]] = n->new_rate[n->comp_flows[i]];
    if (n->n_flows)
        memcpy(n->bneck, kept, (size_t)n->n_flows * sizeof *kept);
    free(kept);
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
        if (sum > flow_link_capacity(n, l) * (1 + 1e-9)) {
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
                l, used, flow_link_capacity(n, l));
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
                             flow_link_capacity(n, l));
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
