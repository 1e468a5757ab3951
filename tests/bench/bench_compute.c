/* bench_compute.c - throughput of the GPU timing kernels (compute.h) on 1 and
 * 2 OpenMP threads.
 *
 * A batch of random ops with training-like shapes (60 % GEMM with m up to
 * 16k tokens and n, k from common hidden sizes, 20 % flash attention at 512
 * to 8k sequence, 20 % memory-bound) is timed with compute_op_times, and a
 * per-GPU evaluation (default 16384 GPUs x 500 ops, speeds 0.8-1.2) with
 * compute_eval_gpus. Repetitions alternate 1 and 2 threads and each keeps
 * its best, so noise on a shared machine hurts both alike. Prints:
 *   bench_compute threads=T op_evals_per_s=R           (ops timed per second)
 *   bench_compute threads=T gpu_op_evals_per_s=R       (GPUs x ops per second)
 *   bench_compute speedup_2_over_1=X  /  gpu_speedup_2_over_1=X
 * Exit status is 0 whatever the speed; non-zero only when something is
 * functionally wrong (a kernel fails, or 1 and 2 threads disagree).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <omp.h>

#include "compute.h"

#define DEFAULT_OPS 100000u
#define DEFAULT_GPUS 16384u
#define DEFAULT_GPU_OPS 500u
#define DEFAULT_REPS 15
#define TARGET_REP_S 0.03 /* each repetition loops calls until about this long */

static double now_mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double uniform(uint64_t *x)
{
    *x ^= *x >> 12, *x ^= *x << 25, *x ^= *x >> 27;
    return (double)((*x * 2685821657736338717ull) >> 11) * 0x1p-53;
}

static void random_ops(op *ops, size_t n_ops, uint64_t seed)
{
    static const double dims[] = {1024, 2048, 4096, 5120, 8192, 12288, 14336, 16384, 28672};
    uint64_t x = seed;
    for (size_t i = 0; i < n_ops; i++) {
        op o = {.precision = PREC_BF16, .count = 1 + floor(96 * uniform(&x)), .name = "op"};
        double u = uniform(&x);
        if (u < 0.6) {
            o.kind = OP_GEMM;
            o.precision = uniform(&x) < 0.8 ? PREC_BF16 : PREC_FP8;
            o.m = 1 + floor(16384 * uniform(&x));
            o.n = dims[(size_t)(9 * uniform(&x))];
            o.k = dims[(size_t)(9 * uniform(&x))];
            o.flops = 2 * o.m * o.n * o.k;
            o.bytes = 2 * (o.m * o.k + o.k * o.n + o.m * o.n);
        } else if (u < 0.8) {
            double seq = 512 * (1 + floor(16 * uniform(&x)));
            o.kind = OP_ATTENTION;
            o.flops = 4 * seq * seq * 32 * 128;
            o.bytes = 2 * 4 * seq * 32 * 128;
        } else {
            o.kind = OP_MEMORY;
            o.precision = PREC_FP32;
            o.bytes = 1e6 * (1 + 1000 * uniform(&x));
        }
        ops[i] = o;
    }
}

/* H100 SXM-like (hardware.md 1.1, 2.1, 2.2) */
static compute_device h100(void)
{
    compute_device d;
    memset(&d, 0, sizeof d);
    d.peak_flops_per_s[PREC_BF16] = 989.4e12;
    d.peak_flops_per_s[PREC_FP8] = 1979e12;
    d.gemm_efficiency = 794.5 / 989.0;
    d.attention_efficiency = 0.6;
    d.mem_bytes_per_s = 3.35e12;
    d.mem_efficiency = 0.9;
    d.sms = 132;
    d.ctas_per_sm = 1;
    d.tile_m = 256;
    d.tile_n = 128;
    d.launch_s = 5e-6;
    return d;
}

struct batch {
    const compute_device *d;
    const op *ops;
    size_t n_ops;
    double *time_s;          /* n_ops */
    const op *gpu_ops;
    size_t n_gpu_ops;
    const double *speed;     /* n_gpus */
    size_t n_gpus;
    double *gpu_s;           /* n_gpus */
};

/* run `calls` calls of one kernel on `threads` threads; returns seconds, or
 * a negative value when a call fails */
static double run_op_times(const struct batch *b, int threads, long calls)
{
    omp_set_num_threads(threads);
    double t0 = now_mono_s();
    for (long c = 0; c < calls; c++)
        if (compute_op_times(b->d, b->ops, b->n_ops, b->time_s) != 0)
            return -1;
    return now_mono_s() - t0;
}

static double run_eval_gpus(const struct batch *b, int threads, long calls)
{
    omp_set_num_threads(threads);
    double t0 = now_mono_s();
    for (long c = 0; c < calls; c++)
        if (compute_eval_gpus(b->d, b->gpu_ops, b->n_gpu_ops, b->speed, b->n_gpus, b->gpu_s) != 0)
            return -1;
    return now_mono_s() - t0;
}

typedef double (*run_fn)(const struct batch *, int, long);

/* calls per repetition so that one repetition on 1 thread takes about
 * target_s (at least 1) */
static long calibrate(run_fn run, const struct batch *b, double target_s)
{
    long calls = 1;
    for (;;) {
        double t = run(b, 1, calls);
        if (t < 0)
            return -1;
        if (t >= target_s / 4 || calls >= (1L << 24))
            return t > 0 ? (long)ceil(calls * target_s / t) : calls;
        calls *= 4;
    }
}

