/* test_queue.c - the future-event set (sim/engine/queue.h).
 *
 * Checks the ordering contract (time, then priority, then insertion order),
 * cancellation anywhere in the heap, stale ids, replace_first, pool reuse,
 * and 1e6 random push/pop/cancel/replace operations against an independent
 * reference (a binary heap keyed by (time, priority, push sequence) with
 * lazy deletion). The compact layout's own paths (purge, renumbering, type
 * recycling, memory) are in test_queue_compact.c.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "queue_check.h"

/* A second handler address, next to queue_check.h's handler_a. */
static void handler_b(struct sim_engine *eng, void *ctx, uint64_t data)
{
    (void)eng, (void)ctx, (void)data;
}

/* Same time: lower priority first; same time and priority: insertion order. */
static void test_order_with_ties(void)
{
    static const struct {
        double time_s;
        unsigned priority;
    } in[] = {
        {3.0, 0}, {1.0, 5}, {2.0, 1}, {1.0, 0}, {1.0, 5}, {2.0, 0}, {1.0, 255}, {0.5, 9},
        {1.0, 0}, {2.0, 1}, {3.0, 0}, {1.0, 5}, {0.0, 255}, {2.0, 0}, {3.0, 0}, {1.0, 0},
    };
    /* expected pop order, as indices into in[] */
    static const unsigned expect[] = {12, 7, 3, 8, 15, 1, 4, 11, 6, 5, 13, 2, 9, 0, 10, 14};
    enum { N = sizeof in / sizeof in[0] };
    CHECK_INT_EQ(sizeof expect / sizeof expect[0], N);

    sim_queue q;
    sim_queue_init(&q);
    CHECK_INT_EQ(sim_queue_size(&q), 0);
    sim_fired f;
    CHECK_INT_EQ(sim_queue_pop(&q, &f), -1);
    CHECK_INT_EQ(sim_queue_peek(&q, &f), -1);

    for (unsigned i = 0; i < N; i++) {
        sim_event_id id = sim_queue_push(&q, in[i].time_s, in[i].priority, 100 + i,
                                         (i & 1) ? handler_b : handler_a, &q, i);
        CHECK(id != 0);
    }
    CHECK_INT_EQ(sim_queue_size(&q), N);
    CHECK(queue_is_valid(&q));

    for (unsigned k = 0; k < N; k++) {
        unsigned i = expect[k];
        sim_fired peeked;
        CHECK_INT_EQ(sim_queue_peek(&q, &peeked), 0);
        CHECK_INT_EQ(sim_queue_pop(&q, &f), 0);
        CHECK_INT_EQ(f.data, i);
        CHECK_INT_EQ(peeked.data, i);
        CHECK(f.time_s == in[i].time_s);
        CHECK_INT_EQ(f.priority, in[i].priority);
        CHECK_INT_EQ(f.kind, 100 + i);
        CHECK(f.fn == ((i & 1) ? handler_b : handler_a));
        CHECK(f.ctx == &q);
        CHECK(queue_is_valid(&q));
    }
    CHECK_INT_EQ(sim_queue_size(&q), 0);
    CHECK_INT_EQ(sim_queue_pop(&q, NULL), -1);
    sim_queue_fini(&q);
}

/* Insertion order holds for long runs of identical keys, across heap levels. */
static void test_fifo_for_equal_keys(void)
{
    enum { N = 3000 };
    sim_queue q;
    sim_queue_init(&q);
    for (unsigned i = 0; i < N; i++)
        sim_queue_push(&q, 7.0, (i % 3 == 0) ? 1 : 2, 0, handler_a, NULL, i);
    sim_fired f;
    uint64_t prev = 0;
    int ok = 1;
    /* priority 1 entries (i % 3 == 0) first, in insertion order, then priority 2 */
    for (unsigned k = 0; k < N; k++) {
        if (sim_queue_pop(&q, &f) != 0) {
            ok = 0;
            break;
        }
        unsigned expect_prio = k < N / 3 ? 1 : 2;
        if (f.priority != expect_prio || (k != 0 && k != N / 3 && f.data <= prev))
            ok = 0;
        if (k < N / 3 && f.data != 3ull * k)
            ok = 0;
        prev = f.data;
    }
    CHECK(ok);
    sim_queue_fini(&q);
}

static int cmp_key(double ta, unsigned pa, uint64_t sa, double tb, unsigned pb, uint64_t sb)
{
    if (ta != tb)
        return ta < tb ? -1 : 1;
    if (pa != pb)
        return pa < pb ? -1 : 1;
    return sa < sb ? -1 : sa > sb;
}

