/* h5columns.h - a table of numbers stored as an HDF5 compound dataset: one
 * field per column, each with its own type (float64, an integer width, or an
 * HDF5 enum of category names) and its own unit in the dataset's "units"
 * attribute (docs/trace-format.md "Tables"). Callers build their rows as a
 * rows x columns array of doubles, as they always did; each value is checked
 * to fit its column's type before anything is written. */
#ifndef DCSIM_APP_H5COLUMNS_H
#define DCSIM_APP_H5COLUMNS_H

#include <stddef.h>

#include <hdf5.h>

typedef enum h5_column_type {
    H5COL_F64 = 0, /* float64: any value, NaN included (documented per table) */
    H5COL_U8,      /* a 0/1 flag or a small count */
    H5COL_I32,     /* an index where -1 means "not applicable" */
    H5COL_U32,     /* an index or count */
    H5COL_U64,     /* a count that may pass 2^32 */
    H5COL_ENUM     /* a category: int32 values 0..n_labels-1 named by label() */
} h5_column_type;

typedef struct h5_column {
    const char *name, *unit;
    h5_column_type type;
    const char *(*label)(int value); /* H5COL_ENUM: the name of each value */
    int n_labels;
} h5_column;

/* A numeric column, and a category column (unit "-") named by label(0..n-1). */
#define H5COL_OF(name, unit, type) {(name), (unit), (type), NULL, 0}
#define H5COL_ENUM_OF(name, label, n) {(name), "-", H5COL_ENUM, (label), (n)}

/* Dataset `name` under g: n_rows rows of the n_cols columns, values row-major
 * in `values` (n_rows x n_cols doubles). When row_labels is not NULL the
 * first field is a UTF-8 text column named label_column ("variant") with
 * unit "-", holding row_labels[i]. Attributes: "units" (one per field) and
 * "description". 0, or -1 when a value does not fit its column (an integer
 * column given a fraction, a negative or out-of-range value, NaN; an enum
 * value outside its labels) or HDF5 failed. */
int h5_put_columns(hid_t g, const char *name, const h5_column *cols, size_t n_cols,
                   const double *values, size_t n_rows, const char *const *row_labels,
                   const char *label_column, const char *description);

#endif
