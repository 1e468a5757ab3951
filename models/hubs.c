/* hubs.c - placement across hubs, the fluid backlog, the backbone, the
 * per-hub cluster simulations and the totals (hubs.h; docs/hubs.md). */
#include "hubs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hubs_internal.h"

static int bad(sim_error *err, const char *what)
{
    return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "hubs: %s", what);
}

/* can job j run at hub h at all (its GPUs there within the hub's) */
static int fits(const hubs_config *c, const hubs_job_spec *j, unsigned h)
{
    return hubs_job_gpus(&c->hubs[h], j) <= c->hubs[h].gpus;
}

int hubs_config_check(const hubs_config *c, sim_error *err)
{
    if (c->n_hubs < 1 || c->n_hubs > HUBS_MAX)
        return bad(err, "1 to 32 hubs");
    if (c->n_origins < 1 || c->n_origins > HUBS_MAX_ORIGINS)
        return bad(err, "1 to 8 origins");
    if (!c->policy)
        return bad(err, "no policy");
    if (c->policy == hubs_policy_find("fixed") && c->fixed_hub >= c->n_hubs)
        return bad(err, "the fixed policy needs a hub");
    if (!(c->bandwidth_bps > 0) || !isfinite(c->bandwidth_bps))
        return bad(err, "the bandwidth must be above 0");
    if (!(c->cost_per_tb >= 0) || !(c->max_wait_s >= 0))
        return bad(err, "cost per TB and max-wait must not be negative");
    if (c->max_moves > HUBS_MAX_MOVES || (c->max_moves && (c->backbone || c->pacers.make)) ||
        !(c->restart_s >= 0))
        return bad(err, "moves: at most 16 a job, a restart time not negative, and neither "
                   "a backbone nor a fabric at the hubs");
    if (!c->jobs || c->n_jobs < 1)
        return bad(err, "no jobs");
    uint32_t largest = 0;
    for (unsigned h = 0; h < c->n_hubs; h++) {
        if (!c->hubs[h].gpus)
            return bad(err, "a hub without GPUs");
        if (!(c->hubs[h].interf_scale >= 0 && c->hubs[h].interf_scale <= 1e6))
            return bad(err, "a hub's interference scale must be 0 (1) or positive, at most 1e6");
        if (!(c->hubs[h].time_scale >= 0 && c->hubs[h].time_scale <= 1e6) ||
            !(c->hubs[h].serving_scale >= 0 && c->hubs[h].serving_scale <= 1e6))
            return bad(err, "a hub's time scales must be 0 (1) or positive, at most 1e6");
        largest = c->hubs[h].gpus > largest ? c->hubs[h].gpus : largest;
    }
    for (uint32_t i = 0; i < c->n_jobs; i++) {
        const hubs_job_spec *j = &c->jobs[i];
        if (j->gpus > largest)
            return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "hubs: a job of %u GPUs fits no "
                                 "hub (the largest has %u)", j->gpus, largest);
        unsigned h = 0;
        while (h < c->n_hubs && !fits(c, j, h))
            h++;
        if (h == c->n_hubs)
            return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "hubs: a serving job of %u GPUs "
                                 "fits no hub at the hubs' GPU speeds (at %s it needs %u of "
                                 "%u GPUs)", j->gpus, c->hubs[0].name,
                                 hubs_job_gpus(&c->hubs[0], j), c->hubs[0].gpus);
        if (j->origin >= c->n_origins || !(j->duration_s > 0) || !j->gpus ||
            !(j->dataset_tb >= 0) || !(j->result_tb >= 0) || (i && j->arrival_s < j[-1].arrival_s))
            return bad(err, "a bad job (origin, GPUs, duration, sizes or arrival order)");
        for (unsigned h = 0; c->backbone && h < c->n_hubs; h++)
            if (!c->backbone->has[j->origin][h])
                return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "hubs: the backbone has no "
                                     "route from %s to %s", c->origin[j->origin],
                                     c->hubs[h].name);
    }
    return 0;
}

