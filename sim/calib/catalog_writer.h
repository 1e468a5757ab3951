/* catalog_writer.h - write a fitted calibration as a GPU catalog
 * (scenarios/dcsim.xsd) that a scenario's <catalog> can load, so dcsim
 * times a GEMM on the calibrated CPU as the fit does.
 */
#ifndef DCSIM_CALIB_CATALOG_WRITER_H
#define DCSIM_CALIB_CATALOG_WRITER_H

#include <stddef.h>

#include "allreduce_fit.h"
#include "error.h"
#include "gemm_fit.h"

/* Write g as a one-GPU catalog that scenarios can use (scenarios/dcsim.xsd):
 * <gpus><gpu name="cpu-calibrated"> with an fp32 <peak rate> of g->flops_per_s
 * and gemm-efficiency 100 %, a <memory bandwidth> of the largest tier
 * bandwidth and efficiency-by-size="0B:E0 SIZE1:E1 ..." with Ei = B_i / that
 * (so no default memory efficiency applies, and dcsim's device times a GEMM
 * as the fit does, without the tile), a capacity of memory_bytes (left out
 * when 0), and a <compute launch-overhead> of g->launch_s, each with source
 * "dcsim calibrate on HOST, DATE" and confidence D; threads and backend go
 * into the description. Numbers carry 9 significant digits, so times read
 * back agree to about 1e-8. What the catalog has no place for (the tile, the
 * all-reduce fits in colls, which may be NULL) goes in a comment.
 * Written to a temporary file in the same folder, then renamed: path is
 * complete or untouched. Returns 0, SIM_ERR_INTERNAL with err set when g is
 * not a fitted model, or SIM_ERR_IO with err set. */
int calib_write_catalog(const char *path, const calib_gemm_model *g, unsigned threads,
                        double memory_bytes, const char *backend, const calib_coll_model *colls,
                        size_t n_colls, const char *host, const char *date, sim_error *err);

#endif
