/* stepcmd.c - `dcsim step` and the step profile for `dcsim run` (see
 * stepcmd.h). */
#include "stepcmd.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "compute.h"
#include "fabric.h"
#include "hardware.h"
#include "resources.h"
#include "workload.h"

#define MAX_SETS 256

const char usage_step[] =
    "usage: dcsim step [SCENARIO.xml] [--analytic] [--json] [--set PATH=VALUE]...\n"
    "\n"
    "Simulate one training iteration of the scenario's job on its cluster and\n"
    "print where the time goes: iteration time, tokens/s, model TFLOP/s per GPU,\n"
    "MFU and HFU (Megatron-Core FLOP counting), the critical pipeline stage's\n"
    "breakdown (compute, exposed TP / PP / DP / CP / EP communication, bubble,\n"
    "optimizer), every stage's, the fabric's bytes and peak link utilisation\n"
    "per tier, and stragglers (docs/step.md). Needs <cluster><fabric> and\n"
    "<job><parallelism>.\n"
    "\n"
    "  --analytic   the analytic network path instead of the flow model\n"
    "               (same as --set job/step/@network=analytic)\n"
    "  --json       the profile as one JSON object\n";

int app_step_profile(const scn_scenario *s, step_profile *out, char *why, size_t why_size)
{
    if (!s->has_fabric || !s->has_parallelism) {
        snprintf(why, why_size, "the step tier needs <cluster><fabric> and <job><parallelism>");
        return -1;
    }
    workload w;
    compute_device dev;
    fabric f;
    unsigned long long gpus = (unsigned long long)s->par.tp * s->par.cp * s->par.dp * s->par.pp;
    if (workload_build(&s->arch, &s->par, gpus, &w, why, why_size))
        return -1;
    int rc = hw_compute_device(&s->gpu, s->precision, &dev, why, why_size);
    if (!rc)
        rc = fabric_build(&s->fabric, &f, why, why_size);
    if (!rc) {
        step_options o = s->step;
        if (o.sustained_efficiency == 0) /* not in <step>: the GPU catalog's, else 1 */
            o.sustained_efficiency =
                s->gpu.sustained_efficiency > 0 ? s->gpu.sustained_efficiency : 1;
        rc = step_simulate(&w, &dev, &f, &o, out, why, why_size);
        fabric_free(&f);
    }
    workload_free(&w);
    return rc;
}

typedef struct cache_entry {
    unsigned dp;
    uint64_t state;
    uint64_t last_use;
    int used;
    step_profile profile;
} cache_entry;

struct step_cache {
    cache_entry *e;
    size_t capacity;
    uint64_t clock;
    size_t simulations;
};

step_cache *step_cache_create(size_t capacity)
{
    step_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->capacity = capacity ? capacity : 1;
    c->e = calloc(c->capacity, sizeof *c->e);
    if (!c->e) {
        free(c);
        return NULL;
    }
    return c;
}

void step_cache_free(step_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->capacity; i++)
        if (c->e[i].used)
            step_profile_free(&c->e[i].profile);
    free(c->e);
    free(c);
}

size_t step_cache_simulations(const step_cache *c) { return c->simulations; }

const step_profile *step_cache_get(step_cache *c, const scn_scenario *s, unsigned dp,
                                   uint64_t state, char *why, size_t why_size)
{
    size_t victim = 0;
    for (size_t i = 0; i < c->capacity; i++) {
        cache_entry *x = &c->e[i];
        if (x->used && x->dp == dp && x->state == state) {
            x->last_use = ++c->clock;
            return &x->profile;
        }
        if (!x->used || (c->e[victim].used && x->last_use < c->e[victim].last_use))
            victim = i;
    }
    if (!dp || !s->has_parallelism || s->par.global_batch % s->par.dp) {
        snprintf(why, why_size, "no parallelism to shrink, or dp 0");
        return NULL;
    }
    scn_scenario copy = *s; /* shallow: only par changes */
    copy.par.global_batch = s->par.global_batch / s->par.dp * dp;
    copy.par.dp = dp;
    step_profile p;
    if (app_step_profile(&copy, &p, why, why_size))
        return NULL;
    c->simulations++;
    cache_entry *x = &c->e[victim];
    if (x->used)
        step_profile_free(&x->profile);
    *x = (cache_entry){dp, state, ++c->clock, 1, p};
    return &x->profile;
}

