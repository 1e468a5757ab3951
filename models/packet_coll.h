/* packet_coll.h - a collective's plan (netcoll.h: phases of connections,
 * dependencies, a latency per phase) run on the packet tier (packet.h),
 * and the same plan timed on the flow tier (nc_simulate) for comparison
 * (docs/fabric.md "Collectives on the packet tier").
 *
 * Semantics, those of netcoll_exec.c: a phase starts when every phase it
 * depends on is done; connection k of phase i becomes one message of
 * ceil(bytes x weight) bytes sent at once, routed with the flow tier's key
 * nc_route_key(i, k) (so under ECMP both tiers take the same path); the
 * phase is done latency_s after its last message has arrived (a phase
 * without connections: latency_s after it starts); the collective is done
 * when every phase is. A coupled phase (one flow at its slowest
 * connection's rate on the flow tier) is its messages, each at the pace the
 * network gives it: the phase still ends with its slowest message.
 * An in-network phase (connections to fixed links: the fabric SHARP of
 * netcoll_in_network.c) runs as one SHARP all-reduce with its rate cap as
 * the switches' reduction rate (packet_sharp.h). Refused: a rate cap
 * outside such a phase, a phase mixing both kinds, sizes that are not
 * finite; on a graph (pkt_sharp_plan_check): NVLS, GPUs sharing a NIC.
 */
#ifndef DCSIM_MODELS_PACKET_COLL_H
#define DCSIM_MODELS_PACKET_COLL_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "netcoll.h"
#include "packet.h"
#include "packet_series.h"

typedef struct pkc_result {
    double time_s;           /* the last phase's end, its latency included (from the start) */
    uint64_t messages;       /* one per connection */
    double plan_bytes;       /* sum over connections of the plan's bytes x weight */
    double sent_bytes;       /* what the messages carried (each rounded up to a whole byte) */
    double max_queued_bytes; /* pkc_compare_run: most bytes in one egress FIFO at once */
    uint32_t max_queued_link;/* pkc_compare_run: that link (UINT32_MAX: none, or pkc_run) */
    double wall_s;           /* seconds the run took */
    pkt_net_stats stats;     /* the net's counters at the end */
} pkc_result;

/* 0 when the packet tier can run plan p; else -1 with the reason. */
int pkc_plan_check(const nc_plan *p, char *why, size_t why_size);

/* Run p on net (on engine eng, idle: no message in flight) from now until
 * the engine is empty. phase_start_s and phase_end_s (p->n_phases entries
 * each, or NULL) receive each phase's start and end relative to the start.
 * Returns 0 and fills *out; -1 with the reason when the plan is refused or
 * a send fails (no route, not one path); -2 when the run fails (out of
 * memory, a phase that never ends: a bug). After a failure messages may
 * still be in flight: destroy the net and engine. */
int pkc_run(sim_engine *eng, pkt_net *net, const nc_plan *p, double *phase_start_s,
            double *phase_end_s, pkc_result *out, char *why, size_t why_size);

typedef struct pkc_compare {
    pkc_result packet;       /* the packet tier's run */
    nc_result flow;          /* nc_simulate on f: the flow tier */
    uint64_t digest;         /* the packet run's event digest */
    uint64_t events_fired;   /* and its engine events */
    int check_rc;            /* pkt_net_check at the end: 0 consistent */
} pkc_compare;

/* p on both tiers over f's graph and router: the flow tier by nc_simulate
 * (f's capacities, incast efficiency, latencies as in the plan), the
 * packet tier on a fresh engine and net with cfg. Returns as pkc_run (-2
 * also for an inconsistent net, with pkt_net_check's reason). */
int pkc_compare_run(const nc_fabric *f, const pkt_config *cfg, const nc_plan *p,
                    pkc_compare *out, char *why, size_t why_size);
/* pkc_compare_run with the packet run sampled as req asks (packet_series.h;
 * req may be NULL): req->series is the finished series when it returns 0. */
int pkc_compare_run_series(const nc_fabric *f, const pkt_config *cfg, const nc_plan *p,
                           pkt_series_request *req, pkc_compare *out, char *why,
                           size_t why_size);

#endif
