#!/usr/bin/env python3
"""gemm_fit.py - the fit behind models/kernels.c's GEMM constants (docs/step.md "Kernels").

Model (models/compute.c, compute_gemm_time_s):
  q     = max over CTA tiles (tm, tn) in {128, 192, 256}^2 of tile_eff * wave_eff
          (hardware.md 2.2 formulas; tile sizes 128/192/256: components.md 1.2, G2)
  t_c   = 2 m n k / (peak * c * q) + t0          (t0: fixed cost per GEMM, seconds)
  t_m   = bytes / (0.9 * HBM peak)               (the largest-transfer memory efficiency)
  t     = (t_c^p + t_m^p)^(1/p)                  (soft roofline)
Parameters: c per (GPU family, precision) and t0 per family, p shared; fitted by least squares
on log(model / measured) over the components.md 1.3 rows (cuBLASLt sweeps, G3) ONLY. The 1.1
MAMF rows (brute-force best shapes) are an out-of-sample check. Leave-one-out refits without
each row and predicts it. Run: /usr/bin/python3 tests/models/gemm_fit.py
"""
import math
import numpy as np
from scipy.optimize import least_squares

# components.md 1.3 (V): M, N, K, A100 80GB FP16, H100 FP8, H200 FP8 TFLOP/s
ROWS = [(1024, 1024, 1024, 119.4, 274.1, 290.8), (2048, 2048, 2048, 221.8, 1011.3, 1013.4),
        (4096, 4096, 4096, 228.0, 1216.9, 1249.1), (8192, 8192, 8192, 253.7, 1290.1, 1300.6),
        (16384, 16384, 16384, 256.5, 1377.3, 1366.3), (32768, 32768, 32768, None, 1382.2, 1349.5),
        (1024, 2145, 1024, 132.8, 410.7, 407.9), (6144, 12288, 12288, 250.8, 1351.4, 1318.0),
        (802816, 192, 768, 157.8, 663.8, 717.5)]
# peaks components.md 0; SMs components.md 1.4 (V); HBM components.md 0; bytes per element
GPUS = {'A100': dict(col=3, fam='A100', peak=312e12, sms=108, bw=2.039e12, w=2,
                     mamf=(271.2, 1024, 10240, 5120)),           # hardware.md 2.1 BF16
        'H100': dict(col=4, fam='GH100', peak=1979e12, sms=132, bw=3.35e12, w=1,
                     mamf=(1402.6, 1024, 9216, 14336)),          # hardware.md 2.1 FP8
        'H200': dict(col=5, fam='GH100', peak=1979e12, sms=132, bw=4.8e12, w=1,
                     mamf=(1453.4, 1280, 4096, 12032))}          # components.md 1.1 FP8
FAMS = ['A100', 'GH100']
TILES = [(a, b) for a in (128, 192, 256) for b in (128, 192, 256)]


def quant(m, n, sms):
    best = 0
    for tm, tn in TILES:
        tiles = math.ceil(m / tm) * math.ceil(n / tn)
        waves = math.ceil(tiles / sms)
        q = (m * n) / (math.ceil(m / tm) * tm * math.ceil(n / tn) * tn) * tiles / (waves * sms)
        best = max(best, q)
    return best


def model(g, m, n, k, c, t0, p):
    G = GPUS[g]
    F = 2.0 * m * n * k
    tc = F / (G['peak'] * c * quant(m, n, G['sms'])) + t0
    tm = G['w'] * (m * k + k * n + m * n) / (G['bw'] * 0.9)
    return F / (tc ** p + tm ** p) ** (1 / p) / 1e12


def points():
    return [(g, r[0], r[1], r[2], r[G['col']]) for g, G in GPUS.items() for r in ROWS if r[G['col']]]


def unpack(x, g):
    f = FAMS.index(GPUS[g]['fam'])
    return x[f], x[len(FAMS) + f] * 1e-6, x[-1]


def fit(pts):
    def res(x):
        return [math.log(model(g, m, n, k, *unpack(x, g)) / v) for g, m, n, k, v in pts]
    nf = len(FAMS)
    s = least_squares(res, [0.8] * nf + [5.0] * nf + [2.0],
                      bounds=([0.1] * nf + [0.0] * nf + [1.0], [1.2] * nf + [100.0] * nf + [50.0]))
    return s.x


def main():
    pts = points()
    x = fit(pts)
    for f in FAMS:
        i = FAMS.index(f)
        print('family %-6s c = %.4f  t0 = %.3f us' % (f, x[i], x[len(FAMS) + i]))
    print('p = %.4f' % x[-1])
    errs = []
    for g, m, n, k, v in pts:
        e = model(g, m, n, k, *unpack(x, g)) / v - 1
        errs.append(e)
        print('  %-5s %6dx%5dx%5d  measured %7.1f  model %7.1f  %+6.1f %%' %
              (g, m, n, k, v, v * (1 + e), 100 * e))
    a = np.abs(errs)
    print('in-sample (%d rows): mean |error| %.1f %%, max %.1f %%' % (len(a), 100 * a.mean(), 100 * a.max()))
    loo = []
    for i in range(len(pts)):
        xi = fit(pts[:i] + pts[i + 1:])
        g, m, n, k, v = pts[i]
        loo.append(model(g, m, n, k, *unpack(xi, g)) / v - 1)
    a = np.abs(loo)
    print('leave-one-out: mean |error| %.1f %%, max %.1f %%' % (100 * a.mean(), 100 * a.max()))
    for g, G in GPUS.items():
        v, m, n, k = G['mamf']
        print('MAMF %s %dx%dx%d measured %.1f model %.1f (%+.1f %%, out of sample)' %
              (g, m, n, k, v, model(g, m, n, k, *unpack(x, g)), 100 * (model(g, m, n, k, *unpack(x, g)) / v - 1)))


if __name__ == '__main__':
    main()
