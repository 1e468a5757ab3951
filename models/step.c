/* step.c - one training iteration: compute per (chunk, stage), the
 * pipeline schedule and data-parallel reduction (see step.h); the
 * communication is in step_comm.c, the profile in step_report.c. */
#include "step_internal.h"
#include "pages.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "netcoll.h"
#include "schedule.h"

#define FAIL(...) return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, __VA_ARGS__)

static const char *const part_names[STEP_PART_COUNT] = {"compute", "tp", "pp", "dp",
                                                        "cp", "ep", "bubble", "optimizer"};

const char *step_part_name(int part)
{
    return part >= 0 && part < STEP_PART_COUNT ? part_names[part] : "?";
}

const char *step_tier_name(int tier)
{
    static const char *const names[STEP_TIERS] = {"scale-up", "host-leaf", "leaf-spine",
                                                  "spine-core/global"};
    return tier >= 0 && tier < STEP_TIERS ? names[tier] : "?";
}

void step_options_defaults(step_options *o)
{
    memset(o, 0, sizeof *o);
    o->tp_overlap = 0;
    o->overlap_grad_reduce = 1;
    o->overlap_param_gather = 1;
    o->bucket_params = 0; /* the framework's rule (fw.bucket_rule) */
    o->sustained_efficiency = 1;
    o->flow_log = STEP_FLOW_LOG_DEFAULT;
}

uint32_t step_gpu(const parallel_config *p, unsigned stage, unsigned d, unsigned c, unsigned t)
{
    static const unsigned char megatron[4] = {DIM_TP, DIM_CP, DIM_DP, DIM_PP};
    const unsigned char *o =
        p->order[0] | p->order[1] | p->order[2] | p->order[3] ? p->order : megatron;
    unsigned index[4] = {t, c, p->dp_replica ? p->dp_replica[d] : d, stage},
             size[4] = {p->tp, p->cp, p->dp_replica ? p->dp_placed : p->dp, p->pp};
    uint32_t id = 0, stride = 1;
    for (int k = 0; k < 4; k++) { /* mixed radix, innermost dimension first */
        id += index[o[k]] * stride;
        stride *= size[o[k]];
    }
    return p->gpu_map ? p->gpu_map[id] : id;
}

void step_profile_free(step_profile *p)
{
    if (!p)
        return;
    free(p->stage);
    free(p->link_bytes);
    free(p->link_tier);
    free(p->link_utilisation);
    free(p->tasks);
    free(p->bin_peak);
    free(p->bin_mean);
    free(p->flows);
    pkt_series_destroy(p->packet_series);
    memset(p, 0, sizeof *p);
}

/* ------------------------------------------------------------ compute */

/* where an op sits in the model: 0 a transformer layer, 1 the embedding
 * (stage 0's first chunk), 2 the output head (the last stage's last chunk);
 * by the names workload.c gives them */
static int op_place(const op *o)
{
    static const char *const head[] = {"final_norm", "logits", "cross_entropy"};
    if (!o->name)
        return 0;
    if (!strcmp(o->name, "embedding"))
        return 1;
    for (size_t i = 0; i < sizeof head / sizeof *head; i++)
        if (!strcmp(o->name, head[i]))
            return 2;
    return 0;
}

/* Time of an op list, split by place (part[3]: layers, embedding, head),
 * by op kind (kind[], added to) and the layers' GEMMs (*gemm, added to). */
static int ops_time(const compute_device *dev, const op *ops, size_t n, double part[3],
                    double *kind, double *gemm, double *attention)
{
    part[0] = part[1] = part[2] = 0;
    for (size_t i = 0; i < n; i++) {
        double x = compute_op_time_s(dev, &ops[i]);
        if (x < 0)
            return -1;
        x *= ops[i].count;
        int place = op_place(&ops[i]);
        part[place] += x;
        if (ops[i].kind >= 0 && ops[i].kind < OP_KIND_COUNT)
            kind[ops[i].kind] += x;
        if (gemm && place == 0 && ops[i].kind == OP_GEMM)
            *gemm += x;
        if (attention && ops[i].kind == OP_ATTENTION)
            *attention += x;
    }
    return 0;
}

