/* test_flow_flush.c - the link lists of the flow net (models/flow_store.c)
 * against a reference, exactly, on 200 small random nets: a flow's entries
 * are written late (flow_store_place, before anything reads or removes
 * list entries), and finished flows leave in one batch (flow_store_flush);
 * the lists must hold the same flow ids in the same order as appending at
 * every start and removing one finished flow after another (the last entry
 * filling each hole) - a model kept here, and a second net that removes
 * by flow_store_detach (usage indices compared too). Flows start while
 * others wait to leave; a batch empties some lists whole (the flush then
 * clears them without sorting) and thins others; both kinds are asserted
 * to occur. List order decides the order a filling visits flows, so a
 * wrong list would move rates in their last bits, or lose a flow. Each
 * entry's weight as a scan reads it (its code on a list that keeps
 * codes) equals the model's, and a flow with too many distinct weights for
 * the codes reads its own back by a search (run_far). Net a starts its
 * first flows, and later ones in odd rounds, as a burst (flow_net_burst_begin:
 * the lists' room made once at the end, at their final length), b one by
 * one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "engine.h"
#include "flow.h"
#include "flow_internal.h"

enum { LINKS = 10, FIRST = 40, LATER = 4, ROUNDS = 6, FLOWS = FIRST + LATER * ROUNDS,
       MAX_USE = 5, CASES = 200 };

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
        if (a->link_of[l] != b->link_of[l] || x->n != y->n || !x->code != !y->code)
            return 0;
        for (uint32_t i = 0; i < x->n; i++)
            if (flow_list_ids(x)[i] != flow_list_ids(y)[i] ||
                (x->code && flow_list_code(x, i) != flow_list_code(y, i)))
                return 0;
    }
    return 1;
}

/* the reference: each link's flow ids as appending at every start and
 * removing one flow after another (the last entry fills the hole) leave them */
typedef struct model {
    uint32_t id[LINKS][FLOWS];
    uint32_t n[LINKS];
    double w[FLOWS][LINKS]; /* flow id's weight on each link: its usages there summed in order */
} model;

static void model_start(model *md, uint32_t f, const topo_usage *u, size_t k)
{
    CHECK(f < FLOWS);
    for (size_t i = 0; i < k && f < FLOWS; i++) {
        uint32_t l = u[i].link, seen = 0;
        for (uint32_t j = 0; j < md->n[l]; j++)
            seen |= md->id[l][j] == f;
        if (!seen) {
            md->id[l][md->n[l]++] = f;
            md->w[f][l] = u[i].weight;
        } else
            md->w[f][l] += u[i].weight;
    }
}

/* every list entry's weight as a scan of the link's lists reads it (the
 * entry's code, or its class weight) against the model's, bit for bit */
static int weights_as_model(const flow_net *a, const model *md)
{
    for (uint32_t g = 0; g < LINKS; g++) {
        if (!a->slot_of[g])
            continue;
        const link_list *ll = &a->slot[a->slot_of[g] - 1].list;
        for (uint32_t j = 0; j < ll->n; j++)
            if (flow_entry_weight(a, ll, j) != md->w[flow_list_ids_c(ll)[j]][g])
                return 0;
    }
    return 1;
}

static void model_remove(model *md, uint32_t f)
{
    for (uint32_t l = 0; l < LINKS; l++)
        for (uint32_t j = 0; j < md->n[l]; j++)
            if (md->id[l][j] == f) {
                md->id[l][j] = md->id[l][--md->n[l]];
                break;
            }
}

static int same_as_model(flow_net *a, const model *md)
{
    for (uint32_t g = 0; g < LINKS; g++) {
        uint32_t n = a->slot_of[g] ? a->slot[a->slot_of[g] - 1].list.n : 0;
        if (n != md->n[g])
            return 0;
        for (uint32_t j = 0; j < n; j++)
            if (flow_list_ids(&a->slot[a->slot_of[g] - 1].list)[j] != md->id[g][j])
                return 0;
    }
    return 1;
}

/* as a recomputation leaves them: every waiting entry written, no fresh
 * flow, none with a bottleneck yet (no filling runs: the engine does not) */
static void settle(flow_net *n, const uint32_t *ids, uint32_t count)
{
    flow_store_place(n, NO_FLOW);
    for (uint32_t f = 0; f < count; f++)
        n->bneck[ids[f]] = NO_LINK;
    n->fresh_head = n->fresh_tail = NO_FLOW;
}

