/* test_serving.c - the serving tier (models/serving.h) against closed forms:
 * one request equals its prefill plus its decodes, timed by
 * serve_iteration_s (whole prompt and chunked); M/D/1 (one sequence per
 * replica, fixed lengths, Poisson arrivals: the queueing delay's mean is
 * rho S / (2 (1 - rho)), Pollaczek-Khinchine); Little's law on every run;
 * conservation of requests and tokens, preemption under a small KV cache;
 * determinism; a load that rises never lowers the mean TTFT; refusals.
 *
 * The device is a round synthetic one (1e15 FLOP/s, 3e12 B/s, no tile
 * quantisation): the test checks the simulation's arithmetic, not a GPU.
 * The model is Llama 2 7B's shape (scenarios/catalog/models.xml).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <gsl/gsl_math.h> /* M_PI */

#include "check.h"
#include "precision.h"
#include "serving.h"
#include "serving_checks.h"

static serve_config base(void) { return serve_test_base("round-robin"); }


/* the service time of one request alone: its prompt in chunks of the
 * budget (only the last emits a token), then o - 1 decodes */
static double alone_s(const serve_config *c, double p, double o, double *ttft)
{
    double t = 0;
    for (double done = 0; done < p;) {
        double chunk = p - done < c->max_batch_tokens ? p - done : c->max_batch_tokens;
        double emit = done + chunk == p;
        serve_batch b = {1, &chunk, &done, 0, 0, (unsigned)emit};
        t += serve_iteration_s(c, &b);
        done += chunk;
    }
    *ttft = t;
    for (double j = 1; j < o; j++)
        t += decode_s(c, p + j);
    return t;
}

static void test_single_request(void)
{
    serve_config c = base();
    serve_result r;
    sim_error err;
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    double ttft, e2e = alone_s(&c, 512, 8, &ttft);
    CHECK_REL(r.ttft.q_s[0], ttft, 1e-12);
    CHECK_REL(r.e2e.max_s, e2e, 1e-12);
    CHECK_REL(ttft, prefill_s(&c, 512, 0), 1e-15);
    CHECK_REL(r.tpot.mean_s, (e2e - ttft) / 7, 1e-12);
    CHECK_INT_EQ(r.iterations, 8);
    CHECK_INT_EQ(r.finished, 1);
    CHECK_INT_EQ(r.output_tokens, 8);
    /* chunked: four chunks of 128 before the first token */
    c.max_batch_tokens = 128;
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    e2e = alone_s(&c, 512, 8, &ttft);
    CHECK_REL(r.ttft.q_s[0], ttft, 1e-12);
    CHECK_REL(r.e2e.max_s, e2e, 1e-12);
    CHECK_INT_EQ(r.iterations, 4 + 7);
    CHECK(ttft > prefill_s(&c, 512, 0)); /* four passes over the weights instead of one */
    /* decode reads more KV as it grows; more tokens never take less time */
    CHECK(decode_s(&c, 4096) > decode_s(&c, 512));
    CHECK(prefill_s(&c, 1024, 0) > prefill_s(&c, 512, 0));
    CHECK(prefill_s(&c, 512, 512) > prefill_s(&c, 512, 0));
    /* tp 2 halves the per-GPU work and adds the all-reduces */
    serve_config c2 = base();
    c2.tp = 2;
    c2.scaleup_bytes_per_s = 300e9;
    c2.scaleup_step_s = 3.4e-6;
    CHECK(decode_s(&c2, 512) < decode_s(&c, 512));
}

