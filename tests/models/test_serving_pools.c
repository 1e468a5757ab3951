/* test_serving_pools.c - prefix caching, disaggregated prefill/decode and
 * the time series of the serving tier (models/serving.h):
 *   - a prefix share of 0 gives the same results, bit for bit, as no
 *     prefixes at all (the prefix draws have their own stream);
 *   - one prefix, one request at a time: every request after the first
 *     hits (exact count), a hit's TTFT is the prefill of its suffix after
 *     the cached whole blocks (closed form), the others' the whole prompt's;
 *   - LRU under capacity: more KV never lowers the hit rate on a fixed
 *     sequence (one request at a time: LRU is a stack algorithm); a small
 *     cache under pressure (evictions and preemptions) serves everyone;
 *   - one request on disaggregated pools: prefill + transfer (latency +
 *     bytes / rate, inside a node and between nodes) + its decodes;
 *   - a loaded disaggregated stream: conservation, Little's law,
 *     determinism; a missing inter-node link is refused;
 *   - the series and request records: counts sum to the totals, the levels
 *     integrate to Little's L, and asking for them changes no result.
 * The device and model are test_serving.c's synthetic ones.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "precision.h"
#include "serving.h"
#include "serving_checks.h"

static serve_config base(void) { return serve_test_base("least-loaded"); }


/* a loaded stream: Poisson, lognormal lengths, two replicas */
static serve_config stream(void)
{
    serve_config c = base();
    c.replicas = 2;
    c.arrival = SERVE_POISSON;
    c.rate_per_s = 40;
    c.duration_s = 30;
    c.max_requests = 0;
    c.prompt = (serve_length){SERVE_LEN_LOGNORMAL, 600, 0.8, 4000};
    c.output = (serve_length){SERVE_LEN_LOGNORMAL, 120, 0.6, 1000};
    return c;
}

static int same_result(const serve_result *a, const serve_result *b)
{
    const serve_latency *la[] = {&a->ttft, &a->tpot, &a->e2e, &a->queue};
    const serve_latency *lb[] = {&b->ttft, &b->tpot, &b->e2e, &b->queue};
    for (int i = 0; i < 4; i++)
        if (memcmp(la[i], lb[i], sizeof *la[i]))
            return 0;
    return a->arrived == b->arrived && a->finished == b->finished &&
           a->dropped == b->dropped && a->preemptions == b->preemptions &&
           a->iterations == b->iterations && a->end_s == b->end_s &&
           a->little_l == b->little_l && a->kv_util_mean == b->kv_util_mean &&
           a->kv_util_max == b->kv_util_max && a->busy_fraction == b->busy_fraction &&
           a->output_tokens == b->output_tokens && a->prompt_tokens == b->prompt_tokens;
}

static void test_share_zero(void)
{
    serve_config c = stream();
    serve_result plain, zero;
    sim_error err;
    CHECK_INT_EQ(serve_simulate(&c, &plain, &err), 0);
    c.prefix_prompts = 8;
    c.prefix_tokens = 512;
    c.prefix_share = 0;
    CHECK_INT_EQ(serve_simulate(&c, &zero, &err), 0);
    CHECK(same_result(&plain, &zero));
    CHECK_INT_EQ(zero.prefix_requests, 0);
    CHECK_INT_EQ(zero.prefix_hits, 0);
    CHECK(plain.finished > 1000);
}

static void test_one_prefix(void)
{
    serve_config c = base();
    c.max_requests = 10;
    c.prefix_prompts = 1;
    c.prefix_tokens = 250; /* 15 whole blocks of 16 = 240 tokens cached */
    c.prefix_share = 1;
    serve_result r;
    sim_error err;
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    CHECK_INT_EQ(r.finished, 10);
    CHECK_INT_EQ(r.prefix_requests, 10);
    CHECK_INT_EQ(r.prefix_hits, 9);
    CHECK_INT_EQ(r.ttft_hit_count, 9);
    CHECK_INT_EQ(r.ttft_miss_count, 1);
    CHECK_NEAR(r.prefill_tokens_saved, 9 * 240.0, 0);
    CHECK_INT_EQ(r.prompt_tokens, 10 * (512 + 250));
    /* a hit prefills the 522 tokens after the cached 240; the first all 762 */
    CHECK_REL(r.ttft_hit_mean_s, prefill_s(&c, 762 - 240, 240), 1e-12);
    CHECK_REL(r.ttft_miss_mean_s, prefill_s(&c, 762, 0), 1e-12);
    CHECK(r.ttft_hit_mean_s < r.ttft_miss_mean_s);
    printf("one prefix: TTFT hit %.6g ms, miss %.6g ms\n", r.ttft_hit_mean_s * 1e3,
           r.ttft_miss_mean_s * 1e3);
    /* the cached prefix counts in the KV use after its request is gone */
    CHECK(r.kv_util_mean > 0);
    /* a prefix shorter than a block is never cached */
    c.prefix_tokens = 15;
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    CHECK_INT_EQ(r.prefix_hits, 0);
}

