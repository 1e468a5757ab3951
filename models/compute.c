/* compute.c - GPU timing kernels (contract in compute.h).
 *
 * GEMM (NVIDIA DU-09799-001 "Matrix Multiplication Background User's Guide";
 * shared/reference/hardware.md 2.2): T = ceil(m/tile_m) ceil(n/tile_n) output
 * tiles run on S = sms * ctas_per_sm slots in W = ceil(T/S) waves; a slot
 * computes one tile (2 tile_m tile_n k flops) at peak * gemm_eff / S, so
 *   t_compute = W * 2 tile_m tile_n k / (peak gemm_eff / S)
 *             = 2 m n k / (peak gemm_eff * tile_eff * wave_eff),
 *   tile_eff = m n / (ceil(m/tile_m) tile_m * ceil(n/tile_n) tile_n),  wave_eff = T / (W S),
 *   t = launch_s + max(t_compute, bytes / (mem_bw mem_eff))          (roofline).
 * gemm_eff is the measured large-GEMM ceiling (hardware.md 2.1, e.g. H100 SXM
 * BF16 794.5 / 989). Attention and memory-bound ops use the same roofline
 * without quantisation. Batch loops are OpenMP schedule(static) writing
 * per-index outputs; sums run serially in op order, so any thread count gives
 * the same bits. Cost: O(1) per op; compute_eval_gpus is O(n_ops + n_gpus).
 */
#include "compute.h"

#include <math.h>
#include <stdlib.h>

#include "attention.h"
#include "kernel_table.h"

/* "FIELD must be RULE, got VALUE" into err; returns SIM_ERR_INPUT */
static int fail(sim_error *err, const char *field, const char *rule, double value)
{
    return sim_error_set(err, SIM_ERR_INPUT, NULL, 0, "%s must be %s, got %g", field, rule, value);
}

static int is_fraction(double x)
{
    return x > 0 && x <= 1; /* false for NaN */
}

