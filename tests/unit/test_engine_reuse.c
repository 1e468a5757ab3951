/* test_engine_reuse.c - what the campaign's workspaces rest on: an engine
 * reset with sim_engine_reset runs a model exactly as a new engine does
 * (same events, times, digest) without growing its pool again, whatever it
 * held before; a stream slot of a sim_rng_block reseeded for a key draws
 * exactly what sim_rng_stream_create(key) draws, however it was used before.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "check.h"
#include "engine.h"
#include "rng.h"

/* ---- engine reset ---- */

#define MODEL_PENDING 3000u
#define MODEL_EVENTS 20000u

/* A hold model with cancellations: each event schedules its successor at
 * an exponential delay rounded up to 1/16 s (many events share a time, so
 * priority and insertion order decide) and now and then replaces a side
 * event. */
struct model {
    gsl_rng *rng;
    uint64_t left;
    sim_event_id side;
    uint64_t cancels;
    uint64_t trace; /* hash of (now, payload) of every fired event */
};

static void side(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)eng, (void)ctx, (void)data;
}

static void step(sim_engine *eng, void *ctx, uint64_t data)
{
    struct model *m = ctx;
    uint64_t bits;
    double now = sim_now(eng);
    memcpy(&bits, &now, sizeof bits);
    m->trace = (m->trace ^ bits ^ (data << 1)) * 0x100000001b3ull;
    double delay = ceil(gsl_ran_exponential(m->rng, 1.0) * 16) / 16;
    sim_schedule_in(eng, delay, data % 3, 1, step, m, data);
    if ((data + m->left) % 8 == 0) {
        m->cancels += (uint64_t)sim_cancel(eng, m->side);
        m->side = sim_schedule_in(eng, 0.5, 2, 2, side, m, 0);
    }
    if (--m->left == 0)
        sim_stop(eng);
}

struct outcome {
    uint64_t digest, fired, trace, cancels;
    double now_s;
};

static struct outcome run_model(sim_engine *eng, uint64_t seed)
{
    struct model m = {0};
    m.rng = sim_rng_stream_create(seed, SIM_ENTITY_JOB, 0, SIM_PURPOSE_SPEED);
    m.left = MODEL_EVENTS;
    for (unsigned i = 0; i < MODEL_PENDING; i++)
        sim_schedule_at(eng, gsl_ran_exponential(m.rng, 1.0), i % 3, 1, step, &m, i);
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_STOPPED);
    struct outcome o = {sim_digest(eng), sim_events_fired(eng), m.trace, m.cancels,
                        sim_now(eng)};
    gsl_rng_free(m.rng);
    return o;
}

static int same_outcome(struct outcome a, struct outcome b)
{
    return a.digest == b.digest && a.fired == b.fired && a.trace == b.trace &&
           a.cancels == b.cancels && a.now_s == b.now_s;
}

static void test_reset_is_new(void)
{
    sim_engine *fresh = sim_engine_create();
    struct outcome want = run_model(fresh, 1);
    uint64_t initial_digest;
    {
        sim_engine *e = sim_engine_create();
        initial_digest = sim_digest(e);
        sim_engine_destroy(e);
    }
    CHECK(want.cancels > 100);

    /* a used engine: another model left pending, a stale id, a failure */
    sim_engine *eng = sim_engine_create();
    struct outcome other = run_model(eng, 2);
    CHECK(!same_outcome(other, want));
    CHECK(sim_pending(eng) >= MODEL_PENDING);
    sim_event_id old = sim_schedule_in(eng, 1.0, 0, 3, side, NULL, 0);
    CHECK(old != 0);
    sim_schedule_at(eng, -1.0, 0, 3, side, NULL, 0); /* in the past: the engine fails */
    CHECK_INT_EQ(sim_run(eng, INFINITY), SIM_RUN_FAILED);
    size_t grows = sim_engine_pool_grows(eng);

    sim_engine_reset(eng);
    CHECK_INT_EQ(sim_pending(eng), 0);
    CHECK_INT_EQ(sim_events_fired(eng), 0);
    CHECK(sim_now(eng) == 0);
    CHECK(sim_digest(eng) == initial_digest);
    CHECK_STR_EQ(sim_engine_failure(eng), "");
    CHECK_INT_EQ(sim_cancel(eng, old), 0); /* ids from before are stale */
    struct outcome got = run_model(eng, 1);
    CHECK(same_outcome(got, want));
    CHECK_INT_EQ(sim_engine_pool_grows(eng), grows); /* the pool was kept */

    /* and again, reset with the model's events pending */
    sim_engine_reset(eng);
    got = run_model(eng, 1);
    CHECK(same_outcome(got, want));
    CHECK_INT_EQ(sim_engine_pool_grows(eng), grows);
    sim_engine_destroy(fresh);
    sim_engine_destroy(eng);
}

