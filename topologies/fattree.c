/* fattree.c - folded-Clos builders: k-ary fat-tree, 2- and 3-tier
 * leaf-spine, rail-optimised fat-tree, multi-plane copies (see fattree.h),
 * and the registry kinds fat-tree, leaf-spine and rail-optimized
 * (topology.h). Every builder validates all its numbers before adding a node
 * (in a *_check function the kinds' closed-form counts share), so the only
 * failure after that is running out of memory. */
#include "fattree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology.h"

#define FAIL(...) return (why && why_size ? snprintf(why, why_size, __VA_ARGS__) : 0), -1

/* Node and link ids are uint32_t; keep both well inside (like dragonfly.c). */
#define MAX_IDS 2147483647.0

static int finish(topo_graph *g, char *why, size_t why_size)
{
    g->updown = 1; /* every builder here makes a folded Clos */
    if (topo_graph_finish(g)) {
        topo_graph_fini(g);
        FAIL("out of memory for the topology");
    }
    return 0;
}

/* node_group[first + i] = i / per_group for `count` nodes (pod, SU or spine
 * group numbering); per_group 0 leaves them TOPO_NO_GROUP. */
static void number_groups(topo_graph *g, uint32_t first, uint32_t count, uint32_t per_group)
{
    if (g->failed || !per_group)
        return;
    for (uint32_t i = 0; i < count; i++)
        g->node_group[first + i] = i / per_group;
}

static int kary_check(unsigned k, char *why, size_t why_size)
{
    if (k < 2 || k % 2)
        FAIL("a k-ary fat-tree needs an even k of at least 2 (k/2 ports down, k/2 up), got %u", k);
    if (k > 256)
        FAIL("k = %u: at most 256 (%.4g hosts)", k, (double)k * k * k / 4);
    return 0;
}

int topo_fattree_kary(unsigned k, double bytes_per_s, topo_graph *out, char *why,
                      size_t why_size)
{
    topo_graph_init(out);
    if (kary_check(k, why, why_size))
        return -1;
    if (!(bytes_per_s > 0))
        FAIL("link bandwidth must be positive");
    /* the k-ary tree is the full-size non-blocking 3-tier leaf-spine, with
     * the same id order (fattree.h) */
    return topo_leafspine3(k, k, k / 2, k / 2, bytes_per_s, out, why, why_size);
}

static int leafspine2_check(unsigned radix, unsigned leaves, unsigned down, char *why,
                            size_t why_size)
{
    if (radix < 2 || radix > 4096)
        FAIL("switch radix must be between 2 and 4096, got %u", radix);
    if (down < 1 || down >= radix)
        FAIL("a leaf of radix %u needs at least one host port and one up port, got %u host "
             "ports", radix, down);
    if (leaves < 1 || leaves > radix)
        FAIL("a leaf-spine of radix %u has at most %u leaves (one port on every spine each), "
             "got %u", radix, radix, leaves);
    return 0;
}

/* a 2-tier leaf-spine whose leaves have `spines` up ports (down + spines <= radix) */
static int leafspine2_build(unsigned radix, unsigned leaves, unsigned down, unsigned spines,
                            double bytes_per_s, topo_graph *out, char *why, size_t why_size)
{
    topo_graph_init(out);
    if (leafspine2_check(radix, leaves, down, why, why_size))
        return -1;
    if (!(bytes_per_s > 0))
        FAIL("link bandwidth must be positive");
    topo_graph *g = out;
    topo_graph_add_nodes(g, leaves * down, TOPO_HOST, 0);
    uint32_t leaf0 = topo_graph_add_nodes(g, leaves, TOPO_SWITCH, 1);
    uint32_t spine0 = topo_graph_add_nodes(g, spines, TOPO_SWITCH, 2);
    number_groups(g, leaf0, leaves + spines, leaves + spines); /* all in pod 0 */
    for (unsigned h = 0; h < leaves * down; h++)
        topo_graph_add_cable(g, h, leaf0 + h / down, bytes_per_s);
    for (unsigned l = 0; l < leaves; l++)
        for (unsigned s = 0; s < spines; s++)
            topo_graph_add_cable(g, leaf0 + l, spine0 + s, bytes_per_s);
    return finish(g, why, why_size);
}

