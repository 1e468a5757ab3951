/* test_hubs_moves.c - moving running jobs between hubs (models/hubs_moves.c,
 * hubs.h max_moves): a closed form across hubs of different speeds (the
 * work left at the checkpoint runs at the new hub's time scale, after the
 * restart); a move that cannot pay for its restart is not made, and then
 * the run is the run without moves bit for bit, as under a strict policy;
 * conservation and the bound of moves per job on a mixed demand over three
 * hubs; determinism.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hubs.h"

static cluster_config tmpl(void)
{
    cluster_config c;
    memset(&c, 0, sizeof c);
    c.gpus = c.leaf_gpus = c.su_gpus = 64;
    c.node_gpus = 8;
    c.sched = cluster_sched_find("fifo");
    c.placer = cluster_placer_find("first-fit");
    c.seed = 1;
    return c;
}

/* n hubs of 64 GPUs, hub h at price 0.5 - 0.1 h (hub 1 cheaper than hub 0) */
static hubs_config hubs(unsigned n, const hubs_job_spec *jobs, uint32_t n_jobs)
{
    hubs_config c;
    memset(&c, 0, sizeof c);
    c.n_hubs = n;
    c.n_origins = 1;
    snprintf(c.origin[0], 32, "east");
    for (unsigned h = 0; h < n; h++) {
        hubs_hub *x = &c.hubs[h];
        snprintf(x->name, sizeof x->name, "h%u", h);
        x->gpus = 64;
        x->rtt_s[0] = 0.002 * (h + 1);
        x->price_per_kwh = 0.5 - 0.1 * h;
        x->pue = 1.2;
        x->emission_kg_per_kwh = 0.5;
        x->wue_l_per_kwh = 1;
        for (unsigned b = 0; b < n; b++)
            c.hub_rtt_s[h][b] = h == b ? 0 : 0.01 * (h + b);
    }
    c.policy = hubs_policy_find("cheapest");
    c.max_wait_s = 3600;
    c.bandwidth_bps = 100e9;
    c.cost_per_tb = 10;
    c.jobs = jobs;
    c.n_jobs = n_jobs;
    return c;
}

static void run(const hubs_config *c, hubs_result *r)
{
    sim_error err;
    sim_error_clear(&err);
    cluster_config t = tmpl();
    CHECK(hubs_place(c, r, &err) == 0);
    CHECK(hubs_simulate(c, &t, r, NULL, &err) == 0);
}

/* job 0 holds the cheap hub 1 (time scale 2: 7,200 s); job 1 (36,000 s,
 * deferrable) finds its wait beyond max-wait, starts at hub 0 at 1 s and
 * moves when hub 1 frees at 7,200 s: it arrives 0.01 s later (the hubs'
 * RTT, no data), restarts for 600 s and runs the 28,801 / 36,000 of its work
 * left at twice the time */
static void test_closed_form(void)
{
    hubs_job_spec v[2] = {{0, 64, 3600, 0, 0, HUBS_TRAINING, 0, 0, 0, 0},
                          {1, 64, 36000, 0, 0, HUBS_TRAINING, 0, 0, 0, 3600}};
    hubs_config c = hubs(2, v, 2);
    c.hubs[1].time_scale = 2;
    c.max_moves = 1;
    c.restart_s = 600;
    hubs_result r;
    run(&c, &r);
    CHECK(r.jobs[0].hub == 1 && r.jobs[1].hub == 0);
    CHECK(r.n_moves == 1);
    if (r.n_moves == 1) {
        const hubs_move *m = &r.moves[0];
        double left = 28801.0 / 36000, arrive = 7200 + 0.01;
        CHECK(m->job == 1 && m->from == 0 && m->to == 1 && m->prev == HUBS_NONE);
        CHECK(m->ckpt_s == 7200);
        CHECK_NEAR(m->arrive_s, arrive, 1e-9);
        CHECK_NEAR(m->start_s, arrive, 1e-9);
        CHECK_NEAR(m->frac, 1 - left, 1e-12);
        CHECK_NEAR(m->seg_s, 600 + left * 72000, 1e-6);
        CHECK_NEAR(r.jobs[1].end_s, arrive + 600 + left * 72000, 1e-6);
        CHECK_NEAR(r.jobs[1].seg_s, 7199, 1e-9);
        CHECK_NEAR(r.total.gpu_s, 64 * (7200 + 7199 + 600 + left * 72000), 1e-3);
        CHECK_NEAR(r.hub[1].gpu_s, 64 * (7200 + 600 + left * 72000), 1e-3);
        CHECK_NEAR(r.hub[0].gpu_s, 64 * 7199.0, 1e-6);
        CHECK(r.hub[1].moves_in == 1 && r.hub[0].moves_in == 0);
        CHECK_NEAR(r.total.restart_gpu_s, 64 * 600.0, 1e-9);
        CHECK_NEAR(r.total.move_s, 0.01, 1e-9);
        CHECK(r.total.jobs == 2 && r.hub[0].jobs == 1); /* counted where placed */
    }
    hubs_result_free(&r);
    /* a restart the key cannot pay for (0.36 x (0.8 + T / 72,000) against
     * 0.6 x 0.8: T above 28,800 s): no move, the run without moves exactly */
    c.restart_s = 30000;
    hubs_result none, off;
    run(&c, &none);
    CHECK(none.n_moves == 0);
    hubs_config c0 = c;
    c0.max_moves = 0;
    run(&c0, &off);
    CHECK(none.total.digest == off.total.digest && none.total.gpu_s == off.total.gpu_s);
    CHECK(none.jobs[1].end_s == off.jobs[1].end_s);
    hubs_result_free(&none);
    /* a strict policy never moves */
    c.restart_s = 600;
    c.policy = hubs_policy_find("nearest");
    c0.policy = c.policy;
    hubs_result strict, strict0;
    run(&c, &strict);
    run(&c0, &strict0);
    CHECK(strict.n_moves == 0 && strict.total.digest == strict0.total.digest);
    hubs_result_free(&strict);
    hubs_result_free(&strict0);
    hubs_result_free(&off);
}

