/* test_routing_memo.c - the router keeps next_links' answers per (switch,
 * destination switch) (topologies/routing.c next_links_kept): they must
 * give exactly the routes computed afresh. Two routers on the same graph,
 * one with the kept answers off,
 * route the same random pairs under the same moving load (each route's
 * usages added to it, as the flow model's routing does within a phase),
 * for every balancing rule, on a 3-tier leaf-spine, the same with links
 * down (tables over the links left), and a Dragonfly under UGAL: every
 * route equal link for link and weight for weight (bits). The kept lists
 * are held once each: far fewer than the pairs asked. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dragonfly.h"
#include "fattree.h"
#include "graph.h"
#include "routing.h"
#include "routing_internal.h"

#define PAIRS 4000u

static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* routes of PAIRS random host pairs by a (kept answers) and b (none kept)
 * under one load each; returns the routes that differ */
static unsigned compare_routers(const topo_graph *g, const topo_route_config *cfg,
                                size_t *distinct_lists)
{
    char why[200];
    topo_router *a = topo_router_create(g, cfg, why, sizeof why);
    topo_router *b = topo_router_create(g, cfg, why, sizeof why);
    CHECK(a != NULL && b != NULL);
    if (!a || !b) {
        topo_router_destroy(a);
        topo_router_destroy(b);
        return 1;
    }
    b->memo_off = 1;
    double *load_a = calloc(g->n_links, sizeof *load_a);
    double *load_b = calloc(g->n_links, sizeof *load_b);
    topo_usage *ua = malloc(g->n_links * sizeof *ua), *ub = malloc(g->n_links * sizeof *ub);
    uint64_t s = 0x9e3779b97f4a7c15u;
    unsigned differ = 0;
    for (unsigned i = 0; i < PAIRS; i++) {
        uint32_t src = (uint32_t)(next_random(&s) % g->n_hosts);
        uint32_t dst = (uint32_t)(next_random(&s) % g->n_hosts);
        long na = topo_route(a, src, dst, i, load_a, ua, g->n_links);
        long nb = topo_route(b, src, dst, i, load_b, ub, g->n_links);
        int same = na == nb;
        for (long k = 0; same && k < na; k++)
            same = ua[k].link == ub[k].link &&
                   !memcmp(&ua[k].weight, &ub[k].weight, sizeof ua[k].weight);
        differ += !same;
        for (long k = 0; k < na; k++)
            load_a[ua[k].link] += ua[k].weight * (1 + (i % 3));
        for (long k = 0; k < nb; k++)
            load_b[ub[k].link] += ub[k].weight * (1 + (i % 3));
        if (i % 500 == 499) /* some load leaves: pressures fall as well as rise */
            for (uint32_t l = 0; l < g->n_links; l += 3)
                load_a[l] = load_b[l] = 0;
    }
    if (distinct_lists)
        *distinct_lists = a->memo_lists_n;
    CHECK(b->memo == NULL);
    free(load_a);
    free(load_b);
    free(ua);
    free(ub);
    topo_router_destroy(a);
    topo_router_destroy(b);
    return differ;
}

static void test_clos3(void)
{
    topo_graph g;
    char why[200];
    CHECK_INT_EQ(topo_leafspine3(8, 4, 4, 4, 50e9, &g, why, sizeof why), 0);
    for (int bal = 0; bal < TOPO_BALANCE_COUNT; bal++) {
        topo_route_config cfg = {.balance = (enum topo_balance)bal, .qps = 1, .seed = 11};
        size_t lists = 0;
        CHECK_INT_EQ(compare_routers(&g, &cfg, &lists), 0);
        /* every (switch, destination) pair of 80 switches could have its own;
         * spray walks every next link at once and keeps none */
        CHECK(bal == TOPO_BALANCE_SPRAY ? lists == 0 : lists > 0 && lists < 80u * 80u / 4);
    }
    /* with links down: tables over the links left (full_tables) */
    double *speed = malloc(g.n_links * sizeof *speed);
    for (uint32_t l = 0; l < g.n_links; l++)
        speed[l] = 1;
    for (uint32_t l = 0; l < g.n_links; l++) /* two switch-to-switch cables, both halves */
        if (g.node_kind[g.link_src[l]] == TOPO_SWITCH && g.node_kind[g.link_dst[l]] == TOPO_SWITCH &&
            (l / 2) % 37 == 5)
            speed[l] = 0;
    topo_graph d;
    CHECK_INT_EQ(topo_graph_degrade(&g, speed, &d), 0);
    CHECK(d.link_is_down != NULL);
    topo_route_config cfg = {.balance = TOPO_BALANCE_ADAPTIVE, .qps = 1, .seed = 5};
    CHECK_INT_EQ(compare_routers(&d, &cfg, NULL), 0);
    topo_graph_fini(&d);
    free(speed);
    topo_graph_fini(&g);
}

static void test_dragonfly_ugal(void)
{
    topo_dragonfly_config c = {2, 4, 2, 0, 50e9, 50e9, 50e9, (enum topo_dragonfly_arrangement)0};
    topo_graph g;
    char why[200];
    CHECK_INT_EQ(topo_dragonfly(&c, &g, why, sizeof why), 0);
    for (int pc = 0; pc < TOPO_PATH_COUNT; pc++) {
        topo_route_config cfg = {.balance = TOPO_BALANCE_ADAPTIVE,
                                 .path_class = (enum topo_path_class)pc, .qps = 1, .seed = 3};
        CHECK_INT_EQ(compare_routers(&g, &cfg, NULL), 0);
    }
    topo_graph_fini(&g);
}

int main(void)
{
    test_clos3();
    test_dragonfly_ugal();
    return check_report();
}
