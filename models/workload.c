/* workload.c - operation lists per pipeline stage (model in workload.h). */
#include "workload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "precision.h"

#define ADAM_BYTES_PER_PARAM 30.0 /* read master, m, v, grad (4 each); write master, m, v (4), param (2) */

static const char *const comm_names[COMM_KIND_COUNT] = {
    "tp_allreduce",  "tp_allgather", "tp_reduce_scatter", "pp_send",         "cp_sendrecv",
    "ep_alltoall",   "dp_allreduce", "dp_reduce_scatter", "dp_allgather"};

const char *comm_kind_name(int kind)
{
    return kind >= 0 && kind < COMM_KIND_COUNT ? comm_names[kind] : "?";
}

const char *recompute_name(int r)
{
    static const char *const names[] = {"none", "selective", "full"};
    return r >= 0 && r < 3 ? names[r] : "?";
}

const char *schedule_name(int s)
{
    static const char *const names[] = {"1f1b", "1f1b-interleaved", "gpipe"};
    return s >= 0 && s < 3 ? names[s] : "?";
}

/* ---- framework behaviour (workload.h) ---- */

/* precision of everything but the transformer layers' GEMMs: BF16 under the
 * Transformer Engine FP8 recipe (TE keeps attention, norms, activations and
 * communication in BF16; the statement of the recipe, TE's
 * documentation, not in the reference sheets: U), else the training one */
static int act_precision(const parallel_config *p)
{
    if (p->precision == PREC_FP8 && p->fw.fp8_recipe == FP8_RECIPE_TE)
        return PREC_BF16;
    return p->precision;
}

double workload_comm_bytes(const parallel_config *p)
{
    return precision_bytes(act_precision(p));
}

double workload_grad_reduce_bytes(const parallel_config *p)
{
    return precision_bytes(p->fw.grad_reduce_precision);
}

/* Bucket rules, components.md 4.4 (all V):
 *  Megatron-Core DDP: bucket_size = max(40,000,000, 1,000,000 x dp_size)
 *    parameters (distributed_data_parallel_config.py @ 00119989); dp_size
 *    is the gradient-reduction group, dp x cp, as stage_comm reduces over;
 *  PyTorch DDP: bucket_cap_mb = 25, first bucket kDefaultFirstBucketBytes =
 *    1024 x 1024 bytes; DDP's cap is bucket_cap_mb x 1024 x 1024 bytes
 *    (torch/nn/parallel/distributed.py, read from memory: U), of gradients
 *    at the reduction precision;
 *  DeepSpeed ZeRO: reduce_bucket_size = 5e8 elements (zero/config.py @
 *    03dc2b92). */
#define MEGATRON_BUCKET_MIN_PARAMS 40e6
#define MEGATRON_BUCKET_PARAMS_PER_DP 1e6
#define DDP_BUCKET_BYTES (25.0 * 1024 * 1024)
#define DDP_FIRST_BUCKET_BYTES (1024.0 * 1024)
#define DEEPSPEED_BUCKET_PARAMS 5e8

double workload_bucket_params(const parallel_config *p)
{
    switch (p->fw.bucket_rule) {
    case BUCKET_PYTORCH_DDP:
        return DDP_BUCKET_BYTES / workload_grad_reduce_bytes(p);
    case BUCKET_DEEPSPEED:
        return DEEPSPEED_BUCKET_PARAMS;
    case BUCKET_FIXED:
        return p->fw.bucket_params;
    default:
        return fmax(MEGATRON_BUCKET_MIN_PARAMS,
                    MEGATRON_BUCKET_PARAMS_PER_DP * (double)p->dp * p->cp);
    }
}

double workload_first_bucket_params(const parallel_config *p)
{
    if (p->fw.bucket_rule == BUCKET_PYTORCH_DDP)
        return DDP_FIRST_BUCKET_BYTES / workload_grad_reduce_bytes(p);
    return workload_bucket_params(p);
}

#define FAIL(...) return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, __VA_ARGS__)

