/* hubs_internal.h - what hubs.c and hubs_policy.c share. */
#ifndef DCSIM_MODELS_HUBS_INTERNAL_H
#define DCSIM_MODELS_HUBS_INTERNAL_H

#include "hubs.h"

struct hubs_policy {
    const char *name, *rule;
    /* may hub h take job j? NULL: every hub */
    int (*eligible)(const hubs_config *c, const hubs_job_spec *j, unsigned h);
    /* the key to minimise; may set *defer (whole hours, from the arrival) */
    double (*key)(const hubs_config *c, const hubs_job_spec *j, unsigned h, double *defer);
    int strict; /* ignores the estimated wait */
};

#endif
