/* sweep.h - `dcsim sweep`: a scenario over a grid (or a file) of --set
 * overrides, each point times replicas, run with OpenMP on one machine and
 * MPI across many, resumable, into one HDF5 file (docs/scaling.md). */
#ifndef DCSIM_APP_SWEEP_H
#define DCSIM_APP_SWEEP_H

int cmd_sweep(int argc, char **argv);
extern const char usage_sweep[];

#endif
