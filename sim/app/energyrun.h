/* energyrun.h - a run's energy, cost and carbon at its <site>: the power
 * model (models/power.h) priced on the scenario's cluster, the campaign's
 * state timeline integrated hour by hour (models/energy.h) at the site's
 * hourly PUE, price and emission factor (docs/energy.md). */
#ifndef DCSIM_APP_ENERGYRUN_H
#define DCSIM_APP_ENERGYRUN_H

#include "campaign.h"
#include "energy.h"
#include "power.h"
#include "scenario.h"
#include "step.h"

typedef struct energy_run {
    pwr_config power;
    pwr_cluster cluster;
    pwr_levels levels;
    pwr_swing swing;
    int network_counted;      /* the fabric's switches and optics are in (a <fabric> given) */
    energy_config cfg;
    energy_account *account;
    campaign_sink inner;      /* the trace's sink, called first */
    energy_result result;
    /* what the cluster has, for capital cost */
    uint64_t n_gpus, n_servers, n_switches, n_nics, n_transceivers, n_cables;
} energy_run;

/* Capital cost of the cluster at the scenario's <costs>, and what the run
 * costs built (amortised over life, plus energy) or rented. */
typedef struct energy_capex {
    double capex;            /* servers + switches + NICs + optics + cables */
    double amortised;        /* capex x run time / life */
    double build;            /* amortised + energy cost */
    double rent;             /* GPUs x run hours x rent per GPU-hour; 0 without a rent */
} energy_capex;
void energy_run_capex(const energy_run *er, const scn_costs *c, double run_s, energy_capex *out);

/* Set up for scenario s (which has a <site>): iteration_s is the campaign's
 * iteration (the power swing's period), compute_frac the GPUs' compute
 * share of it (pwr_compute_frac_of_step of the step profile; 1 without one:
 * every GPU counts as computing the whole iteration, the upper level,
 * docs/energy.md). Returns 0 or an error. */
int energy_run_setup(const scn_scenario *s, double iteration_s, double compute_frac,
                     energy_run *er, sim_error *err);

/* A sink that feeds the timeline to the account and forwards everything to
 * inner (may be NULL or empty). er must outlive the run. */
campaign_sink energy_run_sink(energy_run *er, const campaign_sink *inner);

int energy_run_finish(energy_run *er, sim_error *err);
void energy_run_free(energy_run *er);

#endif
