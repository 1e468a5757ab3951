/* cluster.c - <cluster>: <gpu type count reserved-memory> (the catalog
 * entry it names) and <fabric> (topology, link, scale-up, the topology's
 * sizes, oversubscription, NICs per node or server, routing, paths,
 * arrangement), its switches and cables counted in closed form
 * (fabric_count), which refuses impossible sizes as building would, without
 * building.
 */
#include "loader.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <libxml/tree.h>

#include "dragonfly.h"

#define MAX_GPUS 1e12 /* beyond any machine: the resource guard (resources.h) refuses what will not fit */

/* a link technology by name for <fabric link> or <fabric scale-up> */
static int fabric_link(loader *ld, xmlNode *n, const char *attr, const char *name, hw_link *out)
{
    const hw_link *l = find_named(ld, CAT_LINK, name);
    if (!l) {
        char known[1024];
        entry_names(ld, CAT_LINK, known, sizeof known);
        return node_error(ld, n, attr, "unknown link technology; known: %s", known);
    }
    *out = *l;
    return 0;
}

/* oversubscription="3:1" (a leaf's down and up port shares) and
 * spine-oversubscription="7:1" (a pod spine's leaf and core port shares) */
static int parse_ratio(loader *ld, xmlNode *n, const char *attr, unsigned *down, unsigned *up)
{
    if (!has_attr(n, attr))
        return 0;
    char text[64];
    copy_attr(n, attr, text, sizeof text);
    unsigned d = 0, u = 0;
    char tail;
    if (sscanf(text, "%u:%u%c", &d, &u, &tail) != 2 || !d || !u || d > 1000 || u > 1000)
        return node_error(ld, n, attr,
                          "expected DOWN:UP with whole numbers from 1 to 1000, e.g. 3:1");
    *down = d;
    *up = u;
    return 0;
}

static int parse_oversubscription(loader *ld, xmlNode *n, fabric_config *c)
{
    int rc = parse_ratio(ld, n, "oversubscription", &c->shape.over_down, &c->shape.over_up);
    return rc ? rc : parse_ratio(ld, n, "spine-oversubscription", &c->shape.spine_over_down,
                                 &c->shape.spine_over_up);
}

/* the attributes the topology needs (its registry entry, topologies/topology.h) */
static int fabric_required(loader *ld, xmlNode *n, const topo_kind *t)
{
    for (const char *const *a = t->required; *a; a++)
        if (!has_attr(n, *a))
            return node_error(ld, n, NULL, "topology=\"%s\" needs attribute '%s'", t->name, *a);
    return 0;
}

/* gpus-per-node, the topology numbers (topo_shape_attrs, read whatever the
 * topology), qps, channels, chunks, oversubscription */
static int parse_fabric_numbers(loader *ld, xmlNode *n, fabric_config *c)
{
    int rc = get_uint(ld, n, "gpus-per-node", 0, 1, 4096, &c->gpus_per_node);
    for (const topo_shape_attr *a = topo_shape_attrs; !rc && a->name; a++)
        rc = get_uint(ld, n, a->name, 0, a->min, a->max,
                      (unsigned *)(void *)((char *)&c->shape + a->offset));
    struct { const char *attr; unsigned min, max; unsigned *out; } nums[] = {
        {"qps", 1, 1024, &c->routing.qps}, {"channels", 1, 64, &c->channels},
        {"chunks", 1, 1024, &c->chunks},
    };
    for (size_t i = 0; !rc && i < sizeof nums / sizeof nums[0]; i++)
        rc = get_uint(ld, n, nums[i].attr, 0, nums[i].min, nums[i].max, nums[i].out);
    return rc ? rc : parse_oversubscription(ld, n, c);
}

/* the text attributes only this topology reads (topo_kind.attrs: dims) */
static int parse_topology_attrs(loader *ld, xmlNode *n, fabric_config *c)
{
    for (const topo_text_attr *a = c->topology->attrs; a && a->name; a++) {
        xmlChar *v = xmlGetProp(n, (const xmlChar *)a->name);
        char why[256];
        int rc = v && a->parse((const char *)v, &c->shape, why, sizeof why);
        xmlFree(v);
        if (rc)
            return node_error(ld, n, a->name, "%s", why);
    }
    return 0;
}

