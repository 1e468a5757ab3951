/* fabric_fault.c - failure states, what they do to a built fabric and the
 * degraded fabric they leave (see fabric_fault.h). Invariant: a state with
 * no part leaves every link and GPU at speed 1, and fabric_degrade of it is
 * the fabric as built (same capacities, adjacency order and routes). */
#include "fabric_fault.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"

const topo_choice ff_classes[] = {
    [FF_LINK] = {"link", "the cable of directed link ID (both directions)"},
    [FF_SWITCH] = {"switch", "every cable of fabric switch node ID"},
    [FF_NIC] = {"nic", "the fabric cables of NIC node ID (a shared NIC, or a GPU's own port)"},
    [FF_NODE] = {"node", "every GPU of server (scale-up domain) ID"},
    [FF_GPU] = {"gpu", "GPU ID (a speed below 1: throttled)"},
    [FF_TRANSCEIVER] = {"transceiver", "the transceiver cage at the source switch (or server) of "
                                       "directed link ID: every cable of the cage"},
    {NULL, NULL},
};

/* The port form of a link technology's switches (hardware.md 3.3): ports
 * per transceiver cage. A technology not listed has none in the reference:
 * a transceiver failure needs a cage-ports override there. */
static const struct {
    const char *link;
    unsigned ports;
    const char *source;
} cage_forms[] = {
    {"ib-ndr", 2, "hardware.md 3.3: Quantum-2 QM9700/QM9790, 64 x 400 Gb/s via 32 twin-port "
                  "OSFP cages (S), each cage 2 logical ports (V)"},
    {"ib-xdr", 2, "hardware.md 3.3: Quantum-X800 Q3400, 144 x 800 Gb/s in 72 OSFP cages (S)"},
    {"ib-hdr", 1, "hardware.md 3.3: Quantum QM8700/QM8790, 40 x 200 Gb/s QSFP56 (S), one port "
                  "per cage"},
};

unsigned ff_cage_ports_catalog(const char *link, const char **source)
{
    for (size_t i = 0; i < sizeof cage_forms / sizeof cage_forms[0]; i++)
        if (!strcmp(cage_forms[i].link, link)) {
            if (source)
                *source = cage_forms[i].source;
            return cage_forms[i].ports;
        }
    if (source)
        *source = "hardware.md 3.3 gives no port form for this technology's switches";
    return 0;
}

void ff_state_init(ff_state *s) { memset(s, 0, sizeof *s); }

void ff_state_fini(ff_state *s)
{
    if (!s)
        return;
    free(s->part);
    memset(s, 0, sizeof *s);
}

int ff_part_parse(const char *text, ff_part *out, char *why, size_t why_size)
{
    const char *eq = strchr(text, '=');
    char name[16];
    size_t len = eq ? (size_t)(eq - text) : 0;
    if (!eq || len >= sizeof name) {
        snprintf(why, why_size, "'%s': expected CLASS=ID[:SPEED], CLASS one of link, switch, "
                 "nic, node, gpu, transceiver", text);
        return -1;
    }
    memcpy(name, text, len);
    name[len] = 0;
    int cls = topo_choice_find(ff_classes, name);
    if (cls < 0) {
        snprintf(why, why_size, "'%s': unknown part class '%s' (expected link, switch, nic, "
                 "node, gpu or transceiver)", text, name);
        return -1;
    }
    const char *v = eq + 1;
    char *end;
    errno = 0;
    unsigned long long id = strtoull(v, &end, 10);
    if (*v < '0' || *v > '9' || errno || id >= UINT32_MAX || (*end && *end != ':')) {
        snprintf(why, why_size, "'%s': the ID must be a whole number (a node, link or GPU id "
                 "of the built fabric)", text);
        return -1;
    }
    double speed = 0;
    if (*end == ':') {
        const char *sp = end + 1;
        speed = strtod(sp, &end);
        if (end == sp || *end || !(speed >= 0 && speed <= 1)) {
            snprintf(why, why_size, "'%s': the speed must be a number in [0, 1] (0 down, 1 as "
                     "built)", text);
            return -1;
        }
    }
    *out = (ff_part){(enum ff_class)cls, (uint32_t)id, speed};
    return 0;
}

