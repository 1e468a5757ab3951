/* netcoll_analytic.c - the closed-form time of a plan (netcoll.h, Analytic
 * path): the phases routed on an idle network, each level of the DAG
 * (phases at equal depth run together) taking
 *   max over its phases of bytes / min_l(capacity_l / W_l) + latency,
 * W_l the summed weights of that level's connections on link l; and the
 * bytes a plan puts on every link, routed the same way. O(connections x
 * hops) per evaluation, plus the routing. A link with a curve (a
 * multi-fidelity table) has capacity_l x curve(n_eff), n_eff the flow
 * tier's demand-weighted fan-in (flow.h flow_net_set_incast) with the
 * level's units as flows: unit u offers min(its cap, min over its links m
 * out of a host of capacity_m / W_m), and counts on l by min(1, offer_u x
 * w_ul / capacity_l).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "netcoll_internal.h"
#include "pages.h"

/* A flow of the level: a coupled phase, or one connection of an uncoupled
 * one; its links are links[first .. first + n). */
typedef struct unit {
    uint32_t phase;
    size_t first, n;
    double bytes;
} unit;

typedef struct analytic {
    const nc_plan *p;
    const nc_fabric *f;
    double *load;       /* per link: the level's summed weights (zeros between levels) */
    nc_route_buf b;
    unit *units;
    size_t n_units, cap_units;
    uint32_t *links;    /* the links of every unit of the level; the rates need only
                           link ids, the weights are in load[] */
    double *weights;    /* with curves: each entry's weight (route x connection) */
    size_t n_links, cap_links;
    double *unit_w, *fanin; /* with curves: per link zeros (a unit's weights, n_eff) */
} analytic;

/* depth[i]: the longest chain of dependencies before phase i; returns the
 * largest. Phases come in topological order. */
static uint32_t phase_depths(const nc_plan *p, uint32_t *depth)
{
    uint32_t max_depth = 0;
    for (uint32_t i = 0; i < p->n_phases; i++) {
        for (uint32_t k = 0; k < p->phase[i].n_deps; k++) {
            uint32_t d = depth[p->deps[p->phase[i].dep_first + k]] + 1;
            if (d > depth[i])
                depth[i] = d;
        }
        if (depth[i] > max_depth)
            max_depth = depth[i];
    }
    return max_depth;
}

static int new_unit(analytic *a, uint32_t phase, double bytes)
{
    if (a->n_units == a->cap_units) {
        size_t cap = a->cap_units ? 2 * a->cap_units : 64;
        unit *q = realloc(a->units, cap * sizeof *q);
        if (!q)
            return -1;
        a->units = q;
        a->cap_units = cap;
    }
    a->units[a->n_units++] = (unit){phase, a->n_links, 0, bytes};
    return 0;
}

/* The route in a->b.one joins the last unit, its weights (x the
 * connection's) the level's load. */
static int add_route(analytic *a, long nu, double weight)
{
    if (a->n_links + (size_t)nu > a->cap_links) {
        size_t cap = a->cap_links ? 2 * a->cap_links : 4096;
        while (cap < a->n_links + (size_t)nu)
            cap *= 2;
        uint32_t *q = realloc(a->links, cap * sizeof *q);
        if (!q)
            return -1;
        a->links = q;
        if (a->unit_w) {
            double *w = realloc(a->weights, cap * sizeof *w);
            if (!w)
                return -1;
            a->weights = w;
        }
        a->cap_links = cap;
    }
    for (long u = 0; u < nu; u++) {
        a->links[a->n_links + (size_t)u] = a->b.one[u].link;
        if (a->unit_w)
            a->weights[a->n_links + (size_t)u] = a->b.one[u].weight * weight;
    }
    a->n_links += (size_t)nu;
    a->units[a->n_units - 1].n += (size_t)nu;
    for (long u = 0; u < nu; u++)
        a->load[a->b.one[u].link] += a->b.one[u].weight * weight;
    return 0;
}