double hubs_run_time_s(const hubs_hub *h, const hubs_job_spec *j)
{
    return h->time_scale > 0 && j->kind != HUBS_SERVING ? j->duration_s * h->time_scale
                                                        : j->duration_s;
}

double hubs_interf_scale(const hubs_hub *h, const hubs_job_spec *j)
{
    if (h->interf_job)
        return h->interf_job[j - h->interf_jobs];
    return h->interf_scale > 0 ? h->interf_scale : 1;
}

double hubs_expected_run_s(const hubs_hub *h, const hubs_job_spec *j)
{
    double run_s = hubs_run_time_s(h, j);
    double x = hubs_interf_scale(h, j);
    return x != 1 ? run_s * x : run_s;
}

double hubs_link_cost(const hubs_config *c, const hubs_job_spec *j, uint32_t h, double tb)
{
    return c->backbone ? tb * c->backbone->path[j->origin][h].cost_per_tb : 0;
}

uint32_t hubs_job_gpus(const hubs_hub *h, const hubs_job_spec *j)
{
    if (j->kind != HUBS_SERVING || !(h->serving_scale > 0) || h->serving_scale == 1)
        return j->gpus;
    /* the 1e-9 keeps a product that rounding put a hair above a whole number
     * (8 x 2.0000000000000004) on it */
    double g = ceil((double)j->gpus * h->serving_scale - 1e-9);
    return g < 1 ? 1 : g > 4e9 ? UINT32_MAX : (uint32_t)g;
}

/* (time, index) pairs sorted by time then index: the FIFO orders */
typedef hubs_order order;

