/* test_serving_fabric.c - the KV transfers over a fabric (serving.h
 * serve_config.fabric, serving_kvfabric.c):
 *   - two transfers from the two GPUs of one leaf to the two of another,
 *     the leaves joined by one uplink each (a radix-3 leaf-spine, 2:1):
 *     they share it max-min, each latency + 2 x bytes / rate, where the
 *     replicas' links alone give each latency + bytes / rate; three through
 *     one uplink (radix 4, 3:1): latency + 3 x bytes / rate each;
 *   - what the fabric cost them (serve_result.transfer_route_s, _shared_s):
 *     the two sharing one uplink 2 x bytes / rate of sharing, no narrower
 *     route; a tp-2 transfer alone over one uplink bytes / (2 rate) of
 *     narrower route, no sharing;
 *   - a non-blocking fabric (1:1, adaptive): each transfer alone, the
 *     figure without the fabric (to rounding);
 *   - a loaded stream: requests conserved, Little's law, the same bits
 *     twice, slower transfers than on the replicas' links;
 *   - refusals: the queued contention, a node size the fabric does not have.
 * The device and model are test_serving.c's synthetic ones.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "fabric.h"
#include "serving.h"
#include "serving_checks.h"

#define RATE 47e9 /* synthetic: the test checks the arithmetic */
#define LAT 14e-6

/* a leaf-spine of radix-`radix` switches, `down` GPU ports a leaf at
 * oversubscription over:1, one GPU a node, links of RATE at efficiency 1 */
static fabric_config leaf_spine(unsigned radix, unsigned down, unsigned over, int adaptive)
{
    fabric_config f;
    memset(&f, 0, sizeof f);
    fabric_topology_parse("leaf-spine", &f.topology);
    f.gpus_per_node = 1;
    snprintf(f.link.name, sizeof f.link.name, "test-link");
    f.link.kind = HW_LINK_INFINIBAND;
    f.link.bytes_per_s = RATE;
    f.link.efficiency = 1;
    f.link.routing = adaptive ? HW_ROUTING_ADAPTIVE : HW_ROUTING_ECMP;
    f.shape.radix = radix;
    f.shape.hosts_per_leaf = down;
    f.shape.over_down = over;
    f.shape.over_up = 1;
    f.routing.balance = adaptive ? TOPO_BALANCE_ADAPTIVE : TOPO_BALANCE_ECMP;
    f.routing.qps = 1;
    f.channels = f.chunks = 1;
    return f;
}

/* serving_checks.h's pools at RATE, LAT (the prefill pool on GPUs 0 ..
 * pre - 1), over fabric f */
static serve_config pools(unsigned pre, unsigned dec, unsigned clients, const fabric_config *f)
{
    serve_config c = serve_test_pools(pre, dec, clients, RATE, LAT);
    c.fabric = f;
    return c;
}

static double bytes_512(const serve_config *c) { return serve_test_kv_bytes(c, 512); }

static void test_shared_uplink(void)
{
    serve_result r, alone;
    sim_error err;
    fabric_config f = leaf_spine(3, 2, 2, 0); /* 2 GPU ports and 1 uplink a leaf */
    serve_config c = pools(2, 2, 2, &f);
    double b = bytes_512(&c);
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    c.fabric = NULL;
    CHECK_INT_EQ(serve_simulate(&c, &alone, &err), 0);
    printf("one uplink: two transfers %.6g ms each (the replicas' links: %.6g ms)\n",
           r.transfer_max_s * 1e3, alone.transfer_max_s * 1e3);
    CHECK_INT_EQ(r.transfers, 2);
    CHECK_REL(r.transfer_mean_s, LAT + 2 * b / RATE, 1e-12);
    CHECK_REL(r.transfer_max_s, LAT + 2 * b / RATE, 1e-12);
    CHECK_REL(alone.transfer_max_s, LAT + b / RATE, 1e-12);
    /* the TTFT (and every later time) moves by the extra b / RATE */
    CHECK_REL(r.ttft.max_s - alone.ttft.max_s, b / RATE, 1e-9);
    /* alone each takes the uplink at its cap (no narrower than the
     * replicas' links): the sharing costs each b / RATE, 2 b / RATE in all;
     * on the replicas' links (two decode replicas) none is slowed */
    CHECK(r.transfer_route_s == 0);
    CHECK_REL(r.transfer_shared_s, 2 * b / RATE, 1e-12);
    CHECK_INT_EQ(r.transfers_in_flight_max, 2);
    CHECK_REL(r.transfer_p50_s, LAT + 2 * b / RATE, 1e-12);
    CHECK(alone.transfer_shared_s == 0 && alone.transfer_route_s == 0);
    CHECK_INT_EQ(alone.transfers_in_flight_max, 2);
    /* three GPUs a leaf, one uplink (3:1): three transfers, a third each */
    f = leaf_spine(4, 3, 3, 0);
    c = pools(3, 3, 3, &f);
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    CHECK_INT_EQ(r.transfers, 3);
    CHECK_REL(r.transfer_mean_s, LAT + 3 * b / RATE, 1e-12);
    CHECK_REL(r.transfer_max_s, LAT + 3 * b / RATE, 1e-12);
    CHECK_REL(r.transfer_shared_s, 3 * 2 * b / RATE, 1e-12);
    CHECK(r.transfer_route_s == 0);
    CHECK_INT_EQ(r.transfers_in_flight_max, 3);
}

/* one tp-2 transfer alone from leaf 0 to leaf 1 over leaf 0's one uplink:
 * its two connections (weight 1/2 each) put weight 1 on the uplink, so it
 * moves at RATE, not at its cap 2 x RATE: latency + b / RATE, of which
 * b / (2 RATE) is the narrower route, none the sharing */
