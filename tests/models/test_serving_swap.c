/* test_serving_swap.c - swap-based preemption of the KV cache
 * (models/serving_swap.c):
 *   - closed form: one replica whose KV cache is exactly 5 blocks of 16
 *     tokens, two requests of 32 + 48 tokens arriving together. Both
 *     prefill (2 blocks each); at the first decode each needs a third block,
 *     so the newer one is preempted. Under swap its 2 blocks go to host
 *     memory in that iteration, it comes back (2 blocks in) in the iteration
 *     after the other finishes, and finishes at the timeline without any
 *     recompute plus the two copies, 2 x block bytes / the host link rate
 *     each, exactly; its prompt is prefilled once (64 prompt tokens in all);
 *     under recompute the same run re-prefills (more prompt tokens);
 *   - host pool too small for the preempted request's blocks: the
 *     preemption falls back to recompute (counted) and the run is the
 *     recompute run, figure for figure;
 *   - conservation on a loaded stream (64 blocks, 8 clients of 200 + 300
 *     tokens, with and without shared prefixes): every request finishes
 *     with all its tokens, every swap-out is swapped back in, no prompt
 *     token is recomputed (prefilled = admitted), the host pool never
 *     overfills, Little's law, the same bits twice;
 *   - recompute as the default: a configuration that never set the mode
 *     runs as one that set recompute; refusals of a bad mode, negative host
 *     memory and a missing host-link rate.
 * The device and model are test_serving.c's synthetic ones.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "precision.h"
#include "serving.h"
#include "serving_checks.h"

#define MAX_SEEN 64

typedef struct seen {
    double end_s[MAX_SEEN];
} seen;

static int on_request(void *ctx, const serve_request_info *info)
{
    seen *s = ctx;
    if (info->seq < MAX_SEEN)
        s->end_s[info->seq] = info->end_s;
    return 0;
}

/* a cache of exactly `blocks` blocks of 16 tokens on the synthetic GPU */
static serve_config cache_of(double blocks)
{
    serve_config c = serve_test_base("round-robin");
    double w, per_token, got;
    serve_memory(&c, &w, &per_token, &got, NULL);
    c.reserved_bytes = c.gpu_bytes - w - (blocks + 0.5) * 16 * per_token / c.kv_fraction;
    serve_memory(&c, &w, &per_token, &got, NULL);
    CHECK_INT_EQ((long long)got, (long long)blocks);
    return c;
}

static void swap_mode(serve_config *c, double host_blocks)
{
    double per_token;
    serve_memory(c, NULL, &per_token, NULL, NULL);
    c->preemption = SERVE_PREEMPT_SWAP;
    c->host_link_bytes_per_s = 64e9; /* H100's PCIe Gen5 x16 per direction */
    c->host_bytes_per_gpu = (host_blocks + 0.5) * per_token / c->tp * c->kv_block_tokens;
}

