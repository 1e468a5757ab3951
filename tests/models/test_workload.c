/* test_workload.c - operations, FLOPs and memory of a training step against
 * hand computation, the Megatron-Core formula (calibration.md), the 6ND
 * rule, ZeRO's 16 bytes per parameter (18 with Megatron's fp32 main-gradient buffer) and a KV-cache worked example. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "memory.h"
#include "model.h"
#include "precision.h"
#include "workload.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

static model_arch tiny(void)
{
    model_arch m = {.name = "tiny", .layers = 4, .hidden = 64, .heads = 4, .kv_heads = 4,
                    .head_dim = 16, .ffn_hidden = 256, .vocab = 1000, .seq_len = 32,
                    .activation = ACT_GELU};
    return m;
}

static parallel_config serial(void)
{
    parallel_config p = {.tp = 1, .pp = 1, .vpp = 1, .cp = 1, .ep = 1, .dp = 1,
                         .micro_batch = 2, .global_batch = 2, .precision = PREC_BF16};
    return p;
}

static const op *find_op(const stage_workload *st, const char *name)
{
    for (size_t i = 0; i < st->n_forward; i++)
        if (strcmp(st->forward[i].name, name) == 0)
            return &st->forward[i];
    return NULL;
}

static void test_ops_by_hand(void)
{
    model_arch m = tiny();
    parallel_config p = serial();
    p.tp = 2;
    p.dp = 1;
    workload w;
    CHECK_INT_EQ(workload_build(&m, &p, 2, &w, NULL), 0);
    const stage_workload *st = &w.stages[0];
    CHECK_INT_EQ(st->layers, 4);
    /* T = b s = 64 tokens; per TP rank (a + 2g) d / t = 12 x 16 / 2 = 96 */
    const op *qkv = find_op(st, "qkv");
    CHECK(qkv != NULL);
    CHECK(qkv->m == 64 && qkv->n == 96 && qkv->k == 64);
    CHECK(qkv->flops == 2.0 * 64 * 96 * 64);
    CHECK(qkv->count == 4);
    CHECK(qkv->bytes == (64.0 * 64 + 64 * 96 + 64 * 96) * 2);
    const op *attn = find_op(st, "attention");
    CHECK(attn->flops == 4.0 * 2 * 32 * 32 * 2 * 16); /* 4 b s s (a/t) d */
    const op *fc1 = find_op(st, "fc1");
    CHECK(fc1->m == 64 && fc1->n == 128 && fc1->k == 64); /* f / t = 128 */
    const op *fc2 = find_op(st, "fc2");
    CHECK(fc2->m == 64 && fc2->n == 64 && fc2->k == 128);
    const op *logits = find_op(st, "logits");
    CHECK(logits->m == 64 && logits->n == 500 && logits->k == 64 && logits->count == 1);
    /* backward = 2 x forward FLOPs (no recompute) */
    double f = 0, b = 0;
    for (size_t i = 0; i < st->n_forward; i++)
        f += st->forward[i].flops * st->forward[i].count;
    for (size_t i = 0; i < st->n_backward; i++)
        b += st->backward[i].flops * st->backward[i].count;
    CHECK_REL(b, 2 * f, 1e-15);
    CHECK_REL(st->model_flops_microbatch, 3 * f, 1e-15);
    /* TP: 2 all-reduces per layer each way, of T h w bytes */
    int found = 0;
    for (size_t i = 0; i < st->n_comm; i++)
        if (st->comm[i].kind == COMM_TP_ALLREDUCE && st->comm[i].phase == PHASE_FORWARD) {
            CHECK(st->comm[i].bytes == 64.0 * 64 * 2);
            CHECK(st->comm[i].count == 8);
            CHECK_INT_EQ(st->comm[i].group, 2);
            found = 1;
        }
    CHECK(found);
    /* parameters per GPU: everything / tp, plus replicated norms */
    double expect = model_params_total(&m) / 2 + 4 * 2 * 64.0 / 2 + 64 / 2.0;
    CHECK_REL(st->params, expect, 1e-12);
    workload_free(&w);
}

