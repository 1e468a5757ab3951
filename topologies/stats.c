/* stats.c - topology counts, bisection bandwidth by maximum flow (Dinic) and
 * host diameter by bit-parallel breadth-first search (see stats.h).
 * Nothing here changes the graph; all scratch memory is freed on return. */
#include "stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAIL(...) return (why && why_size ? snprintf(why, why_size, __VA_ARGS__) : 0), -1

/* ---- counts ---- */

static int count_nodes(const topo_graph *g, topo_stats *s, char *why, size_t why_size)
{
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        uint32_t deg = g->out_offset[v + 1] - g->out_offset[v];
        if (g->node_kind[v] == TOPO_SCALEUP) {
            s->n_scaleup_domains++;
            s->max_scaleup_radix = deg > s->max_scaleup_radix ? deg : s->max_scaleup_radix;
        } else if (g->node_kind[v] == TOPO_SWITCH) {
            if (g->node_tier[v] < 1 || g->node_tier[v] > TOPO_STATS_MAX_TIER)
                FAIL("switch %u is in tier %u: counted are tiers 1 to %d", v, g->node_tier[v],
                     TOPO_STATS_MAX_TIER);
            s->n_switches++;
            s->switches_per_tier[g->node_tier[v]]++;
            s->switches_per_plane[g->node_plane[v]]++;
            if (g->node_plane[v] + 1u > s->n_planes)
                s->n_planes = g->node_plane[v] + 1u;
            s->max_switch_radix = deg > s->max_switch_radix ? deg : s->max_switch_radix;
        } else if (g->node_kind[v] == TOPO_NIC) {
            s->n_nics++;
        } else {
            s->n_hosts++;
        }
    }
    return 0;
}

static int count_cables(const topo_graph *g, topo_stats *s, char *why, size_t why_size)
{
    if (g->n_links % 2)
        FAIL("%u directed links: not whole cables (2 links each)", g->n_links);
    for (uint32_t l = 0; l < g->n_links; l += 2) {
        uint32_t a = g->link_src[l], b = g->link_dst[l];
        if (g->link_src[l + 1] != b || g->link_dst[l + 1] != a)
            FAIL("links %u and %u are not the two directions of one cable", l, l + 1);
        if (g->node_kind[a] == TOPO_SCALEUP || g->node_kind[b] == TOPO_SCALEUP)
            s->n_scaleup_cables++;
        else if ((g->node_kind[a] == TOPO_NIC && g->node_kind[b] == TOPO_HOST) ||
                 (g->node_kind[a] == TOPO_HOST && g->node_kind[b] == TOPO_NIC))
            s->n_nic_cables++;
        else {
            s->n_fabric_cables++;
            if (g->node_kind[a] != TOPO_SWITCH || g->node_kind[b] != TOPO_SWITCH)
                s->cables_per_tier[0]++;
            else /* tiers checked 1 .. TOPO_STATS_MAX_TIER by count_nodes */
                s->cables_per_tier[g->node_tier[a] < g->node_tier[b] ? g->node_tier[a]
                                                                     : g->node_tier[b]]++;
        }
    }
    s->n_links = g->n_links;
    s->n_optical_cables = s->n_fabric_cables; /* the rule in stats.h */
    s->n_transceivers = 2 * s->n_optical_cables;
    return 0;
}

int topo_stats_count(const topo_graph *g, topo_stats *out, char *why, size_t why_size)
{
    if (!g->out_offset)
        FAIL("the graph is not finished (topo_graph_finish)");
    topo_stats s;
    memset(&s, 0, sizeof s);
    if (count_nodes(g, &s, why, why_size) || count_cables(g, &s, why, why_size))
        return -1;
    *out = s;
    return 0;
}

int topo_stats_compute(const topo_graph *g, topo_stats *out, char *why, size_t why_size)
{
    topo_stats s;
    if (topo_stats_count(g, &s, why, why_size))
        return -1;
    if (topo_bisection_bytes_per_s(g, &s.bisection_bytes_per_s) ||
        topo_fabric_diameter(g, &s.diameter_links))
        FAIL("out of memory computing bisection and diameter");
    *out = s;
    return 0;
}

