"""dcsim_serve - figures and report sections of serving runs and tables
(docs/serving.md "Report figures"):

    /usr/bin/python3 analysis/dcsim_serve.py run.h5 -o figs/     # `dcsim serve -o` file
    /usr/bin/python3 analysis/dcsim_serve.py rates.h5 -o figs/   # `dcsim sweep`/`compare -o`
    ./build/dcsim report run.h5 rates.h5                         # the same, in the report

Everything is drawn from the file, nothing recomputed by a model. On a run
(/serve/requests and /serve/series, docs/trace-format.md "Serving tables"):
the empirical CDFs of TTFT (first_token_s - arrival_s), TPOT ((finish_s -
first_token_s) / (output - 1), answers of two tokens or more) and end-to-end
latency (finish_s - arrival_s) over the finished requests, the expressions
models/serving_stats.c uses, with P50/P90/P99 marked by the nearest-rank rule
dcsim serve uses (so they are its --json quantiles when the file holds every
request and the run kept exact quantiles); the load over time, /serve/series'
bins as the step functions they are (running, queued and transferring
requests, KV-cache use). On a serving table (/serve_sweep of `dcsim sweep`,
/compare of `dcsim compare -o` on a serving scenario): P50 and P99 TTFT and
E2E against the achieved throughput, one point per row in row order. Each
figure function returns the numbers it drew (SI units), which is how
tests/python/test_serve_report.py compares them with the command's output.
"""
import math
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dcsim_figures as F  # noqa: E402
from dcsim_trace import TraceFormatError, table_columns, variant_table  # noqa: E402

LAYOUT_VERSIONS = ("1",)
QUANTILES = (0.5, 0.9, 0.99)
MS_PER_S = 1e3
FIGURES = ("serve_cdf", "serve_load", "serve_curve")
TITLES = {"serve_cdf": "Latency CDFs: time to first token, per output token, end to end",
          "serve_load": "Requests in the fleet and KV-cache use over time",
          "serve_curve": "Latency against achieved throughput"}
# a serving table: the columns the curve needs (compare_serve.c's names)
CURVE_COLUMNS = ("requests_per_s", "output_tokens_per_s", "ttft_p50_s", "ttft_p99_s",
                 "e2e_p50_s", "e2e_p99_s")


def _text(v):
    return v.decode("utf-8") if isinstance(v, bytes) else str(v)


def _attrs(obj):
    return {k: _text(v) if isinstance(v, (bytes, str)) else v for k, v in obj.attrs.items()}


def kind_of(path):
    """"run" for a `dcsim serve -o` file, "table" for a serving /serve_sweep or
    /compare table, None for anything else (OSError when not HDF5)."""
    with h5py.File(path, "r") as f:
        g = f.get("serve")
        if isinstance(g, h5py.Group) and "summary" not in f:
            return "run"
        for name in ("serve_sweep", "compare"):
            ds = f.get(name)
            if isinstance(ds, h5py.Dataset) and "ttft_p99_s" in table_columns(ds):
                return "table"
    return None