/* start flow f (random links and weights) on both nets and the model */
static void start_both(flow_net *a, flow_net *b, model *md, uint64_t *x, uint32_t f,
                       uint32_t *ids)
{
    topo_usage u[MAX_USE];
    size_t k = 1 + next_u64(x) % MAX_USE;
    int uniform = next_u64(x) % 2;
    for (size_t i = 0; i < k; i++) /* links 0-2 carry most flows, 3-9 few */
        u[i] = (topo_usage){(uint32_t)(next_u64(x) % 4 ? next_u64(x) % 3 : 3 + next_u64(x) % 7),
                            uniform ? 1.0 : (double)(1 + next_u64(x) % 3)};
    ids[f] = flow_start(a, u, k, 1e6, INFINITY, 0, f);
    uint32_t id_b = flow_start(b, u, k, 1e6, INFINITY, 0, f);
    CHECK(ids[f] != UINT32_MAX && ids[f] == id_b);
    model_start(md, ids[f], u, k);
}

static void run_case(uint64_t seed, int *emptied, int *thinned)
{
    sim_engine *eng = sim_engine_create();
    flow_net *a = flow_net_create(eng, LINKS, capacity, NULL, NULL);
    flow_net *b = flow_net_create(eng, LINKS, capacity, NULL, NULL);
    static model md;
    memset(&md, 0, sizeof md);
    CHECK(eng && a && b);
    if (!eng || !a || !b)
        return;
    uint64_t x = seed;
    uint32_t ids[FLOWS], started = FIRST;
    flow_net_burst_begin(a); /* a's lists get their room at the end, b's at each start */
    for (uint32_t f = 0; f < FIRST; f++)
        start_both(a, b, &md, &x, f, ids);
    CHECK_INT_EQ(flow_net_burst_end(a), 0);
    for (uint32_t l = 0; l < a->n_slots; l++) /* allocated once, at the final length */
        CHECK_INT_EQ(a->slot[l].list.cap, a->slot[l].list.n > LIST_INLINE ? a->slot[l].list.n
                                                                          : LIST_INLINE);
    settle(a, ids, FIRST);
    settle(b, ids, FIRST);
    CHECK(same_lists(a, b));
    CHECK(same_as_model(a, &md));
    int gone[FLOWS] = {0};
    for (int round = 0; round < ROUNDS; round++) {
        uint32_t before[LINKS];
        for (uint32_t l = 0; l < a->n_slots; l++)
            before[l] = a->slot[l].list.n;
        /* flows started now wait to be written while earlier ones finish;
         * in odd rounds they start after the finishes, as a burst on a
         * (its first start flushes them, room made first) */
        uint32_t settled = started, later = round % 2;
        if (!later)
            for (uint32_t i = 0; i < LATER && started < FLOWS; i++, started++)
                start_both(a, b, &md, &x, started, ids);
        uint32_t batch[FLOWS], n = 0;
        for (uint32_t f = 0; f < settled; f++)
            if (!gone[f] && (round == ROUNDS - 1 || next_u64(&x) % 3 == 0))
                batch[n++] = f;
        for (uint32_t i = 0; i < n; i++) {
            flow_store_detach_later(a, ids[batch[i]]);
            flow_store_detach(b, ids[batch[i]]);
            model_remove(&md, ids[batch[i]]);
            gone[batch[i]] = 1;
        }
        if (later) {
            flow_net_burst_begin(a);
            for (uint32_t i = 0; i < LATER && started < FLOWS; i++, started++)
                start_both(a, b, &md, &x, started, ids);
            CHECK_INT_EQ(flow_net_burst_end(a), 0);
        }
        flow_store_flush(a);
        settle(a, ids, started);
        settle(b, ids, started);
        CHECK(same_lists(a, b));
        CHECK(same_as_model(a, &md));
        CHECK(weights_as_model(a, &md));
        for (uint32_t l = 0; l < a->n_slots; l++) {
            CHECK_INT_EQ(a->live[l], a->slot[l].list.n);
            CHECK_INT_EQ(a->slot[l].waiting, 0);
            if (l < LINKS && before[l] >= 2 && a->slot[l].list.n == 0)
                (*emptied)++;
            else if (l < LINKS && before[l] >= a->slot[l].list.n + 2 && a->slot[l].list.n)
                (*thinned)++;
        }
    }
    flow_net_destroy(a);
    flow_net_destroy(b);
    sim_engine_destroy(eng);
}

