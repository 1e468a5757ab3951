/* packet_bench.c - a pattern on the packet tier and the flow tier over one
 * graph (see packet_bench.h). Each tier runs on its own engine; message i
 * is routed with key i on an idle network in both, so they share paths.
 */
#include "packet_bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "flow.h"

static const char *const op_names[] = {"send", "incast", "alltoall"};

const char *pkb_op_name(enum pkb_op op)
{
    return (unsigned)op < 3 ? op_names[op] : "?";
}

int pkb_op_parse(const char *name, enum pkb_op *out)
{
    for (int i = 0; i < 3; i++)
        if (name && !strcmp(name, op_names[i])) {
            *out = (enum pkb_op)i;
            return 0;
        }
    return -1;
}

uint64_t pkb_messages(enum pkb_op op, unsigned ranks)
{
    if (ranks < 2)
        return 0;
    return op == PKB_SEND ? 1 : op == PKB_INCAST ? ranks - 1 : (uint64_t)ranks * (ranks - 1);
}

double pkb_min_packet_hops(enum pkb_op op, unsigned ranks, double bytes, double mtu_bytes)
{
    return (double)pkb_messages(op, ranks) * ceil(bytes / mtu_bytes) * 2;
}

int pkb_pfc_rule(double buffer_bytes, double mtu_bytes, double rate_bytes_per_s,
                 double hop_latency_s, double *xoff_bytes, double *xon_bytes, char *why,
                 size_t why_size)
{
    double headroom = 2 * rate_bytes_per_s * hop_latency_s + 2 * mtu_bytes;
    double xoff = buffer_bytes - headroom, xon = xoff - 3072;
    if (!(xon >= 0) || !(xoff > mtu_bytes)) {
        if (why && why_size)
            snprintf(why, why_size, "a port buffer of %.0f B leaves no room for PFC: the "
                     "headroom 2 x BDP + 2 MTU is %.0f B and xon = xoff - 3 KiB must stay >= 0",
                     buffer_bytes, headroom);
        return -1;
    }
    *xoff_bytes = xoff;
    *xon_bytes = xon;
    return 0;
}

/* message i of the pattern */
static void endpoints(enum pkb_op op, unsigned ranks, uint64_t i, uint32_t *src, uint32_t *dst)
{
    if (op == PKB_SEND) {
        *src = 0;
        *dst = ranks - 1;
    } else if (op == PKB_INCAST) {
        *src = (uint32_t)i + 1;
        *dst = 0;
    } else {
        *src = (uint32_t)(i / (ranks - 1));
        uint32_t j = (uint32_t)(i % (ranks - 1));
        *dst = j >= *src ? j + 1 : j;
    }
}

typedef struct tally {
    sim_engine *eng;
    const uint32_t *msg_dst;
    double bytes;
    double *rx_bytes, *rx_last_s; /* per rank */
    uint64_t delivered;
    double last_s;        /* the last message's arrival */
} tally;

static void count(tally *t, uint64_t msg)
{
    uint32_t d = t->msg_dst[msg];
    t->rx_bytes[d] += t->bytes;
    t->rx_last_s[d] = sim_now(t->eng);
    t->last_s = t->rx_last_s[d];
    t->delivered++;
}

static void pkt_done(void *ctx, uint64_t tag)
{
    count(ctx, tag);
}

