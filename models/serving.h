/* serving.h - LLM inference serving, request by request, on the event engine.
 *
 * A fleet of identical replicas (one model on tp GPUs each) serves a stream
 * of requests. Each request has a prompt of p tokens and asks for o output
 * tokens. A router sends every arrival to one replica; each replica runs
 * iterations back to back while it has work, vLLM-style continuous batching
 * with chunked prefill (Sarathi-Serve, Agrawal et al. OSDI'24):
 *   1. every running request that has finished its prompt decodes one token;
 *   2. requests part-way through their prompt continue it, then waiting
 *      requests are admitted in arrival order, each taking a prompt chunk of
 *      what is left of the iteration's token budget (max_batch_tokens),
 *      while fewer than max_sequences run;
 *   3. KV memory is paged (kv_block_tokens per block, vLLM's PagedAttention):
 *      a token computed needs its slot; when a decode finds no free block the
 *      newest running request is preempted and recomputed (its blocks freed,
 *      back to the head of the queue with prompt + output so far as its new
 *      prompt), vLLM's default policy; or, with preemption = swap, its
 *      blocks are copied to the replica's host pool and back before it runs
 *      again (serving_swap.c).
 * The iteration that finishes a prompt yields the first output token (TTFT
 * ends there); every later iteration yields one more (TPOT = (E2E - TTFT) /
 * (o - 1)). A request whose prompt + output cannot fit in one replica's KV
 * memory is dropped at arrival (counted).
 *
 * Iteration time comes from the step tier's compute model (compute.h) for
 * the batch: per layer the QKV, output, FFN GEMMs on all T tokens of the
 * batch, prefill attention per chunk (causal, over the chunk and the context
 * before it), decode attention as a memory-bound read of the KV cache, the
 * norms, and with tp > 1 two all-reduces of T h bytes on the scale-up link
 * (collective.h ring); then the output layer on the sequences that emit a
 * token. Layers are identical, so one is timed and multiplied.
 *
 * Arrivals: Poisson (optionally with a diurnal rate, by thinning), Gamma
 * renewal (burstiness by the coefficient of variation; cv 1 is Poisson),
 * a trace (each request's arrival and lengths given), or closed loop (a fixed number of clients,
 * each sending its next request when the previous finishes: a fixed batch,
 * as the throughput benchmarks run). Lengths: fixed, uniform, lognormal.
 * Arrivals stop at duration_s (closed loop: once max_requests have been
 * sent); then the fleet drains, so every request is accounted for:
 * arrived = finished + dropped (+ in flight, 0 after the drain).
 *
 * Random streams: GSL mt19937, one for arrival times and one for lengths,
 * both seeded from the scenario seed; the simulation is sequential, so a
 * run is identical for any thread count.
 */
#ifndef DCSIM_MODELS_SERVING_H
#define DCSIM_MODELS_SERVING_H

#include <stddef.h>
#include <stdint.h>

#include "compute.h"
#include "error.h"
#include "model.h"

struct fabric_config; /* fabric.h */

enum serve_arrival { SERVE_POISSON = 0, SERVE_GAMMA, SERVE_CLOSED, SERVE_TRACE,
                     SERVE_ARRIVAL_COUNT };
enum serve_kv_contention { SERVE_KV_SHARED = 0, SERVE_KV_QUEUED, SERVE_KV_CONTENTION_COUNT };
/* remote KV fetch (serving_fetch.c): off, or fetch from another replica's cache */
enum serve_kv_remote { SERVE_KV_REMOTE_OFF = 0, SERVE_KV_REMOTE_FETCH, SERVE_KV_REMOTE_COUNT };
/* what a preemption does with the preempted request's KV blocks
 * (serving_swap.c): free them and recompute later, or copy them to the
 * replica's host-memory pool and back */
enum serve_preemption { SERVE_PREEMPT_RECOMPUTE = 0, SERVE_PREEMPT_SWAP,
                        SERVE_PREEMPT_COUNT };
