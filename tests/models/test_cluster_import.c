/* test_cluster_import.c - job traces in published column layouts
 * (models/cluster_import.c): date-times to seconds against hand-computed
 * epochs; Helios rows with a quoted comma, CPU-only, unfinished, zero-length
 * and too-large jobs skipped and counted, the rest sorted and shifted to 0;
 * PAI task rows merged into jobs (GPUs = instances x per-cent / 100 added
 * over tasks, rounded up; earliest start, latest end) from a file without a
 * header; a layout of named columns with start/end instead of a duration;
 * broken fields refused at their line; the skip counts add up to the rows.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cluster.h"

static int import(const char *format, const char *text, uint32_t max_gpus,
                  cluster_trace_layout *lay, cluster_job_spec **v, uint32_t *n,
                  cluster_trace_stats *st, sim_error *err)
{
    if (format)
        CHECK_INT_EQ(cluster_trace_layout_init(lay, format), 0);
    sim_error_clear(err);
    return cluster_trace_import(text, strlen(text), "t.csv", lay, max_gpus, v, n, st, err);
}

static void test_time(void)
{
    double t = -1;
    CHECK_INT_EQ(cluster_trace_time("1970-01-01 00:00:00", &t), 0);
    CHECK_NEAR(t, 0, 0);
    /* 2020-04-01 00:00:10: 18,353 days after 1970-01-01 (50 years with 12
     * leap days = 18,262, then Jan 31 + Feb 29 + Mar 31 = 91) */
    CHECK_INT_EQ(cluster_trace_time("2020-04-01 00:00:10", &t), 0);
    CHECK_NEAR(t, 18353.0 * 86400 + 10, 0);
    CHECK_INT_EQ(cluster_trace_time("2017-10-03T02:49:59.5", &t), 0);
    CHECK_NEAR(t, 1506998999.5, 0);
    CHECK_INT_EQ(cluster_trace_time("2020-02-29", &t), 0);
    CHECK_NEAR(t, 18321.0 * 86400, 0);
    CHECK_INT_EQ(cluster_trace_time("123.25", &t), 0);
    CHECK_NEAR(t, 123.25, 0);
    CHECK_INT_EQ(cluster_trace_time("2020-13-01 00:00:00", &t), -1);
    CHECK_INT_EQ(cluster_trace_time("2020-04-31x", &t), -1);
    CHECK_INT_EQ(cluster_trace_time("2020-04-01 24:00:00", &t), -1);
    CHECK_INT_EQ(cluster_trace_time("none", &t), -1);
    CHECK_INT_EQ(cluster_trace_time("", &t), -1);
}

