/* fattree.h - folded-Clos fabrics: k-ary fat-tree, 2- and 3-tier leaf-spine,
 * rail-optimised fat-tree (2 or 3 tiers), and multi-plane copies of any of
 * them. Host ids come first (0 .. hosts-1), then switches tier by tier; every
 * builder sets g->updown (a folded Clos), node_tier, and node_group of every
 * switch (meaning per builder below; TOPO_NO_GROUP for a tier that spans all
 * groups). Hosts keep TOPO_NO_GROUP until topologies/scaleup.h numbers them.
 *
 * k-ary fat-tree (Al-Fares, Loukissas, Vahdat, SIGCOMM 2008; hardware.md
 * 6.1): k pods of k/2 edge and k/2 aggregation switches, (k/2)^2 core
 * switches, k^3/4 hosts, 5k^2/4 switches, identical k-port switches, full
 * bisection. Edge switch e of pod p connects k/2 hosts and every
 * aggregation switch of its pod; aggregation switch a of every pod connects
 * core switches a(k/2) .. a(k/2) + k/2 - 1. A host-to-host path is 2 links
 * under one edge switch, 4 inside a pod, 6 across pods. node_group: pod of an
 * edge or aggregation switch; cores none.
 *
 * 2-tier leaf-spine of radix-R switches (hardware.md 6.1): each leaf has
 * `down` host ports and R - down up ports, one to each of R - down spines;
 * a spine has R ports, so at most R leaves. Non-blocking at down = R/2:
 * R^2/2 hosts and 3R/2 switches. Oversubscription = down : (R - down).
 * node_group 0 for every switch (the fabric is one pod).
 *
 * 3-tier leaf-spine (topo_clos3, topo_leafspine3): `pods` copies of a
 * 2-tier leaf-spine of L = leaves_per_pod leaves with `down` host ports; a
 * leaf's u = leaf_up up ports go one to each of the pod's u spines (down + u
 * <= R). A spine uses L ports down and U = spine_up up (L + U <= R). The core
 * is sized to the pods it joins: spine j of every pod feeds core set j of m
 * cores, U / m parallel cables to each, where m is the smallest divisor of U
 * with pods U / m <= R (a core's ports); m = U (one cable per pod and core)
 * always fits while pods <= R. Counts: hosts = pods L down, leaves = pods L,
 * spines = pods u, cores = u m, cables = hosts + pods L u + pods u U. With
 * down = L = u = U = R/2 and pods = R, m = R/2 and it is the k-ary fat-tree
 * of k = R (radix 40: 16,000 hosts, 2,000 switches; radix 64: 65,536 and
 * 5,120; hardware.md 6.1), in the same id order; with 4 such pods of radix
 * 64 (4,096 hosts) m = 2: 64 cores, 320 switches (a full core would be
 * 1,024). Oversubscription down : u at the leaf and L : U at the spine.
 * Paths: 2 links under one leaf, 4 in a pod, 6 across pods. node_group: pod
 * of a leaf or spine; cores none.
 */
#ifndef DCSIM_TOPO_FATTREE_H
#define DCSIM_TOPO_FATTREE_H

#include <stddef.h>

#include "graph.h"

/* Build a k-ary fat-tree with every link at bytes_per_s. Returns 0, or -1
 * with a one-line reason (k odd, k < 2, k > 256, no memory). */
int topo_fattree_kary(unsigned k, double bytes_per_s, topo_graph *out, char *why,
                      size_t why_size);

/* Build a 2-tier leaf-spine: `leaves` leaves of radix `radix` with `down`
 * host ports each. Returns 0, or -1 with a reason (no up ports, more leaves
 * than a spine has ports, no memory). */
int topo_leafspine(unsigned radix, unsigned leaves, unsigned down, double bytes_per_s,
                   topo_graph *out, char *why, size_t why_size);

/* The numbers of a 3-tier leaf-spine (model above). */
typedef struct topo_clos3 {
    unsigned radix;          /* ports of every switch */
    unsigned pods;
    unsigned leaves_per_pod; /* L */
    unsigned down;           /* host ports per leaf */
    unsigned leaf_up;        /* u: spines per pod; 0 = radix - down */
    unsigned spine_up;       /* U: up cables per spine; 0 = radix - L */
} topo_clos3;

/* Check c (zeros resolved as above) and give the cores per set m. Returns 0,
 * or -1 with a reason (no host or up port at a leaf, no up port at a spine,
 * a switch over its radix, more pods than a core switch has ports, more than
 * 2^31 nodes or links). */
