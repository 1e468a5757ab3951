"""dcsim_figures - figures for a paper from dcsim traces (docs/trace-format.md).

Each figure function takes a Trace (or traces / a goodput JSON) and an output
path ending in .png or .svg, draws with the Agg backend at print sizes
(single column 3.5 in, double column 7 in, every font 8 pt), and returns the
numbers it drew, in the trace's SI units, so tests can compare them with the
trace. Output is deterministic: no dates or software stamps, fixed SVG ids.

    /usr/bin/python3 analysis/dcsim_figures.py run.h5 -o figs/     # every figure it supports
    /usr/bin/python3 analysis/dcsim_figures.py a.h5 b.h5 c.h5 -o figs/ --goodput g.json
    /usr/bin/python3 analysis/dcsim_figures.py run.h5 -o figs/ --compare sites.h5
"""
import argparse
import functools
import json
import math
import os
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dcsim_trace import (Trace, TraceFormatError, file_kind, read_compare,  # noqa: E402,F401
                         read_sweep, SweepTable)
from dcsim_units import setting_words  # noqa: E402

SINGLE_COLUMN_IN = 3.5
DOUBLE_COLUMN_IN = 7.0
FONT_PT = 8
DAY_S = 86400.0
MINUTE_S = 60.0
PNG_DPI = 300
DENSE_POINTS = 2000     # more marks than this are rasterised (at PNG_DPI) inside an SVG

STYLE = {
    "font.family": "DejaVu Sans",          # ships with matplotlib: same glyphs everywhere
    "font.size": FONT_PT,
    "axes.titlesize": FONT_PT,
    "axes.labelsize": FONT_PT,
    "xtick.labelsize": FONT_PT,
    "ytick.labelsize": FONT_PT,
    "legend.fontsize": FONT_PT,
    "legend.title_fontsize": FONT_PT,
    "figure.titlesize": FONT_PT,
    "axes.linewidth": 0.6,
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "lines.linewidth": 1.0,
    "legend.frameon": False,
    "svg.fonttype": "path",                # text as outlines: no font needed to view
    "svg.hashsalt": "dcsim",               # fixed element ids: byte-identical SVG
    "savefig.dpi": PNG_DPI,
}

