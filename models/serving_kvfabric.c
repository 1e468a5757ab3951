/* serving_kvfabric.c - KV transfers over the scenario's fabric (serving.h:
 * serve_config.fabric set, and some transfer to make: disaggregated pools
 * under the shared contention model, or remote fetch).
 *
 * The fabric is built once a run from its description (fabric.h; the
 * topology, the scale-up domains, the router), for the fleet's GPUs: GPU g
 * is host g, so replica i of a pool sits on the hosts of its GPUs (the
 * prefill pool first, replica i on GPUs i x tp .. i x tp + tp - 1, then the
 * decode pool), a node's GPUs under one scale-up crossbar, its NIC ports
 * under the leaf (edge switch) the topology plugs them into. A transfer from
 * replica A (tp a) to replica B (tp b) moves over m = max(a, b) GPU-to-GPU
 * connections: connection k from A's GPU k mod a to B's GPU k mod b, each
 * routed by the fabric's router (topologies/routing.h: inside a node over
 * the crossbar, else NIC -> leaf -> ... -> leaf -> NIC, ECMP, adaptive or
 * spray as the fabric says; under adaptive routing each connection's
 * choice sees the connections routed before it, as netcoll's do) and
 * carrying 1/m of the bytes. The m routes
 * make one flow of the flow model (flow.h): weight 1/m on each link of each
 * route (weights add where routes meet), so a transfer's rate is one
 * number, its connections coupled as a ring's are (netcoll.h). Its rate
 * cap is min(a, b) x the rate of its kind (what it took alone on the
 * replicas' links: serving_kvflow.c), its latency the kind's step latency,
 * as there. The transfers in flight share every link max-min fairly
 * (progressive filling, flow.h; the fabric's incast and sharing curves
 * applied as the step tier applies them), so transfers crossing one leaf
 * uplink or one spine link contend there, which the replicas' links alone
 * never see. On a fabric whose routes are no narrower than the replicas'
 * links a transfer alone takes latency + bytes / (min(a, b) x rate), the
 * figure without the fabric. Cost: m routes (hop tables cached by the
 * router) per transfer, then the flow model's recomputations (flow.h).
 * For the report (serving.h serve_result.transfer_route_s, _shared_s) a
 * transfer also notes its time alone on its route: latency + bytes /
 * min(cap, min over its links of capacity / its summed weight there), the
 * rate the flow model gives a flow alone (one flow on a link: no incast or
 * sharing curve).
 */
#include <math.h>
#include <stdlib.h>

#include "fabric.h"
#include "flow.h"
#include "serving_internal.h"

struct serve_kvfab {
    fabric f;
    int built;
    flow_net *net;
    topo_usage *use;   /* one transfer's usages: m routes */
    size_t use_cap, route_max;
    struct kvfab_sent { double sent_s, alone_s, links_s; } *sent; /* per flow id: when it
                          started, its time alone on its route and on the replicas' links */
    uint32_t sent_cap;
    double *weight;    /* [n_links] zeros: one transfer's summed weights while it starts */
};

/* the first GPU (fabric host) and the tp of replica r */
static void replica_hosts(const serve_config *c, uint32_t r, uint32_t *first, uint32_t *tp)
{
    if (r < c->prefill_replicas) {
        *first = r * c->prefill_tp;
        *tp = c->prefill_tp;
    } else {
        *first = c->prefill_replicas * c->prefill_tp + (r - c->prefill_replicas) * c->tp;
        *tp = c->tp;
    }
}

static void on_delivered(void *ctx, uint32_t flow, uint64_t tag)
{
    serve_sim *s = ctx;
    serve_kvfab *k = s->fab;
    uint32_t id = (uint32_t)tag;
    int fetch = (int)(tag >> 32);
    const struct kvfab_sent *t = &k->sent[flow];
    if (!fetch && serve_disagg_record(s, sim_now(s->eng) - t->sent_s, t->alone_s, t->links_s)) {
        serve_fail(s);
        return;
    }
    (fetch ? serve_fetch_arrive : serve_disagg_arrive)(s->eng, s, id);
}

