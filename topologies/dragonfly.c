/* dragonfly.c - Dragonfly and Dragonfly+ builders (models and global-link
 * arrangements in dragonfly.h) and their registry kinds (topology.h). Both
 * check every number before adding a node, in the check functions the
 * kinds' closed-form counts share; the global links of both come from one
 * arrangement helper. */
#include "dragonfly.h"

#include <stdio.h>
#include <string.h>

#include "topology.h"

#define FAIL(...) return (why && why_size ? snprintf(why, why_size, __VA_ARGS__) : 0), -1

const topo_choice topo_dragonfly_arrangements[] = {
    [TOPO_DF_ABSOLUTE] = {"absolute", "port c of group i leads to group c, skipping i"},
    [TOPO_DF_RELATIVE] = {"relative", "port c of group i leads to group i + c + 1 mod g"},
    [TOPO_DF_CIRCULANT] = {"circulant", "ports 2m and 2m + 1 lead to offsets +(m + 1), -(m + 1)"},
    {NULL, NULL},
};

int topo_dragonfly_arrangement_parse(const char *name, enum topo_dragonfly_arrangement *out)
{
    int i = topo_choice_find(topo_dragonfly_arrangements, name);
    if (i < 0)
        return -1;
    *out = (enum topo_dragonfly_arrangement)i;
    return 0;
}

/* Group that port c of group i leads to, for c < g - 1 (dragonfly.h). */
static unsigned peer_group(enum topo_dragonfly_arrangement arr, unsigned g, unsigned i,
                           unsigned c)
{
    if (arr == TOPO_DF_ABSOLUTE)
        return c < i ? c : c + 1;
    if (arr == TOPO_DF_RELATIVE)
        return (i + c + 1) % g;
    unsigned m = c / 2 + 1; /* circulant: offsets +m, -m */
    return (i + (c % 2 ? g - m : m)) % g;
}

/* The port of group i that leads to group j != i: the inverse of peer_group. */
static unsigned port_towards(enum topo_dragonfly_arrangement arr, unsigned g, unsigned i,
                             unsigned j)
{
    if (arr == TOPO_DF_ABSOLUTE)
        return j < i ? j : j - 1;
    if (arr == TOPO_DF_RELATIVE)
        return (g + j - i - 1) % g;
    unsigned d = (g + j - i) % g, m = d <= g - d ? d : g - d;
    return 2 * (m - 1) + (d > g - d);
}

/* One global cable per pair of groups: group i's port c sits on router
 * first + i * stride + c / h; each pair is cabled once, from the lower group. */
static void global_cables(topo_graph *gr, enum topo_dragonfly_arrangement arr, unsigned g,
                          unsigned ports, uint32_t first, unsigned stride, unsigned h,
                          double bytes_per_s)
{
    for (unsigned i = 0; i < g; i++)
        for (unsigned c = 0; c + 1 < g && c < ports; c++) {
            unsigned j = peer_group(arr, g, i, c);
            if (j < i)
                continue; /* the pair was joined from group j's side */
            unsigned back = port_towards(arr, g, j, i);
            topo_graph_add_cable(gr, first + i * stride + c / h, first + j * stride + back / h,
                                 bytes_per_s);
        }
}

static int finish(topo_graph *gr, char *why, size_t why_size)
{
    if (topo_graph_finish(gr)) {
        topo_graph_fini(gr);
        FAIL("out of memory for the topology");
    }
    return 0;
}

/* nodes and cables within the graph's 32-bit ids (a cable is two directed
 * links); the cables counted are the most the arrangement can lay */
static int common_checks(enum topo_dragonfly_arrangement arr, double nodes, double cables,
                         char *why, size_t why_size)
{
    if (arr != TOPO_DF_ABSOLUTE && arr != TOPO_DF_RELATIVE && arr != TOPO_DF_CIRCULANT)
        FAIL("unknown global-link arrangement %d (absolute 0, relative 1, circulant 2)",
             (int)arr);
    if (nodes > 2147483647.0)
        FAIL("%.4g nodes: more than 2^31", nodes);
    if (cables > 1073741824.0)
        FAIL("%.4g cables: more than 2^30", cables);
    return 0;
}

