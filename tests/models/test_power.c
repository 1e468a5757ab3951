/* test_power.c - the cluster power model (models/power.h).
 *
 *  - calibration: the default 8 x H100 node, computing, against the two
 *    published whole-node figures (within 10 % of each) and the MLPerf node
 *    averages (between the node all waiting and all computing), each cited;
 *  - monotonicity: more compute, more power; idle <= communicating <=
 *    computing for a GPU, a node and the cluster's states;
 *  - network = switches x W + transceivers x W, exactly;
 *  - the swing = GPUs x TDP x (computing - communicating fraction), and
 *    equals the two levels' difference;
 *  - energy of a timeline = sum of power x duration (1e-12), additive when
 *    intervals are split, and its per-state parts add up;
 *  - bad configs, clusters, fractions and intervals rejected, naming the field.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "campaign.h"
#include "check.h"
#include "power.h"
#include "step.h"

/* DGX H100 rated maximum system power, 10.2 kW (hardware.md 4, S; quoted
 * by Latif et al.). */
#define DGX_H100_RATED_W 10200.0

static pwr_config defaults(void)
{
    pwr_config c;
    pwr_config_default(&c);
    return c;
}

static pwr_cluster cluster_of(uint64_t nodes, uint64_t leaf, uint64_t spine, uint64_t core,
                              uint64_t xcvr)
{
    pwr_cluster k;
    memset(&k, 0, sizeof k);
    k.n_nodes = nodes;
    k.n_switches[0] = leaf;
    k.n_switches[1] = spine;
    k.n_switches[2] = core;
    k.n_transceivers = xcvr;
    return k;
}

static void test_defaults_valid(void)
{
    pwr_config c = defaults();
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(pwr_config_check(&c, &err), 0);
    CHECK_INT_EQ(c.gpus_per_node, 8);
    CHECK_NEAR(c.gpu_tdp_w, 700.0, 0.0); /* H100 SXM, hardware.md 1.2 (S) */
    CHECK_NEAR(c.transceiver_w, 17.0, 0.0); /* MMS4X00-NS, hardware.md 3.4 (V) */
}

static void test_calibration(void)
{
    pwr_config c = defaults();
    double full_w = pwr_node_w(&c, 1.0);
    /* Latif et al., "Empirical Measurements of AI Training Power Demand on a
     * GPU-Accelerated Node", arXiv 2412.08602 (abstract, V): 8 x H100 HGX
     * training, maximum observed about 8.4 kW, 18 % below the rated 10.2 kW. */
    CHECK_REL(full_w, 8400.0, 0.10);
    /* Newkirk et al., arXiv 2506.14551 (abstract, V): "computationally
     * intensive workloads operate at only 76% of the 10.2 kW TDP rating". */
    CHECK_REL(full_w, 0.76 * DGX_H100_RATED_W, 0.10);
    /* and below the nameplate, which is what both papers stress */
    CHECK(full_w < DGX_H100_RATED_W);
    /* MLPerf v4.0 Llama 2 70B LoRA, one vendor's page (calibration.md 6, S):
     * 6.741 kW DC average per node, and 5.847 kW per node (network apart).
     * An average over a run lies between the node all waiting and all
     * computing. */
    double wait_w = pwr_node_w(&c, 0.0);
    CHECK(wait_w <= 5847.0 && 5847.0 <= full_w);
    CHECK(wait_w <= 6741.0 && 6741.0 <= full_w);
    /* a stopped node draws less than one waiting inside an iteration */
    CHECK(pwr_node_state_w(&c, PWR_STATE_IDLE, 0) < wait_w);
}

