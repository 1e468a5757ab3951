/* scenario.h - load a dcsim scenario: parse (libxml2), XInclude, --set
 * overrides, XSD validation, then semantic checks, into config structs.
 *
 * Errors are compiler-style with the file and line of the offending element
 * (or the --set option that produced the value):
 *   default.xml:12: error: <training tokens="-5T">: tokens must be positive
 * The schema, the GPU catalog and the default scenario are compiled in, so
 * loading works from any directory.
 */
#ifndef DCSIM_APP_SCENARIO_H
#define DCSIM_APP_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include "campaign.h"
#include "error.h"

enum scn_precision {
    SCN_PREC_FP32, SCN_PREC_TF32, SCN_PREC_BF16, SCN_PREC_FP16, SCN_PREC_FP8, SCN_PREC_FP4,
    SCN_PREC_COUNT
};

typedef struct scn_gpu_type {
    char name[64];
    char description[160];
    double peak_flops_per_s[SCN_PREC_COUNT]; /* 0 = not in the catalog */
    double hbm_bytes;                        /* 0 = unknown */
    double hbm_bytes_per_s;                  /* 0 = unknown */
    double tdp_w;                            /* 0 = unknown */
} scn_gpu_type;

typedef struct scn_scenario {
    char source[512];        /* the path given, or "default.xml" for the built-in one */
    char name[64];          /* <dcsim name>, or "" */
    uint64_t seed;
    scn_gpu_type gpu;       /* the resolved catalog entry */
    enum scn_precision precision;
    char model_name[64];
    campaign_config campaign;
    char *resolved_xml;     /* after XInclude and --set; owned, NUL-terminated */
    size_t resolved_xml_len;
} scn_scenario;

/* Load path, or the built-in default scenario when path is NULL. sets are
 * "PATH=VALUE" strings (PATH like checkpoint/@interval, relative to <dcsim>),
 * applied in order. On success returns 0 and fills *out (free with
 * scn_scenario_free); on failure returns SIM_ERR_INPUT or SIM_ERR_IO with err
 * set and *out zeroed. */
int scn_load(const char *path, const char *const *sets, size_t n_sets, scn_scenario *out,
             sim_error *err);

void scn_scenario_free(scn_scenario *s);

/* The compiled-in default scenario text (scenarios/examples/default.xml). */
const char *scn_default_xml(size_t *len);

const char *scn_precision_name(enum scn_precision p);

#endif