static void flow_done(void *ctx, uint32_t flow, uint64_t tag)
{
    (void)flow;
    count(ctx, tag);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int say(char *why, size_t why_size, int rc, const char *msg)
{
    if (why && why_size)
        snprintf(why, why_size, "%s", msg);
    return rc;
}

/* min, mean and max goodput over the receivers; returns their number */
static uint32_t goodput(const tally *t, unsigned ranks, double *min, double *mean, double *max)
{
    uint32_t n = 0;
    double sum = 0, lo = INFINITY, hi = 0;
    for (unsigned r = 0; r < ranks; r++) {
        if (!(t->rx_bytes[r] > 0))
            continue;
        double gp = t->rx_last_s[r] > 0 ? t->rx_bytes[r] / t->rx_last_s[r] : INFINITY;
        sum += gp;
        lo = gp < lo ? gp : lo;
        hi = gp > hi ? gp : hi;
        n++;
    }
    *min = n ? lo : 0;
    *mean = n ? sum / n : 0;
    *max = hi;
    return n;
}

/* pkb_run's arguments: 0, or -1 with the reason */
static int bad_input(const topo_graph *g, topo_router *r, const pkt_config *cfg, enum pkb_op op,
                     unsigned ranks, unsigned stride, double bytes, const pkb_result *out,
                     char *why, size_t why_size)
{
    if (!g || !r || !cfg || !out || (unsigned)op > PKB_ALLTOALL)
        return say(why, why_size, -1, "packet bench: missing argument");
    if (ranks < 2 || ranks > PKB_MAX_RANKS || stride < 1 ||
        (uint64_t)(ranks - 1) * stride >= g->n_hosts)
        return say(why, why_size, -1, "packet bench: ranks out of range");
    if (!(bytes >= 1) || bytes != floor(bytes) || !isfinite(bytes))
        return say(why, why_size, -1, "packet bench: bytes must be a positive whole number");
    if (pkt_config_check(cfg, why, why_size))
        return -1;
    if (pkb_min_packet_hops(op, ranks, bytes, cfg->mtu_bytes) > PKB_MAX_PACKET_HOPS)
        return say(why, why_size, -1, "packet bench: more than 1e9 packet-hops");
    return 0;
}

int pkb_run(const topo_graph *g, topo_router *r, const pkt_config *cfg, enum pkb_op op,
            unsigned ranks, unsigned stride, double bytes, pkb_result *out, char *why, size_t why_size)
{
    return pkb_run_series(g, r, cfg, op, ranks, stride, bytes, NULL, NULL, out, why, why_size);
}

/* Per link, 1 out of a host or NIC: where senders inject (as fabric.c
 * marks them for the flow tier's demand-weighted fan-in); NULL: no memory. */
static uint8_t *injection_links(const topo_graph *g)
{
    uint8_t *injects = malloc((size_t)g->n_links + 1);
    for (uint32_t l = 0; injects && l < g->n_links; l++)
        injects[l] = g->node_kind[g->link_src[l]] == TOPO_HOST ||
                     g->node_kind[g->link_src[l]] == TOPO_NIC;
    return injects;
}

int pkb_run_series(const topo_graph *g, topo_router *r, const pkt_config *cfg, enum pkb_op op,
                   unsigned ranks, unsigned stride, double bytes, pkt_series_request *req,
                   const flow_curve *const *flow_curves, pkb_result *out, char *why,
                   size_t why_size)
{
    if (req)
        req->series = NULL;
    if (bad_input(g, r, cfg, op, ranks, stride, bytes, out, why, why_size))
        return -1;
    uint64_t n_msgs = pkb_messages(op, ranks);
    size_t cap = topo_route_max_usages(r);
    uint32_t *msg_dst = malloc(n_msgs * sizeof *msg_dst);
    double *rx = calloc(2 * (size_t)ranks, sizeof *rx);
    topo_usage *usage = malloc((cap + 1) * sizeof *usage);
    sim_engine *eng = sim_engine_create();
    uint8_t *injects = flow_curves ? injection_links(g) : NULL;
    flow_net *fn = NULL;
    pkt_net *pn = NULL;
    int rc = -2;
    if (!msg_dst || !rx || !usage || !eng || (flow_curves && !injects)) {
        say(why, why_size, -2, "packet bench: out of memory");
        goto out;
    }
    memset(out, 0, sizeof *out);
    out->messages = n_msgs;
    tally t = {eng, msg_dst, bytes, rx, rx + ranks, 0, 0};

    /* the flow tier: the same routes, delivered h x hop latency after the last byte */
    fn = flow_net_create(eng, g->n_links, g->link_bytes_per_s, flow_done, &t);
    if (!fn && say(why, why_size, -2, "packet bench: out of memory (flow tier)"))
        goto out;
    if (flow_curves && flow_net_set_incast(fn, flow_curves, injects)) {
        rc = say(why, why_size, -1, "packet bench: a flow-tier curve is out of range");
        goto out;
    }
    for (uint64_t i = 0; i < n_msgs; i++) {
        uint32_t src, dst;
        endpoints(op, ranks, i, &src, &dst);
        msg_dst[i] = dst;
        src *= stride;
        dst *= stride;
        long n = topo_route(r, src, dst, i, NULL, usage, cap);
        if (n <= 0) {
            if (why && why_size)
                snprintf(why, why_size, "no route from host %u to host %u", src, dst);
            rc = n == -2 ? -2 : -1;
            goto out;
        }
        if (flow_start(fn, usage, (size_t)n, bytes, INFINITY, (double)n * cfg->hop_latency_s,
                       i) == UINT32_MAX) {
            say(why, why_size, -2, "packet bench: flow tier: out of memory");
            goto out;
        }
    }
    if (sim_run(eng, INFINITY) != SIM_RUN_EMPTY || t.delivered != n_msgs) {
        say(why, why_size, -2, "packet bench: the flow tier did not deliver every message");
        goto out;
    }
    out->flow_time_s = sim_now(eng);
    double mean, hi; /* the flow tier's minimum only */
    goodput(&t, ranks, &out->flow_goodput_min_bytes_per_s, &mean, &hi);
    flow_net_destroy(fn);
    fn = NULL;
    sim_engine_destroy(eng);

    /* the packet tier */
    memset(rx, 0, 2 * (size_t)ranks * sizeof *rx);
    t.delivered = 0;
    t.last_s = 0;
    t.eng = eng = sim_engine_create();
    pn = eng ? pkt_net_create(eng, g, r, cfg, why, why_size) : NULL;
    if (!pn) {
        if (!eng)
            say(why, why_size, -2, "packet bench: out of memory");
        rc = eng ? -1 : -2;
        goto out;
    }
    if (req && !(req->series = pkt_series_create(pn, req->dt_s, req->max_bins, why, why_size))) {
        rc = -1;
        goto out;
    }
    double t0 = now_s();
    for (uint64_t i = 0; i < n_msgs; i++) {
        uint32_t src, dst;
        endpoints(op, ranks, i, &src, &dst);
        if (pkt_send(pn, src * stride, dst * stride, bytes, i, pkt_done, &t, i)) {
            say(why, why_size, -1, pkt_net_error(pn));
            rc = -1;
            goto out;
        }
    }
    if (sim_run(eng, INFINITY) != SIM_RUN_EMPTY || t.delivered != n_msgs) {
        say(why, why_size, -2, "packet bench: the packet tier did not deliver every message");
        goto out;
    }
    out->wall_s = now_s() - t0;
    if (pkt_net_check(pn, why, why_size))
        goto out;
    if (req && pkt_series_finish(req->series, sim_now(eng)) &&
        say(why, why_size, -2, "packet bench: out of memory (time series)"))
        goto out;
    out->digest = sim_digest(eng);
    out->events_fired = sim_events_fired(eng);
    /* the last arrival, not the engine's end: a lossy mode's timers run on */
    out->packet_time_s = t.last_s;
    out->receivers = goodput(&t, ranks, &out->goodput_min_bytes_per_s,
                             &out->goodput_mean_bytes_per_s, &out->goodput_max_bytes_per_s);
    out->stats = *pkt_net_get_stats(pn);
    rc = 0;
out:
    if (rc && req) {
        pkt_series_destroy(req->series);
        req->series = NULL;
    }
    pkt_net_destroy(pn);
    flow_net_destroy(fn);
    sim_engine_destroy(eng);
    free(usage);
    free(rx);
    free(injects);
    free(msg_dst);
    return rc;
}
