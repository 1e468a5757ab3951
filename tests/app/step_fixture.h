/* step_fixture.h - shared set-up of the step tier's tests (step_fixture.c). */
#ifndef DCSIM_TESTS_STEP_FIXTURE_H
#define DCSIM_TESTS_STEP_FIXTURE_H

#include "compute.h"
#include "fabric.h"
#include "scenario.h"
#include "step.h"
#include "workload.h"

extern scn_catalog *cat;   /* the built-in catalogs */
extern compute_device dev; /* H100-SXM, BF16 */

/* the catalog and device; 0, or 1 when they cannot be loaded */
int fixture_init(void);

/* a 7.1B-like GPT: 32 layers so that 2, 4 and 8 stages split evenly; a
 * small vocabulary so the first and last stages weigh about the same */
model_arch model(void);

/* rail-optimised NDR fat-tree of H100 nodes, adaptive routing, 1 QP */
fabric_config rail_ndr(unsigned gpus);

/* a 3:1 oversubscribed RoCE 400G leaf-spine of 64-port switches (six
 * H100 nodes a leaf), ECMP, 1 QP */
fabric_config roce_leafspine(void);

/* tp x pp x dp, vpp 1, cp 1, ep 1, micro-batch 1, ZeRO 1, BF16 */
parallel_config par(unsigned tp, unsigned pp, unsigned dp, unsigned gbs);

/* One step_simulate of m with p on fc (free_comm: links a million times
 * faster, no latency); 0 or non-zero with the reason on stderr. */
int run(const model_arch *m, parallel_config p, fabric_config fc, int free_comm,
        const step_options *o, step_profile *out);

/* Attribution: the parts add up to the iteration; kernel classes plus SM
 * contention to compute + optimizer; per collective exposed + hidden =
 * total, hidden >= 0, and the exposed ones sum to their part. */
void check_conservation(const step_profile *q);

#endif
