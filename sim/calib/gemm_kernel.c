/* gemm_kernel.c - the GEMM kernels dcsim calibrate times (contract in
 * gemm_kernel.h): a naive reference and a cache-blocked OpenMP kernel.
 * Invariant: every element of C is summed by one thread in the order
 * p = 0..k-1, so results are bit-identical across thread counts.
 */
#include "gemm_kernel.h"

#include <string.h>

#include <omp.h>

void calib_gemm_naive(size_t m, size_t n, size_t k, const float *a, const float *b, float *c)
{
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            float sum = 0.0f;
            for (size_t p = 0; p < k; p++)
                sum += a[i * k + p] * b[p * n + j];
            c[i * n + j] = sum;
        }
}

/* k is walked in blocks; each block of B (CALIB_BLOCK_K x tile columns,
 * 32 KiB) is copied to a contiguous buffer and the tile of C is summed in a
 * contiguous buffer (4 KiB), so power-of-two strides of B and C cannot
 * thrash a cache set. Rows of the tile go 4 at a time so each vector of B is
 * loaded once for 4 rows. */
#define CALIB_BLOCK_K 256

/* ct[r][0..w) += sum over p of a[r][p] * bp[p][0..w) for the rows r of a 1-4 row strip */
static void gemm_strip(size_t rows, size_t w, size_t kb, const float *a, size_t lda,
                       const float *bp, float *ct)
{
    const size_t tn = CALIB_OWN_TILE_N;
    if (rows == 4) {
        float *c0 = ct, *c1 = ct + tn, *c2 = ct + 2 * tn, *c3 = ct + 3 * tn;
        for (size_t p = 0; p < kb; p++) {
            const float a0 = a[p], a1 = a[lda + p], a2 = a[2 * lda + p], a3 = a[3 * lda + p];
            const float *b = bp + p * tn;
#pragma omp simd
            for (size_t j = 0; j < w; j++) {
                c0[j] += a0 * b[j];
                c1[j] += a1 * b[j];
                c2[j] += a2 * b[j];
                c3[j] += a3 * b[j];
            }
        }
        return;
    }
    for (size_t r = 0; r < rows; r++)
        for (size_t p = 0; p < kb; p++) {
            const float ar = a[r * lda + p];
            const float *b = bp + p * tn;
            float *c = ct + r * tn;
#pragma omp simd
            for (size_t j = 0; j < w; j++)
                c[j] += ar * b[j];
        }
}

void calib_gemm_own(size_t m, size_t n, size_t k, const float *a, const float *b, float *c,
                    unsigned n_threads)
{
    const size_t tm = CALIB_OWN_TILE_M, tn = CALIB_OWN_TILE_N;
    size_t tiles_m = (m + tm - 1) / tm, tiles_n = (n + tn - 1) / tn;
    size_t tiles = tiles_m * tiles_n;
    int threads = n_threads ? (int)n_threads : omp_get_max_threads();
#pragma omp parallel num_threads(threads)
    {
        /* per-thread scratch on the thread's stack: 36 KiB */
        _Alignas(64) float bp[CALIB_BLOCK_K * CALIB_OWN_TILE_N];
        _Alignas(64) float ct[CALIB_OWN_TILE_M * CALIB_OWN_TILE_N];
#pragma omp for schedule(static)
        for (size_t t = 0; t < tiles; t++) {
            size_t i0 = t / tiles_n * tm, j0 = t % tiles_n * tn;
            size_t h = i0 + tm < m ? tm : m - i0, w = j0 + tn < n ? tn : n - j0;
            memset(ct, 0, sizeof ct);
            for (size_t p0 = 0; p0 < k; p0 += CALIB_BLOCK_K) {
                size_t kb = p0 + CALIB_BLOCK_K < k ? CALIB_BLOCK_K : k - p0;
                for (size_t p = 0; p < kb; p++)
                    memcpy(bp + p * tn, b + (p0 + p) * n + j0, w * sizeof *bp);
                for (size_t i = 0; i < h; i += 4)
                    gemm_strip(h - i < 4 ? h - i : 4, w, kb, a + (i0 + i) * k + p0, k, bp,
                               ct + i * tn);
            }
            for (size_t i = 0; i < h; i++)
                memcpy(c + (i0 + i) * n + j0, ct + i * tn, w * sizeof *c);
        }
    }
}
