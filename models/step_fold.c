/* step_fold.c - exact symmetry folding of the concurrent iteration
 * (step_des.c, docs/step.md "Exact symmetry folding"): every flow the
 * iteration can start, listed by role; the coarsest equitable partition of
 * them (flow_fold.h); and the check that every replica's sends and every
 * tensor rank's DP flows fall in the cells of replica 0's and the first
 * rank's, one to one. Then replica 0 holds a representative of every cell
 * and runs alone on the quotient net (nc_exec_create_folded).
 */
#include "step_des_internal.h"

#include <stdlib.h>
#include <string.h>

#include "routing.h"

static int no_memory(des *z)
{
    return step_no_memory(z->err);
}

/* Plan p is `groups` copies of one collective appended one after another
 * (dp_plan: one per tensor rank): each group's phases equal the first's,
 * connection counts, bytes, latency, rate cap, coupling and dependencies
 * (shifted by the group's offset). Returns the phases per group, or 0. */
static uint32_t phases_per_group(const nc_plan *p, unsigned groups)
{
    if (groups == 0 || p->n_phases % groups)
        return 0;
    uint32_t G = p->n_phases / groups;
    for (uint32_t i = G; i < p->n_phases; i++) {
        const nc_phase *a = &p->phase[i % G], *b = &p->phase[i];
        uint32_t shift = i - i % G;
        if (a->n_conn != b->n_conn || a->coupled != b->coupled || a->n_deps != b->n_deps ||
            memcmp(&a->bytes, &b->bytes, sizeof a->bytes) ||
            memcmp(&a->latency_s, &b->latency_s, sizeof a->latency_s) ||
            memcmp(&a->rate_cap, &b->rate_cap, sizeof a->rate_cap))
            return 0;
        for (uint32_t k = 0; k < a->n_deps; k++)
            if (p->deps[b->dep_first + k] != p->deps[a->dep_first + k] + shift)
                return 0;
    }
    return G;
}

typedef struct flow_role {
    uint64_t role, bytes; /* what must match for two flows to fold: role, bytes' bits */
} flow_role;

static int cmp_role(const void *a, const void *b)
{
    const flow_role *x = a, *y = b;
    if (x->role != y->role)
        return x->role < y->role ? -1 : 1;
    return (x->bytes > y->bytes) - (x->bytes < y->bytes);
}

/* append plan p's flows to l with role `role` + its phase's role (the
 * phase index within its group of G phases, or the index when G is 0) */
static int list_plan(des *z, const nc_plan *p, uint64_t role, uint32_t G, nc_flow_list *l,
                     flow_role **roles, size_t *cap)
{
    size_t before = l->n;
    int rc = nc_exec_plan_flows(&z->f->nc, p, l, z->err);
    if (rc)
        return rc;
    if (l->n > *cap) {
        size_t c = 2 * l->n;
        flow_role *r = realloc(*roles, c * sizeof *r);
        if (!r)
            return no_memory(z);
        *roles = r;
        *cap = c;
    }
    for (size_t f = before; f < l->n; f++) {
        uint32_t ph = G ? l->phase[f] % G : l->phase[f];
        uint64_t b;
        memcpy(&b, &l->bytes[f], sizeof b);
        (*roles)[f] = (flow_role){role << 24 | ph, b};
    }
    return 0;
}

static int fold_off(des *z, const char *why)
{
    z->out->fold_note = why;
    return 0;
}

/* The memory folding may take: the listed routes and the refinement's two
 * views of them (16 bytes per usage each), and per flow its role, colour,
 * sort key and cells. Past STEP_FOLD_MAX_BYTES folding is off: it would
 * need more memory than the unfolded simulation it saves time on (a 16K-GPU
 * sprayed fat-tree lists some 34 million usages). */
#define STEP_FOLD_MAX_BYTES (1024.0 * 1024 * 1024)

static double fold_bytes(const nc_flow_list *l)
{
    return l->offset ? 48.0 * (double)l->offset[l->n] + 96.0 * (double)l->n : 0;
}

/* every replica's PP sends, by role (boundary and direction) */
static int list_pp(des *z, nc_flow_list *l, flow_role **roles, size_t *cap)
{
    unsigned n_slots = (z->n_pos - 1) * 2;
    int rc = 0;
    for (unsigned d = 0; d < z->D_all && !rc; d++)
        for (unsigned b = 0; b + 1 < z->n_pos && !rc; b++)
            for (int dir = 0; dir < 2 && !rc; dir++) {
                size_t slot = (size_t)d * n_slots + 2 * b + (unsigned)dir;
                z->pp_first[slot] = (uint32_t)l->n;
                if (fold_bytes(l) > STEP_FOLD_MAX_BYTES)
                    return 0; /* fold_build says so */
                if (b % z->P == (b + 1) % z->P)
                    continue;
                rc = step_des_pp_plan(z, d, b, dir);
                if (!rc)
                    rc = list_plan(z, &z->pp[slot], 1ull << 20 | (2 * b + (unsigned)dir), 0, l,
                                   roles, cap);
            }
    z->pp_first[(size_t)z->D_all * n_slots] = (uint32_t)l->n;
    return rc;
}

