/* trace.h - the HDF5 trace of a run (layout in docs/trace-format.md).
 *
 * The file is written under "<path>.tmp.<pid>" and renamed to its final name
 * only by trace_commit, so an interrupted or failed run never leaves a
 * partial trace under the final name. Campaign events and timeline segments
 * stream into chunked tables through the campaign sink as the run goes, so
 * memory does not grow with the run's length. Object timestamps are off:
 * the same scenario and seed give a byte-identical file.
 */
#ifndef DCSIM_APP_TRACE_H
#define DCSIM_APP_TRACE_H

#include <hdf5.h>

#include "campaign.h"
#include "error.h"
#include "scenario.h"
#include "summary.h"

typedef struct trace_writer trace_writer;

/* Create the temporary file next to path (outpath.h: removes temporaries of
 * dead runs). Fails early, naming the path and the reason: SIM_ERR_IO when
 * the folder is not writable, SIM_ERR_INPUT when path is too long, exists and
 * is not a regular file, or is one of the n_inputs files the run reads. */
int trace_open(const char *path, const char *const *inputs, size_t n_inputs, trace_writer **out,
               sim_error *err);

/* A campaign sink writing /campaign/events and /campaign/timeline. */
campaign_sink trace_campaign_sink(trace_writer *tw);

/* Write /scenario, /summary and the root attributes, close, and rename to the
 * final name. The writer is freed whatever happens. */
int trace_commit(trace_writer *tw, const scn_scenario *scn, const campaign_result *res,
                 const run_summary *sum, sim_error *err);

/* Write /replicas and /replica_digests: the Monte Carlo replicas' results
 * (before commit). */
int trace_write_replicas(trace_writer *tw, const campaign_result *r, unsigned n, sim_error *err);

/* Write /step: the step tier's profile of one iteration (before commit). */
int trace_write_step(trace_writer *tw, const step_profile *p, sim_error *err);

/* Write /step/flows: the concurrent iteration's flow log, one row per flow
 * (after trace_write_step; the scenario's <step flow-log> asks for it). */
int trace_write_step_flows(trace_writer *tw, const step_profile *p, sim_error *err);

/* Write /packet, /packet/links and /packet/series (packet_trace.h): the
 * time series of a step iteration run on the packet network (p's
 * packet_series, with the tier's parameters cfg), before commit. */
int trace_write_packet(trace_writer *tw, const scn_scenario *scn, const step_profile *p,
                       const pkt_config *cfg, sim_error *err);

/* Close and delete the temporary file; the final path is not touched.
 * NULL is a no-op. */
void trace_abort(trace_writer *tw);

/* Once, before any other HDF5 call (dcsim's main): no HDF5 exit handler, and
 * quiet. HDF5 1.10 keeps the id of a file whose close (last flush) failed on
 * a full disk half-freed: closing it again, as its exit handler would, is a
 * segmentation fault. Every file dcsim writes is closed explicitly, so the
 * handler has nothing else to do. */
void trace_hdf5_startup(void);

/* A list of texts stored as one more attribute of a table's dataset
 * (trace_write_table), e.g. the hubs a table's jobs_hub_K columns count. */
typedef struct trace_texts {
    const char *name;
    const char *const *values;
    size_t n;
} trace_texts;

/* One table of doubles (rows x columns, with their names and units as
 * attributes; texts, when not NULL, one more attribute) in a new HDF5 file
 * at path, written under a temporary name and renamed: `dcsim compare -o`.
 * inputs: as for trace_open. */
int trace_write_table(const char *path, const char *name, const char *description,
                      const char *const *columns, const char *const *units, size_t n_cols,
                      const char *const *rows, size_t n_rows, const double *values,
                      const trace_texts *texts, const char *const *inputs, size_t n_inputs,
                      sim_error *err);

/* /energy/hourly: the run hour by hour at its site (docs/trace-format.md). */
struct energy_run;
int trace_write_energy(trace_writer *tw, const struct energy_run *er, sim_error *err);

#endif
