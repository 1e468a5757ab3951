/* cluster_place.c - the placement policies (cluster.h): one line per policy
 * in the table at the end. Each picks n free GPUs through cluster_take_node.
 * first-fit: O(nodes) per job. topology: O(nodes + leaves log leaves).
 */
#include <stdlib.h>
#include <string.h>

#include "cluster_internal.h"

/* the lowest-numbered free GPUs, skipping full leaves and nodes */
static uint32_t place_first_fit(cluster_sim *s, uint32_t n)
{
    const cluster_config *c = s->c;
    uint32_t k = 0, per_leaf = c->leaf_gpus / c->node_gpus;
    for (uint32_t leaf = 0; leaf < s->n_leaves && k < n; leaf++) {
        if (!s->leaf_free[leaf])
            continue;
        for (uint32_t node = leaf * per_leaf; node < (leaf + 1) * per_leaf && k < n; node++)
            cluster_take_node(s, node, n - k, &k);
    }
    return k;
}

/* the node of [a, b) with the fewest free GPUs that holds need of them
 * (ties: the lowest); CLUSTER_NONE when none does */
static uint32_t best_node(const cluster_sim *s, uint32_t a, uint32_t b, uint32_t need)
{
    uint32_t best = CLUSTER_NONE;
    for (uint32_t node = a; node < b; node++) {
        uint32_t f = s->node_free[node];
        if (f >= need && (best == CLUSTER_NONE || f < s->node_free[best]))
            best = node;
    }
    return best;
}

/* the unit of count units with the fewest free GPUs that holds need */
static uint32_t best_unit(const uint32_t *free_of, uint32_t count, uint32_t need)
{
    uint32_t best = CLUSTER_NONE;
    for (uint32_t u = 0; u < count; u++)
        if (free_of[u] >= need && (best == CLUSTER_NONE || free_of[u] < free_of[best]))
            best = u;
    return best;
}

/* n GPUs from the leaves [l0, l1): whole free nodes first, from the leaves
 * with the most free GPUs; then a remainder under a node's size best-fit on
 * one node; then whatever is free, leaves in the same order */
static uint32_t take_in_leaves(cluster_sim *s, uint32_t l0, uint32_t l1, uint32_t n)
{
    const cluster_config *c = s->c;
    uint32_t per_leaf = c->leaf_gpus / c->node_gpus, nl = l1 - l0, k = 0;
    /* most free first, ties by index: (-free, leaf) ascending */
    for (uint32_t i = 0; i < nl; i++)
        s->ends[i] = (cluster_end){-(double)s->leaf_free[l0 + i], 0, l0 + i};
    qsort(s->ends, nl, sizeof *s->ends, cluster_cmp_end);
    for (uint32_t i = 0; i < nl; i++)
        s->order[i] = s->ends[i].id;
    for (uint32_t i = 0; i < nl && n - k >= c->node_gpus; i++) {
        uint32_t leaf = s->order[i];
        for (uint32_t node = leaf * per_leaf;
             node < (leaf + 1) * per_leaf && n - k >= c->node_gpus; node++)
            if (s->node_free[node] == c->node_gpus)
                cluster_take_node(s, node, c->node_gpus, &k);
    }
    if (k < n && n - k < c->node_gpus) {
        uint32_t node = best_node(s, l0 * per_leaf, l1 * per_leaf, n - k);
        if (node != CLUSTER_NONE)
            cluster_take_node(s, node, n - k, &k);
    }
    for (uint32_t i = 0; i < nl && k < n; i++) {
        uint32_t leaf = s->order[i];
        for (uint32_t node = leaf * per_leaf; node < (leaf + 1) * per_leaf && k < n; node++)
            cluster_take_node(s, node, n - k, &k);
    }
    return k;
}

/* packing: one node if the job fits one, else the fullest leaf that holds
 * it, else the fullest SU, else the whole cluster */
static uint32_t place_topology(cluster_sim *s, uint32_t n)
{
    const cluster_config *c = s->c;
    uint32_t k = 0;
    if (n <= c->node_gpus) {
        uint32_t node = best_node(s, 0, s->n_nodes, n);
        if (node != CLUSTER_NONE)
            return cluster_take_node(s, node, n, &k);
    }
    uint32_t leaf = best_unit(s->leaf_free, s->n_leaves, n);
    if (leaf != CLUSTER_NONE)
        return take_in_leaves(s, leaf, leaf + 1, n);
    uint32_t leaves_per_su = c->su_gpus / c->leaf_gpus;
    uint32_t su = best_unit(s->su_free, s->n_sus, n);
    if (su != CLUSTER_NONE) {
        uint32_t l1 = (su + 1) * leaves_per_su;
        return take_in_leaves(s, su * leaves_per_su, l1 < s->n_leaves ? l1 : s->n_leaves, n);
    }
    return take_in_leaves(s, 0, s->n_leaves, n);
}

static const cluster_placer placers[] = {
    {"first-fit", "the lowest-numbered free GPUs", place_first_fit},
    {"topology", "pack: one node, else the fullest leaf, else SU that holds the job; whole "
                 "nodes first", place_topology},
};

const cluster_placer *cluster_placer_find(const char *name)
{
    for (size_t i = 0; i < sizeof placers / sizeof placers[0]; i++)
        if (name && strcmp(placers[i].name, name) == 0)
            return &placers[i];
    return NULL;
}

const char *cluster_placer_name(const cluster_placer *p) { return p ? p->name : "?"; }

const char *cluster_placer_names(void) { return "first-fit, topology"; }
