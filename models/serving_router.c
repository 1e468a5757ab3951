/* serving_router.c - the router table (serving.h): one line per policy. */
#include <string.h>

#include "serving_internal.h"

static uint32_t pick_round_robin(serve_sim *s, uint32_t id)
{
    (void)id;
    uint32_t r = s->router_rotor;
    s->router_rotor = (r + 1) % s->c->replicas;
    return r;
}

/* the least of key over the replicas, ties to the first after the rotor
 * (so equal replicas take turns) */
static uint32_t pick_min(serve_sim *s, double (*key)(const serve_sim *, uint32_t))
{
    uint32_t n = s->c->replicas, best = SERVE_NONE;
    double best_key = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t r = (s->router_rotor + i) % n;
        double k = key(s, r);
        if (best == SERVE_NONE || k < best_key) {
            best = r;
            best_key = k;
        }
    }
    s->router_rotor = (best + 1) % n;
    return best;
}

static double outstanding(const serve_sim *s, uint32_t r) { return s->rep[r].outstanding; }

static double used_kv(const serve_sim *s, uint32_t r)
{
    return s->rep[r].blocks_used - s->rep[r].blocks_total;
}

static uint32_t pick_least_loaded(serve_sim *s, uint32_t id)
{
    (void)id;
    return pick_min(s, outstanding);
}

static uint32_t pick_most_free_kv(serve_sim *s, uint32_t id)
{
    (void)id;
    return pick_min(s, used_kv);
}

static const serve_router routers[] = {
    {"round-robin", "each replica in turn", pick_round_robin},
    {"least-loaded", "the replica with the fewest unfinished requests", pick_least_loaded},
    {"most-free-kv", "the replica with the most free KV blocks", pick_most_free_kv},
};

const serve_router *serve_router_find(const char *name)
{
    for (size_t i = 0; i < sizeof routers / sizeof routers[0]; i++)
        if (name && strcmp(routers[i].name, name) == 0)
            return &routers[i];
    return NULL;
}

const char *serve_router_name(const serve_router *r) { return r ? r->name : "?"; }

const char *serve_router_names(void) { return "round-robin, least-loaded, most-free-kv"; }
