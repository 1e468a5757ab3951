/* test_serve_cost.c - cost, energy and CO2 per million output tokens of a
 * serving run at a site (sim/app/servecost.c) against the closed form:
 * IT power = nodes x (g TDP (f k_c + (1 - f) k_m) + H_busy) at the
 * replicas' busy fraction f (models/power.h, no fabric), IT energy = that x
 * the run's end, cost = facility kWh x price, CO2 = facility kWh x factor
 * x (1 - green share), each over the output tokens / 1e6; rent = GPUs x
 * hours x rent per GPU-hour. tests/scenarios/serving-site.xml: 16 requests
 * of 64 output tokens on 8 H100. */
#include <math.h>
#include <stdio.h>

#include "check.h"
#include "hardware.h"
#include "scenario.h"
#include "servecost.h"

static void check_fleet(const scn_scenario *s, const serve_config *c, const serve_result *r)
{
    serve_cost k;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_cost_at_site(s, c, r, &k, &err), 0);
    pwr_config p;
    pwr_config_default(&p);
    double f = r->busy_fraction, gpus = (double)c->replicas * c->tp;
    double nodes = ceil(gpus / 8), per_gpu = s->gpu.tdp_w * (f * p.gpu_compute_tdp_frac +
                                                             (1 - f) * p.gpu_comm_tdp_frac);
    double it_w = nodes * (8 * per_gpu + p.node_busy_w), mtok = r->output_tokens / 1e6;
    printf("serve cost: %g GPUs busy %.4f, %g s: IT %.6g W, PUE %.4g, %.6g kWh, %.6g CNY, "
           "%.6g kg CO2 per Mtok\n", gpus, f, r->end_s, k.it_power_w, k.e.pue, k.kwh_per_mtok,
           k.cost_per_mtok, k.co2_kg_per_mtok);
    CHECK(f > 0 && f <= 1);
    CHECK_REL(k.it_power_w, it_w, 1e-12);
    CHECK_REL(k.e.it_energy_j, it_w * r->end_s, 1e-9);
    CHECK_REL(k.gpu_hours, gpus * r->end_s / 3600, 1e-12);
    double kwh = k.e.facility_energy_j / 3.6e6;
    CHECK(k.e.pue >= 1 && k.e.pue < 2);
    CHECK_REL(k.e.facility_energy_j, k.e.pue * k.e.it_energy_j, 1e-12);
    CHECK_REL(k.e.cost, kwh * s->site.info.price_per_kwh, 1e-12);
    CHECK_REL(k.e.co2_kg, kwh * s->site.info.emission_kg_per_kwh * (1 - s->site.green_share),
              1e-12);
    CHECK_REL(k.mtok, 16 * 64 / 1e6, 1e-15);
    CHECK_REL(k.kwh_per_mtok, kwh / mtok, 1e-12);
    CHECK_REL(k.cost_per_mtok, k.e.cost / mtok, 1e-12);
    CHECK_REL(k.co2_kg_per_mtok, k.e.co2_kg / mtok, 1e-12);
    CHECK_INT_EQ(k.has_rent, 1);
    CHECK_REL(k.rent_per_mtok, gpus * r->end_s / 3600 * 15 / mtok, 1e-12);
    CHECK(k.build_per_mtok > k.cost_per_mtok); /* amortised servers on top of the energy */
}

int main(void)
{
    scn_scenario s;
    sim_error err;
    sim_error_clear(&err);
    int rc = scn_load_flags(DCSIM_SOURCE_DIR "/tests/scenarios/serving-site.xml", NULL, 0,
                            SCN_LOAD_SERVING, &s, &err);
    CHECK_INT_EQ(rc, 0);
    if (rc) {
        printf("%s\n", err.msg);
        return check_report();
    }
    serve_config c = s.serving;
    framework_config fw = {.attention_kernel = ATTN_FLASH2, .cuda_graphs = 1};
    CHECK_INT_EQ(hw_compute_device_fw(&s.gpu, c.math_precision, &fw, &c.dev, &err), 0);
    serve_result r;
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    CHECK_INT_EQ(r.finished, 16);
    check_fleet(&s, &c, &r);
    /* a fleet of one replica (as --size may find): 4 GPUs on one node */
    c.replicas = 1;
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    check_fleet(&s, &c, &r);
    /* no tokens, no cost per token */
    serve_result none = r;
    none.output_tokens = 0;
    serve_cost k;
    CHECK(serve_cost_at_site(&s, &c, &none, &k, &err) == SIM_ERR_INPUT);
    scn_scenario_free(&s);
    return check_report();
}
