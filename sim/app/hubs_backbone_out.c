/* hubs_backbone_out.c - what `dcsim hubs` prints and writes of a shared
 * backbone (docs/hubs.md "A shared backbone"; hubscmd.h): per link the TB
 * moved each way and its utilisation over the horizon, the busiest link, the
 * waits sharing caused. */
#include <stdio.h>

#include "hubscmd.h"

/* directed link d's utilisation over [0, horizon]: bits / (bandwidth x horizon) */
static double util(const hubs_run *run, unsigned d)
{
    const hubs_backbone *b = &run->cfg.backbone->bb;
    double cap = b->link[d / 2].bandwidth_bps * run->r.horizon_s;
    return cap > 0 ? run->r.link_bits[d] / cap : 0;
}

/* the busiest directed link (the lower index on a tie) */
static unsigned busiest(const hubs_run *run)
{
    unsigned best = 0;
    for (unsigned d = 1; d < 2 * run->cfg.backbone->bb.n_links; d++)
        if (util(run, d) > util(run, best))
            best = d;
    return best;
}

/* link l's own charge: the TB that crossed it, either way, x its cost per TB */
static double link_cost(const hubs_run *run, unsigned l)
{
    const hubs_link *k = &run->cfg.backbone->bb.link[l];
    return (run->r.link_bits[2 * l] + run->r.link_bits[2 * l + 1]) / 8e12 * k->cost_per_tb;
}

static const char *end_of(const hubs_backbone *b, unsigned d, int head)
{
    const hubs_link *k = &b->link[d / 2];
    return b->node[(d & 1) == (unsigned)head ? k->a : k->b];
}

void hubs_backbone_print(const hubs_run *run, const hubs_run *base)
{
    const hubs_routes *R = run->cfg.backbone;
    if (!R)
        return;
    const hubs_backbone *b = &R->bb;
    unsigned d = busiest(run), e = busiest(base);
    printf("links      busiest %s -> %s, %.4g %% of its capacity over the horizon (baseline: "
           "%s -> %s, %.4g %%); sharing waited %.6g h (datasets %.6g h, results %.6g h) "
           "against %.6g h\n", end_of(b, d, 0), end_of(b, d, 1), 100 * util(run, d),
           end_of(b, e, 0), end_of(b, e, 1), 100 * util(base, e),
           (run->r.share_in_s + run->r.share_out_s) / 3600, run->r.share_in_s / 3600,
           run->r.share_out_s / 3600, (base->r.share_in_s + base->r.share_out_s) / 3600);
    printf("link       %-24s %9s %8s %11s %11s %7s %7s %11s\n", "a - b", "Gb/s", "RTT ms",
           "TB a->b", "TB b->a", "util %", "b->a %", "cost CNY");
    for (unsigned l = 0; l < b->n_links; l++) {
        const hubs_link *k = &b->link[l];
        char name[2 * HUBS_BB_NAME + 4];
        snprintf(name, sizeof name, "%s - %s", b->node[k->a], b->node[k->b]);
        printf("link       %-24s %9.4g %8.4g %11.6g %11.6g %7.3f %7.3f %11.6g\n", name,
               k->bandwidth_bps / 1e9, k->rtt_s * 1e3, run->r.link_bits[2 * l] / 8e12,
               run->r.link_bits[2 * l + 1] / 8e12, 100 * util(run, 2 * l),
               100 * util(run, 2 * l + 1), link_cost(run, l));
    }
}

void hubs_backbone_describe(const hubs_config *c)
{
    const hubs_backbone *b = &c->backbone->bb;
    printf("backbone   shared: %u links between %u nodes (the scenario's); transfers are flows "
           "on the route of least RTT, sharing each link's bandwidth max-min fairly while they "
           "overlap; %.4g CNY per TB moved\n", b->n_links, b->n_nodes, c->cost_per_tb);
}

cJSON *hubs_backbone_json(const hubs_run *run)
{
    const hubs_backbone *b = &run->cfg.backbone->bb;
    cJSON *o = cJSON_CreateObject();
    cJSON *a = cJSON_AddArrayToObject(o, "links");
    for (unsigned l = 0; l < b->n_links; l++) {
        const hubs_link *k = &b->link[l];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "a", b->node[k->a]);
        cJSON_AddStringToObject(x, "b", b->node[k->b]);
        cJSON_AddNumberToObject(x, "bandwidth_bps", k->bandwidth_bps);
        cJSON_AddNumberToObject(x, "rtt_s", k->rtt_s);
        cJSON_AddNumberToObject(x, "tb_ab", run->r.link_bits[2 * l] / 8e12);
        cJSON_AddNumberToObject(x, "tb_ba", run->r.link_bits[2 * l + 1] / 8e12);
        cJSON_AddNumberToObject(x, "utilisation_ab", util(run, 2 * l));
        cJSON_AddNumberToObject(x, "utilisation_ba", util(run, 2 * l + 1));
        cJSON_AddNumberToObject(x, "cost_per_tb", k->cost_per_tb);
        cJSON_AddNumberToObject(x, "cost", link_cost(run, l));
        cJSON_AddItemToArray(a, x);
    }
    unsigned d = busiest(run);
    cJSON_AddStringToObject(o, "busiest_from", end_of(b, d, 0));
    cJSON_AddStringToObject(o, "busiest_to", end_of(b, d, 1));
    cJSON_AddNumberToObject(o, "busiest_utilisation", util(run, d));
    cJSON_AddNumberToObject(o, "sharing_wait_in_s", run->r.share_in_s);
    cJSON_AddNumberToObject(o, "sharing_wait_out_s", run->r.share_out_s);
    return o;
}
