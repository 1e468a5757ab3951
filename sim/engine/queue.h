/* queue.h - the future-event set: a 4-ary array heap of pooled event records.
 *
 * Order is (time, priority, sequence): earlier time first; at equal times the
 * lower priority value first; at equal time and priority, insertion order
 * (sequence is assigned on insert). Event records come from a pool that grows
 * by doubling and recycles freed slots, so there is no malloc per event.
 * Heap entries carry the time inline (16 bytes) so sifting touches the record
 * only on ties. Push, pop and cancel are O(log n); cancel finds the entry via
 * the heap position kept in the record.
 */
#ifndef DCSIM_SIM_QUEUE_H
#define DCSIM_SIM_QUEUE_H

#include <stddef.h>
#include <stdint.h>

struct sim_engine;

/* An event handler: a plain function with a context pointer and one word of
 * payload (an entity id, an index, ...). */
typedef void (*sim_handler_fn)(struct sim_engine *eng, void *ctx, uint64_t data);

/* Identifies a pending event for cancellation. 0 is never a valid id. An id
 * stays unique after its event fires or is cancelled (a 32-bit generation
 * counter per pool slot is part of it), so cancelling a stale id is a safe
 * no-op -- unless the caller keeps a stale id while its slot is reused 2^32
 * times, which the engine's users never do (they cancel only ids of events
 * they know to be pending or just replaced). */
typedef uint64_t sim_event_id;

#define SIM_PRIORITY_MAX 255u
#define SIM_KIND_MAX 65535u

typedef struct sim_event_rec {
    sim_handler_fn fn;
    void *ctx;
    uint64_t data;
    uint64_t order;    /* priority << 56 | sequence */
    uint32_t gen;      /* bumped when the record is freed */
    uint16_t kind;     /* caller's event kind, folded into the digest */
} sim_event_rec;

typedef struct sim_heap_entry {
    double time_s;
    uint32_t rec;      /* index into the record pool */
} sim_heap_entry;

typedef struct sim_queue {
    sim_heap_entry *heap;
    size_t n_pending;
    size_t heap_cap;
    sim_event_rec *recs;
    uint32_t *heap_pos;  /* by record: its heap index while pending, else UINT32_MAX.
                          * A dense array, apart from the records, because every
                          * sift step writes it for a random record. */
    uint32_t *free_recs; /* stack of free record indices */
    size_t n_free;
    size_t recs_cap;
    uint64_t next_seq;
    size_t pool_grows;   /* how often the pool was enlarged (tests use it) */
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
 * priority > SIM_PRIORITY_MAX or kind > SIM_KIND_MAX. time_s must not be NaN. */
sim_event_id sim_queue_push(sim_queue *q, double time_s, unsigned priority, unsigned kind,
                            sim_handler_fn fn, void *ctx, uint64_t data);

/* Remove the first event into *out. Returns 0, or -1 when the queue is empty. */
int sim_queue_pop(sim_queue *q, sim_fired *out);

/* Copy the first event into *out without removing it. Returns 0 or -1 (empty). */
int sim_queue_peek(const sim_queue *q, sim_fired *out);

/* Replace the first event by a new one in one sift (the hold-model fast path
 * of the engine loop: fire the head, schedule its successor). The queue must
 * not be empty. Returns the new id or 0 on bad priority. */
sim_event_id sim_queue_replace_first(sim_queue *q, double time_s, unsigned priority,
                                     unsigned kind, sim_handler_fn fn, void *ctx,
                                     uint64_t data);

/* Cancel a pending event. Returns 1 if it was pending and is now removed,
 * 0 if the id is stale (already fired or cancelled) or invalid. */
int sim_queue_cancel(sim_queue *q, sim_event_id id);

/* Is the event still pending? */
int sim_queue_is_pending(const sim_queue *q, sim_event_id id);

static inline size_t sim_queue_size(const sim_queue *q) { return q->n_pending; }

#endif
