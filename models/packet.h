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
 * Hosts always accept, unless stalled (pkt_host_stall). Deterministic: the
 * event digest of a run depends only on the inputs. Cost: 2 events per
 * packet-hop (finish, arrive) plus one credit event per switch hop under
 * IB; with DCQCN one pacing event per packet, one per CNP, one per rate
 * timer tick. The tier keeps its events in its own queue
 * (models/packet_queue.c: FIFO lanes of one delay each, O(1) per event, and
 * a heap for other delays) and hands them to the engine through one pending
 * event, in the engine's own order (so the digest and event count are those
 * of scheduling each on the engine); 32 bytes per packet in flight, 120 per
 * link, 40 per pending event, one path of topo_route_max_usages entries per
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

/* Loss recovery (PKT_ROCE only; models/packet_loss.c, docs/fabric.md
 * "Lossy RoCE"). PKT_LOSSLESS: PFC as above, nothing is dropped. The lossy
 * modes turn PFC off (xoff and xon are ignored): a switch ingress port
 * drops an arriving packet that would make its held bytes exceed
 * buffer_bytes (tail drop), and the receiver and sender recover:
 *  - PKT_GO_BACK_N: the receiver accepts only the next expected packet e;
 *    the first later arrival sends one NACK(e) (at most one per e); the
 *    sender, on NACK(e), removes the message's packets still queued in its
 *    NIC FIFO (not the one on the wire) and queues e .. P-1 again;
 *  - PKT_SELECTIVE (IRN-style, Mittal et al. SIGCOMM'18): the receiver
 *    keeps out-of-order packets and NACKs every sequence number of a gap
 *    once, when a later packet reveals it; the sender resends exactly those
 *    not yet acknowledged and not still queued;
 *  - both: the receiver ACKs every accepted packet; ACKs and NACKs reach
 *    the sender hops x hop_latency_s later and take no bandwidth; a
 *    message with packets unacknowledged, none queued at its NIC and
 *    nothing heard or sent for rto_s times out and resends (go-back-N from
 *    the first unacknowledged packet, selective every unacknowledged one).
 * No in-flight window: a message's packets all enter the NIC FIFO at once,
 * as in the lossless tier. */
enum pkt_loss_mode { PKT_LOSSLESS = 0, PKT_GO_BACK_N = 1, PKT_SELECTIVE = 2 };

/* ECN marking and DCQCN (PKT_ROCE only; docs/fabric.md "ECN and DCQCN"):
 *  - a packet queued on a switch's egress FIFO that already holds q bytes
 *    (the packet in service included) is marked with probability
 *    p(q) = 0 for q <= kmin, pmax (q - kmin) / (kmax - kmin) up to kmax, 1
 *    above (RED-like, Zhu et al. SIGCOMM'15), drawn from a counter-based
 *    hash of (seed, message serial, packet index, hop): runs are
 *    bit-identical;
 *  - the destination (notification point) sends one CNP for a message when
 *    a marked packet arrives and none was sent in the last cnp_interval_s;
 *    it reaches the sender hops x hop_latency_s later;
 *  - the sender (reaction point) paces each message at its current rate Rc
 *    (starting at the rate of its first link) and runs the DCQCN rate
 *    machine: cut on CNP, alpha decay every alpha_timer_s without CNP, rate
 *    increase on every increase_timer_s and every byte_counter_bytes sent:
 *    fast recovery, additive, hyper (models/packet_dcqcn.c has the rules).
 * Every value from the caller (components.md 5.1 lists published sets). */