static int cmp_part(const ff_part *a, const ff_part *b)
{
    if (a->cls != b->cls)
        return a->cls < b->cls ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

int ff_state_add(ff_state *s, const ff_part *p)
{
    size_t i = 0;
    while (i < s->n && cmp_part(&s->part[i], p) < 0)
        i++;
    int there = i < s->n && !cmp_part(&s->part[i], p);
    if (p->speed >= 1) { /* repaired: out of the state */
        if (there) {
            memmove(s->part + i, s->part + i + 1, (s->n - i - 1) * sizeof *s->part);
            s->n--;
        }
        return 0;
    }
    if (there) {
        s->part[i].speed = p->speed;
        return 0;
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 8;
        ff_part *q = realloc(s->part, cap * sizeof *q);
        if (!q)
            return -1;
        s->part = q;
        s->cap = cap;
    }
    memmove(s->part + i + 1, s->part + i, (s->n - i) * sizeof *s->part);
    s->part[i] = *p;
    s->n++;
    return 0;
}


uint64_t ff_state_digest(const ff_state *s)
{
    uint64_t h = sim_splitmix64(0x6661696c75726573ULL ^ s->n); /* "failures" */
    for (size_t i = 0; i < s->n; i++) {
        uint64_t bits;
        double sp = s->part[i].speed + 0.0; /* -0 and 0 alike */
        memcpy(&bits, &sp, sizeof bits);
        h = sim_splitmix64(h ^ ((uint64_t)s->part[i].cls << 32 | s->part[i].id));
        h = sim_splitmix64(h ^ bits);
    }
    if (s->cage_ports && s->n && s->part[s->n - 1].cls == FF_TRANSCEIVER) /* sorted: last */
        h = sim_splitmix64(h ^ (0x6361676500000000ULL | s->cage_ports)); /* "cage" */
    return h;
}

void ff_part_text(const ff_part *p, char *buf, size_t size)
{
    if (p->speed > 0)
        snprintf(buf, size, "%s=%u:%g", ff_classes[p->cls].name, p->id, p->speed);
    else
        snprintf(buf, size, "%s=%u", ff_classes[p->cls].name, p->id);
}

void ff_state_text(const ff_state *s, char *buf, size_t size)
{
    size_t used = 0;
    if (size)
        buf[0] = 0;
    if (!s->n) {
        snprintf(buf, size, "none");
        return;
    }
    for (size_t i = 0; i < s->n && used + 1 < size; i++) {
        char one[64];
        ff_part_text(&s->part[i], one, sizeof one);
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "", one);
    }
}

/* ids[0 .. n) (ascending) as "0-47, 96, 100-103", cut with ", ..." */
static void ranges_text(const uint32_t *ids, size_t n, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && ids[j + 1] == ids[j] + 1)
            j++;
        if (used + 40 > size) {
            snprintf(buf + used, size - used, ", ...");
            return;
        }
        used += (size_t)(ids[i] == ids[j]
                             ? snprintf(buf + used, size - used, "%s%u", i ? ", " : "", ids[i])
                             : snprintf(buf + used, size - used, "%s%u-%u", i ? ", " : "",
                                        ids[i], ids[j]));
        i = j + 1;
    }
}

/* the nodes of kind k as ranges ("2048-2111"), for a refusal */
static void kind_ranges(const topo_graph *g, int k1, int k2, char *buf, size_t size)
{
    uint32_t *ids = malloc(((size_t)g->n_nodes + 1) * sizeof *ids);
    size_t n = 0;
    if (!ids) {
        snprintf(buf, size, "?");
        return;
    }
    for (uint32_t v = 0; v < g->n_nodes; v++)
        if (g->node_kind[v] == k1 || g->node_kind[v] == k2)
            ids[n++] = v;
    ranges_text(ids, n, buf, size);
    if (!n)
        snprintf(buf, size, "none");
    free(ids);
}

