/* test_schedule.c - pipeline schedules (models/schedule.h): Megatron-LM task
 * orders, the closed-form iteration times and bubbles of Narayanan et al.
 * 2021 (section 2.2), a hand-computed critical path with transfers, every
 * dependency and stage exclusivity on every task, stragglers, bad input,
 * and a timing print for a large interleaved case (not an assertion). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "schedule.h"

#define MAXPOS 256

/* An input with its own time arrays: per-stage times t_f, t_b split evenly
 * over the v chunks (Narayanan et al.: each chunk takes t_f / v); stage
 * `slow` (if < p) scaled by `slow_factor`; transfers x in both directions. */
typedef struct setup {
    sched_input in;
    double tf[MAXPOS], tb[MAXPOS], sf[MAXPOS], sb[MAXPOS];
} setup;

static void make(setup *su, int kind, unsigned p, unsigned v, unsigned m, double t_f,
                 double t_b, double x, unsigned slow, double slow_factor)
{
    memset(su, 0, sizeof *su);
    su->in = (sched_input){.kind = kind, .pp = p, .vpp = v, .microbatches = m,
                           .t_forward = su->tf, .t_backward = su->tb,
                           .t_send_forward = x > 0 ? su->sf : NULL,
                           .t_send_backward = x > 0 ? su->sb : NULL};
    for (unsigned c = 0; c < v; c++)
        for (unsigned s = 0; s < p; s++) {
            double f = s == slow ? slow_factor : 1.0;
            su->tf[c * p + s] = t_f / v * f;
            su->tb[c * p + s] = t_b / v * f;
            su->sf[c * p + s] = su->sb[c * p + s] = x;
        }
}

/* Everything that must hold for any valid result, checked on every task:
 * the count; each (position, micro-batch, direction) once; each stage's
 * tasks are its own, back to back or later (no overlap), each as long as
 * its input time says; each task starts exactly at max(stage free, inputs
 * arrived) - so every dependency is respected and no stage idles without
 * cause; and the summary arrays agree with the tasks. Returns failures. */
static int check_valid(const sched_input *in, const sched_result *r)
{
    int before = check_failures;
    unsigned p = in->pp, v = in->vpp, m = in->microbatches;
    size_t P = (size_t)p * v, n = 2 * (size_t)m * v;
    CHECK_INT_EQ(r->n_tasks, 2 * (size_t)m * v * p);
    if (r->n_tasks != n * p)
        return 1;
    double *fend = malloc(P * m * sizeof *fend), *bend = malloc(P * m * sizeof *bend);
    int *seen = calloc(2 * P * m, sizeof *seen);
    for (size_t k = 0; k < r->n_tasks; k++) {
        const sched_task *t = &r->tasks[k];
        CHECK(t->chunk < v && t->microbatch < m && (t->backward == 0 || t->backward == 1));
        size_t j = (size_t)t->chunk * p + t->stage;
        seen[(t->backward * P + j) * m + t->microbatch]++;
        (t->backward ? bend : fend)[j * m + t->microbatch] = t->end_s;
    }
    int dup = 0;
    for (size_t i = 0; i < 2 * P * m; i++)
        dup += seen[i] != 1;
    CHECK_INT_EQ(dup, 0);

    double iter = 0, bad_order = 0, bad_tight = 0, bad_len = 0;
    for (unsigned s = 0; s < p; s++) {
        double free_s = 0, busy = 0;
        for (size_t k = 0; k < n; k++) {
            const sched_task *t = &r->tasks[s * n + k];
            size_t j = (size_t)t->chunk * p + s, i = t->microbatch;
            CHECK_INT_EQ(t->stage, s);
            double ready = 0, len;
            if (!t->backward) {
                if (j > 0)
                    ready = fend[(j - 1) * m + i] + (in->t_send_forward ? in->t_send_forward[j - 1] : 0);
                len = in->t_forward[j];
            } else {
                ready = fend[j * m + i];
                if (j + 1 < P) {
                    double e = bend[(j + 1) * m + i] + (in->t_send_backward ? in->t_send_backward[j] : 0);
                    ready = e > ready ? e : ready;
                }
                len = in->t_backward[j];
            }
            bad_order += t->start_s < free_s || t->start_s < ready;
            bad_tight += t->start_s != (ready > free_s ? ready : free_s);
            bad_len += t->end_s != t->start_s + len;
            free_s = t->end_s;
            busy += t->end_s - t->start_s;
        }
        iter = free_s > iter ? free_s : iter;
        CHECK_REL(r->busy_s[s], busy, 1e-12);
        CHECK_NEAR(r->bubble_s[s], r->iteration_s - busy, 1e-12 * r->iteration_s);
    }
    CHECK(bad_order == 0);
    CHECK(bad_tight == 0);
    CHECK(bad_len == 0);
    CHECK(r->iteration_s == iter);

    /* summaries: last backward end and first forward start per position */
    double *fstart = malloc(P * m * sizeof *fstart);
    for (size_t k = 0; k < r->n_tasks; k++) {
        const sched_task *t = &r->tasks[k];
        if (!t->backward)
            fstart[((size_t)t->chunk * p + t->stage) * m + t->microbatch] = t->start_s;
    }
    int bad_summary = 0;
    for (size_t j = 0; j < P; j++) {
        double last_b = 0, first_f = INFINITY;
        for (unsigned i = 0; i < m; i++) {
            last_b = bend[j * m + i] > last_b ? bend[j * m + i] : last_b;
            first_f = fstart[j * m + i] < first_f ? fstart[j * m + i] : first_f;
        }
        bad_summary += r->chunk_backward_end_s[j] != last_b;
        bad_summary += r->first_forward_start_s[j] != first_f;
    }
    CHECK_INT_EQ(bad_summary, 0);
    free(fstart);
    free(fend);
    free(bend);
    free(seen);
    return check_failures - before;
}