static double megatron_by_hand(const model_arch *m, double B)
{
    /* calibration.md: 12 B s L h^2 [(1 + g/a + s/h)(a d/h) + (f/h) k (3/2 if SwiGLU) + V/(2Lh)] */
    double h = m->hidden, s = m->seq_len, L = m->layers, a = m->heads, g = m->kv_heads;
    double glu = m->activation == ACT_SWIGLU ? 1.5 : 1.0;
    return 12 * B * s * L * h * h *
           ((1 + g / a + s / h) * (a * m->head_dim / h) + (m->ffn_hidden / h) * glu +
            m->vocab / (2 * L * h));
}

static void test_megatron_flops(void)
{
    /* plain GPT: 72 B s L h^2 (1 + s/(6h) + V/(12 L h)) */
    model_arch gpt = {.name = "gpt", .layers = 24, .hidden = 2048, .heads = 16, .kv_heads = 16,
                      .head_dim = 128, .ffn_hidden = 8192, .vocab = 131072, .seq_len = 4096,
                      .activation = ACT_GELU};
    double B = 192, h = 2048, s = 4096, L = 24, V = 131072;
    double plain = 72 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * L * h));
    CHECK_REL(model_megatron_flops(&gpt, B), plain, 1e-12);

    model_arch llama = {.name = "llama-like", .layers = 32, .hidden = 4096, .heads = 32,
                        .kv_heads = 8, .head_dim = 128, .ffn_hidden = 14336, .vocab = 128256,
                        .seq_len = 8192, .activation = ACT_SWIGLU};
    CHECK_REL(model_megatron_flops(&llama, 512), megatron_by_hand(&llama, 512), 1e-12);

    /* the workload's summed operations equal the formula, whatever the split */
    struct { unsigned tp, pp, vpp, cp, dp, mb, gb; int sp, sched; } cases[] = {
        {1, 1, 1, 1, 1, 1, 8, 0, SCHEDULE_1F1B},
        {2, 2, 1, 1, 2, 1, 8, 1, SCHEDULE_1F1B},
        {4, 2, 2, 1, 1, 2, 8, 1, SCHEDULE_INTERLEAVED},
        {2, 4, 1, 2, 1, 1, 8, 0, SCHEDULE_GPIPE},
        {8, 4, 1, 1, 2, 1, 16, 1, SCHEDULE_1F1B},
    };
    const model_arch *models[] = {&gpt, &llama};
    for (size_t mi = 0; mi < 2; mi++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            parallel_config p = {.tp = cases[i].tp, .pp = cases[i].pp, .vpp = cases[i].vpp,
                                 .cp = cases[i].cp, .ep = 1, .dp = cases[i].dp,
                                 .micro_batch = cases[i].mb, .global_batch = cases[i].gb,
                                 .sequence_parallel = cases[i].sp, .schedule = cases[i].sched,
                                 .precision = PREC_BF16};
            unsigned long long gpus = (unsigned long long)p.tp * p.pp * p.cp * p.dp;
            workload w;
            sim_error e;
            sim_error_clear(&e);
            int rc = workload_build(models[mi], &p, gpus, &w, &e);
            CHECK_INT_EQ(rc, 0);
            if (rc) {
                fprintf(stderr, "  case %zu: %s\n", i, e.msg);
                continue;
            }
            CHECK_REL(w.model_flops_iteration, model_megatron_flops(models[mi], p.global_batch),
                      1e-12);
            CHECK(w.hardware_flops_iteration == w.model_flops_iteration);
            workload_free(&w);
        }

    /* recompute adds hardware FLOPs, never model FLOPs: full = + one forward */
    parallel_config p = {.tp = 2, .pp = 2, .vpp = 1, .cp = 1, .ep = 1, .dp = 1,
                         .micro_batch = 1, .global_batch = 4, .precision = PREC_BF16,
                         .recompute = RECOMPUTE_FULL};
    workload w;
    CHECK_INT_EQ(workload_build(&gpt, &p, 4, &w, NULL), 0);
    CHECK_REL(w.model_flops_iteration, model_megatron_flops(&gpt, 4), 1e-12);
    /* the layers' forward once more: a third of the model FLOPs less the logits' */
    model_arch no_vocab = gpt;
    no_vocab.vocab = 0;
    CHECK_REL(w.hardware_flops_iteration - w.model_flops_iteration,
              model_megatron_flops(&no_vocab, 4) / 3, 1e-12);
    workload_free(&w);
}