/* A flow with d distinct weights (one per link, d links) shares links
 * 0-15 and the last 16 with a uniform flow (weight 2) and two flows of two
 * weights, one placed before it, one after; every entry on those lists
 * reads its own weight back exactly: the lists' codes (8-bit, widened to
 * 16-bit by a flow of 256 to FLOW_LIST_FAR - 1 weights, the earlier codes
 * kept) for the small flows, and for the large one its code (d <
 * FLOW_LIST_FAR) or a search of its block (d >= FLOW_LIST_FAR, whose codes
 * do not all fit beside the escape; the block's own codes are
 * 8-bit up to FLOW_BYTE_CODES, 16-bit up to FLOW_SHORT_CODES, else 32-bit). */
static void run_far(uint32_t d)
{
    sim_engine *eng = sim_engine_create();
    double *cap = malloc((size_t)d * sizeof *cap);
    topo_usage *u = malloc((size_t)d * sizeof *u);
    CHECK(eng && cap && u);
    if (!eng || !cap || !u)
        return;
    for (uint32_t g = 0; g < d; g++) {
        cap[g] = 1e9;
        u[g] = (topo_usage){g, 1.0 + g / 65536.0}; /* distinct, exact */
    }
    flow_net *n = flow_net_create(eng, d, cap, NULL, NULL);
    CHECK(n != NULL);
    topo_usage v[32], w[32];
    for (uint32_t i = 0; i < 32; i++) {
        uint32_t g = i < 16 ? i : d - 32 + i;
        v[i] = (topo_usage){g, 2.0};
        w[i] = (topo_usage){g, i % 2 ? 0.5 : 3.0};
    }
    uint32_t fv = flow_start(n, v, 32, 1e6, INFINITY, 0, 0); /* before: code 0, unread */
    uint32_t fx = flow_start(n, w, 32, 1e6, INFINITY, 0, 3); /* before: one-byte codes */
    flow_store_place(n, NO_FLOW); /* written before fu may widen them */
    uint32_t fu = flow_start(n, u, d, 1e6, INFINITY, 0, 1);
    uint32_t fw = flow_start(n, w, 32, 1e6, INFINITY, 0, 2); /* after: codes 0 and 1 */
    CHECK(fv != UINT32_MAX && fx != UINT32_MAX && fu != UINT32_MAX && fw != UINT32_MAX);
    flow_store_place(n, NO_FLOW);
    uint32_t far = 0, read = 0;
    for (uint32_t i = 0; i < 32; i++) {
        const link_list *ll = &n->slot[n->slot_of[v[i].link] - 1].list;
        CHECK_INT_EQ(ll->n, 4);
        CHECK(ll->code != NULL);
        /* one-byte codes but for a flow of 256 to FLOW_LIST_FAR - 1 weights */
        CHECK_INT_EQ(flow_list_is_wide(ll), d > FLOW_LIST_FAR8 && d < FLOW_LIST_FAR);
        for (uint32_t j = 0; ll->code && j < ll->n; j++) {
            uint32_t f = flow_list_ids_c(ll)[j];
            double want = f == fv ? 2.0 : f == fw || f == fx ? w[i].weight : u[v[i].link].weight;
            CHECK(flow_entry_weight(n, ll, j) == want);
            far += flow_list_code(ll, j) == FLOW_LIST_FAR;
            read++;
        }
    }
    CHECK_INT_EQ(read, 128);
    CHECK_INT_EQ(far, d >= FLOW_LIST_FAR ? 32 : 0);
    flow_net_destroy(n);
    sim_engine_destroy(eng);
    free(cap);
    free(u);
}

int main(void)
{
    run_far(FLOW_LIST_FAR8); /* the lists' codes one byte each */
    run_far(FLOW_BYTE_CODES); /* the block's codes one byte each, the lists' two */
    run_far(FLOW_BYTE_CODES + 1);
    run_far(FLOW_LIST_FAR - 1);
    run_far(FLOW_LIST_FAR);
    run_far(FLOW_SHORT_CODES + 4000);
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
