/* stepclasses.c - dcsim step --fail-classes: one part of each class failed
 * in turn (see stepclasses.h). Every row is one step_simulate_failed on the
 * fabric as built with a one-part state; nothing carries over between rows. */
#include "stepclasses.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "jsonout.h"
#include "step_fault.h"
#include "steptier.h"

/* the slow rows' speed when neither --fail-slow nor a fail-slow <failure
 * speed> gives one (A: shared/reference has no figure for a retrained link
 * or a throttled GPU; docs/failures.md) */
#define STEP_CLASSES_DEFAULT_SLOW 0.5

enum row_kind { ROW_SWITCH, ROW_CABLE, ROW_HOST, ROW_PORT, ROW_GPU };

/* a switch-to-switch cable's class: its tiers, and whether it joins two
 * groups on one tier (a Dragonfly global link) */
typedef struct cable_key {
    int lo, hi, global;
} cable_key;

static int is_endpoint(int kind) { return kind == TOPO_HOST || kind == TOPO_NIC; }

/* the class of cable l (even: directed l and l + 1): 0 not a fabric
 * cable, 1 a host cable, 2 switch-to-switch with *k filled */
static int cable_class(const topo_graph *g, uint32_t l, cable_key *k)
{
    uint32_t a = g->link_src[l], b = g->link_dst[l];
    int ka = g->node_kind[a], kb = g->node_kind[b];
    if (ka == TOPO_SWITCH && kb == TOPO_SWITCH) {
        int ta = g->node_tier[a], tb = g->node_tier[b];
        *k = (cable_key){ta < tb ? ta : tb, ta < tb ? tb : ta,
                         ta == tb && g->node_group[a] != g->node_group[b]};
        return 2;
    }
    return (is_endpoint(ka) && kb == TOPO_SWITCH) || (ka == TOPO_SWITCH && is_endpoint(kb));
}

static int cable_used(const step_profile *p, uint32_t l)
{
    return p->link_bytes[l] > 0 || p->link_bytes[l ^ 1u] > 0;
}

/* node v's cables (to fabric switches only, when only_fabric) carried bytes */
static int node_used(const topo_graph *g, const step_profile *p, uint32_t v, int only_fabric)
{
    for (uint32_t i = g->out_offset[v]; i < g->out_offset[v + 1]; i++) {
        uint32_t l = g->out_links[i];
        if ((!only_fabric || g->node_kind[g->link_dst[l]] == TOPO_SWITCH) && cable_used(p, l))
            return 1;
    }
    return 0;
}

static void switch_name(const topo_graph *g, int t, int top, char *buf, size_t size)
{
    if (g->updown)
        snprintf(buf, size, "%s switch", t == 1 ? "leaf" : t == top && t > 2 ? "core"
                                       : t == 2 ? "spine" : "upper-tier");
    else
        snprintf(buf, size, "%s", top == 1 ? "router" : t == 1 ? "leaf router" : "spine router");
}

static void cable_name(const topo_graph *g, const cable_key *k, char *buf, size_t size)
{
    if (k->lo == k->hi)
        snprintf(buf, size, "%s link", k->global ? "global" : "local");
    else if (g->updown && k->lo <= 2)
        snprintf(buf, size, "%s uplink", k->lo == 1 ? "leaf" : "spine");
    else
        snprintf(buf, size, "tier %d-%d link", k->lo, k->hi);
}

