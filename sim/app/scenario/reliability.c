/* reliability.c - <reliability>: inventory (causes from the built-in
 * failures.xml), <failure> (component, rate or mtbf, distribution, cause,
 * detection, tier), <restart>, <spares>, <maintenance>, <stragglers> and
 * scale, into the campaign's causes and rates.
 */
#include "loader.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>

#include "fabric_fault.h"
#include "failure_process.h"

extern const unsigned char dcsim_catalog_failures[];
extern const size_t dcsim_catalog_failures_len;

/* The named cause in c, or a new one (NULL when the list is full). */
static campaign_cause *cause_slot(campaign_config *c, const char *name)
{
    for (unsigned i = 0; i < c->n_causes; i++)
        if (!strcmp(c->causes[i].name, name))
            return &c->causes[i];
    if (c->n_causes == CAMPAIGN_MAX_CAUSES)
        return NULL;
    campaign_cause *x = &c->causes[c->n_causes++];
    memset(x, 0, sizeof *x);
    snprintf(x->name, sizeof x->name, "%s", name);
    return x;
}

/* <reliability inventory="NAME">: the causes of scenarios/catalog/
 * failures.xml's inventory, each count / (units x days) as a rate per unit */
static int load_inventory(loader *ld, xmlNode *rel, scn_scenario *s)
{
    campaign_config *c = &s->campaign;
    char want[64];
    copy_attr(rel, "inventory", want, sizeof want);
    xmlDoc *doc = scn_read_xml(NULL, (const char *)dcsim_catalog_failures,
                               dcsim_catalog_failures_len, "failures.xml", ld->err);
    if (!doc)
        return ld->err ? ld->err->code : SIM_ERR_NOMEM;
    xmlNode *root = doc ? xmlDocGetRootElement(doc) : NULL;
    char known[256] = "";
    size_t used = 0;
    xmlNode *inv = NULL;
    for (xmlNode *n = root ? root->children : NULL; n; n = n->next) {
        if (n->type != XML_ELEMENT_NODE)
            continue;
        char name[64];
        copy_attr(n, "name", name, sizeof name);
        used += (size_t)snprintf(known + used, used < sizeof known ? sizeof known - used : 0,
                                 "%s%s", used ? ", " : "", name);
        if (!strcmp(name, want))
            inv = n;
    }
    if (!inv) {
        xmlFreeDoc(doc);
        return node_error(ld, rel, "inventory", "unknown failure inventory; known: %s", known);
    }
    char text[64];
    copy_attr(inv, "gpus", text, sizeof text);
    double gpus = atof(text);
    copy_attr(inv, "nodes", text, sizeof text);
    double nodes = atof(text);
    copy_attr(inv, "days", text, sizeof text);
    double seconds = atof(text) * 86400;
    for (xmlNode *n = inv->children; n; n = n->next) {
        if (n->type != XML_ELEMENT_NODE)
            continue;
        char name[48];
        copy_attr(n, "name", name, sizeof name);
        campaign_cause *x = cause_slot(c, name);
        if (!x) {
            xmlFreeDoc(doc);
            return node_error(ld, rel, "inventory", "more than %d failure causes",
                              CAMPAIGN_MAX_CAUSES);
        }
        copy_attr(n, "category", x->category, sizeof x->category);
        copy_attr(n, "unit", text, sizeof text);
        int per_cable = !strcmp(text, "cable");
        x->unit = !strcmp(text, "node") ? CAMPAIGN_UNIT_NODE : CAMPAIGN_UNIT_GPU;
        copy_attr(n, "count", text, sizeof text);
        double count = atof(text);
        x->rate_per_s = count / ((x->unit == CAMPAIGN_UNIT_NODE ? nodes : gpus) * seconds);
        uint64_t fabric_cables = 0;
        for (int t = 0; t <= 4; t++)
            fabric_cables += s->fabric_cables[t];
        if (per_cable && s->has_fabric && fabric_cables) {
            /* the published count over the published run's cables, then this
             * fabric's cables: a fabric with more cables fails more often */
            copy_attr(inv, "cables", text, sizeof text);
            x->unit = CAMPAIGN_UNIT_CABLE;
            x->parts = fabric_cables;
            x->rate_per_s = count / (atof(text) * seconds);
        } /* without a fabric: per GPU, as the published run's cables grew with its GPUs */
    }
    xmlFreeDoc(doc);
    return 0;
}

