/* serve.c - `dcsim serve`: an inference fleet request by request
 * (models/serving.h; docs/serving.md). Parses, builds the GPU's timing
 * device, runs the simulation and prints (or --json) what it found. */
#include "serve.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "jsonout.h"
#include "hardware.h"
#include "progress.h"
#include "resources.h"
#include "scenario.h"
#include "servecost.h"
#include "servekv.h"
#include "serveh5.h"
#include "servesearch.h"
#include "servesessions.h"
#include "servesize.h"
#include "serving.h"
#include "units.h"

const char usage_serve[] =
    "usage: dcsim serve SCENARIO.xml [--size [--search tp=LIST] [--search gpu=LIST]]\n"
    "                   [--json | --csv]\n"
    "                   [--quiet]\n"
    "                   [-o FILE.h5 [--bin T]]\n"
    "                   [--set PATH=VALUE]...\n"
    "\n"
    "Simulate an LLM inference fleet request by request (the scenario's\n"
    "<serving>, docs/serving.md): arrivals, a router, continuous batching\n"
    "with chunked prefill and a paged KV cache on every replica, each\n"
    "iteration timed by the step tier's compute model. Prints the time to\n"
    "first token (TTFT), time per output token (TPOT), end-to-end latency\n"
    "and queueing delay at P50/P90/P99, throughput, goodput under the SLO,\n"
    "KV-cache use and preemptions, and Little's law as a check; with a\n"
    "<site>, energy, cost and CO2 per million output tokens.\n"
    "\n"
    "  --size       the fewest replicas (at the scenario's tp) whose P99 TTFT\n"
    "               and P99 TPOT meet the <slo> at the scenario's traffic:\n"
    "               doubling or halving from the cluster's count, then\n"
    "               bisection; prints every step, then the answer's run.\n"
    "               With <disaggregated>: the (prefill, decode) pair with the\n"
    "               fewest GPUs, every pair tried by its GPUs, fewest first\n"
    "  --search tp=LIST  with --size: size each tp of LIST (e.g. tp=1,2,4,8) as\n"
    "               --size --set serving/replica/@tp=T does; a table of the\n"
    "               replicas, GPUs and cost per million output tokens, the\n"
    "               cheapest (fewest GPUs) first; a tp whose weights do not\n"
    "               fit is refused in its row\n"
    "  --search gpu=LIST  with --size, alone or with tp=LIST: each catalog GPU\n"
    "               type of LIST (e.g. gpu=H100-SXM,H200-SXM) as --set\n"
    "               cluster/gpu/@type=G does, every tp for each; ranked within\n"
    "               each type, one answer per type (no sourced price per GPU\n"
    "               type ranks the types against each other)\n"
    "  --json       the results as one JSON object (docs/json.md)\n"
    "  --csv        the results as CSV: a header and one row (the latency\n"
    "               quantiles as ttft_p99_s and the like; --size's steps are in\n"
    "               --json only)\n"
    "  -o, --output FILE.h5  the tables /serve/requests (one row per request,\n"
    "               sampled past 1,000,000) and /serve/series (docs/trace-format.md)\n"
    "  --bin T      the series' bin, a duration (default 1s)\n"
    "  -q, --quiet  no progress on stderr\n"
    "  --set PATH=VALUE  override a scenario value, e.g.\n"
    "               --set serving/arrivals/@rate=40/s\n"
    "\n"
    "exit status: 0 ok, 1 internal error, 2 bad input, 130 interrupted\n";

typedef struct serve_args {
    const char *path, *output, *bin;
    cli_sets sets, search;
    int json, csv, quiet, size;
} serve_args;

#define SERVE_BIN_DEFAULT_S 1.0 /* A: the series' bin when --bin is not given */

