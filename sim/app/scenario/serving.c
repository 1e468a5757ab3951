/* serving.c - <serving> (dcsim serve; docs/serving.md): <model>,
 * <replica>, <router>, <arrivals>, <prompt>, <output>, <slo>, into
 * s->serving (models/serving.h) without the timing device, which the app
 * builds from the cluster's GPU at the replica's precision. Values the
 * scenario leaves out are filled by the documented defaults below and
 * listed in s->serving_defaults ("defaults used").
 */
#include "loader.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Defaults (docs/serving.md "Defaults"): none of these is in
 * shared/reference as a serving system's default, except the KV fraction. */
#define DEFAULT_KV_FRACTION 0.90   /* TensorRT-LLM: 0.90-0.95 of free memory (components.md
                                      7.2, I2) */
#define DEFAULT_KV_BLOCK 16u       /* A: vLLM accepts 1-128, CUDA up to 32 (components.md 7.3) */
#define DEFAULT_BATCH_TOKENS 8192u /* A: the token budget of one iteration */
#define DEFAULT_SEQUENCES 256u     /* A: running sequences per replica */
#define MAX_TOKENS_ATTR 1e7
#define DEFAULT_DIURNAL_PERIOD_S 86400.0 /* a day */

static void note_default(scn_scenario *s, const char *text)
{
    size_t used = strlen(s->serving_defaults);
    snprintf(s->serving_defaults + used, sizeof s->serving_defaults - used, "%s%s",
             used ? "; " : "", text);
}

static int precision_attr(loader *ld, xmlNode *n, const char *attr, int fallback, int *out)
{
    char text[16];
    copy_attr(n, attr, text, sizeof text);
    if (!text[0]) {
        *out = fallback;
        return 0;
    }
    enum precision p;
    if (precision_parse(text, &p))
        return node_error(ld, n, attr, "unknown precision; use fp32 tf32 bf16 fp16 fp8 fp4 int8");
    *out = (int)p;
    return 0;
}

/* tp > 1: the TP all-reduces run on the GPU's scale-up link (attr names
 * the attribute that set tp, for messages) */
static int scaleup_for(loader *ld, xmlNode *n, const char *attr, scn_scenario *s, unsigned tp)
{
    serve_config *c = &s->serving;
    if (tp < 2)
        return 0;
    const hw_link *lk = s->gpu.scaleup_kind[0] ? find_named(ld, CAT_LINK, s->gpu.scaleup_kind)
                                               : NULL;
    if (!lk)
        return node_error(ld, n, attr, "tp %u needs GPU type %s's scale-up link, and the "
                          "catalog has none for it", tp, s->gpu.name);
    if (s->gpu.scaleup_domain && tp > s->gpu.scaleup_domain)
        return node_error(ld, n, attr, "tp %u is more than the %u GPUs of one %s domain", tp,
                          s->gpu.scaleup_domain, lk->name);
    if (!(lk->step_latency_s > 0))
        return node_error(ld, n, attr, "link %s has no step-latency in the catalog; the "
                          "TP all-reduce needs one", lk->name);
    double rate = s->gpu.scaleup_bytes_per_s > 0 ? s->gpu.scaleup_bytes_per_s : lk->bytes_per_s;
    c->scaleup_bytes_per_s = rate * lk->efficiency;
    c->scaleup_step_s = lk->step_latency_s;
    snprintf(s->serving_scaleup, sizeof s->serving_scaleup, "%s", lk->name);
    return 0;
}

