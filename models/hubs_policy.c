/* hubs_policy.c - the placement policies across hubs (hubs.h; docs/hubs.md):
 * one line per policy in the table at the end. A policy says which hubs may
 * take a job (eligible; NULL: all) and a key to minimise (and, for
 * follow-the-renewables, a deferral in whole hours). strict policies ignore
 * the estimated wait (fixed, nearest: the stated hub whatever its queue).
 */
#include <math.h>
#include <string.h>

#include "hubs_internal.h"

double hubs_carbon_at(const hubs_hub *h, double t_s)
{
    if (!h->carbon_hourly || !h->n_carbon_hours)
        return h->emission_kg_per_kwh;
    size_t hour = (size_t)floor(t_s / 3600);
    return h->carbon_hourly[hour % h->n_carbon_hours];
}

static double key_fixed(const hubs_config *c, const hubs_job_spec *j, unsigned h, double *defer)
{
    (void)c, (void)j, (void)h, (void)defer;
    return 0;
}

static int only_fixed(const hubs_config *c, const hubs_job_spec *j, unsigned h)
{
    (void)j;
    return h == c->fixed_hub;
}

static double key_rtt(const hubs_config *c, const hubs_job_spec *j, unsigned h, double *defer)
{
    (void)defer;
    return c->hubs[h].rtt_s[j->origin];
}

/* the energy job j needs at hub h per joule on the scenario's GPU (hubs.h:
 * a serving job's scale follows its GPUs there, a training job's its time),
 * x the run time the hub's interference is expected to add (interf_scale:
 * the added time is busy time; 1 exactly without it) */
static double energy_scale(const hubs_hub *h, const hubs_job_spec *j)
{
    double s = j->kind == HUBS_SERVING ? h->serving_energy_scale : h->energy_scale;
    s = s > 0 ? s : 1;
    double x = hubs_interf_scale(h, j);
    return x != 1 ? s * x : s;
}

static double key_cost(const hubs_config *c, const hubs_job_spec *j, unsigned h, double *defer)
{
    (void)defer;
    return c->hubs[h].price_per_kwh * c->hubs[h].pue * energy_scale(&c->hubs[h], j);
}

static double key_carbon(const hubs_config *c, const hubs_job_spec *j, unsigned h, double *defer)
{
    (void)defer;
    return c->hubs[h].emission_kg_per_kwh * (1 - c->hubs[h].green_share) *
           energy_scale(&c->hubs[h], j);
}

static double key_water(const hubs_config *c, const hubs_job_spec *j, unsigned h, double *defer)
{
    (void)defer;
    return c->hubs[h].wue_l_per_kwh * energy_scale(&c->hubs[h], j);
}

/* serving only within its bound; training anywhere */
static int within_bound(const hubs_config *c, const hubs_job_spec *j, unsigned h)
{
    return j->kind != HUBS_SERVING || !(j->rtt_bound_s > 0) ||
           c->hubs[h].rtt_s[j->origin] <= j->rtt_bound_s;
}

/* the least intensity x (1 - green share) over the start hours the slack
 * allows (deferrable training: arrival + k h, k = 0..floor(slack / 1 h);
 * anything else: the arrival's hour); the first such hour */
static double key_renewables(const hubs_config *c, const hubs_job_spec *j, unsigned h,
                             double *defer)
{
    const hubs_hub *hub = &c->hubs[h];
    unsigned k_max = j->kind == HUBS_TRAINING && j->slack_s > 0
                         ? (unsigned)fmin(floor(j->slack_s / 3600), 8760) : 0;
    double best = INFINITY;
    for (unsigned k = 0; k <= k_max; k++) {
        double v = hubs_carbon_at(hub, j->arrival_s + 3600.0 * k) * (1 - hub->green_share);
        if (v < best) {
            best = v;
            *defer = 3600.0 * k;
        }
    }
    return best * energy_scale(hub, j);
}

static const hubs_policy policies[] = {
    {"fixed", "every job at the stated hub, whatever its queue", only_fixed, key_fixed, 1},
    {"nearest", "every job at the hub of least RTT to its origin, whatever its queue (the "
     "baseline)", NULL, key_rtt, 1},
    {"cheapest", "least price x PUE x the job's energy there (the hub's energy scale)", NULL,
     key_cost, 0},
    {"lowest-carbon", "least emission factor x (1 - green share) x the job's energy there",
     NULL, key_carbon, 0},
    {"lowest-water", "least water per IT kWh (the facility model's annual WUE) x the job's "
     "energy there", NULL, key_water, 0},
    {"latency-bounded", "serving only at hubs within its RTT bound, then least price x PUE x "
     "the job's energy there; training the same", within_bound, key_cost, 0},
    {"follow-the-renewables", "least hourly intensity x (1 - green share) over the hours a "
     "deferrable training job may wait (whole hours up to its slack), x the job's energy "
     "there", NULL, key_renewables, 0},
};

const hubs_policy *hubs_policy_find(const char *name)
{
    for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++)
        if (!strcmp(policies[i].name, name))
            return &policies[i];
    return NULL;
}

const char *hubs_policy_name(const hubs_policy *p) { return p ? p->name : "?"; }
const char *hubs_policy_rule(const hubs_policy *p) { return p ? p->rule : "?"; }

const char *hubs_policy_names(void)
{
    return "fixed, nearest, cheapest, lowest-carbon, lowest-water, latency-bounded, "
           "follow-the-renewables";
}
