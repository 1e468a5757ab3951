/* workload.h - what each GPU does in one training iteration: from a model
 * and its parallelism, the operations of one forward and one backward
 * micro-batch on every pipeline stage, the optimizer step, and the
 * communication each needs.
 *
 * Per layer and micro-batch, on one GPU (T = b s / cp tokens, t = TP,
 * w = bytes per element, d = head dim, g = KV heads, f = FFN width):
 *   qkv        GEMM  T x h . h x (a+2g)d/t
 *   attention  flash attention: 4 b (s/cp) s (a/t) d FLOPs (full scores, as
 *              Megatron-Core counts them)
 *   proj       GEMM  T x (a d/t) . (a d/t) x h
 *   fc1        GEMM  T x h . h x f(2 if SwiGLU)/t      (MoE: per local expert,
 *   fc2        GEMM  T x f/t . f/t x h                  T k ep / E tokens)
 *   norms, activation, residual adds: memory-bound, by bytes
 * Backward: for every GEMM (m,n,k) a data-gradient GEMM (m,k,n) and a
 * weight-gradient GEMM (k,n,m); attention 2x its forward FLOPs. Full
 * recompute adds the layer's forward again to the backward; selective
 * recompute adds the attention core. Model FLOPs exclude recompute
 * (Megatron-Core); hardware FLOPs include it.
 * Communication per micro-batch, in c bytes per element (the training
 * precision's; BF16 under the Transformer Engine FP8 recipe): TP 2
 * all-reduces per layer forward and 2 backward of T h c bytes (with sequence
 * parallelism, an all-gather and a reduce-scatter in place of each, and the
 * backward repeats the 2 input all-gathers the column-parallel GEMMs' weight
 * gradients need, the gathered input not being kept); PP one activation
 * send forward and one gradient send backward per stage boundary and virtual
 * chunk (T h c / t with sequence parallelism; without it T h c, or with
 * pp-send scatter-gather T h c / t and a TP all-gather after the receive);
 * CP (cp-1) ring exchanges of the K,V chunk per layer forward (twice
 * backward); EP an all-to-all dispatch and combine of T k h c bytes per MoE
 * layer, twice backward. Per iteration: DP gradient all-reduce (r bytes per
 * parameter: 4 with fp32 reduction, Megatron's default, 2 with bf16), or
 * with a sharded optimizer (ZeRO >= 1, Megatron's distributed optimizer) a
 * gradient reduce-scatter (r) and a parameter all-gather (c bytes).
 * FP8 (fw.fp8_recipe): the Transformer Engine recipe runs the transformer
 * layers' GEMMs (forward, dgrad, wgrad) in FP8, reading FP8 operands and
 * writing BF16; attention, norms, activations, the output layer, the
 * optimizer and all communication stay BF16. "all" puts every op, byte and
 * message in FP8: a bound, not a recipe.
 * Layers are split evenly over PP x VPP, or first/last stage counts are
 * given and the rest split evenly (as Megatron's
 * --decoder-first/last-pipeline-num-layers). With VPP a stage's layers go
 * evenly over its chunks; a remainder (uneven end stages) makes the first
 * chunk of stage 0 and the last chunk of the last stage the lighter ones
 * (workload_chunk_layer_count; docs/step.md).
 */
#ifndef DCSIM_MODELS_WORKLOAD_H
#define DCSIM_MODELS_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "model.h"
#include "ops.h"

enum recompute { RECOMPUTE_NONE = 0, RECOMPUTE_SELECTIVE = 1, RECOMPUTE_FULL = 2 };
enum pp_schedule { SCHEDULE_1F1B = 0, SCHEDULE_INTERLEAVED = 1, SCHEDULE_GPIPE = 2 };

/* Framework behaviour: what the training framework does that changes the
 * time or memory of the same model and parallelism (the <job><framework>
 * element, docs/step.md). Every zero value is the documented default, which
 * is Megatron-Core's where one exists. */