static int cmp_order(const void *a, const void *b)
{
    const order *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* the hub the policy picks for job j at its arrival, given the estimates */
static uint32_t pick(const hubs_config *c, const hubs_job_spec *j, const double *est,
                     const hubs_water *water, double *defer, int *fallback,
                     int *passed)
{
    const hubs_policy *p = c->policy;
    int any = 0;
    for (unsigned h = 0; h < c->n_hubs && !any; h++)
        any = fits(c, j, h) && (!p->eligible || p->eligible(c, j, h));
    uint32_t best = HUBS_NONE, least = HUBS_NONE;
    double best_key = INFINITY;
    for (unsigned h = 0; h < c->n_hubs; h++) {
        if (!fits(c, j, h) || (any && p->eligible && !p->eligible(c, j, h)))
            continue;
        if (least == HUBS_NONE || est[h] < est[least])
            least = h;
        if (!p->strict && est[h] > c->max_wait_s)
            continue;
        double d = 0, k = p->key(c, j, h, &d);
        if (!p->strict && hubs_water_over(c, water, j, h, j->arrival_s + d, est[h])) {
            *passed = 1;
            continue;
        }
        if (best == HUBS_NONE || k < best_key) {
            best = h;
            best_key = k;
            *defer = d;
        }
    }
    if (best == HUBS_NONE) { /* none within max-wait: the least estimated wait */
        *fallback = 1;
        *defer = 0;
        p->key(c, j, least, defer); /* its deferral at that hub */
        return least;
    }
    if (!any && p->eligible) /* no hub within the bound: the least RTT */
        for (unsigned h = 0; h < c->n_hubs; h++)
            if (fits(c, j, h) &&
                c->hubs[h].rtt_s[j->origin] < c->hubs[best].rtt_s[j->origin])
                best = h;
    return best;
}

_Static_assert(sizeof ((hubs_routes *)0)->path / sizeof ((hubs_routes *)0)->path[0] ==
               HUBS_MAX_ORIGINS && sizeof ((hubs_routes *)0)->path[0] /
               sizeof ((hubs_routes *)0)->path[0][0] == HUBS_MAX, "hubs_routes' sizes");

/* the link figures of one filling into r: bits and busy time summed, the
 * peak the most (two fillings, datasets then results, add up; one is the
 * figures themselves) */
static void add_use(const hubs_config *c, hubs_result *r, const hubs_link_use *use)
{
    for (unsigned d = 0; d < 2 * c->backbone->bb.n_links; d++) {
        r->link_bits[d] += use->bits[d];
        r->link_busy_s[d] += use->busy_s[d];
        r->link_peak_bps[d] = fmax(r->link_peak_bps[d], use->peak_bps[d]);
    }
}

/* the backbone's flows of every job: which 0, the datasets from their
 * readiness; 1, the results from their ends; 2, both in one filling. Each
 * job's time at the far end and the wait sharing caused */
static int backbone_run(const hubs_config *c, hubs_result *r, int which, sim_error *err)
{
    uint32_t n = r->n_jobs, m = which == 2 ? 2 * n : n;
    hubs_flow *f = malloc((size_t)(m ? m : 1) * sizeof *f);
    hubs_link_use *use = calloc(1, sizeof *use);
    if (!f || !use) {
        free(f);
        free(use);
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "hubs: out of memory");
    }
    for (uint32_t k = 0; k < m; k++) {
        uint32_t i = k < n ? k : k - n;
        int out = which == 2 ? k >= n : which;
        const hubs_job_spec *j = &c->jobs[i];
        const hubs_job *o = &r->jobs[i];
        f[k] = (hubs_flow){out ? o->end_s : j->arrival_s + o->defer_s,
                           (out ? j->result_tb : j->dataset_tb) * 8e12,
                           &c->backbone->path[j->origin][o->hub], out, 0, 0};
    }
    int rc = hubs_flows_use(&c->backbone->bb, f, m, use, err);
    if (!rc)
        add_use(c, r, use);
    for (uint32_t k = 0; !rc && k < m; k++) {
        hubs_job *o = &r->jobs[k < n ? k : k - n];
        const hubs_path *p = f[k].path;
        double alone = f[k].bits > 0 ? f[k].bits / p->bottleneck_bps : 0;
        double share = f[k].slowed ? fmax(0, f[k].done_s - f[k].start_s - alone) : 0;
        double at = f[k].bits > 0 ? f[k].done_s + p->rtt_s : f[k].start_s;
        if (f[k].reverse) {
            o->back_done_s = at;
            o->back_wait_s = share;
            r->share_out_s += share;
        } else {
            o->in_start_s = f[k].start_s;
            o->submit_s = at;
            o->in_share_s = share;
            r->share_in_s += share;
        }
    }
    free(f);
    free(use);
    return rc;
}

static int backbone_in(const hubs_config *c, hubs_result *r, sim_error *err)
{
    return backbone_run(c, r, 0, err);
}