static double run(const setup *su, sched_result *r)
{
    sim_error e;
    sim_error_clear(&e);
    int rc = sched_run(&su->in, r, &e);
    CHECK_INT_EQ(rc, 0);
    if (rc) { /* nothing below can be checked without the tasks */
        fprintf(stderr, "  sched_run: %s\n", e.msg);
        exit(check_report());
    }
    check_valid(&su->in, r);
    return r->iteration_s;
}

/* Megatron-LM's orders (megatron/core/pipeline_parallel/schedules.py),
 * written out. Each steady-state step runs its forward, then its backward.
 * 1F1B p = 4, m = 6: stage 0 warms up with 3 forwards, stage 3 with none.
 * Interleaved p = 4, v = 2, m = 8 (the shape of Narayanan et al. 2021,
 * Figure 4): stage 0 warms up with 2 (p - 1) + (v - 1) p = 10 forwards
 * (micro-batches 0-3 of chunk 0, 0-3 of chunk 1, 4-5 of chunk 0), then
 * forward 6 of chunk 0 and the backward of micro-batch 0 on chunk 1. */
static void test_orders(void)
{
    setup su;
    sched_result r;
    make(&su, SCHEDULE_1F1B, 4, 1, 6, 1, 2, 0, 99, 1);
    run(&su, &r);
    /* F = forward, B = backward, then the micro-batch */
    const char *want0 = "F0F1F2F3B0F4B1F5B2B3B4B5", *want3 = "F0B0F1B1F2B2F3B3F4B4F5B5";
    char got[64];
    for (unsigned s = 0; s < 4; s += 3) {
        size_t o = 0;
        for (size_t k = 0; k < 12; k++) {
            const sched_task *t = &r.tasks[s * 12 + k];
            o += (size_t)snprintf(got + o, sizeof got - o, "%c%u", t->backward ? 'B' : 'F', t->microbatch);
        }
        CHECK_STR_EQ(got, s == 0 ? want0 : want3);
    }
    sched_result_free(&r);

    make(&su, SCHEDULE_INTERLEAVED, 4, 2, 8, 1, 2, 0, 99, 1);
    run(&su, &r);
    /* chunk.micro-batch, 0-based */
    const char *want = "F0.0F0.1F0.2F0.3F1.0F1.1F1.2F1.3F0.4F0.5F0.6B1.0F0.7B1.1F1.4";
    size_t o = 0;
    for (size_t k = 0; k < 15; k++) {
        const sched_task *t = &r.tasks[k];
        o += (size_t)snprintf(got + o, sizeof got - o, "%c%u.%u", t->backward ? 'B' : 'F', t->chunk,
                              t->microbatch);
    }
    CHECK_STR_EQ(got, want);
    /* stage 3 (last): 2 (p - 4) + 4 = 4 warm-up forwards, then 1F1B */
    o = 0;
    for (size_t k = 0; k < 8; k++) {
        const sched_task *t = &r.tasks[3 * 32 + k];
        o += (size_t)snprintf(got + o, sizeof got - o, "%c%u.%u", t->backward ? 'B' : 'F', t->chunk,
                              t->microbatch);
    }
    CHECK_STR_EQ(got, "F0.0F0.1F0.2F0.3F1.0B1.0F1.1B1.1");
    sched_result_free(&r);

    make(&su, SCHEDULE_GPIPE, 3, 1, 4, 1, 2, 0, 99, 1);
    run(&su, &r);
    for (unsigned s = 0; s < 3; s++)
        for (size_t k = 0; k < 8; k++) {
            const sched_task *t = &r.tasks[s * 8 + k];
            CHECK(t->backward == (k >= 4) && t->microbatch == k % 4);
        }
    sched_result_free(&r);
}

