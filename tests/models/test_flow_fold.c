/* test_flow_fold.c - exact symmetry folding (models/flow_fold.h): the
 * equitable partition on closed-form cases, and folded against unfolded
 * flow simulations on small fat-trees and Dragonflies (every flow's finish
 * time equal to its representative's, relative 1e-9), with folding that
 * shrinks where the fabric is symmetric and stops where it is not. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "dragonfly.h"
#include "engine.h"
#include "fattree.h"
#include "flow.h"
#include "flow_fold.h"
#include "routing.h"

/* Four flows, each on its own host link (1 B/s) and all on one shared link
 * (2 B/s): one flow cell, link cells {hosts} and {shared}; the quotient of
 * a flow puts 4 x 1 / 4 = 1 on the host cell and 4 x 1 / 1 = 4 on the
 * shared one, so its rate is min(1, 2 / 4) = 0.5, as unfolded. */
static void test_star(void)
{
    topo_usage u[8];
    size_t off[5];
    uint64_t colour[4] = {7, 7, 7, 7};
    for (uint32_t f = 0; f < 4; f++) {
        off[f] = 2 * f;
        u[2 * f] = (topo_usage){f, 1.0};
        u[2 * f + 1] = (topo_usage){4, 1.0};
    }
    off[4] = 8;
    double cap[5] = {1, 1, 1, 1, 2};
    flow_fold fd;
    sim_error err;
    sim_error_clear(&err);
    CHECK(flow_fold_build(4, colour, off, u, 5, cap, &fd, &err) == 0);
    CHECK_INT_EQ(fd.n_flow_cells, 1);
    CHECK_INT_EQ(fd.n_link_cells, 2);
    CHECK_INT_EQ(fd.flow_cell_size[0], 4);
    CHECK_INT_EQ(fd.flow_cell_rep[0], 0);
    topo_usage q[2];
    CHECK_INT_EQ(flow_fold_quotient(&fd, 2, u + 4, 2, q), 2);
    CHECK_NEAR(q[0].weight, 1.0, 1e-15);
    CHECK_NEAR(q[1].weight, 4.0, 1e-15);
    CHECK_NEAR(fd.link_cell_capacity[q[1].link], 2.0, 0);
    flow_fold_free(&fd);
    /* a colour apart (a straggler's bigger send): its own cell, and the
     * host links split into its link and the other three */
    colour[3] = 8;
    CHECK(flow_fold_build(4, colour, off, u, 5, cap, &fd, &err) == 0);
    CHECK_INT_EQ(fd.n_flow_cells, 2);
    CHECK_INT_EQ(fd.n_link_cells, 3);
    flow_fold_free(&fd);
    /* watched pairs: flows 0 and 1 stay together (the partition as
     * built); flow 3 on a slower host link splits from 0 in the first
     * round, and the refinement stops there */
    colour[3] = 7;
    cap[3] = 0.5;
    const uint32_t together[2] = {0, 1}, apart[2] = {0, 3};
    CHECK(flow_fold_watch(4, colour, off, u, 5, cap, together, 1, &fd, &err) == 0);
    CHECK_INT_EQ(fd.split, 0);
    CHECK_INT_EQ(fd.n_flow_cells, 2);
    CHECK(fd.flow_cell[0] == fd.flow_cell[1] && fd.flow_cell[0] != fd.flow_cell[3]);
    flow_fold_free(&fd);
    CHECK(flow_fold_watch(4, colour, off, u, 5, cap, apart, 1, &fd, &err) == 0);
    CHECK_INT_EQ(fd.split, 1);
    CHECK_INT_EQ(fd.rounds, 1);
    flow_fold_free(&fd);
    cap[3] = 1;
    /* bad input is refused, not folded */
    u[0].weight = 0;
    CHECK(flow_fold_build(4, colour, off, u, 5, cap, &fd, &err) == SIM_ERR_INTERNAL);
    CHECK(fd.flow_cell == NULL);
}

/* ---- folded against unfolded simulations ---- */

enum { MAX_FLOWS = 4096 };

typedef struct traffic {
    uint32_t n;
    uint32_t src[MAX_FLOWS], dst[MAX_FLOWS];
    uint32_t wave[MAX_FLOWS]; /* the flow's colour: waves start at wave x 0.3 s */
} traffic;

