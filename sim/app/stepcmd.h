/* stepcmd.h - `dcsim step`: prints one iteration's profile (the step tier
 * from a scenario is steptier.h; its coupling to the campaign, run.h). */
#ifndef DCSIM_APP_STEPCMD_H
#define DCSIM_APP_STEPCMD_H

int cmd_step(int argc, char **argv);
extern const char usage_step[];

#endif
