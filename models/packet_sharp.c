/* packet_sharp.c - SHARP aggregation at switches on the packet tier
 * (packet_sharp.h has the model). An op record per all-reduce in flight:
 * its tree (ranks are nodes 0..n-1, switches after them; node j's up link
 * is path[2j], its down link path[2j + 1]: a SHARP packet's `path` is that
 * array and its `hop` the index of the link it is on), one counter per
 * (switch, packet): children arrived on the way up, copies not yet sent on
 * the way down. Packets carry msg = PKT_SHARP | op.
 */
#include "packet_sharp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event_kinds.h"
#include "netcoll_internal.h"
#include "packet_internal.h"

typedef struct pks_tree {
    uint32_t n_nodes, n_ranks, root;   /* root: a node index */
    uint32_t *node;                    /* graph node of each tree node */
    uint32_t *parent;                  /* tree node, PKT_NONE at the root */
    uint32_t *child_off, *child;       /* children (CSR, in node order) */
    uint32_t *path;                    /* 2 n_nodes: up and down link of each node */
    uint32_t hops_up;
} pks_tree;

typedef struct pks_op {
    pks_tree t;
    pkt_done_fn done;
    void *ctx;
    uint64_t tag;
    double bytes, mtu, rate;           /* rate: the reduction rate, INFINITY: none */
    uint32_t np;                       /* packets per rank */
    uint32_t *count;                   /* n_nodes x np */
    uint32_t *left;                    /* per rank: packets still to receive */
    double *last_emit_s;               /* per node: its last emission (the rate limit) */
    uint32_t ranks_left, next_free;
    uint8_t is_live;
} pks_op;

struct pkt_sharp {
    pks_op *ops;
    uint32_t n_ops, free_op;
};

static void tree_free(pks_tree *t)
{
    free(t->node);
    free(t->parent);
    free(t->child_off);
    free(t->child);
    free(t->path);
    memset(t, 0, sizeof *t);
}

/* the host's first link to a switch, or UINT32_MAX */
static uint32_t host_switch_link(const topo_graph *g, uint32_t h)
{
    for (uint32_t i = g->out_offset[h]; i < g->out_offset[h + 1]; i++)
        if (g->node_kind[g->link_dst[g->out_links[i]]] == TOPO_SWITCH)
            return g->out_links[i];
    return UINT32_MAX;
}

static int is_up(const topo_graph *g, uint32_t l)
{
    return g->node_kind[g->link_dst[l]] == TOPO_SWITCH &&
           g->node_tier[g->link_dst[l]] > g->node_tier[g->link_src[l]];
}

/* the root: the lowest (tier, id) switch every leaf reaches going up */
static uint32_t find_root(const topo_graph *g, const uint32_t *leaf, unsigned n, uint32_t *reach,
                          uint32_t *stamp, uint32_t *queue)
{
    uint32_t leaves = 0;
    for (unsigned i = 0; i < n; i++) {
        uint32_t s = leaf[i];
        if (stamp[s] != 0) /* a leaf seen before */
            continue;
        leaves++;
        stamp[s] = leaves;
        reach[s]++;
        uint32_t qh = 0, qt = 0;
        queue[qt++] = s;
        while (qh < qt) {
            uint32_t u = queue[qh++];
            for (uint32_t k = g->out_offset[u]; k < g->out_offset[u + 1]; k++) {
                uint32_t l = g->out_links[k], v = g->link_dst[l];
                if (is_up(g, l) && stamp[v] != leaves) {
                    stamp[v] = leaves;
                    reach[v]++;
                    queue[qt++] = v;
                }
            }
        }
    }
    uint32_t root = UINT32_MAX;
    for (uint32_t v = 0; v < g->n_nodes; v++)
        if (g->node_kind[v] == TOPO_SWITCH && reach[v] == leaves &&
            (root == UINT32_MAX || g->node_tier[v] < g->node_tier[root]))
            root = v; /* ascending ids: the first of the lowest tier */
    return root;
}

