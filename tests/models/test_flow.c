/* test_flow.c - the max-min flow model (models/flow.h) and routing
 * (topologies/routing.h): closed-form rates and finish times, incremental
 * against full recomputation, batching, conservation, and route shapes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "dragonfly.h"
#include "engine.h"
#include "fattree.h"
#include "flow.h"
#include "routing.h"

#define MAX_DONE 4096
typedef struct done_log {
    size_t n;
    uint64_t tag[MAX_DONE];
    double time[MAX_DONE];
    sim_engine *eng;
} done_log;

static void on_done(void *ctx, uint32_t flow, uint64_t tag)
{
    (void)flow;
    done_log *d = ctx;
    if (d->n < MAX_DONE) {
        d->tag[d->n] = tag;
        d->time[d->n++] = sim_now(d->eng);
    }
}

static double done_time(const done_log *d, uint64_t tag)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->tag[i] == tag)
            return d->time[i];
    return -1;
}

/* Two flows on one 100 B/s link: 50 each; the short one (100 B) ends at 2 s,
 * then the long one (300 B, 200 left) has the link to itself: ends at 4 s. */
static void test_share_then_speed_up(void)
{
    sim_engine *eng = sim_engine_create();
    done_log d = {.eng = eng};
    double cap[1] = {100};
    flow_net *n = flow_net_create(eng, 1, cap, on_done, &d);
    topo_usage u = {0, 1.0};
    CHECK(flow_start(n, &u, 1, 100, INFINITY, 0, 1) != UINT32_MAX);
    CHECK(flow_start(n, &u, 1, 300, INFINITY, 0, 2) != UINT32_MAX);
    sim_run(eng, INFINITY);
    CHECK_INT_EQ(d.n, 2);
    CHECK_NEAR(done_time(&d, 1), 2.0, 1e-12);
    CHECK_NEAR(done_time(&d, 2), 4.0, 1e-12);
    CHECK_NEAR(flow_net_link_bytes(n, 0), 400, 1e-9);
    CHECK(flow_net_check(n, NULL) == 0);
    /* one filling at t = 0 (both starts), one at 2 s, one at 4 s */
    CHECK_INT_EQ(flow_net_stats(n)->recomputes, 3);
    flow_net_destroy(n);
    sim_engine_destroy(eng);
}

/* The textbook max-min example: link 0 (10 B/s) carries flows a and b, link
 * 1 (20 B/s) carries b and c: a = b = 5, c = 15. A weight-2 usage counts
 * twice; a rate cap freezes a flow early and leaves the rest to the others. */
static void test_maxmin_rates(void)
{
    sim_engine *eng = sim_engine_create();
    double cap[3] = {10, 20, 10};
    flow_net *n = flow_net_create(eng, 3, cap, NULL, NULL);
    topo_usage a[1] = {{0, 1}}, b[2] = {{0, 1}, {1, 1}}, c[1] = {{1, 1}};
    uint32_t fa = flow_start(n, a, 1, 1e6, INFINITY, 0, 0);
    uint32_t fb = flow_start(n, b, 2, 1e6, INFINITY, 0, 0);
    uint32_t fc = flow_start(n, c, 1, 1e6, INFINITY, 0, 0);
    topo_usage heavy[2] = {{2, 1.5}, {2, 0.5}}; /* the same link twice: weight 2 */
    uint32_t fh = flow_start(n, heavy, 2, 1e6, INFINITY, 0, 0);
    sim_run(eng, 0.0);
    CHECK_NEAR(flow_rate(n, fa), 5, 1e-12);
    CHECK_NEAR(flow_rate(n, fb), 5, 1e-12);
    CHECK_NEAR(flow_rate(n, fc), 15, 1e-12);
    CHECK_NEAR(flow_rate(n, fh), 5, 1e-12);
    CHECK_NEAR(flow_net_link_load(n)[2], 2.0, 1e-15);
    /* a capped flow on link 2 takes 1 B/s; the heavy flow gets (10-1)/2 */
    topo_usage d[1] = {{2, 1}};
    uint32_t fd = flow_start(n, d, 1, 1e6, 1.0, 0, 0);
    sim_run(eng, 0.0);
    CHECK_NEAR(flow_rate(n, fd), 1.0, 1e-12);
    CHECK_NEAR(flow_rate(n, fh), 4.5, 1e-12);
    CHECK_NEAR(flow_rate(n, fa), 5, 1e-12); /* untouched component */
    flow_net_destroy(n);
    sim_engine_destroy(eng);
}

