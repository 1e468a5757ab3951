/* packet_phenomena.h - the packet tier's phenomena (issue 19), each a
 * function that sets the experiment up, runs it and returns the figures
 * its test checks against a closed form (docs/fabric.md "Phenomena"):
 *   incast sweep   N -> 1 incast for several fan-ins (pkb_run's incast);
 *   victim         PFC congestion spreading: a flow that shares no
 *                  bottleneck with an incast is slowed by pauses; PFC,
 *                  PFC + DCQCN and IB credits side by side;
 *   stall          a stuck receiver (pkt_host_stall) and the pause storm
 *                  it sets off, PFC and IB side by side, over time;
 *   collision      ring neighbour elephants across leaves, ECMP with a
 *                  collision made certain by the route keys, against
 *                  per-packet adaptive routing and the ideal b/B;
 *   reorder        the collision ring with an in-order receiving NIC
 *                  (go-back-N on reordering) and an out-of-order one.
 * Victim and stall run on a one-spine leaf-spine of PKP_LEAVES leaves of
 * PKP_DOWN hosts, collision on a non-blocking leaf-spine of PKP_SPINES
 * spines; the caller gives the link rate and the tier's parameters (MTU,
 * buffer, hop latency; PFC thresholds by pkb_pfc_rule).
 */
#ifndef DCSIM_MODELS_PACKET_PHENOMENA_H
#define DCSIM_MODELS_PACKET_PHENOMENA_H

#include <stddef.h>
#include <stdint.h>

#include "packet.h"
#include "packet_bench.h"

#define PKP_LEAVES 4u   /* victim, stall: leaves of the one-spine leaf-spine */
#define PKP_DOWN 8u     /* hosts per leaf there */
#define PKP_MAX_FANIN (3 * (PKP_DOWN - 1)) /* victim: senders on leaves 1..3 in turn */
#define PKP_SPINES 4u   /* collision: spines = leaves = ranks per leaf */
#define PKP_MAX_SWEEP 8u

/* The DCQCN set the phenomena and --dcqcn use (components.md 5.1): ECN
 * Kmin 5 KB, Kmax 200 KB (DCQCN paper, S), Pmax 0.2, alpha timer 50 us, CNP
 * interval 50 us (the rate-decrease interval), RP timer 55 us (the HPCC
 * simulator's "paper" set, V), g = 1/256, F = 1, R_AI = 0.2 C Mb/s, R_HAI =
 * 2 C Mb/s, min rate 1 Gb/s (its Mellanox-firmware set, V; C = rate in
 * Gb/s), byte counter 10 MB (paper, S), alpha_init 1 (paper). */
void pkp_dcqcn_rule(double rate_bytes_per_s, uint64_t seed, pkt_dcqcn_config *out);

typedef struct pkp_incast_row {
    unsigned fanin;
    double time_s;            /* last message delivered */
    double goodput_bytes_per_s; /* the receiver's bytes / its last arrival */
    double efficiency;        /* goodput / the receiver's link rate (its links in but scale-up) */
    double max_held_bytes;    /* over every switch port */
    uint64_t pauses;
    double flow_time_s;       /* the flow tier's time for the same incast */
    uint64_t drops, resent_packets, nacks, timeouts; /* lossy modes (packet.h) */
    double resent_bytes;
} pkp_incast_row;

/* pkb_run's incast (ranks 1..N -> rank 0, stride) for each fan-in N of
 * fanins (at most PKP_MAX_SWEEP) under cfg, its loss mode included
 * (docs/fabric.md "Lossy RoCE"); rows[i] for fanins[i]. 0, or pkb_run's
 * -1 / -2 with the reason. */
int pkp_incast_sweep(const topo_graph *g, topo_router *r, const pkt_config *cfg,
                     unsigned stride, double bytes, const unsigned *fanins, unsigned n,
                     pkp_incast_row *rows, char *why, size_t why_size);

/* One flow-control variant of the victim or stall experiment. */
typedef struct pkp_variant {
    double victim_s;          /* victim: its completion time; stall: last of the others */
    double incast_s;          /* victim: the last incast message; stall: last to the stuck host */
    double control_s;         /* stall: the control flow (shares no port with the storm) */
    double max_held_bytes;
    uint64_t pauses;
    uint64_t ecn_marks, cnps;
    int is_consistent;        /* pkt_net_check passed, every byte delivered */
} pkp_variant;

enum { PKP_PFC = 0, PKP_PFC_DCQCN = 1, PKP_CREDITS = 2, PKP_VARIANTS = 3 };

typedef struct pkp_victim_result {
    unsigned fanin, shared;   /* incast senders; of them on the victim's leaf */
    double start_s;           /* the victim starts b/B after the incast */
    double solo_s;            /* the victim alone: its pipeline time */
    double solo_closed_s;     /* (P + h - 2) MTU/B + r/B + h d, h = 4, r = last packet */
    double fifo_bound;        /* shared + 1: the slowdown FIFO sharing alone can cause */
    pkp_variant v[PKP_VARIANTS]; /* victim_s: its time from its start */
} pkp_victim_result;

