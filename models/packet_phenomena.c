/* packet_phenomena.c - the packet tier's phenomena (see packet_phenomena.h):
 * each sets up a small leaf-spine, runs the packet tier under the flow-
 * control variants and returns the figures its closed form is checked on.
 * Every run is on its own engine, deterministic; every net is checked with
 * pkt_net_check and for full delivery.
 */
#include "packet_phenomena.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "event_kinds.h"
#include "fattree.h"
#include "routing.h"

#define PRIO_BENCH 3 /* after the tier's own events at the same instant */

static int say(char *why, size_t why_size, int rc, const char *msg)
{
    if (why && why_size)
        snprintf(why, why_size, "%s", msg);
    return rc;
}

void pkp_dcqcn_rule(double rate, uint64_t seed, pkt_dcqcn_config *c)
{
    double gbps = rate * 8 / 1e9; /* C, the line rate in Gb/s */
    memset(c, 0, sizeof *c);
    c->is_enabled = 1;
    c->kmin_bytes = 5e3;
    c->kmax_bytes = 200e3;
    c->pmax = 0.2;
    c->seed = seed;
    c->cnp_interval_s = 50e-6;
    c->g = 1.0 / 256;
    c->alpha_init = 1;
    c->alpha_timer_s = 50e-6;
    c->increase_timer_s = 55e-6;
    c->byte_counter_bytes = 10e6;
    c->fast_recovery_steps = 1;
    c->rai_bytes_per_s = 0.2 * gbps * 1e6 / 8;
    c->rhai_bytes_per_s = 2 * gbps * 1e6 / 8;
    c->min_rate_bytes_per_s = 1e9 / 8;
}

int pkp_incast_sweep(const topo_graph *g, topo_router *r, const pkt_config *cfg,
                     unsigned stride, double bytes, const unsigned *fanins, unsigned n,
                     pkp_incast_row *rows, char *why, size_t why_size)
{
    if (!g || !r || !cfg || !fanins || !rows || n == 0 || n > PKP_MAX_SWEEP)
        return say(why, why_size, -1, "incast sweep: missing argument or too many fan-ins");
    double rx_rate = 0; /* the receiver's (host 0's) links in, not its scale-up link */
    for (uint32_t l = 0; l < g->n_links; l++)
        if (g->link_dst[l] == 0 && g->node_kind[g->link_src[l]] != TOPO_SCALEUP)
            rx_rate += g->link_bytes_per_s[l];
    for (unsigned i = 0; i < n; i++) {
        pkb_result res;
        int rc = pkb_run(g, r, cfg, PKB_INCAST, fanins[i] + 1, stride, bytes, &res, why,
                         why_size);
        if (rc)
            return rc;
        pkp_incast_row *w = &rows[i];
        w->fanin = fanins[i];
        w->time_s = res.packet_time_s;
        w->flow_time_s = res.flow_time_s;
        w->goodput_bytes_per_s = res.goodput_min_bytes_per_s;
        w->efficiency = rx_rate > 0 ? w->goodput_bytes_per_s / rx_rate : 0;
        w->max_held_bytes = res.stats.max_held_bytes;
        w->pauses = res.stats.pauses;
        w->drops = res.stats.drops;
        w->resent_packets = res.stats.resent_packets;
        w->resent_bytes = res.stats.resent_bytes;
        w->nacks = res.stats.nacks;
        w->timeouts = res.stats.timeouts;
    }
    return 0;
}

/* ---- a leaf-spine, an engine, a net ---- */

typedef struct rig {
    topo_graph g;
    topo_router *r;
    sim_engine *eng;
    pkt_net *net;
    double done_s[PKP_SPINES * PKP_SPINES + PKP_MAX_FANIN + 8]; /* per tag; 0: not yet */
    double bytes;
    unsigned n_done;
} rig;

static void on_done(void *ctx, uint64_t tag)
{
    rig *x = ctx;
    x->done_s[tag] = sim_now(x->eng);
    x->n_done++;
}

