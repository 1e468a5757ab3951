/* test_step_des.c - the concurrent iteration (step.h network="concurrent",
 * models/step_des.c): equal to the isolated iteration where nothing can
 * contend, the same bytes on the fabric whatever overlaps, a pipeline that
 * obeys its schedule, stragglers, determinism, the flow log, and refusals. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "step.h"

#include "step_fixture.h"

static step_options options(int concurrent)
{
    step_options o;
    step_options_defaults(&o);
    o.concurrent = concurrent;
    return o;
}

/* One replica, two stages: the forward sends (stage 0 -> 1) and backward
 * sends (1 -> 0) use opposite directions of every link and there is no DP
 * traffic, so nothing contends: the concurrent iteration is the isolated
 * one, part by part. */
static void test_no_contention(void)
{
    model_arch m = model();
    parallel_config p = par(8, 2, 1, 16);
    step_options iso = options(0), con = options(1);
    step_profile a, b;
    CHECK(run(&m, p, rail_ndr(0), 0, &iso, &a) == 0);
    CHECK(run(&m, p, rail_ndr(0), 0, &con, &b) == 0);
    printf("no contention: isolated %.9f s, concurrent %.9f s\n", a.iteration_s, b.iteration_s);
    CHECK_REL(b.iteration_s, a.iteration_s, 1e-12);
    for (int k = 0; k < STEP_PART_COUNT; k++)
        CHECK_NEAR(b.part_s[k], a.part_s[k], 1e-12 * a.iteration_s);
    CHECK(b.part_s[STEP_PP] > 0); /* the sends were priced, not free */
    check_conservation(&b);
    step_profile_free(&a);
    step_profile_free(&b);
    /* a sharded optimizer without data parallelism: nothing to gather */
    p.zero_stage = 3;
    CHECK(run(&m, p, rail_ndr(0), 0, &iso, &a) == 0);
    CHECK(run(&m, p, rail_ndr(0), 0, &con, &b) == 0);
    CHECK_REL(b.iteration_s, a.iteration_s, 1e-12);
    step_profile_free(&a);
    step_profile_free(&b);
}

/* The bytes are the job's whatever overlaps: every tier carries the same
 * bytes in the concurrent iteration as in the isolated one (minimal routes
 * cross each tier the same number of times), and the scale-up tier (TP) is
 * priced alike. */
static void check_same_bytes(const step_profile *a, const step_profile *b)
{
    for (int t = 0; t < STEP_TIERS; t++)
        CHECK_REL(b->tier_bytes[t] + 1, a->tier_bytes[t] + 1, 1e-9);
}

/* The pipeline obeys its schedule: 2 m v p tasks, stage by stage, each
 * stage's tasks one after another, a forward of a later model position
 * after the one before it, and every task as long as its compute. */
static void check_gantt(const step_profile *q, const parallel_config *p, unsigned m)
{
    unsigned v = p->vpp ? p->vpp : 1;
    CHECK_INT_EQ(q->n_tasks, 2 * (size_t)m * v * p->pp);
    size_t per = 2 * (size_t)m * v;
    for (size_t i = 0; i < q->n_tasks; i++) {
        const sched_task *t = &q->tasks[i];
        CHECK_INT_EQ(t->stage, i / per);
        CHECK(t->end_s > t->start_s);
        if (i % per)
            CHECK(t->start_s >= q->tasks[i - 1].end_s - 1e-12);
        CHECK(t->end_s <= q->iteration_s * (1 + 1e-12));
    }
}

/* Link utilisation over time: the bins cover the iteration (at most 4,096
 * of them), and per bin
 * and tier 0 <= mean <= busiest <= 1 (no link above its capacity); the
 * fabric's tiers carry traffic in some bin. */
static void check_bins(const step_profile *q)
{
    CHECK(q->n_bins > 0 && q->bin_s > 0);
    CHECK(q->n_bins * q->bin_s >= q->iteration_s);
    CHECK(q->n_bins <= 4096);
    double busiest = 0;
    for (unsigned b = 0; b < q->n_bins; b++)
        for (int t = 0; t < STEP_TIERS; t++) {
            double pk = q->bin_peak[b * STEP_TIERS + t], mn = q->bin_mean[b * STEP_TIERS + t];
            CHECK(mn >= 0 && mn <= pk * (1 + 1e-12) + 1e-15 && pk <= 1 + 1e-9);
            if (t > 0)
                busiest = fmax(busiest, pk);
        }
    CHECK(busiest > 0);
}