/* ---- bisection: maximum flow by Dinic's algorithm ----
 * Residual network: each fabric cable is an arc pair (2m, 2m+1), one per
 * direction, each the other's reverse (so an arc's reverse is a ^ 1 and its
 * tail is head[a ^ 1]); a super source feeds the first half of the hosts and
 * the second half drains into a super sink, both with more capacity than the
 * whole fabric. Hosts are then merged with source or sink, so whether they
 * forward makes no difference. */

typedef struct flownet {
    uint32_t n, s, t, n_arcs;
    uint32_t *off, *adj;    /* arcs out of v: adj[off[v] .. off[v+1]) */
    uint32_t *head;
    double *res;            /* residual capacity */
    int32_t *level;         /* BFS level; -1 unreached or dead end */
    uint32_t *it, *queue, *path;
    double eps;             /* residuals at or below count as zero */
} flownet;

static void flownet_free(flownet *f)
{
    free(f->off), free(f->adj), free(f->head), free(f->res);
    free(f->level), free(f->it), free(f->queue), free(f->path);
}

static int is_fabric_cable(const topo_graph *g, uint32_t l)
{
    return g->node_kind[g->link_src[l]] != TOPO_SCALEUP &&
           g->node_kind[g->link_dst[l]] != TOPO_SCALEUP;
}

static void add_arc_pair(flownet *f, uint32_t tail, uint32_t head, double cap, double back)
{
    uint32_t a = f->n_arcs;
    f->head[a] = head, f->res[a] = cap;
    f->head[a + 1] = tail, f->res[a + 1] = back;
    f->off[tail + 1]++, f->off[head + 1]++;
    f->n_arcs += 2;
}

/* arcs, then the CSR by tail */
static int flownet_build(flownet *f, const topo_graph *g)
{
    size_t arcs = (size_t)g->n_links + 2 * (size_t)g->n_hosts, n = (size_t)g->n_nodes + 2;
    f->n = (uint32_t)n, f->s = g->n_nodes, f->t = g->n_nodes + 1;
    f->off = calloc(n + 1, sizeof *f->off), f->adj = malloc(arcs * sizeof *f->adj);
    f->head = malloc(arcs * sizeof *f->head), f->res = malloc(arcs * sizeof *f->res);
    f->level = malloc(n * sizeof *f->level), f->it = malloc(n * sizeof *f->it);
    f->queue = malloc(n * sizeof *f->queue), f->path = malloc(n * sizeof *f->path);
    if (!f->off || !f->adj || !f->head || !f->res || !f->level || !f->it || !f->queue || !f->path)
        return -1;
    double total = 1, most = 0;
    for (uint32_t l = 0; l + 1 < g->n_links; l += 2)
        if (is_fabric_cable(g, l)) {
            add_arc_pair(f, g->link_src[l], g->link_dst[l], g->link_bytes_per_s[l],
                         g->link_bytes_per_s[l + 1]);
            total += g->link_bytes_per_s[l] + g->link_bytes_per_s[l + 1];
            most = g->link_bytes_per_s[l] > most ? g->link_bytes_per_s[l] : most;
        }
    uint32_t k = 0; /* hosts in id order (builders put them first) */
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        if (g->node_kind[v] != TOPO_HOST)
            continue;
        if (k++ < g->n_hosts / 2)
            add_arc_pair(f, f->s, v, total, 0);
        else
            add_arc_pair(f, v, f->t, total, 0);
    }
    f->eps = most * 1e-12;
    for (uint32_t v = 0; v < f->n; v++)
        f->off[v + 1] += f->off[v];
    memcpy(f->it, f->off, n * sizeof *f->it); /* it[]: next free slot per tail */
    for (uint32_t a = 0; a < f->n_arcs; a++)
        f->adj[f->it[f->head[a ^ 1]]++] = a;
    return 0;
}

