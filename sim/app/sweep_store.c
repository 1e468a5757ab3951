/* sweep_store.c - the HDF5 file of `dcsim sweep` (layout in
 * docs/trace-format.md): /sweep's attributes and scenario, /sweep/points,
 * /sweep/replicas and /sweep/errors; the sweep's identity; reading a file
 * back to resume.
 *
 * Invariant: the file is a function of the sweep's state only (no object
 * timestamps, tables in point order), written whole under a temporary name
 * and renamed, so the file under its final name is always complete.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>

#include "campaign.h"
#include "cli.h"
#include "sweep_internal.h"
#include "h5util.h"
#include "trace.h"
#include "version.h"

#define SWEEP_FORMAT_VERSION 1

/* the built-in schema and catalogs (embedded.c): part of a sweep's identity */
extern const unsigned char dcsim_xsd[], dcsim_catalog_gpus[], dcsim_catalog_models[],
    dcsim_catalog_servers[], dcsim_catalog_links[], dcsim_catalog_failures[],
    dcsim_catalog_sites[];
extern const size_t dcsim_xsd_len, dcsim_catalog_gpus_len, dcsim_catalog_models_len,
    dcsim_catalog_servers_len, dcsim_catalog_links_len, dcsim_catalog_failures_len,
    dcsim_catalog_sites_len;

/* ---------------------------------------------- the metrics' columns */

/* by M_* (sweep_internal.h) */
static const char *const metric_names[N_METRICS] = {
    "time_to_train_s",  "ettr_frac",         "failures",           "restarts",
    "rework_s",         "rework_gpu_hours",  "restart_time_s",     "checkpoint_time_s",
    "checkpoint_aborted_s", "checkpoints",   "spare_wait_s",       "slowdown_s",
    "it_energy_j",      "facility_energy_j", "pue_frac",           "energy_cost_cny",
    "co2_kg"};
static const char *const metric_units[N_METRICS] = {"s", "1", "1", "1", "s", "GPU h",
                                                    "s", "s", "s", "1", "s", "s",
                                                    "J", "J", "1", "CNY", "kg"};

/* by C_* */
static const char *const const_names[N_CONSTS] = {"iteration_time_s", "checkpoint_interval_s",
                                                  "cluster_mtbf_s", "young_interval_s",
                                                  "daly_interval_s"};

/* ------------------------------------------------------------ identity */

static uint64_t hash_bytes(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL; /* FNV-1a */
    return h;
}

static uint64_t hash_text(uint64_t h, const char *s)
{
    return hash_bytes(h, s, strlen(s) + 1);
}

/* dcsim version, the built-in schema and catalogs, point 0's resolved
 * scenario (so the scenario file and its XIncludes), every point's
 * overrides (fixed sets, grid or file values, seed), and the replicas. */
void sweep_identity(sweep *sw)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    h = hash_text(h, "dcsim sweep " DCSIM_VERSION);
    h = hash_bytes(h, dcsim_xsd, dcsim_xsd_len);
    h = hash_bytes(h, dcsim_catalog_gpus, dcsim_catalog_gpus_len);
    h = hash_bytes(h, dcsim_catalog_models, dcsim_catalog_models_len);
    h = hash_bytes(h, dcsim_catalog_servers, dcsim_catalog_servers_len);
    h = hash_bytes(h, dcsim_catalog_links, dcsim_catalog_links_len);
    h = hash_bytes(h, dcsim_catalog_failures, dcsim_catalog_failures_len);
    h = hash_bytes(h, dcsim_catalog_sites, dcsim_catalog_sites_len);
    h = hash_bytes(h, sw->pts[0].scn.resolved_xml, sw->pts[0].scn.resolved_xml_len);
    h = hash_bytes(h, &sw->replicas, sizeof sw->replicas);
    for (size_t i = 0; i < sw->n_points; i++) {
        h = hash_bytes(h, "\n", 1);
        for (size_t j = 0; j < sw->pts[i].n_sets; j++)
            h = hash_text(h, sw->pts[i].sets[j]);
    }
    h ^= h >> 31; /* spread the last bytes into every digit */
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 29;
    snprintf(sw->id, sizeof sw->id, "0x%016" PRIx64, h);
}

/* ----------------------------------------------------------- the file */

static hid_t status_type(void)
{
    hid_t t = H5Tenum_create(H5T_NATIVE_INT8);
    static const char *const names[] = {"pending", "done", "failed"};
    for (signed char v = 0; v < 3; v++)
        H5Tenum_insert(t, names[(int)v], &v);
    return t;
}