/* Max-min fairness is not monotone per flow: with a on link 0, b on links 0
 * and 1, c on link 1 (capacities 1 and 2), a = b = 0.5 and c = 1.5; raising
 * link 0 to 3 lets b rise to 1, which takes link 1's share from c (c = 1).
 * The model must reproduce this textbook property, not hide it: the
 * monotone responses dcsim promises are for collective completion times on
 * symmetric patterns (tests/models/test_netcoll.c), not for every flow. */
static void test_maxmin_not_monotone_per_flow(void)
{
    double caps[2][2] = {{1, 2}, {3, 2}};
    double c_rate[2];
    for (int k = 0; k < 2; k++) {
        sim_engine *eng = sim_engine_create();
        flow_net *n = flow_net_create(eng, 2, caps[k], NULL, NULL);
        topo_usage a[1] = {{0, 1}}, b[2] = {{0, 1}, {1, 1}}, c[1] = {{1, 1}};
        flow_start(n, a, 1, 1e6, INFINITY, 0, 0);
        flow_start(n, b, 2, 1e6, INFINITY, 0, 0);
        uint32_t fc = flow_start(n, c, 1, 1e6, INFINITY, 0, 0);
        sim_run(eng, 0.0);
        c_rate[k] = flow_rate(n, fc);
        flow_net_destroy(n);
        sim_engine_destroy(eng);
    }
    CHECK_NEAR(c_rate[0], 1.5, 1e-12);
    CHECK_NEAR(c_rate[1], 1.0, 1e-12);
}

/* Incast: a link with efficiency 0.5 keeps its full capacity for one flow
 * and halves it once two flows converge on it; when one of them ends the
 * other gets the whole link back. */
static void test_incast(void)
{
    sim_engine *eng = sim_engine_create();
    done_log d = {.eng = eng};
    double cap[2] = {100, 100};
    flow_curve half = {.n_points = 1, .flows = {2}, .efficiency = {0.5}};
    flow_curve bad_eff = {.n_points = 1, .flows = {2}, .efficiency = {0.0}};
    flow_curve bad_flows = {.n_points = 2, .flows = {2, 2}, .efficiency = {0.5, 0.5}};
    const flow_curve *eff[2] = {&half, NULL}, *bad[2] = {&bad_eff, NULL};
    const flow_curve *bad2[2] = {NULL, &bad_flows};
    flow_net *n = flow_net_create(eng, 2, cap, on_done, &d);
    CHECK(flow_net_set_incast(n, bad, NULL) == -1);
    CHECK(flow_net_set_incast(n, bad2, NULL) == -1);
    CHECK(flow_net_set_incast(n, eff, NULL) == 0);
    topo_usage u = {0, 1.0};
    uint32_t a = flow_start(n, &u, 1, 100, INFINITY, 0, 1);
    sim_run(eng, 0.0);
    CHECK_NEAR(flow_rate(n, a), 100, 1e-12);
    uint32_t b = flow_start(n, &u, 1, 25, INFINITY, 0, 2);
    sim_run(eng, 0.0);
    CHECK_NEAR(flow_rate(n, a), 25, 1e-12); /* 100 x 0.5 shared by two */
    CHECK_NEAR(flow_rate(n, b), 25, 1e-12);
    sim_run(eng, INFINITY);
    /* b: 25 B at 25 B/s ends at 1 s; a has 75 left, then 100 B/s: 1.75 s */
    CHECK_NEAR(done_time(&d, 2), 1.0, 1e-12);
    CHECK_NEAR(done_time(&d, 1), 1.75, 1e-12);
    flow_net_destroy(n);
    sim_engine_destroy(eng);
}

/* A measured curve: 1 for one flow, linear to the first point's efficiency
 * at 2 (a fractional fan-in), that efficiency up to its
 * flows, linear between points, the last beyond. Four flows of 60 B on a
 * link of 120 B/s with the curve {2: 0.9, 4: 0.5, 8: 0.25}: 0.5 x 120 / 4 =
 * 15 B/s each, all done at 4 s; three flows would get 0.7 x 120 / 3. */
