/* sizing.c - `dcsim fit` and `dcsim size` (see sizing.h; the memory model is
 * models/memory.h). */
#include "sizing.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jsonout.h"
#include "memory.h"
#include "scenario.h"
#include "units.h"

#define EXIT_DOES_NOT_FIT 1
#define GIB (1024.0 * 1024.0 * 1024.0)
/* The largest --params: 1e15 (a thousand times any model built), so the
 * weights print as ordinary numbers. */
#define SIZE_MAX_PARAMS 1e15

const char usage_fit[] =
    "usage: dcsim fit [SCENARIO.xml] [--set PATH=VALUE]... [--json | --csv]\n"
    "\n"
    "Training memory per GPU for every pipeline stage of a scenario with a\n"
    "<parallelism>: weights, gradients, optimizer state, activations, buffers\n"
    "and reserved memory (models/memory.h), against the GPU's capacity. Says\n"
    "plainly whether the job fits and, if not, where and by how much.\n"
    "Without a scenario it sizes the built-in default.\n"
    "\n"
    "  --json  the job, every stage's memory and the verdict as one JSON object\n"
    "          (docs/json.md)\n"
    "  --csv   the stage table as CSV: a row per pipeline stage, in bytes\n"
    "\n"
    "exit status: 0 fits, 1 does not fit, 2 bad input\n";

const char usage_size[] =
    "usage: dcsim size MODEL GPU [--weights PREC] [--kv PREC] [--batch N]\n"
    "                  [--context N[,P90[,P99]]] [--params N] [--reserved SIZE]\n"
    "                  [--max-gpus N] [--catalog FILE.xml] [--json | --csv]\n"
    "\n"
    "Inference sizing: weights plus KV cache of a catalog MODEL on a catalog\n"
    "GPU -> GPUs per replica (a power of two up to --max-gpus, default 8) and\n"
    "concurrent sequences per replica at each context length.\n"
    "\n"
    "  --weights PREC   weight precision: fp32 bf16 fp16 fp8 int8 fp4 (bf16)\n"
    "  --kv PREC        KV-cache precision (bf16)\n"
    "  --batch N        concurrent sequences (1)\n"
    "  --context N,...  context lengths in tokens at P50, P90, P99 (the model's\n"
    "                   seq-len); one value applies to all three\n"
    "  --params N       parameter count to use instead of the architecture's,\n"
    "                   e.g. a nominal 70B\n"
    "  --reserved SIZE  memory per GPU the server cannot use, e.g. 2GB (0)\n"
    "  --catalog FILE   a catalog file (<gpus> or <models>) to add to the built-in\n"
    "  --json           the sizing as one JSON object (docs/json.md)\n"
    "  --csv            the context table as CSV: a row per percentile\n"
    "\n"
    "exit status: 0 ok, 2 bad input\n";

/* ------------------------------------------------------------------ fit */

static void describe_layers(const scn_scenario *s, char *buf, size_t size)
{
    const parallel_config *p = &s->par;
    if (p->first_stage_layers)
        snprintf(buf, size, "%u + %u x %u + %u layers", p->first_stage_layers, p->pp - 2,
                 (s->arch.layers - p->first_stage_layers - p->last_stage_layers) /
                     (p->pp > 2 ? p->pp - 2 : 1),
                 p->last_stage_layers);
    else
        snprintf(buf, size, "%u layers per stage", s->arch.layers / p->pp);
}

typedef struct fit_args {
    const char *path;
    cli_sets sets;
    int json, csv;
} fit_args;

static const cli_option fit_options[] = {
    {"--set", 0, CLI_SETS, offsetof(fit_args, sets), .missing = "%s needs PATH=VALUE"},
    {"--json", 0, CLI_FLAG, offsetof(fit_args, json), NULL, NULL},
    {"--csv", 0, CLI_FLAG, offsetof(fit_args, csv), NULL, NULL},
    {"--help", 'h', CLI_HELP, 0, NULL, NULL},
    {0}};

/* Load the scenario and size its memory per stage (w and *mem are the
 * caller's to free). Returns 0, or the exit status of the error printed. */
