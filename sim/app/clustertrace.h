/* clustertrace.h - the HDF5 file of `dcsim cluster -o FILE.h5`: /cluster/jobs
 * (one row per job) and /cluster/series (the busy-GPU and queue steps with
 * IT and facility power), written as FILE.h5.tmp.<pid> and renamed at the
 * end (outpath.h). Layout in docs/trace-format.md "/cluster". */
#ifndef DCSIM_APP_CLUSTERTRACE_H
#define DCSIM_APP_CLUSTERTRACE_H

#include "cluster.h"
#include "clusterenergy.h"
#include "outpath.h"
#include "scenario.h"

/* Write the run r of s (priced in ce) over op's path (outpath_init before
 * the run). command: the command line for the root attribute. Returns 0, or
 * SIM_ERR_IO / SIM_ERR_INPUT with the temporary removed and the path
 * untouched. */
int cluster_trace_write(outpath *op, const scn_scenario *s, const cluster_result *r,
                        const cluster_energy *ce, const char *command, sim_error *err);

#endif
