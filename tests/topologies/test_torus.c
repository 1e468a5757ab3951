/* test_torus.c - the torus kind (topologies/torus.c) built through the
 * registry, against the k-ary n-cube's closed forms (Dally and Towles 2004,
 * ch. 5): N = prod k_i routers, N p hosts, sum_i (k_i = 2 ? N/2 : N) router
 * cables and no two cables between one pair, router radix p + 2n less one
 * per dimension of 2, diameter sum_i floor(k_i/2) router hops + 2, bisection
 * 2N/k_max cables across an even largest dimension (N/2 for k_max = 2);
 * count() equal to the built graph; every route minimal (ECMP and adaptive
 * one path of 2 + sum_i min(|dx_i|, k_i - |dx_i|) links, spray weights
 * summing to that length); and the refusals. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "routing.h"
#include "stats.h"
#include "topology.h"

#define RATE 50e9

typedef struct torus_case {
    unsigned dims[TOPO_MAX_DIMS], p;
    double bisection_cables; /* 0: not asserted */
} torus_case;

static const torus_case cases[] = {
    {{8, 8, 4, 0}, 2, 64},  {{8, 8, 0, 0}, 2, 16}, {{4, 4, 4, 0}, 2, 32},
    {{8, 4, 4, 0}, 2, 32},  {{6, 4, 0, 0}, 2, 8},  {{2, 2, 2, 0}, 2, 4},
    {{4, 2, 0, 0}, 2, 4},   {{3, 5, 0, 0}, 3, 0},  {{5, 0, 0, 0}, 1, 0},
    {{2, 0, 0, 0}, 4, 0},   {{2, 3, 2, 3}, 1, 0},  {{16, 16, 16, 0}, 1, 512},
};

static const topo_kind *torus(void)
{
    const topo_kind *k = topo_kind_find("torus");
    CHECK(k != NULL);
    return k;
}

static topo_shape shape_of(const torus_case *c)
{
    topo_shape s;
    memset(&s, 0, sizeof s);
    memcpy(s.dims, c->dims, sizeof s.dims);
    s.p = c->p;
    return s;
}

/* router index -> coordinates, x_0 slowest (torus.c) */
static void coords(const topo_shape *s, uint32_t r, unsigned *x)
{
    for (int i = TOPO_MAX_DIMS - 1; i >= 0; i--)
        if (s->dims[i]) {
            x[i] = r % s->dims[i];
            r /= s->dims[i];
        }
}

static unsigned torus_distance(const topo_shape *s, uint32_t a, uint32_t b)
{
    unsigned xa[TOPO_MAX_DIMS] = {0}, xb[TOPO_MAX_DIMS] = {0}, d = 0;
    coords(s, a, xa);
    coords(s, b, xb);
    for (int i = 0; i < TOPO_MAX_DIMS && s->dims[i]; i++) {
        unsigned dx = xa[i] > xb[i] ? xa[i] - xb[i] : xb[i] - xa[i];
        d += dx < s->dims[i] - dx ? dx : s->dims[i] - dx;
    }
    return d;
}

static int no_duplicate_cables(const topo_graph *g)
{
    uint32_t n = g->n_nodes;
    unsigned char *seen = calloc((size_t)n * n, 1);
    int ok = seen != NULL;
    for (uint32_t l = 0; ok && l < g->n_links; l += 2) {
        uint32_t a = g->link_src[l], b = g->link_dst[l];
        if (a == b || seen[(size_t)a * n + b])
            ok = 0;
        else
            seen[(size_t)a * n + b] = seen[(size_t)b * n + a] = 1;
    }
    free(seen);
    return ok;
}

static void test_counts(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const torus_case *c = &cases[i];
        topo_shape s = shape_of(c);
        unsigned N = 1, cables = 0, radix = c->p, diameter = 2, kmax = 0;
        for (int d = 0; d < TOPO_MAX_DIMS && c->dims[d]; d++)
            N *= c->dims[d];
        for (int d = 0; d < TOPO_MAX_DIMS && c->dims[d]; d++) {
            unsigned k = c->dims[d];
            cables += k == 2 ? N / 2 : N;
            radix += k == 2 ? 1 : 2;
            diameter += k / 2;
            kmax = k > kmax ? k : kmax;
        }
        topo_graph g;
        char why[256];
        topo_counts n;
        CHECK_INT_EQ(torus()->count(&s, N * c->p, 1, &n, why, sizeof why), 0);
        CHECK_INT_EQ(torus()->build(&s, N * c->p, 1, RATE, &g, why, sizeof why), 0);
        topo_stats st;
        CHECK_INT_EQ(topo_stats_compute(&g, &st, why, sizeof why), 0);
        CHECK_INT_EQ(st.n_hosts, N * c->p);
        CHECK_INT_EQ(st.switches_per_tier[1], N);
        CHECK_INT_EQ(st.n_switches, N);
        CHECK_INT_EQ(st.cables_per_tier[0], N * c->p);
        CHECK_INT_EQ(st.cables_per_tier[1], cables);
        CHECK_INT_EQ(st.max_switch_radix, radix);
        CHECK_INT_EQ(st.diameter_links, diameter);
        CHECK(no_duplicate_cables(&g));
        CHECK_INT_EQ(n.hosts, st.n_hosts);
        CHECK_INT_EQ(n.switches[1], st.switches_per_tier[1]);
        CHECK_INT_EQ(n.cables[0], st.cables_per_tier[0]);
        CHECK_INT_EQ(n.cables[1], st.cables_per_tier[1]);
        CHECK_INT_EQ(n.groups, 0);
        CHECK_INT_EQ(n.updown, g.updown);
        if (c->bisection_cables > 0) {
            CHECK_INT_EQ(c->dims[0], kmax); /* the id-order halves cut dimension 0 */
            CHECK_INT_EQ(c->bisection_cables, kmax == 2 ? N / 2 : 2 * N / kmax);
            CHECK_REL(st.bisection_bytes_per_s, c->bisection_cables * RATE, 1e-12);
        }
        topo_graph_fini(&g);
    }
}

