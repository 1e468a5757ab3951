/* site_costs.c - <site> (a site of the built-in catalog, site_catalog.c,
 * with cooling, start-month, price, emission-factor, green-share,
 * diurnal-amplitude, weather-noise overrides) and <costs> (unit prices,
 * life, rent-per-gpu-hour).
 */
#include "loader.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>

/* "0.36CNY/kWh", "0.58kgCO2/kWh", "5K": a number from 0 to max and
 * exactly that unit (the units parser knows no currency, CO2 or
 * temperature); max keeps the products (kWh x price, x factor) finite and
 * physical */
static int number_in(loader *ld, xmlNode *n, const char *attr_name, const char *unit, double max,
                     double *out)
{
    char text[64];
    copy_attr(n, attr_name, text, sizeof text);
    char *end = NULL;
    double x = strtod(text, &end);
    if (end == text || strcmp(end, unit) || !(x >= 0 && x <= max))
        return node_error(ld, n, attr_name, "expected a number from 0 to %g in %s, e.g. "
                          "\"0.4%s\"", max, unit, unit);
    *out = x;
    return 0;
}

/* <site name cooling start-month price emission-factor green-share
 * diurnal-amplitude>: the catalog's site, overridden where given */
int parse_site(loader *ld, xmlNode *root, scn_scenario *s)
{
    xmlNode *n = child(root, "site");
    return n ? parse_site_at(ld, n, s->seed, &s->site) : 0;
}

/* one <site>-like element n (<site>, <hubs><hub>) into *site */
int parse_site_at(loader *ld, xmlNode *n, uint64_t seed, scn_site *site)
{
    char name[32], why[600];
    copy_attr(n, "name", name, sizeof name);
    if (site_lookup(name, &site->info, why, sizeof why))
        return node_error(ld, n, "name", "%s", why);
    site->given = 1;
    char text[32] = "air-economiser";
    int cooling = FAC_COOLING_AIR_ECONOMISER;
    if (has_attr(n, "cooling")) {
        copy_attr(n, "cooling", text, sizeof text);
        fac_cooling_parse(text, &cooling); /* the schema allows only known names */
    }
    site->design = fac_design_default(cooling);
    site->start_month = 1;
    int rc = get_uint(ld, n, "start-month", 0, 1, 12, &site->start_month);
    const char *overridden[4] = {0};
    int k = 0;
    if (!rc && has_attr(n, "price")) {
        rc = number_in(ld, n, "price", "CNY/kWh", 1000, &site->info.price_per_kwh);
        snprintf(site->info.price_basis, sizeof site->info.price_basis, "the scenario's");
        overridden[k++] = "price";
    }
    if (!rc && has_attr(n, "emission-factor")) {
        rc = number_in(ld, n, "emission-factor", "kgCO2/kWh", 10,
                       &site->info.emission_kg_per_kwh);
        snprintf(site->info.emission_basis, sizeof site->info.emission_basis, "the scenario's");
        overridden[k++] = "emission factor";
    }
    if (!rc && has_attr(n, "green-share")) {
        rc = get_quantity(ld, n, "green-share", SIM_DIM_FRACTION, 1, &site->green_share);
        if (!rc && !(site->green_share >= 0 && site->green_share <= 1))
            rc = node_error(ld, n, "green-share", "green-share must be from 0%% to 100%%");
    }
    if (!rc && has_attr(n, "diurnal-amplitude")) {
        rc = number_in(ld, n, "diurnal-amplitude", "K", 50,
                       &site->info.climate.diurnal_amplitude_k);
        overridden[k++] = "diurnal amplitude";
    }
    if (!rc && has_attr(n, "weather-noise")) { /* seeded AR(1) noise on the hours */
        rc = number_in(ld, n, "weather-noise", "K", 50, &site->info.climate.noise_sd_k);
        site->info.climate.noise_seed = seed;
    }
    for (int i = 0; i < k; i++)
        snprintf(site->overrides + strlen(site->overrides),
                 sizeof site->overrides - strlen(site->overrides), "%s%s", i ? ", " : "",
                 overridden[i]);
    return rc;
}

double scn_costs_rent_of(const scn_costs *c, const char *gpu)
{
    for (unsigned i = 0; i < c->n_rents; i++)
        if (!strcmp(c->rent_gpu[i], gpu))
            return c->rent_gpu_per_hour[i];
    return 0;
}

/* <costs><rent gpu per-gpu-hour>: a catalog GPU type's rent, each type once */
static int parse_rents(loader *ld, xmlNode *costs, scn_costs *c)
{
    for (xmlNode *r = costs->children; r; r = r->next) {
        if (r->type != XML_ELEMENT_NODE || strcmp((const char *)r->name, "rent"))
            continue;
        if (c->n_rents == 16) /* the schema's bound; kept for documents it did not check */
            return node_error(ld, r, NULL, "at most 16 <rent> rows");
        char *name = c->rent_gpu[c->n_rents];
        copy_attr(r, "gpu", name, sizeof c->rent_gpu[0]);
        if (!find_named(ld, CAT_GPU, name)) {
            char known[1024];
            entry_names(ld, CAT_GPU, known, sizeof known);
            return node_error(ld, r, "gpu", "unknown GPU type '%s'; known types: %s", name,
                              known);
        }
        if (scn_costs_rent_of(c, name) > 0)
            return node_error(ld, r, "gpu", "a rent for %s given twice", name);
        double *price = &c->rent_gpu_per_hour[c->n_rents];
        int rc = get_quantity(ld, r, "per-gpu-hour", SIM_DIM_COUNT, 1, price);
        if (!rc)
            rc = positive(ld, r, "per-gpu-hour", *price, 1e9, " CNY per GPU-hour");
        if (rc)
            return rc;
        c->n_rents++;
    }
    return 0;
}

/* <costs server switch nic transceiver cable life rent-per-gpu-hour> and its
 * <rent> rows */
int parse_costs(loader *ld, xmlNode *root, scn_scenario *s)
{
    xmlNode *n = child(root, "costs");
    if (!n)
        return 0;
    if (!s->site.given)
        return node_error(ld, n, NULL, "<costs> needs a <site>: the build cost includes the "
                          "site's energy");
    scn_costs *c = &s->costs;
    c->given = 1;
    static const char *const names[] = {"server", "switch", "nic", "transceiver", "cable",
                                        "rent-per-gpu-hour"};
    double *to[] = {&c->server, &c->switch_, &c->nic, &c->transceiver, &c->cable,
                    &c->rent_per_gpu_hour};
    int rc = 0;
    for (int i = 0; i < 6 && !rc; i++) {
        rc = get_quantity(ld, n, names[i], SIM_DIM_COUNT, 0, to[i]);
        if (!rc)
            rc = non_negative(ld, n, names[i], *to[i]);
    }
    if (!rc)
        rc = get_quantity(ld, n, "life", SIM_DIM_TIME, 1, &c->life_s);
    if (!rc)
        rc = positive(ld, n, "life", c->life_s, INFINITY, "");
    if (!rc)
        rc = parse_rents(ld, n, c);
    return rc;
}
