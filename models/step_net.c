/* step_net.c - the concurrent iteration's shared net (step_des.c), one
 * interface for its two backends: the flow net (netcoll_exec.h, folded or
 * not) and the packet network (network="packet": packet_exec.h on one
 * pkt_net over the fabric's graph and router, step_options.packet_cfg).
 *
 * Packet network, small jobs only: before anything moves, the iteration's
 * PP, DP and gather messages are counted (every plan start: P = ceil(b /
 * mtu) packets a message, at least 2 links each) and the job is refused
 * above STEP_PACKET_MAX_HOPS packet-hops or when the caller's packet_admit
 * says no (memory: every packet may be queued at once); TP/CP/EP plans
 * (step_stagecoll.c) are not in the estimate, so the budget is checked
 * again at every plan start. In-network reduction runs as SHARP on the
 * fabric's switches (packet_sharp.h; its estimate counts each rank's
 * packets twice, up and down); NVLS and what else the packet tier refuses
 * is refused with the plan's kind named (pkc_plan_check,
 * pkt_sharp_plan_check).
 */
#include "step_des_internal.h"

#include <math.h>
#include <stdio.h>

#include "netcoll_internal.h"
#include "packet_bench.h"
#include "packet_coll.h"
#include "packet_sharp.h"

/* the packets one start of plan p sends */
static double plan_packets(const nc_plan *p, double mtu_bytes)
{
    double n = 0;
    for (uint32_t i = 0; i < p->n_phases; i++) {
        const nc_phase *ph = &p->phase[i];
        for (uint32_t k = 0; k < ph->n_conn; k++)
            n += ceil(ceil(ph->bytes * nc_phase_conn(p, ph, k).weight) / mtu_bytes);
    }
    return n;
}

/* a plan the packet tier refuses: one line naming the traffic and why */
static int refuse_plan(des *z, const nc_plan *p, const char *what)
{
    char why[256];
    if (!pkc_plan_check(p, why, sizeof why) &&
        !pkt_sharp_plan_check(z->f->nc.g, p, why, sizeof why))
        return 0;
    return sim_error_set(z->err, SIM_ERR_INPUT, NULL, 0,
                         "the packet network cannot run the %s: %s; use network=\"concurrent\" "
                         "(the flow net)", what, why);
}

/* every PP, DP and gather message of the iteration; 0 or an error code */
static int packet_estimate(des *z, double *packets)
{
    double mtu = z->o->packet_cfg->mtu_bytes, n = 0;
    int rc = 0;
    for (unsigned d = 0; d < z->D && !rc; d++)
        for (unsigned b = 0; b + 1 < z->n_pos && !rc; b++)
            for (int dir = 0; dir < 2 && !rc; dir++) {
                if (b % z->P == (b + 1) % z->P) /* one stage: handed over in place */
                    continue;
                if ((rc = step_des_pp_plan(z, d, b, dir)) != 0)
                    break;
                const nc_plan *p = &z->pp[((size_t)d * (z->n_pos - 1) + b) * 2 + (unsigned)dir];
                rc = refuse_plan(z, p, "PP sends");
                n += z->m * plan_packets(p, mtu);
            }
    for (unsigned j = 0; j < z->n_pos && !rc; j++) {
        const dp_chain *dc = &z->sr->dc[j];
        rc = refuse_plan(z, &z->dp_plan[j], "DP gradient reduction");
        if (!rc && dc->gather_bytes > 0 && z->ag_plan[j].n_phases)
            rc = refuse_plan(z, &z->ag_plan[j], "DP parameter gather");
        n += dc->buckets * plan_packets(&z->dp_plan[j], mtu);
        if (dc->gather_bytes > 0)
            n += dc->buckets * plan_packets(&z->ag_plan[j], mtu);
    }
    *packets = n;
    return rc;
}

/* The PP sends' and DP buckets' plans live as long as the iteration and
 * start once per micro-batch or bucket: on a static router their coupled
 * routes are kept (5 bytes a usage), up to this many usages (20 MB); the
 * built-in default's 16K-GPU iteration keeps 1.96 M of them. */
#define STEP_KEPT_ROUTE_USAGES ((size_t)1 << 22)