# Okabe & Ito (2008) colour-blind-safe palette
BLUE, ORANGE, SKY, GREEN, YELLOW, VERMILLION, PURPLE = (
    "#0072B2", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#D55E00", "#CC79A7")
GREY, LIGHT_GREY = "#555555", "#CCCCCC"

# /step/stages parts, in the order the writer stores them (they add up to the iteration)
STEP_PARTS = ("compute_s", "tp_s", "pp_s", "dp_s", "cp_s", "ep_s", "bubble_s", "optimizer_s")
STEP_LABELS = {"compute_s": "compute", "tp_s": "TP comm.", "pp_s": "PP comm.",
               "dp_s": "DP comm.", "cp_s": "CP comm.", "ep_s": "EP comm.",
               "bubble_s": "bubble", "optimizer_s": "optimizer"}
STEP_COLOURS = {"compute_s": BLUE, "tp_s": ORANGE, "pp_s": SKY, "dp_s": GREEN,
                "cp_s": YELLOW, "ep_s": VERMILLION, "bubble_s": LIGHT_GREY,
                "optimizer_s": PURPLE}

# /summary terms that add up to time_to_train_s (docs/trace-format.md)
CAMPAIGN_PARTS = ("compute_time_s", "rework_s", "checkpoint_time_s", "checkpoint_aborted_s",
                  "restart_time_s")
CAMPAIGN_LABELS = {"compute_time_s": "productive compute", "rework_s": "rework",
                   "checkpoint_time_s": "checkpoint writes",
                   "checkpoint_aborted_s": "aborted writes", "restart_time_s": "restarts",
                   "other_s": "other"}
CAMPAIGN_COLOURS = {"compute_time_s": BLUE, "rework_s": VERMILLION,
                    "checkpoint_time_s": GREEN, "checkpoint_aborted_s": YELLOW,
                    "restart_time_s": ORANGE, "other_s": GREY}

EVENT_ROWS = (("checkpoint_done", "checkpoints", GREEN), ("failure", "failures", VERMILLION),
              ("restart_done", "restarts", ORANGE), ("straggler", "stragglers", PURPLE),
              ("drain", "drains", SKY))

FIGURES = ("time_breakdown", "campaign_timeline", "step_timeline", "tier_utilisation",
           "power_pue", "goodput_curve", "site_comparison")
MEGAWATT_W = 1e6


def _styled(fn):
    """Run a figure function under STYLE, so every artist it makes uses it."""
    @functools.wraps(fn)
    def wrapper(*args, **kw):
        with matplotlib.rc_context(STYLE):
            return fn(*args, **kw)
    return wrapper


def _figure(width_in, height_in, **kw):
    return Figure(figsize=(width_in, height_in), layout="constrained", **kw)


png_dpi = PNG_DPI       # dcsim_figures.py --dpi changes it (the README's figures: 150)


def _save(fig, path):
    """Write fig to path (.png or .svg) without timestamps or version stamps."""
    ext = os.path.splitext(path)[1].lower()
    if ext == ".svg":
        metadata = {"Date": None, "Creator": None}
    elif ext == ".png":
        metadata = {"Software": None}
    else:
        raise ValueError(f"{path}: figure path must end in .png or .svg")
    fig.savefig(path, metadata=metadata, dpi=png_dpi)
    return path


def _percent(part, whole):
    return 100.0 * part / whole if whole else 0.0


def _si_bytes(n):
    """'7.76 PB': decimal prefixes (1 kB = 1000 B)."""
    for prefix, scale in (("E", 1e18), ("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6),
                          ("k", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.3g} {prefix}B"
    return f"{n:.3g} B"


def _require_step(trace, what):
    if not trace.has_step:
        raise ValueError(f"{trace.path}: {what} needs /step (a run without <training mfu>)")


def _stage_axis(ax, n, critical, iteration_s, right_s, pad):
    """The y axis of stages (top to bottom, the critical one labelled), the x
    axis of one iteration, the iteration's end dashed."""
    ax.set_ylim(n - 0.5, -0.5)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True, nbins=min(n, 16)))
    ax.yaxis.set_major_formatter(FuncFormatter(
        lambda v, _: f"critical {int(v)}" if int(v) == critical else f"{int(v)}"))
    ax.set_ylabel("pipeline stage")
    ax.set_xlabel("time in one iteration (s)")
    ax.axvline(iteration_s, color=GREY, linewidth=0.6, linestyle="--")
    ax.set_xlim(0, max(iteration_s, right_s) * pad)


@_styled
def step_timeline(trace, path):
    """A Gantt chart of one iteration, a row per pipeline stage, from /step:
    every forward (light blue) and backward (dark blue) of every micro-batch
    where the schedule placed it (/step/tasks: the slowest replica), the part
    of each task that is communication the stage cannot hide (TP, CP, EP) in
    orange at the task's end in proportion to the stage's totals in
    /step/stages, then the exposed data-parallel reduction (green) and the
    optimizer (purple) up to the stage's end; white gaps are the bubble. The
    critical stage is labelled. With more than GANTT_ZOOM_TASKS tasks per stage
    (an interleaved schedule of many micro-batches draws slivers), a second
    panel zooms on the critical stage's steady state, GANTT_ZOOM_WIDTH of its
    median task lengths from its first backward, every task labelled F or B
    with its micro-batch (and .chunk when interleaved) where it is wide
    enough; the window is shaded on the whole iteration. Double column.
    Traces without /step/tasks get stacked bars of each stage's parts instead.

    Returns {"path", "stage", "parts" {column: seconds per stage}, "end_s",
    "iteration_s", "critical_stage", "tasks" {"stage", "backward", "start_s",
    "end_s"} (None without /step/tasks), "busy_s" (per stage: the tasks'
    total length), "dp_start_s" (per stage: its last task's end), "zoom_s"
    ([start, stop] or None), "labels" ((stage, text) of the zoom's labelled
    tasks)}; raises ValueError without /step."""
    _require_step(trace, "the step timeline")
    tasks = getattr(trace, "step_tasks", None)
    if tasks is None:
        return _stage_bars(trace, path)
    st = trace.step_stages
    n = len(st)
    critical = int(trace.step_attrs.get("critical_stage", -1))
    stage = np.arange(n)
    parts = {c: np.array(st[c], dtype=float) for c in STEP_PARTS if c in st.dtype.names}
    end_s = np.array(st["end_s"], dtype=float)
    t_stage = np.array(tasks["stage"], dtype=int)
    t_back = np.array(tasks["backward"], dtype=float) > 0.5
    t_start = np.array(tasks["start_s"], dtype=float)
    t_end = np.array(tasks["end_s"], dtype=float)
    comm = sum(parts.get(c, np.zeros(n)) for c in ("tp_s", "cp_s", "ep_s"))
    work = parts["compute_s"] + comm
    comm_share = np.divide(comm, work, out=np.zeros(n), where=work > 0)
    zoom = _gantt_window(tasks, critical if critical >= 0 else 0, n)
    fig = _figure(DOUBLE_COLUMN_IN, min(1.2 + 0.14 * n, 8.0) * (1.9 if zoom else 1.0))
    if zoom:
        ax, zax = fig.subplots(2, 1)
    else:
        ax, zax = fig.add_subplot(), None
    height = 0.76
    dense = len(t_start) > DENSE_POINTS
    busy = np.zeros(n)
    dp_start = np.zeros(n)
    for s in range(n):
        mine = t_stage == s
        length = t_end[mine] - t_start[mine]
        busy[s] = float(np.sum(length))
        dp_start[s] = float(t_end[mine].max()) if np.any(mine) else 0.0
        y = (s - height / 2, height)
        for backward, colour in ((False, SKY), (True, BLUE)):
            sel = t_back[mine] == backward
            bars = list(zip(t_start[mine][sel], length[sel]))
            if bars:
                ax.broken_barh(bars, y, facecolors=colour, edgecolor="white",
                               linewidth=0.2 if not dense else 0, rasterized=dense)
        if comm_share[s] > 0:
            slivers = [(e - w * comm_share[s], w * comm_share[s])
                       for e, w in zip(t_end[mine], length)]
            ax.broken_barh(slivers, y, facecolors=ORANGE, linewidth=0, rasterized=dense)
        optimizer = parts.get("optimizer_s", np.zeros(n))[s]
        tail = [(dp_start[s], end_s[s] - optimizer - dp_start[s], GREEN),
                (end_s[s] - optimizer, optimizer, PURPLE)]
        for x0, w, colour in tail:
            if w > 0:
                ax.broken_barh([(x0, w)], y, facecolors=colour, linewidth=0)
    from matplotlib.patches import Patch
    legend = [Patch(color=SKY, label="forward"), Patch(color=BLUE, label="backward"),
              Patch(color=ORANGE, label="TP/CP/EP comm."), Patch(color=GREEN, label="DP comm."),
              Patch(color=PURPLE, label="optimizer")]
    iteration_s = float(trace.step_attrs.get("iteration_s", end_s.max() if n else 0.0))
    _stage_axis(ax, n, critical, iteration_s, end_s.max() if n else 0.0, 1.01)
    ax.legend(handles=legend, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    labels = []
    if zoom:
        ax.axvspan(zoom[0], zoom[1], color=GREY, alpha=0.25, linewidth=0)
        labels = _gantt_zoom(zax, tasks, zoom, n, critical, comm_share, height)
    _save(fig, path)
    return {"path": path, "stage": stage, "parts": parts, "end_s": end_s,
            "iteration_s": iteration_s, "critical_stage": critical,
            "tasks": {"stage": t_stage, "backward": t_back, "start_s": t_start, "end_s": t_end},
            "busy_s": busy, "dp_start_s": dp_start, "zoom_s": list(zoom) if zoom else None,
            "labels": labels}


GANTT_ZOOM_TASKS = 48   # tasks per stage beyond which the Gantt gets a zoom panel
GANTT_ZOOM_WIDTH = 14   # the zoom window, in median task lengths


def _gantt_window(tasks, critical, n):
    """[start, stop] of the Gantt's zoom: from two median task lengths before
    the critical stage's first backward, GANTT_ZOOM_WIDTH of them; None when
    the stages hold GANTT_ZOOM_TASKS tasks each or fewer."""
    if tasks is None or not n or len(tasks) <= GANTT_ZOOM_TASKS * n:
        return None
    mine = tasks[np.array(tasks["stage"], dtype=int) == critical]
    if not len(mine):
        return None
    length = float(np.median(np.array(mine["end_s"]) - np.array(mine["start_s"])))
    back = mine[np.array(mine["backward"], dtype=float) > 0.5]
    t0 = float(back["start_s"].min()) if len(back) else float(mine["start_s"].min())
    return t0 - 2 * length, t0 + (GANTT_ZOOM_WIDTH - 2) * length


def _gantt_zoom(zax, tasks, zoom, n, critical, comm_share, height):
    """The zoom panel: every stage's tasks inside the window, each labelled
    F/B + micro-batch (+ .chunk when the schedule is interleaved) where it is
    at least 1/(1.25 GANTT_ZOOM_WIDTH) of the window wide. Returns the labels
    as (stage, text)."""
    t0, t1 = zoom
    stage = np.array(tasks["stage"], dtype=int)
    start = np.array(tasks["start_s"], dtype=float)
    end = np.array(tasks["end_s"], dtype=float)
    back = np.array(tasks["backward"], dtype=float) > 0.5
    micro = np.array(tasks["microbatch"], dtype=int)
    chunk = np.array(tasks["chunk"], dtype=int)
    interleaved = chunk.max(initial=0) > 0
    labels = []
    for i in np.flatnonzero((end > t0) & (start < t1)):
        s, a, b = int(stage[i]), max(start[i], t0), min(end[i], t1)
        y = (s - height / 2, height)
        zax.broken_barh([(a, b - a)], y, facecolors=BLUE if back[i] else SKY,
                        edgecolor="white", linewidth=0.4)
        if comm_share[s] > 0 and end[i] <= t1:
            w = (end[i] - start[i]) * comm_share[s]
            zax.broken_barh([(end[i] - w, w)], y, facecolors=ORANGE, linewidth=0)
        if b - a >= (t1 - t0) / (1.25 * GANTT_ZOOM_WIDTH):
            text = f"{'B' if back[i] else 'F'}{micro[i]}" + (f".{chunk[i]}" if interleaved else "")
            zax.text((a + b) / 2, s, text, ha="center", va="center", fontsize=FONT_PT,
                     color="white" if back[i] else "black", clip_on=True)
            labels.append((s, text))
    zax.set_ylim(n - 0.5, -0.5)
    zax.yaxis.set_major_locator(MaxNLocator(integer=True, nbins=min(n, 16)))
    zax.yaxis.set_major_formatter(FuncFormatter(
        lambda v, _: f"critical {int(v)}" if int(v) == critical else f"{int(v)}"))
    zax.set_ylabel("pipeline stage")
    zax.set_xlim(t0, t1)
    zax.set_xlabel("zoom on the shaded window (s): F/B = forward/backward of micro-batch"
                   + (" .chunk" if interleaved else ""))
    return labels


def _stage_bars(trace, path):
    """step_timeline of a trace without /step/tasks (written before dcsim
    stored the schedule): each stage a bar of its /step/stages parts stacked
    in a fixed order (not the order in time), a tick at the stage's end."""
    st = trace.step_stages
    n = len(st)
    critical = int(trace.step_attrs.get("critical_stage", -1))
    stage = np.arange(n)
    parts = {c: np.array(st[c], dtype=float) for c in STEP_PARTS if c in st.dtype.names}
    fig = _figure(DOUBLE_COLUMN_IN, min(1.1 + 0.13 * n, 8.0))
    ax = fig.add_subplot()
    left = np.zeros(n)
    for c, v in parts.items():
        if np.any(v > 0):
            ax.barh(stage, v, left=left, height=0.75, color=STEP_COLOURS[c],
                    label=STEP_LABELS[c], edgecolor="white", linewidth=0.3)
        left += v
    end_s = np.array(st["end_s"], dtype=float)
    ax.plot(end_s, stage, linestyle="none", marker="|", markersize=7, color="black",
            label="stage end")
    iteration_s = float(trace.step_attrs.get("iteration_s", left.max() if n else 0.0))
    _stage_axis(ax, n, critical, iteration_s, left.max() if n else 0.0, 1.02)
    handles, labels = ax.get_legend_handles_labels()
    order = [labels.index(x) for x in labels if x != "stage end"] + [labels.index("stage end")]
    ax.legend([handles[i] for i in order], [labels[i] for i in order], loc="upper left",
              bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    _save(fig, path)
    return {"path": path, "stage": stage, "parts": parts, "end_s": end_s,
            "iteration_s": iteration_s, "critical_stage": critical, "tasks": None}


def _campaign_parts(trace):
    parts = {k: float(trace.value(k)) for k in CAMPAIGN_PARTS if k in trace.summary}
    total = float(trace.value("time_to_train_s"))
    other = total - sum(parts.values())
    if abs(other) > 1e-6 * total:       # e.g. maintenance, when the summary gains it
        parts["other_s"] = other
    return parts, total


def _hbars(ax, labels, values, colours, scale, unit, total):
    y = np.arange(len(values))
    ax.barh(y, np.asarray(values) / scale, color=colours, height=0.7, edgecolor=GREY,
            linewidth=0.3)
    ax.set_yticks(y, labels)
    ax.set_ylim(len(values) - 0.5, -0.5)
    top = max(values) / scale if len(values) else 1.0
    ax.set_xlim(0, top * 1.32 if top > 0 else 1.0)
    for yi, v in zip(y, values):
        ax.text(v / scale, yi, f" {_percent(v, total):.1f} %", va="center", ha="left",
                fontsize=FONT_PT)
    ax.set_xlabel(unit)


@_styled
def time_breakdown(trace, path):
    """Where the run's time goes: the /summary terms that add up to the time to
    train (productive compute, rework, checkpoint writes, aborted writes,
    restarts, and 'other' if they fall short), in days with their share; with
    /step, a second panel with the critical stage's iteration parts in seconds.
    Single column without /step, double with it.

    Returns {"path", "campaign_s" {summary name: s}, "time_to_train_s",
    "iteration_s" {stage column: s} or None, "critical_stage"}."""
    parts, total = _campaign_parts(trace)
    has_step = trace.has_step
    fig = _figure(DOUBLE_COLUMN_IN if has_step else SINGLE_COLUMN_IN, 2.0)
    axes = fig.subplots(1, 2) if has_step else [fig.add_subplot()]
    _hbars(axes[0], [CAMPAIGN_LABELS[k] for k in parts], list(parts.values()),
           [CAMPAIGN_COLOURS[k] for k in parts], DAY_S, "time (d)", total)
    axes[0].set_title(f"campaign: {total / DAY_S:.1f} d to train", loc="left")
    iteration = None
    critical = -1
    if has_step:
        critical = int(trace.step_attrs.get("critical_stage", 0))
        row = trace.step_stages[critical]
        iteration = {c: float(row[c]) for c in STEP_PARTS if c in trace.step_stages.dtype.names}
        shown = [c for c, v in iteration.items() if v > 0]
        it_total = sum(iteration.values())
        _hbars(axes[1], [STEP_LABELS[c] for c in shown], [iteration[c] for c in shown],
               [STEP_COLOURS[c] for c in shown], 1.0,
               "time per iteration (s)", it_total)
        axes[1].set_title(f"iteration: {it_total:.3g} s (stage {critical})", loc="left")
    _save(fig, path)
    return {"path": path, "campaign_s": parts, "time_to_train_s": total,
            "iteration_s": iteration, "critical_stage": critical}


UTILISATION_BINS = 20


@_styled
def tier_utilisation(trace, path):
    """Fabric load by tier from /step: bytes per iteration per tier (log
    scale), and a heat map of how the tier's links are loaded: a row per
    tier, a column per utilisation bin (mean bytes / (capacity x iteration),
    in %, from 0 to the busiest link; a first column for links that carry
    nothing), each cell's colour the share of the tier's links in it, the
    busiest link marked. Traces without /step/link_utilisation get the
    busiest link per tier as bars instead. Double column.

    Returns {"path", "tiers", "bytes", "peak_utilisation" (fraction),
    "links" (per tier), "idle" (per tier: links carrying nothing),
    "bin_edges" (fractions), "counts" (tiers x bins: links)}; raises
    ValueError without /step."""
    _require_step(trace, "the tier utilisation")
    tiers = trace.step_tiers
    names = [str(t) for t in tiers["tier"]]
    nbytes = np.array(tiers["bytes"], dtype=float)
    util = np.array(tiers["peak_utilisation"], dtype=float)
    per_link = getattr(trace, "link_utilisation", None)
    fig = _figure(DOUBLE_COLUMN_IN, 2.2)
    ax_b, ax_u = fig.subplots(1, 2, sharey=True, gridspec_kw={"width_ratios": [2, 3]})
    y = np.arange(len(names))
    ax_b.barh(y, np.where(nbytes > 0, nbytes, np.nan), color=BLUE, height=0.7)
    ax_b.set_xscale("log")
    positive = nbytes[nbytes > 0]
    if len(positive):
        ax_b.set_xlim(positive.min() / 10, positive.max() * 40)
    for yi, v in zip(y, nbytes):
        ax_b.text(v if v > 0 else ax_b.get_xlim()[0], yi, f" {_si_bytes(v)}", va="center",
                  ha="left", fontsize=FONT_PT)
    ax_b.set_xlabel("bytes per iteration (B)")
    ax_b.set_yticks(y, names)
    ax_b.set_ylim(len(names) - 0.5, -0.5)
    out = {"path": path, "tiers": names, "bytes": nbytes, "peak_utilisation": util,
           "links": None, "idle": None, "bin_edges": None, "counts": None}
    if per_link is None:
        ax_u.barh(y, 100 * util, color=ORANGE, height=0.7)
        ax_u.set_xlim(0, max(100 * util.max() * 1.35 if len(util) else 1.0, 1e-3))
        for yi, v in zip(y, util):
            ax_u.text(100 * v, yi, f" {100 * v:.2f} %", va="center", ha="left",
                      fontsize=FONT_PT)
        ax_u.set_xlabel("busiest link's utilisation (%)")
        _save(fig, path)
        return out
    link_tier = np.array(per_link["tier"], dtype=int)
    u = np.array(per_link["utilisation"], dtype=float)
    top = float(u.max()) if len(u) else 0.0
    top = top if top > 0 else 1.0
    edges = np.linspace(0.0, top, UTILISATION_BINS + 1)
    counts = np.zeros((len(names), UTILISATION_BINS), dtype=np.int64)
    links = np.zeros(len(names), dtype=np.int64)
    idle = np.zeros(len(names), dtype=np.int64)
    for k in range(len(names)):
        mine = u[link_tier == k]
        links[k] = len(mine)
        idle[k] = int(np.sum(mine <= 0))
        counts[k], _ = np.histogram(mine[mine > 0], bins=edges)
    share = np.zeros((len(names), UTILISATION_BINS + 1))
    for k in range(len(names)):
        if links[k]:
            share[k, 0] = idle[k] / links[k]
            share[k, 1:] = counts[k] / links[k]
    # the idle column sits left of 0, one bin wide
    x_edges = 100 * np.concatenate(([-(edges[1] - edges[0])], edges))
    shown = np.ma.masked_equal(share, 0.0)
    mesh = ax_u.pcolormesh(x_edges, np.arange(len(names) + 1) - 0.5, shown, cmap="viridis",
                           vmin=0.0, vmax=1.0, edgecolors="white", linewidth=0.3)
    ax_u.axvline(0.0, color=GREY, linewidth=0.6)
    ax_u.plot(100 * util, y, linestyle="none", marker="|", markersize=9, color=VERMILLION,
              label="busiest link")
    ax_u.set_xlim(x_edges[0], x_edges[-1])
    ax_u.text(x_edges[0], -0.62, "idle", ha="left", va="bottom", fontsize=FONT_PT)
    ax_u.set_xlabel("link utilisation over the iteration (%)")
    ax_u.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), borderaxespad=0.1)
    bar = fig.colorbar(mesh, ax=ax_u, pad=0.02, fraction=0.05)
    bar.set_label("share of the tier's links (1)")
    ax_b.set_yticks(y, [f"{n}\n{c:,} links" for n, c in zip(names, links)])
    _save(fig, path)
    out.update({"links": links, "idle": idle, "bin_edges": edges, "counts": counts})
    return out


# an event row with more marks than this is drawn as a density (marks per
# bin) instead of ticks: at double-column width ticks then merge into a band
DENSE_EVENTS = 300
DENSITY_BINS = 200


def _event_row(strip, row, t, colour, end_d):
    """Row `row` of the event strip: a tick per event, or, beyond DENSE_EVENTS,
    the events per bin of end_d/DENSITY_BINS days as bars scaled to the row
    (the busiest bin fills it). Returns None (ticks) or (edges_d, counts)."""
    if len(t) <= DENSE_EVENTS:
        if len(t):
            strip.eventplot(t / DAY_S, lineoffsets=row, linelengths=0.7, linewidths=0.4,
                            colors=colour)
        return None
    edges = np.linspace(0.0, end_d, DENSITY_BINS + 1)
    counts, _ = np.histogram(np.clip(t / DAY_S, 0.0, end_d), bins=edges)
    height = 0.7 * counts / max(1, counts.max())
    strip.bar(edges[:-1], height, width=np.diff(edges), bottom=row + 0.35 - height,
              align="edge", color=colour, linewidth=0)
    return edges, counts


def _worst_failure(trace):
    """(time s, lost work s) of the failure that threw away the most work
    (events.lost_work_s; the first of equals), or None without failures."""
    ev = trace.events
    fails = ev[ev["kind"] == trace.event_kinds["failure"]]
    if not len(fails):
        return None
    k = int(np.argmax(fails["lost_work_s"]))
    return float(fails["time_s"][k]), float(fails["lost_work_s"][k])


def _zoom_window(trace, worst, checkpoint_t, end_s):
    """[start, stop] in s around the worst failure: three checkpoint spacings
    (the campaign's own, the median gap between checkpoints) before it, and
    four plus the mean restart after it, inside the run. None without one."""
    if worst is None or len(checkpoint_t) < 2:
        return None
    gap = float(np.median(np.diff(checkpoint_t)))
    restart = float(trace.value("restart_time_s")) / max(1.0, float(trace.value("restarts")))
    return max(0.0, worst[0] - 3 * gap), min(end_s, worst[0] + 4 * gap + restart)


@_styled
def campaign_timeline(trace, path):
    """Progress against wall time from /campaign: iterations durably
    checkpointed (a step at every event, from events.iteration) and iterations
    reached (each timeline interval from iteration_start to iteration_end, so
    rollbacks show as drops), the failure-free line (iterations x
    iteration_time_s) dashed, and a strip below marking checkpoints,
    failures, restarts (and stragglers, drains when present): a tick per
    event, or for a row of more than DENSE_EVENTS (thousands of checkpoints)
    the events per bin, so the row stays readable. With a failure, a panel on
    the right zooms on the first one (hours around it): the sawtooth of
    iterations reached, the checkpoints, the failure, the work it threw away
    shaded. Double column.

    Returns {"path", "durable_time_s", "durable_iterations", "reached_time_s",
    "reached_iterations", "events" {kind: times in s}, "density" {kind:
    (bin edges in days, counts)} for the rows drawn as densities, "zoom_s"
    ([start, stop] in s, or None)}."""
    ev, tl = trace.events, trace.timeline
    durable_t = np.array(ev["time_s"], dtype=float)
    durable_i = np.array(ev["iteration"], dtype=float)
    reached_t = np.column_stack([tl["start_s"], tl["end_s"]]).ravel().astype(float)
    reached_i = np.column_stack([tl["iteration_start"], tl["iteration_end"]]).ravel()
    reached_i = reached_i.astype(float)
    top = max(durable_i.max() if len(durable_i) else 0, reached_i.max() if len(reached_i) else 0)
    scale, ylabel = (1e3, "progress (10³ iterations)") if top >= 1e4 else (1.0, "progress (iterations)")
    rows = [(k, label, colour) for k, label, colour in EVENT_ROWS
            if k in trace.event_kinds and (k in ("checkpoint_done", "failure", "restart_done")
                                           or np.any(ev["kind"] == trace.event_kinds[k]))]
    times = {kind: np.array(ev["time_s"][ev["kind"] == trace.event_kinds[kind]], dtype=float)
             for kind, _, _ in rows}
    end_s = float(trace.value("time_to_train_s"))
    end = end_s / DAY_S
    worst = _worst_failure(trace) if "failure" in trace.event_kinds else None
    zoom = _zoom_window(trace, worst, times.get("checkpoint_done", np.array([])), end_s)
    fig = _figure(DOUBLE_COLUMN_IN, 3.0)
    grid = fig.add_gridspec(2, 2 if zoom else 1, height_ratios=[4, 0.35 + 0.3 * len(rows)],
                            width_ratios=[3, 1.25] if zoom else [1])
    ax = fig.add_subplot(grid[0, 0])
    strip = fig.add_subplot(grid[1, 0], sharex=ax)
    ax.tick_params(labelbottom=False)
    ax.plot(reached_t / DAY_S, reached_i / scale, color=SKY, linewidth=0.8,
            label="iterations reached", rasterized=len(reached_t) > DENSE_POINTS)
    ax.step(durable_t / DAY_S, durable_i / scale, where="post", color=BLUE, linewidth=1.0,
            label="iterations checkpointed")
    iteration_s = float(trace.value("iteration_time_s"))
    total = float(trace.value("iterations"))
    if iteration_s > 0 and total > 0:
        ideal_t = np.array([0.0, total * iteration_s])
        ax.plot(ideal_t / DAY_S, np.array([0.0, total]) / scale, color=GREY, linewidth=0.8,
                linestyle="--", label="no failures, no checkpoints")
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper left")
    density = {}
    for row, (kind, label, colour) in enumerate(rows):
        d = _event_row(strip, row, times[kind], colour, end if end > 0 else 1.0)
        if d is not None:
            density[kind] = d
    strip.set_yticks(range(len(rows)), [label for _, label, _ in rows])
    strip.set_ylim(len(rows) - 0.5, -0.5)
    bins = next(iter(density.values()), None)
    strip.set_xlabel("wall time (d)" if bins is None else
                     f"wall time (d); rows of over {DENSE_EVENTS} events: events per "
                     f"{bins[0][1] * 24:.2g} h bin")
    strip.set_xlim(0, end * 1.01 if end > 0 else 1.0)
    if zoom:
        _zoom_panel(fig, grid, zoom, worst, reached_t, reached_i, durable_t, durable_i, times,
                    rows, scale)
        ax.axvspan(zoom[0] / DAY_S, zoom[1] / DAY_S, color=GREY, alpha=0.15, linewidth=0)
    _save(fig, path)
    return {"path": path, "durable_time_s": durable_t, "durable_iterations": durable_i,
            "reached_time_s": reached_t, "reached_iterations": reached_i, "events": times,
            "density": density, "zoom_s": list(zoom) if zoom else None}


def _zoom_panel(fig, grid, zoom, worst, reached_t, reached_i, durable_t, durable_i, times, rows,
                scale):
    """The right-hand panels of campaign_timeline: progress and event ticks
    over the zoom window around the worst failure, in hours from its start."""
    t0, t1 = zoom
    zax = fig.add_subplot(grid[0, 1])
    zstrip = fig.add_subplot(grid[1, 1], sharex=zax)
    zax.tick_params(labelbottom=False)
    hours = 3600.0
    inside = (reached_t >= t0 - 1) & (reached_t <= t1 + 1)
    zax.plot((reached_t - t0) / hours, reached_i / scale, color=SKY, linewidth=0.8)
    zax.step((durable_t - t0) / hours, durable_i / scale, where="post", color=BLUE,
             linewidth=1.0)
    zax.axvline((worst[0] - t0) / hours, color=VERMILLION, linewidth=0.8)
    zax.axvspan((worst[0] - worst[1] - t0) / hours, (worst[0] - t0) / hours, color=VERMILLION,
                alpha=0.15, linewidth=0)
    shown = reached_i[inside] / scale if np.any(inside) else reached_i / scale
    zax.set_ylim(float(shown.min()) - 0.02 * max(1e-9, np.ptp(shown)),
                 float(shown.max()) + 0.05 * max(1e-9, np.ptp(shown)))
    zax.set_title(f"worst failure: {worst[1] / 60:.3g} min lost", fontsize=FONT_PT)
    for row, (kind, _, colour) in enumerate(rows):
        t = times[kind]
        t = t[(t >= t0) & (t <= t1)]
        if len(t):
            zstrip.eventplot((t - t0) / hours, lineoffsets=row, linelengths=0.7, linewidths=0.6,
                             colors=colour)
    zstrip.set_yticks(range(len(rows)), [""] * len(rows))
    zstrip.set_ylim(len(rows) - 0.5, -0.5)
    zstrip.set_xlim(0, (t1 - t0) / hours)
    zstrip.set_xlabel(f"hours from day {t0 / DAY_S:.2f}")


def _hourly(trace):
    """/energy/hourly of a run with a <site>, or ValueError."""
    hourly = getattr(trace, "energy_hourly", None)
    if hourly is None:
        raise ValueError(f"{trace.path}: the power/PUE figure needs /energy/hourly "
                         "(a run with a <site>)")
    return hourly


@_styled
def power_pue(trace, path):
    """Power and PUE over the run from /energy/hourly (a run with a <site>):
    IT and facility power in MW (each hour's mean, drawn as steps over the
    hour; the last hour ends at the time to train) and that hour's PUE, against
    wall time in days. Double column.

    Returns {"path", "hour_start_s", "hour_s" (each row's length: 3600 s, the
    last one partial), "it_power_w", "facility_power_w", "pue",
    "time_to_train_s"}: sum(it_power_w x hour_s) is the summary's it_energy_j
    (docs/trace-format.md). Raises ValueError without /energy/hourly."""
    hourly = _hourly(trace)
    start = np.array(hourly["hour_start_s"], dtype=float)
    it_w = np.array(hourly["it_power_w"], dtype=float)
    facility_w = np.array(hourly["facility_power_w"], dtype=float)
    pue = np.array(hourly["pue"], dtype=float)
    end_s = float(trace.value("time_to_train_s"))
    edges = np.append(start, max(end_s, start[-1]) if len(start) else end_s)
    hour_s = np.diff(edges)
    fig = _figure(DOUBLE_COLUMN_IN, 3.0)
    ax_p, ax_q = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 2]})
    if len(start):
        ax_p.stairs(it_w / MEGAWATT_W, edges / DAY_S, color=BLUE, linewidth=1.0,
                    label="IT", baseline=None)
        ax_p.stairs(facility_w / MEGAWATT_W, edges / DAY_S, color=ORANGE, linewidth=1.0,
                    label="facility", baseline=None)
        ax_q.stairs(pue, edges / DAY_S, color=GREEN, linewidth=1.0, baseline=None)
        top = float(facility_w.max()) / MEGAWATT_W
        ax_p.set_ylim(0, top * 1.15 if top > 0 else 1.0)
        low, high = float(pue.min()), float(pue.max())
        pad = max(0.1 * (high - low), 0.005)
        ax_q.set_ylim(low - pad, high + pad)
    ax_p.set_ylabel("power (MW)")
    outside = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "borderaxespad": 0}
    ax_p.legend(**outside)
    if "pue_frac" in trace.summary:
        ax_q.axhline(float(trace.value("pue_frac")), color=GREY, linewidth=0.6,
                     linestyle="--", label=f"run: {float(trace.value('pue_frac')):.4f}")
        ax_q.legend(**outside)
    ax_q.set_ylabel("PUE (1)")
    ax_q.set_xlabel("wall time (d)")
    ax_q.set_xlim(0, edges[-1] / DAY_S if edges[-1] > 0 else 1.0)
    _save(fig, path)
    return {"path": path, "hour_start_s": start, "hour_s": hour_s, "it_power_w": it_w,
            "facility_power_w": facility_w, "pue": pue, "time_to_train_s": end_s}


