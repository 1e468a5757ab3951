/* routing_build.c - the router's creation and the tables it builds once
 * (routing_internal.h): switches by group, each node's links up, each
 * switch's links to switches (split down / up in a layered folded Clos) and
 * the global links of every pair of groups. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing_internal.h"

#define FAIL(...) return (why && why_size ? snprintf(why, why_size, __VA_ARGS__) : 0), NULL

/* 1 + the highest group of a fabric switch; 0 when none has one */
uint32_t routing_switch_groups(const topo_graph *g)
{
    uint32_t n_groups = 0;
    for (uint32_t v = 0; v < g->n_nodes; v++)
        if (g->node_kind[v] == TOPO_SWITCH && g->node_group[v] != TOPO_NO_GROUP &&
            g->node_group[v] + 1 > n_groups)
            n_groups = g->node_group[v] + 1;
    return n_groups;
}

int routing_build_groups(topo_router *r)
{
    const topo_graph *g = r->g;
    uint32_t n_groups = routing_switch_groups(g);
    r->n_groups = n_groups;
    r->group_offset = calloc((size_t)n_groups + 2, sizeof *r->group_offset);
    r->group_switch = malloc(((size_t)r->n_sw + 1) * sizeof *r->group_switch);
    if (!r->group_offset || !r->group_switch)
        return -1;
    for (uint32_t v = 0; v < g->n_nodes; v++)
        if (r->sw_index[v] != UINT32_MAX && g->node_group[v] != TOPO_NO_GROUP)
            r->group_offset[g->node_group[v] + 1]++;
    for (uint32_t i = 0; i < n_groups; i++)
        r->group_offset[i + 1] += r->group_offset[i];
    uint32_t *fill = calloc((size_t)n_groups + 1, sizeof *fill);
    if (!fill)
        return -1;
    for (uint32_t v = 0; v < g->n_nodes; v++)
        if (r->sw_index[v] != UINT32_MAX && g->node_group[v] != TOPO_NO_GROUP) {
            uint32_t grp = g->node_group[v];
            r->group_switch[r->group_offset[grp] + fill[grp]++] = v;
        }
    free(fill);
    return 0;
}

/* Links to higher-tier switches, per node: a folded Clos's tables climb
 * only these, so a table costs the links above its switch, not the whole
 * fabric's adjacency (cores have 64 links and none of them up). */
int routing_build_up_links(topo_router *r)
{
    const topo_graph *g = r->g;
    r->up_offset = calloc((size_t)g->n_nodes + 2, sizeof *r->up_offset);
    r->up_links = malloc(((size_t)g->n_links + 1) * sizeof *r->up_links);
    if (!r->up_offset || !r->up_links)
        return -1;
    uint32_t n = 0;
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        r->up_offset[v] = n;
        for (uint32_t i = g->out_offset[v]; i < g->out_offset[v + 1]; i++) {
            uint32_t l = g->out_links[i], w = g->link_dst[l];
            if (g->node_kind[w] == TOPO_SWITCH && g->node_tier[w] > g->node_tier[v])
                r->up_links[n++] = l;
        }
    }
    r->up_offset[g->n_nodes] = n;
    return 0;
}

/* A folded Clos whose every switch-to-switch link climbs one tier or stays
 * on one: then a hop table holds tier(w) - tier(t) for every switch w in
 * it, so in next_links a switch in the table never has an up-neighbour one
 * hop nearer, and its candidates are among its links down or across. */
static int is_layered(const topo_router *r)
{
    const topo_graph *g = r->g;
    if (!g->updown)
        return 0;
    for (uint32_t l = 0; l < g->n_links; l++) {
        uint32_t a = g->link_src[l], b = g->link_dst[l];
        if (r->sw_index[a] != UINT32_MAX && r->sw_index[b] != UINT32_MAX &&
            g->node_tier[b] > g->node_tier[a] + 1)
            return 0;
    }
    return 1;
}

/* Each switch's links to switches with the far end's index and whether
 * it climbs: what next_links reads at every hop of every route. Layered
 * (is_layered): the links down and across first, then those up (each part
 * in out_links order, so next_links finds its candidates in the same order
 * in either part while scanning only one); else one part in out_links
 * order, adj_up the end. */
