/* test_compute.c - GPU timing kernels (compute.h) against closed forms.
 *
 *  - tile and wave quantisation: the worked example of hardware.md 2.2
 *    (NVIDIA DU-09799-001: A100, 108 SMs, 256x128 tiles; 1792^2 -> 98 tiles in
 *    one wave, 1793^2 -> 120 tiles in two, so twice the time) and hand cases;
 *  - large GEMMs tend to peak * gemm_efficiency (H100 SXM BF16 794.5 TFLOP/s
 *    measured, hardware.md 2.1), short by exactly the wave loss;
 *  - roofline: memory-bound below the ridge point peak eff / (bw mem_eff),
 *    compute-bound above; monotone in bandwidth, peak and work;
 *  - attention and memory kinds; launch cost once per instance;
 *  - rejections: unsupported precision, bad shapes, bad devices (each message);
 *  - per-GPU totals: total / speed exactly, equal to the serial sum, and
 *    bit-identical for 1 and 2 OpenMP threads.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "check.h"
#include "compute.h"

/* A100 SXM: 312 TFLOP/s BF16 dense, 1.555 TB/s (hardware.md 1.1, 1.2);
 * 271.2 / 312 measured large-GEMM ceiling (2.1); 108 SMs, 256x128 tiles (2.2) */
static compute_device a100(void)
{
    compute_device d;
    memset(&d, 0, sizeof d);
    d.peak_flops_per_s[PREC_BF16] = 312e12;
    d.peak_flops_per_s[PREC_FP16] = 312e12;
    d.gemm_efficiency = 271.2 / 312.0;
    d.attention_efficiency = 0.5;
    d.mem_bytes_per_s = 1.555e12;
    d.mem_efficiency = 0.9;
    d.sms = 108;
    d.ctas_per_sm = 1;
    d.tile_m = 256;
    d.tile_n = 128;
    d.launch_s = 0.0;
    return d;
}

/* H100 SXM: 989.4 TFLOP/s BF16, 1979 FP8, 3.35 TB/s; 794.5 / 989 measured
 * BF16 ceiling (hardware.md 2.1); 132 SMs; no FP4 (peak 0) */
static compute_device h100(void)
{
    compute_device d;
    memset(&d, 0, sizeof d);
    d.peak_flops_per_s[PREC_TF32] = 494.7e12;
    d.peak_flops_per_s[PREC_BF16] = 989.4e12;
    d.peak_flops_per_s[PREC_FP16] = 989.4e12;
    d.peak_flops_per_s[PREC_FP8] = 1979e12;
    d.gemm_efficiency = 794.5 / 989.0;
    d.attention_efficiency = 0.6;
    d.mem_bytes_per_s = 3.35e12;
    d.mem_efficiency = 0.9;
    d.sms = 132;
    d.ctas_per_sm = 1;
    d.tile_m = 256;
    d.tile_n = 128;
    d.launch_s = 5e-6;
    return d;
}

/* HBM bytes of a BF16 GEMM: read A (m x k) and B (k x n), write C (m x n) */
static double gemm_bytes(double m, double n, double k)
{
    return 2.0 * (m * k + k * n + m * n);
}

/* compute_device_check with its message copied to msg ("" when it passes) */
static int device_check(const compute_device *d, char *msg, size_t size)
{
    sim_error e;
    sim_error_clear(&e);
    int rc = compute_device_check(d, &e);
    snprintf(msg, size, "%s", e.msg);
    return rc;
}

