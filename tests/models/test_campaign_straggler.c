/* test_campaign_straggler.c - a slow node in a hot hour and/or on a degraded
 * fabric (campaign_config straggler_hot_speed, fabric_slow_speed;
 * models/campaign_straggler.c; docs/failures.md "A slow node in a hot hour
 * or on a degraded fabric"), with speed callbacks whose answers are known:
 * fail-slow switches at f = 0.5, throttling at v = 0.75, a slow node at
 * s = 0.875, and combined speeds of our choosing.
 *
 *  - combined = the product exactly (binary fractions): the run is the one
 *    without the combined speeds, bit for bit, although they are asked;
 *  - no straggler: nothing is asked and the run is the one without them,
 *    bit for bit, whatever they would answer; stragglers with neither heat
 *    nor parts out: the same;
 *  - every hour hot, no network cause, the slow node never drained: the job
 *    runs at x (the hot-and-slow speed) from the first slow spell on, so the
 *    throttle stretch is W (1/v - 1) whatever x, and the work done slow,
 *    straggler stretch x / (1 - x/v), is the same for every x below v; an x
 *    at or above v costs nothing (never faster than throttling alone);
 *  - a slower combined speed on parts out makes the run slower;
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

#define F 0.5   /* the fabric's speed with parts slow */
#define V 0.75  /* the throttle speed */
#define S 0.875 /* the straggler speed */

typedef struct slow_ctx {
    double cool, hot; /* the answers of fabric_slow_speed; cool < 0: an error */
    unsigned calls;
} slow_ctx;

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
    (void)ctx;
    (void)parts;
    (void)err;
    CHECK(n > 0);
    return F * V;
}

static double slow_speed(void *ctx, const campaign_part_state *parts, unsigned n, int hot,
                         sim_error *err)
{
    slow_ctx *h = ctx;
    (void)parts;
#pragma omp atomic
    h->calls++;
    CHECK(n > 0);
    if (h->cool < 0)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "refused on purpose"), -1;
    return hot ? h->hot : h->cool;
}

static unsigned char all_hot[24], half_hot[24];

static campaign_config base_config(slow_ctx *h, const unsigned char *hot, int parts)
{
    campaign_config c = {
        .gpu_count = 1024,
        .gpus_per_node = 8,
        .gpu_peak_flops_per_s = 989.4e12,
        .mfu_frac = 0.4,
        .model_params = 70e9,
        .train_tokens = 5e11, /* 5.2e5 s of compute: 6 days */
        .tokens_per_iteration = 4e6,
        .restart_s = 600,
        .checkpoint_interval_s = 1800,
        .checkpoint_write_s = 30,
        .seed = 11,
        .straggler_rate_per_s = 1.0 / (200 * 3600.0), /* per node: 128 nodes */
        .straggler_speed = S,
        .straggler_drain_s = 1e9, /* never drained: slow to the end */
    };
    if (parts) {
        c.n_causes = 1;
        campaign_cause *x = &c.causes[0];
        snprintf(x->name, sizeof x->name, "switch failure");
        snprintf(x->category, sizeof x->category, "Network");
        x->unit = CAMPAIGN_UNIT_SWITCH;
        x->parts = 16;
        x->rate_per_s = 1.0 / (400 * 3600.0);
        x->repair_s = 8 * 3600.0;
        x->slow_speed = F; /* fail-slow: parts out slow the job, interrupt nothing */
        c.fabric_policy = CAMPAIGN_FABRIC_RESTART;
        c.fabric_speed = fabric_speed;
        c.fabric_hot_speed = hot ? hot_speed : NULL;
        c.fabric_slow_speed = slow_speed;
    }
    c.fabric_ctx = h;
    if (hot) {
        c.throttle_hot = hot;
        c.throttle_hours = 24;
        c.throttle_speed = V;
        c.straggler_hot_speed = V * S;
    }
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
           a->straggler_slowdown_s == b->straggler_slowdown_s &&
           a->degraded_slowdown_s == b->degraded_slowdown_s && a->parts_slow == b->parts_slow &&
           a->stragglers == b->stragglers;
}

static void test_product_is_multiplied(void)
{
    slow_ctx h = {F * S, F * V * S, 0};
    campaign_config a = base_config(&h, half_hot, 1), b = a;
    a.fabric_slow_speed = NULL;
    a.straggler_hot_speed = 0;
    campaign_result ra = run(&a), rb = run(&b);
    CHECK(ra.parts_slow > 3 && ra.stragglers > 3 && ra.throttle_slowdown_s > 0);
    CHECK(ra.straggler_slowdown_s > 0 && ra.degraded_slowdown_s > 0);
    CHECK(h.calls > 0);
    CHECK(same(&ra, &rb));
}