int serve_kvfab_init(serve_sim *s, sim_error *err)
{
    const serve_config *c = s->c;
    if (!c->fabric || !s->net)
        return 0;
    serve_kvfab *k = calloc(1, sizeof *k);
    if (!k)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "serving: out of memory");
    s->fab = k;
    fabric_config fc = *c->fabric;
    unsigned node = c->node_gpus > 1 ? c->node_gpus : 1;
    if ((fc.gpus_per_node > 1 ? fc.gpus_per_node : 1) != node)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "serving: the fabric has %u GPUs a "
                             "node, the KV transfers' placement %u", fc.gpus_per_node, node);
    fc.gpus = (unsigned)serve_gpus(c); /* the fleet's (a --size step's may differ) */
    sim_error e;
    sim_error_clear(&e);
    int rc = fabric_build(&fc, &k->f, &e);
    if (rc)
        return sim_error_set(err, rc, NULL, 0, "serving: the KV transfers' fabric for %u "
                             "GPUs: %s", fc.gpus, e.msg);
    k->built = 1;
    k->net = flow_net_create(s->eng, k->f.g.n_links, k->f.g.link_bytes_per_s, on_delivered, s);
    k->route_max = topo_route_max_usages(k->f.router);
    uint32_t tp_max = c->tp > c->prefill_tp ? c->tp : c->prefill_tp;
    k->use_cap = (size_t)tp_max * k->route_max;
    k->use = malloc(k->use_cap * sizeof *k->use);
    k->weight = calloc(k->f.g.n_links ? k->f.g.n_links : 1, sizeof *k->weight);
    if (!k->net || !k->use || !k->weight ||
        (k->f.link_curve && flow_net_set_incast(k->net, k->f.link_curve, k->f.link_injects)))
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "serving: out of memory");
    return 0;
}

void serve_kvfab_free(serve_sim *s)
{
    serve_kvfab *k = s->fab;
    if (!k)
        return;
    flow_net_destroy(k->net);
    if (k->built)
        fabric_free(&k->f);
    free(k->use);
    free(k->sent);
    free(k->weight);
    free(k);
    s->fab = NULL;
}

int serve_kvfab_send(serve_sim *s, uint32_t id, uint32_t from, uint32_t to, double bytes,
                     double cap, double latency_s, int fetch)
{
    serve_kvfab *k = s->fab;
    uint32_t a0, a, b0, b;
    replica_hosts(s->c, from, &a0, &a);
    replica_hosts(s->c, to, &b0, &b);
    uint32_t m = a > b ? a : b;
    size_t n = 0;
    const double *load = topo_router_uses_load(k->f.router) ? flow_net_link_load(k->net) : NULL;
    for (uint32_t i = 0; i < m; i++) {
        uint64_t key = (uint64_t)id << 8 ^ (uint64_t)i ^ (uint64_t)fetch << 40;
        long got = topo_route(k->f.router, a0 + i % a, b0 + i % b, key, load, k->use + n,
                              k->use_cap - n);
        if (got < 0)
            return -1; /* no memory for a hop table (every host of a built fabric connects) */
        for (long u = 0; u < got; u++)
            k->use[n + (size_t)u].weight /= m;
        if (load) /* the next connection's adaptive choice sees this one */
            flow_net_bias_load(k->net, k->use + n, (size_t)got, 1);
        n += (size_t)got;
    }
    /* alone on its route: its cap, or the narrowest link's capacity over
     * the transfer's summed weight on it (the flow model's bottleneck for
     * a flow alone) */
    double rate = cap;
    for (size_t u = 0; u < n; u++)
        k->weight[k->use[u].link] += k->use[u].weight;
    for (size_t u = 0; u < n; u++) {
        uint32_t l = k->use[u].link;
        if (k->weight[l] > 0 && k->f.g.link_bytes_per_s[l] / k->weight[l] < rate)
            rate = k->f.g.link_bytes_per_s[l] / k->weight[l];
    }
    for (size_t u = 0; u < n; u++)
        k->weight[k->use[u].link] = 0;
    uint32_t f = flow_start(k->net, k->use, n, bytes, cap, latency_s,
                            (uint64_t)id | (uint64_t)(fetch != 0) << 32);
    if (load)
        flow_net_bias_load(k->net, k->use, n, -1);
    if (f == UINT32_MAX)
        return -1;
    if (f >= k->sent_cap) {
        uint32_t grow = k->sent_cap ? 2 * k->sent_cap : 64;
        while (grow <= f)
            grow *= 2;
        struct kvfab_sent *x = realloc(k->sent, grow * sizeof *x);
        if (!x)
            return -1;
        k->sent = x;
        k->sent_cap = grow;
    }
    k->sent[f] = (struct kvfab_sent){sim_now(s->eng), latency_s + bytes / rate,
                                     latency_s + bytes / cap};
    return 0;
}
