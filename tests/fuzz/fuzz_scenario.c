/* fuzz_scenario.c - fuzz target for the scenario loader (sim/app/scenario.c):
 * the input is a scenario file, loaded (parse, XInclude, XSD, semantic
 * checks) and freed. No simulation runs.
 *
 * Invariant that keeps runs repeatable: libxml2 may open only the files of a
 * private directory made at start-up, the input (scenario.xml) and a fixed
 * GPU catalog for XInclude (lab-gpus.xml). An XInclude of an absolute path,
 * a "../" path or a URL fails like a missing file (and XML_PARSE_NONET is
 * the loader's own rule), so no input reads the machine's other files.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libxml/globals.h>
#include <libxml/xmlIO.h>

#include "scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* tests/scenarios/xinclude/lab-gpus.xml, shortened */
static const char lab_gpus[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<gpus>\n"
    "  <gpu name=\"LAB-GPU\" description=\"a test accelerator\">\n"
    "    <peak precision=\"bf16\" rate=\"100TFLOP/s\" confidence=\"A\" source=\"test\"/>\n"
    "  </gpu>\n"
    "  <gpu name=\"TIERED-GPU\" description=\"memory efficiency by transfer size\">\n"
    "    <peak precision=\"bf16\" rate=\"100TFLOP/s\" gemm-efficiency=\"80%\" confidence=\"A\""
    " source=\"test\"/>\n"
    "    <memory capacity=\"16GB\" bandwidth=\"1TB/s\" efficiency-by-size=\"0B:25% 4MiB:50%"
    " 64MiB:100%\" confidence=\"A\" source=\"test\"/>\n"
    "  </gpu>\n"
    "</gpus>\n";

static char dir[64];
static char input_path[96], include_path[96];

static void remove_dir(void)
{
    unlink(input_path);
    unlink(include_path);
    rmdir(dir);
}

static int write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t n = fwrite(data, 1, size, f);
    return fclose(f) == 0 && n == size ? 0 : -1;
}

/* libxml2's file opener, refusing everything outside dir */
static xmlParserInputBufferPtr open_private(const char *uri, xmlCharEncoding enc)
{
    const char *p = uri;
    size_t dlen = strlen(dir);
    if (strncmp(p, "file://", 7) == 0)
        p += 7;
    if (strncmp(p, dir, dlen) != 0 || p[dlen] != '/' || strchr(p + dlen + 1, '/') ||
        strstr(p, "..") || strchr(p, '%'))
        return NULL;
    return __xmlParserInputBufferCreateFilename(p, enc);
}

static void setup(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/dcsim-fuzz-XXXXXX", tmp && strlen(tmp) < 40 ? tmp : "/tmp");
    if (!mkdtemp(dir))
        abort();
    snprintf(input_path, sizeof input_path, "%s/scenario.xml", dir);
    snprintf(include_path, sizeof include_path, "%s/lab-gpus.xml", dir);
    if (write_file(include_path, lab_gpus, sizeof lab_gpus - 1))
        abort();
    atexit(remove_dir);
    xmlParserInputBufferCreateFilenameDefault(open_private);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        setup();
        ready = 1;
    }
    if (write_file(input_path, data, size))
        abort();
    scn_scenario scn;
    sim_error err;
    sim_error_clear(&err);
    int rc = scn_load(input_path, NULL, 0, &scn, &err);
    if (rc == 0) {
        if (!scn.resolved_xml)
            abort(); /* a loaded scenario carries its resolved text */
        scn_scenario_free(&scn);
    } else if (!err.msg[0]) {
        abort(); /* every failure says why */
    }
    return 0;
}
