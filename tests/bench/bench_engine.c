/* bench_engine.c - hold-model benchmark of the event engine.
 *
 * Hold model (Vaucher & Duval 1975): N events pending; each fired event
 * schedules its successor at now + Exp(1), so the queue size stays N. The
 * dcsim engine (handler call, digest, replace-first path) is compared with a
 * raw 4-ary array heap of 16-byte (time, sequence) entries -- no payload, no
 * handler, no cancellation -- that replaces its head and sifts it down with
 * the engine's own tricks (line-aligned child groups, branch-free selection
 * on the times, grandchild prefetch). Both are fed the same xoshiro256**
 * draws through gsl_ran_exponential, so they do the same RNG work and fire
 * the same sequence of times (checked). After one warm-up turn of the queue,
 * each side runs M events in 20 chunks interleaved with the other side and
 * its best chunk counts; chunks are timed in thread CPU time. So the load of
 * a shared machine hurts both alike.
 * Prints one line per metric:
 *   bench_engine pending=N impl=dcsim|baseline events_per_s=R
 *   bench_engine pending=N ratio_baseline_over_dcsim=X
 *   bench_engine pending=N bytes_per_pending=B   (the queue's allocations / N)
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
#define DEFAULT_EVENTS 4000000u /* ~1-2 s per measurement on a slow core */
#define SMOKE_EVENTS 2000u
#define N_CHUNKS 20 /* measured in chunks, interleaved; the best chunk counts */

/* CPU time, not wall time: on a shared machine the wall clock also counts
 * the time other processes had the core */
static double now_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
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

/* fire n events; returns the CPU time taken */
static double dcsim_advance(struct dcsim_run *d, uint64_t n)
{
    if (!d->ok || n == 0)
        return 0.0;
    d->h.left = n;
    double t0 = now_cpu_s();
    enum sim_run_status st = sim_run(d->eng, INFINITY);
    double t1 = now_cpu_s();
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

/* ---- baseline: a raw 4-ary array heap of 16-byte (time, sequence) entries ----
 *
 * What a hand-written hold loop would use: no payload, no handler, no
 * cancellation. The hold step replaces the head and sifts it down once (the
 * same single sift the engine's replace-first path does). heap[0] sits 3
 * entries into a 64-byte line so each group of four children is one line. */

#define BASE_ARITY 4
#define BASE_PAD (BASE_ARITY - 1)

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
        size_t parent = (i - 1) / BASE_ARITY;
        if (!entry_before(&e, &heap[parent]))
            break;
        heap[i] = heap[parent];
        i = parent;
    }
    heap[i] = e;
}

#if defined(__GNUC__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

/* Index of the least of the children [c, last): branch-free on the times,
 * the sequence only when the least time is shared. */
static inline size_t least_child(const struct entry *heap, size_t c, size_t last)
{
    size_t best = c;
    double best_t = heap[c].time_s;
    int tie = 0;
    for (size_t k = c + 1; k < last; k++) {
        double t = heap[k].time_s;
        tie |= t == best_t;
        best = t < best_t ? k : best;
        best_t = t < best_t ? t : best_t;
    }
    if (tie)
        for (size_t k = c + 1; k < last; k++)
            if (entry_before(&heap[k], &heap[best]))
                best = k;
    return best;
}

/* Replace the head by e and restore the heap: one sift-down, fetching the
 * grandchildren's lines while the children are compared. */
static inline void heap_replace_top(struct entry *heap, size_t n, struct entry e)
{
    size_t i = 0;
    for (;;) {
        size_t c = BASE_ARITY * i + 1;
        if (c >= n)
            break;
        size_t g = BASE_ARITY * c + 1;
        if (g + 3 * BASE_ARITY < n)
            for (size_t k = 0; k < BASE_ARITY; k++)
                PREFETCH(&heap[g + k * BASE_ARITY]);
        size_t best = least_child(heap, c, c + BASE_ARITY < n ? c + BASE_ARITY : n);
        if (!entry_before(&heap[best], &e))
            break;
        heap[i] = heap[best];
        i = best;
    }
    heap[i] = e;
}

struct baseline_run {
    struct entry *heap; /* BASE_PAD entries into its allocation */
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
    size_t bytes = (n_pending + BASE_PAD) * sizeof *b->heap;
    b->heap = aligned_alloc(64, (bytes + 63) / 64 * 64);
    b->rng = sim_rng_stream_create(BENCH_SEED, SIM_ENTITY_JOB, 0, SIM_PURPOSE_SPEED);
    if (!b->heap || !b->rng)
        return -1;
    b->heap += BASE_PAD;
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
    double t0 = now_cpu_s();
    for (uint64_t k = 0; k < n; k++) {
        double t = b->heap[0].time_s;
        backwards += t < last;
        last = t;
        heap_replace_top(b->heap, b->n,
                         (struct entry){t + gsl_ran_exponential(b->rng, 1.0), b->seq++});
    }
    double t1 = now_cpu_s();
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
    free(b->heap ? b->heap - BASE_PAD : NULL);
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
    printf("bench_engine pending=%zu bytes_per_pending=%.1f\n", n_pending,
           (double)sim_engine_queue_bytes(d.eng) / (double)n_pending);
    fflush(stdout);
out:
    dcsim_teardown(&d);
    baseline_teardown(&b);
    return rc;
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_engine [--smoke] [--events=N] [--pending=N]\n"
                    "  --smoke      tiny runs at 1e4 and 1e5 (for ctest); the figures mean nothing\n"
                    "  --events=N   measured events per size and impl (default %u)\n"
                    "  --pending=N  one queue size instead of 1e4, 1e5 and 1e6\n",
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

    static const size_t sizes[] = {10000, 100000, 1000000};
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