/* Levels by BFS over arcs with residual left; 1 if the sink is reached. */
static int flownet_levels(flownet *f)
{
    for (uint32_t v = 0; v < f->n; v++)
        f->level[v] = -1;
    size_t head = 0, tail = 0;
    f->level[f->s] = 0;
    f->queue[tail++] = f->s;
    while (head < tail) {
        uint32_t v = f->queue[head++];
        if (f->level[f->t] >= 0 && f->level[v] >= f->level[f->t])
            break; /* nothing further can lie on a shortest path */
        for (uint32_t i = f->off[v]; i < f->off[v + 1]; i++) {
            uint32_t a = f->adj[i], w = f->head[a];
            if (f->res[a] > f->eps && f->level[w] < 0) {
                f->level[w] = f->level[v] + 1;
                f->queue[tail++] = w;
            }
        }
    }
    return f->level[f->t] >= 0;
}

/* Push the bottleneck along path[0 .. depth); returns the new depth: the
 * position of the first arc that it saturated. */
static uint32_t augment(flownet *f, uint32_t depth, double *total)
{
    double push = f->res[f->path[0]];
    for (uint32_t k = 1; k < depth; k++)
        push = f->res[f->path[k]] < push ? f->res[f->path[k]] : push;
    uint32_t back = depth;
    for (uint32_t k = 0; k < depth; k++) {
        uint32_t a = f->path[k];
        f->res[a] -= push;
        f->res[a ^ 1] += push;
        if (f->res[a] <= f->eps && back == depth)
            back = k;
    }
    *total += push;
    return back;
}

/* Blocking flow on the level graph by an iterative depth-first search with
 * current-arc pointers (it[]); dead ends get level -1. */
static double flownet_block(flownet *f)
{
    double total = 0;
    memcpy(f->it, f->off, (size_t)f->n * sizeof *f->it);
    uint32_t depth = 0, v = f->s;
    for (;;) {
        if (v == f->t) {
            depth = augment(f, depth, &total);
            v = depth ? f->head[f->path[depth - 1]] : f->s;
            continue;
        }
        uint32_t *i = &f->it[v];
        while (*i < f->off[v + 1] && !(f->res[f->adj[*i]] > f->eps &&
                                      f->level[f->head[f->adj[*i]]] == f->level[v] + 1))
            (*i)++;
        if (*i < f->off[v + 1]) { /* advance */
            f->path[depth++] = f->adj[*i];
            v = f->head[f->adj[*i]];
            continue;
        }
        f->level[v] = -1; /* retreat from a dead end */
        if (depth == 0)
            return total;
        v = f->head[f->path[--depth] ^ 1];
    }
}

int topo_bisection_bytes_per_s(const topo_graph *g, double *out)
{
    if (g->n_hosts < 2) {
        *out = 0;
        return 0;
    }
    flownet f;
    memset(&f, 0, sizeof f);
    if (flownet_build(&f, g)) {
        flownet_free(&f);
        return -1;
    }
    double flow = 0;
    while (flownet_levels(&f))
        flow += flownet_block(&f);
    flownet_free(&f);
    *out = flow;
    return 0;
}

/* ---- diameter: bit-parallel BFS from classes of hosts ---- */

typedef struct diam {
    uint32_t n_sw, n_cls;
    uint32_t *sw_of;          /* node -> switch index, UINT32_MAX if not a switch */
    uint32_t *soff, *sadj;    /* switch-to-switch adjacency (indices) */
    uint32_t *coff, *csw;     /* class c's switches: csw[coff[c] .. coff[c+1]) */
    uint64_t *seen, *front, *next, *hostseen;
} diam;

static void diam_free(diam *d)
{
    free(d->sw_of), free(d->soff), free(d->sadj), free(d->coff), free(d->csw);
    free(d->seen), free(d->front), free(d->next), free(d->hostseen);
}