/* Incast of `fanin` messages of `bytes` to host 0 (leaf 0) at t = 0 from
 * leaves 1..3 in turn (sender j: leaf 1 + j % 3, slot j / 3); at t = b/B,
 * with the incast in full swing, the victim: the last host of leaf 1 sends
 * `bytes` to the last host of leaf 2. It shares leaf 1's uplink with
 * ceil(fanin / 3) senders and no link with the incast's bottleneck (leaf
 * 0's link to host 0). cfg gives MTU, buffer, hop latency (technology, PFC
 * and DCQCN are set per variant; PFC by pkb_pfc_rule). 0, -1 (bad input)
 * or -2. */
int pkp_victim(const pkt_config *cfg, double rate_bytes_per_s, unsigned fanin, double bytes,
               pkp_victim_result *out, char *why, size_t why_size);

#define PKP_MAX_BINS 64u
typedef struct pkp_bin {
    double end_s;
    uint64_t pauses_to_stuck; /* PAUSE frames received by links into the stuck host */
    uint64_t pauses_other;    /* by every other link */
    uint32_t links_paused_other; /* links not into the stuck host that got a PAUSE in the bin */
    double to_stuck_bytes, to_others_bytes, control_bytes; /* delivered in the bin */
} pkp_bin;

typedef struct pkp_stall_result {
    double start_s, end_s;    /* the stall window: b/(4B), then 4 b/B long */
    double solo_s;            /* a lone message's time */
    unsigned n_bins;
    pkp_bin bins[2][PKP_MAX_BINS]; /* [0] PFC, [1] IB credits */
    pkp_variant v[2];
    uint32_t other_links_paused[2]; /* during the window, links not into the stuck host */
    int spine_to_leaf0_paused, leaf1_uplink_paused; /* PFC: the storm's path */
} pkp_stall_result;

/* Host 0 (leaf 0) stalls over [b/(4B), b/(4B) + 4 b/B]. Flows, all of
 * `bytes`, at t = 0: two to host 0 (from leaf 1 slot 0 and leaf 2 slot 0);
 * two to other receivers that share a port with them (leaf 1 slot 1 ->
 * leaf 0 slot 1: the spine's link to leaf 0; leaf 2 slot 1 -> leaf 3 slot
 * 1: leaf 2's uplink); a control (leaf 3 slot 2 -> leaf 1 slot 2) sharing
 * no port with either. Under PFC and IB credits; time bins of b/(4B). */
int pkp_stall(const pkt_config *cfg, double rate_bytes_per_s, double bytes,
              pkp_stall_result *out, char *why, size_t why_size);

typedef struct pkp_collision_result {
    unsigned ranks, collide;  /* ring ranks; flows of leaf 0 put on one spine */
    double ideal_s;           /* b/B */
    double ecmp_s, adaptive_s;
    unsigned max_flows_per_link; /* of the ECMP routes */
    double ecmp_bound_lo_s, ecmp_bound_hi_s; /* L b/B .. L b/B + 4 MTU/B + 4 d */
    double pipeline_s;        /* 3 MTU/B + 4 d: the last packet behind the bound */
    uint64_t keys[PKP_SPINES * PKP_SPINES]; /* the route key of each ring flow */
    int is_consistent;
} pkp_collision_result;

/* Ring of PKP_SPINES^2 ranks on a leaf-spine of PKP_SPINES leaves, spines
 * and hosts per leaf; rank i on leaf i mod S, slot i / S, sends `bytes` to
 * rank i + 1 (next leaf), all at t = 0. Route keys: the first key k >= 0
 * whose route takes the wanted spine: slot s's flow spine s, except the
 * first `collide` flows of leaf 0 (2..S) all spine 0, so the busiest link
 * carries `collide` flows for certain. ECMP (each message on its route)
 * against per-packet adaptive. 0, -1 or -2. */
int pkp_collision(const pkt_config *cfg, double rate_bytes_per_s, unsigned collide,
                  double bytes, pkp_collision_result *out, char *why, size_t why_size);

/* Reorder: on the collision's leaf-spine (PKP_SPINES leaves, spines and
 * hosts per leaf) a permutation across leaves: the host in slot s of leaf
 * L sends `bytes` to slot s of leaf (L + 1 + s mod 3) mod S (route key: its
 * rank L + S s), so every leaf receives from three others and the spines'
 * downlinks carry flows of several source leaves. Four runs: ECMP with the
 * out-of-order and the in-order receiving NIC, adaptive with each
 * (docs/fabric.md "Reordering"). cfg: lossless, without DCQCN or IB CC;
 * rto_s > 0, the in-order NIC's RTO. 0, -1 or -2. */
enum { PKP_ECMP_OOO = 0, PKP_ECMP_IN_ORDER, PKP_AR_IN_ORDER, PKP_AR_OOO, PKP_REORDER_RUNS };
typedef struct pkp_reorder_row {
    double time_s;            /* the last message delivered */
    uint64_t out_of_order, nacks, resent_packets, discarded, timeouts; /* packet.h */
    double resent_bytes;
    uint64_t digest;
    int is_consistent;
} pkp_reorder_row;
typedef struct pkp_reorder_result {
    unsigned ranks;
    double ideal_s;           /* b/B */
    pkp_reorder_row row[PKP_REORDER_RUNS];
} pkp_reorder_result;
int pkp_reorder(const pkt_config *cfg, double rate_bytes_per_s, double bytes,
                pkp_reorder_result *out, char *why, size_t why_size);

#endif
