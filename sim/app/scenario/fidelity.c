/* fidelity.c - <fabric><fidelity>: the multi-fidelity table the packet tier
 * measures (dcsim netbench --tier packet --op fidelity, docs/fabric.md
 * "Multi-fidelity"): the capacity fraction of a link into a host
 * (<incast>) and of a link between switches (<sharing>) against the
 * number of flows on it, which the flow tier uses instead of a constant;
 * and SHARP's capacity fraction (<in-network>, InfiniBand only), which the
 * flow tier's in-network all-reduce uses instead of the reduction rate.
 * Usually the measured file is XIncluded:
 *   <fabric ...><xi:include href="roce-fidelity.xml"/></fabric>
 */
#include <stdio.h>
#include <string.h>

#include "loader.h"

/* One <incast> or <sharing> row appended to curve. */
static int parse_point(loader *ld, xmlNode *n, flow_curve *curve)
{
    const char *what = (const char *)n->name;
    if (curve->n_points == FLOW_CURVE_POINTS)
        return node_error(ld, n, NULL, "a <fidelity> table holds at most %d <%s> rows",
                          FLOW_CURVE_POINTS, what);
    unsigned flows = 0;
    double efficiency = 0;
    int rc = get_uint(ld, n, "flows", 1, 2, 1000000, &flows);
    if (!rc && !has_attr(n, "efficiency"))
        rc = node_error(ld, n, NULL, "attribute 'efficiency' is required");
    if (!rc)
        rc = get_fraction(ld, n, "efficiency", &efficiency);
    if (rc)
        return rc;
    unsigned k = curve->n_points;
    if (k > 0 && !(flows > curve->flows[k - 1]))
        return node_error(ld, n, "flows", "<%s> rows must ascend in flows: %u after %.0f", what,
                          flows, curve->flows[k - 1]);
    curve->flows[k] = flows;
    curve->efficiency[k] = efficiency;
    curve->n_points = k + 1;
    return 0;
}

/* The <in-network> row: one, on a link with in-network reduction (SHARP). */
static int parse_in_network(loader *ld, xmlNode *n, fabric_config *c)
{
    if (c->sharp_efficiency > 0)
        return node_error(ld, n, NULL, "a <fidelity> table holds at most one <in-network> row");
    if (!c->link.has_in_network_reduction)
        return node_error(ld, n, NULL, "%s has no in-network reduction (SHARP is InfiniBand's): "
                          "a table for it has no <in-network> row", c->link.name);
    unsigned ranks = 0;
    int rc = get_uint(ld, n, "ranks", 1, 2, 1000000, &ranks);
    if (!rc && !has_attr(n, "efficiency"))
        rc = node_error(ld, n, NULL, "attribute 'efficiency' is required");
    if (!rc)
        rc = get_fraction(ld, n, "efficiency", &c->sharp_efficiency);
    if (!rc)
        rc = get_quantity(ld, n, "latency", SIM_DIM_TIME, 0, &c->sharp_latency_s);
    if (!rc)
        rc = non_negative(ld, n, "latency", c->sharp_latency_s);
    c->sharp_ranks = ranks;
    return rc;
}

int parse_fidelity(loader *ld, xmlNode *fabric_node, fabric_config *c, char *source,
                   size_t source_size)
{
    xmlNode *n = child(fabric_node, "fidelity");
    if (!n)
        return 0;
    char link[64];
    copy_attr(n, "link", link, sizeof link);
    if (strcmp(link, c->link.name) != 0)
        return node_error(ld, n, "link", "the table was measured on %s, the fabric's link is "
                          "%s: measure one for %s (docs/fabric.md \"Multi-fidelity\")",
                          link, c->link.name, c->link.name);
    copy_attr(n, "source", source, source_size);
    for (xmlNode *r = n->children; r; r = r->next) {
        if (r->type != XML_ELEMENT_NODE)
            continue;
        int is_incast = strcmp((const char *)r->name, "incast") == 0;
        int rc = strcmp((const char *)r->name, "in-network") == 0
                     ? parse_in_network(ld, r, c)
                     : parse_point(ld, r, is_incast ? &c->incast_curve : &c->sharing_curve);
        if (rc)
            return rc;
    }
    if (c->incast_curve.n_points && has_attr(fabric_node, "incast-efficiency"))
        return node_error(ld, fabric_node, "incast-efficiency",
                          "incast-efficiency and <fidelity><incast> both give the incast "
                          "efficiency: keep one");
    if (!c->incast_curve.n_points && !c->sharing_curve.n_points && !(c->sharp_efficiency > 0))
        return node_error(ld, n, NULL, "<fidelity> has no <incast>, <sharing> or <in-network> "
                          "row");
    return 0;
}

int scn_fidelity_text(const scn_scenario *s, char *out, size_t size)
{
    const fabric_config *c = &s->fabric;
    out[0] = 0;
    if (!s->has_fabric ||
        (!c->incast_curve.n_points && !c->sharing_curve.n_points && !(c->sharp_efficiency > 0)))
        return 0;
    snprintf(out, size, "%u incast and %u sharing rows%s (%s)", c->incast_curve.n_points,
             c->sharing_curve.n_points, c->sharp_efficiency > 0 ? ", SHARP" : "",
             s->fidelity_source[0] ? s->fidelity_source : "no source given");
    return 1;
}
