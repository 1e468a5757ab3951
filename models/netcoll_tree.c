/* netcoll_tree.c - double binary tree all-reduce (NCCL-like): two trees
 * over the scale-up domains, the second the mirror image of the first (so
 * the leaves of one are inner nodes of the other), each S/2 per channel, a
 * chain inside each domain; reduce and broadcast pipelined (one coupled
 * phase per tree). Latency: base + 2 ((g-1) intra steps + ceil(log2 m)
 * inter steps).
 */
#include <math.h>

#include "netcoll_internal.h"

static unsigned channels_of(const nc_fabric *f)
{
    if (f->channels)
        return f->channels;
    return f->domain_size ? f->domain_size : 1;
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

static int build(nc_plan *p, const nc_fabric *f, enum nc_collective coll, const uint32_t *r,
                 unsigned n, double bytes)
{
    (void)coll;
    unsigned domains = nc_whole_domains(f, r, n);
    unsigned g = domains ? f->domain_size : 1, m = domains ? domains : n;
    unsigned C = channels_of(f);
    double depth = ceil(log2((double)m));
    double lat = f->base_latency_s + 2 * ((g - 1) * f->intra_step_latency_s +
                                          depth * f->inter_step_latency_s);
    for (unsigned c = 0; c < C; c++)
        for (unsigned t = 0; t < 2; t++) {
            unsigned nic = (2 * c + t) % g; /* the local GPU whose NIC this tree uses */
            nc_add_phase(p, bytes / (2.0 * C), lat, INFINITY, 1, NULL, 0);
            for (unsigned d = 0; d < m; d++) {
                const uint32_t *loc = r + (size_t)d * g;
                for (unsigned i = 0; i + 1 < g; i++) { /* chain up and down in the domain */
                    uint32_t a = loc[(nic + i) % g], b = loc[(nic + i + 1) % g];
                    nc_add_conn(p, b, a, 1.0);
                    nc_add_conn(p, a, b, 1.0);
                }
                long par = tree_parent(d, m, t);
                if (par >= 0) { /* reduce to the parent, broadcast back */
                    uint32_t child = loc[nic], parent = r[(size_t)par * g + nic];
                    nc_add_conn(p, child, parent, 1.0);
                    nc_add_conn(p, parent, child, 1.0);
                }
            }
        }
    return p->failed ? -1 : 0;
}

const nc_algorithm_type nc_algo_tree = {
    .name = "tree",
    .doc = "two binary trees over the nodes (the second mirrors the first), S/2 each per "
           "channel, chains inside nodes, reduce and broadcast pipelined",
    .collectives = 1u << NC_ALLREDUCE,
    .build = build,
};
