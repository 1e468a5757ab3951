/* test_facility_humid.c - humidity in the facility model (models/facility.h
 * "Humidity"): Stull's wet-bulb formula at the paper's worked example; the
 * Magnus saturation pressure against the steam tables; the evaporative
 * design's compressor and water shares at two wet-bulbs by hand; an unknown
 * wet-bulb gives exactly the dry-bulb model; PUE and water never fall as the
 * air warms at a fixed vapour pressure, and never fall as it gets wetter at a
 * fixed temperature; the hourly profile of a constant climate is the formula
 * itself; a wetter year of an evaporative site costs PUE.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "facility.h"

static void test_formulas(void)
{
    /* Stull (2011), the paper's example: 20 C at 50 % RH -> 13.7 C */
    CHECK_NEAR(fac_wetbulb_c(20, 0.50), 13.7, 0.05);
    /* saturated air: the wet bulb is the dry bulb (Stull's error, ~0.3 K at 99 %) */
    CHECK_NEAR(fac_wetbulb_c(25, 0.99), 25, 0.4);
    double last = -INFINITY;
    for (int r = 5; r <= 100; r += 5) { /* rises with humidity, never above the dry bulb */
        double tw = fac_wetbulb_c(30, r / 100.0);
        CHECK(tw >= last - 1e-12 && tw <= 30);
        last = tw;
    }
    /* saturation pressure: 6.1094 hPa at 0 C (the coefficient); 23.39 hPa at
     * 20 C and 42.47 hPa at 30 C in the steam tables (within 0.5 %) */
    CHECK_NEAR(fac_saturation_hpa(0), 6.1094, 1e-12);
    CHECK_NEAR(fac_saturation_hpa(20), 23.39, 0.005 * 23.39);
    CHECK_NEAR(fac_saturation_hpa(30), 42.47, 0.005 * 42.47);
}

static double cop(const fac_design *d, double t)
{
    double lift = fmax(t + d->condenser_approach_k - d->chilled_supply_c, d->min_lift_k);
    return d->chiller_carnot_frac * (d->chilled_supply_c + 273.15) / lift;
}

static void test_evaporative_by_hand(void)
{
    fac_design d = fac_design_default(FAC_COOLING_EVAPORATIVE);
    CHECK_NEAR(d.evap_effectiveness, 0.85, 0);
    double span = d.evap_full_c - d.evap_start_c; /* 34 - 22 */
    double heat_air = 1 + d.dist_linear_frac + d.dist_square_frac + d.fixed_frac; /* L = 1 */
    double water_per = 3.6 / 2.442 * d.cycles_of_concentration / (d.cycles_of_concentration - 1);
    fac_point p;
    /* 30 C, wet bulb 20 C: 0.85 x 10 = 8.5 K reachable, 8 K needed to the
     * 22 C supply: no compressor, 8/12 of the heat latent */
    fac_evaluate_humid(&d, 30, 20, 1.0, &p);
    CHECK_NEAR(p.mechanical_frac, 0, 1e-15);
    CHECK_NEAR(p.wue_l_per_kwh, 8.0 / span * heat_air * water_per, 1e-12);
    /* 30 C, wet bulb 26 C: 3.4 K, air leaves at 26.6 C; the compressors
     * carry (26.6 - 22) / 12 of the air-side heat */
    fac_evaluate_humid(&d, 30, 26, 1.0, &p);
    CHECK_NEAR(p.mechanical_frac, heat_air * (4.6 / span) / cop(&d, 30), 1e-12);
    CHECK_NEAR(p.wue_l_per_kwh, 3.4 / span * heat_air * water_per, 1e-12);
    /* at or below the supply temperature nothing evaporates */
    fac_evaluate_humid(&d, 21, 10, 1.0, &p);
    CHECK_NEAR(p.wue_l_per_kwh, 0, 0);
    CHECK_NEAR(p.mechanical_frac, 0, 0);
    /* a wet bulb not known: bit for bit the dry-bulb model, every design */
    for (int c = 0; c < FAC_COOLING_COUNT; c++) {
        fac_design e = fac_design_default(c);
        for (double t = -20; t <= 45; t += 2.5) {
            fac_point a, b;
            fac_evaluate(&e, t, 0.7, &a);
            fac_evaluate_humid(&e, t, NAN, 0.7, &b);
            CHECK(memcmp(&a, &b, sizeof a) == 0);
            if (c != FAC_COOLING_EVAPORATIVE) { /* only evaporation looks at the wet bulb */
                fac_evaluate_humid(&e, t, t - 5, 0.7, &b);
                CHECK(memcmp(&a, &b, sizeof a) == 0);
            }
        }
    }
}

