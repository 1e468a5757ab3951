/* cluster_jobs.c - <cluster-jobs> (dcsim cluster; docs/cluster.md): the
 * job stream (<arrivals>, <sizes>, <duration>) or a <trace> CSV file, the
 * <scheduler> and the <placement>, into s->cluster_jobs (models/cluster.h).
 * No distribution has a built-in default (no cluster-trace study is in
 * shared/reference): the scenario states them. What <placement> leaves out
 * is listed in s->cluster_defaults ("defaults used").
 */
#include "loader.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SPAN_S 3.2e8 /* ten years */

void cluster_note(scn_scenario *s, const char *text)
{
    size_t used = strlen(s->cluster_defaults);
    snprintf(s->cluster_defaults + used, sizeof s->cluster_defaults - used, "%s%s",
             used ? "; " : "", text);
}

static int gpus_attr(loader *ld, xmlNode *n, const char *attr, int required, double max,
                     uint32_t *out)
{
    double x = 0;
    int rc = get_quantity(ld, n, attr, SIM_DIM_COUNT, required, &x);
    if (!rc && !has_attr(n, attr))
        return 0;
    if (!rc)
        rc = whole(ld, n, attr, x);
    if (!rc && !(x >= 1 && x <= max))
        rc = node_error(ld, n, attr, "%s must be from 1 to %.0f GPUs", attr, max);
    if (!rc)
        *out = (uint32_t)x;
    return rc;
}

int stream_sizes(loader *ld, xmlNode *n, uint32_t gpus, cluster_stream *st)
{
    double total = 0;
    for (xmlNode *c = n->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        unsigned i = st->n_sizes++; /* the schema allows at most CLUSTER_MAX_SIZES */
        int rc = gpus_attr(ld, c, "gpus", 1, gpus, &st->size_gpus[i]);
        if (!rc)
            rc = get_quantity(ld, c, "weight", SIM_DIM_COUNT, 1, &st->size_weight[i]);
        if (!rc && !(st->size_weight[i] >= 0 && st->size_weight[i] <= 1e9))
            rc = node_error(ld, c, "weight", "weight must be from 0 to 1e9");
        if (rc)
            return rc;
        total += st->size_weight[i];
    }
    if (!(total > 0))
        return node_error(ld, n, NULL, "the sizes' weights add up to 0");
    /* elastic jobs (docs/cluster.md "Elastic jobs"): a share of the jobs, each
     * with a min of a fraction of its GPUs; no default for either */
    int rc = get_quantity(ld, n, "elastic-share", SIM_DIM_FRACTION, 0, &st->elastic_share);
    if (!rc && !(st->elastic_share >= 0 && st->elastic_share <= 1))
        rc = node_error(ld, n, "elastic-share", "elastic-share must be from 0%% to 100%%");
    if (!rc && st->elastic_share > 0 && !has_attr(n, "elastic-min"))
        rc = node_error(ld, n, "elastic-share", "elastic-share needs elastic-min: the fewest "
                        "GPUs an elastic job runs on, as a fraction of its GPUs (e.g. \"50%%\")");
    if (!rc && has_attr(n, "elastic-min")) {
        rc = get_quantity(ld, n, "elastic-min", SIM_DIM_FRACTION, 1, &st->elastic_min_frac);
        if (!rc && !(st->elastic_min_frac > 0 && st->elastic_min_frac <= 1))
            rc = node_error(ld, n, "elastic-min", "elastic-min must be above 0%% and at most "
                            "100%% of a job's GPUs");
    }
    return rc;
}

