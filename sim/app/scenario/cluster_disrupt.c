/* cluster_disrupt.c - <cluster-jobs> disruption (dcsim cluster; docs/cluster.md
 * "Preemption, maintenance and failures"): <scheduler preempt>, <checkpoint>,
 * <maintenance><reservation>, <failures>, into s->cluster_jobs. The
 * checkpoint interval, write and restart times and the repair time have no
 * default (shared/reference gives none for a stream of jobs): the scenario
 * states them. The failure rate defaults to the catalog's inventory
 * (failures.xml, llama3-54d) per node, printed under "defaults used".
 */
#include "loader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const unsigned char dcsim_catalog_failures[];
extern const size_t dcsim_catalog_failures_len;

#define MAX_SPAN_S 3.2e8 /* ten years */
#define MAX_WINDOWS 256

static int time_attr(loader *ld, xmlNode *n, const char *attr, int is_positive, double *out)
{
    int rc = get_quantity(ld, n, attr, SIM_DIM_TIME, 1, out);
    if (!rc && !((is_positive ? *out > 0 : *out >= 0) && *out <= MAX_SPAN_S))
        rc = node_error(ld, n, attr, "%s must be %s 0 and at most ten years", attr,
                        is_positive ? "above" : "at least");
    return rc;
}

static int parse_ckpt(loader *ld, xmlNode *n, cluster_ckpt *k)
{
    int rc = time_attr(ld, n, "interval", 0, &k->interval_s);
    if (!rc)
        rc = time_attr(ld, n, "write", 0, &k->write_s);
    if (!rc)
        rc = time_attr(ld, n, "restart", 0, &k->restart_s);
    return rc;
}

/* "A-B" or "A": whole numbers, A <= B < limit */
static int parse_range(loader *ld, xmlNode *n, const char *attr, uint32_t limit, uint32_t *a,
                       uint32_t *b)
{
    char text[64], *end = NULL;
    copy_attr(n, attr, text, sizeof text);
    unsigned long x = strtoul(text, &end, 10), y = x;
    int ok = end != text && text[0] >= '0' && text[0] <= '9';
    if (ok && *end == '-') {
        const char *p = end + 1;
        y = strtoul(p, &end, 10);
        ok = end != p && p[0] >= '0' && p[0] <= '9';
    }
    if (!ok || *end || x > y || y >= limit)
        return node_error(ld, n, attr, "%s \"%s\": give A-B (or A), whole numbers with A <= B "
                          "< %u", attr, text, limit);
    *a = (uint32_t)x;
    *b = (uint32_t)y;
    return 0;
}

static int parse_windows(loader *ld, xmlNode *m, scn_scenario *s)
{
    cluster_config *c = &s->cluster_jobs;
    uint32_t count = 0;
    for (xmlNode *r = m->children; r; r = r->next)
        count += r->type == XML_ELEMENT_NODE;
    if (!count || count > MAX_WINDOWS)
        return node_error(ld, m, NULL, "<maintenance> holds 1 to %d <reservation>", MAX_WINDOWS);
    s->cluster_resv = calloc(count, sizeof *s->cluster_resv);
    if (!s->cluster_resv)
        return node_error(ld, m, NULL, "out of memory");
    for (xmlNode *r = m->children; r; r = r->next) {
        if (r->type != XML_ELEMENT_NODE)
            continue;
        cluster_reservation *w = &s->cluster_resv[c->n_resv++];
        int rc = time_attr(ld, r, "start", 0, &w->start_s);
        if (!rc)
            rc = time_attr(ld, r, "duration", 1, &w->duration_s);
        if (rc)
            return rc;
        int has_gpus = has_attr(r, "gpus"), has_nodes = has_attr(r, "nodes");
        if (has_gpus == has_nodes)
            return node_error(ld, r, NULL, "give exactly one of gpus=\"A-B\" or nodes=\"A-B\"");
        uint32_t a = 0, b = 0, per = has_gpus ? 1 : c->node_gpus;
        rc = parse_range(ld, r, has_gpus ? "gpus" : "nodes", c->gpus / per, &a, &b);
        if (rc)
            return rc;
        w->gpu0 = a * per;
        w->gpus = (b - a + 1) * per;
    }
    c->resv = s->cluster_resv;
    return 0;
}

/* the inventory's causes as one rate per node of g GPUs: node causes per
 * node, GPU and cable causes per GPU (the published run's cables grew with
 * its GPUs), count / (units x days x 86,400 s) */
