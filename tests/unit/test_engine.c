/* test_engine.c - the event loop (sim/engine/engine.h).
 *
 * Order of firing, now, failures, cancellation from handlers, stop, horizon,
 * poll, digest, and the hold model without pool growth. The replace-first
 * fast path is checked against a plain pop-then-push simulation driven by
 * the same branching rules.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "check.h"
#include "engine.h"
#include "rng.h"

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* ---- a log of fired events ---- */

#define LOG_CAP 64

struct log {
    size_t n;
    double now_s[LOG_CAP];
    uint64_t data[LOG_CAP];
};

static void record(sim_engine *eng, void *ctx, uint64_t data)
{
    struct log *log = ctx;
    if (log->n < LOG_CAP) {
        log->now_s[log->n] = sim_now(eng);
        log->data[log->n] = data;
    }
    log->n++;
}

static void test_fire_order_and_now(void)
{
    static const struct {
        double time_s;
        unsigned priority;
    } in[] = {
        {3.0, 0}, {1.0, 5}, {2.0, 1}, {1.0, 0}, {1.0, 5}, {2.0, 0}, {1.0, 255}, {0.5, 9},
        {1.0, 0}, {2.0, 1}, {3.0, 0}, {1.0, 5}, {0.0, 255}, {2.0, 0}, {3.0, 0}, {1.0, 0},
    };
    static const unsigned expect[] = {12, 7, 3, 8, 15, 1, 4, 11, 6, 5, 13, 2, 9, 0, 10, 14};
    enum { N = sizeof in / sizeof in[0] };

    sim_engine *eng = sim_engine_create();
    CHECK(eng != NULL);
    CHECK(sim_now(eng) == 0.0);
    CHECK_STR_EQ(sim_engine_failure(eng), "");
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_EMPTY); /* nothing to do */

    struct log log = {0};
    for (unsigned i = 0; i < N; i++)
        CHECK(sim_schedule_at(eng, in[i].time_s, in[i].priority, i, record, &log, i) != 0);
    CHECK_INT_EQ(sim_pending(eng), N);
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_EMPTY);
    CHECK_INT_EQ(log.n, N);
    for (unsigned k = 0; k < N && k < log.n; k++) {
        CHECK_INT_EQ(log.data[k], expect[k]);
        CHECK(log.now_s[k] == in[expect[k]].time_s); /* now is the event's time */
    }
    CHECK(sim_now(eng) == 3.0);
    CHECK_INT_EQ(sim_events_fired(eng), N);
    CHECK_INT_EQ(sim_pending(eng), 0);
    CHECK_STR_EQ(sim_engine_failure(eng), "");
    sim_engine_destroy(eng);
    sim_engine_destroy(NULL);
}

/* ---- failures ---- */

static void schedule_in_past(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)data;
    sim_event_id *got = ctx;
    *got = sim_schedule_at(eng, sim_now(eng) - 1.0, 0, 0, record, NULL, 0);
}

