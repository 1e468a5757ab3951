/* bench_serve.c - the serving tier (dcsim serve, docs/serving.md) at the
 * size of issue 22's benchmark: one hour of a 10,000 requests/s Poisson
 * stream over 1,000 H100 (250 TP4 replicas of
 * scenarios/examples/serving-llama3-70b-h100.xml's Llama 3 70B in FP8, its
 * batching, router and length shapes; changed: the GPU count, the rate,
 * the duration, and the median prompt and output, 200 and 100 tokens
 * instead of 1,000 and 250, so that 40 requests/s per replica is a load
 * the fleet keeps up with (at the example's lengths the fleet serves about
 * 2,500 requests/s: the queues, and the run, would grow without bound)). Wall time of the simulation (the load and the
 * device are not timed), the child's CPU time (load included: on a shared
 * machine the wall time counts other processes' turns) and the peak RSS, in a fork()ed child so the
 * high-water mark is its own. Target (issue 22): under 60 s on one core.
 *
 * One machine-readable line per metric. --smoke: 1/100 of the hour (36 s
 * of traffic). Printed, never asserted.
 *   bench_serve [--smoke] [--seconds S] [--rate R]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hardware.h"
#include "scenario.h"
#include "serving.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

typedef struct result {
    int ok;
    double wall_s, cpu_s; /* cpu_s: the child's user + system time, load and all */
    long peak_rss_kb;
    uint64_t arrived, finished, iterations, preemptions;
    double ttft_p99_s, tpot_p99_s, busy_fraction, end_s;
    int quantiles_exact;
} result;

static void run(double seconds, double rate, unsigned gpus, result *r)
{
    scn_scenario s;
    sim_error err;
    sim_error_clear(&err);
    char set[5][64];
    const char *sets[5] = {set[0], set[1], set[2], set[3], set[4]};
    snprintf(set[0], sizeof set[0], "cluster/gpu/@count=%u", gpus);
    snprintf(set[1], sizeof set[1], "serving/arrivals/@rate=%g/s", rate);
    snprintf(set[2], sizeof set[2], "serving/arrivals/@duration=%gs", seconds);
    snprintf(set[3], sizeof set[3], "serving/prompt/@median=200");
    snprintf(set[4], sizeof set[4], "serving/output/@median=100");
    if (scn_load_flags(DCSIM_SOURCE_DIR "/scenarios/examples/serving-llama3-70b-h100.xml", sets,
                       5, SCN_LOAD_SERVING, &s, &err)) {
        fprintf(stderr, "bench_serve: %s\n", err.msg);
        return;
    }
    serve_config c = s.serving;
    framework_config fw = {.attention_kernel = ATTN_FLASH2, .cuda_graphs = 1}; /* as serve.c */
    serve_result o;
    if (!hw_compute_device_fw(&s.gpu, c.math_precision, &fw, &c.dev, &err)) {
        double t0 = now_s();
        r->ok = !serve_simulate(&c, &o, &err);
        r->wall_s = now_s() - t0;
    }
    if (r->ok) {
        r->arrived = o.arrived;
        r->finished = o.finished;
        r->iterations = o.iterations;
        r->preemptions = o.preemptions;
        r->ttft_p99_s = o.ttft.q_s[2];
        r->tpot_p99_s = o.tpot.q_s[2];
        r->busy_fraction = o.busy_fraction;
        r->end_s = o.end_s;
        r->quantiles_exact = o.quantiles_exact;
    } else {
        fprintf(stderr, "bench_serve: %s\n", err.msg);
    }
    scn_scenario_free(&s);
}

static void in_child(double seconds, double rate, unsigned gpus, result *r)
{
    int fd[2];
    memset(r, 0, sizeof *r);
    if (pipe(fd))
        return;
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        result x = {0};
        run(seconds, rate, gpus, &x);
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        x.peak_rss_kb = ru.ru_maxrss;
        x.cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
                  ru.ru_stime.tv_usec * 1e-6;
        ssize_t wr = write(fd[1], &x, sizeof x);
        _exit(wr == (ssize_t)sizeof x ? 0 : 1);
    }
    close(fd[1]);
    if (pid > 0 && read(fd[0], r, sizeof *r) != (ssize_t)sizeof *r)
        r->ok = 0;
    close(fd[0]);
    if (pid > 0)
        waitpid(pid, NULL, 0);
}

int main(int argc, char **argv)
{
    double seconds = 3600, rate = 10000, target_s = 60;
    unsigned gpus = 1000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--smoke"))
            seconds = 36;
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--rate") && i + 1 < argc)
            rate = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_serve [--smoke] [--seconds S] [--rate R]\n");
            return 2;
        }
    }
    result r;
    in_child(seconds, rate, gpus, &r);
    printf("bench_serve run gpus=%u replicas=%u tp=4 rate_per_s=%g traffic_s=%g ok=%d "
           "wall_s=%.3f cpu_s=%.3f target_s=%g meets_target=%d peak_rss_bytes=%ld\n",
           gpus, gpus / 4, rate, seconds, r.ok, r.wall_s, r.cpu_s, target_s,
           r.ok && seconds >= 3600 && r.wall_s < target_s, r.peak_rss_kb * 1024);
    printf("bench_serve fleet arrived=%llu finished=%llu iterations=%llu preemptions=%llu "
           "end_s=%.6g busy_fraction=%.4f ttft_p99_s=%.6g tpot_p99_s=%.6g "
           "quantiles_exact=%d events_per_wall_s=%.4g\n",
           (unsigned long long)r.arrived, (unsigned long long)r.finished,
           (unsigned long long)r.iterations, (unsigned long long)r.preemptions, r.end_s,
           r.busy_fraction, r.ttft_p99_s, r.tpot_p99_s, r.quantiles_exact,
           r.wall_s > 0 ? (r.arrived + r.iterations) / r.wall_s : 0);
    return r.ok ? 0 : 1;
}
