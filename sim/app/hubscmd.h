/* hubscmd.h - `dcsim hubs` (hubscmd.c): work placed across the hubs
 * (docs/hubs.md); hubsout.c writes its --json and -o. argv excludes the
 * command word; returns the exit status. */
#ifndef DCSIM_APP_HUBSCMD_H
#define DCSIM_APP_HUBSCMD_H

#include <cjson/cJSON.h>
#include <hdf5.h>

#include "cluster.h"
#include "cluster_interf.h"
#include "hubs.h"
#include "outpath.h"
#include "scenario.h"

int cmd_hubs(int argc, char **argv);

extern const char usage_hubs[];

/* one bin of /hubs/series: a hub's figures over [k T, (k + 1) T) (the last
 * bin to the horizon); T = hubs_series_bin_s */
typedef struct hubs_bin {
    double busy_gpu_s, it_energy_j, facility_energy_j, energy_cost, co2_kg, water_l;
    double tb_moved, data_cost; /* datasets at their transfer's start, results at the job's end */
    double queue_job_s;         /* the integral of the waiting jobs: / bin length = the mean */
    uint32_t jobs_started;
} hubs_bin;

/* keys="interfered-size-load": a hub's slowdown by size class (floor(log2
 * GPUs)) and load quarter (hubs_keys_size.c) */
#define HUBS_KS_SIZES 32u
#define HUBS_KS_LOADS 4u
typedef struct hubs_key_table {
    uint32_t jobs[HUBS_KS_SIZES][HUBS_KS_LOADS];   /* the measured run's jobs in the cell */
    double work_gpu_s[HUBS_KS_SIZES][HUBS_KS_LOADS]; /* their GPU-s without interference */
    double measured[HUBS_KS_SIZES][HUBS_KS_LOADS]; /* their slowdown (1 without jobs) */
    double scale[HUBS_KS_SIZES][HUBS_KS_LOADS];    /* closed upwards: what the keys read */
} hubs_key_table;

#define HUBS_WATER_LEVELS 9u /* the loads of a hub's water table (hubs_hub_water) */

/* one policy's run: placement, the hubs' simulations, their energy */
typedef struct hubs_run {
    hubs_config cfg;
    hubs_result r;
    cluster_result cr[HUBS_MAX];
    double pue[HUBS_MAX];     /* each hub's facility PUE over the horizon */
    int co2_hourly[HUBS_MAX]; /* CO2 charged hour by hour at the hub's carbon profile */
    double water_year_l[HUBS_MAX]; /* measured water of the hub's fullest year (8,760 h) of
                                      the run; with -o or a water limit, else 0 */
    hubs_bin *series;         /* n_bins per hub, hub-major (-o only; else NULL); owned */
    double *water_table[HUBS_MAX]; /* the water-limited hubs' tables (hubs_hub_water); owned */
    double water_levels[HUBS_MAX][HUBS_WATER_LEVELS];
    uint32_t n_bins;
    int interf;               /* the hubs' jobs were timed on fabrics of their own
                                 (hubs_fabric.h): interf_stats are each hub's pacer's */
    cluster_interf_stats interf_stats[HUBS_MAX];
    hubs_key_table *key_table; /* keys="interfered-size-load": n_hubs tables; owned, or NULL */
    double *interf_job;        /* and each job's slowdown at each hub (hub-major); owned */
} hubs_run;

/* The scenario's policy (run[0]) and the baseline, nearest (run[1]), on
 * the same demand; every hub of both accounted at its own site over the
 * later end of the two (idle GPUs included); with series, run[0]'s bins
 * (/hubs/series). What dcsim hubs prints; compare_hubs.c runs it per
 * variant. run[0 .. 1] are the caller's, zeroed (calloc), and own what is
 * filled whatever happens: free both with hubs_run_free. 0, or an error. */
int hubs_execute(const scn_scenario *s, int series, hubs_run run[2], sim_error *err);
void hubs_run_free(hubs_run *run); /* frees what run owns; run stays reusable */

/* a hub's account hour by hour (hour k: [k h, (k + 1) h) of the run) */
typedef struct hubs_hours {
    size_t n;
    double *it_j, *facility_j, *water_l;
} hubs_hours;

