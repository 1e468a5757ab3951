/* test_serving_radix.c - partial-prefix (radix) sharing and cache-aware
 * routing in the serving tier (models/serving_prefix.c, serving_router.c):
 *   - one replica, two levels, one request at a time: the first request
 *     prefills its whole prompt; each later one with the same chain
 *     prefills only its own tokens after the chain's whole blocks (closed
 *     form, a block straddling the two levels belonging to level 2); one
 *     sharing only level 1 prefills level 2 and its own tokens;
 *   - eviction order on a cache of exactly k blocks: one level-1 node and
 *     room for two of three level-2 children beside the running request:
 *     the hits are those of an LRU stack of two over the drawn children
 *     (the draws replayed from the documented stream, seed x 2 + 3), the
 *     level-1 node (a parent) is never evicted while a child is cached;
 *   - subtree first: two chains on a cache of 75 blocks: a request of one
 *     chain evicts the other's level-2 leaf and keeps its level-1 node,
 *     though that node was pinned before the leaf (closed-form depths);
 *   - conservation on a loaded three-level stream: prefilled + cached prompt
 *     tokens = the prompt tokens admitted (no preemption), level hits never
 *     above the level above's;
 *   - prefix-affinity: two replicas, two prefixes, one request at a time:
 *     every request after each prefix's first hits (n - 2), least-loaded
 *     gets n - (distinct prefix-replica pairs) < n - 2; the load guard
 *     sends a burst's second request to the other replica at margin 0 and
 *     keeps all on the cached replica at a margin above the burst.
 * The device and model are test_serving.c's synthetic ones.
 */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "precision.h"
#include "serving.h"
#include "serving_checks.h"

#define MAX_SEEN 64

typedef struct seen {
    unsigned n;
    int levels_hit[MAX_SEEN]; /* by arrival order */
    unsigned replica[MAX_SEEN];
    unsigned prompt[MAX_SEEN];
} seen;

static int on_request(void *ctx, const serve_request_info *info)
{
    seen *s = ctx;
    if (info->seq < MAX_SEEN) {
        s->levels_hit[info->seq] = info->prefix_levels_hit;
        s->replica[info->seq] = info->replica;
        s->prompt[info->seq] = info->prompt;
    }
    s->n++;
    return 0;
}

/* two levels, one prompt each: 250 tokens (15 whole blocks), then 100
 * (chain 350 tokens: 21 whole blocks, 6 of them level 2's) */
static serve_config two_levels(unsigned level2_prompts)
{
    serve_config c = serve_test_base("least-loaded");
    c.max_requests = 10;
    c.prefix_prompts = 1;
    c.prefix_tokens = 250;
    c.prefix_share = 1;
    c.prefix_levels = 2;
    c.prefix_inner[0] = (struct serve_prefix_level){level2_prompts, 100, 1, 0};
    return c;
}

static void test_same_chain(void)
{
    serve_config c = two_levels(1);
    serve_result r;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    CHECK_INT_EQ(r.finished, 10);
    CHECK_INT_EQ(r.preemptions, 0);
    CHECK_INT_EQ(r.prefix_level_requests[0], 10);
    CHECK_INT_EQ(r.prefix_level_requests[1], 10);
    CHECK_INT_EQ(r.prefix_level_hits[0], 9);
    CHECK_INT_EQ(r.prefix_level_hits[1], 9);
    CHECK_INT_EQ(r.prefix_hits, 9);
    /* 862 tokens a prompt; a hit starts after 21 x 16 = 336 cached */
    CHECK_NEAR(r.prefill_tokens_saved, 9 * 336.0, 0);
    CHECK_NEAR(r.prompt_tokens_admitted, 10 * 862.0, 0);
    CHECK_NEAR(r.prefill_tokens_computed, 862 + 9 * (862 - 336.0), 0);
    CHECK_REL(r.ttft_hit_mean_s, prefill_s(&c, 862 - 336, 336), 1e-12);
    CHECK_REL(r.ttft_miss_mean_s, prefill_s(&c, 862, 0), 1e-12);
    printf("same chain: TTFT hit %.6g ms, miss %.6g ms\n", r.ttft_hit_mean_s * 1e3,
           r.ttft_miss_mean_s * 1e3);
}

