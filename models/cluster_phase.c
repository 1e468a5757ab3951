/* cluster_phase.c - how co-located jobs' iterations line up
 * (cluster_interf.h "enum cluster_phase"; docs/cluster.md "Iteration
 * phases"): the mode names (the one table the scenario reader and the
 * outputs use) and the closed forms of the uniform offset.
 */
#include "cluster_interf.h"

#include <string.h>

static const char *const phase_names[CLUSTER_PHASE_COUNT] = {
    [CLUSTER_PHASE_ALIGNED] = "aligned", [CLUSTER_PHASE_UNIFORM] = "uniform"};

const char *cluster_phase_name(int phase)
{
    return phase >= 0 && phase < CLUSTER_PHASE_COUNT ? phase_names[phase] : NULL;
}

int cluster_phase_parse(const char *name)
{
    for (int i = 0; i < CLUSTER_PHASE_COUNT; i++)
        if (!strcmp(phase_names[i], name))
            return i;
    return -1;
}

static double share(double x)
{
    return x > 0 ? (x < 1 ? x : 1) : 0; /* NaN: 0 */
}

double cluster_phase_overlap(double a, double b)
{
    return share(a) * share(b);
}

void cluster_phase_busy(const double *busy, uint32_t n, double *q)
{
    double idle = 1; /* prod_{j < k} (1 - busy[j]) into q[k] */
    for (uint32_t k = 0; k < n; k++) {
        q[k] = idle;
        idle *= 1 - share(busy[k]);
    }
    idle = 1; /* times prod_{j > k} */
    for (uint32_t k = n; k-- > 0;) {
        q[k] = 1 - q[k] * idle;
        idle *= 1 - share(busy[k]);
    }
}

double cluster_phase_comm_s(double alone_s, double aligned_s, double q)
{
    return alone_s + share(q) * (aligned_s - alone_s);
}