static void rig_close(rig *x)
{
    pkt_net_destroy(x->net);
    sim_engine_destroy(x->eng);
    topo_router_destroy(x->r);
    topo_graph_fini(&x->g);
}

/* 0, -1 (cfg or topology refused) or -2 (out of memory) */
static int rig_open(rig *x, unsigned radix, unsigned leaves, unsigned down, double rate,
                    const pkt_config *cfg, char *why, size_t why_size)
{
    memset(x, 0, sizeof *x);
    topo_graph_init(&x->g);
    if (topo_leafspine(radix, leaves, down, rate, &x->g, why, why_size))
        return -1;
    topo_route_config rc = {TOPO_BALANCE_ECMP, TOPO_PATH_MINIMAL, 1, 7};
    x->r = topo_router_create(&x->g, &rc, why, why_size);
    x->eng = sim_engine_create();
    if (!x->r || !x->eng)
        return say(why, why_size, -2, "phenomena: out of memory");
    x->net = pkt_net_create(x->eng, &x->g, x->r, cfg, why, why_size);
    return x->net ? 0 : -1;
}

static int rig_send(rig *x, uint32_t src, uint32_t dst, uint64_t key, uint64_t tag, char *why,
                    size_t why_size)
{
    if (pkt_send(x->net, src, dst, x->bytes, key, on_done, x, tag))
        return say(why, why_size, -1, pkt_net_error(x->net));
    return 0;
}

/* run to the end; 1 when every message arrived and the net is consistent */
static int rig_finish(rig *x, unsigned messages)
{
    char why[160];
    if (sim_run(x->eng, INFINITY) != SIM_RUN_EMPTY)
        return 0;
    return x->n_done == messages && pkt_net_check(x->net, why, sizeof why) == 0 &&
           pkt_net_get_stats(x->net)->bytes_delivered == messages * x->bytes;
}

/* The link from node a to node b, or UINT32_MAX. */
static uint32_t link_between(const topo_graph *g, uint32_t a, uint32_t b)
{
    for (uint32_t i = g->out_offset[a]; i < g->out_offset[a + 1]; i++)
        if (g->link_dst[g->out_links[i]] == b)
            return g->out_links[i];
    return UINT32_MAX;
}

static uint32_t leaf_of(const topo_graph *g, uint32_t host)
{
    return g->link_dst[g->out_links[g->out_offset[host]]];
}

/* cfg's MTU, buffer and latency with the variant's flow control */
static int variant_config(const pkt_config *base, double rate, int variant, pkt_config *c,
                          char *why, size_t why_size)
{
    *c = *base;
    c->is_adaptive = 0;
    c->loss = PKT_LOSSLESS;
    c->rto_s = 0;
    memset(&c->dcqcn, 0, sizeof c->dcqcn);
    if (variant == PKP_CREDITS) {
        c->technology = PKT_IB;
        return 0;
    }
    c->technology = PKT_ROCE;
    if (pkb_pfc_rule(base->buffer_bytes, base->mtu_bytes, rate, base->hop_latency_s,
                     &c->xoff_bytes, &c->xon_bytes, why, why_size))
        return -1;
    if (variant == PKP_PFC_DCQCN)
        pkp_dcqcn_rule(rate, 1, &c->dcqcn);
    return 0;
}

static void variant_stats(rig *x, pkp_variant *v)
{
    const pkt_net_stats *s = pkt_net_get_stats(x->net);
    v->max_held_bytes = s->max_held_bytes;
    v->pauses = s->pauses;
    v->ecn_marks = s->ecn_marks;
    v->cnps = s->cnps;
}

static int check_sizes(double bytes, double rate, char *why, size_t why_size)
{
    if (!(bytes >= 1) || bytes != floor(bytes) || !isfinite(bytes))
        return say(why, why_size, -1, "phenomena: bytes must be a positive whole number");
    if (!(rate > 0) || !isfinite(rate))
        return say(why, why_size, -1, "phenomena: the link rate must be positive and finite");
    return 0;
}

/* ---- victim ---- */

