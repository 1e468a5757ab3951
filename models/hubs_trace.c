/* hubs_trace.c - the CSV inputs of the hubs model (hubs.h): a demand trace
 * (columns by header name, any order) and an hourly carbon profile
 * ("hour,kg_per_kwh"). Errors name the text's file and line. No file I/O
 * here: the caller reads the file.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hubs.h"

enum { C_ARRIVAL, C_GPUS, C_DURATION, C_ORIGIN, C_KIND, C_DATASET, C_RESULT, C_BOUND, C_SLACK,
       C_PRIORITY, C_COUNT, C_REQUIRED = C_BOUND, C_MAX = 24 };

static const char *const col_names[C_COUNT] = {"arrival_s", "gpus", "duration_s", "origin",
                                               "kind", "dataset_tb", "result_tb", "rtt_bound_ms",
                                               "slack_h", "priority"};

/* the largest value each number column takes (0: checked on its own): ten
 * years of arrivals and durations (as the cluster tier's), an exabyte of
 * data, 1,000 s of RTT bound, ten years of slack; beyond, the times and
 * transfers stop being numbers the simulation can hold exactly */
static const double col_max[C_COUNT] = {3.2e8, 0, 3.2e8, 0, 0, 1e6, 1e6, 1e6, 87840, 1e6};

/* the next line of text (without its newline) from *pos; 0 at the end */
static int next_line(const char *text, size_t len, size_t *pos, const char **line, size_t *n)
{
    if (*pos >= len)
        return 0;
    const char *p = text + *pos, *nl = memchr(p, '\n', len - *pos);
    *line = p;
    *n = nl ? (size_t)(nl - p) : len - *pos;
    *pos += *n + 1;
    return 1;
}

static int skip(const char *f0, int nf) { return (nf == 1 && !*f0) || *f0 == '#'; }

static int number(const char *name, int line, const char *what, const char *col,
                  const char *text, double *out, sim_error *err)
{
    char *end;
    errno = 0;
    double x = strtod(text, &end);
    if (!*text || *end || errno == ERANGE || !isfinite(x))
        return sim_error_set(err, SIM_ERR_INPUT, name, line, "%s: %s '%.40s' is not a number",
                             what, col, text);
    *out = x;
    return 0;
}

static int row(const char *name, int line, char **f, const int *col, char (*origins)[32],
               unsigned n_origins, uint32_t max_gpus, hubs_job_spec *j, sim_error *err)
{
    static const char *const what = "hubs trace";
    double v[C_COUNT] = {0};
    for (int k = 0; k < C_COUNT; k++) {
        if (col[k] < 0 || k == C_ORIGIN || k == C_KIND)
            continue;
        int rc = number(name, line, what, col_names[k], f[col[k]], &v[k], err);
        if (rc)
            return rc;
        if (v[k] < 0)
            return sim_error_set(err, SIM_ERR_INPUT, name, line, "%s: %s must not be negative",
                                 what, col_names[k]);
        if (col_max[k] > 0 && v[k] > col_max[k])
            return sim_error_set(err, SIM_ERR_INPUT, name, line, "%s: %s %g is above its "
                                 "largest value, %g", what, col_names[k], v[k], col_max[k]);
    }
    if (!(v[C_GPUS] >= 1 && v[C_GPUS] <= max_gpus && v[C_GPUS] == floor(v[C_GPUS])))
        return sim_error_set(err, SIM_ERR_INPUT, name, line, "%s: gpus must be a whole number "
                             "from 1 to %u (the largest hub)", what, max_gpus);
    if (v[C_DURATION] < CLUSTER_MIN_DURATION_S)
        return sim_error_set(err, SIM_ERR_INPUT, name, line, "%s: duration_s must be at least "
                             "1 s", what);
    unsigned o = 0;
    while (o < n_origins && strcmp(origins[o], f[col[C_ORIGIN]]))
        o++;
    if (o == n_origins)
        return sim_error_set(err, SIM_ERR_INPUT, name, line, "%s: unknown origin '%.40s' (not "
                             "a demand centre of the scenario)", what, f[col[C_ORIGIN]]);
    const char *kind = f[col[C_KIND]];
    if (strcmp(kind, "training") && strcmp(kind, "serving"))
        return sim_error_set(err, SIM_ERR_INPUT, name, line, "%s: kind '%.40s' is not "
                             "training or serving", what, kind);
    *j = (hubs_job_spec){v[C_ARRIVAL], (uint32_t)v[C_GPUS], v[C_DURATION],
                         (int32_t)v[C_PRIORITY], o, strcmp(kind, "serving") ? HUBS_TRAINING
                                                                            : HUBS_SERVING,
                         v[C_DATASET], v[C_RESULT], v[C_BOUND] / 1e3, v[C_SLACK] * 3600};
    return 0;
}