class ServeRun:
    """A `dcsim serve -o` file:
      attrs      the root attributes (command, seed, scenario_name, ...)
      serve      /serve's attributes (model, replicas, tp, gpus, end_s, bin_s, ...)
      requests   /serve/requests, a numpy structured array (one row per request)
      series     /serve/series, a numpy structured array (one row per bin)
      units      {column: unit} of both tables
    TraceFormatError (one line) for a file that is not one."""

    def __init__(self, path):
        self.path = path
        with h5py.File(path, "r") as f:
            g = f.get("serve")
            if not isinstance(g, h5py.Group) or "requests" not in g or "series" not in g:
                raise TraceFormatError(f"{path}: not a dcsim serve file (no /serve/requests "
                                       "and /serve/series)")
            self.attrs = _attrs(f)
            self.serve = _attrs(g)
            layout = self.serve.get("layout_version", "")
            if layout not in LAYOUT_VERSIONS:
                raise TraceFormatError(f"{path}: /serve layout_version {layout!r} is not one "
                                       f"this dcsim reads ({', '.join(LAYOUT_VERSIONS)})")
            self.requests = g["requests"][()]
            self.series = g["series"][()]
            self.units = {}
            for name in ("requests", "series"):
                d = g[name]
                self.units.update(zip(d.dtype.names, [_text(u) for u in d.attrs.get("units", [])]))
        self.end_s = float(self.serve["end_s"])
        self.bin_s = float(self.serve["bin_s"])
        self.sample_every = int(self.serve.get("sample_every", 1))

    def finished(self):
        """The finished requests' rows (not dropped, a last token)."""
        r = self.requests
        keep = (np.asarray(r["dropped"]) == 0) & np.isfinite(np.asarray(r["finish_s"], float))
        return r[keep]

    def latencies(self):
        """{"ttft", "tpot", "e2e"}: each finished request's latency (s), as
        models/serving_stats.c computes them; TPOT of answers of 2+ tokens."""
        r = self.finished()
        arrival = np.asarray(r["arrival_s"], dtype=float)
        first = np.asarray(r["first_token_s"], dtype=float)
        finish = np.asarray(r["finish_s"], dtype=float)
        out = np.asarray(r["output"], dtype=np.int64)
        many = out >= 2
        return {"ttft": first - arrival, "e2e": finish - arrival,
                "tpot": (finish[many] - first[many]) / (out[many] - 1).astype(float)}

    def edges_s(self):
        """The series' bin edges: t_s, then end_s (len(series) + 1)."""
        t = np.asarray(self.series["t_s"], dtype=float)
        return np.append(t, max(self.end_s, t[-1]) if len(t) else self.end_s)


class ServeTable:
    """A serving table: /serve_sweep (`dcsim sweep`) or /compare (`dcsim
    compare -o`) of a serving scenario, a row per point or variant:
      name       "serve_sweep" or "compare"
      labels     each row's label (its PATH=VALUE sets)
      columns    {column: numpy array}, units {column: unit}
    TraceFormatError (one line) for a file without one."""

    def __init__(self, path):
        self.path = path
        with h5py.File(path, "r") as f:
            for name in ("serve_sweep", "compare"):
                ds = f.get(name)
                if isinstance(ds, h5py.Dataset):
                    break
            else:
                raise TraceFormatError(f"{path}: no /serve_sweep or /compare table")
            table, self.labels = variant_table(ds)
            cols = list(table.dtype.names)
            missing = [c for c in CURVE_COLUMNS if c not in cols]
            if missing:
                raise TraceFormatError(f"{path}: /{name} is not a serving table (no "
                                       f"{', '.join(missing)})")
            self.name = name
            self.columns = {c: np.asarray(table[c], dtype=float) for c in cols}
            self.units = dict(table.units)
            self.description = table.description
        if len(self.labels) != len(table):
            raise TraceFormatError(f"{path}: /{name} has {len(table)} rows but "
                                   f"{len(self.labels)} labels")

    def __len__(self):
        return len(self.labels)


def load(path):
    """A ServeRun or ServeTable for path; TraceFormatError otherwise."""
    kind = kind_of(path)
    if kind == "run":
        return ServeRun(path)
    if kind == "table":
        return ServeTable(path)
    raise TraceFormatError(f"{path}: not a dcsim serving file (no /serve group, /serve_sweep "
                           "or serving /compare table)")


TYPES = (ServeRun, ServeTable)


def ecdf(values):
    """(sorted values, p): p[i] = (i + 1) / n, the empirical CDF's steps."""
    x = np.sort(np.asarray(values, dtype=float))
    return x, np.arange(1, len(x) + 1, dtype=float) / max(len(x), 1)


def quantile(x_sorted, p):
    """The nearest-rank quantile of sorted values, as dcsim serve's P50/P90/P99
    (models/serving_stats.c nearest_rank: rank ceil(p n), at least 1)."""
    n = len(x_sorted)
    rank = max(int(math.ceil(p * n)), 1)
    return float(x_sorted[rank - 1])


