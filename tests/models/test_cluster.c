/* test_cluster.c - the cluster tier (models/cluster.h): a single job on an
 * empty cluster starts at its arrival and ends after its duration; hand-
 * worked FIFO and EASY-backfill schedules (start times exact); the head's
 * start never later than its EASY reservation; FIFO starts in arrival order;
 * no GPU given to two jobs at once (an independent occupancy map checked at
 * every start and end); busy + idle GPU-seconds = GPUs x T to rounding;
 * first-fit against topology packing on a hand-placed case (leaves and
 * nodes spanned); determinism; the CSV trace's errors with their lines.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cluster.h"

static cluster_config shape(uint32_t gpus, uint32_t node, uint32_t leaf, uint32_t su,
                            const char *sched, const char *placer)
{
    cluster_config c;
    memset(&c, 0, sizeof c);
    c.gpus = gpus;
    c.node_gpus = node;
    c.leaf_gpus = leaf;
    c.su_gpus = su;
    c.sched = cluster_sched_find(sched);
    c.placer = cluster_placer_find(placer);
    c.seed = 1;
    return c;
}

static const char *const scheds[] = {"fifo", "easy-backfill"};
static const char *const placers[] = {"first-fit", "topology"};

/* ---- the occupancy watcher: its own map, filled and emptied by the calls */

typedef struct watch {
    uint32_t gpus;
    uint32_t *owner; /* job + 1, 0 free */
    uint32_t *held;  /* per job: GPUs held */
    int clashes, bad_counts;
    uint32_t starts, ends;
} watch;

static void on_watch(void *ctx, uint32_t job, double now_s, const uint32_t *g, uint32_t n)
{
    (void)now_s;
    watch *w = ctx;
    if (g) {
        w->starts++;
        for (uint32_t i = 0; i < n; i++) {
            if (g[i] >= w->gpus || w->owner[g[i]]) {
                w->clashes++;
                continue;
            }
            w->owner[g[i]] = job + 1;
        }
        w->held[job] = n;
        return;
    }
    w->ends++;
    uint32_t freed = 0;
    for (uint32_t x = 0; x < w->gpus; x++)
        if (w->owner[x] == job + 1) {
            w->owner[x] = 0;
            freed++;
        }
    w->bad_counts += freed != n || freed != w->held[job];
}

/* ---- a single job ---- */

static void test_single_job(void)
{
    cluster_job_spec one = {100, 64, 3600, 0};
    for (int s = 0; s < 2; s++)
        for (int p = 0; p < 2; p++) {
            cluster_config c = shape(1024, 8, 256, 1024, scheds[s], placers[p]);
            c.jobs = &one;
            c.n_jobs = 1;
            cluster_result r;
            sim_error err;
            sim_error_clear(&err);
            CHECK_INT_EQ(cluster_simulate(&c, &r, &err), 0);
            if (!r.jobs)
                continue;
            CHECK_NEAR(r.jobs[0].start_s, 100, 0);
            CHECK_NEAR(r.jobs[0].end_s, 3700, 0);
            CHECK_NEAR(r.wait_s.max, 0, 0);
            CHECK_NEAR(r.slowdown.mean, 1, 0);
            CHECK_REL(r.utilisation, 64.0 * 3600 / (1024.0 * 3700), 1e-12);
            CHECK_INT_EQ(r.jobs[0].nodes, 8);
            CHECK_INT_EQ(r.jobs[0].leaves, 1);
            CHECK_INT_EQ(r.jobs_over_leaves, 0);
            /* idle: all 1024 for 100 s, then 960 for 3600 s */
            CHECK_REL(r.idle_gpu_s, 1024.0 * 100 + 960.0 * 3600, 1e-12);
            cluster_result_free(&r);
        }
}

/* ---- hand-worked schedules ---- */

static int run_trace(const char *sched, uint32_t gpus, const cluster_job_spec *jobs, uint32_t n,
                     cluster_result *r)
{
    cluster_config c = shape(gpus, 8, gpus, gpus, sched, "first-fit");
    c.jobs = jobs;
    c.n_jobs = n;
    sim_error err;
    sim_error_clear(&err);
    return cluster_simulate(&c, r, &err);
}

