/* stepjson.c - `dcsim step --json` / `--csv` (see stepjson.h; the document's
 * keys are listed in docs/json.md and docs/json/dcsim-1.schema.json). */
#include "stepjson.h"

#include <stdint.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "compute.h"
#include "fabric.h"
#include "hardware.h"
#include "jsonout.h"
#include "workload.h"

/* the flow log (--flow-log): one object per flow, in start order */
static void json_flows(cJSON *o, const step_profile *p)
{
    cJSON_AddNumberToObject(o, "flows_total", (double)p->flows_total);
    cJSON_AddBoolToObject(o, "flows_truncated", p->flows_truncated);
    cJSON *a = cJSON_AddArrayToObject(o, "flows");
    for (size_t i = 0; i < p->n_flows; i++) {
        const step_flow *f = &p->flows[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "kind", step_flow_kind_name(f->kind));
        /* PP, TP, CP and EP flows belong to a replica's micro-batch */
        int per_microbatch = f->kind == STEP_FLOW_PP || f->kind >= STEP_FLOW_TP;
        if (per_microbatch) {
            cJSON_AddNumberToObject(x, "replica", f->replica);
            cJSON_AddBoolToObject(x, "backward", f->backward);
        }
        cJSON_AddNumberToObject(x, "stage", f->stage);
        cJSON_AddNumberToObject(x, "chunk", f->chunk);
        cJSON_AddNumberToObject(x, per_microbatch ? "microbatch" : "bucket", f->index);
        cJSON_AddNumberToObject(x, "phase", f->phase);
        cJSON_AddNumberToObject(x, "src", f->src);
        if (f->dst == UINT32_MAX)
            cJSON_AddNullToObject(x, "dst");
        else
            cJSON_AddNumberToObject(x, "dst", f->dst);
        cJSON_AddNumberToObject(x, "connections", f->n_conn);
        cJSON_AddNumberToObject(x, "bytes", f->bytes);
        cJSON *t = cJSON_AddObjectToObject(x, "tier_bytes");
        for (int k = 0; k < STEP_TIERS; k++)
            cJSON_AddNumberToObject(t, step_tier_name(k), f->tier_bytes[k]);
        cJSON_AddNumberToObject(x, "start_s", f->start_s);
        cJSON_AddNumberToObject(x, "end_s", f->end_s);
        cJSON_AddItemToArray(a, x);
    }
}

/* the packet network's parameters and counters (--network packet) */
static void json_packet(cJSON *o, const step_profile *p, const app_packet_cfg *pc,
                        const step_trace *tr)
{
    const pkt_net_stats *st = &p->packet_stats;
    cJSON *k = cJSON_AddObjectToObject(o, "packet_network");
    cJSON_AddStringToObject(k, "flow_control", pc->cfg.technology == PKT_ROCE ? "pfc"
                                                                            : "credits");
    cJSON_AddNumberToObject(k, "mtu_bytes", pc->cfg.mtu_bytes);
    cJSON_AddStringToObject(k, "mtu_from", pc->mtu_from);
    cJSON_AddNumberToObject(k, "buffer_bytes", pc->cfg.buffer_bytes);
    cJSON_AddStringToObject(k, "buffer_from", pc->buffer_from);
    cJSON_AddNumberToObject(k, "hop_latency_s", pc->cfg.hop_latency_s);
    cJSON_AddStringToObject(k, "hop_latency_from", pc->latency_from);
    if (pc->has_pfc) {
        cJSON_AddNumberToObject(k, "xoff_bytes", pc->cfg.xoff_bytes);
        cJSON_AddNumberToObject(k, "xon_bytes", pc->cfg.xon_bytes);
        cJSON_AddStringToObject(k, "pfc_from", pc->pfc_rule);
    }
    app_packet_ibcc_json(k, &pc->cfg);
    cJSON_AddNumberToObject(k, "plans", (double)p->packet_plans);
    cJSON_AddNumberToObject(k, "messages", (double)st->messages_sent);
    cJSON_AddNumberToObject(k, "packets", (double)st->packets_delivered);
    cJSON_AddNumberToObject(k, "packet_hops", (double)st->packet_hops);
    cJSON_AddNumberToObject(k, "packet_hops_estimate", p->packet_hops_estimate);
    cJSON_AddNumberToObject(k, "events", (double)st->events);
    cJSON_AddNumberToObject(k, "pauses", (double)st->pauses);
    cJSON_AddNumberToObject(k, "max_held_bytes", st->max_held_bytes);
    cJSON_AddNumberToObject(k, "bytes_delivered", st->bytes_delivered);
    cJSON_AddNumberToObject(k, "wall_s", p->packet_wall_s);
    cJSON_AddStringToObject(k, "not_modelled", "flow log, overlap links, symmetry folding");
    const pkt_series *ser = p->packet_series;
    if (!tr->has || !ser)
        return;
    cJSON *t = cJSON_AddObjectToObject(k, "trace");
    cJSON_AddStringToObject(t, "path", tr->out.path);
    cJSON_AddNumberToObject(t, "bins", pkt_series_bins(ser));
    cJSON_AddNumberToObject(t, "dt_s", pkt_series_dt(ser));
    cJSON_AddNumberToObject(t, "first_dt_s", tr->bins.dt_s);
    cJSON_AddStringToObject(t, "first_dt_from", tr->bins.dt_from);
    cJSON_AddNumberToObject(t, "max_bins", tr->bins.max_bins);
    cJSON_AddStringToObject(t, "max_bins_from", tr->bins.bins_from);
    cJSON_AddNumberToObject(t, "merges", pkt_series_merges(ser));
    cJSON_AddNumberToObject(t, "links", pkt_series_stored(ser));
    cJSON_AddNumberToObject(t, "fabric_links", pkt_series_links(ser));
}