static int parse_replica(loader *ld, xmlNode *n, scn_scenario *s)
{
    serve_config *c = &s->serving;
    c->tp = 1;
    c->kv_fraction = DEFAULT_KV_FRACTION;
    c->kv_block_tokens = DEFAULT_KV_BLOCK;
    c->max_batch_tokens = DEFAULT_BATCH_TOKENS;
    c->max_sequences = DEFAULT_SEQUENCES;
    int rc = 0;
    if (n) {
        rc = get_uint(ld, n, "tp", 0, 1, 64, &c->tp);
        if (!rc)
            rc = precision_attr(ld, n, "precision", PREC_BF16, &c->math_precision);
        if (!rc)
            rc = precision_attr(ld, n, "weights", c->math_precision, &c->weight_precision);
        if (!rc)
            rc = precision_attr(ld, n, "kv", PREC_BF16, &c->kv_precision);
        if (!rc)
            rc = precision_attr(ld, n, "activations", PREC_BF16, &c->act_precision);
        if (!rc)
            rc = get_fraction(ld, n, "kv-fraction", &c->kv_fraction);
        if (!rc)
            rc = get_uint(ld, n, "kv-block", 0, 1, 65536, &c->kv_block_tokens);
        if (!rc)
            rc = get_uint(ld, n, "max-batch-tokens", 0, 1, 1000000, &c->max_batch_tokens);
        if (!rc)
            rc = get_uint(ld, n, "max-sequences", 0, 1, 100000, &c->max_sequences);
        if (!rc && has_attr(n, "iteration-overhead")) {
            rc = get_quantity(ld, n, "iteration-overhead", SIM_DIM_TIME, 1,
                              &c->iteration_overhead_s);
            if (!rc && !(c->iteration_overhead_s >= 0 && c->iteration_overhead_s <= 1))
                rc = node_error(ld, n, "iteration-overhead", "iteration-overhead must be "
                                "from 0 to 1 s");
        }
        if (rc)
            return rc;
    } else {
        c->math_precision = c->weight_precision = c->kv_precision = c->act_precision = PREC_BF16;
    }
    if (!n || !has_attr(n, "kv-fraction"))
        note_default(s, "kv-fraction 90% of the memory left after weights (TensorRT-LLM's "
                        "0.90-0.95, components.md 7.2)");
    if (!n || !has_attr(n, "kv-block"))
        note_default(s, "kv-block 16 tokens (A)");
    if (!n || !has_attr(n, "max-batch-tokens"))
        note_default(s, "max-batch-tokens 8192 (A)");
    if (!n || !has_attr(n, "max-sequences"))
        note_default(s, "max-sequences 256 (A)");
    if (!n || !has_attr(n, "iteration-overhead"))
        note_default(s, "iteration-overhead 0: only the kernels' launch costs (A: no "
                        "scheduler figure in shared/reference)");
    if (s->campaign.gpu_count % c->tp)
        return node_error(ld, n, "tp", "tp %u does not divide the cluster's %llu GPUs", c->tp,
                          (unsigned long long)s->campaign.gpu_count);
    c->replicas = (unsigned)(s->campaign.gpu_count / c->tp);
    int rc2 = scaleup_for(ld, n, "tp", s, c->tp);
    c->reserved_bytes = s->reserved_bytes;
    c->gpu_bytes = s->gpu.hbm_bytes;
    return rc2;
}

static int parse_length(loader *ld, xmlNode *n, serve_length *l)
{
    char dist[32];
    copy_attr(n, "distribution", dist, sizeof dist);
    if (!dist[0])
        snprintf(dist, sizeof dist, "fixed");
    if (serve_length_dist_parse(dist, &l->dist))
        return node_error(ld, n, "distribution", "unknown distribution; use fixed, uniform "
                          "or lognormal");
    static const char *const first[SERVE_LEN_COUNT] = {"tokens", "low", "median"};
    static const char *const second[SERVE_LEN_COUNT] = {NULL, "high", "sigma"};
    int rc = get_quantity(ld, n, first[l->dist], SIM_DIM_COUNT, 1, &l->a);
    if (!rc && (!(l->a >= 1) || l->a > MAX_TOKENS_ATTR))
        rc = node_error(ld, n, first[l->dist], "%s must be from 1 to 1e7 tokens",
                        first[l->dist]);
    if (!rc && second[l->dist])
        rc = get_quantity(ld, n, second[l->dist], SIM_DIM_COUNT, 1, &l->b);
    if (!rc && l->dist == SERVE_LEN_UNIFORM && !(l->b >= l->a && l->b <= MAX_TOKENS_ATTR))
        rc = node_error(ld, n, "high", "high must be from low to 1e7 tokens");
    if (!rc && l->dist == SERVE_LEN_LOGNORMAL && !(l->b > 0 && l->b <= 5))
        rc = node_error(ld, n, "sigma", "sigma must be above 0 and at most 5");
    if (!rc)
        rc = get_quantity(ld, n, "max", SIM_DIM_COUNT, 0, &l->max);
    if (!rc && has_attr(n, "max") && !(l->max >= 1 && l->max <= MAX_TOKENS_ATTR))
        rc = node_error(ld, n, "max", "max must be from 1 to 1e7 tokens");
    return rc;
}

/* diurnal-amplitude="50%" [diurnal-period="24h"] [diurnal-peak="14h"]: the
 * rate times 1 + a cos(2 pi (t - peak) / period), Poisson only */
static int parse_diurnal(loader *ld, xmlNode *n, scn_scenario *s)
{
    serve_config *c = &s->serving;
    if (c->arrival != SERVE_POISSON)
        return node_error(ld, n, "diurnal-amplitude", "a diurnal rate applies to "
                          "process=\"poisson\" only");
    int rc = get_fraction(ld, n, "diurnal-amplitude", &c->diurnal_amplitude);
    c->diurnal_period_s = DEFAULT_DIURNAL_PERIOD_S;
    if (!rc && has_attr(n, "diurnal-period")) {
        rc = get_quantity(ld, n, "diurnal-period", SIM_DIM_TIME, 1, &c->diurnal_period_s);
        if (!rc)
            rc = positive(ld, n, "diurnal-period", c->diurnal_period_s, 3.2e7, " s (a year)");
    } else if (!rc) {
        note_default(s, "diurnal-period 24 h (a day)");
    }
    if (!rc && has_attr(n, "diurnal-peak")) {
        rc = get_quantity(ld, n, "diurnal-peak", SIM_DIM_TIME, 1, &c->diurnal_peak_s);
        if (!rc && !(c->diurnal_peak_s >= 0 && c->diurnal_peak_s <= 3.2e7))
            rc = node_error(ld, n, "diurnal-peak", "diurnal-peak must be from 0 to a year");
    } else if (!rc) {
        note_default(s, "diurnal-peak 0 s: the run starts at the peak (A)");
    }
    return rc;
}

