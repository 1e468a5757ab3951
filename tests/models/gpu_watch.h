/* gpu_watch.h - an occupancy map of the cluster tests' own, fed by the
 * scheduler's watch callback (cluster_config.watch): owner[g] is job + 1
 * while job holds GPU g, 0 free; clashes counts a GPU given while held (or
 * out of range), bad_frees a release that frees other than the n GPUs it
 * names. Static: included by one test file each. */
#ifndef DCSIM_TEST_GPU_WATCH_H
#define DCSIM_TEST_GPU_WATCH_H

#include <stdint.h>

typedef struct watch {
    uint32_t gpus, *owner;
    int clashes, bad_frees;
} watch;

static void on_watch(void *ctx, uint32_t job, double now_s, const uint32_t *g, uint32_t n)
{
    watch *w = ctx;
    (void)now_s;
    if (!g) {
        uint32_t freed = 0;
        for (uint32_t x = 0; x < w->gpus; x++)
            if (w->owner[x] == job + 1) {
                w->owner[x] = 0;
                freed++;
            }
        w->bad_frees += freed != n;
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (g[i] >= w->gpus || w->owner[g[i]])
            w->clashes++;
        else
            w->owner[g[i]] = job + 1;
    }
}

#endif
