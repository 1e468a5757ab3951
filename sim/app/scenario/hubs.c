/* hubs.c - <hubs> (dcsim hubs; docs/hubs.md): the datacenters at the hubs
 * (<hub>: a catalog site as <site> reads it, with its GPUs and an optional
 * hourly carbon profile), the backbone (bandwidth, cost per TB: the
 * scenario's, no sourced figure exists), the placement policy and the
 * demand: <demand> classes (origin, kind, dataset and result sizes, RTT
 * bound, slack; the stream of <cluster-jobs> or their own <arrivals>,
 * <sizes>, <duration>) or a CSV <trace>. The scheduler, placement and power
 * figures of every hub's cluster are <cluster-jobs>' (the template).
 */
#include "loader.h"
#include "power.h"
#include "site.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FILE_BYTES (256.0 * 1024 * 1024)

void scn_hubs_free(scn_hubs *h)
{
    if (!h)
        return;
    free(h->jobs);
    free(h->routes);
    for (unsigned i = 0; i < HUBS_MAX; i++)
        free(h->carbon[i]);
    free(h);
}

/* the file named by n's attribute, relative to the scenario's folder, whole */
static int read_file(loader *ld, xmlNode *n, const char *attr, char *path, size_t size,
                     char **text, size_t *len)
{
    char file[256];
    copy_attr(n, attr, file, sizeof file);
    const char *slash = strrchr(ld->display_name, '/');
    if (file[0] == '/' || !slash)
        snprintf(path, size, "%s", file);
    else
        snprintf(path, size, "%.*s/%s", (int)(slash - ld->display_name), ld->display_name, file);
    FILE *f = fopen(path, "rb");
    if (!f)
        return node_error(ld, n, attr, "cannot read %s: %s", path, strerror(errno));
    size_t cap = 0;
    *text = NULL;
    *len = 0;
    int rc = 0;
    for (;;) {
        if (*len == cap) {
            size_t ncap = cap ? 2 * cap : 65536;
            char *t = ncap <= MAX_FILE_BYTES ? realloc(*text, ncap) : NULL;
            if (!t) {
                rc = node_error(ld, n, attr, "%s is larger than 256 MiB (or out of memory)", path);
                break;
            }
            *text = t;
            cap = ncap;
        }
        size_t got = fread(*text + *len, 1, cap - *len, f);
        *len += got;
        if (!got)
            break;
    }
    if (!rc && ferror(f))
        rc = node_error(ld, n, attr, "cannot read %s", path);
    fclose(f);
    if (rc) {
        free(*text);
        *text = NULL;
    }
    return rc;
}

/* <hub water-limit="V m3">: litres a year, above 0 and at most 1e9 m3 */
static int water_limit(loader *ld, xmlNode *n, double *litres)
{
    char text[64], *end;
    copy_attr(n, "water-limit", text, sizeof text);
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || strcmp(end, "m3") || errno == ERANGE || !(v > 0 && v <= 1e9))
        return node_error(ld, n, "water-limit", "expected a volume of water a year in m3, above "
                          "0 and at most 1e9, e.g. \"50000m3\"");
    *litres = v * 1e3;
    return 0;
}

/* the facility model's annual PUE and WUE at the design load: the means
 * over the twelve monthly mean temperatures */
static void facility_keys(const scn_site *site, double *pue, double *wue)
{
    *pue = *wue = 0;
    for (unsigned m = 0; m < FAC_MONTHS; m++) {
        *pue += fac_pue(&site->design, site->info.climate.monthly_mean_c[m], 1.0) / FAC_MONTHS;
        *wue += fac_wue_l_per_kwh(&site->design, site->info.climate.monthly_mean_c[m], 1.0) /
                FAC_MONTHS;
    }
}

/* a GPU's sustained dense bf16 rate by the speed rule: the catalog's bf16
 * peak x its bf16 gemm-efficiency (measured large-GEMM throughput over
 * peak); 0 when either is missing (no 1.0 is assumed) */
static double bf16_rate(const hw_gpu *g)
{
    double peak = g->peak_flops_per_s[PREC_BF16], eff = g->gemm_efficiency[PREC_BF16];
    return peak > 0 && eff > 0 ? peak * eff : 0;
}

/* <hub speed> or <hub serving-speed> (attr): a speed over the scenario's
 * GPU, 1e-6 to 100 (the hubs' time scales are at most 1e6), as the scale
 * 1 / speed; what says what it is in the error */
