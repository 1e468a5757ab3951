/* test_cluster_phase.c - iteration phases between co-located jobs
 * (models/cluster_phase.c, cluster_interf.h "enum cluster_phase"):
 *  - the names table both ways;
 *  - two windows of shares a and b of an iteration overlap a b of it on
 *    average under a uniform offset: the closed form against the mean
 *    overlap over a grid of offsets (the overlap is piecewise linear in the
 *    offset, so the midpoint rule is exact up to rounding);
 *  - q = 1 - prod_{j != k} (1 - b_j): one member 0, two members b of the
 *    other, three members by hand, a neighbour always busy gives 1 exactly;
 *  - on the fabric of test_cluster_interf (two 2-GPU jobs whose rings share
 *    a 2:1 leaf's uplink, no latencies: alone m = S / B, together 2m):
 *    aligned, run = d (c + 2m) / (c + m) (the model before phases); uniform,
 *    the neighbour is in its window b = m / (c + m) of the time, so the
 *    collective takes m + b m and run = d (c + m + b m) / (c + m);
 *  - monotone: the uniform run never exceeds the aligned one, and both fall
 *    as the compute grows (the neighbour's window shrinks); the cache gives
 *    the run without it bit for bit.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "cluster.h"
#include "cluster_interf.h"
#include "fabric.h"
#include "leaf_fabric.h"

#define B_LINK 50e9

/* three leaves of 2 hosts, one uplink each (2:1), one spine; latencies 0 */
static int make_fabric(fabric *f)
{
    if (make_leaf_fabric_over(f, 6, 4, 2, 2, 1, B_LINK))
        return -1;
    leaf_fabric_zero_latency(f);
    return 0;
}

static void test_names(void)
{
    CHECK_STR_EQ(cluster_phase_name(CLUSTER_PHASE_ALIGNED), "aligned");
    CHECK_STR_EQ(cluster_phase_name(CLUSTER_PHASE_UNIFORM), "uniform");
    CHECK(cluster_phase_name(CLUSTER_PHASE_COUNT) == NULL && cluster_phase_name(-1) == NULL);
    CHECK(cluster_phase_parse("aligned") == CLUSTER_PHASE_ALIGNED);
    CHECK(cluster_phase_parse("uniform") == CLUSTER_PHASE_UNIFORM);
    CHECK(cluster_phase_parse("random") == -1);
}

/* the overlap of [0, a) and [u, u + b) on a circle of length 1 */
static double overlap_at(double a, double b, double u)
{
    double o = 0;
    for (int k = -1; k <= 1; k++) { /* the window b and its images one turn away */
        double lo = fmax(0, u + k), hi = fmin(a, u + k + b);
        o += hi > lo ? hi - lo : 0;
    }
    return o;
}

static void test_overlap_closed_form(void)
{
    const double ab[][2] = {{0.3, 0.5}, {0.1, 0.9}, {1, 0.25}, {0.7, 0.7}, {0, 0.4}};
    const int n = 20000;
    for (size_t i = 0; i < sizeof ab / sizeof ab[0]; i++) {
        double a = ab[i][0], b = ab[i][1], sum = 0;
        for (int k = 0; k < n; k++)
            sum += overlap_at(a, b, (k + 0.5) / n);
        CHECK_NEAR(sum / n, a * b, 1e-8); /* kinks inside a cell: O(1 / n^2) */
        CHECK(cluster_phase_overlap(a, b) == a * b);
    }
    CHECK(cluster_phase_overlap(1.5, 0.5) == 0.5 && cluster_phase_overlap(-1, 0.5) == 0);
    CHECK(cluster_phase_overlap(NAN, 0.5) == 0);
}

