/* clusterrun.c - one run of a job-stream scenario (clusterrun.h): the
 * fabric and pacer when the scenario has one, cluster_simulate, then the
 * energy account, the bins and the CDF points of the finished run. */
#include "clusterrun.h"

#include <stdlib.h>
#include <string.h>

#include "cluster_series.h"
#include "run.h"

static int net_setup(scn_scenario *s, uint32_t train_gpus, cluster_net *n, sim_error *err)
{
    memset(n, 0, sizeof *n);
    if (!s->has_cluster_traffic)
        return 0;
    int rc = fabric_build(&s->fabric, &n->f, err);
    if (rc)
        return rc;
    n->has = 1;
    n->tt = s->cluster_traffic;
    rc = cluster_model_derive(s, &n->f, train_gpus, &n->tt, n->sizes, &n->n_sizes, err);
    if (rc)
        return rc;
    n->x = cluster_interf_create(&n->f, s->cluster_jobs.gpus, &n->tt,
                                 s->cluster_cache_entries, err);
    if (!n->x)
        return err->code ? err->code : SIM_ERR_NOMEM;
    s->cluster_jobs.pacer = cluster_interf_pacer(n->x);
    return 0;
}

/* frees the fabric and the pacer, keeping the pacer's counters and has */
static void net_free(cluster_net *n)
{
    if (n->x)
        cluster_interf_get_stats(n->x, &n->st);
    cluster_interf_destroy(n->x);
    if (n->has)
        fabric_free(&n->f);
    n->x = NULL;
}

static int extra_make(const scn_scenario *s, const cluster_result *r, cluster_extra *x,
                      sim_error *err)
{
    int rc = cluster_energy_at_site(s, r, &x->ce, err);
    if (rc)
        return rc;
    x->bin_s = cluster_bin_width_s(r->end_s);
    x->n_bins = cluster_bin_count(r->end_s, x->bin_s);
    x->busy = malloc((size_t)x->n_bins * sizeof *x->busy);
    x->queue = malloc((size_t)x->n_bins * sizeof *x->queue);
    if (!x->busy || !x->queue)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "cluster: out of memory");
    cluster_bin_series(r, x->bin_s, x->n_bins, x->busy, x->queue);
    return cluster_cdf_points(r, CLUSTER_CDF_POINTS, x->wait_s, x->slowdown, err);
}

/* The scenario's <job> timed as `dcsim run` times it (the same plan and
 * campaign, no energy account) */
static int time_training(const scn_scenario *s, cluster_training *t, sim_error *err)
{
    run_plan plan;
    run_outcome o;
    memset(&o, 0, sizeof o);
    int rc = run_plan_prepare(s, 1, 0, &plan, err);
    if (!rc)
        rc = run_execute(&plan, &plan.campaign, NULL, NULL, NULL, &o, err);
    if (!rc && plan.campaign.gpu_count > s->cluster_jobs.gpus)
        rc = sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "<training-runs>: the <job> needs "
                           "%llu GPUs, the cluster has %u",
                           (unsigned long long)plan.campaign.gpu_count, s->cluster_jobs.gpus);
    if (!rc && !(o.result.time_to_train_s >= CLUSTER_MIN_DURATION_S))
        rc = sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "<training-runs>: the <job> trains in "
                           "%g s, under the cluster tier's shortest job (1 s)",
                           o.result.time_to_train_s);
    if (!rc) {
        t->runs = s->n_cluster_training;
        t->gpus = (uint32_t)plan.campaign.gpu_count;
        t->time_to_train_s = o.result.time_to_train_s;
        t->digest = o.result.event_digest;
    }
    run_outcome_free(&o);
    run_plan_free(&plan);
    return rc;
}

/* The stream's (or trace's) jobs and the training runs, by submit time (at
 * a tie the stream's job first; runs at the same time in their order) */