struct ref_item {
    double time_s;
    unsigned priority;
    uint64_t seq;
};

static int cmp_ref_item(const void *a, const void *b)
{
    const struct ref_item *x = a, *y = b;
    return cmp_key(x->time_s, x->priority, x->seq, y->time_s, y->priority, y->seq);
}

/* Cancel pending events at many heap positions (root, leaves, middle); the
 * rest come out in exact order and the cancelled ones never do. */
static void test_cancel_in_the_middle(void)
{
    enum { N = 500, LAST = N + 1 };
    static struct ref_item items[N];
    static sim_event_id ids[N];
    static int cancelled[N];
    uint64_t rng = 12345;
    sim_queue q;
    sim_queue_init(&q);
    for (unsigned i = 0; i < N; i++) {
        items[i].time_s = (double)(test_rand(&rng) % 40); /* many equal times */
        items[i].priority = (unsigned)(test_rand(&rng) % 3);
        items[i].seq = i;
        ids[i] = sim_queue_push(&q, items[i].time_s, items[i].priority, 0, handler_a, NULL, i);
        CHECK(ids[i] != 0);
        CHECK(sim_queue_is_pending(&q, ids[i]));
    }

    /* the root, the last heap slot, and entries at various depths */
    size_t n_cancelled = 0;
    size_t positions[] = {N - 1, 0, 1, 2, 3, 4, 5, 20, 21, 84, 85, 200, 341, 342, 400, LAST};
    for (size_t k = 0; k < sizeof positions / sizeof positions[0]; k++) {
        size_t pos = positions[k] == LAST ? q.n_heap - 1 : positions[k];
        /* cancelled entries stay in the heap until they surface: take the
         * first live one from pos on */
        while (pos < q.n_heap && !sim_queue_is_pending(&q, sim_queue_slot_id(&q, q.heap[pos].slot)))
            pos++;
        CHECK(pos < q.n_heap);
        if (pos >= q.n_heap)
            break;
        unsigned i = (unsigned)sim_slot_data(&q.slots[q.heap[pos].slot]);
        CHECK_INT_EQ(sim_queue_cancel(&q, ids[i]), 1);
        CHECK(!sim_queue_is_pending(&q, ids[i]));
        CHECK_INT_EQ(sim_queue_cancel(&q, ids[i]), 0); /* second cancel is a no-op */
        cancelled[i] = 1;
        n_cancelled++;
        CHECK(queue_is_valid(&q));
    }
    /* and every 7th by index */
    for (unsigned i = 0; i < N; i += 7) {
        if (cancelled[i])
            continue;
        CHECK_INT_EQ(sim_queue_cancel(&q, ids[i]), 1);
        cancelled[i] = 1;
        n_cancelled++;
    }
    CHECK(queue_is_valid(&q));
    CHECK_INT_EQ(sim_queue_size(&q), N - n_cancelled);

    static struct ref_item expect[N];
    size_t n_expect = 0;
    for (unsigned i = 0; i < N; i++)
        if (!cancelled[i])
            expect[n_expect++] = items[i];
    qsort(expect, n_expect, sizeof expect[0], cmp_ref_item);

    sim_fired f;
    int in_order = 1, saw_cancelled = 0;
    for (size_t k = 0; k < n_expect; k++) {
        if (sim_queue_pop(&q, &f) != 0 || f.data != expect[k].seq)
            in_order = 0;
        else if (cancelled[f.data])
            saw_cancelled = 1;
    }
    CHECK(in_order);
    CHECK(!saw_cancelled);
    CHECK_INT_EQ(sim_queue_pop(&q, &f), -1);
    sim_queue_fini(&q);
}

/* Stale and invalid ids: cancel returns 0 and never touches another event,
 * even after the slot was reused by a new event. */
