/* test_step.c - the step tier (models/step.h) on catalog hardware: closed
 * forms with communication switched off, stragglers, the overlap rule, flow
 * against analytic, and a fabric comparison explained by link utilisation. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "compute.h"
#include "fabric.h"
#include "hardware.h"
#include "scenario.h"
#include "step.h"
#include "steptier.h"
#include "workload.h"

static scn_catalog *cat;
static compute_device dev;

/* a 7.1B-like GPT: 32 layers so that 2, 4 and 8 stages split evenly; a
 * small vocabulary so the first and last stages weigh about the same */
static model_arch model(void)
{
    model_arch m = *scn_catalog_model(cat, "megatron-gpt-7.1b");
    m.layers = 32;
    m.vocab = 256;
    return m;
}

static fabric_config rail_ndr(unsigned gpus)
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

static int run(const model_arch *m, parallel_config p, fabric_config fc, int free_comm,
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
        snprintf(why, sizeof why, "%s", err.msg);
    if (!rc) {
        if (free_comm) {
            f.nc.base_latency_s = f.nc.intra_step_latency_s = f.nc.inter_step_latency_s = 0;
            f.nc.scaleup_reduction_latency_s = 0;
            f.nc.is_latency_free = 1; /* auto's NCCL tuner has its own latencies */
        }
        rc = step_simulate(&w, &dev, &f, o, out, &err);
        fabric_free(&f);
        if (rc)
            snprintf(why, sizeof why, "%s", err.msg);
    }
    if (rc)
        fprintf(stderr, "step: %s\n", why);
    workload_free(&w);
    return rc;
}

static parallel_config par(unsigned tp, unsigned pp, unsigned dp, unsigned gbs)
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

/* Communication off: 1F1B takes (m + p - 1)(t_f + t_b) and the slowest
 * stage idles (p - 1)(t_f + t_b); interleaved with v chunks
 * m (t_f + t_b) + (p - 1)(t_f + t_b)/v (Narayanan et al. 2021). t_f + t_b
 * is the slowest stage's compute per micro-batch. */
static void test_bubble_closed_forms(void)
{
    model_arch m = model();
    step_options o;
    step_options_defaults(&o);
    unsigned pps[] = {2, 4, 8};
    for (int i = 0; i < 3; i++) {
        unsigned pp = pps[i];
        parallel_config p = par(8, pp, 1, 32);
        step_profile prof;
        CHECK(run(&m, p, rail_ndr(0), 1, &o, &prof) == 0);
        double mb = 32, t = 0;
        unsigned slowest = 0;
        for (unsigned s = 0; s < pp; s++)
            if (prof.stage[s].part_s[STEP_COMPUTE] / mb > t) {
                t = prof.stage[s].part_s[STEP_COMPUTE] / mb;
                slowest = s;
            }
        double opt = prof.part_s[STEP_OPTIMIZER];
        CHECK_REL(prof.iteration_s - opt, (mb + pp - 1) * t, 0.02);
        /* the slowest stage idles (p - 1)(t_f + t_b): the others wait for it */
        CHECK_REL(prof.stage[slowest].part_s[STEP_BUBBLE], (pp - 1) * t, 0.05);
        CHECK(prof.part_s[STEP_TP] + prof.part_s[STEP_PP] + prof.part_s[STEP_DP] <
              1e-3 * prof.iteration_s);
        step_profile_free(&prof);
        /* interleaved, v = 2 */
        p.vpp = 2;
        p.schedule = SCHEDULE_INTERLEAVED;
        CHECK(run(&m, p, rail_ndr(0), 1, &o, &prof) == 0);
        CHECK_REL(prof.iteration_s - prof.part_s[STEP_OPTIMIZER], mb * t + (pp - 1) * t / 2,
                  0.02);
        step_profile_free(&prof);
    }
}

/* One GPU slower: the job slows by at most 1/speed - 1, by more the slower
 * it is, and at 90 % by its compute share of 11.1 % (within 10 %: the
 * straggler's stage is the critical path's compute); the profile names the
 * GPU and the replicas' wait. */
