/* compare_vary.h - the --vary lists of `dcsim compare` (and their meaning as
 * --set strings): KEY=V1,V2,... parsed, a network file's <fabric> turned
 * into sets, a value into the set it stands for. */
#ifndef DCSIM_APP_COMPARE_VARY_H
#define DCSIM_APP_COMPARE_VARY_H

#include <stddef.h>

#include "error.h"

#define MAX_VALUES 64

typedef struct vary {
    char key[128];
    char *values[MAX_VALUES];
    size_t n;
    char *buf;
} vary;

/* KEY=V1,V2,... into v (v->buf owns the values; free it). 0, or -1 when
 * malformed, empty, or over MAX_VALUES values. */
int compare_parse_vary(const char *arg, vary *v);

/* --vary network=FILE: the attributes of the file's first <fabric> element
 * as "cluster/fabric/@NAME=VALUE" sets (at most max, each malloc'ed). Returns
 * how many, -1 without a <fabric>, or -2 with err filled. */
int compare_fabric_file_sets(const char *path, char **out, int max, sim_error *err);

/* The --set string a --vary value stands for (malloc'ed; NULL: no memory). */
char *compare_vary_set(const vary *v, const char *value);

#endif
