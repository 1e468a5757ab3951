/* hubs_backbone_out.c - what `dcsim hubs` prints and writes of a shared
 * backbone (docs/hubs.md "A shared backbone"; hubscmd.h): per link the TB
 * moved each way, its busy time, peak and mean utilisation over the horizon,
 * the busiest link, the waits sharing caused; the --csv rows and the HDF5
 * tables /hubs/links and /hubs/transfers (docs/trace-format.md). */
#include <stdio.h>
#include <stdlib.h>

#include "h5util.h"
#include "hubscmd.h"

/* directed link d's utilisation over [0, horizon]: bits / (bandwidth x horizon) */
static double util(const hubs_run *run, unsigned d)
{
    const hubs_backbone *b = &run->cfg.backbone->bb;
    double cap = b->link[d / 2].bandwidth_bps * run->r.horizon_s;
    return cap > 0 ? run->r.link_bits[d] / cap : 0;
}

/* directed link d's peak: the most its flows got together over its bandwidth */
static double peak(const hubs_run *run, unsigned d)
{
    return run->r.link_peak_bps[d] / run->cfg.backbone->bb.link[d / 2].bandwidth_bps;
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
        cJSON_AddNumberToObject(x, "busy_ab_s", run->r.link_busy_s[2 * l]);
        cJSON_AddNumberToObject(x, "busy_ba_s", run->r.link_busy_s[2 * l + 1]);
        cJSON_AddNumberToObject(x, "peak_utilisation_ab", peak(run, 2 * l));
        cJSON_AddNumberToObject(x, "peak_utilisation_ba", peak(run, 2 * l + 1));
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
    cJSON_AddNumberToObject(o, "sharing_wait_s", hubs_backbone_wait_s(run));
    cJSON_AddNumberToObject(o, "link_tb", hubs_backbone_link_tb(run));
    cJSON_AddNumberToObject(o, "rounds", run->r.backbone_rounds);
    return o;
}

double hubs_backbone_wait_s(const hubs_run *run)
{
    return run->r.share_in_s + run->r.share_out_s;
}

double hubs_backbone_busiest(const hubs_run *run)
{
    return util(run, busiest(run));
}

double hubs_backbone_link_tb(const hubs_run *run)
{
    double bits = 0;
    for (unsigned d = 0; d < 2 * run->cfg.backbone->bb.n_links; d++)
        bits += run->r.link_bits[d];
    return bits / 8e12;
}

void hubs_backbone_csv(cJSON *rows, const char *table, const char *policy, const cJSON *bb)
{
    char name[32];
    snprintf(name, sizeof name, "%s link", table);
    const cJSON *links = cJSON_GetObjectItemCaseSensitive(bb, "links");
    for (const cJSON *l = links ? links->child : NULL; l; l = l->next)
        cJSON_AddItemToArray(rows, hubs_csv_row(name, policy, l));
    snprintf(name, sizeof name, "%s backbone", table);
    cJSON *r = hubs_csv_row(name, policy, bb); /* its links array is left out of the CSV */
    cJSON_AddItemToArray(rows, r);
}

typedef struct link_row {
    uint32_t id, link, from, to;
    double bandwidth_bps, rtt_s, tb, busy_s, peak_utilisation, mean_utilisation, cost_per_tb;
} link_row;

typedef struct transfer_row {
    uint32_t id, hub, origin;
    double dataset_tb, dataset_start_s, at_hub_s, dataset_wait_s, result_tb, result_start_s,
        result_done_s, result_wait_s;
} transfer_row;

static const char *const link_units[] = {"", "", "", "", "b/s", "s", "TB", "s", "1", "1",
                                         "CNY/TB"};
static const char *const transfer_units[] = {"", "", "", "TB", "s", "s", "s", "TB", "s", "s",
                                             "s"};

#define F(T, name, type) H5Tinsert(t, #name, HOFFSET(T, name), type)