enum serve_turns_dist { SERVE_TURNS_FIXED = 0, SERVE_TURNS_GEOMETRIC, SERVE_TURNS_COUNT };
enum serve_think_dist { SERVE_THINK_FIXED = 0, SERVE_THINK_EXPONENTIAL, SERVE_THINK_COUNT };
/* a follow-up turn over the model's context window (serving_session.c) */
enum serve_truncate { SERVE_TRUNC_REFUSE = 0, SERVE_TRUNC_OLDEST, SERVE_TRUNC_COUNT };
enum serve_length_dist { SERVE_LEN_FIXED = 0, SERVE_LEN_UNIFORM, SERVE_LEN_LOGNORMAL,
                         SERVE_LEN_COUNT };

/* A token-count distribution: fixed (a), uniform on [a, b], or lognormal
 * with median a and shape sigma b; every draw rounded to a whole token and
 * clamped to [1, max] (max 0: no cap beyond the model's context). */
typedef struct serve_length {
    int dist;      /* enum serve_length_dist */
    double a, b;
    double max;
} serve_length;

/* One request of a trace: when it arrives and its lengths. */
typedef struct serve_trace_row {
    double arrival_s;
    uint32_t prompt, output;
} serve_trace_row;

/* A router: picks the replica for a new request (serving_router.c holds the
 * table: one line per policy). */
typedef struct serve_router serve_router;
const serve_router *serve_router_find(const char *name);
const char *serve_router_name(const serve_router *r);
/* "round-robin, least-loaded, most-free-kv, prefix-affinity": the names, for messages */
const char *serve_router_names(void);

struct serve_request_info;

#define SERVE_PREFIX_LEVELS 4 /* prefix tree depth: system prompt, document, ... */

