/* fabric.c - a cluster network from a fabric_config (see fabric.h): its
 * parts counted without building (the registry's closed forms), or the
 * graph, router and collective parameters built. */
#include "fabric.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scaleup.h"

const char *fabric_topology_name(const topo_kind *t)
{
    return t ? t->name : "?";
}

int fabric_topology_parse(const char *name, const topo_kind **out)
{
    const topo_kind *t = topo_kind_find(name);
    if (!t)
        return -1;
    *out = t;
    return 0;
}

/* What large transfers reach of a rate on link technology l. No silent
 * ideal: a link without an efficiency is refused (link_refused) before any
 * rate is used; the catalog loader fills or refuses it (docs/scenario.md). */
static double effective(const hw_link *l, double rate)
{
    return rate * l->efficiency;
}

/* 0, or SIM_ERR_INPUT naming the link (role: "fabric", "scale-up") when it
 * has no efficiency in (0, 1] */
static int link_refused(const hw_link *l, const char *role, sim_error *err)
{
    if (l->efficiency > 0 && l->efficiency <= 1)
        return 0;
    return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                         "the %s link '%s' has no efficiency in (0, 1] (got %g): give the "
                         "measured fraction of its rate in its catalog <link efficiency>",
                         role, l->name, l->efficiency);
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
    if (g->n_nics && most > 2) /* a shared NIC at each end (nic.h) is no switch hop */
        most -= 2;
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
    nc->inter_wire_latency_s = f->inter_wire_latency_s; /* NCCL's tuner: every step's floor */
    nc->intra_wire_latency_s = f->intra_wire_latency_s;
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
    if (nc->fabric_reduction_bytes_per_s > 0) { /* the table's SHARP row, or 0 */
        nc->sharp_efficiency = c->sharp_efficiency;
        nc->sharp_latency_s = c->sharp_efficiency > 0 ? c->sharp_latency_s : 0;
    }
    nc->channels = c->channels;
    if (c->chunks)
        nc->chunks = c->chunks;
    return 0;
}

/* One buffer size for every reason, the loader's before fabric_count: a
 * long rail-optimised refusal is cut where it always was. */
#define WHY_SIZE 512

int fabric_count(const fabric_config *c, topo_counts *out, sim_error *err)
{
    char why[WHY_SIZE];
    topo_counts n;
    if (!c->gpus)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "a fabric needs at least one GPU");
    if (!(c->link.bytes_per_s > 0))
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "the fabric link rate must be positive");
    if (link_refused(&c->link, "fabric", err) ||
        (c->gpus_per_node > 1 && link_refused(&c->scaleup, "scale-up", err)))
        return SIM_ERR_INPUT;
    if (!c->topology)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "unknown topology");
    int rc = topo_count(c->topology, &c->shape, c->gpus, c->gpus_per_node, &n, why, sizeof why);
    if (!rc && c->gpus_per_node > 1) {
        rc = topo_scaleup_check((uint32_t)n.hosts, c->gpus_per_node,
                                effective(&c->scaleup, c->scaleup_bytes_per_s), why, sizeof why);
        n.scaleup_domains = n.hosts / c->gpus_per_node;
        n.scaleup_cables = n.hosts;
    }
    if (!rc)
        rc = topo_router_check(&c->routing, n.updown, n.groups, why, sizeof why);
    if (rc)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "%s", why);
    *out = n;
    return 0;
}

/* What fabric_count let through can fail only for want of memory. */
static int out_of_memory(fabric *f, sim_error *err, const char *why)
{
    fabric_free(f);
    return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "%s", why);
}

/* A curve that never scales (every efficiency 1) is none: the flow tier
 * then keeps its fast paths. */
static int scales(const flow_curve *c)
{
    for (unsigned i = 0; i < c->n_points; i++)
        if (c->efficiency[i] < 1)
            return 1;
    return 0;
}

/* The per-link curves: incast on switch-to-host links (many-to-one into a
 * receiving NIC), sharing on switch-to-switch links. */
static int link_curves(const fabric_config *c, fabric *f)
{
    f->incast_curve = c->incast_curve;
    f->sharing_curve = c->sharing_curve;
    if (!f->incast_curve.n_points && c->link.incast_efficiency > 0 &&
        c->link.incast_efficiency < 1)
        f->incast_curve = (flow_curve){
            .n_points = 1, .flows = {2}, .efficiency = {c->link.incast_efficiency}};
    int incast = scales(&f->incast_curve), sharing = scales(&f->sharing_curve);
    if (!incast && !sharing)
        return 0;
    f->link_curve = malloc(((size_t)f->g.n_links + 1) * sizeof *f->link_curve);
    f->link_injects = malloc((size_t)f->g.n_links + 1);
    if (!f->link_curve || !f->link_injects)
        return -1;
    for (uint32_t l = 0; l < f->g.n_links; l++) {
        enum topo_node_kind from = f->g.node_kind[f->g.link_src[l]];
        enum topo_node_kind to = f->g.node_kind[f->g.link_dst[l]];
        /* where a sender injects: what it offers the links into hosts and
         * between switches (flow_net_set_incast's demand-weighted fan-in) */
        f->link_injects[l] = from == TOPO_HOST || from == TOPO_NIC;
        int into_nic = to == TOPO_HOST || to == TOPO_NIC; /* shared: nic.h */
        f->link_curve[l] = from != TOPO_SWITCH   ? NULL
                           : into_nic            ? (incast ? &f->incast_curve : NULL)
                           : to == TOPO_SWITCH   ? (sharing ? &f->sharing_curve : NULL)
                                                 : NULL;
    }
    return 0;
}

int fabric_build(const fabric_config *c, fabric *f, sim_error *err)
{
    memset(f, 0, sizeof *f);
    topo_counts parts;
    int rc = fabric_count(c, &parts, err);
    if (rc)
        return rc;
    char why[WHY_SIZE];
    f->gpus = c->gpus;
    f->link_bytes_per_s = effective(&c->link, c->link.bytes_per_s);
    snprintf(f->link_name, sizeof f->link_name, "%s", c->link.name);
    if (topo_build(c->topology, &c->shape, c->gpus, c->gpus_per_node, f->link_bytes_per_s,
                   &f->g, why, sizeof why))
        return out_of_memory(f, err, why);
    if (c->gpus_per_node > 1) {
        f->scaleup_link_bytes_per_s = effective(&c->scaleup, c->scaleup_bytes_per_s);
        if (topo_scaleup_add(&f->g, c->gpus_per_node, f->scaleup_link_bytes_per_s, why,
                             sizeof why))
            return out_of_memory(f, err, why);
    }
    f->routing = c->routing;
    f->router = topo_router_create(&f->g, &c->routing, why, sizeof why);
    if (!f->router)
        return out_of_memory(f, err, why);
    if (!link_curves(c, f) && !collective_parameters(c, f))
        f->scratch = calloc((size_t)f->g.n_links + 1, sizeof *f->scratch);
    f->nc.sim_cache = f->scratch ? nc_sim_cache_create() : NULL;
    if (!f->nc.sim_cache) {
        fabric_free(f);
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory for the fabric");
    }
    f->nc.link_curve = f->link_curve;
    f->nc.link_injects = f->link_injects;
    f->nc.scratch = f->scratch;
    return 0;
}

void fabric_free(fabric *f)
{
    if (!f)
        return;
    nc_sim_cache_destroy(f->nc.sim_cache);
    topo_router_destroy(f->router);
    free(f->link_curve);
    free(f->link_injects);
    free(f->scratch);
    topo_graph_fini(&f->g);
    memset(f, 0, sizeof *f);
}
