/* test_hubs_backbone.c - the shared backbone (models/hubs_backbone.h;
 * docs/hubs.md "A shared backbone"): routes of least RTT; two equal flows on
 * one link take exactly 2 x bits / B, and a three-flow max-min case by hand;
 * a backbone of one private link per hub reproduces the per-hub FIFO links
 * bit for bit when no two transfers on a hub's link overlap (the condition
 * is checked on the FIFO run), and differs when they do; bits are conserved
 * (sum over directed links = sum over transfers of bits x hops);
 * determinism. Datasets and results in one filling (hubs.h
 * backbone_two_pass 0): a dataset and a result together on one link take
 * 2 x bits / B each (closed form, two rounds), apart in time they are the
 * two passes' answer bit for bit (one round); the link's busy time and peak;
 * on 120 jobs bits conserved, determinism, more sharing than two passes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hubs.h"

static unsigned node(hubs_backbone *b, const char *name)
{
    snprintf(b->node[b->n_nodes], HUBS_BB_NAME, "%s", name);
    return b->n_nodes++;
}

static void add_link(hubs_backbone *b, unsigned a, unsigned c, double bps, double rtt)
{
    b->link[b->n_links++] = (hubs_link){.a = a, .b = c, .bandwidth_bps = bps, .rtt_s = rtt};
}

static void test_route(void)
{
    hubs_backbone b;
    memset(&b, 0, sizeof b);
    unsigned a = node(&b, "a"), m = node(&b, "m"), c = node(&b, "c"), z = node(&b, "z");
    add_link(&b, a, m, 1e9, 0.010);
    add_link(&b, m, c, 2e9, 0.010);
    add_link(&b, a, c, 4e9, 0.025); /* direct, but 5 ms longer */
    hubs_path p;
    CHECK(hubs_bb_route(&b, a, c, &p) == 0);
    CHECK_INT_EQ(p.n, 2);
    CHECK_INT_EQ(p.hop[0], 0); /* a -> m on link 0 */
    CHECK_INT_EQ(p.hop[1], 2); /* m -> c on link 1 */
    CHECK(p.rtt_s == 0.020);
    CHECK(p.bottleneck_bps == 1e9);
    CHECK(hubs_bb_route(&b, c, a, &p) == 0);
    CHECK_INT_EQ(p.hop[0], 3); /* c -> m: link 1 the other way */
    CHECK(hubs_bb_route(&b, a, z, &p) == -1); /* z has no link */
}

static hubs_flow flow(double start_s, double bits, const hubs_path *p)
{
    return (hubs_flow){.start_s = start_s, .bits = bits, .path = p};
}