int stream_duration(loader *ld, xmlNode *n, cluster_duration *d)
{
    char dist[32];
    copy_attr(n, "distribution", dist, sizeof dist);
    cluster_dur_dist_parse(dist, &d->dist); /* the schema allows only the three */
    static const char *const first[CLUSTER_DUR_COUNT] = {"value", "low", "median"};
    int rc = get_quantity(ld, n, first[d->dist], SIM_DIM_TIME, 1, &d->a_s);
    if (!rc)
        rc = positive(ld, n, first[d->dist], d->a_s, MAX_SPAN_S, " s (ten years)");
    if (!rc && d->a_s < CLUSTER_MIN_DURATION_S)
        rc = node_error(ld, n, first[d->dist], "%s must be at least 1 s (the shortest job; "
                        "e.g. \"2h\")", first[d->dist]);
    if (!rc && d->dist == CLUSTER_DUR_UNIFORM) {
        rc = get_quantity(ld, n, "high", SIM_DIM_TIME, 1, &d->b);
        if (!rc && !(d->b >= d->a_s && d->b <= MAX_SPAN_S))
            rc = node_error(ld, n, "high", "high must be from low to ten years");
    }
    if (!rc && d->dist == CLUSTER_DUR_LOGNORMAL) {
        rc = get_quantity(ld, n, "sigma", SIM_DIM_COUNT, 1, &d->b);
        if (!rc && !(d->b > 0 && d->b <= 5))
            rc = node_error(ld, n, "sigma", "sigma must be above 0 and at most 5");
    }
    if (!rc && has_attr(n, "max")) {
        rc = get_quantity(ld, n, "max", SIM_DIM_TIME, 1, &d->max_s);
        if (!rc)
            rc = positive(ld, n, "max", d->max_s, MAX_SPAN_S, " s (ten years)");
        if (!rc && d->max_s < CLUSTER_MIN_DURATION_S)
            rc = node_error(ld, n, "max", "max must be at least 1 s (the shortest job)");
    }
    return rc;
}

int stream_arrivals(loader *ld, xmlNode *n, cluster_stream *st)
{
    int rc = get_quantity(ld, n, "rate", SIM_DIM_FREQUENCY, 1, &st->rate_per_s);
    if (!rc)
        rc = positive(ld, n, "rate", st->rate_per_s, 1e6, " jobs/s");
    if (!rc)
        rc = get_quantity(ld, n, "duration", SIM_DIM_TIME, 1, &st->window_s);
    if (!rc)
        rc = positive(ld, n, "duration", st->window_s, MAX_SPAN_S, " s (ten years)");
    if (!rc && has_attr(n, "jobs")) {
        double jobs = 0;
        rc = get_quantity(ld, n, "jobs", SIM_DIM_COUNT, 1, &jobs);
        if (!rc)
            rc = whole(ld, n, "jobs", jobs);
        if (!rc)
            rc = positive(ld, n, "jobs", jobs, CLUSTER_MAX_JOBS, "");
        st->max_jobs = (uint32_t)jobs;
    }
    if (!rc && !st->max_jobs && st->rate_per_s * st->window_s > CLUSTER_MAX_JOBS)
        rc = node_error(ld, n, NULL, "rate x duration is %.3g jobs, more than 1e7: give jobs=\"N\" "
                        "or a shorter duration", st->rate_per_s * st->window_s);
    return rc;
}

/* The leaf domain of the scenario's <fabric>, in GPUs, when the placement
 * omits gpus-per-leaf: a rail-optimised fabric's SU of nodes-per-su nodes
 * (rail-aligned: one hop inside, hardware.md 6.2); a fat-tree's or
 * leaf-spine's host ports per tier-1 switch (fabric_count), one port per
 * GPU. 0 with why when the fabric gives none. */
static uint32_t fabric_leaf_gpus(const scn_scenario *s, char *why, size_t size)
{
    const fabric_config *f = &s->fabric;
    const char *name = fabric_topology_name(f->topology);
    if (!s->has_fabric) {
        snprintf(why, size, "gpus-per-leaf is needed (the cluster has no <fabric> to read "
                 "it from)");
        return 0;
    }
    if (strcmp(name, "rail-optimized") == 0)
        return f->shape.nodes_per_su * (f->gpus_per_node ? f->gpus_per_node : 1);
    topo_counts parts;
    sim_error err;
    sim_error_clear(&err);
    if ((strcmp(name, "fat-tree") && strcmp(name, "leaf-spine")) || f->shape.nics_per_node ||
        fabric_count(f, &parts, &err) || !parts.switches[1] ||
        parts.hosts % parts.switches[1]) {
        snprintf(why, size, "gpus-per-leaf is needed: the %s <fabric> gives no leaf of whole "
                 "GPUs the placement reads", name);
        return 0;
    }
    return (uint32_t)(parts.hosts / parts.switches[1]);
}

