/* compare_cluster.h - `dcsim compare` (and `dcsim sweep`) over job-stream scenarios
 * (<cluster-jobs> without a <job>, docs/cluster.md "Comparing policies and
 * sites"): every variant is run through clusterrun.h, as `dcsim cluster`
 * runs it, and the table holds the cluster figures per variant and their
 * differences against the first. compare.c builds the variants (the
 * scenarios times the --vary values) and hands them over. */
#ifndef DCSIM_APP_COMPARE_CLUSTER_H
#define DCSIM_APP_COMPARE_CLUSTER_H

#include <stddef.h>

#include "error.h"
#include "scenario.h"

/* one variant as compare.c made it: its label, scenario (NULL: the built-in
 * default), --set strings, --vary site (or NULL) and --start-month (or 0) */
typedef struct compare_case {
    const char *label, *path;
    const char *const *sets;
    size_t n_sets;
    const char *site;
    unsigned start_month;
} compare_case;

/* 1 when the scenario at path (NULL: the built-in default) is a job stream:
 * a <cluster-jobs> and no <job>; 0 otherwise, or when it cannot be read
 * (the training path then reports why). */
int compare_is_cluster(const char *path);

/* Which of names[0 .. n-1] (n <= 32) are top-level elements of the scenario
 * at path: bit k set for names[k]. 0 for NULL (the built-in default) or a
 * file that cannot be read (the run then reports why). */
unsigned compare_top_elements(const char *path, const char *const *names, unsigned n);

/* what to do with the table: command ("compare", or "sweep" over a job
 * stream: the JSON's command and the text's title), json / csv / text on
 * stdout, and table_path non-NULL: also an HDF5 file of one table (the
 * dataset table_name, a row per variant, trace_write_table) never written
 * over the inputs */
typedef struct compare_cluster_out {
    const char *command;
    int json, csv;
    const char *table_path, *table_name;
    const char *const *inputs;
    size_t n_inputs;
} compare_cluster_out;

/* Run the n variants one after another and print the table (and write it,
 * o->table_path). Returns the exit status (an error printed as "LABEL: ..."). */
int compare_cluster(const compare_case *cases, size_t n, const compare_cluster_out *o);

/* compare.c: put scenario s at the catalog site `site` (NULL: keep its own
 * <site>) from month start_month (0: its own); 0 or SIM_ERR_INPUT with err
 * filled for an unknown site */
int compare_put_site(scn_scenario *s, const char *site, unsigned start_month, sim_error *err);

#endif
