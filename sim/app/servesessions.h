/* servesessions.h - the multi-turn sessions' figures of `dcsim serve`
 * (servesessions.c): the setup and result lines of the text, the --json
 * object "sessions", and the columns `dcsim compare` and `dcsim sweep`
 * take from it (compare_serve.c), one table for all three, so that a
 * compare row holds the numbers dcsim serve --json prints. */
#ifndef DCSIM_APP_SERVESESSIONS_H
#define DCSIM_APP_SERVESESSIONS_H

#include <cjson/cJSON.h>

#include "serving.h"

#define SERVE_SESSION_COLS 21

/* the figures: their names in the JSON object (the compare and CSV
 * columns are "sessions_" + name) and units */
extern const char *const serve_session_names[SERVE_SESSION_COLS];
extern const char *const serve_session_units[SERVE_SESSION_COLS];

/* r's figures in that order (0 for a run without sessions) */
void serve_session_values(const serve_result *r, double *v);

/* the text: the setup line (before the run's figures) and the result lines */
void serve_session_print_setup(const serve_config *c);
void serve_session_print_result(const serve_config *c, const serve_result *r);

/* the --json object "sessions" of root: the settings, then the figures */
void serve_session_json(cJSON *root, const serve_config *c, const serve_result *r);

#endif
