/* routing.c - shortest-path, Valiant and UGAL routes with ECMP, adaptive or
 * spraying balance (see routing.h). */
#include "routing.h"
#include "routing_choose.h"
#include "routing_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAIL(...) return (why && why_size ? snprintf(why, why_size, __VA_ARGS__) : 0), NULL
#define MAX_ROUTE_HOPS 64 /* a path longer than this means a broken table */

const topo_choice topo_balances[] = {
    [TOPO_BALANCE_ECMP] = {"ecmp", "a hash of the connection, QP and switch picks one equal-cost "
                                   "next hop"},
    [TOPO_BALANCE_ADAPTIVE] = {"adaptive", "the equal-cost next hop with the least load per "
                                           "byte/s when the connection starts"},
    [TOPO_BALANCE_SPRAY] = {"spray", "an even split over every equal-cost next hop (per-packet "
                                     "spraying)"},
    {NULL, NULL},
};

const topo_choice topo_path_classes[] = {
    [TOPO_PATH_MINIMAL] = {"minimal", "shortest paths only"},
    [TOPO_PATH_VALIANT] = {"valiant", "minimal to a random router of a random third group, "
                                      "then minimal on (Dragonfly family)"},
    [TOPO_PATH_UGAL] = {"ugal", "per connection, minimal unless the Valiant path's hops x "
                                "highest load is smaller (Dragonfly family)"},
    {NULL, NULL},
};

const char *topo_balance_name(int b)
{
    return b >= 0 && b < TOPO_BALANCE_COUNT ? topo_balances[b].name : "?";
}

const char *topo_path_class_name(int c)
{
    return c >= 0 && c < TOPO_PATH_COUNT ? topo_path_classes[c].name : "?";
}

int topo_balance_parse(const char *name, enum topo_balance *out)
{
    int i = topo_choice_find(topo_balances, name);
    if (i < 0)
        return -1;
    *out = (enum topo_balance)i;
    return 0;
}

int topo_path_class_parse(const char *name, enum topo_path_class *out)
{
    int i = topo_choice_find(topo_path_classes, name);
    if (i < 0)
        return -1;
    *out = (enum topo_path_class)i;
    return 0;
}

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static inline uint64_t hash4(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    return mix64(mix64(mix64(mix64(a) ^ b) ^ c) ^ d);
}

int topo_router_check(const topo_route_config *cfg, int updown, uint32_t groups, char *why,
                      size_t why_size)
{
    if (cfg->qps < 1)
        return snprintf(why, why_size, "qps (ECMP sub-flows per connection) must be at least 1"),
               -1;
    if (cfg->path_class != TOPO_PATH_MINIMAL && updown)
        return snprintf(why, why_size,
                        "%s routing needs a Dragonfly-family topology: in a folded Clos every "
                        "shortest path is already balanced by ECMP, adaptive routing or spraying",
                        topo_path_class_name(cfg->path_class)),
               -1;
    if (cfg->path_class != TOPO_PATH_MINIMAL && groups < 3)
        return snprintf(why, why_size,
                        "%s routing needs at least 3 switch groups (a third group to detour "
                        "through), the topology has %u",
                        topo_path_class_name(cfg->path_class), groups),
               -1;
    return 0;
}

size_t topo_route_max_usages(const topo_router *r) { return r->g->n_links; }
int topo_router_uses_load(const topo_router *r)
{
    return r->cfg.balance == TOPO_BALANCE_ADAPTIVE || r->cfg.path_class == TOPO_PATH_UGAL;
}

size_t topo_router_tables(const topo_router *r) { return r->n_tables; }
size_t topo_router_tables_kept(const topo_router *r) { return r->n_distinct; }
size_t topo_router_table_bytes(const topo_router *r)
{
    size_t b = 0;
    for (uint32_t d = 0; d < r->n_distinct; d++)
        b += r->distinct[d].len;
    return b;
}

/* Entry wi of the table to switch index ti: ti's own reads 0 (the kept
 * table leaves it out); a Dragonfly family's table (pos set) holds only the
 * switches of ti's group, by position, the others are out of its reach. */
