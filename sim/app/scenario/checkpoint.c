/* checkpoint.c - <checkpoint>: interval (a duration, "auto": Daly's
 * optimum, or "adaptive": Daly's for the failure rate seen so far) or every (iterations), write-time or size with storage and node
 * bandwidths, mode="async" with snapshot-time and persist-slowdown.
 */
#include "loader.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <libxml/tree.h>

/* The checkpoint's size and what it costs: size="auto" is the model's
 * weights and optimizer state, each written once however many replicas hold
 * them (Megatron-style distributed checkpoints): P x (weight bytes + 12, the
 * fp32 master copy and Adam's two moments; ZeRO, Rajbhandari et al. 2020).
 * write-time, or size / storage-write bandwidth (every writer shares it);
 * storage-read adds size / bandwidth to each restart (loading it back). */
static int checkpoint_volume(loader *ld, xmlNode *ck, scn_scenario *s)
{
    campaign_config *c = &s->campaign;
    char text[16];
    copy_attr(ck, "size", text, sizeof text);
    int rc = 0;
    if (!strcmp(text, "auto")) {
        double weight = s->precision == PREC_FP32 ? 4 : 2;
        s->checkpoint_bytes = c->model_params * (weight + 12);
    } else if (text[0]) {
        rc = get_quantity(ld, ck, "size", SIM_DIM_DATA, 1, &s->checkpoint_bytes);
        if (!rc)
            rc = positive(ld, ck, "size", s->checkpoint_bytes, INFINITY, "");
    }
    double write_bw = 0, read_bw = 0;
    if (!rc && has_attr(ck, "storage-write")) {
        rc = get_quantity(ld, ck, "storage-write", SIM_DIM_BANDWIDTH, 1, &write_bw);
        if (!rc)
            rc = positive(ld, ck, "storage-write", write_bw, INFINITY, "");
    }
    if (!rc && has_attr(ck, "storage-read")) {
        rc = get_quantity(ld, ck, "storage-read", SIM_DIM_BANDWIDTH, 1, &read_bw);
        if (!rc)
            rc = positive(ld, ck, "storage-read", read_bw, INFINITY, "");
    }
    /* per-node limits (a node's NIC or storage link): every node writes and
     * reads its shard, so together at most nodes x the node's bandwidth */
    double nodes = ceil((double)c->gpu_count / (c->gpus_per_node ? c->gpus_per_node : 8));
    static const char *const node_attr[] = {"node-write", "node-read"};
    double *total_bw[] = {&write_bw, &read_bw};
    for (int i = 0; i < 2 && !rc; i++) {
        if (!has_attr(ck, node_attr[i]))
            continue;
        double per_node = 0;
        rc = get_quantity(ld, ck, node_attr[i], SIM_DIM_BANDWIDTH, 1, &per_node);
        if (!rc)
            rc = positive(ld, ck, node_attr[i], per_node, INFINITY, "");
        if (!rc && (*total_bw[i] == 0 || nodes * per_node < *total_bw[i]))
            *total_bw[i] = nodes * per_node;
    }
    if (rc)
        return rc;
    if ((write_bw > 0 || read_bw > 0) && !(s->checkpoint_bytes > 0))
        return node_error(ld, ck, NULL, "storage bandwidths need a size (\"auto\": the model's "
                          "weights and optimizer state, or a quantity such as \"5.7TB\")");
    if (has_attr(ck, "write-time")) {
        rc = get_quantity(ld, ck, "write-time", SIM_DIM_TIME, 1, &c->checkpoint_write_s);
        if (!rc)
            rc = non_negative(ld, ck, "write-time", c->checkpoint_write_s);
    } else if (write_bw > 0) {
        c->checkpoint_write_s = s->checkpoint_bytes / write_bw;
    } else {
        rc = node_error(ld, ck, NULL, "give write-time, or size and storage-write to derive it");
    }
    if (!rc && read_bw > 0)
        c->restart_s += s->checkpoint_bytes / read_bw;
    return rc;
}

/* interval="adaptive": the estimate's memory (adapt-window) and where it
 * starts (prior-mtbf, the cluster's MTBF when not given: *rate, replaced) */
static int checkpoint_adaptive(loader *ld, xmlNode *ck, scn_scenario *s, double *rate)
{
    campaign_config *c = &s->campaign;
    int rc = 0;
    if (has_attr(ck, "prior-mtbf")) {
        double mtbf = 0;
        rc = get_quantity(ld, ck, "prior-mtbf", SIM_DIM_TIME, 1, &mtbf);
        if (!rc)
            rc = positive(ld, ck, "prior-mtbf", mtbf, INFINITY, "");
        *rate = rc ? 0 : 1 / mtbf;
    }
    c->checkpoint_adapt_prior_rate_per_s = *rate;
    s->adapt_window_given = has_attr(ck, "adapt-window");
    if (!rc && s->adapt_window_given) {
        rc = get_quantity(ld, ck, "adapt-window", SIM_DIM_TIME, 1, &c->checkpoint_adapt_window_s);
        if (!rc)
            rc = positive(ld, ck, "adapt-window", c->checkpoint_adapt_window_s, 1e15, " s");
    }
    return rc;
}

