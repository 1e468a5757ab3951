/* step_fault.c - one iteration under a failure state, and the links whose
 * load it changed (see step_fault.h). */
#include "step_fault.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int step_simulate_failed(const workload *w, const compute_device *dev, fabric *base,
                         const ff_state *st, const step_options *o, step_profile *out,
                         sim_error *err)
{
    if (!st || !st->n) /* nothing failed: the fabric as built */
        return step_simulate(w, dev, base, o, out, err);
    memset(out, 0, sizeof *out);
    char parts[512];
    ff_state_text(st, parts, sizeof parts);
    if (o->packet)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "failed parts (%s): the packet network "
                             "does not take failure states yet; use the flow model, "
                             "--concurrent or --analytic", parts);
    ff_effect e;
    int rc = ff_effect_compute(base, st, &e, err);
    if (rc)
        return rc;
    rc = ff_effect_check_gpus(base, st, &e, err);
    double *speed = NULL;
    if (!rc) {
        speed = malloc(((size_t)e.n_gpus + 1) * sizeof *speed);
        if (!speed)
            rc = sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "out of memory for GPU speeds");
    }
    fabric deg;
    if (!rc)
        rc = fabric_degrade(base, &e, &deg, err);
    if (rc) {
        free(speed);
        ff_effect_fini(&e);
        return rc;
    }
    for (uint32_t k = 0; k < e.n_gpus; k++) /* x 1 leaves a straggler's speed as it was */
        speed[k] = (o->gpu_speed && k < o->n_gpu_speed ? o->gpu_speed[k] : 1.0) * e.gpu_speed[k];
    step_options so = *o;
    so.gpu_speed = speed;
    so.n_gpu_speed = e.n_gpus;
    rc = step_simulate(w, dev, &deg, &so, out, err);
    if (rc == SIM_ERR_INPUT && err) { /* e.g. no route left between two GPUs */
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        sim_error_clear(err);
        sim_error_set(err, rc, NULL, 0, "with failed parts %s: %s", parts, msg);
    }
    fabric_free(&deg);
    free(speed);
    ff_effect_fini(&e);
    return rc;
}

static double utilisation(const topo_graph *g, const double *speed, const step_profile *p,
                          uint32_t l)
{
    double cap = g->link_bytes_per_s[l] * (speed && speed[l] > 0 ? speed[l] : 1.0);
    return p->iteration_s > 0 ? p->link_bytes[l] / (cap * p->iteration_s) : 0;
}

unsigned step_link_changes(const topo_graph *g, const double *link_speed,
                           const step_profile *before, const step_profile *after,
                           step_link_change *out, unsigned max)
{
    unsigned n = 0;
    if (!before->link_bytes || !after->link_bytes || before->n_links != g->n_links ||
        after->n_links != g->n_links)
        return 0;
    for (uint32_t l = 0; l < g->n_links; l++) {
        double d = fabs(after->link_bytes[l] - before->link_bytes[l]);
        if (!(d > 0))
            continue;
        unsigned at = n < max ? n : max;
        while (at > 0 && fabs(out[at - 1].bytes_after - out[at - 1].bytes_before) < d)
            at--; /* insertion: stable, so ties keep link order */
        if (at >= max)
            continue;
        if (n < max)
            n++;
        memmove(out + at + 1, out + at, (n - 1 - at) * sizeof *out);
        out[at] = (step_link_change){
            .link = l, .src = g->link_src[l], .dst = g->link_dst[l],
            .tier = after->link_tier ? after->link_tier[l] : 0,
            .speed = link_speed ? link_speed[l] : 1.0,
            .bytes_before = before->link_bytes[l], .bytes_after = after->link_bytes[l],
            .util_before = utilisation(g, NULL, before, l),
            .util_after = utilisation(g, link_speed, after, l)};
    }
    return n;
}
