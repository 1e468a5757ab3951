/* hubs_backbone.c - routes on the shared backbone and the flows' max-min
 * fair sharing of its links (hubs_backbone.h; docs/hubs.md "A shared
 * backbone"). The sharing is exact progressive filling (not the engine's
 * flow model: its flows are the fabric's, tied to a topology and to its
 * collective phases): at every arrival and completion the active flows'
 * rates are recomputed by raising them together until a link is full,
 * freezing the flows on it, and again over the rest; between events every
 * rate is constant, so each completion time is exact. */
#include "hubs_backbone.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

unsigned hubs_bb_node(const hubs_backbone *b, const char *name)
{
    for (unsigned i = 0; i < b->n_nodes; i++)
        if (!strcmp(b->node[i], name))
            return i;
    return UINT32_MAX;
}

int hubs_bb_route(const hubs_backbone *b, unsigned from, unsigned to, hubs_path *p)
{
    double dist[HUBS_BB_MAX_NODES];
    int done[HUBS_BB_MAX_NODES] = {0};
    unsigned via[HUBS_BB_MAX_NODES]; /* the directed link that reached the node */
    memset(p, 0, sizeof *p);
    if (from >= b->n_nodes || to >= b->n_nodes)
        return -1;
    for (unsigned i = 0; i < b->n_nodes; i++)
        dist[i] = INFINITY;
    dist[from] = 0;
    for (unsigned round = 0; round < b->n_nodes; round++) {
        unsigned u = UINT32_MAX;
        for (unsigned i = 0; i < b->n_nodes; i++)
            if (!done[i] && isfinite(dist[i]) && (u == UINT32_MAX || dist[i] < dist[u]))
                u = i;
        if (u == UINT32_MAX)
            break;
        done[u] = 1;
        for (unsigned l = 0; l < b->n_links; l++) {
            const hubs_link *k = &b->link[l];
            unsigned v = k->a == u ? k->b : k->b == u ? k->a : UINT32_MAX;
            if (v == UINT32_MAX || done[v] || !(dist[u] + k->rtt_s < dist[v]))
                continue;
            dist[v] = dist[u] + k->rtt_s;
            via[v] = 2 * l + (k->a == u ? 0u : 1u);
        }
    }
    if (!done[to])
        return -1;
    unsigned n = 0, back[HUBS_BB_MAX_NODES];
    for (unsigned v = to; v != from && n < b->n_nodes; n++) {
        back[n] = via[v];
        const hubs_link *k = &b->link[via[v] / 2];
        v = via[v] & 1 ? k->b : k->a; /* the link's tail */
    }
    p->n = n;
    p->rtt_s = 0;
    p->bottleneck_bps = INFINITY;
    p->cost_per_tb = 0;
    for (unsigned i = 0; i < n; i++) {
        p->hop[i] = (uint16_t)back[n - 1 - i];
        const hubs_link *k = &b->link[p->hop[i] / 2];
        p->rtt_s += k->rtt_s;
        p->cost_per_tb += k->cost_per_tb;
        p->bottleneck_bps = fmin(p->bottleneck_bps, k->bandwidth_bps);
    }
    return 0;
}

static unsigned hop_of(const hubs_flow *f, unsigned i)
{
    const hubs_path *p = f->path;
    return f->reverse ? (unsigned)p->hop[p->n - 1 - i] ^ 1u : p->hop[i];
}

typedef struct by_start { double t; uint32_t i; } by_start;