/* the framework fields in range, and combinations a framework cannot run */
static int framework_check(const parallel_config *p, sim_error *err)
{
    const framework_config *f = &p->fw;
    if (f->attention_kernel < 0 || f->attention_kernel >= ATTN_KERNEL_COUNT ||
        f->fp8_recipe < 0 || f->fp8_recipe >= FP8_RECIPE_COUNT || f->bucket_rule < 0 ||
        f->bucket_rule >= BUCKET_RULE_COUNT || f->tp_overlap_mode < 0 ||
        f->tp_overlap_mode >= TP_OVERLAP_MODE_COUNT || f->pp_send_mode < 0 ||
        f->pp_send_mode >= PP_SEND_MODE_COUNT)
        FAIL("framework: a field is outside its enumeration");
    if (f->grad_reduce_precision != PREC_FP32 && f->grad_reduce_precision != PREC_BF16)
        FAIL("framework: gradient reduction must be fp32 or bf16 (is %s)",
             precision_name(f->grad_reduce_precision));
    if (f->bucket_rule == BUCKET_FIXED && !(f->bucket_params >= 1))
        FAIL("framework: a fixed bucket needs at least 1 parameter (is %g)", f->bucket_params);
    if (!(f->launch_overhead_s >= 0))
        FAIL("framework: launch overhead must be at least 0 s (is %g)", f->launch_overhead_s);
    int fp32_grads = p->precision == PREC_FP32 || p->precision == PREC_TF32;
    if (f->no_main_grad_buffer && !fp32_grads && f->grad_reduce_precision == PREC_FP32)
        FAIL("framework: grad-reduce fp32 needs the fp32 main-gradient buffer (main-grad-buffer "
             "fp32): without it %s gradients are reduced as they are kept, use grad-reduce bf16",
             precision_name(p->precision));
    return 0;
}

int workload_check(const model_arch *m, const parallel_config *p, unsigned long long gpus,
                   sim_error *err)
{
    int rc = model_arch_check(m, err);
    if (rc)
        return rc;
    if (!p->tp || !p->pp || !p->vpp || !p->cp || !p->ep || !p->dp || !p->micro_batch ||
        !p->global_batch)
        FAIL("tp, pp, vpp, cp, ep, dp, micro-batch and global-batch must all be at least 1");
    unsigned long long product = (unsigned long long)p->tp * p->cp * p->pp * p->dp;
    if (product != gpus)
        FAIL("GPUs (%llu) must equal tp x cp x pp x dp = %u x %u x %u x %u = %llu", gpus, p->tp,
             p->cp, p->pp, p->dp, product);
    if (m->heads % p->tp)
        FAIL("heads (%u) must be a multiple of tp (%u): %u / %u = %.4g", m->heads, p->tp,
             m->heads, p->tp, (double)m->heads / p->tp);
    if (m->kv_heads % p->tp && p->tp % m->kv_heads)
        FAIL("kv-heads (%u) and tp (%u) must divide one another", m->kv_heads, p->tp);
    unsigned long long per_step = (unsigned long long)p->micro_batch * p->dp;
    if (p->global_batch % per_step)
        FAIL("global-batch %u is not a multiple of micro-batch x dp = %u x %u = %llu "
             "(%u / %llu = %.4g)",
             p->global_batch, p->micro_batch, p->dp, per_step, p->global_batch, per_step,
             (double)p->global_batch / (double)per_step);
    if (p->vpp > 1 && p->pp < 2)
        FAIL("vpp %u needs pp of at least 2 (pp is %u)", p->vpp, p->pp);
    if (p->vpp > 1 && p->schedule != SCHEDULE_INTERLEAVED)
        FAIL("vpp %u needs schedule=\"1f1b-interleaved\"", p->vpp);
    unsigned m_count = p->global_batch / (unsigned)per_step;
    if (p->schedule == SCHEDULE_INTERLEAVED && p->pp > 1 && m_count % p->pp)
        FAIL("the interleaved schedule needs micro-batches per pipeline (global-batch / "
             "(micro-batch x dp) = %u) to be a multiple of pp (%u)", m_count, p->pp);
    if (p->first_stage_layers || p->last_stage_layers) {
        if (p->pp < 2)
            FAIL("first-stage-layers and last-stage-layers need pp of at least 2");
        unsigned ends = p->first_stage_layers + p->last_stage_layers;
        if (ends >= m->layers && p->pp > 2)
            FAIL("first-stage-layers + last-stage-layers = %u leaves no layers for the other "
                 "%u stages (layers %u)", ends, p->pp - 2, m->layers);
        unsigned middle = m->layers - ends;
        if (p->pp == 2 ? middle != 0 : (middle % (p->pp - 2) != 0 || middle == 0))
            FAIL("layers - first-stage-layers - last-stage-layers = %u - %u - %u = %u is not a "
                 "multiple of pp - 2 = %u",
                 m->layers, p->first_stage_layers, p->last_stage_layers, middle, p->pp - 2);
        if (!p->first_stage_layers || !p->last_stage_layers)
            FAIL("give both first-stage-layers and last-stage-layers, or neither");
    } else if (m->layers % (p->pp * p->vpp)) {
        FAIL("layers (%u) must be a multiple of pp x vpp = %u x %u = %u (%u / %u = %.4g)",
             m->layers, p->pp, p->vpp, p->pp * p->vpp, m->layers, p->pp * p->vpp,
             (double)m->layers / (p->pp * p->vpp));
    }
    if (m->seq_len % p->cp)
        FAIL("seq-len (%u) must be a multiple of cp (%u)", m->seq_len, p->cp);
    if (p->ep > 1 && !m->experts)
        FAIL("ep %u needs an MoE model; '%s' has no experts", p->ep, m->name);
    if (m->experts && m->experts % p->ep)
        FAIL("experts (%u) must be a multiple of ep (%u)", m->experts, p->ep);
    if (p->ep > 1 && (p->dp * p->cp) % p->ep)
        FAIL("ep (%u) must divide dp x cp = %u x %u = %u (experts are spread over data-parallel "
             "ranks)", p->ep, p->dp, p->cp, p->dp * p->cp);
    if (p->zero_stage < 0 || p->zero_stage > 3)
        FAIL("zero stage must be 0, 1, 2 or 3 (is %d)", p->zero_stage);
    return framework_check(p, err);
}

