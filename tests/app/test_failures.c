/* test_failures.c - the Llama 3 failure inventory (scenarios/catalog/
 * failures.xml, from calibration.md 2c: Llama 3 paper Table 5, 419
 * unexpected interruptions in 54 days on 16,384 GPUs) through the scenario
 * loader and the campaign: the default rates reproduce the table's count
 * and its category shares (counts, not the printed percentages), with the
 * network count scaled to the example's own fabric. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "campaign.h"
#include "check.h"
#include "run.h"
#include "scenario.h"

#define DAY 86400.0

static const struct {
    const char *category;
    double count; /* of the 419, calibration.md 2c */
} table5[] = {
    {"GPU", 148 + 72 + 19 + 17 + 6 + 6}, /* 268 */
    {"Dependency", 54 + 2},
    {"Network", 35},
    {"Unplanned Maintenance", 32},
    {"Host", 7 + 3 + 3 + 2 + 2 + 2 + 2},
    {"Unknown", 7},
};

int main(void)
{
    enum { N = 60 };
    scn_scenario s;
    sim_error err;
    sim_error_clear(&err);
    CHECK(scn_load(DCSIM_SOURCE_DIR "/scenarios/examples/llama3-failures.xml", NULL, 0, &s,
                   &err) == 0);
    CHECK_INT_EQ(s.campaign.n_causes, 18);
    CHECK(s.campaign.gpu_failure_rate_per_s == 0);
    /* the derived rates: Faulty GPU 148 / (16,384 GPUs x 54 d), SSD 3 / (2,048 nodes x 54 d) */
    CHECK_REL(s.campaign.causes[0].rate_per_s, 148 / (16384 * 54 * DAY), 1e-12);
    CHECK_REL(s.campaign.causes[11].rate_per_s, 3 / (2048 * 54 * DAY), 1e-12);
    /* The example runs on Meta's RoCE Clos, so "Network Switch/Cable" spreads
     * over that fabric's cables, not the published run's 35,109 (failures.xml,
     * D): its Table 5 count scales by cables / 35,109. */
    double network_scale = 0;
    for (unsigned c = 0; c < s.campaign.n_causes; c++)
        if (!strcmp(s.campaign.causes[c].name, "Network Switch/Cable")) {
            CHECK_INT_EQ(s.campaign.causes[c].unit, CAMPAIGN_UNIT_CABLE);
            CHECK_INT_EQ(s.campaign.causes[c].parts, s.fabric_cables[0] + s.fabric_cables[1] +
                                                         s.fabric_cables[2]);
            network_scale = s.campaign.causes[c].parts / 35109.0;
        }
    CHECK(network_scale > 1); /* whole pods of host ports, 2:1 under-subscribed leaves */
    double expect_total = 419 - 35 + 35 * network_scale;
    /* the run layer's plan: the step tier gives the iteration the campaign needs */
    run_plan plan;
    CHECK(run_plan_prepare(&s, 1, 0, &plan, &err) == 0);
    campaign_result *r = malloc(N * sizeof *r);
    CHECK(campaign_run(&plan.campaign, NULL, NULL, NULL, &r[0], &err) == 0);
    CHECK(campaign_run_replicas(&plan.campaign, N, r, NULL, NULL, &err) == 0);
    run_plan_free(&plan);
    /* per 54 days of wall time (failures happen while computing, writing and restarting) */
    double total[N], cat[6][N];
    for (int i = 0; i < N; i++) {
        double scale = 54 * DAY / r[i].time_to_train_s;
        total[i] = (double)r[i].failures * scale;
        for (int k = 0; k < 6; k++) {
            cat[k][i] = 0;
            for (unsigned c = 0; c < s.campaign.n_causes; c++)
                if (!strcmp(s.campaign.causes[c].category, table5[k].category))
                    cat[k][i] += (double)r[i].failures_by_cause[c + 1] * scale;
        }
    }
    campaign_stat t = campaign_stat_of(total, N);
    printf("unexpected interruptions per 54 days: %.1f +- %.1f (table: 419, on this fabric "
           "%.1f)\n", t.mean, t.ci95, expect_total);
    CHECK(fabs(t.mean - expect_total) <= t.ci95);
    /* six categories at once: a 99.9 % interval each (about 3.4 / 2.0 x the
     * 95 % one at 59 degrees of freedom) */
    for (int k = 0; k < 6; k++) {
        campaign_stat c = campaign_stat_of(cat[k], N);
        double want = table5[k].count * (!strcmp(table5[k].category, "Network") ? network_scale : 1);
        printf("  %-22s %6.1f +- %5.1f (table: %3.0f, expected %.1f)\n", table5[k].category,
               c.mean, c.ci95 * 3.46 / 2.0, table5[k].count, want);
        CHECK(fabs(c.mean - want) <= c.ci95 * 3.46 / 2.0);
    }
    free(r);
    scn_scenario_free(&s);

    /* With a fabric, "Network Switch/Cable" spreads over cables: 35 over the
     * published run's 35,109 (failures.xml, D), times the fabric's own. The
     * SuperPOD example's rail-optimised 3-tier fat-tree has 49,152 fabric
     * cables (16,384 per tier: dcsim topo), so 40 % more network failures. */
    const char *set[] = {"reliability/@inventory=llama3-54d"};
    CHECK(scn_load(DCSIM_SOURCE_DIR "/scenarios/examples/superpod-h100.xml", set, 1, &s, &err) ==
          0);
    CHECK_INT_EQ(s.fabric_cables[0] + s.fabric_cables[1] + s.fabric_cables[2], 49152);
    int found = 0;
    for (unsigned c = 0; c < s.campaign.n_causes; c++) {
        const campaign_cause *x = &s.campaign.causes[c];
        if (strcmp(x->name, "Network Switch/Cable"))
            continue;
        found = 1;
        CHECK_INT_EQ(x->unit, CAMPAIGN_UNIT_CABLE);
        CHECK_INT_EQ(x->parts, 49152);
        CHECK_REL(x->rate_per_s, 35 / (35109 * 54 * DAY), 1e-12);
        printf("Network Switch/Cable on the SuperPOD fabric: %.1f per 54 days (Llama 3: 35)\n",
               (double)x->parts * x->rate_per_s * 54 * DAY);
    }
    CHECK(found);
    scn_scenario_free(&s);
    return check_report();
}
