/* test_cluster_layout.c - a job's traffic from its parallel layout
 * (cluster_interf.h, models/cluster_layout.c) on small leaf-spines built
 * here (one GPU per host, no scale-up, NCCL latencies 0, so a ring
 * all-reduce of 2 ranks takes S / B exactly), closed forms:
 *  - a 4-GPU job, tp 2 dp 2, dp all-reduce only, on one leaf: its two
 *    dp-rings ({0, 2}, {1, 3}: the step tier's order) share no link and take
 *    exactly the single-ring time of a 2-GPU job, S / B;
 *  - the same job over two leaves of one uplink each: both rings cross the
 *    uplink, 2 S / B; the job alone still runs its stated duration exactly;
 *  - pp 2 dp 2 sends ({0, 1} -> {2, 3}, both ways) through one uplink:
 *    2 S / B; pp 2 alone on 2 GPUs: S / B;
 *  - ep 2 all-to-alls inside each leaf: S / 2B (S/2 each way);
 *  - a layout of one dp row at tp = pp = 1 gives the time of the form
 *    without a layout bit for bit;
 *  - several collectives at once end with the last (max of their times
 *    where they share no link);
 *  - a job whose GPUs do not fit tp x pp is refused.
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
#define S_BYTES 1e9

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
    c.leaf_gpus = gpus;
    c.su_gpus = gpus;
    c.sched = cluster_sched_find("fifo");
    c.placer = cluster_placer_find("first-fit");
    c.jobs = jobs;
    c.n_jobs = n;
    c.seed = 1;
    return c;
}

/* one class: compute 10 ms, a layout and its rows (n_rows 0: the old form,
 * an all-reduce of S over all the job's GPUs) */
static cluster_traffic_table table(uint32_t tp, uint32_t pp, uint32_t ep, const cluster_coll *rows,
                                   unsigned n_rows)
{
    cluster_traffic_table t;
    memset(&t, 0, sizeof t);
    t.n = 1;
    t.from_gpus[0] = 1;
    t.t[0].compute_s = 0.01;
    t.t[0].bytes = S_BYTES;
    t.t[0].tp = tp;
    t.t[0].pp = pp;
    t.t[0].ep = ep;
    t.t[0].n_colls = n_rows;
    for (unsigned i = 0; i < n_rows; i++)
        t.t[0].coll[i] = rows[i];
    return t;
}

/* run the jobs; comm[i] job i's isolated communication time. 0, or the
 * error's code (its message in msg) */
static int run(const fabric *f, cluster_config *c, const cluster_traffic_table *t,
               cluster_result *r, double *comm, char *msg)
{
    sim_error err;
    sim_error_clear(&err);
    cluster_interf *x = cluster_interf_create(f, c->gpus, t, 64, &err);
    if (!x)
        return -1;
    c->pacer = cluster_interf_pacer(x);
    int rc = cluster_simulate(c, r, &err);
    if (msg)
        snprintf(msg, 256, "%s", rc ? err.msg : "");
    for (uint32_t i = 0; !rc && i < c->n_jobs; i++) {
        double cmp;
        cluster_interf_job(x, i, &cmp, &comm[i]);
    }
    cluster_interf_destroy(x);
    c->pacer = NULL;
    return rc;
}

static const cluster_coll DP_AR = {NC_ALLREDUCE, CLUSTER_GROUP_DP, S_BYTES};