static void test_six_nd(void)
{
    /* GPT-3 175B (Brown et al. 2020: 96 layers, d_model 12288, 96 heads, 2048 tokens;
     * recalled, U) with GPT-2's 50257 vocabulary. Megatron / 6ND = 1 + s/(6h) for
     * a dense GPT up to the vocabulary term: 2.8 % here. */
    model_arch gpt3 = {.name = "gpt3", .layers = 96, .hidden = 12288, .heads = 96,
                       .kv_heads = 96, .head_dim = 128, .ffn_hidden = 4 * 12288,
                       .vocab = 50257, .seq_len = 2048, .activation = ACT_GELU,
                       .tied_embeddings = 1};
    double N = model_params_total(&gpt3);
    CHECK_NEAR(N / 1e9, 175, 1.5);
    double D = 1024.0 * 2048;
    double ratio = model_megatron_flops(&gpt3, 1024) / (6 * N * D);
    CHECK(ratio > 1 && ratio < 1.03);
    double v_term = 50257.0 / (12 * 96 * 12288);
    CHECK_NEAR(ratio, 1 + (2048.0 / (6 * 12288)) / (1 + v_term), 0.001);
}

static void test_training_memory(void)
{
    /* a 7B dense model: 18 bytes per parameter without sharding (2 weights,
     * 4 in Megatron's fp32 main-gradient buffer, 12 optimizer), 16 (ZeRO's
     * mixed-precision Adam) with 16-bit gradients */
    model_arch m = {.name = "7b", .layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 32,
                    .head_dim = 128, .ffn_hidden = 11008, .vocab = 32000, .seq_len = 4096,
                    .activation = ACT_SWIGLU};
    double N = model_params_total(&m);
    CHECK_NEAR(N / 1e9, 6.74, 0.01); /* Llama-2 7B's 6.74B */
    parallel_config p = serial();
    p.micro_batch = 1;
    p.global_batch = 1;
    workload w;
    CHECK_INT_EQ(workload_build(&m, &p, 1, &w, NULL), 0);
    stage_memory mem;
    memory_training_stage(&w, 0, 0, &mem);
    CHECK_REL(w.stages[0].params, N, 1e-12);
    CHECK_REL(mem.weights_bytes + mem.gradients_bytes + mem.optimizer_bytes, 18 * N, 1e-12);
    /* activations: 32 layers x T h (34 + ...) for T = 4096, one micro-batch in flight */
    double T = 4096, h = 4096;
    double per_layer = 10 * T * h + 2 * T * 3 * h + 2 * T * h + 2 * T * 2 * 11008 + 2 * T * 11008;
    CHECK_REL(mem.activation_per_layer_bytes, per_layer, 1e-12);
    CHECK_REL(mem.activations_bytes, 32 * per_layer + 4 * T * 32000, 1e-12);
    CHECK_REL(mem.total_bytes, 18 * N + mem.activations_bytes, 1e-12);
    workload_free(&w);
    p.fw.no_main_grad_buffer = 1;
    p.fw.grad_reduce_precision = PREC_BF16;
    CHECK_INT_EQ(workload_build(&m, &p, 1, &w, NULL), 0);
    memory_training_stage(&w, 0, 0, &mem);
    CHECK_REL(mem.weights_bytes + mem.gradients_bytes + mem.optimizer_bytes, 16 * N, 1e-12);
    CHECK_REL(mem.gradients_bytes, 2 * N, 1e-12);
    workload_free(&w);
    p.fw = (framework_config){0};

    /* GPT (MHA, f = 4h) reproduces Korthikanti et al.'s 34 s b h per layer, and
     * 10 + 24/t with TP, 34/t with sequence parallelism */
    model_arch gpt = {.name = "gpt", .layers = 8, .hidden = 1024, .heads = 16, .kv_heads = 16,
                      .head_dim = 64, .ffn_hidden = 4096, .vocab = 50000, .seq_len = 2048,
                      .activation = ACT_GELU};
    parallel_config q = serial();
    q.micro_batch = 1;
    double sbh = 2048.0 * 1024;
    CHECK_REL(memory_activation_per_layer(&gpt, &q, 0), 34 * sbh, 1e-12);
    q.tp = 4;
    CHECK_REL(memory_activation_per_layer(&gpt, &q, 0), (10 + 24.0 / 4) * sbh, 1e-12);
    q.sequence_parallel = 1;
    CHECK_REL(memory_activation_per_layer(&gpt, &q, 0), 34.0 / 4 * sbh, 1e-12);
    q.recompute = RECOMPUTE_FULL;
    CHECK_REL(memory_activation_per_layer(&gpt, &q, 0), 2.0 / 4 * sbh, 1e-12);

    /* ZeRO stages over dp = 8: optimizer, then gradients (the fp32 buffer),
     * then weights shrink 8x */
    p.dp = 8;
    p.global_batch = 8;
    double prev = INFINITY;
    for (int z = 0; z <= 3; z++) {
        p.zero_stage = z;
        CHECK_INT_EQ(workload_build(&m, &p, 8, &w, NULL), 0);
        memory_training_stage(&w, 0, 0, &mem);
        double states = mem.weights_bytes + mem.gradients_bytes + mem.optimizer_bytes;
        double expect = N * ((z >= 3 ? 2.0 / 8 : 2) + (z >= 2 ? 4.0 / 8 : 4) +
                             (z >= 1 ? 12.0 / 8 : 12));
        CHECK_REL(states, expect, 1e-12);
        CHECK(states < prev);
        prev = states;
        workload_free(&w);
    }

    /* TP 2 halves the sharded weights; PP 2 halves the layers per stage; the
     * first 1F1B stage holds pp micro-batches, the last one */
    p = serial();
    p.micro_batch = 1;
    p.global_batch = 8;
    p.pp = 2;
    CHECK_INT_EQ(workload_build(&m, &p, 2, &w, NULL), 0);
    stage_memory s0, s1;
    memory_training_stage(&w, 0, 0, &s0);
    memory_training_stage(&w, 1, 0, &s1);
    CHECK(s0.inflight_microbatches == 2 && s1.inflight_microbatches == 1);
    CHECK_REL(s0.activation_per_layer_bytes, s1.activation_per_layer_bytes, 1e-12);
    CHECK_NEAR(w.stages[0].params + w.stages[1].params, N, 1);
    workload_free(&w);
    p.pp = 1;
    p.tp = 2;
    p.global_batch = 1;
    CHECK_INT_EQ(workload_build(&m, &p, 2, &w, NULL), 0);
    memory_training_stage(&w, 0, 0, &s0);
    CHECK_NEAR(s0.weights_bytes, 2 * (N / 2 + 32 * 4096 + 4096 / 2.0), 1);
    workload_free(&w);
}

