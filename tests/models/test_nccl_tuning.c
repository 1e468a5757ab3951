/* test_nccl_tuning.c - NCCL's tuning model (models/nccl_tuning.c) against
 * the collective microbenchmarks of the reference sheets, and its picks.
 *
 * Inputs are component figures only: the per-GPU NVLink rates are the
 * maintainers' effective ring rates (A100 12 x ~20 GB/s = 240 GB/s,
 * nccl-tests #149; H100/H200 ~370 GB/s, nccl-tests #212; calibration.md 3,
 * V), the NIC the NDR per-NIC busbw (47 GB/s, the middle of 46-48,
 * calibration.md 3, nccl-tests #290, V). No constant is fitted here; the
 * busbw tables are the check. Every comparison prints "model vs measured"
 * on stderr (the table quoted in docs/fabric.md).
 *
 * Tolerances: large messages within 10 % where NCCL's bandwidth model is the
 * physics (A100 ring, >= 256 MiB); NVLS within 15 % from 1 GiB ("256M is too
 * small to reach peak", nccl-tests #212, calibration.md 3)
 * (NCCL's 5/6 factor on the 370 GB/s NVLink rate predicts algbw 308 GB/s
 * where the maintainer states ~275: the gap is in NCCL's model, and the
 * simulated time uses the measured NVLS rate of the link catalog instead,
 * tests/app/test_netbench.c); mid and small sizes printed with what they
 * give: NCCL's alpha-beta model ramps faster than the measured curves
 * (pipeline fill, not modelled) and its latency floors are lower than the
 * measured ones (components.md 4.1 calls A100's 45 us "unexplained").
 */
#include <math.h>
#include <stdio.h>

#include "check.h"
#include "nccl_tuning.h"

#define GB 1e9
#define MIB 1048576.0

static nccl_tune_in node(unsigned gpus, double intra, int nvls)
{
    return (nccl_tune_in){.coll = NC_ALLREDUCE, .ranks = gpus, .nodes = 1,
                          .intra_bytes_per_s = intra, .inter_bytes_per_s = 47 * GB,
                          .has_nvls = nvls};
}

/* nccl-tests' busbw of an all-reduce of S bytes taking t (calibration.md 3) */
static double busbw(double S, double t, unsigned n)
{
    return S / t * 2.0 * (n - 1) / n;
}

static double model_busbw(nccl_tune_in in, double S, nccl_tune_out *out)
{
    in.bytes = S;
    CHECK(nccl_tune(&in, out) == 0);
    return busbw(S, out->time_s[out->algo][out->proto], in.ranks);
}

/* One curve: model vs measured at each size; sizes >= min_mib within tol. */
static void curve(const char *name, nccl_tune_in in, const double *mib, const double *gbps,
                  int k, double min_mib, double tol)
{
    fprintf(stderr, "%s (model: NCCL's pick)\n%10s %10s %10s %8s  %s\n", name, "size MiB",
            "measured", "model", "error", "pick");
    for (int i = 0; i < k; i++) {
        nccl_tune_out out;
        double b = model_busbw(in, mib[i] * MIB, &out) / GB;
        fprintf(stderr, "%10.4g %10.2f %10.2f %+7.1f%%  %s/%s\n", mib[i], gbps[i], b,
                100 * (b / gbps[i] - 1), nccl_algo_name(out.algo), nccl_proto_name(out.proto));
        if (mib[i] >= min_mib)
            CHECK_REL(b, gbps[i], tol);
    }
}

/* calibration.md 3: Azure ND A100 v4, 8 x A100, AllReduce (V). A100 has no
 * NVLS: NCCL's model picks the ring; Simple at large sizes. */
static void test_a100_node(void)
{
    static const double mib[] = {1, 16, 128, 256, 1024, 8192};
    static const double gbps[] = {36.22, 109.22, 174.18, 213.87, 228.10, 231.58};
    nccl_tune_in in = node(8, 240 * GB, 0);
    curve("8x A100 AllReduce, Azure ND A100 v4 (calibration.md 3)", in, mib, gbps, 6, 256, 0.10);
    nccl_tune_out out;
    model_busbw(in, 8192 * MIB, &out);
    CHECK(out.algo == NCCL_ALGO_RING && out.proto == NCCL_PROTO_SIMPLE);
}