static void test_md1(void)
{
    serve_config c = base();
    c.max_sequences = 1;
    c.prompt.a = 256;
    c.output.a = 16;
    double ttft, S = alone_s(&c, 256, 16, &ttft);
    double rho = 0.5;
    c.arrival = SERVE_POISSON;
    c.rate_per_s = rho / S;
    c.max_requests = 0;
    c.duration_s = 100000 * S / rho; /* about 100,000 requests */
    serve_result r;
    sim_error err;
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    double wq = rho * S / (2 * (1 - rho));
    printf("M/D/1: S %.6g s, %llu requests, queue mean %.6g s (closed form %.6g), "
           "busy %.4f\n", S, (unsigned long long)r.finished, r.queue.mean_s, wq,
           r.busy_fraction);
    CHECK(r.finished > 95000 && r.finished < 105000);
    /* the mean of ~1e5 correlated waits: a few percent of sampling error */
    CHECK_REL(r.queue.mean_s, wq, 0.05);
    CHECK_REL(r.e2e.mean_s, wq + S, 0.05);
    CHECK_REL(r.busy_fraction, rho, 0.03);
    CHECK(r.e2e.q_s[0] >= S * (1 - 1e-12)); /* no request is served faster than alone */
    CHECK_REL(r.little_l, r.little_lambda * r.little_w, 1e-9);
    CHECK_INT_EQ(r.preemptions, 0);
}

static void test_batched_stream(void)
{
    serve_config c = base();
    c.replicas = 3;
    c.router = serve_router_find("least-loaded");
    c.arrival = SERVE_GAMMA;
    c.cv = 2;
    c.rate_per_s = 20;
    c.max_requests = 0;
    c.duration_s = 60;
    c.prompt = (serve_length){SERVE_LEN_LOGNORMAL, 600, 0.8, 4000};
    c.output = (serve_length){SERVE_LEN_UNIFORM, 20, 300, 0};
    c.max_batch_tokens = 2048;
    c.slo_ttft_s = 0.5;
    c.slo_tpot_s = 0.05;
    serve_result r, again;
    sim_error err;
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    CHECK(r.arrived > 1000);
    CHECK_INT_EQ(r.arrived, r.finished + r.dropped + r.in_flight);
    CHECK_INT_EQ(r.in_flight, 0);
    CHECK_REL(r.little_l, r.little_lambda * r.little_w, 1e-9);
    CHECK(r.ttft.q_s[0] <= r.ttft.q_s[1] && r.ttft.q_s[1] <= r.ttft.q_s[2] &&
          r.ttft.q_s[2] <= r.ttft.max_s);
    CHECK(r.e2e.mean_s > r.ttft.mean_s);
    CHECK(r.slo_met_fraction > 0 && r.slo_met_fraction <= 1);
    CHECK(r.kv_util_mean > 0 && r.kv_util_mean <= r.kv_util_max && r.kv_util_max <= 1);
    CHECK(r.mean_batch_tokens > 1 && r.mean_batch_tokens <= c.max_batch_tokens);
    CHECK_REL(r.output_tokens_per_s, r.output_tokens / r.end_s, 1e-12);
    CHECK_INT_EQ(serve_simulate(&c, &again, &err), 0);
    CHECK(memcmp(&r, &again, sizeof r) == 0); /* determinism */
    /* twice the load: the mean TTFT does not fall */
    c.rate_per_s = 40;
    CHECK_INT_EQ(serve_simulate(&c, &again, &err), 0);
    CHECK(again.ttft.mean_s >= r.ttft.mean_s);
    CHECK(again.arrived > r.arrived);
}

static void test_preemption(void)
{
    serve_config c = base();
    /* KV for 64 blocks of 16 tokens: weights 13.5 GB + reserved, the rest
     * tuned so that 1,024 tokens fit; 8 clients of 200 + 300 tokens */
    double w, per_token, blocks;
    CHECK_INT_EQ(serve_memory(&c, &w, &per_token, &blocks, NULL), 0);
    c.reserved_bytes = c.gpu_bytes - w - 64.5 * 16 * per_token / c.kv_fraction;
    CHECK_INT_EQ(serve_memory(&c, &w, &per_token, &blocks, NULL), 0);
    CHECK_INT_EQ((long long)blocks, 64);
    c.clients = 8;
    c.max_requests = 40;
    c.prompt.a = 200;
    c.output.a = 300;
    serve_result r;
    sim_error err;
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    printf("preemption: %llu preemptions, %llu iterations, KV peak %.3f\n",
           (unsigned long long)r.preemptions, (unsigned long long)r.iterations, r.kv_util_max);
    CHECK(r.preemptions > 0);
    CHECK_INT_EQ(r.finished, 40);
    CHECK_INT_EQ(r.output_tokens, 40 * 300);
    CHECK_INT_EQ(r.prompt_tokens, 40 * 200);
    CHECK(r.kv_util_max <= 1);
    CHECK_REL(r.little_l, r.little_lambda * r.little_w, 1e-9);
    /* a sequence longer than the whole cache is dropped, not served */
    c.output.a = 1000;
    c.max_requests = 8;
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    CHECK_INT_EQ(r.dropped, 8);
    CHECK_INT_EQ(r.finished, 0);
}

