/* facility.h - a site's outdoor temperature over the hours of a year, and the
 * facility's PUE and water use as functions of that temperature and the IT load.
 *
 * Temperature (hour h of a 365-day year, local standard time, values at the
 * top of each hour):
 *   T(h) = B(h) + D(hour of day) [+ N(h), off by default]
 *   B: a periodic cubic spline through one anchor per month, placed at
 *      mid-month; the twelve anchors are solved (12 x 12 linear system) so
 *      that the mean of B over each month's hours equals that month's mean,
 *      to rounding. A spline through the monthly means themselves would
 *      flatten the seasons: its monthly means miss the inputs by up to
 *      0.3 K (Xingren normals).
 *   D: the diurnal cycle, minimum at 05:00 and maximum at 15:00 (a choice:
 *      near sunrise, and the usual mid-afternoon maximum; sites.md gives no
 *      hourly data). D rises as -A cos(pi (t - 5) / 10) from 05:00 to 15:00
 *      and falls as A cos(pi (t - 15) / 14) from 15:00 to 05:00, so it spans
 *      exactly 2A (A = the amplitude: half the daily max - min) and its 24
 *      top-of-hour values sum to zero: whole days, hence whole months, keep
 *      their means.
 *   N: optional AR(1) weather noise, standard deviation sigma, correlation
 *      time tau, re-centred to zero mean in every month so that the monthly
 *      means still hold (the re-centring steps by a fraction of sigma at
 *      month boundaries). Year y draws from its own GSL stream (xoshiro256**),
 *      seeded with seed + y * 0x9e3779b97f4a7c15: a given seed gives the same
 *      profile, whatever the range asked for.
 * Hours in China are Beijing time; the western hubs' solar time lags it by
 * about an hour (Zhongwei 105 E), which this profile does not shift.
 *
 * PUE (all powers as fractions of the design IT power P_d; load L = P_IT / P_d):
 *   PUE(T, L) = 1 + (F + E(L) + X(T, L) + M(T, L)) / L
 *   F      fixed overhead (lighting, controls, security, no-load losses)
 *   E(L)   = e1 L + e2 L^2, distribution losses (UPS, transformers, PDUs:
 *            conversion losses in proportion to load, resistive losses in L^2)
 *   Q      = L + E(L) + F, the heat to remove (every watt ends as heat inside)
 *   Q_liq  = c L, the IT heat the liquid loop captures (direct liquid cooling
 *            only; c = 0 for the air designs); Q_air = Q - Q_liq
 *   X      = k_air Q_air + k_liq Q_liq [+ k_evap f_e(T) Q_air, evaporative],
 *            heat transport (fans, pumps, dry-cooler fans, spray pumps)
 *   M      = Q_air m_air(T) / COP(T, T_chw) + Q_liq m_liq(T) / COP(T, T_liq),
 *            compressor (chiller) power
 *   COP(T, Ts) = eta (Ts + 273.15) / max(T + dT_app - Ts, dT_min), a fixed
 *            fraction eta of the Carnot COP between the supply temperature Ts
 *            and the outdoor air plus the condenser approach
 *   ramp(T; a, b) = 0 below a, 1 above b, linear between (a step at a = b)
 *   m_air  = 1 for air with chillers; ramp(T; free_full_c, free_none_c) for
 *            the economiser, evaporative and the air part of liquid cooling:
 *            outdoor air below the supply temperature carries all the heat,
 *            above the return temperature none, between, the chiller cools
 *            it the rest of the way
 *   m_liq  = ramp(T; liquid_free_full_c, liquid_free_none_c) (dry coolers)
 *   f_e    = ramp(T; evap_start_c, evap_full_c), the share of the air-side
 *            heat carried away by evaporating water (direct evaporative
 *            cooling of outdoor air from T to the supply temperature takes
 *            (T - T_sup) / (T_ret - T_sup) of the heat as latent heat)
 * Water (evaporative only), litres per kWh of IT energy:
 *   WUE(T, L) = f_e Q_air / L * (3.6 MJ/kWh / h_fg) * C / (C - 1)
 *   h_fg = 2.442 MJ/kg, latent heat of vaporisation of water at 25 C (steam
 *   tables); C = cycles of concentration (the bleed-off that keeps dissolved
 *   salts down is 1 / (C - 1) of the evaporation). 1 kg = 1 L.
 * Every term is >= 0, so PUE >= 1; m, f_e and 1/COP never fall as T rises,
 * so PUE and WUE never fall as T rises. Humidity: where the site's relative
 * humidity is known (fac_climate.rh_annual), the evaporative design cools by
 * a share eps of the hour's wet-bulb depression (fac_evaluate_humid);
 * otherwise its thresholds are dry-bulb stand-ins for a wet-bulb limit (a
 * humid site gets too many evaporative hours). docs/facility.md lists every
 * default with its source and what it was calibrated against.
 */
