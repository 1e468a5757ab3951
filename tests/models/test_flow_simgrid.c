/* test_flow_simgrid.c - dcsim's flow model (models/flow.h) against SimGrid's
 * max-min solver as an independent oracle (tests/models/simgrid_oracle.h).
 *
 * Each case builds a dcsim fabric, runs a set of flows through dcsim's
 * engine (routes chosen by topo_route at each flow's start, single path,
 * ECMP, adaptive or UGAL), records every flow's route and completion time,
 * then gives SimGrid the same directed links and capacities, the same
 * start times, sizes and routes, configured as pure max-min (latency 0,
 * weight 1, no cross-traffic: simgrid_oracle.c). Both solve the same
 * problem, so every flow's duration (completion - start) must agree within
 * relative 1e-6. Cases: random flow sets on k = 4 and k = 8 fat-trees and a
 * Dragonfly, and a ring over the 1,024 hosts of a k = 16 fat-tree. Prints
 * one line per case: flows and the largest relative difference.
 * docs/fabric.md "Validation" has the measured numbers.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "dragonfly.h"
#include "engine.h"
#include "fattree.h"
#include "flow.h"
#include "routing.h"
#include "simgrid_oracle.h"

#define REL_TOL 1e-6

typedef struct oracle_case {
    const char *name;
    topo_graph g;
    topo_route_config route;
    uint32_t n_flows;
    uint32_t *src, *dst;
    double *start_s, *bytes;
    /* filled by run_dcsim */
    uint32_t *route_offset, *route_link; /* CSR of the chosen routes */
    double *dcsim_done_s;
} oracle_case;

/* splitmix64: a fixed seed gives the same cases on every machine */
static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double uniform01(uint64_t *s) { return (double)(next_u64(s) >> 11) * 0x1.0p-53; }

static int case_alloc(oracle_case *c, uint32_t n_flows)
{
    c->n_flows = n_flows;
    c->src = calloc(n_flows, sizeof *c->src);
    c->dst = calloc(n_flows, sizeof *c->dst);
    c->start_s = calloc(n_flows, sizeof *c->start_s);
    c->bytes = calloc(n_flows, sizeof *c->bytes);
    c->dcsim_done_s = calloc(n_flows, sizeof *c->dcsim_done_s);
    c->route_offset = calloc(n_flows + 1, sizeof *c->route_offset);
    return c->src && c->dst && c->start_s && c->bytes && c->dcsim_done_s && c->route_offset
               ? 0
               : -1;
}

static void case_free(oracle_case *c)
{
    free(c->src), free(c->dst), free(c->start_s), free(c->bytes), free(c->dcsim_done_s);
    free(c->route_offset), free(c->route_link);
    topo_graph_fini(&c->g);
}

/* n flows between random distinct hosts, sizes log-uniform in 1 MB .. 10 GB
 * (whole bytes: SimGrid takes a long), starts uniform in [0, horizon_s). */
static int random_flows(oracle_case *c, uint32_t n, double horizon_s, uint64_t seed)
{
    if (case_alloc(c, n) != 0)
        return -1;
    uint64_t s = seed;
    uint32_t hosts = c->g.n_hosts;
    for (uint32_t f = 0; f < n; f++) {
        c->src[f] = (uint32_t)(next_u64(&s) % hosts);
        c->dst[f] = (uint32_t)((c->src[f] + 1 + next_u64(&s) % (hosts - 1)) % hosts);
        c->bytes[f] = floor(pow(10.0, 6.0 + 4.0 * uniform01(&s)));
        c->start_s[f] = horizon_s * uniform01(&s);
    }
    return 0;
}

typedef struct dcsim_run {
    oracle_case *c;
    sim_engine *eng;
    flow_net *net;
    topo_router *r;
    topo_usage *u;
    size_t max_u;
    uint32_t *n_hops, *hops; /* hops: max_u slots per flow */
    int failed;
} dcsim_run;

