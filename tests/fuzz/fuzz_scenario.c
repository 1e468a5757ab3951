/* fuzz_scenario.c - fuzz target for the scenario loader (sim/app/scenario/):
 * the input is a scenario file, loaded (parse, XInclude, XSD, semantic
 * checks) and freed. No simulation runs.
 *
 * libxml2 opens only the files of a private directory (fuzz_sandbox.h), so
 * runs are repeatable and no input reads the machine's other files.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_sandbox.h"
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    scn_scenario scn;
    if (fuzz_load_input(lab_gpus, sizeof lab_gpus - 1, data, size, &scn) == 0)
        scn_scenario_free(&scn);
    return 0;
}