double step_chunk_share(const workload *w, unsigned s, unsigned ch)
{
    unsigned v = w->par.vpp ? w->par.vpp : 1, layers = w->stages[s].layers;
    if (!layers)
        return 1.0 / v;
    return (double)workload_chunk_layer_count(&w->model, &w->par, s, ch) / layers;
}

/* one micro-batch of (chunk ch, stage s): its share of the layers' compute
 * and communication, and the embedding or head where it holds them */
double step_chunk_time(const workload *w, const stage_costs *c, unsigned s, unsigned ch,
                       double slow, int backward)
{
    unsigned v = w->par.vpp ? w->par.vpp : 1, P = w->par.pp;
    const stage_costs *x = &c[s];
    double share = step_chunk_share(w, s, ch);
    double t = backward ? share * (x->layer_b * slow + x->tp_b + x->smx_b + x->cp_b + x->ep_b)
                        : share * (x->layer_f * slow + x->tp_f + x->smx_f + x->cp_f + x->ep_f);
    if (s == 0 && ch == 0)
        t += (backward ? x->embed_b : x->embed_f) * slow;
    if (s == P - 1 && ch == v - 1)
        t += (backward ? x->head_b : x->head_f) * slow;
    return t;
}

/* ------------------------------------------------------------ schedule */

static int run_replica(const workload *w, const stage_costs *c, replica_run *rr, sim_error *err)
{
    const parallel_config *p = &w->par;
    unsigned v = p->vpp ? p->vpp : 1, P = p->pp, n = v * P;
    double *tf = malloc(n * sizeof *tf), *tb = malloc(n * sizeof *tb);
    double *sf = malloc(n * sizeof *sf), *sb = malloc(n * sizeof *sb);
    int rc = SIM_ERR_NOMEM;
    if (!tf || !tb || !sf || !sb) {
        step_no_memory(err);
        goto done;
    }
    for (unsigned ch = 0; ch < v; ch++)
        for (unsigned s = 0; s < P; s++) {
            unsigned j = ch * P + s;
            tf[j] = step_chunk_time(w, c, s, ch, 1 / rr->speed[s], 0);
            tb[j] = step_chunk_time(w, c, s, ch, 1 / rr->speed[s], 1);
            sf[j] = c[s].send_f;
            sb[j] = c[(s + 1) % P].send_b;
        }
    sched_input in = {.kind = p->schedule, .pp = P, .vpp = v, .microbatches = w->microbatches,
                      .t_forward = tf, .t_backward = tb, .t_send_forward = sf,
                      .t_send_backward = sb};
    if (v == 1 && in.kind == SCHEDULE_INTERLEAVED)
        in.kind = SCHEDULE_1F1B;
    if (in.kind != SCHEDULE_INTERLEAVED && v != 1) {
        rc = sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                           "virtual pipeline chunks (vpp %u) need the interleaved schedule", v);
        goto done;
    }
    rc = sched_run(&in, &rr->sched, err);
    if (!rc) {
        in.t_send_forward = in.t_send_backward = NULL;
        rc = sched_run(&in, &rr->ideal, err);
    }
done:
    free(tf);
    free(tb);
    free(sf);
    free(sb);
    return rc;
}

/* ------------------------------------------------------------ DP buckets */

/* Buckets per (chunk, stage): the reduction chain walks them one by one, so
 * a bucket of a few parameters would make the step tier loop for minutes.
 * Real frameworks use tens of millions of parameters (components.md 4.4):
 * a few hundred buckets per chunk. */
#define STEP_MAX_BUCKETS 1e6

/* When the reduction of (chunk, stage) ends, its buckets ready evenly over
 * the chunk's last backward (or all at its end) and run one after another;
 * *window (added to) is how long they run before busy_end, the stage's last
 * backward (an upper bound of their overlap with its compute: bubbles
 * before it are counted as busy). */