#ifndef DCSIM_MODELS_FACILITY_H
#define DCSIM_MODELS_FACILITY_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define FAC_MONTHS 12
#define FAC_HOURS_PER_YEAR 8760 /* 365 days: leap days are not modelled */

/* Diurnal amplitude for sites without one (sites.md gives none): assumption
 * (A): 5 K, half of a 10 K daily range, between the ~7 K of humid
 * subtropical sites and the ~13 K of the semi-arid western plateaux. */
#define FAC_DEFAULT_DIURNAL_AMPLITUDE_K 5.0

/* Correlation time of the weather noise when it is switched on: assumption
 * (A): 48 h, a passing weather system lasts days, not hours. */
#define FAC_DEFAULT_NOISE_CORR_H 48.0

typedef struct fac_climate {
    double monthly_mean_c[FAC_MONTHS]; /* dry-bulb, January first */
    double diurnal_amplitude_k;        /* A: half of (daily max - daily min), >= 0 */
    double noise_sd_k;                 /* sigma of N; 0 = no noise (the default) */
    double noise_corr_h;               /* tau of N, > 0 when noise_sd_k > 0 */
    uint64_t noise_seed;
    double rh_annual;                  /* mean relative humidity, (0, 1]; 0: not known */
} fac_climate;

/* Fill c with the defaults: all monthly means 0, the default amplitude, no
 * noise, the default noise correlation time, seed 0. */
void fac_climate_init(fac_climate *c);

/* 0, or SIM_ERR_INPUT naming the field (non-finite mean, negative
 * amplitude or sigma, tau <= 0 with noise on). */
int fac_climate_check(const fac_climate *c, sim_error *err);

/* Outdoor temperature, degC, for hours start_hour .. start_hour + n_hours - 1
 * counted from 00:00 on 1 January of year 0 (hour 8760 is 1 January of
 * year 1; years repeat, apart from the noise) into temp_c[0 .. n_hours - 1]
 * (caller-owned). Returns 0, or SIM_ERR_INPUT / SIM_ERR_NOMEM with err set
 * and temp_c unspecified. */
int fac_temperature_profile(const fac_climate *c, uint64_t start_hour, size_t n_hours,
                            double *temp_c, sim_error *err);

/* Month (0 = January) and hour of day (0 .. 23) of an hour of the year. */
int fac_month_of_hour(uint64_t hour);
int fac_hour_of_day(uint64_t hour);
/* First hour of month m (0 .. 11) in a year, and its length in hours. */
unsigned fac_month_start_hour(int month);
unsigned fac_month_hours(int month);

/* Cooling designs. Values are stored in traces: append only. */
enum fac_cooling {
    FAC_COOLING_AIR_CHILLER = 0,    /* "air-chiller": compressors all year */
    FAC_COOLING_AIR_ECONOMISER = 1, /* "air-economiser": outdoor air when cool enough */
    FAC_COOLING_EVAPORATIVE = 2,    /* "evaporative": outdoor air, evaporatively cooled */
    FAC_COOLING_DIRECT_LIQUID = 3,  /* "direct-liquid": cold plates to warm water + air */
    FAC_COOLING_COUNT
};