static void test_incast_curve(void)
{
    flow_curve c = {.n_points = 3, .flows = {2, 4, 8}, .efficiency = {0.9, 0.5, 0.25}};
    char why[128];
    CHECK(flow_curve_check(&c, why, sizeof why) == 0);
    CHECK_NEAR(flow_curve_at(&c, 1), 1.0, 0);
    CHECK_NEAR(flow_curve_at(&c, 1.5), 0.95, 1e-15); /* 1 to 0.9 between 1 and 2 flows */
    CHECK_NEAR(flow_curve_at(&c, 1 + 1e-15), 1.0, 1e-14); /* no step at 1 */
    CHECK_NEAR(flow_curve_at(&c, 2), 0.9, 0);
    CHECK_NEAR(flow_curve_at(&c, 3), 0.7, 1e-15);
    CHECK_NEAR(flow_curve_at(&c, 6), 0.375, 1e-15);
    CHECK_NEAR(flow_curve_at(&c, 100), 0.25, 0);
    flow_curve late = {.n_points = 1, .flows = {1}, .efficiency = {0.5}};
    CHECK(flow_curve_check(&late, why, sizeof why) == -1);
    sim_engine *eng = sim_engine_create();
    done_log d = {.eng = eng};
    double cap[1] = {120};
    const flow_curve *per_link[1] = {&c};
    flow_net *n = flow_net_create(eng, 1, cap, on_done, &d);
    CHECK(flow_net_set_incast(n, per_link, NULL) == 0);
    topo_usage u = {0, 1.0};
    uint32_t f[4];
    for (unsigned i = 0; i < 3; i++)
        f[i] = flow_start(n, &u, 1, 60, INFINITY, 0, i + 1);
    sim_run(eng, 0.0);
    CHECK_NEAR(flow_rate(n, f[0]), 0.7 * 120 / 3, 1e-12);
    f[3] = flow_start(n, &u, 1, 60, INFINITY, 0, 4);
    sim_run(eng, 0.0);
    for (unsigned i = 0; i < 4; i++)
        CHECK_NEAR(flow_rate(n, f[i]), 15, 1e-12);
    sim_run(eng, INFINITY);
    CHECK_NEAR(done_time(&d, 4), 4.0, 1e-12);
    flow_net_destroy(n);
    sim_engine_destroy(eng);
}

/* The demand-weighted fan-in (flow.h flow_net_set_incast), by hand. Links
 * 0, 1, 2 leave hosts A, B, C (injection links), 3 and 4 enter hosts D and
 * E (curve {2: 0.8, 4: 0.4}); 100 B/s each. A sends a1 to D and a2 to E, B
 * sends b1 and C c1 to D. A's link leaves each of its flows 100 / 2 = 50,
 * so a1 offers D's link 0.5 of it, b1 and c1 1 each: n_eff = 2.5, the
 * curve 0.8 + (2.5 - 2) / 2 x (0.4 - 0.8) = 0.7, D's link 70 B/s: a1 = b1 =
 * c1 = 70 / 3 and a2 the rest of A's link, 100 - 70 / 3. Counting flows
 * (no injection links) reads the curve at 3: 0.6, 20 each, a2 80. A 3 -> 1
 * incast from senders alone on their links keeps n_eff = 3 exactly; a rate
 * cap of 10 B/s makes a sender offer 0.1. */
