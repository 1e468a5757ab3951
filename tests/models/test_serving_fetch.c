/* test_serving_fetch.c - remote KV fetch (models/serving_fetch.c):
 *   - closed form: one session of 3 turns (512-token messages, 8-token
 *     answers) on 2 replicas in turn (round-robin), one GPU a node: each
 *     follow-up lands where the other turn left its context, fetches the
 *     blocks its replica lacks (32 blocks of 16 tokens each time) and its
 *     TTFT is latency + bytes / rate + the prefill of the rest over the
 *     fetched context (520 over 512, then 528 over 1,024), to 1e-12; the
 *     counts, tokens and bytes exactly;
 *   - over a slow link recomputing is cheaper: no fetch, both follow-ups
 *     declined, the TTFTs of the run without remote fetch;
 *   - contention: a prefix cached on replica 0 only, two requests on
 *     replicas 1 and 2 at the same instant fetch it together over replica
 *     0's outgoing link: each takes latency + 2 x bytes / rate (max-min:
 *     half the link each), one alone latency + bytes / rate;
 *   - conservation (arrived = finished + dropped, in flight 0), Little's
 *     law and the same bits twice on loaded chat traffic over 2 nodes
 *     (intra- and inter-node fetches) with shared prefixes, and on
 *     disaggregated pools whose prefill replicas fetch prefixes; more hit
 *     tokens than without the fetch;
 *   - refusals: nothing cached to fetch, pools with queued transfers.
 * The device and model are test_serving.c's synthetic ones.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "precision.h"
#include "serving.h"
#include "serving_checks.h"

#define RATE 50e9 /* synthetic: the test checks the arithmetic */
#define LAT 14e-6

static double kv_per_token(const serve_config *c)
{
    double w, per_token;
    serve_memory(c, &w, &per_token, NULL, NULL);
    return per_token;
}

/* remote fetch over one-GPU nodes (every fetch between nodes) */
static void fetch_on(serve_config *c, double rate)
{
    c->kv_remote = SERVE_KV_REMOTE_FETCH;
    c->node_gpus = 1;
    c->kv_inter_bytes_per_s = rate;
    c->kv_inter_latency_s = LAT;
}

/* one session of 3 turns on 2 replicas in turn */
static void one_session(int remote, double rate, serve_result *r, serve_seen *got)
{
    serve_config c = serve_test_base("round-robin");
    c.arrival = SERVE_POISSON;
    c.rate_per_s = 1;
    c.duration_s = 1000;
    c.clients = 0;
    c.max_requests = 1;
    c.replicas = 2;
    c.session_turns_dist = SERVE_TURNS_FIXED;
    c.session_turns = 3;
    c.think_dist = SERVE_THINK_FIXED;
    c.think_s = 2.5;
    c.session_cache = 1;
    if (remote)
        fetch_on(&c, rate);
    memset(got, 0, sizeof *got);
    c.on_request = serve_seen_record;
    c.request_ctx = got;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_simulate(&c, r, &err), 0);
    CHECK_INT_EQ(r->finished, 3);
    CHECK_INT_EQ(got->replica[1], 1);
    CHECK_INT_EQ(got->replica[2], 0);
}

static void test_closed_form(void)
{
    serve_config c = serve_test_base("round-robin");
    double bytes = 32 * 16 * kv_per_token(&c); /* 32 blocks each time */
    double xfer = LAT + bytes / RATE;
    serve_result r;
    serve_seen got;
    one_session(1, RATE, &r, &got);
    double ttft[3] = {prefill_s(&c, 512, 0), xfer + prefill_s(&c, 520, 512),
                      xfer + prefill_s(&c, 528, 1024)};
    for (int k = 0; k < 3; k++) {
        printf("fetched: turn %d on replica %u TTFT %.9g s (closed form %.9g s)\n", k + 1,
               got.replica[k], got.first_s[k] - got.arrival_s[k], ttft[k]);
        CHECK_REL(got.first_s[k] - got.arrival_s[k], ttft[k], 1e-12);
    }
    CHECK(xfer < prefill_s(&c, 512, 0)); /* the fetch is the cheaper */
    CHECK_INT_EQ(r.fetches, 2);
    CHECK_INT_EQ(r.fetches_declined, 0);
    CHECK_INT_EQ((long long)r.fetch_tokens, 1024);
    CHECK_REL(r.fetch_bytes, 2 * bytes, 1e-12);
    CHECK_REL(r.fetch_mean_s, xfer, 1e-12);
    CHECK_REL(r.fetch_max_s, xfer, 1e-12);
    /* turn 3 found 512 tokens of its context on its own replica */
    CHECK_INT_EQ(r.followup_hits, 1);
    CHECK_INT_EQ((long long)r.followup_hit_tokens, 512 + 1024);
    CHECK_INT_EQ((long long)r.prefill_tokens_computed, 512 + 520 + 528);
    CHECK_INT_EQ(r.arrived, r.finished + r.dropped);
    CHECK_REL(r.little_l, r.little_lambda * r.little_w, 1e-9);
    serve_result_free(&r);
    /* a link 200 times slower: recomputing is cheaper, as without the fetch */
    serve_result off;
    serve_seen got_off;
    one_session(0, 0, &off, &got_off);
    one_session(1, RATE / 200, &r, &got);
    CHECK(LAT + bytes / (RATE / 200) > prefill_s(&c, 512, 512));
    CHECK_INT_EQ(r.fetches, 0);
    CHECK_INT_EQ(r.fetches_declined, 2);
    CHECK_REL(got.first_s[1] - got.arrival_s[1], prefill_s(&c, 1032, 0), 1e-12);
    for (int k = 0; k < 3; k++)
        CHECK(got.first_s[k] - got.arrival_s[k] == got_off.first_s[k] - got_off.arrival_s[k]);
    CHECK(r.e2e.mean_s == off.e2e.mean_s && r.end_s == off.end_s);
    CHECK_INT_EQ(off.fetches_declined, 0);
    serve_result_free(&r);
    serve_result_free(&off);
}