static inline hop_count hop_at(const hop_count *hops, const uint32_t *grp, const uint32_t *pos,
                               uint32_t ti, uint32_t wi)
{
    if (wi == ti)
        return 0;
    if (!pos)
        return hops[wi];
    return grp[wi] == grp[ti] ? hops[pos[wi]] : HOP_INF;
}

/* Hops to switch t from every switch it can be reached from: in a folded
 * Clos by switch index, only the switches above t filled (the search
 * climbs from t); in a Dragonfly family only the switches of t's group (by
 * position). t's own entry is stored as HOP_INF (hop_at). */
static const hop_count *build_table(topo_router *r, uint32_t t)
{
    uint32_t ti = r->sw_index[t];
    const topo_graph *g = r->g;
    const uint32_t *grp = r->sw_group, *pos = r->sw_pos;
    hop_count *hops = r->bfs;
    uint32_t n = pos ? r->group_size[grp[ti]] : r->n_sw;
    for (uint32_t i = 0; i < n; i++)
        hops[i] = HOP_INF;
    size_t head = 0, tail = 0;
    hops[pos ? pos[ti] : ti] = 0;
    r->queue[tail++] = t;
    while (head < tail) {
        uint32_t u = r->queue[head++], ui = r->sw_index[u];
        hop_count du = hops[pos ? pos[ui] : ui];
        if (du + 1 >= HOP_INF)
            continue; /* farther than any route may go */
        int up_only = g->updown && !r->full_tables;
        const uint32_t *links = up_only ? r->up_links + r->up_offset[u]
                                        : g->out_links + g->out_offset[u];
        uint32_t nl = up_only ? r->up_offset[u + 1] - r->up_offset[u]
                              : g->out_offset[u + 1] - g->out_offset[u];
        for (uint32_t i = 0; i < nl; i++) {
            uint32_t w = g->link_dst[links[i]];
            uint32_t wi = r->sw_index[w];
            if (wi == UINT32_MAX || (pos && grp[wi] != grp[ti]))
                continue; /* Dragonfly family: tables stay inside the group */
            hop_count *hw = &hops[pos ? pos[wi] : wi];
            if (*hw != HOP_INF)
                continue;
            *hw = (hop_count)(du + 1);
            r->queue[tail++] = w;
        }
    }
    hops[pos ? pos[ti] : ti] = HOP_INF;
    r->tables[ti] = routing_intern_table(r, n);
    if (!r->tables[ti]) {
        r->out_of_memory = 1; /* topo_route says so, rather than "no route" */
        return NULL;
    }
    r->n_tables++;
    return r->tables[ti];
}

/* build_table's table, built the first time (a test inlined where routes
 * are walked: every later call) */
static inline const hop_count *table_to(topo_router *r, uint32_t t)
{
    const hop_count *kept = r->tables[r->sw_index[t]];
    return kept ? kept : build_table(r, t);
}

/* The equal-cost next links from switch v towards t: down the table when v
 * is in it, else (folded Clos, below the common ancestors) up, preferring
 * up-neighbours that are in the table. Returns the number written to cand. */
static uint32_t next_links(topo_router *r, uint32_t v, const hop_count *hops, uint32_t ti)
{
    const uint32_t *grp = r->sw_group, *pos = r->sw_pos;
    uint32_t vi = r->sw_index[v];
    hop_count dv = hop_at(hops, grp, pos, ti, vi);
    uint32_t n = 0;
    const struct sw_hop *a = r->adj + r->adj_offset[vi], *up = r->adj + r->adj_up[vi];
    const struct sw_hop *end = r->adj + r->adj_offset[vi + 1];
    if (dv != HOP_INF) { /* layered: no link up leads nearer (is_layered) */
        for (const struct sw_hop *stop = r->is_layered ? up : end; a < stop; a++)
            if (hop_at(hops, grp, pos, ti, a->wi) + 1 == dv)
                r->cand[n++] = a->link;
        return n;
    }
    if (r->full_tables)
        return 0; /* v cannot reach t over the links still up */
    hop_count best = HOP_INF;
    for (a = r->is_layered ? up : a; a < end; a++) {
        if (!a->is_up)
            continue;
        hop_count h = hop_at(hops, grp, pos, ti, a->wi);
        if (h < best) { /* a common ancestor: keep only the nearest ones */
            best = h;
            n = 0;
        }
        if (h == best)
            r->cand[n++] = a->link;
    }
    return n;
}