int hubs_trace_parse(const char *text, size_t len, const char *name, char (*origins)[32],
                     unsigned n_origins, uint32_t max_gpus, hubs_job_spec **out, uint32_t *n,
                     sim_error *err)
{
    *out = NULL;
    *n = 0;
    int col[C_COUNT], have_header = 0, line = 0, rc = 0;
    size_t pos = 0, cap = 0, ln;
    const char *l;
    char buf[1024], *f[C_MAX];
    hubs_job_spec *v = NULL;
    while (!rc && next_line(text, len, &pos, &l, &ln)) {
        line++;
        if (ln >= sizeof buf) {
            rc = sim_error_set(err, SIM_ERR_INPUT, name, line, "line longer than %zu bytes",
                               sizeof buf - 1);
            break;
        }
        int nf = cluster_csv_split(l, ln, buf, f, C_MAX);
        if (nf > C_MAX) {
            rc = sim_error_set(err, SIM_ERR_INPUT, name, line, "more than %d columns", C_MAX);
            break;
        }
        if (skip(f[0], nf))
            continue;
        if (!have_header) {
            for (int k = 0; k < C_COUNT; k++)
                col[k] = -1;
            for (int i = 0; i < nf && !rc; i++) {
                int k = 0;
                while (k < C_COUNT && strcmp(f[i], col_names[k]))
                    k++;
                if (k == C_COUNT)
                    rc = sim_error_set(err, SIM_ERR_INPUT, name, line, "hubs trace: unknown "
                                       "column '%.40s'", f[i]);
                else
                    col[k] = i;
            }
            for (int k = 0; k < C_REQUIRED && !rc; k++)
                if (col[k] < 0)
                    rc = sim_error_set(err, SIM_ERR_INPUT, name, line, "hubs trace: the header "
                                       "lacks column '%s'", col_names[k]);
            have_header = 1;
            continue;
        }
        int need = 0;
        for (int k = 0; k < C_COUNT; k++)
            need = col[k] >= need ? col[k] + 1 : need;
        if (nf != need) {
            rc = sim_error_set(err, SIM_ERR_INPUT, name, line, "hubs trace: %d fields, the "
                               "header has %d", nf, need);
            break;
        }
        if (*n == cap) {
            cap = cap ? 2 * cap : 256;
            hubs_job_spec *w = cap <= CLUSTER_MAX_JOBS ? realloc(v, cap * sizeof *v) : NULL;
            if (!w) {
                rc = sim_error_set(err, SIM_ERR_NOMEM, name, line, "hubs trace: too many rows");
                break;
            }
            v = w;
        }
        rc = row(name, line, f, col, origins, n_origins, max_gpus, &v[*n], err);
        if (!rc && *n && v[*n].arrival_s < v[*n - 1].arrival_s)
            rc = sim_error_set(err, SIM_ERR_INPUT, name, line, "hubs trace: arrival_s goes "
                               "back in time (rows must be in arrival order)");
        if (!rc)
            (*n)++;
    }
    if (!rc && !*n)
        rc = sim_error_set(err, SIM_ERR_INPUT, name, line, "hubs trace: no jobs");
    if (rc) {
        free(v);
        *n = 0;
        return rc;
    }
    *out = v;
    return 0;
}

int hubs_carbon_parse(const char *text, size_t len, const char *name, double **out, size_t *n,
                      sim_error *err)
{
    *out = NULL;
    *n = 0;
    int line = 0, have_header = 0, rc = 0;
    size_t pos = 0, cap = 0, ln;
    const char *l;
    char buf[256], *f[C_MAX];
    double *v = NULL;
    while (!rc && next_line(text, len, &pos, &l, &ln)) {
        line++;
        if (ln >= sizeof buf) {
            rc = sim_error_set(err, SIM_ERR_INPUT, name, line, "line longer than %zu bytes",
                               sizeof buf - 1);
            break;
        }
        int nf = cluster_csv_split(l, ln, buf, f, C_MAX);
        if (nf > C_MAX) {
            rc = sim_error_set(err, SIM_ERR_INPUT, name, line, "more than %d columns", C_MAX);
            break;
        }
        if (skip(f[0], nf))
            continue;
        if (!have_header) {
            if (nf != 2 || strcmp(f[0], "hour") || strcmp(f[1], "kg_per_kwh"))
                rc = sim_error_set(err, SIM_ERR_INPUT, name, line, "carbon profile: the header "
                                   "must be hour,kg_per_kwh");
            have_header = 1;
            continue;
        }
        double hour = 0, kg = 0;
        if (nf != 2) {
            rc = sim_error_set(err, SIM_ERR_INPUT, name, line, "carbon profile: 2 fields "
                               "expected");
            break;
        }
        rc = number(name, line, "carbon profile", "hour", f[0], &hour, err);
        if (!rc)
            rc = number(name, line, "carbon profile", "kg_per_kwh", f[1], &kg, err);
        if (!rc && hour != (double)*n)
            rc = sim_error_set(err, SIM_ERR_INPUT, name, line, "carbon profile: hour %.6g out of "
                               "order (expected %zu)", hour, *n);
        if (!rc && !(kg >= 0 && kg <= 10))
            rc = sim_error_set(err, SIM_ERR_INPUT, name, line, "carbon profile: kg_per_kwh must "
                               "be from 0 to 10");
        if (!rc && *n == cap) {
            cap = cap ? 2 * cap : 32;
            double *w = cap <= 87840 ? realloc(v, cap * sizeof *v) : NULL;
            if (!w)
                rc = sim_error_set(err, SIM_ERR_INPUT, name, line, "carbon profile: more than "
                                   "87,840 hours (ten years)");
            else
                v = w;
        }
        if (!rc)
            v[(*n)++] = kg;
    }
    if (!rc && !*n)
        rc = sim_error_set(err, SIM_ERR_INPUT, name, line, "carbon profile: no hours");
    if (rc) {
        free(v);
        *n = 0;
        return rc;
    }
    *out = v;
    return 0;
}
