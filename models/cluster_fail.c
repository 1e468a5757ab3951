/* cluster_fail.c - GPUs out of service (cluster.h, disruption): maintenance
 * windows and node failures shared by every job, with a pool of hot spares.
 * A GPU is down while its node is failed or a window covers it; a down GPU
 * is neither free nor busy (busy + idle + down = capacity x T).
 * Windows: at its start a window's GPUs go down (a job still on them, only
 * possible when failures or restarts delayed it, is interrupted as by a
 * failure); at its end they come back. A job never starts on free GPUs that
 * a window would take before it ends (cluster_resv_hide).
 * Failures: Poisson at lambda per node in service, drawn from their own
 * stream: gaps Exp(1 / (lambda N)) over all N nodes and a node uniform among
 * them; a node already down is skipped (thinning: the failures of the nodes
 * in service stay Poisson at lambda each). A failed node takes a free spare
 * at once (its jobs restart in place on the spare, the failed machine is
 * repaired for repair_s and joins the spares), else it is down for repair_s
 * and its jobs go back to the queue. With swap_down a spare freed later
 * takes over a node down; such a node may fail again while its own machine
 * is still in repair (no spare free: down again, a second machine of its in
 * repair): a repaired machine of a node goes back into its slot when the
 * node is down, else joins the spares. O(node GPUs) per failure or repair,
 * O(window GPUs) per window edge and per start the window would overlap.
 */
#include <stdlib.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "cluster_internal.h"
#include "event_kinds.h"

#define SWAP_FLAG (1ull << 32) /* a repair event's data: the failed machine was swapped */

/* a free GPU taken out of service */
static void free_to_down(cluster_sim *s, uint32_t g)
{
    const cluster_config *c = s->c;
    s->node_free[g / c->node_gpus]--;
    s->leaf_free[g / c->leaf_gpus]--;
    s->su_free[g / c->su_gpus]--;
    s->free_gpus--;
    cluster_gpu_down(s, g);
}

/* GPU g leaves service now: a job on it is interrupted (its GPUs given back,
 * g among them down) */
static void take_down(cluster_sim *s, uint32_t g)
{
    uint32_t o = s->owner[g];
    if (o == CLUSTER_NONE)
        free_to_down(s, g);
    else if (o < s->n_job && !(s->held && cluster_is_elastic(s, o) &&
                                s->state[o] == CLUSTER_ST_RUN && cluster_elastic_lose(s, o)))
        cluster_interrupt(s, o, 1); /* an elastic job that stays at its min shrinks instead */
}

static void on_window(sim_engine *eng, void *ctx, uint64_t data)
{
    cluster_sim *s = ctx;
    const cluster_reservation *r = &s->c->resv[data / 2];
    int is_start = !(data & 1);
    cluster_account(s);
    for (uint32_t g = r->gpu0; g < r->gpu0 + r->gpus && !s->failed; g++) {
        int is_node_up = !(s->node_failed[g / s->c->node_gpus] & NODE_DOWN);
        if (is_start && s->resv_n[g]++ == 0 && is_node_up)
            take_down(s, g);
        else if (!is_start && --s->resv_n[g] == 0 && is_node_up)
            cluster_gpu_up(s, g);
    }
    (void)eng;
    cluster_record(s);
    cluster_want_pass(s);
}

uint32_t cluster_resv_hide(cluster_sim *s, double end_s)
{
    const cluster_config *c = s->c;
    double now = sim_now(s->eng);
    s->hid_n = 0;
    for (uint32_t i = 0; i < c->n_resv; i++) {
        const cluster_reservation *r = &c->resv[i];
        if (!(r->start_s > now && r->start_s < end_s))
            continue; /* started (its GPUs are down), or it starts after the job ends */
        for (uint32_t g = r->gpu0; g < r->gpu0 + r->gpus; g++)
            if (s->owner[g] == CLUSTER_NONE) {
                s->owner[g] = CLUSTER_HIDDEN;
                s->node_free[g / c->node_gpus]--;
                s->leaf_free[g / c->leaf_gpus]--;
                s->su_free[g / c->su_gpus]--;
                s->hid[s->hid_n++] = g;
            }
    }
    return s->hid_n;
}

