/* failure_process.h - the registry of failure processes: the laws a
 * campaign cause's times to failure follow (<failure distribution="...">).
 *
 * A process is one file (models/failure_NAME.c) defining a const
 * failure_process plus one line in failure_process.c's registry. A cause
 * names its process by index (campaign_cause.process; 0, exponential, is
 * what a zeroed cause gets) and gives its mean rate (1 / mean time to
 * failure) and, where the process has one, its shape.
 *
 * Memoryless processes (no `residual` hook: the exponential) superpose: the
 * campaign draws every such cause of a unit on one stream at their summed
 * rate, and a cause per rack, switch or cable must be one. Any other process
 * renews on a stream of its own per unit: the first failure is the residual
 * life of a part of random age (the cluster in steady state), later ones
 * the full law of a fresh part (campaign.h).
 */
#ifndef DCSIM_MODELS_FAILURE_PROCESS_H
#define DCSIM_MODELS_FAILURE_PROCESS_H

#include <gsl/gsl_rng.h>

#include "campaign.h"

/* 0 when cause x's parameters (shape) suit the process, else -1. */
typedef int (*failure_check_fn)(const campaign_cause *x);
/* A time in seconds drawn on r for a process of mean rate rate_per_s (> 0)
 * and the given shape. */
typedef double (*failure_draw_fn)(gsl_rng *r, double rate_per_s, double shape);

typedef struct failure_process {
    const char *name;          /* as <failure distribution="..."> writes it */
    const char *doc;           /* one line */
    failure_check_fn check;
    failure_draw_fn draw;      /* time to failure of a fresh part */
    failure_draw_fn residual;  /* NULL: memoryless; else the first failure in steady state */
} failure_process;

/* The built-in processes, in registry order; one added later needs no
 * value here (failure_process_find finds it by name). */
enum failure_process_id { FAILURE_EXPONENTIAL = 0, FAILURE_WEIBULL };

/* The registry, ending in NULL. */
extern const failure_process *const failure_processes[];

unsigned failure_process_count(void);
/* The process of index id, or NULL out of range. */
const failure_process *failure_process_get(unsigned id);
/* The index of the process called name, or -1. */
int failure_process_find(const char *name);
/* 1 when process id is memoryless (its causes superpose on one stream). */
int failure_process_is_memoryless(unsigned id);

#endif
