/* netcoll_routes.c - kept merged routes of coupled phases (netcoll_routes.h):
 * an open-addressing table of (plan address, phase) -> a block of one
 * usage pool. */
#include <stdlib.h>
#include <string.h>

#include "netcoll_routes.h"

typedef struct route_entry {
    uintptr_t plan;   /* 0: empty */
    uint32_t phase;
    uint32_t n;       /* usages */
    size_t off;       /* first link in links[] */
    size_t w_off;     /* its distinct weights in weights[] (first-use order) */
    size_t code_off;  /* each usage's weight as an index into them, in codes[] */
    uint32_t n_weights; /* at most CODES (else not kept) */
    double weight;    /* the phase's connections' weights summed */
} route_entry;

/* A merged route has a handful of distinct weights (1 on a hop one
 * connection crosses, sums where several do): each usage keeps its link (4
 * bytes) and a one-byte code; each route its distinct weights once. */
#define CODES 256
struct nc_route_cache {
    route_entry *table;
    size_t cap, n;    /* cap a power of two, n <= cap / 2 */
    uint32_t *links;
    size_t links_n, links_cap;
    uint8_t *codes;
    size_t codes_n, codes_cap;
    double *weights;
    size_t weights_n, weights_cap;
    size_t max_usages;
};

static size_t slot_of(uintptr_t plan, uint32_t phase, size_t cap)
{
    uint64_t h = (uint64_t)plan * 0x9E3779B97F4A7C15ull ^ (uint64_t)phase * 0xC2B2AE3D27D4EB4Full;
    h ^= h >> 29;
    return (size_t)h & (cap - 1);
}

nc_route_cache *nc_route_cache_create(size_t max_usages)
{
    nc_route_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->cap = 1024;
    c->table = calloc(c->cap, sizeof *c->table);
    c->max_usages = max_usages;
    if (!c->table) {
        free(c);
        return NULL;
    }
    return c;
}

void nc_route_cache_free(nc_route_cache *c)
{
    if (!c)
        return;
    free(c->table);
    free(c->links);
    free(c->codes);
    free(c->weights);
    free(c);
}

static route_entry *lookup(const nc_route_cache *c, uintptr_t plan, uint32_t phase)
{
    for (size_t i = slot_of(plan, phase, c->cap), probes = 0; probes < c->cap;
         i = (i + 1) & (c->cap - 1), probes++) {
        route_entry *e = &c->table[i];
        if (!e->plan || (e->plan == plan && e->phase == phase))
            return e;
    }
    return NULL; /* not reached: the table is at most half full */
}

size_t nc_route_cache_find(const nc_route_cache *c, const void *plan, uint32_t phase,
                           topo_usage *out, double *weight)
{
    const route_entry *e = lookup(c, (uintptr_t)plan, phase);
    if (!e || !e->plan)
        return 0;
    const uint32_t *l = c->links + e->off;
    const uint8_t *code = c->codes + e->code_off;
    const double *w = c->weights + e->w_off;
    for (uint32_t i = 0; i < e->n; i++)
        out[i] = (topo_usage){l[i], w[code[i]]};
    *weight = e->weight;
    return e->n;
}

/* room for `more` items in an array of `size`-byte items; 0 or -1 */
static int reserve(void **a, size_t *cap, size_t n, size_t more, size_t size)
{
    if (n + more <= *cap)
        return 0;
    size_t c = *cap + *cap / 2 + more + 1024;
    void *p = realloc(*a, c * size);
    if (!p)
        return -1;
    *a = p;
    *cap = c;
    return 0;
}

static int grow_table(nc_route_cache *c)
{
    nc_route_cache bigger = *c;
    bigger.cap = 2 * c->cap;
    bigger.table = calloc(bigger.cap, sizeof *bigger.table);
    if (!bigger.table)
        return -1;
    for (size_t i = 0; i < c->cap; i++)
        if (c->table[i].plan)
            *lookup(&bigger, c->table[i].plan, c->table[i].phase) = c->table[i];
    free(c->table);
    c->table = bigger.table;
    c->cap = bigger.cap;
    return 0;
}

int nc_route_cache_put(nc_route_cache *c, const void *plan, uint32_t phase, const topo_usage *u,
                       size_t n, double weight)
{
    if (!plan || n == 0 || n > UINT32_MAX || c->links_n + n > c->max_usages)
        return -1;
    if (reserve((void **)&c->weights, &c->weights_cap, c->weights_n, CODES, sizeof *c->weights))
        return -1;
    /* the distinct weights, by bits, in first-use order (a linear search:
     * a handful each) */
    double *w = c->weights + c->weights_n;
    uint32_t n_w = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t k = 0;
        while (k < n_w && memcmp(&w[k], &u[i].weight, sizeof w[k]))
            k++;
        if (k == n_w) {
            if (n_w == CODES)
                return -1; /* too many to code in a byte: routed at every start */
            w[n_w++] = u[i].weight;
        }
    }
    if ((2 * (c->n + 1) > c->cap && grow_table(c)) ||
        reserve((void **)&c->links, &c->links_cap, c->links_n, n, sizeof *c->links) ||
        reserve((void **)&c->codes, &c->codes_cap, c->codes_n, n, sizeof *c->codes))
        return -1;
    route_entry *e = lookup(c, (uintptr_t)plan, phase);
    if (!e || e->plan)
        return -1; /* kept already */
    *e = (route_entry){(uintptr_t)plan, phase, (uint32_t)n, c->links_n, c->weights_n,
                       c->codes_n, n_w, weight};
    for (size_t i = 0; i < n; i++) {
        uint32_t k = 0;
        while (memcmp(&w[k], &u[i].weight, sizeof w[k]))
            k++;
        c->links[c->links_n++] = u[i].link;
        c->codes[c->codes_n++] = (uint8_t)k;
    }
    c->weights_n += n_w;
    c->n++;
    return 0;
}

size_t nc_route_cache_bytes(const nc_route_cache *c)
{
    return c ? c->cap * sizeof *c->table + c->links_cap * sizeof *c->links + c->codes_cap +
                   c->weights_cap * sizeof *c->weights
             : 0;
}