int routing_build_switch_adjacency(topo_router *r)
{
    const topo_graph *g = r->g;
    r->adj_offset = calloc((size_t)r->n_sw + 2, sizeof *r->adj_offset);
    r->adj_up = calloc((size_t)r->n_sw + 2, sizeof *r->adj_up);
    r->adj = malloc(((size_t)g->n_links + 1) * sizeof *r->adj);
    if (!r->adj_offset || !r->adj_up || !r->adj || r->n_sw >= 0x80000000u)
        return -1;
    r->is_layered = !r->full_tables && is_layered(r);
    uint32_t n = 0;
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        uint32_t vi = r->sw_index[v];
        if (vi == UINT32_MAX)
            continue;
        r->adj_offset[vi] = n;
        for (int part = 0; part < 2; part++) {
            if (part == 1)
                r->adj_up[vi] = n;
            for (uint32_t i = g->out_offset[v]; i < g->out_offset[v + 1]; i++) {
                uint32_t l = g->out_links[i], w = g->link_dst[l], wi = r->sw_index[w];
                uint32_t is_up = g->node_tier[w] > g->node_tier[v];
                if (wi != UINT32_MAX && (!r->is_layered || (int)is_up == part))
                    r->adj[n++] = (struct sw_hop){l, wi, is_up};
            }
            if (!r->is_layered)
                break;
        }
        if (!r->is_layered)
            r->adj_up[vi] = n;
    }
    r->adj_offset[r->n_sw] = n;
    return 0;
}

/* The global links of every ordered pair of groups (Dragonfly family). */
int routing_build_group_pairs(topo_router *r)
{
    const topo_graph *g = r->g;
    size_t pairs = (size_t)r->n_groups * r->n_groups;
    r->pair_offset = calloc(pairs + 2, sizeof *r->pair_offset);
    if (!r->pair_offset)
        return -1;
    uint32_t count = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t l = 0; l < g->n_links; l++) {
            uint32_t a = g->link_src[l], b = g->link_dst[l];
            if (r->sw_index[a] == UINT32_MAX || r->sw_index[b] == UINT32_MAX ||
                (g->link_is_down && g->link_is_down[l]))
                continue;
            uint32_t ga = g->node_group[a], gb = g->node_group[b];
            if (ga == gb || ga == TOPO_NO_GROUP || gb == TOPO_NO_GROUP)
                continue;
            size_t k = (size_t)ga * r->n_groups + gb;
            if (pass == 0) {
                r->pair_offset[k + 1]++;
                count++;
            } else {
                r->pair_link[r->pair_offset[k]++] = l;
            }
        }
        if (pass == 0) {
            for (size_t k = 0; k < pairs; k++)
                r->pair_offset[k + 1] += r->pair_offset[k];
            r->pair_link = malloc(((size_t)count + 1) * sizeof *r->pair_link);
            if (!r->pair_link)
                return -1;
        }
    }
    for (size_t k = pairs; k > 0; k--) /* the fill shifted every start by one bucket */
        r->pair_offset[k] = r->pair_offset[k - 1];
    r->pair_offset[0] = 0;
    return 0;
}


/* ---- hop tables kept once ----
 * In a folded Clos a leaf's table fills only the switches above it, the
 * same for every leaf of a pod: with each table's own destination entry
 * left out, the 2,641 leaves of the 100K fat-tree keep 70 tables, not
 * 2,641 (19 MB). A Dragonfly family's tables stay inside the destination's
 * group and hold only its switches, by position (routing_build_group_positions):
 * groups alike share them (39 MB of whole-fabric tables on dragonfly-100k). */

int routing_build_group_positions(topo_router *r)
{
    const topo_graph *g = r->g;
    uint32_t extra = r->n_groups; /* the switches without a group */
    r->sw_group = malloc(((size_t)r->n_sw + 1) * sizeof *r->sw_group);
    r->sw_pos = malloc(((size_t)r->n_sw + 1) * sizeof *r->sw_pos);
    r->group_size = calloc((size_t)extra + 1, sizeof *r->group_size);
    if (!r->sw_group || !r->sw_pos || !r->group_size)
        return -1;
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        uint32_t wi = r->sw_index[v];
        if (wi == UINT32_MAX)
            continue;
        uint32_t grp = g->node_group[v] == TOPO_NO_GROUP ? extra : g->node_group[v];
        r->sw_group[wi] = grp;
        r->sw_pos[wi] = r->group_size[grp]++;
    }
    return 0;
}