/* the rows' parts: the representative of each class of g (stepclasses.h) */
static void pick_rows(const fabric *f, const step_profile *p, double slow, step_class_table *t)
{
    const topo_graph *g = &f->g;
    int top = 0;
    for (uint32_t v = 0; v < g->n_nodes; v++)
        if (g->node_kind[v] == TOPO_SWITCH && g->node_tier[v] > top)
            top = g->node_tier[v];
    for (int tier = top; tier >= 1 && t->n < STEP_CLASSES_MAX; tier--) { /* switches */
        uint32_t first = UINT32_MAX, used = UINT32_MAX;
        for (uint32_t v = 0; v < g->n_nodes && used == UINT32_MAX; v++)
            if (g->node_kind[v] == TOPO_SWITCH && g->node_tier[v] == tier) {
                first = first == UINT32_MAX ? v : first;
                used = node_used(g, p, v, 0) ? v : UINT32_MAX;
            }
        if (first == UINT32_MAX)
            continue;
        step_class_row *r = &t->row[t->n++];
        switch_name(g, tier, top, r->name, sizeof r->name);
        r->carried_traffic = used != UINT32_MAX;
        r->part = (ff_part){FF_SWITCH, r->carried_traffic ? used : first, 0};
    }
    /* switch-to-switch cables: upper tiers first, global before local */
    for (int hi = top; hi >= 1; hi--)
        for (int lo = hi; lo >= 1; lo--)
            for (int global = 1; global >= 0 && t->n < STEP_CLASSES_MAX; global--) {
                uint32_t first = UINT32_MAX, used = UINT32_MAX;
                for (uint32_t l = 0; l + 1 < g->n_links && used == UINT32_MAX; l += 2) {
                    cable_key k;
                    if (cable_class(g, l, &k) == 2 && k.lo == lo && k.hi == hi &&
                        k.global == global) {
                        first = first == UINT32_MAX ? l : first;
                        used = cable_used(p, l) ? l : UINT32_MAX;
                    }
                }
                if (first == UINT32_MAX)
                    continue;
                step_class_row *r = &t->row[t->n++];
                cable_name(g, &(cable_key){lo, hi, global}, r->name, sizeof r->name);
                r->carried_traffic = used != UINT32_MAX;
                r->part = (ff_part){FF_LINK, r->carried_traffic ? used : first, 0};
            }
    uint32_t first = UINT32_MAX, used = UINT32_MAX; /* a host cable, down */
    for (uint32_t l = 0; l + 1 < g->n_links && used == UINT32_MAX; l += 2) {
        cable_key k;
        if (cable_class(g, l, &k) == 1) {
            first = first == UINT32_MAX ? l : first;
            used = cable_used(p, l) ? l : UINT32_MAX;
        }
    }
    if (first != UINT32_MAX && t->n + 3 <= STEP_CLASSES_MAX) {
        step_class_row *r = &t->row[t->n++];
        snprintf(r->name, sizeof r->name, "host link");
        r->carried_traffic = used != UINT32_MAX;
        r->part = (ff_part){FF_LINK, r->carried_traffic ? used : first, 0};
    }
    int port = g->n_nics ? TOPO_NIC : TOPO_HOST; /* a NIC or a GPU's port, slow */
    first = used = UINT32_MAX;
    for (uint32_t v = 0; v < g->n_nodes && used == UINT32_MAX; v++)
        if (g->node_kind[v] == port) {
            first = first == UINT32_MAX ? v : first;
            used = node_used(g, p, v, 1) ? v : UINT32_MAX;
        }
    if (first != UINT32_MAX && t->n + 2 <= STEP_CLASSES_MAX) {
        step_class_row *r = &t->row[t->n++];
        snprintf(r->name, sizeof r->name, "%s, slow", g->n_nics ? "NIC" : "GPU port");
        r->carried_traffic = used != UINT32_MAX;
        r->part = (ff_part){FF_NIC, r->carried_traffic ? used : first, slow};
    }
    if (f->gpus && t->n < STEP_CLASSES_MAX) { /* a throttled GPU: GPU 0 */
        step_class_row *r = &t->row[t->n++];
        snprintf(r->name, sizeof r->name, "GPU, slow");
        r->carried_traffic = 1;
        r->part = (ff_part){FF_GPU, 0, slow};
    }
}

/* the busiest fabric link (tier >= 1) of profile p with the links at
 * speed (NULL: 1) */
static double busiest(const topo_graph *g, const double *speed, const step_profile *p,
                      uint32_t *link)
{
    double best = -1;
    *link = UINT32_MAX;
    for (uint32_t l = 0; l < g->n_links && l < p->n_links; l++) {
        double cap = g->link_bytes_per_s[l] * (speed ? speed[l] : 1.0);
        if (!(p->link_tier && p->link_tier[l] >= 1) || !(cap > 0) || !(p->iteration_s > 0))
            continue;
        double u = p->link_bytes[l] / (cap * p->iteration_s);
        if (u > best) {
            best = u;
            *link = l;
        }
    }
    return best < 0 ? 0 : best;
}