static void test_stale_ids(void)
{
    sim_queue q;
    sim_queue_init(&q);
    CHECK_INT_EQ(sim_queue_cancel(&q, 0), 0);
    CHECK_INT_EQ(sim_queue_cancel(&q, 1), 0); /* no pool yet */
    CHECK(!sim_queue_is_pending(&q, 0));
    CHECK(!sim_queue_is_pending(&q, 12345));

    sim_event_id a = sim_queue_push(&q, 1.0, 0, 0, handler_a, NULL, 1);
    CHECK(a != 0);
    CHECK(sim_queue_is_pending(&q, a));
    sim_fired f;
    CHECK_INT_EQ(sim_queue_pop(&q, &f), 0);
    CHECK(!sim_queue_is_pending(&q, a));
    CHECK_INT_EQ(sim_queue_cancel(&q, a), 0); /* already fired */

    /* the freed slot is reused; the old id must not reach the new event */
    sim_event_id b = sim_queue_push(&q, 2.0, 0, 0, handler_a, NULL, 2);
    CHECK(b != 0);
    CHECK(b != a);
    CHECK_INT_EQ(b & 0xffffffffu, a & 0xffffffffu); /* same slot, new generation */
    CHECK_INT_EQ(sim_queue_cancel(&q, a), 0);
    CHECK(sim_queue_is_pending(&q, b));
    CHECK_INT_EQ(sim_queue_size(&q), 1);

    /* ids outside the pool, or with a future generation */
    CHECK_INT_EQ(sim_queue_cancel(&q, (b & 0xffffffff00000000ull) | 0xfffffffful), 0);
    CHECK_INT_EQ(sim_queue_cancel(&q, b + (1ull << 32)), 0);
    CHECK(!sim_queue_is_pending(&q, b + (1ull << 32)));
    CHECK_INT_EQ(sim_queue_size(&q), 1);

    CHECK_INT_EQ(sim_queue_cancel(&q, b), 1);
    CHECK_INT_EQ(sim_queue_cancel(&q, b), 0);
    CHECK_INT_EQ(sim_queue_size(&q), 0);

    /* bad input is refused without side effects */
    CHECK_INT_EQ(sim_queue_push(&q, 1.0, SIM_PRIORITY_MAX + 1, 0, handler_a, NULL, 0), 0);
    CHECK_INT_EQ(sim_queue_push(&q, NAN, 0, 0, handler_a, NULL, 0), 0);
    CHECK_INT_EQ(sim_queue_size(&q), 0);
    CHECK(sim_queue_push(&q, 1.0, SIM_PRIORITY_MAX, 0, handler_a, NULL, 0) != 0);
    CHECK(sim_queue_push(&q, INFINITY, 0, 0, handler_a, NULL, 0) != 0);
    CHECK(sim_queue_push(&q, -INFINITY, 0, 0, handler_a, NULL, 0) != 0);
    CHECK_INT_EQ(sim_queue_pop(&q, &f), 0);
    CHECK(f.time_s == -INFINITY);
    CHECK_INT_EQ(sim_queue_pop(&q, &f), 0);
    CHECK(f.time_s == 1.0);
    CHECK_INT_EQ(f.priority, SIM_PRIORITY_MAX);
    CHECK_INT_EQ(sim_queue_pop(&q, &f), 0);
    CHECK(f.time_s == INFINITY);
    sim_queue_fini(&q);
    sim_queue_fini(NULL);
}

