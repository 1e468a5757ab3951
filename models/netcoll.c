/* netcoll.c - the collectives' names, defaults and the algorithm registry,
 * and the plan entry points that check a request and hand it to the
 * algorithm's builder (see netcoll.h; the builders are netcoll_NAME.c, the
 * building blocks netcoll_plan.c, the executors netcoll_sim.c and
 * netcoll_analytic.c). */
#include "netcoll.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "netcoll_internal.h"

#define FAIL(...) return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, __VA_ARGS__)

/* NCCL's ring latencies for the Simple protocol (tuning.cc at b6475625,
 * hardware.md 7.3, V): base 8.4 us, NVLink step 3.4 us, network step 14 us.
 * Scenarios override the step latencies per link technology. */
#define NCCL_RING_BASE_LATENCY_S 8.4e-6
#define NCCL_NVLINK_STEP_LATENCY_S 3.4e-6
#define NCCL_NET_STEP_LATENCY_S 14.0e-6

/* The registry: one line per algorithm, naming the nc_algorithm_type its
 * file defines, in enum nc_algorithm order (a new algorithm goes last). */
#define NC_ALGORITHM_REGISTRY(X)                                                      \
    X(nc_algo_auto)         /* netcoll_auto.c          NC_ALGO_AUTO */                \
    X(nc_algo_ring)         /* netcoll_ring.c          NC_ALGO_RING */                \
    X(nc_algo_tree)         /* netcoll_tree.c          NC_ALGO_TREE */                \
    X(nc_algo_hd)           /* netcoll_hd.c            NC_ALGO_HALVING_DOUBLING */    \
    X(nc_algo_hierarchical) /* netcoll_hierarchical.c  NC_ALGO_HIERARCHICAL */        \
    X(nc_algo_in_network)   /* netcoll_in_network.c    NC_ALGO_IN_NETWORK */          \
    X(nc_algo_direct)       /* netcoll_direct.c        NC_ALGO_DIRECT */

#define NC_DECLARE(type) extern const nc_algorithm_type type;
NC_ALGORITHM_REGISTRY(NC_DECLARE)
#undef NC_DECLARE

#define NC_ENTRY(type) &type,
const nc_algorithm_type *const nc_algorithms[] = {NC_ALGORITHM_REGISTRY(NC_ENTRY) NULL};
#undef NC_ENTRY

static const char *const coll_names[] = {"allreduce", "reducescatter", "allgather",
                                         "alltoall", "broadcast", "sendrecv"};

unsigned nc_algorithm_count(void)
{
    return sizeof nc_algorithms / sizeof nc_algorithms[0] - 1;
}

const nc_algorithm_type *nc_algorithm_get(int a)
{
    return a >= 0 && (unsigned)a < nc_algorithm_count() ? nc_algorithms[a] : NULL;
}

const char *nc_collective_name(int c)
{
    return c >= 0 && c < NC_COLLECTIVE_COUNT ? coll_names[c] : "?";
}

const char *nc_algorithm_name(int a)
{
    const nc_algorithm_type *t = nc_algorithm_get(a);
    return t ? t->name : "?";
}

int nc_collective_parse(const char *name, enum nc_collective *out)
{
    for (int i = 0; i < NC_COLLECTIVE_COUNT; i++)
        if (!strcmp(name, coll_names[i]))
            return *out = (enum nc_collective)i, 0;
    return -1;
}

int nc_algorithm_parse(const char *name, enum nc_algorithm *out)
{
    for (unsigned i = 0; nc_algorithms[i]; i++)
        if (!strcmp(name, nc_algorithms[i]->name))
            return *out = (enum nc_algorithm)i, 0;
    return -1;
}

double nc_busbw_factor(enum nc_collective c, unsigned n)
{
    if (n < 1)
        return 0;
    switch (c) {
    case NC_ALLREDUCE:
        return 2.0 * (n - 1) / n;
    case NC_REDUCESCATTER:
    case NC_ALLGATHER:
    case NC_ALLTOALL:
        return (double)(n - 1) / n;
    default:
        return 1.0;
    }
}

void nc_fill_result(const nc_plan *p, double t, nc_result *out)
{
    out->time_s = t;
    out->algbw = t > 0 ? p->bytes / t : INFINITY;
    out->busbw = out->algbw * nc_busbw_factor(p->coll, p->ranks);
}

