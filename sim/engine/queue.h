/* queue.h - the future-event set: a 4-ary array heap of 16-byte entries.
 *
 * Order is (time, priority, sequence): earlier time first; at equal times the
 * lower priority value first; at equal time and priority, insertion order
 * (sequence is assigned on insert). A pending event costs 30 bytes: a heap
 * entry (time, 32-bit sequence, 32-bit slot) and a slot (payload, generation,
 * 16-bit type). The handler, context, kind and priority of an event are
 * interned once per distinct combination in a small type table, so sifting
 * touches only the heap; the priority is read through the slot's type only
 * when two times are equal. Push, pop and replace are O(log n); cancel marks
 * the slot and is O(1): the entry leaves the heap when it reaches the top, or
 * in a purge (filter and rebuild) when the pool is full and an eighth or more
 * of it is cancelled entries, instead of growing. No malloc per event.
 */
#ifndef DCSIM_SIM_QUEUE_H
#define DCSIM_SIM_QUEUE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct sim_engine;

/* An event handler: a plain function with a context pointer and one word of
 * payload (an entity id, an index, ...). */
typedef void (*sim_handler_fn)(struct sim_engine *eng, void *ctx, uint64_t data);

/* Identifies a pending event for cancellation. 0 is never a valid id. An id
 * stays unique after its event fires or is cancelled (the slot's generation
 * is part of it and advances by 4 per use), so cancelling a stale id is a safe
 * no-op -- unless the caller keeps a stale id while its slot is reused 2^30
 * times, which the engine's users never do (they cancel only ids of events
 * they know to be pending or just replaced). */
typedef uint64_t sim_event_id;

#define SIM_PRIORITY_MAX 255u
#define SIM_KIND_MAX 65535u
/* Distinct (handler, context, kind, priority) combinations with an event in
 * the queue at once (a cancelled one counts until its entry leaves); types no
 * event uses any more are recycled. */
#define SIM_TYPES_MAX 65535u

typedef struct sim_heap_entry {
    double time_s;
    uint32_t seq;  /* insertion order; renumbered, order kept, before it wraps */
    uint32_t slot; /* index into the queue's slots */
} sim_heap_entry;

/* A slot, packed into 14 bytes (one cache line for most slots; read and
 * written through the accessors below):
 *   bytes 0..7    payload; in a free slot, the next free slot
 *   bytes 8..11   generation; its low 2 bits: 0 free, 1 live, 2 cancelled
 *   bytes 12..13  index into the queue's event types */
typedef struct sim_slot {
    unsigned char bytes[14];
} sim_slot;

static inline uint64_t sim_slot_data(const sim_slot *s)
{
    uint64_t v;
    memcpy(&v, s->bytes, sizeof v);
    return v;
}
static inline uint32_t sim_slot_gen(const sim_slot *s)
{
    uint32_t v;
    memcpy(&v, s->bytes + 8, sizeof v);
    return v;
}
static inline uint16_t sim_slot_type(const sim_slot *s)
{
    uint16_t v;
    memcpy(&v, s->bytes + 12, sizeof v);
    return v;
}
static inline void sim_slot_set_data(sim_slot *s, uint64_t v) { memcpy(s->bytes, &v, sizeof v); }
static inline void sim_slot_set_gen(sim_slot *s, uint32_t v) { memcpy(s->bytes + 8, &v, sizeof v); }
static inline void sim_slot_set_type(sim_slot *s, uint16_t v)
{
    memcpy(s->bytes + 12, &v, sizeof v);
}

typedef struct sim_event_type {
    sim_handler_fn fn;
    void *ctx;
    uint32_t n_refs; /* slots of this type; UINT32_MAX: recycled entry */
    uint16_t kind;
    uint8_t priority;
} sim_event_type;

