/* megatron_table.h - the Megatron-Core H100 table of calibration.md section
 * 1 (NVIDIA/Megatron-LM README, images/model_table.png, commit f2e5db40,
 * "Megatron-Core r0.8.0"; verified-in-source) and the step-tier run of one
 * row, shared by tests/app/test_calibration.c and tests/bench/bench_step.c.
 *
 * The runs' setup: vocabulary 131,072 and sequence 4,096 (the catalog's
 * megatron-gpt-* entries), overlap of DP (--overlap-grad-reduce,
 * --overlap-param-gather), TP (--tp-comm-overlap) and PP, as calibration.md
 * states. Not published, so assumed (A) by one uniform rule: where there is
 * a pipeline, interleaved 1F1B with one layer per virtual stage (vpp =
 * layers / pp: the only rule under which the 119B and 462B rows, 23 and 7
 * layers per stage, can interleave at all) and micro-batch 1; without one,
 * the whole replica batch as one micro-batch. The "plain" setup is
 * Megatron's defaults instead: micro-batch 1, 1F1B, no TP overlap.
 * Hardware: H100 SXM with one NDR 400G NIC per GPU on a rail-optimised
 * fat-tree of 64-port switches, NVLink 4 inside each 8-GPU node.
 */
#ifndef DCSIM_TESTS_MEGATRON_TABLE_H
#define DCSIM_TESTS_MEGATRON_TABLE_H

#include <stdio.h>
#include <string.h>

#include "compute.h"
#include "fabric.h"
#include "hardware.h"
#include "scenario.h"
#include "step.h"
#include "workload.h"

typedef struct megatron_row {
    const char *model;
    unsigned tp, pp, dp, batch;
    double published_tflops; /* per GPU */
} megatron_row;

static const megatron_row megatron_rows[9] = {
    {"megatron-gpt-1.7b", 1, 1, 48, 192, 408.8},   {"megatron-gpt-7.1b", 2, 1, 48, 192, 465.9},
    {"megatron-gpt-16b", 4, 1, 48, 192, 489.1},    {"megatron-gpt-32b", 8, 1, 48, 192, 459.6},
    {"megatron-gpt-70b", 8, 2, 48, 384, 419.7},    {"megatron-gpt-119b", 8, 4, 48, 768, 420.5},
    {"megatron-gpt-177b", 8, 6, 48, 1152, 432.8},  {"megatron-gpt-314b", 8, 8, 48, 1536, 474.4},
    {"megatron-gpt-462b", 8, 16, 48, 3072, 459.9},
};

/* Simulate one iteration of row r (with dp replaced when dp_override > 0,
 * at the same global batch) under the published setup or the plain one,
 * with sustained efficiency eta (0: the catalog's). Returns 0 or -1 with
 * why; *p_out gets the parallelism used. */
static inline int megatron_profile(const scn_catalog *cat, const megatron_row *r,
                                   unsigned dp_override, int published_setup, double eta,
                                   step_profile *out, parallel_config *p_out, char *why,
                                   size_t why_size)
{
    const hw_gpu *gpu = scn_catalog_gpu(cat, "H100-SXM");
    const model_arch *m = scn_catalog_model(cat, r->model);
    compute_device dev;
    sim_error e;
    sim_error_clear(&e);
    if (!gpu || !m || hw_compute_device(gpu, PREC_BF16, &dev, &e)) {
        snprintf(why, why_size, "%s", e.msg);
        return -1;
    }
    parallel_config p;
    memset(&p, 0, sizeof p);
    p.tp = r->tp;
    p.pp = r->pp;
    p.dp = dp_override ? dp_override : r->dp;
    p.vpp = p.cp = p.ep = 1;
    p.micro_batch = 1;
    p.global_batch = r->batch;
    p.sequence_parallel = p.tp > 1;
    p.zero_stage = 1;
    p.precision = PREC_BF16;
    if (published_setup && p.pp == 1)
        p.micro_batch = r->batch / p.dp;
    if (published_setup && p.pp > 1) {
        p.vpp = m->layers / p.pp;
        p.schedule = SCHEDULE_INTERLEAVED;
    }
    if (p_out)
        *p_out = p;
    unsigned gpus = p.tp * p.pp * p.dp;
    fabric_config fc;
    memset(&fc, 0, sizeof fc);
    fc.topology = topo_kind_find("rail-optimized");
    fc.gpus = gpus;
    fc.gpus_per_node = 8;
    fc.shape.radix = 64;
    fc.shape.nodes_per_su = 32;
    fc.link = *scn_catalog_link(cat, "ib-ndr");
    fc.scaleup = *scn_catalog_link(cat, "nvlink4");
    fc.scaleup_bytes_per_s = gpu->scaleup_bytes_per_s;
    fc.routing.balance = TOPO_BALANCE_ADAPTIVE;
    fc.routing.qps = 1;
    step_options o;
    step_options_defaults(&o);
    o.sustained_efficiency = eta > 0 ? eta
                             : gpu->sustained_efficiency > 0 ? gpu->sustained_efficiency : 1;
    o.tp_overlap = published_setup ? 1.0 : 0.0;
    workload w;
    if (workload_build(m, &p, gpus, &w, &e)) {
        snprintf(why, why_size, "%s", e.msg);
        return -1;
    }
    fabric f;
    int rc = fabric_build(&fc, &f, &e);
    if (rc)
        snprintf(why, why_size, "%s", e.msg);
    if (!rc) {
        rc = step_simulate(&w, &dev, &f, &o, out, &e) ? -1 : 0;
        if (rc)
            snprintf(why, why_size, "%s", e.msg);
        fabric_free(&f);
    }
    workload_free(&w);
    return rc;
}

#endif
