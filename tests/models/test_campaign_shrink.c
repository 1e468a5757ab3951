/* test_campaign_shrink.c - the shrink policy (campaign.h
 * CAMPAIGN_FABRIC_SHRINK, models/campaign_fabric.c; docs/failures.md
 * "Shrinking"), with callbacks whose answers are known:
 *
 *  - no part cuts GPUs off: SHRINK is RESTART bit for bit;
 *  - the shape cannot run (speed 0): SHRINK waits exactly as RESTART does;
 *  - every part cuts half the job off and the shape runs at speed v: the
 *    degraded stretch is exactly the time run shrunk x (1 - v), the idle
 *    GPU-hours exactly that time x the GPUs dropped, the job grows back at
 *    checkpoints (each growth a restart), conservation holds, and it loses
 *    less than RESTART waiting for the repair (Monte Carlo means);
 *  - replicas agree on 1 and 2 threads.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "campaign.h"
#include "check.h"
#include "campaign_checks.h"

typedef struct shrink_ctx {
    double speed;  /* of any state with a part out (0: cannot run) */
    int cuts;      /* every part cuts GPUs off (1) or none does (0) */
    double kept;   /* the shape's share of GPUs when shrunk */
} shrink_ctx;

static double speed_of(void *ctx, const campaign_part_state *parts, unsigned n, sim_error *err)
{
    (void)err;
    const shrink_ctx *s = ctx;
    CHECK(n > 0 && n <= 2 * CAMPAIGN_MAX_FABRIC_PARTS);
    for (unsigned i = 0; i < n; i++)
        CHECK(parts[i].speed == 0);
    return s->speed;
}

static int cuts_of(void *ctx, const campaign_part_state *part)
{
    CHECK(part->speed == 0);
    return ((const shrink_ctx *)ctx)->cuts;
}

static double kept_of(void *ctx, const campaign_part_state *parts, unsigned n)
{
    (void)parts;
    CHECK(n > 0);
    const shrink_ctx *s = ctx;
    return s->cuts ? s->kept : 1;
}

static campaign_config config(int policy, shrink_ctx *s)
{
    campaign_config c = {
        .gpu_count = 1024,
        .gpu_peak_flops_per_s = 989.4e12,
        .mfu_frac = 0.4,
        .model_params = 70e9,
        .train_tokens = 2e12, /* 2.07e6 s of compute: 24 days */
        .tokens_per_iteration = 4e6,
        .restart_s = 600,
        .checkpoint_interval_s = 1800,
        .checkpoint_write_s = 30,
        .seed = 11,
        .fabric_policy = policy,
        .fabric_speed = speed_of,
        .fabric_cuts = cuts_of,
        .fabric_kept = kept_of,
        .fabric_ctx = s,
    };
    c.n_causes = 1;
    campaign_cause *x = &c.causes[0];
    snprintf(x->name, sizeof x->name, "leaf failure");
    snprintf(x->category, sizeof x->category, "Network");
    x->unit = CAMPAIGN_UNIT_SWITCH;
    x->parts = 16;
    x->rate_per_s = 1.0 / (400 * 3600.0); /* 16 / 400 h: about 23 in the run */
    x->repair_s = 6 * 3600.0;
    return c;
}

