/* dragonfly.c - Dragonfly builder (model and arrangement in dragonfly.h). */
#include "dragonfly.h"

#include <stdio.h>

#define FAIL(...) return (why && why_size ? snprintf(why, why_size, __VA_ARGS__) : 0), -1

int topo_dragonfly(const topo_dragonfly_config *c, topo_graph *out, char *why, size_t why_size)
{
    topo_graph_init(out);
    if (!c->p || !c->a || !c->h)
        FAIL("a Dragonfly needs p (hosts per router), a (routers per group) and h (global "
             "links per router) of at least 1, got p %u, a %u, h %u", c->p, c->a, c->h);
    double max_groups = (double)c->a * c->h + 1;
    unsigned g = c->groups ? c->groups : (unsigned)max_groups;
    if (g < 2 || g > max_groups)
        FAIL("groups must be between 2 and a x h + 1 = %u x %u + 1 = %.0f (one global link "
             "between every pair of groups), got %u", c->a, c->h, max_groups, g);
    double nodes = (double)g * c->a * (c->p + 1);
    if (nodes > 2147483647.0)
        FAIL("%.4g nodes: more than 2^31", nodes);
    if (!(c->host_bytes_per_s > 0 && c->local_bytes_per_s > 0 && c->global_bytes_per_s > 0))
        FAIL("link bandwidths must be positive");
    topo_graph *gr = out;
    unsigned routers = g * c->a, hosts = routers * c->p;
    topo_graph_add_nodes(gr, hosts, TOPO_HOST, 0);
    uint32_t router0 = topo_graph_add_nodes(gr, routers, TOPO_SWITCH, 1);
    for (unsigned i = 0; i < hosts; i++)
        topo_graph_add_cable(gr, i, router0 + i / c->p, c->host_bytes_per_s);
    for (unsigned grp = 0; grp < g; grp++)
        for (unsigned r = 0; r < c->a; r++)
            for (unsigned s = r + 1; s < c->a; s++)
                topo_graph_add_cable(gr, router0 + grp * c->a + r, router0 + grp * c->a + s,
                                     c->local_bytes_per_s);
    for (unsigned i = 0; i < g; i++)
        for (unsigned ch = 0; ch + 1 < g && ch < c->a * c->h; ch++) {
            unsigned j = (i + ch + 1) % g;
            if (j < i)
                continue; /* the pair was joined from group j's side */
            unsigned back = (g + i - j - 1) % g; /* j's channel towards i */
            topo_graph_add_cable(gr, router0 + i * c->a + ch / c->h,
                                 router0 + j * c->a + back / c->h, c->global_bytes_per_s);
        }
    if (topo_graph_finish(gr)) {
        topo_graph_fini(gr);
        FAIL("out of memory for the topology");
    }
    return 0;
}
