/* test_campaign.c - the campaign tier against closed forms.
 *
 *  - failures off: time to train = 6ND/(G peak MFU) + checkpoints x w exactly
 *    (to rounding), with checkpoints = ceil(iterations / k);
 *  - conservation: elapsed = productive + rework + writes + aborted writes
 *    + restarts, in every run;
 *  - exponential failures at cluster rate L: the lost work of a failure that
 *    hits compute is the time into a segment of length tau, a truncated
 *    exponential with mean 1/L - tau/(e^(L tau) - 1) (= tau/2 to first order);
 *  - ETTR: the exact renewal value for this model is
 *        tau / E[T_seg],  E[T_seg] = (e^(L(tau+w)) - 1) e^(L u0) / L
 *    (a segment of tau + w restarted after each failure; a restart of u0 is
 *    itself restarted by failures), and the first-order model
 *    (1 - L(u0 + tau/2)) / (1 + w/tau) differs from it by O((L tau)^2);
 *  - determinism across seeds and OpenMP thread counts; monotone responses.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "campaign.h"
#include "check.h"
#include "campaign_checks.h"
#include "failure_process.h"

typedef struct collector {
    size_t n_events, n_segments;
    double lost_compute_sum, lost_compute_sq;
    size_t n_lost_compute;
    double segment_time[4];
    double last_end;
    int contiguous;
    size_t kind_count[5];
} collector;

static int collect_event(void *ctx, const campaign_event *ev, sim_error *err)
{
    (void)err;
    collector *c = ctx;
    c->n_events++;
    c->kind_count[ev->kind]++;
    if (ev->kind == CAMPAIGN_EVENT_FAILURE && ev->state == CAMPAIGN_STATE_COMPUTE) {
        c->lost_compute_sum += ev->lost_work_s;
        c->lost_compute_sq += ev->lost_work_s * ev->lost_work_s;
        c->n_lost_compute++;
    }
    return 0;
}

static int collect_segment(void *ctx, const campaign_segment *seg, sim_error *err)
{
    (void)err;
    collector *c = ctx;
    if (seg->start_s != c->last_end)
        c->contiguous = 0;
    c->last_end = seg->end_s;
    c->segment_time[seg->state] += seg->end_s - seg->start_s;
    c->n_segments++;
    return 0;
}

static campaign_config base_config(void)
{
    campaign_config c = {
        .gpu_count = 1024,
        .gpu_peak_flops_per_s = 989.4e12,
        .mfu_frac = 0.4,
        .model_params = 70e9,
        .train_tokens = 2e12 + 12345, /* not a whole number of iterations */
        .tokens_per_iteration = 4e6,
        .gpu_failure_rate_per_s = 0,
        .restart_s = 600,
        .checkpoint_interval_s = 1800,
        .checkpoint_write_s = 30,
        .seed = 7,
    };
    return c;
}

static void test_failure_free_closed_form(void)
{
    campaign_config c = base_config();
    campaign_result r;
    sim_error err;
    sim_error_clear(&err);
    collector col = {.contiguous = 1};
    campaign_sink sink = {.ctx = &col, .event = collect_event, .segment = collect_segment};
    CHECK_INT_EQ(campaign_run(&c, &sink, NULL, NULL, &r, &err), 0);

    double rate = c.gpu_count * c.gpu_peak_flops_per_s * c.mfu_frac;
    double t_it = 6 * c.model_params * c.tokens_per_iteration / rate;
    uint64_t n_it = (uint64_t)ceil(c.train_tokens / c.tokens_per_iteration);
    uint64_t k = (uint64_t)llround(c.checkpoint_interval_s / t_it);
    uint64_t n_ckpt = (n_it + k - 1) / k;
    double compute = 6 * c.model_params * c.train_tokens / rate;

    CHECK_REL(r.iteration_time_s, t_it, 1e-15);
    CHECK_INT_EQ(r.iterations, n_it);
    CHECK_INT_EQ(r.checkpoint_every_iterations, k);
    CHECK_INT_EQ(r.checkpoints, n_ckpt);
    CHECK_REL(r.compute_time_s, compute, 1e-15);
    CHECK_REL(r.time_to_train_s, compute + (double)n_ckpt * c.checkpoint_write_s, 1e-12);
    CHECK_REL(r.ettr_frac, compute / (compute + (double)n_ckpt * c.checkpoint_write_s), 1e-12);
    CHECK_INT_EQ(r.failures, 0);
    CHECK_INT_EQ(r.restarts, 0);
    CHECK(r.rework_s == 0 && r.restart_time_s == 0 && r.checkpoint_aborted_s == 0);
    CHECK_REL(r.total_flops, 6 * c.model_params * c.train_tokens, 1e-15);
    check_conservation(&r);
    /* events: start, one per checkpoint, done; timeline alternates compute/checkpoint */
    CHECK_INT_EQ(col.n_events, n_ckpt + 2);
    CHECK_INT_EQ(col.kind_count[CAMPAIGN_EVENT_CHECKPOINT_DONE], n_ckpt);
    CHECK_INT_EQ(col.n_segments, 2 * n_ckpt);
    CHECK(col.contiguous);
    CHECK_REL(col.last_end, r.time_to_train_s, 1e-15);
    CHECK_REL(col.segment_time[CAMPAIGN_STATE_COMPUTE], compute, 1e-9);
}

