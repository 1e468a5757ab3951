/* test_rng.c - per-entity random streams (sim/engine/rng.h).
 *
 * A stream's draws depend only on its key (seed, kind, id, purpose): not on
 * which other streams exist or in which order they were created. The
 * generator is xoshiro256** seeded through splitmix64, checked here against
 * an independent transcription of the reference code (Blackman & Vigna 2018,
 * https://prng.di.unimi.it/xoshiro256starstar.c and splitmix64.c).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "check.h"
#include "rng.h"

#define N_DRAWS 64

static void draw(gsl_rng *r, uint64_t *out, int n)
{
    for (int i = 0; i < n; i++)
        out[i] = gsl_rng_get(r);
}

static int same_draws(const uint64_t *a, const uint64_t *b, int n)
{
    return memcmp(a, b, (size_t)n * sizeof *a) == 0;
}

/* ---- reference xoshiro256** ---- */

static uint64_t ref_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t ref_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t ref_next(uint64_t s[4])
{
    const uint64_t result = ref_rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = ref_rotl(s[3], 45);
    return result;
}

static void test_generator_is_xoshiro256starstar(void)
{
    /* the first splitmix64 output for seed 0 is a published test value */
    uint64_t x = 0;
    CHECK(ref_splitmix64(&x) == 0xe220a8397b1dcdafull);

    gsl_rng *r = gsl_rng_alloc(sim_rng_xoshiro256);
    CHECK(r != NULL);
    if (!r)
        return;
    CHECK_STR_EQ(gsl_rng_name(r), "xoshiro256**");
    CHECK(gsl_rng_min(r) == 0);
    CHECK(gsl_rng_max(r) == 0xffffffffffffffffUL);

    static const uint64_t seeds[] = {0, 1, 12345, 0xdeadbeefcafef00dull};
    for (size_t k = 0; k < sizeof seeds / sizeof seeds[0]; k++) {
        gsl_rng_set(r, seeds[k]);
        uint64_t sm = seeds[k], s[4];
        for (int i = 0; i < 4; i++)
            s[i] = ref_splitmix64(&sm);
        int ok = 1;
        for (int i = 0; i < 1000; i++)
            if (gsl_rng_get(r) != ref_next(s))
                ok = 0;
        CHECK(ok);
        /* doubles are the top 53 bits */
        uint64_t next = ref_next(s);
        CHECK(gsl_rng_uniform(r) == (double)(next >> 11) * 0x1.0p-53);
    }

    /* a stream is the generator seeded with its key's seed */
    gsl_rng *st = sim_rng_stream_create(42, SIM_ENTITY_GPU, 5, SIM_PURPOSE_FAILURE);
    gsl_rng_set(r, sim_rng_key_seed(42, SIM_ENTITY_GPU, 5, SIM_PURPOSE_FAILURE));
    uint64_t a[N_DRAWS], b[N_DRAWS];
    draw(st, a, N_DRAWS);
    draw(r, b, N_DRAWS);
    CHECK(same_draws(a, b, N_DRAWS));
    gsl_rng_free(st);
    gsl_rng_free(r);
}

/* ---- independence of streams ---- */

