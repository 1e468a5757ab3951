/* ops.h - the operations one GPU runs in a training step, as the workload
 * model (workload.h) lists them and the timing kernels (compute.h) time them.
 *
 * One record stands for `count` identical instances (e.g. the QKV GEMM of
 * every layer on a pipeline stage). FLOPs and bytes are per instance.
 */
#ifndef DCSIM_MODELS_OPS_H
#define DCSIM_MODELS_OPS_H

enum op_kind {
    OP_GEMM = 0,      /* (m x k) . (k x n): flops = 2 m n k */
    OP_ATTENTION = 1, /* fused attention: flops and HBM bytes given; with seq_q > 0 timed
                         from the measured kernel tables (models/attention.h) */
    OP_MEMORY = 2,    /* memory-bound (norms, activations, optimizer): bytes given */
    OP_KIND_COUNT
};

typedef struct op {
    int kind;          /* enum op_kind */
    int precision;     /* enum precision of the math (selects the device peak) */
    double m, n, k;    /* GEMM shape; 0 for other kinds */
    double flops;      /* per instance */
    double bytes;      /* HBM bytes read + written per instance */
    double count;      /* identical instances */
    const char *name;  /* static string, e.g. "fc1"; for reports */
    /* OP_ATTENTION shape (0 = none: the device's attention_efficiency is used).
     * flops stays Megatron's full-score count 4 b s_q s_kv a d (x2 backward);
     * the kernel tables credit half of it when causal (components.md 2.1). */
    double attn_batch_heads;   /* b x a/t: (sequence, head) pairs on this GPU */
    double seq_q, seq_kv;      /* query and key/value lengths (s/cp and s with CP) */
    double head_dim;
    int causal;
    int attn_kernel;           /* enum attention_kernel (workload.h) */
    double gemm_batch;         /* OP_GEMM: instances run as batched kernels of this many
                                  (tiles of all quantised together); 0 or 1: alone */
    int is_eager;              /* OP_MEMORY: a framework-eager (unfused) kernel */
    int is_attention_core;     /* part of core attention: selective recompute reruns it */
} op;

#endif
