/* test_queue_compact.c - the compact event queue's own paths (queue.h):
 * the 30-byte layout and its memory count, lazy cancellation (cancelled
 * entries surfacing, the purge that recycles them instead of growing),
 * renumbering the 32-bit sequence before it wraps, recycling interned event
 * types (and the engine's error when 65535 are in use), and 1e5 random
 * operations against a sorted-array reference with all of those forced to
 * happen often.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "engine.h"
#include "queue_check.h"

/* A pending event = 16-byte heap entry + 14-byte slot; the queue's count is
 * what it asked malloc for. At a full pool of 2^16 events that is 30 bytes
 * each plus the padding line and one type. */
static void test_layout_and_bytes(void)
{
    CHECK_INT_EQ(sizeof(sim_heap_entry), 16);
    CHECK_INT_EQ(sizeof(sim_slot), 14);
    enum { N = 1 << 16 };
    sim_queue q;
    sim_queue_init(&q);
    CHECK_INT_EQ(sim_queue_bytes(&q), 0);
    uint64_t rng = 7;
    for (unsigned i = 0; i < N; i++)
        sim_queue_push(&q, (double)(test_rand(&rng) % 1000), 0, 0, handler_a, NULL, i);
    CHECK_INT_EQ(q.cap, N);
    CHECK_INT_EQ(q.n_types, 1);
    size_t types_bytes = q.types_cap * sizeof(sim_event_type) + q.index_cap * sizeof(uint16_t);
    CHECK_INT_EQ(sim_queue_bytes(&q), (size_t)N * 30 + 64 + types_bytes);
    CHECK((double)sim_queue_bytes(&q) / N <= 30.1);
    sim_queue_fini(&q);
}

/* Cancelling the head removes it at once; cancelling the rest empties the
 * queue as their entries surface; a cancelled event never comes out. */
