/* test_replicas.c - campaign replicas in reused workspaces (campaign.h):
 * every replica's result struct equals, byte for byte, a fresh campaign_run
 * (a workspace of its own) of the same replica seed, on 1 and 2 threads; and
 * a workspace carries nothing from one run into the next, whatever ran in it
 * before (a larger cluster, other causes, stragglers, a run interrupted with
 * its events still pending).
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "campaign.h"
#include "check.h"
#include "failure_process.h"

/* gpus GPUs at 1 s iterations (6 N T / (G peak MFU) = 1 s) for compute_h
 * hours, a checkpoint every 30 min of 60 s, restarts of 5 min. */
static campaign_config base_job(uint64_t gpus, double compute_h, uint64_t seed)
{
    campaign_config c = {
        .gpu_count = gpus,
        .gpu_peak_flops_per_s = 6,
        .mfu_frac = 1,
        .model_params = (double)gpus,
        .train_tokens = compute_h * 3600,
        .tokens_per_iteration = 1,
        .restart_s = 300,
        .checkpoint_interval_s = 1800,
        .checkpoint_write_s = 60,
        .seed = seed,
    };
    return c;
}

static void add_cause(campaign_config *c, const char *name, int unit, double mtbf_h,
                      unsigned process, double shape, double detection_s, uint64_t parts)
{
    campaign_cause *x = &c->causes[c->n_causes++];
    snprintf(x->name, sizeof x->name, "%s", name);
    x->unit = unit;
    x->rate_per_s = 1 / (mtbf_h * 3600);
    x->process = process;
    x->shape = shape;
    x->detection_s = detection_s;
    x->parts = parts;
}

/* Every kind of stream at once: the unnamed GPU rate; node, rack, Weibull
 * GPU and node, silent, switch and cable causes; a limited spare pool with
 * elastic continuation; stragglers; health check and collective timeout;
 * planned maintenance. */
static campaign_config every_stream(uint64_t gpus, uint64_t seed)
{
    campaign_config c = base_job(gpus, 400, seed);
    c.checkpoint_interval_s = 600; /* > 4096 events: polled (test_workspace_carries_nothing) */
    c.checkpoint_write_s = 20;
    double per_gpu_h = 60.0 * (double)gpus; /* the cluster: a failure every ~60 h per cause */
    c.gpu_failure_rate_per_s = 1 / (per_gpu_h * 3600);
    c.gpus_per_node = 8;
    c.nodes_per_rack = 4;
    add_cause(&c, "node", CAMPAIGN_UNIT_NODE, per_gpu_h / 8, FAILURE_EXPONENTIAL, 0, 0, 0);
    add_cause(&c, "rack", CAMPAIGN_UNIT_RACK, per_gpu_h / 32, FAILURE_EXPONENTIAL, 0, 0, 0);
    add_cause(&c, "worn GPU", CAMPAIGN_UNIT_GPU, per_gpu_h, FAILURE_WEIBULL, 0.7, 0, 0);
    add_cause(&c, "worn node", CAMPAIGN_UNIT_NODE, per_gpu_h / 8, FAILURE_WEIBULL, 2.0, 0, 0);
    add_cause(&c, "corruption", CAMPAIGN_UNIT_GPU, per_gpu_h, FAILURE_EXPONENTIAL, 0, 3600, 0);
    add_cause(&c, "switch", CAMPAIGN_UNIT_SWITCH, 60.0 * 10, FAILURE_EXPONENTIAL, 0, 0, 10);
    add_cause(&c, "cable", CAMPAIGN_UNIT_CABLE, 60.0 * 100, FAILURE_EXPONENTIAL, 0, 0, 100);
    c.spares_limited = 1;
    c.spare_nodes = 2;
    c.swap_s = 120;
    c.repair_mean_s = 12 * 3600;
    c.elastic_replicas = (unsigned)(gpus / 8);
    c.straggler_rate_per_s = 1 / (per_gpu_h / 8 * 3600);
    c.straggler_speed = 0.7;
    c.straggler_drain_s = 1800;
    c.health_check_s = 600;
    c.collective_timeout_s = 450;
    c.maintenance_every_s = 100 * 3600;
    c.maintenance_s = 4 * 3600;
    return c;
}

/* Asynchronous checkpoints on the GPU rate alone. */
static campaign_config async_job(uint64_t gpus, uint64_t seed)
{
    campaign_config c = base_job(gpus, 400, seed);
    c.gpu_failure_rate_per_s = 1 / (20.0 * (double)gpus * 3600);
    c.checkpoint_async = 1;
    c.checkpoint_snapshot_s = 5;
    c.persist_slowdown = 0.1;
    c.health_check_s = 300;
    return c;
}

/* The fresh reference: campaign_run of replica i's seed. */
static int fresh(const campaign_config *cfg, unsigned i, campaign_result *out)
{
    campaign_config c = *cfg;
    c.seed = campaign_replica_seed(cfg->seed, i);
    sim_error err;
    sim_error_clear(&err);
    memset(out, 0, sizeof *out);
    int rc = campaign_run(&c, NULL, NULL, NULL, out, &err);
    if (rc)
        fprintf(stderr, "fresh run of replica %u: %s\n", i, err.msg);
    return rc;
}

static int same(const campaign_result *a, const campaign_result *b)
{
    return memcmp(a, b, sizeof *a) == 0; /* all 8-byte fields: no padding */
}