int topo_leafspine(unsigned radix, unsigned leaves, unsigned down, double bytes_per_s,
                   topo_graph *out, char *why, size_t why_size)
{
    unsigned spines = down < radix ? radix - down : 0;
    return leafspine2_build(radix, leaves, down, spines, bytes_per_s, out, why, why_size);
}

/* c with its zeros resolved: leaf_up = radix - down, spine_up = radix - L */
static topo_clos3 clos3_resolved(const topo_clos3 *c)
{
    topo_clos3 r = *c;
    if (!r.leaf_up && r.down < r.radix)
        r.leaf_up = r.radix - r.down;
    if (!r.spine_up && r.leaves_per_pod < r.radix)
        r.spine_up = r.radix - r.leaves_per_pod;
    return r;
}

/* the smallest divisor m of the spine's U up cables that spreads the pods'
 * U cables of core set j over m cores of at most radix ports each */
static unsigned clos3_cores_per_set(unsigned radix, unsigned pods, unsigned spine_up)
{
    for (unsigned m = 1; m < spine_up; m++)
        if (spine_up % m == 0 && (unsigned long long)pods * (spine_up / m) <= radix)
            return m;
    return spine_up;
}

int topo_clos3_check(const topo_clos3 *in, unsigned *cores_per_set, char *why, size_t why_size)
{
    topo_clos3 c = clos3_resolved(in);
    unsigned R = c.radix, L = c.leaves_per_pod;
    if (R < 2 || R > 4096)
        FAIL("switch radix must be between 2 and 4096, got %u", R);
    if (c.down < 1 || c.down >= R)
        FAIL("a leaf of radix %u needs at least one host port and one up port, got %u host "
             "ports", R, c.down);
    if ((unsigned long long)c.down + c.leaf_up > R)
        FAIL("a leaf of radix %u cannot take %u host ports and %u up ports", R, c.down,
             c.leaf_up);
    if (L < 1 || L >= R)
        FAIL("a spine of radix %u needs a port per leaf of its pod and one up port: 1 to %u "
             "leaves per pod, got %u", R, R - 1, L);
    if ((unsigned long long)L + c.spine_up > R)
        FAIL("a spine of radix %u cannot take %u leaves of its pod and %u up ports", R, L,
             c.spine_up);
    if (c.pods < 1 || c.pods > R)
        FAIL("a core switch of radix %u has one port per pod: 1 to %u pods, got %u", R, R,
             c.pods);
    unsigned m = clos3_cores_per_set(R, c.pods, c.spine_up);
    double up = c.leaf_up, hosts = (double)c.pods * L * c.down;
    double spines = c.pods * up, cores = up * m;
    double cables = hosts + (double)c.pods * L * up + spines * c.spine_up;
    if (hosts + (double)c.pods * L + spines + cores > MAX_IDS || 2 * cables > MAX_IDS)
        FAIL("%u pods x %u leaves x %u hosts = %.4g hosts, %.4g cables: more than 2^31 ids",
             c.pods, L, c.down, hosts, cables);
    if (cores_per_set)
        *cores_per_set = m;
    return 0;
}

