/* cluster_import.c - job traces in the column layouts of published cluster
 * traces (cluster.h "Importing traces"; docs/cluster.md): a layout names
 * which column holds the submit time, the GPUs, the duration (or start and
 * end), the priority and the job a task row belongs to; times are seconds
 * or "YYYY-MM-DD HH:MM:SS" date-times. Rows a simulation cannot run (no
 * GPUs, not finished, under the shortest job, larger than the cluster) are
 * skipped and counted, not refused: real traces hold them. A field that is
 * there but not a number or a date-time is an error at its line: a broken
 * file is not silently thinned. No file I/O here.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"

#define MAX_FIELDS 64
#define MAX_LINE 8192
#define MAX_DURATION_S 3.2e8 /* ten years, as the dcsim layout */

/* the headerless Alibaba PAI 2020 task table (its README lists the schema
 * apart from the file) */
static const char *const pai_columns[] = {"job_name", "task_name", "inst_num", "status",
                                          "start_time", "end_time", "plan_cpu", "plan_mem",
                                          "plan_gpu", "gpu_type", NULL};

static const char *const format_names[CLUSTER_TRACE_FORMATS] = {"dcsim", "helios", "pai-2020",
                                                                "philly", "columns"};

const char *cluster_trace_format_name(int f)
{
    return f >= 0 && f < CLUSTER_TRACE_FORMATS ? format_names[f] : "?";
}

const char *cluster_trace_format_names(void)
{
    return "dcsim, helios, pai-2020, philly, columns";
}

static void set(cluster_trace_layout *l, int role, const char *col)
{
    snprintf(l->col[role], sizeof l->col[role], "%s", col);
}

int cluster_trace_layout_init(cluster_trace_layout *l, const char *format)
{
    memset(l, 0, sizeof *l);
    l->gpu_scale = 1;
    int f = 0;
    while (f < CLUSTER_TRACE_FORMATS && strcmp(format, format_names[f]))
        f++;
    if (f == CLUSTER_TRACE_FORMATS)
        return -1;
    l->format = f;
    switch (f) {
    case CLUSTER_TRACE_DCSIM:
        set(l, CLUSTER_TCOL_SUBMIT, "submit_s");
        set(l, CLUSTER_TCOL_GPUS, "gpus");
        set(l, CLUSTER_TCOL_DURATION, "duration_s");
        set(l, CLUSTER_TCOL_PRIORITY, "priority");
        break;
    case CLUSTER_TRACE_HELIOS: /* cluster_log.csv of HeliosData (Hu et al., SC'21) */
        set(l, CLUSTER_TCOL_SUBMIT, "submit_time");
        set(l, CLUSTER_TCOL_GPUS, "gpu_num");
        set(l, CLUSTER_TCOL_DURATION, "duration");
        set(l, CLUSTER_TCOL_START, "start_time");
        set(l, CLUSTER_TCOL_END, "end_time");
        break;
    case CLUSTER_TRACE_PAI: /* pai_task_table.csv, cluster-trace-gpu-v2020 (Weng, NSDI'22) */
        set(l, CLUSTER_TCOL_SUBMIT, "start_time"); /* the table has no submit time */
        set(l, CLUSTER_TCOL_GPUS, "plan_gpu");
        set(l, CLUSTER_TCOL_GPU_MULT, "inst_num");
        set(l, CLUSTER_TCOL_START, "start_time");
        set(l, CLUSTER_TCOL_END, "end_time");
        set(l, CLUSTER_TCOL_JOB, "job_name");
        l->gpu_scale = 0.01; /* plan_gpu is in per cent of one GPU */
        l->fixed_header = pai_columns;
        break;
    default: /* philly: JSON, read by the caller; columns: all named by the caller */
        break;
    }
    return 0;
}