static int given_speed(loader *ld, xmlNode *n, const char *attr, const char *what,
                       double *speed, double *scale)
{
    int rc = get_quantity(ld, n, attr, SIM_DIM_COUNT, 1, speed);
    if (!rc)
        rc = positive(ld, n, attr, *speed, 100, what);
    if (!rc && *speed < 1e-6)
        rc = node_error(ld, n, attr, "%s must be at least 1e-06%s", attr, what);
    *scale = rc ? 0 : 1 / *speed;
    return rc;
}

/* <hub gpu speed>: the hub's GPU (the scenario's by default) and the time a
 * job of the scenario's GPU takes there, per second (time_scale) */
static int hub_gpu_time(loader *ld, xmlNode *n, const scn_scenario *s, scn_hubs *H, unsigned h)
{
    hubs_hub *hub = &H->cfg.hubs[h];
    H->gpu[h] = s->gpu;
    hub->time_scale = 1;
    H->speed_rule[h][0] = 0;
    if (has_attr(n, "gpu")) {
        char type[128];
        copy_attr(n, "gpu", type, sizeof type);
        const hw_gpu *g = find_named(ld, CAT_GPU, type);
        if (!g) {
            char known[1024];
            entry_names(ld, CAT_GPU, known, sizeof known);
            return node_error(ld, n, "gpu", "unknown GPU type '%s'; known types: %s", type,
                              known);
        }
        H->gpu[h] = *g;
    }
    const hw_gpu *g = &H->gpu[h];
    hub->serving_scale = 0; /* hub_serving_time */
    if (has_attr(n, "speed")) {
        double speed = 0;
        int rc = given_speed(ld, n, "speed", " (the hub's GPU speed over the scenario's)",
                             &speed, &hub->time_scale);
        if (rc)
            return rc;
        H->speed_given[h] = 1;
        snprintf(H->speed_rule[h], sizeof H->speed_rule[h], "%s: speed %.6g given (<hub "
                 "speed>): x %.6g the time", hub->name, speed, hub->time_scale);
        return 0;
    }
    if (!strcmp(g->name, s->gpu.name))
        return 0; /* the scenario's GPU: exactly its time */
    double ref = bf16_rate(&s->gpu), at = bf16_rate(g);
    if (!(ref > 0) || !(at > 0)) {
        const hw_gpu *miss = at > 0 ? &s->gpu : g;
        return node_error(ld, n, "gpu", "the catalog has no bf16 %s for %s: the speed rule (bf16 "
                          "peak x gemm-efficiency against %s's) needs both, and none is assumed; "
                          "give speed=\"S\" (the hub's GPU speed over %s's)",
                          miss->peak_flops_per_s[PREC_BF16] > 0 ? "gemm-efficiency" : "peak",
                          miss->name, s->gpu.name, s->gpu.name);
    }
    hub->time_scale = ref / at;
    snprintf(H->speed_rule[h], sizeof H->speed_rule[h], "%s: %s %.6g TFLOP/s x %.3f against "
             "%s %.6g x %.3f: x %.6g the time", hub->name, g->name,
             g->peak_flops_per_s[PREC_BF16] / 1e12, g->gemm_efficiency[PREC_BF16], s->gpu.name,
             s->gpu.peak_flops_per_s[PREC_BF16] / 1e12, s->gpu.gemm_efficiency[PREC_BF16],
             hub->time_scale);
    return 0;
}

/* <hub serving-speed>, or the serving rule: a serving job's GPUs at the hub
 * per GPU it asks for (serving_scale). Decode, most of a serving job's
 * work, reads the weights and the KV cache from HBM every token: its speed
 * is the HBM bandwidth's (components.md 3: a memory-bound op takes bytes /
 * (efficiency x HBM peak)), so the rule is the catalog's peak HBM bandwidth
 * of the scenario's GPU over the hub GPU's. A given speed (<hub speed>)
 * covers serving too unless serving-speed is given. A GPU without an HBM
 * bandwidth leaves serving_scale 0 and *missing set: refused only if the
 * demand holds a serving job (parse_hubs) */