int hubs_place(const hubs_config *c, hubs_result *out, sim_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = hubs_config_check(c, err);
    if (rc)
        return rc;
    out->n_jobs = c->n_jobs;
    out->n_hubs = c->n_hubs;
    out->jobs = calloc(c->n_jobs, sizeof *out->jobs);
    order *ord = malloc((size_t)c->n_jobs * sizeof *ord);
    hubs_water *water = hubs_water_create(c);
    hubs_gang *gang = c->gang_backlog ? hubs_gang_create(c) : NULL;
    if (!out->jobs || !ord || !water || (c->gang_backlog && !gang)) {
        free(ord);
        hubs_water_free(water);
        hubs_gang_free(gang);
        hubs_result_free(out);
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "hubs: out of memory");
    }
    double backlog[HUBS_MAX] = {0}, est[HUBS_MAX], t_prev = 0;
    out->shifts_nothing = c->policy == hubs_policy_find("follow-the-renewables");
    for (unsigned h = 0; h < c->n_hubs; h++)
        if (c->hubs[h].carbon_hourly && c->hubs[h].n_carbon_hours)
            out->shifts_nothing = 0;
    for (uint32_t i = 0; i < c->n_jobs && !rc; i++) {
        const hubs_job_spec *j = &c->jobs[i];
        for (unsigned h = 0; h < c->n_hubs; h++) { /* drain at the hub's GPUs */
            backlog[h] = fmax(0, backlog[h] - c->hubs[h].gpus * (j->arrival_s - t_prev));
            est[h] = gang ? hubs_gang_wait(gang, h, hubs_job_gpus(&c->hubs[h], j), j->arrival_s,
                                           hubs_expected_run_s(&c->hubs[h], j))
                          : backlog[h] / c->hubs[h].gpus;
        }
        t_prev = j->arrival_s;
        hubs_job *o = &out->jobs[i];
        int fallback = 0, passed = 0;
        o->hub = pick(c, j, est, water, &o->defer_s, &fallback, &passed);
        o->end_hub = o->hub;
        out->fallbacks += (uint32_t)fallback;
        out->water_passes += (uint32_t)passed;
        hubs_water_commit(c, water, j, o->hub, j->arrival_s + o->defer_s, est[o->hub]);
        o->est_wait_s = est[o->hub];
        const hubs_hub *at = &c->hubs[o->hub];
        backlog[o->hub] += (double)hubs_job_gpus(at, j) * hubs_expected_run_s(at, j);
        if (gang && hubs_gang_commit(gang, o->hub, hubs_job_gpus(at, j), j->arrival_s,
                                     hubs_expected_run_s(at, j)))
            rc = sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "hubs: out of memory");
        o->rtt_s = c->hubs[o->hub].rtt_s[j->origin];
        o->slo_violation = j->kind == HUBS_SERVING && j->rtt_bound_s > 0 &&
                           o->rtt_s > j->rtt_bound_s;
        ord[i] = (order){j->arrival_s + o->defer_s, i};
    }
    if (rc) {
        free(ord);
        hubs_water_free(water);
        hubs_gang_free(gang);
        hubs_result_free(out);
        return rc;
    }
    if (c->backbone) {
        for (unsigned h = 0; h < c->n_hubs; h++)
            out->water_est_l[h] = hubs_water_fullest(c, water, h);
        free(ord);
        hubs_water_free(water);
        hubs_gang_free(gang);
        rc = backbone_in(c, out, err);
        if (rc)
            hubs_result_free(out);
        return rc;
    }
    /* the inbound links: FIFO by readiness */
    qsort(ord, c->n_jobs, sizeof *ord, cmp_order);
    double free_in[HUBS_MAX] = {0};
    for (uint32_t k = 0; k < c->n_jobs; k++) {
        uint32_t i = ord[k].i;
        const hubs_job_spec *j = &c->jobs[i];
        hubs_job *o = &out->jobs[i];
        o->in_start_s = o->submit_s = ord[k].t;
        if (j->dataset_tb > 0) {
            o->in_start_s = fmax(ord[k].t, free_in[o->hub]);
            double x = j->dataset_tb * 8e12 / c->bandwidth_bps;
            free_in[o->hub] = o->in_start_s + x;
            o->submit_s = o->in_start_s + x + o->rtt_s;
        }
    }
    free(ord);
    for (unsigned h = 0; h < c->n_hubs; h++)
        out->water_est_l[h] = hubs_water_fullest(c, water, h);
    hubs_water_free(water);
    hubs_gang_free(gang);
    return 0;
}


/* hub h's jobs as a trace in submit order, simulated; their starts and ends
 * back into r->jobs */
