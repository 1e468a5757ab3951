/* stepfail.c - dcsim step --fail: parse the parts, print the comparison
 * (see stepfail.h). */
#include "stepfail.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "step.h"

int step_fail_parse(const char *const *words, size_t n, ff_state *st)
{
    for (size_t i = 0; i < n; i++) {
        ff_part p;
        char why[256];
        if (ff_part_parse(words[i], &p, why, sizeof why))
            return cli_usage_error("step", "--fail %s", why);
        if (ff_state_add(st, &p)) {
            fprintf(stderr, "dcsim step: error: out of memory\n");
            return 1;
        }
    }
    return 0;
}

_Static_assert(FF_CAGE_PORTS_MAX == 8, "the --cage-ports message says 8");

int step_fail_cage_ports(const char *v, int failing, ff_state *st)
{
    char *end;
    unsigned long n = strtoul(v, &end, 10);
    if (v[0] < '0' || v[0] > '9' || *end || n < 2 || n > FF_CAGE_PORTS_MAX)
        return cli_usage_error("step", "--cage-ports %s: the ports one transceiver cage serves "
                               "must be a whole number from 2 to 8", v);
    if (!failing)
        return cli_usage_error("step", "--cage-ports %s: an option of --fail transceiver=ID "
                               "(or <step><fail part=\"transceiver\">)", v);
    st->cage_ports = (unsigned)n;
    return 0;
}

int step_fail_setup(const scn_scenario *s, const char *const *words, size_t n,
                    const char *cage_ports, ff_state *st)
{
    if (cage_ports) {
        int rc = step_fail_cage_ports(cage_ports, n || s->n_step_fails, st);
        if (rc)
            return rc;
    }
    if ((n || s->n_step_fails) && s->step.packet)
        return cli_usage_error("step", "%s: the packet network does not take failure states "
                               "yet (use the flow model, --concurrent or --analytic)",
                               n ? "--fail" : "<step><fail>");
    for (unsigned i = 0; i < s->n_step_fails; i++) /* the scenario's first: --fail adds */
        if (ff_state_add(st, &s->step_fails[i])) {
            fprintf(stderr, "dcsim step: error: out of memory\n");
            return 1;
        }
    return step_fail_parse(words, n, st);
}

static const char *speed_word(double s, char *buf, size_t size)
{
    if (s == 0)
        return "down";
    if (s >= 1)
        return "up";
    snprintf(buf, size, "x%g", s);
    return buf;
}

void step_fail_print(const ff_state *st, const app_step_failure *x)
{
    char parts[1024];
    ff_state_text(st, parts, sizeof parts);
    double b = x->before.iteration_s, a = x->after.iteration_s;
    printf("failed parts    %s (digest %016llx; %u directed links down, %u slow)\n", parts,
           (unsigned long long)x->digest, x->links_down, x->links_slow);
    double change = b > 0 ? 100 * (a - b) / b : 0.0;
    /* a link at 1e-9 of its rate makes changes of 1e11 %: digits, not a page */
    printf(fabs(change) < 1e6 ? "                iteration %.6g s as built -> %.6g s (%+.3f %%)\n"
                              : "                iteration %.6g s as built -> %.6g s (%+.4g %%)\n",
           b, a, change);
    printf("                peak link utilisation per tier, as built -> failed:");
    for (int t = 0; t < STEP_TIERS; t++)
        if (x->before.tier_bytes[t] > 0 || x->after.tier_bytes[t] > 0)
            printf(" %s %.1f%% -> %.1f%%;", step_tier_name(t),
                   100 * x->before.tier_peak_utilisation[t],
                   100 * x->after.tier_peak_utilisation[t]);
    printf("\n");
    if (!x->n_changes) {
        printf("                no link's bytes per iteration changed\n");
        return;
    }
    printf("links whose bytes per iteration changed most (as built -> failed; utilisation "
           "of each run's own iteration and capacity):\n"
           "  %-7s %-7s %-7s %-18s %-6s %12s %12s %9s %9s\n", "link", "from", "to", "tier",
           "state", "bytes", "bytes", "util", "util");
    for (unsigned k = 0; k < x->n_changes; k++) {
        const step_link_change *c = &x->changes[k];
        char w[32];
        printf("  %-7u %-7u %-7u %-18s %-6s %12.4g %12.4g %8.1f%% %8.1f%%\n", c->link, c->src,
               c->dst, step_tier_name(c->tier), speed_word(c->speed, w, sizeof w),
               c->bytes_before, c->bytes_after, 100 * c->util_before, 100 * c->util_after);
    }
}

void step_fail_json(cJSON *o, const ff_state *st, const app_step_failure *x)
{
    cJSON *f = cJSON_AddObjectToObject(o, "failure_state");
    cJSON *parts = cJSON_AddArrayToObject(f, "parts");
    for (size_t i = 0; i < st->n; i++) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddStringToObject(p, "class", ff_classes[st->part[i].cls].name);
        cJSON_AddNumberToObject(p, "id", st->part[i].id);
        cJSON_AddNumberToObject(p, "speed", st->part[i].speed);
        cJSON_AddItemToArray(parts, p);
    }
    char digest[20];
    snprintf(digest, sizeof digest, "%016llx", (unsigned long long)x->digest);
    cJSON_AddStringToObject(f, "digest", digest);
    cJSON_AddNumberToObject(f, "links_down", x->links_down);
    cJSON_AddNumberToObject(f, "links_slow", x->links_slow);
    cJSON_AddNumberToObject(f, "iteration_as_built_s", x->before.iteration_s);
    cJSON *peaks = cJSON_AddObjectToObject(f, "peak_utilisation_as_built");
    for (int t = 0; t < STEP_TIERS; t++)
        cJSON_AddNumberToObject(peaks, step_tier_name(t), x->before.tier_peak_utilisation[t]);
    cJSON *ch = cJSON_AddArrayToObject(f, "link_changes");
    for (unsigned k = 0; k < x->n_changes; k++) {
        const step_link_change *c = &x->changes[k];
        cJSON *l = cJSON_CreateObject();
        cJSON_AddNumberToObject(l, "link", c->link);
        cJSON_AddNumberToObject(l, "from", c->src);
        cJSON_AddNumberToObject(l, "to", c->dst);
        cJSON_AddStringToObject(l, "tier", step_tier_name(c->tier));
        cJSON_AddNumberToObject(l, "speed", c->speed);
        cJSON_AddNumberToObject(l, "bytes_as_built", c->bytes_before);
        cJSON_AddNumberToObject(l, "bytes_failed", c->bytes_after);
        cJSON_AddNumberToObject(l, "utilisation_as_built", c->util_before);
        cJSON_AddNumberToObject(l, "utilisation_failed", c->util_after);
        cJSON_AddItemToArray(ch, l);
    }
}
