/* test_serving_window.c - sessions against the model's context window and
 * the sessions' figures (models/serving_session.c, docs/serving.md
 * "Multi-turn sessions"):
 *   - closed form: one session of 10 turns of 512-token messages and
 *     8-token answers on one replica, window 4,096 (the model's seq_len):
 *     turn k's prompt + output is 520 k, so turn 8 is the first over it.
 *     Under truncate="refuse" turn 8 is dropped at arrival and ends the
 *     session (8 arrived, 7 finished, 1 refused, the session cut); under
 *     "oldest" turns 8 to 10 keep 4,096 - 8 - 512 = 3,576 context tokens
 *     (64, then 520 and 520 cut), their prompt 4,088, and each prefills
 *     its whole prompt from nothing (the cached context is no prefix of
 *     it), to 1e-12, where turn 7 prefills 528 tokens over 3,104 cached;
 *     with a 200-token system prompt the chain stays at the head and a
 *     truncated turn reuses its 192 cached tokens (prefill of 3,896 over
 *     192); the request records' session, turn, context, truncated and
 *     hit tokens;
 *   - the TTFT of first turns and of follow-ups: their mean and P50/P90/
 *     P99 equal the nearest ranks of the records' TTFTs split by turn;
 *   - under load with long messages: refusals and truncations counted,
 *     conservation (arrived = finished + dropped, sessions = finished +
 *     cut), Little's law; "oldest" refuses none where every message and
 *     answer fit;
 *   - a window set on the sessions replaces the model's seq_len (a smaller
 *     one refuses an earlier turn, a larger one none); a fractional one is
 *     refused;
 *   - a model without a context length (seq-len) is refused.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "precision.h"
#include "serving.h"
#include "serving_checks.h"

#define MAX_SEEN 4096

typedef struct seen {
    uint64_t n;
    double ttft[MAX_SEEN];
    serve_request_info info[MAX_SEEN];
} seen;

static int on_request(void *ctx, const serve_request_info *info)
{
    seen *s = ctx;
    if (info->seq < MAX_SEEN) {
        s->info[info->seq] = *info;
        s->n = info->seq + 1 > s->n ? info->seq + 1 : s->n;
    }
    return 0;
}

static serve_config one_session(int rule, double prefix_tokens)
{
    serve_config c = serve_test_base("round-robin");
    c.arrival = SERVE_POISSON;
    c.rate_per_s = 1;
    c.duration_s = 1000;
    c.clients = 0;
    c.max_requests = 1; /* one session */
    c.session_turns_dist = SERVE_TURNS_FIXED;
    c.session_turns = 10;
    c.think_dist = SERVE_THINK_FIXED;
    c.think_s = 2;
    c.session_cache = 1;
    c.session_truncate = rule;
    if (prefix_tokens > 0) {
        c.prefix_prompts = 1;
        c.prefix_tokens = prefix_tokens;
        c.prefix_share = 1;
    }
    return c;
}

static double ttft_of(const serve_request_info *i)
{
    return i->first_token_s - i->arrival_s;
}

static void test_refuse(void)
{
    serve_config c = one_session(SERVE_TRUNC_REFUSE, 0);
    seen *got = calloc(1, sizeof *got);
    c.on_request = on_request;
    c.request_ctx = got;
    serve_result r;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    printf("refuse: %llu arrived, %llu finished, %llu refused\n",
           (unsigned long long)r.arrived, (unsigned long long)r.finished,
           (unsigned long long)r.turns_refused);
    CHECK_INT_EQ(r.arrived, 8);
    CHECK_INT_EQ(r.finished, 7);
    CHECK_INT_EQ(r.dropped, 1);
    CHECK_INT_EQ(r.turns_refused, 1);
    CHECK_INT_EQ(r.turns_truncated, 0);
    CHECK_INT_EQ(r.sessions_cut, 1);
    CHECK_INT_EQ(r.sessions_finished, 0);
    CHECK_REL(r.turns_mean, 8, 1e-15);
    const serve_request_info *t8 = &got->info[7];
    CHECK_INT_EQ(t8->turn, 8);
    CHECK_INT_EQ(t8->refused, 1);
    CHECK_INT_EQ(t8->dropped, 1);
    CHECK_INT_EQ(t8->context_tokens, 520 * 7);
    for (int k = 0; k < 7; k++) {
        CHECK_INT_EQ(got->info[k].turn, k + 1);
        CHECK_INT_EQ(got->info[k].session, 0);
        CHECK_INT_EQ(got->info[k].prompt, 520 * k + 512);
        CHECK_INT_EQ(got->info[k].refused, 0);
    }
    serve_result_free(&r);
    free(got);
}