/* A facility design. Plain fields: fac_design_default gives the sourced
 * defaults, a scenario overrides any of them. Fractions are of the design IT
 * power (F, e1, e2) or of the heat moved (k_*). Fields a design does not
 * use are ignored (the comment says which designs use each). */
typedef struct fac_design {
    int cooling;                  /* enum fac_cooling */
    double fixed_frac;            /* F */
    double dist_linear_frac;      /* e1 */
    double dist_square_frac;      /* e2 */
    double air_transport_frac;    /* k_air: fans per unit of air-side heat */
    double liquid_transport_frac; /* k_liq: pumps and dry coolers per unit of liquid heat (DLC) */
    double liquid_capture_frac;   /* c: IT heat into the liquid loop (DLC), [0, 1] */
    double chiller_carnot_frac;   /* eta, (0, 1] */
    double chilled_supply_c;      /* T_chw: air-side chilled supply */
    double liquid_supply_c;       /* T_liq: liquid loop supply (DLC) */
    double condenser_approach_k;  /* dT_app */
    double min_lift_k;            /* dT_min > 0: keeps COP finite in the cold */
    double free_full_c;           /* air-side: no compressor at or below (economiser,
                                     evaporative, DLC) */
    double free_none_c;           /* air-side: compressor carries it all above */
    double liquid_free_full_c;    /* liquid side (DLC) */
    double liquid_free_none_c;
    double evap_start_c;          /* evaporative: water starts to evaporate above */
    double evap_full_c;           /* evaporative: all air-side heat latent above */
    double evap_transport_frac;   /* k_evap: spray or pad pumps per unit of heat evaporated */
    double cycles_of_concentration; /* C > 1 (evaporative) */
    double evap_effectiveness;    /* eps in (0, 1]: the share of the wet-bulb depression
                                     the evaporative stage removes (evaporative, when the
                                     wet-bulb temperature is known) */
} fac_design;

/* Name <-> design ("air-chiller", "air-economiser", "evaporative",
 * "direct-liquid"). fac_cooling_name returns NULL for an unknown value;
 * fac_cooling_parse returns 0 and sets *out, or -1 for an unknown name. */
const char *fac_cooling_name(int cooling);
int fac_cooling_parse(const char *name, int *out);

/* The defaults for a design (docs/facility.md: sources and calibration).
 * An unknown design gives the air-chiller defaults with cooling set as given
 * (fac_design_check then rejects it). */
fac_design fac_design_default(int cooling);

/* 0, or SIM_ERR_INPUT naming the field (negative or non-finite fraction,
 * c outside [0, 1], eta outside (0, 1], dT_min <= 0, a ramp whose full
 * point lies above its none point, C <= 1, unknown design). */
int fac_design_check(const fac_design *d, sim_error *err);

/* The model at one outdoor temperature and IT load. Fractions are of the IT
 * power (not the design power), so pue = 1 + the four overhead terms. */
typedef struct fac_point {
    double pue;
    double wue_l_per_kwh;        /* litres per kWh of IT energy; 0 unless evaporative */
    double fixed_frac;           /* F / L */
    double distribution_frac;    /* E / L */
    double transport_frac;       /* X / L */
    double mechanical_frac;      /* M / L */
    double free_cooling_frac;    /* share of the heat removed without compressors */
} fac_point;

/* Evaluate design d (assumed to pass fac_design_check) at t_out_c and load
 * it_load_frac (> 0; 1 = design IT power; above 1 extrapolates). For a load
 * <= 0 PUE is undefined: pue and the fractions are +inf, wue 0. */