int compute_device_check(const compute_device *d, sim_error *err)
{
    const char *frac_names[] = {"gemm_efficiency", "attention_efficiency", "mem_efficiency"};
    double fracs[] = {d->gemm_efficiency, d->attention_efficiency, d->mem_efficiency};
    for (size_t i = 0; i < sizeof fracs / sizeof fracs[0]; i++)
        if (!is_fraction(fracs[i]))
            return fail(err, frac_names[i], "in (0, 1]", fracs[i]);
    if (!(d->mem_bytes_per_s > 0) || isinf(d->mem_bytes_per_s))
        return fail(err, "mem_bytes_per_s", "> 0 and finite", d->mem_bytes_per_s);
    int n_peaks = 0;
    for (int p = 0; p < PREC_COUNT; p++) {
        double peak = d->peak_flops_per_s[p];
        if (!(peak >= 0) || isinf(peak))
            return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                                 "peak_flops_per_s[%s] must be >= 0 and finite, got %g",
                                 precision_name(p), peak);
        n_peaks += peak > 0;
    }
    if (n_peaks == 0)
        return sim_error_set(err, SIM_ERR_INPUT, NULL, 0,
                             "peak_flops_per_s: no precision has a peak > 0");
    if (d->sms > 0) {
        if (d->ctas_per_sm < 1)
            return fail(err, "ctas_per_sm", ">= 1 when sms > 0", d->ctas_per_sm);
        if (d->tile_m < 1)
            return fail(err, "tile_m", ">= 1 when sms > 0", d->tile_m);
        if (d->tile_n < 1)
            return fail(err, "tile_n", ">= 1 when sms > 0", d->tile_n);
    }
    if (!(d->launch_s >= 0) || isinf(d->launch_s))
        return fail(err, "launch_s", ">= 0 and finite", d->launch_s);
    if (d->n_gemm_tiles > COMPUTE_MAX_TILES)
        return fail(err, "n_gemm_tiles", "at most 16", d->n_gemm_tiles);
    for (unsigned i = 0; i < d->n_gemm_tiles; i++)
        if (d->gemm_tiles[i][0] < 1 || d->gemm_tiles[i][1] < 1)
            return fail(err, "gemm_tiles", ">= 1 in both dimensions",
                        d->gemm_tiles[i][0] < 1 ? d->gemm_tiles[i][0] : d->gemm_tiles[i][1]);
    const char *time_names[] = {"gemm_fixed_s", "mem_fixed_s", "roofline_p"};
    double times[] = {d->gemm_fixed_s, d->mem_fixed_s, d->roofline_p};
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++)
        if (!(times[i] >= 0) || isinf(times[i]))
            return fail(err, time_names[i], ">= 0 and finite", times[i]);
    if (d->mem_fused_efficiency != 0 && !is_fraction(d->mem_fused_efficiency))
        return fail(err, "mem_fused_efficiency", "0 or in (0, 1]", d->mem_fused_efficiency);
    if (d->mem_fused_efficiency > 0 && !is_fraction(d->mem_eager_efficiency))
        return fail(err, "mem_eager_efficiency", "in (0, 1]", d->mem_eager_efficiency);
    if (d->attn_family < 0 || d->attn_family >= KFAM_COUNT)
        return fail(err, "attn_family", "a kernel family (0 none)", d->attn_family);
    if (d->n_beside > COMPUTE_BESIDE_POINTS)
        return fail(err, "n_beside", "at most 12", d->n_beside);
    for (unsigned i = 0; i < d->n_beside; i++) {
        double k = d->beside_k[i], s = d->beside_slowdown[i];
        if (!(k > (i ? d->beside_k[i - 1] : 0)) || isinf(k))
            return fail(err, "beside_k", "ascending, > 0 and finite", k);
        if (!(s >= 1) || isinf(s))
            return fail(err, "beside_slowdown", ">= 1 and finite", s);
    }
    if (d->n_mem_tiers > COMPUTE_MEM_TIERS)
        return fail(err, "n_mem_tiers", "at most 4", d->n_mem_tiers);
    for (unsigned i = 0; i < d->n_mem_tiers; i++) {
        if (!is_fraction(d->mem_tier_efficiency[i]))
            return fail(err, "mem_tier_efficiency", "in (0, 1]",
                        d->mem_tier_efficiency[i]);
        double lo = d->mem_tier_min_bytes[i];
        if (i == 0 ? lo != 0 : !(lo > d->mem_tier_min_bytes[i - 1]) || isinf(lo))
            return fail(err, "mem_tier_min_bytes",
                        i == 0 ? "0 for the first tier" : "ascending and finite", lo);
    }
    return 0;
}

double compute_beside_share(const compute_device *d, double k)
{
    double S = d->sms;
    if (!(k > 0) || !(S > k))
        return 0;
    unsigned n = d->n_beside;
    if (n == 0) /* rule 1: the other SMs do the work */
        return k / (S - k);
    double k_last = d->beside_k[n - 1];
    if (k >= k_last) /* the last point's slowdown grown as rule 1 grows */
        return d->beside_slowdown[n - 1] * (S - k_last) / (S - k) - 1;
    return kern_polyline(d->beside_k, d->beside_slowdown, n, 0, 1, k) - 1;
}

/* dimensions of a GEMM must be positive and finite */
static int is_dim(double x)
{
    return x > 0 && !isinf(x);
}

double compute_tile_efficiency(const compute_device *d, double m, double n)
{
    if (!is_dim(m) || !is_dim(n))
        return -1.0;
    if (d->sms == 0)
        return 1.0;
    double tm = d->tile_m, tn = d->tile_n;
    return (m * n) / (ceil(m / tm) * tm * (ceil(n / tn) * tn));
}

double compute_wave_efficiency(const compute_device *d, double m, double n)
{
    if (!is_dim(m) || !is_dim(n))
        return -1.0;
    if (d->sms == 0)
        return 1.0;
    double slots = (double)d->sms * d->ctas_per_sm;
    double tiles = ceil(m / d->tile_m) * ceil(n / d->tile_n);
    double waves = ceil(tiles / slots);
    return tiles / (waves * slots);
}

/* peak for a precision, or 0 when out of range or unsupported */
static double peak_of(const compute_device *d, int precision)
{
    return precision >= 0 && precision < PREC_COUNT ? d->peak_flops_per_s[precision] : 0.0;
}