static void test_failures(void)
{
    /* scheduling before now from a handler */
    sim_engine *eng = sim_engine_create();
    sim_event_id got = 123;
    struct log log = {0};
    sim_schedule_at(eng, 5.0, 0, 0, schedule_in_past, &got, 0);
    sim_schedule_at(eng, 6.0, 0, 0, record, &log, 1);
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_FAILED);
    CHECK_INT_EQ(got, 0);
    CHECK_CONTAINS(sim_engine_failure(eng), "scheduled in the past");
    CHECK_CONTAINS(sim_engine_failure(eng), "time 4 s, now 5 s");
    CHECK_INT_EQ(log.n, 0); /* the run stopped at the failing handler */
    CHECK(sim_now(eng) == 5.0);
    CHECK_INT_EQ(sim_pending(eng), 1);
    /* the failure is sticky */
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_FAILED);
    CHECK_INT_EQ(log.n, 0);
    sim_engine_destroy(eng);

    /* before the run, at a negative time */
    eng = sim_engine_create();
    CHECK_INT_EQ(sim_schedule_at(eng, -1.0, 0, 0, record, &log, 0), 0);
    CHECK_INT_EQ(sim_pending(eng), 0);
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_FAILED);
    CHECK_CONTAINS(sim_engine_failure(eng), "in the past");
    sim_engine_destroy(eng);

    /* NaN time */
    eng = sim_engine_create();
    CHECK_INT_EQ(sim_schedule_at(eng, NAN, 0, 0, record, &log, 0), 0);
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_FAILED);
    CHECK(sim_engine_failure(eng)[0] != '\0');
    sim_engine_destroy(eng);

    /* negative and NaN delays */
    eng = sim_engine_create();
    CHECK_INT_EQ(sim_schedule_in(eng, -0.5, 0, 0, record, &log, 0), 0);
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_FAILED);
    CHECK_CONTAINS(sim_engine_failure(eng), "negative delay");
    sim_engine_destroy(eng);
    eng = sim_engine_create();
    CHECK_INT_EQ(sim_schedule_in(eng, NAN, 0, 0, record, &log, 0), 0);
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_FAILED);
    sim_engine_destroy(eng);

    /* priority out of range; the first failure wins */
    eng = sim_engine_create();
    CHECK(sim_schedule_in(eng, 0.0, SIM_PRIORITY_MAX, 0, record, &log, 0) != 0);
    CHECK_INT_EQ(sim_schedule_in(eng, 1.0, SIM_PRIORITY_MAX + 1, 0, record, &log, 0), 0);
    CHECK_INT_EQ(sim_schedule_at(eng, -1.0, 0, 0, record, &log, 0), 0);
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_FAILED);
    CHECK_CONTAINS(sim_engine_failure(eng), "priority above 255");
    sim_engine_destroy(eng);

    /* kinds are 16 bits in the record and the digest: larger ones are refused */
    eng = sim_engine_create();
    CHECK(sim_schedule_in(eng, 0.0, 0, SIM_KIND_MAX, record, &log, 0) != 0);
    CHECK_INT_EQ(sim_schedule_in(eng, 1.0, 0, SIM_KIND_MAX + 1, record, &log, 0), 0);
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_FAILED);
    CHECK_CONTAINS(sim_engine_failure(eng), "kind above 65535");
    sim_engine_destroy(eng);

    /* zero delay and time == now are fine */
    eng = sim_engine_create();
    log.n = 0;
    CHECK(sim_schedule_in(eng, 0.0, 0, 0, record, &log, 0) != 0);
    CHECK(sim_schedule_at(eng, 0.0, 0, 0, record, &log, 1) != 0);
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_EMPTY);
    CHECK_INT_EQ(log.n, 2);
    sim_engine_destroy(eng);
}

/* ---- cancellation from handlers ---- */

struct cancel_ctx {
    sim_event_id victim;      /* another pending event */
    sim_event_id self;        /* the firing event's own id */
    sim_event_id scheduled;   /* what the handler scheduled */
    int cancel_victim, cancel_victim_again, cancel_self_before, cancel_self_after;
    int cancel_scheduled;
    size_t pending_at_start, pending_after_first, pending_after_second;
    struct log *log;
};

static void cancelling_handler(sim_engine *eng, void *vctx, uint64_t data)
{
    struct cancel_ctx *c = vctx;
    record(eng, c->log, data);
    c->pending_at_start = sim_pending(eng);
    c->cancel_self_before = sim_cancel(eng, c->self);   /* firing: cannot cancel */
    c->cancel_victim = sim_cancel(eng, c->victim);
    c->cancel_victim_again = sim_cancel(eng, c->victim);
    /* the first schedule takes the replace-first path */
    sim_schedule_in(eng, 5.0, 0, 0, record, c->log, 100);
    c->pending_after_first = sim_pending(eng);
    c->cancel_self_after = sim_cancel(eng, c->self);    /* fired: stale */
    /* the second one is pushed; cancel it again at once */
    c->scheduled = sim_schedule_in(eng, 0.0, 0, 0, record, c->log, 101);
    c->pending_after_second = sim_pending(eng);
    c->cancel_scheduled = sim_cancel(eng, c->scheduled);
}