/* Route the connections of phase i into units, links and load: 0, -1 when
 * out of memory, or a route failure's code with err set. */
static int route_phase(analytic *a, uint32_t i, sim_error *err)
{
    const nc_phase *ph = &a->p->phase[i];
    for (uint32_t k = 0; k < ph->n_conn; k++) {
        nc_conn c = nc_phase_conn(a->p, ph, k);
        long nu = nc_route_conn(a->f, &c, nc_route_key(i, k), a->load, &a->b);
        if (nu < 0)
            return nc_route_failure(err, nu, &c);
        if ((!ph->coupled || k == 0) &&
            new_unit(a, i, ph->bytes * (ph->coupled ? 1 : c.weight)))
            return -1;
        if (add_route(a, nu, c.weight))
            return -1;
    }
    return 0;
}

/* With curves: each curved link's n_eff into a->fanin (a unit's repeated
 * links merged, as the flow net merges a flow's), unclamped. */
static void level_fanin(analytic *a)
{
    const topo_graph *g = a->f->g;
    for (size_t u = 0; u < a->n_units; u++) {
        const unit *un = &a->units[u];
        double offer = a->p->phase[un->phase].rate_cap;
        for (size_t k = un->first; k < un->first + un->n; k++) {
            uint32_t m = a->links[k];
            a->unit_w[m] += a->weights[k];
            if (a->f->link_injects[m] && g->link_bytes_per_s[m] / a->load[m] < offer)
                offer = g->link_bytes_per_s[m] / a->load[m];
        }
        for (size_t k = un->first; k < un->first + un->n; k++) {
            uint32_t l = a->links[k];
            if (a->unit_w[l] == 0)
                continue; /* counted */
            double x = offer * a->unit_w[l] / g->link_bytes_per_s[l];
            a->unit_w[l] = 0;
            if (a->f->link_curve[l])
                a->fanin[l] += x < 1 ? x : 1;
        }
    }
}

/* The level's time: its slowest unit at its bottleneck rate, plus latency. */
static double level_time(analytic *a)
{
    const topo_graph *g = a->f->g;
    double level = 0;
    if (a->unit_w)
        level_fanin(a);
    for (size_t u = 0; u < a->n_units; u++) {
        const unit *un = &a->units[u];
        const nc_phase *ph = &a->p->phase[un->phase];
        double rate = ph->rate_cap;
        for (size_t k = un->first; k < un->first + un->n; k++) {
            uint32_t l = a->links[k];
            double cap = g->link_bytes_per_s[l];
            if (a->f->link_curve && a->f->link_curve[l] && a->load[l] > 1 + 1e-9) {
                double n = !a->unit_w          ? a->load[l] /* shared or converging */
                           : a->fanin[l] < 1   ? 1
                           : a->fanin[l] > a->load[l] ? a->load[l] : a->fanin[l];
                cap *= flow_curve_at(a->f->link_curve[l], n);
            }
            double r = cap / a->load[l];
            if (r < rate)
                rate = r;
        }
        double t = (un->n || isfinite(rate) ? un->bytes / rate : 0) + ph->latency_s;
        if (un->bytes == 0)
            t = ph->latency_s;
        if (t > level)
            level = t;
    }
    return level;
}

/* Count the level's switch-to-switch links (used, colliding) into out and
 * give its load back as zeros. */
static void end_level(analytic *a, nc_result *out)
{
    const topo_graph *g = a->f->g;
    for (size_t k = 0; k < a->n_links; k++) {
        uint32_t l = a->links[k];
        if (a->load[l] > 0 && g->node_kind[g->link_src[l]] == TOPO_SWITCH &&
            g->node_kind[g->link_dst[l]] == TOPO_SWITCH) {
            out->fabric_links_used++;
            out->fabric_links_colliding += a->load[l] > 1 + 1e-9;
        }
        a->load[l] = 0;
        if (a->fanin)
            a->fanin[l] = 0;
    }
    a->n_links = 0;
    a->n_units = 0;
}

