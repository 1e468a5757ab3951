/* test_cluster_interf.c - interference on the shared fabric
 * (models/cluster_interf.h, the pacer of models/cluster.h) on small
 * leaf-spines built here (one GPU per host, no scale-up, NCCL latencies set
 * to 0 so that a ring all-reduce of 2 ranks takes S / B exactly):
 *  - one job alone with a fabric: run time = stated duration exactly;
 *  - two jobs on disjoint leaves of a non-blocking fabric: no slowdown,
 *    exactly (no shared link: separate components);
 *  - two jobs whose rings share one oversubscribed leaf's uplink (and its
 *    downlink): each all-reduce gets half of it, so with compute c and
 *    m = S / B alone, run = d (c + 2m) / (c + m) (max-min closed form);
 *  - with a share o of the compute hiding the collective: run = d (c +
 *    max(0, 2m - o c)) / (c + max(0, m - o c)), and d exactly when hidden;
 *  - an all-to-all (S/2 each way on 2 ranks): the same closed form with
 *    m = S / 2B;
 *  - a pacer that always answers 1 gives the schedule of no pacer (every
 *    start and end bit-equal);
 *  - the cache: a run with it equals a run without it bit for bit, with
 *    hits counted; busy + idle GPU-s = capacity with interference;
 *  - a stream on a 3:1 leaf-spine: every run >= its stated duration,
 *    interference GPU-s = sum of GPUs x (run - d) >= 0, determinism.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cluster.h"
#include "cluster_interf.h"
#include "fabric.h"
#include "leaf_fabric.h"

#define B_LINK 50e9 /* 400 Gb/s, bytes/s (the test's own link, efficiency 1) */

/* a leaf-spine of radix R, down:up, hosts per leaf; latencies 0 */
static int make_fabric(fabric *f, unsigned gpus, unsigned radix, unsigned hosts_per_leaf,
                       unsigned down, unsigned up)
{
    if (make_leaf_fabric_over(f, gpus, radix, hosts_per_leaf, down, up, B_LINK))
        return -1;
    leaf_fabric_zero_latency(f);
    return 0;
}

static cluster_config shape(uint32_t gpus, const cluster_job_spec *jobs, uint32_t n)
{
    cluster_config c;
    memset(&c, 0, sizeof c);
    c.gpus = gpus;
    c.node_gpus = 1;
    c.leaf_gpus = gpus; /* the scheduler's leaf: first-fit takes the lowest GPUs anyway */
    c.su_gpus = gpus;
    c.sched = cluster_sched_find("fifo");
    c.placer = cluster_placer_find("first-fit");
    c.jobs = jobs;
    c.n_jobs = n;
    c.seed = 1;
    return c;
}

static cluster_traffic_table table(double compute_s, double bytes)
{
    cluster_traffic_table t;
    memset(&t, 0, sizeof t);
    t.n = 1;
    t.from_gpus[0] = 1;
    t.t[0].compute_s = compute_s;
    t.t[0].bytes = bytes;
    return t;
}

static int run(const fabric *f, cluster_config *c, const cluster_traffic_table *t,
               uint32_t cache, cluster_result *r, cluster_interf_stats *st)
{
    sim_error err;
    sim_error_clear(&err);
    cluster_interf *x = cluster_interf_create(f, c->gpus, t, cache, &err);
    if (!x)
        return -1;
    c->pacer = cluster_interf_pacer(x);
    int rc = cluster_simulate(c, r, &err);
    if (rc)
        fprintf(stderr, "cluster: %s\n", err.msg);
    if (st)
        cluster_interf_get_stats(x, st);
    cluster_interf_destroy(x);
    c->pacer = NULL;
    return rc;
}

static void test_alone_exact(void)
{
    fabric f;
    CHECK(make_fabric(&f, 6, 4, 2, 2, 1) == 0);
    /* one 4-GPU job over three leaves (oversubscribed uplinks), alone */
    cluster_job_spec j[] = {{0, 4, 7200, 0}};
    cluster_config c = shape(6, j, 1);
    cluster_traffic_table t = table(0.02, 1e9);
    cluster_result r;
    cluster_interf_stats st;
    CHECK(run(&f, &c, &t, 64, &r, &st) == 0);
    CHECK(r.jobs[0].end_s - r.jobs[0].start_s == 7200);
    CHECK(r.stretch.max == 1 && r.interference_gpu_s == 0);
    CHECK(st.misses == 1 && st.hits == 0); /* its isolated all-reduce, once */
    cluster_result_free(&r);
    fabric_free(&f);
}

