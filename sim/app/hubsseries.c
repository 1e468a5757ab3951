/* hubsseries.c - a hub's hours at its site and the run's bins over time
 * (hubscmd.h; docs/hubs.md "Over time", docs/trace-format.md "Hubs
 * tables"). The hours are the energy tier's account of the hub's step
 * series, fed exactly as cluster_energy_at_site feeds it (the same
 * intervals in the same order, so each hour's IT energy and PUE are the
 * same numbers), with each hour's water recomputed as energy_finish does;
 * then CO2 at the hub's hourly carbon profile where it has one, and the
 * hours and steps summed into bins of a month (730 h, a twelfth of 8,760 h)
 * or, for a horizon under 60 days, a day; and the water-limit placement's
 * figures (an idle year's water, a busy GPU-second's bound).
 */
#include "hubscmd.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_series.h"
#include "energyrun.h"

void hubs_hours_free(hubs_hours *hh)
{
    if (!hh)
        return;
    free(hh->it_j);
    free(hh->facility_j);
    free(hh->water_l);
    memset(hh, 0, sizeof *hh);
}

/* each hour's water (l): energy_finish's sum, term by term */
static int hour_water(const energy_run *er, const cluster_result *cr, hubs_hours *hh,
                      const double *pue, sim_error *err)
{
    const energy_config *c = &er->cfg;
    const double *temp = energy_hourly_temp_c(er->account);
    double *wb = malloc((hh->n ? hh->n : 1) * sizeof *wb);
    if (!wb)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "hubs: out of memory for the hours");
    if (hh->n)
        fac_wetbulb_profile(&c->climate, c->start_hour, hh->n, temp, wb);
    for (size_t h = 0; h < hh->n; h++) {
        double e = hh->it_j[h];
        hh->facility_j[h] = e > 0 ? e * pue[h] : 0;
        hh->water_l[h] = 0;
        if (!(e > 0))
            continue;
        double length = fmin(3600.0, cr->end_s - 3600.0 * (double)h);
        fac_point p;
        fac_evaluate_humid(&c->design, temp[h], wb[h], e / length / c->design_it_w, &p);
        hh->water_l[h] = e / 3.6e6 * p.wue_l_per_kwh;
    }
    free(wb);
    return 0;
}

/* the energy account of run cr at the site of one, fed as
 * cluster_energy_at_site feeds it, finished; *p the power levels */
static int account_of(const scn_scenario *one, const cluster_result *cr, energy_run *er,
                      cluster_power *p, sim_error *err)
{
    const cluster_config *c = &one->cluster_jobs;
    scn_scenario fleet = *one; /* as cluster_energy_at_site: shallow, nothing freed */
    fleet.campaign.gpu_count = c->gpus;
    fleet.campaign.gpus_per_node = c->node_gpus;
    int rc = energy_run_setup(&fleet, 1.0, one->cluster_compute_frac, er, err);
    if (!rc)
        rc = cluster_power_levels(&er->power, &er->cluster, c->gpus, one->cluster_compute_frac,
                                  p, err);
    for (uint32_t i = 0; !rc && i < cr->n_steps; i++) { /* make_rows' split at the hours */
        const cluster_step *st = &cr->steps[i];
        double lo = st->t_s, hi = cluster_step_end_s(cr, i);
        double w = cluster_it_power_w(p, st->busy_gpus, st->busy_nodes);
        for (unsigned k = 0; lo < hi && !rc && k < 1000000000u; k++) {
            double top = fmin(hi, 3600 * (floor(lo / 3600) + 1));
            rc = energy_add_power(er->account, lo, top, w, err);
            lo = top;
        }
    }
    if (!rc)
        rc = energy_run_finish(er, err);
    return rc;
}