static void test_closed_forms(void)
{
    sim_error err;
    sim_error_clear(&err);
    hubs_backbone b;
    memset(&b, 0, sizeof b);
    unsigned x = node(&b, "x"), y = node(&b, "y"), w = node(&b, "w");
    const double B = 100e9, X = 8e12; /* 1 TB */
    add_link(&b, x, y, B, 0.002);
    hubs_path p;
    CHECK(hubs_bb_route(&b, x, y, &p) == 0);
    /* two transfers of X together on one link: each 2 X / B */
    hubs_flow f[3] = {flow(0, X, &p), flow(0, X, &p)};
    double bits[2 * HUBS_BB_MAX_LINKS] = {0};
    CHECK(hubs_flows_run(&b, f, 2, bits, &err) == 0);
    CHECK_REL(f[0].done_s, 2 * X / B, 1e-12);
    CHECK_REL(f[1].done_s, 2 * X / B, 1e-12);
    CHECK_REL(bits[0], 2 * X, 1e-12);
    CHECK(f[0].slowed && f[1].slowed);
    f[0] = flow(3 * X / B, X, &p); /* alone: exactly X / B, not slowed */
    CHECK(hubs_flows_run(&b, f, 1, NULL, &err) == 0);
    CHECK(f[0].done_s == 3 * X / B + X / B && !f[0].slowed);
    CHECK(bits[1] == 0);
    /* X and 2 X from 0, a third X from X / B: the first shares with the
     * second, then with the third: X / B at B / 2 moves X / 2 each; then three
     * share: the first's last X / 2 at B / 3 ends at X / B + 1.5 X / B */
    f[0] = flow(0, X, &p);
    f[1] = flow(0, 2 * X, &p);
    f[2] = flow(X / B, X, &p);
    CHECK(hubs_flows_run(&b, f, 3, NULL, &err) == 0);
    CHECK_REL(f[0].done_s, 2.5 * X / B, 1e-12);
    /* at 2.5 X / B: the second has X / 2 + X / 2 moved, 1 X left; the third
     * X / 2 moved, X / 2 left: both at B / 2; the third ends at 3.5 X / B,
     * then the second alone: X / 2 at B: 4 X / B (all 4 X at B, work kept) */
    CHECK_REL(f[2].done_s, 3.5 * X / B, 1e-12);
    CHECK_REL(f[1].done_s, 4 * X / B, 1e-12);
    /* max-min across two links: l1 (x-y) of B, l2 (y-w) of 2 B; f0 on l1,
     * f1 on l1 and l2, f2 on l2: rates B/2, B/2, 3B/2 */
    add_link(&b, y, w, 2 * B, 0.001);
    hubs_path p1, p12, p2;
    CHECK(hubs_bb_route(&b, x, y, &p1) == 0 && hubs_bb_route(&b, x, w, &p12) == 0);
    CHECK(hubs_bb_route(&b, y, w, &p2) == 0);
    CHECK_INT_EQ(p12.n, 2);
    f[0] = flow(0, X, &p1);
    f[1] = flow(0, X, &p12);
    f[2] = flow(0, 4.5 * X, &p2);
    CHECK(hubs_flows_run(&b, f, 3, NULL, &err) == 0);
    CHECK_REL(f[0].done_s, 2 * X / B, 1e-12);
    CHECK_REL(f[1].done_s, 2 * X / B, 1e-12);
    /* f2 moved 3 X by 2 X / B, then 1.5 X alone at 2 B */
    CHECK_REL(f[2].done_s, 2.75 * X / B, 1e-12);
}

/* two hubs, two origins; per hub a gateway g_h: origin - g_h at the
 * catalog-like RTT and a huge bandwidth, g_h - hub at B and no RTT: the
 * hub's private link in and out (every transfer to or from the hub crosses
 * it, nothing else does) */
static hubs_routes *private_links(const hubs_config *c)
{
    hubs_routes *R = calloc(1, sizeof *R);
    hubs_backbone *b = &R->bb;
    for (unsigned h = 0; h < c->n_hubs; h++)
        node(b, c->hubs[h].name);
    for (unsigned o = 0; o < c->n_origins; o++)
        node(b, c->origin[o]);
    for (unsigned h = 0; h < c->n_hubs; h++) {
        char g[16];
        snprintf(g, sizeof g, "g%u", h);
        unsigned gw = node(b, g);
        add_link(b, gw, h, c->bandwidth_bps, 0);
        for (unsigned o = 0; o < c->n_origins; o++)
            add_link(b, c->n_hubs + o, gw, 1e18, c->hubs[h].rtt_s[o]);
    }
    for (unsigned o = 0; o < c->n_origins; o++)
        for (unsigned h = 0; h < c->n_hubs; h++)
            R->has[o][h] = !hubs_bb_route(b, c->n_hubs + o, h, &R->path[o][h]);
    return R;
}