/* rate="..." or mtbf="..." of a <failure>, per component */
static int failure_rate(loader *ld, xmlNode *failure, double *rate)
{
    int has_rate = has_attr(failure, "rate"), has_mtbf = has_attr(failure, "mtbf");
    if (has_rate == has_mtbf)
        return node_error(ld, failure, NULL,
                          "give exactly one of rate (per component, e.g. \"2e-5/h\") "
                          "or mtbf (per component, e.g. \"50000h\")");
    if (has_rate) {
        int rc = get_quantity(ld, failure, "rate", SIM_DIM_FREQUENCY, 1, rate);
        return rc ? rc : non_negative(ld, failure, "rate", *rate);
    }
    double mtbf = 0;
    int rc = get_quantity(ld, failure, "mtbf", SIM_DIM_TIME, 1, &mtbf);
    if (!rc)
        rc = positive(ld, failure, "mtbf", mtbf, INFINITY, "");
    *rate = rc ? 0 : 1.0 / mtbf;
    return rc;
}

/* <restart time="10min"/>, or its parts: detection (health-check period or
 * collective timeout) + teardown + launch + launch-per-1000-gpus x GPUs /
 * 1000 (job launch and rendezvous grow with the job); <checkpoint
 * storage-read> adds the checkpoint load */
static int parse_restart(loader *ld, xmlNode *restart, campaign_config *c)
{
    static const char *const parts[] = {"detection", "teardown", "launch",
                                        "launch-per-1000-gpus"};
    int has_parts = 0;
    for (int i = 0; i < 4; i++)
        has_parts |= has_attr(restart, parts[i]);
    if (has_attr(restart, "time") == has_parts)
        return node_error(ld, restart, NULL, "give time, or its parts (detection, teardown, "
                          "launch, launch-per-1000-gpus), not both");
    /* detection drawn per failure: a health check's period, a timeout */
    static const char *const drawn[] = {"health-check", "collective-timeout"};
    double *drawn_to[] = {&c->health_check_s, &c->collective_timeout_s};
    for (int i = 0; i < 2; i++) {
        if (!has_attr(restart, drawn[i]))
            continue;
        if (has_attr(restart, "detection"))
            return node_error(ld, restart, drawn[i], "give detection (a fixed delay) or "
                              "health-check and collective-timeout (drawn per failure), "
                              "not both");
        int rc = get_quantity(ld, restart, drawn[i], SIM_DIM_TIME, 1, drawn_to[i]);
        if (!rc)
            rc = positive(ld, restart, drawn[i], *drawn_to[i], INFINITY, "");
        if (rc)
            return rc;
    }
    if (!has_parts) {
        int rc = get_quantity(ld, restart, "time", SIM_DIM_TIME, 1, &c->restart_s);
        return rc ? rc : non_negative(ld, restart, "time", c->restart_s);
    }
    c->restart_s = 0;
    for (int i = 0; i < 4; i++) {
        double x = 0;
        int rc = get_quantity(ld, restart, parts[i], SIM_DIM_TIME, 0, &x);
        if (!rc)
            rc = non_negative(ld, restart, parts[i], x);
        if (rc)
            return rc;
        c->restart_s += i == 3 ? x * (double)c->gpu_count / 1000 : x;
    }
    return 0;
}

/* component="switch" or "cable": how many the fabric has in tier="..."
 * (switches 1..4, 1 = the host-facing leaves; cables 0..4, 0 = host
 * cables, t = switch-to-switch up from tier t) or in all tiers;
 * component="nic": its NICs (shared NIC nodes, else each GPU's own port),
 * no tier */
