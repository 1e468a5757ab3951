/* calibrate.h - `dcsim calibrate`: time real kernels on this machine's CPU,
 * fit dcsim's timing models to them, and print measured vs predicted.
 *
 * GEMM: FP32 C = A.B (row-major, beta 0) through CBLAS (OpenBLAS) or our own
 * blocked OpenMP kernel, fitted to compute_gemm_time_s (models/compute.h) with
 * the CPU read as a device: sms = threads, ctas_per_sm = 1, a fixed tile,
 * peak x gemm_efficiency, bandwidth x mem_efficiency and launch_s fitted.
 * All-reduce: an OpenMP shared-memory ring or binomial tree across threads,
 * fitted to coll_allreduce_time_s (models/collective.h).
 * The pieces below are exposed for tests/app/test_calibrate.c.
 */
#ifndef DCSIM_APP_CALIBRATE_H
#define DCSIM_APP_CALIBRATE_H

#include <stddef.h>

#include "collective.h"
#include "compute.h"
#include "error.h"

/* The command: argv holds the arguments after the word "calibrate". Prints
 * tables on stdout, errors on stderr; returns the exit status (0 ok, 1
 * internal error or out of memory, 2 bad usage or an unwritable --write file). */
int cmd_calibrate(int argc, char **argv);

/* `dcsim calibrate --help` text, for `dcsim help calibrate` */
extern const char calibrate_usage[];

/* ---- kernels ---- */

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

/* All-reduce (sum) of n_threads buffers of count floats in place, one OpenMP
 * thread per buffer: afterwards every bufs[r][i] = sum over ranks of the old
 * bufs[r][i]. Ring: reduce-scatter then all-gather, n-1 barrier-separated
 * steps each; tree: binomial reduce to rank 0 then binomial broadcast,
 * ceil(log2 n) steps each (collective.h). Returns 0, or -1 when alg is
 * unknown, n_threads is 0 or OpenMP granted fewer threads (nothing changed). */
int calib_allreduce(enum coll_algorithm alg, float *const *bufs, size_t count,
                    unsigned n_threads);

/* ---- fits ---- */

typedef struct calib_gemm_point {
    double m, n, k;   /* shape */
    double bytes;     /* 4 (m k + k n + m n): A and B read, C written once */
    double time_s;    /* measured (median) time of one call */
} calib_gemm_point;

/* The CPU as a compute_device: sms, tile_m and tile_n are fixed by the
 * caller (sms = 0: no tile or wave quantisation); the rest is fitted. */
typedef struct calib_gemm_model {
    unsigned sms;          /* threads */
    unsigned tile_m, tile_n;
    double flops_per_s;    /* FP32 peak x gemm_efficiency (efficiency read as 1) */
    double bytes_per_s;    /* memory bandwidth x mem_efficiency (efficiency read as 1) */
    double launch_s;       /* fixed cost per call */
} calib_gemm_model;

/* The compute_device for g (FP32 peak only, every efficiency 1, ctas_per_sm 1). */
void calib_gemm_device(const calib_gemm_model *g, compute_device *out);

/* compute_gemm_time_s of the point's shape and bytes on g's device */
double calib_gemm_predict_s(const calib_gemm_model *g, const calib_gemm_point *p);

/* Fit flops_per_s, bytes_per_s and launch_s of *g to n_pts measured points:
 * least absolute deviations of log(predicted/measured), so a 1 us and a 1 s
 * point count alike and a point the model cannot describe does not drag the
 * rest, by iteratively reweighted nonlinear least squares (gsl_multifit_nlinear)
 * from several starts, the best kept.
 * Reads g->sms, tile_m, tile_n; writes the three fitted fields only on
 * success. Returns 0, or SIM_ERR_INPUT with err set (fewer than 3 points, a
 * time or shape <= 0, no fit converged). */
int calib_fit_gemm(const calib_gemm_point *pts, size_t n_pts, calib_gemm_model *g,
                   sim_error *err);

typedef struct calib_coll_point {
    double bytes;    /* per rank */
    double time_s;   /* measured (median) time of one all-reduce */
} calib_coll_point;

typedef struct calib_coll_model {
    enum coll_algorithm alg;
    unsigned ranks;
    double alpha_s;      /* fitted per-step latency */
    double bytes_per_s;  /* fitted per-rank bandwidth */
} calib_coll_model;

/* coll_allreduce_time_s on c for bytes per rank */
double calib_coll_predict_s(const calib_coll_model *c, double bytes);

/* Fit alpha_s and bytes_per_s of *c (alg and ranks read) to
 * t = steps alpha + factor S (1/B): least absolute relative deviations by
 * iteratively reweighted linear least squares (gsl_multifit_wlinear, weights
 * 1/(t^2 |r|)), started from relative least squares (weights 1/t^2). A
 * negative alpha is refitted as 0.
 * Writes the two fields only on success. Returns 0, or SIM_ERR_INPUT with err
 * set (ranks < 2, fewer than 2 points, times that do not grow with size). */
int calib_fit_allreduce(const calib_coll_point *pts, size_t n_pts, calib_coll_model *c,
                        sim_error *err);

/* Median of |predicted - measured| / measured over n points, in percent
 * (0 when n == 0). */
double calib_median_abs_error_pct(const double *measured_s, const double *predicted_s, size_t n);

/* ---- output ---- */

/* Write g as a one-GPU catalog that scenarios can use (scenarios/dcsim.xsd):
 * <gpus><gpu name="cpu-calibrated"> with an fp32 <peak rate> of g->flops_per_s
 * and gemm-efficiency 100 %, a <memory bandwidth> of g->bytes_per_s divided by
 * dcsim's memory efficiency (HW_MEM_EFFICIENCY, models/hardware.h) and a
 * capacity of memory_bytes (left out when 0), and a <compute launch-overhead>
 * of g->launch_s, each with source "dcsim calibrate on HOST, DATE" and
 * confidence D; threads and backend go into the description. What the catalog has no place for (the
 * tile, the all-reduce fits in colls, which may be NULL) goes in a comment.
 * Written to a temporary file in the same folder, then renamed: path is
 * complete or untouched. Returns 0, or SIM_ERR_IO with err set. */
int calib_write_catalog(const char *path, const calib_gemm_model *g, unsigned threads,
                        double memory_bytes, const char *backend, const calib_coll_model *colls,
                        size_t n_colls, const char *host, const char *date, sim_error *err);

#endif