static void test_cancel_head_and_all(void)
{
    enum { N = 300 };
    static sim_event_id ids[N];
    sim_queue q;
    sim_queue_init(&q);
    for (unsigned i = 0; i < N; i++)
        ids[i] = sim_queue_push(&q, (double)(N - i), 0, 0, handler_a, NULL, i);
    /* the head is the last pushed (time 1) */
    CHECK_INT_EQ(sim_queue_cancel(&q, ids[N - 1]), 1);
    sim_fired f;
    CHECK_INT_EQ(sim_queue_peek(&q, &f), 0);
    CHECK_INT_EQ(f.data, N - 2);
    CHECK(queue_is_valid(&q));
    /* cancel all but event 5 (time N - 5): it must come out alone */
    for (unsigned i = 0; i < N - 1; i++)
        if (i != 5)
            CHECK_INT_EQ(sim_queue_cancel(&q, ids[i]), 1);
    CHECK_INT_EQ(sim_queue_size(&q), 1);
    /* the cancelled entries before it were dropped as they surfaced; the
     * five later ones (events 0..4) wait behind it */
    CHECK_INT_EQ(q.n_heap, 6);
    CHECK(queue_is_valid(&q));
    CHECK_INT_EQ(sim_queue_pop(&q, &f), 0);
    CHECK_INT_EQ(f.data, 5);
    CHECK(f.time_s == N - 5.0);
    CHECK_INT_EQ(q.n_heap, 0);
    CHECK_INT_EQ(sim_queue_pop(&q, &f), -1);
    CHECK_INT_EQ(sim_queue_peek(&q, &f), -1);
    CHECK_INT_EQ(sim_queue_replace_first(&q, 1.0, 0, 0, handler_a, NULL, 0), 0);

    /* cancel everything: no entry is left */
    for (unsigned i = 0; i < N; i++)
        ids[i] = sim_queue_push(&q, (double)(i % 7), 0, 0, handler_a, NULL, i);
    for (unsigned i = 0; i < N; i++)
        CHECK_INT_EQ(sim_queue_cancel(&q, ids[(i * 37) % N]), 1);
    CHECK_INT_EQ(sim_queue_size(&q), 0);
    CHECK_INT_EQ(q.n_heap, 0);
    CHECK(queue_is_valid(&q));
    sim_queue_fini(&q);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* A full pool with an eighth or more cancelled is purged, not grown. */
static void test_purge_instead_of_growth(void)
{
    enum { N = 1000, CANCEL = 500 };
    static sim_event_id ids[N];
    static double live[N];
    size_t n_live = 0;
    sim_queue q;
    sim_queue_init(&q);
    uint64_t rng = 11;
    for (unsigned i = 0; i < N; i++)
        ids[i] = sim_queue_push(&q, (double)(test_rand(&rng) % 100000), 0, 0, handler_a, NULL,
                                i);
    CHECK_INT_EQ(q.cap, 1024);
    size_t grows = q.pool_grows;
    size_t n_cancelled = 0;
    for (unsigned i = 0; i < N && n_cancelled < CANCEL; i += 2)
        n_cancelled += sim_queue_cancel(&q, ids[i]) == 1;
    CHECK_INT_EQ(n_cancelled, CANCEL);
    CHECK_INT_EQ(sim_queue_size(&q), N - CANCEL);
    CHECK(q.n_heap > N - CANCEL); /* most cancelled entries still wait in the heap */
    sim_fired f;
    /* the live times, from the entries whose slots are live */
    for (size_t k = 0; k < q.n_heap; k++)
        if ((sim_slot_gen(&q.slots[q.heap[k].slot]) & 3u) == 1)
            live[n_live++] = q.heap[k].time_s;
    CHECK_INT_EQ(n_live, N - CANCEL);
    /* fill the pool (1,000 live then): one purge, no growth */
    for (unsigned i = 0; i < 500; i++) {
        double t = (double)(test_rand(&rng) % 100000);
        CHECK(sim_queue_push(&q, t, 0, 0, handler_a, NULL, N + i) != 0);
        live[n_live++] = t;
    }
    CHECK_INT_EQ(q.purges, 1);
    CHECK_INT_EQ(q.pool_grows, grows);
    CHECK_INT_EQ(q.cap, 1024);
    CHECK_INT_EQ(q.n_heap, sim_queue_size(&q)); /* the purge dropped every cancelled entry */
    CHECK(queue_is_valid(&q));
    qsort(live, n_live, sizeof *live, cmp_double);
    size_t bad = 0;
    for (size_t k = 0; k < n_live; k++)
        bad += sim_queue_pop(&q, &f) != 0 || f.time_s != live[k];
    CHECK_INT_EQ(bad, 0);
    CHECK_INT_EQ(sim_queue_size(&q), 0);
    sim_queue_fini(&q);
}

/* With a tiny sequence space, equal keys still fire in insertion order
 * across many renumberings, by push and by replace_first. */
static void test_renumber_keeps_fifo(void)
{
    enum { LIMIT = 300, ROUNDS = 40 };
    sim_queue q;
    sim_queue_init(&q);
    q.seq_limit = LIMIT;
    uint64_t next = 0, expect = 0; /* payloads are push numbers */
    size_t bad = 0;
    sim_fired f;
    for (unsigned r = 0; r < ROUNDS; r++) {
        /* 100 more at the same time and priority; a prio-1 one in between */
        for (unsigned i = 0; i < 100; i++) {
            if (!sim_queue_push(&q, 5.0, 0, 0, handler_a, NULL, next++))
                bad++;
            if (i == 50 && !sim_queue_push(&q, 5.0, 1, 0, handler_a, NULL, UINT64_MAX))
                bad++;
        }
        /* all priority-0 ones out, in order; 10 replaced by a successor at
         * the back first */
        for (unsigned i = 0; i < 110; i++) {
            if (sim_queue_peek(&q, &f) != 0 || f.data != expect)
                bad++;
            expect++;
            if (i % 11 == 0) {
                if (!sim_queue_replace_first(&q, 5.0, 0, 0, handler_a, NULL, next++))
                    bad++;
            } else if (sim_queue_pop(&q, NULL) != 0) {
                bad++;
            }
        }
        if (!queue_is_valid(&q))
            bad++;
    }
    CHECK_INT_EQ(bad, 0);
    CHECK(q.renumbers > 10);
    CHECK(q.next_seq < LIMIT);
    /* left: the priority-1 ones */
    CHECK_INT_EQ(sim_queue_size(&q), ROUNDS);
    while (sim_queue_pop(&q, &f) == 0)
        bad += f.priority != 1 || f.data != UINT64_MAX;
    CHECK_INT_EQ(expect, next);
    CHECK_INT_EQ(bad, 0);
    sim_queue_fini(&q);
}

/* Types: one per (handler, context, kind, priority); a push that needs a
 * new one while types_max are in use fails and changes nothing; once one
 * is unused it is recycled. */
static void test_type_recycling(void)
{
    static int ctx[6];
    sim_queue q;
    sim_queue_init(&q);
    q.types_max = 4;
    sim_event_id a = sim_queue_push(&q, 1.0, 0, 0, handler_a, &ctx[0], 0);
    sim_queue_push(&q, 2.0, 0, 0, handler_a, &ctx[1], 1);
    sim_queue_push(&q, 3.0, 0, 7, handler_a, &ctx[1], 2); /* another kind */
    sim_queue_push(&q, 4.0, 3, 0, handler_a, &ctx[1], 3); /* another priority */
    CHECK_INT_EQ(q.n_types, 4);
    CHECK(sim_queue_push(&q, 5.0, 0, 0, handler_a, &ctx[1], 4) != 0); /* an existing type */
    CHECK_INT_EQ(q.n_types, 4);
    CHECK_INT_EQ(sim_queue_push(&q, 0.5, 0, 0, handler_a, &ctx[2], 5), 0); /* a fifth */
    CHECK_INT_EQ(sim_queue_size(&q), 5);
    CHECK(queue_is_valid(&q));
    CHECK_INT_EQ(sim_queue_replace_first(&q, 0.5, 0, 0, handler_a, &ctx[2], 5), 0);
    CHECK(sim_queue_is_pending(&q, a));

    /* ctx[0]'s only event leaves: its type is recycled for ctx[2] */
    sim_fired f;
    CHECK_INT_EQ(sim_queue_pop(&q, &f), 0);
    CHECK(f.ctx == &ctx[0]);
    CHECK(sim_queue_push(&q, 0.5, 0, 0, handler_a, &ctx[2], 5) != 0);
    CHECK_INT_EQ(q.n_types, 4);
    CHECK(queue_is_valid(&q));
    /* replace_first into a new type (ctx[3]) needs the head's own type free:
     * it is not (the head still counts), so it fails */
    CHECK_INT_EQ(sim_queue_replace_first(&q, 9.0, 0, 0, handler_a, &ctx[3], 6), 0);
    CHECK_INT_EQ(sim_queue_peek(&q, &f), 0);
    CHECK(f.ctx == &ctx[2]);
    CHECK_INT_EQ(f.data, 5);
    /* pop ctx[2]'s; then replace ctx[1]'s head (kind 0) by ctx[3] */
    sim_queue_pop(&q, NULL);
    CHECK(sim_queue_push(&q, 0.25, 0, 0, handler_a, &ctx[4], 7) != 0); /* recycles ctx[2]'s */
    CHECK_INT_EQ(sim_queue_pop(&q, &f), 0);
    CHECK(f.ctx == &ctx[4]);
    CHECK(sim_queue_replace_first(&q, 10.0, 0, 0, handler_a, &ctx[3], 8) != 0);
    CHECK(queue_is_valid(&q));
    static const struct {
        int *ctx;
        unsigned kind, priority;
        uint64_t data;
    } expect[] = {{&ctx[1], 7, 0, 2}, {&ctx[1], 0, 3, 3}, {&ctx[1], 0, 0, 4}, {&ctx[3], 0, 0, 8}};
    for (size_t k = 0; k < 4; k++) {
        CHECK_INT_EQ(sim_queue_pop(&q, &f), 0);
        CHECK(f.ctx == expect[k].ctx);
        CHECK_INT_EQ(f.kind, expect[k].kind);
        CHECK_INT_EQ(f.priority, expect[k].priority);
        CHECK_INT_EQ(f.data, expect[k].data);
    }
    CHECK_INT_EQ(sim_queue_size(&q), 0);
    sim_queue_fini(&q);
}

/* ---- through the engine ---- */

static void record_nothing(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)eng, (void)ctx, (void)data;
}

