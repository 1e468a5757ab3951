/* packet_df.c - per-packet routing on the Dragonfly family in the packet
 * tier (pkt_config.is_adaptive 1: UGAL-L, 2: Valiant, 3: minimal, the
 * baseline on the same virtual channels, 4: UGAL-G, 5: progressive;
 * docs/fabric.md "Per-packet UGAL on a Dragonfly").
 *
 * The choice is made once per packet, at its source router (the first
 * fabric switch on its path, reached over a link from a host or shared
 * NIC), and never again (source-adaptive routing; the references describe
 * neither this nor the progressive kind: hardware.md 6.3 says only "choose
 * minimal or Valiant per packet from queue occupancy weighted by hop
 * count", marked U) - but in mode 5 (progressive, PAR as Jiang, Kim and
 * Dally describe it, ISCA 2009, not in ../shared/reference: the rule
 * below is this file's): a packet that stayed minimal at its source router
 * R and reaches, over a local link, the router G of its source group whose
 * global link its minimal path takes, decides again at G by UGAL-L's rule,
 * against a Valiant candidate of its message that also runs R -> G and
 * leaves G by another global link (drawn by a hash among those, from a
 * second draw): the packet keeps its path up to G and its VC (no global
 * link crossed yet), so the channels stay as below. Once Valiant, or past
 * G, a packet's path is fixed.
 * Candidates of a message (built when it is sent, from a minimal router of
 * the net's own, ECMP with seed 0):
 *  - the minimal path (local, global, local): the message's path;
 *  - for every group I other than the source's and the destination's, the
 *    Valiant path through I: the minimal route from the source to a host of
 *    I up to the first switch X of I that has hosts (in a Dragonfly the
 *    router where the global link from the source group lands, as the flow
 *    tier's landing(); in a Dragonfly+ a leaf of I), then the minimal route
 *    from a host of X to the destination from X on.
 * A packet draws one intermediate group of its message's candidates
 * uniformly by a hash of (message serial, packet index) and compares, at
 * its source router R,
 *     (q_min + s) / B_min x H_min   <=   (q_val + s) / B_val x H_val
 * (q: bytes waiting in the candidate's next link's FIFOs at R, the packet on the
 * wire not counted; B its rate; s the packet's size; H the links left from
 * R to the destination): minimal when it holds (ties minimal), else the
 * Valiant path. UGAL-L: only R's own egress queues are read (no remote
 * congestion information); under credits or PFC a congested global link
 * shows at R only through backpressure. Mode 2 takes the Valiant path
 * always (the oblivious bound). Mode 4, UGAL-G (global knowledge, an
 * idealisation no router has: it reads every queue on both paths at the
 * instant of the choice): minimal when
 *     sum over the minimal path's links after R of (q_j + s) / B_j
 *       <= the same sum over the Valiant path's (ties minimal);
 * with every queue empty it is UGAL-L's rule (hops x s / B).
 *
 * Candidates: every third group (valiant_candidates 0, or >= g - 2: the
 * full scan), or valiant_candidates of them drawn per message without
 * replacement (a partial Fisher-Yates shuffle keyed by a hash of the
 * message's send serial), in the drawn order; a packet draws among them.
 *
 * Storage: the message's path buffer holds the minimal path (n_hops links),
 * then K (the candidate groups), then K offsets into the buffer (0: no
 * Valiant path through that group), each path preceded by its length: a
 * packet's path pointer moves to the chosen one and the hot path reads it as
 * it reads the minimal one. 2 K routes and about 7 K words per message.
 */
#include "packet_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "event_kinds.h"

struct pkt_df {
    topo_router *min;        /* minimal paths, ECMP, seed 0 */
    uint32_t n_groups;
    uint32_t *group_host;    /* a host whose first switch is in the group (PKT_NONE: none) */
    uint32_t *sw_host;       /* per node: a host whose first switch it is (PKT_NONE: none) */
    uint8_t *busy;           /* per physical link: a VC's packet is on the wire */
    uint32_t *buf, cap;      /* candidate paths being built */
    uint32_t *seg, seg_cap;  /* one ordered route */
    uint32_t *third;         /* n_groups: a message's third groups, then the drawn ones first */
};

/* The first fabric switch on host h's way out (through a shared NIC), or
 * PKT_NONE. */