/* checkpoint interval longer than the run: one segment, the final checkpoint */
static void test_single_segment(void)
{
    campaign_config c = base_config();
    c.checkpoint_interval_s = 1e9;
    campaign_result r;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(campaign_run(&c, NULL, NULL, NULL, &r, &err), 0);
    CHECK_INT_EQ(r.checkpoints, 1);
    CHECK_INT_EQ(r.checkpoint_every_iterations, r.iterations);
    CHECK_REL(r.time_to_train_s, r.compute_time_s + c.checkpoint_write_s, 1e-15);
}

/* a configuration where L tau = 0.1: many failures in a short simulation */
static campaign_config failing_config(uint64_t seed)
{
    campaign_config c = base_config();
    c.gpu_count = 1000;
    c.gpu_failure_rate_per_s = 1.0 / (1000.0 * 3600.0); /* cluster MTBF 1 h */
    c.checkpoint_interval_s = 360;                      /* ~0.1 h */
    c.checkpoint_write_s = 6;
    c.restart_s = 120;
    c.train_tokens = 3e13;
    c.seed = seed;
    return c;
}

static void test_exponential_failures(void)
{
    enum { REPLICAS = 12 };
    double ettr[REPLICAS], mean = 0;
    double lost_sum = 0, lost_sq = 0;
    size_t lost_n = 0;
    double L = 0, tau = 0, w = 0, u0 = 0, first_order = 0;
    for (int rep = 0; rep < REPLICAS; rep++) {
        campaign_config c = failing_config(1000 + (uint64_t)rep);
        campaign_result r;
        sim_error err;
        sim_error_clear(&err);
        collector col = {.contiguous = 1};
        campaign_sink sink = {.ctx = &col, .event = collect_event, .segment = collect_segment};
        CHECK_INT_EQ(campaign_run(&c, &sink, NULL, NULL, &r, &err), 0);
        check_conservation(&r);
        CHECK(col.contiguous);
        CHECK_INT_EQ(col.kind_count[CAMPAIGN_EVENT_FAILURE], r.failures);
        CHECK_INT_EQ(col.kind_count[CAMPAIGN_EVENT_RESTART_DONE], r.restarts);
        CHECK_INT_EQ(col.kind_count[CAMPAIGN_EVENT_CHECKPOINT_DONE], r.checkpoints);
        CHECK(r.failures > 1000);
        CHECK(r.failures >= r.restarts);
        CHECK_REL(col.segment_time[CAMPAIGN_STATE_RESTART], r.restart_time_s, 1e-9);
        CHECK_REL(col.segment_time[CAMPAIGN_STATE_COMPUTE], r.compute_time_s + r.rework_s, 1e-9);
        ettr[rep] = r.ettr_frac;
        mean += r.ettr_frac / REPLICAS;
        lost_sum += col.lost_compute_sum;
        lost_sq += col.lost_compute_sq;
        lost_n += col.n_lost_compute;
        L = c.gpu_count * c.gpu_failure_rate_per_s;
        tau = r.checkpoint_interval_s;
        w = c.checkpoint_write_s;
        u0 = c.restart_s;
        first_order = r.ettr_first_order_frac;
    }
    /* lost work per failure during compute: truncated exponential on [0, tau] */
    double lost_mean = lost_sum / (double)lost_n;
    double lost_sd = sqrt(lost_sq / (double)lost_n - lost_mean * lost_mean);
    double expect_lost = 1.0 / L - tau / expm1(L * tau);
    CHECK_NEAR(lost_mean, expect_lost, 4 * lost_sd / sqrt((double)lost_n));
    CHECK_REL(lost_mean, tau / 2, 0.05); /* "about half the interval" */

    double sd = 0;
    for (int rep = 0; rep < REPLICAS; rep++)
        sd += (ettr[rep] - mean) * (ettr[rep] - mean) / (REPLICAS - 1);
    sd = sqrt(sd);
    double exact = tau / (expm1(L * (tau + w)) * exp(L * u0) / L);
    double ci = 4 * sd / sqrt((double)REPLICAS);
    printf("ETTR simulated %.5f +- %.5f, exact %.5f, first-order %.5f\n", mean, ci, exact,
           first_order);
    CHECK_NEAR(mean, exact, ci + 1e-4);
    /* the first-order model is within its O((L tau)^2) error of the simulation */
    CHECK_NEAR(mean, first_order, fabs(exact - first_order) + ci + 1e-4);
    CHECK_NEAR(first_order, (1 - L * (u0 + tau / 2)) / (1 + w / tau), 1e-15);
}

