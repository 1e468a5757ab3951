/* flow_fill.c - progressive filling and the local repair of the max-min
 * rates (see flow.h, flow_internal.h).
 *
 * Filling: a binary heap of links keyed by fair share = capacity left /
 * unfrozen weight; the lowest share freezes its unfrozen flows; a flow's cap
 * freezes it when lower. O(usages x log links) per filling.
 *
 * Repair: the rates r are max-min fair exactly when every flow f is at its
 * cap or has a bottleneck, a saturated link on which no flow has a higher
 * rate (Bertsekas & Gallager, Data Networks, 6.5.2; the proof carries over to
 * weighted usages). Each flow remembers the link that froze it. After a
 * change, the flows that may break the condition are only those on the
 * changed links: the new flows (set D), the flows whose remembered
 * bottleneck is a changed link, and the flows that now take more than a
 * flow of D on D's bottleneck. D is filled on what the others leave of each
 * link; the links D and the change touch are checked; the flows that fail
 * join D, and D is filled again, until none fails. Every other flow keeps
 * its rate and its completion event. D only grows, so this ends; once the
 * rounds have filled half as many flows as are active (dense traffic, where
 * one change moves a large share of the rates), one filling of all of them
 * finishes the job: a repair costs at most about 1.5 full fillings.
 */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "flow_internal.h"

/* ---- binary min-heap of links keyed by fair share ---- */

/* A link's share kept beside it in the heap (heap_share), so that the
 * comparisons do not divide: exact at the filling's start and whenever the
 * link is fixed or reaches the top (heap_settle), a lower bound of it in
 * between (freeze only raises shares, "Lazy keys" below). */
static double share(const flow_net *n, uint32_t l)
{
    double c = n->slot[l].cap_left > 0 ? n->slot[l].cap_left : 0;
    return c / n->slot[l].w_unfrozen;
}

static void heap_swap(flow_net *n, uint32_t i, uint32_t j)
{
    uint32_t a = n->heap[i], b = n->heap[j];
    double s = n->heap_share[i];
    n->heap[i] = b;
    n->heap[j] = a;
    n->heap_share[i] = n->heap_share[j];
    n->heap_share[j] = s;
    n->slot[b].heap_pos = i;
    n->slot[a].heap_pos = j;
}

static void sift_down(flow_net *n, uint32_t i)
{
    const double *key = n->heap_share;
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n->heap_n && key[l] < key[m])
            m = l;
        if (r < n->heap_n && key[r] < key[m])
            m = r;
        if (m == i)
            return;
        heap_swap(n, i, m);
        i = m;
    }
}