static void test_dp_rings_disjoint(void)
{
    fabric f;
    CHECK(make_fabric(&f, 8, 8, 4, 1, 1) == 0); /* 2 leaves of 4 hosts */
    const double d = 7200;
    cluster_job_spec j[] = {{0, 2, d, 0}, {0, 4, d, 0}}; /* GPUs 0-1, then 2-5 */
    cluster_config c = shape(8, j, 2);
    cluster_traffic_table t = table(2, 1, 0, &DP_AR, 1);
    cluster_traffic_table old = table(0, 0, 0, NULL, 0);
    cluster_result r, q;
    double comm[2], comm_old[2];
    CHECK(run(&f, &c, &old, &q, comm_old, NULL) == 0);
    /* the 2-GPU job of tp 2 has dp 1: no dp ring at all */
    CHECK(run(&f, &c, &t, &r, comm, NULL) == 0);
    CHECK(comm[0] == 0);
    cluster_result_free(&r);
    cluster_result_free(&q);
    /* the 4-GPU job alone on leaf 0 (GPUs 0-3): rings {0, 2} and {1, 3} on
     * their own host links take the 2-GPU ring's time S / B exactly */
    cluster_job_spec k[] = {{0, 4, d, 0}};
    c = shape(8, k, 1);
    CHECK(run(&f, &c, &t, &r, comm, NULL) == 0);
    CHECK(comm[0] == comm_old[0]);
    CHECK_REL(comm[0], S_BYTES / B_LINK, 1e-12);
    CHECK(r.jobs[0].end_s - r.jobs[0].start_s == d);
    cluster_result_free(&r);
    fabric_free(&f);
}

/* Three leaves of 2 hosts, one uplink each (2:1): the 4-GPU job on GPUs
 * 0-3 (leaves 0 and 1). tp 2 dp 2: rings {0, 2} and {1, 3} both cross
 * leaf 0's uplink and leaf 1's (each direction): B / 2 each, 2 S / B. */
static void test_dp_rings_shared_uplink(void)
{
    fabric f;
    CHECK(make_fabric(&f, 6, 4, 2, 2, 1) == 0);
    const double d = 36000;
    cluster_job_spec j[] = {{0, 4, d, 0}};
    cluster_config c = shape(6, j, 1);
    cluster_traffic_table t = table(2, 1, 0, &DP_AR, 1);
    cluster_result r;
    double comm[1];
    CHECK(run(&f, &c, &t, &r, comm, NULL) == 0);
    CHECK_REL(comm[0], 2 * S_BYTES / B_LINK, 1e-12);
    CHECK(r.jobs[0].end_s - r.jobs[0].start_s == d); /* alone: pace 1 exactly */
    CHECK(r.stretch.max == 1 && r.interference_gpu_s == 0);
    cluster_result_free(&r);
    /* pp 2 dp 2, sends only: stage 0 = GPUs {0, 1} (leaf 0), stage 1 =
     * {2, 3} (leaf 1); 0 <-> 2 and 1 <-> 3 share the uplinks: 2 S / B */
    cluster_coll send = {NC_SENDRECV, CLUSTER_GROUP_PP, S_BYTES};
    t = table(1, 2, 0, &send, 1);
    CHECK(run(&f, &c, &t, &r, comm, NULL) == 0);
    CHECK_REL(comm[0], 2 * S_BYTES / B_LINK, 1e-12);
    cluster_result_free(&r);
    /* pp 2 on a 2-GPU job across leaves 0 and 1 (after a 1-GPU job): one
     * flow each way, S / B */
    cluster_job_spec k[] = {{0, 1, d, 0}, {0, 2, d, 0}};
    c = shape(6, k, 2);
    t.n = 2; /* a class from 2 GPUs: a 1-GPU job does not fit pp 2 */
    t.from_gpus[1] = 2;
    t.t[1] = t.t[0];
    memset(&t.t[0], 0, sizeof t.t[0]);
    double comm2[2];
    CHECK(run(&f, &c, &t, &r, comm2, NULL) == 0);
    CHECK(comm2[0] == 0);
    CHECK_REL(comm2[1], S_BYTES / B_LINK, 1e-12);
    cluster_result_free(&r);
    fabric_free(&f);
}

/* ep 2 over dp 4: expert groups {0, 1} and {2, 3}, one per leaf: S/2 each
 * way on host links only, S / 2B. With the dp all-reduce beside it (a ring
 * over all 4, across the uplinks, sharing the host links with the
 * all-to-alls): the iteration's communication ends with the last of them,
 * no sooner than the longer alone and no later than both one after the
 * other. */
