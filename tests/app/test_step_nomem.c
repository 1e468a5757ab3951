/* test_step_nomem.c - running out of memory in the step tier is reported as
 * out of memory (SIM_ERR_NOMEM, exit status 1), not as bad input (2), from
 * the model up to `dcsim step` and the run layer.
 *
 * Allocation failures are injected: this test links with --wrap for malloc,
 * calloc, realloc and step_simulate, so the k-th allocation after arming
 * returns NULL. A one-GPU job runs no collective, so every allocation
 * step_simulate makes is the step tier's own (step.c, schedule.c): each one
 * in turn must fail as out of memory, and one past the last must succeed.
 */
#define _DEFAULT_SOURCE /* mkstemps */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cli.h"
#include "fabric.h"
#include "hardware.h"
#include "run.h"
#include "scenario.h"
#include "step.h"
#include "stepcmd.h"
#include "workload.h"

/* ------------------------------------------------------------ injection */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
int __real_step_simulate(const workload *w, const compute_device *dev, fabric *f,
                         const step_options *o, step_profile *out, sim_error *err);

static int armed;          /* allocations are counted (and one may fail) */
static long n_allocs;      /* since arming */
static long fail_at = -1;  /* the allocation that fails, 0-based; -1 none */
static int arm_in_step;    /* __wrap_step_simulate arms itself with step_fail_at */
static long step_fail_at = -1;
static long step_allocs;   /* allocations the last wrapped step_simulate made */

static int fail_now(void)
{
    return armed && n_allocs++ == fail_at;
}

void *__wrap_malloc(size_t n) { return fail_now() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t size) { return fail_now() ? NULL : __real_calloc(n, size); }
void *__wrap_realloc(void *p, size_t n) { return fail_now() ? NULL : __real_realloc(p, n); }

static void arm(long k)
{
    n_allocs = 0;
    fail_at = k;
    armed = 1;
}

static long disarm(void)
{
    armed = 0;
    return n_allocs;
}

int __wrap_step_simulate(const workload *w, const compute_device *dev, fabric *f,
                         const step_options *o, step_profile *out, sim_error *err)
{
    if (!arm_in_step)
        return __real_step_simulate(w, dev, f, o, out, err);
    arm(step_fail_at);
    int rc = __real_step_simulate(w, dev, f, o, out, err);
    step_allocs = disarm();
    return rc;
}

/* ------------------------------------------------------------ scenario */

/* one H100, one GPU of slack-free work: no TP, PP, DP, so no collective;
 * GPU 0 a straggler, so the step tier simulates two replicas */