/* every position's DP bucket and parameter gather, by role (position and
 * the phase within its tensor rank's collective, G[] phases a rank) */
static int list_dp(des *z, nc_flow_list *l, flow_role **roles, size_t *cap, uint32_t *G)
{
    unsigned tp = z->w->par.tp;
    int rc = 0;
    for (unsigned j = 0; j < z->n_pos && !rc; j++) {
        if (fold_bytes(l) > STEP_FOLD_MAX_BYTES)
            return 0; /* fold_build says so */
        G[2 * j] = phases_per_group(&z->dp_plan[j], tp);
        G[2 * j + 1] = phases_per_group(&z->ag_plan[j], tp);
        z->dp_first[j] = (uint32_t)l->n;
        rc = list_plan(z, &z->dp_plan[j], 2ull << 20 | j, G[2 * j], l, roles, cap);
        z->ag_first[j] = (uint32_t)l->n;
        if (!rc)
            rc = list_plan(z, &z->ag_plan[j], 3ull << 20 | j, G[2 * j + 1], l, roles, cap);
    }
    z->dp_first[z->n_pos] = (uint32_t)l->n;
    return rc;
}

/* the coarsest equitable partition (flow_fold.h) of the listed flows, each
 * coloured by the rank of its (role, bytes); it stops early when two of
 * same[] (pairs of flows that must fold onto each other) split */