static uint32_t first_switch(const topo_graph *g, uint32_t h)
{
    uint32_t v = h;
    for (int step = 0; step < 2; step++) { /* host -> switch, or host -> NIC -> switch */
        uint32_t next = PKT_NONE;
        for (uint32_t i = g->out_offset[v]; i < g->out_offset[v + 1]; i++) {
            uint32_t w = g->link_dst[g->out_links[i]];
            if (g->node_kind[w] == TOPO_SWITCH)
                return w;
            if (g->node_kind[w] == TOPO_NIC && next == PKT_NONE)
                next = w;
        }
        if (next == PKT_NONE)
            return PKT_NONE;
        v = next;
    }
    return PKT_NONE;
}

void pkt_df_free(struct pkt_df *d)
{
    if (!d)
        return;
    topo_router_destroy(d->min);
    free(d->group_host);
    free(d->busy);
    free(d->sw_host);
    free(d->buf);
    free(d->seg);
    free(d->third);
    free(d);
}

int pkt_df_create(pkt_net *n, char *why, size_t why_size)
{
    const topo_graph *g = n->g;
    uint32_t groups = 0;
    for (uint32_t v = 0; v < g->n_nodes; v++)
        if (g->node_kind[v] == TOPO_SWITCH && g->node_group[v] != TOPO_NO_GROUP &&
            g->node_group[v] + 1 > groups)
            groups = g->node_group[v] + 1;
    if (groups < 3) /* a torus, or a Dragonfly of 2 groups: no third group */
        return pkt_say(why, why_size, "packet tier: per-packet adaptive routing needs a folded "
                       "Clos or a Dragonfly family of 3 groups or more");
    const pkt_config *c = &n->cfg;
    if (c->loss != PKT_LOSSLESS || c->dcqcn.is_enabled || c->ibcc.is_enabled)
        return pkt_say(why, why_size, "packet tier: per-packet routing on a Dragonfly runs "
                       "lossless, without DCQCN or IB CC");
    uint32_t nl = g->n_links;
    if ((uint64_t)nl * PKT_DF_VCS >= PKT_NONE)
        return pkt_say(why, why_size, "packet tier: too many links for the virtual channels");
    pkt_link *links = pkt_links_alloc((size_t)nl * PKT_DF_VCS + 1);
    if (!links)
        return pkt_say(why, why_size, "packet tier: out of memory");
    memcpy(links, n->links, ((size_t)nl + 1) * sizeof *links);
    free(n->links);
    n->links = links;
    for (uint32_t v = 1; v < PKT_DF_VCS; v++) /* VC v of link l: record l + v nl */
        for (uint32_t l = 0; l < nl; l++) {
            links[l + v * nl] = (pkt_link){0};
            links[l + v * nl].head = links[l + v * nl].tail = PKT_NONE;
            links[l + v * nl].feeds_switch = links[l].feeds_switch;
            links[l + v * nl].feeds_host = links[l].feeds_host;
        }
    struct pkt_df *d = calloc(1, sizeof *d);
    if (!d)
        return pkt_say(why, why_size, "packet tier: out of memory");
    n->df = d;
    d->n_groups = groups;
    d->group_host = malloc((size_t)groups * sizeof *d->group_host);
    d->sw_host = malloc((size_t)g->n_nodes * sizeof *d->sw_host);
    d->busy = calloc((size_t)nl + 1, 1);
    d->third = malloc((size_t)groups * sizeof *d->third);
    char rwhy[160];
    topo_route_config rc = {TOPO_BALANCE_ECMP, TOPO_PATH_MINIMAL, 1, 0};
    d->min = topo_router_create(g, &rc, rwhy, sizeof rwhy);
    if (!d->group_host || !d->sw_host || !d->min || !d->busy || !d->third)
        return pkt_say(why, why_size, "packet tier: out of memory");
    for (uint32_t i = 0; i < groups; i++)
        d->group_host[i] = PKT_NONE;
    for (uint32_t v = 0; v < g->n_nodes; v++)
        d->sw_host[v] = PKT_NONE;
    for (uint32_t h = 0; h < g->n_nodes; h++) { /* the lowest host id of each switch, group */
        if (g->node_kind[h] != TOPO_HOST)
            continue;
        uint32_t s = first_switch(g, h);
        if (s == PKT_NONE)
            continue;
        if (d->sw_host[s] == PKT_NONE)
            d->sw_host[s] = h;
        uint32_t grp = g->node_group[s];
        if (grp < groups && d->group_host[grp] == PKT_NONE)
            d->group_host[grp] = h;
    }
    for (uint32_t l = 0; l < nl; l++) { /* the source router's input links, global links */
        uint32_t a = g->link_src[l], b = g->link_dst[l];
        links[l].is_choice = g->node_kind[a] != TOPO_SWITCH && g->node_kind[a] != TOPO_SCALEUP &&
                             g->node_kind[b] == TOPO_SWITCH;
        links[l].is_global = g->node_kind[a] == TOPO_SWITCH && g->node_kind[b] == TOPO_SWITCH &&
                             g->node_group[a] != g->node_group[b];
    }
    return 0;
}

