/* test_cluster_elastic.c - elastic jobs in the cluster tier (models/cluster.h,
 * docs/cluster.md "Elastic jobs"): a job alone on a cluster smaller than its
 * GPUs ends at exactly work / g; growth and a shrink under preemption worked
 * by hand (exact ends, no eviction); work conserved over resizes, failures
 * and windows (busy = useful + lost, busy + idle + down = capacity, no GPU
 * held twice, each job's mean GPUs within [min, GPUs]); EASY: no blocked
 * head starts after its reservation; a congested stream waits less with
 * elastic on; refusals (min above the GPUs, min 0 in a trace); determinism;
 * a trace job larger than the cluster read (dcsim and imported layouts) only
 * when elastic with its min fitting, and run on the whole cluster: it ends at
 * exactly GPUs x duration / cluster GPUs.
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

/* 16 GPUs x 1000 s of work alone on 8 GPUs: starts at once on the 8, ends
 * at 16 x 1000 / 8 = 2000 s; rigid (elastic off) it is refused */
static void test_alone(void)
{
    cluster_job_spec job = {0, 16, 1000, 0};
    uint32_t min = 4;
    cluster_config c = shape(8, 4, "easy-backfill");
    c.jobs = &job;
    c.n_jobs = 1;
    c.min_gpus = &min;
    cluster_result r;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(cluster_simulate(&c, &r, &err), 0);
    CHECK_NEAR(r.jobs[0].start_s, 0, 0);
    CHECK_NEAR(r.jobs[0].end_s, 16.0 * 1000 / 8, 1e-9);
    CHECK_NEAR(r.jobs[0].gpus_mean, 8, 1e-12);
    CHECK_INT_EQ(r.jobs[0].resizes, 0);
    CHECK_INT_EQ(r.elastic_jobs, 1);
    CHECK_NEAR(r.busy_gpu_s, 16000, 1e-6);
    CHECK_NEAR(r.utilisation, 1, 1e-12);
    cluster_result_free(&r);
    c.elastic = 0;
    sim_error_clear(&err);
    CHECK_INT_EQ(cluster_simulate(&c, &r, &err), SIM_ERR_INPUT);
    CHECK_CONTAINS(err.msg, "job GPUs");
}

/* growth: A rigid 4 GPUs x 100 s and B elastic 8 (min 2) x 1000 s at 0 on 8
 * GPUs. B starts on 4; at 100 A ends and B grows to 8, paying the restart R:
 * 400 of its 8000 GPU-s done, 7600 left at 8 GPUs = 950 s: B ends at
 * 100 + R + 950. With R = 0 and R = 10. */
static void test_grow(void)
{
    cluster_job_spec jobs[2] = {{0, 4, 100, 0}, {0, 8, 1000, 0}};
    uint32_t min[2] = {0, 2};
    for (int k = 0; k < 2; k++) {
        double R = k ? 10 : 0;
        cluster_config c = shape(8, 4, "fifo");
        c.jobs = jobs;
        c.n_jobs = 2;
        c.min_gpus = min;
        c.ckpt.restart_s = R;
        cluster_result r;
        sim_error err;
        sim_error_clear(&err);
        CHECK_INT_EQ(cluster_simulate(&c, &r, &err), 0);
        const cluster_job *b = &r.jobs[1];
        CHECK_NEAR(b->start_s, 0, 0);
        CHECK_NEAR(b->end_s, 100 + R + 950, 1e-9);
        CHECK_INT_EQ(b->resizes, 1);
        CHECK_INT_EQ(r.resizes, 1);
        /* held 4 GPUs for 100 s, 8 for R + 950 s */
        CHECK_NEAR(b->gpus_mean, (4 * 100 + 8 * (R + 950)) / (100 + R + 950), 1e-9);
        CHECK_NEAR(r.grown_gpu_s, 4 * (R + 950), 1e-6);
        CHECK_NEAR(r.restart_gpu_s, 8 * R, 1e-9);
        CHECK_NEAR(r.busy_gpu_s, 400 + 8000 + 8 * R, 1e-6);
        cluster_result_free(&r);
    }
}

