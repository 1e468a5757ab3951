/* pages.h - give a large scratch array's memory back while it is idle.
 *
 * The step tier keeps a few arrays of one double per link of the fabric
 * (878K links at 100K GPUs: 7 MB each) that are all zeros between uses; once
 * a use has written them all over, their pages stay resident and add to the
 * run's peak. sim_zero_release zeroes such an array and returns its whole
 * pages to the system (Linux: madvise MADV_DONTNEED, after which the pages
 * read as zeros again and cost nothing until written); elsewhere it only
 * zeroes. */
#ifndef DCSIM_SIM_PAGES_H
#define DCSIM_SIM_PAGES_H

#include <stddef.h>

void sim_zero_release(void *p, size_t bytes);

/* Return the pages of memory freed so far to the system (glibc:
 * malloc_trim), so that what a finished part of a run freed does not stay
 * resident under what the next part allocates; elsewhere nothing. */
void sim_give_back_freed(void);

#endif
