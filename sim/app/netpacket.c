/* netpacket.c - `dcsim netbench --tier packet`: one pattern (send, incast,
 * all-to-all) on the packet tier and on the flow tier over the scenario's
 * fabric (models/packet_bench.h runs it); here only the options, where each
 * parameter comes from (catalog, option or a printed rule) and the output.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "netcmd_internal.h"
#include "packet_bench.h"
#include "packet_phenomena.h"
#include "units.h"

/* A size option: 0, or the exit status of the one-line error printed. */
static int packet_size(const char *opt, const char *text, double max, const char *max_text,
                       double *out)
{
    char msg[160];
    if (netcmd_parse_size(text, out) || !(*out >= 1)) {
        snprintf(msg, sizeof msg, "%s %%s: expected a positive size such as 4096, 64K, 1M or 1MB",
                 opt);
        return cli_usage_error("netbench", msg, text);
    }
    if (*out > max) {
        snprintf(msg, sizeof msg, "%s %%s: expected at most %s", opt, max_text);
        return cli_usage_error("netbench", msg, text);
    }
    return 0;
}

/* A phenomenon's ranks and bytes by default, and the most ranks it takes
 * (docs/fabric.md "Phenomena"). Returns 0 or the exit status of the error. */
static int phen_defaults(const net_options *o, packet_spec *p, unsigned *most)
{
    if ((p->phen == PHEN_STALL || p->phen == PHEN_COLLISION) && o->ranks)
        return cli_usage_error("netbench", "--ranks %s: --op stall and --op collision run a "
                               "fixed set of flows (docs/fabric.md \"Phenomena\")", o->ranks);
    if (p->phen == PHEN_SWEEP)
        p->ranks = 33; /* fan-ins 2, 4, 8, 16, 32 */
    if (p->phen == PHEN_VICTIM) {
        *most = PKP_MAX_FANIN + 1; /* its own leaf-spine */
        p->ranks = 10;             /* fan-in 9 */
    }
    p->bytes = p->phen == PHEN_VICTIM || p->phen == PHEN_STALL ? 4194304
               : p->phen == PHEN_COLLISION ? 8388608 : 1048576;
    return 0;
}

/* The pattern and the tier's parameters from the options and the catalog.
 * Returns 0 or the exit status of the error printed. */