/* Layers on stage s: first/last-stage-layers on the end stages and the rest
 * evenly over the middle ones (workload_check has checked the split), else
 * layers / pp. */
static unsigned stage_layer_count(const model_arch *m, const parallel_config *p, unsigned s)
{
    if (!p->first_stage_layers)
        return m->layers / p->pp;
    if (s == 0)
        return p->first_stage_layers;
    if (s == p->pp - 1)
        return p->last_stage_layers;
    return (m->layers - p->first_stage_layers - p->last_stage_layers) / (p->pp - 2);
}

unsigned workload_chunk_layer_count(const model_arch *m, const parallel_config *p,
                                    unsigned stage, unsigned chunk)
{
    unsigned v = p->vpp ? p->vpp : 1, n = stage_layer_count(m, p, stage);
    unsigned base = n / v, extra = n % v;
    if (stage == 0) /* the lighter chunks first: chunk 0 also holds the embedding */
        return base + (chunk >= v - extra ? 1 : 0);
    return base + (chunk < extra ? 1 : 0); /* the lighter chunks last (the loss) */
}

/* which pipeline stage holds layer l: layers fill the model positions
 * j = chunk pp + stage in order */
static unsigned layer_stage(const model_arch *m, const parallel_config *p, unsigned l)
{
    unsigned v = p->vpp ? p->vpp : 1, cum = 0;
    for (unsigned j = 0; j < p->pp * v; j++) {
        cum += workload_chunk_layer_count(m, p, j % p->pp, j / p->pp);
        if (l < cum)
            return j % p->pp;
    }
    return p->pp - 1;
}

void workload_stage_layers(const model_arch *m, const parallel_config *p, unsigned stage,
                           unsigned *first_layer, unsigned *layers)
{
    unsigned first = m->layers, n = 0;
    for (unsigned l = 0; l < m->layers; l++)
        if (layer_stage(m, p, l) == stage) {
            if (first == m->layers)
                first = l;
            n++;
        }
    *first_layer = first;
    *layers = n;
}