static void test_stream_independence(void)
{
    enum { N = 1000 };
    static uint64_t alone[N], crowded[N], reversed[N], scratch[N];

    gsl_rng *g5 = sim_rng_stream_create(42, SIM_ENTITY_GPU, 5, SIM_PURPOSE_FAILURE);
    draw(g5, alone, N);
    gsl_rng_free(g5);

    /* other streams created and used first, then interleaved draws */
    gsl_rng *g6 = sim_rng_stream_create(42, SIM_ENTITY_GPU, 6, SIM_PURPOSE_FAILURE);
    gsl_rng *gbig = sim_rng_stream_create(42, SIM_ENTITY_GPU, 1000000, SIM_PURPOSE_FAILURE);
    gsl_rng *g5r = sim_rng_stream_create(42, SIM_ENTITY_GPU, 5, SIM_PURPOSE_REPAIR);
    draw(g6, scratch, 100);
    draw(gbig, scratch, 333);
    g5 = sim_rng_stream_create(42, SIM_ENTITY_GPU, 5, SIM_PURPOSE_FAILURE);
    for (int i = 0; i < N; i++) {
        crowded[i] = gsl_rng_get(g5);
        gsl_rng_get(g6);
        gsl_rng_uniform(gbig);
        gsl_ran_exponential(g5r, 3.0);
    }
    CHECK(same_draws(alone, crowded, N));
    gsl_rng_free(g5);
    gsl_rng_free(g6);
    gsl_rng_free(gbig);
    gsl_rng_free(g5r);

    /* reverse creation order */
    gbig = sim_rng_stream_create(42, SIM_ENTITY_GPU, 1000000, SIM_PURPOSE_FAILURE);
    g5 = sim_rng_stream_create(42, SIM_ENTITY_GPU, 5, SIM_PURPOSE_FAILURE);
    g6 = sim_rng_stream_create(42, SIM_ENTITY_GPU, 6, SIM_PURPOSE_FAILURE);
    draw(g6, scratch, N);
    draw(gbig, scratch, N);
    draw(g5, reversed, N);
    CHECK(same_draws(alone, reversed, N));
    gsl_rng_free(g5);
    gsl_rng_free(g6);
    gsl_rng_free(gbig);
}

static void test_keys(void)
{
    uint64_t base[N_DRAWS], again[N_DRAWS], other[N_DRAWS];
    gsl_rng *r = sim_rng_stream_create(42, SIM_ENTITY_GPU, 5, SIM_PURPOSE_FAILURE);
    draw(r, base, N_DRAWS);
    gsl_rng_free(r);
    r = sim_rng_stream_create(42, SIM_ENTITY_GPU, 5, SIM_PURPOSE_FAILURE);
    draw(r, again, N_DRAWS);
    gsl_rng_free(r);
    CHECK(same_draws(base, again, N_DRAWS));
    CHECK_INT_EQ(sim_rng_key_seed(42, SIM_ENTITY_GPU, 5, SIM_PURPOSE_FAILURE),
                 sim_rng_key_seed(42, SIM_ENTITY_GPU, 5, SIM_PURPOSE_FAILURE));

    /* vary each field of the key in turn; also swaps of kind and purpose,
     * and id/seed swaps, which a careless hash would confuse */
    static const struct {
        uint64_t seed;
        uint32_t kind;
        uint64_t id;
        uint32_t purpose;
    } keys[] = {
        {43, SIM_ENTITY_GPU, 5, SIM_PURPOSE_FAILURE},
        {0, SIM_ENTITY_GPU, 5, SIM_PURPOSE_FAILURE},
        {42, SIM_ENTITY_NODE, 5, SIM_PURPOSE_FAILURE},
        {42, SIM_ENTITY_GPU, 6, SIM_PURPOSE_FAILURE},
        {42, SIM_ENTITY_GPU, 0, SIM_PURPOSE_FAILURE},
        {42, SIM_ENTITY_GPU, 5 + (1ull << 32), SIM_PURPOSE_FAILURE},
        {42, SIM_ENTITY_GPU, 5, SIM_PURPOSE_REPAIR},
        {42, SIM_PURPOSE_FAILURE, 5, SIM_ENTITY_GPU},
        {5, SIM_ENTITY_GPU, 42, SIM_PURPOSE_FAILURE},
    };
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        r = sim_rng_stream_create(keys[k].seed, keys[k].kind, keys[k].id, keys[k].purpose);
        draw(r, other, N_DRAWS);
        gsl_rng_free(r);
        int n_equal = 0;
        for (int i = 0; i < N_DRAWS; i++)
            n_equal += other[i] == base[i];
        CHECK_INT_EQ(n_equal, 0);
        CHECK(sim_rng_key_seed(keys[k].seed, keys[k].kind, keys[k].id, keys[k].purpose) !=
              sim_rng_key_seed(42, SIM_ENTITY_GPU, 5, SIM_PURPOSE_FAILURE));
    }
}

/* ---- distributions ---- */

