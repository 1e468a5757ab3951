/* compare_table.h - what the tier tables of `dcsim compare` and `dcsim
 * sweep` share (compare_cluster.c, compare_serve.c, compare_hubs.c): a
 * table is a row of named, unit-suffixed doubles per variant, printed and
 * differenced against the first variant the same way in every tier. Each
 * tier keeps its own columns, runs and text; these are the parts that were
 * the same code in each. */
#ifndef DCSIM_APP_COMPARE_TABLE_H
#define DCSIM_APP_COMPARE_TABLE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "compare_cluster.h"
#include "error.h"
#include "trace.h"

/* err, after "LABEL: " unless err's file is the label already (a scenario
 * without --vary); the exit status cli_print_error gives */
int compare_case_error(const compare_case *c, const sim_error *err);

/* the labels' width in a text table: at least 8, at most 72 */
int compare_label_width(const compare_case *cases, size_t n);

/* The dcsim/1 document of a tier's table: the envelope (command "compare"
 * or "sweep"), "kind", "units" (names[k]: units[k]) and an empty
 * "variants" array (*rows). NULL when out of memory. */
cJSON *compare_json_begin(const char *command, const char *kind, const char *const *names,
                          const char *const *units, int n_cols, cJSON **rows);

/* A variant's values v into o, then its "difference" object (v - v0);
 * columns from site_col on only where has_site (in the difference: where
 * the first variant has_site0 too). */
void compare_json_values(cJSON *o, const char *const *names, int n_cols, int site_col,
                         const double *v, int has_site, const double *v0, int has_site0);

/* o->table_path: the dataset o->table_name, a row per variant labelled
 * cases[i].label, its n_cols values at (const char *)first + i * stride
 * and texts (NULL: none) as one more attribute of it (trace_write_table;
 * never over inputs); "table written to" in the text. 0 or the exit status
 * of the error printed. */
int compare_write_rows(const compare_cluster_out *o, const char *description,
                       const char *const *names, const char *const *units, int n_cols,
                       const compare_case *cases, size_t n, const double *first, size_t stride,
                       const trace_texts *texts, const char *const *inputs, size_t n_inputs);

#endif