int hubs_simulate_hub(const hubs_config *c, const cluster_config *tmpl, hubs_result *r,
                      unsigned h, order *ord, cluster_job_spec *spec, cluster_result *cr,
                      sim_error *err)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->n_jobs; i++)
        if (r->jobs[i].hub == h)
            ord[n++] = (order){r->jobs[i].submit_s, i};
    for (uint32_t m = 0; m < r->n_moves; m++) /* the segments moved here (hubs_moves.c) */
        if (r->moves[m].to == h)
            ord[n++] = (order){r->moves[m].arrive_s, r->n_jobs + m};
    memset(cr, 0, sizeof *cr);
    if (!n) { /* idle all along: one step of nothing */
        cr->steps = calloc(1, sizeof *cr->steps);
        cr->n_steps = 1;
        return cr->steps ? 0 : sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "hubs: out of memory");
    }
    qsort(ord, n, sizeof *ord, cmp_order);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = ord[k].i < r->n_jobs ? ord[k].i : r->moves[ord[k].i - r->n_jobs].job;
        const hubs_job_spec *j = &c->jobs[i];
        double run_s = ord[k].i >= r->n_jobs ? r->moves[ord[k].i - r->n_jobs].seg_s
                       : r->jobs[i].seg_s > 0 ? r->jobs[i].seg_s : hubs_run_time_s(&c->hubs[h], j);
        spec[k] = (cluster_job_spec){ord[k].t, hubs_job_gpus(&c->hubs[h], j), run_s,
                                     j->priority};
    }
    cluster_config cc = *tmpl;
    cc.gpus = c->hubs[h].gpus;
    if (cc.su_gpus > cc.gpus)
        cc.su_gpus = cc.gpus;
    cc.jobs = spec;
    cc.n_jobs = n;
    cc.pacer = NULL;
    cc.watch = NULL;
    if (c->pacers.make) {
        sim_error_clear(err);
        cc.pacer = c->pacers.make(c->pacers.ctx, h, err);
        if (!cc.pacer && err->code)
            return err->code;
    }
    int rc = cluster_simulate(&cc, cr, err);
    if (cc.pacer && c->pacers.done)
        c->pacers.done(c->pacers.ctx, h);
    if (rc)
        return rc;
    for (uint32_t k = 0; k < n; k++) {
        if (ord[k].i >= r->n_jobs) { /* a moved segment */
            hubs_move *m = &r->moves[ord[k].i - r->n_jobs];
            m->start_s = cr->jobs[k].start_s;
            m->end_s = cr->jobs[k].end_s;
            continue;
        }
        hubs_job *o = &r->jobs[ord[k].i];
        o->start_s = cr->jobs[k].start_s;
        if (!(o->seg_s > 0)) /* moved: its end is the last segment's (hubs_moves.c) */
            o->end_s = cr->jobs[k].end_s;
        o->interf_s = cc.pacer ? cr->jobs[k].interf_s : 0;
    }
    return 0;
}

/* Datasets and results on the backbone in one filling (hubs.h
 * "backbone_two_pass"): the results start at the jobs' ends, which depend on
 * when the datasets arrived, which depends on the results that shared
 * their links. From the hubs simulated with the datasets alone (hubs_place),
 * each round runs every flow in one filling at the last simulation's ends;
 * where a submission moved, the hubs are simulated again at the new ones,
 * until none moves (a hub where none moved keeps its simulation: the same
 * submissions give the same run). A round settles for good every job submitted no later
 * than the earliest that moved (a job's end, and so its result, only
 * depends on the submissions before it; a moved result starts after that
 * submission), at least one more each round: at most n + 1 rounds. all[h]:
 * hub h's simulation, replaced */
