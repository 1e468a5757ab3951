/* hardware.c - from a catalog GPU to a timing device (defaults in hardware.h;
 * the measured kernel constants in kernel_table.h, docs/step.md "Kernels"). */
#include "hardware.h"

#include <string.h>

#include "attention.h"
#include "kernel_table.h"

/* CTA tiles a device with a kernel-table entry chooses from, 256 x 128 (the
 * hardware.md 2.2 example) first so that it wins ties */
static void set_tiles(compute_device *d)
{
    static const unsigned sizes[] = KERN_TILE_SIZES;
    unsigned n = sizeof sizes / sizeof sizes[0];
    d->gemm_tiles[0][0] = HW_TILE_M;
    d->gemm_tiles[0][1] = HW_TILE_N;
    d->n_gemm_tiles = 1;
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < n; j++) {
            if (sizes[i] == HW_TILE_M && sizes[j] == HW_TILE_N)
                continue;
            d->gemm_tiles[d->n_gemm_tiles][0] = sizes[i];
            d->gemm_tiles[d->n_gemm_tiles][1] = sizes[j];
            d->n_gemm_tiles++;
        }
}

/* the memory tiers: the catalog's <memory efficiency-by-size>, else for a
 * GPU with kernel-table entry the flat 0.90 the GEMM fit assumed, else
 * calculon's table */
static void set_memory(const hw_gpu *g, int has_entry, compute_device *d)
{
    static const double tier_bytes[4] = {0, 1e6, 10e6, 100e6};
    static const double tier_eff[4] = {0.30, 0.60, 0.75, HW_MEM_EFFICIENCY};
    d->mem_bytes_per_s = g->hbm_bytes_per_s;
    d->mem_efficiency = HW_MEM_EFFICIENCY;
    /* a GPU with measured kernels: the flat 0.90 its GEMM fit assumed for
     * operand traffic (memory-bound ops use the entry's fused/eager rates) */
    int own = g->n_mem_tiers > 0 && !has_entry;
    d->n_mem_tiers = own ? g->n_mem_tiers : has_entry ? 0 : 4;
    for (unsigned i = 0; i < d->n_mem_tiers; i++) {
        d->mem_tier_min_bytes[i] = own ? g->mem_tier_min_bytes[i] : tier_bytes[i];
        d->mem_tier_efficiency[i] = own ? g->mem_tier_efficiency[i] : tier_eff[i];
    }
}

int hw_compute_device_fw(const hw_gpu *g, int precision, const framework_config *fw,
                         compute_device *out, sim_error *err)
{
#define FAIL(...) return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, __VA_ARGS__)
    if (precision < 0 || precision >= PREC_COUNT)
        FAIL("unknown precision %d", precision);
    if (!(g->peak_flops_per_s[precision] > 0))
        FAIL("GPU type '%s' has no %s peak in the catalog", g->name, precision_name(precision));
    kern_gpu k;
    int has_entry = kern_gpu_of(g->name, &k) == 0;
    double ceiling = has_entry && k.gemm_ceiling[precision] > 0 ? k.gemm_ceiling[precision]
                                                                : g->gemm_efficiency[precision];
    if (!(ceiling > 0))
        FAIL("GPU type '%s' has no measured GEMM efficiency at %s; add gemm-efficiency to its "
             "<peak precision=\"%s\"> in the catalog",
             g->name, precision_name(precision), precision_name(precision));
    if (!(g->hbm_bytes_per_s > 0))
        FAIL("GPU type '%s' has no memory bandwidth in the catalog", g->name);
    if (fw) {
        int rc = attn_kernel_check(has_entry ? k.family : KFAM_NONE, fw->attention_kernel,
                                   g->name, err);
        if (rc)
            return rc;
    }
#undef FAIL
    compute_device d;
    memset(&d, 0, sizeof d);
    for (int p = 0; p < PREC_COUNT; p++)
        d.peak_flops_per_s[p] = g->peak_flops_per_s[p];
    d.gemm_efficiency = ceiling;
    d.attention_efficiency = d.gemm_efficiency; /* only for ops without a shape */
    set_memory(g, has_entry, &d);
    d.sms = g->sms;
    d.ctas_per_sm = 1;
    d.tile_m = HW_TILE_M;
    d.tile_n = HW_TILE_N;
    d.launch_s = g->launch_overhead_s;
    if (has_entry) {
        set_tiles(&d);
        d.gemm_fixed_s = k.gemm_fixed_s;
        d.roofline_p = KERN_ROOFLINE_P;
        d.mem_fused_efficiency = k.mem_fused_efficiency;
        d.mem_eager_efficiency = k.mem_eager_efficiency;
        d.mem_fixed_s = k.mem_fixed_s;
        d.attn_family = k.family;
        for (unsigned i = 0; k.beside_slowdown && i < KERN_BESIDE_POINTS; i++) {
            d.beside_k[i] = kern_beside_k[i];
            d.beside_slowdown[i] = k.beside_slowdown[i];
            d.n_beside = i + 1;
        }
    }
    if (fw) { /* a training framework on an asynchronous GPU */
        d.launch_overlaps = 1;
        if (fw->launch_overhead_s > 0)
            d.launch_s = fw->launch_overhead_s;
        else if (fw->cuda_graphs)
            d.launch_s = KERN_GRAPH_LAUNCH_S;
        else /* through the framework's Python path: at least its 5-9 us
              * (components.md 3.4), never below the device's bare launch */
            d.launch_s = d.launch_s > KERN_LAUNCH_S ? d.launch_s : KERN_LAUNCH_S;
    }
    *out = d;
    return 0;
}

int hw_compute_device(const hw_gpu *g, int precision, compute_device *out, sim_error *err)
{
    return hw_compute_device_fw(g, precision, NULL, out, err);
}
