/* serving_fetch.c - cached KV fetched from another replica (serving.h,
 * kv_remote SERVE_KV_REMOTE_FETCH).
 *
 * A request routed to replica r (pool 0: the whole fleet, or the prefill
 * pool) looks up the blocks of its context each replica of the pool holds
 * (serve_prefix_cached_blocks: its session's cached context, else its
 * longest cached prefix chain). When some replica j holds more than r
 * (the most; ties to a replica in r's node, then the lowest index), the
 * difference, D = (b_j - b_r) blocks of B tokens, is either fetched or
 * recomputed, whichever the estimate finds cheaper:
 *     fetch      latency + D B k / (tp x rate)   (k: KV bytes per token of
 *                a replica, all its GPUs; tp GPU pairs; the scale-up link
 *                inside a node, else the inter-node link; rates effective)
 *     recompute  the iteration time of one prefill chunk of D B tokens
 *                after b_r B cached, alone on the replica (serve_iteration_s)
 * Both estimates ignore queueing and the other transfers; a tie recomputes.
 * A fetch pins the chain on j until the KV has arrived, moves over j's
 * outgoing and r's incoming link of its kind beside every other KV
 * transfer in flight (serving_kvflow.c: max-min fair sharing), and the
 * request joins r's queue when the KV arrives: at its first admission it
 * pins r's own cached chain as any request does and starts with b_j B
 * tokens computed (its own blocks past r's chain), prefilling the rest.
 * Alone on an idle fleet its TTFT is the fetch time plus that prefill.
 *
 * Not modelled: overlapping the fetch with the queue (the request waits
 * for its KV, then queues), holding the fetched KV on r before admission
 * (its blocks are taken at admission, as a pool's transferred KV is), and
 * r's own part of the chain being evicted between the decision and the
 * admission (the request then holds the whole context as its own blocks).
 */
#include <math.h>
#include <string.h>

#include "event_kinds.h"
#include "serving_internal.h"

static const char *const remote_names[SERVE_KV_REMOTE_COUNT] = {"off", "fetch"};

const char *serve_kv_remote_name(int k)
{
    return k >= 0 && k < SERVE_KV_REMOTE_COUNT ? remote_names[k] : "?";
}

int serve_kv_remote_parse(const char *name, int *out)
{
    for (int i = 0; i < SERVE_KV_REMOTE_COUNT; i++)
        if (name && strcmp(name, remote_names[i]) == 0) {
            *out = i;
            return 0;
        }
    return -1;
}

static int bad(sim_error *err, const char *what, double value, const char *allowed)
{
    return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "serving: %s %g: %s", what, value, allowed);
}

/* pool 0's replicas and their tp */
static void pool0(const serve_config *c, double *n, double *tp)
{
    *n = c->prefill_replicas ? c->prefill_replicas : c->replicas;
    *tp = c->prefill_replicas ? c->prefill_tp : c->tp;
}

int serve_fetch_check(const serve_config *c, sim_error *err)
{
    if (c->kv_remote < 0 || c->kv_remote >= SERVE_KV_REMOTE_COUNT)
        return bad(err, "KV remote", c->kv_remote, "must be off (0) or fetch (1)");
    if (c->kv_remote == SERVE_KV_REMOTE_OFF)
        return 0;
    if (!c->prefix_prompts && !(serve_has_sessions(c) && c->session_cache))
        return bad(err, "KV remote", c->kv_remote, "fetch needs something cached to fetch: "
                                                   "<prefix>, or <sessions> with cache on");
    if (c->prefill_replicas && c->kv_contention != SERVE_KV_SHARED)
        return bad(err, "KV contention", c->kv_contention, "remote fetch shares the replicas' "
                                                           "links: contention must be shared");
    double n, tp;
    pool0(c, &n, &tp);
    if (n < 2)
        return 0;
    double node = c->node_gpus > 1 ? c->node_gpus : 1;
    int intra = c->node_gpus > 1 && tp < node;               /* two replicas in a node */
    int inter = !(c->node_gpus > 1) || floor((n * tp - 1) / node) > 0; /* or in two */
    if (intra && (!(c->kv_intra_bytes_per_s > 0) || !isfinite(c->kv_intra_bytes_per_s) ||
                  !(c->kv_intra_latency_s >= 0) || !isfinite(c->kv_intra_latency_s)))
        return bad(err, "KV fetch rate inside a node", c->kv_intra_bytes_per_s,
                   "replicas sharing a node need the scale-up link (rate > 0, finite, "
                   "latency >= 0)");
    if (inter && (!(c->kv_inter_bytes_per_s > 0) || !isfinite(c->kv_inter_bytes_per_s) ||
                  !(c->kv_inter_latency_s >= 0) || !isfinite(c->kv_inter_latency_s)))
        return bad(err, "KV fetch rate between nodes", c->kv_inter_bytes_per_s,
                   "replicas in different nodes need an inter-node link (rate > 0, finite, "
                   "latency >= 0)");
    return 0;
}

