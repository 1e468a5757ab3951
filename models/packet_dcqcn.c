/* packet_dcqcn.c - ECN marking at switch egress queues, CNPs from the
 * destination, and DCQCN rate control at the sending NIC (Zhu et al.,
 * "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM'15;
 * components.md 5.1, hardware.md 3.6). Off unless cfg.dcqcn.is_enabled.
 *
 * Marking (congestion point): on enqueue at a switch egress FIFO holding q
 * bytes (the packet in service included), mark with
 *     p(q) = 0 (q <= Kmin),  Pmax (q - Kmin)/(Kmax - Kmin) (q <= Kmax),  1 (q > Kmax).
 * Enqueue, not dequeue: RED (Floyd & Jacobson 1993) decides on the queue
 * a packet finds when it arrives, and that makes the marked fraction a
 * function of the depth it sees. (HPCC's
 * simulator marks at dequeue, which feeds back one queueing delay sooner.)
 * The draw u in [0, 1) is a splitmix64 hash of (seed, message serial,
 * packet index, hop): no stream state, so a run is bit-identical and a
 * packet's draw does not depend on the others'.
 *
 * Notification point: a marked packet arriving at the destination sends a
 * CNP if the message has had none in the last cnp_interval_s (the paper's
 * N = 50 us); it reaches the sender after hops x d.
 *
 * Reaction point, per message (the paper's reaction-point algorithm):
 *   on CNP:     Rt = Rc; Rc = max(Rmin, Rc (1 - alpha/2)); alpha = (1-g) alpha + g;
 *               T = BC = 0 (both counters and the timers restart)
 *   every K without CNP: alpha = (1-g) alpha
 *   every T s (timer) and every B bytes released (byte counter): one
 *   increase step, with the counter incremented first:
 *     max(T, BC) <= F:  fast recovery   Rc = (Rt + Rc)/2
 *     min(T, BC) >  F:  hyper increase  Rt += R_HAI; Rc = (Rt + Rc)/2
 *     otherwise:        additive        Rt += R_AI;  Rc = (Rt + Rc)/2
 *   Rt and Rc never exceed the line rate (the first link's).
 * Choices where components.md and hardware.md are silent, following the
 * paper: alpha starts at alpha_init (1 in the paper) and the timers start
 * at the first CNP (before it the RP is at line rate with nothing to
 * recover); the rate is cut on every CNP (the NP's interval already
 * spaces them; HPCC's "rate-decrease interval" plays the same role); the
 * hyper step is a constant R_HAI per step, as in HPCC's simulator (QCN's
 * i x R_HAI growth is not modelled). Pacing: a message's packet i+1 is
 * handed to the NIC FIFO size(i)/Rc after packet i (Rc read at that
 * moment); packets of other messages share the FIFO as before.
 */
#include <math.h>
#include <stdio.h>

#include "event_kinds.h"
#include "rng.h"
#include "packet_internal.h"

static int finite_ge(double x, double lo) { return isfinite(x) && x >= lo; }

int pkt_dcqcn_check(const pkt_config *c, char *why, size_t why_size)
{
    const pkt_dcqcn_config *d = &c->dcqcn;
    if (!d->is_enabled)
        return 0;
    if (c->technology != PKT_ROCE)
        return pkt_say(why, why_size, "packet tier: DCQCN needs technology PKT_ROCE");
    if (!finite_ge(d->kmin_bytes, 0) || !finite_ge(d->kmax_bytes, 0) ||
        !(d->kmin_bytes < d->kmax_bytes))
        return pkt_say(why, why_size, "packet tier: ECN needs finite 0 <= kmin_bytes < kmax_bytes");
    if (!(d->pmax > 0 && d->pmax <= 1))
        return pkt_say(why, why_size, "packet tier: ECN pmax must be in (0, 1]");
    if (!finite_ge(d->cnp_interval_s, 0))
        return pkt_say(why, why_size, "packet tier: DCQCN cnp_interval_s must be >= 0 and finite");
    if (!(d->g > 0 && d->g <= 1) || !(d->alpha_init >= 0 && d->alpha_init <= 1))
        return pkt_say(why, why_size, "packet tier: DCQCN needs g in (0, 1] and alpha_init in "
                                  "[0, 1]");
    if (!(d->alpha_timer_s > 0) || !isfinite(d->alpha_timer_s) || !(d->increase_timer_s > 0) ||
        !isfinite(d->increase_timer_s))
        return pkt_say(why, why_size, "packet tier: DCQCN alpha_timer_s and increase_timer_s must "
                                  "be positive and finite");
    if (!(d->byte_counter_bytes > 0)) /* INFINITY: no byte counter */
        return pkt_say(why, why_size, "packet tier: DCQCN byte_counter_bytes must be positive "
                                  "(INFINITY for none)");
    if (!finite_ge(d->rai_bytes_per_s, 0) || !finite_ge(d->rhai_bytes_per_s, 0))
        return pkt_say(why, why_size, "packet tier: DCQCN rai and rhai must be >= 0 and finite");
    if (!(d->min_rate_bytes_per_s > 0) || !isfinite(d->min_rate_bytes_per_s))
        return pkt_say(why, why_size, "packet tier: DCQCN min_rate_bytes_per_s must be positive "
                                  "and finite");
    return 0;
}