static void test_closed_form(void)
{
    serve_config c = cache_of(5);
    c.clients = 2;
    c.max_requests = 2;
    c.prompt.a = 32;
    c.output.a = 48;
    seen got;
    memset(&got, 0, sizeof got);
    c.on_request = on_request;
    c.request_ctx = &got;
    serve_config rc = c;
    swap_mode(&c, 100);
    double host_blocks, copy1;
    serve_swap_geometry(&c, &host_blocks, &copy1);
    CHECK_INT_EQ((long long)host_blocks, 100);
    double per_token;
    serve_memory(&c, NULL, &per_token, NULL, NULL);
    double block_gpu = per_token / c.tp * c.kv_block_tokens;
    CHECK_REL(copy1, block_gpu / 64e9, 1e-15);
    double copy2 = 2 * copy1; /* two blocks: its 32 computed tokens */

    serve_result r;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    /* the timeline: both prefill together; the older decodes 47 tokens alone
     * (the first iteration carrying the copy out); then the newer, swapped
     * back in, decodes its 47 (the first carrying the copy in) */
    double chunk[2] = {32, 32}, ctx[2] = {0, 0};
    serve_batch both = {2, chunk, ctx, 0, 0, 2};
    double t = serve_iteration_s(&c, &both), bare = t;
    for (int i = 1; i <= 47; i++) {
        t += decode_s(&c, 32 + i) + (i == 1 ? copy2 : 0);
        bare += decode_s(&c, 32 + i);
    }
    CHECK_REL(got.end_s[0], t, 1e-12);
    for (int i = 1; i <= 47; i++) {
        t += decode_s(&c, 32 + i) + (i == 1 ? copy2 : 0);
        bare += decode_s(&c, 32 + i);
    }
    printf("closed form: second request ends %.9g s = %.9g s without copies + 2 x %.6g s\n",
           got.end_s[1], bare, copy2);
    CHECK_REL(got.end_s[1], t, 1e-12);
    CHECK_REL(got.end_s[1], bare + 2 * copy2, 1e-12);
    CHECK_INT_EQ(r.preemptions, 1);
    CHECK_INT_EQ(r.swaps_out, 1);
    CHECK_INT_EQ(r.swaps_in, 1);
    CHECK_INT_EQ(r.swap_fallbacks, 0);
    CHECK_REL(r.swap_out_bytes, 2 * 16 * per_token, 1e-15);
    CHECK_REL(r.swap_in_bytes, 2 * 16 * per_token, 1e-15);
    CHECK_REL(r.swap_time_s, 2 * copy2, 1e-15);
    CHECK_INT_EQ((long long)r.prefill_tokens_computed, 64); /* nothing recomputed */
    CHECK_INT_EQ(r.iterations, 1 + 47 + 47);
    CHECK_INT_EQ((long long)r.host_blocks_per_replica, 100);
    CHECK_REL(r.host_util_max, 2.0 / 100, 1e-15);
    CHECK_INT_EQ(r.output_tokens, 96);

    /* recompute: the newer one re-prefills its prompt and first token */
    serve_result q;
    memset(&got, 0, sizeof got);
    CHECK_INT_EQ(serve_simulate(&rc, &q, &err), 0);
    printf("recompute: %llu preemptions, %.0f prompt tokens prefilled, ends %.9g s\n",
           (unsigned long long)q.preemptions, q.prefill_tokens_computed, got.end_s[1]);
    CHECK(q.preemptions >= 1);
    CHECK(q.prefill_tokens_computed >= 64 + 33);
    CHECK_INT_EQ(q.swaps_out, 0);
    CHECK_INT_EQ(q.output_tokens, 96);
    serve_result_free(&r);
    serve_result_free(&q);
}

static int same_run(const serve_result *a, const serve_result *b)
{
    return a->finished == b->finished && a->preemptions == b->preemptions &&
           a->iterations == b->iterations && a->end_s == b->end_s &&
           a->ttft.mean_s == b->ttft.mean_s && a->tpot.q_s[2] == b->tpot.q_s[2] &&
           a->e2e.max_s == b->e2e.max_s && a->kv_util_mean == b->kv_util_mean &&
           a->prefill_tokens_computed == b->prefill_tokens_computed &&
           a->little_l == b->little_l;
}

static void test_fallback(void)
{
    serve_config c = cache_of(5);
    c.clients = 2;
    c.max_requests = 2;
    c.prompt.a = 32;
    c.output.a = 48;
    serve_config rc = c;
    swap_mode(&c, 1); /* one block: the preempted request holds two */
    serve_result r, q;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    CHECK_INT_EQ(serve_simulate(&rc, &q, &err), 0);
    printf("fallback: %llu preemptions, %llu fallbacks, %llu swaps\n",
           (unsigned long long)r.preemptions, (unsigned long long)r.swap_fallbacks,
           (unsigned long long)r.swaps_out);
    /* the first preemption (2 blocks) falls back; a later one of a request
     * that has recomputed one block of its prompt fits the pool */
    CHECK(r.swap_fallbacks >= 1);
    CHECK_INT_EQ(r.swap_fallbacks + r.swaps_out, r.preemptions);
    CHECK_INT_EQ(r.swaps_in, r.swaps_out);
    CHECK(r.host_util_max <= 1);
    CHECK(r.prefill_tokens_computed > 64); /* recomputed */
    CHECK_INT_EQ(r.output_tokens, 96);
    /* a pool of none: every preemption falls back, the recompute run */
    c.host_bytes_per_gpu = 0;
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    CHECK_INT_EQ(r.swaps_out, 0);
    CHECK_INT_EQ(r.swap_fallbacks, r.preemptions);
    CHECK_INT_EQ(r.swap_fallbacks, q.preemptions);
    CHECK(same_run(&r, &q));
    CHECK_INT_EQ(r.swap_time_s == 0, 1);
    serve_result_free(&r);
    serve_result_free(&q);
}

/* test_serving.c's preemption case: 64 blocks, 8 clients, 40 requests */
static serve_config loaded(void)
{
    serve_config c = cache_of(64);
    c.clients = 8;
    c.max_requests = 40;
    c.prompt.a = 200;
    c.output.a = 300;
    return c;
}

