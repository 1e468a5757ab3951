/* flow.h - flow-level network model: flows on weighted link usages share
 * link capacity max-min fairly, driven by the event engine.
 *
 * A flow carries `bytes` over a set of links; usage weight w on link l
 * means the flow puts w bytes on l per byte it delivers (1 on a single path,
 * fractions when it is sprayed or split over queue pairs, the sum over a
 * ring's connections for a coupled collective: see netcoll.h). At every
 * instant the rates are the weighted max-min fair allocation found by
 * progressive filling: all unfrozen flows rise together; a link saturates
 * when sum(rate x w) reaches its capacity and freezes its flows; a flow's
 * own rate cap freezes it too. A flow finishes when its bytes are through;
 * it is reported `latency_s` later (hop and endpoint latency).
 *
 * Rates are recomputed once per instant at which flows start or finish (a
 * low-priority event at that time, so completions at one instant are one
 * batch). Small nets refill the connected component of the changed links;
 * larger ones repair locally: only the new flows and those whose bottleneck
 * condition the change breaks are re-solved, the others keep their rates and
 * completion events (flow_fill.c). Debug builds check after
 * every recomputation that no link is above capacity; flow_net_check tests
 * that and byte conservation on demand.
 */
#ifndef DCSIM_MODELS_FLOW_H
#define DCSIM_MODELS_FLOW_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "error.h"
#include "routing.h"

typedef struct flow_net flow_net;

/* Called when a flow has been delivered (its last byte, plus its latency). */
typedef void (*flow_done_fn)(void *ctx, uint32_t flow, uint64_t tag);

typedef struct flow_stats {
    uint64_t flows_started, flows_finished;
    uint64_t recomputes;          /* progressive fillings run */
    uint64_t flows_refilled;      /* flow visits summed over all fillings */
    uint64_t links_refilled;      /* link visits summed over all fillings */
    uint64_t usages_refilled;     /* usage visits summed over all fillings */
    uint64_t reschedules;         /* completion events moved because a rate changed */
    uint32_t max_active;          /* most flows active at once */
    double bytes_started, bytes_delivered;
} flow_stats;

/* capacity[n_links] in bytes/s (all > 0); not copied: the array and the
 * engine must outlive the net. The net costs 20 B per link of the network
 * and about 117 B per link its flows have used (flow_internal.h). Returns
 * NULL when out of memory or a capacity is not positive. */
flow_net *flow_net_create(sim_engine *eng, uint32_t n_links, const double *capacity,
                          flow_done_fn done, void *ctx);
void flow_net_destroy(flow_net *net); /* NULL-safe */

/* Room for the state of n_links links up front (a net whose flows will use
 * most of its links: no growth on the way). 0 or -1 (out of memory). */
int flow_net_reserve(flow_net *net, uint32_t n_links);

/* Back to the state flow_net_create returns (no flows, zero loads and
 * bytes, fresh stats and ids), keeping the net's memory: a run on a reset
 * net computes the same rates, ids and events as on a new one. The links'
 * slots are given again in first-use order; the used slots' state, the
 * load and the busy bits are zeroed (a memset of 8 B per link, no
 * allocation, no page faults). Only once every flow is delivered; returns
 * 0, or -1 (and changes nothing) while a flow is active or its delivery
 * pending. The engine may be another (or the same one after
 * sim_engine_reset). A sparse net stays sparse, a reserved one reserved. */
int flow_net_reset(flow_net *net, sim_engine *eng);

/* Start a flow now. Usages may name a link more than once (weights add).
 * rate_cap in bytes/s (INFINITY for none), latency_s >= 0. A flow with no
 * usages and no cap, or with no bytes, moves instantly. Returns the flow id
 * (ids of finished flows are reused) or UINT32_MAX when out of memory or
 * an argument is invalid (link out of range, weight <= 0, bytes < 0). */
uint32_t flow_start(flow_net *net, const topo_usage *usage, size_t n_usage, double bytes,
                    double rate_cap, double latency_s, uint64_t tag);

/* A burst of starts: the flows started between flow_net_burst_begin and
 * flow_net_burst_end reserve no room in their links' lists as they start;
 * the end gives each list room for exactly its entries, allocated once (a
 * 4,096-rank all-to-all's 32,768 lists grown a quarter at a time, all
 * together, left about 100 MB of malloc free space). In between, only
 * flow_start, flow_net_link_load and flow_net_bias_load may be called and
 * the engine must not run. flow_net_burst_end: 0, or -1 when out of memory
 * (the burst stays open: end it again, or destroy the net). */
void flow_net_burst_begin(flow_net *net);
int flow_net_burst_end(flow_net *net);

/* Per-link load: the sum of the usage weights of the flows on it now (what
 * adaptive routing and UGAL compare). n_links entries. */
const double *flow_net_link_load(const flow_net *net);