static void test_replace_first(void)
{
    sim_queue q;
    sim_queue_init(&q);
    sim_fired f;
    CHECK_INT_EQ(sim_queue_replace_first(&q, 1.0, 0, 0, handler_a, NULL, 0), 0); /* empty */

    sim_event_id a = sim_queue_push(&q, 1.0, 0, 1, handler_a, NULL, 1);
    sim_event_id b = sim_queue_push(&q, 2.0, 0, 2, handler_a, NULL, 2);
    sim_event_id c = sim_queue_push(&q, 2.0, 1, 3, handler_a, NULL, 3);
    sim_event_id d = sim_queue_push(&q, 3.0, 0, 4, handler_a, NULL, 4);

    /* bad input: nothing changes */
    CHECK_INT_EQ(sim_queue_replace_first(&q, 1.0, SIM_PRIORITY_MAX + 1, 0, handler_a, NULL, 0), 0);
    CHECK_INT_EQ(sim_queue_replace_first(&q, NAN, 0, 0, handler_a, NULL, 0), 0);
    CHECK(sim_queue_is_pending(&q, a));
    CHECK_INT_EQ(sim_queue_size(&q), 4);

    /* replace a (t=1) by e (t=2, prio 0): e was inserted after b, so it goes
     * after b but before c (prio 1) */
    sim_event_id e = sim_queue_replace_first(&q, 2.0, 0, 5, handler_b, &q, 5);
    CHECK(e != 0);
    CHECK(!sim_queue_is_pending(&q, a));
    CHECK_INT_EQ(sim_queue_cancel(&q, a), 0);
    CHECK(sim_queue_is_pending(&q, e));
    CHECK_INT_EQ(sim_queue_size(&q), 4);
    CHECK(queue_is_valid(&q));

    /* the head is now b; replace it by something earlier than everything */
    CHECK_INT_EQ(sim_queue_peek(&q, &f), 0);
    CHECK_INT_EQ(f.data, 2);
    sim_event_id g = sim_queue_replace_first(&q, 0.5, 7, 6, handler_a, NULL, 6);
    CHECK(!sim_queue_is_pending(&q, b));
    CHECK_INT_EQ(sim_queue_peek(&q, &f), 0);
    CHECK_INT_EQ(f.data, 6);
    CHECK_INT_EQ(f.priority, 7);

    /* and g by something later than everything */
    sim_event_id h = sim_queue_replace_first(&q, 10.0, 0, 7, handler_a, NULL, 7);
    CHECK(!sim_queue_is_pending(&q, g));
    CHECK(sim_queue_is_pending(&q, h));

    static const uint64_t expect[] = {5, 3, 4, 7};
    for (size_t k = 0; k < 4; k++) {
        CHECK_INT_EQ(sim_queue_pop(&q, &f), 0);
        CHECK_INT_EQ(f.data, expect[k]);
        if (f.data == 5) {
            CHECK(f.time_s == 2.0);
            CHECK_INT_EQ(f.kind, 5);
            CHECK(f.fn == handler_b);
            CHECK(f.ctx == &q);
        }
    }
    CHECK(!sim_queue_is_pending(&q, c));
    CHECK(!sim_queue_is_pending(&q, d));
    CHECK(!sim_queue_is_pending(&q, e));
    CHECK_INT_EQ(sim_queue_size(&q), 0);

    /* a single-element queue */
    sim_queue_push(&q, 1.0, 0, 0, handler_a, NULL, 8);
    CHECK(sim_queue_replace_first(&q, 4.0, 0, 0, handler_a, NULL, 9) != 0);
    CHECK_INT_EQ(sim_queue_pop(&q, &f), 0);
    CHECK_INT_EQ(f.data, 9);
    CHECK(f.time_s == 4.0);
    sim_queue_fini(&q);
}

/* After growing to N pending and draining, N more pushes reuse the pool. */
static void test_pool_reuse(void)
{
    enum { N = 5000 };
    sim_queue q;
    sim_queue_init(&q);
    CHECK_INT_EQ(q.pool_grows, 0);
    for (int round = 0; round < 3; round++) {
        size_t grows_before = q.pool_grows;
        for (unsigned i = 0; i < N; i++)
            sim_queue_push(&q, (double)((i * 7919u) % 1000u), 0, 0, handler_a, NULL, i);
        if (round == 0)
            CHECK(q.pool_grows > 0);
        else
            CHECK_INT_EQ(q.pool_grows, grows_before);
        /* drain half by pop, a quarter by cancel, a quarter by replace+pop */
        sim_fired f;
        for (unsigned i = 0; i < N / 2; i++)
            sim_queue_pop(&q, &f);
        for (size_t k = q.n_heap; q.n_pending > N / 4 && k-- > 1;) {
            sim_event_id id = sim_queue_slot_id(&q, q.heap[k].slot);
            if (sim_queue_is_pending(&q, id))
                CHECK_INT_EQ(sim_queue_cancel(&q, id), 1);
        }
        CHECK_INT_EQ(sim_queue_size(&q), N / 4);
        CHECK(queue_is_valid(&q));
        while (q.n_pending > 0) {
            sim_queue_replace_first(&q, 2000.0, 0, 0, handler_a, NULL, 0);
            sim_queue_pop(&q, &f);
        }
        CHECK_INT_EQ(q.n_heap, 0); /* the cancelled entries left as they surfaced */
        CHECK(queue_is_valid(&q));
    }
    size_t grows = q.pool_grows;
    CHECK(q.cap >= N);
    CHECK(q.cap < 2 * N + 1024);
    sim_queue_fini(&q);
    CHECK(grows > 0);
}

/* ---- 1e6 random operations against a reference ----
 *
 * The reference is a binary heap of packed keys: quarter-seconds << 32 |
 * priority << 24 | push sequence, so integer order is (time, priority,
 * insertion) order. Cancelled entries are dropped lazily when they surface.
 */

