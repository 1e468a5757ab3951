/* serving.c - the serving simulation (serving.h): arrivals, routing,
 * iterations on the engine, and the results. */
#include "serving.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_math.h> /* M_PI, whatever the C dialect */
#include <gsl/gsl_randist.h>

#include "event_kinds.h"
#include "serving_internal.h"

const double serve_quantile_p[SERVE_QUANTILES] = {0.50, 0.90, 0.99};

static const char *const arrival_names[SERVE_ARRIVAL_COUNT] = {"poisson", "gamma", "closed",
                                                                   "trace"};
static const char *const length_names[SERVE_LEN_COUNT] = {"fixed", "uniform", "lognormal"};

const char *serve_arrival_name(int a)
{
    return a >= 0 && a < SERVE_ARRIVAL_COUNT ? arrival_names[a] : "?";
}

const char *serve_length_dist_name(int d)
{
    return d >= 0 && d < SERVE_LEN_COUNT ? length_names[d] : "?";
}

static int parse_name(const char *name, const char *const *names, int n, int *out)
{
    for (int i = 0; i < n; i++)
        if (name && strcmp(name, names[i]) == 0) {
            *out = i;
            return 0;
        }
    return -1;
}

int serve_arrival_parse(const char *name, int *out)
{
    return parse_name(name, arrival_names, SERVE_ARRIVAL_COUNT, out);
}

int serve_length_dist_parse(const char *name, int *out)
{
    return parse_name(name, length_names, SERVE_LEN_COUNT, out);
}

static int bad(sim_error *err, const char *what, double value, const char *allowed)
{
    return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "serving: %s %g: %s", what, value, allowed);
}

static int check_length(const serve_length *l, const char *what, sim_error *err)
{
    if (l->dist < 0 || l->dist >= SERVE_LEN_COUNT)
        return bad(err, what, l->dist, "unknown distribution");
    if (!(l->a >= 1) || !isfinite(l->a) || l->a > 1e7)
        return bad(err, what, l->a, "the tokens (fixed, uniform's low end, lognormal's median) "
                                    "must be from 1 to 1e7");
    if (l->dist == SERVE_LEN_UNIFORM && !(l->b >= l->a && l->b <= 1e7))
        return bad(err, what, l->b, "uniform's high end must be from the low end to 1e7");
    if (l->dist == SERVE_LEN_LOGNORMAL && !(l->b > 0 && l->b <= 5))
        return bad(err, what, l->b, "lognormal's sigma must be in (0, 5]");
    if (!(l->max >= 0) || l->max > 1e7)
        return bad(err, what, l->max, "the cap must be from 0 (none) to 1e7");
    return 0;
}

