/* flow.c - max-min fair flow model with incremental recomputation (see
 * flow.h).
 *
 * Data layout: flows and links are dense ids with per-id arrays (STYLE.md);
 * the flow records, usage pool and link lists are flow_store.c's
 * (flow_internal.h gives the layout: 116 bytes for a 6-hop single-path
 * flow). A link keeps the list of flows on it; the flows finishing at an
 * instant leave them together at its recomputation, one pass over each
 * touched list (flow_store_flush), which the recomputation scans anyway
 * (one search per flow and link was O(n^3) for an all-to-all). Recomputation
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
#include "pages.h"

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
    n->link_capacity = capacity;
    size_t L = (size_t)n_links + 1;
    n->load = calloc(L, sizeof *n->load);
    n->busy = calloc(L / 64 + 1, sizeof *n->busy);
    n->slot_of = calloc(L, sizeof *n->slot_of);
    n->free_head = n->fresh_head = n->fresh_tail = n->bare_head = n->bare_tail = NO_FLOW;
    n->place_next = NO_FLOW;
    n->free_class = NO_CLASS;
    if (!n->load || !n->busy || !n->slot_of ||
        flow_grow_slots(n, n_links < 64 ? n_links + 1 : 64)) {
        flow_net_destroy(n);
        return NULL;
    }
    return n;
}

void flow_net_destroy(flow_net *n)
{
    if (!n)
        return;
    flow_store_free(n);
    free(n->caps);
    void *arrays[] = {n->load, n->link_bytes, n->busy, n->slot_of, n->link_of,
                      n->slot, n->live, n->comp_links,
                      n->heap, n->heap_share, n->dirty,
                      n->touched, n->is_dirty};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        free(arrays[i]);
    free(n);
}

int flow_net_reset(flow_net *n, sim_engine *eng)
{
    if (n->n_active || n->n_free != n->n_flows)
        return -1;
    flow_store_flush(n);
    /* the slots go back to no link, to be given again in first-use order as
     * on a new net; their lists are empty and keep their arrays */
    for (uint32_t l = 0; l < n->n_slots; l++)
        n->slot_of[n->link_of[l]] = 0;
    size_t S = n->n_slots, L = (size_t)n->n_links + 1;
    memset(n->link_bytes, 0, S * sizeof *n->link_bytes);
    for (size_t l = 0; l < S; l++)
        n->slot[l].mark = n->slot[l].n_bneck = 0; /* the lists stay (empty, their arrays kept) */
    memset(n->is_dirty, 0, S * sizeof *n->is_dirty);
    n->n_slots = 0;
    /* all of it (a failed route may leave its bias), its pages given back:
     * the next collective may touch only a few links */
    sim_zero_release(n->load, L * sizeof *n->load);
    memset(n->busy, 0, (L / 64 + 1) * sizeof *n->busy);
    for (uint32_t f = 0; f < n->n_flows; f++)
        n->flow_mark[f] = 0; /* held the free list's links */
    flow_store_reset(n);
    n->eng = eng;
    n->n_flows = n->n_free = n->n_active = n->n_capped_active = 0;
    n->free_head = n->fresh_head = n->fresh_tail = n->bare_head = n->bare_tail = NO_FLOW;
    n->place_next = NO_FLOW;
    n->n_dirty = n->epoch = n->heap_n = 0;
    n->recompute_pending = 0;
    memset(&n->stats, 0, sizeof n->stats);
    return 0;
}

/* realloc *p to n elements of elem bytes; 0 or -1 (*p kept) */
static int regrow(void *p, size_t n, size_t elem)
{
    void *q = realloc(*(void **)p, n * elem);
    if (!q)
        return -1;
    *(void **)p = q;
    return 0;
}

/* The slot records to cap entries, aligned (realloc would not keep them on
 * cache lines): the old ones copied, the new ones zero. 0 or -1 (kept). */
static int regrow_slots(flow_net *n, size_t cap)
{
    size_t bytes = cap * sizeof(flow_slot); /* a multiple of FLOW_SLOT_ALIGN */
    flow_slot *q = aligned_alloc(FLOW_SLOT_ALIGN, bytes);
    if (!q)
        return -1;
    size_t old = n->cap_slots < cap ? n->cap_slots : cap;
    if (old)
        memcpy(q, n->slot, old * sizeof *q);
    memset(q + old, 0, (cap - old) * sizeof *q);
    free(n->slot);
    n->slot = q;
    return 0;
}