/* switch indices and the switch-only adjacency */
static int diam_switches(diam *d, const topo_graph *g)
{
    d->sw_of = malloc(((size_t)g->n_nodes + 1) * sizeof *d->sw_of);
    if (!d->sw_of)
        return -1;
    for (uint32_t v = 0; v < g->n_nodes; v++)
        d->sw_of[v] = g->node_kind[v] == TOPO_SWITCH ? d->n_sw++ : UINT32_MAX;
    d->soff = calloc((size_t)d->n_sw + 1, sizeof *d->soff);
    d->sadj = malloc(((size_t)g->n_links + 1) * sizeof *d->sadj);
    if (!d->soff || !d->sadj)
        return -1;
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        if (d->sw_of[v] == UINT32_MAX)
            continue;
        uint32_t *k = &d->soff[d->sw_of[v] + 1];
        for (uint32_t i = g->out_offset[v]; i < g->out_offset[v + 1]; i++) {
            uint32_t w = g->link_dst[g->out_links[i]];
            if (d->sw_of[w] != UINT32_MAX)
                d->sadj[d->soff[d->sw_of[v]] + (*k)++] = d->sw_of[w];
        }
        *k += d->soff[d->sw_of[v]]; /* running prefix sum: switches in id order */
    }
    return 0;
}

/* Host h's fabric switches, sorted and without repeats, into buf (room for
 * its degree); returns how many. */
/* the node whose uplinks a host's fabric traffic takes: its shared NIC
 * (nic.h) if it has one, else the host */
static uint32_t fabric_end(const topo_graph *g, uint32_t h)
{
    for (uint32_t i = g->out_offset[h]; i < g->out_offset[h + 1]; i++) {
        uint32_t w = g->link_dst[g->out_links[i]];
        if (g->node_kind[w] == TOPO_NIC)
            return w;
    }
    return h;
}

static uint32_t host_switches(const topo_graph *g, const diam *d, uint32_t h, uint32_t *buf)
{
    uint32_t n = 0;
    h = fabric_end(g, h);
    for (uint32_t i = g->out_offset[h]; i < g->out_offset[h + 1]; i++) {
        uint32_t s = d->sw_of[g->link_dst[g->out_links[i]]];
        if (s == UINT32_MAX)
            continue;
        uint32_t k = n;
        while (k && buf[k - 1] > s) /* insertion sort: a host has few uplinks */
            buf[k] = buf[k - 1], k--;
        if (k && buf[k - 1] == s)
            memmove(buf + k, buf + k + 1, (n - k) * sizeof *buf); /* repeat: undo */
        else
            buf[k] = s, n++;
    }
    return n;
}

typedef struct host_key {
    uint64_t hash;
    uint32_t host;
} host_key;

static int cmp_host_key(const void *x, const void *y)
{
    const host_key *a = x, *b = y;
    if (a->hash != b->hash)
        return a->hash < b->hash ? -1 : 1;
    return a->host < b->host ? -1 : a->host > b->host;
}

static uint64_t hash_list(const uint32_t *s, uint32_t n)
{
    uint64_t x = 1469598103934665603ull ^ n; /* FNV-1a */
    for (uint32_t i = 0; i < n; i++)
        x = (x ^ s[i]) * 1099511628211ull;
    return x;
}

/* Classes of hosts by switch set: sorted by hash, a new class starts where
 * the set differs from the previous host's (a hash collision only splits a
 * class, which costs time, not correctness). */
static int diam_classes(diam *d, const topo_graph *g)
{
    uint32_t nh = 0, deg_max = 1;
    host_key *keys = malloc(((size_t)g->n_hosts + 1) * sizeof *keys);
    for (uint32_t v = 0; keys && v < g->n_nodes; v++)
        if (g->node_kind[v] == TOPO_HOST) {
            keys[nh++].host = v;
            uint32_t e = fabric_end(g, v); /* host_switches reads e's links */
            if (g->out_offset[e + 1] - g->out_offset[e] > deg_max)
                deg_max = g->out_offset[e + 1] - g->out_offset[e];
        }
    uint32_t *a = malloc(2 * (size_t)deg_max * sizeof *a), *b = a ? a + deg_max : NULL;
    d->coff = calloc((size_t)nh + 1, sizeof *d->coff);
    d->csw = malloc(((size_t)g->n_links + 1) * sizeof *d->csw);
    int ok = keys && a && d->coff && d->csw;
    for (uint32_t i = 0; ok && i < nh; i++)
        keys[i].hash = hash_list(a, host_switches(g, d, keys[i].host, a));
    if (ok)
        qsort(keys, nh, sizeof *keys, cmp_host_key);
    uint32_t nb = 0;
    for (uint32_t i = 0; ok && i < nh; i++) {
        uint32_t na = host_switches(g, d, keys[i].host, a);
        if (i && na == nb && !memcmp(a, b, na * sizeof *a))
            continue; /* same set as the previous host: same class */
        memcpy(d->csw + d->coff[d->n_cls], a, na * sizeof *a);
        d->coff[d->n_cls + 1] = d->coff[d->n_cls] + na;
        d->n_cls++;
        memcpy(b, a, na * sizeof *a), nb = na;
    }
    free(keys), free(a);
    return ok ? 0 : -1;
}

