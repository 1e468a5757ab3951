/* hubs_fabric.c - a fabric at each hub (hubs_fabric.h). A hub's fabric is
 * its own <hub><fabric> or the scenario's <cluster><fabric>, with the hub's GPU count (the sizing
 * rules of docs/fabric.md: fabric_count refused any that does not fit at
 * load time), built once when a simulation of the hub first needs it and
 * kept for the policy's run and the baseline's; each simulation gets a
 * fresh pacer (cluster_interf_create: its own cache, so a hub's result is
 * what `dcsim cluster` gives for the same jobs on the same fabric). */
#include "hubs_fabric.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_interf.h"
#include "clustermodel.h"
#include "fabric.h"

struct hubs_fabric {
    const scn_scenario *s;
    hubs_run *run;                 /* the run whose simulations are under way */
    int built[HUBS_MAX];
    fabric f[HUBS_MAX];
    cluster_interf *x[HUBS_MAX];   /* the simulation's pacer, between make and done */
    /* the traffic classes with each hub's job sizes derived on its fabric
     * where a class is given by a model (clustermodel.h), made with the fabric */
    cluster_traffic_table tt[HUBS_MAX];
    cluster_model_size sizes[CLUSTER_MAX_SIZED];
};

/* hub h's traffic table: the scenario's, with a profile derived on the
 * hub's fabric for every size its jobs would run at there (hubs_job_gpus,
 * those that fit the hub) whose class is given by a model */
static int derive(hubs_fabric *hf, unsigned h, sim_error *err)
{
    const scn_scenario *s = hf->s;
    const hubs_config *cfg = &s->hubs->cfg;
    hf->tt[h] = s->cluster_traffic;
    uint32_t *sizes = malloc(((size_t)cfg->n_jobs + 1) * sizeof *sizes);
    if (!sizes)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "hubs: out of memory");
    size_t n = 0;
    for (uint32_t j = 0; j < cfg->n_jobs; j++) {
        uint32_t g = hubs_job_gpus(&cfg->hubs[h], &cfg->jobs[j]);
        int seen = g > cfg->hubs[h].gpus;
        for (size_t k = 0; !seen && k < n; k++) /* n <= the distinct sizes: few */
            seen = sizes[k] == g;
        if (!seen)
            sizes[n++] = g;
    }
    unsigned n_out = 0;
    int rc = cluster_model_derive_sizes(s, &hf->f[h], sizes, n, &hf->tt[h], hf->sizes, &n_out,
                                        err);
    free(sizes);
    if (rc && rc != SIM_ERR_NOMEM) { /* say which hub */
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        sim_error_clear(err);
        sim_error_set(err, rc, NULL, 0, "hub %s: %s", cfg->hubs[h].name, why);
    }
    return rc;
}

hubs_fabric *hubs_fabric_create(const scn_scenario *s, int *fail)
{
    *fail = 0;
    if (!s->has_cluster_traffic || !s->hubs)
        return NULL;
    hubs_fabric *hf = calloc(1, sizeof *hf);
    if (!hf) {
        *fail = 1;
        return NULL;
    }
    hf->s = s;
    return hf;
}

static const cluster_pacer *make(void *ctx, unsigned h, sim_error *err)
{
    hubs_fabric *hf = ctx;
    const scn_scenario *s = hf->s;
    uint32_t gpus = s->hubs->cfg.hubs[h].gpus;
    if (!hf->built[h]) {
        fabric_config c = s->hubs->fabric[h]; /* its own, or the scenario's at its size */
        c.gpus = gpus;
        int rc = fabric_build(&c, &hf->f[h], err);
        if (rc) {
            if (rc != SIM_ERR_NOMEM) { /* the loader checked the size: say which hub */
                char why[sizeof err->msg];
                snprintf(why, sizeof why, "%s", err->msg);
                sim_error_clear(err);
                sim_error_set(err, rc, NULL, 0, "hub %s: %s", s->hubs->cfg.hubs[h].name, why);
            }
            return NULL;
        }
        hf->built[h] = 1;
        if (derive(hf, h, err))
            return NULL;
    }
    hf->x[h] = cluster_interf_create(&hf->f[h], gpus, &hf->tt[h], s->cluster_cache_entries,
                                     err);
    if (!hf->x[h]) {
        if (!err->code)
            sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "hubs: out of memory");
        return NULL;
    }
    return cluster_interf_pacer(hf->x[h]);
}

static void done(void *ctx, unsigned h)
{
    hubs_fabric *hf = ctx;
    if (hf->run) {
        hf->run->interf = 1;
        cluster_interf_get_stats(hf->x[h], &hf->run->interf_stats[h]);
    }
    cluster_interf_destroy(hf->x[h]);
    hf->x[h] = NULL;
}

void hubs_fabric_attach(hubs_fabric *hf, hubs_run *run)
{
    if (!hf)
        return;
    hf->run = run;
    run->cfg.pacers = (hubs_pacers){hf, make, done};
}

void hubs_fabric_destroy(hubs_fabric *hf)
{
    if (!hf)
        return;
    for (unsigned h = 0; h < HUBS_MAX; h++) {
        cluster_interf_destroy(hf->x[h]);
        if (hf->built[h])
            fabric_free(&hf->f[h]);
    }
    free(hf);
}
