/* test_campaign_adapt.c - the checkpoint interval adapted to the failure
 * rate the job has seen (campaign_config.checkpoint_adapt_window_s,
 * models/campaign_adapt.c; docs/failures.md "An adaptive checkpoint
 * interval"):
 *
 *  - with an estimate that never moves (memory 1e15 s) the run is the fixed
 *    run at Daly's interval for the prior, bit for bit;
 *  - every compute segment that is not cut short runs exactly the
 *    iterations of Daly's optimum for the rate the test computes from the
 *    failures before it: rate(t) = prior e^(-t/W) + (1/W) sum e^(-(t - t_i)/W);
 *  - a prior four times too optimistic (the interval set for a 16 h MTBF on
 *    a 4 h cluster): adapting recovers most of the ETTR the wrong interval
 *    loses, and ends near Daly's interval for the true rate;
 *  - conservation; the refusals of campaign_config_check.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "campaign.h"
#include "check.h"
#include "campaign_checks.h"

#define HOUR 3600.0

static campaign_config base_config(double true_mtbf_s, double prior_mtbf_s, double window_s)
{
    campaign_config c = {
        .gpu_count = 1024,
        .gpu_peak_flops_per_s = 989.4e12,
        .mfu_frac = 0.4,
        .model_params = 70e9,
        .train_tokens = 1e12, /* 1.04e6 s of compute: 12 days */
        .tokens_per_iteration = 1e6,
        .gpu_failure_rate_per_s = 1.0 / (1024 * true_mtbf_s),
        .restart_s = 600,
        .checkpoint_write_s = 120,
        .checkpoint_adapt_window_s = window_s,
        .checkpoint_adapt_prior_rate_per_s = 1.0 / prior_mtbf_s,
        .seed = 5,
    };
    c.checkpoint_interval_s = campaign_daly_interval_s(c.checkpoint_write_s, prior_mtbf_s);
    return c;
}

/* what a run did: its failures' times and its compute segments */
#define MAX_RECORDS 100000
typedef struct record {
    unsigned n_fail, n_seg;
    double fail_s[MAX_RECORDS];
    campaign_segment seg[MAX_RECORDS];
} record;

static int on_event(void *ctx, const campaign_event *ev, sim_error *err)
{
    (void)err;
    record *r = ctx;
    if (ev->kind == CAMPAIGN_EVENT_FAILURE && r->n_fail < MAX_RECORDS)
        r->fail_s[r->n_fail++] = ev->time_s;
    return 0;
}

static int on_segment(void *ctx, const campaign_segment *seg, sim_error *err)
{
    (void)err;
    record *r = ctx;
    if (seg->state == CAMPAIGN_STATE_COMPUTE && r->n_seg < MAX_RECORDS)
        r->seg[r->n_seg++] = *seg;
    return 0;
}

static void test_frozen_estimate_is_the_fixed_run(void)
{
    campaign_config fixed = base_config(4 * HOUR, 4 * HOUR, 0);
    campaign_config frozen = base_config(4 * HOUR, 4 * HOUR, 1e15);
    campaign_result a, b;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(campaign_run(&fixed, NULL, NULL, NULL, &a, &err), 0);
    CHECK_INT_EQ(campaign_run(&frozen, NULL, NULL, NULL, &b, &err), 0);
    CHECK(a.failures > 20);
    CHECK(a.time_to_train_s == b.time_to_train_s);
    CHECK(a.event_digest == b.event_digest);
    CHECK_INT_EQ(a.checkpoints, b.checkpoints);
    CHECK_INT_EQ(b.checkpoint_adaptations, 0);
    CHECK(b.checkpoint_interval_min_s == a.checkpoint_interval_s);
    CHECK(b.checkpoint_interval_max_s == a.checkpoint_interval_s);
    check_conservation(&b);
}

/* Daly's iterations for the rate the failures before t give */
static double expected_ratio(const campaign_config *c, const record *rec, double t, double t_it)
{
    double w = c->checkpoint_adapt_window_s;
    double rate = c->checkpoint_adapt_prior_rate_per_s * exp(-t / w);
    for (unsigned i = 0; i < rec->n_fail && rec->fail_s[i] <= t; i++)
        rate += exp(-(t - rec->fail_s[i]) / w) / w;
    return campaign_daly_interval_s(c->checkpoint_write_s, 1 / rate) / t_it;
}

