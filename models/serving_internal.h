/* serving_internal.h - the serving simulation's state, shared by
 * serving.c (the events), serving_sched.c (batch formation) and
 * serving_router.c (the router table). */
#ifndef DCSIM_MODELS_SERVING_INTERNAL_H
#define DCSIM_MODELS_SERVING_INTERNAL_H

#include <gsl/gsl_rng.h>

#include "engine.h"
#include "serving.h"

#define SERVE_NONE UINT32_MAX
#define SERVE_PREFETCH 8 /* run-list entries fetched ahead in the per-iteration loops */

enum serve_req_state { REQ_WAITING = 0, REQ_RUNNING, REQ_DONE, REQ_DROPPED, REQ_TRANSFER,
                       REQ_SWAPPED };

typedef struct serve_req {
    /* what every iteration reads and writes first (one cache line) */
    uint32_t prompt;       /* tokens to prefill now: the original prompt, or after a
                              preemption the prompt and the output so far */
    uint32_t prefilled;    /* tokens of prompt computed */
    uint32_t generated;    /* output tokens emitted */
    uint32_t output;       /* as drawn */
    uint32_t kv_tokens;    /* tokens whose K and V are cached */
    uint32_t blocks;       /* KV blocks held */
    uint32_t step_tokens;  /* this iteration: the chunk (prefill) or 1 (decode); 0 idle */
    uint32_t replica;
    uint8_t state, step_is_decode;
    uint8_t prefix_hit;    /* levels of its prefix chain cached at its first admission */
    uint8_t uses_cache;    /* levels d of its prefix chain it pins in the cache: its first
                              prefix_cum_u[d] blocks are the cache's (the other fields of
                              that are in serve_req_ext) */
    uint32_t orig_prompt;  /* as drawn (with the prefix, if any) */
    double arrival_s, first_sched_s, first_token_s, end_s;
    uint64_t seq;          /* arrival order (0, 1, ...): the slot (id) is reused once the
                              request has finished or been dropped */
} serve_req;

/* What only prefix caching and disaggregation read, beside serve_req (kept
 * out of it: the hot loops walk serve_req records). */
typedef struct serve_req_ext {
    uint32_t prefix_k[SERVE_PREFIX_LEVELS]; /* its prefix chain: the child drawn at each
                                               level (prefix_k[0]: the level-1 prefix) */
    uint32_t prefix_depth; /* levels it carries (0: no prefix) */
    uint32_t cache_entry;  /* the deepest cache entry it pins, or SERVE_NONE */
    uint32_t prefill_replica; /* where its prompt was computed */
    uint32_t session;      /* its session's record (serving_session.c), or SERVE_NONE */
    uint32_t session_blocks; /* uses_cache == SERVE_SESSION_LEVEL: the cached context's blocks
                                it uses (its session entry and the chain above it) */
    /* sessions, for the request records: its session's number and turn,
     * the context tokens it carries and those truncated, the tokens not
     * prefilled at its first admission, a context hit then, refused */
    uint64_t session_id;
    uint32_t turn, context, truncated, hit_tokens;
    uint8_t context_hit, refused;
    /* remote fetch (serving_fetch.c): the replica it fetches from and the
     * entry it pins there while the KV moves, the tokens of context it has
     * once the KV arrived (0: none; used at its first admission after) */
    uint32_t fetch_from, fetch_entry, fetch_tokens;
    double fetch_sent_s;
} serve_req_ext;

/* A session between its turns (serving_session.c). */
typedef struct serve_session {
    uint64_t key;          /* its number (0, 1, ...) */
    uint64_t cache_key;    /* its cache entries' path: key, or after a truncation a fresh
                              one (1 << 63 | n: the cached context is no prefix of the
                              truncated prompt) */
    uint32_t turn, turns;  /* turns sent so far, turns it has */
    uint32_t context;      /* tokens of its previous turns: the last one's prompt and output */
    uint32_t prefix_depth; /* turn 1's prefix chain, which every turn carries */
    uint32_t prefix_k[SERVE_PREFIX_LEVELS];
    uint32_t prefix_tokens; /* its tokens (kept at the head by a truncation) */
} serve_session;

