/* rng.h - per-entity random streams derived from one master seed.
 *
 * A stream is keyed by (master seed, entity kind, entity id, purpose) and
 * seeded by hashing that key, so each entity's draws depend only on its own
 * key: adding a GPU never changes another GPU's draws, and streams can be
 * created in any order or in parallel.
 *
 * The generator is xoshiro256** (Blackman & Vigna 2018) wrapped as a GSL
 * generator type so every GSL distribution works on it. Why not a stock GSL
 * generator: they take 32-bit seeds (mt19937 keeps the low 32 bits), and with
 * 1e5 streams the birthday bound makes two identical streams likely (~70%).
 * A 64-bit seed expanded to 256 bits of state makes that negligible.
 */
#ifndef DCSIM_SIM_RNG_H
#define DCSIM_SIM_RNG_H

#include <stdint.h>

#include <gsl/gsl_rng.h>

/* splitmix64's finaliser (Steele, Lea, Flood 2014): a bijective 64-bit
 * mix, the hash the engine's event types, the failure-state digests and the
 * packet tier's marking draws use. */
static inline uint64_t sim_mix64_final(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* One splitmix64 step from state x: the finaliser of x + the golden gamma. */
static inline uint64_t sim_splitmix64(uint64_t x) { return sim_mix64_final(x + 0x9e3779b97f4a7c15ull); }

/* Entity kinds for stream keys. Append only: renumbering changes every
 * stream and so every result. */
enum sim_entity_kind {
    SIM_ENTITY_JOB = 1,
    SIM_ENTITY_GPU = 2,
    SIM_ENTITY_NODE = 3,
    SIM_ENTITY_LINK = 4,
    SIM_ENTITY_SWITCH = 5,
    SIM_ENTITY_REPLICA = 6,
    SIM_ENTITY_RACK = 7,
    SIM_ENTITY_NIC = 8,
};

/* Purposes for stream keys. Append only. */
enum sim_stream_purpose {
    SIM_PURPOSE_FAILURE = 1,
    SIM_PURPOSE_REPAIR = 2,
    SIM_PURPOSE_SPEED = 3,
    SIM_PURPOSE_ROUTING = 4,
    SIM_PURPOSE_DETECTION = 5,
    SIM_PURPOSE_FLAP = 6, /* a flapping cable cause's drawn flap durations */
};

extern const gsl_rng_type *sim_rng_xoshiro256;

/* The 64-bit seed of a stream key (splitmix64 finalisers over the fields). */
uint64_t sim_rng_key_seed(uint64_t master_seed, uint32_t entity_kind, uint64_t entity_id,
                          uint32_t purpose);

/* A new generator for the key; free with gsl_rng_free. NULL when out of memory. */
gsl_rng *sim_rng_stream_create(uint64_t master_seed, uint32_t entity_kind, uint64_t entity_id,
                               uint32_t purpose);

/* Turn an existing sim_rng_xoshiro256 generator into the key's stream in
 * place: it then draws exactly what sim_rng_stream_create(key) would (the
 * same seeding; a stream's state is a function of its key alone). Costs
 * seven splitmix64 steps and no allocation. */
void sim_rng_stream_reseed(gsl_rng *r, uint64_t master_seed, uint32_t entity_kind,
                           uint64_t entity_id, uint32_t purpose);

/* Caller-owned storage for many streams (init/fini): cap generators of type
 * sim_rng_xoshiro256 in two allocations, the gsl_rng headers and their
 * states, instead of two mallocs per stream. Slot i (rngs + i) is a
 * gsl_rng for every GSL function except gsl_rng_free; give it a key with
 * sim_rng_stream_reseed before drawing. A block kept across runs makes
 * creating n streams n reseeds: no malloc, free or first-touch page fault. */
typedef struct sim_rng_block {
    gsl_rng *rngs;
    void *states;
    size_t cap;
} sim_rng_block;

void sim_rng_block_init(sim_rng_block *b);
/* At least n slots (their states unset when it grows). 0, or -1 when out
 * of memory (the block is then as before). */
int sim_rng_block_reserve(sim_rng_block *b, size_t n);
void sim_rng_block_fini(sim_rng_block *b);

#endif
