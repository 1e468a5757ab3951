/* test_cluster_elastic_scaling.c - sub-linear elastic scaling (cluster_config
 * elastic_exponent e; docs/cluster.md "Elastic jobs", rule 1): on g of its G
 * GPUs an elastic job progresses at (g / G)^e of its rate at G.
 *  - alone on half its GPUs (16 GPUs x 1000 s on a cluster of 8) it ends at
 *    exactly 1000 x 2^e: at twice the GPUs it runs 2^e < 2 times as fast;
 *    the end falls with e (monotone), and e = 1 is the linear 2000 s;
 *  - growth worked by hand: A rigid 4 GPUs x 100 s, B elastic 8 (min 2) x
 *    1000 s; B starts on 4 and does 100 x 2^-e of its work by 100 s, grows
 *    to 8 and ends at 100 + 1000 - 100 x 2^-e;
 *  - e = 1 given is the run of e left out bit for bit (the event digest) on
 *    a stream with resizes, failures and checkpoints;
 *  - a stream at e = 0.7: busy + idle + down = capacity, no GPU held twice,
 *    every job's mean GPUs within [min, GPUs], and the elastic jobs' GPU-h
 *    below those of the linear run of the same stream (each GPU does more
 *    work on a smaller share of a job).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cluster.h"
#include "gpu_watch.h"

static cluster_config shape(uint32_t gpus, uint32_t node, const char *sched)
{
    cluster_config c;
    memset(&c, 0, sizeof c);
    c.gpus = gpus;
    c.node_gpus = node;
    c.leaf_gpus = node;
    c.su_gpus = gpus;
    c.sched = cluster_sched_find(sched);
    c.placer = cluster_placer_find("first-fit");
    c.seed = 7;
    c.elastic = 1;
    return c;
}

static void test_alone(void)
{
    const double e[] = {1, 0.9, 0.75, 0.5, 0.25};
    double last = INFINITY;
    for (size_t k = 0; k < sizeof e / sizeof e[0]; k++) {
        cluster_job_spec job = {0, 16, 1000, 0};
        uint32_t min = 4;
        cluster_config c = shape(8, 4, "easy-backfill");
        c.jobs = &job;
        c.n_jobs = 1;
        c.min_gpus = &min;
        c.elastic_exponent = e[k];
        cluster_result r;
        sim_error err;
        sim_error_clear(&err);
        CHECK_INT_EQ(cluster_simulate(&c, &r, &err), 0);
        double end = 1000 * pow(2, e[k]);
        CHECK_REL(r.jobs[0].end_s, end, 1e-12);
        if (e[k] == 1)
            CHECK(r.jobs[0].end_s == 2000);
        CHECK(r.jobs[0].end_s < last); /* less scaling: less lost by running on half */
        last = r.jobs[0].end_s;
        CHECK_REL(r.busy_gpu_s, 8 * end, 1e-12);
        CHECK_REL(r.busy_gpu_s + r.idle_gpu_s, r.capacity_gpu_s, 1e-12);
        cluster_result_free(&r);
    }
}

static void test_grow(void)
{
    const double e[] = {1, 0.8, 0.5};
    for (size_t k = 0; k < sizeof e / sizeof e[0]; k++) {
        cluster_job_spec jobs[2] = {{0, 4, 100, 0}, {0, 8, 1000, 0}};
        uint32_t min[2] = {0, 2};
        cluster_config c = shape(8, 4, "fifo");
        c.jobs = jobs;
        c.n_jobs = 2;
        c.min_gpus = min;
        c.elastic_exponent = e[k];
        cluster_result r;
        sim_error err;
        sim_error_clear(&err);
        CHECK_INT_EQ(cluster_simulate(&c, &r, &err), 0);
        CHECK(r.jobs[1].start_s == 0);
        CHECK_INT_EQ(r.jobs[1].resizes, 1);
        CHECK_REL(r.jobs[1].end_s, 100 + 1000 - 100 * pow(2, -e[k]), 1e-12);
        /* the GPU-s it held: 4 x 100, then 8 to its end */
        CHECK_REL(r.busy_gpu_s, 400 + 400 + 8 * (r.jobs[1].end_s - 100), 1e-12);
        cluster_result_free(&r);
    }
}