/* preemption shrinks before it evicts: A elastic 8 (min 2) x 1000 s, priority
 * 0, at 0; B 4 GPUs x 100 s, priority 1, at 100, on 8 GPUs. At 100 A shrinks
 * to 4 (no eviction), B runs 100-200, A grows back to 8 at 200: 800 + 400
 * GPU-s done by 200, 6800 left at 8 = 850 s: A ends at 1050. */
static void test_preempt_shrinks(void)
{
    cluster_job_spec jobs[2] = {{0, 8, 1000, 0}, {100, 4, 100, 1}};
    uint32_t min[2] = {2, 0};
    cluster_config c = shape(8, 4, "easy-backfill");
    c.jobs = jobs;
    c.n_jobs = 2;
    c.min_gpus = min;
    c.preempt = 1;
    c.ckpt = (cluster_ckpt){100, 10, 0};
    cluster_result r;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(cluster_simulate(&c, &r, &err), 0);
    CHECK_INT_EQ(r.preemptions, 0);
    CHECK_NEAR(r.jobs[1].start_s, 100, 0);
    CHECK_NEAR(r.jobs[1].end_s, 200, 1e-9);
    CHECK_INT_EQ(r.jobs[0].resizes, 2);
    CHECK_NEAR(r.jobs[0].end_s, 1050, 1e-9);
    CHECK_NEAR(r.rework_gpu_s, 0, 0);
    cluster_result_free(&r);
    /* rigid: A is evicted (checkpoint at 100: nothing lost), B waits for the write */
    c.elastic = 0;
    sim_error_clear(&err);
    CHECK_INT_EQ(cluster_simulate(&c, &r, &err), 0);
    CHECK_INT_EQ(r.preemptions, 1);
    CHECK_NEAR(r.jobs[1].start_s, 110, 1e-9);
    cluster_result_free(&r);
}

static cluster_config stream(uint32_t gpus, double rate_per_h, double share)
{
    cluster_config c = shape(gpus, 8, "easy-backfill");
    c.leaf_gpus = 32;
    c.stream.rate_per_s = rate_per_h / 3600;
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
    c.stream.elastic_share = share;
    c.stream.elastic_min_frac = 0.25;
    return c;
}

static void conserved(const cluster_result *r, uint32_t gpus)
{
    CHECK_REL(r->busy_gpu_s + r->idle_gpu_s + r->down_gpu_s, r->capacity_gpu_s, 1e-9);
    double useful = 0;
    int out_of_range = 0;
    for (uint32_t i = 0; i < r->n_jobs; i++) {
        const cluster_job *j = &r->jobs[i];
        useful += j->spec.duration_s * j->spec.gpus;
        uint32_t lo = j->min_gpus ? j->min_gpus : j->spec.gpus;
        uint32_t hi = j->spec.gpus < gpus ? j->spec.gpus : gpus;
        out_of_range += !(j->gpus_mean >= lo - 1e-9 && j->gpus_mean <= hi + 1e-9);
    }
    CHECK_INT_EQ(out_of_range, 0);
    CHECK_NEAR(r->lost_gpu_s, r->busy_gpu_s - useful, 1e-6 * r->busy_gpu_s);
}

/* work conserved over resizes: plain, with failures (shrinks off a failed
 * node), with windows and preemption by priority; no GPU held twice */
static void test_conservation(void)
{
    for (int k = 0; k < 3; k++) {
        cluster_config c = stream(128, 3, 0.5);
        c.ckpt = (cluster_ckpt){600, 60, 120};
        if (k == 1) {
            c.fail.rate_per_node_s = 1.0 / (2 * 86400);
            c.fail.repair_s = 3600;
        }
        cluster_reservation w[2] = {{2 * 86400, 7200, 0, 64}, {5 * 86400, 3600, 64, 64}};
        if (k == 2) {
            c.resv = w;
            c.n_resv = 2;
        }
        watch wt = {.gpus = c.gpus};
        wt.owner = calloc(c.gpus, sizeof *wt.owner);
        c.watch = on_watch;
        c.watch_ctx = &wt;
        cluster_result r;
        sim_error err;
        sim_error_clear(&err);
        CHECK_INT_EQ(cluster_simulate(&c, &r, &err), 0);
        CHECK(r.elastic_jobs > 100 && r.elastic_jobs < 300);
        CHECK(r.resizes > 0);
        if (k == 1)
            CHECK(r.interruptions > 0);
        conserved(&r, c.gpus);
        CHECK_INT_EQ(wt.clashes, 0);
        CHECK_INT_EQ(wt.bad_frees, 0);
        uint32_t busy = 0;
        for (uint32_t g = 0; g < c.gpus; g++)
            busy += wt.owner[g] != 0;
        CHECK_INT_EQ(busy, 0);
        free(wt.owner);
        cluster_result_free(&r);
    }
}

