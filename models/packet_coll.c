/* packet_coll.c - a collective's plan on the packet tier (packet_coll.h).
 * One run record: per phase the dependencies and messages left, the
 * dependents of each phase (CSR, as netcoll_exec.c builds them); messages
 * carry their phase as tag, phase ends are KIND_NC_PHASE_DONE events.
 */
#include "packet_coll.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "event_kinds.h"
#include "netcoll_internal.h"

typedef struct coll_run {
    sim_engine *eng;
    pkt_net *net;
    const nc_plan *p;
    double t0;
    uint32_t *deps_left, *msgs_left;  /* per phase */
    uint32_t *next_offset, *next;     /* dependents of each phase (CSR) */
    uint32_t phases_left;
    double *start_s, *end_s;          /* the caller's, or NULL */
    uint64_t messages;
    double sent_bytes, end;
    int failed;                       /* 0, -1 (a send refused) or -2 (no memory) */
    char *why;
    size_t why_size;
} coll_run;

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
        if (!isinf(ph->rate_cap))
            return say(why, why_size, -1, "packet collective: a phase has a rate cap (an "
                       "in-network reduction's), which the packet tier does not model");
        for (uint32_t k = 0; k < ph->n_conn; k++)
            if (nc_phase_conn(p, ph, k).dst == NC_FIXED_LINK)
                return say(why, why_size, -1, "packet collective: in-network reduction (a "
                           "connection to a switch's aggregation link) is not modelled by the "
                           "packet tier");
    }
    return 0;
}

static void phase_done(sim_engine *eng, void *ctx, uint64_t data);

/* schedule phase i's end latency_s from now; 0 or -2 */
static int end_phase_in(coll_run *c, uint32_t i)
{
    if (!sim_schedule_in(c->eng, c->p->phase[i].latency_s, 0, KIND_NC_PHASE_DONE, phase_done, c,
                         i))
        return c->failed = say(c->why, c->why_size, -2, "packet collective: out of memory");
    return 0;
}

static void msg_done(void *ctx, uint64_t tag)
{
    coll_run *c = ctx;
    uint32_t i = (uint32_t)tag;
    if (--c->msgs_left[i] == 0 && end_phase_in(c, i))
        sim_stop(c->eng);
}

/* send phase i's messages (or schedule its end when it has none); 0 or the
 * failure */
static int start_phase(coll_run *c, uint32_t i)
{
    const nc_phase *ph = &c->p->phase[i];
    if (c->start_s)
        c->start_s[i] = sim_now(c->eng) - c->t0;
    uint32_t n = 0;
    for (uint32_t k = 0; k < ph->n_conn; k++)
        n += ceil(ph->bytes * nc_phase_conn(c->p, ph, k).weight) >= 1;
    c->msgs_left[i] = n;
    if (n == 0)
        return end_phase_in(c, i);
    for (uint32_t k = 0; k < ph->n_conn; k++) {
        nc_conn cn = nc_phase_conn(c->p, ph, k);
        double bytes = ceil(ph->bytes * cn.weight);
        if (!(bytes >= 1))
            continue;
        if (pkt_send(c->net, cn.src, cn.dst, bytes, nc_route_key(i, k), msg_done, c, i)) {
            char msg[320];
            snprintf(msg, sizeof msg, "packet collective: phase %u, host %u to host %u: %s", i,
                     cn.src, cn.dst, pkt_net_error(c->net));
            return c->failed = say(c->why, c->why_size, -1, msg);
        }
        c->messages++;
        c->sent_bytes += bytes;
    }
    return 0;
}

static void phase_done(sim_engine *eng, void *ctx, uint64_t data)
{
    coll_run *c = ctx;
    uint32_t i = (uint32_t)data;
    if (c->end_s)
        c->end_s[i] = sim_now(eng) - c->t0;
    for (uint32_t k = c->next_offset[i]; k < c->next_offset[i + 1] && !c->failed; k++)
        if (--c->deps_left[c->next[k]] == 0 && start_phase(c, c->next[k]))
            sim_stop(eng);
    if (--c->phases_left == 0)
        c->end = sim_now(eng) - c->t0;
}

/* the per-phase counters and the dependents of every phase; 0 or -1 */
static int build(coll_run *c, uint32_t *block)
{
    const nc_plan *p = c->p;
    size_t n = p->n_phases;
    c->deps_left = block;
    c->msgs_left = block + n;
    c->next_offset = block + 2 * n;
    c->next = c->next_offset + n + 2;
    memset(c->next_offset, 0, (n + 2) * sizeof *c->next_offset);
    for (uint32_t i = 0; i < p->n_phases; i++) {
        c->deps_left[i] = p->phase[i].n_deps;
        for (uint32_t k = 0; k < p->phase[i].n_deps; k++) {
            uint32_t d = p->deps[p->phase[i].dep_first + k];
            if (d >= i) /* plans list a phase after those it waits for */
                return -1;
            c->next_offset[d + 2]++;
        }
    }
    for (uint32_t i = 0; i < p->n_phases; i++)
        c->next_offset[i + 2] += c->next_offset[i + 1];
    for (uint32_t i = 0; i < p->n_phases; i++)
        for (uint32_t k = 0; k < p->phase[i].n_deps; k++) {
            uint32_t d = p->deps[p->phase[i].dep_first + k];
            c->next[c->next_offset[d + 1]++] = i;
        }
    c->phases_left = p->n_phases;
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

int pkc_run(sim_engine *eng, pkt_net *net, const nc_plan *p, double *phase_start_s,
            double *phase_end_s, pkc_result *out, char *why, size_t why_size)
{
    if (!eng || !net || !out)
        return say(why, why_size, -1, "packet collective: missing argument");
    if (pkc_plan_check(p, why, why_size))
        return -1;
    size_t n = p->n_phases;
    uint32_t *block = malloc((3 * n + 2 + (size_t)p->n_deps + 1) * sizeof *block);
    if (!block)
        return say(why, why_size, -2, "packet collective: out of memory");
    coll_run c = {.eng = eng, .net = net, .p = p, .t0 = sim_now(eng), .start_s = phase_start_s,
                  .end_s = phase_end_s, .why = why, .why_size = why_size};
    if (build(&c, block)) {
        free(block);
        return say(why, why_size, -1, "packet collective: a phase waits for a later one");
    }
    memset(out, 0, sizeof *out);
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t k = 0; k < p->phase[i].n_conn; k++)
            out->plan_bytes += p->phase[i].bytes * nc_phase_conn(p, &p->phase[i], k).weight;
    }
    double w0 = now_s();
    for (uint32_t i = 0; i < n && !c.failed; i++)
        if (c.deps_left[i] == 0)
            start_phase(&c, i);
    if (!c.failed && sim_run(eng, INFINITY) != SIM_RUN_EMPTY && !c.failed)
        c.failed = say(why, why_size, -2, sim_engine_failure(eng));
    if (!c.failed && c.phases_left)
        c.failed = say(why, why_size, -2, "packet collective: a phase never ended");
    free(block);
    if (c.failed)
        return c.failed;
    out->wall_s = now_s() - w0;
    out->time_s = c.end;
    out->messages = c.messages;
    out->sent_bytes = c.sent_bytes;
    out->stats = *pkt_net_get_stats(net);
    out->max_queued_link = UINT32_MAX; /* pkc_compare_run fills both */
    return 0;
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
    if (pkc_plan_check(p, why, why_size))
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
