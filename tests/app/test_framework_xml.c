/* test_framework_xml.c - <job><framework>: every attribute reaches
 * parallel_config.fw or the step tier's options, the defaults (no element)
 * are framework_config's zeros with Megatron's bucket rule, main-grad-buffer
 * "none" makes bf16 the reduction precision, and --set reaches the element.
 * Bad values are tests/bad/framework_*.xml. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "scenario.h"

/* the default scenario with text inserted before <training> */
static int load_with(const char *text, const char *const *sets, size_t n_sets, scn_scenario *s)
{
    size_t len = 0;
    const char *xml = scn_default_xml(&len);
    const char *at = strstr(xml, "<training ");
    CHECK(at != NULL);
    if (!at)
        return -1;
    char path[] = "/tmp/dcsim-test-framework-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fwrite(xml, 1, (size_t)(at - xml), f);
    fputs(text, f);
    fputs(at, f);
    fclose(f);
    sim_error err;
    sim_error_clear(&err);
    int rc = scn_load(path, sets, n_sets, s, &err);
    if (rc)
        fprintf(stderr, "%s:%d: %s\n", err.file, err.line, err.msg);
    remove(path);
    return rc;
}

static void test_defaults(void)
{
    scn_scenario s;
    CHECK_INT_EQ(load_with("", NULL, 0, &s), 0);
    const framework_config *f = &s.par.fw;
    framework_config zero;
    memset(&zero, 0, sizeof zero);
    CHECK(memcmp(f, &zero, sizeof zero) == 0);
    CHECK_INT_EQ(s.step.overlap_grad_reduce, 1);
    CHECK_INT_EQ(s.step.overlap_param_gather, 1);
    CHECK(s.step.tp_overlap == 0);
    /* Megatron's rule at dp 128: max(40M, 128M) (components.md 4.4) */
    CHECK_INT_EQ(s.par.dp, 128);
    CHECK(s.step.bucket_params == 0 && workload_bucket_params(&s.par) == 128e6);
    scn_scenario_free(&s);
}

static void test_every_attribute(void)
{
    scn_scenario s;
    CHECK_INT_EQ(load_with("<framework attention=\"cudnn\" fp8-recipe=\"all\" grad-reduce=\"bf16\" "
                           "bucket=\"25M\" tp-overlap=\"40%\" pp-send=\"scatter-gather\" "
                           "cuda-graphs=\"true\" launch-overhead=\"6us\" "
                           "main-grad-buffer=\"none\" overlap-grad-reduce=\"false\" "
                           "overlap-param-gather=\"false\"/>\n    ",
                           NULL, 0, &s),
                 0);
    const framework_config *f = &s.par.fw;
    CHECK_INT_EQ(f->attention_kernel, ATTN_CUDNN);
    CHECK_INT_EQ(f->fp8_recipe, FP8_RECIPE_ALL);
    CHECK_INT_EQ(f->grad_reduce_precision, PREC_BF16);
    CHECK_INT_EQ(f->bucket_rule, BUCKET_FIXED);
    CHECK(f->bucket_params == 25e6 && workload_bucket_params(&s.par) == 25e6);
    CHECK_INT_EQ(f->tp_overlap_mode, TP_OVERLAP_FRACTION);
    CHECK_REL(s.step.tp_overlap, 0.4, 1e-15);
    CHECK_INT_EQ(f->pp_send_mode, PP_SEND_SCATTER_GATHER);
    CHECK_INT_EQ(f->cuda_graphs, 1);
    CHECK_REL(f->launch_overhead_s, 6e-6, 1e-15);
    CHECK_INT_EQ(f->no_main_grad_buffer, 1);
    CHECK_INT_EQ(s.step.overlap_grad_reduce, 0);
    CHECK_INT_EQ(s.step.overlap_param_gather, 0);
    scn_scenario_free(&s);

    /* keywords of the modes; main-grad-buffer="none" alone reduces in bf16 */
    CHECK_INT_EQ(load_with("<framework tp-overlap=\"pipelined\" bucket=\"ddp\" "
                           "main-grad-buffer=\"none\"/>\n    ", NULL, 0, &s),
                 0);
    CHECK_INT_EQ(s.par.fw.tp_overlap_mode, TP_OVERLAP_PIPELINED);
    CHECK_INT_EQ(s.par.fw.bucket_rule, BUCKET_PYTORCH_DDP);
    CHECK_INT_EQ(s.par.fw.grad_reduce_precision, PREC_BF16);
    CHECK(workload_bucket_params(&s.par) == 25.0 * 1024 * 1024 / 2); /* 25 MiB of bf16 gradients */
    scn_scenario_free(&s);
}

/* --set reaches <framework> like any other element */
static void test_set(void)
{
    scn_scenario s;
    const char *sets[] = {"job/framework/@tp-overlap=none", "job/framework/@bucket=deepspeed",
                          "job/framework/@attention=flash3"};
    CHECK_INT_EQ(load_with("<framework tp-overlap=\"50%\"/>\n    ", sets, 3, &s), 0);
    CHECK_INT_EQ(s.par.fw.tp_overlap_mode, TP_OVERLAP_NONE);
    CHECK(s.step.tp_overlap == 0);
    CHECK_INT_EQ(s.par.fw.bucket_rule, BUCKET_DEEPSPEED);
    CHECK(workload_bucket_params(&s.par) == 5e8);
    CHECK_INT_EQ(s.par.fw.attention_kernel, ATTN_FLASH3);
    scn_scenario_free(&s);
    const char *bad[] = {"job/framework/@pp-send=both"};
    CHECK(load_with("<framework/>\n    ", bad, 1, &s) != 0);
}

int main(void)
{
    test_defaults();
    test_every_attribute();
    test_set();
    return check_report();
}
