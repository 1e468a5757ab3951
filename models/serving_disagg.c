/* serving_disagg.c - disaggregated prefill and decode (serving.h,
 * prefill_replicas > 0): the checks of the prefix and pool settings, the
 * prefill pool's configuration, and the KV transfer from a prefill replica
 * to a decode replica.
 *
 * Placement: the prefill pool's replicas take GPUs 0 .. Rp tp_p - 1 in
 * order, the decode pool's the rest; a replica is in the node of its first
 * GPU (node = GPU / node_gpus). A transfer of K = tokens x kv bytes per
 * token (serve_memory of the prefill pool) moves over n = min(tp_p, tp_d)
 * GPU-to-GPU paths at once:
 *     t = latency + K / (n x rate)
 * rate and latency the scale-up link's when both replicas share a node,
 * the inter-node link's otherwise (rates effective: the catalog's
 * efficiency applied by the caller). Shared (the default): the transfers in
 * flight share the senders' and receivers' links (serving_kvflow.c).
 * Queued: a prefill replica's transfers leave one after another (its link
 * is busy until the previous one is done), the decode side unlimited. With
 * a fabric the transfers cross its routes instead (serving_kvfabric.c;
 * shared only). The fabric's other traffic is not modelled.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "event_kinds.h"
#include "serving_internal.h"

double serve_gpus(const serve_config *c)
{
    double g = (double)c->replicas * c->tp;
    if (c->prefill_replicas)
        g += (double)c->prefill_replicas * c->prefill_tp;
    return g;
}

serve_config serve_prefill_config(const serve_config *c)
{
    serve_config p = *c;
    if (c->prefill_replicas) {
        p.tp = c->prefill_tp;
        p.replicas = c->prefill_replicas;
        p.prefill_replicas = 0;
    }
    return p;
}

static int bad(sim_error *err, const char *what, double value, const char *allowed)
{
    return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "serving: %s %g: %s", what, value, allowed);
}

/* does some prefill-decode pair share a node, or sit in two? */
static void pairs(const serve_config *c, int *intra, int *inter)
{
    double first_decode = (double)c->prefill_replicas * c->prefill_tp;
    double n = c->node_gpus;
    *intra = n > 1 && fmod(first_decode, n) != 0;
    *inter = !(n > 1) || floor((serve_gpus(c) - 1) / n) > 0;
}