typedef struct pkt_dcqcn_config {
    int is_enabled;              /* 0: none of this (the rest is ignored) */
    double kmin_bytes;           /* 0 <= kmin < kmax */
    double kmax_bytes;
    double pmax;                 /* marking probability at kmax, in (0, 1] */
    uint64_t seed;               /* of the marking draws */
    double cnp_interval_s;       /* >= 0 */
    double g;                    /* alpha gain, in (0, 1] */
    double alpha_init;           /* alpha before the first CNP, in [0, 1] */
    double alpha_timer_s;        /* K > 0 */
    double increase_timer_s;     /* T > 0 */
    double byte_counter_bytes;   /* B > 0; INFINITY: no byte counter */
    uint32_t fast_recovery_steps;/* F */
    double rai_bytes_per_s;      /* additive increase step, >= 0 */
    double rhai_bytes_per_s;     /* hyper increase step, >= 0 */
    double min_rate_bytes_per_s; /* > 0, <= every host link's rate */
} pkt_dcqcn_config;

/* InfiniBand congestion control (PKT_IB only; IBA Vol. 1 Annex A10, the
 * knobs `ibccconfig(8)` names, components.md 5.4; docs/fabric.md "IB
 * congestion control"). Default values are a GAP in the references: every
 * value comes from the caller.
 *  - congestion point: a packet queued on a switch's egress FIFO that
 *    already holds q >= threshold_bytes (the packet in service included) is
 *    eligible for FECN; a link that is waiting for credits at that moment
 *    is a victim of congestion further on, not its root, and its packets
 *    are eligible only with is_victim_marking (the victim mask). Of a link's
 *    eligible packets the 1st, then every (marking_rate + 1)-th is marked
 *    (marking_rate: packets between marks, 0 marks every one);
 *  - the destination returns one BECN for every FECN-marked packet; it
 *    reaches the sender hops x hop_latency_s later;
 *  - the sender keeps a congestion control table index CCTI per message
 *    (per QP): a BECN raises it by ccti_increase (to at most ccti_limit);
 *    every ccti_timer_s while it is above ccti_min it falls by one. The
 *    message's packets are paced: packet i+1 is handed to the NIC FIFO
 *    size_i / line + CCT[CCTI] after packet i, with the table linear,
 *    CCT[i] = i x cct_step_s (the spec's shift/multiplier encoding and
 *    non-linear tables are not modelled). */
typedef struct pkt_ibcc_config {
    int is_enabled;              /* 0: none of this (the rest is ignored) */
    double threshold_bytes;      /* >= 0, finite */
    uint32_t marking_rate;       /* packets between marks, < 2^31 */
    int is_victim_marking;       /* 0 or 1 */
    uint32_t ccti_increase;      /* >= 1 */
    uint32_t ccti_limit;         /* >= ccti_min, < 2^31 */
    uint32_t ccti_min;
    double ccti_timer_s;         /* > 0, finite */
    double cct_step_s;           /* > 0, finite: the delay one CCTI step adds per packet */
} pkt_ibcc_config;

/* Parse the command line's form "threshold=40KB,marking-rate=3,increase=1,
 * limit=127,timer=40us,step=80ns[,min=0][,victim=0|1]" (every value but min
 * and victim required: no default is published) into *out (is_enabled 1).
 * Returns 0, or -1 with the reason in why. */
int pkt_ibcc_parse(const char *text, pkt_ibcc_config *out, char *why, size_t why_size);

/* What the receiving NIC does with a packet that arrives ahead of the one
 * it expects (docs/fabric.md "Reordering"; hardware.md 3.6, components.md
 * 4.3, 5.4):
 *  - PKT_RX_OUT_OF_ORDER (0, the default): it places every packet where it
 *    belongs (ConnectX-5 and later, BlueField-3 SuperNICs under Spectrum-X,
 *    IB NICs with adaptive-routing support); the message completes when all
 *    have arrived;
 *  - PKT_RX_IN_ORDER: a classic RC responder without out-of-order placement:
 *    a PSN above the expected one is a sequence error. It is go-back-N's
 *    receiver of the lossy modes (packet_loss.c) on the lossless fabric
 *    (PFC or credits stay on, nothing is dropped): the packet is discarded,
 *    one NACK(e) per expected e, and the sender goes back to e; every
 *    resend is spurious. ACKs, NACKs and the RTO as in the lossy modes
 *    (rto_s required). Not with a lossy mode (its receiver is the mode's),
 *    DCQCN or IB CC (resends would bypass the pacer), or a host stall. */