int nc_analytic(const nc_plan *p, const nc_fabric *f, nc_result *out, sim_error *err)
{
    memset(out, 0, sizeof *out);
    const topo_graph *g = f->g;
    analytic a = {.p = p, .f = f};
    uint32_t *depth = calloc((size_t)p->n_phases + 1, sizeof *depth);
    /* per-level load: borrowed zeros (every level resets what it touched) */
    a.load = f->scratch ? f->scratch : calloc((size_t)g->n_links + 1, sizeof *a.load);
    a.b.one = malloc(((size_t)g->n_links + 1) * sizeof *a.b.one);
    if (f->link_curve && f->link_injects) { /* the demand-weighted fan-in */
        a.unit_w = calloc(2 * ((size_t)g->n_links + 1), sizeof *a.unit_w);
        a.fanin = a.unit_w ? a.unit_w + g->n_links + 1 : NULL;
    }
    int rc = -1;
    if (!depth || !a.load || !a.b.one || (f->link_curve && f->link_injects && !a.unit_w))
        goto done;
    uint32_t max_depth = phase_depths(p, depth);
    double total = 0;
    for (uint32_t level = 0; level <= max_depth; level++) {
        for (uint32_t i = 0; i < p->n_phases; i++)
            if (depth[i] == level && (rc = route_phase(&a, i, err)))
                goto done;
        total += level_time(&a);
        end_level(&a, out);
    }
    nc_fill_result(p, total, out);
    rc = 0;
done:
    if (rc == -1)
        rc = sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory in the analytic path");
    free(depth);
    if (f->scratch) /* a failed level leaves its loads: give back zeros */
        for (size_t k = 0; k < a.n_links && a.links; k++)
            a.load[a.links[k]] = 0;
    else
        free(a.load);
    free(a.b.one);
    free(a.links);
    free(a.weights);
    free(a.unit_w);
    free(a.units);
    return rc;
}

int nc_link_bytes(const nc_plan *p, const nc_fabric *f, double scale, double *bytes,
                  uint32_t *touched, size_t *n_touched, sim_error *err)
{
    const topo_graph *g = f->g;
    /* the routing load: borrowed zeros, reset link by link afterwards */
    double *load = f->scratch ? f->scratch : calloc((size_t)g->n_links + 1, sizeof *load);
    uint32_t *seen = malloc(((size_t)g->n_links + 1) * sizeof *seen);
    size_t n_seen = 0;
    nc_route_buf b = {0};
    b.one = malloc(((size_t)g->n_links + 1) * sizeof *b.one);
    int rc = 0;
    if (!load || !b.one || !seen) {
        rc = sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
        goto done;
    }
    for (uint32_t i = 0; i < p->n_phases; i++) {
        const nc_phase *ph = &p->phase[i];
        for (uint32_t k = 0; k < ph->n_conn; k++) {
            nc_conn c = nc_phase_conn(p, ph, k);
            long nu = nc_route_conn(f, &c, nc_route_key(i, k), load, &b);
            if (nu < 0) {
                rc = nc_route_failure(err, nu, &c);
                goto done;
            }
            for (long u = 0; u < nu; u++) {
                uint32_t l = b.one[u].link;
                if (load[l] == 0)
                    seen[n_seen++] = l;
                load[l] += b.one[u].weight * c.weight;
                double add = scale * ph->bytes * c.weight * b.one[u].weight;
                if (touched && bytes[l] == 0 && add > 0)
                    touched[(*n_touched)++] = l;
                bytes[l] += add;
            }
        }
    }
done:
    if (f->scratch && load && n_seen * 64 >= g->n_links) /* spread over most pages */
        sim_zero_release(load, ((size_t)g->n_links + 1) * sizeof *load);
    else
        for (size_t i = 0; load && i < n_seen; i++)
            load[seen[i]] = 0;
    if (!f->scratch)
        free(load);
    free(seen);
    free(b.one);
    return rc;
}
