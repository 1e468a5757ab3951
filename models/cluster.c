/* cluster.c - the cluster simulation (cluster.h): the job stream, arrivals
 * and ends on the engine, starting a queued job on the GPUs its placement
 * picks, and the results. O(n log n) per start (its GPUs sorted), the
 * scheduling pass's own cost per instant (cluster_sched.c).
 */
#include "cluster.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "cluster_internal.h"
#include "event_kinds.h"

const double cluster_quantile_p[CLUSTER_QUANTILES] = {0.50, 0.90, 0.99};

static const char *const dur_names[CLUSTER_DUR_COUNT] = {"fixed", "uniform", "lognormal"};

const char *cluster_dur_dist_name(int d)
{
    return d >= 0 && d < CLUSTER_DUR_COUNT ? dur_names[d] : "?";
}

int cluster_dur_dist_parse(const char *name, int *out)
{
    for (int i = 0; i < CLUSTER_DUR_COUNT; i++)
        if (name && strcmp(name, dur_names[i]) == 0) {
            *out = i;
            return 0;
        }
    return -1;
}

static int bad(sim_error *err, const char *what, double value, const char *allowed)
{
    return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "cluster: %s %g: %s", what, value, allowed);
}

static int check_shape(const cluster_config *c, sim_error *err)
{
    if (c->gpus < 1 || c->gpus > CLUSTER_MAX_GPUS)
        return bad(err, "GPUs", c->gpus, "must be from 1 to 16,777,216");
    if (c->node_gpus < 1 || c->leaf_gpus < c->node_gpus || c->leaf_gpus % c->node_gpus)
        return bad(err, "GPUs per leaf", c->leaf_gpus, "must be a whole number of nodes");
    if (c->su_gpus < c->leaf_gpus || c->su_gpus % c->leaf_gpus)
        return bad(err, "GPUs per SU", c->su_gpus, "must be a whole number of leaves");
    if (c->gpus % c->leaf_gpus)
        return bad(err, "GPUs", c->gpus, "must be a whole number of leaves");
    if (!c->sched || !c->placer)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "cluster: no scheduler or placement");
    return 0;
}

static int check_stream(const cluster_config *c, sim_error *err)
{
    const cluster_stream *st = &c->stream;
    if (!(st->rate_per_s > 0) || !isfinite(st->rate_per_s))
        return bad(err, "arrival rate", st->rate_per_s, "must be above 0 per second");
    if (!(st->window_s > 0) || st->window_s > 3.2e8)
        return bad(err, "arrival window", st->window_s, "must be in (0, 10 years] seconds");
    if (!st->max_jobs && st->rate_per_s * st->window_s > CLUSTER_MAX_JOBS)
        return bad(err, "expected jobs", st->rate_per_s * st->window_s, "at most 1e7: give a "
                   "job count or a shorter window");
    if (st->max_jobs > CLUSTER_MAX_JOBS)
        return bad(err, "jobs", st->max_jobs, "at most 1e7");
    if (st->n_sizes < 1 || st->n_sizes > CLUSTER_MAX_SIZES)
        return bad(err, "sizes", st->n_sizes, "the table needs 1 to 64 rows");
    double w = 0;
    for (unsigned i = 0; i < st->n_sizes; i++) {
        if (st->size_gpus[i] < 1 || st->size_gpus[i] > c->gpus)
            return bad(err, "job size", st->size_gpus[i], "must be from 1 to the cluster's GPUs");
        if (!(st->size_weight[i] >= 0) || !isfinite(st->size_weight[i]))
            return bad(err, "size weight", st->size_weight[i], "must be >= 0");
        w += st->size_weight[i];
    }
    if (!(w > 0))
        return bad(err, "size weights' sum", w, "must be above 0");
    const cluster_duration *d = &st->dur;
    if (d->dist < 0 || d->dist >= CLUSTER_DUR_COUNT)
        return bad(err, "duration distribution", d->dist, "unknown");
    if (!(d->a_s > 0) || d->a_s > 3.2e8)
        return bad(err, "duration", d->a_s, "must be in (0, 10 years] seconds");
    if (d->dist == CLUSTER_DUR_UNIFORM && !(d->b >= d->a_s && d->b <= 3.2e8))
        return bad(err, "duration's high end", d->b, "must be from the low end to 10 years");
    if (d->dist == CLUSTER_DUR_LOGNORMAL && !(d->b > 0 && d->b <= 5))
        return bad(err, "duration's sigma", d->b, "must be in (0, 5]");
    if (!(d->max_s >= 0) || d->max_s > 3.2e8)
        return bad(err, "duration cap", d->max_s, "must be from 0 (none) to 10 years");
    if (!(st->elastic_share >= 0 && st->elastic_share <= 1))
        return bad(err, "elastic share", st->elastic_share, "must be from 0 to 1");
    if (st->elastic_share > 0 && !(st->elastic_min_frac > 0 && st->elastic_min_frac <= 1))
        return bad(err, "elastic min fraction", st->elastic_min_frac, "must be in (0, 1]");
    return 0;
}