/* calibration.md 3: Azure ND H100 v5 NVLS (V); components.md 4.1: Azure ND
 * H200 v5 NVLS (V). Same NVLink 4 switch: one input. */
static void test_h100_h200_nvls(void)
{
    static const double h100_mib[] = {1, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192};
    static const double h100[] = {43.70, 234.45, 361.78, 400.61, 423.38,
                                  438.46, 466.35, 472.36, 475.54, 478.87};
    static const double h200_mib[] = {1, 4, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192};
    static const double h200[] = {52.96, 138.44, 240.41, 368.11, 412.45, 432.24,
                                  442.72, 467.58, 472.57, 477.41, 479.98};
    nccl_tune_in in = node(8, 370 * GB, 1);
    curve("8x H100 AllReduce NVLS, Azure ND H100 v5 (calibration.md 3)", in, h100_mib, h100, 10,
          1024, 0.15);
    curve("8x H200 AllReduce NVLS, Azure ND H200 v5 (components.md 4.1)", in, h200_mib, h200,
          11, 1024, 0.15);
    nccl_tune_out out;
    model_busbw(in, 8192 * MIB, &out);
    CHECK(out.algo == NCCL_ALGO_NVLS && out.proto == NCCL_PROTO_SIMPLE);
}

/* calibration.md 3 (nccl #1455, S): at 2-4 GiB, ring 365-370 GB/s for 2-8
 * GPUs; NVLS 370 up to 4 GPUs, then 420 / 440 / 460 / 480 at 5-8. The
 * model's ring is flat at the input rate (within 2 %); its NVLS rises with
 * n (2(n-1)/n x 5/6 x 370) and is 12-17 % above the measured 5-8 GPU points
 * (the same NCCL factor as above); at 3-4 GPUs it picks NVLS (busbw 411,
 * 462) where the measurement shows no gain: NCCL's model has no term for it. */
static void test_nvls_trend(void)
{
    static const double nvls[] = {370, 370, 370, 420, 440, 460, 480};
    fprintf(stderr, "H100 NVLS vs GPUs at 4 GiB (nccl #1455)\n%5s %9s %9s %9s %9s  %s\n",
            "GPUs", "ring", "meas.", "NVLS", "meas.", "pick");
    double last = 0;
    for (unsigned n = 2; n <= 8; n++) {
        nccl_tune_in in = node(n, 370 * GB, 1);
        nccl_tune_out out;
        model_busbw(in, 4096 * MIB, &out);
        double ring = busbw(4096 * MIB, out.time_s[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE], n) / GB;
        double nv = busbw(4096 * MIB, out.time_s[NCCL_ALGO_NVLS][NCCL_PROTO_SIMPLE], n) / GB;
        fprintf(stderr, "%5u %9.1f %9.1f %9.1f %9.1f  %s\n", n, ring, 367.5, nv, nvls[n - 2],
                nccl_algo_name(out.algo));
        CHECK_REL(ring, 367.5, 0.02);
        CHECK(nv > last);
        last = nv;
        if (n >= 5)
            CHECK_REL(nv, nvls[n - 2], 0.18);
    }
}

/* components.md 4.2 (nccl-tests #232, S): 2 nodes x 1 H100, NCCL_ALGO=Tree,
 * busbw = algbw for 2 ranks: 2 MB 18.5, 4 MB 27.2, 8 MB 36.2, 16 MB 39.9,
 * 32 MB 41.3 GB/s. The node's NICs and PCIe path are not stated, so the
 * per-GPU bandwidth is the one for which NCCL's tree bandwidth (0.5 x 0.92 x
 * bw, Simple) equals the 32 MB point; what is checked is the ramp below it,
 * which NCCL's tree latencies (LL128 14 + 2 x 8.5 us, Simple 2 x 28 us) set.
 * The model picks LL128 up to 8 MB: +33 % at 2 MB, within 10 % from 8 MB. */