typedef struct serve_config {
    /* the replica */
    model_arch arch;
    compute_device dev;           /* the GPU at the math precision */
    int math_precision;           /* enum precision of the GEMMs and attention */
    int weight_precision;         /* enum precision of the weights (bytes read per decode) */
    int kv_precision;             /* enum precision of the KV cache */
    int act_precision;            /* enum precision of activations and TP messages */
    unsigned tp;                  /* GPUs per replica (tensor parallel) */
    double gpu_bytes;             /* one GPU's memory */
    double reserved_bytes;        /* per GPU: runtime, activations, CUDA graphs */
    double kv_fraction;           /* (0, 1]: fraction of the memory left after weights and
                                     reserved that holds KV blocks */
    double scaleup_bytes_per_s;   /* per GPU and direction, effective; tp > 1 needs it */
    double scaleup_step_s;        /* latency per ring step of a TP all-reduce */
    double iteration_overhead_s;  /* per iteration: scheduler and launch time outside the
                                     kernels (>= 0) */
    unsigned kv_block_tokens;     /* tokens per KV block (>= 1) */
    unsigned max_batch_tokens;    /* token budget of one iteration (>= 1) */
    unsigned max_sequences;       /* running requests per replica (>= 1) */
    unsigned replicas;            /* >= 1 */
    const serve_router *router;
    /* the traffic */
    int arrival;                  /* enum serve_arrival */
    double rate_per_s;            /* Poisson and Gamma: mean arrivals per second */
    double cv;                    /* Gamma: coefficient of variation of the gaps (> 0) */
    unsigned clients;             /* closed loop: concurrent clients */
    double duration_s;            /* arrivals stop then (open loop) */
    /* Poisson only: a diurnal rate, rate_per_s x (1 + a cos(2 pi (t - peak) / period)),
     * a in [0, 1] (0: constant); drawn by thinning (Lewis and Shedler 1979):
     * candidates at rate (1 + a) x rate_per_s, each kept with probability
     * (1 + a cos(...)) / (1 + a), one more uniform from the arrival stream */
    double diurnal_amplitude;
    double diurnal_period_s, diurnal_peak_s;
    uint64_t max_requests;        /* stop arriving after this many (0: no cap; closed loop
                                     needs one) */
    const serve_trace_row *trace; /* SERVE_TRACE: the requests, in time order (the caller's;
                                     they replace the rate, duration and lengths) */
    uint64_t n_trace;
    serve_length prompt, output;
    /* the service-level objective (0: none) */
    double slo_ttft_s, slo_tpot_s;
    uint64_t seed;
    /* quantiles: exact (every finished request's latencies kept, sorted at
     * the end) when serve_expected_requests() is at most this; otherwise
     * log-spaced histograms (a quantile reported at most 2^-10 = 0.098 %
     * above the exact one, never below; mean and max exact). 0: the
     * default, SERVE_EXACT_MAX_DEFAULT. */
    uint64_t exact_max_requests;
    /* prefix caching (serving_prefix.c; prefix_prompts 0: none). A share of
     * the requests (prefix_share, [0, 1]) carries one of prefix_prompts
     * shared prefixes (system prompts) of prefix_tokens tokens, prepended to
     * the drawn prompt; prompt k is drawn with probability proportional to
     * (k + 1)^-prefix_zipf (0: uniform). A replica keeps the full KV blocks
     * of the prefixes it has computed (floor(prefix_tokens / kv_block_tokens)
     * blocks each, counted in its KV use), evicting the least recently used
     * unpinned one when a request needs the blocks; a request admitted while
     * its prefix is cached skips those tokens' prefill. Draws come from a
     * third stream (seed x 2 + 3): the other two streams are unchanged. */
    unsigned prefix_prompts;
    double prefix_tokens, prefix_share, prefix_zipf;
    /* Partial-prefix (radix) sharing: levels nested under the one above
     * (prefix_inner[0] is level 2, and so on; prefix_levels counts the
     * levels in use, 0 or 1 meaning the one level above alone). Each node of
     * level l has its own prefix_inner[l-2].prompts children; a request with
     * a level-l prefix carries a level-(l+1) one with probability share,
     * child k with probability proportional to (k + 1)^-zipf, its tokens
     * prepended after its parent's. A replica caches whole blocks per tree
     * node: node l holds floor(T_l / block) - floor(T_(l-1) / block) blocks,
     * T_l the tokens of levels 1..l (serving_prefix.c). */
    unsigned prefix_levels;
    struct serve_prefix_level {
        unsigned prompts;
        double tokens, share, zipf;
    } prefix_inner[SERVE_PREFIX_LEVELS - 1];
    /* the prefix-affinity router's load guard: a request goes to the
     * replica with its longest cached prefix unless that replica has more
     * than router_margin unfinished requests above the least-loaded one's
     * (the scenario's default: SERVE_ROUTER_MARGIN_DEFAULT) */
    unsigned router_margin;
    /* disaggregated prefill and decode (serving.c; prefill_replicas 0: every
     * replica does both). With it, replicas and tp are the decode pool's and
     * the prefill pool has prefill_replicas of prefill_tp GPUs each, placed
     * first on the cluster's GPUs (the decode pool after them, node_gpus
     * GPUs a node). A request is prefilled on a prefill replica, its KV
     * (prompt x kv bytes per token) sent to a decode replica over
     * min(prefill_tp, tp) GPU-to-GPU paths in parallel: latency + bytes /
     * (paths x rate), rate effective (x the link's efficiency); the scale-up
     * link inside a node, the inter-node link otherwise. kv_contention
     * SERVE_KV_SHARED (0, the default): the transfers in flight share each
     * prefill replica's outgoing and each decode replica's incoming links
     * (tp x rate per link kind) max-min fairly, each at most its own paths x
     * rate (serving_kvflow.c); SERVE_KV_QUEUED: a prefill replica sends one
     * transfer at a time, in order, the decode side unlimited. */
    unsigned prefill_replicas, prefill_tp, node_gpus;
    int kv_contention;            /* enum serve_kv_contention */
    double kv_intra_bytes_per_s, kv_intra_latency_s; /* per path, effective */
    double kv_inter_bytes_per_s, kv_inter_latency_s; /* 0: no inter-node link (refused when
                                                        a transfer would need it) */
    /* remote KV fetch (serving_fetch.c). SERVE_KV_REMOTE_OFF (0, the
     * default): a cached prefix chain or session context serves only the
     * replica holding it. SERVE_KV_REMOTE_FETCH: a request routed to a
     * replica r whose cache holds fewer of its blocks than another replica
     * j of its pool (the one holding the most) fetches the difference from
     * j, when that costs less than recomputing it: latency + bytes / (tp x
     * rate) (alone, over j's and r's links as a KV transfer: the scale-up
     * link inside a node, else the inter-node one; node_gpus and the
     * kv_intra / kv_inter rates above) against the prefill of those tokens
     * as one chunk on an idle replica (serve_iteration_s). The fetch shares
     * the replicas' links with the other KV transfers in flight max-min
     * fairly (serving_kvflow.c); the request joins r's queue when it
     * arrives and starts with the fetched blocks computed. */
    int kv_remote;                /* enum serve_kv_remote */
    /* the fabric the KV transfers cross (serving_kvfabric.c), or NULL: the
     * replicas' links alone (serving_kvflow.c). Not copied: it must outlive
     * the run. With it the pools' transfers (shared contention only) and
     * the fetches move over its routes as flows sharing every link max-min
     * fairly; the fabric is built for the fleet's GPUs (GPU g its host g),
     * its gpus_per_node must be node_gpus. Unused when nothing is sent. */
    const struct fabric_config *fabric;
    /* preemption (serving_swap.c): SERVE_PREEMPT_RECOMPUTE (0, the default)
     * frees the preempted request's blocks and recomputes its prompt and
     * output so far; SERVE_PREEMPT_SWAP copies its blocks to its replica's
     * host pool (host_bytes_per_gpu on each of its tp GPUs: floor(that /
     * one block's bytes per GPU) blocks) over each GPU's host link
     * (host_link_bytes_per_s per GPU and direction), and back before it runs
     * again; a request the pool cannot hold is recomputed (a fallback). The
     * copies are serial with the iteration's kernels (vLLM's swap_blocks on
     * the compute stream before the forward pass). */
    int preemption;               /* enum serve_preemption */
    double host_bytes_per_gpu;    /* swap: host memory for swapped blocks, per GPU */
    double host_link_bytes_per_s; /* swap: GPU-host copy rate per GPU and direction */
    /* multi-turn sessions (serving_session.c; none when every session has
     * one turn: session_turns <= 1). An arrival starts a session of n turns
     * (fixed: session_turns; geometric: mean session_turns, P(n) = (1 -
     * 1/m)^(n-1) / m, capped at session_max_turns when > 0); turn k + 1
     * arrives a think time (fixed, or exponential with mean think_s) after
     * turn k finishes, its prompt turn k's prompt and output followed by a
     * new message drawn from `prompt`, its output from `output`; it carries
     * turn 1's prefix chain. With session_cache the whole KV blocks of a
     * finished turn's context stay cached on its replica (an entry of the
     * prefix cache under the turn's prefix chain, evictable), so the next
     * turn admitted there prefills only what they do not hold. Draws come
     * from a fourth stream (seed x 2 + 4): the others are unchanged. Open
     * loop only (Poisson, Gamma); max_requests then caps the sessions. */
    int session_turns_dist;       /* enum serve_turns_dist */
    double session_turns;         /* fixed: the turns; geometric: their mean (1 to 1000) */
    double session_max_turns;     /* geometric: the cap (0: none) */
    int think_dist;               /* enum serve_think_dist */
    double think_s;               /* think time: fixed, or the exponential's mean */
    int session_cache;            /* 1: a finished turn's context stays cached */
    /* the context window: a follow-up whose prompt and output exceed the
     * model's arch.seq_len tokens is refused at arrival (SERVE_TRUNC_REFUSE,
     * the default: dropped, its session ends) or truncated
     * (SERVE_TRUNC_OLDEST: its prefix chain kept, the oldest tokens of the
     * conversation after it dropped until prompt + output = seq_len; the
     * cached context is then no prefix of the prompt, so the turn cannot
     * reuse it; refused when the prefix chain, the new message and the
     * output alone exceed the window). Every model has a seq_len
     * (model_arch_check refuses one without). */
    int session_truncate;         /* enum serve_truncate */
    /* the window in tokens (0: the model's arch.seq_len, its training
     * sequence length; shared/reference gives no served context length for
     * a catalog model, so a served window other than it is the scenario's):
     * serve_session_window */
    double session_window;
    /* outputs: time series in bins of series_bin_s (0: none; serve_result
     * .series), and every finished or dropped request passed to on_request
     * (NULL: none; non-zero stops the run as out of memory) */
    double series_bin_s;
    int (*on_request)(void *ctx, const struct serve_request_info *info);
    void *request_ctx;
    /* progress: called every few thousand events with the simulated time and
     * the requests finished; non-zero stops the run (SIM_ERR_INTERRUPTED).
     * NULL: none. Not part of the result. */
    int (*poll)(void *ctx, double sim_time_s, uint64_t finished);
    void *poll_ctx;
} serve_config;

