/* flow_store.c - where the flow net keeps its flows (see flow_internal.h):
 * the per-flow arrays, the usage pool, the interned flow classes and the
 * per-link lists of flow ids (and, on a link that has carried a flow with
 * unequal weights, each entry's weight code in its flow's block). Every
 * structure grows by a fraction (an eighth or a quarter), not by doubling,
 * so that the slack stays a few percent of what the flows hold. Order matters for bit-identical rates: a link's list
 * appends and fills a hole with its last entry, as before.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow_internal.h"

static int grow_array(void **p, size_t n, size_t elem)
{
    void *q = realloc(*p, n * elem);
    if (!q)
        return -1;
    *p = q;
    return 0;
}

int flow_store_grow_flows(flow_net *n)
{
    size_t cap = n->cap_flows ? (size_t)n->cap_flows + n->cap_flows / 8 : 256;
    if (cap > UINT32_MAX - 1)
        return -1;
    if (grow_array((void **)&n->bytes, cap, sizeof *n->bytes) ||
        grow_array((void **)&n->left, cap, sizeof *n->left) ||
        grow_array((void **)&n->rate, cap, sizeof *n->rate) ||
        grow_array((void **)&n->since, cap, sizeof *n->since) ||
        grow_array((void **)&n->tag, cap, sizeof *n->tag) ||
        grow_array((void **)&n->event, cap, sizeof *n->event) ||
        grow_array((void **)&n->use_off, cap, sizeof *n->use_off) ||
        grow_array((void **)&n->cls, cap, sizeof *n->cls) ||
        grow_array((void **)&n->bneck, cap, sizeof *n->bneck) ||
        grow_array((void **)&n->flow_mark, cap, sizeof *n->flow_mark) ||
        grow_array((void **)&n->comp_flows, cap, sizeof *n->comp_flows) ||
        (n->injects && grow_array((void **)&n->offer, cap, sizeof *n->offer)))
        return -1;
    for (size_t f = n->cap_flows; f < cap; f++) {
        n->cls[f] = NO_CLASS;
        n->flow_mark[f] = 0;
    }
    n->cap_flows = (uint32_t)cap;
    return 0;
}

/* ---- usage pool ---- */

/* uint32 words of a block: links; unequal weights add codes and the
 * distinct weights (2 words each; flow_internal.h) */
static size_t block_size(uint32_t n_use, uint32_t n_weights)
{
    return n_weights ? n_use + flow_code_words(n_use, n_weights) + 2 * (size_t)n_weights : n_use;
}

static size_t flow_block_size(const flow_net *n, uint32_t f)
{
    const flow_class *c = flow_cls(n, f);
    return block_size(c->n_use, c->n_weights);
}

/* Copy the live blocks, in flow id order, into a pool of cap entries. */
static int pool_rebuild(flow_net *n, size_t cap)
{
    uint32_t *p = malloc((cap ? cap : 1) * sizeof *p);
    if (!p)
        return -1;
    size_t at = 0;
    for (uint32_t f = 0; f < n->n_flows; f++) {
        if (!flow_is_active(n, f))
            continue;
        size_t s = flow_block_size(n, f);
        memcpy(p + at, n->pool + n->use_off[f], s * sizeof *p);
        n->use_off[f] = (uint32_t)at;
        at += s;
    }
    free(n->pool);
    n->pool = p;
    n->pool_n = at;
    n->pool_cap = cap;
    n->pool_garbage = 0;
    return 0;
}

/* Offset of a new block of s entries, or SIZE_MAX. A full pool is compacted
 * when half of it is garbage (freed blocks), else grown by an eighth. */
