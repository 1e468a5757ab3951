"""dcsim_cluster - figures and report sections of a job-stream run
(`dcsim cluster SCENARIO.xml -o FILE.h5`, docs/trace-format.md "Cluster tables").

    /usr/bin/python3 analysis/dcsim_cluster.py run.h5 -o figs/     # every figure it supports
    ./build/dcsim report run.h5                                     # the same, in the report

Everything is drawn from the file, nothing recomputed by a model: utilisation
(busy GPUs / GPUs) and queue length over time are /cluster/series as the
exact step functions it stores (row i holds from t_s[i] to t_s[i+1], the last
to end_s), so their time averages are the run's utilisation and mean queue;
IT and facility power the same steps; the CDFs of wait and slowdown are the
empirical CDFs of /cluster/jobs, whose nearest-rank quantiles are the P50,
P90 and P99 `dcsim cluster --json` prints. Each figure function returns the
numbers it drew (SI units), which is how tests/python/test_cluster_report.py
compares the figures with the command's --json.
"""
import math
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dcsim_figures as F  # noqa: E402
from dcsim_trace import TraceFormatError  # noqa: E402

LAYOUT_VERSIONS = ("1", "2", "3", "4", "5")  # 2: isolated_run_s and run_s; 3: the disruption
# columns; 4: the elastic columns (min_gpus, resizes, gpus_mean)
HOUR_S = 3600.0
KILOWATT_W = 1e3
FIGURES = ("cluster_load", "cluster_power", "cluster_cdf", "cluster_placement")
TITLES = {"cluster_load": "Utilisation and queue over time",
          "cluster_power": "IT and facility power over time",
          "cluster_cdf": "CDF of wait and slowdown",
          "cluster_placement": "Fragmentation and interference"}


def _text(v):
    return v.decode("utf-8") if isinstance(v, bytes) else str(v)


class ClusterRun:
    """A `dcsim cluster -o` file:
      attrs      the root attributes (command, event_digest, seed, ...)
      cluster    /cluster's attributes (scheduler, placement, gpus, end_s,
                 utilisation, it_energy_j, has_site, ...)
      jobs       /cluster/jobs, a numpy structured array (one row per job)
      series     /cluster/series, a numpy structured array (the step function)
      units      {column: unit} of both tables
    TraceFormatError (one line) for a file that is not one."""

    def __init__(self, path):
        self.path = path
        with h5py.File(path, "r") as f:
            g = f.get("cluster")
            if not isinstance(g, h5py.Group) or "jobs" not in g or "series" not in g:
                raise TraceFormatError(f"{path}: not a dcsim cluster file (no /cluster/jobs "
                                       "and /cluster/series)")
            self.attrs = {k: _text(v) if isinstance(v, (bytes, str)) else v
                          for k, v in f.attrs.items()}
            self.cluster = {k: _text(v) if isinstance(v, (bytes, str)) else v
                            for k, v in g.attrs.items()}
            layout = self.cluster.get("layout_version", "")
            if layout not in LAYOUT_VERSIONS:
                raise TraceFormatError(f"{path}: /cluster layout_version {layout!r} is not one "
                                       f"this dcsim reads ({', '.join(LAYOUT_VERSIONS)})")
            self.jobs = g["jobs"][()]
            self.series = g["series"][()]
            self.units = {}
            for name in ("jobs", "series"):
                d = g[name]
                units = [_text(u) for u in d.attrs.get("units", [])]
                self.units.update(zip(d.dtype.names, units))
        self.gpus = int(self.cluster["gpus"])
        self.end_s = float(self.cluster["end_s"])
        self.has_site = bool(int(self.cluster.get("has_site", 0)))

    def edges_s(self):
        """The series' row boundaries: t_s, then end_s (len(series) + 1)."""
        t = np.asarray(self.series["t_s"], dtype=float)
        return np.append(t, max(self.end_s, t[-1]) if len(t) else self.end_s)

    def has(self, *columns):
        return all(c in (self.jobs.dtype.names or ()) for c in columns)


def time_average(values, edges):
    """The time average of a step function (values[i] from edges[i] to edges[i+1])."""
    dur = np.diff(edges)
    total = float(dur.sum())
    return float(np.dot(np.asarray(values, dtype=float), dur)) / total if total > 0 else 0.0


def ecdf(values):
    """(sorted values, p): p[i] = (i + 1) / n, the empirical CDF's steps."""
    x = np.sort(np.asarray(values, dtype=float))
    return x, np.arange(1, len(x) + 1, dtype=float) / max(len(x), 1)


