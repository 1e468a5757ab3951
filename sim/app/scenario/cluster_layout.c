/* cluster_layout.c - a <traffic> class's parallel layout (tp, pp, ep) and
 * its <collective kind group bytes> rows (docs/scenario.md
 * "<cluster-jobs><traffic>", docs/cluster.md "Parallel layout"), and the
 * check that every job of the class fits its layout (its GPUs a whole
 * number of tp x pp, its data-parallel degree of ep), made once the jobs
 * are read. A class without tp, pp, ep or rows keeps its one collective over
 * all its GPUs (n_colls 0: the form before layouts).
 */
#include "loader.h"

#include <stdio.h>
#include <string.h>

static int is_element(xmlNode *c, const char *name)
{
    return c->type == XML_ELEMENT_NODE && !strcmp((const char *)c->name, name);
}

static int degree(loader *ld, xmlNode *n, const char *attr, uint32_t *out)
{
    double x = 0;
    int rc = get_quantity(ld, n, attr, SIM_DIM_COUNT, 1, &x);
    if (!rc)
        rc = whole(ld, n, attr, x);
    if (!rc && !(x >= 1 && x <= CLUSTER_MAX_GPUS))
        rc = node_error(ld, n, attr, "%s must be from 1 to %u GPUs", attr, CLUSTER_MAX_GPUS);
    if (!rc)
        *out = (uint32_t)x;
    return rc;
}

static int one_coll(loader *ld, xmlNode *c, cluster_coll *out)
{
    char kind[32], group[16];
    copy_attr(c, "kind", kind, sizeof kind);
    copy_attr(c, "group", group, sizeof group);
    out->collective = cluster_traffic_collective_parse(kind);
    out->group = cluster_group_parse(group);
    if (out->collective < 0) /* only if the schema and the table drift apart */
        return node_error(ld, c, "kind", "unknown collective '%s'", kind);
    if (out->group < 0 || out->group >= CLUSTER_GROUP_BY_HAND) /* cp, edp: a model's own */
        return node_error(ld, c, "group", "unknown group '%s'; use dp, tp, pp or ep", group);
    if (out->collective == NC_SENDRECV && out->group != CLUSTER_GROUP_PP)
        return node_error(ld, c, "group", "a send runs between neighbouring pipeline stages: "
                          "give group=\"pp\"");
    int rc = get_quantity(ld, c, "bytes", SIM_DIM_DATA, 1, &out->bytes);
    if (!rc && !(out->bytes >= 0 && out->bytes <= 1e13))
        rc = node_error(ld, c, "bytes", "bytes must be from 0 to 10 TB per GPU");
    return rc;
}

int traffic_layout(loader *ld, xmlNode *n, cluster_traffic *t)
{
    static const char *const dims[3] = {"tp", "pp", "ep"};
    uint32_t *v[3] = {&t->tp, &t->pp, &t->ep};
    int rc = 0;
    for (int i = 0; !rc && i < 3; i++)
        if (has_attr(n, dims[i]))
            rc = degree(ld, n, dims[i], v[i]);
    unsigned rows = 0;
    for (xmlNode *c = n->children; !rc && c; c = c->next) {
        if (!is_element(c, "collective"))
            continue;
        if (!rows++) /* a class's own rows replace those it took from <traffic> */
            t->n_colls = 0;
        rc = one_coll(ld, c, &t->coll[t->n_colls++]); /* the schema allows CLUSTER_MAX_COLLS */
    }
    const char *const single[3] = {"collective", "bytes", "allreduce"};
    for (int i = 0; !rc && t->n_colls && i < 3; i++)
        if (has_attr(n, single[i]))
            rc = node_error(ld, n, single[i], "%s sizes the one collective of a class without "
                            "<collective> rows; this class has %s: size them there",
                            single[i], rows ? "its own" : "<traffic>'s");
    return rc;
}

/* the element of class i: <traffic> itself (0), else its i-th <class> */
static xmlNode *class_node(xmlNode *traffic, unsigned i)
{
    unsigned k = 0;
    for (xmlNode *c = traffic->children; i && c; c = c->next)
        if (is_element(c, "class") && ++k == i)
            return c;
    return traffic;
}

static int has_layout(const cluster_traffic *t)
{
    return t->n_colls > 0 || t->from_model;
}

/* a job of g GPUs against its class; elastic: why it may resize, or NULL */
static int check_job(loader *ld, xmlNode *traffic, const scn_scenario *s, uint32_t g,
                     const char *elastic, xmlNode *at, const char *what)
{
    const cluster_traffic_table *tt = &s->cluster_traffic;
    const cluster_traffic *t = cluster_traffic_of(tt, g);
    unsigned i = (unsigned)(t - tt->t);
    char why[160];
    if (!has_layout(t))
        return 0;
    xmlNode *cn = class_node(traffic, i);
    if (elastic && s->cluster_jobs.elastic)
        return node_error(ld, at, NULL, "%s may be elastic (%s) and takes the "
                          "<traffic> class from %u GPU%s (line %ld), whose layout needs whole "
                          "multiples of tp x pp: make the jobs rigid or drop the layout",
                          what, elastic, tt->from_gpus[i], tt->from_gpus[i] > 1 ? "s" : "",
                          xmlGetLineNo(cn));
    if (cluster_layout_check(t, g, why, sizeof why))
        return node_error(ld, at, NULL, "%s takes the <traffic> class from %u GPU%s (line %ld), "
                          "whose layout does not fit: %s", what, tt->from_gpus[i],
                          tt->from_gpus[i] > 1 ? "s" : "", xmlGetLineNo(cn), why);
    if (t->from_model)
        return traffic_model_check(ld, at, s, i, g, what, xmlGetLineNo(cn));
    return 0;
}

int traffic_layout_jobs(loader *ld, xmlNode *cluster_jobs, const scn_scenario *s)
{
    xmlNode *traffic = child(cluster_jobs, "traffic");
    if (!traffic || !s->has_cluster_traffic)
        return 0;
    const cluster_config *c = &s->cluster_jobs;
    char what[64];
    int rc = 0;
    if (!c->jobs) { /* the stream: its <sizes> rows */
        xmlNode *sizes = child(cluster_jobs, "sizes");
        unsigned i = 0;
        for (xmlNode *r = sizes ? sizes->children : NULL; !rc && r; r = r->next) {
            if (r->type != XML_ELEMENT_NODE)
                continue;
            uint32_t g = c->stream.size_gpus[i++];
            snprintf(what, sizeof what, "a job of %u GPUs", g);
            rc = check_job(ld, traffic, s, g,
                           c->stream.elastic_share > 0 ? "<sizes elastic-share>" : NULL, r, what);
        }
        return rc;
    }
    xmlNode *trace = child(cluster_jobs, "trace");
    for (uint32_t i = 0; !rc && i < c->n_jobs; i++) {
        uint32_t g = c->jobs[i].gpus, low = c->min_gpus ? c->min_gpus[i] : 0;
        char down[48];
        snprintf(down, sizeof down, "down to %u GPUs", low);
        snprintf(what, sizeof what, "trace job %u (%u GPUs)", i + 1, g);
        rc = check_job(ld, traffic, s, g, low && low < g ? down : NULL,
                       trace ? trace : cluster_jobs, what);
    }
    return rc;
}