/* server="DGX-A100": the server's NICs (servers.xml) set nics-per-node,
 * which an explicit nics-per-node overrides; its GPU type must be the
 * cluster's and its NIC rate the fabric link's */
static int fabric_server(loader *ld, xmlNode *n, const scn_scenario *s, fabric_config *c)
{
    if (!has_attr(n, "server"))
        return 0;
    char name[128];
    copy_attr(n, "server", name, sizeof name);
    const hw_server *sv = find_named(ld, CAT_SERVER, name);
    if (!sv) {
        char known[1024];
        entry_names(ld, CAT_SERVER, known, sizeof known);
        return node_error(ld, n, "server", "unknown server; known: %s", known);
    }
    if (strcmp(sv->gpu, s->gpu.name))
        return node_error(ld, n, "server", "server %s holds %s GPUs, the cluster %s", sv->name,
                          sv->gpu, s->gpu.name);
    if (sv->nic_bytes_per_s > 0 &&
        fabs(sv->nic_bytes_per_s - c->link.bytes_per_s) > 0.01 * sv->nic_bytes_per_s)
        return node_error(ld, n, "server", "server %s has %g Gb/s NICs, link %s runs at %g Gb/s: "
                          "name a link at the NICs' rate", sv->name, sv->nic_bytes_per_s * 8e-9,
                          c->link.name, c->link.bytes_per_s * 8e-9);
    if (has_attr(n, "nics-per-node") || !sv->gpus || !sv->nics)
        return 0;
    unsigned long long per_node = c->gpus_per_node > 1 ? c->gpus_per_node : 1;
    if (per_node * sv->nics % sv->gpus)
        return node_error(ld, n, "server", "server %s has %u NICs for %u GPUs: a node of %llu "
                          "GPUs would have %llu x %u / %u NICs, not whole", sv->name, sv->nics,
                          sv->gpus, per_node, per_node, sv->nics, sv->gpus);
    c->shape.nics_per_node = (unsigned)(per_node * sv->nics / sv->gpus);
    return 0;
}

/* <cluster><fabric>: the network (docs/fabric.md). Its parts are counted
 * here in closed form (fabric_count, refusing what fabric_build would) so
 * that impossible sizes are refused at load time with the element's line. */