static void test_first_level_only(void)
{
    /* a million level-2 children: every request draws its own (checked) */
    serve_config c = two_levels(1000000);
    seen s = {0};
    c.on_request = on_request;
    c.request_ctx = &s;
    serve_result r;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    CHECK_INT_EQ(r.finished, 10);
    CHECK_INT_EQ(r.prefix_level_hits[0], 9);
    CHECK_INT_EQ(r.prefix_level_hits[1], 0);
    CHECK_INT_EQ(s.levels_hit[0], 0);
    for (unsigned i = 1; i < 10; i++)
        CHECK_INT_EQ(s.levels_hit[i], 1);
    /* a level-1 hit starts after 15 x 16 = 240 cached: level 2 and its own */
    CHECK_NEAR(r.prefill_tokens_saved, 9 * 240.0, 0);
    CHECK_REL(r.ttft_hit_mean_s, prefill_s(&c, 862 - 240, 240), 1e-12);
    CHECK_REL(r.ttft_miss_mean_s, prefill_s(&c, 862, 0), 1e-12);
}

/* the children drawn by the prefix stream for n requests of a one-prompt
 * level 1 (share 1) and a level 2 of `kids` uniform children (share 1) */
static void replay_children(const serve_config *c, unsigned kids, unsigned n, unsigned *out)
{
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, (unsigned long)(c->seed * 2 + 3));
    for (unsigned i = 0; i < n; i++) {
        (void)gsl_rng_uniform(g); /* level 1: share */
        (void)gsl_rng_uniform(g); /* level 1: the only prompt */
        (void)gsl_rng_uniform(g); /* level 2: share */
        double u = gsl_rng_uniform(g) * kids; /* cdf k + 1 (zipf 0) */
        unsigned k = 0;
        while (k + 1 <= u)
            k++;
        out[i] = k;
    }
    gsl_rng_free(g);
}

static void test_eviction_order(void)
{
    /* level 1: 256 tokens (16 blocks); level 2: 3 children of 160 (10
     * blocks each); own prompt 512 + 8 output: 59 blocks at the end, 33 of
     * them the request's own. The cache: 16 + 2 x 10 + 33 = 69 blocks */
    serve_config c = serve_test_base("least-loaded");
    const unsigned n = 40, kids = 3;
    c.max_requests = n;
    c.prefix_prompts = 1;
    c.prefix_tokens = 256;
    c.prefix_share = 1;
    c.prefix_levels = 2;
    c.prefix_inner[0] = (struct serve_prefix_level){kids, 160, 1, 0};
    double w, per_token, blocks;
    CHECK_INT_EQ(serve_memory(&c, &w, &per_token, &blocks, NULL), 0);
    c.reserved_bytes = c.gpu_bytes - w - (69 + 0.5) * 16 * per_token / c.kv_fraction;
    CHECK_INT_EQ(serve_memory(&c, &w, &per_token, &blocks, NULL), 0);
    CHECK_INT_EQ((long long)blocks, 69);
    seen s = {0};
    c.on_request = on_request;
    c.request_ctx = &s;
    serve_result r;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    CHECK_INT_EQ(r.finished, n);
    CHECK_INT_EQ(r.preemptions, 0);
    unsigned child[MAX_SEEN];
    replay_children(&c, kids, n, child);
    /* an LRU stack of two children: most recent first */
    int stack[2] = {-1, -1};
    unsigned lru_hits = 0;
    for (unsigned i = 0; i < n; i++) {
        int k = (int)child[i];
        int hit = stack[0] == k || stack[1] == k;
        int want = i == 0 ? 0 : hit ? 2 : 1;
        CHECK_INT_EQ(s.levels_hit[i], want);
        lru_hits += hit;
        if (stack[0] != k) { /* k to the top; the other one stays below */
            stack[1] = stack[0];
            stack[0] = k;
        }
    }
    CHECK_INT_EQ(r.prefix_level_hits[0], n - 1);
    CHECK_INT_EQ(r.prefix_level_hits[1], lru_hits);
    printf("eviction: %u requests, 3 children, room for 2: %llu level-2 hits (LRU)\n", n,
           (unsigned long long)r.prefix_level_hits[1]);
    CHECK(lru_hits > 0 && lru_hits < n - 1); /* the stream exercises both outcomes */
}

