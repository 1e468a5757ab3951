/* schedule.c - pipeline-parallel schedules (see schedule.h): build each
 * stage's task order, then time the tasks with one dependency sweep.
 * Invariant: a task's start is max(end of the stage's previous task, its
 * inputs' arrival), so the times are those of the DAG whatever order the
 * sweep visits the stages in. O(m v p) time and memory. */
#include "schedule.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#define FAIL(...) return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, __VA_ARGS__)

static const char *kind_name(int kind)
{
    switch (kind) {
    case SCHEDULE_1F1B: return "1F1B";
    case SCHEDULE_INTERLEAVED: return "interleaved 1F1B";
    case SCHEDULE_GPIPE: return "GPipe";
    default: return "?";
    }
}

static int times_ok(const double *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(t[i]) || t[i] < 0.0)
            return 0;
    return 1;
}

/* The k-th forward (or backward) of stage s, 0 <= k < m v. With v = 1 this
 * is micro-batch k, chunk 0. Interleaved (Megatron-LM,
 * get_model_chunk_id/get_microbatch_id_in_model_chunk): micro-batches go p
 * at a time through each chunk, chunks in order for forwards and in
 * reverse for backwards. */
static void task_at(unsigned p, unsigned v, size_t k, int backward, sched_task *t)
{
    unsigned c = (unsigned)((k / p) % v);
    t->chunk = backward ? v - 1 - c : c;
    t->microbatch = (unsigned)((k / ((size_t)p * v)) * p + k % p);
    t->backward = backward;
}

/* Fill one stage's 2 m v tasks in the order it runs them. */
static void stage_order(const sched_input *in, unsigned s, sched_task *t)
{
    unsigned p = in->pp, v = in->vpp;
    size_t n = (size_t)in->microbatches * v, w, r, k, i = 0;

    if (in->kind == SCHEDULE_GPIPE) {
        w = n; /* every forward first; the "steady" loop below is empty */
    } else if (in->kind == SCHEDULE_1F1B) {
        w = p - s - 1; /* Megatron forward_backward_pipelining_without_interleaving */
    } else {
        /* forward_backward_pipelining_with_interleaving */
        w = (size_t)(p - s - 1) * 2 + (size_t)(v - 1) * p;
    }
    if (w > n)
        w = n;
    r = n - w;
    for (k = 0; k < w; k++)
        task_at(p, v, k, 0, &t[i++]);
    for (k = 0; k < r; k++) {
        task_at(p, v, w + k, 0, &t[i++]);
        task_at(p, v, k, 1, &t[i++]);
    }
    for (k = r; k < n; k++)
        task_at(p, v, k, 1, &t[i++]);
    for (k = 0; k < 2 * n; k++)
        t[k].stage = s;
}

/* Check the input before anything is allocated (every refusal sched_run
 * documents but no memory and the deadlock). */
static int check_input(const sched_input *in, sim_error *err)
{
    if (in->kind != SCHEDULE_1F1B && in->kind != SCHEDULE_INTERLEAVED &&
        in->kind != SCHEDULE_GPIPE)
        FAIL("schedule: unknown pipeline schedule %d (1F1B, interleaved or GPipe)", in->kind);
    unsigned p = in->pp, v = in->vpp, m = in->microbatches;
    if (p == 0 || v == 0 || m == 0)
        FAIL("schedule: pipeline stages (%u), virtual chunks (%u) and micro-batches (%u) "
             "must all be >= 1", p, v, m);
    if (in->kind == SCHEDULE_INTERLEAVED) {
        if (v < 2)
            FAIL("schedule: interleaved 1F1B needs 2 or more virtual chunks per stage, got %u", v);
        if (m % p != 0)
            FAIL("schedule: interleaved 1F1B needs the micro-batches (%u) to be a multiple of "
                 "the pipeline stages (%u)", m, p);
    } else if (v != 1) {
        FAIL("schedule: %s runs one chunk per stage, got %u virtual chunks", kind_name(in->kind), v);
    }
    /* positions P = p v, tasks 2 m P; every array below is at most that */
    size_t P = (size_t)p * v, n = (size_t)m * v;
    if (P / v != p || n / v != m || P > SIZE_MAX / 2 / m / sizeof(sched_task))
        FAIL("schedule: %u stages x %u chunks x %u micro-batches is too many tasks", p, v, m);
    if (!in->t_forward || !in->t_backward)
        FAIL("schedule: forward and backward times are required");
    if (!times_ok(in->t_forward, P) || !times_ok(in->t_backward, P))
        FAIL("schedule: forward and backward times must be finite numbers of seconds >= 0");
    if ((in->t_send_forward && !times_ok(in->t_send_forward, P - 1)) ||
        (in->t_send_backward && !times_ok(in->t_send_backward, P - 1)))
        FAIL("schedule: transfer times must be finite numbers of seconds >= 0");
    return 0;
}

