/* test_step_fault.c - failure states (models/fabric_fault.h) and one
 * iteration under them (models/step_fault.h): parsing and digests; routes
 * that avoid what is down and still connect every pair; no failed part =
 * today's iteration bit for bit; repair restores it exactly; removing a
 * spine never speeds a symmetric iteration up; a slow link on a single-flow
 * path gives the closed form; gpu=ID:speed is the straggler path; GPUs cut
 * off are refused, naming the part; transceiver cages partition a
 * switch's cables. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fabric_fault.h"
#include "step_fault.h"

#include "step_fixture.h"

static ff_state state_of(const char *const *words, size_t n)
{
    ff_state s;
    ff_state_init(&s);
    for (size_t i = 0; i < n; i++) {
        ff_part p;
        char why[256];
        CHECK(ff_part_parse(words[i], &p, why, sizeof why) == 0);
        CHECK(ff_state_add(&s, &p) == 0);
    }
    return s;
}

static void test_parse_and_digest(void)
{
    ff_part p;
    char why[256];
    CHECK(ff_part_parse("link=12", &p, why, sizeof why) == 0);
    CHECK(p.cls == FF_LINK && p.id == 12 && p.speed == 0);
    CHECK(ff_part_parse("gpu=3:0.5", &p, why, sizeof why) == 0);
    CHECK(p.cls == FF_GPU && p.id == 3 && p.speed == 0.5);
    const char *bad[] = {"link", "cable=3", "link=x", "link=-1", "gpu=3:1.5", "gpu=3:-0.1",
                         "gpu=3:", "switch=4:0.5x", "link=99999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK(ff_part_parse(bad[i], &p, why, sizeof why) == -1);
        CHECK(strchr(why, '\n') == NULL && why[0]);
    }
    /* the digest is of the sorted set: the order given does not matter */
    const char *a[] = {"switch=80", "link=12:0.5"}, *b[] = {"link=12:0.5", "switch=80"};
    ff_state sa = state_of(a, 2), sb = state_of(b, 2);
    CHECK(ff_state_digest(&sa) == ff_state_digest(&sb));
    char text[128];
    ff_state_text(&sa, text, sizeof text);
    CHECK_STR_EQ(text, "link=12:0.5, switch=80");
    /* a different speed is a different state */
    const char *c[] = {"switch=80", "link=12:0.25"};
    ff_state sc = state_of(c, 2);
    CHECK(ff_state_digest(&sa) != ff_state_digest(&sc));
    /* repaired (speed 1): out of the state, the empty state's digest */
    const char *d[] = {"switch=80", "link=12", "switch=80:1", "link=12:1"};
    ff_state sd = state_of(d, 4), empty;
    ff_state_init(&empty);
    CHECK_INT_EQ(sd.n, 0);
    CHECK(ff_state_digest(&sd) == ff_state_digest(&empty));
    ff_state_text(&sd, text, sizeof text);
    CHECK_STR_EQ(text, "none");
    ff_state_fini(&sa);
    ff_state_fini(&sb);
    ff_state_fini(&sc);
    ff_state_fini(&sd);
}

/* the fabric for gpus GPUs of fc, built */
static int build(fabric_config fc, unsigned gpus, fabric *f)
{
    sim_error err;
    sim_error_clear(&err);
    fc.gpus = gpus;
    int rc = fabric_build(&fc, f, &err);
    if (rc)
        fprintf(stderr, "fabric: %s\n", err.msg);
    return rc;
}

/* st on f as a degraded fabric; 0 or non-zero with the reason on stderr */
static int degrade(const fabric *f, const ff_state *st, fabric *out, ff_effect *e)
{
    sim_error err;
    sim_error_clear(&err);
    int rc = ff_effect_compute(f, st, e, &err);
    if (!rc && (rc = fabric_degrade(f, e, out, &err)) != 0)
        ff_effect_fini(e);
    if (rc)
        fprintf(stderr, "degrade: %s\n", err.msg);
    return rc;
}

