/* fabric.c - build a cluster network from a fabric_config (see fabric.h). */
#include "fabric.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dragonfly.h"
#include "fattree.h"
#include "scaleup.h"

#define FAIL(...) return (why && why_size ? snprintf(why, why_size, __VA_ARGS__) : 0), -1

static const char *const topology_names[] = {"fat-tree", "leaf-spine", "rail-optimized",
                                             "dragonfly", "dragonfly-plus"};

const char *fabric_topology_name(int t)
{
    return t >= 0 && t < FABRIC_TOPOLOGY_COUNT ? topology_names[t] : "?";
}

int fabric_topology_parse(const char *name, enum fabric_topology *out)
{
    for (int i = 0; i < FABRIC_TOPOLOGY_COUNT; i++)
        if (!strcmp(name, topology_names[i]))
            return *out = (enum fabric_topology)i, 0;
    return -1;
}

static double effective(const hw_link *l, double rate)
{
    return rate * (l->efficiency > 0 ? l->efficiency : 1.0);
}

static int build_leafspine(const fabric_config *c, double bw, topo_graph *g, char *why,
                           size_t why_size)
{
    unsigned R = c->radix, d = c->over_down ? c->over_down : 1, u = c->over_up ? c->over_up : 1;
    if (R < 2)
        FAIL("a leaf-spine needs radix >= 2, got %u", R);
    if ((unsigned long long)R * d % (d + u))
        FAIL("oversubscription %u:%u splits radix %u into %u x %u / %u host ports: not whole",
             d, u, R, R, d, d + u);
    unsigned down = (unsigned)((unsigned long long)R * d / (d + u));
    if (!down || down >= R)
        FAIL("oversubscription %u:%u leaves a radix-%u leaf with %u host and %u up ports", d, u,
             R, down, R - down);
    unsigned leaves = (c->gpus + down - 1) / down;
    if (c->gpus_per_node > 1 && down % c->gpus_per_node)
        FAIL("a leaf's %u host ports are not a whole number of %u-GPU nodes", down,
             c->gpus_per_node);
    if (c->tiers != 3 && leaves <= R && c->tiers <= 2)
        return topo_leafspine(R, leaves, down, bw, g, why, why_size);
    if (c->tiers == 2)
        FAIL("%u GPUs need %u leaves of %u host ports, more than the %u a 2-tier leaf-spine of "
             "radix %u reaches: use tiers=\"3\"", c->gpus, leaves, down, R, R);
    unsigned per_pod = R / 2, pods = (leaves + per_pod - 1) / per_pod;
    return topo_leafspine3(R, pods, per_pod, down, bw, g, why, why_size);
}

/* k SUs and every larger count fail in topo_railopt (topologies/fattree.c):
 * a radix or SU size no count cures, over its 2^29-GPU cap, a third tier
 * with an odd radix, or a fourth tier (railopt_three_tiers: rails x
 * ceil(k / min(k, R/2)) spine groups over the R core ports, which only grows
 * with k). build_railopt stops its search there: trying every count up to
 * 4 x SUs took minutes for 2^28 GPUs in 1-node SUs (found while fuzzing the
 * loader: tests/fuzz/regressions/fuzz_scenario/hang-railopt-search-2p28-gpus.xml). */
static int railopt_past_reach(unsigned k, unsigned per_su, unsigned rails, unsigned radix)
{
    if (radix < 2 || radix > 4096 || per_su >= radix) /* no count of SUs helps */
        return 1;
    if ((double)k * per_su * rails * 4 > 2147483647.0)
        return 1;
    if ((double)k * rails <= radix)
        return 0; /* two tiers */
    if (radix % 2)
        return 1; /* a third tier needs an even radix */
    double most = k < radix / 2 ? k : radix / 2;
    return rails * ceil(k / most) > radix;
}

static int build_railopt(const fabric_config *c, double bw, topo_graph *g, char *why,
                         size_t why_size)
{
    unsigned rails = c->gpus_per_node > 1 ? c->gpus_per_node : 1;
    unsigned per_su = c->nodes_per_su;
    if (c->gpus % rails)
        FAIL("%u GPUs are not a whole number of %u-GPU nodes", c->gpus, rails);
    unsigned nodes = c->gpus / rails;
    if (!per_su)
        FAIL("nodes-per-su must be at least 1");
    /* whole SUs, rounded up to the first count the builder can cable evenly
     * (its spine and core arithmetic needs e.g. 4 or 8 SUs, not 3 or 6); the
     * ports beyond the GPUs stay idle */
    unsigned sus = (nodes + per_su - 1) / per_su;
    char first[512] = "";
    for (unsigned k = sus; k <= 4 * sus + 4; k++) {
        char w[512];
        if (!topo_railopt(k, per_su, rails, c->radix, bw, g, w, sizeof w))
            return 0;
        if (!first[0])
            snprintf(first, sizeof first, "%s", w);
        if (railopt_past_reach(k, per_su, rails, c->radix))
            break;
    }
    FAIL("%s (and no larger count of up to 4 x %u + 4 SUs could be cabled either)", first, sus);
}

