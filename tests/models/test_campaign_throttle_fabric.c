/* test_campaign_throttle_fabric.c - thermal throttling on a degraded fabric
 * (campaign_config.fabric_hot_speed, models/campaign_fabric.c
 * campaign_fabric_hot; docs/failures.md "Thermal throttling"), with speed
 * callbacks whose answers are known: fail-slow switches at speed f = 0.5,
 * throttling at v = 0.75, and a combined speed c of our choosing.
 *
 *  - c = f x v exactly (binary fractions): the run is the one without the
 *    combined callback, bit for bit, although the callback is asked;
 *  - hot hours that never meet a part out: the callback is never asked and
 *    the run is the one without it, bit for bit, whatever it would answer;
 *  - every hour hot: the job runs at c while parts are out and at v
 *    otherwise, so with E the compute wall time with parts out (from the
 *    degraded stretch: E c (1/f - 1)) the throttle stretch is E (1 - c/f) +
 *    (W - E c) (1/v - 1), W the productive compute, to 1e-9; a c below f x v
 *    makes the run slower than the product does, one above it faster; a c
 *    above f counts as f (never faster than the fabric alone);
 *  - the callback's error, or no speed, stops the run; conservation in
 *    every run; replicas agree on 1 and 2 threads.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "campaign.h"
#include "check.h"
#include "campaign_checks.h"

#define F 0.5  /* the fabric's speed with parts slow */
#define V 0.75 /* the throttle speed */

typedef struct hot_ctx {
    double combined; /* the answer of the combined callback; < 0: an error */
    unsigned calls;  /* not thread-safe: read only in single runs */
} hot_ctx;

static double fabric_speed(void *ctx, const campaign_part_state *parts, unsigned n,
                           sim_error *err)
{
    (void)ctx;
    (void)parts;
    (void)err;
    CHECK(n > 0);
    return F;
}

static double hot_speed(void *ctx, const campaign_part_state *parts, unsigned n,
                        sim_error *err)
{
    hot_ctx *h = ctx;
    (void)parts;
#pragma omp atomic
    h->calls++;
    CHECK(n > 0);
    if (h->combined < 0)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "refused on purpose"), -1;
    return h->combined;
}

/* hot[h]: the hours; 24 of them repeat, HOURS_YEAR a year */
enum { HOURS_YEAR = 8760 };
static unsigned char all_hot[24], half_hot[24], first_hours[HOURS_YEAR];

