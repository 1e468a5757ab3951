/* facility.c - hourly outdoor temperature and the PUE / water model
 * (equations and choices in facility.h; sources in docs/facility.md). */
#include "facility.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_linalg.h>
#include <gsl/gsl_math.h> /* M_PI, whatever the C dialect */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_spline.h>

#include "rng.h"

static const unsigned month_days[FAC_MONTHS] = {31, 28, 31, 30, 31, 30,
                                                31, 31, 30, 31, 30, 31};

unsigned fac_month_hours(int month)
{
    return (month >= 0 && month < FAC_MONTHS) ? 24u * month_days[month] : 0u;
}

unsigned fac_month_start_hour(int month)
{
    unsigned h = 0;
    for (int m = 0; m < month && m < FAC_MONTHS; m++)
        h += fac_month_hours(m);
    return h;
}

int fac_month_of_hour(uint64_t hour)
{
    unsigned h = (unsigned)(hour % FAC_HOURS_PER_YEAR);
    int m = 0;
    while (m < FAC_MONTHS - 1 && h >= fac_month_hours(m)) {
        h -= fac_month_hours(m);
        m++;
    }
    return m;
}

int fac_hour_of_day(uint64_t hour) { return (int)(hour % 24); }

void fac_climate_init(fac_climate *c)
{
    memset(c, 0, sizeof *c);
    c->diurnal_amplitude_k = FAC_DEFAULT_DIURNAL_AMPLITUDE_K;
    c->noise_corr_h = FAC_DEFAULT_NOISE_CORR_H;
}

int fac_climate_check(const fac_climate *c, sim_error *err)
{
    for (int m = 0; m < FAC_MONTHS; m++)
        if (!isfinite(c->monthly_mean_c[m]))
            return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                                 "climate: monthly mean %d is not a finite temperature", m + 1);
    if (!isfinite(c->diurnal_amplitude_k) || c->diurnal_amplitude_k < 0)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "climate: diurnal amplitude %g K must be >= 0",
                             c->diurnal_amplitude_k);
    if (!(c->rh_annual >= 0 && c->rh_annual <= 1))
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "climate: relative humidity %g must be from 0 to 1 (0: not known)",
                             c->rh_annual);
    if (!isfinite(c->noise_sd_k) || c->noise_sd_k < 0)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "climate: noise standard deviation %g K must be >= 0",
                             c->noise_sd_k);
    if (c->noise_sd_k > 0 && !(isfinite(c->noise_corr_h) && c->noise_corr_h > 0))
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "climate: noise correlation time %g h must be > 0",
                             c->noise_corr_h);
    return 0;
}

/* The diurnal cycle at hour of day t (see facility.h). */
static double diurnal(double amplitude_k, int t)
{
    if (t >= 5 && t < 15)
        return -amplitude_k * cos(M_PI * (t - 5) / 10.0);
    int since_max = (t + 24 - 15) % 24; /* 0 .. 13 */
    return amplitude_k * cos(M_PI * since_max / 14.0);
}

/* Mid-month knots of the seasonal spline, in hours from 1 January 00:00;
 * knot 12 is January again, one year later, closing the period. */
static void month_knots(double knot_h[FAC_MONTHS + 1])
{
    for (int m = 0; m < FAC_MONTHS; m++)
        knot_h[m] = fac_month_start_hour(m) + 0.5 * fac_month_hours(m);
    knot_h[FAC_MONTHS] = knot_h[0] + FAC_HOURS_PER_YEAR;
}

/* The seasonal baseline B over one year of hours, into base[8760]: solve the
 * anchors whose spline has the given monthly means (the spline is linear in
 * its anchors, so the month-mean matrix M[m][k] = mean over month m of the
 * spline through the unit anchor k is computed once, exactly as the hours
 * are sampled), then evaluate. Returns 0 or SIM_ERR_NOMEM. */
