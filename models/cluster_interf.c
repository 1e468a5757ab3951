/* cluster_interf.c - the interference pacer (cluster_interf.h): per job its
 * ring all-reduce plan (or, with a layout, every collective of its class in
 * every group at once: cluster_layout.c) and the links it routes on (idle
 * fabric); per re-time
 * the components of "shares a link" (union-find over a per-link owner
 * stamped with the re-time's epoch), each component's all-reduce times from
 * the LRU cache or one flow simulation of its members' plans started
 * together (netcoll_exec.h), and the paces from them.
 */
#include "cluster_interf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netcoll_exec.h"

typedef struct ijob {
    nc_plan plan;         /* n_phases 0: no communication */
    uint32_t *links;      /* the links its all-reduce uses, sorted */
    uint32_t n_links;
    uint64_t digest;
    double compute_s, comm_s; /* isolated iteration */
    double hidden_s;          /* the communication the compute hides: overlap x compute_s */
    int is_running;
} ijob;

typedef struct centry {
    uint64_t hash;
    uint32_t n;
    uint64_t *digest;     /* n, sorted */
    double *comm_s;       /* n, in digest order */
    uint32_t prev, next;  /* LRU list (head: most recent) */
    uint32_t chain;       /* next in the hash bucket */
} centry;

#define NIL UINT32_MAX

struct cluster_interf {
    const fabric *f;
    cluster_traffic_table tt;
    cluster_pacer pacer;
    ijob *job;
    uint32_t cap_job;
    /* per link: the member that owns it in this epoch */
    uint32_t *link_owner, *link_epoch, epoch;
    double *link_scratch; /* n_links zeros for nc_link_bytes */
    /* links two jobs or more use: since last_now (shared_now), and seconds so far */
    uint32_t *link_shared_epoch, *shared_now, n_shared_now;
    double *link_shared_s, last_now;
    uint32_t *touched;
    /* per re-time scratch, by position in the ids handed over */
    uint32_t *parent, *order, cap_run;
    uint64_t *key;
    double *times;
    /* one engine and executor, reset between simulations (netcoll_exec.h:
     * the same rates and events as new ones) */
    sim_engine *eng;
    nc_exec *ex;
    /* the cache */
    centry *e;
    uint32_t cap_e, n_e, lru_head, lru_tail, *bucket, n_bucket;
    cluster_interf_stats st;
};

const cluster_traffic *cluster_traffic_of(const cluster_traffic_table *tt, uint32_t n)
{
    for (unsigned k = 0; k < tt->n_sized; k++)
        if (tt->sized_gpus[k] == n)
            return &tt->sized[k];
    unsigned best = 0;
    for (unsigned i = 1; i < tt->n; i++)
        if (tt->from_gpus[i] <= n && tt->from_gpus[i] >= tt->from_gpus[best])
            best = i;
    return &tt->t[best];
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 29);
}

static uint64_t bits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

/* ---- the LRU cache ---- */

static void lru_unlink(cluster_interf *x, uint32_t i)
{
    centry *e = &x->e[i];
    if (e->prev != NIL)
        x->e[e->prev].next = e->next;
    else
        x->lru_head = e->next;
    if (e->next != NIL)
        x->e[e->next].prev = e->prev;
    else
        x->lru_tail = e->prev;
}

static void lru_front(cluster_interf *x, uint32_t i)
{
    centry *e = &x->e[i];
    e->prev = NIL;
    e->next = x->lru_head;
    if (x->lru_head != NIL)
        x->e[x->lru_head].prev = i;
    x->lru_head = i;
    if (x->lru_tail == NIL)
        x->lru_tail = i;
}

static uint32_t cache_find(cluster_interf *x, uint64_t h, const uint64_t *key, uint32_t n)
{
    if (!x->cap_e)
        return NIL;
    for (uint32_t i = x->bucket[h % x->n_bucket]; i != NIL; i = x->e[i].chain)
        if (x->e[i].hash == h && x->e[i].n == n && !memcmp(x->e[i].digest, key, n * sizeof *key))
            return i;
    return NIL;
}

