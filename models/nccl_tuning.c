/* nccl_tuning.c - NCCL's tuning model (see nccl_tuning.h): latency and
 * bandwidth per (algorithm, protocol), and the pick. Every constant is from
 * shared/reference/hardware.md 7.2-7.3 (tuning.cc at b6475625, V) or
 * components.md 4.3 (D); what the sheets lack is listed in docs/fabric.md
 * ("NCCL's tuning model") and is not applied. The maths, with n ranks over
 * m nodes of p = n/m GPUs:
 *   ring:     base + (s - s_net) max(intra, netOverhead) + s_net inter, with
 *             s = 2(n-1), s_net = 2(m-1) for all-reduce (s = n-1, s_net = m-1
 *             otherwise); x1.4 for a multi-node Ring/Simple all-reduce;
 *             algbw = busBw n/s (s = n for broadcast)
 *   tree:     base + 2((p-1) intra + ceil(log2 m) inter); algbw = busBw/2
 *   collnet:  direct 2(min(1,p-1) intra + (p-1) 0.4 us) + inter,
 *             chain 2(p-1) intra + inter; algbw = busBw/2
 *   NVLS:     intra (+ inter when m > 1); NVLSTree: intra + 2 log2(m) inter;
 *             algbw = busBw 5/6
 * busBw = the per-GPU bandwidth (intra when m <= 2 or CollNet, else inter;
 * NVLS min(intra, inter), NVLSTree min(intra, inter/2) for m > 2) times the
 * factors of hardware.md 7.3.
 */
#include "nccl_tuning.h"

#include <math.h>

#define US 1e-6
#define GBPS 1e9
#define NA NAN /* not defined for this protocol */