/* do replicas a and b of pool 0 share a node? */
static int same_node(const serve_config *c, uint32_t a, uint32_t b)
{
    if (!(c->node_gpus > 1))
        return 0;
    double n, tp;
    pool0(c, &n, &tp);
    return floor(a * tp / c->node_gpus) == floor(b * tp / c->node_gpus);
}

int serve_fetch_start(serve_sim *s, uint32_t id, uint32_t r)
{
    const serve_config *c = s->c;
    serve_req *q = &s->req[id];
    serve_req_ext *x = serve_ext(s, q);
    x->fetch_tokens = 0;
    x->fetch_from = x->fetch_entry = SERVE_NONE;
    if (!x->prefix_depth && x->session == SERVE_NONE)
        return 0;
    uint32_t n = c->prefill_replicas ? c->prefill_replicas : s->n_rep;
    double here = serve_prefix_cached_blocks(s, &s->rep[r], x), most = here;
    uint32_t from = SERVE_NONE;
    for (uint32_t j = 0; j < n; j++) {
        if (j == r)
            continue;
        double b = serve_prefix_cached_blocks(s, &s->rep[j], x);
        if (b > most || (b == most && from != SERVE_NONE && b > here &&
                         same_node(c, j, r) && !same_node(c, from, r))) {
            most = b;
            from = j;
        }
    }
    if (from == SERVE_NONE)
        return 0;
    double block = c->kv_block_tokens, tokens = (most - here) * block;
    double bytes = tokens * s->fetch_kv_bytes_per_token;
    double n_pool, tp;
    pool0(c, &n_pool, &tp);
    int same = same_node(c, from, r);
    double cap = tp * (same ? c->kv_intra_bytes_per_s : c->kv_inter_bytes_per_s);
    double latency = same ? c->kv_intra_latency_s : c->kv_inter_latency_s;
    double context = here * block;
    serve_batch b = {1, &tokens, &context, 0, 0, 0};
    double recompute = serve_iteration_s(s->rep[r].cfg, &b);
    if (!(latency + bytes / cap < recompute)) {
        s->out->fetches_declined++;
        return 0;
    }
    x->fetch_from = from;
    x->fetch_entry = serve_prefix_pin_cached(s, &s->rep[from], x);
    x->fetch_tokens = (uint32_t)(most * block);
    x->fetch_sent_s = sim_now(s->eng);
    q->state = REQ_TRANSFER;
    s->n_transferring++;
    s->out->fetches++;
    s->out->fetch_tokens += tokens;
    s->out->fetch_bytes += bytes;
    return serve_kvnet_send(s, id, from, r, !same, bytes, cap, latency, 1) ? -1 : 1;
}

void serve_fetch_arrive(sim_engine *eng, void *ctx, uint64_t data)
{
    serve_sim *s = ctx;
    uint32_t id = (uint32_t)data;
    serve_req *q = &s->req[id];
    serve_req_ext *x = serve_ext(s, q);
    serve_replica *rp = &s->rep[q->replica];
    serve_prefix_unpin(&s->rep[x->fetch_from], x->fetch_entry);
    x->fetch_entry = SERVE_NONE;
    double t = sim_now(eng) - x->fetch_sent_s;
    s->fetch_sum_s += t;
    if (t > s->out->fetch_max_s)
        s->out->fetch_max_s = t;
    q->state = REQ_WAITING;
    if (serve_wait_reserve(rp)) {
        serve_fail(s);
        return;
    }
    serve_series_note(s);
    s->n_transferring--;
    s->n_queued++;
    rp->wait[(rp->wait_head + rp->wait_n) % rp->wait_cap] = id;
    rp->wait_n++;
    if (!rp->busy) {
        rp->busy = 1;
        serve_start_later(s, q->replica);
    }
}

void serve_fetch_results(serve_sim *s, serve_result *o)
{
    o->fetch_mean_s = o->fetches ? s->fetch_sum_s / (double)o->fetches : 0;
}