static size_t pool_alloc(flow_net *n, size_t s)
{
    if (n->pool_n + s > n->pool_cap) {
        if (n->pool_garbage && 2 * n->pool_garbage >= n->pool_n) {
            size_t need = n->pool_n - n->pool_garbage + s, cap = need + need / 8 + 1024;
            if (cap > UINT32_MAX || pool_rebuild(n, cap))
                return SIZE_MAX;
        } else {
            size_t cap = n->pool_cap + n->pool_cap / 8 + s + 1024;
            if (cap > UINT32_MAX || grow_array((void **)&n->pool, cap, sizeof *n->pool))
                return SIZE_MAX;
            n->pool_cap = cap;
        }
    }
    size_t off = n->pool_n;
    n->pool_n += s;
    return off;
}

/* ---- flow classes ---- */

#define ATTACHING 0x80000000u /* slot.waiting: l is among the flow being attached's */

static uint64_t bits(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static uint32_t class_hash(const flow_class *c)
{
    uint64_t h = bits(c->latency_s) * 0x9e3779b97f4a7c15ull;
    h = (h ^ bits(c->rate_cap)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ bits(c->weight)) * 0x94d049bb133111ebull;
    h = (h ^ c->n_use) * 0x9e3779b97f4a7c15ull;
    h = (h ^ c->n_weights) * 0xbf58476d1ce4e5b9ull;
    return (uint32_t)(h >> 32);
}

static int class_equal(const flow_class *a, const flow_class *b)
{
    return bits(a->latency_s) == bits(b->latency_s) && bits(a->rate_cap) == bits(b->rate_cap) &&
           bits(a->weight) == bits(b->weight) && a->n_use == b->n_use &&
           a->n_weights == b->n_weights;
}

static void hash_put(flow_net *n, uint32_t id)
{
    uint32_t mask = n->hash_cap - 1, i = class_hash(&n->classes[id]) & mask;
    while (n->class_hash[i] != NO_CLASS)
        i = (i + 1) & mask;
    n->class_hash[i] = id;
}

static int hash_grow(flow_net *n)
{
    uint32_t cap = n->hash_cap ? 2 * n->hash_cap : 64;
    uint32_t *t = malloc((size_t)cap * sizeof *t);
    if (!t)
        return -1;
    for (uint32_t i = 0; i < cap; i++)
        t[i] = NO_CLASS;
    free(n->class_hash);
    n->class_hash = t;
    n->hash_cap = cap;
    for (uint32_t id = 0; id < n->n_classes; id++)
        if (n->classes[id].refs)
            hash_put(n, id);
    return 0;
}

/* The class equal to *key, one more reference; NO_CLASS when out of memory. */
static uint32_t class_get(flow_net *n, const flow_class *key)
{
    if (2 * ((size_t)n->n_live_classes + 1) > n->hash_cap && hash_grow(n))
        return NO_CLASS;
    uint32_t mask = n->hash_cap - 1, i = class_hash(key) & mask;
    for (; n->class_hash[i] != NO_CLASS; i = (i + 1) & mask)
        if (class_equal(&n->classes[n->class_hash[i]], key)) {
            n->classes[n->class_hash[i]].refs++;
            return n->class_hash[i];
        }
    uint32_t id;
    if (n->free_class != NO_CLASS) {
        id = n->free_class;
        n->free_class = n->classes[id].n_use; /* the free list's link */
    } else {
        if (n->n_classes == n->cap_classes) {
            uint32_t cap = n->cap_classes ? 2 * n->cap_classes : 16;
            if (grow_array((void **)&n->classes, cap, sizeof *n->classes))
                return NO_CLASS;
            n->cap_classes = cap;
        }
        id = n->n_classes++;
    }
    n->classes[id] = *key;
    n->classes[id].refs = 1;
    n->class_hash[i] = id;
    n->n_live_classes++;
    return id;
}

/* Drop a reference; the last one frees the class (backward-shift deletion). */
static void class_put(flow_net *n, uint32_t id)
{
    if (--n->classes[id].refs)
        return;
    uint32_t mask = n->hash_cap - 1, i = class_hash(&n->classes[id]) & mask;
    while (n->class_hash[i] != id)
        i = (i + 1) & mask;
    for (uint32_t j = (i + 1) & mask; n->class_hash[j] != NO_CLASS; j = (j + 1) & mask) {
        uint32_t home = class_hash(&n->classes[n->class_hash[j]]) & mask;
        /* the entry at j may fill the hole at i unless its home lies in (i, j] */
        int in_between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!in_between) {
            n->class_hash[i] = n->class_hash[j];
            i = j;
        }
    }
    n->class_hash[i] = NO_CLASS;
    n->classes[id].n_use = n->free_class;
    n->free_class = id;
    n->n_live_classes--;
}