int serve_extras_check(const serve_config *c, sim_error *err)
{
    if (c->prefix_prompts) {
        if (c->prefix_prompts > 1000000)
            return bad(err, "prefix prompts", c->prefix_prompts, "must be from 1 to 1e6");
        if (!(c->prefix_tokens >= 1 && c->prefix_tokens <= 1e7) ||
            c->prefix_tokens != floor(c->prefix_tokens))
            return bad(err, "prefix tokens", c->prefix_tokens, "must be whole, from 1 to 1e7");
        if (!(c->prefix_share >= 0 && c->prefix_share <= 1))
            return bad(err, "prefix share", c->prefix_share, "must be in [0, 1]");
        if (!(c->prefix_zipf >= 0 && c->prefix_zipf <= 10))
            return bad(err, "prefix zipf", c->prefix_zipf, "must be from 0 to 10");
        if (c->prefix_levels > SERVE_PREFIX_LEVELS)
            return bad(err, "prefix levels", c->prefix_levels, "must be from 1 to 4");
        double nodes = c->prefix_prompts, tokens = c->prefix_tokens;
        for (unsigned l = 1; l < c->prefix_levels; l++) {
            const struct serve_prefix_level *v = &c->prefix_inner[l - 1];
            if (!(v->prompts >= 1 && v->prompts <= 1000000))
                return bad(err, "inner prefix prompts", v->prompts, "must be from 1 to 1e6");
            if (!(v->tokens >= 1 && v->tokens <= 1e7) || v->tokens != floor(v->tokens))
                return bad(err, "inner prefix tokens", v->tokens, "must be whole, from 1 to 1e7");
            if (!(v->share >= 0 && v->share <= 1))
                return bad(err, "inner prefix share", v->share, "must be in [0, 1]");
            if (!(v->zipf >= 0 && v->zipf <= 10))
                return bad(err, "inner prefix zipf", v->zipf, "must be from 0 to 10");
            nodes *= v->prompts;
            tokens += v->tokens;
        }
        if (!(nodes <= 9e15)) /* node paths exact in 64 bits (and in a double) */
            return bad(err, "prefix tree nodes", nodes, "the levels' prompts multiply to at "
                                                        "most 9e15");
        if (!(tokens <= 1e7))
            return bad(err, "prefix chain tokens", tokens, "must be at most 1e7");
    }
    if (!c->prefill_replicas)
        return 0;
    if (c->prefill_replicas > 1000000)
        return bad(err, "prefill replicas", c->prefill_replicas, "must be from 1 to 1e6");
    if (c->kv_contention < 0 || c->kv_contention >= SERVE_KV_CONTENTION_COUNT)
        return bad(err, "KV contention", c->kv_contention, "must be shared (0) or queued (1)");
    if (c->fabric && c->kv_contention != SERVE_KV_SHARED)
        return bad(err, "KV contention", c->kv_contention, "over a fabric the transfers share "
                   "its links: shared (0) only");
    int intra, inter;
    pairs(c, &intra, &inter);
    if (intra && (!(c->kv_intra_bytes_per_s > 0) || !isfinite(c->kv_intra_bytes_per_s) ||
                  !(c->kv_intra_latency_s >= 0) || !isfinite(c->kv_intra_latency_s)))
        return bad(err, "KV transfer rate inside a node", c->kv_intra_bytes_per_s,
                   "pools sharing a node need the scale-up link (rate > 0, finite, latency >= 0)");
    if (inter && (!(c->kv_inter_bytes_per_s > 0) || !isfinite(c->kv_inter_bytes_per_s) ||
                  !(c->kv_inter_latency_s >= 0) || !isfinite(c->kv_inter_latency_s)))
        return bad(err, "KV transfer rate between nodes", c->kv_inter_bytes_per_s,
                   "pools in different nodes need an inter-node link (rate > 0, finite, "
                   "latency >= 0)");
    serve_config p = serve_prefill_config(c);
    return serve_config_check(&p, err);
}

/* the transfer of request id has arrived at its decode replica */
void serve_disagg_arrive(sim_engine *eng, void *ctx, uint64_t data)
{
    serve_sim *s = ctx;
    uint32_t id = (uint32_t)data;
    serve_req *q = &s->req[id];
    serve_replica *rp = &s->rep[q->replica];
    q->first_token_s = sim_now(eng); /* the first token reaches the decode side */
    q->state = REQ_WAITING;
    if (serve_wait_reserve(rp)) {
        s->failed = 1;
        sim_stop(eng);
        return;
    }
    serve_series_note(s);
    s->n_transferring--;
    s->xfer_in_flight--;
    s->n_queued++;
    rp->wait[(rp->wait_head + rp->wait_n) % rp->wait_cap] = id;
    rp->wait_n++;
    if (!rp->busy) {
        rp->busy = 1;
        serve_start_later(s, q->replica);
    }
}