def quantile(x_sorted, p):
    """The nearest-rank quantile of sorted values, as dcsim cluster's P50/P90/P99:
    the smallest value with at least p of them at or below it (the CDF drawn
    reaches p there)."""
    n = len(x_sorted)
    rank = max(int(math.ceil(p * n)), 1)
    return float(x_sorted[rank - 1])


def _days(edges):
    return np.asarray(edges, dtype=float) / F.DAY_S


def _xlim(ax, run):
    ax.set_xlim(0, run.end_s / F.DAY_S if run.end_s > 0 else 1.0)


@F._styled
def cluster_load(run, path):
    """Utilisation (busy GPUs / GPUs, %) and queue length (jobs) against wall
    time (days), the exact steps of /cluster/series. Double column.
    Returns {"path", "edges_s", "utilisation", "queue", "utilisation_mean",
    "queue_mean"}: the means are the time averages of what was drawn."""
    edges = run.edges_s()
    util = np.asarray(run.series["busy_gpus"], dtype=float) / run.gpus
    queue = np.asarray(run.series["queue"], dtype=float)
    fig = F._figure(F.DOUBLE_COLUMN_IN, 3.0)
    ax_u, ax_q = fig.subplots(2, 1, sharex=True)
    u_mean, q_mean = time_average(util, edges), time_average(queue, edges)
    if len(util):
        ax_u.stairs(100 * util, _days(edges), color=F.BLUE, linewidth=0.8, baseline=None)
        ax_q.stairs(queue, _days(edges), color=F.VERMILLION, linewidth=0.8, baseline=None)
    outside = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "borderaxespad": 0}
    ax_u.axhline(100 * u_mean, color=F.GREY, linewidth=0.6, linestyle="--",
                 label=f"mean {100 * u_mean:.2f} %")
    ax_q.axhline(q_mean, color=F.GREY, linewidth=0.6, linestyle="--",
                 label=f"mean {q_mean:.3g}")
    ax_u.legend(**outside)
    ax_q.legend(**outside)
    ax_u.set_ylim(0, 105)
    ax_u.set_ylabel("utilisation (%)")
    ax_q.set_ylim(0, max(float(queue.max()) * 1.1 if len(queue) else 1.0, 1.0))
    ax_q.set_ylabel("queue (jobs)")
    ax_q.set_xlabel("wall time (d)")
    _xlim(ax_q, run)
    F._save(fig, path)
    return {"path": path, "edges_s": edges, "utilisation": util, "queue": queue,
            "utilisation_mean": u_mean, "queue_mean": q_mean}


@F._styled
def cluster_power(run, path):
    """IT power and, with a <site>, facility power (kW) against wall time,
    the steps of /cluster/series. Single column. Returns {"path", "edges_s",
    "it_power_w", "facility_power_w" (None without a site), "it_energy_j",
    "facility_energy_j" (None without a site)}: the integrals of what was drawn."""
    edges = run.edges_s()
    dur = np.diff(edges)
    it_w = np.asarray(run.series["it_power_w"], dtype=float)
    fac_w = np.asarray(run.series["facility_power_w"], dtype=float) if run.has_site else None
    fig = F._figure(F.SINGLE_COLUMN_IN, 2.4)
    ax = fig.subplots()
    if len(it_w):
        if fac_w is not None:
            ax.stairs(fac_w / KILOWATT_W, _days(edges), color=F.ORANGE, linewidth=0.8,
                      label="facility", baseline=None)
        ax.stairs(it_w / KILOWATT_W, _days(edges), color=F.BLUE, linewidth=0.8, label="IT",
                  baseline=None)
        top = float((fac_w if fac_w is not None else it_w).max()) / KILOWATT_W
        ax.set_ylim(0, top * 1.15 if top > 0 else 1.0)
    ax.legend(loc="lower right")
    ax.set_ylabel("power (kW)")
    ax.set_xlabel("wall time (d)")
    _xlim(ax, run)
    F._save(fig, path)
    return {"path": path, "edges_s": edges, "it_power_w": it_w, "facility_power_w": fac_w,
            "it_energy_j": float(np.dot(it_w, dur)),
            "facility_energy_j": float(np.dot(fac_w, dur)) if fac_w is not None else None}