static int bandwidth_check(double host, double local, double global, char *why,
                           size_t why_size)
{
    if (!(host > 0 && local > 0 && global > 0))
        FAIL("link bandwidths must be positive");
    return 0;
}

/* Every number of a Dragonfly but the bandwidths; *groups = g. */
static int dragonfly_check(const topo_dragonfly_config *c, unsigned *groups, char *why,
                           size_t why_size)
{
    if (!c->p || !c->a || !c->h)
        FAIL("a Dragonfly needs p (hosts per router), a (routers per group) and h (global "
             "links per router) of at least 1, got p %u, a %u, h %u", c->p, c->a, c->h);
    double max_groups = (double)c->a * c->h + 1;
    unsigned g = c->groups             ? c->groups
                 : max_groups < 4e9 ? (unsigned)max_groups
                                    : UINT32_MAX; /* refused below */
    if (g < 2 || g > max_groups)
        FAIL("groups must be between 2 and a x h + 1 = %u x %u + 1 = %.0f (one global link "
             "between every pair of groups), got %u", c->a, c->h, max_groups, g);
    *groups = g;
    double routers = (double)g * c->a;
    double cables = routers * c->p + routers * (c->a - 1) / 2 + routers * c->h / 2;
    return common_checks(c->arrangement, routers * (c->p + 1.0), cables, why, why_size);
}

int topo_dragonfly(const topo_dragonfly_config *c, topo_graph *out, char *why, size_t why_size)
{
    topo_graph_init(out);
    unsigned g;
    if (dragonfly_check(c, &g, why, why_size) ||
        bandwidth_check(c->host_bytes_per_s, c->local_bytes_per_s, c->global_bytes_per_s, why,
                        why_size))
        return -1;
    topo_graph *gr = out;
    unsigned routers = g * c->a, hosts = routers * c->p;
    topo_graph_add_nodes(gr, hosts, TOPO_HOST, 0);
    uint32_t router0 = topo_graph_add_nodes(gr, routers, TOPO_SWITCH, 1);
    for (unsigned r = 0; r < routers && !gr->failed; r++)
        gr->node_group[router0 + r] = r / c->a;
    for (unsigned i = 0; i < hosts; i++)
        topo_graph_add_cable(gr, i, router0 + i / c->p, c->host_bytes_per_s);
    for (unsigned grp = 0; grp < g; grp++)
        for (unsigned r = 0; r < c->a; r++)
            for (unsigned s = r + 1; s < c->a; s++)
                topo_graph_add_cable(gr, router0 + grp * c->a + r, router0 + grp * c->a + s,
                                     c->local_bytes_per_s);
    global_cables(gr, c->arrangement, g, c->a * c->h, router0, c->a, c->h,
                  c->global_bytes_per_s);
    return finish(gr, why, why_size);
}

/* Every number of a Dragonfly+ but the bandwidths; *groups = g. */
static int plus_check(const topo_dragonfly_plus_config *c, unsigned *groups, char *why,
                      size_t why_size)
{
    double most = (double)c->spines * c->h + 1;
    unsigned g = c->groups ? c->groups : most < 4e9 ? (unsigned)most : UINT32_MAX;
    if (!c->p || !c->leaves || !c->spines || !c->h)
        FAIL("a Dragonfly+ needs p (hosts per leaf), leaves, spines and h (global links per "
             "spine) of at least 1, got p %u, leaves %u, spines %u, h %u", c->p, c->leaves,
             c->spines, c->h);
    double max_groups = (double)c->spines * c->h + 1;
    if (g < 2 || g > max_groups)
        FAIL("groups must be between 2 and spines x h + 1 = %u x %u + 1 = %.0f (one global "
             "link between every pair of groups), got %u", c->spines, c->h, max_groups, g);
    if (c->radix && (double)c->p + c->spines > c->radix)
        FAIL("a leaf needs p + spines = %u + %u = %.0f ports, more than the radix %u", c->p,
             c->spines, (double)c->p + c->spines, c->radix);
    if (c->radix && (double)c->leaves + c->h > c->radix)
        FAIL("a spine needs leaves + h = %u + %u = %.0f ports, more than the radix %u",
             c->leaves, c->h, (double)c->leaves + c->h, c->radix);
    double nodes = (double)g * (c->leaves * ((double)c->p + 1) + c->spines);
    *groups = g;
    double cables = (double)g * ((double)c->leaves * c->p + (double)c->leaves * c->spines +
                                 (double)c->spines * c->h / 2);
    return common_checks(c->arrangement, nodes, cables, why, why_size);
}

