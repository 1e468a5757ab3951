/* fuzz_set.c - fuzz target for the --set path parser and what it feeds:
 * the built-in default scenario is loaded with the input as --set options
 * (split at newlines, at most 4, each "PATH=VALUE"), so a fuzzed path walks
 * the tree and a fuzzed value reaches the XSD and the semantic checks.
 * Load and validate only: no simulation runs.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_SETS = 4 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096) /* an option longer than this is not a --set anyone types */
        return 0;
    char *text = malloc(size + 1);
    if (!text)
        abort();
    memcpy(text, data, size);
    text[size] = '\0';

    const char *sets[MAX_SETS];
    size_t n_sets = 0;
    for (char *p = text; n_sets < MAX_SETS;) {
        sets[n_sets++] = p;
        char *nl = strchr(p, '\n');
        if (!nl)
            break;
        *nl = '\0';
        p = nl + 1;
    }

    scn_scenario scn;
    sim_error err;
    sim_error_clear(&err);
    int rc = scn_load(NULL, sets, n_sets, &scn, &err);
    if (rc == 0) {
        if (!scn.resolved_xml)
            abort(); /* a loaded scenario carries its resolved text */
        scn_scenario_free(&scn);
    } else if (!err.msg[0]) {
        abort(); /* every failure says why */
    }
    free(text);
    return 0;
}