/* 8 GPUs. A 6 GPUs 0-100; B 8 GPUs arrives at 1 (blocked: reservation
 * 100); C 2 GPUs for 90 s at 2 ends by 100, so EASY starts it at once; D 2
 * GPUs for 200 s at 3 finds nothing free. FIFO: B 100-150, C 150-240, D
 * 150-350. EASY: C 2-92, B 100-150, D 150-350. */
static void test_easy_by_hand(void)
{
    const cluster_job_spec jobs[] = {{0, 6, 100, 0}, {1, 8, 50, 0}, {2, 2, 90, 0},
                                     {3, 2, 200, 0}};
    const double fifo_start[] = {0, 100, 150, 150}, easy_start[] = {0, 100, 2, 150};
    cluster_result r;
    CHECK_INT_EQ(run_trace("fifo", 8, jobs, 4, &r), 0);
    for (int i = 0; r.jobs && i < 4; i++)
        CHECK_NEAR(r.jobs[i].start_s, fifo_start[i], 0);
    CHECK_INT_EQ(r.backfilled, 0);
    cluster_result_free(&r);
    CHECK_INT_EQ(run_trace("easy-backfill", 8, jobs, 4, &r), 0);
    for (int i = 0; r.jobs && i < 4; i++)
        CHECK_NEAR(r.jobs[i].start_s, easy_start[i], 0);
    if (r.jobs)
        CHECK_NEAR(r.jobs[1].reserve_s, 100, 0);
    CHECK_INT_EQ(r.backfilled, 1);
    CHECK_NEAR(r.end_s, 350, 0);
    cluster_result_free(&r);

    /* 16 GPUs. A 12 GPUs 0-100; B 8 GPUs at 1 (reservation 100, then 16
     * free: 8 extra); C 4 GPUs for 500 s at 2 runs past 100 but within the
     * extra: starts at 2, and B still at 100. E 8 GPUs for 10 s at 3: none
     * free; at 100 B leaves 4 free, so E waits for B's end at 110. */
    const cluster_job_spec j2[] = {{0, 12, 100, 0}, {1, 8, 10, 0}, {2, 4, 500, 0},
                                   {3, 8, 10, 0}};
    CHECK_INT_EQ(run_trace("easy-backfill", 16, j2, 4, &r), 0);
    if (r.jobs) {
        CHECK_NEAR(r.jobs[2].start_s, 2, 0);
        CHECK_NEAR(r.jobs[1].start_s, 100, 0);
        CHECK_NEAR(r.jobs[1].reserve_s, 100, 0);
        CHECK_NEAR(r.jobs[3].start_s, 110, 0);
    }
    cluster_result_free(&r);
}

/* ---- random streams: invariants ---- */

static cluster_config stream(const char *sched, const char *placer, uint64_t seed)
{
    cluster_config c = shape(512, 8, 64, 256, sched, placer);
    cluster_stream *st = &c.stream;
    st->rate_per_s = 6.0 / 3600;
    st->window_s = 7 * 86400;
    const uint32_t sizes[] = {1, 4, 8, 12, 16, 32, 64, 100, 256};
    const double weights[] = {10, 10, 20, 5, 10, 10, 8, 4, 3};
    st->n_sizes = 9;
    for (unsigned i = 0; i < 9; i++) {
        st->size_gpus[i] = sizes[i];
        st->size_weight[i] = weights[i];
    }
    st->dur = (cluster_duration){CLUSTER_DUR_LOGNORMAL, 3600, 1.0, 3 * 86400};
    c.seed = seed;
    return c;
}

