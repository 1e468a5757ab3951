/* precision.c - names and widths of numeric formats (see precision.h). */
#include "precision.h"

#include <string.h>

static const char *const names[PREC_COUNT] = {"fp32", "tf32", "bf16", "fp16",
                                              "fp8",  "fp4",  "int8"};
/* tf32 is a tensor-core input format stored as fp32 */
static const double widths[PREC_COUNT] = {4, 4, 2, 2, 1, 0.5, 1};

const char *precision_name(int p)
{
    return p >= 0 && p < PREC_COUNT ? names[p] : "?";
}

int precision_parse(const char *name, enum precision *out)
{
    for (int p = 0; p < PREC_COUNT; p++)
        if (strcmp(name, names[p]) == 0) {
            *out = (enum precision)p;
            return 0;
        }
    return -1;
}

double precision_bytes(int p)
{
    return p >= 0 && p < PREC_COUNT ? widths[p] : 0;
}
