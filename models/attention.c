/* attention.c - measured attention-kernel tables and their lookup (rules in
 * attention.h). Every row is components.md as read there; nothing is fitted.
 * Cost: a lookup scans the table (about 40 rows) once or three times.
 */
#include "attention.h"

#include <math.h>
#include <stdio.h>

#include "kernel_table.h"
#include "precision.h"
#include "workload.h"

const double attn_table_seq[ATTN_N_SEQ] = {512, 1024, 2048, 4096, 8192, 16384};

#define A100 KFAM_A100
#define GH100 KFAM_GH100
#define FA2 ATTN_FLASH2
#define FA3 ATTN_FLASH3
#define CUDNN ATTN_CUDNN
#define STD ATTN_MATERIALISED
#define FWD ATTN_DIR_FWD
#define BWD ATTN_DIR_BWD
#define FB ATTN_DIR_FWDBWD

#define S22 "components.md 2.2 (FlashAttention-2 Fig. 4, A100 fwd+bwd, V)"
#define S23 "components.md 2.3 (flash2_h100_fwd_bwd_benchmark.png, V)"
#define S24 "components.md 2.4 (FA3 Fig. 5 / flash3_fp16_fwd.png, V)"
#define S25 "components.md 2.5 (FA3 paper v1 backward, S)"

/* OOM and hidden labels are 0 (not measured) */
static const attn_table_row rows[] = {
    /* A100 80 GB, forward + backward */
    {A100, STD, FB, 0, 64, {36, 40, 43, 45, 46, 0}, S22},
    {A100, STD, FB, 0, 128, {53, 67, 76, 79, 86, 0}, S22},
    {A100, STD, FB, 1, 64, {15, 16, 17, 18, 18, 0}, S22},
    {A100, STD, FB, 1, 128, {23, 28, 32, 32, 34, 0}, S22},
    {A100, FA2, FB, 0, 64, {132, 153, 162, 171, 175, 176}, S22},
    {A100, FA2, FB, 0, 128, {151, 173, 187, 196, 201, 203}, S22 " (512: label hidden, read 151)"},
    {A100, FA2, FB, 1, 64, {88, 119, 140, 156, 165, 171}, S22},
    {A100, FA2, FB, 1, 128, {99, 133, 155, 173, 182, 189}, S22},
    /* H100 SXM5, forward + backward, FlashAttention-2 era (a check on the split tables) */
    {GH100, STD, FB, 0, 64, {62, 72, 81, 86, 87, 0}, S23},
    {GH100, STD, FB, 0, 128, {93, 120, 145, 160, 167, 0}, S23},
    {GH100, STD, FB, 1, 64, {26, 29, 31, 32, 32, 0}, S23},
    {GH100, STD, FB, 1, 128, {40, 50, 57, 61, 63, 0}, S23},
    {GH100, FA2, FB, 0, 64, {215, 254, 274, 288, 294, 296}, S23},
    {GH100, FA2, FB, 0, 128, {248, 294, 320, 326, 335, 338}, S23},
    {GH100, FA2, FB, 1, 64, {141, 192, 232, 257, 273, 284}, S23},
    {GH100, FA2, FB, 1, 128, {163, 221, 265, 294, 308, 328}, S23},
    /* H100 SXM5 forward, FP16/BF16 */
    {GH100, STD, FWD, 0, 64, {52, 63, 67, 72, 73, 0}, S24},
    {GH100, STD, FWD, 1, 64, {16, 18, 18, 18, 18, 0}, S24},
    {GH100, STD, FWD, 0, 128, {74, 100, 119, 133, 139, 0}, S24},
    {GH100, STD, FWD, 1, 128, {26, 31, 34, 35, 35, 0}, S24},
    {GH100, FA2, FWD, 0, 64, {282, 306, 318, 321, 322, 324}, S24},
    {GH100, FA2, FWD, 1, 64, {180, 229, 262, 284, 295, 299}, S24},
    {GH100, FA2, FWD, 0, 128, {309, 350, 362, 368, 370, 370}, S24},
    {GH100, FA2, FWD, 1, 128, {191, 260, 298, 319, 333, 335}, S24},
    {GH100, FA2, FWD, 0, 256, {275, 313, 321, 323, 324, 326}, S24},
    {GH100, FA2, FWD, 1, 256, {208, 251, 278, 293, 297, 298}, S24},
    {GH100, CUDNN, FWD, 0, 64, {335, 373, 395, 408, 412, 413}, S24},
    {GH100, CUDNN, FWD, 1, 64, {225, 288, 334, 363, 379, 388}, S24},
    {GH100, CUDNN, FWD, 0, 128, {497, 574, 617, 609, 600, 595}, S24},
    {GH100, CUDNN, FWD, 1, 128, {315, 410, 484, 518, 529, 539}, S24},
    {GH100, CUDNN, FWD, 0, 256, {470, 546, 580, 581, 580, 581}, S24},
    {GH100, CUDNN, FWD, 1, 256, {308, 391, 450, 483, 497, 509}, S24},
    {GH100, FA3, FWD, 0, 64, {333, 392, 460, 476, 496, 497}, S24},
    {GH100, FA3, FWD, 1, 64, {197, 265, 371, 420, 460, 473}, S24},
    {GH100, FA3, FWD, 0, 128, {467, 565, 625, 638, 646, 648}, S24},
    {GH100, FA3, FWD, 1, 128, {292, 423, 521, 579, 602, 616}, S24},
    {GH100, FA3, FWD, 0, 256, {482, 0, 707, 736, 746, 756}, S24 " (1k: label hidden)"},
    {GH100, FA3, FWD, 1, 256, {286, 427, 537, 612, 628, 642}, S24},
    /* H100 SXM5 backward, non-causal */
    {GH100, STD, BWD, 0, 64, {68, 76, 88, 92, 95, 0}, S25},
    {GH100, STD, BWD, 0, 128, {104, 131, 159, 174, 181, 0}, S25},
    {GH100, FA2, BWD, 0, 64, {198, 238, 264, 279, 287, 291}, S25},
    {GH100, FA2, BWD, 0, 128, {214, 260, 291, 310, 318, 322}, S25},
    {GH100, CUDNN, BWD, 0, 64, {266, 348, 395, 417, 432, 433}, S25},
    {GH100, CUDNN, BWD, 0, 128, {305, 408, 465, 499, 518, 516}, S25},
    {GH100, FA3, BWD, 0, 64, {272, 363, 422, 453, 472, 474}, S25},
    {GH100, FA3, BWD, 0, 128, {316, 424, 501, 542, 559, 561}, S25},
};