static void test_kv_cache_example(void)
{
    /* The seed article's example: a 70B model at INT8 serving batch 8 at a 4K
     * context; 80 layers, 8 KV heads of dimension 128, a 16-bit KV cache. */
    model_arch m = {.name = "70b", .layers = 80, .hidden = 8192, .heads = 64, .kv_heads = 8,
                    .head_dim = 128, .ffn_hidden = 28672, .vocab = 32000, .seq_len = 4096,
                    .activation = ACT_SWIGLU};
    inference_config c = {.params = 70e9, .weight_precision = PREC_INT8, .kv_precision = PREC_FP16,
                          .batch = 8, .context_tokens = {4096, 4096, 4096}, .gpu_bytes = 80e9,
                          .max_tp = 8};
    inference_sizing s;
    memory_inference(&m, &c, &s);
    CHECK_NEAR(s.weights_bytes / GIB, 65.2, 0.05);
    CHECK_NEAR(s.kv_bytes[0] / GIB, 10.0, 0.01);
    CHECK(s.kv_bytes_per_token == 2.0 * 80 * 8 * 128 * 2);
    /* 75.2 GiB = 80.7 GB: over an 80 GB card by 0.7 GB, so one card does not
     * hold it even before activations and runtime overheads; two do */
    CHECK(s.weights_bytes + s.kv_bytes[0] > 80e9);
    CHECK_INT_EQ(s.gpus_per_replica[0], 2);
    /* with an 80 GiB card it would fit, with 4.8 GiB to spare */
    c.gpu_bytes = 80 * GIB;
    memory_inference(&m, &c, &s);
    CHECK_INT_EQ(s.gpus_per_replica[0], 1);
    CHECK_NEAR((80 * GIB - s.weights_bytes - s.kv_bytes[0]) / GIB, 4.8, 0.05);
    /* sequences per replica: the free memory over one sequence's KV */
    CHECK_NEAR(s.sequences_per_replica[0],
               floor((80 * GIB - s.weights_bytes) / (s.kv_bytes_per_token * 4096)), 0);
}