/* next_links' answer for (v, t) from the memo, computing and keeping it
 * the first time; *nc its count. Falls back to r->cand (computed now) when
 * the memo is off or full. */
static const uint32_t *next_links_kept(topo_router *r, uint32_t v, const hop_count *hops,
                                       uint32_t ti, uint32_t *nc)
{
    if (!r->memo && !r->memo_off) {
        if (r->n_sw <= ROUTING_MEMO_MAX_SWITCHES)
            r->memo = calloc((size_t)r->n_sw * r->n_sw, sizeof *r->memo);
        r->memo_off = !r->memo;
    }
    if (r->memo_off) {
        *nc = next_links(r, v, hops, ti);
        return r->cand;
    }
    uint16_t *slot = &r->memo[(size_t)r->sw_index[v] * r->n_sw + ti];
    if (*slot) {
        const uint32_t *kept = r->memo_pool + r->memo_list_at[*slot - 1];
        *nc = kept[0];
        return kept + 1;
    }
    uint32_t n = next_links(r, v, hops, ti);
    *nc = n;
    uint32_t index = routing_memo_keep(r, r->cand, n);
    if (index == UINT32_MAX) /* full: this and later new pairs computed each time */
        return r->cand;
    *slot = (uint16_t)(index + 1);
    return r->memo_pool + r->memo_list_at[index] + 1;
}

static double link_pressure(const topo_graph *g, const double *load, uint32_t l)
{
    return load ? load[l] / g->link_bytes_per_s[l] : 0.0;
}

/* One of n candidate links by the balancing rule (ECMP hash, or least
 * pressure with hash tie-break). The tie-break is a reservoir choice: the
 * k-th tie (k = 1, 2, ...) replaces the pick when mix64(h + k) % k == 0, so
 * the pick is the last tie whose test holds: found by testing from the last
 * tie back (about half the hashes of a forward pass; the same pick). */
static uint32_t choose_among(topo_router *r, const uint32_t *cand, uint32_t n, uint64_t key,
                             uint64_t qp, uint32_t at, const double *load)
{
    uint64_t h = hash4(r->cfg.seed, key, qp, at);
    if (r->cfg.balance != TOPO_BALANCE_ADAPTIVE || !load)
        return cand[h % n];
    const double *cap = r->g->link_bytes_per_s;
    uint32_t *tied = r->tied; /* n <= max_degree, or 64 (walk_single, landing) */
    uint32_t ties = routing_ties_at_least(load, cap, cand, n, tied);
    if (!ties) {
        double *p = r->pressure; /* every division first (independent: they overlap); */
        for (uint32_t i = 0; i < n; i++) { /* an idle link's is its load (+-0), its */
            double l = load[cand[i]];      /* capacity unread */
            p[i] = l == 0 ? l : l / cap[cand[i]];
        }
        ties = routing_ties_by_scan(p, cand, n, tied);
    }
    if (!ties) /* no candidate below infinite pressure: the forward pass kept cand[0] */
        return cand[0];
    for (uint32_t k = ties; k > 1; k--)
        if (is_multiple(mix64(h + k), &r->div[k]))
            return tied[k - 1];
    return tied[0];
}

/* choose_among n >= 2; a lone candidate is the pick (inlined: no call) */
static inline uint32_t choose(topo_router *r, const uint32_t *cand, uint32_t n, uint64_t key,
                              uint64_t qp, uint32_t at, const double *load)
{
    return n == 1 ? cand[0] : choose_among(r, cand, n, key, qp, at, load);
}

/* Weight w on link l in the route out[0 .. *n): added to l's entry, or a
 * new entry at the end. A short route (a single path: a few links) finds
 * l's entry by a look through it; from ROUTE_SHORT entries on (spraying)
 * by link_slot, filled then for the entries so far and cleared by
 * topo_route: the same entries either way. */