enum pkt_reorder { PKT_RX_OUT_OF_ORDER = 0, PKT_RX_IN_ORDER = 1 };

/* Every value comes from the caller: the tier has no defaults (facts in
 * components.md 5.2, 5.6, 5.7 and hardware.md 3.5). */
typedef struct pkt_config {
    double mtu_bytes;       /* a whole number of bytes, <= buffer_bytes */
    enum pkt_technology technology;
    double buffer_bytes;    /* per ingress port of a switch (the buffer a link feeds) */
    double xoff_bytes;      /* PKT_ROCE: pause above this; xon < xoff <= buffer */
    double xon_bytes;       /* PKT_ROCE: resume below this */
    double hop_latency_s;   /* propagation + switch latency, every link; >= 0 */
    pkt_dcqcn_config dcqcn; /* zero: off */
    /* 1: per-packet adaptive routing. In a folded Clos: at every switch a
     * packet takes, of the equal-cost next links towards its destination
     * (topo_next_hops), the one whose egress FIFO drains soonest with it:
     * least (queued bytes + its size) / rate, ties broken by a hash of
     * (message serial, packet index, switch); the first link (the source's
     * NIC port or plane) stays the route's. In a Dragonfly family (3 groups
     * or more; packet_df.c): UGAL-L at the source router, once per packet:
     * minimal unless the Valiant path through a group drawn by a hash of
     * (message serial, packet index) has the smaller (queued bytes + size) /
     * rate x links left, read on each path's next link there; messages are
     * routed minimally by the net's own router (ECMP, seed 0), the caller's
     * router is not used; the links get 3 virtual channels (one per global
     * link crossed: deadlock-free). 2, 3, 4 (Dragonfly family only): every
     * packet takes the Valiant path of its drawn group (oblivious), the
     * minimal path (the baseline on the same channels), or UGAL-G: as 1 but
     * comparing the sums of (queued bytes + size) / rate over every link
     * of each path after the source router (global queue knowledge). 5
     * (Dragonfly family only): progressive (PAR): as 1 at the source router;
     * a packet that stayed minimal decides again at the router of its source
     * group whose global link the minimal path takes, reached over a local
     * link: the same rule there, against a Valiant candidate of its message
     * that passes through that router and leaves it by another global link
     * (docs/fabric.md "Progressive adaptive routing"). Packets may
     * arrive out of order, the message completes when all have arrived.
     * 0: every packet follows the message's route. */
    int is_adaptive;
    /* is_adaptive 1, 2, 4 and 5 on a Dragonfly family: the Valiant candidates of a
     * message, the intermediate groups its packets draw from. 0 (or any
     * count >= the third groups, g - 2): every third group (the full scan,
     * 2 (g - 2) routes per message); k: k distinct third groups drawn per
     * message, uniformly, by a hash of its send serial (2 k routes), and
     * each packet draws one of them as above (docs/fabric.md "Valiant
     * candidates"; no published count: the caller's) */
    uint32_t valiant_candidates;
    enum pkt_loss_mode loss; /* PKT_LOSSLESS (0) unless PKT_ROCE without DCQCN */
    double rto_s;            /* lossy modes: the retransmission timeout, > 0 and finite
                                (a GAP in the references: the caller's) */
    pkt_ibcc_config ibcc;   /* PKT_IB congestion control; zero: off */
    enum pkt_reorder reorder; /* the receiver; PKT_RX_OUT_OF_ORDER (0): places any order */
} pkt_config;

/* Called when the last packet of a message has arrived at its destination. */
typedef void (*pkt_done_fn)(void *ctx, uint64_t tag);

