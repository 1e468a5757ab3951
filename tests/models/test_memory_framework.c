/* test_memory_framework.c - training memory under framework settings: the
 * fp32 main-gradient buffer (Megatron: bf16 params + fp32 grads = 18 bytes
 * per parameter, 6 + 12/d with the distributed optimizer) and the
 * interleaved schedule's in-flight micro-batches, Megatron's warm-up count
 * 2(pp - i - 1) + (v - 1) pp + 1 chunks (schedules.py), all m v when that
 * is more (the all-warm-up case). Closed forms, exact. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "memory.h"
#include "model.h"
#include "precision.h"
#include "workload.h"

static model_arch gpt(unsigned layers)
{
    model_arch m = {.name = "gpt", .layers = layers, .hidden = 1024, .heads = 16,
                    .kv_heads = 16, .head_dim = 64, .ffn_hidden = 4096, .vocab = 50000,
                    .seq_len = 2048, .activation = ACT_GELU};
    return m;
}

/* 18 bytes per parameter with the buffer, 16 without; ZeRO 1 divides only
 * the optimizer (6 + 12/d), ZeRO 2 the buffer as well */
static void test_main_grad_buffer(void)
{
    model_arch m = gpt(8);
    parallel_config p = {.tp = 1, .pp = 1, .vpp = 1, .cp = 1, .ep = 1, .dp = 4,
                         .micro_batch = 1, .global_batch = 4, .precision = PREC_BF16};
    double per_param[2][3]; /* [buffer none][zero 0..2] */
    for (int none = 0; none <= 1; none++)
        for (int z = 0; z <= 2; z++) {
            p.zero_stage = z;
            p.fw.no_main_grad_buffer = none;
            p.fw.grad_reduce_precision = none ? PREC_BF16 : PREC_FP32;
            workload w;
            CHECK_INT_EQ(workload_build(&m, &p, 4, &w, NULL), 0);
            stage_memory mem;
            memory_training_stage(&w, 0, 0, &mem);
            double P = w.stages[0].params;
            per_param[none][z] =
                (mem.weights_bytes + mem.gradients_bytes + mem.optimizer_bytes) / P;
            workload_free(&w);
        }
    CHECK_REL(per_param[0][0], 18, 1e-12);
    CHECK_REL(per_param[0][1], 6 + 12.0 / 4, 1e-12);
    CHECK_REL(per_param[0][2], 2 + 16.0 / 4, 1e-12);
    CHECK_REL(per_param[1][0], 16, 1e-12);
    CHECK_REL(per_param[1][1], 4 + 12.0 / 4, 1e-12);
    CHECK_REL(per_param[1][2], 2 + 14.0 / 4, 1e-12);
    /* fp32 training keeps fp32 gradients either way */
    p.precision = PREC_FP32;
    p.zero_stage = 0;
    p.fw.no_main_grad_buffer = 1;
    p.fw.grad_reduce_precision = PREC_FP32;
    workload w;
    CHECK_INT_EQ(workload_build(&m, &p, 4, &w, NULL), 0);
    stage_memory mem;
    memory_training_stage(&w, 0, 0, &mem);
    CHECK_REL(mem.gradients_bytes, 4 * w.stages[0].params, 1e-12);
    workload_free(&w);
}

/* in-flight micro-batches (stage-sized units) of the interleaved schedule */
static void test_interleaved_inflight(void)
{
    const unsigned pp = 4, v = 2;
    model_arch m = gpt(16);
    parallel_config p = {.tp = 1, .pp = pp, .vpp = v, .cp = 1, .ep = 1, .dp = 1,
                         .micro_batch = 1, .schedule = SCHEDULE_INTERLEAVED,
                         .precision = PREC_BF16};
    /* m = 16 >= the warm-up: stage i holds pp + (pp - 2i - 1)/v */
    p.global_batch = 16;
    workload w;
    CHECK_INT_EQ(workload_build(&m, &p, pp, &w, NULL), 0);
    for (unsigned i = 0; i < pp; i++) {
        stage_memory mem;
        memory_training_stage(&w, i, 0, &mem);
        double chunks = 2.0 * (pp - i - 1) + (v - 1.0) * pp + 1;
        CHECK_REL(mem.inflight_microbatches, chunks / v, 1e-15);
        CHECK_REL(mem.inflight_microbatches, pp + (pp - 2.0 * i - 1) / v, 1e-15);
        /* no fewer than 1F1B's pp - i */
        CHECK(mem.inflight_microbatches >= pp - i);
    }
    stage_memory first;
    memory_training_stage(&w, 0, 0, &first);
    /* Korthikanti et al.'s first-stage factor 1 + (pp - 1)/(pp v) over 1F1B */
    CHECK_REL(first.inflight_microbatches, pp * (1 + (pp - 1.0) / (pp * v)), 1e-15);
    workload_free(&w);

    /* m = pp: every stage runs all m v forwards first and holds m */
    p.global_batch = pp;
    CHECK_INT_EQ(workload_build(&m, &p, pp, &w, NULL), 0);
    for (unsigned i = 0; i < pp; i++) {
        stage_memory mem;
        memory_training_stage(&w, i, 0, &mem);
        double chunks = fmin(2.0 * (pp - i - 1) + (v - 1.0) * pp + 1, (double)pp * v);
        CHECK_REL(mem.inflight_microbatches, chunks / v, 1e-15);
    }
    stage_memory last;
    memory_training_stage(&w, pp - 1, 0, &last);
    CHECK_REL(last.inflight_microbatches, (pp + 1.0) / v, 1e-15); /* (v-1)pp + 1 chunks */
    workload_free(&w);
}

int main(void)
{
    test_main_grad_buffer();
    test_interleaved_inflight();
    return check_report();
}