/* <placement>: the policy and the unit sizes; a node's GPUs default to the
 * fabric's gpus-per-node, else the GPU's scale-up domain (the catalog); a
 * leaf's to the fabric's (fabric_leaf_gpus) */
static int parse_placement(loader *ld, xmlNode *n, scn_scenario *s)
{
    cluster_config *c = &s->cluster_jobs;
    char policy[32];
    copy_attr(n, "policy", policy, sizeof policy);
    c->placer = cluster_placer_find(policy);
    if (!c->placer)
        return node_error(ld, n, "policy", "unknown placement; use %s", cluster_placer_names());
    c->node_gpus = s->has_fabric && s->fabric.gpus_per_node ? s->fabric.gpus_per_node
                   : s->gpu.scaleup_domain                ? s->gpu.scaleup_domain
                                                          : 1;
    if (!has_attr(n, "gpus-per-node")) {
        char text[128];
        snprintf(text, sizeof text, "gpus-per-node %u (the %s)", c->node_gpus,
                 s->has_fabric ? "fabric's gpus-per-node" : "GPU's scale-up domain, catalog");
        cluster_note(s, text);
    }
    int rc = gpus_attr(ld, n, "gpus-per-node", 0, c->gpus, &c->node_gpus);
    if (!rc && !has_attr(n, "gpus-per-leaf")) {
        char why[160], text[160];
        c->leaf_gpus = fabric_leaf_gpus(s, why, sizeof why);
        if (!c->leaf_gpus)
            return node_error(ld, n, NULL, "%s", why);
        snprintf(text, sizeof text, "gpus-per-leaf %u (the %s fabric's leaf)", c->leaf_gpus,
                 fabric_topology_name(s->fabric.topology));
        cluster_note(s, text);
    }
    if (!rc)
        rc = gpus_attr(ld, n, "gpus-per-leaf", 0, c->gpus, &c->leaf_gpus);
    c->su_gpus = c->gpus;
    if (!rc && !has_attr(n, "gpus-per-su"))
        cluster_note(s, "gpus-per-su: the whole cluster (one SU)");
    if (!rc)
        rc = gpus_attr(ld, n, "gpus-per-su", 0, c->gpus, &c->su_gpus);
    if (rc)
        return rc;
    if (c->leaf_gpus % c->node_gpus)
        return node_error(ld, n, "gpus-per-leaf", "gpus-per-leaf %u is not a whole number of "
                          "nodes of %u GPUs", c->leaf_gpus, c->node_gpus);
    if (c->gpus % c->leaf_gpus)
        return node_error(ld, n, "gpus-per-leaf", "the cluster's %u GPUs are not a whole "
                          "number of leaves of %u GPUs", c->gpus, c->leaf_gpus);
    if (c->su_gpus % c->leaf_gpus)
        return node_error(ld, n, "gpus-per-su", "gpus-per-su %u is not a whole number of "
                          "leaves of %u GPUs", c->su_gpus, c->leaf_gpus);
    return 0;
}

/* <power compute-fraction>: the share of a busy GPU's time spent computing
 * (models/power.h's f); without it 1, the power tier's computing level, an
 * upper bound on a busy GPU's draw (docs/cluster.md) */
