/* energyrun.c - see energyrun.h. */
#include "energyrun.h"

#include <math.h>
#include <string.h>

int energy_run_setup(const scn_scenario *s, double iteration_s, double compute_frac,
                     energy_run *er, sim_error *err)
{
    memset(er, 0, sizeof *er);
    pwr_config_for(&er->power, s->gpu.tdp_w, s->campaign.gpus_per_node);
    pwr_cluster *k = &er->cluster;
    k->n_nodes = (s->campaign.gpu_count + er->power.gpus_per_node - 1) / er->power.gpus_per_node;
    if (s->has_fabric) { /* fabric tiers 1..4 onto the model's leaf, spine, core */
        er->network_counted = 1;
        if (s->fabric.link.switch_power_w > 0) /* the technology's (catalog or rule) */
            for (int t = 0; t < PWR_SWITCH_TIERS; t++)
                er->power.switch_w[t] = s->fabric.link.switch_power_w;
        for (int t = 1; t <= 4; t++)
            k->n_switches[t - 1 < PWR_SWITCH_TIERS ? t - 1 : PWR_SWITCH_TIERS - 1] +=
                s->fabric_switches[t];
        /* optical modules outside the nodes: the switch end of node cables and
         * both ends of switch-to-switch ones, two ports per twin-port module
         * (the 17 W figure is an 800G twin-port OSFP serving 2 x 400G;
         * hardware.md 3.4) */
        uint64_t ends = s->fabric_cables[0];
        for (int t = 1; t <= 4; t++)
            ends += 2 * s->fabric_cables[t];
        k->n_transceivers = (ends + 1) / 2;
        for (int t = 0; t <= 4; t++)
            er->n_cables += s->fabric_cables[t];
        for (int t = 0; t < PWR_SWITCH_TIERS; t++)
            er->n_switches += k->n_switches[t];
        er->n_nics = s->fabric_cables[0]; /* one fabric port per node cable */
        er->n_transceivers = k->n_transceivers;
    }
    er->n_gpus = s->campaign.gpu_count;
    er->n_servers = k->n_nodes;
    if (!(compute_frac >= 0 && compute_frac <= 1))
        return sim_error_set(err, SIM_ERR_INTERNAL, NULL, 0,
                             "energy: the step profile has no compute fraction");
    int rc = pwr_cluster_levels(&er->power, k, compute_frac, &er->levels, err);
    if (!rc)
        rc = pwr_cluster_swing(&er->power, k, iteration_s, &er->swing, err);
    if (rc)
        return rc;
    energy_config *c = &er->cfg;
    for (int st = 0; st < ENERGY_STATES; st++) {
        int p = pwr_state_of_campaign(st);
        c->state_power_w[st] = p >= 0 ? er->levels.state_w[p] : 0;
    }
    /* the facility is built for the cluster computing flat out */
    c->design_it_w = er->swing.high_w;
    c->design = s->site.design;
    c->climate = s->site.info.climate;
    c->start_hour = fac_month_start_hour((int)s->site.start_month - 1);
    c->price_per_kwh = s->site.info.price_per_kwh;
    c->emission_kg_per_kwh = s->site.info.emission_kg_per_kwh;
    c->green_share = s->site.green_share;
    er->account = energy_account_create(c, err);
    return er->account ? 0 : (err && err->code ? err->code : SIM_ERR_NOMEM);
}

static int on_event(void *ctx, const campaign_event *ev, sim_error *err)
{
    energy_run *er = ctx;
    return er->inner.event ? er->inner.event(er->inner.ctx, ev, err) : 0;
}

static int on_segment(void *ctx, const campaign_segment *seg, sim_error *err)
{
    energy_run *er = ctx;
    int rc = er->inner.segment ? er->inner.segment(er->inner.ctx, seg, err) : 0;
    return rc ? rc : energy_add_interval(er->account, seg->start_s, seg->end_s, seg->state, err);
}

static int on_part(void *ctx, const campaign_part_event *ev, sim_error *err)
{
    energy_run *er = ctx;
    return er->inner.part(er->inner.ctx, ev, err);
}

campaign_sink energy_run_sink(energy_run *er, const campaign_sink *inner)
{
    if (inner)
        er->inner = *inner;
    return (campaign_sink){.ctx = er, .event = on_event, .segment = on_segment,
                           .part = er->inner.part ? on_part : NULL};
}

int energy_run_finish(energy_run *er, sim_error *err)
{
    return energy_finish(er->account, &er->result, err);
}

void energy_run_free(energy_run *er)
{
    energy_account_free(er->account);
    er->account = NULL;
}

void energy_run_capex(const energy_run *er, const scn_costs *c, double run_s, energy_capex *out)
{
    memset(out, 0, sizeof *out);
    out->capex = (double)er->n_servers * c->server + (double)er->n_switches * c->switch_ +
                 (double)er->n_nics * c->nic + (double)er->n_transceivers * c->transceiver +
                 (double)er->n_cables * c->cable;
    out->amortised = out->capex * run_s / c->life_s;
    out->build = out->amortised + er->result.cost;
    out->rent = (double)er->n_gpus * run_s / 3600 * c->rent_per_gpu_hour;
}
