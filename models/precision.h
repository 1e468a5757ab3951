/* precision.h - numeric formats a model can train or serve in. Values are
 * stored in traces and catalogs by name: append only. */
#ifndef DCSIM_MODELS_PRECISION_H
#define DCSIM_MODELS_PRECISION_H

enum precision {
    PREC_FP32 = 0,
    PREC_TF32,
    PREC_BF16,
    PREC_FP16,
    PREC_FP8,
    PREC_FP4,
    PREC_INT8,
    PREC_COUNT
};

/* "bf16", ...; "?" when out of range */
const char *precision_name(int p);
/* 0 and *out set, or -1 for an unknown name */
int precision_parse(const char *name, enum precision *out);
/* storage bytes per element: fp32/tf32 4, bf16/fp16 2, fp8/int8 1, fp4 0.5 */
double precision_bytes(int p);

#endif