void cluster_resv_show(cluster_sim *s)
{
    const cluster_config *c = s->c;
    for (uint32_t i = 0; i < s->hid_n; i++) {
        uint32_t g = s->hid[i];
        s->owner[g] = CLUSTER_NONE;
        s->node_free[g / c->node_gpus]++;
        s->leaf_free[g / c->leaf_gpus]++;
        s->su_free[g / c->su_gpus]++;
    }
    s->hid_n = 0;
}

double cluster_resv_clear_s(const cluster_sim *s, double to_s)
{
    double now = sim_now(s->eng), clear = 0;
    for (uint32_t i = 0; i < s->c->n_resv; i++) {
        const cluster_reservation *r = &s->c->resv[i];
        double end = r->start_s + r->duration_s;
        if (r->start_s < to_s && end > now && end > clear)
            clear = end;
    }
    return clear;
}

static void on_failure(sim_engine *eng, void *ctx, uint64_t data);

/* the next failure: its gap and its node, drawn now in this order */
static int next_failure(cluster_sim *s)
{
    gsl_rng *r = s->fail_rng;
    double gap = gsl_ran_exponential(r, 1.0 / (s->c->fail.rate_per_node_s * s->n_nodes));
    uint32_t node = (uint32_t)gsl_rng_uniform_int(r, s->n_nodes);
    return sim_schedule_in(s->eng, gap, 1, KIND_CLUSTER_FAILURE, on_failure, s, node) ? 0 : -1;
}

/* node back in service (its machine repaired, or a spare in its place) */
static void node_up(cluster_sim *s, uint32_t node)
{
    uint32_t ng = s->c->node_gpus;
    s->node_failed[node] &= (uint8_t)~NODE_DOWN;
    for (uint32_t g = node * ng; g < (node + 1) * ng; g++)
        if (!(s->resv_n && s->resv_n[g]))
            cluster_gpu_up(s, g);
}

/* swap_down: node's own machines in repair, a FIFO per node (repairs take a
 * fixed time, so they end in the order they failed): push one ending at
 * end_s (0, or -1 out of memory), pop the oldest */
static int rep_push(cluster_sim *s, uint32_t node, double end_s)
{
    uint32_t i = s->rep_free;
    if (i != UINT32_MAX) {
        s->rep_free = s->rep_next[i];
    } else {
        if (s->rep_n == s->rep_cap) {
            uint32_t cap = s->rep_cap ? 2 * s->rep_cap : 64;
            uint32_t *nx = realloc(s->rep_next, cap * sizeof *nx);
            if (nx)
                s->rep_next = nx;
            double *e = realloc(s->rep_end, cap * sizeof *e);
            if (e)
                s->rep_end = e;
            if (!nx || !e)
                return -1;
            s->rep_cap = cap;
        }
        i = s->rep_n++;
    }
    s->rep_end[i] = end_s;
    s->rep_next[i] = UINT32_MAX;
    if (s->rep_head[node] == UINT32_MAX)
        s->rep_head[node] = i;
    else
        s->rep_next[s->rep_tail[node]] = i;
    s->rep_tail[node] = i;
    return 0;
}

static void rep_pop(cluster_sim *s, uint32_t node)
{
    uint32_t i = s->rep_head[node];
    if (i == UINT32_MAX)
        return;
    s->rep_head[node] = s->rep_next[i];
    s->rep_next[i] = s->rep_free;
    s->rep_free = i;
}

/* swap_down: a spare just freed takes over the down node whose down time
 * ends last, the end of the oldest of its own machines in repair (a node
 * whose spare failed while its own machine was still in repair comes back
 * at that machine's repair, before its latest failure's), so the most down
 * time is saved; ties to the lowest node. O(nodes) per freed spare. */
static int take_over_down(cluster_sim *s)
{
    if (!s->c->fail.swap_down || !s->spares_free)
        return 0;
    uint32_t best = UINT32_MAX;
    for (uint32_t k = 0; k < s->n_nodes; k++)
        if ((s->node_failed[k] & NODE_DOWN) && s->rep_head[k] != UINT32_MAX &&
            (best == UINT32_MAX ||
             s->rep_end[s->rep_head[k]] > s->rep_end[s->rep_head[best]]))
            best = k;
    if (best == UINT32_MAX)
        return 0;
    s->spares_free--;
    s->spare_takeovers++;
    node_up(s, best);
    return 1;
}

