/* queue.c - 4-ary heap of 16-byte entries, slots and interned event types
 * (see queue.h for the ordering contract).
 *
 * Invariants: for every heap index i > 0, entry(parent(i)) <= entry(i) in
 * (time, priority, seq), where the priority comes from the entry's slot's
 * type; a slot is in use exactly while one heap entry names it, and its type
 * does not change meanwhile (so a cancelled entry keeps its place in the
 * order); heap[0], if any, is live; seqs are unique. The heap array is offset
 * so that each group of four children is one 64-byte cache line.
 */
#include "queue.h"
#include "rng.h"

#include <stdlib.h>
#include <string.h>

#define ARITY 4
/* heap[0] sits HEAP_PAD entries into a 64-byte line, so the four children
 * 4i+1..4i+4 of every entry fill exactly one cache line */
#define HEAP_PAD (ARITY - 1)
#define CACHE_LINE 64
#define NO_SLOT UINT32_MAX
#define NO_TYPE UINT32_MAX
#define TYPE_RECYCLED UINT32_MAX
#define MAX_SLOTS (1u << 31)
#define FIRST_CAP 1024u
/* slot states, the low 2 bits of the generation; one use advances it by 4 */
#define ST_FREE 0u
#define ST_LIVE 1u
#define ST_CANCELLED 2u
#define STATE(g) ((g) & 3u)

_Static_assert(sizeof(sim_heap_entry) == 16, "a heap entry is 16 bytes");
_Static_assert(ARITY * sizeof(sim_heap_entry) == CACHE_LINE, "a child group must fill a line");

#if defined(__GNUC__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

static inline unsigned slot_priority(const sim_queue *q, uint32_t slot)
{
    return q->types[sim_slot_type(&q->slots[slot])].priority;
}

/* (priority, seq) order of two entries with equal times */
static inline int tie_before(const sim_queue *q, const sim_heap_entry *a,
                             const sim_heap_entry *b)
{
    unsigned pa = slot_priority(q, a->slot), pb = slot_priority(q, b->slot);
    if (pa != pb)
        return pa < pb;
    return a->seq < b->seq;
}

static inline int entry_before(const sim_queue *q, const sim_heap_entry *a,
                               const sim_heap_entry *b)
{
    if (a->time_s != b->time_s)
        return a->time_s < b->time_s;
    return tie_before(q, a, b);
}

static void sift_up(sim_queue *q, size_t pos, sim_heap_entry e)
{
    sim_heap_entry *h = q->heap;
    while (pos > 0) {
        size_t parent = (pos - 1) / ARITY;
        if (!entry_before(q, &e, &h[parent]))
            break;
        h[pos] = h[parent];
        pos = parent;
    }
    h[pos] = e;
}

/* Index of the least of the children [first, last). The times decide
 * without branches (which child wins is a coin toss the branch predictor
 * loses); only when the least time is shared do the slots' priorities and
 * the seqs decide. */
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
    size_t n = q->n_heap;
    sim_heap_entry *h = q->heap;
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
            (h[best].time_s == e.time_s && !tie_before(q, &h[best], &e)))
            break;
        h[pos] = h[best];
        pos = best;
    }
    h[pos] = e;
}

void sim_queue_init(sim_queue *q)
{
    memset(q, 0, sizeof *q);
    q->free_slot = NO_SLOT;
    q->last_type = NO_TYPE;
    q->types_max = SIM_TYPES_MAX;
    q->seq_limit = UINT32_MAX;
}

void sim_queue_fini(sim_queue *q)
{
    if (!q)
        return;
    free(q->heap ? q->heap - HEAP_PAD : NULL);
    free(q->slots);
    free(q->types);
    free(q->type_index);
    free(q->free_types);
    memset(q, 0, sizeof *q);
}

static size_t heap_alloc_bytes(size_t cap)
{
    size_t bytes = (cap + HEAP_PAD) * sizeof(sim_heap_entry);
    return (bytes + CACHE_LINE - 1) / CACHE_LINE * CACHE_LINE;
}

size_t sim_queue_bytes(const sim_queue *q)
{
    size_t bytes = 0;
    if (q->heap)
        bytes += heap_alloc_bytes(q->cap) + q->cap * sizeof *q->slots;
    bytes += q->types_cap * sizeof *q->types + q->index_cap * sizeof *q->type_index;
    if (q->free_types)
        bytes += q->types_max * sizeof *q->free_types;
    return bytes;
}

/* Double the heap and the slot arrays; the new slots join the free list,
 * lowest index first. Called only when no slot is free. */