static void count_fired(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)eng, (void)data;
    ++*(int *)ctx;
}

static void schedule_new_type(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)data;
    sim_event_id *got = ctx;
    *got = sim_schedule_in(eng, 1.0, 0, 0, record_nothing, got + 1, 0);
}

/* Event types are interned per (handler, context, kind, priority): 65535
 * combinations with events pending at once work, one more is refused with
 * its reason; once they fired, their types are recycled. */
static void test_too_many_event_types(void)
{
    enum { N = SIM_TYPES_MAX };
    static unsigned char ctx[N + 1];
    int n_fired = 0;
    sim_engine *eng = sim_engine_create();
    size_t failed = 0;
    for (unsigned i = 0; i < N; i++)
        failed += sim_schedule_at(eng, 1.0, 0, 0, record_nothing, &ctx[i], i) == 0;
    CHECK_INT_EQ(failed, 0);
    CHECK_INT_EQ(sim_run(eng, 0.5), SIM_RUN_UNTIL); /* not failed yet */
    CHECK_INT_EQ(sim_schedule_at(eng, 1.0, 0, 0, record_nothing, &ctx[N], N), 0);
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_FAILED);
    CHECK_CONTAINS(sim_engine_failure(eng), "65535 distinct (handler, context, kind, priority)");
    sim_engine_destroy(eng);

    /* refused from a handler (the replace-first path): the fired head still
     * leaves the queue */
    eng = sim_engine_create();
    sim_event_id got[2] = {123, 0};
    CHECK(sim_schedule_at(eng, 0.5, 0, 0, schedule_new_type, got, 0) != 0);
    for (unsigned i = 1; i < N; i++)
        sim_schedule_at(eng, 1.0, 0, 0, record_nothing, &ctx[i], i);
    CHECK_INT_EQ(sim_pending(eng), N);
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_FAILED);
    CHECK_INT_EQ(got[0], 0); /* its successor would be an N+1th type */
    CHECK_INT_EQ(sim_pending(eng), N - 1);
    CHECK(sim_now(eng) == 0.5);
    sim_engine_destroy(eng);

    eng = sim_engine_create();
    for (unsigned i = 0; i < N; i++)
        sim_schedule_at(eng, 1.0, 0, 0, record_nothing, &ctx[i], i);
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_EMPTY);
    CHECK(sim_schedule_at(eng, 2.0, 0, 0, count_fired, &n_fired, 7) != 0);
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_EMPTY);
    CHECK_INT_EQ(n_fired, 1);
    CHECK_INT_EQ(sim_events_fired(eng), N + 1);
    sim_engine_destroy(eng);
}

