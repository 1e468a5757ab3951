/* hubs_moves.c - moving running jobs between hubs (hubs.h max_moves;
 * docs/hubs.md "Moving running jobs").
 *
 * After every hub is simulated with its placed jobs, a running deferrable
 * training job (slack > 0) at hub A may checkpoint and move to a hub B of a
 * better policy key, at an instant B's busy GPUs fall (GPUs free up there),
 * when B would have the job's GPUs free and nothing queued at its arrival
 * (in B's simulation so far) and the key over the rest of the work pays
 * for the move:
 *
 *   key_B x (r + T_move / run_B) < key_A x r
 *
 * r the fraction of its work left at the checkpoint, run_X its whole run at
 * X, T_move = (dataset + result) x 8 / bandwidth + RTT(A, B) + restart. It
 * is submitted at B at the checkpoint + (dataset + result) x 8 / bandwidth +
 * RTT(A, B) and runs there restart + r x run_B. The earliest such instant
 * over all jobs and hubs (ties: the lower job, then the lesser key, then the
 * lower hub) is taken, A and B are simulated again, and so on while any is
 * found: a move changes nothing before its checkpoint (the hubs' runs are
 * causal), so the instants only grow. A segment whose start moved (a
 * scheduler reading the shorter run) moves its checkpoint with it: the
 * moves' arrivals are settled until none changes. Each job moves at most
 * max_moves times.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hubs_internal.h"

/* the transfer of job j's dataset and result (its checkpoint) from a to b */
static double carry_s(const hubs_config *c, const hubs_job_spec *j, unsigned a, unsigned b)
{
    return (j->dataset_tb + j->result_tb) * 8e12 / c->bandwidth_bps + c->hub_rtt_s[a][b];
}

/* the job's current last segment: its hub, when its work starts, its end,
 * the fraction done before it, and its start + run (its checkpoint's time) */
typedef struct seg { unsigned hub; double work_s, end_s, frac0; } seg;

static seg last_seg(const hubs_config *c, const hubs_result *r, const uint32_t *last, uint32_t i)
{
    if (last[i] == HUBS_NONE)
        return (seg){r->jobs[i].hub, r->jobs[i].start_s, r->jobs[i].end_s, 0};
    const hubs_move *m = &r->moves[last[i]];
    return (seg){m->to, m->start_s + c->restart_s, m->end_s, m->frac};
}

