/* bench_workload.c - time to build the operation lists (and memory) of a
 * large training job: Llama 3 405B with TP 8, PP 16 (7 + 14 x 8 + 7 layers),
 * DP 128 on 16,384 GPUs, and DeepSeek-V3-like with EP. Prints one line per
 * metric:
 *   bench_workload model=NAME build_s=... ops_per_stage=... memory_s=...
 * Exit status 0 whatever the speed; non-zero only if a build fails.
 * --smoke: one repetition. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "memory.h"
#include "model.h"
#include "precision.h"
#include "workload.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int bench(const char *label, const model_arch *m, const parallel_config *p,
                 unsigned long long gpus, int reps)
{
    double best_build = 1e30, best_memory = 1e30;
    size_t ops = 0;
    for (int r = 0; r < reps; r++) {
        workload w;
        sim_error e;
        sim_error_clear(&e);
        double t0 = now_s();
        if (workload_build(m, p, gpus, &w, &e)) {
            fprintf(stderr, "bench_workload: %s: %s\n", label, e.msg);
            return 1;
        }
        double t1 = now_s();
        stage_memory mem;
        for (unsigned i = 0; i < w.n_stages; i++)
            memory_training_stage(&w, i, 0, &mem);
        double t2 = now_s();
        ops = 0;
        for (unsigned i = 0; i < w.n_stages; i++)
            ops += w.stages[i].n_forward + w.stages[i].n_backward + w.stages[i].n_step;
        workload_free(&w);
        if (t1 - t0 < best_build)
            best_build = t1 - t0;
        if (t2 - t1 < best_memory)
            best_memory = t2 - t1;
    }
    printf("bench_workload model=%s build_s=%.3g op_records=%zu memory_s=%.3g\n", label,
           best_build, ops, best_memory);
    return 0;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 && strcmp(argv[1], "--smoke") == 0 ? 1 : 20;
    model_arch llama = {.name = "llama3-405b", .layers = 126, .hidden = 16384, .heads = 128,
                        .kv_heads = 8, .head_dim = 128, .ffn_hidden = 53248, .vocab = 128256,
                        .seq_len = 8192, .activation = ACT_SWIGLU, .top_k = 1};
    parallel_config p = {.tp = 8, .pp = 16, .vpp = 1, .cp = 1, .ep = 1, .dp = 128,
                         .micro_batch = 1, .global_batch = 2048, .sequence_parallel = 1,
                         .zero_stage = 1, .first_stage_layers = 7, .last_stage_layers = 7,
                         .precision = PREC_BF16};
    int rc = bench("llama3-405b-tp8-pp16", &llama, &p, 16384, reps);
    model_arch ds = {.name = "deepseek-v3-like", .layers = 61, .hidden = 7168, .heads = 128,
                     .kv_heads = 128, .head_dim = 128, .ffn_hidden = 18432, .vocab = 129280,
                     .seq_len = 4096, .activation = ACT_SWIGLU, .experts = 256, .top_k = 8,
                     .moe_ffn_hidden = 2048, .shared_experts = 1, .dense_layers = 3};
    parallel_config q = {.tp = 1, .pp = 16, .vpp = 1, .cp = 1, .ep = 64, .dp = 128,
                         .micro_batch = 1, .global_batch = 4096, .zero_stage = 1,
                         .first_stage_layers = 3, .last_stage_layers = 2,
                         .precision = PREC_BF16};
    rc |= bench("deepseek-v3-like-ep64-pp16", &ds, &q, 2048, reps);
    return rc;
}
