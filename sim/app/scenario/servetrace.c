/* servetrace.c - <arrivals process="trace" file="F.csv"> (dcsim serve;
 * docs/serving.md): the requests of a CSV file, one a line, into
 * s->serving.trace. The first line that is not blank or a # comment is the
 * header, exactly "arrival_s,prompt_tokens,output_tokens" (the units);
 * every later one three numbers: the arrival in seconds (>= 0, in time
 * order) and the two token counts (whole, 1 to 1e7). Errors name the
 * file and line. The path is relative to the scenario's folder. */
#include "loader.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRACE_HEADER "arrival_s,prompt_tokens,output_tokens"
#define TRACE_MAX_ROWS 1000000000ull /* the configuration's request bound */

/* a whole token count from 1 to 1e7 */
static int tokens_of(const char *text, char **end, uint32_t *out)
{
    errno = 0;
    double x = strtod(text, end);
    if (*end == text || errno || !(x >= 1 && x <= 1e7) || x != (double)(uint32_t)x)
        return -1;
    *out = (uint32_t)x;
    return 0;
}

static int parse_row(const char *line, const char *path, long no, double last_s,
                     serve_trace_row *row, sim_error *err)
{
    char *end;
    errno = 0;
    row->arrival_s = strtod(line, &end);
    if (end == line || *end != ',' || errno || !(row->arrival_s >= 0 && row->arrival_s <= 3.2e7))
        return sim_error_set(err, SIM_ERR_INPUT, path, (int)no,
                             "expected arrival_s,prompt_tokens,output_tokens: the arrival "
                             "must be a number of seconds from 0 to a year");
    if (row->arrival_s < last_s)
        return sim_error_set(err, SIM_ERR_INPUT, path, (int)no,
                             "arrival_s is before the previous row's %g s: the rows must be "
                             "in time order", last_s);
    if (tokens_of(end + 1, &end, &row->prompt) || *end != ',')
        return sim_error_set(err, SIM_ERR_INPUT, path, (int)no,
                             "prompt_tokens must be a whole number from 1 to 1e7, followed "
                             "by output_tokens");
    if (tokens_of(end + 1, &end, &row->output))
        return sim_error_set(err, SIM_ERR_INPUT, path, (int)no,
                             "output_tokens must be a whole number from 1 to 1e7");
    while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
        end++;
    if (*end)
        return sim_error_set(err, SIM_ERR_INPUT, path, (int)no,
                             "more than three fields: expected "
                             "arrival_s,prompt_tokens,output_tokens");
    return 0;
}

static int blank_or_comment(const char *line)
{
    line += strspn(line, " \t\r\n");
    return !*line || *line == '#';
}

/* path resolved against the scenario's folder into buf */
static void resolve(const scn_scenario *s, const char *file, char *buf, size_t size)
{
    const char *slash = strrchr(s->source, '/');
    if (file[0] == '/' || !slash)
        snprintf(buf, size, "%s", file);
    else
        snprintf(buf, size, "%.*s/%s", (int)(slash - s->source), s->source, file);
}

int parse_serving_trace(loader *ld, xmlNode *n, scn_scenario *s)
{
    char file[256], path[800];
    copy_attr(n, "file", file, sizeof file);
    if (!file[0])
        return node_error(ld, n, "file", "process=\"trace\" needs file=\"REQUESTS.csv\" "
                          "(arrival_s,prompt_tokens,output_tokens)");
    resolve(s, file, path, sizeof path);
    FILE *f = fopen(path, "r");
    if (!f)
        return node_error(ld, n, "file", "cannot read %s: %s", path, strerror(errno));
    serve_trace_row *rows = NULL;
    uint64_t n_rows = 0, cap = 0;
    char line[512];
    long no = 0;
    int header = 0, rc = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        no++;
        if (!strchr(line, '\n') && !feof(f)) {
            rc = sim_error_set(ld->err, SIM_ERR_INPUT, path, (int)no,
                               "line longer than %d characters", (int)sizeof line - 2);
            break;
        }
        if (blank_or_comment(line))
            continue;
        if (!header) {
            line[strcspn(line, "\r\n")] = 0;
            if (strcmp(line, TRACE_HEADER))
                rc = sim_error_set(ld->err, SIM_ERR_INPUT, path, (int)no,
                                   "the first line must be the header " TRACE_HEADER);
            header = 1;
            continue;
        }
        if (n_rows == cap) {
            cap = cap ? 2 * cap : 1024;
            serve_trace_row *r = cap <= TRACE_MAX_ROWS ? realloc(rows, cap * sizeof *r) : NULL;
            if (!r) {
                rc = sim_error_set(ld->err, SIM_ERR_NOMEM, path, (int)no, "out of memory");
                break;
            }
            rows = r;
        }
        rc = parse_row(line, path, no, n_rows ? rows[n_rows - 1].arrival_s : 0, &rows[n_rows],
                       ld->err);
        n_rows += !rc;
    }
    fclose(f);
    if (!rc && !n_rows)
        rc = sim_error_set(ld->err, SIM_ERR_INPUT, path, (int)no,
                           "no requests after the header");
    if (rc) {
        free(rows);
        return rc;
    }
    s->serving_trace = rows;
    s->serving.trace = rows;
    s->serving.n_trace = n_rows;
    snprintf(s->serving_trace_file, sizeof s->serving_trace_file, "%s", file);
    return 0;
}