/* Two level-1 prefixes of 256 tokens (16 blocks), one level-2 child of 160
 * under each (10 blocks); 512 + 8 own tokens: 59 blocks a request, 26 of
 * them its chain. The cache: 75 blocks = 59 + 16, so beside a running
 * request the other chain keeps at most its level-1 node: evicting goes
 * leaf first (the level-2 node, though its parent was pinned earlier), and
 * the next request of that chain hits level 1. */
static void test_subtree_first(void)
{
    serve_config c = serve_test_base("least-loaded");
    const unsigned n = 40;
    c.max_requests = n;
    c.prefix_prompts = 2;
    c.prefix_tokens = 256;
    c.prefix_share = 1;
    c.prefix_levels = 2;
    c.prefix_inner[0] = (struct serve_prefix_level){1, 160, 1, 0};
    double w, per_token, blocks;
    CHECK_INT_EQ(serve_memory(&c, &w, &per_token, &blocks, NULL), 0);
    c.reserved_bytes = c.gpu_bytes - w - (75 + 0.5) * 16 * per_token / c.kv_fraction;
    CHECK_INT_EQ(serve_memory(&c, &w, &per_token, &blocks, NULL), 0);
    CHECK_INT_EQ((long long)blocks, 75);
    seen s = {0};
    c.on_request = on_request;
    c.request_ctx = &s;
    serve_result r;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    CHECK_INT_EQ(r.finished, n);
    CHECK_INT_EQ(r.preemptions, 0);
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, (unsigned long)(c.seed * 2 + 3));
    int depth[2] = {0, 0}, ones = 0;
    for (unsigned i = 0; i < n; i++) {
        (void)gsl_rng_uniform(g);                  /* level 1: share */
        unsigned x = gsl_rng_uniform(g) * 2 >= 1;  /* level 1: which */
        (void)gsl_rng_uniform(g);                  /* level 2: share */
        (void)gsl_rng_uniform(g);                  /* level 2: the only child */
        CHECK_INT_EQ(s.levels_hit[i], depth[x]);
        ones += depth[x] == 1;
        depth[x] = 2;
        if (depth[!x] > 1)
            depth[!x] = 1; /* its leaf evicted, its level-1 node kept */
    }
    gsl_rng_free(g);
    printf("subtree first: %u requests, %d hits at level 1 only, %llu at level 2\n", n, ones,
           (unsigned long long)r.prefix_level_hits[1]);
    CHECK(ones > 0);
}

static void test_conservation(void)
{
    serve_config c = serve_test_base("least-loaded");
    c.replicas = 2;
    c.arrival = SERVE_POISSON;
    c.rate_per_s = 30;
    c.duration_s = 30;
    c.max_requests = 0;
    c.prompt = (serve_length){SERVE_LEN_LOGNORMAL, 400, 0.8, 4000};
    c.output = (serve_length){SERVE_LEN_LOGNORMAL, 100, 0.6, 1000};
    c.prefix_prompts = 2;
    c.prefix_tokens = 500;
    c.prefix_share = 0.9;
    c.prefix_levels = 3;
    c.prefix_inner[0] = (struct serve_prefix_level){8, 700, 0.7, 1};
    c.prefix_inner[1] = (struct serve_prefix_level){4, 90, 0.5, 0};
    serve_result r, again;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    CHECK_INT_EQ(r.arrived, r.finished + r.dropped);
    CHECK_INT_EQ(r.preemptions, 0);
    CHECK_NEAR(r.prefill_tokens_computed + r.prefill_tokens_saved, r.prompt_tokens_admitted, 0);
    CHECK(r.prefill_tokens_saved > 0);
    for (int l = 0; l < 3; l++) {
        printf("conservation: level %d: %llu of %llu\n", l + 1,
               (unsigned long long)r.prefix_level_hits[l],
               (unsigned long long)r.prefix_level_requests[l]);
        CHECK(r.prefix_level_hits[l] <= r.prefix_level_requests[l]);
        if (l) {
            CHECK(r.prefix_level_requests[l] < r.prefix_level_requests[l - 1]);
            CHECK(r.prefix_level_hits[l] > 0);
        }
    }
    CHECK_INT_EQ(r.prefix_requests, r.prefix_level_requests[0]);
    CHECK_INT_EQ(r.prefix_hits, r.prefix_level_hits[0]);
    CHECK(fabs(r.little_l - r.little_lambda * r.little_w) <= 1e-9 * r.little_l);
    CHECK_INT_EQ(serve_simulate(&c, &again, &err), 0);
    CHECK(memcmp(&r.ttft, &again.ttft, sizeof r.ttft) == 0);
    CHECK_INT_EQ(r.prefix_level_hits[2], again.prefix_level_hits[2]);
}

