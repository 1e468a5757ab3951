/* bench_cluster.c - speed and memory of the cluster tier (models/cluster.h)
 * on one core: 102,400 GPUs (nodes of 8, leaves of 256, SUs of 4,096),
 * 10,000 jobs arriving over about 30 days, for every scheduler x placement.
 * The job stream is synthetic (no published trace is in shared/reference):
 * Poisson at 14 jobs/h capped at 10,000 jobs, sizes 8-8,192 GPUs (mean 834),
 * lognormal durations (median 6 h, sigma 1, at most 14 d): about 85 % load
 * offered over the 30 days.
 * Each run includes the power accounting of `dcsim cluster`: the IT power of
 * the step series (models/cluster_series.h, the power tier's defaults, no
 * fabric), split at the hours into the energy tier's account with the
 * air-economiser design at a 0 degC climate (fac_climate_init: a stand-in
 * for speed, not a site), the hourly PUE, the binned series and 20 CDF
 * points.
 * Prints one line per run: "bench_cluster sched=.. placement=.. gpus=..
 * jobs=.. sim_days=.. events=.. utilisation=.. wall_s=.. cpu_s=..
 * peak_rss_bytes=.. target_wall_s=60 meets_target=0|1" (the target:
 * under 60 s on one core; nothing fails on it; the peak RSS is the
 * process's, all runs so far). Exit status non-zero only when a run fails
 * or breaks conservation. --smoke: 4,096 GPUs and 300 jobs (for ctest; the
 * figures mean nothing).
 * With a fabric (interference, models/cluster_interf.h): "bench_cluster_fabric
 * ..." lines, EASY backfill with each placement on a leaf-spine of radix 64,
 * 3:1 (48 GPU ports per leaf), a 400 Gb/s link of efficiency 1 (a stand-in
 * for speed), the same stream scaled to the GPUs (rate and job cap x
 * GPUs / 102,400, sizes capped at a quarter of the GPUs), every job's
 * default iteration (0.409 s compute, 6.8 GB all-reduce per GPU). GPUs from
 * the command line (--fabric GPUS; default 3,072: one 2-tier leaf-spine).
 * With disruption (run_disrupt): "bench_cluster_disrupt ..." lines, the same
 * stream with priorities, preemption, node failures, spares and a window.
 * With both ("bench_cluster_fabric_disrupt ..."): the fabric lines' stream
 * with every tenth job of priority 1, checkpoint-then-preempt (57 / 5 / 10
 * min), node failures at the catalog's rate with a 4 h repair and one spare
 * per 64 nodes, one leaf (48 GPUs) down 8 h from day 7.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "cluster.h"
#include "cluster_interf.h"
#include "cluster_series.h"
#include "energy.h"

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
    if (getrusage(RUSAGE_SELF, &ru))
        return 0;
    return 1024.0 * (double)ru.ru_maxrss; /* Linux: kilobytes */
}

/* what dcsim cluster adds after the simulation (clusterenergy.c's loop);
 * 0, or an error code */
static int account(const cluster_result *r, uint32_t gpus, double *it_j, double *pue)
{
    pwr_config pc;
    pwr_config_default(&pc);
    pwr_cluster k;
    memset(&k, 0, sizeof k);
    cluster_power p;
    sim_error err;
    sim_error_clear(&err);
    int rc = cluster_power_levels(&pc, &k, gpus, 1.0, &p, &err);
    if (rc)
        return rc;
    energy_config ec;
    memset(&ec, 0, sizeof ec);
    ec.design_it_w = cluster_it_power_w(&p, p.gpus, p.nodes);
    ec.design = fac_design_default(FAC_COOLING_AIR_ECONOMISER);
    fac_climate_init(&ec.climate);
    energy_account *a = energy_account_create(&ec, &err);
    if (!a)
        return 1;
    for (uint32_t i = 0; !rc && i < r->n_steps; i++) {
        double lo = r->steps[i].t_s, hi = cluster_step_end_s(r, i);
        double w = cluster_it_power_w(&p, r->steps[i].busy_gpus, r->steps[i].busy_nodes);
        while (!rc && lo < hi) {
            double top = fmin(hi, 3600 * (floor(lo / 3600) + 1));
            rc = energy_add_power(a, lo, top, w, &err);
            lo = top;
        }
    }
    energy_result e;
    if (!rc)
        rc = energy_finish(a, &e, &err);
    energy_account_free(a);
    double w = cluster_bin_width_s(r->end_s), busy[CLUSTER_MAX_BINS], queue[CLUSTER_MAX_BINS];
    cluster_bin_series(r, w, cluster_bin_count(r->end_s, w), busy, queue);
    double wait[20], slow[20];
    if (!rc)
        rc = cluster_cdf_points(r, 20, wait, slow, &err);
    *it_j = cluster_it_energy_j(&p, r);
    *pue = rc ? 0 : e.pue;
    if (!rc && fabs(e.it_energy_j - *it_j) > 1e-9 * *it_j)
        rc = 1; /* the hours and the steps disagree */
    return rc;
}

