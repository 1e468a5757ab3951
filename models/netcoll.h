/* netcoll.h - collectives on a real topology: each collective expands into
 * a dependency graph (DAG) of phases, run on the max-min flow model
 * (flow.h) or evaluated in closed form (the analytic path).
 *
 * A phase is a set of connections (host -> host, routed by topo_route when
 * the phase starts, so adaptive routing sees the load of that moment; or a
 * fixed link, for in-network reduction) that move `bytes` each, times a
 * per-connection weight. A coupled phase is one flow over the union of its
 * connections' links: a pipelined ring or tree streams at the pace of its
 * slowest connection, so all its connections run at one rate (a ring with
 * one collided link is as slow as that link). An uncoupled phase (all-to-all,
 * send/recv) starts one flow per connection. A phase ends when its flows are
 * through, plus its latency; then the phases that depend on it start.
 *
 * Expansions (n ranks, S bytes; nccl-tests' S: the per-rank buffer of an
 * all-reduce, the total array of all-gather / reduce-scatter / all-to-all):
 *  - ring (all-reduce, reduce-scatter, all-gather, broadcast): C channels, each
 *    one coupled phase carrying S/C x factor per connection, factor 2(n-1)/n,
 *    (n-1)/n, (n-1)/n, 1 (hardware.md 7.1-7.2). Rail-aware ring order: when
 *    the ranks fill whole scale-up domains of g GPUs, channel c enters domain
 *    m at local GPU (c - m) mod g and leaves from the GPU before it, so every
 *    hop between domains stays on one rail and channels use different NICs
 *    (NCCL's rings on rail-optimised fabrics).
 *  - double binary tree (all-reduce): two trees over the domains, each S/2,
 *    a chain inside each domain; reduce and broadcast pipelined (coupled).
 *  - halving-doubling (all-reduce, n a power of two): log2 n reduce-scatter
 *    steps exchanging S/2, S/4, ... with partner rank XOR 2^j, then the
 *    all-gather mirror; one coupled phase per step, chained.
 *  - hierarchical (all-reduce): per chunk, reduce-scatter ring inside each
 *    domain, all-reduce rings of S/g across domains (one per local rank, so
 *    one per rail), all-gather inside each domain; K chunks pipelined (chunk
 *    k's phase p waits for chunk k's phase p-1 and chunk k-1's phase p).
 *  - in-network (all-reduce): NVLS inside one domain (each GPU sends S to the
 *    crossbar and receives S), SHARP over the fabric otherwise (each rank's
 *    NIC plus an aggregation tree of switches, every tree link carrying S
 *    once each way); capped at the reduction bandwidth of the technology.
 *  - direct (all-to-all, send/recv): each rank's n-1 sends of S/n as one
 *    coupled phase (n flows, as NCCL's grouped send/recv); send/recv: one flow.
 * Each expansion is one file, models/netcoll_NAME.c, listed in the registry
 * below; auto picks one (netcoll_auto.c).
 *
 * Latency: NCCL's model (hardware.md 7.2-7.3, tuning.cc): a base latency plus
 * a per-step latency, intra-domain steps at the scale-up technology's step
 * latency and inter-domain steps at the fabric's; a ring of n ranks over m
 * domains takes k(n-1) steps of which k(m-1) cross the fabric (k = 2 for
 * all-reduce, 1 otherwise). Other algorithms count their steps likewise.
 * These are the Simple protocol's latencies, used by an explicit algorithm.
 *
 * Auto: NCCL's tuning model (nccl_tuning.h) picks an (algorithm, protocol)
 * for the collective, ranks, nodes and size; the expansion matching the
 * algorithm is built (Ring: ring; Tree: tree; NVLS in one node or CollNet:
 * in-network; NVLSTree: hierarchical) and the protocol applied to its phases:
 * the tuner's latency (ring, tree, CollNet; NVLS keeps a measured reduction
 * latency when the link gives one) and bytes x 1/wire efficiency (LL 2,
 * LL128 128/120). All-to-all and send/recv are direct.
 *
 * Analytic path: the same phases, routed on an idle network, each level of
 * the DAG (phases at equal depth run together) taking
 *   max over its phases of bytes / min_l(capacity_l / W_l) + latency,
 * with W_l the summed weights of that level's phases on link l (the
 * bottleneck-link closed form; equal to the flow path when the phases are
 * symmetric).
 */
#ifndef DCSIM_MODELS_NETCOLL_H
#define DCSIM_MODELS_NETCOLL_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "flow.h"
#include "graph.h"
#include "routing.h"

enum nc_collective { NC_ALLREDUCE = 0, NC_REDUCESCATTER, NC_ALLGATHER, NC_ALLTOALL,
                     NC_BROADCAST, NC_SENDRECV, NC_COLLECTIVE_COUNT };
