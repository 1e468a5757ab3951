/* netcoll_auto.c - auto: NCCL's choice, not an expansion of its own.
 * Direct for all-to-all and send/recv. Otherwise NCCL's tuning model
 * (nccl_tuning.h) picks an algorithm and protocol for these ranks and this
 * size, and auto builds the matching expansion with the protocol applied
 * (netcoll.h "Auto"): Ring -> ring, Tree -> tree, CollNet and NVLS ->
 * in-network (NVLS in one node, SHARP across nodes), NVLSTree ->
 * hierarchical (reduce-scatter / all-gather in each node stand in for NVLS's
 * reduce and broadcast; its own Simple latencies).
 */
#include <math.h>

#include "nccl_tuning.h"
#include "netcoll_internal.h"

/* The capacity of the host's link into a node of the kind, or 0. */
static double link_rate(const topo_graph *g, uint32_t host, enum topo_node_kind kind)
{
    uint32_t l = nc_host_link(g, host, kind);
    return l == UINT32_MAX ? 0 : g->link_bytes_per_s[l];
}

/* The capacity of the host's NIC cable (its own or its shared NIC's), or 0:
 * NCCL's inter-node bandwidth is the NIC's speed whether or not GPUs share
 * it (a ring or tree crosses a node boundary once per channel) */
static double nic_rate(const topo_graph *g, uint32_t host, unsigned *sharing)
{
    uint32_t nic_link;
    uint32_t l = nc_host_fabric_link(g, host, &nic_link, sharing);
    return l == UINT32_MAX ? 0 : g->link_bytes_per_s[l];
}

/* The tuner's view of ranks r[0..n) on f; -1 when out of memory. */
static int tune_input(const nc_fabric *f, enum nc_collective c, const uint32_t *r, unsigned n,
                      double bytes, nccl_tune_in *in)
{
    unsigned m = nc_count_domains(f, r, n), sharing = 1;
    if (!m)
        return -1;
    double inter = nic_rate(f->g, r[0], &sharing);
    *in = (nccl_tune_in){.coll = c, .ranks = n, .nodes = m, .bytes = bytes,
                         .intra_bytes_per_s = link_rate(f->g, r[0], TOPO_SCALEUP),
                         .inter_bytes_per_s = inter,
                         .channels = f->channels,
                         .intra_ring_simple_lat_s = f->intra_step_latency_s,
                         .inter_ring_simple_lat_s = f->inter_step_latency_s,
                         .intra_wire_latency_s = f->intra_wire_latency_s,
                         .inter_wire_latency_s = f->inter_wire_latency_s,
                         .net_overhead_s = f->net_overhead_s, .gpus_per_nic = sharing,
                         .is_latency_free = f->is_latency_free};
    in->has_nvls = f->domain_size > 1 && f->scaleup_reduction_bytes_per_s > 0;
    /* CollNet (and NVLS across nodes, which needs it) only with one GPU per
     * node: the in-network expansion sends every rank's S through its own
     * NIC, which is CollNet only then (no intra-node scatter is built) */
    in->has_collnet = f->fabric_reduction_bytes_per_s > 0 && m == n;
    for (unsigned i = 0; i < n; i++) {
        if (in->has_nvls && nc_host_link(f->g, r[i], TOPO_SCALEUP) == UINT32_MAX)
            in->has_nvls = 0;
        if (in->has_collnet && nic_rate(f->g, r[i], &sharing) == 0)
            in->has_collnet = 0;
    }
    in->whole_domains = nc_whole_domains(f, r, n) >= 2;
    return 0;
}

static enum nc_algorithm resolve(const nc_fabric *f, enum nc_collective c, const uint32_t *r,
                                 unsigned n, double bytes, nc_plan *p)
{
    if (c == NC_ALLTOALL || c == NC_SENDRECV)
        return NC_ALGO_DIRECT;
    nccl_tune_in in;
    nccl_tune_out out;
    if (tune_input(f, c, r, n, bytes, &in) || nccl_tune(&in, &out))
        return NC_ALGO_RING; /* out of memory here fails again in the build */
    p->nccl_algo = out.algo;
    p->nccl_proto = out.proto;
    p->nccl_channels = out.channels;
    p->nccl_time_s = out.time_s[out.algo][out.proto];
    p->nccl_bytes_factor = 1.0 / nccl_proto_wire_efficiency(out.proto);
    p->nccl_latency_s = out.latency_s[out.algo][out.proto];
    switch (out.algo) {
    case NCCL_ALGO_TREE:
        return NC_ALGO_TREE;
    case NCCL_ALGO_NVLS:
        if (in.nodes == 1 && f->scaleup_reduction_latency_s > 0)
            p->nccl_latency_s = -1; /* the link's measured NVLS latency */
        return NC_ALGO_IN_NETWORK;
    case NCCL_ALGO_COLLNET_DIRECT:
    case NCCL_ALGO_COLLNET_CHAIN:
        return NC_ALGO_IN_NETWORK;
    case NCCL_ALGO_NVLS_TREE:
        p->nccl_latency_s = -1;
        return NC_ALGO_HIERARCHICAL;
    default:
        return NC_ALGO_RING;
    }
}

const nc_algorithm_type nc_algo_auto = {
    .name = "auto",
    .doc = "NCCL's tuning model picks algorithm and protocol (ring, tree, NVLS/SHARP "
           "in-network, NVLSTree as hierarchical; LL, LL128, Simple); direct for all-to-all "
           "and send/recv",
    .collectives = 1u << NC_ALLREDUCE | 1u << NC_REDUCESCATTER | 1u << NC_ALLGATHER |
                   1u << NC_ALLTOALL | 1u << NC_BROADCAST | 1u << NC_SENDRECV,
    .resolve = resolve,
};
