/* netcoll_auto.c - auto: NCCL's choice, not an expansion of its own.
 * Direct for all-to-all and send/recv; in-network (NVLS) for an all-reduce
 * inside one NVSwitch domain with reduction hardware; ring otherwise.
 */
#include "netcoll_internal.h"

static enum nc_algorithm resolve(const nc_fabric *f, enum nc_collective c, const uint32_t *r,
                                 unsigned n)
{
    if (c == NC_ALLTOALL || c == NC_SENDRECV)
        return NC_ALGO_DIRECT;
    if (c == NC_ALLREDUCE && f->domain_size > 1 && f->scaleup_reduction_bytes_per_s > 0 &&
        nc_count_domains(f, r, n) == 1)
        return NC_ALGO_IN_NETWORK; /* NCCL's choice on one NVSwitch node (NVLS) */
    return NC_ALGO_RING;
}

const nc_algorithm_type nc_algo_auto = {
    .name = "auto",
    .doc = "NVLS for an all-reduce inside one NVSwitch node, else ring; direct for all-to-all "
           "and send/recv",
    .collectives = 1u << NC_ALLREDUCE | 1u << NC_REDUCESCATTER | 1u << NC_ALLGATHER |
                   1u << NC_ALLTOALL | 1u << NC_BROADCAST | 1u << NC_SENDRECV,
    .resolve = resolve,
};