static void test_refusals(void)
{
    serve_config c = base();
    sim_error err;
    c.tp = 3;
    CHECK(serve_config_check(&c, &err) != 0);
    c = base();
    c.arch.experts = 8;
    CHECK(serve_config_check(&c, &err) != 0);
    c = base();
    c.gpu_bytes = 10e9; /* 13.5 GB of weights */
    sim_error_clear(&err);
    CHECK(serve_config_check(&c, &err) != 0);
    CHECK(strstr(err.msg, "no memory for the KV cache") != NULL);
    c = base();
    c.tp = 2; /* no scale-up link */
    CHECK(serve_config_check(&c, &err) != 0);
    c = base();
    c.arrival = SERVE_POISSON;
    c.rate_per_s = 0;
    CHECK(serve_config_check(&c, &err) != 0);
    c = base();
    c.prompt.dist = SERVE_LEN_LOGNORMAL;
    c.prompt.b = 0;
    CHECK(serve_config_check(&c, &err) != 0);
    CHECK(serve_router_find("random") == NULL);
}

/* the histograms (a run past exact_max_requests): every quantile at or
 * above the exact one and at most 2^-10 above; counts, means (to the sums'
 * rounding) and maxima as the exact run's; the SLO count the same */
static void test_histogram_quantiles(void)
{
    serve_config c = base();
    c.replicas = 3;
    c.router = serve_router_find("least-loaded");
    c.arrival = SERVE_POISSON;
    c.rate_per_s = 30;
    c.max_requests = 0;
    c.duration_s = 100;
    c.prompt = (serve_length){SERVE_LEN_LOGNORMAL, 600, 0.8, 4000};
    c.output = (serve_length){SERVE_LEN_LOGNORMAL, 100, 0.6, 1000};
    c.slo_ttft_s = 0.2;
    c.slo_tpot_s = 0.02;
    serve_result ex, h;
    sim_error err;
    CHECK_INT_EQ(serve_simulate(&c, &ex, &err), 0);
    CHECK_INT_EQ(ex.quantiles_exact, 1);
    CHECK(ex.quantile_rel_error == 0);
    c.exact_max_requests = 1;
    CHECK_INT_EQ(serve_simulate(&c, &h, &err), 0);
    CHECK_INT_EQ(h.quantiles_exact, 0);
    CHECK(h.quantile_rel_error == ldexp(1, -10));
    CHECK(ex.finished > 2500);
    CHECK_INT_EQ(h.finished, ex.finished);
    CHECK_INT_EQ(h.tpot_count, ex.tpot_count);
    CHECK_INT_EQ(h.iterations, ex.iterations); /* the same run, only counted otherwise */
    CHECK(h.slo_met_fraction == ex.slo_met_fraction);
    const serve_latency *a[] = {&ex.ttft, &ex.tpot, &ex.e2e, &ex.queue};
    const serve_latency *b[] = {&h.ttft, &h.tpot, &h.e2e, &h.queue};
    for (int m = 0; m < 4; m++) {
        CHECK(b[m]->max_s == a[m]->max_s);
        CHECK_REL(b[m]->mean_s, a[m]->mean_s, 1e-12);
        for (int k = 0; k < SERVE_QUANTILES; k++) {
            CHECK(b[m]->q_s[k] >= a[m]->q_s[k]);
            CHECK(b[m]->q_s[k] <= a[m]->q_s[k] * (1 + ldexp(1, -10)) + ldexp(1, -24));
        }
    }
    CHECK_REL(h.little_w, ex.little_w, 1e-12);
}

