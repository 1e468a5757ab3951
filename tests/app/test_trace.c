/* test_trace.c - the HDF5 trace read back with the HDF5 C API: layout,
 * values, units on every dataset, byte-identical reruns, and nothing left
 * behind by an aborted write. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>

#include "check.h"
#include "scenario.h"
#include "summary.h"
#include "h5util.h"
#include "trace.h"

static char tmpdir[256];

static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        if (e->d_name[0] != '.')
            n++;
    if (d)
        closedir(d);
    return n;
}

typedef struct counts {
    size_t events, segments;
} counts;

static int count_event(void *ctx, const campaign_event *ev, sim_error *err)
{
    (void)ev;
    (void)err;
    ((counts *)ctx)->events++;
    return 0;
}

static int count_segment(void *ctx, const campaign_segment *seg, sim_error *err)
{
    (void)seg;
    (void)err;
    ((counts *)ctx)->segments++;
    return 0;
}

/* run the default scenario into path; returns the result */
static campaign_result write_trace(const char *path, scn_scenario *scn, run_summary *sum)
{
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(scn_load(NULL, NULL, 0, scn, &err), 0);
    trace_writer *tw = NULL;
    CHECK_INT_EQ(trace_open(path, NULL, 0, &tw, &err), 0);
    campaign_sink sink = trace_campaign_sink(tw);
    run_plan plan;
    CHECK_INT_EQ(run_plan_prepare(scn, 1, 0, &plan, &err), 0);
    campaign_result res;
    CHECK_INT_EQ(campaign_run(&plan.campaign, &sink, NULL, NULL, &res, &err), 0);
    summary_build(&plan, &res, sum);
    run_plan_free(&plan);
    CHECK_INT_EQ(trace_commit(tw, scn, &res, sum, &err), 0);
    return res;
}

static char *read_string_attr(hid_t obj, const char *name)
{
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    if (a < 0)
        return NULL;
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8); /* HDF5 will not convert between character sets */
    char *value = NULL;
    char *copy = NULL;
    if (H5Aread(a, t, &value) >= 0 && value) {
        copy = strdup(value);
        H5free_memory(value);
    }
    H5Tclose(t);
    H5Aclose(a);
    return copy;
}

static int datasets_without_units;
static int datasets_seen;

static herr_t check_units(hid_t obj, const char *name, const H5O_info_t *info, void *op)
{
    (void)op;
    if (info->type != H5O_TYPE_DATASET)
        return 0;
    datasets_seen++;
    hid_t d = H5Dopen2(obj, name, H5P_DEFAULT);
    if (H5Aexists(d, "units") <= 0) {
        datasets_without_units++;
        fprintf(stderr, "dataset %s has no units attribute\n", name);
    }
    H5Dclose(d);
    return 0;
}