static int parse_arrivals(loader *ld, xmlNode *n, scn_scenario *s)
{
    serve_config *c = &s->serving;
    char process[32];
    copy_attr(n, "process", process, sizeof process);
    if (serve_arrival_parse(process, &c->arrival))
        return node_error(ld, n, "process", "unknown process; use poisson, gamma, closed or "
                          "trace");
    if (c->arrival == SERVE_TRACE)
        return parse_serving_trace(ld, n, s);
    int rc = 0;
    double requests = 0;
    if (has_attr(n, "requests")) {
        rc = get_quantity(ld, n, "requests", SIM_DIM_COUNT, 1, &requests);
        if (!rc)
            rc = whole(ld, n, "requests", requests);
        if (!rc)
            rc = positive(ld, n, "requests", requests, 1e9, "");
        c->max_requests = (uint64_t)requests;
    }
    if (rc)
        return rc;
    if (c->arrival == SERVE_CLOSED) {
        rc = get_uint(ld, n, "clients", 1, 1, 10000000, &c->clients);
        if (!rc && !has_attr(n, "requests"))
            rc = node_error(ld, n, NULL, "a closed loop needs requests=\"N\" (when to stop)");
        if (!rc && c->max_requests < c->clients)
            rc = node_error(ld, n, "requests", "requests must be at least clients (%u)",
                            c->clients);
        return rc;
    }
    rc = get_quantity(ld, n, "rate", SIM_DIM_FREQUENCY, 1, &c->rate_per_s);
    if (!rc)
        rc = positive(ld, n, "rate", c->rate_per_s, 1e9, " requests/s");
    if (!rc)
        rc = get_quantity(ld, n, "duration", SIM_DIM_TIME, 1, &c->duration_s);
    if (!rc)
        rc = positive(ld, n, "duration", c->duration_s, 3.2e7, " s (a year)");
    if (!rc && c->arrival == SERVE_GAMMA) {
        rc = get_quantity(ld, n, "cv", SIM_DIM_COUNT, 1, &c->cv);
        if (!rc)
            rc = positive(ld, n, "cv", c->cv, 100, "");
    }
    if (!rc && has_attr(n, "diurnal-amplitude"))
        rc = parse_diurnal(ld, n, s);
    return rc;
}

/* <prompt> and <output>, which a trace replaces */
static int serving_lengths(loader *ld, xmlNode *n, serve_config *c)
{
    static const char *const names[2] = {"prompt", "output"};
    serve_length *l[2] = {&c->prompt, &c->output};
    int rc = 0;
    for (int i = 0; !rc && i < 2; i++) {
        xmlNode *e = child(n, names[i]);
        rc = e ? parse_length(ld, e, l[i])
               : node_error(ld, n, NULL, "<serving> needs <%s> (its length distribution) "
                            "unless the arrivals are a trace", names[i]);
    }
    return rc;
}

/* a trace's lengths as fixed ones at their means (for the printed
 * iteration model and the checks; the requests keep their own) */
static void trace_lengths(serve_config *c)
{
    double p = 0, o = 0;
    for (uint64_t i = 0; i < c->n_trace; i++) {
        p += c->trace[i].prompt;
        o += c->trace[i].output;
    }
    c->prompt = (serve_length){SERVE_LEN_FIXED, floor(p / c->n_trace + 0.5), 0, 0};
    c->output = (serve_length){SERVE_LEN_FIXED, floor(o / c->n_trace + 0.5), 0, 0};
}

/* one level of <prefix prompts tokens [share] [zipf]> */
static int parse_prefix_level(loader *ld, xmlNode *n, scn_scenario *s, int inner,
                              struct serve_prefix_level *v)
{
    int rc = get_uint(ld, n, "prompts", 1, 1, 1000000, &v->prompts);
    if (!rc)
        rc = get_quantity(ld, n, "tokens", SIM_DIM_COUNT, 1, &v->tokens);
    if (!rc)
        rc = whole(ld, n, "tokens", v->tokens);
    if (!rc)
        rc = positive(ld, n, "tokens", v->tokens, MAX_TOKENS_ATTR, " tokens");
    v->share = 1;
    if (!rc && has_attr(n, "share")) {
        rc = get_quantity(ld, n, "share", SIM_DIM_FRACTION, 1, &v->share);
        if (!rc && !(v->share >= 0 && v->share <= 1))
            rc = node_error(ld, n, "share", "share must be from 0 to 100%%");
    } else if (!rc) {
        note_default(s, inner ? "inner prefix share 100%: every request with the outer "
                                "prefix carries one (A)"
                              : "prefix share 100%: every request carries a prefix (A)");
    }
    v->zipf = 0;
    if (!rc && has_attr(n, "zipf")) {
        rc = get_quantity(ld, n, "zipf", SIM_DIM_COUNT, 1, &v->zipf);
        if (!rc && !(v->zipf >= 0 && v->zipf <= 10))
            rc = node_error(ld, n, "zipf", "zipf must be from 0 (uniform) to 10");
    } else if (!rc) {
        note_default(s, inner ? "inner prefix zipf 0: every child equally popular (A)"
                              : "prefix zipf 0: every prefix equally popular (A)");
    }
    return rc;
}

