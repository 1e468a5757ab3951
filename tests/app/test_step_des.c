/* test_step_des.c - the concurrent iteration (step.h network="concurrent",
 * models/step_des.c): equal to the isolated iteration where nothing can
 * contend, the same bytes on the fabric whatever overlaps, a pipeline that
 * obeys its schedule, stragglers, determinism, and refusals. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "step.h"

#include "step_fixture.h"

static step_options options(int concurrent)
{
    step_options o;
    step_options_defaults(&o);
    o.concurrent = concurrent;
    return o;
}

/* One replica, two stages: the forward sends (stage 0 -> 1) and backward
 * sends (1 -> 0) use opposite directions of every link and there is no DP
 * traffic, so nothing contends: the concurrent iteration is the isolated
 * one, part by part. */
static void test_no_contention(void)
{
    model_arch m = model();
    parallel_config p = par(8, 2, 1, 16);
    step_options iso = options(0), con = options(1);
    step_profile a, b;
    CHECK(run(&m, p, rail_ndr(0), 0, &iso, &a) == 0);
    CHECK(run(&m, p, rail_ndr(0), 0, &con, &b) == 0);
    printf("no contention: isolated %.9f s, concurrent %.9f s\n", a.iteration_s, b.iteration_s);
    CHECK_REL(b.iteration_s, a.iteration_s, 1e-12);
    for (int k = 0; k < STEP_PART_COUNT; k++)
        CHECK_NEAR(b.part_s[k], a.part_s[k], 1e-12 * a.iteration_s);
    CHECK(b.part_s[STEP_PP] > 0); /* the sends were priced, not free */
    check_conservation(&b);
    step_profile_free(&a);
    step_profile_free(&b);
    /* a sharded optimizer without data parallelism: nothing to gather */
    p.zero_stage = 3;
    CHECK(run(&m, p, rail_ndr(0), 0, &iso, &a) == 0);
    CHECK(run(&m, p, rail_ndr(0), 0, &con, &b) == 0);
    CHECK_REL(b.iteration_s, a.iteration_s, 1e-12);
    step_profile_free(&a);
    step_profile_free(&b);
}

/* The bytes are the job's whatever overlaps: every tier carries the same
 * bytes in the concurrent iteration as in the isolated one (minimal routes
 * cross each tier the same number of times), and the scale-up tier (TP) is
 * priced alike. */
static void check_same_bytes(const step_profile *a, const step_profile *b)
{
    for (int t = 0; t < STEP_TIERS; t++)
        CHECK_REL(b->tier_bytes[t] + 1, a->tier_bytes[t] + 1, 1e-9);
}

/* The pipeline obeys its schedule: 2 m v p tasks, stage by stage, each
 * stage's tasks one after another, a forward of a later model position
 * after the one before it, and every task as long as its compute. */
static void check_gantt(const step_profile *q, const parallel_config *p, unsigned m)
{
    unsigned v = p->vpp ? p->vpp : 1;
    CHECK_INT_EQ(q->n_tasks, 2 * (size_t)m * v * p->pp);
    size_t per = 2 * (size_t)m * v;
    for (size_t i = 0; i < q->n_tasks; i++) {
        const sched_task *t = &q->tasks[i];
        CHECK_INT_EQ(t->stage, i / per);
        CHECK(t->end_s > t->start_s);
        if (i % per)
            CHECK(t->start_s >= q->tasks[i - 1].end_s - 1e-12);
        CHECK(t->end_s <= q->iteration_s * (1 + 1e-12));
    }
}

/* Link utilisation over time: the bins cover the iteration (at most 4,096
 * of them), and per bin
 * and tier 0 <= mean <= busiest <= 1 (no link above its capacity); the
 * fabric's tiers carry traffic in some bin. */
static void check_bins(const step_profile *q)
{
    CHECK(q->n_bins > 0 && q->bin_s > 0);
    CHECK(q->n_bins * q->bin_s >= q->iteration_s);
    CHECK(q->n_bins <= 4096);
    double busiest = 0;
    for (unsigned b = 0; b < q->n_bins; b++)
        for (int t = 0; t < STEP_TIERS; t++) {
            double pk = q->bin_peak[b * STEP_TIERS + t], mn = q->bin_mean[b * STEP_TIERS + t];
            CHECK(mn >= 0 && mn <= pk * (1 + 1e-12) + 1e-15 && pk <= 1 + 1e-9);
            if (t > 0)
                busiest = fmax(busiest, pk);
        }
    CHECK(busiest > 0);
}

/* 16 replicas on a 3:1 oversubscribed RoCE leaf-spine with ECMP: the
 * concurrent iteration conserves bytes, adds up, keeps its schedule and is
 * repeatable bit for bit; it is never faster than the job with free
 * communication. */
