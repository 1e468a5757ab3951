/* scenario.c - scenario loading (see scenario.h).
 *
 * Order: read -> XInclude -> --set overrides -> XSD -> semantic checks. The
 * first problem found is the one reported. Nodes that came in through
 * XInclude keep their own file (xml:base) and line, so errors point into the
 * included file.
 */
#include "scenario.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xinclude.h>
#include <libxml/xmlschemas.h>

#include "units.h"

extern const unsigned char dcsim_xsd[];
extern const size_t dcsim_xsd_len;
extern const unsigned char dcsim_catalog_gpus[];
extern const size_t dcsim_catalog_gpus_len;
extern const unsigned char dcsim_default_scenario[];
extern const size_t dcsim_default_scenario_len;

#define DEFAULT_NAME "default.xml"
#define BUILTIN_GPUS_NAME "catalog/gpus.xml (built-in)"
#define MAX_GPUS 10000000.0 /* one scenario; the resource guard is a later issue */
#define MAX_PARAMS 1e15
#define MAX_TOKENS 1e18
#define DEFAULT_SEED 1

static const char *const precision_names[SCN_PREC_COUNT] = {"fp32", "tf32", "bf16",
                                                             "fp16", "fp8",  "fp4"};

const char *scn_precision_name(enum scn_precision p)
{
    return (unsigned)p < SCN_PREC_COUNT ? precision_names[p] : "?";
}

const char *scn_default_xml(size_t *len)
{
    if (len)
        *len = dcsim_default_scenario_len;
    return (const char *)dcsim_default_scenario;
}

/* ---------------------------------------------------------------- errors */

typedef struct override {
    xmlNode *elem;
    char attr[64];
    char option[600]; /* "--set PATH=VALUE", the location of errors in this value */
} override;

typedef struct loader {
    sim_error *err;
    const char *display_name; /* how the main document is named in errors */
    override *ovr;
    size_t n_ovr;
    scn_gpu_type *gpus;
    size_t n_gpus, cap_gpus;
    size_t n_builtin_gpus;    /* entries [0, n_builtin) came from the built-in catalog */
    char **files;             /* names of XInclude'd files, owned; see mark_included */
    size_t n_files;
} loader;

typedef struct xml_problem {
    int have;
    char file[512];
    int line;
    char msg[512];
    xmlNode *node;
} xml_problem;

static void on_xml_error(void *ctx, xmlErrorPtr e)
{
    xml_problem *p = ctx;
    if (p->have || !e || e->level < XML_ERR_ERROR)
        return;
    p->have = 1;
    snprintf(p->file, sizeof p->file, "%s", e->file ? e->file : "");
    p->line = e->line;
    snprintf(p->msg, sizeof p->msg, "%s", e->message ? e->message : "unknown error");
    size_t n = strlen(p->msg);
    while (n && (p->msg[n - 1] == '\n' || p->msg[n - 1] == ' ' || p->msg[n - 1] == '.'))
        p->msg[--n] = '\0';
    if (e->node && ((xmlNode *)e->node)->type == XML_ELEMENT_NODE)
        p->node = e->node;
}

/* the --set that gave n its attribute attr; with attr NULL (an error about
 * the element as a whole) the latest --set on that element */
static const override *find_override(const loader *ld, const xmlNode *n, const char *attr)
{
    for (size_t i = ld->n_ovr; i-- > 0;)
        if (ld->ovr[i].elem == n && (!attr || strcmp(ld->ovr[i].attr, attr) == 0))
            return &ld->ovr[i];
    return NULL;
}

/* file and line of an element: the XInclude'd file when it came from one
 * (mark_included keeps that file's name in the node's _private) */
static void node_location(const loader *ld, xmlNode *n, char *file, size_t size, int *line)
{
    *line = (int)xmlGetLineNo(n);
    snprintf(file, size, "%s", n->_private ? (const char *)n->_private : ld->display_name);
    if (*line < 0)
        *line = 0;
}

/* "dir/main.xml" + "cat.xml" -> "dir/cat.xml", as XInclude resolves it */
static const char *included_name(loader *ld, const char *from, const char *href)
{
    const char *slash = strrchr(from, '/');
    size_t dir = (href[0] == '/' || !slash) ? 0 : (size_t)(slash - from) + 1;
    char *name = malloc(dir + strlen(href) + 1);
    char **files = realloc(ld->files, (ld->n_files + 1) * sizeof *files);
    if (files)
        ld->files = files;
    if (!name || !files) {
        free(name);
        return NULL;
    }
    memcpy(name, from, dir);
    strcpy(name + dir, href);
    ld->files[ld->n_files++] = name;
    return name;
}

