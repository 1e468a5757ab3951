/* serving_session.c - multi-turn sessions (serving.h, session_*): an
 * arrival starts a conversation of n turns; each turn after the first
 * arrives a think time after the previous one finished, its prompt the
 * previous turn's prompt and output (the context) followed by a new
 * message, closed loop. The context's whole KV blocks stay in the prefix
 * cache of the replica that served the turn (serve_prefix_keep: an entry
 * under the turn's prefix chain, evictable as any unpinned leaf), so the
 * next turn prefills only its new tokens there, or all of them where the
 * router sends it elsewhere or the entry was evicted. A turn dropped at
 * arrival (its context outgrew one replica's KV memory) ends its session.
 * A follow-up whose prompt and output exceed the context window
 * (serve_session_window: session_window, else the model's arch.seq_len) is
 * refused at arrival, ending its session (truncate "refuse", the
 * default), or keeps its prefix chain and the newest conversation tokens
 * that fit ("oldest"; fit_window): its session's cached context is then no
 * prefix of its prompt, so it takes a fresh cache key and prefills all but
 * its cached chain.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "event_kinds.h"
#include "serving_internal.h"

static const char *const turns_names[SERVE_TURNS_COUNT] = {"fixed", "geometric"};
static const char *const think_names[SERVE_THINK_COUNT] = {"fixed", "exponential"};
static const char *const truncate_names[SERVE_TRUNC_COUNT] = {"refuse", "oldest"};

static int parse_in(const char *name, const char *const *names, int n, int *out)
{
    for (int i = 0; name && i < n; i++)
        if (strcmp(name, names[i]) == 0) {
            *out = i;
            return 0;
        }
    return -1;
}

const char *serve_turns_dist_name(int d)
{
    return d >= 0 && d < SERVE_TURNS_COUNT ? turns_names[d] : "?";
}

int serve_turns_dist_parse(const char *name, int *out)
{
    return parse_in(name, turns_names, SERVE_TURNS_COUNT, out);
}

const char *serve_think_dist_name(int d)
{
    return d >= 0 && d < SERVE_THINK_COUNT ? think_names[d] : "?";
}

int serve_think_dist_parse(const char *name, int *out)
{
    return parse_in(name, think_names, SERVE_THINK_COUNT, out);
}

const char *serve_truncate_name(int t)
{
    return t >= 0 && t < SERVE_TRUNC_COUNT ? truncate_names[t] : "?";
}

int serve_truncate_parse(const char *name, int *out)
{
    return parse_in(name, truncate_names, SERVE_TRUNC_COUNT, out);
}

int serve_has_sessions(const serve_config *c)
{
    return c->session_turns > 1;
}

double serve_mean_turns(const serve_config *c)
{
    if (!serve_has_sessions(c))
        return 1;
    if (c->session_turns_dist == SERVE_TURNS_FIXED)
        return c->session_turns;
    /* a geometric law capped at M: sum over n < M of (1 - p)^n = (1 - (1 - p)^M) / p */
    double p = 1 / c->session_turns;
    return c->session_max_turns > 0 ? (1 - pow(1 - p, c->session_max_turns)) / p
                                     : c->session_turns;
}

static int bad(sim_error *err, const char *what, double value, const char *allowed)
{
    return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "serving: %s %g: %s", what, value, allowed);
}

double serve_session_window(const serve_config *c)
{
    return c->session_window > 0 ? c->session_window : c->arch.seq_len;
}

