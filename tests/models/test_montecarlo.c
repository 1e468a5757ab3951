/* test_montecarlo.c - campaign replicas (models/campaign.h): the same numbers
 * for any thread count, the first-order ETTR inside the Monte Carlo
 * confidence interval, and the simulated optimum checkpoint interval against
 * Daly's, including his worked examples (calibration.md section 4). */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "campaign.h"
#include "check.h"
#include "failure_process.h"

/* One GPU whose iterations take 1 s (6 N T / (G peak MFU) = 6/6 s), so the
 * compute is `compute_h` hours and the checkpoint interval is exact to the
 * second. */
static campaign_config unit_job(double compute_h, double mtbf_s, double tau_s, double w_s,
                                double u0_s, uint64_t seed)
{
    campaign_config c = {
        .gpu_count = 1,
        .gpu_peak_flops_per_s = 6,
        .mfu_frac = 1,
        .model_params = 1,
        .train_tokens = compute_h * 3600,
        .tokens_per_iteration = 1,
        .gpu_failure_rate_per_s = mtbf_s > 0 ? 1 / mtbf_s : 0,
        .restart_s = u0_s,
        .checkpoint_interval_s = tau_s,
        .checkpoint_write_s = w_s,
        .seed = seed,
    };
    return c;
}

static int run_all(const campaign_config *c, unsigned n, campaign_result *r)
{
    sim_error err;
    sim_error_clear(&err);
    if (campaign_run(c, NULL, NULL, NULL, &r[0], &err))
        return -1;
    return campaign_run_replicas(c, n, r, NULL, NULL, &err);
}

/* Replica results depend on the index only: 1 and 2 threads agree bit for
 * bit; replica 0 is the plain run; the CI shrinks like 1/sqrt(n). */
static void test_replicas_deterministic(void)
{
    enum { N = 24 };
    campaign_config c = unit_job(200, 10 * 3600, 1800, 60, 300, 11);
    campaign_result a[N], b[N], plain;
    omp_set_num_threads(1);
    CHECK(run_all(&c, N, a) == 0);
    omp_set_num_threads(2);
    CHECK(run_all(&c, N, b) == 0);
    int same = 1;
    for (int i = 0; i < N; i++)
        same &= a[i].event_digest == b[i].event_digest &&
                a[i].time_to_train_s == b[i].time_to_train_s;
    CHECK(same);
    sim_error err;
    sim_error_clear(&err);
    CHECK(campaign_run(&c, NULL, NULL, NULL, &plain, &err) == 0);
    CHECK(plain.event_digest == a[0].event_digest);
    CHECK(a[1].event_digest != a[2].event_digest);
    campaign_mc m6, m24;
    campaign_mc_summarize(a, 6, &m6);
    campaign_mc_summarize(a, N, &m24);
    CHECK(m24.ettr_frac.ci95 < m6.ettr_frac.ci95);
    CHECK(m24.failures.mean > 10 && m24.failures.mean < 40); /* ~200 h / 10 h */
    double x[3] = {1, 2, 3};
    campaign_stat s = campaign_stat_of(x, 3);
    CHECK_NEAR(s.mean, 2, 1e-15);
    CHECK_NEAR(s.sd, 1, 1e-15);
    CHECK_NEAR(s.ci95, 4.302652729749464 / sqrt(3), 1e-9); /* t(0.975, 2) */
}

/* Exponential failures, blocking checkpoints: the mean ETTR over 96
 * replicas matches the first-order model (1 - L(u0 + tau/2)) / (1 + w/tau)
 * within its 95 % CI, for settings where L tau is small enough that the
 * model's own error is far below the CI. */
static void test_first_order_within_ci(void)
{
    enum { N = 96 };
    struct { double mtbf_h, tau_s, w_s, u0_s; } cases[] = {
        {100, 1800, 30, 300}, {50, 900, 20, 600}, {200, 3600, 60, 120}, {80, 600, 10, 900},
    };
    campaign_result *r = malloc(N * sizeof *r);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        campaign_config c = unit_job(500, cases[k].mtbf_h * 3600, cases[k].tau_s, cases[k].w_s,
                                     cases[k].u0_s, 100 + k);
        CHECK(run_all(&c, N, r) == 0);
        campaign_mc m;
        campaign_mc_summarize(r, N, &m);
        double first = r[0].ettr_first_order_frac;
        printf("mtbf %5.0f h tau %5.0f s w %3.0f s u0 %4.0f s: ETTR %.5f +- %.5f, first-order "
               "%.5f\n", cases[k].mtbf_h, cases[k].tau_s, cases[k].w_s, cases[k].u0_s,
               m.ettr_frac.mean, m.ettr_frac.ci95, first);
        CHECK(fabs(m.ettr_frac.mean - first) <= m.ettr_frac.ci95);
    }
    free(r);
}

