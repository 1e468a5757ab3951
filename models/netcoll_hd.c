/* netcoll_hd.c - halving-doubling all-reduce (Thakur, Rabenseifner & Gropp
 * 2005), n a power of two: log2 n reduce-scatter steps exchanging S/2,
 * S/4, ... with partner rank XOR 2^j, then the all-gather mirror; one
 * coupled phase per step, chained. A step crossing domains takes the
 * fabric's step latency, else the scale-up one; the first adds the base.
 */
#include <math.h>

#include "netcoll_internal.h"

static int check(const nc_fabric *f, enum nc_collective coll, const uint32_t *r, unsigned n,
                 sim_error *err)
{
    (void)f, (void)coll, (void)r;
    if (n & (n - 1))
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "halving-doubling needs a power-of-two number of ranks, got %u", n);
    return 0;
}

static int build(nc_plan *p, const nc_fabric *f, enum nc_collective coll, const uint32_t *r,
                 unsigned n, double bytes)
{
    (void)coll;
    unsigned steps = 0;
    while ((1u << steps) < n)
        steps++;
    uint32_t prev = UINT32_MAX;
    for (unsigned s = 0; s < 2 * steps; s++) {
        unsigned j = s < steps ? s : 2 * steps - 1 - s; /* all-gather mirrors the scatter */
        unsigned dist = 1u << j;
        int inter = 0;
        for (unsigned i = 0; i < n && !inter; i++)
            inter = nc_domain_of(f->g, r[i]) != nc_domain_of(f->g, r[i ^ dist]);
        double lat = (inter ? f->inter_step_latency_s : f->intra_step_latency_s) +
                     (s == 0 ? f->base_latency_s : 0);
        prev = nc_add_phase(p, bytes / (double)(2u << j), lat, INFINITY, 1, &prev, 1);
        for (unsigned i = 0; i < n; i++)
            nc_add_conn(p, r[i], r[i ^ dist], 1.0);
    }
    return p->failed ? -1 : 0;
}

const nc_algorithm_type nc_algo_hd = {
    .name = "hd",
    .doc = "halving-doubling: log2 n exchanges of S/2, S/4, ... then the mirror; n a power "
           "of two",
    .collectives = 1u << NC_ALLREDUCE,
    .check = check,
    .build = build,
};