/* workload_check with its message copied to why ("" when it passes) */
static int check_parallelism(const model_arch *m, const parallel_config *p,
                             unsigned long long gpus, char *why, size_t size)
{
    sim_error e;
    sim_error_clear(&e);
    int rc = workload_check(m, p, gpus, &e);
    snprintf(why, size, "%s", e.msg);
    return rc;
}

static void test_bad_parallelism(void)
{
    model_arch m = tiny();
    char why[256];
    parallel_config p = serial();
    p.tp = 3;
    CHECK_INT_EQ(check_parallelism(&m, &p, 3, why, sizeof why), SIM_ERR_INPUT);
    CHECK_CONTAINS(why, "heads (4) must be a multiple of tp (3)");
    p = serial();
    p.pp = 3;
    CHECK_INT_EQ(check_parallelism(&m, &p, 3, why, sizeof why), SIM_ERR_INPUT);
    CHECK_CONTAINS(why, "layers (4) must be a multiple of pp x vpp = 3 x 1 = 3");
    p = serial();
    p.dp = 2;
    CHECK_INT_EQ(check_parallelism(&m, &p, 3, why, sizeof why), SIM_ERR_INPUT);
    CHECK_CONTAINS(why, "GPUs (3) must equal tp x cp x pp x dp = 1 x 1 x 1 x 2 = 2");
    p.global_batch = 3;
    CHECK_INT_EQ(check_parallelism(&m, &p, 2, why, sizeof why), SIM_ERR_INPUT);
    CHECK_CONTAINS(why, "global-batch 3 is not a multiple of micro-batch x dp = 2 x 2 = 4");
    p = serial();
    p.pp = 2;
    p.first_stage_layers = 1;
    p.last_stage_layers = 2;
    CHECK_INT_EQ(check_parallelism(&m, &p, 2, why, sizeof why), SIM_ERR_INPUT);
    /* Llama 3's uneven pipeline: 126 layers, pp 16, one layer fewer at each end */
    model_arch big = tiny();
    big.layers = 126;
    p = serial();
    p.pp = 16;
    p.first_stage_layers = 7;
    p.last_stage_layers = 7;
    p.global_batch = 16;
    p.micro_batch = 1;
    CHECK_INT_EQ(workload_check(&big, &p, 16, NULL), 0);
    unsigned first, n;
    workload_stage_layers(&big, &p, 0, &first, &n);
    CHECK(first == 0 && n == 7);
    workload_stage_layers(&big, &p, 1, &first, &n);
    CHECK(first == 7 && n == 8);
    workload_stage_layers(&big, &p, 15, &first, &n);
    CHECK(first == 119 && n == 7);
}

int main(void)
{
    test_ops_by_hand();
    test_megatron_flops();
    test_six_nd();
    test_training_memory();
    test_kv_cache_example();
    test_bad_parallelism();
    return check_report();
}
