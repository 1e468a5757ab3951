/* sweep_hubs.c - `dcsim sweep` over a hubs scenario (a <hubs> section;
 * docs/hubs.md "Comparing and sweeping"): the points the --grid lists or
 * the --points file make (sweep_grid.c) are run one after another through
 * compare_hubs.c, each as `dcsim hubs --set ...` runs it, and the table
 * (the run's totals, the saving against nearest and the jobs at each hub
 * per point, with the differences against point 0) is printed and written
 * as one HDF5 dataset, /hubs_sweep. One run per point, one process, written
 * once at the end, as a job stream's sweep (sweep_cluster.c): the training
 * sweep's replicas, resume and MPI ranks (sweep_run.c, sweep_store.c) are
 * for campaigns.
 */
#include <stdlib.h>

#include "compare_hubs.h"
#include "sweep_internal.h"

int sweep_hubs(sweep *sw)
{
    if (sw->size > 1)
        return sweep_usage_error(sw, "a hubs scenario is swept in one process (run it without "
                                     "mpirun)%s", "");
    if (sw->replicas > 1)
        return sweep_usage_error(sw, "--replicas: a hubs scenario runs once per point (its "
                                     "demand's draws follow the scenario's seed: --grid "
                                     "@seed=1,2,3 for others)%s", "");
    /* the scenario and the points file; compare_hubs adds the XIncludes and traces */
    const char *inputs[2] = {sw->scenario, sw->points_file};
    char *labels = NULL;
    compare_case *cases = sweep_tier_cases(sw, &labels);
    int rc = cases ? 0 : EXIT_FAILURE;
    if (!rc) {
        compare_cluster_out o = {"sweep", sw->json, sw->csv, sw->output, "hubs_sweep",
                                 inputs, 2};
        rc = compare_hubs(cases, sw->n_points, &o);
    }
    free(labels);
    free(cases);
    return rc;
}