/* a prefix of 1,024 tokens on every request; row 0 caches it on replica 0,
 * rows 1 and 2 arrive together on replicas 1 and 2 (or row 1 alone) */
static void test_contention(void)
{
    serve_config c = serve_test_base("round-robin");
    c.replicas = 3;
    c.prefix_prompts = 1;
    c.prefix_tokens = 1024;
    c.prefix_share = 1;
    fetch_on(&c, RATE);
    serve_trace_row rows[] = {{0, 256, 4}, {10, 256, 4}, {10, 256, 4}};
    c.arrival = SERVE_TRACE;
    c.trace = rows;
    c.max_requests = 0;
    double bytes = 1024 * kv_per_token(&c);
    double rest = prefill_s(&c, 256, 1024);
    serve_seen got;
    c.on_request = serve_seen_record;
    c.request_ctx = &got;
    serve_result r;
    sim_error err;
    sim_error_clear(&err);
    for (unsigned n = 2; n <= 3; n++) {
        c.n_trace = n;
        memset(&got, 0, sizeof got);
        CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
        double share = n == 3 ? RATE / 2 : RATE; /* two on replica 0's outgoing link */
        CHECK_INT_EQ(r.fetches, n - 1);
        for (unsigned k = 1; k < n; k++) {
            double ttft = got.first_s[k] - got.arrival_s[k];
            printf("%u fetching at once: request %u on replica %u TTFT %.9g s (closed form "
                   "%.9g s)\n", n - 1, k, got.replica[k], ttft, LAT + bytes / share + rest);
            CHECK_INT_EQ(got.replica[k], k);
            CHECK_REL(ttft, LAT + bytes / share + rest, 1e-9);
        }
        CHECK_REL(r.fetch_max_s, LAT + bytes / share, 1e-9);
        CHECK_INT_EQ(r.prefix_hits, 0); /* none found it on its own replica */
        CHECK_INT_EQ((long long)r.prefill_tokens_saved, 1024 * (n - 1));
        serve_result_free(&r);
    }
}

static void check_conserved(const serve_result *r, const char *what)
{
    printf("%s: %llu requests, %llu fetches (%.0f tokens, mean %.4g ms), %llu declined, "
           "%llu dropped, %llu preemptions, hit tokens %.0f, mean TTFT %.4g ms\n", what,
           (unsigned long long)r->arrived, (unsigned long long)r->fetches, r->fetch_tokens,
           r->fetch_mean_s * 1e3, (unsigned long long)r->fetches_declined,
           (unsigned long long)r->dropped, (unsigned long long)r->preemptions,
           r->followup_hit_tokens, r->ttft.mean_s * 1e3);
    CHECK_INT_EQ(r->arrived, r->finished + r->dropped);
    CHECK_INT_EQ(r->in_flight, 0);
    CHECK_REL(r->little_l, r->little_lambda * r->little_w, 1e-9);
    CHECK(r->kv_util_max <= 1 + 1e-12);
    CHECK(isfinite(r->fetch_mean_s) && r->fetch_max_s >= r->fetch_mean_s);
}

static int same(const serve_result *a, const serve_result *b)
{
    return a->arrived == b->arrived && a->finished == b->finished &&
           a->preemptions == b->preemptions && a->end_s == b->end_s &&
           a->ttft.q_s[2] == b->ttft.q_s[2] && a->e2e.mean_s == b->e2e.mean_s &&
           a->fetches == b->fetches && a->fetch_mean_s == b->fetch_mean_s &&
           a->followup_hit_tokens == b->followup_hit_tokens && a->little_l == b->little_l;
}

