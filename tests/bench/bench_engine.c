/* bench_engine.c - hold-model benchmark of the event engine.
 *
 * Hold model (Vaucher & Duval 1975): N events pending; each fired event
 * schedules its successor at now + Exp(1), so the queue size stays N. The
 * dcsim engine (handler call, digest, replace-first path) is compared with a
 * plain binary array heap doing pop-min then push, fed the same xoshiro256**
 * draws through gsl_ran_exponential, so both do the same RNG work and fire
 * the same sequence of times (checked). After one warm-up turn of the queue,
 * each side runs M events in 5 chunks interleaved with the other side and
 * its best chunk counts, so noise on a shared machine hurts both alike.
 * Prints one line per metric:
 *   bench_engine pending=N impl=dcsim|baseline events_per_s=R
 *   bench_engine pending=N ratio_baseline_over_dcsim=X
 * Exit status is 0 whatever the speed; non-zero only when something is
 * functionally wrong (events out of order, the two runs disagree).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>

#include "engine.h"
#include "rng.h"

#define BENCH_SEED 20240601u
#define DEFAULT_EVENTS 2000000u /* ~0.3-1 s per measurement on a slow core */
#define SMOKE_EVENTS 2000u
#define N_CHUNKS 5 /* measured in chunks, interleaved; the best chunk counts */

static double now_mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- dcsim ---- */

struct hold {
    gsl_rng *rng;
    uint64_t left;
    double last_s;
    uint64_t backwards;
};

static void hold_step(sim_engine *eng, void *ctx, uint64_t data)
{
    struct hold *h = ctx;
    double now = sim_now(eng);
    h->backwards += now < h->last_s;
    h->last_s = now;
    sim_schedule_in(eng, gsl_ran_exponential(h->rng, 1.0), 0, 1, hold_step, h, data);
    if (--h->left == 0)
        sim_stop(eng);
}

struct dcsim_run {
    sim_engine *eng;
    struct hold h;
    uint64_t n_fired;
    int ok;
};

static int dcsim_setup(struct dcsim_run *d, size_t n_pending)
{
    memset(d, 0, sizeof *d);
    d->eng = sim_engine_create();
    d->h.rng = sim_rng_stream_create(BENCH_SEED, SIM_ENTITY_JOB, 0, SIM_PURPOSE_SPEED);
    if (!d->eng || !d->h.rng)
        return -1;
    for (size_t i = 0; i < n_pending; i++)
        if (!sim_schedule_at(d->eng, gsl_ran_exponential(d->h.rng, 1.0), 0, 1, hold_step, &d->h,
                             i))
            return -1;
    d->ok = 1;
    return 0;
}

/* fire n events; returns the wall time taken */
static double dcsim_advance(struct dcsim_run *d, uint64_t n)
{
    if (!d->ok || n == 0)
        return 0.0;
    d->h.left = n;
    double t0 = now_mono_s();
    enum sim_run_status st = sim_run(d->eng, INFINITY);
    double t1 = now_mono_s();
    d->n_fired += n;
    if (st != SIM_RUN_STOPPED || sim_events_fired(d->eng) != d->n_fired || d->h.backwards) {
        fprintf(stderr, "bench_engine: dcsim run wrong: status %d, %llu fired, %llu events "
                "backwards, failure '%s'\n", (int)st,
                (unsigned long long)sim_events_fired(d->eng),
                (unsigned long long)d->h.backwards, sim_engine_failure(d->eng));
        d->ok = 0;
    }
    return t1 - t0;
}

static void dcsim_teardown(struct dcsim_run *d)
{
    gsl_rng_free(d->h.rng);
    sim_engine_destroy(d->eng);
}

/* ---- baseline: binary array heap, pop-min then push ---- */

struct entry {
    double time_s;
    uint64_t seq;
};

static inline int entry_before(const struct entry *a, const struct entry *b)
{
    return a->time_s < b->time_s || (a->time_s == b->time_s && a->seq < b->seq);
}

static inline void heap_push(struct entry *heap, size_t *n, struct entry e)
{
    size_t i = (*n)++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!entry_before(&e, &heap[parent]))
            break;
        heap[i] = heap[parent];
        i = parent;
    }
    heap[i] = e;
}

static inline struct entry heap_pop(struct entry *heap, size_t *n)
{
    struct entry top = heap[0];
    struct entry last = heap[--*n];
    size_t size = *n, i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= size)
            break;
        if (c + 1 < size && entry_before(&heap[c + 1], &heap[c]))
            c++;
        if (!entry_before(&heap[c], &last))
            break;
        heap[i] = heap[c];
        i = c;
    }
    if (size > 0)
        heap[i] = last;
    return top;
}

struct baseline_run {
    struct entry *heap;
    size_t n;
    uint64_t seq;
    gsl_rng *rng;
    double last_s;
    uint64_t backwards;
    int ok;
};

static int baseline_setup(struct baseline_run *b, size_t n_pending)
{
    memset(b, 0, sizeof *b);
    b->heap = malloc((n_pending + 1) * sizeof *b->heap);
    b->rng = sim_rng_stream_create(BENCH_SEED, SIM_ENTITY_JOB, 0, SIM_PURPOSE_SPEED);
    if (!b->heap || !b->rng)
        return -1;
    for (size_t i = 0; i < n_pending; i++)
        heap_push(b->heap, &b->n, (struct entry){gsl_ran_exponential(b->rng, 1.0), b->seq++});
    b->ok = 1;
    return 0;
}