/* <prefix prompts tokens [share] [zipf]>, with at most one <prefix> inside
 * each, SERVE_PREFIX_LEVELS levels deep: a tree of shared prefixes
 * (docs/serving.md "Prefix caching") */
static int parse_prefix(loader *ld, xmlNode *n, scn_scenario *s)
{
    serve_config *c = &s->serving;
    struct serve_prefix_level top;
    int rc = parse_prefix_level(ld, n, s, 0, &top);
    c->prefix_prompts = top.prompts;
    c->prefix_tokens = top.tokens;
    c->prefix_share = top.share;
    c->prefix_zipf = top.zipf;
    c->prefix_levels = 1;
    double chain = top.tokens;
    for (xmlNode *in = child(n, "prefix"); !rc && in; in = child(in, "prefix")) {
        if (c->prefix_levels == SERVE_PREFIX_LEVELS)
            return node_error(ld, in, NULL, "<prefix> nests at most %d levels deep",
                              SERVE_PREFIX_LEVELS);
        struct serve_prefix_level *v = &c->prefix_inner[c->prefix_levels - 1];
        rc = parse_prefix_level(ld, in, s, 1, v);
        chain += v->tokens;
        if (!rc && chain > MAX_TOKENS_ATTR)
            rc = node_error(ld, in, "tokens", "the prefix levels' tokens add up to %.0f; at "
                            "most %.0f", chain, (double)MAX_TOKENS_ATTR);
        c->prefix_levels++;
    }
    return rc;
}

/* Swap preemption's host link and host memory by GPU type (docs/serving.md
 * "Swap preemption"): the GPU's PCIe link per direction, and the host
 * memory of its reference node split evenly over the node's GPUs. A GPU
 * not listed needs host-link= (and host-memory=) in the scenario. */
static const struct swap_host {
    const char *gpu;
    double link_bytes_per_s, host_bytes_per_gpu;
    const char *source;
} swap_hosts[] = {
    {"H100-SXM", 64e9, 2e12 / 8,
     "PCIe Gen5 x16, 128 GB/s bidirectional (S) = 64 GB/s per direction (D), hardware.md 1.2; "
     "host 2 TB DDR5 for 8 GPUs (DGX H100, V, hardware.md 4) = 250 GB per GPU (D)"},
    {"H200-SXM", 64e9, 2e12 / 8,
     "PCIe Gen5 x16 (V, hardware.md 1.2) at H100's Gen5 x16 128 GB/s bidirectional (S) = 64 "
     "GB/s per direction (D); host as DGX H100 (V, hardware.md 4): 2 TB for 8 GPUs = 250 GB "
     "per GPU (D)"},
    {"A100-SXM-40GB", 32e9, 1e12 / 8,
     "PCIe Gen4 x16, 32 GB/s per direction (S), hardware.md 1.2; host 1 TB DDR4 base for 8 "
     "GPUs (DGX A100, S, hardware.md 4) = 125 GB per GPU (D)"},
};

/* <kv preemption="recompute|swap" [host-memory="250GB"] [host-link="64GB/s"]>:
 * what a preemption does with the KV blocks (recompute by default) */
static int parse_kv(loader *ld, xmlNode *n, scn_scenario *s)
{
    serve_config *c = &s->serving;
    char mode[32] = "recompute";
    if (n && has_attr(n, "preemption"))
        copy_attr(n, "preemption", mode, sizeof mode);
    if (serve_preemption_parse(mode, &c->preemption))
        return node_error(ld, n, "preemption", "unknown preemption mode; use recompute (free "
                          "the blocks, recompute later) or swap (copy them to host memory)");
    if (n && c->preemption != SERVE_PREEMPT_SWAP &&
        (has_attr(n, "host-memory") || has_attr(n, "host-link")))
        return node_error(ld, n, has_attr(n, "host-memory") ? "host-memory" : "host-link",
                          "host-memory and host-link are swap's; preemption=\"%s\" has none",
                          mode);
    if (c->preemption != SERVE_PREEMPT_SWAP)
        return 0;
    const struct swap_host *h = NULL;
    for (size_t i = 0; i < sizeof swap_hosts / sizeof swap_hosts[0]; i++)
        if (strcmp(s->gpu.name, swap_hosts[i].gpu) == 0)
            h = &swap_hosts[i];
    int rc = 0;
    if (has_attr(n, "host-link")) {
        rc = get_quantity(ld, n, "host-link", SIM_DIM_BANDWIDTH, 1, &c->host_link_bytes_per_s);
        if (!rc)
            rc = positive(ld, n, "host-link", c->host_link_bytes_per_s, 1e13, " B/s");
    } else if (!h) {
        return node_error(ld, n, "preemption", "swap needs GPU type %s's host link rate, and "
                          "none is sourced: give host-link=\"RATE\" (per GPU and direction)",
                          s->gpu.name);
    } else {
        c->host_link_bytes_per_s = h->link_bytes_per_s;
    }
    if (!rc && has_attr(n, "host-memory")) {
        rc = get_quantity(ld, n, "host-memory", SIM_DIM_DATA, 1, &c->host_bytes_per_gpu);
        if (!rc && !(c->host_bytes_per_gpu >= 0 && c->host_bytes_per_gpu <= 1e15))
            rc = node_error(ld, n, "host-memory", "host-memory must be from 0 to 1 PB per GPU");
    } else if (!rc && !h) {
        return node_error(ld, n, "host-memory", "swap needs the host memory per GPU, and none "
                          "is sourced for GPU type %s: give host-memory=\"SIZE\"",
                          s->gpu.name);
    } else if (!rc) {
        c->host_bytes_per_gpu = h->host_bytes_per_gpu;
    }
    if (!rc && h && (!has_attr(n, "host-link") || !has_attr(n, "host-memory"))) {
        char text[512];
        snprintf(text, sizeof text, "swap host link %.4g GB/s per GPU and direction, host "
                 "memory %.4g GB per GPU (a replica's pool: tp x that) for %s: %s",
                 c->host_link_bytes_per_s / 1e9, c->host_bytes_per_gpu / 1e9, h->gpu,
                 h->source);
        note_default(s, text);
    }
    return rc;
}

