/* engine.c - the event loop (see engine.h).
 *
 * Fast path: the loop peeks the head event and fires it while it is still in
 * the heap. If the handler schedules an event, the first one replaces the head
 * in a single sift-down instead of a pop followed by a push; otherwise the
 * head is popped after the handler returns. Until that first schedule the head
 * is "firing": it cannot be cancelled, and nothing else can move above it
 * because it has the smallest (time, priority, sequence) key. Before the
 * handler runs, the slot of the likely next head is fetched into the cache,
 * so that fetch overlaps the handler and its sift (bench_engine at 1e6
 * pending: the one memory access a raw heap does not have).
 */
#include "engine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sim_engine {
    sim_queue queue;
    double now_s;
    uint64_t digest;
    uint64_t n_fired;
    sim_event_id firing_id; /* head being fired and not yet replaced, else 0 */
    int stop_requested;
    int failed;
    int in_run;           /* sim_run is firing events (sim_fire_inline's guard) */
    double until_s;       /* that run's horizon */
    char failure[160];
    sim_poll_fn poll;
    void *poll_ctx;
    uint64_t poll_every;
};

#define DIGEST_SEED 0xcbf29ce484222325ull
#define DIGEST_PRIME 0x100000001b3ull

sim_engine *sim_engine_create(void)
{
    sim_engine *eng = calloc(1, sizeof *eng);
    if (!eng)
        return NULL;
    sim_queue_init(&eng->queue);
    eng->digest = DIGEST_SEED;
    return eng;
}

void sim_engine_destroy(sim_engine *eng)
{
    if (!eng)
        return;
    sim_queue_fini(&eng->queue);
    free(eng);
}

void sim_engine_reset(sim_engine *eng)
{
    sim_queue q = eng->queue;
    sim_queue_clear(&q);
    memset(eng, 0, sizeof *eng);
    eng->queue = q;
    eng->digest = DIGEST_SEED;
}

static sim_event_id fail(sim_engine *eng, const char *why, double time_s)
{
    if (!eng->failed) {
        eng->failed = 1;
        snprintf(eng->failure, sizeof eng->failure, "%s (time %.17g s, now %.17g s)", why,
                 time_s, eng->now_s);
    }
    return 0;
}

sim_event_id sim_schedule_at(sim_engine *eng, double time_s, unsigned priority, unsigned kind,
                             sim_handler_fn fn, void *ctx, uint64_t data)
{
    if (!(time_s >= eng->now_s)) /* also catches NaN */
        return fail(eng, "event scheduled in the past", time_s);
    if (priority > SIM_PRIORITY_MAX)
        return fail(eng, "event priority above 255", time_s);
    if (kind > SIM_KIND_MAX)
        return fail(eng, "event kind above 65535", time_s);
    sim_event_id id;
    if (eng->firing_id) {
        sim_event_id firing = eng->firing_id;
        eng->firing_id = 0;
        id = sim_queue_replace_first(&eng->queue, time_s, priority, kind, fn, ctx, data);
        if (!id) /* the head is still there: popped when the handler returns */
            eng->firing_id = firing;
    } else {
        id = sim_queue_push(&eng->queue, time_s, priority, kind, fn, ctx, data);
    }
    if (!id)
        return fail(eng, "out of memory for events, or 65535 distinct (handler, context, kind, "
                         "priority) in the queue", time_s);
    return id;
}

sim_event_id sim_schedule_in(sim_engine *eng, double delay_s, unsigned priority, unsigned kind,
                             sim_handler_fn fn, void *ctx, uint64_t data)
{
    if (!(delay_s >= 0))
        return fail(eng, "event scheduled with a negative delay", eng->now_s + delay_s);
    return sim_schedule_at(eng, eng->now_s + delay_s, priority, kind, fn, ctx, data);
}

int sim_cancel(sim_engine *eng, sim_event_id id)
{
    if (id == 0 || id == eng->firing_id)
        return 0;
    return sim_queue_cancel(&eng->queue, id);
}

/* FNV-1a style over three words, each mixed in on its own so no field can
 * cancel another: the time's bits, kind and priority, the payload */
static inline uint64_t mix_digest(uint64_t digest, double time_s, unsigned kind,
                                  unsigned priority, uint64_t data)
{
    uint64_t bits;
    memcpy(&bits, &time_s, sizeof bits);
    digest = (digest ^ bits) * DIGEST_PRIME;
    digest = (digest ^ (((uint64_t)kind << 8) | priority)) * DIGEST_PRIME;
    digest = (digest ^ data) * DIGEST_PRIME;
    return digest;
}