/* 16 replicas on a 3:1 oversubscribed RoCE leaf-spine with ECMP: the
 * concurrent iteration conserves bytes, adds up, keeps its schedule and is
 * repeatable bit for bit; it is never faster than the job with free
 * communication. */
static void test_contention(void)
{
    model_arch m = model();
    parallel_config p = par(8, 2, 16, 256);
    fabric_config roce = roce_leafspine();
    step_options iso = options(0), con = options(1);
    step_profile a, b, c, free_comm;
    CHECK(run(&m, p, roce, 0, &iso, &a) == 0);
    CHECK(run(&m, p, roce, 0, &con, &b) == 0);
    CHECK(run(&m, p, roce, 0, &con, &c) == 0);
    CHECK(run(&m, p, roce, 1, &con, &free_comm) == 0);
    printf("leaf-spine 3:1 ECMP, TP8 PP2 DP16: isolated %.6f s (pp %.6f, dp %.6f), "
           "concurrent %.6f s (pp %.6f, dp %.6f), free communication %.6f s\n", a.iteration_s,
           a.part_s[STEP_PP], a.part_s[STEP_DP], b.iteration_s, b.part_s[STEP_PP],
           b.part_s[STEP_DP], free_comm.iteration_s);
    check_same_bytes(&a, &b);
    check_conservation(&b);
    check_gantt(&b, &p, 16);
    check_bins(&b);
    CHECK(a.n_bins == 0 && a.bin_peak == NULL);
    CHECK(b.iteration_s > free_comm.iteration_s);
    CHECK(b.iteration_s == c.iteration_s);
    CHECK(!memcmp(b.link_bytes, c.link_bytes, b.n_links * sizeof *b.link_bytes));
    CHECK(!memcmp(b.tasks, c.tasks, b.n_tasks * sizeof *b.tasks));
    for (uint32_t l = 0; l < b.n_links; l++)
        CHECK(isfinite(b.link_utilisation[l]) && b.link_utilisation[l] >= 0 &&
              b.link_utilisation[l] <= 1 + 1e-9);
    step_profile_free(&a);
    step_profile_free(&b);
    step_profile_free(&c);
    step_profile_free(&free_comm);
}

/* An interleaved pipeline with ZeRO's parameter gather and four stages:
 * the schedule holds and the parts add up. */
static void test_interleaved(void)
{
    model_arch m = model();
    parallel_config p = par(8, 4, 4, 64);
    p.vpp = 2;
    p.schedule = SCHEDULE_INTERLEAVED;
    p.zero_stage = 2;
    step_options con = options(1), iso = options(0);
    step_profile a, b;
    CHECK(run(&m, p, rail_ndr(0), 0, &iso, &a) == 0);
    CHECK(run(&m, p, rail_ndr(0), 0, &con, &b) == 0);
    printf("interleaved TP8 PP4 DP4 v2 ZeRO 2: isolated %.6f s, concurrent %.6f s\n",
           a.iteration_s, b.iteration_s);
    check_conservation(&b);
    check_gantt(&b, &p, 16);
    check_same_bytes(&a, &b);
    CHECK(b.coll_total_s[COMM_DP_ALLGATHER] > 0);
    step_profile_free(&a);
    step_profile_free(&b);
}

/* One GPU slower: the concurrent iteration slows by more the slower it is,
 * never by more than 1/speed, names the GPU and the replicas' wait. */
static void test_straggler(void)
{
    model_arch m = model();
    parallel_config p = par(8, 2, 4, 64);
    unsigned gpus = 64;
    double speed[64], levels[] = {1.0, 0.95, 0.8}, prev = 0, base = 0;
    for (int k = 0; k < 3; k++) {
        for (unsigned g = 0; g < gpus; g++)
            speed[g] = 1;
        speed[42] = levels[k];
        step_options o = options(1);
        o.gpu_speed = speed;
        o.n_gpu_speed = gpus;
        step_profile q;
        CHECK(run(&m, p, rail_ndr(0), 0, &o, &q) == 0);
        if (k == 0) {
            base = q.iteration_s;
            CHECK(q.slowest_gpu == UINT32_MAX);
        } else {
            CHECK(q.iteration_s > prev);
            CHECK(q.iteration_s <= base / levels[k] * (1 + 1e-9));
            CHECK_INT_EQ(q.slowest_gpu, 42);
            CHECK(q.wait_s > 0);
        }
        check_conservation(&q);
        prev = q.iteration_s;
        step_profile_free(&q);
    }
}

