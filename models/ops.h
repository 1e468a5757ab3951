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
    OP_ATTENTION = 1, /* fused (flash) attention: flops and HBM bytes given */
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
} op;

#endif