static void test_determinism(void)
{
    campaign_config c = failing_config(99);
    c.train_tokens = 3e12;
    campaign_result a, b, d, t1, t2;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(campaign_run(&c, NULL, NULL, NULL, &a, &err), 0);
    CHECK_INT_EQ(campaign_run(&c, NULL, NULL, NULL, &b, &err), 0);
    CHECK(memcmp(&a, &b, sizeof a) == 0);
    c.seed = 100;
    CHECK_INT_EQ(campaign_run(&c, NULL, NULL, NULL, &d, &err), 0);
    CHECK(a.event_digest != d.event_digest);
    c.seed = 99;
    omp_set_num_threads(1);
    CHECK_INT_EQ(campaign_run(&c, NULL, NULL, NULL, &t1, &err), 0);
    omp_set_num_threads(2);
    CHECK_INT_EQ(campaign_run(&c, NULL, NULL, NULL, &t2, &err), 0);
    CHECK(memcmp(&t1, &a, sizeof a) == 0);
    CHECK(memcmp(&t2, &a, sizeof a) == 0);
}

static void test_monotone(void)
{
    double prev_ettr = 2, prev_time = 0;
    /* more failures: lower ETTR, longer run (same seed: every failure time
     * scales with 1/rate) */
    for (int i = 0; i < 4; i++) {
        campaign_config c = failing_config(5);
        c.train_tokens = 3e12;
        c.gpu_failure_rate_per_s *= (double)(1 << i) / 4;
        campaign_result r;
        sim_error err;
        sim_error_clear(&err);
        CHECK_INT_EQ(campaign_run(&c, NULL, NULL, NULL, &r, &err), 0);
        CHECK(r.ettr_frac < prev_ettr);
        CHECK(r.time_to_train_s > prev_time);
        prev_ettr = r.ettr_frac;
        prev_time = r.time_to_train_s;
    }
    /* failure-free: more GPUs is faster, a longer write is slower */
    campaign_config c = base_config();
    campaign_result r1, r2, r3;
    sim_error err;
    sim_error_clear(&err);
    campaign_run(&c, NULL, NULL, NULL, &r1, &err);
    c.gpu_count *= 2;
    campaign_run(&c, NULL, NULL, NULL, &r2, &err);
    CHECK(r2.time_to_train_s < r1.time_to_train_s);
    c.checkpoint_write_s *= 2;
    campaign_run(&c, NULL, NULL, NULL, &r3, &err);
    CHECK(r3.time_to_train_s > r2.time_to_train_s);
}

static int stop_at_half(void *ctx, double progress, double sim_time_s)
{
    (void)sim_time_s;
    int *calls = ctx;
    (*calls)++;
    return progress >= 0.5;
}

static void test_poll_interrupts(void)
{
    campaign_config c = failing_config(3);
    int calls = 0;
    campaign_result r;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(campaign_run(&c, NULL, stop_at_half, &calls, &r, &err), SIM_ERR_INTERRUPTED);
    CHECK(calls > 0);
    CHECK_INT_EQ(err.code, SIM_ERR_INTERRUPTED);
}

