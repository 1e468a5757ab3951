/* hubs_water.c - the placement's water account of the hubs with a water
 * limit (hubs.h, hubs_internal.h; docs/hubs.md "Water limits").
 *
 * A hub with an hourly table (water_hour_l): the committed load, busy GPUs
 * hour by hour over HUBS_WATER_YEARS years from the run's start, where each
 * placed job runs its n GPUs over [ready + estimated wait, + run time] (the
 * fluid estimate's start; fractions of an hour at its ends), and what an
 * hour has no room for (at most the hub's GPUs) runs in the next hours with
 * room. A job's water is the rise of each hour's water from the load before
 * it to the load with it, read from the table linearly between its levels
 * (the table's hour k mod 8,760: each level's most over the hour's month of
 * 730 h, hubscmd.h); its litres go to the year of each hour. The year's bound: the idle year plus the rises charged to it,
 * at most the full-load year.
 *
 * A hub without a table (the unit tests, a caller without the energy tier):
 * the idle year plus n x run time x water_l_per_gpu_s per job, in the year
 * of its ready time.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hubs_internal.h"

#define YEAR_H 8760u
#define HOURS (YEAR_H * HUBS_WATER_YEARS)

struct hubs_water {
    double year[HUBS_MAX][HUBS_WATER_YEARS]; /* the jobs' litres by year */
    double *load[HUBS_MAX]; /* busy GPUs by hour (HOURS); NULL: no table or no limit */
};

hubs_water *hubs_water_create(const hubs_config *c)
{
    hubs_water *w = calloc(1, sizeof *w);
    for (unsigned h = 0; w && h < c->n_hubs; h++) {
        const hubs_hub *hub = &c->hubs[h];
        if (!(hub->water_limit_l > 0) || !hub->water_hour_l || hub->water_levels < 2)
            continue;
        w->load[h] = calloc(HOURS, sizeof *w->load[h]);
        if (!w->load[h]) {
            hubs_water_free(w);
            return NULL;
        }
    }
    return w;
}

void hubs_water_free(hubs_water *w)
{
    if (!w)
        return;
    for (unsigned h = 0; h < HUBS_MAX; h++)
        free(w->load[h]);
    free(w);
}

/* the year (of 8,760 h) of time t, capped at the last slot */
static unsigned water_year(double t_s)
{
    double y = floor(t_s / (YEAR_H * 3600.0));
    return y <= 0 ? 0 : y >= HUBS_WATER_YEARS - 1 ? HUBS_WATER_YEARS - 1 : (unsigned)y;
}

/* hour k's water at hub h with g busy GPUs (capped at the hub's): the
 * table, linear between its levels */
static double hour_water(const hubs_hub *hub, size_t k, double g)
{
    const double *row = hub->water_hour_l + (k % YEAR_H) * hub->water_levels;
    const double *lv = hub->water_level_gpus;
    unsigned n = hub->water_levels;
    g = fmin(fmax(g, 0), lv[n - 1]);
    unsigned q = 0;
    while (q + 2 < n && g > lv[q + 1])
        q++;
    double span = lv[q + 1] - lv[q];
    return span > 0 ? row[q] + (row[q + 1] - row[q]) * (g - lv[q]) / span : row[q];
}

/* job j at h from t + wait: its litres by year into add; commit: its load
 * into the account too. An hour takes at most the hub's GPUs: what does not
 * fit waits for the next hour with room (the queue, conserving the job's
 * GPU-hours) */
static void job_water(const hubs_config *c, hubs_water *w, const hubs_job_spec *j, unsigned h,
                      double t_s, double wait_s, double *add, int commit)
{
    const hubs_hub *hub = &c->hubs[h];
    double run_s = hubs_expected_run_s(hub, j); /* with the interference the keys expect */
    memset(add, 0, HUBS_WATER_YEARS * sizeof *add);
    if (!w->load[h]) { /* the rate rule, in the year of the ready time */
        add[water_year(t_s)] = (double)hubs_job_gpus(hub, j) * run_s * hub->water_l_per_gpu_s;
        return;
    }
    double lo = fmax(0, t_s + wait_s), hi = lo + run_s, pending = 0;
    double gpus = hub->water_level_gpus[hub->water_levels - 1];
    for (double k = floor(lo / 3600); (k * 3600 < hi || pending > 0) && k < HOURS; k++) {
        if (k * 3600 < hi)
            pending += (double)hubs_job_gpus(hub, j) * (fmin(hi, (k + 1) * 3600) -
                                                        fmax(lo, k * 3600)) / 3600;
        double *load = &w->load[h][(size_t)k], put = fmin(pending, fmax(0, gpus - *load));
        if (!(put > 0))
            continue;
        add[(size_t)k / YEAR_H] += hour_water(hub, (size_t)k, *load + put) -
                                   hour_water(hub, (size_t)k, *load);
        pending -= put;
        if (commit)
            *load += put;
    }
}

static double bound(const hubs_hub *hub, double jobs_l)
{
    double b = hub->water_idle_year_l + jobs_l;
    return hub->water_full_year_l > 0 && b > hub->water_full_year_l ? hub->water_full_year_l : b;
}

int hubs_water_over(const hubs_config *c, const hubs_water *w, const hubs_job_spec *j,
                    unsigned h, double t_s, double wait_s)
{
    const hubs_hub *hub = &c->hubs[h];
    if (!(hub->water_limit_l > 0))
        return 0;
    double add[HUBS_WATER_YEARS];
    job_water(c, (hubs_water *)w, j, h, t_s, wait_s, add, 0); /* reads only */
    for (unsigned y = 0; y < HUBS_WATER_YEARS; y++)
        if ((add[y] > 0 || (!w->load[h] && y == water_year(t_s))) &&
            bound(hub, w->year[h][y] + add[y]) > hub->water_limit_l)
            return 1;
    return 0;
}

void hubs_water_commit(const hubs_config *c, hubs_water *w, const hubs_job_spec *j, unsigned h,
                       double t_s, double wait_s)
{
    double add[HUBS_WATER_YEARS];
    job_water(c, w, j, h, t_s, wait_s, add, 1);
    for (unsigned y = 0; y < HUBS_WATER_YEARS; y++)
        w->year[h][y] += add[y];
}

double hubs_water_fullest(const hubs_config *c, const hubs_water *w, unsigned h)
{
    double fullest = 0;
    for (unsigned y = 0; y < HUBS_WATER_YEARS; y++)
        fullest = fmax(fullest, w->year[h][y]);
    return bound(&c->hubs[h], fullest);
}
