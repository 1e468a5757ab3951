/* nic.h - servers with fewer NICs than GPUs: each NIC port is shared by
 * gpus_per_nic GPUs of its server.
 *
 * The fabric is built with one host per NIC port (a topology kind sees
 * nodes of nics GPUs), then topo_nic_expand turns every port into a
 * TOPO_NIC node (tier 0, not a switch) that keeps the port's fabric cables,
 * and hangs gpus_per_nic GPU hosts under it, one cable each. GPU g uses NIC
 * g / gpus_per_nic, so a node's GPUs stay consecutive and GPU r is still
 * host r. Every flow of the GPUs of one NIC crosses the NIC's one fabric
 * link, which they share (routing.h); a GPU-to-NIC cable runs at the
 * fabric link's rate, so one GPU alone can fill the NIC (the PCIe Gen5 x16
 * host link of a 400G NIC is faster: hardware.md 3.2, 1.2). Counted apart
 * from fabric cables: they are inside the server (no transceivers).
 */
#ifndef DCSIM_TOPO_NIC_H
#define DCSIM_TOPO_NIC_H

#include <stddef.h>

#include "graph.h"

/* The checks of topo_nic_expand on numbers: gpus_per_nic at least 1, ids
 * within 2^31 for ports x gpus_per_nic GPUs, `switches` switches, the ports
 * as NICs and `links` directed links plus 2 per GPU. Returns 0 or -1 with a
 * reason. */
int topo_nic_check(double ports, unsigned gpus_per_nic, double switches, double links,
                   char *why, size_t why_size);

/* out = ports with every host p (ids 0 .. n-1, hosts first, no scale-up
 * crossbars) replaced by NIC p under gpus_per_nic GPU hosts: ids GPUs 0 ..
 * n x gpus_per_nic - 1, then ports' switches in their order (tiers, planes,
 * groups kept), then the NICs; every ports cable in its order (a host end
 * now the NIC, each direction's rate kept), then GPU g <-> NIC g /
 * gpus_per_nic at bytes_per_s. Returns 0, or -1 with a reason (the checks
 * above, bad ports, no memory); ports is left untouched. */
int topo_nic_expand(const topo_graph *ports, unsigned gpus_per_nic, double bytes_per_s,
                    topo_graph *out, char *why, size_t why_size);

#endif
