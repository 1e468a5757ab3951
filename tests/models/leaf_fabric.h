/* leaf_fabric.h - a one-tier test fabric for the model tests: gpus hosts
 * of one GPU each (no scale-up) under leaves of hosts_per_leaf ports (a
 * leaf-spine of the given radix, 1:1), InfiniBand-like links of
 * bytes_per_s at efficiency 1, ECMP, one channel and chunk. 0, or -1 with
 * the reason on stderr. Static inline functions, included by test files. */
#ifndef DCSIM_TEST_LEAF_FABRIC_H
#define DCSIM_TEST_LEAF_FABRIC_H

#include <stdio.h>
#include <string.h>

#include "fabric.h"

/* the same with down:up oversubscription at the leaves (1, 1: make_leaf_fabric) */
static inline int make_leaf_fabric_over(fabric *f, unsigned gpus, unsigned radix,
                                        unsigned hosts_per_leaf, unsigned down, unsigned up,
                                        double bytes_per_s)
{
    fabric_config c;
    memset(&c, 0, sizeof c);
    if (fabric_topology_parse("leaf-spine", &c.topology))
        return -1;
    c.gpus = gpus;
    c.gpus_per_node = 1;
    snprintf(c.link.name, sizeof c.link.name, "test-400g");
    c.link.kind = HW_LINK_INFINIBAND;
    c.link.bytes_per_s = bytes_per_s;
    c.link.efficiency = 1;
    c.link.routing = HW_ROUTING_ECMP;
    c.shape.radix = radix;
    c.shape.hosts_per_leaf = hosts_per_leaf;
    c.shape.over_down = down;
    c.shape.over_up = up;
    c.routing.balance = TOPO_BALANCE_ECMP;
    c.routing.qps = 1;
    c.channels = 1;
    c.chunks = 1;
    sim_error err;
    sim_error_clear(&err);
    if (fabric_build(&c, f, &err)) {
        fprintf(stderr, "fabric: %s\n", err.msg);
        return -1;
    }
    return 0;
}

static inline int make_leaf_fabric(fabric *f, unsigned gpus, unsigned radix,
                                   unsigned hosts_per_leaf, double bytes_per_s)
{
    return make_leaf_fabric_over(f, gpus, radix, hosts_per_leaf, 1, 1, bytes_per_s);
}

/* every collective latency 0, so that times are bytes over rates alone */
static inline void leaf_fabric_zero_latency(fabric *f)
{
    f->nc.base_latency_s = f->nc.intra_step_latency_s = f->nc.inter_step_latency_s = 0;
    f->nc.intra_wire_latency_s = f->nc.inter_wire_latency_s = 0;
}

#endif
