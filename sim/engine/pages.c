/* pages.c - see pages.h. */
#define _DEFAULT_SOURCE /* madvise */
#include "pages.h"

#include <stdint.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#ifdef __linux__
#include <sys/mman.h>
#include <unistd.h>
#endif

void sim_zero_release(void *p, size_t bytes)
{
    unsigned char *a = p;
#ifdef __linux__
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)a + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    uintptr_t hi = ((uintptr_t)a + bytes) & ~((uintptr_t)page - 1);
    if (page > 0 && hi > lo && madvise((void *)lo, hi - lo, MADV_DONTNEED) == 0) {
        memset(a, 0, lo - (uintptr_t)a); /* the partial pages at both ends */
        memset((void *)hi, 0, (uintptr_t)a + bytes - hi);
        return;
    }
#endif
    memset(a, 0, bytes);
}

void sim_give_back_freed(void)
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}
