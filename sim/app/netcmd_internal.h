/* netcmd_internal.h - what netcmd.c (`dcsim topo`, `dcsim netbench`) shares
 * with netpacket.c (`dcsim netbench --tier packet`): the parsed options, the
 * fabric loader and the size parser. */
#ifndef DCSIM_APP_NETCMD_INTERNAL_H
#define DCSIM_APP_NETCMD_INTERNAL_H

#include "cli.h"
#include "fabric.h"
#include "outpath.h"
#include "packet_bench.h"
#include "packet_series.h"
#include "packetcfg.h"
#include "scenario.h"

typedef struct net_options {
    const char *path;
    cli_sets sets;
    int json, csv, quiet, analytic;
    const char *export_path;
    const char *op, *algo, *ranks, *min, *max, *factor;
    const char *tier, *bytes, *mtu, *buffer, *hop_latency, *ibcc; /* --tier packet */
    const char *output, *bin, *bins; /* --tier packet -o FILE.h5: the time series */
    int argc;                        /* the command's arguments (for the trace's command) */
    char **argv;
    const char *loss, *rto; /* --tier packet, RoCE: lossy mode and its timeout */
    const char *reorder;    /* --tier packet: the receiving NIC (in-order, out-of-order) */
    int dcqcn;              /* --tier packet, RoCE: DCQCN (the published set) */
    int adaptive;           /* --tier packet: per-packet routing (--adaptive) */
    const char *candidates; /* --tier packet --adaptive on a Dragonfly: --valiant-candidates */
    const char *ugal;       /* --tier packet --adaptive on a Dragonfly: --ugal local|global */
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

/* The phenomena ops of --tier packet (netphen.c, docs/fabric.md "Phenomena"). */
enum phen_op { PHEN_NONE = 0, PHEN_SWEEP, PHEN_VICTIM, PHEN_STALL, PHEN_COLLISION, PHEN_LOSSY,
               PHEN_REORDER, PHEN_FIDELITY };

/* What the packet tier runs with, and where each value came from. */
typedef struct packet_spec {
    enum pkb_op op;
    enum phen_op phen;
    int is_coll;            /* a collective (coll, algo) instead of a pattern (op) */
    int csv;                /* --csv: the JSON document printed as one table */
    enum nc_collective coll;
    enum nc_algorithm algo;
    unsigned ranks, stride; /* rank r is GPU r x stride: one per node */
    double bytes;
    app_packet_cfg pc;      /* the tier's parameters and where each came from */
    pkt_config cfg;         /* pc.cfg */
    double bdp_rate_bytes_per_s; /* pc's: the fabric link's (effective) */
    /* -o FILE.h5: the run's time series (packet_series.h, packet_trace.h) */
    int has_trace;
    outpath trace_out;           /* checked before the run */
    pkt_series_request series;   /* dt and bins asked; the series after the run */
    char dt_from[160], bins_from[160];
    char rto_from[80];      /* --rto TIME (lossy modes, the in-order receiver) */
    int has_reorder;        /* --reorder given: print the receiver's counters */
    const topo_graph *graph;/* a collective's fabric graph (set by its run: SHARP's tree) */
} packet_spec;

enum phen_op phen_parse(const char *name); /* PHEN_NONE when not a phenomenon */
const char *phen_name(enum phen_op op);
/* The mtu, buffer, latency and PFC lines of the header (netpacket.c). */
void packet_print_params(const packet_spec *p);
/* -o FILE.h5 after a run: write p->series.series and free it. alg: the
 * collective's algorithm name or NULL; digest, events: the packet run's.
 * Returns 0 or the exit status of the error printed. */
int packet_trace_finish(const net_options *o, const scn_scenario *s, const fabric *f,
                        packet_spec *p, const char *op, const char *alg, uint64_t digest,
                        uint64_t events, double end_s);
/* Print a JSON document and free it. */
struct cJSON;
/* Shared by the patterns (netpacket.c) and the collectives
 * (netpacket_coll.c): the memory check of a run of at least min_hops
 * packet-hops and path_bytes more (a Dragonfly's per-packet routing: the
 * messages' Valiant paths; 0 or the exit status printed), the receiver-order and
 * congestion-control counters (text line, JSON members), the parameters'
 * JSON members. */
int packet_memory_check(const scn_scenario *s, double min_hops, double path_bytes);
void packet_print_reorder(const pkt_net_stats *st);
void packet_json_reorder(struct cJSON *o, const pkt_config *c, const pkt_net_stats *st);
void packet_print_congestion(const pkt_config *c, const pkt_net_stats *st);
void packet_json_congestion(struct cJSON *o, const pkt_config *c, const pkt_net_stats *st);
void packet_json_params(struct cJSON *o, const scn_scenario *s, const packet_spec *p);
/* --op allreduce|allgather|reducescatter: the exit status. */
int netbench_packet_coll(const net_options *o, const scn_scenario *s, fabric *f,
                         packet_spec *p);
/* The lossy modes' counters: one text line, or JSON members of o. */
void packet_print_loss(const pkt_net_stats *st);
void packet_json_loss(struct cJSON *o, const pkt_net_stats *st);
int packet_json_print(const packet_spec *p, struct cJSON *o);
/* Run and print a phenomenon (p->phen): the exit status. */
int netbench_phenomenon(const net_options *o, const scn_scenario *s, const fabric *f,
                        const packet_spec *p);
/* --op fidelity (netfidelity.c): measure the multi-fidelity table, print it
 * and, with -o, write it as a <fidelity> element. 0, -1 (input, why set) or
 * another exit status already printed. */
int netbench_fidelity(const net_options *o, const scn_scenario *s, const fabric *f,
                      const packet_spec *p, char *why, size_t why_size);

#endif