/* link l (and its cable's other direction) at speed s by part p: the lower
 * speed wins, the first part to set it is kept for the refusal */
static void set_cable(ff_effect *e, uint32_t l, double s, uint32_t p)
{
    uint32_t pair[2] = {l, l ^ 1u};
    for (int k = 0; k < 2; k++) {
        uint32_t x = pair[k];
        if (x >= e->n_links)
            continue;
        if (s < e->link_speed[x])
            e->link_speed[x] = s;
        if (e->link_part[x] == UINT32_MAX)
            e->link_part[x] = p;
    }
}

/* the cables of node v to fabric switches (only_fabric) or all of them */
static void set_node_cables(const topo_graph *g, ff_effect *e, uint32_t v, int only_fabric,
                            double s, uint32_t p)
{
    for (uint32_t i = g->out_offset[v]; i < g->out_offset[v + 1]; i++) {
        uint32_t l = g->out_links[i];
        if (!only_fabric || g->node_kind[g->link_dst[l]] == TOPO_SWITCH)
            set_cable(e, l, s, p);
    }
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The ports of switch v: the directed links leaving it, by id, into a
 * fresh array (*n of them); NULL when out of memory. */
static uint32_t *switch_ports(const topo_graph *g, uint32_t v, uint32_t *n)
{
    uint32_t k = g->out_offset[v + 1] - g->out_offset[v];
    uint32_t *p = malloc(((size_t)k + 1) * sizeof *p);
    if (!p)
        return NULL;
    memcpy(p, g->out_links + g->out_offset[v], (size_t)k * sizeof *p);
    qsort(p, k, sizeof *p, cmp_u32);
    *n = k;
    return p;
}

/* The ports per cage to use on f (the override, else the catalog's), or 0
 * with the reason in err naming `what` (a part, or a cause). */
static unsigned cage_ports_of(const fabric *f, unsigned cage_ports, const char *what,
                              sim_error *err)
{
    if (cage_ports >= 2)
        return cage_ports;
    const char *src = NULL;
    unsigned cp = ff_cage_ports_catalog(f->link_name, &src);
    if (cp >= 2)
        return cp;
    if (cp == 1)
        sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "%s: the fabric's %s switches have no "
                      "twin-port cages (%s): a transceiver there is its cable (link=ID, "
                      "component=\"cable\")", what,
                      f->link_name, src);
    else
        sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "%s: no port form for the fabric's %s "
                      "switches (%s; ib-ndr and ib-xdr have twin-port cages): give the ports "
                      "per cage (cage-ports=\"2\", dcsim step --cage-ports 2)", what,
                      f->link_name, src);
    return 0;
}

/* Host-side transceivers: the server (scale-up domain of d GPUs) of a port
 * node v, a GPU's own port (host v is GPU v) or a shared NIC (its first
 * GPU's server); UINT32_MAX for any other node, and a port with no GPU. */
static uint32_t port_server(const fabric *f, uint32_t v, unsigned d)
{
    const topo_graph *g = &f->g;
    if (g->node_kind[v] == TOPO_HOST) /* a builder's spare host port serves no server */
        return v < f->gpus ? v / d : UINT32_MAX;
    if (g->node_kind[v] != TOPO_NIC)
        return UINT32_MAX;
    uint32_t first = UINT32_MAX;
    for (uint32_t i = g->out_offset[v]; i < g->out_offset[v + 1]; i++) {
        uint32_t w = g->link_dst[g->out_links[i]];
        if (g->node_kind[w] == TOPO_HOST && w < first)
            first = w;
    }
    return first < f->gpus ? first / d : UINT32_MAX;
}

/* Every host-side fabric port (a directed link from a GPU's own port or a
 * shared NIC to a switch) as server << 32 | link, sorted: a server's ports
 * in link order, server by server. NULL when out of memory. */