/* store a copy; an eviction takes the least recently used entry */
static int cache_put(cluster_interf *x, uint64_t h, const uint64_t *key, const double *t,
                     uint32_t n)
{
    if (!x->cap_e)
        return 0;
    uint32_t i;
    if (x->n_e < x->cap_e) {
        i = x->n_e++;
    } else {
        i = x->lru_tail;
        lru_unlink(x, i);
        uint32_t *p = &x->bucket[x->e[i].hash % x->n_bucket];
        while (*p != i)
            p = &x->e[*p].chain;
        *p = x->e[i].chain;
        free(x->e[i].digest);
        free(x->e[i].comm_s);
        x->st.evictions++;
    }
    centry *e = &x->e[i];
    e->hash = h;
    e->n = n;
    e->digest = malloc(n * sizeof *key);
    e->comm_s = malloc(n * sizeof *t);
    if (!e->digest || !e->comm_s)
        return -1; /* e stays out of the list and the bucket; freed at destroy */
    memcpy(e->digest, key, n * sizeof *key);
    memcpy(e->comm_s, t, n * sizeof *t);
    e->chain = x->bucket[h % x->n_bucket];
    x->bucket[h % x->n_bucket] = i;
    lru_front(x, i);
    return 0;
}

/* ---- one component's all-reduce times ---- */

typedef struct done_ctx {
    sim_engine *eng;
    double *t;
} done_ctx;

static void on_done(void *ctx, uint64_t tag)
{
    done_ctx *d = ctx;
    d->t[tag] = sim_now(d->eng);
}

/* members m[0..n) (job ids, in digest order) started together; times[k]
 * the end of m[k]'s all-reduce */
static int simulate(cluster_interf *x, const uint32_t *m, uint32_t n, double *times,
                    sim_error *err)
{
    if (x->ex && nc_exec_reset(x->ex, &x->f->nc)) { /* a failed run's: start afresh */
        nc_exec_destroy(x->ex);
        x->ex = NULL;
    }
    if (x->eng)
        sim_engine_reset(x->eng);
    else
        x->eng = sim_engine_create();
    if (x->eng && !x->ex)
        x->ex = nc_exec_create_sparse(x->eng, &x->f->nc);
    nc_exec *ex = x->ex;
    int rc = ex ? 0 : sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "cluster: out of memory");
    done_ctx d = {x->eng, times};
    for (uint32_t k = 0; k < n; k++)
        times[k] = 0;
    uint64_t flows0 = ex ? flow_net_stats(nc_exec_net(ex))->flows_started : 0;
    for (uint32_t k = 0; !rc && k < n; k++)
        if (x->job[m[k]].plan.n_phases)
            rc = nc_exec_start(ex, &x->job[m[k]].plan, 0, on_done, &d, k, err);
    if (!rc) {
        sim_run(x->eng, INFINITY);
        rc = nc_exec_error(ex);
        if (rc)
            sim_error_set(err, rc, NULL, 0, "cluster: a job's all-reduce failed on the fabric");
    }
    if (ex)
        x->st.flows += flow_net_stats(nc_exec_net(ex))->flows_started - flows0;
    x->st.simulations++;
    return rc;
}

/* times for the members m[0..n) (sorted by digest, then id), through the cache */
static int component_times(cluster_interf *x, const uint32_t *m, uint32_t n, double *times,
                           sim_error *err)
{
    uint64_t h = 0x243f6a8885a308d3ull;
    for (uint32_t k = 0; k < n; k++) {
        x->key[k] = x->job[m[k]].digest;
        h = mix(h, x->key[k]);
    }
    if (n > x->st.max_component)
        x->st.max_component = n;
    uint32_t i = cache_find(x, h, x->key, n);
    if (i != NIL) {
        x->st.hits++;
        memcpy(times, x->e[i].comm_s, n * sizeof *times);
        lru_unlink(x, i);
        lru_front(x, i);
        return 0;
    }
    x->st.misses++;
    int rc = simulate(x, m, n, times, err);
    if (!rc && cache_put(x, h, x->key, times, n))
        rc = sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "cluster: out of memory");
    return rc;
}