/* Room for `need` words in *p of capacity *cap: 0 or -1. */
static int grow(uint32_t **p, uint32_t *cap, uint64_t need)
{
    if (need <= *cap)
        return 0;
    uint64_t c = *cap ? (uint64_t)*cap * 2 : 64;
    while (c < need)
        c *= 2;
    if (c >= PKT_NONE)
        return -1;
    uint32_t *q = realloc(*p, (size_t)c * sizeof *q);
    if (!q)
        return -1;
    *p = q;
    *cap = (uint32_t)c;
    return 0;
}

/* 1 when the n links of path cross more global links than the VCs carry. */
static int too_global(const pkt_net *n, const uint32_t *path, uint32_t len)
{
    uint32_t globals = 0;
    for (uint32_t i = 0; i < len; i++)
        globals += n->links[path[i]].is_global;
    return globals >= PKT_DF_VCS;
}

/* The minimal route src -> dst, ordered, into d->seg; its length, or -1
 * (n->error set: no route, not one path, out of memory). */
static long segment(pkt_net *n, uint32_t src, uint32_t dst, uint64_t key)
{
    struct pkt_df *d = n->df;
    long count = topo_route(d->min, src, dst, key, NULL, n->usage, n->usage_cap);
    if (count <= 0 || pkt_order_path(n, count, src, dst)) {
        if (count <= 0)
            snprintf(n->error, sizeof n->error, "pkt_send: %s", count == -2
                     ? "out of memory for the routing tables" : "no route between the hosts");
        return -1;
    }
    if (grow(&d->seg, &d->seg_cap, (uint64_t)count)) {
        snprintf(n->error, sizeof n->error, "pkt_send: out of memory");
        return -1;
    }
    for (long i = 0; i < count; i++)
        d->seg[i] = n->usage[i].link;
    return count;
}

/* The Valiant path src -> group grp -> dst appended to d->buf at *at (its
 * length first); 0 when it was built, 1 when the group cannot carry it
 * (no host, a prefix that differs from the minimal path's), -1 on error. */
static int valiant(pkt_net *n, uint32_t src, uint32_t dst, uint64_t key, uint32_t grp,
                   uint32_t choice, uint64_t *at)
{
    struct pkt_df *d = n->df;
    const topo_graph *g = n->g;
    if (d->group_host[grp] == PKT_NONE)
        return 1;
    long c1 = segment(n, src, d->group_host[grp], key);
    if (c1 < 0)
        return -1;
    uint32_t len = 0, x = PKT_NONE;
    for (long i = 0; i < c1 && x == PKT_NONE; i++) { /* up to the first switch of grp with hosts */
        uint32_t w = g->link_dst[d->seg[i]];
        len++;
        if (g->node_kind[w] == TOPO_SWITCH && g->node_group[w] == grp && d->sw_host[w] != PKT_NONE)
            x = w;
    }
    if (x == PKT_NONE || len <= choice + 1)
        return 1;
    for (uint32_t i = 0; i <= choice; i++)
        if (d->seg[i] != d->buf[i]) /* the prefix to the source router must be the minimal's */
            return 1;
    if (grow(&d->buf, &d->cap, *at + 1 + len)) {
        snprintf(n->error, sizeof n->error, "pkt_send: out of memory");
        return -1;
    }
    uint64_t start = *at;
    memcpy(d->buf + start + 1, d->seg, (size_t)len * sizeof *d->buf);
    long c2 = segment(n, d->sw_host[x], dst, key);
    if (c2 < 0)
        return -1;
    long from = 0;
    while (from < c2 && g->link_src[d->seg[from]] != x)
        from++;
    if (from == c2)
        return 1;
    if (grow(&d->buf, &d->cap, start + 1 + len + (uint64_t)(c2 - from))) {
        snprintf(n->error, sizeof n->error, "pkt_send: out of memory");
        return -1;
    }
    memcpy(d->buf + start + 1 + len, d->seg + from, (size_t)(c2 - from) * sizeof *d->buf);
    len += (uint32_t)(c2 - from);
    if (too_global(n, d->buf + start + 1, len))
        return 1;
    d->buf[start] = len;
    *at = start + 1 + len;
    return 0;
}