int topo_dragonfly_plus(const topo_dragonfly_plus_config *c, topo_graph *out, char *why,
                        size_t why_size)
{
    topo_graph_init(out);
    unsigned g;
    if (plus_check(c, &g, why, why_size) ||
        bandwidth_check(c->host_bytes_per_s, c->local_bytes_per_s, c->global_bytes_per_s, why,
                        why_size))
        return -1;
    unsigned L = c->leaves, S = c->spines, hosts = g * L * c->p;
    topo_graph *gr = out;
    topo_graph_add_nodes(gr, hosts, TOPO_HOST, 0);
    uint32_t first = gr->n_nodes; /* group i: leaves first + i(L+S) .., then its spines */
    for (unsigned i = 0; i < g && !gr->failed; i++) {
        uint32_t leaf0 = topo_graph_add_nodes(gr, L, TOPO_SWITCH, 1);
        uint32_t spine0 = topo_graph_add_nodes(gr, S, TOPO_SWITCH, 2);
        for (unsigned v = 0; v < L + S && !gr->failed; v++)
            gr->node_group[leaf0 + v] = i;
        for (unsigned l = 0; l < L; l++)
            for (unsigned s = 0; s < S; s++)
                topo_graph_add_cable(gr, leaf0 + l, spine0 + s, c->local_bytes_per_s);
    }
    for (unsigned i = 0; i < hosts; i++) {
        unsigned leaf = i / c->p; /* global leaf number: group leaf / L, index leaf % L */
        topo_graph_add_cable(gr, i, first + (leaf / L) * (L + S) + leaf % L, c->host_bytes_per_s);
    }
    global_cables(gr, c->arrangement, g, S * c->h, first + L, L + S, c->h,
                  c->global_bytes_per_s);
    return finish(gr, why, why_size);
}

/* ---- the registry kinds dragonfly and dragonfly-plus (topology.h) ----
 * Parts: Dragonfly g a routers (tier 1), g a p hosts, g a(a-1)/2 local and
 * g(g-1)/2 global cables (every pair of groups once), all router to router;
 * Dragonfly+ g L leaves (tier 1), g S spines (tier 2), g L p hosts, g L S
 * leaf-spine cables and g(g-1)/2 global cables between spines. */

static topo_dragonfly_config dragonfly_of(const topo_shape *s, double bytes_per_s)
{
    topo_dragonfly_config d = {.p = s->p, .a = s->a, .h = s->h, .groups = s->groups,
                               .host_bytes_per_s = bytes_per_s, .local_bytes_per_s = bytes_per_s,
                               .global_bytes_per_s = bytes_per_s,
                               .arrangement = (enum topo_dragonfly_arrangement)s->arrangement};
    return d;
}

static topo_dragonfly_plus_config dragonfly_plus_of(const topo_shape *s, double bytes_per_s)
{
    topo_dragonfly_plus_config d = {
        .p = s->p, .leaves = s->leaves, .spines = s->spines, .h = s->h, .groups = s->groups,
        .radix = s->radix, .host_bytes_per_s = bytes_per_s, .local_bytes_per_s = bytes_per_s,
        .global_bytes_per_s = bytes_per_s,
        .arrangement = (enum topo_dragonfly_arrangement)s->arrangement};
    return d;
}

