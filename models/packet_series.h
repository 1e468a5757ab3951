/* packet_series.h - per-link time series of a packet-tier net (issue 19):
 * bytes and packets sent, PAUSE frames received, ECN marks, egress queue and
 * ingress held bytes, in time bins (docs/fabric.md "Packet tier: time
 * series").
 *
 * Bins: bin k covers (t0 + k dt, t0 + (k+1) dt] (bin 0 also t0 itself),
 * t0 the time of pkt_series_create. Per directed link and bin:
 *  - sent_bytes, packets, pauses, marks: the exact deltas of the link's
 *    counters (pkt_link_stats) over the events of the bin, so their sums
 *    over the bins are the end-of-run counters exactly;
 *  - queue_end, held_end: the egress FIFO's bytes (the packet in service
 *    included) and the ingress port's held bytes after the bin's last event;
 *  - queue_max, held_max: their most over the bin (the value at its start
 *    included); the maxima of the columns are max_queued and max_held.
 * Storage is per link, allocated when the link first has a non-zero value
 * (an idle link takes none: a 9,632-link fabric whose incast touches a few
 * dozen links stores those); per stored link 64 B a bin.
 * Memory is bounded: at most max_bins bins (even, >= 2); when a run fills
 * them, pairs are merged (sums added, maxima of maxima, the later end
 * value) and dt doubles: the result is exactly that of a run with the
 * doubled dt. pkt_series_bytes gives the bound.
 *
 * How it samples without changing the run: it schedules no events. The
 * net calls pkt_series_advance before the first tier event (and the first
 * pkt_send) later than the open bin's end, which closes the bins up to it
 * by reading the links' counters; the per-bin maxima are window maxima the
 * net keeps where it keeps its running maxima (one compare on the common
 * path). So the event digest and count, and every result, are those of the
 * run without a sampler. The net's engine-queue reference path
 * (pkt_net_use_engine_queue) does not drive it: refused.
 * Cost: O(links) per bin closed, at most max_bins / 2 bins per doubling;
 * memory O(links) + 64 B x rows x stored links.
 */
#ifndef DCSIM_MODELS_PACKET_SERIES_H
#define DCSIM_MODELS_PACKET_SERIES_H

#include <stddef.h>
#include <stdint.h>

#include "packet.h"

typedef struct pkt_series pkt_series;

/* The byte columns (doubles) and count columns (uint64), per link. */
enum pkt_series_value { PKS_SENT_BYTES = 0, PKS_QUEUE_END, PKS_QUEUE_MAX, PKS_HELD_END,
                        PKS_HELD_MAX, PKS_VALUES };
enum pkt_series_count { PKS_PACKETS = 0, PKS_PAUSES, PKS_MARKS, PKS_COUNTS };

/* What a runner that makes its own net (pkb_run_series, pkc_compare_run_series)
 * samples: bins of dt_s, at most max_bins; `series` receives the finished
 * series on success (the caller destroys it), NULL otherwise. */
typedef struct pkt_series_request {
    double dt_s;
    uint32_t max_bins;
    pkt_series *series;
} pkt_series_request;

/* Bytes a series of n_links links and at most max_bins bins may take (every
 * link stored: the bound; an idle link takes O(1)). */
double pkt_series_bytes(uint32_t n_links, uint32_t max_bins);

/* Attach a series to net (at most one; none after pkt_net_use_engine_queue)
 * with bins of dt_s (> 0, finite) from now, at most max_bins (even, >= 2).
 * The net must outlive it until pkt_series_finish. Returns NULL with the
 * reason in why (bad argument, out of memory). */
pkt_series *pkt_series_create(pkt_net *net, double dt_s, uint32_t max_bins, char *why,
                              size_t why_size);

/* The net's time reached t_s: close every bin that ends before t_s. Called
 * by the net (packet.c, packet_queue.c); not needed by users. */
void pkt_series_advance(pkt_series *s, double t_s);

/* Close the bins up to end_s (>= the last event's time: sim_now at the
 * end), the last one containing end_s, copy the links' end stats and
 * detach from the net. Idempotent. Returns 0, or -1 when end_s is before
 * the series' time or memory ran out while sampling (the series is then
 * incomplete: destroy it). */
int pkt_series_finish(pkt_series *s, double end_s);

void pkt_series_destroy(pkt_series *s); /* NULL-safe; detaches first */

uint32_t pkt_series_links(const pkt_series *s);
uint32_t pkt_series_bins(const pkt_series *s);
double pkt_series_dt(const pkt_series *s);
double pkt_series_t0(const pkt_series *s);
uint32_t pkt_series_merges(const pkt_series *s); /* times dt doubled */
/* The links stored: those with a non-zero value in some bin or a non-zero
 * end counter (in a run from an idle net: those that sent a packet), in
 * ascending link order once finished; the others are zeros in every bin
 * and every counter, and take no bin storage. */
uint32_t pkt_series_stored(const pkt_series *s);
uint32_t pkt_series_stored_link(const pkt_series *s, uint32_t j); /* UINT32_MAX: j too big */
/* Link l's column, one entry per bin (zeros for a link not stored; NULL for
 * a bad field or link). Finished series only hold complete bins; during a
 * run the open bin is not in them. Valid until the series is destroyed
 * (or, while running, its next bin closes). */
const double *pkt_series_link_values(const pkt_series *s, enum pkt_series_value v, uint32_t l);
const uint64_t *pkt_series_link_counts(const pkt_series *s, enum pkt_series_count c,
                                       uint32_t l);
/* Link l's stats at pkt_series_finish (zeros before, or l out of range). */
pkt_link_stats pkt_series_link_end(const pkt_series *s, uint32_t l);

#endif