static void test_cancel_from_handler(void)
{
    sim_engine *eng = sim_engine_create();
    struct log log = {0};
    struct cancel_ctx c = {0};
    c.log = &log;
    c.self = sim_schedule_at(eng, 1.0, 0, 0, cancelling_handler, &c, 1);
    c.victim = sim_schedule_at(eng, 2.0, 0, 0, record, &log, 2);
    sim_schedule_at(eng, 3.0, 0, 0, record, &log, 3);
    sim_schedule_at(eng, 1.0, 1, 0, record, &log, 4); /* same time, fires after */
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_EMPTY);

    CHECK_INT_EQ(c.pending_at_start, 3); /* the firing event is not pending */
    CHECK_INT_EQ(c.cancel_self_before, 0);
    CHECK_INT_EQ(c.cancel_victim, 1);
    CHECK_INT_EQ(c.cancel_victim_again, 0);
    CHECK_INT_EQ(c.pending_after_first, 3);
    CHECK_INT_EQ(c.cancel_self_after, 0);
    CHECK_INT_EQ(c.pending_after_second, 4);
    CHECK_INT_EQ(c.cancel_scheduled, 1);

    static const uint64_t expect[] = {1, 4, 3, 100};
    static const double expect_t[] = {1.0, 1.0, 3.0, 6.0};
    CHECK_INT_EQ(log.n, 4);
    for (size_t k = 0; k < 4 && k < log.n; k++) {
        CHECK_INT_EQ(log.data[k], expect[k]);
        CHECK(log.now_s[k] == expect_t[k]);
    }
    CHECK_INT_EQ(sim_cancel(eng, 0), 0);
    CHECK_INT_EQ(sim_cancel(eng, c.victim), 0);
    sim_engine_destroy(eng);
}

/* A handler that schedules nothing and cancels itself: fires exactly once. */
static void self_cancel_only(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)data;
    struct cancel_ctx *c = ctx;
    c->cancel_self_before = sim_cancel(eng, c->self);
    c->pending_at_start = sim_pending(eng);
    record(eng, c->log, 7);
}

static void test_cancel_self_without_schedule(void)
{
    sim_engine *eng = sim_engine_create();
    struct log log = {0};
    struct cancel_ctx c = {0};
    c.log = &log;
    c.self = sim_schedule_at(eng, 1.0, 0, 0, self_cancel_only, &c, 0);
    sim_schedule_at(eng, 2.0, 0, 0, record, &log, 8);
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_EMPTY);
    CHECK_INT_EQ(c.cancel_self_before, 0);
    CHECK_INT_EQ(c.pending_at_start, 1);
    CHECK_INT_EQ(log.n, 2);
    CHECK_INT_EQ(log.data[0], 7);
    CHECK_INT_EQ(log.data[1], 8);
    CHECK_INT_EQ(sim_events_fired(eng), 2);
    sim_engine_destroy(eng);
}

/* ---- the replace-first fast path against a plain simulation ----
 *
 * Every event has a uid given in scheduling order, which is also the
 * engine's insertion order. Its handler derives everything from hash(uid):
 * 0-3 children at now + {0, 0.5, 1, 1.5} with priority 0-2, and sometimes a
 * cancel of event uid-5 (before or after scheduling its children). The
 * reference runs the same rules with an explicit pop-then-push binary heap
 * keyed by (time, priority, uid).
 */

#define BR_MAX_EVENTS 120000u
#define BR_SEEDS 64u

struct br_key {
    double time_s;
    unsigned priority;
    uint64_t uid;
};

static int br_before(const struct br_key *a, const struct br_key *b)
{
    if (a->time_s != b->time_s)
        return a->time_s < b->time_s;
    if (a->priority != b->priority)
        return a->priority < b->priority;
    return a->uid < b->uid;
}

