/* flow_fold.c - the coarsest equitable partition of a flow-link graph by
 * colour refinement, and the quotient usages of a folded flow (flow_fold.h).
 *
 * Each round gives every flow the signature (its colour, the sorted list of
 * (link colour, weight bits) it uses) and every link the signature (its
 * colour, the sorted list of (flow colour, weight bits) on it), sorts the
 * signatures and numbers the distinct ones: the new colours. The colour
 * comes first in the signature, so every round refines the last; the
 * partition is stable (equitable) once a round splits no cell. Each round
 * splits a cell or stops, so there are at most n_flows + n_links rounds.
 */
#include "flow_fold.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* an edge of the bipartite graph seen from one end: the neighbour, its
 * colour this round and the weight's bits; a vertex's entries, sorted by
 * (colour, weight), are its signature (16 bytes an entry) */
typedef struct pair {
    uint32_t nbr, colour;
    uint64_t weight;
} pair;

/* one side of the bipartite graph: CSR lists of edges */
typedef struct side {
    uint32_t n;
    size_t *off;
    pair *sig;
    uint32_t *colour;
} side;

typedef struct sig_key {
    uint64_t hash;
    uint32_t colour, n, id;
    const pair *list;
} sig_key;

static uint64_t bits(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static int cmp_pair(const void *a, const void *b)
{
    const pair *x = a, *y = b; /* the neighbour apart: the signature is a multiset */
    if (x->colour != y->colour)
        return x->colour < y->colour ? -1 : 1;
    return (x->weight > y->weight) - (x->weight < y->weight);
}

static int cmp_key(const void *a, const void *b)
{
    const sig_key *x = a, *y = b;
    if (x->colour != y->colour)
        return x->colour < y->colour ? -1 : 1;
    if (x->n != y->n)
        return x->n < y->n ? -1 : 1;
    if (x->hash != y->hash)
        return x->hash < y->hash ? -1 : 1;
    for (uint32_t i = 0; i < x->n; i++) {
        int c = cmp_pair(&x->list[i], &y->list[i]);
        if (c)
            return c;
    }
    return (x->id > y->id) - (x->id < y->id); /* a total order: deterministic */
}

static int same_signature(const sig_key *x, const sig_key *y)
{
    if (x->colour != y->colour || x->n != y->n || x->hash != y->hash)
        return 0;
    for (uint32_t i = 0; i < x->n; i++)
        if (cmp_pair(&x->list[i], &y->list[i]))
            return 0;
    return 1;
}

/* Recolour side s by its neighbours' colours nbr_colour; returns the number
 * of colours. keys holds s->n entries. */
static uint32_t refine(side *s, const uint32_t *nbr_colour, sig_key *keys)
{
    for (uint32_t v = 0; v < s->n; v++) {
        pair *list = s->sig + s->off[v];
        uint32_t n = (uint32_t)(s->off[v + 1] - s->off[v]);
        for (uint32_t i = 0; i < n; i++)
            list[i].colour = nbr_colour[list[i].nbr];
        qsort(list, n, sizeof *list, cmp_pair);
        uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
        for (uint32_t i = 0; i < n; i++)
            h = ((h ^ list[i].colour) * 0xbf58476d1ce4e5b9ull ^ list[i].weight) *
                0x94d049bb133111ebull;
        keys[v] = (sig_key){h, s->colour[v], n, v, list};
    }
    qsort(keys, s->n, sizeof *keys, cmp_key);
    uint32_t colours = 0;
    for (uint32_t i = 0; i < s->n; i++) {
        if (i && !same_signature(&keys[i - 1], &keys[i]))
            colours++;
        s->colour[keys[i].id] = colours;
    }
    return s->n ? colours + 1 : 0;
}

/* colour[i] = the rank of value[i] among the distinct values */
static uint32_t rank_values(uint32_t n, const uint64_t *value, uint32_t *colour, sig_key *keys)
{
    for (uint32_t i = 0; i < n; i++)
        keys[i] = (sig_key){value[i], 0, 0, i, NULL};
    qsort(keys, n, sizeof *keys, cmp_key);
    uint32_t c = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (i && keys[i].hash != keys[i - 1].hash)
            c++;
        colour[keys[i].id] = c;
    }
    return n ? c + 1 : 0;
}

static int bad(sim_error *err, int code, const char *what)
{
    return sim_error_set(err, code, NULL, 0, "symmetry folding: %s", what);
}

static void side_free(side *s)
{
    free(s->off);
    free(s->colour);
    free(s->sig);
}

