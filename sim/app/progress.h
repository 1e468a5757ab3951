/* progress.h - a long command's progress line on stderr (README: --quiet):
 * shown only on a terminal and without --quiet, from the first second on,
 * at most once per interval, rewritten in place and cleared at the end. */
#ifndef DCSIM_APP_PROGRESS_H
#define DCSIM_APP_PROGRESS_H

#include <time.h>

typedef struct progress {
    int enabled;          /* stderr is a terminal and no --quiet */
    int shown;            /* a line is on the terminal */
    struct timespec start;
    double last_print_s;
} progress;

/* Now, enabled unless quiet or stderr is not a terminal. */
void progress_start(progress *p, int quiet);

/* 1 when a line is due (enabled, a second since the start and interval_s
 * since the last line; the caller prints it), with *wall_s the seconds
 * since the start; 0 otherwise. */
int progress_due(progress *p, double interval_s, double *wall_s);

/* Erase the line, if one was shown. */
void progress_clear(progress *p);

#endif
