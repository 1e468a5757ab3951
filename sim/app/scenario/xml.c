/* xml.c - the XML plumbing every read goes through: the hardened reader (no
 * network, no entity declarations, no external DTD), <xi:include> checked
 * against its limits and resolved, included elements labelled with their
 * file, validation against the embedded XSD, and the compiler-style error
 * of an element or attribute (node_error). Parses no scenario element.
 */
#include "loader.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/SAX2.h>
#include <libxml/tree.h>
#include <libxml/uri.h>
#include <libxml/xinclude.h>
#include <libxml/xmlschemas.h>

extern const unsigned char dcsim_xsd[];
extern const size_t dcsim_xsd_len;


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
            /* No href: libxml2 (2.9.14) copies the markers of an included
             * file's own includes, and those of an <xi:fallback>, without
             * their attributes, so the file of what follows is unknown:
             * this refuses every nested include and every fallback (and
             * reports out of memory reading the href the same way). */
            if (!href)
                return sim_error_set(ld->err, SIM_ERR_INPUT, from, (int)xmlGetLineNo(n),
                                     "<xi:include>: nested too deep or without href");
            assert(depth < MAX_DEPTH); /* at most XI_MAX_DEPTH: xi_check_include */
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

int node_error(loader *ld, xmlNode *n, const char *attr, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = node_verror(ld, n, attr, fmt, ap);
    va_end(ap);
    return rc;
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
xmlDoc *read_doc(loader *ld, const char *path, const char *text, size_t len)
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

/* libxml2 lists the elements it expected instead, except in an <xs:all>
 * whose members are all optional (<dcsim>'s sections, since a scenario
 * holds a <job> or a <serving>): for an unknown section name the sections
 * the document does not have yet, in the schema's order, as it would.
 * 1 with the list in out, 0 when the message is another. */
static int root_expected(const xmlNode *n, const char *msg, char *out, size_t size)
{
    static const char *const sections[] = {"catalog", "cluster", "job", "reliability",
                                           "checkpoint", "costs", "serving", "site"};
    if (strncmp(msg, "This element is not expected", 28) != 0 || strstr(msg, "Expected is") ||
        !n->parent ||
        n->parent->type != XML_ELEMENT_NODE ||
        !xmlStrEqual(n->parent->name, (const xmlChar *)"dcsim"))
        return 0;
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
        int present = 0;
        for (const xmlNode *c = n->parent->children; c; c = c->next)
            present |= c->type == XML_ELEMENT_NODE &&
                       xmlStrEqual(c->name, (const xmlChar *)sections[i]);
        if (!present && used < size)
            used += (size_t)snprintf(out + used, size - used, "%s%s", used ? ", " : "",
                                     sections[i]);
    }
    return used > 0;
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
    char expected[256];
    if (prob->node && root_expected(prob->node, rest, expected, sizeof expected))
        return node_error(ld, prob->node, NULL, "This element is not expected. Expected is one "
                          "of ( %s )", expected);
    if (prob->node)
        return node_error(ld, prob->node, attr[0] ? attr : NULL, "%s", rest);
    return sim_error_set(ld->err, SIM_ERR_INPUT, prob->file[0] ? prob->file : ld->display_name,
                         prob->line, "%s", msg);
}

int validate(loader *ld, xmlDoc *doc)
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

int check_readable(loader *ld, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return sim_error_set(ld->err, SIM_ERR_IO, path, 0, "cannot read the scenario: %s",
                             strerror(errno));
    fclose(f);
    return 0;
}