static int check_trace(const cluster_config *c, sim_error *err)
{
    if (c->n_jobs < 1 || c->n_jobs > CLUSTER_MAX_JOBS)
        return bad(err, "trace jobs", c->n_jobs, "must be from 1 to 1e7");
    for (uint32_t i = 0; i < c->n_jobs; i++) {
        const cluster_job_spec *j = &c->jobs[i];
        uint32_t min = c->min_gpus ? c->min_gpus[i] : 0;
        if (c->min_gpus && min > j->gpus)
            return bad(err, "job min GPUs", min, "must be from 1 to the job's GPUs");
        int is_fit = j->gpus <= c->gpus || (c->elastic && min && min <= c->gpus);
        if (j->gpus < 1 || j->gpus > CLUSTER_MAX_GPUS || !is_fit)
            return bad(err, "job GPUs", j->gpus, "must be from 1 to the cluster's GPUs (an "
                       "elastic job's min)");
        if (!(j->duration_s >= CLUSTER_MIN_DURATION_S) || !isfinite(j->duration_s))
            return bad(err, "job duration", j->duration_s, "must be at least 1 s");
        if (!(j->submit_s >= 0) || !isfinite(j->submit_s) ||
            (i && j->submit_s < c->jobs[i - 1].submit_s))
            return bad(err, "submit time", j->submit_s, "must be >= 0 and not decrease");
    }
    return 0;
}

int cluster_config_check(const cluster_config *c, sim_error *err)
{
    int rc = check_shape(c, err);
    if (!rc)
        rc = c->jobs ? check_trace(c, err) : check_stream(c, err);
    if (!rc)
        rc = cluster_disrupt_check(c, err);
    return rc;
}

static double draw_duration(gsl_rng *rng, const cluster_duration *d)
{
    double x = d->a_s;
    if (d->dist == CLUSTER_DUR_UNIFORM)
        x = d->a_s + gsl_rng_uniform(rng) * (d->b - d->a_s);
    else if (d->dist == CLUSTER_DUR_LOGNORMAL)
        x = gsl_ran_lognormal(rng, log(d->a_s), d->b);
    if (d->max_s > 0 && x > d->max_s)
        x = d->max_s;
    return x >= CLUSTER_MIN_DURATION_S ? x : CLUSTER_MIN_DURATION_S;
}

static uint32_t draw_size(gsl_rng *rng, const cluster_stream *st)
{
    double total = 0;
    for (unsigned i = 0; i < st->n_sizes; i++)
        total += st->size_weight[i];
    double u = gsl_rng_uniform(rng) * total, acc = 0;
    for (unsigned i = 0; i < st->n_sizes; i++) {
        acc += st->size_weight[i];
        if (u < acc && st->size_weight[i] > 0)
            return st->size_gpus[i];
    }
    for (unsigned i = st->n_sizes; i-- > 0;) /* u at the top edge by rounding */
        if (st->size_weight[i] > 0)
            return st->size_gpus[i];
    return st->size_gpus[0];
}