static campaign_result run(const campaign_config *c)
{
    campaign_result r;
    sim_error err;
    sim_error_clear(&err);
    memset(&r, 0, sizeof r);
    int rc = campaign_run(c, NULL, NULL, NULL, &r, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    CHECK_INT_EQ(rc, 0);
    check_conservation(&r);
    return r;
}

static int same(const campaign_result *a, const campaign_result *b)
{
    return a->time_to_train_s == b->time_to_train_s && a->rework_s == b->rework_s &&
           a->restart_time_s == b->restart_time_s &&
           a->degraded_slowdown_s == b->degraded_slowdown_s &&
           a->fabric_wait_s == b->fabric_wait_s && a->failures == b->failures &&
           a->restarts == b->restarts && a->event_digest == b->event_digest;
}

static void test_no_cut_is_restart(void)
{
    shrink_ctx s = {0.8, 0, 0.5};
    campaign_config a = config(CAMPAIGN_FABRIC_RESTART, &s);
    campaign_config b = config(CAMPAIGN_FABRIC_SHRINK, &s);
    campaign_result ra = run(&a), rb = run(&b);
    CHECK(ra.parts_down > 5 && ra.degraded_slowdown_s > 0);
    CHECK(same(&ra, &rb));
    CHECK(rb.shrunk_s == 0 && rb.shrunk_idle_gpu_h == 0);
    CHECK_INT_EQ(rb.shrink_restarts, 0);
    CHECK_INT_EQ(rb.grow_restarts, 0);
    CHECK(rb.shrink && !ra.shrink);
}

static void test_unrunnable_shape_waits(void)
{
    shrink_ctx s = {0, 1, 0.5};
    campaign_config a = config(CAMPAIGN_FABRIC_RESTART, &s);
    campaign_config b = config(CAMPAIGN_FABRIC_SHRINK, &s);
    campaign_result ra = run(&a), rb = run(&b);
    CHECK(ra.fabric_wait_s > 0 && ra.fabric_unrunnable > 0);
    CHECK(same(&ra, &rb));
    CHECK(rb.shrunk_s == 0 && rb.grow_restarts == 0 && rb.shrink_restarts == 0);
}

/* every part cuts half the job off; the half left runs at v */
static void test_shrunk_closed_form(void)
{
    enum { N = 24 };
    double v = 0.55;
    shrink_ctx s = {v, 1, 0.5}, none = {0, 1, 0.5};
    campaign_config c = config(CAMPAIGN_FABRIC_SHRINK, &s);
    campaign_config w = config(CAMPAIGN_FABRIC_RESTART, &none);
    campaign_result *r = calloc(N, sizeof *r), *q = calloc(N, sizeof *q);
    sim_error err;
    sim_error_clear(&err);
    r[0] = run(&c);
    q[0] = run(&w);
    CHECK_INT_EQ(campaign_run_replicas(&c, N, r, NULL, NULL, &err), 0);
    CHECK_INT_EQ(campaign_run_replicas(&w, N, q, NULL, NULL, &err), 0);
    double lost_shrink = 0, lost_wait = 0;
    for (unsigned i = 0; i < N; i++) {
        check_conservation(&r[i]);
        CHECK(r[i].parts_down > 5);
        /* shrunk only while a cut part is held: the stretch is exactly (1 - v) of it */
        CHECK(r[i].shrunk_s > 0);
        CHECK_REL(r[i].degraded_slowdown_s, r[i].shrunk_s * (1 - v), 1e-9);
        CHECK_REL(r[i].shrunk_idle_gpu_h, r[i].shrunk_s * 0.5 * 1024 / 3600, 1e-12);
        /* each shrink ends in a growth at a checkpoint, or the run ends shrunk */
        CHECK(r[i].grow_restarts > 0 && r[i].grow_restarts <= r[i].shrink_restarts);
        CHECK(r[i].restarts <= r[i].failures + r[i].grow_restarts);
        CHECK(r[i].fabric_wait_s == 0); /* the shape always runs */
        lost_shrink += (r[i].time_to_train_s - r[i].compute_time_s) / N;
        lost_wait += (q[i].time_to_train_s - q[i].compute_time_s) / N;
    }
    /* waiting 6 h per leaf against running at 0.55 for as long: shrink loses less */
    CHECK(lost_shrink < lost_wait);
    campaign_mc mc;
    campaign_mc_summarize(r, N, &mc);
    CHECK(mc.shrink && mc.shrunk_s.mean > 0 && mc.shrunk_s.ci95 > 0);
    CHECK(isfinite(mc.shrunk_idle_gpu_h.mean));
    /* 1 and 2 threads: the same numbers */
    int threads = omp_get_max_threads();
    campaign_result *one = calloc(N, sizeof *one), *two = calloc(N, sizeof *two);
    omp_set_num_threads(1);
    CHECK_INT_EQ(campaign_run_replicas(&c, N, one, NULL, NULL, &err), 0);
    omp_set_num_threads(2);
    CHECK_INT_EQ(campaign_run_replicas(&c, N, two, NULL, NULL, &err), 0);
    omp_set_num_threads(threads);
    for (unsigned i = 1; i < N; i++)
        CHECK(same(&one[i], &two[i]) && same(&one[i], &r[i]) &&
              one[i].shrunk_s == two[i].shrunk_s);
    free(one);
    free(two);
    free(r);
    free(q);
}

static void test_needs_callbacks(void)
{
    shrink_ctx s = {0.5, 1, 0.5};
    campaign_config c = config(CAMPAIGN_FABRIC_SHRINK, &s);
    c.fabric_kept = NULL;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(campaign_config_check(&c, &err), SIM_ERR_INPUT);
    CHECK(strstr(err.msg, "shrink") != NULL);
}

int main(void)
{
    test_no_cut_is_restart();
    test_unrunnable_shape_waits();
    test_shrunk_closed_form();
    test_needs_callbacks();
    return check_report();
}
