/* test_cluster_preempt.c - disruption in the cluster tier (models/cluster.h):
 * checkpoint-then-preempt worked by hand (exact end times, lost work,
 * goodput); a job never evicted by an equal or lower priority; without a
 * higher-priority arrival the schedule with preemption is the one without
 * (same digest); maintenance windows by hand (a job does not start on GPUs a
 * window takes before it ends; down GPU-seconds); node failures: a zero rate
 * is the failure-free run, busy + idle + down = capacity, lost GPU-seconds =
 * busy - useful, no GPU held twice (its own occupancy map), determinism,
 * and what more spares do to the slowdown on a fixed failure stream.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cluster.h"
#include "gpu_watch.h"

static cluster_config shape(uint32_t gpus, uint32_t node, const char *sched)
{
    cluster_config c;
    memset(&c, 0, sizeof c);
    c.gpus = gpus;
    c.node_gpus = node;
    c.leaf_gpus = node;
    c.su_gpus = gpus;
    c.sched = cluster_sched_find(sched);
    c.placer = cluster_placer_find("first-fit");
    c.seed = 7;
    return c;
}

/* ---- the occupancy map (gpu_watch.h), and the reservation windows ---- */
typedef struct resv_watch {
    watch occ;
    const cluster_reservation *resv; /* checked: no start onto a window's GPUs before its end */
    uint32_t n_resv;
    const cluster_job_spec *spec;
    int in_window;
} resv_watch;

static void on_resv_watch(void *ctx, uint32_t job, double now_s, const uint32_t *g, uint32_t n)
{
    resv_watch *w = ctx;
    on_watch(&w->occ, job, now_s, g, n);
    for (uint32_t i = 0; g && i < n; i++)
        for (uint32_t k = 0; k < w->n_resv; k++) { /* first starts: the run is d */
            const cluster_reservation *r = &w->resv[k];
            int on = g[i] >= r->gpu0 && g[i] < r->gpu0 + r->gpus;
            if (on && now_s < r->start_s + r->duration_s &&
                now_s + w->spec[job].duration_s > r->start_s)
                w->in_window++;
        }
}

static void watch_init(resv_watch *w, cluster_config *c)
{
    memset(w, 0, sizeof *w);
    w->occ.gpus = c->gpus;
    w->occ.owner = calloc(c->gpus, sizeof *w->occ.owner);
    c->watch = on_resv_watch;
    c->watch_ctx = w;
}

static void conserved(const cluster_result *r)
{
    CHECK_REL(r->busy_gpu_s + r->idle_gpu_s + r->down_gpu_s, r->capacity_gpu_s, 1e-9);
    double useful = 0;
    for (uint32_t i = 0; i < r->n_jobs; i++)
        useful += r->jobs[i].spec.duration_s * r->jobs[i].spec.gpus;
    CHECK_NEAR(r->lost_gpu_s, r->busy_gpu_s - useful, 1e-6 * r->busy_gpu_s);
}

/* one low job evicted by one high job, by hand: I = 100 s, W = 10 s, R = 20 s.
 * A (8 GPUs, 1000 s, priority 0) at 0; B (8 GPUs, 300 s, priority 1) at 250.
 * At 250 A has done 250 s: 200 saved, 50 lost; it writes until 260; B runs
 * 260-560; A restarts at 560: 20 + 800 s, ends 1380. */
static void test_by_hand(void)
{
    cluster_job_spec jobs[2] = {{0, 8, 1000, 0}, {250, 8, 300, 1}};
    const char *scheds[] = {"fifo", "easy-backfill"};
    for (int k = 0; k < 2; k++) {
        cluster_config c = shape(8, 8, scheds[k]);
        c.jobs = jobs;
        c.n_jobs = 2;
        c.preempt = 1;
        c.ckpt = (cluster_ckpt){100, 10, 20};
        cluster_result r;
        sim_error err;
        sim_error_clear(&err);
        CHECK_INT_EQ(cluster_simulate(&c, &r, &err), 0);
        const cluster_job *a = &r.jobs[0], *b = &r.jobs[1];
        CHECK_NEAR(b->start_s, 260, 1e-9);
        CHECK_NEAR(b->end_s, 560, 1e-9);
        CHECK_NEAR(a->start_s, 0, 1e-9);
        CHECK_NEAR(a->end_s, 1380, 1e-9);
        CHECK_INT_EQ(a->preemptions, 1);
        CHECK_INT_EQ(b->preemptions, 0);
        CHECK_INT_EQ(r.preemptions, 1);
        CHECK_NEAR(a->held_s, 250 + 10 + 820, 1e-9);
        CHECK_NEAR(a->rework_s, 50, 1e-9);
        CHECK_NEAR(a->ckpt_s, 10, 1e-9);
        CHECK_NEAR(a->restart_s, 20, 1e-9);
        CHECK_NEAR(r.lost_gpu_s, 8 * (50 + 10 + 20), 1e-6);
        CHECK_NEAR(r.idle_gpu_s, 0, 1e-6);
        CHECK_NEAR(r.goodput, 8 * 1300.0 / (8 * 1380.0), 1e-12);
        CHECK_NEAR(r.job_goodput.max, 1, 1e-12);               /* B */
        CHECK_NEAR(r.job_goodput.q[0], 1000.0 / 1080, 1e-12); /* A: the lower of two */
        CHECK_NEAR(r.slowdown.max, 1.38, 1e-12);              /* A: 1380 / 1000 */
        CHECK_INT_EQ(a->evictor_priority_min, 1);
        conserved(&r);
        cluster_result_free(&r);
        /* an equal or lower priority evicts nobody: B waits for A */
        for (int p = -1; p <= 0; p++) {
            jobs[1].priority = p;
            CHECK_INT_EQ(cluster_simulate(&c, &r, &err), 0);
            CHECK_INT_EQ(r.preemptions, 0);
            CHECK_NEAR(r.jobs[1].start_s, 1000, 1e-9);
            cluster_result_free(&r);
        }
        jobs[1].priority = 1;
    }
}