static int tree_build(const topo_graph *g, const uint32_t *r, unsigned n, pks_tree *t, char *why,
                      size_t why_size)
{
    memset(t, 0, sizeof *t);
    if (!g->updown)
        return pkt_say(why, why_size, "SHARP: the reduction tree needs a folded Clos fabric");
    if (n < 2)
        return pkt_say(why, why_size, "SHARP: needs at least 2 ranks");
    size_t nn = g->n_nodes;
    uint32_t *w = calloc(4 * nn + n + 1, sizeof *w); /* reach, stamp, queue, index; leaf */
    if (!w)
        return pkt_say(why, why_size, "SHARP: out of memory");
    uint32_t *reach = w, *stamp = w + nn, *queue = w + 2 * nn, *index = w + 3 * nn;
    uint32_t *leaf = w + 4 * nn;
    int rc = 0;
    for (unsigned i = 0; i < n && !rc; i++) {
        uint32_t l = r[i] < nn && g->node_kind[r[i]] == TOPO_HOST ? host_switch_link(g, r[i])
                                                                  : UINT32_MAX;
        if (r[i] < nn && g->node_kind[r[i]] == TOPO_HOST && l == UINT32_MAX)
            rc = pkt_say(why, why_size, "SHARP: a rank has no link to a switch (GPUs sharing a "
                         "NIC are not modelled by the packet tier's SHARP)");
        else if (l == UINT32_MAX)
            rc = pkt_say(why, why_size, "SHARP: a rank is not a host");
        else if (index[r[i]]++)
            rc = pkt_say(why, why_size, "SHARP: a host is listed twice among the ranks");
        else
            leaf[i] = g->link_dst[l];
    }
    uint32_t root = rc ? UINT32_MAX : find_root(g, leaf, n, reach, stamp, queue);
    if (!rc && root == UINT32_MAX)
        rc = pkt_say(why, why_size, "SHARP: the ranks' leaves have no common switch above them");
    if (rc) {
        free(w);
        return -1;
    }
    /* down from the root, breadth first: reach[] becomes the link from the
     * parent (UINT32_MAX: not reached), stamp[] the tree index */
    for (size_t v = 0; v < nn; v++)
        reach[v] = stamp[v] = UINT32_MAX;
    uint32_t qh = 0, qt = 0;
    queue[qt++] = root;
    reach[root] = UINT32_MAX - 1;
    while (qh < qt) {
        uint32_t u = queue[qh++];
        for (uint32_t k = g->out_offset[u]; k < g->out_offset[u + 1]; k++) {
            uint32_t l = g->out_links[k], v = g->link_dst[l];
            if (g->node_kind[v] == TOPO_SWITCH && g->node_tier[v] < g->node_tier[u] &&
                reach[v] == UINT32_MAX) {
                reach[v] = l;
                queue[qt++] = v;
            }
        }
    }
    /* tree nodes: ranks, then the switches on each rank's way up */
    uint32_t cap = n + 1;
    for (unsigned i = 0; i < n; i++) /* an upper bound on the nodes */
        cap += g->node_tier[root];
    t->node = malloc(cap * sizeof *t->node);
    t->parent = malloc(cap * sizeof *t->parent);
    t->path = malloc(2 * (size_t)cap * sizeof *t->path);
    t->child_off = calloc(cap + 1, sizeof *t->child_off);
    t->child = malloc(cap * sizeof *t->child);
    if (!t->node || !t->parent || !t->path || !t->child_off || !t->child) {
        free(w);
        tree_free(t);
        return pkt_say(why, why_size, "SHARP: out of memory");
    }
    t->n_ranks = n;
    for (unsigned i = 0; i < n; i++) {
        t->node[i] = r[i];
        t->path[2 * i] = host_switch_link(g, r[i]);
        t->path[2 * i + 1] = t->path[2 * i] ^ 1u;
    }
    t->n_nodes = n;
    for (unsigned i = 0; i < n; i++) {
        uint32_t below = i, v = leaf[i];
        for (;;) {
            int is_new = stamp[v] == UINT32_MAX;
            if (is_new) {
                uint32_t j = t->n_nodes++;
                stamp[v] = j;
                t->node[j] = v;
                t->parent[j] = PKT_NONE;
                t->path[2 * j] = v == root ? PKT_NONE : reach[v] ^ 1u; /* v -> its parent */
                t->path[2 * j + 1] = v == root ? PKT_NONE : reach[v];
            }
            t->parent[below] = stamp[v];
            if (v == root || !is_new)
                break;
            below = stamp[v];
            v = g->link_src[reach[v]];
        }
    }
    t->root = stamp[root];
    for (unsigned i = 0; i < n; i++) { /* the deepest rank */
        uint32_t hops = 0;
        for (uint32_t j = i; j != t->root; j = t->parent[j])
            hops++;
        if (hops > t->hops_up)
            t->hops_up = hops;
    }
    for (uint32_t j = 0; j < t->n_nodes; j++)
        if (t->parent[j] != PKT_NONE)
            t->child_off[t->parent[j] + 1]++;
    for (uint32_t j = 0; j < t->n_nodes; j++)
        t->child_off[j + 1] += t->child_off[j];
    uint32_t *fill = queue; /* reuse: per tree node, children placed so far */
    memset(fill, 0, t->n_nodes * sizeof *fill);
    for (uint32_t j = 0; j < t->n_nodes; j++)
        if (t->parent[j] != PKT_NONE)
            t->child[t->child_off[t->parent[j]] + fill[t->parent[j]]++] = j;
    free(w);
    return 0;
}