static void test_round_trip(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/run.h5", tmpdir);
    scn_scenario scn;
    run_summary sum;
    campaign_result res = write_trace(path, &scn, &sum);
    CHECK_INT_EQ(count_files(tmpdir), 1); /* the final file only: no temporary left */

    /* how many rows the tables must have: run again into a counting sink */
    counts c = {0};
    campaign_sink sink = {.ctx = &c, .event = count_event, .segment = count_segment};
    campaign_result again;
    sim_error err;
    sim_error_clear(&err);
    /* the run layer's plan holds the campaign with the step tier's iteration */
    run_plan plan;
    CHECK_INT_EQ(run_plan_prepare(&scn, 1, 0, &plan, &err), 0);
    CHECK_INT_EQ(campaign_run(&plan.campaign, &sink, NULL, NULL, &again, &err), 0);
    run_plan_free(&plan);
    CHECK_INT_EQ(c.events, 2 + res.checkpoints + res.failures + res.restarts);

    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(f >= 0);
    char *digest = read_string_attr(f, "event_digest");
    CHECK_STR_EQ(digest, sum.event_digest);
    free(digest);
    char *version = read_string_attr(f, "dcsim_version");
    CHECK(version && strlen(version) > 0);
    free(version);
    uint64_t seed = 0;
    hid_t a = H5Aopen(f, "seed", H5P_DEFAULT);
    H5Aread(a, H5T_NATIVE_UINT64, &seed);
    H5Aclose(a);
    CHECK_INT_EQ(seed, 42);

    double ttt = 0;
    hid_t d = H5Dopen2(f, "/summary/time_to_train_s", H5P_DEFAULT);
    H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, &ttt);
    char *units = read_string_attr(d, "units");
    CHECK_STR_EQ(units, "s");
    free(units);
    H5Dclose(d);
    CHECK(ttt == res.time_to_train_s);
    int64_t failures = -1;
    d = H5Dopen2(f, "/summary/failures", H5P_DEFAULT);
    H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &failures);
    H5Dclose(d);
    CHECK_INT_EQ(failures, res.failures);

    /* the event table: row count and the failure rows */
    d = H5Dopen2(f, "/campaign/events", H5P_DEFAULT);
    hid_t space = H5Dget_space(d);
    hsize_t n = 0;
    H5Sget_simple_extent_dims(space, &n, NULL);
    CHECK_INT_EQ(n, c.events);
    hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof(campaign_event));
    H5Tinsert(mt, "time_s", HOFFSET(campaign_event, time_s), H5T_NATIVE_DOUBLE);
    H5Tinsert(mt, "kind", HOFFSET(campaign_event, kind), H5T_NATIVE_INT32);
    H5Tinsert(mt, "lost_work_s", HOFFSET(campaign_event, lost_work_s), H5T_NATIVE_DOUBLE);
    campaign_event *rows = calloc(n, sizeof *rows);
    CHECK(H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) >= 0);
    uint64_t n_fail = 0;
    double lost = 0, prev_t = 0;
    int ordered = 1;
    for (hsize_t i = 0; i < n; i++) {
        if (rows[i].kind == CAMPAIGN_EVENT_FAILURE) {
            n_fail++;
            lost += rows[i].lost_work_s;
        }
        ordered &= rows[i].time_s >= prev_t;
        prev_t = rows[i].time_s;
    }
    CHECK(ordered);
    CHECK_INT_EQ(n_fail, res.failures);
    CHECK_REL(lost, res.rework_s, 1e-9);
    CHECK_INT_EQ(rows[0].kind, CAMPAIGN_EVENT_JOB_START);
    CHECK_INT_EQ(rows[n - 1].kind, CAMPAIGN_EVENT_JOB_DONE);
    CHECK(rows[n - 1].time_s == res.time_to_train_s);
    free(rows);
    H5Tclose(mt);
    H5Sclose(space);
    H5Dclose(d);

    /* the resolved scenario */
    d = H5Dopen2(f, "/scenario", H5P_DEFAULT);
    hid_t st = H5Tcopy(H5T_C_S1);
    H5Tset_size(st, H5T_VARIABLE);
    H5Tset_cset(st, H5T_CSET_UTF8);
    char *xml = NULL;
    H5Dread(d, st, H5S_ALL, H5S_ALL, H5P_DEFAULT, &xml);
    CHECK_STR_EQ(xml, scn.resolved_xml);
    H5free_memory(xml);
    H5Tclose(st);
    H5Dclose(d);

    /* a units attribute on every dataset */
    H5Ovisit2(f, H5_INDEX_NAME, H5_ITER_NATIVE, check_units, NULL, H5O_INFO_BASIC);
    CHECK(datasets_seen >= 3 + (int)sum.n_metrics);
    CHECK_INT_EQ(datasets_without_units, 0);
    H5Fclose(f);
    scn_scenario_free(&scn);
}

static void test_byte_identical(void)
{
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/a.h5", tmpdir);
    snprintf(b, sizeof b, "%s/b.h5", tmpdir);
    scn_scenario scn;
    run_summary sum;
    write_trace(a, &scn, &sum);
    scn_scenario_free(&scn);
    write_trace(b, &scn, &sum);
    scn_scenario_free(&scn);
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb;
    for (int ca = 0, cb = 0; same && ca != EOF;) {
        ca = fgetc(fa);
        cb = fgetc(fb);
        same = ca == cb;
    }
    CHECK(same);
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
}

static void test_abort_leaves_nothing(void)
{
    char dir[300], path[400];
    snprintf(dir, sizeof dir, "%s/abort", tmpdir);
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/never.h5", dir);
    trace_writer *tw = NULL;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(trace_open(path, NULL, 0, &tw, &err), 0);
    CHECK_INT_EQ(count_files(dir), 1); /* the temporary */
    trace_abort(tw);
    CHECK_INT_EQ(count_files(dir), 0);
    trace_abort(NULL);
}

int main(void)
{
    h5_quiet();
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dcsim-test-trace-XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    test_round_trip();
    test_byte_identical();
    test_abort_leaves_nothing();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return check_report();
}