/* ---- op lists ---- */

typedef struct op_list {
    op *ops;
    size_t n, cap;
    int failed;
} op_list;

static void push_op(op_list *l, op o)
{
    if (l->failed || o.count <= 0)
        return;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 32;
        op *ops = realloc(l->ops, cap * sizeof *ops);
        if (!ops) {
            l->failed = 1;
            return;
        }
        l->ops = ops;
        l->cap = cap;
    }
    l->ops[l->n++] = o;
}

typedef struct comm_list {
    comm_op *ops;
    size_t n, cap;
    int failed;
} comm_list;

static void push_comm(comm_list *l, int kind, int phase, double bytes, unsigned group,
                      double count, const char *name)
{
    if (l->failed || count <= 0 || group < 2 || bytes <= 0)
        return;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        comm_op *ops = realloc(l->ops, cap * sizeof *ops);
        if (!ops) {
            l->failed = 1;
            return;
        }
        l->ops = ops;
        l->cap = cap;
    }
    l->ops[l->n++] = (comm_op){kind, phase, bytes, group, count, name};
}

/* a GEMM (m x k).(k x n) in precision prec: reads A and B, writes C in
 * out_prec (BF16 under the TE FP8 recipe, which writes GEMM outputs in BF16) */
static op gemm(const char *name, int prec, int out_prec, double m, double n, double k,
               double count)
{
    double w = precision_bytes(prec), w_out = precision_bytes(out_prec);
    return (op){.kind = OP_GEMM, .precision = prec, .m = m, .n = n, .k = k, .flops = 2 * m * n * k,
            .bytes = (m * k + k * n) * w + m * n * w_out, .count = count, .name = name};
}

static op memory_op(const char *name, int prec, double bytes, double count)
{
    return (op){.kind = OP_MEMORY, .precision = prec, .bytes = bytes, .count = count, .name = name};
}

/* the forward GEMMs of one layer kind (dense or MoE) on one GPU */
typedef struct layer_shape {
    double tokens;      /* T: tokens per micro-batch on this GPU */
    double act_tokens;  /* tokens an elementwise op touches (T / t with SP) */
} layer_shape;

static void forward_layer(const model_arch *m, const parallel_config *p, const layer_shape *ls,
                          int moe, double count, op_list *fwd)
{
    /* prec: attention, norms, activations; gp: the GEMMs (they differ under TE FP8) */
    int prec = act_precision(p), gp = p->precision;
    double t = p->tp, T = ls->tokens, h = m->hidden, d = m->head_dim, w = precision_bytes(prec);
    double a_local = m->heads / t, g_local = fmax(1.0, m->kv_heads / t);
    double glu = m->activation == ACT_SWIGLU ? 2 : 1;
    double s_kv = m->seq_len, s_q = (double)m->seq_len / p->cp, b = p->micro_batch;

    push_op(fwd, memory_op("norm", prec, 2 * ls->act_tokens * h * w, 2 * count));
    push_op(fwd, gemm("qkv", gp, prec, T, (a_local + 2 * g_local) * d, h, count));
    if (p->fw.attention_kernel == ATTN_MATERIALISED) { /* scores in HBM (attention.h) */
        op core[4];
        size_t n_core = attn_materialised_ops(b * a_local, s_q, s_kv, d, prec, m->no_dropout,
                                              count, core);
        for (size_t i = 0; i < n_core; i++)
            push_op(fwd, core[i]);
    } else { /* a fused kernel, causal (decoder LLMs), timed from its measured tables */
        double attn_flops = 4 * b * s_q * s_kv * a_local * d;
        double attn_bytes = (2 * T * a_local * d + 2 * b * s_kv * g_local * d) * w;
        op attn = {.kind = OP_ATTENTION, .precision = prec, .flops = attn_flops,
                .bytes = attn_bytes, .count = count, .name = "attention"};
        attn.attn_batch_heads = b * a_local;
        attn.seq_q = s_q;
        attn.seq_kv = s_kv;
        attn.head_dim = d;
        attn.causal = 1;
        attn.attn_kernel = p->fw.attention_kernel;
        attn.is_attention_core = 1;
        push_op(fwd, attn);
    }
    push_op(fwd, gemm("proj", gp, prec, T, h, a_local * d, count));
    push_op(fwd, memory_op("residual", prec, 3 * ls->act_tokens * h * w, 2 * count));
    if (!moe) {
        double f = m->ffn_hidden / t;
        push_op(fwd, gemm("fc1", gp, prec, T, glu * f, h, count));
        push_op(fwd, memory_op("activation", prec, T * (glu + 1) * f * w, count));
        push_op(fwd, gemm("fc2", gp, prec, T, h, f, count));
        return;
    }
    /* balanced routing: each GPU's E/ep experts see T k ep / E tokens each */
    double local_experts = (double)m->experts / p->ep;
    double expert_tokens = T * m->top_k * p->ep / m->experts;
    double f = m->moe_ffn_hidden / t;
    push_op(fwd, gemm("expert_fc1", gp, prec, expert_tokens, glu * f, h, count * local_experts));
    push_op(fwd, memory_op("expert_activation", prec, expert_tokens * (glu + 1) * f * w,
                           count * local_experts));
    push_op(fwd, gemm("expert_fc2", gp, prec, expert_tokens, h, f, count * local_experts));
    if (m->shared_experts) {
        push_op(fwd, gemm("shared_fc1", gp, prec, T, glu * f, h, count * m->shared_experts));
        push_op(fwd, gemm("shared_fc2", gp, prec, T, h, f, count * m->shared_experts));
    }
}