static int hub_serving_time(loader *ld, xmlNode *n, const scn_scenario *s, scn_hubs *H,
                            unsigned h, int *missing)
{
    hubs_hub *hub = &H->cfg.hubs[h];
    const hw_gpu *g = &H->gpu[h];
    H->serving_rule[h][0] = 0;
    *missing = 0;
    if (has_attr(n, "serving-speed")) {
        double speed = 0;
        int rc = given_speed(ld, n, "serving-speed", " (the hub's GPU speed at serving over "
                             "the scenario's)", &speed, &hub->serving_scale);
        if (rc)
            return rc;
        snprintf(H->serving_rule[h], sizeof H->serving_rule[h], "%s: serving speed %.6g given "
                 "(<hub serving-speed>): x %.6g the GPUs", hub->name, speed, hub->serving_scale);
        return 0;
    }
    if (H->speed_given[h]) {
        hub->serving_scale = hub->time_scale;
        return 0;
    }
    if (!strcmp(g->name, s->gpu.name)) {
        hub->serving_scale = 1;
        return 0;
    }
    double ref = s->gpu.hbm_bytes_per_s, at = g->hbm_bytes_per_s;
    if (!(ref > 0) || !(at > 0)) {
        *missing = 1;
        snprintf(H->serving_rule[h], sizeof H->serving_rule[h], "the catalog has no HBM "
                 "bandwidth for %s: the serving rule (HBM bandwidth against %s's) needs both, "
                 "and none is assumed; give serving-speed=\"S\"", at > 0 ? s->gpu.name : g->name,
                 s->gpu.name);
        return 0;
    }
    hub->serving_scale = ref / at;
    snprintf(H->serving_rule[h], sizeof H->serving_rule[h], "%s: serving on %s, HBM %.4g TB/s "
             "against %s %.4g TB/s: x %.6g the GPUs", hub->name, g->name, at / 1e12, s->gpu.name,
             ref / 1e12, hub->serving_scale);
    return 0;
}

/* the IT power one of GPU g's GPUs adds busy at the stream's compute
 * fraction, as the hubs' energy account draws it (the power tier as
 * energyrun.c builds it: pwr_config_for g's TDP and the stream's nodes) */
static double busy_rise_w(const hw_gpu *g, const scn_scenario *s)
{
    pwr_config c;
    pwr_config_for(&c, g->tdp_w, s->cluster_jobs.node_gpus);
    return pwr_gpu_busy_rise_w(&c, s->cluster_compute_frac);
}

/* hub_gpu_time, then the energy scale the placement keys use (hubs.h): the
 * time scale x what a busy GPU adds to the hub's IT power over what one of
 * the scenario's adds */
static int hub_gpu(loader *ld, xmlNode *n, const scn_scenario *s, scn_hubs *H, unsigned h,
                   int *serving_missing)
{
    int rc = hub_gpu_time(ld, n, s, H, h);
    if (!rc)
        rc = hub_serving_time(ld, n, s, H, h, serving_missing);
    hubs_hub *hub = &H->cfg.hubs[h];
    double at = busy_rise_w(&H->gpu[h], s), ref = busy_rise_w(&s->gpu, s);
    if (!rc && !(at > 0 && ref > 0 && isfinite(at / ref)))
        return node_error(ld, n, "gpu", "the power tier gives a busy GPU no rise over an idle "
                          "one (%g W against %g W): no energy scale", at, ref);
    hub->energy_scale = (hub->time_scale > 0 ? hub->time_scale : 1) * (at / ref);
    hub->serving_energy_scale = (hub->serving_scale > 0 ? hub->serving_scale : 1) * (at / ref);
    return rc;
}

/* <hub name gpus carbon-profile ...>: hub h (*serving_missing: as hub_serving_time) */
/* With a <cluster><fabric>: hub h's fabric, its own <hub><fabric> (read as
 * <cluster><fabric> is, for the hub's GPUs and GPU type) or the scenario's,
 * at the hub's size; a size it cannot be built for refused here */