int step_json_emit(const step_profile *p, int flows, const app_packet_cfg *pc,
                   const step_trace *tr, const ff_state *st, const app_step_failure *fx, int csv)
{
    cJSON *o = jsonout_begin("step");
    if (!o)
        return jsonout_emit(NULL, JSONOUT_JSON, NULL, NULL);
    cJSON_AddNumberToObject(o, "iteration_s", p->iteration_s);
    cJSON_AddNumberToObject(o, "tokens_per_s", p->tokens_per_s);
    cJSON_AddNumberToObject(o, "model_flops_per_gpu_per_s", p->model_flops_per_gpu_s);
    cJSON_AddNumberToObject(o, "mfu", p->mfu);
    cJSON_AddNumberToObject(o, "hfu", p->hfu);
    cJSON_AddNumberToObject(o, "critical_stage", p->critical_stage);
    cJSON *parts = cJSON_AddObjectToObject(o, "critical_stage_s");
    for (int k = 0; k < STEP_PART_COUNT; k++)
        cJSON_AddNumberToObject(parts, step_part_name(k), p->part_s[k]);
    cJSON *stages = cJSON_AddArrayToObject(o, "stages");
    for (unsigned i = 0; i < p->n_stages; i++) {
        cJSON *st = cJSON_CreateObject();
        for (int k = 0; k < STEP_PART_COUNT; k++)
            cJSON_AddNumberToObject(st, step_part_name(k), p->stage[i].part_s[k]);
        cJSON_AddNumberToObject(st, "end_s", p->stage[i].end_s);
        cJSON_AddItemToArray(stages, st);
    }
    cJSON *tiers = cJSON_AddObjectToObject(o, "fabric_bytes");
    cJSON *peaks = cJSON_AddObjectToObject(o, "fabric_peak_utilisation");
    for (int t = 0; t < STEP_TIERS; t++) {
        cJSON_AddNumberToObject(tiers, step_tier_name(t), p->tier_bytes[t]);
        cJSON_AddNumberToObject(peaks, step_tier_name(t), p->tier_peak_utilisation[t]);
    }
    cJSON *kernels = cJSON_AddObjectToObject(o, "compute_by_kernel_s");
    for (int k = 0; k < OP_KIND_COUNT; k++)
        cJSON_AddNumberToObject(kernels, step_kernel_name(k), p->kernel_s[k]);
    cJSON_AddNumberToObject(kernels, "sm-contention", p->sm_contention_s);
    cJSON_AddNumberToObject(o, "dp_sm_contention_s", p->dp_sm_contention_s);
    cJSON_AddBoolToObject(o, "sm_contention_unpriced", p->sm_contention_unpriced);
    cJSON *colls = cJSON_AddObjectToObject(o, "collectives_s");
    for (int k = 0; k < COMM_KIND_COUNT; k++) {
        if (!(p->coll_total_s[k] > 0))
            continue;
        cJSON *c = cJSON_AddObjectToObject(colls, comm_kind_name(k));
        cJSON_AddNumberToObject(c, "total", p->coll_total_s[k]);
        cJSON_AddNumberToObject(c, "exposed", p->coll_exposed_s[k]);
        cJSON_AddNumberToObject(c, "hidden", p->coll_hidden_s[k]);
    }
    cJSON *cb = cJSON_AddObjectToObject(o, "comm_bytes"); /* per GPU per iteration */
    for (int k = 0; k < COMM_KIND_COUNT; k++)
        cJSON_AddNumberToObject(cb, comm_kind_name(k), p->comm_bytes[k]);
    cJSON_AddNumberToObject(o, "bubble_s", p->part_s[STEP_BUBBLE]);
    if (p->n_bins) { /* per tier with traffic: utilisation per time bin */
        cJSON *u = cJSON_AddObjectToObject(o, "utilisation_over_time");
        cJSON_AddNumberToObject(u, "bin_s", p->bin_s);
        for (int t = 0; t < STEP_TIERS; t++) {
            if (!(p->tier_bytes[t] > 0))
                continue;
            cJSON *tier = cJSON_AddObjectToObject(u, step_tier_name(t));
            cJSON *peak = cJSON_AddArrayToObject(tier, "peak");
            cJSON *mean = cJSON_AddArrayToObject(tier, "mean");
            for (unsigned b = 0; b < p->n_bins; b++) {
                cJSON_AddItemToArray(peak, cJSON_CreateNumber(p->bin_peak[b * STEP_TIERS + t]));
                cJSON_AddItemToArray(mean, cJSON_CreateNumber(p->bin_mean[b * STEP_TIERS + t]));
            }
        }
    }
    if (p->n_hot) {
        cJSON *hot = cJSON_AddArrayToObject(o, "overlap_links");
        for (unsigned k = 0; k < p->n_hot; k++) {
            const step_hot_link *h = &p->hot[k];
            cJSON *l = cJSON_CreateObject();
            cJSON_AddNumberToObject(l, "link", h->link);
            cJSON_AddNumberToObject(l, "from", h->src);
            cJSON_AddNumberToObject(l, "to", h->dst);
            cJSON_AddStringToObject(l, "tier", step_tier_name(h->tier));
            cJSON_AddNumberToObject(l, "pp_s", h->pp_s);
            cJSON_AddNumberToObject(l, "dp_s", h->dp_s);
            cJSON_AddNumberToObject(l, "tp_cp_ep_s", h->coll_s);
            cJSON_AddNumberToObject(l, "both_s", h->both_s);
            cJSON_AddNumberToObject(l, "utilisation", h->utilisation);
            cJSON_AddItemToArray(hot, l);
        }
    }
    if (p->coll_on_net) {
        static const char *const names[3] = {"tp", "cp", "ep"};
        cJSON *c = cJSON_AddObjectToObject(o, "collectives_as_flows");
        cJSON *k = cJSON_AddArrayToObject(c, "kinds");
        for (int i = 0; i < 3; i++)
            if (p->coll_on_net >> i & 1)
                cJSON_AddItemToArray(k, cJSON_CreateString(names[i]));
        cJSON_AddNumberToObject(c, "max_segments_per_task", p->coll_segments);
    }
    if (p->fold_note) { /* the concurrent iteration */
        cJSON *f = cJSON_AddObjectToObject(o, "symmetry_folding");
        cJSON_AddStringToObject(f, "note", p->fold_note);
        cJSON_AddNumberToObject(f, "replicas_as_one", p->fold_replicas);
        cJSON_AddNumberToObject(f, "flows", p->fold_flows);
        cJSON_AddNumberToObject(f, "cells", p->fold_cells);
        /* where the SMs of overlapped DP went (step_sm.c) */
        cJSON_AddStringToObject(o, "dp_sm_sharing",
                                p->dp_sm_in_schedule ? "schedule" : "stage-end");
    }
    if (p->slowest_gpu != UINT32_MAX) {
        cJSON_AddNumberToObject(o, "slowest_gpu", p->slowest_gpu);
        cJSON_AddNumberToObject(o, "slowest_speed", p->slowest_speed);
        cJSON_AddNumberToObject(o, "straggler_wait_s", p->wait_s);
    }
    if (flows && !p->is_packet)
        json_flows(o, p);
    if (p->is_packet && pc)
        json_packet(o, p, pc, tr);
    if (fx)
        step_fail_json(o, st, fx);
    return jsonout_emit(o, csv ? JSONOUT_CSV : JSONOUT_JSON, "stages", "stage");
}
