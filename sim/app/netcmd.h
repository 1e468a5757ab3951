/* netcmd.h - the network commands: `dcsim topo` (what a scenario's fabric
 * is made of, and an export for graph tools) and `dcsim netbench` (an
 * nccl-tests-style sweep of one collective on the fabric). argv excludes
 * the command word; they return the exit status. */
#ifndef DCSIM_APP_NETCMD_H
#define DCSIM_APP_NETCMD_H

int cmd_topo(int argc, char **argv);
int cmd_netbench(int argc, char **argv);

extern const char usage_topo[];
extern const char usage_netbench[];

#endif