int serve_session_check(const serve_config *c, sim_error *err)
{
    if (!(c->session_turns >= 0) || c->session_turns > 1000)
        return bad(err, "session turns", c->session_turns, "must be from 1 to 1000");
    if (!serve_has_sessions(c))
        return 0;
    if (c->session_turns_dist < 0 || c->session_turns_dist >= SERVE_TURNS_COUNT)
        return bad(err, "turns distribution", c->session_turns_dist, "unknown");
    if (c->session_turns_dist == SERVE_TURNS_FIXED && c->session_turns != floor(c->session_turns))
        return bad(err, "session turns", c->session_turns, "fixed turns must be whole");
    if (!(c->session_max_turns >= 0) || c->session_max_turns > 1000 ||
        c->session_max_turns != floor(c->session_max_turns))
        return bad(err, "max turns", c->session_max_turns, "must be whole, 0 (none) to 1000");
    if (!(c->session_window >= 0 && c->session_window <= 1e7) ||
        c->session_window != floor(c->session_window))
        return bad(err, "context window", c->session_window, "must be whole, 0 (the model's "
                                                             "seq-len) to 1e7 tokens");
    if (c->session_truncate < 0 || c->session_truncate >= SERVE_TRUNC_COUNT)
        return bad(err, "truncation rule", c->session_truncate, "unknown");
    if (c->think_dist < 0 || c->think_dist >= SERVE_THINK_COUNT)
        return bad(err, "think-time distribution", c->think_dist, "unknown");
    if (!(c->think_s >= 0) || c->think_s > 86400)
        return bad(err, "think time", c->think_s, "must be from 0 to a day");
    if (c->arrival != SERVE_POISSON && c->arrival != SERVE_GAMMA)
        return bad(err, "arrival process", c->arrival, "sessions start with open-loop "
                                                       "arrivals (poisson or gamma) only");
    if (c->prefill_replicas)
        return bad(err, "prefill replicas", c->prefill_replicas, "sessions are not modelled "
                                                                 "with disaggregated pools");
    return 0;
}

int serve_session_init(serve_sim *s)
{
    if (!s->sessions_on)
        return 0;
    s->session_rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!s->session_rng)
        return -1;
    gsl_rng_set(s->session_rng, (unsigned long)(s->c->seed * 2 + 4));
    return 0;
}

void serve_session_free(serve_sim *s)
{
    free(s->sess);
    free(s->free_sess);
    gsl_rng_free(s->session_rng);
}

static uint32_t draw_turns(serve_sim *s)
{
    const serve_config *c = s->c;
    if (c->session_turns_dist == SERVE_TURNS_FIXED)
        return (uint32_t)c->session_turns;
    unsigned n = gsl_ran_geometric(s->session_rng, 1 / c->session_turns);
    if (c->session_max_turns > 0 && n > c->session_max_turns)
        n = (unsigned)c->session_max_turns;
    return n;
}

/* a free session record: SERVE_NONE when out of memory */
static uint32_t new_session(serve_sim *s)
{
    if (s->n_free_sess)
        return s->free_sess[--s->n_free_sess];
    if (s->n_sess == s->cap_sess) {
        uint32_t cap = s->cap_sess ? 2 * s->cap_sess : 256;
        serve_session *n = realloc(s->sess, cap * sizeof *n);
        if (n)
            s->sess = n;
        uint32_t *f = n ? realloc(s->free_sess, cap * sizeof *f) : NULL;
        if (!f)
            return SERVE_NONE;
        s->free_sess = f;
        s->cap_sess = cap;
    }
    return s->n_sess++;
}

static void end_session(serve_sim *s, uint32_t k)
{
    s->free_sess[s->n_free_sess++] = k;
}

/* the context tokens a follow-up (q: its new message and output drawn) of
 * session ss keeps under the context window: all of them when prompt +
 * output fit in seq_len; else -1 (refuse), or under SERVE_TRUNC_OLDEST the
 * prefix chain and the newest seq_len - output - message - chain tokens of
 * the conversation after it (-1 when not even the chain, the message and
 * the output fit). A truncated turn's session takes a fresh cache key: the
 * cached context is no prefix of its prompt. */
static double fit_window(serve_sim *s, serve_session *ss, const serve_req *q)
{
    double window = serve_session_window(s->c), output = q->output, message = q->prompt;
    double context = ss->context;
    if (context + message + output <= window)
        return context;
    double kept = window - output - message - ss->prefix_tokens;
    if (s->c->session_truncate != SERVE_TRUNC_OLDEST || kept < 0)
        return -1;
    kept += ss->prefix_tokens; /* the chain at the head, then the newest tokens */
    s->out->turns_truncated++;
    s->out->truncated_tokens += context - kept;
    ss->cache_key = (1ull << 63) | s->truncations++;
    return kept;
}

/* request x's session fields for the records */
static void set_record(serve_sim *s, serve_req_ext *x, uint32_t k, uint32_t context,
                       uint32_t truncated)
{
    x->session_id = s->sess[k].key;
    x->turn = s->sess[k].turn;
    x->context = context;
    x->truncated = truncated;
    x->hit_tokens = 0;
    x->context_hit = x->refused = 0;
}

