/* netpacket_coll.c - `dcsim netbench --tier packet --op allreduce|allgather|
 * reducescatter [--algo ring|tree|hd|hierarchical|in-network]`: one
 * collective's plan (models/packet_coll.h; SHARP: models/packet_sharp.h) on
 * the packet tier and on the flow tier over the scenario's fabric; the
 * options and parameters are netpacket.c's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "netcmd_internal.h"
#include "packet_coll.h"
#include "packet_sharp.h"
#include "resources.h"

/* The packet-hops a collective's plan takes at least (2 links a message):
 * the collective's counterpart of pkb_min_packet_hops. */
static double coll_min_packet_hops(const nc_plan *plan, double mtu_bytes)
{
    double hops = 0;
    for (uint32_t i = 0; i < plan->n_phases; i++) {
        const nc_phase *ph = &plan->phase[i];
        for (uint32_t k = 0; k < ph->n_conn; k++) {
            double w = ph->rank_first == NC_LISTED ? plan->conn[ph->conn_first + k].weight : 1;
            hops += 2 * ceil(ceil(ph->bytes * w) / mtu_bytes);
        }
    }
    return hops;
}

/* The SHARP tree of the plan's in-network phase (the ranks' host links);
 * its reduction rate in *rate. 0, or -1 when the plan has none. */
static int sharp_tree_of(const packet_spec *p, const nc_plan *plan, pkt_sharp_tree_info *info,
                         double *rate)
{
    if (plan->algo != NC_ALGO_IN_NETWORK || plan->n_phases != 1)
        return -1;
    uint32_t *r = malloc((size_t)p->ranks * sizeof *r);
    for (unsigned i = 0; r && i < p->ranks; i++)
        r[i] = i * p->stride;
    int rc = r ? pkt_sharp_tree(p->graph, r, p->ranks, info, NULL, 0) : -1;
    free(r);
    *rate = plan->sharp_reduction_bytes_per_s > 0 ? plan->sharp_reduction_bytes_per_s
                                                  : plan->phase[0].rate_cap;
    return rc;
}

/* SHARP's tree, its counters, and its defaults (text) */
static void print_sharp(const scn_scenario *s, const packet_spec *p, const nc_plan *plan,
                        const pkt_net_stats *st)
{
    pkt_sharp_tree_info t;
    double rate;
    if (sharp_tree_of(p, plan, &t, &rate))
        return;
    const hw_link *lk = &s->fabric.link;
    printf("#   SHARP aggregation buffer: the children's ingress port buffers (port buffer "
           "above); a separate switch ALU buffer is a GAP in the references, not modelled\n");
    if (lk->reduction_efficiency > 0)
        printf("#   SHARP reduction rate %.4g GB/s: link %s rate x reduction-efficiency %.4g "
               "(catalog)\n", rate / 1e9, lk->name, lk->reduction_efficiency);
    else
        printf("#   SHARP reduction rate %.4g GB/s: the link's effective rate (line rate: no "
               "switch reduction rate in the references; it never binds)\n", rate / 1e9);
    printf("SHARP tree       root switch %u, %u link%s up, %u switch%s; %llu packets summed at "
           "switches, %.0f B to the ranks\n", t.root, t.hops_up, t.hops_up > 1 ? "s" : "",
           t.switches, t.switches > 1 ? "es" : "",
           (unsigned long long)st->sharp_aggregations, st->sharp_bytes_delivered);
}

static void json_sharp(cJSON *o, const packet_spec *p, const nc_plan *plan,
                       const pkt_net_stats *st)
{
    pkt_sharp_tree_info t;
    double rate;
    if (sharp_tree_of(p, plan, &t, &rate))
        return;
    cJSON *x = cJSON_AddObjectToObject(o, "sharp");
    cJSON_AddNumberToObject(x, "root_switch", t.root);
    cJSON_AddNumberToObject(x, "hops_up", t.hops_up);
    cJSON_AddNumberToObject(x, "switches", t.switches);
    cJSON_AddNumberToObject(x, "reduction_bytes_per_s", rate);
    cJSON_AddNumberToObject(x, "aggregations", (double)st->sharp_aggregations);
    cJSON_AddNumberToObject(x, "delivered_bytes", st->sharp_bytes_delivered);
}

