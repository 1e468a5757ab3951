/* clustermodel.c - a model class's traffic per job size from the step tier
 * (clustermodel.h). */
#include "clustermodel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "compute.h"
#include "hardware.h"
#include "step.h"
#include "workload.h"

/* a step-tier collective kind as the cluster's row: its collective and
 * group (the experts' part of a DP kind goes to the expert-data-parallel
 * group: derive_one) */
static const struct {
    int kind, collective, group;
} kind_rows[] = {
    {COMM_TP_ALLREDUCE, NC_ALLREDUCE, CLUSTER_GROUP_TP},
    {COMM_TP_ALLGATHER, NC_ALLGATHER, CLUSTER_GROUP_TP},
    {COMM_TP_REDUCE_SCATTER, NC_REDUCESCATTER, CLUSTER_GROUP_TP},
    {COMM_PP_SEND, NC_SENDRECV, CLUSTER_GROUP_PP},
    {COMM_EP_ALLTOALL, NC_ALLTOALL, CLUSTER_GROUP_EP},
    {COMM_DP_ALLREDUCE, NC_ALLREDUCE, CLUSTER_GROUP_DP},
    {COMM_DP_REDUCE_SCATTER, NC_REDUCESCATTER, CLUSTER_GROUP_DP},
    {COMM_DP_ALLGATHER, NC_ALLGATHER, CLUSTER_GROUP_DP},
    {COMM_CP_SENDRECV, NC_SENDRECV, CLUSTER_GROUP_CP},
};
#define N_KIND_ROWS (sizeof kind_rows / sizeof kind_rows[0])

/* the job alone on GPUs 0 .. n-1 through the pacer itself */
static int alone(const scn_scenario *s, const fabric *f, const cluster_traffic *t, uint32_t n,
                 cluster_model_size *z, sim_error *err)
{
    cluster_traffic_table one;
    memset(&one, 0, sizeof one);
    one.n = 1;
    one.from_gpus[0] = 1;
    one.t[0] = *t;
    cluster_interf *x = cluster_interf_create(f, s->cluster_jobs.gpus, &one, 0, err);
    uint32_t *gpus = malloc((size_t)n * sizeof *gpus);
    if (!x || !gpus) {
        cluster_interf_destroy(x);
        free(gpus);
        return x ? sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "cluster: out of memory")
                 : (err->code ? err->code : SIM_ERR_NOMEM);
    }
    for (uint32_t k = 0; k < n; k++)
        gpus[k] = k;
    const cluster_pacer *pc = cluster_interf_pacer(x);
    cluster_job_spec spec = {.gpus = n, .duration_s = 1};
    int rc = pc->start(pc->ctx, 0, &spec, gpus, n, err);
    if (!rc) {
        double c = 0;
        cluster_interf_job(x, 0, &c, &z->alone_comm_s);
        z->alone_iteration_s = cluster_interf_job_iteration(x, 0);
        pc->end(pc->ctx, 0);
    }
    free(gpus);
    cluster_interf_destroy(x);
    return rc;
}

