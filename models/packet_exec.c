/* packet_exec.c - plans on a shared packet net (packet_exec.h). One run
 * record per plan in flight (a doubly linked list, freed on destroy): per
 * phase the dependencies and messages left, the dependents of each phase
 * (CSR, as netcoll_exec.c builds them); messages carry their phase as tag,
 * phase ends are KIND_NC_PHASE_DONE events with the phase as data.
 */
#include "packet_exec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event_kinds.h"
#include "netcoll_internal.h"
#include "packet_coll.h"
#include "packet_sharp.h"

typedef struct pkx_run {
    pkx *x;
    const nc_plan *p;
    double t0;
    uint32_t *deps_left, *msgs_left;  /* per phase */
    uint32_t *next_offset, *next;     /* dependents of each phase (CSR) */
    uint32_t phases_left;
    double *start_s, *end_s;          /* the caller's, or NULL */
    pkx_done_fn done;
    void *ctx;
    uint64_t tag;
    struct pkx_run *prev, *nextrun;   /* runs in flight */
} pkx_run;

struct pkx {
    sim_engine *eng;
    pkt_net *net;
    pkx_run *runs;
    double *rec_start, *rec_end;      /* pkx_record_phases, for the next start */
    uint64_t started, finished, messages;
    double sent_bytes;
    int failed;                       /* 0, -1 (refused, a send failed) or -2 (no memory) */
    char why[320];
};

static int fail(pkx *x, int rc, const char *msg)
{
    if (!x->failed) {
        x->failed = rc;
        snprintf(x->why, sizeof x->why, "%s", msg);
    }
    return rc;
}

pkx *pkx_create(sim_engine *eng, pkt_net *net)
{
    pkx *x = calloc(1, sizeof *x);
    if (x) {
        x->eng = eng;
        x->net = net;
    }
    return x;
}

static void run_free(pkx_run *r)
{
    pkx *x = r->x;
    if (r->prev)
        r->prev->nextrun = r->nextrun;
    else
        x->runs = r->nextrun;
    if (r->nextrun)
        r->nextrun->prev = r->prev;
    free(r);
}

void pkx_destroy(pkx *x)
{
    if (!x)
        return;
    while (x->runs)
        run_free(x->runs);
    free(x);
}

void pkx_record_phases(pkx *x, double *phase_start_s, double *phase_end_s)
{
    x->rec_start = phase_start_s;
    x->rec_end = phase_end_s;
}

static void phase_done(sim_engine *eng, void *ctx, uint64_t data);

/* schedule phase i's end latency_s from now; 0 or -2 */
static int end_phase_in(pkx_run *r, uint32_t i)
{
    const nc_phase *ph = &r->p->phase[i];
    double lat = ph->latency_s; /* a table's SHARP latency is the flow tier's, not ours */
    if (r->p->sharp_table_latency_s > 0 && pkt_sharp_is_phase(r->p, ph))
        lat -= r->p->sharp_table_latency_s;
    if (!sim_schedule_in(r->x->eng, lat, 0, KIND_NC_PHASE_DONE, phase_done, r, i))
        return fail(r->x, -2, "packet collective: out of memory");
    return 0;
}

static void msg_done(void *ctx, uint64_t tag)
{
    pkx_run *r = ctx;
    uint32_t i = (uint32_t)tag;
    if (--r->msgs_left[i] == 0 && end_phase_in(r, i))
        sim_stop(r->x->eng);
}

/* send phase i's messages (or schedule its end when it has none); 0 or the
 * failure */
static int start_phase(pkx_run *r, uint32_t i)
{
    pkx *x = r->x;
    const nc_phase *ph = &r->p->phase[i];
    if (r->start_s)
        r->start_s[i] = sim_now(x->eng) - r->t0;
    if (pkt_sharp_is_phase(r->p, ph)) { /* one SHARP all-reduce (packet_sharp.h) */
        const pkt_net_stats *st = pkt_net_get_stats(x->net);
        double sent = st->sharp_bytes_sent;
        r->msgs_left[i] = 1;
        if (pkt_sharp_start_phase(x->net, r->p, ph, msg_done, r, i)) {
            char msg[320];
            snprintf(msg, sizeof msg, "packet collective: phase %u: %s", i,
                     pkt_net_error(x->net));
            return fail(x, -1, msg);
        }
        x->messages += (uint64_t)llround((st->sharp_bytes_sent - sent) / ceil(ph->bytes));
        x->sent_bytes += st->sharp_bytes_sent - sent;
        return 0;
    }
    uint32_t n = 0;
    for (uint32_t k = 0; k < ph->n_conn; k++)
        n += ceil(ph->bytes * nc_phase_conn(r->p, ph, k).weight) >= 1;
    r->msgs_left[i] = n;
    if (n == 0)
        return end_phase_in(r, i);
    for (uint32_t k = 0; k < ph->n_conn; k++) {
        nc_conn cn = nc_phase_conn(r->p, ph, k);
        double bytes = ceil(ph->bytes * cn.weight);
        if (!(bytes >= 1))
            continue;
        if (pkt_send(x->net, cn.src, cn.dst, bytes, nc_route_key(i, k), msg_done, r, i)) {
            char msg[320];
            snprintf(msg, sizeof msg, "packet collective: phase %u, host %u to host %u: %s", i,
                     cn.src, cn.dst, pkt_net_error(x->net));
            return fail(x, -1, msg);
        }
        x->messages++;
        x->sent_bytes += bytes;
    }
    return 0;
}

