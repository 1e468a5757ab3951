/* hubs_keys_size.h - keys="interfered-size-load" (hubs_keys_size.c;
 * docs/hubs.md "Interference by job size and load"): the placement's
 * expected slowdown of each job at each hub, by its size and the hub's
 * load, from the interference of the run placed with the isolated keys. */
#ifndef DCSIM_APP_HUBS_KEYS_SIZE_H
#define DCSIM_APP_HUBS_KEYS_SIZE_H

#include "hubscmd.h"

/* hub h's tables (fills tables[0 .. n_hubs)) from cal's simulations, and
 * per_job[h x n_jobs + i], job i's slowdown at hub h (the cell of its GPUs
 * there and the hub's load at its arrival in cal). 0 */
int hubs_keys_size_load(const hubs_config *c, const hubs_run *cal, hubs_key_table *tables,
                        double *per_job, sim_error *err);
/* the cells of the size classes up to the largest measured, by class then
 * load: gpus_from, gpus_to, load_from, load_to, jobs, isolated_gpu_h, measured,
 * scale */
cJSON *hubs_key_table_json(const hubs_key_table *t);

/* the text's keys lines: each hub's measured size classes, the slowdown at
 * each load quarter (and the measured jobs) */
void hubs_key_table_print(const hubs_run *run);

#endif
