/* netcoll_in_network.c - in-network all-reduce: NVLS inside one scale-up
 * domain (each GPU sends S to the crossbar and receives S), SHARP over the
 * fabric otherwise (each rank's NIC sends S up and receives the reduced S);
 * one coupled phase over the ranks' fixed links, capped at the reduction
 * bandwidth R of the technology. Latency: the scale-up reduction latency
 * (NCCL's NVLS hwLat when the link gives none), or base + 2 fabric steps.
 * With a multi-fidelity table's <in-network> row (efficiency e, measured on
 * the packet tier: docs/fabric.md "Multi-fidelity") SHARP's cap is
 * e x min(R, C), C the slowest rank's host link, instead of R, and its
 * latency the row's more; the plan keeps R for the packet tier's switches
 * (nc_plan.sharp_reduction_bytes_per_s).
 */
#include <math.h>

#include "nccl_tuning.h"
#include "netcoll_internal.h"

/* NVLS when the ranks are one multi-GPU domain, else SHARP. */
static int in_one_domain(const nc_fabric *f, const uint32_t *r, unsigned n)
{
    return nc_count_domains(f, r, n) == 1 && f->domain_size > 1;
}

/* The host's link up to the reduction: its crossbar link (NVLS), or its
 * cable to the first switch, through its shared NIC when it has one
 * (SHARP; *nic_link the GPU's link to that NIC, else UINT32_MAX). */
static uint32_t host_up(const topo_graph *g, uint32_t host, enum topo_node_kind kind,
                        uint32_t *nic_link)
{
    uint32_t nic = UINT32_MAX;
    unsigned sharing;
    uint32_t l = kind == TOPO_SWITCH ? nc_host_fabric_link(g, host, &nic, &sharing)
                                     : nc_host_link(g, host, kind);
    if (nic_link)
        *nic_link = nic;
    return l;
}

static int check(const nc_fabric *f, enum nc_collective coll, const uint32_t *r, unsigned n,
                 sim_error *err)
{
    (void)coll;
    int one_domain = in_one_domain(f, r, n);
    enum topo_node_kind kind = one_domain ? TOPO_SCALEUP : TOPO_SWITCH;
    double cap = one_domain ? f->scaleup_reduction_bytes_per_s : f->fabric_reduction_bytes_per_s;
    if (!(cap > 0))
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "in-network reduction is not available %s (no reduction bandwidth "
                             "for the link technology)",
                             one_domain ? "in this scale-up domain" : "on this fabric");
    for (unsigned i = 0; i < n; i++)
        if (host_up(f->g, r[i], kind, NULL) == UINT32_MAX)
            return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                                 "rank %u (host %u) has no link for in-network reduction", i,
                                 r[i]);
    return 0;
}

static int build(nc_plan *p, const nc_fabric *f, enum nc_collective coll, const uint32_t *r,
                 unsigned n, double bytes)
{
    (void)coll;
    int one_domain = in_one_domain(f, r, n);
    enum topo_node_kind kind = one_domain ? TOPO_SCALEUP : TOPO_SWITCH;
    double cap = one_domain ? f->scaleup_reduction_bytes_per_s : f->fabric_reduction_bytes_per_s;
    /* NVLS without a measured reduction latency: NCCL's NVLS NVLink hwLat
     * (hardware.md 7.3, V), never zero */
    double lat = !one_domain ? f->base_latency_s + 2 * f->inter_step_latency_s
                 : f->scaleup_reduction_latency_s > 0
                     ? f->scaleup_reduction_latency_s
                     : nccl_hw_latency_s(0, NCCL_ALGO_NVLS, NCCL_PROTO_SIMPLE);
    if (!one_domain) {
        p->sharp_reduction_bytes_per_s = cap;
        if (f->sharp_efficiency > 0) { /* the table's: e x the flow tier's bottleneck */
            double c = cap;
            for (unsigned i = 0; i < n; i++) {
                uint32_t up = host_up(f->g, r[i], kind, NULL);
                c = fmin(c, fmin(f->g->link_bytes_per_s[up], f->g->link_bytes_per_s[up ^ 1u]));
            }
            cap = f->sharp_efficiency * c;
            lat += f->sharp_latency_s;
            p->sharp_table_latency_s = f->sharp_latency_s;
        }
    }
    nc_add_phase(p, bytes, lat, cap, 1, NULL, 0);
    for (unsigned i = 0; i < n; i++) {
        uint32_t nic_link;
        uint32_t up = host_up(f->g, r[i], kind, &nic_link);
        nc_add_conn(p, up, NC_FIXED_LINK, 1.0);
        nc_add_conn(p, up ^ 1u, NC_FIXED_LINK, 1.0); /* the reduced data coming back */
        if (nic_link != UINT32_MAX) { /* and the GPU's hop to its shared NIC */
            nc_add_conn(p, nic_link, NC_FIXED_LINK, 1.0);
            nc_add_conn(p, nic_link ^ 1u, NC_FIXED_LINK, 1.0);
        }
    }
    return p->failed ? -1 : 0;
}

const nc_algorithm_type nc_algo_in_network = {
    .name = "in-network",
    .doc = "NVLS inside one node (each GPU sends S to the crossbar and receives S, capped at "
           "the reduction bandwidth); SHARP across nodes (each NIC sends and receives S)",
    .collectives = 1u << NC_ALLREDUCE,
    .check = check,
    .build = build,
};