/* flows one bucket's plan starts on the net: a phase's one coupled flow or
 * one per connection (netcoll_exec.c), every DP group of stage s at once
 * (step_des.c's dp_plan) */
static size_t plan_flows(const fabric *f, const parallel_config *p, unsigned s,
                         enum nc_collective coll, double bytes)
{
    unsigned n = p->dp * p->cp;
    if (n < 2 || !(bytes > 0))
        return 0;
    nc_plan plan;
    memset(&plan, 0, sizeof plan);
    uint32_t ranks[64];
    sim_error err;
    sim_error_clear(&err);
    for (unsigned t = 0; t < p->tp; t++) {
        unsigned k = 0;
        for (unsigned d = 0; d < p->dp; d++)
            for (unsigned c = 0; c < p->cp; c++)
                ranks[k++] = step_gpu(p, s, d, c, t);
        CHECK(nc_plan_append(&plan, &f->nc, coll, NC_ALGO_AUTO, ranks, n, bytes, &err) == 0);
    }
    size_t flows = 0;
    for (uint32_t i = 0; i < plan.n_phases; i++)
        flows += plan.phase[i].n_conn == 0 ? 0 : plan.phase[i].coupled ? 1 : plan.phase[i].n_conn;
    nc_plan_free(&plan);
    return flows;
}

/* The flow log of TP8 PP2 DP2 (8 micro-batches, one DP bucket per stage,
 * ZeRO 1): every PP send is one coupled flow (per replica, boundary,
 * micro-batch and direction) from the sender's GPU pair 0 with its cp x tp
 * pairs' bytes; the DP reductions and gathers are their plans' flows; each
 * flow starts and ends within the iteration (a hidden parameter gather
 * may end after it); the network tiers carry
 * exactly the flows' bytes (TP stays in the node); the log is the same bit
 * for bit on a second run, and a cap keeps its first flows and says it
 * truncated. */