/* The dependency sweep's working state. */
typedef struct sweep {
    const sched_input *in;
    unsigned p, m;
    size_t P, n;          /* positions p v; tasks per stage and direction m v */
    sched_task *tasks;    /* stage s's 2 n tasks at s 2 n, in its order */
    /* end of forward / backward of (position j, micro-batch i) at j m + i; -1 = not yet */
    double *fend, *bend;
    double *free_s;       /* per stage: when its last placed task ends */
    size_t *next;         /* per stage: its next task to place */
    unsigned *stack;      /* worklist of stages to look at */
    unsigned char *queued;
} sweep;

/* Place stage s's tasks as far as their inputs allow. Returns how many. */
static size_t stage_advance(sweep *w, unsigned s)
{
    const sched_input *in = w->in;
    size_t placed = 0, m = w->m;
    while (w->next[s] < 2 * w->n) {
        sched_task *t = &w->tasks[s * 2 * w->n + w->next[s]];
        size_t j = (size_t)t->chunk * w->p + s, i = t->microbatch;
        double ready = 0.0, dur;
        if (!t->backward) {
            if (j > 0) {
                double e = w->fend[(j - 1) * m + i];
                if (e < 0.0)
                    break;
                ready = e + (in->t_send_forward ? in->t_send_forward[j - 1] : 0.0);
            }
            dur = in->t_forward[j];
        } else {
            ready = w->fend[j * m + i];
            if (ready < 0.0)
                break;
            if (j + 1 < w->P) {
                double e = w->bend[(j + 1) * m + i];
                if (e < 0.0)
                    break;
                e += in->t_send_backward ? in->t_send_backward[j] : 0.0;
                if (e > ready)
                    ready = e;
            }
            dur = in->t_backward[j];
        }
        t->start_s = ready > w->free_s[s] ? ready : w->free_s[s];
        t->end_s = t->start_s + dur;
        w->free_s[s] = t->end_s;
        (t->backward ? w->bend : w->fend)[j * m + i] = t->end_s;
        w->next[s]++;
        placed++;
    }
    return placed;
}

/* Sweep: run a stage as far as its inputs allow; whenever it advances,
 * its neighbours (the only stages its tasks feed) get another look.
 * Each look either advances or ends, so this is O(tasks). An empty
 * worklist with tasks left means the order itself waits in a cycle. */
static int sweep_run(sweep *w, sim_error *err)
{
    unsigned p = w->p;
    size_t n_done = 0, top = 0;
    for (unsigned s = p; s-- > 0;) {
        w->stack[top++] = s;
        w->queued[s] = 1;
    }
    while (top > 0) {
        unsigned s = w->stack[--top];
        w->queued[s] = 0;
        size_t placed = stage_advance(w, s);
        n_done += placed;
        if (placed) {
            unsigned nb[2] = {(s + 1) % p, (s + p - 1) % p};
            for (int k = 0; k < 2; k++)
                if (!w->queued[nb[k]]) {
                    w->stack[top++] = nb[k];
                    w->queued[nb[k]] = 1;
                }
        }
    }
    if (n_done == 2 * w->n * p)
        return 0;
    unsigned s = 0;
    while (w->next[s] == 2 * w->n)
        s++;
    const sched_task *t = &w->tasks[s * 2 * w->n + w->next[s]];
    return sim_error_set(err, SIM_ERR_INTERNAL, NULL, 0,
                         "schedule: %s order deadlocks (p %u, v %u, m %u): stage %u waits "
                         "forever at the %s of chunk %u micro-batch %u", kind_name(w->in->kind),
                         p, w->in->vpp, w->m, s, t->backward ? "backward" : "forward", t->chunk,
                         t->microbatch);
}