# Student's t 0.975 quantile for 1..30 degrees of freedom (dcsim's ci95 uses it)
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
         2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
         2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def _t975(dof):
    """t quantile: table to 30, then the Cornish-Fisher series in 1/dof (error < 1e-4)."""
    if dof <= len(_T975):
        return _T975[dof - 1]
    z, v = 1.959964, float(dof)
    return (z + (z**3 + z) / (4 * v) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * v**3))


def _goodput_points(source):
    """(interval_s, ettr, ettr_ci95, young_s, daly_s, best_s) from a `dcsim goodput
    --json` file or object, or from traces (one point each: the replicas' mean
    and t-based 95 % interval when /replicas is there, else ettr_frac and 0)."""
    if isinstance(source, (str, os.PathLike)):
        with open(source, encoding="utf-8") as f:
            source = json.load(f)
    if isinstance(source, dict):
        curve = source["curve"]
        return (np.array([c["interval_s"] for c in curve], dtype=float),
                np.array([c["ettr_mean"] for c in curve], dtype=float),
                np.array([c.get("ettr_ci95", 0.0) for c in curve], dtype=float),
                source.get("young_interval_s"), source.get("daly_interval_s"),
                source.get("best_interval_s"))
    traces = list(source)
    if not traces:
        raise ValueError("goodput_curve needs a goodput JSON or at least one trace")
    x, y, ci = [], [], []
    for t in traces:
        x.append(float(t.value("checkpoint_interval_s")))
        if t.replicas is not None and len(t.replicas) > 1:
            e = np.array(t.replicas["ettr_frac"], dtype=float)
            y.append(float(e.mean()))
            ci.append(_t975(len(e) - 1) * float(e.std(ddof=1)) / math.sqrt(len(e)))
        else:
            y.append(float(t.value("ettr_frac")))
            ci.append(0.0)
    order = np.argsort(x, kind="stable")
    first = traces[0]
    young = first.summary.get("young_interval_s", (None,))[0]
    daly = first.summary.get("daly_interval_s", (None,))[0]
    xs, ys = np.array(x)[order], np.array(y)[order]
    return xs, ys, np.array(ci)[order], young, daly, float(xs[int(np.argmax(ys))])