static int build_dragonfly(const fabric_config *c, double bw, topo_graph *g, char *why,
                           size_t why_size)
{
    if (c->topology == FABRIC_DRAGONFLY) {
        topo_dragonfly_config d = {.p = c->p, .a = c->a, .h = c->h, .groups = c->groups,
                                   .host_bytes_per_s = bw, .local_bytes_per_s = bw,
                                   .global_bytes_per_s = bw,
                                   .arrangement = (enum topo_dragonfly_arrangement)c->arrangement};
        if (topo_dragonfly(&d, g, why, why_size))
            return -1;
    } else {
        topo_dragonfly_plus_config d = {
            .p = c->p, .leaves = c->leaves, .spines = c->spines, .h = c->h, .groups = c->groups,
            .radix = c->radix, .host_bytes_per_s = bw, .local_bytes_per_s = bw,
            .global_bytes_per_s = bw,
            .arrangement = (enum topo_dragonfly_arrangement)c->arrangement};
        if (topo_dragonfly_plus(&d, g, why, why_size))
            return -1;
    }
    if (g->n_hosts < c->gpus) {
        unsigned have = g->n_hosts, per_group = c->topology == FABRIC_DRAGONFLY ? c->a : c->leaves;
        topo_graph_fini(g);
        FAIL("the %s has %s x hosts-per-router x groups = %u x %u x %u = %u host ports, fewer "
             "than the %u GPUs", fabric_topology_name(c->topology),
             c->topology == FABRIC_DRAGONFLY ? "routers-per-group" : "leaves-per-group",
             per_group, c->p, have / (per_group * c->p), have, c->gpus);
    }
    return 0;
}

static int build_graph(const fabric_config *c, double bw, topo_graph *g, char *why,
                       size_t why_size)
{
    switch (c->topology) {
    case FABRIC_FAT_TREE: {
        double ports = (double)c->k * c->k * c->k / 4;
        if (topo_fattree_kary(c->k, bw, g, why, why_size))
            return -1;
        if (ports < c->gpus) {
            topo_graph_fini(g);
            FAIL("a k = %u fat-tree has k^3/4 = %.0f host ports, fewer than the %u GPUs", c->k,
                 ports, c->gpus);
        }
        return 0;
    }
    case FABRIC_LEAF_SPINE:
        return build_leafspine(c, bw, g, why, why_size);
    case FABRIC_RAIL_OPTIMIZED:
        return build_railopt(c, bw, g, why, why_size);
    case FABRIC_DRAGONFLY:
    case FABRIC_DRAGONFLY_PLUS:
        return build_dragonfly(c, bw, g, why, why_size);
    default:
        FAIL("unknown topology");
    }
}

/* The most switches on a shortest path from host 0 to a host of another
 * scale-up domain (one breadth-first search; fabrics are symmetric enough
 * that host 0 sees the diameter), or -1 when out of memory. */
static long cross_domain_switch_hops(const topo_graph *g)
{
    if (g->n_hosts < 2)
        return 0;
    uint32_t *dist = malloc((size_t)g->n_nodes * sizeof *dist);
    if (!dist || topo_graph_hops_from(g, 0, dist)) {
        free(dist);
        return -1;
    }
    uint32_t most = 0;
    for (uint32_t h = 1; h < g->n_hosts; h++)
        if (dist[h] != UINT32_MAX && dist[h] > most &&
            (g->node_group[h] == TOPO_NO_GROUP || g->node_group[h] != g->node_group[0]))
            most = dist[h];
    free(dist);
    return most > 1 ? (long)most - 1 : 0; /* links host..host cross links - 1 switches */
}

/* The collective parameters: NCCL's defaults, the technologies' step
 * latencies where given, and in-network reduction where the hardware has it
 * (NVLS needs a measured reduction efficiency; SHARP without one runs at the
 * link's effective rate, a documented default).
 *
 * A step can never be faster than its wire: send NIC + the switch hops of
 * the longest cross-domain path + receive NIC (hardware.md 3.5). NCCL's
 * per-step latency (hwLat, microseconds) already contains a typical wire
 * (hundreds of ns per hop), so the wire only decides where it is longer:
 * slow switches, many hops, long cables given as switch latency. Inside a
 * scale-up domain the path is NIC, one crossbar hop, NIC. Returns 0, or -1
 * when out of memory. */
