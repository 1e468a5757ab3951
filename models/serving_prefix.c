/* serving_prefix.c - prefix caching (serving.h, prefix_*): which chain of
 * shared prefixes a request carries, and each replica's cache of computed
 * prefixes, a tree (a radix tree over whole blocks, as SGLang's
 * RadixAttention and vLLM's automatic prefix caching share KV blocks).
 *
 * Level 1 is a system prompt, level 2 a document or few-shot prefix under
 * it, and so on: each node of level l has its own children. A chain of d
 * levels covers T_d tokens and floor(T_d / block) whole blocks; a node
 * holds the whole blocks of its chain past its parent's (a block straddling
 * two levels belongs to the deeper one), counted in the replica's used
 * blocks. A request admitted with nothing computed pins its longest cached
 * chain and starts with that chain's blocks x block tokens computed: its
 * prefill covers the rest of its prompt only, each chunk attending over the
 * cached context (the iteration model's chunk context). The first request
 * that computes a node's blocks on a replica without it gives them to the
 * cache (a later one that finds it cached hands its own copy back). A node
 * is evictable while no request pins it (a request pins its whole chain);
 * a request that needs blocks the free ones do not hold evicts the least
 * recently pinned unpinned leaf first, before anyone is preempted, so a
 * node's subtree goes before it. With one level this is the cache of whole
 * prefixes it was, draw for draw and block for block. Lookups scan the
 * replica's entries: O(entries x levels).
 */
#include <math.h>
#include <stdlib.h>

#include "serving_internal.h"

int serve_prefix_init(serve_sim *s)
{
    const serve_config *c = s->c;
    if (!c->prefix_prompts)
        return 0;
    unsigned depth = c->prefix_levels > 1 ? c->prefix_levels : 1;
    s->prefix_depth = depth;
    s->prefix_lv[0] = (struct serve_prefix_level){c->prefix_prompts, c->prefix_tokens,
                                                  c->prefix_share, c->prefix_zipf};
    double tokens = 0;
    for (unsigned l = 0; l < depth; l++) {
        if (l)
            s->prefix_lv[l] = c->prefix_inner[l - 1];
        tokens += s->prefix_lv[l].tokens;
        s->prefix_cum[l + 1] = floor(tokens / c->kv_block_tokens);
        s->prefix_cum_u[l + 1] = (uint32_t)s->prefix_cum[l + 1];
    }
    s->prefix_rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!s->prefix_rng)
        return -1;
    gsl_rng_set(s->prefix_rng, (unsigned long)(c->seed * 2 + 3));
    for (unsigned l = 0; l < depth; l++) {
        unsigned n = s->prefix_lv[l].prompts;
        double *cdf = s->prefix_cdf[l] = malloc((size_t)n * sizeof *cdf);
        if (!cdf)
            return -1;
        double sum = 0;
        for (unsigned k = 0; k < n; k++)
            cdf[k] = sum += pow(k + 1.0, -s->prefix_lv[l].zipf);
    }
    return 0;
}

void serve_prefix_free(serve_sim *s)
{
    for (uint32_t r = 0; s->rep && r < s->n_rep; r++)
        free(s->rep[r].cache);
    for (unsigned l = 0; l < SERVE_PREFIX_LEVELS; l++)
        free(s->prefix_cdf[l]);
    gsl_rng_free(s->prefix_rng);
}