typedef struct sim_queue {
    sim_heap_entry *heap; /* n_heap entries, live and cancelled; heap[0] is live */
    size_t n_heap;
    size_t n_pending;     /* live entries */
    size_t cap;           /* heap entries and slots allocated */
    sim_slot *slots;      /* in use exactly while an entry in the heap names it */
    uint32_t free_slot;   /* first free slot, or UINT32_MAX */
    /* event types, interned by an open-addressing index (0 empty, else i + 1) */
    sim_event_type *types;
    uint16_t *type_index;
    uint16_t *free_types; /* recycled type indices (allocated at the first sweep) */
    size_t n_types, types_cap, index_cap, n_free_types;
    size_t types_max;     /* SIM_TYPES_MAX; tests lower it */
    uint32_t last_type;   /* the last type interned: checked first */
    uint32_t next_seq;
    uint32_t seq_limit;   /* renumber when next_seq reaches it: UINT32_MAX; tests lower it */
    size_t pool_grows;    /* how often the arrays were enlarged (tests use these counts) */
    size_t purges;
    size_t renumbers;
} sim_queue;

/* A popped event. */
typedef struct sim_fired {
    double time_s;
    sim_handler_fn fn;
    void *ctx;
    uint64_t data;
    unsigned priority;
    unsigned kind;
} sim_fired;

void sim_queue_init(sim_queue *q);
void sim_queue_fini(sim_queue *q);

/* Drop every pending event and restart the sequence, keeping the pool and
 * heap memory: the queue then orders and numbers new events exactly as a
 * freshly initialised one would (records handed out lowest index first).
 * Ids of the dropped events stay stale (their generations are bumped).
 * O(pool capacity), no allocation. */
void sim_queue_clear(sim_queue *q);

/* Insert an event. Returns its id, or 0 when memory is exhausted,
 * priority > SIM_PRIORITY_MAX, kind > SIM_KIND_MAX, or SIM_TYPES_MAX types
 * are in use. time_s must not be NaN. */
sim_event_id sim_queue_push(sim_queue *q, double time_s, unsigned priority, unsigned kind,
                            sim_handler_fn fn, void *ctx, uint64_t data);

/* Remove the first event into *out (may be NULL). Returns 0, or -1 when the
 * queue is empty. */
int sim_queue_pop(sim_queue *q, sim_fired *out);

/* Copy the first event into *out without removing it. Returns 0 or -1 (empty). */
int sim_queue_peek(const sim_queue *q, sim_fired *out);

/* Replace the first event by a new one in one sift (the hold-model fast path
 * of the engine loop: fire the head, schedule its successor). Returns the new
 * id, or 0 (nothing changed) when the queue is empty or on bad input. */
sim_event_id sim_queue_replace_first(sim_queue *q, double time_s, unsigned priority,
                                     unsigned kind, sim_handler_fn fn, void *ctx,
                                     uint64_t data);

/* Cancel a pending event. Returns 1 if it was pending and is now removed,
 * 0 if the id is stale (already fired or cancelled) or invalid. */
int sim_queue_cancel(sim_queue *q, sim_event_id id);

/* Is the event still pending? */
int sim_queue_is_pending(const sim_queue *q, sim_event_id id);

/* Bytes the queue has allocated (heap, slots, types), from the sizes asked of
 * malloc. */
size_t sim_queue_bytes(const sim_queue *q);

static inline size_t sim_queue_size(const sim_queue *q) { return q->n_pending; }

/* The id of a slot's current event. */
static inline sim_event_id sim_queue_slot_id(const sim_queue *q, uint32_t slot)
{
    return ((uint64_t)sim_slot_gen(&q->slots[slot]) << 32) | ((uint64_t)slot + 1);
}

/* The slot of the likely next head (the earliest child of the root), or the
 * head's own when it has none; the queue must not be empty. The engine
 * prefetches it before a handler runs, so the fetch overlaps the handler and
 * the sift that follows. */
static inline const sim_slot *sim_queue_next_head_hint(const sim_queue *q)
{
    size_t n = q->n_heap < 1 + 4 ? q->n_heap : 1 + 4;
    size_t best = n > 1 ? 1 : 0;
    for (size_t c = 2; c < n; c++)
        best = q->heap[c].time_s < q->heap[best].time_s ? c : best;
    return &q->slots[q->heap[best].slot];
}

#endif
