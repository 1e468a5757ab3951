/* cluster_trace_file.c - <cluster-jobs><trace file format [*-column]
 * [gpu-scale]> (docs/cluster.md "Importing published traces"): the file,
 * relative to the scenario's folder, read whole; the dcsim layout through
 * cluster_trace_parse (strict: every row must run), a published layout
 * (helios, pai-2020, or columns named by the attributes) through
 * cluster_trace_import, Philly's JSON job log here (cJSON) into rows for
 * cluster_trace_finish. What an import skipped is noted in
 * s->cluster_defaults, so that the output says it.
 */
#include "loader.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#define MAX_TRACE_BYTES (256.0 * 1024 * 1024)

static int read_whole(loader *ld, xmlNode *n, const char *path, char **out, size_t *out_len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return node_error(ld, n, "file", "cannot read %s: %s", path, strerror(errno));
    char *text = NULL;
    size_t len = 0, cap = 0;
    int rc = 0;
    for (;;) {
        if (len == cap) {
            size_t ncap = cap ? 2 * cap : 65536;
            char *t = ncap <= MAX_TRACE_BYTES ? realloc(text, ncap + 1) : NULL;
            if (!t) {
                rc = node_error(ld, n, "file", "%s is larger than 256 MiB (or out of memory)",
                                path);
                break;
            }
            text = t;
            cap = ncap;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (!got)
            break;
    }
    if (!rc && ferror(f))
        rc = node_error(ld, n, "file", "cannot read %s", path);
    fclose(f);
    if (rc) {
        free(text);
        return rc;
    }
    if (!text && !(text = malloc(1)))
        return node_error(ld, n, "file", "out of memory");
    text[len] = '\0'; /* cJSON reads a NUL-terminated text */
    *out = text;
    *out_len = len;
    return 0;
}

/* one Philly time: a date-time string; anything else (null, "None") is none */
static double philly_time(const cJSON *o, const char *key)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, key);
    double x;
    if (cJSON_IsString(t) && !cluster_trace_time(t->valuestring, &x))
        return x;
    return NAN;
}

/* Philly's cluster_job_log (Jeon et al., ATC'19; msr-fiddle/philly-traces):
 * a JSON array of jobs {submitted_time, attempts: [{start_time, end_time,
 * detail: [{ip, gpus: [...]}]}], ...}. A job's GPUs: the most any attempt
 * held (the GPU names of its machines added); its duration: its attempts'
 * run times added (end - start of each attempt with both); its submit:
 * submitted_time. */
static int read_philly(loader *ld, xmlNode *n, const char *path, const char *text,
                       uint32_t max_gpus, cluster_job_spec **out, uint32_t *count,
                       cluster_trace_stats *stats)
{
    cJSON *root = cJSON_Parse(text);
    if (!root || !cJSON_IsArray(root)) {
        cJSON_Delete(root);
        return node_error(ld, n, "file", "%s is not Philly's job log: a JSON array of jobs "
                          "(format=\"philly\")", path);
    }
    int total = cJSON_GetArraySize(root);
    cluster_trace_row *rows = calloc(total > 0 ? (size_t)total : 1, sizeof *rows);
    if (!rows) {
        cJSON_Delete(root);
        return node_error(ld, n, "file", "out of memory");
    }
    uint32_t k = 0;
    const cJSON *job;
    cJSON_ArrayForEach(job, root)
    {
        cluster_trace_row *r = &rows[k];
        *r = (cluster_trace_row){.submit_s = philly_time(job, "submitted_time"),
                                 .start_s = NAN, .end_s = NAN, .duration_s = NAN,
                                 .line = (int)k + 1};
        const cJSON *attempts = cJSON_GetObjectItemCaseSensitive(job, "attempts"), *a;
        double run = 0;
        int timed = 0;
        cJSON_ArrayForEach(a, attempts)
        {
            double s0 = philly_time(a, "start_time"), s1 = philly_time(a, "end_time");
            if (isfinite(s0) && isfinite(s1) && s1 >= s0) {
                run += s1 - s0;
                timed = 1;
            } else if (isfinite(s0))
                r->unfinished = 1; /* an attempt still running */
            double g = 0;
            const cJSON *d, *detail = cJSON_GetObjectItemCaseSensitive(a, "detail");
            cJSON_ArrayForEach(d, detail)
            {
                const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(d, "gpus");
                if (cJSON_IsArray(gpus))
                    g += cJSON_GetArraySize(gpus);
            }
            if (g > r->gpus)
                r->gpus = g;
        }
        if (timed)
            r->duration_s = run;
        else
            r->unfinished = 1;
        k++;
    }
    cJSON_Delete(root);
    int rc = cluster_trace_finish(rows, k, path, max_gpus, out, count, stats, ld->err);
    free(rows);
    return rc;
}

static const char *const role_attrs[CLUSTER_TCOL_COUNT] = {
    "submit-column", "gpus-column", "duration-column", "priority-column",
    "start-column", "end-column", "job-column", "gpu-multiplier-column", "min-gpus-column"};