static int put_links(hid_t g, const hubs_run *run)
{
    const hubs_backbone *b = &run->cfg.backbone->bb;
    unsigned n = 2 * b->n_links;
    link_row *rows = calloc(n, sizeof *rows);
    if (!rows)
        return -1;
    for (unsigned d = 0; d < n; d++) {
        const hubs_link *k = &b->link[d / 2];
        rows[d] = (link_row){d, d / 2, d & 1 ? k->b : k->a, d & 1 ? k->a : k->b,
                             k->bandwidth_bps, k->rtt_s, run->r.link_bits[d] / 8e12,
                             run->r.link_busy_s[d], peak(run, d), util(run, d), k->cost_per_tb};
    }
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(link_row));
    F(link_row, id, H5T_NATIVE_UINT32); F(link_row, link, H5T_NATIVE_UINT32);
    F(link_row, from, H5T_NATIVE_UINT32); F(link_row, to, H5T_NATIVE_UINT32);
    F(link_row, bandwidth_bps, H5T_NATIVE_DOUBLE); F(link_row, rtt_s, H5T_NATIVE_DOUBLE);
    F(link_row, tb, H5T_NATIVE_DOUBLE); F(link_row, busy_s, H5T_NATIVE_DOUBLE);
    F(link_row, peak_utilisation, H5T_NATIVE_DOUBLE);
    F(link_row, mean_utilisation, H5T_NATIVE_DOUBLE); F(link_row, cost_per_tb, H5T_NATIVE_DOUBLE);
    int rc = h5_put_table(g, "links", t, n, rows, link_units, sizeof link_units / sizeof *link_units,
                          "one row per directed link of the backbone (id 2 l: the l-th <link> "
                          "a -> b, 2 l + 1: b -> a; from and to index the group's node_names): "
                          "bandwidth, RTT, the TB that crossed it, the time a transfer was on "
                          "it, the most its transfers got together over the bandwidth (peak), "
                          "its TB over bandwidth x horizon (mean), its cost per TB");
    H5Tclose(t);
    free(rows);
    return rc;
}

static int put_transfers(hid_t g, const hubs_run *run)
{
    const hubs_config *c = &run->cfg;
    transfer_row *rows = malloc((size_t)(c->n_jobs ? c->n_jobs : 1) * sizeof *rows);
    if (!rows)
        return -1;
    for (uint32_t i = 0; i < c->n_jobs; i++) {
        const hubs_job_spec *j = &c->jobs[i];
        const hubs_job *x = &run->r.jobs[i];
        rows[i] = (transfer_row){i, x->hub, j->origin, j->dataset_tb, x->in_start_s, x->submit_s,
                                 x->in_share_s, j->result_tb, x->end_s, x->back_done_s,
                                 x->back_wait_s};
    }
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(transfer_row));
    F(transfer_row, id, H5T_NATIVE_UINT32); F(transfer_row, hub, H5T_NATIVE_UINT32);
    F(transfer_row, origin, H5T_NATIVE_UINT32); F(transfer_row, dataset_tb, H5T_NATIVE_DOUBLE);
    F(transfer_row, dataset_start_s, H5T_NATIVE_DOUBLE); F(transfer_row, at_hub_s, H5T_NATIVE_DOUBLE);
    F(transfer_row, dataset_wait_s, H5T_NATIVE_DOUBLE); F(transfer_row, result_tb, H5T_NATIVE_DOUBLE);
    F(transfer_row, result_start_s, H5T_NATIVE_DOUBLE);
    F(transfer_row, result_done_s, H5T_NATIVE_DOUBLE);
    F(transfer_row, result_wait_s, H5T_NATIVE_DOUBLE);
    int rc = h5_put_table(g, "transfers", t, c->n_jobs, rows, transfer_units,
                          sizeof transfer_units / sizeof *transfer_units,
                          "one row per job in arrival order (as /hubs/jobs): its hub and origin, "
                          "the dataset's TB, its start on the backbone, its time at the hub "
                          "(the last bit + the route's RTT) and the wait sharing added (beyond "
                          "TB / the route's least bandwidth); the result's TB, its start (the "
                          "job's end), its time back at the origin and the wait sharing added");
    H5Tclose(t);
    free(rows);
    return rc;
}

int hubs_backbone_h5(hid_t g, const hubs_run *run, const hubs_run *base)
{
    const hubs_backbone *b = &run->cfg.backbone->bb;
    const char *nodes[HUBS_BB_MAX_NODES];
    for (unsigned k = 0; k < b->n_nodes; k++)
        nodes[k] = b->node[k];
    const struct { const char *name; double value; } v[] = {
        {"backbone_wait_s", hubs_backbone_wait_s(run)},
        {"backbone_busiest_utilisation", hubs_backbone_busiest(run)},
        {"backbone_link_tb", hubs_backbone_link_tb(run)},
        {"baseline_backbone_wait_s", hubs_backbone_wait_s(base)},
        {"baseline_backbone_busiest_utilisation", hubs_backbone_busiest(base)},
        {"baseline_backbone_link_tb", hubs_backbone_link_tb(base)}};
    int rc = h5_attr_texts(g, "node_names", nodes, b->n_nodes);
    for (size_t i = 0; !rc && i < sizeof v / sizeof v[0]; i++)
        rc = h5_attr_scalar(g, v[i].name, H5T_NATIVE_DOUBLE, &v[i].value);
    if (!rc)
        rc = put_links(g, run);
    if (!rc)
        rc = put_transfers(g, run);
    return rc;
}