/* the cache entry level of a session's context (below its prefix chain) */
#define SERVE_SESSION_LEVEL (SERVE_PREFIX_LEVELS + 1)

/* Iteration times by batch size (serving_iter.c): the parts of
 * serve_iteration_s that depend on the token count T or on the rows of
 * the output layer only, computed once each (NaN: not yet). */
typedef struct serve_iter_cache {
    double *dense_s;       /* [T]: one layer's GEMMs and norms */
    double *allreduce_s;   /* [T]: one layer's two TP all-reduces */
    double *embed_s;       /* [T] */
    double *output_s;      /* [rows] */
    uint32_t max_tokens, max_rows;
} serve_iter_cache;

/* A cached node of the prefix tree on one replica (serving_prefix.c). */
typedef struct serve_prefix_entry {
    uint64_t path;         /* the node within its level: k_1, then path x prompts_l + k_l */
    uint64_t last_used;    /* the replica's LRU clock at the last pin */
    uint32_t parent;       /* the entry of its parent level, or SERVE_NONE (level 1, or
                              the levels above hold no whole block) */
    uint32_t pins;         /* requests using or holding it: not evictable while > 0 */
    uint32_t children;     /* cached entries whose parent it is: evictable only at 0 */
    uint32_t level;        /* 1..SERVE_PREFIX_LEVELS, SERVE_SESSION_LEVEL (path: the
                              session's key); 0: a free slot */
    double own;            /* the blocks it holds itself (its parent's not counted) */
} serve_prefix_entry;

typedef struct serve_replica {
    uint32_t *wait;        /* FIFO ring of request ids */
    uint32_t wait_head, wait_n, wait_cap;
    uint32_t *run;         /* running ids, oldest admitted first */
    uint32_t run_n, run_cap;
    double blocks_total, blocks_used; /* used: requests' blocks and cached prefixes' */
    int busy;
    int is_prefill;        /* disaggregated: a prefill-pool replica */
    const serve_config *cfg; /* its pool's configuration (tp, memory, iteration time) */
    serve_iter_cache *iter;
    double busy_s;
    double link_free_s;    /* disaggregated prefill: when its outgoing KV link is free */
    /* prefix cache: entries (each prefix_blocks blocks, in blocks_used) */
    serve_prefix_entry *cache;
    uint32_t n_cache, cap_cache;
    double evictable;      /* blocks of unpinned entries */
    uint64_t lru_clock;
    /* swap preemption (serving_swap.c): swapped-out request ids, FIFO in
     * swap-out order; the host pool's blocks; blocks copied (either way)
     * while the next batch is formed, and whether it preempted */
    uint32_t *swapped;
    uint32_t swap_head, swap_n, swap_cap;
    double host_blocks_total, host_blocks_used;
    double block_copy_s;   /* one block's copy time, each way (its GPUs in parallel) */
    double block_bytes;    /* one block's bytes over its GPUs */
    double copy_blocks;
    int preempted_now;
} serve_replica;

/* The finished requests' latencies (serving_stats.c). Exact: one value
 * per arrival, by arrival order (NaN where none), sorted at the end. Else a
 * histogram per metric whose bins are the doubles sharing their top
 * SERVE_HIST_BITS mantissa bits (relative width 2^-SERVE_HIST_BITS), with
 * the exact count, sum (compensated) and max. */
#define SERVE_METRICS 4 /* ttft, tpot, e2e, queue */
#define SERVE_METRICS_SPLIT 6 /* with sessions: and the TTFT of first turns and follow-ups */
#define SERVE_HIST_BITS 10
typedef struct serve_stats {
    int exact;
    int n_metrics;         /* SERVE_METRICS, or SERVE_METRICS_SPLIT with sessions */
    double *v[SERVE_METRICS_SPLIT]; /* exact: by arrival order */
    uint64_t cap;
    uint64_t *bins[SERVE_METRICS_SPLIT];
    uint64_t n[SERVE_METRICS_SPLIT];
    double sum[SERVE_METRICS_SPLIT], comp[SERVE_METRICS_SPLIT], max[SERVE_METRICS_SPLIT];
    uint64_t met;          /* finished within the SLO */
} serve_stats;


