/* perfetto.c - the step profile as Trace Event Format JSON (perfetto.h).
 * Times are microseconds (the format's unit), printed as the shortest
 * decimal that reads back as the same double; one event per line, in a
 * fixed order (metadata, tasks in the profile's order, DP and optimizer per
 * stage, fabric counters), so the same profile gives the same bytes.
 * Layout: pid = pipeline stage (tid 0 its forwards and backwards, tid 1 its
 * DP reduction and optimizer step), pid = n_stages the fabric's counters,
 * pid = n_stages + 1 + kind the concurrent iteration's logged flows of each
 * kind (PP sends, DP reductions, parameter gathers), one complete event
 * per flow on lanes (tids) where no two overlap: the first lane free when
 * it starts (flows come in start order).
 */
#include "perfetto.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "summary.h"

#define US_PER_S 1e6

typedef struct pf_writer {
    FILE *f;
    int n_events;    /* events written so far: a comma before all but the first */
    int non_finite;  /* a number was inf or NaN (printed as null, refused at the end) */
} pf_writer;

static void pf_number(pf_writer *w, double x)
{
    char buf[32];
    if (!isfinite(x))
        w->non_finite = 1;
    summary_number_text(x, buf, sizeof buf);
    fputs(buf, w->f);
}

/* the start of an event: {"ph":"PH","name":"NAME","pid":PID,"tid":TID */
static void pf_begin(pf_writer *w, const char *ph, const char *name, unsigned pid, unsigned tid)
{
    fprintf(w->f, "%s\n{\"ph\":\"%s\",\"name\":\"%s\",\"pid\":%u,\"tid\":%u",
            w->n_events++ ? "," : "", ph, name, pid, tid);
}

/* a complete event ("X") from start_s to end_s; the caller adds args and "}" */
static void pf_complete(pf_writer *w, const char *name, const char *cat, unsigned pid,
                        unsigned tid, double start_s, double end_s)
{
    pf_begin(w, "X", name, pid, tid);
    fprintf(w->f, ",\"cat\":\"%s\",\"ts\":", cat);
    pf_number(w, start_s * US_PER_S);
    fputs(",\"dur\":", w->f);
    pf_number(w, end_s * US_PER_S - start_s * US_PER_S);
}

/* process and thread names ("M" events) and the order of the processes */
static void pf_process(pf_writer *w, unsigned pid, const char *name, unsigned sort)
{
    pf_begin(w, "M", "process_name", pid, 0);
    fprintf(w->f, ",\"args\":{\"name\":\"%s\"}}", name);
    pf_begin(w, "M", "process_sort_index", pid, 0);
    fprintf(w->f, ",\"args\":{\"sort_index\":%u}}", sort);
}

static void pf_thread(pf_writer *w, unsigned pid, unsigned tid, const char *name)
{
    pf_begin(w, "M", "thread_name", pid, tid);
    fprintf(w->f, ",\"args\":{\"name\":\"%s\"}}", name);
}

static void write_stages(pf_writer *w, const step_profile *p)
{
    char name[64];
    for (unsigned s = 0; s < p->n_stages; s++) {
        snprintf(name, sizeof name, "stage %u", s);
        pf_process(w, s, name, s);
        pf_thread(w, s, 0, "compute");
        pf_thread(w, s, 1, "DP + optimizer");
    }
    for (size_t i = 0; i < p->n_tasks; i++) {
        const sched_task *t = &p->tasks[i];
        snprintf(name, sizeof name, "%c mb%u c%u", t->backward ? 'B' : 'F', t->microbatch,
                 t->chunk);
        pf_complete(w, name, t->backward ? "backward" : "forward", t->stage, 0, t->start_s,
                    t->end_s);
        fprintf(w->f, ",\"args\":{\"stage\":%u,\"chunk\":%u,\"microbatch\":%u}}", t->stage,
                t->chunk, t->microbatch);
    }
    /* the reduction from its first bucket to the optimizer step, which ends
     * the stage (step.h: dp_start_s); empty parts are left out */
    for (unsigned s = 0; s < p->n_stages; s++) {
        const step_stage *st = &p->stage[s];
        double opt_start = st->end_s - st->part_s[STEP_OPTIMIZER];
        if (opt_start > st->dp_start_s) {
            pf_complete(w, "DP reduction", "dp", s, 1, st->dp_start_s, opt_start);
            fprintf(w->f, ",\"args\":{\"stage\":%u,\"exposed_s\":", s);
            pf_number(w, st->part_s[STEP_DP]);
            fputs("}}", w->f);
        }
        if (st->end_s > opt_start) {
            pf_complete(w, "optimizer", "optimizer", s, 1, opt_start, st->end_s);
            fprintf(w->f, ",\"args\":{\"stage\":%u}}", s);
        }
    }
}

