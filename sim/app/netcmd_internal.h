/* netcmd_internal.h - what netcmd.c (`dcsim topo`, `dcsim netbench`) shares
 * with netpacket.c (`dcsim netbench --tier packet`): the parsed options, the
 * fabric loader and the size parser. */
#ifndef DCSIM_APP_NETCMD_INTERNAL_H
#define DCSIM_APP_NETCMD_INTERNAL_H

#include "cli.h"
#include "fabric.h"
#include "scenario.h"

typedef struct net_options {
    const char *path;
    cli_sets sets;
    int json, quiet, analytic;
    const char *export_path;
    const char *op, *algo, *ranks, *min, *max, *factor;
    const char *tier, *bytes, *mtu, *buffer, *hop_latency; /* --tier packet */
} net_options;

/* The largest message, 1 TiB: far above any model's gradients or
 * activations, and small enough that counts print exactly. */
#define NETBENCH_MAX_BYTES 1099511627776.0

/* Load the scenario and build its fabric. Returns 0 or an exit status (the
 * error printed); on 0 the caller frees both. */
int netcmd_load_fabric(const net_options *o, scn_scenario *s, fabric *f);

/* "8", "64K", "8G" (binary, nccl-tests) or a dcsim data quantity ("8GB"):
 * 0, or -1 when text is none of these or negative. */
int netcmd_parse_size(const char *text, double *out);

/* `dcsim netbench --tier packet` (netpacket.c): the exit status. */
int netbench_packet(const net_options *o);

#endif