static int parse_power(loader *ld, xmlNode *n, scn_scenario *s)
{
    s->cluster_compute_frac = 1;
    if (!n) {
        cluster_note(s, "busy GPUs compute all the time (<power compute-fraction=\"100%\">: "
                        "the power tier's computing level, an upper bound)");
        return 0;
    }
    int rc = get_quantity(ld, n, "compute-fraction", SIM_DIM_FRACTION, 1,
                          &s->cluster_compute_frac);
    if (!rc && !(s->cluster_compute_frac >= 0 && s->cluster_compute_frac <= 1))
        rc = node_error(ld, n, "compute-fraction", "compute-fraction must be from 0%% to 100%%");
    return rc;
}

/* one profile's attributes over *t (what is left out keeps *t's value) */
static int traffic_attrs(loader *ld, xmlNode *n, cluster_traffic *t)
{
    if (has_attr(n, "compute") && has_attr(n, "comm-share"))
        return node_error(ld, n, "comm-share", "give compute or comm-share, not both");
    int rc = 0;
    if (has_attr(n, "compute")) {
        rc = get_quantity(ld, n, "compute", SIM_DIM_TIME, 1, &t->compute_s);
        if (!rc && !(t->compute_s >= 0 && t->compute_s <= 86400))
            rc = node_error(ld, n, "compute", "compute must be from 0 to 1 day per iteration");
        t->comm_share = 0;
    }
    if (!rc && has_attr(n, "comm-share")) {
        rc = get_quantity(ld, n, "comm-share", SIM_DIM_FRACTION, 1, &t->comm_share);
        if (!rc && !(t->comm_share > 0 && t->comm_share < 1))
            rc = node_error(ld, n, "comm-share", "comm-share must be above 0%% and below 100%%");
    }
    if (!rc && has_attr(n, "collective")) {
        char name[32];
        copy_attr(n, "collective", name, sizeof name);
        t->collective = cluster_traffic_collective_parse(name);
        if (t->collective < 0) /* only if the schema and the table drift apart */
            rc = node_error(ld, n, "collective", "unknown collective '%s'", name);
    }
    if (!rc && has_attr(n, "allreduce") && has_attr(n, "bytes"))
        rc = node_error(ld, n, "allreduce", "give bytes or allreduce (the all-reduce's bytes), "
                        "not both");
    if (!rc && has_attr(n, "allreduce") && t->collective != NC_ALLREDUCE)
        rc = node_error(ld, n, "allreduce", "allreduce sizes an all-reduce; the collective "
                        "here is another: give its size as bytes");
    if (!rc && t->collective != NC_ALLREDUCE && has_attr(n, "collective") &&
        !has_attr(n, "bytes"))
        rc = node_error(ld, n, "collective", "a collective other than the all-reduce needs its "
                        "bytes per GPU (the 6.8 GB default is a 1.7B model's gradients)");
    const char *size = has_attr(n, "allreduce") ? "allreduce" : "bytes";
    if (!rc && has_attr(n, size)) {
        rc = get_quantity(ld, n, size, SIM_DIM_DATA, 1, &t->bytes);
        if (!rc && !(t->bytes >= 0 && t->bytes <= 1e13))
            rc = node_error(ld, n, size, "%s must be from 0 to 10 TB per GPU", size);
    }
    if (!rc && has_attr(n, "overlap")) {
        rc = get_quantity(ld, n, "overlap", SIM_DIM_FRACTION, 1, &t->overlap);
        if (!rc && !(t->overlap >= 0 && t->overlap < 1))
            rc = node_error(ld, n, "overlap", "overlap must be from 0%% to below 100%% of the "
                            "compute");
    }
    return rc;
}

/* <traffic> (docs/cluster.md "Interference"): each job's iteration, by size
 * class, timed on the <cluster><fabric>. Without <traffic> a fabric still
 * times the jobs, with the defaults printed under "defaults used": the
 * iteration of calibration.md section 1's 1.7B row (DP 48, no TP or PP):
 * compute 6 P T / (GPUs x 408.8 TFLOP/s) = 6 x 1.7e9 x 192 x 4,096 /
 * (48 x 408.8e12) = 0.409 s (D from V; A as a cluster-wide profile), and
 * FP32 gradients 1.7e9 x 4 B = 6.8 GB per GPU (components.md 4.4; A). */
