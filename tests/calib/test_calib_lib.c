/* test_calib_lib.c - the calibration library alone (sim/calib, linked
 * without dcsim_app, libxml2 or HDF5): the blocked GEMM equals the naive
 * one, an all-reduce sums exactly, and the GEMM and all-reduce fits recover
 * the parameters of data their own models generated. The detailed cases,
 * the catalog read back and the command live in tests/app/test_calibrate.c.
 */
#include <math.h>
#include <stdio.h>

#include <gsl/gsl_errno.h>

#include "calib.h"
#include "check.h"

static void check_kernels(void)
{
    enum { M = 37, N = 45, K = 300 };
    static float a[M * K], b[K * N], want[M * N], got[M * N];
    for (size_t i = 0; i < M * K; i++)
        a[i] = (float)((int)(i % 7) - 3);
    for (size_t i = 0; i < K * N; i++)
        b[i] = (float)((int)(i % 5) - 2);
    calib_gemm_naive(M, N, K, a, b, want);
    calib_gemm_own(M, N, K, a, b, got, 2);
    int is_equal = 1;
    for (size_t i = 0; i < M * N; i++)
        is_equal &= want[i] == got[i];
    CHECK(is_equal);

    static float r0[100], r1[100], r2[100];
    float *bufs[3] = {r0, r1, r2};
    for (unsigned r = 0; r < 3; r++)
        for (size_t i = 0; i < 100; i++)
            bufs[r][i] = (float)(r + 1 + i);
    if (calib_allreduce(COLL_RING, bufs, 100, 3) == 0) /* -1: fewer threads granted */
        for (unsigned r = 0; r < 3; r++)
            CHECK(bufs[r][7] == 3.0f * 7 + 6);
}

static void check_gemm_fit(void)
{
    const calib_gemm_model truth = {.sms = 0, .n_tiers = 2, .tier_min_bytes = {0, 1e6},
                                    .flops_per_s = 1e11, .tier_bytes_per_s = {3e10, 1e10},
                                    .launch_s = 1e-6};
    static const double shapes[][3] = {{1, 1, 1},       {16, 16, 16},   {64, 64, 64},
                                       {256, 256, 256}, {512, 512, 512}, {256, 1, 256},
                                       {128, 128, 1},   {2048, 1, 2048}, {1024, 1024, 1},
                                       {4096, 1, 1024}};
    calib_gemm_point pts[10];
    for (size_t i = 0; i < 10; i++) {
        double m = shapes[i][0], n = shapes[i][1], k = shapes[i][2];
        pts[i] = (calib_gemm_point){.m = m, .n = n, .k = k, .bytes = 4 * (m * k + k * n + m * n)};
        pts[i].time_s = calib_gemm_predict_s(&truth, &pts[i]);
    }
    calib_gemm_model g = {.sms = 0, .n_tiers = 2, .tier_min_bytes = {0, 1e6}};
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(calib_fit_gemm(pts, 10, CALIB_FIT_LAD, &g, &err), 0);
    CHECK_REL(g.flops_per_s, truth.flops_per_s, 1e-3);
    CHECK_REL(g.launch_s, truth.launch_s, 1e-3);
    CHECK_REL(g.tier_bytes_per_s[0], truth.tier_bytes_per_s[0], 1e-3);
    CHECK_REL(g.tier_bytes_per_s[1], truth.tier_bytes_per_s[1], 1e-3);
}

static void check_allreduce_fit(void)
{
    calib_coll_model truth = {.alg = COLL_RING, .ranks = 4, .alpha_s = 2e-6,
                              .bw = {.n_tiers = 2, .min_bytes = {0, 65536},
                                     .bytes_per_s = {2e10, 8e9}}};
    calib_coll_point pts[12];
    for (size_t i = 0; i < 12; i++) {
        pts[i].bytes = 1024.0 * (double)(1u << i);
        pts[i].time_s = calib_coll_predict_s(&truth, pts[i].bytes);
    }
    calib_coll_model c = {.alg = COLL_RING, .ranks = 4,
                          .bw = {.n_tiers = 2, .min_bytes = {0, 65536}}};
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(calib_fit_allreduce(pts, 12, &c, &err), 0);
    CHECK_REL(c.alpha_s, truth.alpha_s, 1e-6);
    CHECK_REL(c.bw.bytes_per_s[0], truth.bw.bytes_per_s[0], 1e-6);
    CHECK_REL(c.bw.bytes_per_s[1], truth.bw.bytes_per_s[1], 1e-6);
}

int main(void)
{
    gsl_set_error_handler_off();
    check_kernels();
    check_gemm_fit();
    check_allreduce_fit();
    return check_report();
}
