/* compute.h - timing kernels: how long one GPU takes for an operation.
 *
 * GEMM (NVIDIA "Matrix Multiplication Background User's Guide", DU-09799-001;
 * shared/reference/hardware.md 2.2):
 *   tiles  T = ceil(m/tile_m) * ceil(n/tile_n)
 *   waves  W = ceil(T / (sms * ctas_per_sm))
 *   compute time = W * (2 * tile_m * tile_n * k) / (peak * gemm_efficiency / (sms * ctas_per_sm))
 *                  (with sms = 0: no quantisation, flops / (peak * gemm_efficiency))
 *   memory time  = bytes / (mem_bytes_per_s * mem_efficiency(bytes))
 *   time = launch_s + max(compute time, memory time)             (roofline)
 * Attention: launch_s + max(flops / (peak * attention_efficiency), bytes / (bw * mem_eff)).
 * Memory-bound: launch_s + bytes / (bw * mem_efficiency(bytes)).
 * mem_efficiency(bytes) is a step function of the transfer size, the family
 * calculon uses for HBM (hardware.md 2.2, N12: >= 100 MB 0.90, >= 10 MB
 * 0.75, >= 1 MB 0.60, else 0.30): small transfers do not reach peak
 * bandwidth. Without tiers it is the constant mem_efficiency.
 * gemm_efficiency is the large-GEMM ceiling measured on the device
 * (hardware.md 2.1), divided by the tile and wave efficiency this model gives
 * the measured shape, so the model reproduces the measurement there (H100 SXM
 * BF16: 794.5 / 989 = 0.803 at 2048x2048x13312, which is 128 tiles of 256x128
 * on 132 SMs, one wave at 0.970: gemm_efficiency 0.828). Limit: cuBLAS picks
 * its tile per shape; one fixed tile overstates quantisation for small or
 * skinny GEMMs.
 *
 * Kernel models (issue 17, docs/step.md "Kernels"; fields after launch_s,
 * all zero = the forms above): the tile the device picks per shape (best
 * tile x wave efficiency among gemm_tiles), a fixed GPU time per GEMM, a soft
 * roofline (t_c^p + t_m^p)^(1/p); memory-bound ops at mem_fixed_s + bytes /
 * (eff bw) with eff fused or eager (op.is_eager); attention ops with a shape
 * from the measured tables of attention.h; launch_overlaps: max(launch,
 * kernel) instead of the sum (the CPU enqueues ahead of an asynchronous GPU).
 *
 * Batch evaluation runs in parallel with OpenMP over operations and over
 * GPUs, writing per-index outputs and summing in a fixed order, so the
 * results are bit-identical for any thread count.
 */
#ifndef DCSIM_MODELS_COMPUTE_H
#define DCSIM_MODELS_COMPUTE_H

#include <stddef.h>

#include "error.h"
#include "ops.h"
#include "precision.h"

#define COMPUTE_MEM_TIERS 4
#define COMPUTE_MAX_TILES 16
#define COMPUTE_BESIDE_POINTS 12

