/* serving_checks.h - the small serving configuration and the iteration
 * times the serving tests share (test_serving.c, test_serving_pools.c). */
#ifndef DCSIM_TESTS_SERVING_CHECKS_H
#define DCSIM_TESTS_SERVING_CHECKS_H

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

#endif