static void test_fanin_demand(void)
{
    flow_curve c = {.n_points = 2, .flows = {2, 4}, .efficiency = {0.8, 0.4}};
    const flow_curve *curves[5] = {NULL, NULL, NULL, &c, &c};
    const uint8_t injects[5] = {1, 1, 1, 0, 0};
    double cap[5] = {100, 100, 100, 100, 100};
    for (int weighted = 1; weighted >= 0; weighted--) {
        sim_engine *eng = sim_engine_create();
        done_log d = {.eng = eng};
        flow_net *n = flow_net_create(eng, 5, cap, on_done, &d);
        CHECK(flow_net_set_incast(n, curves, weighted ? injects : NULL) == 0);
        topo_usage a1[2] = {{0, 1}, {3, 1}}, a2[2] = {{0, 1}, {4, 1}};
        topo_usage b1[2] = {{1, 1}, {3, 1}}, c1[2] = {{2, 1}, {3, 1}};
        uint32_t f[4] = {flow_start(n, a1, 2, 1e3, INFINITY, 0, 1),
                         flow_start(n, a2, 2, 1e3, INFINITY, 0, 2),
                         flow_start(n, b1, 2, 1e3, INFINITY, 0, 3),
                         flow_start(n, c1, 2, 1e3, INFINITY, 0, 4)};
        sim_run(eng, 0.0);
        double d_link = weighted ? 70 : 60;
        CHECK_NEAR(flow_net_fanin(n, 3), weighted ? 2.5 : 3, 1e-15);
        CHECK_NEAR(flow_net_fanin(n, 4), 1, 0); /* a2 alone: at least 1 */
        CHECK_NEAR(flow_rate(n, f[0]), d_link / 3, 1e-12);
        CHECK_NEAR(flow_rate(n, f[2]), d_link / 3, 1e-12);
        CHECK_NEAR(flow_rate(n, f[3]), d_link / 3, 1e-12);
        CHECK_NEAR(flow_rate(n, f[1]), 100 - d_link / 3, 1e-12);
        CHECK(flow_net_check(n, NULL) == 0);
        sim_run(eng, INFINITY);
        flow_net_destroy(n);
        sim_engine_destroy(eng);
    }
    /* the incast: three senders alone on their links, then one capped */
    for (int capped = 0; capped <= 1; capped++) {
        sim_engine *eng = sim_engine_create();
        done_log d = {.eng = eng};
        flow_net *n = flow_net_create(eng, 5, cap, on_done, &d);
        CHECK(flow_net_set_incast(n, curves, injects) == 0);
        uint32_t f[3];
        for (uint32_t i = 0; i < 3; i++) {
            topo_usage u[2] = {{i, 1}, {3, 1}};
            f[i] = flow_start(n, u, 2, 1e3, capped && i == 0 ? 10 : INFINITY, 0, i + 1);
        }
        sim_run(eng, 0.0);
        if (!capped) {
            CHECK(flow_net_fanin(n, 3) == 3.0); /* exactly: the old count */
            for (unsigned i = 0; i < 3; i++)
                CHECK_NEAR(flow_rate(n, f[i]), 0.6 * 100 / 3, 1e-12);
        } else { /* n_eff 2.1: 0.8 - 0.02 = 0.78 of 100; 10 to the capped one */
            CHECK_NEAR(flow_net_fanin(n, 3), 2.1, 1e-15);
            CHECK_NEAR(flow_rate(n, f[0]), 10, 1e-12);
            CHECK_NEAR(flow_rate(n, f[1]), (78 - 10) / 2.0, 1e-12);
        }
        sim_run(eng, INFINITY);
        flow_net_destroy(n);
        sim_engine_destroy(eng);
    }
}

/* Latency delays the report, not the bandwidth; identical flows finishing at
 * one instant are one batch (one filling for all of them). */
static void test_latency_and_batches(void)
{
    sim_engine *eng = sim_engine_create();
    done_log d = {.eng = eng};
    double cap[1] = {8};
    flow_net *n = flow_net_create(eng, 1, cap, on_done, &d);
    topo_usage u = {0, 1.0};
    for (int i = 0; i < 4; i++)
        flow_start(n, &u, 1, 16, INFINITY, 0.5, (uint64_t)i);
    sim_run(eng, INFINITY);
    CHECK_INT_EQ(d.n, 4);
    for (int i = 0; i < 4; i++)
        CHECK_NEAR(d.time[i], 16 * 4 / 8.0 + 0.5, 1e-12);
    CHECK_INT_EQ(flow_net_stats(n)->recomputes, 2);
    flow_net_destroy(n);
    sim_engine_destroy(eng);
}

/* Random flows over random links, started over time: after every event
 * horizon the incremental rates equal a recomputation from scratch, no link
 * is above capacity, and the bytes add up. */
