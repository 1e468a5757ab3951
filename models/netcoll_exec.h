/* netcoll_exec.h - collectives' plans run on a shared engine and flow net:
 * many plans at once, each started at any instant, their flows contending
 * for the same links (max-min, flow.h). A plan's phase starts when the
 * phases it depends on are done, routes its connections on the load of that
 * moment and starts one flow (coupled) or one per connection; it is done its
 * latency after its last flow; the plan is done when every phase is. This is
 * what nc_simulate does for one plan on an idle network; the step tier's
 * concurrent iteration (step.h) runs every PP send and DP bucket of an
 * iteration through one executor.
 */
#ifndef DCSIM_MODELS_NETCOLL_EXEC_H
#define DCSIM_MODELS_NETCOLL_EXEC_H

#include <stdint.h>

#include "engine.h"
#include "error.h"
#include "flow.h"
#include "flow_fold.h"
#include "netcoll.h"

typedef struct nc_exec nc_exec;

/* Called once the plan's last phase is done (its latency included). */
typedef void (*nc_exec_done_fn)(void *ctx, uint64_t tag);

/* A flow net over f's links (capacities and incast efficiency) on eng; the
 * engine and fabric must outlive the executor. NULL when out of memory.
 * The net holds every link's state from the start (a whole iteration's
 * traffic); nc_exec_create_sparse gives a link its state when a flow first
 * uses it (one collective on a large fabric: the links it touches). */
nc_exec *nc_exec_create(sim_engine *eng, const nc_fabric *f);
nc_exec *nc_exec_create_sparse(sim_engine *eng, const nc_fabric *f);
void nc_exec_destroy(nc_exec *x); /* NULL-safe; runs still in flight are dropped */

/* Back to the state it was created in (nc_exec_create or _sparse) on the
 * executor's own engine (reset by the caller), keeping its memory
 * (flow_net_reset: a sparse net stays sparse): for an unfolded executor
 * without link tracking or observer whose plans are all done, on a fabric
 * with the same graph, router and incast efficiency.
 * Returns 0, or -1 (and changes nothing) otherwise. */
int nc_exec_reset(nc_exec *x, const nc_fabric *f);

/* Start plan p now (its first phases route and start at once). The plan
 * must stay alive and unchanged until done is called; one plan may run
 * several times at once. Returns 0, or the error's code with the reason in
 * err: SIM_ERR_NOMEM, or a route failure (nc_route_failure). A failure
 * while a later phase starts stops the engine (sim_stop) and is kept:
 * nc_exec_error returns its code. */
int nc_exec_start(nc_exec *x, const nc_plan *p, unsigned cls, nc_exec_done_fn done, void *ctx,
                  uint64_t tag, sim_error *err);

/* Keep each coupled phase's merged route, by plan address and phase, and
 * start later runs of that phase from it (netcoll_routes.h), up to
 * max_usages usages in all (5 bytes each). Only where routes cannot change
 * between starts: a static router (topo_router_uses_load 0) and no incast
 * efficiency (the two readers of the links' load); elsewhere a no-op. The
 * caller promises that a plan address always holds the same plan while the
 * executor lives (nc_exec_reset refuses an executor that keeps routes).
 * 0, or -1 when out of memory. */
int nc_exec_keep_routes(nc_exec *x, size_t max_usages);
size_t nc_exec_kept_route_bytes(const nc_exec *x); /* the kept routes' memory; 0 when none */

/* ---- exact symmetry folding (flow_fold.h) ----
 * The flows plan p starts on a net whose routes do not depend on the load
 * (topo_router_uses_load is 0), in the executor's own order and numbering:
 * phase by phase, one flow for a coupled phase, else one per connection
 * (none for a phase without connections); each flow's usages (a coupled
 * phase's merged per link, as it starts them), bytes and phase. Appended to
 * *l, which starts zeroed. */
