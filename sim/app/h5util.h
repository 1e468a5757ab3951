/* h5util.h - the HDF5 plumbing every file dcsim writes shares (traces,
 * `compare -o` tables, sweep files): timestamp-free property lists so the
 * same run gives the same bytes, one UTF-8 string type, attributes, a full
 * close that reports the system's errno, and reading a text attribute back. */
#ifndef DCSIM_APP_H5UTIL_H
#define DCSIM_APP_H5UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <hdf5.h>

#include "error.h"
#include "outpath.h"

/* A creation property list of class_id without object timestamps (files
 * stay byte-identical); the caller closes it. */
hid_t h5_untimed(hid_t class_id);

/* Group name under parent, untimed; the caller closes it (< 0: failed). */
hid_t h5_create_group(hid_t parent, const char *name);

/* A 1-D dataset name of n rows of type t from rows (untimed), with its
 * "units" (one per column) and "description" attributes. 0, or -1. */
int h5_put_table(hid_t g, const char *name, hid_t t, hsize_t n, const void *rows,
                 const char *const *units, size_t n_units, const char *description);

/* A variable-length UTF-8 string type; the caller closes it. */
hid_t h5_string_type(void);

/* Attributes on obj; each returns 0, or nonzero when HDF5 failed. */
int h5_attr_text(hid_t obj, const char *name, const char *value); /* scalar string */
int h5_attr_texts(hid_t obj, const char *name, const char *const *values, size_t n); /* 1-D */
int h5_attr_scalar(hid_t obj, const char *name, hid_t type, const void *value);

/* Read a scalar string attribute into out (truncated to size); 0 or nonzero. */
int h5_read_text_attr(hid_t obj, const char *name, char *out, size_t size);

/* Turn off HDF5's own error printing (dcsim reports through sim_error). The
 * setting is per thread in a thread-safe HDF5: call it on every thread that
 * uses HDF5 (each writer does). */
void h5_quiet(void);

/* Close an HDF5 file and every object still open in it; -1 when the close
 * (its last flush) failed, with the system's errno in *sys_errno when HDF5
 * recorded one and *sys_errno was 0 (sys_errno may be NULL). A failed file
 * is left alone (see trace_hdf5_startup), its temporary removed by the caller. */
int h5_close_file(hid_t f, int *sys_errno);

/* The system errno recorded on this thread's HDF5 error stack by the last
 * failed call (a full disk: ENOSPC; over ulimit -f: EFBIG), or 0. */
int h5_errno(void);

/* The root attributes every dcsim HDF5 file begins with, in this order
 * (docs/trace-format.md): dcsim_version, format_version, seed, event_digest
 * (text), events_fired, scenario_name, scenario_source. 0, or -1. */
typedef struct h5_root {
    int32_t format_version;
    uint64_t seed;
    const char *event_digest;
    uint64_t events_fired;
    const char *scenario_name, *scenario_source;
} h5_root;
int h5_put_root(hid_t f, const h5_root *root);

/* Start writing at op's temporary name (HDF5 quiet on this thread, a stale
 * temporary removed): the file, or -1 with err set and the temporary gone. */
hid_t h5_create_file(outpath *op, sim_error *err);

/* "cannot write the trace: WHAT failed[: the system's reason]" as SIM_ERR_IO
 * on path; returns the code. */
int h5_write_error(sim_error *err, const char *path, const char *what, int sys_errno);

/* The end of writing a file f at op's temporary name: close it, then on
 * success rename it over op's path (outpath_commit); when `failed` names a
 * step that failed, or the close fails, remove the temporary and return
 * h5_write_error. */
int h5_finish_file(outpath *op, hid_t f, const char *failed, sim_error *err);

#endif