static int inventory_rate(loader *ld, xmlNode *f, const char *want, uint32_t g, double *rate)
{
    xmlDoc *doc = scn_read_xml(NULL, (const char *)dcsim_catalog_failures,
                               dcsim_catalog_failures_len, "failures.xml", ld->err);
    if (!doc)
        return ld->err ? ld->err->code : SIM_ERR_NOMEM;
    xmlNode *inv = NULL, *root = xmlDocGetRootElement(doc);
    for (xmlNode *n = root ? root->children : NULL; n && !inv; n = n->next) {
        char name[64];
        copy_attr(n, "name", name, sizeof name);
        if (n->type == XML_ELEMENT_NODE && !strcmp(name, want))
            inv = n;
    }
    if (!inv) {
        xmlFreeDoc(doc);
        return node_error(ld, f, "inventory", "unknown failure inventory \"%s\" (the catalog's "
                          "failures.xml)", want);
    }
    char text[64];
    copy_attr(inv, "gpus", text, sizeof text);
    double gpus = atof(text);
    copy_attr(inv, "nodes", text, sizeof text);
    double nodes = atof(text);
    copy_attr(inv, "days", text, sizeof text);
    double seconds = atof(text) * 86400;
    *rate = 0;
    for (xmlNode *n = inv->children; n; n = n->next) {
        if (n->type != XML_ELEMENT_NODE)
            continue;
        copy_attr(n, "count", text, sizeof text);
        double count = atof(text);
        copy_attr(n, "unit", text, sizeof text);
        *rate += strcmp(text, "node") ? count * g / (gpus * seconds) : count / (nodes * seconds);
    }
    xmlFreeDoc(doc);
    return 0;
}

static int parse_failures(loader *ld, xmlNode *f, scn_scenario *s)
{
    cluster_config *c = &s->cluster_jobs;
    cluster_failures *x = &c->fail;
    int rc = 0;
    if (has_attr(f, "rate") && has_attr(f, "inventory"))
        return node_error(ld, f, "rate", "give rate or inventory, not both");
    if (has_attr(f, "rate")) {
        rc = get_quantity(ld, f, "rate", SIM_DIM_FREQUENCY, 1, &x->rate_per_node_s);
        if (!rc && !(x->rate_per_node_s >= 0 && x->rate_per_node_s <= 1))
            rc = node_error(ld, f, "rate", "rate must be from 0 to 1 per node-second (e.g. "
                            "\"1.6e-4/h\")");
    } else {
        char want[64] = "llama3-54d";
        if (has_attr(f, "inventory"))
            copy_attr(f, "inventory", want, sizeof want);
        rc = inventory_rate(ld, f, want, c->node_gpus, &x->rate_per_node_s);
        if (!rc && !has_attr(f, "inventory")) {
            char text[200];
            snprintf(text, sizeof text, "failure rate %.4g per node-hour (S: the catalog's "
                     "llama3-54d inventory, calibration.md 2c, for nodes of %u GPUs)",
                     x->rate_per_node_s * 3600, c->node_gpus);
            cluster_note(s, text);
        }
    }
    if (!rc)
        rc = time_attr(ld, f, "repair", 1, &x->repair_s);
    if (!rc && has_attr(f, "spares")) {
        double n = 0;
        rc = get_quantity(ld, f, "spares", SIM_DIM_COUNT, 1, &n);
        if (!rc)
            rc = whole(ld, f, "spares", n);
        if (!rc && !(n >= 0 && n <= 1e6))
            rc = node_error(ld, f, "spares", "spares must be from 0 to 1e6 nodes");
        x->spares = (uint32_t)n;
    }
    if (!rc && has_attr(f, "swap-down"))
        rc = get_bool(ld, f, "swap-down", &x->swap_down);
    return rc;
}

int parse_cluster_disrupt(loader *ld, xmlNode *n, scn_scenario *s)
{
    cluster_config *c = &s->cluster_jobs;
    xmlNode *sched = child(n, "scheduler"), *ck = child(n, "checkpoint");
    xmlNode *m = child(n, "maintenance"), *f = child(n, "failures");
    int rc = has_attr(sched, "preempt") ? get_bool(ld, sched, "preempt", &c->preempt) : 0;
    if (rc)
        return rc;
    if (!ck && (c->preempt || f))
        return node_error(ld, c->preempt ? sched : f, NULL, "%s needs <checkpoint interval=... "
                          "write=... restart=...> (no default: docs/cluster.md)",
                          c->preempt ? "preemption" : "<failures>");
    if (ck)
        rc = parse_ckpt(ld, ck, &c->ckpt);
    if (!rc && m)
        rc = parse_windows(ld, m, s);
    if (!rc && f)
        rc = parse_failures(ld, f, s);
    return rc;
}