static int is_amount(double x)
{
    return x >= 0 && !isinf(x);
}

double compute_mem_efficiency(const compute_device *d, double bytes)
{
    if (d->n_mem_tiers == 0)
        return d->mem_efficiency;
    unsigned i = 0;
    while (i + 1 < d->n_mem_tiers && bytes >= d->mem_tier_min_bytes[i + 1])
        i++;
    return d->mem_tier_efficiency[i];
}

static double memory_time_s(const compute_device *d, double bytes)
{
    return bytes / (d->mem_bytes_per_s * compute_mem_efficiency(d, bytes));
}

/* tile x wave efficiency of one tm x tn tile on d, for a batch of
 * independent m x n outputs quantised together */
static double tile_wave(const compute_device *d, double batch, double m, double n, double tm,
                        double tn)
{
    double slots = (double)d->sms * d->ctas_per_sm;
    double tiles = batch * ceil(m / tm) * ceil(n / tn);
    double padded = ceil(m / tm) * tm * (ceil(n / tn) * tn);
    return (m * n) / padded * tiles / (ceil(tiles / slots) * slots);
}

/* the tile d picks for a batch of m x n outputs and its efficiency */
static double pick_tile(const compute_device *d, double batch, double m, double n,
                        unsigned *tile_m, unsigned *tile_n)
{
    unsigned tm = d->tile_m, tn = d->tile_n;
    double best = d->n_gemm_tiles ? -1.0 : tile_wave(d, batch, m, n, tm, tn);
    /* cuBLAS picks a kernel per shape; the best quantisation stands for it
     * (first tile wins ties, so the order of gemm_tiles is a preference) */
    for (unsigned i = 0; i < d->n_gemm_tiles; i++) {
        double q = tile_wave(d, batch, m, n, d->gemm_tiles[i][0], d->gemm_tiles[i][1]);
        if (q > best) {
            best = q;
            tm = d->gemm_tiles[i][0];
            tn = d->gemm_tiles[i][1];
        }
    }
    *tile_m = tm;
    *tile_n = tn;
    return best;
}

double compute_gemm_tile(const compute_device *d, double m, double n, unsigned *tile_m,
                         unsigned *tile_n)
{
    if (!is_dim(m) || !is_dim(n))
        return -1.0;
    if (d->sms == 0) {
        *tile_m = d->tile_m;
        *tile_n = d->tile_n;
        return 1.0;
    }
    return pick_tile(d, 1.0, m, n, tile_m, tile_n);
}

/* the roofline: max(c, m), or the soft (c^p + m^p)^(1/p) when p > 1 */
static double roofline(const compute_device *d, double compute_s, double memory_s)
{
    double hi = compute_s > memory_s ? compute_s : memory_s;
    if (!(d->roofline_p > 1) || !(hi > 0))
        return hi;
    double p = d->roofline_p;
    return hi * pow(pow(compute_s / hi, p) + pow(memory_s / hi, p), 1.0 / p);
}

/* a kernel of GPU time kernel_s as the step sees it, launch included */
static double launched(const compute_device *d, double kernel_s)
{
    if (d->launch_overlaps) /* the CPU runs ahead unless kernels are shorter than a launch */
        return kernel_s > d->launch_s ? kernel_s : d->launch_s;
    return d->launch_s + kernel_s;
}

/* one instance of a batch of `batch` GEMMs run as one kernel (bytes per
 * instance): the batched kernel's time over batch */
static double gemm_time_s(const compute_device *d, int precision, double batch, double m,
                          double n, double k, double bytes)
{
    double peak = peak_of(d, precision);
    if (!(peak > 0) || !is_dim(m) || !is_dim(n) || !is_dim(k) || !is_amount(bytes) ||
        !(batch >= 1) || isinf(batch))
        return -1.0;
    double rate = peak * d->gemm_efficiency;
    double compute_s;
    if (d->sms == 0) {
        compute_s = batch * 2.0 * m * n * k / rate;
    } else {
        double slots = (double)d->sms * d->ctas_per_sm;
        unsigned tile_m, tile_n;
        pick_tile(d, batch, m, n, &tile_m, &tile_n);
        double tm = tile_m, tn = tile_n;
        double waves = ceil(batch * ceil(m / tm) * ceil(n / tn) / slots);
        /* (W * tile flops) / slot rate: doubling W doubles the time exactly */
        compute_s = waves * (2.0 * tm * tn * k) / (rate / slots);
    }
    compute_s += d->gemm_fixed_s;
    double kernel_s = roofline(d, compute_s, memory_time_s(d, batch * bytes));
    return batch == 1.0 ? launched(d, kernel_s) : launched(d, kernel_s) / batch;
}