static const cli_option serve_options[] = {
    {"--json", 0, CLI_FLAG, offsetof(serve_args, json), NULL, NULL},
    {"--csv", 0, CLI_FLAG, offsetof(serve_args, csv), NULL, NULL},
    {"--size", 0, CLI_FLAG, offsetof(serve_args, size), NULL, NULL},
    {"--quiet", 'q', CLI_FLAG, offsetof(serve_args, quiet), NULL, NULL},
    {"--output", 'o', CLI_TEXT, offsetof(serve_args, output), .missing = "%s needs a file name"},
    {"--bin", 0, CLI_TEXT, offsetof(serve_args, bin), .missing = "%s needs a duration"},
    {"--search", 0, CLI_SETS_EQ, offsetof(serve_args, search),
     .missing = "%s needs tp=LIST or gpu=LIST"},
    {"--set", 0, CLI_SETS, offsetof(serve_args, sets), .missing = "%s needs PATH=VALUE"},
    {"--help", 'h', CLI_HELP, 0, NULL, NULL},
    {0}};

static int on_poll(void *ctx, double sim_time_s, uint64_t finished)
{
    double wall;
    if (progress_due(ctx, 0.25, &wall)) {
        fprintf(stderr, "\r\033[K  serving: %.4g s simulated, %llu requests finished, %.0f s",
                sim_time_s, (unsigned long long)finished, wall);
        fflush(stderr);
    }
    return 0; /* no output file: an interrupt simply ends the process */
}

static void describe_length(const serve_length *l, char *buf, size_t size)
{
    int n = 0;
    if (l->dist == SERVE_LEN_FIXED)
        n = snprintf(buf, size, "%.0f tokens", l->a);
    else if (l->dist == SERVE_LEN_UNIFORM)
        n = snprintf(buf, size, "uniform %.0f-%.0f tokens", l->a, l->b);
    else
        n = snprintf(buf, size, "lognormal, median %.0f tokens, sigma %.3g", l->a, l->b);
    if (l->max > 0 && n >= 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, " (at most %.0f)", l->max);
}

void serve_describe_arrivals(const serve_config *c, char *buf, size_t size)
{
    if (c->arrival == SERVE_TRACE)
        snprintf(buf, size, "trace, %llu requests from %.6g s to %.6g s", (unsigned long long)
                 c->n_trace, c->trace[0].arrival_s, c->trace[c->n_trace - 1].arrival_s);
    else if (c->arrival == SERVE_CLOSED)
        snprintf(buf, size, "closed loop, %u clients, %llu requests", c->clients,
                 (unsigned long long)c->max_requests);
    else if (c->arrival == SERVE_GAMMA)
        snprintf(buf, size, "gamma (cv %.3g), %.4g requests/s for %.4g s", c->cv, c->rate_per_s,
                 c->duration_s);
    else if (c->diurnal_amplitude > 0)
        snprintf(buf, size, "poisson, %.4g requests/s x (1 + %.3g cos(2 pi (t - %.4g s) / %.4g "
                 "s)) for %.4g s", c->rate_per_s, c->diurnal_amplitude, c->diurnal_peak_s,
                 c->diurnal_period_s, c->duration_s);
    else
        snprintf(buf, size, "poisson, %.4g requests/s for %.4g s", c->rate_per_s, c->duration_s);
}

static void print_latency(const char *name, const serve_latency *l, uint64_t n)
{
    if (!n) {
        printf("  %-6s %10s\n", name, "-");
        return;
    }
    printf("  %-6s %10.4g %10.4g %10.4g %10.4g %10.4g\n", name, l->mean_s * 1e3,
           l->q_s[0] * 1e3, l->q_s[1] * 1e3, l->q_s[2] * 1e3, l->max_s * 1e3);
}

/* what the compute model gives the typical batches, to read the rest by */
static void print_iteration_model(const serve_config *c)
{
    double p = c->prompt.a, ctx = 0;
    if (p > c->max_batch_tokens)
        p = c->max_batch_tokens;
    serve_batch prefill = {1, &p, &ctx, 0, 0, 1};
    serve_batch one = {0, NULL, NULL, 1, c->prompt.a + 1, 1};
    unsigned full = c->max_sequences < c->max_batch_tokens ? c->max_sequences
                                                            : c->max_batch_tokens;
    serve_batch many = {0, NULL, NULL, full, full * (c->prompt.a + 1), full};
    printf("iteration  prefill of %.0f tokens %.4g ms; decode of 1 sequence %.4g ms, of %u "
           "%.4g ms (at %.0f tokens of context)\n",
           p, serve_iteration_s(c, &prefill) * 1e3, serve_iteration_s(c, &one) * 1e3, full,
           serve_iteration_s(c, &many) * 1e3, c->prompt.a + 1);
}

