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
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <libxml/parser.h>
#include <libxml/SAX2.h>
#include <libxml/tree.h>
#include <libxml/uri.h>
#include <libxml/xinclude.h>
#include <libxml/xmlschemas.h>

#include "dragonfly.h"
#include "stats.h"
#include "rng.h"
#include "units.h"

extern const unsigned char dcsim_xsd[];
extern const size_t dcsim_xsd_len;
extern const unsigned char dcsim_catalog_gpus[];
extern const size_t dcsim_catalog_gpus_len;
extern const unsigned char dcsim_catalog_models[];
extern const size_t dcsim_catalog_models_len;
extern const unsigned char dcsim_catalog_servers[];
extern const size_t dcsim_catalog_servers_len;
extern const unsigned char dcsim_catalog_links[];
extern const size_t dcsim_catalog_links_len;
extern const unsigned char dcsim_catalog_failures[];
extern const size_t dcsim_catalog_failures_len;
extern const unsigned char dcsim_default_scenario[];
extern const size_t dcsim_default_scenario_len;

#define DEFAULT_NAME "default.xml"
#define BUILTIN_GPUS_NAME "catalog/gpus.xml (built-in)"
#define BUILTIN_MODELS_NAME "catalog/models.xml (built-in)"
#define BUILTIN_SERVERS_NAME "catalog/servers.xml (built-in)"
#define BUILTIN_LINKS_NAME "catalog/links.xml (built-in)"
#define MAX_GPUS 1e12 /* beyond any machine: the resource guard (resources.h) refuses what will not fit */
#define MAX_PARAMS 1e15
#define MAX_SPEED_GPUS 1048576u /* <step> per-GPU speeds: see parse_step */
#define MAX_TOKENS 1e18
#define DEFAULT_SEED 1

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

/* The kinds of catalog entry. Every entry type starts with char name[64], so
 * one list type serves them all: entries [0, n_builtin) came from the
 * built-in catalogs, and one replaced by a later catalog has its name
 * emptied (hidden). */
enum catalog_kind { CAT_GPU, CAT_MODEL, CAT_SERVER, CAT_LINK, CATALOG_KINDS };

static const size_t entry_size[CATALOG_KINDS] = {sizeof(hw_gpu), sizeof(model_arch),
                                                 sizeof(hw_server), sizeof(hw_link)};
static const char *const entry_what[CATALOG_KINDS] = {"GPU type", "model", "server type",
                                                      "link technology"};
_Static_assert(offsetof(hw_gpu, name) == 0 && offsetof(model_arch, name) == 0 &&
                   offsetof(hw_server, name) == 0 && offsetof(hw_link, name) == 0,
               "catalog entries must start with their name");

typedef struct entry_list {
    char *items;      /* entry_size[kind] bytes each */
    size_t n, cap;
    size_t n_builtin;
} entry_list;

typedef struct loader {
    sim_error *err;
    const char *display_name; /* how the main document is named in errors */
    override *ovr;
    size_t n_ovr;
    entry_list lists[CATALOG_KINDS]; /* GPU types, models, servers, links */
    unsigned flags;           /* SCN_LOAD_* */
    char **files;             /* names of XInclude'd files, owned; see mark_included */
    size_t n_files;
} loader;

/* The first libxml2 error of a step, copied when it is reported: libxml2
 * frees the nodes of included documents (and the failed xi:include itself)
 * before we print, so only a node of the document being validated (doc) is
 * kept; every other error keeps its file and line. */
typedef struct xml_problem {
    int have;
    char file[512];
    int line;
    char msg[512];
    int domain;        /* libxml2's XML_FROM_*, or -1 for our own refusals (no prefix) */
    const xmlDoc *doc; /* the document whose nodes may be kept, or NULL */
    xmlNode *node;     /* an element of doc, or NULL */
} xml_problem;

static void on_xml_error(void *ctx, xmlErrorPtr e)
{
    xml_problem *p = ctx;
    if (p->have || !e || e->level < XML_ERR_ERROR)
        return;
    p->have = 1;
    p->domain = e->domain;
    snprintf(p->file, sizeof p->file, "%s", e->file ? e->file : "");
    p->line = e->line;
    snprintf(p->msg, sizeof p->msg, "%s", e->message ? e->message : "unknown error");
    size_t n = strlen(p->msg);
    while (n && (p->msg[n - 1] == '\n' || p->msg[n - 1] == ' ' || p->msg[n - 1] == '.'))
        p->msg[--n] = '\0';
    xmlNode *node = e->node;
    if (node && p->doc && node->doc == p->doc && node->type == XML_ELEMENT_NODE)
        p->node = node;
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
        for (xmlChar *c = value; *c; c++) /* a tab or newline (&#10;) keeps one line */
            if (*c < 0x20)
                *c = ' ';
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

static const char *entry_name(const entry_list *l, int kind, size_t i)
{
    return l->items + i * entry_size[kind];
}

/* the entry of that name among [from, to), or NULL */
static void *find_entry(const loader *ld, int kind, const char *name, size_t from, size_t to)
{
    const entry_list *l = &ld->lists[kind];
    for (size_t i = from; i < to; i++)
        if (strcmp(entry_name(l, kind, i), name) == 0)
            return l->items + i * entry_size[kind];
    return NULL;
}

/* the visible entry of that name, or NULL */
static void *find_named(const loader *ld, int kind, const char *name)
{
    return name[0] ? find_entry(ld, kind, name, 0, ld->lists[kind].n) : NULL;
}

/* "A, B, C": the visible names, for "unknown ...; known: ..." messages */
static void entry_names(const loader *ld, int kind, char *buf, size_t size)
{
    const entry_list *l = &ld->lists[kind];
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < l->n; i++) {
        const char *name = entry_name(l, kind, i);
        if (!name[0])
            continue;
        int k = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", name);
        if (k < 0 || (size_t)k >= size - used)
            break;
        used += (size_t)k;
    }
}

/* every entry so far counts as built-in: later ones replace, not clash */
static void mark_builtin(loader *ld)
{
    for (int k = 0; k < CATALOG_KINDS; k++)
        ld->lists[k].n_builtin = ld->lists[k].n;
}

static void free_lists(loader *ld)
{
    for (int k = 0; k < CATALOG_KINDS; k++)
        free(ld->lists[k].items);
}

