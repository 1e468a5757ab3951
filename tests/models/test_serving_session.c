/* test_serving_session.c - multi-turn sessions (models/serving_session.c):
 *   - one turn: a configuration with sessions of one turn runs as one
 *     without sessions, the result struct byte for byte;
 *   - closed form: one session of 3 turns of 512 + 8 tokens (new message
 *     512), a fixed think time, one replica: each follow-up arrives the
 *     think time after the previous turn ends, and its TTFT is the prefill
 *     of only its new tokens over the cached context (floor(kv / 16) x 16
 *     tokens, kv = the previous prompt + output - 1) when the context is
 *     cached, the whole prompt's prefill when the cache is off, and the
 *     prefill of the whole prompt on another replica (round-robin over 2);
 *     the counts (sessions, follow-ups, hits, hit and context tokens);
 *   - prefix-affinity routing on 4 replicas at a light load: every
 *     follow-up finds its context; round-robin misses some;
 *   - hit tokens rise with the turns; conservation (arrived = finished +
 *     dropped, in flight 0) and Little's law under load, with shared
 *     prefixes, eviction, recompute or swap preemption and geometric
 *     turns; the same bits twice;
 *   - refusals: closed loop, disaggregated pools, a fractional fixed count.
 * The device and model are test_serving.c's synthetic ones.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "precision.h"
#include "serving.h"
#include "serving_checks.h"


/* open loop: Poisson arrivals at `rate` for `duration` s */
static serve_config open_loop(const char *router, double rate, double duration)
{
    serve_config c = serve_test_base(router);
    c.arrival = SERVE_POISSON;
    c.rate_per_s = rate;
    c.duration_s = duration;
    c.clients = 0;
    c.max_requests = 0;
    return c;
}

static void sessions(serve_config *c, double turns, double think_s)
{
    c->session_turns_dist = SERVE_TURNS_FIXED;
    c->session_turns = turns;
    c->think_dist = SERVE_THINK_FIXED;
    c->think_s = think_s;
    c->session_cache = 1;
}

static void test_one_turn(void)
{
    serve_config c = open_loop("least-loaded", 20, 30);
    c.prompt = (serve_length){SERVE_LEN_LOGNORMAL, 400, 0.8, 4000};
    c.output = (serve_length){SERVE_LEN_LOGNORMAL, 100, 0.6, 1000};
    serve_config one = c;
    sessions(&one, 1, 5);
    serve_result a, b;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_simulate(&c, &a, &err), 0);
    CHECK_INT_EQ(serve_simulate(&one, &b, &err), 0);
    CHECK(a.finished > 100);
    CHECK_INT_EQ(memcmp(&a, &b, sizeof a), 0);
    CHECK_INT_EQ(b.sessions, 0);
    serve_result_free(&a);
    serve_result_free(&b);
}

/* one session of 3 turns; cache on or off, on `replicas` replicas */
static void one_session(int cache, unsigned replicas, const char *router, serve_result *r,
                        serve_seen *got)
{
    serve_config c = open_loop(router, 1, 1000);
    c.replicas = replicas;
    c.max_requests = 1; /* one session */
    sessions(&c, 3, 2.5);
    c.session_cache = cache;
    memset(got, 0, sizeof *got);
    c.on_request = serve_seen_record;
    c.request_ctx = got;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_simulate(&c, r, &err), 0);
    CHECK_INT_EQ(r->arrived, 3);
    CHECK_INT_EQ(r->finished, 3);
    CHECK_INT_EQ(r->sessions, 1);
    CHECK_INT_EQ(r->followups, 2);
    CHECK_INT_EQ(r->followups_admitted, 2);
    CHECK_INT_EQ(got->prompt[0], 512);
    CHECK_INT_EQ(got->prompt[1], 512 + 8 + 512);
    CHECK_INT_EQ(got->prompt[2], 1032 + 8 + 512);
    for (int k = 1; k < 3; k++) /* the think time after the previous turn */
        CHECK_REL(got->arrival_s[k], got->end_s[k - 1] + 2.5, 1e-12);
}

