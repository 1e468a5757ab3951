/* step_fault.h - one iteration under a failure state (fabric_fault.h): the
 * step tier on the degraded fabric with the state's GPU speeds, and what
 * changed on the links (issue 20; docs/failures.md).
 *
 * The call a campaign makes for a state: ff_state_digest(state) keys its
 * cache, step_simulate_failed gives the iteration. A state without parts
 * runs step_simulate on the fabric as built: today's result, bit for bit.
 */
#ifndef DCSIM_MODELS_STEP_FAULT_H
#define DCSIM_MODELS_STEP_FAULT_H

#include <stdint.h>

#include "fabric_fault.h"
#include "step.h"

/* One iteration of w on base under state st: links slowed or down
 * (fabric_degrade: routes avoid the down ones), GPU k at o->gpu_speed[k]
 * (1 when not given) x the state's speed of it. Returns as step_simulate;
 * refuses (SIM_ERR_INPUT, one line naming the parts) ids the fabric does
 * not have, a GPU gone or cut off the fabric (ff_effect_check_gpus), the
 * packet network (o->packet: not built for failure states yet) and pairs
 * of GPUs the remaining links cannot connect. */
int step_simulate_failed(const workload *w, const compute_device *dev, fabric *base,
                         const ff_state *st, const step_options *o, step_profile *out,
                         sim_error *err);

/* A link whose bytes per iteration changed between two profiles of one
 * fabric (before: as built; after: under a state). */
typedef struct step_link_change {
    uint32_t link, src, dst;  /* the directed link and its end nodes */
    int tier;                 /* step_link_tier */
    double speed;             /* the state's speed of it: 1, slower, 0 down */
    double bytes_before, bytes_after;
    double util_before, util_after; /* bytes / (capacity x iteration), each its own */
} step_link_change;

/* The at most max links whose bytes changed most (|after - before|, ties
 * by link id), largest first, into out; returns how many. link_speed: the
 * state's per link (ff_effect), NULL = all 1. The profiles must come from
 * fabrics with g's links. */
unsigned step_link_changes(const topo_graph *g, const double *link_speed,
                           const step_profile *before, const step_profile *after,
                           step_link_change *out, unsigned max);

#endif