static void test_flow_log(void)
{
    model_arch m = model();
    parallel_config p = par(8, 2, 2, 16);
    unsigned gpus = 32, mb = 8;
    workload w;
    sim_error err;
    sim_error_clear(&err);
    CHECK(workload_build(&m, &p, gpus, &w, &err) == 0);
    fabric_config fc = rail_ndr(gpus);
    fabric f;
    CHECK(fabric_build(&fc, &f, &err) == 0);
    step_options o = options(1);
    o.overlap_grad_reduce = 0;  /* one bucket per stage */
    o.overlap_param_gather = 0; /* the gathers end within the iteration (below) */
    step_profile a, b, cut, iso;
    CHECK(step_simulate(&w, &dev, &f, &o, &a, &err) == 0);
    CHECK(step_simulate(&w, &dev, &f, &o, &b, &err) == 0);
    /* what the log must hold, from the workload and the plans */
    double pp_bytes[2] = {0}, dp_bytes[2] = {0}, ag_bytes[2] = {0};
    enum nc_collective red[2] = {NC_ALLREDUCE, NC_ALLREDUCE};
    size_t want[STEP_FLOW_KINDS] = {(size_t)p.dp * (p.pp - 1) * mb * 2, 0, 0};
    for (unsigned s = 0; s < p.pp; s++) {
        for (size_t i = 0; i < w.stages[s].n_comm; i++) {
            const comm_op *c = &w.stages[s].comm[i];
            if (c->kind == COMM_PP_SEND)
                pp_bytes[s] = c->bytes;
            if (c->kind == COMM_DP_ALLREDUCE || c->kind == COMM_DP_REDUCE_SCATTER)
                dp_bytes[s] += c->bytes;
            if (c->kind == COMM_DP_REDUCE_SCATTER)
                red[s] = NC_REDUCESCATTER;
            if (c->kind == COMM_DP_ALLGATHER)
                ag_bytes[s] += c->bytes;
        }
        want[STEP_FLOW_DP] += plan_flows(&f, &p, s, red[s], dp_bytes[s]);
        want[STEP_FLOW_GATHER] += plan_flows(&f, &p, s, NC_ALLGATHER, ag_bytes[s]);
    }
    size_t got[STEP_FLOW_KINDS] = {0};
    double tiers[STEP_TIERS] = {0};
    for (size_t i = 0; i < a.n_flows; i++) {
        const step_flow *x = &a.flows[i];
        CHECK(x->kind < STEP_FLOW_KINDS);
        got[x->kind]++;
        CHECK(x->start_s >= 0 && x->start_s <= x->end_s && x->end_s <= a.iteration_s);
        CHECK(i == 0 || x->start_s >= a.flows[i - 1].start_s); /* start order */
        double hops = 0;
        for (int t = 0; t < STEP_TIERS; t++) {
            tiers[t] += x->tier_bytes[t];
            hops += x->tier_bytes[t];
        }
        CHECK(hops >= x->bytes * (1 - 1e-12) && x->bytes > 0); /* one link at least */
        CHECK(x->src < gpus && x->dst < gpus && x->stage < p.pp && x->chunk == 0);
        if (x->kind == STEP_FLOW_PP) {
            unsigned to = x->backward ? 0 : 1;
            CHECK_INT_EQ(x->stage, 1 - to);
            CHECK(x->replica < p.dp && x->index < mb && x->phase == 0);
            CHECK_INT_EQ(x->src, step_gpu(&p, x->stage, x->replica, 0, 0));
            CHECK_INT_EQ(x->dst, step_gpu(&p, to, x->replica, 0, 0));
            CHECK_INT_EQ(x->n_conn, p.tp * p.cp);
            CHECK_REL(x->bytes, pp_bytes[0] * p.tp * p.cp, 1e-12);
        } else {
            CHECK(x->replica == UINT32_MAX && x->index == 0); /* one bucket */
            CHECK_INT_EQ(x->src / (p.tp * p.dp), x->stage); /* the stage's GPUs */
            CHECK_INT_EQ(x->dst / (p.tp * p.dp), x->stage);
        }
    }
    printf("flow log: %zu PP, %zu DP, %zu gather flows (want %zu, %zu, %zu)\n", got[0], got[1],
           got[2], want[0], want[1], want[2]);
    for (int k = 0; k < STEP_FLOW_KINDS; k++)
        CHECK_INT_EQ(got[k], want[k]);
    CHECK(want[STEP_FLOW_DP] > 0 && want[STEP_FLOW_GATHER] > 0);
    CHECK_INT_EQ(a.flows_total, a.n_flows);
    CHECK(!a.flows_truncated);
    for (int t = 1; t < STEP_TIERS; t++) /* the network: only the shared net's flows */
        CHECK_REL(tiers[t] + 1, a.tier_bytes[t] + 1, 1e-9);
    CHECK(tiers[0] <= a.tier_bytes[0] * (1 + 1e-12)); /* scale-up: TP besides */
    CHECK(tiers[1] > 0);
    CHECK(b.n_flows == a.n_flows && !memcmp(a.flows, b.flows, a.n_flows * sizeof *a.flows));
    o.flow_log = 10;
    CHECK(step_simulate(&w, &dev, &f, &o, &cut, &err) == 0);
    CHECK_INT_EQ(cut.n_flows, 10);
    CHECK_INT_EQ(cut.flows_total, a.n_flows);
    CHECK(cut.flows_truncated);
    CHECK(!memcmp(cut.flows, a.flows, 10 * sizeof *a.flows));
    CHECK(cut.iteration_s == a.iteration_s); /* the log changes nothing */
    step_profile_free(&cut);
    /* a gather hidden behind the next iteration's first forward may run
     * past the iteration's end; the rest is as before */
    o.overlap_param_gather = 1;
    CHECK(step_simulate(&w, &dev, &f, &o, &cut, &err) == 0);
    CHECK_INT_EQ(cut.n_flows, 10);
    int late = 0;
    step_profile_free(&cut);
    o.flow_log = STEP_FLOW_LOG_DEFAULT;
    CHECK(step_simulate(&w, &dev, &f, &o, &cut, &err) == 0);
    CHECK_INT_EQ(cut.n_flows, a.n_flows);
    double dp_end[2] = {0};
    for (size_t i = 0; i < cut.n_flows; i++) {
        const step_flow *x = &cut.flows[i];
        CHECK(x->end_s <= cut.iteration_s || x->kind == STEP_FLOW_GATHER);
        if (x->kind == STEP_FLOW_DP)
            dp_end[x->stage] = fmax(dp_end[x->stage], x->end_s);
        if (x->kind == STEP_FLOW_GATHER) /* after the stage's reduction and optimizer */
            CHECK(x->start_s > dp_end[x->stage]);
        late += x->end_s > cut.iteration_s;
    }
    CHECK(late > 0); /* this case hides its last gather */
    step_profile_free(&cut);
    o.flow_log = 0;
    CHECK(step_simulate(&w, &dev, &f, &o, &cut, &err) == 0);
    CHECK(cut.n_flows == 0 && cut.flows == NULL && cut.flows_truncated);
    CHECK(!memcmp(cut.link_bytes, a.link_bytes, a.n_links * sizeof *a.link_bytes));
    step_options io = options(0);
    CHECK(step_simulate(&w, &dev, &f, &io, &iso, &err) == 0);
    CHECK(iso.n_flows == 0 && iso.flows_total == 0 && iso.flows == NULL);
    step_profile_free(&a);
    step_profile_free(&b);
    step_profile_free(&cut);
    step_profile_free(&iso);
    fabric_free(&f);
    workload_free(&w);
}