static void test_node_equation(void)
{
    pwr_config c = defaults();
    c.gpu_tdp_w = 1000;
    c.gpu_compute_tdp_frac = 0.8;
    c.gpu_comm_tdp_frac = 0.3;
    c.gpu_idle_tdp_frac = 0.1;
    c.gpus_per_node = 4;
    c.node_busy_w = 2000;
    c.node_idle_w = 700;
    /* f = 0.25: GPU 1000 (0.25 0.8 + 0.75 0.3) = 425 W */
    CHECK_REL(pwr_gpu_w(&c, 0.25), 425.0, 1e-15);
    CHECK_REL(pwr_node_w(&c, 0.25), 4 * 425.0 + 2000.0, 1e-15);
    CHECK_REL(pwr_node_state_w(&c, PWR_STATE_COMPUTE, 0.25), 4 * 425.0 + 2000.0, 1e-15);
    CHECK_REL(pwr_node_state_w(&c, PWR_STATE_CHECKPOINT, 0.25), 4 * 100.0 + 2000.0, 1e-15);
    CHECK_REL(pwr_node_state_w(&c, PWR_STATE_RESTART, 0.9), 4 * 100.0 + 2000.0, 1e-15);
    CHECK_REL(pwr_node_state_w(&c, PWR_STATE_IDLE, 0.25), 4 * 100.0 + 700.0, 1e-15);
    CHECK(isnan(pwr_node_state_w(&c, PWR_STATE_COUNT, 0.5)));
    CHECK(isnan(pwr_node_state_w(&c, -1, 0.5)));
    CHECK(isnan(pwr_gpu_w(&c, 1.5)));
    CHECK(isnan(pwr_gpu_w(&c, -0.1)));
    CHECK(isnan(pwr_node_w(&c, NAN)));
    /* a busy GPU's rise: 425 - 100 W, plus (2000 - 700) / 4 of its node's
     * host; the node's compute state less its idle state, over its GPUs */
    CHECK_REL(pwr_gpu_busy_rise_w(&c, 0.25), 325.0 + 325.0, 1e-15);
    CHECK_REL(pwr_gpu_busy_rise_w(&c, 0.25) * 4,
              pwr_node_state_w(&c, PWR_STATE_COMPUTE, 0.25) -
                  pwr_node_state_w(&c, PWR_STATE_IDLE, 0.25), 1e-15);
    CHECK(isnan(pwr_gpu_busy_rise_w(&c, 1.5)));
}

static void test_monotonic(void)
{
    pwr_config c = defaults();
    double prev = -1;
    int rising = 1;
    for (int i = 0; i <= 100; i++) {
        double w = pwr_node_w(&c, i / 100.0);
        if (!(w > prev))
            rising = 0;
        prev = w;
    }
    CHECK(rising);
    double idle_w = c.gpu_tdp_w * c.gpu_idle_tdp_frac;
    CHECK(idle_w <= pwr_gpu_w(&c, 0.0));
    CHECK(pwr_gpu_w(&c, 0.0) <= pwr_gpu_w(&c, 1.0));

    pwr_cluster k = cluster_of(16, 4, 2, 0, 96);
    pwr_levels lv;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(pwr_cluster_levels(&c, &k, 0.7, &lv, &err), 0);
    CHECK(lv.state_w[PWR_STATE_IDLE] <= lv.state_w[PWR_STATE_CHECKPOINT]);
    CHECK(lv.state_w[PWR_STATE_CHECKPOINT] <= lv.state_w[PWR_STATE_COMPUTE]);
    CHECK_NEAR(lv.state_w[PWR_STATE_RESTART], lv.state_w[PWR_STATE_CHECKPOINT], 0.0);
    /* the parts add up in every state */
    for (int s = 0; s < PWR_STATE_COUNT; s++)
        CHECK_REL(lv.state_w[s], lv.gpu_w[s] + lv.host_w[s] + lv.network_w + lv.storage_w,
                  1e-15);
    /* the compute state is N nodes at the node's iteration average */
    CHECK_REL(lv.gpu_w[PWR_STATE_COMPUTE] + lv.host_w[PWR_STATE_COMPUTE],
              16 * pwr_node_w(&c, 0.7), 1e-15);
    /* more compute, more cluster power */
    pwr_levels lv2;
    CHECK_INT_EQ(pwr_cluster_levels(&c, &k, 0.8, &lv2, &err), 0);
    CHECK(lv2.state_w[PWR_STATE_COMPUTE] > lv.state_w[PWR_STATE_COMPUTE]);
    CHECK_NEAR(lv2.state_w[PWR_STATE_IDLE], lv.state_w[PWR_STATE_IDLE], 0.0);
}

static void test_network(void)
{
    pwr_config c = defaults();
    c.switch_w[0] = 640;
    c.switch_w[1] = 810;
    c.switch_w[2] = 1300;
    c.transceiver_w = 17;
    pwr_cluster k = cluster_of(256, 64, 32, 8, 6144);
    double expect = 64 * 640.0 + 32 * 810.0 + 8 * 1300.0 + 6144 * 17.0;
    CHECK(pwr_network_w(&c, &k) == expect);
    /* the defaults: every tier at one figure */
    pwr_config d = defaults();
    pwr_cluster k2 = cluster_of(2, 3, 5, 7, 11);
    CHECK(pwr_network_w(&d, &k2) ==
          3 * d.switch_w[0] + 5 * d.switch_w[1] + 7 * d.switch_w[2] + 11 * d.transceiver_w);
    /* no fabric, no power */
    pwr_cluster k3 = cluster_of(1, 0, 0, 0, 0);
    CHECK(pwr_network_w(&d, &k3) == 0.0);
    /* network and storage are in every state */
    d.storage_w = 25000;
    pwr_levels lv;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(pwr_cluster_levels(&d, &k, 0.5, &lv, &err), 0);
    CHECK(lv.network_w == pwr_network_w(&d, &k));
    CHECK(lv.storage_w == 25000.0);
    CHECK_REL(lv.state_w[PWR_STATE_IDLE] - lv.gpu_w[PWR_STATE_IDLE] - lv.host_w[PWR_STATE_IDLE],
              lv.network_w + 25000.0, 1e-12);
}