typedef struct pkt_link_stats {
    double max_held_bytes;  /* most bytes held at once in the ingress port this link feeds */
    uint64_t packets_sent;
    uint64_t pauses;        /* PAUSE frames this link's transmitter received */
    uint64_t ecn_marks;     /* packets marked (ECN; FECN under IB CC) entering its egress FIFO */
    double ecn_p_sum;       /* sum of p(q) over the draws made there (expected marks) */
    double ecn_p_var;       /* sum of p(q)(1 - p(q)): the marks' variance given the queues */
    double max_queued_bytes;/* most bytes in this link's egress FIFO at once (in service included) */
    double bytes_sent;      /* bytes of the packets_sent */
    uint64_t drops;         /* lossy modes: packets dropped at the ingress port this link feeds */
} pkt_link_stats;

typedef struct pkt_net_stats {
    uint64_t messages_sent, messages_delivered;
    uint64_t packets_injected, packets_delivered;
    uint64_t packet_hops;   /* packet transmissions over one link */
    uint64_t events;        /* engine events the tier handled */
    uint64_t pauses;        /* PAUSE frames, all links */
    uint64_t ecn_marks, cnps, rate_cuts; /* DCQCN: marks, CNPs sent, RP rate cuts; IB CC:
                                            FECN marks, BECNs sent, CCTI increases */
    double bytes_sent, bytes_delivered;
    double max_held_bytes;  /* over every switch ingress port */
    /* lossy modes and PKT_RX_IN_ORDER (zero otherwise): packets_delivered
     * and bytes_delivered count each message packet once, when the receiver
     * accepts it; without drops (PKT_RX_IN_ORDER) every resend is spurious */
    uint64_t drops;         /* packets dropped at switch ports */
    uint64_t resent_packets;/* packets that left their NIC again (retransmissions) */
    double resent_bytes;
    uint64_t discarded;     /* arrivals the receiver threw away (out of order, duplicate) */
    uint64_t nacks, acks, timeouts;
    /* arrivals at the destination overtaken: a packet whose index is below
     * that of one of its message's packets that arrived before it (every
     * copy; 0 when each message's packets arrive in index order) */
    uint64_t out_of_order;
    /* Dragonfly per-packet routing (is_adaptive 1, 2, 4 or 5): packets that took a
     * Valiant path at their source router, or (5) at the gateway router of their
     * source group (0 otherwise) */
    uint64_t valiant_packets;
    uint64_t par_packets; /* is_adaptive 5: of those, the ones that turned at the gateway */
    /* SHARP all-reduces (packet_sharp.h; not in the message counts above) */
    uint64_t sharp_ops;             /* finished */
    uint64_t sharp_aggregations;    /* packets that reached a tree switch from a child */
    uint64_t sharp_packets_delivered;
    double sharp_bytes_sent;        /* by the ranks */
    double sharp_bytes_delivered;   /* to the ranks */
} pkt_net_stats;

typedef struct pkt_net pkt_net;

/* Per-packet routing on a Dragonfly family keeps, for every message in
 * flight, each third group's Valiant path: at most this many 4-byte words
 * per group (its offset, its length, and twice the 8 links a minimal route
 * takes at most: host, shared NIC, local, global, local, NIC, host, and a
 * Dragonfly+ group's up and down links instead of a local one). */
#define PKT_DF_PATH_WORDS 18u

/* Bytes the tier keeps per packet in flight (for memory estimates: a
 * message's packets all enter its NIC FIFO when it is sent). */
size_t pkt_packet_record_bytes(void);

/* Check cfg: every value finite, mtu and buffer positive, mtu a whole
 * number <= buffer and < 2^32, latency >= 0; under PKT_ROCE 0 <= xon <
 * xoff <= buffer. Returns 0, or -1 with the reason in why (why_size bytes;
 * why may be NULL with why_size 0). */
int pkt_config_check(const pkt_config *cfg, char *why, size_t why_size);

