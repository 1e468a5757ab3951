/* routing_internal.h - the router's record, shared by routing.c (routes)
 * and routing_build.c (the adjacency, group and up-link tables it builds
 * once). Not part of the interface: use routing.h. */
#ifndef DCSIM_TOPO_ROUTING_INTERNAL_H
#define DCSIM_TOPO_ROUTING_INTERNAL_H

#include <stdint.h>

#include "routing.h"

/* Hop counts fit a byte: a route is at most MAX_ROUTE_HOPS links, so a
 * switch 255 hops or more from the destination is as unreachable as one the
 * search never meets (a table of 7,220 switches of a k = 76 fat-tree: 7 kB) */
typedef uint8_t hop_count;
#define HOP_INF UINT8_MAX

/* x % k == 0 without a division (Granlund & Montgomery 1994, 9): with
 * k = d 2^s, d odd, x is a multiple of k when its low s bits are zero and
 * (x >> s) * d^-1 mod 2^64 <= (2^64 - 1) / d. */
struct divisor {
    uint64_t inverse, limit, low_mask;
    unsigned shift;
};

static inline struct divisor routing_divisor_of(uint64_t k)
{
    unsigned s = (unsigned)__builtin_ctzll(k);
    uint64_t d = k >> s, inv = d; /* Newton: each step doubles the correct low bits */
    for (int i = 0; i < 5; i++)
        inv *= 2 - d * inv;
    return (struct divisor){inv, UINT64_MAX / d, ((uint64_t)1 << s) - 1, s};
}

static inline int is_multiple(uint64_t x, const struct divisor *k)
{
    return !(x & k->low_mask) && (x >> k->shift) * k->inverse <= k->limit;
}

struct sw_hop {
    uint32_t link;
    uint32_t wi : 31;        /* the far switch's index */
    uint32_t is_up : 1;      /* it is on a higher tier */
};