#define ROUTE_SHORT 8u
static void add_usage_long(topo_router *r, uint32_t l, double w, topo_usage *out, size_t *n)
{
    if (*n == ROUTE_SHORT - 1) { /* the last look through; link_slot kept from here */
        for (size_t i = 0; i < *n; i++)
            if (out[i].link == l) {
                out[i].weight += w;
                return;
            }
        out[(*n)++] = (topo_usage){l, w};
        for (size_t i = 0; i < *n; i++)
            r->link_slot[out[i].link] = (uint32_t)i;
        return;
    }
    uint32_t s = r->link_slot[l];
    if (s != UINT32_MAX) {
        out[s].weight += w;
        return;
    }
    r->link_slot[l] = (uint32_t)*n;
    out[(*n)++] = (topo_usage){l, w};
}

static inline void add_usage(topo_router *r, uint32_t l, double w, topo_usage *out, size_t *n)
{
    if (*n >= ROUTE_SHORT - 1) {
        add_usage_long(r, l, w, out, n);
        return;
    }
    for (size_t i = 0; i < *n; i++)
        if (out[i].link == l) {
            out[i].weight += w;
            return;
        }
    out[(*n)++] = (topo_usage){l, w};
}

/* A single path from switch v to switch t, weight w, by the balancing
 * rule; appends links to path (at most MAX_ROUTE_HOPS). Returns the count or
 * -1 when t cannot be reached. */
static int walk_table_single(topo_router *r, uint32_t v, uint32_t t, uint64_t key, uint64_t qp,
                       const double *load, uint32_t *path)
{
    const hop_count *hops = table_to(r, t);
    if (!hops)
        return -1;
    int n = 0;
    while (v != t) {
        uint32_t nc;
        const uint32_t *cand = next_links_kept(r, v, hops, r->sw_index[t], &nc);
        if (!nc || n == MAX_ROUTE_HOPS)
            return -1;
        uint32_t l = choose(r, cand, nc, key, qp, v, load);
        path[n++] = l;
        v = r->g->link_dst[l];
    }
    return n;
}

/* Spray weight w from switch v to switch t evenly over every shortest path. */
static int walk_table_spray(topo_router *r, uint32_t v, uint32_t t, double w, topo_usage *out,
                      size_t *n_out)
{
    const hop_count *hops = table_to(r, t);
    if (!hops)
        return -1;
    uint32_t nf = 1, steps = 0;
    r->front[0] = v;
    r->node_weight[v] = w;
    while (nf) {
        uint32_t nn = 0;
        if (++steps > MAX_ROUTE_HOPS)
            return -1;
        for (uint32_t i = 0; i < nf; i++) {
            uint32_t u = r->front[i];
            double wu = r->node_weight[u];
            r->node_weight[u] = 0;
            if (u == t)
                continue;
            uint32_t nc = next_links(r, u, hops, r->sw_index[t]);
            if (!nc)
                return -1;
            for (uint32_t c = 0; c < nc; c++) {
                uint32_t l = r->cand[c], x = r->g->link_dst[l];
                add_usage(r, l, wu / nc, out, n_out);
                if (r->node_weight[x] == 0)
                    r->next_front[nn++] = x;
                r->node_weight[x] += wu / nc;
            }
        }
        uint32_t *tmp = r->front;
        r->front = r->next_front;
        r->next_front = tmp;
        nf = nn;
    }
    return 0;
}

/* The global links from s's group to t's group (Dragonfly family), or
 * none when they share a group or the topology has no groups. */
static uint32_t group_links(const topo_router *r, uint32_t s, uint32_t t, const uint32_t **links)
{
    const topo_graph *g = r->g;
    uint32_t gs = g->node_group[s], gt = g->node_group[t];
    if (!r->pair_offset || gs == gt || gs == TOPO_NO_GROUP || gt == TOPO_NO_GROUP)
        return 0;
    size_t k = (size_t)gs * r->n_groups + gt;
    *links = r->pair_link + r->pair_offset[k];
    return r->pair_offset[k + 1] - r->pair_offset[k];
}

