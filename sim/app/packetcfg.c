/* packetcfg.c - the packet tier's parameters from the catalog and options
 * (packetcfg.h). Every value is the catalog's, the user's, or a printed
 * rule with its source: the tier has no defaults of its own. */
#include "packetcfg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "netcmd_internal.h"
#include "packet_bench.h"
#include "packet_phenomena.h"
#include "units.h"

/* A size option: 0, or the exit status of the one-line error printed. */
static int packet_size(const char *command, const char *opt, const char *text, double max,
                       const char *max_text, double *out)
{
    char msg[160];
    if (netcmd_parse_size(text, out) || !(*out >= 1)) {
        snprintf(msg, sizeof msg, "%s %%s: expected a positive size such as 4096, 64K, 1M or 1MB",
                 opt);
        return cli_usage_error(command, msg, text);
    }
    if (*out > max) {
        snprintf(msg, sizeof msg, "%s %%s: expected at most %s", opt, max_text);
        return cli_usage_error(command, msg, text);
    }
    return 0;
}

uint32_t app_packet_groups(const topo_graph *g)
{
    uint32_t groups = 0;
    for (uint32_t v = 0; v < g->n_nodes; v++)
        if (g->node_kind[v] == TOPO_SWITCH && g->node_group[v] != TOPO_NO_GROUP &&
            g->node_group[v] + 1 > groups)
            groups = g->node_group[v] + 1;
    return groups;
}

/* --adaptive: pkt_config.is_adaptive by the fabric and its path class; 0 or
 * the exit status of the error printed. */
/* --valiant-candidates on a Dragonfly family of `groups` groups (UGAL-L or
 * Valiant): cfg.valiant_candidates and where it came from; 0 or the exit
 * status of the error printed. */
static int packet_candidates(const char *command, const char *text, uint32_t groups,
                             app_packet_cfg *out)
{
    uint32_t k = APP_VALIANT_CANDIDATES;
    if (text && !strcmp(text, "all")) {
        k = 0;
    } else if (text) {
        char *end;
        unsigned long v = strtoul(text, &end, 10);
        if (end == text || *end || text[0] == '-' || text[0] == '+' || v < 1 || v > 65535)
            return cli_usage_error(command, "--valiant-candidates %s: expected a whole number "
                                   "from 1 to 65535, or all", text);
        k = (uint32_t)v;
    }
    out->cfg.valiant_candidates = k;
    out->candidates = k == 0 || k > groups - 2 ? groups - 2 : k;
    snprintf(out->candidates_from, sizeof out->candidates_from, "%s%s",
             text ? "--valiant-candidates " : "dcsim default (no published count; "
             "--valiant-candidates N|all)", text ? text : "");
    return 0;
}