/* the bench's cluster and stream: 102,400 GPUs (4,096 for the smoke run),
 * 14 jobs/h (0.6) for 31 days or 10,000 jobs (300), sizes 8-8,192 GPUs,
 * lognormal durations of median 6 h */
static cluster_config bench_config(const char *sched, const char *placer, int smoke)
{
    cluster_config c;
    memset(&c, 0, sizeof c);
    c.gpus = smoke ? 4096 : 102400;
    c.node_gpus = 8;
    c.leaf_gpus = 256;
    c.su_gpus = 4096;
    c.sched = cluster_sched_find(sched);
    c.placer = cluster_placer_find(placer);
    c.seed = 1;
    cluster_stream *st = &c.stream;
    st->rate_per_s = (smoke ? 0.6 : 14.0) / 3600;
    st->window_s = 31 * 86400.0;
    st->max_jobs = smoke ? 300 : 10000;
    const uint32_t sizes[] = {8, 64, 256, 1024, 2048, 4096, 8192};
    const double weights[] = {30, 20, 20, 15, 10, 4, 3};
    st->n_sizes = 7;
    for (unsigned i = 0; i < 7; i++) {
        st->size_gpus[i] = sizes[i] > c.gpus ? c.gpus : sizes[i];
        st->size_weight[i] = weights[i];
    }
    st->dur = (cluster_duration){CLUSTER_DUR_LOGNORMAL, 6 * 3600.0, 1.0, 14 * 86400.0};
    return c;
}

static int run(const char *sched, const char *placer, int smoke)
{
    cluster_config c = bench_config(sched, placer, smoke);
    cluster_result r;
    sim_error err;
    sim_error_clear(&err);
    double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    int rc = cluster_simulate(&c, &r, &err);
    double it_j = 0, pue = 0;
    if (!rc && account(&r, c.gpus, &it_j, &pue)) {
        fprintf(stderr, "bench_cluster: the power accounting failed\n");
        cluster_result_free(&r);
        return 1;
    }
    double wall = clock_s(CLOCK_MONOTONIC) - t0, cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    if (rc) {
        fprintf(stderr, "bench_cluster: %s\n", err.msg);
        return 1;
    }
    int ok = fabs(r.busy_gpu_s + r.idle_gpu_s - r.capacity_gpu_s) <= 1e-9 * r.capacity_gpu_s;
    printf("bench_cluster sched=%s placement=%s gpus=%u jobs=%u sim_days=%.4g events=%llu "
           "utilisation=%.4f wait_p50_s=%.6g it_energy_mwh=%.6g pue=%.4f wall_s=%.4f cpu_s=%.4f peak_rss_bytes=%.0f "
           "target_wall_s=%.0f meets_target=%d\n",
           sched, placer, c.gpus, r.n_jobs, r.end_s / 86400, (unsigned long long)r.events,
           r.utilisation, r.wait_s.q[0], it_j / 3.6e9, pue, wall, cpu, peak_rss_bytes(), TARGET_WALL_S,
           wall < TARGET_WALL_S);
    cluster_result_free(&r);
    if (!ok)
        fprintf(stderr, "bench_cluster: busy + idle != capacity\n");
    return !ok;
}

/* the same stream with disruption on: every tenth job (by arrival) of
 * priority 1 and checkpoint-then-preempt (interval 57 min, write 5 min,
 * restart 10 min: Daly's worked example, calibration.md 4), node failures at
 * the catalog's llama3-54d rate (419 / (2,048 nodes x 54 d x 24 h) per
 * node-hour, calibration.md 2c), repair 4 h and 16 hot spares (A), one SU
 * (4,096 GPUs) down for 8 h from day 7 (A) */