/* ---- attach and detach ---- */

static int reserve_scratch(flow_net *n, size_t k)
{
    if (k <= n->attach_cap)
        return 0;
    size_t h = 64;
    while (h < 2 * k)
        h *= 2;
    if (k > UINT32_MAX / 4 || grow_array((void **)&n->attach_w, k, sizeof *n->attach_w) ||
        grow_array((void **)&n->attach_link, k, sizeof *n->attach_link) ||
        grow_array((void **)&n->attach_slot, k, sizeof *n->attach_slot) ||
        grow_array((void **)&n->attach_code, k, sizeof *n->attach_code) ||
        grow_array((void **)&n->attach_hash, h, sizeof *n->attach_hash))
        return -1;
    n->attach_cap = (uint32_t)k;
    n->hash_cap_attach = (uint32_t)h;
    return 0;
}

/* Room for cap entries in ll (cap > ll->cap): the ids move out of the
 * record past LIST_INLINE; the entries written so far (the first
 * min(n, old cap)) are kept. 0 or -1 (then the ids are as they were). */
static int list_room(link_list *ll, size_t cap)
{
    if (cap > UINT32_MAX)
        return -1;
    if (ll->code) { /* grown codes, ids as they were: cap stays the smaller */
        int wide = flow_list_is_wide(ll);
        void *code = flow_list_codes(ll);
        if (grow_array(&code, cap, wide ? sizeof(uint16_t) : sizeof(uint8_t)))
            return -1;
        ll->code = (char *)code + wide;
    }
    if (cap > LIST_INLINE) {
        uint32_t *ids = ll->cap <= LIST_INLINE ? malloc(cap * sizeof *ids)
                                               : realloc(ll->ids.heap, cap * sizeof *ids);
        if (!ids)
            return -1;
        if (ll->cap <= LIST_INLINE) /* in a burst n may exceed the old cap */
            memcpy(ids, ll->ids.inl, (size_t)(ll->n < ll->cap ? ll->n : ll->cap) * sizeof *ids);
        ll->ids.heap = ids;
    }
    ll->cap = (uint32_t)cap;
    return 0;
}

/* Room for one more entry: a quarter more. */
static int reserve_link(link_list *ll)
{
    if (ll->n < ll->cap)
        return 0;
    size_t cap = ll->cap < LIST_INLINE ? LIST_INLINE : (size_t)ll->cap + ll->cap / 4 + 1;
    return list_room(ll, cap > ll->n ? cap : (size_t)ll->n + 1);
}

int flow_store_room(flow_net *n)
{
    for (uint32_t l = 0; l < n->n_slots; l++) {
        link_list *ll = &n->slot[l].list;
        if (ll->n > ll->cap && list_room(ll, ll->n > LIST_INLINE ? ll->n : LIST_INLINE))
            return -1;
    }
    return 0;
}

/* Give link list ll its weight codes (flow_entry_weight), uint16 when wide
 * else uint8: the first n - 1 entries' (uniform flows: 0, unread); the
 * last entry, the flow being attached, gets its own from flow_store_place.
 * A list with uint8 codes made wide keeps them (widened). 0 or -1. */
