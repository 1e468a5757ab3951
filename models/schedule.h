/* schedule.h - pipeline-parallel schedules: when every forward and backward
 * of every micro-batch runs on every pipeline stage in one iteration.
 *
 * Inputs are times, not operations: the step tier (step.h) prices one
 * forward and one backward of one micro-batch of every (stage, virtual
 * chunk) with the compute model and the communication it cannot hide, and
 * the point-to-point transfer between neighbouring stages. The schedule
 * then places the tasks:
 *   - GPipe: all forwards, then all backwards (Huang et al. 2019).
 *   - 1F1B: stage s runs min(p - s - 1, m) warm-up forwards, then one
 *     forward one backward, then the remaining backwards (PipeDream-Flush,
 *     Narayanan et al. 2021; Megatron-LM's default).
 *   - interleaved 1F1B with v virtual chunks per stage: Megatron-LM's
 *     order (Narayanan et al. 2021, section 2.2; megatron/core/
 *     pipeline_parallel/schedules.py, forward_backward_pipelining_with_
 *     interleaving); m must be a multiple of p. Stage s warms up with
 *     min((p - s - 1) 2 + (v - 1) p, m v) forwards, then as 1F1B. Its k-th
 *     forward runs chunk (k / p) mod v of micro-batch (k / (p v)) p + k mod p;
 *     its k-th backward the micro-batch given by the same formula, on chunk
 *     v - 1 - (k / p) mod v.
 * GPipe and 1F1B take vpp = 1. In each steady-state step the forward runs
 * before the backward.
 * A task starts when its stage is free and its input has arrived: the
 * forward of chunk c, stage s (model position j = c p + s) needs the forward
 * of position j - 1 plus the transfer; the backward of position j needs the
 * backward of j + 1 plus the transfer, and its own forward. Transfers run
 * on their own stream and do not occupy the stages.
 * Closed forms with free transfers and equal stages (t_f, t_b per
 * micro-batch of a whole stage): 1F1B and GPipe take (m + p - 1)(t_f + t_b),
 * a bubble of (p - 1)(t_f + t_b); interleaved takes m (t_f + t_b) +
 * (p - 1)(t_f + t_b)/v. Per-(chunk, stage) times may differ (an uneven
 * interleaved pipeline: the step tier gives each chunk its own layers,
 * embedding and loss): the placement is a max-plus system of the task
 * times, so the iteration scales with them and never grows when one task
 * gets shorter (tested).
 */
#ifndef DCSIM_MODELS_SCHEDULE_H
#define DCSIM_MODELS_SCHEDULE_H

#include <stddef.h>

#include "error.h"
#include "workload.h" /* enum pp_schedule */

typedef struct sched_input {
    int kind;               /* enum pp_schedule */
    unsigned pp;            /* stages, >= 1 */
    unsigned vpp;           /* virtual chunks per stage, >= 1 (1 unless interleaved) */
    unsigned microbatches;  /* per iteration, >= 1 */
    /* per (chunk c, stage s) at index c * pp + s: one micro-batch */
    const double *t_forward;
    const double *t_backward;
    /* transfer from model position j to j + 1 (forward activations) and from
     * j + 1 to j (backward gradients), at index j = c * pp + s, for j in
     * 0 .. pp vpp - 2; NULL = free */
    const double *t_send_forward;
    const double *t_send_backward;
} sched_input;

typedef struct sched_task {
    unsigned stage, chunk, microbatch;
    int backward;           /* 0 forward, 1 backward */
    double start_s, end_s;
} sched_task;

typedef struct sched_result {
    double iteration_s;     /* last task end (all stages start at 0) */
    sched_task *tasks;      /* 2 m v p tasks, in the order each stage runs them, stage by stage */
    size_t n_tasks;
    double *busy_s;         /* per stage: sum of its task times */
    double *bubble_s;       /* per stage: iteration_s - busy_s */
    double *chunk_backward_end_s; /* per (chunk, stage) at c * pp + s: end of its last backward
                                     (its gradients are complete: data-parallel reduction may start) */
    double *first_forward_start_s; /* per (chunk, stage): start of its first forward */
} sched_result;

/* Place every task. O(m v p) time and memory. Returns 0 and fills *out
 * (the caller frees it with sched_result_free), or the error's code with a
 * one-line reason in err and *out untouched: SIM_ERR_INPUT for pp, vpp or
 * microbatches 0, an unknown kind, interleaved with m not a multiple of p or
 * vpp < 2, GPipe or 1F1B with vpp != 1, a time missing, negative or not
 * finite; SIM_ERR_NOMEM for no memory; SIM_ERR_INTERNAL for no input or
 * result record or an order that deadlocks (a bug here). err may be NULL. */
int sched_run(const sched_input *in, sched_result *out, sim_error *err);
void sched_result_free(sched_result *r); /* NULL is a no-op; zeroes *r */

#endif
