/* packet.h - packet-level network tier (first slice of issue 19): messages
 * cut into MTU packets that cross a topo_graph link by link, store and
 * forward, with lossless link-level flow control either by InfiniBand
 * credits or by RoCE PFC pause frames (components.md 5.2, 5.4; hardware.md
 * 3.6).
 *
 * Model (docs/fabric.md "Packet tier (first slice)"):
 *  - a message of b bytes (a whole number) is routed once (topo_route, idle
 *    network) and cut into P = ceil(b / mtu) packets, the last one b -
 *    (P - 1) mtu bytes; all of them enter the source NIC's egress FIFO at
 *    once (host memory is unbounded);
 *  - every directed link l has an egress FIFO at link_src(l) and sends one
 *    packet at a time: serialisation size / link_bytes_per_s(l); the packet
 *    is at link_dst(l) after serialisation + the per-hop latency d. At a
 *    switch it is counted into the ingress buffer of input port l and queued
 *    at once on its next link's FIFO (output queuing; the ingress count is
 *    for flow control only); at the destination host it is consumed;
 *  - a switch releases a packet's bytes from its ingress port when the
 *    packet has finished serialising on its next link;
 *  - PKT_IB: link l may start a packet only when the downstream port's
 *    credits (buffer - bytes reserved there) cover it; a release sends the
 *    credit back, arriving d later. Held bytes never exceed the buffer;
 *  - PKT_ROCE: no credits; when a switch ingress port's held bytes rise
 *    above xoff it sends PAUSE upstream, when they fall below xon RESUME;
 *    both arrive d later; a paused link finishes the packet it is sending,
 *    then stops. Held bytes may exceed xoff by what is in flight (the
 *    headroom the caller must size: components.md 5.2).
 * Hosts always accept. Deterministic: the event digest of a run depends
 * only on the inputs. Cost: 2 engine events per packet-hop (finish, arrive)
 * plus one credit event per switch hop under IB; 16 bytes per packet in
 * flight, 56 per link, one path of topo_route_max_usages entries per
 * message in flight.
 */
#ifndef DCSIM_MODELS_PACKET_H
#define DCSIM_MODELS_PACKET_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "graph.h"
#include "routing.h"

enum pkt_technology { PKT_IB = 0, PKT_ROCE = 1 };

/* Every value comes from the caller: the tier has no defaults (facts in
 * components.md 5.2, 5.6, 5.7 and hardware.md 3.5). */
typedef struct pkt_config {
    double mtu_bytes;       /* a whole number of bytes, <= buffer_bytes */
    enum pkt_technology technology;
    double buffer_bytes;    /* per ingress port of a switch (the buffer a link feeds) */
    double xoff_bytes;      /* PKT_ROCE: pause above this; xon < xoff <= buffer */
    double xon_bytes;       /* PKT_ROCE: resume below this */
    double hop_latency_s;   /* propagation + switch latency, every link; >= 0 */
} pkt_config;

/* Called when the last packet of a message has arrived at its destination. */
typedef void (*pkt_done_fn)(void *ctx, uint64_t tag);

typedef struct pkt_link_stats {
    double max_held_bytes;  /* most bytes held at once in the ingress port this link feeds */
    uint64_t packets_sent;
    uint64_t pauses;        /* PAUSE frames this link's transmitter received */
} pkt_link_stats;

typedef struct pkt_net_stats {
    uint64_t messages_sent, messages_delivered;
    uint64_t packets_injected, packets_delivered;
    uint64_t packet_hops;   /* packet transmissions over one link */
    uint64_t events;        /* engine events the tier handled */
    uint64_t pauses;        /* PAUSE frames, all links */
    double bytes_sent, bytes_delivered;
    double max_held_bytes;  /* over every switch ingress port */
} pkt_net_stats;

typedef struct pkt_net pkt_net;

/* Check cfg: every value finite, mtu and buffer positive, mtu a whole
 * number <= buffer and < 2^32, latency >= 0; under PKT_ROCE 0 <= xon <
 * xoff <= buffer. Returns 0, or -1 with the reason in why (why_size bytes;
 * why may be NULL with why_size 0). */
int pkt_config_check(const pkt_config *cfg, char *why, size_t why_size);

/* A net on eng over the finished graph g, routed by r (single-path
 * routing: ECMP or adaptive balancing, one QP). The engine, graph and
 * router must outlive the net; cfg is copied. Returns NULL with a reason
 * (pkt_config_check's, a link rate not positive and finite, out of
 * memory). */
pkt_net *pkt_net_create(sim_engine *eng, const topo_graph *g, topo_router *r,
                        const pkt_config *cfg, char *why, size_t why_size);
void pkt_net_destroy(pkt_net *net); /* NULL-safe */

/* Send `bytes` (a positive whole number) from host src to host dst (src !=
 * dst) now; route_key is the connection key topo_route hashes. done(ctx,
 * tag) is called when the message has arrived (done may be NULL, and may
 * send more). Returns 0, or -1 with the reason in pkt_net_error (bad
 * argument, no route, a route that is not one path, out of memory); a
 * failed send changes nothing. */
int pkt_send(pkt_net *net, uint32_t src, uint32_t dst, double bytes, uint64_t route_key,
             pkt_done_fn done, void *ctx, uint64_t tag);

/* The reason of the last failed pkt_send ("" if none failed). */
const char *pkt_net_error(const pkt_net *net);

const pkt_net_stats *pkt_net_get_stats(const pkt_net *net);
/* Link l's stats (l < n_links), or zeros for an id out of range. */
pkt_link_stats pkt_net_link_stats(const pkt_net *net, uint32_t link);
/* Bytes held now at the ingress port link l feeds (0 when it feeds a host). */
double pkt_net_link_held(const pkt_net *net, uint32_t link);

/* 0 when the net is consistent: bytes delivered + bytes still in packets
 * == bytes sent, no switch port holds a negative count, and under PKT_IB
 * none holds more than the buffer; else -1 with the first violation in why. */
int pkt_net_check(const pkt_net *net, char *why, size_t why_size);

#endif