/* XInclude leaves its result between XINCLUDE_START (the old xi:include
 * element, href intact) and XINCLUDE_END markers. Label every included
 * element with its file (in _private; NULL means the main document) for error
 * messages, then drop the markers so the schema and the serialiser see a
 * plain tree. An href is resolved from the including file's directory.
 * (xml:base cannot serve: libxml2 omits it for files in the same directory.) */
static int mark_included(loader *ld, xmlNode *first, const char *file)
{
    enum { MAX_DEPTH = 32 };
    const char *stack[MAX_DEPTH];
    int depth = 0;
    const char *current = file;
    for (xmlNode *n = first, *next; n; n = next) {
        next = n->next;
        if (n->type == XML_ELEMENT_NODE) {
            n->_private = (void *)current;
            int rc = mark_included(ld, n->children, current);
            if (rc)
                return rc;
            continue;
        }
        if (n->type == XML_XINCLUDE_START) {
            /* xmlGetProp serves element nodes only: read the attribute list */
            xmlChar *href = NULL;
            for (xmlAttr *a = n->properties; a && !href; a = a->next)
                if (xmlStrEqual(a->name, (const xmlChar *)"href"))
                    href = xmlNodeListGetString(n->doc, a->children, 1);
            const char *from = current ? current : ld->display_name;
            if (depth == MAX_DEPTH || !href) {
                xmlFree(href);
                return sim_error_set(ld->err, SIM_ERR_INPUT, from, (int)xmlGetLineNo(n),
                                     "<xi:include>: nested too deep or without href");
            }
            stack[depth++] = current;
            current = included_name(ld, from, (const char *)href);
            xmlFree(href);
            if (!current)
                return sim_error_set(ld->err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
        } else if (n->type == XML_XINCLUDE_END) {
            current = depth ? stack[--depth] : file;
        } else {
            continue;
        }
        xmlUnlinkNode(n);
        xmlFreeNode(n);
    }
    return 0;
}

/* "<elem attr="value">" (attr may be NULL), value shortened for one line */
static void describe(xmlNode *n, const char *attr, char *out, size_t size)
{
    xmlChar *value = attr ? xmlGetProp(n, (const xmlChar *)attr) : NULL;
    if (value) {
        int long_value = xmlStrlen(value) > 60;
        snprintf(out, size, "<%s %s=\"%.60s%s\">", n->name, attr, value, long_value ? "..." : "");
    } else {
        snprintf(out, size, "<%s>", n->name);
    }
    xmlFree(value);
}

static int node_verror(loader *ld, xmlNode *n, const char *attr, const char *fmt, va_list ap)
{
    char what[256], msg[800], file[640];
    int line = 0;
    describe(n, attr, what, sizeof what);
    vsnprintf(msg, sizeof msg, fmt, ap);
    const override *o = find_override(ld, n, attr);
    if (o) {
        snprintf(file, sizeof file, "%s", o->option);
    } else {
        node_location(ld, n, file, sizeof file, &line);
    }
    return sim_error_set(ld->err, SIM_ERR_INPUT, file, line, "%s: %s", what, msg);
}

static int node_error(loader *ld, xmlNode *n, const char *attr, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int node_error(loader *ld, xmlNode *n, const char *attr, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = node_verror(ld, n, attr, fmt, ap);
    va_end(ap);
    return rc;
}

/* ------------------------------------------------------------ attributes */

static xmlNode *child(xmlNode *n, const char *name)
{
    for (xmlNode *c = n ? n->children : NULL; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && xmlStrEqual(c->name, (const xmlChar *)name))
            return c;
    return NULL;
}

static int has_attr(xmlNode *n, const char *attr)
{
    return xmlHasProp(n, (const xmlChar *)attr) != NULL;
}

static void copy_attr(xmlNode *n, const char *attr, char *out, size_t size)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)attr);
    snprintf(out, size, "%s", v ? (const char *)v : "");
    xmlFree(v);
}

