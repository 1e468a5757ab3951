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

/* the active flows' state: a flow's remaining bits are kept as of the
 * last change of its rate (anchor_t, anchor_rem), so that an event that
 * leaves its rate as it was (another flow's arrival or completion on other
 * links) does not touch its numbers: its completion is anchor_t +
 * anchor_rem / rate, the same to the bit as without that event */
typedef struct flow_state {
    uint32_t *act;
    double *anchor_t, *anchor_rem, *rate, *fill_rate, *end;
    char *frozen;
} flow_state;

static void state_free(flow_state *s)
{
    free(s->act), free(s->anchor_t), free(s->anchor_rem), free(s->rate), free(s->fill_rate);
    free(s->end), free(s->frozen);
}

static int state_alloc(flow_state *s, uint32_t n)
{
    size_t m = n ? n : 1;
    s->act = malloc(m * sizeof *s->act);
    s->anchor_t = malloc(m * sizeof(double));
    s->anchor_rem = malloc(m * sizeof(double));
    s->rate = malloc(m * sizeof(double));
    s->fill_rate = malloc(m * sizeof(double));
    s->end = malloc(m * sizeof(double));
    s->frozen = malloc(m);
    return s->act && s->anchor_t && s->anchor_rem && s->rate && s->fill_rate && s->end &&
           s->frozen;
}

/* the interval [t, now) at the active flows' rates into the links' busy
 * time and peak (intervals of no length left out) */
static void use_interval(const hubs_backbone *b, const hubs_flow *f, const flow_state *s,
                         uint32_t n_act, double t, double now, hubs_link_use *use)
{
    if (!use || !(now > t))
        return;
    double sum[2 * HUBS_BB_MAX_LINKS] = {0};
    char on[2 * HUBS_BB_MAX_LINKS] = {0};
    for (uint32_t k = 0; k < n_act; k++)
        for (unsigned i = 0; i < f[s->act[k]].path->n; i++) {
            unsigned l = hop_of(&f[s->act[k]], i);
            sum[l] += s->rate[k];
            on[l] = 1;
        }
    for (unsigned l = 0; l < 2 * b->n_links; l++)
        if (on[l]) {
            use->busy_s[l] += now - t;
            use->peak_bps[l] = fmax(use->peak_bps[l], sum[l]);
        }
}

int hubs_flows_use(const hubs_backbone *b, hubs_flow *f, uint32_t n, hubs_link_use *use,
                   sim_error *err)
{
    by_start *ord = malloc((size_t)(n ? n : 1) * sizeof *ord);
    flow_state s;
    int ok = state_alloc(&s, n);
    if (!ord || !ok) {
        free(ord);
        state_free(&s);
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "hubs: out of memory");
    }
    for (uint32_t i = 0; i < n; i++)
        ord[i] = (by_start){f[i].start_s, i};
    qsort(ord, n, sizeof *ord, cmp_start);
    uint32_t next = 0, n_act = 0;
    double t = 0;
    /* each pass admits arrivals, or completes a flow: at most 2 n + 1 passes */
    for (uint64_t pass = 0; (next < n || n_act) && pass <= 3 * (uint64_t)n + 3; pass++) {
        if (!n_act)
            t = ord[next].t;
        while (next < n && ord[next].t <= t) {
            hubs_flow *x = &f[ord[next++].i];
            x->slowed = 0;
            if (x->bits > 0 && x->path->n) {
                s.act[n_act] = (uint32_t)(x - f);
                s.anchor_t[n_act] = t;
                s.anchor_rem[n_act] = x->bits;
                s.rate[n_act++] = -1; /* none yet */
            } else
                x->done_s = x->start_s;
        }
        if (!n_act)
            continue;
        fill(b, f, s.act, n_act, s.fill_rate, s.frozen);
        double first = INFINITY;
        for (uint32_t k = 0; k < n_act; k++) {
            hubs_flow *x = &f[s.act[k]];
            if (s.fill_rate[k] != s.rate[k]) { /* a new rate: a new anchor */
                if (s.rate[k] >= 0)
                    s.anchor_rem[k] = fmax(0, s.anchor_rem[k] - s.rate[k] * (t - s.anchor_t[k]));
                s.anchor_t[k] = t;
                s.rate[k] = s.fill_rate[k];
            }
            x->slowed |= s.rate[k] < x->path->bottleneck_bps;
            s.end[k] = s.rate[k] > 0 ? s.anchor_t[k] + s.anchor_rem[k] / s.rate[k] : INFINITY;
            first = fmin(first, s.end[k]);
        }
        double arrive = next < n ? ord[next].t : INFINITY;
        int completes = first <= arrive;
        double now = completes ? first : arrive;
        if (!isfinite(now))
            break; /* no flow moves and none arrives: reported below */
        use_interval(b, f, &s, n_act, t, now, use);
        uint32_t kept = 0;
        for (uint32_t k = 0; k < n_act; k++) {
            hubs_flow *x = &f[s.act[k]];
            if (completes && s.end[k] <= now) {
                x->done_s = now;
                for (unsigned i = 0; use && i < x->path->n; i++)
                    use->bits[hop_of(x, i)] += x->bits;
                continue;
            }
            s.act[kept] = s.act[k];
            s.anchor_t[kept] = s.anchor_t[k];
            s.anchor_rem[kept] = s.anchor_rem[k];
            s.rate[kept++] = s.rate[k];
        }
        n_act = kept;
        t = now;
    }
    free(ord);
    state_free(&s);
    if (next < n || n_act)
        return sim_error_set(err, SIM_ERR_INTERNAL, NULL, 0, "hubs: the backbone's flows did "
                             "not finish (an internal error, please report it with the "
                             "scenario)");
    return 0;
}

int hubs_flows_run(const hubs_backbone *b, hubs_flow *f, uint32_t n, double *link_bits,
                   sim_error *err)
{
    hubs_link_use *use = link_bits ? calloc(1, sizeof *use) : NULL;
    if (link_bits && !use)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "hubs: out of memory");
    int rc = hubs_flows_use(b, f, n, use, err);
    for (unsigned l = 0; use && !rc && l < 2 * b->n_links; l++)
        link_bits[l] += use->bits[l];
    free(use);
    return rc;
}