typedef struct nc_flow_list {
    size_t n, cap;          /* flows */
    size_t *offset;         /* n + 1: flow i's usages are usage[offset[i] .. offset[i + 1]) */
    topo_usage *usage;
    size_t cap_usage;
    double *bytes;
    uint32_t *phase;
    /* routing scratch, per link of the fabric, kept across calls (a list is
     * built from thousands of plans: a fresh 6 MB per call on a 16K-GPU
     * fabric was 3 M page faults per iteration); slot[] is all UINT32_MAX
     * between calls */
    topo_usage *route_one, *route_all;
    uint32_t *route_slot;
    size_t route_links;
} nc_flow_list;
int nc_exec_plan_flows(const nc_fabric *f, const nc_plan *p, nc_flow_list *l, sim_error *err);
void nc_flow_list_free(nc_flow_list *l); /* NULL-safe, leaves it zeroed */

/* An executor whose flow net is fd's quotient: one link per link cell, with
 * the cell's capacity (f must have no incast efficiency and static routes;
 * NULL otherwise or when out of memory). fd must outlive it. Plans start
 * with nc_exec_start_folded: flow k of the plan (nc_exec_plan_flows' order)
 * is flow first + k of fd; only each cell's representative moves, on its
 * quotient usages, and the others of its cell are taken to move with it
 * (a phase none of whose flows represents a cell is done after its latency).
 * Link data (nc_exec_link_busy, the net's link bytes) is then per link cell. */
nc_exec *nc_exec_create_folded(sim_engine *eng, const nc_fabric *f, flow_fold *fd);
int nc_exec_start_folded(nc_exec *x, const nc_plan *p, uint32_t first, unsigned cls,
                         nc_exec_done_fn done, void *ctx, uint64_t tag, sim_error *err);

/* Link activity by class of traffic (cls of nc_exec_start, below
 * NC_EXEC_CLASSES): from now on, per link, how long flows of each class were
 * on it and how long flows of two classes or more were on it at once (exact:
 * updated at every flow start and finish). 0, or -1 when out of memory. */
#define NC_EXEC_CLASSES 4
int nc_exec_track_links(nc_exec *x);

/* Per link of the net (n_links entries; link cells when folded), after
 * the run: seconds with a flow of class cls on it, and seconds with flows
 * of two classes or more; NULL unless tracked. */
const double *nc_exec_link_busy(const nc_exec *x, unsigned cls);
const double *nc_exec_link_overlap(const nc_exec *x);

/* Each flow the executor starts and finishes, told to an observer (the
 * step tier's flow log): started(ctx, id, f) as the flow enters the flow
 * net, finished(ctx, id) when its last byte is through (before its phase's
 * latency). id is the flow net's, reused once the flow is done. f and what
 * it points to live only during the call. NULL hooks: nothing is told. */
typedef struct nc_exec_flow {
    uint64_t tag;          /* the plan's run (nc_exec_start) */
    uint32_t phase;        /* the plan's phase it belongs to */
    uint32_t n_conn;       /* connections it carries: 1, or a coupled phase's every one */
    uint32_t src, dst;     /* its (first) connection: hosts, or dst NC_FIXED_LINK and src a
                              link (an in-network reduction) */
    double bytes;          /* what it moves: every connection of a coupled phase together */
    double flow_bytes;     /* the flow net's size: link u[k].link carries flow_bytes x
                              u[k].weight */
    const topo_usage *u;
    size_t n_u;
} nc_exec_flow;
typedef void (*nc_exec_flow_start_fn)(void *ctx, uint32_t id, const nc_exec_flow *f);
typedef void (*nc_exec_flow_end_fn)(void *ctx, uint32_t id);
void nc_exec_observe(nc_exec *x, nc_exec_flow_start_fn started, nc_exec_flow_end_fn finished,
                     void *ctx);

/* 0, or the code of the first failure inside a running plan. */
int nc_exec_error(const nc_exec *x);

flow_net *nc_exec_net(nc_exec *x);

/* Plans started and finished so far. */
uint64_t nc_exec_started(const nc_exec *x);
uint64_t nc_exec_finished(const nc_exec *x);

#endif