const attn_table_row *attn_table(size_t *n)
{
    *n = sizeof rows / sizeof rows[0];
    return rows;
}

const char *attn_kernel_name(int kernel)
{
    static const char *const names[ATTN_KERNEL_COUNT] = {"flash2", "flash3", "cudnn",
                                                         "materialised"};
    return kernel >= 0 && kernel < ATTN_KERNEL_COUNT ? names[kernel] : "?";
}

/* a row's rate at seq, linear in log2(seq) between its measured points,
 * clamped to the nearest measured point outside them; -1 if none */
static double row_at_seq(const attn_table_row *r, double seq)
{
    double x = log2(seq);
    int lo = -1, hi = -1;
    for (int i = 0; i < ATTN_N_SEQ; i++) {
        if (!(r->tflops[i] > 0))
            continue;
        if (log2(attn_table_seq[i]) <= x)
            lo = i;
        if (hi < 0 && log2(attn_table_seq[i]) >= x)
            hi = i;
    }
    if (lo < 0 && hi < 0)
        return -1;
    if (lo < 0 || hi < 0 || lo == hi)
        return 1e12 * r->tflops[lo < 0 ? hi : lo];
    double x0 = log2(attn_table_seq[lo]), x1 = log2(attn_table_seq[hi]);
    double f = (x - x0) / (x1 - x0);
    return 1e12 * (r->tflops[lo] + f * (r->tflops[hi] - r->tflops[lo]));
}

/* exact (family, kernel, dir, causal) panels, interpolated in log2(head dim)
 * and clamped; -1 if there is no such panel */
