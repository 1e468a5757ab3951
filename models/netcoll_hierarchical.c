/* netcoll_hierarchical.c - hierarchical all-reduce over m >= 2 whole
 * scale-up domains of g GPUs: per chunk, a reduce-scatter ring inside each
 * domain ((g-1)/g of the chunk), all-reduce rings of chunk/g across the
 * domains (2(m-1)/m of it, one ring per local rank, so one per rail), an
 * all-gather inside each domain; K chunks pipelined (chunk k's phase p
 * waits for chunk k's phase p-1 and chunk k-1's phase p).
 */
#include <math.h>

#include "netcoll_internal.h"

static int check(const nc_fabric *f, enum nc_collective coll, const uint32_t *r, unsigned n,
                 sim_error *err)
{
    (void)coll;
    if (nc_whole_domains(f, r, n) < 2)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "hierarchical all-reduce needs the ranks to fill two or more whole "
                             "scale-up domains of %u GPUs in order, got %u ranks",
                             f->domain_size, n);
    return 0;
}

/* The connections of phase ph (0, 2: inside each domain; 1: across). */
static void add_conns(nc_plan *p, const uint32_t *r, unsigned m, unsigned g, unsigned ph)
{
    if (ph == 1) {
        for (unsigned i = 0; i < g; i++) /* one ring per local rank (rail) */
            for (unsigned d = 0; d < m; d++)
                nc_add_conn(p, r[(size_t)d * g + i], r[(size_t)((d + 1) % m) * g + i], 1.0);
    } else {
        for (unsigned d = 0; d < m; d++)
            for (unsigned i = 0; i < g; i++)
                nc_add_conn(p, r[(size_t)d * g + i], r[(size_t)d * g + (i + 1) % g], 1.0);
    }
}

static int build(nc_plan *p, const nc_fabric *f, enum nc_collective coll, const uint32_t *r,
                 unsigned n, double bytes)
{
    (void)coll;
    unsigned m = nc_whole_domains(f, r, n), g = f->domain_size;
    unsigned K = f->chunks ? f->chunks : 1;
    double chunk = bytes / K;
    uint32_t prev_chunk[3] = {UINT32_MAX, UINT32_MAX, UINT32_MAX};
    for (unsigned k = 0; k < K; k++) {
        uint32_t prev = UINT32_MAX;
        for (unsigned ph = 0; ph < 3; ph++) {
            uint32_t deps[2] = {prev, prev_chunk[ph]};
            double lat, b;
            if (ph == 1) {
                b = chunk / g * 2.0 * (m - 1) / m;
                lat = 2.0 * (m - 1) * f->inter_step_latency_s;
            } else {
                b = chunk * (g - 1) / g;
                lat = (g - 1) * f->intra_step_latency_s;
            }
            if (k == 0 && ph == 0)
                lat += f->base_latency_s;
            prev = nc_add_phase(p, b, lat, INFINITY, 1, deps, 2);
            prev_chunk[ph] = prev;
            add_conns(p, r, m, g, ph);
        }
    }
    return p->failed ? -1 : 0;
}

const nc_algorithm_type nc_algo_hierarchical = {
    .name = "hierarchical",
    .doc = "per chunk: reduce-scatter in each node, all-reduce rings of S/g across nodes (one "
           "per rail), all-gather in each node; chunks pipelined",
    .collectives = 1u << NC_ALLREDUCE,
    .check = check,
    .build = build,
};