static void test_disjoint_nonblocking(void)
{
    fabric f;
    /* radix 4, 2 hosts and 2 uplinks per leaf (1:1), 4 leaves */
    CHECK(make_fabric(&f, 8, 4, 2, 1, 1) == 0);
    cluster_job_spec j[] = {{0, 4, 3600, 0}, {0, 4, 5400, 0}};
    cluster_config c = shape(8, j, 2);
    cluster_traffic_table t = table(0.02, 1e9);
    cluster_result r;
    cluster_interf_stats st;
    CHECK(run(&f, &c, &t, 64, &r, &st) == 0);
    /* first-fit: GPUs 0-3 (leaves 0, 1) and 4-7 (leaves 2, 3): no shared link */
    CHECK(r.jobs[0].end_s == 3600 && r.jobs[1].end_s == 5400);
    CHECK(r.interference_gpu_s == 0 && st.max_component == 1);
    cluster_result_free(&r);
    fabric_free(&f);
}

/* Three leaves of 2 hosts, one uplink each (2:1), one spine. A 1-GPU job
 * takes GPU 0; then jobs A = {1, 2} (leaf 0 -> leaf 1) and B = {3, 4}
 * (leaf 1 -> leaf 2) both cross leaf 1's uplink and downlink. Each ring of
 * 2 ranks moves S per connection; alone m = S / B; sharing leaf 1's links
 * the two coupled flows get B / 2 each: 2m, both done together. */
static void test_shared_uplink_closed_form(void)
{
    fabric f;
    CHECK(make_fabric(&f, 6, 4, 2, 2, 1) == 0);
    const double d = 36000, S = 1e9, cmp = 0.01;
    cluster_job_spec j[] = {{0, 1, d, 0}, {0, 2, d, 0}, {0, 2, d, 0}};
    cluster_config c = shape(6, j, 3);
    cluster_traffic_table t = table(cmp, S);
    cluster_result r;
    cluster_interf_stats st;
    CHECK(run(&f, &c, &t, 64, &r, &st) == 0);
    double m = S / B_LINK, expect = d * (cmp + 2 * m) / (cmp + m);
    CHECK(r.jobs[0].end_s == d); /* one GPU: no all-reduce */
    CHECK_REL(r.jobs[1].end_s - r.jobs[1].start_s, expect, 1e-12);
    CHECK_REL(r.jobs[2].end_s - r.jobs[2].start_s, expect, 1e-12);
    CHECK(st.max_component == 2);
    CHECK_REL(r.interference_gpu_s, 4 * (expect - d), 1e-12);
    CHECK_REL(r.stretch.max, (cmp + 2 * m) / (cmp + m), 1e-12);
    /* staggered: B arrives half-way through A's isolated run. A runs alone
     * for d/2 at pace 1, then both at pace p = (c + m)/(c + 2m) until A
     * ends; B then finishes alone at pace 1: A's run = d/2 + (d/2) / p; B
     * did (d/2) p' ... B's shared time is A's (d/2)/p, in which it does
     * d/2 of work, then d/2 alone. */
    cluster_job_spec k[] = {{0, 1, 2 * d, 0}, {0, 2, d, 0}, {d / 2, 2, d, 0}};
    c = shape(6, k, 3);
    cluster_result q;
    CHECK(run(&f, &c, &t, 64, &q, NULL) == 0);
    double p = (cmp + m) / (cmp + 2 * m);
    CHECK_REL(q.jobs[1].end_s, d / 2 + d / 2 / p, 1e-12);
    CHECK_REL(q.jobs[2].end_s - q.jobs[2].start_s, d / 2 / p + d / 2, 1e-12);
    cluster_result_free(&q);
    cluster_result_free(&r);
    fabric_free(&f);
}

/* the same two jobs with a share o of the compute hiding the collective:
 * iteration(m) = c + max(0, m - o c), so run = d iteration(2m) /
 * iteration(m); with o c >= 2m the sharing is hidden: run = d exactly */
