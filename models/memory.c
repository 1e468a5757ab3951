/* memory.c - training and serving memory (formulas in memory.h). */
#include "memory.h"

#include <math.h>
#include <string.h>

#include "precision.h"

/* Megatron-Core accumulates gradients in an fp32 main_grad buffer (4 bytes
 * per parameter) in place of 16-bit gradients: "bf16 param, fp32 grads: 18
 * bytes per parameter" without the distributed optimizer, 6 + 12/d with it
 * (Megatron-LM docs/source/distrib_optimizer.md, read from memory, not in
 * the reference sheets: U). */
#define MAIN_GRAD_BYTES 4.0

double memory_activation_per_layer(const model_arch *m, const parallel_config *p, int moe)
{
    double t = p->tp, h = m->hidden, d = m->head_dim;
    double T = (double)p->micro_batch * m->seq_len / p->cp;
    double glu = m->activation == ACT_SWIGLU ? 2 : 1;
    double f = moe ? m->moe_ffn_hidden : m->ffn_hidden;
    double k = moe ? m->top_k + m->shared_experts : 1;
    /* norm inputs 4, QKV input 2, FFN input 2, dropout masks 2 (T h bytes) */
    double replicated = (m->no_dropout ? 8 : 10) * T * h;
    double split = 2 * T * (m->heads + 2.0 * m->kv_heads) * d + 2 * T * m->heads * d +
                   k * (2 * T * glu * f + 2 * T * f);
    /* materialised attention keeps its score matrices, Korthikanti et al.
     * Table 2: softmax output 2 a s^2 b, dropout mask a s^2 b, dropout output
     * 2 a s^2 b (5 a s^2 b; 2 without dropout), split across TP, s_q x s_kv
     * with CP; selective recompute reruns the core and keeps none of them */
    if (p->fw.attention_kernel == ATTN_MATERIALISED && p->recompute == RECOMPUTE_NONE) {
        double scores = (double)p->micro_batch * m->heads * ((double)m->seq_len / p->cp) *
                        m->seq_len;
        split += (m->no_dropout ? 2 : 5) * scores;
    }
    double full_layer = (p->sequence_parallel ? replicated / t : replicated) + split / t;
    if (p->recompute == RECOMPUTE_FULL) {
        double input = 2 * T * h;
        return p->sequence_parallel ? input / t : input;
    }
    return full_layer;
}

static double inflight_chunks(const parallel_config *p, unsigned stage, unsigned microbatches)
{
    double m = microbatches;
    switch (p->schedule) {
    case SCHEDULE_GPIPE:
        return m;
    case SCHEDULE_INTERLEAVED: {
        double chunks = 2.0 * (p->pp - stage - 1) + (p->vpp - 1.0) * p->pp + 1;
        return fmin(chunks, m * p->vpp) / p->vpp; /* in whole-stage micro-batch units */
    }
    default:
        return fmin((double)(p->pp - stage), m);
    }
}

void memory_training_stage(const workload *w, unsigned stage, double reserved_bytes,
                           stage_memory *out)
{
    memset(out, 0, sizeof *out);
    const model_arch *m = &w->model;
    const parallel_config *p = &w->par;
    const stage_workload *st = &w->stages[stage];
    double P = st->params;
    int fp32 = p->precision == PREC_FP32 || p->precision == PREC_TF32;
    /* 16-bit and FP8 training keep BF16 weights (TE's FP8 copies are
     * transient); gradients go to the fp32 main-gradient buffer unless the
     * framework has none */
    double wb = fp32 ? 4 : 2, ob = 12;
    double gb = fp32 || !p->fw.no_main_grad_buffer ? MAIN_GRAD_BYTES : 2;
    double dp = p->dp;
    out->weights_bytes = wb * P / (p->zero_stage >= 3 ? dp : 1);
    out->gradients_bytes = gb * P / (p->zero_stage >= 2 ? dp : 1);
    out->optimizer_bytes = ob * P / (p->zero_stage >= 1 ? dp : 1);

    double dense_layers = st->layers - st->moe_layers;
    double per_mb = dense_layers * memory_activation_per_layer(m, p, 0) +
                    st->moe_layers * memory_activation_per_layer(m, p, 1);
    out->inflight_microbatches = inflight_chunks(p, stage, w->microbatches);
    out->activations_bytes = per_mb * out->inflight_microbatches;
    if (p->recompute == RECOMPUTE_FULL && st->layers) {
        /* one layer is recomputed in full at a time during the backward */
        parallel_config none = *p;
        none.recompute = RECOMPUTE_NONE;
        out->activations_bytes += memory_activation_per_layer(m, &none, st->moe_layers > 0);
    }
    out->activation_per_layer_bytes = st->layers ? per_mb / st->layers : 0;
    double T = (double)p->micro_batch * m->seq_len / p->cp;
    if (st->has_output)
        out->activations_bytes += 4 * T * m->vocab / p->tp;
    if (p->pp > 1) {
        double boundary = T * m->hidden * 2 / (p->sequence_parallel ? p->tp : 1);
        out->buffers_bytes = 2 * boundary;
    }
    out->reserved_bytes = reserved_bytes;
    out->total_bytes = out->weights_bytes + out->gradients_bytes + out->optimizer_bytes +
                       out->activations_bytes + out->buffers_bytes + out->reserved_bytes;
}

void memory_inference(const model_arch *m, const inference_config *c, inference_sizing *out)
{
    memset(out, 0, sizeof *out);
    double params = c->params > 0 ? c->params : model_params_total(m);
    out->weights_bytes = params * precision_bytes(c->weight_precision);
    out->kv_bytes_per_token =
        2.0 * m->layers * m->kv_heads * m->head_dim * precision_bytes(c->kv_precision);
    unsigned max_tp = c->max_tp ? c->max_tp : 8;
    double usable = c->gpu_bytes - c->reserved_bytes;
    for (int q = 0; q < 3; q++) {
        out->kv_bytes[q] = out->kv_bytes_per_token * c->batch * c->context_tokens[q];
        double need = out->weights_bytes + out->kv_bytes[q];
        out->gpus_per_replica[q] = 0;
        for (unsigned g = 1; g <= max_tp; g *= 2)
            if (usable > 0 && need <= g * usable) {
                out->gpus_per_replica[q] = g;
                break;
            }
    }
    unsigned replica = out->gpus_per_replica[2] ? out->gpus_per_replica[2] : max_tp;
    out->replica_gpus = replica;
    double free_bytes = replica * usable - out->weights_bytes;
    for (int q = 0; q < 3; q++) {
        double per_seq = out->kv_bytes_per_token * c->context_tokens[q];
        out->sequences_per_replica[q] =
            free_bytes > 0 && per_seq > 0 ? floor(free_bytes / per_seq) : 0;
    }
}