static campaign_config base_config(hot_ctx *h, const unsigned char *hot, unsigned hours)
{
    campaign_config c = {
        .gpu_count = 1024,
        .gpu_peak_flops_per_s = 989.4e12,
        .mfu_frac = 0.4,
        .model_params = 70e9,
        .train_tokens = 5e11, /* 5.2e5 s of compute: 6 days */
        .tokens_per_iteration = 4e6,
        .restart_s = 600,
        .checkpoint_interval_s = 1800,
        .checkpoint_write_s = 30,
        .seed = 11,
    };
    c.n_causes = 1;
    campaign_cause *x = &c.causes[0];
    snprintf(x->name, sizeof x->name, "switch failure");
    snprintf(x->category, sizeof x->category, "Network");
    x->unit = CAMPAIGN_UNIT_SWITCH;
    x->parts = 16;
    x->rate_per_s = 1.0 / (400 * 3600.0);
    x->repair_s = 8 * 3600.0;
    x->slow_speed = 0.5; /* fail-slow: parts out slow the job, interrupt nothing */
    c.fabric_policy = CAMPAIGN_FABRIC_RESTART;
    c.fabric_speed = fabric_speed;
    c.fabric_ctx = h;
    c.throttle_hot = hot;
    c.throttle_hours = hours;
    c.throttle_speed = V;
    c.fabric_hot_speed = hot_speed;
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

static int same(const campaign_result *a, const campaign_result *b)
{
    return a->time_to_train_s == b->time_to_train_s && a->event_digest == b->event_digest &&
           a->throttle_slowdown_s == b->throttle_slowdown_s &&
           a->degraded_slowdown_s == b->degraded_slowdown_s && a->parts_slow == b->parts_slow &&
           a->throttle_hot_s == b->throttle_hot_s;
}

static void test_product_is_multiplied(void)
{
    hot_ctx h = {F * V, 0};
    campaign_config a = base_config(&h, half_hot, 24), b = a;
    a.fabric_hot_speed = NULL;
    campaign_result ra = run(&a), rb = run(&b);
    CHECK(ra.parts_slow > 3 && ra.throttle_slowdown_s > 0 && ra.degraded_slowdown_s > 0);
    CHECK(h.calls > 0);
    CHECK(same(&ra, &rb));
}

static void test_no_overlap_is_today(void)
{
    hot_ctx h = {0.1, 0};
    campaign_config a = base_config(&h, first_hours, HOURS_YEAR), b = a;
    a.fabric_hot_speed = NULL;
    campaign_result ra = run(&a), rb = run(&b);
    CHECK(ra.throttled && ra.throttle_hot_s > 0 && ra.parts_slow > 3);
    CHECK_INT_EQ(h.calls, 0);
    CHECK(same(&ra, &rb));
}

/* every hour hot: the closed form of the throttle stretch from the degraded one */
static campaign_result all_hot_closed_form(double combined)
{
    hot_ctx h = {combined, 0};
    campaign_config c = base_config(&h, all_hot, 24);
    campaign_result r = run(&c);
    double cf = fmin(combined, F); /* never faster than the fabric alone */
    double e = r.degraded_slowdown_s / (cf * (1 / F - 1)); /* compute wall time, parts out */
    double w = r.compute_time_s;
    double want = e * (1 - cf / F) + (w - e * cf) * (1 / V - 1);
    CHECK(r.parts_slow > 3 && e > 0 && e < r.time_to_train_s);
    CHECK_REL(r.throttle_slowdown_s, want, 1e-9);
    CHECK(h.calls > 0);
    return r;
}

static void test_all_hot_closed_form(void)
{
    hot_ctx h = {0, 0};
    campaign_config m = base_config(&h, all_hot, 24);
    m.fabric_hot_speed = NULL; /* today: the product */
    campaign_result product = run(&m);
    campaign_result slower = all_hot_closed_form(0.3), faster = all_hot_closed_form(0.45);
    campaign_result capped = all_hot_closed_form(0.6), exact = all_hot_closed_form(F * V);
    CHECK(slower.time_to_train_s > product.time_to_train_s);
    CHECK(faster.time_to_train_s < product.time_to_train_s);
    CHECK(capped.time_to_train_s < faster.time_to_train_s);
    CHECK(same(&exact, &product));
    /* the fabric's own stretch is the fabric's whatever the combined speed:
     * per second with parts out it is c (1/f - 1), so it scales with c */
    CHECK(slower.degraded_slowdown_s > 0 && faster.degraded_slowdown_s > 0);
}

static void test_errors_and_threads(void)
{
    campaign_result r;
    sim_error err;
    sim_error_clear(&err);
    hot_ctx bad = {-1, 0};
    campaign_config c = base_config(&bad, all_hot, 24);
    CHECK_INT_EQ(campaign_run(&c, NULL, NULL, NULL, &r, &err), SIM_ERR_INPUT);
    CHECK(strstr(err.msg, "refused on purpose") != NULL);
    hot_ctx none = {0, 0};
    campaign_config z = base_config(&none, all_hot, 24);
    sim_error_clear(&err);
    CHECK_INT_EQ(campaign_run(&z, NULL, NULL, NULL, &r, &err), SIM_ERR_INTERNAL);
    CHECK(strstr(err.msg, "speed with throttling") != NULL);

    enum { N = 8 };
    hot_ctx h = {0.3, 0};
    campaign_config e = base_config(&h, half_hot, 24);
    e.gpu_failure_rate_per_s = 2e-6 / 3600; /* GPU failures interrupt hot spells too */
    campaign_result one[N], two[N];
    memset(one, 0, sizeof one);
    memset(two, 0, sizeof two);
    int threads = omp_get_max_threads();
    sim_error_clear(&err);
    omp_set_num_threads(1);
    CHECK_INT_EQ(campaign_run_replicas(&e, N, one, NULL, NULL, &err), 0);
    omp_set_num_threads(2);
    CHECK_INT_EQ(campaign_run_replicas(&e, N, two, NULL, NULL, &err), 0);
    omp_set_num_threads(threads);
    for (unsigned i = 0; i < N; i++) {
        check_conservation(&one[i]);
        CHECK(same(&one[i], &two[i]));
    }
}

int main(void)
{
    memset(all_hot, 1, sizeof all_hot);
    for (unsigned i = 0; i < 24; i++)
        half_hot[i] = i >= 10 && i < 22; /* the day's 12 warmest hours */
    memset(first_hours, 1, 2);            /* hot only at the start, before any part fails */
    test_product_is_multiplied();
    test_no_overlap_is_today();
    test_all_hot_closed_form();
    test_errors_and_threads();
    return check_report();
}
