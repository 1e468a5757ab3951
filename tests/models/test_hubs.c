/* test_hubs.c - placement across hubs (models/hubs.h): one hub with all the
 * demand and no data reproduces cluster_simulate of the same jobs (digest,
 * starts); jobs, GPU-seconds and TB are conserved (sum of hubs = total =
 * the demand's); serving jobs under latency-bounded never sit beyond their
 * bound while cheapest puts them there, counted exactly; the fluid backlog
 * passes over a hub whose estimated wait exceeds max-wait and falls back to
 * the least wait (hand-worked); the backbone's FIFO (closed form);
 * follow-the-renewables defers to the least hour of a synthetic profile
 * (closed form) and shifts nothing without one; determinism; the CSV
 * readers' errors name their line; the water limit's hourly table (closed
 * form, the queue's spill into the next hour); a slower hub's time scale;
 * the gang-aware backlog closer to the simulated queue of large jobs;
 * interference in the keys flips a placement the isolated key makes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hubs.h"

static cluster_config tmpl(void)
{
    cluster_config c;
    memset(&c, 0, sizeof c);
    c.gpus = c.leaf_gpus = c.su_gpus = 64;
    c.node_gpus = 8;
    c.sched = cluster_sched_find("easy-backfill");
    c.placer = cluster_placer_find("first-fit");
    c.seed = 1;
    return c;
}

/* three hubs: 0 near origin 0, cheap-ish; 1 far from both, cheapest and
 * cleanest; 2 near origin 1, dear */
static hubs_config three(const char *policy, const hubs_job_spec *jobs, uint32_t n)
{
    hubs_config c;
    memset(&c, 0, sizeof c);
    c.n_hubs = 3;
    c.n_origins = 2;
    snprintf(c.origin[0], 32, "east");
    snprintf(c.origin[1], 32, "south");
    const double rtt[3][2] = {{0.002, 0.020}, {0.025, 0.026}, {0.018, 0.003}};
    const double price[3] = {0.5, 0.3, 0.7}, ef[3] = {0.6, 0.2, 0.5}, wue[3] = {1, 0.5, 2};
    for (unsigned h = 0; h < 3; h++) {
        hubs_hub *x = &c.hubs[h];
        snprintf(x->name, sizeof x->name, "h%u", h);
        x->gpus = 64;
        x->rtt_s[0] = rtt[h][0];
        x->rtt_s[1] = rtt[h][1];
        x->price_per_kwh = price[h];
        x->pue = 1.2;
        x->emission_kg_per_kwh = ef[h];
        x->wue_l_per_kwh = wue[h];
    }
    c.policy = hubs_policy_find(policy);
    c.fixed_hub = 0;
    c.max_wait_s = 6 * 3600;
    c.bandwidth_bps = 100e9;
    c.cost_per_tb = 10;
    c.jobs = jobs;
    c.n_jobs = n;
    return c;
}

/* a deterministic mixed demand: n jobs, every 10 min, sizes 8-64 */
static hubs_job_spec *demand(uint32_t n, int with_data)
{
    hubs_job_spec *v = calloc(n, sizeof *v);
    for (uint32_t i = 0; i < n; i++) {
        v[i].arrival_s = 600.0 * i;
        v[i].gpus = 8u << (i % 4);
        v[i].duration_s = 1800 + 600.0 * (i % 7);
        v[i].origin = i % 2;
        v[i].kind = i % 3 == 0 ? HUBS_SERVING : HUBS_TRAINING;
        v[i].rtt_bound_s = v[i].kind == HUBS_SERVING ? 0.010 : 0;
        v[i].dataset_tb = with_data ? 0.5 * (i % 3) : 0;
        v[i].result_tb = with_data ? 0.1 * (i % 2) : 0;
        v[i].slack_s = v[i].kind == HUBS_TRAINING ? 4 * 3600 : 0;
    }
    return v;
}

static void run(const hubs_config *c, hubs_result *r)
{
    sim_error err;
    sim_error_clear(&err);
    cluster_config t = tmpl();
    CHECK(hubs_place(c, r, &err) == 0);
    CHECK(hubs_simulate(c, &t, r, NULL, &err) == 0);
}

