/* packet_queue.c - the packet tier's own future-event set: delay lanes plus
 * a heap, fed to the engine through one pending "pump" event.
 *
 * Why it is exact: the engine fires events by (time, priority, insertion
 * order). The tier numbers its events in the order it schedules them (seq),
 * which is their engine insertion order, and fires them by (time, priority,
 * seq): among themselves, the same order as the engine. An event scheduled
 * `delay` after now lands at now + delay, and now never decreases, so the
 * events of one (delay, priority) pair are scheduled in non-decreasing time
 * (IEEE addition is monotone) and seq order: a FIFO ring (a lane) keeps them
 * sorted with O(1) push and pop, with no sift. The packet tier's delays are
 * few: d for arrivals, credits, PAUSE and RESUME, MTU / rate for the
 * transmissions of full packets, hops x d for CNPs. Other delays (short last
 * packets once the lanes are taken, DCQCN pacing and timers) go to a binary
 * heap. The next event is the least of the lanes' heads and the heap's top.
 *
 * The pump: the engine holds one event for the tier, with the next tier
 * event's (time, priority, kind, payload), so the engine's digest and event
 * count are what scheduling every event on the engine gives when the tier is
 * the engine's only user. When it fires, the tier fires its head event and
 * re-arms the pump for the new head (the engine's replace-the-head fast
 * path). Before a completion callback runs, the pump is armed, so what the
 * callback schedules at the same time and priority fires after the tier's
 * events already due then, as on the engine. The one difference: a
 * non-tier event at exactly the time and priority of a tier event, scheduled
 * between that tier event's scheduling and the pump's arming, fires before
 * it instead of after. The tier's pending events live here, not in the
 * engine: sim_engine_reset does not drop them (no caller resets an engine
 * under a live net). pkt_net_use_engine_queue(n, 1) schedules every event
 * on the engine instead (the reference path test_packet_queue compares with).
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "packet_internal.h"

#if defined(__GNUC__)
#define RING_PREFETCH(p) __builtin_prefetch(p)
#else
#define RING_PREFETCH(p) ((void)(p))
#endif

static inline int ev_before(const pkt_ev *a, const pkt_ev *b)
{
    if (a->t != b->t)
        return a->t < b->t;
    if (a->prio != b->prio)
        return a->prio < b->prio;
    return a->seq < b->seq;
}

void pkt_queue_fini(pkt_net *n)
{
    for (uint32_t i = 0; i < n->n_lanes; i++)
        free(n->lanes[i].ring);
    free(n->heap);
}

void pkt_net_use_engine_queue(pkt_net *n, int on) { n->use_engine = on != 0; }

/* ---- heap (events of other delays) ---- */

static int heap_push(pkt_net *n, const pkt_ev *e)
{
    if (n->n_heap == n->heap_cap) {
        uint32_t cap = n->heap_cap ? n->heap_cap * 2 : 64;
        pkt_ev *h = realloc(n->heap, (size_t)cap * sizeof *h);
        if (!h)
            return -1;
        n->heap = h;
        n->heap_cap = cap;
    }
    uint32_t i = n->n_heap++;
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (!ev_before(e, &n->heap[parent]))
            break;
        n->heap[i] = n->heap[parent];
        i = parent;
    }
    n->heap[i] = *e;
    return 0;
}

static void heap_pop(pkt_net *n)
{
    pkt_ev last = n->heap[--n->n_heap];
    uint32_t i = 0, count = n->n_heap;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= count)
            break;
        if (c + 1 < count && ev_before(&n->heap[c + 1], &n->heap[c]))
            c++;
        if (!ev_before(&n->heap[c], &last))
            break;
        n->heap[i] = n->heap[c];
        i = c;
    }
    if (count)
        n->heap[i] = last;
}

/* ---- lanes ---- */

static int lane_push(pkt_lane *q, const pkt_ev *e)
{
    if (q->n == q->cap) {
        uint32_t cap = q->cap ? q->cap * 2 : 256;
        pkt_ev *r = malloc((size_t)cap * sizeof *r);
        if (!r)
            return -1;
        for (uint32_t i = 0; i < q->n; i++) /* unwrap, oldest first */
            r[i] = q->ring[(q->head + i) & (q->cap - 1)];
        free(q->ring);
        q->ring = r;
        q->cap = cap;
        q->head = 0;
    }
    q->ring[(q->head + q->n) & (q->cap - 1)] = *e;
    q->n++;
    return 0;
}

/* The lane of (delay, prio) whose last event is not after t; NULL: use the heap. */
static pkt_lane *lane_for(pkt_net *n, double delay_s, unsigned prio, double t)
{
    /* the lane this priority took last first (arrivals, finishes and
     * credits keep to one delay each), then the others */
    uint32_t hint = n->lane_hint[prio & 3];
    for (uint32_t j = 0; j <= n->n_lanes; j++) {
        uint32_t i = j ? j - 1 : hint;
        pkt_lane *q = &n->lanes[i];
        if (i < n->n_lanes && q->delay_s == delay_s && q->prio == prio) {
            n->lane_hint[prio & 3] = (uint8_t)i;
            if (q->n && q->ring[(q->head + q->n - 1) & (q->cap - 1)].t > t)
                return NULL; /* cannot happen (now is monotone); the heap is always right */
            return q;
        }
    }
    if (n->n_lanes == PKT_LANES_MAX)
        return NULL;
    pkt_lane *q = &n->lanes[n->n_lanes++];
    memset(q, 0, sizeof *q);
    q->delay_s = delay_s;
    q->prio = (uint8_t)prio;
    return q;
}