static void test_bad_config(void)
{
    campaign_config c = base_config();
    campaign_result r;
    sim_error err;
    c.mfu_frac = 1.5;
    sim_error_clear(&err);
    CHECK_INT_EQ(campaign_run(&c, NULL, NULL, NULL, &r, &err), SIM_ERR_INPUT);
    CHECK_CONTAINS(err.msg, "MFU");
    c = base_config();
    c.checkpoint_interval_s = 0;
    sim_error_clear(&err);
    CHECK_INT_EQ(campaign_run(&c, NULL, NULL, NULL, &r, &err), SIM_ERR_INPUT);
    CHECK_CONTAINS(err.msg, "interval");
}

/* campaign_outlook_of against its closed form, computed here by hand:
 * elapsed / compute = (e^{L d} - 1) e^{L u} / (L x) */
static void test_outlook_closed_form(void)
{
    campaign_config c = failing_config(1);
    campaign_outlook o;
    campaign_outlook_of(&c, &o);
    double L = 1000 * c.gpu_failure_rate_per_s, t_it = campaign_iteration_time_s(&c);
    double x = (double)llround(360 / t_it) * t_it, d = x + 6, u = 120;
    double want = log(expm1(L * d) * exp(L * u) / (L * x));
    CHECK_REL(o.interruption_rate_per_s, L, 1e-15);
    CHECK_REL(o.log_elapsed_per_compute, want, 1e-12);
    CHECK_REL(o.expected_ettr_frac, exp(-want), 1e-12);
    /* without failures: the writes only, d / x */
    campaign_config f = base_config();
    campaign_outlook_of(&f, &o);
    x = (double)llround(1800 / campaign_iteration_time_s(&f)) * campaign_iteration_time_s(&f);
    CHECK_REL(o.log_elapsed_per_compute, log((x + 30) / x), 1e-12);
    /* the simulated run lands near it, and its events well inside the cap */
    campaign_result r;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(campaign_run(&c, NULL, NULL, NULL, &r, &err), 0);
    campaign_outlook_of(&c, &o);
    CHECK_REL(r.ettr_frac, o.expected_ettr_frac, 0.05);
    CHECK((double)r.events_fired < o.expected_events);
    CHECK((double)r.events_fired > o.expected_events / 10);
}

/* Hopeless runs are refused at once, with the numbers (item 4). */
static void test_hopeless_refused(void)
{
    campaign_config c = failing_config(1);
    campaign_result r;
    sim_error err;
    /* expected ETTR just above and below 1/1000: restarts that put
     * ln(elapsed / compute) 0.01 above ln(1000), or 0.5 below (the simulation
     * must finish inside its 1000 x compute horizon) */
    for (int above = 0; above < 2; above++) {
        c = failing_config(1);
        c.train_tokens = 3e11;
        c.checkpoint_every = 1;
        c.checkpoint_write_s = 0;
        double t_it = campaign_iteration_time_s(&c), L = 1000 * c.gpu_failure_rate_per_s;
        c.restart_s = (log(1000) - log(expm1(L * t_it) / (L * t_it)) + (above ? 0.01 : -0.5)) / L;
        c.gpu_failure_rate_per_s *= 0; /* L from a named node cause instead */
        c.n_causes = 1;
        c.causes[0] = (campaign_cause){.name = "n", .unit = CAMPAIGN_UNIT_NODE,
                                       .rate_per_s = L / 125};
        c.gpus_per_node = 8;
        campaign_outlook o;
        campaign_outlook_of(&c, &o);
        CHECK_REL(o.log_elapsed_per_compute,
                  log(expm1(L * t_it) / (L * t_it)) + L * c.restart_s, 1e-12);
        sim_error_clear(&err);
        int rc = campaign_run(&c, NULL, NULL, NULL, &r, &err);
        if (above) {
            CHECK_INT_EQ(rc, SIM_ERR_INPUT);
            CHECK_CONTAINS(err.msg, "the job can make almost no progress: expected ETTR 0.000");
        } else {
            CHECK_INT_EQ(rc, 0);
            if (rc)
                fprintf(stderr, "%s\n", err.msg);
        }
    }
    c = base_config();
    c.mfu_frac = 1e-14;
    sim_error_clear(&err);
    CHECK_INT_EQ(campaign_run(&c, NULL, NULL, NULL, &r, &err), SIM_ERR_INPUT);
    CHECK_CONTAINS(err.msg, "the failure-free compute time is");
}

/* The hard cap on engine events ends a run with an error. */
static void test_event_cap(void)
{
    campaign_config c = failing_config(1);
    c.max_events = 10000;
    campaign_result r;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(campaign_run(&c, NULL, NULL, NULL, &r, &err), SIM_ERR_INPUT);
    CHECK_CONTAINS(err.msg, "the run stopped after 12288 engine events (at most 10000");
}