static int fit_load(const fit_args *o, scn_scenario *s, workload *w, stage_memory **mem)
{
    sim_error err;
    sim_error_clear(&err);
    if (scn_load_flags(o->path, o->sets.v, o->sets.n, SCN_LOAD_NO_FIT_CHECK, s, &err))
        return cli_print_error(&err);
    if (!s->has_parallelism) {
        fprintf(stderr, "%s: error: the scenario has no <parallelism>: add one (tp, pp, dp, "
                        "micro-batch, global-batch, ...) to size its memory\n", s->source);
        scn_scenario_free(s);
        return CLI_EXIT_INPUT;
    }
    if (!(s->gpu.hbm_bytes > 0)) {
        fprintf(stderr, "%s: error: GPU type '%s' has no memory capacity in the catalog\n",
                s->source, s->gpu.name);
        scn_scenario_free(s);
        return CLI_EXIT_INPUT;
    }
    *mem = calloc(s->par.pp, sizeof **mem);
    sim_error e; /* scn_memory's, printed as the scenario's */
    sim_error_clear(&e);
    if (!*mem)
        sim_error_set(&e, SIM_ERR_NOMEM, NULL, 0, "out of memory");
    if (!*mem || scn_memory(s, w, *mem, &e)) {
        sim_error_set(&err, e.code, s->source, 0, "%s", e.msg);
        free(*mem);
        scn_scenario_free(s);
        return cli_print_error(&err);
    }
    return 0;
}

/* The job: model, GPUs, parallelism, FLOPs per iteration. */
static void print_fit_job(const scn_scenario *s, const workload *w)
{
    const parallel_config *p = &s->par;
    char layers[96];
    describe_layers(s, layers, sizeof layers);
    printf("dcsim fit: %s on %llu x %s (%.1f GB each), %s\n", s->arch.name,
           (unsigned long long)s->campaign.gpu_count, s->gpu.name, s->gpu.hbm_bytes / 1e9,
           precision_name(s->precision));
    printf("parallelism: tp %u, pp %u (%s), vpp %u, cp %u, ep %u, dp %u; micro-batch %u, "
           "global batch %u (%u micro-batches per pipeline)\n",
           p->tp, p->pp, layers, p->vpp, p->cp, p->ep, p->dp, p->micro_batch, p->global_batch,
           w->microbatches);
    printf("             sequence parallel %s, recompute %s, ZeRO stage %d, schedule %s\n",
           p->sequence_parallel ? "on" : "off", recompute_name(p->recompute), p->zero_stage,
           schedule_name(p->schedule));
    printf("model: %.4g B parameters (%.4g B active per token); per iteration %.4g model FLOPs "
           "(Megatron-Core), %.4g hardware FLOPs\n\n",
           model_params_total(&s->arch) / 1e9, model_params_active(&s->arch) / 1e9,
           w->model_flops_iteration, w->hardware_flops_iteration);
}

/* Every stage's memory against the GPU's, and the verdict; returns whether
 * the fullest stage fits. */