int topo_clos3_build(const topo_clos3 *in, double bytes_per_s, topo_graph *out, char *why,
                     size_t why_size)
{
    topo_graph_init(out);
    unsigned m;
    if (topo_clos3_check(in, &m, why, why_size))
        return -1;
    if (!(bytes_per_s > 0))
        FAIL("link bandwidth must be positive");
    topo_clos3 c = clos3_resolved(in);
    unsigned L = c.leaves_per_pod, up = c.leaf_up, pods = c.pods, down = c.down;
    unsigned hosts = pods * L * down, per_core = c.spine_up / m;
    topo_graph *g = out;
    topo_graph_add_nodes(g, hosts, TOPO_HOST, 0);
    uint32_t leaf0 = topo_graph_add_nodes(g, pods * L, TOPO_SWITCH, 1);
    uint32_t spine0 = topo_graph_add_nodes(g, pods * up, TOPO_SWITCH, 2);
    uint32_t core0 = topo_graph_add_nodes(g, up * m, TOPO_SWITCH, 3);
    number_groups(g, leaf0, pods * L, L);
    number_groups(g, spine0, pods * up, up);
    for (unsigned h = 0; h < hosts; h++)
        topo_graph_add_cable(g, h, leaf0 + h / down, bytes_per_s);
    for (unsigned l = 0; l < pods * L; l++) /* leaf l of pod l / L: every spine of that pod */
        for (unsigned s = 0; s < up; s++)
            topo_graph_add_cable(g, leaf0 + l, spine0 + (l / L) * up + s, bytes_per_s);
    for (unsigned s = 0; s < pods * up; s++) /* spine j = s % up: core set j */
        for (unsigned k = 0; k < m; k++)
            for (unsigned p = 0; p < per_core; p++)
                topo_graph_add_cable(g, spine0 + s, core0 + (s % up) * m + k, bytes_per_s);
    return finish(g, why, why_size);
}

int topo_leafspine3(unsigned radix, unsigned pods, unsigned leaves_per_pod, unsigned down,
                    double bytes_per_s, topo_graph *out, char *why, size_t why_size)
{
    topo_clos3 c = {radix, pods, leaves_per_pod, down, 0, 0};
    return topo_clos3_build(&c, bytes_per_s, out, why, why_size);
}

/* The shape of a rail-optimised fabric, worked out before anything is built. */
typedef struct railopt_shape {
    unsigned leaves, up;     /* leaves; up ports per leaf */
    unsigned spines, cores;  /* cores 0: two tiers */
    unsigned group_spines;   /* S_g: spines per group (3 tiers) or all spines */
    unsigned block;          /* b: SUs per spine group (3 tiers) */
    unsigned groups;         /* G: spine groups (3 tiers), 1 for two tiers */
    unsigned spine_up;       /* R/2 up ports per spine (3 tiers) */
} railopt_shape;

/* Third tier: the largest block b of SUs (dividing sus) whose spine group
 * S_g = b u / (R/2) is whole, divides u, and whose G = rails sus / b groups
 * spread evenly over the cores (G/2 cores per set, R/G cables each). */
static int railopt_three_tiers(unsigned sus, unsigned rails, unsigned radix, railopt_shape *s,
                               char *why, size_t why_size)
{
    unsigned half = radix / 2, u = s->up;
    if (radix % 2)
        FAIL("%u leaves need a third tier, whose spines split their ports half down, half up: "
             "the radix %u must be even", s->leaves, radix);
    unsigned most = sus < half ? sus : half; /* S_g <= u needs b <= R/2 */
    double fewest = (double)rails * ((sus + most - 1) / most);
    if (fewest > radix)
        FAIL("%u SUs x %u rails: at least %u rails x %u blocks of up to %u SUs = %.0f spine "
             "groups, more than a core switch's %u ports: a fourth tier would be needed "
             "(not built)", sus, rails, rails, (sus + most - 1) / most, most, fewest, radix);
    for (unsigned b = most; b >= 1; b--) {
        unsigned long long ports = (unsigned long long)b * u;
        if (sus % b || ports % half)
            continue;
        unsigned sg = (unsigned)(ports / half);
        unsigned long long groups = (unsigned long long)rails * (sus / b);
        if (!sg || u % sg || groups > radix || (groups * half) % radix ||
            half % (groups * half / radix))
            continue;
        s->block = b, s->group_spines = sg, s->groups = (unsigned)groups, s->spine_up = half;
        s->spines = s->groups * sg;
        s->cores = s->spines / 2;
        return 0;
    }
    FAIL("%u SUs x %u rails = %u leaves need a third tier, but no block of b SUs (b dividing "
         "%u) gives S_g = b x %u up ports / %u whole spines dividing %u, with %u x %u / b spine "
         "groups spread evenly over cores of radix %u", sus, rails, s->leaves, sus, u, half, u,
         rails, sus, radix);
}

