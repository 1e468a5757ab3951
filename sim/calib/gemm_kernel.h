/* gemm_kernel.h - FP32 GEMM kernels of dcsim calibrate: C = A.B, row-major,
 * a naive single-thread reference and a cache-blocked OpenMP kernel whose
 * results do not depend on the thread count.
 */
#ifndef DCSIM_CALIB_GEMM_KERNEL_H
#define DCSIM_CALIB_GEMM_KERNEL_H

#include <stddef.h>

/* Output tile of calib_gemm_own: the unit of work one OpenMP thread takes
 * (schedule(static) over tiles in row-major order). */
#define CALIB_OWN_TILE_M 32
#define CALIB_OWN_TILE_N 32

/* c[m x n] = a[m x k] . b[k x n], row-major FP32, one loop nest, one thread:
 * the reference the blocked kernel is tested against. */
void calib_gemm_naive(size_t m, size_t n, size_t k, const float *a, const float *b, float *c);

/* The same product, cache-blocked, on n_threads OpenMP threads (0 = the
 * OpenMP default). Each element of c is summed by one thread in the same
 * order (p = 0..k-1) for any thread count, so results are bit-identical
 * across thread counts. */
void calib_gemm_own(size_t m, size_t n, size_t k, const float *a, const float *b, float *c,
                    unsigned n_threads);

#endif