static void pf_counter(pf_writer *w, const char *name, unsigned pid, double t, double peak,
                       double mean)
{
    pf_begin(w, "C", name, pid, 0);
    fputs(",\"ts\":", w->f);
    pf_number(w, t * US_PER_S);
    fputs(",\"args\":{\"peak\":", w->f);
    pf_number(w, 100 * peak);
    fputs(",\"mean\":", w->f);
    pf_number(w, 100 * mean);
    fputs("}}", w->f);
}

/* per tier with traffic, a counter of link utilisation in percent: the
 * busiest link's and the mean over the tier's links. The concurrent
 * iteration gives them per time bin (the shared net's traffic, PP and DP);
 * else each is averaged over the iteration, held from 0 to its end. */
static void write_fabric(pf_writer *w, const step_profile *p)
{
    double sum[STEP_TIERS] = {0};
    unsigned n[STEP_TIERS] = {0};
    for (uint32_t l = 0; l < p->n_links; l++)
        if (p->link_tier[l] < STEP_TIERS) {
            sum[p->link_tier[l]] += p->link_utilisation[l];
            n[p->link_tier[l]]++;
        }
    unsigned pid = p->n_stages;
    pf_process(w, pid, "fabric", pid);
    for (int t = 0; t < STEP_TIERS; t++) {
        if (!(p->tier_bytes[t] > 0) || !n[t])
            continue;
        char name[64];
        snprintf(name, sizeof name, "%s link utilisation %%", step_tier_name(t));
        if (p->n_bins) {
            for (unsigned b = 0; b < p->n_bins; b++)
                pf_counter(w, name, pid, b * p->bin_s, p->bin_peak[b * STEP_TIERS + t],
                           p->bin_mean[b * STEP_TIERS + t]);
            pf_counter(w, name, pid, p->n_bins * p->bin_s, 0, 0);
            continue;
        }
        for (int end = 0; end < 2; end++)
            pf_counter(w, name, pid, end ? p->iteration_s : 0, p->tier_peak_utilisation[t],
                       sum[t] / n[t]);
    }
}

/* lanes: a binary min-heap of (end, lane), the lane that frees first on top */
typedef struct pf_lane {
    double end_s;
    unsigned lane;
} pf_lane;

static int lane_before(const pf_lane *a, const pf_lane *b)
{
    return a->end_s < b->end_s || (a->end_s == b->end_s && a->lane < b->lane);
}

