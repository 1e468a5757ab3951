/* campaign_straggler.c - a slow node in a hot hour and/or on a degraded
 * fabric (campaign_config straggler_hot_speed, fabric_slow_speed;
 * docs/failures.md "A slow node in a hot hour or on a degraded fabric").
 *
 * A slow node (a straggler) slows the job's compute; thermal throttling
 * slows other GPUs' compute; a part down adds communication time. The three
 * do not multiply: the synchronous iteration waits for its slowest stage,
 * and communication and the bubble do not slow with a GPU's clock. So while
 * a node is slow in a hot hour, or with network parts out, the job's speed
 * is the step tier's one iteration with all of them applied, and the
 * straggler's factor of the speed is that over the speed without the slow
 * node (the fabric's x the throttle's), at most 1: the degraded and
 * throttle stretches stay what they were, the straggler's is what the slow
 * node adds on top. Asked when a node turns slow (none was) and at every
 * change of the parts out or of the hour's heat while one is; with no node
 * slow, or neither heat nor parts out, nothing is asked and the straggler
 * speed is the campaign's straggler_speed, as before.
 */
#include <float.h>
#include <math.h>

#include "campaign_internal.h"
#include "engine.h"

static int failed(campaign *c, double v)
{
    if (c->err && !c->err->code)
        sim_error_set(c->err, SIM_ERR_INTERNAL, NULL, 0,
                      "the speed with a slow node is %g (not a number > 0)", v);
    c->model_failed = 1;
    sim_stop(c->eng);
    return -1;
}

int campaign_straggler_combined(campaign *c)
{
    const campaign_config *cfg = c->cfg;
    c->slow_combined_now = 0;
    if (!c->n_slow)
        return 0;
    double thermal = !c->throttle_is_hot      ? 1.0
                     : c->fabric_hot_now > 0 ? c->fabric_hot_now
                                             : cfg->throttle_speed;
    if (c->fab_view_n && c->fabric_now > DBL_MIN) { /* parts out, and the job runs on them */
        if (!cfg->fabric_slow_speed)
            return 0;
        double v = cfg->fabric_slow_speed(cfg->fabric_ctx, c->ws->fab_view, c->fab_view_n,
                                          c->throttle_is_hot, c->err);
        if (!(v > 0) || !isfinite(v)) /* the state runs without the slow node: so with it */
            return failed(c, v);
        c->slow_combined_now = fmin(1.0, v / (c->fabric_now * thermal));
    } else if (c->throttle_is_hot && cfg->straggler_hot_speed > 0) { /* on the fabric as built */
        c->slow_combined_now = fmin(1.0, cfg->straggler_hot_speed / thermal);
    }
    return 0;
}