static int packet_adaptive(const char *command, const scn_scenario *s, const fabric *f,
                           const app_packet_opts *o, app_packet_cfg *out)
{
    pkt_config *c = &out->cfg;
    if (f->g.updown && o->candidates)
        return cli_usage_error(command, "--valiant-candidates %s: needs a Dragonfly family "
                               "(on a folded Clos --adaptive picks at every switch)",
                               o->candidates);
    if (o->ugal && strcmp(o->ugal, "local") && strcmp(o->ugal, "global") &&
        strcmp(o->ugal, "progressive"))
        return cli_usage_error(command, "--ugal %s: expected local, global or progressive",
                               o->ugal);
    if (o->ugal && (f->g.updown || s->fabric.routing.path_class != TOPO_PATH_UGAL))
        return cli_usage_error(command, "--ugal %s: needs a Dragonfly family with paths=\"ugal\"",
                               o->ugal);
    if (f->g.updown) {
        c->is_adaptive = 1;
        snprintf(out->routing, sizeof out->routing, "adaptive at every switch (--adaptive): "
                 "the least-queued equal-cost next link per packet");
        return 0;
    }
    if (app_packet_groups(&f->g) < 3)
        return cli_usage_error(command, "--adaptive: per-packet routing needs a folded Clos or "
                               "a Dragonfly family of 3 groups or more (this fabric is %s)",
                               fabric_topology_name(s->fabric.topology));
    enum topo_path_class pc = s->fabric.routing.path_class;
    int is_global = o->ugal && !strcmp(o->ugal, "global");
    int is_par = o->ugal && !strcmp(o->ugal, "progressive");
    c->is_adaptive = pc == TOPO_PATH_UGAL ? (is_global ? 4 : is_par ? 5 : 1)
                   : pc == TOPO_PATH_VALIANT ? 2 : 3;
    if (c->is_adaptive == 3 && o->candidates)
        return cli_usage_error(command, "--valiant-candidates %s: paths=\"minimal\" takes no "
                               "Valiant path (give paths=\"ugal\" or \"valiant\")",
                               o->candidates);
    int rc;
    if (c->is_adaptive != 3 &&
        (rc = packet_candidates(command, o->candidates, app_packet_groups(&f->g), out)))
        return rc;
    snprintf(out->routing, sizeof out->routing, "%s (--adaptive, paths=\"%s\"): per packet "
             "at the source router%s, 3 virtual channels; the flow tier keeps one route per "
             "message", is_global ? "UGAL-G, minimal or Valiant by every queue on both paths"
             : is_par ? "PAR, minimal or Valiant by queue x links left"
             : pc == TOPO_PATH_UGAL ? "UGAL-L, minimal or Valiant by queue x links left"
             : pc == TOPO_PATH_VALIANT ? "Valiant through a random group" : "minimal",
             topo_path_class_name(pc), is_par ? " and again at the source group's gateway" : "");
    return 0;
}

/* A catalog value missing: 0, or the exit status of the error printed. */
static int missing(const char *command, const char *lead, const char *what, const char *name)
{
    char msg[400];
    snprintf(msg, sizeof msg, "%s: %s", lead, what);
    return cli_usage_error(command, msg, name);
}