/* Narayanan et al. 2021, section 2.2: equal stages, free transfers. 1F1B
 * and GPipe take (m + p - 1)(t_f + t_b), every stage idles (p - 1)(t_f + t_b);
 * interleaved with v chunks of t_f / v, t_b / v takes m (t_f + t_b) +
 * (p - 1)(t_f + t_b) / v. t_f != t_b on purpose. */
static void test_closed_forms(void)
{
    const double t_f = 1.3e-3, t_b = 2.9e-3, t = t_f + t_b;
    static const unsigned pm[][2] = {{1, 1}, {1, 5}, {2, 1}, {2, 2}, {2, 7}, {3, 7}, {4, 2},
                                     {4, 4}, {4, 8}, {8, 3}, {8, 8}, {8, 32}, {16, 5}, {16, 64}};
    setup su;
    sched_result r;
    for (size_t c = 0; c < sizeof pm / sizeof pm[0]; c++) {
        unsigned p = pm[c][0], m = pm[c][1];
        int kinds[2] = {SCHEDULE_1F1B, SCHEDULE_GPIPE};
        for (int k = 0; k < 2; k++) {
            make(&su, kinds[k], p, 1, m, t_f, t_b, 0, 99, 1);
            double it = run(&su, &r), want = (m + p - 1) * t;
            CHECK_REL(it, want, 1e-12);
            for (unsigned s = 0; s < p; s++)
                CHECK_NEAR(r.bubble_s[s], (p - 1) * t, 1e-12 * want);
            sched_result_free(&r);
        }
    }
    static const unsigned pvm[][3] = {{1, 2, 1}, {1, 3, 4}, {2, 2, 2}, {2, 2, 4}, {2, 3, 6},
                                      {4, 2, 4}, {4, 2, 8}, {4, 3, 4}, {4, 4, 16}, {8, 2, 8},
                                      {8, 2, 16}, {8, 4, 24}, {16, 8, 128}};
    for (size_t c = 0; c < sizeof pvm / sizeof pvm[0]; c++) {
        unsigned p = pvm[c][0], v = pvm[c][1], m = pvm[c][2];
        make(&su, SCHEDULE_INTERLEAVED, p, v, m, t_f, t_b, 0, 99, 1);
        double it = run(&su, &r), want = m * t + (p - 1) * t / v;
        CHECK_REL(it, want, 1e-12);
        for (unsigned s = 0; s < p; s++)
            CHECK_NEAR(r.bubble_s[s], (p - 1) * t / v, 1e-12 * want);
        sched_result_free(&r);
    }
    /* p = 1: no pipeline, no bubble, whatever the schedule */
    int kinds[3] = {SCHEDULE_1F1B, SCHEDULE_GPIPE, SCHEDULE_INTERLEAVED};
    for (int k = 0; k < 3; k++) {
        make(&su, kinds[k], 1, k == 2 ? 4 : 1, 6, t_f, t_b, 0, 99, 1);
        CHECK_REL(run(&su, &r), 6 * t, 1e-12);
        CHECK_NEAR(r.bubble_s[0], 0, 1e-12 * 6 * t);
        sched_result_free(&r);
    }
}