/* Parse a quantity attribute. Absent and not required: *out untouched, 0. */
static int get_quantity(loader *ld, xmlNode *n, const char *attr, enum sim_dim dim,
                        int required, double *out)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)attr);
    if (!v) {
        if (required)
            return node_error(ld, n, NULL, "attribute '%s' is required", attr);
        return 0;
    }
    char why[400];
    double x;
    int bad = sim_units_parse((const char *)v, dim, &x, why, sizeof why);
    xmlFree(v);
    if (bad)
        return node_error(ld, n, attr, "%s", why);
    *out = x;
    return 0;
}

static int positive(loader *ld, xmlNode *n, const char *attr, double x, double max,
                    const char *unit_hint)
{
    if (!(x > 0))
        return node_error(ld, n, attr, "%s must be positive", attr);
    if (x > max)
        return node_error(ld, n, attr, "%s must be at most %.15g%s", attr, max, unit_hint);
    return 0;
}

static int non_negative(loader *ld, xmlNode *n, const char *attr, double x)
{
    if (!(x >= 0))
        return node_error(ld, n, attr, "%s must be zero or positive", attr);
    return 0;
}

static int whole(loader *ld, xmlNode *n, const char *attr, double x)
{
    if (x != floor(x))
        return node_error(ld, n, attr, "%s must be a whole number", attr);
    return 0;
}

/* --------------------------------------------------------------- catalog */

static int parse_precision(const char *s, enum scn_precision *out)
{
    for (int p = 0; p < SCN_PREC_COUNT; p++)
        if (strcmp(s, precision_names[p]) == 0) {
            *out = (enum scn_precision)p;
            return 0;
        }
    return -1;
}

static scn_gpu_type *find_gpu(loader *ld, const char *name, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        if (strcmp(ld->gpus[i].name, name) == 0)
            return &ld->gpus[i];
    return NULL;
}