/* The hours of hub run cr at the site of one (a scenario whose site and
 * cluster_jobs.gpus are the hub's, as hubscmd.c's account builds it): the
 * same hourly IT energy and PUE as cluster_energy_at_site's account, and
 * each hour's water. 0, or an error (*hh then empty). */
int hubs_hub_hours(const scn_scenario *one, const cluster_result *cr, hubs_hours *hh,
                   sim_error *err);
void hubs_hours_free(hubs_hours *hh); /* NULL-safe */
/* The placement's water table of the hub of one (hubs.h "water limit"),
 * hour by hour over its first 8,760 h as the account charges it, at
 * HUBS_WATER_LEVELS loads from idle to every GPU busy in whole nodes:
 * table (8,760 x levels, the caller's) and levels (the busy GPUs, the
 * caller's) set as the hub's; its idle and full-load years; the most a busy
 * GPU-second adds in any hour on the chord from idle to full load
 * (water_l_per_gpu_s). 0, or an error. */
int hubs_hub_water(const scn_scenario *one, hubs_hub *hub, double *table, double *levels,
                   sim_error *err);
/* hour h's CO2 at the hub's hourly intensity (its flat factor without a profile) */
double hubs_hours_co2_kg(const hubs_hub *hub, const hubs_hours *hh, size_t h);
/* the bin length: 730 h (a month, 8,760 h / 12) for a horizon of 60 days or
 * more, else 24 h; and the number of bins over the horizon (at least 1) */
double hubs_series_bin_s(double horizon_s);
uint32_t hubs_series_bins(double horizon_s);
/* hub h's bins (hubs_series_bins(run->r.horizon_s) of them) from its hours,
 * its steps and its jobs */
void hubs_series_fill(const hubs_run *run, unsigned h, const hubs_hours *hh, hubs_bin *bins);

/* the run's and the baseline's figures as the dcsim/1 document (hubsout.c) */
cJSON *hubs_json(const scn_scenario *s, const hubs_run *run, const hubs_run *base);
/* the same document with "rows": the text's tables, a row per hub and a
 * total row of the run and of the baseline, then the saving, each row the
 * document's object with "table" (run, baseline, saving) and "policy"
 * first; for jsonout_csv (hubsout.c). NULL when out of memory */
cJSON *hubs_csv(const scn_scenario *s, const hubs_run *run, const hubs_run *base);
/* /hubs/hubs, /hubs/jobs and /hubs/series of the run, the baseline's totals
 * as /hubs' attributes (hubsout.c); 0 or an error */
int hubs_h5_write(outpath *op, const scn_scenario *s, const hubs_run *run, const hubs_run *base,
                  const char *command, sim_error *err);

/* a shared backbone's outputs (hubs_backbone_out.c; run->cfg.backbone set):
 * the text's backbone line, its links' lines, the run's "backbone" member */
void hubs_backbone_describe(const hubs_config *c);
void hubs_backbone_print(const hubs_run *run, const hubs_run *base);
cJSON *hubs_backbone_json(const hubs_run *run);
/* the figures dcsim compare tables of a backbone (the run's "backbone"
 * member's sharing_wait_s, busiest_utilisation, link_tb) */
double hubs_backbone_wait_s(const hubs_run *run);  /* datasets' and results' */
double hubs_backbone_busiest(const hubs_run *run); /* the busiest link's utilisation */
double hubs_backbone_link_tb(const hubs_run *run); /* TB over the links: a route of k
                                                      links counts its TB k times */
/* --csv: "TABLE link" rows (one per link) and a "TABLE backbone" row (the
 * member's scalars) of the document's backbone member bb */
void hubs_backbone_csv(cJSON *rows, const char *table, const char *policy, const cJSON *bb);
/* a --csv row: table, policy, then item's members (hubsout.c) */
cJSON *hubs_csv_row(const char *table, const char *policy, const cJSON *item);
/* -o: /hubs/links, /hubs/transfers and the backbone's attributes of /hubs (g) */
int hubs_backbone_h5(hid_t g, const hubs_run *run, const hubs_run *base);

#endif
