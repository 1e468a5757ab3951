/* clustermodel.h - the traffic of a <cluster-jobs><traffic> class given by
 * a catalog model, derived per job size from the step tier (docs/cluster.md
 * "Traffic from the step tier"): per size n the layout of
 * cluster_model_parallel (dp = n / (tp cp pp)), one workload_build for the
 * bytes of each collective kind (workload_kind_bytes_split, as `dcsim step
 * --json` prints them in comm_bytes, the experts' DP part apart for the
 * expert-data-parallel groups) and one step_simulate on the cluster's
 * fabric (the job on GPUs 0 .. n-1, as `dcsim step` places it) for the
 * compute c = iteration - exposed TP, PP, DP, EP (and CP with cp > 1), the
 * part the flow net does not simulate. */
#ifndef DCSIM_APP_CLUSTERMODEL_H
#define DCSIM_APP_CLUSTERMODEL_H

#include <stdint.h>

#include "cluster_interf.h"
#include "scenario.h"

typedef struct cluster_model_size {
    uint32_t gpus;
    unsigned cls;                      /* its class, an index of cluster_traffic.t */
    uint32_t dp;
    double kind_bytes[COMM_KIND_COUNT]; /* per GPU per iteration (step_profile.comm_bytes) */
    double expert_bytes[COMM_KIND_COUNT]; /* of which in the expert-data-parallel groups */
    double step_iteration_s;           /* step_simulate's iteration */
    double compute_s;                  /* c: the iteration less the exposed TP, PP, DP, EP */
    double exposed_s;                  /* E: that exposed communication */
    double alone_comm_s;               /* the pacer's m_alone on GPUs 0 .. n-1 */
    double alone_iteration_s;          /* the pacer's isolated iteration: c + min(m_alone, E) */
} cluster_model_size;

/* Every job size of the scenario (its <sizes> rows, trace jobs and training
 * runs of train_gpus GPUs, 0: none) that takes a class given by a model:
 * its derived profile into tt's sized rows and its figures into
 * out[0 .. *n_out) (at most CLUSTER_MAX_SIZED), on the built fabric f. 0, or
 * an error with a one-line reason (no file). */
int cluster_model_derive(const scn_scenario *s, fabric *f, uint32_t train_gpus,
                         cluster_traffic_table *tt, cluster_model_size *out, unsigned *n_out,
                         sim_error *err);

/* The same for the job sizes sizes[0 .. n) (a hub's jobs as they would run
 * there: hubs_fabric.c), each derived once; sizes of classes not given by a
 * model are skipped. */
int cluster_model_derive_sizes(const scn_scenario *s, fabric *f, const uint32_t *sizes,
                               size_t n, cluster_traffic_table *tt, cluster_model_size *out,
                               unsigned *n_out, sim_error *err);

/* The sizes' figures: text lines under "interference", and the
 * "from_step_tier" array of `dcsim cluster --json`'s interference. */
void cluster_model_print(const scn_scenario *s, const cluster_model_size *z, unsigned n);
/* A class given by a model: its layout options other than <parallelism>'s
 * defaults (", vpp 2, cp 2, sequence-parallel, recompute full, zero 1"; ""
 * with none), for the class's line. */
void cluster_model_layout_text(const scn_scenario *s, unsigned cls, char *buf, size_t size);
struct cJSON;
void cluster_model_json(struct cJSON *o, const cluster_model_size *z, unsigned n);

#endif