struct br_world {
    /* shared */
    uint64_t next_uid;
    uint64_t *fired_uid; /* log */
    double *fired_t;
    size_t n_fired;
    size_t pending_mismatch;
    int *cancel_result;  /* by uid of the cancelling event, -1 when none */
    /* engine side */
    sim_engine *eng;
    sim_event_id *ids;
    /* reference side */
    struct br_key *heap;
    size_t heap_n;
    unsigned char *state; /* by uid: 0 pending, 1 fired or cancelled */
    size_t ref_pending;
};

static unsigned br_children(uint64_t uid, uint64_t next_uid)
{
    if (next_uid + 3 >= BR_MAX_EVENTS)
        return 0;
    return (unsigned)(mix64(uid * 7 + 1) % 4);
}

static void br_handler(sim_engine *eng, void *ctx, uint64_t uid);

static int br_engine_cancel(struct br_world *w, uint64_t uid)
{
    return sim_cancel(w->eng, w->ids[uid]);
}

static void br_engine_schedule(struct br_world *w, double delay_s, unsigned priority)
{
    uint64_t uid = w->next_uid++;
    w->ids[uid] = sim_schedule_in(w->eng, delay_s, priority, (unsigned)(uid % 5), br_handler, w,
                                  uid);
}

static void br_handler(sim_engine *eng, void *ctx, uint64_t uid)
{
    struct br_world *w = ctx;
    w->fired_uid[w->n_fired] = uid;
    w->fired_t[w->n_fired] = sim_now(eng);
    w->n_fired++;
    uint64_t h = mix64(uid);
    unsigned n = br_children(uid, w->next_uid);
    int cancels = uid >= 5 && h % 7 == 0;
    int cancel_first = (h >> 60) & 1;
    size_t expect_pending = sim_pending(eng);
    if (cancels && cancel_first) {
        w->cancel_result[uid] = br_engine_cancel(w, uid - 5);
        expect_pending -= (size_t)w->cancel_result[uid];
    }
    for (unsigned j = 0; j < n; j++) {
        br_engine_schedule(w, (double)((h >> (8 + 4 * j)) % 4) * 0.5,
                           (unsigned)((h >> (24 + 4 * j)) % 3));
        expect_pending++;
        if (sim_pending(eng) != expect_pending)
            w->pending_mismatch++;
    }
    if (cancels && !cancel_first)
        w->cancel_result[uid] = br_engine_cancel(w, uid - 5);
}

static void ref_push(struct br_world *w, struct br_key k)
{
    size_t i = w->heap_n++;
    while (i > 0 && br_before(&k, &w->heap[(i - 1) / 2])) {
        w->heap[i] = w->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    w->heap[i] = k;
    w->ref_pending++;
}

static struct br_key ref_pop_raw(struct br_world *w)
{
    struct br_key top = w->heap[0], last = w->heap[--w->heap_n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= w->heap_n)
            break;
        if (c + 1 < w->heap_n && br_before(&w->heap[c + 1], &w->heap[c]))
            c++;
        if (!br_before(&w->heap[c], &last))
            break;
        w->heap[i] = w->heap[c];
        i = c;
    }
    if (w->heap_n)
        w->heap[i] = last;
    return top;
}

static int ref_cancel(struct br_world *w, uint64_t uid)
{
    if (w->state[uid])
        return 0;
    w->state[uid] = 1; /* lazily dropped from the heap */
    w->ref_pending--;
    return 1;
}

static void ref_schedule(struct br_world *w, double now_s, double delay_s, unsigned priority)
{
    uint64_t uid = w->next_uid++;
    ref_push(w, (struct br_key){now_s + delay_s, priority, uid});
}