#define TRAFFIC_COMPUTE_S (6 * 1.7e9 * 192 * 4096 / (48 * 408.8e12))
#define TRAFFIC_ALLREDUCE_BYTES (1.7e9 * 4)
#define TRAFFIC_CACHE 4096
static int parse_traffic(loader *ld, xmlNode *n, scn_scenario *s)
{
    if (!s->has_fabric) {
        if (n)
            return node_error(ld, n, NULL, "<traffic> needs a <cluster><fabric> to time the "
                              "jobs' all-reduces on");
        return 0;
    }
    s->has_cluster_traffic = 1;
    cluster_traffic_table *tt = &s->cluster_traffic;
    memset(tt, 0, sizeof *tt);
    tt->n = 1;
    tt->from_gpus[0] = 1;
    tt->t[0] = (cluster_traffic){.compute_s = TRAFFIC_COMPUTE_S, .bytes = TRAFFIC_ALLREDUCE_BYTES,
                                 .collective = NC_ALLREDUCE};
    s->cluster_cache_entries = TRAFFIC_CACHE;
    if (!n || (!has_attr(n, "compute") && !has_attr(n, "comm-share") && !has_attr(n, "model")))
        cluster_note(s, "traffic compute 0.409 s per iteration (A: calibration.md 1, "
                        "the 1.7B row at DP 48: 6 P T / (48 x 408.8 TFLOP/s))");
    if (!n || (!has_attr(n, "allreduce") && !has_attr(n, "bytes") && !child(n, "collective") &&
               !has_attr(n, "model")))
        cluster_note(s, "traffic allreduce 6.8 GB per GPU (A: 1.7B FP32 gradients, "
                        "components.md 4.4)");
    if (!n || !has_attr(n, "cache"))
        cluster_note(s, "traffic cache 4096 components (A)");
    if (!n || !has_attr(n, "phase"))
        cluster_note(s, "traffic phase aligned: co-located jobs start their collectives at the "
                        "same instant every iteration (the worst case; phase=\"uniform\" for "
                        "offsets drawn uniformly, docs/cluster.md)");
    if (!n)
        return 0;
    if (has_attr(n, "phase")) {
        char name[32];
        copy_attr(n, "phase", name, sizeof name);
        tt->phase = cluster_phase_parse(name);
        if (tt->phase < 0) /* only if the schema and the table drift apart */
            return node_error(ld, n, "phase", "unknown phase '%s' (aligned or uniform)", name);
    }
    memset(s->cluster_model, 0, sizeof s->cluster_model);
    int rc = traffic_model(ld, n, s, 0);
    if (!rc)
        rc = traffic_attrs(ld, n, &tt->t[0]);
    if (!rc)
        rc = traffic_layout(ld, n, &tt->t[0]);
    if (!rc && has_attr(n, "cache")) {
        double x = 0;
        rc = get_quantity(ld, n, "cache", SIM_DIM_COUNT, 1, &x);
        if (!rc)
            rc = whole(ld, n, "cache", x);
        if (!rc && !(x >= 0 && x <= 1e6))
            rc = node_error(ld, n, "cache", "cache must be from 0 (none) to 1e6 components");
        s->cluster_cache_entries = (uint32_t)x;
    }
    for (xmlNode *c = n->children; !rc && c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE || strcmp((const char *)c->name, "class"))
            continue;
        unsigned i = tt->n++; /* the schema allows at most CLUSTER_MAX_TRAFFIC - 1 */
        tt->t[i] = tt->t[0];
        s->cluster_model[i] = s->cluster_model[0];
        rc = gpus_attr(ld, c, "from-gpus", 1, s->cluster_jobs.gpus, &tt->from_gpus[i]);
        for (unsigned k = 0; !rc && k < i; k++)
            if (tt->from_gpus[k] == tt->from_gpus[i])
                rc = node_error(ld, c, "from-gpus", "a class from %u GPUs is given twice "
                                "(<traffic> itself is the class from 1 GPU)", tt->from_gpus[i]);
        if (!rc)
            rc = traffic_model(ld, c, s, i);
        if (!rc)
            rc = traffic_attrs(ld, c, &tt->t[i]);
        if (!rc)
            rc = traffic_layout(ld, c, &tt->t[i]);
    }
    int models = 0;
    for (unsigned i = 0; i < tt->n; i++)
        models |= s->cluster_model[i].has;
    if (!rc && models && !s->has_job)
        cluster_note(s, "traffic model: bf16, the framework's and <step>'s defaults (A: no "
                        "<job> to take them from)");
    /* a layout without <collective> rows: the class's one collective in its dp-groups */
    for (unsigned i = 0; !rc && i < tt->n; i++) {
        cluster_traffic *t = &tt->t[i];
        if (!t->n_colls && !t->from_model && (t->tp || t->pp || t->ep))
            t->coll[t->n_colls++] = (cluster_coll){t->collective, CLUSTER_GROUP_DP, t->bytes};
    }
    return rc;
}