static void test_segments_follow_the_estimate(void)
{
    campaign_config c = base_config(4 * HOUR, 16 * HOUR, 12 * HOUR);
    record *rec = calloc(1, sizeof *rec);
    campaign_result r;
    sim_error err;
    sim_error_clear(&err);
    campaign_sink sink = {.ctx = rec, .event = on_event, .segment = on_segment};
    CHECK_INT_EQ(campaign_run(&c, &sink, NULL, NULL, &r, &err), 0);
    check_conservation(&r);
    CHECK_INT_EQ(rec->n_fail, r.failures);
    CHECK(r.failures > 30);
    CHECK(r.checkpoint_adaptations > 10);
    double t_it = r.iteration_time_s;
    uint64_t n_it = r.iterations;
    unsigned whole = 0, matched = 0;
    for (unsigned i = 0; i < rec->n_seg; i++) {
        const campaign_segment *s = &rec->seg[i];
        if (s->was_interrupted || s->iteration_end == (int64_t)n_it)
            continue; /* cut short, or the last (capped at the run's end) */
        whole++;
        double ratio = expected_ratio(&c, rec, s->start_s, t_it);
        long long k = llround(ratio);
        if (k < 1)
            k = 1;
        int64_t ran = s->iteration_end - s->iteration_start;
        /* exact, unless the ratio sits within rounding of a half */
        if (ran == k || fabs(ratio - floor(ratio) - 0.5) < 1e-9)
            matched++;
        else
            fprintf(stderr, "segment at %.1f s ran %lld iterations, Daly's for the estimate "
                    "%.6f\n", s->start_s, (long long)ran, ratio);
        double interval = (double)ran * t_it;
        CHECK(interval >= r.checkpoint_interval_min_s - 1e-9 * interval);
        CHECK(interval <= r.checkpoint_interval_max_s + 1e-9 * interval);
    }
    CHECK(whole > 50);
    CHECK_INT_EQ(matched, whole);
    /* the estimate rose from the 16 h prior towards the 4 h truth */
    CHECK(r.checkpoint_interval_min_s < 0.7 * r.checkpoint_interval_s);
    free(rec);
}

static double mean_ettr(const campaign_config *c, unsigned n, double *mean_interval_s)
{
    campaign_result *res = calloc(n, sizeof *res);
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(campaign_run(c, NULL, NULL, NULL, &res[0], &err), 0);
    CHECK_INT_EQ(campaign_run_replicas(c, n, res, NULL, NULL, &err), 0);
    double ettr = 0, interval = 0;
    for (unsigned i = 0; i < n; i++) {
        check_conservation(&res[i]);
        ettr += res[i].ettr_frac / n;
        /* compute per checkpoint written: the mean interval used */
        interval += res[i].compute_time_s / (double)res[i].checkpoints / n;
    }
    *mean_interval_s = interval;
    free(res);
    return ettr;
}

static void test_wrong_prior_recovered(void)
{
    const unsigned n = 8;
    double i_fixed, i_adapt, i_true;
    campaign_config wrong = base_config(HOUR, 16 * HOUR, 0);
    campaign_config adapt = base_config(HOUR, 16 * HOUR, 12 * HOUR);
    campaign_config right = base_config(HOUR, HOUR, 0);
    double e_fixed = mean_ettr(&wrong, n, &i_fixed);
    double e_adapt = mean_ettr(&adapt, n, &i_adapt);
    double e_true = mean_ettr(&right, n, &i_true);
    fprintf(stderr, "ETTR: interval for the 16 h prior %.4f (%.0f s), adaptive %.4f (%.0f s), "
            "Daly's for the true 1 h %.4f (%.0f s)\n", e_fixed, i_fixed, e_adapt, i_adapt, e_true,
            i_true);
    CHECK(e_adapt > e_fixed + 0.05);
    /* most of the loss recovered: within a third of the gap to the best */
    CHECK(e_true - e_adapt < (e_true - e_fixed) / 3);
    /* and the interval it used is near the true Daly's, far from the prior's */
    CHECK(fabs(i_adapt - i_true) < 0.5 * i_true);
    CHECK(i_fixed > 2.5 * i_true);
}

static void test_refusals(void)
{
    sim_error err;
    campaign_config c = base_config(HOUR, HOUR, HOUR);
    sim_error_clear(&err);
    CHECK_INT_EQ(campaign_config_check(&c, &err), 0);
    campaign_config bad = c;
    bad.checkpoint_every = 10;
    CHECK(campaign_config_check(&bad, &err) != 0);
    bad = c;
    bad.checkpoint_write_s = 0;
    CHECK(campaign_config_check(&bad, &err) != 0);
    bad = c;
    bad.checkpoint_adapt_window_s = INFINITY;
    CHECK(campaign_config_check(&bad, &err) != 0);
    bad = c;
    bad.checkpoint_adapt_prior_rate_per_s = NAN;
    CHECK(campaign_config_check(&bad, &err) != 0);
    CHECK(strstr(err.msg, "adaptive") != NULL);
}

int main(void)
{
    test_frozen_estimate_is_the_fixed_run();
    test_segments_follow_the_estimate();
    test_wrong_prior_recovered();
    test_refusals();
    return check_report();
}