/* hardware.md 7.3, newer version (b6475625), V: {LL, LL128, Simple} in us */
static const double base_lat_us[NCCL_ALGO_COUNT][NCCL_PROTO_COUNT] = {
    {6.8, 14.0, 0}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
static const double nvlink_lat_us[NCCL_ALGO_COUNT][NCCL_PROTO_COUNT] = {
    {0.6, 1.25, 28}, {0.6, 1.9, 3.4}, {NA, NA, 3.7}, {NA, NA, 2.8}, {NA, NA, 23}, {NA, NA, 23}};
/* PCI: Tree and Ring only in the sheet; the others are NVLink-only
 * algorithms here (NVLS) or take NVLink's value (CollNet; docs/fabric.md) */
static const double pci_lat_us[NCCL_ALGO_COUNT][NCCL_PROTO_COUNT] = {
    {1.0, 1.9, 28}, {1.0, 2.5, 5.7}, {NA, NA, 3.7}, {NA, NA, 2.8}, {NA, NA, 23}, {NA, NA, 23}};
static const double net_lat_us[NCCL_ALGO_COUNT][NCCL_PROTO_COUNT] = {
    {5.0, 8.5, 28}, {2.7, 4.0, 14.0}, {NA, NA, 31}, {NA, NA, 30}, {NA, NA, 18}, {NA, NA, 14}};

/* Per-channel maximum tree bandwidth on Hopper, GB/s, {LL, LL128, Simple}
 * (hardware.md 7.3, V); the only generation in the sheets, used for all. */
static const double per_ch_max_tree_gbps[NCCL_PROTO_COUNT] = {38.7, 41.4, 36.0};

#define NET_OVERHEAD_INTEL_US 1.0   /* hardware.md 7.3, V (AMD hosts: 2 us) */
#define SIMPLE_NET_OVERHEAD_MUL 3.0 /* hardware.md 7.3, V */
#define RING_SIMPLE_PLATEAU 1.4     /* multi-node Ring/Simple all-reduce, cc >= 8.0 (7.3, V) */
#define COLLNET_ARITY_US 0.4        /* "arity serialization" (hardware.md 7.2, V) */

static const char *const algo_names[] = {"tree", "ring", "collnet-direct", "collnet-chain",
                                         "nvls", "nvlstree"};
static const char *const proto_names[] = {"LL", "LL128", "Simple"};

const char *nccl_algo_name(int a)
{
    return a >= 0 && a < NCCL_ALGO_COUNT ? algo_names[a] : "?";
}

const char *nccl_proto_name(int p)
{
    return p >= 0 && p < NCCL_PROTO_COUNT ? proto_names[p] : "?";
}

double nccl_hw_latency_s(int net, enum nccl_algo a, enum nccl_proto p)
{
    if ((unsigned)a >= NCCL_ALGO_COUNT || (unsigned)p >= NCCL_PROTO_COUNT)
        return NAN;
    return (net ? net_lat_us[a][p] : nvlink_lat_us[a][p]) * US;
}

double nccl_proto_wire_efficiency(enum nccl_proto p)
{
    /* components.md 4.3 (D): LL 8 B data + 8 B flags per 16 B line; LL128
     * 15 x 8 B of data per 128 B line */
    return p == NCCL_PROTO_LL ? 0.5 : p == NCCL_PROTO_LL128 ? 120.0 / 128.0 : 1.0;
}

/* The GPU's bandwidth inside a node: its scale-up link, or (none, or one
 * GPU per node: no intra-node hop) its NIC. */
static double intra_bw(const nccl_tune_in *in)
{
    unsigned ppn = in->ranks / in->nodes;
    return in->intra_bytes_per_s > 0 && ppn > 1 ? in->intra_bytes_per_s : in->inter_bytes_per_s;
}

unsigned nccl_tune_channels(const nccl_tune_in *in)
{
    if (in->channels)
        return in->channels;
    double bw = fmax(intra_bw(in), in->inter_bytes_per_s);
    double c = ceil(bw / (per_ch_max_tree_gbps[NCCL_PROTO_SIMPLE] * GBPS));
    return c > 2 ? (unsigned)fmin(c, 64) : 2; /* MAXCHANNELS = 64 (components.md 4.3) */
}

/* hwLat of a step inside a node / across the network, with the scenario's
 * Ring/Simple overrides and the wire as a floor. */
static double step_lat(const nccl_tune_in *in, int net, int a, int p)
{
    int nvlink = in->intra_bytes_per_s > 0;
    double us = net ? net_lat_us[a][p] : nvlink ? nvlink_lat_us[a][p] : pci_lat_us[a][p];
    double s = us * US;
    double over = net ? in->inter_ring_simple_lat_s : in->intra_ring_simple_lat_s;
    if (a == NCCL_ALGO_RING && p == NCCL_PROTO_SIMPLE && over > 0)
        s = over;
    return fmax(s, net ? in->inter_wire_latency_s : in->intra_wire_latency_s);
}

static int allowed(const nccl_tune_in *in, int a, int p)
{
    unsigned m = in->nodes, ppn = in->ranks / in->nodes;
    int ar = in->coll == NC_ALLREDUCE, simple = p == NCCL_PROTO_SIMPLE;
    switch (a) {
    case NCCL_ALGO_RING:
        return 1;
    case NCCL_ALGO_TREE:
        return ar;
    case NCCL_ALGO_COLLNET_DIRECT:
    case NCCL_ALGO_COLLNET_CHAIN: /* COLLNET_NODE_THRESHOLD = 2 (components.md 4.3) */
        return ar && simple && in->has_collnet && m >= 2;
    case NCCL_ALGO_NVLS: /* across nodes NVLS needs SHARP for the inter-node part */
        return ar && simple && in->has_nvls && ppn > 1 && (m == 1 || in->has_collnet);
    case NCCL_ALGO_NVLS_TREE:
        return ar && simple && in->has_nvls && ppn > 1 && m > 1 && in->whole_domains;
    default:
        return 0;
    }
}

static double latency(const nccl_tune_in *in, int a, int p)
{
    unsigned n = in->ranks, m = in->nodes, ppn = n / m;
    int ar = in->coll == NC_ALLREDUCE;
    double intra = step_lat(in, 0, a, p), inter = step_lat(in, 1, a, p);
    double lat = base_lat_us[a][p] * US;
    double depth = m > 1 ? ceil(log2((double)m)) : 0;
    switch (a) {
    case NCCL_ALGO_RING: {
        double s = ar ? 2.0 * (n - 1) : n - 1, s_net = m > 1 ? (ar ? 2.0 : 1.0) * (m - 1) : 0;
        double over = m > 1 ? NET_OVERHEAD_INTEL_US * US : 0;
        if (in->net_overhead_s > 0 && m > 1)
            over = in->net_overhead_s;
        if (p == NCCL_PROTO_SIMPLE)
            over *= SIMPLE_NET_OVERHEAD_MUL;
        lat += (s - s_net) * fmax(intra, over) + s_net * inter;
        if (ar && m > 1 && p == NCCL_PROTO_SIMPLE)
            lat *= RING_SIMPLE_PLATEAU;
        return lat;
    }
    case NCCL_ALGO_TREE:
        return lat + 2 * ((ppn - 1) * intra + depth * inter);
    case NCCL_ALGO_COLLNET_DIRECT:
        return lat + 2 * ((ppn > 1 ? 1 : 0) * intra + (ppn - 1) * COLLNET_ARITY_US * US) + inter;
    case NCCL_ALGO_COLLNET_CHAIN:
        return lat + 2 * (ppn - 1) * intra + inter;
    case NCCL_ALGO_NVLS:
        return intra + (m > 1 ? inter : 0);
    default: /* NVLSTree */
        return lat + intra + 2 * depth * inter;
    }
}

/* NCCL's busBw refinements then busBw -> algbw (hardware.md 7.3, V). */
static double algbw(const nccl_tune_in *in, unsigned C, int a, int p)
{
    unsigned n = in->ranks, m = in->nodes, ppn = n / m;
    int ar = in->coll == NC_ALLREDUCE;
    int collnet = a == NCCL_ALGO_COLLNET_DIRECT || a == NCCL_ALGO_COLLNET_CHAIN;
    double bi = intra_bw(in), be = in->inter_bytes_per_s;
    double bus = m <= 2 || collnet ? bi : be;
    if (a == NCCL_ALGO_NVLS)
        bus = m > 1 ? fmin(bi, be) : bi;
    if (a == NCCL_ALGO_NVLS_TREE)
        bus = fmin(bi, m <= 2 ? be : be / 2);
    if (a == NCCL_ALGO_RING && p == NCCL_PROTO_LL)
        bus *= m > 1 || ar ? 1.0 / 4.0 : 1.0 / 3.0;
    if (a == NCCL_ALGO_RING && p == NCCL_PROTO_LL128)
        bus *= ppn < 2 ? 0.7 : 0.92;
    if (a == NCCL_ALGO_TREE) {
        bus = fmin(bus * 0.92, C * per_ch_max_tree_gbps[p] * GBPS);
        if (p == NCCL_PROTO_LL)
            bus /= 3.8;
        if (p == NCCL_PROTO_LL128)
            bus *= m == 1 ? 7.0 / 9.0 : 120.0 / 128.0;
    }
    if (a == NCCL_ALGO_COLLNET_DIRECT) { /* GPU/NIC factor, f - (f-1)/2 */
        double f = in->gpus_per_nic ? in->gpus_per_nic : 1;
        bus /= f - (f - 1) / 2;
    }
    if (a == NCCL_ALGO_RING) {
        double s = in->coll == NC_BROADCAST ? n : ar ? 2.0 * (n - 1) : n - 1;
        return bus * n / s;
    }
    return bus * (a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLS_TREE ? 5.0 / 6.0 : 0.5);
}

int nccl_tune(const nccl_tune_in *in, nccl_tune_out *out)
{
    if (in->ranks < 2 || in->nodes < 1 || in->nodes > in->ranks || !(in->bytes >= 0) ||
        !isfinite(in->bytes) || !(in->inter_bytes_per_s > 0 || in->intra_bytes_per_s > 0) ||
        in->coll == NC_ALLTOALL || in->coll == NC_SENDRECV ||
        (unsigned)in->coll >= NC_COLLECTIVE_COUNT)
        return -1;
    nccl_tune_in x = *in;
    if (!(x.inter_bytes_per_s > 0)) /* one node without a NIC: never the bottleneck */
        x.inter_bytes_per_s = x.intra_bytes_per_s;
    unsigned C = nccl_tune_channels(&x);
    double best = INFINITY;
    out->algo = NCCL_ALGO_RING;
    out->proto = NCCL_PROTO_SIMPLE;
    out->channels = C;
    for (int a = 0; a < NCCL_ALGO_COUNT; a++)
        for (int p = 0; p < NCCL_PROTO_COUNT; p++) {
            out->time_s[a][p] = out->latency_s[a][p] = INFINITY;
            out->algbw_bytes_per_s[a][p] = 0;
            if (!allowed(&x, a, p))
                continue;
            double lat = x.is_latency_free ? 0 : latency(&x, a, p), bw = algbw(&x, C, a, p);
            if (!(bw > 0))
                continue;
            double t = lat + x.bytes / bw;
            out->latency_s[a][p] = lat;
            out->algbw_bytes_per_s[a][p] = bw;
            out->time_s[a][p] = t;
            if (t < best) {
                best = t;
                out->algo = (enum nccl_algo)a;
                out->proto = (enum nccl_proto)p;
            }
        }
    return 0;
}
