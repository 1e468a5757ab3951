/* test_site.c - the ten East-Data-West-Computing clusters from the built-in
 * site catalog (scenarios/catalog/sites.xml, from shared/reference/
 * sites.md): every one yields twelve monthly temperatures, an emission
 * factor and a price; derived months keep the catalog's annual mean; with
 * the default cooling (air with economiser) the annual PUE at full load is
 * within each cluster's policy target (sites.md §3.1), and colder sites get
 * lower PUE; the annual relative humidity where the catalog has one. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "facility.h"
#include "site.h"

static const char *const hubs[] = {"zhangjiakou", "yrd",      "wuhu",    "shaoguan", "tianfu",
                                   "chongqing",   "horinger", "guian",   "qingyang", "zhongwei"};

static double annual_pue(const site_info *s, double *mean_t)
{
    enum { H = FAC_HOURS_PER_YEAR };
    static double temp[H], power[H];
    sim_error err;
    sim_error_clear(&err);
    CHECK(fac_temperature_profile(&s->climate, 0, H, temp, &err) == 0);
    *mean_t = 0;
    for (int h = 0; h < H; h++) {
        power[h] = 1e6;
        *mean_t += temp[h] / H;
    }
    fac_design d = fac_design_default(FAC_COOLING_AIR_ECONOMISER);
    fac_totals t;
    CHECK(fac_energy(&d, 1e6, power, temp, H, NULL, &t, &err) == 0);
    return t.pue;
}

int main(void)
{
    double pue[10], mean_t[10];
    for (int i = 0; i < 10; i++) {
        site_info s;
        char why[600];
        CHECK(site_lookup(hubs[i], &s, why, sizeof why) == 0);
        CHECK(s.emission_kg_per_kwh > 0.1 && s.emission_kg_per_kwh < 1.0);
        CHECK(s.price_per_kwh > 0.2 && s.price_per_kwh < 1.0);
        CHECK(s.pue_target >= 1.2 && s.pue_target <= 1.25); /* sites.md §3.1 */
        for (int m = 0; m < 12; m++)
            CHECK(isfinite(s.climate.monthly_mean_c[m]));
        pue[i] = annual_pue(&s, &mean_t[i]);
        printf("%-12s %5.1f degC  PUE %.3f (target %.2f)  %.4f kgCO2/kWh (%s)  %.3f CNY/kWh%s%s\n",
               hubs[i], mean_t[i], pue[i], s.pue_target, s.emission_kg_per_kwh, s.emission_basis,
               s.price_per_kwh, s.defaults[0] ? "  defaults: " : "", s.defaults);
        CHECK(pue[i] <= s.pue_target);
    }
    /* derived months keep the annual mean: Qingyang 9.2 degC with January -4.2 and July 21.4 */
    site_info q;
    char why[600];
    CHECK(site_lookup("qingyang", &q, why, sizeof why) == 0);
    double sum = 0;
    for (int m = 0; m < 12; m++)
        sum += q.climate.monthly_mean_c[m] / 12;
    CHECK_NEAR(sum, 9.2, 1e-12);
    CHECK_NEAR(q.climate.monthly_mean_c[6] - q.climate.monthly_mean_c[0], 21.4 + 4.2, 1e-12);
    CHECK(strstr(q.climate_basis, "derived") != NULL);
    /* Zhongwei has the Xingren 1991-2020 normals: January -8.4 */
    site_info z;
    CHECK(site_lookup("zhongwei", &z, why, sizeof why) == 0);
    CHECK_NEAR(z.climate.monthly_mean_c[0], -8.4, 1e-12);
    /* humidity where sites.md has it: Ningxia 57 % (V), Chongqing 70-80 %
     * (the middle), Gui'an 76.9 %; Zhangjiakou none (0: not known) */
    CHECK_NEAR(z.climate.rh_annual, 0.57, 1e-12);
    CHECK(strstr(z.climate_basis, "RH 57 %") != NULL);
    site_info ck, gu, zj;
    CHECK(site_lookup("chongqing", &ck, why, sizeof why) == 0);
    CHECK(site_lookup("guian", &gu, why, sizeof why) == 0);
    CHECK(site_lookup("zhangjiakou", &zj, why, sizeof why) == 0);
    CHECK_NEAR(ck.climate.rh_annual, 0.75, 1e-12);
    CHECK_NEAR(gu.climate.rh_annual, 0.769, 1e-12);
    CHECK_NEAR(zj.climate.rh_annual, 0, 0);
    /* colder sites get lower PUE: rank correlation over the ten is positive, and
     * the coldest site's PUE is below the warmest's */
    int coldest = 0, warmest = 0;
    for (int i = 1; i < 10; i++) {
        coldest = mean_t[i] < mean_t[coldest] ? i : coldest;
        warmest = mean_t[i] > mean_t[warmest] ? i : warmest;
    }
    CHECK(pue[coldest] < pue[warmest]);
    int concordant = 0, discordant = 0;
    for (int i = 0; i < 10; i++)
        for (int j = i + 1; j < 10; j++) {
            double a = (mean_t[i] - mean_t[j]) * (pue[i] - pue[j]);
            concordant += a > 0;
            discordant += a < 0;
        }
    printf("temperature vs PUE: %d concordant, %d discordant pairs\n", concordant, discordant);
    CHECK(concordant > 3 * discordant);
    /* an unknown site lists the known ones */
    CHECK(site_lookup("atlantis", &z, why, sizeof why) != 0);
    CHECK(strstr(why, "zhongwei") != NULL);
    return check_report();
}