/* <spares elastic="true"> on the step tier: the job's speed with k of its
 * dp replicas missing, from the profile of the smaller job (same
 * micro-batches per replica, so a global batch (dp - k) / dp as large):
 * tokens per second relative to the whole job. The profiles are simulated
 * at k = 1, 2, 4, 8 ... and at the most missing; the iteration time between
 * them is interpolated linearly in k (it changes smoothly with dp: only
 * the data-parallel collectives see the replica count). */
static int elastic_speeds(scn_scenario *s, double full_iteration_s, char *why, size_t why_size)
{
    campaign_config *c = &s->campaign;
    unsigned dp = s->par.dp, most = c->elastic_max_missing;
    free(s->elastic_speed);
    s->elastic_speed = calloc((size_t)most + 1, sizeof *s->elastic_speed);
    double *iteration = calloc((size_t)most + 1, sizeof *iteration);
    step_cache *cache = step_cache_create(1);
    int rc = 0;
    if (!s->elastic_speed || !iteration || !cache) {
        snprintf(why, why_size, "out of memory");
        rc = -1;
    }
    unsigned prev = 0;
    if (!rc)
        iteration[0] = full_iteration_s;
    for (unsigned k = 1; !rc && prev < most; k *= 2) {
        unsigned at = k < most ? k : most;
        const step_profile *p = step_cache_get(cache, s, dp - at, 0, why, why_size);
        if (!p) {
            rc = -1;
            break;
        }
        iteration[at] = p->iteration_s;
        for (unsigned j = prev + 1; j < at; j++)
            iteration[j] = iteration[prev] +
                           (iteration[at] - iteration[prev]) * (double)(j - prev) / (at - prev);
        prev = at;
    }
    for (unsigned k = 1; !rc && k <= most; k++) /* at most 1: fewer GPUs are not faster */
        s->elastic_speed[k] = fmin(1.0, (double)(dp - k) / dp * full_iteration_s / iteration[k]);
    free(iteration);
    step_cache_free(cache);
    if (!rc) {
        s->elastic_speed[0] = 1;
        c->elastic_speed = s->elastic_speed;
    }
    return rc;
}

/* <reliability><stragglers> on the step tier: the job's speed while one
 * node is slow, from the profile with one node's GPUs at the slow speed
 * (times any straggler <job><step> names already): the iteration waits for
 * the slow node only as long as its compute share makes it. The node is the
 * one in the middle of the GPU numbering: in Megatron's order a middle
 * pipeline stage, where most nodes are (the first and last stages often
 * carry fewer layers, and so have slack to absorb a slow node). */
