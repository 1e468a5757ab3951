/* queue.c - 4-ary heap + record pool (see queue.h for the ordering contract).
 *
 * Invariant: for every heap index i > 0, entry(parent(i)) <= entry(i) in
 * (time, order) and heap_pos[heap[i].rec] == i. The heap array is
 * offset so that each group of four children is one 64-byte cache line.
 */
#include "queue.h"

#include <stdlib.h>
#include <string.h>

#define ARITY 4
/* heap[0] sits HEAP_PAD entries into a 64-byte line, so the four children
 * 4i+1..4i+4 of every entry fill exactly one cache line */
#define HEAP_PAD (ARITY - 1)
#define CACHE_LINE 64
#define NOT_PENDING UINT32_MAX
#define SEQ_BITS 56
#define MAX_RECS (UINT32_MAX - 1u)

_Static_assert(ARITY * sizeof(sim_heap_entry) == CACHE_LINE, "a child group must fill a line");

#if defined(__GNUC__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

static inline int entry_before(const sim_queue *q, const sim_heap_entry *a,
                               const sim_heap_entry *b)
{
    if (a->time_s != b->time_s)
        return a->time_s < b->time_s;
    return q->recs[a->rec].order < q->recs[b->rec].order;
}

static inline void place(sim_queue *q, size_t pos, sim_heap_entry e)
{
    q->heap[pos] = e;
    q->heap_pos[e.rec] = (uint32_t)pos;
}

static void sift_up(sim_queue *q, size_t pos, sim_heap_entry e)
{
    while (pos > 0) {
        size_t parent = (pos - 1) / ARITY;
        if (!entry_before(q, &e, &q->heap[parent]))
            break;
        place(q, pos, q->heap[parent]);
        pos = parent;
    }
    place(q, pos, e);
}

/* Index of the least of the children [first, last). The times decide
 * without branches (which child wins is a coin toss the branch predictor
 * loses); only when the least time is shared does the order field decide. */
static inline size_t least_child(const sim_queue *q, size_t first, size_t last)
{
    const sim_heap_entry *h = q->heap;
    size_t best = first;
    double best_t = h[first].time_s;
    int tie = 0;
    for (size_t c = first + 1; c < last; c++) {
        double t = h[c].time_s;
        tie |= t == best_t;
        best = t < best_t ? c : best;
        best_t = t < best_t ? t : best_t;
    }
    if (tie) {
        best = first;
        for (size_t c = first + 1; c < last; c++)
            if (entry_before(q, &h[c], &h[best]))
                best = c;
    }
    return best;
}

static void sift_down(sim_queue *q, size_t pos, sim_heap_entry e)
{
    size_t n = q->n_pending;
    const sim_heap_entry *h = q->heap;
    for (;;) {
        size_t first = pos * ARITY + 1;
        if (first >= n)
            break;
        /* Branch-free selection waits for its loads, so fetch the next
         * level early: the four grandchild groups, one cache line each. */
        size_t g = first * ARITY + 1;
        if (g + 3 * ARITY < n) {
            PREFETCH(&h[g]);
            PREFETCH(&h[g + ARITY]);
            PREFETCH(&h[g + 2 * ARITY]);
            PREFETCH(&h[g + 3 * ARITY]);
        }
        size_t best = least_child(q, first, first + ARITY < n ? first + ARITY : n);
        if (h[best].time_s > e.time_s ||
            (h[best].time_s == e.time_s && !entry_before(q, &h[best], &e)))
            break;
        if (pos == 0) /* the new head: the engine loop reads its record next */
            PREFETCH(&q->recs[h[best].rec]);
        place(q, pos, h[best]);
        pos = best;
    }
    place(q, pos, e);
}

void sim_queue_init(sim_queue *q)
{
    memset(q, 0, sizeof *q);
}

void sim_queue_fini(sim_queue *q)
{
    if (!q)
        return;
    free(q->heap ? q->heap - HEAP_PAD : NULL);
    free(q->recs);
    free(q->heap_pos);
    free(q->free_recs);
    memset(q, 0, sizeof *q);
}

void sim_queue_clear(sim_queue *q)
{
    for (size_t i = 0; i < q->n_pending; i++)
        q->recs[q->heap[i].rec].gen++;
    q->n_pending = 0;
    q->n_free = 0;
    /* the free stack as grow_pool leaves it: the lowest index on top */
    for (size_t i = q->recs_cap; i-- > 0;) {
        q->heap_pos[i] = NOT_PENDING;
        q->free_recs[q->n_free++] = (uint32_t)i;
    }
    q->next_seq = 0;
}