static void test_loaded(void)
{
    serve_config c = serve_test_base("least-loaded");
    c.arrival = SERVE_POISSON;
    c.rate_per_s = 3;
    c.duration_s = 60;
    c.clients = 0;
    c.max_requests = 0;
    c.replicas = 4;
    c.prompt = (serve_length){SERVE_LEN_LOGNORMAL, 300, 0.8, 2000};
    c.output = (serve_length){SERVE_LEN_LOGNORMAL, 150, 0.6, 1000};
    c.session_turns_dist = SERVE_TURNS_FIXED;
    c.session_turns = 4;
    c.think_dist = SERVE_THINK_EXPONENTIAL;
    c.think_s = 3;
    c.session_cache = 1;
    c.prefix_prompts = 4;
    c.prefix_tokens = 600;
    c.prefix_share = 0.8;
    serve_result off, r, r2;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_simulate(&c, &off, &err), 0);
    check_conserved(&off, "sessions, no fetch");
    c.kv_remote = SERVE_KV_REMOTE_FETCH;
    c.node_gpus = 2; /* two replicas a node: fetches inside and between nodes */
    c.kv_intra_bytes_per_s = 200e9;
    c.kv_intra_latency_s = 3.4e-6;
    c.kv_inter_bytes_per_s = RATE;
    c.kv_inter_latency_s = LAT;
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    check_conserved(&r, "sessions, fetch");
    CHECK(r.fetches > 50);
    CHECK_INT_EQ(r.sessions, off.sessions); /* the same sessions (their turns follow timing) */
    CHECK(r.followup_hit_tokens > off.followup_hit_tokens);
    CHECK(r.prefill_tokens_computed < off.prefill_tokens_computed);
    CHECK_INT_EQ(serve_simulate(&c, &r2, &err), 0);
    CHECK(same(&r, &r2));
    serve_result_free(&r2);
    /* a tight cache: evictions and preemptions while fetches are in flight */
    double w, per_token;
    serve_memory(&c, &w, &per_token, NULL, NULL);
    c.reserved_bytes = c.gpu_bytes - w - 400.5 * 16 * per_token / c.kv_fraction;
    c.rate_per_s = 5;
    CHECK_INT_EQ(serve_simulate(&c, &r2, &err), 0);
    check_conserved(&r2, "sessions, fetch, 400 blocks");
    CHECK(r2.preemptions > 0);
    CHECK(r2.fetches > 0);
    serve_result_free(&r2);
    serve_result_free(&r);
    serve_result_free(&off);
}

/* disaggregated pools: the prefill replicas fetch prefixes from each other,
 * sharing their outgoing links with the transfers to the decode pool */
static void test_pools(void)
{
    serve_config c = serve_test_base("least-loaded");
    c.arrival = SERVE_POISSON;
    c.rate_per_s = 6;
    c.duration_s = 60;
    c.clients = 0;
    c.max_requests = 0;
    c.prefill_replicas = 3;
    c.prefill_tp = 1;
    c.replicas = 2;
    c.node_gpus = 1;
    c.kv_inter_bytes_per_s = RATE;
    c.kv_inter_latency_s = LAT;
    c.prompt = (serve_length){SERVE_LEN_LOGNORMAL, 300, 0.8, 2000};
    c.output = (serve_length){SERVE_LEN_LOGNORMAL, 100, 0.6, 1000};
    c.prefix_prompts = 16;
    c.prefix_tokens = 1500;
    c.prefix_zipf = 1;
    c.prefix_share = 1;
    serve_result off, r, r2;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_simulate(&c, &off, &err), 0);
    check_conserved(&off, "pools, no fetch");
    c.kv_remote = SERVE_KV_REMOTE_FETCH;
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    check_conserved(&r, "pools, fetch");
    CHECK(r.fetches > 0);
    CHECK(r.prefill_tokens_computed < off.prefill_tokens_computed);
    CHECK(r.transfers > 0 && r.transfers <= r.finished); /* on to the decode pool */
    CHECK_INT_EQ(serve_simulate(&c, &r2, &err), 0);
    CHECK(same(&r, &r2));
    serve_result_free(&off);
    serve_result_free(&r);
    serve_result_free(&r2);
}

static void test_refusals(void)
{
    serve_config c = serve_test_base("least-loaded");
    fetch_on(&c, RATE);
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_config_check(&c, &err), SIM_ERR_INPUT); /* nothing cached */
    CHECK(strstr(err.msg, "something cached") != NULL);
    c.prefix_prompts = 1;
    c.prefix_tokens = 64;
    c.prefix_share = 1;
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_config_check(&c, &err), 0);
    c.replicas = 2;
    c.kv_inter_bytes_per_s = 0; /* two nodes, no link */
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_config_check(&c, &err), SIM_ERR_INPUT);
    CHECK(strstr(err.msg, "between nodes") != NULL);
    c.kv_inter_bytes_per_s = RATE;
    c.prefill_replicas = c.prefill_tp = 1;
    c.kv_contention = SERVE_KV_QUEUED;
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_config_check(&c, &err), SIM_ERR_INPUT);
    CHECK(strstr(err.msg, "shared") != NULL);
}

int main(void)
{
    test_closed_form();
    test_contention();
    test_loaded();
    test_pools();
    test_refusals();
    return check_report();
}