double compute_gemm_time_s(const compute_device *d, int precision, double m, double n, double k,
                           double bytes)
{
    return gemm_time_s(d, precision, 1.0, m, n, k, bytes);
}

/* a memory-bound op: measured fused/eager kernels when the device has them */
static double memory_op_s(const compute_device *d, const op *o)
{
    if (d->mem_fused_efficiency > 0) {
        double eff = o->is_eager ? d->mem_eager_efficiency : d->mem_fused_efficiency;
        return d->mem_fixed_s + o->bytes / (eff * d->mem_bytes_per_s);
    }
    return memory_time_s(d, o->bytes);
}

double compute_op_time_s(const compute_device *d, const op *o)
{
    switch (o->kind) {
    case OP_GEMM:
        return gemm_time_s(d, o->precision, o->gemm_batch > 1 ? o->gemm_batch : 1.0, o->m, o->n,
                           o->k, o->bytes);
    case OP_ATTENTION: {
        double peak = peak_of(d, o->precision);
        if (!(peak > 0) || !is_amount(o->flops) || !is_amount(o->bytes))
            return -1.0;
        if (o->seq_q > 0 && d->attn_family > 0) { /* the measured kernel tables */
            double t = attn_op_time_s(d->attn_family, o);
            return t < 0 ? -1.0 : launched(d, t);
        }
        double compute_s = o->flops / (peak * d->attention_efficiency);
        double memory_s = memory_time_s(d, o->bytes);
        return launched(d, compute_s > memory_s ? compute_s : memory_s);
    }
    case OP_MEMORY:
        /* bytes only: the math units (and so the precision's peak) play no part */
        if (o->precision < 0 || o->precision >= PREC_COUNT || !is_amount(o->bytes))
            return -1.0;
        return launched(d, memory_op_s(d, o));
    default:
        return -1.0;
    }
}

int compute_op_times(const compute_device *d, const op *ops, size_t n_ops, double *time_s)
{
    int is_bad = 0;
#pragma omp parallel for schedule(static) reduction(| : is_bad)
    for (size_t i = 0; i < n_ops; i++) {
        time_s[i] = compute_op_time_s(d, &ops[i]);
        is_bad |= !(time_s[i] >= 0);
    }
    return is_bad ? -1 : 0;
}

int compute_eval_gpus(const compute_device *d, const op *ops, size_t n_ops, const double *speed,
                      size_t n_gpus, double *gpu_s)
{
    if (speed)
        for (size_t g = 0; g < n_gpus; g++)
            if (!(speed[g] > 0) || isinf(speed[g]))
                return -1;
    double *time_s = malloc((n_ops ? n_ops : 1) * sizeof *time_s);
    if (!time_s)
        return -1;
    int rc = compute_op_times(d, ops, n_ops, time_s);
    /* Every GPU runs the same list, so its op-order sum is the same number:
     * form it once, serially in op order, and divide by each GPU's speed
     * (gpu_s[g] is then exactly total / speed[g], for any thread count). */
    double total_s = 0.0;
    for (size_t i = 0; i < n_ops && rc == 0; i++) {
        if (!(ops[i].count >= 0) || isinf(ops[i].count))
            rc = -1;
        total_s += ops[i].count * time_s[i];
    }
    free(time_s);
    if (rc != 0)
        return -1;
    /* one division per GPU: threads pay off only for very large clusters */
#pragma omp parallel for schedule(static) if (n_gpus >= 65536)
    for (size_t g = 0; g < n_gpus; g++)
        gpu_s[g] = speed ? total_s / speed[g] : total_s;
    return 0;
}