/* the requests line: with sessions the drops split into KV-cache drops and
 * follow-ups refused for the context window */
static void print_requests(const serve_config *c, const serve_result *r)
{
    printf("\nrequests   %llu arrived, %llu finished, %llu dropped (",
           (unsigned long long)r->arrived, (unsigned long long)r->finished,
           (unsigned long long)r->dropped);
    if (serve_has_sessions(c))
        printf("%llu longer than a replica's KV cache, %llu over the context window",
               (unsigned long long)(r->dropped - r->turns_refused),
               (unsigned long long)r->turns_refused);
    else
        printf("longer than a replica's KV cache");
    printf("), %llu in flight; %llu preemptions\n", (unsigned long long)r->in_flight,
           (unsigned long long)r->preemptions);
}

static void print_cost(const scn_scenario *s, const serve_cost *k)
{
    printf("\nsite       %s: %.6g GPUs x %.6g h = %.6g GPU-hours, busy %.1f%%: IT %.6g kW, "
           "PUE %.4g, %.6g kWh, %.6g CNY, %.6g kg CO2\n",
           s->site.info.name, k->gpus, k->e.hours, k->gpu_hours, 100 * k->busy_fraction,
           k->it_power_w / 1e3, k->e.pue, k->e.facility_energy_j / 3.6e6, k->e.cost,
           k->e.co2_kg);
    printf("cost basis %s\n", k->basis);
    printf("per Mtok   %.6g kWh, %.6g CNY energy, %.6g kg CO2 per million output tokens",
           k->kwh_per_mtok, k->cost_per_mtok, k->co2_kg_per_mtok);
    if (k->has_costs)
        printf("; built %.6g CNY", k->build_per_mtok);
    if (k->has_rent)
        printf("; rented %.6g CNY", k->rent_per_mtok);
    printf("\n");
}

/* remote fetch's lines: the setting (setup) or the figures */
static void print_fetch(const scn_scenario *s, const serve_config *c, const serve_result *r,
                        int setup)
{
    if (setup)
        printf("remote KV  a replica missing a cached context another holds fetches it over "
               "%s (%u GPUs a node; sharing the links with the other KV transfers) when "
               "cheaper than recomputing it\n", s->serving_kv_links, c->node_gpus);
    else
        printf("remote     %llu requests fetched cached KV from another replica (%.6g tokens, "
               "%.6g GB; arrival to KV mean %.4g ms, max %.4g ms); %llu recomputed it instead "
               "(estimated cheaper)\n", (unsigned long long)r->fetches, r->fetch_tokens,
               r->fetch_bytes / 1e9, r->fetch_mean_s * 1e3, r->fetch_max_s * 1e3,
               (unsigned long long)r->fetches_declined);
}