/* A minimal single path from switch s to switch t: inside a group by the
 * tables; between groups local, one global link, local (the Dragonfly's
 * minimal route: at most one global hop, hardware.md 6.3). */
static int walk_single(topo_router *r, uint32_t s, uint32_t t, uint64_t key, uint64_t qp,
                       const double *load, uint32_t *path)
{
    const uint32_t *gl;
    uint32_t ng = group_links(r, s, t, &gl);
    if (r->pair_offset && r->g->node_group[s] != r->g->node_group[t] && !ng)
        return -1; /* groups with no link between them */
    if (!ng)
        return walk_table_single(r, s, t, key, qp, load, path);
    uint32_t pick[64];
    uint32_t np = ng < 64 ? ng : 64;
    for (uint32_t i = 0; i < np; i++)
        pick[i] = gl[i];
    uint32_t l = choose(r, pick, np, key, qp, s ^ 0x80000000u, load);
    int a = walk_table_single(r, s, r->g->link_src[l], key, qp, load, path);
    if (a < 0)
        return -1;
    path[a] = l;
    int b = walk_table_single(r, r->g->link_dst[l], t, key, qp, load, path + a + 1);
    return b < 0 ? -1 : a + 1 + b;
}

/* Spray weight w from switch s to switch t over every minimal path (split
 * evenly over the global links of the group pair, if several). */
static int walk_spray(topo_router *r, uint32_t s, uint32_t t, double w, topo_usage *out,
                      size_t *n_out)
{
    const uint32_t *gl;
    uint32_t ng = group_links(r, s, t, &gl);
    if (r->pair_offset && r->g->node_group[s] != r->g->node_group[t] && !ng)
        return -1;
    if (!ng)
        return walk_table_spray(r, s, t, w, out, n_out);
    for (uint32_t i = 0; i < ng; i++) {
        uint32_t l = gl[i];
        if (walk_table_spray(r, s, r->g->link_src[l], w / ng, out, n_out) ||
            walk_table_spray(r, r->g->link_dst[l], t, w / ng, out, n_out))
            return -1;
        add_usage(r, l, w / ng, out, n_out);
    }
    return 0;
}

/* The fabric uplinks of host (or shared NIC) v, in out_links order;
 * *n their count. */
static const uint32_t *uplinks(const topo_router *r, uint32_t v, uint32_t *n)
{
    *n = r->ep[v].n_up;
    return r->ep_up + r->ep[v].up_at;
}

/* dst's uplink in the plane of switch s, or UINT32_MAX. */
static uint32_t uplink_in_plane(const topo_router *r, uint32_t dst, uint32_t s)
{
    const uint8_t *plane = r->g->node_plane;
    uint32_t n;
    const uint32_t *up = uplinks(r, dst, &n);
    for (uint32_t i = 0; i < n; i++)
        if (plane[r->g->link_dst[up[i]]] == plane[s])
            return up[i];
    return UINT32_MAX;
}

/* Keep in r->cand the n uplinks up[0 .. n) whose plane holds an uplink of
 * host (or NIC) dst; returns how many are kept. */
static uint32_t planes_to(topo_router *r, const uint32_t *up, uint32_t n, uint32_t dst)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < n; i++)
        if (uplink_in_plane(r, dst, r->g->link_dst[up[i]]) != UINT32_MAX)
            r->cand[kept++] = up[i];
    return kept;
}

/* Where a detour from switch a into group grp lands: the far end of the
 * global link from a's group to grp (chosen by the balancing rule if
 * several), or any switch of grp when the groups are not adjacent. */
static uint32_t landing(topo_router *r, uint32_t a, uint32_t grp, uint64_t h, uint64_t key,
                        uint64_t qp, const double *load)
{
    uint32_t any = r->group_switch[r->group_offset[grp]];
    const uint32_t *gl;
    uint32_t ng = group_links(r, a, any, &gl);
    if (!ng)
        return r->group_switch[r->group_offset[grp] +
                               (uint32_t)(mix64(h) % (r->group_offset[grp + 1] -
                                                       r->group_offset[grp]))];
    uint32_t pick[64], np = ng < 64 ? ng : 64;
    for (uint32_t i = 0; i < np; i++)
        pick[i] = gl[i];
    return r->g->link_dst[choose(r, pick, np, key, qp, a ^ 0x40000000u, load)];
}