static void test_worked_example(void)
{
    compute_device d = a100();
    char why[128];
    CHECK_INT_EQ(device_check(&d, why, sizeof why), 0);

    /* M = N = 1792: 7 x 14 = 98 tiles, exactly tiled, one wave on 108 SMs */
    CHECK(compute_tile_efficiency(&d, 1792, 1792) == 1.0);
    CHECK(compute_wave_efficiency(&d, 1792, 1792) == 98.0 / 108.0);
    CHECK_NEAR(compute_wave_efficiency(&d, 1792, 1792), 0.907, 0.001); /* "91 %" */
    /* M = N = 1793: 8 x 15 = 120 tiles, two waves */
    CHECK(compute_wave_efficiency(&d, 1793, 1793) == 120.0 / (2.0 * 108.0));
    CHECK_REL(compute_tile_efficiency(&d, 1793, 1793), 1793.0 * 1793.0 / (2048.0 * 1920.0),
              1e-15);

    /* compute-bound (intensity ~ 700 flop/byte, ridge ~ 190): time is W
     * slot-rounds of one tile each, so 0.1 % more work takes exactly twice */
    double k = 4096;
    double t1792 = compute_gemm_time_s(&d, PREC_BF16, 1792, 1792, k, gemm_bytes(1792, 1792, k));
    double t1793 = compute_gemm_time_s(&d, PREC_BF16, 1793, 1793, k, gemm_bytes(1793, 1793, k));
    double one_wave_s = 2.0 * 256 * 128 * k / (312e12 * d.gemm_efficiency / 108);
    CHECK_REL(t1792, one_wave_s, 1e-14);
    CHECK(t1793 / t1792 == 2.0);
    /* and the same as flops / (peak eff tile_eff wave_eff) */
    CHECK_REL(t1793, 2.0 * 1793 * 1793 * k /
                         (312e12 * d.gemm_efficiency * compute_tile_efficiency(&d, 1793, 1793) *
                          compute_wave_efficiency(&d, 1793, 1793)),
              1e-14);
}

static void test_quantisation_hand_cases(void)
{
    compute_device d = a100();
    /* 300 x 200 on 256 x 128 tiles: padded to 512 x 256 = 131072, 2 x 2 tiles */
    CHECK(compute_tile_efficiency(&d, 300, 200) == 60000.0 / 131072.0);
    CHECK(compute_tile_efficiency(&d, 300, 200) == 0.457763671875);
    CHECK(compute_wave_efficiency(&d, 300, 200) == 4.0 / 108.0);
    /* 2 CTAs per SM: 216 slots; 4096 x 4096 = 16 x 32 = 512 tiles, 3 waves */
    d.ctas_per_sm = 2;
    CHECK(compute_wave_efficiency(&d, 4096, 4096) == 512.0 / (3.0 * 216.0));
    /* exactly full waves: 108 x 2 slots = 216 tiles = 12 x 18 */
    CHECK(compute_wave_efficiency(&d, 12 * 256, 18 * 128) == 1.0);
    /* sms = 0: no quantisation */
    d.sms = 0;
    CHECK(compute_tile_efficiency(&d, 300, 200) == 1.0);
    CHECK(compute_wave_efficiency(&d, 1793, 1793) == 1.0);
    CHECK(compute_tile_efficiency(&d, 0, 200) < 0);
    CHECK(compute_wave_efficiency(&d, 300, -1) < 0);
}