static double panel_rate(int family, int kernel, int dir, int causal, double d, double seq)
{
    const attn_table_row *lo = NULL, *hi = NULL;
    double x = log2(d);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const attn_table_row *r = &rows[i];
        if (r->family != family || r->kernel != kernel || r->dir != dir || r->causal != causal)
            continue;
        double xr = log2(r->head_dim);
        if (xr <= x && (!lo || r->head_dim > lo->head_dim))
            lo = r;
        if (xr >= x && (!hi || r->head_dim < hi->head_dim))
            hi = r;
    }
    if (!lo && !hi)
        return -1;
    if (!lo || !hi || lo == hi)
        return row_at_seq(lo ? lo : hi, seq);
    double r0 = row_at_seq(lo, seq), r1 = row_at_seq(hi, seq);
    double f = (x - log2(lo->head_dim)) / (log2(hi->head_dim) - log2(lo->head_dim));
    return r0 + f * (r1 - r0);
}

double attn_rate_flops_per_s(int family, int kernel, int dir, int causal, double head_dim,
                             double seq)
{
    if (!(head_dim > 0) || !(seq > 0) || (dir != ATTN_DIR_FWD && dir != ATTN_DIR_BWD))
        return -1;
    double r = panel_rate(family, kernel, dir, causal, head_dim, seq);
    if (r > 0)
        return r;
    if (dir == ATTN_DIR_BWD && causal) {
        /* causal backward = non-causal backward x the forward's causal ratio */
        double b = panel_rate(family, kernel, ATTN_DIR_BWD, 0, head_dim, seq);
        double fc = panel_rate(family, kernel, ATTN_DIR_FWD, 1, head_dim, seq);
        double fn = panel_rate(family, kernel, ATTN_DIR_FWD, 0, head_dim, seq);
        if (b > 0 && fc > 0 && fn > 0)
            return b * fc / fn;
    }
    /* only forward + backward measured: the same rate for both */
    return panel_rate(family, kernel, ATTN_DIR_FWDBWD, causal, head_dim, seq);
}

int attn_kernel_check(int family, int kernel, const char *gpu_name, sim_error *err)
{
    if (kernel < 0 || kernel >= ATTN_KERNEL_COUNT)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "unknown attention kernel %d", kernel);
    if (kernel == ATTN_MATERIALISED) /* GEMMs and memory-bound ops: no table needed */
        return 0;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (rows[i].family == family && rows[i].kernel == kernel)
            return 0;
    char have[96] = "";
    size_t used = 0;
    for (int k = 0; k < ATTN_KERNEL_COUNT; k++) {
        int found = k == ATTN_MATERIALISED && family != KFAM_NONE;
        for (size_t i = 0; !found && i < sizeof rows / sizeof rows[0]; i++)
            found = rows[i].family == family && rows[i].kernel == k;
        if (found && used < sizeof have)
            used += (size_t)snprintf(have + used, sizeof have - used, "%s%s", used ? ", " : "",
                                     attn_kernel_name(k));
    }
    return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                         "attention kernel '%s' has no measured table for GPU type '%s' "
                         "(components.md 2.2-2.5); %s%s",
                         attn_kernel_name(kernel), gpu_name ? gpu_name : "?",
                         used ? "measured on it: " : "no attention kernel is measured on it",
                         have);
}

/* Occupancy on GH100: with few (batch x head x 128-query-tile) blocks per SM,
 * u = b h ceil(s / 128) / 132, the kernels leave SMs idle. Measured on one
 * H200 (tests/gpu/h200-2026-12-04/kernel_probe_overlap2.json, attn_grid:
 * batch 1, 1-64 heads, s 4,096 and 8,192, d 128, causal; M, this machine,
 * docs/gpu-calibration.md): the rate at u over the rate at u = 15.52,
 * forward and backward apart, the mean of the two lengths where both have
 * the point. The tables' benchmarks ran at batch 16k / s with 2048 / d heads
 * (components.md 2.1), so at u_ref = 16384 (2048 / d) / (128 x 132); an op
 * runs at table x f(u) / f(u_ref), f = 1 from 15.52 up and proportional to
 * u below the first point. cuDNN's curve serves cuDNN and FA3 (both Hopper
 * warp-specialised kernels; sibling rule, D), the flash curve FA2. A100 has
 * no measurement: no factor. */
