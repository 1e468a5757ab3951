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
 * heap. The next event is the least of the lanes' heads and the heap's top,
 * whose (time, key) pairs sit side by side in n->heads (the key: priority
 * above the scheduling number, so one comparison of (time, key) is the
 * engine's order): finding it reads no ring.
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
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "packet_internal.h"

#if defined(__GNUC__)
#define RING_PREFETCH(p) __builtin_prefetch(p)
#else
#define RING_PREFETCH(p) ((void)(p))
#endif

/* The two schedule calls of every hop, inlined into their callers (in
 * packet.c, by the link-time optimiser): a call's entry and exit were 14
 * of a schedule's 83 instructions (callgrind, bench_packet IB k = 16). */
#if defined(__GNUC__)
#define HOT_INLINE __attribute__((always_inline)) inline
#else
#define HOT_INLINE
#endif

#define EMPTY_KEY UINT64_MAX /* a head with no event: (INFINITY, EMPTY_KEY) */

static inline uint64_t ev_key(unsigned prio, uint64_t seq)
{
    return (uint64_t)prio << PKT_KEY_SEQ_BITS | seq;
}

static inline unsigned key_prio(uint64_t key) { return (unsigned)(key >> PKT_KEY_SEQ_BITS); }

/* (t, key) orders events by time, priority and scheduling order; keys are
 * unique, so no two events tie */
static inline int ev_before(const pkt_ev *a, const pkt_ev *b)
{
    return a->t < b->t || (a->t == b->t && a->key < b->key);
}

static inline void head_set(pkt_head *h, const pkt_ev *e)
{
    h->t = e->t;
    h->key = e->key;
}

static inline void head_clear(pkt_head *h)
{
    h->t = INFINITY;
    h->key = EMPTY_KEY;
}

void pkt_queue_init(pkt_net *n)
{
    for (uint32_t i = 0; i <= PKT_LANES_MAX; i++)
        head_clear(&n->heads[i]);
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
    head_set(&n->heads[PKT_LANES_MAX], &n->heap[0]);
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
    if (count) {
        n->heap[i] = last;
        head_set(&n->heads[PKT_LANES_MAX], &n->heap[0]);
    } else {
        head_clear(&n->heads[PKT_LANES_MAX]);
    }
}

/* ---- lanes ---- */

static int lane_grow(pkt_lane *q)
{
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
    return 0;
}

/* An event onto lane i (its time not before the lane's last): 0, or -1
 * out of memory. Field by field from registers: a copy of a struct the
 * caller has just stored would load it back in wider words than it was
 * stored in, which stalls the load (no store-to-load forwarding). */
static inline int lane_push(pkt_net *n, uint32_t i, double t, uint64_t key, uint64_t data,
                            sim_handler_fn fn, unsigned kind, uint32_t hint)
{
    pkt_lane *q = &n->lanes[i];
    if (q->n == q->cap && lane_grow(q))
        return -1;
    pkt_ev *r = &q->ring[(q->head + q->n) & (q->cap - 1)];
    r->t = t;
    r->key = key;
    r->data = data;
    r->fn = fn;
    r->kind = (uint16_t)kind;
    r->hint = hint;
    q->last_t = t;
    if (q->n++ == 0) {
        n->heads[i].t = t;
        n->heads[i].key = key;
    }
    return 0;
}

/* The lane of (delay, prio) whose last event is not after t: its index, or
 * PKT_LANES_MAX for the heap. The lane this priority took last is tried
 * first (arrivals, finishes and credits keep to one delay each). */
static uint32_t lane_find(pkt_net *n, double delay_s, unsigned prio, double t)
{
    for (uint32_t i = 0; i < n->n_lanes; i++) {
        pkt_lane *q = &n->lanes[i];
        if (q->delay_s == delay_s && q->prio == prio) {
            n->lane_hint[prio & 3] = (uint8_t)i;
            if (q->n && q->last_t > t)
                return PKT_LANES_MAX; /* cannot happen (now is monotone); the heap is always right */
            return i;
        }
    }
    if (n->n_lanes == PKT_LANES_MAX)
        return PKT_LANES_MAX;
    uint32_t i = n->n_lanes++;
    pkt_lane *q = &n->lanes[i];
    memset(q, 0, sizeof *q);
    q->delay_s = delay_s;
    q->prio = (uint8_t)prio;
    head_clear(&n->heads[i]);
    n->lane_hint[prio & 3] = (uint8_t)i;
    return i;
}

static inline uint32_t lane_for(pkt_net *n, double delay_s, unsigned prio, double t)
{
    uint32_t i = n->lane_hint[prio & 3];
    const pkt_lane *q = &n->lanes[i];
    if (i < n->n_lanes && q->delay_s == delay_s && q->prio == prio && !(q->n && q->last_t > t))
        return i;
    return lane_find(n, delay_s, prio, t);
}

/* Where the next tier event is: a lane's index, or PKT_LANES_MAX for the
 * heap (its head's key is EMPTY_KEY when there is no event at all). */
static inline uint32_t queue_next(const pkt_net *n)
{
    uint32_t where = PKT_LANES_MAX;
    double bt = n->heads[PKT_LANES_MAX].t;
    uint64_t bk = n->heads[PKT_LANES_MAX].key;
    for (uint32_t i = 0; i < n->n_lanes; i++) {
        double t = n->heads[i].t;
        uint64_t k = n->heads[i].key;
        if (t < bt || (t == bt && k < bk)) {
            bt = t;
            bk = k;
            where = i;
        }
    }
    return where;
}

/* The event at `where` (queue_next); NULL when the queue is empty. */
static inline const pkt_ev *queue_at(const pkt_net *n, uint32_t where)
{
    if (where == PKT_LANES_MAX)
        return n->n_heap ? &n->heap[0] : NULL;
    const pkt_lane *q = &n->lanes[where];
    return &q->ring[q->head];
}

/* ---- the pump ---- */

static void on_pump(sim_engine *eng, void *ctx, uint64_t data);

/* Arm the pump for the head event (no-op when armed or empty). */
void pkt_pump_arm(pkt_net *n)
{
    const pkt_ev *e = queue_at(n, queue_next(n));
    if (n->pump_id || !e)
        return;
    n->pump_t = e->t;
    n->pump_prio = (uint8_t)key_prio(e->key);
    n->pump_id = sim_schedule_at(n->eng, e->t, key_prio(e->key), e->kind, on_pump, n, e->data);
}

static void on_pump(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)data;
    pkt_net *n = ctx;
    uint32_t where = queue_next(n);
    const pkt_ev *h = queue_at(n, where);
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
            uint32_t mask = q->cap - 1;
            q->head = (q->head + 1) & mask;
            if (--q->n)
                head_set(&n->heads[where], &q->ring[q->head]);
            else
                head_clear(&n->heads[where]);
            /* its lane's window moved: fetch what the handlers of its
             * events PKT_PREFETCH_STEP x 1, 2, 3 ahead will read, in
             * stages (each stage's address needs the previous stage's
             * line), so the cache misses overlap this handler's work (the
             * other lanes' windows have not moved: fetched before); and
             * the ring's own line a step further, which the first stage
             * reads */
            if (q->n > PKT_PREFETCH_STAGES * PKT_PREFETCH_STEP + PKT_PREFETCH_STEP)
                RING_PREFETCH(&q->ring[(q->head + (PKT_PREFETCH_STAGES + 1) *
                                             PKT_PREFETCH_STEP) & mask]);
            pkt_prefetch_lane(n, q->ring, q->head, mask, q->n, q->prio);
        }
        if (e.t > n->series_edge) /* a time series' open bin ends before this event */
            pkt_series_advance(n->series, e.t);
        n->in_pump = 1;
        e.fn(eng, n, e.data);
        n->in_pump = 0;
        if (n->pump_id)
            break; /* armed by a completion callback */
        where = queue_next(n);
        if (!(h = queue_at(n, where)) ||
            !sim_fire_inline(eng, h->t, key_prio(h->key), h->kind, h->data))
            break; /* none left, or another event first */
    }
    pkt_pump_arm(n);
}

