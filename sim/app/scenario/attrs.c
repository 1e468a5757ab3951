/* attrs.c - reading attributes: child elements, strings, quantities with
 * their units (sim_units_parse), and the range checks every parser shares
 * (positive, non_negative, whole, fractions, bounded whole numbers,
 * booleans). Each failure is a node_error naming the attribute.
 */
#include "loader.h"

#include <math.h>
#include <stdio.h>

#include <libxml/tree.h>

xmlNode *child(xmlNode *n, const char *name)
{
    for (xmlNode *c = n ? n->children : NULL; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && xmlStrEqual(c->name, (const xmlChar *)name))
            return c;
    return NULL;
}

int has_attr(xmlNode *n, const char *attr)
{
    return xmlHasProp(n, (const xmlChar *)attr) != NULL;
}

void copy_attr(xmlNode *n, const char *attr, char *out, size_t size)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)attr);
    snprintf(out, size, "%s", v ? (const char *)v : "");
    xmlFree(v);
}

/* Parse a quantity attribute. Absent and not required: *out untouched, 0. */
int get_quantity(loader *ld, xmlNode *n, const char *attr, enum sim_dim dim,
                 int required, double *out)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)attr);
    if (!v) {
        if (required)
            return node_error(ld, n, NULL, "attribute '%s' is required", attr);
        return 0;
    }
    char why[400];
    double x;
    int bad = sim_units_parse((const char *)v, dim, &x, why, sizeof why);
    xmlFree(v);
    if (bad)
        return node_error(ld, n, attr, "%s", why);
    *out = x;
    return 0;
}

int positive(loader *ld, xmlNode *n, const char *attr, double x, double max,
             const char *unit_hint)
{
    if (!(x > 0))
        return node_error(ld, n, attr, "%s must be positive", attr);
    if (x > max)
        return node_error(ld, n, attr, "%s must be at most %.15g%s", attr, max, unit_hint);
    return 0;
}

int non_negative(loader *ld, xmlNode *n, const char *attr, double x)
{
    if (!(x >= 0))
        return node_error(ld, n, attr, "%s must be zero or positive", attr);
    return 0;
}

int whole(loader *ld, xmlNode *n, const char *attr, double x)
{
    if (x != floor(x))
        return node_error(ld, n, attr, "%s must be a whole number", attr);
    return 0;
}

int get_fraction(loader *ld, xmlNode *n, const char *attr, double *out)
{
    int rc = get_quantity(ld, n, attr, SIM_DIM_FRACTION, 0, out);
    if (!rc && has_attr(n, attr) && !(*out > 0 && *out <= 1))
        rc = node_error(ld, n, attr, "%s must be above 0 and at most 100%%", attr);
    return rc;
}

/* a whole-number attribute in [min, max]; absent and optional: untouched */
int get_uint(loader *ld, xmlNode *n, const char *attr, int required, unsigned min,
             unsigned max, unsigned *out)
{
    if (!has_attr(n, attr)) {
        if (required)
            return node_error(ld, n, NULL, "attribute '%s' is required", attr);
        return 0;
    }
    double x = 0;
    int rc = get_quantity(ld, n, attr, SIM_DIM_COUNT, 1, &x);
    if (!rc)
        rc = whole(ld, n, attr, x);
    if (!rc && (x < min || x > max))
        rc = node_error(ld, n, attr, "%s must be between %u and %u", attr, min, max);
    if (!rc)
        *out = (unsigned)x;
    return rc;
}

int get_bool(loader *ld, xmlNode *n, const char *attr, int *out)
{
    (void)ld;
    xmlChar *v = xmlGetProp(n, (const xmlChar *)attr);
    if (v)
        *out = xmlStrEqual(v, (const xmlChar *)"true");
    xmlFree(v);
    return 0;
}