def _goodput_axes(ax, xlabel, **legend):
    """Log interval axis in minutes (1, 2, 5 ticks), goodput axis, legend below."""
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(xlabel)
    ax.set_ylabel("goodput, ETTR (1)")
    ax.legend(loc="lower center", ncol=2, columnspacing=1.0, handlelength=1.5, **legend)


def _sweep_series(table):
    """Goodput series of a sweep: its finished points grouped by every
    parameter but the checkpoint interval, each sorted by the effective
    interval. [(label, interval_s, ettr, ci95, young_s, daly_s)]."""
    done = table.done()
    if not len(done):
        raise ValueError(f"{table.path}: the sweep has no finished points")
    others = [p for p in table.parameters if "checkpoint" not in p]
    groups = {}
    for row in done:
        key = tuple(str(row[p]) for p in others)
        groups.setdefault(key, []).append(row)
    series = []
    for key, rows in groups.items():
        rows.sort(key=lambda r: float(r["checkpoint_interval_s"]))
        label = ", ".join(setting_words(p, v) for p, v in zip(others, key))   # in words
        series.append((label or "sweep",
                       np.array([float(r["checkpoint_interval_s"]) for r in rows]),
                       np.array([float(r["ettr_frac_mean"]) for r in rows]),
                       np.array([float(r["ettr_frac_ci95"]) for r in rows]),
                       float(rows[0]["young_interval_s"]), float(rows[0]["daly_interval_s"])))
    return series


