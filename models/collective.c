/* collective.c - alpha-beta all-reduce times (formulas in collective.h:
 * ring 2(n-1) alpha + 2(n-1)/n S/B; binomial tree 2 ceil(log2 n)(alpha + S/B)).
 */
#include "collective.h"

#include <string.h>

static const char *const coll_names[COLL_ALGORITHM_COUNT] = {
    [COLL_RING] = "ring",
    [COLL_TREE] = "tree",
};

const char *coll_algorithm_name(int alg)
{
    return alg >= 0 && alg < COLL_ALGORITHM_COUNT ? coll_names[alg] : "?";
}

int coll_algorithm_parse(const char *name, enum coll_algorithm *out)
{
    for (int a = 0; a < COLL_ALGORITHM_COUNT; a++)
        if (name && strcmp(name, coll_names[a]) == 0) {
            *out = (enum coll_algorithm)a;
            return 0;
        }
    return -1;
}

/* ceil(log2 n) for n >= 1, exactly (no floating point) */
static unsigned ceil_log2(unsigned n)
{
    unsigned levels = 0;
    while (levels < 32 && (1ull << levels) < n)
        levels++;
    return levels;
}

double coll_allreduce_steps(enum coll_algorithm alg, unsigned ranks)
{
    if (ranks == 0)
        return -1.0;
    switch (alg) {
    case COLL_RING:
        return 2.0 * (ranks - 1);
    case COLL_TREE:
        return 2.0 * ceil_log2(ranks);
    default:
        return -1.0;
    }
}

double coll_allreduce_bytes_factor(enum coll_algorithm alg, unsigned ranks)
{
    if (ranks == 0)
        return -1.0;
    switch (alg) {
    case COLL_RING:
        return 2.0 * (ranks - 1) / ranks;
    case COLL_TREE:
        return 2.0 * ceil_log2(ranks);
    default:
        return -1.0;
    }
}

double coll_allreduce_time_s(enum coll_algorithm alg, unsigned ranks, double bytes,
                             double alpha_s, double bytes_per_s)
{
    double steps = coll_allreduce_steps(alg, ranks);
    double factor = coll_allreduce_bytes_factor(alg, ranks);
    /* written so that NaN inputs fail too */
    if (steps < 0 || factor < 0 || !(bytes >= 0) || !(alpha_s >= 0) || !(bytes_per_s > 0))
        return -1.0;
    return steps * alpha_s + factor * bytes / bytes_per_s;
}