/* 300 deferrable training jobs of 8 to 64 GPUs every 10 min on three hubs:
 * jobs, work and bytes conserved, busy = work + restarts, the hubs' sums the
 * totals, at most max_moves a job, checkpoints in time order; twice the same */
static void test_conservation(void)
{
    uint32_t n = 300;
    hubs_job_spec *v = calloc(n, sizeof *v);
    for (uint32_t i = 0; i < n; i++)
        v[i] = (hubs_job_spec){600.0 * i, 8u << (i % 4), 3600 + 1800.0 * (i % 9), 0, 0,
                               HUBS_TRAINING, 0.1 * (i % 3), 0.05, 0, 7200};
    hubs_config c = hubs(3, v, n);
    c.max_wait_s = 0; /* a hub with any backlog is passed over: more jobs wait elsewhere */
    hubs_config c0 = c;
    c.max_moves = 2;
    c.restart_s = 300;
    hubs_result r, r2, off;
    run(&c, &r);
    run(&c, &r2);
    run(&c0, &off);
    CHECK(r.n_moves >= 5); /* the test needs several (10 as built) */
    CHECK(r.total.jobs == n && off.total.jobs == n);
    CHECK_NEAR(r.total.ref_gpu_s, off.total.ref_gpu_s, 1e-6);
    CHECK_NEAR(r.total.gpu_s, r.total.ref_gpu_s + r.total.restart_gpu_s, 1e-9 * r.total.gpu_s);
    CHECK_NEAR(r.total.tb_in + r.total.tb_out, off.total.tb_in + off.total.tb_out, 1e-9);
    double gpu = 0, tb = 0, moved = 0;
    uint32_t in = 0, per[300] = {0};
    for (unsigned h = 0; h < 3; h++) {
        gpu += r.hub[h].gpu_s;
        tb += r.hub[h].move_tb;
        in += r.hub[h].moves_in;
    }
    for (uint32_t m = 0; m < r.n_moves; m++) {
        moved += r.moves[m].tb;
        per[r.moves[m].job]++;
        CHECK(!m || r.moves[m].ckpt_s >= r.moves[m - 1].ckpt_s);
        CHECK(r.moves[m].to > r.moves[m].from);
        CHECK(r.moves[m].start_s >= r.moves[m].arrive_s);
    }
    for (uint32_t i = 0; i < n; i++)
        CHECK(per[i] <= 2);
    CHECK_NEAR(gpu, r.total.gpu_s, 1e-9 * gpu);
    CHECK(in == r.n_moves && r.total.moves_in == r.n_moves);
    CHECK_NEAR(tb, moved, 1e-9);
    CHECK_NEAR(r.total.data_cost, 10 * (r.total.tb_in + r.total.tb_out + moved), 1e-9);
    CHECK(r.n_moves == r2.n_moves && r.total.digest == r2.total.digest &&
          r.total.gpu_s == r2.total.gpu_s);
    hubs_result_free(&r);
    hubs_result_free(&r2);
    hubs_result_free(&off);
    free(v);
}

int main(void)
{
    test_closed_form();
    test_conservation();
    return check_report();
}
