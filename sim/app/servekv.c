/* servekv.c - the disaggregated pools' KV transfers in `dcsim serve`
 * (servekv.h; docs/serving.md "What the transfers crossed"). A transfer's
 * time splits into three (serving.h serve_result): alone on the replicas'
 * links (latency + bytes / cap), the more its fabric route takes alone
 * (narrower than those links: `route`), and the more the transfers sharing
 * its links cost it (or, under queued contention, the wait behind its
 * sender's earlier ones: `shared`). The text and the JSON give the sums of
 * the last two beside the total (mean x transfers), so a planner sees
 * whether the topology or the load slows the transfers. */
#include "servekv.h"

#include <stdio.h>

#include "fabric.h"

const char *serve_kv_medium_kind(const serve_config *c)
{
    return c->fabric ? "fabric" : "links";
}

void serve_kv_oversubscription(unsigned down, unsigned up, char *buf, size_t size)
{
    snprintf(buf, size, "%u:%u", down ? down : 1, down ? up : 1);
}

void serve_kv_medium(const scn_scenario *s, const serve_config *c, char *buf, size_t size)
{
    const char *in = s->serving_kv_intra, *out = s->serving_kv_inter;
    if (c->fabric) {
        const fabric_config *f = c->fabric;
        char over[32] = "", spine[48] = "";
        if (f->shape.over_down)
            snprintf(over, sizeof over, ", oversubscription %u:%u", f->shape.over_down,
                     f->shape.over_up);
        if (f->shape.spine_over_down)
            snprintf(spine, sizeof spine, ", spine %u:%u", f->shape.spine_over_down,
                     f->shape.spine_over_up);
        snprintf(buf, size, "the %s fabric (%s links%s%s, %s routing%s%s%s)",
                 fabric_topology_name(f->topology), f->link.name, over, spine,
                 topo_balance_name(f->routing.balance), in[0] ? "; " : "", in,
                 in[0] ? " inside a node" : "");
        return;
    }
    snprintf(buf, size, "the replicas' links (%s%s%s%s%s)", in, in[0] ? " inside a node" : "",
             in[0] && out[0] ? ", " : "", out, out[0] ? " between nodes" : "");
}

void serve_kv_print(const scn_scenario *s, const serve_config *c, const serve_result *r)
{
    printf("transfer   %llu KV transfers, %.6g GB; time mean %.4g ms, P50 %.4g ms, P99 %.4g "
           "ms, max %.4g ms; prefill pool busy %.1f%%, decode pool busy %.1f%%\n",
           (unsigned long long)r->transfers, r->transfer_bytes / 1e9, r->transfer_mean_s * 1e3,
           r->transfer_p50_s * 1e3, r->transfer_p99_s * 1e3, r->transfer_max_s * 1e3,
           100 * r->prefill_busy_fraction, 100 * r->decode_busy_fraction);
    char medium[512];
    serve_kv_medium(s, c, medium, sizeof medium);
    double total = r->transfer_mean_s * (double)r->transfers;
    double links = total - r->transfer_route_s - r->transfer_shared_s;
    printf("           over %s: %.6g s in all = %.6g s alone on the replicas' links",
           medium, total, links);
    if (c->fabric)
        printf(" + %.6g s alone on the fabric's routes, narrower", r->transfer_route_s);
    printf(" + %.6g s %s (%.2f%%); at most %llu in flight at once\n", r->transfer_shared_s,
           c->kv_contention == SERVE_KV_QUEUED ? "queued behind the sender's earlier transfers"
                                               : "slowed by the transfers sharing their links",
           total > 0 ? 100 * r->transfer_shared_s / total : 0,
           (unsigned long long)r->transfers_in_flight_max);
}

void serve_kv_json(cJSON *root, const scn_scenario *s, const serve_config *c,
                   const serve_result *r)
{
    cJSON *p = cJSON_AddObjectToObject(root, "disaggregated");
    cJSON_AddNumberToObject(p, "prefill_replicas", c->prefill_replicas);
    cJSON_AddNumberToObject(p, "prefill_tp", c->prefill_tp);
    cJSON_AddStringToObject(p, "contention", serve_kv_contention_name(c->kv_contention));
    cJSON_AddStringToObject(p, "medium", serve_kv_medium_kind(c));
    cJSON_AddStringToObject(p, "intra_link", s->serving_kv_intra);
    cJSON_AddStringToObject(p, "inter_link", s->serving_kv_inter);
    cJSON_AddNumberToObject(p, "intra_bytes_per_s",
                            s->serving_kv_intra[0] ? c->kv_intra_bytes_per_s : 0);
    cJSON_AddNumberToObject(p, "inter_bytes_per_s",
                            s->serving_kv_inter[0] ? c->kv_inter_bytes_per_s : 0);
    cJSON_AddNumberToObject(p, "intra_latency_s",
                            s->serving_kv_intra[0] ? c->kv_intra_latency_s : 0);
    cJSON_AddNumberToObject(p, "inter_latency_s",
                            s->serving_kv_inter[0] ? c->kv_inter_latency_s : 0);
    if (c->fabric) { /* flat, so that --csv keeps them */
        const fabric_config *f = c->fabric;
        char over[32];
        cJSON_AddStringToObject(p, "fabric_topology", fabric_topology_name(f->topology));
        cJSON_AddStringToObject(p, "fabric_link", f->link.name);
        serve_kv_oversubscription(f->shape.over_down, f->shape.over_up, over, sizeof over);
        cJSON_AddStringToObject(p, "fabric_oversubscription", over);
        serve_kv_oversubscription(f->shape.spine_over_down, f->shape.spine_over_up, over,
                                  sizeof over);
        cJSON_AddStringToObject(p, "fabric_spine_oversubscription", over);
        cJSON_AddStringToObject(p, "fabric_routing", topo_balance_name(f->routing.balance));
    }
    const struct { const char *name; double value; } v[] = {
        {"transfers", (double)r->transfers}, {"transfer_bytes", r->transfer_bytes},
        {"transfer_mean_s", r->transfer_mean_s}, {"transfer_p50_s", r->transfer_p50_s},
        {"transfer_p99_s", r->transfer_p99_s}, {"transfer_max_s", r->transfer_max_s},
        {"transfer_route_s", r->transfer_route_s},
        {"transfer_shared_s", r->transfer_shared_s},
        {"transfers_in_flight_max", (double)r->transfers_in_flight_max},
        {"prefill_busy_fraction", r->prefill_busy_fraction},
        {"decode_busy_fraction", r->decode_busy_fraction}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        cJSON_AddNumberToObject(p, v[i].name, v[i].value);
}