static void test_large_gemm_ceiling(void)
{
    compute_device d = h100();
    double ceiling = 989.4e12 * d.gemm_efficiency; /* 794.5 TFLOP/s scaled to 989.4 */
    CHECK_REL(ceiling, 794.5e12, 0.001);

    /* 8192^3: 32 x 64 = 2048 tiles on 132 SMs = 15.5 -> 16 waves, so the
     * model gives the ceiling times 2048 / (16 x 132) = 0.970 (3 % short) */
    double s = 8192;
    double t = compute_gemm_time_s(&d, PREC_BF16, s, s, s, gemm_bytes(s, s, s));
    double achieved = 2.0 * s * s * s / (t - d.launch_s);
    CHECK_REL(achieved, ceiling * 2048.0 / (16.0 * 132.0), 1e-12);
    CHECK(achieved < ceiling);

    /* the shortfall is the wave loss, below 1/W, so it vanishes with size:
     * 16384^2 -> 63 waves, 32768^2 -> 249, 65536^2 -> 993 */
    double prev_gap = 1.0;
    for (double size = 8192; size <= 65536; size *= 2) {
        double kk = 8192;
        double tt = compute_gemm_time_s(&d, PREC_BF16, size, size, kk, gemm_bytes(size, size, kk));
        double gap = 1.0 - 2.0 * size * size * kk / (tt - d.launch_s) / ceiling;
        double tiles = (size / 256) * (size / 128);
        double waves = ceil(tiles / 132);
        CHECK(gap >= 0 && gap < 1.0 / waves);
        CHECK(gap < prev_gap);
        prev_gap = gap;
        if (size >= 16384)
            CHECK_REL(2.0 * size * size * kk / tt, 794.5e12, 0.02);
    }
    /* with sms = 0 the ceiling itself (to rounding), launch aside */
    d.sms = 0;
    t = compute_gemm_time_s(&d, PREC_BF16, s, s, s, gemm_bytes(s, s, s));
    CHECK_REL(2.0 * s * s * s / (t - d.launch_s), ceiling, 1e-12);
}

static void test_roofline(void)
{
    compute_device d = h100();
    double mem_rate = d.mem_bytes_per_s * d.mem_efficiency;
    double flop_rate = 989.4e12 * d.gemm_efficiency;

    /* rank-1 update (k = 1): intensity ~ 1 flop/byte, memory-bound */
    double m = 8192, n = 8192, b = gemm_bytes(m, n, 1);
    CHECK_REL(compute_gemm_time_s(&d, PREC_BF16, m, n, 1, b), d.launch_s + b / mem_rate, 1e-14);

    /* crossover at the ridge point, with sms = 0 (no quantisation) */
    d.sms = 0;
    double ridge = flop_rate / mem_rate; /* ~ 264 flop/byte */
    double bytes = 1e9;
    m = 4096;
    n = 4096;
    for (double ai = ridge / 4; ai <= ridge * 4; ai *= 1.0625) {
        double k = ai * bytes / (2 * m * n);
        double t = compute_gemm_time_s(&d, PREC_BF16, m, n, k, bytes);
        double expect = ai < ridge ? bytes / mem_rate : 2 * m * n * k / flop_rate;
        CHECK_REL(t - d.launch_s, expect, 1e-12);
    }
    double k_below = ridge * (1 - 1e-6) * bytes / (2 * m * n);
    double k_above = ridge * (1 + 1e-6) * bytes / (2 * m * n);
    CHECK(compute_gemm_time_s(&d, PREC_BF16, m, n, k_below, bytes) == d.launch_s + bytes / mem_rate);
    CHECK(compute_gemm_time_s(&d, PREC_BF16, m, n, k_above, bytes) > d.launch_s + bytes / mem_rate);
    CHECK_REL(compute_gemm_time_s(&d, PREC_BF16, m, n, k_above, bytes),
              d.launch_s + 2 * m * n * k_above / flop_rate, 1e-14);

    /* monotone, with and without quantisation: more bandwidth or peak never
     * slower; more m, n, k or bytes never faster */
    uint64_t x = 88172645463325252ull;
    int n_bad = 0;
    for (int sms = 0; sms <= 132; sms += 132)
        for (int i = 0; i < 2000; i++) {
            double v[4];
            for (int j = 0; j < 4; j++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                v[j] = (double)(x >> 11) * 0x1p-53;
            }
            compute_device e = h100();
            e.sms = (unsigned)sms;
            double mm = 1 + floor(16384 * v[0]), nn = 1 + floor(16384 * v[1]);
            double kk = 1 + floor(16384 * v[2]), bb = gemm_bytes(mm, nn, kk) * (0.5 + v[3]);
            double t0 = compute_gemm_time_s(&e, PREC_BF16, mm, nn, kk, bb);
            double grow = 1 + 37 * v[3];
            n_bad += compute_gemm_time_s(&e, PREC_BF16, mm + grow, nn, kk, bb) < t0;
            n_bad += compute_gemm_time_s(&e, PREC_BF16, mm, nn + grow, kk, bb) < t0;
            n_bad += compute_gemm_time_s(&e, PREC_BF16, mm, nn, kk + grow, bb) < t0;
            n_bad += compute_gemm_time_s(&e, PREC_BF16, mm, nn, kk, bb * 1.01) < t0;
            compute_device f = e;
            f.mem_bytes_per_s *= 1 + v[0];
            n_bad += compute_gemm_time_s(&f, PREC_BF16, mm, nn, kk, bb) > t0;
            f = e;
            f.peak_flops_per_s[PREC_BF16] *= 1 + v[1];
            n_bad += compute_gemm_time_s(&f, PREC_BF16, mm, nn, kk, bb) > t0;
            f = e;
            f.gemm_efficiency = 1.0;
            n_bad += compute_gemm_time_s(&f, PREC_BF16, mm, nn, kk, bb) > t0;
        }
    CHECK_INT_EQ(n_bad, 0);
}

