/* clusterenergy.h - what a cluster run (dcsim cluster) draws and costs at
 * its <site>: the IT power of the busy-GPU step series (models/cluster_series.h,
 * the power tier's levels as energyrun.c prices them on the scenario's
 * cluster and fabric), integrated exactly and split at the hours into the
 * energy tier's account (models/energy.h): facility energy at the site's
 * hourly PUE, cost at its price, CO2 at its emission factor
 * (docs/cluster.md "Power, energy, cost and CO2"). Without a <site>: the
 * IT energy only, no PUE, price or factor. */
#ifndef DCSIM_APP_CLUSTERENERGY_H
#define DCSIM_APP_CLUSTERENERGY_H

#include <stdint.h>

#include "cluster.h"
#include "cluster_series.h"
#include "energy.h"
#include "scenario.h"

/* one row of the series: the state from t_s to the next row's t_s (the
 * last: to the run's end); rows split the steps at whole hours with a site */
typedef struct cluster_row {
    double t_s;
    uint32_t busy_gpus, queue;
    double it_w, facility_w; /* facility_w: it_w x the hour's PUE; 0 without a site */
} cluster_row;

typedef struct cluster_energy {
    cluster_power power;
    int has_site, network_counted;
    double it_energy_j;         /* the exact step integral */
    energy_result e;            /* with a site: facility energy, PUE, cost, CO2 */
    double busy_gpu_h;
    double energy_cost_per_gpu_h; /* e.cost / busy GPU-hours (a site) */
    int has_costs, has_rent;
    double build_per_gpu_h;     /* <costs>: (capital x T / life + energy cost) / busy GPU-h */
    double rent_per_gpu_h;      /* <costs rent-per-gpu-hour>: GPUs x T x rent / busy GPU-h */
    cluster_row *rows;          /* n_rows; owned */
    uint32_t n_rows;
    char basis[400];            /* the power figures and site values used, one line */
} cluster_energy;

/* Price run r of scenario s. 0, or an error (bad power figures, out of
 * memory); *out is then empty. */
int cluster_energy_at_site(const scn_scenario *s, const cluster_result *r, cluster_energy *out,
                           sim_error *err);
void cluster_energy_free(cluster_energy *ce); /* NULL-safe */

#endif