int pkt_sharp_tree(const topo_graph *g, const uint32_t *r, unsigned n, pkt_sharp_tree_info *out,
                   char *why, size_t why_size)
{
    pks_tree t;
    if (!g || !r || !out)
        return pkt_say(why, why_size, "SHARP: missing argument");
    if (tree_build(g, r, n, &t, why, why_size))
        return -1;
    out->root = t.node[t.root];
    out->switches = t.n_nodes - t.n_ranks;
    out->hops_up = t.hops_up;
    out->children = t.n_nodes - 1;
    tree_free(&t);
    return 0;
}

/* ---- the all-reduce on the net ---- */

static void op_release(pks_op *o)
{
    tree_free(&o->t);
    free(o->count);
    free(o->left);
    free(o->last_emit_s);
    o->count = o->left = NULL;
    o->last_emit_s = NULL;
    o->is_live = 0;
}

void pkt_sharp_free(struct pkt_sharp *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; i < s->n_ops; i++)
        if (s->ops[i].is_live)
            op_release(&s->ops[i]);
    free(s->ops);
    free(s);
}

static pks_op *op_of(pkt_net *n, uint32_t id)
{
    return &n->sharp->ops[n->pkts[id].msg & ~PKT_SHARP];
}

/* switch v's counter of packet i (ranks have none) */
static uint32_t *counter(pks_op *o, uint32_t v, uint32_t i)
{
    return &o->count[(size_t)(v - o->t.n_ranks) * o->np + i];
}

static uint32_t children(const pks_tree *t, uint32_t v)
{
    return t->child_off[v + 1] - t->child_off[v];
}

static uint32_t take_packet(pkt_net *n, uint32_t op, uint32_t hop, uint32_t i, uint32_t size)
{
    uint32_t id = n->free_pkt;
    pkt_packet *p = &n->pkts[id];
    n->free_pkt = p->next;
    n->n_free_pkts--;
    *p = (pkt_packet){.path = n->sharp->ops[op].t.path, .msg = PKT_SHARP | op, .next = PKT_NONE,
                      .size = size, .hop = hop, .index = i, .in_link = PKT_NONE};
    return id;
}

static void drop_packet(pkt_net *n, uint32_t id)
{
    n->pkts[id].next = n->free_pkt;
    n->free_pkt = id;
    n->n_free_pkts++;
}

static void push(pkt_net *n, uint32_t id)
{
    uint32_t l = n->pkts[id].path[n->pkts[id].hop];
    pkt_fifo_push(n, l, id);
    pkt_link_try_start(n, l);
}

static void multicast(pkt_net *n, uint32_t id, uint32_t j);

/* packet id (hop = 2v) is ready at switch v: the root sends one copy down
 * to each child, the others send it up */
