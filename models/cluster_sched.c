/* cluster_sched.c - the scheduling policies (cluster.h): one line per
 * policy in the table at the end. A pass runs once per instant at which a
 * job arrived or ended; it starts queued jobs through cluster_start_queued.
 * fifo: O(started). easy-backfill: O(R log R + Q) when the head is blocked
 * (R running, Q queued).
 */
#include <stdlib.h>
#include <string.h>

#include "cluster_internal.h"

/* start the head while it fits (and no maintenance window keeps it) */
static void start_heads(cluster_sim *s)
{
    while (s->queue_n && !s->failed && cluster_need(s, s->queue[0]) <= s->free_gpus)
        if (cluster_start_queued(s, 0))
            return;
}

static void pass_fifo(cluster_sim *s) { start_heads(s); }

/* The head's reservation: the earliest end of running jobs after which at
 * least need GPUs are free (*shadow_s), and how many more than need are
 * free then (*extra). need <= the cluster's GPUs, so it exists. */
void cluster_shadow(cluster_sim *s, uint32_t need, double *shadow_s, uint32_t *extra)
{
    for (uint32_t i = 0; i < s->running_n; i++) {
        const cluster_job *j = &s->job[s->running[i]];
        s->ends[i] = (cluster_end){j->end_s, cluster_held(s, s->running[i]), s->running[i]};
    }
    qsort(s->ends, s->running_n, sizeof *s->ends, cluster_cmp_end);
    uint64_t avail = s->free_gpus;
    *shadow_s = sim_now(s->eng);
    *extra = 0;
    for (uint32_t i = 0; i < s->running_n; i++) {
        avail += s->ends[i].gpus;
        if (avail >= need) {
            *shadow_s = s->ends[i].end_s;
            *extra = (uint32_t)(avail - need);
            return;
        }
    }
}

/* EASY backfill (Lifka 1995): a later job may start now if it fits and
 * either ends by the head's reservation or uses only GPUs the head will not
 * need then */
static void pass_easy(cluster_sim *s)
{
    start_heads(s);
    if (s->queue_n < 2 || !s->free_gpus || s->failed)
        return;
    uint32_t min_gpus = UINT32_MAX;
    for (uint32_t i = 1; i < s->queue_n; i++)
        if (cluster_need(s, s->queue[i]) < min_gpus)
            min_gpus = cluster_need(s, s->queue[i]);
    cluster_job *head = &s->job[s->queue[0]];
    if (head->reserve_s >= 0 && min_gpus > s->free_gpus)
        return; /* nothing can start; the reservation is recorded */
    double shadow_s;
    uint32_t extra;
    cluster_shadow(s, cluster_need(s, s->queue[0]), &shadow_s, &extra);
    if (s->c->n_resv) { /* the windows the head would run into: none backfills past them */
        double w = cluster_resv_clear_s(s, shadow_s + cluster_run_left_s(s, s->queue[0]));
        if (w > shadow_s) {
            shadow_s = w;
            extra = 0;
        }
    }
    if (head->reserve_s < 0)
        head->reserve_s = shadow_s;
    if (min_gpus > s->free_gpus)
        return;
    double now = sim_now(s->eng);
    uint32_t i = 1;
    while (i < s->queue_n && s->free_gpus && !s->failed) {
        const cluster_job *j = &s->job[s->queue[i]];
        uint32_t n = j->spec.gpus;
        if (cluster_is_elastic(s, s->queue[i])) { /* elastic: all it can, or extra's share */
            uint32_t id = s->queue[i], need = j->min_gpus;
            uint32_t g = n < s->free_gpus ? n : s->free_gpus;
            int first = g >= need && now + cluster_run_left_on(s, id, g) <= shadow_s;
            uint32_t cap = first ? g : g < extra ? g : extra;
            if (cap >= need && !cluster_start_queued_n(s, i, cap)) {
                if (!first)
                    extra -= s->held[id];
                continue;
            }
            i++;
            continue;
        }
        int ends_first = now + cluster_run_left_s(s, s->queue[i]) <= shadow_s;
        if (n <= s->free_gpus && (ends_first || n <= extra) && !cluster_start_queued(s, i)) {
            if (!ends_first)
                extra -= n;
            continue; /* the next job moved into position i */
        }
        i++;
    }
}

static const cluster_sched policies[] = {
    {"fifo", "first come, first served: nothing passes a waiting job", pass_fifo},
    {"easy-backfill", "FIFO, and later jobs start early if they do not delay the head's "
                      "reservation (Lifka 1995)", pass_easy},
};

const cluster_sched *cluster_sched_find(const char *name)
{
    for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++)
        if (name && strcmp(policies[i].name, name) == 0)
            return &policies[i];
    return NULL;
}

const char *cluster_sched_name(const cluster_sched *p) { return p ? p->name : "?"; }

const char *cluster_sched_names(void) { return "fifo, easy-backfill"; }