/* The next tier event (NULL when none) and where it is: lane index, or
 * PKT_LANES_MAX for the heap. */
static const pkt_ev *queue_head(const pkt_net *n, uint32_t *where)
{
    const pkt_ev *best = n->n_heap ? &n->heap[0] : NULL;
    *where = PKT_LANES_MAX;
    for (uint32_t i = 0; i < n->n_lanes; i++) {
        const pkt_lane *q = &n->lanes[i];
        if (q->n && (!best || ev_before(&q->ring[q->head], best))) {
            best = &q->ring[q->head];
            *where = i;
        }
    }
    return best;
}

/* ---- the pump ---- */

static void on_pump(sim_engine *eng, void *ctx, uint64_t data);

/* Arm the pump for the head event (no-op when armed or empty). */
void pkt_pump_arm(pkt_net *n)
{
    uint32_t where;
    const pkt_ev *e = queue_head(n, &where);
    if (n->pump_id || !e)
        return;
    n->pump_t = e->t;
    n->pump_prio = e->prio;
    n->pump_id = sim_schedule_at(n->eng, e->t, e->prio, e->kind, on_pump, n, e->data);
}

static void on_pump(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)data;
    pkt_net *n = ctx;
    uint32_t where;
    const pkt_ev *h = queue_head(n, &where);
    n->pump_id = 0;
    /* fire the head; then, while the next head is the engine's next event
     * anyway (sim_fire_inline: nothing else pending at or before it), fire
     * it here too, without the round trip through the engine's queue (its
     * now, digest and count advance as for a pump event); bounded: every
     * turn consumes one tier event */
    for (;;) {
        pkt_ev e = *h;
        if (where == PKT_LANES_MAX) {
            heap_pop(n);
        } else {
            pkt_lane *q = &n->lanes[where];
            q->head = (q->head + 1) & (q->cap - 1);
            q->n--;
            /* its lane's window moved: fetch what the handlers of its
             * events 16, 32 and 48 ahead will read, in stages (each
             * stage's address needs the previous stage's line), so the
             * cache misses overlap this handler's work (the other lanes'
             * windows have not moved: fetched before); and the ring's own
             * line 64 events ahead, which the first stage reads */
            if (q->n > PKT_PREFETCH_STAGES * PKT_PREFETCH_STEP + PKT_PREFETCH_STEP)
                RING_PREFETCH(&q->ring[(q->head + (PKT_PREFETCH_STAGES + 1) *
                                             PKT_PREFETCH_STEP) & (q->cap - 1)]);
            for (uint32_t s = 0; s < PKT_PREFETCH_STAGES; s++) {
                uint32_t ahead = (s + 1) * PKT_PREFETCH_STEP;
                if (q->n > ahead)
                    pkt_prefetch(n, &q->ring[(q->head + ahead) & (q->cap - 1)], s);
            }
        }
        if (e.t > n->series_edge) /* a time series' open bin ends before this event */
            pkt_series_advance(n->series, e.t);
        n->in_pump = 1;
        e.fn(eng, n, e.data);
        n->in_pump = 0;
        if (n->pump_id || !(h = queue_head(n, &where)) ||
            !sim_fire_inline(eng, h->t, h->prio, h->kind, h->data))
            break; /* armed by a completion callback, none left, or another event first */
    }
    pkt_pump_arm(n);
}

static void push(pkt_net *n, const pkt_ev *e, pkt_lane *q)
{
    if (q ? lane_push(q, e) : heap_push(n, e)) {
        /* out of memory: on the engine directly (still fires, order at
         * equal times may differ from the reference) */
        sim_schedule_at(n->eng, e->t, e->prio, e->kind, e->fn, n, e->data);
        return;
    }
    if (n->in_pump && !n->pump_id)
        return; /* the pump re-arms when the handler returns */
    if (n->pump_id) {
        if (e->t > n->pump_t || (e->t == n->pump_t && e->prio >= n->pump_prio))
            return; /* after the armed head */
        sim_cancel(n->eng, n->pump_id);
        n->pump_id = 0;
    }
    pkt_pump_arm(n);
}

void pkt_schedule_in(pkt_net *n, double delay_s, unsigned prio, unsigned kind,
                     sim_handler_fn fn, uint64_t data, int is_lane)
{
    if (n->use_engine) {
        sim_schedule_in(n->eng, delay_s, prio, kind, fn, n, data);
        return;
    }
    double t = sim_now(n->eng) + delay_s; /* what sim_schedule_in computes */
    pkt_ev e = {t, n->n_seq++, data, fn, (uint8_t)prio, (uint16_t)kind};
    push(n, &e, is_lane ? lane_for(n, delay_s, prio, t) : NULL);
}

void pkt_schedule_at(pkt_net *n, double t_s, unsigned prio, unsigned kind, sim_handler_fn fn,
                     uint64_t data)
{
    if (n->use_engine) {
        sim_schedule_at(n->eng, t_s, prio, kind, fn, n, data);
        return;
    }
    pkt_ev e = {t_s, n->n_seq++, data, fn, (uint8_t)prio, (uint16_t)kind};
    push(n, &e, NULL);
}
