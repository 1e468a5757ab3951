/* test_fabric_counts.c - fabric_count (closed forms, nothing built) against
 * fabric_build + topo_stats_count on the built graph, exactly: hosts,
 * switches and cables per tier, scale-up domains and cables, directed links,
 * switch groups and the folded-Clos flag. Over the fabric of every example
 * scenario (scenarios/examples) and a matrix of every registry kind: small and large sizes, every
 * oversubscription rule, 2 and 3 tiers, planes, scale-up domains, the
 * rail-optimised SU rounding (3 -> 4, 9 -> 16 SUs), Dragonfly arrangements
 * and group counts, path classes. Where either refuses, both refuse with the
 * same message and SIM_ERR_INPUT: fabric_count is the loader's only check
 * (sim/app/scenario/cluster.c parse_fabric), so it must refuse exactly what the
 * build refuses. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fabric.h"
#include "scenario.h"
#include "stats.h"

static scn_catalog *cat;
static int n_built, n_refused;

static uint32_t switch_groups(const topo_graph *g)
{
    uint32_t n = 0;
    for (uint32_t v = 0; v < g->n_nodes; v++)
        if (g->node_kind[v] == TOPO_SWITCH && g->node_group[v] != TOPO_NO_GROUP &&
            g->node_group[v] + 1 > n)
            n = g->node_group[v] + 1;
    return n;
}

/* count and build agree on c; label names the case in a failure */
static void agree(const fabric_config *c, const char *label)
{
    topo_counts n;
    memset(&n, 0xab, sizeof n);
    sim_error ce, be;
    sim_error_clear(&ce);
    sim_error_clear(&be);
    fabric f;
    int counted = fabric_count(c, &n, &ce), built = fabric_build(c, &f, &be);
    if ((counted != 0) != (built != 0) || strcmp(ce.msg, be.msg)) {
        fprintf(stderr, "%s: count %d \"%s\", build %d \"%s\"\n", label, counted, ce.msg, built,
                be.msg);
        CHECK(0);
        if (!built)
            fabric_free(&f);
        return;
    }
    if (counted) {
        CHECK_INT_EQ(ce.code, SIM_ERR_INPUT);
        CHECK_INT_EQ(be.code, SIM_ERR_INPUT);
        n_refused++;
        return;
    }
    topo_stats st;
    char why[256];
    CHECK_INT_EQ(topo_stats_count(&f.g, &st, why, sizeof why), 0);
    int same = n.hosts == st.n_hosts && n.scaleup_domains == st.n_scaleup_domains &&
               n.scaleup_cables == st.n_scaleup_cables && n.updown == f.g.updown &&
               n.groups == switch_groups(&f.g) && n.nics == st.n_nics &&
               n.nic_cables == st.n_nic_cables;
    uint64_t cables = n.scaleup_cables + n.nic_cables;
    for (int t = 0; t <= TOPO_STATS_MAX_TIER; t++) {
        same = same && n.switches[t] == st.switches_per_tier[t] &&
               n.cables[t] == st.cables_per_tier[t];
        cables += n.cables[t];
    }
    same = same && 2 * cables == st.n_links;
    if (!same)
        fprintf(stderr, "%s: counts differ from the built graph (hosts %llu/%u, switches "
                        "%llu %llu %llu/%u %u %u, cables %llu %llu %llu/%u %u %u, groups %u/%u)\n",
                label, (unsigned long long)n.hosts, st.n_hosts,
                (unsigned long long)n.switches[1], (unsigned long long)n.switches[2],
                (unsigned long long)n.switches[3], st.switches_per_tier[1],
                st.switches_per_tier[2], st.switches_per_tier[3],
                (unsigned long long)n.cables[0], (unsigned long long)n.cables[1],
                (unsigned long long)n.cables[2], st.cables_per_tier[0], st.cables_per_tier[1],
                st.cables_per_tier[2], n.groups, switch_groups(&f.g));
    CHECK(same);
    n_built++;
    fabric_free(&f);
}

