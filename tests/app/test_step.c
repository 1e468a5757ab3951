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

#include "step_fixture.h"

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

/* Uneven interleaved pipelines: the chunk layer rule (workload.h) on Llama
 * 3 405B's split (126 layers, pp 16, vpp 8, 7 layers on the first and last
 * stage: "the first model chunk on the first stage has only the embedding,
 * and the last model chunk on the last stage has only output projection and
 * loss calculation", Llama 3 paper 3.3.2 as hardware.md P6 reads it), and
 * the even split on every chunk otherwise. */
static void test_chunk_layers(void)
{
    model_arch m = *scn_catalog_model(cat, "llama3-405b");
    parallel_config p = par(8, 16, 1, 16);
    p.vpp = 8;
    p.schedule = SCHEDULE_INTERLEAVED;
    p.first_stage_layers = p.last_stage_layers = 7;
    unsigned total = 0;
    for (unsigned s = 0; s < 16; s++)
        for (unsigned c = 0; c < 8; c++) {
            unsigned n = workload_chunk_layer_count(&m, &p, s, c);
            unsigned want = (s == 0 && c == 0) || (s == 15 && c == 7) ? 0 : 1;
            CHECK_INT_EQ(n, want);
            total += n;
        }
    CHECK_INT_EQ(total, 126);
    unsigned first, n;
    workload_stage_layers(&m, &p, 0, &first, &n);
    CHECK_INT_EQ(n, 7);
    CHECK_INT_EQ(first, 15); /* model positions 1 .. 15 (chunk 0 of stages 1 .. 15) come first */
    workload_stage_layers(&m, &p, 1, &first, &n);
    CHECK_INT_EQ(n, 8);
    CHECK_INT_EQ(first, 0); /* chunk 0 of stage 1 holds layer 0: chunk 0 of stage 0 has none */
    sim_error err;
    sim_error_clear(&err);
    CHECK(workload_check(&m, &p, 16 * 8, &err) == 0);
    /* divisible: 6 layers over 2 chunks go 3 + 3 (Megatron's split) */
    p.vpp = 2;
    p.first_stage_layers = p.last_stage_layers = 6;
    m.layers = 6 + 6 + 14 * 8;
    CHECK_INT_EQ(workload_chunk_layer_count(&m, &p, 0, 0), 3);
    CHECK_INT_EQ(workload_chunk_layer_count(&m, &p, 15, 1), 3);
    CHECK_INT_EQ(workload_chunk_layer_count(&m, &p, 7, 1), 4);
}

/* The uneven interleaved schedule runs (it used to be refused), beats the
 * uneven 1F1B it fell back to, cannot beat its busiest stage's work, and
 * first = last = the even count gives the even schedule bit for bit. */
static void test_uneven_interleaved(void)
{
    model_arch m = model();
    step_options o;
    step_options_defaults(&o);
    step_profile a, b;
    m.layers = 30; /* 7 + 8 + 8 + 7: chunks 3 4 | 4 4 | 4 4 | 4 3 */
    parallel_config p = par(8, 4, 1, 32);
    p.first_stage_layers = p.last_stage_layers = 7;
    CHECK(run(&m, p, rail_ndr(0), 1, &o, &a) == 0);
    p.vpp = 2;
    p.schedule = SCHEDULE_INTERLEAVED;
    CHECK(run(&m, p, rail_ndr(0), 1, &o, &b) == 0);
    double busiest = 0;
    for (unsigned s = 0; s < 4; s++)
        busiest = fmax(busiest, b.stage[s].part_s[STEP_COMPUTE]);
    printf("uneven pp 4: 1F1B %.4g s, interleaved v 2 %.4g s, busiest stage %.4g s\n",
           a.iteration_s, b.iteration_s, busiest);
    CHECK(b.iteration_s < a.iteration_s);
    CHECK(b.iteration_s >= busiest);
    step_profile_free(&a);
    step_profile_free(&b);
    m.layers = 32;
    p.first_stage_layers = p.last_stage_layers = 8;
    CHECK(run(&m, p, rail_ndr(0), 0, &o, &a) == 0);
    p.first_stage_layers = p.last_stage_layers = 0;
    CHECK(run(&m, p, rail_ndr(0), 0, &o, &b) == 0);
    CHECK(a.iteration_s == b.iteration_s);
    step_profile_free(&a);
    step_profile_free(&b);
}

