/* energy.c - the run's energy, cost and carbon (energy.h). */
#include "energy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct energy_account {
    energy_config cfg;
    double *hour_it_j;   /* IT energy in hour h of the run */
    size_t n_hours, capacity;
    double end_s;        /* the latest interval end: the run's length */
    double peak_it_w;
    double *temp_c, *pue; /* per hour, after energy_finish */
};

energy_account *energy_account_create(const energy_config *cfg, sim_error *err)
{
    int bad = !(cfg->design_it_w > 0 && isfinite(cfg->design_it_w)) ||
              !(cfg->price_per_kwh >= 0 && isfinite(cfg->price_per_kwh)) ||
              !(cfg->emission_kg_per_kwh >= 0 && isfinite(cfg->emission_kg_per_kwh)) ||
              !(cfg->green_share >= 0 && cfg->green_share <= 1);
    for (int k = 0; k < ENERGY_STATES; k++)
        bad |= !(cfg->state_power_w[k] >= 0 && isfinite(cfg->state_power_w[k]));
    if (bad) {
        sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                      "energy: powers, price and emission factor must be finite and >= 0, the "
                      "design IT power > 0 and the green share in [0, 1]");
        return NULL;
    }
    if (fac_design_check(&cfg->design, err) || fac_climate_check(&cfg->climate, err))
        return NULL;
    energy_account *a = calloc(1, sizeof *a);
    if (!a) {
        sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory for the energy account");
        return NULL;
    }
    a->cfg = *cfg;
    return a;
}

void energy_account_free(energy_account *a)
{
    if (!a)
        return;
    free(a->hour_it_j);
    free(a->temp_c);
    free(a->pue);
    free(a);
}

static int grow(energy_account *a, size_t hours, sim_error *err)
{
    if (hours <= a->n_hours)
        return 0;
    if (hours > a->capacity) {
        size_t cap = a->capacity ? a->capacity : 1024;
        while (cap < hours)
            cap *= 2;
        double *h = realloc(a->hour_it_j, cap * sizeof *h);
        if (!h)
            return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory for hourly energy");
        a->hour_it_j = h;
        a->capacity = cap;
    }
    memset(a->hour_it_j + a->n_hours, 0, (hours - a->n_hours) * sizeof *a->hour_it_j);
    a->n_hours = hours;
    return 0;
}

int energy_add_interval(energy_account *a, double start_s, double end_s, int state,
                        sim_error *err)
{
    if (!(end_s > start_s) || state < 0 || state >= ENERGY_STATES)
        return 0; /* an empty interval carries no energy */
    return energy_add_power(a, start_s, end_s, a->cfg.state_power_w[state], err);
}

int energy_add_power(energy_account *a, double start_s, double end_s, double power_w,
                     sim_error *err)
{
    if (!(end_s > start_s) || !(start_s >= 0))
        return 0; /* an empty interval carries no energy */
    if (!(power_w >= 0 && isfinite(power_w)))
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "energy: power %g W must be finite "
                             "and >= 0", power_w);
    double p = power_w;
    if (p > a->peak_it_w)
        a->peak_it_w = p;
    if (end_s > a->end_s)
        a->end_s = end_s;
    size_t first = (size_t)floor(start_s / 3600), last = (size_t)floor(end_s / 3600);
    int rc = grow(a, last + 1, err);
    if (rc)
        return rc;
    for (size_t h = first; h <= last; h++) { /* the part of [start, end) inside hour h */
        double lo = fmax(start_s, 3600.0 * (double)h), hi = fmin(end_s, 3600.0 * (double)(h + 1));
        if (hi > lo)
            a->hour_it_j[h] += p * (hi - lo);
    }
    return 0;
}

const double *energy_hourly_it_j(const energy_account *a, size_t *n_hours)
{
    *n_hours = a->n_hours;
    return a->hour_it_j;
}

const double *energy_hourly_temp_c(const energy_account *a) { return a->temp_c; }
const double *energy_hourly_pue(const energy_account *a) { return a->pue; }

int energy_finish(energy_account *a, energy_result *out, sim_error *err)
{
    energy_result r;
    memset(&r, 0, sizeof r);
    r.hours = a->end_s / 3600;
    r.peak_it_w = a->peak_it_w;
    r.pue_min = INFINITY;
    r.pue_max = 0;
    size_t n = a->n_hours;
    double *temp = malloc((n ? n : 1) * sizeof *temp);
    double *pue_h = calloc(n ? n : 1, sizeof *pue_h);
    if (!temp || !pue_h) {
        free(temp);
        free(pue_h);
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory for temperatures");
    }
    int rc = n ? fac_temperature_profile(&a->cfg.climate, a->cfg.start_hour, n, temp, err) : 0;
    /* the wet-bulb of each hour, overwriting pue_h until it is used */
    if (!rc)
        fac_wetbulb_profile(&a->cfg.climate, a->cfg.start_hour, n, temp, pue_h);
    for (size_t h = 0; !rc && h < n; h++) {
        double e = a->hour_it_j[h];
        if (!(e > 0)) {
            pue_h[h] = 0; /* no IT energy: no PUE */
            continue;
        }
        /* the hour's mean load over the part of it the run lasted */
        double length = fmin(3600.0, a->end_s - 3600.0 * (double)h);
        double load = e / length / a->cfg.design_it_w;
        fac_point p;
        fac_evaluate_humid(&a->cfg.design, temp[h], pue_h[h], load, &p);
        double pue = p.pue;
        pue_h[h] = pue;
        r.it_energy_j += e;
        r.facility_energy_j += e * pue;
        r.water_l += e / 3.6e6 * p.wue_l_per_kwh;
        r.pue_min = fmin(r.pue_min, pue);
        r.pue_max = fmax(r.pue_max, pue);
        r.peak_facility_w = fmax(r.peak_facility_w, e * pue / length);
    }
    free(a->temp_c);
    free(a->pue);
    a->temp_c = temp;
    a->pue = pue_h;
    if (rc)
        return rc;
    /* the whole year at the load of the cluster computing */
    enum { YEAR = FAC_HOURS_PER_YEAR };
    double *year = malloc(3 * YEAR * sizeof *year); /* temperature, power, wet-bulb */
    if (!year)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory for a year of hours");
    double compute_w = fmin(a->cfg.state_power_w[0], a->cfg.design_it_w);
    for (int h = 0; h < YEAR; h++)
        year[YEAR + h] = compute_w > 0 ? compute_w : a->cfg.design_it_w;
    fac_totals annual;
    rc = fac_temperature_profile(&a->cfg.climate, 0, YEAR, year, err);
    if (!rc) {
        fac_wetbulb_profile(&a->cfg.climate, 0, YEAR, year, year + 2 * YEAR);
        rc = fac_energy_humid(&a->cfg.design, a->cfg.design_it_w, year + YEAR, year,
                              year + 2 * YEAR, YEAR, NULL, &annual, err);
    }
    free(year);
    if (rc)
        return rc;
    r.pue_annual = annual.pue;
    if (!(r.it_energy_j > 0))
        r.pue_min = r.pue_max = 0;
    r.pue = r.it_energy_j > 0 ? r.facility_energy_j / r.it_energy_j : 0;
    double kwh = r.facility_energy_j / 3.6e6;
    r.cost = kwh * a->cfg.price_per_kwh;
    r.co2_kg = kwh * a->cfg.emission_kg_per_kwh * (1 - a->cfg.green_share);
    *out = r;
    return 0;
}
