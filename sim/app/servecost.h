/* servecost.h - what a serving run costs at the scenario's <site> in
 * energy, money and CO2, per million output tokens (dcsim serve;
 * docs/serving.md "Cost, energy and CO2"). The energy tier's functions
 * (energyrun.h, models/power.h, models/energy.h) on the serving fleet. */
#ifndef DCSIM_APP_SERVECOST_H
#define DCSIM_APP_SERVECOST_H

#include "energyrun.h"
#include "scenario.h"
#include "serving.h"

typedef struct serve_cost {
    double gpus, gpu_hours;      /* the fleet (replicas x tp) and GPUs x the run's end */
    double busy_fraction;        /* the GPUs' compute share: the replicas' busy time */
    double it_power_w;           /* the fleet's IT power at that share */
    double mtok;                 /* output tokens / 1e6 */
    energy_result e;             /* IT and facility energy, PUE, cost, CO2 over [0, end] */
    double kwh_per_mtok, cost_per_mtok, co2_kg_per_mtok; /* facility energy, energy cost, CO2 */
    double build_per_mtok;       /* with <costs>: amortised capital + energy; else 0 */
    double rent_per_mtok;        /* with <costs rent-per-gpu-hour>: else 0 */
    int has_costs, has_rent;
    char basis[320];             /* the power figures, price and factors used, one line */
} serve_cost;

/* The run r of fleet c in scenario s (which has a <site>): the cluster's
 * IT power at the busy fraction (each GPU at TDP (f k_c + (1 - f) k_m): a
 * replica between iterations waits, the energy tier's communicating-or-
 * waiting level; hosts busy; the fabric when the scenario has one) over
 * [0, end], hour by hour at the site's PUE, price and emission factor.
 * The fleet is c's (replicas x tp GPUs), which may differ from the
 * cluster's count (--size). Returns 0, or an error (no output tokens). */
int serve_cost_at_site(const scn_scenario *s, const serve_config *c, const serve_result *r,
                       serve_cost *out, sim_error *err);

#endif