static uint64_t *host_ports(const fabric *f, uint64_t *n)
{
    const topo_graph *g = &f->g;
    unsigned d = f->nc.domain_size ? f->nc.domain_size : 1;
    uint64_t *x = malloc(((size_t)g->n_links + 1) * sizeof *x), k = 0;
    if (!x)
        return NULL;
    for (uint32_t l = 0; l < g->n_links; l++) {
        uint32_t v = g->link_src[l];
        if (g->node_kind[g->link_dst[l]] != TOPO_SWITCH)
            continue;
        uint32_t srv = port_server(f, v, d);
        if (srv != UINT32_MAX)
            x[k++] = (uint64_t)srv << 32 | l;
    }
    qsort(x, k, sizeof *x, cmp_u64);
    *n = k;
    return x;
}

/* The host side has no port form in the catalog (a server's NICs, not the
 * link technology, decide it): the override, or 0 with the reason. */
static unsigned host_cage_ports(unsigned cage_ports, const char *what, sim_error *err)
{
    if (cage_ports >= 2)
        return cage_ports;
    sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "%s: a host-side transceiver needs the servers' "
                  "port form, which the fabric does not give (DGX H100: 8 compute ports through "
                  "4 twin-port OSFP, hardware.md 4, 6.2): give the ports per cage "
                  "(cage-ports=\"2\", dcsim step --cage-ports 2)", what);
    return 0;
}

/* transceiver=l, l leaving a host or NIC: the cables of l's cage on its
 * server, at speed s */
static int set_host_cage(const fabric *f, ff_effect *e, const ff_part *p, unsigned cage_ports,
                         uint32_t pi, const char *one, sim_error *err)
{
    unsigned cp = host_cage_ports(cage_ports, one, err);
    if (!cp)
        return SIM_ERR_INPUT;
    uint64_t n = 0, *x = host_ports(f, &n);
    if (!x)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory for a failure state");
    uint64_t j = 0;
    while (j < n && (uint32_t)x[j] != p->id)
        j++;
    if (j == n) {
        free(x);
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "%s: link %u is no server's port "
                             "to the fabric (node %u: a host-side cage is named by a GPU's "
                             "port or a NIC's link to its switch)", one, p->id,
                             f->g.link_src[p->id]);
    }
    uint64_t lo = j; /* the server's first port */
    while (lo > 0 && x[lo - 1] >> 32 == x[j] >> 32)
        lo--;
    uint64_t first = lo + (j - lo) / cp * cp;
    for (uint64_t k = first; k < first + cp && k < n && x[k] >> 32 == x[j] >> 32; k++)
        set_cable(e, (uint32_t)x[k], p->speed, pi);
    free(x);
    return 0;
}

/* transceiver=l: the cables of l's cage at its source switch (or server), at speed s */
static int set_cage(const fabric *f, ff_effect *e, const ff_part *p, unsigned cage_ports,
                    uint32_t pi, sim_error *err)
{
    const topo_graph *g = &f->g;
    char one[64];
    ff_part_text(p, one, sizeof one);
    if (p->id >= g->n_links)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "%s: no directed link %u (the fabric "
                             "has links 0-%u; a cage is named by a link leaving its switch "
                             "or its server's port)", one, p->id, g->n_links - 1);
    uint32_t v = g->link_src[p->id];
    if (g->node_kind[v] == TOPO_HOST || g->node_kind[v] == TOPO_NIC)
        return set_host_cage(f, e, p, cage_ports, pi, one, err);
    if (g->node_kind[v] != TOPO_SWITCH)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "%s: link %u leaves node %u, no "
                             "fabric switch, GPU port or NIC (cages are theirs)", one, p->id, v);
    unsigned cp = cage_ports_of(f, cage_ports, one, err);
    if (!cp)
        return SIM_ERR_INPUT;
    uint32_t n = 0, *ports = switch_ports(g, v, &n);
    if (!ports)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory for a failure state");
    uint32_t j = 0;
    while (j < n && ports[j] != p->id)
        j++;
    uint32_t first = j / cp * cp;
    for (uint32_t k = first; k < first + cp && k < n; k++)
        set_cable(e, ports[k], p->speed, pi);
    free(ports);
    return 0;
}