static int backbone_settle(const hubs_config *c, const cluster_config *tmpl, hubs_result *r,
                           cluster_result *all, order *ord, cluster_job_spec *spec,
                           sim_error *err)
{
    uint32_t n = r->n_jobs;
    double *prev = malloc((size_t)(n ? n : 1) * sizeof *prev);
    if (!prev)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "hubs: out of memory");
    int rc = 0, settled = 0;
    for (uint32_t round = 0; !rc && !settled && round <= n + 1; round++) {
        for (uint32_t i = 0; i < n; i++)
            prev[i] = r->jobs[i].submit_s;
        r->share_in_s = r->share_out_s = 0;
        memset(r->link_bits, 0, sizeof r->link_bits);
        memset(r->link_busy_s, 0, sizeof r->link_busy_s);
        memset(r->link_peak_bps, 0, sizeof r->link_peak_bps);
        rc = backbone_run(c, r, 2, err);
        r->backbone_rounds = round + 1;
        int moved[HUBS_MAX] = {0}; /* only these hubs are simulated again */
        settled = 1;
        for (uint32_t i = 0; !rc && i < n; i++)
            if (r->jobs[i].submit_s != prev[i]) {
                settled = 0;
                moved[r->jobs[i].hub] = 1;
            }
        for (unsigned h = 0; !rc && !settled && h < c->n_hubs; h++) {
            if (!moved[h])
                continue;
            cluster_result_free(&all[h]);
            rc = hubs_simulate_hub(c, tmpl, r, h, ord, spec, &all[h], err);
        }
    }
    free(prev);
    if (!rc && !settled)
        rc = sim_error_set(err, SIM_ERR_INTERNAL, NULL, 0, "hubs: the backbone's datasets and "
                           "results did not settle in %u rounds (an internal error, please "
                           "report it with the scenario)", n + 2);
    return rc;
}

/* the jobs placed at hub h (or, by_end_hub, ending there) in ord, by end; their count */
static uint32_t jobs_by_end(const hubs_result *r, unsigned h, int by_end_hub, order *ord)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->n_jobs; i++)
        if ((by_end_hub ? r->jobs[i].end_hub : r->jobs[i].hub) == h)
            ord[n++] = (order){r->jobs[i].end_s, i};
    qsort(ord, n, sizeof *ord, cmp_order);
    return n;
}

/* the results back on hub h's outbound link, FIFO by end; the hub's sums */
static void finish_hub(const hubs_config *c, hubs_result *r, unsigned h, order *ord,
                       double *wait, const cluster_result *cr)
{
    hubs_hub_result *o = &r->hub[h];
    uint32_t n;
    if (!c->backbone) { /* the results leave on the link of the hub each job ends at (with a
                           backbone: backbone_run; moves need none) */
        n = jobs_by_end(r, h, 1, ord);
        double free_out = 0;
        for (uint32_t k = 0; k < n; k++) {
            const hubs_job_spec *j = &c->jobs[ord[k].i];
            hubs_job *x = &r->jobs[ord[k].i];
            x->back_done_s = x->end_s;
            x->back_wait_s = 0;
            if (j->result_tb > 0) {
                double start = fmax(x->end_s, free_out);
                x->back_wait_s = start - x->end_s;
                free_out = start + j->result_tb * 8e12 / c->bandwidth_bps;
                x->back_done_s = free_out + c->hubs[h].rtt_s[j->origin];
            }
            if (x->hub != h) { /* moved here: its result's trip is this hub's */
                o->tb_out += j->result_tb;
                o->transfer_s += x->back_done_s - x->end_s;
                o->link_wait_s += x->back_wait_s;
            }
        }
    }
    n = jobs_by_end(r, h, 0, ord); /* in end order: the sums as they were before moves */
    double link_cost = 0;
    for (uint32_t k = 0; k < n; k++) {
        const hubs_job_spec *j = &c->jobs[ord[k].i];
        hubs_job *x = &r->jobs[ord[k].i];
        link_cost += hubs_link_cost(c, j, h, j->dataset_tb + j->result_tb);
        int ends_here = x->end_hub == h; /* else its result's trip is its last hub's */
        double back_wait = ends_here ? x->back_wait_s : 0;
        double ready = j->arrival_s + x->defer_s;
        o->jobs++;
        double run_s = hubs_run_time_s(&c->hubs[h], j);
        double gpus = (double)hubs_job_gpus(&c->hubs[h], j);
        o->gpu_s += gpus * (x->seg_s > 0 ? x->seg_s : run_s); /* moved: until its checkpoint */
        if (x->interf_s > 0) { /* only with a pacer: the sum stays as it was without */
            double more = gpus * x->interf_s;
            o->gpu_s += more;
            o->interf_gpu_s += more;
        }
        o->ref_gpu_s += (double)j->gpus * j->duration_s;
        o->tb_in += j->dataset_tb;
        o->tb_out += ends_here ? j->result_tb : 0;
        o->transfer_s += (x->submit_s - ready) + (ends_here ? x->back_done_s - x->end_s : 0);
        o->link_wait_s += (x->in_start_s - ready) + back_wait;
        if (c->backbone)
            o->link_wait_s += x->in_share_s;
        o->deferred_s += x->defer_s;
        if (j->kind == HUBS_SERVING) {
            o->serving_jobs++;
            o->serving_rtt_s_sum += x->rtt_s;
        }
        if (x->slo_violation) {
            o->slo_jobs++;
            o->slo_job_h += run_s / 3600;
        }
        wait[k] = x->start_s - x->submit_s;
    }
    o->data_cost = (o->tb_in + o->tb_out) * c->cost_per_tb + link_cost; /* + 0 without a
                                                                           backbone: exact */
    o->end_s = cr->end_s;
    o->wait_s = cr->wait_s;
    if (!n)
        memset(&o->wait_s, 0, sizeof o->wait_s);
    o->digest = cr->digest;
    o->events = cr->events;
}