static void test_helios(void)
{
    const char *text =
        "job_id,user,vc,jobname,gpu_num,cpu_num,node_num,state,submit_time,start_time,"
        "end_time,duration,queue\n"
        "j1,u1,vc1,\"train, big\",8,64,1,COMPLETED,2020-04-01 00:00:10,2020-04-01 00:00:20,"
        "2020-04-01 02:00:20,7200,10\n"
        "j2,u2,vc1,cpu,0,8,1,COMPLETED,2020-04-01 00:01:00,2020-04-01 00:01:00,"
        "2020-04-01 00:02:00,60,0\n"
        "j3,u1,vc2,x,16,64,2,FAILED,2020-04-01 00:00:00,2020-04-01 00:05:00,"
        "2020-04-01 00:05:00,0,300\n"
        "j4,u3,vc2,y,4,16,1,RUNNING,2020-04-01 00:03:00,2020-04-01 00:04:00,,,60\n"
        "j5,u3,vc2,z,128,16,16,COMPLETED,2020-04-01 00:03:00,2020-04-01 00:04:00,"
        "2020-04-01 01:04:00,3600,60\n"
        "j6,u3,vc2,w,2,16,1,COMPLETED,2020-04-01 00:02:00,2020-04-01 00:04:00,"
        "2020-04-01 01:04:00,3600,120\n";
    cluster_trace_layout lay;
    cluster_job_spec *v = NULL;
    uint32_t n = 0;
    cluster_trace_stats st;
    sim_error err;
    CHECK_INT_EQ(import("helios", text, 64, &lay, &v, &n, &st, &err), 0);
    CHECK_INT_EQ(n, 2);
    CHECK_INT_EQ(st.rows, 6);
    CHECK_INT_EQ(st.kept, 2);
    CHECK_INT_EQ(st.no_gpus, 1);
    CHECK_INT_EQ(st.unfinished, 1);
    CHECK_INT_EQ(st.bad_duration, 1);
    CHECK_INT_EQ(st.too_large, 1);
    CHECK_INT_EQ(st.kept + st.no_gpus + st.unfinished + st.bad_duration + st.too_large, st.rows);
    CHECK_NEAR(st.origin_s, 18353.0 * 86400 + 10, 0);
    if (v && n == 2) {
        CHECK_NEAR(v[0].submit_s, 0, 0);
        CHECK_INT_EQ(v[0].gpus, 8);
        CHECK_NEAR(v[0].duration_s, 7200, 0);
        CHECK_NEAR(v[1].submit_s, 110, 0); /* 00:02:00 - 00:00:10 */
        CHECK_INT_EQ(v[1].gpus, 2);
        CHECK_NEAR(v[1].duration_s, 3600, 0);
    }
    free(v);
    /* the same file onto 128 GPUs keeps j5 too, sorted by submit time */
    v = NULL;
    CHECK_INT_EQ(import("helios", text, 128, &lay, &v, &n, &st, &err), 0);
    CHECK_INT_EQ(n, 3);
    if (v && n == 3) {
        CHECK_INT_EQ(v[1].gpus, 2);
        CHECK_INT_EQ(v[2].gpus, 128);
        CHECK_NEAR(v[2].submit_s, 170, 0);
    }
    free(v);
    /* a broken field is an error at its line, not a skipped row */
    v = NULL;
    CHECK_INT_EQ(import("helios", "job_id,gpu_num,submit_time,start_time,end_time,duration\n"
                        "a,8,2020-04-01 00:00:00,,,60\nb,eight,2020-04-01 00:00:00,,,60\n",
                        64, &lay, &v, &n, &st, &err),
                 SIM_ERR_INPUT);
    CHECK_INT_EQ(err.line, 3);
    CHECK_CONTAINS(err.msg, "gpus 'eight' in column 'gpu_num' is not a number");
    CHECK(v == NULL);
    CHECK_INT_EQ(import("helios", "job_id,gpu_num,submit_time,start_time,end_time\n"
                        "a,8,yesterday,,\n", 64, &lay, &v, &n, &st, &err),
                 SIM_ERR_INPUT);
    CHECK_INT_EQ(err.line, 2);
    CHECK_CONTAINS(err.msg, "submit 'yesterday'");
    CHECK_INT_EQ(import("helios", "job_id,gpus,submit_time\n", 64, &lay, &v, &n, &st, &err),
                 SIM_ERR_INPUT);
    CHECK_CONTAINS(err.msg, "lacks the gpus column 'gpu_num'");
    /* more than ten years between the first and the last job: refused at the last */
    CHECK_INT_EQ(import("helios", "gpu_num,submit_time,start_time,end_time,duration\n"
                        "8,0,,,100\n8,1e300,,,100\n", 64, &lay, &v, &n, &st, &err),
                 SIM_ERR_INPUT);
    CHECK_INT_EQ(err.line, 3);
    CHECK_CONTAINS(err.msg, "a trace spans at most ten years");
    CHECK(v == NULL);
    /* nothing left to run: refused, with the counts */
    CHECK_INT_EQ(import("helios", "gpu_num,submit_time,start_time,end_time,duration\n"
                        "0,0,0,10,10\n", 64, &lay, &v, &n, &st, &err),
                 SIM_ERR_INPUT);
    CHECK_CONTAINS(err.msg, "no job to run among 1 (1 without GPUs");
}