int topo_clos3_check(const topo_clos3 *c, unsigned *cores_per_set, char *why, size_t why_size);

/* Build the 3-tier leaf-spine c, every cable at bytes_per_s. Returns 0, or
 * -1 with topo_clos3_check's reason or "out of memory". */
int topo_clos3_build(const topo_clos3 *c, double bytes_per_s, topo_graph *out, char *why,
                     size_t why_size);

/* topo_clos3_build of {radix, pods, leaves_per_pod, down, 0, 0}: every port
 * of leaves and spines in use. */
int topo_leafspine3(unsigned radix, unsigned pods, unsigned leaves_per_pod, unsigned down,
                    double bytes_per_s, topo_graph *out, char *why, size_t why_size);

/* Rail-optimised fat-tree (NVIDIA DGX SuperPOD; hardware.md 6.2): a
 * scalable unit (SU) of `nodes_per_su` nodes with `rails` GPUs (one NIC
 * each); GPU r of every node of an SU plugs into the SU's leaf for rail r, so
 * a rail's traffic inside an SU takes one switch hop. Host id = (su x
 * nodes_per_su + node) x rails + rail, so a node's GPUs are consecutive. Each
 * leaf has u = radix - nodes_per_su up ports.
 *
 * Two tiers while the leaves fit under one spine layer (leaves <= radix):
 * S = leaves x u / radix spines, every leaf has u / S parallel cables to each
 * (B200 RA: 2, 4, 8 SUs -> 16/8, 32/16, 64/32 leaf/spine).
 *
 * Three tiers beyond (B200 RA: 16, 32, 64 SUs -> 128/128/64, 256/256/128,
 * 512/512/256 leaf/spine/core): spines use R/2 ports down and R/2 up. A spine
 * group is the leaves of one rail in a block of b consecutive SUs and
 * S_g = b u / (R/2) spines; each of those leaves has u / S_g cables to each
 * spine of its group. b is the largest divisor of `sus` for which S_g is
 * whole and divides u. With G = rails x sus / b groups there are G S_g
 * spines and G S_g / 2 cores, split into S_g core sets of G/2; spine j of
 * every group has R/G cables to every core of set j, so every core reaches
 * every spine group (any up-link works in up/down routing). Grouping by rail
 * is our choice (the RA's cable map is not in hardware.md): it keeps
 * same-rail traffic, which NCCL rings and PXN produce, below the core inside
 * a block (4 links), while traffic between rails crosses the core (6 links).
 *
 * node_group: SU of a leaf; spine group of a 3-tier spine (block x rails +
 * rail); 2-tier spines and cores none. Returns -1 with a reason when the
 * numbers do not divide, a leaf has no up ports, or a third tier cannot be
 * built (odd radix, no block size fits, more groups than a core has ports).
 */
int topo_railopt(unsigned sus, unsigned nodes_per_su, unsigned rails, unsigned radix,
                 double bytes_per_s, topo_graph *out, char *why, size_t why_size);

/* Multi-plane fabric (for example DeepSeek's multi-plane fat-tree or Alibaba
 * HPN's dual plane; hardware.md 6.4): `planes` independent copies of the
 * switches and cables of `plane`, sharing its hosts, so every host has one
 * uplink per copy of each of its plane uplinks. Links keep the plane's rates:
 * to split one NIC of B bytes/s over P planes build the plane at B / P; to
 * give each plane its own NIC port build it at the port's rate. Switch ids:
 * n_hosts + p x plane->n_switches + (id in plane - n_hosts); node_plane = p;
 * tiers, groups and updown are copied. `plane` must have its hosts first,
 * one plane (node_plane all 0) and no scale-up crossbars (add those after).
 * Returns 0, or -1 with a reason (planes not in 1 .. 256, plane shape, more
 * than 2^31 nodes or links, no memory); `plane` is left untouched. */
int topo_multiplane(const topo_graph *plane, unsigned planes, topo_graph *out, char *why,
                    size_t why_size);

/* The numeric part of topo_multiplane's checks, for a plane of `hosts`
 * hosts, `switches` switches and `links` directed links (counts, not yet
 * built): planes in 1 .. 256, ids within 2^31. Returns 0, or -1 with the
 * reason topo_multiplane would give. */
int topo_multiplane_check_size(unsigned planes, double hosts, double switches, double links,
                               char *why, size_t why_size);

#endif
