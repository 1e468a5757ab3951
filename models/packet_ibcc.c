/* packet_ibcc.c - InfiniBand congestion control on the packet tier (IBA
 * Vol. 1 Annex A10; the knobs rdma-core's ibccconfig(8) names, components.md
 * 5.4). Off unless cfg.ibcc.is_enabled; PKT_IB only. The rules are in
 * packet.h (pkt_ibcc_config) and docs/fabric.md "IB congestion control".
 *
 * Congestion point: a switch port whose egress queue holds at least the
 * threshold marks FECN on its eligible packets, one in (marking_rate + 1)
 * by a per-link counter (deterministic: no draws). The spec tells a root
 * of congestion from a victim by credits: a port that cannot send because
 * the next port has no credit for its head packet is a victim, and its
 * packets are eligible only under the victim mask. Here: the link's
 * transmitter is idle with a packet waiting (under PKT_IB only credits stop
 * it).
 *
 * Notification: the destination answers each FECN with a BECN (the spec's
 * CNP or an ACK's BECN bit), which reaches the source hops x d later and
 * uses no bandwidth.
 *
 * Reaction point, per message (one QP): BECN -> CCTI += ccti_increase, at
 * most ccti_limit; a CCTI timer of period ccti_timer_s, started by the
 * first BECN, takes one off while CCTI > ccti_min and stops at the floor
 * (the next BECN starts it again). The pacer (packet_dcqcn.c's release)
 * hands packet i+1 to the NIC size_i / line + CCTI x cct_step_s after
 * packet i: the table's delay is added to the serialisation at line rate.
 * Not modelled: the trigger threshold (it raises a trap, no rate change),
 * per-SL tables, the spec's shift/multiplier encoding of CCT entries.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event_kinds.h"
#include "packet_internal.h"
#include "units.h"

int pkt_ibcc_check(const pkt_config *c, char *why, size_t why_size)
{
    const pkt_ibcc_config *b = &c->ibcc;
    if (!b->is_enabled)
        return 0;
    if (c->technology != PKT_IB)
        return pkt_say(why, why_size, "packet tier: IB congestion control needs technology PKT_IB");
    if (c->dcqcn.is_enabled)
        return pkt_say(why, why_size, "packet tier: IB congestion control and DCQCN exclude each "
                                  "other");
    if (!(b->threshold_bytes >= 0) || !isfinite(b->threshold_bytes))
        return pkt_say(why, why_size, "packet tier: IB CC threshold_bytes must be >= 0 and finite");
    if (b->marking_rate > 0x7fffffffu || b->ccti_limit > 0x7fffffffu)
        return pkt_say(why, why_size, "packet tier: IB CC marking_rate and ccti_limit must be "
                                  "below 2^31");
    if (b->is_victim_marking != 0 && b->is_victim_marking != 1)
        return pkt_say(why, why_size, "packet tier: IB CC is_victim_marking must be 0 or 1");
    if (b->ccti_increase < 1 || b->ccti_min > b->ccti_limit)
        return pkt_say(why, why_size, "packet tier: IB CC needs ccti_increase >= 1 and ccti_min <= "
                                  "ccti_limit");
    if (!(b->ccti_timer_s > 0) || !isfinite(b->ccti_timer_s) || !(b->cct_step_s > 0) ||
        !isfinite(b->cct_step_s))
        return pkt_say(why, why_size, "packet tier: IB CC ccti_timer_s and cct_step_s must be "
                                  "positive and finite");
    return 0;
}

/* ---- congestion point ---- */

void pkt_ibcc_enqueue(pkt_net *n, uint32_t id, uint32_t l)
{
    pkt_packet *p = &n->pkts[id];
    const pkt_link *k = &n->links[l];
    if ((p->index & PKT_CE) || k->queued < n->cfg.ibcc.threshold_bytes)
        return; /* marked upstream already, or no congestion here */
    int is_victim = k->feeds_switch && !k->is_busy && k->head != PKT_NONE;
    if (is_victim && !n->cfg.ibcc.is_victim_marking)
        return;
    uint32_t seen = n->ibcc_seen[l];
    n->ibcc_seen[l] = seen >= n->cfg.ibcc.marking_rate ? 0 : seen + 1;
    if (seen != 0)
        return;
    p->index |= PKT_CE;
    n->links[l].marks++;
    n->stats.ecn_marks++;
}

/* ---- notification and reaction points ---- */

static void on_ccti_timer(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)eng;
    pkt_net *n = ctx;
    uint32_t m = pkt_msg_event(n, data);
    if (m == PKT_NONE)
        return;
    pkt_msg *r = &n->msgs[m];
    if (r->ccti > n->cfg.ibcc.ccti_min)
        r->ccti--;
    if (r->ccti > n->cfg.ibcc.ccti_min)
        pkt_schedule_in(n, n->cfg.ibcc.ccti_timer_s, PRIO_CONTROL, KIND_PKT_IBCC_TIMER,
                        on_ccti_timer, data, 0);
    else
        r->is_ccti_armed = 0;
}