static int network_parts(loader *ld, xmlNode *f, const scn_scenario *s, const char *what,
                         uint64_t *out, int *tier)
{
    *tier = -1;
    int sw = !strcmp(what, "switch"), nic = !strcmp(what, "nic");
    const char *whats = sw ? "switches" : nic ? "NICs" : "cables";
    if (!s->has_fabric)
        return node_error(ld, f, "component", "%s failures need <cluster><fabric>: the %s "
                          "are counted from it", what, whats);
    if (nic) {
        if (has_attr(f, "tier"))
            return node_error(ld, f, "tier", "NICs have no tier (tier belongs to "
                              "component=\"switch\" or component=\"cable\")");
        *out = s->fabric_nics;
        return *out ? 0 : node_error(ld, f, "component", "the fabric has no NICs");
    }
    const uint64_t *per_tier = sw ? s->fabric_switches : s->fabric_cables;
    char text[16];
    copy_attr(f, "tier", text, sizeof text);
    uint64_t n = 0;
    if (!text[0] || !strcmp(text, "all")) {
        for (int t = 0; t <= 4; t++)
            n += per_tier[t];
    } else {
        char *end = NULL;
        long t = strtol(text, &end, 10);
        if (*end || t < (sw ? 1 : 0) || t > 4)
            return node_error(ld, f, "tier", "tier must be \"all\" or %s",
                              sw ? "1 to 4 (1: the host-facing leaves)"
                                 : "0 to 4 (0: host cables; t: switch to switch up from tier t)");
        n = per_tier[t];
        *tier = (int)t;
    }
    if (!n)
        return node_error(ld, f, "tier", "the fabric has no %s there", whats);
    *out = n;
    return 0;
}

/* component="transceiver" [tier] [cage-ports]: the transceiver cages of
 * the fabric's switches in tier="..." (1 to 4) or all, or of its servers
 * (tier="0": host-side, cage-ports required), counted on the
 * fabric built (ff_transceivers: the cage rule and the catalog's port
 * form, docs/failures.md "Transceivers"); every transceiver <failure> has
 * the same cage-ports */
static int transceiver_parts(loader *ld, xmlNode *f, scn_scenario *s, uint64_t *out,
                             int *tier)
{
    *tier = -1;
    if (!s->has_fabric)
        return node_error(ld, f, "component", "transceiver failures need <cluster><fabric>: "
                          "the cages are counted from it");
    unsigned cp = 0;
    if (has_attr(f, "cage-ports")) {
        int rc = get_uint(ld, f, "cage-ports", 1, 2, FF_CAGE_PORTS_MAX, &cp);
        if (rc)
            return rc;
    }
    if (s->campaign.cage_ports_set && cp != s->campaign.cage_ports) {
        char was[16] = "none", now[16] = "none"; /* none: the catalog's */
        if (s->campaign.cage_ports)
            snprintf(was, sizeof was, "%u", s->campaign.cage_ports);
        if (cp)
            snprintf(now, sizeof now, "%u", cp);
        return node_error(ld, f, "cage-ports", "every transceiver <failure> takes the same "
                          "cage-ports (an earlier one gave %s, this one %s)", was, now);
    }
    s->campaign.cage_ports = cp;
    s->campaign.cage_ports_set = 1;
    char text[16];
    copy_attr(f, "tier", text, sizeof text);
    if (text[0] && strcmp(text, "all")) {
        char *end = NULL;
        long t = strtol(text, &end, 10);
        if (*end || t < 0 || t > 4)
            return node_error(ld, f, "tier", "tier must be \"all\" or 0 to 4 (the switches "
                              "whose cages fail, 1: the host-facing leaves; 0: the servers' "
                              "host-side cages)");
        *tier = (int)t;
    }
    fabric fb;
    sim_error e;
    sim_error_clear(&e);
    if (fabric_build(&s->fabric, &fb, &e))
        return node_error(ld, f, NULL, "%s", e.msg);
    int rc = ff_transceivers(&fb, cp, *tier, NULL, out, &e);
    fabric_free(&fb);
    if (rc)
        return rc == SIM_ERR_NOMEM ? sim_error_set(ld->err, SIM_ERR_NOMEM, NULL, 0, "%s", e.msg)
                                   : node_error(ld, f, cp ? "cage-ports" : "component", "%s",
                                                e.msg);
    return *out ? 0 : node_error(ld, f, "tier", "the fabric has no %s there",
                                 *tier ? "switches" : "host ports");
}

/* what a <failure component distribution> names */
typedef struct failure_kind {
    int node, rack, sw, cable, nic, xcvr, weibull; /* node is also set for a rack */
    unsigned process;                   /* failure_process.h: the XSD names only these */
} failure_kind;

/* a named (or non-GPU, Weibull or silent) <failure>: its cause in the
 * campaign's list, created or updated */