/* the plain simulation: pop, then run the same rules, pushing children */
static void ref_run(struct br_world *w)
{
    while (w->heap_n > 0) {
        struct br_key k = ref_pop_raw(w);
        if (w->state[k.uid])
            continue; /* cancelled */
        w->state[k.uid] = 1;
        w->ref_pending--;
        w->fired_uid[w->n_fired] = k.uid;
        w->fired_t[w->n_fired] = k.time_s;
        w->n_fired++;
        uint64_t h = mix64(k.uid);
        unsigned n = br_children(k.uid, w->next_uid);
        int cancels = k.uid >= 5 && h % 7 == 0;
        int cancel_first = (h >> 60) & 1;
        if (cancels && cancel_first)
            w->cancel_result[k.uid] = ref_cancel(w, k.uid - 5);
        for (unsigned j = 0; j < n; j++)
            ref_schedule(w, k.time_s, (double)((h >> (8 + 4 * j)) % 4) * 0.5,
                         (unsigned)((h >> (24 + 4 * j)) % 3));
        if (cancels && !cancel_first)
            w->cancel_result[k.uid] = ref_cancel(w, k.uid - 5);
    }
}

static int br_world_init(struct br_world *w)
{
    memset(w, 0, sizeof *w);
    w->fired_uid = malloc(BR_MAX_EVENTS * sizeof *w->fired_uid);
    w->fired_t = malloc(BR_MAX_EVENTS * sizeof *w->fired_t);
    w->cancel_result = malloc(BR_MAX_EVENTS * sizeof *w->cancel_result);
    w->ids = malloc(BR_MAX_EVENTS * sizeof *w->ids);
    w->heap = malloc(BR_MAX_EVENTS * sizeof *w->heap);
    w->state = calloc(BR_MAX_EVENTS, 1);
    if (!w->fired_uid || !w->fired_t || !w->cancel_result || !w->ids || !w->heap || !w->state)
        return -1;
    for (size_t i = 0; i < BR_MAX_EVENTS; i++)
        w->cancel_result[i] = -1;
    return 0;
}

static void br_world_fini(struct br_world *w)
{
    free(w->fired_uid);
    free(w->fired_t);
    free(w->cancel_result);
    free(w->ids);
    free(w->heap);
    free(w->state);
}

static void test_against_plain_simulation(void)
{
    struct br_world a, b;
    int ok = br_world_init(&a) == 0 && br_world_init(&b) == 0;
    CHECK(ok);
    if (!ok)
        return;

    a.eng = sim_engine_create();
    for (unsigned i = 0; i < BR_SEEDS; i++) {
        double t = (double)(i % 8) * 0.5;
        br_engine_schedule(&a, t, i % 3);
        ref_schedule(&b, 0.0, t, i % 3);
    }
    CHECK_INT_EQ(sim_run(a.eng, INFINITY), SIM_RUN_EMPTY);
    ref_run(&b);

    CHECK(a.n_fired > 30000); /* the rules produce a big enough run */
    CHECK_INT_EQ(a.n_fired, b.n_fired);
    CHECK_INT_EQ(a.next_uid, b.next_uid);
    CHECK_INT_EQ(sim_events_fired(a.eng), a.n_fired);
    CHECK_INT_EQ(a.pending_mismatch, 0);
    size_t first_diff = SIZE_MAX, cancel_diff = 0, n_cancel_hits = 0;
    for (size_t k = 0; k < a.n_fired && k < b.n_fired; k++)
        if (first_diff == SIZE_MAX &&
            (a.fired_uid[k] != b.fired_uid[k] || a.fired_t[k] != b.fired_t[k]))
            first_diff = k;
    for (size_t u = 0; u < a.next_uid; u++) {
        if (a.cancel_result[u] != b.cancel_result[u])
            cancel_diff++;
        n_cancel_hits += a.cancel_result[u] == 1;
    }
    CHECK(first_diff == SIZE_MAX);
    if (first_diff != SIZE_MAX)
        fprintf(stderr, "  first difference at fired event %zu\n", first_diff);
    CHECK_INT_EQ(cancel_diff, 0);
    CHECK(n_cancel_hits > 100); /* cancels of pending events really happened */
    sim_engine_destroy(a.eng);
    br_world_fini(&a);
    br_world_fini(&b);
}