/* ---- 1e5 random operations against a sorted array ---- */

#define REF_OPS 100000u
#define N_CTX 64

struct ref_ev {
    double time_s;
    unsigned priority, kind, ctx;
    uint64_t seq; /* push number: also the payload */
    sim_event_id id;
};

static int ref_before(const struct ref_ev *a, const struct ref_ev *b)
{
    if (a->time_s != b->time_s)
        return a->time_s < b->time_s;
    if (a->priority != b->priority)
        return a->priority < b->priority;
    return a->seq < b->seq;
}

struct sorted_ref {
    struct ref_ev *ev; /* ascending */
    size_t n;
};

static void ref_insert(struct sorted_ref *r, struct ref_ev e)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ref_before(&r->ev[mid], &e))
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(&r->ev[lo + 1], &r->ev[lo], (r->n - lo) * sizeof *r->ev);
    r->ev[lo] = e;
    r->n++;
}

static void ref_remove(struct sorted_ref *r, size_t i)
{
    memmove(&r->ev[i], &r->ev[i + 1], (r->n - i - 1) * sizeof *r->ev);
    r->n--;
}

static int types_all_used(const sim_queue *q)
{
    size_t used = 0;
    for (size_t t = 0; t < q->n_types; t++)
        used += q->types[t].n_refs != 0 && q->types[t].n_refs != UINT32_MAX;
    return used == q->types_max;
}

struct ref_counts {
    size_t pops, cancels, replaces, type_refusals, mismatches, invalid;
};

static void check_popped(const struct ref_ev *want, const sim_fired *f, const int *ctx,
                         struct ref_counts *c)
{
    if (f->time_s != want->time_s || f->priority != want->priority || f->kind != want->kind ||
        f->ctx != &ctx[want->ctx] || f->data != want->seq || f->fn != handler_a)
        c->mismatches++;
}

