/* calib.h - dcsim's CPU calibration library (sim/calib), everything in one
 * include: kernels to time (GEMM, shared-memory all-reduce), the timing
 * harness, this machine's cache tiers, the fits of dcsim's GEMM and
 * all-reduce models to measured times, and the catalog writer. The library
 * reads no XML and writes no HDF5; `dcsim calibrate` (sim/app/calibrate.c)
 * is the command built on it.
 */
#ifndef DCSIM_CALIB_CALIB_H
#define DCSIM_CALIB_CALIB_H

#include "allreduce_fit.h"
#include "allreduce_kernel.h"
#include "blas_backend.h"
#include "calib_timing.h"
#include "catalog_writer.h"
#include "cpu_caches.h"
#include "fit_tiers.h"
#include "gemm_fit.h"
#include "gemm_kernel.h"

#endif