int flow_grow_slots(flow_net *n, size_t need)
{
    if (need <= n->cap_slots)
        return 0;
    size_t cap = (size_t)n->cap_slots * 2 > need ? (size_t)n->cap_slots * 2 : need;
    if (cap > (size_t)n->n_links / 2) /* most links: all of them, not one more doubling */
        cap = (size_t)n->n_links + 1;
    if (cap < need)
        return -1;
    if (regrow(&n->link_of, cap, sizeof *n->link_of) ||
        regrow(&n->link_bytes, cap, sizeof *n->link_bytes) ||
        regrow_slots(n, cap) ||
        regrow(&n->live, cap, sizeof *n->live) ||
        regrow(&n->comp_links, cap, sizeof *n->comp_links) ||
        regrow(&n->heap, cap, sizeof *n->heap) ||
        regrow(&n->heap_share, cap, sizeof *n->heap_share) ||
        regrow(&n->dirty, cap, sizeof *n->dirty) ||
        regrow(&n->touched, cap, sizeof *n->touched) ||
        regrow(&n->is_dirty, cap, sizeof *n->is_dirty))
        return -1; /* the grown ones are only larger: cap_slots stays */
    size_t old = n->cap_slots;
    memset(n->link_bytes + old, 0, (cap - old) * sizeof *n->link_bytes);
    memset(n->live + old, 0, (cap - old) * sizeof *n->live);
    memset(n->is_dirty + old, 0, (cap - old) * sizeof *n->is_dirty);
    n->cap_slots = (uint32_t)cap;
    return 0;
}

int flow_net_reserve(flow_net *n, uint32_t n_links)
{
    return flow_grow_slots(n, n_links < n->n_links ? (size_t)n_links + 1 : (size_t)n->n_links + 1);
}

void flow_mark_dirty(flow_net *n, uint32_t link)
{
    if (!n->is_dirty[link]) { /* each link once: the list never outgrows the links */
        n->is_dirty[link] = 1;
        n->dirty[n->n_dirty++] = link;
    }
}

static void clear_dirty(flow_net *n)
{
    for (uint32_t i = 0; i < n->n_dirty; i++)
        n->is_dirty[n->dirty[i]] = 0;
    n->n_dirty = 0;
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

/* Append flow f to a FIFO list threaded through bneck. */
static void list_push(flow_net *n, uint32_t *head, uint32_t *tail, uint32_t f)
{
    n->bneck[f] = NO_FLOW;
    if (*tail == NO_FLOW)
        *head = f;
    else
        n->bneck[*tail] = f;
    *tail = f;
}

/* Room in the capped scratch for one more flow with a cap or no link. */
static int reserve_capped(flow_net *n)
{
    if (n->n_capped_active < n->cap_capped)
        return 0;
    size_t cap = (size_t)n->cap_capped + n->cap_capped / 4 + 16;
    uint32_t *p = realloc(n->capped, cap * sizeof *p);
    if (!p || cap > UINT32_MAX)
        return -1;
    n->capped = p;
    n->cap_capped = (uint32_t)cap;
    return 0;
}

static int is_capped(const flow_net *n, uint32_t f)
{
    return isfinite(flow_cls(n, f)->rate_cap) || flow_n_use(n, f) == 0;
}

uint32_t flow_start(flow_net *n, const topo_usage *usage, size_t n_usage, double bytes,
                    double rate_cap, double latency_s, uint64_t tag)
{
    if (!(bytes >= 0) || !isfinite(bytes) || !(rate_cap > 0) ||
        !(latency_s >= 0) || !isfinite(latency_s))
        return UINT32_MAX;
    for (size_t i = 0; i < n_usage; i++)
        if (usage[i].link >= n->n_links || !(usage[i].weight > 0) || !isfinite(usage[i].weight))
            return UINT32_MAX;
    /* placed at once: a flow without bytes, or on no link and uncapped */
    int is_now = bytes == 0 || (n_usage == 0 && !isfinite(rate_cap));
    if (n->in_burst && (n->n_pending || is_now) && flow_store_room(n))
        return UINT32_MAX; /* the lists are read below: their room first */
    if (n->n_pending) /* the lists as the flows finished so far leave them */
        flow_store_flush(n);
    uint32_t f;
    if (n->n_free)
        f = n->free_head;
    else {
        if (n->n_flows == n->cap_flows && flow_store_grow_flows(n))
            return UINT32_MAX;
        f = n->n_flows;
    }
    if (reserve_capped(n) || flow_store_attach(n, f, usage, n_usage, rate_cap, latency_s,
                                                n->in_burst && !is_now))
        return UINT32_MAX;
    if (n->n_free) {
        n->free_head = n->flow_mark[f]; /* the free list's link */
        n->flow_mark[f] = 0;
        n->n_free--;
    } else
        n->n_flows++;
    n->bytes[f] = bytes;
    n->left[f] = bytes;
    n->rate[f] = 0;
    n->since[f] = sim_now(n->eng);
    n->tag[f] = tag;
    n->event[f] = 0;
    n->n_capped_active += is_capped(n, f);
    n->n_active++;
    n->stats.flows_started++;
    n->stats.bytes_started += bytes;
    if (n->n_active > n->stats.max_active)
        n->stats.max_active = n->n_active;
    uint32_t n_use = flow_n_use(n, f);
    if (bytes == 0 || (n_use == 0 && !isfinite(rate_cap))) {
        if (n_use) /* on no fresh list: its entries now, after the waiting ones */
            flow_store_place(n, f);
        n->bneck[f] = NO_LINK;
        n->event[f] = sim_schedule_in(n->eng, 0.0, 0, KIND_FLOW_DONE, on_done, n, f);
        return f;
    }
    if (n_use) {
        list_push(n, &n->fresh_head, &n->fresh_tail, f);
        if (n->place_next == NO_FLOW)
            n->place_next = f;
    }
    else
        list_push(n, &n->bare_head, &n->bare_tail, f);
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
        const uint32_t *links = flow_links(n, f);
        for (uint32_t k = 0, m = flow_n_use(n, f); k < m; k++)
            n->link_bytes[links[k]] += moved * flow_use_weight(n, f, k);
    }
    n->since[f] = now;
}