/* every pair of hosts: a minimal route, for each balancing rule */
static void test_minimal_routes(void)
{
    const torus_case small[] = {{{4, 4, 0, 0}, 2, 0}, {{3, 2, 4, 0}, 1, 0}, {{5, 0, 0, 0}, 1, 0}};
    for (size_t i = 0; i < sizeof small / sizeof small[0]; i++) {
        topo_shape s = shape_of(&small[i]);
        topo_graph g;
        char why[256];
        CHECK_INT_EQ(torus()->build(&s, 1, 1, RATE, &g, why, sizeof why), 0);
        for (int bal = 0; bal < TOPO_BALANCE_COUNT; bal++) {
            topo_route_config cfg = {(enum topo_balance)bal, TOPO_PATH_MINIMAL, 1, 5};
            topo_router *r = topo_router_create(&g, &cfg, why, sizeof why);
            CHECK(r != NULL);
            size_t cap = topo_route_max_usages(r);
            topo_usage *u = malloc(cap * sizeof *u);
            int bad = 0;
            for (uint32_t a = 0; a < g.n_hosts; a++)
                for (uint32_t b = 0; b < g.n_hosts; b++) {
                    if (a == b)
                        continue;
                    long n = topo_route(r, a, b, (uint64_t)a * 1000 + b, NULL, u, cap);
                    double hops = 2 + torus_distance(&s, a / s.p, b / s.p), sum = 0;
                    for (long k = 0; k < n; k++)
                        sum += u[k].weight;
                    if (n <= 0 || (bal != TOPO_BALANCE_SPRAY && n != (long)hops) ||
                        sum < hops - 1e-9 || sum > hops + 1e-9)
                        bad++;
                }
            CHECK_INT_EQ(bad, 0);
            free(u);
            topo_router_destroy(r);
        }
        topo_graph_fini(&g);
    }
}

static void test_refusals(void)
{
    const topo_kind *k = torus();
    topo_shape s;
    memset(&s, 0, sizeof s);
    char why[256];
    const char *bad[] = {"", "8x", "x8", "8x1", "8xx8", "8x8x8x8x8", "8X8", "4097", "8x8 ", "-8"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(k->attrs[0].parse(bad[i], &s, why, sizeof why) != 0);
        CHECK_CONTAINS(why, "routers per dimension, each a whole number from 2 to 4096");
    }
    CHECK_STR_EQ(k->attrs[0].name, "dims");
    CHECK_INT_EQ(k->attrs[0].parse("16x8x2x4096", &s, why, sizeof why), 0);
    CHECK_INT_EQ(s.dims[0], 16);
    CHECK_INT_EQ(s.dims[3], 4096);
    CHECK_INT_EQ(k->attrs[0].parse("8x4", &s, why, sizeof why), 0);
    CHECK_INT_EQ(s.dims[2], 0);
    topo_counts n;
    s.p = 0;
    CHECK(k->count(&s, 1, 1, &n, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "at least one host per router");
    s.p = 2;
    CHECK(k->count(&s, 65, 1, &n, why, sizeof why) != 0);
    CHECK_STR_EQ(why, "the torus dims=8x4 has 32 routers x 2 hosts-per-router = 64 host ports, "
                      "fewer than the 65 GPUs");
    s.dims[0] = 1;
    CHECK(k->count(&s, 1, 1, &n, why, sizeof why) != 0);
    CHECK_STR_EQ(why, "torus dimension 1 has 1 routers: 2 to 4096");
    memset(s.dims, 0, sizeof s.dims);
    CHECK(k->count(&s, 1, 1, &n, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "dims=\"8x8x4\"");
    s.dims[0] = s.dims[1] = s.dims[2] = 4096;
    CHECK(k->count(&s, 1, 1, &n, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "dims=4096x4096x4096 with 2 hosts per router");
    CHECK_CONTAINS(why, "more than 2^31");
    /* no groups to detour through */
    topo_graph g;
    s.dims[0] = s.dims[1] = 4, s.dims[2] = 0;
    CHECK_INT_EQ(k->build(&s, 1, 1, RATE, &g, why, sizeof why), 0);
    topo_route_config cfg = {TOPO_BALANCE_ECMP, TOPO_PATH_VALIANT, 1, 5};
    CHECK(topo_router_create(&g, &cfg, why, sizeof why) == NULL);
    CHECK_STR_EQ(why, "valiant routing needs at least 3 switch groups (a third group to detour "
                      "through), the topology has 0");
    topo_graph_fini(&g);
}

int main(void)
{
    test_counts();
    test_minimal_routes();
    test_refusals();
    return check_report();
}
