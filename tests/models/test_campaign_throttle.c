/* test_campaign_throttle.c - thermal throttling by the hour (campaign.h
 * throttle_*, models/campaign_throttle.c; docs/failures.md "Thermal
 * throttling"), with hot hours and a speed whose answer is known:
 *
 *  - no hot hour: the run without throttling, bit for bit (with GPU
 *    failures, a degraded-free run, async checkpoints off);
 *  - every hour hot, no failure: the stretch is compute x (1/v - 1) and the
 *    time to train the unthrottled one plus it, to 1e-9;
 *  - a square wave (h hot hours in every 24), no failure: the stretch is the
 *    compute done in hot hours x (1/v - 1), so it never falls as h grows, and
 *    is below the all-hot stretch; the wall time in hot hours is counted;
 *  - conservation with the throttle stretch in every run (with failures and
 *    stragglers too); replicas agree on 1 and 2 threads;
 *  - a bad speed is refused.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "campaign.h"
#include "check.h"
#include "campaign_checks.h"

enum { HOURS = 24 * 7 };

static campaign_config base_config(int failures)
{
    campaign_config c = {
        .gpu_count = 1024,
        .gpu_peak_flops_per_s = 989.4e12,
        .mfu_frac = 0.4,
        .model_params = 70e9,
        .train_tokens = 2e11, /* 2.07e5 s of compute: 2.4 days */
        .tokens_per_iteration = 4e6,
        .gpu_failure_rate_per_s = failures ? 2e-4 / 3600 : 0,
        .restart_s = 600,
        .checkpoint_interval_s = 1800,
        .checkpoint_write_s = 30,
        .seed = 7,
    };
    return c;
}

static campaign_result run(const campaign_config *c)
{
    campaign_result r;
    sim_error err;
    sim_error_clear(&err);
    memset(&r, 0, sizeof r);
    CHECK_INT_EQ(campaign_run(c, NULL, NULL, NULL, &r, &err), 0);
    check_conservation(&r);
    return r;
}

static void throttle(campaign_config *c, const unsigned char *hot, double v)
{
    c->throttle_hot = hot;
    c->throttle_hours = HOURS;
    c->throttle_speed = v;
}

static void test_never_hot_is_today(void)
{
    static unsigned char cool[HOURS];
    campaign_config a = base_config(1), b = base_config(1);
    a.straggler_rate_per_s = b.straggler_rate_per_s = 1e-5 / 3600;
    a.straggler_speed = b.straggler_speed = 0.9;
    a.straggler_drain_s = b.straggler_drain_s = 3600;
    throttle(&b, cool, 0.5);
    campaign_result ra = run(&a), rb = run(&b);
    CHECK(ra.failures > 0);
    CHECK(ra.time_to_train_s == rb.time_to_train_s && ra.event_digest == rb.event_digest);
    CHECK(ra.rework_s == rb.rework_s && ra.straggler_slowdown_s == rb.straggler_slowdown_s);
    CHECK(rb.throttle_slowdown_s == 0 && rb.throttle_hot_s == 0 && !rb.throttled);
}

static void test_always_hot_closed_form(void)
{
    static unsigned char hot[HOURS];
    memset(hot, 1, sizeof hot);
    double v = 0.8;
    campaign_config a = base_config(0), b = base_config(0);
    throttle(&b, hot, v);
    campaign_result ra = run(&a), rb = run(&b);
    double want = ra.compute_time_s * (1 / v - 1);
    CHECK_REL(rb.throttle_slowdown_s, want, 1e-9);
    CHECK_REL(rb.time_to_train_s, ra.time_to_train_s + want, 1e-9);
    CHECK(rb.throttle_hot_s == rb.time_to_train_s && rb.throttle_changes == 0);
    CHECK(rb.throttled);
}

static void test_square_wave_monotone(void)
{
    static unsigned char hot[HOURS];
    double v = 0.7, prev = 0, all;
    {
        memset(hot, 1, sizeof hot);
        campaign_config c = base_config(0);
        throttle(&c, hot, v);
        all = run(&c).throttle_slowdown_s;
    }
    campaign_config a = base_config(0);
    double today = run(&a).time_to_train_s;
    for (unsigned h = 1; h < 24; h += 2) { /* hours 12 .. 12 + h - 1 of every day hot */
        for (unsigned k = 0; k < HOURS; k++)
            hot[k] = (k % 24) >= 12 && (k % 24) < 12 + h;
        campaign_config c = base_config(0);
        throttle(&c, hot, v);
        campaign_result r = run(&c);
        CHECK(r.throttle_slowdown_s >= prev && r.throttle_slowdown_s < all);
        CHECK_REL(r.time_to_train_s, today + r.throttle_slowdown_s, 1e-9);
        /* in a hot hour the job computes (or writes, at most 30 s of each
         * 30 min): the stretch is at most the hot wall time x (1 - v) */
        CHECK(r.throttle_slowdown_s <= r.throttle_hot_s * (1 - v) * (1 + 1e-9));
        CHECK(r.throttle_slowdown_s >= r.throttle_hot_s * (1 - v) * (1 - 30.0 / 1800) * 0.99);
        CHECK(r.throttle_changes > 0 && r.throttled);
        prev = r.throttle_slowdown_s;
    }
}

static void test_failures_threads_refusal(void)
{
    static unsigned char hot[HOURS];
    for (unsigned k = 0; k < HOURS; k++)
        hot[k] = (k % 24) >= 10 && (k % 24) < 17;
    campaign_config c = base_config(1);
    throttle(&c, hot, 0.6);
    campaign_result r = run(&c);
    CHECK(r.failures > 0 && r.throttle_slowdown_s > 0);
    enum { N = 6 };
    campaign_result one[N], two[N];
    memset(one, 0, sizeof one);
    memset(two, 0, sizeof two);
    sim_error err;
    sim_error_clear(&err);
    int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    CHECK_INT_EQ(campaign_run_replicas(&c, N, one, NULL, NULL, &err), 0);
    omp_set_num_threads(2);
    CHECK_INT_EQ(campaign_run_replicas(&c, N, two, NULL, NULL, &err), 0);
    omp_set_num_threads(threads);
    for (unsigned i = 1; i < N; i++) {
        check_conservation(&one[i]);
        CHECK(one[i].time_to_train_s == two[i].time_to_train_s);
        CHECK(one[i].event_digest == two[i].event_digest);
        CHECK(one[i].throttle_slowdown_s == two[i].throttle_slowdown_s);
    }
    campaign_mc mc;
    campaign_mc_summarize(one + 1, N - 1, &mc);
    CHECK(mc.throttled && mc.throttle_slowdown_s.mean > 0);
    c.throttle_speed = 0;
    CHECK_INT_EQ(campaign_run(&c, NULL, NULL, NULL, &r, &err), SIM_ERR_INPUT);
    c.throttle_speed = 1.5;
    sim_error_clear(&err);
    CHECK_INT_EQ(campaign_run(&c, NULL, NULL, NULL, &r, &err), SIM_ERR_INPUT);
}

int main(void)
{
    test_never_hot_is_today();
    test_always_hot_closed_form();
    test_square_wave_monotone();
    test_failures_threads_refusal();
    return check_report();
}
