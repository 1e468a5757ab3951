/* rng.c - xoshiro256** as a gsl_rng_type, and stream keys (see rng.h). */
#include "rng.h"

#include <stdlib.h>
#include <string.h>

typedef struct xoshiro_state {
    uint64_t s[4];
} xoshiro_state;

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = sim_splitmix64(*x);
    *x += 0x9e3779b97f4a7c15ull;
    return z;
}

static inline uint64_t next64(xoshiro_state *st)
{
    uint64_t *s = st->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

static void xoshiro_set(void *vstate, unsigned long seed)
{
    xoshiro_state *st = vstate;
    uint64_t x = (uint64_t)seed;
    for (int i = 0; i < 4; i++)
        st->s[i] = splitmix64(&x);
    /* the all-zero state is the one fixed point; splitmix64 cannot produce
     * four zeros in a row, but keep the guarantee explicit */
    if (!(st->s[0] | st->s[1] | st->s[2] | st->s[3]))
        st->s[0] = 1;
}

static unsigned long xoshiro_get(void *vstate) { return (unsigned long)next64(vstate); }

/* 53 random bits in [0, 1); GSL's contract excludes 1.0 */
static double xoshiro_get_double(void *vstate)
{
    return (double)(next64(vstate) >> 11) * 0x1.0p-53;
}

_Static_assert(sizeof(unsigned long) == 8, "dcsim needs a 64-bit unsigned long (LP64)");

static const gsl_rng_type xoshiro_type = {
    "xoshiro256**", 0xffffffffffffffffUL, 0, sizeof(xoshiro_state),
    xoshiro_set, xoshiro_get, xoshiro_get_double,
};

const gsl_rng_type *sim_rng_xoshiro256 = &xoshiro_type;

uint64_t sim_rng_key_seed(uint64_t master_seed, uint32_t entity_kind, uint64_t entity_id,
                          uint32_t purpose)
{
    uint64_t x = master_seed;
    uint64_t h = splitmix64(&x);
    x = h ^ (((uint64_t)entity_kind << 32) | purpose);
    h = splitmix64(&x);
    x = h ^ entity_id;
    return splitmix64(&x);
}

gsl_rng *sim_rng_stream_create(uint64_t master_seed, uint32_t entity_kind, uint64_t entity_id,
                               uint32_t purpose)
{
    gsl_rng *r = gsl_rng_alloc(sim_rng_xoshiro256);
    if (!r)
        return NULL;
    sim_rng_stream_reseed(r, master_seed, entity_kind, entity_id, purpose);
    return r;
}

void sim_rng_stream_reseed(gsl_rng *r, uint64_t master_seed, uint32_t entity_kind,
                           uint64_t entity_id, uint32_t purpose)
{
    gsl_rng_set(r, sim_rng_key_seed(master_seed, entity_kind, entity_id, purpose));
}

void sim_rng_block_init(sim_rng_block *b) { memset(b, 0, sizeof *b); }

int sim_rng_block_reserve(sim_rng_block *b, size_t n)
{
    if (n <= b->cap)
        return 0;
    gsl_rng *rngs = calloc(n, sizeof *rngs); /* calloc: checks n x size for overflow */
    xoshiro_state *states = calloc(n, sizeof *states);
    if (!rngs || !states) {
        free(rngs);
        free(states);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        rngs[i].type = sim_rng_xoshiro256;
        rngs[i].state = &states[i];
    }
    sim_rng_block_fini(b);
    b->rngs = rngs;
    b->states = states;
    b->cap = n;
    return 0;
}

void sim_rng_block_fini(sim_rng_block *b)
{
    free(b->rngs);
    free(b->states);
    memset(b, 0, sizeof *b);
}
