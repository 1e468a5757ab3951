/* resources.c - the resource guard (resources.h). */
#include "resources.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "failure_process.h"
#include "routing.h"
#include "step.h"
#include "units.h"

/* Measured per-item costs (x86-64, glibc, Release build), rounded up:
 *  - a failure stream: its xoshiro256 generator (two allocations) and one
 *    pending event: 203 B per GPU measured between 1,048,576 and 4,194,304
 *    GPUs (225 MB and 850 MB peak RSS);
 *  - the fabric at load time: 28 B per directed link (944 MB for the k = 256
 *    fat-tree's 33.5M links, 135 MB for k = 128's 4.2M);
 *  - the step tier: 152 B per directed link of flow and link state besides
 *    the hop tables (972 MB peak for k = 128 with 524,288 GPUs, of which
 *    335 MB hop tables, before the hop tables took 1 B an entry and the
 *    flow net kept its state only for the links its flows use: 129 MB for
 *    the 100K fat-tree's 878K links on the flow path, 87 MB on the analytic
 *    one), and one hop table of 1 B per fabric switch for every first-tier
 *    switch traffic can go to (routing.h), and the router's kept next hops
 *    (topo_router_kept_bytes_bound: at most 3.3 MB on superpod-h100's
 *    1,280 switches);
 *  - the concurrent iteration (step_des.c), measured on superpod-h100
 *    (16,384 GPUs, 128 replicas x 16 stages x 8 chunks x 16 micro-batches:
 *    100 MB peak of dcsim step against 39 MB isolated): 90 B per directed link (link
 *    activity by class, samples, the flow net's link slots: 8 B), 24 B per task of every replica (start,
 *    end, what SM sharing added to it: step_sm.c), 2 B per input of every replica's model position and micro-batch,
 *    2,000 B per cached PP send plan with its share of the flow and event
 *    state (two per replica and stage boundary: 1,100 B covered
 *    superpod-h100, but the built-in default's ECMP collisions on 7:1
 *    spines keep more flows in flight, 147 MB peak on 2026-12-02 where
 *    that gave 124 MB), and the flow log at its cap (step_flow records:
 *    9.6 MB at the default 100,000);
 *  - the program itself: 24 MB. */
#define DES_LINK_BYTES 90.0
#define DES_TASK_BYTES 24.0
#define DES_ARRIVAL_BYTES 2.0
#define DES_PLAN_BYTES 2000.0
#define STREAM_BYTES 220.0
#define FABRIC_LINK_BYTES 32.0
#define STEP_LINK_BYTES 160.0
#define HOP_ENTRY_BYTES 1.0
#define BASE_BYTES (24.0 * 1024 * 1024)

static void take_smaller(res_estimate *out, double bytes, const char *source)
{
    if (bytes > 0 && bytes < out->available_bytes) {
        out->available_bytes = bytes;
        snprintf(out->available_source, sizeof out->available_source, "%s", source);
    }
}

static void available(res_estimate *out)
{
    out->available_bytes = 1e300;
    snprintf(out->available_source, sizeof out->available_source, "unknown");
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0)
        take_smaller(out, (double)pages * (double)page, "physical memory");
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        take_smaller(out, (double)rl.rlim_cur, "ulimit -v (RLIMIT_AS)");
    if (getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        take_smaller(out, (double)rl.rlim_cur, "ulimit -d (RLIMIT_DATA)");
    FILE *f = fopen("/sys/fs/cgroup/memory.max", "r"); /* cgroup v2; "max" = none */
    if (f) {
        char line[64];
        if (fgets(line, sizeof line, f) && strncmp(line, "max", 3) != 0)
            take_smaller(out, strtod(line, NULL), "the cgroup's memory.max");
        fclose(f);
    }
    const char *env = getenv("DCSIM_MEMORY_LIMIT");
    if (env && env[0]) {
        double limit;
        char with_b[64];
        snprintf(with_b, sizeof with_b, "%sB", env); /* "8G" as well as "8GB" */
        if ((sim_units_parse(env, SIM_DIM_DATA, &limit, NULL, 0) == 0 ||
             sim_units_parse(with_b, SIM_DIM_DATA, &limit, NULL, 0) == 0) &&
            limit > 0)
            take_smaller(out, limit, "DCSIM_MEMORY_LIMIT");
        else
            out->bad_limit = 1;
    }
}

/* failure streams of one campaign: one per GPU, node or rack for the
 * exponential causes of that unit (superposed on one stream), one more per
 * unit for every Weibull cause, one per node for stragglers */