static double reduce_end(const step_options *o, double last_end, double last_len,
                         const dp_chain *dc, double busy_end, double *window, double *first)
{
    double end = 0;
    for (unsigned i = 0; i < dc->buckets; i++) {
        double ready = o->overlap_grad_reduce
                           ? last_end - last_len + last_len * (i + 1) / dc->buckets
                           : last_end;
        double start = fmax(end, ready);
        if (i == 0)
            *first = fmin(*first, start);
        end = start + dc->bucket_s;
        *window += fmax(0, fmin(end, busy_end) - start);
    }
    return dc->buckets ? end : last_end;
}

/* k, the SMs stage s's DP reduction (gather 0) or parameter gather (1)
 * takes (step_comm_sms); 0 with fewer than two ranks; 0 and *unpriced = 1
 * when the GPU has no SM count */
static double dp_sm_k(const step_run *sr, const workload *w, const compute_device *dev,
                      unsigned s, int gather, int *unpriced)
{
    const parallel_config *p = &w->par;
    uint32_t ranks[2];
    if (p->dp * p->cp < 2)
        return 0;
    if (!dev->sms) {
        *unpriced = 1;
        return 0;
    }
    /* the first and the last rank decide whether the group leaves its
     * scale-up domain (ranks run in order of placement) */
    ranks[0] = step_gpu(p, s, 0, 0, 0);
    ranks[1] = step_gpu(p, s, p->dp - 1, p->cp - 1, 0);
    enum nc_collective coll = gather ? NC_ALLGATHER
                              : sr->c[s].dp_kind == COMM_DP_ALLREDUCE ? NC_ALLREDUCE
                                                                      : NC_REDUCESCATTER;
    return step_comm_sms(sr->cx.f, coll, ranks, 2);
}

double step_dp_sm_share(const step_run *sr, const workload *w, const compute_device *dev,
                        unsigned s, int gather, int *unpriced)
{
    /* NCCL's DP kernels run on their own stream beside GEMMs given no SM
     * margin: the measured slowdown where the device has one (compute.h) */
    return compute_beside_share(dev, dp_sm_k(sr, w, dev, s, gather, unpriced));
}

/* compute lost while a DP collective of stage s runs beside it for
 * `window` seconds: window x step_dp_sm_share */
static double dp_sm_cost(const step_run *sr, const workload *w, const compute_device *dev,
                         unsigned s, int gather, double window, int *unpriced)
{
    if (!(window > 0))
        return 0;
    return window * step_dp_sm_share(sr, w, dev, s, gather, unpriced);
}

/* Parameters per DP bucket: step_options.bucket_params when an API caller
 * sets one, else the framework's rule (workload_bucket_params: Megatron
 * max(40M, 1M x dp x cp), PyTorch DDP 25 MiB, DeepSpeed 5e8 elements, or a
 * fixed size; components.md 4.4). Returns <= 0 when the fixed rule has no
 * size. */
static double bucket_params(const parallel_config *p, const step_options *o)
{
    return o->bucket_params > 0 ? o->bucket_params : workload_bucket_params(p);
}

/* parameters of (chunk ch, stage s) on one GPU: its share of the layers'
 * and the embedding or output layer where it holds them (as workload.c
 * counts them) */
static double chunk_params(const workload *w, unsigned s, unsigned ch)
{
    const model_arch *m = &w->model;
    unsigned v = w->par.vpp ? w->par.vpp : 1, P = w->par.pp;
    double t = w->par.tp;
    double embed = s == 0 ? model_params_embedding(m) / t : 0;
    double head = s == P - 1 ? (m->tied_embeddings ? model_params_embedding(m)
                                                   : model_params_output(m)) / t + m->hidden
                             : 0;
    double layers = fmax(0, w->stages[s].params - embed - head);
    return layers * step_chunk_share(w, s, ch) + (ch == 0 ? embed : 0) +
           (ch == v - 1 ? head : 0);
}

/* bucket time at `bytes` from the times t1 at the stage's largest bucket b1
 * and t2 at b1 / 2: a + k bytes (latency plus bandwidth, D) */