/* e is in the queue: the pump stays armed for the head */
static inline void pump_after_push(pkt_net *n, const pkt_ev *e)
{
    if (n->in_pump && !n->pump_id)
        return; /* the pump re-arms when the handler returns */
    if (n->pump_id) {
        unsigned prio = key_prio(e->key);
        if (e->t > n->pump_t || (e->t == n->pump_t && prio >= n->pump_prio))
            return; /* after the armed head */
        sim_cancel(n->eng, n->pump_id);
        n->pump_id = 0;
    }
    pkt_pump_arm(n);
}

/* An event into the queue (lane, or PKT_LANES_MAX: the heap); the pump
 * stays armed for the head */
static inline void push(pkt_net *n, uint32_t lane, double t, unsigned prio, unsigned kind,
                        sim_handler_fn fn, uint64_t data, uint32_t hint)
{
    uint64_t key = ev_key(prio, n->n_seq++);
    int bad;
    if (lane < PKT_LANES_MAX) {
        bad = lane_push(n, lane, t, key, data, fn, kind, hint);
    } else {
        pkt_ev e = {t, key, data, fn, (uint16_t)kind, hint};
        bad = heap_push(n, &e);
    }
    if (bad) {
        /* out of memory: on the engine directly (still fires, order at
         * equal times may differ from the reference) */
        sim_schedule_at(n->eng, t, prio, kind, fn, n, data);
        return;
    }
    if (n->in_pump && !n->pump_id)
        return; /* the pump re-arms when the handler returns */
    if (n->pump_id) {
        if (t > n->pump_t || (t == n->pump_t && prio >= n->pump_prio))
            return; /* after the armed head */
        sim_cancel(n->eng, n->pump_id);
        n->pump_id = 0;
    }
    pkt_pump_arm(n);
}

HOT_INLINE void pkt_schedule_in(pkt_net *n, double delay_s, unsigned prio, unsigned kind,
                                sim_handler_fn fn, uint64_t data, int is_lane)
{
    if (n->use_engine) {
        sim_schedule_in(n->eng, delay_s, prio, kind, fn, n, data);
        return;
    }
    double t = sim_now(n->eng) + delay_s; /* what sim_schedule_in computes */
    push(n, is_lane ? lane_for(n, delay_s, prio, t) : PKT_LANES_MAX, t, prio, kind, fn, data, 0);
}

HOT_INLINE void pkt_schedule_lane(pkt_net *n, double delay_s, unsigned prio, unsigned kind,
                                  sim_handler_fn fn, uint64_t data, uint32_t hint)
{
    if (n->use_engine) {
        sim_schedule_in(n->eng, delay_s, prio, kind, fn, n, data);
        return;
    }
    double t = sim_now(n->eng) + delay_s;
    push(n, lane_for(n, delay_s, prio, t), t, prio, kind, fn, data, hint);
}

void pkt_schedule_at(pkt_net *n, double t_s, unsigned prio, unsigned kind, sim_handler_fn fn,
                     uint64_t data)
{
    if (n->use_engine) {
        sim_schedule_at(n->eng, t_s, prio, kind, fn, n, data);
        return;
    }
    push(n, PKT_LANES_MAX, t_s, prio, kind, fn, data, 0);
}