/* the first and past-last fabric switch of tier t */
static void tier_range(const topo_graph *g, unsigned t, uint32_t *first, uint32_t *end)
{
    *first = *end = 0;
    for (uint32_t v = 0; v < g->n_nodes; v++)
        if (g->node_kind[v] == TOPO_SWITCH && g->node_tier[v] == t) {
            if (*end == 0)
                *first = v;
            *end = v + 1;
        }
}

/* Every ordered pair of a few hosts on different leaves still has a route
 * with a spine down, it takes no down link, and an empty state routes
 * exactly as the fabric as built. */
static void test_routes(fabric_config fc, unsigned gpus, unsigned tier,
                        enum topo_balance balance)
{
    fabric f, d, same;
    ff_effect e, e0;
    fc.routing.balance = balance;
    if (build(fc, gpus, &f))
        return;
    uint32_t s0, s1;
    tier_range(&f.g, tier, &s0, &s1);
    CHECK(s1 > s0 + 1);
    char word[32];
    snprintf(word, sizeof word, "switch=%u", s0);
    const char *w[] = {word};
    ff_state st = state_of(w, 1), none;
    ff_state_init(&none);
    CHECK(degrade(&f, &st, &d, &e) == 0);
    CHECK(degrade(&f, &none, &same, &e0) == 0);
    CHECK(d.g.link_is_down != NULL && same.g.link_is_down == NULL);
    size_t cap = f.g.n_links;
    topo_usage *u = malloc(cap * sizeof *u), *v = malloc(cap * sizeof *v);
    unsigned hosts[] = {0, 1, 47, 48, 95, 96, 150, gpus - 1}, pairs = 0, down_used = 0,
             differ = 0;
    for (unsigned i = 0; i < 8; i++)
        for (unsigned j = 0; j < 8; j++) {
            if (i == j)
                continue;
            long n = topo_route(d.router, hosts[i], hosts[j], 77 + i * 8 + j, NULL, u, cap);
            CHECK(n > 0);
            for (long k = 0; k < n; k++)
                down_used += d.g.link_is_down[u[k].link];
            long a = topo_route(f.router, hosts[i], hosts[j], 77 + i * 8 + j, NULL, u, cap);
            long b = topo_route(same.router, hosts[i], hosts[j], 77 + i * 8 + j, NULL, v, cap);
            CHECK(a == b && a > 0);
            for (long k = 0; a == b && k < a; k++)
                differ += u[k].link != v[k].link || u[k].weight != v[k].weight;
            pairs++;
        }
    CHECK_INT_EQ(pairs, 56);
    CHECK_INT_EQ(down_used, 0);
    CHECK_INT_EQ(differ, 0);
    /* the spine's every cable, both directions */
    CHECK_INT_EQ(e.links_down, 2 * (f.g.out_offset[s0 + 1] - f.g.out_offset[s0]));
    free(u);
    free(v);
    ff_effect_fini(&e);
    ff_effect_fini(&e0);
    fabric_free(&d);
    fabric_free(&same);
    fabric_free(&f);
    ff_state_fini(&st);
}

static int same_profile(const step_profile *a, const step_profile *b)
{
    return a->n_links == b->n_links &&
           !memcmp(&a->iteration_s, &b->iteration_s, sizeof a->iteration_s) &&
           !memcmp(a->part_s, b->part_s, sizeof a->part_s) &&
           !memcmp(a->link_bytes, b->link_bytes, a->n_links * sizeof *a->link_bytes);
}

/* step_simulate_failed of w on fc (gpus GPUs) under the words; the
 * iteration, or -1 when refused (the reason in why) */
