/* trace.c - HDF5 trace writer (see trace.h and docs/trace-format.md). */
#include "trace.h"

#include "energyrun.h"
#include "h5columns.h"
#include "h5util.h"
#include "outpath.h"
#include "packet_trace.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>


/* 2: every table a compound dataset with a unit per field (1: /replicas,
 * /step/stages, /step/tasks, /step/flows, /energy/hourly were 2-D float64
 * with a `columns` attribute) */
#define TRACE_FORMAT_VERSION 2
/* `dcsim compare -o` tables (/compare, /cluster_sweep, /serve_sweep): 2, a
 * compound with a leading "variant" text field (1: 2-D float64 with
 * `columns` and `rows` attributes) */
#define TRACE_TABLE_LAYOUT_VERSION "2"
#define CHUNK_ROWS 4096
#define DEFLATE_LEVEL 4

/* a growing compound table, buffered CHUNK_ROWS rows at a time */
typedef struct table {
    hid_t dset;
    hid_t type;
    size_t row_size;
    unsigned char *buf;
    size_t n_buf;
    hsize_t n_rows;
    const char *name;
    int sys_errno;   /* why a write failed, from HDF5's error stack (0: unknown) */
} table;

struct trace_writer {
    outpath out;
    hid_t file;
    table events;
    table timeline;
    table parts; /* /campaign/parts: created at the first part out, or at the commit of a
                    run with repairable parts (dset 0 until then) */
};

void trace_hdf5_startup(void)
{
    H5dont_atexit();
    h5_quiet();
}

static int io_error(sim_error *err, const char *path, const char *what)
{
    return h5_write_error(err, path, what, 0);
}

static hid_t make_enum(const char *(*name_of)(int), int count)
{
    hid_t t = H5Tenum_create(H5T_NATIVE_INT32);
    for (int v = 0; v < count; v++) {
        int32_t value = v;
        H5Tenum_insert(t, name_of(v), &value);
    }
    return t;
}

static hid_t event_type(void)
{
    hid_t kind = make_enum(campaign_event_kind_name, 7);
    hid_t state = make_enum(campaign_state_name, 5);
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(campaign_event));
    H5Tinsert(t, "time_s", HOFFSET(campaign_event, time_s), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "kind", HOFFSET(campaign_event, kind), kind);
    H5Tinsert(t, "state", HOFFSET(campaign_event, state), state);
    H5Tinsert(t, "gpu", HOFFSET(campaign_event, gpu), H5T_NATIVE_INT64);
    H5Tinsert(t, "node", HOFFSET(campaign_event, node), H5T_NATIVE_INT64);
    H5Tinsert(t, "part", HOFFSET(campaign_event, part), H5T_NATIVE_INT64);
    H5Tinsert(t, "cause", HOFFSET(campaign_event, cause), H5T_NATIVE_INT32);
    H5Tinsert(t, "iteration", HOFFSET(campaign_event, iteration), H5T_NATIVE_INT64);
    H5Tinsert(t, "lost_work_s", HOFFSET(campaign_event, lost_work_s), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "duration_s", HOFFSET(campaign_event, duration_s), H5T_NATIVE_DOUBLE);
    H5Tclose(kind);
    H5Tclose(state);
    return t;
}

static const char *const event_units[] = {"s", "-", "-", "-", "-", "-", "-", "1", "s", "s"};

static hid_t segment_type(void)
{
    hid_t state = make_enum(campaign_state_name, 5);
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(campaign_segment));
    H5Tinsert(t, "start_s", HOFFSET(campaign_segment, start_s), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "end_s", HOFFSET(campaign_segment, end_s), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "state", HOFFSET(campaign_segment, state), state);
    H5Tinsert(t, "was_interrupted", HOFFSET(campaign_segment, was_interrupted),
              H5T_NATIVE_INT32);
    H5Tinsert(t, "iteration_start", HOFFSET(campaign_segment, iteration_start),
              H5T_NATIVE_INT64);
    H5Tinsert(t, "iteration_end", HOFFSET(campaign_segment, iteration_end), H5T_NATIVE_INT64);
    H5Tclose(state);
    return t;
}

