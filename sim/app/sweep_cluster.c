/* sweep_cluster.c - `dcsim sweep` over a job stream (a scenario with
 * <cluster-jobs> and no <job>; docs/cluster.md "Sweeps over a job stream"):
 * the points the --grid lists or the --points file make (sweep_grid.c) are
 * run one after another through compare_cluster.c, each as `dcsim cluster
 * --set ...` runs it (clusterrun.h), and the table (the cluster figures per
 * point and their differences against point 0) is printed and written as
 * one HDF5 dataset, /cluster_sweep. One run per point, one process, written
 * once at the end: the training sweep's replicas, resume and MPI ranks
 * (sweep_run.c, sweep_store.c) are for campaigns.
 */
#include <stdio.h>
#include <stdlib.h>

#include "compare_cluster.h"
#include "sweep_internal.h"

/* the files the sweep reads (scenario, its XIncludes, its CSV trace, the
 * points file): never the output. NULL when out of memory. */
static const char **inputs_of(const sweep *sw, const scn_scenario *s0, size_t *n)
{
    const char **in = scn_input_paths(s0, sw->scenario, sw->points_file, n);
    const char **more = in ? realloc(in, (*n + 1) * sizeof *in) : NULL;
    if (!more) {
        free(in);
        return NULL;
    }
    more[(*n)++] = s0->cluster_trace_path[0] ? s0->cluster_trace_path : NULL;
    return more;
}

int sweep_cluster(sweep *sw)
{
    if (sw->size > 1)
        return sweep_usage_error(sw, "a job stream is swept in one process (run it without "
                                     "mpirun)%s", "");
    if (sw->replicas > 1)
        return sweep_usage_error(sw, "--replicas: a job stream runs once per point (its draws "
                                     "follow the scenario's seed: --grid @seed=1,2,3 for "
                                     "others)%s", "");
    /* point 0 names the inputs; the target is checked before the runs */
    scn_scenario s0;
    sim_error err;
    sim_error_clear(&err);
    if (scn_load_flags(sw->scenario, sw->pts[0].sets, sw->pts[0].n_sets, SCN_LOAD_CLUSTER, &s0,
                       &err)) {
        sweep_print_point_error(sw, 0, &err);
        return CLI_EXIT_INPUT;
    }
    size_t n_in = 0;
    const char **inputs = inputs_of(sw, &s0, &n_in);
    char *labels = NULL;
    compare_case *cases = NULL;
    int rc = 0;
    if (!inputs) {
        fprintf(stderr, "dcsim sweep: error: out of memory\n");
        rc = EXIT_FAILURE;
    } else {
        outpath probe;
        if (outpath_init(&probe, sw->output, "the sweep file", inputs, n_in, &err))
            rc = cli_print_error(&err);
    }
    if (!rc && !(cases = sweep_tier_cases(sw, &labels)))
        rc = EXIT_FAILURE;
    if (!rc) {
        compare_cluster_out o = {"sweep", sw->json, sw->csv, sw->output, "cluster_sweep",
                                 inputs, n_in};
        rc = compare_cluster(cases, sw->n_points, &o);
    }
    free(labels);
    free(cases);
    free(inputs);
    scn_scenario_free(&s0);
    return rc;
}