@_styled
def goodput_sweep(source, path):
    """Goodput (ETTR) against the checkpoint interval from a `dcsim sweep`
    file whose grid varies the interval: one curve per combination of the
    other parameters (e.g. each failure-rate scale), 95 % intervals, each
    curve's best point starred and its Daly optimum ticked on the axis.
    source: the file's path or a SweepTable. Single column.

    Returns {"path", "series": [{"label", "interval_s", "ettr", "ettr_ci95",
    "young_interval_s", "daly_interval_s", "best_interval_s"}]}."""
    table = read_sweep(source) if isinstance(source, (str, os.PathLike)) else source
    if not any("checkpoint" in p for p in table.parameters):
        raise ValueError(f"{table.path}: the sweep does not vary a checkpoint parameter")
    fig = _figure(SINGLE_COLUMN_IN, 2.6)
    ax = fig.add_subplot()
    colours = (BLUE, VERMILLION, GREEN, ORANGE, PURPLE, SKY, YELLOW, GREY)
    out = []
    for k, (label, x, y, ci, young, daly) in enumerate(_sweep_series(table)):
        colour = colours[k % len(colours)]
        ax.errorbar(x / MINUTE_S, y, yerr=ci, color=colour, marker="o", markersize=3,
                    linewidth=1.0, capsize=2, elinewidth=0.6, label=label)
        best = float(x[int(np.argmax(y))])
        ax.plot([best / MINUTE_S], [float(np.max(y))], marker="*", markersize=8, color=colour,
                linestyle="none")
        ax.plot([daly / MINUTE_S], [0], marker="|", markersize=8, color=colour, linestyle="none",
                transform=ax.get_xaxis_transform(), clip_on=False)
        out.append({"label": label, "interval_s": x, "ettr": y, "ettr_ci95": ci,
                    "young_interval_s": young, "daly_interval_s": daly,
                    "best_interval_s": best})
    _goodput_axes(ax, "checkpoint interval (min); ticks: Daly's optimum",
                  title="stars: best interval")
    _save(fig, path)
    return {"path": path, "series": out}


