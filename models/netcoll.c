/* netcoll.c - collective expansions, the flow-model executor and the
 * analytic path (see netcoll.h). */
#include "netcoll.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

#define FAIL(...) return (why && why_size ? snprintf(why, why_size, __VA_ARGS__) : 0), -1

/* NCCL's ring latencies for the Simple protocol (tuning.cc at b6475625,
 * hardware.md 7.3, V): base 8.4 us, NVLink step 3.4 us, network step 14 us.
 * Scenarios override the step latencies per link technology. */
#define NCCL_RING_BASE_LATENCY_S 8.4e-6
#define NCCL_NVLINK_STEP_LATENCY_S 3.4e-6
#define NCCL_NET_STEP_LATENCY_S 14.0e-6

static const char *const coll_names[] = {"allreduce", "reducescatter", "allgather",
                                         "alltoall", "broadcast", "sendrecv"};
static const char *const algo_names[] = {"auto", "ring", "tree", "hd", "hierarchical",
                                         "in-network", "direct"};

const char *nc_collective_name(int c)
{
    return c >= 0 && c < NC_COLLECTIVE_COUNT ? coll_names[c] : "?";
}

const char *nc_algorithm_name(int a)
{
    return a >= 0 && a < NC_ALGORITHM_COUNT ? algo_names[a] : "?";
}

int nc_collective_parse(const char *name, enum nc_collective *out)
{
    for (int i = 0; i < NC_COLLECTIVE_COUNT; i++)
        if (!strcmp(name, coll_names[i]))
            return *out = (enum nc_collective)i, 0;
    return -1;
}

int nc_algorithm_parse(const char *name, enum nc_algorithm *out)
{
    for (int i = 0; i < NC_ALGORITHM_COUNT; i++)
        if (!strcmp(name, algo_names[i]))
            return *out = (enum nc_algorithm)i, 0;
    return -1;
}

double nc_busbw_factor(enum nc_collective c, unsigned n)
{
    if (n < 1)
        return 0;
    switch (c) {
    case NC_ALLREDUCE:
        return 2.0 * (n - 1) / n;
    case NC_REDUCESCATTER:
    case NC_ALLGATHER:
    case NC_ALLTOALL:
        return (double)(n - 1) / n;
    default:
        return 1.0;
    }
}

void nc_fabric_defaults(nc_fabric *f)
{
    memset(f, 0, sizeof *f);
    f->base_latency_s = NCCL_RING_BASE_LATENCY_S;
    f->intra_step_latency_s = NCCL_NVLINK_STEP_LATENCY_S;
    f->inter_step_latency_s = NCCL_NET_STEP_LATENCY_S;
    f->chunks = 4;
}

/* ---- plan building ---- */

void nc_plan_free(nc_plan *p)
{
    free(p->phase);
    free(p->conn);
    free(p->deps);
    memset(p, 0, sizeof *p);
}

static int grow(void **a, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    if (c > UINT32_MAX)
        return -1;
    void *q = realloc(*a, c * elem);
    if (!q)
        return -1;
    *a = q;
    *cap = (uint32_t)c;
    return 0;
}

/* A new phase depending on deps[0..nd); returns its index (UINT32_MAX when
 * out of memory). Connections are added next with add_conn. */
static uint32_t add_phase(nc_plan *p, double bytes, double latency_s, double cap, int coupled,
                          const uint32_t *deps, uint32_t nd)
{
    if (p->failed || grow((void **)&p->phase, &p->cap_phases, p->n_phases + 1, sizeof *p->phase) ||
        grow((void **)&p->deps, &p->cap_deps, p->n_deps + nd, sizeof *p->deps)) {
        p->failed = 1;
        return UINT32_MAX;
    }
    nc_phase *ph = &p->phase[p->n_phases];
    *ph = (nc_phase){.conn_first = p->n_conns, .bytes = bytes, .latency_s = latency_s,
                     .rate_cap = cap, .coupled = coupled, .dep_first = p->n_deps, .n_deps = nd};
    for (uint32_t i = 0; i < nd; i++)
        if (deps[i] != UINT32_MAX)
            p->deps[p->n_deps++] = deps[i];
    ph->n_deps = p->n_deps - ph->dep_first;
    return p->n_phases++;
}

/* Append a connection to the last phase. */
static void add_conn(nc_plan *p, uint32_t src, uint32_t dst, double weight)
{
    if (p->failed || grow((void **)&p->conn, &p->cap_conns, p->n_conns + 1, sizeof *p->conn)) {
        p->failed = 1;
        return;
    }
    p->conn[p->n_conns++] = (nc_conn){src, dst, weight};
    p->phase[p->n_phases - 1].n_conn++;
}