/* A 1-D dataset of n elements of type from buf, with units and description. */
static int dataset_put(hid_t g, const char *name, hid_t type, size_t n, const void *buf,
                       const char *const *units, size_t n_units, const char *description)
{
    hsize_t dims[1] = {n};
    hid_t s = H5Screate_simple(1, dims, NULL), dcpl = h5_untimed(H5P_DATASET_CREATE);
    hid_t d = H5Dcreate2(g, name, type, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    int rc = d < 0 || (n && H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) ||
             h5_attr_texts(d, "units", units, n_units) || h5_attr_text(d, "description", description);
    if (d >= 0)
        H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(s);
    return rc;
}

static hid_t replica_type(void)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(sweep_rep));
    H5Tinsert(t, "point", HOFFSET(sweep_rep, point), H5T_NATIVE_UINT32);
    H5Tinsert(t, "replica", HOFFSET(sweep_rep, replica), H5T_NATIVE_UINT32);
    for (int k = 0; k < N_METRICS; k++)
        H5Tinsert(t, metric_names[k], HOFFSET(sweep_rep, m) + (size_t)k * sizeof(double),
                  H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "event_digest", HOFFSET(sweep_rep, event_digest), H5T_NATIVE_UINT64);
    return t;
}

/* /sweep/points: point, the parameters' text, status, replicas, the
 * per-point constants, then mean and ci95 of every metric. Built in a byte
 * buffer with the string widths of this sweep. */
typedef struct points_layout {
    size_t size, off_point, off_param[MAX_PARAMS], off_status, off_replicas, off_const,
        off_stats;
    size_t width[MAX_PARAMS];
    hid_t type;
} points_layout;

static void points_layout_make(const sweep *sw, points_layout *L)
{
    size_t off = 0;
    L->off_point = off;
    off += sizeof(uint32_t);
    for (size_t k = 0; k < sw->n_params; k++) {
        size_t w = 1;
        for (size_t i = 0; i < sw->n_points; i++) {
            const char *v = sw->pts[i].values[k];
            size_t l = v ? strlen(v) + 1 : 1;
            w = l > w ? l : w;
        }
        L->width[k] = w;
        L->off_param[k] = off;
        off += w;
    }
    L->off_status = off;
    off += 1;
    L->off_replicas = off;
    off += sizeof(uint32_t);
    L->off_const = off;
    off += N_CONSTS * sizeof(double);
    L->off_stats = off;
    off += 2 * N_METRICS * sizeof(double);
    L->size = off;
    L->type = H5Tcreate(H5T_COMPOUND, off);
    H5Tinsert(L->type, "point", L->off_point, H5T_NATIVE_UINT32);
    for (size_t k = 0; k < sw->n_params; k++) {
        hid_t s = H5Tcopy(H5T_C_S1);
        H5Tset_size(s, L->width[k]);
        H5Tset_strpad(s, H5T_STR_NULLTERM);
        H5Tinsert(L->type, sw->params[k], L->off_param[k], s);
        H5Tclose(s);
    }
    hid_t st = status_type();
    H5Tinsert(L->type, "status", L->off_status, st);
    H5Tclose(st);
    H5Tinsert(L->type, "replicas", L->off_replicas, H5T_NATIVE_UINT32);
    for (int c = 0; c < N_CONSTS; c++)
        H5Tinsert(L->type, const_names[c], L->off_const + (size_t)c * sizeof(double),
                  H5T_NATIVE_DOUBLE);
    for (int k = 0; k < N_METRICS; k++) {
        char name[64];
        snprintf(name, sizeof name, "%s_mean", metric_names[k]);
        H5Tinsert(L->type, name, L->off_stats + (size_t)(2 * k) * sizeof(double),
                  H5T_NATIVE_DOUBLE);
        snprintf(name, sizeof name, "%s_ci95", metric_names[k]);
        H5Tinsert(L->type, name, L->off_stats + (size_t)(2 * k + 1) * sizeof(double),
                  H5T_NATIVE_DOUBLE);
    }
}