static void test_invariants(void)
{
    for (int s = 0; s < 2; s++)
        for (int p = 0; p < 2; p++) {
            cluster_config c = stream(scheds[s], placers[p], 5);
            watch w = {.gpus = c.gpus};
            w.owner = calloc(c.gpus, sizeof *w.owner);
            w.held = calloc(100000, sizeof *w.held);
            c.watch = on_watch;
            c.watch_ctx = &w;
            cluster_result r;
            sim_error err;
            sim_error_clear(&err);
            CHECK_INT_EQ(cluster_simulate(&c, &r, &err), 0);
            CHECK(r.n_jobs > 800 && r.n_jobs < 1200); /* 6/h for 168 h: 1008 expected */
            CHECK_INT_EQ(w.clashes, 0);
            CHECK_INT_EQ(w.bad_counts, 0);
            CHECK_INT_EQ(w.starts, r.n_jobs);
            CHECK_INT_EQ(w.ends, r.n_jobs);
            /* conservation: busy + idle = capacity */
            CHECK_REL(r.busy_gpu_s + r.idle_gpu_s, r.capacity_gpu_s, 1e-12);
            double busy = 0, last_start = 0;
            int fifo_order = 1, late = 0, reserved = 0;
            for (uint32_t i = 0; r.jobs && i < r.n_jobs; i++) {
                const cluster_job *j = &r.jobs[i];
                busy += j->spec.gpus * j->spec.duration_s;
                CHECK(j->start_s >= j->spec.submit_s);
                fifo_order &= j->start_s >= last_start;
                last_start = j->start_s;
                if (j->reserve_s >= 0) {
                    reserved++;
                    late += j->start_s > j->reserve_s * (1 + 1e-12);
                }
            }
            CHECK_REL(r.busy_gpu_s, busy, 1e-12);
            CHECK(r.utilisation > 0.3 && r.utilisation < 1);
            CHECK(r.wait_s.q[0] <= r.wait_s.q[1] && r.wait_s.q[1] <= r.wait_s.q[2] &&
                  r.wait_s.q[2] <= r.wait_s.max);
            CHECK(r.slowdown.q[0] >= 1);
            if (s == 0) { /* FIFO: in arrival order, nothing passes */
                CHECK(fifo_order);
                CHECK_INT_EQ(r.backfilled, 0);
            } else { /* EASY: the head never starts after its reservation */
                CHECK_INT_EQ(late, 0);
                CHECK(reserved > 10);
                CHECK(r.backfilled > 10);
            }
            cluster_result_free(&r);
            free(w.owner);
            free(w.held);
        }
}

/* ---- placement by hand ---- */

/* 64 GPUs, nodes of 8, leaves of 16, SUs of 32. A (4 GPUs) then B (16):
 * first-fit puts B on GPUs 4-19 (3 nodes, 2 leaves); topology on leaf 1,
 * GPUs 16-31 (2 nodes, 1 leaf). C (4 GPUs) then goes, packed, next to A. */
static void test_placement(void)
{
    const cluster_job_spec jobs[] = {{0, 4, 1000, 0}, {1, 16, 1000, 0}, {2, 4, 1000, 0}};
    for (int p = 0; p < 2; p++) {
        cluster_config c = shape(64, 8, 16, 32, "fifo", placers[p]);
        c.jobs = jobs;
        c.n_jobs = 3;
        cluster_result r;
        sim_error err;
        sim_error_clear(&err);
        CHECK_INT_EQ(cluster_simulate(&c, &r, &err), 0);
        if (!r.jobs)
            continue;
        CHECK_INT_EQ(r.jobs[1].min_nodes, 2);
        CHECK_INT_EQ(r.jobs[1].min_leaves, 1);
        CHECK_INT_EQ(r.jobs[1].nodes, p == 0 ? 3 : 2);
        CHECK_INT_EQ(r.jobs[1].leaves, p == 0 ? 2 : 1);
        CHECK_INT_EQ(r.jobs_over_leaves, p == 0 ? 1 : 0);
        CHECK_INT_EQ(r.jobs[2].nodes, 1);
        CHECK_REL(r.leaf_ratio_gpu_mean, p == 0 ? (4 + 16 * 2 + 4) / 24.0 : 1.0, 1e-12);
        cluster_result_free(&r);
    }
}

/* ---- determinism ---- */

