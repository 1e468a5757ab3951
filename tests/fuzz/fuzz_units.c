/* fuzz_units.c - fuzz target for the quantity parser (sim/engine/units.c).
 *
 * Input: byte 0 picks the dimension (one past the last too, to exercise the
 * "unknown dimension" path), byte 1 the size of the message buffer (0 = no
 * buffer), the rest is the text. Checked on every input: a success writes a
 * finite number, a failure leaves the output untouched, and the message is
 * NUL-terminated inside its (exactly sized, so ASan sees overruns) buffer.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    enum sim_dim dim = (enum sim_dim)(data[0] % (SIM_DIM_COUNT_OF_DIMS + 1));
    size_t why_size = data[1];
    char *text = malloc(size - 2 + 1);
    char *why = why_size ? malloc(why_size) : NULL;
    if (!text || (why_size && !why))
        abort();
    memcpy(text, data + 2, size - 2);
    text[size - 2] = '\0';

    const double untouched = -12345.678;
    double si = untouched;
    int rc = sim_units_parse(text, dim, &si, why, why_size);
    if (rc == 0 && !isfinite(si))
        abort(); /* a quantity must be a finite number */
    if (rc != 0 && si != untouched)
        abort(); /* a failure must not write the output */
    if (rc != 0 && why && !memchr(why, '\0', why_size))
        abort(); /* the reason must be a terminated string */

    /* the unit list for messages, into a buffer of the same fuzzed size */
    if (why) {
        sim_dim_units(dim, why, why_size);
        if (!memchr(why, '\0', why_size))
            abort();
    }
    if (!sim_dim_name(dim))
        abort();
    free(why);
    free(text);
    return 0;
}