/* one size: the workload's bytes, the iteration on f, the derived profile */
static int derive_one(const scn_scenario *s, fabric *f, unsigned cls, uint32_t g,
                      cluster_traffic *out, cluster_model_size *z, sim_error *err)
{
    const struct scn_cluster_model *m = &s->cluster_model[cls];
    const cluster_traffic *ct = &s->cluster_traffic.t[cls];
    parallel_config p;
    int rc = cluster_model_parallel(s, cls, g, &p, err);
    if (rc)
        return rc;
    step_options o;
    if (s->has_job) {
        o = s->step;
    } else {
        step_options_defaults(&o);
        o.sustained_efficiency = 0;
    }
    if (o.packet)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "cluster: a <traffic> class given by "
                             "a model times its iteration on the flow model; <step "
                             "network=\"packet\"> is for dcsim step and dcsim run");
    if (o.sustained_efficiency == 0) /* as steptier.c: the GPU catalog's, else 1 */
        o.sustained_efficiency = s->gpu.sustained_efficiency > 0 ? s->gpu.sustained_efficiency : 1;
    workload w;
    rc = workload_build(&m->arch, &p, g, &w, err);
    if (rc)
        return rc;
    double bytes[COMM_KIND_COUNT], expert[COMM_KIND_COUNT]; /* bytes: pr.comm_bytes */
    workload_kind_bytes_split(&w, bytes, expert);
    compute_device dev;
    step_profile pr;
    memset(&pr, 0, sizeof pr);
    rc = hw_compute_device_fw(&s->gpu, p.precision, &p.fw, &dev, err);
    if (!rc)
        rc = step_simulate(&w, &dev, f, &o, &pr, err);
    workload_free(&w);
    if (rc)
        return rc;
    memset(z, 0, sizeof *z);
    z->gpus = g;
    z->cls = cls;
    z->dp = p.dp;
    memcpy(z->kind_bytes, pr.comm_bytes, sizeof z->kind_bytes);
    z->step_iteration_s = pr.iteration_s;
    z->exposed_s = pr.part_s[STEP_TP] + pr.part_s[STEP_PP] + pr.part_s[STEP_DP] +
                   pr.part_s[STEP_EP];
    if (p.cp > 1) /* its K/V exchange is a row too (0 without cp: the sum kept as it was) */
        z->exposed_s += pr.part_s[STEP_CP];
    z->compute_s = pr.iteration_s > z->exposed_s ? pr.iteration_s - z->exposed_s : 0;
    step_profile_free(&pr);
    *out = *ct;
    out->from_model = CLUSTER_FROM_MODEL_SIZE;
    out->vpp = p.vpp;
    out->compute_s = z->compute_s;
    out->exposed_s = z->exposed_s;
    out->comm_share = 0;
    out->overlap = 0;
    out->bytes = 0;
    out->collective = NC_ALLREDUCE;
    out->n_colls = 0;
    for (size_t k = 0; k < N_KIND_ROWS; k++) { /* N_KIND_ROWS + 3 DP kinds <= CLUSTER_MAX_COLLS */
        int kind = kind_rows[k].kind;
        double b = z->kind_bytes[kind], e = expert[kind] < b ? expert[kind] : b;
        z->expert_bytes[kind] = e;
        if (b - e > 0)
            out->coll[out->n_colls++] = (cluster_coll){kind_rows[k].collective,
                                                       kind_rows[k].group, b - e};
        if (e > 0)
            out->coll[out->n_colls++] = (cluster_coll){kind_rows[k].collective,
                                                       CLUSTER_GROUP_EDP, e};
    }
    if (!out->n_colls) /* no traffic: a layout with no rows would be the form before layouts */
        out->tp = out->pp = out->ep = out->cp = out->vpp = 0;
    return alone(s, f, out, g, z, err);
}

static int one_size(const scn_scenario *s, fabric *f, uint32_t g, cluster_traffic_table *tt,
                    cluster_model_size *out, unsigned *n_out, sim_error *err)
{
    for (unsigned k = 0; k < tt->n_sized; k++)
        if (tt->sized_gpus[k] == g)
            return 0;
    const cluster_traffic *t = cluster_traffic_of(tt, g);
    if (t->from_model != CLUSTER_FROM_MODEL_CLASS)
        return 0;
    if (tt->n_sized == CLUSTER_MAX_SIZED)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "cluster: classes given by a model "
                             "derive at most %u job sizes; this stream has more",
                             CLUSTER_MAX_SIZED);
    unsigned k = tt->n_sized;
    int rc = derive_one(s, f, (unsigned)(t - tt->t), g, &tt->sized[k], &out[k], err);
    if (rc)
        return rc;
    tt->sized_gpus[k] = g;
    tt->n_sized = *n_out = k + 1;
    return 0;
}

static int has_model_class(const cluster_traffic_table *tt)
{
    int any = 0;
    for (unsigned i = 0; i < tt->n; i++)
        any |= tt->t[i].from_model == CLUSTER_FROM_MODEL_CLASS;
    return any;
}

int cluster_model_derive_sizes(const scn_scenario *s, fabric *f, const uint32_t *sizes,
                               size_t n, cluster_traffic_table *tt, cluster_model_size *out,
                               unsigned *n_out, sim_error *err)
{
    *n_out = 0;
    tt->n_sized = 0;
    int rc = 0;
    for (size_t i = 0; has_model_class(tt) && !rc && i < n; i++)
        rc = one_size(s, f, sizes[i], tt, out, n_out, err);
    return rc;
}