/* An interval longer than the run: only the final checkpoint (item 8). */
static void test_interval_beyond_run(void)
{
    const double intervals[] = {1e15 * 86400, 1e300, 1.7e308};
    for (int i = 0; i < 3; i++) {
        campaign_config c = base_config();
        c.checkpoint_interval_s = intervals[i];
        campaign_result r;
        sim_error err;
        sim_error_clear(&err);
        CHECK_INT_EQ(campaign_run(&c, NULL, NULL, NULL, &r, &err), 0);
        CHECK_INT_EQ(r.checkpoint_every_iterations, r.iterations);
        CHECK_INT_EQ(r.checkpoints, 1);
        CHECK_REL(r.checkpoint_interval_s, (double)r.iterations * r.iteration_time_s, 1e-15);
    }
}

/* Weibull shapes: Gamma(1 + 1/k) finite down to k = 1/170 (item 9). */
static void test_weibull_shape_bound(void)
{
    campaign_config c = failing_config(3);
    c.train_tokens = 3e12;
    c.n_causes = 1;
    c.causes[0] = (campaign_cause){.name = "w", .unit = CAMPAIGN_UNIT_GPU,
                                   .rate_per_s = c.gpu_failure_rate_per_s,
                                   .process = FAILURE_WEIBULL, .shape = 1.0 / 170};
    c.gpu_failure_rate_per_s = 0;
    campaign_result r;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(campaign_run(&c, NULL, NULL, NULL, &r, &err), 0);
    CHECK(isfinite(r.time_to_train_s) && r.ettr_frac > 0 && r.ettr_frac <= 1);
    c.causes[0].shape = 1.0 / 171;
    sim_error_clear(&err);
    CHECK_INT_EQ(campaign_run(&c, NULL, NULL, NULL, &r, &err), SIM_ERR_INPUT);
    CHECK_CONTAINS(err.msg, "from 1/170 to 100");
}

/* The total rate of every cause (the cluster MTBF's, and auto interval's). */
static void test_cluster_rate(void)
{
    campaign_config c = base_config(); /* 1024 GPUs: 128 nodes, 8 racks of 16 */
    c.gpu_failure_rate_per_s = 1e-9;
    c.nodes_per_rack = 16;
    c.n_causes = 4;
    c.causes[0] = (campaign_cause){.name = "node", .unit = CAMPAIGN_UNIT_NODE, .rate_per_s = 2e-8};
    c.causes[1] = (campaign_cause){.name = "rack", .unit = CAMPAIGN_UNIT_RACK, .rate_per_s = 3e-7};
    c.causes[2] = (campaign_cause){.name = "sw", .unit = CAMPAIGN_UNIT_SWITCH, .rate_per_s = 4e-7,
                                   .parts = 10};
    c.causes[3] = (campaign_cause){.name = "wb", .unit = CAMPAIGN_UNIT_GPU, .rate_per_s = 5e-9,
                                   .process = FAILURE_WEIBULL, .shape = 0.8};
    double want = 1024 * 1e-9 + 128 * 2e-8 + 8 * 3e-7 + 10 * 4e-7 + 1024 * 5e-9;
    CHECK_REL(campaign_cluster_failure_rate_per_s(&c), want, 1e-15);
    campaign_result r;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(campaign_run(&c, NULL, NULL, NULL, &r, &err), 0);
    CHECK_REL(r.cluster_mtbf_s, 1 / want, 1e-15);
}

/* The first-order ETTR is 0, not negative, where L(u0 + tau/2) >= 1. */
static void test_first_order_clamped(void)
{
    campaign_config c = failing_config(1);
    c.checkpoint_interval_s = 3 * 3600; /* L tau / 2 = 1.5 */
    campaign_result r;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(campaign_run(&c, NULL, NULL, NULL, &r, &err), 0);
    CHECK(r.ettr_first_order_frac == 0);
    CHECK(r.ettr_frac > 0 && r.ettr_frac < 0.5);
}

int main(void)
{
    test_failure_free_closed_form();
    test_single_segment();
    test_exponential_failures();
    test_determinism();
    test_monotone();
    test_poll_interrupts();
    test_bad_config();
    test_outlook_closed_form();
    test_hopeless_refused();
    test_event_cap();
    test_interval_beyond_run();
    test_weibull_shape_bound();
    test_cluster_rate();
    test_first_order_clamped();
    return check_report();
}