static int side_alloc(side *s, uint32_t n, size_t entries)
{
    s->n = n;
    s->off = calloc((size_t)n + 1, sizeof *s->off);
    s->colour = malloc((n ? n : 1) * sizeof *s->colour);
    s->sig = malloc((entries ? entries : 1) * sizeof *s->sig);
    return s->off && s->colour && s->sig ? 0 : -1;
}

/* The flows' merged usage lists (a link once, weights added in order) and
 * their transpose, the links' lists of flows. */
static int build_sides(uint32_t n_flows, const size_t *offset, const topo_usage *usage,
                       uint32_t n_links, side *fl, side *ln, sim_error *err)
{
    size_t total = offset[n_flows];
    if (side_alloc(fl, n_flows, total) || side_alloc(ln, n_links, total))
        return bad(err, SIM_ERR_NOMEM, "out of memory");
    uint32_t *slot = malloc(((size_t)n_links + 1) * sizeof *slot);
    if (!slot)
        return bad(err, SIM_ERR_NOMEM, "out of memory");
    for (uint32_t l = 0; l < n_links; l++)
        slot[l] = UINT32_MAX;
    size_t at = 0;
    for (uint32_t f = 0; f < n_flows; f++) {
        size_t first = at;
        for (size_t i = offset[f]; i < offset[f + 1]; i++) {
            uint32_t l = usage[i].link;
            double w = usage[i].weight;
            if (l >= n_links || !(w > 0) || !isfinite(w)) {
                free(slot);
                return bad(err, SIM_ERR_INTERNAL, "a usage names a link out of range or a "
                                                  "weight that is not positive and finite");
            }
            if (slot[l] != UINT32_MAX) { /* weights add in order, as flow_start's */
                double sum;
                memcpy(&sum, &fl->sig[slot[l]].weight, sizeof sum);
                sum += w;
                fl->sig[slot[l]].weight = bits(sum);
                continue;
            }
            slot[l] = (uint32_t)at;
            fl->sig[at++] = (pair){l, 0, bits(w)};
        }
        for (size_t i = first; i < at; i++)
            slot[fl->sig[i].nbr] = UINT32_MAX;
        fl->off[f + 1] = at;
    }
    free(slot);
    for (size_t i = 0; i < at; i++) /* count per link, then prefix sums */
        ln->off[fl->sig[i].nbr + 1]++;
    for (uint32_t l = 0; l < n_links; l++)
        ln->off[l + 1] += ln->off[l];
    size_t *fill = malloc(((size_t)n_links + 1) * sizeof *fill);
    if (!fill)
        return bad(err, SIM_ERR_NOMEM, "out of memory");
    memcpy(fill, ln->off, ((size_t)n_links + 1) * sizeof *fill);
    for (uint32_t f = 0; f < n_flows; f++)
        for (size_t i = fl->off[f]; i < fl->off[f + 1]; i++) {
            size_t k = fill[fl->sig[i].nbr]++;
            ln->sig[k] = (pair){f, 0, fl->sig[i].weight};
        }
    free(fill);
    return 0;
}

/* Cell sizes, representatives and capacities from the final colours. */
static int summarise(flow_fold *fd, const side *fl, const side *ln, const double *capacity)
{
    fd->flow_cell_size = calloc(fd->n_flow_cells ? fd->n_flow_cells : 1, sizeof(uint32_t));
    fd->flow_cell_rep = malloc((fd->n_flow_cells ? fd->n_flow_cells : 1) * sizeof(uint32_t));
    fd->link_cell_size = calloc(fd->n_link_cells ? fd->n_link_cells : 1, sizeof(uint32_t));
    fd->link_cell_capacity = malloc((fd->n_link_cells ? fd->n_link_cells : 1) * sizeof(double));
    fd->slot = malloc((fd->n_link_cells ? fd->n_link_cells : 1) * sizeof(uint32_t));
    if (!fd->flow_cell_size || !fd->flow_cell_rep || !fd->link_cell_size ||
        !fd->link_cell_capacity || !fd->slot)
        return -1;
    memcpy(fd->flow_cell, fl->colour, (size_t)fl->n * sizeof *fd->flow_cell);
    memcpy(fd->link_cell, ln->colour, (size_t)ln->n * sizeof *fd->link_cell);
    for (uint32_t f = fd->n_flows; f-- > 0;) { /* downwards: the lowest id stays */
        fd->flow_cell_size[fd->flow_cell[f]]++;
        fd->flow_cell_rep[fd->flow_cell[f]] = f;
    }
    for (uint32_t l = 0; l < fd->n_links; l++) {
        fd->link_cell_size[fd->link_cell[l]]++;
        fd->link_cell_capacity[fd->link_cell[l]] = capacity[l];
    }
    for (uint32_t c = 0; c < fd->n_link_cells; c++)
        fd->slot[c] = UINT32_MAX;
    return 0;
}