int serve_config_check(const serve_config *c, sim_error *err)
{
    int rc = model_arch_check(&c->arch, err);
    if (rc)
        return rc;
    if (c->arch.experts)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "serving: %s is a mixture of experts; "
                             "the serving tier times dense models only (docs/serving.md)",
                             c->arch.name);
    rc = compute_device_check(&c->dev, err);
    if (rc)
        return rc;
    if (c->tp < 1 || c->tp > 64 || c->arch.heads % c->tp ||
        (c->arch.kv_heads >= c->tp && c->arch.kv_heads % c->tp))
        return bad(err, "tp", c->tp, "must be from 1 to 64 and divide the heads (and the KV "
                                     "heads when there are at least tp)");
    if (!(c->gpu_bytes > 0) || !isfinite(c->gpu_bytes))
        return bad(err, "GPU memory", c->gpu_bytes, "must be positive (the catalog has none?)");
    if (!(c->reserved_bytes >= 0) || !(c->reserved_bytes < c->gpu_bytes))
        return bad(err, "reserved memory", c->reserved_bytes, "must be from 0 to the GPU's");
    if (!(c->kv_fraction > 0 && c->kv_fraction <= 1))
        return bad(err, "kv-fraction", c->kv_fraction, "must be in (0, 1]");
    if (c->tp > 1 && (!(c->scaleup_bytes_per_s > 0) || !isfinite(c->scaleup_bytes_per_s) ||
                      !(c->scaleup_step_s >= 0) || !isfinite(c->scaleup_step_s)))
        return bad(err, "scale-up bandwidth", c->scaleup_bytes_per_s,
                   "tp > 1 needs the GPU's scale-up link (bandwidth > 0, step latency >= 0)");
    if (!(c->iteration_overhead_s >= 0) || c->iteration_overhead_s > 1)
        return bad(err, "iteration overhead", c->iteration_overhead_s, "must be from 0 to 1 s");
    if (c->kv_block_tokens < 1 || c->kv_block_tokens > 65536)
        return bad(err, "kv-block", c->kv_block_tokens, "must be from 1 to 65536 tokens");
    if (c->max_batch_tokens < 1 || c->max_batch_tokens > 1000000)
        return bad(err, "max-batch-tokens", c->max_batch_tokens, "must be from 1 to 1e6");
    if (c->max_sequences < 1 || c->max_sequences > 100000)
        return bad(err, "max-sequences", c->max_sequences, "must be from 1 to 1e5");
    if (c->replicas < 1 || c->replicas > 1000000)
        return bad(err, "replicas", c->replicas, "must be from 1 to 1e6");
    if (!c->router)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "serving: no router");
    if (c->arrival < 0 || c->arrival >= SERVE_ARRIVAL_COUNT)
        return bad(err, "arrival process", c->arrival, "unknown");
    int timed = c->arrival == SERVE_POISSON || c->arrival == SERVE_GAMMA; /* rate, duration */
    if (c->arrival == SERVE_TRACE && (!c->trace || c->n_trace < 1 || c->n_trace > 1000000000ull))
        return bad(err, "trace", (double)c->n_trace, "needs 1 to 1e9 requests");
    for (uint64_t i = 0; c->arrival == SERVE_TRACE && i < c->n_trace; i++) {
        const serve_trace_row *t = &c->trace[i];
        if (!(t->arrival_s >= 0 && t->arrival_s <= 3.2e7) ||
            (i && t->arrival_s < c->trace[i - 1].arrival_s) || t->prompt < 1 || t->output < 1 ||
            t->prompt > 1e7 || t->output > 1e7)
            return bad(err, "trace row", (double)i, "arrivals from 0 to a year in time order, "
                                                   "1 to 1e7 tokens");
    }
    if (timed && (!(c->rate_per_s > 0) || c->rate_per_s > 1e9))
        return bad(err, "rate", c->rate_per_s, "must be in (0, 1e9] requests per second");
    if (c->arrival == SERVE_GAMMA && !(c->cv > 0 && c->cv <= 100))
        return bad(err, "cv", c->cv, "must be in (0, 100]");
    if (c->arrival == SERVE_CLOSED && (c->clients < 1 || c->clients > 10000000 ||
                                       c->max_requests < c->clients))
        return bad(err, "clients", c->clients, "closed loop needs 1 to 1e7 clients and "
                                               "requests >= clients");
    if (!(c->diurnal_amplitude >= 0 && c->diurnal_amplitude <= 1))
        return bad(err, "diurnal amplitude", c->diurnal_amplitude, "must be in [0, 1]");
    if (c->diurnal_amplitude > 0 && c->arrival != SERVE_POISSON)
        return bad(err, "diurnal amplitude", c->diurnal_amplitude, "applies to Poisson "
                                                                    "arrivals only");
    if (c->diurnal_amplitude > 0 && (!(c->diurnal_period_s > 0) || !isfinite(c->diurnal_period_s)
                                     || !isfinite(c->diurnal_peak_s)))
        return bad(err, "diurnal period", c->diurnal_period_s, "must be > 0 s (and the peak "
                                                               "finite)");
    if (timed && (!(c->duration_s > 0) || c->duration_s > 3.2e7))
        return bad(err, "duration", c->duration_s, "must be in (0, 1 year] seconds");
    if (c->max_requests > 1000000000ull)
        return bad(err, "requests", (double)c->max_requests, "must be at most 1e9");
    if (!(c->slo_ttft_s >= 0) || !(c->slo_tpot_s >= 0) || !isfinite(c->slo_ttft_s) ||
        !isfinite(c->slo_tpot_s))
        return bad(err, "SLO", c->slo_ttft_s, "latencies must be >= 0 and finite");
    if ((rc = check_length(&c->prompt, "prompt", err)) || (rc = check_length(&c->output, "output",
                                                                              err)))
        return rc;
    if ((rc = serve_extras_check(c, err)) || (rc = serve_swap_check(c, err)) ||
        (rc = serve_session_check(c, err)) || (rc = serve_fetch_check(c, err)))
        return rc;
    return serve_memory(c, NULL, NULL, NULL, err);
}