static int add_weights(link_list *ll, int wide)
{
    /* in a burst the list may hold more entries than its room */
    size_t room = ll->cap > ll->n ? ll->cap : ll->n;
    uint16_t *code = wide ? malloc(room * sizeof *code) : NULL;
    uint8_t *code8 = wide ? NULL : malloc(room);
    if (!code && !code8)
        return -1;
    for (uint32_t i = 0; i + 1 < ll->n; i++) {
        /* a uniform flow reads its class weight (the entries still waiting
         * get theirs from flow_store_place); a widened code keeps its value */
        uint32_t c = ll->code && i < ll->cap ? flow_list_code(ll, i) : 0;
        if (wide)
            code[i] = (uint16_t)c;
        else
            code8[i] = (uint8_t)c;
    }
    free(flow_list_codes(ll));
    ll->code = wide ? (void *)((char *)code + 1) : (void *)code8;
    return 0;
}

/* The slot of link g, given one on first use; UINT32_MAX when out of memory. */
static uint32_t slot_of(flow_net *n, uint32_t g)
{
    if (n->slot_of[g])
        return n->slot_of[g] - 1;
    if (flow_grow_slots(n, (size_t)n->n_slots + 1))
        return UINT32_MAX;
    uint32_t l = n->n_slots++;
    n->slot_of[g] = l + 1;
    n->link_of[l] = g;
    n->slot[l].cap = n->link_capacity[g];
    return l;
}

/* Codes of the merged weights attach_w[0..m) (attach_code; weight j the
 * one of usage attach_slot[j], first-use order, equal by bits): returns
 * the count of distinct weights. attach_slot is free by then. */
static uint32_t weight_codes(flow_net *n, uint32_t m)
{
    uint32_t h = 64, d = 0, *at = n->attach_hash, *first = n->attach_slot;
    while (h < 2 * m) /* this flow's size, not the largest so far: a small flow clears little */
        h *= 2;
    uint32_t mask = h - 1;
    memset(at, 0xff, (size_t)h * sizeof *at);
    for (uint32_t s = 0; s < m; s++) {
        uint64_t w = bits(n->attach_w[s]);
        uint32_t i = (uint32_t)((w * 0x9e3779b97f4a7c15ull) >> 32) & mask;
        while (at[i] != UINT32_MAX && bits(n->attach_w[first[at[i]]]) != w)
            i = (i + 1) & mask;
        if (at[i] == UINT32_MAX) {
            first[d] = s;
            at[i] = d++;
        }
        n->attach_code[s] = at[i];
    }
    return d;
}