/* a trace of mixed priorities: n jobs, sizes 1-32 GPUs, priorities 0-2 */
static cluster_job_spec *mixed(uint32_t n, int has_priorities)
{
    cluster_job_spec *v = malloc(n * sizeof *v);
    uint64_t x = 12345;
    double t = 0;
    for (uint32_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        t += (double)(x >> 40 & 1023);
        v[i].submit_s = t;
        v[i].gpus = 1u << (x >> 20 & 5);
        v[i].duration_s = 600 + (double)(x >> 30 & 8191);
        v[i].priority = has_priorities ? (int32_t)(x >> 50 & 3) % 3 : 0;
    }
    return v;
}

static void test_invariants(void)
{
    cluster_job_spec *same = mixed(400, 0), *prio = mixed(400, 1);
    const char *scheds[] = {"fifo", "easy-backfill"};
    for (int k = 0; k < 2; k++) {
        /* equal priorities: preemption changes nothing, digest included */
        cluster_config c = shape(64, 8, scheds[k]);
        c.jobs = same;
        c.n_jobs = 400;
        cluster_result r0, r1;
        sim_error err;
        sim_error_clear(&err);
        CHECK_INT_EQ(cluster_simulate(&c, &r0, &err), 0);
        c.preempt = 1;
        c.ckpt = (cluster_ckpt){300, 30, 60};
        CHECK_INT_EQ(cluster_simulate(&c, &r1, &err), 0);
        CHECK(r0.digest == r1.digest);
        CHECK_INT_EQ(r1.preemptions, 0);
        for (uint32_t i = 0; i < 400; i++)
            CHECK(r0.jobs[i].start_s == r1.jobs[i].start_s &&
                  r0.jobs[i].end_s == r1.jobs[i].end_s);
        cluster_result_free(&r0);
        cluster_result_free(&r1);
        /* mixed priorities: evictions, each by a strictly higher priority */
        c.jobs = prio;
        resv_watch w;
        watch_init(&w, &c);
        CHECK_INT_EQ(cluster_simulate(&c, &r1, &err), 0);
        CHECK(r1.preemptions > 0);
        CHECK_INT_EQ(w.occ.clashes, 0);
        CHECK_INT_EQ(w.occ.bad_frees, 0);
        uint32_t evicted = 0;
        for (uint32_t i = 0; i < 400; i++) {
            const cluster_job *j = &r1.jobs[i];
            evicted += j->preemptions;
            if (j->preemptions)
                CHECK(j->evictor_priority_min > j->spec.priority);
            CHECK(j->end_s >= j->start_s + j->spec.duration_s - 1e-9);
        }
        CHECK_INT_EQ(evicted, r1.preemptions);
        CHECK(r1.lost_gpu_s > 0);
        conserved(&r1);
        free(w.occ.owner);
        cluster_result_free(&r1);
    }
    free(same);
    free(prio);
}

/* windows by hand: GPUs 0-3 down over [50, 150). A (8 GPUs, 100 s) at 0
 * would run into it: it waits to 150. B (4 GPUs, 100 s) at 0 backfills on
 * GPUs 4-7 (EASY), not on 0-3. C (8 GPUs, 50 s) at 0 ends at the window's
 * start under FIFO on the whole cluster. */