static void test_kinds_and_launch(void)
{
    compute_device d = h100();
    double mem_rate = d.mem_bytes_per_s * d.mem_efficiency;

    /* attention, compute-bound: 1 PFLOP over 1 GB */
    op att = {.kind = OP_ATTENTION, .precision = PREC_BF16, .flops = 1e15, .bytes = 1e9,
            .count = 1, .name = "attn"};
    CHECK_REL(compute_op_time_s(&d, &att), d.launch_s + 1e15 / (989.4e12 * 0.6), 1e-14);
    /* attention, memory-bound: 1 GFLOP over 1 GB */
    att.flops = 1e9;
    CHECK_REL(compute_op_time_s(&d, &att), d.launch_s + 1e9 / mem_rate, 1e-14);
    /* attention ignores the GEMM quantisation and efficiency */
    compute_device e = d;
    e.gemm_efficiency = 0.1;
    e.sms = 7;
    att.flops = 1e15;
    CHECK(compute_op_time_s(&e, &att) == compute_op_time_s(&d, &att));

    /* memory-bound op: bytes only; its precision needs no math peak */
    op mem = {.kind = OP_MEMORY, .precision = PREC_FP32, .flops = 123e9, .bytes = 4e8, .count = 1,
            .name = "layernorm"};
    CHECK_REL(compute_op_time_s(&d, &mem), d.launch_s + 4e8 / mem_rate, 1e-14);
    mem.precision = PREC_FP4;
    CHECK_REL(compute_op_time_s(&d, &mem), d.launch_s + 4e8 / mem_rate, 1e-14);

    /* GEMM dispatch: m, n, k and bytes (flops is not used) */
    op gemm = {.kind = OP_GEMM, .precision = PREC_BF16, .m = 4096, .n = 12288, .k = 4096,
            .flops = 0, .bytes = gemm_bytes(4096, 12288, 4096), .count = 1, .name = "qkv"};
    CHECK(compute_op_time_s(&d, &gemm) ==
          compute_gemm_time_s(&d, PREC_BF16, 4096, 12288, 4096, gemm.bytes));

    /* launch cost is per instance: count c adds c x launch */
    op list[3] = {gemm, att, mem};
    list[0].count = 96;
    list[1].count = 48;
    list[2].count = 7;
    double s0, s1;
    CHECK_INT_EQ(compute_eval_gpus(&d, list, 3, NULL, 1, &s0), 0);
    e = d;
    e.launch_s = d.launch_s + 1e-3;
    CHECK_INT_EQ(compute_eval_gpus(&e, list, 3, NULL, 1, &s1), 0);
    CHECK_REL(s1 - s0, (96 + 48 + 7) * 1e-3, 1e-9);
    /* a lone memory op: count x (launch + bytes / rate) */
    CHECK_INT_EQ(compute_eval_gpus(&d, &list[2], 1, NULL, 1, &s0), 0);
    CHECK(s0 == 7 * (d.launch_s + 4e8 / mem_rate));
}