static int add_cause(loader *ld, xmlNode *f, campaign_config *c, const failure_kind *k,
                     double rate, uint64_t parts, double shape, campaign_cause **added)
{
    char name[48];
    if (has_attr(f, "cause"))
        copy_attr(f, "cause", name, sizeof name);
    else
        snprintf(name, sizeof name, "%s failure",
                 k->sw      ? "switch"
                 : k->cable ? "cable"
                 : k->nic   ? "NIC"
                 : k->xcvr  ? "transceiver"
                 : k->rack  ? "rack"
                 : k->node  ? "node"
                            : "GPU");
    campaign_cause *x = cause_slot(c, name);
    if (!x)
        return node_error(ld, f, "cause", "more than %d failure causes", CAMPAIGN_MAX_CAUSES);
    *added = x;
    x->unit = k->sw      ? CAMPAIGN_UNIT_SWITCH
              : k->cable ? CAMPAIGN_UNIT_CABLE
              : k->nic   ? CAMPAIGN_UNIT_NIC
              : k->xcvr  ? CAMPAIGN_UNIT_TRANSCEIVER
              : k->rack  ? CAMPAIGN_UNIT_RACK
              : k->node  ? CAMPAIGN_UNIT_NODE
                         : CAMPAIGN_UNIT_GPU;
    x->rate_per_s = rate;
    x->parts = parts;
    x->process = k->process;
    x->shape = shape;
    if (has_attr(f, "detection")) { /* silent: found after a mean delay */
        int rc = get_quantity(ld, f, "detection", SIM_DIM_TIME, 1, &x->detection_s);
        if (!rc)
            rc = non_negative(ld, f, "detection", x->detection_s);
        if (!rc && x->detection_s > 0 && shape > 0)
            rc = node_error(ld, f, "detection", "a silent cause must be exponential");
        if (rc)
            return rc;
    }
    if (has_attr(f, "category"))
        copy_attr(f, "category", x->category, sizeof x->category);
    else if (!x->category[0])
        snprintf(x->category, sizeof x->category, "%s",
                 k->sw || k->cable || k->xcvr ? "Network" : k->node || k->nic ? "Host" : "GPU");
    return 0;
}

/* flaps="N" flap-down="30s" flap-up="5min" of a cable <failure> with a
 * repair: the cable flaps N times in each episode (docs/failures.md
 * "Flapping links"); no sourced flap figures exist, so all three are given */
static int parse_flaps(loader *ld, xmlNode *f, campaign_cause *x)
{
    static const char *const attrs[] = {"flaps", "flap-down", "flap-up"};
    int given = 0;
    for (int i = 0; i < 3; i++)
        given += has_attr(f, attrs[i]);
    if (!given && has_attr(f, "flap-law"))
        return node_error(ld, f, "flap-law", "flap-law is the law of a flapping cable's flap "
                          "durations: give flaps, flap-down and flap-up too");
    if (!given)
        return 0;
    for (int i = 0; i < 3; i++)
        if (!has_attr(f, attrs[i]))
            return node_error(ld, f, attrs[i], "a flapping cable needs flaps, flap-down and "
                              "flap-up (no sourced flap figures exist: the scenario gives "
                              "them)");
    if (!has_attr(f, "repair"))
        return node_error(ld, f, "flaps", "a flapping cable needs repair=\"...\": the mean "
                          "time until the flapping is repaired");
    if (has_attr(f, "speed"))
        return node_error(ld, f, "speed", "a flapping cable goes down and up: leave speed "
                          "out");
    unsigned n = 0;
    int rc = get_uint(ld, f, "flaps", 1, 0, 1000000u, &n);
    static const char *const times[] = {"flap-down", "flap-up"};
    double *to[] = {&x->flap_down_s, &x->flap_up_s};
    for (int i = 0; i < 2 && !rc; i++) {
        rc = get_quantity(ld, f, times[i], SIM_DIM_TIME, 1, to[i]);
        if (!rc)
            rc = positive(ld, f, times[i], *to[i], INFINITY, "");
    }
    char law[16] = "fixed"; /* the schema allows fixed and exponential */
    if (has_attr(f, "flap-law"))
        copy_attr(f, "flap-law", law, sizeof law);
    x->flap_law = strcmp(law, "exponential") ? CAMPAIGN_FLAP_FIXED : CAMPAIGN_FLAP_EXPONENTIAL;
    x->flaps = rc ? 0 : n; /* 0: no flapping, the cause as without the attributes */
    if (!n)
        x->flap_down_s = x->flap_up_s = 0;
    return rc;
}

