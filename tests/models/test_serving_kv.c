/* test_serving_kv.c - the KV transfers' contention for the replicas' links
 * (serving_kvflow.c, kv_contention SERVE_KV_SHARED) and the sizing of
 * disaggregated pools (serving_size.c):
 *   - one transfer at a time: the shared links give the figures of the
 *     model without contention (queued), bit for bit;
 *   - two equal transfers from two prefill replicas into one decode replica,
 *     starting together: each takes latency + 2 x bytes / rate (the
 *     receiver's link halved); from one prefill replica to two decode
 *     replicas: the same on the sender's link (queued: one after the
 *     other, latency + bytes / rate and twice that);
 *   - transfers between different replicas do not interact (bit for bit);
 *   - the time slowed by sharing (serve_result.transfer_shared_s): 0 for
 *     transfers alone, 2 x bytes / rate for the two sharing a link, latency
 *     + bytes / rate for the second queued behind the first; the most in
 *     flight at once;
 *   - a loaded stream: requests conserved, Little's law, the same result
 *     twice.
 * The device and model are test_serving.c's synthetic ones.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "precision.h"
#include "serving.h"
#include "serving_checks.h"

#define RATE 47e9   /* synthetic: the test checks the arithmetic */
#define LAT 14e-6

/* serving_checks.h's pools at RATE, LAT */
static serve_config pools(unsigned pre, unsigned dec, unsigned clients)
{
    return serve_test_pools(pre, dec, clients, RATE, LAT);
}

static double bytes_512(const serve_config *c) { return serve_test_kv_bytes(c, 512); }

static int same_latencies(const serve_result *a, const serve_result *b)
{
    return !memcmp(&a->ttft, &b->ttft, sizeof a->ttft) &&
           !memcmp(&a->tpot, &b->tpot, sizeof a->tpot) &&
           !memcmp(&a->e2e, &b->e2e, sizeof a->e2e) && a->end_s == b->end_s &&
           a->transfer_mean_s == b->transfer_mean_s && a->transfer_max_s == b->transfer_max_s &&
           a->iterations == b->iterations && a->finished == b->finished;
}

static void test_isolated(void)
{
    serve_result shared, queued;
    sim_error err;
    /* one request; then ten, one client: one transfer at a time */
    for (unsigned n = 1; n <= 10; n += 9) {
        serve_config c = pools(1, 1, 1);
        c.max_requests = n;
        CHECK_INT_EQ(serve_simulate(&c, &shared, &err), 0);
        c.kv_contention = SERVE_KV_QUEUED;
        CHECK_INT_EQ(serve_simulate(&c, &queued, &err), 0);
        CHECK_INT_EQ(shared.transfers, n);
        CHECK(same_latencies(&shared, &queued));
        CHECK_REL(shared.transfer_max_s, LAT + bytes_512(&c) / RATE, 1e-15);
        /* none slowed by another, none on a narrower route, one at a time */
        CHECK(shared.transfer_shared_s == 0 && queued.transfer_shared_s == 0);
        CHECK(shared.transfer_route_s == 0 && queued.transfer_route_s == 0);
        CHECK_INT_EQ(shared.transfers_in_flight_max, 1);
        CHECK_INT_EQ(queued.transfers_in_flight_max, 1);
        CHECK_REL(shared.transfer_p50_s, shared.transfer_max_s, 1e-12); /* equal transfers */
    }
    /* inside a node (the scale-up link), tp 2 prefill into tp 1 decode */
    serve_config c = pools(1, 1, 1);
    c.prefill_tp = 2;
    c.scaleup_bytes_per_s = 369e9; /* the prefill replica's TP all-reduces */
    c.scaleup_step_s = 3.4e-6;
    c.node_gpus = 8;
    c.kv_intra_bytes_per_s = 369e9;
    c.kv_intra_latency_s = 3.4e-6;
    CHECK_INT_EQ(serve_simulate(&c, &shared, &err), 0);
    c.kv_contention = SERVE_KV_QUEUED;
    CHECK_INT_EQ(serve_simulate(&c, &queued, &err), 0);
    CHECK(same_latencies(&shared, &queued));
}