static void on_start(sim_engine *eng, void *ctx, uint64_t f)
{
    (void)eng;
    dcsim_run *run = ctx;
    oracle_case *c = run->c;
    long n = topo_route(run->r, c->src[f], c->dst[f], f, flow_net_link_load(run->net), run->u,
                        run->max_u);
    if (n <= 0) {
        run->failed = 1;
        return;
    }
    for (long i = 0; i < n; i++) {
        if (run->u[i].weight != 1.0) /* a single path: SimGrid routes have no weights */
            run->failed = 1;
        run->hops[f * run->max_u + (size_t)i] = run->u[i].link;
    }
    run->n_hops[f] = (uint32_t)n;
    if (flow_start(run->net, run->u, (size_t)n, c->bytes[f], INFINITY, 0, f) == UINT32_MAX)
        run->failed = 1;
}

static void on_done(void *ctx, uint32_t flow, uint64_t tag)
{
    (void)flow;
    dcsim_run *run = ctx;
    run->c->dcsim_done_s[tag] = sim_now(run->eng);
}

/* Run the case through dcsim; fill route_* and dcsim_done_s. 0 or -1. */
static int run_dcsim(oracle_case *c)
{
    char why[256];
    dcsim_run run = {.c = c, .eng = sim_engine_create()};
    run.r = topo_router_create(&c->g, &c->route, why, sizeof why);
    if (!run.eng || !run.r) {
        fprintf(stderr, "%s: %s\n", c->name, run.r ? "no engine" : why);
        sim_engine_destroy(run.eng), topo_router_destroy(run.r);
        return -1;
    }
    run.max_u = topo_route_max_usages(run.r);
    run.u = malloc(run.max_u * sizeof *run.u);
    run.n_hops = calloc(c->n_flows, sizeof *run.n_hops);
    run.hops = malloc(c->n_flows * run.max_u * sizeof *run.hops);
    run.net = flow_net_create(run.eng, c->g.n_links, c->g.link_bytes_per_s, on_done, &run);
    run.failed = !run.u || !run.n_hops || !run.hops || !run.net;
    for (uint32_t f = 0; f < c->n_flows && !run.failed; f++) {
        c->dcsim_done_s[f] = -1;
        if (!sim_schedule_at(run.eng, c->start_s[f], 0, 1, on_start, &run, f))
            run.failed = 1;
    }
    if (!run.failed && sim_run(run.eng, INFINITY) != SIM_RUN_EMPTY)
        run.failed = 1;
    if (!run.failed) {
        CHECK_INT_EQ(flow_net_stats(run.net)->flows_finished, c->n_flows);
        CHECK(flow_net_check(run.net, NULL) == 0);
        size_t total = 0;
        for (uint32_t f = 0; f < c->n_flows; f++)
            total += run.n_hops[f];
        c->route_link = malloc((total ? total : 1) * sizeof *c->route_link);
        run.failed = !c->route_link;
    }
    for (uint32_t f = 0; f < c->n_flows && !run.failed; f++) {
        c->route_offset[f + 1] = c->route_offset[f] + run.n_hops[f];
        for (uint32_t i = 0; i < run.n_hops[f]; i++)
            c->route_link[c->route_offset[f] + i] = run.hops[f * run.max_u + i];
    }
    free(run.u), free(run.n_hops), free(run.hops);
    flow_net_destroy(run.net);
    topo_router_destroy(run.r);
    sim_engine_destroy(run.eng);
    return run.failed ? -1 : 0;
}

/* The smallest capacity on flow f's route: its rate when alone. */
static double bottleneck(const oracle_case *c, uint32_t f)
{
    double least = INFINITY;
    for (uint32_t i = c->route_offset[f]; i < c->route_offset[f + 1]; i++)
        least = fmin(least, c->g.link_bytes_per_s[c->route_link[i]]);
    return least;
}