static void print_text(const scn_scenario *s, const serve_config *c, const serve_result *r,
                       const serve_cost *k)
{
    char prompt[128], output[128], arrivals[160];
    describe_length(&c->prompt, prompt, sizeof prompt);
    describe_length(&c->output, output, sizeof output);
    if (c->arrival == SERVE_TRACE) {
        snprintf(prompt, sizeof prompt, "the trace's (mean %.0f tokens)", c->prompt.a);
        snprintf(output, sizeof output, "the trace's (mean %.0f tokens)", c->output.a);
    }
    serve_describe_arrivals(c, arrivals, sizeof arrivals);
    printf("dcsim serve: %s%s%s on %.0f x %s (%.1f GB): %u %sreplicas of tp %u%s%s%s\n",
           c->arch.name, s->name[0] ? " - " : "", s->name, serve_gpus(c), s->gpu.name,
           c->gpu_bytes / 1e9, c->replicas, c->prefill_replicas ? "decode " : "", c->tp,
           c->tp > 1 ? " (" : "", s->serving_scaleup, c->tp > 1 ? ")" : "");
    printf("replica    math %s, weights %s (%.2f GB per GPU), KV %s (%.4g kB per token), "
           "%.0f blocks of %u tokens (%.0f tokens)\n",
           precision_name(c->math_precision), precision_name(c->weight_precision),
           r->weights_bytes_per_gpu / 1e9, precision_name(c->kv_precision),
           r->kv_bytes_per_token / 1e3, r->kv_blocks_per_replica, c->kv_block_tokens,
           r->kv_blocks_per_replica * c->kv_block_tokens);
    printf("batching   %u tokens and %u sequences per iteration, chunked prefill; router %s\n",
           c->max_batch_tokens, c->max_sequences, serve_router_name(c->router));
    if (c->prefill_replicas)
        printf("pools      prefill %u x tp %u (%.0f blocks each), decode %u x tp %u; KV sent "
               "over %s, %u GPUs a node; %s\n", c->prefill_replicas, c->prefill_tp,
               r->prefill_kv_blocks_per_replica, c->replicas, c->tp, s->serving_kv_links,
               c->node_gpus, c->kv_contention != SERVE_KV_SHARED
                                 ? "a prefill replica sends one transfer at a time"
                             : c->fabric ? "the transfers in flight share every link of the "
                                           "fabric on their routes"
                                         : "the transfers in flight share the replicas' links");
    if (c->prefix_prompts)
        printf("prefixes   %u shared prefixes of %.0f tokens (%.0f cached per hit), on %.4g%% "
               "of requests, zipf %.3g\n", c->prefix_prompts, c->prefix_tokens,
               floor(c->prefix_tokens / c->kv_block_tokens) * c->kv_block_tokens,
               100 * c->prefix_share, c->prefix_zipf);
    for (unsigned l = 1; c->prefix_prompts && l < c->prefix_levels; l++) {
        const struct serve_prefix_level *v = &c->prefix_inner[l - 1];
        printf("           level %u: %u under each level-%u prefix, %.0f tokens, on %.4g%% of "
               "those, zipf %.3g\n", l + 1, v->prompts, l, v->tokens, 100 * v->share, v->zipf);
    }
    if (c->kv_remote == SERVE_KV_REMOTE_FETCH)
        print_fetch(s, c, r, 1);
    if (c->preemption == SERVE_PREEMPT_SWAP)
        printf("preemption swap: a host pool of %.0f blocks per replica (%.4g GB per GPU), "
               "copied at %.4g GB/s per GPU and direction before the iteration's kernels\n",
               r->host_blocks_per_replica, c->host_bytes_per_gpu / 1e9,
               c->host_link_bytes_per_s / 1e9);
    if (serve_has_sessions(c))
        serve_session_print_setup(c);
    printf("traffic    %s; prompt %s; output %s\n", arrivals, prompt, output);
    print_iteration_model(c);
    if (s->serving_defaults[0])
        printf("defaults used: %s\n", s->serving_defaults);
    print_requests(c, r);
    printf("throughput %.6g output tokens/s (%.6g per GPU), %.6g requests/s over %.6g s; "
           "%.1f tokens per iteration, replicas busy %.1f%%\n",
           r->output_tokens_per_s, r->output_tokens_per_s_per_gpu, r->requests_per_s, r->end_s,
           r->mean_batch_tokens, 100 * r->busy_fraction);
    printf("\n  %-6s %10s %10s %10s %10s %10s   (ms)\n", "", "mean", "P50", "P90", "P99",
           "max");
    print_latency("TTFT", &r->ttft, r->finished);
    print_latency("TPOT", &r->tpot, r->tpot_count);
    print_latency("E2E", &r->e2e, r->finished);
    print_latency("queue", &r->queue, r->finished);
    if (!r->quantiles_exact)
        printf("           quantiles from log-spaced histograms: each at most %.2g%% above the "
               "exact nearest rank, never below (mean and max exact)\n",
               100 * r->quantile_rel_error);
    if (c->slo_ttft_s > 0 || c->slo_tpot_s > 0)
        printf("\nSLO        TTFT <= %.4g ms, TPOT <= %.4g ms: %.2f%% of finished requests; "
               "goodput %.6g requests/s\n",
               c->slo_ttft_s * 1e3, c->slo_tpot_s * 1e3, 100 * r->slo_met_fraction,
               r->goodput_requests_per_s);
    printf("KV cache   mean use %.1f%%, peak %.1f%% of the fleet's blocks\n",
           100 * r->kv_util_mean, 100 * r->kv_util_max);
    if (c->preemption == SERVE_PREEMPT_SWAP)
        printf("swap       %llu swapped out, %llu back in, %llu fallbacks to recompute (host "
               "pool full); %.6g GB out, %.6g GB in; %.6g s copying (%.2f%% of busy time); "
               "host pool peak %.1f%%\n", (unsigned long long)r->swaps_out,
               (unsigned long long)r->swaps_in, (unsigned long long)r->swap_fallbacks,
               r->swap_out_bytes / 1e9, r->swap_in_bytes / 1e9, r->swap_time_s,
               r->busy_fraction > 0 && r->end_s > 0
                   ? 100 * r->swap_time_s / (r->busy_fraction * r->end_s *
                                            (c->replicas + c->prefill_replicas))
                   : 0,
               100 * r->host_util_max);
    if (c->prefix_prompts)
        printf("prefix     %llu of %llu requests with a prefix found it cached (hit rate "
               "%.2f%%); %.6g prompt tokens not prefilled; mean TTFT %.4g ms on a hit, %.4g "
               "ms otherwise\n", (unsigned long long)r->prefix_hits,
               (unsigned long long)r->prefix_requests, 100 * r->prefix_hit_rate,
               r->prefill_tokens_saved, r->ttft_hit_mean_s * 1e3, r->ttft_miss_mean_s * 1e3);
    for (unsigned l = 0; c->prefix_prompts && c->prefix_levels > 1 && l < c->prefix_levels; l++)
        printf("           level %u: %llu of %llu found their chain cached to it (%.2f%%)\n",
               l + 1, (unsigned long long)r->prefix_level_hits[l],
               (unsigned long long)r->prefix_level_requests[l],
               r->prefix_level_requests[l]
                   ? 100.0 * r->prefix_level_hits[l] / r->prefix_level_requests[l] : 0);
    if (c->prefix_prompts && c->prefix_levels > 1)
        printf("           prompt tokens admitted %.6g = prefilled %.6g + cached %.6g (with "
               "preemptions, prefilled counts the recomputed too)\n",
               r->prompt_tokens_admitted, r->prefill_tokens_computed, r->prefill_tokens_saved);
    if (c->prefill_replicas)
        serve_kv_print(s, c, r);
    if (c->kv_remote == SERVE_KV_REMOTE_FETCH)
        print_fetch(s, c, r, 0);
    if (serve_has_sessions(c))
        serve_session_print_result(c, r);
    printf("Little     L %.6g requests in the system = lambda %.6g/s x W %.6g s = %.6g\n",
           r->little_l, r->little_lambda, r->little_w, r->little_lambda * r->little_w);
    if (k)
        print_cost(s, k);
}