/* two replicas, two uniform prefixes of 512 tokens (32 blocks), one
 * request at a time: the hits of a router */
static unsigned affinity_run(const char *router, unsigned n, unsigned *pairs_seen)
{
    serve_config c = serve_test_base(router);
    c.replicas = 2;
    c.max_requests = n;
    c.prefix_prompts = 2;
    c.prefix_tokens = 512;
    c.prefix_share = 1;
    c.router_margin = SERVE_ROUTER_MARGIN_DEFAULT;
    seen s = {0};
    c.on_request = on_request;
    c.request_ctx = &s;
    serve_result r;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    CHECK_INT_EQ(r.finished, n);
    /* the prefixes drawn: the stream's share and zipf uniforms */
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, (unsigned long)(c.seed * 2 + 3));
    int pair[2][2] = {{0, 0}, {0, 0}};
    unsigned distinct = 0;
    *pairs_seen = 0;
    for (unsigned i = 0; i < n; i++) {
        (void)gsl_rng_uniform(g);
        unsigned k = gsl_rng_uniform(g) * 2 >= 1;
        distinct += !pair[k][0] && !pair[k][1];
        *pairs_seen += !pair[k][s.replica[i]];
        pair[k][s.replica[i]] = 1;
    }
    gsl_rng_free(g);
    CHECK_INT_EQ(distinct, 2);
    CHECK_INT_EQ(r.prefix_hits, n - *pairs_seen);
    return (unsigned)r.prefix_hits;
}

static void test_affinity(void)
{
    const unsigned n = 30;
    unsigned pairs_aff, pairs_ll;
    unsigned aff = affinity_run("prefix-affinity", n, &pairs_aff);
    unsigned ll = affinity_run("least-loaded", n, &pairs_ll);
    printf("affinity: %u of %u hits (closed form n - 2); least-loaded %u (%u pairs)\n", aff,
           n, ll, pairs_ll);
    CHECK_INT_EQ(aff, n - 2);
    CHECK(ll < n - 2);
}

/* one request computes the prefix on replica 0; then 4 arrive at once */
static void guard_run(unsigned margin, seen *s)
{
    static const serve_trace_row rows[] = {
        {0, 512, 8}, {10, 512, 8}, {10, 512, 8}, {10, 512, 8}, {10, 512, 8}};
    serve_config c = serve_test_base("prefix-affinity");
    c.replicas = 2;
    c.arrival = SERVE_TRACE;
    c.trace = rows;
    c.n_trace = 5;
    c.max_requests = 0;
    c.prefix_prompts = 1;
    c.prefix_tokens = 512;
    c.prefix_share = 1;
    c.router_margin = margin;
    memset(s, 0, sizeof *s);
    c.on_request = on_request;
    c.request_ctx = s;
    serve_result r;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    CHECK_INT_EQ(r.finished, 5);
}

static void test_guard(void)
{
    seen s;
    guard_run(4, &s); /* the burst never passes the margin: all on replica 0, all hit */
    for (unsigned i = 0; i < 5; i++)
        CHECK_INT_EQ(s.replica[i], 0);
    for (unsigned i = 1; i < 5; i++)
        CHECK_INT_EQ(s.levels_hit[i], 1);
    guard_run(0, &s); /* the second of the burst finds replica 0 one request ahead */
    CHECK_INT_EQ(s.replica[1], 0);
    CHECK_INT_EQ(s.levels_hit[1], 1);
    CHECK_INT_EQ(s.replica[2], 1);
    CHECK_INT_EQ(s.levels_hit[2], 0);
}

int main(void)
{
    test_same_chain();
    test_first_level_only();
    test_eviction_order();
    test_subtree_first();
    test_conservation();
    test_affinity();
    test_guard();
    return check_report();
}