/* a link for the KV transfer: its effective rate (x efficiency, never the
 * ideal) and latency; a value the catalog filled by a rule is listed */
static int kv_link(loader *ld, xmlNode *n, const char *attr, scn_scenario *s, const hw_link *lk,
                   double rate, double *bytes_per_s, double *latency_s)
{
    if (!(lk->efficiency > 0 && lk->efficiency <= 1))
        return node_error(ld, n, attr, "link %s has no efficiency in the catalog; the KV "
                          "transfer never runs at the ideal rate", lk->name);
    if (!(lk->step_latency_s > 0))
        return node_error(ld, n, attr, "link %s has no step-latency in the catalog; the KV "
                          "transfer needs one", lk->name);
    *bytes_per_s = rate * lk->efficiency;
    *latency_s = lk->step_latency_s;
    for (unsigned i = 0; i < lk->n_defaults; i++) { /* those the transfer uses */
        if (strcmp(lk->defaults[i].what, "efficiency") &&
            strcmp(lk->defaults[i].what, "step-latency"))
            continue;
        char text[400];
        snprintf(text, sizeof text, "KV transfer link %s %s %s (%s)", lk->name,
                 lk->defaults[i].what, lk->defaults[i].value, lk->defaults[i].rule);
        note_default(s, text);
    }
    return 0;
}

/* The KV transfers' links (the pools', or remote fetch's): the GPUs a node,
 * the GPU's scale-up link inside a node, and between nodes n's link="...",
 * else the fabric's link (*out: NULL when there is none) */
static int kv_links(loader *ld, xmlNode *n, scn_scenario *s, const hw_link **out_link)
{
    serve_config *c = &s->serving;
    c->node_gpus = s->has_fabric ? s->fabric.gpus_per_node : s->gpu.scaleup_domain;
    if (c->node_gpus < 1)
        c->node_gpus = 1;
    /* inside a node: the GPU's scale-up link */
    const hw_link *up = s->gpu.scaleup_kind[0] ? find_named(ld, CAT_LINK, s->gpu.scaleup_kind)
                                               : NULL;
    int rc = 0;
    if (up && c->node_gpus > 1)
        rc = kv_link(ld, n, NULL, s, up, s->gpu.scaleup_bytes_per_s > 0
                                             ? s->gpu.scaleup_bytes_per_s : up->bytes_per_s,
                     &c->kv_intra_bytes_per_s, &c->kv_intra_latency_s);
    /* between nodes: link="...", else the fabric's link */
    const hw_link *out = s->has_fabric ? &s->fabric.link : NULL;
    char name[64];
    copy_attr(n, "link", name, sizeof name);
    if (!rc && name[0] && s->has_fabric) /* the transfers cross the fabric's routes */
        return node_error(ld, n, "link", "with a <fabric> the KV transfers cross its links (%s "
                          "between nodes): remove link", s->fabric.link.name);
    if (!rc && name[0] && !(out = find_named(ld, CAT_LINK, name))) {
        char known[1024];
        entry_names(ld, CAT_LINK, known, sizeof known);
        return node_error(ld, n, "link", "unknown link technology; known: %s", known);
    }
    if (!rc && out)
        rc = kv_link(ld, n, name[0] ? "link" : NULL, s, out, out->bytes_per_s,
                     &c->kv_inter_bytes_per_s, &c->kv_inter_latency_s);
    if (!rc) {
        snprintf(s->serving_kv_intra, sizeof s->serving_kv_intra, "%s",
                 up && c->node_gpus > 1 ? up->name : "");
        snprintf(s->serving_kv_inter, sizeof s->serving_kv_inter, "%s", out ? out->name : "");
    }
    if (!rc)
        snprintf(s->serving_kv_links, sizeof s->serving_kv_links, "%s%s%s%s%s%s",
                 up && c->node_gpus > 1 ? up->name : "", up && c->node_gpus > 1 && out ? ", "
                                                                                     : "",
                 out ? out->name : "", s->has_fabric ? " on the routes of the " : "",
                 s->has_fabric ? fabric_topology_name(s->fabric.topology) : "",
                 s->has_fabric ? " fabric" : "");
    *out_link = out;
    return rc;
}