static int print_fit_stages(const scn_scenario *s, const workload *w, const stage_memory *mem)
{
    double cap = s->gpu.hbm_bytes;
    printf("  %5s %6s %8s %8s %8s %8s %8s %8s %8s %8s  %s\n", "stage", "layers", "in-flight",
           "weights", "grads", "optim", "activ", "buffers", "reserved", "total", "GB per GPU");
    unsigned worst = 0;
    for (unsigned i = 0; i < w->n_stages; i++) {
        const stage_memory *m = &mem[i];
        if (m->total_bytes > mem[worst].total_bytes)
            worst = i;
        printf("  %5u %6u %9.3g %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f  %s\n", i,
               w->stages[i].layers, m->inflight_microbatches, m->weights_bytes / 1e9,
               m->gradients_bytes / 1e9, m->optimizer_bytes / 1e9, m->activations_bytes / 1e9,
               m->buffers_bytes / 1e9, m->reserved_bytes / 1e9, m->total_bytes / 1e9,
               m->total_bytes <= cap ? "fits" : "DOES NOT FIT");
    }
    const stage_memory *m = &mem[worst];
    int fits = m->total_bytes <= cap;
    printf("\n");
    if (fits) {
        printf("fits: the fullest GPU (stage %u) uses %.1f of %.1f GB (%.1f%%), %.1f GB free\n",
               worst, m->total_bytes / 1e9, cap / 1e9, 100 * m->total_bytes / cap,
               (cap - m->total_bytes) / 1e9);
    } else {
        unsigned over = 0;
        for (unsigned i = 0; i < w->n_stages; i++)
            over += mem[i].total_bytes > cap;
        printf("DOES NOT FIT: %u of %u pipeline stages exceed %.1f GB; stage %u needs %.1f GB "
               "(%.1f GB over, activations %.1f GB)\n",
               over, w->n_stages, cap / 1e9, worst, m->total_bytes / 1e9,
               (m->total_bytes - cap) / 1e9, m->activations_bytes / 1e9);
        printf("  to shrink it: recompute=\"full\", a smaller micro-batch, more pp or cp, "
               "sequence-parallel=\"true\", or a higher zero stage\n");
    }
    return fits;
}

/* --json / --csv: the job, the stages and the verdict (docs/json.md "fit");
 * *fits as print_fit_stages. 0 or 1 (the error printed). */
static int fit_json(const scn_scenario *s, const workload *w, const stage_memory *mem, int csv,
                    int *fits)
{
    const parallel_config *p = &s->par;
    double cap = s->gpu.hbm_bytes;
    unsigned worst = 0, over = 0;
    for (unsigned i = 0; i < w->n_stages; i++) {
        if (mem[i].total_bytes > mem[worst].total_bytes)
            worst = i;
        over += mem[i].total_bytes > cap;
    }
    *fits = mem[worst].total_bytes <= cap;
    cJSON *o = jsonout_begin("fit");
    if (!o)
        return jsonout_emit(NULL, JSONOUT_JSON, NULL, NULL);
    cJSON_AddStringToObject(o, "scenario", s->name);
    cJSON_AddStringToObject(o, "model", s->arch.name);
    cJSON_AddStringToObject(o, "gpu_type", s->gpu.name);
    cJSON_AddNumberToObject(o, "gpus", (double)s->campaign.gpu_count);
    cJSON_AddNumberToObject(o, "gpu_memory_bytes", cap);
    cJSON_AddStringToObject(o, "precision", precision_name(s->precision));
    const struct { const char *name; double value; } par[] = {
        {"tp", p->tp}, {"pp", p->pp}, {"vpp", p->vpp}, {"cp", p->cp}, {"ep", p->ep},
        {"dp", p->dp}, {"micro_batch", p->micro_batch}, {"global_batch", p->global_batch},
        {"microbatches_per_pipeline", w->microbatches}, {"zero_stage", p->zero_stage}};
    for (size_t i = 0; i < sizeof par / sizeof par[0]; i++)
        cJSON_AddNumberToObject(o, par[i].name, par[i].value);
    cJSON_AddBoolToObject(o, "sequence_parallel", p->sequence_parallel);
    cJSON_AddStringToObject(o, "recompute", recompute_name(p->recompute));
    cJSON_AddStringToObject(o, "schedule", schedule_name(p->schedule));
    cJSON_AddNumberToObject(o, "params", model_params_total(&s->arch));
    cJSON_AddNumberToObject(o, "params_active", model_params_active(&s->arch));
    cJSON_AddNumberToObject(o, "iteration_model_flops", w->model_flops_iteration);
    cJSON_AddNumberToObject(o, "iteration_hardware_flops", w->hardware_flops_iteration);
    cJSON *rows = cJSON_AddArrayToObject(o, "stages");
    for (unsigned i = 0; i < w->n_stages; i++) {
        const stage_memory *m = &mem[i];
        cJSON *r = cJSON_CreateObject();
        cJSON_AddItemToArray(rows, r);
        cJSON_AddNumberToObject(r, "stage", i);
        cJSON_AddNumberToObject(r, "layers", w->stages[i].layers);
        const struct { const char *name; double value; } b[] = {
            {"inflight_microbatches", m->inflight_microbatches},
            {"weights_bytes", m->weights_bytes}, {"gradients_bytes", m->gradients_bytes},
            {"optimizer_bytes", m->optimizer_bytes}, {"activations_bytes", m->activations_bytes},
            {"buffers_bytes", m->buffers_bytes}, {"reserved_bytes", m->reserved_bytes},
            {"total_bytes", m->total_bytes}};
        for (size_t k = 0; k < sizeof b / sizeof b[0]; k++)
            cJSON_AddNumberToObject(r, b[k].name, b[k].value);
        cJSON_AddBoolToObject(r, "fits", m->total_bytes <= cap);
    }
    cJSON_AddBoolToObject(o, "fits", *fits);
    cJSON_AddNumberToObject(o, "fullest_stage", worst);
    cJSON_AddNumberToObject(o, "fullest_stage_bytes", mem[worst].total_bytes);
    cJSON_AddNumberToObject(o, "stages_over", over);
    cJSON_AddBoolToObject(o, "reserved_memory_set", s->reserved_bytes != 0);
    return jsonout_emit(o, csv ? JSONOUT_CSV : JSONOUT_JSON, "stages", NULL);
}