static enum sim_run_status run_loop(sim_engine *eng, double until_s);

enum sim_run_status sim_run(sim_engine *eng, double until_s)
{
    eng->stop_requested = 0;
    if (eng->failed)
        return SIM_RUN_FAILED;
    int was_in_run = eng->in_run; /* a handler may run the engine itself */
    double was_until_s = eng->until_s;
    eng->until_s = until_s;
    eng->in_run = 1;
    enum sim_run_status st = run_loop(eng, until_s);
    eng->in_run = was_in_run;
    eng->until_s = was_until_s;
    return st;
}

int sim_fire_inline(sim_engine *eng, double time_s, unsigned priority, unsigned kind,
                    uint64_t data)
{
    if (!eng->in_run || eng->failed || eng->stop_requested || !(time_s >= eng->now_s) ||
        time_s > eng->until_s || priority > SIM_PRIORITY_MAX || kind > SIM_KIND_MAX ||
        (eng->poll && eng->n_fired % eng->poll_every == 0))
        return 0;
    /* the least pending event is the head, or (while the caller's event is
     * the head, still firing) one of its ARITY children; a cancelled entry
     * there blocks too (conservative: the caller schedules the usual way) */
    const sim_queue *q = &eng->queue;
    size_t first = eng->firing_id ? 1 : 0, last = eng->firing_id ? 1 + 4 : 1;
    if (last > q->n_heap)
        last = q->n_heap;
    for (size_t i = first; i < last; i++)
        if (!(q->heap[i].time_s > time_s))
            return 0;
    eng->now_s = time_s;
    eng->digest = mix_digest(eng->digest, time_s, kind, priority, data);
    eng->n_fired++;
    return 1;
}

static enum sim_run_status run_loop(sim_engine *eng, double until_s)
{
    sim_queue *q = &eng->queue;
    while (q->n_pending > 0) { /* then heap[0] is a live event */
        const sim_heap_entry *head = &q->heap[0];
        if (head->time_s > until_s)
            return SIM_RUN_UNTIL;
        uint32_t slot = head->slot;
        const sim_slot *sl = &q->slots[slot];
        const sim_event_type *type = &q->types[sim_slot_type(sl)];
        sim_handler_fn fn = type->fn;
        void *ctx = type->ctx;
        uint64_t data = sim_slot_data(sl);
        eng->now_s = head->time_s;
        eng->digest = mix_digest(eng->digest, head->time_s, type->kind, type->priority, data);
        eng->firing_id = sim_queue_slot_id(q, slot);
        eng->n_fired++;
#if defined(__GNUC__) /* here, not in a helper: GCC drops a call to a
                       * function that only prefetches, as if it were pure */
        const sim_slot *next = sim_queue_next_head_hint(q);
        __builtin_prefetch(next->bytes);
        __builtin_prefetch(next->bytes + sizeof *next - 1); /* may straddle two lines */
#endif
        fn(eng, ctx, data);
        if (eng->firing_id) { /* the handler scheduled nothing: drop the head now */
            eng->firing_id = 0;
            sim_queue_pop(q, NULL);
        }
        if (eng->failed)
            return SIM_RUN_FAILED;
        if (eng->stop_requested)
            return SIM_RUN_STOPPED;
        if (eng->poll && eng->n_fired % eng->poll_every == 0 && eng->poll(eng, eng->poll_ctx))
            return SIM_RUN_POLLED_STOP;
    }
    return SIM_RUN_EMPTY;
}

void sim_stop(sim_engine *eng) { eng->stop_requested = 1; }

void sim_engine_set_poll(sim_engine *eng, sim_poll_fn fn, void *ctx, uint64_t every)
{
    eng->poll = fn;
    eng->poll_ctx = ctx;
    eng->poll_every = every ? every : 1;
}

double sim_now(const sim_engine *eng) { return eng->now_s; }
uint64_t sim_digest(const sim_engine *eng) { return eng->digest; }
uint64_t sim_events_fired(const sim_engine *eng) { return eng->n_fired; }
/* The head being fired is not pending (sim_cancel refuses it) although it
 * stays in the heap until the handler schedules something or returns. */
size_t sim_pending(const sim_engine *eng)
{
    return sim_queue_size(&eng->queue) - (eng->firing_id != 0);
}
const char *sim_engine_failure(const sim_engine *eng) { return eng->failure; }
size_t sim_engine_pool_grows(const sim_engine *eng) { return eng->queue.pool_grows; }
size_t sim_engine_queue_bytes(const sim_engine *eng) { return sim_queue_bytes(&eng->queue); }