/* ---- scratch ---- */

static int grow_run(cluster_interf *x, uint32_t n)
{
    if (n <= x->cap_run)
        return 0;
    uint32_t cap = x->cap_run ? x->cap_run : 64;
    while (cap < n)
        cap *= 2;
    uint32_t *p = realloc(x->parent, cap * sizeof *p);
    if (p)
        x->parent = p;
    uint32_t *o = realloc(x->order, cap * sizeof *o);
    if (o)
        x->order = o;
    uint64_t *k = realloc(x->key, cap * sizeof *k);
    if (k)
        x->key = k;
    double *t = realloc(x->times, cap * sizeof *t);
    if (t)
        x->times = t;
    if (!p || !o || !k || !t)
        return -1;
    x->cap_run = cap;
    return 0;
}

static int grow_jobs(cluster_interf *x, uint32_t id)
{
    if (id < x->cap_job)
        return 0;
    uint32_t cap = x->cap_job ? x->cap_job : 1024;
    while (cap <= id)
        cap *= 2;
    ijob *v = realloc(x->job, (size_t)cap * sizeof *v);
    if (!v)
        return -1;
    memset(v + x->cap_job, 0, (size_t)(cap - x->cap_job) * sizeof *v);
    x->job = v;
    x->cap_job = cap;
    return 0;
}

/* ---- the pacer ---- */

static int nomem(sim_error *err)
{
    return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "cluster: out of memory");
}

static const char *const traffic_collectives[NC_COLLECTIVE_COUNT] = {
    [NC_ALLREDUCE] = "all-reduce", [NC_ALLGATHER] = "all-gather",
    [NC_REDUCESCATTER] = "reduce-scatter", [NC_ALLTOALL] = "all-to-all",
    [NC_SENDRECV] = "send"}; /* "send": a <collective kind> only (the schema's) */

const char *cluster_traffic_collective_name(int collective)
{
    return collective >= 0 && collective < NC_COLLECTIVE_COUNT
               ? traffic_collectives[collective] : NULL;
}

int cluster_traffic_collective_parse(const char *name)
{
    for (int c = 0; c < NC_COLLECTIVE_COUNT; c++)
        if (traffic_collectives[c] && !strcmp(traffic_collectives[c], name))
            return c;
    return -1;
}

/* a job's iteration when its collective takes comm_s: the compute, and the
 * communication the compute does not hide (exactly compute_s + comm_s
 * without overlap) */
static double iteration_s(const ijob *j, double comm_s)
{
    return j->compute_s + (comm_s > j->hidden_s ? comm_s - j->hidden_s : 0);
}

