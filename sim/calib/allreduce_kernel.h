/* allreduce_kernel.h - the all-reduce dcsim calibrate times: n OpenMP
 * threads, one buffer each, summed in place in shared memory by a ring or a
 * binomial tree (the algorithms of models/collective.h).
 */
#ifndef DCSIM_CALIB_ALLREDUCE_KERNEL_H
#define DCSIM_CALIB_ALLREDUCE_KERNEL_H

#include <stddef.h>

#include "collective.h"

/* All-reduce (sum) of n_threads buffers of count floats in place, one OpenMP
 * thread per buffer: afterwards every bufs[r][i] = sum over ranks of the old
 * bufs[r][i]. Ring: reduce-scatter then all-gather, n-1 barrier-separated
 * steps each; tree: binomial reduce to rank 0 then binomial broadcast,
 * ceil(log2 n) steps each (collective.h). Returns 0, or -1 when alg is
 * unknown, n_threads is 0 or OpenMP granted fewer threads (nothing changed). */
int calib_allreduce(enum coll_algorithm alg, float *const *bufs, size_t count,
                    unsigned n_threads);

/* Rank r's part of one all-reduce of n buffers (alg COLL_RING or COLL_TREE),
 * for callers that run many in one parallel region (the timing harness):
 * every thread of a team of exactly n must call it with its own r. Ends with
 * a barrier, so all ranks are done when it returns. */
void calib_allreduce_rank(enum coll_algorithm alg, float *const *bufs, size_t count,
                          unsigned n, unsigned r);

#endif
