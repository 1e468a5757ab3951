/* graph.c - graph storage and breadth-first hop counts (see graph.h). */
#include "graph.h"

#include <stdlib.h>
#include <string.h>

int topo_choice_find(const topo_choice *table, const char *name)
{
    for (int i = 0; table[i].name; i++)
        if (!strcmp(table[i].name, name))
            return i;
    return -1;
}

void topo_graph_init(topo_graph *g) { memset(g, 0, sizeof *g); }

void topo_graph_fini(topo_graph *g)
{
    if (!g)
        return;
    free(g->node_kind);
    free(g->node_tier);
    free(g->node_plane);
    free(g->node_group);
    free(g->link_src);
    free(g->link_dst);
    free(g->link_bytes_per_s);
    free(g->out_offset);
    free(g->out_links);
    memset(g, 0, sizeof *g);
}

static int grow(void **p, size_t cap, size_t elem)
{
    void *q = realloc(*p, cap * elem);
    if (!q)
        return -1;
    *p = q;
    return 0;
}

uint32_t topo_graph_add_node(topo_graph *g, enum topo_node_kind kind, unsigned tier)
{
    if (g->failed)
        return UINT32_MAX;
    if (g->n_nodes == g->cap_nodes) {
        size_t cap = g->cap_nodes ? 2 * g->cap_nodes : 256;
        if (grow((void **)&g->node_kind, cap, 1) || grow((void **)&g->node_tier, cap, 1) ||
            grow((void **)&g->node_plane, cap, 1) ||
            grow((void **)&g->node_group, cap, sizeof *g->node_group)) {
            g->failed = 1;
            return UINT32_MAX;
        }
        g->cap_nodes = cap;
    }
    uint32_t id = g->n_nodes++;
    g->node_kind[id] = (uint8_t)kind;
    g->node_tier[id] = (uint8_t)tier;
    g->node_plane[id] = 0;
    g->node_group[id] = TOPO_NO_GROUP;
    if (kind == TOPO_HOST)
        g->n_hosts++;
    else if (kind == TOPO_SCALEUP)
        g->n_scaleup++;
    else if (kind == TOPO_NIC)
        g->n_nics++;
    else
        g->n_switches++;
    return id;
}

uint32_t topo_graph_add_nodes(topo_graph *g, uint32_t count, enum topo_node_kind kind,
                              unsigned tier)
{
    uint32_t first = g->n_nodes;
    for (uint32_t i = 0; i < count && !g->failed; i++)
        topo_graph_add_node(g, kind, tier);
    return g->failed ? UINT32_MAX : first;
}

static void add_link(topo_graph *g, uint32_t a, uint32_t b, double bytes_per_s)
{
    if (g->n_links == g->cap_links) {
        size_t cap = g->cap_links ? 2 * g->cap_links : 1024;
        if (grow((void **)&g->link_src, cap, sizeof *g->link_src) ||
            grow((void **)&g->link_dst, cap, sizeof *g->link_dst) ||
            grow((void **)&g->link_bytes_per_s, cap, sizeof *g->link_bytes_per_s)) {
            g->failed = 1;
            return;
        }
        g->cap_links = cap;
    }
    uint32_t id = g->n_links++;
    g->link_src[id] = a;
    g->link_dst[id] = b;
    g->link_bytes_per_s[id] = bytes_per_s;
}

void topo_graph_add_cable(topo_graph *g, uint32_t a, uint32_t b, double bytes_per_s)
{
    if (g->failed || a >= g->n_nodes || b >= g->n_nodes) {
        g->failed = 1;
        return;
    }
    add_link(g, a, b, bytes_per_s);
    if (!g->failed)
        add_link(g, b, a, bytes_per_s);
}

int topo_graph_finish(topo_graph *g)
{
    if (g->failed)
        return -1;
    free(g->out_offset);
    free(g->out_links);
    g->out_offset = calloc((size_t)g->n_nodes + 1, sizeof *g->out_offset);
    g->out_links = malloc(((size_t)g->n_links + 1) * sizeof *g->out_links);
    if (!g->out_offset || !g->out_links) {
        g->failed = 1;
        return -1;
    }
    /* counting sort of links by source: links of a node stay in id order */
    for (uint32_t l = 0; l < g->n_links; l++)
        g->out_offset[g->link_src[l] + 1]++;
    for (uint32_t v = 0; v < g->n_nodes; v++)
        g->out_offset[v + 1] += g->out_offset[v];
    uint32_t *next = malloc(((size_t)g->n_nodes + 1) * sizeof *next);
    if (!next) {
        g->failed = 1;
        return -1;
    }
    memcpy(next, g->out_offset, ((size_t)g->n_nodes + 1) * sizeof *next);
    for (uint32_t l = 0; l < g->n_links; l++)
        g->out_links[next[g->link_src[l]]++] = l;
    free(next);
    return 0;
}

int topo_graph_hops_from(const topo_graph *g, uint32_t src, uint32_t *dist)
{
    uint32_t *queue = malloc(((size_t)g->n_nodes + 1) * sizeof *queue);
    if (!queue)
        return -1;
    for (uint32_t v = 0; v < g->n_nodes; v++)
        dist[v] = UINT32_MAX;
    size_t head = 0, tail = 0;
    dist[src] = 0;
    queue[tail++] = src;
    while (head < tail) {
        uint32_t v = queue[head++];
        if (v != src && g->node_kind[v] == TOPO_HOST)
            continue; /* hosts do not forward */
        for (uint32_t i = g->out_offset[v]; i < g->out_offset[v + 1]; i++) {
            uint32_t w = g->link_dst[g->out_links[i]];
            if (dist[w] == UINT32_MAX) {
                dist[w] = dist[v] + 1;
                queue[tail++] = w;
            }
        }
    }
    free(queue);
    return 0;
}
