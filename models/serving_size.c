/* serving_size.c - the smallest fleet that meets a latency SLO at the
 * scenario's traffic (serving.h: serve_size).
 *
 * The SLO holds for n replicas when the simulated P99 TTFT <= slo_ttft_s
 * and the P99 TPOT <= slo_tpot_s (each when set). Assumed monotone in n
 * (more replicas never raise a P99: the same arrivals and lengths, the
 * seed fixed, spread over more replicas; not proved for every router and
 * seed, so the answer is re-checked: the search stops at n met and n - 1
 * not met, both simulated). Search: from the scenario's replica count,
 * double until met (or halve until not met), then bisect the bracket:
 * O(log n) simulations.
 */
#include <math.h>
#include <string.h>

#include "serving.h"

int serve_slo_met(const serve_config *c, const serve_result *r)
{
    return (!(c->slo_ttft_s > 0) || r->ttft.q_s[2] <= c->slo_ttft_s) &&
           (!(c->slo_tpot_s > 0) || !r->tpot_count || r->tpot.q_s[2] <= c->slo_tpot_s);
}

/* simulate at n replicas; 1 met, 0 not, < 0 error */
static int probe(const serve_config *base, unsigned n, serve_size_fn on_step, void *ctx,
                 unsigned *steps, serve_result *r, sim_error *err)
{
    serve_config c = *base;
    c.replicas = n;
    int rc = serve_simulate(&c, r, err);
    if (rc)
        return -1;
    serve_size_step st = {.replicas = n, .met = serve_slo_met(&c, r), .result = r};
    (*steps)++;
    if (on_step && on_step(ctx, &st)) {
        sim_error_set(err, SIM_ERR_INTERRUPTED, NULL, 0, "serving: interrupted");
        return -1;
    }
    return st.met;
}

/* The search's bracket: lo misses the SLO (0: none known), hi meets it
 * (0: none known), at_answer holds hi's result. */
typedef struct size_bracket {
    const serve_config *base;
    serve_size_fn on_step;
    void *ctx;
    unsigned *steps;
    serve_result *r, *at_answer;
    unsigned lo, hi;
} size_bracket;

/* Simulate n replicas and move the bracket's end: 0, or -1 with err set. */
static int bracket_probe(size_bracket *b, unsigned n, sim_error *err)
{
    int met = probe(b->base, n, b->on_step, b->ctx, b->steps, b->r, err);
    if (met < 0)
        return -1;
    if (met) {
        b->hi = n;
        *b->at_answer = *b->r;
    } else {
        b->lo = n;
    }
    return 0;
}

/* What any sizing needs: an SLO to meet and open-loop arrivals; 0, or the
 * error's code (set in err). */
static int sizing_needs(const serve_config *c, sim_error *err)
{
    if (!(c->slo_ttft_s > 0) && !(c->slo_tpot_s > 0))
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "serving: sizing needs an SLO "
                             "(<slo ttft=... tpot=...>): the fleet must meet its P99s");
    if (c->arrival == SERVE_CLOSED)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "serving: sizing needs open-loop "
                             "arrivals (a rate); a closed loop's load follows the fleet");
    return 0;
}

int serve_size(const serve_config *c, unsigned max_replicas, serve_size_fn on_step, void *ctx,
               unsigned *answer, serve_result *at_answer, sim_error *err)
{
    int needs = sizing_needs(c, err);
    if (needs)
        return needs;
    if (c->prefill_replicas)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "serving: disaggregated pools are "
                             "sized by serve_size_pools");
    if (max_replicas < 1)
        max_replicas = 1;
    unsigned steps = 0, n = c->replicas < max_replicas ? c->replicas : max_replicas;
    serve_result r;
    /* the bracket: lo not met (0: none known), hi met */
    size_bracket b = {c, on_step, ctx, &steps, &r, at_answer, 0, 0};
    if (bracket_probe(&b, n, err))
        return err->code;
    while (b.hi > 1 && !b.lo) /* met at the start: halve until a fleet misses */
        if (bracket_probe(&b, b.hi / 2, err))
            return err->code;
    while (!b.hi) { /* missed at the start: double until a fleet meets */
        if (b.lo >= max_replicas)
            return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "serving: %u replicas (the "
                                 "most allowed) do not meet the SLO", max_replicas);
        if (bracket_probe(&b, b.lo > max_replicas / 2 ? max_replicas : 2 * b.lo, err))
            return err->code;
    }
    while (b.lo && b.hi - b.lo > 1) /* lo misses, hi meets */
        if (bracket_probe(&b, b.lo + (b.hi - b.lo) / 2, err))
            return err->code;
    *answer = b.hi;
    return 0;
}

/* Disaggregated pools: every pair (p prefill, d decode replicas, the pools'
 * tp fixed) by its GPUs g = p tp_p + d tp_d, fewest first, and for one g by
 * p ascending; the first pair that meets the SLO is the answer. Every pair
 * with fewer GPUs was simulated and missed (no monotonicity assumed), so
 * (p - 1, d) and (p, d - 1) miss. Bounded: at most max_runs simulations. */
int serve_size_pools(const serve_config *c, unsigned max_runs, serve_size_fn on_step, void *ctx,
                     unsigned *prefill, unsigned *decode, serve_result *at_answer,
                     sim_error *err)
{
    int needs = sizing_needs(c, err);
    if (needs)
        return needs;
    if (!c->prefill_replicas)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "serving: pools are sized with "
                             "<disaggregated>; one pool is sized by serve_size");
    double tp_p = c->prefill_tp, tp_d = c->tp;
    unsigned runs = 0;
    /* g runs over the GPU counts some pair reaches: every g from the
     * smallest pair's; each g's pairs are finite, so the loop ends within
     * max_runs simulations (or at the replica bound) */
    for (double g = tp_p + tp_d; g <= 2e6; g++) {
        for (double p = 1; p * tp_p + tp_d <= g; p++) {
            double d = (g - p * tp_p) / tp_d;
            if (d != floor(d) || d > 1e6 || p > 1e6)
                continue;
            if (runs == max_runs)
                return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "serving: no pair of pools "
                                     "of fewer than %.0f GPUs meets the SLO, and the search "
                                     "stops at %u simulations", g, max_runs);
            serve_config t = *c;
            t.prefill_replicas = (unsigned)p;
            t.replicas = (unsigned)d;
            serve_result r;
            if (serve_simulate(&t, &r, err))
                return err->code;
            runs++;
            serve_size_step st = {.replicas = t.replicas, .prefill_replicas = t.prefill_replicas,
                                  .met = serve_slo_met(&t, &r), .result = &r};
            if (on_step && on_step(ctx, &st)) {
                serve_result_free(&r);
                return sim_error_set(err, SIM_ERR_INTERRUPTED, NULL, 0, "serving: interrupted");
            }
            if (st.met) {
                *prefill = t.prefill_replicas;
                *decode = t.replicas;
                *at_answer = r;
                return 0;
            }
            serve_result_free(&r);
        }
    }
    return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "serving: no pair of pools meets the SLO");
}
