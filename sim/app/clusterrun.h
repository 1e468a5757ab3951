/* clusterrun.h - one run of a job-stream scenario (<cluster-jobs>,
 * docs/cluster.md): the interference pacer on the scenario's fabric when it
 * has one, the simulation (models/cluster.h), its power, energy, cost and CO2
 * at the site (clusterenergy.h), the binned series and the CDF points.
 * `dcsim cluster` and `dcsim compare` over cluster scenarios both call
 * cluster_run_execute, so their figures are the same numbers. */
#ifndef DCSIM_APP_CLUSTERRUN_H
#define DCSIM_APP_CLUSTERRUN_H

#include <stdint.h>

#include "cluster.h"
#include "cluster_interf.h"
#include "clusterenergy.h"
#include "clustermodel.h"
#include "scenario.h"

/* CDF points of wait and slowdown: the quantiles at 5 %, 10 %, ... 100 % */
#define CLUSTER_CDF_POINTS 20u

/* what the run gives beyond cluster_result: power and energy at the site,
 * the binned series and the CDF points */
typedef struct cluster_extra {
    cluster_energy ce;
    double bin_s;                  /* cluster_bin_width_s of the run's length */
    uint32_t n_bins;
    double *busy, *queue;          /* n_bins: mean busy GPUs, mean queued jobs; owned */
    double wait_s[CLUSTER_CDF_POINTS], slowdown[CLUSTER_CDF_POINTS];
} cluster_extra;

/* interference: has 0 without a fabric; st holds the pacer's counters after
 * the run (the fabric and the pacer themselves are freed by then) */
typedef struct cluster_net {
    int has;
    fabric f;
    cluster_interf *x;
    cluster_interf_stats st;
    /* the profiles the pacer ran with: the scenario's classes and, for a
     * class given by a model, each job size's derived one (clustermodel.h) */
    cluster_traffic_table tt;
    unsigned n_sizes;
    cluster_model_size sizes[CLUSTER_MAX_SIZED];
} cluster_net;

/* <training-runs>: the scenario's <job> as `dcsim run` times it alone
 * (time to train, failures and checkpoints included) on its GPUs */
typedef struct cluster_training {
    unsigned runs;                 /* 0: none in the stream */
    uint32_t gpus;
    double time_to_train_s;
    uint64_t digest;               /* the campaign's event digest */
    uint32_t job[SCN_MAX_TRAINING_RUNS]; /* each run's index in the result's jobs */
} cluster_training;

typedef struct cluster_run {
    cluster_result r;
    cluster_extra x;
    cluster_net net;
    cluster_training training;
} cluster_run;

/* Run scenario s (which has <cluster-jobs>; its pacer is set here when it
 * has a fabric) into *out, which the caller frees with cluster_run_free
 * whatever the status. Returns 0 or an error status with err filled. Not
 * thread-safe across runs sharing s. */
int cluster_run_execute(scn_scenario *s, cluster_run *out, sim_error *err);
void cluster_run_free(cluster_run *run); /* NULL-safe; leaves it empty */

#endif