static double bucket_fit(double bytes, double b1, double t1, double t2)
{
    if (!(b1 > 0))
        return 0;
    return fmax(0, t2 + (t1 - t2) * (2 * bytes / b1 - 1));
}

/* buckets of every (chunk, stage) and their times, one bucket of every DP
 * group at once (the largest of each stage, and half of it for the fit) */
static int dp_buckets(step_run *sr, const workload *w, const step_options *o)
{
    const stage_costs *c = sr->c;
    unsigned P = w->par.pp, v = w->par.vpp ? w->par.vpp : 1;
    double *b = calloc(4 * (size_t)P, sizeof *b), *bb = calloc(2 * (size_t)v * P, sizeof *bb);
    int rc = 0;
    if (!b || !bb) {
        rc = step_no_memory(sr->cx.err);
        goto done;
    }
    double *bmax = b, *gmax = b + P, *half = b + 2 * P, *ghalf = b + 3 * P;
    for (unsigned s = 0; s < P; s++) { /* whole volumes, for the link bytes */
        bmax[s] = c[s].dp_bytes;
        gmax[s] = c[s].ag_bytes;
    }
    /* the concurrent iteration puts its own buckets' bytes on the links */
    if (!o->concurrent)
        rc = step_dp_bucket_time(&sr->cx, w, c, bmax, 0, NULL);
    if (!rc && !o->concurrent)
        rc = step_dp_bucket_time(&sr->cx, w, c, gmax, 1, NULL);
    if (rc)
        goto done;
    int uneven = 0;
    for (unsigned s = 0; s < P; s++) {
        double params = w->stages[s].params;
        bmax[s] = gmax[s] = 0;
        for (unsigned ch = 0; ch < v; ch++) {
            unsigned j = ch * P + s;
            double cp = chunk_params(w, s, ch), frac = params > 0 ? cp / params : 0;
            double size = o->overlap_grad_reduce ? bucket_params(&w->par, o) : cp;
            double count = c[s].dp_bytes > 0 && cp > 0 ? ceil(cp / size) : 0;
            if (!(count <= STEP_MAX_BUCKETS)) { /* each bucket is a step of the reduction chain */
                rc = sim_error_set(sr->cx.err, SIM_ERR_INPUT, NULL, 0,
                                   "a DP bucket of %.6g parameters splits stage %u's chunk of "
                                   "%.6g parameters into %.6g buckets: at most %.0f (use a "
                                   "larger bucket)", size, s, cp, count, STEP_MAX_BUCKETS);
                goto done;
            }
            sr->dc[j].buckets = (unsigned)count;
            unsigned n = sr->dc[j].buckets ? sr->dc[j].buckets : 1;
            bb[2 * j] = sr->dc[j].bucket_bytes = c[s].dp_bytes * frac / n;
            bb[2 * j + 1] = sr->dc[j].gather_bytes = c[s].ag_bytes * frac / n;
            bmax[s] = fmax(bmax[s], bb[2 * j]);
            gmax[s] = fmax(gmax[s], bb[2 * j + 1]);
        }
        for (unsigned ch = 0; ch < v; ch++)
            uneven |= sr->dc[ch * P + s].buckets && bb[2 * (ch * P + s)] < bmax[s] * (1 - 1e-9);
        half[s] = bmax[s] / 2;
        ghalf[s] = gmax[s] / 2;
    }
    double t1 = 0, t2 = 0, g1 = 0, g2 = 0;
    if (o->concurrent) /* every bucket is timed where it runs (step_des.c) */
        goto done;
    rc = step_dp_bucket_time(&sr->cx, w, c, bmax, 0, &t1);
    if (!rc)
        rc = step_dp_bucket_time(&sr->cx, w, c, gmax, 1, &g1);
    if (!rc && uneven)
        rc = step_dp_bucket_time(&sr->cx, w, c, half, 0, &t2);
    if (!rc && uneven)
        rc = step_dp_bucket_time(&sr->cx, w, c, ghalf, 1, &g2);
    for (unsigned j = 0; !rc && j < v * P; j++) {
        unsigned s = j % P;
        sr->dc[j].bucket_s = uneven ? bucket_fit(bb[2 * j], bmax[s], t1, t2) : t1;
        sr->dc[j].gather_bucket_s = uneven ? bucket_fit(bb[2 * j + 1], gmax[s], g1, g2) : g1;
    }
done:
    free(b);
    free(bb);
    return rc;
}