static int grow_pool(sim_queue *q)
{
    size_t cap = q->recs_cap ? q->recs_cap * 2 : 1024;
    if (cap > MAX_RECS)
        cap = MAX_RECS;
    if (cap <= q->recs_cap)
        return -1;
    sim_event_rec *recs = realloc(q->recs, cap * sizeof *recs);
    if (!recs)
        return -1;
    q->recs = recs;
    uint32_t *heap_pos = realloc(q->heap_pos, cap * sizeof *heap_pos);
    if (!heap_pos)
        return -1;
    q->heap_pos = heap_pos;
    uint32_t *free_recs = realloc(q->free_recs, cap * sizeof *free_recs);
    if (!free_recs)
        return -1;
    q->free_recs = free_recs;
    size_t heap_bytes = (cap + HEAP_PAD) * sizeof(sim_heap_entry);
    heap_bytes = (heap_bytes + CACHE_LINE - 1) / CACHE_LINE * CACHE_LINE;
    sim_heap_entry *heap = aligned_alloc(CACHE_LINE, heap_bytes);
    if (!heap)
        return -1;
    if (q->heap) {
        memcpy(heap + HEAP_PAD, q->heap, q->n_pending * sizeof *heap);
        free(q->heap - HEAP_PAD);
    }
    q->heap = heap + HEAP_PAD;
    q->heap_cap = cap;
    /* push new slots so the lowest index is handed out first */
    for (size_t i = cap; i-- > q->recs_cap;) {
        recs[i].gen = 0;
        heap_pos[i] = NOT_PENDING;
        q->free_recs[q->n_free++] = (uint32_t)i;
    }
    q->recs_cap = cap;
    q->pool_grows++;
    return 0;
}

static uint32_t alloc_rec(sim_queue *q, unsigned priority, unsigned kind, sim_handler_fn fn,
                          void *ctx, uint64_t data)
{
    uint32_t r = q->free_recs[--q->n_free];
    sim_event_rec *rec = &q->recs[r];
    rec->fn = fn;
    rec->ctx = ctx;
    rec->data = data;
    rec->kind = (uint16_t)kind;
    rec->order = ((uint64_t)priority << SEQ_BITS) | (q->next_seq++ & ((1ull << SEQ_BITS) - 1));
    return r;
}

static void free_rec(sim_queue *q, uint32_t r)
{
    q->recs[r].gen++;
    q->heap_pos[r] = NOT_PENDING;
    q->free_recs[q->n_free++] = r;
}

static inline sim_event_id make_id(const sim_queue *q, uint32_t r)
{
    return ((uint64_t)q->recs[r].gen << 32) | ((uint64_t)r + 1);
}

sim_event_id sim_queue_push(sim_queue *q, double time_s, unsigned priority, unsigned kind,
                            sim_handler_fn fn, void *ctx, uint64_t data)
{
    if (priority > SIM_PRIORITY_MAX || kind > SIM_KIND_MAX || time_s != time_s)
        return 0;
    if (q->n_free == 0 && grow_pool(q) != 0)
        return 0;
    uint32_t r = alloc_rec(q, priority, kind, fn, ctx, data);
    sim_heap_entry e = {time_s, r};
    sift_up(q, q->n_pending++, e);
    return make_id(q, r);
}

static void fill_fired(const sim_queue *q, const sim_heap_entry *e, sim_fired *out)
{
    const sim_event_rec *rec = &q->recs[e->rec];
    out->time_s = e->time_s;
    out->fn = rec->fn;
    out->ctx = rec->ctx;
    out->data = rec->data;
    out->priority = (unsigned)(rec->order >> SEQ_BITS);
    out->kind = rec->kind;
}

int sim_queue_peek(const sim_queue *q, sim_fired *out)
{
    if (q->n_pending == 0)
        return -1;
    fill_fired(q, &q->heap[0], out);
    return 0;
}

int sim_queue_pop(sim_queue *q, sim_fired *out)
{
    if (q->n_pending == 0)
        return -1;
    sim_heap_entry top = q->heap[0];
    if (out)
        fill_fired(q, &top, out);
    free_rec(q, top.rec);
    if (--q->n_pending > 0)
        sift_down(q, 0, q->heap[q->n_pending]);
    return 0;
}

sim_event_id sim_queue_replace_first(sim_queue *q, double time_s, unsigned priority,
                                     unsigned kind, sim_handler_fn fn, void *ctx,
                                     uint64_t data)
{
    if (priority > SIM_PRIORITY_MAX || kind > SIM_KIND_MAX || time_s != time_s ||
        q->n_pending == 0)
        return 0;
    free_rec(q, q->heap[0].rec);
    uint32_t r = alloc_rec(q, priority, kind, fn, ctx, data);
    sim_heap_entry e = {time_s, r};
    sift_down(q, 0, e);
    return make_id(q, r);
}

static int id_to_rec(const sim_queue *q, sim_event_id id, uint32_t *r)
{
    uint64_t low = id & 0xffffffffu;
    if (low == 0 || low > q->recs_cap)
        return -1;
    *r = (uint32_t)(low - 1);
    const sim_event_rec *rec = &q->recs[*r];
    if (rec->gen != (uint32_t)(id >> 32) || q->heap_pos[*r] == NOT_PENDING)
        return -1;
    return 0;
}

int sim_queue_is_pending(const sim_queue *q, sim_event_id id)
{
    uint32_t r;
    return id_to_rec(q, id, &r) == 0;
}

int sim_queue_cancel(sim_queue *q, sim_event_id id)
{
    uint32_t r;
    if (id_to_rec(q, id, &r) != 0)
        return 0;
    size_t pos = q->heap_pos[r];
    free_rec(q, r);
    size_t last = --q->n_pending;
    if (pos != last) {
        sim_heap_entry moved = q->heap[last];
        if (pos > 0 && entry_before(q, &moved, &q->heap[(pos - 1) / ARITY]))
            sift_up(q, pos, moved);
        else
            sift_down(q, pos, moved);
    }
    return 1;
}
