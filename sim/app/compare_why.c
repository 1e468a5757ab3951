/* compare_why.c - why two networks give different iterations: the variant
 * rerun with one mechanism at a time set to the baseline's (compare_why.h).
 */
#include "compare_why.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "routing.h"
#include "run.h"

static const char *const mechanism_names[WHY_MECHANISMS] = {
    "routing", "latency", "efficiency", "in-network reduction", "rate"};

/* The mechanism's fields of f, as text (also what decides "the same"). */
static void mechanism_text(int m, const fabric_config *f, char *out, size_t size)
{
    const hw_link *l = &f->link;
    switch (m) {
    case WHY_ROUTING:
        snprintf(out, size, "%s, %s paths, %u QP%s", topo_balance_name(f->routing.balance),
                 topo_path_class_name(f->routing.path_class), f->routing.qps,
                 f->routing.qps == 1 ? "" : "s");
        break;
    case WHY_LATENCY:
        snprintf(out, size, "switch %.4g ns, NIC %.4g ns, step %.4g us", l->switch_latency_s * 1e9,
                 l->nic_latency_s * 1e9, l->step_latency_s * 1e6);
        break;
    case WHY_EFFICIENCY:
        if (l->incast_efficiency > 0)
            snprintf(out, size, "%.4g %%, incast %.4g %%", l->efficiency * 100,
                     l->incast_efficiency * 100);
        else
            snprintf(out, size, "%.4g %%", l->efficiency * 100);
        break;
    case WHY_IN_NETWORK:
        if (!l->has_in_network_reduction)
            snprintf(out, size, "none");
        else if (l->reduction_efficiency > 0)
            snprintf(out, size, "yes, %.4g %% of the rate, %.4g us", l->reduction_efficiency * 100,
                     l->reduction_latency_s * 1e6);
        else
            snprintf(out, size, "yes");
        break;
    default:
        snprintf(out, size, "%.4g GB/s", l->bytes_per_s / 1e9);
        break;
    }
}

/* Set mechanism m of dst to src's. */
static void mechanism_copy(int m, fabric_config *dst, const fabric_config *src)
{
    hw_link *d = &dst->link;
    const hw_link *s = &src->link;
    switch (m) {
    case WHY_ROUTING:
        dst->routing.balance = src->routing.balance;
        dst->routing.path_class = src->routing.path_class;
        dst->routing.qps = src->routing.qps;
        break;
    case WHY_LATENCY:
        d->switch_latency_s = s->switch_latency_s;
        d->nic_latency_s = s->nic_latency_s;
        d->step_latency_s = s->step_latency_s;
        break;
    case WHY_EFFICIENCY:
        d->efficiency = s->efficiency;
        d->incast_efficiency = s->incast_efficiency;
        break;
    case WHY_IN_NETWORK:
        d->has_in_network_reduction = s->has_in_network_reduction;
        d->reduction_efficiency = s->reduction_efficiency;
        d->reduction_latency_s = s->reduction_latency_s;
        break;
    default:
        d->bytes_per_s = s->bytes_per_s;
        break;
    }
}

/* The variant reloaded, the mechanisms in mask set to the baseline's, run. */
static int rerun(const char *path, const char *const *sets, size_t n_sets,
                 const scn_scenario *baseline, unsigned mask, double *iteration_s,
                 double *time_to_train_s, sim_error *err)
{
    scn_scenario s;
    if (scn_load(path, sets, n_sets, &s, err))
        return -1;
    for (int m = 0; m < WHY_MECHANISMS; m++)
        if (mask & (1u << m))
            mechanism_copy(m, &s.fabric, &baseline->fabric);
    run_plan p;
    run_outcome o;
    memset(&p, 0, sizeof p);
    memset(&o, 0, sizeof o);
    int rc = run_plan_prepare(&s, 1, RUN_PLAN_GUARD_DONE, &p, err);
    if (!rc)
        rc = run_execute(&p, NULL, NULL, NULL, NULL, &o, err);
    if (!rc) {
        *iteration_s = p.step.iteration_s;
        *time_to_train_s = o.result.time_to_train_s;
    }
    run_outcome_free(&o);
    run_plan_free(&p);
    scn_scenario_free(&s);
    return rc;
}