/* repair="4h" [speed="50%"] of a switch, cable or NIC <failure> (the cause just
 * added, by its name): the part stays down, or slow at that speed, for
 * Exp(repair) (docs/failures.md "The campaign on a degraded fabric") */
static int parse_repair(loader *ld, xmlNode *f, scn_scenario *s, campaign_cause *x, int tier)
{
    campaign_config *c = &s->campaign;
    s->cause_tier[x - c->causes] = (signed char)tier;
    if (!has_attr(f, "repair")) {
        if (has_attr(f, "speed"))
            return node_error(ld, f, "speed", "a slow part needs repair=\"...\": how long it "
                              "stays slow on average");
        return 0;
    }
    int rc = get_quantity(ld, f, "repair", SIM_DIM_TIME, 1, &x->repair_s);
    if (!rc)
        rc = positive(ld, f, "repair", x->repair_s, INFINITY, "");
    if (!rc && has_attr(f, "speed")) {
        rc = get_quantity(ld, f, "speed", SIM_DIM_FRACTION, 1, &x->slow_speed);
        if (!rc && !(x->slow_speed > 0 && x->slow_speed < 1))
            rc = node_error(ld, f, "speed", "a slow part runs at above 0%% and below 100%% of "
                            "its rate (50%%: a link retrained at half speed); leave speed out "
                            "for a part that goes down");
    }
    s->has_degraded |= !rc;
    return rc;
}

/* <failure component rate|mtbf distribution shape cause detection tier
 * category repair speed>: the unnamed per-GPU rate, or a cause */
static int parse_failure(loader *ld, xmlNode *f, scn_scenario *s)
{
    campaign_config *c = &s->campaign;
    double rate = 0;
    int rc = failure_rate(ld, f, &rate);
    if (rc)
        return rc;
    char comp[16], dist[16];
    copy_attr(f, "component", comp, sizeof comp);
    copy_attr(f, "distribution", dist, sizeof dist);
    failure_kind k = {.node = !strcmp(comp, "node"), .rack = !strcmp(comp, "rack"),
                      .sw = !strcmp(comp, "switch"), .cable = !strcmp(comp, "cable"),
                      .nic = !strcmp(comp, "nic"), .xcvr = !strcmp(comp, "transceiver"),
                      .weibull = !strcmp(dist, "weibull"),
                      .process = (unsigned)failure_process_find(dist)};
    uint64_t parts = 0;
    int tier = -1;
    if (!k.cable && (has_attr(f, "flaps") || has_attr(f, "flap-down") || has_attr(f, "flap-up")))
        return node_error(ld, f, has_attr(f, "flaps") ? "flaps" : has_attr(f, "flap-down")
                          ? "flap-down" : "flap-up", "flapping belongs to component=\"cable\"");
    if (has_attr(f, "cage-ports") && !k.xcvr)
        return node_error(ld, f, "cage-ports", "cage-ports belongs to "
                          "component=\"transceiver\"");
    if (k.sw || k.cable || k.nic || k.xcvr) {
        rc = k.xcvr ? transceiver_parts(ld, f, s, &parts, &tier)
                    : network_parts(ld, f, s, comp, &parts, &tier);
        if (rc)
            return rc;
        if (k.weibull)
            return node_error(ld, f, "distribution", "%s failures are exponential", comp);
        if (has_attr(f, "detection"))
            return node_error(ld, f, "detection", "%s failures are not silent", comp);
    } else if (has_attr(f, "tier")) {
        return node_error(ld, f, "tier", "tier belongs to component=\"switch\", "
                          "\"cable\" or \"transceiver\"");
    } else if (has_attr(f, "repair") || has_attr(f, "speed")) {
        return node_error(ld, f, has_attr(f, "repair") ? "repair" : "speed",
                          "repair and speed belong to component=\"switch\", \"cable\", "
                          "\"nic\" or \"transceiver\" (a part of the fabric that stays down or slow until "
                          "repaired); GPUs and nodes are swapped at the restart "
                          "(<spares repair-time>) or slow as <stragglers>");
    }
    if (k.rack && !c->nodes_per_rack)
        return node_error(ld, f, "component", "rack failures need <reliability "
                          "nodes-per-rack=\"...\"> (Llama 3: 16 GPUs, 2 nodes, per rack)");
    if (k.rack && k.weibull)
        return node_error(ld, f, "distribution", "rack failures are exponential");
    k.node |= k.rack;
    double shape = 0;
    if (k.weibull) {
        rc = get_quantity(ld, f, "shape", SIM_DIM_COUNT, 1, &shape);
        if (!rc && !(shape >= CAMPAIGN_WEIBULL_SHAPE_MIN && shape <= CAMPAIGN_WEIBULL_SHAPE_MAX))
            rc = node_error(ld, f, "shape", "a Weibull shape must be from 1/170 (0.00588: "
                            "below, Gamma(1 + 1/k) overflows a double) to 100 (below 1: "
                            "infant mortality; above 1: wear-out)");
        if (rc)
            return rc;
    } else if (has_attr(f, "shape")) {
        return node_error(ld, f, "shape", "shape belongs to distribution=\"weibull\"");
    }
    if (!has_attr(f, "cause") && !k.node && !k.sw && !k.cable && !k.nic && !k.xcvr &&
        !k.weibull &&
        !has_attr(f, "detection")) {
        /* the unnamed per-GPU rate */
        c->gpu_failure_rate_per_s = rate;
        return 0;
    }
    campaign_cause *x = NULL;
    rc = add_cause(ld, f, c, &k, rate, parts, shape, &x);
    if (!rc && (k.sw || k.cable || k.nic || k.xcvr))
        rc = parse_repair(ld, f, s, x, tier);
    if (!rc)
        rc = parse_flaps(ld, f, x);
    return rc;
}

