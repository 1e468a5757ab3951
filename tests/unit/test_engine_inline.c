/* test_engine_inline.c - sim_fire_inline (sim/engine/engine.h): a model with
 * its own event set fires its next event from inside a handler when the
 * engine would fire it next anyway.
 *
 * A "chain" model keeps a list of (time, priority, kind, data) events and
 * feeds the engine one pump event at a time; its pump fires the next event
 * inline when sim_fire_inline allows, else schedules it. Run against the
 * same chain with every event scheduled on the engine (the reference), with
 * and without foreign events, a poll and a horizon: the same firing order,
 * times, digest and fired count. And the refusals one by one: outside a
 * run, an event due before or at the time of a pending one, past the
 * horizon, at a poll point, after sim_stop.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "engine.h"

#define N_EV 40u

typedef struct chain {
    double t[N_EV];
    unsigned prio[N_EV];
    uint32_t next;        /* the next event to fire */
    int use_inline;       /* 0: every event on the engine */
    uint32_t inlined;     /* events fired inline */
    double fired_at[N_EV + 64];
    uint64_t fired_data[N_EV + 64];
    uint32_t n_fired;
    uint64_t polls;
} chain;

static void log_fire(chain *c, sim_engine *eng, uint64_t data)
{
    if (c->n_fired < N_EV + 64) {
        c->fired_at[c->n_fired] = sim_now(eng);
        c->fired_data[c->n_fired] = data;
    }
    c->n_fired++;
}

static void on_foreign(sim_engine *eng, void *ctx, uint64_t data)
{
    log_fire(ctx, eng, data);
}

/* the chain's events: times non-decreasing, some equal, priorities 0-2 */
static void chain_init(chain *c, int use_inline)
{
    memset(c, 0, sizeof *c);
    c->use_inline = use_inline;
    for (uint32_t i = 0; i < N_EV; i++) {
        c->t[i] = 1e-6 * (double)(i / 3) + (i % 3 == 2 ? 3e-7 : 0);
        c->prio[i] = i % 3;
    }
}

static void on_pump(sim_engine *eng, void *ctx, uint64_t data);

static void arm(sim_engine *eng, chain *c)
{
    if (c->next < N_EV)
        CHECK(sim_schedule_at(eng, c->t[c->next], c->prio[c->next], 300, on_pump, c,
                              c->next) != 0);
}

static void on_pump(sim_engine *eng, void *ctx, uint64_t data)
{
    chain *c = ctx;
    for (;;) {
        log_fire(c, eng, data);
        c->next++;
        if (c->next == N_EV || !c->use_inline ||
            !sim_fire_inline(eng, c->t[c->next], c->prio[c->next], 300, c->next))
            break;
        data = c->next;
        c->inlined++;
    }
    arm(eng, c);
}

static int on_poll(sim_engine *eng, void *ctx)
{
    (void)eng;
    ((chain *)ctx)->polls++;
    return 0;
}

typedef struct outcome {
    uint64_t digest, fired;
    chain c;
} outcome;

/* mixed: foreign events at 2.5e-6 k (some equal to chain times) and a
 * poll every 5; horizon: stop at 7e-6 s and resume */
static void run(int use_inline, int mixed, int horizon, outcome *o)
{
    sim_engine *eng = sim_engine_create();
    chain_init(&o->c, use_inline);
    arm(eng, &o->c);
    if (mixed) {
        for (uint32_t k = 0; k < 6; k++)
            CHECK(sim_schedule_at(eng, 2.5e-6 * k, 1, 301, on_foreign, &o->c, 1000 + k) != 0);
        sim_engine_set_poll(eng, on_poll, &o->c, 5);
    }
    if (horizon) {
        CHECK_INT_EQ(sim_run(eng, 7e-6), SIM_RUN_UNTIL);
        CHECK(sim_now(eng) <= 7e-6);
    }
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_EMPTY);
    o->digest = sim_digest(eng);
    o->fired = sim_events_fired(eng);
    sim_engine_destroy(eng);
}