int parse_checkpoint(loader *ld, xmlNode *root, scn_scenario *s)
{
    xmlNode *ck = child(root, "checkpoint");
    campaign_config *c = &s->campaign;
    char text[16];
    copy_attr(ck, "interval", text, sizeof text);
    s->checkpoint_auto = !strcmp(text, "auto");
    s->checkpoint_adaptive = !strcmp(text, "adaptive");
    int rc = checkpoint_volume(ld, ck, s);
    copy_attr(ck, "mode", text, sizeof text);
    c->checkpoint_async = !strcmp(text, "async");
    if (!rc && c->checkpoint_async && c->maintenance_every_s > 0)
        rc = node_error(ld, ck, "mode", "maintenance windows are modelled with blocking "
                        "checkpoints only");
    if (!rc && !c->checkpoint_async &&
        (has_attr(ck, "snapshot-time") || has_attr(ck, "persist-slowdown")))
        rc = node_error(ld, ck, NULL, "snapshot-time and persist-slowdown belong to "
                        "mode=\"async\"");
    if (!rc && c->checkpoint_async) { /* both required: no published figures to default to */
        rc = get_quantity(ld, ck, "snapshot-time", SIM_DIM_TIME, 1, &c->checkpoint_snapshot_s);
        if (!rc)
            rc = non_negative(ld, ck, "snapshot-time", c->checkpoint_snapshot_s);
        if (!rc)
            rc = get_quantity(ld, ck, "persist-slowdown", SIM_DIM_FRACTION, 1,
                              &c->persist_slowdown);
        if (!rc && !(c->persist_slowdown >= 0 && c->persist_slowdown < 1))
            rc = node_error(ld, ck, "persist-slowdown",
                            "persist-slowdown must be from 0%% to below 100%%");
    }
    if (!rc && has_attr(ck, "every") == has_attr(ck, "interval"))
        return node_error(ld, ck, NULL, "give exactly one of interval (a duration, or \"auto\") "
                          "and every (a number of iterations)");
    if (!rc && has_attr(ck, "every")) {
        double every = 0;
        rc = get_quantity(ld, ck, "every", SIM_DIM_COUNT, 1, &every);
        if (!rc)
            rc = whole(ld, ck, "every", every);
        if (!rc)
            rc = positive(ld, ck, "every", every, 1e15, " iterations");
        c->checkpoint_every = rc ? 0 : (uint64_t)every;
        return rc;
    }
    if (!rc && !s->checkpoint_adaptive &&
        (has_attr(ck, "adapt-window") || has_attr(ck, "prior-mtbf")))
        return node_error(ld, ck, has_attr(ck, "adapt-window") ? "adapt-window" : "prior-mtbf",
                          "adapt-window and prior-mtbf belong to interval=\"adaptive\"");
    if (rc || s->checkpoint_auto || s->checkpoint_adaptive) {
        if (rc)
            return rc;
        /* Daly's optimum for this cluster's failure rate (every cause, the
         * rate the summary's cluster MTBF is 1 / of) and write time */
        const char *how = s->checkpoint_auto ? "interval=\"auto\" (Daly's optimum)"
                                             : "interval=\"adaptive\"";
        double cluster_rate = campaign_cluster_failure_rate_per_s(c);
        if (s->checkpoint_adaptive && (rc = checkpoint_adaptive(ld, ck, s, &cluster_rate)))
            return rc;
        if (!(cluster_rate > 0))
            return node_error(ld, ck, "interval", "%s needs a failure rate above 0: give a "
                              "<reliability><failure> or inventory, or a fixed interval", how);
        c->checkpoint_interval_s = campaign_daly_interval_s(c->checkpoint_write_s,
                                                            1 / cluster_rate);
        if (!(c->checkpoint_interval_s > 0))
            return node_error(ld, ck, "write-time", "%s needs a write time above 0 (with free "
                              "checkpoints the optimum is every iteration)", how);
        if (s->checkpoint_adaptive && !s->adapt_window_given)
            c->checkpoint_adapt_window_s = SCN_ADAPT_WINDOW_MTBFS / cluster_rate;
        /* a memory shorter than the time between failures forgets each one
         * before the next: the estimate sinks to 0 and checkpoints stop */
        double mtbf = 1 / campaign_cluster_failure_rate_per_s(c);
        if (s->checkpoint_adaptive && !(c->checkpoint_adapt_window_s >= mtbf))
            return node_error(ld, ck, s->adapt_window_given ? "adapt-window" : "prior-mtbf",
                              "the estimate's memory (adapt-window, %.4g s) is shorter than "
                              "the cluster's MTBF (%.4g s): it would forget every failure "
                              "before the next; give a longer adapt-window",
                              c->checkpoint_adapt_window_s, mtbf);
        return 0;
    }
    rc = get_quantity(ld, ck, "interval", SIM_DIM_TIME, 1, &c->checkpoint_interval_s);
    if (!rc)
        rc = positive(ld, ck, "interval", c->checkpoint_interval_s, INFINITY, "");
    return rc;
}
