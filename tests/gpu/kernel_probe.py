#!/usr/bin/env python3
"""kernel_probe.py OUTDIR [--quick] - measure the kernel components dcsim's step tier times, on
one NVIDIA GPU, with PyTorch (docs/gpu-calibration.md).

Not part of the test suite: it needs a GPU, CUDA and PyTorch, which CI does not have. Its output,
OUTDIR/kernel_probe.json, is committed beside this file and read by tests/gpu/fit_kernels.py,
which turns it into the constants of models/kernel_table.c and checks them.

What it measures, each section on its own (a failing section is recorded, the rest go on):
  env        GPU name, SMs, clocks, power limit, software versions
  burn       20 s of 8192^3 BF16 products first, so every later number is at sustained clocks
             (components.md 1.2: the clock under load sets GEMM speed)
  gemm       BF16 products at the 1.3 sweep shapes (components.md 1.3, G3, for comparison with the
             published FP8 columns), square sizes, and every GEMM of a Megatron GPT layer at the
             per-GPU shapes of each validation row (forward, data gradient, weight gradient, as
             torch.nn.functional.linear and autograd lay them out); random normal data
  fp8        FP8 e4m3 products (torch._scaled_mm) at the 1.3 sweep shapes: the published H200 FP8
             column is the check that this machine is like the one in the source
  attention  causal scaled_dot_product_attention, head dim 128, per backend (flash, cuDNN),
             forward and forward + backward, at each validation row's (batch, heads per GPU) and a
             sequence-length sweep
  memory     copy, add, LayerNorm forward/backward, GELU forward/backward, cross-entropy over the
             vocabulary, fused AdamW, at several sizes: t = fixed + bytes / (eff x HBM)
  launch     an empty-ish kernel back to back: the launch interval eager and in a CUDA graph
  layer      one GPT layer forward + backward at each validation row's per-GPU shapes (no
             communication), timed, and its kernels grouped by class with the profiler
  steady     the 1.7B stack (24 layers) and 16 layers of the 177B per-GPU shapes, forward +
             backward back to back for 30-40 s, then profiled: kernels by class in steady state
  fp8rows    FP8 products at each validation row's layer shapes
  overlap    a product loop alone and beside a streaming kernel of k blocks on another stream
             (k = 1 ... 66 SMs, as NCCL's channels hold SMs): the slowdown against the step
             tier's rule 1, S / (S - k) (models/step_sm.c)
  overlap2   the same at the TP-8 rows' shapes, and with the GEMM given the k SMs as a margin
             (PyTorch's SM carve-out for cuBLASLt), as Transformer Engine's overlap does
  attn_grid  attention forward + backward by heads at batch 1, s 4,096 and 8,192
  step       the whole 1.7B GPT (24 layers, TP 1: the Megatron table's first row) forward +
             backward on micro-batch 4, timed, kernels by class, and the optimizer apart

Timing: CUDA events around back-to-back launches after warm-up; the mean per launch. An
nvidia-smi log (clock, power, temperature every 200 ms) runs beside it.
"""
import json
import math
import os
import subprocess
import sys
import time
import traceback

import torch
import torch.nn.functional as F

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
QUICK = "--quick" in sys.argv
RESULT = {"sections": {}, "errors": {}}
DEV = "cuda"
BF16 = torch.bfloat16
SEQ = 4096
HEAD_DIM = 128
VOCAB = 131072

# The validation rows' models and layouts (tests/validation/runs/*.xml, scenarios/catalog/models.xml):
# name: (hidden, heads, ffn, layers, tp, micro-batch)
ROWS = {
    "1.7b": (2048, 16, 8192, 24, 1, 4),
    "7.1b": (4096, 32, 16384, 30, 2, 4),
    "16b": (6144, 48, 24576, 32, 4, 4),
    "32b": (7168, 56, 28672, 48, 8, 4),
    "70b": (8192, 64, 32768, 84, 8, 1),
    "119b": (10240, 80, 40960, 92, 8, 1),
    "177b": (12288, 96, 49152, 96, 8, 1),
    "314b": (16384, 128, 65536, 96, 8, 1),
    "462b": (18432, 144, 73728, 112, 8, 1),
}
SWEEP_13 = [(1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192),
            (16384, 16384, 16384), (32768, 32768, 32768), (1024, 2145, 1024),
            (6144, 12288, 12288), (802816, 192, 768)]