typedef struct serve_kvnet serve_kvnet; /* serving_kvflow.c */
typedef struct serve_kvfab serve_kvfab; /* serving_kvfabric.c */

typedef struct serve_sim {
    const serve_config *c;
    sim_engine *eng;
    gsl_rng *arrival_rng, *length_rng;
    serve_req *req;
    uint64_t n_req, cap_req;  /* slots in use or free */
    uint32_t *free_ids;       /* slots of finished and dropped requests, for reuse */
    uint64_t n_free;
    serve_stats stats;
    serve_iter_cache iter;
    serve_replica *rep;
    uint32_t *outstanding;    /* per replica: requests routed there and not finished (dense:
                                 the least-loaded router scans it on every arrival) */
    uint32_t router_rotor;
    uint32_t n_rep;           /* replicas: the prefill pool's first, then the decode pool's */
    uint32_t pool_base, pool_n; /* the pool a router picks from (serve_route) */
    uint32_t rotor[2];        /* each pool's router rotor while the other routes */
    serve_config pre_c;       /* the prefill pool's configuration (disaggregated) */
    serve_iter_cache pre_iter;
    gsl_rng *prefix_rng;
    serve_req_ext *ext;       /* [cap_req], when has_ext (prefixes or pools; else NULL) */
    int has_ext;
    unsigned prefix_depth;    /* levels of the prefix tree (0: no prefixes) */
    struct serve_prefix_level prefix_lv[SERVE_PREFIX_LEVELS]; /* level 1 first */
    double *prefix_cdf[SERVE_PREFIX_LEVELS]; /* [prompts]: each level's popularity's
                                                 cumulative sum */
    double prefix_cum[SERVE_PREFIX_LEVELS + 1]; /* [d]: whole blocks of a chain of d levels
                                                   (floor(tokens / block); [0] = 0) */
    uint32_t prefix_cum_u[SERVE_PREFIX_LEVELS + 1]; /* the same as counts */
    double blocks_fleet_total;
    double pre_kv_bytes_per_token; /* the prefill pool's, all its GPUs (serve_memory) */
    double pre_busy_s;
    /* KV transfers: each one's time, for the mean and quantiles */
    double *xfer_s;
    uint64_t n_xfer, cap_xfer;
    double xfer_bytes;
    double ttft_hit_sum, ttft_miss_sum;
    /* fleet counts for the series (kept always: integers, no effect on results) */
    uint64_t n_running, n_queued, n_transferring;
    serve_bin *bins;
    uint64_t n_bins, cap_bins;
    double series_last_t;
    uint64_t sent;         /* requests generated so far */
    int failed;            /* out of memory inside an event: stop */
    int interrupted;       /* the poll asked to stop */
    /* scratch for one iteration's batch */
    double *chunk_tokens, *chunk_context;
    uint32_t *prefilling;     /* run-list positions of requests part-way through a prompt */
    uint32_t scratch_cap;
    /* time integrals, updated at every change */
    double last_t, in_system, area_in_system, blocks_used_fleet, area_blocks, peak_blocks;
    double busy_s, batch_tokens_sum;
    serve_result *out;
    serve_kvnet *net;         /* shared KV links (disaggregated, SERVE_KV_SHARED); else NULL
                                 (last: the hot fields above keep their cache lines) */
    serve_kvfab *fab;         /* with c->fabric and net: the transfers cross the fabric */
    double host_used_fleet, host_peak, host_fleet_total; /* swap: host blocks in use over the
                                                             fleet, its peak, the pools' sum */
    /* sessions (serving_session.c): on when c has them; caching: the cache
     * is looked up at admission (prefixes, or session contexts cached) */
    int sessions_on, caching;
    gsl_rng *session_rng;
    serve_session *sess;      /* records of sessions between or within turns */
    uint32_t n_sess, cap_sess, *free_sess, n_free_sess;
    uint32_t next_session;    /* new_request: the session whose turn arrives (SERVE_NONE: a
                                 new session, or none) */
    uint64_t truncations;     /* fresh cache keys handed out (serve_session.cache_key) */
    /* remote fetch (serving_fetch.c): on; the pool's KV bytes per token (all
     * a replica's GPUs); the fetch times' sum */
    int fetch_on;
    double fetch_kv_bytes_per_token, fetch_sum_s;
    /* KV transfers (serving_disagg.c): the sums over them of (alone on its
     * route - alone on the replicas' links) and (its time - alone on its
     * route); those in flight now and at most (last: the hot fields above
     * keep their cache lines) */
    double xfer_route_s, xfer_shared_s;
    uint64_t xfer_in_flight, xfer_in_flight_max;
} serve_sim;