/* The concurrent iteration runs on the flow model only. */
static void test_refusal(void)
{
    model_arch m = model();
    parallel_config p = par(8, 2, 1, 16);
    workload w;
    sim_error err;
    sim_error_clear(&err);
    CHECK(workload_build(&m, &p, 16, &w, &err) == 0);
    fabric_config fc = rail_ndr(16);
    fabric f;
    CHECK(fabric_build(&fc, &f, &err) == 0);
    step_options o = options(1);
    o.analytic = 1;
    step_profile q;
    CHECK_INT_EQ(step_simulate(&w, &dev, &f, &o, &q, &err), SIM_ERR_INPUT);
    CHECK(strstr(err.msg, "flow model") != NULL);
    fabric_free(&f);
    workload_free(&w);
}

/* folded (fold_replicas > 0) and unfolded iterations agree part by part,
 * stage by stage and link by link (relative 1e-9) */
static void check_same_iteration(const step_profile *a, const step_profile *b)
{
    CHECK_REL(b->iteration_s, a->iteration_s, 1e-9);
    for (int k = 0; k < STEP_PART_COUNT; k++)
        CHECK_NEAR(b->part_s[k], a->part_s[k], 1e-9 * a->iteration_s);
    CHECK_INT_EQ(b->n_stages, a->n_stages);
    for (unsigned s = 0; s < a->n_stages && s < b->n_stages; s++)
        CHECK_REL(b->stage[s].end_s, a->stage[s].end_s, 1e-9);
    CHECK_INT_EQ(b->n_links, a->n_links);
    int differ = 0;
    for (uint32_t l = 0; l < a->n_links && l < b->n_links; l++)
        differ += fabs(b->link_bytes[l] - a->link_bytes[l]) > 1e-9 * (a->link_bytes[l] + 1);
    CHECK_INT_EQ(differ, 0);
    CHECK_INT_EQ(b->n_tasks, a->n_tasks);
    for (size_t i = 0; i < a->n_tasks && i < b->n_tasks; i++)
        CHECK_NEAR(b->tasks[i].end_s, a->tasks[i].end_s, 1e-9 * a->iteration_s);
    CHECK_INT_EQ(b->n_bins, a->n_bins);
    for (size_t i = 0; i < (size_t)a->n_bins * STEP_TIERS && b->n_bins == a->n_bins; i++)
        CHECK_NEAR(b->bin_peak[i], a->bin_peak[i], 1e-6);
    CHECK_INT_EQ(b->n_hot, a->n_hot);
    for (unsigned k = 0; k < a->n_hot && k < b->n_hot; k++)
        CHECK_REL(b->hot[k].both_s, a->hot[k].both_s, 1e-9);
}

/* Exact symmetry folding: with packet spraying (or ECMP, whose hash keys
 * are the same for every replica's send) on the rail-optimised fat-tree
 * every replica's sends and every rank's DP rings are alike, so the
 * iteration runs replica 0 only and agrees with the unfolded one to 1e-9
 * (1F1B, and interleaved with ZeRO 2's gathers). Folding stops by itself
 * with a straggler, adaptive routing or replicas placed unevenly (three on
 * leaves of two nodes), and says why. */
