/* cluster_model.c - a <traffic> class given by a catalog model
 * (docs/cluster.md "Traffic from the step tier"): <traffic model
 * micro-batch global-batch> with the class's tp, pp, ep and the layout
 * options of <parallelism> (vpp, cp, sequence-parallel, recompute, zero;
 * the same names and ranges). The run layer (sim/app/clustermodel.c)
 * derives the class's collectives and compute per job size from the step
 * tier; here the class is read, refused when it also gives its traffic by
 * hand, and each job of it checked against the model (workload_check) once
 * the jobs are read, both through one layout (cluster_model_parallel). */
#include "loader.h"

#include <stdio.h>
#include <string.h>

/* what a class given by hand sizes; a class given by a model takes none */
static const char *const by_hand[] = {"compute", "comm-share", "allreduce", "bytes",
                                      "collective", "overlap"};
#define N_BY_HAND (sizeof by_hand / sizeof by_hand[0])

/* what only a class given by a model takes: its batches and layout options */
static const char *const by_model[] = {"micro-batch", "global-batch", "vpp", "cp",
                                       "sequence-parallel", "recompute", "zero"};
#define N_BY_MODEL (sizeof by_model / sizeof by_model[0])

int cluster_model_parallel(const scn_scenario *s, unsigned cls, uint32_t gpus,
                           parallel_config *p, sim_error *err)
{
    const struct scn_cluster_model *m = &s->cluster_model[cls];
    const cluster_traffic *t = &s->cluster_traffic.t[cls];
    memset(p, 0, sizeof *p); /* <parallelism>'s defaults, as parse_parallelism leaves them */
    p->tp = t->tp ? t->tp : 1;
    p->pp = t->pp ? t->pp : 1;
    p->ep = t->ep ? t->ep : 1;
    p->cp = t->cp ? t->cp : 1;
    p->vpp = m->vpp ? m->vpp : 1;
    p->sequence_parallel = m->sequence_parallel;
    p->recompute = m->recompute;
    p->zero_stage = m->zero_stage;
    p->schedule = p->vpp > 1 ? SCHEDULE_INTERLEAVED : SCHEDULE_1F1B;
    p->micro_batch = m->micro_batch;
    p->global_batch = m->global_batch;
    p->precision = s->has_job ? s->precision : PREC_BF16;
    if (s->has_job)
        p->fw = s->par.fw;
    uint64_t per_replica = (uint64_t)p->tp * p->cp * p->pp;
    if (gpus % per_replica)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "cluster: %u GPUs are not a whole "
                             "number of tp x cp x pp = %u x %u x %u", gpus, p->tp, p->cp, p->pp);
    p->dp = (unsigned)(gpus / per_replica);
    return 0;
}

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
        for (size_t k = 0; !m->has && k < 2; k++)
            if (has_attr(n, by_model[k]))
                return node_error(ld, n, by_model[k], "micro-batch and global-batch size a "
                                  "class given by a model: give model=\"NAME\" (a catalog "
                                  "model) or drop them");
        for (size_t k = 2; !m->has && k < N_BY_MODEL; k++)
            if (has_attr(n, by_model[k]))
                return node_error(ld, n, by_model[k], "%s lays out a class given by a model "
                                  "(the step tier's <parallelism> option): give "
                                  "model=\"NAME\" (a catalog model) or drop it", by_model[k]);
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
        t->cp = 0;
        return 0;
    }
    int rc = get_uint(ld, n, "micro-batch", 0, 1, 100000000u, &m->micro_batch);
    if (!rc)
        rc = get_uint(ld, n, "global-batch", 0, 1, 100000000u, &m->global_batch);
    if (!rc) /* as parse_parallelism: vpp 1-1000, cp 1-100000, the enumerations in the schema */
        rc = get_uint(ld, n, "vpp", 0, 1, 1000, &m->vpp);
    if (!rc)
        rc = get_uint(ld, n, "cp", 0, 1, 100000, &t->cp);
    get_bool(ld, n, "sequence-parallel", &m->sequence_parallel);
    char text[32];
    if (has_attr(n, "recompute")) {
        copy_attr(n, "recompute", text, sizeof text);
        m->recompute = strcmp(text, "full") == 0        ? RECOMPUTE_FULL
                       : strcmp(text, "selective") == 0 ? RECOMPUTE_SELECTIVE
                                                        : RECOMPUTE_NONE;
    }
    if (has_attr(n, "zero")) {
        copy_attr(n, "zero", text, sizeof text);
        m->zero_stage = text[0] ? text[0] - '0' : 0;
    }
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
    parallel_config p;
    sim_error e;
    sim_error_clear(&e);
    if (!cluster_model_parallel(s, i, g, &p, &e) && !workload_check(&m->arch, &p, g, &e))
        return 0;
    return node_error(ld, at, NULL, "%s takes the <traffic> class from %u GPU%s (line %ld), "
                      "given by model %s, which does not fit it: %s", what,
                      s->cluster_traffic.from_gpus[i], s->cluster_traffic.from_gpus[i] > 1 ? "s"
                      : "", class_line, m->arch.name, e.msg);
}