/* ---- stop, horizon, poll ---- */

static void stopping(sim_engine *eng, void *ctx, uint64_t data)
{
    record(eng, ctx, data);
    sim_stop(eng);
}

static void test_stop(void)
{
    sim_engine *eng = sim_engine_create();
    struct log log = {0};
    for (unsigned i = 1; i <= 5; i++)
        sim_schedule_at(eng, (double)i, 0, 0, i == 3 ? stopping : record, &log, i);
    sim_stop(eng); /* a stop before the run does not carry into it */
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_STOPPED);
    CHECK_INT_EQ(log.n, 3);
    CHECK(sim_now(eng) == 3.0);
    CHECK_INT_EQ(sim_pending(eng), 2);
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_EMPTY); /* resume */
    CHECK_INT_EQ(log.n, 5);
    CHECK_INT_EQ(log.data[3], 4);
    CHECK(sim_now(eng) == 5.0);
    sim_engine_destroy(eng);
}

static void test_until_and_resume(void)
{
    sim_engine *eng = sim_engine_create();
    struct log log = {0};
    for (unsigned i = 10; i >= 1; i--)
        sim_schedule_at(eng, (double)i, 0, 0, record, &log, i);
    CHECK_INT_EQ(sim_run(eng, 5.5), SIM_RUN_UNTIL);
    CHECK_INT_EQ(log.n, 5);
    CHECK(sim_now(eng) == 5.0); /* not moved to the horizon */
    CHECK_INT_EQ(sim_pending(eng), 5);
    CHECK_INT_EQ(sim_run(eng, 5.5), SIM_RUN_UNTIL); /* nothing more */
    CHECK_INT_EQ(log.n, 5);
    CHECK_INT_EQ(sim_run(eng, 6.0), SIM_RUN_UNTIL); /* an event at the horizon fires */
    CHECK_INT_EQ(log.n, 6);
    CHECK(sim_now(eng) == 6.0);
    /* scheduling between runs: at now is fine and fires before 7 */
    CHECK(sim_schedule_at(eng, 6.0, 0, 0, record, &log, 60) != 0);
    CHECK(sim_schedule_in(eng, 0.5, 0, 0, record, &log, 65) != 0);
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_EMPTY);
    CHECK_INT_EQ(log.n, 12);
    static const uint64_t expect[] = {1, 2, 3, 4, 5, 6, 60, 65, 7, 8, 9, 10};
    for (size_t k = 0; k < 12; k++)
        CHECK_INT_EQ(log.data[k], expect[k]);
    CHECK(sim_now(eng) == 10.0);
    CHECK_STR_EQ(sim_engine_failure(eng), "");
    sim_engine_destroy(eng);

    /* an event in the past of a resumed run is still refused */
    eng = sim_engine_create();
    sim_schedule_at(eng, 2.0, 0, 0, record, &log, 0);
    sim_schedule_at(eng, 4.0, 0, 0, record, &log, 0);
    CHECK_INT_EQ(sim_run(eng, 3.0), SIM_RUN_UNTIL);
    CHECK_INT_EQ(sim_schedule_at(eng, 1.5, 0, 0, record, &log, 0), 0);
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_FAILED);
    sim_engine_destroy(eng);
}

struct poll_ctx {
    int calls;
    int stop_at_call;
    uint64_t fired_at_call[16];
};

static int poll_fn(sim_engine *eng, void *ctx)
{
    struct poll_ctx *p = ctx;
    if (p->calls < 16)
        p->fired_at_call[p->calls] = sim_events_fired(eng);
    p->calls++;
    return p->calls == p->stop_at_call;
}