/* grp can carry a Valiant detour from group ga to gb: neither of them, and
 * on a degraded fabric (graph.h link_is_down) a global link left on both
 * legs; a healthy Dragonfly has one between every pair */
static int detour_group(const topo_router *r, uint32_t ga, uint32_t gb, uint32_t grp)
{
    if (grp == ga || grp == gb)
        return 0;
    if (!r->g->link_is_down)
        return 1;
    size_t n = r->n_groups;
    return r->pair_offset[ga * n + grp + 1] > r->pair_offset[ga * n + grp] &&
           r->pair_offset[grp * n + gb + 1] > r->pair_offset[grp * n + gb];
}

/* The Valiant detour of a connection from switch a (group ga) to switch b:
 * a random group other than ga and gb (with global links left on both legs,
 * when some are down), entered where the global link from ga lands, so the
 * detour adds no local hops before turning to b. */
static uint32_t valiant_switch(topo_router *r, uint32_t a, uint32_t b, uint64_t key, uint64_t qp,
                               const double *load)
{
    const topo_graph *g = r->g;
    uint32_t ga = g->node_group[a], gb = g->node_group[b];
    uint64_t h = hash4(r->cfg.seed ^ 0x5a17a5a17ULL, key, qp, 7);
    uint32_t others = 0;
    for (uint32_t grp = 0; grp < r->n_groups; grp++)
        others += (uint32_t)detour_group(r, ga, gb, grp);
    int filter = others > 0; /* none: any third group, and the walk refuses the pair */
    if (!filter)
        others = r->n_groups - 1 - (ga != gb);
    uint32_t k = (uint32_t)(h % others), grp = 0;
    for (;; grp++) { /* the k-th group that can carry the detour */
        if (filter ? !detour_group(r, ga, gb, grp) : grp == ga || grp == gb)
            continue;
        if (k-- == 0)
            break;
    }
    return landing(r, a, grp, h, key, qp, load);
}

/* Path cost for UGAL: hops x the highest pressure on the path. */
static double path_cost(const topo_graph *g, const uint32_t *path, int n, const double *load)
{
    double worst = 0;
    for (int i = 0; i < n; i++) {
        double p = link_pressure(g, load, path[i]);
        if (p > worst)
            worst = p;
    }
    return (n + 2) * worst;
}

/* One sub-flow (QP) of weight w from switch s to switch t by the path
 * class; mid is the Valiant detour switch or UINT32_MAX. */
static int route_switches(topo_router *r, uint32_t s, uint32_t t, uint32_t mid, uint64_t key,
                          uint64_t qp, double w, const double *load, topo_usage *out,
                          size_t *n_out)
{
    uint32_t path[2 * MAX_ROUTE_HOPS];
    if (r->cfg.balance == TOPO_BALANCE_SPRAY) {
        if (mid == UINT32_MAX)
            return walk_spray(r, s, t, w, out, n_out);
        /* per-packet Valiant: an even share through every third group */
        uint32_t gs = r->g->node_group[s], gt = r->g->node_group[t], others = 0;
        for (uint32_t grp = 0; grp < r->n_groups; grp++)
            others += (uint32_t)detour_group(r, gs, gt, grp);
        if (!others)
            return -1; /* no third group reachable both ways */
        double share = w / others;
        for (uint32_t grp = 0; grp < r->n_groups; grp++) {
            if (!detour_group(r, gs, gt, grp))
                continue;
            uint32_t m = landing(r, s, grp, key, key, qp, load);
            if (walk_spray(r, s, m, share, out, n_out) || walk_spray(r, m, t, share, out, n_out))
                return -1;
        }
        return 0;
    }
    int n = walk_single(r, s, mid == UINT32_MAX ? t : mid, key, qp, load, path);
    if (n < 0)
        return -1;
    if (mid != UINT32_MAX) {
        int m = walk_single(r, mid, t, key, qp, load, path + n);
        if (m < 0)
            return -1;
        n += m;
    }
    for (int i = 0; i < n; i++)
        add_usage(r, path[i], w, out, n_out);
    return 0;
}