static int p_start(void *ctx, uint32_t id, const cluster_job_spec *spec, const uint32_t *gpus,
                   uint32_t n, sim_error *err)
{
    cluster_interf *x = ctx;
    if (grow_jobs(x, id) || grow_run(x, 1))
        return nomem(err);
    ijob *j = &x->job[id];
    const cluster_traffic *t = cluster_traffic_of(&x->tt, spec->gpus);
    uint64_t h = mix(mix(mix(0x13198a2e03707344ull, n), bits(t->bytes)), bits(t->compute_s));
    h = mix(h, bits(t->comm_share));
    if (t->collective != NC_ALLREDUCE) /* the all-reduce keeps the digests it had */
        h = mix(h, (uint64_t)t->collective + 1);
    if (t->n_colls) { /* a layout: it and every collective (none before layouts) */
        h = mix(mix(mix(mix(h, t->tp), t->pp), t->ep), t->n_colls);
        if (t->cp > 1) /* a class given by a model only: the others keep their digests */
            h = mix(h, t->cp);
        if (t->vpp > 1)
            h = mix(h, (uint64_t)t->vpp << 32);
        for (unsigned i = 0; i < t->n_colls; i++)
            h = mix(mix(mix(h, (uint64_t)t->coll[i].collective), (uint64_t)t->coll[i].group),
                    bits(t->coll[i].bytes));
    }
    for (uint32_t k = 0; k < n; k++)
        h = mix(h, gpus[k]);
    j->digest = h;
    j->is_running = 1;
    j->comm_s = 0;
    int has_comm = !t->n_colls && t->bytes > 0;
    for (unsigned i = 0; i < t->n_colls; i++)
        has_comm |= t->coll[i].bytes > 0;
    char why[160];
    if (t->from_model == CLUSTER_FROM_MODEL_CLASS)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "cluster: job %u on %u GPUs takes "
                             "the <traffic> class from %u GPU(s), given by a model, with no "
                             "profile derived for %u GPUs (dcsim cluster, hubs, compare and sweep "
                             "derive them; this command does not)", id + 1, n,
                             x->tt.from_gpus[t - x->tt.t], n);
    if (t->n_colls && cluster_layout_check(t, n, why, sizeof why))
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "cluster: job %u on %u GPUs takes the "
                             "<traffic> class from %u GPU(s), whose layout does not fit: %s",
                             id + 1, n, x->tt.from_gpus[t - x->tt.t], why);
    if (n > 1 && has_comm) {
        enum nc_collective coll = (enum nc_collective)t->collective;
        int rc = t->n_colls ? cluster_layout_plan(&j->plan, &x->f->nc, t, gpus, n, err)
                            : nc_plan_build(&j->plan, &x->f->nc, coll,
                                            coll == NC_ALLTOALL ? NC_ALGO_DIRECT : NC_ALGO_RING,
                                            gpus, n, t->bytes, err);
        size_t nt = 0;
        if (!rc && !j->plan.n_phases) { /* no group of two GPUs: no communication */
            nc_plan_free(&j->plan);
            memset(&j->plan, 0, sizeof j->plan);
            goto compute;
        }
        if (!rc)
            rc = nc_link_bytes(&j->plan, &x->f->nc, 1.0, x->link_scratch, x->touched, &nt, err);
        for (size_t k = 0; k < nt; k++)
            x->link_scratch[x->touched[k]] = 0;
        if (rc)
            return rc;
        j->links = malloc((nt ? nt : 1) * sizeof *j->links);
        if (!j->links)
            return nomem(err);
        memcpy(j->links, x->touched, nt * sizeof *j->links);
        j->n_links = (uint32_t)nt;
        x->order[0] = id;
        rc = component_times(x, x->order, 1, &j->comm_s, err);
        if (rc)
            return rc;
    }
compute:
    j->compute_s = t->comm_share > 0 ? j->comm_s * (1 - t->comm_share) / t->comm_share
                                     : t->compute_s;
    if (!(j->compute_s + j->comm_s > 0))
        j->compute_s = 1; /* no compute and no communication: never slowed (pace 1) */
    if (t->from_model == CLUSTER_FROM_MODEL_SIZE) /* what passes the step tier's exposure */
        j->hidden_s = j->comm_s > t->exposed_s ? j->comm_s - t->exposed_s : 0;
    else
        j->hidden_s = t->overlap * j->compute_s;
    return 0;
}

static void p_end(void *ctx, uint32_t id)
{
    cluster_interf *x = ctx;
    ijob *j = &x->job[id];
    nc_plan_free(&j->plan);
    memset(&j->plan, 0, sizeof j->plan);
    free(j->links);
    j->links = NULL;
    j->n_links = 0;
    j->is_running = 0;
}

static uint32_t find(uint32_t *parent, uint32_t a)
{
    while (parent[a] != a) {
        parent[a] = parent[parent[a]];
        a = parent[a];
    }
    return a;
}

/* a running job in a re-time: its component's root, digest, id and
 * position in the ids handed over; sorted by (root, digest, id) */
typedef struct member {
    uint32_t root;
    uint64_t digest;
    uint32_t id, pos;
} member;

static int cmp_member(const void *a, const void *b)
{
    const member *p = a, *q = b;
    if (p->root != q->root)
        return p->root < q->root ? -1 : 1;
    if (p->digest != q->digest)
        return p->digest < q->digest ? -1 : 1;
    return (p->id > q->id) - (p->id < q->id);
}