void nc_fabric_defaults(nc_fabric *f)
{
    memset(f, 0, sizeof *f);
    f->base_latency_s = NCCL_RING_BASE_LATENCY_S;
    f->intra_step_latency_s = NCCL_NVLINK_STEP_LATENCY_S;
    f->inter_step_latency_s = NCCL_NET_STEP_LATENCY_S;
    f->chunks = 4;
}

void nc_plan_free(nc_plan *p)
{
    free(p->phase);
    free(p->conn);
    free(p->deps);
    free(p->rank);
    memset(p, 0, sizeof *p);
}

int nc_plan_build(nc_plan *p, const nc_fabric *f, enum nc_collective coll,
                  enum nc_algorithm algo, const uint32_t *r, unsigned n, double bytes,
                  sim_error *err)
{
    memset(p, 0, sizeof *p);
    return nc_plan_append(p, f, coll, algo, r, n, bytes, err);
}

int nc_plan_append(nc_plan *p, const nc_fabric *f, enum nc_collective coll,
                   enum nc_algorithm algo, const uint32_t *r, unsigned n, double bytes,
                   sim_error *err)
{
    return nc_plan_append_merged(p, f, coll, algo, r, n, bytes, 1, err);
}

int nc_plan_append_merged(nc_plan *p, const nc_fabric *f, enum nc_collective coll,
                          enum nc_algorithm algo, const uint32_t *r, unsigned n, double bytes,
                          double instances, sim_error *err)
{
    if (!(instances > 0) || !isfinite(instances))
        FAIL("a merged collective needs a finite number of instances > 0");
    if (n < 2)
        FAIL("a collective needs at least 2 ranks, got %u", n);
    if (!(bytes >= 0) || !isfinite(bytes))
        FAIL("message size must be a finite number of bytes >= 0");
    for (unsigned i = 0; i < n; i++)
        if (r[i] >= f->g->n_nodes || f->g->node_kind[r[i]] != TOPO_HOST)
            FAIL("rank %u: node %u is not a host of the topology", i, r[i]);
    const nc_algorithm_type *t = nc_algorithm_get(algo);
    p->nccl_algo = p->nccl_proto = -1;
    p->nccl_latency_s = -1;
    p->nccl_bytes_factor = 1;
    if (t && t->resolve) {
        algo = t->resolve(f, coll, r, n, bytes, p);
        t = nc_algorithm_get(algo);
    }
    if (!t || !t->build)
        FAIL("unknown algorithm");
    p->coll = coll;
    p->algo = algo;
    p->ranks = n;
    p->bytes = bytes * instances;
    if ((unsigned)coll >= NC_COLLECTIVE_COUNT || !(t->collectives & 1u << coll))
        FAIL("algorithm %s does not implement %s", t->name, nc_collective_name(coll));
    int rc = t->check ? t->check(f, coll, r, n, err) : 0;
    if (rc)
        return rc;
    uint32_t first = p->n_phases;
    if (t->build(p, f, coll, r, n, bytes * instances) || p->failed)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory for the collective plan");
    for (uint32_t i = first; i < p->n_phases; i++) { /* the protocol auto picked */
        p->phase[i].bytes *= p->nccl_bytes_factor;
        if (p->nccl_latency_s >= 0)
            p->phase[i].latency_s = p->nccl_latency_s;
    }
    return 0;
}

int nc_plan_permutation(nc_plan *p, const nc_fabric *f, const uint32_t *src, const uint32_t *dst,
                        unsigned n, double bytes, sim_error *err)
{
    memset(p, 0, sizeof *p);
    if (!n)
        FAIL("a permutation needs at least one pair");
    for (unsigned i = 0; i < n; i++)
        if (src[i] >= f->g->n_nodes || dst[i] >= f->g->n_nodes ||
            f->g->node_kind[src[i]] != TOPO_HOST || f->g->node_kind[dst[i]] != TOPO_HOST)
            FAIL("pair %u: %u -> %u is not a pair of hosts", i, src[i], dst[i]);
    p->coll = NC_SENDRECV;
    p->algo = NC_ALGO_DIRECT;
    p->nccl_algo = p->nccl_proto = -1;
    p->ranks = 2;
    p->bytes = bytes;
    nc_add_phase(p, bytes, f->base_latency_s + f->inter_step_latency_s, INFINITY, 0, NULL, 0);
    for (unsigned i = 0; i < n; i++)
        nc_add_conn(p, src[i], dst[i], 1.0);
    if (p->failed)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory for the collective plan");
    return 0;
}