/* Mark in hostseen the classes each source has reached; 1 if every class is
 * reached by every source of the batch (mask `full`), *newly if any was new. */
static int diam_reach(diam *d, uint64_t full, int *newly)
{
    int all = 1;
    *newly = 0;
    for (uint32_t c = 0; c < d->n_cls; c++) {
        uint64_t r = 0;
        for (uint32_t i = d->coff[c]; i < d->coff[c + 1]; i++)
            r |= d->seen[d->csw[i]];
        *newly |= (r & ~d->hostseen[c]) != 0;
        d->hostseen[c] |= r;
        all &= d->hostseen[c] == full;
    }
    return all;
}

/* One BFS step for all sources at once; 0 when the frontier is empty. */
static int diam_step(diam *d)
{
    uint64_t any = 0;
    for (uint32_t w = 0; w < d->n_sw; w++) {
        uint64_t acc = 0;
        for (uint32_t i = d->soff[w]; i < d->soff[w + 1]; i++)
            acc |= d->front[d->sadj[i]];
        d->next[w] = acc & ~d->seen[w];
        any |= d->next[w];
    }
    for (uint32_t w = 0; w < d->n_sw; w++)
        d->seen[w] |= d->next[w];
    uint64_t *t = d->front;
    d->front = d->next, d->next = t;
    return any != 0;
}

/* Largest host distance from classes first .. first + m - 1 (m <= 64). */
static uint32_t diam_batch(diam *d, uint32_t first, uint32_t m)
{
    uint64_t full = m == 64 ? ~0ull : (1ull << m) - 1;
    memset(d->seen, 0, (size_t)d->n_sw * sizeof *d->seen);
    memset(d->front, 0, (size_t)d->n_sw * sizeof *d->front);
    memset(d->hostseen, 0, (size_t)d->n_cls * sizeof *d->hostseen);
    for (uint32_t k = 0; k < m; k++)
        for (uint32_t i = d->coff[first + k]; i < d->coff[first + k + 1]; i++) {
            d->seen[d->csw[i]] |= 1ull << k;
            d->front[d->csw[i]] |= 1ull << k;
        }
    uint32_t level = 1, most = 0; /* level: links from a source host to `seen` */
    for (;;) {
        int newly;
        int all = diam_reach(d, full, &newly);
        if (newly)
            most = level + 1; /* one more link down to the host */
        if (all)
            return most;
        if (!diam_step(d))
            return UINT32_MAX;
        level++;
    }
}

int topo_fabric_diameter(const topo_graph *g, uint32_t *out)
{
    if (g->n_hosts < 2) {
        *out = 0;
        return 0;
    }
    diam d;
    memset(&d, 0, sizeof d);
    int rc = diam_switches(&d, g) || diam_classes(&d, g) ? -1 : 0;
    if (!rc) {
        d.seen = malloc(((size_t)d.n_sw + 1) * sizeof *d.seen);
        d.front = malloc(((size_t)d.n_sw + 1) * sizeof *d.front);
        d.next = malloc(((size_t)d.n_sw + 1) * sizeof *d.next);
        d.hostseen = malloc(((size_t)d.n_cls + 1) * sizeof *d.hostseen);
        rc = d.seen && d.front && d.next && d.hostseen ? 0 : -1;
    }
    uint32_t most = 0;
    for (uint32_t c = 0; !rc && c < d.n_cls && most != UINT32_MAX; c += 64) {
        uint32_t e = diam_batch(&d, c, d.n_cls - c < 64 ? d.n_cls - c : 64);
        most = e > most ? e : most;
    }
    diam_free(&d);
    if (!rc)
        *out = most;
    return rc;
}
