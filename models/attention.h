/* attention.h - attention kernels as measured: the achieved TFLOP/s of
 * FlashAttention-2/3, cuDNN and the materialised ("standard") baseline by
 * GPU family, direction, causal mask, head dim and sequence length
 * (shared/reference/components.md 2.2-2.5), and the operations of
 * materialised attention.
 *
 * FLOP convention of every table (components.md 2.1, V): forward
 * 4 b s^2 a d, halved when causal; backward 2.5 x forward. A fused attention
 * op of the workload (Megatron's full-score FLOPs) therefore takes
 *   forward  fa / R_fwd,   backward 2.5 fa / R_bwd,   fa = 4 b s_q s_kv a d (x 0.5 causal)
 * where R is the table's rate, interpolated linearly in log2(seq) and
 * log2(head dim) between measured points and clamped at the ends (the
 * tables cover 512-16k and d 64-256; outside, the nearest point).
 * Missing entries, each a documented rule (docs/step.md "Kernels"):
 *   - a direction without its own table uses the forward+backward table
 *     at the same rate for both (A100, components.md 2.2 has only fwd+bwd);
 *   - a causal backward without a table (H100 2.5 is non-causal only) is
 *     the non-causal backward scaled by the forward's causal/non-causal
 *     ratio at the same kernel, head dim and length;
 *   - a kernel with no table on the GPU family (FlashAttention-3 or cuDNN
 *     on A100; any kernel on a GPU without a family) is refused, never
 *     ideal.
 * The tables are FP16/BF16; an FP8 attention op uses them too (a bound:
 * Transformer Engine keeps attention in BF16, components.md 2.5 FP8 rows
 * cover one head dim only).
 */
#ifndef DCSIM_MODELS_ATTENTION_H
#define DCSIM_MODELS_ATTENTION_H

#include <stddef.h>

#include "error.h"
#include "ops.h"

enum attn_dir { ATTN_DIR_FWD = 0, ATTN_DIR_BWD, ATTN_DIR_FWDBWD, ATTN_DIR_COUNT };

#define ATTN_N_SEQ 6 /* 512, 1k, 2k, 4k, 8k, 16k */

/* One measured panel: TFLOP/s at seq 512 ... 16k (0 = not measured). */
typedef struct attn_table_row {
    int family;       /* enum kern_family (kernel_table.h) */
    int kernel;       /* enum attention_kernel (workload.h) */
    int dir;          /* enum attn_dir */
    int causal;
    int head_dim;
    double tflops[ATTN_N_SEQ];
    const char *source; /* components.md section and figure, confidence mark */
} attn_table_row;

/* The measured rows (for tests and reports); *n receives their number. */
const attn_table_row *attn_table(size_t *n);

/* The sequence lengths of the table columns. */
extern const double attn_table_seq[ATTN_N_SEQ];

/* Rate in FLOP/s (table convention) of kernel on family for one direction
 * (ATTN_DIR_FWD or ATTN_DIR_BWD), by the rules above. Returns -1 when the
 * family has no table for the kernel (refused). */
double attn_rate_flops_per_s(int family, int kernel, int dir, int causal, double head_dim,
                             double seq);

/* 0 when kernel can be timed on family, else SIM_ERR_INPUT with a one-line
 * reason naming the GPU (gpu_name), the kernel and what is available. */
int attn_kernel_check(int family, int kernel, const char *gpu_name, sim_error *err);

const char *attn_kernel_name(int kernel);

/* Time of one fused attention op (OP_ATTENTION with seq_q > 0) on family, in
 * seconds of GPU time: forward when o->flops is the forward count
 * 4 b s_q s_kv a d, backward when it is twice that (workload.c's backward
 * of an op doubles its FLOPs). Returns -1 when refused. */
double attn_op_time_s(int family, const op *o);

/* GH100's measured occupancy curve (attention.c): the rate of a kernel
 * (cuDNN's curve for ATTN_CUDNN and ATTN_FLASH3, flash's for ATTN_FLASH2)
 * in direction dir (ATTN_DIR_FWD or ATTN_DIR_BWD) at u (batch x heads x
 * 128-query tiles per SM) over its rate at u >= 15.52: in (0, 1], 0 for
 * u <= 0. attn_op_time_s divides by it at the tables' own u. */
double attn_occupancy(int kernel, int dir, double u);

/* Materialised attention (Megatron's unfused path: baddbmm for Q K^T, fused
 * scale-mask-softmax, dropout, bmm with V), for bh = b a/t (sequence, head)
 * pairs of query length sq, key length skv, head dim d, element size w:
 *   scores  GEMM sq x skv . d, count x bh of them batched bh at a time
 *   softmax memory 2 E w  (read scores, write probabilities; fused kernel)
 *   dropout memory E (2 w + 1)  (read, write, 1-byte mask; eager), unless no_dropout
 *   context GEMM sq x d . skv, count x bh, batched
 * with E = bh sq skv score elements. Writes at most 4 ops to out (each with
 * is_attention_core set, the given precision and count) and returns how many. */
size_t attn_materialised_ops(double bh, double sq, double skv, double d, int precision,
                             int no_dropout, double count, op out[4]);

#endif
