/* site_catalog.c - sites from the built-in catalog (site.h). The catalog's values
 * carry their units in the text ("6.2degC", "0.36CNY/kWh"); the units are
 * fixed per attribute by the catalog's header, so the number is read and the
 * suffix checked by name only where it could be ambiguous. */
#include "site.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "scenario.h"

extern const unsigned char dcsim_catalog_sites[];
extern const size_t dcsim_catalog_sites_len;

static int is_element(const xmlNode *n, const char *name)
{
    return n && n->type == XML_ELEMENT_NODE && xmlStrEqual(n->name, (const xmlChar *)name);
}

static int attr(const xmlNode *n, const char *name, char *buf, size_t size)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
    if (!v) {
        buf[0] = '\0';
        return 0;
    }
    snprintf(buf, size, "%s", (const char *)v);
    xmlFree(v);
    return 1;
}

/* the leading number of an attribute ("6.2degC" -> 6.2); NAN when absent */
static double number(const xmlNode *n, const char *name)
{
    char text[64];
    if (!attr(n, name, text, sizeof text))
        return NAN;
    char *end = NULL;
    double x = strtod(text, &end);
    return end == text ? NAN : x;
}

/* value="x", or the middle of min="a" max="b" (prefix: "" or "min-"...) */
static double value_or_middle(const xmlNode *n, const char *value, const char *lo, const char *hi)
{
    double v = number(n, value);
    if (!isnan(v))
        return v;
    double a = number(n, lo), b = number(n, hi);
    return isnan(a) || isnan(b) ? NAN : (a + b) / 2;
}

static xmlNode *child(const xmlNode *n, const char *name)
{
    for (xmlNode *c = n ? n->children : NULL; c; c = c->next)
        if (is_element(c, name))
            return c;
    return NULL;
}

/* Twelve monthly means: the first full <monthly-means> set (the catalog
 * orders them best first); else an annual mean with January and July (or
 * winter and summer seasons) as a sinusoid, T(m) = A - H cos(2 pi (m-1)/12),
 * which keeps the annual mean exactly (D). */
static int climate_of(const xmlNode *site, site_info *s, char *why, size_t why_size)
{
    const xmlNode *cl = child(site, "climate");
    for (xmlNode *set = cl ? cl->children : NULL; set; set = set->next) {
        if (!is_element(set, "monthly-means"))
            continue;
        int have = 0;
        for (xmlNode *m = set->children; m; m = m->next) {
            double k = number(m, "n"), t = number(m, "mean");
            if (is_element(m, "month") && k >= 1 && k <= 12 && !isnan(t)) {
                s->climate.monthly_mean_c[(int)k - 1] = t;
                have |= 1 << ((int)k - 1);
            }
        }
        if (have == 0xfff) {
            char station[64], basis[80];
            attr(set, "station", station, sizeof station);
            attr(set, "basis", basis, sizeof basis);
            snprintf(s->climate_basis, sizeof s->climate_basis, "monthly means, %s, %s", station,
                     basis);
            return 0;
        }
    }
    double annual = NAN, jan = NAN, jul = NAN, winter = NAN, summer = NAN;
    for (xmlNode *x = cl ? cl->children : NULL; x; x = x->next) {
        char months[16];
        if (is_element(x, "annual") && isnan(annual))
            annual = number(x, "mean");
        else if (is_element(x, "month") && number(x, "n") == 1 && isnan(jan))
            jan = value_or_middle(x, "mean", "min-mean", "max-mean");
        else if (is_element(x, "month") && number(x, "n") == 7 && isnan(jul))
            jul = value_or_middle(x, "mean", "min-mean", "max-mean");
        else if (is_element(x, "season") && attr(x, "months", months, sizeof months)) {
            if (!strcmp(months, "12 1 2"))
                winter = number(x, "mean");
            else if (!strcmp(months, "6 7 8"))
                summer = number(x, "mean");
        }
    }
    /* a season is the mean of three months of the cosine: (1 + 2 cos 30 deg) / 3 of H */
    double h = !isnan(jan) && !isnan(jul)         ? (jul - jan) / 2
               : !isnan(winter) && !isnan(summer) ? (summer - winter) / 2 / ((1 + sqrt(3.0)) / 3)
                                                  : NAN;
    if (isnan(annual) || isnan(h)) {
        snprintf(why, why_size, "site %s: the catalog has no twelve monthly temperatures, nor an "
                 "annual mean with January and July or winter and summer (sites.md lacks them)",
                 s->name);
        return -1;
    }
    for (int m = 0; m < 12; m++)
        s->climate.monthly_mean_c[m] = annual - h * cos(2 * 3.14159265358979323846 * m / 12);
    snprintf(s->climate_basis, sizeof s->climate_basis,
             "derived (D): annual mean %.1f degC with a %s swing of +-%.1f K as a sinusoid",
             annual, !isnan(jan) && !isnan(jul) ? "January-July" : "winter-summer", h);
    return 0;
}