int hubs_hub_hours(const scn_scenario *one, const cluster_result *cr, hubs_hours *hh,
                   sim_error *err)
{
    memset(hh, 0, sizeof *hh);
    energy_run er;
    cluster_power p;
    memset(&er, 0, sizeof er);
    int rc = account_of(one, cr, &er, &p, err);
    const double *it = rc ? NULL : energy_hourly_it_j(er.account, &hh->n);
    if (!rc) {
        size_t m = hh->n ? hh->n : 1;
        hh->it_j = malloc(m * sizeof *hh->it_j);
        hh->facility_j = malloc(m * sizeof *hh->facility_j);
        hh->water_l = malloc(m * sizeof *hh->water_l);
        if (!hh->it_j || !hh->facility_j || !hh->water_l)
            rc = sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "hubs: out of memory for the hours");
    }
    if (!rc) {
        memcpy(hh->it_j, it, hh->n * sizeof *it);
        rc = hour_water(&er, cr, hh, energy_hourly_pue(er.account), err);
    }
    energy_run_free(&er);
    if (rc)
        hubs_hours_free(hh);
    return rc;
}

/* the hub of one over its first 8,760 h with g GPUs busy (whole nodes),
 * hour by hour as the account charges it */
static int year_hours(const scn_scenario *one, uint32_t g, hubs_hours *hh, sim_error *err)
{
    const cluster_config *c = &one->cluster_jobs;
    uint32_t node = c->node_gpus ? c->node_gpus : 1;
    cluster_step st = {0, g, (g + node - 1) / node, 0};
    cluster_result cr;
    memset(&cr, 0, sizeof cr);
    cr.steps = &st;
    cr.n_steps = 1;
    cr.end_s = 8760 * 3600.0;
    return hubs_hub_hours(one, &cr, hh, err);
}

int hubs_hub_water(const scn_scenario *one, hubs_hub *hub, double *table, double *levels,
                   sim_error *err)
{
    uint32_t gpus = one->cluster_jobs.gpus, node = one->cluster_jobs.node_gpus;
    node = node ? node : 1;
    double top = 0;
    int rc = 0;
    memset(table, 0, 8760 * HUBS_WATER_LEVELS * sizeof *table);
    for (unsigned q = 0; q < HUBS_WATER_LEVELS && !rc; q++) {
        /* whole nodes, the last level every GPU */
        uint32_t g = q + 1 == HUBS_WATER_LEVELS ? gpus
                                                 : (uint32_t)((uint64_t)gpus * q /
                                                              (HUBS_WATER_LEVELS - 1) / node * node);
        levels[q] = g;
        hubs_hours hh;
        rc = year_hours(one, g, &hh, err);
        for (size_t k = 0; !rc && k < hh.n && k < 8760; k++)
            table[k * HUBS_WATER_LEVELS + q] = hh.water_l[k];
        hubs_hours_free(&hh);
    }
    if (rc)
        return rc;
    hub->water_idle_year_l = hub->water_full_year_l = 0;
    for (size_t k = 0; k < 8760; k++) { /* the measured years, before the months' most */
        hub->water_idle_year_l += table[k * HUBS_WATER_LEVELS];
        hub->water_full_year_l += table[k * HUBS_WATER_LEVELS + HUBS_WATER_LEVELS - 1];
    }
    for (size_t m = 0; m < 12; m++) /* each level's most over the month (730 h) */
        for (unsigned q = 0; q < HUBS_WATER_LEVELS; q++) {
            double most = 0;
            for (size_t k = 730 * m; k < 730 * (m + 1); k++)
                most = fmax(most, table[k * HUBS_WATER_LEVELS + q]);
            for (size_t k = 730 * m; k < 730 * (m + 1); k++)
                table[k * HUBS_WATER_LEVELS + q] = most;
        }
    for (size_t k = 0; k < 8760; k++) {
        const double *row = table + k * HUBS_WATER_LEVELS;
        /* the chord from idle to full load: a busy GPU-second's water */
        top = fmax(top, (row[HUBS_WATER_LEVELS - 1] - row[0]) / ((double)gpus * 3600));
    }
    hub->water_l_per_gpu_s = top;
    hub->water_hour_l = table;
    hub->water_level_gpus = levels;
    hub->water_levels = HUBS_WATER_LEVELS;
    return 0;
}