double serve_expected_requests(const serve_config *c)
{
    double n = c->arrival == SERVE_TRACE    ? (double)c->n_trace
               : c->arrival == SERVE_CLOSED ? (double)c->max_requests
                                          : c->rate_per_s * c->duration_s *
                                                (1 + c->diurnal_amplitude); /* the peak's */
    if (c->arrival == SERVE_GAMMA) /* a renewal count's variance: n cv^2 */
        n += 10 * sqrt(n) * c->cv;
    else if (c->arrival == SERVE_POISSON)
        n += 10 * sqrt(n);
    if (c->max_requests && n > (double)c->max_requests)
        n = (double)c->max_requests;
    if (serve_has_sessions(c)) /* the sessions' turns */
        n *= serve_mean_turns(c);
    return n + 1;
}

/* ---- time integrals ---- */

void serve_account(serve_sim *s)
{
    double now = sim_now(s->eng), dt = now - s->last_t;
    if (dt > 0) {
        s->area_in_system += s->in_system * dt;
        s->area_blocks += s->blocks_used_fleet * dt;
        s->last_t = now;
    }
}

/* ---- requests ---- */

static double draw_length(gsl_rng *rng, const serve_length *l)
{
    double x = l->a;
    if (l->dist == SERVE_LEN_UNIFORM)
        x = l->a + floor(gsl_rng_uniform(rng) * (l->b - l->a + 1)); /* whole tokens a..b */
    else if (l->dist == SERVE_LEN_LOGNORMAL)
        x = floor(gsl_ran_lognormal(rng, log(l->a), l->b) + 0.5);
    if (x < 1)
        x = 1;
    if (l->max > 0 && x > l->max)
        x = l->max;
    return x;
}

static void start_iteration(serve_sim *s, uint32_t r);

static void on_iteration_end(sim_engine *eng, void *ctx, uint64_t data);

static void on_start(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)eng;
    start_iteration(ctx, (uint32_t)data);
}

void serve_start_later(serve_sim *s, uint32_t r)
{
    sim_schedule_in(s->eng, 0, 2, KIND_SERVE_START, on_start, s, r);
}

