/* serving_iter.c - a serving replica's memory and the time of one iteration
 * (serving.h), from the step tier's compute model.
 *
 * Per layer, on one of the replica's t GPUs, for T tokens in the batch
 * (w weight bytes, x activation bytes, v KV bytes per element; a heads,
 * g KV heads, d head dim, h hidden, f FFN width, g' = g/t KV heads per GPU,
 * or 1 when g < t: each GPU then keeps a copy of one head):
 *   qkv    GEMM T x h . h x (a+2g)d/t    reads its weights once (n k w bytes)
 *   attn   prefill: one causal attention per chunk of c tokens after C
 *          already cached: (a/t) heads, q c, kv C + c; decode: the KV cache
 *          read once, sum(kv) 2 g' d v bytes, plus q and o (memory-bound)
 *   proj   GEMM T x (a d/t) . (a d/t) x h
 *   fc1    GEMM T x h . h x f(2 if SwiGLU)/t;  fc2  GEMM T x f/t . f/t x h
 *   norms, activation, residual adds: memory-bound, 2 norms x 2 T h x,
 *          the activation's read and write, 2 adds x 3 T h x
 *   TP     2 ring all-reduces of T h x bytes (tp > 1), collective.h
 * then the output layer (GEMM n_emit x h . h x V/t) and the iteration
 * overhead.
 * GEMMs of fewer rows than the smallest tile the kernel tables know
 * (SERVE_SKINNY_ROWS, the decode batches) are timed without tile and wave
 * quantisation: a rule (A), not a measurement. components.md 1.3 has no
 * shape below 1024 rows, and padding one decode row to a 128-row tile
 * would make the weight read of a decode compute-bound, which GEMV and
 * split-K kernels are not. The memory side (every weight read once) is
 * the same either way. Not modelled (docs/serving.md): PagedAttention's kernel overhead
 * against a contiguous cache (components.md 7.3 marks it a gap), sampling,
 * the logits' gather, CPU scheduling beyond iteration_overhead_s.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collective.h"
#include "precision.h"
#include "serving_internal.h"
#include "workload.h" /* ATTN_FLASH2 */

#define SERVE_SKINNY_ROWS 128.0 /* the smallest edge of KERN_TILE_SIZES (kernel_table.h) */

static double kv_heads_per_gpu(const serve_config *c)
{
    return c->arch.kv_heads >= c->tp ? (double)c->arch.kv_heads / c->tp : 1.0;
}

int serve_memory(const serve_config *c, double *weights_bytes_per_gpu, double *kv_bytes_per_token,
                 double *kv_blocks, sim_error *err)
{
    const model_arch *m = &c->arch;
    double w = precision_bytes(c->weight_precision), v = precision_bytes(c->kv_precision);
    /* every weight is split over the tp GPUs (vocabulary-parallel embedding
     * and output layer, Megatron's layout); norms are copied but tiny */
    double weights = model_params_total(m) * w / c->tp;
    double per_token_gpu = 2.0 * m->layers * kv_heads_per_gpu(c) * m->head_dim * v;
    double free_bytes = (c->gpu_bytes - c->reserved_bytes - weights) * c->kv_fraction;
    double blocks = floor(free_bytes / (per_token_gpu * c->kv_block_tokens));
    if (weights_bytes_per_gpu)
        *weights_bytes_per_gpu = weights;
    if (kv_bytes_per_token)
        *kv_bytes_per_token = per_token_gpu * c->tp;
    if (kv_blocks)
        *kv_blocks = blocks > 0 ? blocks : 0;
    if (!(blocks >= 1))
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "serving: %s on %u GPU(s) leaves no memory for the KV cache "
                             "(weights %.1f GB per GPU + reserved %.1f GB of %.1f GB); use "
                             "a larger tp or lower-precision weights",
                             m->name, c->tp, weights / 1e9, c->reserved_bytes / 1e9,
                             c->gpu_bytes / 1e9);
    return 0;
}

static double gemm(const serve_config *c, double m, double n, double k, const char *name)
{
    double w = precision_bytes(c->weight_precision), x = precision_bytes(c->act_precision);
    op o = {.kind = OP_GEMM, .precision = c->math_precision, .m = m, .n = n, .k = k,
            .bytes = n * k * w + m * (k + n) * x, .count = 1, .name = name};
    if (m >= SERVE_SKINNY_ROWS)
        return compute_op_time_s(&c->dev, &o);
    /* fewer rows than the smallest tile: no padding to a tile (see above) */
    compute_device d = c->dev;
    d.sms = 0;
    d.n_gemm_tiles = 0;
    return compute_op_time_s(&d, &o);
}

static double memory_op(const serve_config *c, double bytes, const char *name)
{
    op o = {.kind = OP_MEMORY, .precision = c->math_precision, .bytes = bytes, .count = 1,
            .name = name};
    return compute_op_time_s(&c->dev, &o);
}

/* One layer's GEMMs and memory-bound ops for T tokens (they depend on T
 * only), or < 0 when an op is refused. */
static double dense_s(const serve_config *c, double tokens)
{
    const model_arch *m = &c->arch;
    double t = c->tp, h = m->hidden, a = m->heads, g = m->kv_heads, d = m->head_dim;
    double f = m->ffn_hidden, x = precision_bytes(c->act_precision);
    double up = m->activation == ACT_SWIGLU ? 2.0 : 1.0;
    double parts[5] = {
        gemm(c, tokens, (a + 2 * g) * d / t, h, "qkv"),
        gemm(c, tokens, h, a * d / t, "proj"),
        gemm(c, tokens, f * up / t, h, "fc1"),
        gemm(c, tokens, h, f / t, "fc2"),
        /* norms (read, write), the activation (SwiGLU reads both halves),
         * residual adds (two reads, one write) */
        memory_op(c, 2 * 2 * tokens * h * x + (up + 1) * tokens * f / t * x +
                         2 * 3 * tokens * h * x, "norms")};
    double sum = 0;
    for (unsigned i = 0; i < 5; i++) {
        if (parts[i] < 0)
            return -1;
        sum += parts[i];
    }
    return sum;
}

