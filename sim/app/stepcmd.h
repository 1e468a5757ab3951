/* stepcmd.h - the step tier from a scenario: `dcsim step` prints one
 * iteration's profile; `dcsim run` uses it for the iteration time when the
 * scenario gives no MFU. */
#ifndef DCSIM_APP_STEPCMD_H
#define DCSIM_APP_STEPCMD_H

#include <stddef.h>

#include "scenario.h"
#include "step.h"

/* Simulate one iteration of the scenario's job on its cluster. Needs
 * <cluster><fabric> and <job><parallelism>. Returns 0, or -1 with a
 * one-line reason. Free the profile with step_profile_free. */
int app_step_profile(const scn_scenario *s, step_profile *out, char *why, size_t why_size);

int cmd_step(int argc, char **argv);
extern const char usage_step[];

#endif