static void test_closed_form(void)
{
    serve_config c = serve_test_base("round-robin");
    serve_result r;
    serve_seen got;
    /* cached: turn 2 prefills 520 tokens over 512 (floor(519 / 16) x 16),
     * turn 3 528 over 1024 (floor(1039 / 16) x 16) */
    one_session(1, 1, "round-robin", &r, &got);
    double ttft[3] = {prefill_s(&c, 512, 0), prefill_s(&c, 520, 512), prefill_s(&c, 528, 1024)};
    for (int k = 0; k < 3; k++) {
        printf("cached: turn %d TTFT %.9g s (closed form %.9g s)\n", k + 1,
               got.first_s[k] - got.arrival_s[k], ttft[k]);
        CHECK_REL(got.first_s[k] - got.arrival_s[k], ttft[k], 1e-12);
    }
    /* its end: the 7 decodes after the first token */
    double e2e = ttft[2];
    for (int i = 1; i <= 7; i++)
        e2e += decode_s(&c, 1552 + i);
    CHECK_REL(got.end_s[2] - got.arrival_s[2], e2e, 1e-12);
    CHECK_INT_EQ(r.followup_hits, 2);
    CHECK_INT_EQ((long long)r.followup_hit_tokens, 512 + 1024);
    CHECK_INT_EQ((long long)r.followup_context_tokens, 520 + 1040);
    CHECK_INT_EQ((long long)r.prefill_tokens_computed, 512 + 520 + 528);
    serve_result_free(&r);
    /* cache off: the whole prompt each time */
    one_session(0, 1, "round-robin", &r, &got);
    double full[3] = {prefill_s(&c, 512, 0), prefill_s(&c, 1032, 0), prefill_s(&c, 1552, 0)};
    for (int k = 0; k < 3; k++) {
        printf("uncached: turn %d TTFT %.9g s (closed form %.9g s)\n", k + 1,
               got.first_s[k] - got.arrival_s[k], full[k]);
        CHECK_REL(got.first_s[k] - got.arrival_s[k], full[k], 1e-12);
    }
    CHECK_INT_EQ(r.followup_hits, 0);
    CHECK_INT_EQ((long long)r.followup_hit_tokens, 0);
    serve_result_free(&r);
    /* two replicas in turn: each follow-up lands where its context is not */
    one_session(1, 2, "round-robin", &r, &got);
    CHECK_INT_EQ(got.replica[0], 0);
    CHECK_INT_EQ(got.replica[1], 1);
    CHECK_INT_EQ(got.replica[2], 0);
    CHECK_REL(got.first_s[1] - got.arrival_s[1], full[1], 1e-12);
    /* turn 3 is back where turn 1 left 512 tokens of its context */
    CHECK_REL(got.first_s[2] - got.arrival_s[2], prefill_s(&c, 1552 - 512, 512), 1e-12);
    CHECK_INT_EQ(r.followup_hits, 1);
    CHECK_INT_EQ((long long)r.followup_hit_tokens, 512);
    serve_result_free(&r);
    /* prefix-affinity sends each to its context */
    one_session(1, 2, "prefix-affinity", &r, &got);
    CHECK_INT_EQ(got.replica[1], got.replica[0]);
    CHECK_INT_EQ(got.replica[2], got.replica[0]);
    CHECK_INT_EQ(r.followup_hits, 2);
    CHECK_REL(got.first_s[2] - got.arrival_s[2], ttft[2], 1e-12);
    serve_result_free(&r);
}

static void check_conserved(const serve_result *r, const char *what)
{
    printf("%s: %llu sessions, %llu requests (%llu follow-ups, %llu hits), %llu dropped, "
           "%llu preemptions, hit tokens %.0f of %.0f, P99 TTFT %.4g s\n", what,
           (unsigned long long)r->sessions, (unsigned long long)r->arrived,
           (unsigned long long)r->followups, (unsigned long long)r->followup_hits,
           (unsigned long long)r->dropped, (unsigned long long)r->preemptions,
           r->followup_hit_tokens, r->followup_context_tokens, r->ttft.q_s[2]);
    CHECK_INT_EQ(r->arrived, r->finished + r->dropped);
    CHECK_INT_EQ(r->in_flight, 0);
    CHECK_REL(r->little_l, r->little_lambda * r->little_w, 1e-9);
    CHECK(r->kv_util_max <= 1 + 1e-12);
    CHECK(r->followup_hit_tokens <= r->followup_context_tokens);
    CHECK(r->followup_hits <= r->followups_admitted);
    CHECK(r->followups_admitted <= r->followups);
}

/* chat traffic on 4 replicas */
static serve_config chat(const char *router, double rate)
{
    serve_config c = open_loop(router, rate, 60);
    c.replicas = 4;
    c.router_margin = SERVE_ROUTER_MARGIN_DEFAULT;
    c.prompt = (serve_length){SERVE_LEN_LOGNORMAL, 300, 0.8, 2000};
    c.output = (serve_length){SERVE_LEN_LOGNORMAL, 150, 0.6, 1000};
    sessions(&c, 4, 3);
    return c;
}