/* CLUSTER_PHASE_UNIFORM (cluster_interf.h): the members m[0..n) of one
 * component at uniform offsets; times[] their collectives started together
 * in, replaced by their expected times. Member k's neighbours are in their
 * windows a share busy_j = m_alone / iteration alone of the time; sc 2n
 * doubles of scratch. */
static void uniform_times(const cluster_interf *x, const uint32_t *m, uint32_t n, double *sc,
                          double *times)
{
    double *busy = sc, *q = sc + n;
    for (uint32_t k = 0; k < n; k++) {
        const ijob *j = &x->job[m[k]];
        double it = iteration_s(j, j->comm_s);
        busy[k] = it > 0 ? j->comm_s / it : 0;
    }
    cluster_phase_busy(busy, n, q);
    for (uint32_t k = 0; k < n; k++)
        times[k] = cluster_phase_comm_s(x->job[m[k]].comm_s, times[k], q[k]);
}

static int p_pace(void *ctx, double now_s, const uint32_t *ids, uint32_t n, double *pace,
                  sim_error *err)
{
    cluster_interf *x = ctx;
    if (grow_run(x, n))
        return nomem(err);
    for (uint32_t i = 0; i < x->n_shared_now; i++) /* the sharing since the last call */
        x->link_shared_s[x->shared_now[i]] += now_s - x->last_now;
    x->n_shared_now = 0;
    x->last_now = now_s;
    if (++x->epoch == 0) { /* wrapped: every stamp is stale */
        memset(x->link_epoch, 0, (size_t)x->f->g.n_links * sizeof *x->link_epoch);
        memset(x->link_shared_epoch, 0, (size_t)x->f->g.n_links * sizeof *x->link_epoch);
        x->epoch = 1;
    }
    for (uint32_t k = 0; k < n; k++)
        x->parent[k] = k;
    for (uint32_t k = 0; k < n; k++) {
        const ijob *j = &x->job[ids[k]];
        for (uint32_t i = 0; i < j->n_links; i++) {
            uint32_t l = j->links[i];
            if (x->link_epoch[l] != x->epoch) {
                x->link_epoch[l] = x->epoch;
                x->link_owner[l] = k;
                continue;
            }
            if (x->link_shared_epoch[l] != x->epoch) {
                x->link_shared_epoch[l] = x->epoch;
                x->shared_now[x->n_shared_now++] = l;
            }
            uint32_t a = find(x->parent, k), b = find(x->parent, x->link_owner[l]);
            if (a != b)
                x->parent[a > b ? a : b] = a < b ? a : b;
        }
    }
    member *mb = malloc((n ? n : 1) * sizeof *mb);
    double *sc = x->tt.phase == CLUSTER_PHASE_UNIFORM ? malloc((n ? 2 * n : 1) * sizeof *sc)
                                                      : NULL;
    if (!mb || (x->tt.phase == CLUSTER_PHASE_UNIFORM && !sc)) {
        free(mb);
        free(sc);
        return nomem(err);
    }
    for (uint32_t k = 0; k < n; k++)
        mb[k] = (member){find(x->parent, k), x->job[ids[k]].digest, ids[k], k};
    qsort(mb, n, sizeof *mb, cmp_member);
    int rc = 0;
    for (uint32_t a = 0; !rc && a < n;) {
        uint32_t b = a;
        while (b < n && mb[b].root == mb[a].root)
            b++;
        if (b - a == 1) { /* alone: its isolated time, no look-up */
            pace[mb[a].pos] = 1;
            a = b;
            continue;
        }
        for (uint32_t k = a; k < b; k++)
            x->order[k - a] = mb[k].id;
        rc = component_times(x, x->order, b - a, x->times, err);
        if (!rc && x->tt.phase == CLUSTER_PHASE_UNIFORM) /* offsets: the expected times */
            uniform_times(x, x->order, b - a, sc, x->times);
        for (uint32_t k = a; !rc && k < b; k++) {
            const ijob *j = &x->job[mb[k].id];
            double now = iteration_s(j, x->times[k - a]), alone = iteration_s(j, j->comm_s);
            pace[mb[k].pos] = now > alone ? alone / now : 1;
        }
        a = b;
    }
    free(mb);
    free(sc);
    return rc;
}

