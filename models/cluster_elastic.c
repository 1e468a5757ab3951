/* cluster_elastic.c - elastic jobs (cluster.h; docs/cluster.md "Elastic
 * jobs"). A job with 1 <= min_gpus < gpus runs on any g in [min, gpus] GPUs;
 * its work is duration seconds at its gpus and on g it progresses at g / gpus
 * of that rate (linear scaling), or (g / gpus)^e with the config's
 * elastic_exponent e (sub-linear; cluster_internal.h cluster_el_time). It
 * runs in segments (cluster_preempt.c): left_s is its work left in seconds
 * at its GPUs, a segment on g GPUs ends at seg_s + overhead + left_s x gpus
 * / g (linear; left_s / (g / gpus)^e sub-linear). A resize
 * closes the segment keeping every bit of work done (the framework saves
 * its state on a membership change) and opens one on the new GPUs that
 * first pays the checkpoint restart time (TorchElastic and Horovod elastic
 * restart the workers from their state on every membership change).
 *   start  at least min free: min(free, gpus) (cluster_start_queued_n);
 *   grow   after each pass, running elastic jobs by priority then arrival,
 *          onto free GPUs, only when the grown job ends earlier than it
 *          would have, and only within the head's reservation (the grown
 *          job ends by the shadow time, or it takes only the extra GPUs);
 *   shrink a blocked head of higher priority shrinks lower-priority
 *          elastic jobs toward their min (victim order) when that frees
 *          enough, before evicting anyone (cluster_preempt.c); a failed
 *          node or a window under an elastic job drops those GPUs when it
 *          keeps at least its min (the work since the last checkpoint is
 *          lost, as on an interruption).
 * O(R log R) per pass with free GPUs (R running); a resize O(g log g).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_internal.h"

int cluster_elastic_init(cluster_sim *s)
{
    uint32_t n = s->n_job;
    s->held = calloc(n, sizeof *s->held);
    s->g0 = calloc(n, sizeof *s->g0);
    s->gpu_s = calloc(n, sizeof *s->gpu_s);
    s->lost_job_gpu_s = calloc(n, sizeof *s->lost_job_gpu_s);
    return s->held && s->g0 && s->gpu_s && s->lost_job_gpu_s ? 0 : -1;
}

void cluster_elastic_free(cluster_sim *s)
{
    free(s->held);
    free(s->g0);
    free(s->gpu_s);
    free(s->lost_job_gpu_s);
    s->held = s->g0 = NULL;
    s->gpu_s = s->lost_job_gpu_s = NULL;
}

void cluster_elastic_hold(cluster_sim *s, uint32_t id, double dt)
{
    uint32_t g = s->held[id];
    s->gpu_s[id] += dt * g;
    if (g > s->g0[id])
        s->grown_gpu_s += dt * (g - s->g0[id]);
}

double cluster_run_left_on(const cluster_sim *s, uint32_t id, uint32_t g)
{
    const cluster_job *j = &s->job[id];
    double over = j->start_s >= 0 ? s->c->ckpt.restart_s : 0;
    return over + cluster_el_time(s, id, s->left_s[id], g);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* the new segment on its a[0, g): counted, recorded, told */
static void reopen(cluster_sim *s, uint32_t id, uint32_t *a, uint32_t g)
{
    const cluster_config *c = s->c;
    s->held[id] = g;
    s->job[id].resizes++;
    s->resizes++;
    cluster_spans_set(s, id, a, g);
    cluster_record(s);
    if (c->pacer) { /* its ring over the GPUs it holds now */
        cluster_pace_leave(s, id);
        if (cluster_pace_join(s, id, a, g))
            return;
    }
    cluster_segment_start(s, id);
    if (c->watch)
        c->watch(c->watch_ctx, id, sim_now(s->eng), a, g);
}

void cluster_elastic_resize(cluster_sim *s, uint32_t id, uint32_t g, int keep)
{
    const cluster_config *c = s->c;
    uint32_t *a = s->alloc + s->alloc_at[id], n = s->held[id];
    cluster_account(s);
    cluster_segment_close(s, id, keep);
    if (c->watch)
        c->watch(c->watch_ctx, id, sim_now(s->eng), NULL, n);
    if (g < n) { /* its highest GPUs back */
        cluster_free_gpus(s, a + g, n - g);
    } else {
        uint32_t k = c->placer->place(s, g - n);
        for (uint32_t i = 0; i < k; i++) {
            uint32_t x = s->pick[i];
            if (s->owner[x] != CLUSTER_PICKED) {
                s->failed = 1; /* a placement bug: stop rather than double-book */
                sim_stop(s->eng);
            }
            s->owner[x] = id;
            a[n + i] = x;
            if (!s->node_busy[x / c->node_gpus]++)
                s->busy_nodes++;
        }
        s->free_gpus -= k;
        g = n + k;
        qsort(a, g, sizeof *a, cmp_u32);
    }
    reopen(s, id, a, g);
}