int app_packet_config(const char *command, const char *lead, const scn_scenario *s,
                      const fabric *f, const app_packet_opts *o, int need_pfc,
                      app_packet_cfg *out)
{
    const hw_link *lk = &s->fabric.link;
    int rc;
    memset(out, 0, sizeof *out);
    if (lk->kind == HW_LINK_NVLINK)
        return missing(command, lead, "the fabric link %s is NVLink; the packet tier models "
                       "InfiniBand and RoCE fabrics", lk->name);
    pkt_config *c = &out->cfg;
    c->technology = lk->kind == HW_LINK_ETHERNET ? PKT_ROCE : PKT_IB;
    if (o->ibcc) { /* IB CC: every value the user's (components.md 5.4: defaults a GAP) */
        char why[320];
        if (c->technology != PKT_IB)
            return cli_usage_error(command, "--ibcc %s: InfiniBand congestion control needs an "
                                   "InfiniBand fabric link (this one is RoCE)", o->ibcc);
        if (pkt_ibcc_parse(o->ibcc, &c->ibcc, why, sizeof why))
            return cli_usage_error(command, "--ibcc: %s", why);
        out->ibcc_text = o->ibcc;
    }
    if (o->dcqcn && c->technology != PKT_ROCE)
        return cli_usage_error(command, "--dcqcn: DCQCN is RoCE's congestion control; the "
                               "fabric link %s is InfiniBand (see --ibcc)", lk->name);
    /* MTU */
    if (o->mtu) {
        if ((rc = packet_size(command, "--mtu", o->mtu, 65536, "64K", &c->mtu_bytes)))
            return rc;
        snprintf(out->mtu_from, sizeof out->mtu_from, "--mtu %s", o->mtu);
    } else if (lk->mtu_bytes > 0) {
        c->mtu_bytes = lk->mtu_bytes;
        snprintf(out->mtu_from, sizeof out->mtu_from,
                 "catalog link %s (links.xml: components.md 5.7)", lk->name);
    } else
        return missing(command, lead, "the catalog gives no mtu for link %s: give one with "
                       "--mtu SIZE, e.g. --mtu 4096", lk->name);
    /* buffer per switch port */
    if (o->buffer) {
        if ((rc = packet_size(command, "--buffer", o->buffer, NETBENCH_MAX_BYTES, "1 TiB",
                              &c->buffer_bytes)))
            return rc;
        snprintf(out->buffer_from, sizeof out->buffer_from, "--buffer %s", o->buffer);
    } else if (lk->port_buffer_bytes > 0) {
        c->buffer_bytes = lk->port_buffer_bytes;
        snprintf(out->buffer_from, sizeof out->buffer_from, "catalog link %s (links.xml: "
                 "hardware.md 3.3)", lk->name);
    } else
        return missing(command, lead, "the catalog has no port-buffer for link %s (its switch "
                       "buffer is a GAP in components.md 5.6): give one with --buffer SIZE, "
                       "e.g. --buffer 1MB", lk->name);
    if (c->mtu_bytes > c->buffer_bytes)
        return cli_usage_error(command, "--buffer %s: a port's buffer must hold one MTU",
                               o->buffer ? o->buffer : lk->name);
    /* hop latency */
    if (o->hop_latency) {
        char why[128];
        if (sim_units_parse(o->hop_latency, SIM_DIM_TIME, &c->hop_latency_s, why,
                            sizeof why) || !(c->hop_latency_s >= 0) || c->hop_latency_s > 1)
            return cli_usage_error(command, "--hop-latency %s: expected a time from 0 to 1s "
                                   "such as 500ns", o->hop_latency);
        snprintf(out->latency_from, sizeof out->latency_from, "--hop-latency %s",
                 o->hop_latency);
    } else {
        c->hop_latency_s = lk->switch_latency_s;
        snprintf(out->latency_from, sizeof out->latency_from, "rule: the switch-latency of %s "
                 "(links.xml, hardware.md 3.5) on every link; cable and NIC latency not added",
                 lk->name);
    }
    /* PFC thresholds: no vendor default is published (components.md 5.2, GAP) */
    out->bdp_rate_bytes_per_s = f->link_bytes_per_s;
    if (c->technology == PKT_ROCE || need_pfc) {
        char why[256];
        if (pkb_pfc_rule(c->buffer_bytes, c->mtu_bytes, out->bdp_rate_bytes_per_s,
                         c->hop_latency_s, &c->xoff_bytes, &c->xon_bytes, why, sizeof why)) {
            char msg[400];
            snprintf(msg, sizeof msg, "%s: %%s; give a larger --buffer", lead);
            return cli_usage_error(command, msg, why);
        }
        out->has_pfc = 1;
        if (o->dcqcn) /* after the PFC rule: the rate is the fabric link's */
            pkp_dcqcn_rule(out->bdp_rate_bytes_per_s, s->seed, &c->dcqcn);
        snprintf(out->pfc_rule, sizeof out->pfc_rule, "rule: xoff = buffer - (2 BDP + 2 MTU) "
                 "(components.md 5.2), BDP = %.4g GB/s (fabric link) x %.4g ns; xon = xoff - "
                 "3 KiB (HPCC resume offset, 5.2); vendor thresholds are a GAP",
                 out->bdp_rate_bytes_per_s / 1e9, c->hop_latency_s * 1e9);
    }
    if (o->candidates && !o->adaptive)
        return cli_usage_error(command, "--valiant-candidates %s: needs --adaptive (per-packet "
                               "routing on a Dragonfly)", o->candidates);
    if (o->ugal && !o->adaptive)
        return cli_usage_error(command, "--ugal %s: needs --adaptive (per-packet routing on a "
                               "Dragonfly)", o->ugal);
    if (o->adaptive)
        return packet_adaptive(command, s, f, o, out);
    return 0;
}

