/* packet_bench.h - one communication pattern run on the packet tier
 * (packet.h) and on the flow tier (flow.h) over the same graph and routes,
 * for `dcsim netbench --tier packet` (docs/fabric.md "netbench --tier
 * packet").
 *
 * Patterns over ranks 0 .. n-1 (rank r = host r x stride: stride = GPUs
 * per node puts one rank on each node's first GPU), every message `bytes`
 * bytes, all sent at t = 0, message i routed with key i on an idle network
 * (both tiers take the same path):
 *   send      rank 0 -> rank n-1 (one message)
 *   incast    ranks 1 .. n-1 -> rank 0 (n-1 messages)
 *   alltoall  every rank to every other (n(n-1) messages)
 * The flow tier gives each message a max-min fair rate and delivers it
 * h x hop latency after its last byte (h = links on its path), so a single
 * send takes b/B + h d there and (P + h - 1) MTU/B + h d (full packets) on
 * the packet tier: the packet tier is never faster for one message.
 */
#ifndef DCSIM_MODELS_PACKET_BENCH_H
#define DCSIM_MODELS_PACKET_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "flow.h"
#include "graph.h"
#include "packet.h"
#include "packet_series.h"
#include "routing.h"

enum pkb_op { PKB_SEND = 0, PKB_INCAST = 1, PKB_ALLTOALL = 2 };

/* The most ranks and packet-hops one run may take: the tier moves about
 * 8-14 M packet-hops per CPU second on bench_packet's fat-trees
 * (docs/fabric.md "Queue heads side by side"), so 1e9 is a few minutes.
 * PKB_PACKET_HOPS_PER_S: the slowest of bench_packet's four cases (IB,
 * k = 16), measured 7-7.7 M (docs/fabric.md "The head packet's size"),
 * about 8.5 M since, kept: the rate a refusal quotes for the time a run
 * would take. */
#define PKB_MAX_RANKS 4096u
#define PKB_MAX_PACKET_HOPS 1e9
#define PKB_PACKET_HOPS_PER_S 7e6

typedef struct pkb_result {
    uint64_t messages;
    uint32_t receivers;
    double packet_time_s;         /* last message delivered, packet tier */
    double flow_time_s;           /* the same on the flow tier */
    double goodput_min_bytes_per_s, goodput_mean_bytes_per_s, goodput_max_bytes_per_s;
                                  /* per receiver: its bytes / its last arrival (packet tier) */
    double flow_goodput_min_bytes_per_s; /* the same minimum on the flow tier */
    pkt_net_stats stats;          /* the packet tier's counters at the end */
    double wall_s;                /* seconds the packet run took */
    uint64_t digest, events_fired;/* the packet run's engine digest and events */
} pkb_result;

const char *pkb_op_name(enum pkb_op op);     /* "send", "incast", "alltoall"; "?" */
int pkb_op_parse(const char *name, enum pkb_op *out); /* 0 or -1 */

/* Messages and packet-hops (at least 2 links a message) the pattern would
 * take, without routing it. */
uint64_t pkb_messages(enum pkb_op op, unsigned ranks);
double pkb_min_packet_hops(enum pkb_op op, unsigned ranks, double bytes, double mtu_bytes);

/* PFC thresholds by the headroom rule of components.md 5.2 (later forks of
 * the HPCC simulator, S): headroom = 2 BDP + 2 MTU with BDP = rate x hop
 * latency (the pause travels one hop latency while the link keeps sending,
 * and what is on the wire lands), xoff = buffer - headroom; xon = xoff -
 * 3 KiB, the HPCC MMU's resume offset (5.2, V). Returns 0, or -1 with the
 * reason when the buffer leaves xon below zero. */
int pkb_pfc_rule(double buffer_bytes, double mtu_bytes, double rate_bytes_per_s,
                 double hop_latency_s, double *xoff_bytes, double *xon_bytes, char *why,
                 size_t why_size);

/* Run the pattern on both tiers. ranks from 2 to PKB_MAX_RANKS with
 * (ranks - 1) x stride < g->n_hosts, stride >= 1, bytes a positive whole
 * number. Returns 0 and fills *out;
 * -1 with the reason for input the pattern cannot take (sizes, a route that
 * is not one path, cfg refused); -2 with the reason when a run fails (out of
 * memory, an inconsistent net: a bug). */
int pkb_run(const topo_graph *g, topo_router *r, const pkt_config *cfg, enum pkb_op op,
            unsigned ranks, unsigned stride, double bytes, pkb_result *out, char *why, size_t why_size);
/* pkb_run with the packet run sampled as req asks (packet_series.h; req may
 * be NULL): req->series is the finished series when it returns 0. The
 * series changes no result (digest included). flow_curves (per link, or
 * NULL): the flow tier's capacity curves (flow_net_set_incast; a fabric's
 * link_curve, from a multi-fidelity table). */
int pkb_run_series(const topo_graph *g, topo_router *r, const pkt_config *cfg, enum pkb_op op,
                   unsigned ranks, unsigned stride, double bytes, pkt_series_request *req,
                   const flow_curve *const *flow_curves, pkb_result *out, char *why,
                   size_t why_size);

#endif