static uint32_t domain_of(const topo_graph *g, uint32_t host)
{
    uint32_t d = g->node_group[host];
    return d == TOPO_NO_GROUP ? 0x80000000u | host : d;
}

/* Ranks in consecutive blocks of k >= 2 that share a scale-up domain, each
 * block in another domain than the one before (whole nodes, or the k GPUs a
 * data-parallel group has in every node): returns the number of blocks
 * (>= 2) and sets *k, else 0. */
static unsigned domain_blocks(const nc_fabric *f, const uint32_t *r, unsigned n, unsigned *k)
{
    unsigned b = 1;
    while (b < n && domain_of(f->g, r[b]) == domain_of(f->g, r[0]))
        b++;
    if (b < 2 || n % b || n / b < 2)
        return 0;
    for (unsigned m = 0; m < n / b; m++)
        for (unsigned i = 0; i < b; i++) {
            if (domain_of(f->g, r[m * b + i]) != domain_of(f->g, r[m * b]))
                return 0;
            if (m && domain_of(f->g, r[m * b]) == domain_of(f->g, r[(m - 1) * b]))
                return 0;
        }
    *k = b;
    return n / b;
}

/* Ranks fill whole scale-up domains of g GPUs, consecutively: returns the
 * number of domains (1 for one whole domain), else 0. */
