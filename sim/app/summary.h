/* summary.h - the run summary: one list of named metrics with units, shown
 * as a terminal table, printed as JSON and stored under /summary in the
 * trace. One list feeds all three so they cannot disagree.
 */
#ifndef DCSIM_APP_SUMMARY_H
#define DCSIM_APP_SUMMARY_H

#include <stdint.h>
#include <stdio.h>

#include "campaign.h"
#include "run.h"
#include "scenario.h"

typedef struct summary_metric {
    const char *name;        /* snake_case with the unit as suffix, e.g. time_to_train_s */
    const char *unit;        /* "s", "FLOP", "1" (dimensionless), "GPU h", ... */
    const char *label;       /* for the terminal table */
    const char *description; /* one line, stored in the trace */
    double value;
    int is_count;            /* printed as an integer */
} summary_metric;

#define SUMMARY_MAX_METRICS 96

typedef struct run_summary {
    summary_metric metrics[SUMMARY_MAX_METRICS];
    size_t n_metrics;
    char event_digest[19];   /* "0x" + 16 hex digits */
    uint64_t failures_by_cause[CAMPAIGN_MAX_CAUSES + 1];
} run_summary;

/* The metrics of a run: the plan (its scenario, finished campaign and what
 * the step tier decided) and the campaign's result. */
void summary_build(const run_plan *plan, const campaign_result *res, run_summary *out);

/* The energy, cost and carbon rows of a run at its <site> (after
 * summary_build). */
struct energy_run;
void summary_add_energy(run_summary *out, const scn_scenario *scn, const campaign_result *res,
                        const struct energy_run *er);

/* The site's header lines (where its values came from) for the table. */
void summary_print_site(FILE *f, const scn_scenario *scn, const struct energy_run *er);
/* "Defaults used" (scn_defaults_used): one line per value the catalogs
 * lacked and a rule filled, each line starting with prefix ("defaults   ");
 * "none" when every value is the catalogs' own. */
void summary_print_defaults(FILE *f, const char *prefix, const scn_scenario *scn);
/* The same as a JSON array of {part, what, value, rule} added to obj under
 * "defaults_used" (empty when none). obj is a cJSON object. */
struct cJSON;
void summary_defaults_json(struct cJSON *obj, const scn_scenario *scn);

/* The output invariant (docs/trace-format.md): every row is finite and
 * >= 0; rows ending in _frac lie in [0, 1], except the PUE rows (>= 1);
 * with mc (may be NULL) its means, sds and half-widths too. Returns 0, or
 * SIM_ERR_INTERNAL naming the first row outside its range (a bug, not bad
 * input: the loader and the campaign refuse what would cause one). */
int summary_check(const run_summary *sum, const campaign_mc *mc, sim_error *err);

/* The same invariant for the replicas' statistics alone (dcsim goodput's
 * curve), and for one named value (a dcsim compare column: the range by
 * the name's suffix as above). */
int summary_check_mc(const campaign_mc *mc, sim_error *err);
int summary_check_value(const char *what, const char *name, double x, sim_error *err);

/* x as the shortest decimal that reads back as exactly the same double
 * (cJSON's printer allows a one-ulp difference); "null" when x is not
 * finite (JSON has no inf or NaN). buf: 32 bytes are enough. */
void summary_number_text(double x, char *buf, size_t size);

/* The aligned table with units (stdout in `dcsim run`). */
void summary_print_table(FILE *f, const run_plan *plan, const campaign_result *res,
                         const run_summary *sum);

/* The same as one JSON object, newline-terminated; malloc'd, NULL when out
 * of memory. */
char *summary_json(const scn_scenario *scn, const run_summary *sum);

/* The document summary_json prints (mc NULL) or summary_json_replicas: the
 * dcsim/1 envelope (jsonout.h) and the run's members, docs/json.md "run";
 * the caller's to cJSON_Delete; NULL when out of memory. */
struct cJSON *summary_json_doc(const scn_scenario *scn, const run_summary *sum,
                               const campaign_mc *mc);

/* With --replicas: the JSON gains "replicas" (mean, ci95, sd per metric);
 * the table a block of the same after the summary. */
char *summary_json_replicas(const scn_scenario *scn, const run_summary *sum,
                            const campaign_mc *mc);
void summary_print_replicas(FILE *f, const campaign_mc *mc);
/* With named failure causes: count and rate per cause (of the run, or the
 * replicas' means when mc is not NULL). */
void summary_print_causes(FILE *f, const scn_scenario *scn, const campaign_result *res,
                          const campaign_mc *mc);

/* The iteration-time rule, spelled out with the scenario's numbers. */
void summary_iteration_rule(const run_plan *plan, const campaign_result *res, char *buf,
                            size_t size);

#endif