/* ------------------------------------------------------------ main */

/* Refusals before anything is allocated. */
static int check_inputs(const workload *w, const fabric *f, const step_options *o,
                        sim_error *err)
{
    const parallel_config *p = &w->par;
    unsigned long long gpus = (unsigned long long)p->tp * p->cp * p->dp * p->pp;
    if (gpus > f->gpus)
        FAIL("the job needs tp x cp x dp x pp = %llu GPUs, the fabric has %u", gpus, f->gpus);
    if (p->tp > 4096 || p->ep > 4096)
        FAIL("tp and ep above 4096 are not supported");
    if (p->ep > p->dp) /* step_gpu places an expert group on ep data ranks */
        FAIL("ep (%u) above dp (%u): expert groups that span context-parallel ranks are not "
             "modelled by the step tier", p->ep, p->dp);
    if (o->concurrent && o->analytic)
        FAIL("the concurrent iteration runs on the flow model, not the analytic path");
    if (o->packet && (!o->concurrent || !o->packet_cfg))
        FAIL("the packet network runs the concurrent iteration and needs the packet tier's "
             "parameters");
    if (!(o->bucket_params >= 0) || !(o->tp_overlap >= 0 && o->tp_overlap <= 1))
        FAIL("bucket size must not be negative and tp overlap must be in [0, 1]");
    if (!(o->sustained_efficiency > 0 && o->sustained_efficiency <= 1))
        FAIL("sustained efficiency must be in (0, 1], got %g", o->sustained_efficiency);
    if (p->fw.tp_overlap_mode < 0 || p->fw.tp_overlap_mode >= TP_OVERLAP_MODE_COUNT)
        FAIL("tp overlap mode %d is not one of fraction, none, pipelined", p->fw.tp_overlap_mode);
    if (p->fw.tp_overlap_mode == TP_OVERLAP_PIPELINED && p->tp > 1 && !p->sequence_parallel)
        FAIL("tp overlap mode pipelined needs sequence parallelism (Megatron's "
             "--tp-comm-overlap overlaps the all-gather and reduce-scatter it brings)");
    if (p->fw.bucket_rule < 0 || p->fw.bucket_rule >= BUCKET_RULE_COUNT)
        FAIL("bucket rule %d is not one of megatron, pytorch-ddp, deepspeed, fixed",
             p->fw.bucket_rule);
    if (p->fw.bucket_rule == BUCKET_FIXED && !(o->bucket_params > 0) &&
        !(p->fw.bucket_params > 0))
        FAIL("the fixed bucket rule needs a bucket size above 0 parameters");
    return 0;
}

/* compute and the communication a stage cannot hide, every stage; then the
 * PP transfers between them */
