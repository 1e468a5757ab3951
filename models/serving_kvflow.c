/* serving_kvflow.c - KV transfers sharing the replicas' links
 * (serving.h: kv_contention SERVE_KV_SHARED, the default).
 *
 * Every replica has an outgoing and an incoming link of each kind (the
 * GPU's scale-up link inside a node, the inter-node link between nodes) of
 * capacity tp x rate (its tp GPUs, each rate per direction, effective): a
 * prefill replica sends on its outgoing links, a decode replica receives on
 * its incoming ones, and with remote fetch (serving_fetch.c) a replica
 * sends cached KV on its outgoing and receives it on its incoming links.
 * A transfer in flight uses the sender's outgoing and the receiver's
 * incoming link of its kind and may take at most its own paths x
 * rate (paths = min(prefill tp, decode tp): what it took alone before).
 * The transfers in flight share the links max-min fairly (progressive
 * filling, Bertsekas and Gallager, Data Networks 6.5.2): every unfrozen
 * transfer's share is min(its cap, each of its links' unused capacity /
 * its unfrozen transfers); those at the smallest share are frozen at it,
 * their rate taken from their links, and so on. The rates are recomputed
 * when a transfer starts and when its last byte leaves (events at each);
 * a transfer whose rate changed is rescheduled from the bytes it has
 * left. Its KV arrives a latency after its last byte.
 *
 * Alone, a transfer gets exactly its cap (the links hold at least that)
 * and arrives at start + (latency + bytes / (paths x rate)): the figure
 * of the model without contention, bit for bit. Transfers that share no
 * link do not interact: a link's unused capacity changes only by its own
 * transfers' rates, and the transfers are kept in the order they started.
 * With a fabric (serve_config.fabric) serve_kvnet_send hands every transfer
 * to serving_kvfabric.c instead, which routes it through the fabric.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "event_kinds.h"
#include "serving_internal.h"

static const char *const contention_names[SERVE_KV_CONTENTION_COUNT] = {"shared", "queued"};

const char *serve_kv_contention_name(int k)
{
    return k >= 0 && k < SERVE_KV_CONTENTION_COUNT ? contention_names[k] : "?";
}

int serve_kv_contention_parse(const char *name, int *out)
{
    for (int i = 0; i < SERVE_KV_CONTENTION_COUNT; i++)
        if (name && strcmp(name, contention_names[i]) == 0) {
            *out = i;
            return 0;
        }
    return -1;
}

typedef struct kv_flow {
    uint32_t id;         /* the request */
    uint32_t link[2];    /* the sender's outgoing and the receiver's incoming link:
                            replica x 4 + direction (0 out, 1 in) x 2 + inter */
    int fetch;           /* a remote fetch (serving_fetch.c), else a pool's transfer */
    double cap;          /* paths x rate: its rate alone */
    double latency_s;
    double rate;         /* now; 0 before the first sharing */
    double seg_t, seg_left; /* since seg_t at rate, seg_left bytes were left */
    double sent_s;       /* the end of its prefill */
    double alone_s;      /* its time alone: latency + bytes / cap */
    sim_event_id ev;     /* its last byte leaving */
    int frozen;
    double share;
} kv_flow;

struct serve_kvnet {
    kv_flow *f;          /* in flight, in the order they started */
    uint32_t n, cap;
    double *link_cap, *link_left; /* [n_rep x 4] */
    uint32_t *link_n;
};

int serve_kvnet_init(serve_sim *s)
{
    const serve_config *c = s->c;
    if ((!c->prefill_replicas || c->kv_contention != SERVE_KV_SHARED) && !s->fetch_on)
        return 0;
    serve_kvnet *k = calloc(1, sizeof *k);
    if (!k)
        return -1;
    s->net = k;
    size_t links = (size_t)s->n_rep * 4;
    k->link_cap = malloc(links * sizeof *k->link_cap);
    k->link_left = malloc(links * sizeof *k->link_left);
    k->link_n = malloc(links * sizeof *k->link_n);
    if (!k->link_cap || !k->link_left || !k->link_n)
        return -1;
    for (uint32_t r = 0; r < s->n_rep; r++) {
        double tp = r < c->prefill_replicas ? c->prefill_tp : c->tp;
        for (uint32_t dir = 0; dir < 2; dir++) { /* each direction on its own */
            k->link_cap[4 * r + 2 * dir] = tp * c->kv_intra_bytes_per_s;
            k->link_cap[4 * r + 2 * dir + 1] = tp * c->kv_inter_bytes_per_s;
        }
    }
    return 0;
}

void serve_kvnet_free(serve_sim *s)
{
    serve_kvfab_free(s);
    if (!s->net)
        return;
    free(s->net->f);
    free(s->net->link_cap);
    free(s->net->link_left);
    free(s->net->link_n);
    free(s->net);
    s->net = NULL;
}