int cluster_jobs_make(const cluster_config *c, cluster_job_spec **out, uint32_t *n,
                      sim_error *err)
{
    int rc = cluster_config_check(c, err);
    if (rc)
        return rc;
    if (c->jobs) {
        cluster_job_spec *v = malloc((size_t)c->n_jobs * sizeof *v);
        if (!v)
            return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "cluster: out of memory");
        memcpy(v, c->jobs, (size_t)c->n_jobs * sizeof *v);
        *out = v;
        *n = c->n_jobs;
        return 0;
    }
    const cluster_stream *st = &c->stream;
    gsl_rng *gap = gsl_rng_alloc(gsl_rng_mt19937), *size = gsl_rng_alloc(gsl_rng_mt19937),
            *dur = gsl_rng_alloc(gsl_rng_mt19937);

    cluster_job_spec *v = NULL;
    uint32_t k = 0, cap = 0;
    rc = gap && size && dur ? 0 : SIM_ERR_NOMEM;
    if (!rc) { /* three streams from the one seed */
        gsl_rng_set(gap, (unsigned long)(c->seed * 3 + 1));
        gsl_rng_set(size, (unsigned long)(c->seed * 3 + 2));
        gsl_rng_set(dur, (unsigned long)(c->seed * 3 + 3));
    }
    double t = 0;
    while (!rc) {
        t += gsl_ran_exponential(gap, 1.0 / st->rate_per_s);
        if (t > st->window_s || (st->max_jobs && k >= st->max_jobs) || k >= CLUSTER_MAX_JOBS)
            break;
        if (k == cap) {
            uint32_t ncap = cap ? 2 * cap : 1024;
            cluster_job_spec *w = realloc(v, (size_t)ncap * sizeof *w);
            if (!w) {
                rc = SIM_ERR_NOMEM;
                break;
            }
            v = w;
            cap = ncap;
        }
        v[k].submit_s = t;
        v[k].gpus = draw_size(size, st);
        v[k].duration_s = draw_duration(dur, &st->dur);
        v[k].priority = 0;
        k++;
    }
    gsl_rng_free(gap);
    gsl_rng_free(size);
    gsl_rng_free(dur);
    if (!rc && !k)
        rc = sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "cluster: no job arrives within the "
                           "arrival window: raise the rate or the window");
    if (rc) {
        free(v);
        return sim_error_set(err, rc, NULL, 0, "cluster: out of memory");
    }
    *out = v;
    *n = k;
    return 0;
}

void cluster_jobs_min(const cluster_config *c, const cluster_job_spec *spec, uint32_t n,
                      uint32_t *min)
{
    const cluster_stream *st = &c->stream;
    gsl_rng *el = st->elastic_share > 0 ? gsl_rng_alloc(gsl_rng_mt19937) : NULL;
    if (el) /* its own stream, apart from the three: seed x 3 + 4 */
        gsl_rng_set(el, (unsigned long)(c->seed * 3 + 4));
    for (uint32_t i = 0; i < n; i++) {
        min[i] = 0;
        if (el && gsl_rng_uniform(el) < st->elastic_share && spec[i].gpus > 1) {
            double m = ceil(st->elastic_min_frac * spec[i].gpus);
            min[i] = m < 1 ? 1 : m >= spec[i].gpus ? spec[i].gpus : (uint32_t)m;
        }
    }
    if (el)
        gsl_rng_free(el);
}

/* ---- the simulation ---- */

void cluster_account(cluster_sim *s)
{
    double now = sim_now(s->eng), dt = now - s->last_t;
    if (dt > 0) {
        s->area_free += (double)s->free_gpus * dt;
        s->area_queue += (double)s->queue_n * dt;
        s->area_down += (double)s->down_gpus * dt;
        s->last_t = now;
    }
}

void cluster_record(cluster_sim *s)
{
    double now = sim_now(s->eng);
    if (s->n_steps && s->steps[s->n_steps - 1].t_s == now)
        s->n_steps--; /* the same instant: keep its last state */
    if (s->n_steps == s->cap_steps) {
        uint32_t cap = s->cap_steps ? 2 * s->cap_steps : 1024;
        cluster_step *v = cap > s->cap_steps ? realloc(s->steps, (size_t)cap * sizeof *v) : NULL;
        if (!v) {
            s->failed = 1;
            sim_stop(s->eng);
            return;
        }
        s->steps = v;
        s->cap_steps = cap;
    }
    s->steps[s->n_steps++] = (cluster_step){now, s->c->gpus - s->free_gpus - s->down_gpus,
                                            s->busy_nodes, s->queue_n};
}

static void on_pass(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)eng;
    (void)data;
    cluster_sim *s = ctx;
    s->pass_due = 0;
    if (s->c->preempt)
        cluster_preempt_head(s);
    s->c->sched->pass(s);
    if (s->held)
        cluster_elastic_grow(s);
}

/* after every event of this instant: arrivals and ends at equal times first */
void cluster_want_pass(cluster_sim *s)
{
    if (s->pass_due)
        return;
    s->pass_due = 1;
    if (!sim_schedule_in(s->eng, 0, 2, KIND_CLUSTER_SCHEDULE, on_pass, s, 0))
        s->failed = 1;
}