static int price_stages(step_run *sr, const workload *w, const compute_device *dev,
                        const step_options *o)
{
    for (unsigned s = 0; s < w->par.pp; s++) {
        const stage_workload *st = &w->stages[s];
        stage_costs *c = &sr->c[s];
        double f[3], b[3], opt[3];
        if (ops_time(dev, st->forward, st->n_forward, f, c->kind_f, &c->gemm_f,
                     &c->attention_f) ||
            ops_time(dev, st->backward, st->n_backward, b, c->kind_b, &c->gemm_b,
                     &c->attention_b) ||
            ops_time(dev, st->step, st->n_step, opt, c->kind_opt, NULL, NULL))
            return sim_error_set(sr->cx.err, SIM_ERR_INPUT, NULL, 0, "stage %u: an operation the "
                                 "GPU cannot time (no peak for its precision?)", s);
        /* the user's override of what training kernels sustain of the
         * kernel models (step_options.sustained_efficiency, 1 = off) */
        double eta = o->sustained_efficiency;
        c->layer_f = f[0] / eta;
        c->embed_f = f[1] / eta;
        c->head_f = f[2] / eta;
        c->layer_b = b[0] / eta;
        c->embed_b = b[1] / eta;
        c->head_b = b[2] / eta;
        c->compute_f = c->layer_f + c->embed_f + c->head_f;
        c->compute_b = c->layer_b + c->embed_b + c->head_b;
        c->optimizer = (opt[0] + opt[1] + opt[2]) / eta;
        c->gemm_f /= eta;
        c->gemm_b /= eta;
        c->attention_f /= eta;
        c->attention_b /= eta;
        for (int k = 0; k < OP_KIND_COUNT; k++) {
            c->kind_f[k] /= eta;
            c->kind_b[k] /= eta;
            c->kind_opt[k] /= eta;
        }
        int rc = step_stage_comm(&sr->cx, w, dev, s, o, c);
        if (rc)
            return rc;
    }
    /* the concurrent iteration times every send where it runs (step_des.c) */
    return o->concurrent ? 0 : step_pp_sends(&sr->cx, w, sr->c);
}

/* replicas: the nominal one and every one holding a slower GPU; records the
 * slowest GPU in out */
static int run_replicas(step_run *sr, const workload *w, const step_options *o,
                        step_profile *out)
{
    const parallel_config *p = &w->par;
    unsigned P = p->pp;
    sr->runs = calloc(p->dp + 1, sizeof *sr->runs);
    if (!sr->runs)
        return step_no_memory(sr->cx.err);
    out->slowest_speed = 1;
    out->slowest_gpu = UINT32_MAX;
    for (unsigned d = 0; d <= p->dp; d++) {
        double *speed = malloc(P * sizeof *speed);
        if (!speed)
            return step_no_memory(sr->cx.err);
        int slower = 0;
        for (unsigned s = 0; s < P; s++) {
            speed[s] = 1;
            for (unsigned cc = 0; d < p->dp && cc < p->cp; cc++)
                for (unsigned t = 0; t < p->tp; t++) {
                    uint32_t id = step_gpu(p, s, d, cc, t);
                    double x = o->gpu_speed && id < o->n_gpu_speed ? o->gpu_speed[id] : 1;
                    if (x < speed[s])
                        speed[s] = x;
                    if (x < out->slowest_speed) {
                        out->slowest_speed = x;
                        out->slowest_gpu = id;
                    }
                }
            slower |= speed[s] < 1;
        }
        if (d < p->dp && !slower) { /* nominal: simulated once, as the last run */
            free(speed);
            continue;
        }
        replica_run *rr = &sr->runs[sr->n_runs++];
        rr->speed = speed;
        int rc = run_replica(w, sr->c, rr, sr->cx.err);
        if (rc)
            return rc;
    }
    return 0;
}

/* Stage s's end and breakdown from when its work ends (tm: from the
 * reduction chains below, or from the concurrent iteration, step_des.c):
 * the all-gather hides behind the first micro-batch's forward through all
 * of the stage's chunks (overlap_param_gather); the SMs the overlapped
 * reduction and gather take from compute delay the last backward; then the
 * optimizer. Records the slowest replica's breakdown (all but the bubble)
 * and the nominal replicas' wait; returns the stage's end. */