static fabric_config base(const char *topology, unsigned gpus, unsigned per_node)
{
    fabric_config c;
    memset(&c, 0, sizeof c);
    c.topology = topo_kind_find(topology);
    CHECK(c.topology != NULL);
    c.gpus = gpus;
    c.gpus_per_node = per_node;
    c.link = *scn_catalog_link(cat, "ib-ndr");
    c.scaleup = *scn_catalog_link(cat, "nvlink4");
    c.scaleup_bytes_per_s = 450e9;
    c.shape.nodes_per_su = 32;
    c.routing.qps = 1;
    c.routing.balance = TOPO_BALANCE_ADAPTIVE;
    return c;
}

static void test_examples(void)
{
    DIR *d = opendir(DCSIM_SOURCE_DIR "/scenarios/examples");
    CHECK(d != NULL);
    int fabrics = 0;
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d)) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".xml"))
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/scenarios/examples/%s", DCSIM_SOURCE_DIR, e->d_name);
        scn_scenario s;
        sim_error err;
        sim_error_clear(&err);
        CHECK_INT_EQ(scn_load_flags(path, NULL, 0, SCN_LOAD_NO_FIT_CHECK | SCN_LOAD_SERVING, &s,
                                    &err), 0);
        if (err.code)
            continue;
        if (s.has_fabric) {
            agree(&s.fabric, e->d_name);
            topo_counts n;
            CHECK_INT_EQ(fabric_count(&s.fabric, &n, &err), 0);
            for (int t = 0; t <= 4; t++) { /* what the loader keeps for failures */
                CHECK_INT_EQ(s.fabric_switches[t], n.switches[t]);
                CHECK_INT_EQ(s.fabric_cables[t], n.cables[t]);
            }
            fabrics++;
        }
        scn_scenario_free(&s);
    }
    if (d)
        closedir(d);
    CHECK(fabrics >= 3);
}

static void test_fat_tree(void)
{
    unsigned ks[] = {0, 2, 3, 4, 6, 8, 16, 32, 64, 258};
    unsigned per_node[] = {1, 2, 8};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        for (unsigned planes = 1; planes <= 2; planes++)
            for (size_t j = 0; j < 3; j++) {
                unsigned k = ks[i], full = k * k * k / 4;
                unsigned sizes[] = {1, full ? full : 1, full + 1, full / 2 + 3};
                for (size_t m = 0; m < 4; m++) {
                    if (k == 64 && (planes > 1 || m > 1))
                        continue; /* one large build is enough */
                    fabric_config c = base("fat-tree", sizes[m], per_node[j]);
                    c.shape.k = k, c.shape.planes = planes;
                    char label[96];
                    snprintf(label, sizeof label, "fat-tree k=%u planes=%u gpus=%u/%u", k,
                             planes, sizes[m], per_node[j]);
                    agree(&c, label);
                }
            }
}

static void test_leaf_spine(void)
{
    unsigned radixes[] = {1, 4, 8, 12, 16, 64};
    unsigned overs[][2] = {{0, 0}, {3, 1}, {2, 1}, {7, 1}, {1, 3}, {1000, 1}};
    unsigned gpus[] = {1, 7, 24, 100, 200, 2048, 16384};
    for (size_t r = 0; r < sizeof radixes / sizeof radixes[0]; r++)
        for (size_t o = 0; o < sizeof overs / sizeof overs[0]; o++)
            for (unsigned tiers = 0; tiers <= 3; tiers++)
                for (size_t g = 0; g < sizeof gpus / sizeof gpus[0]; g++)
                    for (unsigned per_node = 1; per_node <= 8; per_node *= 8) {
                        if (tiers == 1)
                            continue;
                        fabric_config c = base("leaf-spine", gpus[g], per_node);
                        c.shape.radix = radixes[r], c.shape.tiers = tiers;
                        c.shape.over_down = overs[o][0], c.shape.over_up = overs[o][1];
                        c.shape.planes = 1 + (unsigned)(g % 3);
                        char label[128];
                        snprintf(label, sizeof label, "leaf-spine radix %u %u:%u tiers %u gpus %u",
                                 radixes[r], overs[o][0], overs[o][1], tiers, gpus[g]);
                        agree(&c, label);
                    }
}

/* Pods and oversubscription above them: hosts-per-leaf (leaf up ports
 * ceil(down u / d)), leaves-per-pod (spine up ports ceil(L u2 / d2)), spine
 * ratios on the radix split, Llama 3's shape (calibration.md 2b: 16 GPUs per
 * ToR, 192 ToRs per 3,072-GPU pod, 7:1 above) at 3,072 to 24,576 GPUs, and
 * the core sized to the pods (4,096 GPUs at radix 64: 320 switches). */