/* The Valiant detour for this connection under the path class, or
 * UINT32_MAX for a minimal route (UGAL decides by cost). */
static uint32_t detour_by_class(topo_router *r, uint32_t s, uint32_t t, uint64_t key,
                                uint64_t qp, const double *load)
{
    const topo_graph *g = r->g;
    if (g->node_group[s] == g->node_group[t])
        return UINT32_MAX;
    uint32_t mid = valiant_switch(r, s, t, key, qp, load);
    if (r->cfg.path_class == TOPO_PATH_VALIANT)
        return mid;
    uint32_t pmin[2 * MAX_ROUTE_HOPS], pval[2 * MAX_ROUTE_HOPS];
    int nmin = walk_single(r, s, t, key, qp, load, pmin);
    int nv1 = walk_single(r, s, mid, key, qp, load, pval);
    int nv2 = nv1 < 0 ? -1 : walk_single(r, mid, t, key, qp, load, pval + nv1);
    if (nv2 < 0) /* no detour: minimal, or the walk refuses the pair */
        return UINT32_MAX;
    if (nmin < 0) /* the pair's global links are down: only the detour is left */
        return mid;
    return path_cost(g, pmin, nmin, load) <= path_cost(g, pval, nv1 + nv2, load) ? UINT32_MAX
                                                                                 : mid;
}

/* detour_by_class, the minimal class's answer inlined (no call per route) */
static inline uint32_t detour(topo_router *r, uint32_t s, uint32_t t, uint64_t key, uint64_t qp,
                              const double *load)
{
    if (r->cfg.path_class == TOPO_PATH_MINIMAL)
        return UINT32_MAX;
    return detour_by_class(r, s, t, key, qp, load);
}

/* Copy n candidates (at most cap) to out; returns n. */
static uint32_t give(const uint32_t *cand, uint32_t n, uint32_t *out, uint32_t cap)
{
    for (uint32_t i = 0; i < n && i < cap; i++)
        out[i] = cand[i];
    return n;
}

uint32_t topo_next_hops(topo_router *r, uint32_t at, uint32_t dst, uint32_t *out, uint32_t cap)
{
    const topo_graph *g = r->g;
    if (at >= g->n_nodes || dst >= g->n_nodes || g->node_kind[dst] != TOPO_HOST || at == dst)
        return 0;
    uint32_t du = r->ep[dst].scaleup, dn = r->ep[dst].nic;
    uint32_t to = dn == UINT32_MAX ? dst : g->link_dst[dn];
    enum topo_node_kind kind = (enum topo_node_kind)g->node_kind[at];
    if (kind == TOPO_SCALEUP) /* only a host of this domain routes through it */
        return du != UINT32_MAX && g->link_dst[du] == at ? give(&(uint32_t){du ^ 1u}, 1, out, cap)
                                                         : 0;
    if (kind == TOPO_HOST) {
        uint32_t su = r->ep[at].scaleup, sn = r->ep[at].nic;
        if (su != UINT32_MAX && du != UINT32_MAX && g->link_dst[su] == g->link_dst[du])
            return give(&su, 1, out, cap);
        if (sn != UINT32_MAX)
            return give(&sn, 1, out, cap);
    }
    if (kind == TOPO_HOST || kind == TOPO_NIC) {
        if (at == to) /* a shared NIC delivering to one of its GPUs */
            return give(&(uint32_t){dn ^ 1u}, 1, out, cap);
        uint32_t nu;
        const uint32_t *up = uplinks(r, at, &nu);
        return give(up, nu, out, cap);
    }
    if (kind != TOPO_SWITCH || r->sw_index[at] == UINT32_MAX)
        return 0;
    uint32_t dl = uplink_in_plane(r, to, at);
    if (dl == UINT32_MAX)
        return 0;
    uint32_t t = g->link_dst[dl];
    if (at == t) /* the last hop: into the host or its shared NIC */
        return give(&(uint32_t){dl ^ 1u}, 1, out, cap);
    if (r->pair_offset && g->node_group[at] != g->node_group[t])
        return 0; /* between groups a route picks its global link first (walk_single) */
    const hop_count *hops = table_to(r, t);
    if (!hops)
        return 0;
    return give(r->cand, next_links(r, at, hops, r->sw_index[t]), out, cap);
}

