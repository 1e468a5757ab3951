/* netcoll_plan.c - the building blocks of a collective's plan: growing its
 * phase, connection and dependency arrays, the scale-up domains of the
 * ranks, and routing one connection (see netcoll_internal.h). */
#include <stdlib.h>

#include "netcoll_internal.h"

/* ---- phases and connections ---- */

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

uint32_t nc_add_phase(nc_plan *p, double bytes, double latency_s, double cap, int coupled,
                      const uint32_t *deps, uint32_t nd)
{
    if (p->failed || grow((void **)&p->phase, &p->cap_phases, p->n_phases + 1, sizeof *p->phase) ||
        grow((void **)&p->deps, &p->cap_deps, p->n_deps + nd, sizeof *p->deps)) {
        p->failed = 1;
        return UINT32_MAX;
    }
    nc_phase *ph = &p->phase[p->n_phases];
    *ph = (nc_phase){.conn_first = p->n_conns, .rank_first = NC_LISTED, .bytes = bytes, .latency_s = latency_s,
                     .rate_cap = cap, .coupled = coupled, .dep_first = p->n_deps, .n_deps = nd};
    for (uint32_t i = 0; i < nd; i++)
        if (deps[i] != UINT32_MAX)
            p->deps[p->n_deps++] = deps[i];
    ph->n_deps = p->n_deps - ph->dep_first;
    return p->n_phases++;
}

void nc_add_conn(nc_plan *p, uint32_t src, uint32_t dst, double weight)
{
    if (p->failed || grow((void **)&p->conn, &p->cap_conns, p->n_conns + 1, sizeof *p->conn)) {
        p->failed = 1;
        return;
    }
    p->conn[p->n_conns++] = (nc_conn){src, dst, weight};
    p->phase[p->n_phases - 1].n_conn++;
}

uint32_t nc_set_alltoall_conns(nc_plan *p, uint32_t rank_first, const uint32_t *r, uint32_t n,
                               uint32_t sender)
{
    if (p->failed)
        return NC_LISTED;
    if (rank_first == NC_LISTED) {
        if (grow((void **)&p->rank, &p->cap_rank, p->n_rank + n, sizeof *p->rank)) {
            p->failed = 1;
            return NC_LISTED;
        }
        rank_first = p->n_rank;
        for (uint32_t i = 0; i < n; i++)
            p->rank[p->n_rank++] = r[i];
    }
    nc_phase *ph = &p->phase[p->n_phases - 1];
    ph->rank_first = rank_first;
    ph->sender = sender;
    ph->n_conn = n - 1;
    return rank_first;
}

/* ---- scale-up domains ---- */

uint32_t nc_domain_of(const topo_graph *g, uint32_t host)
{
    uint32_t d = g->node_group[host];
    return d == TOPO_NO_GROUP ? 0x80000000u | host : d;
}

unsigned nc_domain_blocks(const nc_fabric *f, const uint32_t *r, unsigned n, unsigned *k)
{
    unsigned b = 1;
    while (b < n && nc_domain_of(f->g, r[b]) == nc_domain_of(f->g, r[0]))
        b++;
    if (b < 2 || n % b || n / b < 2)
        return 0;
    for (unsigned m = 0; m < n / b; m++)
        for (unsigned i = 0; i < b; i++) {
            if (nc_domain_of(f->g, r[m * b + i]) != nc_domain_of(f->g, r[m * b]))
                return 0;
            if (m && nc_domain_of(f->g, r[m * b]) == nc_domain_of(f->g, r[(m - 1) * b]))
                return 0;
        }
    *k = b;
    return n / b;
}

unsigned nc_whole_domains(const nc_fabric *f, const uint32_t *r, unsigned n)
{
    unsigned g = f->domain_size, k = 0, m = nc_domain_blocks(f, r, n, &k);
    if (m)
        return k == g ? m : 0;
    if (g < 2 || n != g)
        return 0;
    for (unsigned i = 1; i < n; i++)
        if (nc_domain_of(f->g, r[i]) != nc_domain_of(f->g, r[0]))
            return 0;
    return 1;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

unsigned nc_count_domains(const nc_fabric *f, const uint32_t *r, unsigned n)
{
    uint32_t *d = malloc(((size_t)n + 1) * sizeof *d);
    if (!d)
        return 0;
    for (unsigned i = 0; i < n; i++)
        d[i] = nc_domain_of(f->g, r[i]);
    qsort(d, n, sizeof *d, cmp_u32);
    unsigned m = n ? 1 : 0;
    for (unsigned i = 1; i < n; i++)
        m += d[i] != d[i - 1];
    free(d);
    return m;
}

uint32_t nc_host_link(const topo_graph *g, uint32_t host, enum topo_node_kind kind)
{
    for (uint32_t i = g->out_offset[host]; i < g->out_offset[host + 1]; i++) {
        uint32_t l = g->out_links[i];
        if (g->node_kind[g->link_dst[l]] == kind)
            return l;
    }
    return UINT32_MAX;
}

uint32_t nc_host_fabric_link(const topo_graph *g, uint32_t host, uint32_t *nic_link,
                             unsigned *sharing)
{
    *nic_link = UINT32_MAX;
    *sharing = 1;
    uint32_t l = nc_host_link(g, host, TOPO_SWITCH);
    if (l != UINT32_MAX)
        return l;
    uint32_t to_nic = nc_host_link(g, host, TOPO_NIC);
    if (to_nic == UINT32_MAX)
        return UINT32_MAX;
    uint32_t nic = g->link_dst[to_nic];
    unsigned hosts = 0;
    for (uint32_t i = g->out_offset[nic]; i < g->out_offset[nic + 1]; i++) {
        uint32_t x = g->out_links[i];
        if (g->node_kind[g->link_dst[x]] == TOPO_HOST)
            hosts++;
        else if (g->node_kind[g->link_dst[x]] == TOPO_SWITCH)
            l = x;
    }
    if (l == UINT32_MAX)
        return UINT32_MAX;
    *nic_link = to_nic;
    *sharing = hosts ? hosts : 1;
    return l;
}

/* ---- routing one connection ---- */

long nc_route_conn(const nc_fabric *f, const nc_conn *c, uint64_t key, const double *load,
                   nc_route_buf *b)
{
    if (c->dst == NC_FIXED_LINK) {
        b->one[0] = (topo_usage){c->src, 1.0};
        return 1;
    }
    return topo_route(f->router, c->src, c->dst, key, load, b->one, f->g->n_links);
}

int nc_route_failure(sim_error *err, long rc, const nc_conn *c)
{
    if (rc == -2)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0,
                             "out of memory for the routing tables (routing host %u to host "
                             "%u): the fabric is too large for this machine's memory",
                             c->src, c->dst);
    return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "no route from host %u to host %u", c->src,
                         c->dst);
}