/* An algorithm is its index in the registry (nc_algorithms below); these are
 * the built-in ones, in registry order. One added later needs no value here:
 * nc_algorithm_parse finds it by name. */
enum nc_algorithm { NC_ALGO_AUTO = 0, NC_ALGO_RING, NC_ALGO_TREE, NC_ALGO_HALVING_DOUBLING,
                    NC_ALGO_HIERARCHICAL, NC_ALGO_IN_NETWORK, NC_ALGO_DIRECT };

/* What the collectives know of the cluster. */
typedef struct nc_fabric {
    const topo_graph *g;          /* capacities are effective (rate x efficiency) */
    topo_router *router;
    unsigned domain_size;         /* GPUs per scale-up domain (0: none) */
    double base_latency_s;        /* per collective */
    double intra_step_latency_s;  /* one step inside a scale-up domain */
    double inter_step_latency_s;  /* one step across the fabric */
    double scaleup_reduction_bytes_per_s; /* NVLS per GPU; 0 = not available */
    double scaleup_reduction_latency_s;
    double fabric_reduction_bytes_per_s;  /* SHARP per NIC; 0 = not available */
    const double *incast_efficiency; /* per link (flow_net_set_incast), or NULL */
    double *scratch;              /* n_links zeros the analytic path may borrow (and leaves
                                     zeroed), or NULL: it allocates its own */
    unsigned channels;            /* ring channels (0: one per GPU of a domain) */
    unsigned chunks;              /* hierarchical pipeline chunks (>= 1) */
    /* NCCL's tuning model (auto; nccl_tuning.h): */
    double intra_wire_latency_s;  /* floor under every scale-up step (0: none) */
    double inter_wire_latency_s;  /* floor under every network step (0: none) */
    double net_overhead_s;        /* per network step (0: NCCL's 1 us, Intel hosts) */
    int is_latency_free;          /* tests only: every auto latency 0 (with the base and
                                     step latencies above set to 0 by the caller) */
} nc_fabric;

typedef struct nc_conn {
    uint32_t src, dst;  /* hosts; dst == NC_FIXED_LINK: src is a link id */
    double weight;
} nc_conn;
#define NC_FIXED_LINK UINT32_MAX

typedef struct nc_phase {
    uint32_t conn_first, n_conn;
    double bytes;        /* per unit of connection weight */
    double latency_s;
    double rate_cap;     /* bytes/s per flow (INFINITY: none) */
    int coupled;
    uint32_t dep_first, n_deps;  /* phases this one waits for, in plan->deps */
} nc_phase;

typedef struct nc_plan {
    nc_phase *phase;
    uint32_t n_phases, cap_phases;
    nc_conn *conn;
    uint32_t n_conns, cap_conns;
    uint32_t *deps;
    uint32_t n_deps, cap_deps;
    enum nc_collective coll;
    enum nc_algorithm algo;  /* resolved (never AUTO) */
    unsigned ranks;
    double bytes;
    int failed;
    /* auto only (else nccl_algo = -1): NCCL's pick for the last collective
     * appended (enum nccl_algo, nccl_proto of nccl_tuning.h), its predicted
     * time, and what was applied to that collective's phases: latency_s
     * (the tuner's; < 0: the expansion's own) and bytes x 1/wire efficiency */
    int nccl_algo, nccl_proto;
    unsigned nccl_channels;
    double nccl_time_s, nccl_latency_s, nccl_bytes_factor;
} nc_plan;

typedef struct nc_result {
    double time_s;
    double algbw, busbw;   /* bytes/s, nccl-tests definitions (hardware.md 7.1) */
    uint64_t flows, recomputes, events;
    uint32_t max_active_flows;
    /* analytic path only: switch-to-switch links used, summed over the DAG's
     * levels, and those carrying more than one connection's worth of bytes
     * (load weight > 1: a collision, when one connection per link would do) */
    uint64_t fabric_links_used, fabric_links_colliding;
} nc_result;

/* ---- the algorithm registry ----
 * One entry per algorithm: its file (models/netcoll_NAME.c) defines a const
 * nc_algorithm_type and netcoll.c's NC_ALGORITHM_REGISTRY lists it in one
 * line. nc_plan_append checks, in this order, the rank count, size and hosts
 * (every algorithm), resolves `resolve` (auto), then refuses a collective
 * outside `collectives`, then calls check, then build. */

/* 0 when the algorithm can arrange coll over ranks r[0..n) on f, else
 * SIM_ERR_INPUT with err saying why (power-of-two ranks, whole domains,
 * reduction hardware). */
typedef int (*nc_check_fn)(const nc_fabric *f, enum nc_collective coll, const uint32_t *r,
                           unsigned n, sim_error *err);
/* Append coll's phases and connections to p (checked); 0, or -1 when out of
 * memory (p->failed). */
