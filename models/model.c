/* model.c - parameter counts and Megatron-Core FLOPs (formulas in model.h). */
#include "model.h"


int model_arch_check(const model_arch *m, sim_error *err)
{
#define FAIL(...) return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, __VA_ARGS__)
    if (!m->layers || !m->hidden || !m->heads || !m->kv_heads || !m->head_dim ||
        !m->ffn_hidden || !m->vocab || !m->seq_len)
        FAIL("model '%s': layers, hidden, heads, kv-heads, head-dim, ffn, vocab and seq-len "
             "must all be positive", m->name);
    if (m->heads % m->kv_heads)
        FAIL("model '%s': heads (%u) must be a multiple of kv-heads (%u)", m->name, m->heads,
             m->kv_heads);
    if (m->experts) {
        if (!m->top_k || m->top_k > m->experts)
            FAIL("model '%s': top-k (%u) must be between 1 and experts (%u)", m->name,
                 m->top_k, m->experts);
        if (!m->moe_ffn_hidden)
            FAIL("model '%s': an MoE model needs moe-ffn", m->name);
        if (m->dense_layers > m->layers)
            FAIL("model '%s': dense-layers (%u) exceeds layers (%u)", m->name, m->dense_layers,
                 m->layers);
    }
#undef FAIL
    return 0;
}

static double gated(const model_arch *m) { return m->activation == ACT_SWIGLU ? 3.0 : 2.0; }

double model_params_attention_layer(const model_arch *m)
{
    double h = m->hidden, d = m->head_dim;
    return h * (m->heads + 2.0 * m->kv_heads) * d + m->heads * d * h;
}

double model_params_mlp_dense(const model_arch *m)
{
    return (double)m->hidden * m->ffn_hidden * gated(m);
}

double model_params_mlp_expert(const model_arch *m)
{
    return (double)m->hidden * m->moe_ffn_hidden * gated(m);
}

static int is_moe_layer(const model_arch *m, unsigned layer)
{
    return m->experts > 0 && layer >= m->dense_layers;
}

double model_params_layer(const model_arch *m, unsigned layer)
{
    double p = model_params_attention_layer(m) + 2.0 * m->hidden;
    if (is_moe_layer(m, layer))
        p += (m->experts + m->shared_experts) * model_params_mlp_expert(m) +
             (double)m->hidden * m->experts;
    else
        p += model_params_mlp_dense(m);
    return p;
}

double model_params_embedding(const model_arch *m) { return (double)m->vocab * m->hidden; }

double model_params_output(const model_arch *m)
{
    return m->tied_embeddings ? 0 : (double)m->vocab * m->hidden;
}

double model_params_total(const model_arch *m)
{
    double p = model_params_embedding(m) + model_params_output(m) + m->hidden;
    for (unsigned l = 0; l < m->layers; l++)
        p += model_params_layer(m, l);
    return p;
}

double model_params_active(const model_arch *m)
{
    double p = model_params_embedding(m) + model_params_output(m) + m->hidden;
    for (unsigned l = 0; l < m->layers; l++) {
        p += model_params_attention_layer(m) + 2.0 * m->hidden;
        if (is_moe_layer(m, l))
            p += (m->top_k + m->shared_experts) * model_params_mlp_expert(m) +
                 (double)m->hidden * m->experts;
        else
            p += model_params_mlp_dense(m);
    }
    return p;
}

double model_megatron_flops(const model_arch *m, double sequences)
{
    double h = m->hidden, s = m->seq_len, L = m->layers, a = m->heads, g = m->kv_heads;
    double glu = m->activation == ACT_SWIGLU ? 1.5 : 1.0;
    double attention = (1.0 + g / a + s / h) * (a * m->head_dim / h);
    /* Megatron's formula has one FFN width and one k for every layer; for an
     * MoE with dense leading layers, average the per-layer FFN term */
    double ffn = 0;
    for (unsigned l = 0; l < m->layers; l++) {
        if (m->experts && l >= m->dense_layers)
            ffn += ((double)m->moe_ffn_hidden / h) * (m->top_k + m->shared_experts) * glu;
        else
            ffn += ((double)m->ffn_hidden / h) * glu;
    }
    ffn /= L;
    return 12.0 * sequences * s * L * h * h * (attention + ffn + m->vocab / (2.0 * L * h));
}
