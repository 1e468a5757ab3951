/* goodput.h - `dcsim goodput`: the goodput (ETTR) curve over the checkpoint
 * interval and its optimum, from Monte Carlo replicas. argv excludes the
 * command word; returns the exit status. */
#ifndef DCSIM_APP_GOODPUT_H
#define DCSIM_APP_GOODPUT_H

int cmd_goodput(int argc, char **argv);
extern const char usage_goodput[];

#endif