typedef int (*nc_build_fn)(nc_plan *p, const nc_fabric *f, enum nc_collective coll,
                           const uint32_t *r, unsigned n, double bytes);
/* The algorithm to build instead (auto's choice); never a resolver itself.
 * It may also set p->nccl_* (the pick of NCCL's tuning model and how to
 * apply its protocol to the phases built next; see nc_plan). */
typedef enum nc_algorithm (*nc_resolve_fn)(const nc_fabric *f, enum nc_collective coll,
                                           const uint32_t *r, unsigned n, double bytes,
                                           nc_plan *p);

typedef struct nc_algorithm_type {
    const char *name;       /* as --algo writes it: "ring" */
    const char *doc;        /* one line: the expansion (docs/fabric.md has the table) */
    unsigned collectives;   /* bit 1u << c for each enum nc_collective it implements */
    nc_check_fn check;      /* NULL: any ranks will do */
    nc_build_fn build;      /* NULL only for a resolver */
    nc_resolve_fn resolve;  /* NULL, or: this name only picks another algorithm */
} nc_algorithm_type;

/* The registry, in enum nc_algorithm order, ending in NULL. */
extern const nc_algorithm_type *const nc_algorithms[];

/* Entries in nc_algorithms; the algorithm's entry, or NULL out of range. */
unsigned nc_algorithm_count(void);
const nc_algorithm_type *nc_algorithm_get(int a);

const char *nc_collective_name(int c);   /* "allreduce", ...; "?" if out of range */
const char *nc_algorithm_name(int a);    /* the registry's name; "?" if out of range */
int nc_collective_parse(const char *name, enum nc_collective *out);
int nc_algorithm_parse(const char *name, enum nc_algorithm *out); /* by registry name */

/* nccl-tests' bus bandwidth factor: busbw = algbw x factor (in-network
 * all-reduce keeps 2(n-1)/n so that algorithms compare on one scale). */
double nc_busbw_factor(enum nc_collective c, unsigned ranks);

/* The fabric's defaults: NCCL's ring Simple latencies (base 8.4 us, NVLink
 * and network step latencies; netcoll.c), 4 hierarchical pipeline chunks,
 * automatic channels; g and router set by the caller. */
void nc_fabric_defaults(nc_fabric *f);

/* Errors: every function below returns 0, or a non-zero sim_error code with
 * err (caller-owned, may be NULL; the first error wins) saying why:
 * SIM_ERR_INPUT for a request the fabric or algorithm cannot serve,
 * SIM_ERR_NOMEM when out of memory. */

/* Expand a collective over ranks[0..n) (host ids; ranks[0] is the root of a
 * broadcast, send/recv goes ranks[0] -> ranks[1]) into plan (zeroed on
 * entry; free with nc_plan_free). Fails for an algorithm not defined for the
 * collective, halving-doubling on a rank count that is not a power of two,
 * in-network reduction the hardware lacks, or no memory. */
int nc_plan_build(nc_plan *plan, const nc_fabric *f, enum nc_collective coll,
                  enum nc_algorithm algo, const uint32_t *ranks, unsigned n, double bytes,
                  sim_error *err);
void nc_plan_free(nc_plan *plan);

/* As nc_plan_build, appending to an existing plan (its phases start at the
 * same time as the plan's other roots): several collectives at once, e.g.
 * every data-parallel group of a cluster. */
int nc_plan_append(nc_plan *plan, const nc_fabric *f, enum nc_collective coll,
                   enum nc_algorithm algo, const uint32_t *ranks, unsigned n, double bytes,
                   sim_error *err);

/* Add scale x the bytes the plan puts on every link (routed as the analytic
 * path routes it) to bytes[n_links]. When touched is not NULL (room for
 * n_links ids), the links whose bytes were 0 before are appended to it and
 * counted in *n_touched. Fails when a route fails or out of memory. */
int nc_link_bytes(const nc_plan *plan, const nc_fabric *f, double scale, double *bytes,
                  uint32_t *touched, size_t *n_touched, sim_error *err);

/* A permutation: pairs src[i] -> dst[i] each move bytes, all at once, as
 * independent flows (one uncoupled phase). */
int nc_plan_permutation(nc_plan *plan, const nc_fabric *f, const uint32_t *src,
                        const uint32_t *dst, unsigned n, double bytes, sim_error *err);

/* Run the plan on the flow model from an idle network (netcoll_sim.c).
 * Fails when a route fails or out of memory. */
int nc_simulate(const nc_plan *plan, const nc_fabric *f, nc_result *out, sim_error *err);

/* The closed-form time of the plan (see above; netcoll_analytic.c). */
int nc_analytic(const nc_plan *plan, const nc_fabric *f, nc_result *out, sim_error *err);

#endif