/* With a transfer x each way, p = 2, m = 2, 1F1B. Stage 0 runs F0 F1 B0 B1
 * (one warm-up), stage 1 runs F0 B0 F1 B1:
 *   s0 F0 [0, tf]          s0 F1 [tf, 2tf]
 *   s1 F0 [tf + x, 2tf + x]          (needs s0 F0 + x)
 *   s1 B0 [2tf + x, 2tf + tb + x]    (last position: its own forward only)
 *   s1 F1 [2tf + tb + x, 3tf + tb + x] (s0 F1 arrived at 2tf + x; stage busy)
 *   s1 B1 [3tf + tb + x, 3tf + 2tb + x]
 *   s0 B0 [2tf + tb + 2x, 2tf + 2tb + 2x] (needs s1 B0 + x)
 *   s0 B1 [3tf + 2tb + 2x, 3tf + 3tb + 2x] (needs s1 B1 + x)
 * Iteration 3(tf + tb) + 2x: the critical path s0 F0, x, s1 F0 B0 F1 B1, x,
 * s0 B1. GPipe reaches the same end by another path (s1 F0 F1 B0 B1). */
static void test_transfers(void)
{
    const double tf = 1.0e-3, tb = 2.5e-3, x = 0.4e-3;
    setup su;
    sched_result r;
    make(&su, SCHEDULE_1F1B, 2, 1, 2, tf, tb, x, 99, 1);
    CHECK_REL(run(&su, &r), 3 * (tf + tb) + 2 * x, 1e-12);
    /* stage 0 task 2 is B0: waited for stage 1's B0 plus the transfer */
    CHECK(r.tasks[2].backward == 1 && r.tasks[2].microbatch == 0);
    CHECK_REL(r.tasks[2].start_s, 2 * tf + tb + 2 * x, 1e-12);
    CHECK_REL(r.tasks[6].start_s, 2 * tf + tb + x, 1e-12); /* stage 1 F1 */
    CHECK_REL(r.first_forward_start_s[1], tf + x, 1e-12);
    CHECK_REL(r.chunk_backward_end_s[1], 3 * tf + 2 * tb + x, 1e-12);
    CHECK_REL(r.chunk_backward_end_s[0], 3 * tf + 3 * tb + 2 * x, 1e-12);
    sched_result_free(&r);
    make(&su, SCHEDULE_GPIPE, 2, 1, 2, tf, tb, x, 99, 1);
    CHECK_REL(run(&su, &r), 3 * (tf + tb) + 2 * x, 1e-12);
    sched_result_free(&r);

    /* more transfer time is never faster, and any is slower than none */
    int kinds[3] = {SCHEDULE_1F1B, SCHEDULE_GPIPE, SCHEDULE_INTERLEAVED};
    for (int k = 0; k < 3; k++) {
        double prev = -1;
        double xs[4] = {0, 1e-5, 1e-4, 1e-3};
        for (int i = 0; i < 4; i++) {
            make(&su, kinds[k], 4, k == 2 ? 2 : 1, 8, tf, tb, xs[i], 99, 1);
            double it = run(&su, &r);
            CHECK(it > prev);
            prev = it;
            sched_result_free(&r);
        }
    }
}

/* One slow stage lengthens the iteration, monotonically in the slowdown. */
static void test_straggler(void)
{
    const double factors[4] = {1.0, 1.05, 1.1, 1.2};
    int kinds[3] = {SCHEDULE_1F1B, SCHEDULE_GPIPE, SCHEDULE_INTERLEAVED};
    setup su;
    sched_result r;
    for (int k = 0; k < 3; k++)
        for (unsigned slow = 0; slow < 4; slow += 2) {
            double prev = -1, base = 0;
            for (int i = 0; i < 4; i++) {
                make(&su, kinds[k], 4, k == 2 ? 2 : 1, 8, 1e-3, 2e-3, 1e-5, slow, factors[i]);
                double it = run(&su, &r);
                if (i == 0)
                    base = it;
                CHECK(it > prev);
                /* no worse than slowing every stage and transfer by the factor */
                CHECK(it <= base * factors[i] * (1 + 1e-12));
                prev = it;
                sched_result_free(&r);
            }
        }
}

/* Every order runs to the end (no deadlock) and passes check_valid across
 * many shapes, with uneven per-chunk times and transfers. */