typedef struct compute_device {
    double peak_flops_per_s[PREC_COUNT]; /* dense peak per math precision; 0 = unsupported */
    double gemm_efficiency;       /* (0, 1]: large-GEMM ceiling as a fraction of peak */
    double attention_efficiency;  /* (0, 1]: fused attention as a fraction of peak */
    double mem_bytes_per_s;       /* HBM (or DRAM) peak bandwidth */
    double mem_efficiency;        /* (0, 1]: achievable fraction of it, when n_mem_tiers = 0 */
    unsigned n_mem_tiers;         /* 0: mem_efficiency for every size */
    double mem_tier_min_bytes[COMPUTE_MEM_TIERS];  /* ascending, the first 0: tier i applies
                                                    * from this transfer size up */
    double mem_tier_efficiency[COMPUTE_MEM_TIERS]; /* (0, 1] each */
    unsigned sms;                 /* streaming multiprocessors; 0 disables tile/wave quantisation */
    unsigned ctas_per_sm;         /* concurrent output tiles per SM (>= 1 when sms > 0) */
    unsigned tile_m, tile_n;      /* output tile of one CTA (>= 1 when sms > 0) */
    double launch_s;              /* fixed cost per kernel */
    /* Kernel models of issue 17 (docs/step.md "Kernels"); every zero keeps
     * the plain forms above, which dcsim calibrate's CPU device uses. */
    unsigned n_gemm_tiles;        /* > 0: GEMMs use the tile of gemm_tiles with the best
                                     tile x wave efficiency (tile_m/tile_n otherwise) */
    unsigned gemm_tiles[COMPUTE_MAX_TILES][2];
    double gemm_fixed_s;          /* GPU time added to every GEMM's compute time */
    double roofline_p;            /* > 1: time = (t_c^p + t_m^p)^(1/p); else max(t_c, t_m) */
    double mem_fused_efficiency;  /* > 0: a memory-bound op takes mem_fixed_s +
                                     bytes / (eff x mem_bytes_per_s), eff fused or eager */
    double mem_eager_efficiency;  /* (0, 1] when mem_fused_efficiency > 0 */
    double mem_fixed_s;
    int attn_family;              /* enum kern_family: attention ops with a shape are timed
                                     from its measured tables; 0: attention_efficiency */
    int launch_overlaps;          /* 1: an asynchronous GPU: time = max(launch_s, kernel);
                                     0: launch_s + kernel (a synchronous call) */
    /* A GEMM beside a kernel that holds k SMs on another stream (NCCL's
     * channels), the GEMM given no SM margin: it runs beside_slowdown(k) as
     * long, measured at the points beside_k (ascending, > 0), linear in k
     * between them and from (0, 1); 0 points: rule 1, S / (S - k).
     * compute_beside_share. */
    unsigned n_beside;
    double beside_k[COMPUTE_BESIDE_POINTS];
    double beside_slowdown[COMPUTE_BESIDE_POINTS];
} compute_device;

/* Check a device: returns 0, or SIM_ERR_INPUT with a one-line reason in err
 * (err may be NULL). */
int compute_device_check(const compute_device *d, sim_error *err);

/* Time of one instance of op on d, in seconds (count is not applied). A GEMM
 * uses 2 m n k and ignores o->flops. Returns a negative value for an unknown
 * kind, a precision out of range, no peak for it (GEMM and attention; memory
 * ops need none), m/n/k not positive and finite, or flops/bytes negative or
 * not finite. */
double compute_op_time_s(const compute_device *d, const op *o);

/* The memory efficiency for a transfer of `bytes` (the tier it falls in). */
double compute_mem_efficiency(const compute_device *d, double bytes);

/* The compute time added, as a fraction of it, while another kernel holds k
 * of the device's SMs: beside_slowdown(k) - 1 from the measured points
 * (beyond the last, that point's slowdown scaled by rule 1's growth), else
 * rule 1's k / (S - k). 0 when k <= 0, the device has no SM count, or
 * k >= S. */
double compute_beside_share(const compute_device *d, double k);

/* GEMM pieces, exposed for tests and calibration; the efficiencies return -1
 * when m or n is not above 0. They use tile_m x tile_n; compute_gemm_tile
 * gives the tile the device picks for (m, n) (the best of gemm_tiles when
 * n_gemm_tiles > 0) and its tile x wave efficiency. */
double compute_tile_efficiency(const compute_device *d, double m, double n);
double compute_wave_efficiency(const compute_device *d, double m, double n);
double compute_gemm_tile(const compute_device *d, double m, double n, unsigned *tile_m,
                         unsigned *tile_n);
double compute_gemm_time_s(const compute_device *d, int precision, double m, double n, double k,
                           double bytes);

/* Evaluate a batch: time_s[i] = compute_op_time_s(d, &ops[i]) for every op,
 * in parallel. Every time_s[i] is written; returns 0, or -1 if some op is
 * unsupported (its time is < 0). */
int compute_op_times(const compute_device *d, const op *ops, size_t n_ops, double *time_s);

/* Per-GPU totals for many GPUs running the same op list: the sum
 * total = sum_i ops[i].count * time(ops[i]) is formed once, in op order, and
 * gpu_s[g] = total / speed[g] exactly (speed NULL = all 1; a GPU with speed
 * 0.9 is 10 % slower). Returns 0, or -1 (outputs untouched) on an unsupported
 * op, a negative or non-finite count, a speed that is not positive and
 * finite, or no memory. */
int compute_eval_gpus(const compute_device *d, const op *ops, size_t n_ops, const double *speed,
                      size_t n_gpus, double *gpu_s);

#endif
