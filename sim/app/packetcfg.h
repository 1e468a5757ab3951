/* packetcfg.h - the packet tier's parameters (packet.h pkt_config) from a
 * scenario's fabric link catalog and the --mtu, --buffer and --hop-latency
 * options, with where each value came from: shared by `dcsim netbench
 * --tier packet` (netpacket.c) and `dcsim step --network packet`
 * (stepcmd.c). */
#ifndef DCSIM_APP_PACKETCFG_H
#define DCSIM_APP_PACKETCFG_H

#include <stdio.h>

#include "fabric.h"
#include "packet.h"
#include "scenario.h"

typedef struct app_packet_cfg {
    pkt_config cfg;
    double bdp_rate_bytes_per_s; /* the fabric link's (effective): the PFC rule's BDP */
    int has_pfc;                 /* xoff and xon were set (RoCE, or asked for) */
    char mtu_from[160], buffer_from[160], latency_from[160], pfc_rule[320];
    const char *ibcc_text;       /* --ibcc as given (cfg.ibcc), NULL when none */
    char routing[256];           /* --adaptive: the per-packet routing, one line ("": none) */
    char candidates_from[160];   /* Dragonfly UGAL-L or Valiant: where the count came from
                                    ("": not used) */
    uint32_t candidates;         /* the candidates a message gets: min(count, groups - 2) */
} app_packet_cfg;

/* The Valiant candidates per message when --valiant-candidates is not
 * given (a dcsim default, printed under "defaults used": no published
 * count; docs/fabric.md "Valiant candidates"). */
#define APP_VALIANT_CANDIDATES 4u

/* The options' texts (NULL: not given). */
typedef struct app_packet_opts {
    const char *mtu, *buffer, *hop_latency;
    const char *ibcc; /* InfiniBand congestion control, pkt_ibcc_parse's form */
    int dcqcn;        /* RoCE: DCQCN with the published set (pkp_dcqcn_rule) */
    int adaptive;     /* per-packet routing (pkt_config.is_adaptive): on a folded Clos
                         at every switch; on a Dragonfly family by the scenario's paths,
                         "ugal" (UGAL-L at the source router), "valiant" or "minimal"
                         (the baseline on the same virtual channels) */
    const char *candidates; /* "N" or "all": cfg.valiant_candidates (NULL: the default) */
    const char *ugal;       /* "local" (UGAL-L, the default) or "global" (UGAL-G) */
} app_packet_opts;

/* The tier's parameters for s's fabric f: MTU and port buffer from the
 * options, else the link catalog (refused when it has none); the hop
 * latency from the option, else the link's switch-latency (a printed
 * rule); under RoCE, or with need_pfc, the PFC thresholds by pkb_pfc_rule;
 * IB congestion control from --ibcc (InfiniBand links only); DCQCN with
 * the published set of pkp_dcqcn_rule from --dcqcn (RoCE links only).
 * `command` and `lead` ("netbench", "--tier packet") name them in the
 * one-line error. Returns 0, or the exit status of the error printed. */
int app_packet_config(const char *command, const char *lead, const scn_scenario *s,
                      const fabric *f, const app_packet_opts *o, int need_pfc,
                      app_packet_cfg *out);

/* The fabric's switch groups: 1 + the highest group of a fabric switch (a
 * Dragonfly family's groups; 0 when none has one). */
uint32_t app_packet_groups(const topo_graph *g);

/* The mtu, buffer and "defaults used" lines (hop latency, PFC thresholds),
 * each line starting with `lead` ("# " or "  "). */
void app_packet_config_print(FILE *out, const char *lead, const app_packet_cfg *c);

/* o["ib_congestion_control"]: c's IB CC values, when it is on. */
struct cJSON;
void app_packet_ibcc_json(struct cJSON *o, const pkt_config *c);

#endif
