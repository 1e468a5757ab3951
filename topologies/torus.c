/* torus.c - the torus (k-ary n-cube) and its registry kind "torus"
 * (topology.h): builder, checks, closed-form counts and the dims attribute,
 * all in this file.
 *
 * Model (Dally and Towles, "Principles and Practices of Interconnection
 * Networks", Morgan Kaufmann 2004, ch. 5; the 2D/3D tori of Blue Gene and of
 * TPU pods): n = 1 .. 4 dimensions of k_0 .. k_{n-1} routers (dims="8x8x4"),
 * N = prod k_i routers, one per position (x_0, .., x_{n-1}), each with
 * p = hosts-per-router hosts and one cable to its neighbour x_i + 1 mod k_i
 * in every dimension (wrap-around). In a dimension of 2 the +1 and -1
 * neighbours coincide: one cable per pair, not two. Every dimension has 2 to
 * 4096 routers.
 *
 * Counts: N p hosts and host cables, N routers (tier 1), sum_i c_i router
 * cables with c_i = N for k_i >= 3 and N/2 for k_i = 2 (router degree p + 2n,
 * less one per dimension of 2). Minimal router hops between x and y:
 * sum_i min(|x_i - y_i|, k_i - |x_i - y_i|); diameter sum_i floor(k_i / 2)
 * router hops, + 2 host links. Bisection: a cut across the largest
 * dimension k_max (even) crosses 2N / k_max cables (N/2 when k_max = 2),
 * the k-ary n-cube's 2 k^(n-1) (4 k^(n-1) one-way channels in Dally and
 * Towles); tests/topologies/test_torus.c checks these on built graphs.
 *
 * Ids: hosts first (host r p + j on router r), then the routers in
 * row-major order of (x_0, .., x_{n-1}), x_0 slowest, so the id-order halves
 * of the hosts (stats.h bisection) are x_0 < k_0/2 and x_0 >= k_0/2.
 * Routers have no node_group: Valiant and UGAL, which detour through a third
 * group, are refused (routing.h); minimal routing spreads over the
 * equal-length paths. Not a folded Clos (g->updown = 0).
 */
#include <stdio.h>
#include <string.h>

#include "topology.h"

#define FAIL(...) return (why && why_size ? snprintf(why, why_size, __VA_ARGS__) : 0), -1
#define MAX_IDS 2147483647.0
#define MAX_SIDE 4096

static unsigned n_dims(const topo_shape *s)
{
    unsigned n = 0;
    while (n < TOPO_MAX_DIMS && s->dims[n])
        n++;
    return n;
}

/* "8x8x4" */
static const char *dims_text(const topo_shape *s, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < n_dims(s) && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%u", i ? "x" : "", s->dims[i]);
    return buf;
}

/* dims="8x8x4": 1 to 4 sizes of 2 to 4096, joined by x */
static int parse_dims(const char *text, topo_shape *s, char *why, size_t why_size)
{
    unsigned dims[TOPO_MAX_DIMS] = {0}, n = 0;
    const char *q = text;
    for (;;) {
        unsigned long v = 0;
        const char *start = q;
        while (*q >= '0' && *q <= '9' && v <= MAX_SIDE)
            v = v * 10 + (unsigned long)(*q++ - '0');
        if (q == start || v < 2 || v > MAX_SIDE || n == TOPO_MAX_DIMS)
            break;
        dims[n++] = (unsigned)v;
        if (*q == '\0') {
            memcpy(s->dims, dims, sizeof dims);
            return 0;
        }
        if (*q++ != 'x')
            break;
    }
    FAIL("expected 1 to %d routers per dimension, each a whole number from 2 to %d, joined by "
         "x, e.g. 8x8x4", TOPO_MAX_DIMS, MAX_SIDE);
}

