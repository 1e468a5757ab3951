/* compare_why.h - why two networks give different iterations
 * (`dcsim compare --vary network=A,B`, docs/energy.md "Why the networks
 * differ").
 *
 * The flow tier tells an InfiniBand fabric from a RoCE one only through a
 * few mechanisms, each a group of fields of the fabric's technology:
 * routing (adaptive vs ECMP collisions), latency (switch, NIC, collective
 * step), efficiency (protocol and congestion-control losses on large
 * transfers; incast), in-network reduction (SHARP) and line rate. For a
 * variant V and the baseline B (the first --vary network value), the
 * variant is run again with one mechanism at a time set to B's: the change
 * in iteration time is that mechanism's share of the gap, measured rather
 * than apportioned. A last run sets all of them to B's; what it leaves of
 * the gap is the part no mechanism explains (a network file that also
 * changes the topology or its sizes), and the gap minus the sum of the
 * single changes is the mechanisms' interaction.
 */
#ifndef DCSIM_APP_COMPARE_WHY_H
#define DCSIM_APP_COMPARE_WHY_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "error.h"
#include "scenario.h"

enum { WHY_ROUTING, WHY_LATENCY, WHY_EFFICIENCY, WHY_IN_NETWORK, WHY_RATE, WHY_MECHANISMS };

typedef struct why_mechanism {
    const char *name;       /* "routing", "latency", ... */
    char variant_value[96]; /* the variant's value(s), as text */
    char baseline_value[96];
    int is_same;            /* equal in both: not run */
    double iteration_s;     /* the variant with this mechanism set to the baseline's */
    double time_to_train_s;
} why_mechanism;

typedef struct why_result {
    double variant_iteration_s, baseline_iteration_s;
    double variant_time_to_train_s, baseline_time_to_train_s;
    why_mechanism m[WHY_MECHANISMS];
    double all_iteration_s; /* every differing mechanism set to the baseline's */
    double all_time_to_train_s;
    unsigned runs;          /* counterfactual runs made */
} why_result;

/* The variant is the scenario at path (NULL: the built-in default) with
 * sets applied, as loaded in *variant; *baseline is the baseline's loaded
 * scenario. Both must have the step tier time the iteration
 * (step_computes_iteration) and a fabric. The variant's own iteration and
 * time to train are given (from its run). Returns 0 and fills *out, or an
 * error (the reruns' load or run failures) in err. */
int compare_why(const char *path, const char *const *sets, size_t n_sets,
                const scn_scenario *variant, const scn_scenario *baseline,
                double variant_iteration_s, double variant_time_to_train_s,
                double baseline_iteration_s, double baseline_time_to_train_s, why_result *out,
                sim_error *err);

/* The block under the table: one line per mechanism. */
void compare_why_print(const char *variant_label, const char *baseline_label,
                       const why_result *w);

/* The same as a JSON object. NULL when out of memory. */
cJSON *compare_why_json(const char *variant_label, const char *baseline_label,
                        const why_result *w);

#endif