static void test_determinism(void)
{
    cluster_config c = stream("easy-backfill", "topology", 9);
    cluster_result a, b, d;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(cluster_simulate(&c, &a, &err), 0);
    CHECK_INT_EQ(cluster_simulate(&c, &b, &err), 0);
    c.seed = 10;
    CHECK_INT_EQ(cluster_simulate(&c, &d, &err), 0);
    CHECK(a.digest == b.digest);
    CHECK(a.digest != d.digest);
    CHECK_INT_EQ(a.n_jobs, b.n_jobs);
    int same = a.jobs && b.jobs;
    for (uint32_t i = 0; same && i < a.n_jobs; i++) /* field by field: not the padding */
        same = a.jobs[i].start_s == b.jobs[i].start_s && a.jobs[i].end_s == b.jobs[i].end_s &&
               a.jobs[i].spec.gpus == b.jobs[i].spec.gpus && a.jobs[i].leaves == b.jobs[i].leaves;
    CHECK(same);
    cluster_result_free(&a);
    cluster_result_free(&b);
    cluster_result_free(&d);
}

/* ---- the CSV trace and refusals ---- */

static void expect_trace_error(const char *text, int line, const char *part)
{
    cluster_job_spec *v = NULL;
    uint32_t n = 0;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(cluster_trace_parse(text, strlen(text), "t.csv", 64, &v, &n, &err),
                 SIM_ERR_INPUT);
    CHECK_INT_EQ(err.line, line);
    CHECK_STR_EQ(err.file, "t.csv");
    CHECK_CONTAINS(err.msg, part);
    CHECK(v == NULL);
}

static void test_trace(void)
{
    const char *ok = "# a comment\n\nduration_s, gpus ,submit_s,priority\n60,8,0,0\n"
                     "30.5,64,10,2\r\n7,1,10,-1";
    cluster_job_spec *v = NULL;
    uint32_t n = 0;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(cluster_trace_parse(ok, strlen(ok), "t.csv", 64, &v, &n, &err), 0);
    CHECK_INT_EQ(n, 3);
    if (v && n == 3) {
        CHECK_NEAR(v[1].duration_s, 30.5, 0);
        CHECK_INT_EQ(v[1].gpus, 64);
        CHECK_NEAR(v[1].submit_s, 10, 0);
        CHECK_INT_EQ(v[1].priority, 2);
        CHECK_INT_EQ(v[2].priority, -1);
    }
    free(v);
    expect_trace_error("submit_s,gpus,duration_s\n0,8,10\n5,abc,10\n", 3, "gpus 'abc'");
    expect_trace_error("submit_s,gpus,duration_s\n10,8,10\n5,8,10\n", 3, "before the previous");
    expect_trace_error("submit_s,gpus,duration_s\n0,8,10\n1e300,8,10\n", 3,
                       "more than ten years in");
    expect_trace_error("submit_s,gpus,duration_s\n0,65,10\n", 2, "from 1 to the cluster's 64");
    expect_trace_error("submit_s,gpus,duration_s\n0,8,0\n", 2, "duration_s 0");
    expect_trace_error("submit_s,gpus\n0,8\n", 1, "lacks column 'duration_s'");
    expect_trace_error("submit_s,gpus,duration_s,user\n", 1, "unknown column 'user'");
    expect_trace_error("submit_s,gpus,duration_s\n0,8\n", 2, "2 fields");
    expect_trace_error("submit_s,gpus,duration_s\n", 0, "no jobs");

    /* priorities: the higher one passes the queue */
    const cluster_job_spec jobs[] = {{0, 8, 100, 0}, {1, 8, 10, 0}, {2, 8, 10, 5}};
    cluster_result r;
    CHECK_INT_EQ(run_trace("fifo", 8, jobs, 3, &r), 0);
    if (r.jobs) {
        CHECK_NEAR(r.jobs[2].start_s, 100, 0);
        CHECK_NEAR(r.jobs[1].start_s, 110, 0);
    }
    cluster_result_free(&r);

    cluster_config c = shape(64, 8, 12, 64, "fifo", "first-fit");
    CHECK_INT_EQ(cluster_config_check(&c, &err), SIM_ERR_INPUT);
    c = stream("fifo", "first-fit", 1);
    c.stream.size_gpus[0] = 513;
    CHECK_INT_EQ(cluster_config_check(&c, &err), SIM_ERR_INPUT);
    CHECK(cluster_sched_find("sjf") == NULL);
    CHECK(cluster_placer_find("random") == NULL);
}

int main(void)
{
    test_single_job();
    test_easy_by_hand();
    test_invariants();
    test_placement();
    test_determinism();
    test_trace();
    return check_report();
}