static void coll_print_text(const scn_scenario *s, const packet_spec *p, const nc_plan *plan,
                            const pkc_compare *r)
{
    const pkt_config *c = &p->cfg;
    const pkt_net_stats *st = &r->packet.stats;
    int roce = c->technology == PKT_ROCE;
    double factor = nc_busbw_factor(p->coll, p->ranks);
    double tp = r->packet.time_s, tf = r->flow.time_s;
    printf("# dcsim netbench --tier packet: %s, algorithm %s, %u ranks (one per node: GPUs 0, "
           "%u, ...), %.0f B, %u phase%s, %llu messages, %s fabric of %s, %s\n",
           nc_collective_name(p->coll), nc_algorithm_name(plan->algo), p->ranks, p->stride,
           p->bytes, plan->n_phases, plan->n_phases > 1 ? "s" : "",
           (unsigned long long)r->packet.messages, fabric_topology_name(s->fabric.topology),
           s->fabric.link.name, c->loss == PKT_GO_BACK_N ? "RoCE go-back-N, no PFC"
           : c->loss == PKT_SELECTIVE ? "RoCE selective retransmission, no PFC"
           : roce ? "RoCE PFC" : "InfiniBand credits");
    packet_print_params(p);
    double lat = 0;
    for (uint32_t i = 0; i < plan->n_phases; i++)
        lat += plan->phase[i].latency_s;
    printf("#   phase latency %.4g us over %u phase%s: the plan's (NCCL's base and step "
           "latencies, netcoll.h), added on both tiers\n", lat * 1e6, plan->n_phases,
           plan->n_phases > 1 ? "s" : "");
    print_sharp(s, p, plan, st);
    printf("packet time      %.4f us\n", tp * 1e6);
    printf("flow time        %.4f us (max-min flow tier, same plan and routes)\n", tf * 1e6);
    printf("packet / flow    %.4f\n", tp / tf);
    printf("algbw            %.4g GB/s packet, %.4g flow\n", p->bytes / tp / 1e9,
           p->bytes / tf / 1e9);
    printf("busbw            %.4g GB/s packet, %.4g flow (x %.4g)\n", p->bytes / tp * factor / 1e9,
           p->bytes / tf * factor / 1e9, factor);
    printf("max queue        %.0f B in one egress FIFO, %.0f B held in one switch port (buffer "
           "%.0f B)\n", r->packet.max_queued_bytes, st->max_held_bytes, c->buffer_bytes);
    printf("PFC pauses       %llu\n", (unsigned long long)st->pauses);
    packet_print_congestion(c, st);
    if (p->has_reorder)
        packet_print_reorder(st);
    printf("bytes            %.0f sent, %.0f delivered (plan %.0f)\n", r->packet.sent_bytes,
           st->bytes_delivered + st->sharp_bytes_delivered, r->packet.plan_bytes);
    printf("packets          %llu delivered, %llu packet-hops\n",
           (unsigned long long)(st->packets_delivered + st->sharp_packets_delivered),
           (unsigned long long)st->packet_hops);
    printf("events           %llu (%.3g s wall, %.3g M packet-hops/s)\n",
           (unsigned long long)st->events, r->packet.wall_s,
           r->packet.wall_s > 0 ? st->packet_hops / r->packet.wall_s / 1e6 : 0.0);
}

