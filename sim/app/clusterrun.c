/* clusterrun.c - one run of a job-stream scenario (clusterrun.h): the
 * fabric and pacer when the scenario has one, cluster_simulate, then the
 * energy account, the bins and the CDF points of the finished run. */
#include "clusterrun.h"

#include <stdlib.h>
#include <string.h>

#include "cluster_series.h"

static int net_setup(scn_scenario *s, cluster_net *n, sim_error *err)
{
    memset(n, 0, sizeof *n);
    if (!s->has_cluster_traffic)
        return 0;
    int rc = fabric_build(&s->fabric, &n->f, err);
    if (rc)
        return rc;
    n->has = 1;
    n->x = cluster_interf_create(&n->f, s->cluster_jobs.gpus, &s->cluster_traffic,
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

int cluster_run_execute(scn_scenario *s, cluster_run *out, sim_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = net_setup(s, &out->net, err);
    if (!rc)
        rc = cluster_simulate(&s->cluster_jobs, &out->r, err);
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