static void check_loaded(const serve_config *c, const char *what)
{
    serve_result r, again;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_simulate(c, &r, &err), 0);
    printf("%s: %llu preemptions, %llu out, %llu in, %llu fallbacks, %.4g s copying, "
           "host peak %.3f, end %.6g s\n", what, (unsigned long long)r.preemptions,
           (unsigned long long)r.swaps_out, (unsigned long long)r.swaps_in,
           (unsigned long long)r.swap_fallbacks, r.swap_time_s, r.host_util_max, r.end_s);
    CHECK(r.swaps_out > 0);
    CHECK_INT_EQ(r.swaps_in, r.swaps_out);
    CHECK_INT_EQ(r.swap_fallbacks, 0);
    CHECK_INT_EQ(r.preemptions, r.swaps_out);
    CHECK_INT_EQ(r.finished, 40);
    CHECK_INT_EQ(r.in_flight, 0);
    CHECK_INT_EQ(r.output_tokens, 40 * 300);
    CHECK_REL(r.swap_in_bytes, r.swap_out_bytes, 1e-15);
    if (c->prefix_prompts) /* nothing recomputed */
        CHECK_REL(r.prefill_tokens_computed + r.prefill_tokens_saved,
                  r.prompt_tokens_admitted, 1e-15);
    else
        CHECK_INT_EQ((long long)r.prefill_tokens_computed, 40 * 200);
    CHECK(r.host_util_max > 0 && r.host_util_max <= 1);
    CHECK(r.kv_util_max <= 1);
    CHECK(r.swap_time_s > 0 && r.swap_time_s < r.busy_fraction * r.end_s);
    CHECK_REL(r.little_l, r.little_lambda * r.little_w, 1e-9);
    CHECK_INT_EQ(serve_simulate(c, &again, &err), 0);
    CHECK(same_run(&r, &again));
    CHECK_INT_EQ(again.swaps_out, r.swaps_out);
    CHECK_INT_EQ(again.swap_time_s == r.swap_time_s, 1);
    serve_result_free(&r);
    serve_result_free(&again);
}

static void test_loaded(void)
{
    serve_config c = loaded(), rc = loaded();
    swap_mode(&c, 1000);
    check_loaded(&c, "loaded");
    serve_result q;
    sim_error err;
    CHECK_INT_EQ(serve_simulate(&rc, &q, &err), 0);
    CHECK(q.prefill_tokens_computed > 40 * 200); /* recompute: prompts computed again */
    /* shared prefixes under pressure: a swapped request's copy holds its
     * shared blocks too, and it comes back with them as its own */
    c.prefix_prompts = 2;
    c.prefix_tokens = 64;
    c.prefix_share = 1;
    c.prompt.a = 136;
    check_loaded(&c, "loaded, prefixes");
}

static void test_default_and_refusals(void)
{
    serve_config c = loaded(), rc = loaded();
    rc.preemption = SERVE_PREEMPT_RECOMPUTE;
    rc.host_bytes_per_gpu = 123e9; /* ignored under recompute */
    serve_result a, b;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_simulate(&c, &a, &err), 0);
    CHECK_INT_EQ(serve_simulate(&rc, &b, &err), 0);
    CHECK(same_run(&a, &b));
    CHECK_INT_EQ(a.swaps_out + a.swap_fallbacks, 0);
    CHECK_STR_EQ(serve_preemption_name(SERVE_PREEMPT_SWAP), "swap");
    int mode = -1;
    CHECK_INT_EQ(serve_preemption_parse("recompute", &mode), 0);
    CHECK_INT_EQ(mode, SERVE_PREEMPT_RECOMPUTE);
    CHECK(serve_preemption_parse("spill", &mode) != 0);
    c.preemption = 7;
    sim_error_clear(&err);
    CHECK(serve_config_check(&c, &err) != 0);
    swap_mode(&c, 10);
    c.host_bytes_per_gpu = -1;
    sim_error_clear(&err);
    CHECK(serve_config_check(&c, &err) != 0);
    CHECK_CONTAINS(err.msg, "host memory");
    swap_mode(&c, 10);
    c.host_link_bytes_per_s = 0;
    sim_error_clear(&err);
    CHECK(serve_config_check(&c, &err) != 0);
    CHECK_CONTAINS(err.msg, "host link");
}

int main(void)
{
    test_closed_form();
    test_fallback();
    test_loaded();
    test_default_and_refusals();
    return check_report();
}