static void test_swing(void)
{
    pwr_config c = defaults();
    pwr_cluster k = cluster_of(2048, 256, 256, 64, 40000); /* 16,384 GPUs */
    pwr_swing sw;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(pwr_cluster_swing(&c, &k, 7.5, &sw, &err), 0);
    double gpus = 2048.0 * 8;
    CHECK_REL(sw.amplitude_w, gpus * 700.0 * (c.gpu_compute_tdp_frac - c.gpu_comm_tdp_frac),
              1e-12);
    CHECK_REL(sw.amplitude_w, sw.high_w - sw.low_w, 1e-9);
    CHECK_NEAR(sw.period_s, 7.5, 0.0);
    /* the two levels are the compute state at f = 1 and f = 0 */
    pwr_levels hi, lo;
    CHECK_INT_EQ(pwr_cluster_levels(&c, &k, 1.0, &hi, &err), 0);
    CHECK_INT_EQ(pwr_cluster_levels(&c, &k, 0.0, &lo, &err), 0);
    CHECK_NEAR(sw.high_w, hi.state_w[PWR_STATE_COMPUTE], 0.0);
    CHECK_NEAR(sw.low_w, lo.state_w[PWR_STATE_COMPUTE], 0.0);
    /* another config: the swing follows the fractions */
    c.gpu_tdp_w = 1000;
    c.gpu_compute_tdp_frac = 0.95;
    c.gpu_comm_tdp_frac = 0.35;
    k = cluster_of(10, 0, 0, 0, 0);
    CHECK_INT_EQ(pwr_cluster_swing(&c, &k, 1.0, &sw, &err), 0);
    CHECK_REL(sw.amplitude_w, 10 * 8 * 1000.0 * 0.60, 1e-12);
    /* no swing when communicating draws what computing does */
    c.gpu_comm_tdp_frac = c.gpu_compute_tdp_frac;
    CHECK_INT_EQ(pwr_cluster_swing(&c, &k, 1.0, &sw, &err), 0);
    CHECK_NEAR(sw.amplitude_w, 0.0, 0.0);
    CHECK_NEAR(sw.high_w, sw.low_w, 0.0);
}

/* Deterministic pseudo-random numbers in [0, 1) (SplitMix64). */
static double uniform(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (z >> 11) * 0x1.0p-53;
}

#define N_INTERVALS 2000

