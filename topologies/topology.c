/* topology.c - the topology registry (one line per kind in TOPO_KINDS), the
 * whole-number shape attributes, and the planes every kind can be copied
 * into (see topology.h). */
#include "topology.h"

#include <stdio.h>
#include <string.h>

#include "fattree.h"
#include "nic.h"

/* The registry: X(name) for each `const topo_kind topo_kind_name`, in the
 * order tools list them. */
#define TOPO_KINDS(X) \
    X(fat_tree) X(leaf_spine) X(rail_optimized) X(dragonfly) X(dragonfly_plus) X(torus)

#define DECLARE(name) extern const topo_kind topo_kind_##name;
#define ENTRY(name) &topo_kind_##name,
TOPO_KINDS(DECLARE)
const topo_kind *const topo_kinds[] = {TOPO_KINDS(ENTRY) NULL};

const topo_kind *topo_kind_find(const char *name)
{
    for (size_t i = 0; topo_kinds[i]; i++)
        if (!strcmp(name, topo_kinds[i]->name))
            return topo_kinds[i];
    return NULL;
}

#define SHAPE(attr, lo, hi, field) {attr, lo, hi, offsetof(topo_shape, field)}
const topo_shape_attr topo_shape_attrs[] = {
    SHAPE("radix", 2, 4096, radix),
    SHAPE("tiers", 2, 3, tiers),
    SHAPE("k", 2, 256, k),
    SHAPE("nodes-per-su", 1, 4096, nodes_per_su),
    SHAPE("planes", 1, 16, planes),
    SHAPE("hosts-per-router", 1, 4096, p),
    SHAPE("routers-per-group", 1, 4096, a),
    SHAPE("leaves-per-group", 1, 4096, leaves),
    SHAPE("spines-per-group", 1, 4096, spines),
    SHAPE("global-links", 1, 4096, h),
    SHAPE("groups", 2, 1000000, groups),
    SHAPE("hosts-per-leaf", 1, 4095, hosts_per_leaf),
    SHAPE("leaves-per-pod", 1, 4095, leaves_per_pod),
    SHAPE("nics-per-node", 1, 4096, nics_per_node),
    {NULL, 0, 0, 0},
};

#define FAIL(...) return (why && why_size ? snprintf(why, why_size, __VA_ARGS__) : 0), -1

/* GPUs per NIC port: 1 unless nics_per_node is given and below per_node */
static int gpus_per_nic(const topo_shape *s, unsigned per_node, unsigned *out, char *why,
                        size_t why_size)
{
    unsigned nics = s->nics_per_node, node = per_node > 1 ? per_node : 1;
    *out = 1;
    if (!nics || nics == node)
        return 0;
    if (nics > node)
        FAIL("nics-per-node %u: more NIC ports than the %u GPUs of a node (one port per GPU "
             "at most)", nics, node);
    if (node % nics)
        FAIL("nics-per-node %u does not divide the %u GPUs of a node: %u = %u x %u + %u", nics,
             node, node, nics, node / nics, node % nics);
    *out = node / nics;
    return 0;
}

static int count_ports(const topo_kind *kind, const topo_shape *s, unsigned hosts,
                       unsigned per_node, topo_counts *out, char *why, size_t why_size)
{
    topo_counts c;
    memset(&c, 0, sizeof c);
    if (kind->count(s, hosts, per_node, &c, why, why_size))
        return -1;
    if (s->planes > 1) {
        uint64_t switches = 0, cables = 0;
        for (int t = 0; t <= TOPO_STATS_MAX_TIER; t++)
            switches += c.switches[t], cables += c.cables[t];
        if (topo_multiplane_check_size(s->planes, (double)c.hosts, (double)switches,
                                       2.0 * (double)cables, why, why_size))
            return -1;
        for (int t = 0; t <= TOPO_STATS_MAX_TIER; t++) /* hosts get one port per copy */
            c.switches[t] *= s->planes, c.cables[t] *= s->planes;
    }
    *out = c;
    return 0;
}

int topo_count(const topo_kind *kind, const topo_shape *s, unsigned hosts, unsigned per_node,
               topo_counts *out, char *why, size_t why_size)
{
    unsigned g;
    topo_counts c;
    if (gpus_per_nic(s, per_node, &g, why, why_size))
        return -1;
    if (g == 1)
        return count_ports(kind, s, hosts, per_node, out, why, why_size);
    if (count_ports(kind, s, (hosts + g - 1) / g, per_node / g, &c, why, why_size))
        return -1;
    uint64_t switches = 0, cables = 0;
    for (int t = 0; t <= TOPO_STATS_MAX_TIER; t++)
        switches += c.switches[t], cables += c.cables[t];
    if (topo_nic_check((double)c.hosts, g, (double)switches, 2.0 * (double)cables, why,
                       why_size))
        return -1;
    c.nics = c.hosts, c.hosts *= g, c.nic_cables = c.hosts;
    *out = c;
    return 0;
}

static int build_ports(const topo_kind *kind, const topo_shape *s, unsigned hosts,
                       unsigned per_node, double bytes_per_s, topo_graph *out, char *why,
                       size_t why_size)
{
    if (s->planes <= 1)
        return kind->build(s, hosts, per_node, bytes_per_s, out, why, why_size);
    topo_graph plane;
    topo_graph_init(out);
    if (kind->build(s, hosts, per_node, bytes_per_s, &plane, why, why_size))
        return -1;
    int rc = topo_multiplane(&plane, s->planes, out, why, why_size);
    topo_graph_fini(&plane);
    return rc;
}

int topo_build(const topo_kind *kind, const topo_shape *s, unsigned hosts, unsigned per_node,
               double bytes_per_s, topo_graph *out, char *why, size_t why_size)
{
    unsigned g;
    topo_graph_init(out);
    if (gpus_per_nic(s, per_node, &g, why, why_size))
        return -1;
    if (g == 1)
        return build_ports(kind, s, hosts, per_node, bytes_per_s, out, why, why_size);
    topo_graph ports;
    if (build_ports(kind, s, (hosts + g - 1) / g, per_node / g, bytes_per_s, &ports, why,
                    why_size))
        return -1;
    int rc = topo_nic_expand(&ports, g, bytes_per_s, out, why, why_size);
    topo_graph_fini(&ports);
    return rc;
}