#define SERVE_ROUTER_MARGIN_DEFAULT 32u /* requests (A): docs/serving.md "Routers" */
#define SERVE_EXACT_MAX_DEFAULT 4000000ull /* requests: 32 B each for the exact quantiles */
#define SERVE_QUANTILES 3 /* P50, P90, P99 */
extern const double serve_quantile_p[SERVE_QUANTILES];

/* One request at its end (finished or dropped), for on_request. */
typedef struct serve_request_info {
    uint64_t seq;                  /* arrival order, 0, 1, ... */
    double arrival_s, first_token_s, end_s; /* NaN where none (dropped) */
    uint32_t prompt, output;       /* tokens: the prompt with its prefix, if any */
    uint32_t replica;              /* the (decode) replica; UINT32_MAX when dropped */
    uint32_t prefill_replica;      /* disaggregated: the prefill replica; else = replica */
    int prefix_hit;                /* its prefix was cached at its first admission */
    int prefix_levels_hit;         /* levels of its prefix chain cached then (0 if none) */
    int dropped;
    /* sessions (serve_has_sessions; else 0): its session's number (0, 1, ...
     * in start order), its turn (1, 2, ...), the prompt tokens of the
     * previous turns it carries (after truncation), the context tokens
     * truncated away, the prompt tokens not prefilled at its first
     * admission (cached context or prefix chain), whether it found its
     * session's context cached then, and whether it was refused at arrival
     * for the context window (dropped too) */
    uint64_t session;
    uint32_t turn, context_tokens, truncated_tokens, hit_tokens;
    int context_hit, refused;
} serve_request_info;

