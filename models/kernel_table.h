/* kernel_table.h - measured kernel constants per GPU type: GEMM ceilings and
 * fixed costs (fitted on components.md 1.3 only, tests/models/gemm_fit.py),
 * memory-bound kernel efficiency and fixed cost (from the kernel times of
 * components.md 3.2), the attention family (attention.h), and the CPU launch
 * cost per kernel (components.md 3.4). hw_compute_device (hardware.c) builds
 * a timing device from them; a GPU type without an entry keeps the catalog's
 * values and is refused where a measured table is needed (attention).
 * Sibling rules (a GPU without its own measurement) are stated per entry.
 */
#ifndef DCSIM_MODELS_KERNEL_TABLE_H
#define DCSIM_MODELS_KERNEL_TABLE_H

#include "precision.h"

enum kern_family { KFAM_NONE = 0, KFAM_A100, KFAM_GH100, KFAM_COUNT };

/* GEMM model shared by the families (compute.h): CTA tiles {128,192,256}^2
 * (components.md 1.2, G2: "multiply by a tile size (128/192/256)", V), the
 * best tile x wave efficiency; soft roofline exponent p fitted on 1.3. */
#define KERN_TILE_SIZES {128, 192, 256}
#define KERN_ROOFLINE_P 1.2897

/* CPU launch cost per kernel: 5-9 us through Python frameworks
 * (components.md 3.4, D from tritonbench PR #1017, V): the midpoint 7 us; in
 * a CUDA graph about 0.5 us per node (same table, NCCL issue #1984, S). */
#define KERN_LAUNCH_S 7e-6
#define KERN_GRAPH_LAUNCH_S 0.5e-6

/* A GEMM beside a kernel holding k SMs on another stream (compute.h,
 * compute_beside_share): the GEMM's slowdown at these k, measured on one H200
 * (GH100: the same SMs and clocks as H100, components.md 1.1) with cuBLAS
 * 13.0 BF16 through torch 2.11 after a 20 s burn, a streaming kernel of k
 * blocks of 512 threads beside loops of six product shapes (8192^3 twice,
 * and the 1.7B, 177B, 70B and 462B rows' fc1, fc1, QKV and fc2), the mean
 * of the six (tests/gpu/h200-2026-12-04/kernel_probe_overlap*.json,
 * docs/gpu-calibration.md; M: measured here, one machine). */
#define KERN_BESIDE_POINTS 4
extern const double kern_beside_k[KERN_BESIDE_POINTS];
extern const double kern_beside_gh100[KERN_BESIDE_POINTS];

typedef struct kern_gpu {
    const char *gpu;           /* catalog GPU type name */
    int family;                /* enum kern_family */
    double gemm_ceiling[PREC_COUNT]; /* fraction of peak; 0 = the catalog's gemm-efficiency */
    double gemm_fixed_s;       /* GPU time per GEMM beyond t = flops / rate */
    double mem_fused_efficiency;  /* memory-bound: t = fixed + bytes / (eff x HBM peak) */
    double mem_eager_efficiency;
    double mem_fixed_s;
    const double *beside_slowdown; /* at kern_beside_k; NULL: rule 1 (no measurement) */
    const char *rule;          /* where the numbers come from (sibling rules included) */
} kern_gpu;

/* The entry for a catalog GPU type name, memory constants derived: 0 and
 * *out written, or -1 (out untouched) when the type has no entry. */
int kern_gpu_of(const char *gpu_name, kern_gpu *out);

/* Memory-bound kernel constants from three measured kernel times (bytes,
 * seconds): a fused kernel at a large and a small size and an eager one at
 * the large size, on an HBM of peak bw. Two points give efficiency and fixed
 * cost exactly (t = fixed + bytes / (eff bw)); the eager efficiency shares
 * the fixed cost. */
void kern_mem_from_times(double bw, double big_bytes, double big_s, double small_bytes,
                         double small_s, double eager_s, double *fused_eff, double *eager_eff,
                         double *fixed_s);

/* A measured curve between its points: y at x on the polyline through (x0,
 * y0), (xs[0], ys[0]), ..., (xs[n-1], ys[n-1]), xs ascending above x0, n >= 1;
 * the segment that starts at or below x (a point gives its y exactly); x
 * clamped to [x0, xs[n-1]]. Used by compute_beside_share and the attention
 * occupancy curve. */
double kern_polyline(const double *xs, const double *ys, unsigned n, double x0, double y0,
                     double x);

#endif