/* ff_transceivers at tier 0: the servers' host-side cages */
static int host_transceivers(const fabric *f, unsigned cage_ports, uint32_t *ids, uint64_t *n,
                             sim_error *err)
{
    unsigned cp = host_cage_ports(cage_ports, "host-side transceiver failures", err);
    if (!cp)
        return SIM_ERR_INPUT;
    uint64_t k = 0, *x = host_ports(f, &k), count = 0;
    if (!x)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory for cages");
    for (uint64_t j = 0, lo = 0; j < k; j++) {
        if (j == 0 || x[j] >> 32 != x[j - 1] >> 32)
            lo = j; /* a server's first port */
        if ((j - lo) % cp == 0) {
            if (ids)
                ids[count] = (uint32_t)x[j];
            count++;
        }
    }
    free(x);
    *n = count;
    return 0;
}

int ff_transceivers(const fabric *f, unsigned cage_ports, int tier, uint32_t *ids,
                    uint64_t *n, sim_error *err)
{
    const topo_graph *g = &f->g;
    if (tier == 0)
        return host_transceivers(f, cage_ports, ids, n, err);
    unsigned cp = cage_ports_of(f, cage_ports, "transceiver failures", err);
    if (!cp)
        return SIM_ERR_INPUT;
    uint64_t count = 0;
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        if (g->node_kind[v] != TOPO_SWITCH || (tier >= 0 && g->node_tier[v] != tier))
            continue;
        uint32_t k = 0, *ports = switch_ports(g, v, &k);
        if (!ports)
            return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory for cages");
        for (uint32_t j = 0; j < k; j += cp) {
            if (ids)
                ids[count] = ports[j];
            count++;
        }
        free(ports);
    }
    *n = count;
    return 0;
}

static int refuse_id(const topo_graph *g, const ff_part *p, sim_error *err)
{
    char one[64], have[200];
    ff_part_text(p, one, sizeof one);
    switch (p->cls) {
    case FF_LINK:
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "%s: no directed link %u (the fabric "
                             "has links 0-%u)", one, p->id, g->n_links - 1);
    case FF_SWITCH:
        kind_ranges(g, TOPO_SWITCH, TOPO_SWITCH, have, sizeof have);
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "%s: node %u is no fabric switch "
                             "(switches are nodes %s; dcsim topo --export names them)", one,
                             p->id, have);
    case FF_NIC:
        kind_ranges(g, g->n_nics ? TOPO_NIC : TOPO_HOST, g->n_nics ? TOPO_NIC : TOPO_HOST,
                    have, sizeof have);
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "%s: node %u is no NIC (NICs are "
                             "nodes %s; dcsim topo --export names them)", one, p->id, have);
    default:
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "%s: no such %s", one,
                             ff_classes[p->cls].name);
    }
}