/* Per-stage busy and bubble time, the iteration, and per (chunk, stage)
 * the last backward's end and the first forward's start. */
static void summarise(size_t P, unsigned p, size_t total, sched_result *r)
{
    for (size_t j = 0; j < P; j++) {
        r->chunk_backward_end_s[j] = 0.0;
        r->first_forward_start_s[j] = INFINITY;
    }
    for (size_t k = 0; k < total; k++) {
        const sched_task *t = &r->tasks[k];
        size_t j = (size_t)t->chunk * p + t->stage;
        r->busy_s[t->stage] += t->end_s - t->start_s;
        if (t->end_s > r->iteration_s)
            r->iteration_s = t->end_s;
        if (t->backward && t->end_s > r->chunk_backward_end_s[j])
            r->chunk_backward_end_s[j] = t->end_s;
        if (!t->backward && t->start_s < r->first_forward_start_s[j])
            r->first_forward_start_s[j] = t->start_s;
    }
    for (unsigned s = 0; s < p; s++)
        r->bubble_s[s] = r->iteration_s - r->busy_s[s];
    r->n_tasks = total;
}

int sched_run(const sched_input *in, sched_result *out, sim_error *err)
{
    if (!in || !out)
        return sim_error_set(err, SIM_ERR_INTERNAL, NULL, 0,
                             "schedule: no input or no result record");
    int rc = check_input(in, err);
    if (rc)
        return rc;
    unsigned p = in->pp, v = in->vpp, m = in->microbatches;
    size_t P = (size_t)p * v, n = (size_t)m * v, total = 2 * (size_t)m * P;

    sched_result r = {0};
    r.tasks = malloc(total * sizeof *r.tasks);
    r.busy_s = calloc(p, sizeof *r.busy_s);
    r.bubble_s = calloc(p, sizeof *r.bubble_s);
    r.chunk_backward_end_s = malloc(P * sizeof *r.chunk_backward_end_s);
    r.first_forward_start_s = malloc(P * sizeof *r.first_forward_start_s);
    sweep w = {.in = in, .p = p, .m = m, .P = P, .n = n, .tasks = r.tasks,
               .fend = malloc(P * m * sizeof(double)), .bend = malloc(P * m * sizeof(double)),
               .free_s = calloc(p, sizeof(double)), .next = calloc(p, sizeof(size_t)),
               .stack = malloc(p * sizeof(unsigned)), .queued = calloc(p, 1)};
    if (!r.tasks || !r.busy_s || !r.bubble_s || !r.chunk_backward_end_s ||
        !r.first_forward_start_s || !w.fend || !w.bend || !w.free_s || !w.next || !w.stack ||
        !w.queued) {
        rc = sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "schedule: out of memory for %zu tasks",
                           total);
        goto done;
    }
    for (size_t i = 0; i < P * m; i++)
        w.fend[i] = w.bend[i] = -1.0;
    for (unsigned s = 0; s < p; s++)
        stage_order(in, s, r.tasks + s * 2 * n);
    rc = sweep_run(&w, err);
    if (!rc)
        summarise(P, p, total, &r);

done:
    free(w.fend);
    free(w.bend);
    free(w.free_s);
    free(w.next);
    free(w.stack);
    free(w.queued);
    if (rc != 0) {
        sched_result_free(&r);
        return rc;
    }
    *out = r;
    return 0;
}

void sched_result_free(sched_result *r)
{
    if (!r)
        return;
    free(r->tasks);
    free(r->busy_s);
    free(r->bubble_s);
    free(r->chunk_backward_end_s);
    free(r->first_forward_start_s);
    *r = (sched_result){0};
}