#define OCC_POINTS 10
#define OCC_SMS 132.0 /* the measured H200's SMs; every KFAM_GH100 part (H100, H800, H200 SXM)
                        has 132 (hardware.md 1.1), so u counts waves on the GPU it prices */
static const double occ_u[OCC_POINTS] = {0.2424, 0.4848, 0.9697, 1.9394, 2.9091,
                                         3.8788, 5.8182, 7.7576, 11.6364, 15.5152};
static const double occ_cudnn[2][OCC_POINTS] = {
    {0.139, 0.268, 0.537, 0.634, 0.725, 0.813, 0.890, 0.928, 0.979, 1},
    {0.136, 0.277, 0.456, 0.698, 0.773, 0.858, 0.924, 0.963, 0.992, 1}};
static const double occ_flash[2][OCC_POINTS] = {
    {0.304, 0.430, 0.467, 0.554, 0.642, 0.727, 0.840, 0.893, 0.963, 1},
    {0.150, 0.281, 0.524, 0.690, 0.800, 0.860, 0.920, 0.953, 0.992, 1}};

double attn_occupancy(int kernel, int dir, double u)
{
    const double *f = (kernel == ATTN_FLASH2 ? occ_flash : occ_cudnn)[dir == ATTN_DIR_BWD];
    return kern_polyline(occ_u, f, OCC_POINTS, 0, 0, u);
}

/* the op's rate over its table's, from occupancy (1 off GH100) */
static double occupancy_factor(int family, const op *o, int dir)
{
    if (family != KFAM_GH100)
        return 1;
    double u = o->attn_batch_heads * ceil(o->seq_q / 128) / OCC_SMS;
    double u_ref = 16384.0 * (2048.0 / o->head_dim) / (128 * OCC_SMS);
    return attn_occupancy(o->attn_kernel, dir, u) / attn_occupancy(o->attn_kernel, dir, u_ref);
}

double attn_op_time_s(int family, const op *o)
{
    double fwd_flops = 4.0 * o->attn_batch_heads * o->seq_q * o->seq_kv * o->head_dim;
    if (!(fwd_flops > 0) || isinf(fwd_flops))
        return -1;
    double credited = o->causal ? 0.5 * fwd_flops : fwd_flops;
    int backward = o->flops > 1.5 * fwd_flops;
    int dir = backward ? ATTN_DIR_BWD : ATTN_DIR_FWD;
    double rate = attn_rate_flops_per_s(family, o->attn_kernel, dir, o->causal, o->head_dim,
                                        o->seq_q) *
                  occupancy_factor(family, o, dir);
    if (!(rate > 0) || isinf(rate))
        return -1;
    return (backward ? 2.5 : 1.0) * credited / rate;
}

size_t attn_materialised_ops(double bh, double sq, double skv, double d, int precision,
                             int no_dropout, double count, op out[4])
{
    double w = precision_bytes(precision), e = bh * sq * skv;
    size_t n = 0;
    /* per (sequence, head) GEMMs, count x bh of them, batched bh at a time */
    out[n++] = (op){.kind = OP_GEMM, .precision = precision, .m = sq, .n = skv, .k = d,
            .flops = 2 * sq * skv * d, .bytes = (sq * d + d * skv + sq * skv) * w,
            .count = count * bh, .name = "attn_scores", .gemm_batch = bh, .is_attention_core = 1};
    out[n++] = (op){.kind = OP_MEMORY, .precision = precision, .bytes = 2 * e * w, .count = count,
            .name = "attn_softmax", .is_attention_core = 1};
    if (!no_dropout)
        out[n++] = (op){.kind = OP_MEMORY, .precision = precision, .bytes = e * (2 * w + 1),
                .count = count, .name = "attn_dropout", .is_eager = 1, .is_attention_core = 1};
    out[n++] = (op){.kind = OP_GEMM, .precision = precision, .m = sq, .n = d, .k = skv,
            .flops = 2 * sq * d * skv, .bytes = (sq * skv + skv * d + sq * d) * w,
            .count = count * bh, .name = "attn_context", .gemm_batch = bh, .is_attention_core = 1};
    return n;
}
