/* hubs_backbone.c - <hubs><backbone> (docs/hubs.md "A shared backbone"):
 * transit <node>s and <link a b bandwidth latency> rows between the hubs, the
 * demand centres and the transit nodes. A link's RTT is its latency, or the
 * catalog's RTT between its two ends (sites.md 8.2) when both are catalog
 * sites; its bandwidth, each way, is <hubs bandwidth> unless given; its
 * cost-per-tb (CNY per TB that crosses it, on top of <hubs cost-per-tb>)
 * 0 unless given. Every
 * (demand centre, hub) pair gets its shortest-RTT route; a hub's RTT to a
 * demand centre becomes the route's (the policies', the SLO's). */
#include "loader.h"
#include "site.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* node named by n's attribute, or an error listing the known ones */
static int link_end(loader *ld, xmlNode *n, const char *attr, const hubs_backbone *b,
                    unsigned *node)
{
    char name[64];
    copy_attr(n, attr, name, sizeof name);
    *node = hubs_bb_node(b, name);
    if (*node != UINT32_MAX)
        return 0;
    char known[HUBS_BB_MAX_NODES * (HUBS_BB_NAME + 2)] = "";
    for (unsigned i = 0; i < b->n_nodes; i++) {
        if (i)
            strcat(known, ", ");
        strcat(known, b->node[i]);
    }
    return node_error(ld, n, attr, "unknown node '%s'; known: %s (the hubs, the demand "
                      "centres and the <node>s)", name, known);
}

static int add_node(loader *ld, xmlNode *n, hubs_backbone *b, const char *name)
{
    if (hubs_bb_node(b, name) != UINT32_MAX)
        return node_error(ld, n, "name", "node '%s' given twice (the hubs and the demand "
                          "centres are nodes already)", name);
    if (b->n_nodes == HUBS_BB_MAX_NODES)
        return node_error(ld, n, NULL, "at most %u backbone nodes", HUBS_BB_MAX_NODES);
    if (!name[0] || strlen(name) >= HUBS_BB_NAME)
        return node_error(ld, n, "name", "a node's name must have 1 to %u characters",
                          HUBS_BB_NAME - 1);
    strcpy(b->node[b->n_nodes++], name);
    return 0;
}

static int parse_link(loader *ld, xmlNode *n, const scn_hubs *H, hubs_backbone *b)
{
    if (b->n_links == HUBS_BB_MAX_LINKS)
        return node_error(ld, n, NULL, "at most %u backbone links", HUBS_BB_MAX_LINKS);
    hubs_link *k = &b->link[b->n_links];
    int rc = link_end(ld, n, "a", b, &k->a);
    if (!rc)
        rc = link_end(ld, n, "b", b, &k->b);
    if (!rc && k->a == k->b)
        rc = node_error(ld, n, "b", "a link joins two nodes, not '%s' to itself",
                        b->node[k->a]);
    for (unsigned l = 0; !rc && l < b->n_links; l++)
        if ((b->link[l].a == k->a && b->link[l].b == k->b) ||
            (b->link[l].a == k->b && b->link[l].b == k->a))
            rc = node_error(ld, n, "b", "the link %s - %s is given twice", b->node[k->a],
                            b->node[k->b]);
    double bw = H->cfg.bandwidth_bps / 8;
    if (!rc && has_attr(n, "bandwidth")) {
        rc = get_quantity(ld, n, "bandwidth", SIM_DIM_BANDWIDTH, 1, &bw);
        if (!rc)
            rc = positive(ld, n, "bandwidth", bw, 1e15, " bytes/s");
    }
    k->bandwidth_bps = 8 * bw;
    if (!rc && has_attr(n, "latency")) {
        rc = get_quantity(ld, n, "latency", SIM_DIM_TIME, 1, &k->rtt_s);
        if (!rc)
            rc = non_negative(ld, n, "latency", k->rtt_s);
        if (!rc && !(k->rtt_s <= 10))
            rc = node_error(ld, n, "latency", "latency %g s: at most 10 s", k->rtt_s);
    } else if (!rc) {
        k->rtt_s = site_rtt_s(b->node[k->a], b->node[k->b]);
        if (isnan(k->rtt_s))
            k->rtt_s = site_rtt_s(b->node[k->b], b->node[k->a]);
        if (isnan(k->rtt_s))
            rc = node_error(ld, n, "latency", "the catalog has no RTT between '%s' and '%s' "
                            "(sites.xml <latency>): give latency=\"T\"", b->node[k->a],
                            b->node[k->b]);
    }
    k->cost_per_tb = 0;
    if (!rc && has_attr(n, "cost-per-tb")) {
        rc = get_quantity(ld, n, "cost-per-tb", SIM_DIM_COUNT, 1, &k->cost_per_tb);
        if (!rc)
            rc = non_negative(ld, n, "cost-per-tb", k->cost_per_tb);
    }
    if (!rc)
        b->n_links++;
    return rc;
}

int parse_hubs_backbone(loader *ld, xmlNode *hubs, scn_scenario *s)
{
    xmlNode *n = child(hubs, "backbone");
    if (!n)
        return 0;
    scn_hubs *H = s->hubs;
    hubs_config *c = &H->cfg;
    hubs_routes *R = H->routes = calloc(1, sizeof *H->routes);
    if (!R)
        return sim_error_set(ld->err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
    hubs_backbone *b = &R->bb;
    int rc = 0;
    for (unsigned h = 0; h < c->n_hubs && !rc; h++)
        rc = add_node(ld, n, b, c->hubs[h].name);
    for (unsigned o = 0; o < c->n_origins && !rc; o++)
        rc = add_node(ld, n, b, c->origin[o]);
    for (xmlNode *x = n->children; x && !rc; x = x->next)
        if (x->type == XML_ELEMENT_NODE && !strcmp((const char *)x->name, "node")) {
            char name[64];
            copy_attr(x, "name", name, sizeof name);
            rc = add_node(ld, x, b, name);
        }
    for (xmlNode *x = n->children; x && !rc; x = x->next)
        if (x->type == XML_ELEMENT_NODE && !strcmp((const char *)x->name, "link"))
            rc = parse_link(ld, x, H, b);
    if (!rc && !b->n_links)
        rc = node_error(ld, n, NULL, "a <backbone> needs at least one <link>");
    for (unsigned o = 0; o < c->n_origins && !rc; o++)
        for (unsigned h = 0; h < c->n_hubs; h++) {
            hubs_path *p = &R->path[o][h];
            R->has[o][h] = !hubs_bb_route(b, hubs_bb_node(b, c->origin[o]),
                                          hubs_bb_node(b, c->hubs[h].name), p);
            if (R->has[o][h])
                c->hubs[h].rtt_s[o] = p->rtt_s;
        }
    if (!rc)
        c->backbone = R;
    return rc;
}

/* after the demand: every origin with a job reaches every hub */
int check_hubs_backbone(loader *ld, xmlNode *hubs, const scn_scenario *s)
{
    const hubs_config *c = &s->hubs->cfg;
    const hubs_routes *R = c->backbone;
    int used[HUBS_MAX_ORIGINS] = {0};
    for (uint32_t i = 0; R && i < c->n_jobs; i++)
        used[c->jobs[i].origin] = 1;
    for (unsigned o = 0; R && o < c->n_origins; o++)
        for (unsigned h = 0; used[o] && h < c->n_hubs; h++)
            if (!R->has[o][h])
                return node_error(ld, child(hubs, "backbone"), NULL, "no route from %s (a "
                                  "demand centre with jobs) to hub %s: add a <link>",
                                  c->origin[o], c->hubs[h].name);
    return 0;
}