@_styled
def goodput_curve(source, path):
    """Goodput (ETTR) against the checkpoint interval (minutes, log scale),
    with 95 % intervals, Young's and Daly's optima and the best point. source:
    the path of a `dcsim goodput --json` output, that object loaded, a list of
    Traces run at different intervals, or a `dcsim sweep` file (drawn by
    goodput_sweep: a curve per value of its other parameters). Single column.

    Returns {"path", "interval_s", "ettr", "ettr_ci95", "young_interval_s",
    "daly_interval_s", "best_interval_s"}."""
    if isinstance(source, SweepTable) or (isinstance(source, (str, os.PathLike))
                                          and h5py.is_hdf5(source)
                                          and file_kind(source) == "sweep"):
        return goodput_sweep(source, path)
    x, y, ci, young, daly, best = _goodput_points(source)
    fig = _figure(SINGLE_COLUMN_IN, 2.4)
    ax = fig.add_subplot()
    ax.errorbar(x / MINUTE_S, y, yerr=ci, color=BLUE, marker="o", markersize=3,
                linewidth=1.0, capsize=2, elinewidth=0.6, label="simulated")
    for value, label, style, colour in ((young, "Young", "--", GREY), (daly, "Daly", ":", GREY)):
        if value:
            ax.axvline(value / MINUTE_S, linestyle=style, color=colour, linewidth=0.8,
                       label=f"{label} {value / MINUTE_S:.1f} min")
    if best:
        k = int(np.argmin(np.abs(x - best)))
        ax.plot([best / MINUTE_S], [y[k]], marker="*", markersize=8, color=VERMILLION,
                linestyle="none", label=f"best {best / MINUTE_S:.1f} min")
    _goodput_axes(ax, "checkpoint interval (min)")
    _save(fig, path)
    return {"path": path, "interval_s": x, "ettr": y, "ettr_ci95": ci,
            "young_interval_s": young, "daly_interval_s": daly, "best_interval_s": best}


