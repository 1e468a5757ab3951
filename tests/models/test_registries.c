/* test_registries.c - the registries against what names their entries
 * elsewhere, both ways: the failure processes against the XSD's
 * <failure distribution> enumeration; the collective algorithms against
 * any XSD enumeration of algorithms, the --algo table of docs/fabric.md and
 * netbench's --algo error text (as docs/errors.md catalogues it); the
 * engine event kinds against docs/trace-format.md. Plus what each entry
 * promises: unique names that parse back, a doc line, the hooks it needs,
 * failure draws with the process's mean (renewal theory for the residual
 * life), and every algorithm building every collective it claims.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "check.h"
#include "collective.h"
#include "event_kinds.h"
#include "fabric_fault.h"
#include "failure_process.h"
#include "fattree.h"
#include "netcoll.h"
#include "rng.h"
#include "routing.h"

#define MAX_NAMES 64

typedef struct name_list {
    unsigned n;
    char name[MAX_NAMES][64];
} name_list;

static void add_name(name_list *l, const char *s, size_t len)
{
    if (l->n < MAX_NAMES && len < sizeof l->name[0]) {
        memcpy(l->name[l->n], s, len);
        l->name[l->n++][len] = '\0';
    }
}

static int has_name(const name_list *l, const char *s)
{
    for (unsigned i = 0; i < l->n; i++)
        if (!strcmp(l->name[i], s))
            return 1;
    return 0;
}

/* what == registry, both ways, each missing name reported */
static void check_same(const char *what, const name_list *got, const name_list *registry)
{
    for (unsigned i = 0; i < registry->n; i++)
        if (!has_name(got, registry->name[i])) {
            fprintf(stderr, "%s lacks \"%s\" (in the registry)\n", what, registry->name[i]);
            CHECK(0);
        }
    for (unsigned i = 0; i < got->n; i++)
        if (!has_name(registry, got->name[i])) {
            fprintf(stderr, "%s has \"%s\" (not in the registry)\n", what, got->name[i]);
            CHECK(0);
        }
    CHECK_INT_EQ(got->n, registry->n);
}

/* ---- reading the XSD and the docs ---- */

static int is_xs(const xmlNode *n, const char *local)
{
    return n->type == XML_ELEMENT_NODE && xmlStrEqual(n->name, (const xmlChar *)local);
}

static int name_is(const xmlNode *n, const char *name)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)"name");
    int same = v && (!name || xmlStrEqual(v, (const xmlChar *)name));
    xmlFree(v);
    return same;
}

/* The xs:enumeration values under n */
static void enumerations(const xmlNode *n, name_list *out)
{
    for (const xmlNode *c = n->children; c; c = c->next) {
        if (is_xs(c, "enumeration")) {
            xmlChar *v = xmlGetProp(c, (const xmlChar *)"value");
            if (v)
                add_name(out, (const char *)v, strlen((const char *)v));
            xmlFree(v);
        }
        enumerations(c, out);
    }
}

/* The first xs:attribute named attr under an xs:element named element
 * (any element when NULL) below n. */
static const xmlNode *find_attribute(const xmlNode *n, const char *element, const char *attr,
                                     int inside)
{
    for (const xmlNode *c = n->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        if (inside && is_xs(c, "attribute") && name_is(c, attr))
            return c;
        int in = inside || (is_xs(c, "element") && (!element || name_is(c, element)));
        const xmlNode *found = find_attribute(c, element, attr, in);
        if (found)
            return found;
    }
    return NULL;
}

/* Every xs:attribute whose name contains part, with its enumeration. */
static unsigned attributes_named_like(const xmlNode *n, const char *part, name_list *values)
{
    unsigned found = 0;
    for (const xmlNode *c = n->children; c; c = c->next) {
        if (is_xs(c, "attribute")) {
            xmlChar *v = xmlGetProp(c, (const xmlChar *)"name");
            if (v && strstr((const char *)v, part)) {
                enumerations(c, values);
                found++;
            }
            xmlFree(v);
        }
        found += attributes_named_like(c, part, values);
    }
    return found;
}

static xmlDoc *read_xsd(void)
{
    xmlDoc *doc = xmlReadFile(DCSIM_SOURCE_DIR "/scenarios/dcsim.xsd", NULL, XML_PARSE_NONET);
    CHECK(doc != NULL);
    return doc;
}