int ff_effect_compute(const fabric *f, const ff_state *s, ff_effect *out, sim_error *err)
{
    const topo_graph *g = &f->g;
    ff_effect e = {.n_links = g->n_links, .n_gpus = f->gpus};
    e.link_speed = malloc(((size_t)g->n_links + 1) * sizeof *e.link_speed);
    e.link_part = malloc(((size_t)g->n_links + 1) * sizeof *e.link_part);
    e.gpu_speed = malloc(((size_t)f->gpus + 1) * sizeof *e.gpu_speed);
    if (!e.link_speed || !e.link_part || !e.gpu_speed) {
        ff_effect_fini(&e);
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory for a failure state");
    }
    for (uint32_t l = 0; l < g->n_links; l++) {
        e.link_speed[l] = 1;
        e.link_part[l] = UINT32_MAX;
    }
    for (uint32_t k = 0; k < f->gpus; k++)
        e.gpu_speed[k] = 1;
    unsigned per_node = f->nc.domain_size ? f->nc.domain_size : 1;
    for (size_t i = 0; i < s->n; i++) {
        const ff_part *p = &s->part[i];
        uint32_t id = p->id, pi = (uint32_t)i;
        int ok = 1;
        switch (p->cls) {
        case FF_LINK:
            ok = id < g->n_links;
            if (ok)
                set_cable(&e, id, p->speed, pi);
            break;
        case FF_SWITCH:
            ok = id < g->n_nodes && g->node_kind[id] == TOPO_SWITCH;
            if (ok)
                set_node_cables(g, &e, id, 0, p->speed, pi);
            break;
        case FF_NIC:
            ok = id < g->n_nodes && g->node_kind[id] == (g->n_nics ? TOPO_NIC : TOPO_HOST);
            if (ok)
                set_node_cables(g, &e, id, 1, p->speed, pi);
            break;
        case FF_NODE:
            ok = (uint64_t)id * per_node < f->gpus;
            for (uint32_t k = 0; ok && k < per_node; k++)
                if (p->speed < e.gpu_speed[id * per_node + k])
                    e.gpu_speed[id * per_node + k] = p->speed;
            break;
        case FF_GPU:
            ok = id < f->gpus;
            if (ok && p->speed < e.gpu_speed[id])
                e.gpu_speed[id] = p->speed;
            break;
        case FF_TRANSCEIVER: {
            int rc = set_cage(f, &e, p, s->cage_ports, pi, err);
            if (rc) {
                ff_effect_fini(&e);
                return rc;
            }
            break;
        }
        default:
            ok = 0;
        }
        if (!ok) {
            ff_effect_fini(&e);
            if (p->cls == FF_NODE || p->cls == FF_GPU) {
                char one[64];
                ff_part_text(p, one, sizeof one);
                return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "%s: no such %s (the job has "
                                     "%s 0-%u)", one, ff_classes[p->cls].name,
                                     p->cls == FF_GPU ? "GPUs" : "nodes",
                                     (p->cls == FF_GPU ? f->gpus : f->gpus / per_node) - 1);
            }
            return refuse_id(g, p, err);
        }
    }
    for (uint32_t l = 0; l < g->n_links; l++) {
        e.links_down += e.link_speed[l] == 0;
        e.links_slow += e.link_speed[l] > 0 && e.link_speed[l] < 1;
    }
    *out = e;
    return 0;
}

void ff_effect_fini(ff_effect *e)
{
    if (!e)
        return;
    free(e->link_speed);
    free(e->link_part);
    free(e->gpu_speed);
    memset(e, 0, sizeof *e);
}

/* The part that cuts GPU k off the fabric, or UINT32_MAX when it still has a
 * fabric cable: every cable of its port (or of its shared NIC, or its own
 * cable to that NIC) to a switch is down. */
static uint32_t cut_by(const topo_graph *g, const ff_effect *e, uint32_t k)
{
    uint32_t port = k, culprit = UINT32_MAX;
    for (uint32_t i = g->out_offset[k]; i < g->out_offset[k + 1]; i++) {
        uint32_t l = g->out_links[i];
        if (g->node_kind[g->link_dst[l]] == TOPO_NIC) {
            if (e->link_speed[l] == 0)
                return e->link_part[l];
            port = g->link_dst[l];
        }
    }
    for (uint32_t i = g->out_offset[port]; i < g->out_offset[port + 1]; i++) {
        uint32_t l = g->out_links[i];
        if (g->node_kind[g->link_dst[l]] != TOPO_SWITCH)
            continue;
        if (e->link_speed[l] > 0)
            return UINT32_MAX;
        if (culprit == UINT32_MAX)
            culprit = e->link_part[l];
    }
    return culprit;
}

uint32_t ff_effect_cut_gpus(const fabric *f, const ff_effect *e, unsigned char *cut)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < f->gpus; k++) {
        cut[k] = e->gpu_speed[k] == 0 || (e->links_down && cut_by(&f->g, e, k) != UINT32_MAX);
        n += cut[k];
    }
    return n;
}