static void test_against_engine(void)
{
    for (int mixed = 0; mixed < 2; mixed++)
        for (int horizon = 0; horizon < 2; horizon++) {
            outcome a, b;
            run(1, mixed, horizon, &a);
            run(0, mixed, horizon, &b);
            CHECK(a.digest == b.digest && a.fired == b.fired);
            CHECK(a.c.n_fired == b.c.n_fired && a.c.polls == b.c.polls);
            CHECK(memcmp(a.c.fired_at, b.c.fired_at, sizeof a.c.fired_at) == 0);
            CHECK(memcmp(a.c.fired_data, b.c.fired_data, sizeof a.c.fired_data) == 0);
            CHECK(a.c.inlined > 0 && b.c.inlined == 0);
            if (!mixed && !horizon)
                CHECK_INT_EQ(a.c.inlined, N_EV - 1); /* alone: one engine event */
        }
}

/* ---- refusals, one by one ---- */

typedef struct probe {
    int rc[4];
    double now_after;
} probe;

static void on_probe(sim_engine *eng, void *ctx, uint64_t data)
{
    probe *p = ctx;
    double now = sim_now(eng);
    if (data == 0) { /* a foreign event pending at now + 1e-6 */
        p->rc[0] = sim_fire_inline(eng, now + 2e-6, 0, 300, 7); /* after it */
        p->rc[1] = sim_fire_inline(eng, now + 1e-6, 0, 300, 7); /* at its time */
        p->rc[2] = sim_fire_inline(eng, now - 1e-9, 0, 300, 7); /* in the past */
        p->rc[3] = sim_fire_inline(eng, now + 5e-7, 300, 300, 7); /* priority > 255 */
        p->now_after = sim_now(eng);
    } else if (data == 1) { /* beyond the horizon (2e-6) */
        p->rc[0] = sim_fire_inline(eng, 3e-6, 0, 300, 7);
        p->rc[1] = sim_fire_inline(eng, 2e-6, 0, 300, 7); /* at it: fires */
    } else if (data == 2) { /* after sim_stop */
        sim_stop(eng);
        p->rc[0] = sim_fire_inline(eng, now, 0, 300, 7);
    }
}

static int poll_never(sim_engine *eng, void *ctx)
{
    (void)eng;
    (void)ctx;
    return 0;
}

static void test_refusals(void)
{
    sim_engine *eng = sim_engine_create();
    CHECK_INT_EQ(sim_fire_inline(eng, 1.0, 0, 1, 0), 0); /* not in a run */
    probe p = {{-1, -1, -1, -1}, 0};
    CHECK(sim_schedule_at(eng, 1e-6, 0, 1, on_probe, &p, 0) != 0);
    CHECK(sim_schedule_at(eng, 2e-6, 0, 2, on_probe, &p, 9) != 0);
    uint64_t fired0 = sim_events_fired(eng);
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_EMPTY);
    CHECK(p.rc[0] == 0 && p.rc[1] == 0 && p.rc[2] == 0 && p.rc[3] == 0);
    CHECK(p.now_after == 1e-6);
    CHECK(sim_events_fired(eng) == fired0 + 2);

    sim_engine_reset(eng);
    probe q = {{-1, -1, -1, -1}, 0};
    CHECK(sim_schedule_at(eng, 1e-6, 0, 1, on_probe, &q, 1) != 0);
    CHECK_INT_EQ(sim_run(eng, 2e-6), SIM_RUN_EMPTY);
    CHECK(q.rc[0] == 0 && q.rc[1] == 1); /* 3e-6 is past the horizon, 2e-6 is not */
    CHECK(sim_now(eng) == 2e-6 && sim_events_fired(eng) == 2);

    sim_engine_reset(eng);
    probe r = {{-1, -1, -1, -1}, 0};
    CHECK(sim_schedule_at(eng, 1e-6, 0, 1, on_probe, &r, 2) != 0);
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_STOPPED);
    CHECK_INT_EQ(r.rc[0], 0);

    sim_engine_reset(eng); /* at a poll point (every event): refused */
    sim_engine_set_poll(eng, poll_never, NULL, 1);
    probe s = {{-1, -1, -1, -1}, 0};
    CHECK(sim_schedule_at(eng, 1e-6, 0, 1, on_probe, &s, 1) != 0);
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_EMPTY);
    CHECK(s.rc[0] == 0 && s.rc[1] == 0);
    sim_engine_destroy(eng);
}

int main(void)
{
    test_against_engine();
    test_refusals();
    return check_report();
}