/* the GPUs must find a host port */
static int enough_ports(const char *kind, const char *per_group_attr, unsigned per_group,
                        unsigned p, unsigned g, unsigned hosts, char *why, size_t why_size)
{
    uint64_t have = (uint64_t)per_group * p * g;
    if (have < hosts)
        FAIL("the %s has %s x hosts-per-router x groups = %u x %u x %u = %u host ports, fewer "
             "than the %u GPUs", kind, per_group_attr, per_group, p, g, (unsigned)have, hosts);
    return 0;
}

static int dragonfly_count(const topo_shape *s, unsigned hosts, unsigned per_node,
                           topo_counts *out, char *why, size_t why_size)
{
    (void)per_node;
    topo_dragonfly_config d = dragonfly_of(s, 1);
    unsigned g;
    if (dragonfly_check(&d, &g, why, why_size) ||
        enough_ports("dragonfly", "routers-per-group", d.a, d.p, g, hosts, why, why_size))
        return -1;
    uint64_t routers = (uint64_t)g * d.a;
    memset(out, 0, sizeof *out);
    out->hosts = out->cables[0] = routers * d.p;
    out->switches[1] = routers;
    out->cables[1] = routers * (d.a - 1) / 2 + (uint64_t)g * (g - 1) / 2;
    out->groups = g;
    return 0;
}

static int dragonfly_build(const topo_shape *s, unsigned hosts, unsigned per_node,
                           double bytes_per_s, topo_graph *out, char *why, size_t why_size)
{
    topo_counts c;
    topo_graph_init(out);
    if (dragonfly_count(s, hosts, per_node, &c, why, why_size))
        return -1;
    topo_dragonfly_config d = dragonfly_of(s, bytes_per_s);
    return topo_dragonfly(&d, out, why, why_size);
}

static const char *const dragonfly_required[] = {"hosts-per-router", "routers-per-group",
                                                 "global-links", NULL};
const topo_kind topo_kind_dragonfly = {
    "dragonfly", "Dragonfly of Kim et al.: all-to-all router groups, one global link per pair",
    dragonfly_required, NULL, dragonfly_count, dragonfly_build};

static int dragonfly_plus_count(const topo_shape *s, unsigned hosts, unsigned per_node,
                                topo_counts *out, char *why, size_t why_size)
{
    (void)per_node;
    topo_dragonfly_plus_config d = dragonfly_plus_of(s, 1);
    unsigned g;
    if (plus_check(&d, &g, why, why_size) ||
        enough_ports("dragonfly-plus", "leaves-per-group", d.leaves, d.p, g, hosts, why,
                     why_size))
        return -1;
    uint64_t leaves = (uint64_t)g * d.leaves;
    memset(out, 0, sizeof *out);
    out->hosts = out->cables[0] = leaves * d.p;
    out->switches[1] = leaves;
    out->switches[2] = (uint64_t)g * d.spines;
    out->cables[1] = leaves * d.spines;
    out->cables[2] = (uint64_t)g * (g - 1) / 2;
    out->groups = g;
    return 0;
}

static int dragonfly_plus_build(const topo_shape *s, unsigned hosts, unsigned per_node,
                                double bytes_per_s, topo_graph *out, char *why, size_t why_size)
{
    topo_counts c;
    topo_graph_init(out);
    if (dragonfly_plus_count(s, hosts, per_node, &c, why, why_size))
        return -1;
    topo_dragonfly_plus_config d = dragonfly_plus_of(s, bytes_per_s);
    return topo_dragonfly_plus(&d, out, why, why_size);
}

static const char *const dragonfly_plus_required[] = {"hosts-per-router", "leaves-per-group",
                                                      "spines-per-group", "global-links", NULL};
const topo_kind topo_kind_dragonfly_plus = {
    "dragonfly-plus", "Dragonfly+ of Shpiner et al.: leaf-spine groups, global links on spines",
    dragonfly_plus_required, NULL, dragonfly_plus_count, dragonfly_plus_build};
