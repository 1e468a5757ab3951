/* serving_sched.c - one replica's next batch (serving.h, steps 1-3):
 * decodes first, then prompt chunks of running and newly admitted requests
 * within the token budget and the free KV blocks; a decode that finds no
 * free block preempts the newest running request (recompute). */
#include <math.h>
#include <stdlib.h>

#include "serving_internal.h"

static double blocks_for(const serve_sim *s, double tokens)
{
    return ceil(tokens / s->c->kv_block_tokens);
}

static void set_blocks(serve_sim *s, serve_req *q, double blocks)
{
    serve_replica *rp = &s->rep[q->replica];
    serve_account(s);
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
    set_blocks(s, q, 0);
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
    if (!a || !b)
        return -1;
    s->scratch_cap = cap;
    return 0;
}

/* Step 1: every running request past its prompt takes one token and, when
 * the token starts a block, a free block, preempting the newest running
 * request until one is free (possibly itself). Returns the tokens taken or
 * -1 on no memory. */
static long schedule_decodes(serve_sim *s, serve_replica *rp, double *budget)
{
    long taken = 0;
    for (uint32_t i = 0; i < rp->run_n && *budget > 0; i++) {
        serve_req *q = &s->req[rp->run[i]];
        if (q->prefilled < q->prompt)
            continue;
        double need = blocks_for(s, q->kv_tokens + 1.0) - q->blocks;
        while (need > 0 && rp->blocks_total - rp->blocks_used < need) {
            int self = rp->run[rp->run_n - 1] == (uint32_t)(q - s->req);
            if (preempt_newest(s, rp))
                return -1;
            if (self)
                break;
        }
        if (q->state != REQ_RUNNING)
            break; /* it preempted itself: everyone after it is gone too */
        if (need > 0)
            set_blocks(s, q, q->blocks + need);
        q->step_tokens = 1;
        q->step_is_decode = 1;
        *budget -= 1;
        taken++;
    }
    return taken;
}

/* a prompt chunk for q: what is left of its prompt, the budget and the free
 * blocks allow (0: none) */
static double chunk_for(const serve_sim *s, const serve_replica *rp, const serve_req *q,
                        double budget)
{
    double left = (double)q->prompt - q->prefilled;
    double chunk = left < budget ? left : budget;
    double room = (rp->blocks_total - rp->blocks_used + q->blocks) * s->c->kv_block_tokens -
                  q->kv_tokens;
    return chunk < room ? chunk : floor(room > 0 ? room : 0);
}

static void take_chunk(serve_sim *s, serve_req *q, double chunk, double *budget)
{
    set_blocks(s, q, blocks_for(s, q->kv_tokens + chunk));
    q->step_tokens = (uint32_t)chunk;
    q->step_is_decode = 0;
    *budget -= chunk;
}

double serve_form_batch(serve_sim *s, uint32_t r)
{
    const serve_config *c = s->c;
    serve_replica *rp = &s->rep[r];
    for (unsigned attempt = 0;; attempt++) { /* bounded: each retry preempts one request */
        double budget = c->max_batch_tokens;
        for (uint32_t i = 0; i < rp->run_n; i++)
            s->req[rp->run[i]].step_tokens = 0;
        long decodes = schedule_decodes(s, rp, &budget);
        if (decodes < 0)
            return -1;
        /* step 2: prompts under way, oldest first */
        for (uint32_t i = 0; i < rp->run_n && budget > 0; i++) {
            serve_req *q = &s->req[rp->run[i]];
            if (q->prefilled >= q->prompt)
                continue;
            double chunk = chunk_for(s, rp, q, budget);
            if (chunk > 0)
                take_chunk(s, q, chunk, &budget);
        }
        /* step 3: admissions in arrival order, no overtaking */
        while (rp->wait_n && rp->run_n < c->max_sequences && budget > 0) {
            uint32_t id = rp->wait[rp->wait_head];
            serve_req *q = &s->req[id];
            double chunk = chunk_for(s, rp, q, budget);
            if (!(chunk > 0))
                break;
            rp->wait_head = (rp->wait_head + 1) % rp->wait_cap;
            rp->wait_n--;
            rp->run[rp->run_n++] = id; /* run_cap >= max_sequences */
            q->state = REQ_RUNNING;
            if (q->first_sched_s < 0)
                q->first_sched_s = sim_now(s->eng);
            take_chunk(s, q, chunk, &budget);
        }
        /* the batch */
        unsigned n_prefill = 0, n_decode = 0, n_emit = 0;
        double kv_sum = 0;
        if (scratch_reserve(s, rp->run_n))
            return -1;
        for (uint32_t i = 0; i < rp->run_n; i++) {
            serve_req *q = &s->req[rp->run[i]];
            if (!q->step_tokens)
                continue;
            if (q->step_is_decode) {
                n_decode++;
                n_emit++;
                kv_sum += q->kv_tokens + 1.0;
            } else {
                s->chunk_tokens[n_prefill] = q->step_tokens;
                s->chunk_context[n_prefill] = q->kv_tokens;
                n_prefill++;
                n_emit += q->prefilled + q->step_tokens == q->prompt;
            }
        }
        if (n_prefill + n_decode > 0) {
            serve_batch b = {n_prefill, s->chunk_tokens, s->chunk_context, n_decode, kv_sum,
                             n_emit};
            s->batch_tokens_sum += c->max_batch_tokens - budget;
            return serve_iteration_s(c, &b);
        }
        /* nothing fits: running prompts hold the blocks the oldest needs */
        if (!rp->run_n || attempt > c->max_sequences)
            return 0;
        if (preempt_newest(s, rp))
            return -1;
    }
}
