/* topology.h - the registry of fabric topologies: one const descriptor per
 * kind (name, one-line doc, the <fabric> attributes it requires, a check
 * with closed-form part counts, a builder), one line per kind in topology.c.
 *
 * The descriptor works from a topo_shape (every number a scenario may give)
 * plus the host ports wanted and the GPUs per node, so it needs nothing
 * outside topologies/. count() runs exactly the argument checks build()
 * runs (the same functions, one copy of each rule) and gives the parts the
 * build would have, without building: a build that passes count() can only
 * fail for want of memory. tests/app/test_fabric_counts.c holds every kind
 * to topo_stats_count of the built graph.
 *
 * Adding a topology: one file (its builder, checks, closed-form counts and
 * `const topo_kind topo_kind_NAME`, e.g. torus.c) and one line X(NAME) in
 * TOPO_KINDS of topology.c; then its value in the <fabric topology>
 * enumeration and its attributes in scenarios/dcsim.xsd, which
 * tests/topologies/test_topology_registry.c checks against this registry. A kind with
 * a new text attribute parses it itself (topo_kind.attrs); the value lands in
 * a topo_shape field.
 */
#ifndef DCSIM_TOPO_TOPOLOGY_H
#define DCSIM_TOPO_TOPOLOGY_H

#include <stddef.h>
#include <stdint.h>

#include "graph.h"
#include "stats.h"

#define TOPO_MAX_DIMS 4

/* The numbers of a <fabric>; each kind reads the ones it needs (0 = not
 * given, the kind's default). */
typedef struct topo_shape {
    unsigned radix;          /* switch ports: leaf-spine, rail-optimised, Dragonfly+ limit */
    unsigned tiers;          /* leaf-spine: 2 or 3; 0 = 2 while the leaves fit, else 3 */
    unsigned k;              /* k-ary fat-tree */
    unsigned nodes_per_su;   /* rail-optimised scalable unit (nodes) */
    unsigned planes;         /* copies of the switch fabric; 0 or 1 = one */
    unsigned p;              /* hosts per router (Dragonfly, torus) or leaf (Dragonfly+) */
    unsigned a;              /* Dragonfly routers per group */
    unsigned leaves, spines; /* Dragonfly+ per group */
    unsigned h;              /* global links per router (Dragonfly) or spine (Dragonfly+) */
    unsigned groups;         /* Dragonfly family; 0 = the most */
    unsigned over_down, over_up; /* leaf oversubscription down:up; 0:0 = 1:1 */
    int arrangement;         /* enum topo_dragonfly_arrangement */
    unsigned dims[TOPO_MAX_DIMS]; /* torus: routers per dimension, 0 after the last */
    unsigned hosts_per_leaf;  /* leaf-spine: host ports per leaf; 0 = from radix and ratio */
    unsigned leaves_per_pod;  /* leaf-spine 3 tiers: leaves per pod; 0 = from radix and ratio */
    unsigned spine_over_down, spine_over_up; /* spine (pod to core) oversubscription; 0:0 = 1:1 */
    unsigned nics_per_node;   /* NIC ports per node (nic.h); 0 = one per GPU */
} topo_shape;

/* A whole-number attribute of <fabric> that sets a topo_shape field, in
 * [min, max] (scenario loaders read every one, whatever the topology). */
typedef struct topo_shape_attr {
    const char *name;
    unsigned min, max;
    size_t offset; /* of the unsigned field in topo_shape */
} topo_shape_attr;

/* radix, tiers, k, nodes-per-su, planes, hosts-per-router, routers-per-group,
 * leaves-per-group, spines-per-group, global-links, groups, hosts-per-leaf,
 * leaves-per-pod, nics-per-node; then {NULL}. */
extern const topo_shape_attr topo_shape_attrs[];

/* A text attribute only one kind reads: parse(text) sets its field of *s, or
 * returns -1 with a one-line reason (what is allowed, with an example). */
typedef struct topo_text_attr {
    const char *name;
    int (*parse)(const char *text, topo_shape *s, char *why, size_t why_size);
} topo_text_attr;

/* The parts of a fabric, as topo_stats_count would count them on the built
 * graph (stats.h: tiers, cables up from tier t), plus what routing checks. */
typedef struct topo_counts {
    uint64_t hosts;                                   /* fabric host ports */
    uint64_t switches[TOPO_STATS_MAX_TIER + 1];       /* [t], t = 1 .. 4; [0] = 0 */
    uint64_t cables[TOPO_STATS_MAX_TIER + 1];         /* [0] host cables; [t] switch to
                                                         switch whose lower end is in tier t */
    uint64_t scaleup_domains, scaleup_cables;         /* crossbars and their cables
                                                         (scaleup.h); 0 from topo_count */
    uint32_t groups;  /* switch groups: 1 + the highest node_group of a switch, 0 if none */
    int updown;       /* graph.h: a folded Clos */
    uint64_t nics, nic_cables; /* shared NICs (nic.h) and their GPU cables; 0 without */
} topo_counts;

typedef int topo_count_fn(const topo_shape *s, unsigned hosts, unsigned per_node,
                          topo_counts *out, char *why, size_t why_size);
typedef int topo_build_fn(const topo_shape *s, unsigned hosts, unsigned per_node,
                          double bytes_per_s, topo_graph *out, char *why, size_t why_size);

/* A topology kind. hosts: the host ports wanted (GPUs; a kind may build
 * more, never fewer); per_node: GPUs per node, whose consecutive hosts some
 * kinds keep together (rails of a rail-optimised fabric); 1 = no nodes.
 * count(): 0 and *out, or -1 with the reason build() would give (*out
 * untouched). build(): one plane, every link at bytes_per_s (> 0); 0, or -1
 * with the reason (only "out of memory" once count() passed). */
typedef struct topo_kind {
    const char *name;             /* <fabric topology="..."> */
    const char *doc;              /* one line */
    const char *const *required;  /* attributes it cannot do without, NULL-terminated */
    const topo_text_attr *attrs;  /* text attributes only it reads ({NULL}-ended), or NULL */
    topo_count_fn *count;
    topo_build_fn *build;
} topo_kind;

/* The registry: every kind, in the order of topology.c, then NULL. */
extern const topo_kind *const topo_kinds[];

/* The kind named name, or NULL. */
const topo_kind *topo_kind_find(const char *name);

/* The kind's count() then the planes: every switch and cable once per plane
 * (topo_multiplane), with its id limits; then shared NICs (nic.h) when
 * s->nics_per_node is below per_node: the kind counts one host per NIC port
 * (ceil(hosts / g) ports in nodes of nics_per_node, g = per_node /
 * nics_per_node GPUs per NIC, whole), hosts = ports x g. Returns 0, or -1
 * with a reason. */
int topo_count(const topo_kind *kind, const topo_shape *s, unsigned hosts, unsigned per_node,
               topo_counts *out, char *why, size_t why_size);

/* The kind's build(), topo_multiplane for planes > 1, then topo_nic_expand
 * for shared NICs, GPU-to-NIC cables at bytes_per_s. Returns 0, or -1 with a
 * reason (the ones topo_count gives, or no memory). */
int topo_build(const topo_kind *kind, const topo_shape *s, unsigned hosts, unsigned per_node,
               double bytes_per_s, topo_graph *out, char *why, size_t why_size);

#endif
