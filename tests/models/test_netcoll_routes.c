/* test_netcoll_routes.c - the kept coupled routes (models/netcoll_routes.c):
 * every route read back exactly (links, weights by bits, the phase weight)
 * across table growth and pool growth, keyed by plan address and phase;
 * a route with more than 256 distinct weights, an empty one, a second put
 * of one key and a put past the usage bound are refused without changing
 * what was kept. And on an executor (netcoll_exec.c): plans started again
 * and again on a k = 8 fat-tree with ECMP finish at exactly (bit for bit)
 * the times they do without kept routes, with the same link bytes; an
 * adaptive router keeps nothing. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "engine.h"
#include "netcoll_exec.h"
#include "netcoll_routes.h"
#include "fattree.h"

enum { PLANS = 700, PHASES = 3, MAX_LEN = 600 };

/* route (plan k, phase i): length and usage j, a pattern of few weights */
static uint32_t route_len(int k, uint32_t i) { return 1 + (uint32_t)(k * 7 + i * 13) % MAX_LEN; }
static topo_usage route_use(int k, uint32_t i, uint32_t j)
{
    return (topo_usage){(uint32_t)(k * 1000 + i * 100) + j, 0.1 * (double)(1 + (j + k) % 5)};
}

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

static void test_round_trip(void)
{
    static char plans[PLANS]; /* their addresses are the keys */
    nc_route_cache *c = nc_route_cache_create((size_t)1 << 22);
    CHECK(c != NULL);
    topo_usage *u = malloc(MAX_LEN * sizeof *u), *out = malloc(MAX_LEN * sizeof *out);
    size_t stored = 0;
    for (int k = 0; k < PLANS; k++)
        for (uint32_t i = 0; i < PHASES; i++) {
            uint32_t n = route_len(k, i);
            for (uint32_t j = 0; j < n; j++)
                u[j] = route_use(k, i, j);
            CHECK_INT_EQ(nc_route_cache_put(c, &plans[k], i, u, n, 1.5 * k + i), 0);
            stored += n;
        }
    CHECK_INT_EQ(nc_route_cache_put(c, &plans[3], 1, u, 4, 9.0), -1); /* kept already */
    int wrong = 0;
    for (int k = 0; k < PLANS; k++)
        for (uint32_t i = 0; i < PHASES; i++) {
            double w = -1;
            size_t n = nc_route_cache_find(c, &plans[k], i, out, &w);
            wrong += n != route_len(k, i) || w != 1.5 * k + i;
            for (uint32_t j = 0; j < n && j < route_len(k, i); j++) {
                topo_usage e = route_use(k, i, j);
                wrong += out[j].link != e.link || !same_bits(out[j].weight, e.weight);
            }
        }
    CHECK_INT_EQ(wrong, 0);
    double w = 0;
    CHECK_INT_EQ(nc_route_cache_find(c, &plans[0], PHASES, out, &w), 0); /* never put */
    CHECK(nc_route_cache_bytes(c) >= stored * 5);
    nc_route_cache_free(c);
    free(u);
    free(out);
}

static void test_refusals(void)
{
    static char plan[4];
    nc_route_cache *c = nc_route_cache_create(1000);
    topo_usage u[300], out[300];
    for (uint32_t j = 0; j < 300; j++)
        u[j] = (topo_usage){j, 1.0 + j}; /* 300 distinct weights: more than a byte codes */
    CHECK_INT_EQ(nc_route_cache_put(c, &plan[0], 0, u, 300, 1), -1);
    CHECK_INT_EQ(nc_route_cache_put(c, &plan[0], 0, u, 0, 1), -1); /* nothing to keep */
    for (uint32_t j = 0; j < 300; j++)
        u[j].weight = 1.0 + j % 256;
    CHECK_INT_EQ(nc_route_cache_put(c, &plan[0], 0, u, 300, 2), 0); /* 256: kept */
    CHECK_INT_EQ(nc_route_cache_put(c, &plan[1], 0, u, 300, 2), 0);
    CHECK_INT_EQ(nc_route_cache_put(c, &plan[2], 0, u, 300, 2), 0);
    CHECK_INT_EQ(nc_route_cache_put(c, &plan[3], 0, u, 300, 2), -1); /* 1,200 > 1,000 */
    double w = 0;
    CHECK_INT_EQ(nc_route_cache_find(c, &plan[3], 0, out, &w), 0);
    CHECK_INT_EQ(nc_route_cache_find(c, &plan[2], 0, out, &w), 300);
    CHECK(out[299].link == 299 && out[299].weight == 1.0 + 299 % 256 && w == 2);
    nc_route_cache_free(c);
    nc_route_cache_free(NULL);
}