static double iteration(const workload *w, fabric *f, const char *const *words, size_t n,
                        const step_options *o, step_profile *out, char *why, size_t size)
{
    ff_state st = state_of(words, n);
    sim_error err;
    sim_error_clear(&err);
    int rc = step_simulate_failed(w, &dev, f, &st, o, out, &err);
    ff_state_fini(&st);
    if (why)
        snprintf(why, size, "%s", rc ? err.msg : "");
    return rc ? -1 : out->iteration_s;
}

/* No failed part: today's profile bit for bit, on the base fabric and on a
 * degraded copy with every speed 1; fail then repair: the same again. */
static void test_bit_for_bit(int concurrent)
{
    model_arch m = model();
    parallel_config p = par(8, 2, 12, 96);
    workload w;
    sim_error err;
    sim_error_clear(&err);
    CHECK(workload_build(&m, &p, 192, &w, &err) == 0);
    fabric f;
    if (build(roce_leafspine(), 192, &f))
        return;
    step_options o;
    step_options_defaults(&o);
    o.concurrent = concurrent;
    step_profile base, none, repaired, failed, copy;
    CHECK(step_simulate(&w, &dev, &f, &o, &base, &err) == 0);
    CHECK(iteration(&w, &f, NULL, 0, &o, &none, NULL, 0) > 0);
    CHECK(same_profile(&base, &none));
    uint32_t s0, s1;
    tier_range(&f.g, 2, &s0, &s1);
    char word[32];
    snprintf(word, sizeof word, "switch=%u", s0 + 1);
    char up[40];
    snprintf(up, sizeof up, "%s:1", word);
    const char *down[] = {word}, *fixed[] = {word, up};
    CHECK(iteration(&w, &f, down, 1, &o, &failed, NULL, 0) > 0);
    CHECK(iteration(&w, &f, fixed, 2, &o, &repaired, NULL, 0) > 0);
    CHECK(same_profile(&base, &repaired));
    CHECK(failed.iteration_s >= base.iteration_s);
    /* the degraded copy with nothing down routes and prices as built */
    ff_state none_st;
    ff_state_init(&none_st);
    fabric same;
    ff_effect e;
    CHECK(degrade(&f, &none_st, &same, &e) == 0);
    CHECK(step_simulate(&w, &dev, &same, &o, &copy, &err) == 0);
    CHECK(same_profile(&base, &copy));
    printf("bit for bit (%s): as built %.9f s, spine %u down %.9f s\n",
           concurrent ? "concurrent" : "flow", base.iteration_s, s0 + 1, failed.iteration_s);
    ff_effect_fini(&e);
    fabric_free(&same);
    step_profile_free(&base);
    step_profile_free(&none);
    step_profile_free(&repaired);
    step_profile_free(&failed);
    step_profile_free(&copy);
    fabric_free(&f);
    workload_free(&w);
}

/* the DP reduction's time (the gradient collectives, hidden or not) */
static double dp_s(const step_profile *p)
{
    return p->coll_total_s[COMM_DP_ALLREDUCE] + p->coll_total_s[COMM_DP_REDUCE_SCATTER] +
           p->coll_total_s[COMM_DP_ALLGATHER];
}

/* Symmetric traffic (every DP group reducing at once across four leaves,
 * PP sends between them):
 * each spine down in turn, and each cable of leaf 0's uplinks, never makes
 * the iteration faster, under balancing that spreads evenly (spray) or by
 * load (adaptive). ECMP's hash is left out: re-hashing over fewer spines can
 * by chance collide less (docs/failures.md). */