static int seasonal_baseline(const double mean_c[FAC_MONTHS], double *base, sim_error *err)
{
    double knot_h[FAC_MONTHS + 1], y[FAC_MONTHS + 1];
    month_knots(knot_h);
    gsl_interp *interp = gsl_interp_alloc(gsl_interp_cspline_periodic, FAC_MONTHS + 1);
    gsl_interp_accel *acc = gsl_interp_accel_alloc();
    gsl_matrix *mm = gsl_matrix_alloc(FAC_MONTHS, FAC_MONTHS);
    gsl_vector *rhs = gsl_vector_alloc(FAC_MONTHS), *anchor = gsl_vector_alloc(FAC_MONTHS);
    gsl_permutation *perm = gsl_permutation_alloc(FAC_MONTHS);
    int rc = 0;
    if (!interp || !acc || !mm || !rhs || !anchor || !perm) {
        rc = sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory (temperature profile)");
        goto done;
    }
    /* hours before January's knot belong to the previous period */
#define SPLINE_AT(h) gsl_interp_eval(interp, knot_h, y, \
                                     (h) < knot_h[0] ? (h) + FAC_HOURS_PER_YEAR : (double)(h), acc)
    for (int k = 0; k < FAC_MONTHS; k++) {
        memset(y, 0, sizeof y);
        y[k] = 1.0;
        y[FAC_MONTHS] = y[0];
        gsl_interp_init(interp, knot_h, y, FAC_MONTHS + 1);
        for (int m = 0; m < FAC_MONTHS; m++) {
            unsigned h0 = fac_month_start_hour(m), n = fac_month_hours(m);
            double sum = 0;
            for (unsigned h = h0; h < h0 + n; h++)
                sum += SPLINE_AT(h);
            gsl_matrix_set(mm, m, k, sum / n);
        }
    }
    for (int m = 0; m < FAC_MONTHS; m++)
        gsl_vector_set(rhs, m, mean_c[m]);
    int sign;
    /* M is well conditioned (each anchor weighs most in its own month);
     * GSL's status is still checked */
    if (gsl_linalg_LU_decomp(mm, perm, &sign) || gsl_linalg_LU_solve(mm, perm, rhs, anchor)) {
        rc = sim_error_set(err, SIM_ERR_INTERNAL, NULL, 0,
                           "temperature profile: the monthly-mean system is singular");
        goto done;
    }
    for (int k = 0; k < FAC_MONTHS; k++)
        y[k] = gsl_vector_get(anchor, k);
    y[FAC_MONTHS] = y[0];
    gsl_interp_init(interp, knot_h, y, FAC_MONTHS + 1);
    for (unsigned h = 0; h < FAC_HOURS_PER_YEAR; h++)
        base[h] = SPLINE_AT(h);
#undef SPLINE_AT
done:
    gsl_permutation_free(perm);
    gsl_vector_free(anchor);
    gsl_vector_free(rhs);
    gsl_matrix_free(mm);
    gsl_interp_accel_free(acc);
    gsl_interp_free(interp);
    return rc;
}

/* Year y's weather noise into noise[8760]: AR(1) with stationary standard
 * deviation sd and correlation exp(-1/tau) from hour to hour, each month
 * re-centred to zero mean. */
static int year_noise(const fac_climate *c, uint64_t year, double *noise, sim_error *err)
{
    gsl_rng *r = gsl_rng_alloc(sim_rng_xoshiro256);
    if (!r)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory (weather noise)");
    gsl_rng_set(r, (unsigned long)(c->noise_seed + year * 0x9e3779b97f4a7c15ull));
    double phi = exp(-1.0 / c->noise_corr_h);
    double innovation_sd = c->noise_sd_k * sqrt(1.0 - phi * phi);
    double x = gsl_ran_gaussian(r, c->noise_sd_k);
    for (unsigned h = 0; h < FAC_HOURS_PER_YEAR; h++) {
        noise[h] = x;
        x = phi * x + gsl_ran_gaussian(r, innovation_sd);
    }
    gsl_rng_free(r);
    for (int m = 0; m < FAC_MONTHS; m++) {
        unsigned h0 = fac_month_start_hour(m), n = fac_month_hours(m);
        double sum = 0;
        for (unsigned h = h0; h < h0 + n; h++)
            sum += noise[h];
        for (unsigned h = h0; h < h0 + n; h++)
            noise[h] -= sum / n;
    }
    return 0;
}