/* Daly (2006) eq. 37, calibration.md 4. */
static double daly(double delta, double mtbf)
{
    if (delta >= 2 * mtbf)
        return mtbf;
    double x = delta / (2 * mtbf);
    return sqrt(2 * delta * mtbf) * (1 + sqrt(x) / 3 + x / 9) - delta;
}

/* Sweep the interval with common random numbers (the same failure times for
 * every interval) and find the best mean ETTR; it lies within 10 % of
 * Daly's optimum for his three worked examples (R 10 min, delta 5 min;
 * M 24 h, 6 h, 15 min: 117, 57 and 9.1 min). The compute is shorter than his
 * 500 h for M = 15 min (the optimum does not depend on it). */
static void test_daly_optimum(void)
{
    enum { N = 64, STEPS = 41 };
    struct { double mtbf_s, compute_h, published_min; } ex[] = {
        {24 * 3600, 500, 117}, {6 * 3600, 500, 57}, {15 * 60, 20, 9.1},
    };
    campaign_result *r = malloc(N * sizeof *r);
    for (int e = 0; e < 3; e++) {
        double opt = daly(300, ex[e].mtbf_s);
        CHECK(fabs(opt / 60 - ex[e].published_min) < 0.6); /* eq. 37 reproduces the figures */
        double best = -1, best_tau = 0;
        for (int i = 0; i < STEPS; i++) {
            double tau = round(opt * (0.5 + i * 0.025)); /* 0.5 .. 1.5 x Daly */
            campaign_config c = unit_job(ex[e].compute_h, ex[e].mtbf_s, tau, 300, 600, 7);
            CHECK(run_all(&c, N, r) == 0);
            campaign_mc m;
            campaign_mc_summarize(r, N, &m);
            if (m.ettr_frac.mean > best) {
                best = m.ettr_frac.mean;
                best_tau = tau;
            }
        }
        printf("Daly example M = %.4g h: simulated optimum %.1f min, Daly %.1f min (published "
               "%.1f)\n", ex[e].mtbf_s / 3600, best_tau / 60, opt / 60, ex[e].published_min);
        CHECK(fabs(best_tau / opt - 1) <= 0.10);
    }
    free(r);
}

/* A limited spare pool: with repairs of 48 h and a failure every ~3 h, an
 * empty pool makes restarts wait; more spares never wait longer (mean of
 * replicas, common random numbers), and an unlimited pool never waits.
 * Time is conserved with the wait inside the restart time. */
static void test_spare_pool(void)
{
    enum { N = 16 };
    unsigned pools[] = {0, 1, 4, 16};
    double prev = INFINITY;
    campaign_result r[N];
    for (int k = 0; k < 4; k++) {
        campaign_config c = unit_job(2000, 12 * 3600, 1800, 60, 600, 21);
        c.spares_limited = 1;
        c.spare_nodes = pools[k];
        c.swap_s = 1800;
        c.repair_mean_s = 24 * 3600;
        CHECK(run_all(&c, N, r) == 0);
        double wait = 0, failures = 0, restarts = 0;
        for (int i = 0; i < N; i++) {
            wait += r[i].spare_wait_s / N;
            failures += (double)r[i].failures / N;
            restarts += (double)r[i].restarts / N;
            CHECK(r[i].spare_wait_s <= r[i].restart_time_s + 1e-6);
            CHECK(r[i].repairs <= r[i].failures); /* a repair per failed node, no more */
            CHECK_REL(r[i].time_to_train_s,
                      r[i].compute_time_s + r[i].rework_s + r[i].checkpoint_time_s +
                          r[i].checkpoint_aborted_s + r[i].restart_time_s +
                          r[i].persist_slowdown_s,
                      1e-9);
        }
        printf("spares %2u: %.0f failures, %.0f restarts, mean wait for repaired nodes %.1f h "
               "(%.1f h a restart)\n",
               pools[k], failures, restarts, wait / 3600, wait / restarts / 3600);
        CHECK(wait <= prev);
        prev = wait;
        if (k == 0) /* each restart waits for (at least) the first failed node's 24 h repair */
            CHECK(wait / restarts > 20 * 3600.0);
    }
    CHECK(prev < 0.01 * 3600); /* 16 spares: ~2 nodes in repair on average */
    campaign_config c = unit_job(2000, 3 * 3600, 1800, 60, 600, 21);
    CHECK(run_all(&c, N, r) == 0);
    CHECK(r[0].spare_wait_s == 0);
}

