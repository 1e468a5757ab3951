/* job.c - <job>: <model> (catalog ref, inline architecture or parameters),
 * <training> (precision, tokens, mfu, tokens-per-iteration),
 * <parallelism> (tp pp vpp cp ep dp, batches, order, schedule, recompute,
 * zero; checked to fit in GPU memory), <framework> (what the training
 * framework does: parallel_config.fw and the step tier's overlap and bucket
 * options) and <step> (network model, sustained efficiency,
 * straggler-spread and <straggler gpu speed>).
 */
#include "loader.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>

#define MAX_PARAMS 1e15
#define MAX_SPEED_GPUS 1048576u /* <step> per-GPU speeds: see parse_step_stragglers */
#define MAX_TOKENS 1e18

static const char *const arch_attrs[] = {"layers", "hidden", "heads", "kv-heads", "head-dim",
                                         "ffn", "vocab", "seq-len", "activation",
                                         "tied-embeddings", "dropout", "experts", "top-k", "moe-ffn",
                                         "shared-experts", "dense-layers"};

/* <job><model>: ref="catalog name" (attributes override it), a full inline
 * architecture, or only parameters="..." (then no workload can be built) */
int parse_model_element(loader *ld, xmlNode *model, scn_scenario *s)
{
    int has_arch_attr = 0;
    for (size_t i = 0; i < sizeof arch_attrs / sizeof arch_attrs[0]; i++)
        has_arch_attr |= has_attr(model, arch_attrs[i]);
    int has_ref = has_attr(model, "ref"), has_params = has_attr(model, "parameters");
    copy_attr(model, "name", s->model_name, sizeof s->model_name);
    if (has_params && (has_ref || has_arch_attr))
        return node_error(ld, model, "parameters", "parameters comes from the architecture "
                          "when the model has one (ref or layers, hidden, ...); remove it");
    if (has_params) {
        int rc = get_quantity(ld, model, "parameters", SIM_DIM_COUNT, 1,
                              &s->campaign.model_params);
        if (!rc)
            rc = positive(ld, model, "parameters", s->campaign.model_params, MAX_PARAMS, "");
        return rc;
    }
    if (!has_ref && !has_arch_attr)
        return node_error(ld, model, NULL, "give ref=\"NAME\" (a catalog model), an "
                          "architecture (layers, hidden, heads, ffn, vocab, seq-len, ...) or "
                          "parameters=\"...\"");
    model_arch m;
    memset(&m, 0, sizeof m);
    if (has_ref) {
        char ref[128];
        copy_attr(model, "ref", ref, sizeof ref);
        model_arch *found = find_named(ld, CAT_MODEL, ref);
        if (!found) {
            char known[2048];
            entry_names(ld, CAT_MODEL, known, sizeof known);
            return node_error(ld, model, "ref",
                              "unknown model; known models: %s (add one in <catalog>)", known);
        }
        m = *found;
        if (has_attr(model, "heads") && !has_attr(model, "head-dim"))
            m.head_dim = 0; /* recomputed from the new heads */
    }
    int rc = parse_arch_attrs(ld, model, &m);
    if (!rc)
        rc = finish_arch(ld, model, &m);
    if (rc)
        return rc;
    if (s->model_name[0] == '\0')
        snprintf(s->model_name, sizeof s->model_name, "%s", m.name);
    if (!m.name[0])
        snprintf(m.name, sizeof m.name, "%s", s->model_name[0] ? s->model_name : "model");
    s->arch = m;
    s->has_arch = 1;
    /* 6ND counts the parameters a token touches (all of them when dense) */
    s->campaign.model_params = model_params_active(&m);
    return 0;
}

/* order="tp-cp-dp-pp": placement, innermost first (Megatron-LM's order
 * argument); "ep" may stand just before "dp" (expert groups live inside the
 * data-parallel dimension) and is dropped */
static int parse_order(loader *ld, xmlNode *n, parallel_config *p)
{
    static const char *const names[4] = {"tp", "cp", "dp", "pp"};
    char text[64], *save = NULL;
    copy_attr(n, "order", text, sizeof text);
    unsigned k = 0, seen = 0;
    for (char *tok = strtok_r(text, "-", &save); tok; tok = strtok_r(NULL, "-", &save)) {
        if (!strcmp(tok, "ep"))
            continue;
        int d = -1;
        for (int i = 0; i < 4; i++)
            if (!strcmp(tok, names[i]))
                d = i;
        if (d < 0 || (seen & (1u << d)) || k == 4)
            return node_error(ld, n, "order", "expected tp, cp, dp and pp once each, joined by "
                              "'-', innermost first (Megatron's default: tp-cp-ep-dp-pp)");
        seen |= 1u << d;
        p->order[k++] = (unsigned char)d;
    }
    if (k != 4)
        return node_error(ld, n, "order", "expected tp, cp, dp and pp once each, joined by "
                          "'-', innermost first (Megatron's default: tp-cp-ep-dp-pp)");
    return 0;
}

