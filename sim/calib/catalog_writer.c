/* catalog_writer.c - a calibrated GEMM model as a one-GPU catalog that
 * scenarios can use (contract in catalog_writer.h). Invariant: the file is
 * written to a temporary next to it and renamed into place, so the path is
 * complete or untouched.
 */
#include "catalog_writer.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hardware.h"

/* host names go into attributes and a comment: keep [A-Za-z0-9._-], no "--" */
static void safe_name(const char *in, char *out, size_t size)
{
    size_t j = 0;
    for (size_t i = 0; in[i] && j + 1 < size; i++) {
        char ch = in[i];
        int is_ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-';
        if (!is_ok || (ch == '-' && j > 0 && out[j - 1] == '-'))
            ch = '_';
        out[j++] = ch;
    }
    out[j] = '\0';
    if (j == 0)
        snprintf(out, size, "unknown");
}

/* "87.1234567GFLOP/s": a unit dcsim's parser knows, 9 significant digits (the
 * round trip through a catalog keeps times to ~1e-8), and never an exponent */
static void format_flops(double x, char *buf, size_t size)
{
    if (x >= 1e15)
        snprintf(buf, size, "%.9gPFLOP/s", x / 1e15);
    else if (x >= 1e12)
        snprintf(buf, size, "%.9gTFLOP/s", x / 1e12);
    else if (x >= 1e9)
        snprintf(buf, size, "%.9gGFLOP/s", x / 1e9);
    else
        snprintf(buf, size, "%.0fFLOP/s", x);
}

static void format_bandwidth(double x, char *buf, size_t size)
{
    if (x >= 1e12)
        snprintf(buf, size, "%.9gTB/s", x / 1e12);
    else if (x >= 1e9)
        snprintf(buf, size, "%.9gGB/s", x / 1e9);
    else if (x >= 1e6)
        snprintf(buf, size, "%.9gMB/s", x / 1e6);
    else
        snprintf(buf, size, "%.0fB/s", x);
}

/* "72.0237123ns": the unit that keeps the number in [1, 1000) where it can */
static void format_duration(double x, char *buf, size_t size)
{
    if (!(x >= 1e-12))
        snprintf(buf, size, "0ns");
    else if (x < 1e-6)
        snprintf(buf, size, "%.9gns", x * 1e9);
    else if (x < 1e-3)
        snprintf(buf, size, "%.9gus", x * 1e6);
    else if (x < 1.0)
        snprintf(buf, size, "%.9gms", x * 1e3);
    else
        snprintf(buf, size, "%.9gs", x);
}

/* "512KiB": a data size dcsim's parser reads back exactly (the thresholds
 * are whole bytes) */
static void format_size(double x, char *buf, size_t size)
{
    const double kib = 1024.0, mib = 1024.0 * 1024.0;
    if (x >= mib && fmod(x, mib) == 0)
        snprintf(buf, size, "%.0fMiB", x / mib);
    else if (x >= kib && fmod(x, kib) == 0)
        snprintf(buf, size, "%.0fKiB", x / kib);
    else if (fmod(x, 1.0) == 0)
        snprintf(buf, size, "%.0fB", x);
    else
        snprintf(buf, size, "%.17gB", x);
}

/* the largest tier bandwidth of g, or 0 when g has no valid one */
static double gemm_top_bandwidth(const calib_gemm_model *g)
{
    unsigned n_tiers = g->n_tiers ? g->n_tiers : 1;
    double top = 0.0;
    for (unsigned i = 0; i < n_tiers && n_tiers <= CALIB_TIERS; i++) {
        if (!(g->tier_bytes_per_s[i] > 0) || isinf(g->tier_bytes_per_s[i]))
            return 0.0;
        top = fmax(top, g->tier_bytes_per_s[i]);
    }
    return top;
}