static void points_row(const sweep *sw, const points_layout *L, size_t i, double *scratch,
                       unsigned char *row)
{
    uint32_t idx = (uint32_t)i, reps = sw->replicas;
    memset(row, 0, L->size);
    memcpy(row + L->off_point, &idx, sizeof idx);
    for (size_t k = 0; k < sw->n_params; k++)
        if (sw->pts[i].values[k])
            memcpy(row + L->off_param[k], sw->pts[i].values[k], strlen(sw->pts[i].values[k]));
    row[L->off_status] = (unsigned char)sw->status[i];
    memcpy(row + L->off_replicas, &reps, sizeof reps);
    double c[N_CONSTS], s[2 * N_METRICS];
    int done = sw->status[i] == ST_DONE;
    for (int k = 0; k < N_CONSTS; k++)
        c[k] = done ? sw->consts[i * N_CONSTS + (size_t)k] : NAN;
    for (int k = 0; k < N_METRICS; k++) {
        campaign_stat st = {NAN, NAN, NAN};
        if (done) {
            for (unsigned r = 0; r < sw->replicas; r++)
                scratch[r] = sw->reps[i * sw->replicas + r].m[k];
            st = campaign_stat_of(scratch, sw->replicas);
        }
        s[2 * k] = st.mean;
        s[2 * k + 1] = st.ci95;
    }
    memcpy(row + L->off_const, c, sizeof c);
    memcpy(row + L->off_stats, s, sizeof s);
}

static int write_tables(const sweep *sw, hid_t g)
{
    points_layout L;
    memset(&L, 0, sizeof L);
    points_layout_make(sw, &L);
    unsigned char *rows = malloc(sw->n_points * L.size);
    double *scratch = malloc(sw->replicas * sizeof *scratch);
    size_t n_rep_rows = 0;
    for (size_t i = 0; i < sw->n_points; i++)
        n_rep_rows += sw->status[i] == ST_DONE ? sw->replicas : 0;
    sweep_rep *reps = malloc((n_rep_rows ? n_rep_rows : 1) * sizeof *reps);
    const char **errs = malloc(sw->n_points * sizeof *errs);
    int rc = !rows || !scratch || !reps || !errs;
    size_t at = 0;
    for (size_t i = 0; !rc && i < sw->n_points; i++) {
        points_row(sw, &L, i, scratch, rows + i * L.size);
        errs[i] = sw->errtext[i] ? sw->errtext[i] : "";
        if (sw->status[i] == ST_DONE)
            for (unsigned r = 0; r < sw->replicas; r++)
                reps[at++] = sw->reps[i * sw->replicas + r];
    }
    const char *units_p[3 + MAX_PARAMS + N_CONSTS + 2 * N_METRICS];
    size_t nu = 0;
    units_p[nu++] = "1";
    for (size_t k = 0; k < sw->n_params; k++)
        units_p[nu++] = "-";
    units_p[nu++] = "-";
    units_p[nu++] = "1";
    for (int c = 0; c < N_CONSTS; c++)
        units_p[nu++] = "s";
    for (int k = 0; k < N_METRICS; k++) {
        units_p[nu++] = metric_units[k];
        units_p[nu++] = metric_units[k];
    }
    const char *units_r[3 + N_METRICS];
    units_r[0] = units_r[1] = "1";
    for (int k = 0; k < N_METRICS; k++)
        units_r[2 + k] = metric_units[k];
    units_r[2 + N_METRICS] = "-";
    hid_t rt = replica_type(), vs = h5_string_type();
    if (!rc)
        rc = dataset_put(g, "points", L.type, sw->n_points, rows, units_p, nu,
                         "one row per point, in point order: its values (text, as given), "
                         "status, replicas, the point's constants (replica 0), and the mean "
                         "and 95 % confidence half-width (Student t) of every replica metric; "
                         "NaN until done");
    if (!rc)
        rc = dataset_put(g, "replicas", rt, n_rep_rows, reps, units_r, 3 + N_METRICS,
                         "one row per replica of every finished point, by (point, replica); "
                         "replica r ran with seed campaign_replica_seed(seed, r) at every point");
    if (!rc)
        rc = dataset_put(g, "errors", vs, sw->n_points, errs, (const char *const[]){"-"}, 1,
                         "per point: why it failed, or empty");
    H5Tclose(rt);
    H5Tclose(vs);
    H5Tclose(L.type);
    free(rows);
    free(scratch);
    free(reps);
    free(errs);
    return rc;
}