static void test_monotone(void)
{
    fac_design d = fac_design_default(FAC_COOLING_EVAPORATIVE);
    /* air of a fixed vapour pressure (dew point 15 C) warming from 16 to 45 C */
    double vapour = fac_saturation_hpa(15), last_pue = 0, last_wue = 0;
    for (double t = 16; t <= 45; t += 0.25) {
        double rh = fmin(1, vapour / fac_saturation_hpa(t));
        fac_point p;
        fac_evaluate_humid(&d, t, fac_wetbulb_c(t, rh), 0.8, &p);
        CHECK(p.pue >= last_pue - 1e-12);
        CHECK(p.wue_l_per_kwh >= last_wue - 1e-12);
        last_pue = p.pue;
        last_wue = p.wue_l_per_kwh;
    }
    /* 32 C air getting wetter: never a lower PUE, never more water (less
     * evaporation is possible) */
    double pue = 0, wue = INFINITY;
    for (int r = 5; r <= 100; r += 5) {
        fac_point p;
        fac_evaluate_humid(&d, 32, fac_wetbulb_c(32, r / 100.0), 0.8, &p);
        CHECK(p.pue >= pue - 1e-12);
        CHECK(p.wue_l_per_kwh <= wue + 1e-12);
        pue = p.pue;
        wue = p.wue_l_per_kwh;
    }
}

static void test_profile_and_year(void)
{
    fac_climate c;
    fac_climate_init(&c);
    for (int m = 0; m < FAC_MONTHS; m++)
        c.monthly_mean_c[m] = 27;
    c.diurnal_amplitude_k = 0;
    enum { H = 48 };
    double t[H], wb[H];
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(fac_temperature_profile(&c, 0, H, t, &err), 0);
    fac_wetbulb_profile(&c, 0, H, t, wb);
    for (int h = 0; h < H; h++)
        CHECK(isnan(wb[h])); /* humidity not known */
    c.rh_annual = 0.6;
    fac_wetbulb_profile(&c, 0, H, t, wb);
    for (int h = 0; h < H; h++) /* a constant climate: the formula itself */
        CHECK_NEAR(wb[h], fac_wetbulb_c(27, 0.6), 1e-9);
    c.rh_annual = 1.5;
    CHECK_INT_EQ(fac_climate_check(&c, &err), SIM_ERR_INPUT);
    CHECK_CONTAINS(err.msg, "relative humidity 1.5");

    /* a year of a warm site: wetter air, higher annual PUE and less water */
    static const double mean_c[12] = {5, 7, 11, 16, 21, 25, 28, 27, 23, 18, 12, 7};
    fac_climate y;
    fac_climate_init(&y);
    memcpy(y.monthly_mean_c, mean_c, sizeof mean_c);
    fac_design d = fac_design_default(FAC_COOLING_EVAPORATIVE);
    double *temp = malloc(3 * FAC_HOURS_PER_YEAR * sizeof *temp);
    CHECK(temp != NULL);
    if (!temp)
        return;
    double *it = temp + FAC_HOURS_PER_YEAR, *w = temp + 2 * FAC_HOURS_PER_YEAR;
    CHECK_INT_EQ(fac_temperature_profile(&y, 0, FAC_HOURS_PER_YEAR, temp, &err), 0);
    for (int h = 0; h < FAC_HOURS_PER_YEAR; h++)
        it[h] = 1e6;
    double last_pue = 0, last_water = INFINITY;
    for (int r = 30; r <= 90; r += 30) {
        y.rh_annual = r / 100.0;
        fac_wetbulb_profile(&y, 0, FAC_HOURS_PER_YEAR, temp, w);
        fac_totals tot;
        CHECK_INT_EQ(fac_energy_humid(&d, 1e6, it, temp, w, FAC_HOURS_PER_YEAR, NULL, &tot, &err),
                     0);
        CHECK(tot.pue >= last_pue);
        CHECK(tot.water_l <= last_water);
        last_pue = tot.pue;
        last_water = tot.water_l;
    }
    CHECK(last_pue > 1);
    free(temp);
}

int main(void)
{
    test_formulas();
    test_evaporative_by_hand();
    test_monotone();
    test_profile_and_year();
    return check_report();
}
