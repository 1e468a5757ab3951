/* netcoll_direct.c - direct all-to-all and send/recv. All-to-all: each
 * rank sends S/n to every other, its n-1 sends one coupled phase (n flows
 * instead of n(n-1): NCCL's grouped send/recv progresses them together),
 * its connections r[i] -> r[i + j mod n], j = 1 .. n-1, by rule (nc_phase):
 * the plan holds n phases and n ranks, not n(n-1) connections.
 * Send/recv: one uncoupled phase, ranks[0] -> ranks[1]. Latency: base + one
 * step, across the fabric when the ranks span domains.
 */
#include <math.h>

#include "netcoll_internal.h"

static int build(nc_plan *p, const nc_fabric *f, enum nc_collective coll, const uint32_t *r,
                 unsigned n, double bytes)
{
    double step = nc_count_domains(f, r, n) > 1 ? f->inter_step_latency_s
                                                : f->intra_step_latency_s;
    if (coll == NC_SENDRECV) {
        nc_add_phase(p, bytes, f->base_latency_s + step, INFINITY, 0, NULL, 0);
        nc_add_conn(p, r[0], r[1], 1.0);
    } else {
        uint32_t first = NC_LISTED; /* the ranks, copied once for every sender */
        for (unsigned i = 0; i < n; i++) {
            nc_add_phase(p, bytes / n, f->base_latency_s + step, INFINITY, 1, NULL, 0);
            first = nc_set_alltoall_conns(p, first, r, n, i); /* r[i] to r[i + j mod n] */
        }
    }
    return p->failed ? -1 : 0;
}

const nc_algorithm_type nc_algo_direct = {
    .name = "direct",
    .doc = "all-to-all: each rank sends S/n to every other, its n-1 sends one coupled flow; "
           "send/recv: one flow",
    .collectives = 1u << NC_ALLTOALL | 1u << NC_SENDRECV,
    .build = build,
};