/* days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil) */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static const unsigned month_days[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

int cluster_trace_time(const char *text, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(text, &end);
    if (*text && !*end && errno != ERANGE && isfinite(x)) {
        *out = x;
        return 0;
    }
    int y, mo, d, h = 0, mi = 0, n = 0;
    double s = 0;
    if (sscanf(text, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3 || n != 10)
        return -1;
    const char *p = text + n;
    if (*p == ' ' || *p == 'T') {
        int m2 = 0;
        if (sscanf(p + 1, "%2d:%2d:%lf%n", &h, &mi, &s, &m2) != 3)
            return -1;
        p += 1 + m2;
    }
    if (*p || y < 1900 || y > 2200 || mo < 1 || mo > 12 || d < 1 ||
        d > (int)month_days[mo - 1] || h > 23 || mi > 59 || !(s >= 0 && s < 61))
        return -1;
    *out = (double)days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400.0 + h * 3600.0 +
           mi * 60.0 + s;
    return 0;
}

int cluster_csv_split(const char *line, size_t len, char *buf, char **field, int max)
{
    int n = 0;
    size_t o = 0, i = 0;
    while (n <= max) {
        while (i < len && (line[i] == ' ' || line[i] == '\t'))
            i++;
        if (n == max)
            return max + 1;
        field[n++] = buf + o;
        int quoted = i < len && line[i] == '"';
        i += quoted;
        size_t start = o;
        while (i < len) {
            char c = line[i];
            if (quoted && c == '"') {
                if (i + 1 < len && line[i + 1] == '"') {
                    buf[o++] = '"';
                    i += 2;
                    continue;
                }
                quoted = 0;
                i++;
                continue;
            }
            if (!quoted && c == ',')
                break;
            buf[o++] = c;
            i++;
        }
        while (o > start && (buf[o - 1] == ' ' || buf[o - 1] == '\t' || buf[o - 1] == '\r'))
            o--;
        buf[o++] = '\0';
        if (i >= len)
            return n;
        i++; /* the comma */
    }
    return n;
}

typedef struct import_state {
    const char *name;
    const cluster_trace_layout *lay;
    int col[CLUSTER_TCOL_COUNT]; /* field index per role, -1 none */
    int want;                    /* fields a row needs */
    cluster_trace_row *rows;
    uint32_t n, cap;
    char *keys;                  /* the job keys, NUL-separated */
    size_t keys_len, keys_cap;
    sim_error *err;
} import_state;

static const char *const role_names[CLUSTER_TCOL_COUNT] = {
    "submit", "gpus", "duration", "priority", "start", "end", "job", "gpu multiplier",
    "min GPUs"};

static int map_header(import_state *st, int line, int nf, char **field)
{
    const cluster_trace_layout *l = st->lay;
    st->want = 0;
    for (int r = 0; r < CLUSTER_TCOL_COUNT; r++) {
        st->col[r] = -1;
        if (!l->col[r][0])
            continue;
        for (int i = 0; i < nf; i++)
            if (!strcmp(field[i], l->col[r]))
                st->col[r] = i;
        if (st->col[r] < 0 && r != CLUSTER_TCOL_PRIORITY && r != CLUSTER_TCOL_DURATION)
            return sim_error_set(st->err, SIM_ERR_INPUT, st->name, line, "cluster trace "
                                 "(%s): the header lacks the %s column '%s'",
                                 format_names[l->format], role_names[r], l->col[r]);
        if (st->col[r] >= st->want)
            st->want = st->col[r] + 1;
    }
    if (st->col[CLUSTER_TCOL_DURATION] < 0 &&
        (st->col[CLUSTER_TCOL_START] < 0 || st->col[CLUSTER_TCOL_END] < 0))
        return sim_error_set(st->err, SIM_ERR_INPUT, st->name, line, "cluster trace (%s): "
                             "the header has no duration column '%s' and no start and end "
                             "columns", format_names[l->format], l->col[CLUSTER_TCOL_DURATION]);
    return 0;
}

/* a time or number field into *out when present and not empty (*out kept
 * otherwise); 0, or SIM_ERR_INPUT at the line */
static int field_value(import_state *st, int line, int role, char **field, int is_time,
                       double *out)
{
    int i = st->col[role];
    if (i < 0 || !field[i][0])
        return 0;
    double x = NAN;
    char *end;
    int bad;
    if (is_time)
        bad = cluster_trace_time(field[i], &x);
    else {
        errno = 0;
        x = strtod(field[i], &end);
        bad = *end || errno == ERANGE;
    }
    if (bad || !isfinite(x))
        return sim_error_set(st->err, SIM_ERR_INPUT, st->name, line, "cluster trace (%s): "
                             "%s '%.40s' in column '%s' is not %s", format_names[st->lay->format],
                             role_names[role], field[i], st->lay->col[role],
                             is_time ? "a number of seconds or a date-time "
                                       "YYYY-MM-DD HH:MM:SS" : "a number");
    *out = x;
    return 0;
}

static int add_key(import_state *st, const char *key, cluster_trace_row *r)
{
    size_t l = strlen(key) + 1;
    if (st->keys_len + l > st->keys_cap) {
        size_t ncap = st->keys_cap ? 2 * st->keys_cap : 1 << 16;
        while (ncap < st->keys_len + l)
            ncap *= 2;
        char *k = realloc(st->keys, ncap);
        if (!k)
            return sim_error_set(st->err, SIM_ERR_NOMEM, NULL, 0, "cluster trace: out of memory");
        st->keys = k;
        st->keys_cap = ncap;
    }
    memcpy(st->keys + st->keys_len, key, l);
    r->key = st->keys_len;
    st->keys_len += l;
    return 0;
}

static int import_row(import_state *st, int line, int nf, char **field)
{
    if (nf < st->want)
        return sim_error_set(st->err, SIM_ERR_INPUT, st->name, line, "cluster trace (%s): %d "
                             "fields, the layout needs %d", format_names[st->lay->format], nf,
                             st->want);
    if (st->n == st->cap) {
        uint32_t ncap = st->cap ? 2 * st->cap : 1024;
        cluster_trace_row *w = ncap <= 4 * CLUSTER_MAX_JOBS ? realloc(st->rows, ncap * sizeof *w)
                                                           : NULL;
        if (!w)
            return ncap <= 4 * CLUSTER_MAX_JOBS
                       ? sim_error_set(st->err, SIM_ERR_NOMEM, NULL, 0, "cluster trace: out "
                                       "of memory")
                       : sim_error_set(st->err, SIM_ERR_INPUT, st->name, line, "cluster "
                                       "trace: more than 4e7 rows");
        st->rows = w;
        st->cap = ncap;
    }
    cluster_trace_row *r = &st->rows[st->n];
    *r = (cluster_trace_row){.submit_s = NAN, .start_s = NAN, .end_s = NAN, .duration_s = NAN,
                             .min_gpus = NAN, .line = line};
    double mult = 1, prio = 0; /* r->gpus 0 when empty: no GPUs (a CPU task) */
    int rc = field_value(st, line, CLUSTER_TCOL_SUBMIT, field, 1, &r->submit_s);
    if (!rc)
        rc = field_value(st, line, CLUSTER_TCOL_GPUS, field, 0, &r->gpus);
    if (!rc)
        rc = field_value(st, line, CLUSTER_TCOL_GPU_MULT, field, 0, &mult);
    if (!rc)
        rc = field_value(st, line, CLUSTER_TCOL_DURATION, field, 0, &r->duration_s);
    if (!rc)
        rc = field_value(st, line, CLUSTER_TCOL_START, field, 1, &r->start_s);
    if (!rc)
        rc = field_value(st, line, CLUSTER_TCOL_END, field, 1, &r->end_s);
    if (!rc)
        rc = field_value(st, line, CLUSTER_TCOL_PRIORITY, field, 0, &prio);
    if (!rc && st->col[CLUSTER_TCOL_MIN_GPUS] >= 0 && field[st->col[CLUSTER_TCOL_MIN_GPUS]][0]) {
        rc = field_value(st, line, CLUSTER_TCOL_MIN_GPUS, field, 0, &r->min_gpus);
        if (!rc && !(r->min_gpus > 0 && r->min_gpus < 1e12))
            return sim_error_set(st->err, SIM_ERR_INPUT, st->name, line, "cluster trace: min "
                                 "GPUs %g must be above 0 (empty: a rigid job)", r->min_gpus);
        r->min_gpus *= st->lay->gpu_scale;
    }
    if (rc)
        return rc;
    if (prio != floor(prio) || fabs(prio) > 1e6)
        return sim_error_set(st->err, SIM_ERR_INPUT, st->name, line, "cluster trace: priority "
                             "%g must be a whole number from -1e6 to 1e6", prio);
    if (!(r->gpus >= 0 && mult >= 0 && r->gpus * mult < 1e12))
        return sim_error_set(st->err, SIM_ERR_INPUT, st->name, line, "cluster trace (%s): the "
                             "GPUs must be from 0 to 1e12", format_names[st->lay->format]);
    r->gpus *= mult * st->lay->gpu_scale;
    r->priority = (int32_t)prio;
    if (st->col[CLUSTER_TCOL_JOB] >= 0 && (rc = add_key(st, field[st->col[CLUSTER_TCOL_JOB]], r)))
        return rc;
    st->n++;
    return 0;
}

/* the keys for by_key (qsort has no context argument in C11; the loader
 * runs on one thread) */
static const char *key_base;

static int by_key(const void *a, const void *b)
{
    const cluster_trace_row *x = a, *y = b;
    int c = strcmp(key_base + x->key, key_base + y->key);
    return c ? c : (x->line > y->line) - (x->line < y->line);
}

static double min_nan(double a, double b) { return isnan(a) || b < a ? b : a; }
static double max_nan(double a, double b) { return isnan(a) || b > a ? b : a; }

/* task rows of one job into one row: GPUs added, the earliest submit and
 * start, the latest end, the longest duration; the first row's line */
static uint32_t merge_tasks(cluster_trace_row *v, uint32_t n, const char *keys)
{
    if (!n)
        return 0; /* (v and keys are NULL) */
    key_base = keys;
    qsort(v, n, sizeof *v, by_key);
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (k && !strcmp(keys + v[k - 1].key, keys + v[i].key)) {
            cluster_trace_row *m = &v[k - 1];
            m->gpus += v[i].gpus;
            m->min_gpus += v[i].min_gpus; /* NAN (rigid) when a task gives none */
            m->submit_s = min_nan(m->submit_s, v[i].submit_s);
            m->start_s = min_nan(m->start_s, v[i].start_s);
            m->end_s = max_nan(m->end_s, v[i].end_s);
            m->duration_s = max_nan(m->duration_s, v[i].duration_s);
            m->unfinished |= isnan(v[i].end_s) && isnan(v[i].duration_s);
            m->line = m->line < v[i].line ? m->line : v[i].line;
        } else {
            v[k] = v[i];
            v[k].unfinished = isnan(v[k].end_s) && isnan(v[k].duration_s);
            k++;
        }
    }
    return k;
}

int cluster_trace_import(const char *text, size_t len, const char *name,
                         const cluster_trace_layout *lay, uint32_t max_gpus,
                         cluster_job_spec **out, uint32_t *n, cluster_trace_stats *stats,
                         sim_error *err)
{
    return cluster_trace_import_min(text, len, name, lay, max_gpus, out, NULL, n, stats, err);
}

int cluster_trace_import_min(const char *text, size_t len, const char *name,
                             const cluster_trace_layout *lay, uint32_t max_gpus,
                             cluster_job_spec **out, uint32_t **min, uint32_t *n,
                             cluster_trace_stats *stats, sim_error *err)
{
    import_state st = {.name = name, .lay = lay, .err = err};
    char *buf = malloc(MAX_LINE), *field[MAX_FIELDS];
    int rc = buf ? 0 : sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "cluster trace: out of memory");
    int have_header = 0, line = 0;
    if (!rc && lay->fixed_header) {
        int nf = 0;
        while (lay->fixed_header[nf])
            nf++;
        rc = map_header(&st, 0, nf, (char **)lay->fixed_header);
        have_header = 1;
    }
    size_t at = 0;
    while (!rc && at < len) {
        const char *p = text + at, *nl = memchr(p, '\n', len - at);
        size_t l = nl ? (size_t)(nl - p) : len - at;
        at += l + 1;
        line++;
        if (l >= MAX_LINE) {
            rc = sim_error_set(err, SIM_ERR_INPUT, name, line, "cluster trace: line longer "
                               "than %d bytes", MAX_LINE - 1);
            break;
        }
        int nf = cluster_csv_split(p, l, buf, field, MAX_FIELDS);
        if (nf > MAX_FIELDS)
            rc = sim_error_set(err, SIM_ERR_INPUT, name, line, "cluster trace: more than %d "
                               "columns", MAX_FIELDS);
        else if ((nf == 1 && !field[0][0]) || field[0][0] == '#')
            continue;
        else if (!have_header) {
            rc = map_header(&st, line, nf, field);
            have_header = 1;
        } else
            rc = import_row(&st, line, nf, field);
    }
    free(buf);
    if (!rc && st.col[CLUSTER_TCOL_JOB] >= 0)
        st.n = merge_tasks(st.rows, st.n, st.keys);
    free(st.keys);
    if (!rc)
        rc = cluster_trace_finish_min(st.rows, st.n, name, max_gpus, out, min, n, stats, err);
    free(st.rows);
    return rc;
}

