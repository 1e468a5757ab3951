/* stepjson.h - `dcsim step --json` and `--csv`: one iteration's profile as
 * the dcsim/1 document (docs/json.md "step"), and its stage table as CSV.
 * Moved out of stepcmd.c, which prints the text. */
#ifndef DCSIM_APP_STEPJSON_H
#define DCSIM_APP_STEPJSON_H

#include "outpath.h"
#include "packet_trace.h"
#include "packetcfg.h"
#include "stepfail.h"
#include "steptier.h"

/* -o FILE.h5 with --network packet: the target and the bins asked */
typedef struct step_trace {
    int has;
    outpath out;
    packet_trace_bins_out bins;
} step_trace;

/* The profile as JSON (csv 0) or its "stages" table as CSV, a row per
 * pipeline stage (csv 1) on stdout. flows: add the flow log; pc and tr: the
 * packet network's (with --network packet); fx: the failed iteration's
 * comparison (--fail), or NULL. Returns 0, or 1 (the error printed). */
int step_json_emit(const step_profile *p, int flows, const app_packet_cfg *pc,
                   const step_trace *tr, const ff_state *st, const app_step_failure *fx, int csv);

#endif