typedef struct size_log {
    unsigned n, replicas[64];
    int met[64];
} size_log;

static int log_step(void *ctx, const serve_size_step *st)
{
    size_log *l = ctx;
    if (l->n < 64) {
        l->replicas[l->n] = st->replicas;
        l->met[l->n++] = st->met;
    }
    return 0;
}

static int meets(const serve_config *c, unsigned replicas)
{
    serve_config x = *c;
    x.replicas = replicas;
    serve_result r;
    sim_error err;
    CHECK_INT_EQ(serve_simulate(&x, &r, &err), 0);
    return r.ttft.q_s[2] <= c->slo_ttft_s && r.tpot.q_s[2] <= c->slo_tpot_s;
}

/* the GPUs-needed search: the answer meets the SLO and one replica fewer
 * does not (both re-simulated here); from above (halving) and from below
 * (doubling) the same answer; no SLO or a closed loop is refused */
static void test_size(void)
{
    serve_config c = base();
    c.router = serve_router_find("least-loaded");
    c.arrival = SERVE_POISSON;
    c.rate_per_s = 40;
    c.max_requests = 0;
    c.duration_s = 60;
    c.prompt = (serve_length){SERVE_LEN_LOGNORMAL, 800, 0.8, 4000};
    c.output = (serve_length){SERVE_LEN_LOGNORMAL, 150, 0.6, 1000};
    c.slo_ttft_s = 0.25;
    c.slo_tpot_s = 0.03;
    unsigned up = 0, down = 0;
    serve_result r;
    sim_error err;
    size_log lu = {0}, ld = {0};
    c.replicas = 1;
    CHECK_INT_EQ(serve_size(&c, 1000, log_step, &lu, &up, &r, &err), 0);
    c.replicas = 64;
    CHECK_INT_EQ(serve_size(&c, 1000, log_step, &ld, &down, &r, &err), 0);
    printf("size: %u replicas from 1 (%u steps), %u from 64 (%u steps); at the answer P99 "
           "TTFT %.4g s, TPOT %.4g s\n", up, lu.n, down, ld.n, r.ttft.q_s[2], r.tpot.q_s[2]);
    CHECK_INT_EQ(up, down);
    CHECK(up > 1);
    CHECK_INT_EQ(r.finished > 0, 1);
    CHECK_INT_EQ(meets(&c, up), 1);
    CHECK_INT_EQ(meets(&c, up - 1), 0);
    CHECK(r.ttft.q_s[2] <= c.slo_ttft_s && r.tpot.q_s[2] <= c.slo_tpot_s);
    /* every step logged, the answer among the met ones and answer - 1 among the others */
    int saw_answer = 0, saw_below = 0;
    for (unsigned i = 0; i < ld.n; i++) {
        saw_answer |= ld.replicas[i] == up && ld.met[i];
        saw_below |= ld.replicas[i] == up - 1 && !ld.met[i];
    }
    CHECK(saw_answer && saw_below);
    CHECK(ld.n <= 2 * 7 + 1); /* O(log n): halvings, then a bisection */
    c.slo_ttft_s = c.slo_tpot_s = 0;
    CHECK(serve_size(&c, 1000, NULL, NULL, &up, &r, &err) == SIM_ERR_INPUT);
    c.slo_ttft_s = 1;
    c.arrival = SERVE_CLOSED;
    c.clients = 1;
    c.max_requests = 1;
    CHECK(serve_size(&c, 1000, NULL, NULL, &up, &r, &err) == SIM_ERR_INPUT);
}

/* diurnal arrivals by thinning: over [0, D] the mean count is
 * rate (D + a P / (2 pi) sin(2 pi (D - peak) / P) + a P / (2 pi) sin(2 pi peak / P));
 * from the peak over a quarter period, rate (P/4 + a P / (2 pi)), from the
 * trough rate (P/4 - a P / (2 pi)); within 5 standard deviations (Poisson:
 * sqrt of the mean). Amplitude 0 is the plain Poisson stream, bit for bit. */
