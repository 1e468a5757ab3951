/* cluster_trace.c - a job trace in CSV (cluster.h): a header naming the
 * columns (submit_s, gpus, duration_s, optional priority and min_gpus; any
 * order; an empty min_gpus: a rigid job), then
 * one job per line. Errors name the text's file and line. No file I/O here:
 * the caller reads the file.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"

enum { COL_SUBMIT, COL_GPUS, COL_DURATION, COL_PRIORITY, COL_MIN, COL_COUNT, COL_MAX = 16 };

static const char *const col_names[COL_COUNT] = {"submit_s", "gpus", "duration_s", "priority",
                                                 "min_gpus"};

static int header(const char *name, int line, int nf, char **field, int *col, sim_error *err)
{
    for (int k = 0; k < COL_COUNT; k++)
        col[k] = -1;
    for (int i = 0; i < nf; i++) {
        int k = 0;
        while (k < COL_COUNT && strcmp(field[i], col_names[k]))
            k++;
        if (k == COL_COUNT)
            return sim_error_set(err, SIM_ERR_INPUT, name, line, "cluster trace: unknown column "
                                 "'%.40s'; the columns are submit_s, gpus, duration_s and "
                                 "optionally priority and min_gpus", field[i]);
        if (col[k] >= 0)
            return sim_error_set(err, SIM_ERR_INPUT, name, line, "cluster trace: column '%s' "
                                 "given twice", col_names[k]);
        col[k] = i;
    }
    for (int k = 0; k < COL_PRIORITY; k++)
        if (col[k] < 0)
            return sim_error_set(err, SIM_ERR_INPUT, name, line, "cluster trace: the header "
                                 "lacks column '%s' (submit_s, gpus, duration_s are needed)",
                                 col_names[k]);
    return 0;
}

static int number(const char *name, int line, const char *col, const char *text, double *out,
                  sim_error *err)
{
    char *end;
    errno = 0;
    double x = strtod(text, &end);
    if (!*text || *end || errno == ERANGE || !isfinite(x))
        return sim_error_set(err, SIM_ERR_INPUT, name, line, "cluster trace: %s '%.40s' is "
                             "not a number", col, text);
    *out = x;
    return 0;
}

static int row(const char *name, int line, char **field, const int *col, uint32_t max_gpus,
               int takes_min, double last_submit, cluster_job_spec *j, uint32_t *min,
               sim_error *err)
{
    double submit, gpus, dur, prio = 0, mg = 0;
    int rc = number(name, line, "submit_s", field[col[COL_SUBMIT]], &submit, err);
    if (!rc)
        rc = number(name, line, "gpus", field[col[COL_GPUS]], &gpus, err);
    if (!rc)
        rc = number(name, line, "duration_s", field[col[COL_DURATION]], &dur, err);
    if (!rc && col[COL_PRIORITY] >= 0)
        rc = number(name, line, "priority", field[col[COL_PRIORITY]], &prio, err);
    if (!rc && col[COL_MIN] >= 0 && field[col[COL_MIN]][0])
        rc = number(name, line, "min_gpus", field[col[COL_MIN]], &mg, err);
    if (!rc && col[COL_MIN] >= 0 && field[col[COL_MIN]][0] &&
        !(mg >= 1 && mg <= gpus && mg == floor(mg)))
        rc = sim_error_set(err, SIM_ERR_INPUT, name, line, "cluster trace: min_gpus %g must be "
                           "a whole number from 1 to the job's gpus %g (empty: a rigid job)",
                           mg, gpus);
    if (rc)
        return rc;
    if (submit > 3.2e8)
        return sim_error_set(err, SIM_ERR_INPUT, name, line, "cluster trace: submit_s %g is "
                             "more than ten years in (at most 3.2e8 s)", submit);
    if (submit < 0 || submit < last_submit)
        return sim_error_set(err, SIM_ERR_INPUT, name, line, "cluster trace: submit_s %g is "
                             "before the previous row's %g (rows in submit order, from 0)",
                             submit, last_submit);
    /* more GPUs than the cluster: only an elastic job whose min fits (it runs on
     * at most the cluster's GPUs), and only for a caller that receives the min
     * (cluster_trace_parse's jobs are all rigid) */
    int is_fit = gpus <= max_gpus ||
                 (takes_min && mg >= 1 && mg <= max_gpus && gpus <= CLUSTER_MAX_GPUS);
    if (gpus < 1 || !is_fit || gpus != floor(gpus))
        return sim_error_set(err, SIM_ERR_INPUT, name, line, "cluster trace: gpus %g must be a "
                             "whole number from 1 to the cluster's %u (more only for an "
                             "elastic job whose min_gpus fits)", gpus, max_gpus);
    if (!(dur > 0) || dur > 3.2e8)
        return sim_error_set(err, SIM_ERR_INPUT, name, line, "cluster trace: duration_s %g must "
                             "be above 0 and at most 10 years", dur);
    if (prio != floor(prio) || fabs(prio) > 1e6)
        return sim_error_set(err, SIM_ERR_INPUT, name, line, "cluster trace: priority %g must "
                             "be a whole number from -1e6 to 1e6", prio);
    *j = (cluster_job_spec){submit, (uint32_t)gpus, dur, (int32_t)prio};
    *min = (uint32_t)mg; /* mg <= gpus, now known to fit: not before (a huge gpus and min) */
    return 0;
}