typedef struct sim {
    sim_engine *eng;
    flow_net *net;
    const traffic *t;
    const size_t *off;
    const topo_usage *u;
    flow_fold *fd;        /* NULL: unfolded */
    topo_usage *scratch;
    double finish[MAX_FLOWS];
    int bad;
} sim;

static double wave_bytes(uint32_t wave)
{
    return 1e9 * (1.0 + 0.75 * wave);
}

static void on_done(void *ctx, uint32_t flow, uint64_t tag)
{
    (void)flow;
    sim *s = ctx;
    s->finish[tag] = sim_now(s->eng);
}

/* start wave w's flows (representatives only when folded) */
static void start_wave(sim_engine *eng, void *ctx, uint64_t w)
{
    (void)eng;
    sim *s = ctx;
    for (uint32_t f = 0; f < s->t->n; f++) {
        if (s->t->wave[f] != w)
            continue;
        const topo_usage *u = s->u + s->off[f];
        size_t k = s->off[f + 1] - s->off[f];
        if (s->fd) {
            if (s->fd->flow_cell_rep[s->fd->flow_cell[f]] != f)
                continue;
            k = flow_fold_quotient(s->fd, f, u, k, s->scratch);
            u = s->scratch;
        }
        if (flow_start(s->net, u, k, wave_bytes((uint32_t)w), INFINITY, 1e-6, f) == UINT32_MAX)
            s->bad++;
    }
}

static void simulate(sim *s, uint32_t n_links, const double *cap, uint32_t waves)
{
    s->eng = sim_engine_create();
    s->net = flow_net_create(s->eng, n_links, cap, on_done, s);
    for (uint32_t w = 0; w < waves; w++)
        sim_schedule_at(s->eng, 0.3 * w, 0, 0, start_wave, s, w);
    sim_run(s->eng, INFINITY);
    CHECK(flow_net_check(s->net, NULL) == 0);
    flow_net_destroy(s->net);
    sim_engine_destroy(s->eng);
}

/* Route t over g, fold by wave, simulate both ways; every flow must finish
 * with its representative (relative 1e-9). Returns the number of flow
 * cells (the flows the folded run simulates). */
static uint32_t fold_and_compare(const topo_graph *g, const topo_route_config *cfg,
                                 const traffic *t, uint32_t waves)
{
    char why[256];
    topo_router *r = topo_router_create(g, cfg, why, sizeof why);
    CHECK(r != NULL);
    size_t max = topo_route_max_usages(r);
    topo_usage *u = malloc((size_t)t->n * max * sizeof *u);
    size_t *off = malloc(((size_t)t->n + 1) * sizeof *off);
    uint64_t *colour = malloc((size_t)t->n * sizeof *colour);
    off[0] = 0;
    for (uint32_t f = 0; f < t->n; f++) {
        long k = topo_route(r, t->src[f], t->dst[f], f, NULL, u + off[f], max);
        CHECK(k > 0);
        off[f + 1] = off[f] + (size_t)(k > 0 ? k : 0);
        colour[f] = t->wave[f];
    }
    flow_fold fd;
    sim_error err;
    sim_error_clear(&err);
    CHECK(flow_fold_build(t->n, colour, off, u, g->n_links, g->link_bytes_per_s, &fd, &err) ==
          0);
    static sim plain, folded;
    plain = (sim){.t = t, .off = off, .u = u};
    folded = (sim){.t = t, .off = off, .u = u, .fd = &fd, .scratch = malloc(max * sizeof *u)};
    for (uint32_t f = 0; f < t->n; f++)
        plain.finish[f] = folded.finish[f] = -1;
    simulate(&plain, g->n_links, g->link_bytes_per_s, waves);
    simulate(&folded, fd.n_link_cells, fd.link_cell_capacity, waves);
    CHECK_INT_EQ(plain.bad + folded.bad, 0);
    int differ = 0;
    double worst = 0;
    for (uint32_t f = 0; f < t->n; f++) {
        double a = plain.finish[f], b = folded.finish[fd.flow_cell_rep[fd.flow_cell[f]]];
        double rel = fabs(a - b) / a;
        worst = rel > worst ? rel : worst;
        differ += !(a > 0) || rel > 1e-9;
    }
    CHECK_INT_EQ(differ, 0);
    if (differ)
        fprintf(stderr, "  folded vs unfolded: worst relative difference %.3g\n", worst);
    uint32_t cells = fd.n_flow_cells;
    free(folded.scratch);
    flow_fold_free(&fd);
    free(colour);
    free(off);
    free(u);
    topo_router_destroy(r);
    return cells;
}