static hubs_config two(const hubs_job_spec *v, uint32_t n, double bps)
{
    hubs_config c;
    memset(&c, 0, sizeof c);
    c.n_hubs = 2;
    c.n_origins = 2;
    snprintf(c.origin[0], 32, "east");
    snprintf(c.origin[1], 32, "south");
    const double rtt[2][2] = {{0.002, 0.020}, {0.025, 0.003}};
    for (unsigned h = 0; h < 2; h++) {
        hubs_hub *x = &c.hubs[h];
        snprintf(x->name, sizeof x->name, "h%u", h);
        x->gpus = 64;
        x->rtt_s[0] = rtt[h][0];
        x->rtt_s[1] = rtt[h][1];
        x->price_per_kwh = 0.5 + 0.1 * h;
        x->pue = 1.2;
        x->emission_kg_per_kwh = 0.5;
    }
    c.policy = hubs_policy_find("nearest");
    c.max_wait_s = 6 * 3600;
    c.bandwidth_bps = bps;
    c.cost_per_tb = 10;
    c.jobs = v;
    c.n_jobs = n;
    return c;
}

static hubs_job_spec *demand(uint32_t n)
{
    hubs_job_spec *v = calloc(n, sizeof *v);
    for (uint32_t i = 0; i < n; i++) {
        v[i].arrival_s = 600.0 * i;
        v[i].gpus = 8u << (i % 3);
        v[i].duration_s = 1800 + 600.0 * (i % 7);
        v[i].origin = (i / 3) % 2;
        v[i].kind = HUBS_TRAINING;
        v[i].dataset_tb = 0.5 * (1 + i % 3);
        v[i].result_tb = 0.1 * (i % 2);
    }
    return v;
}

static void run(const hubs_config *c, hubs_result *r)
{
    sim_error err;
    sim_error_clear(&err);
    cluster_config t;
    memset(&t, 0, sizeof t);
    t.gpus = t.leaf_gpus = t.su_gpus = 64;
    t.node_gpus = 8;
    t.sched = cluster_sched_find("easy-backfill");
    t.placer = cluster_placer_find("first-fit");
    t.seed = 1;
    CHECK(hubs_place(c, r, &err) == 0);
    CHECK(hubs_simulate(c, &t, r, NULL, &err) == 0);
}

/* did any two transfers overlap on a hub's FIFO link? */
static int overlapped(const hubs_config *c, const hubs_result *r)
{
    for (uint32_t i = 0; i < r->n_jobs; i++)
        if (r->jobs[i].in_start_s > c->jobs[i].arrival_s + r->jobs[i].defer_s ||
            r->jobs[i].back_wait_s > 0)
            return 1;
    return 0;
}

static void test_private_links(void)
{
    const uint32_t n = 120;
    hubs_job_spec *v = demand(n);
    /* 100 Gb/s: 1.5 TB takes 120 s, jobs 600 s apart: no overlap */
    for (int k = 0; k < 2; k++) {
        hubs_config c = two(v, n, k ? 4e9 : 100e9);
        hubs_result fifo, bb;
        run(&c, &fifo);
        hubs_routes *R = private_links(&c);
        c.backbone = R;
        run(&c, &bb);
        int same = 1;
        for (uint32_t i = 0; i < n; i++) {
            const hubs_job *a = &fifo.jobs[i], *b = &bb.jobs[i];
            same &= a->hub == b->hub && a->submit_s == b->submit_s && a->start_s == b->start_s &&
                    a->end_s == b->end_s && a->back_done_s == b->back_done_s &&
                    a->rtt_s == b->rtt_s;
        }
        if (!k) { /* no overlap: exactly today's */
            CHECK(!overlapped(&c, &fifo));
            CHECK(same);
            CHECK(fifo.total.digest == bb.total.digest);
            CHECK(fifo.total.transfer_s == bb.total.transfer_s);
            CHECK(fifo.total.link_wait_s == 0 && bb.total.link_wait_s == 0);
        } else { /* 4 Gb/s: 1.5 TB takes 3,000 s, they overlap: sharing differs */
            CHECK(overlapped(&c, &fifo));
            CHECK(!same);
            CHECK(bb.share_in_s > 0);
            CHECK(bb.total.link_wait_s > 0);
        }
        /* bits conserved: each transfer's bits on every hop of its route */
        double want = 0, got = 0;
        for (uint32_t i = 0; i < n; i++) {
            const hubs_path *p = &R->path[v[i].origin][bb.jobs[i].hub];
            want += (v[i].dataset_tb + v[i].result_tb) * 8e12 * p->n;
        }
        for (unsigned d = 0; d < 2 * R->bb.n_links; d++)
            got += bb.link_bits[d];
        CHECK_REL(got, want, 1e-9);
        CHECK_INT_EQ(R->path[0][0].n, 2);
        /* determinism */
        hubs_result again;
        run(&c, &again);
        CHECK(memcmp(again.jobs, bb.jobs, n * sizeof *bb.jobs) == 0);
        CHECK(memcmp(again.link_bits, bb.link_bits, sizeof bb.link_bits) == 0);
        CHECK(again.total.digest == bb.total.digest);
        hubs_result_free(&fifo);
        hubs_result_free(&bb);
        hubs_result_free(&again);
        free(R);
    }
    free(v);
}