void flow_net_sync(flow_net *n)
{
    double now = sim_now(n->eng);
    for (uint32_t f = 0; f < n->n_flows; f++)
        if (flow_is_active(n, f))
            flow_advance(n, f, now);
}

void flow_finish(flow_net *n, uint32_t f, int recompute)
{
    n->stats.bytes_delivered += n->bytes[f];
    n->left[f] = 0;
    double latency_s = flow_cls(n, f)->latency_s;
    n->n_capped_active -= is_capped(n, f);
    if (recompute)
        flow_store_detach_later(n, f);
    else
        flow_store_detach(n, f);
    n->n_active--;
    n->stats.flows_finished++;
    if (recompute)
        want_recompute(n);
    /* reported by an event even without latency: the callback may start
     * flows, which must not join a filling already under way */
    sim_schedule_in(n->eng, latency_s, 0, KIND_FLOW_DELIVER, on_deliver, n, f);
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
    n->flow_mark[f] = n->free_head; /* the free list's link (no filling marks a free id) */
    n->free_head = f;
    n->n_free++;
    if (n->done)
        n->done(n->ctx, f, tag);
}

uint32_t flow_busy_links(const flow_net *n, uint32_t *out)
{
    uint32_t nl = 0;
    for (uint32_t w = 0; w <= n->n_links / 64; w++)
        for (uint64_t b = n->busy[w]; b; b &= b - 1) /* lowest set bit first */
            out[nl++] = n->slot_of[64 * w + (uint32_t)__builtin_ctzll(b)] - 1;
    return nl;
}

uint32_t flow_take_dirty(flow_net *n, uint32_t *out, uint32_t count)
{
    for (uint32_t i = 0; i < n->n_dirty; i++) {
        uint32_t l = n->dirty[i];
        if (n->slot[l].mark != n->epoch) {
            n->slot[l].mark = n->epoch;
            out[count++] = l;
        }
    }
    clear_dirty(n);
    return count;
}

/* The flows and links connected to the dirty links; returns the flow count
 * and sets *nl. */