int hubs_simulate(const hubs_config *c, const cluster_config *tmpl, hubs_result *r,
                  cluster_result *per_hub, sim_error *err)
{
    size_t cap = (size_t)r->n_jobs * (1 + (size_t)c->max_moves); /* jobs and moved segments */
    order *ord = malloc(cap * sizeof *ord);
    cluster_job_spec *spec = malloc(cap * sizeof *spec);
    double *wait = malloc((size_t)r->n_jobs * sizeof *wait);
    int rc = ord && spec && wait ? 0
                                 : sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "hubs: out of memory");
    hubs_hub_result *t = &r->total;
    memset(t, 0, sizeof *t);
    t->digest = 1469598103934665603ull; /* FNV-1a over the hubs' digests */
    uint32_t n_wait = 0;
    /* with a backbone the results share links across hubs: every hub's ends
     * first, then the results' flows, then the sums */
    cluster_result *all = NULL;
    if (!rc && (c->backbone || c->max_moves)) { /* moves: every hub's run first, too */
        all = per_hub ? per_hub : calloc(c->n_hubs, sizeof *all);
        if (!all)
            rc = sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "hubs: out of memory");
        for (unsigned h = 0; h < c->n_hubs && !rc; h++)
            rc = hubs_simulate_hub(c, tmpl, r, h, ord, spec, &all[h], err);
        if (!rc && c->backbone)
            rc = c->backbone_two_pass ? backbone_run(c, r, 1, err)
                                      : backbone_settle(c, tmpl, r, all, ord, spec, err);
        else if (!rc)
            rc = hubs_moves_run(c, tmpl, r, all, ord, spec, err);
    }
    for (unsigned h = 0; h < c->n_hubs && !rc; h++) {
        cluster_result one, *cr = all ? &all[h] : per_hub ? &per_hub[h] : &one;
        if (!all)
            rc = hubs_simulate_hub(c, tmpl, r, h, ord, spec, cr, err);
        if (rc)
            break;
        finish_hub(c, r, h, ord, wait + n_wait, cr);
        if (!per_hub)
            cluster_result_free(cr);
        hubs_hub_result *o = &r->hub[h];
        for (uint32_t m = 0; m < r->n_moves; m++) { /* the segments moved here */
            const hubs_move *x = &r->moves[m];
            if (x->to != h)
                continue;
            double gpus = (double)hubs_job_gpus(&c->hubs[h], &c->jobs[x->job]);
            o->moves_in++;
            o->gpu_s += gpus * x->seg_s;
            o->restart_gpu_s += gpus * c->restart_s;
            o->move_tb += x->tb;
            o->move_s += x->arrive_s - x->ckpt_s;
            o->data_cost += x->tb * c->cost_per_tb;
        }
        t->moves_in += o->moves_in;
        t->move_tb += o->move_tb;
        t->move_s += o->move_s;
        t->restart_gpu_s += o->restart_gpu_s;
        n_wait += o->jobs;
        t->jobs += o->jobs;
        t->serving_jobs += o->serving_jobs;
        t->gpu_s += o->gpu_s;
        t->interf_gpu_s += o->interf_gpu_s;
        t->ref_gpu_s += o->ref_gpu_s;
        t->transfer_s += o->transfer_s;
        t->link_wait_s += o->link_wait_s;
        t->serving_rtt_s_sum += o->serving_rtt_s_sum;
        t->slo_jobs += o->slo_jobs;
        t->slo_job_h += o->slo_job_h;
        t->deferred_s += o->deferred_s;
        t->events += o->events;
        t->end_s = fmax(t->end_s, o->end_s);
        for (int b = 0; b < 8; b++)
            t->digest = (t->digest ^ ((o->digest >> (8 * b)) & 0xff)) * 1099511628211ull;
    }
    double link_cost = 0;
    for (uint32_t i = 0; !rc && i < r->n_jobs; i++) { /* in job order: the same sum whatever
                                                         the placement */
        t->tb_in += c->jobs[i].dataset_tb;
        t->tb_out += c->jobs[i].result_tb;
        link_cost += hubs_link_cost(c, &c->jobs[i], r->jobs[i].hub,
                                    c->jobs[i].dataset_tb + c->jobs[i].result_tb);
    }
    t->data_cost = (t->tb_in + t->tb_out) * c->cost_per_tb + link_cost;
    if (r->n_moves) /* the moves' bytes (without moves: the sum of before, exactly) */
        t->data_cost += t->move_tb * c->cost_per_tb;
    if (!rc) {
        cluster_stat_of(wait, n_wait, &t->wait_s);
        hubs_set_horizon(c, r, t->end_s);
    }
    if (all && !per_hub) {
        if (rc) /* the hubs the sums did not reach */
            for (unsigned h = 0; h < c->n_hubs; h++)
                cluster_result_free(&all[h]);
        free(all);
    }
    free(ord);
    free(spec);
    free(wait);
    return rc;
}