static int packet_parse(const net_options *o, const scn_scenario *s, const fabric *f,
                        packet_spec *p)
{
    const hw_link *lk = &s->fabric.link;
    const char *flow_only = o->algo ? "--algo" : o->min ? "--min" : o->max ? "--max"
                            : o->factor ? "--factor" : o->analytic ? "--analytic" : NULL;
    if (flow_only)
        return cli_usage_error("netbench", "%s is an option of the flow tier, not of --tier "
                               "packet (which takes --op, --ranks, --bytes, --mtu, --buffer, "
                               "--hop-latency)", flow_only);
    memset(p, 0, sizeof *p);
    int rc;
    p->phen = o->op ? phen_parse(o->op) : PHEN_NONE;
    if (p->phen != PHEN_NONE)
        p->op = PKB_INCAST;
    else if (o->op && pkb_op_parse(o->op, &p->op))
        return cli_usage_error("netbench", "--op %s: --tier packet runs send, incast, alltoall, "
                               "incast-sweep, victim, stall or collision", o->op);
    /* one rank per node (its first GPU): the pattern crosses the fabric only */
    p->stride = s->fabric.gpus_per_node > 1 ? s->fabric.gpus_per_node : 1;
    unsigned nodes = (f->gpus + p->stride - 1) / p->stride;
    unsigned most = nodes < PKB_MAX_RANKS ? nodes : PKB_MAX_RANKS;
    p->ranks = p->op == PKB_SEND ? 2 : 16;
    if (p->phen != PHEN_NONE && (rc = phen_defaults(o, p, &most)))
        return rc;
    if (p->ranks > most)
        p->ranks = most;
    if (o->ranks) {
        char *end;
        unsigned long n = strtoul(o->ranks, &end, 10);
        if (*end || end == o->ranks || n < 2 || n > most) {
            char msg[240];
            snprintf(msg, sizeof msg, "--ranks %%s: expected a whole number from 2 to %u (%s)",
                     most, p->phen == PHEN_VICTIM ? "--op victim: ranks - 1 incast senders "
                                                    "on its own leaf-spine"
                     : most < nodes ? "the packet tier's limit: it moves about 2-3 M "
                                      "packet-hops/s" : "the cluster's nodes, one rank each");
            return cli_usage_error("netbench", msg, o->ranks);
        }
        p->ranks = (unsigned)n;
    }
    if (p->ranks < 2)
        return cli_usage_error("netbench", "%s: the cluster has fewer than 2 GPUs", o->path);
    if (p->phen == PHEN_NONE)
        p->bytes = 1048576;
    if (o->bytes &&
        (rc = packet_size("--bytes", o->bytes, NETBENCH_MAX_BYTES, "1 TiB", &p->bytes)))
        return rc;
    if (lk->kind == HW_LINK_NVLINK)
        return cli_usage_error("netbench", "--tier packet: the fabric link %s is NVLink; the "
                               "packet tier models InfiniBand and RoCE fabrics", lk->name);
    p->cfg.technology = lk->kind == HW_LINK_ETHERNET ? PKT_ROCE : PKT_IB;
    /* MTU */
    if (o->mtu) {
        if ((rc = packet_size("--mtu", o->mtu, 65536, "64K", &p->cfg.mtu_bytes)))
            return rc;
        snprintf(p->mtu_from, sizeof p->mtu_from, "--mtu %s", o->mtu);
    } else if (lk->mtu_bytes > 0) {
        p->cfg.mtu_bytes = lk->mtu_bytes;
        snprintf(p->mtu_from, sizeof p->mtu_from, "catalog link %s (links.xml: components.md 5.7)",
                 lk->name);
    } else
        return cli_usage_error("netbench", "--tier packet: the catalog gives no mtu for link "
                               "%s: give one with --mtu SIZE, e.g. --mtu 4096", lk->name);
    /* buffer per switch port */
    if (o->buffer) {
        if ((rc = packet_size("--buffer", o->buffer, NETBENCH_MAX_BYTES, "1 TiB",
                              &p->cfg.buffer_bytes)))
            return rc;
        snprintf(p->buffer_from, sizeof p->buffer_from, "--buffer %s", o->buffer);
    } else if (lk->port_buffer_bytes > 0) {
        p->cfg.buffer_bytes = lk->port_buffer_bytes;
        snprintf(p->buffer_from, sizeof p->buffer_from, "catalog link %s (links.xml: "
                 "hardware.md 3.3)", lk->name);
    } else
        return cli_usage_error("netbench", "--tier packet: the catalog has no port-buffer for "
                               "link %s (its switch buffer is a GAP in components.md 5.6): give "
                               "one with --buffer SIZE, e.g. --buffer 1MB", lk->name);
    if (p->cfg.mtu_bytes > p->cfg.buffer_bytes)
        return cli_usage_error("netbench", "--buffer %s: a port's buffer must hold one MTU",
                               o->buffer ? o->buffer : lk->name);
    /* hop latency */
    if (o->hop_latency) {
        char why[128];
        if (sim_units_parse(o->hop_latency, SIM_DIM_TIME, &p->cfg.hop_latency_s, why,
                            sizeof why) || !(p->cfg.hop_latency_s >= 0) ||
            p->cfg.hop_latency_s > 1)
            return cli_usage_error("netbench", "--hop-latency %s: expected a time from 0 to 1s "
                                   "such as 500ns", o->hop_latency);
        snprintf(p->latency_from, sizeof p->latency_from, "--hop-latency %s", o->hop_latency);
    } else {
        p->cfg.hop_latency_s = lk->switch_latency_s;
        snprintf(p->latency_from, sizeof p->latency_from, "rule: the switch-latency of %s "
                 "(links.xml, hardware.md 3.5) on every link; cable and NIC latency not added",
                 lk->name);
    }
    /* PFC thresholds: no vendor default is published (components.md 5.2, GAP) */
    p->bdp_rate_bytes_per_s = f->link_bytes_per_s;
    if (p->cfg.technology == PKT_ROCE || p->phen == PHEN_VICTIM || p->phen == PHEN_STALL) {
        char why[256];
        if (pkb_pfc_rule(p->cfg.buffer_bytes, p->cfg.mtu_bytes, p->bdp_rate_bytes_per_s,
                         p->cfg.hop_latency_s, &p->cfg.xoff_bytes, &p->cfg.xon_bytes, why,
                         sizeof why))
            return cli_usage_error("netbench", "--tier packet: %s; give a larger --buffer", why);
        snprintf(p->pfc_rule, sizeof p->pfc_rule, "rule: xoff = buffer - (2 BDP + 2 MTU) "
                 "(components.md 5.2), BDP = %.4g GB/s (fabric link) x %.4g ns; xon = xoff - "
                 "3 KiB (HPCC resume offset, 5.2); vendor thresholds are a GAP",
                 p->bdp_rate_bytes_per_s / 1e9, p->cfg.hop_latency_s * 1e9);
    }
    double hops = pkb_min_packet_hops(p->op, p->ranks, p->bytes, p->cfg.mtu_bytes);
    if (p->phen == PHEN_NONE && hops > PKB_MAX_PACKET_HOPS) { /* phenomena check their own */
        char msg[320];
        snprintf(msg, sizeof msg, "--ranks %%s: %s of %.0f B would take at least %.3g "
                 "packet-hops (about %.0f s at 2.5 M/s); at most %.0e: lower --ranks or --bytes, "
                 "or raise --mtu", pkb_op_name(p->op), p->bytes, hops, hops / 2.5e6,
                 PKB_MAX_PACKET_HOPS);
        char ranks[16];
        snprintf(ranks, sizeof ranks, "%u", p->ranks);
        return cli_usage_error("netbench", msg, ranks);
    }
    return 0;
}

