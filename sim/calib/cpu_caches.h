/* cpu_caches.h - this machine's cache sizes, and the tier thresholds the
 * GEMM and all-reduce fits take from them.
 */
#ifndef DCSIM_CALIB_CPU_CACHES_H
#define DCSIM_CALIB_CPU_CACHES_H

#include "collective.h"
#include "gemm_fit.h"

/* This machine's caches, for the tier thresholds of the fits. */
typedef struct calib_caches {
    double l1d_bytes;   /* level 1 data cache, per core */
    double l2_bytes;    /* level 2, per core */
    double l3_bytes;    /* level 3, shared (one L3 assumed for all threads) */
    char source[3][16]; /* where each came from: "sysfs", "sysconf" or "default" */
} calib_caches;

/* Defaults when a size cannot be read: a Zen 3 core (L1d 32 KiB, L2 512 KiB,
 * L3 32 MiB per CCX), the CPU dcsim's calibration was developed on. */
#define CALIB_DEFAULT_L1D_BYTES (32.0 * 1024)
#define CALIB_DEFAULT_L2_BYTES (512.0 * 1024)
#define CALIB_DEFAULT_L3_BYTES (32.0 * 1024 * 1024)

/* Read the cache sizes of cpu0: /sys/devices/system/cpu/cpu0/cache/index*
 * first (sysconf's _SC_LEVEL3_CACHE_SIZE can report a whole package under a
 * hypervisor), then sysconf, then the defaults above. Never fails. */
void calib_read_caches(calib_caches *out);

/* The tier thresholds of the two fits from c for `threads` threads (at most
 * 4 tiers, repeated or non-ascending thresholds dropped; reasons in
 * cpu_caches.c): GEMM by the op's bytes from 0, threads x L1d, threads x L2,
 * L3 (sets g->n_tiers, tier_min_bytes); all-reduce by the bytes per thread
 * from 0, L1d, L2, L3 / threads (sets bw->n_tiers, min_bytes). */
void calib_gemm_tiers(const calib_caches *c, unsigned threads, calib_gemm_model *g);
void calib_coll_tiers(const calib_caches *c, unsigned threads, coll_bandwidth *bw);

#endif