/* One bin of the time series: counts of events in [k b, (k+1) b) and the
 * time averages over it (the last bin over the part before the end). */
typedef struct serve_bin {
    double t_s;                    /* the bin's start */
    uint64_t arrivals, finished, dropped, preemptions;
    uint64_t swaps_out, swaps_in;  /* swap preemption: requests copied out, back in */
    double running, queued, transferring; /* time-average requests */
    double kv_util;                /* time-average used / total KV blocks, fleet */
} serve_bin;

typedef struct serve_latency {
    double mean_s, max_s;
    double q_s[SERVE_QUANTILES];
} serve_latency;

typedef struct serve_result {
    uint64_t arrived, finished, dropped, in_flight;
    uint64_t preemptions, iterations;
    uint64_t prompt_tokens, output_tokens; /* of the finished requests */
    double end_s;                  /* the last request's end */
    double arrivals_end_s;         /* the last arrival */
    serve_latency ttft, tpot, e2e, queue; /* queue: arrival to first iteration */
    uint64_t tpot_count;           /* finished requests with o >= 2 (TPOT defined) */
    double output_tokens_per_s;    /* over [0, end_s] */
    double output_tokens_per_s_per_gpu;
    double requests_per_s;         /* finished / end_s */
    double slo_met_fraction;       /* of finished requests (1 when no SLO) */
    double goodput_requests_per_s; /* finished within the SLO / end_s */
    /* Little's law over [0, end_s]: L = time-average requests in the system,
     * lambda = arrived (not dropped) / end_s, W = mean E2E of finished */
    double little_l, little_lambda, little_w;
    double kv_util_mean, kv_util_max; /* used blocks / blocks, time-average and peak, fleet */
    double busy_fraction;          /* replica time spent in iterations */
    double mean_batch_tokens;      /* tokens per iteration */
    double kv_blocks_per_replica;
    double weights_bytes_per_gpu, kv_bytes_per_token; /* per replica, all its GPUs */
    /* prefix caching: requests with a prefix, those that found it cached at
     * their first admission, prompt tokens not prefilled (every admission),
     * and the mean TTFT of finished hits and of the other finished requests */
    uint64_t prefix_requests, prefix_hits;
    double prefix_hit_rate, prefill_tokens_saved;
    /* by level (0: level 1, the two figures above): requests carrying the
     * level's prefix and those that found it cached at their first admission
     * (its chain up to it cached); prompt tokens of the admissions and the
     * prefill tokens computed (saved + computed = admitted when no request
     * is preempted part-way through its prompt) */
    uint64_t prefix_level_requests[SERVE_PREFIX_LEVELS], prefix_level_hits[SERVE_PREFIX_LEVELS];
    double prompt_tokens_admitted, prefill_tokens_computed;
    double ttft_hit_mean_s, ttft_miss_mean_s;
    uint64_t ttft_hit_count, ttft_miss_count;
    /* disaggregation: KV transfers (count, bytes, time from the end of the
     * prefill to the arrival, queueing behind the sender included: mean,
     * P50 and P99 by nearest rank, max) and each pool's busy fraction.
     * Each transfer's time = latency + bytes / cap (alone on the replicas'
     * links) + route (alone on its fabric route, narrower than the
     * replicas' links: 0 without a fabric) + shared (slowed by the other
     * transfers sharing its links, or queued behind its sender's): the
     * sums over the transfers of the last two, and the most transfers in
     * flight at once (end of prefill to arrival) */
    uint64_t transfers;
    double transfer_bytes, transfer_mean_s, transfer_p50_s, transfer_p99_s, transfer_max_s;
    double transfer_route_s, transfer_shared_s;
    uint64_t transfers_in_flight_max;
    double prefill_busy_fraction, decode_busy_fraction;
    double prefill_kv_blocks_per_replica;
    /* swap preemption: requests swapped out and in, preemptions the host
     * pool could not hold (recomputed instead), bytes copied each way (all
     * the replica's GPUs), replica-seconds of copying (in the iterations'
     * times), the host pool per replica (blocks) and its peak use (fleet) */
    uint64_t swaps_out, swaps_in, swap_fallbacks;
    double swap_out_bytes, swap_in_bytes, swap_time_s;
    double host_blocks_per_replica, host_util_max;
    /* sessions (session_turns > 1): sessions started, follow-up turns
     * (turn 2 on) arrived and admitted, those that found their context (or
     * a part of it) cached at their first admission, the context tokens of
     * the admitted follow-ups (the previous turns' prompts and outputs) and
     * the prompt tokens they did not prefill then (cached context or prefix
     * chain) */
    uint64_t sessions, followups, followups_admitted, followup_hits;
    double followup_context_tokens, followup_hit_tokens;
    /* and: sessions whose every turn finished and those a dropped (or
     * refused) turn ended (sessions = the two after the drain), turns per
     * session (arrived / sessions), followup_hit_tokens /
     * followup_context_tokens (0 without context), follow-ups truncated to
     * the context window (the tokens cut) or refused for it, and the TTFT of
     * the finished first turns and follow-ups (as ttft) */
    uint64_t sessions_finished, sessions_cut, turns_truncated, turns_refused;
    double turns_mean, hit_tokens_share, truncated_tokens;
    serve_latency ttft_first, ttft_followup;
    /* remote KV fetch (kv_remote): requests that fetched cached KV from
     * another replica, the blocks' tokens and bytes moved, the time from
     * arrival to the KV's arrival (mean, max), and the requests for which
     * another replica held more of their context but recomputing it was
     * estimated cheaper (no fetch) */
    uint64_t fetches, fetches_declined;
    double fetch_tokens, fetch_bytes, fetch_mean_s, fetch_max_s;
    /* series_bin_s > 0: n_series bins (serve_result_free releases them) */
    serve_bin *series;
    uint64_t n_series;
    int quantiles_exact;           /* 1: nearest rank on every value; 0: from histograms */
    double quantile_rel_error;     /* 0 when exact; else the bound (reported >= exact) */
} serve_result;

