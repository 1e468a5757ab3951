/* serving_sched.c - one replica's next batch (serving.h, steps 1-3):
 * decodes first, then prompt chunks of running requests, swapped-out ones
 * back in (swap preemption, serving_swap.c), then newly admitted requests,
 * within the token budget and the free KV blocks; a decode that finds no
 * free block preempts the newest running request (recompute, or swap). */
#include <math.h>
#include <stdlib.h>

#include "serving_internal.h"

static double blocks_for(const serve_sim *s, double tokens)
{
    return ceil(tokens / s->c->kv_block_tokens);
}

void serve_set_blocks(serve_sim *s, serve_req *q, double blocks)
{
    serve_replica *rp = &s->rep[q->replica];
    serve_account(s);
    serve_series_note(s);
    rp->blocks_used += blocks - q->blocks;
    s->blocks_used_fleet += blocks - q->blocks;
    if (s->blocks_used_fleet > s->peak_blocks)
        s->peak_blocks = s->blocks_used_fleet;
    q->blocks = (uint32_t)blocks;
}

int serve_wait_reserve(serve_replica *rp)
{
    if (rp->wait_n < rp->wait_cap)
        return 0;
    uint32_t cap = rp->wait_cap ? 2 * rp->wait_cap : 64;
    uint32_t *w = malloc((size_t)cap * sizeof *w);
    if (!w)
        return -1;
    for (uint32_t i = 0; i < rp->wait_n; i++) /* unwrapped, oldest first */
        w[i] = rp->wait[(rp->wait_head + i) % rp->wait_cap];
    free(rp->wait);
    rp->wait = w;
    rp->wait_cap = cap;
    rp->wait_head = 0;
    return 0;
}

static int wait_push_front(serve_replica *rp, uint32_t id)
{
    if (serve_wait_reserve(rp))
        return -1;
    rp->wait_head = (rp->wait_head + rp->wait_cap - 1) % rp->wait_cap;
    rp->wait[rp->wait_head] = id;
    rp->wait_n++;
    return 0;
}

/* The newest running request gives back its blocks and waits at the head
 * of the queue to recompute its prompt and output so far. */
static int preempt_newest(serve_sim *s, serve_replica *rp)
{
    uint32_t id = rp->run[--rp->run_n];
    serve_req *q = &s->req[id];
    rp->preempted_now = 1;
    if (s->c->preemption == SERVE_PREEMPT_SWAP) { /* to the host pool, if it holds it */
        int rc = serve_swap_out(s, rp, q);
        if (rc)
            return rc < 0 ? -1 : 0;
    }
    serve_set_blocks(s, q, 0);
    serve_prefix_release(s, rp, q);
    serve_series_note(s);
    s->n_running--;
    s->n_queued++;
    if (serve_series_count(s, SERIES_PREEMPTION))
        return -1;
    q->prompt = q->orig_prompt + q->generated;
    q->prefilled = q->kv_tokens = 0;
    q->step_tokens = 0;
    q->state = REQ_WAITING;
    s->out->preemptions++;
    return wait_push_front(rp, id);
}

static int scratch_reserve(serve_sim *s, uint32_t n)
{
    if (n <= s->scratch_cap)
        return 0;
    uint32_t cap = n < 64 ? 64 : 2 * n;
    double *a = realloc(s->chunk_tokens, cap * sizeof *a);
    if (a)
        s->chunk_tokens = a;
    double *b = realloc(s->chunk_context, cap * sizeof *b);
    if (b)
        s->chunk_context = b;
    uint32_t *p = realloc(s->prefilling, cap * sizeof *p);
    if (p)
        s->prefilling = p;
    if (!a || !b || !p)
        return -1;
    s->scratch_cap = cap;
    return 0;
}

/* Decoding q needs `need` more blocks (> 0): free them (cached prefixes
 * evicted first, then the newest running requests preempted, possibly q
 * itself) and give them to q. 1: q decodes; 0: q preempted itself; -1: no
 * memory. Out of the hot loop below (rare: once per block of tokens). */
static __attribute__((noinline)) int grow_for_decode(serve_sim *s, serve_replica *rp,
                                                     serve_req *q, double need)
{
    while (rp->blocks_total - rp->blocks_used < need) {
        double evictable = rp->evictable;
        if (evictable > 0) { /* cached prefixes go before running requests */
            serve_prefix_evict(s, rp, need);
            if (rp->evictable < evictable)
                continue;
        }
        int self = rp->run[rp->run_n - 1] == (uint32_t)(q - s->req);
        if (preempt_newest(s, rp))
            return -1;
        if (self)
            break;
    }
    if (q->state != REQ_RUNNING)
        return 0; /* it preempted itself: everyone after it is gone too */
    serve_set_blocks(s, q, q->blocks + need);
    return 1;
}

/* One pass over the running requests (the hot loop of a long run):
 * clears last iteration's steps, lists those part-way through their prompt
 * (in run order) and does step 1: every running request past its prompt
 * takes one token and, when the token starts a block, a free block,
 * preempting the newest running request until one is free (possibly
 * itself). Sums the decodes' KV lengths in run order. Returns the decodes
 * or -1 on no memory. */
