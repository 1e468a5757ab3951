/* catalog.c - the hardware and model catalog: <gpu> (<peak>, <memory>,
 * <power>, <compute>, <sustained>, <scale-up>), <model>, <server> and
 * <link> entries (what a <gpu> or <link> lacks filled by defaults.c), from the built-in catalog files (gpus.xml, models.xml,
 * servers.xml, links.xml), a scenario's <catalog> (inline or inside an
 * XInclude'd <gpus>/<models>/<servers>/<links>), or an extra catalog file;
 * and the scn_catalog_* API. A later catalog's entry replaces a built-in
 * one of the same name; two in one catalog clash.
 */
#include "loader.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>

extern const unsigned char dcsim_catalog_gpus[];
extern const size_t dcsim_catalog_gpus_len;
extern const unsigned char dcsim_catalog_models[];
extern const size_t dcsim_catalog_models_len;
extern const unsigned char dcsim_catalog_servers[];
extern const size_t dcsim_catalog_servers_len;
extern const unsigned char dcsim_catalog_links[];
extern const size_t dcsim_catalog_links_len;

#define BUILTIN_GPUS_NAME "catalog/gpus.xml (built-in)"
#define BUILTIN_MODELS_NAME "catalog/models.xml (built-in)"
#define BUILTIN_SERVERS_NAME "catalog/servers.xml (built-in)"
#define BUILTIN_LINKS_NAME "catalog/links.xml (built-in)"

static const size_t entry_size[CATALOG_KINDS] = {sizeof(hw_gpu), sizeof(model_arch),
                                                 sizeof(hw_server), sizeof(hw_link)};
static const char *const entry_what[CATALOG_KINDS] = {"GPU type", "model", "server type",
                                                      "link technology"};
_Static_assert(offsetof(hw_gpu, name) == 0 && offsetof(model_arch, name) == 0 &&
                   offsetof(hw_server, name) == 0 && offsetof(hw_link, name) == 0,
               "catalog entries must start with their name");

static const char *entry_name(const entry_list *l, int kind, size_t i)
{
    return l->items + i * entry_size[kind];
}

/* the entry of that name among [from, to), or NULL */
static void *find_entry(const loader *ld, int kind, const char *name, size_t from, size_t to)
{
    const entry_list *l = &ld->lists[kind];
    for (size_t i = from; i < to; i++)
        if (strcmp(entry_name(l, kind, i), name) == 0)
            return l->items + i * entry_size[kind];
    return NULL;
}

/* the visible entry of that name, or NULL */
void *find_named(const loader *ld, int kind, const char *name)
{
    return name[0] ? find_entry(ld, kind, name, 0, ld->lists[kind].n) : NULL;
}

/* "A, B, C": the visible names, for "unknown ...; known: ..." messages */
void entry_names(const loader *ld, int kind, char *buf, size_t size)
{
    const entry_list *l = &ld->lists[kind];
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < l->n; i++) {
        const char *name = entry_name(l, kind, i);
        if (!name[0])
            continue;
        int k = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", name);
        if (k < 0 || (size_t)k >= size - used)
            break;
        used += (size_t)k;
    }
}

/* every entry so far counts as built-in: later ones replace, not clash */
static void mark_builtin(loader *ld)
{
    for (int k = 0; k < CATALOG_KINDS; k++)
        ld->lists[k].n_builtin = ld->lists[k].n;
}

void free_lists(loader *ld)
{
    for (int k = 0; k < CATALOG_KINDS; k++)
        free(ld->lists[k].items);
}

