/* leaf_fabric.h - a one-tier test fabric for the model tests: gpus hosts
 * of one GPU each (no scale-up) under leaves of hosts_per_leaf ports (a
 * leaf-spine of the given radix, 1:1), InfiniBand-like links of
 * bytes_per_s at efficiency 1, ECMP, one channel and chunk. 0, or -1 with
 * the reason on stderr. Included by one test file each (a static function). */
#ifndef DCSIM_TEST_LEAF_FABRIC_H
#define DCSIM_TEST_LEAF_FABRIC_H

#include <stdio.h>
#include <string.h>

#include "fabric.h"

static int make_leaf_fabric(fabric *f, unsigned gpus, unsigned radix, unsigned hosts_per_leaf,
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
    c.shape.over_down = c.shape.over_up = 1;
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

#endif