int cluster_elastic_lose(cluster_sim *s, uint32_t id)
{
    const cluster_config *c = s->c;
    cluster_job *j = &s->job[id];
    uint32_t *a = s->alloc + s->alloc_at[id], n = s->held[id], down = 0, k = 0;
    for (uint32_t i = 0; i < n; i++)
        down += cluster_gpu_is_down(s, a[i]) != 0;
    if (!down || n - down < j->min_gpus)
        return 0;
    cluster_account(s);
    cluster_segment_close(s, id, 0);
    j->interruptions++;
    s->interruptions++;
    if (c->watch)
        c->watch(c->watch_ctx, id, sim_now(s->eng), NULL, n);
    uint32_t d = 0; /* the kept GPUs first, in order; the down ones after */
    for (uint32_t i = 0; i < n; i++) {
        if (cluster_gpu_is_down(s, a[i]))
            s->pick[d++] = a[i];
        else
            a[k++] = a[i];
    }
    memcpy(a + k, s->pick, (size_t)d * sizeof *a);
    cluster_free_gpus(s, a + k, d);
    reopen(s, id, a, k);
    return 1;
}

/* the end of job id now on g + more GPUs after a resize (its work left now) */
static double end_on(const cluster_sim *s, uint32_t id, uint32_t g)
{
    double now = sim_now(s->eng), done = now - s->seg_s[id] - s->seg_over_s[id];
    done = done > 0 ? cluster_el_work(s, id, done, s->held[id]) : 0;
    if (s->c->pacer) /* its work so far at its paces; the rest at its pace now */
        done = cluster_pace_done(s, id);
    double left = s->left_s[id] - (done < s->left_s[id] ? done : s->left_s[id]);
    if (s->c->pacer)
        return now + s->c->ckpt.restart_s + cluster_el_time(s, id, left, g) / s->pace[id];
    return now + s->c->ckpt.restart_s + cluster_el_time(s, id, left, g);
}

void cluster_elastic_grow(cluster_sim *s)
{
    const cluster_config *c = s->c;
    if (!s->free_gpus || s->failed)
        return;
    double shadow_s = INFINITY;
    uint32_t extra = UINT32_MAX;
    if (s->queue_n) { /* the head's reservation, as EASY computes it */
        uint32_t h = s->queue[0];
        cluster_shadow(s, cluster_need(s, h), &shadow_s, &extra);
        if (c->n_resv) {
            double w = cluster_resv_clear_s(s, shadow_s + cluster_run_left_s(s, h));
            if (w > shadow_s) {
                shadow_s = w;
                extra = 0;
            }
        }
    }
    uint32_t m = 0; /* by priority (higher first), then arrival */
    for (uint32_t i = 0; i < s->running_n; i++) {
        uint32_t id = s->running[i];
        if (cluster_is_elastic(s, id) && s->state[id] == CLUSTER_ST_RUN &&
            s->held[id] < s->job[id].spec.gpus)
            s->ends[m++] = (cluster_end){-(double)s->job[id].spec.priority, 0, id};
    }
    qsort(s->ends, m, sizeof *s->ends, cluster_cmp_end);
    for (uint32_t k = 0; k < m && s->free_gpus && !s->failed; k++) {
        uint32_t id = s->ends[k].id, g = s->held[id];
        const cluster_job *j = &s->job[id];
        uint32_t hidden = c->n_resv ? cluster_resv_hide(s, j->end_s) : 0;
        uint32_t avail = s->free_gpus - hidden, want = j->spec.gpus - g;
        want = want < avail ? want : avail;
        double end = want ? end_on(s, id, g + want) : INFINITY;
        if (want && end > shadow_s && want > extra) { /* past the reservation: extra only */
            want = extra;
            end = want ? end_on(s, id, g + want) : INFINITY;
        }
        if (want && end < j->end_s) { /* only when it ends the job earlier */
            cluster_elastic_resize(s, id, g + want, 1);
            if (end > shadow_s)
                extra -= want;
        }
        if (c->n_resv)
            cluster_resv_show(s);
    }
}