static int by_submit(const void *a, const void *b)
{
    const cluster_trace_row *x = a, *y = b;
    if (x->submit_s != y->submit_s)
        return x->submit_s < y->submit_s ? -1 : 1;
    return (x->line > y->line) - (x->line < y->line);
}

int cluster_trace_finish(cluster_trace_row *v, uint32_t n, const char *name, uint32_t max_gpus,
                         cluster_job_spec **out, uint32_t *n_out, cluster_trace_stats *st,
                         sim_error *err)
{
    return cluster_trace_finish_min(v, n, name, max_gpus, out, NULL, n_out, st, err);
}

int cluster_trace_finish_min(cluster_trace_row *v, uint32_t n, const char *name,
                             uint32_t max_gpus, cluster_job_spec **out, uint32_t **min,
                             uint32_t *n_out, cluster_trace_stats *st, sim_error *err)
{
    memset(st, 0, sizeof *st);
    st->rows = n;
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        cluster_trace_row r = v[i];
        double dur = !isnan(r.duration_s) ? r.duration_s : r.end_s - r.start_s;
        if (isnan(r.submit_s))
            r.submit_s = r.start_s;
        double gpus = ceil(r.gpus - 1e-9); /* a share of a GPU holds a whole one */
        if (r.unfinished || isnan(dur) || isnan(r.submit_s))
            st->unfinished++;
        else if (!(gpus >= 1))
            st->no_gpus++;
        else if (dur < CLUSTER_MIN_DURATION_S || dur > MAX_DURATION_S)
            st->bad_duration++;
        else if (gpus > max_gpus && !(min && ceil(r.min_gpus - 1e-9) <= max_gpus &&
                                      gpus <= CLUSTER_MAX_GPUS))
            st->too_large++; /* more than the cluster: kept only elastic with its min fitting */
        else {
            v[k] = r;
            v[k].gpus = gpus;
            v[k++].duration_s = dur;
        }
    }
    if (!k)
        return sim_error_set(err, SIM_ERR_INPUT, name, 0, "cluster trace: no job to run "
                             "among %u (%u without GPUs, %u unfinished, %u under 1 s or over "
                             "ten years, %u larger than the cluster's %u GPUs)", n, st->no_gpus,
                             st->unfinished, st->bad_duration, st->too_large, max_gpus);
    qsort(v, k, sizeof *v, by_submit);
    cluster_job_spec *j = malloc((size_t)k * sizeof *j);
    if (!j)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "cluster trace: out of memory");
    st->origin_s = v[0].submit_s;
    if (v[k - 1].submit_s - st->origin_s > MAX_DURATION_S) {
        int line = v[k - 1].line;
        double span = v[k - 1].submit_s - st->origin_s;
        free(j);
        return sim_error_set(err, SIM_ERR_INPUT, name, line, "cluster trace: this job is "
                             "submitted %g s after the first; a trace spans at most ten years "
                             "(3.2e8 s)", span);
    }
    uint32_t *m = NULL;
    for (uint32_t i = 0; min && i < k; i++) {
        double mg = ceil(v[i].min_gpus - 1e-9);
        if (isnan(mg))
            continue;
        if (mg > v[i].gpus) {
            free(j);
            free(m);
            return sim_error_set(err, SIM_ERR_INPUT, name, v[i].line, "cluster trace: min GPUs "
                                 "%g is more than the job's %g GPUs", mg, v[i].gpus);
        }
        if (!m && !(m = calloc(k, sizeof *m))) {
            free(j);
            return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "cluster trace: out of memory");
        }
        m[i] = (uint32_t)mg;
    }
    for (uint32_t i = 0; i < k; i++)
        j[i] = (cluster_job_spec){v[i].submit_s - st->origin_s, (uint32_t)v[i].gpus,
                                  v[i].duration_s, v[i].priority};
    st->kept = k;
    if (min)
        *min = m;
    *out = j;
    *n_out = k;
    return 0;
}
