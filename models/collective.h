/* collective.h - alpha-beta time of an all-reduce over n ranks.
 *
 * With per-step latency alpha, per-rank bandwidth B and S bytes per rank
 * (shared/reference/hardware.md 7.2; Thakur, Rabenseifner & Gropp,
 * "Optimization of Collective Communication Operations in MPICH", IJHPCA 2005):
 *   ring:  t = 2(n-1) * alpha + 2(n-1)/n * S/B
 *          reduce-scatter then all-gather, n-1 steps each, S/n bytes a step
 *          (NCCL ring nsteps = 2(n-1), nccl-tests busbw factor 2(n-1)/n)
 *   tree:  t = 2 ceil(log2 n) * (alpha + S/B)
 *          binomial-tree reduce to rank 0, then binomial-tree broadcast, whole
 *          S every step, not pipelined. This is the textbook binomial tree,
 *          not NCCL's pipelined double binary tree (hardware.md 7.2).
 * One rank needs no communication: t = 0 for both.
 */
#ifndef DCSIM_MODELS_COLLECTIVE_H
#define DCSIM_MODELS_COLLECTIVE_H

enum coll_algorithm {
    COLL_RING = 0,
    COLL_TREE,
    COLL_ALGORITHM_COUNT
};

/* "ring", "tree"; "?" when out of range */
const char *coll_algorithm_name(int alg);
/* 0 and *out set, or -1 for an unknown name */
int coll_algorithm_parse(const char *name, enum coll_algorithm *out);

/* The two coefficients of the model, t = steps * alpha + factor * S / B:
 * the number of latency steps and the multiple of S/B each rank moves.
 * Both are 0 for one rank, and negative for ranks == 0 or an unknown alg. */
double coll_allreduce_steps(enum coll_algorithm alg, unsigned ranks);
double coll_allreduce_bytes_factor(enum coll_algorithm alg, unsigned ranks);

/* Time in seconds of one all-reduce of bytes per rank over ranks ranks with
 * alpha_s per step and bytes_per_s per rank. Returns a negative value when
 * alg is unknown, ranks == 0, bytes < 0, alpha_s < 0 or bytes_per_s <= 0. */
double coll_allreduce_time_s(enum coll_algorithm alg, unsigned ranks, double bytes,
                             double alpha_s, double bytes_per_s);

#endif