static int parse_gpu(loader *ld, xmlNode *n)
{
    scn_gpu_type g;
    memset(&g, 0, sizeof g);
    copy_attr(n, "name", g.name, sizeof g.name);
    copy_attr(n, "description", g.description, sizeof g.description);
    for (xmlNode *c = n->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        int rc = 0;
        if (xmlStrEqual(c->name, (const xmlChar *)"peak")) {
            char prec[16];
            enum scn_precision p;
            copy_attr(c, "precision", prec, sizeof prec);
            if (parse_precision(prec, &p))
                return node_error(ld, c, "precision", "unknown precision");
            double rate = 0;
            rc = get_quantity(ld, c, "rate", SIM_DIM_FLOP_RATE, 1, &rate);
            if (!rc)
                rc = positive(ld, c, "rate", rate, INFINITY, "");
            if (!rc && g.peak_flops_per_s[p] > 0)
                rc = node_error(ld, c, "precision", "GPU '%s' already has a %s peak", g.name,
                                prec);
            g.peak_flops_per_s[p] = rate;
        } else if (xmlStrEqual(c->name, (const xmlChar *)"memory")) {
            rc = get_quantity(ld, c, "capacity", SIM_DIM_DATA, 0, &g.hbm_bytes);
            if (!rc && has_attr(c, "capacity"))
                rc = positive(ld, c, "capacity", g.hbm_bytes, INFINITY, "");
            if (!rc)
                rc = get_quantity(ld, c, "bandwidth", SIM_DIM_BANDWIDTH, 0, &g.hbm_bytes_per_s);
            if (!rc && has_attr(c, "bandwidth"))
                rc = positive(ld, c, "bandwidth", g.hbm_bytes_per_s, INFINITY, "");
        } else if (xmlStrEqual(c->name, (const xmlChar *)"power")) {
            rc = get_quantity(ld, c, "tdp", SIM_DIM_POWER, 1, &g.tdp_w);
            if (!rc)
                rc = positive(ld, c, "tdp", g.tdp_w, INFINITY, "");
        }
        if (rc)
            return rc;
    }
    /* a scenario's entry replaces a built-in one; two in the scenario clash */
    scn_gpu_type *same = find_gpu(ld, g.name, ld->n_builtin_gpus, ld->n_gpus);
    if (same)
        return node_error(ld, n, "name", "GPU type '%s' is defined twice in this catalog",
                          g.name);
    scn_gpu_type *builtin = find_gpu(ld, g.name, 0, ld->n_builtin_gpus);
    if (builtin)
        builtin->name[0] = '\0'; /* hidden by the scenario's entry */
    if (ld->n_gpus == ld->cap_gpus) {
        size_t cap = ld->cap_gpus ? 2 * ld->cap_gpus : 16;
        scn_gpu_type *gpus = realloc(ld->gpus, cap * sizeof *gpus);
        if (!gpus)
            return sim_error_set(ld->err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
        ld->gpus = gpus;
        ld->cap_gpus = cap;
    }
    ld->gpus[ld->n_gpus++] = g;
    return 0;
}

/* every <gpu> of a <gpus> catalog or of a scenario's <catalog> (inline or
 * inside an XInclude'd <gpus>) */
static int parse_catalog(loader *ld, xmlNode *catalog)
{
    for (xmlNode *c = catalog->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        int rc = 0;
        if (xmlStrEqual(c->name, (const xmlChar *)"gpu"))
            rc = parse_gpu(ld, c);
        else if (xmlStrEqual(c->name, (const xmlChar *)"gpus"))
            rc = parse_catalog(ld, c);
        if (rc)
            return rc;
    }
    return 0;
}

/* ------------------------------------------------------ parse + validate */

static xmlDoc *read_doc(loader *ld, const char *path, const char *text, size_t len)
{
    xml_problem prob = {0};
    xmlSetStructuredErrorFunc(&prob, on_xml_error);
    int opts = XML_PARSE_NONET | XML_PARSE_NOBLANKS;
    xmlDoc *doc = path ? xmlReadFile(path, NULL, opts)
                       : xmlReadMemory(text, (int)len, ld->display_name, NULL, opts);
    if (doc && xmlXIncludeProcessFlags(doc, opts) < 0 && !prob.have) {
        prob.have = 1;
        snprintf(prob.msg, sizeof prob.msg, "XInclude processing failed");
    }
    xmlSetStructuredErrorFunc(NULL, NULL);
    if (doc && !prob.have && mark_included(ld, doc->children, NULL)) {
        xmlFreeDoc(doc);
        return NULL;
    }
    if (prob.have) {
        int line = prob.line;
        char file[512];
        if (prob.node)
            node_location(ld, prob.node, file, sizeof file, &line);
        else
            snprintf(file, sizeof file, "%s",
                     prob.file[0] && strcmp(prob.file, path ? path : "") != 0 ? prob.file
                                                                              : ld->display_name);
        sim_error_set(ld->err, SIM_ERR_INPUT, file, line, "%s: %s",
                      doc ? "XInclude" : "malformed XML", prob.msg);
        xmlFreeDoc(doc);
        return NULL;
    }
    if (!doc)
        sim_error_set(ld->err, SIM_ERR_INPUT, ld->display_name, 0, "cannot parse the document");
    return doc;
}

/* reformat libxml2's "Element 'x', attribute 'y': Text" as "<x y="v">: Text" */
static int schema_error(loader *ld, const xml_problem *prob)
{
    const char *msg = prob->msg;
    char attr[64] = "";
    const char *rest = msg;
    const char *a = strstr(msg, ", attribute '");
    const char *colon = strstr(msg, "': ");
    if (strncmp(msg, "Element '", 9) == 0 && colon) {
        rest = colon + 3;
        if (strncmp(rest, "[facet '", 8) == 0 && strstr(rest, "'] "))
            rest = strstr(rest, "'] ") + 3;
        if (a && a < colon) {
            size_t n = (size_t)(colon - (a + 13));
            if (n < sizeof attr) {
                memcpy(attr, a + 13, n);
                attr[n] = '\0';
            }
        }
    }
    if (prob->node)
        return node_error(ld, prob->node, attr[0] ? attr : NULL, "%s", rest);
    return sim_error_set(ld->err, SIM_ERR_INPUT, prob->file[0] ? prob->file : ld->display_name,
                         prob->line, "%s", msg);
}

static int validate(loader *ld, xmlDoc *doc)
{
    xml_problem prob = {0};
    int rc = 0;
    xmlSetStructuredErrorFunc(&prob, on_xml_error);
    xmlSchemaParserCtxt *pctx =
        xmlSchemaNewMemParserCtxt((const char *)dcsim_xsd, (int)dcsim_xsd_len);
    xmlSchema *schema = pctx ? xmlSchemaParse(pctx) : NULL;
    xmlSchemaValidCtxt *vctx = schema ? xmlSchemaNewValidCtxt(schema) : NULL;
    if (!vctx) {
        rc = sim_error_set(ld->err, SIM_ERR_INTERNAL, NULL, 0, "the built-in schema does not load: %s",
                           prob.have ? prob.msg : "out of memory");
    } else {
        xmlSchemaSetValidStructuredErrors(vctx, on_xml_error, &prob);
        if (xmlSchemaValidateDoc(vctx, doc) != 0)
            rc = prob.have ? schema_error(ld, &prob)
                           : sim_error_set(ld->err, SIM_ERR_INPUT, ld->display_name, 0,
                                           "the document does not match the schema");
    }
    xmlSetStructuredErrorFunc(NULL, NULL);
    xmlSchemaFreeValidCtxt(vctx);
    xmlSchemaFree(schema);
    xmlSchemaFreeParserCtxt(pctx);
    return rc;
}

/* ------------------------------------------------------------------ --set */

static int set_error(loader *ld, const char *spec, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int set_error(loader *ld, const char *spec, const char *fmt, ...)
{
    char file[600], msg[800];
    snprintf(file, sizeof file, "--set %s", spec);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sim_error_set(ld->err, SIM_ERR_INPUT, file, 0, "%s", msg);
}

static int is_name_char(int c) { return isalnum(c) || c == '-' || c == '_' || c == '.'; }

static void list_children(xmlNode *n, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (xmlNode *c = n->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        int k = snprintf(out + used, size - used, "%s<%s>", used ? " " : "", c->name);
        if (k < 0 || (size_t)k >= size - used)
            break;
        used += (size_t)k;
    }
    if (!used)
        snprintf(out, size, "no child elements");
}

/* PATH=VALUE with PATH = [/dcsim/] (name[index]/)* @attr */
static int apply_set(loader *ld, xmlDoc *doc, const char *spec)
{
    const char *eq = strchr(spec, '=');
    if (!eq)
        return set_error(ld, spec, "expected PATH=VALUE, e.g. --set checkpoint/@interval=20min");
    char path[512];
    size_t plen = (size_t)(eq - spec);
    if (plen == 0 || plen >= sizeof path)
        return set_error(ld, spec, "empty or too long path; expected e.g. checkpoint/@interval");
    memcpy(path, spec, plen);
    path[plen] = '\0';
    const char *value = eq + 1;

    xmlNode *cur = xmlDocGetRootElement(doc);
    char *p = path;
    if (strncmp(p, "/dcsim/", 7) == 0)
        p += 7;
    else if (*p == '/')
        return set_error(ld, spec, "paths start below <dcsim>, e.g. checkpoint/@interval");
    for (;;) {
        char *slash = strchr(p, '/');
        if (*p == '@') {
            if (slash)
                return set_error(ld, spec, "the attribute '%s' must be the last part of the path", p);
            const char *attr = p + 1;
            if (!*attr || !isalpha((unsigned char)*attr))
                return set_error(ld, spec, "'%s' is not an attribute name", p);
            for (const char *q = attr; *q; q++)
                if (!is_name_char((unsigned char)*q))
                    return set_error(ld, spec, "'%s' is not an attribute name", p);
            break;
        }
        if (!slash)
            return set_error(ld, spec,
                             "the path must end in an attribute, e.g. checkpoint/@interval");
        *slash = '\0';
        long index = 0; /* 0: the element must be unique */
        char *bracket = strchr(p, '[');
        if (bracket) {
            char *end = NULL;
            index = strtol(bracket + 1, &end, 10);
            if (index < 1 || !end || strcmp(end, "]") != 0)
                return set_error(ld, spec, "'%s': an index is written [1], [2], ...", p);
            *bracket = '\0';
        }
        if (!*p)
            return set_error(ld, spec, "empty element name in the path");
        for (const char *q = p; *q; q++)
            if (!is_name_char((unsigned char)*q))
                return set_error(ld, spec, "'%s' is not an element name", p);
        xmlNode *found = NULL;
        long count = 0;
        for (xmlNode *c = cur->children; c; c = c->next)
            if (c->type == XML_ELEMENT_NODE && xmlStrEqual(c->name, (const xmlChar *)p)) {
                count++;
                if (index == 0 ? count == 1 : count == index)
                    found = c;
            }
        if (count == 0) {
            char kids[400];
            list_children(cur, kids, sizeof kids);
            return set_error(ld, spec, "no element <%s> in <%s>; it has: %s", p, cur->name,
                             kids);
        }
        if (index == 0 && count > 1)
            return set_error(ld, spec, "<%s> has %ld <%s> elements; pick one with %s[1] ... %s[%ld]",
                             cur->name, count, p, p, p, count);
        if (!found)
            return set_error(ld, spec, "<%s> has only %ld <%s> elements", cur->name, count, p);
        cur = found;
        p = slash + 1;
    }
    const char *attr = p + 1;
    override *ovr = realloc(ld->ovr, (ld->n_ovr + 1) * sizeof *ovr);
    if (!ovr)
        return sim_error_set(ld->err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
    ld->ovr = ovr;
    override *o = &ovr[ld->n_ovr++];
    o->elem = cur;
    snprintf(o->attr, sizeof o->attr, "%s", attr);
    snprintf(o->option, sizeof o->option, "--set %s", spec);
    if (!xmlSetProp(cur, (const xmlChar *)attr, (const xmlChar *)value))
        return sim_error_set(ld->err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
    return 0;
}

/* -------------------------------------------------------------- semantics */

static int parse_seed(loader *ld, xmlNode *root, uint64_t *seed)
{
    xmlChar *v = xmlGetProp(root, (const xmlChar *)"seed");
    if (!v) {
        *seed = DEFAULT_SEED;
        return 0;
    }
    const char *s = (const char *)v;
    int ok = *s != '\0';
    for (const char *q = s; *q; q++)
        ok = ok && isdigit((unsigned char)*q);
    errno = 0;
    unsigned long long x = ok ? strtoull(s, NULL, 10) : 0;
    xmlFree(v);
    if (!ok || errno == ERANGE)
        return node_error(ld, root, "seed", "seed must be a whole number from 0 to %llu",
                          (unsigned long long)UINT64_MAX);
    *seed = (uint64_t)x;
    return 0;
}

static int parse_cluster(loader *ld, xmlNode *root, scn_scenario *s)
{
    xmlNode *gpu = child(child(root, "cluster"), "gpu");
    char type[128];
    copy_attr(gpu, "type", type, sizeof type);
    scn_gpu_type *g = type[0] ? find_gpu(ld, type, 0, ld->n_gpus) : NULL;
    if (!g) {
        char known[1024] = "";
        size_t used = 0;
        for (size_t i = 0; i < ld->n_gpus; i++) {
            if (!ld->gpus[i].name[0])
                continue;
            int k = snprintf(known + used, sizeof known - used, "%s%s", used ? ", " : "",
                             ld->gpus[i].name);
            if (k < 0 || (size_t)k >= sizeof known - used)
                break;
            used += (size_t)k;
        }
        return node_error(ld, gpu, "type",
                          "unknown GPU type; known types: %s (add one in <catalog>)", known);
    }
    s->gpu = *g;
    double count = 0;
    int rc = get_quantity(ld, gpu, "count", SIM_DIM_COUNT, 1, &count);
    if (!rc)
        rc = whole(ld, gpu, "count", count);
    if (!rc)
        rc = positive(ld, gpu, "count", count, MAX_GPUS, " GPUs");
    s->campaign.gpu_count = (uint64_t)count;
    return rc;
}

static int parse_job(loader *ld, xmlNode *root, scn_scenario *s)
{
    xmlNode *job = child(root, "job");
    xmlNode *model = child(job, "model");
    xmlNode *training = child(job, "training");
    campaign_config *c = &s->campaign;
    copy_attr(model, "name", s->model_name, sizeof s->model_name);
    int rc = get_quantity(ld, model, "parameters", SIM_DIM_COUNT, 1, &c->model_params);
    if (!rc)
        rc = positive(ld, model, "parameters", c->model_params, MAX_PARAMS, "");
    if (!rc)
        rc = get_quantity(ld, training, "tokens", SIM_DIM_COUNT, 1, &c->train_tokens);
    if (!rc)
        rc = positive(ld, training, "tokens", c->train_tokens, MAX_TOKENS, "");
    if (!rc)
        rc = get_quantity(ld, training, "tokens-per-iteration", SIM_DIM_COUNT, 1,
                          &c->tokens_per_iteration);
    if (!rc)
        rc = whole(ld, training, "tokens-per-iteration", c->tokens_per_iteration);
    if (!rc)
        rc = positive(ld, training, "tokens-per-iteration", c->tokens_per_iteration, INFINITY, "");
    if (!rc && c->tokens_per_iteration > c->train_tokens)
        rc = node_error(ld, training, "tokens-per-iteration",
                        "tokens-per-iteration must not exceed tokens (%.15g)", c->train_tokens);
    if (!rc)
        rc = get_quantity(ld, training, "mfu", SIM_DIM_FRACTION, 1, &c->mfu_frac);
    if (!rc && !(c->mfu_frac > 0 && c->mfu_frac <= 1))
        rc = node_error(ld, training, "mfu", "mfu must be above 0 and at most 100%%");
    if (rc)
        return rc;
    char prec[16];
    copy_attr(training, "precision", prec, sizeof prec);
    if (parse_precision(prec, &s->precision))
        return node_error(ld, training, "precision", "unknown precision");
    c->gpu_peak_flops_per_s = s->gpu.peak_flops_per_s[s->precision];
    if (!(c->gpu_peak_flops_per_s > 0)) {
        char have[128] = "";
        size_t used = 0;
        for (int p = 0; p < SCN_PREC_COUNT; p++)
            if (s->gpu.peak_flops_per_s[p] > 0)
                used += (size_t)snprintf(have + used, sizeof have - used, "%s%s",
                                         used ? " " : "", precision_names[p]);
        return node_error(ld, training, "precision",
                          "the catalog has no %s peak for GPU type '%s'; it has: %s", prec,
                          s->gpu.name, have);
    }
    return 0;
}

static int parse_reliability(loader *ld, xmlNode *root, scn_scenario *s)
{
    xmlNode *rel = child(root, "reliability");
    xmlNode *failure = child(rel, "failure");
    xmlNode *restart = child(rel, "restart");
    campaign_config *c = &s->campaign;
    int rc = 0;
    if (failure) {
        int has_rate = has_attr(failure, "rate"), has_mtbf = has_attr(failure, "mtbf");
        if (has_rate == has_mtbf)
            return node_error(ld, failure, NULL,
                              "give exactly one of rate (per component, e.g. \"2e-5/h\") "
                              "or mtbf (per component, e.g. \"50000h\")");
        if (has_rate) {
            rc = get_quantity(ld, failure, "rate", SIM_DIM_FREQUENCY, 1,
                              &c->gpu_failure_rate_per_s);
            if (!rc)
                rc = non_negative(ld, failure, "rate", c->gpu_failure_rate_per_s);
        } else {
            double mtbf = 0;
            rc = get_quantity(ld, failure, "mtbf", SIM_DIM_TIME, 1, &mtbf);
            if (!rc)
                rc = positive(ld, failure, "mtbf", mtbf, INFINITY, "");
            c->gpu_failure_rate_per_s = rc ? 0 : 1.0 / mtbf;
        }
        if (!rc && !restart)
            rc = node_error(ld, rel, NULL,
                            "a <failure> needs a <restart time=\"...\"/> saying what each "
                            "failure costs");
    }
    if (!rc && restart) {
        rc = get_quantity(ld, restart, "time", SIM_DIM_TIME, 1, &c->restart_s);
        if (!rc)
            rc = non_negative(ld, restart, "time", c->restart_s);
    }
    return rc;
}

static int parse_checkpoint(loader *ld, xmlNode *root, scn_scenario *s)
{
    xmlNode *ck = child(root, "checkpoint");
    campaign_config *c = &s->campaign;
    int rc = get_quantity(ld, ck, "interval", SIM_DIM_TIME, 1, &c->checkpoint_interval_s);
    if (!rc)
        rc = positive(ld, ck, "interval", c->checkpoint_interval_s, INFINITY, "");
    if (!rc)
        rc = get_quantity(ld, ck, "write-time", SIM_DIM_TIME, 1, &c->checkpoint_write_s);
    if (!rc)
        rc = non_negative(ld, ck, "write-time", c->checkpoint_write_s);
    return rc;
}

static int load_builtin_catalog(loader *ld)
{
    loader cat = {.err = ld->err, .display_name = BUILTIN_GPUS_NAME};
    xmlDoc *doc = read_doc(&cat, NULL, (const char *)dcsim_catalog_gpus, dcsim_catalog_gpus_len);
    int rc = doc ? validate(&cat, doc) : SIM_ERR_INPUT;
    if (!rc)
        rc = parse_catalog(&cat, xmlDocGetRootElement(doc));
    xmlFreeDoc(doc);
    ld->gpus = cat.gpus;
    ld->n_gpus = cat.n_gpus;
    ld->cap_gpus = cat.cap_gpus;
    ld->n_builtin_gpus = cat.n_gpus;
    return rc;
}

static int check_readable(loader *ld, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return sim_error_set(ld->err, SIM_ERR_IO, path, 0, "cannot read the scenario: %s",
                             strerror(errno));
    fclose(f);
    return 0;
}

int scn_load(const char *path, const char *const *sets, size_t n_sets, scn_scenario *out,
             sim_error *err)
{
    memset(out, 0, sizeof *out);
    loader ld = {.err = err, .display_name = path ? path : DEFAULT_NAME};
    scn_scenario s;
    memset(&s, 0, sizeof s);
    snprintf(s.source, sizeof s.source, "%s", ld.display_name);

    int rc = load_builtin_catalog(&ld);
    if (!rc && path)
        rc = check_readable(&ld, path);
    xmlDoc *doc = NULL;
    if (!rc) {
        doc = read_doc(&ld, path, (const char *)dcsim_default_scenario, dcsim_default_scenario_len);
        if (!doc)
            rc = SIM_ERR_INPUT;
    }
    xmlNode *root = doc ? xmlDocGetRootElement(doc) : NULL;
    if (!rc && (!root || !xmlStrEqual(root->name, (const xmlChar *)"dcsim")))
        rc = root ? node_error(&ld, root, NULL, "the root element must be <dcsim>")
                  : sim_error_set(err, SIM_ERR_INPUT, ld.display_name, 0, "empty document");
    for (size_t i = 0; !rc && i < n_sets; i++)
        rc = apply_set(&ld, doc, sets[i]);
    if (!rc)
        rc = validate(&ld, doc);
    if (!rc) {
        char version[16];
        copy_attr(root, "version", version, sizeof version);
        if (strcmp(version, "1") != 0)
            rc = node_error(&ld, root, "version", "unsupported format version; this dcsim reads version 1");
    }
    if (!rc)
        rc = parse_seed(&ld, root, &s.seed);
    if (!rc) {
        copy_attr(root, "name", s.name, sizeof s.name);
        xmlNode *catalog = child(root, "catalog");
        if (catalog)
            rc = parse_catalog(&ld, catalog);
    }
    if (!rc)
        rc = parse_cluster(&ld, root, &s);
    if (!rc)
        rc = parse_job(&ld, root, &s);
    if (!rc)
        rc = parse_reliability(&ld, root, &s);
    if (!rc)
        rc = parse_checkpoint(&ld, root, &s);
    if (!rc) {
        s.campaign.seed = s.seed;
        sim_error check;
        sim_error_clear(&check);
        if (campaign_config_check(&s.campaign, &check))
            rc = sim_error_set(err, SIM_ERR_INPUT, ld.display_name, 0, "%s", check.msg);
    }
    if (!rc) {
        xmlChar *text = NULL;
        int len = 0;
        xmlDocDumpFormatMemoryEnc(doc, &text, &len, "UTF-8", 1);
        s.resolved_xml = text ? malloc((size_t)len + 1) : NULL;
        if (!s.resolved_xml) {
            rc = sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
        } else {
            memcpy(s.resolved_xml, text, (size_t)len);
            s.resolved_xml[len] = '\0';
            s.resolved_xml_len = (size_t)len;
        }
        xmlFree(text);
    }
    xmlFreeDoc(doc);
    free(ld.ovr);
    free(ld.gpus);
    for (size_t i = 0; i < ld.n_files; i++)
        free(ld.files[i]);
    free(ld.files);
    if (!rc)
        *out = s;
    return rc;
}

void scn_scenario_free(scn_scenario *s)
{
    if (!s)
        return;
    free(s->resolved_xml);
    memset(s, 0, sizeof *s);
}