static int grow(sim_queue *q)
{
    size_t cap = q->cap ? q->cap * 2 : FIRST_CAP;
    if (cap > MAX_SLOTS)
        cap = MAX_SLOTS;
    if (cap <= q->cap)
        return -1;
    sim_slot *slots = realloc(q->slots, cap * sizeof *slots);
    if (!slots)
        return -1;
    q->slots = slots;
    sim_heap_entry *heap = aligned_alloc(CACHE_LINE, heap_alloc_bytes(cap));
    if (!heap)
        return -1;
    if (q->heap) {
        memcpy(heap + HEAP_PAD, q->heap, q->n_heap * sizeof *heap);
        free(q->heap - HEAP_PAD);
    }
    q->heap = heap + HEAP_PAD;
    for (size_t i = q->cap; i < cap; i++) {
        sim_slot_set_gen(&slots[i], 0);
        sim_slot_set_type(&slots[i], 0);
        sim_slot_set_data(&slots[i], i + 1 < cap ? i + 1 : q->free_slot);
    }
    q->free_slot = (uint32_t)q->cap;
    q->cap = cap;
    q->pool_grows++;
    return 0;
}

/* ---- event types ---- */

static uint64_t type_hash(sim_handler_fn fn, void *ctx, unsigned kind, unsigned priority)
{
    uint64_t f = 0, c = (uint64_t)(uintptr_t)ctx;
    memcpy(&f, &fn, sizeof fn < sizeof f ? sizeof fn : sizeof f);
    return sim_mix64_final(f * 0x9e3779b97f4a7c15ull ^ c ^
                           ((uint64_t)kind << 8 | priority) << 40);
}

static inline int type_is(const sim_event_type *t, sim_handler_fn fn, void *ctx, unsigned kind,
                          unsigned priority)
{
    return t->fn == fn && t->ctx == ctx && t->kind == kind && t->priority == priority &&
           t->n_refs != TYPE_RECYCLED;
}

static void index_insert(sim_queue *q, uint32_t t)
{
    const sim_event_type *y = &q->types[t];
    size_t mask = q->index_cap - 1;
    size_t i = type_hash(y->fn, y->ctx, y->kind, y->priority) & mask;
    while (q->type_index[i])
        i = (i + 1) & mask;
    q->type_index[i] = (uint16_t)(t + 1);
}

/* Rebuild the index with room for `want` types (load at most one half). */
static int index_rebuild(sim_queue *q, size_t want)
{
    size_t cap = q->index_cap ? q->index_cap : 64;
    while (cap < 2 * want)
        cap *= 2;
    if (cap != q->index_cap) {
        uint16_t *index = realloc(q->type_index, cap * sizeof *index);
        if (!index)
            return -1;
        q->type_index = index;
        q->index_cap = cap;
    }
    memset(q->type_index, 0, q->index_cap * sizeof *q->type_index);
    for (uint32_t t = 0; t < q->n_types; t++)
        if (q->types[t].n_refs != TYPE_RECYCLED)
            index_insert(q, t);
    return 0;
}

/* All types_max types exist: recycle those no slot uses. */
static int sweep_types(sim_queue *q)
{
    if (!q->free_types) {
        q->free_types = malloc(q->types_max * sizeof *q->free_types);
        if (!q->free_types)
            return -1;
    }
    for (uint32_t t = (uint32_t)q->n_types; t-- > 0;)
        if (q->types[t].n_refs == 0) {
            q->types[t].n_refs = TYPE_RECYCLED;
            q->free_types[q->n_free_types++] = (uint16_t)t;
        }
    if (q->last_type != NO_TYPE && q->types[q->last_type].n_refs == TYPE_RECYCLED)
        q->last_type = NO_TYPE;
    return index_rebuild(q, q->n_types);
}

static int64_t new_type(sim_queue *q, sim_handler_fn fn, void *ctx, unsigned kind,
                        unsigned priority)
{
    if (q->n_free_types == 0 && q->n_types >= q->types_max && sweep_types(q) != 0)
        return -1;
    uint32_t t;
    if (q->n_free_types > 0) {
        t = q->free_types[--q->n_free_types];
    } else {
        if (q->n_types >= q->types_max)
            return -1; /* every type has an event in the queue */
        if (q->n_types == q->types_cap) {
            size_t cap = q->types_cap ? q->types_cap * 2 : 16;
            sim_event_type *types = realloc(q->types, cap * sizeof *types);
            if (!types)
                return -1;
            q->types = types;
            q->types_cap = cap;
        }
        if (2 * (q->n_types + 1) > q->index_cap && index_rebuild(q, q->n_types + 1) != 0)
            return -1;
        t = (uint32_t)q->n_types++;
    }
    q->types[t] = (sim_event_type){fn, ctx, 0, (uint16_t)kind, (uint8_t)priority};
    index_insert(q, t);
    return t;
}

/* The type index of (fn, ctx, kind, priority), created if new; -1 when out
 * of memory or types. */
