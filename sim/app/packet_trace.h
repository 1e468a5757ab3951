/* packet_trace.h - `dcsim netbench --tier packet -o FILE.h5`: one packet
 * run's per-link time series (models/packet_series.h) as an HDF5 file:
 * /packet (the tier's parameters), /packet/links (one row per directed
 * link: ends, tiers, rate, end-of-run counters) and /packet/series (bin
 * edges and [bins x links] columns, units in attributes), with the root
 * attributes of a run trace (docs/trace-format.md "/packet"). Written as
 * FILE.tmp.<pid> and renamed (outpath.h).
 */
#ifndef DCSIM_APP_PACKET_TRACE_H
#define DCSIM_APP_PACKET_TRACE_H

#include <stdint.h>

#include "error.h"
#include "graph.h"
#include "outpath.h"
#include "packet.h"
#include "packet_series.h"

typedef struct packet_trace_meta {
    const char *command;          /* the command line, for the root attribute */
    const char *op;               /* "incast", "allreduce", ... */
    const char *algo;             /* a collective's algorithm, or NULL */
    const char *scenario_name, *scenario_source;
    uint64_t seed;                /* the scenario's (the packet tier draws ECN marks only) */
    uint64_t digest, events;      /* the packet run's engine digest and events */
    double end_s;                 /* the packet run's last event */
    const pkt_config *cfg;
} packet_trace_meta;

/* Write series s of a net over graph g into op's temporary and rename it
 * over op's path (op from outpath_init, before the run). Returns 0, or the
 * error code with err filled; the temporary is removed on failure. */
int packet_trace_write(outpath *op, const topo_graph *g, const pkt_series *s,
                       const packet_trace_meta *m, sim_error *err);

#endif