static void test_two_into_one(void)
{
    serve_result one, two, apart;
    sim_error err;
    serve_config c = pools(1, 1, 1);
    double b = bytes_512(&c);
    CHECK_INT_EQ(serve_simulate(&c, &one, &err), 0);
    /* two prefill replicas finish together; one decode replica receives both */
    c = pools(2, 1, 2);
    CHECK_INT_EQ(serve_simulate(&c, &two, &err), 0);
    printf("two into one: alone %.6g ms, together %.6g ms each\n", one.transfer_max_s * 1e3,
           two.transfer_max_s * 1e3);
    CHECK_INT_EQ(two.transfers, 2);
    CHECK_REL(two.transfer_mean_s, LAT + 2 * b / RATE, 1e-12);
    CHECK_REL(two.transfer_max_s, LAT + 2 * b / RATE, 1e-12);
    CHECK_REL(two.transfer_max_s - LAT, 2 * (one.transfer_max_s - LAT), 1e-12);
    /* each slowed by b / RATE by the other: 2 b / RATE in all, two at once */
    CHECK_REL(two.transfer_shared_s, 2 * b / RATE, 1e-12);
    CHECK(two.transfer_route_s == 0);
    CHECK_INT_EQ(two.transfers_in_flight_max, 2);
    CHECK_REL(two.transfer_p50_s, LAT + 2 * b / RATE, 1e-12);
    /* without the decode side's contention both arrive at the single time */
    c.kv_contention = SERVE_KV_QUEUED;
    CHECK_INT_EQ(serve_simulate(&c, &two, &err), 0);
    CHECK(two.transfer_max_s == one.transfer_max_s);
    CHECK(two.transfer_shared_s == 0);
    CHECK_INT_EQ(two.transfers_in_flight_max, 2);
    /* two decode replicas: each transfer alone on its links, bit for bit */
    c = pools(2, 2, 2);
    CHECK_INT_EQ(serve_simulate(&c, &apart, &err), 0);
    CHECK_INT_EQ(apart.transfers, 2);
    CHECK(apart.transfer_max_s == one.transfer_max_s);
    CHECK(apart.transfer_mean_s == one.transfer_mean_s);
    CHECK(apart.transfer_shared_s == 0);
    /* one prefill replica sends both (one batch) to two decode replicas:
     * its link is halved; queued: one after the other */
    c = pools(1, 2, 2);
    CHECK_INT_EQ(serve_simulate(&c, &two, &err), 0);
    CHECK_INT_EQ(two.transfers, 2);
    CHECK_REL(two.transfer_mean_s, LAT + 2 * b / RATE, 1e-12);
    CHECK_REL(two.transfer_shared_s, 2 * b / RATE, 1e-12);
    c.kv_contention = SERVE_KV_QUEUED;
    CHECK_INT_EQ(serve_simulate(&c, &two, &err), 0);
    CHECK_REL(two.transfer_max_s, 2 * (LAT + b / RATE), 1e-12);
    CHECK_REL(two.transfer_mean_s, 1.5 * (LAT + b / RATE), 1e-12);
    /* queued: the second waits for the first, latency + b / RATE */
    CHECK_REL(two.transfer_shared_s, LAT + b / RATE, 1e-12);
    CHECK_REL(two.transfer_p50_s, LAT + b / RATE, 1e-12);
}

/* a decode replica of tp 4 receives from tp 1 prefill replicas: each
 * transfer takes one path, the receiver has four; four at once fit */
static void test_wide_receiver(void)
{
    serve_result one, four;
    sim_error err;
    serve_config c = pools(1, 1, 1);
    c.tp = 4;
    c.scaleup_bytes_per_s = 369e9; /* the decode replica's TP all-reduces */
    c.scaleup_step_s = 3.4e-6;
    CHECK_INT_EQ(serve_simulate(&c, &one, &err), 0);
    c.prefill_replicas = c.clients = 4;
    c.max_requests = 4;
    CHECK_INT_EQ(serve_simulate(&c, &four, &err), 0);
    CHECK_INT_EQ(four.transfers, 4);
    CHECK(four.transfer_max_s == one.transfer_max_s);
    c.prefill_replicas = c.clients = 8; /* the receiver's 4 x rate shared, each half its path */
    c.max_requests = 8;
    CHECK_INT_EQ(serve_simulate(&c, &four, &err), 0);
    CHECK_INT_EQ(four.transfers, 8);
    CHECK_REL(four.transfer_max_s, LAT + 2 * bytes_512(&c) / RATE, 1e-12);
}

