/* collective.h - alpha-beta time of an all-reduce over n ranks, with a
 * bandwidth that may depend on the message size.
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
 * Tiered bandwidth: B = B(S), a step function of the per-rank message size S,
 * B(S) = bytes_per_s[i] for the last tier i with min_bytes[i] <= S: the family
 * calculon uses for HBM efficiency by transfer size (hardware.md 2.2, N12;
 * models/compute.h), here with one bandwidth per tier, so that a transport
 * whose small messages stay in a cache and large ones do not is one model.
 * So t = steps * alpha + factor * S / B(S); one tier is the plain model.
 */
#ifndef DCSIM_MODELS_COLLECTIVE_H
#define DCSIM_MODELS_COLLECTIVE_H

enum coll_algorithm {
    COLL_RING = 0,
    COLL_TREE,
    COLL_ALGORITHM_COUNT
};

#define COLL_BW_TIERS 4

/* Per-rank bandwidth by per-rank message size. Valid when 1 <= n_tiers <=
 * COLL_BW_TIERS, min_bytes[0] == 0, min_bytes ascending strictly and finite,
 * and every bytes_per_s > 0 (infinite: a free transfer). */
typedef struct coll_bandwidth {
    unsigned n_tiers;
    double min_bytes[COLL_BW_TIERS];   /* tier i applies from S >= min_bytes[i] */
    double bytes_per_s[COLL_BW_TIERS];
} coll_bandwidth;

/* "ring", "tree"; "?" when out of range */
const char *coll_algorithm_name(int alg);
/* one line: what the algorithm does; "?" when out of range */
const char *coll_algorithm_doc(int alg);
/* 0 and *out set, or -1 for an unknown name */
int coll_algorithm_parse(const char *name, enum coll_algorithm *out);

/* The two coefficients of the model, t = steps * alpha + factor * S / B:
 * the number of latency steps and the multiple of S/B each rank moves.
 * Both are 0 for one rank, and negative for ranks == 0 or an unknown alg. */
double coll_allreduce_steps(enum coll_algorithm alg, unsigned ranks);
double coll_allreduce_bytes_factor(enum coll_algorithm alg, unsigned ranks);

/* 0 when bw is valid (see coll_bandwidth), else -1 */
int coll_bandwidth_check(const coll_bandwidth *bw);

/* The tier of a message of bytes per rank: the last i with min_bytes[i] <=
 * bytes (0 for bytes below min_bytes[1], and for NaN). bw must be valid. */
unsigned coll_bandwidth_tier(const coll_bandwidth *bw, double bytes);

/* Time in seconds of one all-reduce of bytes per rank over ranks ranks with
 * alpha_s per step and bytes_per_s per rank. Returns a negative value when
 * alg is unknown, ranks == 0, bytes < 0, alpha_s < 0 or bytes_per_s <= 0. */
double coll_allreduce_time_s(enum coll_algorithm alg, unsigned ranks, double bytes,
                             double alpha_s, double bytes_per_s);

/* The same with the bandwidth of bytes' tier in bw. Returns a negative value
 * on the conditions above or an invalid bw. */
double coll_allreduce_tiered_time_s(enum coll_algorithm alg, unsigned ranks, double bytes,
                                    double alpha_s, const coll_bandwidth *bw);

#endif