static void json_latency(cJSON *root, const char *name, const serve_latency *l)
{
    cJSON *o = cJSON_AddObjectToObject(root, name);
    cJSON_AddNumberToObject(o, "mean_s", l->mean_s);
    cJSON_AddNumberToObject(o, "p50_s", l->q_s[0]);
    cJSON_AddNumberToObject(o, "p90_s", l->q_s[1]);
    cJSON_AddNumberToObject(o, "p99_s", l->q_s[2]);
    cJSON_AddNumberToObject(o, "max_s", l->max_s);
}

/* the prefix tree's levels (nested <prefix>): prefix.levels and, per level
 * N, prefix.levelN_requests, _hits and _hit_rate (scalars: --csv keeps
 * them), and the prompt tokens' balance */
static void json_prefix_levels(cJSON *p, const serve_config *c, const serve_result *r)
{
    char key[32];
    cJSON_AddNumberToObject(p, "levels", c->prefix_levels);
    for (unsigned l = 0; l < c->prefix_levels; l++) {
        uint64_t n = r->prefix_level_requests[l], h = r->prefix_level_hits[l];
        snprintf(key, sizeof key, "level%u_requests", l + 1);
        cJSON_AddNumberToObject(p, key, (double)n);
        snprintf(key, sizeof key, "level%u_hits", l + 1);
        cJSON_AddNumberToObject(p, key, (double)h);
        snprintf(key, sizeof key, "level%u_hit_rate", l + 1);
        cJSON_AddNumberToObject(p, key, n ? (double)h / n : 0);
    }
    cJSON_AddNumberToObject(p, "prompt_tokens_admitted", r->prompt_tokens_admitted);
    cJSON_AddNumberToObject(p, "prefill_tokens_computed", r->prefill_tokens_computed);
}