static int fold_build(des *z, const nc_flow_list *l, const flow_role *roles, const uint32_t *same,
                      size_t n_same)
{
    size_t n = l->n;
    if (n >= UINT32_MAX || fold_bytes(l) > STEP_FOLD_MAX_BYTES)
        return fold_off(z, "off: listing every flow would take more than 1 GiB");
    flow_role *sorted = malloc((n ? n : 1) * sizeof *sorted);
    uint64_t *colour = malloc((n ? n : 1) * sizeof *colour);
    if (!sorted || !colour) {
        free(sorted);
        free(colour);
        return no_memory(z);
    }
    memcpy(sorted, roles, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_role);
    for (size_t f = 0; f < n; f++) {
        size_t lo = 0, hi = n; /* the first entry not below roles[f] */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (cmp_role(&sorted[mid], &roles[f]) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        colour[f] = lo;
    }
    free(sorted);
    const topo_graph *g = &z->f->g;
    flow_fold_free(&z->fold);
    int rc = flow_fold_watch((uint32_t)n, colour, l->offset, l->usage, g->n_links,
                             g->link_bytes_per_s, same, n_same, &z->fold, z->err);
    free(colour);
    return rc;
}

#define FOLD_UNLIKE (SIZE_MAX - 1) /* fold_pairs: the replicas' sends differ in count */

/* The pairs of flows that must share a cell for the replicas to fold:
 * each replica's sends with replica 0's, one to one, then (once listed)
 * each tensor rank's DP flows with the first rank's. Returns the count;
 * *same is grown as needed; SIZE_MAX when out of memory. */
static size_t fold_pairs(const des *z, const nc_flow_list *l, const uint32_t *G, uint32_t **same)
{
    size_t n = 0, cap = 2 * (size_t)l->n + 2; /* at most one pair per listed flow */
    unsigned n_slots = (z->n_pos - 1) * 2, tp = z->w->par.tp;
    /* a replica whose send has another flow count than replica 0's (spray
     * splits a send over the paths it finds, and they differ by place) is
     * not alike: pairing by index would run past its flows */
    for (unsigned d = 1; d < z->D_all; d++)
        for (unsigned k = 0; k < n_slots; k++) {
            size_t at = (size_t)d * n_slots + k;
            if (z->pp_first[at + 1] - z->pp_first[at] != z->pp_first[k + 1] - z->pp_first[k])
                return FOLD_UNLIKE;
        }
    uint32_t *p = realloc(*same, 2 * cap * sizeof *p);
    if (!p)
        return SIZE_MAX;
    *same = p;
    for (unsigned d = 1; d < z->D_all; d++)
        for (unsigned k = 0; k < n_slots; k++) {
            uint32_t a = z->pp_first[k], b = z->pp_first[(size_t)d * n_slots + k];
            for (uint32_t i = 0; i < z->pp_first[k + 1] - a; i++, n++) {
                p[2 * n] = a + i;
                p[2 * n + 1] = b + i;
            }
        }
    for (unsigned j = 0; G && j < z->n_pos; j++)
        for (int gather = 0; gather < 2; gather++) {
            uint32_t first = gather ? z->ag_first[j] : z->dp_first[j];
            uint32_t end = gather ? z->dp_first[j + 1] : z->ag_first[j];
            if (!G[2 * j + gather] || end == first)
                continue;
            uint32_t per = (end - first) / tp;
            for (unsigned t = 1; t < tp; t++)
                for (uint32_t i = 0; i < per; i++, n++) {
                    p[2 * n] = first + i;
                    p[2 * n + 1] = first + t * per + i;
                }
        }
    return n;
}

int step_des_fold(des *z)
{
    const nc_fabric *nc = &z->f->nc;
    if (z->o->no_fold)
        return fold_off(z, "off (asked)");
    if (z->o->packet)
        return fold_off(z, "off: the packet network simulates every replica");
    if (z->sc_kinds)
        return fold_off(z, "off: TP, CP or EP collectives cross scale-up domains (their flows "
                           "are not folded)");
    if (z->D_all < 2)
        return fold_off(z, "off: one data-parallel replica");
    if (topo_router_uses_load(nc->router))
        return fold_off(z, "off: routes depend on the load (adaptive routing, UGAL)");
    if (nc->link_curve)
        return fold_off(z, "off: incast efficiency depends on the flows on a link");
    for (unsigned d = 0; d < z->D_all; d++)
        if (!z->nominal[d])
            return fold_off(z, "off: replicas run at different speeds (stragglers)");
    size_t slots = (size_t)z->D_all * (z->n_pos - 1) * 2;
    z->pp_first = malloc((slots + 1) * sizeof *z->pp_first);
    z->dp_first = malloc(((size_t)z->n_pos + 1) * sizeof *z->dp_first);
    z->ag_first = malloc(((size_t)z->n_pos + 1) * sizeof *z->ag_first);
    uint32_t *G = malloc(2 * ((size_t)z->n_pos + 1) * sizeof *G);
    if (!z->pp_first || !z->dp_first || !z->ag_first || !G) {
        free(G);
        return no_memory(z);
    }
    /* the sends alone first: if the replicas' sends are not alike among
     * themselves they are not alike among all flows either (the partition
     * of all flows, cut to the sends, is equitable for the sends alone), so
     * a fabric that breaks symmetry is found before the DP flows are listed */
    nc_flow_list l = {0};
    flow_role *roles = NULL;
    size_t cap = 0;
    uint32_t *same = NULL;
    size_t n_same = 0;
    int rc = list_pp(z, &l, &roles, &cap);
    int unlike = 0;
    if (!rc && (n_same = fold_pairs(z, &l, NULL, &same)) == SIZE_MAX)
        rc = no_memory(z);
    unlike = !rc && n_same == FOLD_UNLIKE;
    if (!rc && !unlike)
        rc = fold_build(z, &l, roles, same, n_same);
    /* no pair split: every pair shares a cell of the final partition */
    int ok = !rc && z->fold.flow_cell && !z->fold.split;
    if (ok) {
        rc = list_dp(z, &l, &roles, &cap, G);
        if (!rc && (n_same = fold_pairs(z, &l, G, &same)) == SIZE_MAX)
            rc = no_memory(z);
        unlike = !rc && n_same == FOLD_UNLIKE;
        if (!rc && !unlike)
            rc = fold_build(z, &l, roles, same, n_same);
        ok = !rc && !unlike && z->fold.flow_cell && !z->fold.split;
    }
    free(same);
    if (!rc && z->fold.flow_cell) {
        z->out->fold_flows = z->fold.n_flows;
        z->out->fold_cells = z->fold.n_flow_cells;
    }
    if (ok) {
        z->folded = 1;
        z->out->fold_replicas = z->D_all;
        z->out->fold_note = "on";
        z->D = 1;
        /* only replica 0 sends: the others' plans were for the check */
        for (size_t k = (size_t)(z->n_pos - 1) * 2; k < (size_t)z->D_all * (z->n_pos - 1) * 2; k++)
            nc_plan_free(&z->pp[k]);
    } else if (!rc && (z->fold.flow_cell || unlike)) {
        fold_off(z, "off: the replicas are not alike on this fabric");
        flow_fold_free(&z->fold);
    }
    nc_flow_list_free(&l);
    free(roles);
    free(G);
    return rc;
}

