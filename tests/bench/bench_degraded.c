/* bench_degraded.c - the campaign on a degraded fabric at 16,384 GPUs:
 * scenarios/examples/fabric-failures-leafspine.xml's failures (cables at
 * Llama 3's rate, spines at the what-if rate, 4 h repairs, restart on the
 * fabric left) on scenarios/examples/superpod-h100.xml's rail-optimised
 * NDR fat-tree (16,384 GPUs: TP 8, PP 8, DP 256, 2,048 sequences), about 54 days
 * of compute (34T tokens). Replicas run one after another on one thread,
 * each timed; the cache of iterations by failure state is shared, as in
 * dcsim run --replicas. Printed per states mode (exact: one iteration per
 * state; by-tier: a cause's parts of one tier stand for each other):
 * seconds per replica (first and mean), states simulated, lookups and hit
 * rate, and the time to train. Target (issue 20): < 10 s per replica with
 * the cache.
 *   bench_degraded [--smoke]   (--smoke: 1,024 GPUs, 2 replicas)
 * One machine-readable line per metric; printed, never asserted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <omp.h>

#include "degraded.h"
#include "run.h"
#include "scenario.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int bench(const char *states, unsigned gpus, unsigned replicas)
{
    char set[6][96];
    snprintf(set[0], sizeof set[0], "cluster/gpu/@count=%u", gpus);
    snprintf(set[1], sizeof set[1], "cluster/fabric/@topology=rail-optimized");
    snprintf(set[2], sizeof set[2], "cluster/fabric/@link=ib-ndr");
    snprintf(set[3], sizeof set[3], "job/parallelism/@global-batch=%u", gpus / 8);
    snprintf(set[4], sizeof set[4], "reliability/degraded/@states=%s", states);
    snprintf(set[5], sizeof set[5], "job/training/@tokens=%s", gpus == 16384 ? "34T" : "437B");
    const char *sets[6] = {set[0], set[1], set[2], set[3], set[4], set[5]};
    scn_scenario s;
    sim_error err;
    sim_error_clear(&err);
    if (scn_load(DCSIM_SOURCE_DIR "/scenarios/examples/fabric-failures-leafspine.xml", sets, 6,
                 &s, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    run_plan plan;
    double t0 = now_s();
    int rc = run_plan_prepare(&s, 1, 0, &plan, &err);
    double prepare_s = now_s() - t0, first_s = 0, total_s = 0, ttt = 0;
    for (unsigned i = 0; !rc && i < replicas; i++) {
        campaign_config c = plan.campaign;
        c.seed = campaign_replica_seed(c.seed, i);
        run_outcome out;
        double t = now_s();
        rc = run_execute(&plan, &c, NULL, NULL, NULL, &out, &err);
        t = now_s() - t;
        first_s = i ? first_s : t;
        total_s += t;
        ttt += out.result.time_to_train_s / replicas;
        run_outcome_free(&out);
    }
    if (rc) {
        fprintf(stderr, "%s\n", err.msg);
    } else {
        const run_degraded *d = plan.degraded;
        printf("degraded_%s_gpus %u\n", states, gpus);
        printf("degraded_%s_prepare_s %.3f\n", states, prepare_s);
        printf("degraded_%s_first_replica_s %.3f\n", states, first_s);
        printf("degraded_%s_mean_replica_s %.3f\n", states, total_s / replicas);
        printf("degraded_%s_states_simulated %llu\n", states,
               (unsigned long long)d->simulations);
        printf("degraded_%s_lookups %llu\n", states, (unsigned long long)d->lookups);
        printf("degraded_%s_hit_rate %.4f\n", states,
               d->lookups ? (double)d->hits / (double)d->lookups : 0.0);
        printf("degraded_%s_unrunnable_states %llu\n", states,
               (unsigned long long)d->unrunnable_states);
        printf("degraded_%s_simulate_s %.3f\n", states, d->simulate_s);
        printf("degraded_%s_time_to_train_days %.4f\n", states, ttt / 86400);
    }
    run_plan_free(&plan);
    scn_scenario_free(&s);
    return rc != 0;
}

int main(int argc, char **argv)
{
    int smoke = argc > 1 && !strcmp(argv[1], "--smoke");
    omp_set_num_threads(1);
    unsigned gpus = smoke ? 1024 : 16384, replicas = smoke ? 2 : 8;
    int rc = bench("by-tier", gpus, replicas);
    rc |= bench("exact", gpus, smoke ? 2 : 1); /* about 5 min a replica at 16K */
    return rc;
}