/* A net on eng over the finished graph g, routed by r (single-path
 * routing: ECMP or adaptive balancing, one QP). The engine, graph and
 * router must outlive the net; cfg is copied. Returns NULL with a reason
 * (pkt_config_check's, a link rate not positive and finite, out of
 * memory; is_adaptive on a fabric that is neither a folded Clos nor a
 * Dragonfly family of 3 groups or more, 2, 3 or 4 on a folded Clos, or on a
 * Dragonfly with a lossy mode, DCQCN or IB CC). */
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
/* The graph the net runs on. */
const topo_graph *pkt_net_graph(const pkt_net *net);

const pkt_net_stats *pkt_net_get_stats(const pkt_net *net);
/* Link l's stats (l < n_links), or zeros for an id out of range. */
pkt_link_stats pkt_net_link_stats(const pkt_net *net, uint32_t link);
/* Bytes held now at the ingress port link l feeds (0 when it feeds a host). */
double pkt_net_link_held(const pkt_net *net, uint32_t link);
/* Bytes in link l's egress FIFO now, the packet in service included. */
double pkt_net_link_queued(const pkt_net *net, uint32_t link);

/* A message in flight as its sender and receiver see it (DCQCN state is
 * meaningful only when DCQCN is on). */
typedef struct pkt_msg_state {
    double rate_bytes_per_s;        /* Rc: the pacing rate */
    double target_bytes_per_s;      /* Rt */
    double alpha;
    double bytes_released;          /* handed by the pacer to the NIC FIFO */
    double bytes_delivered;         /* arrived at the destination */
    uint64_t cnps;                  /* CNPs (IB CC: BECNs) the sender received */
    uint32_t ccti;                  /* IB CC: the congestion control table index */
} pkt_msg_state;

/* The state of the first message in flight with this tag (O(messages)).
 * Returns 0 and fills *out, or -1 when none is in flight. */
int pkt_message_state(const pkt_net *net, uint64_t tag, pkt_msg_state *out);

/* The RED marking probability p(q) of c at q bytes queued, and the draw
 * the tier makes for packet `index` of message `serial` (messages are
 * numbered from 0 in send order) entering the egress FIFO of its path's
 * link `hop` with q bytes queued: 1 marked, 0 not. */
double pkt_ecn_probability(const pkt_dcqcn_config *c, double queued_bytes);
int pkt_ecn_is_marked(const pkt_dcqcn_config *c, uint64_t serial, uint32_t index, uint32_t hop,
                      double queued_bytes);

/* Stall host `host` from start_s to end_s (simulated seconds, now <= start_s
 * < end_s, finite): a receiver that stops draining (docs/fabric.md
 * "Phenomena"). Call before the first pkt_send. From then on the host's NIC
 * has an ingress buffer like a switch port (pkt_config's buffer, xoff, xon)
 * on every link into it: under PKT_IB the leaf's link needs its credits,
 * under PKT_ROCE the NIC sends PAUSE above xoff, RESUME below xon. Outside
 * the window the NIC passes packets on at once (delivery as without a
 * stall, but under PKT_IB a credit loop: a buffer under 2 B d + MTU slows
 * that link); inside it keeps them; at end_s it hands all it holds to the
 * host at once (host memory bandwidth not modelled), frees its buffer and
 * tells the upstream transmitters. One window per host. Returns 0, or -1
 * with the reason in pkt_net_error (not a host, a bad window, a second
 * window, messages already sent, out of memory). */
int pkt_host_stall(pkt_net *net, uint32_t host, double start_s, double end_s);

/* 0 when the net is consistent: bytes delivered + bytes still in packets
 * == bytes sent, no switch port holds a negative count, and under PKT_IB
 * none holds more than the buffer; in a lossy mode instead: every packet
 * made is delivered, discarded, dropped, removed or still live, every
 * message's accepted bytes are those its receiver holds (each byte once)
 * and bytes delivered + bytes not yet accepted == bytes sent, and no port
 * holds more than the buffer; else -1 with the first violation in why. */
int pkt_net_check(const pkt_net *net, char *why, size_t why_size);

#endif
