/* test_campaign_fabric.c - the campaign on a degraded fabric (campaign.h,
 * models/campaign_fabric.c; docs/failures.md), with a speed callback whose
 * answer is known:
 *
 *  - a part that never changes the speed (REPLACE, or RESTART at speed 1)
 *    gives the run without repair times bit for bit (the repairs draw on
 *    streams of their own);
 *  - RESTART on a fabric the job cannot run on waits exactly as WAIT does;
 *  - WAIT: each down part costs its repair, Exp(repair) on average;
 *  - fail-slow parts at speed v: an M/M/inf count of slow parts (arrivals
 *    L = parts x rate, mean stay R) is non-zero a fraction p = 1 - e^(-L R)
 *    of the time, so compute is stretched by 1 / (1 - p (1 - v)) - 1;
 *  - conservation with the degraded stretch; the callback's error stops the
 *    run; replicas agree for any thread count;
 *  - the sink's parts table: one row per down, slow and repaired part, the
 *    parts out replayed from the rows, the job's speed the callback's, the
 *    fabric id the mapping's; a sink changes no result; a NIC cause runs as
 *    a network part on streams of its own.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "campaign.h"
#include "check.h"
#include "campaign_checks.h"

enum { SPEED_ONE, SPEED_HALF, SPEED_NONE, SPEED_ERROR, SPEED_BY_COUNT };

typedef struct speed_ctx {
    int mode;
    unsigned calls; /* not thread-safe: read only in single runs */
} speed_ctx;

static double speed_of(void *ctx, const campaign_part_state *parts, unsigned n, sim_error *err)
{
    speed_ctx *s = ctx;
#pragma omp atomic
    s->calls++;
    CHECK(n > 0 && n <= CAMPAIGN_MAX_FABRIC_PARTS);
    for (unsigned i = 0; i < n; i++)
        CHECK(parts[i].speed >= 0 && parts[i].speed < 1);
    switch (s->mode) {
    case SPEED_ONE: return 1;
    case SPEED_HALF: return 0.5;
    case SPEED_NONE: return 0;
    case SPEED_BY_COUNT: return 1.0 / (1.0 + 0.1 * n); /* more parts out, slower */
    default: return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "refused on purpose"), -1;
    }
}

