/* step_sm.c - SM sharing fed into the concurrent iteration's schedule
 * (step_des.c; docs/step.md "SM sharing in the schedule").
 *
 * Rule 1 of the step tier: while a collective's kernels run beside compute
 * they hold k of the GPU's S SMs, so the compute runs S/(S - k) as long.
 * The isolated iteration adds the DP reduction's share at the stage's end,
 * for the whole window its buckets run before the last backward ends
 * (bubbles counted as busy). Here it is fed into the schedule instead:
 * while n buckets of stage s's DP chains are in flight, every replica's
 * stage s computes at rate 1 / (1 + n q_s), q_s = k / (S - k) (n = 1 gives
 * rule 1 exactly; n chains at once add as n windows do in the isolated
 * rule). Each replica's stage has one compute timer at a time (a task's
 * end, or a segment's time in step_stagecoll.c), kept in work (seconds at
 * every SM); a change of the stage's rate re-times the armed timers, so a
 * slowed task delays whatever waits on it (the next stage's input, the
 * gradient buckets, the optimizer), and a bubble costs nothing.
 *
 * A timer armed while the rate is 1 and never re-timed fires at exactly
 * now + work, the time sim_schedule_in gives: without DP overlap nothing
 * moves.
 */
#include "step_des_internal.h"

#include <math.h>
#include <stdlib.h>

#include "event_kinds.h"

/* the compute rate of stage s now */
static double rate(const des *z, unsigned s)
{
    return 1 / (1 + z->sm_running[s] * z->sm_q[s]);
}

int step_sm_set_up(des *z)
{
    if (!z->o->concurrent || z->o->sm_stage_end)
        return 0;
    int any = 0;
    double *q = calloc(z->P, sizeof *q);
    if (!q)
        return step_no_memory(z->err);
    for (unsigned s = 0; s < z->P; s++) {
        q[s] = step_dp_sm_share(z->sr, z->w, z->dev, s, 0, &z->out->sm_contention_unpriced);
        any |= q[s] > 0;
    }
    if (!any) {
        free(q);
        return 0;
    }
    size_t ds = (size_t)z->D * z->P;
    z->sm_q = q;
    z->out->dp_sm_in_schedule = 1;
    z->sm_running = calloc(z->P, sizeof *z->sm_running);
    z->sm_timer = calloc(ds, sizeof *z->sm_timer);
    z->sm_task = calloc(ds * z->per_stage, sizeof *z->sm_task);
    if (!z->sm_running || !z->sm_timer || !z->sm_task)
        return step_no_memory(z->err);
    return 0;
}

void step_sm_free(des *z)
{
    free(z->sm_q);
    free(z->sm_running);
    free(z->sm_timer);
    free(z->sm_task);
}

/* a timer fires: what the slower SMs added goes to the running task (the
 * stage's next), then its handler runs */
static void fire(sim_engine *eng, void *ctx, uint64_t data)
{
    des *z = ctx;
    step_sm_timer *t = &z->sm_timer[data];
    t->event = 0;
    /* a timer never re-timed fires at exactly its nominal end: no rounding
     * noise is charged */
    double added = sim_now(eng) - t->nominal_end;
    if (added > 0)
        z->sm_task[data * z->per_stage + z->next[data]] += added;
    t->fn(eng, ctx, data);
}

int step_sm_arm(des *z, size_t ds, double work, unsigned kind, sim_handler_fn fn)
{
    unsigned s = (unsigned)(ds % z->P);
    if (!z->sm_q || !(z->sm_q[s] > 0))
        return sim_schedule_in(z->eng, work, 0, kind, fn, z, ds) ? 0 : step_no_memory(z->err);
    step_sm_timer *t = &z->sm_timer[ds];
    double now = sim_now(z->eng);
    *t = (step_sm_timer){.fn = fn, .kind = kind, .nominal_end = now + work, .mark = now,
                         .work = work};
    /* at rate 1, now + work / 1: the time sim_schedule_in would give */
    t->event = sim_schedule_at(z->eng, now + work / rate(z, s), 0, kind, fire, z, ds);
    return t->event ? 0 : step_no_memory(z->err);
}

void step_sm_dp(des *z, unsigned s, int delta)
{
    if (!z->sm_q || !(z->sm_q[s] > 0))
        return;
    double before = rate(z, s), now = sim_now(z->eng);
    z->sm_running[s] = (unsigned)((int)z->sm_running[s] + delta);
    double after = rate(z, s);
    for (unsigned d = 0; d < z->D; d++) {
        step_sm_timer *t = &z->sm_timer[(size_t)d * z->P + s];
        if (!t->event)
            continue;
        t->work = fmax(0, t->work - (now - t->mark) * before);
        t->mark = now;
        sim_cancel(z->eng, t->event);
        t->event = sim_schedule_at(z->eng, now + t->work / after, 0, t->kind, fire, z,
                                   (size_t)d * z->P + s);
        if (!t->event) {
            step_des_fail(z, step_no_memory(z->err));
            return;
        }
    }
}

/* the index on stage s of the task (chunk, micro-batch, direction), or
 * per_stage when there is none */
static size_t find_task(const des *z, unsigned s, unsigned chunk, unsigned mb, int backward)
{
    for (size_t k = 0; k < z->per_stage; k++) {
        const sched_task *t = &z->order[(size_t)s * z->per_stage + k];
        if (t->chunk == chunk && t->microbatch == mb && t->backward == backward)
            return k;
    }
    return z->per_stage;
}

double step_sm_on_path(const des *z, unsigned d)
{
    if (!z->sm_task)
        return 0;
    unsigned P = z->P, s = 0;
    size_t n = z->per_stage, last = n - 1;
    for (unsigned r = 1; r < P; r++) /* the stage whose last task ends last */
        if (z->t_end[((size_t)d * P + r) * n + last] > z->t_end[((size_t)d * P + s) * n + last])
            s = r;
    double sum = 0;
    size_t k = last;
    for (size_t step = 0; step < (size_t)P * n; step++) { /* each task at most once */
        size_t at = ((size_t)d * P + s) * n + k;
        sum += z->sm_task[at];
        if (k > 0 && z->t_start[at] == z->t_end[at - 1]) {
            k--;
            continue;
        }
        const sched_task *t = &z->order[(size_t)s * n + k];
        unsigned j = t->chunk * P + s, from;
        if (!t->backward && j > 0)
            from = j - 1;
        else if (t->backward && j + 1 < z->n_pos)
            from = j + 1;
        else
            break; /* the pipeline's first task */
        s = from % P;
        k = find_task(z, s, from / P, t->microbatch, t->backward);
        if (k == n)
            break;
    }
    return sum;
}
