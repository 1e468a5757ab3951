/* compare_mc.h - `dcsim compare --replicas N`: each variant's campaign run N
 * times on its own random streams (replica 0 is the plain run, the others
 * seeded as `dcsim run --replicas` seeds them), and the table gains the
 * mean and 95 % confidence half-width of time to train, ETTR and failures
 * per variant. Energy, cost and CO2 stay the plain run's (docs/energy.md,
 * "Comparing with replicas"). */
#ifndef DCSIM_APP_COMPARE_MC_H
#define DCSIM_APP_COMPARE_MC_H

#include "campaign.h"
#include "error.h"
#include "run.h"

/* the columns --replicas appends to the table, in this order */
enum { COMPARE_MC_COLS = 7 };
extern const char *const compare_mc_names[COMPARE_MC_COLS];
extern const char *const compare_mc_units[COMPARE_MC_COLS];

/* Replicas 1 .. n-1 of the plan's campaign (first: replica 0, the plain
 * run), in parallel with OpenMP (any thread count gives the same numbers),
 * summarised into *mc. Returns 0 or the error of the lowest failing replica. */
int compare_mc_run(const run_plan *plan, const campaign_result *first, unsigned n,
                   campaign_mc *mc, sim_error *err);

/* the COMPARE_MC_COLS values of one variant's statistics */
void compare_mc_row(const campaign_mc *mc, double *v);

/* the text block after the table: one line per variant, mean ± half-width */
void compare_mc_print(const char *const *labels, const campaign_mc *const *mc, size_t n);

#endif
