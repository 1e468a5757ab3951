/* test_run.c - the run layer's per-GPU speeds (run.h): the loader keeps the
 * inputs of <step straggler-spread> and <straggler gpu speed> and draws
 * nothing; the plan draws GPU g's speed 1 - |N(0, spread)| from the stream
 * (seed, GPU g, speed), then applies the named stragglers in file order. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "check.h"
#include "rng.h"
#include "run.h"
#include "scenario.h"

/* the built-in default with text inserted before its <training>, loaded */
static int load_with_step(const char *step, scn_scenario *s)
{
    size_t len = 0;
    const char *xml = scn_default_xml(&len);
    const char *at = strstr(xml, "<training ");
    CHECK(at != NULL);
    if (!at)
        return -1;
    char path[] = "/tmp/dcsim-test-run-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fwrite(xml, 1, (size_t)(at - xml), f);
    fputs(step, f);
    fputs(at, f);
    fclose(f);
    sim_error err;
    sim_error_clear(&err);
    int rc = scn_load(path, NULL, 0, s, &err);
    if (rc)
        fprintf(stderr, "%s:%d: %s\n", err.file, err.line, err.msg);
    remove(path);
    return rc;
}

static void test_speeds_drawn_by_the_plan(void)
{
    scn_scenario s;
    CHECK_INT_EQ(load_with_step("<step straggler-spread=\"2%\"><straggler gpu=\"3\" speed=\"50%\"/>"
                                "<straggler gpu=\"10\" speed=\"90%\"/>"
                                "<straggler gpu=\"3\" speed=\"70%\"/></step>\n    ",
                                &s),
                 0);
    /* the scenario holds inputs only */
    CHECK(s.step.gpu_speed == NULL);
    CHECK_INT_EQ(s.step.n_gpu_speed, 0);
    CHECK(s.straggler_spread == 0.02);
    CHECK_INT_EQ(s.n_stragglers, 3);
    CHECK_INT_EQ(s.stragglers[0].gpu, 3);
    CHECK_REL(s.stragglers[0].speed, 0.5, 1e-15);
    CHECK_INT_EQ(s.stragglers[2].gpu, 3);
    CHECK_REL(s.stragglers[2].speed, 0.7, 1e-15);

    run_plan plan;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(run_plan_prepare(&s, 0, RUN_PLAN_STEP_INPUTS, &plan, &err), 0);
    CHECK_INT_EQ(plan.n_gpu_speed, s.campaign.gpu_count);
    CHECK(plan.gpu_speed != NULL);
    size_t differ = 0, slow = 0;
    for (uint64_t g = 0; plan.gpu_speed && g < plan.n_gpu_speed; g++) {
        gsl_rng *r = sim_rng_stream_create(s.seed, SIM_ENTITY_GPU, g, SIM_PURPOSE_SPEED);
        double want = g == 3    ? s.stragglers[2].speed /* the later one wins */
                      : g == 10 ? s.stragglers[1].speed
                                : 1 - fabs(gsl_ran_gaussian(r, 0.02));
        gsl_rng_free(r);
        differ += plan.gpu_speed[g] != want;
        slow += plan.gpu_speed[g] < 1;
    }
    CHECK_INT_EQ(differ, 0);
    CHECK_INT_EQ(slow, s.campaign.gpu_count); /* |N(0, s)| > 0 almost surely */

    /* the same scenario prepared again: the same speeds */
    run_plan again;
    CHECK_INT_EQ(run_plan_prepare(&s, 0, RUN_PLAN_STEP_INPUTS, &again, &err), 0);
    CHECK(again.gpu_speed && plan.gpu_speed &&
          memcmp(again.gpu_speed, plan.gpu_speed, plan.n_gpu_speed * sizeof(double)) == 0);
    run_plan_free(&again);
    run_plan_free(&plan);

    /* the default has no MFU: the step tier times the run's iteration, so a
     * run's plan draws the speeds too */
    CHECK_INT_EQ(s.step_computes_iteration, 1);
    CHECK_INT_EQ(run_plan_prepare(&s, 1, 0, &plan, &err), 0);
    CHECK(plan.gpu_speed != NULL);
    run_plan_free(&plan);
    scn_scenario_free(&s);

    /* an MFU is given: no step tier, so a run's plan draws nothing */
    const char *mfu[] = {"job/training/@mfu=42%"};
    sim_error_clear(&err);
    CHECK_INT_EQ(scn_load(NULL, mfu, 1, &s, &err), 0);
    CHECK_INT_EQ(s.step_computes_iteration, 0);
    CHECK_INT_EQ(run_plan_prepare(&s, 1, 0, &plan, &err), 0);
    CHECK(plan.gpu_speed == NULL);
    run_plan_free(&plan);
    scn_scenario_free(&s);
}

static void test_named_only_and_none(void)
{
    scn_scenario s;
    run_plan plan;
    sim_error err;
    sim_error_clear(&err);
    /* named stragglers without a spread: every other GPU at 1 */
    CHECK_INT_EQ(load_with_step("<step><straggler gpu=\"7\" speed=\"80%\"/></step>\n    ", &s), 0);
    CHECK_INT_EQ(run_plan_prepare(&s, 0, RUN_PLAN_STEP_INPUTS, &plan, &err), 0);
    size_t nominal = 0;
    for (unsigned g = 0; plan.gpu_speed && g < plan.n_gpu_speed; g++)
        nominal += plan.gpu_speed[g] == 1;
    CHECK_INT_EQ(nominal, s.campaign.gpu_count - 1);
    CHECK(plan.gpu_speed && plan.gpu_speed[7] == s.stragglers[0].speed);
    CHECK_REL(s.stragglers[0].speed, 0.8, 1e-15);
    run_plan_free(&plan);
    scn_scenario_free(&s);

    /* a <step> without stragglers: no speeds at all */
    CHECK_INT_EQ(load_with_step("<step network=\"flow\"/>\n    ", &s), 0);
    CHECK_INT_EQ(s.n_stragglers, 0);
    CHECK_INT_EQ(run_plan_prepare(&s, 0, RUN_PLAN_STEP_INPUTS, &plan, &err), 0);
    CHECK(plan.gpu_speed == NULL);
    CHECK_INT_EQ(plan.n_gpu_speed, 0);
    run_plan_free(&plan);
    scn_scenario_free(&s);
}

int main(void)
{
    test_speeds_drawn_by_the_plan();
    test_named_only_and_none();
    return check_report();
}