/* ---- congestion point ---- */


double pkt_ecn_probability(const pkt_dcqcn_config *c, double q)
{
    if (!(q > c->kmin_bytes))
        return 0;
    if (q > c->kmax_bytes)
        return 1;
    return c->pmax * (q - c->kmin_bytes) / (c->kmax_bytes - c->kmin_bytes);
}

int pkt_ecn_is_marked(const pkt_dcqcn_config *c, uint64_t serial, uint32_t index, uint32_t hop,
                      double q)
{
    double p = pkt_ecn_probability(c, q);
    if (p <= 0)
        return 0;
    if (p >= 1)
        return 1;
    uint64_t h = sim_splitmix64(((uint64_t)index << 32) | hop);
    h = sim_splitmix64(c->seed ^ sim_splitmix64(serial ^ h));
    double u = (double)(h >> 11) * 0x1.0p-53; /* 53 bits: uniform on [0, 1) */
    return u < p;
}

void pkt_dcqcn_enqueue(pkt_net *n, uint32_t id, uint32_t l)
{
    pkt_packet *p = &n->pkts[id];
    if (p->index & PKT_CE)
        return; /* already marked upstream */
    pkt_link *k = &n->links[l];
    double prob = pkt_ecn_probability(&n->cfg.dcqcn, k->queued);
    k->p_sum += prob;
    k->p_var += prob * (1 - prob);
    if (pkt_ecn_is_marked(&n->cfg.dcqcn, n->msgs[p->msg].serial, p->index, p->hop, k->queued)) {
        p->index |= PKT_CE;
        n->links[l].marks++;
        n->stats.ecn_marks++;
    }
}

/* ---- reaction point ---- */

static void on_pace(sim_engine *eng, void *ctx, uint64_t data);
static void on_cnp(sim_engine *eng, void *ctx, uint64_t data);
static void on_alpha(sim_engine *eng, void *ctx, uint64_t data);
static void on_increase(sim_engine *eng, void *ctx, uint64_t data);


static void increase(pkt_net *n, pkt_msg *r)
{
    const pkt_dcqcn_config *d = &n->cfg.dcqcn;
    uint32_t hi = r->t_count > r->bc_count ? r->t_count : r->bc_count;
    uint32_t lo = r->t_count < r->bc_count ? r->t_count : r->bc_count;
    if (hi <= d->fast_recovery_steps)
        ; /* fast recovery: Rt stays */
    else if (lo > d->fast_recovery_steps)
        r->rt += d->rhai_bytes_per_s;
    else
        r->rt += d->rai_bytes_per_s;
    if (r->rt > r->line)
        r->rt = r->line;
    r->rc = (r->rt + r->rc) / 2;
    if (r->rc > r->line)
        r->rc = r->line;
}

/* Hand message m's next packet to its NIC FIFO; schedule the one after. */
static void release(pkt_net *n, uint32_t m)
{
    pkt_msg *r = &n->msgs[m];
    uint32_t id = r->pace_head;
    if (id == PKT_NONE)
        return;
    double size = n->pkts[id].size;
    r->pace_head = n->pkts[id].next;
    if (r->pace_head == PKT_NONE)
        r->pace_tail = PKT_NONE;
    r->released += size;
    uint32_t first = r->path[0];
    pkt_fifo_push(n, first, id);
    if (r->has_cnp_seen && isfinite(n->cfg.dcqcn.byte_counter_bytes)) {
        r->bc_bytes += size;
        if (r->bc_bytes >= n->cfg.dcqcn.byte_counter_bytes) {
            r->bc_bytes -= n->cfg.dcqcn.byte_counter_bytes;
            r->bc_count++;
            increase(n, r);
        }
    }
    double gap = n->cfg.ibcc.is_enabled ? pkt_ibcc_gap(n, r, size) : size / r->rc;
    if (r->pace_head != PKT_NONE)
        pkt_schedule_in(n, gap, PRIO_TX_DONE, KIND_PKT_PACE, on_pace, pkt_msg_key(n, m),
                        0);
    pkt_link_try_start(n, first);
}

