/* fattree.h - folded-Clos fabrics.
 *
 * k-ary fat-tree (Al-Fares, Loukissas, Vahdat, SIGCOMM 2008; hardware.md
 * 6.1): k pods of k/2 edge and k/2 aggregation switches, (k/2)^2 core
 * switches, k^3/4 hosts, 5k^2/4 switches, identical k-port switches, full
 * bisection. Edge switch e of pod p connects k/2 hosts and every
 * aggregation switch of its pod; aggregation switch a of every pod connects
 * core switches a(k/2) .. a(k/2) + k/2 - 1. A host-to-host path is 2 links
 * under one edge switch, 4 inside a pod, 6 across pods.
 *
 * 2-tier leaf-spine of radix-R switches (hardware.md 6.1): each leaf has
 * `down` host ports and R - down up ports, one to each of R - down spines;
 * a spine has R ports, so at most R leaves. Non-blocking at down = R/2:
 * R^2/2 hosts and 3R/2 switches. Oversubscription = down : (R - down).
 * Host ids come first (0 .. hosts-1), then switches tier by tier.
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

/* Rail-optimised 2-tier fat-tree (NVIDIA DGX SuperPOD; hardware.md 6.2): a
 * scalable unit (SU) of `nodes_per_su` nodes with `rails` GPUs (one NIC
 * each); GPU r of every node of an SU plugs into the SU's leaf for rail r, so
 * a rail's traffic inside an SU takes one switch hop. Each leaf has radix -
 * nodes_per_su up ports, spread evenly over S = leaves x up / radix spines
 * (up / S parallel cables to each). Host id = (su x nodes_per_su + node) x
 * rails + rail. Returns -1 with a reason when the numbers do not divide, a
 * leaf has no up ports, or the SUs need a third tier (not built yet). */
int topo_railopt(unsigned sus, unsigned nodes_per_su, unsigned rails, unsigned radix,
                 double bytes_per_s, topo_graph *out, char *why, size_t why_size);

#endif
