/* hubs_gang.c - the placement's gang-aware estimate of a hub's queue
 * (hubs.h "gang_backlog"; docs/hubs.md "Placement at submission"). Each
 * hub keeps a profile of its free GPUs over time, a step function from the
 * latest arrival on (steps before it are dropped), every placed job held in
 * it as a block of its GPUs for its run time. A job of n GPUs ready at t is
 * estimated to start at the earliest s >= t at which n GPUs are free over
 * all of [s, s + run time]:
 *
 *   wait = s - t
 *
 * and, placed, is taken out of the profile over that interval. This is
 * conservative backfilling's plan: a large job waits for its gang of GPUs
 * together, a small one may use a hole before a large job's start; no
 * topology or fragmentation within the free GPUs (the fluid backlog instead
 * drains the hub's GPU-seconds as if any GPU could serve any job).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hubs_internal.h"

typedef struct profile {
    double *t;      /* step starts, rising; the last step lasts for ever */
    uint32_t *free; /* free GPUs over [t[i], t[i + 1]) */
    size_t n, cap;
} profile;

struct hubs_gang {
    profile p[HUBS_MAX];
    uint32_t gpus[HUBS_MAX];
};

hubs_gang *hubs_gang_create(const hubs_config *c)
{
    hubs_gang *g = calloc(1, sizeof *g);
    for (unsigned h = 0; g && h < c->n_hubs; h++) {
        profile *p = &g->p[h];
        p->cap = 64;
        p->t = malloc(p->cap * sizeof *p->t);
        p->free = malloc(p->cap * sizeof *p->free);
        if (!p->t || !p->free) {
            hubs_gang_free(g);
            return NULL;
        }
        p->n = 1;
        p->t[0] = 0;
        p->free[0] = g->gpus[h] = c->hubs[h].gpus;
    }
    return g;
}

void hubs_gang_free(hubs_gang *g)
{
    if (!g)
        return;
    for (unsigned h = 0; h < HUBS_MAX; h++) {
        free(g->p[h].t);
        free(g->p[h].free);
    }
    free(g);
}

/* the earliest start >= t with gpus free over [start, start + run_s) */
static double earliest(const profile *p, uint32_t gpus, double t_s, double run_s)
{
    size_t i = 0;
    while (i + 1 < p->n && p->t[i + 1] <= t_s)
        i++;
    for (; i < p->n; i++) {
        double s = fmax(t_s, p->t[i]);
        size_t j = i;
        while (j < p->n && p->t[j] < s + run_s && p->free[j] >= gpus)
            j++;
        if (j == p->n || p->t[j] >= s + run_s)
            return s;
        i = j; /* step j has too few: start after it */
    }
    return INFINITY; /* not reached: the last step has every GPU free */
}

/* a step boundary at x (the index of the step starting at x); -1: out of memory */
static long split(profile *p, double x)
{
    size_t i = 0;
    while (i < p->n && p->t[i] < x)
        i++;
    if (i < p->n && p->t[i] == x)
        return (long)i;
    if (p->n == p->cap) {
        size_t cap = 2 * p->cap;
        double *t = realloc(p->t, cap * sizeof *t);
        if (t)
            p->t = t;
        uint32_t *f = t ? realloc(p->free, cap * sizeof *f) : NULL;
        if (!f)
            return -1;
        p->free = f;
        p->cap = cap;
    }
    memmove(p->t + i + 1, p->t + i, (p->n - i) * sizeof *p->t);
    memmove(p->free + i + 1, p->free + i, (p->n - i) * sizeof *p->free);
    p->t[i] = x;
    p->free[i] = p->free[i - 1]; /* i >= 1: t[0] <= every x asked */
    p->n++;
    return (long)i;
}

/* drop the steps that end by t */
static void prune(profile *p, double t_s)
{
    size_t k = 0;
    while (k + 1 < p->n && p->t[k + 1] <= t_s)
        k++;
    if (!k)
        return;
    memmove(p->t, p->t + k, (p->n - k) * sizeof *p->t);
    memmove(p->free, p->free + k, (p->n - k) * sizeof *p->free);
    p->n -= k;
}

double hubs_gang_wait(hubs_gang *g, unsigned h, uint32_t gpus, double t_s, double run_s)
{
    if (!gpus || gpus > g->gpus[h])
        return INFINITY;
    prune(&g->p[h], t_s);
    return earliest(&g->p[h], gpus, t_s, run_s) - t_s;
}

int hubs_gang_commit(hubs_gang *g, unsigned h, uint32_t gpus, double t_s, double run_s)
{
    profile *p = &g->p[h];
    if (!gpus || gpus > g->gpus[h] || !(run_s > 0))
        return 0;
    double s = earliest(p, gpus, t_s, run_s);
    long a = split(p, s), b = a < 0 ? -1 : split(p, s + run_s);
    if (a < 0 || b < 0)
        return -1;
    for (long i = a; i < b; i++)
        p->free[i] -= gpus;
    return 0;
}