def _time_axis(end_s):
    """(divisor, label) for a wall-time axis: seconds, minutes or hours."""
    if end_s >= 3 * 3600:
        return 3600.0, "time (h)"
    if end_s >= 3 * 60:
        return 60.0, "time (min)"
    return 1.0, "time (s)"


@F._styled
def serve_cdf(run, path):
    """The empirical CDFs of TTFT (ms), TPOT (ms) and E2E (s) over the
    finished requests, P50/P90/P99 marked. Double column. Returns {"path",
    "ttft", "tpot", "e2e" (each {"x": sorted values in s, "p", "q": {0.5,
    0.9, 0.99: nearest-rank quantile in s}})}."""
    lat = run.latencies()
    fig = F._figure(F.DOUBLE_COLUMN_IN, 2.4)
    axes = fig.subplots(1, 3)
    out = {"path": path}
    panels = (("ttft", "time to first token (ms)", MS_PER_S, F.BLUE),
              ("tpot", "time per output token (ms)", MS_PER_S, F.GREEN),
              ("e2e", "end-to-end latency (s)", 1.0, F.VERMILLION))
    for ax, (name, xlabel, scale, colour) in zip(axes, panels):
        x, p = ecdf(lat[name])
        q = {k: quantile(x, k) for k in QUANTILES} if len(x) else {}
        out[name] = {"x": x, "p": p, "q": q}
        if len(x):
            ax.step(x * scale, p, where="post", color=colour, linewidth=0.9)
            unit = "ms" if scale == MS_PER_S else "s"
            for k, c in zip(QUANTILES, (F.GREY, F.ORANGE, F.PURPLE)):
                ax.plot([q[k] * scale], [k], "o", color=c, markersize=3,
                        label=f"P{k * 100:g} {q[k] * scale:.3g} {unit}")
            ax.legend(loc="lower right")
            if x[0] > 0 and x[-1] / x[0] > 100:
                ax.set_xscale("log")
        ax.set_ylim(0, 1.02)
        ax.set_xlabel(xlabel)
    axes[0].set_ylabel("share of finished requests (1)")
    F._save(fig, path)
    return out


@F._styled
def serve_load(run, path):
    """Requests running, queued and in a KV transfer (time averages per bin,
    stacked) and the KV-cache use (%) against wall time, /serve/series' steps.
    Double column. Returns {"path", "edges_s", "running", "queued",
    "transferring", "kv_util", "in_system_mean" (Little's L: the time average
    of the three), "kv_util_mean"}."""
    edges = run.edges_s()
    width = np.diff(edges)
    parts = {k: np.asarray(run.series[k], dtype=float)
             for k in ("running", "queued", "transferring")}
    kv = np.asarray(run.series["kv_util"], dtype=float)
    total = float(width.sum())
    in_sys = parts["running"] + parts["queued"] + parts["transferring"]
    mean_l = float(np.dot(in_sys, width)) / total if total > 0 else 0.0
    mean_kv = float(np.dot(kv, width)) / total if total > 0 else 0.0
    div, xlabel = _time_axis(run.end_s)
    fig = F._figure(F.DOUBLE_COLUMN_IN, 3.0)
    ax_r, ax_k = fig.subplots(2, 1, sharex=True)
    outside = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "borderaxespad": 0}
    if len(kv):
        base = np.zeros_like(in_sys)
        for name, colour in (("running", F.BLUE), ("queued", F.VERMILLION),
                             ("transferring", F.SKY)):
            if name == "transferring" and not parts[name].any():
                continue
            ax_r.stairs(base + parts[name], edges / div, baseline=base, fill=True,
                        color=colour, alpha=0.8, label=name)
            base = base + parts[name]
        ax_k.stairs(100 * kv, edges / div, color=F.GREEN, linewidth=0.8, baseline=None)
    ax_r.axhline(mean_l, color=F.GREY, linewidth=0.6, linestyle="--",
                 label=f"mean in system {mean_l:.3g}")
    ax_k.axhline(100 * mean_kv, color=F.GREY, linewidth=0.6, linestyle="--",
                 label=f"mean {100 * mean_kv:.3g} %")
    ax_r.legend(**outside)
    ax_k.legend(**outside)
    ax_r.set_ylabel("requests (1)")
    ax_k.set_ylabel("KV cache used (%)")
    ax_k.set_ylim(0, min(105.0, max(5.0, 115 * float(kv.max()) if len(kv) else 5.0)))
    ax_k.set_xlabel(xlabel)
    ax_k.set_xlim(0, run.end_s / div if run.end_s > 0 else 1.0)
    F._save(fig, path)
    return {"path": path, "edges_s": edges, **parts, "kv_util": kv, "in_system_mean": mean_l,
            "kv_util_mean": mean_kv}