int parse_fabric(loader *ld, xmlNode *n, scn_scenario *s)
{
    fabric_config *c = &s->fabric;
    memset(c, 0, sizeof *c);
    char text[128];
    copy_attr(n, "topology", text, sizeof text);
    if (fabric_topology_parse(text, &c->topology)) /* the schema allows only known names */
        return node_error(ld, n, "topology", "unknown topology");
    int rc = fabric_required(ld, n, c->topology);
    if (!rc) {
        copy_attr(n, "link", text, sizeof text);
        rc = fabric_link(ld, n, "link", text, &c->link);
    }
    c->gpus_per_node = s->gpu.scaleup_domain ? s->gpu.scaleup_domain : 1;
    c->shape.nodes_per_su = 32; /* DGX SuperPOD scalable unit (hardware.md 6.2, V) */
    c->routing.qps = 1;
    c->routing.seed = s->seed;
    c->routing.balance = c->link.routing == HW_ROUTING_ECMP    ? TOPO_BALANCE_ECMP
                         : c->link.routing == HW_ROUTING_SPRAY ? TOPO_BALANCE_SPRAY
                                                               : TOPO_BALANCE_ADAPTIVE;
    if (!rc)
        rc = parse_fabric_numbers(ld, n, c);
    if (!rc)
        rc = get_fraction(ld, n, "incast-efficiency", &c->link.incast_efficiency);
    if (!rc)
        rc = parse_fidelity(ld, n, c, s->fidelity_source, sizeof s->fidelity_source);
    if (!rc)
        rc = parse_topology_attrs(ld, n, c);
    if (rc)
        return rc;
    if (has_attr(n, "routing")) {
        copy_attr(n, "routing", text, sizeof text);
        topo_balance_parse(text, &c->routing.balance);
    }
    if (has_attr(n, "paths")) {
        copy_attr(n, "paths", text, sizeof text);
        topo_path_class_parse(text, &c->routing.path_class);
    }
    if (has_attr(n, "arrangement")) {
        copy_attr(n, "arrangement", text, sizeof text);
        enum topo_dragonfly_arrangement arr = TOPO_DF_ABSOLUTE; /* the schema's words only */
        topo_dragonfly_arrangement_parse(text, &arr);
        c->shape.arrangement = (int)arr;
    }
    if (c->gpus_per_node > 1) {
        if (has_attr(n, "scale-up"))
            copy_attr(n, "scale-up", text, sizeof text);
        else
            snprintf(text, sizeof text, "%s", s->gpu.scaleup_kind);
        if (!text[0])
            return node_error(ld, n, "scale-up", "GPU type %s has no scale-up link in the "
                              "catalog: name one, e.g. scale-up=\"nvlink4\", or set "
                              "gpus-per-node=\"1\"", s->gpu.name);
        rc = fabric_link(ld, n, "scale-up", text, &c->scaleup);
        if (rc)
            return rc;
        c->scaleup_bytes_per_s = s->gpu.scaleup_bytes_per_s > 0 ? s->gpu.scaleup_bytes_per_s
                                                                : c->scaleup.bytes_per_s;
    }
    rc = fabric_server(ld, n, s, c);
    if (rc)
        return rc;
    if (s->campaign.gpu_count > UINT32_MAX / 2)
        return node_error(ld, n, NULL, "%llu GPUs: too many for a fabric",
                          (unsigned long long)s->campaign.gpu_count);
    c->gpus = (unsigned)s->campaign.gpu_count;
    topo_counts parts;
    sim_error err;
    sim_error_clear(&err);
    if (fabric_count(c, &parts, &err))
        return node_error(ld, n, NULL, "%s", err.msg);
    for (int t = 0; t <= 4; t++) {
        s->fabric_switches[t] = parts.switches[t];
        s->fabric_cables[t] = parts.cables[t];
    }
    /* fabric_fault.h nic=ID: shared NIC nodes, else the GPUs' own ports (host r
     * = GPU r; a builder's spare host ports carry no GPU, so no NIC) */
    s->fabric_nics = parts.nics ? parts.nics : (parts.hosts < c->gpus ? parts.hosts : c->gpus);
    s->has_fabric = 1;
    return 0;
}

int parse_cluster(loader *ld, xmlNode *root, scn_scenario *s)
{
    xmlNode *gpu = child(child(root, "cluster"), "gpu");
    char type[128];
    copy_attr(gpu, "type", type, sizeof type);
    hw_gpu *g = find_named(ld, CAT_GPU, type);
    if (!g) {
        char known[1024];
        entry_names(ld, CAT_GPU, known, sizeof known);
        return node_error(ld, gpu, "type",
                          "unknown GPU type; known types: %s (add one in <catalog>)", known);
    }
    s->gpu = *g;
    double count = 0;
    int rc = get_quantity(ld, gpu, "count", SIM_DIM_COUNT, 1, &count);
    if (!rc)
        rc = whole(ld, gpu, "count", count);
    if (!rc)
        rc = positive(ld, gpu, "count", count, MAX_GPUS, " GPUs");
    if (!rc) /* in range only now: the cast of a refused count is undefined */
        s->campaign.gpu_count = (uint64_t)count;
    if (!rc)
        rc = get_quantity(ld, gpu, "reserved-memory", SIM_DIM_DATA, 0, &s->reserved_bytes);
    if (!rc)
        rc = non_negative(ld, gpu, "reserved-memory", s->reserved_bytes);
    xmlNode *fabric_node = child(child(root, "cluster"), "fabric");
    if (!rc && fabric_node)
        rc = parse_fabric(ld, fabric_node, s);
    return rc;
}