static void test_incremental_equals_full(void)
{
    enum { LINKS = 60, FLOWS = 400 };
    sim_engine *eng = sim_engine_create();
    double cap[LINKS];
    uint64_t s = 12345;
    for (int l = 0; l < LINKS; l++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        cap[l] = 10.0 + (double)(s >> 40) / (1 << 20);
    }
    flow_net *n = flow_net_create(eng, LINKS, cap, NULL, NULL);
    double *full = calloc(FLOWS * 2, sizeof *full);
    double total = 0, on_links = 0;
    int mismatches = 0;
    for (int f = 0; f < FLOWS; f++) {
        topo_usage u[4];
        size_t k = 0;
        for (int j = 0; j < 3; j++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            u[k].link = (uint32_t)((s >> 33) % LINKS);
            u[k++].weight = j == 2 ? 0.25 : 1.0;
        }
        double bytes = 1 + (double)(s >> 50);
        total += bytes;
        on_links += bytes * 2.25;
        CHECK(flow_start(n, u, k, bytes, INFINITY, 0, (uint64_t)f) != UINT32_MAX);
        sim_run(eng, f * 0.01);
        if (f % 20 == 0) {
            flow_net_full_rates(n, full, FLOWS * 2);
            for (uint32_t g = 0; g < FLOWS * 2; g++)
                if (flow_rate(n, g) > 0 && fabs(flow_rate(n, g) - full[g]) > 1e-9 * full[g])
                    mismatches++;
            CHECK(flow_net_check(n, NULL) == 0);
        }
    }
    sim_run(eng, INFINITY);
    CHECK_INT_EQ(mismatches, 0);
    const flow_stats *st = flow_net_stats(n);
    CHECK_INT_EQ(st->flows_finished, FLOWS);
    CHECK_REL(st->bytes_delivered, total, 1e-12);
    double carried = 0;
    for (int l = 0; l < LINKS; l++)
        carried += flow_net_link_bytes(n, l);
    CHECK_REL(carried, on_links, 1e-9);
    free(full);
    flow_net_destroy(n);
    sim_engine_destroy(eng);
}

/* The record layout (docs/fabric.md, "Flow records"): 2,000 single-path
 * flows of 6 hops on 96 links cost at most 128 bytes each, all included
 * (per-flow arrays, usage pool, link lists, classes); a second wave after
 * the first has finished reuses the ids and stays within the same bound. */
static void test_record_bytes(void)
{
    enum { LINKS = 96, FLOWS = 2000, HOPS = 6 };
    sim_engine *eng = sim_engine_create();
    double cap[LINKS];
    for (int l = 0; l < LINKS; l++)
        cap[l] = 1e9;
    done_log *d = calloc(1, sizeof *d);
    d->eng = eng;
    flow_net *n = flow_net_create(eng, LINKS, cap, on_done, d);
    size_t mem0 = flow_net_memory_bytes(n);
    uint64_t s = 99;
    for (int wave = 0; wave < 2; wave++) {
        uint32_t max_id = 0;
        for (int f = 0; f < FLOWS; f++) {
            topo_usage u[HOPS];
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            uint32_t first = (uint32_t)((s >> 33) % LINKS);
            for (int h = 0; h < HOPS; h++) /* six distinct links */
                u[h] = (topo_usage){(first + 16 * (uint32_t)h) % LINKS, 1.0};
            uint32_t id = flow_start(n, u, HOPS, 1e6 + f, INFINITY, 1e-6, (uint64_t)f);
            CHECK(id != UINT32_MAX);
            max_id = id > max_id ? id : max_id;
        }
        double per_flow = (double)(flow_net_memory_bytes(n) - mem0) / FLOWS;
        CHECK(per_flow <= 128);
        CHECK(per_flow >= 4 * 8 + 2 * 8 + 5 * 4 + 2 * HOPS * 4); /* the layout's floor */
        CHECK_INT_EQ(max_id, FLOWS - 1); /* the second wave reuses the first's ids */
        sim_run(eng, INFINITY);
        CHECK_INT_EQ(flow_active_count(n), 0);
        CHECK(flow_net_check(n, NULL) == 0);
    }
    CHECK_INT_EQ(d->n, 2 * FLOWS);
    flow_net_destroy(n);
    sim_engine_destroy(eng);
    free(d);
}

/* ---- local repair against full recomputation on real topologies ---- */

enum { RND_FLOWS = 600, RND_CHECKS = 40 };

typedef struct rnd_run {
    const topo_graph *g;
    topo_router *router;
    sim_engine *eng;
    flow_net *net;
    topo_usage *route;
    uint64_t rng;
    double finish[RND_FLOWS];
    int failed;
} rnd_run;

static uint64_t rnd_next(uint64_t *x)
{
    *x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
    return *x >> 11;
}

static void rnd_done(void *ctx, uint32_t flow, uint64_t tag)
{
    (void)flow;
    rnd_run *r = ctx;
    r->finish[tag] = sim_now(r->eng);
}