static long schedule_decodes(serve_sim *s, serve_replica *rp, double *budget, uint32_t *n_pre,
                             double *kv_sum)
{
    long taken = 0;
    uint32_t block = s->c->kv_block_tokens, n_prefilling = *n_pre;
    double left = *budget, kv = *kv_sum; /* in registers: the loop calls out rarely */
    for (uint32_t i = 0; i < rp->run_n; i++) {
        if (i + SERVE_PREFETCH < rp->run_n) /* the records are scattered: fetch ahead */
            __builtin_prefetch(&s->req[rp->run[i + SERVE_PREFETCH]], 1);
        serve_req *q = &s->req[rp->run[i]];
        q->step_tokens = 0;
        if (q->prefilled < q->prompt) {
            s->prefilling[n_prefilling++] = i;
            continue;
        }
        if (!(left > 0))
            continue;
        /* ceil((kv+1)/B) - blocks, which is > 0 only when kv+1 passes the blocks held
         * (its own and those it uses from the prefix cache) */
        uint32_t held = q->blocks + serve_shared(s, q);
        if ((uint64_t)q->kv_tokens + 1 > (uint64_t)held * block) {
            int rc = grow_for_decode(s, rp, q, (double)((q->kv_tokens + block) / block) - held);
            if (rc < 0)
                return -1;
            if (!rc)
                break;
        }
        q->step_tokens = 1;
        q->step_is_decode = 1;
        left -= 1;
        kv += q->kv_tokens + 1.0;
        taken++;
    }
    *budget = left;
    *kv_sum = kv;
    *n_pre = n_prefilling;
    return taken;
}

/* a prompt chunk for q: what is left of its prompt, the budget and the free
 * blocks allow (0: none) */
static double chunk_for(const serve_sim *s, const serve_replica *rp, const serve_req *q,
                        double budget)
{
    double left = (double)q->prompt - q->prefilled;
    double chunk = left < budget ? left : budget;
    double room = (rp->blocks_total - rp->blocks_used + rp->evictable +
                   (q->blocks + serve_shared(s, q))) *
                      s->c->kv_block_tokens -
                  q->kv_tokens;
    return chunk < room ? chunk : floor(room > 0 ? room : 0);
}

static void take_chunk(serve_sim *s, serve_req *q, double chunk, double *budget)
{
    double blocks = blocks_for(s, q->kv_tokens + chunk) - serve_shared(s, q);
    serve_replica *rp = &s->rep[q->replica];
    if (rp->evictable > 0)
        serve_prefix_evict(s, rp, blocks - q->blocks);
    serve_set_blocks(s, q, blocks);
    s->out->prefill_tokens_computed += chunk;
    q->step_tokens = (uint32_t)chunk;
    q->step_is_decode = 0;
    *budget -= chunk;
}

/* the chunk's place in the batch: its tokens and the context before it */
static void add_chunk(serve_sim *s, const serve_req *q, unsigned *n_prefill, unsigned *n_emit)
{
    s->chunk_tokens[*n_prefill] = q->step_tokens;
    s->chunk_context[*n_prefill] = q->kv_tokens;
    (*n_prefill)++;
    *n_emit += q->prefilled + q->step_tokens == q->prompt;
}

double serve_chunk_for(const serve_sim *s, const serve_replica *rp, const serve_req *q,
                       double budget)
{
    return chunk_for(s, rp, q, budget);
}

void serve_take_chunk(serve_sim *s, serve_req *q, double chunk, double *budget,
                      unsigned *n_prefill, unsigned *n_emit)
{
    if (!(chunk > 0))
        return;
    take_chunk(s, q, chunk, budget);
    add_chunk(s, q, n_prefill, n_emit);
}

/* q, carrying prefixes or not, is admitted: the prefix counts (0) */
static int prefix_admitted(serve_sim *s, serve_req *q)
{
    serve_result *o = s->out;
    o->prompt_tokens_admitted += q->prompt;
    o->prefill_tokens_saved += q->prefilled; /* 0 unless its chain was cached */
    unsigned depth = serve_ext(s, q)->prefix_depth;
    if (q->first_sched_s >= 0 || !depth)
        return 0;
    /* a session's cached context holds its whole chain */
    q->prefix_hit = q->uses_cache == SERVE_SESSION_LEVEL ? (uint8_t)depth : q->uses_cache;
    o->prefix_requests++;
    o->prefix_hits += q->prefix_hit > 0;
    for (unsigned l = 0; l < depth; l++) {
        o->prefix_level_requests[l]++;
        o->prefix_level_hits[l] += q->prefix_hit > l;
    }
    return 0;
}

/* waiting request id joins the running ones */
static void admit(serve_sim *s, serve_replica *rp, uint32_t id)
{
    serve_series_note(s);
    s->n_queued--;
    s->n_running++;
    rp->wait_head = (rp->wait_head + 1) % rp->wait_cap;
    rp->wait_n--;
    rp->run[rp->run_n++] = id; /* run_cap >= max_sequences */
    s->req[id].state = REQ_RUNNING;
}