/* A job that cannot finish (a failure an hour, two-day repairs, no spares:
 * the nodes it waits for pile up) stops with an error, not for ever. */
static void test_no_progress_gives_up(void)
{
    campaign_config c = unit_job(10, 3600, 1800, 60, 600, 3);
    c.spares_limited = 1;
    c.repair_mean_s = 48 * 3600;
    campaign_result r;
    sim_error err;
    sim_error_clear(&err);
    CHECK(campaign_run(&c, NULL, NULL, NULL, &r, &err) != 0);
    CHECK(strstr(err.msg, "almost no progress") != NULL);
}

/* Asynchronous checkpoints. Without failures the run takes exactly the
 * compute, the snapshots, what each persist stretches the compute beside it
 * (w slowdown) and the wait for the last persist. With failures and a long
 * write time they beat blocking checkpoints; time is conserved either way. */
static void test_async_checkpoints(void)
{
    /* no failures: 10 h of compute, tau 1 h, w 20 min, snapshot 30 s, slowdown 0.25:
     * each persist overlaps 20 min of wall time doing 15 min of work: +5 min per
     * checkpoint but the last, whose persist the job waits for (20 min) */
    campaign_config c = unit_job(10, 0, 3600, 1200, 600, 1);
    c.checkpoint_async = 1;
    c.checkpoint_snapshot_s = 30;
    c.persist_slowdown = 0.25;
    campaign_result r;
    sim_error err;
    sim_error_clear(&err);
    CHECK(campaign_run(&c, NULL, NULL, NULL, &r, &err) == 0);
    CHECK_INT_EQ(r.checkpoints, 10);
    CHECK_NEAR(r.persist_slowdown_s, 9 * 300.0, 1e-6);
    CHECK_NEAR(r.time_to_train_s, 36000 + 10 * 30 + 9 * 300 + 1200, 1e-6);
    CHECK_NEAR(r.checkpoint_time_s, 10 * 30 + 1200, 1e-6);
    /* failures (MTBF 12 h) and a 20-minute write: async beats blocking */
    enum { N = 32 };
    campaign_result a[N], b[N];
    campaign_config blocking = unit_job(500, 12 * 3600, 3600, 1200, 600, 5);
    campaign_config async = blocking;
    async.checkpoint_async = 1;
    async.checkpoint_snapshot_s = 30;
    async.persist_slowdown = 0.25;
    CHECK(run_all(&blocking, N, a) == 0);
    CHECK(run_all(&async, N, b) == 0);
    campaign_mc ma, mb;
    campaign_mc_summarize(a, N, &ma);
    campaign_mc_summarize(b, N, &mb);
    printf("write 20 min, MTBF 12 h: ETTR blocking %.4f +- %.4f, async %.4f +- %.4f\n",
           ma.ettr_frac.mean, ma.ettr_frac.ci95, mb.ettr_frac.mean, mb.ettr_frac.ci95);
    CHECK(mb.ettr_frac.mean - mb.ettr_frac.ci95 > ma.ettr_frac.mean + ma.ettr_frac.ci95);
    for (int i = 0; i < N; i++)
        CHECK_REL(b[i].time_to_train_s,
                  b[i].compute_time_s + b[i].rework_s + b[i].checkpoint_time_s +
                      b[i].checkpoint_aborted_s + b[i].restart_time_s + b[i].persist_slowdown_s,
                  1e-9);
}

/* Weibull causes renew at each replacement: whatever the shape, the long-run
 * failure rate is 1 / mean (the renewal theorem), within the CI; a shape
 * above 1 (wear-out) spaces failures more regularly than the exponential,
 * one below 1 (infant mortality) bunches them: the spread of the counts
 * orders accordingly. */