/* the format's layout with the attributes' columns over it */
static int layout_of(loader *ld, xmlNode *n, cluster_trace_layout *lay)
{
    char format[32] = "dcsim";
    if (has_attr(n, "format"))
        copy_attr(n, "format", format, sizeof format);
    if (cluster_trace_layout_init(lay, format))
        return node_error(ld, n, "format", "unknown trace format '%s'; the formats are %s",
                          format, cluster_trace_format_names());
    for (int r = 0; r < CLUSTER_TCOL_COUNT; r++)
        if (has_attr(n, role_attrs[r])) {
            if (lay->format == CLUSTER_TRACE_DCSIM || lay->format == CLUSTER_TRACE_PHILLY)
                return node_error(ld, n, role_attrs[r], "%s applies to the formats helios, "
                                  "pai-2020 and columns, not %s", role_attrs[r], format);
            copy_attr(n, role_attrs[r], lay->col[r], sizeof lay->col[r]);
            if (!lay->col[r][0])
                return node_error(ld, n, role_attrs[r], "%s must name a column", role_attrs[r]);
        }
    if (has_attr(n, "gpu-scale")) {
        int rc = get_quantity(ld, n, "gpu-scale", SIM_DIM_COUNT, 1, &lay->gpu_scale);
        if (!rc && !(lay->gpu_scale > 0 && lay->gpu_scale <= 1e6))
            rc = node_error(ld, n, "gpu-scale", "gpu-scale must be above 0 and at most 1e6");
        if (rc)
            return rc;
    }
    if (lay->format == CLUSTER_TRACE_COLUMNS &&
        (!lay->col[CLUSTER_TCOL_GPUS][0] ||
         (!lay->col[CLUSTER_TCOL_SUBMIT][0] && !lay->col[CLUSTER_TCOL_START][0]) ||
         (!lay->col[CLUSTER_TCOL_DURATION][0] &&
          (!lay->col[CLUSTER_TCOL_START][0] || !lay->col[CLUSTER_TCOL_END][0]))))
        return node_error(ld, n, "format", "format=\"columns\" needs gpus-column, "
                          "submit-column (or start-column), and duration-column or "
                          "start-column and end-column");
    if (lay->format == CLUSTER_TRACE_COLUMNS && !lay->col[CLUSTER_TCOL_SUBMIT][0])
        memcpy(lay->col[CLUSTER_TCOL_SUBMIT], lay->col[CLUSTER_TCOL_START],
               sizeof lay->col[0]);
    return 0;
}

int parse_cluster_trace(loader *ld, xmlNode *n, scn_scenario *s)
{
    cluster_trace_layout lay;
    int rc = layout_of(ld, n, &lay);
    if (rc)
        return rc;
    char file[256];
    copy_attr(n, "file", file, sizeof file);
    const char *slash = strrchr(ld->display_name, '/');
    if (file[0] == '/' || !slash)
        snprintf(s->cluster_trace_path, sizeof s->cluster_trace_path, "%s", file);
    else
        snprintf(s->cluster_trace_path, sizeof s->cluster_trace_path, "%.*s/%s",
                 (int)(slash - ld->display_name), ld->display_name, file);
    char *text = NULL;
    size_t len = 0;
    rc = read_whole(ld, n, s->cluster_trace_path, &text, &len);
    if (rc)
        return rc;
    uint32_t count = 0, *min = NULL;
    cluster_trace_stats st = {0};
    const char *path = s->cluster_trace_path;
    if (lay.format == CLUSTER_TRACE_DCSIM)
        rc = cluster_trace_parse_min(text, len, path, s->cluster_jobs.gpus, &s->cluster_trace,
                                     &min, &count, ld->err);
    else if (lay.format == CLUSTER_TRACE_PHILLY)
        rc = read_philly(ld, n, path, text, s->cluster_jobs.gpus, &s->cluster_trace, &count, &st);
    else
        rc = cluster_trace_import_min(text, len, path, &lay, s->cluster_jobs.gpus,
                                      &s->cluster_trace, &min, &count, &st, ld->err);
    free(text);
    if (!rc && min) { /* the min GPUs after the jobs, in the one block the scenario owns */
        cluster_job_spec *v = realloc(s->cluster_trace, count * (sizeof *v + sizeof *min));
        if (!v)
            rc = node_error(ld, n, "file", "out of memory");
        else {
            s->cluster_trace = v;
            memcpy(v + count, min, count * sizeof *min);
            s->cluster_jobs.min_gpus = (const uint32_t *)(v + count);
        }
    }
    free(min);
    s->cluster_jobs.jobs = s->cluster_trace;
    s->cluster_jobs.n_jobs = count;
    if (!rc && lay.format != CLUSTER_TRACE_DCSIM) {
        char buf[256];
        snprintf(buf, sizeof buf, "trace (%s): %u of %u jobs kept (skipped: %u without GPUs, %u "
                 "unfinished, %u under 1 s or over ten years, %u larger than the cluster); "
                 "times shifted by -%.0f s", cluster_trace_format_name(lay.format), st.kept,
                 st.rows, st.no_gpus, st.unfinished, st.bad_duration, st.too_large, st.origin_s);
        cluster_note(s, buf);
    }
    return rc;
}