long pkt_df_route(pkt_net *n, uint32_t src, uint32_t dst, uint64_t key, uint32_t m)
{
    struct pkt_df *d = n->df;
    const topo_graph *g = n->g;
    long nmin = segment(n, src, dst, key);
    if (nmin < 0)
        return -1;
    if (too_global(n, d->seg, (uint32_t)nmin)) {
        snprintf(n->error, sizeof n->error, "pkt_send: the minimal route crosses more global "
                 "links than the %u virtual channels carry", PKT_DF_VCS);
        return -1;
    }
    /* the choice hop (the link into the source router) and the two groups */
    uint32_t choice = PKT_NONE, gs = PKT_NONE, gd = PKT_NONE;
    for (long i = 0; i < nmin; i++) {
        uint32_t l = d->seg[i];
        if (choice == PKT_NONE && n->links[l].is_choice) {
            choice = (uint32_t)i;
            gs = g->node_group[g->link_dst[l]];
        }
        if (g->node_kind[g->link_src[l]] == TOPO_SWITCH)
            gd = g->node_group[g->link_src[l]];
    }
    uint32_t k = choice == PKT_NONE || gs == gd || gs >= d->n_groups || gd >= d->n_groups ||
                 n->cfg.is_adaptive == 3 ? 0 : d->n_groups - 2; /* 3: minimal only */
    for (uint32_t i = 0, grp = 0; i < k && grp < d->n_groups; grp++) /* third groups, in order */
        if (grp != gs && grp != gd)
            d->third[i++] = grp;
    uint32_t want = n->cfg.valiant_candidates;
    if (want && want < k) { /* a sample: the first `want` of a partial Fisher-Yates */
        uint64_t seed = pkt_mix64(n->n_serial ^ 0x76616c69616e74ull); /* this message's serial */
        for (uint32_t i = 0; i < want; i++) {
            uint32_t j = i + (uint32_t)(pkt_mix64(seed + i) % (k - i));
            uint32_t t = d->third[i];
            d->third[i] = d->third[j];
            d->third[j] = t;
        }
        k = want;
    }
    uint64_t at = (uint64_t)nmin + 1 + k;
    if (grow(&d->buf, &d->cap, at)) {
        snprintf(n->error, sizeof n->error, "pkt_send: out of memory");
        return -1;
    }
    memcpy(d->buf, d->seg, (size_t)nmin * sizeof *d->buf);
    d->buf[nmin] = k;
    for (uint32_t i = 0; i < k; i++) { /* k candidates: every third group, or the sample */
        uint64_t off = at + 1;
        int rc = valiant(n, src, dst, key, d->third[i], choice, &at);
        if (rc < 0)
            return -1;
        d->buf[nmin + 1 + i] = rc ? 0 : (uint32_t)off;
    }
    pkt_msg *r = &n->msgs[m];
    if (r->path_cap < at) {
        uint32_t *p = realloc(r->path, (size_t)at * sizeof *p);
        if (!p) {
            snprintf(n->error, sizeof n->error, "pkt_send: out of memory");
            return -1;
        }
        r->path = p;
        r->path_cap = (uint32_t)at;
    }
    memcpy(r->path, d->buf, (size_t)at * sizeof *r->path);
    return nmin;
}

/* Bytes waiting in link l's egress FIFOs (every VC), the packets on the
 * wire not counted. */
static double waiting(const pkt_net *n, uint32_t l)
{
    uint32_t nl = n->g->n_links;
    double w = 0;
    for (uint32_t v = 0; v < PKT_DF_VCS; v++) {
        const pkt_link *k = &n->links[l + v * nl];
        w += k->queued - (k->is_busy ? n->pkts[k->head].size : 0);
    }
    return w;
}

/* UGAL-G: the time a packet of `size` bytes would wait and take from R on,
 * over links c + 1 .. len - 1 of path: sum of (waiting + size) / rate
 * (every queue on the path read at once: global knowledge). */