static void test_narrow_route(void)
{
    serve_result r, links;
    sim_error err;
    fabric_config f = leaf_spine(3, 2, 2, 0);
    serve_config c = pools(1, 1, 1, &f);
    c.prefill_tp = c.tp = 2;
    c.scaleup_bytes_per_s = 369e9; /* the replicas' TP all-reduces */
    c.scaleup_step_s = 3.4e-6;
    double b = bytes_512(&c);
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    c.fabric = NULL;
    CHECK_INT_EQ(serve_simulate(&c, &links, &err), 0);
    printf("narrow route: a tp-2 transfer %.6g ms over one uplink, %.6g ms on the replicas' "
           "links; route %.6g ms, shared %.6g ms\n", r.transfer_max_s * 1e3,
           links.transfer_max_s * 1e3, r.transfer_route_s * 1e3, r.transfer_shared_s * 1e3);
    CHECK_INT_EQ(r.transfers, 1);
    CHECK_REL(r.transfer_max_s, LAT + b / RATE, 1e-12);
    CHECK_REL(links.transfer_max_s, LAT + b / (2 * RATE), 1e-12);
    CHECK_REL(r.transfer_route_s, b / (2 * RATE), 1e-12);
    CHECK(r.transfer_shared_s == 0);
    CHECK(links.transfer_route_s == 0 && links.transfer_shared_s == 0);
    CHECK_INT_EQ(r.transfers_in_flight_max, 1);
    /* the split adds up: total = alone on the links + route + shared */
    CHECK_REL(r.transfer_mean_s * r.transfers,
              links.transfer_mean_s + r.transfer_route_s + r.transfer_shared_s, 1e-12);
}

static void test_nonblocking(void)
{
    serve_result r, alone;
    sim_error err;
    fabric_config f = leaf_spine(4, 2, 1, 1); /* 2 ports, 2 uplinks a leaf; adaptive */
    for (unsigned n = 1; n <= 2; n++) {
        serve_config c = pools(2, 2, n, &f);
        CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
        c.fabric = NULL;
        CHECK_INT_EQ(serve_simulate(&c, &alone, &err), 0);
        CHECK_INT_EQ(r.transfers, n);
        CHECK_REL(r.transfer_max_s, LAT + bytes_512(&c) / RATE, 1e-12);
        CHECK_REL(r.transfer_mean_s, alone.transfer_mean_s, 1e-12);
        CHECK_REL(r.ttft.max_s, alone.ttft.max_s, 1e-12);
        CHECK_REL(r.e2e.mean_s, alone.e2e.mean_s, 1e-12);
        CHECK(r.transfer_route_s == 0 && r.transfer_shared_s == 0);
    }
}

static void test_stream(void)
{
    fabric_config f = leaf_spine(3, 2, 2, 0);
    serve_config c = pools(2, 2, 0, &f);
    serve_test_kv_stream(&c);
    serve_result r, again, links;
    sim_error err;
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), 0);
    CHECK_INT_EQ(serve_simulate(&c, &again, &err), 0);
    c.fabric = NULL;
    CHECK_INT_EQ(serve_simulate(&c, &links, &err), 0);
    printf("stream: %llu finished, %llu transfers; transfer mean %.4g ms P99 %.4g ms over the "
           "fabric, %.4g ms %.4g ms on the replicas' links\n", (unsigned long long)r.finished,
           (unsigned long long)r.transfers, r.transfer_mean_s * 1e3, r.transfer_p99_s * 1e3,
           links.transfer_mean_s * 1e3, links.transfer_p99_s * 1e3);
    CHECK(r.finished > 700);
    CHECK_INT_EQ(r.arrived, r.finished + r.dropped);
    CHECK_INT_EQ(r.in_flight, 0);
    CHECK_INT_EQ(r.transfers, links.transfers);
    CHECK_REL(r.transfer_bytes, links.transfer_bytes, 1e-15);
    CHECK_REL(r.little_l, r.little_lambda * r.little_w, 1e-9);
    CHECK(!memcmp(&r.ttft, &again.ttft, sizeof r.ttft) &&
          !memcmp(&r.e2e, &again.e2e, sizeof r.e2e) && r.end_s == again.end_s &&
          r.transfer_mean_s == again.transfer_mean_s && r.iterations == again.iterations);
    /* the one uplink is narrower than the two senders' links together */
    CHECK(r.transfer_mean_s > links.transfer_mean_s);
    /* tp 1 on a link as fast as the replicas': no narrower route, and the
     * time over the links' is the sharing's (the transfers themselves
     * differ: the slower ones change the decode replicas' load) */
    CHECK(r.transfer_route_s == 0);
    CHECK(r.transfer_shared_s > 0 && r.transfer_shared_s < r.transfer_mean_s * r.transfers);
    CHECK(r.transfers_in_flight_max >= 2);
}

static void test_refusals(void)
{
    serve_result r;
    sim_error err;
    fabric_config f = leaf_spine(3, 2, 2, 0);
    serve_config c = pools(2, 2, 2, &f);
    c.kv_contention = SERVE_KV_QUEUED;
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), SIM_ERR_INPUT);
    CHECK(strstr(err.msg, "shared") != NULL);
    c = pools(2, 2, 2, &f);
    c.node_gpus = 2; /* the fabric's nodes are of one GPU */
    c.kv_intra_bytes_per_s = RATE;
    sim_error_clear(&err);
    CHECK_INT_EQ(serve_simulate(&c, &r, &err), SIM_ERR_INPUT);
    CHECK(strstr(err.msg, "GPUs a node") != NULL);
}

int main(void)
{
    test_shared_uplink();
    test_narrow_route();
    test_nonblocking();
    test_stream();
    test_refusals();
    return check_report();
}