/* whether a watched pair is in two cells */
static int pair_split(const uint32_t *colour, const uint32_t *same, size_t n_same)
{
    for (size_t i = 0; i < n_same; i++)
        if (colour[same[2 * i]] != colour[same[2 * i + 1]])
            return 1;
    return 0;
}

int flow_fold_build(uint32_t n_flows, const uint64_t *flow_colour, const size_t *offset,
                    const topo_usage *usage, uint32_t n_links, const double *capacity,
                    flow_fold *out, sim_error *err)
{
    return flow_fold_watch(n_flows, flow_colour, offset, usage, n_links, capacity, NULL, 0, out,
                           err);
}

int flow_fold_watch(uint32_t n_flows, const uint64_t *flow_colour, const size_t *offset,
                    const topo_usage *usage, uint32_t n_links, const double *capacity,
                    const uint32_t *same, size_t n_same, flow_fold *out, sim_error *err)
{
    memset(out, 0, sizeof *out);
    side fl = {0}, ln = {0};
    uint32_t n_max = n_flows > n_links ? n_flows : n_links;
    sig_key *keys = malloc((n_max ? n_max : 1) * sizeof *keys);
    uint64_t *cap_bits = malloc((n_links ? n_links : 1) * sizeof *cap_bits);
    int rc = !keys || !cap_bits ? bad(err, SIM_ERR_NOMEM, "out of memory")
                                : build_sides(n_flows, offset, usage, n_links, &fl, &ln, err);
    for (size_t i = 0; !rc && i < 2 * n_same; i++)
        if (same[i] >= n_flows)
            rc = bad(err, SIM_ERR_INTERNAL, "a watched flow is out of range");
    if (!rc) {
        for (uint32_t l = 0; l < n_links; l++)
            cap_bits[l] = bits(capacity[l]);
        uint32_t nf = rank_values(n_flows, flow_colour, fl.colour, keys);
        uint32_t nl = rank_values(n_links, cap_bits, ln.colour, keys);
        unsigned rounds = 0;
        int split = pair_split(fl.colour, same, n_same);
        while (!split) { /* bounded: each round adds a colour or stops */
            rounds++;
            uint32_t nf2 = refine(&fl, ln.colour, keys);
            split = pair_split(fl.colour, same, n_same);
            uint32_t nl2 = refine(&ln, fl.colour, keys);
            int stable = nf2 == nf && nl2 == nl;
            nf = nf2;
            nl = nl2;
            if (stable)
                break;
        }
        out->n_flows = n_flows;
        out->n_links = n_links;
        out->n_flow_cells = nf;
        out->n_link_cells = nl;
        out->rounds = rounds;
        out->split = split;
        out->flow_cell = malloc((n_flows ? n_flows : 1) * sizeof *out->flow_cell);
        out->link_cell = malloc((n_links ? n_links : 1) * sizeof *out->link_cell);
        if (!out->flow_cell || !out->link_cell || summarise(out, &fl, &ln, capacity))
            rc = bad(err, SIM_ERR_NOMEM, "out of memory");
    }
    side_free(&fl);
    side_free(&ln);
    free(keys);
    free(cap_bits);
    if (rc)
        flow_fold_free(out);
    return rc;
}

void flow_fold_free(flow_fold *fd)
{
    if (!fd)
        return;
    free(fd->flow_cell);
    free(fd->link_cell);
    free(fd->flow_cell_size);
    free(fd->flow_cell_rep);
    free(fd->link_cell_size);
    free(fd->link_cell_capacity);
    free(fd->slot);
    memset(fd, 0, sizeof *fd);
}

size_t flow_fold_quotient(flow_fold *fd, uint32_t f, const topo_usage *u, size_t k,
                          topo_usage *out)
{
    size_t n = 0;
    for (size_t i = 0; i < k; i++) {
        uint32_t c = fd->link_cell[u[i].link];
        if (fd->slot[c] == UINT32_MAX) {
            fd->slot[c] = (uint32_t)n;
            out[n++] = (topo_usage){c, 0};
        }
        out[fd->slot[c]].weight += u[i].weight;
    }
    double members = fd->flow_cell_size[fd->flow_cell[f]];
    for (size_t i = 0; i < n; i++) {
        fd->slot[out[i].link] = UINT32_MAX;
        out[i].weight = out[i].weight * members / fd->link_cell_size[out[i].link];
    }
    return n;
}
