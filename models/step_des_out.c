/* step_des_out.c - what the concurrent iteration (step_des.c) measures on
 * its shared net besides the schedule: link utilisation per time bin (an
 * engine event every bin) and the links where kinds of traffic overlapped
 * longest. */
#include "step_des_internal.h"

#include <math.h>
#include <stdlib.h>

#include "event_kinds.h"

/* one bin of link utilisation: every link's bytes since the last sample
 * over its capacity and the bin; the next sample while any stage runs */
void step_des_sample(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)data;
    des *z = ctx;
    if (z->n_bins == z->cap_bins) {
        unsigned cap = z->cap_bins ? 2 * z->cap_bins : 256;
        double *p = realloc(z->peak, (size_t)cap * STEP_TIERS * sizeof *p);
        if (p)
            z->peak = p;
        double *m = p ? realloc(z->mean, (size_t)cap * STEP_TIERS * sizeof *m) : NULL;
        if (!m) {
            step_des_fail(z, step_no_memory(z->err));
            return;
        }
        z->mean = m;
        z->cap_bins = cap;
    }
    if (z->x)
        flow_net_sync(nc_exec_net(z->x));
    const double *cap = z->f->g.link_bytes_per_s;
    double *peak = z->peak + (size_t)z->n_bins * STEP_TIERS;
    double *mean = z->mean + (size_t)z->n_bins * STEP_TIERS;
    for (int t = 0; t < STEP_TIERS; t++)
        peak[t] = mean[t] = 0;
    for (uint32_t l = 0; l < z->f->g.n_links; l++) {
        double now_bytes = step_des_link_bytes(z, l);
        double u = (now_bytes - z->prev_bytes[l]) / (cap[l] * z->bin_s);
        z->prev_bytes[l] = now_bytes;
        peak[z->tier[l]] = fmax(peak[z->tier[l]], u);
        mean[z->tier[l]] += u;
    }
    for (int t = 0; t < STEP_TIERS; t++)
        mean[t] = z->tier_links[t] ? mean[t] / z->tier_links[t] : 0;
    z->n_bins++;
    if (z->stages_done < z->P && z->n_bins < STEP_MAX_BINS &&
        !sim_schedule_in(eng, z->bin_s, 0, KIND_STEP_SAMPLE, step_des_sample, z, 0))
        step_des_fail(z, step_no_memory(z->err));
}

/* the links where kinds of traffic (PP, DP, TP/CP/EP) overlapped longest
 * (then the busiest with PP and DP), longest first, lowest link id on ties */
void step_des_hot_links(des *z)
{
    const nc_exec *x = z->x;
    /* two classes: PP sends, and DP traffic (reductions and gathers) */
    const double *pp = nc_exec_link_busy(x, CLASS_PP), *dp = nc_exec_link_busy(x, CLASS_DP);
    const double *coll = nc_exec_link_busy(x, CLASS_STAGE);
    const double *both = nc_exec_link_overlap(x);
    const topo_graph *g = &z->f->g;
    step_profile *out = z->out;
    out->n_hot = 0;
    for (uint32_t l = 0; l < g->n_links; l++) {
        uint32_t q = step_des_net_link(z, l);
        if (!(both[q] > 0))
            continue;
        step_hot_link h = {.link = l, .src = g->link_src[l], .dst = g->link_dst[l],
                           .tier = step_link_tier(g, l), .pp_s = pp[q], .dp_s = dp[q],
                           .coll_s = coll[q], .both_s = both[q]};
        unsigned k = out->n_hot < STEP_HOT_LINKS ? out->n_hot++ : STEP_HOT_LINKS;
        while (k > 0 && (out->hot[k - 1].both_s < h.both_s ||
                         (out->hot[k - 1].both_s == h.both_s &&
                          out->hot[k - 1].pp_s + out->hot[k - 1].dp_s < h.pp_s + h.dp_s))) {
            if (k < STEP_HOT_LINKS)
                out->hot[k] = out->hot[k - 1];
            k--;
        }
        if (k < STEP_HOT_LINKS)
            out->hot[k] = h;
    }
}