@F._styled
def serve_curve(table, path):
    """P50 and P99 TTFT (ms) and end-to-end latency (s) against the achieved
    throughput (requests/s), one point per row of the table in row order
    (a rate sweep: one per rate), the label of the first and last marked.
    Double column. Returns {"path", "labels", "requests_per_s",
    "output_tokens_per_s", "ttft_p50_s", "ttft_p99_s", "e2e_p50_s",
    "e2e_p99_s"} (each in row order, SI units)."""
    c = table.columns
    x = c["requests_per_s"]
    fig = F._figure(F.DOUBLE_COLUMN_IN, 2.6)
    ax_t, ax_e = fig.subplots(1, 2)
    for ax, name, scale, unit in ((ax_t, "ttft", MS_PER_S, "ms"), (ax_e, "e2e", 1.0, "s")):
        for q, colour, marker in (("p50", F.BLUE, "o"), ("p99", F.VERMILLION, "s")):
            y = c[f"{name}_{q}_s"] * scale
            ax.plot(x, y, marker=marker, markersize=3, linewidth=0.9, color=colour,
                    label=q.upper())
        top = c[f"{name}_p99_s"] * scale
        if len(top) and np.all(top > 0) and top.max() / top.min() > 100:
            ax.set_yscale("log")
        ax.set_xlabel("achieved throughput (requests/s)")
        ax.legend(loc="upper left")
    ax_t.set_ylabel("time to first token (ms)")
    ax_e.set_ylabel("end-to-end latency (s)")
    if len(x):
        for i in sorted({0, len(x) - 1}):
            ax_t.annotate(table.labels[i].rsplit("=", 1)[-1], (x[i], c["ttft_p99_s"][i] * MS_PER_S),
                          textcoords="offset points", xytext=(3, 3), fontsize=6)
    F._save(fig, path)
    return {"path": path, "labels": list(table.labels),
            **{k: c[k] for k in CURVE_COLUMNS}}


def all_figures(obj, outdir, formats=("png", "svg"), prefix=""):
    """Every serving figure obj (a ServeRun or ServeTable) supports, each in
    every format, into outdir (created). Returns the paths written."""
    os.makedirs(outdir, exist_ok=True)
    jobs = ([("serve_cdf", serve_cdf), ("serve_load", serve_load)] if isinstance(obj, ServeRun)
            else [("serve_curve", serve_curve)])
    return [fn(obj, os.path.join(outdir, f"{prefix}{name}.{ext}"))["path"]
            for name, fn in jobs for ext in formats]


def figures_of(run):
    """{name: (value, unit)} of a run, read from its file (the report's table):
    the quantiles by nearest rank over the file's finished requests."""
    lat = run.latencies()
    s = run.serve
    out = {"arrived": (int(s["arrived"]), "1"), "finished": (int(s["finished"]), "1"),
           "dropped": (int(s["dropped"]), "1"), "end_s": (run.end_s, "s"),
           "gpus": (float(s["gpus"]), "1")}
    for name in ("ttft", "tpot", "e2e"):
        x = np.sort(lat[name])
        for q in QUANTILES:
            if len(x):
                out[f"{name}_p{q * 100:g}_s"] = (quantile(x, q), "s")
    return out