static int railopt_shape_of(unsigned sus, unsigned nodes_per_su, unsigned rails,
                            unsigned radix, railopt_shape *s, char *why, size_t why_size)
{
    s->leaves = sus * rails, s->up = radix - nodes_per_su;
    s->cores = 0, s->block = sus, s->groups = 1, s->spine_up = 0;
    if (s->leaves > radix) /* one spine layer reaches at most radix leaves */
        return railopt_three_tiers(sus, rails, radix, s, why, why_size);
    unsigned long long up_ports = (unsigned long long)s->leaves * s->up;
    if (up_ports % radix)
        FAIL("leaves x up ports = %u x %u = %llu is not a multiple of the radix %u: the spines "
             "would not be full", s->leaves, s->up, up_ports, radix);
    s->spines = s->group_spines = (unsigned)(up_ports / radix);
    if (s->up % s->spines)
        FAIL("a leaf's %u up ports do not spread evenly over %u spines", s->up, s->spines);
    return 0;
}

/* Spine group of leaf l (SU l / rails, rail l % rails): with three tiers
 * the group of its rail in its block of SUs; with two, the one group. */
static unsigned railopt_group_of(const railopt_shape *s, unsigned rails, unsigned leaf)
{
    if (!s->cores)
        return 0;
    return (leaf / rails) / s->block * rails + leaf % rails;
}

static void railopt_cables(topo_graph *g, const railopt_shape *s, unsigned rails,
                           uint32_t leaf0, uint32_t spine0, uint32_t core0, double bps)
{
    unsigned sg = s->group_spines, per_spine = s->up / sg;
    for (unsigned l = 0; l < s->leaves; l++) {
        uint32_t first = spine0 + railopt_group_of(s, rails, l) * sg;
        for (unsigned j = 0; j < sg; j++)
            for (unsigned c = 0; c < per_spine; c++)
                topo_graph_add_cable(g, leaf0 + l, first + j, bps);
    }
    if (!s->cores)
        return;
    /* spine j of every group: R/G cables (= spine_up / per_set) to each of
     * the G/2 cores of set j */
    unsigned per_set = s->cores / sg, per_core = s->spine_up / per_set;
    for (unsigned sp = 0; sp < s->spines; sp++)
        for (unsigned c = 0; c < per_set; c++)
            for (unsigned k = 0; k < per_core; k++)
                topo_graph_add_cable(g, spine0 + sp, core0 + (sp % sg) * per_set + c, bps);
}

static int railopt_check(unsigned sus, unsigned nodes_per_su, unsigned rails, unsigned radix,
                         railopt_shape *s, char *why, size_t why_size)
{
    if (!sus || !nodes_per_su || !rails)
        FAIL("a rail-optimised fabric needs at least one SU, node and rail");
    if (radix < 2 || radix > 4096)
        FAIL("switch radix must be between 2 and 4096, got %u", radix);
    if (nodes_per_su >= radix)
        FAIL("a leaf of radix %u cannot take %u nodes and keep an up port", radix, nodes_per_su);
    if ((double)sus * nodes_per_su * rails * 4 > MAX_IDS)
        FAIL("%u SUs x %u nodes x %u rails: more than 2^29 GPUs", sus, nodes_per_su, rails);
    return railopt_shape_of(sus, nodes_per_su, rails, radix, s, why, why_size);
}

int topo_railopt(unsigned sus, unsigned nodes_per_su, unsigned rails, unsigned radix,
                 double bytes_per_s, topo_graph *out, char *why, size_t why_size)
{
    topo_graph_init(out);
    railopt_shape s;
    if (railopt_check(sus, nodes_per_su, rails, radix, &s, why, why_size))
        return -1;
    if (!(bytes_per_s > 0))
        FAIL("link bandwidth must be positive");
    topo_graph *g = out;
    unsigned hosts = sus * nodes_per_su * rails;
    topo_graph_add_nodes(g, hosts, TOPO_HOST, 0);
    uint32_t leaf0 = topo_graph_add_nodes(g, s.leaves, TOPO_SWITCH, 1);
    uint32_t spine0 = topo_graph_add_nodes(g, s.spines, TOPO_SWITCH, 2);
    uint32_t core0 = topo_graph_add_nodes(g, s.cores, TOPO_SWITCH, 3);
    number_groups(g, leaf0, s.leaves, rails);
    if (s.cores)
        number_groups(g, spine0, s.spines, s.group_spines);
    for (unsigned h = 0; h < hosts; h++) {
        unsigned rail = h % rails, su = h / (rails * nodes_per_su);
        topo_graph_add_cable(g, h, leaf0 + su * rails + rail, bytes_per_s);
    }
    railopt_cables(g, &s, rails, leaf0, spine0, core0, bytes_per_s);
    return finish(g, why, why_size);
}