static void lane_sift_down(pf_lane *h, size_t n, size_t i)
{
    for (;;) { /* at most log2(n) levels */
        size_t m = i, l = 2 * i + 1, r = l + 1;
        if (l < n && lane_before(&h[l], &h[m]))
            m = l;
        if (r < n && lane_before(&h[r], &h[m]))
            m = r;
        if (m == i)
            return;
        pf_lane t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static void lane_push(pf_lane *h, size_t *n, pf_lane x)
{
    size_t i = (*n)++;
    h[i] = x;
    while (i > 0 && lane_before(&h[i], &h[(i - 1) / 2])) {
        pf_lane t = h[i];
        h[i] = h[(i - 1) / 2];
        h[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static void write_flow(pf_writer *w, const step_flow *f, unsigned pid, unsigned lane)
{
    static const char *const names[STEP_FLOW_KINDS] = {
        "PP send", "DP bucket", "gather bucket", "TP", "CP", "EP all-to-all"};
    static const char *const cats[STEP_FLOW_KINDS] = {"flow-pp", "flow-dp", "flow-gather",
                                                      "flow-tp", "flow-cp", "flow-ep"};
    /* PP, TP, CP and EP flows belong to a replica's micro-batch */
    int per_microbatch = f->kind == STEP_FLOW_PP || f->kind >= STEP_FLOW_TP;
    char name[96];
    if (per_microbatch)
        snprintf(name, sizeof name, "%s %c mb%u r%u", names[f->kind], f->backward ? 'B' : 'F',
                 f->index, f->replica);
    else
        snprintf(name, sizeof name, "%s %u c%u", names[f->kind], f->index, f->chunk);
    pf_complete(w, name, cats[f->kind], pid, lane, f->start_s, f->end_s);
    fprintf(w->f, ",\"args\":{\"kind\":\"%s\",\"stage\":%u,\"chunk\":%u,\"%s\":%u",
            step_flow_kind_name(f->kind), f->stage, f->chunk,
            per_microbatch ? "microbatch" : "bucket", f->index);
    if (per_microbatch)
        fprintf(w->f, ",\"replica\":%u,\"backward\":%u", f->replica, f->backward);
    fprintf(w->f, ",\"phase\":%u,\"src\":%u,\"dst\":", f->phase, f->src);
    if (f->dst == UINT32_MAX)
        fputs("null", w->f);
    else
        fprintf(w->f, "%u", f->dst);
    fprintf(w->f, ",\"connections\":%u,\"bytes\":", f->n_conn);
    pf_number(w, f->bytes);
    fputs("}}", w->f);
}

/* the flow log: a process per kind of traffic, lanes as its threads */
static int write_flows(pf_writer *w, const step_profile *p)
{
    static const char *const procs[STEP_FLOW_KINDS] = {
        "flows: PP sends", "flows: DP reductions", "flows: parameter gathers",
        "flows: TP collectives", "flows: CP exchanges", "flows: EP all-to-alls"};
    pf_lane *heap = malloc((p->n_flows ? p->n_flows : 1) * sizeof *heap);
    if (!heap)
        return -1;
    for (int k = 0; k < STEP_FLOW_KINDS; k++) {
        unsigned pid = p->n_stages + 1 + (unsigned)k, lanes = 0;
        size_t n = 0;
        for (size_t i = 0; i < p->n_flows; i++) {
            const step_flow *f = &p->flows[i];
            if (f->kind != k)
                continue;
            if (!lanes)
                pf_process(w, pid, procs[k], pid);
            pf_lane x = {f->end_s, lanes};
            if (n && heap[0].end_s <= f->start_s) { /* the lane freed first takes it */
                x.lane = heap[0].lane;
                heap[0] = x;
                lane_sift_down(heap, n, 0);
            } else {
                lanes++;
                lane_push(heap, &n, x);
            }
            write_flow(w, f, pid, x.lane);
        }
        char name[32];
        for (unsigned l = 0; l < lanes; l++) {
            snprintf(name, sizeof name, "lane %u", l);
            pf_thread(w, pid, l, name);
        }
    }
    free(heap);
    return 0;
}

int perfetto_write_step(outpath *op, const step_profile *p, sim_error *err)
{
    outpath_remove_stale(op);
    pf_writer w = {.f = fopen(op->tmp, "w")};
    if (!w.f)
        return sim_error_set(err, SIM_ERR_IO, op->path, 0, "cannot write %s: %s", op->what,
                             strerror(errno));
    fputs("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"producer\":\"dcsim step\","
          "\"iteration_s\":", w.f);
    pf_number(&w, p->iteration_s);
    fprintf(w.f, ",\"critical_stage\":%u,\"stages\":%u", p->critical_stage, p->n_stages);
    if (p->flows_total) /* the concurrent iteration's flow log */
        fprintf(w.f, ",\"flows\":%zu,\"flows_total\":%llu,\"flows_truncated\":%s", p->n_flows,
                (unsigned long long)p->flows_total, p->flows_truncated ? "true" : "false");
    fputs("},\n\"traceEvents\":[", w.f);
    write_stages(&w, p);
    write_fabric(&w, p);
    int no_memory = write_flows(&w, p);
    fputs("\n]}\n", w.f);
    int failed = ferror(w.f), e = errno;
    if (no_memory && !failed) {
        failed = 1;
        e = ENOMEM;
    }
    if (fclose(w.f) && !failed) {
        failed = 1;
        e = errno;
    }
    if (failed || w.non_finite) {
        outpath_discard(op);
        if (failed)
            return sim_error_set(err, SIM_ERR_IO, op->path, 0, "cannot write %s: %s", op->what,
                                 strerror(e));
        return sim_error_set(err, SIM_ERR_INTERNAL, op->path, 0,
                             "cannot write %s: the step profile has a time that is not finite",
                             op->what);
    }
    return outpath_commit(op, 0, err);
}