static int run_disrupt(const char *sched, const char *placer, int smoke)
{
    cluster_config c = bench_config(sched, placer, smoke);
    sim_error err;
    sim_error_clear(&err);
    cluster_job_spec *jobs = NULL;
    uint32_t n = 0;
    if (cluster_jobs_make(&c, &jobs, &n, &err)) {
        fprintf(stderr, "bench_cluster: %s\n", err.msg);
        return 1;
    }
    for (uint32_t i = 0; i < n; i++)
        jobs[i].priority = i % 10 == 0;
    c.jobs = jobs;
    c.n_jobs = n;
    c.preempt = 1;
    c.ckpt = (cluster_ckpt){57 * 60.0, 5 * 60.0, 10 * 60.0};
    c.fail = (cluster_failures){.rate_per_node_s = 419.0 / (2048 * 54 * 24.0) / 3600,
                                .repair_s = 4 * 3600.0, .spares = 16};
    cluster_reservation w = {7 * 86400.0, 8 * 3600.0, 0, 4096};
    c.resv = &w;
    c.n_resv = 1;
    cluster_result r;
    double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    int rc = cluster_simulate(&c, &r, &err);
    double wall = clock_s(CLOCK_MONOTONIC) - t0, cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    free(jobs);
    if (rc) {
        fprintf(stderr, "bench_cluster: %s\n", err.msg);
        return 1;
    }
    int ok = fabs(r.busy_gpu_s + r.idle_gpu_s + r.down_gpu_s - r.capacity_gpu_s) <=
             1e-9 * r.capacity_gpu_s;
    printf("bench_cluster_disrupt sched=%s placement=%s gpus=%u jobs=%u sim_days=%.4g "
           "events=%llu utilisation=%.4f preemptions=%u failures=%u interruptions=%u "
           "spare_swaps=%u down_gpu_h=%.6g lost_gpu_h=%.6g goodput=%.4f slowdown_mean=%.4f "
           "wall_s=%.4f cpu_s=%.4f peak_rss_bytes=%.0f target_wall_s=%.0f meets_target=%d\n",
           sched, placer, c.gpus, r.n_jobs, r.end_s / 86400, (unsigned long long)r.events,
           r.utilisation, r.preemptions, r.failures, r.interruptions, r.spare_swaps,
           r.down_gpu_s / 3600, r.lost_gpu_s / 3600, r.goodput, r.slowdown.mean, wall, cpu,
           peak_rss_bytes(), TARGET_WALL_S, wall < TARGET_WALL_S);
    cluster_result_free(&r);
    if (!ok)
        fprintf(stderr, "bench_cluster: busy + idle + down != capacity\n");
    return !ok;
}

static int make_fabric(unsigned gpus, fabric *f, sim_error *err)
{
    fabric_config c;
    memset(&c, 0, sizeof c);
    fabric_topology_parse("leaf-spine", &c.topology);
    c.gpus = gpus;
    c.gpus_per_node = 8;
    snprintf(c.link.name, sizeof c.link.name, "bench-400g");
    c.link.kind = HW_LINK_ETHERNET;
    c.link.bytes_per_s = 50e9;
    c.link.efficiency = 1;
    c.link.routing = HW_ROUTING_ECMP;
    c.scaleup = c.link;
    c.scaleup.kind = HW_LINK_NVLINK;
    c.scaleup_bytes_per_s = 450e9;
    c.shape.radix = 64;
    c.shape.over_down = 3;
    c.shape.over_up = 1;
    c.routing.balance = TOPO_BALANCE_ECMP;
    c.routing.qps = 1;
    return fabric_build(&c, f, err);
}