void pkt_dcqcn_start(pkt_net *n, uint32_t m)
{
    pkt_msg *r = &n->msgs[m];
    r->line = n->g->link_bytes_per_s[r->path[0]];
    r->rc = r->rt = r->line;
    r->alpha = n->cfg.dcqcn.alpha_init;
    r->has_cnp_sent = r->has_cnp_seen = r->is_alpha_armed = r->is_inc_armed = 0;
    r->t_count = r->bc_count = 0;
    r->bc_bytes = r->released = 0;
    r->cnps = 0;
    r->ccti = n->cfg.ibcc.is_enabled ? n->cfg.ibcc.ccti_min : 0;
    r->is_ccti_armed = 0;
    release(n, m);
}

static void on_pace(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)eng;
    pkt_net *n = ctx;
    uint32_t m = pkt_msg_event(n, data);
    if (m != PKT_NONE)
        release(n, m);
}

void pkt_dcqcn_deliver(pkt_net *n, uint32_t m, uint32_t id)
{
    pkt_msg *r = &n->msgs[m];
    double now = sim_now(n->eng);
    if (!(n->pkts[id].index & PKT_CE))
        return;
    if (r->has_cnp_sent && now - r->last_cnp_s < n->cfg.dcqcn.cnp_interval_s)
        return;
    r->has_cnp_sent = 1;
    r->last_cnp_s = now;
    n->stats.cnps++;
    pkt_schedule_in(n, r->n_hops * n->cfg.hop_latency_s, PRIO_CONTROL, KIND_PKT_CNP, on_cnp,
                    pkt_msg_key(n, m), 1);
}

static void arm(pkt_net *n, uint32_t m, double due, unsigned kind, sim_handler_fn fn)
{
    pkt_schedule_at(n, due, PRIO_CONTROL, kind, fn, pkt_msg_key(n, m));
}

static void on_cnp(sim_engine *eng, void *ctx, uint64_t data)
{
    pkt_net *n = ctx;
    uint32_t m = pkt_msg_event(n, data);
    if (m == PKT_NONE)
        return;
    const pkt_dcqcn_config *d = &n->cfg.dcqcn;
    pkt_msg *r = &n->msgs[m];
    double now = sim_now(eng);
    r->cnps++;
    n->stats.rate_cuts++;
    r->rt = r->rc;
    r->rc *= 1 - r->alpha / 2;
    if (r->rc < d->min_rate_bytes_per_s)
        r->rc = d->min_rate_bytes_per_s;
    r->alpha = (1 - d->g) * r->alpha + d->g;
    r->t_count = r->bc_count = 0;
    r->bc_bytes = 0;
    r->has_cnp_seen = 1;
    r->alpha_due_s = now + d->alpha_timer_s;
    r->inc_due_s = now + d->increase_timer_s;
    /* one pending event per timer: a reset moves the due time later, and
     * an event that fires early re-arms itself at the due time */
    if (!r->is_alpha_armed) {
        r->is_alpha_armed = 1;
        arm(n, m, r->alpha_due_s, KIND_PKT_DCQCN_ALPHA, on_alpha);
    }
    if (!r->is_inc_armed) {
        r->is_inc_armed = 1;
        arm(n, m, r->inc_due_s, KIND_PKT_DCQCN_INCREASE, on_increase);
    }
}

static void on_alpha(sim_engine *eng, void *ctx, uint64_t data)
{
    pkt_net *n = ctx;
    uint32_t m = pkt_msg_event(n, data);
    if (m == PKT_NONE)
        return;
    pkt_msg *r = &n->msgs[m];
    double now = sim_now(eng);
    if (now >= r->alpha_due_s) {
        r->alpha *= 1 - n->cfg.dcqcn.g;
        r->alpha_due_s = now + n->cfg.dcqcn.alpha_timer_s;
    }
    arm(n, m, r->alpha_due_s, KIND_PKT_DCQCN_ALPHA, on_alpha);
}

static void on_increase(sim_engine *eng, void *ctx, uint64_t data)
{
    pkt_net *n = ctx;
    uint32_t m = pkt_msg_event(n, data);
    if (m == PKT_NONE)
        return;
    pkt_msg *r = &n->msgs[m];
    double now = sim_now(eng);
    if (now >= r->inc_due_s) {
        r->t_count++;
        increase(n, r);
        r->inc_due_s = now + n->cfg.dcqcn.increase_timer_s;
    }
    arm(n, m, r->inc_due_s, KIND_PKT_DCQCN_INCREASE, on_increase);
}

int pkt_message_state(const pkt_net *n, uint64_t tag, pkt_msg_state *out)
{
    for (uint32_t m = 0; m < n->n_msgs; m++) {
        const pkt_msg *r = &n->msgs[m];
        if (!r->is_live || r->tag != tag)
            continue;
        out->rate_bytes_per_s = r->rc;
        out->target_bytes_per_s = r->rt;
        out->alpha = r->alpha;
        out->bytes_released = r->released;
        out->bytes_delivered = r->delivered;
        out->cnps = r->cnps;
        out->ccti = r->ccti;
        return 0;
    }
    return -1;
}
