/* test_energy.c - a run's energy at a site, end to end through the scenario
 * loader, the power model and the campaign's timeline:
 *   - IT energy = the integral of IT power over the timeline, to 1e-9
 *     (recomputed here from the segments with pwr_energy_of);
 *   - the hourly IT energies add up to it;
 *   - facility energy = sum over hours of IT energy x that hour's PUE
 *     (recomputed here from the site's temperature profile and fac_pue);
 *   - cost and CO2 follow from the facility energy, price, emission factor
 *     and green share;
 *   - the same job at a colder site uses less facility energy. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "campaign.h"
#include "check.h"
#include "energyrun.h"
#include "scenario.h"

typedef struct {
    pwr_interval iv[200000];
    size_t n;
} timeline;

static timeline tl;

static int collect(void *ctx, const campaign_segment *seg, sim_error *err)
{
    (void)ctx;
    (void)err;
    int p = pwr_state_of_campaign(seg->state);
    if (p >= 0 && tl.n < sizeof tl.iv / sizeof tl.iv[0])
        tl.iv[tl.n++] = (pwr_interval){p, seg->end_s - seg->start_s};
    return 0;
}

static int run_at(const char *site, double green, energy_result *out)
{
    char set_site[64], set_green[64];
    snprintf(set_site, sizeof set_site, "site/@name=%s", site);
    snprintf(set_green, sizeof set_green, "site/@green-share=%g%%", green * 100);
    const char *sets[] = {set_site, set_green};
    scn_scenario s;
    sim_error err;
    sim_error_clear(&err);
    int rc = scn_load(DCSIM_SOURCE_DIR "/tests/scenarios/site.xml", sets, 2, &s, &err);
    CHECK(rc == 0);
    if (rc) {
        printf("%s\n", err.msg);
        return -1;
    }
    energy_run er;
    CHECK(energy_run_setup(&s, campaign_iteration_time_s(&s.campaign), 1.0, &er, &err) == 0);
    campaign_sink inner = {.segment = collect};
    campaign_sink sink = energy_run_sink(&er, &inner);
    campaign_result r;
    tl.n = 0;
    CHECK(campaign_run(&s.campaign, &sink, NULL, NULL, &r, &err) == 0);
    CHECK(energy_run_finish(&er, &err) == 0);
    const energy_result *e = &er.result;
    /* the integral of power over the timeline */
    pwr_energy pe;
    CHECK(pwr_energy_of(&er.levels, tl.iv, tl.n, &pe, &err) == 0);
    CHECK_REL(e->it_energy_j, pe.energy_j, 1e-9);
    CHECK_REL(e->hours * 3600, r.time_to_train_s, 1e-12);
    /* hour by hour, against the site's PUE of that hour */
    size_t n = 0;
    const double *hourly = energy_hourly_it_j(er.account, &n);
    double *temp = malloc(n * sizeof *temp), sum = 0, facility = 0;
    CHECK(fac_temperature_profile(&er.cfg.climate, er.cfg.start_hour, n, temp, &err) == 0);
    for (size_t h = 0; h < n; h++) {
        double length = fmin(3600.0, r.time_to_train_s - 3600.0 * (double)h);
        sum += hourly[h];
        facility += hourly[h] *
                    fac_pue(&er.cfg.design, temp[h], hourly[h] / length / er.cfg.design_it_w);
    }
    free(temp);
    CHECK_REL(sum, e->it_energy_j, 1e-12);
    CHECK_REL(facility, e->facility_energy_j, 1e-12);
    CHECK(e->pue >= e->pue_min && e->pue <= e->pue_max && e->pue_min >= 1);
    double kwh = e->facility_energy_j / 3.6e6;
    CHECK_REL(e->cost, kwh * s.site.info.price_per_kwh, 1e-12);
    CHECK_REL(e->co2_kg, kwh * s.site.info.emission_kg_per_kwh * (1 - green), 1e-12);
    printf("%-10s green %3.0f%%: IT %.4g MWh, facility %.4g MWh, PUE %.4f (%.4f..%.4f), "
           "%.4g CNY, %.4g t CO2\n", site, green * 100, e->it_energy_j / 3.6e9,
           e->facility_energy_j / 3.6e9, e->pue, e->pue_min, e->pue_max, e->cost,
           e->co2_kg / 1000);
    /* capital cost: counts x unit prices; 512 GPUs = 64 servers, a NIC per GPU */
    energy_capex k;
    energy_run_capex(&er, &s.costs, r.time_to_train_s, &k);
    CHECK_INT_EQ(er.n_servers, 64);
    CHECK_INT_EQ(er.n_nics, 512);
    CHECK(er.n_switches > 0 && er.n_cables >= 512 && er.n_transceivers > 0);
    CHECK_REL(k.capex,
              64 * 2.5e6 + (double)er.n_switches * 200e3 + 512 * 8e3 +
                  (double)er.n_transceivers * 6e3 + (double)er.n_cables * 1e3,
              1e-12);
    CHECK_REL(k.amortised, k.capex * r.time_to_train_s / (5 * 365 * 86400.0), 1e-12); /* year = 365 d */
    CHECK_REL(k.build, k.amortised + e->cost, 1e-12);
    CHECK_REL(k.rent, 512 * r.time_to_train_s / 3600 * 15, 1e-12);
    *out = *e;
    energy_run_free(&er);
    scn_scenario_free(&s);
    return 0;
}

int main(void)
{
    energy_result cold, warm, green;
    CHECK(run_at("zhongwei", 0, &cold) == 0);
    CHECK(run_at("shaoguan", 0, &warm) == 0);
    CHECK(run_at("zhongwei", 0.5, &green) == 0);
    /* the same job and seed: the same IT energy, more facility energy where warmer */
    CHECK_REL(cold.it_energy_j, warm.it_energy_j, 1e-12);
    CHECK(warm.facility_energy_j > cold.facility_energy_j);
    CHECK_REL(green.co2_kg, cold.co2_kg / 2, 1e-12);
    return check_report();
}
