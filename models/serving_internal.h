/* serving_internal.h - the serving simulation's state, shared by
 * serving.c (the events), serving_sched.c (batch formation) and
 * serving_router.c (the router table). */
#ifndef DCSIM_MODELS_SERVING_INTERNAL_H
#define DCSIM_MODELS_SERVING_INTERNAL_H

#include <gsl/gsl_rng.h>

#include "engine.h"
#include "serving.h"

#define SERVE_NONE UINT32_MAX

enum serve_req_state { REQ_WAITING = 0, REQ_RUNNING, REQ_DONE, REQ_DROPPED };

typedef struct serve_req {
    double arrival_s, first_sched_s, first_token_s, end_s;
    uint32_t prompt;       /* tokens to prefill now: the original prompt, or after a
                              preemption the prompt and the output so far */
    uint32_t orig_prompt, output; /* as drawn */
    uint32_t prefilled;    /* tokens of prompt computed */
    uint32_t generated;    /* output tokens emitted */
    uint32_t kv_tokens;    /* tokens whose K and V are cached */
    uint32_t blocks;       /* KV blocks held */
    uint32_t replica;
    uint32_t step_tokens;  /* this iteration: the chunk (prefill) or 1 (decode); 0 idle */
    uint8_t state, step_is_decode;
} serve_req;

typedef struct serve_replica {
    uint32_t *wait;        /* FIFO ring of request ids */
    uint32_t wait_head, wait_n, wait_cap;
    uint32_t *run;         /* running ids, oldest admitted first */
    uint32_t run_n, run_cap;
    double blocks_total, blocks_used;
    uint32_t outstanding;  /* requests routed here and not finished */
    int busy;
} serve_replica;

typedef struct serve_sim {
    const serve_config *c;
    sim_engine *eng;
    gsl_rng *arrival_rng, *length_rng;
    serve_req *req;
    uint64_t n_req, cap_req;
    serve_replica *rep;
    uint32_t router_rotor;
    uint64_t sent;         /* requests generated so far */
    int failed;            /* out of memory inside an event: stop */
    int interrupted;       /* the poll asked to stop */
    /* scratch for one iteration's batch */
    double *chunk_tokens, *chunk_context;
    uint32_t scratch_cap;
    /* time integrals, updated at every change */
    double last_t, in_system, area_in_system, blocks_used_fleet, area_blocks, peak_blocks;
    double busy_s, batch_tokens_sum;
    serve_result *out;
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

#endif