static unsigned whole_domains(const nc_fabric *f, const uint32_t *r, unsigned n)
{
    unsigned g = f->domain_size, k = 0, m = domain_blocks(f, r, n, &k);
    if (m)
        return k == g ? m : 0;
    if (g < 2 || n != g)
        return 0;
    for (unsigned i = 1; i < n; i++)
        if (domain_of(f->g, r[i]) != domain_of(f->g, r[0]))
            return 0;
    return 1;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Distinct scale-up domains among the ranks (a host without one is its own);
 * sorts a copy: O(n log n). 0 when out of memory. */
static unsigned count_domains(const nc_fabric *f, const uint32_t *r, unsigned n)
{
    uint32_t *d = malloc(((size_t)n + 1) * sizeof *d);
    if (!d)
        return 0;
    for (unsigned i = 0; i < n; i++)
        d[i] = domain_of(f->g, r[i]);
    qsort(d, n, sizeof *d, cmp_u32);
    unsigned m = n ? 1 : 0;
    for (unsigned i = 1; i < n; i++)
        m += d[i] != d[i - 1];
    free(d);
    return m;
}

/* The ring order of channel c (see netcoll.h): rail-aware rotation when the
 * ranks come in blocks of g per domain, else the ranks as given. */
static void ring_order(const uint32_t *r, unsigned n, unsigned domains, unsigned g, unsigned c,
                       uint32_t *order)
{
    if (!domains || domains < 2) {
        memcpy(order, r, n * sizeof *r);
        return;
    }
    for (unsigned m = 0; m < domains; m++) {
        unsigned e = (unsigned)(((long)c - (long)m) % (long)g + (long)g) % g;
        for (unsigned i = 0; i < g; i++)
            order[m * g + i] = r[m * g + (e + i) % g];
    }
}

/* The NCCL latency of k rounds of an n-rank ring over m domains. */
static double ring_latency(const nc_fabric *f, unsigned n, unsigned m, unsigned k)
{
    double steps = (double)k * (n - 1), inter = m > 1 ? (double)k * (m - 1) : 0;
    return f->base_latency_s + (steps - inter) * f->intra_step_latency_s +
           inter * f->inter_step_latency_s;
}

static unsigned channels_of(const nc_fabric *f)
{
    if (f->channels)
        return f->channels;
    return f->domain_size ? f->domain_size : 1;
}

static int build_ring(nc_plan *p, const nc_fabric *f, const uint32_t *r, unsigned n,
                      double bytes, double factor, unsigned rounds, int closed)
{
    unsigned k = 1, domains = domain_blocks(f, r, n, &k);
    /* channels spread a ring over the NICs of the k GPUs it has in every
     * node; ranks one per node have one NIC each, where more channels
     * change nothing */
    unsigned C = f->channels ? f->channels : domains ? k : 1;
    unsigned m = domains ? domains : count_domains(f, r, n);
    uint32_t *order = malloc((size_t)n * sizeof *order);
    if (!order)
        return -1;
    for (unsigned c = 0; c < C; c++) {
        ring_order(r, n, domains, k, c, order);
        add_phase(p, bytes / C * factor, ring_latency(f, n, m, rounds), INFINITY, 1, NULL, 0);
        for (unsigned i = 0; i + (closed ? 0 : 1) < n; i++)
            add_conn(p, order[i], order[(i + 1) % n], 1.0);
    }
    free(order);
    return p->failed ? -1 : 0;
}

/* Parent of node i (0 .. m-1) in tree t of NCCL-like double binary trees:
 * tree 0 is the heap-ordered binary tree, tree 1 its mirror image (node i
 * plays node m-1-i), so the leaves of one are inner nodes of the other. */
static long tree_parent(unsigned i, unsigned m, unsigned t)
{
    unsigned j = t ? m - 1 - i : i;
    if (j == 0)
        return -1;
    unsigned pj = (j - 1) / 2;
    return t ? (long)(m - 1 - pj) : (long)pj;
}

static int build_tree(nc_plan *p, const nc_fabric *f, const uint32_t *r, unsigned n, double bytes)
{
    unsigned domains = whole_domains(f, r, n);
    unsigned g = domains ? f->domain_size : 1, m = domains ? domains : n;
    unsigned C = channels_of(f);
    double depth = ceil(log2((double)m));
    double lat = f->base_latency_s + 2 * ((g - 1) * f->intra_step_latency_s +
                                          depth * f->inter_step_latency_s);
    for (unsigned c = 0; c < C; c++)
        for (unsigned t = 0; t < 2; t++) {
            unsigned nic = (2 * c + t) % g; /* the local GPU whose NIC this tree uses */
            add_phase(p, bytes / (2.0 * C), lat, INFINITY, 1, NULL, 0);
            for (unsigned d = 0; d < m; d++) {
                const uint32_t *loc = r + (size_t)d * g;
                for (unsigned i = 0; i + 1 < g; i++) { /* chain up and down in the domain */
                    uint32_t a = loc[(nic + i) % g], b = loc[(nic + i + 1) % g];
                    add_conn(p, b, a, 1.0);
                    add_conn(p, a, b, 1.0);
                }
                long par = tree_parent(d, m, t);
                if (par >= 0) { /* reduce to the parent, broadcast back */
                    uint32_t child = loc[nic], parent = r[(size_t)par * g + nic];
                    add_conn(p, child, parent, 1.0);
                    add_conn(p, parent, child, 1.0);
                }
            }
        }
    return p->failed ? -1 : 0;
}

static int build_hd(nc_plan *p, const nc_fabric *f, const uint32_t *r, unsigned n, double bytes,
                    char *why, size_t why_size)
{
    if (n & (n - 1))
        FAIL("halving-doubling needs a power-of-two number of ranks, got %u", n);
    unsigned steps = 0;
    while ((1u << steps) < n)
        steps++;
    uint32_t prev = UINT32_MAX;
    for (unsigned s = 0; s < 2 * steps; s++) {
        unsigned j = s < steps ? s : 2 * steps - 1 - s; /* all-gather mirrors the scatter */
        unsigned dist = 1u << j;
        int inter = 0;
        for (unsigned i = 0; i < n && !inter; i++)
            inter = domain_of(f->g, r[i]) != domain_of(f->g, r[i ^ dist]);
        double lat = (inter ? f->inter_step_latency_s : f->intra_step_latency_s) +
                     (s == 0 ? f->base_latency_s : 0);
        prev = add_phase(p, bytes / (double)(2u << j), lat, INFINITY, 1, &prev, 1);
        for (unsigned i = 0; i < n; i++)
            add_conn(p, r[i], r[i ^ dist], 1.0);
    }
    return p->failed ? -1 : 0;
}

static int build_hierarchical(nc_plan *p, const nc_fabric *f, const uint32_t *r, unsigned n,
                              double bytes, char *why, size_t why_size)
{
    unsigned m = whole_domains(f, r, n), g = f->domain_size;
    if (m < 2)
        FAIL("hierarchical all-reduce needs the ranks to fill two or more whole scale-up "
             "domains of %u GPUs in order, got %u ranks", g, n);
    unsigned K = f->chunks ? f->chunks : 1;
    double chunk = bytes / K;
    uint32_t prev_chunk[3] = {UINT32_MAX, UINT32_MAX, UINT32_MAX};
    for (unsigned k = 0; k < K; k++) {
        uint32_t prev = UINT32_MAX;
        for (unsigned ph = 0; ph < 3; ph++) {
            uint32_t deps[2] = {prev, prev_chunk[ph]};
            double lat, b;
            if (ph == 1) {
                b = chunk / g * 2.0 * (m - 1) / m;
                lat = 2.0 * (m - 1) * f->inter_step_latency_s;
            } else {
                b = chunk * (g - 1) / g;
                lat = (g - 1) * f->intra_step_latency_s;
            }
            if (k == 0 && ph == 0)
                lat += f->base_latency_s;
            prev = add_phase(p, b, lat, INFINITY, 1, deps, 2);
            prev_chunk[ph] = prev;
            if (ph == 1) {
                for (unsigned i = 0; i < g; i++) /* one ring per local rank (rail) */
                    for (unsigned d = 0; d < m; d++)
                        add_conn(p, r[(size_t)d * g + i], r[(size_t)((d + 1) % m) * g + i], 1.0);
            } else {
                for (unsigned d = 0; d < m; d++)
                    for (unsigned i = 0; i < g; i++)
                        add_conn(p, r[(size_t)d * g + i], r[(size_t)d * g + (i + 1) % g], 1.0);
            }
        }
    }
    return p->failed ? -1 : 0;
}

/* The host's link into a node of the given kind, or UINT32_MAX. */
static uint32_t host_link(const topo_graph *g, uint32_t host, enum topo_node_kind kind)
{
    for (uint32_t i = g->out_offset[host]; i < g->out_offset[host + 1]; i++) {
        uint32_t l = g->out_links[i];
        if (g->node_kind[g->link_dst[l]] == kind)
            return l;
    }
    return UINT32_MAX;
}

static int build_in_network(nc_plan *p, const nc_fabric *f, const uint32_t *r, unsigned n,
                            double bytes, char *why, size_t why_size)
{
    int one_domain = count_domains(f, r, n) == 1 && f->domain_size > 1;
    enum topo_node_kind kind = one_domain ? TOPO_SCALEUP : TOPO_SWITCH;
    double cap = one_domain ? f->scaleup_reduction_bytes_per_s : f->fabric_reduction_bytes_per_s;
    if (!(cap > 0))
        FAIL("in-network reduction is not available %s (no reduction bandwidth for the link "
             "technology)", one_domain ? "in this scale-up domain" : "on this fabric");
    double lat = one_domain ? f->scaleup_reduction_latency_s
                            : f->base_latency_s + 2 * f->inter_step_latency_s;
    add_phase(p, bytes, lat, cap, 1, NULL, 0);
    for (unsigned i = 0; i < n; i++) {
        uint32_t up = host_link(f->g, r[i], kind);
        if (up == UINT32_MAX)
            FAIL("rank %u (host %u) has no link for in-network reduction", i, r[i]);
        add_conn(p, up, NC_FIXED_LINK, 1.0);
        add_conn(p, up ^ 1u, NC_FIXED_LINK, 1.0); /* the reduced data coming back */
    }
    return p->failed ? -1 : 0;
}

static enum nc_algorithm resolve_auto(const nc_fabric *f, enum nc_collective c,
                                      const uint32_t *r, unsigned n)
{
    if (c == NC_ALLTOALL || c == NC_SENDRECV)
        return NC_ALGO_DIRECT;
    if (c == NC_ALLREDUCE && f->domain_size > 1 && f->scaleup_reduction_bytes_per_s > 0 &&
        count_domains(f, r, n) == 1)
        return NC_ALGO_IN_NETWORK; /* NCCL's choice on one NVSwitch node (NVLS) */
    return NC_ALGO_RING;
}

int nc_plan_build(nc_plan *p, const nc_fabric *f, enum nc_collective coll,
                  enum nc_algorithm algo, const uint32_t *r, unsigned n, double bytes,
                  char *why, size_t why_size)
{
    memset(p, 0, sizeof *p);
    return nc_plan_append(p, f, coll, algo, r, n, bytes, why, why_size);
}

int nc_plan_append(nc_plan *p, const nc_fabric *f, enum nc_collective coll,
                   enum nc_algorithm algo, const uint32_t *r, unsigned n, double bytes,
                   char *why, size_t why_size)
{
    if (n < 2)
        FAIL("a collective needs at least 2 ranks, got %u", n);
    if (!(bytes >= 0) || !isfinite(bytes))
        FAIL("message size must be a finite number of bytes >= 0");
    for (unsigned i = 0; i < n; i++)
        if (r[i] >= f->g->n_nodes || f->g->node_kind[r[i]] != TOPO_HOST)
            FAIL("rank %u: node %u is not a host of the topology", i, r[i]);
    if (algo == NC_ALGO_AUTO)
        algo = resolve_auto(f, coll, r, n);
    p->coll = coll;
    p->algo = algo;
    p->ranks = n;
    p->bytes = bytes;
    int ok_combo = algo == NC_ALGO_RING ? coll != NC_ALLTOALL && coll != NC_SENDRECV
                   : algo == NC_ALGO_DIRECT ? coll == NC_ALLTOALL || coll == NC_SENDRECV
                                            : coll == NC_ALLREDUCE;
    if (!ok_combo)
        FAIL("algorithm %s does not implement %s", nc_algorithm_name(algo),
             nc_collective_name(coll));
    int rc = 0;
    switch (algo) {
    case NC_ALGO_RING:
        if (coll == NC_ALLREDUCE)
            rc = build_ring(p, f, r, n, bytes, 2.0 * (n - 1) / n, 2, 1);
        else if (coll == NC_BROADCAST)
            rc = build_ring(p, f, r, n, bytes, 1.0, 1, 0);
        else
            rc = build_ring(p, f, r, n, bytes, (double)(n - 1) / n, 1, 1);
        break;
    case NC_ALGO_TREE:
        rc = build_tree(p, f, r, n, bytes);
        break;
    case NC_ALGO_HALVING_DOUBLING:
        return build_hd(p, f, r, n, bytes, why, why_size);
    case NC_ALGO_HIERARCHICAL:
        return build_hierarchical(p, f, r, n, bytes, why, why_size);
    case NC_ALGO_IN_NETWORK:
        return build_in_network(p, f, r, n, bytes, why, why_size);
    case NC_ALGO_DIRECT: {
        double step = count_domains(f, r, n) > 1 ? f->inter_step_latency_s
                                                 : f->intra_step_latency_s;
        if (coll == NC_SENDRECV) {
            add_phase(p, bytes, f->base_latency_s + step, INFINITY, 0, NULL, 0);
            add_conn(p, r[0], r[1], 1.0);
        } else {
            /* one coupled flow per rank: its n-1 sends progress together, as
             * NCCL's grouped send/recv does; n flows instead of n(n-1) */
            for (unsigned i = 0; i < n; i++) {
                add_phase(p, bytes / n, f->base_latency_s + step, INFINITY, 1, NULL, 0);
                for (unsigned j = 1; j < n; j++)
                    add_conn(p, r[i], r[(i + j) % n], 1.0);
            }
        }
        rc = p->failed ? -1 : 0;
        break;
    }
    default:
        FAIL("unknown algorithm");
    }
    if (rc)
        FAIL("out of memory for the collective plan");
    return 0;
}

/* ---- routing a phase ---- */

typedef struct route_buf {
    topo_usage *one;    /* one route, n_links entries */
    topo_usage *all;    /* the phase's usages (coupled) */
    size_t n_all, cap_all;
} route_buf;

static int append(route_buf *b, const topo_usage *u, size_t k, double w)
{
    if (b->n_all + k > b->cap_all) {
        size_t c = b->cap_all ? b->cap_all : 1024;
        while (c < b->n_all + k)
            c *= 2;
        topo_usage *q = realloc(b->all, c * sizeof *q);
        if (!q)
            return -1;
        b->all = q;
        b->cap_all = c;
    }
    for (size_t i = 0; i < k; i++)
        b->all[b->n_all++] = (topo_usage){u[i].link, u[i].weight * w};
    return 0;
}

/* Route connection c into b->one; returns the usage count or -1. */
/* Why routing a connection failed: no memory for the hop tables (-2), or
 * no path (-1). */
static void route_failure(char *why, size_t why_size, long rc, const nc_conn *c)
{
    if (rc == -2)
        snprintf(why, why_size, "out of memory for the routing tables (routing host %u to host "
                 "%u): the fabric is too large for this machine's memory", c->src, c->dst);
    else
        snprintf(why, why_size, "no route from host %u to host %u", c->src, c->dst);
}

static long route_conn(const nc_fabric *f, const nc_conn *c, uint64_t key, const double *load,
                       route_buf *b)
{
    if (c->dst == NC_FIXED_LINK) {
        b->one[0] = (topo_usage){c->src, 1.0};
        return 1;
    }
    return topo_route(f->router, c->src, c->dst, key, load, b->one, f->g->n_links);
}

/* ---- flow-model executor ---- */

typedef struct executor {
    const nc_plan *p;
    const nc_fabric *f;
    sim_engine *eng;
    flow_net *net;
    uint32_t *deps_left, *flows_left;
    uint32_t *next_offset, *next;   /* dependents of each phase (CSR) */
    route_buf buf;
    double end;
    int failed;
    char why[256];
} executor;

static void phase_done(sim_engine *eng, void *ctx, uint64_t data);

static void start_phase(executor *x, uint32_t i)
{
    const nc_phase *ph = &x->p->phase[i];
    const double *load = flow_net_link_load(x->net);
    x->buf.n_all = 0;
    x->flows_left[i] = ph->coupled ? 1 : ph->n_conn;
    if (ph->n_conn == 0) {
        sim_schedule_in(x->eng, ph->latency_s, 0, 60, phase_done, x, i);
        return;
    }
    for (uint32_t k = 0; k < ph->n_conn; k++) {
        const nc_conn *c = &x->p->conn[ph->conn_first + k];
        uint64_t key = ((uint64_t)i << 32) ^ k;
        long nu = route_conn(x->f, c, key, load, &x->buf);
        if (nu < 0) {
            x->failed = 1;
            route_failure(x->why, sizeof x->why, nu, c);
            sim_stop(x->eng);
            return;
        }
        if (ph->coupled) {
            if (append(&x->buf, x->buf.one, (size_t)nu, c->weight)) {
                x->failed = 1;
                sim_stop(x->eng);
                return;
            }
            flow_net_bias_load(x->net, x->buf.all + x->buf.n_all - nu, (size_t)nu, +1);
        } else if (flow_start(x->net, x->buf.one, (size_t)nu, ph->bytes * c->weight, ph->rate_cap,
                              0, i) == UINT32_MAX) {
            x->failed = 1;
            sim_stop(x->eng);
            return;
        }
    }
    if (ph->coupled) {
        if (flow_start(x->net, x->buf.all, x->buf.n_all, ph->bytes, ph->rate_cap, 0, i) ==
            UINT32_MAX) {
            x->failed = 1;
            sim_stop(x->eng);
        }
        flow_net_bias_load(x->net, x->buf.all, x->buf.n_all, -1);
    }
}

static void phase_done(sim_engine *eng, void *ctx, uint64_t data)
{
    executor *x = ctx;
    uint32_t i = (uint32_t)data;
    double now = sim_now(eng);
    if (now > x->end)
        x->end = now;
    for (uint32_t k = x->next_offset[i]; k < x->next_offset[i + 1]; k++)
        if (--x->deps_left[x->next[k]] == 0)
            start_phase(x, x->next[k]);
}

static void flow_finished(void *ctx, uint32_t flow, uint64_t tag)
{
    (void)flow;
    executor *x = ctx;
    uint32_t i = (uint32_t)tag;
    if (--x->flows_left[i] == 0)
        sim_schedule_in(x->eng, x->p->phase[i].latency_s, 0, 60, phase_done, x, i);
}

static int build_dependents(const nc_plan *p, uint32_t **offset, uint32_t **next)
{
    *offset = calloc((size_t)p->n_phases + 2, sizeof **offset);
    *next = malloc(((size_t)p->n_deps + 1) * sizeof **next);
    if (!*offset || !*next)
        return -1;
    for (uint32_t i = 0; i < p->n_phases; i++)
        for (uint32_t k = 0; k < p->phase[i].n_deps; k++)
            (*offset)[p->deps[p->phase[i].dep_first + k] + 1]++;
    for (uint32_t i = 0; i < p->n_phases; i++)
        (*offset)[i + 1] += (*offset)[i];
    uint32_t *fill = calloc((size_t)p->n_phases + 1, sizeof *fill);
    if (!fill)
        return -1;
    for (uint32_t i = 0; i < p->n_phases; i++)
        for (uint32_t k = 0; k < p->phase[i].n_deps; k++) {
            uint32_t d = p->deps[p->phase[i].dep_first + k];
            (*next)[(*offset)[d] + fill[d]++] = i;
        }
    free(fill);
    return 0;
}

int nc_plan_permutation(nc_plan *p, const nc_fabric *f, const uint32_t *src, const uint32_t *dst,
                        unsigned n, double bytes, char *why, size_t why_size)
{
    memset(p, 0, sizeof *p);
    if (!n)
        FAIL("a permutation needs at least one pair");
    for (unsigned i = 0; i < n; i++)
        if (src[i] >= f->g->n_nodes || dst[i] >= f->g->n_nodes ||
            f->g->node_kind[src[i]] != TOPO_HOST || f->g->node_kind[dst[i]] != TOPO_HOST)
            FAIL("pair %u: %u -> %u is not a pair of hosts", i, src[i], dst[i]);
    p->coll = NC_SENDRECV;
    p->algo = NC_ALGO_DIRECT;
    p->ranks = 2;
    p->bytes = bytes;
    add_phase(p, bytes, f->base_latency_s + f->inter_step_latency_s, INFINITY, 0, NULL, 0);
    for (unsigned i = 0; i < n; i++)
        add_conn(p, src[i], dst[i], 1.0);
    if (p->failed)
        FAIL("out of memory for the collective plan");
    return 0;
}

static void fill_result(const nc_plan *p, double t, nc_result *out)
{
    out->time_s = t;
    out->algbw = t > 0 ? p->bytes / t : INFINITY;
    out->busbw = out->algbw * nc_busbw_factor(p->coll, p->ranks);
}

int nc_simulate(const nc_plan *p, const nc_fabric *f, nc_result *out, char *why, size_t why_size)
{
    memset(out, 0, sizeof *out);
    executor x = {.p = p, .f = f};
    int rc = -1;
    x.eng = sim_engine_create();
    x.deps_left = malloc(((size_t)p->n_phases + 1) * sizeof *x.deps_left);
    x.flows_left = calloc((size_t)p->n_phases + 1, sizeof *x.flows_left);
    x.buf.one = malloc(((size_t)f->g->n_links + 1) * sizeof *x.buf.one);
    if (!x.eng || !x.deps_left || !x.flows_left || !x.buf.one ||
        build_dependents(p, &x.next_offset, &x.next))
        goto done;
    x.net = flow_net_create(x.eng, f->g->n_links, f->g->link_bytes_per_s, flow_finished, &x);
    if (!x.net || (f->incast_efficiency && flow_net_set_incast(x.net, f->incast_efficiency)))
        goto done;
    for (uint32_t i = 0; i < p->n_phases; i++)
        x.deps_left[i] = p->phase[i].n_deps;
    for (uint32_t i = 0; i < p->n_phases && !x.failed; i++)
        if (x.deps_left[i] == 0)
            start_phase(&x, i);
    if (!x.failed)
        sim_run(x.eng, INFINITY);
    if (x.failed) {
        snprintf(why, why_size, "%s", x.why[0] ? x.why : "out of memory in the flow model");
        goto done;
    }
    fill_result(p, x.end, out);
    const flow_stats *st = flow_net_stats(x.net);
    out->flows = st->flows_started;
    out->recomputes = st->recomputes;
    out->events = sim_events_fired(x.eng);
    out->max_active_flows = st->max_active;
    rc = 0;
done:
    if (rc && why && why_size && !why[0])
        snprintf(why, why_size, "out of memory in the flow model");
    flow_net_destroy(x.net);
    sim_engine_destroy(x.eng);
    free(x.deps_left);
    free(x.flows_left);
    free(x.next_offset);
    free(x.next);
    free(x.buf.one);
    free(x.buf.all);
    return rc;
}

/* ---- analytic path ---- */

typedef struct unit {
    uint32_t phase;
    size_t first, n;   /* usages in the level's buffer */
    double bytes;
} unit;

int nc_analytic(const nc_plan *p, const nc_fabric *f, nc_result *out, char *why,
                size_t why_size)
{
    memset(out, 0, sizeof *out);
    const topo_graph *g = f->g;
    uint32_t *depth = calloc((size_t)p->n_phases + 1, sizeof *depth);
    /* per-level load: borrowed zeros (every level resets what it touched) */
    double *load = f->scratch ? f->scratch : calloc((size_t)g->n_links + 1, sizeof *load);
    route_buf b = {0};
    b.one = malloc(((size_t)g->n_links + 1) * sizeof *b.one);
    unit *units = NULL;
    uint32_t *unit_links = NULL; /* the links of every unit of a level; the rates need
                                    only link ids, the weights are in load[] */
    size_t n_links = 0, cap_links = 0;
    size_t n_units = 0, cap_units = 0;
    uint32_t max_depth = 0;
    int rc = -1;
    if (!depth || !load || !b.one)
        goto done;
    for (uint32_t i = 0; i < p->n_phases; i++) { /* phases come in topological order */
        for (uint32_t k = 0; k < p->phase[i].n_deps; k++) {
            uint32_t d = depth[p->deps[p->phase[i].dep_first + k]] + 1;
            if (d > depth[i])
                depth[i] = d;
        }
        if (depth[i] > max_depth)
            max_depth = depth[i];
    }
    double total = 0;
    for (uint32_t level = 0; level <= max_depth; level++) {
        n_links = 0;
        n_units = 0;
        for (uint32_t i = 0; i < p->n_phases; i++) {
            if (depth[i] != level)
                continue;
            const nc_phase *ph = &p->phase[i];
            for (uint32_t k = 0; k < ph->n_conn; k++) {
                const nc_conn *c = &p->conn[ph->conn_first + k];
                long nu = route_conn(f, c, ((uint64_t)i << 32) ^ k, load, &b);
                if (nu < 0) {
                    route_failure(why, why_size, nu, c);
                    goto done;
                }
                if (!ph->coupled || k == 0) {
                    if (n_units == cap_units) {
                        cap_units = cap_units ? 2 * cap_units : 64;
                        unit *q = realloc(units, cap_units * sizeof *q);
                        if (!q)
                            goto done;
                        units = q;
                    }
                    units[n_units++] = (unit){i, n_links, 0, ph->bytes * (ph->coupled ? 1 : c->weight)};
                }
                if (n_links + (size_t)nu > cap_links) {
                    size_t cap = cap_links ? 2 * cap_links : 4096;
                    while (cap < n_links + (size_t)nu)
                        cap *= 2;
                    uint32_t *q = realloc(unit_links, cap * sizeof *q);
                    if (!q)
                        goto done;
                    unit_links = q;
                    cap_links = cap;
                }
                for (long u = 0; u < nu; u++)
                    unit_links[n_links + (size_t)u] = b.one[u].link;
                n_links += (size_t)nu;
                units[n_units - 1].n += (size_t)nu;
                for (long u = 0; u < nu; u++)
                    load[b.one[u].link] += b.one[u].weight * c->weight;
            }
        }
        double level_time = 0;
        for (size_t u = 0; u < n_units; u++) {
            const nc_phase *ph = &p->phase[units[u].phase];
            double rate = ph->rate_cap;
            for (size_t k = units[u].first; k < units[u].first + units[u].n; k++) {
                uint32_t l = unit_links[k];
                double cap = g->link_bytes_per_s[l];
                if (f->incast_efficiency && load[l] > 1 + 1e-9)
                    cap *= f->incast_efficiency[l]; /* more than one flow's worth converges */
                double r = cap / load[l];
                if (r < rate)
                    rate = r;
            }
            double t = (units[u].n || isfinite(rate) ? units[u].bytes / rate : 0) + ph->latency_s;
            if (units[u].bytes == 0)
                t = ph->latency_s;
            if (t > level_time)
                level_time = t;
        }
        for (size_t k = 0; k < n_links; k++) {
            uint32_t l = unit_links[k];
            if (load[l] > 0 && g->node_kind[g->link_src[l]] == TOPO_SWITCH &&
                g->node_kind[g->link_dst[l]] == TOPO_SWITCH) {
                out->fabric_links_used++;
                out->fabric_links_colliding += load[l] > 1 + 1e-9;
            }
            load[l] = 0;
        }
        total += level_time;
    }
    fill_result(p, total, out);
    rc = 0;
done:
    if (rc && why && why_size && !why[0])
        snprintf(why, why_size, "out of memory in the analytic path");
    free(depth);
    if (f->scratch) /* a failed level leaves its loads: give back zeros */
        for (size_t k = 0; k < n_links && unit_links; k++)
            load[unit_links[k]] = 0;
    else
        free(load);
    free(b.one);
    free(unit_links);
    free(units);
    return rc;
}

int nc_link_bytes(const nc_plan *p, const nc_fabric *f, double scale, double *bytes,
                  uint32_t *touched, size_t *n_touched, char *why, size_t why_size)
{
    const topo_graph *g = f->g;
    /* the routing load: borrowed zeros, reset link by link afterwards */
    double *load = f->scratch ? f->scratch : calloc((size_t)g->n_links + 1, sizeof *load);
    uint32_t *seen = malloc(((size_t)g->n_links + 1) * sizeof *seen);
    size_t n_seen = 0;
    route_buf b = {0};
    b.one = malloc(((size_t)g->n_links + 1) * sizeof *b.one);
    int rc = -1;
    if (!load || !b.one || !seen) {
        snprintf(why, why_size, "out of memory");
        goto done;
    }
    for (uint32_t i = 0; i < p->n_phases; i++) {
        const nc_phase *ph = &p->phase[i];
        for (uint32_t k = 0; k < ph->n_conn; k++) {
            const nc_conn *c = &p->conn[ph->conn_first + k];
            long nu = route_conn(f, c, ((uint64_t)i << 32) ^ k, load, &b);
            if (nu < 0) {
                route_failure(why, why_size, nu, c);
                goto done;
            }
            for (long u = 0; u < nu; u++) {
                uint32_t l = b.one[u].link;
                if (load[l] == 0)
                    seen[n_seen++] = l;
                load[l] += b.one[u].weight * c->weight;
                double add = scale * ph->bytes * c->weight * b.one[u].weight;
                if (touched && bytes[l] == 0 && add > 0)
                    touched[(*n_touched)++] = l;
                bytes[l] += add;
            }
        }
    }
    rc = 0;
done:
    for (size_t i = 0; load && i < n_seen; i++)
        load[seen[i]] = 0;
    if (!f->scratch)
        free(load);
    free(seen);
    free(b.one);
    return rc;
}