static double baseline_advance(struct baseline_run *b, uint64_t n)
{
    if (!b->ok || n == 0)
        return 0.0;
    double last = b->last_s;
    uint64_t backwards = 0;
    double t0 = now_mono_s();
    for (uint64_t k = 0; k < n; k++) {
        struct entry e = heap_pop(b->heap, &b->n);
        backwards += e.time_s < last;
        last = e.time_s;
        heap_push(b->heap, &b->n,
                  (struct entry){e.time_s + gsl_ran_exponential(b->rng, 1.0), b->seq++});
    }
    double t1 = now_mono_s();
    b->last_s = last;
    b->backwards += backwards;
    if (b->backwards) {
        fprintf(stderr, "bench_engine: baseline fired %llu events backwards\n",
                (unsigned long long)b->backwards);
        b->ok = 0;
    }
    return t1 - t0;
}

static void baseline_teardown(struct baseline_run *b)
{
    gsl_rng_free(b->rng);
    free(b->heap);
}

/* One size: set both up, warm up, then measure in interleaved chunks and
 * keep each side's best chunk. Returns 0, or -1 when something is wrong. */
static int bench_size(size_t n_pending, uint64_t n_events)
{
    struct dcsim_run d;
    struct baseline_run b;
    int rc = 0;
    memset(&b, 0, sizeof b);
    if (dcsim_setup(&d, n_pending) != 0 || baseline_setup(&b, n_pending) != 0) {
        fprintf(stderr, "bench_engine: pending=%zu: setup failed (out of memory?)\n", n_pending);
        rc = -1;
        goto out;
    }
    /* one turn of the queue (bounded by the measured count) so both heaps
     * reach the hold model's steady shape */
    uint64_t n_warmup = n_pending < n_events ? n_pending : n_events;
    dcsim_advance(&d, n_warmup);
    baseline_advance(&b, n_warmup);

    uint64_t chunk = n_events / N_CHUNKS ? n_events / N_CHUNKS : 1;
    double best_d = 0, best_b = 0;
    for (int c = 0; c < N_CHUNKS; c++) {
        double td = dcsim_advance(&d, chunk);
        double tb = baseline_advance(&b, chunk);
        if (td > 0 && chunk / td > best_d)
            best_d = (double)chunk / td;
        if (tb > 0 && chunk / tb > best_b)
            best_b = (double)chunk / tb;
    }
    if (!d.ok || !b.ok || sim_pending(d.eng) != n_pending || b.n != n_pending) {
        fprintf(stderr, "bench_engine: pending=%zu: run failed (%zu and %zu pending after)\n",
                n_pending, sim_pending(d.eng), b.n);
        rc = -1;
        goto out;
    }
    /* same draws, same order: both fired exactly the same times */
    if (d.h.last_s != b.last_s) {
        fprintf(stderr, "bench_engine: pending=%zu: dcsim and baseline disagree (last event "
                "at %.17g vs %.17g)\n", n_pending, d.h.last_s, b.last_s);
        rc = -1;
        goto out;
    }
    printf("bench_engine pending=%zu impl=dcsim events_per_s=%.0f\n", n_pending, best_d);
    printf("bench_engine pending=%zu impl=baseline events_per_s=%.0f\n", n_pending, best_b);
    printf("bench_engine pending=%zu ratio_baseline_over_dcsim=%.2f\n", n_pending,
           best_b / best_d);
    fflush(stdout);
out:
    dcsim_teardown(&d);
    baseline_teardown(&b);
    return rc;
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_engine [--smoke] [--events=N] [--pending=N]\n"
                    "  --smoke      tiny runs at 1e3 and 1e5 (for ctest); the figures mean nothing\n"
                    "  --events=N   measured events per size and impl (default %u)\n"
                    "  --pending=N  one queue size instead of 1e3, 1e5 and 1e6\n",
            DEFAULT_EVENTS);
    return 2;
}

int main(int argc, char **argv)
{
    uint64_t n_events = DEFAULT_EVENTS;
    size_t only_pending = 0;
    int is_smoke = 0;
    for (int i = 1; i < argc; i++) {
        char *end;
        if (strcmp(argv[i], "--smoke") == 0) {
            n_events = SMOKE_EVENTS;
            is_smoke = 1;
        } else if (strncmp(argv[i], "--events=", 9) == 0) {
            unsigned long long v = strtoull(argv[i] + 9, &end, 10);
            if (argv[i][9] < '0' || argv[i][9] > '9' || *end || v == 0)
                return usage();
            n_events = v;
        } else if (strncmp(argv[i], "--pending=", 10) == 0) {
            unsigned long long v = strtoull(argv[i] + 10, &end, 10);
            if (argv[i][10] < '0' || argv[i][10] > '9' || *end || v == 0)
                return usage();
            only_pending = (size_t)v;
        } else {
            return usage();
        }
    }
    gsl_set_error_handler_off();

    static const size_t sizes[] = {1000, 100000, 1000000};
    /* the smoke run skips 1e6: filling it dominates under sanitizers */
    size_t n_sizes = is_smoke ? 2 : sizeof sizes / sizeof sizes[0];
    int failed = 0;
    if (only_pending)
        failed |= bench_size(only_pending, n_events) != 0;
    else
        for (size_t k = 0; k < n_sizes; k++)
            failed |= bench_size(sizes[k], n_events) != 0;
    return failed;
}