int step_des_net_create(des *z)
{
    const step_options *o = z->o;
    if (!o->packet) {
        z->x = z->folded ? nc_exec_create_folded(z->eng, &z->f->nc, &z->fold)
                         : nc_exec_create(z->eng, &z->f->nc);
        return !z->x || nc_exec_track_links(z->x) ||
                       nc_exec_keep_routes(z->x, STEP_KEPT_ROUTE_USAGES)
                   ? step_no_memory(z->err)
                   : 0;
    }
    double packets;
    int rc = packet_estimate(z, &packets);
    if (rc)
        return rc;
    double hops = 2 * packets;
    z->out->packet_hops_estimate = hops;
    if (hops > STEP_PACKET_MAX_HOPS)
        return sim_error_set(z->err, SIM_ERR_INPUT, NULL, 0,
                             "the packet network: this iteration's PP and DP messages take at "
                             "least %.3g packet-hops (about %.0f s at %.0f M/s), above its "
                             "budget of %.0e: a smaller job (fewer GPUs or micro-batches, a "
                             "smaller model) or network=\"concurrent\" (the flow net)",
                             hops, hops / PKB_PACKET_HOPS_PER_S, PKB_PACKET_HOPS_PER_S / 1e6,
                             STEP_PACKET_MAX_HOPS);
    if (o->packet_admit && (rc = o->packet_admit(o->packet_admit_ctx, packets, hops, z->err)))
        return rc;
    char why[256];
    z->pnet = pkt_net_create(z->eng, z->f->nc.g, z->f->nc.router, o->packet_cfg, why,
                             sizeof why);
    if (!z->pnet)
        return sim_error_set(z->err, SIM_ERR_INPUT, NULL, 0, "the packet network: %s", why);
    z->px = pkx_create(z->eng, z->pnet);
    if (!z->px)
        return step_no_memory(z->err);
    if (o->packet_series_bins &&
        !(z->pser = pkt_series_create(z->pnet, o->packet_series_dt_s, o->packet_series_bins,
                                      why, sizeof why)))
        return sim_error_set(z->err, SIM_ERR_INPUT, NULL, 0, "the packet network: %s", why);
    return 0;
}

int step_des_net_record(des *z)
{
    step_profile *out = z->out;
    out->is_packet = 1;
    out->packet_stats = *pkt_net_get_stats(z->pnet);
    out->packet_plans = pkx_started(z->px);
    out->packet_events = sim_events_fired(z->eng);
    out->packet_digest = sim_digest(z->eng);
    out->packet_end_s = sim_now(z->eng);
    if (z->pser && pkt_series_finish(z->pser, out->packet_end_s))
        return -1;
    out->packet_series = z->pser; /* the profile owns it now */
    z->pser = NULL;
    return 0;
}

void step_des_net_free(des *z)
{
    nc_exec_destroy(z->x);
    pkt_series_destroy(z->pser); /* before its net */
    pkx_destroy(z->px);
    pkt_net_destroy(z->pnet);
}

/* a packet executor's failure as an error code, with its reason */
static int packet_failure(des *z, int rc)
{
    return sim_error_set(z->err, rc == -2 ? SIM_ERR_NOMEM : SIM_ERR_INPUT, NULL, 0,
                         "the packet network: %s", pkx_why(z->px));
}

int step_des_start(des *z, const nc_plan *p, uint32_t first, unsigned cls, uint64_t tag)
{
    if (!z->px)
        return z->folded ? nc_exec_start_folded(z->x, p, first, cls, step_des_plan_done, z, tag,
                                                z->err)
                         : nc_exec_start(z->x, p, cls, step_des_plan_done, z, tag, z->err);
    double hops = (double)pkt_net_get_stats(z->pnet)->packet_hops;
    if (hops > STEP_PACKET_MAX_HOPS)
        return sim_error_set(z->err, SIM_ERR_INPUT, NULL, 0,
                             "the packet network passed its budget of %.0e packet-hops at %.6g "
                             "s simulated (TP, CP or EP flows across scale-up domains are not in "
                             "the estimate): a smaller job or network=\"concurrent\"",
                             STEP_PACKET_MAX_HOPS, sim_now(z->eng));
    int rc = pkx_start(z->px, p, step_des_plan_done, z, tag);
    return rc ? packet_failure(z, rc) : 0;
}

double step_des_link_bytes(des *z, uint32_t l)
{
    if (z->px)
        return pkt_net_link_stats(z->pnet, l).bytes_sent;
    return flow_net_link_bytes(nc_exec_net(z->x), step_des_net_link(z, l));
}

int step_des_net_error(des *z)
{
    if (!z->px)
        return nc_exec_error(z->x);
    if (pkx_error(z->px))
        return packet_failure(z, pkx_error(z->px));
    char why[256];
    if (pkt_net_check(z->pnet, why, sizeof why))
        return sim_error_set(z->err, SIM_ERR_INTERNAL, NULL, 0, "the packet network: %s", why);
    return 0;
}