static int straggler_speed(scn_scenario *s, double full_iteration_s, char *why, size_t why_size)
{
    size_t n = (size_t)s->campaign.gpu_count;
    unsigned per_node = s->campaign.gpus_per_node ? s->campaign.gpus_per_node : 8;
    size_t middle = n / 2 / per_node * per_node;
    double *speed = malloc(n * sizeof *speed);
    if (!speed) {
        snprintf(why, why_size, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        speed[i] = (s->step.gpu_speed && i < s->step.n_gpu_speed ? s->step.gpu_speed[i] : 1.0) *
                   (i >= middle && i < middle + per_node ? s->straggler_gpu_speed : 1.0);
    scn_scenario copy = *s; /* shallow: only the speeds change */
    copy.step.gpu_speed = speed;
    copy.step.n_gpu_speed = (unsigned)n;
    step_profile p;
    int rc = app_step_profile(&copy, &p, why, why_size);
    free(speed);
    if (rc)
        return -1;
    s->campaign.straggler_speed = fmin(1.0, full_iteration_s / p.iteration_s);
    step_profile_free(&p);
    return 0;
}

/* No MFU in the scenario: one iteration on the step tier sets the
 * campaign's iteration time (through the MFU that gives it). */
int app_step_iteration(scn_scenario *s, step_profile *out, sim_error *err)
{
    step_profile prof;
    char why[512];
    memset(out, 0, sizeof *out);
    if (app_step_profile(s, &prof, why, sizeof why))
        return sim_error_set(err, SIM_ERR_INPUT, s->source, 0, "step tier: %s", why);
    campaign_config *c = &s->campaign;
    double tokens = fmin(c->tokens_per_iteration, c->train_tokens);
    c->mfu_frac = 6.0 * c->model_params * tokens /
                  (prof.iteration_s * (double)c->gpu_count * c->gpu_peak_flops_per_s);
    s->step_used = 1;
    s->step_iteration_s = prof.iteration_s;
    s->step_mfu = prof.mfu;
    s->step_bubble_s = prof.part_s[STEP_BUBBLE];
    s->step_exposed_comm_s = prof.part_s[STEP_TP] + prof.part_s[STEP_PP] + prof.part_s[STEP_DP] +
                             prof.part_s[STEP_CP] + prof.part_s[STEP_EP];
    *out = prof;
    if (!(c->mfu_frac > 0 && c->mfu_frac <= 1))
        return sim_error_set(err, SIM_ERR_INPUT, s->source, 0,
                             "step tier: the iteration (%.6g s) implies a 6ND utilisation of %.4g, "
                             "outside (0, 1]", s->step_iteration_s, c->mfu_frac);
    if (c->elastic_replicas && elastic_speeds(s, prof.iteration_s, why, sizeof why))
        return sim_error_set(err, SIM_ERR_INPUT, s->source, 0, "elastic continuation: %s", why);
    if (c->straggler_rate_per_s > 0 && straggler_speed(s, prof.iteration_s, why, sizeof why))
        return sim_error_set(err, SIM_ERR_INPUT, s->source, 0, "stragglers: %s", why);
    return 0;
}


static const char *const tier_names[STEP_TIERS] = {"scale-up", "host-leaf", "leaf-spine",
                                                   "spine-core/global"};

static void print_text(const scn_scenario *s, const step_profile *p)
{
    printf("iteration       %.6g s (%s network model)\n", p->iteration_s,
           s->step.analytic ? "analytic" : "flow");
    printf("tokens/s        %.6g\n", p->tokens_per_s);
    printf("model TFLOP/s   %.1f per GPU: MFU %.1f %%, HFU %.1f %% (Megatron-Core FLOP counting, "
           "%s peak %.4g TFLOP/s)\n", p->model_flops_per_gpu_s / 1e12, 100 * p->mfu,
           100 * p->hfu, precision_name(s->precision),
           s->gpu.peak_flops_per_s[s->precision] / 1e12);
    printf("critical stage  %u of %u; where its iteration goes:\n", p->critical_stage,
           p->n_stages);
    for (int k = 0; k < STEP_PART_COUNT; k++)
        printf("  %-10s %12.6g s %6.1f %%\n", step_part_name(k), p->part_s[k],
               100 * p->part_s[k] / p->iteration_s);
    printf("per stage (s):\n  %5s", "stage");
    for (int k = 0; k < STEP_PART_COUNT; k++)
        printf(" %10s", step_part_name(k));
    printf(" %10s\n", "end");
    for (unsigned i = 0; i < p->n_stages; i++) {
        printf("  %5u", i);
        for (int k = 0; k < STEP_PART_COUNT; k++)
            printf(" %10.4g", p->stage[i].part_s[k]);
        printf(" %10.4g\n", p->stage[i].end_s);
    }
    printf("fabric per iteration:\n  %-18s %14s %18s\n", "tier", "bytes", "peak utilisation");
    for (int t = 0; t < STEP_TIERS; t++)
        printf("  %-18s %14.4g %17.1f%%\n", tier_names[t], p->tier_bytes[t],
               100 * p->tier_peak_utilisation[t]);
    if (p->slowest_gpu != UINT32_MAX)
        printf("stragglers      slowest GPU %u at %.1f %% speed; the other replicas waited %.4g s "
               "for it at the gradient reduction\n", p->slowest_gpu, 100 * p->slowest_speed,
               p->wait_s);
}

static void print_json(const step_profile *p)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "iteration_s", p->iteration_s);
    cJSON_AddNumberToObject(o, "tokens_per_s", p->tokens_per_s);
    cJSON_AddNumberToObject(o, "model_flops_per_gpu_per_s", p->model_flops_per_gpu_s);
    cJSON_AddNumberToObject(o, "mfu", p->mfu);
    cJSON_AddNumberToObject(o, "hfu", p->hfu);
    cJSON_AddNumberToObject(o, "critical_stage", p->critical_stage);
    cJSON *parts = cJSON_AddObjectToObject(o, "critical_stage_s");
    for (int k = 0; k < STEP_PART_COUNT; k++)
        cJSON_AddNumberToObject(parts, step_part_name(k), p->part_s[k]);
    cJSON *stages = cJSON_AddArrayToObject(o, "stages");
    for (unsigned i = 0; i < p->n_stages; i++) {
        cJSON *st = cJSON_CreateObject();
        for (int k = 0; k < STEP_PART_COUNT; k++)
            cJSON_AddNumberToObject(st, step_part_name(k), p->stage[i].part_s[k]);
        cJSON_AddNumberToObject(st, "end_s", p->stage[i].end_s);
        cJSON_AddItemToArray(stages, st);
    }
    cJSON *tiers = cJSON_AddObjectToObject(o, "fabric_bytes");
    cJSON *peaks = cJSON_AddObjectToObject(o, "fabric_peak_utilisation");
    for (int t = 0; t < STEP_TIERS; t++) {
        cJSON_AddNumberToObject(tiers, tier_names[t], p->tier_bytes[t]);
        cJSON_AddNumberToObject(peaks, tier_names[t], p->tier_peak_utilisation[t]);
    }
    if (p->slowest_gpu != UINT32_MAX) {
        cJSON_AddNumberToObject(o, "slowest_gpu", p->slowest_gpu);
        cJSON_AddNumberToObject(o, "slowest_speed", p->slowest_speed);
        cJSON_AddNumberToObject(o, "straggler_wait_s", p->wait_s);
    }
    char *text = cJSON_Print(o);
    if (text)
        puts(text);
    free(text);
    cJSON_Delete(o);
}