static void test_leaf_spine_pods(void)
{
    struct { unsigned radix, per_leaf, per_pod, d, u, d2, u2; } t[] = {
        {64, 0, 0, 0, 0, 0, 0},   {64, 0, 0, 0, 0, 7, 1},   {64, 0, 0, 3, 1, 3, 1},
        {220, 16, 192, 1, 1, 7, 1}, {256, 16, 192, 1, 2, 7, 1}, {64, 16, 24, 1, 1, 3, 1},
        {16, 4, 6, 1, 1, 5, 1},   {16, 8, 8, 1, 1, 1, 1},   {16, 12, 0, 1, 1, 0, 0},
        {15, 3, 5, 2, 1, 2, 3},   {8, 0, 0, 0, 0, 1000, 1}, {8, 0, 0, 0, 0, 1, 1000},
        {64, 64, 0, 0, 0, 0, 0},  {64, 8, 63, 1, 1, 1, 1},  {200, 16, 192, 1, 1, 7, 1},
    };
    unsigned gpus[] = {1, 100, 3072, 4096, 16384, 24576, 16385};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        for (size_t g = 0; g < sizeof gpus / sizeof gpus[0]; g++)
            for (unsigned tiers = 0; tiers <= 3; tiers += 3) {
                fabric_config c = base("leaf-spine", gpus[g], g % 2 ? 8 : 1);
                c.shape.radix = t[i].radix, c.shape.tiers = tiers;
                c.shape.hosts_per_leaf = t[i].per_leaf, c.shape.leaves_per_pod = t[i].per_pod;
                c.shape.over_down = t[i].d, c.shape.over_up = t[i].u;
                c.shape.spine_over_down = t[i].d2, c.shape.spine_over_up = t[i].u2;
                char label[160];
                snprintf(label, sizeof label, "leaf-spine radix %u per-leaf %u per-pod %u "
                         "%u:%u,%u:%u tiers %u gpus %u", t[i].radix, t[i].per_leaf,
                         t[i].per_pod, t[i].d, t[i].u, t[i].d2, t[i].u2, tiers, gpus[g]);
                agree(&c, label);
            }
    /* the counts the issue names */
    struct { unsigned gpus, radix, per_leaf, per_pod, d2, u2; uint64_t sw[4]; } want[] = {
        {4096, 64, 0, 0, 0, 0, {0, 128, 128, 64}},
        {16384, 64, 0, 0, 0, 0, {0, 512, 512, 256}},
        {24576, 220, 16, 192, 7, 1, {0, 1536, 128, 32}},
        {16384, 220, 16, 192, 7, 1, {0, 1152, 96, 16}},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        fabric_config c = base("leaf-spine", want[i].gpus, 8);
        c.shape.radix = want[i].radix, c.shape.hosts_per_leaf = want[i].per_leaf;
        c.shape.leaves_per_pod = want[i].per_pod;
        c.shape.spine_over_down = want[i].d2, c.shape.spine_over_up = want[i].u2;
        topo_counts n;
        sim_error err;
        sim_error_clear(&err);
        CHECK_INT_EQ(fabric_count(&c, &n, &err), 0);
        for (int t = 1; t <= 3; t++)
            CHECK_INT_EQ(n.switches[t], want[i].sw[t]);
    }
}

/* Shared NICs (topologies/nic.h): nics-per-node below the GPUs of a node
 * on every Clos kind, with planes, and the refusals (more NICs than GPUs,
 * not dividing them). */
