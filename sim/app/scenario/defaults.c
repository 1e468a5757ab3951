/* defaults.c - values a catalog entry lacks, filled at load time by a
 * documented rule and recorded in the entry (hw_default), and the list a
 * scenario's outputs print under "defaults used" (docs/scenario.md).
 *
 * Invariant: a value the step tier or the fabric needs is either the
 * catalog's own, or filled here and recorded, or refused here (a link
 * without an efficiency) or where it is used (a GPU without a peak, GEMM
 * efficiency or HBM bandwidth: hw_compute_device). A missing constant never
 * means ideal.
 *
 * Rules, in order:
 *   1. defaults-from="NAME" defaults-rule="WHY" on a <gpu> or <link>: what
 *      the entry lacks is NAME's own value (not one NAME itself got by a
 *      rule). GPU: gemm-efficiency per precision where both peaks are equal,
 *      <memory efficiency-by-size>, SMs, launch overhead. Link: efficiency.
 *   2. catalog-wide, for a GPU still without them: memory efficiency by
 *      size = calculon's HBM table; launch overhead = the one measured
 *      driver launch (constants below, with their sources).
 *   3. a link still without an efficiency is refused.
 */
#include "loader.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* calculon's HBM efficiency by transfer size (hardware.md 2.2, N12, V;
 * MB read as 10^6 bytes), the same table hardware.h names */
static const double calculon_bytes[4] = {0, 1e6, 10e6, 100e6};
static const double calculon_eff[4] = {0.30, 0.60, 0.75, 0.90};
static const char calculon_rule[] =
    "calculon's HBM table (hardware.md 2.2, N12, V): no measured curve for this GPU";

/* a raw cuLaunchKernel of an empty Triton kernel on GB200: 3.0 us with no
 * arguments (components.md 3.4, meta-pytorch/tritonbench PR #1017, V) */
#define LAUNCH_DRIVER_S 3.0e-6
static const char launch_rule[] =
    "the one measured bare driver launch, 3.0 us on GB200 (components.md 3.4, tritonbench "
    "PR #1017, V): a host-side cost, taken for every GPU without its own";

__attribute__((format(printf, 7, 8))) static void record(hw_default *list, unsigned *n,
                                                         const char *part, const char *what,
                                                         int precision, const char *rule,
                                                         const char *value_fmt, ...)
{
    if (*n >= HW_MAX_DEFAULTS) /* more than every field rule 1 and 2 can fill */
        return;
    hw_default *d = &list[(*n)++];
    memset(d, 0, sizeof *d);
    snprintf(d->part, sizeof d->part, "%s", part);
    snprintf(d->what, sizeof d->what, "%s", what);
    snprintf(d->rule, sizeof d->rule, "%s", rule);
    d->precision = precision;
    va_list ap;
    va_start(ap, value_fmt);
    vsnprintf(d->value, sizeof d->value, value_fmt, ap);
    va_end(ap);
}

static int was_filled(const hw_default *list, unsigned n, const char *what)
{
    for (unsigned i = 0; i < n; i++)
        if (strcmp(list[i].what, what) == 0)
            return 1;
    return 0;
}

static void tiers_text(const hw_gpu *g, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < g->n_mem_tiers && used < size; i++) {
        double b = g->mem_tier_min_bytes[i];
        int k = b >= 1e6 ? snprintf(buf + used, size - used, "%s%gMB:%g%%", i ? " " : "",
                                    b / 1e6, 100 * g->mem_tier_efficiency[i])
                         : snprintf(buf + used, size - used, "%s%gB:%g%%", i ? " " : "", b,
                                    100 * g->mem_tier_efficiency[i]);
        if (k < 0)
            break;
        used += (size_t)k;
    }
}