int fac_temperature_profile(const fac_climate *c, uint64_t start_hour, size_t n_hours,
                            double *temp_c, sim_error *err)
{
    int rc = fac_climate_check(c, err);
    if (rc)
        return rc;
    if (n_hours == 0)
        return 0;
    int has_noise = c->noise_sd_k > 0;
    double *base = malloc(FAC_HOURS_PER_YEAR * sizeof *base);
    double *noise = has_noise ? malloc(FAC_HOURS_PER_YEAR * sizeof *noise) : NULL;
    if (!base || (has_noise && !noise)) {
        rc = sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory (temperature profile)");
        goto done;
    }
    rc = seasonal_baseline(c->monthly_mean_c, base, err);
    if (rc)
        goto done;
    uint64_t noise_year = UINT64_MAX; /* the year whose noise is in noise[] */
    for (size_t i = 0; i < n_hours; i++) {
        uint64_t hour = start_hour + i;
        unsigned h = (unsigned)(hour % FAC_HOURS_PER_YEAR);
        double t = base[h] + diurnal(c->diurnal_amplitude_k, fac_hour_of_day(hour));
        if (has_noise) {
            uint64_t year = hour / FAC_HOURS_PER_YEAR;
            if (year != noise_year) {
                rc = year_noise(c, year, noise, err);
                if (rc)
                    goto done;
                noise_year = year;
            }
            t += noise[h];
        }
        temp_c[i] = t;
    }
done:
    free(noise);
    free(base);
    return rc;
}

/* ---- PUE ---- */

static const char *const cooling_names[FAC_COOLING_COUNT] = {
    "air-chiller", "air-economiser", "evaporative", "direct-liquid"};

const char *fac_cooling_name(int cooling)
{
    return (cooling >= 0 && cooling < FAC_COOLING_COUNT) ? cooling_names[cooling] : NULL;
}

int fac_cooling_parse(const char *name, int *out)
{
    for (int k = 0; k < FAC_COOLING_COUNT; k++)
        if (name && strcmp(name, cooling_names[k]) == 0) {
            *out = k;
            return 0;
        }
    return -1;
}

/* Defaults (docs/facility.md has the table; sites.md and calibration.md are
 * in shared/reference). Shared by every design so that designs differ only
 * in how they cool: above its free-cooling range the economiser is exactly
 * the chiller plant. */
fac_design fac_design_default(int cooling)
{
    fac_design d = {
        .cooling = cooling,
        /* assumption (A): 1 % of design IT power for lighting, controls,
         * security and the no-load losses of UPS and transformers; small
         * next to the ~3 % the calibration leaves for the fans */
        .fixed_frac = 0.01,
        /* assumption (A): 3 % lost at full load between the grid and the
         * IT equipment (transformer ~1 %, double-conversion UPS ~2 %, PDUs
         * and cables): 2.5 % in proportion to load, 0.5 % resistive (L^2) */
        .dist_linear_frac = 0.025,
        .dist_square_frac = 0.005,
        /* calibrated (D): Meta Lulea, outside-air cooling, mean ~2 C (all
         * hours free-cooled), PUE 1.07 (sites.md 10, V): 1.07 = 1 + F + E(1)
         * + k_air (1 + E(1) + F) at full load (A: the load was not
         * published) gives k_air = 0.03 / 1.04 = 0.0288 -> 0.029 */
        .air_transport_frac = 0.029,
        /* calibrated (D): China Mobile Qingyang, immersion cooled, PUE 1.07
         * (sites.md 10, S), taken as liquid cooling with c = 1 and no
         * compressor (Qingyang's warmest month is 21.4 C, sites.md 4.1, V);
         * at full load (A) k_liq = (0.07 - 0.04 - k_air 0.04) / 1 = 0.0288
         * -> 0.029 */
        .liquid_transport_frac = 0.029,
        .liquid_capture_frac = 0.0,
        /* assumption (A): the whole chiller plant (compressor, condenser
         * pumps and tower or condenser fans) reaches 40 % of Carnot; with
         * the temperatures below that is COP ~4.9 at 30 C outdoor and ~8
         * at 20 C, the range of modern water-cooled plants */
        .chiller_carnot_frac = 0.40,
        /* assumption (A): 18 C chilled supply, a raised set point for
         * ASHRAE-recommended inlet air (18-27 C) */
        .chilled_supply_c = 18.0,
        /* assumption (A): 32 C supply, a warm-water cold-plate loop */
        .liquid_supply_c = 32.0,
        /* assumption (A): heat is rejected 12 K above outdoor air */
        .condenser_approach_k = 12.0,
        /* assumption (A): compressors keep at least a 10 K lift */
        .min_lift_k = 10.0,
        /* assumption (A): air supplied at 22 C and returning at 34 C (a
         * 12 K rise across the racks): outdoor air at or below 22 C cools
         * alone, above 34 C it cannot help */
        .free_full_c = 22.0,
        .free_none_c = 34.0,
        /* assumption (A): dry coolers 5 K above outdoor air, so the 32 C
         * supply holds up to 27 C outdoor and the 42 C return (10 K rise)
         * still helps up to 37 C */
        .liquid_free_full_c = 27.0,
        .liquid_free_none_c = 37.0,
        /* physics: evaporating to bring outdoor air down to the 22 C supply
         * takes (T - 22) / (34 - 22) of the heat (see facility.h) */
        .evap_start_c = 22.0,
        .evap_full_c = 34.0,
        /* assumption (A): spray or pad pumps 0.5 % of the heat evaporated */
        .evap_transport_frac = 0.005,
        /* assumption (A): 3 cycles of concentration, the low end of
         * common practice (3-6) without water treatment data */
        .cycles_of_concentration = 3.0,
        /* assumption (A): direct evaporative media remove 85 % of the
         * wet-bulb depression (saturation effectiveness; no figure in
         * shared/reference; the middle of the 70-95 % that pad and media
         * makers state); used only where the site's humidity is known */
        .evap_effectiveness = 0.85,
    };
    switch (cooling) {
    case FAC_COOLING_EVAPORATIVE:
        /* assumption (A): the evaporative stage reaches the 22 C supply
         * until ~28 C dry bulb (a 6 K wet-bulb depression) and gives out
         * by 40 C; humidity is not modelled */
        d.free_full_c = 28.0;
        d.free_none_c = 40.0;
        break;
    case FAC_COOLING_DIRECT_LIQUID:
        /* assumption (A): cold plates take 80 % of the IT heat; memory,
         * drives, power supplies and the rest stay on air */
        d.liquid_capture_frac = 0.80;
        break;
    default:
        break;
    }
    return d;
}