/* backward of a forward list: dgrad + wgrad per GEMM (in the forward GEMM's
 * precision: TE runs both in FP8), 2x attention, 2x bytes */
static void backward_of(const parallel_config *p, const op_list *fwd, size_t from, size_t to,
                        op_list *bwd)
{
    int out = act_precision(p);
    for (size_t i = from; i < to; i++) {
        const op *o = &fwd->ops[i];
        if (o->kind == OP_GEMM) {
            op dgrad = gemm(o->name, o->precision, out, o->m, o->k, o->n, o->count);
            op wgrad = gemm(o->name, o->precision, out, o->k, o->n, o->m, o->count);
            dgrad.gemm_batch = wgrad.gemm_batch = o->gemm_batch; /* batched attention GEMMs */
            push_op(bwd, dgrad);
            push_op(bwd, wgrad);
        } else {
            op back = *o;
            back.flops *= 2;
            back.bytes *= 2;
            push_op(bwd, back);
        }
    }
}

static double op_flops(const op_list *l, size_t from, size_t to)
{
    double f = 0;
    for (size_t i = from; i < to; i++)
        f += l->ops[i].flops * l->ops[i].count;
    return f;
}

/* The forward list of stage i and its backward: recompute first, then the
 * gradients of everything. Returns the recompute FLOPs (hardware, not model). */
static double stage_ops(const model_arch *m, const parallel_config *p, const layer_shape *ls,
                        const stage_workload *st, op_list *fwd, op_list *bwd)
{
    int prec = act_precision(p); /* the output layer stays BF16 under TE FP8 (see below) */
    double t = p->tp, w = precision_bytes(prec), h = m->hidden;
    unsigned dense = st->layers - st->moe_layers;
    if (st->has_embedding)
        push_op(fwd, memory_op("embedding", prec, ls->tokens * h * w, 1));
    size_t layers_from = fwd->n;
    if (dense)
        forward_layer(m, p, ls, 0, dense, fwd);
    if (st->moe_layers)
        forward_layer(m, p, ls, 1, st->moe_layers, fwd);
    size_t layers_to = fwd->n;
    if (st->has_output) {
        push_op(fwd, memory_op("final_norm", prec, 2 * ls->act_tokens * h * w, 1));
        /* Megatron-Core's output layer is a plain ColumnParallelLinear outside
         * TE's fp8_autocast (gpt_model.py; not in the sheets: U) */
        push_op(fwd, gemm("logits", prec, prec, ls->tokens, m->vocab / t, h, 1));
        push_op(fwd, memory_op("cross_entropy", prec, 2 * ls->tokens * (m->vocab / t) * 4, 1));
    }

    /* backward: recompute first, then gradients of everything */
    if (p->recompute == RECOMPUTE_FULL) {
        for (size_t k = layers_from; k < layers_to; k++)
            push_op(bwd, fwd->ops[k]);
    } else if (p->recompute == RECOMPUTE_SELECTIVE) {
        for (size_t k = layers_from; k < layers_to; k++)
            if (fwd->ops[k].is_attention_core) /* the attention core, either kernel */
                push_op(bwd, fwd->ops[k]);
    }
    double recompute_flops = op_flops(bwd, 0, bwd->n);
    backward_of(p, fwd, 0, fwd->n, bwd);
    return recompute_flops;
}

