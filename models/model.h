/* model.h - a transformer's architecture, its parameter count and its
 * training FLOPs.
 *
 * Parameters (dense decoder, d = head dim, g = KV heads, f = FFN hidden):
 *   attention  h*(a+2g)*d + a*d*h              (QKV and output projections)
 *   MLP        h*f*(3 if SwiGLU else 2)        (gate+up+down, or fc1+fc2)
 *   norms      2h per layer, h final           (RMSNorm/LayerNorm weights)
 *   embedding  V*h, and V*h again for an untied output layer
 *   MoE        experts * MLP + h*experts router, per MoE layer
 * Biases are not counted (Llama-style models have none).
 *
 * Model FLOPs per iteration, exactly as Megatron-Core counts them
 * (NVIDIA/Megatron-LM training.py num_floating_point_operations, commit
 * f2e5db40; shared/reference/calibration.md):
 *   12 B s L h^2 [ (1 + g/a + s/h) (a d / h) + (f/h) k (3/2 if SwiGLU)
 *                  + V / (2 L h) ]
 * for B sequences of s tokens, k = experts per token (1 when dense). It
 * counts full (non-causal) attention scores and no recomputation.
 */
#ifndef DCSIM_MODELS_MODEL_H
#define DCSIM_MODELS_MODEL_H

#include <stddef.h>

#include "error.h"

enum activation { ACT_GELU = 0, ACT_SWIGLU = 1 };

typedef struct model_arch {
    char name[64];
    unsigned layers;         /* L */
    unsigned hidden;         /* h */
    unsigned heads;          /* a */
    unsigned kv_heads;       /* g (query groups); = heads for MHA */
    unsigned head_dim;       /* d; usually h / a */
    unsigned ffn_hidden;     /* f: dense FFN width (and the first dense layers' of an MoE) */
    unsigned vocab;          /* V */
    unsigned seq_len;        /* s: training sequence length */
    int activation;          /* enum activation */
    int tied_embeddings;     /* output layer shares the input embedding */
    int no_dropout;          /* trained without dropout (no masks to store) */
    unsigned experts;        /* routed experts per MoE layer; 0 = dense model */
    unsigned top_k;          /* experts per token (1 for dense) */
    unsigned moe_ffn_hidden; /* width of one expert's FFN */
    unsigned shared_experts; /* always-active experts per MoE layer */
    unsigned dense_layers;   /* leading layers with a dense FFN in an MoE model */
} model_arch;

/* 0, or SIM_ERR_INPUT with a one-line reason in err (zero sizes, heads %
 * kv_heads, ...); err may be NULL */
int model_arch_check(const model_arch *m, sim_error *err);

/* parameter counts */
double model_params_attention_layer(const model_arch *m);
double model_params_mlp_dense(const model_arch *m);   /* one dense FFN */
double model_params_mlp_expert(const model_arch *m);  /* one expert's FFN */
double model_params_layer(const model_arch *m, unsigned layer); /* all experts included */
double model_params_embedding(const model_arch *m);   /* input embedding (V h) */
double model_params_output(const model_arch *m);      /* 0 when tied */
double model_params_total(const model_arch *m);
/* parameters one token touches (top-k experts): the N of 6ND for an MoE */
double model_params_active(const model_arch *m);

/* Megatron-Core model FLOPs for one iteration of `sequences` sequences */
double model_megatron_flops(const model_arch *m, double sequences);

#endif
