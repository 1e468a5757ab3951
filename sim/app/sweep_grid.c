/* sweep_grid.c - the points of `dcsim sweep`: --grid lists and their
 * cartesian product, or the lines of a --points file, each point's list of
 * --set strings (fixed sets, its own, then --seed), and labels for errors.
 *
 * Invariant: point i's sets and column values are fixed here, before any
 * point runs, and are the same on every rank (every rank parses the same
 * arguments and file).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sweep_internal.h"

/* ------------------------------------------------------------- the grids */

int sweep_grid_parse(const char *arg, grid *g)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || !eq[1] || (size_t)(eq - arg) >= sizeof g->path)
        return -1;
    memcpy(g->path, arg, (size_t)(eq - arg));
    g->path[eq - arg] = '\0';
    g->spec = strdup(arg);
    g->given = strdup(arg);
    size_t cap = 1;
    for (const char *c = eq + 1; *c; c++)
        cap += *c == ',';
    g->values = calloc(cap, sizeof *g->values);
    g->sets = calloc(cap, sizeof *g->sets);
    if (!g->spec || !g->given || !g->values || !g->sets)
        return -1;
    char *v = g->spec + (eq - arg) + 1;
    for (;;) { /* empty values are an error, not a silent skip */
        char *comma = strchr(v, ',');
        if (comma)
            *comma = '\0';
        if (!*v)
            return -1;
        g->values[g->n] = v;
        size_t len = strlen(g->path) + strlen(v) + 2;
        if (!(g->sets[g->n] = malloc(len)))
            return -1;
        snprintf(g->sets[g->n++], len, "%s=%s", g->path, v);
        if (!comma)
            break;
        v = comma + 1;
    }
    return 0;
}

/* Every point's set list: the fixed ones, its own, then --seed. */
static int point_sets(sweep *sw, point *p, const char *const *own, size_t n_own)
{
    p->n_sets = sw->fixed.n + n_own + (sw->seed_set[0] ? 1 : 0);
    p->sets = malloc((p->n_sets ? p->n_sets : 1) * sizeof *p->sets);
    if (!p->sets)
        return -1;
    memcpy(p->sets, sw->fixed.v, sw->fixed.n * sizeof *p->sets);
    memcpy(p->sets + sw->fixed.n, own, n_own * sizeof *own);
    p->first_own = sw->fixed.n;
    p->n_own = n_own;
    if (sw->seed_set[0])
        p->sets[p->n_sets - 1] = sw->seed_set;
    return 0;
}

static int param_index(sweep *sw, const char *set)
{
    size_t len = strcspn(set, "=");
    for (size_t k = 0; k < sw->n_params; k++)
        if (strcspn(sw->params[k], "=") == len && !strncmp(sw->params[k], set, len))
            return (int)k;
    return -1;
}

int sweep_points_from_grids(sweep *sw)
{
    size_t n = 1;
    for (size_t k = 0; k < sw->n_grids; k++) {
        n *= sw->grids[k].n;
        if (n > MAX_POINTS)
            return sweep_usage_error(sw, "more than 10000000 points%s", "");
        sw->params[sw->n_params++] = sw->grids[k].path;
    }
    sw->pts = calloc(n, sizeof *sw->pts);
    if (!sw->pts)
        return EXIT_FAILURE;
    sw->n_points = n;
    const char *own[MAX_GRIDS];
    for (size_t i = 0; i < n; i++) {
        size_t idx = i;
        for (size_t k = sw->n_grids; k-- > 0;) { /* the last grid varies fastest */
            size_t j = idx % sw->grids[k].n;
            idx /= sw->grids[k].n;
            own[k] = sw->grids[k].sets[j];
            sw->pts[i].values[k] = sw->grids[k].values[j];
        }
        if (point_sets(sw, &sw->pts[i], own, sw->n_grids))
            return EXIT_FAILURE;
    }
    return 0;
}

/* --points FILE: the whole file into sw->points_text (NUL-terminated, to be
 * tokenised in place), its length in *len. A NUL byte inside is an error. */
static int read_points_file(sweep *sw, size_t *out_len)
{
    FILE *f = fopen(sw->points_file, "rb");
    if (!f) {
        if (sw->rank == 0)
            fprintf(stderr, "%s: error: cannot read the points file: %s\n", sw->points_file,
                    strerror(errno));
        return CLI_EXIT_INPUT;
    }
    size_t cap = 0, len = 0;
    char buf[65536];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) {
        if (len + got + 1 > cap) {
            cap = 2 * (len + got + 1);
            char *t = realloc(sw->points_text, cap);
            if (!t) {
                fclose(f);
                return EXIT_FAILURE;
            }
            sw->points_text = t;
        }
        memcpy(sw->points_text + len, buf, got);
        len += got;
    }
    fclose(f);
    if (!sw->points_text && !(sw->points_text = malloc(1)))
        return EXIT_FAILURE;
    sw->points_text[len] = '\0';
    const char *nul = memchr(sw->points_text, '\0', len); /* would end the text early */
    if (nul) {
        unsigned ln = 1;
        for (const char *c = sw->points_text; c < nul; c++)
            ln += *c == '\n';
        if (sw->rank == 0)
            fprintf(stderr, "%s:%u: error: a NUL byte; a points file is text: one point per "
                    "line, PATH=VALUE tokens separated by blanks\n", sw->points_file, ln);
        return CLI_EXIT_INPUT;
    }
    *out_len = len;
    return 0;
}