void packet_print_params(const packet_spec *p)
{
    const pkt_config *c = &p->cfg;
    printf("# mtu          %.0f B: %s\n", c->mtu_bytes, p->mtu_from);
    printf("# port buffer  %.0f B: %s\n", c->buffer_bytes, p->buffer_from);
    printf("# defaults used:\n");
    printf("#   hop latency %.4g ns: %s\n", c->hop_latency_s * 1e9, p->latency_from);
    if (c->technology == PKT_ROCE || p->phen == PHEN_VICTIM || p->phen == PHEN_STALL)
        printf("#   PFC xoff %.0f B, xon %.0f B: %s\n", c->xoff_bytes, c->xon_bytes, p->pfc_rule);
}

static void packet_print_text(const scn_scenario *s, const packet_spec *p, const pkb_result *r)
{
    const pkt_config *c = &p->cfg;
    const pkt_net_stats *st = &r->stats;
    int roce = c->technology == PKT_ROCE;
    printf("# dcsim netbench --tier packet: %s, %u ranks (one per node: GPUs 0, %u, ...), %llu "
           "message%s of %.0f B, %s fabric of %s, %s\n", pkb_op_name(p->op), p->ranks, p->stride,
           (unsigned long long)r->messages, r->messages > 1 ? "s" : "", p->bytes, fabric_topology_name(s->fabric.topology),
           s->fabric.link.name, roce ? "RoCE PFC" : "InfiniBand credits");
    packet_print_params(p);
    printf("packet time      %.4f us\n", r->packet_time_s * 1e6);
    printf("flow time        %.4f us (max-min flow tier, same routes, hops x hop latency)\n",
           r->flow_time_s * 1e6);
    printf("packet / flow    %.4f\n", r->packet_time_s / r->flow_time_s);
    printf("goodput          %.4g GB/s min, %.4g mean, %.4g max per receiver (%u receiver%s; "
           "flow tier min %.4g)\n", r->goodput_min_bytes_per_s / 1e9,
           r->goodput_mean_bytes_per_s / 1e9, r->goodput_max_bytes_per_s / 1e9, r->receivers,
           r->receivers > 1 ? "s" : "", r->flow_goodput_min_bytes_per_s / 1e9);
    printf("max queue held   %.0f B in one switch port (buffer %.0f B)\n", st->max_held_bytes,
           c->buffer_bytes);
    printf("PFC pauses       %llu\n", (unsigned long long)st->pauses);
    printf("packets          %llu delivered, %llu packet-hops\n",
           (unsigned long long)st->packets_delivered, (unsigned long long)st->packet_hops);
    printf("events           %llu (%.3g s wall, %.3g M packet-hops/s)\n",
           (unsigned long long)st->events, r->wall_s,
           r->wall_s > 0 ? st->packet_hops / r->wall_s / 1e6 : 0.0);
}

