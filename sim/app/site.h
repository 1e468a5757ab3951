/* site.h - a site from the built-in catalog scenarios/catalog/sites.xml
 * (sourced from shared/reference/sites.md): the climate the facility model
 * needs, the grid's emission factor, the electricity price and the PUE
 * target, each with where it came from. Where the catalog lacks a value the
 * fallback is documented (docs/energy.md) and named in `defaults`, so the
 * summary can say which values were not the site's own. */
#ifndef DCSIM_APP_SITE_H
#define DCSIM_APP_SITE_H

#include <stddef.h>

#include "facility.h"

typedef struct site_info {
    char name[32];
    char display[96];          /* the cluster's name, or the place */
    fac_climate climate;       /* monthly means (amplitude: facility default) */
    char climate_basis[160];   /* "monthly means: ...", or how they were derived */
    double emission_kg_per_kwh;
    char emission_basis[96];   /* "provincial 2022", "regional 2023", ... */
    double price_per_kwh;      /* CNY/kWh */
    char price_basis[160];
    double pue_target;         /* <= 0: none in the catalog */
    double renewable_share;    /* [0, 1]: the site's reported data-centre green share; 0: none */
    char defaults[160];        /* the values that fell back to a default, or "" */
} site_info;

/* Look up `name` in the built-in catalog. Returns 0, or -1 with a one-line
 * reason in why (unknown name, listing the known ones; a site without enough
 * temperatures to make twelve months). */
int site_lookup(const char *name, site_info *out, char *why, size_t why_size);

/* The catalog's demand centres (kind="demand-centre": beijing, shanghai,
 * guangzhou), at most max names of 32 bytes; returns how many. */
unsigned site_demand_centres(char (*names)[32], unsigned max);

/* The catalog's round-trip time from site `from` to `to` (its <latency><rtt
 * to>, D: great circle x 1.5 x 4.9 us/km x 2, sites.md 8.2) in seconds;
 * NAN when the catalog has none. */
double site_rtt_s(const char *from, const char *to);

/* The names in the catalog's order, comma-separated (for messages). */
void site_names(char *buf, size_t size);

#endif
