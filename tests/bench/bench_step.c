/* bench_step.c - the step tier: one iteration of a Llama-3-405B-like job on
 * 16,384 H100 (TP8 PP16 DP128, 2,048 x 8,192 tokens; the built-in default
 * scenario's job on scenarios/examples/superpod-h100.xml's fabric) with the
 * flow model, the analytic path and the concurrent iteration (every PP
 * send and DP bucket on one shared flow net), and the concurrent iteration
 * of the same job on scenarios/examples/dragonfly-16k.xml's Dragonfly (UGAL:
 * flows spread over many paths with unequal weights), and the concurrent
 * iteration of scenarios/examples/moe-alltoall-leafspine.xml's Mixtral job
 * grown to 16,384 GPUs (DP 1,024, 16 micro-batches): its expert
 * all-to-alls cross nodes and run as flows inside the tasks, and the built-in
 * default's concurrent iteration (scenarios/examples/default.xml: RoCE
 * leaf-spine, ECMP); wall time, CPU time (user + system: on a shared machine
 * the figure to compare) and peak memory (each in a fork()ed child so the RSS high-water mark is its own).
 *
 * One machine-readable line per metric. Targets (issues): flow model under
 * 10 s and 4 GB, analytic under 0.1 s, concurrent under 10 s (both fabrics).
 * --smoke: 1/64 of the GPUs (the Dragonfly and MoE parts with 1/64 of the
 * global batch too, so their replicas keep their 16 micro-batches). Printed, never asserted. The
 * Megatron-Core H100 table it used to fit and print (--fit-eta) is now the
 * validation suite's, a check and never a fit: tests/validation/validate.py,
 * docs/validation.md.
 *   bench_step [--smoke]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compute.h"
#include "fabric.h"
#include "hardware.h"
#include "scenario.h"
#include "step.h"
#include "workload.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

typedef struct result {
    int ok;
    double wall_s, cpu_s, iteration_s, mfu; /* cpu_s: user + system, the child's */
    long peak_rss_kb;
} result;

/* load (not timed), then build the workload, device and fabric and
 * simulate one iteration (timed) */
enum { NET_FLOW, NET_ANALYTIC, NET_CONCURRENT, NET_COUNT };

static void one_iteration(const char *path, int net, unsigned scale_down, unsigned batch,
                          result *r)
{
    scn_scenario s;
    sim_error err;
    sim_error_clear(&err);
    char set[2][64];
    const char *sets[2];
    size_t n_sets = 0;
    /* 16,384 GPUs (smoke: fewer data-parallel replicas), the batch with them */
    snprintf(set[0], sizeof set[0], "cluster/gpu/@count=%u", 16384 / scale_down);
    sets[n_sets++] = set[0];
    if (batch) {
        snprintf(set[1], sizeof set[1], "job/parallelism/@global-batch=%u", batch / scale_down);
        sets[n_sets++] = set[1];
    }
    if (scn_load_flags(path, sets, n_sets, SCN_LOAD_NO_FIT_CHECK, &s, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return;
    }
    s.step.analytic = net == NET_ANALYTIC;
    s.step.concurrent = net == NET_CONCURRENT;
    if (s.step.sustained_efficiency == 0) /* as dcsim step: the GPU catalog's */
        s.step.sustained_efficiency = s.gpu.sustained_efficiency > 0 ? s.gpu.sustained_efficiency : 1;
    double t0 = now_s();
    workload w;
    compute_device dev;
    fabric f;
    step_profile p;
    char why[256] = "";
    sim_error e;
    sim_error_clear(&e);
    unsigned long long gpus = (unsigned long long)s.par.tp * s.par.pp * s.par.dp;
    if (!workload_build(&s.arch, &s.par, gpus, &w, &e)) {
        if (!hw_compute_device(&s.gpu, s.precision, &dev, &e) &&
            !fabric_build(&s.fabric, &f, &e)) {
            if (!step_simulate(&w, &dev, &f, &s.step, &p, &e)) {
                r->ok = 1;
                r->iteration_s = p.iteration_s;
                r->mfu = p.mfu;
                step_profile_free(&p);
            }
            fabric_free(&f);
        }
        workload_free(&w);
    }
    r->wall_s = now_s() - t0;
    if (!r->ok)
        fprintf(stderr, "bench_step: %s\n", e.code ? e.msg : why);
    scn_scenario_free(&s);
}

static void in_child(const char *path, int net, unsigned scale_down, unsigned batch, result *r)
{
    int fd[2];
    memset(r, 0, sizeof *r);
    if (pipe(fd))
        return;
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        result x = {0};
        one_iteration(path, net, scale_down, batch, &x);
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
    int smoke = argc > 1 && !strcmp(argv[1], "--smoke");
    unsigned scale = smoke ? 64 : 1;
    static const char *const names[NET_COUNT] = {"flow", "analytic", "concurrent"};
    static const struct part {
        const char *path, *fabric;
        int net;
        unsigned batch; /* the global batch at 16,384 GPUs; 0: the scenario's */
        double target_s;
    } parts[] = {
        {DCSIM_SOURCE_DIR "/scenarios/examples/superpod-h100.xml", "fat-tree", NET_FLOW, 0, 10.0},
        {DCSIM_SOURCE_DIR "/scenarios/examples/superpod-h100.xml", "fat-tree", NET_ANALYTIC, 0, 0.1},
        {DCSIM_SOURCE_DIR "/scenarios/examples/superpod-h100.xml", "fat-tree", NET_CONCURRENT, 0,
         10.0},
        /* the built-in default: Meta's RoCE leaf-spine with ECMP (no folding: the
         * hash sends each replica's sends to other spines) */
        {DCSIM_SOURCE_DIR "/scenarios/examples/default.xml", "leaf-spine-roce-ecmp",
         NET_CONCURRENT, 0, 10.0},
        {DCSIM_SOURCE_DIR "/scenarios/examples/dragonfly-16k.xml", "dragonfly", NET_CONCURRENT,
         2048, 10.0},
        {DCSIM_SOURCE_DIR "/scenarios/examples/moe-alltoall-leafspine.xml", "leaf-spine-moe-ep",
         NET_CONCURRENT, 16384, 10.0},
    };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        const struct part *pt = &parts[i];
        result r;
        in_child(pt->path, pt->net, scale, pt->batch, &r);
        printf("bench_step iteration gpus=%u fabric=%s network=%s ok=%d wall_s=%.4f cpu_s=%.4f "
               "target_s=%g meets_target=%d iteration_s=%.6g mfu=%.4f peak_rss_bytes=%ld\n",
               16384 / scale, pt->fabric, names[pt->net], r.ok, r.wall_s, r.cpu_s, pt->target_s,
               r.wall_s < pt->target_s, r.iteration_s, r.mfu, r.peak_rss_kb * 1024);
        if (!r.ok)
            return 1;
    }
    return 0;
}