/* A start event: a random host pair, routed on the load of this instant. */
static void rnd_start(sim_engine *eng, void *ctx, uint64_t tag)
{
    (void)eng;
    rnd_run *r = ctx;
    uint32_t src = (uint32_t)(rnd_next(&r->rng) % r->g->n_hosts);
    uint32_t dst = (uint32_t)(rnd_next(&r->rng) % (r->g->n_hosts - 1));
    dst += dst >= src;
    double bytes = 1e6 * (double)(1 + rnd_next(&r->rng) % 1000);
    long nu = topo_route(r->router, src, dst, tag, flow_net_link_load(r->net), r->route,
                         topo_route_max_usages(r->router));
    if (nu <= 0 || flow_start(r->net, r->route, (size_t)nu, bytes, INFINITY, 0, tag) ==
                       UINT32_MAX)
        r->failed = 1;
}

/* RND_FLOWS flows (1 MB to 1 GB, links of 1 GB/s) started at random times
 * in [0, 0.2 s): hundreds run at once. At RND_CHECKS instants the rates
 * must equal a full recomputation (relative 1e-12); returns the count of
 * mismatches and fills r->finish. */
static int rnd_simulate(rnd_run *r, const topo_route_config *cfg, int repair)
{
    char why[256];
    r->rng = 99;
    r->failed = 0;
    r->router = topo_router_create(r->g, cfg, why, sizeof why);
    r->eng = sim_engine_create();
    r->net = flow_net_create(r->eng, r->g->n_links, r->g->link_bytes_per_s, rnd_done, r);
    r->route = r->router ? malloc(topo_route_max_usages(r->router) * sizeof *r->route) : NULL;
    double *full = malloc(RND_FLOWS * sizeof *full);
    CHECK(r->router && r->eng && r->net && r->route && full);
    flow_net_set_local_repair(r->net, repair);
    for (uint32_t i = 0; i < RND_FLOWS; i++) {
        double t = 0.2 * (double)rnd_next(&r->rng) * 0x1p-53;
        sim_schedule_at(r->eng, t, 0, 0, rnd_start, r, i);
    }
    int mismatches = 0;
    for (int c = 1; c <= RND_CHECKS; c++) {
        sim_run(r->eng, 0.4 * c / RND_CHECKS);
        for (uint32_t f = 0; f < RND_FLOWS; f++)
            full[f] = NAN; /* stays so for ids not in use */
        flow_net_full_rates(r->net, full, RND_FLOWS);
        for (uint32_t f = 0; f < RND_FLOWS; f++) {
            double x = flow_rate(r->net, f);
            if (x > 0 && !isnan(full[f]) && !(fabs(x - full[f]) <= 1e-12 * full[f]))
                mismatches++;
        }
        if (flow_net_check(r->net, NULL))
            mismatches++;
    }
    sim_run(r->eng, INFINITY);
    CHECK(!r->failed);
    CHECK_INT_EQ(flow_net_stats(r->net)->flows_finished, RND_FLOWS);
    free(full);
    return mismatches;
}

static void rnd_free(rnd_run *r)
{
    flow_net_destroy(r->net);
    sim_engine_destroy(r->eng);
    topo_router_destroy(r->router);
    free(r->route);
}


/* A link's list keeps its flows' weights once a flow with unequal weights
 * is on it (flow_internal.h). 66 background flows on link 2 keep the net
 * above COMPONENT_MAX_FLOWS, so the local repair runs and reads those
 * weights. Link 0 (12 B/s) carries c (weight 3 on every link), then b
 * (weight 1): 3 each. a (weight 2 on link 0, 1 on link 1) joins: its
 * weights make link 0's list keep weights, the earlier entries' filled
 * in: c + b + a take 3 + 1 + 2 = 6 shares of 12, 2 each. c (2 B) ends at
 * 1 s; a, the last entry, fills its hole and takes its weight with it:
 * b + 2 a = 12, 4 each (with c's weight 3 left in the hole, link 0 would
 * carry 16 > 12 and flow_net_check fail). */