int flow_store_attach(flow_net *n, uint32_t f, const topo_usage *u, size_t k,
                      double rate_cap, double latency_s, int defer_room)
{
    if (reserve_scratch(n, k))
        return -1;
    uint32_t *slot = n->attach_slot;
    for (size_t i = 0; i < k; i++) /* room for f on each link (deferred: flow_store_room) */
        if ((slot[i] = slot_of(n, u[i].link)) == UINT32_MAX ||
            (!defer_room && reserve_link(&n->slot[slot[i]].list)))
            return -1;
    /* f goes on each link once: a repeated link carries the mark bit in its
     * waiting count (repeats are rare; netcoll merges its own), and its
     * weights add in order. The entry is reserved (n, waiting), written by
     * flow_store_place. */
    uint32_t m = 0;
    for (size_t i = 0; i < k; i++) {
        uint32_t l = slot[i];
        link_list *ll = &n->slot[l].list;
        if (n->slot[l].waiting & ATTACHING) {
            uint32_t s = m - 1;
            while (n->attach_link[s] != l) /* l is among the first m */
                s--;
            n->attach_w[s] += u[i].weight;
            continue;
        }
        n->slot[l].waiting = (n->slot[l].waiting + 1) | ATTACHING;
        ll->n++;
        n->live[l]++;
        flow_set_busy(n, l, 1);
        n->attach_link[m] = l;
        n->attach_w[m++] = u[i].weight;
    }
    for (uint32_t s = 0; s < m; s++)
        n->slot[n->attach_link[s]].waiting &= ~ATTACHING;
    int uniform = 1;
    for (uint32_t s = 1; s < m; s++)
        uniform &= n->attach_w[s] == n->attach_w[0];
    uint32_t d = uniform ? 0 : weight_codes(n, m);
    /* codes 0..254 fit a byte beside its escape; FLOW_LIST_FAR weights or
     * more escape in either width */
    int wide = d > FLOW_LIST_FAR8 && d < FLOW_LIST_FAR;
    int failed = 0; /* unequal weights: each of f's links keeps its entries' weights */
    for (uint32_t s = 0; !uniform && !failed && s < m; s++) {
        link_list *ll = &n->slot[n->attach_link[s]].list;
        if (!ll->code || (wide && !flow_list_is_wide(ll)))
            failed = add_weights(ll, wide);
    }
    flow_class key = {latency_s, rate_cap, uniform ? (m ? n->attach_w[0] : 0) : NAN, m, 0, d};
    uint32_t id = failed ? NO_CLASS : class_get(n, &key);
    size_t off = id == NO_CLASS ? SIZE_MAX : pool_alloc(n, block_size(m, d));
    if (off == SIZE_MAX) { /* take f off its links again: it is last on each */
        if (id != NO_CLASS)
            class_put(n, id);
        for (uint32_t s = 0; s < m; s++) {
            n->live[n->attach_link[s]]--;
            n->slot[n->attach_link[s]].waiting--;
            if (--n->slot[n->attach_link[s]].list.n == 0)
                flow_set_busy(n, n->attach_link[s], 0);
        }
        return -1;
    }
    uint32_t *b = n->pool + off;
    memcpy(b, n->attach_link, (size_t)m * sizeof *b);
    if (d) {
        uint32_t *codes = b + m, *table = codes + flow_code_words(m, d);
        if (d <= FLOW_BYTE_CODES) {
            memset(codes, 0, flow_code_words(m, d) * sizeof *codes); /* the last word's rest */
            for (uint32_t s = 0; s < m; s++)
                ((uint8_t *)codes)[s] = (uint8_t)n->attach_code[s];
        } else if (d <= FLOW_SHORT_CODES) {
            codes[m / 2] = 0; /* an odd count's last half word */
            for (uint32_t s = 0; s < m; s++) {
                uint16_t h = (uint16_t)n->attach_code[s];
                memcpy((char *)codes + 2 * (size_t)s, &h, sizeof h);
            }
        } else
            memcpy(codes, n->attach_code, (size_t)m * sizeof *codes);
        for (uint32_t j = 0; j < d; j++) /* weight j: that of its first usage */
            memcpy(table + 2 * (size_t)j, &n->attach_w[n->attach_slot[j]], sizeof(double));
    }
    n->use_off[f] = (uint32_t)off;
    n->cls[f] = id;
    for (uint32_t s = 0; s < m; s++)
        flow_mark_dirty(n, b[s]);
    for (size_t i = 0; i < k; i++)
        n->load[u[i].link] += u[i].weight;
    return 0;
}

/* What leaving its links does but for the lists: per usage, in order, the
 * load, the live count (an idle link: load exactly 0, not busy) and the
 * dirty mark; f's block becomes garbage and f inactive (its class kept). */
static void leave_links(flow_net *n, uint32_t f)
{
    uint32_t m = flow_n_use(n, f);
    const uint32_t *links = flow_links(n, f);
    if (n->bneck[f] != NO_LINK) /* every flow with links has been filled by now */
        n->slot[n->bneck[f]].n_bneck--;
    for (uint32_t k = 0; k < m; k++) {
        uint32_t l = links[k];
        n->load[n->link_of[l]] -= flow_use_weight(n, f, k);
        if (--n->live[l] == 0) {
            n->load[n->link_of[l]] = 0; /* no rounding residue on an idle link */
            flow_set_busy(n, l, 0);
        }
        flow_mark_dirty(n, l);
    }
    n->pool_garbage += flow_block_size(n, f);
    n->cls[f] = NO_CLASS;
}

