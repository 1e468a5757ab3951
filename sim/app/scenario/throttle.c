/* throttle.c - <reliability><throttle cooling above speed gpus
 * [temperature]>: GPUs that throttle in the site's hours above a
 * temperature, the dry bulb or (the evaporative design's default) the wet
 * bulb (docs/failures.md "Thermal throttling"). shared/reference has no throttle temperature, inlet
 * class or throttled clock for any GPU or cooling design, so the threshold,
 * the slowed speed and the GPUs that slow are the scenario's (all required).
 * One element per cooling design at most; the one for the <site>'s cooling
 * (or the one without cooling=) applies, so a --set of site/@cooling picks
 * the design's threshold.
 */
#include "loader.h"

#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>

/* the coldest and hottest thresholds taken (degC): beyond the range of any
 * outdoor temperature on Earth, so "below every hour" and "above every
 * hour" can both be written */
#define THROTTLE_ABOVE_MIN_C -100.0
#define THROTTLE_ABOVE_MAX_C 100.0

/* "32C" or "-5C" */
static int get_celsius(loader *ld, xmlNode *n, const char *attr, double *out)
{
    char text[64];
    copy_attr(n, attr, text, sizeof text);
    char *end = NULL;
    double x = strtod(text, &end);
    if (end == text || strcmp(end, "C") || !(x >= THROTTLE_ABOVE_MIN_C &&
                                             x <= THROTTLE_ABOVE_MAX_C))
        return node_error(ld, n, attr, "expected a temperature from %g to %g in C, e.g. "
                          "\"32C\" (the outdoor dry-bulb, or wet-bulb, temperature above "
                          "which the GPUs throttle)", THROTTLE_ABOVE_MIN_C, THROTTLE_ABOVE_MAX_C);
    *out = x;
    return 0;
}

static int parse_one(loader *ld, xmlNode *t, scn_scenario *s)
{
    int rc = get_celsius(ld, t, "above", &s->throttle_above_c);
    if (!rc)
        rc = get_quantity(ld, t, "speed", SIM_DIM_FRACTION, 1, &s->throttle_gpu_speed);
    if (!rc && !(s->throttle_gpu_speed > 0 && s->throttle_gpu_speed < 1))
        rc = node_error(ld, t, "speed", "a throttled GPU runs at above 0%% and below 100%% "
                        "of nominal speed (85%%: a clock cut by 15 %%)");
    char gpus[32];
    copy_attr(t, "gpus", gpus, sizeof gpus);
    s->throttle_gpus = 0;
    if (!rc && strcmp(gpus, "all")) {
        char *end = NULL;
        double n = strtod(gpus, &end);
        if (end == gpus || *end || !(n >= 1 && n <= (double)s->campaign.gpu_count) ||
            n != (double)(uint32_t)n)
            rc = node_error(ld, t, "gpus", "expected \"all\" or a whole number of GPUs from 1 "
                            "to the job's %llu (GPUs 0 .. N-1 throttle)",
                            (unsigned long long)s->campaign.gpu_count);
        else
            s->throttle_gpus = (uint32_t)n;
    }
    char temp[24];
    copy_attr(t, "temperature", temp, sizeof temp);
    int evaporative = s->site.design.cooling == FAC_COOLING_EVAPORATIVE;
    s->throttle_wetbulb = temp[0] ? !strcmp(temp, "wet-bulb") : evaporative;
    s->throttle_wetbulb_default = !temp[0] && evaporative;
    if (!rc && s->throttle_wetbulb && !(s->site.info.climate.rh_annual > 0))
        rc = node_error(ld, t, temp[0] ? "temperature" : NULL,
                        "throttling on the wet-bulb temperature%s needs the site's humidity, "
                        "and sites.xml has none for %s (sites with one: shaoguan, tianfu, "
                        "chongqing, guian, zhongwei); or give temperature=\"dry-bulb\"",
                        temp[0] ? "" : " (the evaporative design's default)",
                        s->site.info.name);
    if (!rc && !s->step_computes_iteration)
        rc = node_error(ld, t, NULL, "thermal throttling needs the step tier to time the "
                        "iteration with the throttled GPUs: remove <training mfu> (it fixes "
                        "the iteration time)");
    s->throttle_given = !rc;
    return rc;
}

int parse_throttle(loader *ld, xmlNode *root, scn_scenario *s)
{
    xmlNode *rel = child(root, "reliability");
    const char *site = s->site.given ? fac_cooling_name(s->site.design.cooling) : NULL;
    xmlNode *chosen = NULL, *any = NULL, *first = NULL;
    char seen[FAC_COOLING_COUNT + 1][24];
    unsigned n_seen = 0;
    for (xmlNode *t = rel ? rel->children : NULL; t; t = t->next) {
        if (t->type != XML_ELEMENT_NODE || !xmlStrEqual(t->name, (const xmlChar *)"throttle"))
            continue;
        first = first ? first : t;
        char cooling[24];
        copy_attr(t, "cooling", cooling, sizeof cooling);
        for (unsigned i = 0; i < n_seen; i++)
            if (!strcmp(seen[i], cooling))
                return node_error(ld, t, cooling[0] ? "cooling" : NULL,
                                  "a second <throttle> for %s: one per cooling design",
                                  cooling[0] ? cooling : "every design (no cooling=)");
        if (n_seen < FAC_COOLING_COUNT + 1)
            snprintf(seen[n_seen++], sizeof seen[0], "%s", cooling);
        if (!cooling[0])
            any = t;
        else if (site && !strcmp(cooling, site))
            chosen = t;
    }
    if (!first)
        return 0;
    if (!s->site.given)
        return node_error(ld, first, NULL, "thermal throttling needs a <site>: the hot hours "
                          "come from its hourly temperature (docs/energy.md)");
    if (!chosen)
        chosen = any;
    if (!chosen)
        return node_error(ld, first, "cooling", "no <throttle> for the site's cooling "
                          "(%s): add one with cooling=\"%s\", or one without cooling= for "
                          "every design", site, site);
    return parse_one(ld, chosen, s);
}