static void test_two_node_tree(void)
{
    static const double mib[] = {2, 4, 8, 16, 32};
    static const double meas[] = {18.5, 27.2, 36.2, 39.9, 41.3};
    nccl_tune_in in = {.coll = NC_ALLREDUCE, .ranks = 2, .nodes = 2,
                       .inter_bytes_per_s = 41.3 * GB / (0.5 * 0.92)};
    fprintf(stderr, "2 nodes x 1 H100, Tree (components.md 4.2)\n%8s %9s %9s %8s  %s\n", "MiB",
            "measured", "model", "error", "protocol");
    for (int i = 0; i < 5; i++) {
        in.bytes = mib[i] * MIB;
        nccl_tune_out out;
        CHECK(nccl_tune(&in, &out) == 0);
        int p = NCCL_PROTO_LL;
        for (int q = 1; q < NCCL_PROTO_COUNT; q++)
            if (out.time_s[NCCL_ALGO_TREE][q] < out.time_s[NCCL_ALGO_TREE][p])
                p = q;
        double b = in.bytes / out.time_s[NCCL_ALGO_TREE][p] / GB; /* x 2(1)/2 = 1 */
        fprintf(stderr, "%8.0f %9.1f %9.1f %+7.1f%%  %s\n", mib[i], meas[i], b,
                100 * (b / meas[i] - 1), nccl_proto_name(p));
        CHECK_REL(b, meas[i], mib[i] >= 8 ? 0.10 : 0.35);
    }
}

/* components.md 4.1 (D from the Azure curves): small-message times H100
 * 1 KB 26 us, 1 MB 42 us; H200 30, 35 us; A100 45, 51 us. NCCL's model
 * gives less at 1 KB (ring LL: 6.6 + 14 x 0.6 = 15 us): the measured floors
 * hold launch and host costs the tuner does not model, and A100's is
 * unexplained in the sheet. Asserted: the model never beats its own
 * constants, and stays below the measured floor. */
static void test_small_message_floors(void)
{
    struct { const char *gpu; double intra; int nvls; double t1k, t1m; } r[] = {
        {"H100", 370 * GB, 1, 26e-6, 42e-6},
        {"H200", 370 * GB, 1, 30e-6, 35e-6},
        {"A100", 240 * GB, 0, 45e-6, 51e-6},
    };
    fprintf(stderr, "small messages, 8 GPUs (components.md 4.1)\n%5s %6s %9s %9s  %s\n", "GPU",
            "size", "measured", "model", "pick");
    for (int i = 0; i < 3; i++) {
        nccl_tune_in in = node(8, r[i].intra, r[i].nvls);
        double sz[2] = {1024, MIB}, meas[2] = {r[i].t1k, r[i].t1m};
        for (int k = 0; k < 2; k++) {
            nccl_tune_out out;
            in.bytes = sz[k];
            CHECK(nccl_tune(&in, &out) == 0);
            double t = out.time_s[out.algo][out.proto];
            fprintf(stderr, "%5s %6s %7.1fus %7.1fus  %s/%s\n", r[i].gpu, k ? "1 MiB" : "1 KiB",
                    meas[k] * 1e6, t * 1e6, nccl_algo_name(out.algo),
                    nccl_proto_name(out.proto));
            CHECK(t <= meas[k] * 1.05);
            CHECK(t >= 6.6e-6 + 14 * 0.6e-6 - 1e-12); /* ring LL, the lowest latency */
        }
    }
}

/* Closed forms of the latency (hardware.md 7.2-7.3): one node of 8 (ring
 * Simple 8.4 + 14 x 3.4 us); 8 nodes of 8 (8.4 + 112 x max(3.4, 3 x 1) +
 * 14 x 14, x 1.4); tree over 64 nodes, one GPU each, LL128 (14 + 2 x 6 x
 * 8.5); NVLS in one node 23 us. */