/* <disaggregated prefill-replicas prefill-tp decode-replicas decode-tp
 * [link] [contention]>: the two pools (docs/serving.md "Disaggregated prefill and
 * decode"); <replica tp> must then be absent */
static int parse_disaggregated(loader *ld, xmlNode *n, xmlNode *replica, scn_scenario *s)
{
    serve_config *c = &s->serving;
    if (replica && has_attr(replica, "tp"))
        return node_error(ld, replica, "tp", "with <disaggregated> the pools give tp "
                          "(prefill-tp, decode-tp): remove <replica tp>");
    unsigned pre = 0, pre_tp = 0, dec = 0, dec_tp = 0;
    int rc = get_uint(ld, n, "prefill-replicas", 1, 1, 1000000, &pre);
    if (!rc)
        rc = get_uint(ld, n, "prefill-tp", 1, 1, 64, &pre_tp);
    if (!rc)
        rc = get_uint(ld, n, "decode-replicas", 1, 1, 1000000, &dec);
    if (!rc)
        rc = get_uint(ld, n, "decode-tp", 1, 1, 64, &dec_tp);
    if (rc)
        return rc;
    double gpus = (double)pre * pre_tp + (double)dec * dec_tp;
    if (gpus != (double)s->campaign.gpu_count)
        return node_error(ld, n, NULL, "the pools take %.0f GPUs (%u x %u + %u x %u), the "
                          "cluster has %llu", gpus, pre, pre_tp, dec, dec_tp,
                          (unsigned long long)s->campaign.gpu_count);
    char contention[32] = "shared";
    if (has_attr(n, "contention"))
        copy_attr(n, "contention", contention, sizeof contention);
    if (serve_kv_contention_parse(contention, &c->kv_contention))
        return node_error(ld, n, "contention", "unknown; use shared (the transfers in flight "
                          "share the replicas' links) or queued (a prefill replica sends one "
                          "at a time, the decode side unlimited)");
    if (s->has_fabric && c->kv_contention != SERVE_KV_SHARED)
        return node_error(ld, n, "contention", "with a <fabric> the KV transfers share its "
                          "links: use shared (or remove the <fabric>)");
    c->prefill_replicas = pre;
    c->prefill_tp = pre_tp;
    c->replicas = dec;
    c->tp = dec_tp;
    rc = scaleup_for(ld, n, pre_tp > dec_tp ? "prefill-tp" : "decode-tp", s,
                     pre_tp > dec_tp ? pre_tp : dec_tp);
    const hw_link *out = NULL;
    if (!rc)
        rc = kv_links(ld, n, s, &out);
    if (!rc) {
        double first_decode = (double)pre * pre_tp;
        int inter = c->node_gpus < 2 || floor((gpus - 1) / c->node_gpus) > 0;
        int intra = c->node_gpus > 1 && fmod(first_decode, c->node_gpus) != 0;
        if (inter && !out)
            rc = node_error(ld, n, "link", "the pools span nodes: the KV transfer needs an "
                            "inter-node link (link=\"ib-ndr\", or a <fabric link>)");
        else if (intra && !(c->kv_intra_bytes_per_s > 0))
            rc = node_error(ld, n, NULL, "the pools share a node: the KV transfer needs GPU "
                            "type %s's scale-up link, and the catalog has none", s->gpu.name);
    }
    return rc;
}

/* <kv remote="off|fetch" [link]>: a request may fetch its cached context
 * from another replica (docs/serving.md "Remote KV fetch"); with
 * <disaggregated> the pools' links carry the fetches too */
