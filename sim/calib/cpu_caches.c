/* cpu_caches.c - this machine's cache sizes and the tier thresholds the
 * fits take from them (contract in cpu_caches.h). Invariant: every size is
 * positive, read from sysfs, sysconf or a default, in that order.
 */
#include "cpu_caches.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* the first line of a small file, without its newline; 0 or -1 */
static int read_first_line(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int rc = fgets(buf, (int)size, f) ? 0 : -1;
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
    return rc;
}

/* "32K", "512K", "32768K", "1M" (a sysfs cache size) in bytes, or 0 */
static double parse_cache_size(const char *s)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno == ERANGE)
        return 0.0;
    double scale = *end == 'K'    ? 1024.0
                 : *end == 'M'    ? 1024.0 * 1024
                 : *end == 'G'    ? 1024.0 * 1024 * 1024
                 : *end == '\0' ? 1.0
                                  : 0.0;
    return (double)v * scale;
}

void calib_read_caches(calib_caches *out)
{
    double size[3] = {0.0, 0.0, 0.0};
    memset(out, 0, sizeof *out);
    for (int idx = 0; idx < 16; idx++) {
        char path[128], level[16], type[32], text[32];
        const char *dir = "/sys/devices/system/cpu/cpu0/cache";
        snprintf(path, sizeof path, "%s/index%d/level", dir, idx);
        if (read_first_line(path, level, sizeof level))
            continue;
        snprintf(path, sizeof path, "%s/index%d/type", dir, idx);
        if (read_first_line(path, type, sizeof type) || strcmp(type, "Instruction") == 0)
            continue;
        snprintf(path, sizeof path, "%s/index%d/size", dir, idx);
        if (read_first_line(path, text, sizeof text))
            continue;
        int lv = atoi(level);
        if (lv >= 1 && lv <= 3 && size[lv - 1] == 0.0)
            size[lv - 1] = parse_cache_size(text);
    }
    for (int i = 0; i < 3; i++)
        snprintf(out->source[i], sizeof out->source[i], "%s", size[i] > 0 ? "sysfs" : "");
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE) && \
    defined(_SC_LEVEL3_CACHE_SIZE)
    static const int names[3] = {_SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL2_CACHE_SIZE,
                                 _SC_LEVEL3_CACHE_SIZE};
    for (int i = 0; i < 3; i++) {
        long v = size[i] > 0 ? 0 : sysconf(names[i]);
        if (v > 0) {
            size[i] = (double)v;
            snprintf(out->source[i], sizeof out->source[i], "sysconf");
        }
    }
#endif
    static const double defaults[3] = {CALIB_DEFAULT_L1D_BYTES, CALIB_DEFAULT_L2_BYTES,
                                       CALIB_DEFAULT_L3_BYTES};
    for (int i = 0; i < 3; i++)
        if (!(size[i] > 0)) {
            size[i] = defaults[i];
            snprintf(out->source[i], sizeof out->source[i], "default");
        }
    out->l1d_bytes = size[0];
    out->l2_bytes = size[1];
    out->l3_bytes = size[2];
}

/* GEMM tiers by the op's bytes, 4 (m k + k n + m n). Every call of a sweep
 * point reuses the same A, B and C, so they stay in the smallest cache level
 * that holds them all; the operands are split between the threads, so the
 * private levels hold threads x their size, the shared L3 its own size. */
void calib_gemm_tiers(const calib_caches *c, unsigned threads, calib_gemm_model *g)
{
    const double cand[3] = {threads * c->l1d_bytes, threads * c->l2_bytes, c->l3_bytes};
    g->n_tiers = calib_tiers_from(cand, 3, g->tier_min_bytes);
}

/* All-reduce tiers by the bytes per thread, S: from 0, L1d, L2, L3 / threads.
 * The working set that decides the tier is S per thread, not 2S: a thread
 * reuses only its own buffer across calls. What it reads from a peer (as many
 * bytes again) the peer has rewritten since, so every such read is a
 * coherence miss at any size; the size decides only where the peer's lines
 * are found. While S fits the peer's private L2 they are still there, dirty,
 * and each read is a cross-core transfer (on Zen 3 slower per byte than the
 * L3); above the L2 they have been evicted to the shared L3, which holds all
 * n buffers while n S fits it; above that they come from DRAM. (Measured on
 * 2 Zen 3 threads: the slow-to-fast step lies between S = 256 and 512 KiB,
 * i.e. at the L2 size and not at half of it.) */
void calib_coll_tiers(const calib_caches *c, unsigned threads, coll_bandwidth *bw)
{
    const double cand[3] = {c->l1d_bytes, c->l2_bytes, c->l3_bytes / threads};
    bw->n_tiers = calib_tiers_from(cand, 3, bw->min_bytes);
}