def save():
    with open(os.path.join(OUT, "kernel_probe.json.tmp"), "w") as f:
        json.dump(RESULT, f, indent=1)
    os.replace(os.path.join(OUT, "kernel_probe.json.tmp"), os.path.join(OUT, "kernel_probe.json"))


def log(*a):
    print(time.strftime("%H:%M:%S"), *a, flush=True)


def section(name):
    def wrap(fn):
        def run():
            t0 = time.time()
            log("section", name)
            try:
                RESULT["sections"][name] = fn()
            except Exception:
                RESULT["errors"][name] = traceback.format_exc()
                log("FAILED", name, traceback.format_exc().splitlines()[-1])
            RESULT.setdefault("wall_s", {})[name] = round(time.time() - t0, 2)
            try:
                torch.cuda.synchronize()
                torch.cuda.empty_cache()
            except Exception:  # noqa: BLE001 - a sticky CUDA error: record it, go on saving
                RESULT["errors"][name + "_sync"] = traceback.format_exc()
            save()
        run.__name__ = name
        return run
    return wrap


def timed(fn, reps, warm=2):
    """mean seconds per call of fn over reps back-to-back calls, after warm calls"""
    for _ in range(warm):
        fn()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    a.record()
    for _ in range(reps):
        fn()
    b.record()
    b.synchronize()
    return a.elapsed_time(b) / 1e3 / reps


def reps_for(seconds_each, budget=0.05, lo=3, hi=200):
    return int(max(lo, min(hi, budget / max(seconds_each, 1e-7))))


def rand(*shape, dtype=BF16):
    return torch.randn(*shape, device=DEV, dtype=torch.float32).to(dtype)


def smi(query):
    try:
        r = subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits"],
                           capture_output=True, text=True, timeout=20)
        return r.stdout.strip()
    except Exception as e:  # noqa: BLE001 - recorded, not fatal
        return f"error: {e}"


@section("env")
def env():
    p = torch.cuda.get_device_properties(0)
    return {"gpu": p.name, "sms": p.multi_processor_count, "memory_bytes": p.total_memory,
            "l2_bytes": getattr(p, "L2_cache_size", None), "torch": torch.__version__,
            "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
            "smi": smi("name,driver_version,clocks.max.sm,clocks.max.mem,power.limit,"
                       "power.max_limit,clocks.sm,temperature.gpu")}


@section("burn")
def burn():
    a, b = rand(8192, 8192), rand(8192, 8192)
    t_end, n, start = time.time() + (5 if QUICK else 20), 0, time.time()
    per = []
    while time.time() < t_end:
        t = timed(lambda: torch.mm(a, b), 20, warm=1)
        per.append(2 * 8192 ** 3 / t / 1e12)
        n += 20
    return {"products": n, "seconds": time.time() - start, "tflops_first": per[0],
            "tflops_last": per[-1], "tflops_series": per,
            "smi_after": smi("clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active")}


def gemm_fwd_dgrad_wgrad(T, K, N):
    """the three products of y = x W^T (x: T x K, W: N x K), laid out as autograd runs them"""
    x, w, g = rand(T, K), rand(N, K), rand(T, N)
    out = {}
    for kind, fn, mnk in (("fwd", lambda: F.linear(x, w), (T, N, K)),
                          ("dgrad", lambda: torch.mm(g, w), (T, K, N)),
                          ("wgrad", lambda: torch.mm(g.t(), x), (N, K, T))):
        t1 = timed(fn, 2, warm=2)
        t = timed(fn, reps_for(t1))
        m, n, k = mnk
        out[kind] = {"m": m, "n": n, "k": k, "s": t, "tflops": 2 * m * n * k / t / 1e12}
    del x, w, g
    return out