/* What one iteration holds: prefill chunks (tokens and the context already
 * in the KV cache before each) and decodes (their KV length, the new token
 * included). */
typedef struct serve_batch {
    unsigned n_prefill;
    const double *chunk_tokens, *chunk_context;
    unsigned n_decode;
    double decode_kv_tokens;       /* sum over the decodes */
    unsigned n_emit;               /* sequences that emit a token (output layer rows) */
} serve_batch;

/* Check a configuration: 0, or SIM_ERR_INPUT with a one-line reason. */
int serve_config_check(const serve_config *c, sim_error *err);

/* Weights per GPU and KV bytes per token per replica (all layers, K and V,
 * the replica's tp GPUs together) and the KV blocks one replica holds;
 * -1 with err when the weights and reserved memory leave nothing for KV. */
int serve_memory(const serve_config *c, double *weights_bytes_per_gpu, double *kv_bytes_per_token,
                 double *kv_blocks, sim_error *err);

/* Time of one iteration of batch b on one replica (seconds, > 0), or -1
 * when the compute model refuses an op. */
double serve_iteration_s(const serve_config *c, const serve_batch *b);

/* Simulate; per-request records are kept for exact quantiles up to
 * exact_max_requests, histograms beyond. Returns 0, or
 * an error code with err filled (bad configuration, out of memory). */