struct serve_router {
    const char *name;
    const char *doc;
    /* the replica for request id (its lengths are set) */
    uint32_t (*pick)(serve_sim *s, uint32_t id);
};

/* serving_sched.c: form the replica's next batch (sets each member's
 * step_tokens) and return its iteration time; 0 when the replica has
 * nothing it can run; < 0 on a compute-model refusal or no memory. */
double serve_form_batch(serve_sim *s, uint32_t r);
/* room for one more id in the replica's waiting ring: 0, or -1 (no memory) */
int serve_wait_reserve(serve_replica *rp);
/* advance the time integrals to now */
void serve_account(serve_sim *s);
/* set request q's KV blocks (0 releases them all), keeping the replica's
 * and the fleet's counts and their time integrals */
void serve_set_blocks(serve_sim *s, serve_req *q, double blocks);

/* the replica a router picks for request id from pool 0 (prefill, or
 * the whole fleet) or 1 (decode); serving_router.c */
uint32_t serve_route(serve_sim *s, uint32_t id, int pool);

static inline serve_req_ext *serve_ext(serve_sim *s, const serve_req *q)
{
    return &s->ext[q - s->req];
}

/* serving_prefix.c, remote fetch: pin x's longest cached chain (its session
 * context, else its prefix chain) on rp, returning its deepest entry
 * (SERVE_NONE when none), and unpin it */
uint32_t serve_prefix_pin_cached(serve_sim *s, serve_replica *rp, const serve_req_ext *x);
void serve_prefix_unpin(serve_replica *rp, uint32_t entry);

/* KV blocks q uses from its replica's prefix cache */
static inline uint32_t serve_shared(const serve_sim *s, const serve_req *q)
{
    return q->uses_cache <= SERVE_PREFIX_LEVELS ? s->prefix_cum_u[q->uses_cache]
                                                : s->ext[q - s->req].session_blocks;
}

/* serving.c: start replica r's next iteration after the events due now */
void serve_start_later(serve_sim *s, uint32_t r);

/* serving_disagg.c: the checks of the prefix and pool settings (0 or
 * SIM_ERR_INPUT); send request id's KV from its prefill replica to a decode
 * replica (0, or -1 when out of memory); the transfers' summary */
int serve_extras_check(const serve_config *c, sim_error *err);
int serve_disagg_send(serve_sim *s, uint32_t id);
void serve_disagg_results(serve_sim *s, serve_result *o);
/* a transfer's time (end of prefill to arrival), the time it takes alone on
 * its route (the fabric's, else the replicas' links) and alone on the
 * replicas' links (latency + bytes / cap): 0 or -1 (no memory) */
int serve_disagg_record(serve_sim *s, double seconds, double alone_s, double links_s);
/* the event: request data's KV has reached its decode replica */
void serve_disagg_arrive(sim_engine *eng, void *ctx, uint64_t data);

/* serving_kvflow.c: the links the transfers share (SERVE_KV_SHARED). init:
 * 0, or -1 (no memory); send: request id's bytes from replica `from` to
 * `to` over their scale-up (inter 0) or inter-node links (1), at most cap
 * bytes/s, arriving latency_s after its last byte; 0 or -1 */
int serve_kvnet_init(serve_sim *s);
void serve_kvnet_free(serve_sim *s);
int serve_kvnet_send(serve_sim *s, uint32_t id, uint32_t from, uint32_t to, int inter,
                     double bytes, double cap, double latency_s, int fetch);

/* serving_kvfabric.c: the transfers over c->fabric's routes, when it is set
 * and s->net is (init: 0, or an error code with err filled: the fabric
 * refused for the fleet's GPUs, or no memory); send as serve_kvnet_send
 * (which calls it), 0 or -1 (no memory) */