static const char *const segment_units[] = {"s", "s", "-", "1", "1", "1"};

static const char *part_action_name(int a)
{
    static const char *const names[] = {"down", "slow", "repaired", "flap_down", "flap_up"};
    return a >= 0 && a < 5 ? names[a] : "?";
}

static hid_t part_type(void)
{
    hid_t action = make_enum(part_action_name, 5);
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(campaign_part_event));
    H5Tinsert(t, "time_s", HOFFSET(campaign_part_event, time_s), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "action", HOFFSET(campaign_part_event, action), action);
    H5Tinsert(t, "cause", HOFFSET(campaign_part_event, cause), H5T_NATIVE_INT32);
    H5Tinsert(t, "part", HOFFSET(campaign_part_event, part), H5T_NATIVE_INT64);
    H5Tinsert(t, "fabric_id", HOFFSET(campaign_part_event, fabric_id), H5T_NATIVE_INT64);
    H5Tinsert(t, "speed", HOFFSET(campaign_part_event, speed), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "job_speed", HOFFSET(campaign_part_event, job_speed), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "parts_out", HOFFSET(campaign_part_event, parts_out), H5T_NATIVE_INT64);
    H5Tclose(action);
    return t;
}

static const char *const part_units[] = {"s", "-", "-", "-", "-", "1", "1", "1"};

