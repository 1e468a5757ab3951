/* test_workload_framework.c - framework behaviour (parallel_config.fw) in
 * the workload and memory models against closed forms: the FP8 recipes'
 * precisions and bytes, sequence parallelism's repeated backward
 * all-gather, PP send modes, gradient-reduction bytes, the bucket rules of
 * components.md 4.4, the fp32 main-gradient buffer and the interleaved
 * schedule's in-flight micro-batches (Megatron's warm-up count). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "memory.h"
#include "model.h"
#include "precision.h"
#include "workload.h"

static model_arch tiny(void)
{
    model_arch m = {.name = "tiny", .layers = 8, .hidden = 64, .heads = 4, .kv_heads = 4,
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

static const op *find_op(const op *ops, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(ops[i].name, name) == 0)
            return &ops[i];
    return NULL;
}

/* the first comm op of that kind, phase and name (NULL: any name) */
static const comm_op *find_comm(const stage_workload *st, int kind, int phase, const char *name)
{
    for (size_t i = 0; i < st->n_comm; i++)
        if (st->comm[i].kind == kind && st->comm[i].phase == phase &&
            (!name || strcmp(st->comm[i].name, name) == 0))
            return &st->comm[i];
    return NULL;
}

static int build(const parallel_config *p, unsigned long long gpus, workload *w)
{
    model_arch m = tiny();
    sim_error e;
    sim_error_clear(&e);
    int rc = workload_build(&m, p, gpus, w, &e);
    if (rc)
        fprintf(stderr, "workload_build: %s\n", e.msg);
    return rc;
}

/* Transformer Engine FP8: GEMMs read FP8 and write BF16, the rest BF16;
 * "all": everything one byte */
static void test_fp8_recipes(void)
{
    parallel_config p = serial();
    p.tp = 2;
    p.precision = PREC_FP8;
    workload w;
    CHECK_INT_EQ(build(&p, 2, &w), 0);
    const stage_workload *st = &w.stages[0];
    double T = 64, h = 64; /* b s = 2 x 32 tokens */
    const op *qkv = find_op(st->forward, st->n_forward, "qkv");
    CHECK(qkv && qkv->precision == PREC_FP8);
    /* m = 64, n = (a + 2g) d / t = 96, k = 64: A and B in FP8, C in BF16 */
    CHECK(qkv && qkv->bytes == (64.0 * 64 + 64 * 96) * 1 + 64.0 * 96 * 2);
    const op *attn = find_op(st->forward, st->n_forward, "attention");
    CHECK(attn && attn->precision == PREC_BF16);
    const op *norm = find_op(st->forward, st->n_forward, "norm");
    CHECK(norm && norm->precision == PREC_BF16 && norm->bytes == 2 * T * h * 2);
    const op *logits = find_op(st->forward, st->n_forward, "logits");
    CHECK(logits && logits->precision == PREC_BF16);
    /* backward GEMMs stay FP8 with BF16 outputs: dgrad (m, k, n) of qkv */
    const op *dgrad = find_op(st->backward, st->n_backward, "qkv");
    CHECK(dgrad && dgrad->precision == PREC_FP8 &&
          dgrad->bytes == (64.0 * 96 + 96 * 64) * 1 + 64.0 * 64 * 2);
    const comm_op *ar = find_comm(st, COMM_TP_ALLREDUCE, PHASE_FORWARD, NULL);
    CHECK(ar && ar->bytes == T * h * 2); /* BF16 messages */
    const comm_op *dp = find_comm(st, COMM_DP_ALLREDUCE, PHASE_STEP, NULL);
    CHECK(!dp); /* dp = 1: no reduction */
    CHECK_REL(workload_comm_bytes(&p), 2, 0);
    double te_flops = w.model_flops_iteration;
    workload_free(&w);

    p.fw.fp8_recipe = FP8_RECIPE_ALL;
    CHECK_INT_EQ(build(&p, 2, &w), 0);
    st = &w.stages[0];
    qkv = find_op(st->forward, st->n_forward, "qkv");
    CHECK(qkv && qkv->bytes == (64.0 * 64 + 64 * 96 + 64 * 96) * 1);
    attn = find_op(st->forward, st->n_forward, "attention");
    CHECK(attn && attn->precision == PREC_FP8);
    ar = find_comm(st, COMM_TP_ALLREDUCE, PHASE_FORWARD, NULL);
    CHECK(ar && ar->bytes == T * h * 1);
    CHECK_REL(w.model_flops_iteration, te_flops, 1e-15); /* the recipe moves no FLOPs */
    workload_free(&w);

    /* TE: PP sends and the DP parameter all-gather in BF16 too, gradients fp32 */
    p.fw.fp8_recipe = FP8_RECIPE_TE;
    p.pp = 2;
    p.dp = 2;
    p.zero_stage = 1;
    p.global_batch = 8;
    CHECK_INT_EQ(build(&p, 8, &w), 0);
    st = &w.stages[0];
    const comm_op *send = find_comm(st, COMM_PP_SEND, PHASE_FORWARD, NULL);
    CHECK(send && send->bytes == T * h * 2);
    const comm_op *ag = find_comm(st, COMM_DP_ALLGATHER, PHASE_STEP, NULL);
    const comm_op *rs = find_comm(st, COMM_DP_REDUCE_SCATTER, PHASE_STEP, NULL);
    CHECK(ag && ag->bytes == st->params * 2);
    CHECK(rs && rs->bytes == st->params * 4);
    workload_free(&w);
    p.pp = 1;
    p.dp = 1;
    p.zero_stage = 0;
    p.global_batch = 2;

    /* bf16 training: the recipe changes nothing */
    p.precision = PREC_BF16;
    p.fw.fp8_recipe = FP8_RECIPE_TE;
    CHECK_INT_EQ(build(&p, 2, &w), 0);
    qkv = find_op(w.stages[0].forward, w.stages[0].n_forward, "qkv");
    CHECK(qkv && qkv->precision == PREC_BF16 && qkv->bytes == (64.0 * 64 + 2 * 64 * 96) * 2);
    workload_free(&w);
}