static void test_attribution(void)
{
    model_arch m = model();
    struct { unsigned tp, pp, dp, cp, vpp, first; int zero, mode; double overlap, slow; } cs[] = {
        {8, 2, 4, 1, 1, 0, 1, TP_OVERLAP_FRACTION, 0, 1},
        {8, 1, 8, 1, 1, 0, 0, TP_OVERLAP_NONE, 0, 1},
        {8, 4, 2, 1, 2, 7, 1, TP_OVERLAP_PIPELINED, 0, 1},
        {8, 2, 4, 1, 2, 0, 1, TP_OVERLAP_FRACTION, 0.5, 0.9},
        {4, 2, 2, 2, 1, 0, 1, TP_OVERLAP_PIPELINED, 0, 1}};
    double speed[64];
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        parallel_config p = par(cs[i].tp, cs[i].pp, cs[i].dp, 16 * cs[i].dp);
        p.cp = cs[i].cp;
        p.vpp = cs[i].vpp;
        p.schedule = cs[i].vpp > 1 ? SCHEDULE_INTERLEAVED : SCHEDULE_1F1B;
        p.first_stage_layers = p.last_stage_layers = cs[i].first;
        m.layers = cs[i].first ? 30 : 32;
        p.zero_stage = cs[i].zero;
        p.fw.tp_overlap_mode = cs[i].mode;
        step_options o;
        step_options_defaults(&o);
        o.tp_overlap = cs[i].overlap;
        for (unsigned g = 0; g < 64; g++)
            speed[g] = g == 9 ? cs[i].slow : 1;
        o.gpu_speed = speed;
        o.n_gpu_speed = 64;
        step_profile q;
        CHECK(run(&m, p, rail_ndr(0), 0, &o, &q) == 0);
        check_conservation(&q);
        CHECK(q.kernel_s[OP_GEMM] > q.kernel_s[OP_ATTENTION]);
        step_profile_free(&q);
    }
}

/* TP overlap modes on a node-local TP group (no DP, whose overlapped
 * reductions take SMs too): none hides nothing; fraction
 * 100 % hides everything and pays hidden x 5 / (132 - 5) in compute (the
 * reduce-scatter's 5 SMs of H100's 132, components.md 4.4, hardware.md 1.1);
 * pipelined lies between; pipelined without SP is refused. */
static void test_tp_modes(void)
{
    model_arch m = model();
    parallel_config p = par(8, 2, 1, 16);
    step_options o;
    step_options_defaults(&o);
    step_profile none, full, pipe;
    p.fw.tp_overlap_mode = TP_OVERLAP_NONE;
    CHECK(run(&m, p, rail_ndr(0), 0, &o, &none) == 0);
    p.fw.tp_overlap_mode = TP_OVERLAP_FRACTION;
    o.tp_overlap = 1;
    CHECK(run(&m, p, rail_ndr(0), 0, &o, &full) == 0);
    p.fw.tp_overlap_mode = TP_OVERLAP_PIPELINED;
    CHECK(run(&m, p, rail_ndr(0), 0, &o, &pipe) == 0);
    double tp_total = none.coll_total_s[COMM_TP_ALLGATHER] +
                      none.coll_total_s[COMM_TP_REDUCE_SCATTER];
    CHECK(tp_total > 0);
    CHECK_REL(none.part_s[STEP_TP], tp_total, 1e-9);
    CHECK(none.sm_contention_s == 0);
    CHECK(full.part_s[STEP_TP] == 0);
    /* all hidden: the GEMMs beside 5 SMs (NVLink only, components.md 4.4) for
     * the whole TP time, at H100's measured beside-slowdown */
    CHECK(compute_beside_share(&dev, 5) > 5 / 127.0);
    CHECK_REL(full.sm_contention_s, tp_total * compute_beside_share(&dev, 5), 1e-9);
    CHECK(pipe.part_s[STEP_TP] > 0 && pipe.part_s[STEP_TP] < none.part_s[STEP_TP]);
    CHECK(pipe.iteration_s < none.iteration_s);
    CHECK(full.iteration_s < none.iteration_s);
    printf("tp overlap: none %.4g s, pipelined %.4g s (exposed tp %.4g of %.4g), all hidden "
           "%.4g s (SMs %.4g s)\n", none.iteration_s, pipe.iteration_s, pipe.part_s[STEP_TP],
           tp_total, full.iteration_s, full.sm_contention_s);
    step_profile_free(&none);
    step_profile_free(&full);
    step_profile_free(&pipe);
    p.sequence_parallel = 0;
    CHECK(run(&m, p, rail_ndr(0), 0, &o, &pipe) != 0);
}