static void test_diurnal(void)
{
    serve_config c = base();
    c.replicas = 4;
    c.arrival = SERVE_POISSON;
    c.rate_per_s = 5000;
    c.max_requests = 0;
    c.prompt.a = 1;
    c.output.a = 1;
    double P = 40, a = 0.8;
    c.duration_s = P / 4;
    serve_result plain, r;
    sim_error err;
    CHECK_INT_EQ(serve_simulate(&c, &plain, &err), 0);
    c.diurnal_period_s = P;
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0); /* amplitude 0: off */
    CHECK(memcmp(&plain, &r, sizeof r) == 0);
    c.diurnal_amplitude = a;
    c.diurnal_peak_s = 0;
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    double at_peak = c.rate_per_s * (P / 4 + a * P / (2 * M_PI));
    printf("diurnal: %llu arrivals from the peak (mean %.0f), ", (unsigned long long)r.arrived,
           at_peak);
    CHECK(fabs(r.arrived - at_peak) < 5 * sqrt(at_peak));
    CHECK_INT_EQ(r.finished, r.arrived);
    c.diurnal_peak_s = P / 2;
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    double at_trough = c.rate_per_s * (P / 4 - a * P / (2 * M_PI));
    printf("%llu from the trough (mean %.0f)\n", (unsigned long long)r.arrived, at_trough);
    CHECK(fabs(r.arrived - at_trough) < 5 * sqrt(at_trough));
    /* refused: beyond 1, or on a Gamma stream */
    c.diurnal_amplitude = 1.5;
    CHECK(serve_config_check(&c, &err) != 0);
    c.diurnal_amplitude = 0.5;
    c.arrival = SERVE_GAMMA;
    c.cv = 2;
    CHECK(serve_config_check(&c, &err) != 0);
}

/* a trace: each request arrives when its row says, with its lengths;
 * widely spaced rows on one replica are served alone (the single-request
 * closed form each), rows at the same instant share the first batch */
static void test_trace(void)
{
    serve_config c = base();
    serve_trace_row rows[] = {{0, 512, 8}, {10, 256, 4}, {20, 512, 8}};
    c.arrival = SERVE_TRACE;
    c.trace = rows;
    c.n_trace = 3;
    c.max_requests = 0;
    serve_result r;
    sim_error err;
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    double ttft_a, e2e_a = alone_s(&c, 512, 8, &ttft_a);
    double ttft_b, e2e_b = alone_s(&c, 256, 4, &ttft_b);
    CHECK_INT_EQ(r.arrived, 3);
    CHECK_INT_EQ(r.finished, 3);
    CHECK_INT_EQ(r.output_tokens, 20);
    CHECK_INT_EQ(r.prompt_tokens, 1280);
    CHECK(r.arrivals_end_s == 20);
    CHECK_REL(r.end_s, 20 + e2e_a, 1e-12);
    CHECK_REL(r.e2e.max_s, e2e_a, 1e-12);
    CHECK_REL(r.e2e.q_s[0], e2e_a, 1e-12); /* nearest rank of {b, a, a}: a */
    CHECK_REL(r.ttft.q_s[0], ttft_a, 1e-12);
    CHECK_REL(r.e2e.mean_s, (2 * e2e_a + e2e_b) / 3, 1e-12);
    CHECK_REL(r.ttft.mean_s, (2 * ttft_a + ttft_b) / 3, 1e-12);
    CHECK(r.queue.max_s == 0);
    /* two at once: one batch holds both prompts */
    serve_trace_row together[] = {{1, 512, 8}, {1, 512, 8}};
    c.trace = together;
    c.n_trace = 2;
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    CHECK_INT_EQ(r.iterations, 8);
    CHECK(r.arrivals_end_s == 1);
    /* out of order: refused */
    serve_trace_row back[] = {{2, 512, 8}, {1, 512, 8}};
    c.trace = back;
    CHECK(serve_config_check(&c, &err) != 0);
    c.n_trace = 0;
    CHECK(serve_config_check(&c, &err) != 0);
}

int main(void)
{
    test_single_request();
    test_md1();
    test_batched_stream();
    test_preemption();
    test_refusals();
    test_histogram_quantiles();
    test_size();
    test_diurnal();
    test_trace();
    return check_report();
}