static inline int64_t intern(sim_queue *q, sim_handler_fn fn, void *ctx, unsigned kind,
                             unsigned priority)
{
    if (q->last_type != NO_TYPE && type_is(&q->types[q->last_type], fn, ctx, kind, priority))
        return q->last_type;
    int64_t t = -1;
    if (q->index_cap) {
        size_t mask = q->index_cap - 1;
        for (size_t i = type_hash(fn, ctx, kind, priority) & mask; q->type_index[i];
             i = (i + 1) & mask) {
            uint32_t c = q->type_index[i] - 1u;
            if (type_is(&q->types[c], fn, ctx, kind, priority)) {
                t = c;
                break;
            }
        }
    }
    if (t < 0)
        t = new_type(q, fn, ctx, kind, priority);
    if (t >= 0)
        q->last_type = (uint32_t)t;
    return t;
}

/* ---- slots ---- */

static inline uint32_t take_slot(sim_queue *q, uint32_t t, uint64_t data)
{
    uint32_t s = q->free_slot;
    sim_slot *p = &q->slots[s];
    q->free_slot = (uint32_t)sim_slot_data(p);
    sim_slot_set_data(p, data);
    sim_slot_set_type(p, (uint16_t)t);
    sim_slot_set_gen(p, sim_slot_gen(p) + 1); /* free -> live */
    q->types[t].n_refs++;
    return s;
}

/* A slot whose entry left the heap: free it. */
static inline void release_slot(sim_queue *q, uint32_t s)
{
    sim_slot *p = &q->slots[s];
    uint32_t g = sim_slot_gen(p);
    q->types[sim_slot_type(p)].n_refs--;
    sim_slot_set_gen(p, g + (STATE(g) == ST_LIVE ? 3 : 2)); /* live or cancelled -> free */
    sim_slot_set_data(p, q->free_slot);
    q->free_slot = s;
}

/* Remove heap[0], whose slot was released. */
void sim_queue_clear(sim_queue *q)
{
    /* every slot an entry (live or cancelled) names goes back to free, its
     * id stale (the generation moves on) */
    for (; q->n_heap > 0; q->n_heap--)
        release_slot(q, q->heap[q->n_heap - 1].slot);
    q->n_pending = 0;
    /* the free list as grow leaves a fresh queue's: lowest index first */
    for (size_t i = 0; i < q->cap; i++)
        sim_slot_set_data(&q->slots[i], i + 1 < q->cap ? i + 1 : NO_SLOT);
    q->free_slot = q->cap ? 0 : NO_SLOT;
    q->next_seq = 0;
}

static inline void remove_root(sim_queue *q)
{
    if (--q->n_heap > 0)
        sift_down(q, 0, q->heap[q->n_heap]);
}

/* Restore "heap[0] is live": drop cancelled entries from the top. */
static inline void drop_cancelled_heads(sim_queue *q)
{
    while (q->n_heap > 0 && STATE(sim_slot_gen(&q->slots[q->heap[0].slot])) == ST_CANCELLED) {
        release_slot(q, q->heap[0].slot);
        remove_root(q);
    }
}

/* Drop every cancelled entry and rebuild the heap (Floyd). The order of the
 * remaining events is their (time, priority, seq) order, so which entries
 * the heap held does not change what fires when. */
