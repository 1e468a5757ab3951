/* routing_memo.c - the router's kept next-hop answers (routing_internal.h,
 * routing.c next_links_kept): each distinct candidate list once, found by
 * its content. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "routing.h"
#include "routing_internal.h"

static uint64_t mix(uint64_t x) /* splitmix64's finaliser: only spreads the probes */
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9u;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebu;
    return x ^ (x >> 31);
}

static uint64_t list_hash(const uint32_t *list, uint32_t n)
{
    uint64_t h = mix(n);
    for (uint32_t i = 0; i < n; i++)
        h = mix(h ^ list[i]);
    return h;
}

uint32_t routing_memo_keep(topo_router *r, const uint32_t *cand, uint32_t n)
{
    if (2 * ((size_t)r->memo_lists_n + 1) > r->memo_lists_cap) { /* grow: rehash */
        uint32_t cap = r->memo_lists_cap ? 2 * r->memo_lists_cap : 1024;
        uint32_t *t = calloc(cap, sizeof *t);
        if (!t)
            return UINT32_MAX;
        for (uint32_t i = 0; i < r->memo_lists_cap; i++) {
            uint32_t e = r->memo_lists[i];
            if (!e)
                continue;
            const uint32_t *k = r->memo_pool + r->memo_list_at[e - 1];
            uint32_t at = (uint32_t)list_hash(k + 1, k[0]) & (cap - 1);
            while (t[at]) /* at most cap probes: the table is at most half full */
                at = (at + 1) & (cap - 1);
            t[at] = e;
        }
        free(r->memo_lists);
        r->memo_lists = t;
        r->memo_lists_cap = cap;
    }
    uint32_t at = (uint32_t)list_hash(cand, n) & (r->memo_lists_cap - 1);
    for (uint32_t e; (e = r->memo_lists[at]) != 0; at = (at + 1) & (r->memo_lists_cap - 1)) {
        const uint32_t *k = r->memo_pool + r->memo_list_at[e - 1];
        if (k[0] == n && !memcmp(k + 1, cand, n * sizeof *cand))
            return e - 1;
    }
    if (r->memo_lists_n >= ROUTING_MEMO_MAX_LISTS)
        return UINT32_MAX;
    if (r->memo_lists_n == r->memo_list_at_cap) {
        uint32_t cap = r->memo_list_at_cap ? 2 * r->memo_list_at_cap : 1024;
        uint32_t *grown = realloc(r->memo_list_at, cap * sizeof *grown);
        if (!grown)
            return UINT32_MAX;
        r->memo_list_at = grown;
        r->memo_list_at_cap = cap;
    }
    if (r->memo_n + n + 1 > r->memo_cap) {
        size_t cap = r->memo_cap ? 2 * r->memo_cap : 4096;
        while (cap < r->memo_n + n + 1)
            cap *= 2;
        uint32_t *grown =
            cap <= ROUTING_MEMO_MAX_POOL ? realloc(r->memo_pool, cap * sizeof *grown) : NULL;
        if (!grown)
            return UINT32_MAX;
        r->memo_pool = grown;
        r->memo_cap = cap;
    }
    uint32_t index = r->memo_lists_n++;
    r->memo_list_at[index] = (uint32_t)r->memo_n;
    r->memo_pool[r->memo_n] = n;
    memcpy(r->memo_pool + r->memo_n + 1, cand, n * sizeof *cand);
    r->memo_n += n + 1;
    r->memo_lists[at] = index + 1;
    return index;
}

double topo_router_kept_bytes_bound(double n_switches)
{
    double bytes = 0;
    if (n_switches <= ROUTING_MEMO_MAX_SWITCHES)
        bytes += n_switches * n_switches * sizeof(uint16_t) +
                 ROUTING_MEMO_MAX_LISTS * (2.0 * sizeof(uint32_t)); /* list places, hash */
    return bytes;
}