#define RANDOM_OPS 1000000u
#define KEY(tq, prio, seq) ((uint64_t)(tq) << 32 | (uint64_t)(prio) << 24 | (seq))
#define KEY_TIME(k) ((double)((k) >> 32) * 0.25)
#define KEY_PRIO(k) ((unsigned)((k) >> 24) & 0xffu)
#define KEY_SEQ(k) ((k) & 0xffffffu)

struct ref {
    uint64_t *heap;
    size_t n;
};

static void ref_push(struct ref *r, uint64_t key)
{
    size_t i = r->n++;
    while (i > 0 && r->heap[(i - 1) / 2] > key) {
        r->heap[i] = r->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    r->heap[i] = key;
}

static void ref_pop(struct ref *r)
{
    uint64_t last = r->heap[--r->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= r->n)
            break;
        if (c + 1 < r->n && r->heap[c + 1] < r->heap[c])
            c++;
        if (last <= r->heap[c])
            break;
        r->heap[i] = r->heap[c];
        i = c;
    }
    if (r->n > 0)
        r->heap[i] = last;
}

struct random_state {
    struct ref ref;
    sim_event_id *ids;    /* by sequence */
    unsigned char *dead;  /* by sequence: popped or cancelled */
    uint64_t *live;       /* sequences still pending, unordered */
    uint32_t *live_pos;   /* by sequence: index in live */
    size_t n_live;
    uint64_t next_seq;
};

static void live_add(struct random_state *s, uint64_t seq)
{
    s->live_pos[seq] = (uint32_t)s->n_live;
    s->live[s->n_live++] = seq;
}

static void live_remove(struct random_state *s, uint64_t seq)
{
    uint32_t pos = s->live_pos[seq];
    uint64_t moved = s->live[--s->n_live];
    s->live[pos] = moved;
    s->live_pos[moved] = pos;
    s->dead[seq] = 1;
}

/* the reference's first live key, dropping cancelled ones */
static int ref_first(struct random_state *s, uint64_t *out)
{
    while (s->ref.n > 0) {
        if (!s->dead[KEY_SEQ(s->ref.heap[0])]) {
            *out = s->ref.heap[0];
            return 0;
        }
        ref_pop(&s->ref);
    }
    return -1;
}