static double streams(const campaign_config *c)
{
    double gpus = (double)c->gpu_count;
    double per_node = c->gpus_per_node ? c->gpus_per_node : 8;
    double nodes = gpus / per_node + 1;
    double racks = c->nodes_per_rack ? nodes / c->nodes_per_rack + 1 : 0;
    int gpu_stream = c->gpu_failure_rate_per_s > 0, node_stream = 0, rack_stream = 0;
    double n = 0;
    for (unsigned i = 0; i < c->n_causes; i++) {
        const campaign_cause *x = &c->causes[i];
        double units = x->unit == CAMPAIGN_UNIT_NODE ? nodes
                       : x->unit == CAMPAIGN_UNIT_RACK ? racks
                       : x->unit == CAMPAIGN_UNIT_GPU  ? gpus
                                                       : 1; /* switches, cables: one stream */
        if (!failure_process_is_memoryless(x->process))
            n += units;
        else if (x->unit == CAMPAIGN_UNIT_GPU)
            gpu_stream = 1;
        else if (x->unit == CAMPAIGN_UNIT_NODE)
            node_stream = 1;
        else if (x->unit == CAMPAIGN_UNIT_RACK)
            rack_stream = 1;
        else
            n += 1;
    }
    n += gpu_stream * gpus + node_stream * nodes + rack_stream * racks;
    if (c->straggler_rate_per_s > 0)
        n += nodes;
    return n;
}

void res_estimate_run(const scn_scenario *s, unsigned flags, unsigned campaigns,
                      res_estimate *out)
{
    memset(out, 0, sizeof *out);
    out->campaign_bytes = STREAM_BYTES * streams(&s->campaign) * (campaigns ? campaigns : 1);
    if (s->has_fabric) {
        double links = 0, switches = 0, first_tier = (double)s->fabric_switches[1];
        for (int t = 0; t <= 4; t++) {
            links += 2.0 * (double)s->fabric_cables[t]; /* two directed links per cable */
            switches += (double)s->fabric_switches[t];
        }
        out->fabric_bytes = FABRIC_LINK_BYTES * links;
        if (flags & RES_STEP)
            out->step_bytes = STEP_LINK_BYTES * links + HOP_ENTRY_BYTES * first_tier * switches +
                              topo_router_kept_bytes_bound(switches);
        const parallel_config *p = &s->par;
        if ((flags & RES_STEP) && s->step.concurrent && p->dp && p->micro_batch) {
            double replicas = p->dp, positions = (double)p->pp * (p->vpp ? p->vpp : 1);
            double m = (double)p->global_batch / ((double)p->micro_batch * p->dp);
            /* the flow log, at its cap (step_flows.c: at most cap records) */
            out->step_bytes += (double)s->step.flow_log * sizeof(step_flow);
            out->step_bytes += DES_LINK_BYTES * links +
                               replicas * positions * (2 * m * DES_TASK_BYTES +
                                                       2 * m * DES_ARRIVAL_BYTES +
                                                       2 * DES_PLAN_BYTES);
        }
    }
    out->total_bytes = BASE_BYTES + out->campaign_bytes + out->fabric_bytes + out->step_bytes;
    available(out);
}

static void human(double bytes, char *buf, size_t size)
{
    static const char *const unit[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
    int k = 0;
    while (bytes >= 1000 && k < 6) {
        bytes /= 1000;
        k++;
    }
    snprintf(buf, size, "%.3g %s", bytes, unit[k]);
}

int res_check_more(const scn_scenario *s, unsigned flags, double more_bytes, const char *what,
                   sim_error *err)
{
    res_estimate e;
    res_estimate_run(s, flags, 0, &e);
    double total = e.total_bytes + more_bytes;
    if (e.bad_limit || total <= e.available_bytes)
        return 0; /* a bad limit is res_check's to report */
    char need[32], have[32], more[32];
    human(total, need, sizeof need);
    human(e.available_bytes, have, sizeof have);
    human(more_bytes, more, sizeof more);
    return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                         "this run needs an estimated %s of memory (%s %s), more than the %s "
                         "this process may use (%s); make it smaller, or set "
                         "DCSIM_MEMORY_LIMIT if the limit is wrong",
                         need, what, more, have, e.available_source);
}

int res_check(const scn_scenario *s, unsigned flags, unsigned campaigns, sim_error *err)
{
    res_estimate e;
    res_estimate_run(s, flags, campaigns, &e);
    if (e.bad_limit)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "DCSIM_MEMORY_LIMIT=%s: expected a positive size such as 8G or "
                             "512MB", getenv("DCSIM_MEMORY_LIMIT"));
    if (e.total_bytes <= e.available_bytes)
        return 0;
    char total[32], have[32], camp[32], fab[32], step[32];
    human(e.total_bytes, total, sizeof total);
    human(e.available_bytes, have, sizeof have);
    human(e.campaign_bytes, camp, sizeof camp);
    human(e.fabric_bytes, fab, sizeof fab);
    human(e.step_bytes, step, sizeof step);
    return sim_error_set(err, SIM_ERR_INPUT, s->source, 0,
                         "this run needs an estimated %s of memory (failure streams %s for "
                         "%llu GPUs x %u campaign%s at once, fabric %s, step tier %s), more than "
                         "the %s this process may use (%s); use fewer GPUs or replicas in "
                         "parallel (OMP_NUM_THREADS), or set DCSIM_MEMORY_LIMIT if the limit "
                         "is wrong",
                         total, camp, (unsigned long long)s->campaign.gpu_count,
                         campaigns ? campaigns : 1, campaigns > 1 ? "s" : "", fab, step, have,
                         e.available_source);
}

unsigned res_parallel_campaigns(unsigned replicas)
{
    unsigned threads = 1;
#ifdef _OPENMP
    threads = (unsigned)omp_get_max_threads();
#endif
    return replicas <= 1 ? 1 : replicas < threads ? replicas : threads;
}