static int grow(loader *ld, void **array, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return 0;
    size_t new_cap = *cap ? 2 * *cap : 16;
    void *p = realloc(*array, new_cap * elem);
    if (!p)
        return sim_error_set(ld->err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
    *array = p;
    *cap = new_cap;
    return 0;
}

/* Append a parsed entry (node n, for messages). A later catalog's entry
 * replaces a built-in one of the same name; two in one catalog clash. */
static int add_entry(loader *ld, int kind, const void *entry, xmlNode *n)
{
    entry_list *l = &ld->lists[kind];
    const char *name = entry;
    if (find_entry(ld, kind, name, l->n_builtin, l->n))
        return node_error(ld, n, "name", "%s '%s' is defined twice in this catalog",
                          entry_what[kind], name);
    char *builtin = find_entry(ld, kind, name, 0, l->n_builtin);
    if (builtin)
        builtin[0] = '\0'; /* hidden by the new entry */
    int rc = grow(ld, (void **)&l->items, &l->cap, l->n, entry_size[kind]);
    if (rc)
        return rc;
    memcpy(l->items + l->n++ * entry_size[kind], entry, entry_size[kind]);
    return 0;
}

/* efficiency-by-size="0B:30% 1MB:60% ...": ascending sizes from 0B, at most
 * COMPUTE_MEM_TIERS pairs, each fraction in (0, 1] */
static int parse_mem_tiers(loader *ld, xmlNode *n, hw_gpu *g)
{
    char text[512];
    copy_attr(n, "efficiency-by-size", text, sizeof text);
    const char *hint = "expected ascending SIZE:FRACTION pairs from 0B, e.g. "
                       "\"0B:30% 1MB:60% 10MB:75% 100MB:90%\"";
    unsigned count = 0;
    for (char *save = NULL, *pair = strtok_r(text, " \t", &save); pair;
         pair = strtok_r(NULL, " \t", &save)) {
        char *colon = strchr(pair, ':');
        if (!colon || count == COMPUTE_MEM_TIERS)
            return node_error(ld, n, "efficiency-by-size", "%s, at most %d", hint,
                              COMPUTE_MEM_TIERS);
        *colon = '\0';
        double size = 0, eff = 0;
        char why[300];
        if (sim_units_parse(pair, SIM_DIM_DATA, &size, why, sizeof why))
            return node_error(ld, n, "efficiency-by-size", "'%s': %s", pair, why);
        if (sim_units_parse(colon + 1, SIM_DIM_FRACTION, &eff, why, sizeof why))
            return node_error(ld, n, "efficiency-by-size", "'%s': %s", colon + 1, why);
        if (!(eff > 0 && eff <= 1))
            return node_error(ld, n, "efficiency-by-size", "'%s': a fraction above 0 and at "
                              "most 100%% is expected", colon + 1);
        if (count == 0 ? size != 0 : !(size > g->mem_tier_min_bytes[count - 1]))
            return node_error(ld, n, "efficiency-by-size", "%s", hint);
        g->mem_tier_min_bytes[count] = size;
        g->mem_tier_efficiency[count] = eff;
        count++;
    }
    if (count == 0)
        return node_error(ld, n, "efficiency-by-size", "%s", hint);
    g->n_mem_tiers = count;
    return 0;
}

static int parse_gpu(loader *ld, xmlNode *n)
{
    hw_gpu g;
    memset(&g, 0, sizeof g);
    g.launch_overhead_s = -1; /* not given: fill_gpu_defaults decides */
    copy_attr(n, "name", g.name, sizeof g.name);
    copy_attr(n, "description", g.description, sizeof g.description);
    for (xmlNode *c = n->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        int rc = 0;
        if (xmlStrEqual(c->name, (const xmlChar *)"peak")) {
            char prec[16];
            enum precision p;
            copy_attr(c, "precision", prec, sizeof prec);
            if (precision_parse(prec, &p))
                return node_error(ld, c, "precision", "unknown precision");
            double rate = 0, eff = 0;
            rc = get_quantity(ld, c, "rate", SIM_DIM_FLOP_RATE, 1, &rate);
            if (!rc)
                rc = positive(ld, c, "rate", rate, INFINITY, "");
            if (!rc)
                rc = get_fraction(ld, c, "gemm-efficiency", &eff);
            if (!rc && g.peak_flops_per_s[p] > 0)
                rc = node_error(ld, c, "precision", "GPU '%s' already has a %s peak", g.name,
                                prec);
            g.peak_flops_per_s[p] = rate;
            g.gemm_efficiency[p] = eff;
        } else if (xmlStrEqual(c->name, (const xmlChar *)"memory")) {
            rc = get_quantity(ld, c, "capacity", SIM_DIM_DATA, 0, &g.hbm_bytes);
            if (!rc && has_attr(c, "capacity"))
                rc = positive(ld, c, "capacity", g.hbm_bytes, INFINITY, "");
            if (!rc)
                rc = get_quantity(ld, c, "bandwidth", SIM_DIM_BANDWIDTH, 0, &g.hbm_bytes_per_s);
            if (!rc && has_attr(c, "bandwidth"))
                rc = positive(ld, c, "bandwidth", g.hbm_bytes_per_s, INFINITY, "");
            if (!rc && has_attr(c, "efficiency-by-size"))
                rc = parse_mem_tiers(ld, c, &g);
        } else if (xmlStrEqual(c->name, (const xmlChar *)"power")) {
            rc = get_quantity(ld, c, "tdp", SIM_DIM_POWER, 1, &g.tdp_w);
            if (!rc)
                rc = positive(ld, c, "tdp", g.tdp_w, INFINITY, "");
            if (!rc)
                rc = get_quantity(ld, c, "idle", SIM_DIM_POWER, 0, &g.idle_w);
            if (!rc && has_attr(c, "idle"))
                rc = positive(ld, c, "idle", g.idle_w, g.tdp_w, " (the TDP)");
        } else if (xmlStrEqual(c->name, (const xmlChar *)"compute")) {
            rc = get_uint(ld, c, "sms", 0, 1, 100000, &g.sms);
            if (!rc && has_attr(c, "launch-overhead"))
                rc = get_quantity(ld, c, "launch-overhead", SIM_DIM_TIME, 1,
                                  &g.launch_overhead_s);
            if (!rc && has_attr(c, "launch-overhead"))
                rc = non_negative(ld, c, "launch-overhead", g.launch_overhead_s);
        } else if (xmlStrEqual(c->name, (const xmlChar *)"sustained")) {
            rc = get_fraction(ld, c, "efficiency", &g.sustained_efficiency);
        } else if (xmlStrEqual(c->name, (const xmlChar *)"scale-up")) {
            copy_attr(c, "kind", g.scaleup_kind, sizeof g.scaleup_kind);
            rc = get_quantity(ld, c, "bandwidth", SIM_DIM_BANDWIDTH, 1, &g.scaleup_bytes_per_s);
            if (!rc)
                rc = positive(ld, c, "bandwidth", g.scaleup_bytes_per_s, INFINITY, "");
            if (!rc)
                rc = get_uint(ld, c, "domain", 1, 1, 100000, &g.scaleup_domain);
        }
        if (rc)
            return rc;
    }
    int rc = fill_gpu_defaults(ld, n, &g);
    return rc ? rc : add_entry(ld, CAT_GPU, &g, n);
}

/* architecture attributes onto m (only those present); catalog entries and
 * <job><model> share them */
int parse_arch_attrs(loader *ld, xmlNode *n, model_arch *m)
{
    const unsigned big = 100000000u;
    int rc = get_uint(ld, n, "layers", 0, 1, 100000, &m->layers);
    if (!rc)
        rc = get_uint(ld, n, "hidden", 0, 1, big, &m->hidden);
    if (!rc)
        rc = get_uint(ld, n, "heads", 0, 1, 1000000, &m->heads);
    if (!rc)
        rc = get_uint(ld, n, "kv-heads", 0, 1, 1000000, &m->kv_heads);
    if (!rc)
        rc = get_uint(ld, n, "head-dim", 0, 1, 1000000, &m->head_dim);
    if (!rc)
        rc = get_uint(ld, n, "ffn", 0, 1, big, &m->ffn_hidden);
    if (!rc)
        rc = get_uint(ld, n, "vocab", 0, 1, big, &m->vocab);
    if (!rc)
        rc = get_uint(ld, n, "seq-len", 0, 1, big, &m->seq_len);
    if (!rc)
        rc = get_uint(ld, n, "experts", 0, 0, 1000000, &m->experts);
    if (!rc)
        rc = get_uint(ld, n, "top-k", 0, 1, 1000000, &m->top_k);
    if (!rc)
        rc = get_uint(ld, n, "moe-ffn", 0, 1, big, &m->moe_ffn_hidden);
    if (!rc)
        rc = get_uint(ld, n, "shared-experts", 0, 0, 1000000, &m->shared_experts);
    if (!rc)
        rc = get_uint(ld, n, "dense-layers", 0, 0, 100000, &m->dense_layers);
    if (!rc)
        rc = get_bool(ld, n, "tied-embeddings", &m->tied_embeddings);
    if (!rc && has_attr(n, "dropout")) {
        int dropout = 1;
        get_bool(ld, n, "dropout", &dropout);
        m->no_dropout = !dropout;
    }
    if (!rc && has_attr(n, "activation")) {
        char act[16];
        copy_attr(n, "activation", act, sizeof act);
        m->activation = strcmp(act, "swiglu") == 0 ? ACT_SWIGLU : ACT_GELU;
    }
    return rc;
}

/* defaults that follow from other fields, then the architecture check */
int finish_arch(loader *ld, xmlNode *n, model_arch *m)
{
    static const char *const required[] = {"layers", "hidden", "heads", "ffn", "vocab",
                                           "seq-len"};
    const unsigned *values[] = {&m->layers, &m->hidden, &m->heads, &m->ffn_hidden, &m->vocab,
                                &m->seq_len};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        if (!*values[i])
            return node_error(ld, n, NULL, "the model architecture needs '%s' (with layers, "
                              "hidden, heads, ffn, vocab and seq-len)", required[i]);
    if (!m->kv_heads)
        m->kv_heads = m->heads;
    if (!m->head_dim) {
        if (m->hidden % m->heads)
            return node_error(ld, n, NULL, "hidden (%u) is not a multiple of heads (%u); give "
                              "head-dim", m->hidden, m->heads);
        m->head_dim = m->hidden / m->heads;
    }
    if (m->experts && !m->top_k)
        m->top_k = 1;
    if (!m->experts)
        m->top_k = 1;
    sim_error e;
    sim_error_clear(&e);
    if (model_arch_check(m, &e))
        return node_error(ld, n, NULL, "%s", e.msg);
    return 0;
}

static int parse_model_entry(loader *ld, xmlNode *n)
{
    model_arch m;
    memset(&m, 0, sizeof m);
    copy_attr(n, "name", m.name, sizeof m.name);
    int rc = parse_arch_attrs(ld, n, &m);
    if (!rc)
        rc = finish_arch(ld, n, &m);
    if (rc)
        return rc;
    return add_entry(ld, CAT_MODEL, &m, n);
}

static int parse_server(loader *ld, xmlNode *n)
{
    hw_server sv;
    memset(&sv, 0, sizeof sv);
    copy_attr(n, "name", sv.name, sizeof sv.name);
    copy_attr(n, "description", sv.description, sizeof sv.description);
    copy_attr(n, "gpu", sv.gpu, sizeof sv.gpu);
    if (!find_named(ld, CAT_GPU, sv.gpu)) {
        char known[1024];
        entry_names(ld, CAT_GPU, known, sizeof known);
        return node_error(ld, n, "gpu", "unknown GPU type; known types: %s", known);
    }
    int rc = get_uint(ld, n, "gpus", 1, 1, 1000000, &sv.gpus);
    if (!rc)
        rc = get_uint(ld, n, "nics", 1, 0, 1000000, &sv.nics);
    if (!rc)
        rc = get_quantity(ld, n, "nic-bandwidth", SIM_DIM_BANDWIDTH, 1, &sv.nic_bytes_per_s);
    if (!rc)
        rc = positive(ld, n, "nic-bandwidth", sv.nic_bytes_per_s, INFINITY, "");
    if (!rc)
        rc = get_quantity(ld, n, "system-power", SIM_DIM_POWER, 0, &sv.system_power_w);
    if (!rc && has_attr(n, "system-power"))
        rc = positive(ld, n, "system-power", sv.system_power_w, INFINITY, "");
    if (rc)
        return rc;
    return add_entry(ld, CAT_SERVER, &sv, n);
}

static int parse_link(loader *ld, xmlNode *n)
{
    hw_link lk;
    memset(&lk, 0, sizeof lk);
    copy_attr(n, "name", lk.name, sizeof lk.name);
    char text[32];
    copy_attr(n, "kind", text, sizeof text);
    lk.kind = strcmp(text, "nvlink") == 0     ? HW_LINK_NVLINK
              : strcmp(text, "ethernet") == 0 ? HW_LINK_ETHERNET
                                              : HW_LINK_INFINIBAND;
    copy_attr(n, "routing", text, sizeof text);
    lk.routing = strcmp(text, "ecmp") == 0     ? HW_ROUTING_ECMP
                 : strcmp(text, "spray") == 0  ? HW_ROUTING_SPRAY
                 : strcmp(text, "direct") == 0 ? HW_ROUTING_DIRECT
                                               : HW_ROUTING_ADAPTIVE;
    get_bool(ld, n, "in-network-reduction", &lk.has_in_network_reduction);
    int rc = get_quantity(ld, n, "rate", SIM_DIM_BANDWIDTH, 1, &lk.bytes_per_s);
    if (!rc)
        rc = positive(ld, n, "rate", lk.bytes_per_s, INFINITY, "");
    if (!rc)
        rc = get_fraction(ld, n, "efficiency", &lk.efficiency);
    if (!rc)
        rc = get_quantity(ld, n, "switch-latency", SIM_DIM_TIME, 1, &lk.switch_latency_s);
    if (!rc)
        rc = non_negative(ld, n, "switch-latency", lk.switch_latency_s);
    if (!rc)
        rc = get_quantity(ld, n, "nic-latency", SIM_DIM_TIME, 0, &lk.nic_latency_s);
    if (!rc)
        rc = non_negative(ld, n, "nic-latency", lk.nic_latency_s);
    if (!rc)
        rc = get_quantity(ld, n, "step-latency", SIM_DIM_TIME, 0, &lk.step_latency_s);
    if (!rc)
        rc = non_negative(ld, n, "step-latency", lk.step_latency_s);
    if (!rc)
        rc = get_fraction(ld, n, "reduction-efficiency", &lk.reduction_efficiency);
    if (!rc)
        rc = get_quantity(ld, n, "reduction-latency", SIM_DIM_TIME, 0, &lk.reduction_latency_s);
    if (!rc)
        rc = non_negative(ld, n, "reduction-latency", lk.reduction_latency_s);
    if (!rc)
        rc = get_fraction(ld, n, "incast-efficiency", &lk.incast_efficiency);
    if (!rc)
        rc = get_quantity(ld, n, "mtu", SIM_DIM_DATA, 0, &lk.mtu_bytes);
    if (!rc && has_attr(n, "mtu"))
        rc = positive(ld, n, "mtu", lk.mtu_bytes, 65536, " B");
    if (!rc)
        rc = whole(ld, n, "mtu", lk.mtu_bytes);
    if (!rc)
        rc = get_quantity(ld, n, "port-buffer", SIM_DIM_DATA, 0, &lk.port_buffer_bytes);
    if (!rc && has_attr(n, "port-buffer"))
        rc = positive(ld, n, "port-buffer", lk.port_buffer_bytes, 1e12, " B");
    if (!rc && lk.port_buffer_bytes > 0 && lk.mtu_bytes > lk.port_buffer_bytes)
        rc = node_error(ld, n, "port-buffer", "port-buffer must hold at least one MTU");
    if (!rc)
        rc = get_quantity(ld, n, "switch-power", SIM_DIM_POWER, 0, &lk.switch_power_w);
    if (!rc && has_attr(n, "switch-power"))
        rc = positive(ld, n, "switch-power", lk.switch_power_w, 1e6, " W");
    if (!rc)
        rc = fill_link_defaults(ld, n, &lk);
    if (rc)
        return rc;
    return add_entry(ld, CAT_LINK, &lk, n);
}

/* every <gpu>, <model> and <server> of a catalog file or of a scenario's
 * <catalog> (inline or inside an XInclude'd <gpus>, <models>, <servers>) */
int parse_catalog(loader *ld, xmlNode *catalog)
{
    for (xmlNode *c = catalog->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        int rc = 0;
        if (xmlStrEqual(c->name, (const xmlChar *)"gpu"))
            rc = parse_gpu(ld, c);
        else if (xmlStrEqual(c->name, (const xmlChar *)"model"))
            rc = parse_model_entry(ld, c);
        else if (xmlStrEqual(c->name, (const xmlChar *)"server"))
            rc = parse_server(ld, c);
        else if (xmlStrEqual(c->name, (const xmlChar *)"link"))
            rc = parse_link(ld, c);
        else if (xmlStrEqual(c->name, (const xmlChar *)"gpus") ||
                 xmlStrEqual(c->name, (const xmlChar *)"models") ||
                 xmlStrEqual(c->name, (const xmlChar *)"servers") ||
                 xmlStrEqual(c->name, (const xmlChar *)"links"))
            rc = parse_catalog(ld, c);
        if (rc)
            return rc;
    }
    return 0;
}

static int load_catalog_doc(loader *ld, const char *display, const char *path,
                            const unsigned char *text, size_t len)
{
    loader cat = *ld;
    cat.display_name = display;
    cat.files = NULL;
    cat.n_files = 0;
    xmlDoc *doc = read_doc(&cat, path, (const char *)text, len);
    int rc = doc ? validate(&cat, doc) : SIM_ERR_INPUT;
    xmlNode *root = doc ? xmlDocGetRootElement(doc) : NULL;
    if (!rc && root && xmlStrEqual(root->name, (const xmlChar *)"dcsim"))
        rc = node_error(&cat, root, NULL,
                        "expected a catalog (<gpus>, <models>, <servers> or <links>), not a "
                        "scenario");
    if (!rc)
        rc = parse_catalog(&cat, root);
    xmlFreeDoc(doc);
    for (size_t i = 0; i < cat.n_files; i++)
        free(cat.files[i]);
    free(cat.files);
    memcpy(ld->lists, cat.lists, sizeof ld->lists); /* the arrays may have moved */
    return rc;
}

int load_builtin_catalog(loader *ld)
{
    int rc = load_catalog_doc(ld, BUILTIN_GPUS_NAME, NULL, dcsim_catalog_gpus,
                              dcsim_catalog_gpus_len);
    if (!rc)
        rc = load_catalog_doc(ld, BUILTIN_MODELS_NAME, NULL, dcsim_catalog_models,
                              dcsim_catalog_models_len);
    if (!rc)
        rc = load_catalog_doc(ld, BUILTIN_SERVERS_NAME, NULL, dcsim_catalog_servers,
                              dcsim_catalog_servers_len);
    if (!rc)
        rc = load_catalog_doc(ld, BUILTIN_LINKS_NAME, NULL, dcsim_catalog_links,
                              dcsim_catalog_links_len);
    mark_builtin(ld);
    return rc;
}

struct scn_catalog {
    loader ld;
};

int scn_catalog_load(const char *extra_path, scn_catalog **out, sim_error *err)
{
    *out = NULL;
    scn_catalog *cat = calloc(1, sizeof *cat);
    if (!cat)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
    cat->ld.err = err;
    cat->ld.display_name = extra_path ? extra_path : DEFAULT_NAME;
    int rc = load_builtin_catalog(&cat->ld);
    if (!rc && extra_path) {
        rc = check_readable(&cat->ld, extra_path);
        if (!rc) {
            /* the extra file's entries replace built-in ones of the same name */
            mark_builtin(&cat->ld);
            rc = load_catalog_doc(&cat->ld, extra_path, extra_path, NULL, 0);
        }
    }
    if (rc) {
        scn_catalog_free(cat);
        return rc;
    }
    *out = cat;
    return 0;
}

void scn_catalog_free(scn_catalog *cat)
{
    if (!cat)
        return;
    free_lists(&cat->ld);
    free(cat);
}

const hw_gpu *scn_catalog_gpu(const scn_catalog *cat, const char *name)
{
    return find_named(&cat->ld, CAT_GPU, name);
}

const model_arch *scn_catalog_model(const scn_catalog *cat, const char *name)
{
    return find_named(&cat->ld, CAT_MODEL, name);
}

const hw_server *scn_catalog_server(const scn_catalog *cat, const char *name)
{
    return find_named(&cat->ld, CAT_SERVER, name);
}

size_t scn_catalog_server_count(const scn_catalog *cat) { return cat->ld.lists[CAT_SERVER].n; }

const hw_link *scn_catalog_link(const scn_catalog *cat, const char *name)
{
    return find_named(&cat->ld, CAT_LINK, name);
}

void scn_catalog_gpu_names(const scn_catalog *cat, char *buf, size_t size)
{
    entry_names(&cat->ld, CAT_GPU, buf, size);
}

void scn_catalog_model_names(const scn_catalog *cat, char *buf, size_t size)
{
    entry_names(&cat->ld, CAT_MODEL, buf, size);
}
