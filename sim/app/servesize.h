/* servesize.h - `dcsim serve --size` (servesize.c) and `--search`
 * (servesearch.c). */
#ifndef DCSIM_APP_SERVESIZE_H
#define DCSIM_APP_SERVESIZE_H

#include <cjson/cJSON.h>

#include "error.h"
#include "progress.h"
#include "serving.h"

/* the search's steps as they come: printed (text), or gathered under
 * root's "size" (json) */
typedef struct serve_size_steps {
    const serve_config *c;
    int json;
    progress *prog;        /* cleared before a printed step; may be NULL */
    cJSON *steps;
    int n;
} serve_size_steps;

/* Size fleet c (serve_size, or serve_size_pools when disaggregated): every
 * step printed or put under root's "size" (root non-NULL: --json); on
 * success c holds the answer's replica counts (its answer line printed, or
 * put in root) and r its run. 0, or an error code with err set. */
int serve_size_run(serve_config *c, serve_size_steps *st, cJSON *root, serve_result *r,
                   sim_error *err);

/* serve.c: the arrivals in words, for the size head */
void serve_describe_arrivals(const serve_config *c, char *buf, size_t size);

#endif