static uint32_t collect_component(flow_net *n, uint32_t *nl_out)
{
    n->epoch += 2;
    uint32_t nl = flow_take_dirty(n, n->comp_links, 0), nf = 0;
    for (uint32_t head = 0; head < nl; head++) {
        const link_list *ll = &n->slot[n->comp_links[head]].list;
        for (uint32_t i = 0; i < ll->n; i++) {
            uint32_t f = flow_list_ids_c(ll)[i];
            if (n->flow_mark[f] == n->epoch)
                continue;
            n->flow_mark[f] = n->epoch;
            n->comp_flows[nf++] = f;
            const uint32_t *links = flow_links(n, f);
            for (uint32_t k = 0, m = flow_n_use(n, f); k < m; k++)
                if (n->slot[links[k]].mark != n->epoch) {
                    n->slot[links[k]].mark = n->epoch;
                    n->comp_links[nl++] = links[k];
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
    clear_dirty(n); /* the links the finishes above marked are in the component */
    n->stats.recomputes++;
    return flow_refill_component(n, nf, nl);
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
    flow_store_flush(n);
    uint32_t nl;
    if (n->n_active <= COMPONENT_MAX_FLOWS || n->incast || n->no_repair) {
        for (uint32_t f = n->fresh_head; f != NO_FLOW;) { /* in the component */
            uint32_t next = n->bneck[f];
            n->bneck[f] = NO_LINK; /* no bottleneck yet (the list's link until now) */
            f = next;
        }
        n->fresh_head = n->fresh_tail = NO_FLOW;
        nl = refill_component(n, now);
    } else
        nl = flow_repair(n, now);
    /* capped flows on no link (the list is threaded through bneck, which
     * no filling writes for them: they are on no link) */
    for (uint32_t f = n->bare_head; f != NO_FLOW;) {
        uint32_t next = n->bneck[f];
        n->bneck[f] = NO_LINK;
        if (flow_is_active(n, f) && !n->event[f])
            flow_set_rate(n, f, flow_cls(n, f)->rate_cap);
        f = next;
    }
    n->bare_head = n->bare_tail = NO_FLOW;
#ifndef NDEBUG
    check_capacity(n, nl);
#else
    (void)nl;
#endif
}

const double *flow_net_link_load(const flow_net *n) { return n->load; }

double flow_curve_at(const flow_curve *c, double flows)
{
    if (flows <= 1)
        return 1.0;
    if (flows < 2) /* a fractional fan-in: linear from 1 (alone) to the curve at 2 */
        return 1.0 + (flows - 1) * (c->efficiency[0] - 1.0);
    if (flows <= c->flows[0])
        return c->efficiency[0];
    for (unsigned i = 1; i < c->n_points; i++)
        if (flows <= c->flows[i]) {
            double u = (flows - c->flows[i - 1]) / (c->flows[i] - c->flows[i - 1]);
            return c->efficiency[i - 1] + u * (c->efficiency[i] - c->efficiency[i - 1]);
        }
    return c->efficiency[c->n_points - 1];
}

int flow_curve_check(const flow_curve *c, char *why, size_t size)
{
    if (c->n_points < 1 || c->n_points > FLOW_CURVE_POINTS) {
        snprintf(why, size, "a curve needs 1 to %d points, got %u", FLOW_CURVE_POINTS,
                 c->n_points);
        return -1;
    }
    for (unsigned i = 0; i < c->n_points; i++) {
        if (!(c->flows[i] >= 2 && isfinite(c->flows[i])) ||
            (i > 0 && !(c->flows[i] > c->flows[i - 1]))) {
            snprintf(why, size, "point %u: flows %g: the points must ascend from 2", i + 1,
                     c->flows[i]);
            return -1;
        }
        if (!(c->efficiency[i] > 0 && c->efficiency[i] <= 1)) {
            snprintf(why, size, "point %u: efficiency %g is outside (0, 1]", i + 1,
                     c->efficiency[i]);
            return -1;
        }
    }
    return 0;
}

int flow_net_set_incast(flow_net *n, const flow_curve *const *curve_of_link,
                        const uint8_t *injects)
{
    char why[128];
    for (uint32_t l = 0; curve_of_link && l < n->n_links; l++)
        if (curve_of_link[l] && flow_curve_check(curve_of_link[l], why, sizeof why))
            return -1;
    if (curve_of_link && injects) { /* offers for the flows the net has room for */
        double *q = realloc(n->offer, ((size_t)n->cap_flows + 1) * sizeof *q);
        if (!q)
            return -1;
        n->offer = q;
    }
    n->incast = curve_of_link;
    n->injects = curve_of_link ? injects : NULL;
    return 0;
}

/* The rate flow f offers: its cap, or less where one of its injection links
 * leaves it less (an equal share of the link among its weights). */
double flow_offer(const flow_net *n, uint32_t f)
{
    double offer = flow_cls(n, f)->rate_cap;
    const uint32_t *links = flow_links(n, f);
    for (uint32_t k = 0, m = flow_n_use(n, f); k < m; k++) {
        uint32_t g = n->link_of[links[k]];
        if (n->injects[g] && n->load[g] > 0 && n->link_capacity[g] / n->load[g] < offer)
            offer = n->link_capacity[g] / n->load[g];
    }
    return offer;
}

/* Slot l's effective fan-in (flow_net_set_incast): each flow counts by the
 * fraction of the link it offers, at most 1; the sum clamped to [1, n]. An
 * N -> 1 incast of senders alone on their links sums N ones: exactly N. */
static double fanin(const flow_net *n, uint32_t l)
{
    const link_list *ll = &n->slot[l].list;
    double flows = n->live[l]; /* the list may still hold flows finished this instant */
    if (!n->injects)
        return flows;
    double c = n->slot[l].cap, sum = 0;
    for (uint32_t k = 0; k < ll->n; k++) {
        uint32_t f = flow_list_ids_c(ll)[k];
        if (!flow_is_active(n, f))
            continue; /* finished: leaves the list at the next flush */
        double x = n->offer[f] * flow_entry_weight(n, ll, k) / c;
        sum += x < 1 ? x : 1;
    }
    return sum < 1 ? 1 : sum > flows ? flows : sum;
}

double flow_net_fanin(const flow_net *n, uint32_t link)
{
    if (n->place_next != NO_FLOW) /* the entries written late are the list's own */
        flow_store_place((flow_net *)n, NO_FLOW);
    if (link >= n->n_links || !n->slot_of[link] || !n->live[n->slot_of[link] - 1])
        return 0;
    return fanin(n, n->slot_of[link] - 1);
}

double flow_link_capacity_incast(const flow_net *n, uint32_t l)
{
    const flow_curve *c = n->incast[n->link_of[l]];
    if (c && n->live[l] >= 2)
        return n->slot[l].cap * flow_curve_at(c, fanin(n, l));
    return n->slot[l].cap;
}

void flow_net_burst_begin(flow_net *n) { n->in_burst = 1; }

int flow_net_burst_end(flow_net *n)
{
    if (flow_store_room(n))
        return -1;
    n->in_burst = 0;
    return 0;
}

void flow_net_bias_load(flow_net *n, const topo_usage *u, size_t k, double sign)
{
    for (size_t i = 0; i < k; i++)
        if (u[i].link < n->n_links) {
            n->load[u[i].link] += sign * u[i].weight;
            uint32_t g = u[i].link;
            if (sign < 0 && !(n->busy[g >> 6] >> (g & 63) & 1))
                n->load[u[i].link] = 0; /* no rounding residue on an idle link */
        }
}
double flow_rate(const flow_net *n, uint32_t f) { return f < n->n_flows ? n->rate[f] : 0; }
uint32_t flow_active_count(const flow_net *n) { return n->n_active; }
const flow_stats *flow_net_stats(const flow_net *n) { return &n->stats; }
double flow_net_link_bytes(const flow_net *n, uint32_t link)
{
    return link < n->n_links && n->slot_of[link] ? n->link_bytes[n->slot_of[link] - 1] : 0;
}

size_t flow_net_memory_bytes(const flow_net *n)
{
    size_t L = (size_t)n->n_links + 1, S = n->cap_slots, b = sizeof *n;
    b += L * (sizeof(double) + sizeof(uint32_t)); /* load, slot_of */
    b += (L / 64 + 1) * sizeof(uint64_t);              /* busy */
    /* per slot: its record (flow_slot: the list, capacities, counts, marks);
     * link_bytes, heap_share; link_of, comp_links, heap, touched, dirty,
     * live; is_dirty */
    b += S * (sizeof(flow_slot) + 2 * sizeof(double) + 6 * sizeof(uint32_t) + 1);
    return b + flow_store_memory_bytes(n);
}

void flow_net_set_local_repair(flow_net *n, int is_on) { n->no_repair = !is_on; }

int flow_net_full_rates(flow_net *n, double *rates, size_t n_rates)
{
    /* the filling writes bottlenecks: keep the net's own for its repairs */
    uint32_t *kept = malloc(((size_t)n->n_flows + 1) * sizeof *kept);
    if (!kept)
        return -1;
    flow_store_flush(n);
    if (n->n_flows)
        memcpy(kept, n->bneck, (size_t)n->n_flows * sizeof *kept);
    n->epoch += 2;
    uint32_t nf = 0, nl = 0;
    for (uint32_t f = 0; f < n->n_flows; f++)
        if (flow_is_active(n, f) && n->bytes[f] > 0) {
            n->flow_mark[f] = n->epoch;
            n->comp_flows[nf++] = f;
        }
    nl = flow_busy_links(n, n->comp_links);
    flow_fill(n, nf, nl, 0);
    for (uint32_t i = 0; i < nf; i++)
        if (n->comp_flows[i] < n_rates)
            rates[n->comp_flows[i]] = flow_new_rate(n, n->comp_flows[i]);
    if (n->n_flows)
        memcpy(n->bneck, kept, (size_t)n->n_flows * sizeof *kept);
    free(kept);
    return 0;
}

/* Checks slots links[0..nl), or every slot when links is NULL. */
static int capacity_violation(const flow_net *n, const uint32_t *links, uint32_t nl,
                              uint32_t *link, double *used)
{
    for (uint32_t i = 0; i < nl; i++) {
        uint32_t l = links ? links[i] : i;
        double sum = 0;
        const link_list *ll = &n->slot[l].list;
        for (uint32_t k = 0; k < ll->n; k++) /* not a finished flow waiting for a flush */
            if (flow_is_active(n, flow_list_ids_c(ll)[k]))
                sum += n->rate[flow_list_ids_c(ll)[k]] * flow_entry_weight(n, ll, k);
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
                n->link_of[l], used, flow_link_capacity(n, l));
        abort();
    }
}
#endif

/* n_bneck against a count of the active flows' bottlenecks (a flow not yet
 * recomputed holds the list of new flows in bneck instead: left out). */
static int check_bneck_counts(const flow_net *n, sim_error *err)
{
    uint32_t *count = calloc((size_t)n->n_slots + 1, sizeof *count);
    uint8_t *fresh = calloc((size_t)n->n_flows + 1, 1);
    int rc = 0;
    if (!count || !fresh) {
        rc = sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory checking the flow model");
        goto out;
    }
    for (uint32_t f = n->fresh_head; f != NO_FLOW; f = n->bneck[f])
        fresh[f] = 1;
    for (uint32_t f = 0; f < n->n_flows; f++)
        if (flow_is_active(n, f) && !fresh[f] && n->bneck[f] != NO_LINK) {
            if (n->bneck[f] >= n->n_slots) {
                rc = sim_error_set(err, SIM_ERR_INTERNAL, NULL, 0,
                                   "flow %u: bottleneck slot %u of %u", f, n->bneck[f],
                                   n->n_slots);
                goto out;
            }
            count[n->bneck[f]]++;
        }
    for (uint32_t l = 0; l < n->n_slots; l++)
        if (count[l] != n->slot[l].n_bneck) {
            rc = sim_error_set(err, SIM_ERR_INTERNAL, NULL, 0,
                               "link %u: %u flows' bottleneck, counted %u", n->link_of[l],
                               count[l], n->slot[l].n_bneck);
            goto out;
        }
out:
    free(count);
    free(fresh);
    return rc;
}

int flow_net_check(const flow_net *n, sim_error *err)
{
    if (n->place_next != NO_FLOW) /* the entries written late are the list's own */
        flow_store_place((flow_net *)n, NO_FLOW);
    uint32_t l;
    for (l = 0; l < n->n_slots; l++) /* every filling leaves its counts 0 (flow_internal.h) */
        if (n->slot[l].waiting)
            return sim_error_set(err, SIM_ERR_INTERNAL, NULL, 0,
                                 "link %u: %u list entries waiting after they were placed",
                                 n->link_of[l], n->slot[l].waiting);
    double used;
    if (capacity_violation(n, NULL, n->n_slots, &l, &used))
        return sim_error_set(err, SIM_ERR_INTERNAL, NULL, 0,
                             "link %u carries %.17g B/s, capacity %.17g", n->link_of[l], used,
                             flow_link_capacity(n, l));
    double in_flight = 0;
    for (uint32_t f = 0; f < n->n_flows; f++)
        if (flow_is_active(n, f))
            in_flight += n->bytes[f];
    double lhs = n->stats.bytes_started, rhs = n->stats.bytes_delivered + in_flight;
    if (fabs(lhs - rhs) > 1e-9 * (lhs > 1 ? lhs : 1))
        return sim_error_set(err, SIM_ERR_INTERNAL, NULL, 0,
                             "bytes started %.17g != delivered %.17g + in flight %.17g", lhs,
                             n->stats.bytes_delivered, in_flight);
    return check_bneck_counts(n, err);
}