/* the last step at or before t (the steps start at 0) */
static uint32_t step_at(const cluster_result *cr, double t)
{
    uint32_t lo = 0, hi = cr->n_steps; /* the answer in [lo, hi) */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (cr->steps[mid].t_s <= t)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* the earliest instant >= lo at which job i (segment s at hub a) would move
 * to hub b (INFINITY: none) */
static double earliest(const hubs_config *c, const hubs_job_spec *j, const seg *s, unsigned b,
                       double ka, double kb, const cluster_result *cb, double lo)
{
    double run_a = hubs_run_time_s(&c->hubs[s->hub], j), run_b = hubs_run_time_s(&c->hubs[b], j);
    double carry = carry_s(c, j, s->hub, b), t_move = carry + c->restart_s;
    uint32_t n = hubs_job_gpus(&c->hubs[b], j);
    for (uint32_t k = step_at(cb, lo); k < cb->n_steps; k++) {
        double t = cb->steps[k].t_s;
        if (t >= s->end_s)
            break;
        if (!k || t < lo || t <= s->work_s || cb->steps[k].busy_gpus >= cb->steps[k - 1].busy_gpus)
            continue;
        double left = 1 - s->frac0 - (t - s->work_s) / run_a;
        if (!(kb * (left + t_move / run_b) < ka * left))
            break; /* the fraction left only falls: no later instant pays */
        const cluster_step *at = &cb->steps[step_at(cb, t + carry)];
        if (at->busy_gpus + (uint64_t)n <= c->hubs[b].gpus && !at->queue)
            return t;
    }
    return INFINITY;
}

/* the moves' checkpoints follow their segments' starts (settled): hub h
 * marked in dirty when a segment's arrival there changed; 1 when any did */
static int follow(const hubs_config *c, hubs_result *r, int *dirty)
{
    int any = 0;
    for (uint32_t m = 0; m < r->n_moves; m++) {
        hubs_move *x = &r->moves[m];
        double ckpt = x->prev == HUBS_NONE
                          ? r->jobs[x->job].start_s + r->jobs[x->job].seg_s
                          : r->moves[x->prev].start_s + r->moves[x->prev].seg_s;
        if (ckpt == x->ckpt_s)
            continue;
        x->ckpt_s = ckpt;
        x->arrive_s = ckpt + carry_s(c, &c->jobs[x->job], x->from, x->to);
        dirty[x->to] = any = 1;
    }
    return any;
}

static int resimulate(const hubs_config *c, const cluster_config *tmpl, hubs_result *r,
                      cluster_result *all, hubs_order *ord, cluster_job_spec *spec, int *dirty,
                      sim_error *err)
{
    for (unsigned h = 0; h < c->n_hubs; h++) {
        if (!dirty[h])
            continue;
        dirty[h] = 0;
        cluster_result_free(&all[h]);
        int rc = hubs_simulate_hub(c, tmpl, r, h, ord, spec, &all[h], err);
        if (rc)
            return rc;
    }
    return 0;
}

/* job i's checkpoint at t to hub b: its segment cut at t, the move added */
static void apply(const hubs_config *c, hubs_result *r, uint32_t *last, uint32_t i, unsigned b,
                  double t)
{
    const hubs_job_spec *j = &c->jobs[i];
    seg s = last_seg(c, r, last, i);
    double elapsed = t - s.work_s, start;
    if (last[i] == HUBS_NONE) {
        r->jobs[i].seg_s = elapsed;
        start = r->jobs[i].start_s + r->jobs[i].seg_s;
    } else {
        hubs_move *p = &r->moves[last[i]];
        p->seg_s = c->restart_s + elapsed;
        start = p->start_s + p->seg_s;
    }
    hubs_move *m = &r->moves[r->n_moves];
    memset(m, 0, sizeof *m);
    m->job = i;
    m->from = s.hub;
    m->to = b;
    m->prev = last[i];
    m->ckpt_s = start;
    m->arrive_s = start + carry_s(c, j, s.hub, b);
    m->frac = fmin(1, s.frac0 + elapsed / hubs_run_time_s(&c->hubs[s.hub], j));
    m->seg_s = c->restart_s + (1 - m->frac) * hubs_run_time_s(&c->hubs[b], j);
    m->tb = j->dataset_tb + j->result_tb;
    last[i] = r->n_moves++;
}

/* the next move: the earliest over every job that may move and every hub of
 * a better key; 0 when none (*job, *hub, *t set otherwise) */
static int next_move(const hubs_config *c, const hubs_result *r, const cluster_result *all,
                     const uint32_t *last, const uint8_t *count, double lo, uint32_t *job,
                     unsigned *hub, double *t)
{
    const hubs_policy *p = c->policy;
    double best = INFINITY, best_key = INFINITY;
    for (uint32_t i = 0; i < r->n_jobs; i++) {
        const hubs_job_spec *j = &c->jobs[i];
        if (j->kind != HUBS_TRAINING || !(j->slack_s > 0) || count[i] >= c->max_moves)
            continue;
        seg s = last_seg(c, r, last, i);
        if (s.end_s <= lo || s.end_s <= s.work_s)
            continue;
        double defer = 0, ka = p->key(c, j, s.hub, &defer);
        for (unsigned b = 0; b < c->n_hubs; b++) {
            if (b == s.hub || c->hubs[b].water_limit_l > 0 ||
                hubs_job_gpus(&c->hubs[b], j) > c->hubs[b].gpus ||
                (p->eligible && !p->eligible(c, j, b)))
                continue;
            double kb = p->key(c, j, b, &defer);
            if (!(kb < ka))
                continue;
            double at = earliest(c, j, &s, b, ka, kb, &all[b], lo);
            if (at < best || (at == best && i == *job && kb < best_key)) {
                best = at;
                best_key = kb;
                *job = i;
                *hub = b;
            }
        }
    }
    *t = best;
    return isfinite(best);
}

int hubs_moves_run(const hubs_config *c, const cluster_config *tmpl, hubs_result *r,
                   cluster_result *all, hubs_order *ord, cluster_job_spec *spec, sim_error *err)
{
    if (!c->max_moves || c->policy->strict)
        return 0; /* fixed and nearest: the key never improves at another hub they allow */
    uint64_t cap = (uint64_t)r->n_jobs * c->max_moves;
    r->moves = malloc(cap * sizeof *r->moves);
    uint32_t *last = malloc((size_t)r->n_jobs * sizeof *last);
    uint8_t *count = calloc(r->n_jobs, 1);
    int rc = r->moves && last && count
                 ? 0 : sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "hubs: out of memory");
    for (uint32_t i = 0; !rc && i < r->n_jobs; i++)
        last[i] = HUBS_NONE;
    double lo = 0;
    for (uint64_t round = 0; !rc && round < cap; round++) {
        uint32_t i = HUBS_NONE;
        unsigned b = 0;
        double t = 0;
        if (!next_move(c, r, all, last, count, lo, &i, &b, &t))
            break;
        unsigned a = last_seg(c, r, last, i).hub;
        apply(c, r, last, i, b, t);
        count[i]++;
        lo = t;
        int dirty[HUBS_MAX] = {0};
        dirty[a] = dirty[b] = 1;
        int settled = 0;
        for (uint32_t k = 0; !rc && !settled && k <= r->n_moves + 1; k++) {
            rc = resimulate(c, tmpl, r, all, ord, spec, dirty, err);
            settled = !rc && !follow(c, r, dirty);
        }
        if (!rc && !settled)
            rc = sim_error_set(err, SIM_ERR_INTERNAL, NULL, 0, "hubs: the moves' checkpoints "
                               "did not settle in %u rounds (an internal error, please report "
                               "it with the scenario)", r->n_moves + 2);
    }
    for (uint32_t i = 0; !rc && i < r->n_jobs; i++)
        if (last[i] != HUBS_NONE) {
            r->jobs[i].end_s = r->moves[last[i]].end_s;
            r->jobs[i].end_hub = r->moves[last[i]].to;
        }
    free(last);
    free(count);
    return rc;
}
