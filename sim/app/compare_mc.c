/* compare_mc.c - the replicas of `dcsim compare --replicas N` (compare_mc.h). */
#include "compare_mc.h"

#include <stdio.h>
#include <stdlib.h>

const char *const compare_mc_names[COMPARE_MC_COLS] = {
    "replicas",          "time_to_train_s_mean", "time_to_train_s_ci95", "ettr_frac_mean",
    "ettr_frac_ci95",    "failures_mean",        "failures_ci95"};
const char *const compare_mc_units[COMPARE_MC_COLS] = {"1", "s", "s", "1", "1", "1", "1"};

int compare_mc_run(const run_plan *plan, const campaign_result *first, unsigned n,
                   campaign_mc *mc, sim_error *err)
{
    campaign_result *reps = malloc((size_t)n * sizeof *reps);
    if (!reps)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory for %u replicas", n);
    reps[0] = *first;
    int rc = campaign_run_replicas(&plan->campaign, n, reps, NULL, NULL, err);
    if (!rc)
        campaign_mc_summarize(reps, n, mc);
    free(reps);
    return rc;
}

void compare_mc_row(const campaign_mc *mc, double *v)
{
    v[0] = mc->replicas;
    v[1] = mc->time_to_train_s.mean;
    v[2] = mc->time_to_train_s.ci95;
    v[3] = mc->ettr_frac.mean;
    v[4] = mc->ettr_frac.ci95;
    v[5] = mc->failures.mean;
    v[6] = mc->failures.ci95;
}

void compare_mc_print(const char *const *labels, const campaign_mc *const *mc, size_t n)
{
    if (!n)
        return;
    printf("\n%u replicas per variant (mean ± 95 %% confidence half-width; energy, cost and "
           "CO2 above are the plain run's):\n", mc[0]->replicas);
    printf("%-32s %18s %20s %16s\n", "variant", "train d", "ETTR", "failures");
    for (size_t i = 0; i < n; i++)
        printf("%-32s %9.2f ± %6.2f %10.4f ± %7.4f %7.1f ± %6.1f\n", labels[i],
               mc[i]->time_to_train_s.mean / 86400, mc[i]->time_to_train_s.ci95 / 86400,
               mc[i]->ettr_frac.mean, mc[i]->ettr_frac.ci95, mc[i]->failures.mean,
               mc[i]->failures.ci95);
}