static void phase_done(sim_engine *eng, void *ctx, uint64_t data)
{
    pkx_run *r = ctx;
    pkx *x = r->x;
    uint32_t i = (uint32_t)data;
    if (r->end_s)
        r->end_s[i] = sim_now(eng) - r->t0;
    for (uint32_t k = r->next_offset[i]; k < r->next_offset[i + 1] && !x->failed; k++)
        if (--r->deps_left[r->next[k]] == 0 && start_phase(r, r->next[k]))
            sim_stop(eng);
    if (--r->phases_left == 0) {
        pkx_done_fn done = r->done;
        void *dctx = r->ctx;
        uint64_t tag = r->tag;
        run_free(r);
        x->finished++;
        if (done)
            done(dctx, tag);
    }
}

/* the per-phase counters and the dependents of every phase; 0 or -1 */
static int build(pkx_run *r, uint32_t *block)
{
    const nc_plan *p = r->p;
    size_t n = p->n_phases;
    r->deps_left = block;
    r->msgs_left = block + n;
    r->next_offset = block + 2 * n;
    r->next = r->next_offset + n + 2;
    memset(r->next_offset, 0, (n + 2) * sizeof *r->next_offset);
    for (uint32_t i = 0; i < p->n_phases; i++) {
        r->deps_left[i] = p->phase[i].n_deps;
        for (uint32_t k = 0; k < p->phase[i].n_deps; k++) {
            uint32_t d = p->deps[p->phase[i].dep_first + k];
            if (d >= i) /* plans list a phase after those it waits for */
                return -1;
            r->next_offset[d + 2]++;
        }
    }
    for (uint32_t i = 0; i < p->n_phases; i++)
        r->next_offset[i + 2] += r->next_offset[i + 1];
    for (uint32_t i = 0; i < p->n_phases; i++)
        for (uint32_t k = 0; k < p->phase[i].n_deps; k++) {
            uint32_t d = p->deps[p->phase[i].dep_first + k];
            r->next[r->next_offset[d + 1]++] = i;
        }
    r->phases_left = p->n_phases;
    return 0;
}

int pkx_start(pkx *x, const nc_plan *p, pkx_done_fn done, void *ctx, uint64_t tag)
{
    double *rec_start = x->rec_start, *rec_end = x->rec_end;
    x->rec_start = x->rec_end = NULL;
    char why[256];
    if (pkc_plan_check(p, why, sizeof why) ||
        pkt_sharp_plan_check(pkt_net_graph(x->net), p, why, sizeof why))
        return fail(x, -1, why);
    size_t n = p->n_phases;
    /* the run record and its block in one allocation */
    size_t words = 3 * n + 2 + (size_t)p->n_deps + 1;
    pkx_run *r = malloc(sizeof *r + words * sizeof(uint32_t));
    if (!r)
        return fail(x, -2, "packet collective: out of memory");
    *r = (pkx_run){.x = x, .p = p, .t0 = sim_now(x->eng), .start_s = rec_start,
                   .end_s = rec_end, .done = done, .ctx = ctx, .tag = tag};
    if (build(r, (uint32_t *)(r + 1))) {
        free(r);
        return fail(x, -1, "packet collective: a phase waits for a later one");
    }
    r->nextrun = x->runs;
    if (x->runs)
        x->runs->prev = r;
    x->runs = r;
    x->started++;
    if (n == 0) { /* nothing to move: done at once */
        run_free(r);
        x->finished++;
        if (done)
            done(ctx, tag);
        return 0;
    }
    for (uint32_t i = 0; i < n && !x->failed; i++)
        if (r->deps_left[i] == 0 && start_phase(r, i))
            return x->failed;
    return 0;
}

int pkx_error(const pkx *x) { return x->failed; }
const char *pkx_why(const pkx *x) { return x->why; }
uint64_t pkx_started(const pkx *x) { return x->started; }
uint64_t pkx_finished(const pkx *x) { return x->finished; }
uint64_t pkx_messages(const pkx *x) { return x->messages; }
double pkx_sent_bytes(const pkx *x) { return x->sent_bytes; }
