/* test_topology_registry.c - the registries of topologies/ against the schema
 * scenarios read: the <fabric topology> enumeration of scenarios/dcsim.xsd
 * equals the topology registry's names (same order), every attribute a kind
 * requires or parses and every whole-number shape attribute is a <fabric>
 * attribute, and the routing="", paths="" and arrangement="" enumerations
 * equal the balance, path-class and arrangement tables. Also: names parse
 * back to their kinds and choices, every entry has a one-line doc, and every
 * kind's count and build are there. The XSD is read with libxml2. */
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "check.h"
#include "dragonfly.h"
#include "routing.h"
#include "topology.h"

#define MAX_NAMES 64

typedef struct names {
    size_t n;
    char *name[MAX_NAMES];
} names;

static int is_xs(const xmlNode *n, const char *local)
{
    return n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, local);
}

static int has_name(const xmlNode *n, const char *value)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)"name");
    int same = v && !strcmp((const char *)v, value);
    xmlFree(v);
    return same;
}

/* the first element named `local` with name="value" under n, depth first */
static xmlNode *find(xmlNode *n, const char *local, const char *value)
{
    for (xmlNode *c = n ? n->children : NULL; c; c = c->next) {
        if (is_xs(c, local) && has_name(c, value))
            return c;
        xmlNode *deeper = find(c, local, value);
        if (deeper)
            return deeper;
    }
    return NULL;
}

static void add(names *out, xmlChar *v)
{
    if (v && out->n < MAX_NAMES)
        out->name[out->n++] = strdup((const char *)v);
    xmlFree(v);
}

/* every xs:enumeration value under n, in document order */
static void enumeration(const xmlNode *n, names *out)
{
    for (xmlNode *c = n ? n->children : NULL; c; c = c->next) {
        if (is_xs(c, "enumeration"))
            add(out, xmlGetProp(c, (const xmlChar *)"value"));
        enumeration(c, out);
    }
}

static int contains(const names *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->name[i], name))
            return 1;
    return 0;
}

static void free_names(names *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->name[i]);
    l->n = 0;
}

/* the enumeration of <fabric name="..."> equals the table's names, in order */
static void check_choices(xmlNode *fabric, const char *attr, const topo_choice *table)
{
    names e = {0};
    enumeration(find(fabric, "attribute", attr), &e);
    size_t n = 0;
    for (; table[n].name; n++) {
        CHECK(n < e.n && !strcmp(e.name[n], table[n].name));
        CHECK(table[n].doc && strlen(table[n].doc) > 10 && !strchr(table[n].doc, '\n'));
        CHECK_INT_EQ(topo_choice_find(table, table[n].name), (long long)n);
    }
    CHECK_INT_EQ(e.n, n);
    CHECK_INT_EQ(topo_choice_find(table, "no-such-choice"), -1);
    free_names(&e);
}

static void check_kinds(xmlNode *fabric)
{
    names topologies = {0}, attrs = {0};
    enumeration(find(fabric, "attribute", "topology"), &topologies);
    for (xmlNode *c = fabric->children; c; c = c->next)
        if (is_xs(c, "attribute"))
            add(&attrs, xmlGetProp(c, (const xmlChar *)"name"));
    CHECK(attrs.n > 20);
    size_t n = 0;
    for (; topo_kinds[n]; n++) {
        const topo_kind *k = topo_kinds[n];
        CHECK(n < topologies.n && !strcmp(topologies.name[n], k->name));
        CHECK(topo_kind_find(k->name) == k);
        CHECK(k->doc && strlen(k->doc) > 10 && !strchr(k->doc, '\n'));
        CHECK(k->count && k->build && k->required && k->required[0]);
        for (const char *const *a = k->required; *a; a++)
            if (!contains(&attrs, *a)) {
                fprintf(stderr, "topology %s requires '%s', not a <fabric> attribute\n",
                        k->name, *a);
                CHECK(0);
            }
        for (const topo_text_attr *a = k->attrs; a && a->name; a++) {
            CHECK(a->parse != NULL);
            CHECK(contains(&attrs, a->name));
        }
    }
    CHECK_INT_EQ(topologies.n, n);
    CHECK(topo_kind_find("no-such-topology") == NULL);
    for (const topo_shape_attr *a = topo_shape_attrs; a->name; a++) {
        CHECK(contains(&attrs, a->name));
        CHECK(a->min <= a->max && a->offset + sizeof(unsigned) <= sizeof(topo_shape));
    }
    free_names(&topologies);
    free_names(&attrs);
}

int main(int argc, char **argv)
{
    const char *xsd = argc > 1 ? argv[1] : DCSIM_SOURCE_DIR "/scenarios/dcsim.xsd";
    xmlDoc *doc = xmlReadFile(xsd, NULL, XML_PARSE_NONET);
    CHECK(doc != NULL);
    if (!doc)
        return check_report();
    xmlNode *fabric = find(xmlDocGetRootElement(doc), "element", "fabric");
    CHECK(fabric != NULL);
    if (fabric) {
        xmlChar *type = xmlGetProp(fabric, (const xmlChar *)"type");
        if (type) /* a named type (fabricType: <cluster><fabric> and <hub><fabric>) */
            fabric = find(xmlDocGetRootElement(doc), "complexType", (const char *)type);
        else
            for (xmlNode *c = fabric->children; c; c = c->next) /* its xs:complexType */
                if (is_xs(c, "complexType"))
                    fabric = c;
        xmlFree(type);
        CHECK(fabric != NULL);
    }
    if (fabric) {
        check_kinds(fabric);
        check_choices(fabric, "routing", topo_balances);
        check_choices(fabric, "paths", topo_path_classes);
        check_choices(fabric, "arrangement", topo_dragonfly_arrangements);
    }
    xmlFreeDoc(doc);
    xmlCleanupParser();
    return check_report();
}
