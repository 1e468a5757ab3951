/* packet_trace.h - one packet run's per-link time series
 * (models/packet_series.h) in HDF5: /packet (the tier's parameters),
 * /packet/links (one row per directed link that carried traffic: id, ends,
 * tiers, rate, end-of-run counters) and /packet/series (bin edges and
 * [bins x those links] columns, units in attributes). `dcsim netbench
 * --tier packet -o` and `dcsim step --network packet -o` write a file of
 * them with a run trace's root attributes (FILE.tmp.<pid>, renamed:
 * outpath.h); `dcsim run -o` puts the groups in its trace
 * (docs/trace-format.md "/packet").
 */
#ifndef DCSIM_APP_PACKET_TRACE_H
#define DCSIM_APP_PACKET_TRACE_H

#include <stdint.h>

#include <hdf5.h>

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
    const char *kind;             /* the root "kind"; NULL: "netbench --tier packet" */
} packet_trace_meta;

/* The default and largest most bins of a series (--bins). */
#define TRACE_DEFAULT_BINS 256u
#define TRACE_MAX_BINS 1048576u

/* --bin TIME and --bins N of `command` (NULL: not given): the first bin
 * (default one MTU on the fabric link, the rule printed from dt_from) and
 * the most bins (default TRACE_DEFAULT_BINS). 0 or the exit status of the
 * usage error printed. */
typedef struct packet_trace_bins_out {
    double dt_s;
    uint32_t max_bins;
    char dt_from[160], bins_from[160];
} packet_trace_bins_out;
int packet_trace_bins(const char *command, const char *bin, const char *bins, double mtu_bytes,
                      double link_bytes_per_s, packet_trace_bins_out *out);

/* /packet, /packet/links and /packet/series of series s over graph g into
 * the open file f (no root attributes). NULL, or what failed ("writing
 * /packet/series"). */
const char *packet_trace_put(hid_t f, const topo_graph *g, const pkt_series *s,
                             const packet_trace_meta *m);

/* Write series s of a net over graph g into op's temporary and rename it
 * over op's path (op from outpath_init, before the run). Returns 0, or the
 * error code with err filled; the temporary is removed on failure. */
int packet_trace_write(outpath *op, const topo_graph *g, const pkt_series *s,
                       const packet_trace_meta *m, sim_error *err);

#endif
