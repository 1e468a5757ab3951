/* test_campaign_spares.c - hot spares per scalable unit
 * (campaign_config.spare_group_nodes, models/campaign_spares.c;
 * docs/failures.md "Hot spares per scalable unit"):
 *
 *  - one group as large as the job (or larger) is the single pool, bit for
 *    bit; per-group pools that never run dry (a pool of more spares than
 *    failures in every group) give the same numbers (the same draws in the
 *    same order; only the repair events' data names the group);
 *  - splitting the same number of spares into per-SU pools never waits less
 *    (mean over replicas; here far more), and more spares per SU wait less;
 *  - a rack straddling two SUs takes its spares from both;
 *  - conservation of time in every run; the refusals.
 */
#include <math.h>
#include <stdlib.h>

#include "campaign.h"
#include "check.h"
#include "campaign_checks.h"

#define HOUR 3600.0

static campaign_config base_config(void)
{
    campaign_config c = {
        .gpu_count = 2048, /* 256 nodes */
        .gpus_per_node = 8,
        .gpu_peak_flops_per_s = 989.4e12,
        .mfu_frac = 0.4,
        .model_params = 70e9,
        .train_tokens = 1e12, /* 8.4 days of compute */
        .tokens_per_iteration = 1e6,
        .restart_s = 600,
        .checkpoint_interval_s = 1800,
        .checkpoint_write_s = 30,
        .spares_limited = 1,
        .spare_nodes = 16,
        .swap_s = 1800,
        .repair_mean_s = 48 * HOUR,
        .seed = 9,
    };
    c.n_causes = 1;
    campaign_cause *x = &c.causes[0];
    snprintf(x->name, sizeof x->name, "node failure");
    snprintf(x->category, sizeof x->category, "Host");
    x->unit = CAMPAIGN_UNIT_NODE;
    x->rate_per_s = 1.0 / (256 * 4 * HOUR); /* one failure every 4 h: ~50 in the run */
    return c;
}

static campaign_result run(const campaign_config *c)
{
    campaign_result r;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(campaign_run(c, NULL, NULL, NULL, &r, &err), 0);
    check_conservation(&r);
    return r;
}

/* same numbers; same events too unless `groups` (a repair event names its group) */
static void check_same(const campaign_result *a, const campaign_result *b, int groups)
{
    CHECK(a->time_to_train_s == b->time_to_train_s);
    CHECK(groups || a->event_digest == b->event_digest);
    CHECK_INT_EQ(a->failures, b->failures);
    CHECK(a->spare_wait_s == b->spare_wait_s);
    CHECK_INT_EQ(a->repairs, b->repairs);
}

static void test_one_group_is_the_single_pool(void)
{
    campaign_config one = base_config();
    one.spare_nodes = 6;
    campaign_result a = run(&one);
    CHECK(a.spare_wait_s > 0); /* the pool runs dry: waits to compare */
    CHECK(a.failures > 30);
    campaign_config whole = one;
    whole.spare_group_nodes = 256;
    campaign_result b = run(&whole);
    check_same(&a, &b, 0);
    whole.spare_group_nodes = 1000;
    b = run(&whole);
    check_same(&a, &b, 0);
}

static void test_pools_that_never_run_dry(void)
{
    campaign_config one = base_config();
    one.spare_nodes = 100000;
    campaign_config per_su = one;
    per_su.spare_group_nodes = 16;
    campaign_result a = run(&one), b = run(&per_su);
    CHECK(a.spare_wait_s == 0);
    check_same(&a, &b, 1);
    CHECK(b.spares_lowest >= 100000 - b.failures);
}

static double mean_wait(const campaign_config *c, unsigned n)
{
    campaign_result *res = calloc(n, sizeof *res);
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(campaign_run(c, NULL, NULL, NULL, &res[0], &err), 0);
    CHECK_INT_EQ(campaign_run_replicas(c, n, res, NULL, NULL, &err), 0);
    double wait = 0;
    for (unsigned i = 0; i < n; i++) {
        check_conservation(&res[i]);
        wait += res[i].spare_wait_s / n;
    }
    free(res);
    return wait;
}

static void test_split_pools_wait_more(void)
{
    const unsigned n = 16;
    campaign_config one = base_config(); /* 16 spares for 256 nodes */
    campaign_config per_su = one;        /* 1 spare in each of 16 SUs of 16 nodes */
    per_su.spare_group_nodes = 16;
    per_su.spare_nodes = 1;
    campaign_config two = per_su; /* 2 in each */
    two.spare_nodes = 2;
    double w_one = mean_wait(&one, n), w_su = mean_wait(&per_su, n), w_two = mean_wait(&two, n);
    fprintf(stderr, "mean wait for spares: one pool of 16 %.0f s, 1 per SU %.0f s, 2 per SU "
            "%.0f s\n", w_one, w_su, w_two);
    CHECK(w_su > 2 * w_one);
    CHECK(w_two < w_su);
}

/* Racks of 4 nodes, SUs of 6 nodes (0-5, 6-11, 12-15), 2 spares per SU,
 * repairs at once: racks 0, 2 and 3 need 4 spares from one SU's pool of 2,
 * wait for their own repair (0 s) and leave that pool at 2; rack 1 (nodes
 * 4-7) straddles SUs 0 and 1 and takes 2 from each, emptying both. So the
 * fewest spares is 0 exactly when rack 1 failed, else 2. */
typedef struct rack_log {
    unsigned rack1;
} rack_log;

static int on_event(void *ctx, const campaign_event *ev, sim_error *err)
{
    (void)err;
    rack_log *log = ctx;
    log->rack1 += ev->kind == CAMPAIGN_EVENT_FAILURE && ev->node == 4;
    return 0;
}

static void test_rack_straddles_sus(void)
{
    campaign_config c = base_config();
    c.gpu_count = 16 * 8;
    c.spare_group_nodes = 6;
    c.spare_nodes = 2;
    c.nodes_per_rack = 4;
    c.causes[0].unit = CAMPAIGN_UNIT_RACK;
    c.causes[0].rate_per_s = 1.0 / (96 * HOUR);
    c.repair_mean_s = 0;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        c.seed = seed;
        rack_log log = {0};
        campaign_sink sink = {.ctx = &log, .event = on_event};
        campaign_result r;
        sim_error err;
        sim_error_clear(&err);
        CHECK_INT_EQ(campaign_run(&c, &sink, NULL, NULL, &r, &err), 0);
        check_conservation(&r);
        CHECK(r.failures > 0);
        CHECK_INT_EQ(r.repairs, 4 * r.failures); /* every node of every failed rack */
        CHECK(r.spare_wait_s == 0);
        CHECK_INT_EQ(r.spares_lowest, log.rack1 ? 0 : 2);
    }
}

static void test_refusals(void)
{
    sim_error err;
    sim_error_clear(&err);
    campaign_config c = base_config();
    c.spare_group_nodes = 16;
    CHECK_INT_EQ(campaign_config_check(&c, &err), 0);
    campaign_config bad = c;
    bad.spares_limited = 0;
    CHECK(campaign_config_check(&bad, &err) != 0);
    bad = c;
    bad.elastic_replicas = 8;
    CHECK(campaign_config_check(&bad, &err) != 0);
}

int main(void)
{
    test_one_group_is_the_single_pool();
    test_pools_that_never_run_dry();
    test_split_pools_wait_more();
    test_rack_straddles_sus();
    test_refusals();
    return check_report();
}