static void test_weibull_causes(void)
{
    enum { N = 64 };
    double shapes[] = {0.7, 1.0, 2.0}, sd[3];
    campaign_result r[N];
    for (int k = 0; k < 3; k++) {
        campaign_config c = unit_job(2000, 0, 3600, 30, 300, 33);
        c.n_causes = 1;
        snprintf(c.causes[0].name, sizeof c.causes[0].name, "part");
        c.causes[0].unit = CAMPAIGN_UNIT_GPU;
        c.causes[0].rate_per_s = 1 / (10 * 3600.0);
        c.causes[0].process = FAILURE_WEIBULL;
        c.causes[0].shape = shapes[k];
        CHECK(run_all(&c, N, r) == 0);
        double rate[N];
        for (int i = 0; i < N; i++)
            rate[i] = (double)r[i].failures / r[i].time_to_train_s * 10 * 3600;
        campaign_stat st = campaign_stat_of(rate, N);
        sd[k] = st.sd;
        printf("Weibull shape %.1f: failures per mean life %.4f +- %.4f (sd %.4f)\n", shapes[k],
               st.mean, st.ci95, st.sd);
        CHECK(fabs(st.mean - 1) <= st.ci95);
        CHECK_INT_EQ(r[0].failures_by_cause[1], r[0].failures);
    }
    CHECK(sd[0] > sd[1] && sd[1] > sd[2]);
}

/* Planned maintenance: every 10 h a 2 h window. Without failures each
 * window costs the partial iteration, a checkpoint write, the window and a
 * restart, and time is conserved with the windows as their own term; with
 * failures too, the window count follows the elapsed time. */
static void test_maintenance(void)
{
    campaign_config c = unit_job(100, 0, 3600, 60, 300, 3);
    c.maintenance_every_s = 10 * 3600;
    c.maintenance_s = 2 * 3600;
    campaign_result r;
    sim_error err;
    sim_error_clear(&err);
    CHECK(campaign_run(&c, NULL, NULL, NULL, &r, &err) == 0);
    uint64_t windows = (uint64_t)floor(r.time_to_train_s / c.maintenance_every_s);
    CHECK_INT_EQ(r.maintenance_windows, windows);
    CHECK_NEAR(r.maintenance_time_s, windows * c.maintenance_s, 1e-6);
    CHECK_INT_EQ(r.restarts, windows);
    CHECK_NEAR(r.restart_time_s, windows * c.restart_s, 1e-6);
    double sum = r.compute_time_s + r.rework_s + r.checkpoint_time_s + r.checkpoint_aborted_s +
                 r.restart_time_s + r.persist_slowdown_s + r.maintenance_time_s;
    CHECK_REL(sum, r.time_to_train_s, 1e-12);
    CHECK(r.rework_s < windows * 1.0 + 1e-9); /* at most one 1-s iteration per window */
    enum { N = 16 };
    campaign_result f[N];
    c.gpu_failure_rate_per_s = 1 / (5 * 3600.0);
    CHECK(run_all(&c, N, f) == 0);
    for (int i = 0; i < N; i++) {
        CHECK_INT_EQ(f[i].maintenance_windows,
                     (uint64_t)floor(f[i].time_to_train_s / c.maintenance_every_s));
        CHECK_REL(f[i].compute_time_s + f[i].rework_s + f[i].checkpoint_time_s +
                      f[i].checkpoint_aborted_s + f[i].restart_time_s + f[i].maintenance_time_s,
                  f[i].time_to_train_s, 1e-9);
    }
    printf("maintenance 2 h every 10 h: %llu windows, %.1f h of 100 h compute, %.1f h elapsed\n",
           (unsigned long long)r.maintenance_windows, r.maintenance_time_s / 3600,
           r.time_to_train_s / 3600);
}

/* Silent data corruption found late rolls back to the last checkpoint from
 * before it: the later it is found, the more work is redone (mean of
 * replicas, the same corruption times), and time is conserved. */
static void test_silent_corruption(void)
{
    enum { N = 32 };
    double detection_h[] = {0, 1, 4, 12}, prev = -1;
    campaign_result r[N];
    for (int k = 0; k < 4; k++) {
        campaign_config c = unit_job(1000, 0, 1800, 30, 300, 17);
        c.n_causes = 1;
        snprintf(c.causes[0].name, sizeof c.causes[0].name, "SDC");
        c.causes[0].rate_per_s = 1 / (20 * 3600.0);
        c.causes[0].detection_s = detection_h[k] * 3600;
        CHECK(run_all(&c, N, r) == 0);
        double rework = 0;
        for (int i = 0; i < N; i++) {
            rework += r[i].rework_s / N;
            CHECK_REL(r[i].compute_time_s + r[i].rework_s + r[i].checkpoint_time_s +
                          r[i].checkpoint_aborted_s + r[i].restart_time_s,
                      r[i].time_to_train_s, 1e-9);
        }
        printf("silent corruption found after %4.1f h on average: rework %.1f h\n",
               detection_h[k], rework / 3600);
        CHECK(rework > prev);
        prev = rework;
    }
}

