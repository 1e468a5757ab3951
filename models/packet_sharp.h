/* packet_sharp.h - SHARP aggregation at switches on the packet tier (issue
 * 19; docs/fabric.md "SHARP on the packet tier"): an all-reduce whose
 * packets are summed by the switches of a reduction tree, per packet
 * sequence number (PSN), and multicast back down.
 *
 * Tree (folded Clos only, g->updown): each rank's host link leads to its
 * leaf; the root is the switch of the lowest tier, then the lowest id, that
 * every rank's leaf reaches by up-links (the lowest common ancestor tier);
 * every other tree switch's parent is its parent in a breadth-first search
 * down from the root over down-links in link order (the first discoverer).
 * The tree is the union of the paths rank -> leaf -> ... -> root.
 *
 * Per packet i (the message cut into P = ceil(S / mtu) packets as pkt_send
 * cuts it): every rank sends packet i up its host link; a switch counts
 * packet i's arrivals from its children (each held in its ingress port, as
 * an ordinary packet, under the same credits or PFC) and, when it has all,
 * sends ONE packet of the same size up (the root: one copy down to every
 * child, and every switch below passes one copy to each of its children)
 * until every rank has received packet i. The partial sum lives in the
 * children's ingress buffers: a child's packet is released (its credit
 * returned) when the packet it was summed into has finished serialising on
 * the next link (at the root and on the way down: when the last copy has).
 * So the aggregation buffer is the port buffers (buffer_bytes per child
 * port): no separate limit (a GAP in the references; printed under
 * "defaults used"). Reduction rate R (B/s, INFINITY: line rate): a switch
 * emits packet i no sooner than size_i / R after it emitted packet i - 1 (a
 * rate limit, no added latency; with R >= every child link's rate it never
 * binds). Cost: one counter per (tree switch, packet), 2 events per
 * packet-hop, one per rate-limited emission.
 */
#ifndef DCSIM_MODELS_PACKET_SHARP_H
#define DCSIM_MODELS_PACKET_SHARP_H

#include <stddef.h>
#include <stdint.h>

#include "graph.h"
#include "netcoll.h"
#include "packet.h"

/* The reduction tree of ranks r[0..n) on g (see above). */
typedef struct pkt_sharp_tree_info {
    uint32_t root;          /* the root switch's node id */
    uint32_t switches;      /* switches in the tree */
    uint32_t hops_up;       /* links from a rank to the root (the most, if unequal) */
    uint64_t children;      /* sum over tree switches of their children */
} pkt_sharp_tree_info;

/* 0 and *out for ranks r[0..n) (n >= 2 distinct hosts, each with a link to
 * a switch, on a folded Clos, with a common ancestor switch); else -1 with
 * the reason. */
int pkt_sharp_tree(const topo_graph *g, const uint32_t *r, unsigned n, pkt_sharp_tree_info *out,
                   char *why, size_t why_size);

/* Start a SHARP all-reduce of `bytes` (a positive whole number) per rank
 * over ranks r[0..n) now, reduction rate reduction_bytes_per_s (> 0;
 * INFINITY: line rate). done(ctx, tag) is called when every rank has
 * received every packet. Returns 0, or -1 with the reason in pkt_net_error
 * (pkt_sharp_tree's refusals, lossy modes, a stalled host, out of memory);
 * a failed start changes nothing. */
int pkt_sharp_allreduce(pkt_net *net, const uint32_t *r, unsigned n, double bytes,
                        double reduction_bytes_per_s, pkt_done_fn done, void *ctx, uint64_t tag);

/* A plan's in-network phase (netcoll_in_network.c: connections to fixed
 * links): 1 when phase ph is one, else 0. */
int pkt_sharp_is_phase(const nc_plan *p, const nc_phase *ph);
/* 0 when every in-network phase of p is a fabric SHARP phase the packet
 * tier runs on g (ranks' host links to switches; a tree); else -1 with the
 * reason (NVLS inside a scale-up domain, GPUs sharing a NIC, no tree). */
int pkt_sharp_plan_check(const topo_graph *g, const nc_plan *p, char *why, size_t why_size);
/* Start in-network phase ph of p (ranks from its host links, its bytes and
 * rate cap) as pkt_sharp_allreduce. */
int pkt_sharp_start_phase(pkt_net *net, const nc_plan *p, const nc_phase *ph, pkt_done_fn done,
                          void *ctx, uint64_t tag);

#endif