static uint64_t table_hash(const hop_count *h, size_t n)
{
    uint64_t x = 0x9E3779B97F4A7C15ull ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, h + i, 8);
        x = (x ^ w) * 0xBF58476D1CE4E5B9ull;
        x ^= x >> 31;
    }
    for (; i < n; i++)
        x = (x ^ h[i]) * 0x94D049BB133111EBull;
    return x ^ (x >> 29);
}

static int intern_grow(topo_router *r)
{
    uint32_t cap = r->intern_cap ? 2 * r->intern_cap : 64;
    uint32_t *slot = calloc(cap, sizeof *slot);
    if (!slot)
        return -1;
    for (uint32_t d = 0; d < r->n_distinct; d++) {
        uint32_t i = (uint32_t)r->distinct[d].hash & (cap - 1);
        while (slot[i])
            i = (i + 1) & (cap - 1);
        slot[i] = d + 1;
    }
    free(r->intern);
    r->intern = slot;
    r->intern_cap = cap;
    return 0;
}

hop_count *routing_intern_table(topo_router *r, uint32_t n)
{
    uint64_t h = table_hash(r->bfs, n);
    if (2 * ((size_t)r->n_distinct + 1) > r->intern_cap && intern_grow(r))
        return NULL;
    uint32_t i = (uint32_t)h & (r->intern_cap - 1);
    for (; r->intern[i]; i = (i + 1) & (r->intern_cap - 1)) {
        uint32_t d = r->intern[i] - 1;
        const struct kept_table *k = &r->distinct[d];
        if (k->hash == h && k->len == n && !memcmp(k->hops, r->bfs, n))
            return k->hops;
    }
    if (r->n_distinct == r->cap_distinct) {
        uint32_t cap = r->cap_distinct ? 2 * r->cap_distinct : 16;
        struct kept_table *t = realloc(r->distinct, cap * sizeof *t);
        if (!t)
            return NULL;
        r->distinct = t;
        r->cap_distinct = cap;
    }
    hop_count *copy = malloc(n + 1);
    if (!copy)
        return NULL;
    memcpy(copy, r->bfs, n);
    r->distinct[r->n_distinct] = (struct kept_table){copy, h, n};
    r->intern[i] = ++r->n_distinct;
    return copy;
}

int routing_build_endpoints(topo_router *r)
{
    const topo_graph *g = r->g;
    r->ep = malloc(((size_t)g->n_nodes + 1) * sizeof *r->ep);
    uint32_t n_up = 0;
    for (uint32_t v = 0; v < g->n_nodes; v++)
        if (g->node_kind[v] == TOPO_HOST || g->node_kind[v] == TOPO_NIC)
            for (uint32_t i = g->out_offset[v]; i < g->out_offset[v + 1]; i++)
                n_up += g->node_kind[g->link_dst[g->out_links[i]]] == TOPO_SWITCH;
    r->ep_up = malloc(((size_t)n_up + 1) * sizeof *r->ep_up);
    if (!r->ep || !r->ep_up)
        return -1;
    n_up = 0;
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        struct endpoint *e = &r->ep[v];
        *e = (struct endpoint){UINT32_MAX, UINT32_MAX, n_up, 0};
        if (g->node_kind[v] != TOPO_HOST && g->node_kind[v] != TOPO_NIC)
            continue;
        for (uint32_t i = g->out_offset[v]; i < g->out_offset[v + 1]; i++) {
            uint32_t l = g->out_links[i], kind = g->node_kind[g->link_dst[l]];
            if (kind == TOPO_SCALEUP && e->scaleup == UINT32_MAX)
                e->scaleup = l;
            else if (kind == TOPO_NIC && e->nic == UINT32_MAX)
                e->nic = l;
            else if (kind == TOPO_SWITCH)
                r->ep_up[n_up++] = l;
        }
        e->n_up = n_up - e->up_at;
    }
    return 0;
}

