/* clustercmd.h - `dcsim cluster` (clustercmd.c): a job stream on the
 * cluster. argv excludes the command word; returns the exit status. */
#ifndef DCSIM_APP_CLUSTERCMD_H
#define DCSIM_APP_CLUSTERCMD_H

int cmd_cluster(int argc, char **argv);

extern const char usage_cluster[];

#endif
