/* test_cluster_spares.c - hot spares with swap-down when a spare in service
 * fails while its node's own machine is still in repair (models/
 * cluster_fail.c; docs/cluster.md "Swap-down"). A node down takes a spare
 * freed later; that spare may fail before the node's machine is back, and
 * with no spare free the node is down again with two machines of its in
 * repair. The run counts those failures (spare_refails) and:
 *  - conserves GPU-time exactly: busy + idle + down = capacity x T, and the
 *    lost GPU-time is busy less the stated work;
 *  - never holds a node down longer than a repair: down GPU-s <= (failures
 *    with no spare free) x node GPUs x repair (the node comes back at the
 *    first of its machines repaired, or sooner by a spare);
 *  - gives no GPU twice (an occupancy map of its own) and repeats itself
 *    (event digest);
 *  - without swap-down never meets the case (spare_refails 0).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cluster.h"
#include "gpu_watch.h"

static cluster_job_spec *mixed(uint32_t n)
{
    cluster_job_spec *v = malloc(n * sizeof *v);
    uint64_t x = 12345;
    double t = 0;
    for (uint32_t i = 0; v && i < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        t += (double)(x >> 40 & 1023);
        v[i].submit_s = t;
        v[i].gpus = 1u << (x >> 20 & 5);
        v[i].duration_s = 600 + (double)(x >> 30 & 8191);
        v[i].priority = 0;
    }
    return v;
}

static void check_run(const cluster_config *c, const cluster_result *r)
{
    CHECK_REL(r->busy_gpu_s + r->idle_gpu_s + r->down_gpu_s, r->capacity_gpu_s, 1e-12);
    double useful = 0;
    for (uint32_t i = 0; i < r->n_jobs; i++)
        useful += r->jobs[i].spec.duration_s * r->jobs[i].spec.gpus;
    CHECK_NEAR(r->lost_gpu_s, r->busy_gpu_s - useful, 1e-9 * r->busy_gpu_s);
    double bound = (double)(r->failures - r->spare_swaps) * c->node_gpus * c->fail.repair_s;
    CHECK(r->down_gpu_s <= bound * (1 + 1e-12));
}

static void test_refail(void)
{
    const uint32_t n = 400;
    cluster_job_spec *v = mixed(n);
    CHECK(v != NULL);
    if (!v)
        return;
    uint32_t refails = 0;
    const uint32_t spares[] = {1, 2, 3};
    for (size_t k = 0; k < sizeof spares / sizeof spares[0]; k++) {
        cluster_config c;
        memset(&c, 0, sizeof c);
        c.gpus = 64;
        c.node_gpus = c.leaf_gpus = 8;
        c.su_gpus = 64;
        c.sched = cluster_sched_find("easy-backfill");
        c.placer = cluster_placer_find("first-fit");
        c.seed = 7;
        c.jobs = v;
        c.n_jobs = n;
        c.ckpt = (cluster_ckpt){300, 30, 60};
        c.fail = (cluster_failures){.rate_per_node_s = 1.0 / (10 * 3600), .repair_s = 8 * 3600,
                                    .spares = spares[k]};
        cluster_result off, on, again;
        sim_error err;
        sim_error_clear(&err);
        CHECK_INT_EQ(cluster_simulate(&c, &off, &err), 0);
        CHECK_INT_EQ(off.spare_refails, 0);
        check_run(&c, &off);
        c.fail.swap_down = 1;
        watch w = {.gpus = c.gpus};
        w.owner = calloc(c.gpus, sizeof *w.owner);
        c.watch = on_watch;
        c.watch_ctx = &w;
        CHECK_INT_EQ(cluster_simulate(&c, &on, &err), 0);
        CHECK_INT_EQ(w.clashes, 0);
        CHECK_INT_EQ(w.bad_frees, 0);
        check_run(&c, &on);
        CHECK(on.spare_refails <= on.failures);
        refails += on.spare_refails;
        c.watch = NULL;
        CHECK_INT_EQ(cluster_simulate(&c, &again, &err), 0);
        CHECK(again.digest == on.digest && again.down_gpu_s == on.down_gpu_s);
        printf("swap-down, %u spare(s): %u failures, %u swaps, %u takeovers, %u of a spare in "
               "service with its node's machine in repair, %.4g down GPU-h, %.4g lost GPU-h "
               "(without swap-down: %u failures, %.4g down GPU-h, %.4g lost)\n", spares[k],
               on.failures, on.spare_swaps, on.spare_takeovers, on.spare_refails,
               on.down_gpu_s / 3600, on.lost_gpu_s / 3600, off.failures, off.down_gpu_s / 3600,
               off.lost_gpu_s / 3600);
        free(w.owner);
        cluster_result_free(&off);
        cluster_result_free(&on);
        cluster_result_free(&again);
    }
    CHECK(refails > 0); /* the case happens on this stream */
    free(v);
}

int main(void)
{
    test_refail();
    return check_report();
}