int cmd_fit(int argc, char **argv)
{
    static const cli_command cmd = {"fit", usage_fit, fit_options, 1,
                                    .too_many = "more than one scenario given ('%s')"};
    fit_args o = {0};
    size_t n_args;
    int rc = cli_parse(&cmd, argc, argv, &o, &o.path, &n_args);
    if (rc)
        return rc == CLI_DONE ? 0 : rc;
    if (o.json && o.csv)
        return jsonout_one_format("fit");
    scn_scenario s;
    workload w;
    stage_memory *mem;
    if ((rc = fit_load(&o, &s, &w, &mem)))
        return rc;
    if (o.json || o.csv) {
        int fits;
        rc = fit_json(&s, &w, mem, o.csv, &fits);
        workload_free(&w);
        free(mem);
        scn_scenario_free(&s);
        return rc ? rc : fits ? 0 : EXIT_DOES_NOT_FIT;
    }
    print_fit_job(&s, &w);
    int fits = print_fit_stages(&s, &w, mem);
    if (s.reserved_bytes == 0)
        printf("  note: no memory is reserved for the CUDA context, allocator and NCCL; set "
               "cluster/gpu/@reserved-memory\n");
    workload_free(&w);
    free(mem);
    scn_scenario_free(&s);
    return fits ? 0 : EXIT_DOES_NOT_FIT;
}

/* ----------------------------------------------------------------- size */

static int parse_count(const char *text, double *out)
{
    char why[200];
    if (sim_units_parse(text, SIM_DIM_COUNT, out, why, sizeof why) || !(*out > 0) ||
        *out != floor(*out))
        return -1;
    return 0;
}

typedef struct size_args {
    const char *names[2]; /* MODEL GPU */
    const char *catalog, *reserved_text;
    inference_config c;
    int have_context;
    int json, csv;
} size_args;

/* --weights, --kv: into the int of inference_config (an enum precision) */
static int opt_precision(const char *v, int *out)
{
    enum precision p;
    if (precision_parse(v, &p))
        return cli_usage_error("size", "unknown precision '%s'; use fp32 tf32 bf16 fp16 fp8 "
                               "fp4 int8", v);
    *out = p;
    return 0;
}

static int opt_weights(void *ctx, const char *v)
{
    return opt_precision(v, &((size_args *)ctx)->c.weight_precision);
}

static int opt_kv(void *ctx, const char *v)
{
    return opt_precision(v, &((size_args *)ctx)->c.kv_precision);
}

static int opt_batch(void *ctx, const char *v)
{
    double x;
    if (parse_count(v, &x) || x > 1e9)
        return cli_usage_error("size", "--batch %s: expected a whole number from 1", v);
    ((size_args *)ctx)->c.batch = (unsigned)x;
    return 0;
}