GWH_J = 3.6e12
MEGA = 1e6
KILOTONNE_KG = 1e6


@_styled
def site_comparison(source, path):
    """Energy, cost and CO2 of one job at several sites (or on several networks,
    or several scenarios) from `dcsim compare -o FILE.h5`: three bar panels
    side by side, a bar per variant in the file's order: facility energy in
    GWh with its IT part, the energy bill in million CNY, and the emissions in
    kt CO2. source: the file's path or a CompareTable (dcsim_trace.read_compare).
    Double column.

    Returns {"path", "labels", "it_energy_j", "facility_energy_j",
    "energy_cost_cny", "co2_kg"} (the file's columns, in its units)."""
    table = read_compare(source) if isinstance(source, (str, os.PathLike)) else source
    labels = list(table.labels)
    if not labels:
        raise ValueError(f"{table.path}: /compare has no rows")
    it_j = np.array(table["it_energy_j"], dtype=float)
    facility_j = np.array(table["facility_energy_j"], dtype=float)
    cost = np.array(table["energy_cost_cny"], dtype=float)
    co2 = np.array(table["co2_kg"], dtype=float)
    n = len(labels)
    fig = _figure(DOUBLE_COLUMN_IN, 0.9 + 0.22 * n)
    axes = fig.subplots(1, 3, sharey=True)
    y = np.arange(n)
    bar = {"height": 0.7, "edgecolor": GREY, "linewidth": 0.3}
    axes[0].barh(y, facility_j / GWH_J, color=ORANGE, label="facility", **bar)
    axes[0].barh(y, it_j / GWH_J, color=BLUE, label="IT", **bar)
    axes[0].set_xlabel("energy (GWh)")
    axes[0].legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=2, borderaxespad=0.2,
                   handlelength=1.0)
    axes[1].barh(y, cost / MEGA, color=GREEN, **bar)
    axes[1].set_xlabel("energy cost (million CNY)")
    axes[2].barh(y, co2 / KILOTONNE_KG, color=GREY, **bar)
    axes[2].set_xlabel("emissions (kt CO$_2$)")
    keys = {label.split("=", 1)[0] for label in labels}
    if len(keys) == 1 and all("=" in label for label in labels):   # 'site=tianfu' -> 'tianfu'
        axes[0].set_yticks(y, [label.split("=", 1)[1] for label in labels])
        axes[0].set_ylabel(keys.pop())
    else:
        axes[0].set_yticks(y, labels)
    axes[0].set_ylim(n - 0.5, -0.5)
    for ax, values in zip(axes, (facility_j / GWH_J, cost / MEGA, co2 / KILOTONNE_KG)):
        top = float(values.max())
        ax.set_xlim(0, top * 1.28 if top > 0 else 1.0)
        for yi, v in zip(y, values):
            ax.text(v, yi, f" {v:.3g}", va="center", ha="left", fontsize=FONT_PT)
    _save(fig, path)
    return {"path": path, "labels": labels, "it_energy_j": it_j,
            "facility_energy_j": facility_j, "energy_cost_cny": cost, "co2_kg": co2}


PACKET_COLOURS = (BLUE, ORANGE, GREEN, VERMILLION, PURPLE, SKY)


def link_label(pt, link):
    """'link 12: node 3 → 40 (tier 0 → 1)' for a PacketTrace's link id."""
    row = pt.links[int(link)]
    return (f"link {int(row['link'])}: node {int(row['src'])} → {int(row['dst'])} "
            f"(tier {int(row['src_tier'])} → {int(row['dst_tier'])})")