static int parse_kv_remote(loader *ld, xmlNode *n, scn_scenario *s)
{
    serve_config *c = &s->serving;
    char mode[32] = "off";
    if (n && has_attr(n, "remote"))
        copy_attr(n, "remote", mode, sizeof mode);
    if (serve_kv_remote_parse(mode, &c->kv_remote))
        return node_error(ld, n, "remote", "unknown; use off (a cached context serves its own "
                          "replica only) or fetch (a replica fetches it from another when "
                          "cheaper than recomputing)");
    /* link is read under fetch only: remote="off" beside it compares the two */
    if (n && has_attr(n, "link") && c->prefill_replicas)
        return node_error(ld, n, "link", "the fetches use the pools' links: give link on "
                          "<disaggregated>");
    if (c->kv_remote != SERVE_KV_REMOTE_FETCH)
        return 0;
    if (c->prefill_replicas) {
        if (c->kv_contention != SERVE_KV_SHARED)
            return node_error(ld, n, "remote", "remote fetch shares the replicas' links with "
                              "the pools' transfers: <disaggregated contention> must be shared");
        return 0;
    }
    const hw_link *out = NULL;
    int rc = kv_links(ld, n, s, &out);
    double gpus = (double)c->replicas * c->tp;
    if (!rc && c->replicas > 1 && (c->node_gpus < 2 || floor((gpus - 1) / c->node_gpus) > 0) &&
        !out)
        rc = node_error(ld, n, "link", "the replicas span nodes: fetching KV between them "
                        "needs an inter-node link (link=\"ib-ndr\", or a <fabric link>)");
    else if (!rc && c->replicas > 1 && c->node_gpus > 1 && c->tp < c->node_gpus &&
             !(c->kv_intra_bytes_per_s > 0))
        rc = node_error(ld, n, NULL, "replicas share a node: fetching KV between them needs "
                        "GPU type %s's scale-up link, and the catalog has none", s->gpu.name);
    return rc;
}

/* <sessions turns think-time [turns-distribution] [max-turns]
 * [think-distribution] [cache]>: multi-turn conversations (docs/serving.md
 * "Multi-turn sessions"); shared/reference has no turns or think-time
 * figure, so both are required */
static int parse_sessions(loader *ld, xmlNode *n, scn_scenario *s)
{
    serve_config *c = &s->serving;
    char name[32];
    copy_attr(n, "turns-distribution", name, sizeof name);
    if (!name[0])
        snprintf(name, sizeof name, "fixed");
    if (serve_turns_dist_parse(name, &c->session_turns_dist))
        return node_error(ld, n, "turns-distribution", "unknown distribution; use fixed or "
                          "geometric");
    int geo = c->session_turns_dist == SERVE_TURNS_GEOMETRIC;
    int rc = get_quantity(ld, n, "turns", SIM_DIM_COUNT, 1, &c->session_turns);
    if (!rc && !(c->session_turns >= 1 && c->session_turns <= 1000))
        rc = node_error(ld, n, "turns", "turns must be from 1 to 1000%s",
                        geo ? " (the geometric law's mean)" : "");
    if (!rc && !geo)
        rc = whole(ld, n, "turns", c->session_turns);
    if (!rc && has_attr(n, "max-turns")) {
        if (!geo)
            return node_error(ld, n, "max-turns", "max-turns caps the geometric law; "
                              "turns-distribution=\"fixed\" has none");
        rc = get_quantity(ld, n, "max-turns", SIM_DIM_COUNT, 1, &c->session_max_turns);
        if (!rc)
            rc = whole(ld, n, "max-turns", c->session_max_turns);
        if (!rc && !(c->session_max_turns >= 1 && c->session_max_turns <= 1000))
            rc = node_error(ld, n, "max-turns", "max-turns must be from 1 to 1000");
    }
    copy_attr(n, "think-distribution", name, sizeof name);
    if (!name[0])
        snprintf(name, sizeof name, "fixed");
    if (!rc && serve_think_dist_parse(name, &c->think_dist))
        rc = node_error(ld, n, "think-distribution", "unknown distribution; use fixed or "
                        "exponential");
    if (!rc)
        rc = get_quantity(ld, n, "think-time", SIM_DIM_TIME, 1, &c->think_s);
    if (!rc && !(c->think_s >= 0 && c->think_s <= 86400))
        rc = node_error(ld, n, "think-time", "think-time must be from 0 to a day");
    copy_attr(n, "cache", name, sizeof name);
    c->session_cache = !name[0] || strcmp(name, "on") == 0;
    if (!rc && name[0] && strcmp(name, "on") != 0 && strcmp(name, "off") != 0)
        rc = node_error(ld, n, "cache", "unknown cache setting; use on (a finished turn's "
                        "context stays cached on its replica) or off");
    if (!rc && has_attr(n, "window")) {
        rc = get_quantity(ld, n, "window", SIM_DIM_COUNT, 1, &c->session_window);
        if (!rc)
            rc = whole(ld, n, "window", c->session_window);
        if (!rc && !(c->session_window >= 1 && c->session_window <= 1e7))
            rc = node_error(ld, n, "window", "window must be from 1 to 1e7 tokens");
    }
    char rule[32];
    copy_attr(n, "truncate", rule, sizeof rule);
    if (!rc && serve_truncate_parse(rule[0] ? rule : "refuse", &c->session_truncate))
        rc = node_error(ld, n, "truncate", "unknown rule; use refuse (a follow-up over the "
                        "model's context window is dropped, ending its session) or oldest "
                        "(its oldest conversation tokens are cut)");
    if (!rc && c->arrival != SERVE_POISSON && c->arrival != SERVE_GAMMA)
        rc = node_error(ld, n, NULL, "sessions start with open-loop arrivals (process "
                        "poisson or gamma), not %s", serve_arrival_name(c->arrival));
    if (!rc && c->prefill_replicas)
        rc = node_error(ld, n, NULL, "sessions are not modelled with <disaggregated> pools");
    if (rc || c->session_turns <= 1) /* one turn: no session (the output as without) */
        return rc;
    if (!has_attr(n, "turns-distribution"))
        note_default(s, "turns-distribution fixed (A)");
    if (!has_attr(n, "think-distribution"))
        note_default(s, "think-distribution fixed (A)");
    if (!name[0])
        note_default(s, "sessions cache on: a finished turn's context stays cached on its "
                        "replica (A)");
    if (!has_attr(n, "window")) {
        char text[320];
        snprintf(text, sizeof text, "sessions window %u tokens: the model's seq-len, its "
                 "training sequence length (A: shared/reference gives no served context "
                 "length for a catalog model)", c->arch.seq_len);
        note_default(s, text);
    }
    if (!rule[0])
        note_default(s, "sessions truncate refuse: a follow-up over the context window "
                        "(window, else the model's seq-len) is dropped (A)");
    return rc;
}