static void test_shared_nics(void)
{
    const char *kinds[] = {"fat-tree", "leaf-spine", "rail-optimized", "torus"};
    unsigned nics[] = {1, 2, 4, 8, 3, 16};
    unsigned gpus[] = {64, 1024, 4096, 100};
    for (size_t k = 0; k < 4; k++)
        for (size_t i = 0; i < sizeof nics / sizeof nics[0]; i++)
            for (size_t g = 0; g < sizeof gpus / sizeof gpus[0]; g++)
                for (unsigned planes = 1; planes <= 2; planes++) {
                    fabric_config c = base(kinds[k], gpus[g], 8);
                    c.shape.k = 16, c.shape.radix = 64, c.shape.planes = planes;
                    c.shape.dims[0] = 8, c.shape.dims[1] = 8, c.shape.p = 4;
                    c.shape.nics_per_node = nics[i];
                    char label[128];
                    snprintf(label, sizeof label, "%s nics %u gpus %u planes %u", kinds[k],
                             nics[i], gpus[g], planes);
                    agree(&c, label);
                }
    fabric_config c = base("leaf-spine", 16384, 8);
    c.shape.radix = 64, c.shape.nics_per_node = 4;
    topo_counts n;
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(fabric_count(&c, &n, &err), 0); /* 8,192 NIC ports: 8 pods */
    CHECK_INT_EQ(n.hosts, 16384);
    CHECK_INT_EQ(n.nics, 8192);
    CHECK_INT_EQ(n.cables[0], 8192);
    CHECK_INT_EQ(n.switches[1] + n.switches[2] + n.switches[3], 256 + 256 + 128);
    c.shape.nics_per_node = 3;
    CHECK_INT_EQ(fabric_count(&c, &n, &err), SIM_ERR_INPUT);
    CHECK_STR_EQ(err.msg, "nics-per-node 3 does not divide the 8 GPUs of a node: 8 = 3 x 2 + 2");
}

/* SuperPOD sizes (hardware.md 6.2): 1 to 64 SUs of 32 8-GPU nodes, the
 * rounding of 3 -> 4 and 9 -> 16 SUs, small SUs, odd radixes, refusals */