int serve_disagg_send(serve_sim *s, uint32_t id)
{
    const serve_config *c = s->c;
    serve_req *q = &s->req[id];
    uint32_t pre = q->replica;
    serve_replica *pr = &s->rep[pre];
    serve_set_blocks(s, q, 0);
    serve_prefix_release(s, pr, q);
    s->outstanding[pre]--;
    uint32_t d = serve_route(s, id, 1);
    s->outstanding[d]++;
    serve_ext(s, q)->prefill_replica = pre;
    q->replica = d;
    q->state = REQ_TRANSFER;
    serve_series_note(s);
    s->n_running--;
    s->n_transferring++;
    double bytes = (double)q->kv_tokens * s->pre_kv_bytes_per_token;
    double node = c->node_gpus > 1 ? c->node_gpus : 1;
    double g_pre = (double)pre * c->prefill_tp;
    double g_dec = (double)c->prefill_replicas * c->prefill_tp + (double)(d - c->prefill_replicas) *
                                                                     c->tp;
    int same = c->node_gpus > 1 && floor(g_pre / node) == floor(g_dec / node);
    double paths = c->prefill_tp < c->tp ? c->prefill_tp : c->tp;
    s->xfer_bytes += bytes;
    if (++s->xfer_in_flight > s->xfer_in_flight_max)
        s->xfer_in_flight_max = s->xfer_in_flight;
    if (s->net) /* shared links (serving_kvflow.c) */
        return serve_kvnet_send(s, id, pre, d, !same, bytes,
                                paths * (same ? c->kv_intra_bytes_per_s : c->kv_inter_bytes_per_s),
                                same ? c->kv_intra_latency_s : c->kv_inter_latency_s, 0);
    double t = same ? c->kv_intra_latency_s + bytes / (paths * c->kv_intra_bytes_per_s)
                    : c->kv_inter_latency_s + bytes / (paths * c->kv_inter_bytes_per_s);
    double now = sim_now(s->eng), start = pr->link_free_s > now ? pr->link_free_s : now;
    pr->link_free_s = start + t;
    if (serve_disagg_record(s, start + t - now, t, t))
        return -1;
    sim_schedule_at(s->eng, start + t, 1, KIND_SERVE_TRANSFER, serve_disagg_arrive, s, id);
    return 0;
}

/* a - b, or 0 where the two differ by no more than the clock's rounding at
 * time `at` (a few units in the last place: a transfer alone arrives at
 * start + its time, and that sum minus start need not give its time back
 * to the last bit) */
static double beyond(double a, double b, double at)
{
    double d = a - b;
    return fabs(d) <= 8 * DBL_EPSILON * (fabs(at) + fabs(a)) ? 0 : d;
}

int serve_disagg_record(serve_sim *s, double seconds, double alone_s, double links_s)
{
    double now = sim_now(s->eng);
    s->xfer_route_s += beyond(alone_s, links_s, 0);
    s->xfer_shared_s += beyond(seconds, alone_s, now);
    if (s->n_xfer == s->cap_xfer) {
        uint64_t cap = s->cap_xfer ? 2 * s->cap_xfer : 1024;
        double *x = realloc(s->xfer_s, cap * sizeof *x);
        if (!x)
            return -1;
        s->xfer_s = x;
        s->cap_xfer = cap;
    }
    s->xfer_s[s->n_xfer++] = seconds;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void serve_disagg_results(serve_sim *s, serve_result *o)
{
    o->transfers = s->n_xfer;
    o->transfer_bytes = s->xfer_bytes;
    o->transfer_route_s = s->xfer_route_s;
    o->transfer_shared_s = s->xfer_shared_s;
    o->transfers_in_flight_max = s->xfer_in_flight_max;
    if (!s->n_xfer)
        return;
    double sum = 0;
    for (uint64_t i = 0; i < s->n_xfer; i++)
        sum += s->xfer_s[i];
    qsort(s->xfer_s, s->n_xfer, sizeof *s->xfer_s, cmp_double);
    uint64_t r50 = (uint64_t)ceil(0.5 * (double)s->n_xfer); /* nearest rank */
    uint64_t r99 = (uint64_t)ceil(0.99 * (double)s->n_xfer);
    o->transfer_mean_s = sum / (double)s->n_xfer;
    o->transfer_p50_s = s->xfer_s[(r50 ? r50 : 1) - 1];
    o->transfer_p99_s = s->xfer_s[(r99 ? r99 : 1) - 1];
    o->transfer_max_s = s->xfer_s[s->n_xfer - 1];
}