static void test_energy(void)
{
    pwr_config c = defaults();
    c.storage_w = 40000;
    pwr_cluster k = cluster_of(512, 64, 32, 0, 4096);
    pwr_levels lv;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(pwr_cluster_levels(&c, &k, 0.62, &lv, &err), 0);

    static pwr_interval iv[N_INTERVALS], split[3 * N_INTERVALS];
    uint64_t rng = 42;
    size_t n_split = 0;
    long double direct = 0; /* sum of power x duration, interval by interval */
    for (size_t i = 0; i < N_INTERVALS; i++) {
        iv[i].state = (int)(uniform(&rng) * PWR_STATE_COUNT);
        /* seconds to days: a campaign mixes both */
        iv[i].duration_s = pow(10.0, 5.0 * uniform(&rng));
        direct += (long double)lv.state_w[iv[i].state] * iv[i].duration_s;
        /* the same interval in three pieces */
        double a = uniform(&rng), b = uniform(&rng) * (1 - a);
        split[n_split++] = (pwr_interval){iv[i].state, a * iv[i].duration_s};
        split[n_split++] = (pwr_interval){iv[i].state, b * iv[i].duration_s};
        split[n_split++] =
            (pwr_interval){iv[i].state, iv[i].duration_s - a * iv[i].duration_s -
                                            b * iv[i].duration_s};
    }
    pwr_energy e, es;
    CHECK_INT_EQ(pwr_energy_of(&lv, iv, N_INTERVALS, &e, &err), 0);
    CHECK_REL(e.energy_j, (double)direct, 1e-12);
    CHECK_INT_EQ(pwr_energy_of(&lv, split, n_split, &es, &err), 0);
    CHECK_REL(es.energy_j, e.energy_j, 1e-12);
    double parts_j = 0, parts_s = 0, total_s = 0;
    for (size_t i = 0; i < N_INTERVALS; i++)
        total_s += iv[i].duration_s;
    for (int s = 0; s < PWR_STATE_COUNT; s++) {
        parts_j += e.state_j[s];
        parts_s += e.state_s[s];
        CHECK_REL(e.state_j[s], lv.state_w[s] * e.state_s[s], 1e-15);
        CHECK(e.state_s[s] > 0); /* 2000 draws visit every state */
    }
    CHECK_REL(parts_j, e.energy_j, 1e-14);
    CHECK_REL(parts_s, total_s, 1e-12);
    /* concatenating two timelines adds their energies */
    pwr_energy e1, e2;
    CHECK_INT_EQ(pwr_energy_of(&lv, iv, 700, &e1, &err), 0);
    CHECK_INT_EQ(pwr_energy_of(&lv, iv + 700, N_INTERVALS - 700, &e2, &err), 0);
    CHECK_REL(e1.energy_j + e2.energy_j, e.energy_j, 1e-12);
    /* one hour of compute: P x 3600 */
    pwr_interval hour = {PWR_STATE_COMPUTE, 3600};
    CHECK_INT_EQ(pwr_energy_of(&lv, &hour, 1, &e, &err), 0);
    CHECK_REL(e.energy_j, lv.state_w[PWR_STATE_COMPUTE] * 3600, 1e-15);
    /* nothing, no energy */
    CHECK_INT_EQ(pwr_energy_of(&lv, NULL, 0, &e, &err), 0);
    CHECK_NEAR(e.energy_j, 0.0, 0.0);
}

static void test_step_profile(void)
{
    step_stage st[4];
    memset(st, 0, sizeof st);
    const double frac[4] = {0.60, 0.70, 0.80, 0.50};
    for (int s = 0; s < 4; s++) {
        st[s].compute_fraction = frac[s];
        st[s].comm_fraction = 0.1;
    }
    step_profile p;
    memset(&p, 0, sizeof p);
    p.n_stages = 4;
    p.stage = st;
    CHECK_REL(pwr_compute_frac_of_step(&p), (0.60 + 0.70 + 0.80 + 0.50) / 4, 1e-15);
    p.n_stages = 0;
    CHECK(isnan(pwr_compute_frac_of_step(&p)));
    CHECK(isnan(pwr_compute_frac_of_step(NULL)));
}

static void test_campaign_states(void)
{
    CHECK_INT_EQ(pwr_state_of_campaign(CAMPAIGN_STATE_COMPUTE), PWR_STATE_COMPUTE);
    CHECK_INT_EQ(pwr_state_of_campaign(CAMPAIGN_STATE_CHECKPOINT), PWR_STATE_CHECKPOINT);
    CHECK_INT_EQ(pwr_state_of_campaign(CAMPAIGN_STATE_RESTART), PWR_STATE_RESTART);
    CHECK_INT_EQ(pwr_state_of_campaign(CAMPAIGN_STATE_MAINTENANCE), PWR_STATE_IDLE);
    CHECK_INT_EQ(pwr_state_of_campaign(CAMPAIGN_STATE_DONE), -1);
    CHECK_INT_EQ(pwr_state_of_campaign(99), -1);
    CHECK_STR_EQ(pwr_state_name(PWR_STATE_CHECKPOINT), "checkpoint");
    CHECK_STR_EQ(pwr_state_name(PWR_STATE_COUNT), "?");
}

/* A config with one field broken must fail with SIM_ERR_INPUT and a message
 * that names it. */
#define EXPECT_BAD_CONFIG(field, value, words)                  \
    do {                                                        \
        pwr_config c_ = defaults();                             \
        sim_error e_;                                           \
        sim_error_clear(&e_);                                   \
        c_.field = (value);                                     \
        CHECK_INT_EQ(pwr_config_check(&c_, &e_), SIM_ERR_INPUT); \
        CHECK_INT_EQ(e_.code, SIM_ERR_INPUT);                   \
        CHECK_CONTAINS(e_.msg, words);                          \
    } while (0)

