/* netcoll_ring.c - ring collectives (all-reduce, reduce-scatter,
 * all-gather, broadcast): C channels, each one coupled phase carrying
 * S/C x factor per connection, factor 2(n-1)/n, (n-1)/n, (n-1)/n, 1
 * (hardware.md 7.1-7.2), with NCCL's latency of k(n-1) steps, k(m-1) of them
 * across the fabric (k = 2 for all-reduce). Rail-aware order when the ranks
 * come in blocks of g per scale-up domain (netcoll.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "netcoll_internal.h"

/* The ring order of channel c (see netcoll.h): rail-aware rotation when the
 * ranks come in blocks of g per domain, else the ranks as given. */
static void ring_order(const uint32_t *r, unsigned n, unsigned domains, unsigned g, unsigned c,
                       uint32_t *order)
{
    if (!domains || domains < 2) {
        memcpy(order, r, n * sizeof *r);
        return;
    }
    for (unsigned m = 0; m < domains; m++) {
        unsigned e = (unsigned)(((long)c - (long)m) % (long)g + (long)g) % g;
        for (unsigned i = 0; i < g; i++)
            order[m * g + i] = r[m * g + (e + i) % g];
    }
}

/* The NCCL latency of k rounds of an n-rank ring over m domains. */
static double ring_latency(const nc_fabric *f, unsigned n, unsigned m, unsigned k)
{
    double steps = (double)k * (n - 1), inter = m > 1 ? (double)k * (m - 1) : 0;
    return f->base_latency_s + (steps - inter) * f->intra_step_latency_s +
           inter * f->inter_step_latency_s;
}

static int build_ring(nc_plan *p, const nc_fabric *f, const uint32_t *r, unsigned n,
                      double bytes, double factor, unsigned rounds, int closed)
{
    unsigned k = 1, domains = nc_domain_blocks(f, r, n, &k);
    /* channels spread a ring over the NICs of the k GPUs it has in every
     * node; ranks one per node have one NIC each, where more channels
     * change nothing */
    unsigned C = f->channels ? f->channels : domains ? k : 1;
    unsigned m = domains ? domains : nc_count_domains(f, r, n);
    uint32_t *order = malloc((size_t)n * sizeof *order);
    if (!order)
        return -1;
    for (unsigned c = 0; c < C; c++) {
        ring_order(r, n, domains, k, c, order);
        nc_add_phase(p, bytes / C * factor, ring_latency(f, n, m, rounds), INFINITY, 1, NULL, 0);
        for (unsigned i = 0; i + (closed ? 0 : 1) < n; i++)
            nc_add_conn(p, order[i], order[(i + 1) % n], 1.0);
    }
    free(order);
    return p->failed ? -1 : 0;
}

static int build(nc_plan *p, const nc_fabric *f, enum nc_collective coll, const uint32_t *r,
                 unsigned n, double bytes)
{
    if (coll == NC_ALLREDUCE)
        return build_ring(p, f, r, n, bytes, 2.0 * (n - 1) / n, 2, 1);
    if (coll == NC_BROADCAST) /* a chain from the root: no closing hop */
        return build_ring(p, f, r, n, bytes, 1.0, 1, 0);
    return build_ring(p, f, r, n, bytes, (double)(n - 1) / n, 1, 1);
}

const nc_algorithm_type nc_algo_ring = {
    .name = "ring",
    .doc = "C channels, each a coupled ring moving S/C x 2(n-1)/n (all-reduce), (n-1)/n, "
           "or 1 (broadcast chain); rail-aware order when the ranks fill whole nodes",
    .collectives = 1u << NC_ALLREDUCE | 1u << NC_REDUCESCATTER | 1u << NC_ALLGATHER |
                   1u << NC_BROADCAST,
    .build = build,
};
