/* test_pages.c - sim_zero_release: every byte of the array reads zero
 * afterwards, whatever its alignment and length (the partial pages at both
 * ends are zeroed by hand, the whole ones given back), the bytes around it
 * are untouched, and the array can be written and read again; on Linux the
 * whole pages leave the resident set (mincore). sim_give_back_freed runs. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, mincore */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "check.h"
#include "pages.h"

static void check_release(size_t offset, size_t bytes)
{
    size_t total = bytes + offset + 64;
    unsigned char *block = malloc(total);
    CHECK(block != NULL);
    if (!block)
        return;
    memset(block, 0xAB, total);
    unsigned char *a = block + offset;
    sim_zero_release(a, bytes);
    size_t nonzero = 0, outside = 0;
    for (size_t i = 0; i < bytes; i++)
        nonzero += a[i] != 0;
    for (size_t i = 0; i < offset; i++)
        outside += block[i] != 0xAB;
    for (size_t i = offset + bytes; i < total; i++)
        outside += block[i] != 0xAB;
    CHECK_INT_EQ(nonzero, 0);
    CHECK_INT_EQ(outside, 0);
    memset(a, 7, bytes); /* usable again */
    size_t sevens = 0;
    for (size_t i = 0; i < bytes; i++)
        sevens += a[i] == 7;
    CHECK_INT_EQ(sevens, bytes);
    free(block);
}

#ifdef __linux__
/* whole pages of a 64-page mapping, all written, none resident after */
static void check_pages_leave(void)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t n = 64 * (size_t)page;
    unsigned char *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED);
    if (m == MAP_FAILED)
        return;
    memset(m, 1, n);
    unsigned char vec[64];
    CHECK_INT_EQ(mincore(m, n, vec), 0);
    unsigned resident = 0;
    for (int i = 0; i < 64; i++)
        resident += vec[i] & 1;
    CHECK_INT_EQ(resident, 64);
    sim_zero_release(m, n);
    CHECK_INT_EQ(mincore(m, n, vec), 0);
    resident = 0;
    for (int i = 0; i < 64; i++)
        resident += vec[i] & 1;
    CHECK_INT_EQ(resident, 0);
    CHECK_INT_EQ(m[0] + m[n - 1], 0);
    munmap(m, n);
}
#endif

int main(void)
{
    size_t offsets[] = {0, 1, 8, 4095, 4096 + 17};
    size_t sizes[] = {0, 1, 100, 4096, 3 * 4096 + 5, 1 << 20};
    for (size_t i = 0; i < sizeof offsets / sizeof offsets[0]; i++)
        for (size_t j = 0; j < sizeof sizes / sizeof sizes[0]; j++)
            check_release(offsets[i], sizes[j]);
#ifdef __linux__
    check_pages_leave();
#endif
    sim_give_back_freed();
    return check_report();
}
