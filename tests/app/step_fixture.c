/* step_fixture.c - what the step tier's tests share: the catalog's H100
 * and models, a rail-optimised NDR fabric, a parallel layout, one run of
 * the step tier and the profile's conservation laws (step_fixture.h). */
#include "step_fixture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hardware.h"

scn_catalog *cat;
compute_device dev;

/* a 7.1B-like GPT: 32 layers so that 2, 4 and 8 stages split evenly; a
 * small vocabulary so the first and last stages weigh about the same */
model_arch model(void)
{
    model_arch m = *scn_catalog_model(cat, "megatron-gpt-7.1b");
    m.layers = 32;
    m.vocab = 256;
    return m;
}

fabric_config rail_ndr(unsigned gpus)
{
    fabric_config c;
    memset(&c, 0, sizeof c);
    c.topology = topo_kind_find("rail-optimized");
    c.gpus = gpus;
    c.gpus_per_node = 8;
    c.shape.radix = 64;
    c.shape.nodes_per_su = 32;
    c.link = *scn_catalog_link(cat, "ib-ndr");
    c.scaleup = *scn_catalog_link(cat, "nvlink4");
    c.scaleup_bytes_per_s = 450e9;
    c.routing.balance = TOPO_BALANCE_ADAPTIVE;
    c.routing.qps = 1;
    return c;
}

fabric_config roce_leafspine(void)
{
    fabric_config c = rail_ndr(0);
    c.topology = topo_kind_find("leaf-spine");
    c.link = *scn_catalog_link(cat, "roce-400g");
    c.link.efficiency = 0.94; /* as the catalog's default rule fills it */
    c.shape.over_down = 3;
    c.shape.over_up = 1;
    c.shape.radix = 64;
    c.routing.balance = TOPO_BALANCE_ECMP;
    return c;
}

int run(const model_arch *m, parallel_config p, fabric_config fc, int free_comm,
               const step_options *o, step_profile *out)
{
    char why[256];
    sim_error err;
    sim_error_clear(&err);
    workload w;
    unsigned gpus = p.tp * p.pp * p.dp * p.cp;
    fc.gpus = gpus;
    if (workload_build(m, &p, gpus, &w, &err)) {
        fprintf(stderr, "workload: %s\n", err.msg);
        return -1;
    }
    if (free_comm) { /* links a million times faster, no latency */
        fc.link.bytes_per_s *= 1e6;
        fc.scaleup.bytes_per_s *= 1e6;
        fc.scaleup_bytes_per_s *= 1e6;
    }
    fabric f;
    int rc = fabric_build(&fc, &f, &err);
    if (rc)
        snprintf(why, sizeof why, "%.255s", err.msg);
    if (!rc) {
        if (free_comm) {
            f.nc.base_latency_s = f.nc.intra_step_latency_s = f.nc.inter_step_latency_s = 0;
            f.nc.scaleup_reduction_latency_s = 0;
            f.nc.is_latency_free = 1; /* auto's NCCL tuner has its own latencies */
        }
        rc = step_simulate(&w, &dev, &f, o, out, &err);
        fabric_free(&f);
        if (rc)
            snprintf(why, sizeof why, "%.255s", err.msg);
    }
    if (rc)
        fprintf(stderr, "step: %s\n", why);
    workload_free(&w);
    return rc;
}

parallel_config par(unsigned tp, unsigned pp, unsigned dp, unsigned gbs)
{
    parallel_config p;
    memset(&p, 0, sizeof p);
    p.tp = tp;
    p.pp = pp;
    p.dp = dp;
    p.vpp = 1;
    p.cp = 1;
    p.ep = 1;
    p.micro_batch = 1;
    p.global_batch = gbs;
    p.sequence_parallel = tp > 1;
    p.zero_stage = 1;
    p.precision = PREC_BF16;
    return p;
}

/* Attribution: the parts add up to the iteration; kernel classes plus SM
 * contention to compute + optimizer; per collective exposed + hidden =
 * total, hidden >= 0, and the exposed ones sum to their part. */
void check_conservation(const step_profile *q)
{
    double parts = 0, kernels = q->sm_contention_s;
    for (int k = 0; k < STEP_PART_COUNT; k++)
        parts += q->part_s[k];
    CHECK_REL(parts, q->iteration_s, 1e-9);
    for (int k = 0; k < OP_KIND_COUNT; k++)
        kernels += q->kernel_s[k];
    CHECK_REL(kernels, q->part_s[STEP_COMPUTE] + q->part_s[STEP_OPTIMIZER], 1e-9);
    const double *e = q->coll_exposed_s;
    for (int k = 0; k < COMM_KIND_COUNT; k++) {
        CHECK(q->coll_hidden_s[k] >= -1e-12 * q->iteration_s);
        CHECK_NEAR(e[k] + q->coll_hidden_s[k], q->coll_total_s[k], 1e-12 * q->iteration_s);
    }
    double tol = 1e-9 * q->iteration_s;
    CHECK_NEAR(e[COMM_TP_ALLREDUCE] + e[COMM_TP_ALLGATHER] + e[COMM_TP_REDUCE_SCATTER],
               q->part_s[STEP_TP], tol);
    CHECK_NEAR(e[COMM_PP_SEND], q->part_s[STEP_PP], tol);
    CHECK_NEAR(e[COMM_CP_SENDRECV], q->part_s[STEP_CP], tol);
    CHECK_NEAR(e[COMM_EP_ALLTOALL], q->part_s[STEP_EP], tol);
    CHECK_NEAR(e[COMM_DP_ALLREDUCE] + e[COMM_DP_REDUCE_SCATTER] + e[COMM_DP_ALLGATHER] +
               q->dp_sm_contention_s, q->part_s[STEP_DP], tol);
}

int fixture_init(void)
{
    sim_error err;
    sim_error_clear(&err);
    if (scn_catalog_load(NULL, &cat, &err))
        return 1;
    return hw_compute_device(scn_catalog_gpu(cat, "H100-SXM"), PREC_BF16, &dev, &err) ? 1 : 0;
}
