/* compare_hubs.h - `dcsim compare` and `dcsim sweep` over hubs scenarios
 * (a <hubs> section, docs/hubs.md "Comparing and sweeping"): every variant
 * is loaded and run as `dcsim hubs --set ...` runs it (hubs_execute: the
 * scenario's policy and the baseline nearest, every hub accounted at its
 * own site), and the table holds the run's totals that dcsim hubs prints
 * (jobs, GPU-hours, utilisation, waits, energy, PUE, cost, CO2, water,
 * data moved, serving RTT and SLO violations, deferral, fallbacks), the
 * saving against nearest and the jobs placed at each hub, with each
 * variant's difference against the first. compare.c and sweep_hubs.c build
 * the variants (compare_cluster.h's compare_case) and hand them over. */
#ifndef DCSIM_APP_COMPARE_HUBS_H
#define DCSIM_APP_COMPARE_HUBS_H

#include <stddef.h>

#include "compare_cluster.h"

/* 1 when the scenario at path has a <hubs> section (it has a
 * <cluster-jobs> too, the template: the hubs test comes first); 0
 * otherwise (NULL: the built-in default), or when it cannot be read. */
int compare_is_hubs(const char *path);

/* Run the n variants one after another and print the table as o asks
 * (command "compare" or "sweep"); with o->table_path, also the HDF5
 * dataset o->table_name, a row per variant, never written over o->inputs
 * or the variants' own input files. A case's site and start_month are
 * not used (a hub's are its <hub>'s; compare.c refuses them). Returns the exit
 * status (an error printed as "LABEL: ..."). */
int compare_hubs(const compare_case *cases, size_t n, const compare_cluster_out *o);

#endif