/* EASY: no blocked head starts after its reservation, elastic on; and a
 * congested stream waits less with elastic on than off (the same jobs) */
static void test_easy_and_wait(void)
{
    double wait[2];
    for (int e = 0; e < 2; e++) {
        cluster_config c = stream(128, 3, 0.5);
        c.elastic = e;
        cluster_result r;
        sim_error err;
        sim_error_clear(&err);
        CHECK_INT_EQ(cluster_simulate(&c, &r, &err), 0);
        int late = 0, heads = 0;
        for (uint32_t i = 0; i < r.n_jobs; i++)
            if (r.jobs[i].reserve_s >= 0) {
                heads++;
                late += r.jobs[i].start_s > r.jobs[i].reserve_s + 1e-6;
            }
        CHECK(heads > 10);
        CHECK_INT_EQ(late, 0);
        CHECK_INT_EQ(r.elastic_jobs > 0, 1);
        CHECK_INT_EQ(r.resizes > 0, e);
        wait[e] = r.wait_s.mean;
        cluster_result_free(&r);
    }
    printf("mean wait: rigid %.1f s, elastic %.1f s\n", wait[0], wait[1]);
    CHECK(wait[1] < wait[0]);
}

static void test_refusals_and_digest(void)
{
    cluster_job_spec job = {0, 8, 100, 0};
    uint32_t min = 9;
    cluster_config c = shape(8, 4, "fifo");
    c.jobs = &job;
    c.n_jobs = 1;
    c.min_gpus = &min;
    cluster_result r;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(cluster_simulate(&c, &r, &err), SIM_ERR_INPUT);
    CHECK_CONTAINS(err.msg, "min GPUs");
    const char *zero = "submit_s,gpus,duration_s,min_gpus\n0,8,100,0\n";
    cluster_job_spec *v = NULL;
    uint32_t *m = NULL, n = 0;
    sim_error_clear(&err);
    CHECK_INT_EQ(cluster_trace_parse_min(zero, strlen(zero), "t.csv", 64, &v, &m, &n, &err),
                 SIM_ERR_INPUT);
    CHECK_CONTAINS(err.msg, "min_gpus 0");
    const char *big = "submit_s,gpus,duration_s,min_gpus\n0,8,100,9\n";
    sim_error_clear(&err);
    CHECK_INT_EQ(cluster_trace_parse_min(big, strlen(big), "t.csv", 64, &v, &m, &n, &err),
                 SIM_ERR_INPUT);
    const char *ok = "submit_s,gpus,duration_s,min_gpus\n0,8,100,2\n5,4,100,\n";
    sim_error_clear(&err);
    CHECK_INT_EQ(cluster_trace_parse_min(ok, strlen(ok), "t.csv", 64, &v, &m, &n, &err), 0);
    CHECK_INT_EQ(n, 2);
    CHECK_INT_EQ(m[0], 2);
    CHECK_INT_EQ(m[1], 0);
    free(v);
    free(m);
    cluster_config s = stream(128, 3, 0.5);
    uint64_t d[2];
    for (int k = 0; k < 2; k++) {
        sim_error_clear(&err);
        CHECK_INT_EQ(cluster_simulate(&s, &r, &err), 0);
        d[k] = r.digest;
        cluster_result_free(&r);
    }
    CHECK(d[0] == d[1]);
}


/* a job of 16 GPUs (min 4) in traces for a cluster of 8: read in the dcsim
 * layout and an imported one, refused without a min, with a min above 8 or
 * by the reader that returns no min;
 * alone it runs on all 8: 16 x 3600 / 8 = 7200 s; rigid it is refused */