static void test_one_hub_is_the_cluster(void)
{
    hubs_job_spec *v = demand(200, 0);
    hubs_config c = three("fixed", v, 200);
    c.fixed_hub = 1;
    hubs_result r;
    run(&c, &r);
    cluster_job_spec *spec = calloc(200, sizeof *spec);
    for (uint32_t i = 0; i < 200; i++)
        spec[i] = (cluster_job_spec){v[i].arrival_s, v[i].gpus, v[i].duration_s, 0};
    cluster_config cc = tmpl();
    cc.jobs = spec;
    cc.n_jobs = 200;
    cluster_result cr;
    sim_error err;
    sim_error_clear(&err);
    CHECK(cluster_simulate(&cc, &cr, &err) == 0);
    CHECK_INT_EQ(r.hub[1].jobs, 200);
    CHECK(r.hub[1].digest == cr.digest);
    CHECK(r.hub[1].wait_s.q[1] == cr.wait_s.q[1] && r.hub[1].wait_s.mean == cr.wait_s.mean);
    int same = 1;
    for (uint32_t i = 0; i < 200; i++)
        same = same && r.jobs[i].start_s == cr.jobs[i].start_s && r.jobs[i].hub == 1 &&
               r.jobs[i].submit_s == v[i].arrival_s;
    CHECK(same);
    cluster_result_free(&cr);
    free(spec);
    hubs_result_free(&r);
    free(v);
}

static void test_conservation(void)
{
    static const char *const policies[] = {"nearest", "cheapest", "lowest-carbon", "lowest-water",
                                           "latency-bounded", "follow-the-renewables"};
    hubs_job_spec *v = demand(500, 1);
    double gpu_s = 0, tb = 0;
    for (uint32_t i = 0; i < 500; i++) {
        gpu_s += v[i].gpus * v[i].duration_s;
        tb += v[i].dataset_tb + v[i].result_tb;
    }
    for (size_t p = 0; p < sizeof policies / sizeof *policies; p++) {
        hubs_config c = three(policies[p], v, 500);
        hubs_result r;
        run(&c, &r);
        uint32_t jobs = 0;
        double g = 0, t = 0;
        int order_ok = 1;
        for (unsigned h = 0; h < 3; h++) {
            jobs += r.hub[h].jobs;
            g += r.hub[h].gpu_s;
            t += r.hub[h].tb_in + r.hub[h].tb_out;
        }
        for (uint32_t i = 0; i < 500; i++) {
            const hubs_job *x = &r.jobs[i];
            order_ok = order_ok && x->submit_s >= v[i].arrival_s + x->defer_s &&
                       x->start_s >= x->submit_s && x->end_s == x->start_s + v[i].duration_s &&
                       x->back_done_s >= x->end_s;
        }
        CHECK(order_ok);
        CHECK_INT_EQ(jobs, 500);
        CHECK_INT_EQ(r.total.jobs, 500);
        CHECK_REL(g, gpu_s, 1e-12);
        CHECK_REL(r.total.gpu_s, gpu_s, 1e-12);
        CHECK_REL(t, tb, 1e-12);
        CHECK_REL(r.total.tb_in + r.total.tb_out, tb, 1e-12);
        CHECK_REL(r.total.data_cost, tb * c.cost_per_tb, 1e-12);
        hubs_result_free(&r);
    }
    free(v);
}

/* recount beyond-bound serving jobs independently */
static uint32_t beyond(const hubs_config *c, const hubs_result *r)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->n_jobs; i++)
        n += c->jobs[i].kind == HUBS_SERVING &&
             c->hubs[r->jobs[i].hub].rtt_s[c->jobs[i].origin] > c->jobs[i].rtt_bound_s;
    return n;
}

static void test_latency_bound(void)
{
    hubs_job_spec *v = demand(300, 1);
    hubs_config c = three("latency-bounded", v, 300);
    c.max_wait_s = 1e9; /* no fallback: the bound decides */
    hubs_result r;
    run(&c, &r);
    CHECK_INT_EQ(beyond(&c, &r), 0);
    CHECK_INT_EQ(r.total.slo_jobs, 0);
    uint32_t train_at_1 = 0;
    for (uint32_t i = 0; i < 300; i++)
        train_at_1 += v[i].kind == HUBS_TRAINING && r.jobs[i].hub == 1;
    CHECK(train_at_1 > 0); /* training goes to the cheapest */
    hubs_result_free(&r);
    c = three("cheapest", v, 300);
    c.max_wait_s = 1e9;
    run(&c, &r);
    uint32_t b = beyond(&c, &r);
    CHECK_INT_EQ(b, 100); /* every serving job at hub 1, 25-26 ms > 10 ms */
    CHECK_INT_EQ(r.total.slo_jobs, b);
    double job_h = 0;
    for (uint32_t i = 0; i < 300; i++)
        job_h += v[i].kind == HUBS_SERVING ? v[i].duration_s / 3600 : 0;
    CHECK_REL(r.total.slo_job_h, job_h, 1e-12);
    hubs_result_free(&r);
    free(v);
}