static void test_never_faster(enum topo_balance balance, int concurrent)
{
    model_arch m = model();
    parallel_config p = par(8, 2, 12, 96);
    workload w;
    sim_error err;
    sim_error_clear(&err);
    CHECK(workload_build(&m, &p, 192, &w, &err) == 0);
    fabric_config fc = roce_leafspine();
    fc.routing.balance = balance;
    fabric f;
    if (build(fc, 192, &f))
        return;
    step_options o;
    step_options_defaults(&o);
    o.concurrent = concurrent;
    step_profile base, q;
    CHECK(step_simulate(&w, &dev, &f, &o, &base, &err) == 0);
    uint32_t s0, s1, l0, l1;
    tier_range(&f.g, 2, &s0, &s1);
    tier_range(&f.g, 1, &l0, &l1);
    unsigned runs = 0, slower = 0;
    double worst = base.iteration_s;
    for (uint32_t s = s0; s < s1; s++) {
        char word[32];
        snprintf(word, sizeof word, "switch=%u", s);
        const char *wd[] = {word};
        double t = iteration(&w, &f, wd, 1, &o, &q, NULL, 0);
        CHECK(t >= base.iteration_s);
        CHECK(dp_s(&q) >= dp_s(&base));
        slower += t > base.iteration_s || dp_s(&q) > dp_s(&base);
        worst = fmax(worst, t);
        runs++;
        step_profile_free(&q);
    }
    for (uint32_t i = f.g.out_offset[l0]; i < f.g.out_offset[l0 + 1]; i++) {
        uint32_t l = f.g.out_links[i];
        if (f.g.node_kind[f.g.link_dst[l]] != TOPO_SWITCH)
            continue;
        char word[32];
        snprintf(word, sizeof word, "link=%u", l);
        const char *wd[] = {word};
        double t = iteration(&w, &f, wd, 1, &o, &q, NULL, 0);
        CHECK(t >= base.iteration_s);
        CHECK(dp_s(&q) >= dp_s(&base));
        runs++;
        step_profile_free(&q);
    }
    CHECK(runs >= 2 * (s1 - s0));
    CHECK(slower > 0); /* PP and DP traffic cross the spines: losing one costs */
    printf("never faster (%s, %s): %u failures, as built %.9f s, worst %.9f s\n",
           topo_balance_name(balance), concurrent ? "concurrent" : "flow", runs,
           base.iteration_s, worst);
    step_profile_free(&base);
    fabric_free(&f);
    workload_free(&w);
}

/* One flow host 0 -> host 100 (another leaf) of B bytes: its port at speed
 * s makes it B/(s c) - B/c slower (the first link is its bottleneck). */
static void test_slow_link_closed_form(void)
{
    fabric f;
    if (build(roce_leafspine(), 192, &f))
        return;
    const double B = 1e9, s = 0.25;
    uint32_t src = 0, dst = 100;
    nc_plan plan;
    nc_result a, b;
    sim_error err;
    sim_error_clear(&err);
    CHECK(nc_plan_permutation(&plan, &f.nc, &src, &dst, 1, B, &err) == 0);
    CHECK(nc_simulate(&plan, &f.nc, &a, &err) == 0);
    const char *w[] = {"nic=0:0.25"};
    ff_state st = state_of(w, 1);
    fabric d;
    ff_effect e;
    CHECK(degrade(&f, &st, &d, &e) == 0);
    CHECK_INT_EQ(e.links_slow, 2);
    CHECK(nc_simulate(&plan, &d.nc, &b, &err) == 0);
    double c = f.g.link_bytes_per_s[f.g.out_links[f.g.out_offset[0]]];
    printf("slow port: %.9g s -> %.9g s (closed form + %.9g s)\n", a.time_s, b.time_s,
           B / (s * c) - B / c);
    CHECK_REL(b.time_s - a.time_s, B / (s * c) - B / c, 1e-9);
    nc_plan_free(&plan);
    ff_effect_fini(&e);
    fabric_free(&d);
    fabric_free(&f);
    ff_state_fini(&st);
}

/* gpu=ID:speed is the straggler path (step_options.gpu_speed), bit for bit;
 * node=ID:speed slows every GPU of the server alike. */
