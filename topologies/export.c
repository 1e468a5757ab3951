/* export.c - GraphML and DOT writers (see export.h). Capacities are written
 * with 17 significant digits so a reader gets the same doubles back. */
#include "export.h"

#define FAIL(...) return (why && why_size ? snprintf(why, why_size, __VA_ARGS__) : 0), -1

static const char *kind_name(uint8_t kind)
{
    return kind == TOPO_HOST     ? "host"
           : kind == TOPO_SWITCH ? "switch"
           : kind == TOPO_NIC    ? "nic"
                                 : "scaleup";
}

static long long group_of(const topo_graph *g, uint32_t v)
{
    return g->node_group[v] == TOPO_NO_GROUP ? -1 : (long long)g->node_group[v];
}

static int check_cables(const topo_graph *g, char *why, size_t why_size)
{
    if (g->n_links % 2)
        FAIL("%u directed links: not whole cables (2 links each)", g->n_links);
    for (uint32_t l = 0; l < g->n_links; l += 2)
        if (g->link_src[l + 1] != g->link_dst[l] || g->link_dst[l + 1] != g->link_src[l])
            FAIL("links %u and %u are not the two directions of one cable", l, l + 1);
    return 0;
}

static int written(FILE *f, char *why, size_t why_size)
{
    if (fflush(f) || ferror(f))
        FAIL("could not write the topology file");
    return 0;
}

static void graphml_keys(FILE *f)
{
    static const char *keys[][4] = {
        {"kind", "node", "kind", "string"},   {"tier", "node", "tier", "int"},
        {"plane", "node", "plane", "int"},    {"group", "node", "group", "long"},
        {"bw", "edge", "bytes_per_s", "double"}, {"rbw", "edge", "reverse_bytes_per_s", "double"}};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        fprintf(f, "  <key id=\"%s\" for=\"%s\" attr.name=\"%s\" attr.type=\"%s\"/>\n",
                keys[i][0], keys[i][1], keys[i][2], keys[i][3]);
}

int topo_export_graphml(const topo_graph *g, FILE *f, char *why, size_t why_size)
{
    if (check_cables(g, why, why_size))
        return -1;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n");
    graphml_keys(f);
    fprintf(f, "  <graph id=\"dcsim\" edgedefault=\"undirected\">\n");
    for (uint32_t v = 0; v < g->n_nodes; v++)
        fprintf(f, "    <node id=\"n%u\"><data key=\"kind\">%s</data><data key=\"tier\">%u"
                   "</data><data key=\"plane\">%u</data><data key=\"group\">%lld</data></node>\n",
                v, kind_name(g->node_kind[v]), g->node_tier[v], g->node_plane[v], group_of(g, v));
    for (uint32_t l = 0; l < g->n_links; l += 2)
        fprintf(f, "    <edge id=\"c%u\" source=\"n%u\" target=\"n%u\"><data key=\"bw\">%.17g"
                   "</data><data key=\"rbw\">%.17g</data></edge>\n",
                l / 2, g->link_src[l], g->link_dst[l], g->link_bytes_per_s[l],
                g->link_bytes_per_s[l + 1]);
    fprintf(f, "  </graph>\n</graphml>\n");
    return written(f, why, why_size);
}

int topo_export_dot(const topo_graph *g, FILE *f, char *why, size_t why_size)
{
    if (check_cables(g, why, why_size))
        return -1;
    fprintf(f, "graph dcsim {\n");
    for (uint32_t v = 0; v < g->n_nodes; v++)
        fprintf(f, "  n%u [kind=%s, tier=%u, plane=%u, group=%lld];\n", v,
                kind_name(g->node_kind[v]), g->node_tier[v], g->node_plane[v], group_of(g, v));
    for (uint32_t l = 0; l < g->n_links; l += 2)
        fprintf(f, "  n%u -- n%u [bytes_per_s=%.17g, reverse_bytes_per_s=%.17g];\n",
                g->link_src[l], g->link_dst[l], g->link_bytes_per_s[l],
                g->link_bytes_per_s[l + 1]);
    fprintf(f, "}\n");
    return written(f, why, why_size);
}