/* the defaults-from entry of kind, checked; NULL (with the error) when wrong */
static const void *sibling(loader *ld, xmlNode *n, int kind, const char *self, char *rule,
                           size_t rule_size, int *rc)
{
    char from[64];
    *rc = 0;
    copy_attr(n, "defaults-from", from, sizeof from);
    copy_attr(n, "defaults-rule", rule, rule_size);
    if (!from[0]) {
        if (rule[0])
            *rc = node_error(ld, n, "defaults-rule", "defaults-rule without defaults-from: "
                             "name the entry whose values hold for '%s'", self);
        return NULL;
    }
    if (!rule[0]) {
        *rc = node_error(ld, n, "defaults-from", "give defaults-rule too: why the values of "
                         "'%s' hold for '%s', with the source", from, self);
        return NULL;
    }
    const void *sib = strcmp(from, self) ? find_named(ld, kind, from) : NULL;
    if (!sib) {
        char known[1024];
        entry_names(ld, kind, known, sizeof known);
        *rc = node_error(ld, n, "defaults-from", "'%s' is not an entry defined before this "
                         "one; known: %s", from, known);
    }
    return sib;
}

/* rule 1 for a GPU: the sibling's own values where g has none */
static void gpu_from_sibling(hw_gpu *g, const hw_gpu *sib, const char *rule)
{
    char why[200];
    snprintf(why, sizeof why, "as %s: %s", sib->name, rule);
    for (int p = 0; p < PREC_COUNT; p++) {
        char what[40];
        snprintf(what, sizeof what, "gemm-efficiency %s", precision_name(p));
        if (g->peak_flops_per_s[p] > 0 && !(g->gemm_efficiency[p] > 0) &&
            sib->gemm_efficiency[p] > 0 && sib->peak_flops_per_s[p] == g->peak_flops_per_s[p] &&
            !was_filled(sib->defaults, sib->n_defaults, what)) {
            g->gemm_efficiency[p] = sib->gemm_efficiency[p];
            record(g->defaults, &g->n_defaults, g->name, what, p, why, "%.3f",
                   g->gemm_efficiency[p]);
        }
    }
    if (!g->n_mem_tiers && sib->n_mem_tiers &&
        !was_filled(sib->defaults, sib->n_defaults, "memory efficiency-by-size")) {
        g->n_mem_tiers = sib->n_mem_tiers;
        memcpy(g->mem_tier_min_bytes, sib->mem_tier_min_bytes, sizeof g->mem_tier_min_bytes);
        memcpy(g->mem_tier_efficiency, sib->mem_tier_efficiency, sizeof g->mem_tier_efficiency);
        char text[sizeof g->defaults[0].value];
        tiers_text(g, text, sizeof text);
        record(g->defaults, &g->n_defaults, g->name, "memory efficiency-by-size", -1, why, "%s",
               text);
    }
    if (!g->sms && sib->sms) {
        g->sms = sib->sms;
        record(g->defaults, &g->n_defaults, g->name, "sms", -1, why, "%u", g->sms);
    }
    if (g->launch_overhead_s < 0 && sib->launch_overhead_s >= 0 &&
        !was_filled(sib->defaults, sib->n_defaults, "launch-overhead")) {
        g->launch_overhead_s = sib->launch_overhead_s;
        record(g->defaults, &g->n_defaults, g->name, "launch-overhead", -1, why, "%gus",
               1e6 * g->launch_overhead_s);
    }
}

int fill_gpu_defaults(loader *ld, xmlNode *n, hw_gpu *g)
{
    char rule[200];
    int rc;
    const hw_gpu *sib = sibling(ld, n, CAT_GPU, g->name, rule, sizeof rule, &rc);
    if (rc)
        return rc;
    if (sib)
        gpu_from_sibling(g, sib, rule);
    if (!g->n_mem_tiers) {
        g->n_mem_tiers = 4;
        memcpy(g->mem_tier_min_bytes, calculon_bytes, sizeof calculon_bytes);
        memcpy(g->mem_tier_efficiency, calculon_eff, sizeof calculon_eff);
        char text[sizeof g->defaults[0].value];
        tiers_text(g, text, sizeof text);
        record(g->defaults, &g->n_defaults, g->name, "memory efficiency-by-size", -1,
               calculon_rule, "%s", text);
    }
    if (g->launch_overhead_s < 0) {
        g->launch_overhead_s = LAUNCH_DRIVER_S;
        record(g->defaults, &g->n_defaults, g->name, "launch-overhead", -1, launch_rule, "%gus",
               1e6 * g->launch_overhead_s);
    }
    return 0;
}