double step_stage_finish(step_run *sr, const workload *w, const compute_device *dev,
                         const step_options *o, unsigned s, const stage_timing *tm,
                         step_profile *out)
{
    const stage_costs *c = sr->c;
    double gather_exposed = o->overlap_param_gather
                                ? fmax(0, tm->gather - (c[s].compute_f + c[s].tp_f))
                                : tm->gather;
    sr->gather_exposed[s] = gather_exposed;
    double smx = dp_sm_cost(sr, w, dev, s, 0, tm->window, &out->sm_contention_unpriced) +
                 dp_sm_cost(sr, w, dev, s, 1, tm->gather - gather_exposed,
                            &out->sm_contention_unpriced);
    /* the concurrent iteration may have fed the reduction's SMs into the
     * schedule (step_sm.c): already in the tasks' ends, charged to DP */
    sr->dp_smx[s] = smx + tm->sm_fed;
    double end = fmax(tm->dp_end, tm->bwd_end + smx) + c[s].optimizer + gather_exposed;
    step_stage *ss = &out->stage[s];
    ss->end_s = end;
    double m = w->microbatches, sl = 1 / tm->slow_speed;
    ss->part_s[STEP_COMPUTE] =
        m * ((c[s].compute_f + c[s].compute_b) * sl + c[s].smx_f + c[s].smx_b);
    /* with TP, CP or EP flows on the concurrent net, what contention added
     * to them is theirs (step_stagecoll.c), taken from the pipeline's
     * lengthening that PP is otherwise charged with */
    const double *added = tm->coll_added;
    memcpy(&sr->coll_added[(size_t)s * STEP_SC_KINDS], added, sizeof tm->coll_added);
    ss->part_s[STEP_TP] = m * (c[s].tp_f + c[s].tp_b) + added[STEP_SC_TP];
    ss->part_s[STEP_CP] = m * (c[s].cp_f + c[s].cp_b) + added[STEP_SC_CP];
    ss->part_s[STEP_EP] = m * (c[s].ep_f + c[s].ep_b) + added[STEP_SC_EP];
    /* DP: what the reduction adds after the stage's last task, the
     * compute its kernels' SMs slowed (smx) included */
    ss->part_s[STEP_DP] = fmax(0, end - c[s].optimizer - tm->last_task) + tm->sm_fed;
    ss->part_s[STEP_OPTIMIZER] = c[s].optimizer;
    /* no bucket (no DP traffic): the DP part, if any, starts after the last task */
    ss->dp_start_s = fmin(tm->dp_start, end - c[s].optimizer - ss->part_s[STEP_DP]);
    /* PP: what the transfers add to the schedule; bubble: the rest of the
     * stage's idle time up to the iteration's end (step_finish_profile) */
    ss->part_s[STEP_PP] =
        fmax(0, tm->pp_added - added[STEP_SC_TP] - added[STEP_SC_CP] - added[STEP_SC_EP] -
                    tm->sm_fed);
    if (tm->all_ready - tm->nominal_ready > out->wait_s)
        out->wait_s = tm->all_ready - tm->nominal_ready;
    return end;
}

/* each stage: the reduction of every chunk waits for every replica's
 * gradients and runs its buckets one after another at the time of a bucket
 * with every DP group at once. Returns the iteration time. */
static double stage_ends(step_run *sr, const workload *w, const compute_device *dev,
                         const step_options *o, step_profile *out)
{
    const stage_costs *c = sr->c;
    const replica_run *runs = sr->runs, *nominal = &runs[sr->n_runs - 1];
    unsigned P = w->par.pp, v = w->par.vpp ? w->par.vpp : 1, n_runs = sr->n_runs;
    double iteration = 0;
    for (unsigned s = 0; s < P; s++) {
        stage_timing tm = {.dp_start = INFINITY};
        double busy_end = 0;
        for (unsigned ch = 0; ch < v; ch++)
            for (unsigned r = 0; r < n_runs; r++)
                busy_end = fmax(busy_end, runs[r].sched.chunk_backward_end_s[ch * P + s]);
        for (unsigned ch = 0; ch < v; ch++) {
            unsigned j = ch * P + s;
            double last_end = 0, last_len = 0;
            for (unsigned r = 0; r < n_runs; r++) {
                double e = runs[r].sched.chunk_backward_end_s[j];
                if (e > last_end) {
                    last_end = e;
                    last_len = step_chunk_time(w, c, s, ch, 1 / runs[r].speed[s], 1);
                }
            }
            tm.dp_end = fmax(tm.dp_end, reduce_end(o, last_end, last_len, &sr->dc[j], busy_end,
                                                   &tm.window, &tm.dp_start));
            tm.bwd_end = fmax(tm.bwd_end, last_end);
            tm.nominal_ready = fmax(tm.nominal_ready, nominal->sched.chunk_backward_end_s[j]);
            tm.all_ready = fmax(tm.all_ready, last_end);
            tm.gather += sr->dc[j].buckets * sr->dc[j].gather_bucket_s;
        }
        /* the breakdown of the slowest replica's stage */
        const replica_run *slow = nominal;
        for (unsigned r = 0; r < n_runs; r++)
            if (runs[r].speed[s] < slow->speed[s])
                slow = &runs[r];
        tm.slow_speed = slow->speed[s];
        for (unsigned ch = 0; ch < v; ch++)
            tm.last_task = fmax(tm.last_task, slow->sched.chunk_backward_end_s[ch * P + s]);
        tm.pp_added = slow->sched.iteration_s - slow->ideal.iteration_s;
        iteration = fmax(iteration, step_stage_finish(sr, w, dev, o, s, &tm, out));
    }
    return iteration;
}