def _section(obj, svgs, esc, value_cell, figures_html, index):
    if isinstance(obj, ServeRun):
        a, s = obj.attrs, obj.serve
        meta = [("scenario", a.get("scenario_name", "")), ("file", obj.path),
                ("model", s.get("model", "")), ("router", s.get("router", "")),
                ("replicas x tp", f"{s.get('replicas', '')} x {s.get('tp', '')}"),
                ("requests kept", f"every {obj.sample_every}")]
        head = f"Serving run: {a.get('scenario_name', os.path.basename(obj.path))}"
        rows = [(k, v, u) for k, (v, u) in figures_of(obj).items()]
        cols = ("figure", "value")
        body = "\n".join(f'<tr><td class="name">{esc(k.replace("_", " "))}</td>'
                         f"{value_cell(k, v, u)}</tr>" for k, v, u in rows)
    else:
        meta = [("file", obj.path), ("table", "/" + obj.name), ("rows", len(obj))]
        head = f"Serving {'sweep' if obj.name == 'serve_sweep' else 'comparison'}"
        shown = ("requests_per_s", "output_tokens_per_s", "ttft_p50_s", "ttft_p99_s",
                 "e2e_p99_s", "goodput_requests_per_s")
        cols = ("point",) + shown
        body = "\n".join(f'<tr><td class="name">{esc(label)}</td>'
                         + "".join(value_cell(k, float(obj.columns[k][i]), obj.units.get(k, ""))
                                   for k in shown) + "</tr>"
                         for i, label in enumerate(obj.labels))
    meta_rows = "\n".join(f'<tr><td class="name">{esc(k)}</td><td>{esc(v)}</td></tr>'
                          for k, v in meta)
    heads = "".join(f'<th{"" if i == 0 else " class=num"}>{esc(c.replace("_", " "))}</th>'
                    for i, c in enumerate(cols))
    return (f'<section class="serve" id="serve{index}"><h2>{esc(head)}</h2>\n'
            f'<table class="meta">{meta_rows}</table>\n<div class="wide"><table id="serve-'
            f'figures{index}" class="summary"><thead><tr>{heads}</tr></thead>\n<tbody>\n{body}\n'
            f"</tbody></table></div>\n" + figures_html(svgs, os.path.basename(obj.path))
            + "</section>\n")


def report_sections(objs, work, clean_svg, esc, value_cell, figures_html):
    """(HTML, stdout text) of every serving file given to dcsim report."""
    html, text = [], []
    for i, obj in enumerate(objs):
        prefix = f"v{i}_"
        svgs = []
        for path in all_figures(obj, work, formats=("svg",), prefix=prefix):
            with open(path, "rb") as f:
                svgs.append((os.path.splitext(os.path.basename(path))[0][len(prefix):],
                             clean_svg(f.read())))
        html.append(_section(obj, svgs, esc, value_cell, figures_html, i))
        if isinstance(obj, ServeRun):
            text.append(f"{obj.path}: dcsim serve, {obj.serve.get('model', '')}, "
                        f"{obj.serve.get('replicas', '')} x tp {obj.serve.get('tp', '')}")
            text += [f"  {k:22s} {v!r:>24s} {u}" for k, (v, u) in figures_of(obj).items()]
        else:
            text.append(f"{obj.path}: /{obj.name}, {len(obj)} rows (serving)")
            text += [f"  {label:40.40s} {obj.columns['requests_per_s'][i]:10.4g} req/s "
                     f"P99 TTFT {obj.columns['ttft_p99_s'][i] * MS_PER_S:10.4g} ms"
                     for i, label in enumerate(obj.labels)]
    return "".join(html), "\n".join(text) + ("\n" if text else "")


def main(argv=None):
    return F.figures_main(argv, "dcsim_serve.py",
                          "Write every figure a `dcsim serve -o` file or a "
                          "serving sweep/compare table supports "
                          "(docs/serving.md).",
                          "FILE.h5", load, all_figures)


if __name__ == "__main__":
    sys.exit(main())