static void test_windows(void)
{
    cluster_reservation w0 = {50, 100, 0, 4};
    cluster_job_spec jobs[2] = {{0, 8, 100, 0}, {0, 4, 100, 0}};
    cluster_config c = shape(8, 4, "easy-backfill");
    c.jobs = jobs;
    c.n_jobs = 2;
    c.resv = &w0;
    c.n_resv = 1;
    resv_watch w;
    watch_init(&w, &c);
    w.resv = &w0;
    w.n_resv = 1;
    w.spec = jobs;
    cluster_result r;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(cluster_simulate(&c, &r, &err), 0);
    CHECK_NEAR(r.jobs[0].start_s, 150, 1e-9);
    CHECK_NEAR(r.jobs[0].end_s, 250, 1e-9);
    CHECK_NEAR(r.jobs[1].start_s, 0, 1e-9);
    CHECK_INT_EQ(w.in_window, 0);
    CHECK_INT_EQ(w.occ.clashes, 0);
    CHECK_NEAR(r.down_gpu_s, 4 * 100, 1e-9);
    CHECK_NEAR(r.busy_gpu_s, 8 * 100 + 4 * 100, 1e-9);
    CHECK_NEAR(r.idle_gpu_s, 8 * 250 - 1200 - 400, 1e-9);
    conserved(&r);
    cluster_result_free(&r);
    cluster_job_spec one = {0, 8, 50, 0};
    c = shape(8, 4, "fifo");
    c.jobs = &one;
    c.n_jobs = 1;
    c.resv = &w0;
    c.n_resv = 1;
    CHECK_INT_EQ(cluster_simulate(&c, &r, &err), 0);
    CHECK_NEAR(r.jobs[0].start_s, 0, 1e-9);
    CHECK_NEAR(r.jobs[0].end_s, 50, 1e-9);
    CHECK_NEAR(r.down_gpu_s, 0, 1e-9); /* T = 50: the window lies after the run */
    cluster_result_free(&r);
    free(w.occ.owner);
}

static double mean_slowdown(cluster_config *c, uint32_t spares, cluster_result *r)
{
    sim_error err;
    sim_error_clear(&err);
    c->fail.spares = spares;
    CHECK_INT_EQ(cluster_simulate(c, r, &err), 0);
    return r->slowdown.mean;
}

static void test_failures(void)
{
    cluster_job_spec *v = mixed(400, 0);
    cluster_config c = shape(64, 8, "easy-backfill");
    c.jobs = v;
    c.n_jobs = 400;
    cluster_result r0, r1;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(cluster_simulate(&c, &r0, &err), 0);
    /* a zero rate: the failure-free run, whatever the other figures */
    c.fail = (cluster_failures){.rate_per_node_s = 0, .repair_s = 3600, .spares = 2};
    c.ckpt = (cluster_ckpt){300, 30, 60};
    CHECK_INT_EQ(cluster_simulate(&c, &r1, &err), 0);
    CHECK(r0.digest == r1.digest);
    CHECK_NEAR(r1.down_gpu_s, 0, 0);
    cluster_result_free(&r0);
    cluster_result_free(&r1);
    /* a node fails every 20 h or so: 8 nodes, one failure per 2.5 h */
    c.fail = (cluster_failures){.rate_per_node_s = 1.0 / (20 * 3600), .repair_s = 4 * 3600};
    resv_watch w;
    watch_init(&w, &c);
    double s0 = mean_slowdown(&c, 0, &r0);
    CHECK(r0.failures > 0 && r0.interruptions > 0);
    CHECK(r0.down_gpu_s > 0);
    CHECK_INT_EQ(r0.spare_swaps, 0);
    CHECK_INT_EQ(w.occ.clashes, 0);
    CHECK_INT_EQ(w.occ.bad_frees, 0);
    conserved(&r0);
    CHECK_INT_EQ(cluster_simulate(&c, &r1, &err), 0); /* determinism */
    CHECK(r0.digest == r1.digest && r0.end_s == r1.end_s);
    cluster_result_free(&r1);
    /* spares on this fixed failure stream: the down GPU-seconds never rise
     * with more spares and are 0 once every failure finds one; the mean
     * slowdown with spares is below the one without, but is not monotone
     * from one spare count to the next (EASY's order shifts with the nodes
     * that stay up: a scheduling anomaly; docs/cluster.md), so that is
     * printed, not asserted */
    double prev_down = r0.down_gpu_s;
    const uint32_t spares[] = {1, 2, 4, 8};
    for (int k = 0; k < 4; k++) {
        double sk = mean_slowdown(&c, spares[k], &r1);
        printf("spares %u: mean slowdown %.6g (%u failures, %u swaps, %.4g down GPU-h)\n",
               spares[k], sk, r1.failures, r1.spare_swaps, r1.down_gpu_s / 3600);
        CHECK(sk < s0);
        CHECK(r1.spare_swaps > 0);
        conserved(&r1);
        CHECK(r1.down_gpu_s <= prev_down);
        CHECK((r1.spare_swaps == r1.failures) == (r1.down_gpu_s == 0));
        prev_down = r1.down_gpu_s;
        cluster_result_free(&r1);
    }
    printf("spares 0: mean slowdown %.6g (%u failures, %.4g down GPU-h)\n", s0, r0.failures,
           r0.down_gpu_s / 3600);
    cluster_result_free(&r0);
    free(w.occ.owner);
    /* windows, failures and preemption together: still conserved, no clash */
    cluster_job_spec *p = mixed(400, 1);
    c.jobs = p;
    c.preempt = 1;
    c.fail.spares = 1;
    cluster_reservation ws[2] = {{20000, 7200, 0, 16}, {90000, 3600, 32, 32}};
    c.resv = ws;
    c.n_resv = 2;
    watch_init(&w, &c);
    CHECK_INT_EQ(cluster_simulate(&c, &r1, &err), 0);
    CHECK_INT_EQ(w.occ.clashes, 0);
    CHECK_INT_EQ(w.occ.bad_frees, 0);
    CHECK(r1.preemptions > 0 && r1.failures > 0);
    conserved(&r1);
    cluster_result_free(&r1);
    free(w.occ.owner);
    free(p);
    free(v);
}