/* A rack cause takes out all its nodes at once: one interruption each, but
 * four nodes to swap in and repair. With the same event rate and a small
 * pool, racks make restarts wait longer than single nodes; every failure
 * is counted once, by its cause. */
static void test_rack_failures(void)
{
    enum { N = 16 };
    double wait[2];
    campaign_result r[N];
    for (int rack = 0; rack < 2; rack++) {
        campaign_config c = unit_job(2000, 0, 1800, 30, 300, 29);
        c.gpu_count = 64;
        c.gpus_per_node = 8;   /* 8 nodes */
        c.nodes_per_rack = 4;  /* 2 racks */
        c.n_causes = 1;
        snprintf(c.causes[0].name, sizeof c.causes[0].name, rack ? "PDU" : "node");
        c.causes[0].unit = rack ? CAMPAIGN_UNIT_RACK : CAMPAIGN_UNIT_NODE;
        /* one event every 4 h on average either way: 2 racks or 8 nodes */
        c.causes[0].rate_per_s = 1 / ((rack ? 2 : 8) * 4 * 3600.0);
        c.spares_limited = 1;
        c.spare_nodes = 4;
        c.swap_s = 600;
        c.repair_mean_s = 24 * 3600;
        CHECK(run_all(&c, N, r) == 0);
        wait[rack] = 0;
        for (int i = 0; i < N; i++) {
            wait[rack] += r[i].spare_wait_s / N;
            CHECK_INT_EQ(r[i].failures_by_cause[1], r[i].failures);
            CHECK_REL(r[i].compute_time_s + r[i].rework_s + r[i].checkpoint_time_s +
                          r[i].checkpoint_aborted_s + r[i].restart_time_s,
                      r[i].time_to_train_s, 1e-9);
            CHECK(r[i].repairs <= (rack ? 4 : 1) * r[i].failures);
        }
        printf("%s failures every 4 h, 4 spares, 24 h repairs: mean wait %.1f h\n",
               rack ? "rack" : "node", wait[rack] / 3600);
    }
    CHECK(wait[1] > wait[0]);
}

/* Elastic continuation: a failure a day, no spares and 48 h repairs:
 * waiting for repaired nodes (which pile up while it waits) takes years;
 * going on with fewer of 16 replicas (iterations 16/15, 16/14 ... as long)
 * finishes within a quarter more than the compute and conserves time with
 * its own stretch term. A speed table equal to the compute share gives the
 * same run bit for bit; a faster table (the step profiles of smaller jobs
 * lose less than their GPU share) finishes sooner. */
static void test_elastic(void)
{
    enum { N = 16 };
    double ttt[4];
    campaign_result r[N];
    double share[16], faster[16];
    for (unsigned k = 0; k < 16; k++) {
        share[k] = (16.0 - k) / 16.0;
        faster[k] = 1 - (1 - share[k]) / 2;
    }
    uint64_t digest0 = 0;
    for (int mode = 0; mode < 4; mode++) { /* waiting, elastic, share table, faster table */
        campaign_config c = unit_job(2000, 24 * 3600, 1800, 60, 600, 21);
        c.spares_limited = 1;
        c.spare_nodes = 0;
        c.swap_s = 1800;
        c.repair_mean_s = 48 * 3600;
        c.elastic_replicas = mode ? 16 : 0;
        if (mode >= 2) {
            c.elastic_max_missing = 15;
            c.elastic_speed = mode == 2 ? share : faster;
        }
        CHECK(run_all(&c, N, r) == 0);
        ttt[mode] = 0;
        for (int i = 0; i < N; i++) {
            ttt[mode] += r[i].time_to_train_s / N;
            CHECK_REL(r[i].compute_time_s + r[i].rework_s + r[i].checkpoint_time_s +
                          r[i].checkpoint_aborted_s + r[i].restart_time_s +
                          r[i].elastic_slowdown_s,
                      r[i].time_to_train_s, 1e-9);
            CHECK(r[i].repairs <= r[i].failures);
            if (mode)
                CHECK(r[i].elastic_restarts > 0 && r[i].elastic_slowdown_s > 0);
        }
        if (mode == 1)
            digest0 = r[3].event_digest;
        if (mode == 2)
            CHECK(r[3].event_digest == digest0);
        printf("failure a day, no spares, 48 h repairs, %s: time to train %.1f h\n",
               mode == 0   ? "waiting"
               : mode == 1 ? "elastic over 16 replicas"
               : mode == 2 ? "elastic, the share as a table"
                           : "elastic, a table losing half the share",
               ttt[mode] / 3600);
    }
    CHECK(ttt[1] < ttt[0]);
    CHECK(ttt[1] < 1.25 * 2000 * 3600);
    CHECK(ttt[2] == ttt[1]);
    CHECK(ttt[3] < ttt[2]);
    /* a bad table is refused */
    campaign_config c = unit_job(10, 24 * 3600, 1800, 60, 600, 21);
    c.spares_limited = 1;
    c.elastic_replicas = 4;
    c.elastic_max_missing = 2;
    double bad[3] = {1, 0.5, 1.5};
    c.elastic_speed = bad;
    sim_error err;
    sim_error_clear(&err);
    CHECK(campaign_config_check(&c, &err) != 0);
}

