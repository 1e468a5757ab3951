/* stepcmd.h - `dcsim step`: prints one iteration's profile (the step tier
 * from a scenario is steptier.h; its coupling to the campaign, run.h). */
#ifndef DCSIM_APP_STEPCMD_H
#define DCSIM_APP_STEPCMD_H

#include <stddef.h>

int cmd_step(int argc, char **argv);

/* --flow-log N of `dcsim step` and `dcsim run`: a whole number from 0 to
 * STEP_FLOW_LOG_MAX into *out; 0, or the exit status of command's usage
 * error (printed) */
int step_parse_flow_log(const char *command, const char *v, size_t *out);
extern const char usage_step[];

#endif