static void send_on(pkt_net *n, uint32_t id)
{
    uint32_t v = n->pkts[id].hop / 2;
    if (v == op_of(n, id)->t.root)
        multicast(n, id, v);
    else
        push(n, id);
}

static void on_emit(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)eng;
    pkt_net *n = ctx;
    n->stats.events++;
    send_on(n, (uint32_t)data);
}

/* packet id has been summed at switch v (or arrived there on the way
 * down): v's reduction rate limit, then on */
static void emit(pkt_net *n, uint32_t id, uint32_t v)
{
    pks_op *o = op_of(n, id);
    n->pkts[id].hop = 2 * v;
    double now = sim_now(n->eng), t = now;
    if (isfinite(o->rate)) {
        double earliest = o->last_emit_s[v] + n->pkts[id].size / o->rate;
        t = earliest > now ? earliest : now;
        o->last_emit_s[v] = t;
    }
    if (t > now)
        pkt_schedule_at(n, t, PRIO_ARRIVE, KIND_PKT_SHARP_EMIT, on_emit, id);
    else
        send_on(n, id);
}

/* packet id is at switch j on its way down (or summed at the root): one
 * copy to each child; j's counter of packet i counts the copies not yet sent */
static void multicast(pkt_net *n, uint32_t id, uint32_t j)
{
    uint32_t op = n->pkts[id].msg & ~PKT_SHARP;
    uint32_t nc = children(&n->sharp->ops[op].t, j);
    if (pkt_reserve_packets(n, nc - 1)) {
        snprintf(n->error, sizeof n->error, "SHARP: out of memory");
        sim_stop(n->eng);
        return;
    }
    pks_op *o = &n->sharp->ops[op];
    pkt_packet p = n->pkts[id];
    *counter(o, j, p.index) = nc;
    for (uint32_t k = 0; k < nc; k++) {
        uint32_t c = o->t.child[o->t.child_off[j] + k];
        uint32_t cid = k == 0 ? id : take_packet(n, op, 0, p.index, p.size);
        n->pkts[cid].hop = 2 * c + 1;
        push(n, cid);
    }
}

static void op_finish(pkt_net *n, uint32_t op)
{
    pks_op *o = &n->sharp->ops[op];
    pkt_done_fn done = o->done;
    void *ctx = o->ctx;
    uint64_t tag = o->tag;
    op_release(o);
    o->next_free = n->sharp->free_op;
    n->sharp->free_op = op;
    n->stats.sharp_ops++;
    if (done) { /* last: it may start more */
        pkt_pump_arm(n);
        done(ctx, tag);
    }
}

void pkt_sharp_arrive(pkt_net *n, uint32_t l, uint32_t id)
{
    uint32_t op = n->pkts[id].msg & ~PKT_SHARP;
    pks_op *o = &n->sharp->ops[op];
    pkt_packet p = n->pkts[id];
    uint32_t j = p.hop / 2;
    if (p.hop % 2 == 0) { /* up, into switch v */
        uint32_t v = o->t.parent[j];
        pkt_port_hold(n, l, p.size);
        n->stats.sharp_aggregations++;
        uint32_t *c = counter(o, v, p.index);
        if (++*c < children(&o->t, v)) {
            drop_packet(n, id); /* summed: its bytes stay held at its port */
            return;
        }
        *c = 0;
        emit(n, id, v);
    } else if (j < o->t.n_ranks) { /* down, at a rank */
        n->stats.sharp_packets_delivered++;
        n->stats.sharp_bytes_delivered += p.size;
        drop_packet(n, id);
        if (--o->left[j] == 0 && --o->ranks_left == 0)
            op_finish(n, op);
    } else { /* down, at switch j */
        pkt_port_hold(n, l, p.size);
        multicast(n, id, j);
    }
}

/* the children's packets summed into packet i at switch v leave their ports */
static void release_children(pkt_net *n, const pks_op *o, uint32_t v, uint32_t size)
{
    for (uint32_t k = o->t.child_off[v]; k < o->t.child_off[v + 1]; k++)
        pkt_port_release(n, o->t.path[2 * o->t.child[k]], size);
}