enum attention_kernel {
    ATTN_FLASH2 = 0,      /* FlashAttention-2 (Dao 2023) */
    ATTN_FLASH3,          /* FlashAttention-3 (Hopper only) */
    ATTN_CUDNN,           /* cuDNN fused attention (Transformer Engine's default on Hopper) */
    ATTN_MATERIALISED,    /* scores written to HBM: baddbmm, mask, softmax, dropout, bmm */
    ATTN_KERNEL_COUNT
};
enum fp8_recipe {
    FP8_RECIPE_TE = 0,    /* Transformer Engine: GEMMs in FP8; attention, norms, activations
                             and communication in BF16 */
    FP8_RECIPE_ALL,       /* every op, byte and message in FP8 (a bound, not a real recipe) */
    FP8_RECIPE_COUNT
};
enum bucket_rule {
    BUCKET_MEGATRON = 0,  /* max(40M, 1M x dp) parameters (components.md 4.4) */
    BUCKET_PYTORCH_DDP,   /* 25 MB, first bucket 1 MiB */
    BUCKET_DEEPSPEED,     /* 5e8 elements */
    BUCKET_FIXED,         /* framework_config.bucket_params */
    BUCKET_RULE_COUNT
};
enum tp_overlap_mode {
    TP_OVERLAP_FRACTION = 0, /* a fixed fraction of TP communication hides (step_options) */
    TP_OVERLAP_NONE,         /* everything exposed */
    TP_OVERLAP_PIPELINED,    /* Megatron --tp-comm-overlap: chunked GEMM + communication */
    TP_OVERLAP_MODE_COUNT
};
enum pp_send_mode {
    PP_SEND_FULL = 0,        /* each TP rank sends the whole boundary activation */
    PP_SEND_SCATTER_GATHER,  /* each TP rank sends 1/tp, all-gathered after (Megatron without SP) */
    PP_SEND_MODE_COUNT
};

typedef struct framework_config {
    int attention_kernel;      /* enum attention_kernel */
    int fp8_recipe;            /* enum fp8_recipe, when the training precision is fp8 */
    int grad_reduce_precision; /* enum precision of the DP gradient reduction; 0 (fp32) default */
    int bucket_rule;           /* enum bucket_rule */
    double bucket_params;      /* BUCKET_FIXED: parameters per bucket */
    int tp_overlap_mode;       /* enum tp_overlap_mode */
    int pp_send_mode;          /* enum pp_send_mode */
    int cuda_graphs;           /* 1: kernels launched from CUDA graphs (no CPU launch cost) */
    double launch_overhead_s;  /* CPU cost per kernel launch; 0 = the device's */
    int no_main_grad_buffer;   /* 0: Megatron's fp32 main-gradient buffer, 4 B/param (default);
                                  1: gradients kept at the training precision */
} framework_config;

typedef struct parallel_config {
    unsigned tp, pp, vpp, cp, ep, dp;
    unsigned micro_batch;        /* sequences per micro-batch */
    unsigned global_batch;       /* sequences per iteration */
    int sequence_parallel;       /* Megatron sequence parallelism with TP */
    int recompute;               /* enum recompute */
    int zero_stage;              /* 0 none; 1 optimizer sharded (distributed optimizer); 2 +grads; 3 +weights */
    int schedule;                /* enum pp_schedule */
    unsigned first_stage_layers; /* 0: even split */
    unsigned last_stage_layers;  /* 0: even split */
    int precision;               /* enum precision of the math */
    unsigned char order[4];      /* placement, innermost first: a permutation of enum
                                    parallel_dim; all 0 = Megatron's tp-cp-dp-pp */
    framework_config fw;         /* framework behaviour; all 0 = the defaults above */
    /* A job shrunk to fewer data-parallel replicas on the GPUs of a larger
     * one (docs/failures.md "Shrinking"): data rank d runs on the GPUs of
     * replica dp_replica[d] of a placement of dp_placed replicas
     * (step_gpu). NULL: rank d on replica d of dp. Not a scenario value. */
    const unsigned *dp_replica;
    unsigned dp_placed;
    /* A job re-sharded onto the GPUs left (docs/failures.md "Shrinking",
     * reshard): step_gpu's id k runs on GPU gpu_map[k]. NULL: on GPU k.
     * Not a scenario value. */
    const uint32_t *gpu_map;
} parallel_config;

enum parallel_dim { DIM_TP = 0, DIM_CP, DIM_DP, DIM_PP };

enum comm_kind {
    COMM_TP_ALLREDUCE = 0,
    COMM_TP_ALLGATHER,
    COMM_TP_REDUCE_SCATTER,
    COMM_PP_SEND,
    COMM_CP_SENDRECV,
    COMM_EP_ALLTOALL,
    COMM_DP_ALLREDUCE,
    COMM_DP_REDUCE_SCATTER,
    COMM_DP_ALLGATHER,
    COMM_KIND_COUNT
};

enum phase { PHASE_FORWARD = 0, PHASE_BACKWARD = 1, PHASE_STEP = 2 };

typedef struct comm_op {
    int kind;          /* enum comm_kind */
    int phase;         /* enum phase */
    double bytes;      /* per instance; for collectives the whole buffer S (nccl-tests) */
    unsigned group;    /* ranks taking part */
    double count;      /* instances per micro-batch (per iteration for PHASE_STEP) */
    const char *name;
} comm_op;