int serve_simulate(const serve_config *c, serve_result *out, sim_error *err);

/* Release what serve_simulate allocated in r (the series); r may be zeroed. */
void serve_result_free(serve_result *r);

/* GPUs of the configuration (both pools when disaggregated). */
double serve_gpus(const serve_config *c);

/* The configuration of c's prefill pool (disaggregated; else c itself):
 * its tp, replicas and memory. */
serve_config serve_prefill_config(const serve_config *c);

/* Memory the run's records take at most, for a caller's admission check:
 * the exact quantiles' records or the histograms, and a slot for every
 * expected request (the worst case, an overloaded fleet where all of them
 * wait at once; a fleet that keeps up holds only those in the system). */
double serve_records_bytes(const serve_config *c);
/* Requests the configuration will generate, at most (open loop: the mean
 * arrivals in duration_s plus ten standard deviations, capped by
 * max_requests). */
double serve_expected_requests(const serve_config *c);

/* The smallest replica count at c's tp, at most max_replicas, whose run
 * meets the SLO at c's traffic: P99 TTFT <= slo_ttft_s and P99 TPOT <=
 * slo_tpot_s (each when set; at least one must be). Starts from
 * c->replicas, doubles or halves to a bracket, bisects it
 * (serving_size.c; more replicas are assumed never to raise a P99, and the
 * answer n is always simulated together with n - 1, unless n is 1).
 * on_step (may be NULL) sees every simulation; non-zero stops the search
 * (SIM_ERR_INTERRUPTED). Fills *answer and *at_answer (the answer's run);
 * SIM_ERR_INPUT without an SLO, with closed-loop arrivals, or when
 * max_replicas do not meet it. */