static void test_bad_input(void)
{
    EXPECT_BAD_CONFIG(gpu_tdp_w, 0, "TDP");
    EXPECT_BAD_CONFIG(gpu_tdp_w, NAN, "TDP");
    EXPECT_BAD_CONFIG(gpu_compute_tdp_frac, 1.2, "computing fraction");
    EXPECT_BAD_CONFIG(gpu_compute_tdp_frac, 0, "computing fraction");
    EXPECT_BAD_CONFIG(gpu_comm_tdp_frac, -0.1, "communicating fraction");
    EXPECT_BAD_CONFIG(gpu_idle_tdp_frac, NAN, "idle fraction");
    EXPECT_BAD_CONFIG(gpu_comm_tdp_frac, 0.95, "idle (0.15) <= communicating (0.95) <= computing");
    EXPECT_BAD_CONFIG(gpu_idle_tdp_frac, 0.5, "idle (0.5) <= communicating");
    EXPECT_BAD_CONFIG(gpus_per_node, 0, "GPUs per node");
    EXPECT_BAD_CONFIG(node_busy_w, -1, "node busy power");
    EXPECT_BAD_CONFIG(node_idle_w, INFINITY, "node idle power");
    EXPECT_BAD_CONFIG(node_idle_w, 5000, "must be <= node busy power");
    EXPECT_BAD_CONFIG(switch_w[1], -750, "switch power of tier 1");
    EXPECT_BAD_CONFIG(transceiver_w, NAN, "transceiver power");
    EXPECT_BAD_CONFIG(storage_w, -1, "storage power");

    pwr_config c = defaults();
    pwr_levels lv, keep;
    sim_error err;
    memset(&keep, 0x5a, sizeof keep);
    lv = keep;
    sim_error_clear(&err);
    pwr_cluster none = cluster_of(0, 1, 0, 0, 0);
    CHECK_INT_EQ(pwr_cluster_levels(&c, &none, 0.5, &lv, &err), SIM_ERR_INPUT);
    CHECK_CONTAINS(err.msg, "no nodes");
    CHECK(memcmp(&lv, &keep, sizeof lv) == 0); /* untouched on failure */

    pwr_cluster k = cluster_of(4, 1, 0, 0, 8);
    sim_error_clear(&err);
    CHECK_INT_EQ(pwr_cluster_levels(&c, &k, 1.01, &lv, &err), SIM_ERR_INPUT);
    CHECK_CONTAINS(err.msg, "compute fraction 1.01");
    sim_error_clear(&err);
    CHECK_INT_EQ(pwr_cluster_levels(&c, &k, NAN, &lv, &err), SIM_ERR_INPUT);
    CHECK(memcmp(&lv, &keep, sizeof lv) == 0);
    /* a bad config through the cluster call */
    pwr_config bad = c;
    bad.gpu_tdp_w = -700;
    sim_error_clear(&err);
    CHECK_INT_EQ(pwr_cluster_levels(&bad, &k, 0.5, &lv, &err), SIM_ERR_INPUT);
    CHECK_CONTAINS(err.msg, "TDP");

    pwr_swing sw;
    sim_error_clear(&err);
    CHECK_INT_EQ(pwr_cluster_swing(&c, &k, 0.0, &sw, &err), SIM_ERR_INPUT);
    CHECK_CONTAINS(err.msg, "iteration time");

    CHECK_INT_EQ(pwr_cluster_levels(&c, &k, 0.5, &lv, &err), 0);
    pwr_interval iv[3] = {{PWR_STATE_COMPUTE, 10}, {PWR_STATE_IDLE, -1}, {7, 1}};
    pwr_energy e;
    sim_error_clear(&err);
    CHECK_INT_EQ(pwr_energy_of(&lv, iv, 3, &e, &err), SIM_ERR_INPUT);
    CHECK_CONTAINS(err.msg, "interval 1 (idle) has duration -1");
    sim_error_clear(&err);
    iv[1].duration_s = 5;
    CHECK_INT_EQ(pwr_energy_of(&lv, iv, 3, &e, &err), SIM_ERR_INPUT);
    CHECK_CONTAINS(err.msg, "interval 2 has unknown state 7");
    sim_error_clear(&err);
    iv[2].duration_s = NAN;
    iv[2].state = PWR_STATE_RESTART;
    CHECK_INT_EQ(pwr_energy_of(&lv, iv, 3, &e, &err), SIM_ERR_INPUT);
    CHECK_CONTAINS(err.msg, "interval 2 (restart)");
}

int main(void)
{
    test_defaults_valid();
    test_calibration();
    test_node_equation();
    test_monotonic();
    test_network();
    test_swing();
    test_energy();
    test_step_profile();
    test_campaign_states();
    test_bad_input();
    return check_report();
}