int topo_multiplane_check_size(unsigned planes, double hosts, double switches, double links,
                               char *why, size_t why_size)
{
    if (planes < 1 || planes > 256)
        FAIL("planes must be between 1 and 256 (node_plane is 8 bits), got %u", planes);
    if (hosts + planes * switches > MAX_IDS || planes * links > MAX_IDS)
        FAIL("%u planes x %.0f switches, %.0f links: more than 2^31 ids", planes, switches, links);
    return 0;
}

static int multiplane_check(const topo_graph *p, unsigned planes, char *why, size_t why_size)
{
    if (topo_multiplane_check_size(planes, p->n_hosts, p->n_switches, p->n_links, why, why_size))
        return -1;
    if (p->n_scaleup)
        FAIL("the plane has %u scale-up crossbars: copy the fabric first, then add scale-up "
             "domains", p->n_scaleup);
    for (uint32_t v = 0; v < p->n_nodes; v++) {
        if ((p->node_kind[v] == TOPO_HOST) != (v < p->n_hosts))
            FAIL("node %u: the plane's hosts must come first (ids 0 .. %u)", v, p->n_hosts - 1);
        if (p->node_plane[v])
            FAIL("node %u is already in plane %u: the plane must be a single plane", v,
                 p->node_plane[v]);
    }
    return 0;
}

/* id of plane node v in copy `plane` (hosts are shared) */
static uint32_t plane_id(const topo_graph *p, unsigned plane, uint32_t v)
{
    return v < p->n_hosts ? v : v + plane * p->n_switches;
}

int topo_multiplane(const topo_graph *plane, unsigned planes, topo_graph *out, char *why,
                    size_t why_size)
{
    topo_graph_init(out);
    if (multiplane_check(plane, planes, why, why_size))
        return -1;
    topo_graph *g = out;
    topo_graph_add_nodes(g, plane->n_hosts, TOPO_HOST, 0);
    for (unsigned p = 0; p < planes; p++)
        for (uint32_t v = plane->n_hosts; v < plane->n_nodes; v++) {
            uint32_t id = topo_graph_add_node(g, TOPO_SWITCH, plane->node_tier[v]);
            if (id == UINT32_MAX)
                break;
            g->node_plane[id] = (uint8_t)p;
            g->node_group[id] = plane->node_group[v];
        }
    /* cable by cable (links 2c, 2c+1), so l ^ 1 stays the reverse */
    for (unsigned p = 0; p < planes; p++)
        for (uint32_t l = 0; l + 1 < plane->n_links; l += 2) {
            uint32_t a = plane_id(plane, p, plane->link_src[l]);
            uint32_t b = plane_id(plane, p, plane->link_dst[l]);
            topo_graph_add_cable(g, a, b, plane->link_bytes_per_s[l]);
            if (!g->failed) /* keep the reverse rate even if it differs */
                g->link_bytes_per_s[g->n_links - 1] = plane->link_bytes_per_s[l + 1];
        }
    int updown = plane->updown;
    if (finish(g, why, why_size))
        return -1;
    g->updown = updown;
    return 0;
}

/* ---- the registry's folded-Clos kinds (topology.h): <fabric> numbers to the
 * builders above, their checks and their closed-form counts ---- */

