/* test_export.c - GraphML and DOT output parse back with the graph's counts:
 * one <node> per node, one <edge> per cable (libxml2 parses the GraphML; a
 * plain scan counts elements and DOT lines), kinds and capacities intact. */
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "check.h"
#include "export.h"
#include "fattree.h"
#include "graph.h"
#include "scaleup.h"

/* The whole of a stream written by fn, as a string (caller frees). */
static char *written_by(int (*fn)(const topo_graph *, FILE *, char *, size_t),
                        const topo_graph *g, size_t *len)
{
    FILE *f = tmpfile();
    char why[200];
    CHECK(f != NULL);
    CHECK_INT_EQ(fn(g, f, why, sizeof why), 0);
    long n = ftell(f);
    char *text = malloc((size_t)n + 1);
    rewind(f);
    CHECK_INT_EQ(fread(text, 1, (size_t)n, f), n);
    text[n] = 0;
    fclose(f);
    *len = (size_t)n;
    return text;
}

static unsigned occurrences(const char *hay, const char *needle)
{
    unsigned n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

typedef struct tally {
    unsigned nodes, edges, hosts, switches, scaleups;
    double bytes_per_s; /* sum over edges, both directions */
} tally;

/* Walk the parsed document: count node and edge elements and read their data */
static void walk(xmlNode *n, tally *t)
{
    for (; n; n = n->next) {
        if (n->type != XML_ELEMENT_NODE)
            continue;
        int is_node = !strcmp((const char *)n->name, "node");
        int is_edge = !strcmp((const char *)n->name, "edge");
        t->nodes += is_node, t->edges += is_edge;
        for (xmlNode *d = is_node || is_edge ? n->children : NULL; d; d = d->next) {
            xmlChar *key = xmlGetProp(d, (const xmlChar *)"key");
            xmlChar *val = xmlNodeGetContent(d);
            if (key && !strcmp((const char *)key, "kind")) {
                t->hosts += !strcmp((const char *)val, "host");
                t->switches += !strcmp((const char *)val, "switch");
                t->scaleups += !strcmp((const char *)val, "scaleup");
            } else if (key && (!strcmp((const char *)key, "bw") ||
                               !strcmp((const char *)key, "rbw"))) {
                t->bytes_per_s += strtod((const char *)val, NULL);
            }
            xmlFree(key), xmlFree(val);
        }
        if (!is_node && !is_edge)
            walk(n->children, t);
    }
}

/* k = 4 fat-tree (16 hosts, 20 switches, 48 cables) with 4 domains of 4 */
static void test_graphml(void)
{
    topo_graph g;
    char why[200];
    CHECK_INT_EQ(topo_fattree_kary(4, 50e9, &g, why, sizeof why), 0);
    CHECK_INT_EQ(topo_scaleup_add(&g, 4, 450e9, why, sizeof why), 0);
    size_t len;
    char *text = written_by(topo_export_graphml, &g, &len);
    CHECK_INT_EQ(occurrences(text, "<node "), g.n_nodes);
    CHECK_INT_EQ(occurrences(text, "<edge "), g.n_links / 2);
    xmlDoc *doc = xmlReadMemory(text, (int)len, "topology.graphml", NULL,
                                XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    CHECK(doc != NULL);
    tally t = {0};
    if (doc)
        walk(xmlDocGetRootElement(doc), &t);
    CHECK_INT_EQ(t.nodes, 16 + 20 + 4);
    CHECK_INT_EQ(t.edges, 48 + 16);
    CHECK_INT_EQ(t.hosts, 16);
    CHECK_INT_EQ(t.switches, 20);
    CHECK_INT_EQ(t.scaleups, 4);
    CHECK_REL(t.bytes_per_s, 2 * (48 * 50e9 + 16 * 450e9), 1e-12);
    CHECK_CONTAINS(text, "<node id=\"n16\"><data key=\"kind\">switch</data><data key=\"tier\">1"
                         "</data><data key=\"plane\">0</data><data key=\"group\">0</data>");
    CHECK_CONTAINS(text, "<data key=\"group\">-1</data>"); /* a core switch */
    xmlFreeDoc(doc);
    free(text);
    topo_graph_fini(&g);
}

static void test_dot(void)
{
    topo_graph plane, g;
    char why[200];
    CHECK_INT_EQ(topo_leafspine(4, 4, 2, 25e9, &plane, why, sizeof why), 0);
    CHECK_INT_EQ(topo_multiplane(&plane, 2, &g, why, sizeof why), 0);
    size_t len;
    char *text = written_by(topo_export_dot, &g, &len);
    CHECK(!strncmp(text, "graph dcsim {\n", 14));
    CHECK_INT_EQ(occurrences(text, " -- "), g.n_links / 2);
    CHECK_INT_EQ(occurrences(text, "[kind="), g.n_nodes);
    CHECK_INT_EQ(occurrences(text, "plane=1"), g.n_switches / 2);
    CHECK_CONTAINS(text, "  n0 -- n8 [bytes_per_s=25000000000, reverse_bytes_per_s=25000000000];");
    CHECK(len > 2 && !strcmp(text + len - 2, "}\n"));
    free(text);
    topo_graph_fini(&g);
    topo_graph_fini(&plane);
}

static void test_write_error(void)
{
    topo_graph g;
    char why[200];
    CHECK_INT_EQ(topo_leafspine(4, 4, 2, 25e9, &g, why, sizeof why), 0);
    FILE *full = fopen("/dev/full", "w"); /* every write fails: ENOSPC */
    if (full) {
        CHECK(topo_export_graphml(&g, full, why, sizeof why) != 0);
        CHECK_CONTAINS(why, "could not write");
        fclose(full);
    }
    g.link_dst[1] = 3; /* no longer the reverse of link 0 */
    CHECK(topo_export_dot(&g, stdout, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "links 0 and 1 are not the two directions of one cable");
    topo_graph_fini(&g);
}

int main(void)
{
    test_graphml();
    test_dot();
    test_write_error();
    return check_report();
}