int cmd_step(int argc, char **argv)
{
    const char *path = NULL, *sets[MAX_SETS + 1];
    size_t n_sets = 0;
    int json = 0, analytic = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage_step, stdout);
            return 0;
        } else if (cli_is_option(a, "--set")) {
            if (!(v = cli_option_value(argc, argv, &i, "--set")) || !strchr(v, '='))
                return cli_usage_error("step", "--set needs PATH=VALUE%s", "");
            if (n_sets == MAX_SETS)
                return cli_usage_error("step", "more than 256 --set options%s", "");
            sets[n_sets++] = v;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--analytic")) {
            analytic = 1;
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error("step", "unknown option '%s'", a);
        } else if (!path) {
            path = a;
        } else {
            return cli_usage_error("step", "more than one scenario given ('%s')", a);
        }
    }
    sim_error err;
    sim_error_clear(&err);
    scn_scenario s;
    if (scn_load(path, sets, n_sets, &s, &err))
        return cli_print_error(&err);
    if (res_check(&s, RES_STEP, 0, &err)) {
        scn_scenario_free(&s);
        return cli_print_error(&err);
    }
    if (analytic)
        s.step.analytic = 1;
    step_profile prof;
    char why[512];
    int rc = 0;
    if (app_step_profile(&s, &prof, why, sizeof why)) {
        fprintf(stderr, "%s: error: %s\n", s.source, why);
        rc = CLI_EXIT_INPUT;
    } else {
        if (json)
            print_json(&prof);
        else
            print_text(&s, &prof);
        step_profile_free(&prof);
    }
    scn_scenario_free(&s);
    return rc;
}
