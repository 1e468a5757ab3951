/* compare_vary.c - the --vary lists of `dcsim compare` (compare_vary.h). */
#include "compare_vary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "scenario.h"


int compare_parse_vary(const char *arg, vary *v)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || !eq[1] || (size_t)(eq - arg) >= sizeof v->key)
        return -1;
    memcpy(v->key, arg, (size_t)(eq - arg));
    v->key[eq - arg] = '\0';
    v->buf = strdup(eq + 1);
    if (!v->buf)
        return -1;
    for (char *save = NULL, *tok = strtok_r(v->buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (v->n == MAX_VALUES)
            return -1;
        v->values[v->n++] = tok;
    }
    return v->n ? 0 : -1;
}

/* --vary network=FILE: the attributes of the file's first <fabric> element,
 * as "cluster/fabric/@NAME=VALUE" sets (replacing the scenario's fabric
 * attributes of those names). The file is read as scenarios are
 * (scn_read_xml); the sets then go through the schema with the scenario.
 * Returns how many, -1 without a <fabric>, or -2 with err filled. */
int compare_fabric_file_sets(const char *path, char **out, int max, sim_error *err)
{
    xmlDoc *doc = scn_read_xml(path, NULL, 0, path, err);
    if (!doc)
        return -2;
    xmlNode *root = doc ? xmlDocGetRootElement(doc) : NULL, *fab = NULL;
    for (xmlNode *n = root; n && !fab; n = n->next ? n->next : NULL)
        fab = xmlStrEqual(n->name, (const xmlChar *)"fabric") ? n : NULL;
    for (xmlNode *c = root && !fab ? root->children : NULL; c && !fab; c = c->next)
        if (c->type == XML_ELEMENT_NODE && xmlStrEqual(c->name, (const xmlChar *)"cluster"))
            for (xmlNode *f = c->children; f && !fab; f = f->next)
                fab = f->type == XML_ELEMENT_NODE &&
                              xmlStrEqual(f->name, (const xmlChar *)"fabric")
                          ? f
                          : NULL;
    int n = 0;
    for (xmlAttr *a = fab ? fab->properties : NULL; a && n < max; a = a->next) {
        xmlChar *v = xmlGetProp(fab, a->name);
        size_t len = strlen((const char *)a->name) + strlen((const char *)v) + 24;
        out[n] = malloc(len);
        if (out[n])
            snprintf(out[n++], len, "cluster/fabric/@%s=%s", (const char *)a->name,
                     (const char *)v);
        xmlFree(v);
    }
    xmlFreeDoc(doc);
    return fab ? n : -1;
}

/* The --set string a --vary value stands for ("" for site, applied after loading). */
char *compare_vary_set(const vary *v, const char *value)
{
    const char *path = !strcmp(v->key, "network") ? "cluster/fabric/@link" : v->key;
    size_t n = strlen(path) + strlen(value) + 2;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s=%s", path, value);
    return s;
}