/* <training-runs><run submit [priority]>: runs of the scenario's <job>,
 * each as long as `dcsim run` says it takes (docs/cluster.md "Training runs
 * in the stream") */
static int parse_training_runs(loader *ld, xmlNode *n, scn_scenario *s)
{
    if (!n)
        return 0;
    if (!s->has_job)
        return node_error(ld, n, NULL, "<training-runs> runs the scenario's <job> in the "
                          "stream; this scenario has no <job>");
    for (xmlNode *c = n->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        cluster_job_spec *j = &s->cluster_training[s->n_cluster_training++]; /* the schema
                                                               allows SCN_MAX_TRAINING_RUNS */
        double prio = 0;
        int rc = get_quantity(ld, c, "submit", SIM_DIM_TIME, 1, &j->submit_s);
        if (!rc && !(j->submit_s >= 0 && j->submit_s <= MAX_SPAN_S))
            rc = node_error(ld, c, "submit", "submit must be from 0 to ten years");
        if (!rc)
            rc = get_quantity(ld, c, "priority", SIM_DIM_COUNT, 0, &prio);
        if (!rc && has_attr(c, "priority"))
            rc = whole(ld, c, "priority", prio);
        if (!rc && fabs(prio) > 1e6)
            rc = node_error(ld, c, "priority", "priority must be from -1e6 to 1e6");
        if (rc)
            return rc;
        j->priority = (int32_t)prio;
    }
    return 0;
}

/* elastic jobs: their scaling rule under "defaults used"; a trace job larger
 * than the cluster runs only elastic */
static int cluster_elastic_note(loader *ld, xmlNode *sched, scn_scenario *s)
{
    const cluster_config *c = &s->cluster_jobs;
    int any = !c->jobs && c->stream.elastic_share > 0;
    for (uint32_t i = 0; c->jobs && c->min_gpus && i < c->n_jobs && !any; i++)
        any = c->min_gpus[i] && c->min_gpus[i] < c->jobs[i].gpus;
    if (!any)
        return 0;
    for (uint32_t i = 0; !c->elastic && c->jobs && i < c->n_jobs; i++)
        if (c->jobs[i].gpus > c->gpus)
            return node_error(ld, sched, "elastic", "trace job %u asks for %u GPUs, more than "
                              "the cluster's %u: it runs only elastic (on at most the cluster's "
                              "GPUs): give elastic=\"true\"", i + 1, c->jobs[i].gpus, c->gpus);
    if (c->elastic && !has_attr(sched, "elastic-exponent"))
        cluster_note(s, "elastic jobs scale linearly: on g of their GPUs they progress at "
                        "g / GPUs (a first-order rule, docs/cluster.md; elastic-exponent=\"e\" "
                        "below 1 for (g / GPUs)^e)");
    if (c->elastic && !(c->ckpt.restart_s > 0))
        cluster_note(s, "a resize costs nothing: no <checkpoint restart> given (elastic "
                        "frameworks restart their workers from a checkpoint on every "
                        "membership change; give <checkpoint restart=\"...\"> to charge it)");
    if (c->elastic && !has_attr(sched, "elastic"))
        cluster_note(s, "<scheduler elastic=\"true\">: elastic jobs resize (\"false\": rigid "
                        "at their GPUs)");
    return 0;
}