static void test_oldest(double prefix)
{
    serve_config c = one_session(SERVE_TRUNC_OLDEST, prefix);
    seen *got = calloc(1, sizeof *got);
    c.on_request = on_request;
    c.request_ctx = got;
    serve_result r;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    CHECK_INT_EQ(r.arrived, 10);
    CHECK_INT_EQ(r.finished, 10);
    CHECK_INT_EQ(r.turns_refused, 0);
    CHECK_INT_EQ(r.turns_truncated, 3);
    CHECK_INT_EQ(r.sessions_finished, 1);
    CHECK_INT_EQ(r.sessions_cut, 0);
    /* turn 7's context 520 x 6 + prefix, turn 8's 520 x 7 + prefix */
    double first_cut = 520 * 7 + prefix - 3576;
    CHECK_INT_EQ((long long)r.truncated_tokens, (long long)(first_cut + 2 * 520));
    double cached = floor(prefix / 16) * 16; /* the chain's whole blocks */
    for (int k = 7; k < 10; k++) {
        const serve_request_info *i = &got->info[k];
        CHECK_INT_EQ(i->turn, k + 1);
        CHECK_INT_EQ(i->prompt, 4088);
        CHECK_INT_EQ(i->context_tokens, 3576);
        CHECK_INT_EQ(i->truncated_tokens, (uint32_t)(k == 7 ? first_cut : 520));
        CHECK_INT_EQ(i->context_hit, 0);
        CHECK_INT_EQ(i->hit_tokens, (uint32_t)cached);
        double want = prefill_s(&c, 4088 - cached, cached);
        printf("oldest, prefix %g: turn %d TTFT %.9g s (closed form %.9g s)\n", prefix, k + 1,
               ttft_of(i), want);
        CHECK_REL(ttft_of(i), want, 1e-12);
    }
    /* turn 7, untruncated: its new tokens over the cached context */
    const serve_request_info *t7 = &got->info[6];
    double ctx = 520 * 6 + prefix, hit = floor((ctx - 1) / 16) * 16;
    CHECK_INT_EQ(t7->context_hit, 1);
    CHECK_INT_EQ(t7->hit_tokens, (uint32_t)hit);
    CHECK_INT_EQ(t7->truncated_tokens, 0);
    CHECK_REL(ttft_of(t7), prefill_s(&c, ctx + 512 - hit, hit), 1e-12);
    CHECK_INT_EQ(r.followup_hits, 6); /* turns 2 to 7 */
    serve_result_free(&r);
    free(got);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* the nearest-rank summary of v[0..n) against l */
static void check_latency(double *v, uint64_t n, const serve_latency *l, const char *what)
{
    CHECK(n > 0);
    qsort(v, n, sizeof *v, cmp_double);
    double sum = 0;
    for (uint64_t i = 0; i < n; i++)
        sum += v[i];
    printf("%s: %llu, mean %.6g s, P50 %.6g, P99 %.6g\n", what, (unsigned long long)n,
           l->mean_s, l->q_s[0], l->q_s[2]);
    CHECK_REL(l->mean_s, sum / n, 1e-12);
    for (unsigned k = 0; k < SERVE_QUANTILES; k++) {
        double rank = ceil(serve_quantile_p[k] * n);
        CHECK(l->q_s[k] == v[(uint64_t)(rank < 1 ? 1 : rank) - 1]);
    }
}

/* chat under load on 2 replicas, long messages: contexts cross the window */
static serve_config loaded(int rule)
{
    serve_config c = one_session(rule, 0);
    c.replicas = 2;
    c.router = serve_router_find("prefix-affinity");
    c.router_margin = SERVE_ROUTER_MARGIN_DEFAULT;
    c.max_requests = 0;
    c.rate_per_s = 4;
    c.duration_s = 60;
    c.prompt = (serve_length){SERVE_LEN_LOGNORMAL, 600, 0.8, 2000};
    c.output = (serve_length){SERVE_LEN_LOGNORMAL, 200, 0.6, 1000};
    c.session_turns_dist = SERVE_TURNS_GEOMETRIC;
    c.session_turns = 5;
    c.session_max_turns = 20;
    c.think_dist = SERVE_THINK_EXPONENTIAL;
    return c;
}

static void test_loaded(void)
{
    for (int rule = 0; rule < SERVE_TRUNC_COUNT; rule++) {
        serve_config c = loaded(rule);
        seen *got = calloc(1, sizeof *got);
        c.on_request = on_request;
        c.request_ctx = got;
        serve_result r;
        sim_error err;
        sim_error_clear(&err);
        CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
        printf("loaded, truncate %s: %llu sessions (%llu finished, %llu cut), %llu requests, "
               "%llu dropped, %llu refused, %llu truncated (%.0f tokens)\n",
               serve_truncate_name(rule), (unsigned long long)r.sessions,
               (unsigned long long)r.sessions_finished, (unsigned long long)r.sessions_cut,
               (unsigned long long)r.arrived, (unsigned long long)r.dropped,
               (unsigned long long)r.turns_refused, (unsigned long long)r.turns_truncated,
               r.truncated_tokens);
        CHECK(r.arrived < MAX_SEEN);
        CHECK_INT_EQ(r.arrived, r.finished + r.dropped);
        CHECK_INT_EQ(r.in_flight, 0);
        CHECK_INT_EQ(r.sessions, r.sessions_finished + r.sessions_cut);
        CHECK_REL(r.little_l, r.little_lambda * r.little_w, 1e-9);
        CHECK_REL(r.turns_mean, (double)r.arrived / r.sessions, 1e-15);
        CHECK_REL(r.hit_tokens_share, r.followup_hit_tokens / r.followup_context_tokens,
                  1e-15);
        if (rule == SERVE_TRUNC_REFUSE) {
            CHECK(r.turns_refused > 0);
            CHECK_INT_EQ(r.turns_truncated, 0);
        } else { /* a message and an answer fit (2,000 + 1,000 < 4,096) */
            CHECK(r.turns_truncated > 0);
            CHECK_INT_EQ(r.turns_refused, 0);
        }
        /* the records: counts, and the TTFT split by turn */
        double *first = malloc(got->n * sizeof *first), *fup = malloc(got->n * sizeof *fup);
        uint64_t n1 = 0, n2 = 0, refused = 0, truncated = 0, followups = 0;
        double cut = 0;
        for (uint64_t i = 0; i < got->n; i++) {
            const serve_request_info *q = &got->info[i];
            refused += (uint64_t)q->refused;
            truncated += q->truncated_tokens > 0 && !q->refused;
            cut += q->refused ? 0 : q->truncated_tokens;
            followups += q->turn > 1;
            CHECK(q->turn >= 1);
            CHECK(q->prompt + (double)q->output <= 4096 || q->turn == 1 || q->refused);
            if (q->dropped)
                continue;
            if (q->turn > 1)
                fup[n2++] = ttft_of(q);
            else
                first[n1++] = ttft_of(q);
        }
        CHECK_INT_EQ(refused, r.turns_refused);
        CHECK_INT_EQ(truncated, r.turns_truncated);
        CHECK_INT_EQ(followups, r.followups);
        CHECK_REL(cut, r.truncated_tokens, 1e-15);
        check_latency(first, n1, &r.ttft_first, "TTFT of first turns");
        check_latency(fup, n2, &r.ttft_followup, "TTFT of follow-ups");
        free(first);
        free(fup);
        serve_result_free(&r);
        free(got);
    }
}

static void test_refusal(void)
{
    serve_config c = one_session(SERVE_TRUNC_REFUSE, 0);
    c.arch.seq_len = 0;
    serve_result r;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), SIM_ERR_INPUT);
    CHECK(strstr(err.msg, "seq-len") != NULL); /* model_arch_check: no window, no run */
    c = one_session(7, 0);
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), SIM_ERR_INPUT);
    CHECK(strstr(err.msg, "truncation rule") != NULL);
}