/* Line ln of the points file (comment cut): its PATH=VALUE tokens into own
 * (*n_own of them), each value into the next point's column, new paths as
 * new columns. */
static int parse_points_line(sweep *sw, char *line, unsigned ln, const char **own, size_t *n_own)
{
    for (char *save = NULL, *tok = strtok_r(line, " \t\r", &save); tok;
         tok = strtok_r(NULL, " \t\r", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok || !eq[1]) {
            if (sw->rank == 0)
                fprintf(stderr, "%s:%u: error: '%s': expected PATH=VALUE, e.g. "
                        "checkpoint/@interval=20min\n", sw->points_file, ln, tok);
            return CLI_EXIT_INPUT;
        }
        int k = param_index(sw, tok);
        if (k < 0 && sw->n_params == MAX_PARAMS) {
            if (sw->rank == 0)
                fprintf(stderr, "%s:%u: error: more than %d different paths\n",
                        sw->points_file, ln, MAX_PARAMS);
            return CLI_EXIT_INPUT;
        }
        if (k < 0) { /* a new column, named by the path (NUL-terminated in place below) */
            k = (int)sw->n_params++;
            sw->params[k] = tok;
        }
        if (*n_own == MAX_PARAMS) {
            if (sw->rank == 0)
                fprintf(stderr, "%s:%u: error: more than %d PATH=VALUE tokens on one line; "
                        "at most %d per point\n", sw->points_file, ln, MAX_PARAMS,
                        MAX_PARAMS);
            return CLI_EXIT_INPUT;
        }
        own[(*n_own)++] = tok;
        sw->pts[sw->n_points].values[k] = eq + 1;
    }
    return 0;
}

/* The column names: the path part of the first token that named them. */
static int name_columns(sweep *sw)
{
    char **names = calloc(sw->n_params, sizeof *names);
    if (!names)
        return EXIT_FAILURE;
    for (size_t k = 0; k < sw->n_params; k++) {
        size_t l = strcspn(sw->params[k], "=");
        if (!(names[k] = malloc(l + 1)))
            return EXIT_FAILURE;
        memcpy(names[k], sw->params[k], l);
        names[k][l] = '\0';
        sw->params[k] = names[k];
    }
    sw->owned_sets = names;
    return 0;
}

/* --points FILE: one point per line, PATH=VALUE tokens separated by blanks. */
int sweep_points_from_file(sweep *sw)
{
    size_t len = 0;
    int rc = read_points_file(sw, &len);
    if (rc)
        return rc;
    size_t lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += sw->points_text[i] == '\n';
    sw->pts = calloc(lines, sizeof *sw->pts);
    if (!sw->pts)
        return EXIT_FAILURE;
    char *line = sw->points_text;
    for (unsigned ln = 1; line; ln++) {
        char *next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        const char *own[MAX_PARAMS];
        size_t n_own = 0;
        if ((rc = parse_points_line(sw, line, ln, own, &n_own)))
            return rc;
        line = next;
        if (!n_own)
            continue;
        point *p = &sw->pts[sw->n_points++];
        p->line = ln;
        if (point_sets(sw, p, own, n_own))
            return EXIT_FAILURE;
    }
    if (!sw->n_points) {
        if (sw->rank == 0)
            fprintf(stderr, "%s: error: no points in the file (one per line: PATH=VALUE ...)\n",
                    sw->points_file);
        return CLI_EXIT_INPUT;
    }
    return name_columns(sw);
}

/* ------------------------------------------------------------ labels */

void sweep_point_label(const sweep *sw, size_t i, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t j = 0; j < sw->pts[i].n_own && used < size; j++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", j ? " " : "",
                                 sw->pts[i].sets[sw->pts[i].first_own + j]);
}

void sweep_print_point_error(const sweep *sw, size_t i, const sim_error *e)
{
    const point *p = &sw->pts[i];
    if (!strncmp(e->file, "--set ", 6)) {
        const char *set = e->file + 6;
        for (size_t j = p->first_own; j < p->first_own + p->n_own; j++) {
            if (strcmp(p->sets[j], set))
                continue;
            const char *eq = strchr(set, '=');
            if (sw->points_file)
                fprintf(stderr, "%s:%u: error: %s: %s\n", sw->points_file, p->line, set, e->msg);
            else
                fprintf(stderr, "dcsim sweep: error: --grid %.*s: value '%s': %s\n",
                        (int)(eq - set), set, eq + 1, e->msg);
            return;
        }
    }
    char line[2048], label[1024];
    sim_error_format(e, line, sizeof line);
    sweep_point_label(sw, i, label, sizeof label);
    if (sw->points_file)
        fprintf(stderr, "%s (point %zu, %s:%u: %s)\n", line, i, sw->points_file, p->line, label);
    else
        fprintf(stderr, "%s (point %zu: %s)\n", line, i, label);
}