@section("gemm")
def gemm():
    res = {"sweep_13": [], "square": [], "rows": {}}
    for m, n, k in SWEEP_13:
        if QUICK and m * n * k > 8192 ** 3:
            continue
        a, b = rand(m, k), rand(k, n)
        t1 = timed(lambda: torch.mm(a, b), 1, warm=2)
        t = timed(lambda: torch.mm(a, b), reps_for(t1, 0.1))
        res["sweep_13"].append({"m": m, "n": n, "k": k, "s": t, "tflops": 2 * m * n * k / t / 1e12})
        del a, b
    for s in (512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384):
        a, b = rand(s, s), rand(s, s)
        t1 = timed(lambda: torch.mm(a, b), 1, warm=2)
        t = timed(lambda: torch.mm(a, b), reps_for(t1, 0.05))
        res["square"].append({"m": s, "n": s, "k": s, "s": t, "tflops": 2 * s ** 3 / t / 1e12})
        del a, b
    for name, (h, heads, ffn, layers, tp, mb) in ROWS.items():
        T = mb * SEQ
        r = {}
        for op, K, N in (("qkv", h, 3 * h // tp), ("proj", h // tp, h), ("fc1", h, ffn // tp),
                         ("fc2", ffn // tp, h), ("logits", h, VOCAB // tp)):
            r[op] = gemm_fwd_dgrad_wgrad(T, K, N)
        res["rows"][name] = r
        log("  gemm row", name, {op: round(v["fwd"]["tflops"]) for op, v in r.items()})
    return res


@section("fp8")
def fp8():
    res = []
    one = torch.ones((), device=DEV, dtype=torch.float32)
    for m, n, k in SWEEP_13:
        if QUICK and m * n * k > 8192 ** 3:
            continue
        a = rand(m, k).to(torch.float8_e4m3fn)
        b = rand(n, k).to(torch.float8_e4m3fn).t()  # column-major, as _scaled_mm wants
        fn = lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=BF16)  # noqa: E731
        try:
            t1 = timed(fn, 1, warm=2)
            t = timed(fn, reps_for(t1, 0.1))
            res.append({"m": m, "n": n, "k": k, "s": t, "tflops": 2 * m * n * k / t / 1e12})
        except Exception as e:  # noqa: BLE001 - e.g. a dimension not a multiple of 16
            res.append({"m": m, "n": n, "k": k, "error": str(e)[:300]})
        del a, b
    return res


def attn_time(backend, b, heads, s, bwd):
    from torch.nn.attention import sdpa_kernel, SDPBackend
    be = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}[backend]
    q, k, v = (rand(b, heads, s, HEAD_DIM).requires_grad_(bwd) for _ in range(3))
    go = rand(b, heads, s, HEAD_DIM)

    def f():
        with sdpa_kernel(be):
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        if bwd:
            o.backward(go)
    t1 = timed(f, 1, warm=2)
    return timed(f, reps_for(t1, 0.05))


@section("attention")
def attention():
    res = {"rows": [], "seq": []}
    # FLOP convention of components.md 2.1: forward 4 b h s^2 d, halved when causal; fwd+bwd 3.5x
    for backend in ("flash", "cudnn"):
        seen = set()
        for name, (h, heads, ffn, layers, tp, mb) in ROWS.items():
            key = (mb, heads // tp)
            if key in seen:
                continue
            seen.add(key)
            for bwd in (False, True):
                try:
                    t = attn_time(backend, mb, heads // tp, SEQ, bwd)
                except Exception as e:  # noqa: BLE001 - a backend may be missing
                    res["rows"].append({"backend": backend, "row": name, "error": str(e)[:300]})
                    break
                fl = 4 * mb * (heads // tp) * SEQ ** 2 * HEAD_DIM / 2 * (3.5 if bwd else 1)
                res["rows"].append({"backend": backend, "row": name, "b": mb, "heads": heads // tp,
                                    "s": SEQ, "d": HEAD_DIM, "bwd": bwd, "s_time": t,
                                    "tflops": fl / t / 1e12})
        for s in (512, 1024, 2048, 4096, 8192, 16384):
            b = max(1, 16384 // s)
            for bwd in (False, True):
                try:
                    t = attn_time(backend, b, 16, s, bwd)
                except Exception as e:  # noqa: BLE001
                    res["seq"].append({"backend": backend, "s": s, "error": str(e)[:300]})
                    break
                fl = 4 * b * 16 * s ** 2 * HEAD_DIM / 2 * (3.5 if bwd else 1)
                res["seq"].append({"backend": backend, "b": b, "heads": 16, "s": s, "d": HEAD_DIM,
                                   "bwd": bwd, "s_time": t, "tflops": fl / t / 1e12})
    return res


@section("memory")
def memory():
    res = []

    def rec(kind, nbytes, t, **kw):
        res.append(dict(kind=kind, bytes=nbytes, s=t, gbps=nbytes / t / 1e9, **kw))
    for mib in (1, 4, 16, 64, 256, 1024, 4096):
        n = mib * 2 ** 20 // 2
        a, b = rand(n), rand(n)
        t1 = timed(lambda: b.copy_(a), 2)
        rec("copy", 4 * n, timed(lambda: b.copy_(a), reps_for(t1)), elems=n)
        c = torch.empty_like(a)
        rec("add", 6 * n, timed(lambda: torch.add(a, b, out=c), reps_for(t1)), elems=n)
        del a, b, c
    for rows, cols in ((4096, 1024), (4096, 16384), (16384, 2048), (16384, 4096), (4096, 12288),
                       (16384, 8192), (4096, 18432)):
        x = rand(rows, cols).requires_grad_(True)
        w = torch.ones(cols, device=DEV, dtype=BF16, requires_grad=True)
        bb = torch.zeros(cols, device=DEV, dtype=BF16, requires_grad=True)
        g = rand(rows, cols)
        nb = rows * cols * 2
        t1 = timed(lambda: F.layer_norm(x, (cols,), w, bb), 2)
        rec("layernorm_fwd", 2 * nb, timed(lambda: F.layer_norm(x, (cols,), w, bb), reps_for(t1)),
            rows=rows, cols=cols)
        y = F.layer_norm(x, (cols,), w, bb)
        tb = timed(lambda: torch.autograd.grad(y, (x, w, bb), g, retain_graph=True), reps_for(t1))
        rec("layernorm_bwd", 3 * nb, tb, rows=rows, cols=cols)
        rec("gelu_fwd", 2 * nb, timed(lambda: F.gelu(x, approximate="tanh"), reps_for(t1)),
            rows=rows, cols=cols)
        yg = F.gelu(x, approximate="tanh")
        rec("gelu_bwd", 3 * nb,
            timed(lambda: torch.autograd.grad(yg, x, g, retain_graph=True), reps_for(t1)),
            rows=rows, cols=cols)
        rec("dropout_fwd", 2 * nb + rows * cols, timed(lambda: F.dropout(x, 0.1), reps_for(t1)),
            rows=rows, cols=cols)
        del x, w, bb, g, y, yg
    for tokens, vocab in ((16384, 131072), (4096, 16384), (4096, 131072)):
        logits = rand(tokens, vocab).requires_grad_(True)
        labels = torch.randint(0, vocab, (tokens,), device=DEV)

        def ce():
            loss = F.cross_entropy(logits.float(), labels)
            loss.backward()
        rec("cross_entropy_fwd_bwd", tokens * vocab * 2 * 2, timed(ce, 3, warm=1),
            tokens=tokens, vocab=vocab)
        del logits, labels
    for mparams in (100, 1700):
        n = mparams * 10 ** 6
        p = torch.zeros(n, device=DEV, dtype=torch.float32, requires_grad=True)
        p.grad = torch.randn(n, device=DEV, dtype=torch.float32)
        opt = torch.optim.AdamW([p], lr=1e-4, fused=True)
        t = timed(opt.step, 5, warm=2)
        # fp32 param, grad, two moments read; param and two moments written: 28 bytes / param
        rec("adamw_fused_fp32", 28 * n, t, params=n)
        del p, opt
    return res


@section("launch")
def launch():
    x = torch.zeros(1, device=DEV)
    eager = timed(lambda: x.add_(1), 2000, warm=50)
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            x.add_(1)
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        for _ in range(1000):
            x.add_(1)
    t = timed(g.replay, 5, warm=2)
    return {"eager_interval_s": eager, "graph_interval_s": t / 1000}


class Layer(torch.nn.Module):
    """A Megatron GPT layer's compute on one TP rank, without communication: pre-LayerNorm,
    QKV with bias, causal attention, projection, residual, LayerNorm, fc1 + GELU (tanh), fc2,
    residual. Activations [tokens, hidden]; the attention takes [b, heads, s, d]."""

    def __init__(self, h, heads, ffn, tp):
        super().__init__()
        mk = lambda o, i: torch.nn.Parameter(torch.randn(o, i, device=DEV, dtype=BF16) * 0.02)  # noqa: E731
        self.h, self.heads, self.tp = h, heads // tp, tp
        self.ln1w = torch.nn.Parameter(torch.ones(h, device=DEV, dtype=BF16))
        self.ln1b = torch.nn.Parameter(torch.zeros(h, device=DEV, dtype=BF16))
        self.ln2w = torch.nn.Parameter(torch.ones(h, device=DEV, dtype=BF16))
        self.ln2b = torch.nn.Parameter(torch.zeros(h, device=DEV, dtype=BF16))
        self.wqkv, self.bqkv = mk(3 * h // tp, h), torch.nn.Parameter(torch.zeros(3 * h // tp, device=DEV, dtype=BF16))
        self.wproj, self.bproj = mk(h, h // tp), torch.nn.Parameter(torch.zeros(h, device=DEV, dtype=BF16))
        self.w1, self.b1 = mk(ffn // tp, h), torch.nn.Parameter(torch.zeros(ffn // tp, device=DEV, dtype=BF16))
        self.w2, self.b2 = mk(h, ffn // tp), torch.nn.Parameter(torch.zeros(h, device=DEV, dtype=BF16))

    def forward(self, x, b, s):
        y = F.layer_norm(x, (self.h,), self.ln1w, self.ln1b)
        qkv = F.linear(y, self.wqkv, self.bqkv).view(b, s, 3, self.heads, HEAD_DIM)
        q, k, v = (qkv[:, :, i].transpose(1, 2) for i in range(3))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        a = a.transpose(1, 2).reshape(b * s, self.heads * HEAD_DIM)
        x = x + F.linear(a, self.wproj, self.bproj)
        y = F.layer_norm(x, (self.h,), self.ln2w, self.ln2b)
        y = F.gelu(F.linear(y, self.w1, self.b1), approximate="tanh")
        return x + F.linear(y, self.w2, self.b2)


def classify(name):
    n = name.lower()
    if any(t in n for t in ("flash", "fmha", "sdpa", "attention", "cudnn_generated")):
        return "attention"
    if any(t in n for t in ("gemm", "xmma", "cutlass", "nvjet", "matmul", "sm90_", "cublas")):
        return "gemm"
    return "memory-bound"


def profile_kernels(fn, iters=2):
    from torch.profiler import profile, ProfilerActivity
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            fn()
        torch.cuda.synchronize()
    kernels, by_class = {}, {}
    for e in prof.key_averages():
        t = getattr(e, "device_time_total", None)
        if t is None:
            t = getattr(e, "cuda_time_total", 0)
        if not t or e.key.startswith("ProfilerStep"):
            continue
        # key_averages also lists CPU-side ops with their children's device time: keep kernels
        if getattr(e, "device_type", None) is not None and "CUDA" not in str(e.device_type):
            continue
        kernels[e.key] = {"us": t / iters, "count": e.count / iters, "class": classify(e.key)}
        by_class[classify(e.key)] = by_class.get(classify(e.key), 0) + t / iters / 1e6
    return {"by_class_s": by_class, "kernels": kernels}


@section("layer")
def layer():
    res = {}
    for name, (h, heads, ffn, layers, tp, mb) in ROWS.items():
        torch.manual_seed(1)
        L = Layer(h, heads, ffn, tp)
        T = mb * SEQ
        x = rand(T, h).requires_grad_(True)
        g = rand(T, h)

        def step():
            L(x, mb, SEQ).backward(g)
        t_fb = timed(step, 5, warm=3)
        t_f = timed(lambda: L(x, mb, SEQ), 5, warm=2)
        prof = profile_kernels(step)
        res[name] = {"h": h, "heads": heads, "ffn": ffn, "tp": tp, "micro_batch": mb, "tokens": T,
                     "fwd_bwd_s": t_fb, "fwd_s": t_f, **prof}
        log("  layer", name, round(t_fb * 1e3, 3), "ms", {k: round(v * 1e3, 3) for k, v in prof["by_class_s"].items()})
        del L, x, g
        torch.cuda.empty_cache()
    return res


@section("step")
def step():
    h, heads, ffn, layers, tp, mb = ROWS["1.7b"]
    torch.manual_seed(1)
    blocks = torch.nn.ModuleList(Layer(h, heads, ffn, 1) for _ in range(layers))
    emb = torch.nn.Parameter(torch.randn(VOCAB, h, device=DEV, dtype=BF16) * 0.02)
    lnw = torch.nn.Parameter(torch.ones(h, device=DEV, dtype=BF16))
    lnb = torch.nn.Parameter(torch.zeros(h, device=DEV, dtype=BF16))
    tokens = torch.randint(0, VOCAB, (mb * SEQ,), device=DEV)
    labels = torch.randint(0, VOCAB, (mb * SEQ,), device=DEV)
    params = [p for blk in blocks for p in blk.parameters()] + [emb, lnw, lnb]
    n_params = sum(p.numel() for p in params)

    def fwd_bwd():
        for p in params:  # each call a first micro-batch: gradients assigned, not accumulated
            p.grad = None
        x = F.embedding(tokens, emb)
        for blk in blocks:
            x = blk(x, mb, SEQ)
        x = F.layer_norm(x, (h,), lnw, lnb)
        loss = F.cross_entropy(F.linear(x, emb).float(), labels)
        loss.backward()
    t_fb = timed(fwd_bwd, 3, warm=2)
    prof = profile_kernels(fwd_bwd, iters=1)
    return {"params": n_params, "layers": layers, "tokens": mb * SEQ, "fwd_bwd_s": t_fb,
            "model_tflops_per_s": 6 * n_params * mb * SEQ / t_fb / 1e12, **prof,
            "optimizer_note": "see memory section adamw_fused_fp32 (28 bytes a parameter)"}


def stack_steady(name, n_layers, seconds):
    """n_layers GPT layers of a row's per-GPU shapes, forward + backward back to back for
    `seconds` (the clock and power reach their training steady state), then one profiled pass"""
    h, heads, ffn, layers, tp, mb = ROWS[name]
    torch.manual_seed(1)
    blocks = [Layer(h, heads, ffn, tp) for _ in range(n_layers)]
    T = mb * SEQ
    x = rand(T, h).requires_grad_(True)
    g = rand(T, h)

    def fb():
        y = x
        for blk in blocks:
            y = blk(y, mb, SEQ)
        y.backward(g)
    series, end = [], time.time() + seconds
    while time.time() < end:
        series.append(timed(fb, 3, warm=0))
    prof = profile_kernels(fb, iters=2)
    return {"row": name, "layers": n_layers, "tokens": T, "series_s": series,
            "steady_s": sorted(series[len(series) // 2:])[len(series[len(series) // 2:]) // 2],
            "smi": smi("clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active"),
            **prof}


@section("steady")
def steady():
    return {"1.7b": stack_steady("1.7b", 24, 8 if QUICK else 40),
            "177b": stack_steady("177b", 16, 8 if QUICK else 30)}


@section("fp8rows")
def fp8rows():
    res = {}
    one = torch.ones((), device=DEV, dtype=torch.float32)
    for name, (h, heads, ffn, layers, tp, mb) in ROWS.items():
        T = mb * SEQ
        for op, K, N in (("qkv", h, 3 * h // tp), ("proj", h // tp, h), ("fc1", h, ffn // tp),
                         ("fc2", ffn // tp, h)):
            a = rand(T, K).to(torch.float8_e4m3fn)
            b = rand(N, K).to(torch.float8_e4m3fn).t()
            fn = lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=BF16)  # noqa: E731
            t1 = timed(fn, 1, warm=2)
            t = timed(fn, reps_for(t1))
            res[f"{name}/{op}"] = {"m": T, "n": N, "k": K, "s": t, "tflops": 2 * T * N * K / t / 1e12}
            del a, b
    return res


STREAM_SRC = r"""
extern "C" __global__ void stream_copy(float4 *a, float4 *b, long long n, int reps)
{
    /* a memory-streaming kernel of gridDim.x blocks, one SM each, as NCCL's channels hold SMs:
       it copies a to b and back, reps times */
    for (int r = 0; r < reps; r++) {
        float4 *src = (r & 1) ? b : a, *dst = (r & 1) ? a : b;
        for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
             i += (long long)gridDim.x * blockDim.x)
            dst[i] = src[i];
    }
}
"""


def overlap_case(kern, a, b, n, k, gemm_fn, gemm_count):
    """a product loop alone and beside a k-block streaming kernel on another stream"""
    import cupy
    import numpy as np
    side = torch.cuda.Stream()
    cs = cupy.cuda.ExternalStream(side.cuda_stream)
    ev = lambda: torch.cuda.Event(enable_timing=True)  # noqa: E731

    def copy_time(reps):
        e0, e1 = ev(), ev()
        e0.record(side)
        kern((k,), (512,), (a, b, np.int64(n), np.int32(reps)), stream=cs)
        e1.record(side)
        e1.synchronize()
        return e0.elapsed_time(e1) / 1e3
    copy_time(1)
    per_rep = copy_time(4) / 4
    g_alone = timed(lambda: [gemm_fn() for _ in range(gemm_count)], 1, warm=1)
    reps = int(min(20000, math.ceil(3.0 * g_alone / per_rep)))
    torch.cuda.synchronize()
    c0, c1, g0, g1 = ev(), ev(), ev(), ev()
    c0.record(side)
    kern((k,), (512,), (a, b, np.int64(n), np.int32(reps)), stream=cs)
    c1.record(side)
    g0.record()
    for _ in range(gemm_count):
        gemm_fn()
    g1.record()
    torch.cuda.synchronize()
    g_shared = g0.elapsed_time(g1) / 1e3
    copy_total = c0.elapsed_time(c1) / 1e3
    return {"k": k, "gemm_alone_s": g_alone, "gemm_beside_s": g_shared,
            "slowdown": g_shared / g_alone, "rule1": 132 / (132 - k) if k < 132 else None,
            "copy_rep_alone_s": per_rep, "copy_reps": reps, "copy_total_s": copy_total,
            "copy_covers_gemm": copy_total > g_shared,
            "copy_gbps_alone": 2 * n * 16 / per_rep / 1e9}


@section("overlap")
def overlap():
    import cupy
    kern = cupy.RawKernel(STREAM_SRC, "stream_copy")
    n = (512 * 2 ** 20) // 16
    a = cupy.zeros(n * 4, dtype=cupy.float32)
    b = cupy.zeros(n * 4, dtype=cupy.float32)
    res = {}
    shapes = {"8192^3": (8192, 8192, 8192, 30), "1.7b-fc1": (16384, 8192, 2048, 60)}
    for label, (m, nn, kk, count) in shapes.items():
        x, w = rand(m, kk), rand(kk, nn)
        fn = lambda: torch.mm(x, w)  # noqa: E731
        res[label] = [overlap_case(kern, a, b, n, k, fn, count) for k in (1, 2, 4, 8, 16, 24, 32, 48, 66)]
        log("  overlap", label, [(r["k"], round(r["slowdown"], 3)) for r in res[label]])
        del x, w
    res["smi"] = smi("clocks.sm,power.draw,temperature.gpu")
    return res


@section("overlap2")
def overlap2():
    """the beside-slowdown at more shapes (the TP-8 rows' T = 4,096 products), and with the
    GEMM given the k SMs as a margin (cuBLASLt's SM count target through PyTorch's SM
    carve-out), as Transformer Engine's comm-GEMM overlap does"""
    import cupy
    kern = cupy.RawKernel(STREAM_SRC, "stream_copy")
    n = (512 * 2 ** 20) // 16
    a = cupy.zeros(n * 4, dtype=cupy.float32)
    b = cupy.zeros(n * 4, dtype=cupy.float32)
    res = {"no_margin": {}, "margin": {}}
    shapes = {"177b-fc1": (4096, 6144, 12288, 60), "70b-qkv": (4096, 3072, 8192, 120),
              "462b-fc2": (4096, 18432, 9216, 20), "8192^3": (8192, 8192, 8192, 30)}
    carve = getattr(torch._C, "_set_sm_carveout_experimental", None)
    res["carveout_api"] = carve is not None
    for label, (m, nn, kk, count) in shapes.items():
        x, w = rand(m, kk), rand(kk, nn)
        fn = lambda: torch.mm(x, w)  # noqa: E731
        res["no_margin"][label] = [overlap_case(kern, a, b, n, k, fn, count) for k in (4, 5, 8, 16, 32)]
        log("  overlap2", label, [(r["k"], round(r["slowdown"], 3)) for r in res["no_margin"][label]])
        if carve is not None:
            rows = []
            for k in (4, 5, 8, 16, 32):
                t_full = timed(lambda: [fn() for _ in range(count)], 1, warm=1)
                carve(k)
                try:
                    t_alone_margin = timed(lambda: [fn() for _ in range(count)], 1, warm=1)
                    r = overlap_case(kern, a, b, n, k, fn, count)
                finally:
                    carve(None)
                # the loop beside k SMs with the margin, against the loop alone on every SM
                r["gemm_full_alone_s"] = t_full
                r["gemm_margin_alone_s"] = t_alone_margin
                r["slowdown_vs_full"] = r["gemm_beside_s"] / t_full
                rows.append(r)
            res["margin"][label] = rows
            log("  margin", label, [(r["k"], round(r["slowdown_vs_full"], 3)) for r in rows])
        del x, w
    return res


@section("attn_grid")
def attn_grid():
    """cuDNN and flash attention forward + backward by batch x heads at 4,096 and 8,192: where
    the kernel leaves SMs idle (few (batch, head, query-tile) blocks)"""
    res = []
    for backend in ("cudnn", "flash"):
        for s_len in (4096, 8192):
            for heads in (1, 2, 4, 6, 8, 12, 16, 24, 32, 48, 64):
                for bwd in (False, True):
                    try:
                        t = attn_time(backend, 1, heads, s_len, bwd)
                    except Exception as e:  # noqa: BLE001
                        res.append({"backend": backend, "s": s_len, "heads": heads, "error": str(e)[:200]})
                        break
                    fl = 4 * heads * s_len ** 2 * HEAD_DIM / 2 * (3.5 if bwd else 1)
                    res.append({"backend": backend, "b": 1, "heads": heads, "s": s_len, "bwd": bwd,
                                "s_time": t, "tflops": fl / t / 1e12})
    return res


def main():
    os.makedirs(OUT, exist_ok=True)
    log_path = os.path.join(OUT, "smi.csv")
    smi_proc = None
    try:
        smi_proc = subprocess.Popen(
            ["nvidia-smi", "--query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,"
             "utilization.gpu", "--format=csv", "-lms", "200"],
            stdout=open(log_path, "w"), stderr=subprocess.DEVNULL)
    except Exception as e:  # noqa: BLE001
        RESULT["errors"]["smi_log"] = str(e)
    torch.backends.cuda.matmul.allow_tf32 = False
    RESULT["started"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    only = [a[len("--only="):].split(",") for a in sys.argv if a.startswith("--only=")]
    for fn in (env, burn, gemm, fp8, attention, memory, launch, layer, step, steady, fp8rows,
               overlap, overlap2, attn_grid):
        if only and fn.__name__ not in only[0] and fn.__name__ != "env":
            continue
        fn()
    RESULT["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    save()
    if smi_proc:
        smi_proc.terminate()
    log("done", json.dumps(RESULT["wall_s"]))


if __name__ == "__main__":
    main()