/* best rate (work units per second) on 1 and 2 threads, interleaved */
static int measure(run_fn run, const struct batch *b, double work_per_call, int reps,
                   double target_s, double best[2])
{
    long calls = calibrate(run, b, target_s);
    if (calls < 0)
        return -1;
    best[0] = best[1] = 0;
    for (int r = 0; r < reps; r++)
        for (int t = 0; t < 2; t++) {
            double s = run(b, t + 1, calls);
            if (s < 0)
                return -1;
            double rate = s > 0 ? work_per_call * (double)calls / s : 0;
            if (rate > best[t])
                best[t] = rate;
        }
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_compute [--smoke] [--ops=N] [--gpus=N] [--reps=N]\n"
                    "  --smoke   tiny batches (for ctest); the figures mean nothing\n"
                    "  --ops=N   ops in the compute_op_times batch (default %u)\n"
                    "  --gpus=N  GPUs in the compute_eval_gpus run (default %u, x %u ops)\n"
                    "  --reps=N  repetitions per thread count (default %d)\n",
            DEFAULT_OPS, DEFAULT_GPUS, DEFAULT_GPU_OPS, DEFAULT_REPS);
    return 2;
}

static int parse_count(const char *s, size_t *out)
{
    char *end;
    if (*s < '0' || *s > '9')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || v == 0)
        return -1;
    *out = (size_t)v;
    return 0;
}

int main(int argc, char **argv)
{
    size_t n_ops = DEFAULT_OPS, n_gpus = DEFAULT_GPUS, n_gpu_ops = DEFAULT_GPU_OPS, reps = DEFAULT_REPS;
    double target_s = TARGET_REP_S;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--smoke") == 0) {
            n_ops = 2000;
            n_gpus = 256;
            n_gpu_ops = 50;
            reps = 2;
            target_s = 0.002;
        } else if (strncmp(argv[i], "--ops=", 6) == 0) {
            if (parse_count(argv[i] + 6, &n_ops) != 0)
                return usage();
        } else if (strncmp(argv[i], "--gpus=", 7) == 0) {
            if (parse_count(argv[i] + 7, &n_gpus) != 0)
                return usage();
        } else if (strncmp(argv[i], "--reps=", 7) == 0) {
            if (parse_count(argv[i] + 7, &reps) != 0)
                return usage();
        } else {
            return usage();
        }
    }

    compute_device d = h100();
    sim_error e;
    sim_error_clear(&e);
    if (compute_device_check(&d, &e) != 0) {
        fprintf(stderr, "bench_compute: bad device: %s\n", e.msg);
        return 1;
    }
    op *ops = malloc(n_ops * sizeof *ops);
    op *gpu_ops = malloc(n_gpu_ops * sizeof *gpu_ops);
    double *time_s = malloc(n_ops * sizeof *time_s);
    double *time_ref = malloc(n_ops * sizeof *time_ref);
    double *speed = malloc(n_gpus * sizeof *speed);
    double *gpu_s = malloc(n_gpus * sizeof *gpu_s);
    double *gpu_ref = malloc(n_gpus * sizeof *gpu_ref);
    int rc = 1;
    if (!ops || !gpu_ops || !time_s || !time_ref || !speed || !gpu_s || !gpu_ref) {
        fprintf(stderr, "bench_compute: out of memory\n");
        goto out;
    }
    random_ops(ops, n_ops, 20240601u);
    random_ops(gpu_ops, n_gpu_ops, 42u);
    uint64_t x = 7;
    for (size_t g = 0; g < n_gpus; g++)
        speed[g] = 0.8 + 0.4 * uniform(&x);
    struct batch b = {&d, ops, n_ops, time_s, gpu_ops, n_gpu_ops, speed, n_gpus, gpu_s};

    /* reference results on 1 thread; every measured run must reproduce them */
    omp_set_num_threads(1);
    if (compute_op_times(&d, ops, n_ops, time_ref) != 0 ||
        compute_eval_gpus(&d, gpu_ops, n_gpu_ops, speed, n_gpus, gpu_ref) != 0) {
        fprintf(stderr, "bench_compute: a kernel failed on the reference run\n");
        goto out;
    }

    double op_best[2], gpu_best[2];
    if (measure(run_op_times, &b, (double)n_ops, (int)reps, target_s, op_best) != 0 ||
        measure(run_eval_gpus, &b, (double)n_gpus * (double)n_gpu_ops, (int)reps, target_s,
                gpu_best) != 0) {
        fprintf(stderr, "bench_compute: a kernel failed during the measurement\n");
        goto out;
    }
    /* the last runs were on 2 threads: same bits as the 1-thread reference */
    if (memcmp(time_s, time_ref, n_ops * sizeof *time_s) != 0 ||
        memcmp(gpu_s, gpu_ref, n_gpus * sizeof *gpu_s) != 0) {
        fprintf(stderr, "bench_compute: 1 and 2 threads disagree\n");
        goto out;
    }
    for (int t = 0; t < 2; t++)
        printf("bench_compute threads=%d ops=%zu op_evals_per_s=%.0f\n", t + 1, n_ops,
               op_best[t]);
    printf("bench_compute speedup_2_over_1=%.2f\n", op_best[1] / op_best[0]);
    for (int t = 0; t < 2; t++)
        printf("bench_compute threads=%d gpus=%zu gpu_ops=%zu gpu_op_evals_per_s=%.0f\n", t + 1,
               n_gpus, n_gpu_ops, gpu_best[t]);
    printf("bench_compute gpu_speedup_2_over_1=%.2f\n", gpu_best[1] / gpu_best[0]);
    rc = 0;
out:
    free(ops);
    free(gpu_ops);
    free(time_s);
    free(time_ref);
    free(speed);
    free(gpu_s);
    free(gpu_ref);
    return rc;
}