int serve_session_begin(serve_sim *s, uint32_t id)
{
    serve_req *q = &s->req[id];
    serve_req_ext *x = &s->ext[id];
    uint32_t k = s->next_session;
    if (k == SERVE_NONE) { /* a new session: its first turn */
        if ((k = new_session(s)) == SERVE_NONE)
            return -1;
        serve_session *ss = &s->sess[k];
        ss->cache_key = ss->key = s->out->sessions++;
        ss->turn = 1;
        ss->turns = draw_turns(s);
        ss->context = 0;
        ss->prefix_depth = x->prefix_depth;
        double chain = 0; /* its tokens, as serve_prefix_draw added them */
        for (unsigned l = 0; l < SERVE_PREFIX_LEVELS; l++) {
            ss->prefix_k[l] = l < x->prefix_depth ? x->prefix_k[l] : 0;
            chain += l < x->prefix_depth ? s->prefix_lv[l].tokens : 0;
        }
        ss->prefix_tokens = (uint32_t)chain;
    } else { /* its next turn: the context, then the new message */
        serve_session *ss = &s->sess[k];
        ss->turn++;
        x->prefix_depth = ss->prefix_depth;
        for (unsigned l = 0; l < SERVE_PREFIX_LEVELS; l++)
            x->prefix_k[l] = ss->prefix_k[l];
        s->out->followups++;
        double kept = fit_window(s, ss, q);
        if (kept < 0) { /* refused: the caller drops it, which ends the session */
            s->out->turns_refused++;
            set_record(s, x, k, ss->context, 0);
            x->refused = 1;
            x->session = k;
            return 1;
        }
        double prompt = kept + q->prompt;
        q->orig_prompt = q->prompt = prompt < 4e9 ? (uint32_t)prompt : 4000000000u;
        set_record(s, x, k, (uint32_t)kept, ss->context - (uint32_t)kept);
        x->session = k;
        x->session_blocks = 0;
        return 0;
    }
    set_record(s, x, k, 0, 0);
    x->session = k;
    x->session_blocks = 0;
    return 0;
}

void serve_session_dropped(serve_sim *s, uint32_t id)
{
    uint32_t k = s->ext[id].session;
    if (k != SERVE_NONE) {
        end_session(s, k);
        s->out->sessions_cut++;
    }
    s->ext[id].session = SERVE_NONE;
}

int serve_session_keeps(const serve_sim *s, uint32_t id)
{
    uint32_t k = s->ext[id].session;
    return k != SERVE_NONE && s->sess[k].turn < s->sess[k].turns;
}

static void on_turn(sim_engine *eng, void *ctx, uint64_t data)
{
    (void)eng;
    serve_sim *s = ctx;
    s->next_session = (uint32_t)data;
    int rc = serve_new_request(s);
    s->next_session = SERVE_NONE;
    if (rc < 0)
        serve_fail(s);
}

int serve_session_finished(serve_sim *s, uint32_t id)
{
    uint32_t k = s->ext[id].session;
    if (k == SERVE_NONE)
        return 0;
    s->ext[id].session = SERVE_NONE;
    serve_session *ss = &s->sess[k];
    if (ss->turn >= ss->turns) {
        end_session(s, k);
        s->out->sessions_finished++;
        return 0;
    }
    const serve_req *q = &s->req[id];
    ss->context = q->orig_prompt + q->output;
    double think = s->c->think_dist == SERVE_THINK_EXPONENTIAL
                       ? gsl_ran_exponential(s->session_rng, s->c->think_s)
                       : s->c->think_s;
    sim_schedule_in(s->eng, think, 0, KIND_SERVE_TURN, on_turn, s, k);
    return 0;
}

void serve_session_admitted(serve_sim *s, const serve_req *q)
{
    serve_req_ext *x = serve_ext(s, q);
    if (x->session == SERVE_NONE)
        return;
    x->hit_tokens = q->prefilled;
    x->context_hit = q->uses_cache == SERVE_SESSION_LEVEL;
    if (x->turn < 2)
        return;
    serve_result *o = s->out;
    o->followups_admitted++;
    o->followup_hits += x->context_hit;
    o->followup_context_tokens += x->context;
    o->followup_hit_tokens += q->prefilled;
}

int serve_session_group(const serve_sim *s, uint32_t id)
{
    return s->sessions_on ? s->ext[id].turn > 1 : -1;
}

void serve_session_results(serve_sim *s, serve_result *o)
{
    (void)s;
    o->turns_mean = o->sessions ? (double)o->arrived / o->sessions : 0;
    o->hit_tokens_share = o->followup_context_tokens > 0
                              ? o->followup_hit_tokens / o->followup_context_tokens : 0;
}