/* Run dcsim and SimGrid on the case, compare durations, print one line. */
static void compare_case(oracle_case *c)
{
    int ok = run_dcsim(c) == 0;
    CHECK(ok);
    double *sg_done = malloc(c->n_flows * sizeof *sg_done);
    char why[256] = "";
    if (ok) {
        sg_flow_set s = {c->g.n_links, c->g.link_bytes_per_s, c->n_flows, c->start_s, c->bytes,
                         c->route_offset, c->route_link};
        ok = sg_done && sg_oracle_run(&s, sg_done, why, sizeof why) == 0;
        if (!ok)
            fprintf(stderr, "%s: SimGrid: %s\n", c->name, why);
        CHECK(ok);
    }
    double worst = 0;
    uint32_t worst_f = 0, unfinished = 0, over = 0, slowed = 0;
    for (uint32_t f = 0; ok && f < c->n_flows; f++) {
        if (c->dcsim_done_s[f] < c->start_s[f]) {
            unfinished++;
            continue;
        }
        double d_dc = c->dcsim_done_s[f] - c->start_s[f], d_sg = sg_done[f] - c->start_s[f];
        double rel = fabs(d_dc - d_sg) / d_sg;
        double alone_s = c->bytes[f] / bottleneck(c, f);
        slowed += d_dc > alone_s * (1 + 1e-9); /* it shared a link at some time */
        if (!(rel <= REL_TOL))
            over++;
        if (!(rel <= worst)) {
            worst = rel;
            worst_f = f;
        }
    }
    if (ok) {
        printf("simgrid-oracle %-37s flows %5u (%5u slowed by sharing)  max relative "
               "difference %.3g\n", c->name, c->n_flows, slowed, worst);
        if (over)
            fprintf(stderr, "%s: flow %u: dcsim %.17g s, SimGrid %.17g s (start %.17g s)\n",
                    c->name, worst_f, c->dcsim_done_s[worst_f], sg_done[worst_f],
                    c->start_s[worst_f]);
    }
    CHECK_INT_EQ(unfinished, 0);
    CHECK_INT_EQ(over, 0);
    free(sg_done);
}

/* The oracle itself against closed forms, so a misconfigured SimGrid (LV08's
 * 0.97 bandwidth factor, weights by route, cross-traffic) cannot pass:
 * link 0 (100 B/s) carries 100 B and 300 B: 50 B/s each, then the long one
 * alone: done at 2 s and 4 s. Links 1 (10 B/s) and 2 (20 B/s): a on 1, b on
 * 1 and 2, c on 2 (the textbook a = b = 5, c = 15); a and b (50 B) end at
 * 10 s, c (300 B) has 150 B left at 20 B/s: 17.5 s. */
static void test_oracle_closed_form(void)
{
    double cap[3] = {100, 10, 20}, start[5] = {0}, bytes[5] = {100, 300, 50, 50, 300};
    uint32_t off[6] = {0, 1, 2, 3, 5, 6}, link[6] = {0, 0, 1, 1, 2, 2};
    double want[5] = {2, 4, 10, 10, 17.5}, got[5];
    sg_flow_set s = {3, cap, 5, start, bytes, off, link};
    char why[256] = "";
    int rc = sg_oracle_run(&s, got, why, sizeof why);
    if (rc != 0)
        fprintf(stderr, "closed form: SimGrid: %s\n", why);
    CHECK(rc == 0);
    for (int f = 0; rc == 0 && f < 5; f++)
        CHECK_REL(got[f], want[f], 1e-12);
}

static void fattree_case(const char *name, unsigned k, uint32_t n, enum topo_balance balance,
                         double jitter, uint64_t seed)
{
    oracle_case c = {.name = name, .route = {balance, TOPO_PATH_MINIMAL, 1, seed}};
    char why[256];
    CHECK(topo_fattree_kary(k, 50e9, &c.g, why, sizeof why) == 0);
    /* jitter: capacities spread over [1 - j, 1 + j) x 50 GB/s, so few links
     * saturate at the same instant (j = 0 keeps the builder's equal rates
     * and their many ties) */
    uint64_t s = seed ^ 0x5151;
    for (uint32_t l = 0; l < c.g.n_links; l++)
        c.g.link_bytes_per_s[l] *= 1.0 + jitter * (2.0 * uniform01(&s) - 1.0);
    CHECK(random_flows(&c, n, 0.2, seed) == 0);
    compare_case(&c);
    case_free(&c);
}

