/* progress.c - see progress.h. */
#include "progress.h"

#include <stdio.h>
#include <unistd.h>

void progress_start(progress *p, int quiet)
{
    *p = (progress){.enabled = !quiet && isatty(STDERR_FILENO)};
    clock_gettime(CLOCK_MONOTONIC, &p->start);
}

int progress_due(progress *p, double interval_s, double *wall_s)
{
    if (!p->enabled)
        return 0;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double wall = (double)(now.tv_sec - p->start.tv_sec) +
                  1e-9 * (double)(now.tv_nsec - p->start.tv_nsec);
    if (wall < 1.0 || wall - p->last_print_s < interval_s)
        return 0;
    p->last_print_s = wall;
    p->shown = 1;
    *wall_s = wall;
    return 1;
}

void progress_clear(progress *p)
{
    if (p->shown)
        fprintf(stderr, "\r\033[K");
    p->shown = 0;
}
