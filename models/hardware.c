/* hardware.c - from a catalog GPU to a timing device (defaults in hardware.h). */
#include "hardware.h"

#include <string.h>

int hw_compute_device(const hw_gpu *g, int precision, compute_device *out, sim_error *err)
{
#define FAIL(...) return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, __VA_ARGS__)
    if (precision < 0 || precision >= PREC_COUNT)
        FAIL("unknown precision %d", precision);
    if (!(g->peak_flops_per_s[precision] > 0))
        FAIL("GPU type '%s' has no %s peak in the catalog", g->name, precision_name(precision));
    if (!(g->gemm_efficiency[precision] > 0))
        FAIL("GPU type '%s' has no measured GEMM efficiency at %s; add gemm-efficiency to its "
             "<peak precision=\"%s\"> in the catalog",
             g->name, precision_name(precision), precision_name(precision));
    if (!(g->hbm_bytes_per_s > 0))
        FAIL("GPU type '%s' has no memory bandwidth in the catalog", g->name);
#undef FAIL
    compute_device d;
    memset(&d, 0, sizeof d);
    for (int p = 0; p < PREC_COUNT; p++)
        d.peak_flops_per_s[p] = g->peak_flops_per_s[p];
    d.gemm_efficiency = g->gemm_efficiency[precision];
    d.attention_efficiency = d.gemm_efficiency;
    d.mem_bytes_per_s = g->hbm_bytes_per_s;
    d.mem_efficiency = HW_MEM_EFFICIENCY;
    static const double tier_bytes[4] = {0, 1e6, 10e6, 100e6};
    static const double tier_eff[4] = {0.30, 0.60, 0.75, HW_MEM_EFFICIENCY};
    int own = g->n_mem_tiers > 0;
    d.n_mem_tiers = own ? g->n_mem_tiers : 4;
    for (unsigned i = 0; i < d.n_mem_tiers; i++) {
        d.mem_tier_min_bytes[i] = own ? g->mem_tier_min_bytes[i] : tier_bytes[i];
        d.mem_tier_efficiency[i] = own ? g->mem_tier_efficiency[i] : tier_eff[i];
    }
    d.sms = g->sms;
    d.ctas_per_sm = 1;
    d.tile_m = HW_TILE_M;
    d.tile_n = HW_TILE_N;
    d.launch_s = g->launch_overhead_s;
    *out = d;
    return 0;
}