static void test_rejections(void)
{
    compute_device d = h100();
    /* H100 has no FP4 peak */
    CHECK(compute_gemm_time_s(&d, PREC_FP4, 4096, 4096, 4096, 1e8) < 0);
    CHECK(compute_gemm_time_s(&d, -1, 4096, 4096, 4096, 1e8) < 0);
    CHECK(compute_gemm_time_s(&d, PREC_COUNT, 4096, 4096, 4096, 1e8) < 0);
    CHECK(compute_gemm_time_s(&d, PREC_FP8, 4096, 4096, 4096, 1e8) > 0);
    /* shapes must be > 0, bytes >= 0 */
    CHECK(compute_gemm_time_s(&d, PREC_BF16, 0, 4096, 4096, 1e8) < 0);
    CHECK(compute_gemm_time_s(&d, PREC_BF16, 4096, -1, 4096, 1e8) < 0);
    CHECK(compute_gemm_time_s(&d, PREC_BF16, 4096, 4096, 0, 1e8) < 0);
    CHECK(compute_gemm_time_s(&d, PREC_BF16, 4096, 4096, NAN, 1e8) < 0);
    CHECK(compute_gemm_time_s(&d, PREC_BF16, 4096, 4096, 4096, -1) < 0);
    CHECK(compute_gemm_time_s(&d, PREC_BF16, 4096, 4096, 4096, 0) > 0);

    op att = {.kind = OP_ATTENTION, .precision = PREC_FP4, .flops = 1e12, .bytes = 1e9, .count = 1,
            .name = "attn"};
    CHECK(compute_op_time_s(&d, &att) < 0);
    op bad_kind = {.kind = OP_KIND_COUNT, .precision = PREC_BF16, .m = 1, .n = 1, .k = 1,
            .flops = 1, .bytes = 1, .count = 1, .name = "bad"};
    CHECK(compute_op_time_s(&d, &bad_kind) < 0);
    bad_kind.kind = -1;
    CHECK(compute_op_time_s(&d, &bad_kind) < 0);
    op mem = {.kind = OP_MEMORY, .precision = PREC_COUNT, .bytes = 1e9, .count = 1, .name = "mem"};
    CHECK(compute_op_time_s(&d, &mem) < 0);

    /* a batch with one unsupported op: -1, the good ones still timed */
    op list[3] = {
        {.kind = OP_GEMM, .precision = PREC_BF16, .m = 1024, .n = 1024, .k = 1024,
         .bytes = gemm_bytes(1024, 1024, 1024), .count = 2, .name = "ok"},
        {.kind = OP_GEMM, .precision = PREC_FP4, .m = 1024, .n = 1024, .k = 1024,
         .bytes = gemm_bytes(1024, 1024, 1024), .count = 2, .name = "fp4"},
        {.kind = OP_MEMORY, .precision = PREC_BF16, .bytes = 1e6, .count = 3, .name = "ok2"},
    };
    double t[3];
    CHECK_INT_EQ(compute_op_times(&d, list, 3, t), -1);
    CHECK(t[0] > 0 && t[1] < 0 && t[2] > 0);
    CHECK_INT_EQ(compute_op_times(&d, list, 0, t), 0);

    /* per-GPU totals: -1, outputs untouched, on a bad op or a bad speed */
    double speed[2] = {1.0, 0.9}, gpu_s[2] = {-7, -7};
    CHECK_INT_EQ(compute_eval_gpus(&d, list, 3, speed, 2, gpu_s), -1);
    CHECK(gpu_s[0] == -7 && gpu_s[1] == -7);
    list[1].precision = PREC_BF16;
    CHECK_INT_EQ(compute_eval_gpus(&d, list, 3, speed, 2, gpu_s), 0);
    gpu_s[0] = gpu_s[1] = -7;
    double bad_speeds[] = {0.0, -0.5, NAN, INFINITY};
    for (size_t i = 0; i < sizeof bad_speeds / sizeof bad_speeds[0]; i++) {
        speed[1] = bad_speeds[i];
        CHECK_INT_EQ(compute_eval_gpus(&d, list, 3, speed, 2, gpu_s), -1);
    }
    CHECK(gpu_s[0] == -7 && gpu_s[1] == -7);
    speed[1] = 0.9;
    list[2].count = -1;
    CHECK_INT_EQ(compute_eval_gpus(&d, list, 3, speed, 2, gpu_s), -1);
    CHECK(gpu_s[0] == -7 && gpu_s[1] == -7);
}