static cluster_config stream(double e, int disrupt)
{
    cluster_config c = shape(128, 8, "easy-backfill");
    c.leaf_gpus = 32;
    c.stream.rate_per_s = 3.0 / 3600;
    c.stream.window_s = 20 * 86400;
    c.stream.max_jobs = 400;
    c.stream.n_sizes = 4;
    const uint32_t sizes[4] = {8, 16, 32, 64};
    const double weights[4] = {40, 30, 20, 10};
    for (int i = 0; i < 4; i++) {
        c.stream.size_gpus[i] = sizes[i];
        c.stream.size_weight[i] = weights[i];
    }
    c.stream.dur = (cluster_duration){CLUSTER_DUR_LOGNORMAL, 3600, 1.0, 3 * 86400};
    c.stream.elastic_share = 0.5;
    c.stream.elastic_min_frac = 0.25;
    c.elastic_exponent = e;
    if (disrupt) {
        c.ckpt = (cluster_ckpt){600, 60, 120};
        c.fail.rate_per_node_s = 1.0 / (2 * 86400);
        c.fail.repair_s = 3600;
    }
    return c;
}

static void test_linear_digest(void)
{
    uint64_t d[2];
    for (int k = 0; k < 2; k++) {
        cluster_config c = stream(k ? 1 : 0, 1);
        cluster_result r;
        sim_error err;
        sim_error_clear(&err);
        CHECK_INT_EQ(cluster_simulate(&c, &r, &err), 0);
        CHECK(r.resizes > 0 && r.interruptions > 0);
        d[k] = r.digest;
        cluster_result_free(&r);
    }
    CHECK(d[0] == d[1]);
}

/* the GPU-s the elastic jobs held */
static double elastic_gpu_s(const cluster_result *r)
{
    double s = 0;
    for (uint32_t i = 0; i < r->n_jobs; i++) {
        const cluster_job *j = &r->jobs[i];
        if (j->min_gpus && j->min_gpus < j->spec.gpus)
            s += j->gpus_mean * (j->end_s - j->start_s);
    }
    return s;
}

static void test_stream_conservation(void)
{
    double held[2];
    for (int k = 0; k < 2; k++) {
        cluster_config c = stream(k ? 0.7 : 1, 0);
        watch wt = {.gpus = c.gpus};
        wt.owner = calloc(c.gpus, sizeof *wt.owner);
        c.watch = on_watch;
        c.watch_ctx = &wt;
        cluster_result r;
        sim_error err;
        sim_error_clear(&err);
        CHECK_INT_EQ(cluster_simulate(&c, &r, &err), 0);
        CHECK(r.elastic_jobs > 100 && r.resizes > 0);
        CHECK_REL(r.busy_gpu_s + r.idle_gpu_s + r.down_gpu_s, r.capacity_gpu_s, 1e-9);
        CHECK_INT_EQ(wt.clashes, 0);
        int out = 0;
        for (uint32_t i = 0; i < r.n_jobs; i++) {
            const cluster_job *j = &r.jobs[i];
            uint32_t lo = j->min_gpus ? j->min_gpus : j->spec.gpus;
            out += !(j->gpus_mean >= lo - 1e-9 && j->gpus_mean <= j->spec.gpus + 1e-9);
        }
        CHECK_INT_EQ(out, 0);
        held[k] = elastic_gpu_s(&r);
        printf("elastic-exponent %.1f: elastic jobs held %.1f GPU-h, utilisation %.4f, "
               "mean slowdown %.4f, resizes %u\n", k ? 0.7 : 1.0, held[k] / 3600,
               r.utilisation, r.slowdown.mean, r.resizes);
        free(wt.owner);
        cluster_result_free(&r);
    }
    CHECK(held[1] < held[0]);
}

int main(void)
{
    test_alone();
    test_grow();
    test_linear_digest();
    test_stream_conservation();
    return check_report();
}
