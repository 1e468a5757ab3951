/* flow_fold.h - exact symmetry folding of a set of flows on a flow net.
 *
 * Weighted max-min fairness (flow.h) is constant on the cells of any
 * equitable partition of the flow-link graph: a partition of the flows and
 * of the links such that every flow of a cell puts the same multiset of
 * (link cell, weight) on the links, every link of a cell sees the same
 * multiset of (flow cell, weight), and the links of a cell have one
 * capacity. Progressive filling raises the flows of a cell together,
 * saturates the links of a cell together and so freezes whole cells (by
 * induction over its rounds). Flows of a cell that also start together
 * with the same bytes therefore finish together, so one representative per
 * cell, on a quotient net with one link per link cell, gives every rate
 * exactly: the representative of flow cell F puts on link cell L the weight
 *
 *     W(F, L) = |F| x (sum of its own weights on the links of L) / |L|,
 *
 * which is the per-link load the whole cell puts on each link of L.
 *
 * The partition is the coarsest equitable one that refines the given flow
 * colours and the link capacities, found by colour refinement (the 1-WL
 * algorithm; Grohe et al., "Dimension reduction via colour refinement",
 * ESA 2014, use it the same way for linear programs). Weights are compared
 * bit for bit, so float noise between two routes makes them different cells
 * (folding less, never wrongly). Where nothing is symmetric every cell has
 * one member and the quotient is the net itself.
 *
 * What the caller must guarantee (not checked here): flows of one colour
 * start at the same instants with the same bytes, rate cap and latency, and
 * routes do not depend on the load (no adaptive routing or UGAL), and no
 * incast efficiency (it depends on the number of flows on a link).
 */
#ifndef DCSIM_MODELS_FLOW_FOLD_H
#define DCSIM_MODELS_FLOW_FOLD_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "routing.h"

typedef struct flow_fold {
    uint32_t n_flows, n_links;
    uint32_t n_flow_cells, n_link_cells;
    uint32_t *flow_cell;       /* per flow */
    uint32_t *link_cell;       /* per link */
    uint32_t *flow_cell_size;  /* per flow cell: its flows */
    uint32_t *flow_cell_rep;   /* per flow cell: its lowest flow id */
    uint32_t *link_cell_size;  /* per link cell */
    double *link_cell_capacity;
    unsigned rounds;           /* refinement rounds run */
    int split;                 /* 1: stopped early, two flows that had to share a cell
                                  (flow_fold_watch) did not; the cells are then unfinished */
    uint32_t *slot;            /* scratch of flow_fold_quotient, per link cell */
} flow_fold;

/* The coarsest equitable partition of flows 0..n_flows-1 (flow f's usages
 * usage[offset[f] .. offset[f + 1]), links < n_links, a link named twice
 * adds its weights) refining flow_colour[] and capacity[] (bytes/s, > 0).
 * Returns 0, or SIM_ERR_NOMEM / SIM_ERR_INTERNAL (a link out of range, a
 * weight not positive and finite) with the reason in err. */
int flow_fold_build(uint32_t n_flows, const uint64_t *flow_colour, const size_t *offset,
                    const topo_usage *usage, uint32_t n_links, const double *capacity,
                    flow_fold *out, sim_error *err);
void flow_fold_free(flow_fold *fd); /* NULL-safe, leaves it zeroed */

/* As flow_fold_build, for a caller that folds only if flows same[2i] and
 * same[2i + 1] (i < n_same) end in one cell: refinement only splits cells,
 * so it stops at the first round that separates a pair (out->split 1). */
int flow_fold_watch(uint32_t n_flows, const uint64_t *flow_colour, const size_t *offset,
                    const topo_usage *usage, uint32_t n_links, const double *capacity,
                    const uint32_t *same, size_t n_same, flow_fold *out, sim_error *err);

/* The quotient usages of flow f (any member of its cell; u[0..k) its own
 * usages): one entry per link cell, in first-use order, with W(F, L) as
 * above. out must hold k entries. Returns the number written. */
size_t flow_fold_quotient(flow_fold *fd, uint32_t f, const topo_usage *u, size_t k,
                          topo_usage *out);

#endif
