/* netcmd_internal.h - what netcmd.c (`dcsim topo`, `dcsim netbench`) shares
 * with netpacket.c (`dcsim netbench --tier packet`): the parsed options, the
 * fabric loader and the size parser. */
#ifndef DCSIM_APP_NETCMD_INTERNAL_H
#define DCSIM_APP_NETCMD_INTERNAL_H

#include "cli.h"
#include "fabric.h"
#include "packet_bench.h"
#include "scenario.h"

typedef struct net_options {
    const char *path;
    cli_sets sets;
    int json, quiet, analytic;
    const char *export_path;
    const char *op, *algo, *ranks, *min, *max, *factor;
    const char *tier, *bytes, *mtu, *buffer, *hop_latency; /* --tier packet */
    const char *loss, *rto; /* --tier packet, RoCE: lossy mode and its timeout */
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
enum phen_op { PHEN_NONE = 0, PHEN_SWEEP, PHEN_VICTIM, PHEN_STALL, PHEN_COLLISION, PHEN_LOSSY };

/* What the packet tier runs with, and where each value came from. */
typedef struct packet_spec {
    enum pkb_op op;
    enum phen_op phen;
    int is_coll;            /* a collective (coll, algo) instead of a pattern (op) */
    enum nc_collective coll;
    enum nc_algorithm algo;
    unsigned ranks, stride; /* rank r is GPU r x stride: one per node */
    double bytes;
    pkt_config cfg;
    double bdp_rate_bytes_per_s; /* the fabric link's (effective) */
    char mtu_from[160], buffer_from[160], latency_from[160], pfc_rule[320];
    char rto_from[80];      /* --rto TIME (lossy modes) */
} packet_spec;

enum phen_op phen_parse(const char *name); /* PHEN_NONE when not a phenomenon */
const char *phen_name(enum phen_op op);
/* The mtu, buffer, latency and PFC lines of the header (netpacket.c). */
void packet_print_params(const packet_spec *p);
/* Print a JSON document and free it. */
struct cJSON;
/* The lossy modes' counters: one text line, or JSON members of o. */
void packet_print_loss(const pkt_net_stats *st);
void packet_json_loss(struct cJSON *o, const pkt_net_stats *st);
void packet_json_print(struct cJSON *o);
/* Run and print a phenomenon (p->phen): the exit status. */
int netbench_phenomenon(const net_options *o, const scn_scenario *s, const fabric *f,
                        const packet_spec *p);

#endif