/* hub 0 preferred (cheapest) with 8 GPUs; 8-GPU jobs of 2 h at t = 0:
 * the first to hub 0; the second sees 2 h there (> 1 h) and takes hub 1;
 * the third sees 2 h at both: the least wait, ties to hub 0 (a fallback) */
static void test_backlog(void)
{
    hubs_job_spec v[3];
    for (int i = 0; i < 3; i++)
        v[i] = (hubs_job_spec){0, 8, 7200, 0, 0, HUBS_TRAINING, 0, 0, 0, 0};
    hubs_config c = three("cheapest", v, 3);
    c.n_hubs = 2;
    c.hubs[0].gpus = c.hubs[1].gpus = 8;
    c.hubs[0].price_per_kwh = 0.1;
    c.max_wait_s = 3600;
    hubs_result r;
    sim_error err;
    sim_error_clear(&err);
    CHECK(hubs_place(&c, &r, &err) == 0);
    CHECK_INT_EQ(r.jobs[0].hub, 0);
    CHECK_INT_EQ(r.jobs[1].hub, 1);
    CHECK_INT_EQ(r.jobs[2].hub, 0);
    CHECK_INT_EQ(r.fallbacks, 1);
    CHECK_NEAR(r.jobs[2].est_wait_s, 7200, 1e-9);
    hubs_result_free(&r);
}

/* 1 GB/s links: two 1 TB datasets at t = 0 to one hub go one after the
 * other: at the hub at 1000 s + RTT and 2000 s + RTT */
static void test_backbone(void)
{
    hubs_job_spec v[2];
    for (int i = 0; i < 2; i++)
        v[i] = (hubs_job_spec){0, 8, 3600, 0, 0, HUBS_TRAINING, 1.0, 0.5, 0, 0};
    hubs_config c = three("fixed", v, 2);
    c.bandwidth_bps = 8e9;
    hubs_result r;
    run(&c, &r);
    CHECK_NEAR(r.jobs[0].submit_s, 1000 + 0.002, 1e-9);
    CHECK_NEAR(r.jobs[1].in_start_s, 1000, 1e-9);
    CHECK_NEAR(r.jobs[1].submit_s, 2000 + 0.002, 1e-9);
    /* both start on arrival (64 GPUs) and end an hour later; results back FIFO */
    CHECK_NEAR(r.jobs[0].back_done_s, r.jobs[0].end_s + 500 + 0.002, 1e-9);
    CHECK_NEAR(r.jobs[1].back_done_s, r.jobs[1].end_s + 500 + 0.002, 1e-9);
    hubs_result_free(&r);
}

static void test_renewables(void)
{
    double profile[24];
    for (int h = 0; h < 24; h++)
        profile[h] = 0.5;
    profile[3] = 0.3;
    profile[5] = 0.1;
    hubs_job_spec v[2] = {{2 * 3600 + 100, 8, 3600, 0, 0, HUBS_TRAINING, 0, 0, 0, 6 * 3600},
                          {2 * 3600 + 200, 8, 3600, 0, 1, HUBS_TRAINING, 0, 0, 0, 2 * 3600}};
    hubs_config c = three("follow-the-renewables", v, 2);
    c.n_hubs = 1;
    c.hubs[0].carbon_hourly = profile;
    c.hubs[0].n_carbon_hours = 24;
    hubs_result r;
    run(&c, &r);
    CHECK_NEAR(r.jobs[0].defer_s, 3 * 3600, 0); /* hour 5 within 6 h */
    CHECK_NEAR(r.jobs[1].defer_s, 3600, 0);     /* hour 3: hour 5 is beyond 2 h */
    CHECK_NEAR(r.jobs[0].submit_s, v[0].arrival_s + 3 * 3600, 0);
    CHECK_NEAR(r.jobs[0].start_s, r.jobs[0].submit_s, 0);
    CHECK(!r.shifts_nothing);
    CHECK_NEAR(hubs_carbon_at(&c.hubs[0], 29 * 3600 + 5), 0.1, 0); /* cyclic */
    hubs_result_free(&r);
    c.hubs[0].carbon_hourly = NULL;
    c.hubs[0].n_carbon_hours = 0;
    run(&c, &r);
    CHECK(r.shifts_nothing);
    CHECK(r.jobs[0].defer_s == 0 && r.jobs[1].defer_s == 0);
    hubs_result_free(&r);
}

static void test_determinism(void)
{
    hubs_job_spec *v = demand(400, 1);
    hubs_config c = three("lowest-carbon", v, 400);
    c.max_wait_s = 1800;
    hubs_result a, b;
    run(&c, &a);
    run(&c, &b);
    CHECK(a.total.digest == b.total.digest);
    CHECK(!memcmp(a.jobs, b.jobs, 400 * sizeof *a.jobs));
    int spread = a.hub[0].jobs && a.hub[1].jobs && a.hub[2].jobs;
    CHECK(spread); /* max-wait spreads the load off the cleanest hub */
    hubs_result_free(&a);
    hubs_result_free(&b);
    free(v);
}