#define LEAF_HOST(leaf, slot) ((uint32_t)((leaf) * PKP_DOWN + (slot)))

typedef struct later {
    rig *x;
    uint32_t src, dst;
    uint64_t tag;
    int rc;
} later;

static void on_later(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)eng;
    (void)data;
    later *w = ctx;
    w->rc = pkt_send(w->x->net, w->src, w->dst, w->x->bytes, w->tag, on_done, w->x, w->tag);
}

int pkp_victim(const pkt_config *cfg, double rate, unsigned fanin, double bytes,
               pkp_victim_result *out, char *why, size_t why_size)
{
    if (!cfg || !out || fanin < 1 || fanin > PKP_MAX_FANIN)
        return say(why, why_size, -1, "victim: fan-in out of range");
    if (check_sizes(bytes, rate, why, why_size) || pkt_config_check(cfg, why, why_size))
        return -1;
    if (ceil(bytes / cfg->mtu_bytes) * (fanin + 1) * 4 > PKB_MAX_PACKET_HOPS)
        return say(why, why_size, -1, "victim: more than 1e9 packet-hops");
    memset(out, 0, sizeof *out);
    out->fanin = fanin;
    out->shared = (fanin + 2) / 3;
    out->fifo_bound = out->shared + 1;
    out->start_s = bytes / rate;
    uint32_t vsrc = LEAF_HOST(1, PKP_DOWN - 1), vdst = LEAF_HOST(2, PKP_DOWN - 1);
    double mtu = cfg->mtu_bytes, d = cfg->hop_latency_s, p = ceil(bytes / mtu);
    out->solo_closed_s = (p + 2) * mtu / rate + (bytes - (p - 1) * mtu) / rate + 4 * d;
    for (int v = -1; v < PKP_VARIANTS; v++) { /* -1: the victim alone */
        pkt_config c;
        rig x;
        int rc = variant_config(cfg, rate, v < 0 ? PKP_PFC : v, &c, why, why_size);
        if (!rc)
            rc = rig_open(&x, PKP_DOWN + 1, PKP_LEAVES, PKP_DOWN, rate, &c, why, why_size);
        else
            memset(&x, 0, sizeof x);
        x.bytes = bytes;
        unsigned n = v < 0 ? 1 : fanin + 1;
        for (unsigned j = 0; !rc && v >= 0 && j < fanin; j++) {
            uint32_t src = LEAF_HOST(1 + j % 3, j / 3);
            rc = rig_send(&x, src, 0, j, j, why, why_size);
        }
        later w = {&x, vsrc, vdst, fanin, 0};
        if (!rc && !sim_schedule_at(x.eng, out->start_s, PRIO_BENCH, KIND_PKT_BENCH_SEND,
                                    on_later, &w, 0))
            rc = say(why, why_size, -2, "victim: out of memory");
        if (!rc && !rig_finish(&x, n))
            rc = say(why, why_size, -2, w.rc ? pkt_net_error(x.net)
                                             : "victim: a run did not deliver every byte");
        if (!rc && v < 0)
            out->solo_s = x.done_s[fanin] - out->start_s;
        else if (!rc) {
            pkp_variant *k = &out->v[v];
            k->victim_s = x.done_s[fanin] - out->start_s;
            for (unsigned j = 0; j < fanin; j++)
                k->incast_s = fmax(k->incast_s, x.done_s[j]);
            k->is_consistent = 1;
            variant_stats(&x, k);
        }
        rig_close(&x);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- stall ---- */

enum { TO_STUCK_A, TO_STUCK_B, OTHER_A, OTHER_B, CONTROL, STALL_FLOWS };

/* bytes delivered so far of message `tag` */
static double delivered(rig *x, uint64_t tag)
{
    pkt_msg_state st;
    if (x->done_s[tag] > 0)
        return x->bytes;
    return pkt_message_state(x->net, tag, &st) == 0 ? st.bytes_delivered : 0;
}

static int stall_run(const pkt_config *c, double rate, double bytes, pkp_stall_result *o, int k,
                     char *why, size_t why_size)
{
    rig x;
    int rc = rig_open(&x, PKP_DOWN + 1, PKP_LEAVES, PKP_DOWN, rate, c, why, why_size);
    x.bytes = bytes;
    static const uint32_t flow[STALL_FLOWS][2] = {
        {LEAF_HOST(1, 0), LEAF_HOST(0, 0)}, {LEAF_HOST(2, 0), LEAF_HOST(0, 0)},
        {LEAF_HOST(1, 1), LEAF_HOST(0, 1)}, {LEAF_HOST(2, 1), LEAF_HOST(3, 1)},
        {LEAF_HOST(3, 2), LEAF_HOST(1, 2)}};
    uint64_t *at_start = NULL, *last = NULL;
    if (!rc && pkt_host_stall(x.net, 0, o->start_s, o->end_s))
        rc = say(why, why_size, -1, pkt_net_error(x.net));
    for (uint64_t f = 0; !rc && f < STALL_FLOWS; f++)
        rc = rig_send(&x, flow[f][0], flow[f][1], f, f, why, why_size);
    uint32_t nl = x.g.n_links;
    if (!rc && (!(at_start = calloc(nl, sizeof *at_start)) || !(last = calloc(nl, sizeof *last))))
        rc = say(why, why_size, -2, "stall: out of memory");
    double bin = o->start_s, prev[3] = {0, 0, 0};
    for (unsigned b = 0; !rc && b < o->n_bins; b++) {
        pkp_bin *w = &o->bins[k][b];
        w->end_s = (b + 1) * bin;
        enum sim_run_status s = sim_run(x.eng, w->end_s);
        if (s != SIM_RUN_UNTIL && s != SIM_RUN_EMPTY) {
            rc = say(why, why_size, -2, "stall: the engine failed");
            break;
        }
        for (uint32_t l = 0; l < nl; l++) {
            uint64_t p = pkt_net_link_stats(x.net, l).pauses, dp = p - last[l];
            last[l] = p;
            if (x.g.link_dst[l] == 0)
                w->pauses_to_stuck += dp;
            else {
                w->pauses_other += dp;
                w->links_paused_other += dp > 0;
            }
            if (w->end_s == o->start_s)
                at_start[l] = p;
        }
        double now[3] = {delivered(&x, TO_STUCK_A) + delivered(&x, TO_STUCK_B),
                         delivered(&x, OTHER_A) + delivered(&x, OTHER_B),
                         delivered(&x, CONTROL)};
        w->to_stuck_bytes = now[0] - prev[0];
        w->to_others_bytes = now[1] - prev[1];
        w->control_bytes = now[2] - prev[2];
        memcpy(prev, now, sizeof prev);
        if (fabs(w->end_s - o->end_s) < 0.5 * bin) { /* the window's last bin */
            uint32_t leaf0 = leaf_of(&x.g, 0), leaf1 = leaf_of(&x.g, LEAF_HOST(1, 0));
            uint32_t spine = 0;
            while (spine < x.g.n_nodes && x.g.node_tier[spine] != 2)
                spine++;
            for (uint32_t l = 0; l < nl; l++)
                if (x.g.link_dst[l] != 0 && last[l] > at_start[l])
                    o->other_links_paused[k]++;
            uint32_t s0 = link_between(&x.g, spine, leaf0), u1 = link_between(&x.g, leaf1, spine);
            if (k == 0 && s0 != UINT32_MAX && u1 != UINT32_MAX) {
                o->spine_to_leaf0_paused = last[s0] > at_start[s0];
                o->leaf1_uplink_paused = last[u1] > at_start[u1];
            }
        }
    }
    if (!rc) {
        pkp_variant *v = &o->v[k];
        v->is_consistent = rig_finish(&x, STALL_FLOWS);
        v->incast_s = fmax(x.done_s[TO_STUCK_A], x.done_s[TO_STUCK_B]);
        v->victim_s = fmax(x.done_s[OTHER_A], x.done_s[OTHER_B]);
        v->control_s = x.done_s[CONTROL];
        variant_stats(&x, v);
    }
    free(at_start);
    free(last);
    rig_close(&x);
    return rc;
}

int pkp_stall(const pkt_config *cfg, double rate, double bytes, pkp_stall_result *out,
              char *why, size_t why_size)
{
    if (!cfg || !out)
        return say(why, why_size, -1, "stall: missing argument");
    if (check_sizes(bytes, rate, why, why_size) || pkt_config_check(cfg, why, why_size))
        return -1;
    if (ceil(bytes / cfg->mtu_bytes) * STALL_FLOWS * 4 > PKB_MAX_PACKET_HOPS)
        return say(why, why_size, -1, "stall: more than 1e9 packet-hops");
    memset(out, 0, sizeof *out);
    double lone = bytes / rate;
    out->start_s = lone / 4;
    out->end_s = out->start_s + 4 * lone;
    out->n_bins = PKP_MAX_BINS;
    double mtu = cfg->mtu_bytes, p = ceil(bytes / mtu);
    out->solo_s = (p + 2) * mtu / rate + (bytes - (p - 1) * mtu) / rate + 4 * cfg->hop_latency_s;
    for (int k = 0; k < 2; k++) {
        pkt_config c;
        if (variant_config(cfg, rate, k ? PKP_CREDITS : PKP_PFC, &c, why, why_size))
            return -1;
        int rc = stall_run(&c, rate, bytes, out, k, why, why_size);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- collision ---- */

/* The spine (0 .. S-1) a route from src to dst with `key` crosses, or -1. */
static int route_spine(rig *x, topo_usage *u, size_t cap, uint32_t src, uint32_t dst,
                       uint64_t key, uint32_t first_spine)
{
    long n = topo_route(x->r, src, dst, key, NULL, u, cap);
    for (long i = 0; i < n; i++) {
        uint32_t b = x->g.link_dst[u[i].link];
        if (x->g.node_kind[b] == TOPO_SWITCH && x->g.node_tier[b] == 2)
            return (int)(b - first_spine);
    }
    return -1;
}

int pkp_collision(const pkt_config *cfg, double rate, unsigned collide, double bytes,
                  pkp_collision_result *out, char *why, size_t why_size)
{
    const unsigned S = PKP_SPINES, n = S * S;
    if (!cfg || !out || collide < 2 || collide > S)
        return say(why, why_size, -1, "collision: the colliding flows must be 2 to 4");
    if (check_sizes(bytes, rate, why, why_size) || pkt_config_check(cfg, why, why_size))
        return -1;
    if (ceil(bytes / cfg->mtu_bytes) * n * 4 > PKB_MAX_PACKET_HOPS)
        return say(why, why_size, -1, "collision: more than 1e9 packet-hops");
    memset(out, 0, sizeof *out);
    out->ranks = n;
    out->collide = collide;
    double mtu = cfg->mtu_bytes, d = cfg->hop_latency_s;
    out->ideal_s = bytes / rate;
    out->pipeline_s = 3 * mtu / rate + 4 * d;
    out->is_consistent = 1;
    uint32_t src[PKP_SPINES * PKP_SPINES], dst[PKP_SPINES * PKP_SPINES];
    for (unsigned i = 0; i < n; i++) {
        unsigned j = (i + 1) % n;
        src[i] = (i % S) * S + i / S;
        dst[i] = (j % S) * S + j / S;
    }
    for (int adaptive = 0; adaptive < 2; adaptive++) {
        pkt_config c = *cfg;
        c.is_adaptive = adaptive;
        rig x;
        int rc = rig_open(&x, 2 * S, S, S, rate, &c, why, why_size);
        x.bytes = bytes;
        if (!rc && !adaptive) { /* the keys: first key whose route takes the wanted spine */
            size_t cap = topo_route_max_usages(x.r);
            topo_usage *u = calloc(cap + 1, sizeof *u);
            uint32_t *load = calloc(x.g.n_links, sizeof *load), first = 0;
            while (first < x.g.n_nodes && x.g.node_tier[first] != 2)
                first++;
            if (!u || !load)
                rc = say(why, why_size, -2, "collision: out of memory");
            for (unsigned i = 0; !rc && i < n; i++) {
                int want = (i % S == 0 && i / S < collide) ? 0 : (int)(i / S);
                uint64_t k = 0;
                while (k < 4096 && route_spine(&x, u, cap, src[i], dst[i], k, first) != want)
                    k++;
                if (k == 4096) {
                    rc = say(why, why_size, -2, "collision: no route key reaches the spine");
                    break;
                }
                out->keys[i] = k;
                long m = topo_route(x.r, src[i], dst[i], k, NULL, u, cap);
                for (long h = 0; h < m; h++)
                    if (++load[u[h].link] > out->max_flows_per_link)
                        out->max_flows_per_link = load[u[h].link];
            }
            free(u);
            free(load);
            double lf = out->max_flows_per_link;
            out->ecmp_bound_lo_s = lf * bytes / rate;
            out->ecmp_bound_hi_s = out->ecmp_bound_lo_s + out->pipeline_s + mtu / rate;
        }
        for (unsigned i = 0; !rc && i < n; i++)
            rc = rig_send(&x, src[i], dst[i], out->keys[i], i, why, why_size);
        if (!rc) {
            out->is_consistent &= rig_finish(&x, n);
            double t = 0;
            for (unsigned i = 0; i < n; i++)
                t = fmax(t, x.done_s[i]);
            *(adaptive ? &out->adaptive_s : &out->ecmp_s) = t;
        }
        rig_close(&x);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- reorder ---- */

int pkp_reorder(const pkt_config *cfg, double rate, double bytes, pkp_reorder_result *out,
                char *why, size_t why_size)
{
    const unsigned S = PKP_SPINES, n = S * S;
    if (!cfg || !out)
        return say(why, why_size, -1, "reorder: no configuration");
    if (check_sizes(bytes, rate, why, why_size))
        return -1;
    if (ceil(bytes / cfg->mtu_bytes) * n * 4 > PKB_MAX_PACKET_HOPS)
        return say(why, why_size, -1, "reorder: more than 1e9 packet-hops");
    memset(out, 0, sizeof *out);
    out->ranks = n;
    out->ideal_s = bytes / rate;
    for (int v = 0; v < PKP_REORDER_RUNS; v++) {
        pkt_config c = *cfg;
        c.is_adaptive = v == PKP_AR_IN_ORDER || v == PKP_AR_OOO;
        c.reorder = v == PKP_ECMP_IN_ORDER || v == PKP_AR_IN_ORDER ? PKT_RX_IN_ORDER
                                                                   : PKT_RX_OUT_OF_ORDER;
        if (c.reorder == PKT_RX_OUT_OF_ORDER)
            c.rto_s = 0;
        if (pkt_config_check(&c, why, why_size))
            return -1;
        rig x;
        int rc = rig_open(&x, 2 * S, S, S, rate, &c, why, why_size);
        x.bytes = bytes;
        for (unsigned leaf = 0; !rc && leaf < S; leaf++)
            for (unsigned slot = 0; !rc && slot < S; slot++) {
                unsigned to = (leaf + 1 + slot % 3) % S;
                rc = rig_send(&x, leaf * S + slot, to * S + slot, leaf + S * slot,
                              leaf * S + slot, why, why_size);
            }
        if (!rc) {
            pkp_reorder_row *w = &out->row[v];
            w->is_consistent = rig_finish(&x, n);
            for (unsigned i = 0; i < n; i++)
                w->time_s = fmax(w->time_s, x.done_s[i]);
            const pkt_net_stats *st = pkt_net_get_stats(x.net);
            w->out_of_order = st->out_of_order;
            w->nacks = st->nacks;
            w->resent_packets = st->resent_packets;
            w->resent_bytes = st->resent_bytes;
            w->discarded = st->discarded;
            w->timeouts = st->timeouts;
            w->digest = sim_digest(x.eng);
        }
        rig_close(&x);
        if (rc)
            return rc;
    }
    return 0;
}
