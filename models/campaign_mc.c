/* campaign_mc.c - Monte Carlo over the campaign: replicas of one
 * configuration on their own seeds, run in parallel, and the statistics of
 * their results. Replica i depends only on (cfg, i), so any thread count
 * gives the same numbers; each thread runs all its replicas in one
 * campaign_workspace.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "campaign.h"

uint64_t campaign_replica_seed(uint64_t seed, unsigned replica)
{
    if (replica == 0)
        return seed;
    uint64_t x = seed ^ (0x9e3779b97f4a7c15ULL * (replica + 1));
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

int campaign_run_replicas(const campaign_config *cfg, unsigned n, campaign_result *results,
                          campaign_replica_fn progress, void *progress_ctx, sim_error *err)
{
    if (n < 2)
        return 0;
    sim_error *errs = calloc(n, sizeof *errs);
    int *rcs = calloc(n, sizeof *rcs);
    if (!errs || !rcs) {
        free(errs);
        free(rcs);
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory for %u replicas", n);
    }
    unsigned done = 1;
    int stop = 0;
    /* one workspace per thread for all its replicas: the streams are
     * reseeded and the event pool reused instead of made and freed per
     * replica (docs/design.md, "Replicas reuse their memory") */
#pragma omp parallel
    {
        campaign_workspace *ws = campaign_workspace_create();
#pragma omp for schedule(dynamic, 1)
        for (unsigned i = 1; i < n; i++) {
            int halt;
#pragma omp atomic read
            halt = stop;
            sim_error_clear(&errs[i]);
            if (halt) {
                rcs[i] = sim_error_set(&errs[i], SIM_ERR_INTERRUPTED, NULL, 0, "interrupted");
                continue;
            }
            campaign_config c = *cfg;
            c.seed = campaign_replica_seed(cfg->seed, i);
            rcs[i] = ws ? campaign_run_in(ws, &c, NULL, NULL, NULL, &results[i], &errs[i])
                        : sim_error_set(&errs[i], SIM_ERR_NOMEM, NULL, 0,
                                        "out of memory for a replica's workspace");
#pragma omp critical(campaign_replica_progress)
            {
                done++;
                if (progress && progress(progress_ctx, done, n))
#pragma omp atomic write
                    stop = 1;
            }
        }
        campaign_workspace_destroy(ws);
    }
    int rc = 0;
    for (unsigned i = 1; i < n && !rc; i++)
        if (rcs[i]) {
            rc = rcs[i];
            if (err)
                *err = errs[i];
        }
    free(errs);
    free(rcs);
    return rc;
}

campaign_stat campaign_stat_of(const double *x, unsigned n)
{
    campaign_stat s = {0, 0, 0};
    if (!n)
        return s;
    double sum = 0;
    for (unsigned i = 0; i < n; i++)
        sum += x[i];
    s.mean = sum / n;
    if (n < 2)
        return s;
    double ss = 0;
    for (unsigned i = 0; i < n; i++)
        ss += (x[i] - s.mean) * (x[i] - s.mean);
    s.sd = sqrt(ss / (n - 1));
    s.ci95 = gsl_cdf_tdist_Pinv(0.975, n - 1.0) * s.sd / sqrt((double)n);
    return s;
}

void campaign_mc_summarize(const campaign_result *r, unsigned n, campaign_mc *out)
{
    memset(out, 0, sizeof *out);
    out->replicas = n;
    out->fabric_causes = n ? r[0].fabric_causes : 0;
    out->shrink = n ? r[0].shrink : 0;
    double *x = malloc((n ? n : 1) * sizeof *x);
    if (!x)
        return;
#define STAT(field, expr)                      \
    do {                                       \
        for (unsigned i = 0; i < n; i++)       \
            x[i] = (expr);                     \
        out->field = campaign_stat_of(x, n);   \
    } while (0)
    STAT(time_to_train_s, r[i].time_to_train_s);
    STAT(ettr_frac, r[i].ettr_frac);
    STAT(failures, (double)r[i].failures);
    STAT(rework_s, r[i].rework_s);
    STAT(restart_time_s, r[i].restart_time_s);
    STAT(checkpoint_time_s, r[i].checkpoint_time_s);
    STAT(interruption_s, r[i].rework_s + r[i].restart_time_s + r[i].checkpoint_aborted_s);
    STAT(degraded_slowdown_s, r[i].degraded_slowdown_s);
    STAT(fabric_wait_s, r[i].fabric_wait_s);
    STAT(throttle_slowdown_s, r[i].throttle_slowdown_s);
    STAT(flaps, (double)r[i].flaps);
    STAT(flap_down_s, r[i].flap_down_s);
    for (unsigned i = 0; i < n; i++) {
        out->throttled |= r[i].throttled;
        out->flapping |= r[i].flapping;
    }
    STAT(shrunk_s, r[i].shrunk_s);
    STAT(shrunk_idle_gpu_h, r[i].shrunk_idle_gpu_h);
    for (unsigned k = 0; k <= CAMPAIGN_MAX_CAUSES; k++)
        STAT(failures_by_cause[k], (double)r[i].failures_by_cause[k]);
#undef STAT
    free(x);
}