/* The grid's factor: the latest provincial one, else the latest regional,
 * else the latest national average. */
static void emission_of(const xmlNode *root, const xmlNode *site, site_info *s)
{
    const char *scopes[] = {"provincial", "regional"};
    for (int k = 0; k < 2; k++) {
        double best_year = -1;
        for (xmlNode *e = child(site, "grid") ? child(site, "grid")->children : NULL; e;
             e = e->next) {
            char scope[32];
            attr(e, "scope", scope, sizeof scope);
            double year = number(e, "year");
            if (is_element(e, "emission-factor") && !strcmp(scope, scopes[k]) &&
                year > best_year && !isnan(number(e, "value"))) {
                best_year = year;
                s->emission_kg_per_kwh = number(e, "value");
                snprintf(s->emission_basis, sizeof s->emission_basis, "%s %.0f", scopes[k], year);
            }
        }
        if (best_year > 0)
            return;
    }
    double best_year = -1;
    for (xmlNode *e = child(root, "national") ? child(root, "national")->children : NULL; e;
         e = e->next) {
        char kind[32];
        double year = number(e, "year");
        if (is_element(e, "emission-factor") && !attr(e, "kind", kind, sizeof kind) &&
            year > best_year) {
            best_year = year;
            s->emission_kg_per_kwh = number(e, "value");
            snprintf(s->emission_basis, sizeof s->emission_basis, "national %.0f (default)", year);
        }
    }
    snprintf(s->defaults + strlen(s->defaults), sizeof s->defaults - strlen(s->defaults),
             "%semission factor", s->defaults[0] ? ", " : "");
}

/* The first <price><quote> (value, or the middle of min and max). */
static double quote_of(const xmlNode *site, char *basis, size_t size, int *estimate)
{
    const xmlNode *p = child(site, "price");
    for (xmlNode *q = p ? p->children : NULL; q; q = q->next) {
        double v = is_element(q, "quote") ? value_or_middle(q, "value", "min", "max") : NAN;
        if (isnan(v))
            continue;
        char what[96], year[8], mark[4];
        attr(q, "what", what, sizeof what);
        attr(q, "year", year, sizeof year);
        attr(q, "confidence", mark, sizeof mark);
        /* unverified (U) or assumed (A): a fallback, listed under "defaults used" */
        *estimate = !strcmp(mark, "U") || !strcmp(mark, "A");
        snprintf(basis, size, "%s%s%s%s%s", what, year[0] ? ", " : "", year,
                 *estimate ? "; confidence " : "", *estimate ? mark : "");
        return v;
    }
    return NAN;
}

/* the built-in sites.xml, read as every XML is (scn_read_xml); it is
 * compiled in and tested, so an error here (out of memory) reads as no sites */
static xmlDoc *catalog(void)
{
    return scn_read_xml(NULL, (const char *)dcsim_catalog_sites, dcsim_catalog_sites_len,
                        "sites.xml", NULL);
}

void site_names(char *buf, size_t size)
{
    xmlDoc *doc = catalog();
    size_t used = 0;
    buf[0] = '\0';
    for (xmlNode *n = doc ? xmlDocGetRootElement(doc)->children : NULL; n; n = n->next) {
        char name[32];
        if (is_element(n, "site") && attr(n, "name", name, sizeof name) && used < size)
            used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? ", " : "", name);
    }
    xmlFreeDoc(doc);
}

