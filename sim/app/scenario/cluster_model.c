/* cluster_model.c - a <traffic> class given by a catalog model
 * (docs/cluster.md "Traffic from the step tier"): <traffic model
 * micro-batch global-batch> with the class's tp, pp, ep. The run layer
 * (sim/app/clustermodel.c) derives the class's collectives and compute per
 * job size from the step tier; here the class is read, refused when it
 * also gives its traffic by hand, and each job of it checked against the
 * model (workload_check) once the jobs are read. */
#include "loader.h"

#include <stdio.h>
#include <string.h>

/* what a class given by hand sizes; a class given by a model takes none */
static const char *const by_hand[] = {"compute", "comm-share", "allreduce", "bytes",
                                      "collective", "overlap"};
#define N_BY_HAND (sizeof by_hand / sizeof by_hand[0])

static int has_rows(xmlNode *n)
{
    for (xmlNode *c = n->children; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && !strcmp((const char *)c->name, "collective"))
            return 1;
    return 0;
}

int traffic_model(loader *ld, xmlNode *n, scn_scenario *s, unsigned i)
{
    struct scn_cluster_model *m = &s->cluster_model[i];
    cluster_traffic *t = &s->cluster_traffic.t[i];
    int hand = has_rows(n);
    for (size_t k = 0; k < N_BY_HAND; k++)
        hand |= has_attr(n, by_hand[k]);
    if (!has_attr(n, "model")) {
        if (i > 0 && hand) /* a class by hand under a <traffic model>: its own form */
            m->has = 0;
        if (!m->has && (has_attr(n, "micro-batch") || has_attr(n, "global-batch")))
            return node_error(ld, n, has_attr(n, "micro-batch") ? "micro-batch" : "global-batch",
                              "micro-batch and global-batch size a class given by a model: "
                              "give model=\"NAME\" (a catalog model) or drop them");
    } else {
        for (size_t k = 0; k < N_BY_HAND; k++)
            if (has_attr(n, by_hand[k]))
                return node_error(ld, n, by_hand[k], "a class given by model takes its "
                                  "compute and collectives from the step tier: give model or "
                                  "%s, not both", by_hand[k]);
        if (has_rows(n))
            return node_error(ld, n, "model", "a class given by model takes its collectives "
                              "from the step tier: give model or <collective> rows, not both");
        char ref[128];
        copy_attr(n, "model", ref, sizeof ref);
        const model_arch *found = find_named(ld, CAT_MODEL, ref);
        if (!found) {
            char known[2048];
            entry_names(ld, CAT_MODEL, known, sizeof known);
            return node_error(ld, n, "model", "unknown model; known models: %s (add one in "
                              "<catalog>)", known);
        }
        m->has = 1;
        m->arch = *found;
        m->micro_batch = m->global_batch = 0;
    }
    if (!m->has) {
        t->from_model = 0;
        return 0;
    }
    int rc = get_uint(ld, n, "micro-batch", 0, 1, 100000000u, &m->micro_batch);
    if (!rc)
        rc = get_uint(ld, n, "global-batch", 0, 1, 100000000u, &m->global_batch);
    if (!rc && !(m->micro_batch && m->global_batch))
        rc = node_error(ld, n, m->micro_batch ? "global-batch" : "micro-batch", "a class given "
                        "by model needs micro-batch and global-batch (the step tier has no "
                        "default for them)");
    t->from_model = CLUSTER_FROM_MODEL_CLASS;
    t->n_colls = 0;
    return rc;
}

int traffic_model_check(loader *ld, xmlNode *at, const scn_scenario *s, unsigned i, uint32_t g,
                        const char *what, long class_line)
{
    const struct scn_cluster_model *m = &s->cluster_model[i];
    const cluster_traffic *t = &s->cluster_traffic.t[i];
    parallel_config p;
    memset(&p, 0, sizeof p);
    p.tp = t->tp ? t->tp : 1;
    p.pp = t->pp ? t->pp : 1;
    p.ep = t->ep ? t->ep : 1;
    p.vpp = p.cp = 1;
    p.dp = g / (p.tp * p.pp);
    p.micro_batch = m->micro_batch;
    p.global_batch = m->global_batch;
    sim_error e;
    sim_error_clear(&e);
    if (!workload_check(&m->arch, &p, g, &e))
        return 0;
    return node_error(ld, at, NULL, "%s takes the <traffic> class from %u GPU%s (line %ld), "
                      "given by model %s, which does not fit it: %s", what,
                      s->cluster_traffic.from_gpus[i], s->cluster_traffic.from_gpus[i] > 1 ? "s"
                      : "", class_line, m->arch.name, e.msg);
}