/* Switches and cables: one stream per cause at parts x rate. Failures per
 * replica follow that rate over the whole run (they interrupt restarts
 * too); every failing part is one of the cause's; none takes a spare node
 * (no waits, no repairs, even with an empty pool); the cluster MTBF counts
 * them. */
typedef struct {
    uint64_t parts, seen, out_of_range;
} part_log;

static int log_part(void *ctx, const campaign_event *ev, sim_error *err)
{
    (void)err;
    part_log *p = ctx;
    if (ev->kind == CAMPAIGN_EVENT_FAILURE && ev->cause == 0) {
        p->seen++;
        p->out_of_range += ev->part < 0 || (uint64_t)ev->part >= p->parts || ev->gpu != -1 ||
                           ev->node != -1;
    }
    return 0;
}

static void test_network_parts(void)
{
    enum { N = 32 };
    campaign_config c = unit_job(500, 0, 1800, 30, 300, 31);
    c.n_causes = 2;
    snprintf(c.causes[0].name, sizeof c.causes[0].name, "leaf switch");
    c.causes[0].unit = CAMPAIGN_UNIT_SWITCH;
    c.causes[0].parts = 12;
    c.causes[0].rate_per_s = 1 / (12 * 20 * 3600.0); /* the 12: one every 20 h */
    snprintf(c.causes[1].name, sizeof c.causes[1].name, "cable");
    c.causes[1].unit = CAMPAIGN_UNIT_CABLE;
    c.causes[1].parts = 1000;
    c.causes[1].rate_per_s = 1 / (1000 * 30 * 3600.0); /* the 1000: one every 30 h */
    c.spares_limited = 1;
    c.spare_nodes = 0;
    c.repair_mean_s = 48 * 3600;
    campaign_result r[N];
    CHECK(run_all(&c, N, r) == 0);
    double rate[2][N];
    for (int i = 0; i < N; i++) {
        for (int k = 0; k < 2; k++)
            rate[k][i] = (double)r[i].failures_by_cause[k + 1] / r[i].time_to_train_s * 3600;
        CHECK_INT_EQ(r[i].failures, r[i].failures_by_cause[1] + r[i].failures_by_cause[2]);
        CHECK(r[i].spare_wait_s == 0 && r[i].repairs == 0);
        CHECK_REL(r[i].cluster_mtbf_s, 1 / (1 / (20 * 3600.0) + 1 / (30 * 3600.0)), 1e-12);
    }
    for (int k = 0; k < 2; k++) {
        campaign_stat st = campaign_stat_of(rate[k], N);
        printf("%s: %.5f +- %.5f failures per hour (expected %.5f)\n", c.causes[k].name, st.mean,
               st.ci95, k ? 1 / 30.0 : 1 / 20.0);
        CHECK(fabs(st.mean - (k ? 1 / 30.0 : 1 / 20.0)) <= 1.5 * st.ci95);
    }
    part_log log = {12, 0, 0};
    campaign_sink sink = {.ctx = &log, .event = log_part};
    sim_error err;
    sim_error_clear(&err);
    campaign_result one;
    CHECK(campaign_run(&c, &sink, NULL, NULL, &one, &err) == 0);
    CHECK_INT_EQ(log.seen, one.failures_by_cause[1]);
    CHECK(log.seen > 10 && log.out_of_range == 0);
    /* Weibull and silent network parts, or none counted, are refused */
    c.causes[0].parts = 0;
    CHECK(campaign_config_check(&c, &err) != 0);
}