/* Entry i of ll leaves: the last entry fills the hole. */
static void list_remove_at(link_list *ll, uint32_t i)
{
    uint32_t *ids = flow_list_ids(ll);
    ids[i] = ids[--ll->n];
    if (ll->code && flow_list_is_wide(ll)) {
        uint16_t *code = flow_list_codes(ll);
        code[i] = code[ll->n];
    } else if (ll->code)
        ((uint8_t *)ll->code)[i] = ((uint8_t *)ll->code)[ll->n];
}

/* flow f's entries, reserved at the last ones of its lists still waiting */
static void place_one(flow_net *n, uint32_t f)
{
    const flow_class *c = flow_cls(n, f);
    uint32_t m = c->n_use;
    const uint32_t *b = flow_links(n, f);
    int is_coded = isnan(c->weight), is_far = c->n_weights >= FLOW_LIST_FAR;
    for (uint32_t s = 0; s < m; s++) {
        link_list *ll = &n->slot[b[s]].list;
        uint32_t at = ll->n - n->slot[b[s]].waiting--; /* the first still waiting */
        flow_list_ids(ll)[at] = f;
        if (!ll->code)
            continue;
        uint32_t code = !is_coded ? 0 /* a uniform flow's is unread */
                        : is_far  ? FLOW_LIST_FAR
                                  : flow_use_code(n, f, c, s);
        if (flow_list_is_wide(ll))
            ((uint16_t *)flow_list_codes(ll))[at] = (uint16_t)code;
        else /* below FLOW_LIST_FAR8 unless the escape (the attach widened it else) */
            ((uint8_t *)ll->code)[at] = is_far ? (uint8_t)FLOW_LIST_FAR8 : (uint8_t)code;
    }
}

double flow_far_weight(const flow_net *n, const link_list *ll, uint32_t f)
{
    /* ll is the list of a slot record: its index is the link */
    size_t at = (size_t)((const char *)ll - offsetof(flow_slot, list) - (const char *)n->slot);
    uint32_t l = (uint32_t)(at / sizeof(flow_slot)), k = 0;
    const uint32_t *links = flow_links(n, f);
    while (links[k] != l) /* f is on l: bounded by its usages */
        k++;
    return flow_use_weight(n, f, k);
}

void flow_store_place(flow_net *n, uint32_t also)
{
    if (n->in_burst && flow_store_room(n)) { /* inside a burst (an open one's misuse,
                                               * or flow_start's own with room made) */
        fprintf(stderr, "flow model: out of memory placing the entries of a burst of starts\n");
        abort();
    }
    for (uint32_t f = n->place_next; f != NO_FLOW; f = n->bneck[f]) /* bounded: the */
        place_one(n, f);                                            /* fresh list */
    n->place_next = NO_FLOW;
    if (also != NO_FLOW)
        place_one(n, also);
}

void flow_store_detach(flow_net *n, uint32_t f)
{
    if (n->place_next != NO_FLOW)
        flow_store_place(n, NO_FLOW);
    uint32_t m = flow_n_use(n, f), id = n->cls[f];
    const uint32_t *links = flow_links(n, f);
    for (uint32_t k = 0; k < m; k++) {
        link_list *ll = &n->slot[links[k]].list;
        uint32_t i = 0;
        while (flow_list_ids(ll)[i] != f) /* f is on the link: bounded by ll->n */
            i++;
        list_remove_at(ll, i);
    }
    leave_links(n, f);
    class_put(n, id);
}

