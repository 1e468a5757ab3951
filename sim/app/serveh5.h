/* serveh5.h - the HDF5 file of `dcsim serve -o FILE.h5`: /serve/requests
 * (one row per request, or every k-th by arrival past SERVE_H5_MAX_ROWS)
 * and /serve/series (bins of --bin seconds), written as FILE.h5.tmp.<pid>
 * and renamed at the end (outpath.h). Layout in docs/trace-format.md
 * "/serve". */
#ifndef DCSIM_APP_SERVEH5_H
#define DCSIM_APP_SERVEH5_H

#include <stdint.h>

#include "outpath.h"
#include "scenario.h"
#include "serving.h"

/* A run keeps every request's row when it expects at most this many
 * (serve_expected_requests); else every k-th by arrival order, k =
 * ceil(expected / SERVE_H5_MAX_ROWS): at most about 56 MB of rows. */
#define SERVE_H5_MAX_ROWS 1000000ull

typedef struct serve_h5_rows {
    serve_request_info *v;
    uint64_t n, cap;
    uint64_t every; /* keep requests whose seq % every == 0 */
} serve_h5_rows;

/* Set up rows for configuration c (every from its expected requests). */
void serve_h5_rows_init(serve_h5_rows *rows, const serve_config *c);
void serve_h5_rows_free(serve_h5_rows *rows);
/* serve_config.on_request: keep info when sampled; 0, or -1 (no memory) */
int serve_h5_on_request(void *ctx, const serve_request_info *info);

/* Write run r of s (configuration c) over op's path; bin_s: the series'
 * bin; command: the command line for the root attribute. 0, or SIM_ERR_IO
 * with the temporary removed and the path untouched. */
int serve_h5_write(outpath *op, const scn_scenario *s, const serve_config *c,
                   const serve_result *r, serve_h5_rows *rows, const char *command,
                   sim_error *err);

#endif