int serve_new_request(serve_sim *s)
{
    uint32_t id;
    if (s->n_free) {
        id = s->free_ids[--s->n_free];
    } else {
        if (s->n_req == s->cap_req) {
            uint64_t cap = s->cap_req ? 2 * s->cap_req : 1024;
            serve_req *q = realloc(s->req, cap * sizeof *q);
            uint32_t *f = q ? realloc(s->free_ids, cap * sizeof *f) : NULL;
            if (q)
                s->req = q;
            if (!f)
                return -1;
            s->free_ids = f;
            if (s->has_ext) {
                serve_req_ext *x = realloc(s->ext, cap * sizeof *x);
                if (!x)
                    return -1;
                s->ext = x;
            }
            s->cap_req = cap;
        }
        id = (uint32_t)s->n_req++;
    }
    serve_req *q = &s->req[id];
    memset(q, 0, sizeof *q);
    int refused = 0; /* a follow-up over the context window */
    q->seq = s->sent;
    q->arrival_s = sim_now(s->eng);
    q->first_sched_s = q->first_token_s = -1;
    if (s->c->arrival == SERVE_TRACE) {
        q->orig_prompt = q->prompt = s->c->trace[s->sent].prompt;
        q->output = s->c->trace[s->sent].output;
    } else {
        q->orig_prompt = q->prompt = (uint32_t)draw_length(s->length_rng, &s->c->prompt);
        q->output = (uint32_t)draw_length(s->length_rng, &s->c->output);
    }
    if (s->ext) {
        serve_req_ext *x = &s->ext[id];
        x->cache_entry = x->prefill_replica = x->session = SERVE_NONE;
        x->prefix_depth = 0;
        if (s->c->prefix_prompts && s->next_session == SERVE_NONE) /* a follow-up: its own */
            q->orig_prompt = q->prompt += serve_prefix_draw(s, x);
        if (s->sessions_on && (refused = serve_session_begin(s, id)) < 0)
            return -1;
    }
    s->sent++;
    s->out->arrived++;
    s->out->arrivals_end_s = q->arrival_s;
    if (serve_series_count(s, SERIES_ARRIVAL))
        return -1;
    /* one replica must be able to hold the whole sequence (disaggregated:
     * a prefill replica the prompt, a decode replica the whole) */
    double blocks = ceil(((double)q->prompt + q->output) / s->c->kv_block_tokens);
    if (refused || blocks > s->rep[s->n_rep - 1].blocks_total ||
        (s->c->prefill_replicas &&
         ceil((double)q->prompt / s->c->kv_block_tokens) > s->rep[0].blocks_total)) {
        q->state = REQ_DROPPED;
        s->out->dropped++;
        s->free_ids[s->n_free++] = id;
        if (s->sessions_on)
            serve_session_dropped(s, id);
        if (serve_series_count(s, SERIES_DROPPED) || serve_report_request(s, q))
            return -1;
        return 1;
    }
    uint32_t r = serve_route(s, id, 0);
    serve_replica *rp = &s->rep[r];
    q->replica = r;
    if (s->ext)
        s->ext[id].prefill_replica = r;
    q->state = REQ_WAITING;
    if (s->fetch_on) { /* its context from another replica (serving_fetch.c)? */
        s->outstanding[r]++;
        serve_account(s);
        serve_series_note(s);
        s->in_system++;
        int f = serve_fetch_start(s, id, r);
        if (f)
            return f < 0 ? -1 : 0;
        s->outstanding[r]--;
        s->in_system--;
    }
    if (serve_wait_reserve(rp))
        return -1;
    rp->wait[(rp->wait_head + rp->wait_n) % rp->wait_cap] = id;
    rp->wait_n++;
    s->outstanding[r]++;
    serve_account(s);
    serve_series_note(s);
    s->in_system++;
    s->n_queued++;
    if (!rp->busy) { /* after every arrival due now: they may join the first batch */
        rp->busy = 1;
        serve_start_later(s, r);
    }
    return 0;
}

void serve_fail(serve_sim *s)
{
    s->failed = 1;
    sim_stop(s->eng);
}

static double next_gap(serve_sim *s)
{
    const serve_config *c = s->c;
    if (c->arrival == SERVE_GAMMA) { /* shape 1/cv^2, mean 1/rate */
        double k = 1.0 / (c->cv * c->cv);
        return gsl_ran_gamma(s->arrival_rng, k, 1.0 / (k * c->rate_per_s));
    }
    return gsl_ran_exponential(s->arrival_rng, 1.0 / c->rate_per_s);
}

/* the next arrival after t: a gap, or with a diurnal rate the first
 * candidate of the peak-rate stream that thinning keeps (candidates past
 * the duration end the search: the caller stops there) */
static double next_arrival(serve_sim *s, double t)
{
    const serve_config *c = s->c;
    double a = c->diurnal_amplitude;
    if (!(a > 0))
        return t + next_gap(s);
    for (;;) {
        t += gsl_ran_exponential(s->arrival_rng, 1.0 / (c->rate_per_s * (1 + a)));
        if (t > c->duration_s)
            return t;
        double keep = (1 + a * cos(2 * M_PI * (t - c->diurnal_peak_s) / c->diurnal_period_s)) /
                      (1 + a);
        if (gsl_rng_uniform(s->arrival_rng) < keep)
            return t;
    }
}

static int may_send(const serve_sim *s)
{
    return !s->c->max_requests ||
           (s->sessions_on ? s->out->sessions : s->sent) < s->c->max_requests;
}

/* A closed-loop client's next request; one that is dropped (too long for
 * a replica) is followed by another, until the request count is reached.
 * 0, or -1 when out of memory. */
static int closed_send(serve_sim *s)
{
    int rc = 1;
    while (rc == 1 && may_send(s))
        rc = serve_new_request(s);
    return rc < 0 ? -1 : 0;
}