/* A docs file, whole, NUL-terminated (NULL when it cannot be read). */
static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *s = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = (cap ? 2 * cap : 65536);
            char *q = realloc(s, cap);
            if (!q)
                break;
            s = q;
        }
        size_t got = fread(s + n, 1, cap - n - 1, f);
        n += got;
        if (!got)
            break;
    }
    fclose(f);
    if (s)
        s[n] = '\0';
    return s;
}

/* ---- the failure processes ---- */

static void failure_registry(name_list *names)
{
    names->n = 0;
    for (unsigned i = 0; failure_processes[i]; i++)
        add_name(names, failure_processes[i]->name, strlen(failure_processes[i]->name));
}

static void test_failure_processes_xsd(xmlDoc *xsd)
{
    name_list registry, xsd_names = {0};
    failure_registry(&registry);
    const xmlNode *attr = find_attribute(xmlDocGetRootElement(xsd), "failure", "distribution", 0);
    CHECK(attr != NULL);
    if (attr)
        enumerations(attr, &xsd_names);
    check_same("dcsim.xsd <failure distribution>", &xsd_names, &registry);
}

/* <step><fail part>: the failure-state part classes (fabric_fault.h) */
static void test_fail_parts_xsd(xmlDoc *xsd)
{
    name_list registry = {0}, xsd_names = {0};
    for (unsigned i = 0; ff_classes[i].name; i++)
        add_name(&registry, ff_classes[i].name, strlen(ff_classes[i].name));
    CHECK_INT_EQ(registry.n, FF_CLASS_COUNT);
    const xmlNode *attr = find_attribute(xmlDocGetRootElement(xsd), "fail", "part", 0);
    CHECK(attr != NULL);
    if (attr)
        enumerations(attr, &xsd_names);
    check_same("dcsim.xsd <step><fail part>", &xsd_names, &registry);
}

static void test_failure_process_entries(void)
{
    unsigned n = failure_process_count();
    CHECK_INT_EQ(n, 2);
    CHECK_STR_EQ(failure_process_get(FAILURE_EXPONENTIAL)->name, "exponential");
    CHECK_STR_EQ(failure_process_get(FAILURE_WEIBULL)->name, "weibull");
    CHECK(failure_process_get(n) == NULL);
    CHECK_INT_EQ(failure_process_find("lognormal"), -1);
    for (unsigned i = 0; i < n; i++) {
        const failure_process *p = failure_processes[i];
        CHECK_INT_EQ(failure_process_find(p->name), i);
        CHECK(p->doc && p->doc[0] && p->check && p->draw);
    }
    /* a zeroed cause is exponential, which superposes; Weibull renews */
    CHECK(failure_process_is_memoryless(0));
    CHECK(!failure_process_is_memoryless(FAILURE_WEIBULL));
    CHECK(!failure_process_is_memoryless(n));
    campaign_cause x = {.process = FAILURE_EXPONENTIAL};
    CHECK_INT_EQ(failure_process_get(x.process)->check(&x), 0);
    x.shape = 2;
    CHECK_INT_EQ(failure_process_get(x.process)->check(&x), -1);
    x.process = FAILURE_WEIBULL;
    CHECK_INT_EQ(failure_process_get(x.process)->check(&x), 0);
    x.shape = 1.0 / 171; /* Gamma(1 + 1/k) overflows */
    CHECK_INT_EQ(failure_process_get(x.process)->check(&x), -1);
}

/* Draws: mean 1/rate for every process; a Weibull part's residual life has
 * mean E[L^2] / (2 E[L]) = a Gamma(1 + 2/k) / (2 Gamma(1 + 1/k)), the
 * exponential's is its mean (memoryless). 400,000 draws: within 1 %. */
static void test_failure_draws(void)
{
    enum { N = 400000 };
    const double rate = 1 / 3600.0, mean = 1 / rate;
    gsl_rng *r = sim_rng_stream_create(7, SIM_ENTITY_GPU, 0, SIM_PURPOSE_FAILURE);
    CHECK(r != NULL);
    if (!r)
        return;
    double shapes[] = {0, 0.7, 2.0};
    for (int s = 0; s < 3; s++) {
        const failure_process *p = failure_process_get(s ? FAILURE_WEIBULL : FAILURE_EXPONENTIAL);
        double k = shapes[s], sum = 0, sum_res = 0;
        for (int i = 0; i < N; i++)
            sum += p->draw(r, rate, k);
        CHECK_REL(sum / N, mean, 0.01);
        if (!p->residual)
            continue;
        for (int i = 0; i < N; i++)
            sum_res += p->residual(r, rate, k);
        double a = mean / tgamma(1 + 1 / k);
        double want = a * tgamma(1 + 2 / k) / (2 * tgamma(1 + 1 / k));
        printf("%s k = %.1f: mean %.1f s (want %.1f), residual %.1f s (want %.1f)\n", p->name,
               k, sum / N, mean, sum_res / N, want);
        CHECK_REL(sum_res / N, want, 0.01);
    }
    gsl_rng_free(r);
}