static void clos_counts(topo_counts *c, uint64_t hosts, uint64_t leaves, uint64_t spines,
                        uint64_t cores, uint64_t leaf_up, uint64_t spine_up, uint32_t groups)
{
    c->hosts = hosts;
    c->switches[1] = leaves, c->switches[2] = spines, c->switches[3] = cores;
    c->cables[0] = hosts, c->cables[1] = leaf_up, c->cables[2] = spine_up;
    c->groups = groups;
    c->updown = 1;
}

/* topo_clos3_build's parts (c resolved, m cores per set) */
static void clos3_counts(const topo_clos3 *c, unsigned m, topo_counts *out)
{
    uint64_t up = c->leaf_up, leaves = (uint64_t)c->pods * c->leaves_per_pod;
    clos_counts(out, leaves * c->down, leaves, c->pods * up, up * m, leaves * up,
                c->pods * up * c->spine_up, c->pods);
}

static int fat_tree_count(const topo_shape *s, unsigned hosts, unsigned per_node,
                          topo_counts *out, char *why, size_t why_size)
{
    (void)per_node;
    unsigned k = s->k;
    if (kary_check(k, why, why_size))
        return -1;
    double ports = (double)k * k * k / 4;
    if (ports < hosts)
        FAIL("a k = %u fat-tree has k^3/4 = %.0f host ports, fewer than the %u GPUs", k, ports,
             hosts);
    topo_clos3 c = {k, k, k / 2, k / 2, k / 2, k / 2}; /* the same tree (topo_fattree_kary) */
    clos3_counts(&c, clos3_cores_per_set(k, k, k / 2), out);
    return 0;
}

static int fat_tree_build(const topo_shape *s, unsigned hosts, unsigned per_node,
                          double bytes_per_s, topo_graph *out, char *why, size_t why_size)
{
    topo_counts c;
    topo_graph_init(out);
    if (fat_tree_count(s, hosts, per_node, &c, why, why_size))
        return -1;
    return topo_fattree_kary(s->k, bytes_per_s, out, why, why_size);
}

static const char *const fat_tree_required[] = {"k", NULL};
const topo_kind topo_kind_fat_tree = {
    "fat-tree", "k-ary fat-tree of Al-Fares et al.: k^3/4 hosts, 5k^2/4 switches of radix k",
    fat_tree_required, NULL, fat_tree_count, fat_tree_build};

/* A leaf-spine from radix and oversubscription (docs/fabric.md): down =
 * hosts-per-leaf, or radix d / (d + u) at leaf ratio d:u (whole); leaf up
 * ports ceil(down u / d) with hosts-per-leaf, else radix - down; leaves =
 * ceil(hosts / down). 2 tiers while leaves fit one pod (leaves-per-pod, else
 * radix) unless tiers="3"; else pods of L = leaves-per-pod, or floor(radix
 * d2 / (d2 + u2)) at spine ratio d2:u2, leaves with ceil(L u2 / d2), or
 * radix - L, spine up ports. */
typedef struct leafspine_plan {
    unsigned radix, down, up, leaves; /* up: a leaf's up ports (= spines per pod) */
    topo_clos3 c;                     /* c.pods 0: two tiers */
    unsigned cores_per_set;
} leafspine_plan;

static unsigned ceil_ratio(unsigned n, unsigned num, unsigned den)
{
    return (unsigned)(((unsigned long long)n * num + den - 1) / den);
}

/* a leaf's host and up ports */
static int leaf_ports(const topo_shape *s, unsigned *down, unsigned *up, char *why,
                      size_t why_size)
{
    unsigned R = s->radix, d = s->over_down ? s->over_down : 1, u = s->over_up ? s->over_up : 1;
    if (R < 2)
        FAIL("a leaf-spine needs radix >= 2, got %u", R);
    if (s->hosts_per_leaf) {
        *down = s->hosts_per_leaf, *up = ceil_ratio(*down, u, d);
        if ((unsigned long long)*down + *up > R)
            FAIL("hosts-per-leaf %u at oversubscription %u:%u needs %u + ceil(%u x %u / %u) = "
                 "%u leaf ports, more than the radix %u", *down, d, u, *down, *down, u, d,
                 *down + *up, R);
        return 0;
    }
    if ((unsigned long long)R * d % (d + u))
        FAIL("oversubscription %u:%u splits radix %u into %u x %u / %u host ports: not whole",
             d, u, R, R, d, d + u);
    *down = (unsigned)((unsigned long long)R * d / (d + u)), *up = R - *down;
    if (!*down || *down >= R)
        FAIL("oversubscription %u:%u leaves a radix-%u leaf with %u host and %u up ports", d, u,
             R, *down, R - *down);
    return 0;
}

