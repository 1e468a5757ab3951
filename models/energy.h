/* energy.h - what a run costs in energy, money and carbon: the IT power of
 * each campaign state integrated over the state timeline into hourly IT
 * energy, each hour's facility energy from the site's hourly PUE (outdoor
 * temperature and IT load), then cost and CO2.
 *
 *   IT energy        E_IT = sum over timeline intervals of P(state) x duration
 *                         = sum over hours h of E_IT,h (the intervals split at hours)
 *   facility energy  E_F  = sum_h E_IT,h x PUE(T_h, L_h),  L_h = mean IT power in h / design
 *   water            W    = sum_h E_IT,h [kWh] x WUE(T_h, L_h)
 *   cost                  = E_F [kWh] x price (flat: no time-of-use tariff is sourced)
 *   CO2                   = E_F [kWh] x emission factor x (1 - green share)
 *
 * Hour 0 of the run is start_hour of the climate's year (0 = 1 January
 * 00:00). Accumulate with energy_add_interval as the campaign reports its
 * timeline, then energy_finish. */
#ifndef DCSIM_MODELS_ENERGY_H
#define DCSIM_MODELS_ENERGY_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "facility.h"

#define ENERGY_STATES 5 /* enum campaign_state */

typedef struct energy_config {
    double state_power_w[ENERGY_STATES]; /* IT power in each campaign state */
    double design_it_w;                  /* the IT load the facility is built for (> 0) */
    fac_design design;
    fac_climate climate;
    uint64_t start_hour;                 /* of the climate's year when the run starts */
    double price_per_kwh;                /* currency per kWh of facility energy, >= 0 */
    double emission_kg_per_kwh;          /* grid factor, >= 0 */
    double green_share;                  /* [0, 1]: energy bought as green power */
} energy_config;

typedef struct energy_result {
    double it_energy_j, facility_energy_j;
    double pue;                  /* facility / IT energy */
    double pue_min, pue_max;     /* over the hours */
    double pue_annual;           /* the site's year at the computing load: its PUE
                                    whatever the season of the run */
    double peak_it_w;            /* the highest state power the run used */
    double peak_facility_w;      /* the highest hourly mean facility power */
    double water_l;
    double cost;                 /* currency of price_per_kwh */
    double co2_kg;
    double hours;                /* the run's length in hours */
} energy_result;

typedef struct energy_account energy_account;

/* NULL with err set on a bad config or no memory. */
energy_account *energy_account_create(const energy_config *cfg, sim_error *err);
void energy_account_free(energy_account *a); /* NULL-safe */

/* An interval [start_s, end_s) of the run spent in state. Intervals may come
 * in any order; they must not overlap (the timeline's do not). Returns 0 or
 * SIM_ERR_NOMEM. */
int energy_add_interval(energy_account *a, double start_s, double end_s, int state,
                        sim_error *err);

/* An interval [start_s, end_s) at IT power power_w (>= 0, finite): what
 * energy_add_interval does for a state's power, for callers whose power is
 * not one of the states' (the cluster tier's busy-GPU count). Returns 0,
 * SIM_ERR_INPUT for a bad power or SIM_ERR_NOMEM. */
int energy_add_power(energy_account *a, double start_s, double end_s, double power_w,
                     sim_error *err);

/* Totals, after the last interval. Returns 0 or an error. */
int energy_finish(energy_account *a, energy_result *out, sim_error *err);

/* The hourly IT energy so far (J per hour of the run), for tests and traces. */
const double *energy_hourly_it_j(const energy_account *a, size_t *n_hours);

/* After energy_finish: each hour's outdoor temperature (degC) and PUE
 * (0 for an hour without IT energy); NULL before. */
const double *energy_hourly_temp_c(const energy_account *a);
const double *energy_hourly_pue(const energy_account *a);

#endif