static void test_csv(void)
{
    char origins[2][32] = {"beijing", "shanghai"};
    hubs_job_spec *v = NULL;
    uint32_t n = 0;
    sim_error err;
    sim_error_clear(&err);
    const char *ok = "# demand\nkind,origin,arrival_s,gpus,duration_s,dataset_tb,result_tb,"
                     "rtt_bound_ms\nserving,shanghai,0,8,3600,0,0,10\ntraining,beijing,5,16,"
                     "7200,2.5,0.25,0\n";
    CHECK(hubs_trace_parse(ok, strlen(ok), "t.csv", origins, 2, 64, &v, &n, &err) == 0);
    CHECK_INT_EQ(n, 2);
    if (n == 2) {
        CHECK(v[0].kind == HUBS_SERVING && v[0].origin == 1 && v[0].rtt_bound_s == 0.010);
        CHECK(v[1].gpus == 16 && v[1].dataset_tb == 2.5 && v[1].result_tb == 0.25);
    }
    free(v);
    const char *bad = "arrival_s,gpus,duration_s,origin,kind,dataset_tb,result_tb\n"
                      "0,8,3600,beijing,training,1,0\n0,8,3600,lhasa,training,1,0\n";
    CHECK(hubs_trace_parse(bad, strlen(bad), "t.csv", origins, 2, 64, &v, &n, &err) != 0);
    CHECK_CONTAINS(err.msg, "unknown origin 'lhasa'");
    CHECK_INT_EQ(err.line, 3);
    sim_error_clear(&err);
    const char *neg = "arrival_s,gpus,duration_s,origin,kind,dataset_tb,result_tb\n"
                      "0,8,3600,beijing,training,-1,0\n";
    CHECK(hubs_trace_parse(neg, strlen(neg), "t.csv", origins, 2, 64, &v, &n, &err) != 0);
    CHECK_CONTAINS(err.msg, "dataset_tb must not be negative");
    sim_error_clear(&err);
    const char *far = "arrival_s,gpus,duration_s,origin,kind,dataset_tb,result_tb\n"
                      "0,8,3600,beijing,training,1,0\n1e300,8,3600,beijing,training,1,0\n";
    CHECK(hubs_trace_parse(far, strlen(far), "t.csv", origins, 2, 64, &v, &n, &err) != 0);
    CHECK_CONTAINS(err.msg, "arrival_s 1e+300 is above its largest value");
    CHECK_INT_EQ(err.line, 3);
    sim_error_clear(&err);
    const char *huge = "arrival_s,gpus,duration_s,origin,kind,dataset_tb,result_tb\n"
                       "0,8,3600,beijing,training,1e300,0\n";
    CHECK(hubs_trace_parse(huge, strlen(huge), "t.csv", origins, 2, 64, &v, &n, &err) != 0);
    CHECK_CONTAINS(err.msg, "dataset_tb 1e+300 is above");
    double *p = NULL;
    size_t hours = 0;
    sim_error_clear(&err);
    const char *prof = "hour,kg_per_kwh\n0,0.5\n1,0.25\n";
    CHECK(hubs_carbon_parse(prof, strlen(prof), "p.csv", &p, &hours, &err) == 0);
    CHECK(hours == 2 && p[1] == 0.25);
    free(p);
    const char *gap = "hour,kg_per_kwh\n0,0.5\n2,0.25\n";
    CHECK(hubs_carbon_parse(gap, strlen(gap), "p.csv", &p, &hours, &err) != 0);
    CHECK_INT_EQ(err.line, 3);
}

/* a hub of 8 GPUs with a hourly water table of two levels, 1 l an idle
 * hour and 9 l a full one, every hour: 8 GPUs x 2 h at t = 0 rise hours 0
 * and 1 by 8 l each; 4 GPUs x 1 h (wait 2 h) hour 2 by 4 l; 8 GPUs x 1 h
 * (wait 2.5 h) half an hour at 8 GPUs into hour 2 (room for 4) and half
 * into hour 3: 4 + 4 l. The fullest year: 8,760 idle + 28 l. With the limit
 * 0.1 l short of that the third job passes hub 0 over for hub 1 */
