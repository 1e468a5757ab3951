/* test_summary.c - the summary's output invariant (summary_check): every
 * row of every example scenario's run is finite and inside its declared
 * range, and a row pushed outside (negative, NaN, inf, an ETTR above 1, a
 * PUE below 1, a replica sd below 0) is an internal error naming it. */
#include "check.h"

#include <glob.h>
#include <math.h>

#include "campaign.h"
#include "scenario.h"
#include "run.h"
#include "summary.h"

static size_t row(const run_summary *s, const char *name)
{
    for (size_t i = 0; i < s->n_metrics; i++)
        if (!strcmp(s->metrics[i].name, name))
            return i;
    return (size_t)-1;
}

static void expect_bad(run_summary *s, const char *name, double value, const char *msg)
{
    size_t i = row(s, name);
    CHECK(i != (size_t)-1);
    if (i == (size_t)-1)
        return;
    double keep = s->metrics[i].value;
    s->metrics[i].value = value;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(summary_check(s, NULL, &err), SIM_ERR_INTERNAL);
    CHECK_CONTAINS(err.msg, msg);
    s->metrics[i].value = keep;
    CHECK_INT_EQ(summary_check(s, NULL, &err), 0);
}

int main(void)
{
    glob_t g;
    CHECK(glob(DCSIM_SOURCE_DIR "/scenarios/examples/*.xml", 0, NULL, &g) == 0);
    CHECK(g.gl_pathc >= 5);
    for (size_t k = 0; k < g.gl_pathc; k++) {
        scn_scenario scn;
        sim_error err;
        sim_error_clear(&err);
        if (scn_load_flags(g.gl_pathv[k], NULL, 0, SCN_LOAD_SERVING, &scn, &err)) {
            CHECK(!"example loads");
            continue;
        }
        if (!scn.has_job) { /* an inference fleet (dcsim serve): no run summary */
            scn_scenario_free(&scn);
            continue;
        }
        run_plan plan;
        CHECK_INT_EQ(run_plan_prepare(&scn, 1, 0, &plan, &err), 0);
        campaign_result r;
        CHECK_INT_EQ(campaign_run(&plan.campaign, NULL, NULL, NULL, &r, &err), 0);
        run_summary s;
        summary_build(&plan, &r, &s);
        run_plan_free(&plan);
        CHECK_INT_EQ(summary_check(&s, NULL, &err), 0);
        if (k == 0) {
            expect_bad(&s, "ettr_frac", 1.5, "summary row ettr_frac = 1.5 is outside its range [0, 1]");
            expect_bad(&s, "ettr_first_order_frac", -611,
                       "summary row ettr_first_order_frac = -611 is outside its range [0, 1]");
            expect_bad(&s, "rework_s", -5.4e-11, "summary row rework_s = -5.4e-11 is outside its "
                       "range >= 0");
            expect_bad(&s, "time_to_train_s", NAN, "summary row time_to_train_s = nan");
            expect_bad(&s, "failures", INFINITY, "summary row failures = inf");
            /* a PUE row: >= 1 */
            size_t n = s.n_metrics;
            s.metrics[s.n_metrics++] = (summary_metric){"pue_frac", "1", "PUE", "", 0.9, 0};
            sim_error_clear(&err);
            CHECK_INT_EQ(summary_check(&s, NULL, &err), SIM_ERR_INTERNAL);
            CHECK_CONTAINS(err.msg, "summary row pue_frac = 0.9 is outside its range >= 1");
            s.metrics[n].value = 1.2;
            CHECK_INT_EQ(summary_check(&s, NULL, &err), 0);
            s.n_metrics = n;
            /* replicas' statistics */
            campaign_result reps[2] = {r, r};
            campaign_mc mc;
            campaign_mc_summarize(reps, 2, &mc);
            CHECK_INT_EQ(summary_check(&s, &mc, &err), 0);
            mc.rework_s.sd = -1;
            sim_error_clear(&err);
            CHECK_INT_EQ(summary_check(&s, &mc, &err), SIM_ERR_INTERNAL);
            CHECK_CONTAINS(err.msg, "replicas' sd rework_s = -1");
        }
        scn_scenario_free(&scn);
    }
    globfree(&g);
    return check_report();
}