static void test_ep_and_several(void)
{
    fabric f;
    CHECK(make_fabric(&f, 8, 8, 2, 1, 1) == 0); /* 4 leaves of 2 hosts, 2 uplinks */
    cluster_job_spec j[] = {{0, 4, 3600, 0}};
    cluster_config c = shape(8, j, 1);
    cluster_coll a2a = {NC_ALLTOALL, CLUSTER_GROUP_EP, S_BYTES};
    cluster_traffic_table t = table(1, 1, 2, &a2a, 1);
    cluster_result r;
    double ep_s, ar_s, both_s;
    CHECK(run(&f, &c, &t, &r, &ep_s, NULL) == 0);
    CHECK_REL(ep_s, S_BYTES / (2 * B_LINK), 1e-12);
    cluster_result_free(&r);
    t = table(1, 1, 2, &DP_AR, 1);
    CHECK(run(&f, &c, &t, &r, &ar_s, NULL) == 0);
    cluster_result_free(&r);
    cluster_coll rows[2] = {DP_AR, a2a};
    t = table(1, 1, 2, rows, 2);
    CHECK(run(&f, &c, &t, &r, &both_s, NULL) == 0);
    CHECK(both_s >= fmax(ep_s, ar_s) * (1 - 1e-12));
    CHECK(both_s <= (ep_s + ar_s) * (1 + 1e-12)); /* sharing at most serialises them */
    cluster_result_free(&r);
    fabric_free(&f);
}

/* tp = pp = 1 with one dp row is the form without a layout (the same ring
 * over all the GPUs): the same times, bit for bit, alone and shared */
static void test_old_form_equal(void)
{
    fabric f;
    CHECK(make_fabric(&f, 6, 4, 2, 2, 1) == 0);
    cluster_job_spec j[] = {{0, 1, 36000, 0}, {0, 2, 36000, 0}, {0, 2, 36000, 0}};
    cluster_config c = shape(6, j, 3);
    cluster_traffic_table a = table(0, 0, 0, NULL, 0), b = table(1, 1, 0, &DP_AR, 1);
    cluster_result ra, rb;
    double ca[3], cb[3];
    CHECK(run(&f, &c, &a, &ra, ca, NULL) == 0);
    CHECK(run(&f, &c, &b, &rb, cb, NULL) == 0);
    int same = 1;
    for (unsigned i = 0; i < 3; i++)
        same &= ca[i] == cb[i] && ra.jobs[i].end_s == rb.jobs[i].end_s;
    CHECK(same);
    CHECK(ra.interference_gpu_s > 0 && ra.interference_gpu_s == rb.interference_gpu_s);
    cluster_result_free(&ra);
    cluster_result_free(&rb);
    fabric_free(&f);
}

static void test_refused(void)
{
    cluster_traffic t;
    memset(&t, 0, sizeof t);
    t.tp = 4;
    char why[160];
    CHECK(cluster_layout_check(&t, 8, why, sizeof why) == 0);
    CHECK(cluster_layout_check(&t, 6, why, sizeof why) == -1);
    CHECK(strstr(why, "6 GPUs are not a whole number of tp x pp = 4 x 1") != NULL);
    t.ep = 4; /* 8 GPUs: dp 2, not a multiple of ep 4 */
    CHECK(cluster_layout_check(&t, 8, why, sizeof why) == -1);
    CHECK(cluster_layout_check(&t, 16, why, sizeof why) == 0);
    fabric f;
    CHECK(make_fabric(&f, 6, 4, 2, 2, 1) == 0);
    cluster_job_spec j[] = {{0, 6, 3600, 0}};
    cluster_config c = shape(6, j, 1);
    cluster_traffic_table tt = table(4, 1, 0, &DP_AR, 1);
    cluster_result r;
    double comm[1];
    char msg[256];
    CHECK(run(&f, &c, &tt, &r, comm, msg) != 0);
    CHECK(strstr(msg, "not a whole number of tp x pp") != NULL);
    cluster_result_free(&r);
    fabric_free(&f);
}

int main(void)
{
    test_dp_rings_disjoint();
    test_dp_rings_shared_uplink();
    test_ep_and_several();
    test_old_form_equal();
    test_refused();
    CHECK(strcmp(cluster_group_name(CLUSTER_GROUP_EP), "ep") == 0);
    CHECK(cluster_group_parse("pp") == CLUSTER_GROUP_PP && cluster_group_parse("xp") == -1);
    CHECK(cluster_traffic_collective_parse("send") == NC_SENDRECV);
    return check_report();
}