/* N replicas on 1 and 2 threads, each against its fresh run. */
static void check_replicas(const campaign_config *cfg, const char *name)
{
    enum { N = 12 };
    campaign_result r[N], ref[N];
    for (unsigned i = 0; i < N; i++)
        CHECK(fresh(cfg, i, &ref[i]) == 0);
    for (int threads = 1; threads <= 2; threads++) {
        omp_set_num_threads(threads);
        memset(r, 0, sizeof r);
        sim_error err;
        sim_error_clear(&err);
        CHECK(campaign_run(cfg, NULL, NULL, NULL, &r[0], &err) == 0);
        CHECK(campaign_run_replicas(cfg, N, r, NULL, NULL, &err) == 0);
        unsigned differ = 0;
        for (unsigned i = 0; i < N; i++)
            differ += !same(&r[i], &ref[i]);
        printf("%s: %d thread(s), %u of %d replicas differ from their fresh runs\n", name,
               threads, differ, N);
        CHECK_INT_EQ(differ, 0);
    }
    /* the replicas are not copies of one run */
    unsigned distinct = 0;
    for (unsigned i = 1; i < N; i++)
        distinct += ref[i].event_digest != ref[i - 1].event_digest;
    CHECK_INT_EQ(distinct, N - 1);
}

static void test_replicas_equal_fresh_runs(void)
{
    campaign_config rich = every_stream(256, 5);
    campaign_result one;
    CHECK(fresh(&rich, 1, &one) == 0);
    /* every stream draws: each cause fails, nodes turn slow, spares run out */
    for (unsigned k = 0; k <= rich.n_causes; k++)
        CHECK(one.failures_by_cause[k] > 0);
    CHECK(one.stragglers > 0 && one.drains > 0);
    CHECK(one.silent_failures > 0 && one.repairs > 0);
    CHECK(one.elastic_restarts > 0 && one.maintenance_windows > 0);
    CHECK(one.events_fired > 4096);
    check_replicas(&rich, "every stream");
    campaign_config async = async_job(512, 9);
    CHECK(fresh(&async, 1, &one) == 0);
    CHECK(one.failures > 0);
    check_replicas(&async, "async checkpoints");
}

static int stop_at_first_poll(void *ctx, double progress_frac, double sim_time_s)
{
    (void)progress_frac, (void)sim_time_s;
    ++*(int *)ctx;
    return 1;
}

/* One workspace through runs of other sizes and kinds, an interrupted run
 * among them: each completed run equals its fresh run. */
static void test_workspace_carries_nothing(void)
{
    campaign_workspace *ws = campaign_workspace_create();
    CHECK(ws != NULL);
    if (!ws)
        return;
    campaign_config big = every_stream(512, 7), small = every_stream(128, 7);
    campaign_config async = async_job(256, 3);
    campaign_config plain = base_job(64, 200, 11); /* no failures at all: no streams */
    /* nodes slow often and for long: many are still slow when a run ends */
    campaign_config slow = every_stream(256, 13);
    slow.straggler_rate_per_s = 1 / (100 * 3600.0);
    slow.straggler_drain_s = 200 * 3600;
    struct {
        const campaign_config *cfg;
        unsigned replica;
        int interrupt;
    } seq[] = {
        {&big, 3, 0},   {&small, 5, 0}, {&big, 4, 1},   {&small, 5, 0}, {&async, 2, 0},
        {&plain, 0, 0}, {&big, 3, 0},   {&small, 6, 1}, {&async, 8, 0}, {&small, 1, 0},
        {&slow, 1, 0},  {&big, 3, 0},   {&slow, 2, 1},  {&slow, 3, 0},  {&small, 5, 0},
    };
    unsigned n = sizeof seq / sizeof seq[0], differ = 0, interrupted = 0;
    for (unsigned k = 0; k < n; k++) {
        campaign_config c = *seq[k].cfg;
        c.seed = campaign_replica_seed(c.seed, seq[k].replica);
        campaign_result got, ref;
        memset(&got, 0, sizeof got);
        sim_error err;
        sim_error_clear(&err);
        int polls = 0;
        int rc = campaign_run_in(ws, &c, NULL, seq[k].interrupt ? stop_at_first_poll : NULL,
                                 &polls, &got, &err);
        if (seq[k].interrupt) { /* stops with its failures and segments still pending */
            CHECK_INT_EQ(rc, SIM_ERR_INTERRUPTED);
            CHECK_INT_EQ(polls, 1);
            interrupted++;
            continue;
        }
        CHECK_INT_EQ(rc, 0);
        CHECK(fresh(seq[k].cfg, seq[k].replica, &ref) == 0);
        differ += !same(&got, &ref);
        if (seq[k].cfg == &slow) /* still slow at the end: not drained */
            CHECK(got.stragglers > got.drains);
    }
    printf("one workspace, %u runs (%u interrupted): %u differ from their fresh runs\n", n,
           interrupted, differ);
    CHECK_INT_EQ(differ, 0);
    CHECK_INT_EQ(interrupted, 3);
    campaign_workspace_destroy(ws);
    campaign_workspace_destroy(NULL);
}

int main(void)
{
    test_replicas_equal_fresh_runs();
    test_workspace_carries_nothing();
    return check_report();
}
