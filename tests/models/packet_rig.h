/* packet_rig.h - the packet-tier unit tests' small fabric: a radix-8
 * leaf-spine of 4 leaves of 4 hosts (host h under leaf h / 4), links at
 * `rate` B/s, ECMP routing (seed 7), an engine and a pkt_net on it, and a
 * completion callback that records each message's time by its tag. Shared
 * by test_packet_dcqcn, _ibcc, _loss and _series (one rig, not four copies).
 */
#ifndef DCSIM_TESTS_PACKET_RIG_H
#define DCSIM_TESTS_PACKET_RIG_H

#include <stdio.h>

#include "engine.h"
#include "fattree.h"
#include "packet.h"
#include "routing.h"

#define RIG_MAX_DONE 64

typedef struct rig {
    topo_graph g;
    topo_router *r;
    sim_engine *eng;
    pkt_net *net;
    size_t n_done;                /* messages completed */
    double done_s[RIG_MAX_DONE];  /* completion time by tag (-1: not yet) */
} rig;

/* pkt_send's callback with ctx = the rig. */
static inline void on_done(void *ctx, uint64_t tag)
{
    rig *x = ctx;
    x->n_done++;
    if (tag < RIG_MAX_DONE)
        x->done_s[tag] = sim_now(x->eng);
}

/* 0, or -1 with the reason on stderr (what was built must still be closed). */
static inline int rig_open(rig *x, const pkt_config *c, double rate)
{
    char why[256];
    x->n_done = 0;
    for (int i = 0; i < RIG_MAX_DONE; i++)
        x->done_s[i] = -1;
    x->r = NULL;
    x->eng = NULL;
    x->net = NULL;
    topo_graph_init(&x->g);
    if (topo_leafspine(8, 4, 4, rate, &x->g, why, sizeof why)) {
        fprintf(stderr, "leafspine: %s\n", why);
        return -1;
    }
    topo_route_config rc = {TOPO_BALANCE_ECMP, TOPO_PATH_MINIMAL, 1, 7};
    x->r = topo_router_create(&x->g, &rc, why, sizeof why);
    x->eng = sim_engine_create();
    x->net = x->r ? pkt_net_create(x->eng, &x->g, x->r, c, why, sizeof why) : NULL;
    if (!x->net)
        fprintf(stderr, "pkt_net_create: %s\n", why);
    return x->net ? 0 : -1;
}

static inline void rig_close(rig *x)
{
    pkt_net_destroy(x->net);
    sim_engine_destroy(x->eng);
    topo_router_destroy(x->r);
    topo_graph_fini(&x->g);
}

#endif
