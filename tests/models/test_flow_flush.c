/* test_flow_flush.c - the batched removal of finished flows from the link
 * lists (flow_store_flush, models/flow_store.c) against removing them one
 * at a time (flow_store_detach), on small random nets, exactly: after every
 * batch each link's list holds the same flow ids and usage indices in the
 * same order. A batch empties some lists whole (every entry leaves: the
 * flush clears the list without sorting) and thins others (the sorted
 * replay); both kinds are asserted to occur. Flow order in a list decides
 * the order a filling visits flows, so a wrong list would move rates in
 * their last bits, or lose a flow. */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "engine.h"
#include "flow.h"
#include "flow_internal.h"

enum { LINKS = 10, FLOWS = 48, MAX_USE = 5, CASES = 200 };

static uint64_t next_u64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double capacity[LINKS];

/* whether the two nets' lists are equal entry by entry (ids, and usage
 * indices where a list keeps them) on every link; the slots are given in
 * first-use order, the same in both */
static int same_lists(flow_net *a, flow_net *b)
{
    if (a->n_slots != b->n_slots)
        return 0;
    for (uint32_t l = 0; l < a->n_slots; l++) {
        link_list *x = &a->slot[l].list, *y = &b->slot[l].list;
        if (a->link_of[l] != b->link_of[l] || x->n != y->n || !x->k != !y->k)
            return 0;
        for (uint32_t i = 0; i < x->n; i++)
            if (flow_list_ids(x)[i] != flow_list_ids(y)[i] || (x->k && x->k[i] != y->k[i]))
                return 0;
    }
    return 1;
}

static void run_case(uint64_t seed, int *emptied, int *thinned)
{
    sim_engine *eng = sim_engine_create();
    flow_net *a = flow_net_create(eng, LINKS, capacity, NULL, NULL);
    flow_net *b = flow_net_create(eng, LINKS, capacity, NULL, NULL);
    CHECK(eng && a && b);
    if (!eng || !a || !b)
        return;
    uint64_t x = seed;
    uint32_t ids[FLOWS];
    for (uint32_t f = 0; f < FLOWS; f++) {
        topo_usage u[MAX_USE];
        size_t k = 1 + next_u64(&x) % MAX_USE;
        int uniform = next_u64(&x) % 2;
        for (size_t i = 0; i < k; i++) /* links 0-2 carry most flows, 3-9 few */
            u[i] = (topo_usage){(uint32_t)(next_u64(&x) % 4 ? next_u64(&x) % 3
                                                            : 3 + next_u64(&x) % 7),
                                uniform ? 1.0 : (double)(1 + next_u64(&x) % 3)};
        ids[f] = flow_start(a, u, k, 1e6, INFINITY, 0, f);
        uint32_t id_b = flow_start(b, u, k, 1e6, INFINITY, 0, f);
        CHECK(ids[f] != UINT32_MAX && ids[f] == id_b);
    }
    /* no filling runs (the engine does not): a flow has no bottleneck yet */
    for (uint32_t f = 0; f < FLOWS; f++)
        a->bneck[ids[f]] = b->bneck[ids[f]] = NO_LINK;
    CHECK(same_lists(a, b));
    int gone[FLOWS] = {0};
    for (int round = 0; round < 4; round++) { /* four batches, random members */
        uint32_t before[LINKS];
        for (uint32_t l = 0; l < a->n_slots; l++)
            before[l] = a->slot[l].list.n;
        uint32_t batch[FLOWS], n = 0;
        for (uint32_t f = 0; f < FLOWS; f++)
            if (!gone[f] && (round == 3 || next_u64(&x) % 3 == 0))
                batch[n++] = f;
        for (uint32_t i = 0; i < n; i++) {
            flow_store_detach_later(a, ids[batch[i]]);
            flow_store_detach(b, ids[batch[i]]);
            gone[batch[i]] = 1;
        }
        flow_store_flush(a);
        CHECK(same_lists(a, b));
        for (uint32_t l = 0; l < a->n_slots; l++) {
            CHECK_INT_EQ(a->live[l], a->slot[l].list.n);
            if (before[l] >= 2 && a->slot[l].list.n == 0)
                (*emptied)++;
            else if (before[l] >= a->slot[l].list.n + 2 && a->slot[l].list.n)
                (*thinned)++;
        }
    }
    for (uint32_t l = 0; l < a->n_slots; l++)
        CHECK_INT_EQ(a->slot[l].list.n, 0);
    flow_net_destroy(a);
    flow_net_destroy(b);
    sim_engine_destroy(eng);
}

int main(void)
{
    for (int l = 0; l < LINKS; l++)
        capacity[l] = 1e9 * (1 + l % 3);
    int emptied = 0, thinned = 0;
    for (uint64_t c = 0; c < CASES; c++)
        run_case(0x5eed0000u + c, &emptied, &thinned);
    printf("test_flow_flush: %d cases, %d lists emptied by a batch, %d thinned by two or more\n",
           CASES, emptied, thinned);
    CHECK(emptied > CASES);
    CHECK(thinned > CASES);
    return check_report();
}