/* DP buckets: the default is Megatron's max(40M, 1M x dp) (components.md
 * 4.4), so 40M given explicitly changes nothing; one bucket per chunk (a
 * huge fixed bucket) or no overlap can only expose more; the same run twice
 * gives the same profile. */
static void test_buckets(void)
{
    model_arch m = model();
    parallel_config p = par(8, 2, 4, 64);
    step_options o;
    step_options_defaults(&o);
    step_profile rule, given, huge, late, again;
    CHECK(run(&m, p, rail_ndr(0), 0, &o, &rule) == 0);
    o.bucket_params = 40e6;
    CHECK(run(&m, p, rail_ndr(0), 0, &o, &given) == 0);
    CHECK(rule.iteration_s == given.iteration_s);
    /* no TP hidden: the SM cost is the DP reduction and gather running
     * beside compute, at most their whole time x the share of 16 SMs held
     * (NVLink + IB without SHARP, components.md 4.4): H100's measured
     * beside-slowdown - 1, above rule 1's 16 / (132 - 16) */
    double dp_total = rule.coll_total_s[COMM_DP_REDUCE_SCATTER] +
                      rule.coll_total_s[COMM_DP_ALLGATHER];
    CHECK(rule.sm_contention_s == 0);
    CHECK(rule.dp_sm_contention_s > 0);
    double q16 = compute_beside_share(&dev, 16);
    CHECK(q16 > 16 / 116.0);
    CHECK(rule.dp_sm_contention_s <= dp_total * q16 * (1 + 1e-9));
    o.bucket_params = 0;
    p.fw.bucket_rule = BUCKET_FIXED;
    p.fw.bucket_params = 1e15;
    CHECK(run(&m, p, rail_ndr(0), 0, &o, &huge) == 0);
    CHECK(huge.part_s[STEP_DP] >= rule.part_s[STEP_DP]);
    p.fw.bucket_rule = BUCKET_MEGATRON;
    o.overlap_grad_reduce = 0;
    CHECK(run(&m, p, rail_ndr(0), 0, &o, &late) == 0);
    CHECK(late.part_s[STEP_DP] >= rule.part_s[STEP_DP]);
    o.overlap_grad_reduce = 1;
    CHECK(run(&m, p, rail_ndr(0), 0, &o, &again) == 0);
    CHECK(again.iteration_s == rule.iteration_s &&
          !memcmp(again.kernel_s, rule.kernel_s, sizeof rule.kernel_s) &&
          !memcmp(again.coll_total_s, rule.coll_total_s, sizeof rule.coll_total_s) &&
          !memcmp(again.coll_exposed_s, rule.coll_exposed_s, sizeof rule.coll_exposed_s));
    printf("dp exposed: Megatron buckets %.4g s, one bucket per chunk %.4g s, no overlap %.4g s\n",
           rule.part_s[STEP_DP], huge.part_s[STEP_DP], late.part_s[STEP_DP]);
    step_profile_free(&rule);
    step_profile_free(&given);
    step_profile_free(&huge);
    step_profile_free(&late);
    step_profile_free(&again);
}

int main(void)
{
    if (fixture_init())
        return 1;
    test_bubble_closed_forms();
    test_straggler();
    test_overlap_and_fidelity();
    test_fabric_comparison();
    test_profile_cache();
    test_chunk_layers();
    test_uneven_interleaved();
    test_attribution();
    test_tp_modes();
    test_buckets();
    scn_catalog_free(cat);
    return check_report();
}