/* What to write instead of a GPU count that is not a multiple of per_replica
 * GPUs: when <gpu count> was written with a scale suffix ("8K": counts are
 * powers of 1000, docs/scenario.md "Units") and its binary reading (8 x 1024
 * = 8192) is a multiple, that one; else the nearest multiples below and
 * above. Into out, starting "; ". */
static void count_hint(xmlNode *par_node, uint64_t gpus, uint64_t per_replica, char *out,
                       size_t size)
{
    static const char suffixes[] = "KMGTP";
    char text[64];
    xmlNode *gpu = child(child(xmlDocGetRootElement(par_node->doc), "cluster"), "gpu");
    copy_attr(gpu, "count", text, sizeof text);
    char *end = NULL;
    double x = strtod(text, &end);
    while (end && *end == ' ')
        end++;
    const char *suffix = end && *end && !end[1] ? strchr(suffixes, *end) : NULL;
    if (suffix && x > 0) {
        int power = (int)(suffix - suffixes) + 1;
        double binary = x * pow(1024.0, power);
        if (binary == floor(binary) && binary < 1e15 && fmod(binary, (double)per_replica) == 0) {
            char exponent[8] = "";
            if (power > 1)
                snprintf(exponent, sizeof exponent, "^%d", power);
            snprintf(out, size, "; %s is %llu (count suffixes are powers of 1000): did you "
                     "mean %.0f (%g x 1024%s)?", text, (unsigned long long)gpus, binary, x,
                     exponent);
            return;
        }
    }
    uint64_t below = gpus - gpus % per_replica;
    if (below)
        snprintf(out, size, "; the nearest multiples are %llu and %llu",
                 (unsigned long long)below, (unsigned long long)(below + per_replica));
    else
        snprintf(out, size, "; at least %llu", (unsigned long long)per_replica);
}

static int parse_parallelism(loader *ld, xmlNode *par_node, scn_scenario *s)
{
    parallel_config *p = &s->par;
    memset(p, 0, sizeof *p);
    p->tp = p->pp = p->vpp = p->cp = p->ep = 1;
    const unsigned big = 100000000u;
    int rc = get_uint(ld, par_node, "tp", 0, 1, 100000, &p->tp);
    if (!rc)
        rc = get_uint(ld, par_node, "pp", 0, 1, 100000, &p->pp);
    if (!rc)
        rc = get_uint(ld, par_node, "vpp", 0, 1, 1000, &p->vpp);
    if (!rc)
        rc = get_uint(ld, par_node, "cp", 0, 1, 100000, &p->cp);
    if (!rc)
        rc = get_uint(ld, par_node, "ep", 0, 1, 100000, &p->ep);
    if (!rc)
        rc = get_uint(ld, par_node, "dp", 0, 1, big, &p->dp);
    if (!rc)
        rc = get_uint(ld, par_node, "micro-batch", 1, 1, big, &p->micro_batch);
    if (!rc)
        rc = get_uint(ld, par_node, "global-batch", 1, 1, big, &p->global_batch);
    if (!rc)
        rc = get_uint(ld, par_node, "first-stage-layers", 0, 1, 100000, &p->first_stage_layers);
    if (!rc)
        rc = get_uint(ld, par_node, "last-stage-layers", 0, 1, 100000, &p->last_stage_layers);
    if (rc)
        return rc;
    get_bool(ld, par_node, "sequence-parallel", &p->sequence_parallel);
    char text[32];
    copy_attr(par_node, "recompute", text, sizeof text);
    p->recompute = strcmp(text, "full") == 0        ? RECOMPUTE_FULL
                   : strcmp(text, "selective") == 0 ? RECOMPUTE_SELECTIVE
                                                    : RECOMPUTE_NONE;
    copy_attr(par_node, "zero", text, sizeof text);
    p->zero_stage = text[0] ? text[0] - '0' : 0;
    copy_attr(par_node, "schedule", text, sizeof text);
    p->schedule = strcmp(text, "gpipe") == 0              ? SCHEDULE_GPIPE
                  : strcmp(text, "1f1b-interleaved") == 0 ? SCHEDULE_INTERLEAVED
                                                          : SCHEDULE_1F1B;
    if (!has_attr(par_node, "schedule") && p->vpp > 1)
        p->schedule = SCHEDULE_INTERLEAVED;
    if (has_attr(par_node, "order") && parse_order(ld, par_node, p))
        return -1;
    p->precision = s->precision;
    uint64_t gpus = s->campaign.gpu_count;
    if (!has_attr(par_node, "dp")) {
        uint64_t per_replica = (uint64_t)p->tp * p->cp * p->pp;
        if (gpus % per_replica) {
            char hint[160];
            count_hint(par_node, gpus, per_replica, hint, sizeof hint);
            return node_error(ld, par_node, NULL,
                              "GPUs (%llu) are not a multiple of tp x cp x pp = %u x %u x %u = "
                              "%llu, so dp cannot be derived%s",
                              (unsigned long long)gpus, p->tp, p->cp, p->pp,
                              (unsigned long long)per_replica, hint);
        }
        if (gpus / per_replica > UINT32_MAX)
            return node_error(ld, par_node, NULL,
                              "dp = GPUs / (tp x cp x pp) = %llu / %llu = %llu: at most %u "
                              "data-parallel replicas",
                              (unsigned long long)gpus, (unsigned long long)per_replica,
                              (unsigned long long)(gpus / per_replica), UINT32_MAX);
        p->dp = (unsigned)(gpus / per_replica);
    }
    sim_error e;
    sim_error_clear(&e);
    if (workload_check(&s->arch, p, gpus, &e))
        return node_error(ld, par_node, NULL, "%s", e.msg);
    s->has_parallelism = 1;
    return 0;
}