/* a child of a level-l node (l from 0), by its popularity */
static uint32_t draw_child(serve_sim *s, unsigned l)
{
    const double *cdf = s->prefix_cdf[l];
    uint32_t n = s->prefix_lv[l].prompts;
    double u = gsl_rng_uniform(s->prefix_rng) * cdf[n - 1];
    uint32_t lo = 0, hi = n - 1; /* the first k with cdf[k] > u */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (cdf[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

uint32_t serve_prefix_draw(serve_sim *s, serve_req_ext *x)
{
    double tokens = 0;
    x->prefix_depth = 0;
    for (unsigned l = 0; l < s->prefix_depth; l++) { /* one level: the draws of before */
        if (!(gsl_rng_uniform(s->prefix_rng) < s->prefix_lv[l].share))
            break;
        x->prefix_k[l] = draw_child(s, l);
        x->prefix_depth = l + 1;
        tokens += s->prefix_lv[l].tokens;
    }
    return (uint32_t)tokens;
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

/* the blocks a level-l node (l from 1) holds itself */
static double own_blocks(const serve_sim *s, uint32_t l)
{
    return s->prefix_cum[l] - s->prefix_cum[l - 1];
}

/* x's node at level l (from 1) within its level */
static uint64_t path_of(const serve_sim *s, const serve_req_ext *x, unsigned l)
{
    uint64_t path = 0;
    for (unsigned i = 0; i < l; i++)
        path = path * s->prefix_lv[i].prompts + x->prefix_k[i];
    return path;
}

static uint32_t find(const serve_replica *rp, uint32_t level, uint64_t path)
{
    for (uint32_t i = 0; i < rp->n_cache; i++)
        if (rp->cache[i].level == level && rp->cache[i].path == path)
            return i;
    return SERVE_NONE;
}

/* The longest cached chain of x on rp: its depth and deepest entry. Levels
 * whose chain holds no whole block have no entry and are passed over. */
static unsigned longest(const serve_sim *s, const serve_replica *rp, const serve_req_ext *x,
                        uint32_t *entry)
{
    unsigned d = 0;
    *entry = SERVE_NONE;
    for (unsigned l = 1; l <= x->prefix_depth; l++) {
        if (!(s->prefix_cum[l] > 0))
            continue;
        uint32_t e = find(rp, l, path_of(s, x, l));
        if (e == SERVE_NONE)
            break;
        *entry = e;
        d = l;
    }
    return d;
}

/* blocks of entry e and its chain above it */
static double chain_blocks(const serve_sim *s, const serve_replica *rp, uint32_t e)
{
    const serve_prefix_entry *en = &rp->cache[e];
    return en->own + (en->parent != SERVE_NONE ? s->prefix_cum[rp->cache[en->parent].level] : 0);
}

/* x's session context cached on rp: its entry, or SERVE_NONE */
static uint32_t session_entry(const serve_sim *s, const serve_replica *rp,
                              const serve_req_ext *x)
{
    if (x->session == SERVE_NONE || !s->c->session_cache)
        return SERVE_NONE;
    return find(rp, SERVE_SESSION_LEVEL, s->sess[x->session].cache_key);
}

double serve_prefix_cached_blocks(const serve_sim *s, const serve_replica *rp,
                                  const serve_req_ext *x)
{
    uint32_t e = session_entry(s, rp, x);
    if (e != SERVE_NONE)
        return chain_blocks(s, rp, e);
    return s->prefix_cum[longest(s, rp, x, &e)];
}

/* one more pin on entry e at LRU time t */
static void pin_one(serve_replica *rp, uint32_t e, uint64_t t)
{
    serve_prefix_entry *en = &rp->cache[e];
    if (!en->pins++)
        rp->evictable -= en->own;
    en->last_used = t;
}

int serve_prefix_attach(serve_sim *s, serve_replica *rp, serve_req *q)
{
    serve_req_ext *x = serve_ext(s, q);
    if (q->prefilled)
        return 0;
    uint32_t se = session_entry(s, rp, x);
    if (se != SERVE_NONE) { /* its context (and the chain above it) */
        uint64_t t = ++rp->lru_clock;
        for (uint32_t e = se, n = 0; e != SERVE_NONE && n < SERVE_SESSION_LEVEL;
             e = rp->cache[e].parent, n++)
            pin_one(rp, e, t);
        x->cache_entry = se;
        x->session_blocks = (uint32_t)chain_blocks(s, rp, se);
        q->uses_cache = SERVE_SESSION_LEVEL;
        q->prefilled = q->kv_tokens = x->session_blocks * s->c->kv_block_tokens;
        return 0;
    }
    if (!x->prefix_depth)
        return 0;
    uint32_t deepest;
    unsigned d = longest(s, rp, x, &deepest);
    if (!d)
        return 0;
    uint64_t t = ++rp->lru_clock; /* the chain, one pin each */
    for (uint32_t e = deepest; e != SERVE_NONE; e = rp->cache[e].parent)
        pin_one(rp, e, t);
    x->cache_entry = deepest;
    q->uses_cache = (uint8_t)d;
    q->prefilled = q->kv_tokens = s->prefix_cum_u[d] * s->c->kv_block_tokens;
    return 0;
}

/* a free slot in rp's cache: SERVE_NONE when out of memory */
static uint32_t slot(serve_replica *rp)
{
    uint32_t e;
    for (e = 0; e < rp->n_cache && rp->cache[e].level; e++)
        ;
    if (e == rp->n_cache) {
        if (rp->n_cache == rp->cap_cache) {
            uint32_t cap = rp->cap_cache ? 2 * rp->cap_cache : 8;
            serve_prefix_entry *n = realloc(rp->cache, cap * sizeof *n);
            if (!n)
                return SERVE_NONE;
            rp->cache = n;
            rp->cap_cache = cap;
        }
        rp->n_cache++;
    }
    return e;
}

int serve_prefix_donate(serve_sim *s, serve_replica *rp, serve_req *q)
{
    serve_req_ext *x = serve_ext(s, q);
    unsigned d = q->uses_cache;
    uint32_t parent = x->cache_entry;
    uint32_t block = s->c->kv_block_tokens;
    /* each level whose blocks q has computed beyond the chain it pins:
     * cached meanwhile, q uses the entry and gives back its copy; else its
     * blocks move from q to a new entry (the used count stays) */
    for (unsigned l = d + 1; l <= x->prefix_depth; l++) {
        double own = own_blocks(s, l);
        if (!(s->prefix_cum[l] > 0))
            continue;
        if ((double)q->prefilled < s->prefix_cum[l] * block)
            break;
        uint64_t path = path_of(s, x, l);
        uint32_t e = find(rp, l, path);
        if (e != SERVE_NONE) {
            serve_set_blocks(s, q, q->blocks - own);
        } else {
            if ((e = slot(rp)) == SERVE_NONE)
                return -1;
            rp->cache[e] = (serve_prefix_entry){path, 0, parent, 0, 0, l, own};
            if (parent != SERVE_NONE)
                rp->cache[parent].children++;
            q->blocks -= (uint32_t)own;
            rp->evictable += own; /* pin_one takes it back */
        }
        pin_one(rp, e, ++rp->lru_clock);
        parent = e;
        d = l;
    }
    x->cache_entry = parent;
    q->uses_cache = (uint8_t)d;
    return 0;
}

void serve_prefix_release(serve_sim *s, serve_replica *rp, serve_req *q)
{
    if (!s->ext)
        return;
    serve_req_ext *x = serve_ext(s, q);
    for (uint32_t e = x->cache_entry, n = 0; e != SERVE_NONE && n < SERVE_SESSION_LEVEL;
         e = rp->cache[e].parent, n++)
        if (!--rp->cache[e].pins)
            rp->evictable += rp->cache[e].own;
    x->cache_entry = SERVE_NONE;
    q->uses_cache = 0;
}

/* Evict least recently pinned unpinned leaves (a node goes after its
 * subtree: a parent is pinned whenever a child is, at the same time or
 * later, so its subtree's leaves are older or as old) */
void serve_prefix_evict(serve_sim *s, serve_replica *rp, double need)
{
    for (uint32_t round = 0; round <= rp->n_cache &&
                             rp->blocks_total - rp->blocks_used < need && rp->evictable > 0;
         round++) {
        uint32_t lru = SERVE_NONE;
        for (uint32_t i = 0; i < rp->n_cache; i++) {
            const serve_prefix_entry *e = &rp->cache[i];
            if (e->level && !e->pins && !e->children &&
                (lru == SERVE_NONE || e->last_used < rp->cache[lru].last_used))
                lru = i;
        }
        if (lru == SERVE_NONE)
            return;
        serve_prefix_entry *en = &rp->cache[lru];
        double own = en->own;
        if (en->parent != SERVE_NONE)
            rp->cache[en->parent].children--;
        en->level = 0;
        rp->evictable -= own;
        if (own > 0)
            cache_blocks(s, rp, -own);
    }
}

int serve_prefix_keep(serve_sim *s, serve_replica *rp, serve_req *q, uint64_t key)
{
    serve_req_ext *x = serve_ext(s, q);
    double whole = floor((double)q->kv_tokens / s->c->kv_block_tokens);
    double shared = serve_shared(s, q);
    uint32_t e = q->uses_cache == SERVE_SESSION_LEVEL ? x->cache_entry
                                                      : find(rp, SERVE_SESSION_LEVEL, key);
    if (e != SERVE_NONE) { /* its context grows past the blocks the entry holds */
        serve_prefix_entry *en = &rp->cache[e];
        double add = whole - chain_blocks(s, rp, e);
        if (add > (double)q->blocks)
            add = q->blocks;
        if (add > 0) {
            en->own += add;
            if (!en->pins) /* a copy of an entry q did not use (it was swapped out) */
                rp->evictable += add;
            q->blocks -= (uint32_t)add;
        }
        en->last_used = ++rp->lru_clock;
        return 0;
    }
    double own = whole - shared;
    if (own > (double)q->blocks)
        own = q->blocks;
    if (!(own > 0))
        return 0;
    if ((e = slot(rp)) == SERVE_NONE)
        return -1;
    uint32_t parent = x->cache_entry;
    rp->cache[e] = (serve_prefix_entry){key, ++rp->lru_clock, parent, 0, 0,
                                        SERVE_SESSION_LEVEL, own};
    if (parent != SERVE_NONE)
        rp->cache[parent].children++;
    q->blocks -= (uint32_t)own; /* they move to the cache: the used count stays */
    rp->evictable += own;
    return 0;
}

uint32_t serve_prefix_pin_cached(serve_sim *s, serve_replica *rp, const serve_req_ext *x)
{
    uint32_t deepest = session_entry(s, rp, x);
    if (deepest == SERVE_NONE && x->prefix_depth)
        longest(s, rp, x, &deepest);
    if (deepest == SERVE_NONE)
        return SERVE_NONE;
    uint64_t t = ++rp->lru_clock; /* the chain, one pin each */
    for (uint32_t e = deepest, n = 0; e != SERVE_NONE && n < SERVE_SESSION_LEVEL;
         e = rp->cache[e].parent, n++)
        pin_one(rp, e, t);
    return deepest;
}

void serve_prefix_unpin(serve_replica *rp, uint32_t entry)
{
    for (uint32_t e = entry, n = 0; e != SERVE_NONE && n < SERVE_SESSION_LEVEL;
         e = rp->cache[e].parent, n++)
        if (!--rp->cache[e].pins)
            rp->evictable += rp->cache[e].own;
}