static void test_poll(void)
{
    sim_engine *eng = sim_engine_create();
    struct log log = {0};
    struct poll_ctx p = {0, 4, {0}};
    for (unsigned i = 1; i <= 20; i++)
        sim_schedule_at(eng, (double)i, 0, 0, record, &log, i);
    sim_engine_set_poll(eng, poll_fn, &p, 3);
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_POLLED_STOP);
    CHECK_INT_EQ(p.calls, 4);
    CHECK_INT_EQ(log.n, 12);
    CHECK_INT_EQ(sim_events_fired(eng), 12);
    CHECK(sim_now(eng) == 12.0);
    for (int k = 0; k < 4; k++)
        CHECK_INT_EQ(p.fired_at_call[k], 3 * (k + 1));
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_EMPTY); /* resume; no 8th-call stop */
    CHECK_INT_EQ(p.calls, 6);                           /* at 15 and 18 */
    CHECK_INT_EQ(log.n, 20);
    sim_engine_destroy(eng);

    /* every = 0 means every event; NULL turns polling off */
    eng = sim_engine_create();
    struct poll_ctx p2 = {0, 0, {0}};
    for (unsigned i = 1; i <= 5; i++)
        sim_schedule_at(eng, (double)i, 0, 0, record, &log, i);
    sim_engine_set_poll(eng, poll_fn, &p2, 0);
    CHECK_INT_EQ(sim_run(eng, 2.0), SIM_RUN_UNTIL);
    CHECK_INT_EQ(p2.calls, 2);
    sim_engine_set_poll(eng, NULL, NULL, 1);
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_EMPTY);
    CHECK_INT_EQ(p2.calls, 2);
    sim_engine_destroy(eng);
}

/* ---- digest ---- */

enum perturb { PERTURB_NONE, PERTURB_TIME, PERTURB_KIND, PERTURB_PAYLOAD };

struct digest_ctx {
    enum perturb perturb;
    int n_left;
};

#define DIGEST_VICTIM 37u /* the event whose time, kind or payload changes */

static void digest_step(sim_engine *eng, void *ctx, uint64_t data)
{
    struct digest_ctx *d = ctx;
    if (d->n_left-- <= 0)
        return;
    uint64_t next = (data & 0xffffffffu) + 8;
    double delay = 0.25 * (double)(1 + next % 3);
    unsigned kind = (unsigned)(next % 4);
    uint64_t payload = next;
    if (next == DIGEST_VICTIM) {
        if (d->perturb == PERTURB_TIME)
            delay += 1.0 / 1024;
        if (d->perturb == PERTURB_KIND)
            kind += 1;
        if (d->perturb == PERTURB_PAYLOAD)
            payload |= 1ull << 40; /* handlers read the low bits only */
    }
    sim_schedule_in(eng, delay, 0, kind, digest_step, d, payload);
}

/* handler address differs, behaviour is the same */
static void digest_step_twin(sim_engine *eng, void *ctx, uint64_t data)
{
    digest_step(eng, ctx, data);
}

static uint64_t digest_run(enum perturb perturb, sim_handler_fn first_fn, uint64_t *fired)
{
    sim_engine *eng = sim_engine_create();
    struct digest_ctx d = {perturb, 200};
    uint64_t initial = sim_digest(eng);
    for (unsigned i = 0; i < 8; i++)
        sim_schedule_at(eng, 0.1 * i, 0, i % 4, i == 0 ? first_fn : digest_step, &d, i);
    sim_run(eng, INFINITY);
    uint64_t digest = sim_digest(eng);
    *fired = sim_events_fired(eng);
    if (digest == initial)
        digest = 0; /* would make every comparison below meaningless */
    sim_engine_destroy(eng);
    return digest;
}