static void on_arrival(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)data;
    serve_sim *s = ctx;
    if (serve_new_request(s) < 0) {
        serve_fail(s);
        return;
    }
    if (s->c->arrival == SERVE_TRACE) { /* the next row, if any */
        if (s->sent < s->c->n_trace && may_send(s))
            sim_schedule_at(eng, s->c->trace[s->sent].arrival_s, 0, KIND_SERVE_ARRIVAL,
                            on_arrival, s, 0);
        return;
    }
    double t = next_arrival(s, sim_now(eng));
    if (t <= s->c->duration_s && may_send(s))
        sim_schedule_at(eng, t, 0, KIND_SERVE_ARRIVAL, on_arrival, s, 0);
}

static void start_iteration(serve_sim *s, uint32_t r)
{
    double t = serve_form_batch(s, r);
    if (t < 0) {
        serve_fail(s);
        return;
    }
    serve_replica *rp = &s->rep[r];
    rp->busy = t > 0;
    if (t > 0) {
        s->out->iterations++;
        s->busy_s += t;
        if (rp->is_prefill)
            s->pre_busy_s += t;
        sim_schedule_in(s->eng, t, 1, KIND_SERVE_ITERATION, on_iteration_end, s, r);
    } else if (rp->wait_n || rp->run_n) {
        serve_fail(s); /* work it cannot run: cannot happen (every request fits alone) */
    }
}

static void finish(serve_sim *s, uint32_t id)
{
    serve_req *q = &s->req[id];
    q->state = REQ_DONE;
    q->end_s = sim_now(s->eng);
    s->outstanding[q->replica]--;
    serve_account(s);
    serve_series_note(s);
    s->in_system--;
    s->n_running--;
    if (s->ext)
        serve_prefix_release(s, &s->rep[q->replica], q);
    if (q->prefix_hit)
        s->ttft_hit_sum += q->first_token_s - q->arrival_s, s->out->ttft_hit_count++;
    else
        s->ttft_miss_sum += q->first_token_s - q->arrival_s, s->out->ttft_miss_count++;
    if (serve_series_count(s, SERIES_FINISHED) || serve_report_request(s, q)) {
        serve_fail(s);
        return;
    }
    s->out->finished++;
    s->out->prompt_tokens += q->orig_prompt;
    s->out->output_tokens += q->output;
    s->out->end_s = q->end_s;
    if (serve_stats_add(&s->stats, s->c, q, serve_session_group(s, id)) < 0) {
        serve_fail(s);
        return;
    }
    s->free_ids[s->n_free++] = id; /* its slot serves the next arrival */
    if (s->sessions_on && serve_session_finished(s, id) < 0)
        serve_fail(s);
    if (s->c->arrival == SERVE_CLOSED && closed_send(s) < 0)
        serve_fail(s);
}

static void on_iteration_end(sim_engine *eng, void *ctx, uint64_t data)
{
    serve_sim *s = ctx;
    uint32_t r = (uint32_t)data;
    serve_replica *rp = &s->rep[r];
    double now = sim_now(eng);
    uint32_t kept = 0;
    for (uint32_t i = 0; i < rp->run_n; i++) {
        if (i + SERVE_PREFETCH < rp->run_n) /* the records are scattered: fetch ahead */
            __builtin_prefetch(&s->req[rp->run[i + SERVE_PREFETCH]], 1);
        uint32_t id = rp->run[i];
        serve_req *q = &s->req[id];
        if (q->step_tokens) {
            q->kv_tokens += q->step_tokens;
            int emits = q->step_is_decode;
            if (!q->step_is_decode) {
                q->prefilled += q->step_tokens;
                emits = q->prefilled == q->prompt;
                if (s->c->prefix_prompts && serve_prefix_donate(s, rp, q)) {
                    serve_fail(s);
                    return;
                }
            }
            q->step_tokens = 0;
            if (emits) {
                q->generated++;
                if (rp->is_prefill && q->generated < q->output) { /* on to a decode replica */
                    if (serve_disagg_send(s, id)) {
                        serve_fail(s);
                        return;
                    }
                    continue;
                }
                if (q->first_token_s < 0)
                    q->first_token_s = now;
            }
        }
        if (q->generated >= q->output) {
            if (s->sessions_on && s->c->session_cache && serve_session_keeps(s, id) &&
                serve_prefix_keep(s, rp, q, s->sess[s->ext[id].session].cache_key)) {
                serve_fail(s);
                return;
            }
            serve_set_blocks(s, q, 0);
            finish(s, id);
            if (s->failed)
                return;
            continue;
        }
        rp->run[kept++] = id;
    }
    rp->run_n = kept;
    start_iteration(s, r);
}

