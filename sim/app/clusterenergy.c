/* clusterenergy.c - see clusterenergy.h. */
#include "clusterenergy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "energyrun.h"

/* rows: the steps, split at whole hours when split is set */
static int make_rows(const cluster_result *r, const cluster_power *p, energy_account *account,
                     cluster_energy *out, sim_error *err)
{
    size_t cap = (size_t)r->n_steps + (account ? (size_t)ceil(r->end_s / 3600) + 1 : 0);
    out->rows = malloc((cap ? cap : 1) * sizeof *out->rows);
    if (!out->rows)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "cluster: out of memory for the series");
    for (uint32_t i = 0; i < r->n_steps; i++) {
        const cluster_step *st = &r->steps[i];
        double lo = st->t_s, hi = cluster_step_end_s(r, i);
        double w = cluster_it_power_w(p, st->busy_gpus, st->busy_nodes);
        while (lo < hi && out->n_rows < cap) {
            double top = account ? fmin(hi, 3600 * (floor(lo / 3600) + 1)) : hi;
            out->rows[out->n_rows++] = (cluster_row){lo, st->busy_gpus, st->queue, w, 0};
            if (account) {
                int rc = energy_add_power(account, lo, top, w, err);
                if (rc)
                    return rc;
            }
            lo = top;
        }
    }
    return 0;
}

int cluster_energy_at_site(const scn_scenario *s, const cluster_result *r, cluster_energy *out,
                           sim_error *err)
{
    memset(out, 0, sizeof *out);
    const cluster_config *c = &s->cluster_jobs;
    scn_scenario fleet = *s; /* shallow: only the fields below change, nothing is freed */
    fleet.campaign.gpu_count = c->gpus;
    fleet.campaign.gpus_per_node = c->node_gpus;
    out->has_site = s->site.given;
    if (!out->has_site) { /* the setup opens a facility account; without a site it is unused */
        fleet.site.design = fac_design_default(FAC_COOLING_AIR_ECONOMISER);
        fac_climate_init(&fleet.site.info.climate);
        fleet.site.start_month = 1;
        fleet.site.info.price_per_kwh = fleet.site.info.emission_kg_per_kwh = 0;
        fleet.site.green_share = 0;
    }
    /* iteration 1 s: the swing's period, not used here; the facility is
     * built for every GPU computing (the energy tier's design load) */
    energy_run er;
    int rc = energy_run_setup(&fleet, 1.0, s->cluster_compute_frac, &er, err);
    if (!rc)
        rc = cluster_power_levels(&er.power, &er.cluster, c->gpus, s->cluster_compute_frac,
                                  &out->power, err);
    if (!rc)
        rc = make_rows(r, &out->power, out->has_site ? er.account : NULL, out, err);
    if (!rc && out->has_site)
        rc = energy_run_finish(&er, err);
    if (rc) {
        energy_run_free(&er);
        cluster_energy_free(out);
        return rc;
    }
    out->network_counted = er.network_counted;
    out->it_energy_j = cluster_it_energy_j(&out->power, r);
    out->busy_gpu_h = r->busy_gpu_s / 3600;
    if (out->has_site) {
        out->e = er.result;
        const double *pue = energy_hourly_pue(er.account);
        size_t hours;
        energy_hourly_it_j(er.account, &hours);
        for (uint32_t i = 0; i < out->n_rows; i++) {
            size_t h = (size_t)floor(out->rows[i].t_s / 3600);
            out->rows[i].facility_w = h < hours ? out->rows[i].it_w * pue[h] : 0;
        }
        out->energy_cost_per_gpu_h = out->busy_gpu_h > 0 ? er.result.cost / out->busy_gpu_h : 0;
    }
    if (s->costs.given && out->busy_gpu_h > 0) {
        energy_capex k;
        energy_run_capex(&er, &s->costs, r->end_s, &k);
        out->has_costs = out->has_site;
        out->build_per_gpu_h = (k.amortised + out->e.cost) / out->busy_gpu_h;
        out->has_rent = s->costs.rent_per_gpu_hour > 0;
        out->rent_per_gpu_h = k.rent / out->busy_gpu_h;
    }
    const cluster_power *p = &out->power;
    int n = snprintf(out->basis, sizeof out->basis,
                     "%u node(s) of %u GPUs; a busy GPU %.4g W (TDP %.0f W, compute fraction "
                     "%.3g), an idle one %.4g W; host %.0f W busy, %.0f W idle per node; %s "
                     "%.4g W", p->nodes, er.power.gpus_per_node, p->gpu_busy_w,
                     er.power.gpu_tdp_w, p->compute_frac, p->gpu_idle_w, p->node_busy_w,
                     p->node_idle_w, er.network_counted ? "fabric" : "no fabric counted,",
                     p->fixed_w);
    if (out->has_site && n > 0 && (size_t)n < sizeof out->basis)
        snprintf(out->basis + n, sizeof out->basis - (size_t)n,
                 "; site %s, price %.4g CNY/kWh, %.4g kg CO2/kWh, green share %.3g "
                 "(docs/power.md, docs/energy.md)", s->site.info.name, er.cfg.price_per_kwh,
                 er.cfg.emission_kg_per_kwh, er.cfg.green_share);
    energy_run_free(&er);
    return 0;
}

void cluster_energy_free(cluster_energy *ce)
{
    if (!ce)
        return;
    free(ce->rows);
    ce->rows = NULL;
    ce->n_rows = 0;
}