static void test_device_check(void)
{
    char why[160];
    compute_device good = h100();
    CHECK_INT_EQ(device_check(&good, why, sizeof why), 0);
    CHECK_INT_EQ(compute_device_check(&good, NULL), 0);
    good.sms = 0; /* no quantisation: tiles and CTAs unused */
    good.tile_m = good.tile_n = good.ctas_per_sm = 0;
    CHECK_INT_EQ(device_check(&good, why, sizeof why), 0);

    struct {
        compute_device d;
        const char *msg;
    } cases[16];
    size_t n = 0;
    compute_device d;
#define BAD(mutation, expected)    \
    do {                           \
        d = h100();                \
        mutation;                  \
        cases[n].d = d;            \
        cases[n++].msg = expected; \
    } while (0)
    BAD(d.gemm_efficiency = 0, "gemm_efficiency must be in (0, 1], got 0");
    BAD(d.gemm_efficiency = 1.2, "gemm_efficiency must be in (0, 1], got 1.2");
    BAD(d.gemm_efficiency = NAN, "gemm_efficiency must be in (0, 1]");
    BAD(d.attention_efficiency = -0.1, "attention_efficiency must be in (0, 1], got -0.1");
    BAD(d.mem_efficiency = 2, "mem_efficiency must be in (0, 1], got 2");
    BAD(d.mem_bytes_per_s = 0, "mem_bytes_per_s must be > 0 and finite, got 0");
    BAD(d.mem_bytes_per_s = INFINITY, "mem_bytes_per_s must be > 0 and finite");
    BAD(memset(d.peak_flops_per_s, 0, sizeof d.peak_flops_per_s),
        "peak_flops_per_s: no precision has a peak > 0");
    BAD(d.peak_flops_per_s[PREC_FP8] = -1, "peak_flops_per_s[fp8] must be >= 0 and finite, got -1");
    BAD(d.ctas_per_sm = 0, "ctas_per_sm must be >= 1 when sms > 0, got 0");
    BAD(d.tile_m = 0, "tile_m must be >= 1 when sms > 0, got 0");
    BAD(d.tile_n = 0, "tile_n must be >= 1 when sms > 0, got 0");
    BAD(d.launch_s = -1e-6, "launch_s must be >= 0 and finite, got -1e-06");
#undef BAD
    for (size_t i = 0; i < n; i++) {
        strcpy(why, "(unset)");
        CHECK_INT_EQ(device_check(&cases[i].d, why, sizeof why), SIM_ERR_INPUT);
        CHECK_CONTAINS(why, cases[i].msg);
        CHECK(strchr(why, '\n') == NULL);
        CHECK_INT_EQ(compute_device_check(&cases[i].d, NULL), SIM_ERR_INPUT);
    }
    /* the first error wins: a recorded one is kept */
    sim_error e;
    sim_error_clear(&e);
    CHECK_INT_EQ(compute_device_check(&cases[0].d, &e), SIM_ERR_INPUT);
    CHECK_INT_EQ(compute_device_check(&cases[1].d, &e), SIM_ERR_INPUT);
    CHECK_STR_EQ(e.msg, "gemm_efficiency must be in (0, 1], got 0");
}