/* ---- results ---- */

static int results(serve_sim *s, sim_error *err)
{
    const serve_config *c = s->c;
    serve_result *o = s->out;
    uint64_t n = o->finished, met = s->stats.met;
    if (serve_stats_summarise(&s->stats, o->arrived, o))
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "serving: out of memory");
    o->in_flight = o->arrived - o->finished - o->dropped;
    double T = o->end_s > 0 ? o->end_s : 0;
    int dis = c->prefill_replicas > 0;
    if (T > 0) {
        o->output_tokens_per_s = o->output_tokens / T;
        o->output_tokens_per_s_per_gpu = o->output_tokens_per_s / serve_gpus(c);
        o->requests_per_s = n / T;
        o->goodput_requests_per_s = met / T;
        o->little_l = s->area_in_system / T;
        o->little_lambda = (o->arrived - o->dropped) / T;
        o->kv_util_mean = dis ? s->area_blocks / (T * s->blocks_fleet_total)
                              : s->area_blocks / (T * s->rep[0].blocks_total * c->replicas);
        o->busy_fraction = s->busy_s / (T * s->n_rep);
        if (dis) {
            o->prefill_busy_fraction = s->pre_busy_s / (T * c->prefill_replicas);
            o->decode_busy_fraction = (s->busy_s - s->pre_busy_s) / (T * c->replicas);
        }
    }
    o->slo_met_fraction = n ? (double)met / n : 1;
    o->kv_util_max = dis ? s->peak_blocks / s->blocks_fleet_total
                         : s->peak_blocks / (s->rep[0].blocks_total * c->replicas);
    o->mean_batch_tokens = o->iterations ? s->batch_tokens_sum / o->iterations : 0;
    o->prefix_hit_rate = o->prefix_requests ? (double)o->prefix_hits / o->prefix_requests : 0;
    o->ttft_hit_mean_s = o->ttft_hit_count ? s->ttft_hit_sum / o->ttft_hit_count : 0;
    o->ttft_miss_mean_s = o->ttft_miss_count ? s->ttft_miss_sum / o->ttft_miss_count : 0;
    if (s->sessions_on)
        serve_session_results(s, o);
    serve_disagg_results(s, o);
    serve_fetch_results(s, o);
    if (c->preemption == SERVE_PREEMPT_SWAP) {
        o->host_blocks_per_replica = s->rep[s->n_rep - 1].host_blocks_total;
        o->host_util_max = s->host_fleet_total > 0 ? s->host_peak / s->host_fleet_total : 0;
    }
    if (serve_series_finish(s, o))
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "serving: out of memory");
    return 0;
}

static int on_poll(sim_engine *eng, void *ctx)
{
    serve_sim *s = ctx;
    if (s->c->poll(s->c->poll_ctx, sim_now(eng), s->out->finished)) {
        s->interrupted = 1;
        return 1;
    }
    return 0;
}

static void sim_free(serve_sim *s)
{
    serve_swap_free(s);
    serve_session_free(s);
    serve_prefix_free(s);
    serve_kvnet_free(s);
    for (uint32_t r = 0; s->rep && r < s->n_rep; r++) {
        free(s->rep[r].wait);
        free(s->rep[r].run);
    }
    free(s->rep);
    free(s->xfer_s);
    free(s->ext);
    free(s->bins);
    serve_iter_cache_free(&s->pre_iter);
    free(s->outstanding);
    free(s->req);
    free(s->free_ids);
    free(s->prefilling);
    serve_stats_free(&s->stats);
    serve_iter_cache_free(&s->iter);
    free(s->chunk_tokens);
    free(s->chunk_context);
    gsl_rng_free(s->arrival_rng);
    gsl_rng_free(s->length_rng);
    sim_engine_destroy(s->eng);
}

