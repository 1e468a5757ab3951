/* allreduce_kernel.c - the OpenMP shared-memory all-reduce dcsim calibrate
 * times (contract in allreduce_kernel.h): ring and binomial tree across the
 * threads of one team. Invariant: within a step no rank writes what another
 * reads, and every step ends in a barrier.
 */
#include "allreduce_kernel.h"

#include <string.h>

#include <omp.h>

/* first element of chunk c when count elements are cut into n chunks */
static size_t chunk_lo(size_t count, unsigned n, unsigned c)
{
    return (size_t)((unsigned long long)count * c / n);
}

/* One rank's part of the all-reduce; called by every thread of a team of
 * exactly n. Ends with a barrier, so all ranks are done when it returns.
 * Within a step no rank writes what another reads (see the chunk indices). */
void calib_allreduce_rank(enum coll_algorithm alg, float *const *bufs, size_t count,
                          unsigned n, unsigned r)
{
    float *own = bufs[r];
    if (alg == COLL_RING) {
        const float *left = bufs[(r + n - 1) % n];
        /* reduce-scatter: at step s rank r adds its left neighbour's chunk
         * r-1-s, which that neighbour completed at step s-1; after n-1 steps
         * rank r holds the full sum of chunk r+1 */
        for (unsigned s = 0; s + 1 < n; s++) {
            unsigned c = (r + 2 * n - 1 - s) % n;
            size_t lo = chunk_lo(count, n, c), hi = chunk_lo(count, n, c + 1);
#pragma omp simd
            for (size_t i = lo; i < hi; i++)
                own[i] += left[i];
#pragma omp barrier
        }
        /* all-gather: at step s rank r copies chunk r-s, complete at its
         * left neighbour since step s-1 (its own chunk r+1 at s = 0) */
        for (unsigned s = 0; s + 1 < n; s++) {
            unsigned c = (r + n - s) % n;
            size_t lo = chunk_lo(count, n, c), hi = chunk_lo(count, n, c + 1);
            memcpy(own + lo, left + lo, (hi - lo) * sizeof *own);
#pragma omp barrier
        }
    } else {
        /* binomial reduce: at distance d, rank r (a multiple of 2d) adds rank r+d */
        unsigned top = 1;
        for (unsigned d = 1; d < n; d *= 2) {
            if (r % (2 * d) == 0 && r + d < n) {
                const float *src = bufs[r + d];
#pragma omp simd
                for (size_t i = 0; i < count; i++)
                    own[i] += src[i];
            }
            top = d;
#pragma omp barrier
        }
        /* binomial broadcast, the same tree backwards: rank r+d copies rank r */
        for (unsigned d = top; d >= 1 && n > 1; d /= 2) {
            if (r % (2 * d) == d)
                memcpy(own, bufs[r - d], count * sizeof *own);
#pragma omp barrier
        }
    }
}

int calib_allreduce(enum coll_algorithm alg, float *const *bufs, size_t count,
                    unsigned n_threads)
{
    if ((alg != COLL_RING && alg != COLL_TREE) || n_threads == 0)
        return -1;
    int is_short = 0;
#pragma omp parallel num_threads((int)n_threads)
    {
        /* every thread sees the same team size, so all take the same branch */
        if ((unsigned)omp_get_num_threads() != n_threads) {
#pragma omp single
            is_short = 1;
        } else {
            calib_allreduce_rank(alg, bufs, count, n_threads, (unsigned)omp_get_thread_num());
        }
    }
    return is_short ? -1 : 0;
}