@F._styled
def cluster_cdf(run, path):
    """The empirical CDFs of the jobs' wait (h) and slowdown (log axis), from
    /cluster/jobs, with P50/P90/P99 marked. Double column. Returns {"path",
    "wait_s", "slowdown" (sorted, as drawn), "p", "wait_q" and "slowdown_q"
    ({0.5, 0.9, 0.99: nearest-rank quantile})}."""
    wait, p = ecdf(run.jobs["wait_s"])
    slow, _ = ecdf(run.jobs["slowdown"])
    qs = (0.5, 0.9, 0.99)
    wait_q = {q: quantile(wait, q) for q in qs} if len(wait) else {}
    slow_q = {q: quantile(slow, q) for q in qs} if len(slow) else {}
    fig = F._figure(F.DOUBLE_COLUMN_IN, 2.4)
    ax_w, ax_s = fig.subplots(1, 2)
    if len(wait):
        ax_w.step(wait / HOUR_S, p, where="post", color=F.BLUE, linewidth=0.9)
        ax_s.step(slow, p, where="post", color=F.VERMILLION, linewidth=0.9)
        for q, colour in zip(qs, (F.GREEN, F.ORANGE, F.PURPLE)):
            ax_w.plot([wait_q[q] / HOUR_S], [q], "o", color=colour, markersize=3,
                      label=f"P{q * 100:g} {wait_q[q] / HOUR_S:.3g} h")
            ax_s.plot([slow_q[q]], [q], "o", color=colour, markersize=3,
                      label=f"P{q * 100:g} {slow_q[q]:.3g}")
        ax_w.legend(loc="lower right")
        ax_s.legend(loc="lower right")
        if slow[-1] > 1:
            ax_s.set_xscale("log")
    for ax in (ax_w, ax_s):
        ax.set_ylim(0, 1.02)
        ax.set_ylabel("share of jobs (1)")
    ax_w.set_xlabel("wait (h)")
    ax_s.set_xlabel("slowdown (1)")
    F._save(fig, path)
    return {"path": path, "wait_s": wait, "slowdown": slow, "p": p, "wait_q": wait_q,
            "slowdown_q": slow_q}


def placement_supported(run):
    return run.has("gpus", "leaves", "min_leaves") or run.has("isolated_run_s", "run_s")


@F._styled
def cluster_placement(run, path):
    """Fragmentation: jobs by leaves spanned beyond the fewest that hold them
    (leaves - min_leaves); interference (layout 2): each job's run time over
    its isolated run time against its GPUs. Double column. Returns {"path",
    "extra_leaves" (per job), "stretch" (per job, or None)}. ValueError
    without the columns."""
    if not placement_supported(run):
        raise ValueError(f"{run.path}: the placement figure needs /cluster/jobs leaves and "
                         "min_leaves, or isolated_run_s and run_s")
    has_frag = run.has("gpus", "leaves", "min_leaves")
    has_stretch = run.has("isolated_run_s", "run_s")
    fig = F._figure(F.DOUBLE_COLUMN_IN, 2.4)
    ax_f, ax_i = fig.subplots(1, 2)
    extra = stretch = None
    if has_frag:
        extra = (np.asarray(run.jobs["leaves"], dtype=np.int64)
                 - np.asarray(run.jobs["min_leaves"], dtype=np.int64))
        counts = np.bincount(extra - extra.min() if len(extra) else extra, minlength=1)
        ks = np.arange(len(counts)) + (extra.min() if len(extra) else 0)
        ax_f.bar(ks, counts, color=F.BLUE, width=0.7)
        ax_f.set_xlabel("leaves spanned beyond the fewest (1)")
        ax_f.set_ylabel("jobs (1)")
        ax_f.xaxis.set_major_locator(F.MaxNLocator(integer=True))
    else:
        ax_f.set_axis_off()
    if has_stretch and run.has("run_over_isolated"):
        # layout 5: the model's own per job (with disruption: time worked over
        # its isolated time, docs/cluster.md "Interference with disruption")
        stretch = np.asarray(run.jobs["run_over_isolated"], dtype=float)
    elif has_stretch:
        iso = np.asarray(run.jobs["isolated_run_s"], dtype=float)
        # as the model counts it: a job whose end was never moved ran exactly its
        # isolated time (end - start may round an ulp away from it)
        moved = run.jobs["end_s"] != run.jobs["start_s"] + iso
        stretch = np.where(moved, np.asarray(run.jobs["run_s"], dtype=float)
                           / np.where(iso > 0, iso, 1.0), 1.0)
    if has_stretch:
        gpus = np.asarray(run.jobs["gpus"], dtype=float)
        ax_i.scatter(gpus, stretch, s=4, color=F.VERMILLION, alpha=0.6, linewidths=0,
                     rasterized=len(stretch) > F.DENSE_POINTS)
        ax_i.set_xscale("log", base=2)
        ax_i.set_xlabel("job size (GPUs)")
        ax_i.set_ylabel("run / isolated run (1)")
        top = float(stretch.max()) if len(stretch) else 1.0
        ax_i.set_ylim(min(0.99, float(stretch.min()) if len(stretch) else 1.0),
                      max(top * 1.02, 1.01))
    else:
        ax_i.set_axis_off()
    F._save(fig, path)
    return {"path": path, "extra_leaves": extra, "stretch": stretch}