static void test_contention(void)
{
    model_arch m = model();
    parallel_config p = par(8, 2, 16, 256);
    fabric_config roce = rail_ndr(0);
    roce.topology = topo_kind_find("leaf-spine");
    roce.link = *scn_catalog_link(cat, "roce-400g");
    roce.link.efficiency = 0.94; /* as the catalog's default rule fills it */
    roce.shape.over_down = 3;
    roce.shape.over_up = 1;
    roce.shape.radix = 64;
    roce.routing.balance = TOPO_BALANCE_ECMP;
    step_options iso = options(0), con = options(1);
    step_profile a, b, c, free_comm;
    CHECK(run(&m, p, roce, 0, &iso, &a) == 0);
    CHECK(run(&m, p, roce, 0, &con, &b) == 0);
    CHECK(run(&m, p, roce, 0, &con, &c) == 0);
    CHECK(run(&m, p, roce, 1, &con, &free_comm) == 0);
    printf("leaf-spine 3:1 ECMP, TP8 PP2 DP16: isolated %.6f s (pp %.6f, dp %.6f), "
           "concurrent %.6f s (pp %.6f, dp %.6f), free communication %.6f s\n", a.iteration_s,
           a.part_s[STEP_PP], a.part_s[STEP_DP], b.iteration_s, b.part_s[STEP_PP],
           b.part_s[STEP_DP], free_comm.iteration_s);
    check_same_bytes(&a, &b);
    check_conservation(&b);
    check_gantt(&b, &p, 16);
    check_bins(&b);
    CHECK(a.n_bins == 0 && a.bin_peak == NULL);
    CHECK(b.iteration_s > free_comm.iteration_s);
    CHECK(b.iteration_s == c.iteration_s);
    CHECK(!memcmp(b.link_bytes, c.link_bytes, b.n_links * sizeof *b.link_bytes));
    CHECK(!memcmp(b.tasks, c.tasks, b.n_tasks * sizeof *b.tasks));
    for (uint32_t l = 0; l < b.n_links; l++)
        CHECK(isfinite(b.link_utilisation[l]) && b.link_utilisation[l] >= 0 &&
              b.link_utilisation[l] <= 1 + 1e-9);
    step_profile_free(&a);
    step_profile_free(&b);
    step_profile_free(&c);
    step_profile_free(&free_comm);
}

/* An interleaved pipeline with ZeRO's parameter gather and four stages:
 * the schedule holds and the parts add up. */
static void test_interleaved(void)
{
    model_arch m = model();
    parallel_config p = par(8, 4, 4, 64);
    p.vpp = 2;
    p.schedule = SCHEDULE_INTERLEAVED;
    p.zero_stage = 2;
    step_options con = options(1), iso = options(0);
    step_profile a, b;
    CHECK(run(&m, p, rail_ndr(0), 0, &iso, &a) == 0);
    CHECK(run(&m, p, rail_ndr(0), 0, &con, &b) == 0);
    printf("interleaved TP8 PP4 DP4 v2 ZeRO 2: isolated %.6f s, concurrent %.6f s\n",
           a.iteration_s, b.iteration_s);
    check_conservation(&b);
    check_gantt(&b, &p, 16);
    check_same_bytes(&a, &b);
    CHECK(b.coll_total_s[COMM_DP_ALLGATHER] > 0);
    step_profile_free(&a);
    step_profile_free(&b);
}

/* One GPU slower: the concurrent iteration slows by more the slower it is,
 * never by more than 1/speed, names the GPU and the replicas' wait. */
static void test_straggler(void)
{
    model_arch m = model();
    parallel_config p = par(8, 2, 4, 64);
    unsigned gpus = 64;
    double speed[64], levels[] = {1.0, 0.95, 0.8}, prev = 0, base = 0;
    for (int k = 0; k < 3; k++) {
        for (unsigned g = 0; g < gpus; g++)
            speed[g] = 1;
        speed[42] = levels[k];
        step_options o = options(1);
        o.gpu_speed = speed;
        o.n_gpu_speed = gpus;
        step_profile q;
        CHECK(run(&m, p, rail_ndr(0), 0, &o, &q) == 0);
        if (k == 0) {
            base = q.iteration_s;
            CHECK(q.slowest_gpu == UINT32_MAX);
        } else {
            CHECK(q.iteration_s > prev);
            CHECK(q.iteration_s <= base / levels[k] * (1 + 1e-9));
            CHECK_INT_EQ(q.slowest_gpu, 42);
            CHECK(q.wait_s > 0);
        }
        check_conservation(&q);
        prev = q.iteration_s;
        step_profile_free(&q);
    }
}

/* The concurrent iteration runs on the flow model only. */
static void test_refusal(void)
{
    model_arch m = model();
    parallel_config p = par(8, 2, 1, 16);
    workload w;
    sim_error err;
    sim_error_clear(&err);
    CHECK(workload_build(&m, &p, 16, &w, &err) == 0);
    fabric_config fc = rail_ndr(16);
    fabric f;
    CHECK(fabric_build(&fc, &f, &err) == 0);
    step_options o = options(1);
    o.analytic = 1;
    step_profile q;
    CHECK_INT_EQ(step_simulate(&w, &dev, &f, &o, &q, &err), SIM_ERR_INPUT);
    CHECK(strstr(err.msg, "flow model") != NULL);
    fabric_free(&f);
    workload_free(&w);
}

int main(void)
{
    if (fixture_init())
        return 1;
    test_no_contention();
    test_contention();
    test_interleaved();
    test_straggler();
    test_refusal();
    scn_catalog_free(cat);
    return check_report();
}