static void test_link_weights(void)
{
    enum { BACKGROUND = 66 };
    sim_engine *eng = sim_engine_create();
    double cap[4] = {12, 100, BACKGROUND, 100};
    flow_net *n = flow_net_create(eng, 4, cap, NULL, NULL);
    topo_usage bg = {2, 1};
    for (int i = 0; i < BACKGROUND; i++)
        CHECK(flow_start(n, &bg, 1, 1e9, INFINITY, 0, 0) != UINT32_MAX);
    topo_usage c[2] = {{0, 3}, {3, 3}}, b[1] = {{0, 1}}, a[2] = {{0, 2}, {1, 1}};
    uint32_t fc = flow_start(n, c, 2, 2, INFINITY, 0, 0);
    uint32_t fb = flow_start(n, b, 1, 1e9, INFINITY, 0, 0);
    sim_run(eng, 0.0);
    CHECK_NEAR(flow_rate(n, fc), 3, 1e-12);
    CHECK_NEAR(flow_rate(n, fb), 3, 1e-12);
    size_t before = flow_net_memory_bytes(n);
    uint32_t fa = flow_start(n, a, 2, 1e9, INFINITY, 0, 0);
    CHECK(flow_net_memory_bytes(n) >= before + 3 * sizeof(uint16_t)); /* link 0's weight codes */
    sim_run(eng, 0.0);
    CHECK(flow_net_stats(n)->recomputes >= 2);
    CHECK_NEAR(flow_rate(n, fa), 2, 1e-12);
    CHECK_NEAR(flow_rate(n, fb), 2, 1e-12);
    CHECK_NEAR(flow_rate(n, fc), 2, 1e-12);
    CHECK(flow_net_check(n, NULL) == 0);
    sim_run(eng, 1.5);
    CHECK_INT_EQ(flow_active_count(n), BACKGROUND + 2);
    CHECK_NEAR(flow_rate(n, fa), 4, 1e-12);
    CHECK_NEAR(flow_rate(n, fb), 4, 1e-12);
    CHECK(flow_net_check(n, NULL) == 0);
    flow_net_destroy(n);
    sim_engine_destroy(eng);
}

/* The same random traffic with the local repair and with the component
 * refill: rates equal a full recomputation at every check, every flow ends
 * at the same time (relative 1e-12), and the repair re-solves less than
 * half as many flows (3 to 30 times fewer here). */
static void compare_repair(const topo_graph *g, const topo_route_config *cfg)
{
    static rnd_run with, without;
    with.g = without.g = g;
    CHECK_INT_EQ(rnd_simulate(&with, cfg, 1), 0);
    CHECK_INT_EQ(rnd_simulate(&without, cfg, 0), 0);
    int late = 0;
    for (int i = 0; i < RND_FLOWS; i++)
        if (!(fabs(with.finish[i] - without.finish[i]) <= 1e-12 * without.finish[i]))
            late++;
    CHECK_INT_EQ(late, 0);
    const flow_stats *a = flow_net_stats(with.net), *b = flow_net_stats(without.net);
    CHECK(a->max_active > 100);
    CHECK(2 * a->flows_refilled < b->flows_refilled);
    CHECK_INT_EQ(a->recomputes, b->recomputes);
    rnd_free(&with);
    rnd_free(&without);
}

static void test_repair_fattree_and_dragonfly(void)
{
    topo_graph g;
    char why[256];
    CHECK(topo_fattree_kary(8, 1e9, &g, why, sizeof why) == 0); /* 128 hosts */
    topo_route_config ecmp = {TOPO_BALANCE_ECMP, TOPO_PATH_MINIMAL, 1, 5};
    topo_route_config adaptive = {TOPO_BALANCE_ADAPTIVE, TOPO_PATH_MINIMAL, 1, 5};
    topo_route_config spray = {TOPO_BALANCE_SPRAY, TOPO_PATH_MINIMAL, 1, 5};
    compare_repair(&g, &ecmp);
    compare_repair(&g, &adaptive);
    compare_repair(&g, &spray); /* weighted usages */
    topo_graph_fini(&g);
    topo_dragonfly_config c = {.p = 3, .a = 6, .h = 3, .host_bytes_per_s = 1e9,
                               .local_bytes_per_s = 1e9, .global_bytes_per_s = 1e9};
    CHECK(topo_dragonfly(&c, &g, why, sizeof why) == 0); /* 342 hosts */
    topo_route_config ugal = {TOPO_BALANCE_ADAPTIVE, TOPO_PATH_UGAL, 1, 5};
    compare_repair(&g, &ugal);
    topo_graph_fini(&g);
}

static int path_is_connected(const topo_graph *g, const topo_usage *u, long n, uint32_t src,
                             uint32_t dst)
{
    uint32_t at = src;
    for (long i = 0; i < n; i++) {
        if (g->link_src[u[i].link] != at || u[i].weight != 1.0)
            return 0;
        at = g->link_dst[u[i].link];
    }
    return at == dst;
}

/* k = 4 fat-tree: an ECMP route is one connected path of 2, 4 or 6 links;
 * a sprayed cross-pod route splits 1 -> 2 -> 4 -> 4 -> 2 -> 1 (14 usages,
 * weights summing to the path length 6). */
