/* collective.c - alpha-beta all-reduce times (formulas in collective.h:
 * ring 2(n-1) alpha + 2(n-1)/n S/B; binomial tree 2 ceil(log2 n)(alpha + S/B);
 * B = B(S), a step function of the per-rank size S when tiered). An
 * algorithm is one line of coll_algorithms plus its enum value.
 */
#include "collective.h"

#include <math.h>
#include <string.h>

/* ceil(log2 n) for n >= 1, exactly (no floating point) */
static unsigned ceil_log2(unsigned n)
{
    unsigned levels = 0;
    while (levels < 32 && (1ull << levels) < n)
        levels++;
    return levels;
}

static double ring_steps(unsigned n) { return 2.0 * (n - 1); }
static double ring_bytes_factor(unsigned n) { return 2.0 * (n - 1) / n; }
static double tree_steps(unsigned n) { return 2.0 * ceil_log2(n); }
static double tree_bytes_factor(unsigned n) { return 2.0 * ceil_log2(n); }

/* The algorithms, one line each, indexed by enum coll_algorithm. */
static const struct coll_algorithm_type {
    const char *name;
    const char *doc;
    double (*steps)(unsigned ranks);        /* latency steps, ranks >= 1 */
    double (*bytes_factor)(unsigned ranks); /* multiple of S/B, ranks >= 1 */
} coll_algorithms[COLL_ALGORITHM_COUNT] = {
    [COLL_RING] = {"ring", "reduce-scatter then all-gather: 2(n-1) steps of S/n", ring_steps,
                   ring_bytes_factor},
    [COLL_TREE] = {"tree", "binomial reduce then broadcast: 2 ceil(log2 n) steps of S",
                   tree_steps, tree_bytes_factor},
};

const char *coll_algorithm_name(int alg)
{
    return alg >= 0 && alg < COLL_ALGORITHM_COUNT ? coll_algorithms[alg].name : "?";
}

const char *coll_algorithm_doc(int alg)
{
    return alg >= 0 && alg < COLL_ALGORITHM_COUNT ? coll_algorithms[alg].doc : "?";
}

int coll_algorithm_parse(const char *name, enum coll_algorithm *out)
{
    for (int a = 0; a < COLL_ALGORITHM_COUNT; a++)
        if (name && strcmp(name, coll_algorithms[a].name) == 0) {
            *out = (enum coll_algorithm)a;
            return 0;
        }
    return -1;
}

double coll_allreduce_steps(enum coll_algorithm alg, unsigned ranks)
{
    if (ranks == 0 || (unsigned)alg >= COLL_ALGORITHM_COUNT)
        return -1.0;
    return coll_algorithms[alg].steps(ranks);
}

double coll_allreduce_bytes_factor(enum coll_algorithm alg, unsigned ranks)
{
    if (ranks == 0 || (unsigned)alg >= COLL_ALGORITHM_COUNT)
        return -1.0;
    return coll_algorithms[alg].bytes_factor(ranks);
}

int coll_bandwidth_check(const coll_bandwidth *bw)
{
    if (!bw || bw->n_tiers < 1 || bw->n_tiers > COLL_BW_TIERS || bw->min_bytes[0] != 0)
        return -1;
    for (unsigned i = 0; i < bw->n_tiers; i++) {
        /* written so that NaN fails too; an infinite bandwidth is a free transfer */
        if (!(bw->bytes_per_s[i] > 0))
            return -1;
        if (i > 0 && (!(bw->min_bytes[i] > bw->min_bytes[i - 1]) || isinf(bw->min_bytes[i])))
            return -1;
    }
    return 0;
}

unsigned coll_bandwidth_tier(const coll_bandwidth *bw, double bytes)
{
    unsigned i = 0;
    while (i + 1 < bw->n_tiers && i + 1 < COLL_BW_TIERS && bytes >= bw->min_bytes[i + 1])
        i++;
    return i;
}

double coll_allreduce_tiered_time_s(enum coll_algorithm alg, unsigned ranks, double bytes,
                                    double alpha_s, const coll_bandwidth *bw)
{
    double steps = coll_allreduce_steps(alg, ranks);
    double factor = coll_allreduce_bytes_factor(alg, ranks);
    /* written so that NaN inputs fail too */
    if (steps < 0 || factor < 0 || !(bytes >= 0) || !(alpha_s >= 0) || coll_bandwidth_check(bw))
        return -1.0;
    return steps * alpha_s + factor * bytes / bw->bytes_per_s[coll_bandwidth_tier(bw, bytes)];
}

double coll_allreduce_time_s(enum coll_algorithm alg, unsigned ranks, double bytes,
                             double alpha_s, double bytes_per_s)
{
    const coll_bandwidth one = {.n_tiers = 1, .min_bytes = {0}, .bytes_per_s = {bytes_per_s}};
    return coll_allreduce_tiered_time_s(alg, ranks, bytes, alpha_s, &one);
}