static void test_gpu_speed(void)
{
    model_arch m = model();
    parallel_config p = par(8, 2, 2, 16);
    workload w;
    sim_error err;
    sim_error_clear(&err);
    CHECK(workload_build(&m, &p, 32, &w, &err) == 0);
    fabric f;
    if (build(roce_leafspine(), 32, &f))
        return;
    step_options o;
    step_options_defaults(&o);
    double speed[32];
    for (int k = 0; k < 32; k++)
        speed[k] = 1;
    speed[5] = 0.8;
    step_options so = o;
    so.gpu_speed = speed;
    so.n_gpu_speed = 32;
    step_profile a, b, c, d;
    CHECK(step_simulate(&w, &dev, &f, &so, &a, &err) == 0);
    const char *wd[] = {"gpu=5:0.8"};
    CHECK(iteration(&w, &f, wd, 1, &o, &b, NULL, 0) > 0);
    CHECK(same_profile(&a, &b));
    CHECK(b.iteration_s > 0 && b.slowest_gpu == 5);
    for (int k = 8; k < 16; k++)
        speed[k] = 0.8;
    speed[5] = 1;
    CHECK(step_simulate(&w, &dev, &f, &so, &c, &err) == 0);
    const char *nd[] = {"node=1:0.8"};
    CHECK(iteration(&w, &f, nd, 1, &o, &d, NULL, 0) > 0);
    CHECK(same_profile(&c, &d));
    step_profile_free(&a);
    step_profile_free(&b);
    step_profile_free(&c);
    step_profile_free(&d);
    fabric_free(&f);
    workload_free(&w);
}

/* Refusals: one line naming the part and the GPUs it takes. */
static void test_refusals(void)
{
    model_arch m = model();
    parallel_config p = par(8, 2, 6, 48);
    workload w;
    sim_error err;
    sim_error_clear(&err);
    CHECK(workload_build(&m, &p, 96, &w, &err) == 0);
    fabric f;
    if (build(roce_leafspine(), 96, &f))
        return;
    step_options o;
    step_options_defaults(&o);
    step_profile q;
    char why[1024], leaf[32], host[32];
    uint32_t l0, l1;
    tier_range(&f.g, 1, &l0, &l1);
    snprintf(leaf, sizeof leaf, "switch=%u", l0 + 1);
    snprintf(host, sizeof host, "switch=%u", 3);
    const char *cases[][1] = {{leaf}, {"nic=7"}, {"gpu=9"}, {"node=2"}, {"link=999999"},
                              {host}, {"gpu=96:0.5"}};
    const char *expect[] = {"cuts GPUs 48-95 off the fabric", "nic=7 cuts GPU 7 off the fabric",
                            "gpu=9 takes out GPU 9", "node=2 takes out GPUs 16-23",
                            "link=999999: no directed link", "node 3 is no fabric switch",
                            "gpu=96:0.5: no such gpu"};
    for (size_t i = 0; i < sizeof expect / sizeof *expect; i++) {
        CHECK(iteration(&w, &f, cases[i], 1, &o, &q, why, sizeof why) < 0);
        CHECK(strstr(why, expect[i]) != NULL);
        CHECK(strchr(why, '\n') == NULL);
        if (!strstr(why, expect[i]))
            fprintf(stderr, "  got: %s\n", why);
    }
    fabric_free(&f);
    workload_free(&w);
}

/* the group of host h's router */
static uint32_t router_group(const topo_graph *g, uint32_t h)
{
    for (uint32_t i = g->out_offset[h]; i < g->out_offset[h + 1]; i++)
        if (g->node_kind[g->link_dst[g->out_links[i]]] == TOPO_SWITCH)
            return g->node_group[g->link_dst[g->out_links[i]]];
    return TOPO_NO_GROUP;
}

/* A small Dragonfly with its first global cable down (groups 0 and 1 lose
 * their only one): under Valiant and UGAL every ordered pair of hosts still
 * has a route (a detour's third group has links left on both legs, also for
 * pairs whose detour could have gone through the failed pair) and none
 * takes the down link; under minimal routing exactly the pairs across the
 * two groups have none. */
