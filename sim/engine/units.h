/* units.h - parse quantities with units ("400Gbps", "3.35TB/s", "30min").
 *
 * Every quantity inside dcsim is a double in SI base units (seconds, bytes,
 * bytes/s, watts, joules, FLOP/s, 1/s). Bits are converted to bytes here, at
 * the boundary. A number without a unit is an error wherever the dimension
 * has units; only counts and fractions may be bare.
 */
#ifndef DCSIM_SIM_UNITS_H
#define DCSIM_SIM_UNITS_H

#include <stddef.h>

enum sim_dim {
    SIM_DIM_TIME,        /* s */
    SIM_DIM_DATA,        /* bytes */
    SIM_DIM_BANDWIDTH,   /* bytes/s */
    SIM_DIM_POWER,       /* W */
    SIM_DIM_ENERGY,      /* J */
    SIM_DIM_FLOP_RATE,   /* FLOP/s */
    SIM_DIM_FREQUENCY,   /* 1/s, e.g. a failure rate "2e-5/h" */
    SIM_DIM_COUNT,       /* dimensionless, SI suffixes K M B(illion) G T P allowed */
    SIM_DIM_FRACTION,    /* dimensionless, "40%" or a bare number */
    SIM_DIM_COUNT_OF_DIMS
};

/* Parse text as a quantity of dimension dim into *out_si (SI base units).
 * Returns 0 on success. On failure returns non-zero, leaves *out_si untouched
 * and writes a one-line reason into why (e.g. "number without unit; a duration
 * needs one of: ns us ms s min h d"). why may be NULL. */
int sim_units_parse(const char *text, enum sim_dim dim, double *out_si,
                    char *why, size_t why_size);

/* Human name of a dimension ("duration", "bandwidth", ...). */
const char *sim_dim_name(enum sim_dim dim);

/* Write the accepted unit symbols of a dimension, space-separated, into buf
 * (for messages). Returns buf. */
const char *sim_dim_units(enum sim_dim dim, char *buf, size_t size);

#endif