static int grow(loader *ld, void **array, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return 0;
    size_t new_cap = *cap ? 2 * *cap : 16;
    void *p = realloc(*array, new_cap * elem);
    if (!p)
        return sim_error_set(ld->err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
    *array = p;
    *cap = new_cap;
    return 0;
}

/* Append a parsed entry (node n, for messages). A later catalog's entry
 * replaces a built-in one of the same name; two in one catalog clash. */
static int add_entry(loader *ld, int kind, const void *entry, xmlNode *n)
{
    entry_list *l = &ld->lists[kind];
    const char *name = entry;
    if (find_entry(ld, kind, name, l->n_builtin, l->n))
        return node_error(ld, n, "name", "%s '%s' is defined twice in this catalog",
                          entry_what[kind], name);
    char *builtin = find_entry(ld, kind, name, 0, l->n_builtin);
    if (builtin)
        builtin[0] = '\0'; /* hidden by the new entry */
    int rc = grow(ld, (void **)&l->items, &l->cap, l->n, entry_size[kind]);
    if (rc)
        return rc;
    memcpy(l->items + l->n++ * entry_size[kind], entry, entry_size[kind]);
    return 0;
}

static int get_fraction(loader *ld, xmlNode *n, const char *attr, double *out)
{
    int rc = get_quantity(ld, n, attr, SIM_DIM_FRACTION, 0, out);
    if (!rc && has_attr(n, attr) && !(*out > 0 && *out <= 1))
        rc = node_error(ld, n, attr, "%s must be above 0 and at most 100%%", attr);
    return rc;
}

/* a whole-number attribute in [min, max]; absent and optional: untouched */
static int get_uint(loader *ld, xmlNode *n, const char *attr, int required, unsigned min,
                    unsigned max, unsigned *out)
{
    if (!has_attr(n, attr)) {
        if (required)
            return node_error(ld, n, NULL, "attribute '%s' is required", attr);
        return 0;
    }
    double x = 0;
    int rc = get_quantity(ld, n, attr, SIM_DIM_COUNT, 1, &x);
    if (!rc)
        rc = whole(ld, n, attr, x);
    if (!rc && (x < min || x > max))
        rc = node_error(ld, n, attr, "%s must be between %u and %u", attr, min, max);
    if (!rc)
        *out = (unsigned)x;
    return rc;
}

static int get_bool(loader *ld, xmlNode *n, const char *attr, int *out)
{
    (void)ld;
    xmlChar *v = xmlGetProp(n, (const xmlChar *)attr);
    if (v)
        *out = xmlStrEqual(v, (const xmlChar *)"true");
    xmlFree(v);
    return 0;
}

/* efficiency-by-size="0B:30% 1MB:60% ...": ascending sizes from 0B, at most
 * COMPUTE_MEM_TIERS pairs, each fraction in (0, 1] */
static int parse_mem_tiers(loader *ld, xmlNode *n, hw_gpu *g)
{
    char text[512];
    copy_attr(n, "efficiency-by-size", text, sizeof text);
    const char *hint = "expected ascending SIZE:FRACTION pairs from 0B, e.g. "
                       "\"0B:30% 1MB:60% 10MB:75% 100MB:90%\"";
    unsigned count = 0;
    for (char *save = NULL, *pair = strtok_r(text, " \t", &save); pair;
         pair = strtok_r(NULL, " \t", &save)) {
        char *colon = strchr(pair, ':');
        if (!colon || count == COMPUTE_MEM_TIERS)
            return node_error(ld, n, "efficiency-by-size", "%s, at most %d", hint,
                              COMPUTE_MEM_TIERS);
        *colon = '\0';
        double size = 0, eff = 0;
        char why[300];
        if (sim_units_parse(pair, SIM_DIM_DATA, &size, why, sizeof why))
            return node_error(ld, n, "efficiency-by-size", "'%s': %s", pair, why);
        if (sim_units_parse(colon + 1, SIM_DIM_FRACTION, &eff, why, sizeof why))
            return node_error(ld, n, "efficiency-by-size", "'%s': %s", colon + 1, why);
        if (!(eff > 0 && eff <= 1))
            return node_error(ld, n, "efficiency-by-size", "'%s': a fraction above 0 and at "
                              "most 100%% is expected", colon + 1);
        if (count == 0 ? size != 0 : !(size > g->mem_tier_min_bytes[count - 1]))
            return node_error(ld, n, "efficiency-by-size", "%s", hint);
        g->mem_tier_min_bytes[count] = size;
        g->mem_tier_efficiency[count] = eff;
        count++;
    }
    if (count == 0)
        return node_error(ld, n, "efficiency-by-size", "%s", hint);
    g->n_mem_tiers = count;
    return 0;
}

static int parse_gpu(loader *ld, xmlNode *n)
{
    hw_gpu g;
    memset(&g, 0, sizeof g);
    copy_attr(n, "name", g.name, sizeof g.name);
    copy_attr(n, "description", g.description, sizeof g.description);
    for (xmlNode *c = n->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        int rc = 0;
        if (xmlStrEqual(c->name, (const xmlChar *)"peak")) {
            char prec[16];
            enum precision p;
            copy_attr(c, "precision", prec, sizeof prec);
            if (precision_parse(prec, &p))
                return node_error(ld, c, "precision", "unknown precision");
            double rate = 0, eff = 0;
            rc = get_quantity(ld, c, "rate", SIM_DIM_FLOP_RATE, 1, &rate);
            if (!rc)
                rc = positive(ld, c, "rate", rate, INFINITY, "");
            if (!rc)
                rc = get_fraction(ld, c, "gemm-efficiency", &eff);
            if (!rc && g.peak_flops_per_s[p] > 0)
                rc = node_error(ld, c, "precision", "GPU '%s' already has a %s peak", g.name,
                                prec);
            g.peak_flops_per_s[p] = rate;
            g.gemm_efficiency[p] = eff;
        } else if (xmlStrEqual(c->name, (const xmlChar *)"memory")) {
            rc = get_quantity(ld, c, "capacity", SIM_DIM_DATA, 0, &g.hbm_bytes);
            if (!rc && has_attr(c, "capacity"))
                rc = positive(ld, c, "capacity", g.hbm_bytes, INFINITY, "");
            if (!rc)
                rc = get_quantity(ld, c, "bandwidth", SIM_DIM_BANDWIDTH, 0, &g.hbm_bytes_per_s);
            if (!rc && has_attr(c, "bandwidth"))
                rc = positive(ld, c, "bandwidth", g.hbm_bytes_per_s, INFINITY, "");
            if (!rc && has_attr(c, "efficiency-by-size"))
                rc = parse_mem_tiers(ld, c, &g);
        } else if (xmlStrEqual(c->name, (const xmlChar *)"power")) {
            rc = get_quantity(ld, c, "tdp", SIM_DIM_POWER, 1, &g.tdp_w);
            if (!rc)
                rc = positive(ld, c, "tdp", g.tdp_w, INFINITY, "");
            if (!rc)
                rc = get_quantity(ld, c, "idle", SIM_DIM_POWER, 0, &g.idle_w);
            if (!rc && has_attr(c, "idle"))
                rc = positive(ld, c, "idle", g.idle_w, g.tdp_w, " (the TDP)");
        } else if (xmlStrEqual(c->name, (const xmlChar *)"compute")) {
            rc = get_uint(ld, c, "sms", 0, 1, 100000, &g.sms);
            if (!rc)
                rc = get_quantity(ld, c, "launch-overhead", SIM_DIM_TIME, 0,
                                  &g.launch_overhead_s);
            if (!rc)
                rc = non_negative(ld, c, "launch-overhead", g.launch_overhead_s);
        } else if (xmlStrEqual(c->name, (const xmlChar *)"sustained")) {
            rc = get_fraction(ld, c, "efficiency", &g.sustained_efficiency);
        } else if (xmlStrEqual(c->name, (const xmlChar *)"scale-up")) {
            copy_attr(c, "kind", g.scaleup_kind, sizeof g.scaleup_kind);
            rc = get_quantity(ld, c, "bandwidth", SIM_DIM_BANDWIDTH, 1, &g.scaleup_bytes_per_s);
            if (!rc)
                rc = positive(ld, c, "bandwidth", g.scaleup_bytes_per_s, INFINITY, "");
            if (!rc)
                rc = get_uint(ld, c, "domain", 1, 1, 100000, &g.scaleup_domain);
        }
        if (rc)
            return rc;
    }
    return add_entry(ld, CAT_GPU, &g, n);
}

/* architecture attributes onto m (only those present); catalog entries and
 * <job><model> share them */
static int parse_arch_attrs(loader *ld, xmlNode *n, model_arch *m)
{
    const unsigned big = 100000000u;
    int rc = get_uint(ld, n, "layers", 0, 1, 100000, &m->layers);
    if (!rc)
        rc = get_uint(ld, n, "hidden", 0, 1, big, &m->hidden);
    if (!rc)
        rc = get_uint(ld, n, "heads", 0, 1, 1000000, &m->heads);
    if (!rc)
        rc = get_uint(ld, n, "kv-heads", 0, 1, 1000000, &m->kv_heads);
    if (!rc)
        rc = get_uint(ld, n, "head-dim", 0, 1, 1000000, &m->head_dim);
    if (!rc)
        rc = get_uint(ld, n, "ffn", 0, 1, big, &m->ffn_hidden);
    if (!rc)
        rc = get_uint(ld, n, "vocab", 0, 1, big, &m->vocab);
    if (!rc)
        rc = get_uint(ld, n, "seq-len", 0, 1, big, &m->seq_len);
    if (!rc)
        rc = get_uint(ld, n, "experts", 0, 0, 1000000, &m->experts);
    if (!rc)
        rc = get_uint(ld, n, "top-k", 0, 1, 1000000, &m->top_k);
    if (!rc)
        rc = get_uint(ld, n, "moe-ffn", 0, 1, big, &m->moe_ffn_hidden);
    if (!rc)
        rc = get_uint(ld, n, "shared-experts", 0, 0, 1000000, &m->shared_experts);
    if (!rc)
        rc = get_uint(ld, n, "dense-layers", 0, 0, 100000, &m->dense_layers);
    if (!rc)
        rc = get_bool(ld, n, "tied-embeddings", &m->tied_embeddings);
    if (!rc && has_attr(n, "dropout")) {
        int dropout = 1;
        get_bool(ld, n, "dropout", &dropout);
        m->no_dropout = !dropout;
    }
    if (!rc && has_attr(n, "activation")) {
        char act[16];
        copy_attr(n, "activation", act, sizeof act);
        m->activation = strcmp(act, "swiglu") == 0 ? ACT_SWIGLU : ACT_GELU;
    }
    return rc;
}

/* defaults that follow from other fields, then the architecture check */
static int finish_arch(loader *ld, xmlNode *n, model_arch *m)
{
    static const char *const required[] = {"layers", "hidden", "heads", "ffn", "vocab",
                                           "seq-len"};
    const unsigned *values[] = {&m->layers, &m->hidden, &m->heads, &m->ffn_hidden, &m->vocab,
                                &m->seq_len};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        if (!*values[i])
            return node_error(ld, n, NULL, "the model architecture needs '%s' (with layers, "
                              "hidden, heads, ffn, vocab and seq-len)", required[i]);
    if (!m->kv_heads)
        m->kv_heads = m->heads;
    if (!m->head_dim) {
        if (m->hidden % m->heads)
            return node_error(ld, n, NULL, "hidden (%u) is not a multiple of heads (%u); give "
                              "head-dim", m->hidden, m->heads);
        m->head_dim = m->hidden / m->heads;
    }
    if (m->experts && !m->top_k)
        m->top_k = 1;
    if (!m->experts)
        m->top_k = 1;
    char why[256];
    if (model_arch_check(m, why, sizeof why))
        return node_error(ld, n, NULL, "%s", why);
    return 0;
}

static int parse_model_entry(loader *ld, xmlNode *n)
{
    model_arch m;
    memset(&m, 0, sizeof m);
    copy_attr(n, "name", m.name, sizeof m.name);
    int rc = parse_arch_attrs(ld, n, &m);
    if (!rc)
        rc = finish_arch(ld, n, &m);
    if (rc)
        return rc;
    return add_entry(ld, CAT_MODEL, &m, n);
}

static int parse_server(loader *ld, xmlNode *n)
{
    hw_server sv;
    memset(&sv, 0, sizeof sv);
    copy_attr(n, "name", sv.name, sizeof sv.name);
    copy_attr(n, "description", sv.description, sizeof sv.description);
    copy_attr(n, "gpu", sv.gpu, sizeof sv.gpu);
    if (!find_named(ld, CAT_GPU, sv.gpu)) {
        char known[1024];
        entry_names(ld, CAT_GPU, known, sizeof known);
        return node_error(ld, n, "gpu", "unknown GPU type; known types: %s", known);
    }
    int rc = get_uint(ld, n, "gpus", 1, 1, 1000000, &sv.gpus);
    if (!rc)
        rc = get_uint(ld, n, "nics", 1, 0, 1000000, &sv.nics);
    if (!rc)
        rc = get_quantity(ld, n, "nic-bandwidth", SIM_DIM_BANDWIDTH, 1, &sv.nic_bytes_per_s);
    if (!rc)
        rc = positive(ld, n, "nic-bandwidth", sv.nic_bytes_per_s, INFINITY, "");
    if (!rc)
        rc = get_quantity(ld, n, "system-power", SIM_DIM_POWER, 0, &sv.system_power_w);
    if (!rc && has_attr(n, "system-power"))
        rc = positive(ld, n, "system-power", sv.system_power_w, INFINITY, "");
    if (rc)
        return rc;
    return add_entry(ld, CAT_SERVER, &sv, n);
}

static int parse_link(loader *ld, xmlNode *n)
{
    hw_link lk;
    memset(&lk, 0, sizeof lk);
    copy_attr(n, "name", lk.name, sizeof lk.name);
    char text[32];
    copy_attr(n, "kind", text, sizeof text);
    lk.kind = strcmp(text, "nvlink") == 0     ? HW_LINK_NVLINK
              : strcmp(text, "ethernet") == 0 ? HW_LINK_ETHERNET
                                              : HW_LINK_INFINIBAND;
    copy_attr(n, "routing", text, sizeof text);
    lk.routing = strcmp(text, "ecmp") == 0     ? HW_ROUTING_ECMP
                 : strcmp(text, "spray") == 0  ? HW_ROUTING_SPRAY
                 : strcmp(text, "direct") == 0 ? HW_ROUTING_DIRECT
                                               : HW_ROUTING_ADAPTIVE;
    get_bool(ld, n, "in-network-reduction", &lk.has_in_network_reduction);
    int rc = get_quantity(ld, n, "rate", SIM_DIM_BANDWIDTH, 1, &lk.bytes_per_s);
    if (!rc)
        rc = positive(ld, n, "rate", lk.bytes_per_s, INFINITY, "");
    if (!rc)
        rc = get_fraction(ld, n, "efficiency", &lk.efficiency);
    if (!rc)
        rc = get_quantity(ld, n, "switch-latency", SIM_DIM_TIME, 1, &lk.switch_latency_s);
    if (!rc)
        rc = non_negative(ld, n, "switch-latency", lk.switch_latency_s);
    if (!rc)
        rc = get_quantity(ld, n, "nic-latency", SIM_DIM_TIME, 0, &lk.nic_latency_s);
    if (!rc)
        rc = non_negative(ld, n, "nic-latency", lk.nic_latency_s);
    if (!rc)
        rc = get_quantity(ld, n, "step-latency", SIM_DIM_TIME, 0, &lk.step_latency_s);
    if (!rc)
        rc = non_negative(ld, n, "step-latency", lk.step_latency_s);
    if (!rc)
        rc = get_fraction(ld, n, "reduction-efficiency", &lk.reduction_efficiency);
    if (!rc)
        rc = get_quantity(ld, n, "reduction-latency", SIM_DIM_TIME, 0, &lk.reduction_latency_s);
    if (!rc)
        rc = non_negative(ld, n, "reduction-latency", lk.reduction_latency_s);
    if (!rc)
        rc = get_fraction(ld, n, "incast-efficiency", &lk.incast_efficiency);
    if (rc)
        return rc;
    return add_entry(ld, CAT_LINK, &lk, n);
}

/* every <gpu>, <model> and <server> of a catalog file or of a scenario's
 * <catalog> (inline or inside an XInclude'd <gpus>, <models>, <servers>) */
static int parse_catalog(loader *ld, xmlNode *catalog)
{
    for (xmlNode *c = catalog->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        int rc = 0;
        if (xmlStrEqual(c->name, (const xmlChar *)"gpu"))
            rc = parse_gpu(ld, c);
        else if (xmlStrEqual(c->name, (const xmlChar *)"model"))
            rc = parse_model_entry(ld, c);
        else if (xmlStrEqual(c->name, (const xmlChar *)"server"))
            rc = parse_server(ld, c);
        else if (xmlStrEqual(c->name, (const xmlChar *)"link"))
            rc = parse_link(ld, c);
        else if (xmlStrEqual(c->name, (const xmlChar *)"gpus") ||
                 xmlStrEqual(c->name, (const xmlChar *)"models") ||
                 xmlStrEqual(c->name, (const xmlChar *)"servers") ||
                 xmlStrEqual(c->name, (const xmlChar *)"links"))
            rc = parse_catalog(ld, c);
        if (rc)
            return rc;
    }
    return 0;
}

/* ------------------------------------------------------ parse + validate */

/* The hardened reader. Every XML dcsim reads goes through xml_read: no
 * network, and a DOCTYPE may neither declare entities (an entity referenced
 * many times expands without limit: "billion laughs") nor name an external
 * DTD (XInclude would load it). The parser stops at the declaration, before
 * any expansion. */
static void refuse_dtd(void *ctx, const char *what, const xmlChar *name, const char *why)
{
    xmlParserCtxt *ctxt = ctx;
    xml_problem *p = ctxt->_private;
    if (p && !p->have) {
        p->have = 1;
        p->domain = -1;
        snprintf(p->file, sizeof p->file, "%s",
                 ctxt->input && ctxt->input->filename ? ctxt->input->filename : "");
        p->line = ctxt->input ? ctxt->input->line : 0;
        snprintf(p->msg, sizeof p->msg, "<!%s %.60s>: %s", what, name ? (const char *)name : "",
                 why);
    }
    xmlStopParser(ctxt);
}

static void on_entity_decl(void *ctx, const xmlChar *name, int type, const xmlChar *public_id,
                           const xmlChar *system_id, xmlChar *content)
{
    (void)type, (void)public_id, (void)system_id, (void)content;
    refuse_dtd(ctx, "ENTITY", name,
               "entity declarations are not accepted (they can expand without limit); "
               "write the text out");
}

static void on_unparsed_entity_decl(void *ctx, const xmlChar *name, const xmlChar *public_id,
                                    const xmlChar *system_id, const xmlChar *notation)
{
    (void)public_id, (void)system_id, (void)notation;
    on_entity_decl(ctx, name, 0, NULL, NULL, NULL);
}

static void on_internal_subset(void *ctx, const xmlChar *name, const xmlChar *external_id,
                               const xmlChar *system_id)
{
    if (external_id || system_id)
        refuse_dtd(ctx, "DOCTYPE", name, "external DTDs are not read; remove the DOCTYPE");
    else
        xmlSAX2InternalSubset(ctx, name, external_id, system_id);
}

#define XML_READ_OPTS (XML_PARSE_NONET | XML_PARSE_NOBLANKS)

/* path, or text of len bytes named url; NULL with prob filled (or, with
 * prob empty, out of memory or an unreadable file) */
static xmlDoc *xml_read(const char *path, const char *text, size_t len, const char *url,
                        xml_problem *prob)
{
    xmlParserCtxt *ctxt = xmlNewParserCtxt();
    if (!ctxt)
        return NULL;
    ctxt->sax->entityDecl = on_entity_decl;
    ctxt->sax->unparsedEntityDecl = on_unparsed_entity_decl;
    ctxt->sax->internalSubset = on_internal_subset;
    ctxt->_private = prob;
    xmlDoc *doc = path ? xmlCtxtReadFile(ctxt, path, NULL, XML_READ_OPTS)
                       : xmlCtxtReadMemory(ctxt, text, (int)len, url, NULL, XML_READ_OPTS);
    xmlFreeParserCtxt(ctxt);
    if (doc && prob->have) {
        xmlFreeDoc(doc);
        doc = NULL;
    }
    return doc;
}

/* What XInclude may bring in (docs/scenario.md): without limits, a few small
 * files that each include the next twice expand to 2^depth copies. */
#define XI_MAX_DEPTH 16          /* levels: the main document includes level 1 */
#define XI_MAX_INCLUDES 256      /* inclusions in all, each one counted */
#define XI_MAX_NODES 1000000u    /* elements, attributes and text nodes included in all */
#define XI_MAX_TEXT_BYTES (16u << 20) /* attribute values and text included in all */

typedef struct xi_budget {
    unsigned includes;
    size_t nodes, text_bytes;
    const char *chain[XI_MAX_DEPTH + 1]; /* the main document, then the files being included */
    int depth;
} xi_budget;

static int is_xinclude(const xmlNode *n, const char *name)
{
    return n->type == XML_ELEMENT_NODE && n->ns && xmlStrEqual(n->name, (const xmlChar *)name) &&
           (xmlStrEqual(n->ns->href, (const xmlChar *)"http://www.w3.org/2001/XInclude") ||
            xmlStrEqual(n->ns->href, (const xmlChar *)"http://www.w3.org/2003/XInclude"));
}

static void count_nodes(const xmlNode *n, xi_budget *b)
{
    for (; n; n = n->next) {
        b->nodes++;
        if (n->content)
            b->text_bytes += (size_t)xmlStrlen(n->content);
        if (n->type == XML_ELEMENT_NODE)
            for (const xmlAttr *a = n->properties; a; a = a->next) {
                b->nodes++;
                for (const xmlNode *t = a->children; t; t = t->next)
                    b->text_bytes += t->content ? (size_t)xmlStrlen(t->content) : 0;
            }
        if (n->type == XML_ELEMENT_NODE)
            count_nodes(n->children, b);
    }
}

static int xi_error(loader *ld, const xmlNode *n, const char *href, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int xi_error(loader *ld, const xmlNode *n, const char *href, const char *fmt, ...)
{
    char msg[800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *file = n->doc && n->doc->URL ? (const char *)n->doc->URL : ld->display_name;
    long line = xmlGetLineNo(n);
    if (href)
        return sim_error_set(ld->err, SIM_ERR_INPUT, file, line > 0 ? (int)line : 0,
                             "<xi:include href=\"%.200s\">: %s", href, msg);
    return sim_error_set(ld->err, SIM_ERR_INPUT, file, line > 0 ? (int)line : 0,
                         "<xi:include>: %s", msg);
}

static int xi_check_tree(loader *ld, xml_problem *prob, const xmlNode *n, xi_budget *b);

/* one <xi:include>: read the file it names the hardened way and check what it
 * would bring in, before libxml2 copies it (once per inclusion) */
static int xi_check_include(loader *ld, xml_problem *prob, const xmlNode *n, xi_budget *b)
{
    xmlChar *href = xmlGetProp(n, (const xmlChar *)"href");
    xmlChar *parse = xmlGetProp(n, (const xmlChar *)"parse");
    int has_xpointer = xmlHasProp(n, (const xmlChar *)"xpointer") != NULL;
    xmlChar *base = NULL, *url = NULL;
    int rc = 0;
    const char *h = (const char *)href;
    if (!href || !href[0])
        rc = xi_error(ld, n, NULL, "no href; give href=\"FILE.xml\" (a document may not include "
                                   "parts of itself)");
    else if (parse && !xmlStrEqual(parse, (const xmlChar *)"xml"))
        rc = xi_error(ld, n, h, "parse=\"%.60s\" is not accepted; only parse=\"xml\" (the "
                                "default)", (const char *)parse);
    else if (has_xpointer)
        rc = xi_error(ld, n, h, "xpointer is not accepted; include a whole file");
    else if (b->depth > XI_MAX_DEPTH)
        rc = xi_error(ld, n, h, "XInclude nested deeper than %d levels", XI_MAX_DEPTH);
    else if (++b->includes > XI_MAX_INCLUDES)
        rc = xi_error(ld, n, h, "more than %d inclusions in all (each inclusion of a file "
                                "counts)", XI_MAX_INCLUDES);
    if (!rc) {
        base = xmlNodeGetBase(n->doc, n);
        url = xmlBuildURI(href, base);
        if (!url)
            rc = xi_error(ld, n, h, "not a file name");
    }
    for (int i = 0; !rc && i < b->depth; i++)
        if (strcmp(b->chain[i], (const char *)url) == 0) {
            char chain[400];
            size_t used = 0;
            chain[0] = '\0';
            for (int j = i; j < b->depth && used < sizeof chain; j++)
                used += (size_t)snprintf(chain + used, sizeof chain - used, "%s -> ",
                                         b->chain[j]);
            rc = xi_error(ld, n, h, "a file includes itself: %s%s", chain, (const char *)url);
        }
    xmlDoc *inc = NULL;
    if (!rc) {
        inc = xml_read((const char *)url, NULL, 0, NULL, prob);
        if (!inc && prob->have) {
            rc = SIM_ERR_INPUT; /* read_doc reports it, in the included file */
        } else if (!inc) {
            /* libxml2 uses the <xi:fallback> of a file it cannot read */
            const xmlNode *fb = NULL;
            for (const xmlNode *c = n->children; c && !fb; c = c->next)
                fb = is_xinclude(c, "fallback") ? c : NULL;
            FILE *f = fb ? NULL : fopen((const char *)url, "rb");
            const char *why = f ? "not readable as XML" : strerror(errno);
            if (f)
                fclose(f);
            rc = fb ? xi_check_tree(ld, prob, fb->children, b)
                    : xi_error(ld, n, h, "cannot read %s: %s (and no <xi:fallback>)",
                               (const char *)url, why);
        }
    }
    if (inc) {
        count_nodes(inc->children, b);
        if (b->nodes > XI_MAX_NODES || b->text_bytes > XI_MAX_TEXT_BYTES)
            rc = xi_error(ld, n, h, "the included files bring in more than %u nodes or %u MB "
                                    "of text in all", XI_MAX_NODES, XI_MAX_TEXT_BYTES >> 20);
        if (!rc) {
            b->chain[b->depth++] = (const char *)url;
            rc = xi_check_tree(ld, prob, inc->children, b);
            b->depth--;
        }
        xmlFreeDoc(inc);
    }
    xmlFree(url);
    xmlFree(base);
    xmlFree(parse);
    xmlFree(href);
    return rc;
}

static int xi_check_tree(loader *ld, xml_problem *prob, const xmlNode *n, xi_budget *b)
{
    for (; n; n = n->next) {
        if (n->type != XML_ELEMENT_NODE)
            continue;
        int rc = is_xinclude(n, "include") ? xi_check_include(ld, prob, n, b)
                                           : xi_check_tree(ld, prob, n->children, b);
        if (rc)
            return rc;
    }
    return 0;
}

/* Read a document and resolve its XIncludes within the limits above, its
 * included elements labelled with their files (mark_included). Every libxml2
 * error is reported by file and line, copied when it happened. */
static xmlDoc *read_doc(loader *ld, const char *path, const char *text, size_t len)
{
    xml_problem prob = {0};
    xmlSetStructuredErrorFunc(&prob, on_xml_error);
    xmlDoc *doc = xml_read(path, text, len, ld->display_name, &prob);
    int rc = 0;
    if (doc) {
        xi_budget budget = {.depth = 1};
        budget.chain[0] = doc->URL ? (const char *)doc->URL : ld->display_name;
        rc = xi_check_tree(ld, &prob, doc->children, &budget);
    }
    if (doc && !rc && xmlXIncludeProcessFlags(doc, XML_READ_OPTS) < 0 && !prob.have) {
        prob.have = 1;
        prob.domain = XML_FROM_XINCLUDE;
        snprintf(prob.msg, sizeof prob.msg, "XInclude processing failed");
    }
    xmlSetStructuredErrorFunc(NULL, NULL);
    if (doc && !rc && !prob.have && mark_included(ld, doc->children, NULL))
        rc = SIM_ERR_INPUT;
    if (prob.have) {
        char file[512];
        snprintf(file, sizeof file, "%s",
                 prob.file[0] && strcmp(prob.file, path ? path : "") != 0 ? prob.file
                                                                          : ld->display_name);
        const char *kind = prob.domain == -1                ? ""
                           : prob.domain == XML_FROM_XINCLUDE ? "XInclude: "
                                                              : "malformed XML: ";
        sim_error_set(ld->err, SIM_ERR_INPUT, file, prob.line, "%s%s", kind, prob.msg);
        rc = SIM_ERR_INPUT;
    }
    if (!doc && !rc) {
        FILE *f = path ? fopen(path, "rb") : NULL;
        if (path && !f)
            rc = sim_error_set(ld->err, SIM_ERR_INPUT, ld->display_name, 0, "cannot read: %s",
                               strerror(errno));
        else
            rc = sim_error_set(ld->err, SIM_ERR_NOMEM, ld->display_name, 0,
                               "out of memory reading the document");
        if (f)
            fclose(f);
    }
    if (rc) {
        xmlFreeDoc(doc);
        return NULL;
    }
    return doc;
}

static void clear_private(xmlNode *n)
{
    for (; n; n = n->next) {
        n->_private = NULL;
        clear_private(n->children);
    }
}

xmlDoc *scn_read_xml(const char *path, const char *text, size_t len, const char *name,
                     sim_error *err)
{
    loader ld = {.err = err, .display_name = name ? name : path};
    xmlDoc *doc = read_doc(&ld, path, text, len);
    if (doc)
        clear_private(doc->children); /* the file names in it are freed below */
    for (size_t i = 0; i < ld.n_files; i++)
        free(ld.files[i]);
    free(ld.files);
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
    xml_problem prob = {.doc = doc};
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

/* The first byte of s that is not valid UTF-8 or not a character XML 1.0
 * can hold (controls other than tab and newlines, surrogates, U+FFFE/F),
 * with its offset in *at and the code point (or -1 for bad UTF-8) in *cp;
 * 0 when s is all good. */
static int bad_xml_char(const char *s, size_t *at, long *cp)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; p[i];) {
        unsigned c = p[i];
        int n = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2
                : (c & 0xF8) == 0xF0 ? 3 : -1;
        long u = n == 0 ? (long)c : n == 1 ? (long)(c & 0x1F) : n == 2 ? (long)(c & 0x0F)
                                                                     : (long)(c & 0x07);
        for (int k = 1; n > 0 && k <= n; k++) {
            if ((p[i + (size_t)k] & 0xC0) != 0x80) {
                n = -1;
                break;
            }
            u = (u << 6) | (p[i + (size_t)k] & 0x3F);
        }
        static const long min_of[4] = {0, 0x80, 0x800, 0x10000}; /* no overlong forms */
        int ok_utf8 = n >= 0 && u >= min_of[n] && u <= 0x10FFFF;
        int ok_xml = u == 0x9 || u == 0xA || u == 0xD || (u >= 0x20 && u <= 0xD7FF) ||
                     (u >= 0xE000 && u <= 0xFFFD) || u >= 0x10000;
        if (!ok_utf8 || !ok_xml) {
            *at = i;
            *cp = ok_utf8 ? u : -1;
            return 1;
        }
        i += (size_t)n + 1;
    }
    return 0;
}

/* spec for an error line: bytes that are not UTF-8, and control characters
 * (tab and newlines too: the line must stay one line), as \xNN */
static void escape_spec(const char *spec, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    while (*spec && used + 5 < size) {
        size_t at = 0;
        long cp = 0;
        if (!bad_xml_char(spec, &at, &cp))
            at = strlen(spec);
        for (size_t i = 0; i < at && used + 5 < size; i++) {
            unsigned char c = (unsigned char)spec[i];
            used += c < 0x20 ? (size_t)snprintf(out + used, size - used, "\\x%02x", c)
                             : (size_t)snprintf(out + used, size - used, "%c", c);
        }
        spec += at;
        if (!*spec || used + 5 >= size)
            break;
        used += (size_t)snprintf(out + used, size - used, "\\x%02x", (unsigned char)*spec);
        spec++;
    }
}

static int set_error(loader *ld, const char *spec, const char *fmt, ...)
{
    char file[600], msg[800], shown[560];
    escape_spec(spec, shown, sizeof shown);
    snprintf(file, sizeof file, "--set %s", shown);
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
    /* the value becomes an attribute (the scenario name, a description...)
     * that the trace, its XML and the report scripts carry: text only */
    size_t at = 0;
    long cp = 0;
    if (bad_xml_char(spec, &at, &cp)) {
        if (cp < 0)
            return set_error(ld, spec, "not valid UTF-8 (byte 0x%02x, byte %zu of the "
                             "option); write it in UTF-8", (unsigned char)spec[at], at + 1);
        return set_error(ld, spec, "U+%04lX (byte %zu of the option) is a character XML "
                         "cannot hold; remove it", (unsigned long)cp, at + 1);
    }
    size_t ctl = strcspn(spec, "\t\n\r");
    if (spec[ctl]) /* XML holds them, but every value must print on one line */
        return set_error(ld, spec, "U+%04X (byte %zu of the option) is a control character; "
                         "values are one line of text", (unsigned)spec[ctl], ctl + 1);
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
    char shown[560];
    escape_spec(spec, shown, sizeof shown);
    snprintf(o->option, sizeof o->option, "--set %s", shown);
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

/* a link technology by name for <fabric link> or <fabric scale-up> */
static int fabric_link(loader *ld, xmlNode *n, const char *attr, const char *name, hw_link *out)
{
    const hw_link *l = find_named(ld, CAT_LINK, name);
    if (!l) {
        char known[1024];
        entry_names(ld, CAT_LINK, known, sizeof known);
        return node_error(ld, n, attr, "unknown link technology; known: %s", known);
    }
    *out = *l;
    return 0;
}

/* oversubscription="3:1": down and up port shares of a leaf */
static int parse_oversubscription(loader *ld, xmlNode *n, fabric_config *c)
{
    if (!has_attr(n, "oversubscription"))
        return 0;
    char text[64];
    copy_attr(n, "oversubscription", text, sizeof text);
    unsigned d = 0, u = 0;
    char tail;
    if (sscanf(text, "%u:%u%c", &d, &u, &tail) != 2 || !d || !u || d > 1000 || u > 1000)
        return node_error(ld, n, "oversubscription",
                          "expected DOWN:UP with whole numbers from 1 to 1000, e.g. 3:1");
    c->over_down = d;
    c->over_up = u;
    return 0;
}

/* the attributes each topology needs */
static int fabric_required(loader *ld, xmlNode *n, enum fabric_topology t)
{
    static const char *const need[FABRIC_TOPOLOGY_COUNT][4] = {
        [FABRIC_FAT_TREE] = {"k"},
        [FABRIC_LEAF_SPINE] = {"radix"},
        [FABRIC_RAIL_OPTIMIZED] = {"radix"},
        [FABRIC_DRAGONFLY] = {"hosts-per-router", "routers-per-group", "global-links"},
        [FABRIC_DRAGONFLY_PLUS] = {"hosts-per-router", "leaves-per-group", "spines-per-group",
                                   "global-links"},
    };
    for (int i = 0; i < 4 && need[t][i]; i++)
        if (!has_attr(n, need[t][i]))
            return node_error(ld, n, NULL, "topology=\"%s\" needs attribute '%s'",
                              fabric_topology_name(t), need[t][i]);
    return 0;
}

static int parse_fabric_numbers(loader *ld, xmlNode *n, fabric_config *c)
{
    struct { const char *attr; unsigned min, max; unsigned *out; } nums[] = {
        {"gpus-per-node", 1, 4096, &c->gpus_per_node}, {"radix", 2, 4096, &c->radix},
        {"tiers", 2, 3, &c->tiers}, {"k", 2, 256, &c->k},
        {"nodes-per-su", 1, 4096, &c->nodes_per_su}, {"planes", 1, 16, &c->planes},
        {"hosts-per-router", 1, 4096, &c->p}, {"routers-per-group", 1, 4096, &c->a},
        {"leaves-per-group", 1, 4096, &c->leaves}, {"spines-per-group", 1, 4096, &c->spines},
        {"global-links", 1, 4096, &c->h}, {"groups", 2, 1000000, &c->groups},
        {"qps", 1, 1024, &c->routing.qps}, {"channels", 1, 64, &c->channels},
        {"chunks", 1, 1024, &c->chunks},
    };
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        int rc = get_uint(ld, n, nums[i].attr, 0, nums[i].min, nums[i].max, nums[i].out);
        if (rc)
            return rc;
    }
    return parse_oversubscription(ld, n, c);
}

/* <cluster><fabric>: the network (docs/fabric.md). Built once here so that
 * impossible sizes are refused at load time with the element's line. */
static int parse_fabric(loader *ld, xmlNode *n, scn_scenario *s)
{
    fabric_config *c = &s->fabric;
    memset(c, 0, sizeof *c);
    char text[128];
    copy_attr(n, "topology", text, sizeof text);
    fabric_topology_parse(text, &c->topology); /* the schema allows only known names */
    int rc = fabric_required(ld, n, c->topology);
    if (!rc) {
        copy_attr(n, "link", text, sizeof text);
        rc = fabric_link(ld, n, "link", text, &c->link);
    }
    c->gpus_per_node = s->gpu.scaleup_domain ? s->gpu.scaleup_domain : 1;
    c->nodes_per_su = 32; /* DGX SuperPOD scalable unit (hardware.md 6.2, V) */
    c->routing.qps = 1;
    c->routing.seed = s->seed;
    c->routing.balance = c->link.routing == HW_ROUTING_ECMP    ? TOPO_BALANCE_ECMP
                         : c->link.routing == HW_ROUTING_SPRAY ? TOPO_BALANCE_SPRAY
                                                               : TOPO_BALANCE_ADAPTIVE;
    if (!rc)
        rc = parse_fabric_numbers(ld, n, c);
    if (!rc)
        rc = get_fraction(ld, n, "incast-efficiency", &c->link.incast_efficiency);
    if (rc)
        return rc;
    if (has_attr(n, "routing")) {
        copy_attr(n, "routing", text, sizeof text);
        topo_balance_parse(text, &c->routing.balance);
    }
    if (has_attr(n, "paths")) {
        copy_attr(n, "paths", text, sizeof text);
        topo_path_class_parse(text, &c->routing.path_class);
    }
    if (has_attr(n, "arrangement")) {
        copy_attr(n, "arrangement", text, sizeof text);
        c->arrangement = !strcmp(text, "relative") ? TOPO_DF_RELATIVE
                         : !strcmp(text, "circulant") ? TOPO_DF_CIRCULANT : TOPO_DF_ABSOLUTE;
    }
    if (c->gpus_per_node > 1) {
        if (has_attr(n, "scale-up"))
            copy_attr(n, "scale-up", text, sizeof text);
        else
            snprintf(text, sizeof text, "%s", s->gpu.scaleup_kind);
        if (!text[0])
            return node_error(ld, n, "scale-up", "GPU type %s has no scale-up link in the "
                              "catalog: name one, e.g. scale-up=\"nvlink4\", or set "
                              "gpus-per-node=\"1\"", s->gpu.name);
        rc = fabric_link(ld, n, "scale-up", text, &c->scaleup);
        if (rc)
            return rc;
        c->scaleup_bytes_per_s = s->gpu.scaleup_bytes_per_s > 0 ? s->gpu.scaleup_bytes_per_s
                                                                : c->scaleup.bytes_per_s;
    }
    if (s->campaign.gpu_count > UINT32_MAX / 2)
        return node_error(ld, n, NULL, "%llu GPUs: too many for a fabric",
                          (unsigned long long)s->campaign.gpu_count);
    c->gpus = (unsigned)s->campaign.gpu_count;
    fabric f;
    char why[512];
    if (fabric_build(c, &f, why, sizeof why))
        return node_error(ld, n, NULL, "%s", why);
    topo_stats st; /* what can fail: switches and cables per tier */
    int counted = topo_stats_count(&f.g, &st, why, sizeof why);
    fabric_free(&f);
    if (counted)
        return node_error(ld, n, NULL, "%s", why);
    for (int t = 0; t <= 4; t++) {
        s->fabric_switches[t] = st.switches_per_tier[t];
        s->fabric_cables[t] = st.cables_per_tier[t];
    }
    s->has_fabric = 1;
    return 0;
}

static int parse_cluster(loader *ld, xmlNode *root, scn_scenario *s)
{
    xmlNode *gpu = child(child(root, "cluster"), "gpu");
    char type[128];
    copy_attr(gpu, "type", type, sizeof type);
    hw_gpu *g = find_named(ld, CAT_GPU, type);
    if (!g) {
        char known[1024];
        entry_names(ld, CAT_GPU, known, sizeof known);
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
    if (!rc)
        rc = get_quantity(ld, gpu, "reserved-memory", SIM_DIM_DATA, 0, &s->reserved_bytes);
    if (!rc)
        rc = non_negative(ld, gpu, "reserved-memory", s->reserved_bytes);
    xmlNode *fabric_node = child(child(root, "cluster"), "fabric");
    if (!rc && fabric_node)
        rc = parse_fabric(ld, fabric_node, s);
    return rc;
}

static const char *const arch_attrs[] = {"layers", "hidden", "heads", "kv-heads", "head-dim",
                                         "ffn", "vocab", "seq-len", "activation",
                                         "tied-embeddings", "dropout", "experts", "top-k", "moe-ffn",
                                         "shared-experts", "dense-layers"};

/* <job><model>: ref="catalog name" (attributes override it), a full inline
 * architecture, or only parameters="..." (then no workload can be built) */
static int parse_model(loader *ld, xmlNode *model, scn_scenario *s)
{
    int has_arch_attr = 0;
    for (size_t i = 0; i < sizeof arch_attrs / sizeof arch_attrs[0]; i++)
        has_arch_attr |= has_attr(model, arch_attrs[i]);
    int has_ref = has_attr(model, "ref"), has_params = has_attr(model, "parameters");
    copy_attr(model, "name", s->model_name, sizeof s->model_name);
    if (has_params && (has_ref || has_arch_attr))
        return node_error(ld, model, "parameters", "parameters comes from the architecture "
                          "when the model has one (ref or layers, hidden, ...); remove it");
    if (has_params) {
        int rc = get_quantity(ld, model, "parameters", SIM_DIM_COUNT, 1,
                              &s->campaign.model_params);
        if (!rc)
            rc = positive(ld, model, "parameters", s->campaign.model_params, MAX_PARAMS, "");
        return rc;
    }
    if (!has_ref && !has_arch_attr)
        return node_error(ld, model, NULL, "give ref=\"NAME\" (a catalog model), an "
                          "architecture (layers, hidden, heads, ffn, vocab, seq-len, ...) or "
                          "parameters=\"...\"");
    model_arch m;
    memset(&m, 0, sizeof m);
    if (has_ref) {
        char ref[128];
        copy_attr(model, "ref", ref, sizeof ref);
        model_arch *found = find_named(ld, CAT_MODEL, ref);
        if (!found) {
            char known[2048];
            entry_names(ld, CAT_MODEL, known, sizeof known);
            return node_error(ld, model, "ref",
                              "unknown model; known models: %s (add one in <catalog>)", known);
        }
        m = *found;
        if (has_attr(model, "heads") && !has_attr(model, "head-dim"))
            m.head_dim = 0; /* recomputed from the new heads */
    }
    int rc = parse_arch_attrs(ld, model, &m);
    if (!rc)
        rc = finish_arch(ld, model, &m);
    if (rc)
        return rc;
    if (s->model_name[0] == '\0')
        snprintf(s->model_name, sizeof s->model_name, "%s", m.name);
    if (!m.name[0])
        snprintf(m.name, sizeof m.name, "%s", s->model_name[0] ? s->model_name : "model");
    s->arch = m;
    s->has_arch = 1;
    /* 6ND counts the parameters a token touches (all of them when dense) */
    s->campaign.model_params = model_params_active(&m);
    return 0;
}

/* order="tp-cp-dp-pp": placement, innermost first (Megatron-LM's order
 * argument); "ep" may stand just before "dp" (expert groups live inside the
 * data-parallel dimension) and is dropped */
static int parse_order(loader *ld, xmlNode *n, parallel_config *p)
{
    static const char *const names[4] = {"tp", "cp", "dp", "pp"};
    char text[64], *save = NULL;
    copy_attr(n, "order", text, sizeof text);
    unsigned k = 0, seen = 0;
    for (char *tok = strtok_r(text, "-", &save); tok; tok = strtok_r(NULL, "-", &save)) {
        if (!strcmp(tok, "ep"))
            continue;
        int d = -1;
        for (int i = 0; i < 4; i++)
            if (!strcmp(tok, names[i]))
                d = i;
        if (d < 0 || (seen & (1u << d)) || k == 4)
            return node_error(ld, n, "order", "expected tp, cp, dp and pp once each, joined by "
                              "'-', innermost first (Megatron's default: tp-cp-ep-dp-pp)");
        seen |= 1u << d;
        p->order[k++] = (unsigned char)d;
    }
    if (k != 4)
        return node_error(ld, n, "order", "expected tp, cp, dp and pp once each, joined by "
                          "'-', innermost first (Megatron's default: tp-cp-ep-dp-pp)");
    return 0;
}

static int parse_parallelism(loader *ld, xmlNode *par_node, scn_scenario *s)
{
    parallel_config *p = &s->par;
    memset(p, 0, sizeof *p);
    p->tp = p->pp = p->vpp = p->cp = p->ep = 1;
    const unsigned big = 100000000u;
    int rc = get_uint(ld, par_node, "tp", 0, 1, 100000, &p->tp);
    if (!rc)
        rc = get_uint(ld, par_node, "pp", 0, 1, 100000, &p->pp);
    if (!rc)
        rc = get_uint(ld, par_node, "vpp", 0, 1, 1000, &p->vpp);
    if (!rc)
        rc = get_uint(ld, par_node, "cp", 0, 1, 100000, &p->cp);
    if (!rc)
        rc = get_uint(ld, par_node, "ep", 0, 1, 100000, &p->ep);
    if (!rc)
        rc = get_uint(ld, par_node, "dp", 0, 1, big, &p->dp);
    if (!rc)
        rc = get_uint(ld, par_node, "micro-batch", 1, 1, big, &p->micro_batch);
    if (!rc)
        rc = get_uint(ld, par_node, "global-batch", 1, 1, big, &p->global_batch);
    if (!rc)
        rc = get_uint(ld, par_node, "first-stage-layers", 0, 1, 100000, &p->first_stage_layers);
    if (!rc)
        rc = get_uint(ld, par_node, "last-stage-layers", 0, 1, 100000, &p->last_stage_layers);
    if (rc)
        return rc;
    get_bool(ld, par_node, "sequence-parallel", &p->sequence_parallel);
    char text[32];
    copy_attr(par_node, "recompute", text, sizeof text);
    p->recompute = strcmp(text, "full") == 0        ? RECOMPUTE_FULL
                   : strcmp(text, "selective") == 0 ? RECOMPUTE_SELECTIVE
                                                    : RECOMPUTE_NONE;
    copy_attr(par_node, "zero", text, sizeof text);
    p->zero_stage = text[0] ? text[0] - '0' : 0;
    copy_attr(par_node, "schedule", text, sizeof text);
    p->schedule = strcmp(text, "gpipe") == 0              ? SCHEDULE_GPIPE
                  : strcmp(text, "1f1b-interleaved") == 0 ? SCHEDULE_INTERLEAVED
                                                          : SCHEDULE_1F1B;
    if (!has_attr(par_node, "schedule") && p->vpp > 1)
        p->schedule = SCHEDULE_INTERLEAVED;
    if (has_attr(par_node, "order") && parse_order(ld, par_node, p))
        return -1;
    p->precision = s->precision;
    uint64_t gpus = s->campaign.gpu_count;
    if (!has_attr(par_node, "dp")) {
        uint64_t per_replica = (uint64_t)p->tp * p->cp * p->pp;
        if (gpus % per_replica)
            return node_error(ld, par_node, NULL,
                              "GPUs (%llu) are not a multiple of tp x cp x pp = %u x %u x %u = "
                              "%llu, so dp cannot be derived",
                              (unsigned long long)gpus, p->tp, p->cp, p->pp,
                              (unsigned long long)per_replica);
        if (gpus / per_replica > UINT32_MAX)
            return node_error(ld, par_node, NULL,
                              "dp = GPUs / (tp x cp x pp) = %llu / %llu = %llu: at most %u "
                              "data-parallel replicas",
                              (unsigned long long)gpus, (unsigned long long)per_replica,
                              (unsigned long long)(gpus / per_replica), UINT32_MAX);
        p->dp = (unsigned)(gpus / per_replica);
    }
    char why[400];
    if (workload_check(&s->arch, p, gpus, why, sizeof why))
        return node_error(ld, par_node, NULL, "%s", why);
    s->has_parallelism = 1;
    return 0;
}

int scn_memory(const scn_scenario *s, workload *w, stage_memory *mem, char *why, size_t why_size)
{
    if (!s->has_parallelism) {
        snprintf(why, why_size, "the scenario has no <parallelism>: no workload to size");
        return -1;
    }
    if (workload_build(&s->arch, &s->par, s->campaign.gpu_count, w, why, why_size))
        return -1;
    for (unsigned i = 0; i < w->n_stages; i++)
        memory_training_stage(w, i, s->reserved_bytes, &mem[i]);
    return 0;
}

/* refuse a workload that does not fit: name the worst stage and its parts */
static int check_fits(loader *ld, xmlNode *par_node, const scn_scenario *s)
{
    if (!(s->gpu.hbm_bytes > 0))
        return node_error(ld, par_node, NULL, "GPU type '%s' has no memory capacity in the "
                          "catalog, so the workload cannot be checked against it", s->gpu.name);
    workload w;
    char why[400];
    stage_memory *mem = calloc(s->par.pp, sizeof *mem);
    if (!mem)
        return sim_error_set(ld->err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
    int rc = 0;
    if (scn_memory(s, &w, mem, why, sizeof why)) {
        rc = node_error(ld, par_node, NULL, "%s", why);
    } else {
        unsigned worst = 0;
        for (unsigned i = 1; i < w.n_stages; i++)
            if (mem[i].total_bytes > mem[worst].total_bytes)
                worst = i;
        const stage_memory *m = &mem[worst];
        if (m->total_bytes > s->gpu.hbm_bytes)
            rc = node_error(ld, par_node, NULL,
                            "does not fit: pipeline stage %u needs %.1f GB per GPU, %s has %.1f GB "
                            "(weights %.1f, gradients %.1f, optimizer %.1f, activations %.1f, "
                            "buffers %.1f, reserved %.1f GB); see dcsim fit",
                            worst, m->total_bytes / 1e9, s->gpu.name, s->gpu.hbm_bytes / 1e9,
                            m->weights_bytes / 1e9, m->gradients_bytes / 1e9,
                            m->optimizer_bytes / 1e9, m->activations_bytes / 1e9,
                            m->buffers_bytes / 1e9, m->reserved_bytes / 1e9);
        workload_free(&w);
    }
    free(mem);
    return rc;
}

static int parse_step(loader *ld, xmlNode *n, scn_scenario *s);

/* The first tensor-parallel (expert = 0) or expert-parallel (expert = 1)
 * group, placed by step_gpu, touches more than one domain of g GPUs. */
static int group_spans_domains(const parallel_config *p, unsigned g, int expert)
{
    unsigned n = expert ? p->ep : p->tp;
    uint32_t first = step_gpu(p, 0, 0, 0, 0) / g;
    for (unsigned i = 1; i < n; i++)
        if ((expert ? step_gpu(p, 0, i, 0, 0) : step_gpu(p, 0, 0, 0, i)) / g != first)
            return 1;
    return 0;
}

static int parse_job(loader *ld, xmlNode *root, scn_scenario *s)
{
    xmlNode *job = child(root, "job");
    xmlNode *model = child(job, "model");
    xmlNode *training = child(job, "training");
    xmlNode *par_node = child(job, "parallelism");
    campaign_config *c = &s->campaign;
    char prec[16];
    copy_attr(training, "precision", prec, sizeof prec);
    if (precision_parse(prec, &s->precision))
        return node_error(ld, training, "precision", "unknown precision");
    int rc = parse_model(ld, model, s);
    if (rc)
        return rc;
    if (par_node && !s->has_arch)
        return node_error(ld, par_node, NULL, "<parallelism> needs the model's architecture: "
                          "use <model ref=\"...\"/> or give layers, hidden, heads, ...");
    rc = get_quantity(ld, training, "tokens", SIM_DIM_COUNT, 1, &c->train_tokens);
    if (!rc)
        rc = positive(ld, training, "tokens", c->train_tokens, MAX_TOKENS, "");
    if (!rc && has_attr(training, "mfu")) {
        rc = get_quantity(ld, training, "mfu", SIM_DIM_FRACTION, 1, &c->mfu_frac);
        if (!rc && !(c->mfu_frac > 0 && c->mfu_frac <= 1))
            rc = node_error(ld, training, "mfu", "mfu must be above 0 and at most 100%%");
    } else if (!rc) {
        if (!s->has_fabric || !par_node)
            rc = node_error(ld, training, NULL,
                            "mfu is required unless the cluster has a <fabric> and the job a "
                            "<parallelism>, from which the step tier computes the iteration");
        s->step_computes_iteration = 1;
    }
    if (rc)
        return rc;
    c->gpu_peak_flops_per_s = s->gpu.peak_flops_per_s[s->precision];
    if (!(c->gpu_peak_flops_per_s > 0)) {
        char have[128] = "";
        size_t used = 0;
        for (int p = 0; p < PREC_COUNT; p++)
            if (s->gpu.peak_flops_per_s[p] > 0)
                used += (size_t)snprintf(have + used, sizeof have - used, "%s%s",
                                         used ? " " : "", precision_name(p));
        return node_error(ld, training, "precision",
                          "the catalog has no %s peak for GPU type '%s'; it has: %s", prec,
                          s->gpu.name, have);
    }
    if (par_node) {
        rc = parse_parallelism(ld, par_node, s);
        if (rc)
            return rc;
    }
    /* tokens per iteration: given, or global batch x sequence length */
    int has_tpi = has_attr(training, "tokens-per-iteration");
    if (has_tpi) {
        rc = get_quantity(ld, training, "tokens-per-iteration", SIM_DIM_COUNT, 1,
                          &c->tokens_per_iteration);
        if (!rc)
            rc = whole(ld, training, "tokens-per-iteration", c->tokens_per_iteration);
        if (!rc)
            rc = positive(ld, training, "tokens-per-iteration", c->tokens_per_iteration,
                          INFINITY, "");
        if (rc)
            return rc;
        double derived = (double)s->par.global_batch * s->arch.seq_len;
        if (s->has_parallelism && c->tokens_per_iteration != derived)
            return node_error(ld, training, "tokens-per-iteration",
                              "tokens-per-iteration disagrees with global-batch x seq-len = "
                              "%u x %u = %.15g; give one or the other",
                              s->par.global_batch, s->arch.seq_len, derived);
    } else if (s->has_parallelism) {
        c->tokens_per_iteration = (double)s->par.global_batch * s->arch.seq_len;
    } else {
        return node_error(ld, training, NULL, "give tokens-per-iteration, or a <parallelism> "
                          "whose global-batch x seq-len sets it");
    }
    if (c->tokens_per_iteration > c->train_tokens)
        return node_error(ld, training, has_tpi ? "tokens-per-iteration" : "tokens",
                          "tokens-per-iteration (%.15g) must not exceed tokens (%.15g)",
                          c->tokens_per_iteration, c->train_tokens);
    int src = parse_step(ld, child(job, "step"), s);
    if (src)
        return src;
    if (s->has_parallelism && s->has_fabric) {
        unsigned long long need = (unsigned long long)s->par.tp * s->par.cp * s->par.dp * s->par.pp;
        if (need > s->fabric.gpus)
            return node_error(ld, par_node, NULL, "tp x cp x dp x pp = %llu GPUs, more than "
                              "the cluster's %u", need, s->fabric.gpus);
        unsigned g = s->fabric.gpus_per_node;
        if (g > 1 && group_spans_domains(&s->par, g, 0))
            fprintf(stderr, "%s: warning: a tensor-parallel group (tp = %u) spans more than one "
                    "%u-GPU scale-up domain: its collectives cross the fabric\n", s->source,
                    s->par.tp, g);
        if (g > 1 && s->par.ep > 1 && group_spans_domains(&s->par, g, 1))
            fprintf(stderr, "%s: warning: an expert-parallel group (ep = %u) spans more than one "
                    "%u-GPU scale-up domain: its all-to-all crosses the fabric\n", s->source,
                    s->par.ep, g);
    }
    if (s->has_parallelism && !(ld->flags & SCN_LOAD_NO_FIT_CHECK))
        return check_fits(ld, par_node, s);
    return 0;
}

/* <job><step>: the step tier's options and stragglers (docs/step.md) */
static int parse_step(loader *ld, xmlNode *n, scn_scenario *s)
{
    step_options *o = &s->step;
    step_options_defaults(o);
    o->sustained_efficiency = 0; /* the GPU catalog's unless <step> gives one */
    if (!n)
        return 0;
    char text[32];
    if (has_attr(n, "network")) {
        copy_attr(n, "network", text, sizeof text);
        o->analytic = !strcmp(text, "analytic");
    }
    int rc = 0;
    if (has_attr(n, "tp-overlap")) {
        rc = get_quantity(ld, n, "tp-overlap", SIM_DIM_FRACTION, 1, &o->tp_overlap);
        if (!rc && !(o->tp_overlap >= 0 && o->tp_overlap <= 1))
            rc = node_error(ld, n, "tp-overlap", "tp-overlap must be between 0%% and 100%%");
    }
    if (!rc && has_attr(n, "overlap-grad-reduce"))
        get_bool(ld, n, "overlap-grad-reduce", &o->overlap_grad_reduce);
    if (!rc && has_attr(n, "overlap-param-gather"))
        get_bool(ld, n, "overlap-param-gather", &o->overlap_param_gather);
    if (!rc && has_attr(n, "sustained-efficiency"))
        rc = get_fraction(ld, n, "sustained-efficiency", &o->sustained_efficiency);
    if (!rc && has_attr(n, "bucket")) {
        rc = get_quantity(ld, n, "bucket", SIM_DIM_COUNT, 1, &o->bucket_params);
        if (!rc)
            rc = positive(ld, n, "bucket", o->bucket_params, 1e15, " parameters");
    }
    double spread = 0;
    if (!rc && has_attr(n, "straggler-spread")) {
        rc = get_quantity(ld, n, "straggler-spread", SIM_DIM_FRACTION, 1, &spread);
        if (!rc && !(spread >= 0 && spread < 0.5))
            rc = node_error(ld, n, "straggler-spread",
                            "straggler-spread must be from 0%% to below 50%%");
    }
    int named = 0;
    for (xmlNode *c = n->children; c; c = c->next)
        named += c->type == XML_ELEMENT_NODE;
    if (rc || (!named && spread == 0))
        return rc;
    uint64_t gpus = s->campaign.gpu_count;
    /* one random stream and one double per GPU, drawn here at load time: a
     * bound keeps `dcsim validate` quick (2^30 GPUs took minutes and 8 GiB) */
    if (gpus > MAX_SPEED_GPUS)
        return node_error(ld, n, NULL,
                          "per-GPU speeds (straggler-spread, <straggler>) are drawn for at most "
                          "%u GPUs; this cluster has %llu",
                          MAX_SPEED_GPUS, (unsigned long long)gpus);
    s->gpu_speed = malloc(gpus * sizeof *s->gpu_speed);
    if (!s->gpu_speed)
        return node_error(ld, n, NULL, "out of memory for %llu GPU speeds",
                          (unsigned long long)gpus);
    s->step.n_gpu_speed = (unsigned)gpus;
    /* spread: each GPU's speed is 1 - |N(0, spread)|, from its own stream, so
     * the draws do not depend on the GPU count or the thread count */
    for (uint64_t g = 0; g < gpus; g++) {
        s->gpu_speed[g] = 1;
        if (spread > 0) {
            gsl_rng *r = sim_rng_stream_create(s->seed, SIM_ENTITY_GPU, g, SIM_PURPOSE_SPEED);
            if (!r)
                return node_error(ld, n, NULL, "out of memory for random streams");
            s->gpu_speed[g] = 1 - fabs(gsl_ran_gaussian(r, spread));
            gsl_rng_free(r);
        }
    }
    for (xmlNode *c = n->children; c && !rc; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        double gpu = 0, speed = 0;
        rc = get_quantity(ld, c, "gpu", SIM_DIM_COUNT, 1, &gpu);
        if (!rc)
            rc = whole(ld, c, "gpu", gpu);
        if (!rc && !(gpu >= 0 && gpu < (double)gpus))
            rc = node_error(ld, c, "gpu", "gpu must be a GPU id from 0 to %llu",
                            (unsigned long long)gpus - 1);
        if (!rc)
            rc = get_quantity(ld, c, "speed", SIM_DIM_FRACTION, 1, &speed);
        if (!rc && !(speed > 0 && speed <= 1))
            rc = node_error(ld, c, "speed", "speed must be above 0%% and at most 100%% "
                            "(a straggler is slower: 90%% runs at nine tenths)");
        if (!rc)
            s->gpu_speed[(uint64_t)gpu] = speed;
    }
    s->step.gpu_speed = s->gpu_speed;
    return rc;
}

/* The named cause in c, or a new one (NULL when the list is full). */
static campaign_cause *cause_slot(campaign_config *c, const char *name)
{
    for (unsigned i = 0; i < c->n_causes; i++)
        if (!strcmp(c->causes[i].name, name))
            return &c->causes[i];
    if (c->n_causes == CAMPAIGN_MAX_CAUSES)
        return NULL;
    campaign_cause *x = &c->causes[c->n_causes++];
    memset(x, 0, sizeof *x);
    snprintf(x->name, sizeof x->name, "%s", name);
    return x;
}

/* <reliability inventory="NAME">: the causes of scenarios/catalog/
 * failures.xml's inventory, each count / (units x days) as a rate per unit */
static int load_inventory(loader *ld, xmlNode *rel, scn_scenario *s)
{
    campaign_config *c = &s->campaign;
    char want[64];
    copy_attr(rel, "inventory", want, sizeof want);
    xmlDoc *doc = scn_read_xml(NULL, (const char *)dcsim_catalog_failures,
                               dcsim_catalog_failures_len, "failures.xml", ld->err);
    if (!doc)
        return ld->err ? ld->err->code : SIM_ERR_NOMEM;
    xmlNode *root = doc ? xmlDocGetRootElement(doc) : NULL;
    char known[256] = "";
    size_t used = 0;
    xmlNode *inv = NULL;
    for (xmlNode *n = root ? root->children : NULL; n; n = n->next) {
        if (n->type != XML_ELEMENT_NODE)
            continue;
        char name[64];
        copy_attr(n, "name", name, sizeof name);
        used += (size_t)snprintf(known + used, used < sizeof known ? sizeof known - used : 0,
                                 "%s%s", used ? ", " : "", name);
        if (!strcmp(name, want))
            inv = n;
    }
    if (!inv) {
        xmlFreeDoc(doc);
        return node_error(ld, rel, "inventory", "unknown failure inventory; known: %s", known);
    }
    char text[64];
    copy_attr(inv, "gpus", text, sizeof text);
    double gpus = atof(text);
    copy_attr(inv, "nodes", text, sizeof text);
    double nodes = atof(text);
    copy_attr(inv, "days", text, sizeof text);
    double seconds = atof(text) * 86400;
    for (xmlNode *n = inv->children; n; n = n->next) {
        if (n->type != XML_ELEMENT_NODE)
            continue;
        char name[48];
        copy_attr(n, "name", name, sizeof name);
        campaign_cause *x = cause_slot(c, name);
        if (!x) {
            xmlFreeDoc(doc);
            return node_error(ld, rel, "inventory", "more than %d failure causes",
                              CAMPAIGN_MAX_CAUSES);
        }
        copy_attr(n, "category", x->category, sizeof x->category);
        copy_attr(n, "unit", text, sizeof text);
        int per_cable = !strcmp(text, "cable");
        x->unit = !strcmp(text, "node") ? CAMPAIGN_UNIT_NODE : CAMPAIGN_UNIT_GPU;
        copy_attr(n, "count", text, sizeof text);
        double count = atof(text);
        x->rate_per_s = count / ((x->unit == CAMPAIGN_UNIT_NODE ? nodes : gpus) * seconds);
        uint64_t fabric_cables = 0;
        for (int t = 0; t <= 4; t++)
            fabric_cables += s->fabric_cables[t];
        if (per_cable && s->has_fabric && fabric_cables) {
            /* the published count over the published run's cables, then this
             * fabric's cables: a fabric with more cables fails more often */
            copy_attr(inv, "cables", text, sizeof text);
            x->unit = CAMPAIGN_UNIT_CABLE;
            x->parts = fabric_cables;
            x->rate_per_s = count / (atof(text) * seconds);
        } /* without a fabric: per GPU, as the published run's cables grew with its GPUs */
    }
    xmlFreeDoc(doc);
    return 0;
}

/* rate="..." or mtbf="..." of a <failure>, per component */
static int failure_rate(loader *ld, xmlNode *failure, double *rate)
{
    int has_rate = has_attr(failure, "rate"), has_mtbf = has_attr(failure, "mtbf");
    if (has_rate == has_mtbf)
        return node_error(ld, failure, NULL,
                          "give exactly one of rate (per component, e.g. \"2e-5/h\") "
                          "or mtbf (per component, e.g. \"50000h\")");
    if (has_rate) {
        int rc = get_quantity(ld, failure, "rate", SIM_DIM_FREQUENCY, 1, rate);
        return rc ? rc : non_negative(ld, failure, "rate", *rate);
    }
    double mtbf = 0;
    int rc = get_quantity(ld, failure, "mtbf", SIM_DIM_TIME, 1, &mtbf);
    if (!rc)
        rc = positive(ld, failure, "mtbf", mtbf, INFINITY, "");
    *rate = rc ? 0 : 1.0 / mtbf;
    return rc;
}

/* <restart time="10min"/>, or its parts: detection (health-check period or
 * collective timeout) + teardown + launch + launch-per-1000-gpus x GPUs /
 * 1000 (job launch and rendezvous grow with the job); <checkpoint
 * storage-read> adds the checkpoint load */
static int parse_restart(loader *ld, xmlNode *restart, campaign_config *c)
{
    static const char *const parts[] = {"detection", "teardown", "launch",
                                        "launch-per-1000-gpus"};
    int has_parts = 0;
    for (int i = 0; i < 4; i++)
        has_parts |= has_attr(restart, parts[i]);
    if (has_attr(restart, "time") == has_parts)
        return node_error(ld, restart, NULL, "give time, or its parts (detection, teardown, "
                          "launch, launch-per-1000-gpus), not both");
    /* detection drawn per failure: a health check's period, a timeout */
    static const char *const drawn[] = {"health-check", "collective-timeout"};
    double *drawn_to[] = {&c->health_check_s, &c->collective_timeout_s};
    for (int i = 0; i < 2; i++) {
        if (!has_attr(restart, drawn[i]))
            continue;
        if (has_attr(restart, "detection"))
            return node_error(ld, restart, drawn[i], "give detection (a fixed delay) or "
                              "health-check and collective-timeout (drawn per failure), "
                              "not both");
        int rc = get_quantity(ld, restart, drawn[i], SIM_DIM_TIME, 1, drawn_to[i]);
        if (!rc)
            rc = positive(ld, restart, drawn[i], *drawn_to[i], INFINITY, "");
        if (rc)
            return rc;
    }
    if (!has_parts) {
        int rc = get_quantity(ld, restart, "time", SIM_DIM_TIME, 1, &c->restart_s);
        return rc ? rc : non_negative(ld, restart, "time", c->restart_s);
    }
    c->restart_s = 0;
    for (int i = 0; i < 4; i++) {
        double x = 0;
        int rc = get_quantity(ld, restart, parts[i], SIM_DIM_TIME, 0, &x);
        if (!rc)
            rc = non_negative(ld, restart, parts[i], x);
        if (rc)
            return rc;
        c->restart_s += i == 3 ? x * (double)c->gpu_count / 1000 : x;
    }
    return 0;
}

/* component="switch" or "cable": how many the fabric has in tier="..."
 * (switches 1..4, 1 = the host-facing leaves; cables 0..4, 0 = host
 * cables, t = switch-to-switch up from tier t) or in all tiers */
static int network_parts(loader *ld, xmlNode *f, const scn_scenario *s, int sw, uint64_t *out)
{
    const char *what = sw ? "switch" : "cable", *whats = sw ? "switches" : "cables";
    if (!s->has_fabric)
        return node_error(ld, f, "component", "%s failures need <cluster><fabric>: the %s "
                          "are counted from it", what, whats);
    const uint64_t *per_tier = sw ? s->fabric_switches : s->fabric_cables;
    char text[16];
    copy_attr(f, "tier", text, sizeof text);
    uint64_t n = 0;
    if (!text[0] || !strcmp(text, "all")) {
        for (int t = 0; t <= 4; t++)
            n += per_tier[t];
    } else {
        char *end = NULL;
        long t = strtol(text, &end, 10);
        if (*end || t < (sw ? 1 : 0) || t > 4)
            return node_error(ld, f, "tier", "tier must be \"all\" or %s",
                              sw ? "1 to 4 (1: the host-facing leaves)"
                                 : "0 to 4 (0: host cables; t: switch to switch up from tier t)");
        n = per_tier[t];
    }
    if (!n)
        return node_error(ld, f, "tier", "the fabric has no %s there", whats);
    *out = n;
    return 0;
}

/* "0.36CNY/kWh", "0.58kgCO2/kWh", "5K": a number from 0 to max and
 * exactly that unit (the units parser knows no currency, CO2 or
 * temperature); max keeps the products (kWh x price, x factor) finite and
 * physical */
static int number_in(loader *ld, xmlNode *n, const char *attr_name, const char *unit, double max,
                     double *out)
{
    char text[64];
    copy_attr(n, attr_name, text, sizeof text);
    char *end = NULL;
    double x = strtod(text, &end);
    if (end == text || strcmp(end, unit) || !(x >= 0 && x <= max))
        return node_error(ld, n, attr_name, "expected a number from 0 to %g in %s, e.g. "
                          "\"0.4%s\"", max, unit, unit);
    *out = x;
    return 0;
}

/* <site name cooling start-month price emission-factor green-share
 * diurnal-amplitude>: the catalog's site, overridden where given */
static int parse_site(loader *ld, xmlNode *root, scn_scenario *s)
{
    xmlNode *n = child(root, "site");
    if (!n)
        return 0;
    scn_site *site = &s->site;
    char name[32], why[600];
    copy_attr(n, "name", name, sizeof name);
    if (site_lookup(name, &site->info, why, sizeof why))
        return node_error(ld, n, "name", "%s", why);
    site->given = 1;
    char text[32] = "air-economiser";
    int cooling = FAC_COOLING_AIR_ECONOMISER;
    if (has_attr(n, "cooling")) {
        copy_attr(n, "cooling", text, sizeof text);
        fac_cooling_parse(text, &cooling); /* the schema allows only known names */
    }
    site->design = fac_design_default(cooling);
    site->start_month = 1;
    int rc = get_uint(ld, n, "start-month", 0, 1, 12, &site->start_month);
    const char *overridden[4] = {0};
    int k = 0;
    if (!rc && has_attr(n, "price")) {
        rc = number_in(ld, n, "price", "CNY/kWh", 1000, &site->info.price_per_kwh);
        snprintf(site->info.price_basis, sizeof site->info.price_basis, "the scenario's");
        overridden[k++] = "price";
    }
    if (!rc && has_attr(n, "emission-factor")) {
        rc = number_in(ld, n, "emission-factor", "kgCO2/kWh", 10,
                       &site->info.emission_kg_per_kwh);
        snprintf(site->info.emission_basis, sizeof site->info.emission_basis, "the scenario's");
        overridden[k++] = "emission factor";
    }
    if (!rc && has_attr(n, "green-share")) {
        rc = get_quantity(ld, n, "green-share", SIM_DIM_FRACTION, 1, &site->green_share);
        if (!rc && !(site->green_share >= 0 && site->green_share <= 1))
            rc = node_error(ld, n, "green-share", "green-share must be from 0%% to 100%%");
    }
    if (!rc && has_attr(n, "diurnal-amplitude")) {
        rc = number_in(ld, n, "diurnal-amplitude", "K", 50,
                       &site->info.climate.diurnal_amplitude_k);
        overridden[k++] = "diurnal amplitude";
    }
    if (!rc && has_attr(n, "weather-noise")) { /* seeded AR(1) noise on the hours */
        rc = number_in(ld, n, "weather-noise", "K", 50, &site->info.climate.noise_sd_k);
        site->info.climate.noise_seed = s->seed;
    }
    for (int i = 0; i < k; i++)
        snprintf(site->overrides + strlen(site->overrides),
                 sizeof site->overrides - strlen(site->overrides), "%s%s", i ? ", " : "",
                 overridden[i]);
    return rc;
}

/* <costs server switch nic transceiver cable life rent-per-gpu-hour> */
static int parse_costs(loader *ld, xmlNode *root, scn_scenario *s)
{
    xmlNode *n = child(root, "costs");
    if (!n)
        return 0;
    if (!s->site.given)
        return node_error(ld, n, NULL, "<costs> needs a <site>: the build cost includes the "
                          "site's energy");
    scn_costs *c = &s->costs;
    c->given = 1;
    static const char *const names[] = {"server", "switch", "nic", "transceiver", "cable",
                                        "rent-per-gpu-hour"};
    double *to[] = {&c->server, &c->switch_, &c->nic, &c->transceiver, &c->cable,
                    &c->rent_per_gpu_hour};
    int rc = 0;
    for (int i = 0; i < 6 && !rc; i++) {
        rc = get_quantity(ld, n, names[i], SIM_DIM_COUNT, 0, to[i]);
        if (!rc)
            rc = non_negative(ld, n, names[i], *to[i]);
    }
    if (!rc)
        rc = get_quantity(ld, n, "life", SIM_DIM_TIME, 1, &c->life_s);
    if (!rc)
        rc = positive(ld, n, "life", c->life_s, INFINITY, "");
    return rc;
}

static int parse_reliability(loader *ld, xmlNode *root, scn_scenario *s)
{
    xmlNode *rel = child(root, "reliability");
    xmlNode *restart = child(rel, "restart");
    campaign_config *c = &s->campaign;
    c->gpus_per_node = s->has_fabric && s->fabric.gpus_per_node > 1 ? s->fabric.gpus_per_node
                       : s->gpu.scaleup_domain > 1                    ? s->gpu.scaleup_domain
                                                                      : 8;
    int rc = 0, any = 0;
    if (rel && has_attr(rel, "nodes-per-rack"))
        rc = get_uint(ld, rel, "nodes-per-rack", 0, 1, 100000, &c->nodes_per_rack);
    if (!rc && rel && has_attr(rel, "inventory")) {
        rc = load_inventory(ld, rel, s);
        any = 1;
    }
    for (xmlNode *f = rel ? rel->children : NULL; f && !rc; f = f->next) {
        if (f->type != XML_ELEMENT_NODE || !xmlStrEqual(f->name, (const xmlChar *)"failure"))
            continue;
        any = 1;
        double rate = 0;
        rc = failure_rate(ld, f, &rate);
        if (rc)
            break;
        char comp[16], name[48], dist[16];
        copy_attr(f, "component", comp, sizeof comp);
        copy_attr(f, "distribution", dist, sizeof dist);
        int node = !strcmp(comp, "node"), rack = !strcmp(comp, "rack");
        int sw = !strcmp(comp, "switch"), cable = !strcmp(comp, "cable");
        int weibull = !strcmp(dist, "weibull");
        uint64_t parts = 0;
        if (sw || cable) {
            rc = network_parts(ld, f, s, sw, &parts);
            if (rc)
                break;
            if (weibull)
                return node_error(ld, f, "distribution", "%s failures are exponential", comp);
            if (has_attr(f, "detection"))
                return node_error(ld, f, "detection", "%s failures are not silent", comp);
        } else if (has_attr(f, "tier")) {
            return node_error(ld, f, "tier", "tier belongs to component=\"switch\" or "
                              "component=\"cable\"");
        }
        if (rack && !c->nodes_per_rack)
            return node_error(ld, f, "component", "rack failures need <reliability "
                              "nodes-per-rack=\"...\"> (Llama 3: 16 GPUs, 2 nodes, per rack)");
        if (rack && weibull)
            return node_error(ld, f, "distribution", "rack failures are exponential");
        node |= rack;
        double shape = 0;
        if (weibull) {
            rc = get_quantity(ld, f, "shape", SIM_DIM_COUNT, 1, &shape);
            if (!rc && !(shape >= CAMPAIGN_WEIBULL_SHAPE_MIN && shape <= CAMPAIGN_WEIBULL_SHAPE_MAX))
                rc = node_error(ld, f, "shape", "a Weibull shape must be from 1/170 (0.00588: "
                                "below, Gamma(1 + 1/k) overflows a double) to 100 (below 1: "
                                "infant mortality; above 1: wear-out)");
            if (rc)
                break;
        } else if (has_attr(f, "shape")) {
            return node_error(ld, f, "shape", "shape belongs to distribution=\"weibull\"");
        }
        if (!has_attr(f, "cause") && !node && !sw && !cable && !weibull &&
            !has_attr(f, "detection")) {
            /* the unnamed per-GPU rate */
            c->gpu_failure_rate_per_s = rate;
            continue;
        }
        if (has_attr(f, "cause"))
            copy_attr(f, "cause", name, sizeof name);
        else
            snprintf(name, sizeof name, "%s failure",
                     sw ? "switch" : cable ? "cable" : rack ? "rack" : node ? "node" : "GPU");
        campaign_cause *x = cause_slot(c, name);
        if (!x)
            return node_error(ld, f, "cause", "more than %d failure causes",
                              CAMPAIGN_MAX_CAUSES);
        x->unit = sw      ? CAMPAIGN_UNIT_SWITCH
                  : cable ? CAMPAIGN_UNIT_CABLE
                  : rack  ? CAMPAIGN_UNIT_RACK
                  : node  ? CAMPAIGN_UNIT_NODE
                          : CAMPAIGN_UNIT_GPU;
        x->rate_per_s = rate;
        x->parts = parts;
        x->weibull_shape = shape;
        if (has_attr(f, "detection")) { /* silent: found after a mean delay */
            rc = get_quantity(ld, f, "detection", SIM_DIM_TIME, 1, &x->detection_s);
            if (!rc)
                rc = non_negative(ld, f, "detection", x->detection_s);
            if (!rc && x->detection_s > 0 && shape > 0)
                rc = node_error(ld, f, "detection", "a silent cause must be exponential");
            if (rc)
                break;
        }
        if (has_attr(f, "category"))
            copy_attr(f, "category", x->category, sizeof x->category);
        else if (!x->category[0])
            snprintf(x->category, sizeof x->category, "%s",
                     sw || cable ? "Network" : node ? "Host" : "GPU");
    }
    if (!rc && any && !restart)
        rc = node_error(ld, rel, NULL,
                        "a <failure> needs a <restart time=\"...\"/> saying what each "
                        "failure costs");
    if (!rc && restart)
        rc = parse_restart(ld, restart, c);
    xmlNode *spares = child(rel, "spares");
    if (!rc && spares) { /* a limited pool of spare nodes, repaired ones returning to it */
        double n = 0;
        rc = get_quantity(ld, spares, "nodes", SIM_DIM_COUNT, 1, &n);
        if (!rc)
            rc = whole(ld, spares, "nodes", n);
        if (!rc && !(n >= 0 && n <= 1e9))
            rc = node_error(ld, spares, "nodes", "nodes must be from 0 to 1e9");
        if (!rc)
            rc = get_quantity(ld, spares, "swap-time", SIM_DIM_TIME, 1, &c->swap_s);
        if (!rc)
            rc = non_negative(ld, spares, "swap-time", c->swap_s);
        if (!rc)
            rc = get_quantity(ld, spares, "repair-time", SIM_DIM_TIME, 1, &c->repair_mean_s);
        if (!rc)
            rc = non_negative(ld, spares, "repair-time", c->repair_mean_s);
        c->spares_limited = 1;
        c->spare_nodes = (uint64_t)n;
        int elastic = 0;
        if (!rc)
            rc = get_bool(ld, spares, "elastic", &elastic);
        if (!rc && has_attr(spares, "max-missing") && !elastic)
            rc = node_error(ld, spares, "max-missing", "max-missing needs elastic=\"true\"");
        if (!rc && elastic && !(s->has_parallelism && s->par.dp >= 2))
            rc = node_error(ld, spares, "elastic",
                            "elastic continuation needs <job><parallelism> with at least 2 "
                            "data-parallel replicas (it goes on with fewer of them)");
        if (!rc && elastic) {
            c->elastic_replicas = s->par.dp;
            unsigned most = s->par.dp - 1 < SCN_ELASTIC_MAX_MISSING_DEFAULT
                                ? s->par.dp - 1
                                : SCN_ELASTIC_MAX_MISSING_DEFAULT;
            rc = get_uint(ld, spares, "max-missing", 0, 1, s->par.dp - 1, &most);
            c->elastic_max_missing = most;
        }
    }
    xmlNode *maint = child(rel, "maintenance");
    if (!rc && maint) { /* planned windows: the job checkpoints, waits, restarts */
        rc = get_quantity(ld, maint, "every", SIM_DIM_TIME, 1, &c->maintenance_every_s);
        if (!rc)
            rc = positive(ld, maint, "every", c->maintenance_every_s, INFINITY, "");
        if (!rc)
            rc = get_quantity(ld, maint, "duration", SIM_DIM_TIME, 1, &c->maintenance_s);
        if (!rc)
            rc = non_negative(ld, maint, "duration", c->maintenance_s);
        if (!rc && !(c->maintenance_s < c->maintenance_every_s))
            rc = node_error(ld, maint, "duration", "a window must be shorter than its period");
        if (!rc && !restart)
            rc = node_error(ld, rel, NULL, "maintenance windows need a <restart> saying what "
                            "restarting after one costs");
    }
    xmlNode *slow = child(rel, "stragglers");
    if (!rc && slow) { /* nodes turning slow, drained at a checkpoint after a while */
        rc = failure_rate(ld, slow, &c->straggler_rate_per_s);
        if (!rc)
            rc = get_quantity(ld, slow, "speed", SIM_DIM_FRACTION, 1, &s->straggler_gpu_speed);
        if (!rc && !(s->straggler_gpu_speed > 0 && s->straggler_gpu_speed < 1))
            rc = node_error(ld, slow, "speed", "a slow node's GPUs run at above 0%% and below "
                            "100%% of nominal speed (90%%: nine tenths)");
        if (!rc)
            rc = get_quantity(ld, slow, "drain-after", SIM_DIM_TIME, 1, &c->straggler_drain_s);
        if (!rc)
            rc = non_negative(ld, slow, "drain-after", c->straggler_drain_s);
        if (!rc && !restart)
            rc = node_error(ld, rel, NULL, "stragglers need a <restart> saying what restarting "
                            "after a drain costs");
        /* the job's speed while a node is slow: the synchronous job waits for
         * it all the time (the step tier refines this from its profile) */
        c->straggler_speed = s->straggler_gpu_speed;
    }
    if (!rc && rel && has_attr(rel, "scale")) {
        /* <reliability scale="2">: every failure and straggler rate times
         * the scale (every MTBF divided by it), for what-if sweeps; detection,
         * repair and restart times are left as they are */
        double scale = 1;
        rc = get_quantity(ld, rel, "scale", SIM_DIM_COUNT, 1, &scale);
        if (!rc)
            rc = positive(ld, rel, "scale", scale, 1e6, "");
        for (unsigned i = 0; !rc && i < c->n_causes; i++)
            c->causes[i].rate_per_s *= scale;
        if (!rc) {
            c->gpu_failure_rate_per_s *= scale;
            c->straggler_rate_per_s *= scale;
        }
    }
    return rc;
}

/* The checkpoint's size and what it costs: size="auto" is the model's
 * weights and optimizer state, each written once however many replicas hold
 * them (Megatron-style distributed checkpoints): P x (weight bytes + 12, the
 * fp32 master copy and Adam's two moments; ZeRO, Rajbhandari et al. 2020).
 * write-time, or size / storage-write bandwidth (every writer shares it);
 * storage-read adds size / bandwidth to each restart (loading it back). */
static int checkpoint_volume(loader *ld, xmlNode *ck, scn_scenario *s)
{
    campaign_config *c = &s->campaign;
    char text[16];
    copy_attr(ck, "size", text, sizeof text);
    int rc = 0;
    if (!strcmp(text, "auto")) {
        double weight = s->precision == PREC_FP32 ? 4 : 2;
        s->checkpoint_bytes = c->model_params * (weight + 12);
    } else if (text[0]) {
        rc = get_quantity(ld, ck, "size", SIM_DIM_DATA, 1, &s->checkpoint_bytes);
        if (!rc)
            rc = positive(ld, ck, "size", s->checkpoint_bytes, INFINITY, "");
    }
    double write_bw = 0, read_bw = 0;
    if (!rc && has_attr(ck, "storage-write")) {
        rc = get_quantity(ld, ck, "storage-write", SIM_DIM_BANDWIDTH, 1, &write_bw);
        if (!rc)
            rc = positive(ld, ck, "storage-write", write_bw, INFINITY, "");
    }
    if (!rc && has_attr(ck, "storage-read")) {
        rc = get_quantity(ld, ck, "storage-read", SIM_DIM_BANDWIDTH, 1, &read_bw);
        if (!rc)
            rc = positive(ld, ck, "storage-read", read_bw, INFINITY, "");
    }
    /* per-node limits (a node's NIC or storage link): every node writes and
     * reads its shard, so together at most nodes x the node's bandwidth */
    double nodes = ceil((double)c->gpu_count / (c->gpus_per_node ? c->gpus_per_node : 8));
    static const char *const node_attr[] = {"node-write", "node-read"};
    double *total_bw[] = {&write_bw, &read_bw};
    for (int i = 0; i < 2 && !rc; i++) {
        if (!has_attr(ck, node_attr[i]))
            continue;
        double per_node = 0;
        rc = get_quantity(ld, ck, node_attr[i], SIM_DIM_BANDWIDTH, 1, &per_node);
        if (!rc)
            rc = positive(ld, ck, node_attr[i], per_node, INFINITY, "");
        if (!rc && (*total_bw[i] == 0 || nodes * per_node < *total_bw[i]))
            *total_bw[i] = nodes * per_node;
    }
    if (rc)
        return rc;
    if ((write_bw > 0 || read_bw > 0) && !(s->checkpoint_bytes > 0))
        return node_error(ld, ck, NULL, "storage bandwidths need a size (\"auto\": the model's "
                          "weights and optimizer state, or a quantity such as \"5.7TB\")");
    if (has_attr(ck, "write-time")) {
        rc = get_quantity(ld, ck, "write-time", SIM_DIM_TIME, 1, &c->checkpoint_write_s);
        if (!rc)
            rc = non_negative(ld, ck, "write-time", c->checkpoint_write_s);
    } else if (write_bw > 0) {
        c->checkpoint_write_s = s->checkpoint_bytes / write_bw;
    } else {
        rc = node_error(ld, ck, NULL, "give write-time, or size and storage-write to derive it");
    }
    if (!rc && read_bw > 0)
        c->restart_s += s->checkpoint_bytes / read_bw;
    return rc;
}

static int parse_checkpoint(loader *ld, xmlNode *root, scn_scenario *s)
{
    xmlNode *ck = child(root, "checkpoint");
    campaign_config *c = &s->campaign;
    char text[16];
    copy_attr(ck, "interval", text, sizeof text);
    s->checkpoint_auto = !strcmp(text, "auto");
    int rc = checkpoint_volume(ld, ck, s);
    copy_attr(ck, "mode", text, sizeof text);
    c->checkpoint_async = !strcmp(text, "async");
    if (!rc && c->checkpoint_async && c->maintenance_every_s > 0)
        rc = node_error(ld, ck, "mode", "maintenance windows are modelled with blocking "
                        "checkpoints only");
    if (!rc && !c->checkpoint_async &&
        (has_attr(ck, "snapshot-time") || has_attr(ck, "persist-slowdown")))
        rc = node_error(ld, ck, NULL, "snapshot-time and persist-slowdown belong to "
                        "mode=\"async\"");
    if (!rc && c->checkpoint_async) { /* both required: no published figures to default to */
        rc = get_quantity(ld, ck, "snapshot-time", SIM_DIM_TIME, 1, &c->checkpoint_snapshot_s);
        if (!rc)
            rc = non_negative(ld, ck, "snapshot-time", c->checkpoint_snapshot_s);
        if (!rc)
            rc = get_quantity(ld, ck, "persist-slowdown", SIM_DIM_FRACTION, 1,
                              &c->persist_slowdown);
        if (!rc && !(c->persist_slowdown >= 0 && c->persist_slowdown < 1))
            rc = node_error(ld, ck, "persist-slowdown",
                            "persist-slowdown must be from 0%% to below 100%%");
    }
    if (!rc && has_attr(ck, "every") == has_attr(ck, "interval"))
        return node_error(ld, ck, NULL, "give exactly one of interval (a duration, or \"auto\") "
                          "and every (a number of iterations)");
    if (!rc && has_attr(ck, "every")) {
        double every = 0;
        rc = get_quantity(ld, ck, "every", SIM_DIM_COUNT, 1, &every);
        if (!rc)
            rc = whole(ld, ck, "every", every);
        if (!rc)
            rc = positive(ld, ck, "every", every, 1e15, " iterations");
        c->checkpoint_every = rc ? 0 : (uint64_t)every;
        return rc;
    }
    if (rc || s->checkpoint_auto) {
        if (rc)
            return rc;
        /* Daly's optimum for this cluster's failure rate (every cause, the
         * rate the summary's cluster MTBF is 1 / of) and write time */
        double cluster_rate = campaign_cluster_failure_rate_per_s(c);
        if (!(cluster_rate > 0))
            return node_error(ld, ck, "interval", "interval=\"auto\" (Daly's optimum) needs a "
                              "failure rate above 0: give a <reliability><failure> or "
                              "inventory, or a fixed interval");
        c->checkpoint_interval_s = campaign_daly_interval_s(c->checkpoint_write_s,
                                                            1 / cluster_rate);
        if (!(c->checkpoint_interval_s > 0))
            return node_error(ld, ck, "write-time", "interval=\"auto\" needs a write time "
                              "above 0 (with free checkpoints the optimum is every iteration)");
        return 0;
    }
    rc = get_quantity(ld, ck, "interval", SIM_DIM_TIME, 1, &c->checkpoint_interval_s);
    if (!rc)
        rc = positive(ld, ck, "interval", c->checkpoint_interval_s, INFINITY, "");
    return rc;
}

static int load_catalog_doc(loader *ld, const char *display, const char *path,
                            const unsigned char *text, size_t len)
{
    loader cat = *ld;
    cat.display_name = display;
    cat.files = NULL;
    cat.n_files = 0;
    xmlDoc *doc = read_doc(&cat, path, (const char *)text, len);
    int rc = doc ? validate(&cat, doc) : SIM_ERR_INPUT;
    xmlNode *root = doc ? xmlDocGetRootElement(doc) : NULL;
    if (!rc && root && xmlStrEqual(root->name, (const xmlChar *)"dcsim"))
        rc = node_error(&cat, root, NULL,
                        "expected a catalog (<gpus>, <models>, <servers> or <links>), not a "
                        "scenario");
    if (!rc)
        rc = parse_catalog(&cat, root);
    xmlFreeDoc(doc);
    for (size_t i = 0; i < cat.n_files; i++)
        free(cat.files[i]);
    free(cat.files);
    memcpy(ld->lists, cat.lists, sizeof ld->lists); /* the arrays may have moved */
    return rc;
}

static int load_builtin_catalog(loader *ld)
{
    int rc = load_catalog_doc(ld, BUILTIN_GPUS_NAME, NULL, dcsim_catalog_gpus,
                              dcsim_catalog_gpus_len);
    if (!rc)
        rc = load_catalog_doc(ld, BUILTIN_MODELS_NAME, NULL, dcsim_catalog_models,
                              dcsim_catalog_models_len);
    if (!rc)
        rc = load_catalog_doc(ld, BUILTIN_SERVERS_NAME, NULL, dcsim_catalog_servers,
                              dcsim_catalog_servers_len);
    if (!rc)
        rc = load_catalog_doc(ld, BUILTIN_LINKS_NAME, NULL, dcsim_catalog_links,
                              dcsim_catalog_links_len);
    mark_builtin(ld);
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

struct scn_catalog {
    loader ld;
};

int scn_catalog_load(const char *extra_path, scn_catalog **out, sim_error *err)
{
    *out = NULL;
    scn_catalog *cat = calloc(1, sizeof *cat);
    if (!cat)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
    cat->ld.err = err;
    cat->ld.display_name = extra_path ? extra_path : DEFAULT_NAME;
    int rc = load_builtin_catalog(&cat->ld);
    if (!rc && extra_path) {
        rc = check_readable(&cat->ld, extra_path);
        if (!rc) {
            /* the extra file's entries replace built-in ones of the same name */
            mark_builtin(&cat->ld);
            rc = load_catalog_doc(&cat->ld, extra_path, extra_path, NULL, 0);
        }
    }
    if (rc) {
        scn_catalog_free(cat);
        return rc;
    }
    *out = cat;
    return 0;
}

void scn_catalog_free(scn_catalog *cat)
{
    if (!cat)
        return;
    free_lists(&cat->ld);
    free(cat);
}

const hw_gpu *scn_catalog_gpu(const scn_catalog *cat, const char *name)
{
    return find_named(&cat->ld, CAT_GPU, name);
}

const model_arch *scn_catalog_model(const scn_catalog *cat, const char *name)
{
    return find_named(&cat->ld, CAT_MODEL, name);
}

const hw_server *scn_catalog_server(const scn_catalog *cat, const char *name)
{
    return find_named(&cat->ld, CAT_SERVER, name);
}

size_t scn_catalog_server_count(const scn_catalog *cat) { return cat->ld.lists[CAT_SERVER].n; }

const hw_link *scn_catalog_link(const scn_catalog *cat, const char *name)
{
    return find_named(&cat->ld, CAT_LINK, name);
}

void scn_catalog_gpu_names(const scn_catalog *cat, char *buf, size_t size)
{
    entry_names(&cat->ld, CAT_GPU, buf, size);
}

void scn_catalog_model_names(const scn_catalog *cat, char *buf, size_t size)
{
    entry_names(&cat->ld, CAT_MODEL, buf, size);
}

int scn_load(const char *path, const char *const *sets, size_t n_sets, scn_scenario *out,
             sim_error *err)
{
    return scn_load_flags(path, sets, n_sets, 0, out, err);
}

int scn_load_flags(const char *path, const char *const *sets, size_t n_sets, unsigned flags,
                   scn_scenario *out, sim_error *err)
{
    memset(out, 0, sizeof *out);
    loader ld = {.err = err, .display_name = path ? path : DEFAULT_NAME, .flags = flags};
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
    if (!rc)
        rc = parse_site(&ld, root, &s);
    if (!rc)
        rc = parse_costs(&ld, root, &s);
    if (!rc) {
        s.campaign.seed = s.seed;
        sim_error check;
        sim_error_clear(&check);
        campaign_config probe = s.campaign;
        if (s.step_computes_iteration)
            probe.mfu_frac = 1; /* the step tier sets it; check the rest */
        if (campaign_config_check(&probe, &check))
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
    free_lists(&ld);
    if (!rc) { /* the outputs' writers refuse to overwrite them (outpath.h) */
        s.included = ld.files;
        s.n_included = ld.n_files;
        ld.files = NULL;
        ld.n_files = 0;
    }
    for (size_t i = 0; i < ld.n_files; i++)
        free(ld.files[i]);
    free(ld.files);
    if (!rc)
        *out = s;
    else
        free(s.gpu_speed); /* the only allocation a failed load may have made */
    return rc;
}

const char **scn_input_paths(const scn_scenario *s, const char *path, const char *extra,
                             size_t *n)
{
    const char **inputs = malloc((s->n_included + 2) * sizeof *inputs);
    if (!inputs)
        return NULL;
    *n = 0;
    inputs[(*n)++] = path;
    inputs[(*n)++] = extra;
    for (size_t i = 0; i < s->n_included; i++)
        inputs[(*n)++] = s->included[i];
    return inputs;
}

void scn_scenario_free(scn_scenario *s)
{
    if (!s)
        return;
    free(s->resolved_xml);
    for (size_t i = 0; i < s->n_included; i++)
        free(s->included[i]);
    free(s->included);
    free(s->gpu_speed);
    memset(s, 0, sizeof *s);
}