/* The link at i changed (or was moved there): its share again, then its place. */
static void heap_fix(flow_net *n, uint32_t i)
{
    n->heap_share[i] = share(n, n->heap[i]);
    while (i > 0 && n->heap_share[i] < n->heap_share[(i - 1) / 2]) {
        heap_swap(n, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
    sift_down(n, i);
}

static void heap_remove(flow_net *n, uint32_t link)
{
    uint32_t i = n->slot[link].heap_pos;
    n->heap_n--;
    if (i != n->heap_n) {
        heap_swap(n, i, n->heap_n);
        heap_fix(n, i);
    }
}

/* Lazy keys: a freeze only lowers a link's capacity left and unfrozen
 * weight, at a rate no higher than the link's share, so the share never
 * falls (c >= rW gives (c - rw)/(W - w) >= c/W) and a kept key is a lower
 * bound of it (to an ulp). freeze leaves the keys; before the top is read
 * its share is taken again and, when it rose, sunk to its place, until the
 * top's key is its share. Each pass refreshes a link no freeze has touched
 * since, so at most heap_n passes. */
static void heap_settle(flow_net *n)
{
    for (uint32_t pass = 0; n->heap_n && pass <= n->heap_n; pass++) {
        double s = share(n, n->heap[0]);
        int rose = s > n->heap_share[0];
        n->heap_share[0] = s;
        if (!rose)
            return;
        sift_down(n, 0);
    }
}

#define NOT_IN_HEAP UINT32_MAX

/* Freeze flow f at rate (its new rate: link's level, or its cap when link
 * is NO_LINK). Only the links in the heap move: a link a flow of a repair
 * has alone is not there (fill_repair), and nothing else reads it. */
static void freeze(flow_net *n, uint32_t f, double rate, uint32_t link)
{
    n->bneck[f] = link;
    n->flow_mark[f] = n->epoch + 1; /* frozen in this filling */
    const uint32_t *links = flow_links(n, f);
    for (uint32_t k = 0, m = flow_n_use(n, f); k < m; k++) {
        flow_slot *s = &n->slot[links[k]];
        if (s->heap_pos == NOT_IN_HEAP)
            continue;
        double w = flow_use_weight(n, f, k);
        s->cap_left -= rate * w;
        s->w_unfrozen -= w;
        if (--s->n_unfrozen == 0) {
            heap_remove(n, links[k]);
            s->heap_pos = NOT_IN_HEAP;
        } /* else its key stays: heap_settle */
    }
}

/* A filling's start: each link's capacity (less, with residual, what the
 * flows outside the filling take), the unfrozen weight and count the
 * filling's flows put on it, and the heap of the links with at least
 * heap_min unfrozen flows (the others NOT_IN_HEAP, their count 0 again).
 * A link in the heap leaves it when its count falls to 0, so every count
 * is 0 when the filling ends: the field is the waiting count between
 * fillings. */
static void fill_start(flow_net *n, uint32_t nf, uint32_t nl, int residual, uint32_t heap_min)
{
    n->heap_n = 0;
    for (uint32_t i = 0; i < nl; i++) {
        uint32_t l = n->comp_links[i];
        flow_slot *s = &n->slot[l];
        assert(s->waiting == 0); /* placed, and the last filling left its counts 0 */
        s->cap_left = flow_link_capacity(n, l);
        const link_list *ll = &s->list;
        for (uint32_t k = 0; residual && k < ll->n; k++) {
            uint32_t g = flow_list_ids_c(ll)[k];
            if (n->flow_mark[g] != n->epoch)
                s->cap_left -= n->rate[g] * flow_entry_weight(n, ll, k);
        }
        s->w_unfrozen = 0;
        s->n_unfrozen = 0;
    }
    for (uint32_t i = 0; i < nf; i++) {
        uint32_t f = n->comp_flows[i], m = flow_n_use(n, f);
        const uint32_t *links = flow_links(n, f);
        for (uint32_t k = 0; k < m; k++) {
            flow_slot *s = &n->slot[links[k]];
            s->w_unfrozen += flow_use_weight(n, f, k);
            s->n_unfrozen++;
        }
        n->stats.usages_refilled += m;
    }
    for (uint32_t i = 0; i < nl; i++) {
        uint32_t l = n->comp_links[i];
        flow_slot *s = &n->slot[l];
        if (s->n_unfrozen >= heap_min) {
            n->heap[n->heap_n] = l;
            n->heap_share[n->heap_n] = share(n, l);
            s->heap_pos = n->heap_n++;
        } else { /* not read again in this filling: 0, the waiting count */
            s->heap_pos = NOT_IN_HEAP; /* between fillings (flow_internal.h) */
            s->n_unfrozen = 0;
        }
    }
    for (uint32_t i = n->heap_n / 2 + 1; i-- > 0;)
        if (i < n->heap_n)
            sift_down(n, i);
}

/* The link of lowest share freezes the filling's flows on it at that
 * share; returns how many. */
static uint32_t freeze_lowest(flow_net *n)
{
    uint32_t l = n->heap[0], frozen = 0;
    double level = n->heap_share[0];
    const link_list *ll = &n->slot[l].list;
    for (uint32_t i = 0; i < ll->n; i++) {
        uint32_t f = flow_list_ids_c(ll)[i];
        if (n->flow_mark[f] == n->epoch) {
            freeze(n, f, level, l);
            frozen++;
        }
    }
    /* every flow it froze gets this rate (flow_new_rate); written once its
     * last unfrozen flow has taken it out of the heap (its weight field
     * holds the level from now on: flow_internal.h) */
    assert(n->slot[l].heap_pos == NOT_IN_HEAP);
    n->slot[l].level = level;
    return frozen;
}

static int cmp_cap(const void *a, const void *b, void *ctx);
static int fill_repair(flow_net *n, uint32_t nf, uint32_t nl);

/* Progressive filling (flow_internal.h). Flow marks: epoch = in the
 * filling, epoch + 1 = frozen. */
void flow_fill(flow_net *n, uint32_t nf, uint32_t nl, int residual)
{
    if (residual && !n->incast && fill_repair(n, nf, nl) == 0)
        return;
    for (uint32_t i = 0; n->incast && n->injects && i < nf; i++) /* the fan-ins read them */
        n->offer[n->comp_flows[i]] = flow_offer(n, n->comp_flows[i]);
    fill_start(n, nf, nl, residual, 1);
    uint32_t n_capped = 0;
    for (uint32_t i = 0; i < nf; i++) {
        uint32_t f = n->comp_flows[i];
        if (isfinite(flow_cls(n, f)->rate_cap) || flow_n_use(n, f) == 0)
            n->capped[n_capped++] = f;
    }
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
        heap_settle(n);
        double by_link = n->heap_n ? n->heap_share[0] : INFINITY;
        double by_cap = next_cap < n_capped ? flow_cls(n, n->capped[next_cap])->rate_cap : INFINITY;
        if (by_cap <= by_link) {
            freeze(n, n->capped[next_cap++], by_cap, NO_LINK);
            left--;
            continue;
        }
        if (!n->heap_n)
            break; /* unreachable: every uncapped flow has a link */
        left -= freeze_lowest(n);
    }
}

static int cmp_flow_cap(const void *a, const void *b)
{
    const struct flow_cap *x = a, *y = b;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* The local repair's filling (residual capacities, no incast): a link only
 * one flow of D uses keeps its fair share while D fills (nothing else on it
 * freezes), so it stands as that flow's cap instead of a heap entry; the
 * heap holds only the links D's flows share (a DP ring's hundreds of links
 * against the few it shares with a PP send). The rates are the progressive
 * filling's; links that tie may freeze in another order than flow_fill's
 * heap gives them, which moves the last bits. -1 when out of memory for
 * the caps (flow_fill does it). */
static int fill_repair(flow_net *n, uint32_t nf, uint32_t nl)
{
    if (nf > n->cap_caps) {
        size_t cap = (size_t)nf + nf / 4 + 16;
        struct flow_cap *c = realloc(n->caps, cap * sizeof *c);
        if (!c)
            return -1;
        n->caps = c;
        n->cap_caps = (uint32_t)cap;
    }
    fill_start(n, nf, nl, 1, 2);
    /* each flow's cap: its rate cap, or the least share of the links it has
     * alone (the first such link on a tie), whichever is lower (the rate
     * cap on a tie, as flow_fill freezes caps first) */
    uint32_t n_caps = 0;
    for (uint32_t i = 0; i < nf; i++) {
        uint32_t f = n->comp_flows[i], m = flow_n_use(n, f), at = NO_LINK;
        const uint32_t *links = flow_links(n, f);
        double best = INFINITY;
        for (uint32_t k = 0; k < m; k++)
            if (n->slot[links[k]].heap_pos == NOT_IN_HEAP) {
                double s = share(n, links[k]);
                if (s < best) {
                    best = s;
                    at = links[k];
                }
            }
        double rate_cap = flow_cls(n, f)->rate_cap;
        if (rate_cap <= best) {
            best = rate_cap;
            at = NO_LINK;
        }
        if (isfinite(best) || m == 0)
            n->caps[n_caps++] = (struct flow_cap){best, f, at, i};
    }
    qsort(n->caps, n_caps, sizeof *n->caps, cmp_flow_cap);
    uint32_t next_cap = 0, left = nf;
    while (left) {
        while (next_cap < n_caps && n->flow_mark[n->caps[next_cap].flow] != n->epoch)
            next_cap++;
        heap_settle(n);
        double by_link = n->heap_n ? n->heap_share[0] : INFINITY;
        double by_cap = next_cap < n_caps ? n->caps[next_cap].value : INFINITY;
        if (by_cap <= by_link && next_cap < n_caps) {
            const struct flow_cap *c = &n->caps[next_cap++];
            if (c->link != NO_LINK)
                n->slot[c->link].level = by_cap; /* not in the heap: its weight unread */
            freeze(n, c->flow, by_cap, c->link);
            left--;
            continue;
        }
        if (!n->heap_n)
            break; /* unreachable: every flow has a cap or a shared link */
        left -= freeze_lowest(n);
    }
    return 0;
}

static int cmp_cap(const void *a, const void *b, void *ctx)
{
    const flow_net *n = ctx;
    double x = flow_cls(n, *(const uint32_t *)a)->rate_cap;
    double y = flow_cls(n, *(const uint32_t *)b)->rate_cap;
    return (x > y) - (x < y);
}

/* ---- local repair ---- */

#define RATE_TOL 1e-13 /* relative: rates this close are one level */

static int in_fill(const flow_net *n, uint32_t g)
{
    return n->flow_mark[g] == n->epoch || n->flow_mark[g] == n->epoch + 1;
}

/* Flow g joins D for the next filling (marked epoch + 2, the next epoch). */
static void join(flow_net *n, uint32_t g, uint32_t *nd)
{
    if (n->flow_mark[g] == n->epoch + 2)
        return;
    n->flow_mark[g] = n->epoch + 2;
    n->comp_flows[(*nd)++] = g;
}

/* Check link l after a filling of D: a flow outside D fails when l is its
 * remembered bottleneck and l is no longer saturated or another flow on l
 * is faster, or when it is faster than a flow of D whose bottleneck is l. */
static void check_link(flow_net *n, uint32_t l, uint32_t *nd)
{
    if (!n->slot[l].n_bneck)
        return; /* no flow's bottleneck: none can fail here */
    const link_list *ll = &n->slot[l].list;
    double used = 0, top = 0, low_d = INFINITY;
    for (uint32_t i = 0; i < ll->n; i++) {
        uint32_t g = flow_list_ids_c(ll)[i];
        double r = in_fill(n, g) ? flow_new_rate(n, g) : n->rate[g];
        used += r * flow_entry_weight(n, ll, i);
        top = r > top ? r : top;
        if (in_fill(n, g) && n->bneck[g] == l && r < low_d)
            low_d = r;
    }
    /* the sum's rounding grows with the terms: a margin of a few ulps each */
    double cap = flow_link_capacity(n, l);
    int saturated = cap - used <= (2.0 * ll->n + 8) * 0x1p-52 * cap;
    double slowest_ok = top * (1 - RATE_TOL), fastest_ok = low_d * (1 + RATE_TOL);
    for (uint32_t i = 0; i < ll->n; i++) {
        uint32_t g = flow_list_ids_c(ll)[i];
        if (in_fill(n, g))
            continue;
        if ((n->bneck[g] == l && !(saturated && n->rate[g] >= slowest_ok)) ||
            n->rate[g] > fastest_ok)
            join(n, g, nd);
    }
}

/* Touched links: the dirty ones, deduplicated, with the flows on them
 * advanced and the flows done but for rounding finished (as the component
 * refill does; their links join). Returns the count in n->touched. */
static uint32_t collect_touched(flow_net *n, double now)
{
    n->epoch += 2;
    uint32_t nt = 0;
    for (uint32_t h = 0;; h++) {
        nt = flow_take_dirty(n, n->touched, nt);
        if (h == nt)
            return nt;
        const link_list *ll = &n->slot[n->touched[h]].list;
        for (uint32_t i = 0; i < ll->n;) {
            uint32_t f = flow_list_ids_c(ll)[i];
            flow_advance(n, f, now);
            if (n->rate[f] > 0 && n->event[f] && n->left[f] <= FINISHED_FRACTION * n->bytes[f]) {
                sim_cancel(n->eng, n->event[f]);
                n->event[f] = 0;
                flow_finish(n, f, 0); /* moves another entry to i */
                continue;
            }
            i++;
        }
    }
}

/* One filling of every active flow (D grew past half of them). */
static uint32_t fill_all(flow_net *n)
{
    n->epoch += 2;
    uint32_t nf = 0, nl = 0;
    for (uint32_t f = 0; f < n->n_flows; f++)
        if (flow_is_active(n, f) && flow_n_use(n, f)) {
            n->flow_mark[f] = n->epoch;
            n->comp_flows[nf++] = f;
        }
    nl = flow_busy_links(n, n->comp_links);
    return flow_refill_component(n, nf, nl);
}

uint32_t flow_refill_component(flow_net *n, uint32_t nf, uint32_t nl)
{
    n->stats.flows_refilled += nf;
    n->stats.links_refilled += nl;
    flow_count_bnecks(n, nf, -1);
    flow_fill(n, nf, nl, 0);
    flow_count_bnecks(n, nf, +1);
    for (uint32_t i = 0; i < nf; i++)
        flow_set_rate(n, n->comp_flows[i], flow_new_rate(n, n->comp_flows[i]));
    return nl;
}

uint32_t flow_repair(flow_net *n, double now)
{
    uint32_t nt = collect_touched(n, now), nd = 0, nl = 0;
    uint64_t work = 0; /* flows filled over the rounds */
    n->stats.recomputes++;
    /* the new flows on links, before any filling writes bneck (their list) */
    for (uint32_t f = n->fresh_head; f != NO_FLOW;) {
        uint32_t next = n->bneck[f];
        n->bneck[f] = NO_LINK;
        join(n, f, &nd);
        f = next;
    }
    n->fresh_head = n->fresh_tail = NO_FLOW;
    for (;;) {
        work += nd;
        if (2 * work > n->n_active)
            return fill_all(n);
        n->epoch += 2;
        nl = 0;
        for (uint32_t i = 0; i < nd; i++) {
            uint32_t f = n->comp_flows[i];
            n->flow_mark[f] = n->epoch;
            const uint32_t *links = flow_links(n, f);
            for (uint32_t k = 0, m = flow_n_use(n, f); k < m; k++)
                if (n->slot[links[k]].mark != n->epoch) {
                    n->slot[links[k]].mark = n->epoch;
                    n->comp_links[nl++] = links[k];
                }
        }
        n->stats.flows_refilled += nd;
        n->stats.links_refilled += nl;
        if (nd) {
            flow_count_bnecks(n, nd, -1);
            flow_fill(n, nd, nl, 1);
            flow_count_bnecks(n, nd, +1);
        }
        uint32_t before = nd;
        for (uint32_t i = 0; i < nl; i++)
            check_link(n, n->comp_links[i], &nd);
        for (uint32_t i = 0; i < nt; i++)
            if (n->slot[n->touched[i]].mark != n->epoch)
                check_link(n, n->touched[i], &nd);
        if (nd == before)
            break;
    }
    for (uint32_t i = 0; i < nd; i++)
        flow_set_rate(n, n->comp_flows[i], flow_new_rate(n, n->comp_flows[i]));
    return nl;
}