/* every host sends to host + shift (mod n) in wave i for shift[i] */
static void shifts(traffic *t, uint32_t hosts, const uint32_t *shift, uint32_t waves)
{
    t->n = 0;
    for (uint32_t w = 0; w < waves; w++)
        for (uint32_t h = 0; h < hosts; h++) {
            t->src[t->n] = h;
            t->dst[t->n] = (h + shift[w]) % hosts;
            t->wave[t->n++] = w;
        }
}

/* k = 8 fat-tree (128 hosts), sprayed: pod shifts (+16, +32, +64) make
 * three waves of 128 flows; rotating the pods maps the fabric onto itself,
 * so each wave is one cell. An in-pod wave (+4: edge e to e + 1, the last
 * edge of a pod to the next pod) gives the edges of a pod different roles:
 * more cells, still exact. ECMP hashes each flow its own way: many more. */
static void test_fattree(void)
{
    topo_graph g;
    char why[256];
    CHECK(topo_fattree_kary(8, 50e9, &g, why, sizeof why) == 0);
    static traffic t;
    const uint32_t shift[4] = {16, 32, 64, 4};
    shifts(&t, g.n_hosts, shift, 3);
    topo_route_config spray = {TOPO_BALANCE_SPRAY, TOPO_PATH_MINIMAL, 1, 7};
    uint32_t cells_spray = fold_and_compare(&g, &spray, &t, 3);
    CHECK_INT_EQ(cells_spray, 3);
    shifts(&t, g.n_hosts, shift, 4);
    uint32_t cells_in_pod = fold_and_compare(&g, &spray, &t, 4);
    CHECK(cells_in_pod > 4 && cells_in_pod < t.n / 16);
    topo_route_config ecmp = {TOPO_BALANCE_ECMP, TOPO_PATH_MINIMAL, 1, 7};
    uint32_t cells_ecmp = fold_and_compare(&g, &ecmp, &t, 4);
    CHECK(cells_ecmp > 8 * cells_in_pod);
    /* a random permutation: little symmetry, still exact */
    uint64_t x = 12345;
    for (uint32_t f = 0; f < t.n; f++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        t.dst[f] = (t.src[f] + 1 + (uint32_t)(x >> 33) % (g.n_hosts - 1)) % g.n_hosts;
    }
    CHECK(fold_and_compare(&g, &spray, &t, 4) > cells_in_pod);
    topo_graph_fini(&g);
}

/* Balanced Dragonfly h = 2 (72 hosts, 9 groups), minimal routes sprayed
 * over the equal-cost next hops, and with ECMP: folded equals unfolded. */
static void test_dragonfly(void)
{
    topo_graph g;
    char why[256];
    topo_dragonfly_config c = {.p = 2, .a = 4, .h = 2, .host_bytes_per_s = 25e9,
                               .local_bytes_per_s = 25e9, .global_bytes_per_s = 12.5e9};
    CHECK(topo_dragonfly(&c, &g, why, sizeof why) == 0);
    static traffic t;
    const uint32_t shift[3] = {8, 1, 24};
    shifts(&t, g.n_hosts, shift, 3);
    topo_route_config spray = {TOPO_BALANCE_SPRAY, TOPO_PATH_MINIMAL, 1, 3};
    uint32_t cells = fold_and_compare(&g, &spray, &t, 3);
    CHECK(cells >= 3 && cells < t.n);
    topo_route_config ecmp = {TOPO_BALANCE_ECMP, TOPO_PATH_MINIMAL, 2, 3};
    CHECK(fold_and_compare(&g, &ecmp, &t, 3) >= cells);
    topo_graph_fini(&g);
}

int main(void)
{
    test_star();
    test_fattree();
    test_dragonfly();
    return check_report();
}