int compare_why(const char *path, const char *const *sets, size_t n_sets,
                const scn_scenario *variant, const scn_scenario *baseline,
                double variant_iteration_s, double variant_time_to_train_s,
                double baseline_iteration_s, double baseline_time_to_train_s, why_result *out,
                sim_error *err)
{
    memset(out, 0, sizeof *out);
    out->variant_iteration_s = variant_iteration_s;
    out->variant_time_to_train_s = variant_time_to_train_s;
    out->baseline_iteration_s = baseline_iteration_s;
    out->baseline_time_to_train_s = baseline_time_to_train_s;
    unsigned differing = 0;
    for (int m = 0; m < WHY_MECHANISMS; m++) {
        why_mechanism *w = &out->m[m];
        w->name = mechanism_names[m];
        mechanism_text(m, &variant->fabric, w->variant_value, sizeof w->variant_value);
        mechanism_text(m, &baseline->fabric, w->baseline_value, sizeof w->baseline_value);
        w->is_same = !strcmp(w->variant_value, w->baseline_value);
        if (w->is_same) {
            w->iteration_s = variant_iteration_s;
            w->time_to_train_s = variant_time_to_train_s;
            continue;
        }
        differing |= 1u << m;
        if (rerun(path, sets, n_sets, baseline, 1u << m, &w->iteration_s, &w->time_to_train_s,
                  err))
            return -1;
        out->runs++;
    }
    out->all_iteration_s = variant_iteration_s;
    out->all_time_to_train_s = variant_time_to_train_s;
    if (differing && (differing & (differing - 1))) { /* two or more: one run with all */
        if (rerun(path, sets, n_sets, baseline, differing, &out->all_iteration_s,
                  &out->all_time_to_train_s, err))
            return -1;
        out->runs++;
    } else if (differing) { /* one: that run is the run with all */
        for (int m = 0; m < WHY_MECHANISMS; m++)
            if (differing & (1u << m)) {
                out->all_iteration_s = out->m[m].iteration_s;
                out->all_time_to_train_s = out->m[m].time_to_train_s;
            }
    }
    return 0;
}

/* "  (73 % of the gap)" when the gap is not negligible. */
static void share_text(double change, double gap, char *out, size_t size)
{
    double share = 100 * change / gap;
    if (fabs(gap) > 1e-9 * fmax(1.0, fabs(change)) && isfinite(share))
        snprintf(out, size, "  (%.0f %% of the gap)", fabs(share) < 0.5 ? 0.0 : share);
    else
        out[0] = '\0';
}

void compare_why_print(const char *variant_label, const char *baseline_label,
                       const why_result *w)
{
    double gap = w->baseline_iteration_s - w->variant_iteration_s;
    printf("\nwhy %s differs from %s: iteration %.4f s vs %.4f s (%+.4f s), time to train "
           "%.2f d vs %.2f d; %s run again with one mechanism at a time set to %s's:\n",
           variant_label, baseline_label, w->variant_iteration_s, w->baseline_iteration_s, -gap,
           w->variant_time_to_train_s / 86400, w->baseline_time_to_train_s / 86400,
           variant_label, baseline_label);
    printf("  %-21s %-40s %-40s %12s %12s %9s\n", "mechanism", variant_label, baseline_label,
           "iteration s", "change s", "train d");
    double sum = 0;
    for (int m = 0; m < WHY_MECHANISMS; m++) {
        const why_mechanism *x = &w->m[m];
        if (x->is_same) {
            printf("  %-21s %-40s %-40s %12s\n", x->name, x->variant_value, x->baseline_value,
                   "same");
            continue;
        }
        double change = x->iteration_s - w->variant_iteration_s;
        sum += change;
        char share[40];
        share_text(change, gap, share, sizeof share);
        printf("  %-21s %-40s %-40s %12.4f %+12.4f %9.2f%s\n", x->name, x->variant_value,
               x->baseline_value, x->iteration_s, change, x->time_to_train_s / 86400, share);
    }
    double all = w->all_iteration_s - w->variant_iteration_s;
    printf("  %-21s %-40s %-40s %12.4f %+12.4f %9.2f\n", "all of them", "", "",
           w->all_iteration_s, all, w->all_time_to_train_s / 86400);
    printf("  not explained by these mechanisms (topology or sizes): %+.4f s; interaction of "
           "the mechanisms: %+.4f s\n", w->baseline_iteration_s - w->all_iteration_s, all - sum);
    printf("  not in the flow tier: buffers, PFC pauses, congestion control (DCQCN, IB CC) and "
           "per-packet effects; `dcsim netbench --tier packet` shows them (docs/fabric.md)\n");
}

cJSON *compare_why_json(const char *variant_label, const char *baseline_label,
                        const why_result *w)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "variant", variant_label);
    cJSON_AddStringToObject(o, "baseline", baseline_label);
    cJSON_AddNumberToObject(o, "variant_iteration_s", w->variant_iteration_s);
    cJSON_AddNumberToObject(o, "baseline_iteration_s", w->baseline_iteration_s);
    cJSON_AddNumberToObject(o, "variant_time_to_train_s", w->variant_time_to_train_s);
    cJSON_AddNumberToObject(o, "baseline_time_to_train_s", w->baseline_time_to_train_s);
    cJSON *rows = cJSON_AddArrayToObject(o, "mechanisms");
    for (int m = 0; rows && m < WHY_MECHANISMS; m++) {
        const why_mechanism *x = &w->m[m];
        cJSON *r = cJSON_CreateObject();
        if (!r)
            break;
        cJSON_AddStringToObject(r, "mechanism", x->name);
        cJSON_AddStringToObject(r, "variant_value", x->variant_value);
        cJSON_AddStringToObject(r, "baseline_value", x->baseline_value);
        cJSON_AddBoolToObject(r, "same", x->is_same);
        cJSON_AddNumberToObject(r, "iteration_s", x->iteration_s);
        cJSON_AddNumberToObject(r, "time_to_train_s", x->time_to_train_s);
        cJSON_AddItemToArray(rows, r);
    }
    cJSON_AddNumberToObject(o, "all_iteration_s", w->all_iteration_s);
    cJSON_AddNumberToObject(o, "all_time_to_train_s", w->all_time_to_train_s);
    return o;
}
