/* test_cluster_energy.c - power, energy, cost and CO2 of a cluster run
 * (models/cluster_series.h, sim/app/clusterenergy.c) against closed forms:
 * one job of n GPUs for d seconds on an otherwise idle cluster draws
 *   E_IT = (n P_busy + (N - n) P_idle + m H_busy + (M - m) H_idle) d
 * (m the nodes it spans, P and H from the power tier's defaults, no fabric)
 * to 1e-12; the energy is the integral of the series' IT power; at a site
 * the facility energy is the integral of the series' facility power, the
 * cost the sum over the hours of facility kWh x price and CO2 kWh x factor
 * x (1 - green share); without a site no PUE is applied (no facility
 * energy, no cost); more jobs (FIFO, a longer prefix of the same stream)
 * never give less energy; the bins integrate to the busy GPU-seconds and
 * the queue's area; the CDF points hold the P50/P90/P99 and the maximum;
 * the step series' busy nodes bracket its busy GPUs; the bin width is the
 * narrowest whole number of hours giving at most 100 bins.
 * tests/scenarios/cluster-energy{,-site}.xml: 64 H100, nodes of 8.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "cluster_series.h"
#include "clusterenergy.h"
#include "scenario.h"

static int load(const char *name, scn_scenario *s)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tests/scenarios/%s", DCSIM_SOURCE_DIR, name);
    sim_error err;
    sim_error_clear(&err);
    int rc = scn_load_flags(path, NULL, 0, SCN_LOAD_CLUSTER, s, &err);
    CHECK_INT_EQ(rc, 0);
    if (rc)
        printf("%s\n", err.msg);
    return rc;
}

/* the series' integrals: IT and facility energy, J */
static void row_integrals(const cluster_energy *ce, double end_s, double *it_j, double *fac_j)
{
    *it_j = *fac_j = 0;
    for (uint32_t i = 0; i < ce->n_rows; i++) {
        double hi = i + 1 < ce->n_rows ? ce->rows[i + 1].t_s : end_s;
        *it_j += ce->rows[i].it_w * (hi - ce->rows[i].t_s);
        *fac_j += ce->rows[i].facility_w * (hi - ce->rows[i].t_s);
    }
}

