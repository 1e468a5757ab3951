/* memory.h - how many bytes each GPU needs, for training and for serving.
 *
 * Training, per GPU of a pipeline stage (P = its parameters, dp = the
 * data-parallel group):
 *   weights 2 P, gradients 4 P in Megatron's fp32 main-gradient buffer
 *   (2 P with fw.no_main_grad_buffer), optimizer 12 P (fp32 master, Adam m
 *   and v): 18 bytes per parameter, 16 for ZeRO's mixed-precision Adam
 *   (Rajbhandari et al., ZeRO, 2020); ZeRO stage 1 divides the optimizer by
 *   dp, stage 2 also the gradients, stage 3 also the weights. fp32
 *   training: weights and gradients 4 bytes each. FP8 training keeps BF16
 *   weights (the FP8 copies are transient).
 *   activations per layer and micro-batch, 16-bit, flash attention (no
 *   s^2 terms), after Korthikanti et al. 2022 ("Reducing Activation
 *   Recomputation in Large Transformer Models", Table 2), generalised to
 *   GQA and gated FFNs: with T tokens on the GPU,
 *     replicated across TP unless sequence parallel:
 *       4 T h (two norm inputs) + 2 T h (QKV input) + 2 T h (FFN input)
 *       + 2 T h (two 1-byte dropout masks, absent without dropout) = 10 T h
 *     split across TP: 2 T (a+2g) d (Q, K, V) + 2 T a d (attention output)
 *       + 2 T f' (FFN first output, f' = 2f for SwiGLU) + 2 T f (activation)
 *     (a GPT with a = g, ad = h, f = 4h gives 10 + 24/t, the paper's value);
 *     MoE layers scale the FFN terms by top-k; full recompute keeps only the
 *     layer input 2 T h (/t with sequence parallelism) plus one layer's full
 *     activations while recomputing; selective recompute with flash
 *     attention stores the same as none.
 *   micro-batches in flight on stage i: 1F1B min(pp - i, m); interleaved
 *     (Megatron's warm-up count, schedules.py, plus the steady state's one
 *     forward) 2(pp - i - 1) + (vpp - 1) pp + 1 chunks of layers/(pp vpp)
 *     layers, at most m vpp (all warm-up); GPipe all m.
 *   the last stage adds fp32 logits for the loss, 4 T V / t; pipeline send
 *   and receive buffers add 2 x the boundary activation.
 *   reserved: memory the job cannot use (CUDA context, allocator, NCCL),
 *   a scenario input (default 0: no published figure).
 *
 * Serving (inference sizing): weights N x bytes(weight precision); KV cache
 * 2 x layers x kv-heads x head-dim x bytes(KV precision) per token.
 */
#ifndef DCSIM_MODELS_MEMORY_H
#define DCSIM_MODELS_MEMORY_H

#include "model.h"
#include "workload.h"

typedef struct stage_memory {
    double weights_bytes;
    double gradients_bytes;
    double optimizer_bytes;
    double activations_bytes;
    double buffers_bytes;
    double reserved_bytes;
    double total_bytes;
    double inflight_microbatches;  /* micro-batches (in layer units of the whole stage) */
    double activation_per_layer_bytes;
} stage_memory;

/* Memory of one GPU of stage i of a built workload. */
void memory_training_stage(const workload *w, unsigned stage, double reserved_bytes,
                           stage_memory *out);

/* Activation bytes of one layer and one micro-batch on one GPU. */
double memory_activation_per_layer(const model_arch *m, const parallel_config *p, int moe);

typedef struct inference_config {
    double params;             /* parameter count; 0 = from the architecture */
    int weight_precision;      /* enum precision */
    int kv_precision;          /* enum precision */
    unsigned batch;            /* concurrent sequences */
    double context_tokens[3];  /* P50, P90, P99 context lengths (prompt + output) */
    double gpu_bytes;          /* one GPU's memory */
    double reserved_bytes;     /* per GPU, not usable */
    unsigned max_tp;           /* largest replica to consider (e.g. the NVLink domain, 8) */
} inference_config;

typedef struct inference_sizing {
    double weights_bytes;
    double kv_bytes_per_token;
    double kv_bytes[3];        /* batch x context at P50/P90/P99 */
    unsigned gpus_per_replica[3];  /* smallest power of two that holds weights + KV at that
                                    * percentile; 0 = not even max_tp GPUs */
    double sequences_per_replica[3]; /* concurrent sequences of that context that fit in the
                                      * replica sized for P99 (or max_tp) */
    unsigned replica_gpus;     /* the replica size the sequence counts use */
} inference_sizing;

void memory_inference(const model_arch *m, const inference_config *c, inference_sizing *out);

#endif
