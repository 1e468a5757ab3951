/* serving_prefix.c - prefix caching (serving.h, prefix_*): which shared
 * prefix a request carries, and each replica's cache of computed prefixes.
 *
 * A cached prefix holds P = floor(prefix_tokens / kv_block_tokens) full
 * KV blocks (only whole blocks are shared, as vLLM's automatic prefix
 * caching shares them), counted in the replica's used blocks. A request
 * admitted with nothing computed whose prefix is cached pins the entry and
 * starts with P x block tokens computed: its prefill covers the rest of
 * its prompt only, each chunk attending over the cached context (the
 * iteration model's chunk context). The first request that computes the
 * prefix's blocks on a replica without the entry gives them to the cache
 * (a later one that finds it cached hands its own copy back). An entry is
 * evictable while no request pins it; a request that needs blocks the free
 * ones do not hold evicts the least recently pinned first, before anyone is
 * preempted. Lookups scan the replica's entries: O(entries), at most the
 * replica's blocks / P.
 */
#include <math.h>
#include <stdlib.h>

#include "serving_internal.h"

int serve_prefix_init(serve_sim *s)
{
    const serve_config *c = s->c;
    if (!c->prefix_prompts)
        return 0;
    s->prefix_blocks = floor(c->prefix_tokens / c->kv_block_tokens);
    s->prefix_blocks_u = (uint32_t)s->prefix_blocks;
    s->prefix_rng = gsl_rng_alloc(gsl_rng_mt19937);
    s->prefix_cdf = malloc((size_t)c->prefix_prompts * sizeof *s->prefix_cdf);
    if (!s->prefix_rng || !s->prefix_cdf)
        return -1;
    gsl_rng_set(s->prefix_rng, (unsigned long)(c->seed * 2 + 3));
    double sum = 0;
    for (unsigned k = 0; k < c->prefix_prompts; k++)
        s->prefix_cdf[k] = sum += pow(k + 1.0, -c->prefix_zipf);
    return 0;
}

void serve_prefix_free(serve_sim *s)
{
    for (uint32_t r = 0; s->rep && r < s->n_rep; r++)
        free(s->rep[r].cache);
    free(s->prefix_cdf);
    gsl_rng_free(s->prefix_rng);
}

uint32_t serve_prefix_draw(serve_sim *s)
{
    const serve_config *c = s->c;
    if (!c->prefix_prompts || !(gsl_rng_uniform(s->prefix_rng) < c->prefix_share))
        return SERVE_NONE;
    double u = gsl_rng_uniform(s->prefix_rng) * s->prefix_cdf[c->prefix_prompts - 1];
    uint32_t lo = 0, hi = c->prefix_prompts - 1; /* the first k with cdf[k] > u */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->prefix_cdf[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

double serve_free_blocks(const serve_replica *rp)
{
    return rp->blocks_total - rp->blocks_used + rp->evictable;
}

/* the cache's blocks on rp change by d (an entry added by dedupe or evicted) */
static void cache_blocks(serve_sim *s, serve_replica *rp, double d)
{
    serve_account(s);
    serve_series_note(s);
    rp->blocks_used += d;
    s->blocks_used_fleet += d;
}

static uint32_t find(const serve_replica *rp, uint32_t prefix_id)
{
    for (uint32_t i = 0; i < rp->n_cache; i++)
        if (rp->cache[i].prefix_id == prefix_id)
            return i;
    return SERVE_NONE;
}

static void pin(serve_sim *s, serve_replica *rp, serve_req *q, uint32_t e)
{
    serve_prefix_entry *en = &rp->cache[e];
    if (!en->pins++)
        rp->evictable -= s->prefix_blocks;
    en->last_used = ++rp->lru_clock;
    serve_ext(s, q)->cache_entry = e;
    q->uses_cache = 1;
}

int serve_prefix_attach(serve_sim *s, serve_replica *rp, serve_req *q)
{
    uint32_t id = serve_ext(s, q)->prefix_id;
    if (id == SERVE_NONE || !(s->prefix_blocks > 0) || q->prefilled)
        return 0;
    uint32_t e = find(rp, id);
    if (e == SERVE_NONE)
        return 0;
    pin(s, rp, q, e);
    q->prefilled = q->kv_tokens = s->prefix_blocks_u * s->c->kv_block_tokens;
    return 0;
}

int serve_prefix_donate(serve_sim *s, serve_replica *rp, serve_req *q)
{
    double pb = s->prefix_blocks;
    serve_req_ext *x = serve_ext(s, q);
    if (x->prefix_id == SERVE_NONE || !(pb > 0) || x->cache_entry != SERVE_NONE ||
        (double)q->prefilled < pb * s->c->kv_block_tokens)
        return 0;
    uint32_t e = find(rp, x->prefix_id);
    if (e != SERVE_NONE) { /* cached meanwhile: use it, give back the copy */
        serve_set_blocks(s, q, q->blocks - pb);
        pin(s, rp, q, e);
        return 0;
    }
    for (e = 0; e < rp->n_cache && rp->cache[e].prefix_id != SERVE_NONE; e++)
        ;
    if (e == rp->n_cache) {
        if (rp->n_cache == rp->cap_cache) {
            uint32_t cap = rp->cap_cache ? 2 * rp->cap_cache : 8;
            serve_prefix_entry *n = realloc(rp->cache, cap * sizeof *n);
            if (!n)
                return -1;
            rp->cache = n;
            rp->cap_cache = cap;
        }
        rp->n_cache++;
    }
    rp->cache[e] = (serve_prefix_entry){x->prefix_id, 0, 0};
    /* the blocks move from the request to the cache: the used count stays */
    q->blocks -= (uint32_t)pb;
    rp->evictable += pb; /* pin() takes it back */
    pin(s, rp, q, e);
    return 0;
}

void serve_prefix_release(serve_sim *s, serve_replica *rp, serve_req *q)
{
    if (!s->ext)
        return;
    serve_req_ext *x = serve_ext(s, q);
    if (x->cache_entry == SERVE_NONE)
        return;
    if (!--rp->cache[x->cache_entry].pins)
        rp->evictable += s->prefix_blocks;
    x->cache_entry = SERVE_NONE;
    q->uses_cache = 0;
}

void serve_prefix_evict(serve_sim *s, serve_replica *rp, double need)
{
    while (rp->blocks_total - rp->blocks_used < need && rp->evictable > 0) {
        uint32_t lru = SERVE_NONE;
        for (uint32_t i = 0; i < rp->n_cache; i++) {
            const serve_prefix_entry *e = &rp->cache[i];
            if (e->prefix_id != SERVE_NONE && !e->pins &&
                (lru == SERVE_NONE || e->last_used < rp->cache[lru].last_used))
                lru = i;
        }
        if (lru == SERVE_NONE)
            return;
        rp->cache[lru].prefix_id = SERVE_NONE;
        rp->evictable -= s->prefix_blocks;
        cache_blocks(s, rp, -s->prefix_blocks);
    }
}
