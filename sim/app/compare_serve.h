/* compare_serve.h - `dcsim compare` and `dcsim sweep` over serving
 * scenarios (<serving> and no <job>, docs/serving.md "Comparing and
 * sweeping"): every variant is loaded and run as `dcsim serve --set ...`
 * runs it (serve_prepare, serve_simulate, serve_cost_at_site), and the
 * table holds the figures dcsim serve prints per variant (latency
 * quantiles, throughput, goodput, drops, preemptions, KV use, GPUs and, at
 * a <site>, energy and cost per million output tokens) and their
 * differences against the first. compare.c and sweep_serve.c build the
 * variants (compare_cluster.h's compare_case) and hand them over. */
#ifndef DCSIM_APP_COMPARE_SERVE_H
#define DCSIM_APP_COMPARE_SERVE_H

#include <stddef.h>

#include "compare_cluster.h"

/* 1 when the scenario at path is a serving fleet: a <serving>, and neither
 * a <job> nor a <cluster-jobs>; 0 otherwise (NULL: the built-in default,
 * which trains), or when it cannot be read (the training path then reports
 * why). */
int compare_is_serve(const char *path);

/* Run the n variants (their simulations in parallel on the OpenMP threads,
 * each into its own slot: the table does not depend on the thread count)
 * and print the table as o asks (command "compare" or "sweep"); with
 * o->table_path, also the HDF5 dataset o->table_name, a row per variant
 * (NaN in the site columns without a <site>), never written over o->inputs
 * or the variants' own input files. Returns the exit status (an error
 * printed as "LABEL: ..."). */
int compare_serve(const compare_case *cases, size_t n, const compare_cluster_out *o);

#endif
