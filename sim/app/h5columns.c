/* h5columns.c - rows of doubles written as a typed HDF5 compound table (see
 * h5columns.h). */
#include "h5columns.h"
#include "h5util.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t column_size(h5_column_type t)
{
    switch (t) {
    case H5COL_U8: return 1;
    case H5COL_I32:
    case H5COL_U32:
    case H5COL_ENUM: return 4;
    default: return 8;
    }
}

/* The file type of one column (the caller closes it). */
static hid_t column_type(const h5_column *c)
{
    switch (c->type) {
    case H5COL_U8: return H5Tcopy(H5T_NATIVE_UINT8);
    case H5COL_I32: return H5Tcopy(H5T_NATIVE_INT32);
    case H5COL_U32: return H5Tcopy(H5T_NATIVE_UINT32);
    case H5COL_U64: return H5Tcopy(H5T_NATIVE_UINT64);
    case H5COL_ENUM: {
        hid_t t = H5Tenum_create(H5T_NATIVE_INT32);
        for (int v = 0; t >= 0 && v < c->n_labels; v++) {
            int32_t value = v;
            if (H5Tenum_insert(t, c->label(v), &value) < 0) {
                H5Tclose(t);
                return -1;
            }
        }
        return t;
    }
    default: return H5Tcopy(H5T_NATIVE_DOUBLE);
    }
}

/* Store x into the field at p as column c's type; -1 when it does not fit. */
static int store(const h5_column *c, double x, unsigned char *p)
{
    if (c->type == H5COL_F64) {
        memcpy(p, &x, sizeof x);
        return 0;
    }
    if (!isfinite(x) || x != floor(x))
        return -1;
    switch (c->type) {
    case H5COL_U8: {
        if (x < 0 || x > UINT8_MAX)
            return -1;
        uint8_t v = (uint8_t)x;
        memcpy(p, &v, sizeof v);
        return 0;
    }
    case H5COL_I32:
    case H5COL_ENUM: {
        double lo = c->type == H5COL_ENUM ? 0 : -1;
        double hi = c->type == H5COL_ENUM ? c->n_labels - 1 : INT32_MAX;
        if (x < lo || x > hi)
            return -1;
        int32_t v = (int32_t)x;
        memcpy(p, &v, sizeof v);
        return 0;
    }
    case H5COL_U32: {
        if (x < 0 || x > UINT32_MAX)
            return -1;
        uint32_t v = (uint32_t)x;
        memcpy(p, &v, sizeof v);
        return 0;
    }
    default: { /* H5COL_U64: doubles hold integers exactly only below 2^53 */
        if (x < 0 || x > 9007199254740992.0)
            return -1;
        uint64_t v = (uint64_t)x;
        memcpy(p, &v, sizeof v);
        return 0;
    }
    }
}

int h5_put_columns(hid_t g, const char *name, const h5_column *cols, size_t n_cols,
                   const double *values, size_t n_rows, const char *const *row_labels,
                   const char *label_column, const char *description)
{
    size_t lead = row_labels ? 1 : 0, n_fields = n_cols + lead;
    size_t *offset = malloc(n_fields * sizeof *offset);
    const char **units = malloc(n_fields * sizeof *units);
    if (!offset || !units) {
        free(offset);
        free(units);
        return -1;
    }
    size_t width = 0;
    if (lead) { /* a variable-length string: the record holds its char pointer */
        offset[0] = 0;
        units[0] = "-";
        width = sizeof(char *);
    }
    for (size_t j = 0; j < n_cols; j++) { /* fields in column order, each aligned */
        size_t size = column_size(cols[j].type);
        width = (width + size - 1) / size * size;
        offset[lead + j] = width;
        units[lead + j] = cols[j].unit;
        width += size;
    }
    width = (width + 7) / 8 * 8;
    unsigned char *buf = calloc(n_rows ? n_rows : 1, width);
    hid_t t = buf ? H5Tcreate(H5T_COMPOUND, width) : -1;
    int rc = t < 0;
    if (!rc && lead) {
        hid_t s = h5_string_type();
        rc = H5Tinsert(t, label_column, offset[0], s) < 0;
        H5Tclose(s);
    }
    for (size_t j = 0; !rc && j < n_cols; j++) {
        hid_t ct = column_type(&cols[j]);
        rc = ct < 0 || H5Tinsert(t, cols[j].name, offset[lead + j], ct) < 0;
        if (ct >= 0)
            H5Tclose(ct);
    }
    for (size_t i = 0; !rc && i < n_rows; i++) {
        unsigned char *r = buf + i * width;
        if (lead)
            memcpy(r, &row_labels[i], sizeof(char *));
        for (size_t j = 0; !rc && j < n_cols; j++)
            rc = store(&cols[j], values[i * n_cols + j], r + offset[lead + j]);
    }
    if (!rc)
        rc = h5_put_table(g, name, t, n_rows, buf, units, n_fields, description);
    if (t >= 0)
        H5Tclose(t);
    free(buf);
    free(offset);
    free(units);
    return rc ? -1 : 0;
}
