/* stepfail.h - dcsim step --fail: the failure state from the command line
 * and what the step prints about it (the logic lives in models/
 * fabric_fault.h and step_fault.h; docs/failures.md). */
#ifndef DCSIM_APP_STEPFAIL_H
#define DCSIM_APP_STEPFAIL_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "fabric_fault.h"
#include "steptier.h"

#define STEP_MAX_FAILS 256

/* The --fail words in order into st (a later word for the same part wins:
 * speed 1 repairs it). 0, or the exit status of the usage error printed
 * ("dcsim step: --fail WORD: reason"). st must be initialised. */
int step_fail_parse(const char *const *words, size_t n, ff_state *st);

/* The state of dcsim step: the scenario's <step><fail> parts, then the
 * --fail words (step_fail_parse: a word for a part the scenario names wins),
 * and --cage-ports (NULL: not given; step_fail_cage_ports); the packet
 * network refused with any.
 * 0, or the exit status of the usage error printed. */
int step_fail_setup(const scn_scenario *s, const char *const *words, size_t n,
                    const char *cage_ports, ff_state *st);

/* --cage-ports N: the ports per transceiver cage of st (2 to
 * FF_CAGE_PORTS_MAX), only with a failure state (failing). 0, or the exit
 * status of the usage error printed. */
int step_fail_cage_ports(const char *v, int failing, ff_state *st);

/* The text lines after the profile: the state, its digest, the iteration
 * before and after and the links whose load changed most. */
void step_fail_print(const ff_state *st, const app_step_failure *x);

/* The same as a "failure_state" member of o. */
void step_fail_json(cJSON *o, const ff_state *st, const app_step_failure *x);

#endif
