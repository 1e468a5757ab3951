/* nccl_tuning.h - NCCL's algorithm and protocol selection: its tuning model
 * (src/graph/tuning.cc at b6475625; shared/reference/hardware.md 7.2-7.3, V),
 * a pure function of the collective, ranks, nodes, bytes and bandwidths.
 *
 * For every (algorithm, protocol) the hardware allows it predicts
 *   time = latency + bytes / algbw
 * with NCCL's latency (baseLat + steps x hwLat, per algorithm) and NCCL's
 * bandwidth (busBw = per-GPU bandwidth x protocol/algorithm factors, then
 * algbw = busBw x ratio), and picks the fastest in NCCL's order (Tree, Ring,
 * CollNetDirect, CollNetChain, NVLS, NVLSTree; LL, LL128, Simple; a later
 * entry wins only when strictly faster). docs/fabric.md lists the constants,
 * which of NCCL's refinements the sheets lack and what is used instead.
 */
#ifndef DCSIM_MODELS_NCCL_TUNING_H
#define DCSIM_MODELS_NCCL_TUNING_H

#include "netcoll.h"

enum nccl_algo { NCCL_ALGO_TREE = 0, NCCL_ALGO_RING, NCCL_ALGO_COLLNET_DIRECT,
                 NCCL_ALGO_COLLNET_CHAIN, NCCL_ALGO_NVLS, NCCL_ALGO_NVLS_TREE, NCCL_ALGO_COUNT };
enum nccl_proto { NCCL_PROTO_LL = 0, NCCL_PROTO_LL128, NCCL_PROTO_SIMPLE, NCCL_PROTO_COUNT };

/* What the tuner sees. Bandwidths are per GPU and effective (rate x
 * efficiency). Latencies of 0 take NCCL's defaults (never "free"). */
typedef struct nccl_tune_in {
    enum nc_collective coll;
    unsigned ranks, nodes;          /* ranks >= 2, 1 <= nodes <= ranks; ppn = ranks / nodes */
    double bytes;                   /* nccl-tests' S */
    double intra_bytes_per_s;       /* scale-up (NVLink) per GPU; 0: none (PCI/NIC only) */
    double inter_bytes_per_s;       /* the GPU's NIC(s) */
    unsigned channels;              /* 0: the rule of nccl_tune_channels */
    double intra_ring_simple_lat_s; /* Ring/Simple hwLat of the scale-up link (0: 3.4 us) */
    double inter_ring_simple_lat_s; /* Ring/Simple hwLat of the network (0: 14 us) */
    double intra_wire_latency_s;    /* floor under every intra-node step (0: none) */
    double inter_wire_latency_s;    /* floor under every network step (0: none) */
    double net_overhead_s;          /* per network step (0: 1 us, Intel host CPUs) */
    unsigned gpus_per_nic;          /* CollNetDirect's GPU/NIC factor (0: 1) */
    int has_nvls;                   /* NVLink SHARP in the ranks' scale-up domain */
    int has_collnet;                /* SHARP in the fabric */
    int whole_domains;              /* ranks fill >= 2 whole scale-up domains (NVLSTree) */
    int is_latency_free;            /* tests only: every latency 0 (bandwidth alone picks) */
} nccl_tune_in;

typedef struct nccl_tune_out {
    /* per (algorithm, protocol): INFINITY where not allowed */
    double time_s[NCCL_ALGO_COUNT][NCCL_PROTO_COUNT];
    double latency_s[NCCL_ALGO_COUNT][NCCL_PROTO_COUNT];
    double algbw_bytes_per_s[NCCL_ALGO_COUNT][NCCL_PROTO_COUNT];
    enum nccl_algo algo;            /* the pick */
    enum nccl_proto proto;
    unsigned channels;              /* the channel count used */
} nccl_tune_out;

/* NCCL's channel count is not in the reference sheets; the rule used: the
 * fewest channels whose per-channel Tree/Simple cap (perChMaxTreeBw, 36 GB/s,
 * hardware.md 7.3) carries the GPU's bandwidth, at least 2 (one per tree of
 * the double binary tree). in->channels > 0 overrides it. */
unsigned nccl_tune_channels(const nccl_tune_in *in);

/* Fill out for in; 0, or -1 when in is not valid (ranks < 2, nodes out of
 * range, bytes negative or not finite, no positive bandwidth, or a
 * collective NCCL's tuner does not cover: all-to-all, send/recv). */
int nccl_tune(const nccl_tune_in *in, nccl_tune_out *out);

/* Wire efficiency of a protocol: LL 50 % (8 B data per 16 B line), LL128
 * 93.75 % (120 of 128 B), Simple 100 % (components.md 4.3, D). */
double nccl_proto_wire_efficiency(enum nccl_proto p);

/* hwLat of table 7.3 in seconds: NVLink (net = 0) or NET (net = 1); NaN
 * where the sheet has none. */
double nccl_hw_latency_s(int net, enum nccl_algo a, enum nccl_proto p);

const char *nccl_algo_name(int a);   /* "tree", "ring", "collnet-direct", ...; "?" */
const char *nccl_proto_name(int p);  /* "LL", "LL128", "Simple"; "?" */

#endif
