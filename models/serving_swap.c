/* serving_swap.c - swap-based preemption of the KV cache (serving.h,
 * preemption = SERVE_PREEMPT_SWAP), as vLLM's scheduler does it with
 * preemption_mode="swap" (vllm/core/scheduler.py, v0.6: _preempt_by_swap,
 * _schedule_swapped; the copies: vllm/worker/worker.py execute_worker
 * calls cache_engine.py swap_in, then swap_out, before the forward pass):
 *   - the preempted request (the newest running one, as under recompute)
 *     keeps its computed K and V: its n = ceil(kv tokens / block) blocks are
 *     copied to its replica's host pool and freed on the GPU; it joins the
 *     replica's swapped queue (FIFO in swap-out order: self.swapped.extend);
 *   - while a request is swapped out, nothing new is admitted on its replica
 *     (_schedule_default admits prefills only "if not self.swapped"), and
 *     after the running requests' steps the queue's head is copied back in
 *     when the free blocks hold it and its next step (no overtaking: vLLM
 *     stops at the first that does not fit), unless this batch preempted
 *     (vLLM: "If any sequence group is preempted, do not swap in any
 *     sequence group"); it then runs in the same batch (a decode, or its next
 *     prompt chunk), with nothing recomputed;
 *   - copy time: blocks x (one block's bytes per GPU) / (the GPU's host link
 *     rate per direction), each of the tp GPUs copying its 1/tp of every
 *     block over its own link at once; out and in copies of one batch are
 *     serial (execute_worker's swap_in then swap_out, ops.swap_blocks on
 *     the current, compute, stream) and precede the batch's kernels: the iteration takes
 *     copies + kernels, no overlap;
 *   - a preemption whose blocks the host pool cannot hold falls back to
 *     recompute (counted: vLLM aborts there instead, "Aborted due to the
 *     lack of CPU swap space").
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "serving_internal.h"

static const char *const preemption_names[SERVE_PREEMPT_COUNT] = {"recompute", "swap"};

const char *serve_preemption_name(int p)
{
    return p >= 0 && p < SERVE_PREEMPT_COUNT ? preemption_names[p] : "?";
}

int serve_preemption_parse(const char *name, int *out)
{
    for (int i = 0; name && i < SERVE_PREEMPT_COUNT; i++)
        if (strcmp(name, preemption_names[i]) == 0) {
            *out = i;
            return 0;
        }
    return -1;
}

void serve_swap_geometry(const serve_config *c, double *host_blocks, double *block_copy_s)
{
    double per_token = 0;
    *host_blocks = *block_copy_s = 0;
    if (c->preemption != SERVE_PREEMPT_SWAP ||
        serve_memory(c, NULL, &per_token, NULL, NULL) < 0 || !(per_token > 0))
        return;
    double block_gpu = per_token / c->tp * c->kv_block_tokens; /* one GPU's share */
    *host_blocks = floor(c->host_bytes_per_gpu / block_gpu);
    *block_copy_s = block_gpu / c->host_link_bytes_per_s;
}

int serve_swap_init(serve_sim *s)
{
    s->host_used_fleet = s->host_peak = 0;
    if (s->c->preemption != SERVE_PREEMPT_SWAP)
        return 0;
    for (uint32_t r = 0; r < s->n_rep; r++) {
        serve_replica *rp = &s->rep[r];
        double per_token = 0;
        serve_swap_geometry(rp->cfg, &rp->host_blocks_total, &rp->block_copy_s);
        serve_memory(rp->cfg, NULL, &per_token, NULL, NULL);
        rp->block_bytes = per_token * rp->cfg->kv_block_tokens; /* all its GPUs */
        s->host_fleet_total += rp->host_blocks_total;
        rp->swap_cap = 16;
        if (!(rp->swapped = malloc(rp->swap_cap * sizeof *rp->swapped)))
            return -1;
    }
    return 0;
}

void serve_swap_free(serve_sim *s)
{
    for (uint32_t r = 0; s->rep && r < s->n_rep; r++)
        free(s->rep[r].swapped);
}

static int swapped_push(serve_replica *rp, uint32_t id)
{
    if (rp->swap_n == rp->swap_cap) {
        uint32_t cap = 2 * rp->swap_cap;
        uint32_t *w = malloc((size_t)cap * sizeof *w);
        if (!w)
            return -1;
        for (uint32_t i = 0; i < rp->swap_n; i++) /* unwrapped, oldest first */
            w[i] = rp->swapped[(rp->swap_head + i) % rp->swap_cap];
        free(rp->swapped);
        rp->swapped = w;
        rp->swap_cap = cap;
        rp->swap_head = 0;
    }
    rp->swapped[(rp->swap_head + rp->swap_n) % rp->swap_cap] = id;
    rp->swap_n++;
    return 0;
}