/* a cost per TB on each hub's private link: the data cost is every TB at
 * the scenario's 10 CNY plus 3 CNY (closed form), per hub and in total */
static void test_link_cost(void)
{
    const uint32_t n = 60;
    hubs_job_spec *v = demand(n);
    hubs_config c = two(v, n, 100e9);
    hubs_routes *R = private_links(&c);
    for (unsigned l = 0; l < R->bb.n_links; l++)
        if (R->bb.link[l].b < c.n_hubs) /* gateway - hub */
            R->bb.link[l].cost_per_tb = 3;
    for (unsigned o = 0; o < c.n_origins; o++)
        for (unsigned h = 0; h < c.n_hubs; h++)
            CHECK(!hubs_bb_route(&R->bb, c.n_hubs + o, h, &R->path[o][h]));
    c.backbone = R;
    hubs_result r;
    run(&c, &r);
    double tb = 0, sum = 0;
    for (uint32_t i = 0; i < n; i++)
        tb += v[i].dataset_tb + v[i].result_tb;
    for (unsigned h = 0; h < c.n_hubs; h++) {
        const hubs_hub_result *o = &r.hub[h];
        CHECK_REL(o->data_cost, (o->tb_in + o->tb_out) * 13, 1e-12);
        sum += o->data_cost;
    }
    CHECK_REL(r.total.data_cost, tb * 13, 1e-12);
    CHECK_REL(sum, r.total.data_cost, 1e-12);
    CHECK(hubs_link_cost(&c, &v[0], 0, 2) == 6);
    hubs_result_free(&r);
    free(R);
    free(v);
}

/* east, south (origins), h0, h1 (hubs) and a shared link X - Y of B
 * between them (every other link 1e18 b/s): east - X, h0 - X, Y - south,
 * Y - h1. A dataset east -> h1 and a result h0 -> south both cross X -> Y */
static hubs_routes *shared_link(const hubs_config *c, double B)
{
    hubs_routes *R = calloc(1, sizeof *R);
    hubs_backbone *b = &R->bb;
    unsigned h0 = node(b, c->hubs[0].name), h1 = node(b, c->hubs[1].name);
    unsigned east = node(b, c->origin[0]), south = node(b, c->origin[1]);
    unsigned X = node(b, "X"), Y = node(b, "Y");
    add_link(b, east, X, 1e18, 0.001);
    add_link(b, h0, X, 1e18, 0.001);
    add_link(b, X, Y, B, 0.010);
    add_link(b, Y, south, 1e18, 0.001);
    add_link(b, Y, h1, 1e18, 0.001);
    for (unsigned o = 0; o < 2; o++)
        for (unsigned h = 0; h < 2; h++)
            R->has[o][h] = !hubs_bb_route(b, east + o, h0 + h, &R->path[o][h]);
    return R;
}