int fac_design_check(const fac_design *d, sim_error *err)
{
    if (!fac_cooling_name(d->cooling))
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "facility: unknown cooling design %d",
                             d->cooling);
    const struct {
        const char *name;
        double v;
    } nonneg[] = {
        {"fixed overhead", d->fixed_frac},
        {"linear distribution loss", d->dist_linear_frac},
        {"square distribution loss", d->dist_square_frac},
        {"air transport", d->air_transport_frac},
        {"liquid transport", d->liquid_transport_frac},
        {"evaporative transport", d->evap_transport_frac},
    };
    for (size_t i = 0; i < sizeof nonneg / sizeof nonneg[0]; i++)
        if (!isfinite(nonneg[i].v) || nonneg[i].v < 0)
            return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                                 "facility: %s fraction %g must be >= 0", nonneg[i].name,
                                 nonneg[i].v);
    if (!(d->liquid_capture_frac >= 0 && d->liquid_capture_frac <= 1))
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "facility: liquid capture fraction %g must be in [0, 1]",
                             d->liquid_capture_frac);
    if (!(d->chiller_carnot_frac > 0 && d->chiller_carnot_frac <= 1))
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "facility: chiller Carnot fraction %g must be in (0, 1]",
                             d->chiller_carnot_frac);
    if (!(d->min_lift_k > 0 && isfinite(d->min_lift_k)))
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "facility: minimum lift %g K must be > 0", d->min_lift_k);
    const struct {
        const char *name;
        double v;
    } temps[] = {
        {"chilled supply", d->chilled_supply_c},
        {"liquid supply", d->liquid_supply_c},
        {"condenser approach", d->condenser_approach_k},
        {"free-cooling full", d->free_full_c},
        {"free-cooling none", d->free_none_c},
        {"liquid free-cooling full", d->liquid_free_full_c},
        {"liquid free-cooling none", d->liquid_free_none_c},
        {"evaporation start", d->evap_start_c},
        {"evaporation full", d->evap_full_c},
    };
    for (size_t i = 0; i < sizeof temps / sizeof temps[0]; i++)
        if (!isfinite(temps[i].v))
            return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                                 "facility: %s temperature is not finite", temps[i].name);
    /* a supply colder than absolute zero would make COP negative */
    if (d->chilled_supply_c <= -273.15 || d->liquid_supply_c <= -273.15)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "facility: supply temperature must be above -273.15 C");
    if (d->free_full_c > d->free_none_c || d->liquid_free_full_c > d->liquid_free_none_c ||
        d->evap_start_c > d->evap_full_c)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "facility: a free-cooling or evaporation range ends below its start");
    if (!(d->cycles_of_concentration > 1 && isfinite(d->cycles_of_concentration)))
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "facility: cycles of concentration %g must be > 1",
                             d->cycles_of_concentration);
    if (d->cooling == FAC_COOLING_EVAPORATIVE &&
        !(d->evap_effectiveness > 0 && d->evap_effectiveness <= 1))
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "facility: evaporative effectiveness %g must be in (0, 1]",
                             d->evap_effectiveness);
    return 0;
}

