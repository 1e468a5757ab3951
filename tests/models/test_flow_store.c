/* test_flow_store.c - where the flow net keeps its flows (models/flow_store.c):
 * flows finishing at one instant leave their links' lists in one pass at
 * the recomputation (closed-form finish times, full against incremental
 * rates, conservation), also when a flow starts between those finishes;
 * and a flow's unequal weights, stored once each with a code per usage
 * (uint16 codes, and uint32 past 65,536 distinct weights), read back exactly
 * (every link carries bytes x its own weight). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "engine.h"
#include "flow.h"

typedef struct batch {
    sim_engine *eng;
    flow_net *net;
    double done_at[256];
    int n_done, started_late, compared;
    double max_rel_diff;
} batch;

enum { SHARED = 0, N_OLD = 100, LATE_TAG = 200, LINKS = 3 };

static void batch_done(void *ctx, uint32_t flow, uint64_t tag)
{
    (void)flow;
    batch *b = ctx;
    b->done_at[tag] = sim_now(b->eng);
    b->n_done++;
    if (tag == 1 && !b->started_late) { /* between the finishes of one instant */
        topo_usage u = {SHARED, 1.0};
        b->started_late = flow_start(b->net, &u, 1, 100, INFINITY, 0, LATE_TAG) != UINT32_MAX;
    }
}

/* every active flow's rate against a filling from scratch */
static void compare_full(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)eng;
    (void)data;
    batch *b = ctx;
    double rates[512] = {0};
    CHECK(flow_net_full_rates(b->net, rates, 512) == 0);
    for (uint32_t f = 0; f < 512; f++)
        if (rates[f] > 0) {
            double d = fabs(flow_rate(b->net, f) - rates[f]) / rates[f];
            b->max_rel_diff = d > b->max_rel_diff ? d : b->max_rel_diff;
            b->compared++;
        }
}

/* 100 flows on one 100 B/s link (and, every third one, on links 1 or 2
 * too, of ample capacity): 1 B/s each. The odd ones carry 100 B and finish
 * together at 100 s (one batch of 50; the list's holes are filled by
 * entries of flows of the same batch and of others). The first of them to
 * be reported starts a 100 B flow at that instant: 51 flows share the link
 * at 100/51 B/s; it ends at 151 s, when the even ones (300 B) have 100 B
 * left; they end at 2 B/s, at 201 s. */
static void run_batch(int repair)
{
    sim_engine *eng = sim_engine_create();
    double cap[LINKS] = {100, 1e6, 1e6};
    batch *b = calloc(1, sizeof *b);
    b->eng = eng;
    b->net = flow_net_create(eng, LINKS, cap, batch_done, b);
    flow_net_set_local_repair(b->net, repair);
    for (uint32_t i = 0; i < N_OLD; i++) {
        topo_usage u[2] = {{SHARED, 1.0}, {1 + i % 2, 1.0}};
        size_t k = i % 3 == 0 ? 2 : 1;
        CHECK(flow_start(b->net, u, k, i % 2 ? 100 : 300, INFINITY, 0, i) != UINT32_MAX);
    }
    sim_schedule_at(eng, 120.0, 0, 0, compare_full, b, 0);
    sim_run(eng, INFINITY);
    CHECK(b->started_late);
    CHECK_INT_EQ(b->n_done, N_OLD + 1);
    for (uint32_t i = 0; i < N_OLD; i++)
        CHECK_NEAR(b->done_at[i], i % 2 ? 100.0 : 201.0, 1e-9);
    CHECK_NEAR(b->done_at[LATE_TAG], 151.0, 1e-9);
    CHECK_INT_EQ(b->compared, N_OLD / 2 + 1);
    CHECK(b->max_rel_diff <= 1e-12);
    CHECK_NEAR(flow_net_link_bytes(b->net, SHARED), 50 * 100 + 50 * 300 + 100, 1e-6);
    CHECK(flow_net_check(b->net, NULL) == 0);
    CHECK_INT_EQ(flow_active_count(b->net), 0);
    flow_net_destroy(b->net);
    sim_engine_destroy(eng);
    free(b);
}

static void test_batch_finish(void)
{
    run_batch(1); /* 101 flows: the local repair */
    run_batch(0); /* the component refill */
}

/* One flow over n links of capacity 1e9 B/s, weight w(l) on link l: its
 * rate is 1e9 / max w and link l carries bytes x w(l). distinct: how many
 * different weights (they repeat round-robin). */
static void run_weights(uint32_t n, uint32_t distinct)
{
    sim_engine *eng = sim_engine_create();
    double *cap = malloc(n * sizeof *cap);
    topo_usage *u = malloc(n * sizeof *u);
    double max_w = 0, bytes = 1e6;
    for (uint32_t l = 0; l < n; l++) {
        cap[l] = 1e9;
        u[l] = (topo_usage){l, 1.0 + (double)(l % distinct) / 3.0};
        max_w = u[l].weight > max_w ? u[l].weight : max_w;
    }
    flow_net *net = flow_net_create(eng, n, cap, NULL, NULL);
    CHECK(flow_start(net, u, n, bytes, INFINITY, 0, 7) != UINT32_MAX);
    sim_run(eng, 0.0);
    CHECK_REL(flow_rate(net, 0), 1e9 / max_w, 1e-15);
    sim_run(eng, INFINITY);
    CHECK_NEAR(sim_now(eng), bytes * max_w / 1e9, 1e-15);
    uint32_t wrong = 0;
    for (uint32_t l = 0; l < n; l++)
        wrong += fabs(flow_net_link_bytes(net, l) - bytes * u[l].weight) >
                 1e-12 * bytes * u[l].weight;
    CHECK_INT_EQ(wrong, 0);
    CHECK(flow_net_check(net, NULL) == 0);
    flow_net_destroy(net);
    sim_engine_destroy(eng);
    free(cap);
    free(u);
}

static void test_weight_codes(void)
{
    run_weights(7, 3);          /* uint16 codes, an odd count */
    run_weights(4096, 4096);    /* every weight distinct */
    run_weights(70000, 70000);  /* more than 65,536 distinct: uint32 codes */
}

int main(void)
{
    test_batch_finish();
    test_weight_codes();
    return check_report();
}
