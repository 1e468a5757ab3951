/* hubs_fabric.h - a fabric at each hub (docs/hubs.md "A fabric at each
 * hub"): with a <cluster><fabric> in a hubs scenario, each hub's jobs are
 * timed with their neighbours' traffic on a fabric of the hub's own, the
 * scenario's sized to the hub's GPUs, as `dcsim cluster` times a job
 * stream on its fabric (cluster_interf.h). */
#ifndef DCSIM_APP_HUBS_FABRIC_H
#define DCSIM_APP_HUBS_FABRIC_H

#include "hubscmd.h"

typedef struct hubs_fabric hubs_fabric;

/* The fabrics of s's hubs, built when a hub's first simulation needs one
 * (NULL when s has no interference; *fail set when out of memory). */
hubs_fabric *hubs_fabric_create(const scn_scenario *s, int *fail);
/* run's simulations take their pacers from hf (run->cfg.pacers), and its
 * interference counters (run->interf) are filled as they end */
void hubs_fabric_attach(hubs_fabric *hf, hubs_run *run);
void hubs_fabric_destroy(hubs_fabric *hf); /* NULL-safe */

#endif