/* one job of n GPUs submitted at submit_s for d_s: the closed form */
static void one_job(scn_scenario *s, uint32_t n, double submit_s, double d_s, int has_site)
{
    cluster_job_spec job = {submit_s, n, d_s, 0};
    cluster_config c = s->cluster_jobs;
    c.jobs = &job;
    c.n_jobs = 1;
    scn_scenario t = *s;
    t.cluster_jobs = c;
    cluster_result r;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(cluster_simulate(&c, &r, &err), 0);
    cluster_energy ce;
    CHECK_INT_EQ(cluster_energy_at_site(&t, &r, &ce, &err), 0);
    pwr_config p;
    pwr_config_default(&p);
    double f = 0.8, tdp = s->gpu.tdp_w;
    double busy = tdp * (f * p.gpu_compute_tdp_frac + (1 - f) * p.gpu_comm_tdp_frac);
    double idle = tdp * p.gpu_idle_tdp_frac;
    double N = 64, M = 8, m = ceil(n / 8.0);
    double idle_w = N * idle + M * p.node_idle_w;
    double run_w = n * busy + (N - n) * idle + m * p.node_busy_w + (M - m) * p.node_idle_w;
    double expect = idle_w * submit_s + run_w * d_s;
    printf("one job: %u GPUs at %g s for %g s: IT %.9g J (closed form %.9g), site %d\n", n,
           submit_s, d_s, ce.it_energy_j, expect, has_site);
    CHECK_REL(r.end_s, submit_s + d_s, 1e-15);
    CHECK_REL(ce.power.gpu_busy_w, busy, 1e-15);
    CHECK_REL(ce.power.gpu_idle_w, idle, 1e-12);
    CHECK_NEAR(ce.power.fixed_w, 0, 0); /* no fabric, no storage */
    CHECK_REL(ce.it_energy_j, expect, 1e-12);
    double it_j, fac_j;
    row_integrals(&ce, r.end_s, &it_j, &fac_j);
    CHECK_REL(it_j, expect, 1e-12);
    CHECK_INT_EQ(ce.has_site, has_site);
    if (has_site) {
        const energy_result *e = &ce.e;
        CHECK_REL(e->it_energy_j, expect, 1e-12);
        CHECK_REL(fac_j, e->facility_energy_j, 1e-12);
        CHECK(e->pue > 1 && e->pue < 2);
        double kwh = e->facility_energy_j / 3.6e6;
        CHECK_REL(e->cost, kwh * s->site.info.price_per_kwh, 1e-12);
        CHECK_REL(e->co2_kg, kwh * s->site.info.emission_kg_per_kwh * (1 - s->site.green_share),
                  1e-12);
        CHECK_REL(ce.energy_cost_per_gpu_h, e->cost / (n * d_s / 3600), 1e-12);
        /* the cost hour by hour: each hour's facility energy at the price */
        double cost = 0;
        for (uint32_t i = 0; i < ce.n_rows; i++) {
            double hi = i + 1 < ce.n_rows ? ce.rows[i + 1].t_s : r.end_s;
            CHECK(floor(ce.rows[i].t_s / 3600) == floor(nextafter(hi, 0) / 3600)); /* one hour */
            cost += ce.rows[i].facility_w * (hi - ce.rows[i].t_s) / 3.6e6 *
                    s->site.info.price_per_kwh;
        }
        CHECK_REL(cost, e->cost, 1e-12);
        CHECK_INT_EQ(ce.has_rent, 1);
        CHECK_REL(ce.rent_per_gpu_h, N * r.end_s * 15 / (n * d_s), 1e-12);
    } else {
        CHECK_NEAR(fac_j, 0, 0); /* no site: no PUE applied, no facility power */
        CHECK_NEAR(ce.e.facility_energy_j, 0, 0);
        CHECK_NEAR(ce.e.cost, 0, 0);
        CHECK_INT_EQ(ce.n_rows, submit_s > 0 ? 2 : 1); /* no split at the hours */
    }
    cluster_energy_free(&ce);
    cluster_result_free(&r);
}

/* a prefix of k jobs of the stream */
static double stream_energy(const scn_scenario *s, uint32_t k, const char *placer)
{
    scn_scenario t = *s;
    t.cluster_jobs.stream.max_jobs = k;
    t.cluster_jobs.placer = cluster_placer_find(placer);
    cluster_result r;
    cluster_energy ce;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(cluster_simulate(&t.cluster_jobs, &r, &err), 0);
    CHECK_INT_EQ(cluster_energy_at_site(&t, &r, &ce, &err), 0);
    double e = ce.it_energy_j;
    cluster_energy_free(&ce);
    cluster_result_free(&r);
    return e;
}