int ff_effect_check_gpus(const fabric *f, const ff_state *s, const ff_effect *e,
                         sim_error *err)
{
    uint32_t *ids = malloc(((size_t)f->gpus + 1) * sizeof *ids);
    if (!ids)
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory for a failure state");
    uint32_t part = UINT32_MAX;
    size_t n = 0;
    int gone = 1; /* GPUs at speed 0 first, then GPUs cut off the fabric */
    for (uint32_t k = 0; k < f->gpus; k++)
        if (e->gpu_speed[k] == 0)
            ids[n++] = k;
    for (size_t i = 0; n && i < s->n && part == UINT32_MAX; i++)
        if (s->part[i].speed == 0 && (s->part[i].cls == FF_GPU || s->part[i].cls == FF_NODE))
            part = (uint32_t)i;
    if (!n && e->links_down) {
        gone = 0;
        for (uint32_t k = 0; k < f->gpus; k++) {
            uint32_t by = cut_by(&f->g, e, k);
            if (by == UINT32_MAX)
                continue;
            if (part == UINT32_MAX)
                part = by;
            ids[n++] = k;
        }
    }
    if (!n) {
        free(ids);
        return 0;
    }
    char list[200], one[64] = "?";
    ranges_text(ids, n, list, sizeof list);
    if (part < s->n)
        ff_part_text(&s->part[part], one, sizeof one);
    free(ids);
    return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                         "failed part %s%s %s GPU%s %s%s; the step needs every GPU of the "
                         "job (the campaign's <degraded policy=\"shrink\"> restarts without "
                         "them: docs/failures.md)",
                         one, s->n > 1 ? " (with the others)" : "", gone ? "takes out" : "cuts",
                         n > 1 ? "s" : "", list, gone ? "" : " off the fabric");
}

/* The per-link curves of out as base's, pointing into out's own copies. */
static int copy_curves(const fabric *base, fabric *out)
{
    if (!base->link_curve)
        return 0;
    out->link_curve = malloc(((size_t)base->g.n_links + 1) * sizeof *out->link_curve);
    if (!out->link_curve)
        return -1;
    for (uint32_t l = 0; l < base->g.n_links; l++) {
        const flow_curve *c = base->link_curve[l];
        out->link_curve[l] = c == &base->incast_curve    ? &out->incast_curve
                             : c == &base->sharing_curve ? &out->sharing_curve
                                                         : c;
    }
    return 0;
}

int fabric_degrade(const fabric *base, const ff_effect *e, fabric *out, sim_error *err)
{
    memset(out, 0, sizeof *out);
    char why[256];
    if (topo_graph_degrade(&base->g, e->link_speed, &out->g))
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory for a degraded fabric");
    out->gpus = base->gpus;
    out->link_bytes_per_s = base->link_bytes_per_s;
    memcpy(out->link_name, base->link_name, sizeof out->link_name);
    out->scaleup_link_bytes_per_s = base->scaleup_link_bytes_per_s;
    out->incast_curve = base->incast_curve;
    out->sharing_curve = base->sharing_curve;
    out->inter_wire_latency_s = base->inter_wire_latency_s;
    out->intra_wire_latency_s = base->intra_wire_latency_s;
    out->routing = base->routing;
    out->router = topo_router_create(&out->g, &out->routing, why, sizeof why);
    if (!out->router || copy_curves(base, out) ||
        !(out->scratch = calloc((size_t)out->g.n_links + 1, sizeof *out->scratch)) ||
        !(out->nc.sim_cache = nc_sim_cache_create())) {
        fabric_free(out);
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory for a degraded fabric");
    }
    struct nc_sim_cache *cache = out->nc.sim_cache;
    out->nc = base->nc; /* the same latencies and in-network reduction */
    out->nc.g = &out->g;
    out->nc.router = out->router;
    out->nc.link_curve = out->link_curve;
    out->nc.scratch = out->scratch;
    out->nc.sim_cache = cache;
    return 0;
}