static void host_use(serve_sim *s, serve_replica *rp, double blocks)
{
    rp->host_blocks_used += blocks;
    s->host_used_fleet += blocks;
    if (s->host_used_fleet > s->host_peak)
        s->host_peak = s->host_used_fleet;
}

int serve_swap_out(serve_sim *s, serve_replica *rp, serve_req *q)
{
    double n = ceil((double)q->kv_tokens / s->c->kv_block_tokens);
    if (!(n > 0))
        return 0; /* nothing computed: nothing to lose, requeued as under recompute */
    if (n > rp->host_blocks_total - rp->host_blocks_used) {
        s->out->swap_fallbacks++;
        return 0;
    }
    serve_set_blocks(s, q, 0);
    serve_prefix_release(s, rp, q); /* its copy holds the shared blocks too */
    serve_series_note(s);
    s->n_running--;
    s->n_queued++;
    if (serve_series_count(s, SERIES_PREEMPTION) || serve_series_count(s, SERIES_SWAP_OUT))
        return -1;
    q->step_tokens = 0;
    q->state = REQ_SWAPPED;
    host_use(s, rp, n);
    rp->copy_blocks += n;
    s->out->preemptions++;
    s->out->swaps_out++;
    s->out->swap_out_bytes += n * rp->block_bytes;
    return swapped_push(rp, (uint32_t)(q - s->req)) ? -1 : 1;
}

int serve_swap_in(serve_sim *s, serve_replica *rp, serve_swap_step *st)
{
    const serve_config *c = s->c;
    uint32_t block = c->kv_block_tokens;
    while (rp->swap_n && !rp->preempted_now && rp->run_n < c->max_sequences && *st->budget > 0) {
        uint32_t id = rp->swapped[rp->swap_head];
        serve_req *q = &s->req[id];
        double n = ceil((double)q->kv_tokens / block);
        int decoding = q->prefilled >= q->prompt;
        double need = ceil((q->kv_tokens + 1.0) / block); /* and its next token */
        if (serve_free_blocks(rp) < need)
            break;
        if (rp->evictable > 0)
            serve_prefix_evict(s, rp, need);
        rp->swap_head = (rp->swap_head + 1) % rp->swap_cap;
        rp->swap_n--;
        host_use(s, rp, -n);
        rp->copy_blocks += n;
        s->out->swaps_in++;
        s->out->swap_in_bytes += n * rp->block_bytes;
        if (serve_series_count(s, SERIES_SWAP_IN))
            return -1;
        serve_series_note(s);
        s->n_queued--;
        s->n_running++;
        rp->run[rp->run_n++] = id; /* run_cap >= max_sequences */
        q->state = REQ_RUNNING;
        if (!decoding) { /* its next prompt chunk (at least one token fits) */
            serve_set_blocks(s, q, n);
            serve_take_chunk(s, q, serve_chunk_for(s, rp, q, *st->budget), st->budget,
                             st->n_prefill, st->n_emit);
            continue;
        }
        serve_set_blocks(s, q, need);
        q->step_tokens = 1;
        q->step_is_decode = 1;
        *st->budget -= 1;
        *st->kv_sum += q->kv_tokens + 1.0;
        (*st->decodes)++;
    }
    return 0;
}

double serve_swap_copy_s(serve_sim *s, serve_replica *rp)
{
    double t = rp->copy_blocks * rp->block_copy_s;
    s->out->swap_time_s += t;
    rp->copy_blocks = 0;
    return t;
}

int serve_swap_check(const serve_config *c, sim_error *err)
{
    if (c->preemption < 0 || c->preemption >= SERVE_PREEMPT_COUNT)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "serving: preemption %d: use "
                             "recompute or swap", c->preemption);
    if (c->preemption != SERVE_PREEMPT_SWAP)
        return 0;
    if (!(c->host_bytes_per_gpu >= 0) || !isfinite(c->host_bytes_per_gpu))
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "serving: host memory %g B per GPU: "
                             "must be >= 0 and finite", c->host_bytes_per_gpu);
    if (!(c->host_link_bytes_per_s > 0) || !isfinite(c->host_link_bytes_per_s))
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "serving: host link %g B/s per GPU: "
                             "swap needs a positive rate", c->host_link_bytes_per_s);
    return 0;
}