/* SP: forward 2L all-gathers and 2L reduce-scatters; backward 2L + 2L
 * repeated all-gathers and 2L reduce-scatters; full recompute adds the
 * forward's 2L + 2L */
static void test_sp_backward_allgather(void)
{
    parallel_config p = serial();
    p.tp = 2;
    p.sequence_parallel = 1;
    double L = 8, bytes = 64.0 * 64 * 2;
    for (int rec = 0; rec <= 2; rec += 2) {
        p.recompute = rec;
        workload w;
        CHECK_INT_EQ(build(&p, 2, &w), 0);
        const stage_workload *st = &w.stages[0];
        const comm_op *ag_f = find_comm(st, COMM_TP_ALLGATHER, PHASE_FORWARD, NULL);
        const comm_op *rs_f = find_comm(st, COMM_TP_REDUCE_SCATTER, PHASE_FORWARD, NULL);
        const comm_op *ag_b = find_comm(st, COMM_TP_ALLGATHER, PHASE_BACKWARD, NULL);
        const comm_op *rs_b = find_comm(st, COMM_TP_REDUCE_SCATTER, PHASE_BACKWARD, NULL);
        CHECK(ag_f && rs_f && ag_b && rs_b);
        double extra = rec == RECOMPUTE_FULL ? 2 * L : 0;
        CHECK(ag_f && ag_f->count == 2 * L && ag_f->bytes == bytes);
        CHECK(rs_f && rs_f->count == 2 * L);
        CHECK(ag_b && ag_b->count == 4 * L + extra && ag_b->bytes == bytes);
        CHECK(rs_b && rs_b->count == 2 * L + extra);
        workload_free(&w);
    }
}

/* PP sends without SP: full T h w; scatter-gather T h w / t and a TP
 * all-gather of T h w per receive; with SP T h w / t and no gather */
static void test_pp_send_modes(void)
{
    parallel_config p = serial();
    p.tp = 2;
    p.pp = 2;
    p.global_batch = 4;
    double act = 64.0 * 64 * 2;
    workload w;
    CHECK_INT_EQ(build(&p, 4, &w), 0);
    const comm_op *send = find_comm(&w.stages[0], COMM_PP_SEND, PHASE_FORWARD, NULL);
    CHECK(send && send->bytes == act && send->count == 1);
    CHECK(!find_comm(&w.stages[1], COMM_TP_ALLGATHER, PHASE_FORWARD, "pp_activation_gather"));
    workload_free(&w);

    p.fw.pp_send_mode = PP_SEND_SCATTER_GATHER;
    CHECK_INT_EQ(build(&p, 4, &w), 0);
    send = find_comm(&w.stages[0], COMM_PP_SEND, PHASE_FORWARD, NULL);
    CHECK(send && send->bytes == act / 2);
    const comm_op *back = find_comm(&w.stages[1], COMM_PP_SEND, PHASE_BACKWARD, NULL);
    CHECK(back && back->bytes == act / 2 && back->count == 1);
    /* stage 1 gathers what it receives forward, stage 0 what it receives backward */
    const comm_op *g1 =
        find_comm(&w.stages[1], COMM_TP_ALLGATHER, PHASE_FORWARD, "pp_activation_gather");
    const comm_op *g0 =
        find_comm(&w.stages[0], COMM_TP_ALLGATHER, PHASE_BACKWARD, "pp_gradient_gather");
    CHECK(g1 && g1->bytes == act && g1->count == 1 && g1->group == 2);
    CHECK(g0 && g0->bytes == act && g0->count == 1);
    CHECK(!find_comm(&w.stages[0], COMM_TP_ALLGATHER, PHASE_FORWARD, "pp_activation_gather"));
    CHECK(!find_comm(&w.stages[1], COMM_TP_ALLGATHER, PHASE_BACKWARD, "pp_gradient_gather"));
    workload_free(&w);

    p.sequence_parallel = 1;
    for (int mode = 0; mode < PP_SEND_MODE_COUNT; mode++) {
        p.fw.pp_send_mode = mode;
        CHECK_INT_EQ(build(&p, 4, &w), 0);
        send = find_comm(&w.stages[0], COMM_PP_SEND, PHASE_FORWARD, NULL);
        CHECK(send && send->bytes == act / 2);
        CHECK(!find_comm(&w.stages[1], COMM_TP_ALLGATHER, PHASE_FORWARD,
                         "pp_activation_gather"));
        workload_free(&w);
    }
}