static void test_straggler(void)
{
    model_arch m = model();
    parallel_config p = par(8, 2, 4, 64);
    unsigned gpus = 64;
    double *speed = malloc(gpus * sizeof *speed);
    double levels[] = {1.0, 0.99, 0.95, 0.9, 0.8}, prev = 0, base = 0, base_compute = 0;
    for (int k = 0; k < 5; k++) {
        for (unsigned g = 0; g < gpus; g++)
            speed[g] = 1;
        speed[42] = levels[k];
        step_options o;
        step_options_defaults(&o);
        o.gpu_speed = speed;
        o.n_gpu_speed = gpus;
        step_profile prof;
        CHECK(run(&m, p, rail_ndr(0), 0, &o, &prof) == 0);
        if (k == 0) {
            base = prof.iteration_s;
            base_compute = prof.part_s[STEP_COMPUTE];
            CHECK(prof.slowest_gpu == UINT32_MAX);
        } else {
            CHECK(prof.iteration_s > prev);
            CHECK(prof.iteration_s <= base / levels[k] * (1 + 1e-9));
            CHECK_INT_EQ(prof.slowest_gpu, 42);
            CHECK(prof.wait_s > 0);
        }
        if (k == 3) { /* at 90 %: the job slows by its compute share of 11 % */
            double share = base_compute / base, slowdown = prof.iteration_s / base - 1;
            printf("straggler at 90 %%: job %.2f %% slower; compute share %.3f x 11.1 %% = "
                   "%.2f %%\n", 100 * slowdown, share, 100 * share * (1 / 0.9 - 1));
            CHECK_REL(slowdown, share * (1 / 0.9 - 1), 0.10);
        }
        prev = prof.iteration_s;
        step_profile_free(&prof);
    }
    free(speed);
}

/* Rule 1: hiding TP communication never makes a step slower; all hidden
 * leaves no exposed TP. The flow model and the analytic path agree on this
 * symmetric job within 2 %. */
static void test_overlap_and_fidelity(void)
{
    model_arch m = model();
    parallel_config p = par(8, 2, 4, 64);
    double prev = INFINITY;
    double overlaps[] = {0, 0.5, 1};
    for (int k = 0; k < 3; k++) {
        step_options o;
        step_options_defaults(&o);
        o.tp_overlap = overlaps[k];
        step_profile prof;
        CHECK(run(&m, p, rail_ndr(0), 0, &o, &prof) == 0);
        CHECK(prof.iteration_s <= prev);
        prev = prof.iteration_s;
        if (k == 2)
            CHECK(prof.part_s[STEP_TP] == 0);
        step_profile_free(&prof);
    }
    step_options o;
    step_options_defaults(&o);
    step_profile flow, ana;
    CHECK(run(&m, p, rail_ndr(0), 0, &o, &flow) == 0);
    o.analytic = 1;
    CHECK(run(&m, p, rail_ndr(0), 0, &o, &ana) == 0);
    CHECK_REL(ana.iteration_s, flow.iteration_s, 0.02);
    step_profile_free(&flow);
    step_profile_free(&ana);
}

/* The same job on three fabrics: rail-optimised InfiniBand with adaptive
 * routing, a 3:1 oversubscribed RoCE leaf-spine with ECMP, and a Dragonfly.
 * Exposed data-parallel time differs, and the fabric tiers' utilisation
 * shows why: the oversubscribed uplinks run hotter. */
