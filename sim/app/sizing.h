/* sizing.h - the sizing commands: `dcsim fit` (training memory per pipeline
 * stage of a scenario) and `dcsim size` (GPUs and concurrent sequences to
 * serve a model). argv excludes the command word; they return the exit
 * status. */
#ifndef DCSIM_APP_SIZING_H
#define DCSIM_APP_SIZING_H

int cmd_fit(int argc, char **argv);
int cmd_size(int argc, char **argv);

extern const char usage_fit[];
extern const char usage_size[];

#endif