static void on_becn(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)eng;
    pkt_net *n = ctx;
    uint32_t m = pkt_msg_event(n, data);
    if (m == PKT_NONE)
        return;
    const pkt_ibcc_config *b = &n->cfg.ibcc;
    pkt_msg *r = &n->msgs[m];
    r->cnps++;
    n->stats.rate_cuts++;
    r->ccti = b->ccti_limit - r->ccti < b->ccti_increase ? b->ccti_limit
                                                         : r->ccti + b->ccti_increase;
    if (!r->is_ccti_armed && r->ccti > b->ccti_min) {
        r->is_ccti_armed = 1;
        pkt_schedule_in(n, b->ccti_timer_s, PRIO_CONTROL, KIND_PKT_IBCC_TIMER, on_ccti_timer,
                        data, 0);
    }
}

void pkt_ibcc_deliver(pkt_net *n, uint32_t m, uint32_t id)
{
    if (!(n->pkts[id].index & PKT_CE))
        return;
    n->stats.cnps++;
    pkt_schedule_in(n, n->msgs[m].n_hops * n->cfg.hop_latency_s, PRIO_CONTROL, KIND_PKT_BECN,
                    on_becn, pkt_msg_key(n, m), 0);
}

/* ---- the command line's form ---- */

static int parse_count(const char *v, uint32_t most, uint32_t *out)
{
    char *end;
    errno = 0;
    unsigned long x = strtoul(v, &end, 10);
    if (*v < '0' || *v > '9' || *end || errno || x > most)
        return -1;
    *out = (uint32_t)x;
    return 0;
}

int pkt_ibcc_parse(const char *text, pkt_ibcc_config *out, char *why, size_t why_size)
{
    static const char *const keys[] = {"threshold", "marking-rate", "increase", "limit",
                                       "timer",     "step",         "min",      "victim"};
    enum { N_KEYS = 8, N_REQUIRED = 6 };
    pkt_ibcc_config c = {1, 0, 0, 0, 0, 0, 0, 0, 0};
    int seen[N_KEYS] = {0};
    char buf[512];
    if (!text || strlen(text) >= sizeof buf)
        return pkt_say(why, why_size, "expected KEY=VALUE,... (at most 511 characters)");
    snprintf(buf, sizeof buf, "%s", text);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        int k = 0;
        if (eq) {
            *eq = 0;
            while (k < N_KEYS && strcmp(item, keys[k]) != 0)
                k++;
        }
        if (!eq || k == N_KEYS) {
            if (eq)
                *eq = '=';
            if (why && why_size)
                snprintf(why, why_size, "'%s': expected one of threshold=, marking-rate=, "
                         "increase=, limit=, timer=, step=, min=, victim=", item);
            return -1;
        }
        if (seen[k]) {
            if (why && why_size)
                snprintf(why, why_size, "%s given twice", keys[k]);
            return -1;
        }
        seen[k] = 1;
        const char *v = eq + 1;
        int bad;
        switch (k) {
        case 0: bad = sim_units_parse(v, SIM_DIM_DATA, &c.threshold_bytes, NULL, 0) ||
                      !(c.threshold_bytes >= 0) || !isfinite(c.threshold_bytes); break;
        case 1: bad = parse_count(v, 0x7fffffffu, &c.marking_rate); break;
        case 2: bad = parse_count(v, 0x7fffffffu, &c.ccti_increase) || c.ccti_increase < 1;
                break;
        case 3: bad = parse_count(v, 0x7fffffffu, &c.ccti_limit); break;
        case 4: bad = sim_units_parse(v, SIM_DIM_TIME, &c.ccti_timer_s, NULL, 0) ||
                      !(c.ccti_timer_s > 0) || !isfinite(c.ccti_timer_s); break;
        case 5: bad = sim_units_parse(v, SIM_DIM_TIME, &c.cct_step_s, NULL, 0) ||
                      !(c.cct_step_s > 0) || !isfinite(c.cct_step_s); break;
        case 6: bad = parse_count(v, 0x7fffffffu, &c.ccti_min); break;
        default: {
            uint32_t on = 2;
            bad = parse_count(v, 1, &on);
            c.is_victim_marking = (int)on;
        }
        }
        if (bad) {
            static const char *const want[] = {
                "a size >= 0 such as 40KB", "a whole number from 0 to 2^31 - 1",
                "a whole number from 1 to 2^31 - 1", "a whole number from 0 to 2^31 - 1",
                "a positive time such as 40us", "a positive time such as 80ns",
                "a whole number from 0 to 2^31 - 1", "0 or 1"};
            if (why && why_size)
                snprintf(why, why_size, "%s=%s: expected %s", keys[k], v, want[k]);
            return -1;
        }
    }
    for (int k = 0; k < N_REQUIRED; k++)
        if (!seen[k]) {
            if (why && why_size)
                snprintf(why, why_size, "%s= is missing: IB CC values are a GAP in the "
                         "references (components.md 5.4), so threshold, marking-rate, "
                         "increase, limit, timer and step must be given", keys[k]);
            return -1;
        }
    if (c.ccti_min > c.ccti_limit)
        return pkt_say(why, why_size, "min= must not exceed limit=");
    *out = c;
    return 0;
}