static void test_rail_optimized(void)
{
    struct { unsigned gpus, per_node, radix, per_su; } t[] = {
        {256, 8, 64, 32},     {512, 8, 64, 32},   {768, 8, 64, 32},   {1024, 8, 64, 32},
        {2304, 8, 64, 32},    {4096, 8, 64, 32},  {16384, 8, 64, 32}, {1004, 8, 64, 32},
        {16384, 8, 64, 1},    {64, 4, 16, 4},     {96, 4, 16, 4},     {200, 4, 16, 4},
        {800, 4, 16, 4},      {48, 4, 15, 3},     {4000, 4, 15, 3},   {64, 1, 8, 4},
        {1000, 2, 8, 5},      {64, 8, 64, 64},    {64, 8, 64, 0},     {8, 8, 2, 1},
        {268435456, 8, 64, 32}, {1u << 30, 1, 64, 1},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        for (unsigned planes = 1; planes <= 2; planes++) {
            if (t[i].gpus > 20000 && planes > 1)
                continue;
            fabric_config c = base("rail-optimized", t[i].gpus, t[i].per_node);
            c.shape.radix = t[i].radix, c.shape.nodes_per_su = t[i].per_su;
            c.shape.planes = planes;
            char label[128];
            snprintf(label, sizeof label, "rail-optimized %u GPUs of %u, radix %u, %u per SU",
                     t[i].gpus, t[i].per_node, t[i].radix, t[i].per_su);
            agree(&c, label);
        }
}

static void test_dragonflies(void)
{
    struct { unsigned p, a, h, groups, radix; } t[] = {
        {2, 4, 2, 0, 0}, {2, 4, 2, 5, 0},  {4, 8, 4, 0, 0}, {4, 8, 4, 34, 0},
        {1, 1, 1, 0, 0}, {1, 2, 1, 3, 0},  {8, 16, 8, 0, 0}, {0, 4, 2, 0, 0},
        {2, 4, 2, 2, 6}, {3, 5, 4, 0, 7},  {3, 5, 4, 9, 8},
    };
    enum topo_path_class classes[] = {TOPO_PATH_MINIMAL, TOPO_PATH_VALIANT, TOPO_PATH_UGAL};
    const char *kinds[] = {"dragonfly", "dragonfly-plus"};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        for (int kind = 0; kind < 2; kind++)
            for (int arr = 0; arr < 3; arr++)
                for (int cls = 0; cls < 3; cls++) {
                    unsigned hosts = t[i].p * t[i].a * (t[i].groups ? t[i].groups
                                                                    : t[i].a * t[i].h + 1);
                    unsigned gpus[] = {hosts ? hosts : 1, hosts / 2 + 1, hosts + 1};
                    for (size_t g = 0; g < 3; g++) {
                        fabric_config c = base(kinds[kind], gpus[g], g == 1 ? 2 : 1);
                        c.shape.p = t[i].p, c.shape.a = c.shape.leaves = t[i].a;
                        c.shape.spines = t[i].h + 1, c.shape.h = t[i].h;
                        c.shape.groups = t[i].groups, c.shape.radix = t[i].radix;
                        c.shape.arrangement = arr;
                        c.shape.planes = 1 + (unsigned)(cls == 2);
                        c.routing.path_class = classes[cls];
                        char label[128];
                        snprintf(label, sizeof label, "%s p %u a %u h %u g %u arr %d cls %d "
                                 "gpus %u", kinds[kind], t[i].p, t[i].a, t[i].h, t[i].groups,
                                 arr, cls, gpus[g]);
                        agree(&c, label);
                    }
                }
}

static void test_torus(void)
{
    unsigned dims[][TOPO_MAX_DIMS] = {{8, 8, 4, 0}, {4, 4, 0, 0}, {2, 2, 2, 0}, {3, 5, 0, 0},
                                      {16, 16, 16, 0}, {5, 0, 0, 0}, {2, 3, 2, 3}, {0, 0, 0, 0},
                                      {1, 4, 0, 0}};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
        for (unsigned p = 0; p <= 4; p += 2)
            for (unsigned per_node = 1; per_node <= 4; per_node *= 4)
                for (int cls = 0; cls < 2; cls++) {
                    fabric_config c = base("torus", 64, per_node);
                    memcpy(c.shape.dims, dims[i], sizeof c.shape.dims);
                    c.shape.p = p;
                    c.shape.planes = 1 + (unsigned)(p == 4);
                    c.routing.path_class = cls ? TOPO_PATH_UGAL : TOPO_PATH_MINIMAL;
                    char label[96];
                    snprintf(label, sizeof label, "torus %ux%ux%ux%u p %u per node %u cls %d",
                             dims[i][0], dims[i][1], dims[i][2], dims[i][3], p, per_node, cls);
                    agree(&c, label);
                }
}

/* the rules before any topology: GPUs, link rate, the registry */
static void test_fabric_rules(void)
{
    fabric_config c = base("fat-tree", 0, 1);
    c.shape.k = 4;
    agree(&c, "no GPUs");
    c.gpus = 16;
    c.link.bytes_per_s = 0;
    agree(&c, "no link rate");
    c = base("fat-tree", 16, 8);
    c.shape.k = 4;
    c.scaleup_bytes_per_s = 0, c.scaleup.bytes_per_s = 0;
    agree(&c, "no scale-up rate");
    /* no silent ideal: a link without an efficiency is refused by name */
    for (int which = 0; which < 2; which++) {
        fabric_config e = base("fat-tree", 16, 8);
        e.shape.k = 4;
        (which ? &e.scaleup : &e.link)->efficiency = 0;
        sim_error why;
        sim_error_clear(&why);
        topo_counts parts;
        CHECK_INT_EQ(fabric_count(&e, &parts, &why), SIM_ERR_INPUT);
        CHECK_CONTAINS(why.msg, which ? "the scale-up link 'nvlink4' has no efficiency"
                                      : "the fabric link 'ib-ndr' has no efficiency");
    }
    c.topology = NULL;
    sim_error err;
    sim_error_clear(&err);
    topo_counts n;
    CHECK_INT_EQ(fabric_count(&c, &n, &err), SIM_ERR_INPUT);
    CHECK_STR_EQ(err.msg, "unknown topology");
}

int main(void)
{
    sim_error err;
    sim_error_clear(&err);
    CHECK_INT_EQ(scn_catalog_load(NULL, &cat, &err), 0);
    test_examples();
    test_fat_tree();
    test_leaf_spine();
    test_leaf_spine_pods();
    test_shared_nics();
    test_rail_optimized();
    test_dragonflies();
    test_torus();
    test_fabric_rules();
    printf("%d fabrics built and counted equal, %d refused alike\n", n_built, n_refused);
    CHECK(n_built > 300);
    CHECK(n_refused > 100);
    scn_catalog_free(cat);
    return check_report();
}