/* ---- stream blocks ---- */

#define N_DRAWS 64

static int same_as_created(gsl_rng *slot, uint64_t seed, uint32_t kind, uint64_t id,
                           uint32_t purpose)
{
    gsl_rng *ref = sim_rng_stream_create(seed, kind, id, purpose);
    if (!ref)
        return 0;
    int same = 1;
    for (int i = 0; i < N_DRAWS; i++)
        same &= gsl_rng_get(slot) == gsl_rng_get(ref);
    same &= gsl_ran_exponential(slot, 3.0) == gsl_ran_exponential(ref, 3.0);
    gsl_rng_free(ref);
    return same;
}

static void test_block_slots(void)
{
    sim_rng_block b;
    sim_rng_block_init(&b);
    CHECK_INT_EQ(b.cap, 0);
    CHECK_INT_EQ(sim_rng_block_reserve(&b, 100), 0);
    CHECK_INT_EQ(b.cap, 100);
    CHECK_STR_EQ(gsl_rng_name(&b.rngs[0]), "xoshiro256**");
    unsigned bad = 0;
    for (uint64_t i = 0; i < 100; i++) {
        sim_rng_stream_reseed(&b.rngs[i], 42, SIM_ENTITY_GPU, i, SIM_PURPOSE_FAILURE);
        bad += !same_as_created(&b.rngs[i], 42, SIM_ENTITY_GPU, i, SIM_PURPOSE_FAILURE);
    }
    CHECK_INT_EQ(bad, 0);
    /* a slot drawn from and reseeded for another key, then back: a fresh
     * stream each time, nothing of its past */
    for (int k = 0; k < 3; k++) {
        uint64_t seed = k == 1 ? 7 : 42;
        sim_rng_stream_reseed(&b.rngs[5], seed, SIM_ENTITY_NODE, 5, SIM_PURPOSE_SPEED);
        CHECK(same_as_created(&b.rngs[5], seed, SIM_ENTITY_NODE, 5, SIM_PURPOSE_SPEED));
    }
    /* smaller requests keep the block; larger ones grow it, every slot usable */
    gsl_rng *before = b.rngs;
    CHECK_INT_EQ(sim_rng_block_reserve(&b, 50), 0);
    CHECK(b.rngs == before && b.cap == 100);
    CHECK_INT_EQ(sim_rng_block_reserve(&b, 1000), 0);
    CHECK_INT_EQ(b.cap, 1000);
    bad = 0;
    for (uint64_t i = 0; i < 1000; i += 37) {
        sim_rng_stream_reseed(&b.rngs[i], 9, SIM_ENTITY_RACK, i, SIM_PURPOSE_REPAIR);
        bad += !same_as_created(&b.rngs[i], 9, SIM_ENTITY_RACK, i, SIM_PURPOSE_REPAIR);
    }
    CHECK_INT_EQ(bad, 0);
    sim_rng_block_fini(&b);
    CHECK(b.rngs == NULL && b.cap == 0);
    sim_rng_block_fini(&b); /* twice is harmless */
}

int main(void)
{
    test_reset_is_new();
    test_block_slots();
    return check_report();
}