long topo_route(topo_router *r, uint32_t src, uint32_t dst, uint64_t key, const double *link_load,
                topo_usage *out, size_t cap)
{
    const topo_graph *g = r->g;
    if (src >= g->n_nodes || dst >= g->n_nodes || g->node_kind[src] != TOPO_HOST ||
        g->node_kind[dst] != TOPO_HOST || cap < g->n_links)
        return -1;
    if (src == dst)
        return 0;
    size_t n = 0;
    const struct endpoint *es = &r->ep[src], *ed = &r->ep[dst];
    uint32_t su = es->scaleup, du = ed->scaleup;
    if (su != UINT32_MAX && du != UINT32_MAX && g->link_dst[su] == g->link_dst[du]) {
        out[0] = (topo_usage){su, 1.0};
        out[1] = (topo_usage){du ^ 1u, 1.0}; /* the crossbar -> dst half of dst's cable */
        return 2;
    }
    /* a shared NIC (nic.h): the GPU's cable to it, then the NIC's uplinks */
    uint32_t sn = es->nic, dn = ed->nic;
    uint32_t from = sn == UINT32_MAX ? src : g->link_dst[sn];
    uint32_t to = dn == UINT32_MAX ? dst : g->link_dst[dn];
    if (sn != UINT32_MAX)
        add_usage(r, sn, 1.0, out, &n);
    unsigned qps = from == to ? 0 : r->cfg.balance == TOPO_BALANCE_ECMP ? r->cfg.qps : 1;
    long rc = 0;
    for (unsigned q = 0; q < qps && rc == 0; q++) {
        uint32_t nu;
        const uint32_t *up = uplinks(r, from, &nu);
        if (g->link_is_down) { /* planes where dst still has a port (graph.h) */
            nu = planes_to(r, up, nu, to);
            up = r->cand;
        }
        if (!nu) {
            rc = -1;
            break;
        }
        /* planes: spray splits over every uplink, the others pick one */
        uint32_t first = 0, count = nu;
        if (r->cfg.balance != TOPO_BALANCE_SPRAY) {
            uint32_t pick = choose(r, up, nu, key, q, src, link_load);
            for (first = 0; up[first] != pick; first++)
                ;
            count = 1;
        }
        uint32_t ups[16];
        if (count > 16) { /* more planes than any fabric built here */
            rc = -1;
            break;
        }
        for (uint32_t i = 0; i < count; i++)
            ups[i] = up[first + i];
        double w = qps == 1 && count == 1 ? 1.0 : 1.0 / qps / count; /* the same */
        for (uint32_t i = 0; i < count && rc == 0; i++) {
            uint32_t s = g->link_dst[ups[i]], dl = uplink_in_plane(r, to, s);
            if (dl == UINT32_MAX) {
                rc = -1;
                break;
            }
            uint32_t t = g->link_dst[dl];
            add_usage(r, ups[i], w, out, &n);
            uint32_t mid = detour(r, s, t, key, q, link_load);
            if (route_switches(r, s, t, mid, key, q, w, link_load, out, &n))
                rc = -1;
            else
                add_usage(r, dl ^ 1u, w, out, &n);
        }
    }
    if (dn != UINT32_MAX && rc == 0)
        add_usage(r, dn ^ 1u, 1.0, out, &n); /* the NIC -> dst half of dst's cable */
    for (size_t i = 0; i < n && n >= ROUTE_SHORT; i++) /* add_usage: kept from then on */
        r->link_slot[out[i].link] = UINT32_MAX;
    return rc ? (r->out_of_memory ? -2 : -1) : (long)n;
}