static double drain(const pkt_net *n, const uint32_t *path, uint32_t c, uint32_t len,
                    uint32_t size)
{
    const double *rate = n->g->link_bytes_per_s;
    double t = 0;
    for (uint32_t i = c + 1; i < len; i++)
        t += (waiting(n, path[i]) + size) / rate[path[i]];
    return t;
}

uint32_t pkt_df_choose(pkt_net *n, uint32_t id)
{
    pkt_packet *p = &n->pkts[id];
    const pkt_msg *r = &n->msgs[p->msg];
    uint32_t c = p->hop, nmin = r->n_hops;
    const uint32_t *base = r->path;
    uint32_t k = base[nmin];
    if (p->path != base || c + 1 >= nmin || k == 0)
        return p->path[c + 1];
    uint64_t h = pkt_mix64(r->serial ^ pkt_mix64(((uint64_t)(p->index & ~PKT_CE) << 32) | 0xdfu));
    uint32_t off = base[nmin + 1 + h % k];
    if (off == 0)
        return base[c + 1];
    const uint32_t *val = base + off;
    uint32_t len = base[off - 1];
    if (n->cfg.is_adaptive == 1 || n->cfg.is_adaptive == 5) {
        const double *rate = n->g->link_bytes_per_s;
        uint32_t lm = base[c + 1], lv = val[c + 1];
        double tm = (waiting(n, lm) + p->size) / rate[lm] * (double)(nmin - c - 1);
        double tv = (waiting(n, lv) + p->size) / rate[lv] * (double)(len - c - 1);
        if (tm <= tv)
            return lm;
    } else if (n->cfg.is_adaptive == 4 && drain(n, base, c, nmin, p->size) <=
                                          drain(n, val, c, len, p->size)) {
        return base[c + 1]; /* UGAL-G: every queue on both paths */
    }
    p->path = val;
    n->stats.valiant_packets++;
    return val[c + 1];
}

/* Progressive (mode 5): packet id, still on its minimal path, has reached
 * router G over local link path[c] in its source group: its next link,
 * the minimal path's (global) or a Valiant candidate's that shares the path
 * up to G (UGAL-L's rule at G). O(K (c + 2)), K the candidates. */
static uint32_t par_choose(pkt_net *n, uint32_t id)
{
    pkt_packet *p = &n->pkts[id];
    const pkt_msg *r = &n->msgs[p->msg];
    uint32_t c = p->hop, nmin = r->n_hops;
    const uint32_t *base = r->path;
    if (p->path != base || c + 1 >= nmin || !n->links[base[c + 1]].is_global)
        return p->path[c + 1]; /* Valiant already, or not at the gateway */
    uint32_t k = base[nmin], lm = base[c + 1];
    uint64_t h = pkt_mix64(r->serial ^ pkt_mix64(((uint64_t)(p->index & ~PKT_CE) << 32) | 0x9au));
    for (uint32_t j = 0; j < k; j++) { /* the first candidate from the draw on that fits */
        uint32_t off = base[nmin + 1 + (uint32_t)((h + j) % k)];
        if (off == 0 || base[off - 1] <= c + 1)
            continue;
        const uint32_t *val = base + off;
        uint32_t len = base[off - 1], same = val[c + 1] != lm;
        for (uint32_t i = 0; i <= c && same; i++)
            same = val[i] == base[i];
        if (!same)
            continue;
        const double *rate = n->g->link_bytes_per_s;
        uint32_t lv = val[c + 1];
        double tm = (waiting(n, lm) + p->size) / rate[lm] * (double)(nmin - c - 1);
        double tv = (waiting(n, lv) + p->size) / rate[lv] * (double)(len - c - 1);
        if (tm <= tv)
            return lm;
        p->path = val;
        n->stats.valiant_packets++;
        n->stats.par_packets++;
        return lv;
    }
    return lm;
}

/* ---- virtual channels ----
 * A packet's VC is the number of global links it has crossed (p->in_link
 * holds it): 0 up to its first global link, 1 after it, 2 after a second
 * (Valiant). Each VC of a link has its own egress FIFO, its own ingress
 * buffer of buffer_bytes at the switch it feeds (credits or PFC per VC, as
 * IB virtual lanes or RoCE priorities) and shares the wire: when it frees,
 * the next VC with a packet it may send goes, round robin. A packet only
 * moves to a higher VC, and within one VC no path turns from a global link
 * back into the group it left, so the channel dependency graph is acyclic:
 * no deadlock under credits or PFC (Kim et al.'s VC rule for Valiant
 * routing on the Dragonfly, ISCA 2008; not read in a reference here). */