topo_router *topo_router_create(const topo_graph *g, const topo_route_config *cfg, char *why,
                                size_t why_size)
{
    if (!g->out_offset)
        FAIL("the topology is not finished");
    if (topo_router_check(cfg, g->updown, routing_switch_groups(g), why, why_size))
        return NULL;
    topo_router *r = calloc(1, sizeof *r);
    if (!r)
        FAIL("out of memory for the router");
    r->g = g;
    r->cfg = *cfg;
    r->full_tables = g->updown && g->link_is_down != NULL;
    r->sw_index = malloc(((size_t)g->n_nodes + 1) * sizeof *r->sw_index);
    r->node_weight = calloc((size_t)g->n_nodes + 1, sizeof *r->node_weight);
    r->front = malloc(((size_t)g->n_nodes + 1) * sizeof *r->front);
    r->next_front = malloc(((size_t)g->n_nodes + 1) * sizeof *r->next_front);
    r->link_slot = malloc(((size_t)g->n_links + 1) * sizeof *r->link_slot);
    if (!r->sw_index || !r->node_weight || !r->front || !r->next_front || !r->link_slot)
        goto oom;
    for (uint32_t l = 0; l < g->n_links; l++)
        r->link_slot[l] = UINT32_MAX;
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        r->sw_index[v] = g->node_kind[v] == TOPO_SWITCH ? r->n_sw++ : UINT32_MAX;
        uint32_t deg = g->out_offset[v + 1] - g->out_offset[v];
        if (deg > r->max_degree)
            r->max_degree = deg;
    }
    r->tables = calloc((size_t)r->n_sw + 1, sizeof *r->tables);
    r->bfs = malloc((size_t)r->n_sw + 1);
    r->queue = malloc(((size_t)r->n_sw + 1) * sizeof *r->queue);
    r->cand = malloc(((size_t)r->max_degree + 1) * sizeof *r->cand);
    r->tied = malloc(((size_t)r->max_degree + 64) * sizeof *r->tied);
    r->div = malloc(((size_t)r->max_degree + 64) * sizeof *r->div);
    r->pressure = malloc(((size_t)r->max_degree + 64) * sizeof *r->pressure);
    if (r->div)
        for (uint32_t k = 1; k < r->max_degree + 64; k++)
            r->div[k] = routing_divisor_of(k);
    if (!r->tables || !r->bfs || !r->queue || !r->cand || !r->tied || !r->div || !r->pressure ||
        routing_build_groups(r) || routing_build_switch_adjacency(r) ||
        routing_build_endpoints(r))
        goto oom;
    if (!g->updown && r->n_groups > 1 && routing_build_group_pairs(r))
        goto oom;
    if (g->updown && routing_build_up_links(r))
        goto oom;
    if (!g->updown && routing_build_group_positions(r))
        goto oom;
    return r;
oom:
    topo_router_destroy(r);
    FAIL("out of memory for the router");
}

void topo_router_destroy(topo_router *r)
{
    if (!r)
        return;
    for (uint32_t d = 0; d < r->n_distinct; d++)
        free(r->distinct[d].hops);
    free(r->distinct);
    free(r->sw_group);
    free(r->sw_pos);
    free(r->group_size);
    free(r->intern);
    free(r->bfs);
    free(r->tables);
    free(r->sw_index);
    free(r->queue);
    free(r->group_offset);
    free(r->group_switch);
    free(r->pair_offset);
    free(r->pair_link);
    free(r->up_offset);
    free(r->up_links);
    free(r->cand);
    free(r->tied);
    free(r->div);
    free(r->pressure);
    free(r->memo);
    free(r->memo_pool);
    free(r->memo_lists);
    free(r->memo_list_at);
    free(r->adj_offset);
    free(r->adj_up);
    free(r->adj);
    free(r->ep);
    free(r->ep_up);
    free(r->link_slot);
    free(r->node_weight);
    free(r->front);
    free(r->next_front);
    free(r);
}