int cluster_trace_parse(const char *text, size_t len, const char *name, uint32_t max_gpus,
                        cluster_job_spec **out, uint32_t *n, sim_error *err)
{
    return cluster_trace_parse_min(text, len, name, max_gpus, out, NULL, n, err);
}

int cluster_trace_parse_min(const char *text, size_t len, const char *name, uint32_t max_gpus,
                            cluster_job_spec **out, uint32_t **min, uint32_t *n, sim_error *err)
{
    cluster_job_spec *v = NULL;
    uint32_t *mv = NULL;
    uint32_t k = 0, cap = 0;
    int col[COL_COUNT], have_header = 0, line = 0, rc = 0;
    char buf[1024], *field[COL_MAX];
    size_t at = 0;
    double last_submit = 0;
    while (!rc && at < len) {
        const char *p = text + at, *nl = memchr(p, '\n', len - at);
        size_t l = nl ? (size_t)(nl - p) : len - at;
        at += l + 1;
        line++;
        int nf = l < sizeof buf ? cluster_csv_split(p, l, buf, field, COL_MAX) : 0;
        if (l >= sizeof buf)
            rc = sim_error_set(err, SIM_ERR_INPUT, name, line, "cluster trace: line longer "
                               "than %zu bytes", sizeof buf - 1);
        else if (nf > COL_MAX)
            rc = sim_error_set(err, SIM_ERR_INPUT, name, line, "cluster trace: more than %d "
                               "columns", COL_MAX);
        if (rc || (nf == 1 && !field[0][0]) || field[0][0] == '#')
            continue;
        if (!have_header) {
            rc = header(name, line, nf, field, col, err);
            have_header = 1;
            continue;
        }
        int want = 0;
        for (int c = 0; c < COL_COUNT; c++)
            if (col[c] >= want)
                want = col[c] + 1;
        if (nf < want) {
            rc = sim_error_set(err, SIM_ERR_INPUT, name, line, "cluster trace: %d fields, the "
                               "header names %d", nf, want);
            continue;
        }
        if (k == cap) {
            uint32_t ncap = cap ? 2 * cap : 256;
            cluster_job_spec *w = ncap <= CLUSTER_MAX_JOBS ? realloc(v, ncap * sizeof *w) : NULL;
            uint32_t *wm = w ? realloc(mv, ncap * sizeof *wm) : NULL;
            if (w)
                v = w;
            if (wm)
                mv = wm;
            if (!w || !wm) {
                rc = ncap <= CLUSTER_MAX_JOBS
                         ? sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "cluster trace: out of "
                                         "memory")
                         : sim_error_set(err, SIM_ERR_INPUT, name, line, "cluster trace: more "
                                         "than 1e7 jobs");
                continue;
            }
            cap = ncap;
        }
        rc = row(name, line, field, col, max_gpus, min != NULL, last_submit, &v[k], &mv[k], err);
        if (!rc)
            last_submit = v[k++].submit_s;
    }
    if (!rc && !k)
        rc = sim_error_set(err, SIM_ERR_INPUT, name, 0, "cluster trace: no jobs (a header "
                           "line, then one job per line)");
    if (rc || !min || col[COL_MIN] < 0) {
        free(mv);
        mv = NULL;
    }
    if (rc) {
        free(v);
        return rc;
    }
    *out = v;
    if (min)
        *min = mv;
    *n = k;
    return 0;
}