static void test_water_table(void)
{
    hubs_job_spec v[3] = {{0, 8, 7200, 0, 0, HUBS_TRAINING, 0, 0, 0, 0},
                          {0, 4, 3600, 0, 0, HUBS_TRAINING, 0, 0, 0, 0},
                          {0, 8, 3600, 0, 0, HUBS_TRAINING, 0, 0, 0, 0}};
    static double table[8760 * 2];
    const double levels[2] = {0, 8};
    for (size_t k = 0; k < 8760; k++)
        table[2 * k] = 1, table[2 * k + 1] = 9;
    for (int limited = 0; limited < 2; limited++) {
        hubs_config c = three("cheapest", v, 3);
        c.n_hubs = 2;
        c.max_wait_s = 1e6;
        c.hubs[0].gpus = c.hubs[1].gpus = 8;
        c.hubs[0].price_per_kwh = 0.1;
        hubs_hub *h = &c.hubs[0];
        h->water_hour_l = table;
        h->water_level_gpus = levels;
        h->water_levels = 2;
        h->water_idle_year_l = 8760;
        h->water_limit_l = limited ? 8760 + 28 - 0.1 : 1e9;
        hubs_result r;
        sim_error err;
        sim_error_clear(&err);
        CHECK(hubs_place(&c, &r, &err) == 0);
        CHECK_INT_EQ(r.jobs[0].hub, 0);
        CHECK_INT_EQ(r.jobs[1].hub, 0);
        CHECK_INT_EQ(r.jobs[2].hub, limited ? 1 : 0);
        CHECK_INT_EQ(r.water_passes, limited ? 1 : 0);
        CHECK_NEAR(r.water_est_l[0], 8760 + (limited ? 20 : 28), 1e-9);
        h->water_full_year_l = 8770; /* the full-load year caps the bound */
        hubs_result_free(&r);
        if (!limited) {
            CHECK(hubs_place(&c, &r, &err) == 0);
            CHECK_NEAR(r.water_est_l[0], 8770, 0);
            hubs_result_free(&r);
        }
    }
}

/* a hub whose GPU runs at 0.4 of the scenario's (time_scale 2.5): a job of
 * 8 GPUs x 1 h holds them 2.5 h there; busy GPU-s 8 x 9,000, the work 8 x
 * 3,600; the next job's fluid wait is 9,000 s */
static void test_time_scale(void)
{
    hubs_job_spec v[2] = {{0, 64, 3600, 0, 0, HUBS_TRAINING, 0, 0, 0, 0},
                          {1, 64, 3600, 0, 0, HUBS_TRAINING, 0, 0, 0, 0}};
    hubs_config c = three("fixed", v, 2);
    c.hubs[0].time_scale = 2.5;
    hubs_result r;
    run(&c, &r);
    CHECK_NEAR(r.jobs[0].end_s - r.jobs[0].start_s, 9000, 1e-9);
    CHECK_NEAR(r.jobs[1].start_s - r.jobs[1].submit_s, 9000 - 1, 1e-9);
    CHECK_NEAR(r.jobs[1].est_wait_s, 9000 - 1, 1e-9);
    CHECK_NEAR(r.total.gpu_s, 2 * 64 * 9000, 1e-6);
    CHECK_NEAR(r.total.ref_gpu_s, 2 * 64 * 3600, 1e-6);
    hubs_result_free(&r);
    c.hubs[0].time_scale = 0; /* read as 1: the duration exactly */
    run(&c, &r);
    CHECK(r.jobs[0].end_s - r.jobs[0].start_s == 3600);
    CHECK(r.total.gpu_s == r.total.ref_gpu_s);
    hubs_result_free(&r);
}

/* a serving job serves its duration on ceil(gpus x serving_scale) GPUs,
 * whatever the training time scale (4 here): at serving scale 2.5 a 16-GPU
 * job holds 40 of the hub's 64 for 1 h, so a second waits 3,600 s (work
 * 16 x 3,600, busy 40 x 3,600 each); a 26-GPU one needs 65 and fits no hub
 * of 64 at that speed: refused; with hub 1 at scale 1 it goes there, the
 * one hub it fits. A serving scale of 0 is read as 1 (its own GPUs) */