static void coll_print_json(const scn_scenario *s, const packet_spec *p, const nc_plan *plan,
                            const pkc_compare *r)
{
    const pkt_net_stats *st = &r->packet.stats;
    double factor = nc_busbw_factor(p->coll, p->ranks);
    double tp = r->packet.time_s, tf = r->flow.time_s;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "tier", "packet");
    cJSON_AddStringToObject(o, "op", nc_collective_name(p->coll));
    cJSON_AddStringToObject(o, "algo", nc_algorithm_name(plan->algo));
    cJSON_AddNumberToObject(o, "ranks", p->ranks);
    cJSON_AddNumberToObject(o, "gpus_per_rank_stride", p->stride);
    cJSON_AddNumberToObject(o, "bytes", p->bytes);
    cJSON_AddNumberToObject(o, "phases", plan->n_phases);
    cJSON_AddNumberToObject(o, "messages", (double)r->packet.messages);
    packet_json_params(o, s, p);
    cJSON_AddNumberToObject(o, "packet_time_s", tp);
    cJSON_AddNumberToObject(o, "flow_time_s", tf);
    cJSON_AddNumberToObject(o, "packet_over_flow", tp / tf);
    cJSON_AddNumberToObject(o, "algbw_bytes_per_s", p->bytes / tp);
    cJSON_AddNumberToObject(o, "busbw_bytes_per_s", p->bytes / tp * factor);
    cJSON_AddNumberToObject(o, "flow_algbw_bytes_per_s", p->bytes / tf);
    cJSON_AddNumberToObject(o, "flow_busbw_bytes_per_s", p->bytes / tf * factor);
    cJSON_AddNumberToObject(o, "max_queued_bytes", r->packet.max_queued_bytes);
    cJSON_AddNumberToObject(o, "max_held_bytes", st->max_held_bytes);
    cJSON_AddNumberToObject(o, "pauses", (double)st->pauses);
    packet_json_congestion(o, &p->cfg, st);
    if (p->has_reorder)
        packet_json_reorder(o, &p->cfg, st);
    cJSON_AddNumberToObject(o, "plan_bytes", r->packet.plan_bytes);
    cJSON_AddNumberToObject(o, "sent_bytes", r->packet.sent_bytes);
    cJSON_AddNumberToObject(o, "delivered_bytes", st->bytes_delivered + st->sharp_bytes_delivered);
    cJSON_AddNumberToObject(o, "packets",
                            (double)(st->packets_delivered + st->sharp_packets_delivered));
    json_sharp(o, p, plan, st);
    cJSON_AddNumberToObject(o, "packet_hops", (double)st->packet_hops);
    cJSON_AddNumberToObject(o, "events", (double)st->events);
    cJSON_AddNumberToObject(o, "wall_s", r->packet.wall_s);
    (void)packet_json_print(p, o); /* an error is printed; the exit status stays 0 */
}

/* The collective over ranks 0, stride, 2 stride, ... on both tiers; the
 * exit status. */
int netbench_packet_coll(const net_options *o, const scn_scenario *s, fabric *f, packet_spec *p)
{
    uint32_t *ranks = malloc((size_t)p->ranks * sizeof *ranks);
    if (!ranks) {
        fprintf(stderr, "dcsim netbench: error: out of memory\n");
        return 1;
    }
    for (unsigned i = 0; i < p->ranks; i++)
        ranks[i] = i * p->stride;
    p->graph = &f->g;
    nc_plan plan;
    sim_error err = {0};
    int rc = 0;
    if (nc_plan_build(&plan, &f->nc, p->coll, p->algo, ranks, p->ranks, p->bytes, &err)) {
        rc = err.code == SIM_ERR_NOMEM ? 1 : cli_usage_error("netbench", "--tier packet: %s",
                                                             err.msg);
        if (rc == 1)
            fprintf(stderr, "dcsim netbench: error: %s\n", err.msg);
        free(ranks);
        return rc;
    }
    double hops = coll_min_packet_hops(&plan, p->cfg.mtu_bytes);
    char why[256] = "";
    if (hops > PKB_MAX_PACKET_HOPS) {
        char msg[320], n[16];
        snprintf(msg, sizeof msg, "--ranks %%s: %s of %.0f B would take at least %.3g "
                 "packet-hops (about %.0f s at %.3g M/s); at most %.0e: lower --ranks or --bytes, "
                 "or raise --mtu", nc_collective_name(p->coll), p->bytes, hops,
                 hops / PKB_PACKET_HOPS_PER_S, PKB_PACKET_HOPS_PER_S / 1e6,
                 PKB_MAX_PACKET_HOPS);
        snprintf(n, sizeof n, "%u", p->ranks);
        rc = cli_usage_error("netbench", msg, n);
    } else if (pkc_plan_check(&plan, why, sizeof why)) {
        rc = cli_usage_error("netbench", "--tier packet: %s", why);
    } else if ((rc = packet_memory_check(s, hops, 0))) {
        /* printed */
    } else {
        pkc_compare r;
        int run = pkc_compare_run_series(&f->nc, &p->cfg, &plan,
                                         p->has_trace ? &p->series : NULL, &r, why, sizeof why);
        if (run == -1)
            rc = cli_usage_error("netbench", "--tier packet: %s", why);
        else if (run) {
            fprintf(stderr, "dcsim netbench: error: %s\n", why);
            rc = 1;
        } else {
            if (o->json)
                coll_print_json(s, p, &plan, &r);
            else
                coll_print_text(s, p, &plan, &r);
            rc = packet_trace_finish(o, s, f, p, nc_collective_name(p->coll),
                                     nc_algorithm_name(plan.algo), r.digest, r.events_fired,
                                     r.packet.time_s);
        }
    }
    nc_plan_free(&plan);
    free(ranks);
    return rc;
}