int parse_serving(loader *ld, xmlNode *root, scn_scenario *s)
{
    xmlNode *n = child(root, "serving");
    if (!n)
        return 0;
    s->has_serving = 1;
    serve_config *c = &s->serving;
    xmlNode *model = child(n, "model");
    /* the job's model stays the job's: parse into the scenario, then put it back */
    model_arch job_arch = s->arch;
    char job_model[sizeof s->model_name];
    memcpy(job_model, s->model_name, sizeof job_model);
    int job_has_arch = s->has_arch;
    double job_params = s->campaign.model_params;
    s->has_arch = 0;
    s->model_name[0] = '\0';
    int rc = parse_model_element(ld, model, s);
    if (!rc && !s->has_arch)
        rc = node_error(ld, model, NULL, "serving needs the model's architecture (ref or "
                        "layers, hidden, ...), not only its parameters");
    c->arch = s->arch;
    if (s->has_job) {
        s->arch = job_arch;
        memcpy(s->model_name, job_model, sizeof job_model);
        s->has_arch = job_has_arch;
        s->campaign.model_params = job_params;
    }
    if (rc)
        return rc;
    rc = parse_replica(ld, child(n, "replica"), s);
    if (!rc && child(n, "disaggregated"))
        rc = parse_disaggregated(ld, child(n, "disaggregated"), child(n, "replica"), s);
    if (!rc && child(n, "prefix"))
        rc = parse_prefix(ld, child(n, "prefix"), s);
    if (!rc)
        rc = parse_kv(ld, child(n, "kv"), s);
    if (!rc)
        rc = parse_kv_remote(ld, child(n, "kv"), s);
    xmlNode *router = child(n, "router");
    char policy[32] = "least-loaded";
    if (!rc && router)
        copy_attr(router, "policy", policy, sizeof policy);
    c->router = serve_router_find(policy);
    if (!rc && !c->router)
        rc = node_error(ld, router, "policy", "unknown router; use %s", serve_router_names());
    c->router_margin = SERVE_ROUTER_MARGIN_DEFAULT;
    if (!rc && router && has_attr(router, "margin")) {
        if (strcmp(policy, "prefix-affinity") != 0)
            rc = node_error(ld, router, "margin", "margin is the prefix-affinity router's "
                            "load guard; policy %s has none", policy);
        if (!rc)
            rc = get_uint(ld, router, "margin", 1, 0, 1000000, &c->router_margin);
    } else if (!rc && strcmp(policy, "prefix-affinity") == 0) {
        note_default(s, "router margin 32 requests: prefix-affinity sends a request to the "
                        "least-loaded replica when its cached one has more than 32 unfinished "
                        "requests above it (A)");
    }
    if (!rc)
        rc = parse_arrivals(ld, child(n, "arrivals"), s);
    if (!rc && c->arrival == SERVE_TRACE) /* the trace gives the lengths */
        trace_lengths(c);
    else if (!rc)
        rc = serving_lengths(ld, n, c);
    if (!rc && child(n, "sessions"))
        rc = parse_sessions(ld, child(n, "sessions"), s);
    if (!rc && c->kv_remote == SERVE_KV_REMOTE_FETCH && !c->prefix_prompts &&
        !(serve_has_sessions(c) && c->session_cache))
        rc = node_error(ld, child(n, "kv"), "remote", "fetch needs something cached to fetch: "
                        "a <prefix>, or <sessions> with cache on");
    xmlNode *slo = child(n, "slo");
    if (!rc && slo) {
        rc = get_quantity(ld, slo, "ttft", SIM_DIM_TIME, 0, &c->slo_ttft_s);
        if (!rc)
            rc = get_quantity(ld, slo, "tpot", SIM_DIM_TIME, 0, &c->slo_tpot_s);
        if (!rc && (!(c->slo_ttft_s >= 0 && c->slo_ttft_s <= 3600) ||
                    !(c->slo_tpot_s >= 0 && c->slo_tpot_s <= 3600)))
            rc = node_error(ld, slo, NULL, "ttft and tpot must be from 0 to 1 h");
    }
    c->seed = s->seed;
    return rc;
}
