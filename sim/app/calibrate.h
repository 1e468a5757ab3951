/* calibrate.h - `dcsim calibrate`: time real kernels on this machine's CPU,
 * fit dcsim's timing models to them, and print measured vs predicted.
 *
 * GEMM: FP32 C = A.B (row-major, beta 0) through CBLAS (OpenBLAS) or our own
 * blocked OpenMP kernel, fitted to compute_gemm_time_s (models/compute.h) with
 * the CPU read as a device: sms = threads, ctas_per_sm = 1, a fixed tile,
 * peak x gemm_efficiency, one bandwidth per memory tier (tiers from the cache
 * sizes) and launch_s fitted.
 * All-reduce: an OpenMP shared-memory ring or binomial tree across threads,
 * fitted to coll_allreduce_tiered_time_s (models/collective.h).
 * The pieces (kernels, timing, tiers, fits, catalog writer) are the library
 * in sim/calib (calib.h); this header is the command alone.
 */
#ifndef DCSIM_APP_CALIBRATE_H
#define DCSIM_APP_CALIBRATE_H

/* The command: argv holds the arguments after the word "calibrate". Prints
 * tables on stdout, errors on stderr; returns the exit status (0 ok, 1
 * internal error or out of memory, 2 bad usage or an unwritable --write file). */
int cmd_calibrate(int argc, char **argv);

/* `dcsim calibrate --help` text, for `dcsim help calibrate` */
extern const char calibrate_usage[];

#endif
