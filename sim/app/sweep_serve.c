/* sweep_serve.c - `dcsim sweep` over a serving fleet (a scenario with
 * <serving> and no <job>; docs/serving.md "Comparing and sweeping"): the
 * points the --grid lists or the --points file make (sweep_grid.c) are run
 * through compare_serve.c, each as `dcsim serve --set ...` runs it, and the
 * table (dcsim serve's figures per point and their differences against
 * point 0) is printed and written as one HDF5 dataset, /serve_sweep. One
 * run per point (the simulations in parallel on the OpenMP threads), one
 * process, written once at the end: the training sweep's replicas, resume
 * and MPI ranks (sweep_run.c, sweep_store.c) are for campaigns.
 */
#include <stdlib.h>

#include "compare_serve.h"
#include "sweep_internal.h"

int sweep_serve(sweep *sw)
{
    if (sw->size > 1)
        return sweep_usage_error(sw, "a serving fleet is swept in one process, its points on "
                                     "the OpenMP threads (run it without mpirun)%s", "");
    if (sw->replicas > 1)
        return sweep_usage_error(sw, "--replicas: a serving fleet runs once per point (its "
                                     "draws follow the scenario's seed: --grid @seed=1,2,3 for "
                                     "others)%s", "");
    /* the scenario and the points file; compare_serve adds the XIncludes and traces */
    const char *inputs[2] = {sw->scenario, sw->points_file};
    char *labels = NULL;
    compare_case *cases = sweep_tier_cases(sw, &labels);
    int rc = cases ? 0 : EXIT_FAILURE;
    if (!rc) {
        compare_cluster_out o = {"sweep", sw->json, sw->csv, sw->output, "serve_sweep",
                                 inputs, 2};
        rc = compare_serve(cases, sw->n_points, &o);
    }
    free(labels);
    free(cases);
    return rc;
}
