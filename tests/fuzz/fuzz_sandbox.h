/* fuzz_sandbox.h - the private directory the XML fuzz targets load from
 * (fuzz_scenario.c, fuzz_run.c), header-only so each target stays one file.
 *
 * Invariant that keeps runs repeatable: libxml2 may open only the files of a
 * directory made at start-up: the input (scenario.xml) and a fixed GPU
 * catalog for XInclude (lab-gpus.xml). An XInclude of an absolute path, a
 * "../" path or a URL fails like a missing file (and XML_PARSE_NONET is the
 * loader's own rule), so no input reads the machine's other files.
 */
#ifndef DCSIM_FUZZ_SANDBOX_H
#define DCSIM_FUZZ_SANDBOX_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libxml/globals.h>
#include <libxml/xmlIO.h>

#include "error.h"
#include "scenario.h"

static char fuzz_dir[64];
static char fuzz_input_path[96], fuzz_include_path[96];

static void fuzz_remove_dir(void)
{
    unlink(fuzz_input_path);
    unlink(fuzz_include_path);
    rmdir(fuzz_dir);
}

static int fuzz_write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t n = fwrite(data, 1, size, f);
    return fclose(f) == 0 && n == size ? 0 : -1;
}

/* libxml2's file opener, refusing everything outside fuzz_dir */
static xmlParserInputBufferPtr fuzz_open_private(const char *uri, xmlCharEncoding enc)
{
    const char *p = uri;
    size_t dlen = strlen(fuzz_dir);
    if (strncmp(p, "file://", 7) == 0)
        p += 7;
    if (strncmp(p, fuzz_dir, dlen) != 0 || p[dlen] != '/' || strchr(p + dlen + 1, '/') ||
        strstr(p, "..") || strchr(p, '%'))
        return NULL;
    return __xmlParserInputBufferCreateFilename(p, enc);
}

/* Make the directory with catalog (a <gpus> document) as lab-gpus.xml,
 * removed at exit, and route libxml2's file opening through it. */
static void fuzz_sandbox_setup(const char *catalog, size_t catalog_len)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(fuzz_dir, sizeof fuzz_dir, "%s/dcsim-fuzz-XXXXXX",
             tmp && strlen(tmp) < 40 ? tmp : "/tmp");
    if (!mkdtemp(fuzz_dir))
        abort();
    snprintf(fuzz_input_path, sizeof fuzz_input_path, "%s/scenario.xml", fuzz_dir);
    snprintf(fuzz_include_path, sizeof fuzz_include_path, "%s/lab-gpus.xml", fuzz_dir);
    if (fuzz_write_file(fuzz_include_path, catalog, catalog_len))
        abort();
    atexit(fuzz_remove_dir);
    xmlParserInputBufferCreateFilenameDefault(fuzz_open_private);
}

/* One fuzz input as a scenario: the sandbox made on the first call (with
 * catalog as lab-gpus.xml), data written as scenario.xml and loaded. Returns
 * 0 with *scn loaded (the caller frees it), or -1 when the loader refused.
 * Aborts on what must never happen: a loaded scenario without its resolved
 * text, a refusal that does not say why. */
static int fuzz_load_input(const char *catalog, size_t catalog_len, const uint8_t *data,
                           size_t size, scn_scenario *scn)
{
    if (!fuzz_dir[0])
        fuzz_sandbox_setup(catalog, catalog_len);
    if (fuzz_write_file(fuzz_input_path, data, size))
        abort();
    sim_error err;
    sim_error_clear(&err);
    if (scn_load(fuzz_input_path, NULL, 0, scn, &err)) {
        if (!err.msg[0])
            abort(); /* every failure says why */
        return -1;
    }
    if (!scn->resolved_xml)
        abort(); /* a loaded scenario carries its resolved text */
    return 0;
}

#endif
