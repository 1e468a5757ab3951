/* stepclasses.h - dcsim step --fail-classes: one iteration with one part of
 * each class the built fabric has failed in turn (a switch per tier, a
 * cable per pair of tiers or Dragonfly local / global, a host cable, a NIC
 * or GPU port and a GPU slow), against the iteration as built
 * (docs/failures.md "A sweep over part classes").
 *
 * Representative of a class: the lowest id among its parts whose cables
 * carried bytes in the iteration as built (either direction); when none
 * did, the lowest id of the class (marked). A GPU: GPU 0.
 */
#ifndef DCSIM_APP_STEPCLASSES_H
#define DCSIM_APP_STEPCLASSES_H

#include <stdint.h>

#include "fabric_fault.h"
#include "scenario.h"

#define STEP_CLASSES_MAX 24

typedef struct step_class_row {
    char name[32];        /* "spine switch", "leaf uplink", "global link", ... */
    ff_part part;         /* the representative, down or at the slow speed */
    int carried_traffic;  /* its cables carried bytes as built (else: lowest id) */
    int runnable;         /* 0: refused (GPUs cut off, no route left): refusal */
    char refusal[320];
    double iteration_s;   /* the failed iteration (runnable) */
    uint32_t busiest_link;   /* the busiest fabric link under the state */
    double busiest_util;     /* its bytes / (capacity x speed x iteration) */
} step_class_row;

typedef struct step_class_table {
    double built_iteration_s;
    uint32_t built_busiest_link;
    double built_busiest_util;
    double slow_speed;        /* of the slow rows */
    const char *slow_from;    /* where it came from: option, scenario, default */
    unsigned n;
    step_class_row row[STEP_CLASSES_MAX];
} step_class_table;

/* The sweep on the scenario's job and fabric with per-GPU speeds gpu_speed
 * (the scenario's stragglers; NULL: nominal) and the slow rows at
 * slow_speed in (0, 1). A row the job cannot run (a leaf down cuts its
 * GPUs off; a Dragonfly group pair left without a global link has no
 * minimal route) is kept with its refusal. Returns 0, or an error code with
 * err filled (the iteration as built failed, out of memory). */
int step_fail_classes(const scn_scenario *s, const double *gpu_speed, unsigned n_gpu_speed,
                      double slow_speed, step_class_table *out, sim_error *err);

/* dcsim step --fail-classes [--fail-slow SPEED] [--json | --csv]: the slow
 * speed (the option's text, else the first fail-slow <failure speed>, else
 * the documented default), the sweep, its table, JSON (json 1) or CSV (json
 * 2: a row per class). Returns the exit status. */
int step_fail_classes_cmd(const scn_scenario *s, const double *gpu_speed, unsigned n_gpu_speed,
                          const char *slow_text, int json);

#endif