/* --context N[,P90[,P99]]: one value applies to all three */
static int opt_context(void *ctx, const char *v)
{
    size_args *o = ctx;
    double *t = o->c.context_tokens, x;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", v);
    int n = 0;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (n == 3 || parse_count(tok, &x) || x > 1e9)
            return cli_usage_error("size", "--context %s: expected 1 to 3 token counts, "
                                   "e.g. 4096 or 2K,8K,32K", v);
        t[n++] = x;
    }
    if (n == 0)
        return cli_usage_error("size", "--context needs a value%s", "");
    for (; n < 3; n++)
        t[n] = t[n - 1];
    if (t[1] < t[0] || t[2] < t[1])
        return cli_usage_error("size", "--context %s: P50 <= P90 <= P99 expected", v);
    o->have_context = 1;
    return 0;
}

static int opt_params(void *ctx, const char *v)
{
    double x;
    char why[200];
    if (sim_units_parse(v, SIM_DIM_COUNT, &x, why, sizeof why) || !(x > 0) ||
        x > SIZE_MAX_PARAMS)
        return cli_usage_error("size", "--params %s: expected a positive count such as "
                               "70B, at most 1e15", v);
    ((size_args *)ctx)->c.params = x;
    return 0;
}

static int opt_reserved(void *ctx, const char *v)
{
    size_args *o = ctx;
    double x;
    char why[200];
    if (sim_units_parse(v, SIM_DIM_DATA, &x, why, sizeof why) || x < 0) {
        fprintf(stderr, "dcsim size: error: --reserved %s: %s\n", v, why);
        return CLI_EXIT_INPUT;
    }
    o->c.reserved_bytes = x;
    o->reserved_text = v;
    return 0;
}

static int opt_max_gpus(void *ctx, const char *v)
{
    double x;
    if (parse_count(v, &x) || x > 1024)
        return cli_usage_error("size", "--max-gpus %s: expected 1 to 1024", v);
    ((size_args *)ctx)->c.max_tp = (unsigned)x;
    return 0;
}

static const cli_option size_options[] = {
    {"--weights", 0, CLI_CALL, 0, opt_weights, .missing = "%s needs a value"},
    {"--kv", 0, CLI_CALL, 0, opt_kv, .missing = "%s needs a value"},
    {"--batch", 0, CLI_CALL, 0, opt_batch, .missing = "%s needs a value"},
    {"--context", 0, CLI_CALL, 0, opt_context, .missing = "%s needs a value"},
    {"--params", 0, CLI_CALL, 0, opt_params, .missing = "%s needs a value"},
    {"--reserved", 0, CLI_CALL, 0, opt_reserved, .missing = "%s needs a value"},
    {"--max-gpus", 0, CLI_CALL, 0, opt_max_gpus, .missing = "%s needs a value"},
    {"--catalog", 0, CLI_TEXT, offsetof(size_args, catalog), .missing = "%s needs a value"},
    {"--json", 0, CLI_FLAG, offsetof(size_args, json), NULL, NULL},
    {"--csv", 0, CLI_FLAG, offsetof(size_args, csv), NULL, NULL},
    {"--help", 'h', CLI_HELP, 0, NULL, NULL},
    {0}};

static int size_parse(int argc, char **argv, size_args *o)
{
    static const cli_command cmd = {"size", usage_size, size_options, 2,
                                    .too_many = "unexpected argument '%s'"};
    *o = (size_args){.reserved_text = "0",
                     .c = {.weight_precision = PREC_BF16, .kv_precision = PREC_BF16, .batch = 1,
                           .max_tp = 8}};
    size_t n_args;
    int rc = cli_parse(&cmd, argc, argv, o, o->names, &n_args);
    if (!rc && o->json && o->csv)
        return jsonout_one_format("size");
    if (!rc && n_args < 2)
        return cli_usage_error("size", "give a MODEL and a GPU, e.g. dcsim size llama2-70b H100-SXM%s", "");
    return rc;
}