/* parameters on one GPU of stage i (st->params, of which st->expert_params) */
static void stage_params(const model_arch *m, const parallel_config *p, unsigned i,
                         stage_workload *st)
{
    double t = p->tp, h = m->hidden;
    double params = 0, expert_params = 0;
    for (unsigned l = 0; l < m->layers; l++) {
        if (layer_stage(m, p, l) != i)
            continue;
        int moe = m->experts && l >= m->dense_layers;
        double attn = model_params_attention_layer(m) / t + 2 * h;
        params += attn;
        if (moe) {
            double experts = (double)m->experts / p->ep * model_params_mlp_expert(m) / t;
            double shared = m->shared_experts * model_params_mlp_expert(m) / t;
            params += experts + shared + h * m->experts;
            expert_params += experts;
        } else {
            params += model_params_mlp_dense(m) / t;
        }
    }
    if (st->has_embedding)
        params += model_params_embedding(m) / t;
    if (st->has_output)
        params += (m->tied_embeddings ? model_params_embedding(m) : model_params_output(m)) / t +
                  h;
    st->params = params;
    st->expert_params = expert_params;
}

/* TP per micro-batch. With sequence parallelism the backward repeats the
 * forward's input all-gathers of the two column-parallel GEMMs (qkv, fc1):
 * Megatron keeps that input sharded and gathers it again for the weight
 * gradient (LinearWithGradAccumulationAndAsyncCommunication.backward; the
 * issue's statement, not in the sheets: U). Full recompute repeats the
 * forward's collectives in the backward. */
static void tp_comm(const parallel_config *p, double act_bytes, unsigned L, comm_list *comm)
{
    double fwd_count = 2.0 * L, bwd_count = 2.0 * L;
    if (p->recompute == RECOMPUTE_FULL)
        bwd_count += 2.0 * L;
    if (p->sequence_parallel) {
        double bwd_gathers = bwd_count + 2.0 * L;
        push_comm(comm, COMM_TP_ALLGATHER, PHASE_FORWARD, act_bytes, p->tp, fwd_count, "tp_ag");
        push_comm(comm, COMM_TP_REDUCE_SCATTER, PHASE_FORWARD, act_bytes, p->tp, fwd_count,
                  "tp_rs");
        push_comm(comm, COMM_TP_ALLGATHER, PHASE_BACKWARD, act_bytes, p->tp, bwd_gathers,
                  "tp_ag");
        push_comm(comm, COMM_TP_REDUCE_SCATTER, PHASE_BACKWARD, act_bytes, p->tp, bwd_count,
                  "tp_rs");
    } else {
        push_comm(comm, COMM_TP_ALLREDUCE, PHASE_FORWARD, act_bytes, p->tp, fwd_count, "tp_ar");
        push_comm(comm, COMM_TP_ALLREDUCE, PHASE_BACKWARD, act_bytes, p->tp, bwd_count, "tp_ar");
    }
}

/* PP per micro-batch: each stage sends once per virtual chunk, except the
 * model's very end (forward) and beginning (backward). With sequence
 * parallelism the boundary activation is already sharded over TP (each
 * rank sends 1/t); without it each rank sends all of it (full), or 1/t and
 * the receiving TP group all-gathers it (scatter-gather, Megatron-LM's
 * legacy --scatter-gather-tensors-in-pipeline). */