int scn_memory(const scn_scenario *s, workload *w, stage_memory *mem, sim_error *err)
{
    if (!s->has_parallelism)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "the scenario has no <parallelism>: no workload to size");
    int rc = workload_build(&s->arch, &s->par, s->campaign.gpu_count, w, err);
    if (rc)
        return rc;
    for (unsigned i = 0; i < w->n_stages; i++)
        memory_training_stage(w, i, s->reserved_bytes, &mem[i]);
    return 0;
}

/* refuse a workload that does not fit: name the worst stage and its parts */
static int check_fits(loader *ld, xmlNode *par_node, const scn_scenario *s)
{
    if (!(s->gpu.hbm_bytes > 0))
        return node_error(ld, par_node, NULL, "GPU type '%s' has no memory capacity in the "
                          "catalog, so the workload cannot be checked against it", s->gpu.name);
    workload w;
    sim_error e;
    sim_error_clear(&e);
    stage_memory *mem = calloc(s->par.pp, sizeof *mem);
    if (!mem)
        return sim_error_set(ld->err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
    int rc = 0;
    if (scn_memory(s, &w, mem, &e)) {
        rc = e.code == SIM_ERR_INPUT ? node_error(ld, par_node, NULL, "%s", e.msg)
                                     : sim_error_set(ld->err, e.code, NULL, 0, "%s", e.msg);
    } else {
        unsigned worst = 0;
        for (unsigned i = 1; i < w.n_stages; i++)
            if (mem[i].total_bytes > mem[worst].total_bytes)
                worst = i;
        const stage_memory *m = &mem[worst];
        if (m->total_bytes > s->gpu.hbm_bytes)
            rc = node_error(ld, par_node, NULL,
                            "does not fit: pipeline stage %u needs %.1f GB per GPU, %s has %.1f GB "
                            "(weights %.1f, gradients %.1f, optimizer %.1f, activations %.1f, "
                            "buffers %.1f, reserved %.1f GB); see dcsim fit",
                            worst, m->total_bytes / 1e9, s->gpu.name, s->gpu.hbm_bytes / 1e9,
                            m->weights_bytes / 1e9, m->gradients_bytes / 1e9,
                            m->optimizer_bytes / 1e9, m->activations_bytes / 1e9,
                            m->buffers_bytes / 1e9, m->reserved_bytes / 1e9);
        workload_free(&w);
    }
    free(mem);
    return rc;
}

static int parse_step(loader *ld, xmlNode *n, scn_scenario *s);
static int parse_framework(loader *ld, xmlNode *n, scn_scenario *s);

/* The first tensor-parallel (expert = 0) or expert-parallel (expert = 1)
 * group, placed by step_gpu, touches more than one domain of g GPUs. */
static int group_spans_domains(const parallel_config *p, unsigned g, int expert)
{
    unsigned n = expert ? p->ep : p->tp;
    uint32_t first = step_gpu(p, 0, 0, 0, 0) / g;
    for (unsigned i = 1; i < n; i++)
        if ((expert ? step_gpu(p, 0, i, 0, 0) : step_gpu(p, 0, 0, 0, i)) / g != first)
            return 1;
    return 0;
}

/* <training tokens mfu>: the run's tokens, and the MFU or (without one,
 * given a <fabric> and a <parallelism>) the step tier to compute it */
static int parse_tokens_mfu(loader *ld, xmlNode *training, xmlNode *par_node, scn_scenario *s)
{
    campaign_config *c = &s->campaign;
    int rc = get_quantity(ld, training, "tokens", SIM_DIM_COUNT, 1, &c->train_tokens);
    if (!rc)
        rc = positive(ld, training, "tokens", c->train_tokens, MAX_TOKENS, "");
    if (!rc && has_attr(training, "mfu")) {
        rc = get_quantity(ld, training, "mfu", SIM_DIM_FRACTION, 1, &c->mfu_frac);
        if (!rc && !(c->mfu_frac > 0 && c->mfu_frac <= 1))
            rc = node_error(ld, training, "mfu", "mfu must be above 0 and at most 100%%");
        s->mfu_line = xmlGetLineNo(training);
    } else if (!rc) {
        if (!s->has_fabric || !par_node)
            rc = node_error(ld, training, NULL,
                            "mfu is required unless the cluster has a <fabric> and the job a "
                            "<parallelism>, from which the step tier computes the iteration");
        s->step_computes_iteration = 1;
    }
    return rc;
}

/* the GPU's peak at <training precision>; without one, the precisions the
 * catalog has for it */
static int training_peak(loader *ld, xmlNode *training, const char *prec, scn_scenario *s)
{
    campaign_config *c = &s->campaign;
    c->gpu_peak_flops_per_s = s->gpu.peak_flops_per_s[s->precision];
    if (!(c->gpu_peak_flops_per_s > 0)) {
        char have[128] = "";
        size_t used = 0;
        for (int p = 0; p < PREC_COUNT; p++)
            if (s->gpu.peak_flops_per_s[p] > 0)
                used += (size_t)snprintf(have + used, sizeof have - used, "%s%s",
                                         used ? " " : "", precision_name(p));
        return node_error(ld, training, "precision",
                          "the catalog has no %s peak for GPU type '%s'; it has: %s", prec,
                          s->gpu.name, have);
    }
    return 0;
}

/* <training tokens-per-iteration>: given, or global batch x sequence
 * length; at most the run's tokens */
static int tokens_per_iteration(loader *ld, xmlNode *training, scn_scenario *s)
{
    campaign_config *c = &s->campaign;
    int has_tpi = has_attr(training, "tokens-per-iteration");
    if (has_tpi) {
        int rc = get_quantity(ld, training, "tokens-per-iteration", SIM_DIM_COUNT, 1,
                              &c->tokens_per_iteration);
        if (!rc)
            rc = whole(ld, training, "tokens-per-iteration", c->tokens_per_iteration);
        if (!rc)
            rc = positive(ld, training, "tokens-per-iteration", c->tokens_per_iteration,
                          INFINITY, "");
        if (rc)
            return rc;
        double derived = (double)s->par.global_batch * s->arch.seq_len;
        if (s->has_parallelism && c->tokens_per_iteration != derived)
            return node_error(ld, training, "tokens-per-iteration",
                              "tokens-per-iteration disagrees with global-batch x seq-len = "
                              "%u x %u = %.15g; give one or the other",
                              s->par.global_batch, s->arch.seq_len, derived);
    } else if (s->has_parallelism) {
        c->tokens_per_iteration = (double)s->par.global_batch * s->arch.seq_len;
    } else {
        return node_error(ld, training, NULL, "give tokens-per-iteration, or a <parallelism> "
                          "whose global-batch x seq-len sets it");
    }
    if (c->tokens_per_iteration > c->train_tokens)
        return node_error(ld, training, has_tpi ? "tokens-per-iteration" : "tokens",
                          "tokens-per-iteration (%.15g) must not exceed tokens (%.15g)",
                          c->tokens_per_iteration, c->train_tokens);
    return 0;
}

/* the parallel job on the fabric: enough GPUs, and a warning when a tensor-
 * or expert-parallel group crosses scale-up domains */
static int check_placement(loader *ld, xmlNode *par_node, const scn_scenario *s)
{
    unsigned long long need = (unsigned long long)s->par.tp * s->par.cp * s->par.dp * s->par.pp;
    if (need > s->fabric.gpus)
        return node_error(ld, par_node, NULL, "tp x cp x dp x pp = %llu GPUs, more than "
                          "the cluster's %u", need, s->fabric.gpus);
    unsigned g = s->fabric.gpus_per_node;
    size_t at = strlen(ld->warnings), room = sizeof ld->warnings - at;
    int n = 0;
    if (g > 1 && group_spans_domains(&s->par, g, 0))
        n = snprintf(ld->warnings + at, room, "%s: warning: a tensor-parallel group (tp = %u) "
                     "spans more than one %u-GPU scale-up domain: its collectives cross the "
                     "fabric\n", s->source, s->par.tp, g);
    at += n > 0 && (size_t)n < room ? (size_t)n : 0;
    room = sizeof ld->warnings - at;
    if (g > 1 && s->par.ep > 1 && group_spans_domains(&s->par, g, 1))
        snprintf(ld->warnings + at, room, "%s: warning: an expert-parallel group (ep = %u) "
                 "spans more than one %u-GPU scale-up domain: its all-to-all crosses the "
                 "fabric\n", s->source, s->par.ep, g);
    return 0;
}

int parse_job(loader *ld, xmlNode *root, scn_scenario *s)
{
    xmlNode *job = child(root, "job");
    xmlNode *model = child(job, "model");
    xmlNode *training = child(job, "training");
    xmlNode *par_node = child(job, "parallelism");
    char prec[16];
    copy_attr(training, "precision", prec, sizeof prec);
    if (precision_parse(prec, &s->precision))
        return node_error(ld, training, "precision", "unknown precision");
    int rc = parse_model_element(ld, model, s);
    if (rc)
        return rc;
    if (par_node && !s->has_arch)
        return node_error(ld, par_node, NULL, "<parallelism> needs the model's architecture: "
                          "use <model ref=\"...\"/> or give layers, hidden, heads, ...");
    rc = parse_tokens_mfu(ld, training, par_node, s);
    if (!rc)
        rc = training_peak(ld, training, prec, s);
    if (!rc && par_node)
        rc = parse_parallelism(ld, par_node, s);
    if (!rc)
        rc = tokens_per_iteration(ld, training, s);
    if (!rc)
        rc = parse_step(ld, child(job, "step"), s);
    if (!rc)
        rc = parse_framework(ld, child(job, "framework"), s);
    if (!rc && s->has_parallelism && s->has_fabric)
        rc = check_placement(ld, par_node, s);
    if (!rc && s->has_parallelism && !(ld->flags & SCN_LOAD_NO_FIT_CHECK))
        rc = check_fits(ld, par_node, s);
    return rc;
}

/* <step straggler-spread> and <straggler gpu speed>: what the run layer
 * draws each GPU's speed from (run.c); checked here, drawn there. */
static int parse_step_stragglers(loader *ld, xmlNode *n, scn_scenario *s)
{
    size_t named = 0;
    for (xmlNode *c = n->children; c; c = c->next)
        named += c->type == XML_ELEMENT_NODE && !strcmp((const char *)c->name, "straggler");
    if (!named && s->straggler_spread == 0)
        return 0;
    uint64_t gpus = s->campaign.gpu_count;
    /* the run draws one random stream and one double per GPU: a bound keeps
     * that quick and small (2^30 GPUs took minutes and 8 GiB) */
    if (gpus > MAX_SPEED_GPUS)
        return node_error(ld, n, NULL,
                          "per-GPU speeds (straggler-spread, <straggler>) are drawn for at most "
                          "%u GPUs; this cluster has %llu",
                          MAX_SPEED_GPUS, (unsigned long long)gpus);
    s->stragglers = named ? malloc(named * sizeof *s->stragglers) : NULL;
    if (named && !s->stragglers)
        return sim_error_set(ld->err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
    int rc = 0;
    for (xmlNode *c = n->children; c && !rc; c = c->next) {
        if (c->type != XML_ELEMENT_NODE || strcmp((const char *)c->name, "straggler"))
            continue;
        double gpu = 0, speed = 0;
        rc = get_quantity(ld, c, "gpu", SIM_DIM_COUNT, 1, &gpu);
        if (!rc)
            rc = whole(ld, c, "gpu", gpu);
        if (!rc && !(gpu >= 0 && gpu < (double)gpus))
            rc = node_error(ld, c, "gpu", "gpu must be a GPU id from 0 to %llu",
                            (unsigned long long)gpus - 1);
        if (!rc)
            rc = get_quantity(ld, c, "speed", SIM_DIM_FRACTION, 1, &speed);
        if (!rc && !(speed > 0 && speed <= 1))
            rc = node_error(ld, c, "speed", "speed must be above 0%% and at most 100%% "
                            "(a straggler is slower: 90%% runs at nine tenths)");
        if (!rc)
            s->stragglers[s->n_stragglers++] = (scn_straggler){(uint32_t)gpu, speed};
    }
    return rc;
}

/* The <fail>s of <step> n against the fabric built (fabric_fault.h): each
 * part's id alone, then whether the state cuts a GPU off (the step needs
 * every GPU), each refusal at its element; the whole state's at <step>. */
static int check_step_fails(loader *ld, xmlNode *n, xmlNode *const *at, scn_scenario *s)
{
    fabric f;
    sim_error e;
    sim_error_clear(&e);
    if (fabric_build(&s->fabric, &f, &e))
        return node_error(ld, n, NULL, "%s", e.msg);
    ff_state st;
    ff_state_init(&st);
    int rc = 0;
    for (unsigned i = 0; i <= s->n_step_fails && !rc; i++) {
        ff_state one = {.part = &s->step_fails[i], .n = 1, .cap = 1};
        const ff_state *x = i < s->n_step_fails ? &one : &st; /* last: all of them */
        if (i < s->n_step_fails && ff_state_add(&st, &s->step_fails[i])) {
            rc = sim_error_set(ld->err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
            break;
        }
        if (i == s->n_step_fails && !st.n)
            break;
        ff_effect eff = {0};
        if (ff_effect_compute(&f, x, &eff, &e) || ff_effect_check_gpus(&f, x, &eff, &e))
            rc = e.code == SIM_ERR_NOMEM
                     ? sim_error_set(ld->err, SIM_ERR_NOMEM, NULL, 0, "%s", e.msg)
                     : node_error(ld, i < s->n_step_fails ? at[i] : n,
                                  i < s->n_step_fails ? "id" : NULL, "%s", e.msg);
        ff_effect_fini(&eff);
    }
    ff_state_fini(&st);
    fabric_free(&f);
    return rc;
}

/* <step><fail part id speed>: dcsim step's failure state (scenario.h
 * step_fails), as --fail CLASS=ID[:SPEED] would give it */
static int parse_step_fails(loader *ld, xmlNode *n, scn_scenario *s)
{
    xmlNode *at[SCN_MAX_STEP_FAILS];
    int rc = 0;
    for (xmlNode *c = n->children; c && !rc; c = c->next) {
        if (c->type != XML_ELEMENT_NODE || strcmp((const char *)c->name, "fail"))
            continue;
        if (s->n_step_fails == SCN_MAX_STEP_FAILS)
            return node_error(ld, c, NULL, "at most %u <fail> parts in <step>",
                              SCN_MAX_STEP_FAILS);
        if (!s->has_fabric)
            return node_error(ld, c, NULL, "<fail> needs a <cluster><fabric> (its part ids "
                              "are the built fabric's)");
        if (s->step.packet)
            return node_error(ld, c, NULL, "the packet network does not take failure states "
                              "yet (use network=\"flow\", \"concurrent\" or \"analytic\")");
        char word[16];
        copy_attr(c, "part", word, sizeof word);
        int cls = topo_choice_find(ff_classes, word);
        if (cls < 0) /* the schema allows the five */
            return node_error(ld, c, "part", "expected link, switch, nic, node or gpu");
        double id = 0, speed = 0;
        rc = get_quantity(ld, c, "id", SIM_DIM_COUNT, 1, &id);
        if (!rc)
            rc = whole(ld, c, "id", id);
        if (!rc && !(id >= 0 && id < UINT32_MAX))
            rc = node_error(ld, c, "id", "id must be a node, link or GPU id of the built fabric");
        if (!rc && has_attr(c, "speed")) {
            rc = get_quantity(ld, c, "speed", SIM_DIM_FRACTION, 1, &speed);
            if (!rc && !(speed > 0 && speed <= 1))
                rc = node_error(ld, c, "speed", "speed must be above 0%% and at most 100%% "
                                "(a slow part: 50%% runs at half its rate; no speed: down)");
        }
        if (!rc) {
            at[s->n_step_fails] = c;
            s->step_fails[s->n_step_fails++] = (ff_part){(enum ff_class)cls, (uint32_t)id, speed};
        }
    }
    return rc || !s->n_step_fails ? rc : check_step_fails(ld, n, at, s);
}

/* <job><step>: the step tier's network model, symmetry folding, sustained
 * efficiency and stragglers (docs/step.md); TP overlap, DP overlap and buckets are
 * framework behaviour (<framework>, parse_framework) */
static int parse_step(loader *ld, xmlNode *n, scn_scenario *s)
{
    step_options *o = &s->step;
    step_options_defaults(o);
    o->sustained_efficiency = 0; /* the GPU catalog's unless <step> gives one */
    if (!n)
        return 0;
    char text[32];
    if (has_attr(n, "network")) {
        copy_attr(n, "network", text, sizeof text);
        o->analytic = !strcmp(text, "analytic");
        o->packet = !strcmp(text, "packet"); /* the concurrent iteration on packets */
        o->concurrent = o->packet || !strcmp(text, "concurrent");
    }
    if (has_attr(n, "fold")) { /* the schema allows exact and off */
        copy_attr(n, "fold", text, sizeof text);
        o->no_fold = !strcmp(text, "off");
    }
    if (has_attr(n, "sm-sharing")) { /* the schema allows schedule and stage-end */
        copy_attr(n, "sm-sharing", text, sizeof text);
        o->sm_stage_end = !strcmp(text, "stage-end");
    }
    int rc = 0;
    if (has_attr(n, "sustained-efficiency"))
        rc = get_fraction(ld, n, "sustained-efficiency", &o->sustained_efficiency);
    if (!rc && has_attr(n, "straggler-spread")) {
        rc = get_quantity(ld, n, "straggler-spread", SIM_DIM_FRACTION, 1, &s->straggler_spread);
        if (!rc && !(s->straggler_spread >= 0 && s->straggler_spread < 0.5))
            rc = node_error(ld, n, "straggler-spread",
                            "straggler-spread must be from 0%% to below 50%%");
    }
    if (!rc)
        rc = parse_step_stragglers(ld, n, s);
    return rc ? rc : parse_step_fails(ld, n, s);
}

/* ---- <job><framework>: the training framework's behaviour ---- */

typedef struct keyword {
    const char *name;
    int value;
} keyword;

/* attr's value, one of the n names of k (its value in *out), or a one-line
 * error listing them; absent: *out untouched */
static int get_keyword(loader *ld, xmlNode *n, const char *attr, const keyword *k, size_t nk,
                       int *out)
{
    if (!has_attr(n, attr))
        return 0;
    char text[64], allowed[256] = "";
    copy_attr(n, attr, text, sizeof text);
    size_t used = 0;
    for (size_t i = 0; i < nk; i++) {
        if (!strcmp(text, k[i].name)) {
            *out = k[i].value;
            return 0;
        }
        used += (size_t)snprintf(allowed + used, sizeof allowed - used, "%s%s",
                                 i == 0 ? "" : i + 1 == nk ? " or " : ", ", k[i].name);
    }
    return node_error(ld, n, attr, "%s must be %s", attr, allowed);
}

#define N_OF(a) (sizeof a / sizeof a[0])

/* bucket="megatron|ddp|deepspeed|COUNT" */
static int parse_bucket(loader *ld, xmlNode *n, framework_config *f)
{
    static const keyword rules[] = {
        {"megatron", BUCKET_MEGATRON}, {"ddp", BUCKET_PYTORCH_DDP}, {"deepspeed", BUCKET_DEEPSPEED}};
    char text[64];
    copy_attr(n, "bucket", text, sizeof text);
    for (size_t i = 0; i < N_OF(rules); i++)
        if (!strcmp(text, rules[i].name)) {
            f->bucket_rule = rules[i].value;
            return 0;
        }
    double x = 0;
    char why[400];
    if (sim_units_parse(text, SIM_DIM_COUNT, &x, why, sizeof why) || !(x >= 1 && x <= 1e15) ||
        x != floor(x))
        return node_error(ld, n, "bucket", "bucket must be megatron, ddp, deepspeed or a whole "
                          "number of parameters from 1 to 1e15 (e.g. 40M)");
    f->bucket_rule = BUCKET_FIXED;
    f->bucket_params = x;
    return 0;
}

/* tp-overlap="none|pipelined|FRACTION": the fraction goes to the step tier */
static int parse_tp_overlap(loader *ld, xmlNode *n, framework_config *f, step_options *o)
{
    char text[64];
    copy_attr(n, "tp-overlap", text, sizeof text);
    if (!strcmp(text, "none")) {
        f->tp_overlap_mode = TP_OVERLAP_NONE;
        o->tp_overlap = 0;
        return 0;
    }
    if (!strcmp(text, "pipelined")) {
        f->tp_overlap_mode = TP_OVERLAP_PIPELINED;
        return 0;
    }
    double x = 0;
    char why[400];
    if (sim_units_parse(text, SIM_DIM_FRACTION, &x, why, sizeof why) || !(x >= 0 && x <= 1))
        return node_error(ld, n, "tp-overlap", "tp-overlap must be none, pipelined or the "
                          "fraction hidden, from 0%% to 100%%");
    f->tp_overlap_mode = TP_OVERLAP_FRACTION;
    o->tp_overlap = x;
    return 0;
}

/* the enumerated attributes */
static int parse_framework_keywords(loader *ld, xmlNode *n, framework_config *f,
                                    step_options *o)
{
    static const keyword attention[] = {{"flash2", ATTN_FLASH2},
                                        {"flash3", ATTN_FLASH3},
                                        {"cudnn", ATTN_CUDNN},
                                        {"materialised", ATTN_MATERIALISED}};
    static const keyword recipe[] = {{"te", FP8_RECIPE_TE}, {"all", FP8_RECIPE_ALL}};
    static const keyword reduce[] = {{"fp32", PREC_FP32}, {"bf16", PREC_BF16}};
    static const keyword send[] = {{"full", PP_SEND_FULL},
                                   {"scatter-gather", PP_SEND_SCATTER_GATHER}};
    static const keyword truth[] = {{"true", 1}, {"false", 0}};
    static const keyword buffer[] = {{"fp32", 0}, {"none", 1}};
    int rc = get_keyword(ld, n, "attention", attention, N_OF(attention), &f->attention_kernel);
    if (!rc)
        rc = get_keyword(ld, n, "fp8-recipe", recipe, N_OF(recipe), &f->fp8_recipe);
    if (!rc)
        rc = get_keyword(ld, n, "grad-reduce", reduce, N_OF(reduce), &f->grad_reduce_precision);
    if (!rc)
        rc = get_keyword(ld, n, "pp-send", send, N_OF(send), &f->pp_send_mode);
    if (!rc)
        rc = get_keyword(ld, n, "cuda-graphs", truth, N_OF(truth), &f->cuda_graphs);
    if (!rc)
        rc = get_keyword(ld, n, "main-grad-buffer", buffer, N_OF(buffer),
                         &f->no_main_grad_buffer);
    if (!rc)
        rc = get_keyword(ld, n, "overlap-grad-reduce", truth, N_OF(truth),
                         &o->overlap_grad_reduce);
    if (!rc)
        rc = get_keyword(ld, n, "overlap-param-gather", truth, N_OF(truth),
                         &o->overlap_param_gather);
    return rc;
}

/* <job><framework>: parallel_config.fw (all defaults without the element)
 * and the step tier's TP overlap fraction and DP overlap (docs/scenario.md). After parse_parallelism and parse_step. */
static int parse_framework(loader *ld, xmlNode *n, scn_scenario *s)
{
    framework_config *f = &s->par.fw;
    step_options *o = &s->step;
    int rc = n ? parse_framework_keywords(ld, n, f, o) : 0;
    if (!rc && n && has_attr(n, "bucket"))
        rc = parse_bucket(ld, n, f);
    if (!rc && n && has_attr(n, "tp-overlap"))
        rc = parse_tp_overlap(ld, n, f, o);
    if (!rc && n && has_attr(n, "launch-overhead")) {
        rc = get_quantity(ld, n, "launch-overhead", SIM_DIM_TIME, 1, &f->launch_overhead_s);
        if (!rc && !(f->launch_overhead_s > 0 && f->launch_overhead_s <= 1e-3))
            rc = node_error(ld, n, "launch-overhead", "launch-overhead must be above 0 and at "
                            "most 1 ms per kernel (absent: the GPU catalog's)");
    }
    if (rc)
        return rc;
    int fp32 = s->precision == PREC_FP32 || s->precision == PREC_TF32;
    if (n && f->no_main_grad_buffer && !fp32 && !has_attr(n, "grad-reduce"))
        f->grad_reduce_precision = PREC_BF16; /* gradients are reduced as they are kept */
    if (n && f->no_main_grad_buffer && !fp32 && f->grad_reduce_precision == PREC_FP32)
        return node_error(ld, n, "grad-reduce", "grad-reduce=\"fp32\" needs main-grad-buffer="
                          "\"fp32\": without the buffer %s gradients are reduced in bf16",
                          precision_name(s->precision));
    return 0; /* buckets: the step tier applies the rule to the dp it runs (elastic runs shrink it) */
}