static int leafspine_plan_of(const topo_shape *s, unsigned hosts, unsigned per_node,
                             leafspine_plan *p, char *why, size_t why_size)
{
    unsigned R = s->radix, down, up;
    if (leaf_ports(s, &down, &up, why, why_size))
        return -1;
    unsigned leaves = (unsigned)(((unsigned long long)hosts + down - 1) / down);
    if (per_node > 1 && down % per_node)
        FAIL("a leaf's %u host ports are not a whole number of %u-GPU nodes", down, per_node);
    memset(p, 0, sizeof *p);
    p->radix = R, p->down = down, p->up = up, p->leaves = leaves;
    unsigned one_pod = s->leaves_per_pod ? s->leaves_per_pod : R;
    if (s->tiers == 2 || (s->tiers != 3 && leaves <= one_pod)) {
        if (s->tiers == 2 && leaves > R)
            FAIL("%u GPUs need %u leaves of %u host ports, more than the %u a 2-tier leaf-spine "
                 "of radix %u reaches: use tiers=\"3\"", hosts, leaves, down, R, R);
        return leafspine2_check(R, leaves, down, why, why_size);
    }
    unsigned d2 = s->spine_over_down ? s->spine_over_down : 1;
    unsigned u2 = s->spine_over_up ? s->spine_over_up : 1;
    unsigned L = s->leaves_per_pod, U = 0; /* U 0: radix - L */
    if (!L)
        L = (unsigned)((unsigned long long)R * d2 / (d2 + u2));
    else
        U = ceil_ratio(L, u2, d2);
    if (!L)
        FAIL("spine oversubscription %u:%u leaves a radix-%u spine with %u leaf ports", d2, u2,
             R, L);
    topo_clos3 c = {R, (leaves + L - 1) / L, L, down, up, U};
    p->c = c;
    return topo_clos3_check(&p->c, &p->cores_per_set, why, why_size);
}

static int leaf_spine_count(const topo_shape *s, unsigned hosts, unsigned per_node,
                            topo_counts *out, char *why, size_t why_size)
{
    leafspine_plan p;
    if (leafspine_plan_of(s, hosts, per_node, &p, why, why_size))
        return -1;
    if (p.c.pods) {
        topo_clos3 r = clos3_resolved(&p.c);
        clos3_counts(&r, p.cores_per_set, out);
    } else { /* all in pod 0 */
        clos_counts(out, (uint64_t)p.leaves * p.down, p.leaves, p.up, 0,
                    (uint64_t)p.leaves * p.up, 0, 1);
    }
    return 0;
}

static int leaf_spine_build(const topo_shape *s, unsigned hosts, unsigned per_node,
                            double bytes_per_s, topo_graph *out, char *why, size_t why_size)
{
    leafspine_plan p;
    topo_graph_init(out);
    if (leafspine_plan_of(s, hosts, per_node, &p, why, why_size))
        return -1;
    if (!p.c.pods)
        return leafspine2_build(p.radix, p.leaves, p.down, p.up, bytes_per_s, out, why,
                                why_size);
    return topo_clos3_build(&p.c, bytes_per_s, out, why, why_size);
}

static const char *const leaf_spine_required[] = {"radix", NULL};
const topo_kind topo_kind_leaf_spine = {
    "leaf-spine", "2- or 3-tier leaf-spine of one switch radix, optionally oversubscribed",
    leaf_spine_required, NULL, leaf_spine_count, leaf_spine_build};

