/* perfetto.h - one iteration of the step tier as a Trace Event Format JSON
 * file (`dcsim step --perfetto FILE.json`), which ui.perfetto.dev and
 * chrome://tracing open. The same profile gives the same bytes: no dates,
 * no pids, numbers printed as the shortest decimal that reads back exactly.
 * What the tracks are: docs/step.md.
 */
#ifndef DCSIM_APP_PERFETTO_H
#define DCSIM_APP_PERFETTO_H

#include "error.h"
#include "outpath.h"
#include "step.h"

/* Write p to op's temporary and rename it over op's path (outpath_commit);
 * op comes from outpath_init. Returns 0, or the error's code with err
 * filled and nothing left under either name: SIM_ERR_IO when the file
 * cannot be written, SIM_ERR_INPUT when the target stopped being a regular
 * file, SIM_ERR_INTERNAL when a time of p is not finite (a bug). */
int perfetto_write_step(outpath *op, const step_profile *p, sim_error *err);

#endif