/* swap-down: a spare freed by a repair takes over a node already down. With
 * no spare it never acts (the run is the one without it, digest equal); with
 * one it does (takeovers counted, none without swap-down), no GPU is ever
 * given twice, GPU-time is conserved, and the run is deterministic; the down
 * GPU-hours with and without it are printed (a node back sooner also fails
 * again sooner, so their order is not asserted) */
static void test_swap_down(void)
{
    cluster_job_spec *v = mixed(400, 0);
    cluster_config c = shape(64, 8, "easy-backfill");
    c.jobs = v;
    c.n_jobs = 400;
    c.ckpt = (cluster_ckpt){300, 30, 60};
    c.fail = (cluster_failures){.rate_per_node_s = 1.0 / (10 * 3600), .repair_s = 8 * 3600};
    cluster_result off, on, again;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(cluster_simulate(&c, &off, &err), 0);
    c.fail.swap_down = 1;
    CHECK_INT_EQ(cluster_simulate(&c, &on, &err), 0);
    CHECK(off.digest == on.digest && on.spare_takeovers == 0);
    cluster_result_free(&off);
    cluster_result_free(&on);
    c.fail.spares = 1;
    c.fail.swap_down = 0;
    CHECK_INT_EQ(cluster_simulate(&c, &off, &err), 0);
    c.fail.swap_down = 1;
    resv_watch w;
    watch_init(&w, &c);
    CHECK_INT_EQ(cluster_simulate(&c, &on, &err), 0);
    CHECK_INT_EQ(w.occ.clashes, 0);
    CHECK_INT_EQ(w.occ.bad_frees, 0);
    CHECK_INT_EQ(off.spare_takeovers, 0);
    CHECK(on.spare_takeovers > 0 && on.failures > on.spare_swaps);
    conserved(&on);
    CHECK_INT_EQ(cluster_simulate(&c, &again, &err), 0);
    CHECK(again.digest == on.digest && again.down_gpu_s == on.down_gpu_s);
    printf("swap-down, 1 spare: %u failures, %u swaps, %u takeovers, %.4g down GPU-h "
           "(without: %u failures, %u swaps, %.4g down GPU-h)\n", on.failures, on.spare_swaps,
           on.spare_takeovers, on.down_gpu_s / 3600, off.failures, off.spare_swaps,
           off.down_gpu_s / 3600);
    cluster_result_free(&off);
    cluster_result_free(&on);
    cluster_result_free(&again);
    free(w.occ.owner);
    free(v);
}

static void test_refusals(void)
{
    cluster_job_spec one = {0, 8, 50, 0};
    cluster_config c = shape(8, 4, "fifo");
    c.jobs = &one;
    c.n_jobs = 1;
    cluster_reservation bad = {0, 10, 4, 8};
    c.resv = &bad;
    c.n_resv = 1;
    cluster_result r;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(cluster_simulate(&c, &r, &err), SIM_ERR_INPUT);
    CHECK_CONTAINS(err.msg, "window GPUs");
    c.n_resv = 0;
    c.fail.rate_per_node_s = 1e-4;
    sim_error_clear(&err);
    CHECK_INT_EQ(cluster_simulate(&c, &r, &err), SIM_ERR_INPUT);
    CHECK_CONTAINS(err.msg, "repair time");
}

int main(void)
{
    test_by_hand();
    test_invariants();
    test_windows();
    test_failures();
    test_swap_down();
    test_refusals();
    return check_report();
}