static void test_routing(void)
{
    serve_config c = chat("prefix-affinity", 1);
    serve_result a, b;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_simulate(&c, &a, &err), 0);
    check_conserved(&a, "prefix-affinity, 1 session/s");
    CHECK(a.followups > 100);
    CHECK_INT_EQ(a.followup_hits, a.followups_admitted); /* nothing evicted, never elsewhere */
    c.router = serve_router_find("round-robin");
    CHECK_INT_EQ(serve_simulate(&c, &b, &err), 0);
    check_conserved(&b, "round-robin, 1 session/s");
    CHECK(b.followup_hits < b.followups_admitted);
    CHECK(b.followup_hit_tokens < a.followup_hit_tokens);
    CHECK(b.ttft.mean_s > a.ttft.mean_s);
    serve_result_free(&a);
    serve_result_free(&b);
}

static void test_monotone(void)
{
    double last = -1;
    for (int turns = 1; turns <= 6; turns++) {
        serve_config c = chat("prefix-affinity", 2);
        sessions(&c, turns, 3);
        serve_result r;
        sim_error err;
        sim_error_clear(&err);
        CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
        char what[32];
        snprintf(what, sizeof what, "%d turns", turns);
        check_conserved(&r, what);
        CHECK(r.followup_hit_tokens > last);
        last = r.followup_hit_tokens;
        serve_result_free(&r);
    }
}

static int same(const serve_result *a, const serve_result *b)
{
    return a->arrived == b->arrived && a->finished == b->finished &&
           a->preemptions == b->preemptions && a->end_s == b->end_s &&
           a->ttft.q_s[2] == b->ttft.q_s[2] && a->e2e.mean_s == b->e2e.mean_s &&
           a->followup_hit_tokens == b->followup_hit_tokens && a->little_l == b->little_l;
}

/* a tight cache (evictions, preemptions), shared prefixes, geometric turns */
static void test_loaded(void)
{
    serve_config c = chat("prefix-affinity", 6);
    c.replicas = 2;
    double w, per_token;
    serve_memory(&c, &w, &per_token, NULL, NULL);
    c.reserved_bytes = c.gpu_bytes - w - 600.5 * 16 * per_token / c.kv_fraction; /* 600 blocks */
    c.session_turns_dist = SERVE_TURNS_GEOMETRIC;
    c.session_turns = 3;
    c.session_max_turns = 8;
    c.think_dist = SERVE_THINK_EXPONENTIAL;
    c.prefix_prompts = 4;
    c.prefix_tokens = 200;
    c.prefix_share = 0.8;
    serve_result r, r2;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    check_conserved(&r, "loaded, recompute");
    CHECK(r.preemptions > 0);
    CHECK(r.followup_hits > 0);
    CHECK(r.followup_hits < r.followups_admitted); /* some evicted */
    CHECK(r.prefix_hits > 0);
    /* the geometric mean turns with the cap: (1 - (2/3)^8) x 3 */
    CHECK_REL(serve_mean_turns(&c), (1 - pow(2.0 / 3, 8)) * 3, 1e-12);
    CHECK_INT_EQ(serve_simulate(&c, &r2, &err), 0);
    CHECK(same(&r, &r2));
    serve_result_free(&r2);
    c.preemption = SERVE_PREEMPT_SWAP;
    c.host_link_bytes_per_s = 64e9;
    c.host_bytes_per_gpu = 50 * 16 * per_token;
    CHECK_INT_EQ(serve_simulate(&c, &r2, &err), 0);
    check_conserved(&r2, "loaded, swap");
    CHECK(r2.swaps_out > 0);
    CHECK_INT_EQ(r2.swaps_in, r2.swaps_out);
    serve_result_free(&r);
    serve_result_free(&r2);
}

static void test_refusals(void)
{
    serve_result r;
    sim_error err;
    serve_config c = serve_test_base("least-loaded"); /* closed loop */
    sessions(&c, 3, 1);
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), SIM_ERR_INPUT);
    CHECK(strstr(err.msg, "open-loop") != NULL);
    c = open_loop("least-loaded", 1, 10);
    sessions(&c, 2.5, 1);
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), SIM_ERR_INPUT);
    CHECK(strstr(err.msg, "whole") != NULL);
    sessions(&c, 2, -1);
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), SIM_ERR_INPUT);
    CHECK(strstr(err.msg, "think time") != NULL);
}

int main(void)
{
    test_one_turn();
    test_closed_form();
    test_routing();
    test_monotone();
    test_loaded();
    test_refusals();
    return check_report();
}