static void test_uniform_and_exponential(void)
{
    enum { N = 1000000 };
    gsl_rng *r = sim_rng_stream_create(1, SIM_ENTITY_JOB, 0, SIM_PURPOSE_SPEED);
    double sum = 0, lo = 1, hi = 0;
    int out_of_range = 0;
    for (int i = 0; i < N; i++) {
        double u = gsl_rng_uniform(r);
        if (!(u >= 0.0 && u < 1.0))
            out_of_range++;
        lo = u < lo ? u : lo;
        hi = u > hi ? u : hi;
        sum += u;
    }
    CHECK_INT_EQ(out_of_range, 0);
    /* sigma of the mean of N uniforms: sqrt(1/12/N) */
    CHECK_NEAR(sum / N, 0.5, 5 * sqrt(1.0 / 12.0 / N));
    CHECK(lo < 1e-5 && hi > 1 - 1e-5);

    /* exponential with mean mu: sigma of the mean is mu/sqrt(N) */
    const double mu = 2.5;
    double esum = 0, esq = 0;
    int negative = 0;
    for (int i = 0; i < N; i++) {
        double x = gsl_ran_exponential(r, mu);
        negative += x < 0;
        esum += x;
        esq += x * x;
    }
    CHECK_INT_EQ(negative, 0);
    CHECK_NEAR(esum / N, mu, 5 * mu / sqrt((double)N));
    /* variance mu^2; its estimator's sigma is about sqrt(8) mu^2 / sqrt(N) */
    double var = esq / N - (esum / N) * (esum / N);
    CHECK_NEAR(var, mu * mu, 5 * sqrt(8.0) * mu * mu / sqrt((double)N));

    /* uniform_int uses the full 64-bit range correctly */
    long counts[10] = {0};
    int bad = 0;
    for (int i = 0; i < N; i++) {
        unsigned long k = gsl_rng_uniform_int(r, 10);
        if (k >= 10)
            bad++;
        else
            counts[k]++;
    }
    CHECK_INT_EQ(bad, 0);
    for (int k = 0; k < 10; k++) /* binomial sigma sqrt(N p (1-p)) = 300 */
        CHECK_NEAR((double)counts[k], N / 10.0, 5 * 300.0);
    gsl_rng_free(r);
}

/* ---- seed collisions ---- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static size_t count_duplicates(uint64_t *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_u64);
    size_t dup = 0;
    for (size_t i = 1; i < n; i++)
        dup += v[i] == v[i - 1];
    return dup;
}

static void test_seed_collisions(void)
{
    enum { N = 1000000 };
    uint64_t *seeds = malloc(2 * N * sizeof *seeds);
    CHECK(seeds != NULL);
    if (!seeds)
        return;
    for (uint64_t i = 0; i < N; i++)
        seeds[i] = sim_rng_key_seed(42, SIM_ENTITY_GPU, i, SIM_PURPOSE_FAILURE);
    CHECK_INT_EQ(count_duplicates(seeds, N), 0);

    /* across purposes and kinds too: ids 0..N/4 for four (kind, purpose) pairs
     * and ids spread over the whole 64-bit range for a fifth half */
    size_t n = 0;
    for (uint64_t i = 0; i < N / 4; i++) {
        seeds[n++] = sim_rng_key_seed(42, SIM_ENTITY_GPU, i, SIM_PURPOSE_FAILURE);
        seeds[n++] = sim_rng_key_seed(42, SIM_ENTITY_GPU, i, SIM_PURPOSE_REPAIR);
        seeds[n++] = sim_rng_key_seed(42, SIM_ENTITY_NODE, i, SIM_PURPOSE_FAILURE);
        seeds[n++] = sim_rng_key_seed(43, SIM_ENTITY_GPU, i, SIM_PURPOSE_FAILURE);
    }
    for (uint64_t i = 0; i < N; i++)
        seeds[n++] = sim_rng_key_seed(42, SIM_ENTITY_LINK, i * 0x9e3779b97f4a7c15ull,
                                      SIM_PURPOSE_ROUTING);
    CHECK_INT_EQ(count_duplicates(seeds, n), 0);
    free(seeds);
}

int main(void)
{
    gsl_set_error_handler_off();
    test_generator_is_xoshiro256starstar();
    test_stream_independence();
    test_keys();
    test_uniform_and_exponential();
    test_seed_collisions();
    return check_report();
}