static campaign_config base_config(void)
{
    campaign_config c = {
        .gpu_count = 1024,
        .gpu_peak_flops_per_s = 989.4e12,
        .mfu_frac = 0.4,
        .model_params = 70e9,
        .train_tokens = 2e12, /* 2.07e6 s of compute: 24 days */
        .tokens_per_iteration = 4e6,
        .gpu_failure_rate_per_s = 2e-6 / 3600, /* a few GPU failures too */
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
    x->rate_per_s = 1.0 / (400 * 3600.0); /* 16 / 400 h: about 23 in the run */
    return c;
}

static void with_repair(campaign_config *c, int policy, speed_ctx *s, double repair_s)
{
    c->causes[0].repair_s = repair_s;
    c->fabric_policy = policy;
    c->fabric_speed = speed_of;
    c->fabric_ctx = s;
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

static void test_no_change_is_today(void)
{
    campaign_config today = base_config();
    campaign_result a = run(&today);
    CHECK(a.failures_by_cause[1] > 5);
    int policies[2] = {CAMPAIGN_FABRIC_REPLACE, CAMPAIGN_FABRIC_RESTART};
    for (int k = 0; k < 2; k++) {
        speed_ctx s = {k == 0 ? SPEED_HALF : SPEED_ONE, 0}; /* REPLACE never asks */
        campaign_config c = base_config();
        with_repair(&c, policies[k], &s, 4 * 3600.0);
        campaign_result b = run(&c);
        CHECK(b.time_to_train_s == a.time_to_train_s);
        CHECK(b.rework_s == a.rework_s && b.restart_time_s == a.restart_time_s);
        CHECK_INT_EQ(b.failures, a.failures);
        CHECK_INT_EQ(b.parts_down, a.failures_by_cause[1]);
        CHECK(b.degraded_slowdown_s == 0 && b.fabric_wait_s == 0);
        CHECK_INT_EQ(b.fabric_causes, 1);
        /* REPLACE: never asked; RESTART: at each change that leaves a part out */
        CHECK(k == 0 ? s.calls == 0 : s.calls > 0 && s.calls <= b.parts_down + b.parts_repaired);
    }
}

static void test_unrunnable_restart_is_wait(void)
{
    speed_ctx none = {SPEED_NONE, 0}, one = {SPEED_ONE, 0};
    campaign_config c = base_config(), w = base_config();
    with_repair(&c, CAMPAIGN_FABRIC_RESTART, &none, 4 * 3600.0);
    with_repair(&w, CAMPAIGN_FABRIC_WAIT, &one, 4 * 3600.0);
    campaign_result a = run(&c), b = run(&w);
    CHECK(a.time_to_train_s == b.time_to_train_s);
    CHECK(a.fabric_wait_s == b.fabric_wait_s && a.fabric_wait_s > 0);
    CHECK(a.fabric_unrunnable > 0 && b.fabric_unrunnable == 0);
    CHECK(a.degraded_slowdown_s == 0);
    /* waiting costs: slower than re-placing */
    campaign_config r = base_config();
    with_repair(&r, CAMPAIGN_FABRIC_REPLACE, &one, 4 * 3600.0);
    CHECK(run(&r).time_to_train_s < a.time_to_train_s);
}

/* WAIT: a down part keeps the restart waiting for its repair: Exp(R) per
 * failure (a second part down during the wait extends it: rare at 16
 * parts x 1/400 h x 1 h) */
static void test_wait_costs_the_repair(void)
{
    enum { N = 64 };
    speed_ctx one = {SPEED_ONE, 0};
    campaign_config c = base_config();
    double repair = 3600.0;
    with_repair(&c, CAMPAIGN_FABRIC_WAIT, &one, repair);
    campaign_result *r = calloc(N, sizeof *r);
    sim_error err;
    sim_error_clear(&err);
    r[0] = run(&c);
    CHECK_INT_EQ(campaign_run_replicas(&c, N, r, NULL, NULL, &err), 0);
    double wait = 0, down = 0;
    for (unsigned i = 0; i < N; i++) {
        check_conservation(&r[i]);
        wait += r[i].fabric_wait_s;
        down += (double)r[i].parts_down;
    }
    /* about 1,500 down parts: the mean's standard error is 2.6 % */
    CHECK(down > 1000);
    CHECK_REL(wait / down, repair, 0.1);
    campaign_mc mc;
    campaign_mc_summarize(r, N, &mc);
    CHECK_INT_EQ(mc.fabric_causes, 1);
    CHECK_REL(mc.fabric_wait_s.mean, wait / N, 1e-12);
    CHECK(mc.fabric_wait_s.ci95 > 0 && mc.interruption_s.mean > mc.fabric_wait_s.mean);
    free(r);
}

/* fail-slow at speed v = 0.5: no interruption, compute stretched by
 * 1 / (1 - p (1 - v)) - 1 with p = 1 - e^(-L R) */
static void test_fail_slow_closed_form(void)
{
    enum { N = 48 };
    speed_ctx half = {SPEED_HALF, 0};
    campaign_config c = base_config();
    c.gpu_failure_rate_per_s = 0;
    double repair = 4 * 3600.0;
    with_repair(&c, CAMPAIGN_FABRIC_RESTART, &half, repair);
    c.causes[0].slow_speed = 0.5;
    CHECK(campaign_cluster_failure_rate_per_s(&c) == 0); /* slow parts interrupt nothing */
    campaign_result *r = calloc(N, sizeof *r);
    sim_error err;
    sim_error_clear(&err);
    r[0] = run(&c);
    CHECK_INT_EQ(campaign_run_replicas(&c, N, r, NULL, NULL, &err), 0);
    double L = (double)c.causes[0].parts * c.causes[0].rate_per_s;
    double p = 1 - exp(-L * repair);
    double expect = r[0].compute_time_s * (1 / (1 - p * 0.5) - 1), got = 0;
    for (unsigned i = 0; i < N; i++) {
        check_conservation(&r[i]);
        CHECK_INT_EQ(r[i].failures, 0);
        CHECK(r[i].parts_slow > 0 && r[i].parts_down == 0);
        got += r[i].degraded_slowdown_s / N;
    }
    CHECK_REL(got, expect, 0.1);
    free(r);
}

/* more parts out never speeds the job up: the by-count callback slows with
 * every part, and the run is slower than at speed one */
static void test_slower_fabric_is_slower(void)
{
    speed_ctx one = {SPEED_ONE, 0}, count = {SPEED_BY_COUNT, 0};
    campaign_config a = base_config(), b = base_config();
    a.gpu_failure_rate_per_s = b.gpu_failure_rate_per_s = 0;
    with_repair(&a, CAMPAIGN_FABRIC_RESTART, &one, 8 * 3600.0);
    with_repair(&b, CAMPAIGN_FABRIC_RESTART, &count, 8 * 3600.0);
    a.causes[0].slow_speed = b.causes[0].slow_speed = 0.5;
    campaign_result ra = run(&a), rb = run(&b);
    CHECK(ra.degraded_slowdown_s == 0 && ra.parts_slow > 0);
    CHECK_REL(ra.time_to_train_s, ra.compute_time_s + ra.checkpoint_time_s, 1e-12);
    CHECK(rb.degraded_slowdown_s > 0 && rb.time_to_train_s > ra.time_to_train_s);
    /* slow parts the callback finds no speed for (an iteration that
     * overflowed): the job stalls until the repair, it never runs at speed 1 */
    speed_ctx none = {SPEED_NONE, 0};
    campaign_config z = base_config();
    z.gpu_failure_rate_per_s = 0;
    with_repair(&z, CAMPAIGN_FABRIC_RESTART, &none, 8 * 3600.0);
    z.causes[0].slow_speed = 0.5;
    campaign_result rz = run(&z);
    CHECK(rz.degraded_slowdown_s > rb.degraded_slowdown_s && rz.failures == 0);
}

static void test_error_and_threads(void)
{
    speed_ctx bad = {SPEED_ERROR, 0};
    campaign_config c = base_config();
    with_repair(&c, CAMPAIGN_FABRIC_RESTART, &bad, 3600.0);
    campaign_result r;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(campaign_run(&c, NULL, NULL, NULL, &r, &err), SIM_ERR_INPUT);
    CHECK(strstr(err.msg, "refused on purpose") != NULL);
    /* the config check: a repair time needs a switch or cable and a callback */
    campaign_config d = base_config();
    d.causes[0].repair_s = 3600;
    CHECK_INT_EQ(campaign_run(&d, NULL, NULL, NULL, &r, &err), SIM_ERR_INPUT);
    d.fabric_speed = speed_of;
    d.causes[0].slow_speed = 1;
    CHECK_INT_EQ(campaign_run(&d, NULL, NULL, NULL, &r, &err), SIM_ERR_INPUT);

    enum { N = 8 };
    speed_ctx count = {SPEED_BY_COUNT, 0};
    campaign_config e = base_config();
    with_repair(&e, CAMPAIGN_FABRIC_RESTART, &count, 8 * 3600.0);
    campaign_result one[N], two[N];
    memset(one, 0, sizeof one);
    memset(two, 0, sizeof two);
    int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    CHECK_INT_EQ(campaign_run_replicas(&e, N, one, NULL, NULL, &err), 0);
    omp_set_num_threads(2);
    CHECK_INT_EQ(campaign_run_replicas(&e, N, two, NULL, NULL, &err), 0);
    omp_set_num_threads(threads);
    for (unsigned i = 1; i < N; i++) {
        CHECK(one[i].time_to_train_s == two[i].time_to_train_s);
        CHECK(one[i].event_digest == two[i].event_digest);
        CHECK(one[i].degraded_slowdown_s == two[i].degraded_slowdown_s);
    }
}

typedef struct part_log {
    unsigned n, down, slow, repaired;
    int ok;
    double last_t;
    uint32_t out; /* the parts out, replayed: bit k = part k */
} part_log;

static int64_t part_id(void *ctx, int32_t cause, uint64_t part)
{
    (void)ctx;
    return (int64_t)part * 100 + cause;
}

static int on_part(void *ctx, const campaign_part_event *ev, sim_error *err)
{
    (void)err;
    part_log *l = ctx;
    l->n++;
    if (ev->part >= 0 && ev->part < 16) { /* a part failing again while out stays one */
        uint32_t bit = 1u << ev->part;
        l->out = ev->action == CAMPAIGN_PART_REPAIRED ? l->out & ~bit : l->out | bit;
    }
    l->down += ev->action == CAMPAIGN_PART_DOWN;
    l->slow += ev->action == CAMPAIGN_PART_SLOW;
    l->repaired += ev->action == CAMPAIGN_PART_REPAIRED;
    double want = ev->parts_out ? 1.0 / (1.0 + 0.1 * (double)ev->parts_out) : 1.0;
    double speed = ev->action == CAMPAIGN_PART_REPAIRED ? 1
                   : ev->action == CAMPAIGN_PART_SLOW   ? 0.5
                                                        : 0;
    l->ok &= ev->time_s >= l->last_t && ev->parts_out == __builtin_popcount(l->out) &&
             ev->job_speed == want &&
             ev->cause == 0 && ev->part >= 0 && ev->part < 16 &&
             ev->fabric_id == ev->part * 100 && ev->speed == speed;
    l->last_t = ev->time_s;
    return 0;
}

static void test_part_events(void)
{
    for (int slow = 0; slow < 2; slow++) {
        speed_ctx s = {SPEED_BY_COUNT, 0};
        campaign_config c = base_config();
        with_repair(&c, CAMPAIGN_FABRIC_RESTART, &s, 4 * 3600.0);
        c.causes[0].slow_speed = slow ? 0.5 : 0;
        c.causes[0].rate_per_s *= 4; /* some overlap of parts out */
        campaign_result plain = run(&c);
        c.fabric_part_id = part_id;
        part_log l = {.ok = 1};
        campaign_sink sink = {.ctx = &l, .part = on_part};
        campaign_result r;
        sim_error err;
        sim_error_clear(&err);
        CHECK_INT_EQ(campaign_run(&c, &sink, NULL, NULL, &r, &err), 0);
        CHECK(l.ok);
        CHECK(r.time_to_train_s == plain.time_to_train_s);
        CHECK_INT_EQ(l.down, r.parts_down);
        CHECK_INT_EQ(l.slow, r.parts_slow);
        CHECK_INT_EQ(l.repaired, r.parts_repaired);
        CHECK(slow ? l.slow > 10 && l.down == 0 : l.down > 10 && l.slow == 0);
        CHECK(l.repaired > 0 && l.n == l.down + l.slow + l.repaired);
    }
    /* a NIC cause: a network part like a switch, on streams of its own */
    speed_ctx s = {SPEED_NONE, 0};
    campaign_config c = base_config(), sw = base_config();
    c.causes[0].unit = CAMPAIGN_UNIT_NIC;
    with_repair(&c, CAMPAIGN_FABRIC_RESTART, &s, 4 * 3600.0);
    with_repair(&sw, CAMPAIGN_FABRIC_RESTART, &s, 4 * 3600.0);
    campaign_result a = run(&c), b = run(&sw);
    CHECK(a.parts_down > 5 && a.fabric_wait_s > 0 && a.fabric_unrunnable > 0);
    CHECK(a.time_to_train_s != b.time_to_train_s); /* other streams, other draws */
}

int main(void)
{
    test_part_events();
    test_no_change_is_today();
    test_unrunnable_restart_is_wait();
    test_wait_costs_the_repair();
    test_fail_slow_closed_form();
    test_slower_fabric_is_slower();
    test_error_and_threads();
    return check_report();
}