static int merge_training(const scn_scenario *s, cluster_training *t,
                          cluster_job_spec **out, uint32_t **min_out, uint32_t *n,
                          sim_error *err)
{
    cluster_job_spec *base = NULL;
    uint32_t nb = 0;
    int only_runs = !s->cluster_jobs.jobs && !(s->cluster_jobs.stream.rate_per_s > 0);
    int rc = only_runs ? 0 : cluster_jobs_make(&s->cluster_jobs, &base, &nb, err);
    if (rc)
        return rc;
    cluster_job_spec runs[SCN_MAX_TRAINING_RUNS];
    for (unsigned i = 0; i < t->runs; i++) { /* insertion sort: stable */
        cluster_job_spec r = s->cluster_training[i];
        r.gpus = t->gpus;
        r.duration_s = t->time_to_train_s;
        unsigned k = i;
        for (; k > 0 && runs[k - 1].submit_s > r.submit_s; k--)
            runs[k] = runs[k - 1];
        runs[k] = r;
    }
    const cluster_config *c = &s->cluster_jobs;
    cluster_job_spec *m = malloc(((size_t)nb + t->runs) * sizeof *m);
    /* the elastic jobs' min GPUs (the runs are rigid): the trace's, the stream's */
    int has_min = c->jobs ? c->min_gpus != NULL : c->stream.elastic_share > 0 && nb;
    uint32_t *bmin = has_min ? malloc(((size_t)nb + 1) * sizeof *bmin) : NULL;
    uint32_t *mm = has_min ? malloc(((size_t)nb + t->runs) * sizeof *mm) : NULL;
    if (!m || (has_min && (!bmin || !mm))) {
        free(base);
        free(m);
        free(bmin);
        free(mm);
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "cluster: out of memory");
    }
    if (has_min && c->jobs)
        memcpy(bmin, c->min_gpus, (size_t)nb * sizeof *bmin);
    else if (has_min)
        cluster_jobs_min(c, base, nb, bmin);
    uint32_t i = 0, j = 0, k = 0;
    while (i < nb || j < t->runs)
        if (j >= t->runs || (i < nb && base[i].submit_s <= runs[j].submit_s)) {
            if (mm)
                mm[k] = bmin[i];
            m[k++] = base[i++];
        } else {
            t->job[j] = k;
            if (mm)
                mm[k] = 0;
            m[k++] = runs[j++];
        }
    free(base);
    free(bmin);
    *min_out = mm;
    *out = m;
    *n = k;
    return 0;
}

int cluster_run_execute(scn_scenario *s, cluster_run *out, sim_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = 0;
    cluster_job_spec *merged = NULL, *given = (cluster_job_spec *)s->cluster_jobs.jobs;
    uint32_t n_given = s->cluster_jobs.n_jobs, *merged_min = NULL;
    const uint32_t *given_min = s->cluster_jobs.min_gpus;
    if (s->n_cluster_training) {
        rc = time_training(s, &out->training, err);
        if (!rc)
            rc = merge_training(s, &out->training, &merged, &merged_min,
                                &s->cluster_jobs.n_jobs, err);
        if (!rc) {
            s->cluster_jobs.jobs = merged;
            s->cluster_jobs.min_gpus = merged_min;
        }
    }
    if (!rc)
        rc = net_setup(s, out->training.runs ? out->training.gpus : 0, &out->net, err);
    if (!rc)
        rc = cluster_simulate(&s->cluster_jobs, &out->r, err);
    s->cluster_jobs.jobs = given; /* the scenario as loaded */
    s->cluster_jobs.n_jobs = n_given;
    s->cluster_jobs.min_gpus = given_min;
    free(merged);
    free(merged_min);
    net_free(&out->net); /* keeps the stats */
    s->cluster_jobs.pacer = NULL; /* freed with the pacer */
    if (!rc)
        rc = extra_make(s, &out->r, &out->x, err);
    return rc;
}

void cluster_run_free(cluster_run *run)
{
    if (!run)
        return;
    cluster_energy_free(&run->x.ce);
    free(run->x.busy);
    free(run->x.queue);
    cluster_result_free(&run->r);
    memset(run, 0, sizeof *run);
}
