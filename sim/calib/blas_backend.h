/* blas_backend.h - the GEMM backend dcsim calibrate times: CBLAS (OpenBLAS,
 * when built with DCSIM_HAVE_CBLAS) or dcsim's own blocked OpenMP kernel,
 * and the OpenBLAS hooks the command needs. Without CBLAS the hooks are
 * no-ops and every GEMM runs the own kernel.
 */
#ifndef DCSIM_CALIB_BLAS_BACKEND_H
#define DCSIM_CALIB_BLAS_BACKEND_H

#include <stddef.h>

enum calib_gemm_backend { CALIB_GEMM_CBLAS, CALIB_GEMM_OWN };

/* 1 when this dcsim was built with CBLAS (OpenBLAS), else 0 */
int calib_has_cblas(void);

/* "cblas" or "own" */
const char *calib_backend_name(enum calib_gemm_backend be);

/* c[m x n] = a[m x k] . b[k x n], row-major FP32, beta 0, through be:
 * cblas_sgemm (its own threads, calib_blas_set_threads) or calib_gemm_own
 * on `threads` threads. CBLAS without DCSIM_HAVE_CBLAS runs the own kernel. */
void calib_gemm_run(enum calib_gemm_backend be, size_t m, size_t n, size_t k, const float *a,
                    const float *b, float *c, unsigned threads);

/* 0 when cblas_sgemm is OpenBLAS's (or it cannot tell, or no CBLAS is built
 * in), else -1 with the object cblas_sgemm comes from in where: GSL's
 * libgslcblas exports the same name and wins if it is linked first. */
int calib_blas_check_openblas(char *where, size_t size);

/* OpenBLAS's thread count (openblas_set_num_threads); no-op without CBLAS */
void calib_blas_set_threads(unsigned n_threads);

/* OpenBLAS's build description (openblas_get_config), NULL without CBLAS */
const char *calib_blas_config(void);

#endif