static void pp_comm(const parallel_config *p, unsigned i, double act_bytes, comm_list *comm)
{
    double t = p->tp;
    int scatter = !p->sequence_parallel && p->fw.pp_send_mode == PP_SEND_SCATTER_GATHER;
    double pp_bytes = p->sequence_parallel || scatter ? act_bytes / t : act_bytes;
    double sends_fwd = p->vpp - (i == p->pp - 1 ? 1.0 : 0.0);
    double sends_bwd = p->vpp - (i == 0 ? 1.0 : 0.0);
    push_comm(comm, COMM_PP_SEND, PHASE_FORWARD, pp_bytes, 2, sends_fwd, "pp_activation");
    push_comm(comm, COMM_PP_SEND, PHASE_BACKWARD, pp_bytes, 2, sends_bwd, "pp_gradient");
    if (scatter) {
        /* stage i receives activations as often as stage i-1 sends them, and
         * gradients as often as stage i+1 does */
        double recv_fwd = p->vpp - (i == 0 ? 1.0 : 0.0);
        double recv_bwd = p->vpp - (i == p->pp - 1 ? 1.0 : 0.0);
        push_comm(comm, COMM_TP_ALLGATHER, PHASE_FORWARD, act_bytes, p->tp, recv_fwd,
                  "pp_activation_gather");
        push_comm(comm, COMM_TP_ALLGATHER, PHASE_BACKWARD, act_bytes, p->tp, recv_bwd,
                  "pp_gradient_gather");
    }
}

/* DP per iteration: gradients at the reduction precision (r bytes per
 * parameter), the sharded optimizer's parameter all-gather at c */
static void dp_comm(const parallel_config *p, const stage_workload *st, comm_list *comm)
{
    double r = workload_grad_reduce_bytes(p), c = workload_comm_bytes(p);
    unsigned dp_group = p->dp * p->cp;
    double dense_params = st->params - st->expert_params, expert_params = st->expert_params;
    unsigned expert_group = dp_group / p->ep;
    if (p->zero_stage >= 1) {
        push_comm(comm, COMM_DP_REDUCE_SCATTER, PHASE_STEP, dense_params * r, dp_group, 1,
                  "dp_grad_rs");
        push_comm(comm, COMM_DP_ALLGATHER, PHASE_STEP, dense_params * c, dp_group, 1,
                  "dp_param_ag");
        push_comm(comm, COMM_DP_REDUCE_SCATTER, PHASE_STEP, expert_params * r, expert_group, 1,
                  "dp_expert_grad_rs");
        push_comm(comm, COMM_DP_ALLGATHER, PHASE_STEP, expert_params * c, expert_group, 1,
                  "dp_expert_param_ag");
    } else {
        push_comm(comm, COMM_DP_ALLREDUCE, PHASE_STEP, dense_params * r, dp_group, 1,
                  "dp_grad_ar");
        push_comm(comm, COMM_DP_ALLREDUCE, PHASE_STEP, expert_params * r, expert_group, 1,
                  "dp_expert_grad_ar");
    }
}

/* TP, PP, CP and EP per micro-batch; DP per iteration (stage_params first).
 * Every message is in c = workload_comm_bytes bytes per element. */
static void stage_comm(const model_arch *m, const parallel_config *p, const layer_shape *ls,
                       const stage_workload *st, comm_list *comm)
{
    double t = p->tp, w = workload_comm_bytes(p), h = m->hidden;
    double act_bytes = ls->tokens * h * w;
    unsigned L = st->layers;
    if (p->tp > 1)
        tp_comm(p, act_bytes, L, comm);
    if (p->pp > 1)
        pp_comm(p, st->index, act_bytes, comm);
    if (p->cp > 1) {
        double g_local = fmax(1.0, m->kv_heads / t);
        double kv_bytes = 2 * ls->tokens * g_local * m->head_dim * w;
        push_comm(comm, COMM_CP_SENDRECV, PHASE_FORWARD, kv_bytes, p->cp, (p->cp - 1.0) * L,
                  "cp_kv");
        push_comm(comm, COMM_CP_SENDRECV, PHASE_BACKWARD, kv_bytes, p->cp,
                  2 * (p->cp - 1.0) * L, "cp_kv_grad");
    }
    if (p->ep > 1 && st->moe_layers) {
        double a2a = ls->tokens * m->top_k * h * w;
        push_comm(comm, COMM_EP_ALLTOALL, PHASE_FORWARD, a2a, p->ep, 2.0 * st->moe_layers,
                  "ep_dispatch_combine");
        push_comm(comm, COMM_EP_ALLTOALL, PHASE_BACKWARD, a2a, p->ep, 2.0 * st->moe_layers,
                  "ep_dispatch_combine");
    }
    dp_comm(p, st, comm);
}