static const char scenario_xml[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<dcsim version=\"1\" seed=\"42\" name=\"one-gpu-step\">\n"
    "  <cluster>\n"
    "    <gpu type=\"H100-SXM\" count=\"1\"/>\n"
    "    <fabric topology=\"leaf-spine\" link=\"ib-ndr\" radix=\"64\"/>\n"
    "  </cluster>\n"
    "  <job>\n"
    "    <model ref=\"megatron-gpt-1.7b\"/>\n"
    "    <parallelism tp=\"1\" pp=\"1\" micro-batch=\"1\" global-batch=\"4\"/>\n"
    "    <step><straggler gpu=\"0\" speed=\"90%\"/></step>\n"
    "    <training tokens=\"1T\" precision=\"bf16\"/>\n"
    "  </job>\n"
    "  <reliability>\n"
    "    <failure component=\"gpu\" distribution=\"exponential\" rate=\"1e-5/h\"/>\n"
    "    <restart time=\"10min\"/>\n"
    "  </reliability>\n"
    "  <checkpoint interval=\"15min\" write-time=\"33s\"/>\n"
    "</dcsim>\n";

static char scenario_path[64];

static int write_scenario(void)
{
    strcpy(scenario_path, "/tmp/dcsim-nomem-XXXXXX.xml");
    int fd = mkstemps(scenario_path, 4);
    if (fd < 0)
        return -1;
    size_t n = sizeof scenario_xml - 1;
    int ok = write(fd, scenario_xml, n) == (ssize_t)n;
    close(fd);
    return ok ? 0 : -1;
}

/* ------------------------------------------------------------ models */

/* workload_build: every allocation that fails is out of memory */
static void test_workload_nomem(const scn_scenario *s)
{
    workload w;
    arm(-1);
    CHECK_INT_EQ(workload_build(&s->arch, &s->par, 1, &w, NULL), 0);
    long total = disarm();
    workload_free(&w);
    CHECK(total >= 4); /* the stages, the forward, backward and step lists (no comm on one GPU) */
    printf("workload_build: %ld allocations, each failing as out of memory\n", total);
    for (long k = 0; k < total; k++) {
        sim_error e;
        sim_error_clear(&e);
        arm(k);
        int rc = workload_build(&s->arch, &s->par, 1, &w, &e);
        disarm();
        CHECK_INT_EQ(rc, SIM_ERR_NOMEM);
        CHECK_INT_EQ(e.code, SIM_ERR_NOMEM);
        CHECK_CONTAINS(e.msg, "out of memory");
        CHECK(w.stages == NULL); /* nothing handed out */
    }
}

/* step_simulate: every allocation that fails is out of memory, the profile
 * is left empty, and with no failure left the same call succeeds */
static void test_step_simulate_nomem(const scn_scenario *s)
{
    workload w;
    compute_device dev;
    fabric f;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(workload_build(&s->arch, &s->par, 1, &w, NULL), 0);
    CHECK_INT_EQ(hw_compute_device(&s->gpu, s->precision, &dev, NULL), 0);
    if (fabric_build(&s->fabric, &f, &err)) {
        CHECK(!"fabric_build");
        fprintf(stderr, "fabric: %s\n", err.msg);
        workload_free(&w);
        return;
    }
    step_options o = s->step;
    o.sustained_efficiency = 1;
    double slow = 0.9;
    o.gpu_speed = &slow;
    o.n_gpu_speed = 1;
    step_profile prof;
    arm_in_step = 1;
    step_fail_at = -1;
    CHECK_INT_EQ(step_simulate(&w, &dev, &f, &o, &prof, NULL), 0);
    long total = step_allocs;
    CHECK(prof.slowest_gpu == 0 && prof.iteration_s > 0);
    step_profile_free(&prof);
    /* 6 up front, the DP buckets, replicas (2, each with its speeds, its
     * schedule inputs and two schedules), the tasks and the link tables */
    CHECK(total >= 20);
    printf("step_simulate: %ld allocations, each failing as out of memory\n", total);
    for (long k = 0; k <= total; k++) {
        sim_error e;
        sim_error_clear(&e);
        step_fail_at = k;
        int rc = step_simulate(&w, &dev, &f, &o, &prof, &e);
        if (k == total) { /* no allocation left to fail */
            CHECK_INT_EQ(rc, 0);
            CHECK_INT_EQ(e.code, SIM_OK);
            step_profile_free(&prof);
            break;
        }
        CHECK_INT_EQ(rc, SIM_ERR_NOMEM);
        CHECK_INT_EQ(e.code, SIM_ERR_NOMEM);
        CHECK_CONTAINS(e.msg, "out of memory");
        CHECK(prof.stage == NULL && prof.tasks == NULL && prof.link_bytes == NULL);
    }
    arm_in_step = 0;
    fabric_free(&f);
    workload_free(&w);
}

/* ------------------------------------------------------------ commands */

/* cmd_step with stdout and stderr captured; returns its exit status */
static int run_step_command(char *err_line, size_t size)
{
    char out_path[] = "/tmp/dcsim-nomem-out-XXXXXX", err_path[] = "/tmp/dcsim-nomem-err-XXXXXX";
    int out_fd = mkstemp(out_path), err_fd = mkstemp(err_path);
    fflush(stdout);
    fflush(stderr);
    int saved_out = dup(1), saved_err = dup(2);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    char *argv[] = {scenario_path, NULL};
    int status = cmd_step(1, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    err_line[0] = '\0';
    ssize_t n = pread(err_fd, err_line, size - 1, 0);
    err_line[n > 0 ? n : 0] = '\0';
    close(out_fd);
    close(err_fd);
    unlink(out_path);
    unlink(err_path);
    return status;
}

/* `dcsim step`: out of memory anywhere in the step tier exits 1 with one
 * compiler-style line naming the scenario; before this was exit 2 */
static void test_step_command_nomem(void)
{
    char line[2048];
    arm_in_step = 1;
    step_fail_at = -1;
    CHECK_INT_EQ(run_step_command(line, sizeof line), 0);
    long total = step_allocs;
    CHECK(total >= 20);
    char prefix[128];
    snprintf(prefix, sizeof prefix, "%s: error: ", scenario_path);
    for (long k = 0; k < total; k++) {
        step_fail_at = k;
        CHECK_INT_EQ(run_step_command(line, sizeof line), 1);
        CHECK(strncmp(line, prefix, strlen(prefix)) == 0);
        CHECK_CONTAINS(line, "out of memory");
        CHECK(strchr(line, '\n') == line + strlen(line) - 1); /* one line */
    }
    arm_in_step = 0;
}

/* the run layer (dcsim run, compare, goodput, sweep): the plan's error
 * keeps the code and says where it came from */
static void test_run_plan_nomem(const scn_scenario *s)
{
    arm_in_step = 1;
    for (long k = 0; k < 3; k++) {
        step_fail_at = k;
        run_plan p;
        sim_error e;
        sim_error_clear(&e);
        CHECK_INT_EQ(run_plan_prepare(s, 1, 0, &p, &e), SIM_ERR_NOMEM);
        run_plan_free(&p);
        CHECK_INT_EQ(e.code, SIM_ERR_NOMEM);
        CHECK_STR_EQ(e.file, scenario_path);
        CHECK(strncmp(e.msg, "step tier: ", 11) == 0);
        CHECK_CONTAINS(e.msg, "out of memory");
    }
    step_fail_at = -1;
    run_plan p;
    sim_error e;
    sim_error_clear(&e);
    CHECK_INT_EQ(run_plan_prepare(s, 1, 0, &p, &e), 0);
    CHECK(p.step.used);
    run_plan_free(&p);
    arm_in_step = 0;
}

int main(void)
{
    if (write_scenario()) {
        fprintf(stderr, "cannot write the test scenario\n");
        return 1;
    }
    scn_scenario s;
    sim_error err;
    sim_error_clear(&err);
    if (scn_load(scenario_path, NULL, 0, &s, &err)) {
        fprintf(stderr, "%s: %s\n", err.file, err.msg);
        unlink(scenario_path);
        return 1;
    }
    test_workload_nomem(&s);
    test_step_simulate_nomem(&s);
    test_step_command_nomem();
    test_run_plan_nomem(&s);
    scn_scenario_free(&s);
    unlink(scenario_path);
    return check_report();
}