/* xorshift64*: deterministic test data, no shared state with the library */
static double uniform(uint64_t *x)
{
    *x ^= *x >> 12, *x ^= *x << 25, *x ^= *x >> 27;
    return (double)((*x * 2685821657736338717ull) >> 11) * 0x1p-53;
}

static void random_ops(op *ops, size_t n_ops, uint64_t seed)
{
    static const double dims[] = {1024, 2048, 4096, 5120, 8192, 12288, 14336, 16384, 28672};
    uint64_t x = seed;
    for (size_t i = 0; i < n_ops; i++) {
        op o = {.precision = PREC_BF16, .count = 1 + floor(96 * uniform(&x)), .name = "op"};
        double u = uniform(&x);
        if (u < 0.6) {
            o.kind = OP_GEMM;
            o.precision = uniform(&x) < 0.8 ? PREC_BF16 : PREC_FP8;
            o.m = 1 + floor(16384 * uniform(&x));
            o.n = dims[(size_t)(9 * uniform(&x))];
            o.k = dims[(size_t)(9 * uniform(&x))];
            o.flops = 2 * o.m * o.n * o.k;
            o.bytes = gemm_bytes(o.m, o.n, o.k);
        } else if (u < 0.8) {
            double seq = 512 * (1 + floor(16 * uniform(&x))), heads = 32, head_dim = 128;
            o.kind = OP_ATTENTION;
            o.flops = 4 * seq * seq * heads * head_dim;
            o.bytes = 2 * 4 * seq * heads * head_dim;
        } else {
            o.kind = OP_MEMORY;
            o.precision = PREC_FP32;
            o.bytes = 1e6 * (1 + 1000 * uniform(&x));
        }
        ops[i] = o;
    }
}

static void test_eval_gpus(void)
{
    compute_device d = h100();
    enum { N_OPS = 10000, N_GPUS = 1000 };
    op *ops = malloc(N_OPS * sizeof *ops);
    double *speed = malloc(N_GPUS * sizeof *speed);
    double *a = malloc(N_GPUS * sizeof *a), *b = malloc(N_GPUS * sizeof *b);
    double *ta = malloc(N_OPS * sizeof *ta), *tb = malloc(N_OPS * sizeof *tb);
    if (!ops || !speed || !a || !b || !ta || !tb) {
        CHECK(!"out of memory");
        goto out;
    }
    random_ops(ops, N_OPS, 20240601u);

    /* the serial sum, op by op, in op order */
    double total_s = 0;
    for (size_t i = 0; i < N_OPS; i++)
        total_s += ops[i].count * compute_op_time_s(&d, &ops[i]);
    CHECK(total_s > 0);

    /* one GPU 10 % slow: exactly total / 0.9; the rest exactly total */
    for (size_t g = 0; g < N_GPUS; g++)
        speed[g] = 1.0;
    speed[3] = 0.9;
    CHECK_INT_EQ(compute_eval_gpus(&d, ops, N_OPS, speed, N_GPUS, a), 0);
    CHECK(a[3] == total_s / 0.9);
    CHECK(a[3] > a[0]);
    size_t n_exact = 0;
    for (size_t g = 0; g < N_GPUS; g++)
        n_exact += g == 3 || a[g] == total_s;
    CHECK_INT_EQ(n_exact, N_GPUS);
    CHECK_INT_EQ(compute_eval_gpus(&d, ops, N_OPS, NULL, 1, b), 0);
    CHECK(b[0] == total_s);

    /* bit-identical on 1 and 2 threads, per op and per GPU */
    uint64_t x = 7;
    for (size_t g = 0; g < N_GPUS; g++)
        speed[g] = 0.8 + 0.4 * uniform(&x);
    int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    CHECK_INT_EQ(compute_op_times(&d, ops, N_OPS, ta), 0);
    CHECK_INT_EQ(compute_eval_gpus(&d, ops, N_OPS, speed, N_GPUS, a), 0);
    omp_set_num_threads(2);
    CHECK_INT_EQ(compute_op_times(&d, ops, N_OPS, tb), 0);
    CHECK_INT_EQ(compute_eval_gpus(&d, ops, N_OPS, speed, N_GPUS, b), 0);
    omp_set_num_threads(saved);
    CHECK(memcmp(ta, tb, N_OPS * sizeof *ta) == 0);
    CHECK(memcmp(a, b, N_GPUS * sizeof *a) == 0);
    size_t n_match = 0;
    for (size_t i = 0; i < N_OPS; i++)
        n_match += ta[i] == compute_op_time_s(&d, &ops[i]);
    CHECK_INT_EQ(n_match, N_OPS);
    n_match = 0;
    for (size_t g = 0; g < N_GPUS; g++)
        n_match += a[g] == total_s / speed[g];
    CHECK_INT_EQ(n_match, N_GPUS);
out:
    free(ops);
    free(speed);
    free(a);
    free(b);
    free(ta);
    free(tb);
}

