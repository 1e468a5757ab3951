/* test_strong_scaling.c - the direction of the strong-scaling trend the
 * Megatron-Core README states (calibration.md section 1, commit f2e5db40,
 * verified-in-source): GPT-3 (about 177B) at a fixed batch of 1,152
 * sequences, 96 -> 4,608 H100, MFU 47 % -> 42 % ("Communication becomes
 * more exposed at larger scale"). A behaviour check, not an accuracy one:
 * at a fixed global batch more data-parallel replicas leave fewer
 * micro-batches per pipeline (a larger bubble share) and larger DP groups,
 * so MFU must not rise as GPUs are added, and it must fall end to end. How
 * close the end points come to 47 % and 42 % is the validation suite's
 * business (tests/validation/validate.py, docs/validation.md), measured,
 * never asserted, since nothing may be fitted on it. The job is the suite's
 * own row (tests/validation/runs/megatron-h100-gpt3-strong-96.xml) with the
 * GPU count and DP changed, run as `dcsim step` runs it. */
#include <stdio.h>

#include "check.h"
#include "scenario.h"
#include "steptier.h"

#define ROW DCSIM_SOURCE_DIR "/tests/validation/runs/megatron-h100-gpt3-strong-96.xml"

/* MFU of the row on 48 x dp GPUs (TP 8, PP 6), or -1 */
static double mfu_at(unsigned dp)
{
    char count[64], dps[64];
    snprintf(count, sizeof count, "cluster/gpu/@count=%u", 48 * dp);
    snprintf(dps, sizeof dps, "job/parallelism/@dp=%u", dp);
    const char *sets[] = {count, dps};
    scn_scenario s;
    sim_error e;
    sim_error_clear(&e);
    if (scn_load(ROW, sets, 2, &s, &e)) {
        fprintf(stderr, "dp %u: %s\n", dp, e.msg);
        return -1;
    }
    step_profile p;
    double mfu = -1;
    if (app_step_profile(&s, NULL, 0, &p, &e) == 0) {
        mfu = p.mfu;
        step_profile_free(&p);
    } else {
        fprintf(stderr, "dp %u: %s\n", dp, e.msg);
    }
    scn_scenario_free(&s);
    return mfu;
}

/* 96 .. 4,608 GPUs; dp 72 (3,456 GPUs) is left out: its 16 micro-batches
 * per pipeline cannot interleave over 6 stages */
static void test_trend(void)
{
    static const unsigned dps[] = {2, 4, 8, 16, 32, 64, 96};
    double prev = 1, first = 0, last = 0;
    for (size_t i = 0; i < sizeof dps / sizeof dps[0]; i++) {
        double mfu = mfu_at(dps[i]);
        printf("GPT-3 177B, batch 1,152, on %4u GPUs: MFU %.1f %%\n", 48 * dps[i], 100 * mfu);
        CHECK(mfu > 0 && mfu <= 1);
        CHECK(mfu <= prev * (1 + 1e-9));
        prev = mfu;
        if (i == 0)
            first = mfu;
        last = mfu;
    }
    CHECK(last < first);
}

int main(void)
{
    test_trend();
    return check_report();
}