/* two() with the hubs' RTTs swapped: nearest places south's jobs at h0,
 * east's at h1, so that every transfer crosses X - Y */
static hubs_config crossed(const hubs_job_spec *v, uint32_t n)
{
    hubs_config c = two(v, n, 100e9);
    for (unsigned o = 0; o < 2; o++) {
        double r = c.hubs[0].rtt_s[o];
        c.hubs[0].rtt_s[o] = c.hubs[1].rtt_s[o];
        c.hubs[1].rtt_s[o] = r;
    }
    return c;
}

/* job 0 from south at h0 (no dataset, a result of X TB at its end D), job 1
 * from east at h1 (a dataset of X TB from its arrival): nearest places
 * them so (crossed) */
static void two_jobs(hubs_job_spec *v, double D, double X_tb, double second_s)
{
    memset(v, 0, 2 * sizeof *v);
    v[0] = (hubs_job_spec){.arrival_s = 0, .gpus = 8, .duration_s = D, .origin = 1,
                           .result_tb = X_tb};
    v[1] = (hubs_job_spec){.arrival_s = second_s, .gpus = 8, .duration_s = D, .origin = 0,
                           .dataset_tb = X_tb};
}

/* one filling against two passes: the closed form of two transfers that
 * meet on X -> Y (each 2 X / B), exactly the two passes' answer when they
 * do not meet in time; the link's busy time and peak */
static void test_one_pass(void)
{
    const double B = 10e9, D = 3600, X_tb = 1, Xb = X_tb * 8e12; /* 1 TB: 800 s at B */
    hubs_job_spec v[2];
    for (int meet = 1; meet >= 0; meet--) {
        two_jobs(v, D, X_tb, meet ? D : D + Xb / B + 1);
        hubs_config c = crossed(v, 2);
        hubs_routes *R = shared_link(&c, B);
        c.backbone = R;
        hubs_result one, two_pass;
        run(&c, &one);
        c.backbone_two_pass = 1;
        run(&c, &two_pass);
        CHECK_INT_EQ(one.jobs[0].hub, 0);
        CHECK_INT_EQ(one.jobs[1].hub, 1);
        const hubs_path *in = &R->path[0][1], *out = &R->path[1][0];
        CHECK_INT_EQ(in->n, 3);
        CHECK_INT_EQ(in->hop[1], 4);      /* X -> Y: link 2 a -> b */
        CHECK_INT_EQ(out->hop[1], 5);     /* Y -> X, walked backwards by the result */
        CHECK(one.jobs[0].end_s == D);    /* alone at h0 from 0 */
        /* two passes: each alone, X / B */
        CHECK_REL(two_pass.jobs[0].back_done_s, D + Xb / B + out->rtt_s, 1e-12);
        CHECK_REL(two_pass.jobs[1].submit_s, v[1].arrival_s + Xb / B + in->rtt_s, 1e-12);
        CHECK_INT_EQ(two_pass.backbone_rounds, 0);
        if (meet) { /* both on X -> Y from D: 2 X / B each */
            CHECK_REL(one.jobs[0].back_done_s, D + 2 * Xb / B + out->rtt_s, 1e-12);
            CHECK_REL(one.jobs[1].submit_s, D + 2 * Xb / B + in->rtt_s, 1e-12);
            CHECK_REL(one.jobs[0].back_wait_s, Xb / B, 1e-9);
            CHECK_REL(one.jobs[1].in_share_s, Xb / B, 1e-9);
            CHECK_REL(one.share_in_s + one.share_out_s, 2 * Xb / B, 1e-9);
            CHECK_REL(one.jobs[1].end_s, one.jobs[1].submit_s + D, 1e-12);
            CHECK_INT_EQ(one.backbone_rounds, 2); /* job 1's submission moved once */
            CHECK(two_pass.share_in_s == 0 && two_pass.share_out_s == 0);
        } else { /* apart in time: the two passes' answer to the bit */
            CHECK(memcmp(one.jobs, two_pass.jobs, 2 * sizeof *one.jobs) == 0);
            CHECK(memcmp(one.link_bits, two_pass.link_bits, sizeof one.link_bits) == 0);
            CHECK(one.total.digest == two_pass.total.digest);
            CHECK(one.share_in_s == 0 && one.share_out_s == 0);
            CHECK_INT_EQ(one.backbone_rounds, 1);
        }
        /* X -> Y: 2 X crossed, busy 2 X / B either way, at its bandwidth at the peak */
        CHECK_REL(one.link_bits[4], 2 * Xb, 1e-12);
        CHECK_REL(one.link_busy_s[4], 2 * Xb / B, 1e-9);
        CHECK(one.link_peak_bps[4] == B);
        CHECK(one.link_bits[5] == 0 && one.link_busy_s[5] == 0 && one.link_peak_bps[5] == 0);
        hubs_result_free(&one);
        hubs_result_free(&two_pass);
        free(R);
    }
}