/* one row: its state's effect, refusal or iteration and busiest link */
static int run_row(const workload *w, const compute_device *dev, fabric *f,
                   const step_options *o, step_class_row *r, sim_error *err)
{
    ff_state st = {.part = &r->part, .n = 1, .cap = 1};
    ff_effect e = {0};
    sim_error why;
    sim_error_clear(&why);
    int rc = ff_effect_compute(f, &st, &e, &why);
    if (!rc)
        rc = ff_effect_check_gpus(f, &st, &e, &why);
    step_profile after;
    memset(&after, 0, sizeof after);
    if (!rc)
        rc = step_simulate_failed(w, dev, f, &st, o, &after, &why);
    if (rc == SIM_ERR_INPUT) { /* cut off, or no route left: a result of the row */
        snprintf(r->refusal, sizeof r->refusal, "%s", why.msg);
        rc = 0;
    } else if (rc) {
        *err = why;
    } else {
        r->runnable = 1;
        r->iteration_s = after.iteration_s;
        r->busiest_util = busiest(&f->g, e.link_speed, &after, &r->busiest_link);
    }
    step_profile_free(&after);
    ff_effect_fini(&e);
    return rc;
}

int step_fail_classes(const scn_scenario *s, const double *gpu_speed, unsigned n_gpu_speed,
                      double slow_speed, step_class_table *out, sim_error *err)
{
    memset(out, 0, sizeof *out);
    out->slow_speed = slow_speed;
    workload w;
    compute_device dev;
    fabric f;
    step_options o;
    int rc = app_step_inputs(s, gpu_speed, n_gpu_speed, &w, &dev, &f, &o, err);
    if (rc)
        return rc;
    step_profile before;
    rc = step_simulate(&w, &dev, &f, &o, &before, err);
    if (!rc) {
        out->built_iteration_s = before.iteration_s;
        out->built_busiest_util = busiest(&f.g, NULL, &before, &out->built_busiest_link);
        pick_rows(&f, &before, slow_speed, out);
        step_profile_free(&before);
    }
    for (unsigned i = 0; !rc && i < out->n; i++)
        rc = run_row(&w, &dev, &f, &o, &out->row[i], err);
    fabric_free(&f);
    workload_free(&w);
    return rc;
}

static double change_pct(const step_class_table *t, const step_class_row *r)
{
    return t->built_iteration_s > 0
               ? 100 * (r->iteration_s - t->built_iteration_s) / t->built_iteration_s
               : 0;
}

static void print_table(const step_class_table *t)
{
    printf("failed-part classes: one part of each failed in turn on the fabric as built\n"
           "                (representative: the lowest id among the class's parts whose "
           "cables carried traffic as built; * none did: the lowest id)\n");
    printf("iteration       %.6g s as built; busiest fabric link %u at %.1f%%\n",
           t->built_iteration_s, t->built_busiest_link, 100 * t->built_busiest_util);
    printf("slow parts      at %g %% (%s)\n", 100 * t->slow_speed, t->slow_from);
    printf("  %-14s %-16s %12s %10s  %s\n", "class", "part", "iteration s", "change",
           "busiest fabric link, as built -> failed");
    for (unsigned i = 0; i < t->n; i++) {
        const step_class_row *r = &t->row[i];
        char part[64];
        ff_part_text(&r->part, part, sizeof part);
        if (!r->carried_traffic)
            strcat(part, "*");
        if (!r->runnable) {
            printf("  %-14s %-16s %12s %10s  %s\n", r->name, part, "-", "-",
                   strstr(r->refusal, "off the fabric") ? "refused: cuts GPUs off"
                                                        : "refused: no route left");
            continue;
        }
        double c = change_pct(t, r);
        printf(fabs(c) < 1e6 ? "  %-14s %-16s %12.6g %+9.3f%%  %u %.1f%% -> %u %.1f%%\n"
                             : "  %-14s %-16s %12.6g %+9.4g%%  %u %.1f%% -> %u %.1f%%\n",
               r->name, part, r->iteration_s, c, t->built_busiest_link,
               100 * t->built_busiest_util, r->busiest_link, 100 * r->busiest_util);
    }
    for (unsigned i = 0; i < t->n; i++)
        if (!t->row[i].runnable)
            printf("  %s: %s\n", t->row[i].name, t->row[i].refusal);
}