static double min3(double a, double b, double c)
{
    double m = a < b ? a : b;
    return m < c ? m : c;
}

static void on_drained(sim_engine *eng, void *ctx, uint64_t data);

/* Max-min rates of the transfers in flight; reschedule those whose rate
 * changed. 0, or -1 when the engine cannot schedule. */
static int reshare(serve_sim *s)
{
    serve_kvnet *k = s->net;
    double now = sim_now(s->eng);
    for (uint32_t i = 0; i < k->n; i++) {
        kv_flow *f = &k->f[i];
        f->frozen = 0;
        for (int e = 0; e < 2; e++) {
            k->link_left[f->link[e]] = k->link_cap[f->link[e]];
            k->link_n[f->link[e]] = 0;
        }
    }
    for (uint32_t i = 0; i < k->n; i++)
        for (int e = 0; e < 2; e++)
            k->link_n[k->f[i].link[e]]++;
    /* each round freezes at least one transfer: at most n rounds */
    for (uint32_t round = 0, left = k->n; round < k->n && left; round++) {
        double m = INFINITY;
        for (uint32_t i = 0; i < k->n; i++) {
            kv_flow *f = &k->f[i];
            if (f->frozen)
                continue;
            uint32_t a = f->link[0], b = f->link[1];
            f->share = min3(f->cap, k->link_left[a] / k->link_n[a],
                            k->link_left[b] / k->link_n[b]);
            if (f->share < m)
                m = f->share;
        }
        for (uint32_t i = 0; i < k->n; i++) {
            kv_flow *f = &k->f[i];
            if (f->frozen || f->share > m)
                continue;
            f->frozen = 1;
            left--;
            double rate = f->share > 0 ? f->share : 0;
            for (int e = 0; e < 2; e++) {
                k->link_left[f->link[e]] -= rate;
                k->link_n[f->link[e]]--;
            }
            if (rate == f->rate)
                continue;
            if (f->rate > 0) { /* rebase: the bytes it has left now */
                f->seg_left -= f->rate * (now - f->seg_t);
                if (f->seg_left < 0)
                    f->seg_left = 0;
                f->seg_t = now;
                sim_cancel(s->eng, f->ev);
            }
            f->rate = rate;
            if (!(rate > 0))
                return -1; /* a link of capacity 0: refused by the configuration check */
            f->ev = sim_schedule_at(s->eng, f->seg_t + f->seg_left / rate, 1,
                                    KIND_SERVE_TRANSFER, on_drained, s, f->id);
            if (!f->ev)
                return -1;
        }
    }
    return 0;
}

/* request id's last byte has left: it arrives a latency later */
static void on_drained(sim_engine *eng, void *ctx, uint64_t data)
{
    serve_sim *s = ctx;
    serve_kvnet *k = s->net;
    uint32_t i = 0;
    while (i < k->n && k->f[i].id != (uint32_t)data)
        i++;
    if (i == k->n) { /* cannot happen: a rescheduled transfer's old event is cancelled */
        s->failed = 1;
        sim_stop(eng);
        return;
    }
    kv_flow f = k->f[i];
    memmove(&k->f[i], &k->f[i + 1], (k->n - i - 1) * sizeof *k->f);
    k->n--;
    double arrive = f.seg_t + (f.latency_s + f.seg_left / f.rate);
    if ((!f.fetch && serve_disagg_record(s, arrive - f.sent_s, f.alone_s, f.alone_s)) ||
        reshare(s) ||
        !sim_schedule_at(eng, arrive, 1, KIND_SERVE_TRANSFER,
                         f.fetch ? serve_fetch_arrive : serve_disagg_arrive, s, f.id)) {
        s->failed = 1;
        sim_stop(eng);
    }
}

int serve_kvnet_send(serve_sim *s, uint32_t id, uint32_t from, uint32_t to, int inter,
                     double bytes, double cap, double latency_s, int fetch)
{
    serve_kvnet *k = s->net;
    if (s->fab) /* the fabric's routes (serving_kvfabric.c) */
        return serve_kvfab_send(s, id, from, to, bytes, cap, latency_s, fetch);
    if (k->n == k->cap) {
        uint32_t cap_n = k->cap ? 2 * k->cap : 64;
        kv_flow *x = realloc(k->f, cap_n * sizeof *x);
        if (!x)
            return -1;
        k->f = x;
        k->cap = cap_n;
    }
    double now = sim_now(s->eng);
    k->f[k->n++] = (kv_flow){.id = id, .link = {4 * from + (uint32_t)inter,
                                               4 * to + 2 + (uint32_t)inter},
                             .fetch = fetch, .cap = cap, .latency_s = latency_s, .seg_t = now,
                             .seg_left = bytes, .sent_s = now,
                             .alone_s = latency_s + bytes / cap};
    return reshare(s);
}
