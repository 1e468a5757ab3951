/* resources.h - the resource guard: before a run allocates anything large,
 * estimate the memory it needs from the scenario (failure streams per GPU,
 * node and rack; the fabric's links; the routing tables and flow state of
 * the step tier) and refuse, with the estimate, a run that would not fit in
 * this machine's memory, instead of being killed by the operating system
 * part way (docs/errors.md).
 *
 * The per-item costs are measured (docs/errors.md, "Resource guard"): RSS
 * of `dcsim run` and `dcsim validate` at several sizes on x86-64 glibc,
 * rounded up. */
#ifndef DCSIM_APP_RESOURCES_H
#define DCSIM_APP_RESOURCES_H

#include "error.h"
#include "scenario.h"

typedef struct res_estimate {
    double campaign_bytes;   /* failure streams and their pending events, all campaigns at once */
    double fabric_bytes;     /* the fabric graph (built at load time) */
    double step_bytes;       /* the step tier: per-link flow state and routing tables */
    double total_bytes;      /* the three plus the program's base */
    double available_bytes;  /* what this process may use */
    char available_source[96]; /* where available_bytes came from */
    int bad_limit;           /* $DCSIM_MEMORY_LIMIT is set but not a size */
} res_estimate;

enum {
    RES_STEP = 1u          /* the command runs the step tier on the fabric */
};

/* Estimate what a command needs for scenario s with `campaigns` campaigns in
 * memory at once (1, or the threads running replicas), and what this process
 * may use: the least of physical memory, RLIMIT_AS, RLIMIT_DATA, the cgroup's
 * memory.max, and $DCSIM_MEMORY_LIMIT (a size such as 8G; for tests and for
 * sharing a machine). */
void res_estimate_run(const scn_scenario *s, unsigned flags, unsigned campaigns,
                      res_estimate *out);

/* 0, or an input error naming the scenario, the estimate by part, and the
 * memory available, when the estimate exceeds it. */
int res_check(const scn_scenario *s, unsigned flags, unsigned campaigns, sim_error *err);

/* As res_check for a command that also holds `more_bytes` of its own
 * (`what` names them, e.g. "packets in flight"): 0, or the input error. */
int res_check_more(const scn_scenario *s, unsigned flags, double more_bytes, const char *what,
                   sim_error *err);

/* Campaigns in memory at once for `replicas` replicas on this process's
 * OpenMP threads (1 for a plain run). */
unsigned res_parallel_campaigns(unsigned replicas);

#endif