static void busiest_json(cJSON *o, const char *name, uint32_t link, double util)
{
    cJSON *b = cJSON_AddObjectToObject(o, name);
    cJSON_AddNumberToObject(b, "link", link);
    cJSON_AddNumberToObject(b, "utilisation", util);
}

static int print_json(const step_class_table *t, int csv)
{
    cJSON *o = jsonout_begin("step");
    if (!o)
        return jsonout_emit(NULL, JSONOUT_JSON, NULL, NULL);
    cJSON_AddNumberToObject(o, "iteration_as_built_s", t->built_iteration_s);
    busiest_json(o, "busiest_as_built", t->built_busiest_link, t->built_busiest_util);
    cJSON_AddNumberToObject(o, "slow_speed", t->slow_speed);
    cJSON_AddStringToObject(o, "slow_speed_from", t->slow_from);
    cJSON *rows = cJSON_AddArrayToObject(o, "classes");
    for (unsigned i = 0; i < t->n; i++) {
        const step_class_row *r = &t->row[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "class", r->name);
        cJSON_AddStringToObject(x, "part", ff_classes[r->part.cls].name);
        cJSON_AddNumberToObject(x, "id", r->part.id);
        cJSON_AddNumberToObject(x, "speed", r->part.speed);
        cJSON_AddBoolToObject(x, "carried_traffic", r->carried_traffic);
        cJSON_AddBoolToObject(x, "runnable", r->runnable);
        if (r->runnable) {
            cJSON_AddNumberToObject(x, "iteration_s", r->iteration_s);
            cJSON_AddNumberToObject(x, "change_pct", change_pct(t, r));
            busiest_json(x, "busiest_failed", r->busiest_link, r->busiest_util);
        } else
            cJSON_AddStringToObject(x, "refusal", r->refusal);
        cJSON_AddItemToArray(rows, x);
    }
    return jsonout_emit(o, csv ? JSONOUT_CSV : JSONOUT_JSON, "classes", NULL);
}

/* "50%" or "0.5" in (0, 1): 0, or -1 */
static int parse_speed(const char *text, double *out)
{
    char *end;
    double v = strtod(text, &end);
    if (end == text)
        return -1;
    if (*end == '%') {
        v /= 100;
        end++;
    }
    if (*end || !(v > 0 && v < 1))
        return -1;
    *out = v;
    return 0;
}

int step_fail_classes_cmd(const scn_scenario *s, const double *gpu_speed, unsigned n_gpu_speed,
                          const char *slow_text, int json)
{
    if (s->step.packet)
        return cli_usage_error("step", "%s: the packet network does not take failure states "
                               "yet (use the flow model, --concurrent or --analytic)",
                               "--fail-classes");
    double slow = STEP_CLASSES_DEFAULT_SLOW;
    const char *from = "defaults used: 50 %, A: no published figure; --fail-slow SPEED";
    if (slow_text) {
        if (parse_speed(slow_text, &slow))
            return cli_usage_error("step", "--fail-slow %s: expected a speed above 0 and below "
                                   "1 (50%% or 0.5)", slow_text);
        from = "--fail-slow";
    } else
        for (unsigned i = 0; i < s->campaign.n_causes; i++)
            if (s->campaign.causes[i].slow_speed > 0) { /* the campaign's fail-slow speed */
                slow = s->campaign.causes[i].slow_speed;
                from = "the scenario's fail-slow <failure speed>";
                break;
            }
    step_class_table *t = malloc(sizeof *t);
    if (!t) {
        fprintf(stderr, "dcsim step: error: out of memory\n");
        return 1;
    }
    sim_error err;
    sim_error_clear(&err);
    int rc = step_fail_classes(s, gpu_speed, n_gpu_speed, slow, t, &err);
    if (rc) {
        sim_error e;
        sim_error_clear(&e);
        sim_error_set(&e, err.code, s->source, 0, "%s", err.msg);
        rc = cli_print_error(&e);
    } else {
        t->slow_from = from;
        if (json)
            rc = print_json(t, json == 2);
        else
            print_table(t);
    }
    free(t);
    return rc;
}
