/* jsonout.c - the envelope, the finite-number check and the CSV table of
 * every command's machine output (see jsonout.h, docs/json.md). */
#include "jsonout.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "version.h"

cJSON *jsonout_begin(const char *command)
{
    cJSON *o = cJSON_CreateObject();
    if (o && (!cJSON_AddStringToObject(o, "schema", JSONOUT_SCHEMA) ||
              !cJSON_AddStringToObject(o, "command", command) ||
              !cJSON_AddStringToObject(o, "dcsim_version", DCSIM_VERSION))) {
        cJSON_Delete(o);
        o = NULL;
    }
    return o;
}

cJSON *jsonout_wrap(const char *command, cJSON *body)
{
    cJSON *o = body ? jsonout_begin(command) : NULL;
    if (o) {
        cJSON *m;
        while ((m = body->child)) /* the members, in order, after the envelope */
            cJSON_AddItemToObject(o, m->string, cJSON_DetachItemViaPointer(body, m));
    }
    cJSON_Delete(body);
    return o;
}

static const char *command_of(const cJSON *root)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(root, "command");
    return cJSON_IsString(c) ? c->valuestring : "?";
}

/* depth-first; path holds the members' names down to x */
static int check(const cJSON *x, char *path, size_t len, size_t size)
{
    if (cJSON_IsNumber(x) && !isfinite(x->valuedouble))
        return 1;
    if (cJSON_IsRaw(x)) { /* summary's numbers, printed by it: still numbers */
        char *end;
        double v = strtod(x->valuestring, &end);
        return !isfinite(v) || *end;
    }
    size_t i = 0;
    for (const cJSON *c = x->child; c; c = c->next, i++) {
        int n = cJSON_IsArray(x) ? snprintf(path + len, size - len, "[%zu]", i)
                                 : snprintf(path + len, size - len, "%s%s", len ? "." : "",
                                            c->string ? c->string : "");
        size_t at = len + (n > 0 ? (size_t)n : 0);
        if (at >= size)
            at = size - 1;
        if (check(c, path, at, size))
            return 1;
        path[len] = '\0';
    }
    return 0;
}

int jsonout_check(const cJSON *root, char *where, size_t size)
{
    where[0] = '\0';
    return check(root, where, 0, size);
}

static int refuse(const cJSON *root)
{
    char where[256];
    if (!jsonout_check(root, where, sizeof where))
        return 0;
    fprintf(stderr, "dcsim %s: error: %s is not a finite number; no machine output printed "
                    "(please report it)\n", command_of(root), where);
    return 1;
}

int jsonout_print(const cJSON *root, int formatted, FILE *out)
{
    if (refuse(root))
        return 1;
    char *text = formatted ? cJSON_Print(root) : cJSON_PrintUnformatted(root);
    if (!text) {
        fprintf(stderr, "dcsim %s: error: out of memory\n", command_of(root));
        return 1;
    }
    fputs(text, out);
    fputc('\n', out);
    cJSON_free(text);
    return 0;
}

/* ------------------------------------------------------------------ CSV */

#define CSV_MAX_COLUMNS 512

typedef struct csv_cols {
    char name[CSV_MAX_COLUMNS][128];
    size_t n;
} csv_cols;

static int is_scalar(const cJSON *x)
{
    return cJSON_IsString(x) || cJSON_IsNumber(x) || cJSON_IsBool(x) || cJSON_IsRaw(x);
}

static void add_col(csv_cols *c, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->name[i], name))
            return;
    if (c->n < CSV_MAX_COLUMNS)
        snprintf(c->name[c->n++], sizeof c->name[0], "%s", name);
}

static int is_envelope(const cJSON *m)
{
    return !strcmp(m->string, "schema") || !strcmp(m->string, "command") ||
           !strcmp(m->string, "dcsim_version");
}

/* the columns of one row: its scalars, and its objects' scalars; the
 * document's envelope is not a column (is_root) */
static void collect(csv_cols *c, const cJSON *row, int is_root)
{
    char name[128];
    for (const cJSON *m = row->child; m; m = m->next) {
        if (is_root && is_envelope(m))
            continue;
        if (is_scalar(m)) {
            add_col(c, m->string);
        } else if (cJSON_IsObject(m)) {
            for (const cJSON *k = m->child; k; k = k->next)
                if (is_scalar(k)) {
                    snprintf(name, sizeof name, "%s_%s", m->string, k->string);
                    add_col(c, name);
                }
        }
    }
}

/* the member of row that column `name` reads, or NULL */
static const cJSON *lookup(const cJSON *row, const char *name)
{
    for (const cJSON *m = row->child; m; m = m->next) {
        if (is_scalar(m) && !strcmp(m->string, name))
            return m;
        size_t len = strlen(m->string);
        if (cJSON_IsObject(m) && !strncmp(name, m->string, len) && name[len] == '_') {
            const cJSON *k = cJSON_GetObjectItemCaseSensitive(m, name + len + 1);
            if (is_scalar(k))
                return k;
        }
    }
    return NULL;
}

static void field(FILE *out, const cJSON *x)
{
    if (cJSON_IsNumber(x))
        cli_csv_number(out, x->valuedouble);
    else if (cJSON_IsRaw(x))
        cli_csv_number(out, strtod(x->valuestring, NULL));
    else if (cJSON_IsBool(x))
        fputs(cJSON_IsTrue(x) ? "true" : "false", out);
    else if (cJSON_IsString(x))
        cli_csv_field(out, x->valuestring);
}

int jsonout_csv(const cJSON *root, const char *table, const char *index, FILE *out)
{
    if (refuse(root))
        return 1;
    const cJSON *t = table ? cJSON_GetObjectItemCaseSensitive(root, table) : root;
    if (!cJSON_IsArray(t) && !cJSON_IsObject(t)) {
        fprintf(stderr, "dcsim %s: error: no table '%s' to print as CSV\n", command_of(root),
                table ? table : "");
        return 1;
    }
    const cJSON *rows = cJSON_IsArray(t) ? t : NULL;
    csv_cols *c = calloc(1, sizeof *c);
    if (!c) {
        fprintf(stderr, "dcsim %s: error: out of memory\n", command_of(root));
        return 1;
    }
    if (rows) {
        for (const cJSON *r = rows->child; r; r = r->next)
            collect(c, r, 0);
    } else {
        collect(c, t, t == root);
    }
    if (index)
        cli_csv_field(out, index);
    for (size_t i = 0; i < c->n; i++) {
        if (i || index)
            fputc(',', out);
        cli_csv_field(out, c->name[i]);
    }
    fputc('\n', out);
    size_t k = 0;
    for (const cJSON *r = rows ? rows->child : t; r; r = rows ? r->next : NULL, k++) {
        if (index)
            fprintf(out, "%zu", k);
        for (size_t i = 0; i < c->n; i++) {
            if (i || index)
                fputc(',', out);
            field(out, lookup(r, c->name[i]));
        }
        fputc('\n', out);
    }
    free(c);
    return 0;
}

int jsonout_emit(cJSON *root, enum jsonout_format f, const char *table, const char *index)
{
    if (!root) {
        fputs("dcsim: error: out of memory\n", stderr);
        return 1;
    }
    int rc = f == JSONOUT_CSV ? jsonout_csv(root, table, index, stdout)
                              : jsonout_print(root, f == JSONOUT_JSON, stdout);
    cJSON_Delete(root);
    return rc;
}

int jsonout_one_format(const char *command)
{
    return cli_usage_error(command, "--json and --csv: choose one%s", "");
}