/* Detection drawn per failure: a health check every P finds a failure
 * after U(0, P) (mean P/2); a collective timeout T caps it (mean
 * T - T^2/(2P)). Every restart lies in [u0, u0 + cap]; the mean restart
 * matches; the first-order ETTR counts the mean detection. */
typedef struct {
    double lo, hi, sum;
    uint64_t n;
} restart_log;

static int log_restart(void *ctx, const campaign_event *ev, sim_error *err)
{
    (void)err;
    restart_log *l = ctx;
    if (ev->kind == CAMPAIGN_EVENT_RESTART_DONE) {
        l->lo = fmin(l->lo, ev->duration_s);
        l->hi = fmax(l->hi, ev->duration_s);
        l->sum += ev->duration_s;
        l->n++;
    }
    return 0;
}

static void test_detection(void)
{
    const double u0 = 300, period = 1200;
    const double timeouts[] = {0, 300};
    for (int k = 0; k < 2; k++) {
        campaign_config c = unit_job(5000, 10 * 3600, 1800, 30, u0, 37);
        c.health_check_s = period;
        c.collective_timeout_s = timeouts[k];
        double mean = k ? 300 - 300.0 * 300 / (2 * period) : period / 2;
        CHECK_NEAR(campaign_mean_detection_s(&c), mean, 1e-9);
        restart_log l = {INFINITY, 0, 0, 0};
        campaign_sink sink = {.ctx = &l, .event = log_restart};
        campaign_result r;
        sim_error err;
        sim_error_clear(&err);
        CHECK(campaign_run(&c, &sink, NULL, NULL, &r, &err) == 0);
        double cap = k ? timeouts[k] : period;
        printf("health check %.0f s, timeout %.0f s: %llu restarts in [%.1f, %.1f] s, mean %.1f "
               "(expected %.1f)\n", period, timeouts[k], (unsigned long long)l.n, l.lo, l.hi,
               l.sum / (double)l.n, u0 + mean);
        CHECK(l.n > 300);
        CHECK(l.lo >= u0 - 1e-6 && l.hi <= u0 + cap + 1e-6);
        /* a 95 % band for the mean of n draws of U(0, P) (sd P/sqrt(12)), capped or not */
        CHECK(fabs(l.sum / (double)l.n - (u0 + mean)) <= 2 * period / sqrt(12.0 * (double)l.n));
        CHECK_NEAR(r.ettr_first_order_frac,
                   (1 - (u0 + mean + r.checkpoint_interval_s / 2) / (10 * 3600.0)) /
                       (1 + 30 / r.checkpoint_interval_s),
                   1e-12);
    }
}

/* Stragglers. (a) Never drained, no failures, instant checkpoints: after
 * the first node turns slow at t1 the job runs at speed s to the end, so
 * the stretch is exactly (W - t1)(1/s - 1). (b) Drained 1 h after turning
 * slow, at the next checkpoint: every drain is a restart (no failures),
 * the stretch per drain lies between (1 h - its checkpoints)(1 - s) and
 * (1 h + tau/s)(1 - s), nothing is lost, time is conserved. (c) Slower stragglers cost
 * more; draining sooner costs less stretch. */
typedef struct {
    double first_slow;
    uint64_t slow_events, drain_events;
} slow_log;

static int log_slow(void *ctx, const campaign_event *ev, sim_error *err)
{
    (void)err;
    slow_log *l = ctx;
    if (ev->kind == CAMPAIGN_EVENT_STRAGGLER) {
        if (!l->slow_events++)
            l->first_slow = ev->time_s;
        CHECK(ev->node >= 0 && ev->gpu == -1);
    }
    l->drain_events += ev->kind == CAMPAIGN_EVENT_DRAIN;
    return 0;
}

static double conserved_total(const campaign_result *r)
{
    return r->compute_time_s + r->rework_s + r->checkpoint_time_s + r->checkpoint_aborted_s +
           r->restart_time_s + r->persist_slowdown_s + r->elastic_slowdown_s +
           r->straggler_slowdown_s + r->maintenance_time_s;
}

