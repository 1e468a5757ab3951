/* servesize.c - `dcsim serve --size`: the search's steps and answer, for
 * one pool (models/serving_size.c serve_size) and for disaggregated pools
 * (serve_size_pools), printed as they come or gathered for --json
 * (docs/serving.md "GPUs needed: --size"). */
#include "servesize.h"

#include <stdio.h>

#include "serve.h"

#define SIZE_POOL_RUNS 1000 /* the pools' search stops after this many simulations */

static void print_size_head(const serve_config *c)
{
    char arrivals[160];
    serve_describe_arrivals(c, arrivals, sizeof arrivals);
    if (c->prefill_replicas)
        printf("size       the pair of pools (prefill tp %u, decode tp %u) with the fewest GPUs "
               "and", c->prefill_tp, c->tp);
    else
        printf("size       the fewest replicas of tp %u with", c->tp);
    if (c->slo_ttft_s > 0)
        printf(" P99 TTFT <= %.4g ms", c->slo_ttft_s * 1e3);
    if (c->slo_tpot_s > 0)
        printf("%s P99 TPOT <= %.4g ms", c->slo_ttft_s > 0 ? " and" : "", c->slo_tpot_s * 1e3);
    printf(" at %s\n", arrivals);
    if (c->prefill_replicas)
        printf("           every pair by its GPUs, fewest first (fewer prefill replicas first "
               "at equal GPUs); the first met is the answer\n  %-4s %8s %7s %7s %14s %14s  "
               "%s\n", "step", "prefill", "decode", "GPUs", "P99 TTFT (ms)", "P99 TPOT (ms)",
               "SLO");
    else
        printf("  %-4s %9s %7s %14s %14s  %s\n", "step", "replicas", "GPUs", "P99 TTFT (ms)",
               "P99 TPOT (ms)", "SLO");
}

static int on_size_step(void *ctx, const serve_size_step *step)
{
    serve_size_steps *st = ctx;
    const serve_result *r = step->result;
    double gpus = (double)step->replicas * st->c->tp +
                  (double)step->prefill_replicas * st->c->prefill_tp;
    st->n++;
    if (st->json) {
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(st->steps, o))
            return 1;
        if (st->c->prefill_replicas)
            cJSON_AddNumberToObject(o, "prefill_replicas", step->prefill_replicas);
        cJSON_AddNumberToObject(o, "replicas", step->replicas);
        cJSON_AddNumberToObject(o, "gpus", gpus);
        cJSON_AddNumberToObject(o, "ttft_p99_s", r->ttft.q_s[2]);
        cJSON_AddNumberToObject(o, "tpot_p99_s", r->tpot.q_s[2]);
        cJSON_AddBoolToObject(o, "met", step->met);
        return 0;
    }
    if (st->prog)
        progress_clear(st->prog);
    if (st->n == 1) /* after the search's own checks */
        print_size_head(st->c);
    if (st->c->prefill_replicas)
        printf("  %-4d %8u %7u %7.0f %14.6g %14.6g  %s\n", st->n, step->prefill_replicas,
               step->replicas, gpus, r->ttft.q_s[2] * 1e3, r->tpot.q_s[2] * 1e3,
               step->met ? "met" : "not met");
    else
        printf("  %-4d %9u %7.0f %14.6g %14.6g  %s\n", st->n, step->replicas, gpus,
               r->ttft.q_s[2] * 1e3, r->tpot.q_s[2] * 1e3, step->met ? "met" : "not met");
    fflush(stdout);
    return 0;
}

static void print_size_answer(const serve_config *c)
{
    if (c->prefill_replicas) {
        printf("answer     %u prefill replicas of tp %u + %u decode replicas of tp %u = %.0f "
               "GPUs (every pair of fewer GPUs was run and missed); their run:\n\n",
               c->prefill_replicas, c->prefill_tp, c->replicas, c->tp, serve_gpus(c));
        return;
    }
    printf("answer     %u replicas of tp %u = %u GPUs", c->replicas, c->tp, c->replicas * c->tp);
    if (c->replicas > 1)
        printf(" (%u replicas do not meet the SLO)", c->replicas - 1);
    printf("; their run:\n\n");
}

int serve_size_run(serve_config *c, serve_size_steps *st, cJSON *root, serve_result *r,
                   sim_error *err)
{
    st->c = c;
    st->steps = root ? cJSON_AddArrayToObject(cJSON_AddObjectToObject(root, "size"), "steps")
                     : NULL;
    if (root && !st->steps)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
    int rc;
    if (c->prefill_replicas) {
        unsigned pre = 0, dec = 0;
        rc = serve_size_pools(c, SIZE_POOL_RUNS, on_size_step, st, &pre, &dec, r, err);
        if (!rc) {
            c->prefill_replicas = pre;
            c->replicas = dec;
        }
    } else {
        unsigned answer = 0; /* the config check's bound on the replicas */
        rc = serve_size(c, 1000000, on_size_step, st, &answer, r, err);
        if (!rc)
            c->replicas = answer;
    }
    if (rc)
        return rc;
    if (root) {
        cJSON *size = cJSON_GetObjectItem(root, "size");
        if (c->prefill_replicas)
            cJSON_AddNumberToObject(size, "prefill_replicas", c->prefill_replicas);
        cJSON_AddNumberToObject(size, "replicas", c->replicas);
        cJSON_AddNumberToObject(size, "gpus", serve_gpus(c));
    } else {
        print_size_answer(c);
    }
    return 0;
}