static int run_fabric(const char *placer, unsigned gpus, int disrupt)
{
    cluster_config c;
    memset(&c, 0, sizeof c);
    c.gpus = gpus;
    c.node_gpus = 8;
    c.leaf_gpus = 48;
    c.su_gpus = gpus;
    c.sched = cluster_sched_find("easy-backfill");
    c.placer = cluster_placer_find(placer);
    c.seed = 1;
    cluster_stream *st = &c.stream;
    st->rate_per_s = 14.0 / 3600 * gpus / 102400;
    st->window_s = 31 * 86400.0;
    st->max_jobs = (uint32_t)(10000.0 * gpus / 102400);
    const uint32_t sizes[] = {8, 64, 256, 1024, 2048, 4096, 8192};
    const double weights[] = {30, 20, 20, 15, 10, 4, 3};
    st->n_sizes = 7;
    for (unsigned i = 0; i < 7; i++) {
        st->size_gpus[i] = sizes[i] > gpus / 4 ? gpus / 4 / 8 * 8 : sizes[i];
        st->size_weight[i] = weights[i];
    }
    st->dur = (cluster_duration){CLUSTER_DUR_LOGNORMAL, 6 * 3600.0, 1.0, 14 * 86400.0};
    sim_error err;
    sim_error_clear(&err);
    double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    fabric f;
    if (make_fabric(gpus, &f, &err)) {
        fprintf(stderr, "bench_cluster: %s\n", err.msg);
        return 1;
    }
    double build = clock_s(CLOCK_MONOTONIC) - t0;
    cluster_job_spec *jobs = NULL;
    uint32_t n = 0;
    cluster_reservation w = {7 * 86400.0, 8 * 3600.0, 0, 48};
    if (disrupt) { /* as run_disrupt, the window one leaf */
        if (cluster_jobs_make(&c, &jobs, &n, &err)) {
            fprintf(stderr, "bench_cluster: %s\n", err.msg);
            fabric_free(&f);
            return 1;
        }
        for (uint32_t i = 0; i < n; i++)
            jobs[i].priority = i % 10 == 0;
        c.jobs = jobs;
        c.n_jobs = n;
        c.preempt = 1;
        c.ckpt = (cluster_ckpt){57 * 60.0, 5 * 60.0, 10 * 60.0};
        c.fail = (cluster_failures){.rate_per_node_s = 419.0 / (2048 * 54 * 24.0) / 3600,
                                    .repair_s = 4 * 3600.0, .spares = gpus / 512};
        c.resv = &w;
        c.n_resv = 1;
    }
    cluster_traffic_table tt = {.n = 1, .from_gpus = {1},
                                .t = {{.compute_s = 6 * 1.7e9 * 192 * 4096 / (48 * 408.8e12),
                                       .bytes = 6.8e9, .collective = NC_ALLREDUCE}}};
    cluster_interf *x = cluster_interf_create(&f, gpus, &tt, 4096, &err);
    int rc = x ? 0 : 1;
    cluster_result r;
    memset(&r, 0, sizeof r);
    if (!rc) {
        c.pacer = cluster_interf_pacer(x);
        rc = cluster_simulate(&c, &r, &err);
    }
    cluster_interf_stats is;
    memset(&is, 0, sizeof is);
    if (x)
        cluster_interf_get_stats(x, &is);
    double wall = clock_s(CLOCK_MONOTONIC) - t0, cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    cluster_interf_destroy(x);
    fabric_free(&f);
    free(jobs);
    if (rc) {
        fprintf(stderr, "bench_cluster: %s\n", err.msg);
        return 1;
    }
    int ok = fabs(r.busy_gpu_s + r.idle_gpu_s + r.down_gpu_s - r.capacity_gpu_s) <=
             1e-9 * r.capacity_gpu_s;
    uint64_t looks = is.hits + is.misses;
    printf("%s sched=easy-backfill placement=%s gpus=%u jobs=%u sim_days=%.4g "
           "events=%llu utilisation=%.4f stretch_mean=%.4f interference_gpu_h=%.6g "
           "lookups=%llu hit_rate=%.4f simulations=%llu flows=%llu max_component=%u "
           "fabric_build_s=%.4f wall_s=%.4f cpu_s=%.4f peak_rss_bytes=%.0f",
           disrupt ? "bench_cluster_fabric_disrupt" : "bench_cluster_fabric", placer, gpus,
           r.n_jobs, r.end_s / 86400, (unsigned long long)r.events,
           r.utilisation, r.stretch.mean, r.interference_gpu_s / 3600,
           (unsigned long long)looks, looks ? (double)is.hits / looks : 0,
           (unsigned long long)is.simulations, (unsigned long long)is.flows, is.max_component,
           build, wall, cpu, peak_rss_bytes());
    if (disrupt)
        printf(" preemptions=%u failures=%u interruptions=%u spare_swaps=%u down_gpu_h=%.6g "
               "lost_gpu_h=%.6g goodput=%.4f slowdown_mean=%.4f", r.preemptions, r.failures,
               r.interruptions, r.spare_swaps, r.down_gpu_s / 3600, r.lost_gpu_s / 3600,
               r.goodput, r.slowdown.mean);
    printf("\n");
    cluster_result_free(&r);
    if (!ok)
        fprintf(stderr, "bench_cluster: busy + idle + down != capacity\n");
    return !ok;
}

int main(int argc, char **argv)
{
    int smoke = argc > 1 && strcmp(argv[1], "--smoke") == 0;
    if (argc > 2 && strcmp(argv[1], "--fabric") == 0) { /* the fabric lines only */
        unsigned gpus = (unsigned)atoi(argv[2]);
        return run_fabric("first-fit", gpus, 0) | run_fabric("topology", gpus, 0) |
               run_fabric("first-fit", gpus, 1) | run_fabric("topology", gpus, 1);
    }
    const char *scheds[] = {"fifo", "easy-backfill"}, *placers[] = {"first-fit", "topology"};
    int rc = 0;
    for (int s = 0; s < 2; s++)
        for (int p = 0; p < 2; p++)
            rc |= run(scheds[s], placers[p], smoke);
    for (int s = 0; s < 2; s++)
        for (int p = 0; p < 2; p++)
            rc |= run_disrupt(scheds[s], placers[p], smoke);
    unsigned fg = smoke ? 384 : 3072;
    for (int d = 0; d < 2; d++) {
        rc |= run_fabric("first-fit", fg, d);
        rc |= run_fabric("topology", fg, d);
    }
    return rc;
}
