/* stats.h - counts and figures of merit of a built topology: hosts, switches
 * per tier and plane, cables, transceivers, bisection bandwidth, diameter.
 *
 * "Fabric" means hosts, fabric switches (TOPO_SWITCH) and the cables between
 * them; scale-up crossbars and their cables are counted apart and take no
 * part in bisection or diameter. Shared NICs (nic.h) and their GPU cables
 * are counted apart too, but carry the bisection's flows (their NIC link is
 * what the GPUs share); the diameter counts fabric links only (a GPU's
 * hops through its NIC are not counted).
 *
 * Transceivers (hardware.md 3.4: an optical cable has a transceiver at each
 * end): we count every fabric cable, host-to-switch and switch-to-switch, as
 * optical, and no scale-up cable (NVLink is copper inside a node or rack).
 * So n_transceivers = 2 x n_fabric_cables, counted per cable end (a
 * twin-port module such as the 800G OSFP serves two ends, so modules may be
 * fewer). Which fabric cables are short enough for passive DAC depends on
 * the floor plan, which the graph does not know: the count is an upper bound.
 */
#ifndef DCSIM_TOPO_STATS_H
#define DCSIM_TOPO_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "graph.h"

#define TOPO_STATS_MAX_TIER 4
#define TOPO_STATS_MAX_PLANES 256 /* node_plane is 8 bits */

typedef struct topo_stats {
    uint32_t n_hosts;
    uint32_t n_scaleup_domains;         /* TOPO_SCALEUP crossbars */
    uint32_t n_switches;                /* fabric switches */
    uint32_t switches_per_tier[TOPO_STATS_MAX_TIER + 1]; /* [t], t = 1 .. 4; [0] = 0 */
    uint32_t n_planes;                  /* 1 + highest switch plane; 0 without switches */
    uint32_t switches_per_plane[TOPO_STATS_MAX_PLANES];
    uint32_t n_links;                   /* directed links, all kinds */
    uint32_t n_fabric_cables;           /* host-switch and switch-switch */
    uint32_t cables_per_tier[TOPO_STATS_MAX_TIER + 1]; /* [0] host-switch; [t] switch-switch
                                                          whose lower end is in tier t */
    uint32_t n_scaleup_cables;          /* host-crossbar */
    uint32_t n_optical_cables;          /* = n_fabric_cables (rule above) */
    uint32_t n_transceivers;            /* 2 per optical cable */
    double bisection_bytes_per_s;       /* topo_bisection_bytes_per_s */
    uint32_t diameter_links;            /* topo_fabric_diameter */
    uint32_t max_switch_radix;          /* most links out of one fabric switch */
    uint32_t max_scaleup_radix;         /* most links out of one crossbar */
    uint32_t n_nics;                    /* shared NICs (TOPO_NIC, nic.h) */
    uint32_t n_nic_cables;              /* GPU-NIC, inside the server: not fabric cables */
} topo_stats;

/* Fill *out for the finished graph g. Returns 0, or -1 with a one-line
 * reason (graph not finished, a switch above tier 4, a cable whose links are
 * not 2c and 2c+1, no memory); *out is written only on success.
 * Cost: O(links) for the counts plus the two functions below. */
int topo_stats_compute(const topo_graph *g, topo_stats *out, char *why, size_t why_size);

/* The counts only (no bisection or diameter): hosts, switches per tier and
 * plane, cables per tier, transceivers, radixes. O(nodes + links). Returns
 * 0, or -1 with a reason as topo_stats_compute. */
int topo_stats_count(const topo_graph *g, topo_stats *out, char *why, size_t why_size);

/* Bisection bandwidth, bytes/s one way: the maximum flow from the first
 * n/2 hosts in id order to the other n - n/2 (n = n_hosts; builders number
 * hosts 0 .. n-1, so the halves are ids [0, n/2) and [n/2, n)) over the
 * fabric, each
 * directed link carrying at most its capacity; by max-flow/min-cut it equals
 * the smallest total capacity of links whose removal separates the halves.
 * Dinic's algorithm (1970) with an iterative depth-first search; a fabric of
 * 65,536 hosts and 400K links takes tens of milliseconds (few phases: host
 * paths are short). 0 for fewer than 2 hosts. Returns 0 or -1 (no memory). */
int topo_bisection_bytes_per_s(const topo_graph *g, double *out);

/* Diameter: the most links on a shortest fabric path between two hosts
 * (switches forward, hosts and crossbars do not; a host-to-host cable is
 * ignored); UINT32_MAX when some pair is disconnected; 0 for < 2 hosts.
 * Hosts with the same set of fabric switches have the same distances, so one
 * breadth-first search runs per such class, 64 at a time as bit masks over
 * the switch graph: O(classes / 64 x levels x switch links). Returns 0 or -1
 * (no memory). */
int topo_fabric_diameter(const topo_graph *g, uint32_t *out);

#endif