int serve_kvfab_init(serve_sim *s, sim_error *err);
void serve_kvfab_free(serve_sim *s);
int serve_kvfab_send(serve_sim *s, uint32_t id, uint32_t from, uint32_t to, double bytes,
                     double cap, double latency_s, int fetch);

/* serving_fetch.c: remote fetch (kv_remote). check: 0 or SIM_ERR_INPUT;
 * start: request id, just routed to r and counted in the system, fetches
 * its context from another replica (1: it is in transfer), or not (0: the
 * caller queues it); -1 when out of memory. arrive: the event of its KV's
 * arrival (it joins r's queue). apply: at admission, q starts with the
 * fetched context computed (after its own replica's cached chain is
 * attached). results: the mean and max fetch time */
int serve_fetch_check(const serve_config *c, sim_error *err);
int serve_fetch_start(serve_sim *s, uint32_t id, uint32_t r);
void serve_fetch_arrive(sim_engine *eng, void *ctx, uint64_t data);
void serve_fetch_results(serve_sim *s, serve_result *o);
static inline void serve_fetch_apply(serve_sim *s, serve_req *q)
{
    uint32_t t = s->ext[q - s->req].fetch_tokens;
    if (t > q->prefilled)
        q->prefilled = q->kv_tokens = t;
}

/* serving_prefix.c: the prefix cache */
int serve_prefix_init(serve_sim *s);   /* 0, or -1 (no memory) */
void serve_prefix_free(serve_sim *s);
/* a new request's prefix chain (x's prefix_k and prefix_depth): the tokens it
 * adds to the prompt */
uint32_t serve_prefix_draw(serve_sim *s, serve_req_ext *x);
/* blocks of x's chain cached on rp (the longest cached chain) */
double serve_prefix_cached_blocks(const serve_sim *s, const serve_replica *rp,
                                  const serve_req_ext *x);
/* q is admitted with nothing computed: attach its cached prefix, if any
 * (sets prefilled, kv_tokens and shared); 0 or -1 (no memory) */
int serve_prefix_attach(serve_sim *s, serve_replica *rp, serve_req *q);
/* q has computed its prefix's blocks: cache them if its replica has not
 * (moves them from q to the cache); 0 or -1 (no memory) */
int serve_prefix_donate(serve_sim *s, serve_replica *rp, serve_req *q);
/* q leaves its replica (finished, preempted, sent on): unpin its entry */
void serve_prefix_release(serve_sim *s, serve_replica *rp, serve_req *q);
/* free blocks of rp counting what eviction could free */
double serve_free_blocks(const serve_replica *rp);
/* evict least recently used unpinned prefixes until rp has need free blocks
 * (or none is left to evict) */
void serve_prefix_evict(serve_sim *s, serve_replica *rp, double need);

/* serving_prefix.c, sessions: q (finished, its blocks still held) leaves
 * its context's whole blocks in rp's cache under key (its session entry:
 * extended when it has one there, else made under q's chain); 0 or -1 (no
 * memory) */
int serve_prefix_keep(serve_sim *s, serve_replica *rp, serve_req *q, uint64_t key);

/* serving_session.c: init (0, or -1: no memory), free; begin: request id
 * (lengths drawn, prefix chain drawn for a new session) starts a session or
 * is its next turn (s->next_session): sets its prompt and its ext's
 * session, 0 or -1; dropped: its session ends; finished: its session's next
 * turn is scheduled (or the session ends), 0 or -1; admitted: the
 * follow-up counts at q's first admission */
int serve_session_init(serve_sim *s);
int serve_session_check(const serve_config *c, sim_error *err); /* 0 or SIM_ERR_INPUT */
/* finished request id's session has another turn: its context is worth keeping */
int serve_session_keeps(const serve_sim *s, uint32_t id);
void serve_session_free(serve_sim *s);
/* begin: 0, 1 (refused: over the context window; the caller drops it), -1 */
int serve_session_begin(serve_sim *s, uint32_t id);
/* the session figures derived at the end (turns_mean, hit_tokens_share) */
void serve_session_results(serve_sim *s, serve_result *o);
/* the stats group of request id: -1 (no sessions), 0 (a first turn), 1 (a follow-up) */
int serve_session_group(const serve_sim *s, uint32_t id);
void serve_session_dropped(serve_sim *s, uint32_t id);
int serve_session_finished(serve_sim *s, uint32_t id);
void serve_session_admitted(serve_sim *s, const serve_req *q);
/* serving.c: a new request now (the session's turn when s->next_session is
 * set): 0, 1 (dropped) or -1 (no memory) */