/* <spares per="su" su-nodes>: a pool of hot spares in every scalable unit
 * of su-nodes consecutive nodes of the job (default: the rail-optimised
 * fabric's SU; docs/failures.md "Hot spares per scalable unit") */
static int parse_spares_per_su(loader *ld, xmlNode *spares, scn_scenario *s)
{
    campaign_config *c = &s->campaign;
    char per[8];
    copy_attr(spares, "per", per, sizeof per);
    int per_su = !strcmp(per, "su");
    if (!per_su) {
        if (has_attr(spares, "su-nodes"))
            return node_error(ld, spares, "su-nodes", "su-nodes belongs to per=\"su\"");
        return 0;
    }
    if (c->elastic_replicas)
        return node_error(ld, spares, "per", "per=\"su\" pools are not modelled with "
                          "elastic=\"true\" (a missing replica's slot would have to be "
                          "refilled from its own SU)");
    if (has_attr(spares, "su-nodes")) {
        unsigned nodes = 0;
        int rc = get_uint(ld, spares, "su-nodes", 0, 1, 1000000000u, &nodes);
        c->spare_group_nodes = nodes;
        return rc;
    }
    if (s->has_fabric && !strcmp(fabric_topology_name(s->fabric.topology), "rail-optimized")) {
        c->spare_group_nodes = s->fabric.shape.nodes_per_su;
        return 0;
    }
    return node_error(ld, spares, "per", "per=\"su\" needs su-nodes (the nodes of a scalable "
                      "unit): only a rail-optimized <fabric> gives one");
}

/* <spares nodes swap-time repair-time elastic max-missing per su-nodes>: a
 * limited pool of spare nodes, repaired ones returning to it */
static int parse_spares(loader *ld, xmlNode *spares, scn_scenario *s)
{
    campaign_config *c = &s->campaign;
    double n = 0;
    int rc = get_quantity(ld, spares, "nodes", SIM_DIM_COUNT, 1, &n);
    if (!rc)
        rc = whole(ld, spares, "nodes", n);
    if (!rc && !(n >= 0 && n <= 1e9))
        rc = node_error(ld, spares, "nodes", "nodes must be from 0 to 1e9");
    if (!rc)
        rc = get_quantity(ld, spares, "swap-time", SIM_DIM_TIME, 1, &c->swap_s);
    if (!rc)
        rc = non_negative(ld, spares, "swap-time", c->swap_s);
    if (!rc)
        rc = get_quantity(ld, spares, "repair-time", SIM_DIM_TIME, 1, &c->repair_mean_s);
    if (!rc)
        rc = non_negative(ld, spares, "repair-time", c->repair_mean_s);
    c->spares_limited = 1;
    c->spare_nodes = (uint64_t)n;
    int elastic = 0;
    if (!rc)
        rc = get_bool(ld, spares, "elastic", &elastic);
    if (!rc && has_attr(spares, "max-missing") && !elastic)
        rc = node_error(ld, spares, "max-missing", "max-missing needs elastic=\"true\"");
    if (!rc && elastic && !(s->has_parallelism && s->par.dp >= 2))
        rc = node_error(ld, spares, "elastic",
                        "elastic continuation needs <job><parallelism> with at least 2 "
                        "data-parallel replicas (it goes on with fewer of them)");
    if (!rc && elastic) {
        c->elastic_replicas = s->par.dp;
        unsigned most = s->par.dp - 1 < SCN_ELASTIC_MAX_MISSING_DEFAULT
                            ? s->par.dp - 1
                            : SCN_ELASTIC_MAX_MISSING_DEFAULT;
        rc = get_uint(ld, spares, "max-missing", 0, 1, s->par.dp - 1, &most);
        c->elastic_max_missing = most;
    }
    if (!rc)
        rc = parse_spares_per_su(ld, spares, s);
    return rc;
}