static int write_meta(const sweep *sw, hid_t file, hid_t g)
{
    int32_t format = SWEEP_FORMAT_VERSION;
    uint64_t seed = sw->pts[0].scn.seed, n = sw->n_points, done = 0;
    uint32_t reps = sw->replicas;
    for (size_t i = 0; i < sw->n_points; i++)
        done += sw->status[i] != ST_PENDING;
    const char *grid[MAX_GRIDS + 1];
    size_t n_grid = 0;
    char pts_line[PATH_MAX + 16];
    if (sw->points_file) {
        snprintf(pts_line, sizeof pts_line, "--points %s", sw->points_file);
        grid[n_grid++] = pts_line;
    }
    for (size_t k = 0; k < sw->n_grids; k++)
        grid[n_grid++] = sw->grids[k].given;
    const char *fixed[CLI_MAX_SETS + 1];
    size_t nf = 0;
    for (size_t k = 0; k < sw->fixed.n; k++)
        fixed[nf++] = sw->fixed.v[k];
    if (sw->seed_set[0])
        fixed[nf++] = sw->seed_set;
    const char *xml = sw->pts[0].scn.resolved_xml;
    hid_t vs = h5_string_type();
    int rc = h5_attr_scalar(file, "format_version", H5T_NATIVE_INT32, &format) ||
             h5_attr_text(file, "dcsim_version", DCSIM_VERSION) ||
             h5_attr_text(file, "content", "dcsim sweep") ||
             h5_attr_scalar(g, "format_version", H5T_NATIVE_INT32, &format) ||
             h5_attr_text(g, "sweep_id", sw->id) ||
             h5_attr_text(g, "scenario_source", sw->pts[0].scn.source) ||
             h5_attr_text(g, "scenario_name", sw->pts[0].scn.name) ||
             h5_attr_texts(g, "grid", grid, n_grid) || h5_attr_texts(g, "sets", fixed, nf) ||
             h5_attr_texts(g, "parameters", sw->params, sw->n_params) ||
             h5_attr_scalar(g, "seed", H5T_NATIVE_UINT64, &seed) ||
             h5_attr_scalar(g, "replicas", H5T_NATIVE_UINT32, &reps) ||
             h5_attr_scalar(g, "points_total", H5T_NATIVE_UINT64, &n) ||
             h5_attr_scalar(g, "points_finished", H5T_NATIVE_UINT64, &done);
    if (!rc) {
        hid_t s = H5Screate(H5S_SCALAR), dcpl = h5_untimed(H5P_DATASET_CREATE);
        hid_t d = H5Dcreate2(g, "scenario", vs, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        rc = d < 0 || H5Dwrite(d, vs, H5S_ALL, H5S_ALL, H5P_DEFAULT, &xml) < 0 ||
             h5_attr_text(d, "description", "point 0's scenario as simulated (XML after XInclude "
                       "and its overrides); point i differs by its values");
        if (d >= 0)
            H5Dclose(d);
        H5Pclose(dcpl);
        H5Sclose(s);
    }
    H5Tclose(vs);
    return rc;
}

/* The whole file as NAME.tmp.<pid>, fsync'd, renamed over NAME: readers
 * see the old file or the new one, never a part. May run on any thread. */
int sweep_store_write(sweep *sw, sim_error *err)
{
    h5_quiet(); /* per thread in a thread-safe HDF5 */
    const char *tmp = sw->out.tmp;
    hid_t fcpl = h5_untimed(H5P_FILE_CREATE);
    hid_t f = H5Fcreate(tmp, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
    int e = f < 0 ? h5_errno() : 0; /* before the next call clears it */
    H5Pclose(fcpl);
    if (f < 0) {
        int fd = e ? -1 : open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644); /* HDF5 did not say */
        if (!e && fd < 0)
            e = errno;
        if (fd >= 0)
            close(fd);
        outpath_discard(&sw->out);
        return sim_error_set(err, SIM_ERR_IO, sw->output, 0, "cannot write the sweep file: %s",
                             e ? strerror(e) : "H5Fcreate failed");
    }
    hid_t g = h5_create_group(f, "sweep");
    int rc = g < 0 || write_meta(sw, f, g) || write_tables(sw, g);
    if (g >= 0)
        H5Gclose(g);
    e = rc ? h5_errno() : 0;
    if (h5_close_file(f, &e))
        rc = 1;
    if (rc) {
        outpath_discard(&sw->out);
        return sim_error_set(err, SIM_ERR_IO, sw->output, 0, "cannot write the sweep file: %s",
                             e ? strerror(e) : "writing HDF5 failed");
    }
    return outpath_commit(&sw->out, 1, err);
}

/* ---------------------------------------------------------- resuming */

static int not_ours(const sweep *sw, const char *why)
{
    fprintf(stderr, "%s: error: %s; choose another -o, or --force to start over (it "
            "replaces the file)\n", sw->output, why);
    return CLI_EXIT_INPUT;
}

/* Read a whole 1-D dataset into buf (n elements of type) after checking its length. */
static int read_all(hid_t g, const char *name, hid_t type, size_t n, void *buf)
{
    hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
    hid_t s = d >= 0 ? H5Dget_space(d) : -1;
    hssize_t got = s >= 0 ? H5Sget_simple_extent_npoints(s) : -1;
    int rc = got != (hssize_t)n || (n && H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0);
    if (s >= 0)
        H5Sclose(s);
    if (d >= 0)
        H5Dclose(d);
    return rc;
}

static hsize_t rows_of(hid_t g, const char *name)
{
    hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
    hid_t s = d >= 0 ? H5Dget_space(d) : -1;
    hssize_t n = s >= 0 ? H5Sget_simple_extent_npoints(s) : 0;
    if (s >= 0)
        H5Sclose(s);
    if (d >= 0)
        H5Dclose(d);
    return n > 0 ? (hsize_t)n : 0;
}

typedef struct point_back {
    uint32_t point;
    signed char status;
    double consts[N_CONSTS];
} point_back;

/* The finished points of an existing file of the same sweep. */
int sweep_store_load(sweep *sw)
{
    h5_quiet();
    struct stat st;
    if (stat(sw->output, &st) != 0)
        return 0;
    if (sw->force)
        return 0;
    hid_t f = H5Fis_hdf5(sw->output) > 0 ? H5Fopen(sw->output, H5F_ACC_RDONLY, H5P_DEFAULT) : -1;
    hid_t g = f >= 0 ? H5Gopen2(f, "sweep", H5P_DEFAULT) : -1;
    char id[64] = "";
    if (g < 0 || h5_read_text_attr(g, "sweep_id", id, sizeof id)) {
        if (g >= 0)
            H5Gclose(g);
        if (f >= 0)
            H5Fclose(f);
        return not_ours(sw, "the file exists and is not a dcsim sweep file");
    }
    int rc = 0;
    if (strcmp(id, sw->id)) {
        char why[256];
        snprintf(why, sizeof why, "the file holds a different sweep (id %s, this one %s: the "
                 "scenario, grid, --set, seed, replicas or dcsim version differ)", id, sw->id);
        rc = not_ours(sw, why);
    }
    point_back *pb = rc ? NULL : malloc(sw->n_points * sizeof *pb);
    hsize_t n_rep_rows = rc ? 0 : rows_of(g, "replicas");
    sweep_rep *reps = rc ? NULL : malloc((n_rep_rows ? n_rep_rows : 1) * sizeof *reps);
    char **errs = rc ? NULL : calloc(sw->n_points, sizeof *errs);
    if (!rc && (!pb || !reps || !errs))
        rc = EXIT_FAILURE;
    if (!rc) {
        hid_t pt = H5Tcreate(H5T_COMPOUND, sizeof(point_back)), st_t = status_type();
        H5Tinsert(pt, "point", HOFFSET(point_back, point), H5T_NATIVE_UINT32);
        H5Tinsert(pt, "status", HOFFSET(point_back, status), st_t);
        for (int c = 0; c < N_CONSTS; c++)
            H5Tinsert(pt, const_names[c], HOFFSET(point_back, consts) + (size_t)c * sizeof(double),
                      H5T_NATIVE_DOUBLE);
        hid_t rt = replica_type(), vs = h5_string_type();
        if (read_all(g, "points", pt, sw->n_points, pb) ||
            read_all(g, "replicas", rt, n_rep_rows, reps) ||
            read_all(g, "errors", vs, sw->n_points, errs))
            rc = not_ours(sw, "the sweep file cannot be read back");
        H5Tclose(pt);
        H5Tclose(st_t);
        H5Tclose(rt);
        H5Tclose(vs);
    }
    size_t at = 0;
    for (size_t i = 0; !rc && i < sw->n_points; i++) {
        if (pb[i].point != i)
            rc = not_ours(sw, "the sweep file's points are out of order");
        else if (pb[i].status == ST_DONE) {
            for (unsigned r = 0; !rc && r < sw->replicas; r++, at++) {
                if (at >= n_rep_rows || reps[at].point != i || reps[at].replica != r)
                    rc = not_ours(sw, "the sweep file's replicas do not match its points");
                else
                    sw->reps[i * sw->replicas + r] = reps[at];
            }
            memcpy(sw->consts + i * N_CONSTS, pb[i].consts, sizeof pb[i].consts);
        } else if (pb[i].status == ST_FAILED) {
            sw->errtext[i] = strdup(errs[i] ? errs[i] : "");
        }
        if (!rc && pb[i].status != ST_PENDING) {
            sw->status[i] = pb[i].status;
            sw->n_done++;
        }
    }
    if (errs) {
        hid_t vs = h5_string_type();
        hsize_t dims[1] = {sw->n_points};
        hid_t s = H5Screate_simple(1, dims, NULL);
        H5Dvlen_reclaim(vs, s, H5P_DEFAULT, errs);
        H5Sclose(s);
        H5Tclose(vs);
    }
    free(errs);
    free(pb);
    free(reps);
    H5Gclose(g);
    H5Fclose(f);
    return rc;
}