static double ramp(double t, double a, double b)
{
    if (t <= a)
        return 0.0;
    if (t >= b)
        return 1.0;
    return (t - a) / (b - a);
}

static double cop(const fac_design *d, double t_out_c, double supply_c)
{
    double lift = t_out_c + d->condenser_approach_k - supply_c;
    if (lift < d->min_lift_k)
        lift = d->min_lift_k;
    return d->chiller_carnot_frac * (supply_c + 273.15) / lift;
}

/* 3.6 MJ per kWh over h_fg = 2.442 MJ/kg at 25 C (steam tables): litres of
 * water evaporated per kWh of heat carried off as latent heat */
#define FAC_WATER_L_PER_KWH_LATENT (3.6 / 2.442)

double fac_saturation_hpa(double t_c)
{
    return 6.1094 * exp(17.625 * t_c / (t_c + 243.04));
}

double fac_wetbulb_c(double t_c, double rh)
{
    double r = 100.0 * fmin(fmax(rh, 0.05), 0.99); /* Stull's fitted range, in per cent */
    double tw = t_c * atan(0.151977 * sqrt(r + 8.313659)) + atan(t_c + r) - atan(r - 1.676331) +
                0.00391838 * pow(r, 1.5) * atan(0.023101 * r) - 4.686035;
    return fmin(tw, t_c); /* the fit's error never puts it above the dry bulb */
}

void fac_wetbulb_profile(const fac_climate *c, uint64_t start_hour, size_t n_hours,
                         const double *temp_c, double *wb_c)
{
    for (size_t h = 0; h < n_hours; h++) {
        if (!(c->rh_annual > 0)) {
            wb_c[h] = NAN;
            continue;
        }
        int m = fac_month_of_hour(start_hour + h);
        double vapour = c->rh_annual * fac_saturation_hpa(c->monthly_mean_c[m]);
        double rh = fmin(1.0, vapour / fac_saturation_hpa(temp_c[h]));
        wb_c[h] = fac_wetbulb_c(temp_c[h], rh);
    }
}

void fac_evaluate(const fac_design *d, double t_out_c, double it_load_frac, fac_point *out)
{
    fac_evaluate_humid(d, t_out_c, NAN, it_load_frac, out);
}