/* <maintenance every duration>: planned windows; the job checkpoints,
 * waits, restarts (so <reliability> needs a <restart>) */
static int parse_maintenance(loader *ld, xmlNode *rel, xmlNode *maint, xmlNode *restart,
                             campaign_config *c)
{
    int rc = get_quantity(ld, maint, "every", SIM_DIM_TIME, 1, &c->maintenance_every_s);
    if (!rc)
        rc = positive(ld, maint, "every", c->maintenance_every_s, INFINITY, "");
    if (!rc)
        rc = get_quantity(ld, maint, "duration", SIM_DIM_TIME, 1, &c->maintenance_s);
    if (!rc)
        rc = non_negative(ld, maint, "duration", c->maintenance_s);
    if (!rc && !(c->maintenance_s < c->maintenance_every_s))
        rc = node_error(ld, maint, "duration", "a window must be shorter than its period");
    if (!rc && !restart)
        rc = node_error(ld, rel, NULL, "maintenance windows need a <restart> saying what "
                        "restarting after one costs");
    return rc;
}

/* <stragglers rate|mtbf speed drain-after>: nodes turning slow, drained at
 * a checkpoint after a while */
static int parse_stragglers(loader *ld, xmlNode *rel, xmlNode *slow, xmlNode *restart,
                            scn_scenario *s)
{
    campaign_config *c = &s->campaign;
    int rc = failure_rate(ld, slow, &c->straggler_rate_per_s);
    if (!rc)
        rc = get_quantity(ld, slow, "speed", SIM_DIM_FRACTION, 1, &s->straggler_gpu_speed);
    if (!rc && !(s->straggler_gpu_speed > 0 && s->straggler_gpu_speed < 1))
        rc = node_error(ld, slow, "speed", "a slow node's GPUs run at above 0%% and below "
                        "100%% of nominal speed (90%%: nine tenths)");
    if (!rc)
        rc = get_quantity(ld, slow, "drain-after", SIM_DIM_TIME, 1, &c->straggler_drain_s);
    if (!rc)
        rc = non_negative(ld, slow, "drain-after", c->straggler_drain_s);
    if (!rc && !restart)
        rc = node_error(ld, rel, NULL, "stragglers need a <restart> saying what restarting "
                        "after a drain costs");
    /* the job's speed while a node is slow: the synchronous job waits for
     * it all the time (the step tier refines this from its profile) */
    c->straggler_speed = s->straggler_gpu_speed;
    return rc;
}

/* <reliability scale="2">: every failure and straggler rate times the
 * scale (every MTBF divided by it), for what-if sweeps; detection, repair
 * and restart times are left as they are */
static int apply_scale(loader *ld, xmlNode *rel, campaign_config *c)
{
    double scale = 1;
    int rc = get_quantity(ld, rel, "scale", SIM_DIM_COUNT, 1, &scale);
    if (!rc)
        rc = positive(ld, rel, "scale", scale, 1e6, "");
    for (unsigned i = 0; !rc && i < c->n_causes; i++)
        c->causes[i].rate_per_s *= scale;
    if (!rc) {
        c->gpu_failure_rate_per_s *= scale;
        c->straggler_rate_per_s *= scale;
    }
    return rc;
}

/* <degraded policy cache>: what a restart does about network parts down,
 * and how many iterations the campaign keeps by failure state; needs the
 * step tier (no mfu) to time the iteration on the fabric left */