int calib_write_catalog(const char *path, const calib_gemm_model *g, unsigned threads,
                        double memory_bytes, const char *backend, const calib_coll_model *colls,
                        size_t n_colls, const char *host, const char *date, sim_error *err)
{
    char tmp[4096], safe_host[128], safe_date[64], safe_backend[32], rate[64], bw[64], launch[64];
    char capacity[96] = "", tiers[256] = "", tier_sizes[CALIB_TIERS][32];
    double top = gemm_top_bandwidth(g);
    if (!(g->flops_per_s > 0) || !(top > 0) || !(g->launch_s >= 0) ||
        calib_tiers_are_valid(g->n_tiers, g->tier_min_bytes))
        return sim_error_set(err, SIM_ERR_INTERNAL, path, 0, "no fitted model to write");
    if (snprintf(tmp, sizeof tmp, "%s.tmpXXXXXX", path) >= (int)sizeof tmp)
        return sim_error_set(err, SIM_ERR_IO, path, 0, "path too long");
    safe_name(host ? host : "", safe_host, sizeof safe_host);
    safe_name(date ? date : "", safe_date, sizeof safe_date);
    safe_name(backend ? backend : "", safe_backend, sizeof safe_backend);
    format_flops(g->flops_per_s, rate, sizeof rate);
    format_bandwidth(top, bw, sizeof bw);
    format_duration(g->launch_s, launch, sizeof launch);
    /* efficiency-by-size: B_i / top, the top tier exactly 100 % */
    unsigned n_tiers = g->n_tiers ? g->n_tiers : 1;
    for (size_t i = 0, used = 0; i < n_tiers; i++) {
        format_size(i == 0 ? 0.0 : g->tier_min_bytes[i], tier_sizes[i], sizeof tier_sizes[i]);
        int n = snprintf(tiers + used, sizeof tiers - used, "%s%s:%.9g%%", i ? " " : "",
                         tier_sizes[i], 100.0 * g->tier_bytes_per_s[i] / top);
        if (n < 0 || (size_t)n >= sizeof tiers - used)
            return sim_error_set(err, SIM_ERR_INTERNAL, path, 0, "tier list too long");
        used += (size_t)n;
    }
    if (memory_bytes > 0)
        snprintf(capacity, sizeof capacity, "capacity=\"%.6gGB\" ", memory_bytes / 1e9);

    int fd = mkstemp(tmp);
    if (fd < 0)
        return sim_error_set(err, SIM_ERR_IO, path, 0, "cannot create a file next to it: %s",
                             strerror(errno));
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask); /* mkstemp makes 0600; a catalog is ordinary data */
    FILE *f = fdopen(fd, "w");
    if (!f) {
        int e = errno;
        close(fd);
        unlink(tmp);
        return sim_error_set(err, SIM_ERR_IO, path, 0, "cannot write: %s", strerror(e));
    }
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<!--\n"
            "  Written by dcsim calibrate on %s, %s: this machine's CPU (%u threads,\n"
            "  FP32 GEMM via %s) fitted to dcsim's GEMM model (models/compute.h).\n"
            "  rate: the fitted effective FP32 rate, so gemm-efficiency is 100 %%.\n"
            "  bandwidth: the largest fitted tier bandwidth, and efficiency-by-size\n"
            "    each tier's fitted bandwidth as a fraction of it (tiers by the GEMM's\n"
            "    bytes, from this CPU's caches), so no default efficiency applies:\n",
            safe_host, safe_date, threads, safe_backend);
    for (unsigned i = 0; i < n_tiers; i++)
        fprintf(f, "    from %s: %.9g B/s%s\n", tier_sizes[i], g->tier_bytes_per_s[i],
                g->tier_from[i] != i && g->tier_from[i] < n_tiers
                    ? " (no memory-bound point: a neighbour's value)" : "");
    fprintf(f,
            "  launch-overhead: the fitted fixed cost per call.\n"
            "  capacity (when present): the machine's memory as the OS reports it.\n"
            "  Not written, no place in the catalog: the fit's tile %ux%u with sms = %u\n"
            "    (0: no quantisation). dcsim pairs <compute sms> with its GPU tile\n"
            "    %ux%u, far too coarse for a CPU, so sms is left out and dcsim\n"
            "    quantises nothing.\n",
            g->tile_m, g->tile_n, g->sms, HW_TILE_M, HW_TILE_N);
    for (size_t i = 0; colls && i < n_colls; i++) {
        const calib_coll_model *c = &colls[i];
        unsigned n = c->bw.n_tiers ? c->bw.n_tiers : 1;
        fprintf(f, "  All-reduce %s across %u threads (models/collective.h): alpha = %.6g s,\n"
                   "    B by bytes per thread:\n",
                coll_algorithm_name(c->alg), c->ranks, c->alpha_s);
        for (unsigned t = 0; t < n && t < COLL_BW_TIERS; t++) {
            char size_text[32];
            format_size(t == 0 ? 0.0 : c->bw.min_bytes[t], size_text, sizeof size_text);
            fprintf(f, "    from %s: %.6g B/s\n", size_text, c->bw.bytes_per_s[t]);
        }
    }
    const char *src_fmt = "confidence=\"D\" source=\"dcsim calibrate on %s, %s\"";
    char src[256];
    snprintf(src, sizeof src, src_fmt, safe_host, safe_date);
    fprintf(f,
            "-->\n"
            "<gpus>\n"
            "  <gpu name=\"cpu-calibrated\" description=\"CPU of %s, %u threads, FP32 GEMM via %s\">\n"
            "    <peak precision=\"fp32\" rate=\"%s\" gemm-efficiency=\"100%%\" %s/>\n"
            "    <memory %sbandwidth=\"%s\" efficiency-by-size=\"%s\" %s/>\n"
            "    <compute launch-overhead=\"%s\" %s/>\n"
            "  </gpu>\n"
            "</gpus>\n",
            safe_host, threads, safe_backend, rate, src, capacity, bw, tiers, src, launch, src);
    int is_bad = ferror(f);
    is_bad |= fflush(f) != 0;
    int e = errno;
    is_bad |= fclose(f) != 0;
    if (is_bad) {
        unlink(tmp);
        return sim_error_set(err, SIM_ERR_IO, path, 0, "cannot write: %s", strerror(e));
    }
    if (rename(tmp, path) != 0) {
        e = errno;
        unlink(tmp);
        return sim_error_set(err, SIM_ERR_IO, path, 0, "cannot rename %s into place: %s", tmp,
                             strerror(e));
    }
    return 0;
}