typedef struct serve_size_step {
    unsigned replicas;             /* the decode pool's when disaggregated */
    unsigned prefill_replicas;     /* serve_size_pools; 0 otherwise */
    int met;
    const serve_result *result;
} serve_size_step;
typedef int (*serve_size_fn)(void *ctx, const serve_size_step *step);
int serve_size(const serve_config *c, unsigned max_replicas, serve_size_fn on_step, void *ctx,
               unsigned *answer, serve_result *at_answer, sim_error *err);

/* Disaggregated pools (c->prefill_replicas > 0), each pool's tp fixed: the
 * pair (prefill, decode replicas) with the fewest GPUs whose run meets the
 * SLO. Exhaustive by GPUs: every pair of g = p x prefill_tp + d x tp GPUs,
 * g from the smallest up, p ascending within a g; the first pair met is the
 * answer, so every pair with fewer GPUs was simulated and missed
 * ((p - 1, d) and (p, d - 1) among them; no monotonicity assumed). At most
 * max_runs simulations (SIM_ERR_INPUT past them). on_step as serve_size's
 * (prefill_replicas set). */
int serve_size_pools(const serve_config *c, unsigned max_runs, serve_size_fn on_step, void *ctx,
                     unsigned *prefill, unsigned *decode, serve_result *at_answer,
                     sim_error *err);

/* The run r of c meets c's SLO: P99 TTFT <= slo_ttft_s and P99 TPOT <=
 * slo_tpot_s, each when set (TPOT when some answer has two tokens). */
int serve_slo_met(const serve_config *c, const serve_result *r);

const char *serve_arrival_name(int a);
int serve_arrival_parse(const char *name, int *out);
const char *serve_length_dist_name(int d);
/* "shared", "queued" (enum serve_kv_contention) */
const char *serve_kv_contention_name(int k);
int serve_kv_contention_parse(const char *name, int *out);
/* "off", "fetch" (enum serve_kv_remote) */
const char *serve_kv_remote_name(int k);
int serve_kv_remote_parse(const char *name, int *out);
int serve_length_dist_parse(const char *name, int *out);
/* "recompute", "swap" (enum serve_preemption) */
const char *serve_preemption_name(int p);
int serve_preemption_parse(const char *name, int *out);
/* "fixed", "geometric" (enum serve_turns_dist); "fixed", "exponential"
 * (enum serve_think_dist) */
const char *serve_turns_dist_name(int d);
int serve_turns_dist_parse(const char *name, int *out);
const char *serve_think_dist_name(int d);
int serve_think_dist_parse(const char *name, int *out);
/* "refuse", "oldest" (enum serve_truncate) */
const char *serve_truncate_name(int t);
int serve_truncate_parse(const char *name, int *out);
/* the configuration has sessions of more than one turn */
int serve_has_sessions(const serve_config *c);
/* the mean turns per session */
double serve_mean_turns(const serve_config *c);
/* the sessions' context window in tokens: session_window, else arch.seq_len */
double serve_session_window(const serve_config *c);
/* swap: the host pool's blocks per replica (floor(host bytes per GPU / a
 * block's bytes per GPU)) and the copy time of one block (s); 0 for both
 * under recompute */
void serve_swap_geometry(const serve_config *c, double *host_blocks, double *block_copy_s);

#endif