/* k SUs and every larger count fail in railopt_check: a radix or SU size no
 * count cures, over its 2^29-GPU cap, a third tier with an odd radix, or a
 * fourth tier (railopt_three_tiers: rails x ceil(k / min(k, R/2)) spine
 * groups over the R core ports, which only grows with k). railopt_sus stops
 * its search there: trying every count up to 4 x SUs took minutes for 2^28
 * GPUs in 1-node SUs when each try built the graph (found while fuzzing the
 * loader: tests/fuzz/regressions/fuzz_scenario/hang-railopt-search-2p28-gpus.xml). */
static int railopt_past_reach(unsigned k, unsigned per_su, unsigned rails, unsigned radix)
{
    if (radix < 2 || radix > 4096 || per_su >= radix) /* no count of SUs helps */
        return 1;
    if ((double)k * per_su * rails * 4 > 2147483647.0)
        return 1;
    if ((double)k * rails <= radix)
        return 0; /* two tiers */
    if (radix % 2)
        return 1; /* a third tier needs an even radix */
    unsigned most = k < radix / 2 ? k : radix / 2;
    return (double)rails * ((k + most - 1) / most) > radix;
}

/* Whole SUs (rails = GPUs per node, nodes_per_su nodes each), rounded up to
 * the first count railopt_check accepts (its spine and core arithmetic needs
 * e.g. 4 or 8 SUs, not 3 or 6); the ports beyond the GPUs stay idle. */
static int railopt_sus(const topo_shape *s, unsigned hosts, unsigned per_node, unsigned *sus_out,
                       railopt_shape *shape, char *why, size_t why_size)
{
    unsigned rails = per_node > 1 ? per_node : 1, per_su = s->nodes_per_su;
    if (hosts % rails)
        FAIL("%u GPUs are not a whole number of %u-GPU nodes", hosts, rails);
    unsigned nodes = hosts / rails;
    if (!per_su)
        FAIL("nodes-per-su must be at least 1");
    unsigned sus = (nodes + per_su - 1) / per_su;
    char first[512] = "";
    for (unsigned k = sus; k <= 4 * sus + 4; k++) {
        char w[512];
        if (!railopt_check(k, per_su, rails, s->radix, shape, w, sizeof w)) {
            *sus_out = k;
            return 0;
        }
        if (!first[0])
            snprintf(first, sizeof first, "%s", w);
        if (railopt_past_reach(k, per_su, rails, s->radix))
            break;
    }
    FAIL("%s (and no larger count of up to 4 x %u + 4 SUs could be cabled either)", first, sus);
}

static int rail_optimized_count(const topo_shape *s, unsigned hosts, unsigned per_node,
                                topo_counts *out, char *why, size_t why_size)
{
    unsigned sus, rails = per_node > 1 ? per_node : 1;
    railopt_shape r;
    if (railopt_sus(s, hosts, per_node, &sus, &r, why, why_size))
        return -1;
    /* node_group: the SU of a leaf, the spine group of a 3-tier spine */
    uint32_t groups = r.cores && r.groups > sus ? r.groups : sus;
    clos_counts(out, (uint64_t)sus * s->nodes_per_su * rails, r.leaves, r.spines, r.cores,
                (uint64_t)r.leaves * r.up, r.cores ? (uint64_t)r.spines * r.spine_up : 0,
                groups);
    return 0;
}

static int rail_optimized_build(const topo_shape *s, unsigned hosts, unsigned per_node,
                                double bytes_per_s, topo_graph *out, char *why, size_t why_size)
{
    unsigned sus;
    railopt_shape r;
    topo_graph_init(out);
    if (railopt_sus(s, hosts, per_node, &sus, &r, why, why_size))
        return -1;
    return topo_railopt(sus, s->nodes_per_su, per_node > 1 ? per_node : 1, s->radix, bytes_per_s,
                        out, why, why_size);
}

static const char *const rail_optimized_required[] = {"radix", NULL};
const topo_kind topo_kind_rail_optimized = {
    "rail-optimized", "rail-optimised fat-tree of DGX SuperPOD scalable units, 2 or 3 tiers",
    rail_optimized_required, NULL, rail_optimized_count, rail_optimized_build};