def all_figures(run, outdir, formats=("png", "svg"), prefix=""):
    """Every cluster figure the file supports, each in every format, into
    outdir (created). Returns the paths written."""
    os.makedirs(outdir, exist_ok=True)
    jobs = [("cluster_load", cluster_load), ("cluster_power", cluster_power),
            ("cluster_cdf", cluster_cdf)]
    if placement_supported(run):
        jobs.append(("cluster_placement", cluster_placement))
    return [fn(run, os.path.join(outdir, f"{prefix}{name}.{ext}"))["path"]
            for name, fn in jobs for ext in formats]


def figures_of(run):
    """{name: (value, unit)} of the run's figures, read from the file (the
    report's table and stdout summary): what `dcsim cluster --json` prints
    under the same names."""
    edges = run.edges_s()
    wait, _ = ecdf(run.jobs["wait_s"])
    slow, _ = ecdf(run.jobs["slowdown"])
    out = {"jobs": (len(run.jobs), "1"), "end_s": (run.end_s, "s"),
           "utilisation": (float(run.cluster["utilisation"]), "1"),
           "queue_mean": (time_average(run.series["queue"], edges), "1")}
    for q in (0.5, 0.9, 0.99):
        if len(wait):
            out[f"wait_p{q * 100:g}_s"] = (quantile(wait, q), "s")
    if len(slow):
        out["slowdown_mean"] = (float(np.mean(run.jobs["slowdown"])), "1")
    out["it_energy_j"] = (float(run.cluster["it_energy_j"]), "J")
    for key, unit in (("facility_energy_j", "J"), ("cost", "CNY"), ("co2_kg", "kg")):
        if run.has_site and key in run.cluster:
            out[key] = (float(run.cluster[key]), unit)
    return out


def report_section(run, svgs, esc, value_cell, figures_html, index=0):
    """The report's section of one cluster file: its settings, the figures'
    table (value cells as the report writes them) and the figures."""
    a, c = run.attrs, run.cluster
    meta = [("scenario", a.get("scenario_name", "")), ("file", run.path),
            ("scheduler", c.get("scheduler", "")), ("placement", c.get("placement", "")),
            ("GPUs", run.gpus), ("site", c.get("site", "none: IT energy only")),
            ("event digest", a.get("event_digest", ""))]
    rows = "\n".join(f"<tr><td class=\"name\">{esc(k)}</td><td>{esc(v)}</td></tr>"
                     for k, v in meta)
    figs = "\n".join(f'<tr><td class="name" title="{esc(k)}">{esc(k.replace("_", " "))}</td>'
                     f"{value_cell(k, v, u)}</tr>" for k, (v, u) in figures_of(run).items())
    return (f'<section class="cluster" id="cluster{index}"><h2>Job stream: '
            f'{esc(a.get("scenario_name", os.path.basename(run.path)))}</h2>\n'
            f'<table class="meta">{rows}</table>\n<div class="wide"><table id="cluster-figures'
            f'{index}" class="summary"><thead><tr><th>figure</th><th class="num">value</th>'
            f"</tr></thead>\n<tbody>\n{figs}\n</tbody></table></div>\n"
            + figures_html(svgs, os.path.basename(run.path)) + "</section>\n")


def report_sections(runs, work, clean_svg, esc, value_cell, figures_html):
    """(HTML, stdout text) of every cluster file given to dcsim report."""
    html, text = [], []
    for i, run in enumerate(runs):
        paths = all_figures(run, work, formats=("svg",), prefix=f"k{i}_")
        svgs = []
        for path in paths:
            with open(path, "rb") as f:
                svgs.append((os.path.splitext(os.path.basename(path))[0][len(f"k{i}_"):],
                             clean_svg(f.read())))
        html.append(report_section(run, svgs, esc, value_cell, figures_html, i))
        text.append(f"{run.path}: dcsim cluster, {run.cluster.get('scheduler', '')} / "
                    f"{run.cluster.get('placement', '')}, {run.gpus} GPUs")
        text += [f"  {k:22s} {v!r:>24s} {u}" for k, (v, u) in figures_of(run).items()]
    return "".join(html), "\n".join(text) + ("\n" if text else "")


def main(argv=None):
    return F.figures_main(argv, "dcsim_cluster.py",
                          "Write every figure a `dcsim cluster -o` file "
                          "supports (docs/analysis.md).",
                          "CLUSTER.h5", ClusterRun, all_figures)


if __name__ == "__main__":
    sys.exit(main())