typedef struct stage_workload {
    unsigned index;
    unsigned layers;          /* transformer layers on the stage (all its chunks) */
    unsigned moe_layers;      /* of which MoE */
    int has_embedding, has_output;
    op *forward;   size_t n_forward;   /* one micro-batch */
    op *backward;  size_t n_backward;  /* one micro-batch, recompute included */
    op *step;      size_t n_step;      /* once per iteration */
    comm_op *comm; size_t n_comm;
    double params;            /* parameters held by one GPU of this stage (before ZeRO) */
    double expert_params;     /* of which expert parameters */
    double model_flops_microbatch;    /* forward + backward, one GPU, no recompute */
    double hardware_flops_microbatch; /* with recompute */
} stage_workload;

typedef struct workload {
    model_arch model;
    parallel_config par;
    unsigned n_stages;
    stage_workload *stages;
    unsigned microbatches;        /* per iteration per pipeline */
    double tokens_per_iteration;  /* global batch x seq len */
    double model_flops_iteration; /* all GPUs */
    double hardware_flops_iteration;
} workload;

/* Check that the parallelism fits the model and the GPU count. Returns 0, or
 * SIM_ERR_INPUT with a one-line reason in err that shows the arithmetic, e.g.
 * "global-batch 2048 is not a multiple of micro-batch x dp = 1 x 96 = 96".
 * err may be NULL. */
int workload_check(const model_arch *m, const parallel_config *p, unsigned long long gpus,
                   sim_error *err);

/* Build the operation lists. Returns 0, or the error's code with err filled
 * (SIM_ERR_INPUT as workload_check; SIM_ERR_NOMEM when out of memory). Free
 * with workload_free. */
int workload_build(const model_arch *m, const parallel_config *p, unsigned long long gpus,
                   workload *out, sim_error *err);
void workload_free(workload *w);

/* layers on stage i, and how many of them are MoE layers */
void workload_stage_layers(const model_arch *m, const parallel_config *p, unsigned stage,
                           unsigned *first_layer, unsigned *layers);

/* Bytes per element of activations and messages (TP, PP, CP, EP, the DP
 * parameter all-gather): the training precision's, BF16 under the TE FP8
 * recipe. */
double workload_comm_bytes(const parallel_config *p);
/* Bytes per parameter of the DP gradient reduction (fw.grad_reduce_precision). */
double workload_grad_reduce_bytes(const parallel_config *p);
/* Parameters per DP gradient bucket under fw.bucket_rule (sources in
 * workload.c): Megatron max(40e6, 1e6 x dp x cp); PyTorch DDP 25 MiB of
 * gradients; DeepSpeed 5e8 elements; or fw.bucket_params. The first bucket
 * (PyTorch DDP: 1 MiB) may be smaller: workload_first_bucket_params. */
double workload_bucket_params(const parallel_config *p);
double workload_first_bucket_params(const parallel_config *p);
/* Transformer layers of virtual chunk `chunk` of `stage` (model position
 * chunk x pp + stage): the stage's layers split evenly over its vpp chunks,
 * the remainder r = layers mod vpp on the last r chunks of stage 0 (its
 * first chunk, which holds the embedding, is lighter) and on the first r
 * chunks of every other stage (the last stage's last chunk, which holds the
 * loss, is lighter). Llama 3 405B (126 layers, pp 16, vpp 8, first and last
 * stage 7): chunk 0 of stage 0 and chunk 7 of stage 15 hold no layer.
 * Assumes workload_check passed. */
unsigned workload_chunk_layer_count(const model_arch *m, const parallel_config *p,
                                    unsigned stage, unsigned chunk);

/* Bytes per GPU per iteration of each collective kind (enum comm_kind) on
 * the stage that moves most of it: each comm op's bytes (nccl-tests' S)
 * x count x micro-batches (PHASE_STEP ops once), as step_comm.c puts them
 * on the links. COMM_PP_SEND counts the forward sends only: what crosses a
 * stage boundary each way (the gradients go back as many bytes). */
void workload_kind_bytes(const workload *w, double out[COMM_KIND_COUNT]);

/* The same, and into expert[] the part of each of out[] that the experts'
 * gradients (and their sharded parameters) move in the expert-data-parallel
 * group (the dp cp / ep ranks holding the same experts: the DP ops whose
 * group is not dp cp), on the stage that gives out[]; 0 for the other
 * kinds and without ep. */
void workload_kind_bytes_split(const workload *w, double out[COMM_KIND_COUNT],
                               double expert[COMM_KIND_COUNT]);

const char *comm_kind_name(int kind);
const char *recompute_name(int r);
const char *schedule_name(int s);

#endif
