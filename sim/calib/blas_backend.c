/* blas_backend.c - which GEMM dcsim calibrate times (contract in
 * blas_backend.h): OpenBLAS's cblas_sgemm when built with DCSIM_HAVE_CBLAS,
 * else dcsim's own blocked kernel. Invariant: without CBLAS every call runs
 * the own kernel and the OpenBLAS hooks do nothing.
 */
#ifdef DCSIM_HAVE_CBLAS
#define _GNU_SOURCE /* dladdr, to check which library cblas_sgemm binds to */
#include <dlfcn.h>
#endif

#include "blas_backend.h"

#include <stdio.h>
#include <string.h>

#include <gsl/gsl_cblas.h>

#include "gemm_kernel.h"

#ifdef DCSIM_HAVE_CBLAS
/* cblas_sgemm is declared by gsl_cblas.h (the standard CBLAS prototypes, the
 * same ABI as OpenBLAS's). OpenBLAS's own cblas.h cannot be included with
 * GSL's headers (both define the CBLAS enums), so its extras are declared here. */
void openblas_set_num_threads(int num_threads);
char *openblas_get_config(void);

/* 0 when cblas_sgemm is OpenBLAS's (it lives in the same object as
 * openblas_get_config), else -1 with the object it comes from in where: GSL's
 * libgslcblas exports the same name and wins if it is linked first. */
static void *code_address(void (*fn)(void))
{
    void *p; /* POSIX: function and object pointers have one size (dlsym relies on it) */
    memcpy(&p, &fn, sizeof p);
    return p;
}

int calib_blas_check_openblas(char *where, size_t size)
{
    Dl_info gemm, config;
    if (!dladdr(code_address((void (*)(void))cblas_sgemm), &gemm) ||
        !dladdr(code_address((void (*)(void))openblas_get_config), &config))
        return 0; /* cannot tell (a static build): trust the link */
    if (gemm.dli_fbase == config.dli_fbase)
        return 0;
    snprintf(where, size, "%s", gemm.dli_fname ? gemm.dli_fname : "?");
    return -1;
}

void calib_blas_set_threads(unsigned n_threads)
{
    openblas_set_num_threads((int)n_threads);
}

const char *calib_blas_config(void)
{
    return openblas_get_config();
}
#else
int calib_blas_check_openblas(char *where, size_t size)
{
    (void)where;
    (void)size;
    return 0;
}

void calib_blas_set_threads(unsigned n_threads)
{
    (void)n_threads;
}

const char *calib_blas_config(void)
{
    return NULL;
}
#endif

int calib_has_cblas(void)
{
#ifdef DCSIM_HAVE_CBLAS
    return 1;
#else
    return 0;
#endif
}

const char *calib_backend_name(enum calib_gemm_backend be)
{
    return be == CALIB_GEMM_CBLAS ? "cblas" : "own";
}

void calib_gemm_run(enum calib_gemm_backend be, size_t m, size_t n, size_t k, const float *a,
                    const float *b, float *c, unsigned threads)
{
#ifdef DCSIM_HAVE_CBLAS
    if (be == CALIB_GEMM_CBLAS) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0f, a,
                    (int)k, b, (int)n, 0.0f, c, (int)n);
        return;
    }
#else
    (void)be;
#endif
    calib_gemm_own(m, n, k, a, b, c, threads);
}