/* A link's capacity fraction against the number of flows on it (incast
 * into a host, flows sharing a fabric link): 1 for one flow; linear from 1
 * to efficiency[0] between 1 and 2 flows (a fractional, demand-weighted
 * fan-in: no step at 1); from 2 up to flows[0], efficiency[0]; piecewise
 * linear between points; the last point's efficiency beyond it. A scalar incast efficiency x is the
 * one-point curve {2: x}. Points ascending from 2, efficiencies in (0, 1]
 * (flow_curve_check). The multi-fidelity tables the packet tier measures
 * (docs/fabric.md "Multi-fidelity") are such curves. */
#define FLOW_CURVE_POINTS 32
typedef struct flow_curve {
    unsigned n_points;
    double flows[FLOW_CURVE_POINTS];
    double efficiency[FLOW_CURVE_POINTS];
} flow_curve;
double flow_curve_at(const flow_curve *curve, double flows);
/* 0, or -1 with the reason (no points, too many, not ascending from 2, an
 * efficiency outside (0, 1] or not finite). */
int flow_curve_check(const flow_curve *curve, char *why, size_t why_size);

/* Incast and sharing: curve_of_link[l] (a flow_curve, or NULL: full
 * capacity) scales link l's capacity C_l by the curve at its effective
 * fan-in, once two or more flows share it. injects (per link, or NULL)
 * marks the links senders inject on (out of a host or NIC); with it the
 * fan-in is demand-weighted (docs/fabric.md "Multi-fidelity"):
 *   n_eff = clamp(sum over flows f on l of min(1, w_fl x offer_f / C_l), 1, n)
 *   offer_f = min(f's rate cap, min over f's injection links m of C_m / W_m)
 * (w_fl f's weight on l, W_m the summed weights on m: the equal share the
 * sender's own link leaves f, computed when f is filled), so flows limited
 * by their senders' links count by what they offer: an N -> 1 incast of
 * senders alone on their links keeps n_eff = N exactly, an all-to-all's
 * n - 1 flows into a host offer its link about once. A link that carries a
 * curve should not be an injection link. Without injects, n_eff = n (the
 * flows counted). Not copied: the arrays and curves must outlive the net.
 * NULL curves clear both. Returns 0 or -1 (a curve refused by
 * flow_curve_check, or out of memory). O(usages) more per filling. */
int flow_net_set_incast(flow_net *net, const flow_curve *const *curve_of_link,
                        const uint8_t *injects);
/* Link l's effective fan-in n_eff as above (for tests and reports; n
 * flows on it without injects, 0 with no flow; the offers as of the last
 * filling). */
double flow_net_fanin(const flow_net *net, uint32_t link);

/* Add sign x the usage weights to the per-link load without starting a
 * flow: a caller routing several connections of one flow one after another
 * reserves each route so that the next adaptive choice sees it, then
 * removes the reservation once the flow is started. */
void flow_net_bias_load(flow_net *net, const topo_usage *usage, size_t n_usage, double sign);

/* The current rate of an active flow (0 until the instant's recomputation). */
double flow_rate(const flow_net *net, uint32_t flow);
uint32_t flow_active_count(const flow_net *net);
const flow_stats *flow_net_stats(const flow_net *net);

/* Bytes carried by link so far (0 for a link no flow has used), updated at
 * every recomputation and completion (so exact after the run). */
double flow_net_link_bytes(const flow_net *net, uint32_t link);

/* Bring every active flow's bytes up to now, onto its links (what a
 * recomputation does first): flow_net_link_bytes is then exact at this
 * instant (for sampling link utilisation over time). The rates stay. */
void flow_net_sync(flow_net *net);

/* Bytes the net holds in its own arrays (per link, per flow, the usage
 * pool, flow classes and link lists, by allocated capacity; not malloc's
 * headers nor the engine's events). A 6-hop single-path flow: about 120. */
size_t flow_net_memory_bytes(const flow_net *net);

/* Local repair (default on): with more than a few dozen active flows, a
 * recomputation re-solves only the flows whose max-min condition the change
 * can break (flow_fill.c) instead of the whole component. Off: always the
 * component (for tests that compare the two). */
void flow_net_set_local_repair(flow_net *net, int is_on);

/* Recompute every flow's rate from scratch over the whole network into
 * rates[flow id] (for tests: must equal the incremental rates). Returns 0
 * or -1 when out of memory. */
int flow_net_full_rates(flow_net *net, double *rates, size_t n_rates);

/* 0 when every link carries at most its capacity (relative 1e-9) and the
 * bytes started equal those delivered plus those still in flight; else
 * SIM_ERR_INTERNAL (a broken invariant is a bug) with the first violation in
 * err (err may be NULL). */
int flow_net_check(const flow_net *net, sim_error *err);

#endif