int cluster_model_derive(const scn_scenario *s, fabric *f, uint32_t train_gpus,
                         cluster_traffic_table *tt, cluster_model_size *out, unsigned *n_out,
                         sim_error *err)
{
    *n_out = 0;
    tt->n_sized = 0;
    if (!has_model_class(tt))
        return 0;
    const cluster_config *c = &s->cluster_jobs;
    int rc = 0;
    if (!c->jobs)
        for (unsigned i = 0; !rc && i < c->stream.n_sizes; i++)
            rc = one_size(s, f, c->stream.size_gpus[i], tt, out, n_out, err);
    for (uint32_t i = 0; !rc && c->jobs && i < c->n_jobs; i++)
        rc = one_size(s, f, c->jobs[i].gpus, tt, out, n_out, err);
    if (!rc && train_gpus)
        rc = one_size(s, f, train_gpus, tt, out, n_out, err);
    return rc;
}

void cluster_model_print(const scn_scenario *s, const cluster_model_size *z, unsigned n)
{
    if (!n)
        return;
    printf("from the step tier, per job size (%s on the cluster's fabric, the job on its "
           "first GPUs; c = the iteration less its exposed TP, PP, DP and EP, which the flow "
           "net times; alone here = c + min(collectives alone, that exposed part)):\n",
           s->gpu.name);
    for (unsigned i = 0; i < n; i++) {
        printf("  %5u GPUs, dp %u: step %.6g s = c %.6g s + exposed %.6g s; per GPU", z[i].gpus,
               z[i].dp, z[i].step_iteration_s, z[i].compute_s, z[i].exposed_s);
        int any = 0;
        for (size_t k = 0; k < N_KIND_ROWS; k++) {
            double b = z[i].kind_bytes[kind_rows[k].kind];
            double e = z[i].expert_bytes[kind_rows[k].kind];
            if (b > 0)
                printf("%s %s %.4g GB", any++ ? "," : "", comm_kind_name(kind_rows[k].kind),
                       b / 1e9);
            if (e > 0)
                printf(" (experts' %.4g GB of it in the edp-groups)", e / 1e9);
        }
        printf("%s; alone here: collectives %.6g s, iteration %.6g s (x %.4f of step's)\n",
               any ? "" : " no communication", z[i].alone_comm_s, z[i].alone_iteration_s,
               z[i].step_iteration_s > 0 ? z[i].alone_iteration_s / z[i].step_iteration_s : 0);
    }
}

void cluster_model_json(cJSON *o, const cluster_model_size *z, unsigned n)
{
    cJSON *a = cJSON_AddArrayToObject(o, "from_step_tier");
    for (unsigned i = 0; a && i < n; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "gpus", z[i].gpus);
        cJSON_AddNumberToObject(e, "class", z[i].cls);
        cJSON_AddNumberToObject(e, "dp", z[i].dp);
        cJSON *b = cJSON_AddObjectToObject(e, "comm_bytes");
        for (int k = 0; k < COMM_KIND_COUNT; k++)
            cJSON_AddNumberToObject(b, comm_kind_name(k), z[i].kind_bytes[k]);
        cJSON_AddNumberToObject(e, "step_iteration_s", z[i].step_iteration_s);
        cJSON_AddNumberToObject(e, "compute_s", z[i].compute_s);
        cJSON_AddNumberToObject(e, "exposed_comm_s", z[i].exposed_s);
        cJSON_AddNumberToObject(e, "alone_comm_s", z[i].alone_comm_s);
        cJSON_AddNumberToObject(e, "alone_iteration_s", z[i].alone_iteration_s);
        cJSON_AddItemToArray(a, e);
    }
}

void cluster_model_layout_text(const scn_scenario *s, unsigned cls, char *buf, size_t size)
{
    const struct scn_cluster_model *m = &s->cluster_model[cls];
    const cluster_traffic *t = &s->cluster_traffic.t[cls];
    char vpp[24] = "", cp[24] = "", zero[16] = "";
    if (m->vpp > 1)
        snprintf(vpp, sizeof vpp, ", vpp %u", m->vpp);
    if (t->cp > 1)
        snprintf(cp, sizeof cp, ", cp %u", t->cp);
    if (m->zero_stage > 0)
        snprintf(zero, sizeof zero, ", zero %d", m->zero_stage);
    snprintf(buf, size, "%s%s%s%s%s", vpp, cp, m->sequence_parallel ? ", sequence-parallel" : "",
             m->recompute == RECOMPUTE_FULL        ? ", recompute full"
             : m->recompute == RECOMPUTE_SELECTIVE ? ", recompute selective"
                                                   : "",
             zero);
}
