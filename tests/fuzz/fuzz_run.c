/* fuzz_run.c - fuzz target for the whole of `dcsim run`: the input is a
 * scenario file, loaded, checked against the machine's resources, its
 * iteration timed by the step tier when it has no MFU, its site's energy
 * set up, the campaign simulated and the summary built as JSON, in process,
 * no output file. Beyond "no crash, sanitizer report, leak or hang":
 *  - a failure always says why;
 *  - the campaign's progress stays in [0, 1] and never goes back, its
 *    simulated time is finite and never goes back (checked at every poll);
 *  - a campaign that processes more than FUZZ_RUN_MAX_EVENTS events (env,
 *    default 2^24, about 10 s of an ASan build) aborts as a hang: far more
 *    than any example scenario needs (the 16K-GPU examples: ~10^4);
 *  - the summary JSON of a finished run holds no nan or inf.
 * The input may XInclude only lab-gpus.xml from the private directory, as in
 * fuzz_scenario.c (the sandbox of fuzz_sandbox.h).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "campaign.h"
#include "energyrun.h"
#include "resources.h"
#include "fuzz_sandbox.h"
#include "scenario.h"
#include "run.h"
#include "summary.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { POLL_EVENTS = 4096 }; /* models/campaign.c POLL_EVERY: events between polls */

static const char lab_gpus[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<gpus>\n"
    "  <gpu name=\"LAB-GPU\" description=\"a test accelerator\">\n"
    "    <peak precision=\"bf16\" rate=\"100TFLOP/s\" confidence=\"A\" source=\"test\"/>\n"
    "  </gpu>\n"
    "</gpus>\n";

static unsigned long max_polls;

static void setup(void)
{
    fuzz_sandbox_setup(lab_gpus, sizeof lab_gpus - 1);
    const char *cap = getenv("FUZZ_RUN_MAX_EVENTS");
    unsigned long long events = cap ? strtoull(cap, NULL, 10) : 0;
    if (!events)
        events = 1ull << 24;
    max_polls = (unsigned long)(events / POLL_EVENTS + 1);
}

typedef struct watch {
    unsigned long polls;
    double frac, time_s;
} watch;

static int on_poll(void *ctx, double progress_frac, double sim_time_s)
{
    watch *w = ctx;
    if (!(progress_frac >= w->frac && progress_frac <= 1.0) ||
        !(isfinite(sim_time_s) && sim_time_s >= w->time_s)) {
        fprintf(stderr, "fuzz_run: poll %lu: progress %g after %g, time %g s after %g s\n",
                w->polls, progress_frac, w->frac, sim_time_s, w->time_s);
        abort();
    }
    w->frac = progress_frac;
    w->time_s = sim_time_s;
    if (++w->polls > max_polls) {
        fprintf(stderr, "fuzz_run: hang: over %lu events, %.3g%% trained, day %.3g\n",
                max_polls * POLL_EVENTS, 100.0 * progress_frac, sim_time_s / 86400.0);
        abort();
    }
    return 0;
}

/* a JSON number token that is not finite: nan, inf, or a number strtod
 * takes past DBL_MAX */
static void check_json(const char *json)
{
    for (const char *p = json; *p; p++) {
        if (*p == '"') { /* skip strings: names echo the input */
            for (p++; *p && *p != '"'; p++)
                if (*p == '\\' && p[1])
                    p++;
            if (!*p)
                break;
            continue;
        }
        if (strncmp(p, "nan", 3) == 0 || strncmp(p, "inf", 3) == 0 ||
            strncmp(p, "NaN", 3) == 0 || strncmp(p, "Inf", 3) == 0) {
            fprintf(stderr, "fuzz_run: non-finite number in the summary: %.60s\n", p);
            abort();
        }
        if ((*p == '-' || (*p >= '0' && *p <= '9')) && (p == json || strchr(":,[ \n", p[-1]))) {
            char *end;
            double v = strtod(p, &end);
            if (!isfinite(v)) {
                fprintf(stderr, "fuzz_run: number out of range in the summary: %.60s\n", p);
                abort();
            }
            p = end - 1;
        }
    }
}

/* cmd_run of sim/app/main.c through the run layer, one replica, no trace,
 * no printing */
static void run(scn_scenario *scn)
{
    sim_error err;
    sim_error_clear(&err);
    run_plan plan;
    run_outcome out;
    memset(&out, 0, sizeof out);
    watch w = {0, 0.0, 0.0};
    int rc = run_plan_prepare(scn, 1, RUN_PLAN_ENERGY, &plan, &err);
    if (!rc)
        rc = run_execute(&plan, NULL, NULL, on_poll, &w, &out, &err);
    run_summary sum;
    if (!rc) {
        summary_build(&plan, &out.result, &sum);
        if (out.has_energy)
            summary_add_energy(&sum, scn, &out.result, &out.energy);
        char *json = summary_json(scn, &sum);
        if (!json)
            abort();
        check_json(json);
        free(json);
    }
    run_outcome_free(&out);
    run_plan_free(&plan);
    if (rc && !err.msg[0])
        abort(); /* every failure says why */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        setup();
        ready = 1;
    }
    scn_scenario scn;
    if (fuzz_load_input(lab_gpus, sizeof lab_gpus - 1, data, size, &scn) == 0) {
        run(&scn);
        scn_scenario_free(&scn);
    }
    return 0;
}