int site_lookup(const char *name, site_info *out, char *why, size_t why_size)
{
    xmlDoc *doc = catalog();
    xmlNode *root = doc ? xmlDocGetRootElement(doc) : NULL, *site = NULL;
    double quote_sum = 0;
    unsigned quotes = 0;
    for (xmlNode *n = root ? root->children : NULL; n; n = n->next) {
        char text[32], basis[8];
        if (!is_element(n, "site"))
            continue;
        attr(n, "name", text, sizeof text);
        if (!strcmp(text, name))
            site = n;
        attr(n, "kind", text, sizeof text);
        int estimate; /* a mean of estimates too: the mean is D either way */
        double q = quote_of(n, basis, sizeof basis, &estimate);
        if (!strcmp(text, "cluster") && !isnan(q)) {
            quote_sum += q;
            quotes++;
        }
    }
    if (!site) {
        char known[512];
        site_names(known, sizeof known);
        snprintf(why, why_size, "unknown site '%s'; known: %s", name, known);
        xmlFreeDoc(doc);
        return -1;
    }
    site_info s;
    memset(&s, 0, sizeof s);
    snprintf(s.name, sizeof s.name, "%s", name);
    if (!attr(site, "cluster", s.display, sizeof s.display))
        attr(site, "name", s.display, sizeof s.display);
    fac_climate_init(&s.climate);
    int rc = climate_of(site, &s, why, why_size);
    if (!rc) {
        emission_of(root, site, &s);
        int estimate = 0;
        s.price_per_kwh = quote_of(site, s.price_basis, sizeof s.price_basis, &estimate);
        if (estimate)
            snprintf(s.defaults + strlen(s.defaults), sizeof s.defaults - strlen(s.defaults),
                     "%sprice", s.defaults[0] ? ", " : "");
        if (isnan(s.price_per_kwh)) {
            /* none for this site: the mean of the clusters' first quotes (D) */
            s.price_per_kwh = quotes ? quote_sum / quotes : 0;
            snprintf(s.price_basis, sizeof s.price_basis,
                     "default: mean of the %u clusters' quotes in sites.xml (D)", quotes);
            snprintf(s.defaults + strlen(s.defaults), sizeof s.defaults - strlen(s.defaults),
                     "%sprice", s.defaults[0] ? ", " : "");
        }
        /* the annual relative humidity, where sites.md has one (a range: its
         * middle); the evaporative design then works on the wet-bulb */
        const xmlNode *hum = child(child(site, "climate"), "humidity");
        double rh = hum ? value_or_middle(hum, "mean", "min", "max") : NAN;
        if (rh > 0 && rh <= 100) {
            s.climate.rh_annual = rh / 100;
            size_t used = strlen(s.climate_basis);
            snprintf(s.climate_basis + used, sizeof s.climate_basis - used, "; RH %.3g %%", rh);
        }
        s.pue_target = child(site, "pue-target") ? number(child(site, "pue-target"), "max") : 0;
        if (isnan(s.pue_target))
            s.pue_target = 0;
        const xmlNode *grid = child(site, "grid");
        for (xmlNode *r = grid ? grid->children : NULL; r; r = r->next) {
            char kind[32];
            attr(r, "kind", kind, sizeof kind);
            double v = is_element(r, "renewable-share") && !strcmp(kind, "dc-consumption")
                           ? value_or_middle(r, "value", "min", "max")
                           : NAN;
            if (!isnan(v)) {
                s.renewable_share = v / 100;
                break;
            }
        }
        *out = s;
    }
    xmlFreeDoc(doc);
    return rc;
}

unsigned site_demand_centres(char (*names)[32], unsigned max)
{
    xmlDoc *doc = catalog();
    unsigned n = 0;
    for (xmlNode *s = doc ? xmlDocGetRootElement(doc)->children : NULL; s; s = s->next) {
        char kind[32];
        if (is_element(s, "site") && attr(s, "kind", kind, sizeof kind) &&
            !strcmp(kind, "demand-centre") && n < max)
            attr(s, "name", names[n++], 32);
    }
    xmlFreeDoc(doc);
    return n;
}

double site_rtt_s(const char *from, const char *to)
{
    xmlDoc *doc = catalog();
    double v = NAN;
    for (xmlNode *s = doc ? xmlDocGetRootElement(doc)->children : NULL; s; s = s->next) {
        char name[32], dest[32];
        if (!is_element(s, "site") || !attr(s, "name", name, sizeof name) || strcmp(name, from))
            continue;
        for (xmlNode *r = child(child(s, "latency"), "rtt"); r; r = r->next)
            if (is_element(r, "rtt") && attr(r, "to", dest, sizeof dest) && !strcmp(dest, to))
                v = number(r, "value") / 1e3; /* "14.8ms" */
    }
    xmlFreeDoc(doc);
    return v;
}