static void test_dragonfly_global_down(void)
{
    scn_scenario s;
    sim_error err;
    sim_error_clear(&err);
    if (scn_load(DCSIM_SOURCE_DIR "/tests/scenarios/dragonfly-small.xml", NULL, 0, &s, &err)) {
        fprintf(stderr, "dragonfly-small.xml: %s\n", err.msg);
        CHECK(0);
        return;
    }
    for (int pc = TOPO_PATH_MINIMAL; pc < TOPO_PATH_COUNT; pc++) {
        fabric_config fc = s.fabric;
        fc.routing.path_class = (enum topo_path_class)pc;
        fabric f, d;
        ff_effect e;
        if (build(fc, fc.gpus, &f))
            break;
        const topo_graph *g = &f.g;
        uint32_t global = UINT32_MAX;
        for (uint32_t l = 0; l < g->n_links && global == UINT32_MAX; l += 2)
            if (g->node_kind[g->link_src[l]] == TOPO_SWITCH &&
                g->node_kind[g->link_dst[l]] == TOPO_SWITCH &&
                g->node_group[g->link_src[l]] != g->node_group[g->link_dst[l]])
                global = l;
        CHECK(global != UINT32_MAX);
        uint32_t ga = g->node_group[g->link_src[global]], gb = g->node_group[g->link_dst[global]];
        ff_state st;
        ff_state_init(&st);
        ff_state_add(&st, &(ff_part){FF_LINK, global, 0});
        CHECK(degrade(&f, &st, &d, &e) == 0);
        size_t cap = g->n_links;
        topo_usage *u = malloc(cap * sizeof *u);
        unsigned routed = 0, refused = 0, refused_other = 0, down_used = 0, across = 0;
        for (uint32_t a = 0; a < g->n_hosts; a++)
            for (uint32_t b = 0; b < g->n_hosts; b++) {
                uint32_t xa = router_group(g, a), xb = router_group(g, b);
                if (a == b)
                    continue;
                long n = topo_route(d.router, a, b, 11 + a * 131 + b, NULL, u, cap);
                int cross = (xa == ga && xb == gb) || (xa == gb && xb == ga);
                across += (unsigned)cross;
                if (n > 0) {
                    routed++;
                    for (long k = 0; k < n; k++)
                        down_used += d.g.link_is_down[u[k].link];
                } else
                    *(cross ? &refused : &refused_other) += 1;
            }
        CHECK(across > 0);
        CHECK_INT_EQ(down_used, 0);
        CHECK_INT_EQ(refused_other, 0); /* only the failed pair may lose its routes */
        if (pc == TOPO_PATH_MINIMAL)
            CHECK_INT_EQ(refused, across); /* one global hop, and it is gone */
        else
            CHECK_INT_EQ(refused, 0);
        CHECK(routed > 0);
        free(u);
        ff_effect_fini(&e);
        fabric_free(&d);
        fabric_free(&f);
        ff_state_fini(&st);
    }
    scn_scenario_free(&s);
}

/* transceiver=ID: the cages of every switch (ff_transceivers) partition its
 * cables, two a cage in link id order (the last may hold one), each cage
 * named by its first port; any port names its cage; the digest ignores the
 * order and takes cage_ports when given; refusals (no port form, a host's
 * link, a link out of range) */