/* Disaggregated decode replica: requests whose KV arrived (their prompt
 * computed elsewhere) join the running ones from the head of the queue
 * while there are blocks for their KV and the next token; they decode in
 * this iteration. */
static void admit_transferred(serve_sim *s, serve_replica *rp)
{
    uint32_t block = s->c->kv_block_tokens;
    while (!rp->swap_n && rp->wait_n && rp->run_n < s->c->max_sequences) {
        uint32_t id = rp->wait[rp->wait_head];
        serve_req *q = &s->req[id];
        if (!q->prompt || q->prefilled < q->prompt)
            return; /* a preempted request recomputes first: no overtaking */
        double need = blocks_for(s, q->kv_tokens + 1.0);
        if (serve_free_blocks(rp) < need)
            return;
        if (rp->evictable > 0)
            serve_prefix_evict(s, rp, need);
        admit(s, rp, id);
        serve_set_blocks(s, q, ceil((double)q->kv_tokens / block));
    }
}

double serve_form_batch(serve_sim *s, uint32_t r)
{
    const serve_config *c = s->c;
    serve_replica *rp = &s->rep[r];
    if (scratch_reserve(s, c->max_sequences))
        return -1;
    rp->copy_blocks = 0;
    rp->preempted_now = 0;
    for (unsigned attempt = 0;; attempt++) { /* bounded: each retry preempts one request */
        double budget = c->max_batch_tokens, kv_sum = 0;
        uint32_t n_pre = 0;
        unsigned n_prefill = 0, n_emit = 0;
        if (c->prefill_replicas && !rp->is_prefill)
            admit_transferred(s, rp);
        long decodes = schedule_decodes(s, rp, &budget, &n_pre, &kv_sum);
        if (decodes < 0)
            return -1;
        /* step 2: prompts under way, oldest first (the chunks in run order) */
        for (uint32_t k = 0; k < n_pre && budget > 0; k++) {
            serve_req *q = &s->req[rp->run[s->prefilling[k]]];
            double chunk = chunk_for(s, rp, q, budget);
            if (chunk > 0) {
                take_chunk(s, q, chunk, &budget);
                add_chunk(s, q, &n_prefill, &n_emit);
            }
        }
        /* swapped-out requests back in, before any admission */
        serve_swap_step sw = {&budget, &kv_sum, &decodes, &n_prefill, &n_emit};
        if (rp->swap_n && serve_swap_in(s, rp, &sw))
            return -1;
        /* step 3: admissions in arrival order, no overtaking */
        while (!rp->swap_n && rp->wait_n && rp->run_n < c->max_sequences && budget > 0) {
            uint32_t id = rp->wait[rp->wait_head];
            serve_req *q = &s->req[id];
            if (s->caching && serve_prefix_attach(s, rp, q))
                return -1;
            uint32_t fetched = s->fetch_on ? serve_ext(s, q)->fetch_tokens : 0;
            if (fetched) /* its context fetched from another replica (serving_fetch.c) */
                serve_fetch_apply(s, q);
            double chunk = chunk_for(s, rp, q, budget);
            if (!(chunk > 0)) {
                if (q->uses_cache) { /* not admitted: give the cached prefix back */
                    serve_prefix_release(s, rp, q);
                    q->prefilled = q->kv_tokens = 0;
                }
                if (fetched)
                    q->prefilled = q->kv_tokens = 0;
                break;
            }
            if (fetched)
                serve_ext(s, q)->fetch_tokens = 0; /* used: a preempted request recomputes */
            admit(s, rp, id);
            if (s->sessions_on && q->first_sched_s < 0)
                serve_session_admitted(s, q);
            if (s->caching && prefix_admitted(s, q))
                return -1;
            if (q->first_sched_s < 0)
                q->first_sched_s = sim_now(s->eng);
            take_chunk(s, q, chunk, &budget);
            add_chunk(s, q, &n_prefill, &n_emit);
        }
        /* the batch */
        unsigned n_decode = (unsigned)decodes;
        if (n_prefill + n_decode > 0) {
            serve_batch b = {n_prefill, s->chunk_tokens, s->chunk_context, n_decode, kv_sum,
                             n_emit + n_decode};
            s->batch_tokens_sum += c->max_batch_tokens - budget;
            double t = serve_iteration_cached_s(rp->iter, rp->cfg, &b);
            if (rp->copy_blocks > 0 && t > 0) /* the copies, then the kernels */
                t += serve_swap_copy_s(s, rp);
            return t;
        }
        /* nothing fits: running prompts hold the blocks the oldest needs (a
         * batch that only copied blocks out takes the copies' time) */
        if (!rp->run_n && rp->swap_n && rp->preempted_now && !(rp->copy_blocks > 0)) {
            rp->preempted_now = 0; /* only a fallback preempted: the swapped may come in */
            continue;
        }
        if (!rp->run_n || attempt > c->max_sequences)
            return rp->copy_blocks > 0 ? serve_swap_copy_s(s, rp) : 0;
        if (preempt_newest(s, rp))
            return -1;
    }
}