static int parse_degraded(loader *ld, xmlNode *rel, xmlNode *deg, scn_scenario *s)
{
    static const char *const policies[] = {"replace", "restart", "wait", "shrink"};
    campaign_config *c = &s->campaign;
    c->fabric_policy = CAMPAIGN_FABRIC_RESTART;
    s->degraded_cache = SCN_DEGRADED_CACHE_DEFAULT;
    if (deg && !s->has_degraded)
        return node_error(ld, deg, NULL, "<degraded> needs a switch or cable <failure> with "
                          "repair=\"...\" (how long the part stays down or slow)");
    if (!s->has_degraded)
        return 0;
    xmlNode *at = deg ? deg : rel;
    if (!s->step_computes_iteration)
        return node_error(ld, at, NULL, "a degraded fabric (repair= on a switch or cable "
                          "<failure>) needs the step tier to time the iteration on the parts "
                          "left: remove <training mfu> (it fixes the iteration time)");
    if (s->step.packet)
        return node_error(ld, at, NULL, "a degraded fabric is timed by the flow model: "
                          "<step network=\"packet\"> is not built for failure states; use "
                          "network=\"flow\" or \"concurrent\"");
    if (deg && has_attr(deg, "policy")) {
        char text[16];
        copy_attr(deg, "policy", text, sizeof text);
        for (int k = 0; k < 4; k++)
            if (!strcmp(text, policies[k]))
                c->fabric_policy = k;
        s->degraded_policy_given = 1;
    }
    char states[16] = "";
    if (deg)
        copy_attr(deg, "states", states, sizeof states);
    s->degraded_by_tier = !strcmp(states, "by-tier");
    int rc = deg ? get_bool(ld, deg, "reshard", &s->degraded_reshard) : 0;
    if (!rc && s->degraded_reshard && c->fabric_policy != CAMPAIGN_FABRIC_SHRINK)
        return node_error(ld, deg, "reshard", "it re-shards a shrunk job, so it needs "
                          "policy=\"shrink\"");
    if (!rc && deg && has_attr(deg, "cache")) {
        rc = get_uint(ld, deg, "cache", 0, 1, 1000000, &s->degraded_cache);
        s->degraded_cache_given = 1;
    }
    return rc;
}

int parse_reliability(loader *ld, xmlNode *root, scn_scenario *s)
{
    xmlNode *rel = child(root, "reliability");
    xmlNode *restart = child(rel, "restart");
    campaign_config *c = &s->campaign;
    c->gpus_per_node = s->has_fabric && s->fabric.gpus_per_node > 1 ? s->fabric.gpus_per_node
                       : s->gpu.scaleup_domain > 1                    ? s->gpu.scaleup_domain
                                                                      : 8;
    int rc = 0, any = 0;
    memset(s->cause_tier, -1, sizeof s->cause_tier); /* every tier */
    if (rel && has_attr(rel, "nodes-per-rack"))
        rc = get_uint(ld, rel, "nodes-per-rack", 0, 1, 100000, &c->nodes_per_rack);
    if (!rc && rel && has_attr(rel, "inventory")) {
        rc = load_inventory(ld, rel, s);
        any = 1;
    }
    for (xmlNode *f = rel ? rel->children : NULL; f && !rc; f = f->next) {
        if (f->type != XML_ELEMENT_NODE || !xmlStrEqual(f->name, (const xmlChar *)"failure"))
            continue;
        any = 1;
        rc = parse_failure(ld, f, s);
    }
    if (!rc && any && !restart)
        rc = node_error(ld, rel, NULL,
                        "a <failure> needs a <restart time=\"...\"/> saying what each "
                        "failure costs");
    if (!rc && restart)
        rc = parse_restart(ld, restart, c);
    xmlNode *spares = child(rel, "spares");
    if (!rc && spares)
        rc = parse_spares(ld, spares, s);
    xmlNode *maint = child(rel, "maintenance");
    if (!rc && maint)
        rc = parse_maintenance(ld, rel, maint, restart, c);
    xmlNode *slow = child(rel, "stragglers");
    if (!rc && slow)
        rc = parse_stragglers(ld, rel, slow, restart, s);
    if (!rc && rel && has_attr(rel, "scale"))
        rc = apply_scale(ld, rel, c);
    if (!rc)
        rc = parse_degraded(ld, rel, child(rel, "degraded"), s);
    return rc;
}