/* ---- create / destroy ---- */

cluster_interf *cluster_interf_create(const fabric *f, uint32_t gpus,
                                      const cluster_traffic_table *tt, uint32_t cache_entries,
                                      sim_error *err)
{
    if (f->gpus < gpus) {
        sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "cluster: the fabric has %u GPU ports for "
                      "%u GPUs", f->gpus, gpus);
        return NULL;
    }
    cluster_interf *x = calloc(1, sizeof *x);
    if (!x) {
        nomem(err);
        return NULL;
    }
    x->f = f;
    x->tt = *tt;
    x->pacer = (cluster_pacer){x, p_start, p_end, p_pace};
    size_t nl = (size_t)f->g.n_links + 1;
    x->link_owner = malloc(nl * sizeof *x->link_owner);
    x->link_epoch = calloc(nl, sizeof *x->link_epoch);
    x->link_scratch = calloc(nl, sizeof *x->link_scratch);
    x->touched = malloc(nl * sizeof *x->touched);
    x->link_shared_epoch = calloc(nl, sizeof *x->link_shared_epoch);
    x->shared_now = malloc(nl * sizeof *x->shared_now);
    x->link_shared_s = calloc(nl, sizeof *x->link_shared_s);
    x->cap_e = cache_entries;
    x->n_bucket = cache_entries ? 2 * cache_entries : 1;
    x->e = calloc(cache_entries ? cache_entries : 1, sizeof *x->e);
    x->bucket = malloc(x->n_bucket * sizeof *x->bucket);
    x->lru_head = x->lru_tail = NIL;
    if (!x->link_owner || !x->link_epoch || !x->link_scratch || !x->touched || !x->e ||
        !x->bucket || !x->link_shared_epoch || !x->shared_now || !x->link_shared_s) {
        cluster_interf_destroy(x);
        nomem(err);
        return NULL;
    }
    for (uint32_t i = 0; i < x->n_bucket; i++)
        x->bucket[i] = NIL;
    return x;
}

void cluster_interf_destroy(cluster_interf *x)
{
    if (!x)
        return;
    for (uint32_t i = 0; i < x->cap_job; i++)
        if (x->job[i].is_running)
            p_end(x, i);
    for (uint32_t i = 0; i < x->n_e; i++) {
        free(x->e[i].digest);
        free(x->e[i].comm_s);
    }
    nc_exec_destroy(x->ex);
    sim_engine_destroy(x->eng);
    free(x->job);
    free(x->link_owner);
    free(x->link_epoch);
    free(x->link_scratch);
    free(x->touched);
    free(x->link_shared_epoch);
    free(x->shared_now);
    free(x->link_shared_s);
    free(x->parent);
    free(x->order);
    free(x->key);
    free(x->times);
    free(x->e);
    free(x->bucket);
    free(x);
}

const cluster_pacer *cluster_interf_pacer(cluster_interf *x)
{
    return &x->pacer;
}

void cluster_interf_get_stats(const cluster_interf *x, cluster_interf_stats *out)
{
    *out = x->st;
    const topo_graph *g = &x->f->g;
    for (uint32_t l = 0; l < g->n_links; l++) {
        unsigned a = g->node_tier[g->link_src[l]], b = g->node_tier[g->link_dst[l]];
        if (a >= CLUSTER_TIERS || b >= CLUSTER_TIERS)
            continue;
        out->links[a][b]++;
        out->shared_links[a][b] += x->link_shared_s[l] > 0;
        out->shared_link_s[a][b] += x->link_shared_s[l];
    }
}

void cluster_interf_job(const cluster_interf *x, uint32_t id, double *compute_s, double *comm_s)
{
    *compute_s = id < x->cap_job ? x->job[id].compute_s : 0;
    *comm_s = id < x->cap_job ? x->job[id].comm_s : 0;
}

double cluster_interf_job_iteration(const cluster_interf *x, uint32_t id)
{
    return id < x->cap_job && x->job[id].is_running ? iteration_s(&x->job[id], x->job[id].comm_s)
                                                     : 0;
}