static void test_overlap_closed_form(void)
{
    fabric f;
    CHECK(make_fabric(&f, 6, 4, 2, 2, 1) == 0);
    const double d = 36000, S = 1e9, m = S / B_LINK; /* m = 0.02 s */
    const struct { double compute, overlap; } cases[] = {{0.01, 0.5}, {0.1, 0.3}, {0.1, 0.5}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double c = cases[i].compute, hide = cases[i].overlap * c;
        cluster_job_spec j[] = {{0, 1, d, 0}, {0, 2, d, 0}, {0, 2, d, 0}};
        cluster_config cfg = shape(6, j, 3);
        cluster_traffic_table t = table(c, S);
        t.t[0].overlap = cases[i].overlap;
        cluster_result r;
        CHECK(run(&f, &cfg, &t, 64, &r, NULL) == 0);
        double alone = c + fmax(0, m - hide), now = c + fmax(0, 2 * m - hide);
        double expect = d * now / alone;
        CHECK_REL(r.jobs[1].end_s - r.jobs[1].start_s, expect, 1e-12);
        CHECK_REL(r.jobs[2].end_s - r.jobs[2].start_s, expect, 1e-12);
        if (hide >= 2 * m) /* 0.05 s hides even the shared 0.04 s: no slowdown at all */
            CHECK(r.jobs[1].end_s - r.jobs[1].start_s == d && r.interference_gpu_s == 0);
        cluster_result_free(&r);
    }
    fabric_free(&f);
}

/* a profile derived from the step tier (docs/cluster.md "Traffic from the
 * step tier"): it hides max(0, m_alone - E) of its collectives, E the step
 * tier's exposed communication, and not overlap x c: alone c + min(m, E),
 * sharing c + 2m - max(0, m - E). A class given by a model whose size was
 * not derived is refused when its job starts. */
static void test_from_model_closed_form(void)
{
    fabric f;
    CHECK(make_fabric(&f, 6, 4, 2, 2, 1) == 0);
    const double d = 36000, S = 1e9, m = S / B_LINK, c = 0.1; /* m = 0.02 s */
    const double exposed[] = {0.03, 0.01, 0};
    for (size_t i = 0; i < sizeof exposed / sizeof exposed[0]; i++) {
        cluster_job_spec j[] = {{0, 1, d, 0}, {0, 2, d, 0}, {0, 2, d, 0}};
        cluster_config cfg = shape(6, j, 3);
        cluster_traffic_table t = table(c, S);
        t.t[0].from_model = CLUSTER_FROM_MODEL_SIZE;
        t.t[0].exposed_s = exposed[i];
        t.t[0].overlap = 0.5; /* not read */
        cluster_result r;
        CHECK(run(&f, &cfg, &t, 64, &r, NULL) == 0);
        double hide = fmax(0, m - exposed[i]);
        double alone = c + fmin(m, exposed[i]), now = c + 2 * m - hide;
        CHECK_REL(r.jobs[1].end_s - r.jobs[1].start_s, d * now / alone, 1e-12);
        CHECK_REL(r.jobs[2].end_s - r.jobs[2].start_s, d * now / alone, 1e-12);
        cluster_result_free(&r);
    }
    cluster_job_spec j[] = {{0, 2, d, 0}};
    cluster_config cfg = shape(6, j, 1);
    cluster_traffic_table t = table(c, S);
    t.t[0].from_model = CLUSTER_FROM_MODEL_CLASS;
    cluster_result r;
    CHECK(run(&f, &cfg, &t, 64, &r, NULL) != 0);
    cluster_result_free(&r);
    fabric_free(&f);
}

/* an all-to-all instead (an expert-parallel exchange): each of the two
 * ranks sends S/2 to the other, both directions at once, alone in m' =
 * S / (2 B); A's and B's sends cross leaf 1's uplink and downlink together,
 * two flows a link: 2 m'. The digest tells it from an all-reduce of the same
 * bytes: the cache never hands one the other's times. */
static void test_alltoall_closed_form(void)
{
    fabric f;
    CHECK(make_fabric(&f, 6, 4, 2, 2, 1) == 0);
    const double d = 36000, S = 1e9, cmp = 0.01, m = S / (2 * B_LINK);
    cluster_job_spec j[] = {{0, 1, d, 0}, {0, 2, d, 0}, {0, 2, d, 0}};
    cluster_config c = shape(6, j, 3);
    cluster_traffic_table t = table(cmp, S);
    t.t[0].collective = NC_ALLTOALL;
    cluster_result r;
    CHECK(run(&f, &c, &t, 64, &r, NULL) == 0);
    double expect = d * (cmp + 2 * m) / (cmp + m);
    CHECK_REL(r.jobs[1].end_s - r.jobs[1].start_s, expect, 1e-12);
    CHECK_REL(r.jobs[2].end_s - r.jobs[2].start_s, expect, 1e-12);
    cluster_result_free(&r);
    fabric_free(&f);
}

static int one_start(void *ctx, uint32_t id, const cluster_job_spec *spec, const uint32_t *g,
                     uint32_t n, sim_error *err)
{
    (void)ctx, (void)id, (void)spec, (void)g, (void)n, (void)err;
    return 0;
}
static void one_end(void *ctx, uint32_t id) { (void)ctx, (void)id; }
static int one_pace(void *ctx, double now_s, const uint32_t *ids, uint32_t n, double *p,
                    sim_error *err)
{
    (void)ctx, (void)now_s, (void)ids, (void)err;
    for (uint32_t k = 0; k < n; k++)
        p[k] = 1;
    return 0;
}