void cluster_free_gpus(cluster_sim *s, const uint32_t *g, uint32_t n)
{
    const cluster_config *c = s->c;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t node = g[i] / c->node_gpus;
        s->owner[g[i]] = CLUSTER_NONE;
        if (!--s->node_busy[node])
            s->busy_nodes--;
        if (s->is_disrupt && cluster_gpu_is_down(s, g[i])) {
            cluster_gpu_down(s, g[i]);
            continue;
        }
        s->node_free[node]++;
        s->leaf_free[g[i] / c->leaf_gpus]++;
        s->su_free[g[i] / c->su_gpus]++;
        s->free_gpus++;
    }
}

void cluster_release(cluster_sim *s, uint32_t id)
{
    const cluster_config *c = s->c;
    uint32_t n = cluster_held(s, id);
    cluster_free_gpus(s, s->alloc + s->alloc_at[id], n);
    uint32_t pos = s->run_pos[id], last = s->running[--s->running_n];
    s->running[pos] = last;
    s->run_pos[last] = pos;
    if (c->pacer)
        cluster_pace_end(s, id);
    cluster_record(s);
    if (c->watch)
        c->watch(c->watch_ctx, id, sim_now(s->eng), NULL, n);
}

void cluster_on_end(sim_engine *eng, void *ctx, uint64_t data)
{
    cluster_sim *s = ctx;
    uint32_t id = (uint32_t)data;
    cluster_account(s);
    if (s->is_disrupt) {
        cluster_job *j = &s->job[id];
        j->held_s += sim_now(eng) - s->seg_s[id];
        if (s->held) {
            cluster_elastic_hold(s, id, sim_now(eng) - s->seg_s[id]);
            cluster_el_lose(s, id, 2, s->seg_over_s[id] * s->held[id]);
        }
        j->restart_s += s->seg_over_s[id];
        if (s->c->pacer)
            cluster_pace_settle(s, id);
        s->state[id] = CLUSTER_ST_DONE;
        s->ev[id] = 0;
    }
    cluster_release(s, id);
    if (s->is_disrupt && ++s->ended == s->n_job &&
        (s->c->n_resv || s->c->fail.rate_per_node_s > 0))
        sim_stop(eng); /* failures and windows go on; T is the last end */
    cluster_want_pass(s);
}

uint32_t cluster_take_node(cluster_sim *s, uint32_t node, uint32_t max, uint32_t *k)
{
    const cluster_config *c = s->c;
    uint32_t taken = 0, g0 = node * c->node_gpus;
    for (uint32_t g = g0; g < g0 + c->node_gpus && taken < max && s->node_free[node]; g++)
        if (s->owner[g] == CLUSTER_NONE) {
            s->owner[g] = CLUSTER_PICKED;
            s->node_free[node]--;
            s->leaf_free[g / c->leaf_gpus]--;
            s->su_free[g / c->su_gpus]--;
            s->pick[(*k)++] = g;
            taken++;
        }
    return taken;
}

