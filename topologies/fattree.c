/* fattree.c - folded-Clos builders: k-ary fat-tree, 2- and 3-tier
 * leaf-spine, rail-optimised fat-tree, multi-plane copies (see fattree.h).
 * Every builder validates all its numbers before adding a node, so the only
 * failure after that is running out of memory. */
#include "fattree.h"

#include <stdio.h>
#include <stdlib.h>

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

int topo_fattree_kary(unsigned k, double bytes_per_s, topo_graph *out, char *why,
                      size_t why_size)
{
    topo_graph_init(out);
    if (k < 2 || k % 2)
        FAIL("a k-ary fat-tree needs an even k of at least 2 (k/2 ports down, k/2 up), got %u", k);
    if (k > 256)
        FAIL("k = %u: at most 256 (%.4g hosts)", k, (double)k * k * k / 4);
    if (!(bytes_per_s > 0))
        FAIL("link bandwidth must be positive");
    /* the k-ary tree is the full-size non-blocking 3-tier leaf-spine, with
     * the same id order (fattree.h) */
    return topo_leafspine3(k, k, k / 2, k / 2, bytes_per_s, out, why, why_size);
}

int topo_leafspine(unsigned radix, unsigned leaves, unsigned down, double bytes_per_s,
                   topo_graph *out, char *why, size_t why_size)
{
    topo_graph_init(out);
    if (radix < 2 || radix > 4096)
        FAIL("switch radix must be between 2 and 4096, got %u", radix);
    if (down < 1 || down >= radix)
        FAIL("a leaf of radix %u needs at least one host port and one up port, got %u host "
             "ports", radix, down);
    if (leaves < 1 || leaves > radix)
        FAIL("a leaf-spine of radix %u has at most %u leaves (one port on every spine each), "
             "got %u", radix, radix, leaves);
    if (!(bytes_per_s > 0))
        FAIL("link bandwidth must be positive");
    unsigned spines = radix - down;
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

static int leafspine3_check(unsigned radix, unsigned pods, unsigned leaves_per_pod,
                            unsigned down, double bytes_per_s, char *why, size_t why_size)
{
    if (radix < 2 || radix > 4096)
        FAIL("switch radix must be between 2 and 4096, got %u", radix);
    if (down < 1 || down >= radix)
        FAIL("a leaf of radix %u needs at least one host port and one up port, got %u host "
             "ports", radix, down);
    if (leaves_per_pod < 1 || leaves_per_pod >= radix)
        FAIL("a spine of radix %u needs a port per leaf of its pod and one up port: 1 to %u "
             "leaves per pod, got %u", radix, radix - 1, leaves_per_pod);
    if (pods < 1 || pods > radix)
        FAIL("a core switch of radix %u has one port per pod: 1 to %u pods, got %u", radix,
             radix, pods);
    if (!(bytes_per_s > 0))
        FAIL("link bandwidth must be positive");
    double up = radix - down, hosts = (double)pods * leaves_per_pod * down;
    double spines = pods * up, cores = up * (radix - leaves_per_pod);
    double cables = hosts + (double)pods * leaves_per_pod * up + spines * (radix - leaves_per_pod);
    if (hosts + pods * leaves_per_pod + spines + cores > MAX_IDS || 2 * cables > MAX_IDS)
        FAIL("%u pods x %u leaves x %u hosts = %.4g hosts, %.4g cables: more than 2^31 ids",
             pods, leaves_per_pod, down, hosts, cables);
    return 0;
}

int topo_leafspine3(unsigned radix, unsigned pods, unsigned leaves_per_pod, unsigned down,
                    double bytes_per_s, topo_graph *out, char *why, size_t why_size)
{
    topo_graph_init(out);
    if (leafspine3_check(radix, pods, leaves_per_pod, down, bytes_per_s, why, why_size))
        return -1;
    unsigned L = leaves_per_pod, up = radix - down, core_up = radix - L;
    unsigned hosts = pods * L * down;
    topo_graph *g = out;
    topo_graph_add_nodes(g, hosts, TOPO_HOST, 0);
    uint32_t leaf0 = topo_graph_add_nodes(g, pods * L, TOPO_SWITCH, 1);
    uint32_t spine0 = topo_graph_add_nodes(g, pods * up, TOPO_SWITCH, 2);
    uint32_t core0 = topo_graph_add_nodes(g, up * core_up, TOPO_SWITCH, 3);
    number_groups(g, leaf0, pods * L, L);
    number_groups(g, spine0, pods * up, up);
    for (unsigned h = 0; h < hosts; h++)
        topo_graph_add_cable(g, h, leaf0 + h / down, bytes_per_s);
    for (unsigned l = 0; l < pods * L; l++) /* leaf l of pod l / L: every spine of that pod */
        for (unsigned s = 0; s < up; s++)
            topo_graph_add_cable(g, leaf0 + l, spine0 + (l / L) * up + s, bytes_per_s);
    for (unsigned s = 0; s < pods * up; s++) /* spine j = s % up: core set j */
        for (unsigned c = 0; c < core_up; c++)
            topo_graph_add_cable(g, spine0 + s, core0 + (s % up) * core_up + c, bytes_per_s);
    return finish(g, why, why_size);
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

int topo_railopt(unsigned sus, unsigned nodes_per_su, unsigned rails, unsigned radix,
                 double bytes_per_s, topo_graph *out, char *why, size_t why_size)
{
    topo_graph_init(out);
    if (!sus || !nodes_per_su || !rails)
        FAIL("a rail-optimised fabric needs at least one SU, node and rail");
    if (radix < 2 || radix > 4096)
        FAIL("switch radix must be between 2 and 4096, got %u", radix);
    if (nodes_per_su >= radix)
        FAIL("a leaf of radix %u cannot take %u nodes and keep an up port", radix, nodes_per_su);
    if (!(bytes_per_s > 0))
        FAIL("link bandwidth must be positive");
    if ((double)sus * nodes_per_su * rails * 4 > MAX_IDS)
        FAIL("%u SUs x %u nodes x %u rails: more than 2^29 GPUs", sus, nodes_per_su, rails);
    railopt_shape s;
    if (railopt_shape_of(sus, nodes_per_su, rails, radix, &s, why, why_size))
        return -1;
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

static int multiplane_check(const topo_graph *p, unsigned planes, char *why, size_t why_size)
{
    if (planes < 1 || planes > 256)
        FAIL("planes must be between 1 and 256 (node_plane is 8 bits), got %u", planes);
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
    double nodes = p->n_hosts + (double)planes * p->n_switches;
    if (nodes > MAX_IDS || (double)planes * p->n_links > MAX_IDS)
        FAIL("%u planes x %u switches, %u links: more than 2^31 ids", planes, p->n_switches,
             p->n_links);
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
