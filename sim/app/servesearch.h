/* servesearch.h - `dcsim serve --size --search tp=LIST [--search
 * gpu=LIST]` (servesearch.c): the sizing of each configuration, the
 * cheapest first (within each GPU type). */
#ifndef DCSIM_APP_SERVESEARCH_H
#define DCSIM_APP_SERVESEARCH_H

#include "cli.h"

typedef struct serve_search_args {
    const char *path;          /* the scenario */
    const cli_sets *sets;      /* its --set values */
    const cli_sets *search;    /* "tp=1,2,4,8", "gpu=H100-SXM,H200-SXM" */
    int json, quiet;
} serve_search_args;

/* Size every configuration and print the table (or --json); the exit
 * status: 0, 2 (bad input, or every configuration refused), 1, 130. */
int serve_search(const serve_search_args *a);

#endif
