/* fuzz_trace.c - fuzz target for the cluster job-trace readers: the strict
 * dcsim layout (cluster_trace_parse) and the published layouts
 * (cluster_trace_import: helios, pai-2020 without a header line, and named
 * columns with task merging), models/cluster_trace.c and cluster_import.c.
 *
 * Input: byte 0 picks the reader, byte 1 the cluster's GPUs (1 to 256), the
 * rest is the file's text. Checked on every input: a success gives at
 * least one job, every job finite with 1 <= GPUs <= the cluster's (or, in
 * the strict layout's elastic jobs, a min_gpus from 1 to both; the same
 * text through cluster_trace_parse, which has no min_gpus to return,
 * succeeds only when every job fits), a
 * duration above 0 (imported: at least CLUSTER_MIN_DURATION_S), submit
 * times non-decreasing from 0 or later (imported: the first at exactly 0),
 * and for an import the skip counts add up to the rows; a failure leaves
 * no array and a message.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    int reader = data[0] % 4;
    uint32_t max_gpus = 1u + data[1];
    const char *text = (const char *)data + 2;
    size_t len = size - 2;
    cluster_job_spec *v = NULL;
    uint32_t n = 0, *min = NULL;
    cluster_trace_stats st = {0};
    sim_error err;
    sim_error_clear(&err);
    int rc;
    if (reader == 0) {
        rc = cluster_trace_parse_min(text, len, "f.csv", max_gpus, &v, &min, &n, &err);
        cluster_job_spec *rigid = NULL;
        uint32_t n_rigid = 0;
        sim_error rigid_err;
        sim_error_clear(&rigid_err);
        if (!cluster_trace_parse(text, len, "f.csv", max_gpus, &rigid, &n_rigid, &rigid_err)) {
            if (rc || n_rigid != n)
                abort(); /* the rigid reader accepts no more than the elastic one */
            for (uint32_t i = 0; i < n_rigid; i++)
                if (rigid[i].gpus < 1 || rigid[i].gpus > max_gpus)
                    abort();
            free(rigid);
        } else if (rigid || !rigid_err.msg[0])
            abort();
    } else {
        cluster_trace_layout lay;
        static const char *const formats[] = {"helios", "pai-2020", "columns"};
        if (cluster_trace_layout_init(&lay, formats[reader - 1]))
            abort();
        if (reader == 3) {
            strcpy(lay.col[CLUSTER_TCOL_SUBMIT], "s");
            strcpy(lay.col[CLUSTER_TCOL_GPUS], "g");
            strcpy(lay.col[CLUSTER_TCOL_START], "a");
            strcpy(lay.col[CLUSTER_TCOL_END], "b");
            strcpy(lay.col[CLUSTER_TCOL_JOB], "j");
            strcpy(lay.col[CLUSTER_TCOL_PRIORITY], "p");
            lay.gpu_scale = 0.5;
        }
        rc = cluster_trace_import(text, len, "f.csv", &lay, max_gpus, &v, &n, &st, &err);
    }
    if (rc) {
        if (v || min || !err.msg[0])
            abort(); /* a failure: no array, a reason */
        return 0;
    }
    if (!v || n == 0)
        abort();
    double last = reader ? 0 : -1;
    for (uint32_t i = 0; i < n; i++) {
        const cluster_job_spec *j = &v[i];
        if (!isfinite(j->submit_s) || !isfinite(j->duration_s) || j->submit_s < last ||
            j->gpus < 1 || !(j->duration_s > 0))
            abort();
        uint32_t fits = min && min[i] ? min[i] : j->gpus; /* an elastic job's least */
        if (fits < 1 || fits > max_gpus || fits > j->gpus)
            abort();
        if (reader && j->duration_s < CLUSTER_MIN_DURATION_S)
            abort();
        last = j->submit_s;
    }
    if (reader && (v[0].submit_s != 0 || st.kept != n ||
                   st.kept + st.no_gpus + st.unfinished + st.bad_duration + st.too_large !=
                       st.rows))
        abort();
    free(v);
    free(min);
    return 0;
}