/* ---- the collective algorithms ---- */

static void algorithm_registry(name_list *names)
{
    names->n = 0;
    for (unsigned i = 0; nc_algorithms[i]; i++)
        add_name(names, nc_algorithms[i]->name, strlen(nc_algorithms[i]->name));
}

/* Scenarios name no collective algorithm today (the step tier uses auto,
 * and ring for data-parallel buckets): the day an attribute called
 * *algorithm* appears in the XSD, its enumeration must be the registry. */
static void test_algorithms_xsd(xmlDoc *xsd)
{
    name_list registry, xsd_names = {0};
    algorithm_registry(&registry);
    unsigned found = attributes_named_like(xmlDocGetRootElement(xsd), "algorithm", &xsd_names);
    if (found)
        check_same("dcsim.xsd's algorithm enumeration", &xsd_names, &registry);
    else
        printf("dcsim.xsd names no collective algorithm (checked: none)\n");
}

/* docs/fabric.md's table: one row "| `NAME` | collectives | expansion |"
 * per algorithm, after the header row "| `--algo` |". */
static void test_algorithms_fabric_md(void)
{
    char *text = read_text(DCSIM_SOURCE_DIR "/docs/fabric.md");
    CHECK(text != NULL);
    if (!text)
        return;
    name_list registry, rows = {0};
    algorithm_registry(&registry);
    const char *p = strstr(text, "| `--algo` |");
    CHECK(p != NULL);
    for (p = p ? strchr(p, '\n') : NULL; p && p[1] == '|'; p = strchr(p + 1, '\n')) {
        const char *a = p + 1;
        if (strncmp(a, "| `", 3))
            continue; /* the |---| row */
        const char *b = strchr(a + 3, '`');
        if (b)
            add_name(&rows, a + 3, (size_t)(b - (a + 3)));
    }
    check_same("docs/fabric.md's --algo table", &rows, &registry);
    free(text);
}

/* netbench's usage error, "--algo %s: expected a, b, ... or z", as the
 * errors catalogue (generated from the sources) lists it. */
static void test_algorithms_error_text(void)
{
    char *text = read_text(DCSIM_SOURCE_DIR "/docs/errors.md");
    CHECK(text != NULL);
    if (!text)
        return;
    name_list registry, listed = {0};
    algorithm_registry(&registry);
    const char *key = "--algo %s: expected ";
    const char *p = strstr(text, key);
    CHECK(p != NULL);
    if (p) {
        p += strlen(key);
        const char *end = strchr(p, '`');
        while (p && end && p < end) {
            const char *comma = strstr(p, ", "), *or = strstr(p, " or ");
            const char *stop = comma && comma < end ? comma : or && or < end ? or : end;
            add_name(&listed, p, (size_t)(stop - p));
            p = stop == end ? NULL : stop + (stop == comma ? 2 : 4);
        }
    }
    check_same("netbench's --algo error text", &listed, &registry);
    free(text);
}

static void test_algorithm_entries(void)
{
    unsigned n = nc_algorithm_count();
    const char *builtin[] = {"auto", "ring", "tree", "hd", "hierarchical", "in-network",
                             "direct"};
    CHECK_INT_EQ(n, 7);
    for (unsigned a = 0; a < 7; a++) /* enum nc_algorithm is registry order */
        CHECK_STR_EQ(nc_algorithm_name((int)a), builtin[a]);
    CHECK_STR_EQ(nc_algorithm_name(NC_ALGO_HALVING_DOUBLING), "hd");
    CHECK_STR_EQ(nc_algorithm_name(NC_ALGO_DIRECT), "direct");
    CHECK_STR_EQ(nc_algorithm_name((int)n), "?");
    CHECK(nc_algorithm_get(-1) == NULL);
    enum nc_algorithm got;
    CHECK_INT_EQ(nc_algorithm_parse("butterfly", &got), -1);
    for (unsigned a = 0; a < n; a++) {
        const nc_algorithm_type *t = nc_algorithms[a];
        CHECK(nc_algorithm_parse(t->name, &got) == 0 && got == (enum nc_algorithm)a);
        CHECK(t->doc && t->doc[0]);
        CHECK(t->collectives && t->collectives < 1u << NC_COLLECTIVE_COUNT);
        CHECK(!t->build != !t->resolve); /* builds, or picks one that does */
    }
    /* the alpha-beta model's table */
    for (int a = 0; a < COLL_ALGORITHM_COUNT; a++) {
        enum coll_algorithm back;
        CHECK(coll_algorithm_parse(coll_algorithm_name(a), &back) == 0 && (int)back == a);
        CHECK(strcmp(coll_algorithm_doc(a), "?") != 0);
    }
}