void fac_evaluate_humid(const fac_design *d, double t_out_c, double t_wb_c, double it_load_frac,
                        fac_point *out)
{
    double L = it_load_frac;
    if (!(L > 0)) {
        *out = (fac_point){INFINITY, 0, INFINITY, INFINITY, INFINITY, INFINITY, 0};
        return;
    }
    double dist = d->dist_linear_frac * L + d->dist_square_frac * L * L;
    double heat = L + dist + d->fixed_frac;
    double capture = d->cooling == FAC_COOLING_DIRECT_LIQUID ? d->liquid_capture_frac : 0.0;
    double heat_liq = capture * L, heat_air = heat - heat_liq;

    double m_air = 1.0, m_liq = 0.0, evap = 0.0;
    switch (d->cooling) {
    case FAC_COOLING_AIR_CHILLER:
        break;
    case FAC_COOLING_EVAPORATIVE:
        if (isfinite(t_wb_c)) {
            /* the depression the stage can reach; evaporation stops at the supply */
            double depth = fmin(t_out_c - d->evap_start_c,
                                d->evap_effectiveness * (t_out_c - t_wb_c));
            if (!(depth > 0))
                depth = 0;
            double span = d->evap_full_c - d->evap_start_c;
            evap = span > 0 ? fmin(1.0, depth / span) : (depth > 0);
            m_air = ramp(t_out_c - depth, d->evap_start_c, d->evap_full_c);
        } else {
            evap = ramp(t_out_c, d->evap_start_c, d->evap_full_c);
            m_air = ramp(t_out_c, d->free_full_c, d->free_none_c);
        }
        break;
    case FAC_COOLING_DIRECT_LIQUID:
        m_liq = ramp(t_out_c, d->liquid_free_full_c, d->liquid_free_none_c);
        m_air = ramp(t_out_c, d->free_full_c, d->free_none_c);
        break;
    default: /* economiser */
        m_air = ramp(t_out_c, d->free_full_c, d->free_none_c);
        break;
    }
    double transport = d->air_transport_frac * heat_air + d->liquid_transport_frac * heat_liq +
                       d->evap_transport_frac * evap * heat_air;
    double mech = heat_air * m_air / cop(d, t_out_c, d->chilled_supply_c);
    if (heat_liq > 0)
        mech += heat_liq * m_liq / cop(d, t_out_c, d->liquid_supply_c);

    out->fixed_frac = d->fixed_frac / L;
    out->distribution_frac = dist / L;
    out->transport_frac = transport / L;
    out->mechanical_frac = mech / L;
    out->pue = 1.0 + out->fixed_frac + out->distribution_frac + out->transport_frac +
               out->mechanical_frac;
    out->free_cooling_frac = 1.0 - (heat_air * m_air + heat_liq * m_liq) / heat;
    out->wue_l_per_kwh = 0.0;
    if (d->cooling == FAC_COOLING_EVAPORATIVE)
        out->wue_l_per_kwh = evap * heat_air / L * FAC_WATER_L_PER_KWH_LATENT *
                             d->cycles_of_concentration / (d->cycles_of_concentration - 1.0);
}

double fac_pue(const fac_design *d, double t_out_c, double it_load_frac)
{
    fac_point p;
    fac_evaluate(d, t_out_c, it_load_frac, &p);
    return p.pue;
}

double fac_wue_l_per_kwh(const fac_design *d, double t_out_c, double it_load_frac)
{
    fac_point p;
    fac_evaluate(d, t_out_c, it_load_frac, &p);
    return p.wue_l_per_kwh;
}

int fac_energy(const fac_design *d, double design_it_w, const double *it_power_w,
               const double *temp_c, size_t n_hours, double *pue_h, fac_totals *out,
               sim_error *err)
{
    return fac_energy_humid(d, design_it_w, it_power_w, temp_c, NULL, n_hours, pue_h, out, err);
}

int fac_energy_humid(const fac_design *d, double design_it_w, const double *it_power_w,
                     const double *temp_c, const double *wb_c, size_t n_hours, double *pue_h,
                     fac_totals *out, sim_error *err)
{
    int rc = fac_design_check(d, err);
    if (rc)
        return rc;
    if (!(design_it_w > 0 && isfinite(design_it_w)))
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "facility: design IT power %g W must be > 0", design_it_w);
    if (n_hours == 0)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "facility: no hours to sum over");
    /* validate everything first: *out is written only on success */
    for (size_t h = 0; h < n_hours; h++) {
        if (!(it_power_w[h] > 0 && it_power_w[h] <= design_it_w))
            return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                                 "facility: hour %zu: IT power %g W outside (0, %g W], the "
                                 "design IT power (PUE is undefined at zero load)",
                                 h, it_power_w[h], design_it_w);
        if (!isfinite(temp_c[h]))
            return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                                 "facility: hour %zu: temperature is not finite", h);
    }
    fac_totals t = {.hours = n_hours, .pue_min = INFINITY, .pue_max = -INFINITY};
    for (size_t h = 0; h < n_hours; h++) {
        fac_point p;
        fac_evaluate_humid(d, temp_c[h], wb_c ? wb_c[h] : NAN, it_power_w[h] / design_it_w, &p);
        double it_j = it_power_w[h] * 3600.0;
        t.it_energy_j += it_j;
        t.facility_energy_j += it_j * p.pue;
        t.water_l += p.wue_l_per_kwh * (it_j / 3.6e6);
        if (p.pue < t.pue_min)
            t.pue_min = p.pue;
        if (p.pue > t.pue_max)
            t.pue_max = p.pue;
        if (pue_h)
            pue_h[h] = p.pue;
    }
    t.pue = t.facility_energy_j / t.it_energy_j;
    t.wue_l_per_kwh = t.water_l / (t.it_energy_j / 3.6e6);
    *out = t;
    return 0;
}