enum { RUN_PLANS = 6, STARTS = 4 };

typedef struct exec_run {
    sim_engine *eng;
    nc_exec *x;
    nc_plan *plans;
    double done[RUN_PLANS * STARTS];
    int failed;
} exec_run;

static void plan_done(void *ctx, uint64_t tag)
{
    exec_run *e = ctx;
    e->done[tag] = sim_now(e->eng);
}

/* start plan tag / STARTS at its planned time: each plan STARTS times,
 * staggered so that the runs overlap and share links */
static void start_one(sim_engine *eng, void *ctx, uint64_t tag)
{
    (void)eng;
    exec_run *e = ctx;
    e->failed |= nc_exec_start(e->x, &e->plans[tag / STARTS], 0, plan_done, e, tag, NULL) != 0;
}

static void run_plans(const nc_fabric *f, nc_plan *plans, int keep, exec_run *e,
                      double *link_bytes)
{
    memset(e, 0, sizeof *e);
    e->eng = sim_engine_create();
    e->x = nc_exec_create(e->eng, f);
    e->plans = plans;
    CHECK(nc_exec_keep_routes(e->x, keep ? (size_t)1 << 20 : 0) == 0);
    for (uint64_t t = 0; t < RUN_PLANS * STARTS; t++)
        sim_schedule_at(e->eng, 0.0007 * (double)(t % STARTS) + 0.0001 * (double)(t / STARTS), 0,
                        0, start_one, e, t);
    sim_run(e->eng, INFINITY);
    flow_net *net = nc_exec_net(e->x);
    for (uint32_t l = 0; l < f->g->n_links; l++)
        link_bytes[l] = flow_net_link_bytes(net, l);
    CHECK(flow_net_check(net, NULL) == 0);
    CHECK(!e->failed);
}

static void test_executor(void)
{
    char why[256];
    topo_graph g;
    CHECK(topo_fattree_kary(8, 50e9, &g, why, sizeof why) == 0);
    for (int adaptive = 0; adaptive < 2; adaptive++) {
        topo_route_config rc = {adaptive ? TOPO_BALANCE_ADAPTIVE : TOPO_BALANCE_ECMP,
                                TOPO_PATH_MINIMAL, 2, 7};
        topo_router *r = topo_router_create(&g, &rc, why, sizeof why);
        nc_fabric f;
        nc_fabric_defaults(&f);
        f.g = &g;
        f.router = r;
        nc_plan plans[RUN_PLANS];
        uint32_t ranks[128], src[128], dst[128];
        for (int k = 0; k < RUN_PLANS; k++) { /* rings over strided ranks, and shifts */
            unsigned n = 16 + 8 * (unsigned)k;
            for (unsigned i = 0; i < n; i++) {
                ranks[i] = (i * (unsigned)(k + 3) + (unsigned)k) % g.n_hosts;
                src[i] = i;
                dst[i] = (i + 9 + (unsigned)k) % g.n_hosts;
            }
            if (k % 2 == 0)
                CHECK(nc_plan_build(&plans[k], &f, NC_ALLREDUCE, NC_ALGO_RING, ranks, n,
                                    64e6 * (k + 1), NULL) == 0);
            else {
                CHECK(nc_plan_permutation(&plans[k], &f, src, dst, n, 32e6 * k, NULL) == 0);
                plans[k].phase[0].coupled = 1; /* as the step tier's PP sends */
            }
        }
        exec_run with, without;
        double *bytes_with = calloc(g.n_links, sizeof(double));
        double *bytes_without = calloc(g.n_links, sizeof(double));
        run_plans(&f, plans, 1, &with, bytes_with);
        size_t kept = nc_exec_kept_route_bytes(with.x);
        run_plans(&f, plans, 0, &without, bytes_without);
        CHECK(adaptive ? kept == 0 : kept > 0);
        int differ = 0;
        for (int t = 0; t < RUN_PLANS * STARTS; t++)
            differ += !same_bits(with.done[t], without.done[t]) || !(with.done[t] > 0);
        for (uint32_t l = 0; l < g.n_links; l++)
            differ += !same_bits(bytes_with[l], bytes_without[l]);
        CHECK_INT_EQ(differ, 0);
        for (exec_run *e = &with; e; e = e == &with ? &without : NULL) {
            nc_exec_destroy(e->x);
            sim_engine_destroy(e->eng);
        }
        for (int k = 0; k < RUN_PLANS; k++)
            nc_plan_free(&plans[k]);
        free(bytes_with);
        free(bytes_without);
        topo_router_destroy(r);
    }
    topo_graph_fini(&g);
}

int main(void)
{
    test_executor();
    test_round_trip();
    test_refusals();
    return check_report();
}