void flow_store_detach_later(flow_net *n, uint32_t f)
{
    if (n->n_pending == n->cap_pending) {
        size_t cap = (size_t)n->cap_pending + n->cap_pending / 4 + 64;
        if (cap > UINT32_MAX || grow_array((void **)&n->pending, cap, sizeof *n->pending) ||
            grow_array((void **)&n->pending_cls, cap, sizeof *n->pending_cls) ||
            grow_array((void **)&n->pending_pos, cap, sizeof *n->pending_pos)) {
            flow_store_flush(n); /* the lists as they would be now, then f alone */
            flow_store_detach(n, f);
            return;
        }
        n->cap_pending = (uint32_t)cap;
    }
    n->pending_cls[n->n_pending] = n->cls[f];
    n->pending[n->n_pending++] = f;
    leave_links(n, f);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Slot l's pending entries (those of inactive flows: an active flow's
 * class is set) leave in finishing order (order[g], in bneck), each hole
 * filled by the entry then last: pending_pos follows the pending entries
 * the fills move (NO_POS outside a link's flush). The order is sorted by
 * marks read back when the entries' orders span less than FLUSH_DENSE m
 * (a load and a test per order, where the sort makes log2 m or more
 * compares per entry, each a call), else by qsort: the same order, no
 * order being twice on a link. 0, or -1 when out of memory (nothing
 * changed). */
#define NO_POS UINT32_MAX
#define FLUSH_DENSE 4u
static int flush_link(flow_net *n, uint32_t l)
{
    link_list *ll = &n->slot[l].list;
    uint32_t m = ll->n - n->live[l], *ids = flow_list_ids(ll);
    if (!m)
        return 0;
    if (m == ll->n) { /* every entry leaves: the list ends empty in any order */
        ll->n = 0;
        return 0;
    }
    if (m > n->cap_flush_pairs) {
        if (grow_array((void **)&n->flush_pairs, m, sizeof *n->flush_pairs))
            return -1;
        n->cap_flush_pairs = m;
    }
    uint64_t *pair = n->flush_pairs;
    uint32_t lo = UINT32_MAX, hi = 0; /* the entries' finishing orders, each once */
    for (uint32_t i = 0, j = 0; j < m; i++)
        if (n->cls[ids[i]] == NO_CLASS) {
            uint32_t p = n->bneck[ids[i]];
            lo = p < lo ? p : lo;
            hi = p > hi ? p : hi;
            pair[j++] = (uint64_t)p << 32 | i;
        }
    if (hi - lo < FLUSH_DENSE * (uint64_t)m) {
        /* orders spanning little more than m: mark each, then read the
         * marks back in order (the sort's result: no order twice) */
        for (uint32_t j = 0; j < m; j++)
            n->pending_pos[pair[j] >> 32] = (uint32_t)pair[j];
        for (uint32_t p = lo, j = 0; j < m; p++)
            if (n->pending_pos[p] != NO_POS)
                pair[j++] = (uint64_t)p << 32 | n->pending_pos[p];
    } else {
        qsort(pair, m, sizeof *pair, cmp_u64);
        for (uint32_t j = 0; j < m; j++)
            n->pending_pos[pair[j] >> 32] = (uint32_t)pair[j];
    }
    for (uint32_t j = 0; j < m; j++) {
        uint32_t i = n->pending_pos[pair[j] >> 32], last = ids[ll->n - 1];
        list_remove_at(ll, i);
        if (n->cls[last] == NO_CLASS) /* a pending entry moved into the hole */
            n->pending_pos[n->bneck[last]] = i;
    }
    for (uint32_t j = 0; j < m; j++) /* unmarked again, for the next link */
        n->pending_pos[pair[j] >> 32] = NO_POS;
    return 0;
}

void flow_store_flush(flow_net *n)
{
    if (n->place_next != NO_FLOW) /* the waiting entries first: they were appended */
        flow_store_place(n, NO_FLOW);
    if (!n->n_pending)
        return;
    /* a finished flow's bneck is free until its id is reused (after a
     * flush): its finishing order; its links' slots, each once */
    n->epoch += 2;
    uint32_t nl = 0;
    for (uint32_t p = 0; p < n->n_pending; p++) {
        uint32_t f = n->pending[p];
        n->bneck[f] = p;
        n->pending_pos[p] = NO_POS;
        const uint32_t *links = n->pool + n->use_off[f];
        for (uint32_t k = 0, m = n->classes[n->pending_cls[p]].n_use; k < m; k++)
            if (n->slot[links[k]].mark != n->epoch) {
                n->slot[links[k]].mark = n->epoch;
                n->touched[nl++] = links[k];
            }
    }
    for (uint32_t i = 0; i < nl; i++)
        if (flush_link(n, n->touched[i])) /* no memory: one flow at a time, by search */
            for (uint32_t p = 0; p < n->n_pending; p++) {
                uint32_t f = n->pending[p];
                const uint32_t *links = n->pool + n->use_off[f];
                for (uint32_t k = 0, m = n->classes[n->pending_cls[p]].n_use; k < m; k++) {
                    link_list *ll = &n->slot[links[k]].list;
                    if (links[k] != n->touched[i])
                        continue;
                    uint32_t at = 0;
                    while (flow_list_ids(ll)[at] != f)
                        at++;
                    list_remove_at(ll, at);
                }
            }
    for (uint32_t p = 0; p < n->n_pending; p++)
        class_put(n, n->pending_cls[p]);
    n->n_pending = 0;
}

void flow_store_reset(flow_net *n)
{
    /* link lists: empty, their arrays kept; a list with weight codes keeps
     * them, and a uniform flow's entry there reads its class weight: the
     * same value flow_entry_weight reads from a list without */
    n->pool_n = n->pool_garbage = 0;
    n->n_pending = 0; /* flushed by flow_net_reset */
    for (uint32_t i = 0; i < n->hash_cap; i++)
        n->class_hash[i] = NO_CLASS;
    n->n_classes = n->n_live_classes = 0;
    n->free_class = NO_CLASS;
}

size_t flow_store_memory_bytes(const flow_net *n)
{
    size_t b = (size_t)n->cap_flows *
               (4 * sizeof(double) + 2 * sizeof(uint64_t) + 5 * sizeof(uint32_t));
    b += n->pool_cap * sizeof(uint32_t);
    b += n->offer ? (size_t)n->cap_flows * sizeof(double) : 0;
    b += (size_t)n->cap_classes * sizeof(flow_class) + (size_t)n->hash_cap * sizeof(uint32_t);
    b += (size_t)n->attach_cap * (sizeof(double) + 3 * sizeof(uint32_t)) +
         (size_t)n->hash_cap_attach * sizeof(uint32_t);
    b += (size_t)n->cap_capped * sizeof(uint32_t);
    b += (size_t)n->cap_pending * 3 * sizeof(uint32_t) +
         (size_t)n->cap_flush_pairs * sizeof(uint64_t);
    for (uint32_t l = 0; l < n->n_slots; l++)
        b += (size_t)n->slot[l].list.cap * ((n->slot[l].list.cap > LIST_INLINE ? sizeof(uint32_t) : 0) +
                                          (!n->slot[l].list.code ? 0
                                           : flow_list_is_wide(&n->slot[l].list) ? 2 : 1));
    return b;
}

void flow_store_free(flow_net *n)
{
    for (uint32_t l = 0; n->slot && l < n->cap_slots; l++) { /* a reset net's too */
        if (n->slot[l].list.cap > LIST_INLINE)
            free(n->slot[l].list.ids.heap);
        free(flow_list_codes(&n->slot[l].list));
    }
    void *arrays[] = {n->bytes, n->left, n->rate, n->since, n->tag, n->event, n->use_off,
                      n->cls, n->bneck, n->flow_mark, n->comp_flows, n->pool, n->classes,
                      n->class_hash, n->attach_w, n->attach_link, n->attach_slot, n->capped,
                      n->attach_code, n->attach_hash,
                      n->pending, n->pending_cls, n->pending_pos, n->flush_pairs, n->offer};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        free(arrays[i]);
}