static void check_series(const scn_scenario *s)
{
    cluster_result r;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(cluster_simulate(&s->cluster_jobs, &r, &err), 0);
    CHECK(r.n_jobs > 50);
    CHECK(r.n_steps > r.n_jobs);
    CHECK_NEAR(r.steps[0].t_s, 0, 0);
    double busy = 0, queue = 0;
    for (uint32_t i = 0; i < r.n_steps; i++) {
        const cluster_step *st = &r.steps[i];
        double dt = cluster_step_end_s(&r, i) - st->t_s;
        CHECK(dt >= 0);
        CHECK(st->busy_nodes <= st->busy_gpus && st->busy_gpus <= 8 * st->busy_nodes);
        busy += st->busy_gpus * dt;
        queue += st->queue * dt;
    }
    CHECK_INT_EQ(r.steps[r.n_steps - 1].busy_gpus, 0);
    CHECK_INT_EQ(r.steps[r.n_steps - 1].busy_nodes, 0);
    CHECK_REL(busy, r.busy_gpu_s, 1e-12);
    CHECK_REL(queue, r.queue_mean * r.end_s, 1e-12);
    double w = cluster_bin_width_s(r.end_s);
    uint32_t n = cluster_bin_count(r.end_s, w);
    CHECK(n <= CLUSTER_MAX_BINS && n * w >= r.end_s && (n - 1) * w < r.end_s);
    CHECK_NEAR(fmod(w, 3600), 0, 0);
    double *b = malloc(n * sizeof *b), *q = malloc(n * sizeof *q);
    cluster_bin_series(&r, w, n, b, q);
    double bsum = 0, qsum = 0;
    for (uint32_t k = 0; k < n; k++) {
        double len = fmin(r.end_s, w * (k + 1)) - w * k;
        CHECK(b[k] >= 0 && b[k] <= 64);
        bsum += b[k] * len;
        qsum += q[k] * len;
    }
    CHECK_REL(bsum, r.busy_gpu_s, 1e-12);
    CHECK_REL(qsum, r.queue_mean * r.end_s, 1e-12);
    free(b);
    free(q);
    double wait[20], slow[20];
    CHECK_INT_EQ(cluster_cdf_points(&r, 20, wait, slow, &err), 0);
    for (int k = 1; k < 20; k++)
        CHECK(wait[k] >= wait[k - 1] && slow[k] >= slow[k - 1]);
    CHECK_NEAR(wait[9], r.wait_s.q[0], 0);  /* 50 % */
    CHECK_NEAR(wait[17], r.wait_s.q[1], 0); /* 90 % */
    CHECK_NEAR(slow[9], r.slowdown.q[0], 0);
    CHECK_NEAR(wait[19], r.wait_s.max, 0);
    CHECK_NEAR(slow[19], r.slowdown.max, 0);
    cluster_result_free(&r);
}

int main(void)
{
    scn_scenario s, site;
    if (load("cluster-energy.xml", &s) || load("cluster-energy-site.xml", &site))
        return check_report();
    CHECK_NEAR(s.cluster_compute_frac, 0.8, 1e-15);
    CHECK_INT_EQ(s.site.given, 0);
    CHECK_INT_EQ(site.site.given, 1);
    /* whole nodes, a part node, the whole cluster; at 0 and after an idle wait */
    one_job(&s, 8, 0, 7200, 0);
    one_job(&s, 12, 0, 5000, 0);
    one_job(&s, 64, 1800, 3 * 86400 + 17, 0);
    one_job(&site, 8, 0, 7200, 1);
    one_job(&site, 12, 1800, 5000.5, 1);
    one_job(&site, 64, 4000, 3 * 86400 + 17, 1);
    /* the same run with and without a site: the same IT energy */
    CHECK_REL(stream_energy(&s, 40, "first-fit"), stream_energy(&site, 40, "first-fit"), 1e-12);
    /* more jobs never less energy (FIFO: a later job changes no earlier start) */
    const char *const placers[] = {"first-fit", "topology"};
    for (int pl = 0; pl < 2; pl++) {
        double last = 0;
        for (uint32_t k = 1; k <= 60; k += 3) {
            double e = stream_energy(&s, k, placers[pl]);
            CHECK(e >= last);
            last = e;
        }
    }
    check_series(&s);
    /* the bin width: whole hours, at most 100 bins, the last one reaching T */
    const double ends[] = {1, 3599, 3600, 3601, 360000, 360000 * 7, 360000 * 7 + 1e-9,
                           2.0e6 / 3, 31 * 86400.0, 3.2e8};
    for (size_t i = 0; i < sizeof ends / sizeof *ends; i++) {
        double w = cluster_bin_width_s(ends[i]);
        uint32_t n = cluster_bin_count(ends[i], w);
        CHECK(fmod(w, 3600) == 0 && w >= 3600);
        CHECK(n >= 1 && n <= CLUSTER_MAX_BINS && n * w >= ends[i] && (n - 1) * w < ends[i]);
        CHECK(w == 3600 || ceil(ends[i] / (w - 3600)) > CLUSTER_MAX_BINS); /* the narrowest */
    }
    scn_scenario_free(&s);
    scn_scenario_free(&site);
    return check_report();
}