static void df_tx_done(sim_engine *eng, void *ctx, uint64_t data);
static void df_arrive(sim_engine *eng, void *ctx, uint64_t data);

double pkt_df_sum(const pkt_net *n, uint32_t l, int is_held)
{
    uint32_t nl = n->g->n_links;
    double s = 0;
    for (uint32_t v = 0; v < PKT_DF_VCS; v++)
        s += is_held ? n->links[l + v * nl].held : n->links[l + v * nl].queued;
    return s;
}

pkt_link_stats pkt_df_link_stats(const pkt_net *n, uint32_t l)
{
    pkt_link_stats s = {0};
    uint32_t nl = n->g->n_links;
    for (uint32_t v = 0; v < PKT_DF_VCS; v++) {
        const pkt_link *k = &n->links[l + v * nl];
        s.bytes_sent += k->bytes_sent;
        s.packets_sent += k->sent;
        s.pauses += k->pauses;
        s.max_held_bytes = fmax(s.max_held_bytes, k->max_held);   /* one VC's most */
        s.max_queued_bytes = fmax(s.max_queued_bytes, k->max_queued);
    }
    return s;
}

void pkt_df_try_start(pkt_net *n, uint32_t vl)
{
    uint32_t l = vl % n->g->n_links;
    pkt_link *k = &n->links[vl];
    if (n->df->busy[l] || k->is_paused || k->head == PKT_NONE)
        return;
    double size = k->head_size;
    if (n->cfg.technology == PKT_IB && k->feeds_switch) {
        if (k->credit_used + size > n->cfg.buffer_bytes)
            return; /* a returning credit retries */
        k->credit_used += size;
    }
    k->is_busy = 1;
    n->df->busy[l] = 1;
    pkt_schedule_in(n, size / n->g->link_bytes_per_s[l], PRIO_TX_DONE, KIND_PKT_TX_DONE,
                    df_tx_done, vl, 1);
}

static void df_tx_done(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)eng;
    pkt_net *n = ctx;
    uint32_t vl = (uint32_t)data, nl = n->g->n_links, l = vl % nl;
    uint32_t id = pkt_link_pop_sent(n, &n->links[vl]);
    pkt_packet *p = &n->pkts[id];
    n->df->busy[l] = 0;
    if (p->hop > 0) { /* the port it came in on, on the VC it came in on */
        uint32_t up = p->path[p->hop - 1];
        pkt_port_release(n, up + (p->in_link - n->links[up].is_global) * nl, p->size);
    } else if (pkt_has_rc(n)) {
        pkt_loss_sent(n, id); /* the in-order receiver's sender: it has left its NIC */
    }
    pkt_schedule_in(n, n->cfg.hop_latency_s, PRIO_ARRIVE, KIND_PKT_ARRIVE, df_arrive, id, 1);
    for (uint32_t i = 1; i <= PKT_DF_VCS && !n->df->busy[l]; i++) /* round robin, from the next */
        pkt_df_try_start(n, l + ((vl / nl + i) % PKT_DF_VCS) * nl);
}

static void df_arrive(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)eng;
    pkt_net *n = ctx;
    uint32_t id = (uint32_t)data, nl = n->g->n_links;
    pkt_packet *p = &n->pkts[id];
    uint32_t l = p->path[p->hop], vc = p->in_link;
    pkt_link *k = &n->links[l + vc * nl];
    n->stats.events++;
    if (k->feeds_host) {
        pkt_deliver(n, id);
        return;
    }
    pkt_port_hold(n, l + vc * nl, p->size);
    uint32_t next = n->links[l].is_choice ? pkt_df_choose(n, id)
                  : n->cfg.is_adaptive == 5 && vc == 0 && !n->links[l].is_global &&
                            n->g->node_kind[n->g->link_src[l]] == TOPO_SWITCH
                        ? par_choose(n, id) /* a local hop in the source group */
                        : p->path[p->hop + 1];
    uint32_t nv = vc + n->links[l].is_global;
    p->hop++;
    p->in_link = nv;
    pkt_fifo_push(n, next + nv * nl, id);
    pkt_df_try_start(n, next + nv * nl);
}