/* Every number of the torus; *routers = N, *router_cables = sum_i c_i. */
static int torus_check(const topo_shape *s, unsigned hosts, double *routers,
                       double *router_cables, char *why, size_t why_size)
{
    unsigned n = n_dims(s);
    if (!n)
        FAIL("a torus needs its routers per dimension, e.g. dims=\"8x8x4\"");
    double N = 1;
    for (unsigned i = 0; i < n; i++) {
        if (s->dims[i] < 2 || s->dims[i] > MAX_SIDE)
            FAIL("torus dimension %u has %u routers: 2 to %d", i + 1, s->dims[i], MAX_SIDE);
        N *= s->dims[i];
    }
    if (!s->p)
        FAIL("a torus needs at least one host per router (hosts-per-router), got 0");
    double cables = 0;
    for (unsigned i = 0; i < n; i++)
        cables += s->dims[i] == 2 ? N / 2 : N;
    char d[64];
    if (N * (s->p + 1.0) > MAX_IDS || 2 * (N * s->p + cables) > MAX_IDS)
        FAIL("a torus of dims=%s with %u hosts per router: %.4g nodes and %.4g links, more "
             "than 2^31", dims_text(s, d, sizeof d), s->p, N * (s->p + 1.0),
             2 * (N * s->p + cables));
    if (N * s->p < hosts)
        FAIL("the torus dims=%s has %.0f routers x %u hosts-per-router = %.0f host ports, fewer "
             "than the %u GPUs", dims_text(s, d, sizeof d), N, s->p, N * s->p, hosts);
    *routers = N, *router_cables = cables;
    return 0;
}

static int torus_count(const topo_shape *s, unsigned hosts, unsigned per_node, topo_counts *out,
                       char *why, size_t why_size)
{
    (void)per_node;
    double routers, cables;
    if (torus_check(s, hosts, &routers, &cables, why, why_size))
        return -1;
    memset(out, 0, sizeof *out);
    out->hosts = out->cables[0] = (uint64_t)routers * s->p;
    out->switches[1] = (uint64_t)routers;
    out->cables[1] = (uint64_t)cables;
    return 0;
}

static int torus_build(const topo_shape *s, unsigned hosts, unsigned per_node,
                       double bytes_per_s, topo_graph *out, char *why, size_t why_size)
{
    (void)per_node;
    double routers_d, cables;
    topo_graph_init(out);
    if (torus_check(s, hosts, &routers_d, &cables, why, why_size))
        return -1;
    if (!(bytes_per_s > 0))
        FAIL("link bandwidth must be positive");
    uint32_t routers = (uint32_t)routers_d, n = n_dims(s), p = s->p;
    topo_graph *g = out;
    topo_graph_add_nodes(g, routers * p, TOPO_HOST, 0);
    uint32_t router0 = topo_graph_add_nodes(g, routers, TOPO_SWITCH, 1);
    for (uint32_t h = 0; h < routers * p; h++)
        topo_graph_add_cable(g, h, router0 + h / p, bytes_per_s);
    for (uint32_t r = 0; r < routers; r++) {
        uint32_t stride = routers;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t k = s->dims[i];
            stride /= k; /* routers per step of x_i */
            uint32_t x = r / stride % k;
            if (k == 2 && x == 1)
                continue; /* its one cable in this dimension came from x = 0 */
            uint32_t next = r - x * stride + (x + 1) % k * stride;
            topo_graph_add_cable(g, router0 + r, router0 + next, bytes_per_s);
        }
    }
    if (topo_graph_finish(g)) {
        topo_graph_fini(g);
        FAIL("out of memory for the topology");
    }
    return 0;
}

static const char *const torus_required[] = {"dims", "hosts-per-router", NULL};
static const topo_text_attr torus_attrs[] = {{"dims", parse_dims}, {NULL, NULL}};
const topo_kind topo_kind_torus = {
    "torus", "k-ary n-cube: routers on a 1- to 4-dimensional grid with wrap-around links",
    torus_required, torus_attrs, torus_count, torus_build};