static cluster_config stream(uint32_t gpus)
{
    cluster_config c;
    memset(&c, 0, sizeof c);
    c.gpus = gpus;
    c.node_gpus = 8;
    c.leaf_gpus = 32;
    c.su_gpus = gpus;
    c.sched = cluster_sched_find("easy-backfill");
    c.placer = cluster_placer_find("first-fit");
    c.seed = 5;
    cluster_stream *st = &c.stream;
    st->rate_per_s = 6.0 / 3600;
    st->window_s = 2 * 86400;
    st->n_sizes = 4;
    uint32_t sz[] = {8, 16, 32, 64};
    for (unsigned i = 0; i < 4; i++) {
        st->size_gpus[i] = sz[i];
        st->size_weight[i] = 1;
    }
    st->dur = (cluster_duration){CLUSTER_DUR_LOGNORMAL, 3600, 1.0, 86400};
    return c;
}

static void test_unit_pace_is_no_pacer(void)
{
    cluster_config c = stream(128);
    cluster_result a, b;
    sim_error err;
    sim_error_clear(&err);
    CHECK(cluster_simulate(&c, &a, &err) == 0);
    cluster_pacer one = {NULL, one_start, one_end, one_pace};
    c.pacer = &one;
    CHECK(cluster_simulate(&c, &b, &err) == 0);
    CHECK(a.n_jobs == b.n_jobs && a.n_jobs > 20);
    int same = 1;
    for (uint32_t i = 0; i < a.n_jobs; i++)
        same &= a.jobs[i].start_s == b.jobs[i].start_s && a.jobs[i].end_s == b.jobs[i].end_s;
    CHECK(same);
    CHECK(b.retimes > 0 && b.interference_gpu_s == 0);
    cluster_result_free(&a);
    cluster_result_free(&b);
}

/* nodes of 8 GPUs (no scale-up links in this fabric: one port per GPU),
 * leaves of 24 host ports and 8 uplinks (3:1), 128 GPUs on 6 leaves */
static void test_stream_cache_conservation(void)
{
    fabric f;
    CHECK(make_fabric(&f, 128, 32, 24, 3, 1) == 0);
    cluster_config c = stream(128);
    c.leaf_gpus = 32; /* not the fabric's 24: jobs straddle its leaves */
    cluster_traffic_table t = table(0.05, 2e9);
    cluster_result a, b, z;
    cluster_interf_stats sa, sb, sz;
    CHECK(run(&f, &c, &t, 256, &a, &sa) == 0);
    CHECK(run(&f, &c, &t, 0, &b, &sb) == 0);
    CHECK(run(&f, &c, &t, 256, &z, &sz) == 0);
    int same = a.n_jobs == b.n_jobs, again = a.n_jobs == z.n_jobs, slower = 1;
    double cost = 0;
    for (uint32_t i = 0; same && i < a.n_jobs; i++) {
        same &= a.jobs[i].end_s == b.jobs[i].end_s && a.jobs[i].start_s == b.jobs[i].start_s;
        again &= a.jobs[i].end_s == z.jobs[i].end_s;
        double run_s = a.jobs[i].end_s - a.jobs[i].start_s;
        slower &= run_s >= a.jobs[i].spec.duration_s * (1 - 1e-12);
        cost += (run_s - a.jobs[i].spec.duration_s) * a.jobs[i].spec.gpus;
    }
    CHECK(same && again && slower);
    CHECK(a.digest == b.digest && a.digest == z.digest);
    CHECK(sa.hits > 0 && sb.hits == 0 && sb.misses == sb.simulations);
    CHECK(sa.hits + sa.misses == sb.misses); /* the same look-ups */
    CHECK(a.interference_gpu_s > 0);
    CHECK_REL(a.interference_gpu_s, cost, 1e-9);
    CHECK_REL(a.busy_gpu_s + a.idle_gpu_s, a.capacity_gpu_s, 1e-9);
    cluster_result_free(&a);
    cluster_result_free(&b);
    cluster_result_free(&z);
    fabric_free(&f);
}

int main(void)
{
    test_alone_exact();
    test_disjoint_nonblocking();
    test_shared_uplink_closed_form();
    test_overlap_closed_form();
    test_alltoall_closed_form();
    test_from_model_closed_form();
    test_unit_pace_is_no_pacer();
    test_stream_cache_conservation();
    return check_report();
}