static void purge(sim_queue *q)
{
    size_t kept = 0;
    for (size_t i = 0; i < q->n_heap; i++) {
        sim_heap_entry e = q->heap[i];
        if (STATE(sim_slot_gen(&q->slots[e.slot])) == ST_CANCELLED)
            release_slot(q, e.slot);
        else
            q->heap[kept++] = e;
    }
    q->n_heap = kept;
    for (size_t i = kept > 1 ? (kept - 2) / ARITY + 1 : 0; i-- > 0;)
        sift_down(q, i, q->heap[i]);
    q->purges++;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* next_seq reached seq_limit: give the entries the seqs 0..n-1 in their
 * present order, which keeps the heap valid and every tie's outcome. Once
 * per ~4e9 pushes; O(n log n). */
static int renumber(sim_queue *q)
{
    if (q->n_heap >= q->seq_limit)
        return -1;
    uint64_t *keys = malloc((q->n_heap ? q->n_heap : 1) * sizeof *keys);
    if (!keys)
        return -1;
    for (size_t i = 0; i < q->n_heap; i++)
        keys[i] = (uint64_t)q->heap[i].seq << 32 | i;
    qsort(keys, q->n_heap, sizeof *keys, cmp_u64);
    for (size_t r = 0; r < q->n_heap; r++)
        q->heap[keys[r] & 0xffffffffu].seq = (uint32_t)r;
    free(keys);
    q->next_seq = (uint32_t)q->n_heap;
    q->renumbers++;
    return 0;
}

/* Room for one more entry: recycle cancelled entries when they fill an
 * eighth of the heap, else grow. */
static int make_room(sim_queue *q)
{
    size_t n_cancelled = q->n_heap - q->n_pending;
    if (q->free_slot == NO_SLOT) {
        if (n_cancelled > 0 && n_cancelled >= q->cap / 8)
            purge(q);
        else if (grow(q) != 0)
            return -1;
    }
    if (q->next_seq >= q->seq_limit && renumber(q) != 0)
        return -1;
    return 0;
}

static inline int bad_input(double time_s, unsigned priority, unsigned kind)
{
    return priority > SIM_PRIORITY_MAX || kind > SIM_KIND_MAX || time_s != time_s;
}

sim_event_id sim_queue_push(sim_queue *q, double time_s, unsigned priority, unsigned kind,
                            sim_handler_fn fn, void *ctx, uint64_t data)
{
    if (bad_input(time_s, priority, kind))
        return 0;
    if ((q->free_slot == NO_SLOT || q->next_seq >= q->seq_limit) && make_room(q) != 0)
        return 0;
    int64_t t = intern(q, fn, ctx, kind, priority);
    if (t < 0)
        return 0;
    uint32_t s = take_slot(q, (uint32_t)t, data);
    sim_heap_entry e = {time_s, q->next_seq++, s};
    q->n_pending++;
    sift_up(q, q->n_heap++, e); /* a live entry: heap[0] stays live */
    return sim_queue_slot_id(q, s);
}

static void fill_fired(const sim_queue *q, const sim_heap_entry *e, sim_fired *out)
{
    const sim_slot *s = &q->slots[e->slot];
    const sim_event_type *t = &q->types[sim_slot_type(s)];
    out->time_s = e->time_s;
    out->fn = t->fn;
    out->ctx = t->ctx;
    out->data = sim_slot_data(s);
    out->priority = t->priority;
    out->kind = t->kind;
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
    uint32_t s = q->heap[0].slot;
    if (out)
        fill_fired(q, &q->heap[0], out);
    release_slot(q, s);
    q->n_pending--;
    remove_root(q);
    if (q->n_heap != q->n_pending)
        drop_cancelled_heads(q);
    return 0;
}

sim_event_id sim_queue_replace_first(sim_queue *q, double time_s, unsigned priority,
                                     unsigned kind, sim_handler_fn fn, void *ctx,
                                     uint64_t data)
{
    if (bad_input(time_s, priority, kind) || q->n_pending == 0)
        return 0;
    if (q->next_seq >= q->seq_limit && renumber(q) != 0)
        return 0;
    /* the new event takes the head's slot: what releasing it and taking the
     * first free slot would do, without the free list's round trip */
    uint32_t s = q->heap[0].slot;
    sim_slot *p = &q->slots[s];
    uint32_t old = sim_slot_type(p);
    if (!type_is(&q->types[old], fn, ctx, kind, priority)) {
        int64_t t = intern(q, fn, ctx, kind, priority);
        if (t < 0)
            return 0;
        q->types[old].n_refs--;
        q->types[t].n_refs++;
        sim_slot_set_type(p, (uint16_t)t);
    }
    sim_slot_set_data(p, data);
    sim_slot_set_gen(p, sim_slot_gen(p) + 4); /* live -> free -> live */
    sim_heap_entry e = {time_s, q->next_seq++, s};
    sift_down(q, 0, e);
    if (q->n_heap != q->n_pending)
        drop_cancelled_heads(q);
    return sim_queue_slot_id(q, s);
}

/* The slot of a live event's id, or NO_SLOT. Ids carry the live generation,
 * so a matching generation means the slot is live. */
static inline uint32_t id_slot(const sim_queue *q, sim_event_id id)
{
    uint64_t low = id & 0xffffffffu;
    if (low == 0 || low > q->cap)
        return NO_SLOT;
    uint32_t s = (uint32_t)(low - 1), g = sim_slot_gen(&q->slots[s]);
    return g == (uint32_t)(id >> 32) && STATE(g) == ST_LIVE ? s : NO_SLOT;
}

int sim_queue_is_pending(const sim_queue *q, sim_event_id id)
{
    return id_slot(q, id) != NO_SLOT;
}

int sim_queue_cancel(sim_queue *q, sim_event_id id)
{
    uint32_t s = id_slot(q, id);
    if (s == NO_SLOT)
        return 0;
    sim_slot *p = &q->slots[s];
    sim_slot_set_gen(p, sim_slot_gen(p) + 1); /* live -> cancelled: the entry stays until it surfaces */
    q->n_pending--;
    if (q->heap[0].slot == s)
        drop_cancelled_heads(q);
    return 1;
}