static void test_sweep_shapes(void)
{
    setup su;
    sched_result r;
    int bad = 0, n = 0;
    for (unsigned p = 1; p <= 8; p++)
        for (unsigned m = 1; m <= 3 * p + 1; m++)
            for (int kind = 0; kind < 3; kind++)
                for (unsigned v = 2; v <= (kind == SCHEDULE_INTERLEAVED ? 4u : 2u); v++) {
                    unsigned vv = kind == SCHEDULE_INTERLEAVED ? v : 1;
                    if (kind == SCHEDULE_INTERLEAVED && m % p)
                        continue;
                    make(&su, kind, p, vv, m, 1e-3, 2e-3, 3e-5, 99, 1);
                    for (unsigned j = 0; j < p * vv; j++) { /* uneven, deterministic */
                        su.tf[j] *= 1 + 0.1 * (j % 3);
                        su.tb[j] *= 1 + 0.07 * (j % 5);
                        su.sf[j] *= 1 + (j % 2);
                    }
                    sim_error e;
                    sim_error_clear(&e);
                    int fails = check_failures;
                    if (sched_run(&su.in, &r, &e) != 0) {
                        fprintf(stderr, "kind %d p %u v %u m %u: %s\n", kind, p, vv, m, e.msg);
                        bad++;
                        continue;
                    }
                    check_valid(&su.in, &r);
                    bad += check_failures != fails;
                    n++;
                    sched_result_free(&r);
                }
    CHECK_INT_EQ(bad, 0);
    CHECK(n > 300);
}

/* Uneven chunks (per-(chunk, stage) times, as the step tier gives an
 * uneven interleaved pipeline: Llama 3's lighter first chunk of stage 0 and
 * last chunk of the last stage). The schedule is a max-plus system of its
 * task times, so: scaling every time by a scales the iteration by a; making
 * one chunk faster never makes the iteration longer; it lies between the
 * busiest stage's work and the even schedule with every chunk at the
 * largest time (m v + (p - 1)) (t_f + t_b) (Narayanan et al. 2021, 2.2). A
 * Llama-3-like pipeline (chunk (0, 0) and (v - 1, p - 1) without layers)
 * ends no later than the even one and saves at most those chunks' work. */
static void test_uneven_chunks(void)
{
    static const unsigned pv[][2] = {{2, 2}, {4, 2}, {4, 3}, {8, 4}};
    unsigned long long x = 12345;
    setup su, sc;
    sched_result r, r2;
    for (size_t c = 0; c < sizeof pv / sizeof pv[0]; c++) {
        unsigned p = pv[c][0], v = pv[c][1], m = 2 * p, n = p * v;
        make(&su, SCHEDULE_INTERLEAVED, p, v, m, 1, 2, 0, 99, 1);
        double fmaxv = 0, bmaxv = 0;
        for (unsigned j = 0; j < n; j++) { /* times in [0.5, 1.5) ms, a fixed LCG */
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            su.tf[j] = 1e-3 * (0.5 + (double)(x >> 11) / 9007199254740992.0);
            su.tb[j] = 2 * su.tf[j];
            fmaxv = fmax(fmaxv, su.tf[j]);
            bmaxv = fmax(bmaxv, su.tb[j]);
        }
        double it = run(&su, &r), busiest = 0;
        for (unsigned s = 0; s < p; s++)
            busiest = fmax(busiest, r.busy_s[s]);
        CHECK(it >= busiest * (1 - 1e-12));
        CHECK(it <= (m * v + p - 1) * (fmaxv + bmaxv) * (1 + 1e-12));
        sched_result_free(&r);
        sc = su;
        sc.in.t_forward = sc.tf;
        sc.in.t_backward = sc.tb;
        for (unsigned j = 0; j < n; j++) {
            sc.tf[j] *= 2.5;
            sc.tb[j] *= 2.5;
        }
        CHECK_REL(run(&sc, &r2), 2.5 * it, 1e-12);
        sched_result_free(&r2);
        for (unsigned j = 0; j < n; j++) {
            sc = su;
            sc.in.t_forward = sc.tf;
            sc.in.t_backward = sc.tb;
            sc.tf[j] /= 2;
            sc.tb[j] /= 2;
            CHECK(run(&sc, &r2) <= it * (1 + 1e-12));
            sched_result_free(&r2);
        }
    }
    /* Llama-3-like: p = 4, v = 2, m = 8; one layer per chunk, t per layer */
    const double t_f = 1e-3, t_b = 2e-3;
    make(&su, SCHEDULE_INTERLEAVED, 4, 2, 8, 2 * t_f, 2 * t_b, 0, 99, 1);
    double even = run(&su, &r);
    sched_result_free(&r);
    su.tf[0] = su.tb[0] = su.tf[7] = su.tb[7] = 0;
    double light = run(&su, &r);
    CHECK(light <= even);
    CHECK(light >= even - 8 * (t_f + t_b) * 2 * (1 + 1e-12));
    CHECK_REL(r.busy_s[0], 8 * (t_f + t_b), 1e-12);
    sched_result_free(&r);
}