static int collective_parameters(const fabric_config *c, fabric *f)
{
    nc_fabric *nc = &f->nc;
    nc_fabric_defaults(nc);
    nc->g = &f->g;
    nc->router = f->router;
    nc->domain_size = c->gpus_per_node > 1 ? c->gpus_per_node : 0;
    if (c->scaleup.step_latency_s > 0)
        nc->intra_step_latency_s = c->scaleup.step_latency_s;
    if (c->link.step_latency_s > 0)
        nc->inter_step_latency_s = c->link.step_latency_s;
    long hops = cross_domain_switch_hops(&f->g);
    if (hops < 0)
        return -1;
    f->inter_wire_latency_s = 2 * c->link.nic_latency_s + (double)hops * c->link.switch_latency_s;
    f->intra_wire_latency_s =
        nc->domain_size ? 2 * c->scaleup.nic_latency_s + c->scaleup.switch_latency_s : 0;
    if (f->inter_wire_latency_s > nc->inter_step_latency_s)
        nc->inter_step_latency_s = f->inter_wire_latency_s;
    if (f->intra_wire_latency_s > nc->intra_step_latency_s)
        nc->intra_step_latency_s = f->intra_wire_latency_s;
    if (nc->domain_size && c->scaleup.has_in_network_reduction &&
        c->scaleup.reduction_efficiency > 0) {
        nc->scaleup_reduction_bytes_per_s = c->scaleup_bytes_per_s * c->scaleup.reduction_efficiency;
        nc->scaleup_reduction_latency_s = c->scaleup.reduction_latency_s;
    }
    if (c->link.has_in_network_reduction)
        nc->fabric_reduction_bytes_per_s =
            c->link.bytes_per_s * (c->link.reduction_efficiency > 0 ? c->link.reduction_efficiency
                                   : c->link.efficiency > 0       ? c->link.efficiency
                                                                  : 1.0);
    nc->channels = c->channels;
    if (c->chunks)
        nc->chunks = c->chunks;
    return 0;
}

int fabric_build(const fabric_config *c, fabric *f, char *why, size_t why_size)
{
    memset(f, 0, sizeof *f);
    if (!c->gpus)
        FAIL("a fabric needs at least one GPU");
    f->gpus = c->gpus;
    f->link_bytes_per_s = effective(&c->link, c->link.bytes_per_s);
    if (!(f->link_bytes_per_s > 0))
        FAIL("the fabric link rate must be positive");
    topo_graph plane;
    if (build_graph(c, f->link_bytes_per_s, &plane, why, why_size))
        return -1;
    if (c->planes > 1) {
        int rc = topo_multiplane(&plane, c->planes, &f->g, why, why_size);
        topo_graph_fini(&plane);
        if (rc)
            return -1;
    } else {
        f->g = plane;
    }
    if (c->gpus_per_node > 1) {
        f->scaleup_link_bytes_per_s = effective(&c->scaleup, c->scaleup_bytes_per_s);
        if (topo_scaleup_add(&f->g, c->gpus_per_node, f->scaleup_link_bytes_per_s, why,
                             why_size)) {
            fabric_free(f);
            return -1;
        }
    }
    char rwhy[256];
    f->router = topo_router_create(&f->g, &c->routing, rwhy, sizeof rwhy);
    if (!f->router) {
        fabric_free(f);
        FAIL("%s", rwhy);
    }
    if (c->link.incast_efficiency > 0 && c->link.incast_efficiency < 1) {
        f->incast_efficiency = malloc(((size_t)f->g.n_links + 1) * sizeof *f->incast_efficiency);
        if (!f->incast_efficiency) {
            fabric_free(f);
            FAIL("out of memory for the fabric");
        }
        for (uint32_t l = 0; l < f->g.n_links; l++) /* many-to-one into a receiving NIC */
            f->incast_efficiency[l] = f->g.node_kind[f->g.link_src[l]] == TOPO_SWITCH &&
                                              f->g.node_kind[f->g.link_dst[l]] == TOPO_HOST
                                          ? c->link.incast_efficiency
                                          : 1.0;
    }
    if (collective_parameters(c, f)) {
        fabric_free(f);
        FAIL("out of memory for the fabric");
    }
    f->nc.incast_efficiency = f->incast_efficiency;
    f->scratch = calloc((size_t)f->g.n_links + 1, sizeof *f->scratch);
    if (!f->scratch) {
        fabric_free(f);
        FAIL("out of memory for the fabric");
    }
    f->nc.scratch = f->scratch;
    return 0;
}

void fabric_free(fabric *f)
{
    if (!f)
        return;
    topo_router_destroy(f->router);
    free(f->incast_efficiency);
    free(f->scratch);
    topo_graph_fini(&f->g);
    memset(f, 0, sizeof *f);
}