/* a machine repaired: one swapped out (SWAP_FLAG) joins the spares; one of
 * node's own goes back into its slot when the node is down, else (a spare
 * took the slot over) joins the spares, which may take over a node down */
static void on_repair(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)eng;
    cluster_sim *s = ctx;
    cluster_account(s);
    uint32_t node = (uint32_t)data;
    if (!(data & SWAP_FLAG) && s->rep_head)
        rep_pop(s, node);
    if ((data & SWAP_FLAG) || !(s->node_failed[node] & NODE_DOWN)) {
        s->spares_free++;
        if (!take_over_down(s))
            return; /* no node came back: nothing to record */
    } else {
        node_up(s, node);
    }
    cluster_record(s);
    cluster_want_pass(s);
}

static void on_failure(sim_engine *eng, void *ctx, uint64_t data)
{
    cluster_sim *s = ctx;
    uint32_t node = (uint32_t)data, ng = s->c->node_gpus;
    double now = sim_now(eng);
    cluster_account(s);
    if (next_failure(s))
        s->failed = 1;
    if (s->node_failed[node] & NODE_DOWN)
        return; /* down already: thinning */
    s->failures++;
    if (s->rep_head && s->rep_head[node] != UINT32_MAX)
        s->spare_refails++; /* a spare in its slot fails; its own machine is in repair */
    int is_swap = s->spares_free > 0;
    if (is_swap) {
        s->spares_free--;
        s->spare_swaps++;
        /* its running jobs restart in place on the spare; a job that started
         * this instant starts on the spare */
        for (uint32_t g = node * ng; g < (node + 1) * ng && !s->failed; g++) {
            uint32_t o = s->owner[g];
            if (o < s->n_job && s->state[o] == CLUSTER_ST_RUN && s->seg_s[o] < now)
                cluster_interrupt(s, o, 0);
        }
    } else {
        s->node_failed[node] |= NODE_DOWN;
        if (s->rep_head && rep_push(s, node, now + s->c->fail.repair_s))
            s->failed = 1;
        for (uint32_t g = node * ng; g < (node + 1) * ng && !s->failed; g++)
            if (!(s->resv_n && s->resv_n[g]))
                take_down(s, g);
        cluster_record(s);
        cluster_want_pass(s);
    }
    if (!sim_schedule_at(eng, now + s->c->fail.repair_s, 0, KIND_CLUSTER_REPAIR, on_repair, s,
                         node | (is_swap ? SWAP_FLAG : 0)))
        s->failed = 1;
}

void cluster_fail_result(const cluster_sim *s, cluster_result *o)
{
    o->failures = s->failures;
    o->spare_swaps = s->spare_swaps;
    o->spare_takeovers = s->spare_takeovers;
    o->spare_refails = s->spare_refails;
}

int cluster_fail_begin(cluster_sim *s)
{
    const cluster_config *c = s->c;
    for (uint32_t i = 0; i < c->n_resv; i++) {
        const cluster_reservation *r = &c->resv[i];
        /* the start after the ends of its instant (1), the end before (0) */
        if (!sim_schedule_at(s->eng, r->start_s, 1, KIND_CLUSTER_WINDOW, on_window, s, 2 * i) ||
            !sim_schedule_at(s->eng, r->start_s + r->duration_s, 0, KIND_CLUSTER_WINDOW,
                             on_window, s, 2 * (uint64_t)i + 1))
            return -1;
    }
    if (!(c->fail.rate_per_node_s > 0))
        return 0;
    s->fail_rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!s->fail_rng)
        return -1;
    /* its own stream, apart from the jobs' three (seed x 3 + 1..3): the
     * splitmix64 finaliser of seed ^ "FAIL", high 32 bits */
    uint64_t x = (c->seed ^ 0x4641494cull) + 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    gsl_rng_set(s->fail_rng, (unsigned long)((x ^ (x >> 31)) >> 32));
    return next_failure(s);
}