/* DP gradients: 4 bytes per parameter (fp32), 2 with bf16 reduction; the
 * parameter all-gather stays at the training precision's 2 */
static void test_grad_reduce_bytes(void)
{
    parallel_config p = serial();
    p.dp = 4;
    p.global_batch = 8;
    for (int zero = 0; zero <= 1; zero++) {
        p.zero_stage = zero;
        int kind = zero ? COMM_DP_REDUCE_SCATTER : COMM_DP_ALLREDUCE;
        double bytes[2];
        for (int r = 0; r < 2; r++) {
            p.fw.grad_reduce_precision = r ? PREC_BF16 : PREC_FP32;
            workload w;
            CHECK_INT_EQ(build(&p, 4, &w), 0);
            const stage_workload *st = &w.stages[0];
            const comm_op *g = find_comm(st, kind, PHASE_STEP, NULL);
            CHECK(g != NULL);
            bytes[r] = g ? g->bytes : 0;
            CHECK_REL(bytes[r], st->params * (r ? 2 : 4), 1e-15);
            const comm_op *ag = find_comm(st, COMM_DP_ALLGATHER, PHASE_STEP, NULL);
            CHECK(zero ? ag && ag->bytes == st->params * 2 : !ag);
            workload_free(&w);
        }
        CHECK_REL(bytes[1], bytes[0] / 2, 1e-15);
    }
}

/* components.md 4.4 (V) */
static void test_bucket_rules(void)
{
    parallel_config p = serial();
    p.dp = 8;
    CHECK_REL(workload_bucket_params(&p), 40e6, 0); /* max(40M, 8M) */
    p.dp = 64;
    CHECK_REL(workload_bucket_params(&p), 64e6, 0); /* components.md 4.4's worked example */
    p.dp = 32;
    p.cp = 2;
    CHECK_REL(workload_bucket_params(&p), 64e6, 0); /* the reduction group is dp x cp */
    CHECK_REL(workload_first_bucket_params(&p), 64e6, 0);
    p.fw.bucket_rule = BUCKET_PYTORCH_DDP; /* 25 MiB, first 1 MiB, of fp32 gradients */
    CHECK_REL(workload_bucket_params(&p), 25.0 * 1024 * 1024 / 4, 0);
    CHECK_REL(workload_first_bucket_params(&p), 1024.0 * 1024 / 4, 0);
    p.fw.grad_reduce_precision = PREC_BF16;
    CHECK_REL(workload_bucket_params(&p), 25.0 * 1024 * 1024 / 2, 0);
    p.fw.bucket_rule = BUCKET_DEEPSPEED;
    CHECK_REL(workload_bucket_params(&p), 5e8, 0);
    p.fw.bucket_rule = BUCKET_FIXED;
    p.fw.bucket_params = 12345;
    CHECK_REL(workload_bucket_params(&p), 12345, 0);
    CHECK_REL(workload_first_bucket_params(&p), 12345, 0);
}

/* framework fields a build refuses */
static void test_framework_refused(void)
{
    model_arch m = tiny();
    parallel_config p = serial();
    sim_error e;
    sim_error_clear(&e);
    p.fw.no_main_grad_buffer = 1; /* fp32 reduction without the fp32 buffer */
    CHECK_INT_EQ(workload_check(&m, &p, 1, &e), SIM_ERR_INPUT);
    CHECK(strstr(e.msg, "grad-reduce fp32 needs the fp32 main-gradient buffer") != NULL);
    p.fw.grad_reduce_precision = PREC_BF16;
    CHECK_INT_EQ(workload_check(&m, &p, 1, NULL), 0);
    p.fw.grad_reduce_precision = PREC_FP8;
    CHECK_INT_EQ(workload_check(&m, &p, 1, NULL), SIM_ERR_INPUT);
    p.fw.grad_reduce_precision = PREC_BF16;
    p.fw.bucket_rule = BUCKET_FIXED; /* without a size */
    CHECK_INT_EQ(workload_check(&m, &p, 1, NULL), SIM_ERR_INPUT);
    p.fw.bucket_rule = BUCKET_RULE_COUNT;
    CHECK_INT_EQ(workload_check(&m, &p, 1, NULL), SIM_ERR_INPUT);
    p.fw.bucket_rule = 0;
    p.fw.launch_overhead_s = -1e-6;
    CHECK_INT_EQ(workload_check(&m, &p, 1, NULL), SIM_ERR_INPUT);
}

int main(void)
{
    test_fp8_recipes();
    test_sp_backward_allgather();
    test_pp_send_modes();
    test_grad_reduce_bytes();
    test_bucket_rules();
    test_framework_refused();
    return check_report();
}
