/* kernel_table.c - per-GPU kernel constants and their sources (see
 * kernel_table.h). GEMM numbers are the output of tests/models/gemm_fit.py
 * (least squares on log error over the 26 rows of components.md 1.3, G3, V);
 * memory numbers are derived at first use from the kernel times of
 * components.md 3.2 (Liger-Kernel LayerNorm FP32, M = 4096 rows: N = 16384 is
 * 536,870,912 bytes read + written, N = 1024 (the "small rows" entry, M = 4096
 * assumed as for the large row: A) 33,554,432 bytes).
 */
#include "kernel_table.h"

#include <string.h>

/* gemm_fit.py: A100 family c = 0.8407 (FP16 sweep; BF16 has the same peak
 * and tensor cores, D), t0 = 4.327 us; GH100 family c = 0.7004 (FP8 sweeps of
 * H100 and H200 together: same GH100 compute, hardware.md 1.1), t0 = 4.371
 * us. No BF16 sweep exists for Hopper: BF16 = FP8 ceiling x the MAMF ratio of
 * the same GPU, (794.5/989) / (1402.6/1979) (hardware.md 2.1, V; D). */
#define A100_C 0.8407
#define GH100_C8 0.7004
#define GH100_C16 (GH100_C8 * (794.5 / 989.0) / (1402.6 / 1979.0))

/* A100 80 GB: Liger LayerNorm 0.3223 ms (large), 0.0303 ms (small), HF eager
 * 0.5067 ms (components.md 3.2, V); HBM 2.039 TB/s */
static const double a100_times[5] = {2.039e12, 0.3223e-3, 0.0303e-3, 0.5067e-3, 0};
/* H100 80 GB: 0.1848, 0.0188, HF 0.3068 ms (same CSV, V); HBM 3.35 TB/s */
static const double h100_times[5] = {3.35e12, 0.1848e-3, 0.0188e-3, 0.3068e-3, 0};
/* H200: no kernel times; H100's scaled by the BabelStream copy fraction of
 * spec, H200 4.01/4.8 over H100 2.90/3.35 (components.md 3.1, V; D) */
#define H200_SCALE ((4.01 / 4.8) / (2.90 / 3.35))

/* kernel_probe_overlap.json and kernel_probe_overlap2.json ("no_margin"):
 * slowdown of a product loop beside k SMs held, the mean over the six loops
 * measured at k = 4, 8, 16 and 32 (ranges 1.155-1.619, 1.165-1.723,
 * 1.253-1.674, 1.422-1.702; the smaller products lose the most). Rule 1
 * gives 1.031, 1.065, 1.138, 1.320: a GEMM loses far more than the SMs it
 * cannot have, and a GEMM told to leave them free (cuBLASLt's SM count
 * target) lost about as much (docs/gpu-calibration.md). */
const double kern_beside_k[KERN_BESIDE_POINTS] = {4, 8, 16, 32};
const double kern_beside_gh100[KERN_BESIDE_POINTS] = {1.3079, 1.3227, 1.4204, 1.5522};

double kern_polyline(const double *xs, const double *ys, unsigned n, double x0, double y0,
                     double x)
{
    if (!(x > x0))
        return y0;
    if (x >= xs[n - 1])
        return ys[n - 1];
    unsigned i = 0;
    while (i < n && xs[i] <= x) {
        x0 = xs[i];
        y0 = ys[i];
        i++;
    }
    return y0 + (ys[i] - y0) * (x - x0) / (xs[i] - x0);
}

#define BIG_BYTES 536870912.0
#define SMALL_BYTES 33554432.0

void kern_mem_from_times(double bw, double big_bytes, double big_s, double small_bytes,
                         double small_s, double eager_s, double *fused_eff, double *eager_eff,
                         double *fixed_s)
{
    double eff = (big_bytes - small_bytes) / ((big_s - small_s) * bw);
    double fixed = small_s - small_bytes / (eff * bw);
    *fused_eff = eff;
    *fixed_s = fixed;
    *eager_eff = big_bytes / ((eager_s - fixed) * bw);
}

#define GEMM_A100 {[PREC_BF16] = A100_C, [PREC_FP16] = A100_C}
#define GEMM_GH100 {[PREC_BF16] = GH100_C16, [PREC_FP16] = GH100_C16, [PREC_FP8] = GH100_C8}
#define A100_RULE "A100 80 GB kernels (components.md 1.3, 3.2)"
#define GH100_RULE "H100 SXM kernels (components.md 1.3, 2.3-2.5, 3.2)"

static const kern_gpu table[] = {
    {"A100-SXM-80GB", KFAM_A100, GEMM_A100, 4.327e-6, 0, 0, 0, NULL, A100_RULE},
    {"A100-SXM-40GB", KFAM_A100, GEMM_A100, 4.327e-6, 0, 0, 0, NULL,
     A100_RULE " (sibling: same GA100 die; memory efficiencies as the 80 GB part's)"},
    {"A800-SXM-80GB", KFAM_A100, GEMM_A100, 4.327e-6, 0, 0, 0, NULL,
     A100_RULE " (sibling: A100 with NVLink cut, hardware.md 1.1)"},
    {"H100-SXM", KFAM_GH100, GEMM_GH100, 4.371e-6, 0, 0, 0, kern_beside_gh100, GH100_RULE},
    {"H800-SXM", KFAM_GH100, GEMM_GH100, 4.371e-6, 0, 0, 0, kern_beside_gh100,
     GH100_RULE " (sibling: H100 with NVLink cut, hardware.md 1.1)"},
    {"H200-SXM", KFAM_GH100, GEMM_GH100, 4.371e-6, 0, 0, 0, kern_beside_gh100,
     GH100_RULE " (sibling: same GH100 compute, components.md 1.1 'H200 is the same', 2.6 FA2 "
     "329.3 vs 327.9; memory efficiency x the BabelStream copy ratio, 3.1)"},
};

int kern_gpu_of(const char *gpu_name, kern_gpu *out)
{
    for (size_t i = 0; gpu_name && i < sizeof table / sizeof table[0]; i++) {
        if (strcmp(table[i].gpu, gpu_name) != 0)
            continue;
        kern_gpu g = table[i];
        const double *t = g.family == KFAM_A100 ? a100_times : h100_times;
        kern_mem_from_times(t[0], BIG_BYTES, t[1], SMALL_BYTES, t[2], t[3],
                            &g.mem_fused_efficiency, &g.mem_eager_efficiency, &g.mem_fixed_s);
        if (strcmp(g.gpu, "H200-SXM") == 0) {
            g.mem_fused_efficiency *= H200_SCALE;
            g.mem_eager_efficiency *= H200_SCALE;
        }
        *out = g;
        return 0;
    }
    return -1;
}