static void test_digest(void)
{
    sim_engine *eng = sim_engine_create();
    sim_engine *eng2 = sim_engine_create();
    CHECK_INT_EQ(sim_digest(eng), sim_digest(eng2)); /* a fixed initial value */
    sim_engine_destroy(eng);
    sim_engine_destroy(eng2);

    uint64_t n1, n2, n3, n4, n5, n6;
    uint64_t d1 = digest_run(PERTURB_NONE, digest_step, &n1);
    uint64_t d2 = digest_run(PERTURB_NONE, digest_step, &n2);
    uint64_t d3 = digest_run(PERTURB_NONE, digest_step_twin, &n3);
    uint64_t dt = digest_run(PERTURB_TIME, digest_step, &n4);
    uint64_t dk = digest_run(PERTURB_KIND, digest_step, &n5);
    uint64_t dp = digest_run(PERTURB_PAYLOAD, digest_step, &n6);
    CHECK(d1 != 0);
    CHECK(d1 == d2);
    CHECK(d1 == d3); /* kinds enter the digest, handler addresses do not */
    CHECK(dt != d1);
    CHECK(dk != d1);
    CHECK(dp != d1);
    CHECK(dt != dk && dt != dp && dk != dp);
    /* same number of events each time: only the perturbed field differs */
    CHECK_INT_EQ(n1, 208);
    CHECK_INT_EQ(n2, n1);
    CHECK_INT_EQ(n4, n1);
    CHECK_INT_EQ(n5, n1);
    CHECK_INT_EQ(n6, n1);
    CHECK_INT_EQ(n3, n1);
}

/* ---- hold model: constant pending count, no pool growth ---- */

#define HOLD_PENDING 100000u
#define HOLD_EVENTS 200000u

struct hold_ctx {
    gsl_rng *rng;
    uint64_t left;
    double last_now_s;
    size_t backwards;
    sim_event_id side;     /* an extra event pushed and cancelled now and then */
    uint64_t side_cancels;
};

static void hold_side(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)eng, (void)ctx, (void)data;
}

static void hold_step(sim_engine *eng, void *vctx, uint64_t data)
{
    struct hold_ctx *h = vctx;
    if (sim_now(eng) < h->last_now_s)
        h->backwards++;
    h->last_now_s = sim_now(eng);
    sim_schedule_in(eng, gsl_ran_exponential(h->rng, 1.0), 0, 1, hold_step, h, data);
    if ((data + h->left) % 16 == 0) {
        h->side_cancels += (uint64_t)sim_cancel(eng, h->side);
        h->side = sim_schedule_in(eng, 2.0, 3, 2, hold_side, h, 0);
    }
    if (--h->left == 0)
        sim_stop(eng);
}

static void test_hold_model(void)
{
    sim_engine *eng = sim_engine_create();
    struct hold_ctx h = {0};
    h.rng = sim_rng_stream_create(7, SIM_ENTITY_JOB, 0, SIM_PURPOSE_SPEED);
    CHECK(h.rng != NULL);
    if (!h.rng)
        return;
    for (unsigned i = 0; i < HOLD_PENDING; i++)
        sim_schedule_at(eng, gsl_ran_exponential(h.rng, 1.0), 0, 1, hold_step, &h, i);
    /* warm-up: one full turn of the queue */
    h.left = HOLD_PENDING;
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_STOPPED);
    size_t grows = sim_engine_pool_grows(eng);
    size_t pending = sim_pending(eng);
    CHECK(grows > 0);
    CHECK(pending >= HOLD_PENDING);

    h.left = HOLD_EVENTS;
    uint64_t fired_before = sim_events_fired(eng);
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_STOPPED);
    CHECK(sim_events_fired(eng) - fired_before >= HOLD_EVENTS);
    CHECK_INT_EQ(sim_engine_pool_grows(eng), grows); /* no malloc per event */
    CHECK(sim_pending(eng) >= HOLD_PENDING && sim_pending(eng) <= HOLD_PENDING + 1);
    CHECK_INT_EQ(h.backwards, 0);
    CHECK(h.side_cancels > 1000);
    gsl_rng_free(h.rng);
    sim_engine_destroy(eng);
}

int main(void)
{
    test_fire_order_and_now();
    test_failures();
    test_cancel_from_handler();
    test_cancel_self_without_schedule();
    test_against_plain_simulation();
    test_stop();
    test_until_and_resume();
    test_poll();
    test_digest();
    test_hold_model();
    return check_report();
}