static void test_random_against_reference(void)
{
    _Static_assert(RANDOM_OPS < (1u << 24), "sequences must fit the packed key");
    struct random_state s = {0};
    s.ref.heap = malloc(RANDOM_OPS * sizeof *s.ref.heap);
    s.ids = malloc(RANDOM_OPS * sizeof *s.ids);
    s.dead = calloc(RANDOM_OPS, 1);
    s.live = malloc(RANDOM_OPS * sizeof *s.live);
    s.live_pos = malloc(RANDOM_OPS * sizeof *s.live_pos);
    CHECK(s.ref.heap && s.ids && s.dead && s.live && s.live_pos);
    if (!(s.ref.heap && s.ids && s.dead && s.live && s.live_pos))
        return;

    sim_queue q;
    sim_queue_init(&q);
    uint64_t rng = 20240601;
    size_t n_pops = 0, n_empty = 0, n_cancels = 0, n_replaces = 0, max_size = 0;
    size_t mismatches = 0, size_mismatches = 0, invalid_heaps = 0;
    unsigned push_bias = 55; /* percent of operations that insert */

    for (unsigned op = 0; op < RANDOM_OPS && s.next_seq < RANDOM_OPS; op++) {
        /* drift between growing and shrinking phases so the size sweeps
         * from 0 to a few thousand and back */
        if (op % 50000 == 0)
            push_bias = (op / 50000) % 2 ? 35 : 55;
        uint64_t x = test_rand(&rng);
        unsigned r = (unsigned)(x % 100);
        /* few distinct times and priorities: ties are the common case */
        unsigned tq = (unsigned)((x >> 8) % 64);
        double t = tq * 0.25;
        unsigned prio = (unsigned)((x >> 20) % 4);
        if (prio == 3)
            prio = SIM_PRIORITY_MAX;

        if (r < push_bias) {
            uint64_t seq = s.next_seq++;
            s.ids[seq] = sim_queue_push(&q, t, prio, (unsigned)(seq & 0xffff), handler_a, NULL,
                                        seq);
            if (!s.ids[seq])
                mismatches++;
            ref_push(&s.ref, KEY(tq, prio, seq));
            live_add(&s, seq);
        } else if (r < push_bias + 5 && s.n_live > 0) {
            /* cancel a random pending event */
            uint64_t seq = s.live[(x >> 32) % s.n_live];
            if (sim_queue_cancel(&q, s.ids[seq]) != 1)
                mismatches++;
            live_remove(&s, seq);
            n_cancels++;
        } else if (r < push_bias + 10 && s.n_live > 0) {
            /* replace the head: the reference pops, then pushes */
            uint64_t head;
            if (ref_first(&s, &head) != 0) { /* cannot be: n_live > 0 */
                mismatches++;
                continue;
            }
            ref_pop(&s.ref);
            live_remove(&s, KEY_SEQ(head));
            uint64_t seq = s.next_seq++;
            s.ids[seq] = sim_queue_replace_first(&q, t, prio, (unsigned)(seq & 0xffff),
                                                 handler_a, NULL, seq);
            if (!s.ids[seq] || sim_queue_is_pending(&q, s.ids[KEY_SEQ(head)]))
                mismatches++;
            ref_push(&s.ref, KEY(tq, prio, seq));
            live_add(&s, seq);
            n_replaces++;
        } else {
            sim_fired f;
            uint64_t want;
            int have = ref_first(&s, &want) == 0;
            int got = sim_queue_pop(&q, &f) == 0;
            if (have != got) {
                mismatches++;
            } else if (!have) {
                n_empty++;
            } else {
                ref_pop(&s.ref);
                live_remove(&s, KEY_SEQ(want));
                if (f.data != KEY_SEQ(want) || f.time_s != KEY_TIME(want) ||
                    f.priority != KEY_PRIO(want) || f.kind != (KEY_SEQ(want) & 0xffff))
                    mismatches++;
                if (sim_queue_is_pending(&q, s.ids[KEY_SEQ(want)]))
                    mismatches++;
                n_pops++;
            }
        }
        if (sim_queue_size(&q) != s.n_live)
            size_mismatches++;
        if (s.n_live > max_size)
            max_size = s.n_live;
        if (op % 100000 == 99999 && !queue_is_valid(&q))
            invalid_heaps++;
    }

    /* drain: the rest must come out in sorted order */
    uint64_t want;
    sim_fired f;
    while (ref_first(&s, &want) == 0) {
        ref_pop(&s.ref);
        live_remove(&s, KEY_SEQ(want));
        if (sim_queue_pop(&q, &f) != 0 || f.data != KEY_SEQ(want))
            mismatches++;
    }
    CHECK_INT_EQ(sim_queue_pop(&q, &f), -1);

    CHECK_INT_EQ(mismatches, 0);
    CHECK_INT_EQ(size_mismatches, 0);
    CHECK_INT_EQ(invalid_heaps, 0);
    /* the mix really exercised every path */
    CHECK(n_pops > 100000);
    CHECK(n_cancels > 10000);
    CHECK(n_replaces > 10000);
    CHECK(n_empty > 0);
    CHECK(max_size > 1000);

    sim_queue_fini(&q);
    free(s.ref.heap);
    free(s.ids);
    free(s.dead);
    free(s.live);
    free(s.live_pos);
}

/* A full sort: push 5e4 keys with heavy duplication, pop all, compare with
 * qsort of (time, priority, seq). */
static void test_sort_against_qsort(void)
{
    enum { N = 50000 };
    struct ref_item *items = malloc(N * sizeof *items);
    CHECK(items != NULL);
    if (!items)
        return;
    sim_queue q;
    sim_queue_init(&q);
    uint64_t rng = 99;
    for (unsigned i = 0; i < N; i++) {
        uint64_t x = test_rand(&rng);
        items[i] = (struct ref_item){(double)(x % 100), (unsigned)((x >> 32) % 3), i};
        sim_queue_push(&q, items[i].time_s, items[i].priority, 0, handler_a, NULL, i);
    }
    qsort(items, N, sizeof *items, cmp_ref_item);
    size_t bad = 0;
    sim_fired f;
    for (unsigned i = 0; i < N; i++)
        if (sim_queue_pop(&q, &f) != 0 || f.data != items[i].seq)
            bad++;
    CHECK_INT_EQ(bad, 0);
    sim_queue_fini(&q);
    free(items);
}

int main(void)
{
    test_order_with_ties();
    test_fifo_for_equal_keys();
    test_cancel_in_the_middle();
    test_stale_ids();
    test_replace_first();
    test_pool_reuse();
    test_sort_against_qsort();
    test_random_against_reference();
    return check_report();
}