double hubs_hours_co2_kg(const hubs_hub *hub, const hubs_hours *hh, size_t h)
{
    return hh->facility_j[h] / 3.6e6 * hubs_carbon_at(hub, 3600.0 * (double)h) *
           (1 - hub->green_share);
}

double hubs_series_bin_s(double horizon_s)
{
    return horizon_s >= 60 * 86400.0 ? 730 * 3600.0 : 86400.0;
}

uint32_t hubs_series_bins(double horizon_s)
{
    double n = ceil(horizon_s / hubs_series_bin_s(horizon_s));
    return n >= 1 ? (uint32_t)n : 1;
}

static uint32_t bin_of(double t_s, double bin_s, uint32_t n_bins)
{
    double b = floor(t_s / bin_s);
    return b <= 0 ? 0 : b >= n_bins - 1 ? n_bins - 1 : (uint32_t)b;
}

void hubs_series_fill(const hubs_run *run, unsigned h, const hubs_hours *hh, hubs_bin *bins)
{
    const hubs_config *c = &run->cfg;
    const hubs_hub *hub = &c->hubs[h];
    double bin_s = hubs_series_bin_s(run->r.horizon_s);
    uint32_t n = hubs_series_bins(run->r.horizon_s);
    memset(bins, 0, n * sizeof *bins);
    for (size_t k = 0; k < hh->n; k++) {
        hubs_bin *b = &bins[bin_of(3600.0 * (double)k, bin_s, n)];
        double kwh = hh->facility_j[k] / 3.6e6;
        b->it_energy_j += hh->it_j[k];
        b->facility_energy_j += hh->facility_j[k];
        b->energy_cost += kwh * hub->price_per_kwh;
        b->co2_kg += run->co2_hourly[h] ? hubs_hours_co2_kg(hub, hh, k)
                                        : kwh * hub->emission_kg_per_kwh * (1 - hub->green_share);
        b->water_l += hh->water_l[k];
    }
    const cluster_result *cr = &run->cr[h];
    for (uint32_t i = 0; i < cr->n_steps; i++) { /* busy GPUs and the queue, split at bins */
        const cluster_step *st = &cr->steps[i];
        double lo = st->t_s, hi = cluster_step_end_s(cr, i);
        for (uint32_t k = 0; lo < hi && k <= n; k++) {
            uint32_t at = bin_of(lo, bin_s, n);
            double top = at == n - 1 ? hi : fmin(hi, bin_s * (at + 1));
            bins[at].busy_gpu_s += st->busy_gpus * (top - lo);
            bins[at].queue_job_s += st->queue * (top - lo);
            lo = top;
        }
    }
    for (uint32_t i = 0; i < run->r.n_jobs; i++) {
        const hubs_job *x = &run->r.jobs[i];
        const hubs_job_spec *j = &c->jobs[i];
        if (x->end_hub == h) /* the result leaves from the hub the job ends at */
            bins[bin_of(x->end_s, bin_s, n)].tb_moved += j->result_tb;
        if (x->hub != h)
            continue;
        bins[bin_of(x->start_s, bin_s, n)].jobs_started++;
        bins[bin_of(x->in_start_s, bin_s, n)].tb_moved += j->dataset_tb;
        /* a backbone's links' own cost per TB (0 without; no moves with one) */
        bins[bin_of(x->in_start_s, bin_s, n)].data_cost += hubs_link_cost(c, j, h, j->dataset_tb);
        bins[bin_of(x->end_s, bin_s, n)].data_cost += hubs_link_cost(c, j, h, j->result_tb);
    }
    for (uint32_t m = 0; m < run->r.n_moves; m++) /* a move's bytes at its checkpoint */
        if (run->r.moves[m].to == h)
            bins[bin_of(run->r.moves[m].ckpt_s, bin_s, n)].tb_moved += run->r.moves[m].tb;
    for (uint32_t k = 0; k < n; k++)
        bins[k].data_cost += bins[k].tb_moved * c->cost_per_tb;
}