void app_packet_config_print(FILE *out, const char *lead, const app_packet_cfg *p)
{
    const pkt_config *c = &p->cfg;
    fprintf(out, "%smtu          %.0f B: %s\n", lead, c->mtu_bytes, p->mtu_from);
    fprintf(out, "%sport buffer  %.0f B: %s\n", lead, c->buffer_bytes, p->buffer_from);
    const pkt_dcqcn_config *q = &c->dcqcn;
    if (q->is_enabled)
        fprintf(out, "%sDCQCN        --dcqcn: ECN Kmin %.0f B, Kmax %.0f B, Pmax %.2g (DCQCN "
                "paper, S); alpha %.4g us, rate decrease %.4g us, RP timer %.4g us, g 1/256, "
                "R_AI %.4g Mb/s, R_HAI %.4g Mb/s, min %.4g Gb/s (HPCC simulator's paper set, "
                "components.md 5.1, V); byte counter %.0f MB (paper, S)\n", lead, q->kmin_bytes,
                q->kmax_bytes, q->pmax, q->alpha_timer_s * 1e6, q->cnp_interval_s * 1e6,
                q->increase_timer_s * 1e6, q->rai_bytes_per_s * 8 / 1e6,
                q->rhai_bytes_per_s * 8 / 1e6, q->min_rate_bytes_per_s * 8 / 1e9,
                q->byte_counter_bytes / 1e6);
    const pkt_ibcc_config *b = &c->ibcc;
    if (b->is_enabled)
        fprintf(out, "%sIB CC        --ibcc: FECN at %.0f B queued, 1 in %u eligible packets%s; "
                "BECN: CCTI +%u (limit %u), -1 every %.4g us down to %u; %.4g ns per CCTI "
                "step\n", lead, b->threshold_bytes, b->marking_rate + 1,
                b->is_victim_marking ? " (victims too)" : "", b->ccti_increase, b->ccti_limit,
                b->ccti_timer_s * 1e6, b->ccti_min, b->cct_step_s * 1e9);
    if (p->routing[0])
        fprintf(out, "%srouting      %s\n", lead, p->routing);
    fprintf(out, "%sdefaults used:\n", lead);
    fprintf(out, "%s  hop latency %.4g ns: %s\n", lead, c->hop_latency_s * 1e9, p->latency_from);
    if (p->has_pfc)
        fprintf(out, "%s  PFC xoff %.0f B, xon %.0f B: %s\n", lead, c->xoff_bytes, c->xon_bytes,
                p->pfc_rule);
    if (p->candidates_from[0])
        fprintf(out, "%s  Valiant candidates %u per message (of the third groups): %s\n", lead,
                p->candidates, p->candidates_from);
    if (b->is_enabled && !strstr(p->ibcc_text, "min="))
        fprintf(out, "%s  IB CC min 0: rule: the table's first entry (no added delay)\n", lead);
    if (b->is_enabled && !strstr(p->ibcc_text, "victim="))
        fprintf(out, "%s  IB CC victim 0: rule: the victim mask off (roots of congestion only)\n",
                lead);
}

/* IB congestion control's values as "ib_congestion_control" (none when off). */
void app_packet_ibcc_json(struct cJSON *o, const pkt_config *c)
{
    if (c->ibcc.is_enabled) {
        cJSON *b = cJSON_AddObjectToObject(o, "ib_congestion_control");
        cJSON_AddNumberToObject(b, "threshold_bytes", c->ibcc.threshold_bytes);
        cJSON_AddNumberToObject(b, "marking_rate", c->ibcc.marking_rate);
        cJSON_AddBoolToObject(b, "victim_marking", c->ibcc.is_victim_marking);
        cJSON_AddNumberToObject(b, "ccti_increase", c->ibcc.ccti_increase);
        cJSON_AddNumberToObject(b, "ccti_limit", c->ibcc.ccti_limit);
        cJSON_AddNumberToObject(b, "ccti_min", c->ibcc.ccti_min);
        cJSON_AddNumberToObject(b, "ccti_timer_s", c->ibcc.ccti_timer_s);
        cJSON_AddNumberToObject(b, "cct_step_s", c->ibcc.cct_step_s);
    }
}