static void test_fabric_comparison(void)
{
    model_arch m = model();
    parallel_config p = par(8, 2, 16, 256);
    step_options o;
    step_options_defaults(&o);
    o.overlap_grad_reduce = 0; /* expose the reduction to compare it */
    fabric_config ib = rail_ndr(0);
    fabric_config roce = ib;
    roce.topology = topo_kind_find("leaf-spine");
    roce.link = *scn_catalog_link(cat, "roce-400g");
    roce.shape.over_down = 3;
    roce.shape.over_up = 1;
    roce.shape.radix = 64;
    roce.routing.balance = TOPO_BALANCE_ECMP;
    fabric_config df = ib;
    df.topology = topo_kind_find("dragonfly");
    df.shape.p = 8;
    df.shape.a = 4;
    df.shape.h = 2;
    df.routing.balance = TOPO_BALANCE_ADAPTIVE;
    df.routing.path_class = TOPO_PATH_UGAL;
    step_profile a, b, c;
    CHECK(run(&m, p, ib, 0, &o, &a) == 0);
    CHECK(run(&m, p, roce, 0, &o, &b) == 0);
    CHECK(run(&m, p, df, 0, &o, &c) == 0);
    printf("fabric comparison (256 GPUs, TP8 PP2 DP16):\n");
    step_profile *all[] = {&a, &b, &c};
    const char *names[] = {"rail-optimised IB NDR adaptive", "leaf-spine 3:1 RoCE ECMP",
                           "Dragonfly IB UGAL"};
    for (int i = 0; i < 3; i++)
        printf("  %-32s iteration %.4f s, exposed DP %.4f s, peak util host-leaf %.1f%% "
               "leaf-spine %.1f%% upper %.1f%%\n", names[i], all[i]->iteration_s,
               all[i]->part_s[STEP_DP], 100 * all[i]->tier_peak_utilisation[1],
               100 * all[i]->tier_peak_utilisation[2], 100 * all[i]->tier_peak_utilisation[3]);
    CHECK(b.part_s[STEP_DP] > a.part_s[STEP_DP]);
    CHECK(b.iteration_s > a.iteration_s);
    CHECK(a.part_s[STEP_DP] != c.part_s[STEP_DP]);
    /* the bytes are the job's; where they go is the fabric's */
    CHECK(b.tier_peak_utilisation[2] > a.tier_peak_utilisation[2]);
    step_profile_free(&a);
    step_profile_free(&b);
    step_profile_free(&c);
}

/* The profile cache: a repeated state costs nothing, a new replica count
 * or state digest one simulation, and the least recently used goes first. */
static void test_profile_cache(void)
{
    scn_scenario s;
    sim_error err;
    sim_error_clear(&err);
    const char *sets[] = {"cluster/gpu/@count=256"};
    /* 256 GPUs = 2 replicas: the job would not fit in memory, which the step
     * tier does not ask */
    CHECK(scn_load_flags(DCSIM_SOURCE_DIR "/scenarios/examples/superpod-h100.xml", sets, 1,
                         SCN_LOAD_NO_FIT_CHECK, &s, &err) == 0);
    step_cache *c = step_cache_create(2, NULL, 0);
    const step_profile *a = step_cache_get(c, &s, 2, 0, &err);
    CHECK(a != NULL);
    double t2 = a ? a->iteration_s : 0;
    CHECK_INT_EQ(step_cache_simulations(c), 1);
    a = step_cache_get(c, &s, 2, 0, &err);
    CHECK(a && a->iteration_s == t2);
    CHECK_INT_EQ(step_cache_simulations(c), 1);
    const step_profile *b = step_cache_get(c, &s, 1, 0, &err);
    CHECK_INT_EQ(step_cache_simulations(c), 2);
    /* one replica: the same work per GPU and no data-parallel reduction; the
     * optimizer step is no longer sharded over 2 (ZeRO 1), hence about equal */
    CHECK(b && b->part_s[STEP_DP] == 0);
    CHECK(b && fabs(b->iteration_s - t2) < 1e-3 * t2);
    CHECK(step_cache_get(c, &s, 2, 7, &err) != NULL); /* evicts dp 2, state 0 */
    CHECK_INT_EQ(step_cache_simulations(c), 3);
    CHECK(step_cache_get(c, &s, 1, 0, &err) != NULL);
    CHECK_INT_EQ(step_cache_simulations(c), 3);
    CHECK(step_cache_get(c, &s, 2, 0, &err) != NULL);
    CHECK_INT_EQ(step_cache_simulations(c), 4);
    step_cache_free(c);
    scn_scenario_free(&s);
}

int main(void)
{
    sim_error err;
    sim_error_clear(&err);
    if (scn_catalog_load(NULL, &cat, &err))
        return 1;
    if (hw_compute_device(scn_catalog_gpu(cat, "H100-SXM"), PREC_BF16, &dev, &err))
        return 1;
    test_bubble_closed_forms();
    test_straggler();
    test_overlap_and_fidelity();
    test_fabric_comparison();
    test_profile_cache();
    scn_catalog_free(cat);
    return check_report();
}