int fill_link_defaults(loader *ld, xmlNode *n, hw_link *lk)
{
    char rule[200];
    int rc;
    const hw_link *sib = sibling(ld, n, CAT_LINK, lk->name, rule, sizeof rule, &rc);
    if (rc)
        return rc;
    if (sib && !(lk->efficiency > 0)) {
        if (!(sib->efficiency > 0) || was_filled(sib->defaults, sib->n_defaults, "efficiency"))
            return node_error(ld, n, "defaults-from", "'%s' has no measured efficiency of its "
                              "own: name the link whose measurement holds", sib->name);
        char why[200];
        snprintf(why, sizeof why, "as %.60s: %.130s", sib->name, rule); /* both bounded */
        lk->efficiency = sib->efficiency;
        record(lk->defaults, &lk->n_defaults, lk->name, "efficiency", -1, why, "%g%%",
               100 * lk->efficiency);
    }
    if (lk->kind != HW_LINK_NVLINK && !(lk->switch_power_w > 0)) {
        /* no system power is published for any switch in shared/reference
         * (hardware.md 3.3, 8); the one sourced part is the 51.2 Tb/s
         * Ethernet ASIC's */
        lk->switch_power_w = HW_SWITCH_POWER_RULE_W;
        record(lk->defaults, &lk->n_defaults, lk->name, "switch-power", -1,
               "no system power published for its switches (hardware.md 3.3, 8: GAP): a "
               "51.2 Tb/s Ethernet ASIC's 450-500 W (3.3, S) and half again for CPU, fans "
               "and supplies (A), optics apart", "%gW", lk->switch_power_w);
    }
    if (!(lk->efficiency > 0))
        return node_error(ld, n, "efficiency", "link technology '%s' has no efficiency (the "
                          "fraction of its rate large transfers reach, e.g. measured busbw / "
                          "rate): give efficiency, or defaults-from a link with a measured one "
                          "and defaults-rule saying why it holds", lk->name);
    return 0;
}

/* ---- what a scenario uses */

static size_t add_all(const hw_default *list, unsigned n, int precision, hw_default *out,
                      size_t max, size_t count)
{
    for (unsigned i = 0; i < n; i++) {
        if (list[i].precision >= 0 && list[i].precision != precision)
            continue;
        if (count < max)
            out[count] = list[i];
        count++;
    }
    return count;
}

/* one site fallback as a "defaults used" entry */
static size_t add_site_value(const site_info *s, const char *what, const char *value,
                             const char *basis, hw_default *out, size_t max, size_t count)
{
    hw_default d;
    memset(&d, 0, sizeof d);
    snprintf(d.part, sizeof d.part, "site %s", s->name);
    snprintf(d.what, sizeof d.what, "%s", what);
    snprintf(d.value, sizeof d.value, "%s", value);
    snprintf(d.rule, sizeof d.rule, "%s (docs/energy.md)", basis);
    d.precision = -1;
    return add_all(&d, 1, -1, out, max, count);
}

/* the site's fallbacks (site_info.defaults names them: "emission factor, price") */
static size_t add_site(const scn_site *site, hw_default *out, size_t max, size_t count)
{
    const site_info *s = &site->info;
    if (!site->given || !s->defaults[0])
        return count;
    char value[64];
    if (strstr(s->defaults, "emission factor")) {
        snprintf(value, sizeof value, "%.4g kgCO2/kWh", s->emission_kg_per_kwh);
        count = add_site_value(s, "emission factor", value, s->emission_basis, out, max, count);
    }
    if (strstr(s->defaults, "price")) {
        snprintf(value, sizeof value, "%.4g CNY/kWh", s->price_per_kwh);
        count = add_site_value(s, "price", value, s->price_basis, out, max, count);
    }
    return count;
}

