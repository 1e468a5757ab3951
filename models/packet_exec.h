/* packet_exec.h - collectives' plans (netcoll.h) run on one shared packet
 * net (packet.h): the packet tier's counterpart of netcoll_exec.h. Any
 * number of plans, each started at any instant on the net's engine, their
 * packets contending for the same FIFOs and buffers.
 *
 * Semantics, those of netcoll_exec.c and packet_coll.h: a phase starts when
 * every phase it depends on is done; connection k of phase i becomes one
 * message of ceil(bytes x weight) bytes (none under one byte), sent at once
 * with the flow tier's route key nc_route_key(i, k); the phase is done
 * latency_s after its last message has arrived (a phase without messages:
 * latency_s after it starts); the plan is done when every phase is, and
 * done(ctx, tag) is called then. A coupled phase is its messages, each at
 * the pace the network gives it (the phase ends with its slowest).
 * An in-network phase (netcoll_in_network.c's fabric SHARP) is one SHARP
 * all-reduce over the hosts whose links it lists (packet_sharp.h), of the
 * phase's bytes at its rate cap as the reduction rate: it counts one
 * message and its bytes per rank. Refused: what pkc_plan_check and
 * pkt_sharp_plan_check refuse (NVLS, rate caps outside in-network phases,
 * sizes not finite). Cost per run: one block of 3 n_phases + n_deps + 2
 * words, freed when the plan is done.
 */
#ifndef DCSIM_MODELS_PACKET_EXEC_H
#define DCSIM_MODELS_PACKET_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "netcoll.h"
#include "packet.h"

typedef struct pkx pkx;

/* Called once the plan's last phase is done (its latency included). */
typedef void (*pkx_done_fn)(void *ctx, uint64_t tag);

/* An executor of plans on net (on engine eng); both must outlive it. NULL
 * when out of memory. */
pkx *pkx_create(sim_engine *eng, pkt_net *net);
void pkx_destroy(pkx *x); /* NULL-safe; runs still in flight are dropped */

/* Per-phase times of the runs started from now on (NULL: none): phase i's
 * start and end relative to the run's start, written into the caller's
 * arrays (p->n_phases entries each) of the next pkx_start only. */
void pkx_record_phases(pkx *x, double *phase_start_s, double *phase_end_s);

/* Start plan p now (its first phases send at once). The plan must stay
 * alive and unchanged until done is called; one plan may run several times
 * at once. Returns 0; -1 when the plan is refused or a send fails (no
 * route, not one path), -2 when out of memory, with the reason in
 * pkx_why. A failure while a later phase starts stops the engine
 * (sim_stop) and is kept: pkx_error returns it. */
int pkx_start(pkx *x, const nc_plan *p, pkx_done_fn done, void *ctx, uint64_t tag);

/* 0, or the first failure (-1 or -2 as pkx_start's) inside a running plan. */
int pkx_error(const pkx *x);
/* The reason of the first failure ("" if none). */
const char *pkx_why(const pkx *x);

/* Plans started and finished so far; messages sent and their bytes (each
 * rounded up to a whole byte). */
uint64_t pkx_started(const pkx *x);
uint64_t pkx_finished(const pkx *x);
uint64_t pkx_messages(const pkx *x);
double pkx_sent_bytes(const pkx *x);

#endif