int serve_simulate(const serve_config *c, serve_result *out, sim_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = serve_config_check(c, err);
    if (rc)
        return rc;
    double blocks, pre_blocks = 0;
    serve_memory(c, &out->weights_bytes_per_gpu, &out->kv_bytes_per_token, &blocks, NULL);
    out->kv_blocks_per_replica = blocks;
    serve_sim s = {.c = c, .out = out};
    s.pre_c = serve_prefill_config(c);
    s.sessions_on = serve_has_sessions(c);
    s.caching = c->prefix_prompts || (s.sessions_on && c->session_cache);
    s.next_session = SERVE_NONE;
    s.has_ext = c->prefix_prompts || c->prefill_replicas || s.sessions_on;
    s.fetch_on = c->kv_remote == SERVE_KV_REMOTE_FETCH;
    s.n_rep = c->replicas + c->prefill_replicas;
    if (c->prefill_replicas)
        serve_memory(&s.pre_c, NULL, &s.pre_kv_bytes_per_token, &pre_blocks, NULL);
    out->prefill_kv_blocks_per_replica = pre_blocks;
    s.fetch_kv_bytes_per_token = c->prefill_replicas ? s.pre_kv_bytes_per_token
                                                     : out->kv_bytes_per_token;
    s.eng = sim_engine_create();
    s.arrival_rng = gsl_rng_alloc(gsl_rng_mt19937);
    s.length_rng = gsl_rng_alloc(gsl_rng_mt19937);
    s.rep = calloc(s.n_rep, sizeof *s.rep);
    s.outstanding = calloc(s.n_rep, sizeof *s.outstanding);
    int ok = s.eng && s.arrival_rng && s.length_rng && s.rep && s.outstanding &&
             !serve_stats_init(&s.stats, c) && !serve_iter_cache_init(&s.iter, c) &&
             !serve_prefix_init(&s) && !serve_kvnet_init(&s) && !serve_session_init(&s) &&
             (!c->prefill_replicas || !serve_iter_cache_init(&s.pre_iter, &s.pre_c));
    for (uint32_t r = 0; ok && r < s.n_rep; r++) {
        int pre = r < c->prefill_replicas;
        s.rep[r].is_prefill = pre;
        s.rep[r].cfg = pre ? &s.pre_c : c;
        s.rep[r].iter = pre ? &s.pre_iter : &s.iter;
        s.rep[r].blocks_total = pre ? pre_blocks : blocks;
        s.blocks_fleet_total += s.rep[r].blocks_total;
        s.rep[r].run_cap = c->max_sequences;
        s.rep[r].run = malloc((size_t)c->max_sequences * sizeof *s.rep[r].run);
        ok = s.rep[r].run != NULL;
    }
    if (ok && serve_swap_init(&s))
        ok = 0;
    if (!ok) {
        sim_free(&s);
        return sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "serving: out of memory");
    }
    if ((rc = serve_kvfab_init(&s, err))) {
        sim_free(&s);
        return rc;
    }
    /* two streams from the one seed: arrivals, and lengths */
    gsl_rng_set(s.arrival_rng, (unsigned long)(c->seed * 2 + 1));
    gsl_rng_set(s.length_rng, (unsigned long)(c->seed * 2 + 2));
    if (c->arrival == SERVE_CLOSED) {
        for (unsigned i = 0; i < c->clients && !s.failed; i++)
            if (closed_send(&s) < 0)
                serve_fail(&s);
    } else if (c->arrival == SERVE_TRACE) {
        sim_schedule_at(s.eng, c->trace[0].arrival_s, 0, KIND_SERVE_ARRIVAL, on_arrival, &s, 0);
    } else {
        double t = next_arrival(&s, 0);
        if (t <= c->duration_s)
            sim_schedule_at(s.eng, t, 0, KIND_SERVE_ARRIVAL, on_arrival, &s, 0);
    }
    if (c->poll)
        sim_engine_set_poll(s.eng, on_poll, &s, 4096);
    if (!s.failed && sim_run(s.eng, INFINITY) == SIM_RUN_FAILED)
        s.failed = 1;
    serve_account(&s);
    if (s.interrupted)
        rc = sim_error_set(err, SIM_ERR_INTERRUPTED, NULL, 0, "serving: interrupted");
    else if (s.failed)
        rc = sim_error_set(err, SIM_ERR_NOMEM, NULL, 0, "serving: the simulation stopped (out "
                           "of memory or a batch the compute model refuses)");
    else
        rc = results(&s, err);
    sim_free(&s);
    return rc;
}