static void test_deterministic(void)
{
    setup su;
    sched_result a, b;
    make(&su, SCHEDULE_INTERLEAVED, 8, 3, 16, 1e-3, 2e-3, 1e-5, 5, 1.1);
    run(&su, &a);
    run(&su, &b);
    CHECK(a.n_tasks == b.n_tasks && !memcmp(a.tasks, b.tasks, a.n_tasks * sizeof *a.tasks));
    sched_result_free(&a);
    sched_result_free(&b);
}

static void expect_fail(const sched_input *in, const char *needle)
{
    sim_error e;
    sim_error_clear(&e);
    sched_result r = {.iteration_s = 42.0};
    CHECK_INT_EQ(sched_run(in, &r, &e), SIM_ERR_INPUT);
    CHECK_INT_EQ(e.code, SIM_ERR_INPUT);
    CHECK_CONTAINS(e.msg, needle);
    CHECK(r.iteration_s == 42.0 && r.tasks == NULL); /* untouched on failure */
}

static void test_bad_input(void)
{
    setup su;
    make(&su, SCHEDULE_INTERLEAVED, 4, 2, 6, 1e-3, 2e-3, 0, 99, 1);
    expect_fail(&su.in, "multiple of the pipeline stages");
    make(&su, SCHEDULE_INTERLEAVED, 4, 1, 8, 1e-3, 2e-3, 0, 99, 1);
    expect_fail(&su.in, "2 or more virtual chunks");
    make(&su, SCHEDULE_1F1B, 4, 2, 8, 1e-3, 2e-3, 0, 99, 1);
    expect_fail(&su.in, "one chunk per stage");
    make(&su, SCHEDULE_1F1B, 0, 1, 8, 1e-3, 2e-3, 0, 99, 1);
    expect_fail(&su.in, "must all be >= 1");
    make(&su, SCHEDULE_GPIPE, 4, 0, 8, 1e-3, 2e-3, 0, 99, 1);
    expect_fail(&su.in, "must all be >= 1");
    make(&su, SCHEDULE_1F1B, 4, 1, 0, 1e-3, 2e-3, 0, 99, 1);
    expect_fail(&su.in, "must all be >= 1");
    make(&su, 7, 4, 1, 8, 1e-3, 2e-3, 0, 99, 1);
    expect_fail(&su.in, "unknown pipeline schedule 7");
    make(&su, SCHEDULE_1F1B, 4, 1, 8, 1e-3, 2e-3, 0, 99, 1);
    su.tb[3] = -1e-3;
    expect_fail(&su.in, "finite numbers of seconds >= 0");
    su.tb[3] = NAN;
    expect_fail(&su.in, "finite numbers of seconds >= 0");
    su.tb[3] = 1e-3;
    su.in.t_forward = NULL;
    expect_fail(&su.in, "required");
    make(&su, SCHEDULE_1F1B, 4, 1, 8, 1e-3, 2e-3, 1e-5, 99, 1);
    su.sb[2] = -1;
    expect_fail(&su.in, "transfer times");
    su.sb[2] = INFINITY;
    expect_fail(&su.in, "transfer times");
    /* no result record is the caller's bug, not bad input */
    CHECK_INT_EQ(sched_run(&su.in, NULL, NULL), SIM_ERR_INTERNAL);
}

/* Not an assertion: the cost of a large interleaved schedule. */
static void bench(void)
{
    setup su;
    sched_result r;
    make(&su, SCHEDULE_INTERLEAVED, 16, 8, 128, 1e-3, 2e-3, 1e-5, 99, 1);
    double best = INFINITY;
    for (int rep = 0; rep < 20; rep++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        int rc = sched_run(&su.in, &r, NULL);
        clock_gettime(CLOCK_MONOTONIC, &b);
        double dt = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
        best = dt < best ? dt : best;
        if (rc == 0)
            sched_result_free(&r);
    }
    printf("bench sched_run kind=interleaved p=16 v=8 m=128 tasks=%u best_s=%.3e\n",
           2 * 16 * 8 * 128, best);
}

int main(void)
{
    test_orders();
    test_closed_forms();
    test_transfers();
    test_straggler();
    test_sweep_shapes();
    test_uneven_chunks();
    test_deterministic();
    test_bad_input();
    bench();
    return check_report();
}