/* <reliability><degraded> left out on a degraded fabric */
static size_t add_degraded(const scn_scenario *s, hw_default *out, size_t max, size_t count)
{
    hw_default d;
    memset(&d, 0, sizeof d);
    d.precision = -1;
    snprintf(d.part, sizeof d.part, "degraded fabric");
    if (s->has_degraded && !s->degraded_policy_given) {
        snprintf(d.what, sizeof d.what, "policy");
        snprintf(d.value, sizeof d.value, "restart");
        snprintf(d.rule, sizeof d.rule, "A: restart at once on the fabric left, as a job "
                 "launcher with automatic restarts does (docs/failures.md)");
        count = add_all(&d, 1, -1, out, max, count);
    }
    if (s->has_degraded && !s->degraded_cache_given) {
        snprintf(d.what, sizeof d.what, "cache");
        snprintf(d.value, sizeof d.value, "%u", SCN_DEGRADED_CACHE_DEFAULT);
        snprintf(d.rule, sizeof d.rule, "A: iterations kept by failure state, least recently "
                 "used first (docs/failures.md)");
        count = add_all(&d, 1, -1, out, max, count);
    }
    return count;
}

/* <checkpoint interval="adaptive"> without adapt-window */
static size_t add_adaptive(const scn_scenario *s, hw_default *out, size_t max, size_t count)
{
    if (!s->checkpoint_adaptive || s->adapt_window_given)
        return count;
    hw_default d;
    memset(&d, 0, sizeof d);
    d.precision = -1;
    snprintf(d.part, sizeof d.part, "checkpoint");
    snprintf(d.what, sizeof d.what, "adapt-window");
    snprintf(d.value, sizeof d.value, "%.4g h", s->campaign.checkpoint_adapt_window_s / 3600);
    snprintf(d.rule, sizeof d.rule, "A: %g times the prior MTBF, about that many interruptions "
             "remembered (docs/failures.md)", SCN_ADAPT_WINDOW_MTBFS);
    return add_all(&d, 1, -1, out, max, count);
}

/* <throttle> without temperature= on an evaporative site: the wet bulb */
static size_t add_wetbulb(const scn_scenario *s, hw_default *out, size_t max, size_t count)
{
    if (!s->throttle_given || !s->throttle_wetbulb_default)
        return count;
    hw_default d;
    memset(&d, 0, sizeof d);
    d.precision = -1;
    snprintf(d.part, sizeof d.part, "throttle");
    snprintf(d.what, sizeof d.what, "temperature");
    snprintf(d.value, sizeof d.value, "wet-bulb");
    snprintf(d.rule, sizeof d.rule, "A: the evaporative design's supply air follows the outdoor "
             "wet bulb, as its energy model does (docs/failures.md)");
    return add_all(&d, 1, -1, out, max, count);
}

size_t scn_defaults_used(const scn_scenario *s, hw_default *out, size_t max)
{
    int p = (int)s->precision;
    size_t count = add_all(s->gpu.defaults, s->gpu.n_defaults, p, out, max, 0);
    if (s->has_fabric) {
        const fabric_config *f = &s->fabric;
        count = add_all(f->link.defaults, f->link.n_defaults, p, out, max, count);
        if (f->gpus_per_node > 1 && strcmp(f->scaleup.name, f->link.name) != 0)
            count = add_all(f->scaleup.defaults, f->scaleup.n_defaults, p, out, max, count);
    }
    count = add_site(&s->site, out, max, count);
    count = add_adaptive(s, out, max, count);
    count = add_wetbulb(s, out, max, count);
    return add_degraded(s, out, max, count);
}

void scn_defaults_text(const scn_scenario *s, char *buf, size_t size)
{
    hw_default d[SCN_MAX_DEFAULTS_USED];
    size_t n = scn_defaults_used(s, d, SCN_MAX_DEFAULTS_USED), used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && i < SCN_MAX_DEFAULTS_USED && used < size; i++) {
        int k = snprintf(buf + used, size - used, "%s%s %s = %s (%s)", i ? "; " : "", d[i].part,
                         d[i].what, d[i].value, d[i].rule);
        if (k < 0)
            break;
        used += (size_t)k;
    }
}
