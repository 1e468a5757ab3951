/* serving_checks.h - the small serving configuration, the iteration times
 * and the fixtures the serving tests share (test_serving*.c): disaggregated
 * pools of tp 1 one GPU a node, a loaded stream of them, the first
 * requests' records. Static inline: a test that uses some compiles clean. */
#ifndef DCSIM_TESTS_SERVING_CHECKS_H
#define DCSIM_TESTS_SERVING_CHECKS_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "precision.h"
#include "serving.h"

/* a Llama-2-7B-shaped model on one 1 PFLOP/s, 3 TB/s GPU, one closed-loop
 * client, one request of 512 + 8 tokens, routed by `router` */
static inline serve_config serve_test_base(const char *router)
{
    serve_config c;
    memset(&c, 0, sizeof c);
    model_arch m = {.layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 32, .head_dim = 128,
                    .ffn_hidden = 11008, .vocab = 32000, .seq_len = 4096,
                    .activation = ACT_SWIGLU, .top_k = 1};
    snprintf(m.name, sizeof m.name, "llama2-7b-shape");
    c.arch = m;
    c.dev.peak_flops_per_s[PREC_BF16] = 1e15;
    c.dev.gemm_efficiency = 0.8;
    c.dev.attention_efficiency = 0.5;
    c.dev.mem_bytes_per_s = 3e12;
    c.dev.mem_efficiency = 0.9;
    c.math_precision = c.weight_precision = c.kv_precision = c.act_precision = PREC_BF16;
    c.tp = 1;
    c.gpu_bytes = 80e9;
    c.kv_fraction = 0.9;
    c.kv_block_tokens = 16;
    c.max_batch_tokens = 8192;
    c.max_sequences = 256;
    c.replicas = 1;
    c.router = serve_router_find(router);
    c.arrival = SERVE_CLOSED;
    c.clients = 1;
    c.max_requests = 1;
    c.prompt = (serve_length){SERVE_LEN_FIXED, 512, 0, 0};
    c.output = (serve_length){SERVE_LEN_FIXED, 8, 0, 0};
    c.seed = 7;
    return c;
}

static inline double prefill_s(const serve_config *c, double tokens, double context)
{
    serve_batch b = {1, &tokens, &context, 0, 0, 1};
    return serve_iteration_s(c, &b);
}

static inline double decode_s(const serve_config *c, double kv)
{
    serve_batch b = {0, NULL, NULL, 1, kv, 1};
    return serve_iteration_s(c, &b);
}

/* pre prefill and dec decode replicas of tp 1, one GPU a node (every
 * transfer between nodes, at `rate` bytes/s after `latency` s), `clients`
 * requests of 512 + 8 tokens at t = 0 */
static inline serve_config serve_test_pools(unsigned pre, unsigned dec, unsigned clients,
                                            double rate, double latency)
{
    serve_config c = serve_test_base("least-loaded");
    c.prefill_replicas = pre;
    c.prefill_tp = 1;
    c.replicas = dec;
    c.node_gpus = 1;
    c.kv_inter_bytes_per_s = rate;
    c.kv_inter_latency_s = latency;
    c.clients = clients;
    c.max_requests = clients;
    return c;
}

/* the KV bytes of `tokens` tokens (all of c's GPUs) */
static inline double serve_test_kv_bytes(const serve_config *c, double tokens)
{
    double w, per_token, blocks;
    serve_memory(c, &w, &per_token, &blocks, NULL);
    return tokens * per_token;
}

/* pools whose transfers overlap: Poisson at 40/s for 20 s, lognormal
 * lengths (prompt median 1,500, output 60: about 0.8 GB of KV a request) */
static inline void serve_test_kv_stream(serve_config *c)
{
    c->arrival = SERVE_POISSON;
    c->rate_per_s = 40;
    c->duration_s = 20;
    c->max_requests = 0;
    c->prompt = (serve_length){SERVE_LEN_LOGNORMAL, 1500, 0.8, 4000};
    c->output = (serve_length){SERVE_LEN_LOGNORMAL, 60, 0.6, 1000};
}

/* the first SERVE_SEEN requests by arrival order (serve_config.on_request
 * = serve_seen_record, request_ctx = a serve_seen) */
#define SERVE_SEEN 16
typedef struct serve_seen {
    double arrival_s[SERVE_SEEN], first_s[SERVE_SEEN], end_s[SERVE_SEEN];
    uint32_t prompt[SERVE_SEEN], replica[SERVE_SEEN];
} serve_seen;

static inline int serve_seen_record(void *ctx, const serve_request_info *info)
{
    serve_seen *s = ctx;
    if (info->seq < SERVE_SEEN) {
        s->arrival_s[info->seq] = info->arrival_s;
        s->first_s[info->seq] = info->first_token_s;
        s->end_s[info->seq] = info->end_s;
        s->prompt[info->seq] = info->prompt;
        s->replica[info->seq] = info->replica;
    }
    return 0;
}

#endif