/* The model and the GPU from the catalog (built in, and --catalog), checked
 * against the options. Returns 0 (*cat the caller's to free), or the exit
 * status of the error printed. */
static int size_lookup(const size_args *o, scn_catalog **cat, const model_arch **m,
                       const hw_gpu **g)
{
    const char *model_name = o->names[0], *gpu_name = o->names[1];
    sim_error err;
    sim_error_clear(&err);
    *cat = NULL;
    if (scn_catalog_load(o->catalog, cat, &err))
        return cli_print_error(&err);
    *m = scn_catalog_model(*cat, model_name);
    *g = scn_catalog_gpu(*cat, gpu_name);
    char known[2048];
    int rc = 0;
    if (!*m) {
        scn_catalog_model_names(*cat, known, sizeof known);
        fprintf(stderr, "dcsim size: error: unknown model '%s'; known models: %s\n", model_name,
                known);
        rc = CLI_EXIT_INPUT;
    } else if (!*g) {
        scn_catalog_gpu_names(*cat, known, sizeof known);
        fprintf(stderr, "dcsim size: error: unknown GPU type '%s'; known types: %s\n", gpu_name,
                known);
        rc = CLI_EXIT_INPUT;
    } else if (!((*g)->hbm_bytes > 0)) {
        fprintf(stderr, "dcsim size: error: GPU type '%s' has no memory capacity in the catalog\n",
                (*g)->name);
        rc = CLI_EXIT_INPUT;
    } else if (!(o->c.reserved_bytes < (*g)->hbm_bytes)) {
        fprintf(stderr, "dcsim size: error: --reserved %s: less than the %s's %.4g GB of "
                        "memory expected (the rest holds weights and KV cache)\n",
                o->reserved_text, (*g)->name, (*g)->hbm_bytes / 1e9);
        rc = CLI_EXIT_INPUT;
    }
    if (rc)
        scn_catalog_free(*cat);
    return rc;
}

static void print_size(const model_arch *m, const hw_gpu *g, const inference_config *c,
                       const inference_sizing *s)
{
    double params = c->params > 0 ? c->params : model_params_total(m);
    printf("dcsim size: %s (%.4g B parameters%s) on %s (%.1f GB = %.1f GiB)\n", m->name,
           params / 1e9, c->params > 0 ? ", as given" : "", g->name, g->hbm_bytes / 1e9,
           g->hbm_bytes / GIB);
    printf("weights (%s): %.1f GB = %.1f GiB\n", precision_name(c->weight_precision),
           s->weights_bytes / 1e9, s->weights_bytes / GIB);
    printf("KV cache (%s): %.0f bytes per token = 2 x %u layers x %u KV heads x %u x %g B\n",
           precision_name(c->kv_precision), s->kv_bytes_per_token, m->layers, m->kv_heads,
           m->head_dim, precision_bytes(c->kv_precision));
    if (c->reserved_bytes > 0)
        printf("reserved per GPU: %.1f GB\n", c->reserved_bytes / 1e9);
    printf("\n  %-4s %10s %16s %18s %14s %22s\n", "", "context", "KV (batch GiB)",
           "weights+KV (GiB)", "GPUs/replica", "sequences per replica");
    static const char *const q[3] = {"P50", "P90", "P99"};
    for (int k = 0; k < 3; k++) {
        char gpus[16];
        if (s->gpus_per_replica[k])
            snprintf(gpus, sizeof gpus, "%u", s->gpus_per_replica[k]);
        else
            snprintf(gpus, sizeof gpus, "> %u", c->max_tp);
        printf("  %-4s %10.0f %16.2f %18.2f %14s %22.0f\n", q[k], c->context_tokens[k],
               s->kv_bytes[k] / GIB, (s->weights_bytes + s->kv_bytes[k]) / GIB, gpus,
               s->sequences_per_replica[k]);
    }
    printf("\nA replica of %u GPU%s (sized for P99) holds the weights and the KV cache of the "
           "sequence counts above (activations and runtime overheads not included).\n",
           s->replica_gpus, s->replica_gpus == 1 ? "" : "s");
    if (s->gpus_per_replica[0] == 1)
        printf("At the P50 context a single %s holds batch %u with %.1f GB to spare.\n", g->name,
               c->batch,
               (g->hbm_bytes - c->reserved_bytes - s->weights_bytes - s->kv_bytes[0]) / 1e9);
    else
        printf("At the P50 context batch %u does not fit on one %s: weights + KV = %.1f GB > %.1f "
               "GB usable.\n", c->batch, g->name, (s->weights_bytes + s->kv_bytes[0]) / 1e9,
               (g->hbm_bytes - c->reserved_bytes) / 1e9);
}