static void test_busy(void)
{
    double q[3];
    const double one[] = {0.4};
    cluster_phase_busy(one, 1, q);
    CHECK(q[0] == 0);
    const double two[] = {0.25, 0.6};
    cluster_phase_busy(two, 2, q);
    CHECK_NEAR(q[0], 0.6, 1e-15);
    CHECK_NEAR(q[1], 0.25, 1e-15);
    const double three[] = {0.5, 0.2, 1};
    cluster_phase_busy(three, 3, q);
    CHECK(q[0] == 1 && q[1] == 1);            /* a neighbour always in its window */
    CHECK_NEAR(q[2], 1 - 0.5 * 0.8, 1e-15); /* 0.6 */
    CHECK(cluster_phase_comm_s(2, 4, 0.25) == 2.5 && cluster_phase_comm_s(2, 4, 0) == 2);
}

/* a 1-GPU job on GPU 0, then A = {1, 2} and B = {3, 4} (first-fit): both
 * rings cross leaf 1's uplink and downlink; A's run */
static double run_pair(const fabric *f, double compute_s, double S, int phase, uint32_t cache,
                       double *b_run)
{
    const double d = 36000;
    cluster_job_spec j[] = {{0, 1, d, 0}, {0, 2, d, 0}, {0, 2, d, 0}};
    cluster_config c;
    memset(&c, 0, sizeof c);
    c.gpus = c.leaf_gpus = c.su_gpus = 6;
    c.node_gpus = 1;
    c.sched = cluster_sched_find("fifo");
    c.placer = cluster_placer_find("first-fit");
    c.jobs = j;
    c.n_jobs = 3;
    c.seed = 1;
    cluster_traffic_table t;
    memset(&t, 0, sizeof t);
    t.n = 1;
    t.from_gpus[0] = 1;
    t.t[0].compute_s = compute_s;
    t.t[0].bytes = S;
    t.phase = phase;
    sim_error err;
    sim_error_clear(&err);
    cluster_interf *x = cluster_interf_create(f, c.gpus, &t, cache, &err);
    CHECK(x != NULL);
    if (!x)
        return NAN;
    c.pacer = cluster_interf_pacer(x);
    cluster_result r;
    int rc = cluster_simulate(&c, &r, &err);
    CHECK(rc == 0);
    double run = NAN;
    if (!rc) {
        CHECK(r.jobs[0].end_s == d);
        run = r.jobs[1].end_s - r.jobs[1].start_s;
        *b_run = r.jobs[2].end_s - r.jobs[2].start_s;
        cluster_result_free(&r);
    }
    cluster_interf_destroy(x);
    return run;
}

static void test_pair_closed_form(void)
{
    fabric f;
    CHECK(make_fabric(&f) == 0);
    const double d = 36000, S = 1e9, m = S / B_LINK; /* m = 0.02 s */
    const double compute[] = {0.005, 0.01, 0.02, 0.05, 0.1, 0.4};
    double last_aligned = INFINITY, last_uniform = INFINITY;
    for (size_t i = 0; i < sizeof compute / sizeof compute[0]; i++) {
        double c = compute[i], b = m / (c + m), ra, rb, ua, ub;
        ra = run_pair(&f, c, S, CLUSTER_PHASE_ALIGNED, 64, &rb);
        ua = run_pair(&f, c, S, CLUSTER_PHASE_UNIFORM, 64, &ub);
        CHECK_REL(ra, d * (c + 2 * m) / (c + m), 1e-12);
        CHECK_REL(rb, ra, 1e-12);
        CHECK_REL(ua, d * (c + m + b * m) / (c + m), 1e-12);
        CHECK_REL(ub, ua, 1e-12);
        CHECK(ua < ra && ua > d); /* slowed, less than in phase */
        CHECK(ra < last_aligned && ua < last_uniform); /* more compute: less slowed */
        last_aligned = ra;
        last_uniform = ua;
        double nc, ncb = 0;
        nc = run_pair(&f, c, S, CLUSTER_PHASE_UNIFORM, 0, &ncb);
        CHECK(nc == ua && ncb == ub); /* the cache holds the aligned times only */
    }
    fabric_free(&f);
}

int main(void)
{
    test_names();
    test_overlap_closed_form();
    test_busy();
    test_pair_closed_form();
    return check_report();
}