void pkt_sharp_sent(pkt_net *n, uint32_t id)
{
    pks_op *o = op_of(n, id);
    const pkt_packet *p = &n->pkts[id];
    uint32_t j = p->hop / 2;
    if (p->hop % 2 == 0) { /* up from j: a switch frees what it summed */
        if (j >= o->t.n_ranks)
            release_children(n, o, j, p->size);
        return;
    }
    uint32_t v = o->t.parent[j]; /* a copy down has left v */
    if (--*counter(o, v, p->index) > 0)
        return;
    if (v == o->t.root)
        release_children(n, o, v, p->size);
    else
        pkt_port_release(n, o->t.path[2 * v + 1], p->size);
}

static uint32_t op_record(pkt_net *n)
{
    if (!n->sharp && !(n->sharp = calloc(1, sizeof *n->sharp)))
        return PKT_NONE;
    struct pkt_sharp *s = n->sharp;
    if (s->n_ops == 0)
        s->free_op = PKT_NONE;
    if (s->free_op == PKT_NONE) {
        uint32_t cap = s->n_ops ? 2 * s->n_ops : 4;
        if (cap >= PKT_SHARP)
            return PKT_NONE;
        pks_op *q = realloc(s->ops, (size_t)cap * sizeof *q);
        if (!q)
            return PKT_NONE;
        s->ops = q;
        memset(q + s->n_ops, 0, (size_t)(cap - s->n_ops) * sizeof *q);
        for (uint32_t i = cap; i-- > s->n_ops;) {
            q[i].next_free = s->free_op;
            s->free_op = i;
        }
        s->n_ops = cap;
    }
    return s->free_op;
}

int pkt_sharp_allreduce(pkt_net *n, const uint32_t *r, unsigned nr, double bytes,
                        double reduction_bytes_per_s, pkt_done_fn done, void *ctx, uint64_t tag)
{
    if (!n || !r)
        return -1;
    if (n->cfg.loss != PKT_LOSSLESS || n->rx || n->df) {
        snprintf(n->error, sizeof n->error, "SHARP: not modelled with a lossy mode, a stalled "
                 "host or per-packet routing on a Dragonfly");
        return -1;
    }
    if (!(bytes > 0) || !isfinite(bytes) || bytes != floor(bytes) ||
        !(reduction_bytes_per_s > 0)) {
        snprintf(n->error, sizeof n->error, "SHARP: bytes must be a positive whole number and "
                 "the reduction rate positive");
        return -1;
    }
    double packets = ceil(bytes / n->cfg.mtu_bytes);
    if (packets > (double)PKT_MAX_PACKETS || packets * nr > (double)(PKT_NONE - 1)) {
        snprintf(n->error, sizeof n->error, "SHARP: too many packets");
        return -1;
    }
    pks_tree t;
    if (tree_build(n->g, r, nr, &t, n->error, sizeof n->error))
        return -1;
    uint32_t np = (uint32_t)packets, op = op_record(n);
    pks_op *o = op == PKT_NONE ? NULL : &n->sharp->ops[op];
    if (o) {
        o->count = calloc((size_t)(t.n_nodes - t.n_ranks) * np, sizeof *o->count);
        o->left = malloc(nr * sizeof *o->left);
        o->last_emit_s = malloc(t.n_nodes * sizeof *o->last_emit_s);
    }
    if (!o || !o->count || !o->left || !o->last_emit_s ||
        pkt_reserve_packets(n, (uint64_t)np * nr)) {
        if (o) {
            o->t = t;
            op_release(o);
        } else {
            tree_free(&t);
        }
        snprintf(n->error, sizeof n->error, "SHARP: out of memory");
        return -1;
    }
    n->sharp->free_op = o->next_free;
    o->t = t;
    o->done = done;
    o->ctx = ctx;
    o->tag = tag;
    o->bytes = bytes;
    o->mtu = n->cfg.mtu_bytes;
    o->rate = reduction_bytes_per_s;
    o->np = np;
    o->ranks_left = nr;
    o->is_live = 1;
    for (uint32_t j = 0; j < t.n_nodes; j++)
        o->last_emit_s[j] = -INFINITY;
    for (unsigned j = 0; j < nr; j++) {
        o->left[j] = np;
        for (uint32_t i = 0; i < np; i++) {
            double size = i + 1 < np ? o->mtu : bytes - (double)(np - 1) * o->mtu;
            uint32_t id = take_packet(n, op, 2 * j, i, (uint32_t)size);
            pkt_fifo_push(n, t.path[2 * j], id);
        }
        n->stats.sharp_bytes_sent += bytes;
    }
    for (unsigned j = 0; j < nr; j++)
        pkt_link_try_start(n, t.path[2 * j]);
    return 0;
}