static int table_create(table *tb, hid_t group, const char *name, hid_t type, size_t row_size,
                        const char *const *units, size_t n_units, const char *description)
{
    hsize_t dims[1] = {0}, maxdims[1] = {H5S_UNLIMITED}, chunk[1] = {CHUNK_ROWS};
    tb->name = name;
    tb->type = type;
    tb->row_size = row_size;
    tb->buf = malloc(CHUNK_ROWS * row_size);
    hid_t space = H5Screate_simple(1, dims, maxdims);
    hid_t dcpl = h5_untimed(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 1, chunk);
    H5Pset_shuffle(dcpl);
    H5Pset_deflate(dcpl, DEFLATE_LEVEL);
    tb->dset = H5Dcreate2(group, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    H5Sclose(space);
    if (tb->dset < 0 || !tb->buf)
        return -1;
    if (h5_attr_texts(tb->dset, "units", units, n_units) ||
        h5_attr_text(tb->dset, "description", description))
        return -1;
    return 0;
}

static int table_flush(table *tb)
{
    if (tb->n_buf == 0)
        return 0;
    hsize_t start[1] = {tb->n_rows}, count[1] = {tb->n_buf}, total[1] = {tb->n_rows + tb->n_buf};
    if (H5Dset_extent(tb->dset, total) < 0) {
        tb->sys_errno = h5_errno();
        return -1;
    }
    hid_t fspace = H5Dget_space(tb->dset);
    hid_t mspace = H5Screate_simple(1, count, NULL);
    int rc = fspace < 0 || H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
             H5Dwrite(tb->dset, tb->type, mspace, fspace, H5P_DEFAULT, tb->buf) < 0;
    if (rc)
        tb->sys_errno = h5_errno();
    H5Sclose(mspace);
    H5Sclose(fspace);
    if (rc)
        return -1;
    tb->n_rows += tb->n_buf;
    tb->n_buf = 0;
    return 0;
}

static int table_append(table *tb, const void *row)
{
    memcpy(tb->buf + tb->n_buf * tb->row_size, row, tb->row_size);
    if (++tb->n_buf == CHUNK_ROWS)
        return table_flush(tb);
    return 0;
}

static void table_close(table *tb)
{
    if (tb->dset > 0)
        H5Dclose(tb->dset);
    if (tb->type > 0)
        H5Tclose(tb->type);
    free(tb->buf);
    memset(tb, 0, sizeof *tb);
}

int trace_open(const char *path, const char *const *inputs, size_t n_inputs, trace_writer **out,
               sim_error *err)
{
    *out = NULL;
    h5_quiet(); /* per thread in a thread-safe HDF5 */
    trace_writer *tw = calloc(1, sizeof *tw);
    if (!tw)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
    if (outpath_init(&tw->out, path, "the trace", inputs, n_inputs, err)) {
        free(tw);
        return err->code;
    }
    outpath_remove_stale(&tw->out);
    tw->file = H5Fcreate(tw->out.tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (tw->file < 0) {
        h5_write_error(err, path, "H5Fcreate", h5_errno());
        outpath_discard(&tw->out);
        free(tw);
        return err->code;
    }
    hid_t campaign = h5_create_group(tw->file, "campaign");
    int rc = campaign < 0 ||
             table_create(&tw->events, campaign, "events", event_type(), sizeof(campaign_event),
                          event_units, 10,
                          "campaign events: job start, checkpoints, failures, restarts, job done") ||
             table_create(&tw->timeline, campaign, "timeline", segment_type(),
                          sizeof(campaign_segment), segment_units, 6,
                          "the job's state over time: compute, checkpoint, restart");
    if (campaign >= 0)
        H5Gclose(campaign);
    if (rc) {
        trace_abort(tw);
        return io_error(err, path, "creating /campaign");
    }
    *out = tw;
    return 0;
}

static int sink_event(void *ctx, const campaign_event *ev, sim_error *err)
{
    trace_writer *tw = ctx;
    if (table_append(&tw->events, ev))
        return h5_write_error(err, tw->out.path, "writing /campaign/events", tw->events.sys_errno);
    return 0;
}

static int sink_segment(void *ctx, const campaign_segment *seg, sim_error *err)
{
    trace_writer *tw = ctx;
    if (table_append(&tw->timeline, seg))
        return h5_write_error(err, tw->out.path, "writing /campaign/timeline",
                            tw->timeline.sys_errno);
    return 0;
}

/* /campaign/parts, once (0, or -1 with sys_errno set) */
static int parts_table_open(trace_writer *tw)
{
    if (tw->parts.dset > 0)
        return 0;
    hid_t g = H5Gopen2(tw->file, "campaign", H5P_DEFAULT);
    int rc = g < 0 || table_create(&tw->parts, g, "parts", part_type(),
                                   sizeof(campaign_part_event), part_units, 8,
                                   "network parts of a degraded fabric going down, slow or "
                                   "repaired, with the job's speed after each change");
    if (g >= 0)
        H5Gclose(g);
    if (rc && !tw->parts.sys_errno)
        tw->parts.sys_errno = h5_errno();
    return rc ? -1 : 0;
}

static int sink_part(void *ctx, const campaign_part_event *ev, sim_error *err)
{
    trace_writer *tw = ctx;
    if (parts_table_open(tw) || table_append(&tw->parts, ev))
        return h5_write_error(err, tw->out.path, "writing /campaign/parts", tw->parts.sys_errno);
    return 0;
}

campaign_sink trace_campaign_sink(trace_writer *tw)
{
    return (campaign_sink){.ctx = tw, .event = sink_event, .segment = sink_segment, .part = sink_part};
}

static int put_doubles(hid_t g, const char *name, const double *v, int rank, const hsize_t *dims,
                       const char *units, const char *description)
{
    hid_t s = H5Screate_simple(rank, dims, NULL), dcpl = h5_untimed(H5P_DATASET_CREATE);
    hid_t d = H5Dcreate2(g, name, H5T_NATIVE_DOUBLE, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    int rc = d < 0 || H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0 ||
             h5_attr_text(d, "units", units) ||
             h5_attr_text(d, "description", description);
    if (d >= 0)
        H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(s);
    return rc;
}

/* /step/link_tier: uint8 per link, its tier as an index into the tiers attribute */
static int put_link_tiers(hid_t g, const uint8_t *tier, uint32_t n_links)
{
    hsize_t n = n_links;
    hid_t s = H5Screate_simple(1, &n, NULL), dcpl = h5_untimed(H5P_DATASET_CREATE);
    hid_t d = H5Dcreate2(g, "link_tier", H5T_STD_U8LE, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    int rc = d < 0 ||
             (n_links && H5Dwrite(d, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, tier) < 0) ||
             h5_attr_text(d, "units", "-") ||
             h5_attr_text(d, "description", "every directed link's tier, by link id: an "
                                               "index into /step's tiers attribute");
    if (d >= 0)
        H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(s);
    return rc;
}

/* /step/tasks: the slowest replica's pipeline schedule, one row per forward
 * or backward of one micro-batch on one stage (and virtual chunk) */
static int write_step_tasks(hid_t g, const step_profile *p)
{
    enum { COLS = 6 };
    static const h5_column columns[COLS] = {
        H5COL_OF("stage", "1", H5COL_U32),    H5COL_OF("chunk", "1", H5COL_U32),
        H5COL_OF("microbatch", "1", H5COL_U32), H5COL_OF("backward", "1", H5COL_U8),
        H5COL_OF("start_s", "s", H5COL_F64),  H5COL_OF("end_s", "s", H5COL_F64)};
    size_t n = p->n_tasks;
    double *rows = malloc((n ? n : 1) * COLS * sizeof *rows);
    if (!rows)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const sched_task *t = &p->tasks[i];
        double *r = rows + i * COLS;
        r[0] = t->stage;
        r[1] = t->chunk;
        r[2] = t->microbatch;
        r[3] = t->backward;
        r[4] = t->start_s;
        r[5] = t->end_s;
    }
    int rc = h5_put_columns(g, "tasks", columns, COLS, rows, n, NULL, NULL,
                        "the slowest replica's pipeline schedule: every forward (backward 0) "
                        "and backward (1) of every micro-batch on every stage and virtual "
                        "chunk, with its start and end in the iteration; stage by stage in "
                        "the order each stage runs them");
    free(rows);
    return rc;
}

int trace_write_replicas(trace_writer *tw, const campaign_result *r, unsigned n, sim_error *err)
{
    enum { COLS = 8 };
    static const h5_column columns[COLS] = {
        H5COL_OF("time_to_train_s", "s", H5COL_F64), H5COL_OF("ettr_frac", "1", H5COL_F64),
        H5COL_OF("failures", "1", H5COL_U64),        H5COL_OF("restarts", "1", H5COL_U64),
        H5COL_OF("rework_s", "s", H5COL_F64),        H5COL_OF("restart_time_s", "s", H5COL_F64),
        H5COL_OF("checkpoint_time_s", "s", H5COL_F64), H5COL_OF("checkpoints", "1", H5COL_U64)};
    double *rows = malloc((size_t)n * COLS * sizeof *rows);
    uint64_t *digests = malloc((size_t)n * sizeof *digests);
    int rc = !rows || !digests;
    for (unsigned i = 0; !rc && i < n; i++) {
        double *x = rows + (size_t)i * COLS;
        x[0] = r[i].time_to_train_s;
        x[1] = r[i].ettr_frac;
        x[2] = (double)r[i].failures;
        x[3] = (double)r[i].restarts;
        x[4] = r[i].rework_s;
        x[5] = r[i].restart_time_s;
        x[6] = r[i].checkpoint_time_s;
        x[7] = (double)r[i].checkpoints;
        digests[i] = r[i].event_digest;
    }
    hsize_t nd = n;
    if (!rc)
        rc = h5_put_columns(tw->file, "replicas", columns, COLS, rows, n, NULL, NULL,
                            "one row per Monte Carlo replica (replica 0 is the run in /campaign)");
    if (!rc) {
        hid_t s = H5Screate_simple(1, &nd, NULL), dcpl = h5_untimed(H5P_DATASET_CREATE);
        hid_t d = H5Dcreate2(tw->file, "replica_digests", H5T_NATIVE_UINT64, s, H5P_DEFAULT, dcpl,
                             H5P_DEFAULT);
        rc = d < 0 || H5Dwrite(d, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, digests) < 0 ||
             h5_attr_text(d, "units", "-") ||
             h5_attr_text(d, "description", "each replica's event digest");
        if (d >= 0)
            H5Dclose(d);
        H5Pclose(dcpl);
        H5Sclose(s);
    }
    free(rows);
    free(digests);
    return rc ? io_error(err, tw->out.path, "writing /replicas") : 0;
}

#define STEP_STAGE_COLUMNS (STEP_PART_COUNT + 3)

int trace_write_step(trace_writer *tw, const step_profile *p, sim_error *err)
{
    hid_t g = h5_create_group(tw->file, "step");
    if (g < 0)
        return io_error(err, tw->out.path, "creating /step");
    uint32_t critical = p->critical_stage;
    int rc = h5_attr_scalar(g, "iteration_s", H5T_NATIVE_DOUBLE, &p->iteration_s) ||
             h5_attr_scalar(g, "tokens_per_s", H5T_NATIVE_DOUBLE, &p->tokens_per_s) ||
             h5_attr_scalar(g, "model_flops_per_gpu_per_s", H5T_NATIVE_DOUBLE,
                             &p->model_flops_per_gpu_s) ||
             h5_attr_scalar(g, "mfu", H5T_NATIVE_DOUBLE, &p->mfu) ||
             h5_attr_scalar(g, "hfu", H5T_NATIVE_DOUBLE, &p->hfu) ||
             h5_attr_scalar(g, "critical_stage", H5T_NATIVE_UINT32, &critical);
    /* stages x (parts, end, compute fraction, communication fraction) */
    size_t n = (size_t)p->n_stages * STEP_STAGE_COLUMNS;
    double *rows = malloc((n ? n : 1) * sizeof *rows);
    h5_column columns[STEP_STAGE_COLUMNS];
    char names[STEP_PART_COUNT][24];
    for (int k = 0; k < STEP_PART_COUNT; k++) {
        snprintf(names[k], sizeof names[k], "%s_s", step_part_name(k));
        columns[k] = (h5_column)H5COL_OF(names[k], "s", H5COL_F64);
    }
    columns[STEP_PART_COUNT] = (h5_column)H5COL_OF("end_s", "s", H5COL_F64);
    columns[STEP_PART_COUNT + 1] = (h5_column)H5COL_OF("compute_fraction", "1", H5COL_F64);
    columns[STEP_PART_COUNT + 2] = (h5_column)H5COL_OF("comm_fraction", "1", H5COL_F64);
    if (!rows)
        rc = 1;
    for (unsigned s = 0; !rc && s < p->n_stages; s++) {
        double *r = rows + (size_t)s * STEP_STAGE_COLUMNS;
        for (int k = 0; k < STEP_PART_COUNT; k++)
            r[k] = p->stage[s].part_s[k];
        r[STEP_PART_COUNT] = p->stage[s].end_s;
        r[STEP_PART_COUNT + 1] = p->stage[s].compute_fraction;
        r[STEP_PART_COUNT + 2] = p->stage[s].comm_fraction;
    }
    if (!rc)
        rc = h5_put_columns(g, "stages", columns, STEP_STAGE_COLUMNS, rows, p->n_stages, NULL,
                            NULL,
                            "per pipeline stage: the slowest replica's time in each part, the "
                            "stage's end, and its compute and exposed-communication fractions");
    free(rows);
    hsize_t nl = p->n_links, nt = STEP_TIERS;
    static const char *const tiers[STEP_TIERS] = {"scale-up", "host-leaf", "leaf-spine",
                                                  "spine-core/global"};
    if (!rc)
        rc = put_doubles(g, "link_bytes", p->link_bytes, 1, &nl, "B",
                         "bytes per iteration on every directed link, by link id");
    if (!rc)
        rc = put_doubles(g, "tier_bytes", p->tier_bytes, 1, &nt, "B",
                         "bytes per iteration per fabric tier");
    if (!rc)
        rc = put_doubles(g, "tier_peak_utilisation", p->tier_peak_utilisation, 1, &nt, "1",
                         "busiest link of each tier: bytes / (capacity x iteration time)");
    if (!rc)
        rc = h5_attr_texts(g, "tiers", tiers, STEP_TIERS);
    if (!rc)
        rc = put_doubles(g, "link_utilisation", p->link_utilisation, 1, &nl, "1",
                         "every directed link's mean utilisation over the iteration: bytes / "
                         "(capacity x iteration time), by link id");
    if (!rc)
        rc = put_link_tiers(g, p->link_tier, p->n_links);
    if (!rc)
        rc = write_step_tasks(g, p);
    H5Gclose(g);
    return rc ? io_error(err, tw->out.path, "writing /step") : 0;
}

/* /step/flows: one row per logged flow of the concurrent iteration, in
 * start order; -1 where a column does not apply */
static int write_step_flows(hid_t g, const step_profile *p)
{
    enum { COLS = 13 + STEP_TIERS };
    static const h5_column columns[COLS] = {
        H5COL_ENUM_OF("kind", step_flow_kind_name, STEP_FLOW_KINDS),
        H5COL_OF("replica", "1", H5COL_I32),
        H5COL_OF("stage", "1", H5COL_U32),
        H5COL_OF("chunk", "1", H5COL_U32),
        H5COL_OF("index", "1", H5COL_U32),
        H5COL_OF("backward", "1", H5COL_U8),
        H5COL_OF("phase", "1", H5COL_U32),
        H5COL_OF("src", "1", H5COL_U32),
        H5COL_OF("dst", "1", H5COL_I32),
        H5COL_OF("connections", "1", H5COL_U32),
        H5COL_OF("bytes", "B", H5COL_F64),
        H5COL_OF("scale-up_bytes", "B", H5COL_F64),
        H5COL_OF("host-leaf_bytes", "B", H5COL_F64),
        H5COL_OF("leaf-spine_bytes", "B", H5COL_F64),
        H5COL_OF("spine-core/global_bytes", "B", H5COL_F64),
        H5COL_OF("start_s", "s", H5COL_F64),
        H5COL_OF("end_s", "s", H5COL_F64)};
    size_t n = p->n_flows;
    double *rows = malloc((n ? n : 1) * COLS * sizeof *rows);
    if (!rows)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const step_flow *f = &p->flows[i];
        double *r = rows + i * COLS;
        r[0] = f->kind;
        r[1] = f->replica == UINT32_MAX ? -1 : (double)f->replica;
        r[2] = f->stage;
        r[3] = f->chunk;
        r[4] = f->index;
        r[5] = f->backward;
        r[6] = f->phase;
        r[7] = f->src;
        r[8] = f->dst == UINT32_MAX ? -1 : (double)f->dst;
        r[9] = f->n_conn;
        r[10] = f->bytes;
        for (int t = 0; t < STEP_TIERS; t++)
            r[11 + t] = f->tier_bytes[t];
        r[11 + STEP_TIERS] = f->start_s;
        r[12 + STEP_TIERS] = f->end_s;
    }
    int rc = h5_put_columns(
        g, "flows", columns, COLS, rows, n, NULL, NULL,
        "the concurrent iteration's flows in start order: kind (pp: a PP send, dp: a DP "
        "reduction, gather: a parameter gather, tp, cp, ep: a TP, CP or EP collective across "
        "scale-up domains), replica (PP, TP, CP, EP; -1 all), stage and chunk (PP: the sender's), "
        "index (PP, TP, CP, EP: micro-batch; else bucket), backward (PP gradient send; TP, CP, EP "
        "in a backward), the plan's phase, src and dst GPU of its first connection (dst -1: src "
        "is a link, an in-network reduction), its connections, bytes, bytes put on each tier's "
        "links, start and end");
    free(rows);
    if (!rc) {
        hid_t d = H5Dopen2(g, "flows", H5P_DEFAULT);
        uint64_t total = p->flows_total;
        uint32_t truncated = (uint32_t)p->flows_truncated;
        rc = d < 0 || h5_attr_scalar(d, "flows_total", H5T_NATIVE_UINT64, &total) ||
             h5_attr_scalar(d, "truncated", H5T_NATIVE_UINT32, &truncated);
        if (d >= 0)
            H5Dclose(d);
    }
    return rc;
}

int trace_write_packet(trace_writer *tw, const scn_scenario *scn, const step_profile *p,
                       const pkt_config *cfg, sim_error *err)
{
    fabric f;
    int rc = fabric_build(&scn->fabric, &f, err);
    if (rc)
        return rc;
    packet_trace_meta m = {"dcsim run", "step", NULL, scn->name, scn->source, scn->seed,
                           p->packet_digest, p->packet_events, p->packet_end_s, cfg,
                           "run"};
    const char *failed = packet_trace_put(tw->file, &f.g, p->packet_series, &m);
    fabric_free(&f);
    return failed ? io_error(err, tw->out.path, failed) : 0;
}

int trace_write_step_flows(trace_writer *tw, const step_profile *p, sim_error *err)
{
    hid_t g = H5Gopen2(tw->file, "step", H5P_DEFAULT);
    if (g < 0)
        return io_error(err, tw->out.path, "writing /step/flows");
    int rc = write_step_flows(g, p);
    H5Gclose(g);
    return rc ? io_error(err, tw->out.path, "writing /step/flows") : 0;
}

static int write_summary(hid_t file, const run_summary *sum)
{
    hid_t g = h5_create_group(file, "summary");
    if (g < 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; !rc && i < sum->n_metrics; i++) {
        const summary_metric *m = &sum->metrics[i];
        hid_t s = H5Screate(H5S_SCALAR), dcpl = h5_untimed(H5P_DATASET_CREATE);
        hid_t type = m->is_count ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE;
        hid_t d = H5Dcreate2(g, m->name, type, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        /* converted only for a count (a FLOP total is far beyond int64, and converting
         * it is undefined even unused) */
        int64_t count = m->is_count && fabs(m->value) < 9.2e18 ? (int64_t)m->value : 0;
        rc = d < 0 || H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                               m->is_count ? (const void *)&count : (const void *)&m->value) < 0 ||
             h5_attr_text(d, "units", m->unit) ||
             h5_attr_text(d, "description", m->description);
        if (d >= 0)
            H5Dclose(d);
        H5Pclose(dcpl);
        H5Sclose(s);
    }
    H5Gclose(g);
    return rc;
}

/* /campaign/events attribute "causes": the name of each cause index */
static int write_cause_names(hid_t file, const campaign_config *c)
{
    if (!c->n_causes)
        return 0;
    const char *names[CAMPAIGN_MAX_CAUSES];
    for (unsigned i = 0; i < c->n_causes; i++)
        names[i] = c->causes[i].name;
    hid_t d = H5Dopen2(file, "campaign/events", H5P_DEFAULT);
    int rc = d < 0 || h5_attr_texts(d, "causes", names, c->n_causes);
    if (d >= 0)
        H5Dclose(d);
    return rc;
}

static int write_scenario(hid_t file, const scn_scenario *scn)
{
    hid_t t = h5_string_type(), s = H5Screate(H5S_SCALAR), dcpl = h5_untimed(H5P_DATASET_CREATE);
    hid_t d = H5Dcreate2(file, "scenario", t, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    const char *text = scn->resolved_xml;
    int rc = d < 0 || H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, &text) < 0 ||
             h5_attr_text(d, "units", "-") ||
             h5_attr_text(d, "description",
                             "the scenario as simulated: XML after XInclude and --set overrides");
    if (d >= 0)
        H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(s);
    H5Tclose(t);
    return rc;
}

static int write_root(hid_t file, const scn_scenario *scn, const campaign_result *res,
                      const run_summary *sum)
{
    int32_t format = TRACE_FORMAT_VERSION;
    uint64_t seed = scn->seed, events = res->events_fired;
    h5_root root = {format, seed, sum->event_digest, events, scn->name, scn->source};
    return h5_put_root(file, &root);
}

int trace_commit(trace_writer *tw, const scn_scenario *scn, const campaign_result *res,
                 const run_summary *sum, sim_error *err)
{
    const char *failed = NULL;
    int sys_errno = 0;
    if (table_flush(&tw->events) || table_flush(&tw->timeline))
        failed = "writing /campaign";
    else if ((scn->has_degraded && parts_table_open(tw)) || table_flush(&tw->parts))
        failed = "writing /campaign/parts";
    else if (write_scenario(tw->file, scn))
        failed = "writing /scenario";
    else if (write_summary(tw->file, sum))
        failed = "writing /summary";
    else if (write_cause_names(tw->file, &scn->campaign))
        failed = "writing /campaign/events causes";
    else if (write_root(tw->file, scn, res, sum))
        failed = "writing the root attributes";
    sys_errno = tw->events.sys_errno     ? tw->events.sys_errno
                : tw->timeline.sys_errno ? tw->timeline.sys_errno
                                         : tw->parts.sys_errno;
    if (failed && !sys_errno)
        sys_errno = h5_errno();
    table_close(&tw->events);
    table_close(&tw->timeline);
    table_close(&tw->parts);
    if (h5_close_file(tw->file, &sys_errno) && !failed)
        failed = "closing the file";
    tw->file = 0;
    if (failed) {
        h5_write_error(err, tw->out.path, failed, sys_errno);
        trace_abort(tw);
        return err->code;
    }
    int rc = outpath_commit(&tw->out, 0, err);
    free(tw);
    return rc;
}

void trace_abort(trace_writer *tw)
{
    if (!tw)
        return;
    table_close(&tw->events);
    table_close(&tw->timeline);
    table_close(&tw->parts);
    h5_close_file(tw->file, NULL);
    outpath_discard(&tw->out);
    free(tw);
}

int trace_write_table(const char *path, const char *name, const char *description,
                      const char *const *columns, const char *const *units, size_t n_cols,
                      const char *const *rows, size_t n_rows, const double *values,
                      const trace_texts *texts, const char *const *inputs, size_t n_inputs,
                      sim_error *err)
{
    h5_quiet();
    outpath out;
    if (outpath_init(&out, path, "the table", inputs, n_inputs, err))
        return err->code;
    outpath_remove_stale(&out);
    hid_t f = H5Fcreate(out.tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0) {
        h5_write_error(err, path, "H5Fcreate", h5_errno());
        outpath_discard(&out);
        return err->code;
    }
    h5_column *cols = malloc((n_cols ? n_cols : 1) * sizeof *cols);
    int rc = !cols;
    for (size_t j = 0; !rc && j < n_cols; j++)
        cols[j] = (h5_column)H5COL_OF(columns[j], units[j], H5COL_F64);
    if (!rc)
        rc = h5_put_columns(f, name, cols, n_cols, values, n_rows, rows, "variant", description);
    free(cols);
    if (!rc) {
        hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
        rc = d < 0 || h5_attr_text(d, "layout_version", TRACE_TABLE_LAYOUT_VERSION);
        if (!rc && texts && texts->n)
            rc = h5_attr_texts(d, texts->name, texts->values, texts->n);
        if (d >= 0)
            H5Dclose(d);
    }
    int sys_errno = 0;
    if (h5_close_file(f, &sys_errno))
        rc = 1;
    if (rc) {
        outpath_discard(&out);
        return h5_write_error(err, path, "writing the table", sys_errno);
    }
    return outpath_commit(&out, 0, err);
}

int trace_write_energy(trace_writer *tw, const struct energy_run *er, sim_error *err)
{
    enum { COLS = 5 };
    static const h5_column columns[COLS] = {
        H5COL_OF("hour_start_s", "s", H5COL_F64), H5COL_OF("it_power_w", "W", H5COL_F64),
        H5COL_OF("outdoor_temp_c", "degC", H5COL_F64), H5COL_OF("pue", "1", H5COL_F64),
        H5COL_OF("facility_power_w", "W", H5COL_F64)};
    size_t n = 0;
    const double *it = energy_hourly_it_j(er->account, &n);
    const double *temp = energy_hourly_temp_c(er->account), *pue = energy_hourly_pue(er->account);
    double run_s = er->result.hours * 3600;
    double *rows = malloc((n ? n : 1) * COLS * sizeof *rows);
    if (!rows)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
    for (size_t h = 0; h < n; h++) { /* mean powers over the part of the hour the run lasted */
        double length = fmin(3600.0, run_s - 3600.0 * (double)h);
        double *x = rows + h * COLS;
        x[0] = 3600.0 * (double)h;
        x[1] = length > 0 ? it[h] / length : 0;
        x[2] = temp ? temp[h] : NAN;
        x[3] = pue ? pue[h] : NAN;
        x[4] = x[1] * x[3];
    }
    hid_t g = h5_create_group(tw->file, "energy");
    int rc = g < 0 || h5_put_columns(g, "hourly", columns, COLS, rows, n, NULL, NULL,
                                     "the run hour by hour at its site: mean IT power, outdoor "
                                 "temperature, PUE, mean facility power");
    if (g >= 0)
        H5Gclose(g);
    free(rows);
    return rc ? io_error(err, tw->out.path, "writing /energy/hourly") : 0;
}