static void test_pai(void)
{
    /* no header: job_name, task_name, inst_num, status, start_time, end_time,
     * plan_cpu, plan_mem, plan_gpu, gpu_type */
    const char *text = "jA,worker,2,Terminated,1000,4600,600,29.3,100,V100\n"
                       "jB,worker,1,Terminated,2000,2500,600,29.3,50,T4\n"
                       "jA,ps,1,Terminated,990,4700,600,29.3,,\n"
                       "jC,worker,1,Running,3000,,600,29.3,100,P100\n"
                       "jD,w,3,Terminated,3000,3500,600,29.3,25,T4\n"
                       "jD,w2,3,Terminated,3100,3400,600,29.3,25,T4\n";
    cluster_trace_layout lay;
    cluster_job_spec *v = NULL;
    uint32_t n = 0;
    cluster_trace_stats st;
    sim_error err;
    CHECK_INT_EQ(import("pai-2020", text, 64, &lay, &v, &n, &st, &err), 0);
    CHECK_INT_EQ(st.rows, 4); /* jobs after merging the six task rows */
    CHECK_INT_EQ(n, 3);
    CHECK_INT_EQ(st.unfinished, 1);
    CHECK_NEAR(st.origin_s, 990, 0);
    if (v && n == 3) {
        /* jA: 2 x 100 % + 1 x 0 % = 2 GPUs, from 990 to 4700 */
        CHECK_NEAR(v[0].submit_s, 0, 0);
        CHECK_INT_EQ(v[0].gpus, 2);
        CHECK_NEAR(v[0].duration_s, 3710, 0);
        /* jB: half a GPU holds one */
        CHECK_NEAR(v[1].submit_s, 1010, 0);
        CHECK_INT_EQ(v[1].gpus, 1);
        CHECK_NEAR(v[1].duration_s, 500, 0);
        /* jD: 3 x 25 % + 3 x 25 % = 1.5, two GPUs; 3000 to 3500 */
        CHECK_NEAR(v[2].submit_s, 2010, 0);
        CHECK_INT_EQ(v[2].gpus, 2);
        CHECK_NEAR(v[2].duration_s, 500, 0);
    }
    free(v);
    v = NULL;
    CHECK_INT_EQ(import("pai-2020", "jA,worker\n", 64, &lay, &v, &n, &st, &err), SIM_ERR_INPUT);
    CHECK_INT_EQ(err.line, 1);
    CHECK_CONTAINS(err.msg, "2 fields, the layout needs 9");
}

static void test_columns(void)
{
    cluster_trace_layout lay;
    CHECK_INT_EQ(cluster_trace_layout_init(&lay, "columns"), 0);
    strcpy(lay.col[CLUSTER_TCOL_SUBMIT], "queued");
    strcpy(lay.col[CLUSTER_TCOL_START], "began");
    strcpy(lay.col[CLUSTER_TCOL_END], "ended");
    strcpy(lay.col[CLUSTER_TCOL_GPUS], "nodes");
    strcpy(lay.col[CLUSTER_TCOL_PRIORITY], "prio");
    lay.gpu_scale = 8; /* whole nodes of 8 GPUs */
    const char *text = "# site log\nnodes,ended,began,queued,prio\n2,700,100,50,3\n1,400,"
                       "300,20,-2\n";
    cluster_job_spec *v = NULL;
    uint32_t n = 0;
    cluster_trace_stats st;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(cluster_trace_import(text, strlen(text), "t.csv", &lay, 64, &v, &n, &st, &err),
                 0);
    CHECK_INT_EQ(n, 2);
    if (v && n == 2) {
        CHECK_NEAR(v[0].submit_s, 0, 0);
        CHECK_INT_EQ(v[0].gpus, 8);
        CHECK_NEAR(v[0].duration_s, 100, 0);
        CHECK_INT_EQ(v[0].priority, -2);
        CHECK_NEAR(v[1].submit_s, 30, 0);
        CHECK_INT_EQ(v[1].gpus, 16);
        CHECK_NEAR(v[1].duration_s, 600, 0);
        CHECK_INT_EQ(v[1].priority, 3);
    }
    free(v);
    CHECK_INT_EQ(cluster_trace_layout_init(&lay, "sge"), -1);
    CHECK_STR_EQ(cluster_trace_format_name(CLUSTER_TRACE_PHILLY), "philly");
}

int main(void)
{
    test_time();
    test_helios();
    test_pai();
    test_columns();
    return check_report();
}