/* ---- plans (netcoll_in_network.c) ---- */

int pkt_sharp_is_phase(const nc_plan *p, const nc_phase *ph)
{
    return ph->n_conn > 0 && nc_phase_conn(p, ph, 0).dst == NC_FIXED_LINK;
}

/* the ranks of in-network phase ph: the hosts whose links it lists; their
 * count, or -1 with the reason */
static long phase_ranks(const topo_graph *g, const nc_plan *p, const nc_phase *ph, uint32_t *r,
                        char *why, size_t why_size)
{
    long n = 0;
    for (uint32_t k = 0; k < ph->n_conn; k++) {
        nc_conn c = nc_phase_conn(p, ph, k);
        if (c.dst != NC_FIXED_LINK || c.src >= g->n_links)
            return pkt_say(why, why_size, "packet collective: an in-network phase lists a "
                           "connection that is not a link");
        uint32_t a = g->link_src[c.src], b = g->link_dst[c.src];
        if (g->node_kind[b] == TOPO_SCALEUP || g->node_kind[a] == TOPO_SCALEUP)
            return pkt_say(why, why_size, "packet collective: NVLS (in-network reduction inside "
                           "a scale-up domain) is not modelled by the packet tier; SHARP over an "
                           "InfiniBand fabric is");
        if (g->node_kind[b] == TOPO_NIC || g->node_kind[a] == TOPO_NIC)
            return pkt_say(why, why_size, "packet collective: SHARP with GPUs sharing a NIC is "
                           "not modelled by the packet tier");
        if (g->node_kind[a] == TOPO_HOST && r)
            r[n] = a;
        n += g->node_kind[a] == TOPO_HOST;
    }
    return n;
}

int pkt_sharp_plan_check(const topo_graph *g, const nc_plan *p, char *why, size_t why_size)
{
    for (uint32_t i = 0; i < p->n_phases; i++) {
        const nc_phase *ph = &p->phase[i];
        if (!pkt_sharp_is_phase(p, ph))
            continue;
        long n = phase_ranks(g, p, ph, NULL, why, why_size);
        uint32_t *r = n >= 0 ? malloc(((size_t)n + 1) * sizeof *r) : NULL;
        if (n >= 0 && !r)
            return pkt_say(why, why_size, "packet collective: out of memory");
        int rc = n < 0 ? -1 : phase_ranks(g, p, ph, r, why, why_size) < 0;
        pkt_sharp_tree_info info;
        if (!rc)
            rc = pkt_sharp_tree(g, r, (unsigned)n, &info, why, why_size);
        free(r);
        if (rc)
            return -1;
    }
    return 0;
}

int pkt_sharp_start_phase(pkt_net *net, const nc_plan *p, const nc_phase *ph, pkt_done_fn done,
                          void *ctx, uint64_t tag)
{
    long n = phase_ranks(net->g, p, ph, NULL, net->error, sizeof net->error);
    uint32_t *r = n >= 0 ? malloc(((size_t)n + 1) * sizeof *r) : NULL;
    if (n >= 0 && !r)
        snprintf(net->error, sizeof net->error, "SHARP: out of memory");
    int rc = !r ? -1 : phase_ranks(net->g, p, ph, r, NULL, 0) < 0 ? -1
                 : pkt_sharp_allreduce(net, r, (unsigned)n, ceil(ph->bytes),
                                       p->sharp_reduction_bytes_per_s > 0
                                           ? p->sharp_reduction_bytes_per_s /* the switch's */
                                           : ph->rate_cap,
                                       done, ctx, tag);
    free(r);
    return rc;
}