static void test_no_straggler_is_today(void)
{
    slow_ctx h = {0.01, 0.01, 0};
    campaign_config a = base_config(&h, half_hot, 1);
    a.straggler_rate_per_s = 0;
    campaign_config b = a;
    b.fabric_slow_speed = NULL;
    b.straggler_hot_speed = 0;
    campaign_result ra = run(&a), rb = run(&b);
    CHECK(ra.parts_slow > 3 && ra.throttle_slowdown_s > 0 && ra.stragglers == 0);
    CHECK_INT_EQ(h.calls, 0);
    CHECK(same(&ra, &rb));
    /* stragglers, but neither heat nor parts out: the straggler speed alone */
    slow_ctx g = {0.01, 0.01, 0};
    campaign_config d = base_config(&g, NULL, 0), c = d;
    c.fabric_slow_speed = slow_speed; /* set, never asked */
    c.straggler_hot_speed = 0.01;
    campaign_result rc = run(&c), rd = run(&d);
    CHECK(rc.stragglers > 3 && rc.straggler_slowdown_s > 0);
    CHECK_INT_EQ(g.calls, 0);
    CHECK(same(&rc, &rd));
}

/* every hour hot, the fabric as built: the slow node at x from its first
 * spell; the work done slow is straggler stretch x / (1 - x/v) */
static double work_slow(double x, campaign_result *out)
{
    slow_ctx h = {0, 0, 0};
    campaign_config c = base_config(&h, all_hot, 0);
    c.straggler_hot_speed = x;
    campaign_result r = run(&c);
    CHECK(r.stragglers > 0);
    CHECK_REL(r.throttle_slowdown_s, r.compute_time_s * (1 / V - 1), 1e-9);
    *out = r;
    return r.straggler_slowdown_s * x / (1 - x / V);
}

static void test_all_hot_closed_form(void)
{
    campaign_result lo, mid, prod, at, above;
    double w1 = work_slow(0.5, &lo), w2 = work_slow(0.7, &mid), w3 = work_slow(V * S, &prod);
    CHECK(w1 > 0 && w1 < lo.compute_time_s);
    CHECK_REL(w2, w1, 1e-9);
    CHECK_REL(w3, w1, 1e-9);
    CHECK(lo.time_to_train_s > prod.time_to_train_s && prod.time_to_train_s > mid.time_to_train_s);
    work_slow(V, &at);
    work_slow(0.9, &above); /* faster than throttling alone: taken as throttling alone */
    CHECK(at.straggler_slowdown_s == 0 && above.straggler_slowdown_s == 0);
    CHECK(same(&at, &above));
}

static void test_parts_slower(void)
{
    slow_ctx a = {F * S, F * V * S, 0}, b = {0.25, 0.2, 0};
    campaign_result ra, rb;
    campaign_config ca = base_config(&a, half_hot, 1), cb = base_config(&b, half_hot, 1);
    ra = run(&ca);
    rb = run(&cb);
    CHECK(b.calls > 0);
    CHECK(rb.time_to_train_s > ra.time_to_train_s);
    CHECK(rb.straggler_slowdown_s > ra.straggler_slowdown_s);
}

static void test_errors_and_threads(void)
{
    campaign_result r;
    sim_error err;
    sim_error_clear(&err);
    slow_ctx bad = {-1, -1, 0};
    campaign_config c = base_config(&bad, half_hot, 1);
    CHECK_INT_EQ(campaign_run(&c, NULL, NULL, NULL, &r, &err), SIM_ERR_INPUT);
    CHECK(strstr(err.msg, "refused on purpose") != NULL);
    slow_ctx none = {0, 0, 0};
    campaign_config z = base_config(&none, half_hot, 1);
    sim_error_clear(&err);
    CHECK_INT_EQ(campaign_run(&z, NULL, NULL, NULL, &r, &err), SIM_ERR_INTERNAL);
    CHECK(strstr(err.msg, "with a slow node") != NULL);

    enum { N = 8 };
    slow_ctx h = {0.3, 0.2, 0};
    campaign_config e = base_config(&h, half_hot, 1);
    e.gpu_failure_rate_per_s = 2e-6 / 3600; /* failures replace slow nodes too */
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
    test_product_is_multiplied();
    test_no_straggler_is_today();
    test_all_hot_closed_form();
    test_parts_slower();
    test_errors_and_threads();
    return check_report();
}
