/* set.c - --set PATH=VALUE: the path (/dcsim/ optional, name[index]/...,
 * @attr) resolved in the document before validation, the value checked to
 * be one line of XML text, and the override remembered so errors about
 * that attribute name the option instead of a file line.
 */
#include "loader.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>

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

/* The value becomes an attribute (the scenario name, a description...)
 * that the trace, its XML and the report scripts carry: the whole option
 * must be text XML can hold, on one line. */
static int check_set_text(loader *ld, const char *spec)
{
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
    return 0;
}

/* "@attr", the last part of a path: a name */
static int check_attr_part(loader *ld, const char *spec, const char *p)
{
    const char *attr = p + 1;
    if (!*attr || !isalpha((unsigned char)*attr))
        return set_error(ld, spec, "'%s' is not an attribute name", p);
    for (const char *q = attr; *q; q++)
        if (!is_name_char((unsigned char)*q))
            return set_error(ld, spec, "'%s' is not an attribute name", p);
    return 0;
}

/* One step "name" or "name[index]" of a path (cut in place): the child of
 * cur it names, in *found. Without an index the child must be unique. */
static int path_step(loader *ld, const char *spec, xmlNode *cur, char *p, xmlNode **found)
{
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
    *found = NULL;
    long count = 0;
    for (xmlNode *c = cur->children; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && xmlStrEqual(c->name, (const xmlChar *)p)) {
            count++;
            if (index == 0 ? count == 1 : count == index)
                *found = c;
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
    if (!*found)
        return set_error(ld, spec, "<%s> has only %ld <%s> elements", cur->name, count, p);
    return 0;
}

/* PATH = [/dcsim/] (name[index]/)* @attr, cut in place: its element in
 * *elem and its attribute name (inside path) in *attr */
static int walk_path(loader *ld, xmlDoc *doc, const char *spec, char *path, xmlNode **elem,
                     const char **attr)
{
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
            int rc = check_attr_part(ld, spec, p);
            if (rc)
                return rc;
            break;
        }
        if (!slash)
            return set_error(ld, spec,
                             "the path must end in an attribute, e.g. checkpoint/@interval");
        *slash = '\0';
        int rc = path_step(ld, spec, cur, p, &cur);
        if (rc)
            return rc;
        p = slash + 1;
    }
    *elem = cur;
    *attr = p + 1;
    return 0;
}

/* PATH=VALUE with PATH = [/dcsim/] (name[index]/)* @attr */
int apply_set(loader *ld, xmlDoc *doc, const char *spec)
{
    int rc = check_set_text(ld, spec);
    if (rc)
        return rc;
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
    xmlNode *cur = NULL;
    const char *attr = NULL;
    rc = walk_path(ld, doc, spec, path, &cur, &attr);
    if (rc)
        return rc;
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