static int build_stage(const model_arch *m, const parallel_config *p, unsigned i,
                       stage_workload *st)
{
    layer_shape ls;
    ls.tokens = (double)p->micro_batch * m->seq_len / p->cp;
    ls.act_tokens = p->sequence_parallel ? ls.tokens / p->tp : ls.tokens;

    st->index = i;
    unsigned first = 0;
    workload_stage_layers(m, p, i, &first, &st->layers);
    st->moe_layers = 0;
    for (unsigned l = 0; l < m->layers; l++)
        if (m->experts && l >= m->dense_layers && layer_stage(m, p, l) == i)
            st->moe_layers++;
    st->has_embedding = i == 0;
    st->has_output = i == p->pp - 1;

    op_list fwd = {0}, bwd = {0}, step = {0};
    comm_list comm = {0};
    double recompute_flops = stage_ops(m, p, &ls, st, &fwd, &bwd);
    stage_params(m, p, i, st);
    /* optimizer step on the local shard */
    double shard = p->zero_stage >= 1 ? st->params / p->dp : st->params;
    push_op(&step, memory_op("adam", act_precision(p), ADAM_BYTES_PER_PARAM * shard, 1));
    stage_comm(m, p, &ls, st, &comm);

    st->forward = fwd.ops;
    st->n_forward = fwd.n;
    st->backward = bwd.ops;
    st->n_backward = bwd.n;
    st->step = step.ops;
    st->n_step = step.n;
    st->comm = comm.ops;
    st->n_comm = comm.n;
    double model = 3 * op_flops(&fwd, 0, fwd.n);
    st->model_flops_microbatch = model;
    st->hardware_flops_microbatch = model + recompute_flops;
    return fwd.failed || bwd.failed || step.failed || comm.failed ? -1 : 0;
}

int workload_build(const model_arch *m, const parallel_config *p, unsigned long long gpus,
                   workload *out, sim_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = workload_check(m, p, gpus, err);
    if (rc)
        return rc;
    workload w;
    memset(&w, 0, sizeof w);
    w.model = *m;
    w.par = *p;
    w.n_stages = p->pp;
    w.microbatches = p->global_batch / (p->micro_batch * p->dp);
    w.tokens_per_iteration = (double)p->global_batch * m->seq_len;
    w.stages = calloc(p->pp, sizeof *w.stages);
    if (!w.stages)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory for %u pipeline stages",
                             p->pp);
    int failed = 0;
    for (unsigned i = 0; i < p->pp; i++)
        failed |= build_stage(m, p, i, &w.stages[i]);
    /* every GPU of a stage (tp x cp x dp of them) does the same work */
    double replicas = (double)p->tp * p->cp * p->dp;
    for (unsigned i = 0; i < p->pp; i++) {
        w.model_flops_iteration += w.stages[i].model_flops_microbatch * w.microbatches * replicas;
        w.hardware_flops_iteration +=
            w.stages[i].hardware_flops_microbatch * w.microbatches * replicas;
    }
    if (failed) {
        workload_free(&w);
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory for the operation lists");
    }
    *out = w;
    return 0;
}

void workload_free(workload *w)
{
    if (!w)
        return;
    for (unsigned i = 0; w->stages && i < w->n_stages; i++) {
        free(w->stages[i].forward);
        free(w->stages[i].backward);
        free(w->stages[i].step);
        free(w->stages[i].comm);
    }
    free(w->stages);
    memset(w, 0, sizeof *w);
}