/* a window set on the sessions (session_window) replaces the model's
 * seq_len: at 2,600 tokens turn 6 (520 x 6 = 3,120) is the first over it;
 * at 8,192 (past the seq_len of 4,096) all 10 turns (5,200) fit */
static void test_window(void)
{
    serve_config c = one_session(SERVE_TRUNC_REFUSE, 0);
    serve_result r;
    sim_error err;
    sim_error_clear(&err);
    c.session_window = 2600;
    CHECK_REL(serve_session_window(&c), 2600, 0);
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    printf("window 2600: %llu arrived, %llu finished, %llu refused\n",
           (unsigned long long)r.arrived, (unsigned long long)r.finished,
           (unsigned long long)r.turns_refused);
    CHECK_INT_EQ(r.arrived, 6);
    CHECK_INT_EQ(r.finished, 5);
    CHECK_INT_EQ(r.turns_refused, 1);
    serve_result_free(&r);
    c.session_window = 8192;
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    CHECK_INT_EQ(r.arrived, 10);
    CHECK_INT_EQ(r.finished, 10);
    CHECK_INT_EQ(r.turns_refused, 0);
    serve_result_free(&r);
    c.session_window = 0; /* the model's */
    CHECK_REL(serve_session_window(&c), 4096, 0);
    c.session_window = 100.5;
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), SIM_ERR_INPUT);
    CHECK(strstr(err.msg, "context window") != NULL);
}

int main(void)
{
    test_window();
    test_refuse();
    test_oldest(0);
    test_oldest(200);
    test_loaded();
    test_refusal();
    return check_report();
}
