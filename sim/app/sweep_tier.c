/* sweep_tier.c - what the sweeps over job streams, serving fleets and
 * hubs share (sweep_internal.h): the points turned into compare's cases,
 * which compare_cluster.c, compare_serve.c and compare_hubs.c run. */
#include <stdio.h>
#include <stdlib.h>

#include "compare_cluster.h"
#include "sweep_internal.h"

#define LABEL_SIZE 256

compare_case *sweep_tier_cases(const sweep *sw, char **labels)
{
    compare_case *cases = calloc(sw->n_points, sizeof *cases);
    *labels = malloc(sw->n_points * LABEL_SIZE);
    if (!cases || !*labels) {
        fprintf(stderr, "dcsim sweep: error: out of memory\n");
        free(cases);
        free(*labels);
        *labels = NULL;
        return NULL;
    }
    for (size_t i = 0; i < sw->n_points; i++) {
        char *label = *labels + i * LABEL_SIZE;
        sweep_point_label(sw, i, label, LABEL_SIZE);
        if (!label[0])
            snprintf(label, LABEL_SIZE, "point %zu", i);
        cases[i] = (compare_case){label, sw->scenario, sw->pts[i].sets, sw->pts[i].n_sets,
                                  NULL, 0};
    }
    return cases;
}