/* Every algorithm on 8 hosts of a k = 4 fat-tree (no scale-up domains, no
 * reduction hardware): each collective it claims builds and runs, or its
 * check refuses it as bad input (hierarchical, in-network); each it does
 * not claim is refused by name. */
static void test_algorithms_build(void)
{
    topo_graph g;
    char why[256];
    CHECK(topo_fattree_kary(4, 50e9, &g, why, sizeof why) == 0);
    topo_route_config rc = {TOPO_BALANCE_ECMP, TOPO_PATH_MINIMAL, 1, 1};
    topo_router *router = topo_router_create(&g, &rc, why, sizeof why);
    nc_fabric f;
    nc_fabric_defaults(&f);
    f.g = &g;
    f.router = router;
    uint32_t ranks[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    unsigned ran = 0, refused = 0;
    for (unsigned a = 0; a < nc_algorithm_count(); a++)
        for (int c = 0; c < NC_COLLECTIVE_COUNT; c++) {
            const nc_algorithm_type *t = nc_algorithms[a];
            nc_plan p;
            nc_result res;
            sim_error err = {0};
            int rc_plan = nc_plan_build(&p, &f, (enum nc_collective)c, (enum nc_algorithm)a,
                                        ranks, 8, 1e6, &err);
            if (!(t->collectives & 1u << c)) {
                char want[128];
                snprintf(want, sizeof want, "algorithm %s does not implement %s", t->name,
                         nc_collective_name(c));
                CHECK_INT_EQ(rc_plan, SIM_ERR_INPUT);
                CHECK_STR_EQ(err.msg, want);
            } else if (rc_plan) {
                CHECK_INT_EQ(rc_plan, SIM_ERR_INPUT);
                CHECK(t->check != NULL && err.msg[0]);
                refused++;
            } else {
                CHECK(p.algo != NC_ALGO_AUTO && p.n_phases > 0);
                CHECK(nc_simulate(&p, &f, &res, &err) == 0 && res.time_s > 0);
                ran++;
            }
            nc_plan_free(&p);
        }
    /* ring 4, tree, hd, direct 2, auto 6 run; hierarchical and in-network refuse */
    CHECK_INT_EQ(ran, 14);
    CHECK_INT_EQ(refused, 2);
    topo_router_destroy(router);
    topo_graph_fini(&g);
}

/* ---- the engine event kinds ---- */

typedef struct kind_row {
    unsigned number;
    const char *name, *meaning;
} kind_row;

static const kind_row kinds[] = {
#define KIND_ROW(name, number, meaning) {number, #name, meaning},
    MODEL_EVENT_KINDS(KIND_ROW)
#undef KIND_ROW
};
#define N_KINDS (sizeof kinds / sizeof kinds[0])

static void test_event_kinds(void)
{
    for (size_t i = 0; i < N_KINDS; i++) {
        CHECK(model_event_kind_is_known(kinds[i].number));
        for (size_t j = 0; j < i; j++) /* unique numbers and names */
            CHECK(kinds[i].number != kinds[j].number && strcmp(kinds[i].name, kinds[j].name));
    }
    CHECK(!model_event_kind_is_known(0) && !model_event_kind_is_known(39) &&
          !model_event_kind_is_known(43) && !model_event_kind_is_known(61));
    /* the numbers traces and golden digests recorded */
    CHECK_INT_EQ(KIND_SEGMENT_END, 1);
    CHECK_INT_EQ(KIND_DRAIN_DUE, 10);
    CHECK_INT_EQ(KIND_FLAP, 12);
    CHECK_INT_EQ(KIND_THROTTLE, 13);
    CHECK_INT_EQ(KIND_FLOW_DONE, 40);
    CHECK_INT_EQ(KIND_FLOW_DELIVER, 41);
    CHECK_INT_EQ(KIND_FLOW_RECOMPUTE, 42);
    CHECK_INT_EQ(KIND_NC_PHASE_DONE, 60);
    CHECK_INT_EQ(KIND_STEP_TASK_END, 80);
    CHECK_INT_EQ(KIND_STEP_BUCKET_START, 81);
    CHECK_INT_EQ(KIND_STEP_OPTIMIZER_END, 82);
    CHECK_INT_EQ(KIND_STEP_SAMPLE, 83);
    CHECK_INT_EQ(KIND_STEP_COLL_START, 84);
    CHECK_INT_EQ(KIND_STEP_SEGMENT_TIME, 85);
    CHECK_INT_EQ(KIND_PKT_TX_DONE, 100);
    CHECK_INT_EQ(KIND_PKT_ARRIVE, 101);
    CHECK_INT_EQ(KIND_PKT_CREDIT, 102);
    CHECK_INT_EQ(KIND_PKT_PAUSE, 103);
    CHECK_INT_EQ(KIND_PKT_RESUME, 104);
    CHECK_INT_EQ(KIND_PKT_PACE, 105);
    CHECK_INT_EQ(KIND_PKT_CNP, 106);
    CHECK_INT_EQ(KIND_PKT_DCQCN_ALPHA, 107);
    CHECK_INT_EQ(KIND_PKT_DCQCN_INCREASE, 108);
    CHECK_INT_EQ(KIND_PKT_STALL_END, 109);
    CHECK_INT_EQ(KIND_PKT_BENCH_SEND, 110);
    CHECK_INT_EQ(KIND_PKT_ACK, 111);
    CHECK_INT_EQ(KIND_PKT_NACK, 112);
    CHECK_INT_EQ(KIND_PKT_RTO, 113);
    CHECK_INT_EQ(KIND_PKT_BECN, 115);
    CHECK_INT_EQ(KIND_PKT_IBCC_TIMER, 116);
    CHECK_INT_EQ(KIND_PKT_SHARP_EMIT, 117);
    CHECK_INT_EQ(KIND_SERVE_ARRIVAL, 130);
    CHECK_INT_EQ(KIND_SERVE_ITERATION, 131);
    CHECK_INT_EQ(KIND_SERVE_START, 132);
    CHECK_INT_EQ(KIND_SERVE_TRANSFER, 133);
    CHECK_INT_EQ(KIND_SERVE_TURN, 134);
    CHECK_INT_EQ(KIND_CLUSTER_ARRIVAL, 140);
    CHECK_INT_EQ(KIND_CLUSTER_JOB_END, 141);
    CHECK_INT_EQ(KIND_CLUSTER_SCHEDULE, 142);
    CHECK_INT_EQ(KIND_CLUSTER_RETIME, 143);
    CHECK_INT_EQ(N_KINDS, 53);
}

/* docs/trace-format.md's table "| N | `NAME` | meaning |", one row per
 * kind, the same number and meaning, none more. */
static void test_event_kinds_docs(void)
{
    char *text = read_text(DCSIM_SOURCE_DIR "/docs/trace-format.md");
    CHECK(text != NULL);
    if (!text)
        return;
    const char *p = strstr(text, "| kind | name | event |");
    CHECK(p != NULL);
    size_t rows = 0;
    for (p = p ? strchr(p, '\n') : NULL; p && p[1] == '|'; p = strchr(p + 1, '\n')) {
        unsigned number;
        char name[64], meaning[160];
        if (sscanf(p + 1, "| %u | `%63[^`]` | %159[^|\n]", &number, name, meaning) != 3)
            continue; /* the |---| row */
        size_t len = strlen(meaning);
        while (len && meaning[len - 1] == ' ')
            meaning[--len] = '\0';
        rows++;
        int listed = 0;
        for (size_t i = 0; i < N_KINDS; i++)
            if (kinds[i].number == number) {
                listed = 1;
                CHECK_STR_EQ(name, kinds[i].name);
                CHECK_STR_EQ(meaning, kinds[i].meaning);
            }
        if (!listed)
            fprintf(stderr, "docs/trace-format.md lists kind %u, event_kinds.h does not\n",
                    number);
        CHECK(listed);
    }
    CHECK_INT_EQ(rows, N_KINDS);
    free(text);
}

int main(void)
{
    xmlDoc *xsd = read_xsd();
    if (xsd) {
        test_failure_processes_xsd(xsd);
        test_fail_parts_xsd(xsd);
        test_algorithms_xsd(xsd);
        xmlFreeDoc(xsd);
    }
    xmlCleanupParser();
    test_failure_process_entries();
    test_failure_draws();
    test_algorithms_fabric_md();
    test_algorithms_error_text();
    test_algorithm_entries();
    test_algorithms_build();
    test_event_kinds();
    test_event_kinds_docs();
    return check_report();
}