static int cmp_start(const void *x, const void *y)
{
    const by_start *a = x, *b = y;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

/* progressive filling: rate[k] of every active flow act[0..n) */
static void fill(const hubs_backbone *b, const hubs_flow *f, const uint32_t *act, uint32_t n,
                 double *rate, char *frozen)
{
    double cap[2 * HUBS_BB_MAX_LINKS];
    unsigned cnt[2 * HUBS_BB_MAX_LINKS] = {0};
    for (unsigned l = 0; l < 2 * b->n_links; l++)
        cap[l] = b->link[l / 2].bandwidth_bps;
    for (uint32_t k = 0; k < n; k++) {
        frozen[k] = 0;
        for (unsigned i = 0; i < f[act[k]].path->n; i++)
            cnt[hop_of(&f[act[k]], i)]++;
    }
    for (uint32_t left = n, round = 0; left && round < n; round++) {
        double s = INFINITY;
        for (unsigned l = 0; l < 2 * b->n_links; l++)
            if (cnt[l])
                s = fmin(s, cap[l] / cnt[l]);
        for (uint32_t k = 0; k < n; k++) {
            const hubs_flow *x = &f[act[k]];
            int on = 0;
            for (unsigned i = 0; i < x->path->n && !frozen[k] && !on; i++) {
                unsigned l = hop_of(x, i);
                on = cap[l] / cnt[l] <= s * (1 + 1e-12); /* near-ties freeze together,
                                                             so no link is left at a
                                                             rounding's worth of room */
            }
            if (!on)
                continue;
            rate[k] = s;
            frozen[k] = 1;
            left--;
            for (unsigned i = 0; i < x->path->n; i++) {
                unsigned l = hop_of(x, i);
                cap[l] = fmax(0, cap[l] - s);
                cnt[l]--;
            }
        }
    }
}

int hubs_flows_run(const hubs_backbone *b, hubs_flow *f, uint32_t n, double *link_bits,
                   sim_error *err)
{
    by_start *ord = malloc((size_t)(n ? n : 1) * sizeof *ord);
    uint32_t *act = malloc((size_t)(n ? n : 1) * sizeof *act);
    double *rem = malloc((size_t)(n ? n : 1) * sizeof *rem);
    double *rate = malloc((size_t)(n ? n : 1) * sizeof *rate);
    char *frozen = malloc(n ? n : 1);
    if (!ord || !act || !rem || !rate || !frozen) {
        free(ord), free(act), free(rem), free(rate), free(frozen);
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "hubs: out of memory");
    }
    for (uint32_t i = 0; i < n; i++)
        ord[i] = (by_start){f[i].start_s, i};
    qsort(ord, n, sizeof *ord, cmp_start);
    uint32_t next = 0, n_act = 0;
    double t = 0;
    /* each pass admits arrivals, moves to the next arrival or completes a
     * flow: at most 3 n passes */
    for (uint64_t pass = 0; (next < n || n_act) && pass <= 3 * (uint64_t)n + 3; pass++) {
        if (!n_act)
            t = ord[next].t;
        while (next < n && ord[next].t <= t) {
            hubs_flow *x = &f[ord[next++].i];
            x->slowed = 0;
            if (x->bits > 0 && x->path->n) {
                act[n_act] = (uint32_t)(x - f);
                rem[n_act++] = x->bits;
            } else
                x->done_s = x->start_s;
        }
        if (!n_act)
            continue;
        fill(b, f, act, n_act, rate, frozen);
        for (uint32_t k = 0; k < n_act; k++)
            f[act[k]].slowed |= rate[k] < f[act[k]].path->bottleneck_bps;
        double dt = INFINITY;
        for (uint32_t k = 0; k < n_act; k++)
            dt = fmin(dt, rate[k] > 0 ? rem[k] / rate[k] : INFINITY);
        double arrive = next < n ? ord[next].t : INFINITY;
        int completes = t + dt <= arrive;
        if (!completes)
            dt = arrive - t;
        double now = completes ? t + dt : arrive;
        uint32_t kept = 0;
        for (uint32_t k = 0; k < n_act; k++) {
            hubs_flow *x = &f[act[k]];
            int last = completes && rate[k] > 0 && rem[k] / rate[k] <= dt;
            double moved = last ? rem[k] : fmin(rem[k], rate[k] * dt);
            if (link_bits)
                for (unsigned i = 0; i < x->path->n; i++)
                    link_bits[hop_of(x, i)] += moved;
            if (last)
                x->done_s = now;
            else {
                act[kept] = act[k];
                rem[kept++] = rem[k] - moved;
            }
        }
        n_act = kept;
        t = now;
    }
    free(ord), free(act), free(rem), free(rate), free(frozen);
    if (next < n || n_act)
        return sim_error_set(err, SIM_ERR_INTERNAL, NULL, 0, "hubs: the backbone's flows did "
                             "not finish (an internal error, please report it with the "
                             "scenario)");
    return 0;
}