static void step_run_free(step_run *sr)
{
    for (unsigned r = 0; sr->runs && r < sr->n_runs; r++) {
        free(sr->runs[r].speed);
        sched_result_free(&sr->runs[r].sched);
        sched_result_free(&sr->runs[r].ideal);
    }
    free(sr->runs);
    free(sr->cx.scratch);
    free(sr->cx.touched);
    free(sr->c);
    free(sr->dc);
    free(sr->gather_exposed);
    free(sr->dp_smx);
    free(sr->coll_added);
    free(sr->gantt);
}

int step_simulate(const workload *w, const compute_device *dev, fabric *f,
                  const step_options *o, step_profile *out, sim_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = check_inputs(w, f, o, err);
    if (rc)
        return rc;
    unsigned P = w->par.pp, v = w->par.vpp ? w->par.vpp : 1;
    size_t n_links = (size_t)f->g.n_links + 1;
    out->n_links = f->g.n_links;
    out->n_stages = P;
    out->link_bytes = calloc(n_links, sizeof *out->link_bytes);
    out->stage = calloc(P, sizeof *out->stage);
    step_run sr = {.cx = {.f = f, .analytic = o->analytic, .link_bytes = out->link_bytes,
                          .scratch = calloc(n_links, sizeof(double)),
                          .touched = malloc(n_links * sizeof(uint32_t)), .err = err},
                   .c = calloc(P, sizeof(stage_costs)),
                   .dc = calloc((size_t)P * v, sizeof(dp_chain)),
                   .gather_exposed = calloc(P, sizeof(double)),
                   .dp_smx = calloc(P, sizeof(double)),
                   .coll_added = calloc((size_t)P * STEP_SC_KINDS, sizeof(double))};
    if (!out->link_bytes || !out->stage || !sr.cx.scratch || !sr.cx.touched || !sr.c ||
        !sr.dc || !sr.gather_exposed || !sr.dp_smx || !sr.coll_added)
        rc = step_no_memory(err);
    if (!rc)
        rc = price_stages(&sr, w, dev, o);
    if (!rc)
        rc = dp_buckets(&sr, w, o);
    if (!rc)
        rc = run_replicas(&sr, w, o, out);
    double iteration = 0;
    if (!rc && o->concurrent) {
        /* the priced collectives' net goes before the iteration's own: they
         * do not add up in the peak (a segment's nc_simulate makes it anew) */
        nc_sim_cache_trim(f->nc.sim_cache);
        rc = step_des_run(&sr, w, dev, o, out, &iteration);
    }
    else if (!rc)
        iteration = stage_ends(&sr, w, dev, o, out);
    /* the priced collectives' net (tens of MB at 100K GPUs) goes before the
     * profile's per-link arrays are made: they do not add up in the peak */
    nc_sim_cache_trim(f->nc.sim_cache);
    sim_give_back_freed(); /* its many small blocks too, not only the large ones */
    if (!rc)
        rc = step_finish_profile(&sr, w, dev, f, iteration, out);
    if (!rc)
        workload_kind_bytes(w, out->comm_bytes);
    if (rc)
        step_profile_free(out);
    step_run_free(&sr);
    return rc;
}