static void test_latency_closed_forms(void)
{
    nccl_tune_out out;
    nccl_tune_in in = node(8, 370 * GB, 1);
    in.bytes = 0;
    CHECK(nccl_tune(&in, &out) == 0);
    CHECK_REL(out.latency_s[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE], (8.4 + 14 * 3.4) * 1e-6, 1e-9);
    CHECK_REL(out.latency_s[NCCL_ALGO_NVLS][NCCL_PROTO_SIMPLE], 23e-6, 1e-9);
    CHECK(isinf(out.time_s[NCCL_ALGO_NVLS][NCCL_PROTO_LL]));
    in.ranks = 64;
    in.nodes = 8;
    CHECK(nccl_tune(&in, &out) == 0);
    CHECK_REL(out.latency_s[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE],
              1.4 * (8.4 + 112 * 3.4 + 14 * 14) * 1e-6, 1e-9);
    CHECK(isinf(out.time_s[NCCL_ALGO_NVLS][NCCL_PROTO_SIMPLE])); /* no SHARP: no NVLS across */
    in = (nccl_tune_in){.coll = NC_ALLREDUCE, .ranks = 64, .nodes = 64,
                        .inter_bytes_per_s = 47 * GB};
    CHECK(nccl_tune(&in, &out) == 0);
    CHECK_REL(out.latency_s[NCCL_ALGO_TREE][NCCL_PROTO_LL128], (14 + 2 * 6 * 8.5) * 1e-6, 1e-9);
    CHECK_REL(out.latency_s[NCCL_ALGO_RING][NCCL_PROTO_LL], (6.6 + 126 * 2.7) * 1e-6, 1e-9);
}

/* The picks that matter to the step tier: a 64-way data-parallel group (one
 * GPU per node) never pays the ring's 126 network steps for buckets up to
 * 64 MiB (tree wins), takes the ring at 1 GiB; reduce-scatter and
 * all-gather are ring only; all-to-all is refused (not NCCL-tuned). The
 * wire floor and the scenario's Ring/Simple hwLat replace the table. */
static void test_picks(void)
{
    nccl_tune_in in = {.coll = NC_ALLREDUCE, .ranks = 64, .nodes = 64,
                       .inter_bytes_per_s = 47 * GB};
    nccl_tune_out out;
    for (double s = 1024; s <= 64 * MIB; s *= 8) {
        in.bytes = s;
        CHECK(nccl_tune(&in, &out) == 0);
        CHECK(out.algo == NCCL_ALGO_TREE);
        CHECK(out.time_s[NCCL_ALGO_TREE][out.proto] <
              out.time_s[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] / 2);
    }
    in.bytes = 1024 * MIB;
    CHECK(nccl_tune(&in, &out) == 0);
    CHECK(out.algo == NCCL_ALGO_RING && out.proto == NCCL_PROTO_SIMPLE);
    in.coll = NC_REDUCESCATTER;
    CHECK(nccl_tune(&in, &out) == 0);
    CHECK(out.algo == NCCL_ALGO_RING && isinf(out.time_s[NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE]));
    in.coll = NC_ALLTOALL;
    CHECK(nccl_tune(&in, &out) == -1);
    in.coll = NC_ALLREDUCE;
    in.inter_ring_simple_lat_s = 20e-6;
    in.inter_wire_latency_s = 30e-6;
    in.bytes = 0;
    CHECK(nccl_tune(&in, &out) == 0);
    CHECK_REL(out.latency_s[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE], 1.4 * (8.4 + 126 * 30) * 1e-6,
              1e-9);
    CHECK_REL(out.latency_s[NCCL_ALGO_TREE][NCCL_PROTO_LL], (6.8 + 2 * 6 * 30) * 1e-6, 1e-9);
    CHECK(nccl_tune_channels(&in) == 2);
    CHECK(fabs(nccl_proto_wire_efficiency(NCCL_PROTO_LL128) - 0.9375) < 1e-12);
}

/* More bandwidth is never slower; more bytes never faster. */
static void test_monotone(void)
{
    nccl_tune_in in = node(8, 240 * GB, 0);
    double prev = 0;
    for (double s = 8; s <= 8192 * MIB; s *= 4) {
        nccl_tune_out a, b;
        in.bytes = s;
        in.intra_bytes_per_s = 240 * GB;
        CHECK(nccl_tune(&in, &a) == 0);
        in.intra_bytes_per_s = 480 * GB;
        CHECK(nccl_tune(&in, &b) == 0);
        double ta = a.time_s[a.algo][a.proto], tb = b.time_s[b.algo][b.proto];
        CHECK(tb <= ta);
        CHECK(ta >= prev);
        prev = ta;
    }
}

int main(void)
{
    test_a100_node();
    test_h100_h200_nvls();
    test_nvls_trend();
    test_two_node_tree();
    test_small_message_floors();
    test_latency_closed_forms();
    test_picks();
    test_monotone();
    return check_report();
}
