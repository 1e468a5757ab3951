/* h5util.c - HDF5 helpers shared by every dcsim writer (see h5util.h). */
#include "h5util.h"
#include "version.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void h5_quiet(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

hid_t h5_untimed(hid_t class_id)
{
    hid_t p = H5Pcreate(class_id);
    if (p >= 0)
        H5Pset_obj_track_times(p, 0);
    return p;
}

hid_t h5_create_group(hid_t parent, const char *name)
{
    hid_t gcpl = h5_untimed(H5P_GROUP_CREATE);
    hid_t g = H5Gcreate2(parent, name, H5P_DEFAULT, gcpl, H5P_DEFAULT);
    H5Pclose(gcpl);
    return g;
}

int h5_put_table(hid_t g, const char *name, hid_t t, hsize_t n, const void *rows,
                 const char *const *units, size_t n_units, const char *description)
{
    hsize_t dims[1] = {n};
    hid_t sp = H5Screate_simple(1, dims, NULL), dcpl = h5_untimed(H5P_DATASET_CREATE);
    hid_t d = H5Dcreate2(g, name, t, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    int rc = d < 0 || (n && H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) < 0) ||
             h5_attr_texts(d, "units", units, n_units) ||
             h5_attr_text(d, "description", description);
    if (d >= 0)
        H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(sp);
    return rc ? -1 : 0;
}

hid_t h5_string_type(void)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    return t;
}

/* An attribute of n values of type (a scalar when scalar is set); an empty
 * 1-D attribute when n == 0. */
static int attr_put(hid_t obj, const char *name, hid_t type, int scalar, size_t n, const void *v)
{
    hsize_t dims[1] = {n};
    hid_t s = scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, dims, NULL);
    hid_t a = H5Acreate2(obj, name, type, s, H5P_DEFAULT, H5P_DEFAULT);
    int rc = a < 0 || (n && H5Awrite(a, type, v) < 0);
    if (a >= 0)
        H5Aclose(a);
    H5Sclose(s);
    return rc;
}

int h5_attr_text(hid_t obj, const char *name, const char *value)
{
    hid_t t = h5_string_type();
    int rc = attr_put(obj, name, t, 1, 1, &value);
    H5Tclose(t);
    return rc;
}

int h5_attr_texts(hid_t obj, const char *name, const char *const *values, size_t n)
{
    hid_t t = h5_string_type();
    int rc = attr_put(obj, name, t, 0, n, values);
    H5Tclose(t);
    return rc;
}

int h5_attr_scalar(hid_t obj, const char *name, hid_t type, const void *value)
{
    return attr_put(obj, name, type, 1, 1, value);
}

int h5_read_text_attr(hid_t obj, const char *name, char *out, size_t size)
{
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT), t = h5_string_type();
    char *v = NULL;
    int rc = a < 0 || H5Aread(a, t, &v) < 0 || !v;
    if (!rc)
        snprintf(out, size, "%s", v);
    H5free_memory(v);
    H5Tclose(t);
    if (a >= 0)
        H5Aclose(a);
    return rc;
}

static herr_t find_errno(unsigned n, const H5E_error2_t *e, void *data)
{
    (void)n;
    int *out = data;
    const char *p = e->desc ? strstr(e->desc, "errno = ") : NULL;
    if (p && !*out)
        *out = atoi(p + 8);
    return 0;
}

int h5_errno(void)
{
    int e = 0;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, find_errno, &e);
    return e;
}

int h5_close_file(hid_t f, int *sys_errno)
{
    if (f <= 0)
        return 0;
    hid_t ids[64];
    ssize_t n;
    while ((n = H5Fget_obj_ids(f, H5F_OBJ_DATASET | H5F_OBJ_GROUP | H5F_OBJ_DATATYPE |
                                      H5F_OBJ_ATTR | H5F_OBJ_LOCAL,
                               64, ids)) > 0) {
        for (ssize_t i = 0; i < n; i++) {
            if (H5Iget_type(ids[i]) == H5I_ATTR)
                H5Aclose(ids[i]);
            else if (H5Iget_type(ids[i]) == H5I_DATATYPE)
                H5Tclose(ids[i]);
            else
                H5Oclose(ids[i]);
        }
        if (n < 64)
            break;
    }
    int rc = H5Fclose(f) < 0 ? -1 : 0;
    if (rc && sys_errno && !*sys_errno)
        *sys_errno = h5_errno();
    return rc; /* a failed close is never retried: that crashes (see trace_hdf5_startup) */
}

int h5_write_error(sim_error *err, const char *path, const char *what, int sys_errno)
{
    if (sys_errno)
        return sim_error_set(err, SIM_ERR_IO, path, 0, "cannot write the trace: %s failed: %s",
                             what, strerror(sys_errno));
    return sim_error_set(err, SIM_ERR_IO, path, 0, "cannot write the trace: %s failed", what);
}

int h5_finish_file(outpath *op, hid_t f, const char *failed, sim_error *err)
{
    int sys_errno = failed ? h5_errno() : 0;
    if (h5_close_file(f, &sys_errno) && !failed)
        failed = "closing the file";
    if (failed) {
        outpath_discard(op);
        return h5_write_error(err, op->path, failed, sys_errno);
    }
    return outpath_commit(op, 0, err);
}

int h5_put_root(hid_t f, const h5_root *root)
{
    return h5_attr_text(f, "dcsim_version", DCSIM_VERSION) ||
           h5_attr_scalar(f, "format_version", H5T_NATIVE_INT32, &root->format_version) ||
           h5_attr_scalar(f, "seed", H5T_NATIVE_UINT64, &root->seed) ||
           h5_attr_text(f, "event_digest", root->event_digest) ||
           h5_attr_scalar(f, "events_fired", H5T_NATIVE_UINT64, &root->events_fired) ||
           h5_attr_text(f, "scenario_name", root->scenario_name) ||
           h5_attr_text(f, "scenario_source", root->scenario_source);
}

hid_t h5_create_file(outpath *op, sim_error *err)
{
    h5_quiet();
    outpath_remove_stale(op);
    hid_t f = H5Fcreate(op->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0) {
        outpath_discard(op);
        sim_error_set(err, SIM_ERR_IO, op->path, 0, "cannot write the trace: H5Fcreate failed");
    }
    return f;
}
