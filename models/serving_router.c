/* serving_router.c - the router table (serving.h): one line per policy. */
#include <string.h>

#include "serving_internal.h"

static uint32_t pick_round_robin(serve_sim *s, uint32_t id)
{
    (void)id;
    uint32_t r = s->router_rotor;
    s->router_rotor = (r + 1) % s->pool_n;
    return r;
}

static double used_kv(const serve_replica *rp) { return rp->blocks_used - rp->blocks_total; }

/* The least key over the replicas, ties to the first after the rotor (so
 * equal replicas take turns): rotor..n-1, then 0..rotor-1, strict "<" so
 * the first of equals wins. O(replicas) per arrival in two plain loops
 * (no modulo; GCC clones it per key): at 250 replicas it costs less than
 * drawing the request's lengths (bench_serve), so no heap. */
static uint32_t pick_min(serve_sim *s, double (*key)(const serve_replica *))
{
    const serve_replica *rep = s->rep + s->pool_base;
    uint32_t n = s->pool_n, rotor = s->router_rotor, best = rotor;
    double best_key = key(&rep[rotor]);
    for (uint32_t r = rotor + 1; r < n; r++) {
        double k = key(&rep[r]);
        if (k < best_key) {
            best_key = k;
            best = r;
        }
    }
    for (uint32_t r = 0; r < rotor; r++) {
        double k = key(&rep[r]);
        if (k < best_key) {
            best_key = k;
            best = r;
        }
    }
    s->router_rotor = best + 1 < n ? best + 1 : 0;
    return best;
}

/* pick_min over the dense counts (the hot case: a plain uint32 scan) */
static uint32_t pick_least_loaded(serve_sim *s, uint32_t id)
{
    (void)id;
    const uint32_t *load = s->outstanding + s->pool_base;
    uint32_t n = s->pool_n, rotor = s->router_rotor, best = rotor, best_load = load[rotor];
    for (uint32_t r = rotor + 1; r < n; r++)
        if (load[r] < best_load) {
            best_load = load[r];
            best = r;
        }
    for (uint32_t r = 0; r < rotor; r++)
        if (load[r] < best_load) {
            best_load = load[r];
            best = r;
        }
    s->router_rotor = best + 1 < n ? best + 1 : 0;
    return best;
}

static uint32_t pick_most_free_kv(serve_sim *s, uint32_t id)
{
    (void)id;
    return pick_min(s, used_kv);
}

/* Cache-aware routing (SGLang's cache-aware router, vLLM production
 * stack's prefix-aware routing): the replica holding the most blocks of the
 * request's prefix chain (ties: the fewest unfinished requests, then the
 * first after the rotor), unless none holds any or that replica has more
 * than router_margin unfinished requests above the least-loaded one's: then
 * the least-loaded. O(replicas x cached entries x levels) per arrival. */
static uint32_t pick_prefix_affinity(serve_sim *s, uint32_t id)
{
    uint32_t rotor = s->router_rotor;
    uint32_t least = pick_least_loaded(s, id); /* moves the rotor past it */
    if (!s->ext || (!s->ext[id].prefix_depth && s->ext[id].session == SERVE_NONE))
        return least;
    const uint32_t *load = s->outstanding + s->pool_base;
    uint32_t n = s->pool_n, best = SERVE_NONE;
    double best_blocks = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t r = rotor + i < n ? rotor + i : rotor + i - n;
        double b = serve_prefix_cached_blocks(s, &s->rep[s->pool_base + r], &s->ext[id]);
        if (b > best_blocks || (b > 0 && b == best_blocks && load[r] < load[best])) {
            best_blocks = b;
            best = r;
        }
    }
    if (best == SERVE_NONE || best == least ||
        load[best] > (uint64_t)load[least] + s->c->router_margin)
        return least;
    s->router_rotor = best + 1 < n ? best + 1 : 0;
    return best;
}

/* Pool 0 is the whole fleet, or the prefill pool when disaggregated; pool
 * 1 the decode pool. The router sees the pool's replicas as 0..n-1 and
 * keeps one rotor per pool. */
uint32_t serve_route(serve_sim *s, uint32_t id, int pool)
{
    s->pool_base = pool ? s->c->prefill_replicas : 0;
    s->pool_n = pool || !s->c->prefill_replicas ? s->c->replicas : s->c->prefill_replicas;
    s->router_rotor = s->rotor[pool];
    uint32_t r = s->c->router->pick(s, id);
    s->rotor[pool] = s->router_rotor;
    return s->pool_base + r;
}

static const serve_router routers[] = {
    {"round-robin", "each replica in turn", pick_round_robin},
    {"least-loaded", "the replica with the fewest unfinished requests", pick_least_loaded},
    {"most-free-kv", "the replica with the most free KV blocks", pick_most_free_kv},
    {"prefix-affinity", "the replica with the longest cached prefix unless it is overloaded",
     pick_prefix_affinity},
};

const serve_router *serve_router_find(const char *name)
{
    for (size_t i = 0; i < sizeof routers / sizeof routers[0]; i++)
        if (name && strcmp(routers[i].name, name) == 0)
            return &routers[i];
    return NULL;
}

const char *serve_router_name(const serve_router *r) { return r ? r->name : "?"; }

const char *serve_router_names(void) { return "round-robin, least-loaded, most-free-kv, prefix-affinity"; }