static int hub_fabric(loader *ld, xmlNode *n, scn_scenario *s, scn_hubs *H, unsigned h)
{
    xmlNode *own = child(n, "fabric");
    if (own && !s->has_cluster_traffic)
        return node_error(ld, own, NULL, "a hub's own <fabric> needs a <cluster><fabric> (the "
                          "interference at the hubs and its <traffic>)");
    if (!s->has_cluster_traffic)
        return 0;
    uint32_t gpus = H->cfg.hubs[h].gpus;
    if (own) {
        scn_scenario *one = malloc(sizeof *one); /* the scenario as the hub's cluster */
        if (!one)
            return sim_error_set(ld->err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
        *one = *s;
        one->gpu = H->gpu[h];
        one->campaign.gpu_count = gpus;
        int rc = parse_fabric(ld, own, one);
        H->fabric[h] = one->fabric;
        free(one);
        H->own_fabric[h] = 1;
        return rc;
    }
    fabric_config fc = s->fabric; /* the scenario's at the hub's size */
    fc.gpus = gpus;
    topo_counts counts;
    sim_error e;
    sim_error_clear(&e);
    if (fabric_count(&fc, &counts, &e))
        return node_error(ld, n, "gpus", "the <cluster><fabric> at the hub's %u GPUs: %s", gpus,
                          e.msg);
    H->fabric[h] = fc;
    return 0;
}

static int parse_hub(loader *ld, xmlNode *n, scn_scenario *s, scn_hubs *H, unsigned h,
                     int *serving_missing)
{
    hubs_config *c = &H->cfg;
    int rc = parse_site_at(ld, n, s->seed, &H->site[h]);
    if (rc)
        return rc;
    hubs_hub *hub = &c->hubs[h];
    const site_info *si = &H->site[h].info;
    memcpy(hub->name, si->name, sizeof hub->name); /* both char[32], NUL-terminated */
    for (unsigned k = 0; k < h; k++)
        if (!strcmp(c->hubs[k].name, hub->name))
            return node_error(ld, n, "name", "hub '%s' given twice", hub->name);
    for (unsigned o = 0; o < c->n_origins; o++) {
        hub->rtt_s[o] = site_rtt_s(si->name, c->origin[o]);
        if (isnan(hub->rtt_s[o]))
            return node_error(ld, n, "name", "the catalog has no RTT from '%s' to '%s' (a hub "
                              "must be a cluster site of sites.xml)", si->name, c->origin[o]);
    }
    double gpus = 0;
    rc = get_quantity(ld, n, "gpus", SIM_DIM_COUNT, 1, &gpus);
    if (!rc)
        rc = whole(ld, n, "gpus", gpus);
    if (!rc)
        rc = positive(ld, n, "gpus", gpus, CLUSTER_MAX_GPUS, " GPUs");
    uint32_t leaf = s->cluster_jobs.leaf_gpus;
    if (!rc && ((uint32_t)gpus % leaf))
        rc = node_error(ld, n, "gpus", "gpus must be whole leaves of %u GPUs (<cluster-jobs>"
                        "<placement>)", leaf);
    if (rc)
        return rc;
    hub->gpus = (uint32_t)gpus;
    rc = hub_gpu(ld, n, s, H, h, serving_missing);
    if (!rc)
        rc = hub_fabric(ld, n, s, H, h);
    if (rc)
        return rc;
    hub->price_per_kwh = si->price_per_kwh;
    hub->emission_kg_per_kwh = si->emission_kg_per_kwh;
    hub->green_share = H->site[h].green_share;
    H->pue_target[h] = si->pue_target;
    facility_keys(&H->site[h], &H->pue_sim[h], &hub->wue_l_per_kwh);
    hub->pue = H->pue_simulated || !(si->pue_target > 0) ? H->pue_sim[h] : si->pue_target;
    if (has_attr(n, "carbon-profile")) {
        char path[512], *text = NULL;
        size_t len = 0;
        rc = read_file(ld, n, "carbon-profile", path, sizeof path, &text, &len);
        if (!rc)
            rc = hubs_carbon_parse(text, len, path, &H->carbon[h], &hub->n_carbon_hours, ld->err);
        free(text);
        hub->carbon_hourly = H->carbon[h];
    }
    if (!rc && has_attr(n, "water-limit"))
        rc = water_limit(ld, n, &hub->water_limit_l);
    return rc;
}

/* one <demand>'s jobs into *out (n): its own stream, or <cluster-jobs>' */
static int demand_jobs(loader *ld, xmlNode *n, scn_scenario *s, unsigned k, uint32_t largest,
                       hubs_job_spec **out, uint32_t *count, char *desc, size_t size)
{
    scn_hubs *H = s->hubs;
    char origin[32], kind[32];
    copy_attr(n, "origin", origin, sizeof origin);
    copy_attr(n, "kind", kind, sizeof kind);
    unsigned o = 0;
    while (o < H->cfg.n_origins && strcmp(H->cfg.origin[o], origin))
        o++;
    if (o == H->cfg.n_origins)
        return node_error(ld, n, "origin", "unknown demand centre '%s'; known: %s%s%s%s%s",
                          origin, H->cfg.origin[0], H->cfg.n_origins > 1 ? ", " : "",
                          H->cfg.n_origins > 1 ? H->cfg.origin[1] : "",
                          H->cfg.n_origins > 2 ? ", " : "",
                          H->cfg.n_origins > 2 ? H->cfg.origin[2] : "");
    hubs_job_spec proto = {0};
    proto.origin = o;
    proto.kind = strcmp(kind, "serving") ? HUBS_TRAINING : HUBS_SERVING;
    double dataset = 0, result = 0;
    int rc = get_quantity(ld, n, "dataset", SIM_DIM_DATA, 0, &dataset);
    if (!rc)
        rc = non_negative(ld, n, "dataset", dataset);
    if (!rc)
        rc = get_quantity(ld, n, "result", SIM_DIM_DATA, 0, &result);
    if (!rc)
        rc = non_negative(ld, n, "result", result);
    if (!rc)
        rc = get_quantity(ld, n, "rtt-bound", SIM_DIM_TIME, 0, &proto.rtt_bound_s);
    if (!rc)
        rc = non_negative(ld, n, "rtt-bound", proto.rtt_bound_s);
    if (!rc)
        rc = get_quantity(ld, n, "slack", SIM_DIM_TIME, 0, &proto.slack_s);
    if (!rc)
        rc = non_negative(ld, n, "slack", proto.slack_s);
    if (rc)
        return rc;
    proto.dataset_tb = dataset / 1e12;
    proto.result_tb = result / 1e12;
    cluster_config cc = s->cluster_jobs;
    cc.gpus = largest;
    cc.su_gpus = cc.su_gpus > largest ? largest : cc.su_gpus;
    cc.seed = s->seed + k; /* class 0: the <cluster-jobs> stream itself */
    xmlNode *arr = child(n, "arrivals"), *sizes = child(n, "sizes"), *dur = child(n, "duration");
    if (arr || sizes || dur) {
        if (!arr || !sizes || !dur)
            return node_error(ld, n, NULL, "a <demand> stream needs <arrivals>, <sizes> and "
                              "<duration> (or none: <cluster-jobs>' stream)");
        memset(&cc.stream, 0, sizeof cc.stream);
        cc.jobs = NULL;
        cc.n_jobs = 0;
        rc = stream_arrivals(ld, arr, &cc.stream);
        if (!rc)
            rc = stream_sizes(ld, sizes, largest, &cc.stream);
        if (!rc)
            rc = stream_duration(ld, dur, &cc.stream.dur);
        if (rc)
            return rc;
    }
    cluster_job_spec *spec = NULL;
    rc = cluster_jobs_make(&cc, &spec, count, ld->err);
    if (rc) { /* the stream's reason, at the <demand> (sim_error keeps the first error) */
        char why[sizeof ld->err->msg];
        snprintf(why, sizeof why, "%s", ld->err->msg);
        sim_error_clear(ld->err);
        return node_error(ld, n, NULL, "%s (the largest <hub> has %u)", why, largest);
    }
    *out = malloc((*count ? *count : 1) * sizeof **out);
    if (!*out) {
        free(spec);
        return sim_error_set(ld->err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
    }
    for (uint32_t i = 0; i < *count; i++) {
        (*out)[i] = proto;
        (*out)[i].arrival_s = spec[i].submit_s;
        (*out)[i].gpus = spec[i].gpus;
        (*out)[i].duration_s = spec[i].duration_s;
        (*out)[i].priority = spec[i].priority;
    }
    free(spec);
    if (proto.kind == HUBS_SERVING)
        snprintf(desc, size, "serving from %s: %u jobs, dataset %.4g TB, result %.4g TB, RTT "
                 "bound %.4g ms", origin, *count, proto.dataset_tb, proto.result_tb,
                 proto.rtt_bound_s * 1e3);
    else
        snprintf(desc, size, "training from %s: %u jobs, dataset %.4g TB, result %.4g TB, "
                 "slack %.4g h", origin, *count, proto.dataset_tb, proto.result_tb,
                 proto.slack_s / 3600);
    return 0;
}

/* the classes' jobs merged by arrival (ties: the lower class first) */
static int parse_demand(loader *ld, xmlNode *hubs, scn_scenario *s, uint32_t largest)
{
    scn_hubs *H = s->hubs;
    hubs_job_spec *part[SCN_HUBS_MAX_CLASSES] = {0};
    uint32_t n[SCN_HUBS_MAX_CLASSES] = {0}, at[SCN_HUBS_MAX_CLASSES] = {0}, total = 0;
    int rc = 0;
    for (xmlNode *d = hubs->children; d && !rc; d = d->next) {
        if (d->type != XML_ELEMENT_NODE || strcmp((const char *)d->name, "demand"))
            continue;
        unsigned k = H->n_classes++; /* the schema allows at most SCN_HUBS_MAX_CLASSES */
        rc = demand_jobs(ld, d, s, k, largest, &part[k], &n[k], H->classes[k],
                         sizeof H->classes[k]);
        total += n[k];
        if (!rc && total > CLUSTER_MAX_JOBS)
            rc = node_error(ld, d, NULL, "more than 1e7 jobs in all");
    }
    if (!rc && !H->n_classes)
        rc = node_error(ld, hubs, NULL, "<hubs> needs <demand> classes or a <trace>");
    if (!rc) {
        H->jobs = malloc((total ? total : 1) * sizeof *H->jobs);
        if (!H->jobs)
            rc = sim_error_set(ld->err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
    }
    for (uint32_t i = 0; !rc && i < total; i++) {
        unsigned best = SCN_HUBS_MAX_CLASSES;
        for (unsigned k = 0; k < H->n_classes; k++)
            if (at[k] < n[k] && (best == SCN_HUBS_MAX_CLASSES ||
                                 part[k][at[k]].arrival_s < part[best][at[best]].arrival_s))
                best = k;
        H->jobs[i] = part[best][at[best]++];
    }
    for (unsigned k = 0; k < SCN_HUBS_MAX_CLASSES; k++)
        free(part[k]);
    H->cfg.jobs = H->jobs;
    H->cfg.n_jobs = total;
    return rc;
}

static int parse_top(loader *ld, xmlNode *n, scn_hubs *H)
{
    hubs_config *c = &H->cfg;
    char policy[48], pue[16];
    copy_attr(n, "policy", policy, sizeof policy);
    c->policy = hubs_policy_find(policy);
    if (!c->policy)
        return node_error(ld, n, "policy", "unknown policy '%s'; use %s", policy,
                          hubs_policy_names());
    copy_attr(n, "pue", pue, sizeof pue);
    H->pue_simulated = !strcmp(pue, "simulated"); /* the schema allows target, simulated */
    char backlog[16];
    copy_attr(n, "backlog", backlog, sizeof backlog);
    c->gang_backlog = !strcmp(backlog, "gang"); /* the schema allows fluid, gang */
    char keys[32];
    copy_attr(n, "keys", keys, sizeof keys); /* the schema allows isolated, interfered,
                                                interfered-size-load */
    H->keys_size_load = !strcmp(keys, "interfered-size-load");
    H->keys_interfered = !strcmp(keys, "interfered") || H->keys_size_load;
    double bw = 0;
    int rc = get_quantity(ld, n, "bandwidth", SIM_DIM_BANDWIDTH, 1, &bw);
    if (!rc)
        rc = positive(ld, n, "bandwidth", bw, 1e15, " bytes/s");
    c->bandwidth_bps = 8 * bw;
    if (!rc)
        rc = get_quantity(ld, n, "cost-per-tb", SIM_DIM_COUNT, 1, &c->cost_per_tb);
    if (!rc)
        rc = non_negative(ld, n, "cost-per-tb", c->cost_per_tb);
    if (!rc)
        rc = get_quantity(ld, n, "max-wait", SIM_DIM_TIME, 1, &c->max_wait_s);
    if (!rc)
        rc = non_negative(ld, n, "max-wait", c->max_wait_s);
    return rc;
}

/* <hubs move="checkpoint" max-moves="N" restart="T"> (docs/hubs.md "Moving
 * running jobs"): no moves without move (or with move="none"); max-moves 1
 * by default (under "defaults used"); restart has no sourced figure, so it
 * is required; the hub-to-hub RTTs from the catalog (sites.md 8.2) */
static int parse_moves(loader *ld, xmlNode *n, const scn_scenario *s, scn_hubs *H)
{
    hubs_config *c = &H->cfg;
    char move[16];
    copy_attr(n, "move", move, sizeof move); /* the schema allows none, checkpoint */
    if (strcmp(move, "checkpoint")) { /* move="none" keeps them, for --set */
        if (!has_attr(n, "move") && (has_attr(n, "max-moves") || has_attr(n, "restart")))
            return node_error(ld, n, has_attr(n, "restart") ? "restart" : "max-moves",
                              "max-moves and restart are for moving running jobs: give "
                              "move=\"checkpoint\"");
        return 0;
    }
    if (!has_attr(n, "restart"))
        return node_error(ld, n, "move", "moving running jobs needs restart=\"T\": the time a "
                          "job takes to start again from its checkpoint at the new hub (no "
                          "sourced figure exists; none is assumed)");
    double moves = 1;
    int rc = get_quantity(ld, n, "max-moves", SIM_DIM_COUNT, 0, &moves);
    if (!rc && !(moves >= 1 && moves <= HUBS_MAX_MOVES && moves == floor(moves)))
        rc = node_error(ld, n, "max-moves", "max-moves %g: a whole number of moves per job "
                        "from 1 to %u", moves, HUBS_MAX_MOVES);
    if (!rc)
        rc = get_quantity(ld, n, "restart", SIM_DIM_TIME, 1, &c->restart_s);
    if (!rc)
        rc = non_negative(ld, n, "restart", c->restart_s);
    if (!rc && !(c->restart_s <= 8.64e6))
        rc = node_error(ld, n, "restart", "restart %g s: at most 100 days", c->restart_s);
    if (!rc && c->backbone)
        rc = node_error(ld, n, "move", "moving running jobs is not built with a <backbone> "
                        "(a move's bytes would share its links): use the hubs' own links");
    if (!rc && s->has_cluster_traffic)
        rc = node_error(ld, n, "move", "moving running jobs is not built with a fabric at the "
                        "hubs (a <cluster><fabric>): a job's interference would cross its "
                        "checkpoint");
    for (unsigned a = 0; !rc && a < c->n_hubs; a++)
        for (unsigned b = 0; !rc && b < c->n_hubs; b++) {
            double rtt = strcmp(c->hubs[a].name, c->hubs[b].name)
                             ? site_rtt_s(c->hubs[a].name, c->hubs[b].name) : 0;
            if (!isfinite(rtt))
                rc = node_error(ld, n, "move", "the catalog has no RTT from %s to %s for a "
                                "move between them", c->hubs[a].name, c->hubs[b].name);
            c->hub_rtt_s[a][b] = rtt;
        }
    H->moves_default = !has_attr(n, "max-moves");
    c->max_moves = rc ? 0 : (uint32_t)moves;
    return rc;
}

/* With a fabric at each hub and <traffic> classes with a parallel layout:
 * every job, at every hub that could take it, holds GPUs its class's layout
 * fits (a serving job at a hub of another speed holds a scaled count,
 * hubs_job_gpus, which may not be a whole number of tp x pp); refused at the
 * hub otherwise, rather than in the middle of the run */
static int layouts_fit(loader *ld, const scn_scenario *s, xmlNode *const *hub_node)
{
    const hubs_config *c = &s->hubs->cfg;
    for (uint32_t i = 0; i < c->n_jobs; i++)
        for (unsigned h = 0; h < c->n_hubs; h++) {
            uint32_t n = hubs_job_gpus(&c->hubs[h], &c->jobs[i]);
            char why[256];
            if (n > c->hubs[h].gpus ||
                !cluster_layout_check(cluster_traffic_of(&s->cluster_traffic, n), n, why,
                                      sizeof why))
                continue;
            int serving = c->jobs[i].kind == HUBS_SERVING;
            double scale = serving ? c->hubs[h].serving_scale : 1;
            return node_error(ld, hub_node[h], NULL, "a %s job of %u GPUs holds %u here (x %.6g, "
                              "the hub's serving scale), and its <traffic> class's layout does "
                              "not fit them: %s", serving ? "serving" : "training",
                              c->jobs[i].gpus, n, scale > 0 ? scale : 1, why);
        }
    return 0;
}

int parse_hubs(loader *ld, xmlNode *root, scn_scenario *s)
{
    xmlNode *n = child(root, "hubs");
    if (!n)
        return 0;
    if (!s->has_cluster_jobs)
        return node_error(ld, n, NULL, "<hubs> needs <cluster-jobs>: its scheduler, placement "
                          "and power are every hub's");
    scn_hubs *H = s->hubs = calloc(1, sizeof *s->hubs);
    if (!H)
        return sim_error_set(ld->err, SIM_ERR_NOMEM, NULL, 0, "out of memory");
    hubs_config *c = &H->cfg;
    c->n_origins = site_demand_centres(c->origin, HUBS_MAX_ORIGINS);
    c->fixed_hub = HUBS_NONE;
    int rc = parse_top(ld, n, H);
    if (!rc && H->keys_interfered && !s->has_cluster_traffic)
        rc = node_error(ld, n, "keys", "interfered keys need a fabric at the hubs (a "
                        "<cluster><fabric>): without one no interference is simulated; use "
                        "isolated");
    uint32_t largest = 0;
    xmlNode *hub_node[HUBS_MAX];
    int serving_missing[HUBS_MAX] = {0};
    for (xmlNode *h = n->children; h && !rc; h = h->next) {
        if (h->type != XML_ELEMENT_NODE || strcmp((const char *)h->name, "hub"))
            continue;
        if (c->n_hubs == HUBS_MAX)
            return node_error(ld, h, NULL, "at most %u hubs", HUBS_MAX);
        hub_node[c->n_hubs] = h;
        rc = parse_hub(ld, h, s, H, c->n_hubs, &serving_missing[c->n_hubs]);
        if (!rc && c->hubs[c->n_hubs].gpus > largest)
            largest = c->hubs[c->n_hubs].gpus;
        c->n_hubs++;
    }
    if (!rc && !c->n_hubs)
        rc = node_error(ld, n, NULL, "<hubs> needs at least one <hub>");
    if (!rc && has_attr(n, "fixed-hub")) {
        char name[32];
        copy_attr(n, "fixed-hub", name, sizeof name);
        for (unsigned h = 0; h < c->n_hubs; h++)
            if (!strcmp(c->hubs[h].name, name))
                c->fixed_hub = h;
        if (c->fixed_hub == HUBS_NONE)
            rc = node_error(ld, n, "fixed-hub", "unknown hub '%s' (not a <hub> of this "
                            "scenario)", name);
    }
    if (!rc && c->policy == hubs_policy_find("fixed") && c->fixed_hub == HUBS_NONE)
        rc = node_error(ld, n, "policy", "the fixed policy needs fixed-hub=\"NAME\"");
    if (!rc)
        rc = parse_hubs_backbone(ld, n, s);
    if (!rc)
        rc = parse_moves(ld, n, s, H);
    xmlNode *trace = rc ? NULL : child(n, "trace");
    if (trace && child(n, "demand"))
        rc = node_error(ld, trace, NULL, "a <trace> gives every job: drop the <demand> classes");
    else if (trace) {
        char *text = NULL;
        size_t len = 0;
        rc = read_file(ld, trace, "file", H->trace_path, sizeof H->trace_path, &text, &len);
        if (!rc)
            rc = hubs_trace_parse(text, len, H->trace_path, c->origin, c->n_origins, largest,
                                  &H->jobs, &c->n_jobs, ld->err);
        free(text);
        c->jobs = H->jobs;
    } else if (!rc)
        rc = parse_demand(ld, n, s, largest);
    int serving = 0; /* a hub without the serving rule's figures matters only with serving jobs */
    for (uint32_t i = 0; !rc && i < c->n_jobs && !serving; i++)
        serving = c->jobs[i].kind == HUBS_SERVING;
    for (unsigned h = 0; !rc && serving && h < c->n_hubs; h++)
        if (serving_missing[h])
            rc = node_error(ld, hub_node[h], "gpu", "%s", H->serving_rule[h]);
    if (!rc && s->has_cluster_traffic)
        rc = layouts_fit(ld, s, hub_node);
    if (!rc)
        rc = check_hubs_backbone(ld, n, s);
    if (!rc) {
        sim_error e;
        sim_error_clear(&e);
        if (hubs_config_check(c, &e))
            rc = node_error(ld, n, NULL, "%s", e.msg);
    }
    return rc;
}
