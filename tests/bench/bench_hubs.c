/* bench_hubs.c - speed and memory of the hubs tier (models/hubs.h) on one
 * core: 10 hubs of 1,024 GPUs (nodes of 8, leaves of 256), 100,000 jobs
 * (10,000 per hub on average) arriving over a year from 3 origins, placed
 * by each policy (the fluid backlog, the backbone's FIFO links) and every
 * hub simulated by cluster_simulate (EASY backfill, topology packing).
 * The demand is synthetic (no published trace is in shared/reference): a
 * deterministic xorshift stream, exponential gaps at 11.4 jobs/h, sizes 8,
 * 64, 256, 512 GPUs (weights 50/30/15/5), log-uniform durations 0.25-24 h,
 * a third serving with a 10 ms RTT bound, datasets of 0-5 TB at 100 Gb/s.
 * Hub figures (RTTs, prices, factors) are stand-ins for speed, not sites.
 * Prints one line per policy: "bench_hubs policy=.. hubs=.. jobs=.. sim_days=..
 * events=.. utilisation=.. wait_p90_s=.. slo_jobs=.. wall_s=.. cpu_s=..
 * peak_rss_bytes=.. target_wall_s=60 meets_target=0|1" (the target:
 * under 60 s on one core; nothing fails on it). Exit status non-zero only
 * when a run fails or breaks conservation (jobs, GPU-seconds). --smoke:
 * 2,000 jobs (for ctest; the figures mean nothing).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "hubs.h"

#define TARGET_WALL_S 60.0

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double peak_rss_bytes(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) ? 0 : 1024.0 * (double)ru.ru_maxrss;
}

static uint64_t state = 88172645463325252ull;
static double uniform(void) /* (0, 1) */
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return ((state >> 11) + 0.5) / 9007199254740992.0;
}

static hubs_job_spec *demand(uint32_t n, double *gpu_s)
{
    hubs_job_spec *v = calloc(n, sizeof *v);
    static const uint32_t sizes[4] = {8, 64, 256, 512};
    static const double cum[4] = {0.5, 0.8, 0.95, 1.0};
    double t = 0, rate = 11.4 / 3600;
    *gpu_s = 0;
    for (uint32_t i = 0; v && i < n; i++) {
        t += -log(uniform()) / rate;
        double u = uniform();
        unsigned k = 0;
        while (u > cum[k])
            k++;
        v[i].arrival_s = t;
        v[i].gpus = sizes[k];
        v[i].duration_s = 900 * pow(96, uniform());
        v[i].origin = i % 3;
        v[i].kind = i % 3 == 1 ? HUBS_SERVING : HUBS_TRAINING;
        v[i].rtt_bound_s = v[i].kind == HUBS_SERVING ? 0.010 : 0;
        v[i].slack_s = v[i].kind == HUBS_TRAINING ? 6 * 3600 : 0;
        v[i].dataset_tb = 5 * uniform();
        v[i].result_tb = 0.1 * uniform();
        *gpu_s += v[i].gpus * v[i].duration_s;
    }
    return v;
}

int main(int argc, char **argv)
{
    int smoke = argc > 1 && strcmp(argv[1], "--smoke") == 0;
    uint32_t n = smoke ? 2000 : 100000;
    double gpu_s;
    hubs_job_spec *jobs = demand(n, &gpu_s);
    if (!jobs)
        return 1;
    hubs_config c;
    memset(&c, 0, sizeof c);
    c.n_hubs = 10;
    c.n_origins = 3;
    for (unsigned h = 0; h < 10; h++) {
        hubs_hub *x = &c.hubs[h];
        snprintf(x->name, sizeof x->name, "hub%u", h);
        x->gpus = 1024;
        for (unsigned o = 0; o < 3; o++)
            x->rtt_s[o] = 0.001 * (1 + (h * 7 + o * 5) % 28);
        x->price_per_kwh = 0.3 + 0.04 * h;
        x->pue = 1.2;
        x->emission_kg_per_kwh = 0.2 + 0.05 * ((h * 3) % 10);
        x->wue_l_per_kwh = 0.1 * ((h * 7) % 10);
    }
    c.max_wait_s = 6 * 3600;
    c.bandwidth_bps = 100e9;
    c.cost_per_tb = 20;
    c.jobs = jobs;
    c.n_jobs = n;
    cluster_config t;
    memset(&t, 0, sizeof t);
    t.gpus = t.su_gpus = 1024;
    t.node_gpus = 8;
    t.leaf_gpus = 256;
    t.sched = cluster_sched_find("easy-backfill");
    t.placer = cluster_placer_find("topology");
    t.seed = 1;
    static const char *const policies[] = {"nearest", "cheapest", "lowest-carbon",
                                           "latency-bounded"};
    int rc = 0;
    for (size_t p = 0; p < sizeof policies / sizeof *policies && !rc; p++) {
        c.policy = hubs_policy_find(policies[p]);
        sim_error err;
        sim_error_clear(&err);
        hubs_result r;
        double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
        rc = hubs_place(&c, &r, &err);
        if (!rc)
            rc = hubs_simulate(&c, &t, &r, NULL, &err);
        double wall = clock_s(CLOCK_MONOTONIC) - w0, cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
        if (rc) {
            fprintf(stderr, "bench_hubs: %s\n", err.msg);
            break;
        }
        int ok = r.total.jobs == n && fabs(r.total.gpu_s - gpu_s) <= 1e-9 * gpu_s;
        printf("bench_hubs policy=%s hubs=%u jobs=%u sim_days=%.4g events=%llu utilisation=%.4f "
               "wait_p90_s=%.6g slo_jobs=%u fallbacks=%u wall_s=%.4f cpu_s=%.4f "
               "peak_rss_bytes=%.0f target_wall_s=%.0f meets_target=%d\n",
               policies[p], c.n_hubs, r.total.jobs, r.total.end_s / 86400,
               (unsigned long long)r.total.events, r.total.utilisation, r.total.wait_s.q[1],
               r.total.slo_jobs, r.fallbacks, wall, cpu, peak_rss_bytes(), TARGET_WALL_S,
               wall < TARGET_WALL_S);
        hubs_result_free(&r);
        if (!ok) {
            fprintf(stderr, "bench_hubs: jobs or GPU-seconds not conserved\n");
            rc = 1;
        }
    }
    free(jobs);
    return rc ? 1 : 0;
}