static void test_fattree_routes(void)
{
    topo_graph g;
    char why[256];
    CHECK(topo_fattree_kary(4, 1e9, &g, why, sizeof why) == 0);
    topo_route_config cfg = {TOPO_BALANCE_ECMP, TOPO_PATH_MINIMAL, 1, 7};
    topo_router *r = topo_router_create(&g, &cfg, why, sizeof why);
    CHECK(r != NULL);
    topo_usage *u = malloc(topo_route_max_usages(r) * sizeof *u);
    int bad = 0;
    for (uint32_t a = 0; a < g.n_hosts; a++)
        for (uint32_t b = 0; b < g.n_hosts; b++) {
            if (a == b)
                continue;
            long n = topo_route(r, a, b, a * 100 + b, NULL, u, topo_route_max_usages(r));
            long want = a / 2 == b / 2 ? 2 : a / 4 == b / 4 ? 4 : 6;
            if (n != want || !path_is_connected(&g, u, n, a, b))
                bad++;
        }
    CHECK_INT_EQ(bad, 0);
    topo_router_destroy(r);
    cfg.balance = TOPO_BALANCE_SPRAY;
    r = topo_router_create(&g, &cfg, why, sizeof why);
    long n = topo_route(r, 0, 15, 1, NULL, u, topo_route_max_usages(r));
    CHECK_INT_EQ(n, 14);
    double sum = 0;
    for (long i = 0; i < n; i++)
        sum += u[i].weight;
    CHECK_NEAR(sum, 6.0, 1e-12);
    topo_router_destroy(r);
    /* Valiant on a Clos is refused with the reason */
    cfg.path_class = TOPO_PATH_VALIANT;
    CHECK(topo_router_create(&g, &cfg, why, sizeof why) == NULL);
    free(u);
    topo_graph_fini(&g);
}

/* Balanced Dragonfly h = 2 (a = 4, p = 2, 9 groups): minimal routes have at
 * most 5 links and cross one global link; Valiant routes between groups
 * cross two. */
static void test_dragonfly_routes(void)
{
    topo_graph g;
    char why[256];
    topo_dragonfly_config c = {.p = 2, .a = 4, .h = 2, .host_bytes_per_s = 1e9,
                               .local_bytes_per_s = 1e9, .global_bytes_per_s = 1e9};
    CHECK(topo_dragonfly(&c, &g, why, sizeof why) == 0);
    uint32_t router0 = g.n_hosts;
    for (int cls = TOPO_PATH_MINIMAL; cls <= TOPO_PATH_VALIANT; cls++) {
        topo_route_config cfg = {TOPO_BALANCE_ECMP, (enum topo_path_class)cls, 1, 3};
        topo_router *r = topo_router_create(&g, &cfg, why, sizeof why);
        CHECK(r != NULL);
        topo_usage *u = malloc(topo_route_max_usages(r) * sizeof *u);
        int bad = 0;
        for (uint32_t a = 0; a < g.n_hosts; a++)
            for (uint32_t b = 0; b < g.n_hosts; b++) {
                if (a == b)
                    continue;
                long n = topo_route(r, a, b, a * 1000 + b, NULL, u, topo_route_max_usages(r));
                int globals = 0;
                for (long i = 0; i < n; i++) {
                    uint32_t x = g.link_src[u[i].link], y = g.link_dst[u[i].link];
                    if (x >= router0 && y >= router0 && (x - router0) / 4 != (y - router0) / 4)
                        globals++;
                }
                int same_group = a / 8 == b / 8;
                if (!path_is_connected(&g, u, n, a, b))
                    bad++;
                else if (cls == TOPO_PATH_MINIMAL && (n > 5 || globals != !same_group))
                    bad++;
                else if (cls == TOPO_PATH_VALIANT && !same_group && globals != 2)
                    bad++;
            }
        CHECK_INT_EQ(bad, 0);
        free(u);
        topo_router_destroy(r);
    }
    topo_graph_fini(&g);
}

int main(void)
{
    test_share_then_speed_up();
    test_maxmin_rates();
    test_maxmin_not_monotone_per_flow();
    test_latency_and_batches();
    test_incast();
    test_incast_curve();
    test_fanin_demand();
    test_incremental_equals_full();
    test_record_bytes();
    test_link_weights();
    test_repair_fattree_and_dragonfly();
    test_fattree_routes();
    test_dragonfly_routes();
    return check_report();
}