static void test_stream(void)
{
    serve_config c = pools(2, 2, 0);
    serve_test_kv_stream(&c);
    /* about 0.8 GB a request at 40/s over two 47 GB/s receivers: transfers overlap */
    serve_result r, again, queued;
    sim_error err;
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    CHECK_INT_EQ(serve_simulate(&c, &again, &err), 0);
    c.kv_contention = SERVE_KV_QUEUED;
    CHECK_INT_EQ(serve_simulate(&c, &queued, &err), 0);
    printf("stream: %llu finished, %llu transfers; transfer mean %.4g ms P99 %.4g ms shared, "
           "%.4g ms %.4g ms queued\n", (unsigned long long)r.finished,
           (unsigned long long)r.transfers, r.transfer_mean_s * 1e3, r.transfer_p99_s * 1e3,
           queued.transfer_mean_s * 1e3, queued.transfer_p99_s * 1e3);
    CHECK(r.finished > 700);
    CHECK_INT_EQ(r.arrived, r.finished + r.dropped);
    CHECK_INT_EQ(r.in_flight, 0);
    CHECK_INT_EQ(r.transfers, queued.transfers);
    CHECK_REL(r.transfer_bytes, queued.transfer_bytes, 1e-15);
    CHECK_REL(r.little_l, r.little_lambda * r.little_w, 1e-9);
    CHECK(same_latencies(&r, &again));
    CHECK(!same_latencies(&r, &queued)); /* the transfers did overlap */
}

typedef struct size_log {
    unsigned n, pre[64], dec[64];
    int met[64];
} size_log;

static int log_step(void *ctx, const serve_size_step *st)
{
    size_log *l = ctx;
    if (l->n < 64) {
        l->pre[l->n] = st->prefill_replicas;
        l->dec[l->n] = st->replicas;
        l->met[l->n] = st->met;
    }
    l->n++;
    return 0;
}

/* the pools' sizing: the answer meets the SLO; one replica fewer on either
 * pool does not (both re-simulated); every pair of fewer GPUs was run */
static void test_size_pools(void)
{
    serve_config c = pools(1, 1, 0);
    c.arrival = SERVE_POISSON;
    c.rate_per_s = 30;
    c.duration_s = 20;
    c.max_requests = 0;
    c.prompt = (serve_length){SERVE_LEN_LOGNORMAL, 1500, 0.8, 4000};
    c.output = (serve_length){SERVE_LEN_LOGNORMAL, 60, 0.6, 1000};
    c.slo_ttft_s = 0.5;
    c.slo_tpot_s = 0.03;
    size_log l = {0};
    unsigned pre = 0, dec = 0;
    serve_result at, r;
    sim_error err;
    CHECK_INT_EQ(serve_size_pools(&c, 200, log_step, &l, &pre, &dec, &at, &err), 0);
    printf("size pools: %u + %u after %u runs\n", pre, dec, l.n);
    CHECK(pre + dec >= 3); /* the search has pairs to reject */
    CHECK(l.n <= 64 && l.met[l.n - 1] && l.pre[l.n - 1] == pre && l.dec[l.n - 1] == dec);
    for (unsigned i = 0; i + 1 < l.n && i < 64; i++) {
        CHECK(!l.met[i]);
        CHECK(l.pre[i] + l.dec[i] <= pre + dec); /* tp 1 both: GPUs = replicas */
    }
    /* pairs of fewer GPUs: (p, g - p) for g < pre + dec, every p: all run */
    unsigned want = 0;
    for (unsigned g = 2; g < pre + dec; g++)
        want += g - 1;
    CHECK(l.n >= want + 1);
    c.prefill_replicas = pre;
    c.replicas = dec;
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    CHECK(r.ttft.q_s[2] <= c.slo_ttft_s && r.tpot.q_s[2] <= c.slo_tpot_s);
    CHECK(r.ttft.q_s[2] == at.ttft.q_s[2] && r.tpot.q_s[2] == at.tpot.q_s[2]);
    for (int side = 0; side < 2; side++) {
        serve_config f = c;
        if (side ? f.replicas < 2 : f.prefill_replicas < 2)
            continue;
        if (side)
            f.replicas--;
        else
            f.prefill_replicas--;
        CHECK_INT_EQ(serve_simulate(&f, &r, &err), 0);
        CHECK(!serve_slo_met(&f, &r));
    }
    /* a bound on the runs is a refusal, not a wrong answer */
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_size_pools(&c, 1, NULL, NULL, &pre, &dec, &at, &err), SIM_ERR_INPUT);
}

int main(void)
{
    test_isolated();
    test_two_into_one();
    test_wide_receiver();
    test_stream();
    test_size_pools();
    return check_report();
}