void hubs_set_horizon(const hubs_config *c, hubs_result *r, double horizon_s)
{
    r->total.capacity_gpu_s = 0;
    for (unsigned h = 0; h < c->n_hubs; h++) {
        hubs_hub_result *o = &r->hub[h];
        o->capacity_gpu_s = c->hubs[h].gpus * horizon_s;
        o->utilisation = o->capacity_gpu_s > 0 ? o->gpu_s / o->capacity_gpu_s : 0;
        r->total.capacity_gpu_s += o->capacity_gpu_s;
    }
    r->horizon_s = horizon_s;
    r->total.utilisation = r->total.capacity_gpu_s > 0 ? r->total.gpu_s / r->total.capacity_gpu_s
                                                       : 0;
}

void hubs_total_energy(hubs_result *r)
{
    hubs_hub_result *t = &r->total;
    t->it_energy_j = t->facility_energy_j = t->energy_cost = t->co2_kg = t->water_l = 0;
    for (unsigned h = 0; h < r->n_hubs; h++) {
        t->it_energy_j += r->hub[h].it_energy_j;
        t->facility_energy_j += r->hub[h].facility_energy_j;
        t->energy_cost += r->hub[h].energy_cost;
        t->co2_kg += r->hub[h].co2_kg;
        t->water_l += r->hub[h].water_l;
    }
}

void hubs_result_free(hubs_result *r)
{
    if (!r)
        return;
    free(r->jobs);
    r->jobs = NULL;
    r->n_jobs = 0;
    free(r->moves);
    r->moves = NULL;
    r->n_moves = 0;
}