@_styled
def packet_series(pt, path, top=4):
    """A `dcsim netbench --tier packet -o` file over time (double column):
    the egress queue of the `top` links with the largest peak queue (the
    value at each bin's end as a line, the bin's maximum as a light band up
    to it), then PAUSE frames and ECN marks per bin summed over every link.
    Time in µs from the series' start.

    Returns {"path", "t_edges_s", "links", "queue_end_bytes", "queue_max_bytes"
    ({link: per-bin array}), "pauses", "marks" (per bin, all links)}."""
    edges = np.asarray(pt.t_edges_s, dtype=float)
    x = (edges - edges[0]) * 1e6
    links = pt.top_links(top)
    qe = {l: np.asarray(pt.series["queue_end_bytes"][:, l], dtype=float) for l in links}
    qm = {l: np.asarray(pt.series["queue_max_bytes"][:, l], dtype=float) for l in links}
    pauses = np.asarray(pt.series["pauses"], dtype=float).sum(axis=1)
    marks = np.asarray(pt.series["ecn_marks"], dtype=float).sum(axis=1)
    fig = _figure(DOUBLE_COLUMN_IN, 4.2)
    ax_q, ax_p, ax_m = fig.subplots(3, 1, sharex=True,
                                    gridspec_kw={"height_ratios": [3, 1.2, 1.2]})
    top_q = max([float(v.max()) for v in qm.values()] + [1.0])
    scale, unit = ((1e6, "MB") if top_q >= 1e6 else (1e3, "kB"))
    for i, l in enumerate(links):
        colour = PACKET_COLOURS[i % len(PACKET_COLOURS)]
        ax_q.stairs(qm[l] / scale, x, color=colour, alpha=0.25, fill=True, linewidth=0)
        ax_q.plot(x[1:], qe[l] / scale, color=colour, linewidth=1.0, marker="." if len(x) < 40
                  else None, markersize=3, label=link_label(pt, l))
    ax_q.set_ylabel(f"egress queue ({unit})")
    ax_q.set_ylim(bottom=0)
    if links:
        ax_q.legend(loc="upper right", title="busiest links (line: at bin end; band: bin max)")
    else:
        ax_q.text(0.5, 0.5, "no link ever queued a packet", transform=ax_q.transAxes,
                  ha="center", va="center", color=GREY)
    ax_p.stairs(pauses, x, color=VERMILLION, fill=True, alpha=0.8)
    ax_p.set_ylabel("PAUSE frames\nper bin")
    ax_p.yaxis.set_major_locator(MaxNLocator(nbins=3, integer=True))
    ax_p.set_ylim(0, max(1.0, float(pauses.max(initial=0))) * 1.05)
    ax_m.stairs(marks, x, color=PURPLE, fill=True, alpha=0.8)
    ax_m.set_ylabel("ECN marks\nper bin")
    ax_m.yaxis.set_major_locator(MaxNLocator(nbins=3, integer=True))
    ax_m.set_ylim(0, max(1.0, float(marks.max(initial=0))) * 1.05)
    dt_us = float(pt.packet.get("dt_s", 0)) * 1e6
    ax_m.set_xlabel(f"time (µs); bins of {dt_us:.4g} µs")
    ax_m.set_xlim(x[0], x[-1] if x[-1] > x[0] else x[0] + 1)
    _save(fig, path)
    return {"path": path, "t_edges_s": edges, "links": links, "queue_end_bytes": qe,
            "queue_max_bytes": qm, "pauses": pauses, "marks": marks}


def all_figures(trace, outdir, formats=("png", "svg"), goodput=None, prefix=""):
    """Every figure the trace supports (time breakdown, campaign timeline; with
    /step also the step timeline and tier utilisation; with /energy/hourly the
    power/PUE figure; the goodput curve when
    `goodput` is given: a JSON path/object or a list of traces), each in every
    format, into outdir (created). Returns the paths written, in that order."""
    os.makedirs(outdir, exist_ok=True)
    jobs = [("time_breakdown", time_breakdown), ("campaign_timeline", campaign_timeline)]
    if trace.has_step:
        jobs += [("step_timeline", step_timeline), ("tier_utilisation", tier_utilisation)]
    if getattr(trace, "energy_hourly", None) is not None:
        jobs.append(("power_pue", power_pue))
    paths = []
    for name, fn in jobs:
        for ext in formats:
            paths.append(fn(trace, os.path.join(outdir, f"{prefix}{name}.{ext}"))["path"])
    if goodput is not None:
        for ext in formats:
            paths.append(goodput_curve(goodput, os.path.join(outdir,
                                                             f"{prefix}goodput.{ext}"))["path"])
    return paths


def figures_main(argv, prog, description, metavar, read, draw_all):
    """The command line of a tier's figure module (dcsim_cluster.py,
    dcsim_serve.py, dcsim_hubs.py): FILE.h5 ... -o DIR [--format png|svg|both];
    read(path) opens a file, draw_all(run, outdir, formats, prefix) draws it
    and returns the paths, printed one per line (prefixed by the file's name
    when there are several). A file it cannot read: one line, exit 1."""
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("files", nargs="+", metavar=metavar)
    p.add_argument("-o", "--output", required=True, metavar="DIR")
    p.add_argument("--format", choices=("png", "svg", "both"), default="both")
    args = p.parse_args(argv)
    formats = ("png", "svg") if args.format == "both" else (args.format,)
    try:
        for path in args.files:
            prefix = f"{os.path.splitext(os.path.basename(path))[0]}_" if len(args.files) > 1 \
                else ""
            for out in draw_all(read(path), args.output, formats, prefix):
                print(out)
    except (TraceFormatError, OSError) as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 1
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="dcsim_figures.py",
        description="Write every figure the traces support (docs/trace-format.md).")
    p.add_argument("traces", nargs="+", metavar="TRACE.h5")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="output directory")
    p.add_argument("--format", choices=("png", "svg", "both"), default="both")
    p.add_argument("--goodput", metavar="JSON|SWEEP.h5",
                   help="`dcsim goodput --json` output or a `dcsim sweep` file to draw the "
                        "goodput curve from (default with several traces: one point per trace)")
    p.add_argument("--dpi", type=int, default=PNG_DPI,
                   help=f"PNG resolution (default {PNG_DPI}, for print)")
    p.add_argument("--compare", metavar="CMP.h5",
                   help="`dcsim compare -o` output to draw the site comparison from")
    args = p.parse_args(argv)
    global png_dpi
    if not 30 <= args.dpi <= 1200:
        p.error(f"--dpi {args.dpi}: allowed 30 to 1200")
    png_dpi = args.dpi
    formats = ("png", "svg") if args.format == "both" else (args.format,)
    try:
        traces = [Trace(path) for path in args.traces]
        paths = []
        several = len(traces) > 1
        for t in traces:
            prefix = os.path.splitext(os.path.basename(t.path))[0] + "_" if several else ""
            paths += all_figures(t, args.output, formats, prefix=prefix)
        source = args.goodput or (traces if several else None)
        if source is not None:
            for ext in formats:
                paths.append(goodput_curve(source, os.path.join(args.output,
                                                                f"goodput.{ext}"))["path"])
        if args.compare:
            for ext in formats:
                paths.append(site_comparison(args.compare, os.path.join(
                    args.output, f"site_comparison.{ext}"))["path"])
    except (TraceFormatError, OSError, ValueError, KeyError) as e:
        print(f"dcsim_figures.py: error: {' '.join(str(e).split())}", file=sys.stderr)
        return 1
    except Exception as e:  # whatever else a damaged trace sets off: one line
        print(f"dcsim_figures.py: error: {', '.join(args.traces)}: cannot draw "
              f"({type(e).__name__}: {' '.join(str(e).split())})", file=sys.stderr)
        return 1
    for path in paths:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
