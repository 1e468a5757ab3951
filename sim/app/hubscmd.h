/* hubscmd.h - `dcsim hubs` (hubscmd.c): work placed across the hubs
 * (docs/hubs.md); hubsout.c writes its --json and -o. argv excludes the
 * command word; returns the exit status. */
#ifndef DCSIM_APP_HUBSCMD_H
#define DCSIM_APP_HUBSCMD_H

#include <cjson/cJSON.h>

#include "cluster.h"
#include "hubs.h"
#include "outpath.h"
#include "scenario.h"

int cmd_hubs(int argc, char **argv);

extern const char usage_hubs[];

/* one policy's run: placement, the hubs' simulations, their energy */
typedef struct hubs_run {
    hubs_config cfg;
    hubs_result r;
    cluster_result cr[HUBS_MAX];
    double pue[HUBS_MAX];     /* each hub's facility PUE over the horizon */
} hubs_run;

/* the run's and the baseline's figures as the dcsim/1 document (hubsout.c) */
cJSON *hubs_json(const scn_scenario *s, const hubs_run *run, const hubs_run *base);
/* /hubs/hubs and /hubs/jobs of the run (hubsout.c); 0 or an error */
int hubs_h5_write(outpath *op, const scn_scenario *s, const hubs_run *run, const char *command,
                  sim_error *err);

#endif