static void test_serving_scale(void)
{
    hubs_job_spec v[2] = {{0, 16, 3600, 0, 0, HUBS_SERVING, 0, 0, 0, 0},
                          {1, 16, 3600, 0, 0, HUBS_SERVING, 0, 0, 0, 0}};
    hubs_job_spec train = {0, 16, 3600, 0, 0, HUBS_TRAINING, 0, 0, 0, 0};
    hubs_config c = three("fixed", v, 2);
    c.hubs[0].time_scale = 4;
    CHECK(hubs_job_gpus(&c.hubs[0], &v[0]) == 16); /* serving scale 0: its own GPUs */
    c.hubs[0].serving_scale = 2.5;
    CHECK(hubs_job_gpus(&c.hubs[0], &v[0]) == 40 && hubs_job_gpus(&c.hubs[1], &v[0]) == 16);
    CHECK(hubs_run_time_s(&c.hubs[0], &v[0]) == 3600);
    CHECK(hubs_job_gpus(&c.hubs[0], &train) == 16 && hubs_run_time_s(&c.hubs[0], &train) == 4 * 3600.0);
    hubs_result r;
    run(&c, &r);
    CHECK(r.jobs[0].end_s - r.jobs[0].start_s == 3600);
    CHECK_NEAR(r.jobs[1].start_s - r.jobs[1].submit_s, 3600 - 1, 1e-9);
    CHECK_NEAR(r.total.gpu_s, 2 * 40 * 3600.0, 1e-6);
    CHECK_NEAR(r.total.ref_gpu_s, 2 * 16 * 3600.0, 1e-6);
    hubs_result_free(&r);
    hubs_job_spec big[1] = {{0, 26, 3600, 0, 0, HUBS_SERVING, 0, 0, 0, 0}};
    c = three("cheapest", big, 1);
    for (unsigned h = 0; h < 3; h++)
        c.hubs[h].serving_scale = 2.5;
    sim_error err;
    sim_error_clear(&err);
    CHECK(hubs_place(&c, &r, &err) == SIM_ERR_INPUT);
    CHECK(strstr(err.msg, "needs 65 of 64 GPUs") != NULL);
    c.hubs[1].serving_scale = 1;
    run(&c, &r);
    CHECK(r.jobs[0].hub == 1);
    hubs_result_free(&r);
}

/* a pacer at each hub (hubs_config.pacers): every job works at half speed,
 * so a job alone runs twice its run time; the hubs ask for a pacer once per
 * simulation of a hub with jobs and give it back after; the GPU-seconds
 * interference added are exactly n x d per job (gpu_s = 2 n d); a hub
 * without a pacer (make returns NULL) runs its jobs their run time */
typedef struct half_pacers {
    cluster_pacer p;
    unsigned made[3], done[3];
    unsigned paced_hub_mask; /* hubs that get the pacer */
} half_pacers;

static int half_start(void *ctx, uint32_t id, const cluster_job_spec *spec, const uint32_t *gpus,
                      uint32_t n, sim_error *err)
{
    (void)ctx, (void)id, (void)spec, (void)gpus, (void)n, (void)err;
    return 0;
}
static void half_end(void *ctx, uint32_t id) { (void)ctx, (void)id; }
static int half_pace(void *ctx, double now_s, const uint32_t *ids, uint32_t n, double *p,
                     sim_error *err)
{
    (void)ctx, (void)now_s, (void)ids, (void)err;
    for (uint32_t i = 0; i < n; i++)
        p[i] = 0.5;
    return 0;
}
static const cluster_pacer *half_make(void *ctx, unsigned hub, sim_error *err)
{
    (void)err;
    half_pacers *x = ctx;
    x->made[hub]++;
    return x->paced_hub_mask >> hub & 1 ? &x->p : NULL;
}
static void half_done(void *ctx, unsigned hub) { ((half_pacers *)ctx)->done[hub]++; }

static void test_pacers(void)
{
    hubs_job_spec v[3] = {{0, 8, 3600, 0, 0, HUBS_TRAINING, 0, 0, 0, 0},
                          {10, 16, 7200, 0, 1, HUBS_TRAINING, 0, 0, 0, 0},
                          {20, 8, 1800, 0, 0, HUBS_SERVING, 0, 0, 0, 0}};
    hubs_config c = three("nearest", v, 3); /* east to h0, south to h2 */
    half_pacers x = {{NULL, half_start, half_end, half_pace}, {0}, {0}, 1u};
    x.p.ctx = &x;
    c.pacers = (hubs_pacers){&x, half_make, half_done};
    hubs_result r;
    run(&c, &r);
    CHECK(x.made[0] == 1 && x.done[0] == 1);    /* h0: paced */
    CHECK(x.made[1] == 0 && x.done[1] == 0);    /* h1: no job, no simulation */
    CHECK(x.made[2] == 1 && x.done[2] == 0);    /* h2: no pacer given */
    CHECK(r.jobs[0].hub == 0 && r.jobs[2].hub == 0 && r.jobs[1].hub == 2);
    CHECK_NEAR(r.jobs[0].end_s - r.jobs[0].start_s, 2 * 3600.0, 1e-9);
    CHECK_NEAR(r.jobs[0].interf_s, 3600, 1e-9);
    CHECK_NEAR(r.jobs[2].interf_s, 1800, 1e-9);
    CHECK(r.jobs[1].interf_s == 0 && r.jobs[1].end_s - r.jobs[1].start_s == 7200);
    CHECK_NEAR(r.hub[0].interf_gpu_s, 8 * 3600.0 + 8 * 1800.0, 1e-6);
    CHECK_NEAR(r.hub[0].gpu_s, 2 * (8 * 3600.0 + 8 * 1800.0), 1e-6);
    CHECK(r.hub[2].interf_gpu_s == 0 && r.hub[2].gpu_s == 16 * 7200.0);
    CHECK(r.total.interf_gpu_s == r.hub[0].interf_gpu_s);
    CHECK(r.total.ref_gpu_s == 8 * 3600.0 + 16 * 7200.0 + 8 * 1800.0);
    hubs_result_free(&r);
}