int parse_cluster_jobs(loader *ld, xmlNode *root, scn_scenario *s)
{
    xmlNode *n = child(root, "cluster-jobs");
    if (!n)
        return 0;
    s->has_cluster_jobs = 1;
    cluster_config *c = &s->cluster_jobs;
    memset(c, 0, sizeof *c);
    if (s->campaign.gpu_count > CLUSTER_MAX_GPUS)
        return node_error(ld, n, NULL, "%llu GPUs: the cluster tier holds at most %u",
                          (unsigned long long)s->campaign.gpu_count, CLUSTER_MAX_GPUS);
    c->gpus = (uint32_t)s->campaign.gpu_count;
    c->seed = s->seed;
    xmlNode *sched = child(n, "scheduler");
    char policy[32];
    copy_attr(sched, "policy", policy, sizeof policy);
    c->sched = cluster_sched_find(policy);
    if (!c->sched)
        return node_error(ld, sched, "policy", "unknown scheduler; use %s",
                          cluster_sched_names());
    c->elastic = 1;
    int rc = has_attr(sched, "elastic") ? get_bool(ld, sched, "elastic", &c->elastic) : 0;
    if (!rc && has_attr(sched, "elastic-exponent")) {
        rc = get_quantity(ld, sched, "elastic-exponent", SIM_DIM_COUNT, 1,
                          &c->elastic_exponent);
        if (!rc && !(c->elastic_exponent > 0 && c->elastic_exponent <= 1))
            rc = node_error(ld, sched, "elastic-exponent", "elastic-exponent must be above 0 "
                            "and at most 1 (1: linear scaling; on g of its GPUs an elastic job "
                            "runs at (g / GPUs)^e of its speed)");
    }
    if (!rc)
        rc = parse_placement(ld, child(n, "placement"), s);
    if (!rc)
        rc = parse_power(ld, child(n, "power"), s);
    if (!rc)
        rc = parse_traffic(ld, child(n, "traffic"), s);
    if (!rc)
        rc = parse_cluster_disrupt(ld, n, s);
    if (rc)
        return rc;
    rc = parse_training_runs(ld, child(n, "training-runs"), s);
    if (rc)
        return rc;
    xmlNode *trace = child(n, "trace"), *arrivals = child(n, "arrivals");
    xmlNode *sizes = child(n, "sizes"), *dur = child(n, "duration");
    if (s->n_cluster_training && !trace && !arrivals && !sizes && !dur)
        return 0; /* only the runs of the <job>: no other jobs */
    if (trace && (arrivals || sizes || dur))
        return node_error(ld, trace, NULL, "a <trace> gives every job: drop <arrivals>, "
                          "<sizes> and <duration>");
    if (trace)
        rc = parse_cluster_trace(ld, trace, s);
    else if (!arrivals || !sizes || !dur)
        return node_error(ld, n, NULL, "a job stream needs <arrivals>, <sizes> and <duration> "
                          "(no built-in distributions: docs/cluster.md), or a <trace>");
    else {
        rc = stream_arrivals(ld, arrivals, &c->stream);
        if (!rc)
            rc = stream_sizes(ld, sizes, c->gpus, &c->stream);
        if (!rc)
            rc = stream_duration(ld, dur, &c->stream.dur);
    }
    if (!rc)
        rc = traffic_layout_jobs(ld, n, s);
    return rc ? rc : cluster_elastic_note(ld, sched, s);
}
