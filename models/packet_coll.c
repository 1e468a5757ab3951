/* packet_coll.c - a collective's plan on the packet tier (packet_coll.h):
 * one plan on the shared-net executor (packet_exec.h) on an idle net, run
 * until the engine is empty.
 */
#include "packet_coll.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "netcoll_internal.h"
#include "packet_exec.h"
#include "packet_sharp.h"

static int say(char *why, size_t why_size, int rc, const char *msg)
{
    if (why && why_size)
        snprintf(why, why_size, "%s", msg);
    return rc;
}

int pkc_plan_check(const nc_plan *p, char *why, size_t why_size)
{
    if (!p || p->failed)
        return say(why, why_size, -1, "packet collective: no plan (it failed to build)");
    for (uint32_t i = 0; i < p->n_phases; i++) {
        const nc_phase *ph = &p->phase[i];
        if (!isfinite(ph->bytes) || ph->bytes < 0 || !isfinite(ph->latency_s) ||
            ph->latency_s < 0)
            return say(why, why_size, -1, "packet collective: a phase's size or latency is "
                       "not finite and non-negative");
        uint32_t fixed = 0;
        for (uint32_t k = 0; k < ph->n_conn; k++)
            fixed += nc_phase_conn(p, ph, k).dst == NC_FIXED_LINK;
        if (fixed && fixed != ph->n_conn)
            return say(why, why_size, -1, "packet collective: a phase mixes connections to "
                       "fixed links (in-network reduction) with routed ones");
        if (!fixed && !isinf(ph->rate_cap))
            return say(why, why_size, -1, "packet collective: a phase has a rate cap outside "
                       "in-network reduction, which the packet tier does not model");
        if (fixed && !(ph->rate_cap > 0))
            return say(why, why_size, -1, "packet collective: an in-network phase's reduction "
                       "rate must be positive");
    }
    return 0;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* the fullest egress FIFO over every link */
static void max_queue(const pkt_net *net, uint32_t n_links, pkc_result *out)
{
    out->max_queued_bytes = 0;
    out->max_queued_link = UINT32_MAX;
    for (uint32_t l = 0; l < n_links; l++) {
        pkt_link_stats ls = pkt_net_link_stats(net, l);
        if (ls.max_queued_bytes > out->max_queued_bytes) {
            out->max_queued_bytes = ls.max_queued_bytes;
            out->max_queued_link = l;
        }
    }
}

/* pkc_run's plan is done: when, from the start */
typedef struct coll_end {
    sim_engine *eng;
    double t0, end;
    int is_done;
} coll_end;

static void coll_done(void *ctx, uint64_t tag)
{
    (void)tag;
    coll_end *e = ctx;
    e->end = sim_now(e->eng) - e->t0;
    e->is_done = 1;
}

int pkc_run(sim_engine *eng, pkt_net *net, const nc_plan *p, double *phase_start_s,
            double *phase_end_s, pkc_result *out, char *why, size_t why_size)
{
    if (!eng || !net || !out)
        return say(why, why_size, -1, "packet collective: missing argument");
    if (pkc_plan_check(p, why, why_size))
        return -1;
    pkx *x = pkx_create(eng, net);
    if (!x)
        return say(why, why_size, -2, "packet collective: out of memory");
    memset(out, 0, sizeof *out);
    for (uint32_t i = 0; i < p->n_phases; i++) {
        for (uint32_t k = 0; k < p->phase[i].n_conn; k++)
            out->plan_bytes += p->phase[i].bytes * nc_phase_conn(p, &p->phase[i], k).weight;
    }
    coll_end e = {.eng = eng, .t0 = sim_now(eng)};
    double w0 = now_s();
    pkx_record_phases(x, phase_start_s, phase_end_s);
    int failed = pkx_start(x, p, coll_done, &e, 0);
    if (!failed && sim_run(eng, INFINITY) != SIM_RUN_EMPTY && !pkx_error(x))
        failed = say(why, why_size, -2, sim_engine_failure(eng));
    else if (!failed && pkx_error(x))
        failed = say(why, why_size, pkx_error(x), pkx_why(x));
    else if (failed)
        say(why, why_size, failed, pkx_why(x));
    if (!failed && !e.is_done)
        failed = say(why, why_size, -2, "packet collective: a phase never ended");
    if (!failed) {
        out->wall_s = now_s() - w0;
        out->time_s = e.end;
        out->messages = pkx_messages(x);
        out->sent_bytes = pkx_sent_bytes(x);
        out->stats = *pkt_net_get_stats(net);
        out->max_queued_link = UINT32_MAX; /* pkc_compare_run fills both */
    }
    pkx_destroy(x);
    return failed;
}

int pkc_compare_run(const nc_fabric *f, const pkt_config *cfg, const nc_plan *p,
                    pkc_compare *out, char *why, size_t why_size)
{
    return pkc_compare_run_series(f, cfg, p, NULL, out, why, why_size);
}

int pkc_compare_run_series(const nc_fabric *f, const pkt_config *cfg, const nc_plan *p,
                           pkt_series_request *req, pkc_compare *out, char *why,
                           size_t why_size)
{
    if (req)
        req->series = NULL;
    if (!f || !cfg || !p || !out)
        return say(why, why_size, -1, "packet collective: missing argument");
    memset(out, 0, sizeof *out);
    if (pkc_plan_check(p, why, why_size) || pkt_sharp_plan_check(f->g, p, why, why_size))
        return -1;
    sim_error err = {0};
    if (nc_simulate(p, f, &out->flow, &err))
        return say(why, why_size, err.code == SIM_ERR_INPUT ? -1 : -2, err.msg);
    sim_engine *eng = sim_engine_create();
    pkt_net *net = eng ? pkt_net_create(eng, f->g, f->router, cfg, why, why_size) : NULL;
    int rc = !eng ? say(why, why_size, -2, "packet collective: out of memory") : net ? 0 : -1;
    if (!rc && req &&
        !(req->series = pkt_series_create(net, req->dt_s, req->max_bins, why, why_size)))
        rc = -1;
    if (!rc)
        rc = pkc_run(eng, net, p, NULL, NULL, &out->packet, why, why_size);
    if (!rc) {
        max_queue(net, f->g->n_links, &out->packet);
        out->digest = sim_digest(eng);
        out->events_fired = sim_events_fired(eng);
        out->check_rc = pkt_net_check(net, why, why_size);
        if (out->check_rc)
            rc = -2;
    }
    if (!rc && req && pkt_series_finish(req->series, sim_now(eng)))
        rc = say(why, why_size, -2, "packet collective: out of memory (time series)");
    if (rc && req) {
        pkt_series_destroy(req->series);
        req->series = NULL;
    }
    pkt_net_destroy(net);
    sim_engine_destroy(eng);
    return rc;
}