/* many jobs on the shared link: bits conserved (each transfer's on every
 * hop of its route), one filling twice the same, and where datasets and
 * results meet it differs from the two passes */
static void test_one_pass_many(void)
{
    const uint32_t n = 120;
    hubs_job_spec *v = demand(n);
    for (uint32_t i = 0; i < n; i++)
        v[i].result_tb = 0.4 * (1 + i % 2);
    hubs_config c = crossed(v, n);
    hubs_routes *R = shared_link(&c, 4e9);
    c.backbone = R;
    hubs_result one, again, two_pass;
    run(&c, &one);
    run(&c, &again);
    c.backbone_two_pass = 1;
    run(&c, &two_pass);
    double want = 0, got = 0;
    for (uint32_t i = 0; i < n; i++) {
        const hubs_path *p = &R->path[v[i].origin][one.jobs[i].hub];
        want += (v[i].dataset_tb + v[i].result_tb) * 8e12 * p->n;
    }
    for (unsigned d = 0; d < 2 * R->bb.n_links; d++)
        got += one.link_bits[d];
    CHECK_REL(got, want, 1e-9);
    CHECK(memcmp(again.jobs, one.jobs, n * sizeof *one.jobs) == 0);
    CHECK(memcmp(again.link_busy_s, one.link_busy_s, sizeof one.link_busy_s) == 0);
    CHECK(again.total.digest == one.total.digest);
    CHECK(one.backbone_rounds >= 2 && one.backbone_rounds <= n + 1);
    CHECK(one.share_in_s + one.share_out_s > two_pass.share_in_s + two_pass.share_out_s);
    for (unsigned d = 0; d < 2 * R->bb.n_links; d++) { /* never above the bandwidth */
        double bw = R->bb.link[d / 2].bandwidth_bps;
        CHECK(one.link_bits[d] <= bw * one.link_busy_s[d] * (1 + 1e-9));
        CHECK(one.link_peak_bps[d] <= bw * (1 + 1e-12));
    }
    CHECK_REL(one.link_peak_bps[4], 4e9, 1e-12); /* X -> Y was full */
    hubs_result_free(&one);
    hubs_result_free(&again);
    hubs_result_free(&two_pass);
    free(R);
    free(v);
}

static void test_no_route(void)
{
    hubs_job_spec *v = demand(4);
    hubs_config c = two(v, 4, 100e9);
    hubs_routes *R = private_links(&c);
    R->has[1][0] = 0; /* south cannot reach h0 */
    c.backbone = R;
    sim_error err;
    sim_error_clear(&err);
    CHECK(hubs_config_check(&c, &err) == SIM_ERR_INPUT);
    CHECK(strstr(err.msg, "no route from south to h0") != NULL);
    free(R);
    free(v);
}

int main(void)
{
    test_route();
    test_closed_forms();
    test_private_links();
    test_link_cost();
    test_one_pass();
    test_one_pass_many();
    test_no_route();
    return check_report();
}