int cluster_cmp_end(const void *a, const void *b)
{
    const cluster_end *x = a, *y = b;
    if (x->end_s != y->end_s)
        return x->end_s < y->end_s ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* distinct values of g / unit over sorted g */
static uint32_t spans(const uint32_t *g, uint32_t n, uint32_t unit)
{
    uint32_t k = 0, last = CLUSTER_NONE;
    for (uint32_t i = 0; i < n; i++)
        if (g[i] / unit != last) {
            last = g[i] / unit;
            k++;
        }
    return k;
}

static uint32_t ceil_div(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

double cluster_run_left_s(const cluster_sim *s, uint32_t id)
{
    if (!s->is_disrupt)
        return s->job[id].spec.duration_s;
    return (s->job[id].start_s >= 0 ? s->c->ckpt.restart_s : 0) + s->left_s[id];
}

void cluster_spans_set(cluster_sim *s, uint32_t id, const uint32_t *g, uint32_t n)
{
    const cluster_config *c = s->c;
    cluster_job *j = &s->job[id];
    j->nodes = spans(g, n, c->node_gpus);
    j->leaves = spans(g, n, c->leaf_gpus);
    j->sus = spans(g, n, c->su_gpus);
    j->min_nodes = ceil_div(n, c->node_gpus);
    j->min_leaves = ceil_div(n, c->leaf_gpus);
    j->min_sus = ceil_div(n, c->su_gpus);
}

int cluster_start_queued(cluster_sim *s, uint32_t qi)
{
    return cluster_start_queued_n(s, qi, UINT32_MAX);
}

int cluster_start_queued_n(cluster_sim *s, uint32_t qi, uint32_t max)
{
    const cluster_config *c = s->c;
    uint32_t id = s->queue[qi];
    cluster_job *j = &s->job[id];
    uint32_t n = j->spec.gpus;
    cluster_account(s);
    if (cluster_is_elastic(s, id)) { /* as many as are free up to max, at least its min;
                                        windows hidden for its longest run (at its min) */
        uint32_t need = j->min_gpus, hidden = 0;
        if (c->n_resv)
            hidden = cluster_resv_hide(s, sim_now(s->eng) + cluster_run_left_on(s, id, need));
        uint32_t avail = s->free_gpus - hidden;
        n = n < max ? n : max;
        n = n < avail ? n : avail;
        if (n < need) {
            if (c->n_resv)
                cluster_resv_show(s);
            return -1;
        }
    } else if (c->n_resv) { /* not onto GPUs a window takes before it would end */
        uint32_t hidden = cluster_resv_hide(s, sim_now(s->eng) + cluster_run_left_s(s, id));
        if (n > s->free_gpus - hidden) {
            cluster_resv_show(s);
            return -1;
        }
    }
    uint32_t k = c->placer->place(s, n);
    if (c->n_resv)
        cluster_resv_show(s);
    qsort(s->pick, k, sizeof *s->pick, cmp_u32);
    uint32_t *g = s->alloc + s->alloc_at[id];
    for (uint32_t i = 0; i < k; i++) {
        uint32_t x = s->pick[i];
        if (s->owner[x] != CLUSTER_PICKED || (i && x == s->pick[i - 1]))
            k = 0;
        s->owner[x] = id;
        g[i] = x;
    }
    if (k != n) {
        s->failed = 1; /* a placement bug: stop rather than double-book */
        sim_stop(s->eng);
        return 0;
    }
    s->free_gpus -= n;
    if (s->held) {
        s->held[id] = n;
        if (j->start_s < 0)
            s->g0[id] = n;
    }
    for (uint32_t i = 0; i < n; i++) /* nodes that were idle before this job */
        if (!s->node_busy[g[i] / c->node_gpus]++)
            s->busy_nodes++;
    memmove(s->queue + qi, s->queue + qi + 1, (size_t)(s->queue_n - qi - 1) * sizeof *s->queue);
    s->queue_n--;
    s->backfilled += qi > 0;
    int is_restart = s->is_disrupt && j->start_s >= 0;
    if (!is_restart)
        j->start_s = sim_now(s->eng);
    j->end_s = j->start_s + j->spec.duration_s;
    cluster_spans_set(s, id, g, n);
    s->run_pos[id] = s->running_n;
    s->running[s->running_n++] = id;
    cluster_record(s);
    if (c->pacer && !s->is_disrupt) {
        cluster_pace_start(s, id, g); /* its end at start + d until re-timed */
    } else if (s->is_disrupt) {   /* its end at now + restart + work left */
        if (c->pacer)
            cluster_pace_join(s, id, g, n); /* re-timed when its work starts */
        cluster_segment_start(s, id);
    } else if (!sim_schedule_at(s->eng, j->end_s, 0, KIND_CLUSTER_JOB_END, cluster_on_end, s, id))
        s->failed = 1;
    if (c->watch)
        c->watch(c->watch_ctx, id, sim_now(s->eng), g, n);
    return 0;
}

void cluster_enqueue(cluster_sim *s, uint32_t id)
{
    /* queue order: priority (higher first), then arrival (id): after every
     * queued job of a higher priority, or of the same one and a lower id */
    int32_t p = s->job[id].spec.priority;
    uint32_t lo = 0, hi = s->queue_n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const cluster_job *m = &s->job[s->queue[mid]];
        if (m->spec.priority > p || (m->spec.priority == p && s->queue[mid] < id))
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(s->queue + lo + 1, s->queue + lo, (size_t)(s->queue_n - lo) * sizeof *s->queue);
    s->queue[lo] = id;
    s->queue_n++;
    if (s->queue_n > s->queue_max)
        s->queue_max = s->queue_n;
}

static void on_arrival(sim_engine *eng, void *ctx, uint64_t data)
{
    cluster_sim *s = ctx;
    uint32_t id = (uint32_t)data;
    cluster_account(s);
    cluster_enqueue(s, id); /* the latest arrival: after every job of its priority */
    s->arrived++;
    cluster_record(s);
    if (id + 1 < s->n_job &&
        !sim_schedule_at(eng, s->job[id + 1].spec.submit_s, 1, KIND_CLUSTER_ARRIVAL, on_arrival,
                         s, id + 1))
        s->failed = 1;
    cluster_want_pass(s);
}

/* ---- results ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* nearest rank: the smallest value with at least p of the values at or below it */
void cluster_stat_of(double *v, uint32_t n, cluster_stat *out)
{
    memset(out, 0, sizeof *out);
    if (!n)
        return;
    qsort(v, n, sizeof *v, cmp_double);
    double sum = 0;
    for (uint32_t i = 0; i < n; i++)
        sum += v[i];
    out->mean = sum / n;
    out->max = v[n - 1];
    for (unsigned k = 0; k < CLUSTER_QUANTILES; k++) {
        double rank = ceil(cluster_quantile_p[k] * n);
        out->q[k] = v[(uint32_t)(rank < 1 ? 1 : rank) - 1];
    }
}

static int results(cluster_sim *s, cluster_result *o, sim_error *err)
{
    uint32_t n = s->n_job;
    double *v = malloc((size_t)n * 4 * sizeof *v);
    if (!v)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "cluster: out of memory");
    double T = 0, busy = 0, excess = 0, ratio_w = 0, gpu_sum = 0, useful = 0;
    for (uint32_t i = 0; i < n; i++) {
        const cluster_job *j = &s->job[i];
        double run = j->end_s - j->start_s, wait = j->start_s - j->spec.submit_s;
        T = j->end_s > T ? j->end_s : T;
        /* held: every segment; a job never disrupted holds its GPUs end - start */
        double held = s->is_disrupt ? j->held_s : run;
        int is_el = j->min_gpus && j->min_gpus < j->spec.gpus; /* the scenario's, either mode */
        o->elastic_jobs += is_el;
        double work_gpu_s = s->held && !cluster_el_linear(s) ? cluster_el_work_gpu_s(s, i)
                                                              : j->spec.duration_s * j->spec.gpus;
        if (s->held) { /* elastic: the GPUs it held, not its GPUs */
            busy += s->gpu_s[i];
            v[3 * (size_t)n + i] = work_gpu_s / s->gpu_s[i];
            s->job[i].gpus_mean = s->gpu_s[i] / held;
        } else {
            busy += held * j->spec.gpus;
            v[3 * (size_t)n + i] = j->spec.duration_s / held;
            s->job[i].gpus_mean = j->spec.gpus;
        }
        useful += work_gpu_s;
        v[i] = wait;
        int is_moved = j->preemptions || j->interruptions || (s->held && is_el); /* vs d */
        v[n + i] = is_moved ? (j->end_s - j->spec.submit_s) / j->spec.duration_s
                            : (wait + run) / run;
        o->rework_gpu_s += j->rework_s * j->spec.gpus;
        o->ckpt_gpu_s += j->ckpt_s * j->spec.gpus;
        o->restart_gpu_s += j->restart_s * j->spec.gpus;
        if (s->c->pacer && s->is_disrupt) { /* segments: time worked / its isolated time */
            double work = j->held_s - j->ckpt_s - j->restart_s;
            v[2 * (size_t)n + i] = j->interf_s > 0 ? work / (work - j->interf_s) : 1;
        } else {
            /* an end never moved is start + d: exactly the isolated run (no pacer,
             * no interference: a disrupted run is not stretched by it) */
            int is_isolated = s->held || !s->c->pacer ||
                              j->end_s == j->start_s + j->spec.duration_s;
            s->job[i].interf_s = is_isolated ? 0 : run - j->spec.duration_s;
            v[2 * (size_t)n + i] = is_isolated ? 1 : run / j->spec.duration_s;
            o->interference_gpu_s += s->job[i].interf_s * j->spec.gpus;
        }
        s->job[i].stretch = v[2 * (size_t)n + i];
        o->jobs_over_leaves += j->leaves > j->min_leaves;
        o->jobs_over_nodes += j->nodes > j->min_nodes;
        excess += (double)(j->leaves - j->min_leaves);
        ratio_w += (double)j->spec.gpus * j->leaves / j->min_leaves;
        gpu_sum += j->spec.gpus;
    }
    cluster_stat_of(v, n, &o->wait_s);
    cluster_stat_of(v + n, n, &o->slowdown);
    cluster_stat_of(v + 2 * (size_t)n, n, &o->stretch);
    cluster_stat_of(v + 3 * (size_t)n, n, &o->job_goodput);
    free(v);
    if (s->held) { /* at the GPUs held */
        o->rework_gpu_s = s->lost_el_gpu_s[0];
        o->ckpt_gpu_s = s->lost_el_gpu_s[1];
        o->restart_gpu_s = s->lost_el_gpu_s[2];
    }
    o->interference_gpu_s = s->c->pacer && s->is_disrupt ? s->interf_gpu_s
                                                         : o->interference_gpu_s;
    o->resizes = s->resizes;
    o->grown_gpu_s = s->grown_gpu_s;
    o->preemptions = s->preemptions;
    o->interruptions = s->interruptions;
    cluster_fail_result(s, o);
    o->down_gpu_s = s->area_down;
    o->lost_gpu_s = o->rework_gpu_s + o->ckpt_gpu_s + o->restart_gpu_s;
    o->goodput = busy > 0 ? useful / busy : 0;
    o->retimes = s->retimes;
    o->end_s = T;
    o->busy_gpu_s = busy;
    o->idle_gpu_s = s->area_free;
    o->capacity_gpu_s = (double)s->c->gpus * T;
    o->utilisation = T > 0 ? busy / o->capacity_gpu_s : 0;
    o->queue_mean = T > 0 ? s->area_queue / T : 0;
    o->queue_max = s->queue_max;
    o->backfilled = s->backfilled;
    o->excess_leaves_mean = excess / n;
    o->leaf_ratio_gpu_mean = ratio_w / gpu_sum;
    return 0;
}

static void sim_free(cluster_sim *s)
{
    free(s->queue);
    free(s->running);
    free(s->run_pos);
    free(s->owner);
    free(s->node_free);
    free(s->leaf_free);
    free(s->su_free);
    free(s->alloc);
    free(s->alloc_at);
    free(s->pick);
    free(s->order);
    free(s->ends);
    free(s->steps);
    free(s->node_busy);
    cluster_pace_free(s);
    cluster_disrupt_free(s);
    cluster_elastic_free(s);
    sim_engine_destroy(s->eng);
}

static int sim_init(cluster_sim *s, const cluster_job_spec *spec, const uint32_t *min)
{
    const cluster_config *c = s->c;
    uint32_t n = s->n_job;
    s->n_nodes = c->gpus / c->node_gpus;
    s->n_leaves = c->gpus / c->leaf_gpus;
    s->n_sus = ceil_div(c->gpus, c->su_gpus);
    uint32_t scratch = s->n_nodes > n ? s->n_nodes : n;
    s->eng = sim_engine_create();
    s->queue = malloc((size_t)n * sizeof *s->queue);
    s->running = malloc((size_t)n * sizeof *s->running);
    s->run_pos = malloc((size_t)n * sizeof *s->run_pos);
    s->owner = malloc((size_t)c->gpus * sizeof *s->owner);
    s->node_free = malloc((size_t)s->n_nodes * sizeof *s->node_free);
    s->leaf_free = malloc((size_t)s->n_leaves * sizeof *s->leaf_free);
    s->su_free = malloc((size_t)s->n_sus * sizeof *s->su_free);
    s->alloc_at = malloc((size_t)n * sizeof *s->alloc_at);
    s->pick = malloc((size_t)c->gpus * sizeof *s->pick);
    s->order = malloc((size_t)scratch * sizeof *s->order);
    s->ends = malloc((size_t)scratch * sizeof *s->ends);
    s->node_busy = calloc(s->n_nodes, sizeof *s->node_busy);
    s->is_disrupt = c->preempt || c->n_resv || c->fail.rate_per_node_s > 0;
    int is_elastic = 0; /* elastic jobs run in segments (cluster_preempt.c) */
    for (uint32_t i = 0; c->elastic && i < n && !is_elastic; i++)
        is_elastic = min && min[i] && min[i] < spec[i].gpus;
    s->is_disrupt |= is_elastic;
    uint64_t total = 0;
    for (uint32_t i = 0; s->alloc_at && i < n; i++) {
        s->alloc_at[i] = total;
        total += spec[i].gpus;
    }
    s->alloc = malloc((size_t)(total ? total : 1) * sizeof *s->alloc);
    if (!s->eng || !s->queue || !s->running || !s->run_pos || !s->owner || !s->node_free ||
        !s->leaf_free || !s->su_free || !s->alloc_at || !s->pick || !s->order || !s->ends ||
        !s->alloc || !s->node_busy || (c->pacer && cluster_pace_init(s)) ||
        (s->is_disrupt && cluster_disrupt_init(s)) || (is_elastic && cluster_elastic_init(s)))
        return -1;
    for (uint32_t g = 0; g < c->gpus; g++)
        s->owner[g] = CLUSTER_NONE;
    for (uint32_t i = 0; i < s->n_nodes; i++)
        s->node_free[i] = c->node_gpus;
    for (uint32_t i = 0; i < s->n_leaves; i++)
        s->leaf_free[i] = c->leaf_gpus;
    for (uint32_t i = 0; i < s->n_sus; i++) /* the last SU may be partial */
        s->su_free[i] = i + 1 < s->n_sus ? c->su_gpus : c->gpus - i * c->su_gpus;
    s->free_gpus = c->gpus;
    for (uint32_t i = 0; i < n; i++) {
        memset(&s->job[i], 0, sizeof s->job[i]);
        s->job[i].spec = spec[i];
        s->job[i].min_gpus = min ? min[i] : 0;
        s->job[i].start_s = s->job[i].end_s = -1;
        s->job[i].reserve_s = -1;
        s->job[i].evictor_priority_min = INT32_MAX;
        if (s->is_disrupt)
            s->left_s[i] = spec[i].duration_s;
    }
    return 0;
}

int cluster_simulate(const cluster_config *c, cluster_result *out, sim_error *err)
{
    memset(out, 0, sizeof *out);
    cluster_job_spec *spec = NULL;
    uint32_t n = 0;
    int rc = cluster_jobs_make(c, &spec, &n, err);
    if (rc)
        return rc;
    cluster_sim s = {.c = c, .n_job = n, .err = err};
    uint32_t *min = c->jobs ? (uint32_t *)c->min_gpus : NULL;
    if (!c->jobs && c->stream.elastic_share > 0 && (min = malloc((size_t)n * sizeof *min)))
        cluster_jobs_min(c, spec, n, min);
    int is_min_ok = c->jobs || !(c->stream.elastic_share > 0) || min;
    s.job = malloc((size_t)n * sizeof *s.job);
    int is_init = is_min_ok && s.job && !sim_init(&s, spec, min);
    if (!c->jobs)
        free(min);
    if (!is_init) {
        free(spec);
        free(s.job);
        sim_free(&s);
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "cluster: out of memory");
    }
    free(spec);
    cluster_record(&s); /* the idle cluster at 0 */
    if (!sim_schedule_at(s.eng, s.job[0].spec.submit_s, 1, KIND_CLUSTER_ARRIVAL, on_arrival,
                         &s, 0))
        s.failed = 1;
    if (s.is_disrupt && cluster_fail_begin(&s))
        s.failed = 1;
    if (!s.failed && sim_run(s.eng, INFINITY) == SIM_RUN_FAILED)
        s.failed = 1;
    cluster_account(&s);
    if (!s.failed && (s.queue_n || s.running_n || s.arrived != n))
        s.failed = 1; /* every job fits the empty cluster, so the drain ends them all */
    if (s.failed && s.pacer_rc)
        rc = s.pacer_rc; /* err filled by the pacer */
    else if (s.failed)
        rc = sim_error_set(err, SIM_ERR_INTERNAL, NULL, 0, "cluster: the simulation stopped "
                           "(out of memory, or a placement gave a GPU twice)");
    else
        rc = results(&s, out, err);
    out->n_jobs = n;
    out->events = sim_events_fired(s.eng);
    out->digest = sim_digest(s.eng);
    if (!rc) { /* the steps move to the result */
        out->steps = s.steps;
        out->n_steps = s.n_steps;
        s.steps = NULL;
    }
    sim_free(&s);
    if (rc) {
        free(s.job);
        out->jobs = NULL;
        return rc;
    }
    out->jobs = s.job;
    return 0;
}

void cluster_result_free(cluster_result *r)
{
    if (!r)
        return;
    free(r->jobs);
    free(r->steps);
    r->jobs = NULL;
    r->steps = NULL;
    r->n_steps = 0;
}