/* One random operation on both. */
static void random_op(sim_queue *q, struct sorted_ref *r, uint64_t *rng, unsigned op,
                      uint64_t *next_seq, const int *ctx, struct ref_counts *c)
{
    uint64_t x = test_rand(rng);
    unsigned roll = (unsigned)(x % 100);
    unsigned grow = (op / 5000) % 2 ? 25 : 55; /* size drifts up and down */
    /* few times, four priorities, kinds and contexts drifting: ties, types
     * coming and going */
    struct ref_ev e = {(double)((x >> 8) % 50), (unsigned)((x >> 16) % 4), (unsigned)((x >> 20) % 2),
                       (unsigned)((op / 2500 + (x >> 24) % 3) % N_CTX), *next_seq, 0};
    if (e.priority == 3)
        e.priority = SIM_PRIORITY_MAX;
    sim_fired f;
    if (roll < grow || (roll < grow + 10 && r->n > 0)) {
        int is_replace = roll >= grow;
        sim_event_id id = is_replace ? sim_queue_replace_first(q, e.time_s, e.priority, e.kind,
                                                               handler_a, (void *)&ctx[e.ctx],
                                                               e.seq)
                                     : sim_queue_push(q, e.time_s, e.priority, e.kind, handler_a,
                                                      (void *)&ctx[e.ctx], e.seq);
        if (!id) { /* only when every type is in use by an event in the heap */
            c->type_refusals++;
            if (!types_all_used(q))
                c->mismatches++;
            return;
        }
        if (is_replace) {
            if (sim_queue_is_pending(q, r->ev[0].id))
                c->mismatches++;
            ref_remove(r, 0);
            c->replaces++;
        }
        e.id = id;
        ref_insert(r, e);
        ++*next_seq;
    } else if (roll < grow + 25 && r->n > 0) {
        size_t i = (size_t)((x >> 32) % r->n);
        if (sim_queue_cancel(q, r->ev[i].id) != 1 || sim_queue_cancel(q, r->ev[i].id) != 0)
            c->mismatches++;
        ref_remove(r, i);
        c->cancels++;
    } else {
        int got = sim_queue_pop(q, &f) == 0;
        if (got != (r->n > 0)) {
            c->mismatches++;
        } else if (got) {
            check_popped(&r->ev[0], &f, ctx, c);
            ref_remove(r, 0);
            c->pops++;
        }
    }
}

static void test_random_against_sorted_array(void)
{
    static int ctx[N_CTX];
    struct sorted_ref r = {malloc(REF_OPS * sizeof *r.ev), 0};
    CHECK(r.ev != NULL);
    if (!r.ev)
        return;
    sim_queue q;
    sim_queue_init(&q);
    q.seq_limit = 4000; /* renumber every few thousand pushes */
    q.types_max = 28;   /* 3 contexts x 2 kinds x 4 priorities = 24 recent combinations */
    uint64_t rng = 424242, next_seq = 0;
    struct ref_counts c = {0};
    size_t max_size = 0, max_cancelled = 0;
    for (unsigned op = 0; op < REF_OPS; op++) {
        random_op(&q, &r, &rng, op, &next_seq, ctx, &c);
        if (sim_queue_size(&q) != r.n)
            c.mismatches++;
        sim_fired f;
        if (r.n > 0 && (sim_queue_peek(&q, &f) != 0 || f.data != r.ev[0].seq))
            c.mismatches++;
        if (r.n > max_size)
            max_size = r.n;
        if (q.n_heap - q.n_pending > max_cancelled)
            max_cancelled = q.n_heap - q.n_pending;
        if (op % 5000 == 4999 && !queue_is_valid(&q))
            c.invalid++;
    }
    sim_fired f;
    while (r.n > 0) {
        if (sim_queue_pop(&q, &f) != 0)
            c.mismatches++;
        else
            check_popped(&r.ev[0], &f, ctx, &c);
        ref_remove(&r, 0);
    }
    CHECK_INT_EQ(sim_queue_pop(&q, &f), -1);
    CHECK_INT_EQ(c.mismatches, 0);
    CHECK_INT_EQ(c.invalid, 0);
    /* every path ran, many times */
    CHECK(c.pops > 10000);
    CHECK(c.cancels > 10000);
    CHECK(c.replaces > 5000);
    CHECK(c.type_refusals > 0);
    CHECK(q.free_types != NULL); /* types were recycled */
    CHECK(q.renumbers > 10);
    CHECK(q.purges > 0);
    CHECK(max_size > 500);
    CHECK(max_cancelled > 100);
    sim_queue_fini(&q);
    free(r.ev);
}

int main(void)
{
    test_layout_and_bytes();
    test_cancel_head_and_all();
    test_purge_instead_of_growth();
    test_renumber_keeps_fifo();
    test_type_recycling();
    test_too_many_event_types();
    test_random_against_sorted_array();
    return check_report();
}