static void test_folding(void)
{
    model_arch m = model();
    fabric_config spray = rail_ndr(0), ecmp = rail_ndr(0);
    spray.routing.balance = TOPO_BALANCE_SPRAY;
    ecmp.routing.balance = TOPO_BALANCE_ECMP;
    ecmp.routing.qps = 4;
    /* and contended: test_contention's 3:1 leaf-spine (six nodes a leaf), sprayed */
    fabric_config oversub = spray;
    oversub.topology = topo_kind_find("leaf-spine");
    oversub.shape.over_down = 3;
    oversub.shape.over_up = 1;
    parallel_config shapes[3] = {par(8, 2, 4, 64), par(8, 4, 4, 64), par(8, 2, 12, 192)};
    shapes[1].vpp = 2;
    shapes[1].schedule = SCHEDULE_INTERLEAVED;
    shapes[1].zero_stage = 2;
    const fabric_config *fabrics[4] = {&spray, &spray, &ecmp, &oversub};
    const parallel_config *layouts[4] = {&shapes[0], &shapes[1], &shapes[0], &shapes[2]};
    for (int k = 0; k < 4; k++) {
        const fabric_config *fc = fabrics[k];
        const parallel_config *p = layouts[k];
        step_options on = options(1), off = options(1);
        off.no_fold = 1;
        step_options iso = options(0);
        step_profile a, b, c;
        CHECK(run(&m, *p, *fc, 0, &off, &a) == 0);
        CHECK(run(&m, *p, *fc, 0, &on, &b) == 0);
        CHECK(run(&m, *p, *fc, 0, &iso, &c) == 0);
        printf("%s, TP8 PP%u DP%u v%u: isolated %.9f s, unfolded %.9f s, folded %.9f s (%u "
               "replicas as one, %u flows in %u cells)\n", k == 2 ? "ECMP" : "spray", p->pp,
               p->dp, p->vpp ? p->vpp : 1, c.iteration_s, a.iteration_s, b.iteration_s,
               b.fold_replicas, b.fold_flows, b.fold_cells);
        CHECK_INT_EQ(a.fold_replicas, 0);
        CHECK(a.fold_note && strstr(a.fold_note, "asked"));
        CHECK_INT_EQ(b.fold_replicas, p->dp);
        CHECK(b.fold_cells > 0 && 4 * b.fold_cells <= b.fold_flows + 3);
        check_same_iteration(&a, &b);
        check_conservation(&b);
        if (k == 3) /* contention the isolated iteration does not see */
            CHECK(a.iteration_s > c.iteration_s * (1 + 1e-5));
        step_profile_free(&a);
        step_profile_free(&b);
        step_profile_free(&c);
    }
    /* symmetry broken: off, with the reason */
    double speed[64];
    for (unsigned g = 0; g < 64; g++)
        speed[g] = g == 42 ? 0.9 : 1;
    step_options slow = options(1), plain = options(1);
    slow.gpu_speed = speed;
    slow.n_gpu_speed = 64;
    fabric_config uneven = spray;
    uneven.topology = topo_kind_find("leaf-spine");
    uneven.shape.radix = 32; /* 16 host ports: two nodes a leaf */
    uneven.shape.over_down = uneven.shape.over_up = 1;
    struct {
        fabric_config fc;
        unsigned dp;
        const step_options *o;
        const char *why;
    } broken[3] = {{spray, 4, &slow, "stragglers"}, {rail_ndr(0), 4, &plain, "load"},
                   {uneven, 3, &plain, "not alike"}};
    for (int k = 0; k < 3; k++) {
        step_profile q;
        parallel_config p = par(8, 2, broken[k].dp, 16 * broken[k].dp);
        CHECK(run(&m, p, broken[k].fc, 0, broken[k].o, &q) == 0);
        CHECK_INT_EQ(q.fold_replicas, 0);
        CHECK(q.fold_note && strstr(q.fold_note, broken[k].why));
        step_profile_free(&q);
    }
}

int main(void)
{
    if (fixture_init())
        return 1;
    test_no_contention();
    test_contention();
    test_interleaved();
    test_straggler();
    test_flow_log();
    test_refusal();
    test_folding();
    scn_catalog_free(cat);
    return check_report();
}
