/* hubs_keys_size.c - keys="interfered-size-load" (docs/hubs.md
 * "Interference by job size and load"): the slowdown the placement expects
 * of a job at a hub, by the job's size and the hub's load, from the cluster
 * tier's interference on the run placed with the isolated keys.
 *
 * Every job of that run at hub h falls in a cell: its size class k =
 * floor(log2 GPUs) (1, 2-3, 4-7, ...) and its neighbours' load q, the
 * time-average over its run of the hub's busy GPUs other than its own over
 * the hub's GPUs, in quarters (0-25 %, 25-50 %, 50-75 %, 75-100 %). A
 * cell's slowdown is its jobs' busy GPU-seconds over those without what
 * interference added (sum n (d + i) / sum n d, d the isolated run, i the
 * time the pacer added), 1 without jobs. The table is then closed upwards:
 * a cell is at least every cell of a smaller class or a lower load (more
 * neighbours' traffic and more of its own crossing links never make a job
 * faster), so a cell without a measured job takes the most of those below
 * it. A job placed later reads the cell of its GPUs at the hub and of the
 * hub's load at its arrival in that run (busy GPUs at that instant over the
 * hub's); each (job, hub) is looked up once, before the placement, and
 * kept (the cache: n_jobs x n_hubs values).
 */
#include "hubs_keys_size.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned size_class(uint32_t gpus)
{
    unsigned k = 0;
    while (k + 1 < HUBS_KS_SIZES && (gpus >> (k + 1)))
        k++;
    return k;
}

static unsigned load_class(double load)
{
    double q = floor(load * HUBS_KS_LOADS);
    return q < 0 ? 0 : q >= HUBS_KS_LOADS ? HUBS_KS_LOADS - 1 : (unsigned)q;
}

/* the last step at or before t (the steps start at 0) */
static uint32_t step_at(const cluster_result *cr, double t)
{
    uint32_t lo = 0, hi = cr->n_steps;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (cr->steps[mid].t_s <= t)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* the time-average over [a, b) of the busy GPUs other than the job's n */
static double neighbours(const cluster_result *cr, double a, double b, uint32_t n)
{
    if (!(b > a) || !cr->n_steps)
        return 0;
    double sum = 0;
    for (uint32_t k = step_at(cr, a); k < cr->n_steps; k++) {
        double lo = fmax(a, cr->steps[k].t_s);
        double hi = fmin(b, k + 1 < cr->n_steps ? cr->steps[k + 1].t_s : b);
        if (lo >= b)
            break;
        double others = (double)cr->steps[k].busy_gpus - n;
        sum += (others > 0 ? others : 0) * (hi > lo ? hi - lo : 0);
    }
    return sum / (b - a);
}

/* one hub's table from its simulation cr (gpus: the hub's) */
static void measure(const cluster_result *cr, uint32_t gpus, hubs_key_table *t)
{
    double work[HUBS_KS_SIZES][HUBS_KS_LOADS] = {{0}}, held[HUBS_KS_SIZES][HUBS_KS_LOADS] = {{0}};
    memset(t, 0, sizeof *t);
    for (uint32_t k = 0; k < cr->n_jobs; k++) {
        const cluster_job *x = &cr->jobs[k];
        uint32_t n = x->spec.gpus;
        double load = neighbours(cr, x->start_s, x->end_s, n) / gpus;
        unsigned s = size_class(n), q = load_class(load);
        t->jobs[s][q]++;
        work[s][q] += (double)n * x->spec.duration_s;
        held[s][q] += (double)n * (x->spec.duration_s + (x->interf_s > 0 ? x->interf_s : 0));
    }
    memcpy(t->work_gpu_s, work, sizeof work);
    for (unsigned s = 0; s < HUBS_KS_SIZES; s++)
        for (unsigned q = 0; q < HUBS_KS_LOADS; q++) {
            double v = work[s][q] > 0 ? held[s][q] / work[s][q] : 1;
            t->measured[s][q] = v;
            if (s)
                v = fmax(v, t->scale[s - 1][q]);
            if (q)
                v = fmax(v, t->scale[s][q - 1]);
            t->scale[s][q] = v;
        }
}

int hubs_keys_size_load(const hubs_config *c, const hubs_run *cal, hubs_key_table *tables,
                        double *per_job, sim_error *err)
{
    (void)err;
    for (unsigned h = 0; h < c->n_hubs; h++) {
        const cluster_result *cr = &cal->cr[h];
        measure(cr, c->hubs[h].gpus, &tables[h]);
        for (uint32_t i = 0; i < c->n_jobs; i++) {
            const hubs_job_spec *j = &c->jobs[i];
            double busy = cr->n_steps ? cr->steps[step_at(cr, j->arrival_s)].busy_gpus : 0;
            unsigned s = size_class(hubs_job_gpus(&c->hubs[h], j));
            per_job[(size_t)h * c->n_jobs + i] =
                tables[h].scale[s][load_class(busy / c->hubs[h].gpus)];
        }
    }
    return 0;
}

cJSON *hubs_key_table_json(const hubs_key_table *t)
{
    cJSON *a = cJSON_CreateArray();
    unsigned top = 0; /* the classes up to the largest measured */
    for (unsigned s = 0; s < HUBS_KS_SIZES; s++)
        for (unsigned q = 0; q < HUBS_KS_LOADS; q++)
            if (t->jobs[s][q])
                top = s + 1;
    for (unsigned s = 0; a && s < top; s++)
        for (unsigned q = 0; q < HUBS_KS_LOADS; q++) {
            cJSON *o = cJSON_CreateObject();
            const struct { const char *name; double value; } v[] = {
                {"gpus_from", ldexp(1, (int)s)}, {"gpus_to", ldexp(1, (int)s + 1) - 1},
                {"load_from", (double)q / HUBS_KS_LOADS},
                {"load_to", (double)(q + 1) / HUBS_KS_LOADS}, {"jobs", t->jobs[s][q]},
                {"isolated_gpu_h", t->work_gpu_s[s][q] / 3600},
                {"measured", t->measured[s][q]}, {"scale", t->scale[s][q]}};
            for (size_t i = 0; o && i < sizeof v / sizeof v[0]; i++)
                cJSON_AddNumberToObject(o, v[i].name, v[i].value);
            cJSON_AddItemToArray(a, o);
        }
    return a;
}

void hubs_key_table_print(const hubs_run *run)
{
    printf("keys       interfered-size-load (docs/hubs.md \"Interference by job size and "
           "load\"): each job's energy key and run time in the backlog x its expected slowdown "
           "at the hub, by its GPUs and the hub's load at its arrival, measured on the run "
           "placed by the isolated keys (closed upwards); the load quarters 0-25-50-75-100 %% "
           "(measured jobs):\n");
    for (unsigned h = 0; h < run->cfg.n_hubs; h++) {
        const hubs_key_table *t = &run->key_table[h];
        for (unsigned k = 0; k < HUBS_KS_SIZES; k++) {
            uint32_t any = 0;
            for (unsigned q = 0; q < HUBS_KS_LOADS; q++)
                any += t->jobs[k][q];
            if (!any)
                continue;
            printf("           %s %.0f-%.0f GPUs:", run->cfg.hubs[h].name, ldexp(1, (int)k),
                   ldexp(1, (int)k + 1) - 1);
            for (unsigned q = 0; q < HUBS_KS_LOADS; q++)
                printf(" %.6g (%u)%s", t->scale[k][q], t->jobs[k][q],
                       q + 1 < HUBS_KS_LOADS ? "," : "\n");
        }
    }
}