/* the energy keys charge a job's energy at the hub: hub 1's key 0.3 x 1.2 =
 * 0.36 per kWh against hub 0's 0.6; at energy scale 2 (an A100-like hub:
 * longer runs) a job costs 0.72 there and goes to hub 0; at 1.6, 0.576 <
 * 0.6, to hub 1; lowest-carbon the same with 0.2 against hub 2's 0.5
 * (scale 2.4: 0.48, hub 1; 2.6: 0.52, hub 2); 0 is read as 1. A serving
 * job reads the serving energy scale only: hub 1 at training scale 2 and
 * serving scale 1.6 (an A100-like hub: 2.98x the time, 1.64x the GPUs)
 * keeps serving at hub 1 and sends training to hub 0, and the other way
 * round at 1.6 and 2 */
static void test_energy_scale(void)
{
    hubs_job_spec both[2] = {{0, 8, 3600, 0, 0, HUBS_TRAINING, 0, 0, 0, 0},
                             {0, 8, 3600, 0, 0, HUBS_SERVING, 0, 0, 0, 0}};
    const double scales[2][2] = {{2, 1.6}, {1.6, 2}}; /* training, serving */
    for (int k = 0; k < 2; k++) {
        hubs_config c = three("cheapest", both, 2);
        c.hubs[1].energy_scale = scales[k][0];
        c.hubs[1].serving_energy_scale = scales[k][1];
        hubs_result r;
        run(&c, &r);
        CHECK_INT_EQ(r.jobs[0].hub, k == 0 ? 0u : 1u);
        CHECK_INT_EQ(r.jobs[1].hub, k == 0 ? 1u : 0u);
        hubs_result_free(&r);
    }
    hubs_job_spec v[1] = {{0, 8, 3600, 0, 0, HUBS_TRAINING, 0, 0, 0, 0}};
    const struct { const char *policy; double scale; uint32_t hub; } cases[] = {
        {"cheapest", 0, 1},      {"cheapest", 1.6, 1},      {"cheapest", 2, 0},
        {"lowest-carbon", 0, 1}, {"lowest-carbon", 2.4, 1}, {"lowest-carbon", 2.6, 2}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        hubs_config c = three(cases[i].policy, v, 1);
        c.hubs[1].energy_scale = cases[i].scale;
        hubs_result r;
        run(&c, &r);
        CHECK_INT_EQ(r.jobs[0].hub, cases[i].hub);
        hubs_result_free(&r);
    }
}

/* a hub of 64 GPUs full of large jobs (fixed): 48 and 32 GPUs alternating
 * for 1 h every 10 min (36 jobs: no two run together but 32 + 32), and 300
 * jobs of 16, 32, 48 or 64 GPUs for 0.5-4.5 h every 2 h (xorshift; about
 * 87 % of the hub's GPU-hours);
 * the fluid backlog drains 64 GPUs' worth of work an hour and under-reads
 * the queue, the gang estimate (the profile of committed jobs) waits for a
 * job's GPUs together: its mean error against the simulated wait (EASY
 * backfill) is under a quarter of the fluid's, its worst under-reading
 * under half */
static double gang_error(int gang, int mixed, double *under)
{
    enum { N = 300 };
    hubs_job_spec v[N];
    uint64_t x = 88172645463325252ull; /* xorshift: 16-64 GPUs, 0.5-4.5 h, every 2 h */
    for (int i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint32_t gpus = mixed ? 8u << (x % 4) : i % 2 ? 32 : 48;
        double run = mixed ? 1800 + 600.0 * (double)((x >> 8) % 25) : 3600;
        v[i] = (hubs_job_spec){(mixed ? 7200.0 : 600.0) * i, gpus == 8 && mixed ? 48 : gpus,
                               run, 0, 0, HUBS_TRAINING, 0, 0, 0, 0};
    }
    hubs_config c = three("fixed", v, N);
    c.gang_backlog = gang;
    c.n_jobs = mixed ? N : 36;
    hubs_result r;
    run(&c, &r);
    double err = 0;
    *under = 0;
    for (uint32_t i = 0; i < c.n_jobs; i++) {
        double real = r.jobs[i].start_s - r.jobs[i].submit_s;
        err += fabs(r.jobs[i].est_wait_s - real) / c.n_jobs;
        *under = fmax(*under, real - r.jobs[i].est_wait_s);
    }
    hubs_result_free(&r);
    return err;
}