static void test_monotone(void)
{
    serve_config c = base();
    c.max_requests = 400;
    c.prefix_prompts = 32;
    c.prefix_tokens = 1024; /* 64 blocks each */
    c.prefix_share = 1;
    c.prefix_zipf = 1.0;
    c.prompt.a = 256;
    c.output.a = 4;
    double w, per_token, blocks, last = -1;
    CHECK_INT_EQ(serve_memory(&c, &w, &per_token, &blocks, NULL), 0);
    /* caches of 1 to 40 prefixes beside the running request's 81 blocks */
    const double held[] = {1, 2, 4, 7, 12, 20, 40};
    for (size_t i = 0; i < sizeof held / sizeof held[0]; i++) {
        double want = 81 + 64 * held[i];
        c.reserved_bytes = c.gpu_bytes - w - (want + 0.5) * 16 * per_token / c.kv_fraction;
        CHECK_INT_EQ(serve_memory(&c, &w, &per_token, &blocks, NULL), 0);
        CHECK_INT_EQ((long long)blocks, (long long)want);
        serve_result r;
        sim_error err;
        CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
        printf("monotone: %4.0f blocks, hit rate %.4f\n", blocks, r.prefix_hit_rate);
        CHECK_INT_EQ(r.finished, 400);
        CHECK_INT_EQ(r.preemptions, 0);
        CHECK(r.prefix_hit_rate >= last);
        last = r.prefix_hit_rate;
    }
    CHECK(last > 0.9); /* 40 cached of 32 prefixes: only the first of each misses */
}

/* a small cache under pressure: prefixes are evicted and requests
 * preempted; every request is still served and nothing is over-allocated */
static void test_pressure(void)
{
    serve_config c = base();
    double w, per_token, blocks;
    CHECK_INT_EQ(serve_memory(&c, &w, &per_token, &blocks, NULL), 0);
    c.reserved_bytes = c.gpu_bytes - w - 300.5 * 16 * per_token / c.kv_fraction;
    c.clients = 16;
    c.max_requests = 200;
    c.prompt.a = 200;
    c.output.a = 300;
    c.prefix_prompts = 8;
    c.prefix_tokens = 320; /* 20 blocks each */
    c.prefix_share = 1;
    serve_result r;
    sim_error err;
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    printf("pressure: %llu preemptions, %llu of %llu hits, KV peak %.4f\n",
           (unsigned long long)r.preemptions, (unsigned long long)r.prefix_hits,
           (unsigned long long)r.prefix_requests, r.kv_util_max);
    CHECK_INT_EQ(r.finished, 200);
    CHECK_INT_EQ(r.dropped, 0);
    CHECK(r.preemptions > 0);
    CHECK(r.prefix_hits > 0);
    CHECK(r.kv_util_max <= 1);
    CHECK_INT_EQ(r.output_tokens, 200 * 300);
    CHECK_REL(r.little_l, r.little_lambda * r.little_w, 1e-9);
}

static serve_config pools(void)
{
    serve_config c = base();
    c.prefill_replicas = 1;
    c.prefill_tp = 1;
    c.node_gpus = 8;
    c.kv_intra_bytes_per_s = 369e9; /* synthetic: the test checks the arithmetic */
    c.kv_intra_latency_s = 3.4e-6;
    c.kv_inter_bytes_per_s = 47e9;
    c.kv_inter_latency_s = 14e-6;
    return c;
}

static void test_disagg_single(void)
{
    serve_config c = pools();
    serve_result r;
    sim_error err;
    double w, per_token, blocks;
    CHECK_INT_EQ(serve_memory(&c, &w, &per_token, &blocks, NULL), 0);
    for (int inter = 0; inter < 2; inter++) {
        c.node_gpus = inter ? 1 : 8; /* one GPU a node: the pools sit in two nodes */
        CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
        double bytes = 512 * per_token;
        double xfer = inter ? 14e-6 + bytes / 47e9 : 3.4e-6 + bytes / 369e9;
        double ttft = prefill_s(&c, 512, 0) + xfer, e2e = ttft;
        for (double j = 1; j < 8; j++)
            e2e += decode_s(&c, 512 + j);
        CHECK_INT_EQ(r.finished, 1);
        CHECK_INT_EQ(r.transfers, 1);
        CHECK_REL(r.transfer_bytes, bytes, 1e-15);
        CHECK_REL(r.transfer_mean_s, xfer, 1e-12);
        CHECK_REL(r.ttft.max_s, ttft, 1e-12);
        CHECK_REL(r.e2e.max_s, e2e, 1e-12);
        CHECK_INT_EQ(r.iterations, 8); /* one prefill, seven decodes */
    }
    /* a one-token answer ends on its prefill replica: nothing to send */
    c.output.a = 1;
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    CHECK_INT_EQ(r.transfers, 0);
    CHECK_REL(r.ttft.max_s, prefill_s(&c, 512, 0), 1e-12);
    /* pools in two nodes without an inter-node link: refused */
    c.kv_inter_bytes_per_s = 0;
    sim_error_clear(&err);
    CHECK(serve_config_check(&c, &err) != 0);
    CHECK(strstr(err.msg, "between nodes") != NULL);
}