/* swap preemption's figures (only under preemption="swap": a recompute
 * run's document is what it was) */
static void json_swap(cJSON *root, const serve_config *c, const serve_result *r)
{
    cJSON *o = cJSON_AddObjectToObject(root, "swap");
    const struct { const char *name; double value; } v[] = {
        {"swaps_out", (double)r->swaps_out}, {"swaps_in", (double)r->swaps_in},
        {"fallbacks", (double)r->swap_fallbacks}, {"out_bytes", r->swap_out_bytes},
        {"in_bytes", r->swap_in_bytes}, {"time_s", r->swap_time_s},
        {"host_blocks_per_replica", r->host_blocks_per_replica},
        {"host_util_max", r->host_util_max}, {"host_bytes_per_gpu", c->host_bytes_per_gpu},
        {"host_link_bytes_per_s", c->host_link_bytes_per_s}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        cJSON_AddNumberToObject(o, v[i].name, v[i].value);
}

static void json_cost(cJSON *root, const serve_cost *k)
{
    cJSON *o = cJSON_AddObjectToObject(root, "cost");
    const struct { const char *name; double value; } v[] = {
        {"gpus", k->gpus}, {"gpu_hours", k->gpu_hours}, {"busy_fraction", k->busy_fraction},
        {"it_power_w", k->it_power_w}, {"it_energy_j", k->e.it_energy_j},
        {"facility_energy_j", k->e.facility_energy_j}, {"pue", k->e.pue},
        {"energy_cost_cny", k->e.cost}, {"co2_kg", k->e.co2_kg},
        {"output_mtok", k->mtok}, {"kwh_per_mtok", k->kwh_per_mtok},
        {"energy_cost_per_mtok_cny", k->cost_per_mtok},
        {"co2_kg_per_mtok", k->co2_kg_per_mtok}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        cJSON_AddNumberToObject(o, v[i].name, v[i].value);
    if (k->has_costs)
        cJSON_AddNumberToObject(o, "build_cost_per_mtok_cny", k->build_per_mtok);
    if (k->has_rent)
        cJSON_AddNumberToObject(o, "rent_cost_per_mtok_cny", k->rent_per_mtok);
    cJSON_AddStringToObject(o, "basis", k->basis);
}

/* 0, or 1 (the error printed); root (may be NULL) takes the results; as
 * CSV (csv), one row */
static int print_json(const scn_scenario *s, const serve_config *c, const serve_result *r,
                      const serve_cost *k, cJSON *root, int csv)
{
    if (!root)
        root = jsonout_begin("serve");
    if (!root)
        return jsonout_emit(NULL, JSONOUT_JSON, NULL, NULL);
    cJSON_AddStringToObject(root, "scenario", s->name);
    cJSON_AddStringToObject(root, "model", c->arch.name);
    cJSON_AddStringToObject(root, "gpu", s->gpu.name);
    const struct { const char *name; double value; } numbers[] = {
        {"replicas", c->replicas}, {"tp", c->tp}, {"arrived", (double)r->arrived},
        {"finished", (double)r->finished}, {"dropped", (double)r->dropped},
        {"in_flight", (double)r->in_flight}, {"preemptions", (double)r->preemptions},
        {"iterations", (double)r->iterations}, {"end_s", r->end_s},
        {"output_tokens_per_s", r->output_tokens_per_s},
        {"output_tokens_per_s_per_gpu", r->output_tokens_per_s_per_gpu},
        {"requests_per_s", r->requests_per_s},
        {"goodput_requests_per_s", r->goodput_requests_per_s},
        {"slo_met_fraction", r->slo_met_fraction}, {"kv_util_mean", r->kv_util_mean},
        {"kv_util_max", r->kv_util_max}, {"busy_fraction", r->busy_fraction},
        {"mean_batch_tokens", r->mean_batch_tokens}, {"little_l", r->little_l},
        {"little_lambda", r->little_lambda}, {"little_w", r->little_w},
        {"kv_blocks_per_replica", r->kv_blocks_per_replica},
        {"weights_bytes_per_gpu", r->weights_bytes_per_gpu},
        {"kv_bytes_per_token", r->kv_bytes_per_token}};
    for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++)
        cJSON_AddNumberToObject(root, numbers[i].name, numbers[i].value);
    json_latency(root, "ttft", &r->ttft);
    json_latency(root, "tpot", &r->tpot);
    json_latency(root, "e2e", &r->e2e);
    json_latency(root, "queue", &r->queue);
    if (!r->quantiles_exact)
        cJSON_AddNumberToObject(root, "quantile_rel_error", r->quantile_rel_error);
    if (c->prefix_prompts) {
        cJSON *p = cJSON_AddObjectToObject(root, "prefix");
        cJSON_AddNumberToObject(p, "requests", (double)r->prefix_requests);
        cJSON_AddNumberToObject(p, "hits", (double)r->prefix_hits);
        cJSON_AddNumberToObject(p, "hit_rate", r->prefix_hit_rate);
        cJSON_AddNumberToObject(p, "prefill_tokens_saved", r->prefill_tokens_saved);
        cJSON_AddNumberToObject(p, "ttft_hit_mean_s", r->ttft_hit_mean_s);
        cJSON_AddNumberToObject(p, "ttft_miss_mean_s", r->ttft_miss_mean_s);
        if (c->prefix_levels > 1)
            json_prefix_levels(p, c, r);
    }
    if (c->prefill_replicas)
        serve_kv_json(root, s, c, r);
    if (c->kv_remote == SERVE_KV_REMOTE_FETCH) {
        cJSON *p = cJSON_AddObjectToObject(root, "remote_fetch");
        cJSON_AddNumberToObject(p, "fetches", (double)r->fetches);
        cJSON_AddNumberToObject(p, "declined", (double)r->fetches_declined);
        cJSON_AddNumberToObject(p, "tokens", r->fetch_tokens);
        cJSON_AddNumberToObject(p, "bytes", r->fetch_bytes);
        cJSON_AddNumberToObject(p, "mean_s", r->fetch_mean_s);
        cJSON_AddNumberToObject(p, "max_s", r->fetch_max_s);
    }
    if (serve_has_sessions(c))
        serve_session_json(root, c, r);
    if (c->preemption == SERVE_PREEMPT_SWAP)
        json_swap(root, c, r);
    if (k)
        json_cost(root, k);
    cJSON_AddStringToObject(root, "defaults_used", s->serving_defaults);
    return jsonout_emit(root, csv ? JSONOUT_CSV : JSONOUT_JSON_LINE, NULL, NULL);
}

/* -o FILE.h5 [--bin T]: the target checked before the run, the series'
 * bin and the request sink set in c. 0, or an error code with err set. */
static int output_setup(const serve_args *o, const scn_scenario *s, serve_config *c,
                        outpath *out, serve_h5_rows *rows, sim_error *err)
{
    c->series_bin_s = SERVE_BIN_DEFAULT_S;
    if (o->bin)
        sim_units_parse(o->bin, SIM_DIM_TIME, &c->series_bin_s, NULL, 0); /* checked already */
    size_t n_in;
    const char **inputs = scn_input_paths(s, o->path, NULL, &n_in);
    int rc = inputs ? outpath_init(out, o->output, "the tables", inputs, n_in, err)
                    : sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
    free(inputs);
    if (rc)
        return rc;
    serve_h5_rows_init(rows, c);
    c->on_request = serve_h5_on_request;
    c->request_ctx = rows;
    return 0;
}

int serve_prepare(const scn_scenario *s, serve_config *c, unsigned runs, sim_error *err)
{
    /* decode kernels run from CUDA graphs (TensorRT-LLM's setting,
     * components.md 7.2) with FlashAttention-2's prefill */
    framework_config fw = {.attention_kernel = ATTN_FLASH2, .cuda_graphs = 1};
    int rc = hw_compute_device_fw(&s->gpu, c->math_precision, &fw, &c->dev, err);
    c->fabric = s->has_fabric ? &s->fabric : NULL; /* the KV transfers' routes */
    if (!rc) /* the quantiles' records and, at worst, every request waiting at once */
        rc = res_check_more(s, 0, (runs ? runs : 1) * serve_records_bytes(c), "request records",
                            err);
    return rc;
}

int cmd_serve(int argc, char **argv)
{
    static const cli_command cmd = {"serve", usage_serve, serve_options, 1,
                                    .too_many = "more than one scenario given ('%s')"};
    serve_args o = {0};
    size_t n_args;
    int rc = cli_parse(&cmd, argc, argv, &o, &o.path, &n_args);
    if (rc)
        return rc == CLI_DONE ? 0 : rc;
    if (o.json && o.csv)
        return jsonout_one_format("serve");
    if (!o.path)
        return cli_usage_error("serve", "a scenario with <serving> is needed%s", "");
    if (o.output && o.size)
        return cli_usage_error("serve", "--output writes one run's tables; it does not go "
                               "with --size%s", "");
    if (o.search.n && (!o.size || o.output || o.csv))
        return cli_usage_error("serve", "--search goes with --size (text or --json; no -o, "
                               "no --csv)%s", "");
    if (o.search.n) {
        serve_search_args a = {o.path, &o.sets, &o.search, o.json, o.quiet};
        return serve_search(&a);
    }
    if (o.bin && !o.output)
        return cli_usage_error("serve", "--bin sets the series' bin of --output%s", "");
    double bin_s = 0;
    if (o.bin && (sim_units_parse(o.bin, SIM_DIM_TIME, &bin_s, NULL, 0) ||
                  !(bin_s >= 1e-6 && bin_s <= 3.2e7)))
        return cli_usage_error("serve", "--bin %s: expected a duration with its unit, from 1us "
                               "to a year", o.bin);
    o.json = o.json || o.csv; /* the CSV is the document's */
    scn_scenario s;
    sim_error err;
    sim_error_clear(&err);
    if (scn_load_flags(o.path, o.sets.v, o.sets.n, SCN_LOAD_SERVING, &s, &err))
        return cli_print_error(&err);
    if (!s.has_serving) {
        sim_error_set(&err, SIM_ERR_INPUT, s.source, 0,
                      "no <serving> section: dcsim serve simulates an inference fleet "
                      "(docs/serving.md); a training <job> runs with dcsim run");
        scn_scenario_free(&s);
        return cli_print_error(&err);
    }
    serve_config c = s.serving;
    outpath out;
    serve_h5_rows rows;
    memset(&rows, 0, sizeof rows);
    if (o.output && (rc = output_setup(&o, &s, &c, &out, &rows, &err))) {
        scn_scenario_free(&s);
        return cli_print_error(&err);
    }
    rc = serve_prepare(&s, &c, 1, &err);
    progress prog;
    progress_start(&prog, o.quiet || o.json);
    c.poll = on_poll;
    c.poll_ctx = &prog;
    serve_result r;
    cJSON *root = NULL;
    serve_size_steps st = {.json = o.json, .prog = &prog};
    if (!rc && o.size) {
        if (o.json && !(root = jsonout_begin("serve")))
            rc = sim_error_set(&err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
        if (!rc)
            rc = serve_size_run(&c, &st, root, &r, &err);
    } else if (!rc) {
        rc = serve_simulate(&c, &r, &err);
    }
    progress_clear(&prog);
    serve_cost k;
    if (!rc && s.site.given)
        rc = serve_cost_at_site(&s, &c, &r, &k, &err);
    if (!rc && o.output) {
        char command[4096];
        size_t used = (size_t)snprintf(command, sizeof command, "dcsim serve");
        for (int i = 0; i < argc && used < sizeof command; i++)
            used += (size_t)snprintf(command + used, sizeof command - used, " %s", argv[i]);
        rc = serve_h5_write(&out, &s, &c, &r, &rows, command, &err);
        serve_h5_rows_free(&rows);
        if (rc)
            serve_result_free(&r);
    } else if (o.output) {
        outpath_discard(&out);
        serve_h5_rows_free(&rows);
    }
    if (rc) {
        cJSON_Delete(root);
        if (!err.file[0])
            snprintf(err.file, sizeof err.file, "%s", s.source);
        scn_scenario_free(&s);
        return cli_print_error(&err);
    }
    const serve_cost *kp = s.site.given ? &k : NULL;
    if (o.json)
        rc = print_json(&s, &c, &r, kp, root, o.csv);
    else
        print_text(&s, &c, &r, kp);
    serve_result_free(&r);
    scn_scenario_free(&s);
    return rc;
}