struct topo_router {
    const topo_graph *g;
    topo_route_config cfg;
    uint32_t n_sw;
    uint32_t *sw_index;      /* node -> fabric switch index, UINT32_MAX otherwise */
    hop_count **tables;      /* per destination switch index: hops from every switch,
                              * the destination's own entry stored as HOP_INF (read as
                              * 0): destinations alike but for it share one table */
    size_t n_tables;         /* destinations with a table */
    hop_count *bfs;          /* table_to's scratch: n_sw entries */
    /* Dragonfly family (not g->updown): a table holds only the switches of
     * its destination's group, by position in it (sw_pos); switches
     * without a group are one more group. NULL in a folded Clos, whose
     * tables are by switch index. */
    uint32_t *sw_group, *sw_pos, *group_size;
    struct kept_table {      /* the tables kept, each once (routing_intern_table) */
        hop_count *hops;
        uint64_t hash;
        uint32_t len;
    } *distinct;
    uint32_t n_distinct, cap_distinct;
    uint32_t *intern;        /* open addressing: distinct index + 1, 0 empty; intern_cap */
    uint32_t intern_cap;     /* a power of two, 0 before the first table */
    uint32_t *queue;         /* BFS scratch, n_sw entries */
    uint32_t *group_offset;  /* switches by group (CSR), for Valiant */
    uint32_t *group_switch;
    uint32_t n_groups;
    uint32_t *pair_offset;   /* links from group a to group b: CSR over a * n_groups + b */
    uint32_t *pair_link;
    uint32_t *cand;          /* candidate links at one hop, max out-degree entries */
    uint32_t max_degree;
    uint32_t *up_offset;     /* folded Clos: each node's links to higher tiers (CSR) */
    uint32_t *up_links;
    uint32_t *adj_offset;    /* each switch's links to switches (CSR by switch index): */
    struct sw_hop *adj;      /* next_links reads one array, not four; layered: the links */
    uint32_t *adj_up;        /* down first, then from adj_up[vi] the links up, each part */
    int is_layered;          /* in out_links order; else all in out_links order and adj_up */
                             /* the end (see build_switch_adjacency) */
    struct divisor *div;     /* choose's tie-break: k = 0 .. max_degree + 63 */
    uint32_t *tied;          /* choose: the candidates tied for least pressure */
    double *pressure;        /* choose: each candidate's */
    /* Per node, what topo_route asks of each source and destination host
     * (or shared NIC) on every connection, found once from the adjacency:
     * its first link to a scale-up crossbar and to a shared NIC
     * (UINT32_MAX if none), and its n_up links to fabric switches (the
     * uplinks, one per plane, in out_links order) at ep_up + up_at.
     * Switches have none. The adjacency never changes in a router's life
     * (routing.h: the graph is finished), so neither do these. */
    struct endpoint {
        uint32_t scaleup, nic, up_at, n_up;
    } *ep;
    uint32_t *ep_up;
    uint32_t *link_slot;     /* link -> index in the route being built, or UINT32_MAX */
    double *node_weight;     /* spray frontier weights, per node */
    uint32_t *front, *next_front;
    /* next_links' answers kept, per (switch index, destination switch index):
     * memo[v * n_sw + t] is 0 (not asked yet) or 1 + the index of a distinct
     * list, whose [count, links...] start at memo_pool[memo_list_at[index]].
     * The tables never change in a router's life, so neither do the
     * answers. Only for n_sw <= ROUTING_MEMO_MAX_SWITCHES (calloc'd on first
     * use, 2 bytes a pair, pages touched as pairs are asked), for at most
     * ROUTING_MEMO_MAX_LISTS distinct lists of ROUTING_MEMO_MAX_POOL entries
     * in all; past those an answer not kept is computed each time, as
     * before. A leaf's up-links are one list for every destination, so the
     * lists are few and stay in cache. */
    uint16_t *memo;
    uint32_t *memo_pool, *memo_list_at;
    size_t memo_n, memo_cap;
    uint32_t *memo_lists;    /* open addressing by content: 1 + list index, 0 empty */
    uint32_t memo_lists_cap, memo_lists_n, memo_list_at_cap;
    int memo_off;            /* no memo: too many switches, or out of memory once */
    int out_of_memory;       /* a hop table could not be allocated */
    int full_tables;         /* a folded Clos with links down (graph.h link_is_down):
                              * tables by breadth-first search over every remaining
                              * switch link, each switch's true distance, and routes
                              * step only along them (no blind climb that a failure
                              * could leave at a dead end); 0 on every healthy fabric */
};

#define ROUTING_MEMO_MAX_SWITCHES 2048u      /* memo: 8 MB of address space at most */
#define ROUTING_MEMO_MAX_LISTS 65535u        /* list indices fit the memo's 2 bytes */
#define ROUTING_MEMO_MAX_POOL (16u << 20)     /* 64 MB of distinct candidate lists */

/* ---- routing_memo.c ---- */
/* The index of the list cand[0 .. n) kept once in the memo: found by its
 * content, else appended. UINT32_MAX when the memo is full or out of
 * memory (the caller then computes the answer each time). */
uint32_t routing_memo_keep(topo_router *r, const uint32_t *cand, uint32_t n);

/* ---- routing_build.c ---- */
/* The hop table in r->bfs[0 .. n) as a kept one: an equal table kept
 * before, else a copy of it. NULL when out of memory. */
hop_count *routing_intern_table(topo_router *r, uint32_t n);
/* sw_group, sw_pos and group_size of a Dragonfly family's router. */
int routing_build_group_positions(topo_router *r);
/* 1 + the highest group of a fabric switch; 0 when none has one */
uint32_t routing_switch_groups(const topo_graph *g);
/* Each fills its tables in r (sw_index set); 0, or -1 when out of memory. */
int routing_build_groups(topo_router *r);
int routing_build_up_links(topo_router *r);
int routing_build_switch_adjacency(topo_router *r);
int routing_build_group_pairs(topo_router *r);
int routing_build_endpoints(topo_router *r);

#endif