void fac_evaluate(const fac_design *d, double t_out_c, double it_load_frac, fac_point *out);
/* The same with the outdoor wet-bulb temperature t_wb_c (NAN: not known,
 * which is fac_evaluate). Only the evaporative design uses it ("Humidity"
 * above): the evaporative stage cools outdoor air by
 *   D = min(T - evap_start, eps (T - T_wb)),  0 when T <= evap_start
 * (evap_start and evap_full are the supply and return temperatures), so
 *   f_e = min(1, D / (evap_full - evap_start))     the latent share
 *   m_air = ramp(T - D; evap_start, evap_full)     compressors on what is left
 * in place of the dry-bulb stand-ins ramp(T; evap_start, evap_full) and
 * ramp(T; free_full, free_none). */
void fac_evaluate_humid(const fac_design *d, double t_out_c, double t_wb_c, double it_load_frac,
                        fac_point *out);

/* Wet-bulb temperature (degC) of air at t_c (degC) and relative humidity
 * rh (a fraction): Stull (2011), "Wet-bulb temperature from relative
 * humidity and air temperature", J. Appl. Meteor. Climatol. 50:2267-2269,
 * eq. 1, for sea-level pressure; rh is clamped to its fitted range 5-99 %
 * (error within about 1 K there for -20 to 50 degC). */
double fac_wetbulb_c(double t_c, double rh);

/* Saturation vapour pressure over water (hPa) at t_c: the Magnus form with
 * Alduchov and Eskridge's (1996) coefficients, 6.1094 exp(17.625 T /
 * (T + 243.04)). */
double fac_saturation_hpa(double t_c);

/* Hourly wet-bulb temperatures for the hours of temp_c (from
 * fac_temperature_profile with the same start_hour) into wb_c, when
 * c->rh_annual > 0: the air's vapour pressure is held for each month at
 * rh_annual x the saturation pressure of the month's mean (a dew point per
 * month: humidity follows the weather, not the hour), so an hour's relative
 * humidity is that pressure over the saturation pressure at its own
 * temperature (at most 1). Every value NAN when rh_annual is 0. */
void fac_wetbulb_profile(const fac_climate *c, uint64_t start_hour, size_t n_hours,
                         const double *temp_c, double *wb_c);
double fac_pue(const fac_design *d, double t_out_c, double it_load_frac);
double fac_wue_l_per_kwh(const fac_design *d, double t_out_c, double it_load_frac);

/* Totals over a range of hours. */
typedef struct fac_totals {
    size_t hours;
    double it_energy_j;        /* sum of it_power_w[h] * 3600 s */
    double facility_energy_j;  /* sum of it_power_w[h] * 3600 s * PUE_h */
    double pue;                /* facility / IT energy: the energy-weighted PUE */
    double water_l;            /* sum of WUE_h * IT kWh_h */
    double wue_l_per_kwh;      /* water / IT energy in kWh */
    double pue_min, pue_max;   /* over the hours */
} fac_totals;

/* Facility energy and water for n_hours hours, hour h at IT power
 * it_power_w[h] (constant within the hour, > 0 and at most design_it_w) and
 * outdoor temperature temp_c[h]. pue_h (may be NULL) receives each hour's
 * PUE. Returns 0 and fills *out, or SIM_ERR_INPUT (bad design, design power
 * <= 0, n_hours = 0, an hour's power outside (0, design_it_w] or a
 * non-finite temperature, naming the hour) with *out untouched. */
int fac_energy(const fac_design *d, double design_it_w, const double *it_power_w,
               const double *temp_c, size_t n_hours, double *pue_h, fac_totals *out,
               sim_error *err);
/* The same with each hour's wet-bulb temperature (wb_c NULL, or NAN
 * entries: not known). */
int fac_energy_humid(const fac_design *d, double design_it_w, const double *it_power_w,
                     const double *temp_c, const double *wb_c, size_t n_hours, double *pue_h,
                     fac_totals *out, sim_error *err);

#endif