static double allreduce_s(const serve_config *c, double tokens)
{
    return 2 * coll_allreduce_time_s(COLL_RING, c->tp, tokens * c->arch.hidden *
                                     precision_bytes(c->act_precision), c->scaleup_step_s,
                                     c->scaleup_bytes_per_s);
}

static double embed_s(const serve_config *c, double tokens)
{
    /* the embedding lookup: T rows of h read and written */
    return memory_op(c, 2 * tokens * c->arch.hidden * precision_bytes(c->act_precision),
                     "embedding");
}

static double output_s(const serve_config *c, double rows)
{
    return gemm(c, rows, c->arch.vocab / (double)c->tp, c->arch.hidden, "output");
}

/* f(c, x) through table[x] when x is a whole number the table holds (0:
 * not computed yet; every value is > 0 or the refusal -1) */
static double cached(double *table, uint32_t size, const serve_config *c, double x,
                     double (*f)(const serve_config *, double))
{
    if (!table || !(x >= 0 && x < size) || x != floor(x))
        return f(c, x);
    uint32_t i = (uint32_t)x;
    if (table[i] == 0)
        table[i] = f(c, x);
    return table[i];
}

/* The iteration: sum in the order of the formula (every layer's dense ops,
 * its attention per chunk, the decodes' attention, the TP all-reduces;
 * times the layers; the overhead, the output layer, the embedding), the
 * same bits with or without a cache. */
static double iteration_s(serve_iter_cache *ic, const serve_config *c, const serve_batch *b)
{
    double tokens = b->n_decode;
    for (unsigned i = 0; i < b->n_prefill; i++)
        tokens += b->chunk_tokens[i];
    if (!(tokens > 0))
        return -1;
    const model_arch *m = &c->arch;
    double t = c->tp, a = m->heads, d = m->head_dim, x = precision_bytes(c->act_precision);
    double v = precision_bytes(c->kv_precision), gp = kv_heads_per_gpu(c);
    double sum = cached(ic ? ic->dense_s : NULL, ic ? ic->max_tokens : 0, c, tokens, dense_s);
    if (sum < 0)
        return -1;
    for (unsigned i = 0; i < b->n_prefill; i++) {
        double q = b->chunk_tokens[i], kv = b->chunk_context[i] + q;
        op o = {.kind = OP_ATTENTION, .precision = c->math_precision,
                .flops = 4.0 * q * kv * (a / t) * d,
                .bytes = 2 * q * (a / t) * d * x + 2 * kv * gp * d * v, .count = 1,
                .name = "prefill-attention", .attn_batch_heads = a / t, .seq_q = q,
                .seq_kv = kv, .head_dim = d, .causal = 1, .attn_kernel = ATTN_FLASH2};
        double s = compute_op_time_s(&c->dev, &o);
        if (s < 0)
            return -1;
        sum += s;
    }
    if (b->n_decode) {
        double s = memory_op(c, b->decode_kv_tokens * 2 * gp * d * v +
                                    b->n_decode * 2 * (a / t) * d * x, "decode-attention");
        if (s < 0)
            return -1;
        sum += s;
    }
    if (c->tp > 1)
        sum += cached(ic ? ic->allreduce_s : NULL, ic ? ic->max_tokens : 0, c, tokens,
                      allreduce_s);
    double total = c->arch.layers * sum + c->iteration_overhead_s;
    if (b->n_emit) {
        double out = cached(ic ? ic->output_s : NULL, ic ? ic->max_rows : 0, c, b->n_emit,
                            output_s);
        if (out < 0)
            return -1;
        total += out;
    }
    double emb = cached(ic ? ic->embed_s : NULL, ic ? ic->max_tokens : 0, c, tokens, embed_s);
    return emb < 0 ? -1 : total + emb;
}

double serve_iteration_s(const serve_config *c, const serve_batch *b)
{
    return iteration_s(NULL, c, b);
}

double serve_iteration_cached_s(serve_iter_cache *ic, const serve_config *c,
                                const serve_batch *b)
{
    return iteration_s(ic, c, b);
}

int serve_iter_cache_init(serve_iter_cache *ic, const serve_config *c)
{
    memset(ic, 0, sizeof *ic);
    ic->max_tokens = c->max_batch_tokens + 1;
    ic->max_rows = c->max_sequences + 1;
    /* calloc: untouched pages cost nothing, 0 marks "not computed" */
    ic->dense_s = calloc(ic->max_tokens, sizeof *ic->dense_s);
    ic->allreduce_s = calloc(ic->max_tokens, sizeof *ic->allreduce_s);
    ic->embed_s = calloc(ic->max_tokens, sizeof *ic->embed_s);
    ic->output_s = calloc(ic->max_rows, sizeof *ic->output_s);
    if (ic->dense_s && ic->allreduce_s && ic->embed_s && ic->output_s)
        return 0;
    serve_iter_cache_free(ic);
    return -1;
}

void serve_iter_cache_free(serve_iter_cache *ic)
{
    free(ic->dense_s);
    free(ic->allreduce_s);
    free(ic->embed_s);
    free(ic->output_s);
    memset(ic, 0, sizeof *ic);
}