static void test_transceivers(void)
{
    fabric f;
    if (build(roce_leafspine(), 192, &f)) {
        CHECK(0);
        return;
    }
    const topo_graph *g = &f.g;
    sim_error err;
    sim_error_clear(&err);
    uint64_t n = 0;
    CHECK(ff_transceivers(&f, 0, -1, NULL, &n, &err) == SIM_ERR_INPUT); /* roce-400g */
    CHECK(strstr(err.msg, "no port form") != NULL);
    sim_error_clear(&err);
    CHECK(ff_transceivers(&f, 2, -1, NULL, &n, &err) == 0);
    uint64_t want = 0;
    for (uint32_t v = 0; v < g->n_nodes; v++)
        if (g->node_kind[v] == TOPO_SWITCH)
            want += (g->out_offset[v + 1] - g->out_offset[v] + 1) / 2;
    CHECK_INT_EQ(n, want);
    uint32_t *ids = malloc((size_t)n * sizeof *ids);
    unsigned char *seen = calloc(g->n_links, 1);
    CHECK(ff_transceivers(&f, 2, -1, ids, &n, &err) == 0);
    uint32_t last_switch = UINT32_MAX, last_max = 0;
    for (uint64_t k = 0; k < n; k++) {
        uint32_t v = g->link_src[ids[k]];
        CHECK(g->node_kind[v] == TOPO_SWITCH);
        ff_state st;
        ff_state_init(&st);
        st.cage_ports = 2;
        ff_part p = {FF_TRANSCEIVER, ids[k], 0};
        CHECK(ff_state_add(&st, &p) == 0);
        ff_effect e = {0};
        CHECK(ff_effect_compute(&f, &st, &e, &err) == 0);
        uint32_t mine = 0, lo = UINT32_MAX, hi = 0;
        for (uint32_t l = 0; l < g->n_links; l++) {
            if (e.link_speed[l] != 0)
                continue;
            CHECK(g->link_src[l] == v || g->link_dst[l] == v);
            if (g->link_src[l] != v)
                continue;
            CHECK(!seen[l]); /* no port in two cages */
            seen[l] = 1;
            mine++;
            lo = l < lo ? l : lo;
            hi = l > hi ? l : hi;
        }
        CHECK(mine == 2 || mine == 1);
        CHECK_INT_EQ(e.links_down, 2 * mine);
        CHECK(lo == ids[k]); /* named by its first port */
        CHECK(v != last_switch || lo > last_max); /* cages in port id order */
        last_switch = v;
        last_max = hi;
        /* the cage's other port names the same cage */
        if (mine == 2) {
            ff_state other;
            ff_state_init(&other);
            other.cage_ports = 2;
            ff_part q = {FF_TRANSCEIVER, hi, 0};
            CHECK(ff_state_add(&other, &q) == 0);
            ff_effect e2 = {0};
            CHECK(ff_effect_compute(&f, &other, &e2, &err) == 0);
            CHECK(memcmp(e.link_speed, e2.link_speed, g->n_links * sizeof *e.link_speed) == 0);
            ff_effect_fini(&e2);
            ff_state_fini(&other);
        }
        ff_effect_fini(&e);
        ff_state_fini(&st);
    }
    for (uint32_t l = 0; l < g->n_links; l++) /* every switch port in a cage */
        CHECK(seen[l] == (g->node_kind[g->link_src[l]] == TOPO_SWITCH));
    /* the digest: order does not matter; the ports per cage count once given */
    const char *a[] = {"transceiver=4128", "link=12:0.5"}, *b[] = {"link=12:0.5",
                                                                   "transceiver=4128"};
    ff_state sa = state_of(a, 2), sb = state_of(b, 2);
    CHECK(ff_state_digest(&sa) == ff_state_digest(&sb));
    sa.cage_ports = 2;
    CHECK(ff_state_digest(&sa) != ff_state_digest(&sb));
    sb.cage_ports = 2;
    CHECK(ff_state_digest(&sa) == ff_state_digest(&sb));
    /* host-side cages (tier 0): every GPU's fabric port in exactly one cage
     * of two ports of one server (8 GPUs a server), named by its first port */
    unsigned char *host_seen = calloc(g->n_links, 1);
    uint64_t hn = 0;
    sim_error_clear(&err);
    CHECK(ff_transceivers(&f, 0, 0, NULL, &hn, &err) == SIM_ERR_INPUT); /* no port form */
    CHECK(strstr(err.msg, "servers' port form") != NULL);
    sim_error_clear(&err);
    CHECK(ff_transceivers(&f, 2, 0, NULL, &hn, &err) == 0);
    CHECK_INT_EQ(hn, 192 / 2);
    uint32_t *hids = malloc((size_t)hn * sizeof *hids);
    CHECK(ff_transceivers(&f, 2, 0, hids, &hn, &err) == 0);
    for (uint64_t k = 0; host_seen && hids && k < hn; k++) {
        ff_state st;
        ff_state_init(&st);
        st.cage_ports = 2;
        ff_part p = {FF_TRANSCEIVER, hids[k], 0.5};
        CHECK(ff_state_add(&st, &p) == 0);
        ff_effect e = {0};
        CHECK(ff_effect_compute(&f, &st, &e, &err) == 0);
        uint32_t mine = 0, lo = UINT32_MAX, server = UINT32_MAX;
        for (uint32_t l = 0; l < g->n_links; l++) {
            if (e.link_speed[l] == 1 || g->node_kind[g->link_src[l]] != TOPO_HOST)
                continue;
            uint32_t h = g->link_src[l];
            CHECK(h < 192 && g->node_kind[g->link_dst[l]] == TOPO_SWITCH);
            CHECK(server == UINT32_MAX || server == h / 8); /* one server's ports */
            server = h / 8;
            CHECK(!host_seen[l]);
            host_seen[l] = 1;
            mine++;
            lo = l < lo ? l : lo;
        }
        CHECK_INT_EQ(mine, 2);
        CHECK_INT_EQ(e.links_slow, 4);
        CHECK(lo == hids[k]);
        ff_effect_fini(&e);
        ff_state_fini(&st);
    }
    for (uint32_t l = 0; host_seen && l < g->n_links; l++) /* every GPU's fabric port */
        CHECK(host_seen[l] == (g->node_kind[g->link_src[l]] == TOPO_HOST &&
                               g->link_src[l] < 192 &&
                               g->node_kind[g->link_dst[l]] == TOPO_SWITCH));
    free(hids);
    free(host_seen);
    /* refusals: a host's link without the servers' port form, a link out of range */
    const char *bad[] = {"transceiver=0", "transceiver=99999"};
    for (int i = 0; i < 2; i++) {
        ff_state st = state_of(&bad[i], 1);
        st.cage_ports = i ? 2 : 0;
        ff_effect e = {0};
        sim_error_clear(&err);
        CHECK(ff_effect_compute(&f, &st, &e, &err) == SIM_ERR_INPUT);
        CHECK(strchr(err.msg, '\n') == NULL && err.msg[0]);
        ff_state_fini(&st);
    }
    ff_state_fini(&sa);
    ff_state_fini(&sb);
    free(ids);
    free(seen);
    fabric_free(&f);
}

int main(void)
{
    if (fixture_init())
        return 1;
    test_parse_and_digest();
    test_routes(roce_leafspine(), 192, 2, TOPO_BALANCE_ECMP);
    test_routes(roce_leafspine(), 192, 2, TOPO_BALANCE_ADAPTIVE);
    test_routes(roce_leafspine(), 192, 2, TOPO_BALANCE_SPRAY);
    test_routes(rail_ndr(512), 512, 2, TOPO_BALANCE_ECMP); /* a spine of a rail group */
    test_bit_for_bit(0);
    test_bit_for_bit(1);
    test_never_faster(TOPO_BALANCE_SPRAY, 0);
    test_never_faster(TOPO_BALANCE_ADAPTIVE, 0);
    test_never_faster(TOPO_BALANCE_ADAPTIVE, 1);
    test_slow_link_closed_form();
    test_gpu_speed();
    test_refusals();
    test_dragonfly_global_down();
    test_transceivers();
    scn_catalog_free(cat);
    return check_report();
}