int serve_new_request(serve_sim *s);
void serve_fail(serve_sim *s);

/* serving_swap.c: swap preemption. swap_out: q (just taken off rp's run
 * list, its blocks still held) goes to the host pool when it holds q's
 * blocks (1), else nothing is done (0: the caller recomputes it; the
 * fallback counted); -1 when out of memory. swap_in: the head of rp's
 * swapped queue back to the running ones while it fits (its blocks and its
 * next step's), scheduled in this batch (a decode, or a prompt chunk);
 * none after a preemption in this batch. 0, or -1 (no memory). copy_s: the
 * copies' time of this batch (0 under recompute). */
int serve_swap_out(serve_sim *s, serve_replica *rp, serve_req *q);
typedef struct serve_swap_step {
    double *budget, *kv_sum;
    long *decodes;
    unsigned *n_prefill, *n_emit;
} serve_swap_step;
int serve_swap_in(serve_sim *s, serve_replica *rp, serve_swap_step *st);
double serve_swap_copy_s(serve_sim *s, serve_replica *rp);
int serve_swap_init(serve_sim *s);  /* 0, or -1 (no memory) */
int serve_swap_check(const serve_config *c, sim_error *err); /* 0 or SIM_ERR_INPUT */
void serve_swap_free(serve_sim *s);
/* serving_sched.c, for serving_swap.c: q takes a prompt chunk in this batch */
double serve_chunk_for(const serve_sim *s, const serve_replica *rp, const serve_req *q,
                       double budget);
void serve_take_chunk(serve_sim *s, serve_req *q, double chunk, double *budget,
                      unsigned *n_prefill, unsigned *n_emit);

/* serving_series.c: the time series and request records (the inline
 * guards keep a run without them at one test per call) */
void serve_series_note_on(serve_sim *s);
int serve_series_count_on(serve_sim *s, int what);
int serve_report_request_on(serve_sim *s, const serve_req *q);
/* integrate the levels up to now */
static inline void serve_series_note(serve_sim *s)
{
    if (s->c->series_bin_s > 0)
        serve_series_note_on(s);
}
/* one event now (enum below): 0, or -1 when out of memory */
enum { SERIES_ARRIVAL = 0, SERIES_FINISHED, SERIES_DROPPED, SERIES_PREEMPTION, SERIES_SWAP_OUT,
       SERIES_SWAP_IN };
static inline int serve_series_count(serve_sim *s, int what)
{
    return s->c->series_bin_s > 0 ? serve_series_count_on(s, what) : 0;
}
/* on_request for q: 0, or -1 */
static inline int serve_report_request(serve_sim *s, const serve_req *q)
{
    return s->c->on_request ? serve_report_request_on(s, q) : 0;
}
int serve_series_finish(serve_sim *s, serve_result *o); /* hand the bins to o; 0 or -1 */

/* serving_iter.c: serve_iteration_s through the cache (same bits) */
int serve_iter_cache_init(serve_iter_cache *ic, const serve_config *c);
void serve_iter_cache_free(serve_iter_cache *ic);
double serve_iteration_cached_s(serve_iter_cache *ic, const serve_config *c,
                                const serve_batch *b);

/* serving_stats.c: exact or histogram (serving.h: exact_max_requests) */
int serve_stats_init(serve_stats *st, const serve_config *c);
void serve_stats_free(serve_stats *st);
/* a finished request (group: -1, or with sessions 0 for a first turn and 1
 * for a follow-up, whose TTFT also goes to its group): 0, or -1 when out
 * of memory */
int serve_stats_add(serve_stats *st, const serve_config *c, const serve_req *q, int group);
/* the four summaries and the mean E2E (Little's W); 0 or -1 (no memory) */
int serve_stats_summarise(serve_stats *st, uint64_t n_arrived, serve_result *o);

#endif
