/* servecost.c - see servecost.h. */
#include "servecost.h"

#include <stdio.h>
#include <string.h>

int serve_cost_at_site(const scn_scenario *s, const serve_config *c, const serve_result *r,
                       serve_cost *out, sim_error *err)
{
    memset(out, 0, sizeof *out);
    if (!(r->end_s > 0) || !r->output_tokens)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "serving: the run produced no "
                             "output tokens: no cost per token");
    scn_scenario fleet = *s; /* shallow: only the GPU count is changed, nothing is freed */
    fleet.campaign.gpu_count = (uint64_t)serve_gpus(c); /* both pools when disaggregated */
    if (fleet.campaign.gpu_count != s->campaign.gpu_count)
        fleet.has_fabric = 0; /* the fabric was built for the cluster's count (--size) */
    double iteration_s = r->iterations ? r->busy_fraction * r->end_s *
                                             (c->replicas + c->prefill_replicas) /
                                             (double)r->iterations
                                       : r->end_s;
    energy_run er;
    int rc = energy_run_setup(&fleet, iteration_s, r->busy_fraction, &er, err);
    if (!rc)
        rc = energy_add_interval(er.account, 0, r->end_s, CAMPAIGN_STATE_COMPUTE, err);
    if (!rc)
        rc = energy_run_finish(&er, err);
    if (!rc) {
        out->gpus = (double)fleet.campaign.gpu_count;
        out->gpu_hours = out->gpus * r->end_s / 3600;
        out->busy_fraction = r->busy_fraction;
        out->it_power_w = er.levels.state_w[PWR_STATE_COMPUTE];
        out->mtok = r->output_tokens / 1e6;
        out->e = er.result;
        out->kwh_per_mtok = er.result.facility_energy_j / 3.6e6 / out->mtok;
        out->cost_per_mtok = er.result.cost / out->mtok;
        out->co2_kg_per_mtok = er.result.co2_kg / out->mtok;
        const pwr_config *p = &er.power;
        snprintf(out->basis, sizeof out->basis,
                 "%llu node(s) of %u GPUs; a GPU draws TDP %.0f W x (f k_c + (1 - f) k_m), "
                 "k_c %.3g, k_m %.3g, f = busy; host %.0f W per node; %s; price %.4g CNY/kWh, "
                 "%.4g kg CO2/kWh, green share %.3g (docs/power.md, docs/energy.md)",
                 (unsigned long long)er.cluster.n_nodes, p->gpus_per_node, p->gpu_tdp_w,
                 p->gpu_compute_tdp_frac, p->gpu_comm_tdp_frac, p->node_busy_w,
                 er.network_counted ? "the fabric's switches and optics" : "no fabric counted",
                 er.cfg.price_per_kwh, er.cfg.emission_kg_per_kwh, er.cfg.green_share);
        if (s->costs.given) {
            energy_capex k;
            energy_run_capex(&er, &s->costs, r->end_s, &k);
            out->has_costs = 1;
            out->build_per_mtok = k.build / out->mtok;
            out->has_rent = s->costs.rent_per_gpu_hour > 0;
            out->rent_per_mtok = k.rent / out->mtok;
        }
    }
    energy_run_free(&er);
    return rc;
}