/* --json / --csv (docs/json.md "size"): 0 or 1 (the error printed) */
static int size_json(const model_arch *m, const hw_gpu *g, const inference_config *c,
                     const inference_sizing *s, int csv)
{
    cJSON *o = jsonout_begin("size");
    if (!o)
        return jsonout_emit(NULL, JSONOUT_JSON, NULL, NULL);
    cJSON_AddStringToObject(o, "model", m->name);
    cJSON_AddStringToObject(o, "gpu_type", g->name);
    cJSON_AddNumberToObject(o, "gpu_memory_bytes", g->hbm_bytes);
    cJSON_AddNumberToObject(o, "params", c->params > 0 ? c->params : model_params_total(m));
    cJSON_AddBoolToObject(o, "params_given", c->params > 0);
    cJSON_AddStringToObject(o, "weight_precision", precision_name(c->weight_precision));
    cJSON_AddStringToObject(o, "kv_precision", precision_name(c->kv_precision));
    cJSON_AddNumberToObject(o, "batch", c->batch);
    cJSON_AddNumberToObject(o, "reserved_bytes", c->reserved_bytes);
    cJSON_AddNumberToObject(o, "max_gpus", c->max_tp);
    cJSON_AddNumberToObject(o, "weights_bytes", s->weights_bytes);
    cJSON_AddNumberToObject(o, "kv_bytes_per_token", s->kv_bytes_per_token);
    cJSON_AddNumberToObject(o, "replica_gpus", s->replica_gpus);
    cJSON *rows = cJSON_AddArrayToObject(o, "contexts");
    static const char *const q[3] = {"P50", "P90", "P99"};
    for (int k = 0; k < 3; k++) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddItemToArray(rows, r);
        cJSON_AddStringToObject(r, "percentile", q[k]);
        cJSON_AddNumberToObject(r, "context_tokens", c->context_tokens[k]);
        cJSON_AddNumberToObject(r, "kv_bytes", s->kv_bytes[k]);
        cJSON_AddNumberToObject(r, "weights_kv_bytes", s->weights_bytes + s->kv_bytes[k]);
        /* 0: not even max_gpus GPUs hold weights and KV cache */
        cJSON_AddNumberToObject(r, "gpus_per_replica", s->gpus_per_replica[k]);
        cJSON_AddNumberToObject(r, "sequences_per_replica", s->sequences_per_replica[k]);
    }
    return jsonout_emit(o, csv ? JSONOUT_CSV : JSONOUT_JSON, "contexts", NULL);
}

int cmd_size(int argc, char **argv)
{
    size_args o;
    int rc = size_parse(argc, argv, &o);
    if (rc)
        return rc == CLI_DONE ? 0 : rc;
    scn_catalog *cat;
    const model_arch *m;
    const hw_gpu *g;
    if ((rc = size_lookup(&o, &cat, &m, &g)))
        return rc;
    inference_config c = o.c;
    if (!o.have_context)
        c.context_tokens[0] = c.context_tokens[1] = c.context_tokens[2] = m->seq_len;
    c.gpu_bytes = g->hbm_bytes;
    inference_sizing s;
    memory_inference(m, &c, &s);
    if (o.json || o.csv)
        rc = size_json(m, g, &c, &s, o.csv);
    else
        print_size(m, g, &c, &s);
    scn_catalog_free(cat);
    return rc;
}
