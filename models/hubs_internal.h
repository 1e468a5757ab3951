/* hubs_internal.h - what hubs.c and hubs_policy.c share. */
#ifndef DCSIM_MODELS_HUBS_INTERNAL_H
#define DCSIM_MODELS_HUBS_INTERNAL_H

#include "hubs.h"

struct hubs_policy {
    const char *name, *rule;
    /* may hub h take job j? NULL: every hub */
    int (*eligible)(const hubs_config *c, const hubs_job_spec *j, unsigned h);
    /* the key to minimise; may set *defer (whole hours, from the arrival) */
    double (*key)(const hubs_config *c, const hubs_job_spec *j, unsigned h, double *defer);
    int strict; /* ignores the estimated wait */
};

/* the placement's water account (hubs_water.c; hubs.h "water limit") */
typedef struct hubs_water hubs_water;
hubs_water *hubs_water_create(const hubs_config *c); /* NULL: out of memory */
void hubs_water_free(hubs_water *w);                  /* NULL-safe */
/* would job j, ready at t with the hub's estimated wait, take hub h past its
 * water limit in any year? (0 for a hub without a limit) */
int hubs_water_over(const hubs_config *c, const hubs_water *w, const hubs_job_spec *j,
                    unsigned h, double t_s, double wait_s);
/* job j placed at h: its load and water into the account */
void hubs_water_commit(const hubs_config *c, hubs_water *w, const hubs_job_spec *j, unsigned h,
                       double t_s, double wait_s);
/* the bound of hub h's fullest year (l) */
double hubs_water_fullest(const hubs_config *c, const hubs_water *w, unsigned h);

/* the gang-aware queue estimate (hubs_gang.c; hubs.h "gang_backlog") */
typedef struct hubs_gang hubs_gang;
hubs_gang *hubs_gang_create(const hubs_config *c); /* NULL: out of memory */
void hubs_gang_free(hubs_gang *g);                 /* NULL-safe */
/* the wait of a job of gpus for run_s at hub h ready at t (INFINITY: it does
 * not fit); drops the profile's steps before t */
double hubs_gang_wait(hubs_gang *g, unsigned h, uint32_t gpus, double t_s, double run_s);
/* a job of gpus placed at h ready at t: its GPUs held over [start, + run_s]
 * in the profile; 0, or -1 out of memory */
int hubs_gang_commit(hubs_gang *g, unsigned h, uint32_t gpus, double t_s, double run_s);

/* hubs.c: (time, index) pairs, and hub h simulated with its jobs (and the
 * segments of the jobs moved to it, index n_jobs + m) as a trace; starts
 * and ends back into r->jobs and r->moves */
typedef struct hubs_order { double t; uint32_t i; } hubs_order;
int hubs_simulate_hub(const hubs_config *c, const cluster_config *tmpl, hubs_result *r,
                      unsigned h, hubs_order *ord, cluster_job_spec *spec, cluster_result *cr,
                      sim_error *err);

/* hubs_moves.c: decide and simulate the moves of running jobs (hubs.h
 * max_moves) on the hubs' simulations all[] (replaced where they change);
 * ord and spec hold n_jobs x (1 + max_moves). 0, or an error */
int hubs_moves_run(const hubs_config *c, const cluster_config *tmpl, hubs_result *r,
                   cluster_result *all, hubs_order *ord, cluster_job_spec *spec, sim_error *err);

#endif