static void packet_print_json(const scn_scenario *s, const packet_spec *p, const pkb_result *r)
{
    const pkt_config *c = &p->cfg;
    const pkt_net_stats *st = &r->stats;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "tier", "packet");
    cJSON_AddStringToObject(o, "op", pkb_op_name(p->op));
    cJSON_AddNumberToObject(o, "ranks", p->ranks);
    cJSON_AddNumberToObject(o, "gpus_per_rank_stride", p->stride);
    cJSON_AddNumberToObject(o, "messages", (double)r->messages);
    cJSON_AddNumberToObject(o, "bytes", p->bytes);
    cJSON_AddStringToObject(o, "topology", fabric_topology_name(s->fabric.topology));
    cJSON_AddStringToObject(o, "link", s->fabric.link.name);
    cJSON_AddStringToObject(o, "flow_control", c->technology == PKT_ROCE ? "pfc" : "credits");
    cJSON_AddNumberToObject(o, "mtu_bytes", c->mtu_bytes);
    cJSON_AddStringToObject(o, "mtu_from", p->mtu_from);
    cJSON_AddNumberToObject(o, "buffer_bytes", c->buffer_bytes);
    cJSON_AddStringToObject(o, "buffer_from", p->buffer_from);
    cJSON_AddNumberToObject(o, "hop_latency_s", c->hop_latency_s);
    cJSON_AddStringToObject(o, "hop_latency_from", p->latency_from);
    if (c->technology == PKT_ROCE) {
        cJSON_AddNumberToObject(o, "xoff_bytes", c->xoff_bytes);
        cJSON_AddNumberToObject(o, "xon_bytes", c->xon_bytes);
        cJSON_AddStringToObject(o, "pfc_from", p->pfc_rule);
    }
    cJSON_AddNumberToObject(o, "packet_time_s", r->packet_time_s);
    cJSON_AddNumberToObject(o, "flow_time_s", r->flow_time_s);
    cJSON_AddNumberToObject(o, "packet_over_flow", r->packet_time_s / r->flow_time_s);
    cJSON_AddNumberToObject(o, "receivers", r->receivers);
    cJSON_AddNumberToObject(o, "goodput_min_bytes_per_s", r->goodput_min_bytes_per_s);
    cJSON_AddNumberToObject(o, "goodput_mean_bytes_per_s", r->goodput_mean_bytes_per_s);
    cJSON_AddNumberToObject(o, "goodput_max_bytes_per_s", r->goodput_max_bytes_per_s);
    cJSON_AddNumberToObject(o, "flow_goodput_min_bytes_per_s", r->flow_goodput_min_bytes_per_s);
    cJSON_AddNumberToObject(o, "max_held_bytes", st->max_held_bytes);
    cJSON_AddNumberToObject(o, "pauses", (double)st->pauses);
    cJSON_AddNumberToObject(o, "packets", (double)st->packets_delivered);
    cJSON_AddNumberToObject(o, "packet_hops", (double)st->packet_hops);
    cJSON_AddNumberToObject(o, "events", (double)st->events);
    cJSON_AddNumberToObject(o, "wall_s", r->wall_s);
    char *text = cJSON_Print(o);
    if (text)
        puts(text);
    free(text);
    cJSON_Delete(o);
}

int netbench_packet(const net_options *o)
{
    scn_scenario s;
    fabric f;
    int rc = netcmd_load_fabric(o, &s, &f);
    if (rc)
        return rc;
    packet_spec p;
    pkb_result r;
    if (!(rc = packet_parse(o, &s, &f, &p)) && p.phen != PHEN_NONE)
        rc = netbench_phenomenon(o, &s, &f, &p);
    else if (!rc) {
        char why[256] = "";
        int run = pkb_run(&f.g, f.router, &p.cfg, p.op, p.ranks, p.stride, p.bytes, &r, why, sizeof why);
        if (run == -1)
            rc = cli_usage_error("netbench", "--tier packet: %s", why);
        else if (run) {
            fprintf(stderr, "dcsim netbench: error: %s\n", why);
            rc = 1;
        } else if (o->json)
            packet_print_json(&s, &p, &r);
        else
            packet_print_text(&s, &p, &r);
    }
    fabric_free(&f);
    scn_scenario_free(&s);
    return rc;
}