static void test_gang_backlog(void)
{
    for (int mixed = 0; mixed < 2; mixed++) {
        double under_fluid, under_gang;
        double fluid = gang_error(0, mixed, &under_fluid), gang = gang_error(1, mixed, &under_gang);
        printf("gang backlog (%s): mean |estimate - simulated wait| fluid %.6g s, gang %.6g s; "
               "most under-read fluid %.6g s, gang %.6g s\n",
               mixed ? "300 jobs of 16-64 GPUs, 0.5-4.5 h" : "48 and 32 GPUs alternating", fluid,
               gang, under_fluid, under_gang);
        CHECK(gang < fluid / 4);
        CHECK(under_gang < under_fluid / 2);
    }
}

/* interference in the keys (hubs.h interf_scale): cheapest picks hub 1 at
 * price 0.3 against hub 0's 0.5; expected to run 1.8 times as long there
 * (its energy x 1.8: 0.54) the job goes to hub 0, at 1.6 (0.48) it stays,
 * and the next job's estimated wait there is 64 x 3,600 x 1.6 / 64 less the
 * second between them, fluid and gang; the simulated run is the isolated
 * one (no pacer: the scale is the placement's expectation only).
 * lowest-carbon: hub 1's 0.2 x 2.6 = 0.52 passes it over for hub 2 (0.5).
 * A scale of 1 places and simulates exactly as 0 */
static void test_interf_keys(void)
{
    hubs_job_spec v[2] = {{0, 64, 3600, 0, 0, HUBS_TRAINING, 0, 0, 0, 0},
                          {1, 64, 3600, 0, 0, HUBS_TRAINING, 0, 0, 0, 0}};
    hubs_config c = three("cheapest", v, 1);
    hubs_result r;
    run(&c, &r);
    CHECK_INT_EQ(r.jobs[0].hub, 1);
    hubs_result_free(&r);
    c.hubs[1].interf_scale = 1.8;
    run(&c, &r);
    CHECK_INT_EQ(r.jobs[0].hub, 0);
    hubs_result_free(&r);
    c.hubs[1].interf_scale = 1.6;
    c.n_jobs = 2;
    c.max_wait_s = 2 * 3600; /* the second job waits 5,759 s there: passed over */
    for (int gang = 0; gang < 2; gang++) {
        c.gang_backlog = gang;
        run(&c, &r);
        CHECK_INT_EQ(r.jobs[0].hub, 1);
        CHECK_INT_EQ(r.jobs[1].hub, 1);
        CHECK_NEAR(r.jobs[1].est_wait_s, 3600 * 1.6 - 1, 1e-9);
        CHECK(r.jobs[0].end_s - r.jobs[0].start_s == 3600);
        hubs_result_free(&r);
        c.max_wait_s = 3600; /* beyond max-wait: the next cheapest */
        run(&c, &r);
        CHECK_INT_EQ(r.jobs[1].hub, 0);
        hubs_result_free(&r);
        c.max_wait_s = 2 * 3600;
    }
    hubs_config lc = three("lowest-carbon", v, 1);
    lc.hubs[1].interf_scale = 2.6;
    run(&lc, &r);
    CHECK_INT_EQ(r.jobs[0].hub, 2);
    hubs_result_free(&r);
    hubs_job_spec *d = demand(300, 1);
    hubs_config a = three("cheapest", d, 300), b = a;
    for (unsigned h = 0; h < 3; h++)
        b.hubs[h].interf_scale = 1;
    hubs_result ra, rb;
    run(&a, &ra);
    run(&b, &rb);
    int same = ra.total.digest == rb.total.digest && ra.fallbacks == rb.fallbacks;
    for (uint32_t i = 0; i < 300; i++)
        same = same && ra.jobs[i].hub == rb.jobs[i].hub &&
               ra.jobs[i].est_wait_s == rb.jobs[i].est_wait_s;
    CHECK(same);
    hubs_result_free(&ra);
    hubs_result_free(&rb);
    free(d);
}

int main(void)
{
    test_interf_keys();
    test_energy_scale();
    test_pacers();
    test_serving_scale();
    test_one_hub_is_the_cluster();
    test_conservation();
    test_latency_bound();
    test_backlog();
    test_backbone();
    test_renewables();
    test_determinism();
    test_csv();
    test_water_table();
    test_time_scale();
    test_gang_backlog();
    return check_report();
}