static void test_larger_than_cluster(void)
{
    const char *ok = "submit_s,gpus,duration_s,min_gpus\n0,16,3600,4\n";
    const char *rigid = "submit_s,gpus,duration_s,min_gpus\n0,16,3600,\n";
    const char *high = "submit_s,gpus,duration_s,min_gpus\n0,16,3600,12\n";
    cluster_job_spec *v = NULL;
    uint32_t *m = NULL, n = 0;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(cluster_trace_parse_min(rigid, strlen(rigid), "t.csv", 8, &v, &m, &n, &err),
                 SIM_ERR_INPUT);
    CHECK(strcmp(err.file, "t.csv") == 0 && err.line == 2);
    CHECK_CONTAINS(err.msg, "gpus 16 must be");
    sim_error_clear(&err);
    CHECK_INT_EQ(cluster_trace_parse_min(high, strlen(high), "t.csv", 8, &v, &m, &n, &err),
                 SIM_ERR_INPUT);
    /* the reader without a min_gpus out keeps every job rigid: 16 on 8 refused */
    sim_error_clear(&err);
    CHECK_INT_EQ(cluster_trace_parse(ok, strlen(ok), "t.csv", 8, &v, &n, &err), SIM_ERR_INPUT);
    CHECK(v == NULL);
    CHECK_CONTAINS(err.msg, "gpus 16 must be");
    sim_error_clear(&err);
    CHECK_INT_EQ(cluster_trace_parse_min(ok, strlen(ok), "t.csv", 8, &v, &m, &n, &err), 0);
    CHECK(n == 1 && v[0].gpus == 16 && m[0] == 4);
    cluster_config c = shape(8, 4, "easy-backfill");
    c.jobs = v;
    c.n_jobs = n;
    c.min_gpus = m;
    watch w = {8, calloc(8, sizeof(uint32_t)), 0, 0};
    c.watch = on_watch;
    c.watch_ctx = &w;
    cluster_result r;
    sim_error_clear(&err);
    CHECK_INT_EQ(cluster_simulate(&c, &r, &err), 0);
    CHECK(r.jobs[0].end_s == 16 * 3600.0 / 8);
    CHECK(r.jobs[0].gpus_mean == 8 && r.jobs[0].resizes == 0);
    CHECK(w.clashes == 0 && w.bad_frees == 0);
    CHECK_REL(r.busy_gpu_s, 8 * 7200.0, 1e-12);
    cluster_result_free(&r);
    free(w.owner);
    c.watch = NULL;
    c.elastic = 0; /* rigid at 16 GPUs it never fits */
    sim_error_clear(&err);
    CHECK_INT_EQ(cluster_simulate(&c, &r, &err), SIM_ERR_INPUT);
    CHECK_CONTAINS(err.msg, "job GPUs 16");
    free(v);
    free(m);
    /* an imported layout: the 16-GPU job kept with a min of 4, counted too
     * large without one */
    cluster_trace_layout lay;
    CHECK_INT_EQ(cluster_trace_layout_init(&lay, "columns"), 0);
    strcpy(lay.col[CLUSTER_TCOL_SUBMIT], "t");
    strcpy(lay.col[CLUSTER_TCOL_GPUS], "g");
    strcpy(lay.col[CLUSTER_TCOL_DURATION], "d");
    strcpy(lay.col[CLUSTER_TCOL_MIN_GPUS], "ming");
    const char *text = "t,g,d,ming\n0,16,3600,4\n10,16,3600,\n20,4,60,\n";
    cluster_trace_stats st;
    sim_error_clear(&err);
    CHECK_INT_EQ(cluster_trace_import_min(text, strlen(text), "i.csv", &lay, 8, &v, &m, &n, &st,
                                          &err), 0);
    CHECK(n == 2 && st.too_large == 1 && st.kept == 2);
    if (n == 2 && m)
        CHECK(v[0].gpus == 16 && m[0] == 4 && v[1].gpus == 4 && m[1] == 0);
    free(v);
    free(m);
}

int main(void)
{
    test_alone();
    test_grow();
    test_preempt_shrinks();
    test_conservation();
    test_easy_and_wait();
    test_refusals_and_digest();
    test_larger_than_cluster();
    return check_report();
}