/* memory efficiency by transfer size: calculon's HBM table (hardware.md 2.2) */
static void test_memory_tiers(void)
{
    compute_device d = h100();
    d.launch_s = 0;
    d.n_mem_tiers = 4;
    double lo[4] = {0, 1e6, 10e6, 100e6}, eff[4] = {0.30, 0.60, 0.75, 0.90};
    for (int i = 0; i < 4; i++) {
        d.mem_tier_min_bytes[i] = lo[i];
        d.mem_tier_efficiency[i] = eff[i];
    }
    char why[200];
    CHECK_INT_EQ(device_check(&d, why, sizeof why), 0);
    CHECK(compute_mem_efficiency(&d, 0) == 0.30);
    CHECK(compute_mem_efficiency(&d, 999999) == 0.30);
    CHECK(compute_mem_efficiency(&d, 1e6) == 0.60); /* a boundary belongs to the tier above */
    CHECK(compute_mem_efficiency(&d, 50e6) == 0.75);
    CHECK(compute_mem_efficiency(&d, 1e12) == 0.90);
    op small = {.kind = OP_MEMORY, .precision = PREC_BF16, .bytes = 0.5e6, .count = 1,
            .name = "small"};
    op large = {.kind = OP_MEMORY, .precision = PREC_BF16, .bytes = 200e6, .count = 1,
            .name = "large"};
    CHECK_REL(compute_op_time_s(&d, &small), 0.5e6 / (3.35e12 * 0.30), 1e-15);
    CHECK_REL(compute_op_time_s(&d, &large), 200e6 / (3.35e12 * 0.90), 1e-15);
    /* per byte, the small transfer is 3x slower */
    CHECK_REL(compute_op_time_s(&d, &small) / 0.5e6, 3 * compute_op_time_s(&d, &large) / 200e6,
              1e-12);
    /* no tiers: the flat efficiency */
    d.n_mem_tiers = 0;
    CHECK(compute_mem_efficiency(&d, 0.5e6) == d.mem_efficiency);
    /* bad tables */
    d.n_mem_tiers = 4;
    d.mem_tier_min_bytes[2] = 1e6;
    CHECK(device_check(&d, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "mem_tier_min_bytes must be ascending");
    d.mem_tier_min_bytes[2] = 10e6;
    d.mem_tier_min_bytes[0] = 5;
    CHECK(device_check(&d, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "0 for the first tier");
    d.mem_tier_min_bytes[0] = 0;
    d.mem_tier_efficiency[1] = 1.5;
    CHECK(device_check(&d, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "mem_tier_efficiency must be in (0, 1]");
    d.n_mem_tiers = 5;
    CHECK(device_check(&d, why, sizeof why) != 0);
}

int main(void)
{
    test_memory_tiers();
    test_worked_example();
    test_quantisation_hand_cases();
    test_large_gemm_ceiling();
    test_roofline();
    test_kinds_and_launch();
    test_rejections();
    test_device_check();
    test_eval_gpus();
    return check_report();
}
