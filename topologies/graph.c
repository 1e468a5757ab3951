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
    free(g->link_is_down);
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

static void *dup_array(const void *p, size_t n, size_t elem)
{
    void *q = malloc(n * elem + 1);
    if (q && n)
        memcpy(q, p, n * elem);
    return q;
}

int topo_graph_degrade(const topo_graph *src, const double *link_speed, topo_graph *out)
{
    topo_graph *g = out;
    topo_graph_init(g);
    g->n_nodes = src->n_nodes;
    g->n_hosts = src->n_hosts;
    g->n_switches = src->n_switches;
    g->n_scaleup = src->n_scaleup;
    g->n_nics = src->n_nics;
    g->updown = src->updown;
    g->n_links = src->n_links;
    g->cap_nodes = src->n_nodes;
    g->cap_links = src->n_links;
    size_t nn = src->n_nodes, nl = src->n_links;
    g->node_kind = dup_array(src->node_kind, nn, 1);
    g->node_tier = dup_array(src->node_tier, nn, 1);
    g->node_plane = dup_array(src->node_plane, nn, 1);
    g->node_group = dup_array(src->node_group, nn, sizeof *g->node_group);
    g->link_src = dup_array(src->link_src, nl, sizeof *g->link_src);
    g->link_dst = dup_array(src->link_dst, nl, sizeof *g->link_dst);
    g->link_bytes_per_s = dup_array(src->link_bytes_per_s, nl, sizeof *g->link_bytes_per_s);
    g->out_offset = calloc(nn + 1, sizeof *g->out_offset);
    g->out_links = malloc((nl + 1) * sizeof *g->out_links);
    int any_down = 0;
    for (size_t l = 0; l < nl; l++)
        any_down |= link_speed[l] == 0;
    if (any_down)
        g->link_is_down = calloc(nl + 1, 1);
    if (!g->node_kind || !g->node_tier || !g->node_plane || !g->node_group || !g->link_src ||
        !g->link_dst || !g->link_bytes_per_s || !g->out_offset || !g->out_links ||
        (any_down && !g->link_is_down)) {
        topo_graph_fini(g);
        return -1;
    }
    for (size_t l = 0; l < nl; l++) {
        if (link_speed[l] == 0)
            g->link_is_down[l] = 1;
        else if (link_speed[l] < 1)
            g->link_bytes_per_s[l] *= link_speed[l];
    }
    /* src's adjacency in its order, less the down links */
    uint32_t n = 0;
    for (size_t v = 0; v < nn; v++) {
        g->out_offset[v] = n;
        for (uint32_t i = src->out_offset[v]; i < src->out_offset[v + 1]; i++)
            if (!g->link_is_down || !g->link_is_down[src->out_links[i]])
                g->out_links[n++] = src->out_links[i];
    }
    g->out_offset[nn] = n;
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