/* Dragonfly p = 2, a = 4, h = 2 (9 groups, 72 hosts) with unequal host,
 * local and global rates. */
static void dragonfly_case(const char *name, uint32_t n, enum topo_balance balance,
                           enum topo_path_class path, uint64_t seed)
{
    oracle_case c = {.name = name, .route = {balance, path, 1, seed}};
    topo_dragonfly_config dc = {.p = 2, .a = 4, .h = 2, .host_bytes_per_s = 50e9,
                                .local_bytes_per_s = 25e9, .global_bytes_per_s = 12.5e9};
    char why[256];
    CHECK(topo_dragonfly(&dc, &c.g, why, sizeof why) == 0);
    CHECK(random_flows(&c, n, 0.2, seed) == 0);
    compare_case(&c);
    case_free(&c);
}

/* A ring over the 1,024 hosts of a k = 16 fat-tree with ECMP, all flows of
 * 1 GB starting at 0: in host order every edge switch has one flow up and
 * one down, so no link is shared and every flow takes 1 GB / 50 GB/s =
 * 20 ms (checked: the closed form); in a shuffled order (ranks placed at
 * random, as a careless launcher might) most hops cross pods and ECMP
 * collisions make flows share links. */
static void ring_case(const char *name, int shuffled)
{
    oracle_case c = {.name = name, .route = {TOPO_BALANCE_ECMP, TOPO_PATH_MINIMAL, 1, 18}};
    char why[256];
    CHECK(topo_fattree_kary(16, 50e9, &c.g, why, sizeof why) == 0);
    CHECK_INT_EQ(c.g.n_hosts, 1024);
    CHECK(case_alloc(&c, c.g.n_hosts) == 0);
    uint32_t n = c.n_flows, *order = malloc(n * sizeof *order);
    CHECK(order != NULL);
    if (!order) {
        case_free(&c);
        return;
    }
    uint64_t s = 0x7e57;
    for (uint32_t i = 0; i < n; i++)
        order[i] = i;
    for (uint32_t i = n - 1; shuffled && i > 0; i--) { /* Fisher-Yates */
        uint32_t j = (uint32_t)(next_u64(&s) % (i + 1)), t = order[i];
        order[i] = order[j], order[j] = t;
    }
    for (uint32_t f = 0; f < n; f++) {
        c.src[f] = order[f];
        c.dst[f] = order[(f + 1) % n];
        c.bytes[f] = 1e9;
    }
    free(order);
    compare_case(&c);
    uint32_t not_20ms = 0;
    for (uint32_t f = 0; !shuffled && f < n; f++)
        not_20ms += fabs(c.dcsim_done_s[f] - 0.02) > 1e-15;
    CHECK_INT_EQ(not_20ms, 0);
    case_free(&c);
}

int main(void)
{
    test_oracle_closed_form();
    fattree_case("fat-tree k=4 ecmp", 4, 200, TOPO_BALANCE_ECMP, 0.0, 1);
    fattree_case("fat-tree k=8 adaptive, jittered", 8, 500, TOPO_BALANCE_ADAPTIVE, 0.3, 2);
    dragonfly_case("dragonfly 72 hosts minimal adaptive", 300, TOPO_BALANCE_ADAPTIVE,
                   TOPO_PATH_MINIMAL, 3);
    dragonfly_case("dragonfly 72 hosts ugal ecmp", 300, TOPO_BALANCE_ECMP, TOPO_PATH_UGAL, 4);
    ring_case("ring, 1024 hosts, fat-tree k=16 ecmp", 0);
    ring_case("ring, shuffled, fat-tree k=16 ecmp", 1);
    return check_report();
}