static void test_stragglers(void)
{
    sim_error err;
    sim_error_clear(&err);
    /* (a) */
    campaign_config c = unit_job(100, 0, 1800, 0, 600, 41);
    c.gpu_count = 64; /* 8 nodes; the compute stays 100 h with 64x the tokens */
    c.train_tokens *= 64;
    c.straggler_rate_per_s = 1 / (8 * 20 * 3600.0); /* one of the 8 every 20 h */
    c.straggler_speed = 0.8;
    c.straggler_drain_s = 1e9;
    slow_log l = {0, 0, 0};
    campaign_sink sink = {.ctx = &l, .event = log_slow};
    campaign_result r;
    CHECK(campaign_run(&c, &sink, NULL, NULL, &r, &err) == 0);
    CHECK(l.slow_events >= 1 && r.drains == 0 && r.restarts == 0);
    CHECK_REL(r.straggler_slowdown_s, (r.compute_time_s - l.first_slow) * (1 / 0.8 - 1), 1e-9);
    CHECK_REL(conserved_total(&r), r.time_to_train_s, 1e-12);
    printf("straggler never drained: first at %.1f h, stretch %.2f h of %.0f h\n",
           l.first_slow / 3600, r.straggler_slowdown_s / 3600, r.compute_time_s / 3600);
    /* (b) */
    enum { N = 16 };
    campaign_result rr[N];
    c = unit_job(500, 0, 1800, 60, 600, 43);
    c.gpu_count = 64;
    c.train_tokens *= 64;
    c.straggler_rate_per_s = 1 / (8 * 10 * 3600.0);
    c.straggler_speed = 0.5;
    c.straggler_drain_s = 3600;
    CHECK(run_all(&c, N, rr) == 0);
    for (int i = 0; i < N; i++) {
        CHECK_REL(conserved_total(&rr[i]), rr[i].time_to_train_s, 1e-9);
        /* a restart per drain event (nodes due together go together) */
        CHECK(rr[i].restarts <= rr[i].drains && rr[i].drains <= rr[i].stragglers);
        CHECK(rr[i].restarts > 10);
        CHECK(rr[i].rework_s == 0); /* a drain loses nothing */
        /* slow spells drained together overlap: bound the stretch per event */
        double per = rr[i].straggler_slowdown_s / (double)rr[i].restarts;
        if (!(per >= (3600 - 3 * 60) * 0.5 * 0.9 && per <= (3600 + 1800 / 0.5 + 60) * 0.5 * 1.1))
            printf("per drain %.1f s\n", per);
        CHECK(per >= (3600 - 3 * 60) * 0.5 * 0.9 && per <= (3600 + 1800 / 0.5 + 60) * 0.5 * 1.1);
    }
    l = (slow_log){0, 0, 0};
    CHECK(campaign_run(&c, &sink, NULL, NULL, &r, &err) == 0);
    CHECK_INT_EQ(l.drain_events, r.restarts); /* one event per drain, nodes drained at once */
    CHECK_INT_EQ(l.slow_events, r.stragglers);
    /* (c) */
    double speeds[] = {0.9, 0.7, 0.5}, drains[] = {600, 3600, 4 * 3600}, prev = 0;
    for (int k = 0; k < 3; k++) {
        c.straggler_speed = speeds[k];
        c.straggler_drain_s = 3600;
        CHECK(run_all(&c, N, rr) == 0);
        double t = 0;
        for (int i = 0; i < N; i++)
            t += rr[i].time_to_train_s / N;
        printf("straggler speed %.1f, drained after 1 h: time to train %.2f h\n", speeds[k],
               t / 3600);
        CHECK(t > prev);
        prev = t;
    }
    prev = 0;
    c.straggler_speed = 0.5;
    for (int k = 0; k < 3; k++) {
        c.straggler_drain_s = drains[k];
        CHECK(run_all(&c, N, rr) == 0);
        double stretch = 0;
        for (int i = 0; i < N; i++)
            stretch += rr[i].straggler_slowdown_s / N;
        printf("straggler speed 0.5, drained after %.1f h: stretch %.2f h\n", drains[k] / 3600,
               stretch / 3600);
        CHECK(stretch > prev);
        prev = stretch;
    }
}

int main(void)
{
    test_replicas_deterministic();
    test_first_order_within_ci();
    test_daly_optimum();
    test_spare_pool();
    test_no_progress_gives_up();
    test_async_checkpoints();
    test_weibull_causes();
    test_maintenance();
    test_silent_corruption();
    test_rack_failures();
    test_elastic();
    test_network_parts();
    test_detection();
    test_stragglers();
    return check_report();
}
