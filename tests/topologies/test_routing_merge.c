/* test_routing_merge.c - a route lists each link once (routing.h): the
 * usages of one connection are merged per link, the first use's place
 * kept (topologies/routing.c add_usage: a look through a short route, a
 * per-link index from ROUTE_SHORT entries on). ECMP with 16 queue pairs
 * on a 3-tier leaf-spine puts every pair on the source's uplink and the
 * destination's cable, so the routes pass ROUTE_SHORT entries and meet
 * those links again after it: each link must appear once, and the
 * weights on the source's uplink and into the destination must add to
 * exactly 1 (16 x 1/16). Spraying is checked the same way. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fattree.h"
#include "graph.h"
#include "routing.h"

static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void check_routes(const topo_graph *g, const topo_route_config *cfg, long *longest)
{
    char why[200];
    topo_router *r = topo_router_create(g, cfg, why, sizeof why);
    CHECK(r != NULL);
    if (!r)
        return;
    topo_usage *u = malloc(g->n_links * sizeof *u);
    unsigned char *seen = calloc(g->n_links, 1);
    uint64_t s = 0x5eed;
    for (unsigned i = 0; i < 2000; i++) {
        uint32_t src = (uint32_t)(next_random(&s) % g->n_hosts);
        uint32_t dst = (uint32_t)(next_random(&s) % g->n_hosts);
        long n = topo_route(r, src, dst, i, NULL, u, g->n_links);
        CHECK(n >= 0);
        if (n > *longest)
            *longest = n;
        int once = 1;
        double out_of_src = 0, into_dst = 0;
        for (long k = 0; k < n; k++) {
            once &= !seen[u[k].link];
            seen[u[k].link] = 1;
            if (g->link_src[u[k].link] == src)
                out_of_src += u[k].weight;
            if (g->link_dst[u[k].link] == dst)
                into_dst += u[k].weight;
        }
        for (long k = 0; k < n; k++)
            seen[u[k].link] = 0;
        CHECK(once);
        if (src != dst) {
            CHECK(out_of_src == 1.0);
            CHECK(into_dst == 1.0);
        }
    }
    free(seen);
    free(u);
    topo_router_destroy(r);
}

int main(void)
{
    topo_graph g;
    char why[200];
    CHECK_INT_EQ(topo_leafspine3(8, 4, 4, 4, 50e9, &g, why, sizeof why), 0);
    long longest = 0;
    topo_route_config ecmp = {.balance = TOPO_BALANCE_ECMP, .qps = 16, .seed = 7};
    check_routes(&g, &ecmp, &longest);
    CHECK(longest > 8); /* past ROUTE_SHORT, where the per-link index takes over */
    topo_route_config spray = {.balance = TOPO_BALANCE_SPRAY, .qps = 1, .seed = 7};
    check_routes(&g, &spray, &longest);
    topo_graph_fini(&g);
    return check_report();
}