static void test_disagg_stream(void)
{
    serve_config c = stream();
    c.prefill_replicas = 1;
    c.prefill_tp = 1;
    c.node_gpus = 2;
    c.kv_intra_bytes_per_s = 369e9;
    c.kv_intra_latency_s = 3.4e-6;
    c.kv_inter_bytes_per_s = 47e9;
    c.kv_inter_latency_s = 14e-6;
    c.prefix_prompts = 4;
    c.prefix_tokens = 300;
    c.prefix_share = 0.5;
    serve_result r, again;
    sim_error err;
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    printf("disaggregated: %llu finished, %llu transfers, mean %.4g ms, P99 %.4g ms, prefill "
           "busy %.3f, decode busy %.3f, hit rate %.3f\n", (unsigned long long)r.finished,
           (unsigned long long)r.transfers, r.transfer_mean_s * 1e3, r.transfer_p99_s * 1e3,
           r.prefill_busy_fraction, r.decode_busy_fraction, r.prefix_hit_rate);
    CHECK_INT_EQ(r.arrived, r.finished + r.dropped);
    CHECK_INT_EQ(r.in_flight, 0);
    CHECK(r.transfers <= r.finished && r.transfers > r.finished * 9 / 10);
    CHECK(r.transfer_p99_s >= r.transfer_mean_s && r.transfer_max_s >= r.transfer_p99_s);
    CHECK(r.prefill_busy_fraction > 0 && r.decode_busy_fraction > 0);
    CHECK(r.prefix_hits > 0);
    CHECK_REL(r.little_l, r.little_lambda * r.little_w, 1e-9);
    CHECK_INT_EQ(serve_simulate(&c, &again, &err), 0);
    CHECK(same_result(&r, &again));
    CHECK(r.transfer_mean_s == again.transfer_mean_s);
}

typedef struct seen {
    uint64_t n, dropped, hits;
    double first_token_sum;
} seen;

static int on_request(void *ctx, const serve_request_info *info)
{
    seen *s = ctx;
    s->n++;
    s->dropped += info->dropped;
    s->hits += info->prefix_hit;
    if (!info->dropped)
        s->first_token_sum += info->first_token_s - info->arrival_s;
    return 0;
}

static void test_series(void)
{
    for (int dis = 0; dis < 2; dis++) {
        serve_config c = stream();
        c.prefix_prompts = 4;
        c.prefix_tokens = 300;
        c.prefix_share = 0.5;
        if (dis) {
            c.prefill_replicas = 1;
            c.prefill_tp = 1;
            c.node_gpus = 1;
            c.kv_inter_bytes_per_s = 47e9;
            c.kv_inter_latency_s = 14e-6;
        }
        serve_result plain, r;
        sim_error err;
        CHECK_INT_EQ(serve_simulate(&c, &plain, &err), 0);
        seen s = {0};
        c.series_bin_s = 0.5;
        c.on_request = on_request;
        c.request_ctx = &s;
        CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
        CHECK(same_result(&plain, &r));
        CHECK_INT_EQ(s.n, r.arrived);
        CHECK_INT_EQ(s.dropped, r.dropped);
        CHECK_INT_EQ(s.hits, r.prefix_hits);
        CHECK_REL(s.first_token_sum / r.finished, r.ttft.mean_s, 1e-9);
        uint64_t arr = 0, fin = 0, drop = 0, pre = 0;
        double area = 0;
        for (uint64_t k = 0; k < r.n_series; k++) {
            const serve_bin *b = &r.series[k];
            double w = r.end_s - b->t_s < 0.5 ? r.end_s - b->t_s : 0.5;
            arr += b->arrivals;
            fin += b->finished;
            drop += b->dropped;
            pre += b->preemptions;
            area += (b->running + b->queued + b->transferring) * w;
            CHECK(b->kv_util >= 0 && b->kv_util <= 1 + 1e-12);
        }
        CHECK_INT_EQ(arr, r.arrived);
        CHECK_INT_EQ(fin, r.finished);
        CHECK_INT_EQ(drop, r.dropped);
        CHECK_INT_EQ(pre, r.preemptions);
        CHECK_INT_EQ(r.n_series, (uint64_t)floor(r.end_s / 0.5) + 1);
        CHECK_REL(area, r.little_l * r.end_s, 1e-9);
        serve_result_free(&r);
    }
}

int main(void)
{
    test_share_zero();
    test_one_prefix();
    test_monotone();
    test_pressure();
    test_disagg_single();
    test_disagg_stream();
    test_series();
    return check_report();
}
